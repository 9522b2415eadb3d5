/*
 * spprof: a profiler for sparse neural-network models.
 * Dispatch on the subcommand table; `X --help` is `help X`.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

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
	{"report", cmd_report, "re-render a saved JSON report (text, json, csv)",
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
	if (!c) {
		fprintf(stderr, "spprof: unknown command '%s' (see 'spprof help')\n",
			argv[1]);
		return 2;
	}
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
	if (!c) {
		fprintf(stderr, "spprof: unknown command '%s' (see 'spprof help')\n",
			argv[1]);
		return 2;
	}
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
