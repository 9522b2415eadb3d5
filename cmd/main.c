/*
 * spprof: a profiler for sparse neural-network models.
 * Dispatch on the subcommand table; `X --help` is `help X`.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/safe_text.h"
#include "cmd/cmd.h"
#include "cmd/cmd_gate.h"
#include "config.h"

static int cmd_help(int argc, char **argv);
static int cmd_version(int argc, char **argv);

static const struct cmd_help cmd_help_help = {
	.head = "usage: spprof help [COMMAND]\n"
		"\n"
		"Without COMMAND, list the commands; with one, show its options.\n",
};

static const struct cmd_help cmd_version_help = {
	.head = "usage: spprof version   (also: spprof --version)\n",
};

static const struct spp_cmd commands[] = {
	{"analyze", cmd_analyze, "profile a model: static metrics and kernel runs per layer",
	 &cmd_analyze_help},
	{"info", cmd_info, "machine, vector ISA, caches, dense BLAS, calibration",
	 &cmd_info_help},
	{"calibrate", cmd_calibrate, "measure peak bandwidth and FLOP rate, cache them",
	 &cmd_calibrate_help},
	{"report", cmd_report, "re-render a saved JSON report (text, json, csv, md, html)",
	 &cmd_report_help},
	{"merge", cmd_merge, "merge the reports of a sharded profile (analyze --shard) into one",
	 &cmd_merge_help},
	{"bench", cmd_bench, "benchmark the CPU formats against dense: DLMC, breakeven sweep",
	 &cmd_bench_help},
	{"compare", cmd_compare, "differences between two saved reports, per model and layer",
	 &cmd_compare_help},
	{"check", cmd_check, "CI gate: evaluate rules on a report, exit 1 when one fails",
	 &cmd_check_help},
	{"sweep", cmd_sweep, "breakeven sparsity of each format for one shape and pattern",
	 &cmd_sweep_help},
	{"synth", cmd_synth, "write a synthetic safetensors model with chosen patterns",
	 &cmd_synth_help},
	{"help", cmd_help, "show the commands, or one command's options",
	 &cmd_help_help},
	{"version", cmd_version, "print the version", &cmd_version_help},
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const struct spp_cmd *find_command(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

/* Edit distance (insert, delete, substitute, swap two neighbours) of a and b, up to 15 bytes each. */
static int distance(const char *a, const char *b)
{
	int la = (int)strlen(a), lb = (int)strlen(b), d[16][16];

	if (la > 15 || lb > 15)
		return 99;
	for (int i = 0; i <= la; i++)
		for (int j = 0; j <= lb; j++) {
			int v = i == 0 ? j : j == 0 ? i : d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);

			if (i && j) {
				v = v < d[i - 1][j] + 1 ? v : d[i - 1][j] + 1;
				v = v < d[i][j - 1] + 1 ? v : d[i][j - 1] + 1;
				if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
				    d[i - 2][j - 2] + 1 < v)
					v = d[i - 2][j - 2] + 1;
			}
			d[i][j] = v;
		}
	return d[la][lb];
}

/* An unknown command, with the nearest known one when it is close ("analyse": analyze). */
static int unknown_command(const char *name)
{
	const char *best = NULL;
	int bd = 3;

	for (size_t i = 0; i < NCOMMANDS; i++) {
		int d = distance(name, commands[i].name);

		if (d < bd) {
			bd = d;
			best = commands[i].name;
		}
	}
	fputs("spprof: unknown command '", stderr);
	spp_safe_fputs(stderr, name, (size_t)-1);
	if (best)
		fprintf(stderr, "'; did you mean '%s'? (see 'spprof help')\n", best);
	else
		fputs("' (see 'spprof help')\n", stderr);
	return 2;
}

static void list_commands(FILE *f)
{
	fprintf(f, "usage: spprof COMMAND [ARGS]\n\n"
		   "spprof measures where the speedup of a pruned model goes.\n\n"
		   "commands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'spprof help COMMAND' shows a command's options.\n"
		   "exit codes: 0 ok, 1 a check failed, 2 bad usage or input, "
		   "3 runtime or device failure\n");
}

static int cmd_help(int argc, char **argv)
{
	const struct spp_cmd *c;

	if (argc < 2) {
		list_commands(stdout);
		return 0;
	}
	c = find_command(argv[1]);
	if (!c)
		return unknown_command(argv[1]);
	cmd_help_print(stdout, c->help);
	return 0;
}

static int cmd_version(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	printf("spprof %s\n", SPP_VERSION);
	return 0;
}

/* A full disk or closed pipe shows up only when stdout is flushed. */
static int close_stdout(int rc)
{
	if (fclose(stdout) != 0) {
		fprintf(stderr, "spprof: cannot write standard output: %s\n",
			strerror(errno));
		return rc ? rc : 3;
	}
	return rc;
}

int main(int argc, char **argv)
{
	const struct spp_cmd *c;

	if (argc < 2) {
		list_commands(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0)
		return close_stdout(cmd_version(argc - 1, argv + 1));
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
		return close_stdout(cmd_help(1, argv + 1));
	c = find_command(argv[1]);
	if (!c)
		return unknown_command(argv[1]);
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			char *help_argv[] = {"help", argv[1], NULL};
			return close_stdout(cmd_help(2, help_argv));
		}
	}
	return close_stdout(c->fn(argc - 1, argv + 1));
}
