/*
 * End-to-end tests of the spprof binary's options (test_cli.c runs them):
 * every option each command took stays accepted and listed in its help,
 * help names every format, unknown options and the limits of each numeric
 * option are usage errors.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "config.h"
#include "kernels/kernels.h"
#include "test/e2e/cli_fixture.h"
#include "test/harness.h"
#include "test/report_read.h"

/*
 * The options each command took before its options became a table (the
 * getopt lists): every one must stay accepted and listed in its help, and
 * the help may list nothing else.
 */
static const char *const command_options[][40] = {
	{"analyze", "--static", "--n", "--threads", "--seed", "--format", "--output", "--quiet",
	 "--formats", "--backends", "--repeat", "--time-budget", "--cold", "--cache", "--shard", "--shard-count",
	 "--layers", "--skip-layers", "--resume", "--dedupe", "--peers", "--dense",
	 "--counters", "--cache-model", "--max-layers", "--max-memory", "--breakeven", "--n-sweep",
	 "--act-sparsity", "--target-sparsity", "--activations", "--epilogue", "--precision", "--input-shape",
	 NULL},
	{"bench", "--dlmc", "--n", "--threads", "--formats", "--peers", "--size", "--time-budget",
	 "--seed", "--quick", "--format", "--output", "--quiet", "--dense", "--cold", "--cache", NULL},
	{"sweep", "--shape", "--n", "--sparsity", "--pattern", "--formats", "--backends", "--threads",
	 "--time-budget", "--seed", "--dense", "--format", "--output", "--cold", "--cache", NULL},
	{"calibrate", "--threads", "--seconds", NULL},
	{"check", "--format", "--output", "--rules", "--baseline", "--junit", NULL},
	{"compare", "--format", "--output", "--all", NULL},
	{"info", "--threads", "--dense", "--format", NULL},
	{"report", "--format", "--output", NULL},
	{"merge", "--format", "--output", "--model", NULL},
	{"synth", "--output", "--layer", "--seed", NULL},
};

#define NCOMMANDS (sizeof(command_options) / sizeof(command_options[0]))

/* Run `spprof CMD OPT [VALUE] x y z`: the extra arguments make every command stop at usage. */
static void assert_accepted(const char *cmd, const char *opt, const char *value)
{
	struct harness_run r;
	const char *args[] = {cmd, opt, value ? value : "x", "x", "y", "z", NULL};

	assert_int_equal(harness_spprof(&r, args), 0);
	if (r.status != 2 || harness_count_lines(r.err) != 1 || strstr(r.err, "unknown option") ||
	    strstr(r.err, "needs a value"))
		fail_msg("spprof %s %s %s: exit %d: %s", cmd, opt, value ? value : "", r.status, r.err);
	harness_run_free(&r);
}

/* `spprof help analyze` names every format of the registry --formats accepts. */
void test_help_names_every_format(void **state)
{
	const struct spp_format_ops *const *lists[] = {spp_cpu_formats, spp_cpu_act_formats};
	const char *args[] = {"help", "analyze", NULL};
	struct harness_run r;

	(void)state;
	assert_int_equal(harness_spprof(&r, args), 0);
	assert_int_equal(r.status, 0);
	for (int l = 0; l < 2; l++)
		for (int i = 0; lists[l][i]; i++) {
			char opt[64];
			const char *parse[] = {"analyze", opt, "x", "y", NULL};
			struct harness_run p;

			if (!strstr(r.out, lists[l][i]->key))
				fail_msg("spprof help analyze does not name the format %s", lists[l][i]->key);
			/* the format parses: the usage error is the extra MODEL, not --formats */
			snprintf(opt, sizeof(opt), "--formats=%s", lists[l][i]->key);
			assert_int_equal(harness_spprof(&p, parse), 0);
			if (p.status != 2 || strstr(p.err, "--formats"))
				fail_msg("spprof analyze %s: exit %d: %s", opt, p.status, p.err);
			harness_run_free(&p);
		}
	harness_run_free(&r);
}

/* The option entries of `spprof help CMD`, for every command: each an old one, each accepted. */
void test_help_lists_what_parses(void **state)
{
	(void)state;
	for (size_t c = 0; c < NCOMMANDS; c++) {
		const char *const *want = command_options[c];
		struct harness_run r;
		const char *p;
		int listed = 0, nwant = 0;

		RUN(&r, "help", want[0]);
		p = strstr(r.out, "\noptions:\n");
		assert_non_null(p);
		for (p = strchr(p + 1, '\n') + 1; *p && *p != '\n'; p = strchr(p, '\n') + 1) {
			const char *dash = strstr(p, "--"), *end;
			char name[64], alias[8] = "", bad[80];
			int known = 0, value;

			if (strncmp(p, "  -", 3) != 0)
				continue; /* a continuation line */
			end = dash + strcspn(dash, " \n");
			value = end[0] == ' ' && end[1] != ' ';
			snprintf(name, sizeof(name), "%.*s", (int)(end - dash), dash);
			if (p[3] != '-')
				snprintf(alias, sizeof(alias), "%.2s", p + 2);
			for (int i = 1; want[i]; i++)
				known |= strcmp(want[i], name) == 0;
			if (!known)
				fail_msg("spprof help %s lists %s, not an option it takes", want[0], name);
			listed++;
			assert_accepted(want[0], name, value ? "@bad@" : NULL);
			if (alias[0])
				assert_accepted(want[0], alias, "@bad@");
			snprintf(bad, sizeof(bad), "%s=@bad@", name);
			if (value)
				assert_accepted(want[0], bad, NULL);
		}
		while (want[nwant + 1])
			nwant++;
		assert_int_equal(listed, nwant);
		harness_run_free(&r);
	}
}

void test_unknown_option(void **state)
{
	struct harness_run r;
	char want[160];

	(void)state;
	for (size_t c = 0; c < NCOMMANDS; c++) {
		const char *cmd = command_options[c][0];

		RUN(&r, cmd, "--no-such-option");
		snprintf(want, sizeof(want), "spprof %s: unknown option '--no-such-option' "
			 "(see 'spprof help %s')\n", cmd, cmd);
		assert_int_equal(r.status, 2);
		assert_string_equal(r.err, want);
		harness_run_free(&r);
	}
}

/*
 * The limits of each numeric option: just outside is a usage error naming
 * it, the edge passes; an option's unique prefix is the option, that of two
 * is unknown.
 */
void test_option_limits(void **state)
{
	static const char *const cases[][8] = {
		{"--threads wants 1..4096, not '0'", "analyze", "m", "--threads", "0"},
		{"--threads wants 1..4096, not '4097'", "sweep", "--threads", "4097"},
		{"--threads wants 1..4096, not '0'", "calibrate", "--threads", "0"},
		{"one MODEL at a time", "analyze", "m", "--threads", "4096", "m2"},
		{"--n wants a positive integer, not '2147483649'", "analyze", "m", "--n", "2147483649"},
		{"one MODEL at a time", "analyze", "m", "--n", "2147483648", "m2"},
		{"--seed wants an integer in 0..2^53, not '9007199254740993'", "analyze", "m", "--seed",
		 "9007199254740993"},
		{"one MODEL at a time", "analyze", "m", "--seed", "9007199254740992", "m2"},
		{"--repeat wants 1..1000000, not '1000001'", "analyze", "m", "--repeat", "1000001"},
		{"--time-budget wants seconds in (0, 3600], not '3601'", "analyze", "m", "--time-budget",
		 "3601"},
		{"--time-budget wants seconds in (0, 3600], not '3601'", "bench", "--time-budget", "3601"},
		{"--seed wants an integer in 0..2^53, not '9007199254740993'", "sweep", "--shape", "4x4x4",
		 "--seed", "9007199254740993"},
		{"--seed wants an integer in 0..2^53, not '9007199254740993'", "bench", "--seed",
		 "9007199254740993"},
		{"unexpected argument 'x'", "sweep", "--shape", "4x4x4", "--time-budget", "3600", "x"},
		{"--act-sparsity wants a fraction in [0, 1), not '1'", "analyze", "m", "--act-sparsity",
		 "1"},
		{"one MODEL at a time", "analyze", "m", "--act-sparsity", "0", "m2"},
		{"--size wants 1..32768, not '32769'", "bench", "--size", "32769"},
		{"--n wants up to 8 integers in 1..2^20, not '1,2,3,4,5,6,7,8,9'", "bench", "--n",
		 "1,2,3,4,5,6,7,8,9"},
		{"--threads wants up to 8 integers in 1..4096, not '1,4097'", "bench", "--threads",
		 "1,4097"},
		{"--seconds wants a number in (0, 60], not '0'", "calibrate", "--seconds", "0"},
		{"unexpected argument 'x'", "calibrate", "--seconds", "60", "x"},
		{"--seed wants an unsigned integer, not '-1'", "synth", "--seed", "-1"},
		{"option '--n' needs a value", "analyze", "m", "--n"},
		{"--threads wants 1..4096, not '0'", "analyze", "m", "--thr", "0"},
		{"unknown option '--form'", "analyze", "m", "--form", "json"},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct harness_run r;

		assert_int_equal(harness_spprof(&r, cases[i] + 1), 0);
		if (r.status != 2 || harness_count_lines(r.err) != 1 || !strstr(r.err, cases[i][0]))
			fail_msg("spprof %s ...: exit %d, '%s' wanted in: %s", cases[i][1], r.status,
				 cases[i][0], r.err);
		harness_run_free(&r);
	}
}

/* Option names of the lines of text that start with "  --" or "  -x, --" (help) or "| `--" (README). */
static int option_names(const char *s, const char *lead, char names[][32], int max)
{
	int n = 0;

	for (const char *p = s; p && *p && n < max; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		const char *dash;
		size_t len;

		if (strncmp(p, lead, strlen(lead)) != 0 || !(dash = strstr(p, "--")) ||
		    dash > strchr(p, '\n'))
			continue;
		len = strcspn(dash, " `\n|");
		snprintf(names[n++], 32, "%.*s", (int)len, dash);
	}
	return n;
}

static int listed(char names[][32], int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return 1;
	return 0;
}

/* The README's command list names every command of `spprof help` and no
 * other, and its analyze option table is `spprof help analyze`'s. */
void test_readme_agrees_with_help(void **state)
{
	char *path = harness_join(getenv("SPP_SAMPLE_MODELS"), "../README.md");
	char *readme = harness_slurp(path, NULL), *block, *table, want[64];
	char help_opts[64][32], readme_opts[64][32];
	struct harness_run r;
	int nh, nr;

	(void)state;
	assert_non_null(readme);
	block = strstr(readme, "\n## Commands\n");
	assert_non_null(block);
	RUN(&r, "help");
	for (const char *p = strstr(r.out, "commands:\n"); p && (p = strstr(p, "\n  ")); p += 3) {
		char cmd[32];

		if (sscanf(p + 3, "%31s", cmd) != 1)
			break;
		snprintf(want, sizeof(want), "\nspprof %s", cmd);
		if (!strstr(block, want))
			fail_msg("README's command list lacks 'spprof %s'", cmd);
	}
	for (const char *p = block; (p = strstr(p, "\nspprof ")) && p < strstr(block, "\n```\n\n"); p++) {
		char cmd[32], usage[64];

		assert_int_equal(sscanf(p + 8, "%31s", cmd), 1);
		snprintf(usage, sizeof(usage), "\n  %s ", cmd);
		if (!strstr(r.out, usage))
			fail_msg("README lists 'spprof %s', which 'spprof help' does not", cmd);
	}
	harness_run_free(&r);
	RUN(&r, "help", "analyze");
	nh = option_names(strstr(r.out, "\noptions:\n"), "  -", help_opts, 64);
	table = strstr(readme, "### `spprof analyze MODEL`");
	assert_non_null(table);
	nr = option_names(table, "| `-", readme_opts, 64);
	for (int i = 0; i < nh; i++)
		if (!listed(readme_opts, nr, help_opts[i]))
			fail_msg("README's analyze table lacks %s", help_opts[i]);
	for (int i = 0; i < nr; i++)
		if (!listed(help_opts, nh, readme_opts[i]))
			fail_msg("README's analyze table lists %s, which 'spprof help analyze' does not",
				 readme_opts[i]);
	assert_true(nh > 15);
	harness_run_free(&r);
	free(readme);
	free(path);
}

/*
 * The help entry of option name in help text h, its lines joined with one
 * space between words, into buf; the "; default X" it ends with, X one
 * word, cut off into dflt (empty when none).
 */
static void help_entry(const char *h, const char *name, char *buf, size_t n, char *dflt, size_t dn)
{
	char head[64];
	const char *p, *end;
	size_t len = 0;

	snprintf(head, sizeof(head), "\n  %s ", name);
	p = strstr(h, head);
	if (!p)
		fail_msg("help does not list %s: %s", name, h);
	p += strlen(head);
	for (end = strchr(p, '\n'); end && strncmp(end, "\n   ", 4) == 0; end = strchr(end + 1, '\n'))
		;
	buf[0] = dflt[0] = '\0';
	while (p < end) {
		size_t w;

		p += strspn(p, " \n");
		w = strcspn(p, " \n");
		if (w && len + w + 2 < n) {
			len += (size_t)snprintf(buf + len, n - len, "%s%.*s", len ? " " : "", (int)w, p);
		}
		p += w;
	}
	p = strstr(buf, "; default ");
	if (p && !strchr(p + 10, ' ')) { /* a value, not a sentence */
		snprintf(dflt, dn, "%s", p + 10);
		buf[p - buf] = '\0';
	}
}

/*
 * The measurement session's options are one group of rows (cmd/options.c):
 * analyze, sweep and bench list each with the same help, but for the
 * default each states; and the default analyze states is the budget its
 * report says it ran with.
 */
void test_session_group(void **state)
{
	static const char *const cmds[] = {"analyze", "sweep", "bench"};
	static const char *const opts[] = {"--dense L,...", "--time-budget S", "--cache S", "--cold",
					   "--seed S"};
	static const char *const budgets[] = {"0.2", "0.1", "0.25"};
	char first[5][1024], text[1024], dflt[64];
	char *dir = harness_tmpdir();
	char *model = harness_join(dir, "m.safetensors"), *report = harness_join(dir, "r.json");
	struct harness_run r;
	cJSON *doc;

	(void)state;
	for (size_t c = 0; c < 3; c++) {
		RUN(&r, "help", cmds[c]);
		for (size_t o = 0; o < 5; o++) {
			help_entry(r.out, opts[o], text, sizeof(text), dflt, sizeof(dflt));
			if (c == 0)
				snprintf(first[o], sizeof(first[o]), "%s", text);
			else if (strcmp(first[o], text) != 0)
				fail_msg("spprof help %s: %s reads '%s', analyze's '%s'", cmds[c], opts[o],
					 text, first[o]);
			if (o == 1 && strcmp(dflt, budgets[c]) != 0)
				fail_msg("spprof help %s: --time-budget default '%s', not %s", cmds[c], dflt,
					 budgets[c]);
			if (o == 2 && strcmp(dflt, "auto") != 0)
				fail_msg("spprof help %s: --cache default '%s', not auto", cmds[c], dflt);
			if (o == 4 && strcmp(dflt, "1") != 0)
				fail_msg("spprof help %s: --seed default '%s', not 1", cmds[c], dflt);
		}
		harness_run_free(&r);
	}
	cli_model_and_report(model, report);
	RUN(&r, "analyze", model, "--formats", "csr", "--counters", "none", "--format", "json");
	assert_int_equal(r.status, 0);
	doc = cJSON_Parse(r.out);
	assert_non_null(doc);
	assert_true(cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "settings"),
							     "time_budget_s")) == 0.2);
	assert_true(cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "settings"),
							     "seed")) == 1);
	/* --cache auto: a 64 x 64 layer fits any LLC */
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "settings"), "cache")->valuestring,
			    "warm");
	assert_non_null(strstr(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "settings"),
						   "cache_rule")->valuestring, "auto: the weights, "));
	cJSON_Delete(doc);
	harness_run_free(&r);
	/* the same group in sweep: each state as asked, and said why */
	{
		static const char *const asked[][3] = {
			{"--cache=warm", "warm", "--cache warm"},
			{"--cold", "cold", "--cache cold"},
			{"--cache=auto", "warm", "fit in the LLC"},
		};

		for (size_t i = 0; i < 3; i++) {
			RUN(&r, "sweep", "--shape", "64x64x1", "--formats", "csr", "--time-budget", "0.002",
			    asked[i][0], "--format", "json");
			assert_int_equal(r.status, 0);
			doc = cJSON_Parse(r.out);
			assert_non_null(doc);
			assert_string_equal(cJSON_GetObjectItem(doc, "cache")->valuestring, asked[i][1]);
			assert_non_null(strstr(cJSON_GetObjectItem(doc, "cache_rule")->valuestring, asked[i][2]));
			assert_int_equal(cJSON_IsTrue(cJSON_GetObjectItem(doc, "cold")), i == 1);
			cJSON_Delete(doc);
			harness_run_free(&r);
		}
	}
	free(model);
	free(report);
	harness_rmtree(dir);
}
