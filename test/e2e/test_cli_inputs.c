/*
 * End-to-end tests of hostile input paths: a FIFO or a directory where a
 * file is read exits 2 at once with one line naming the path (open() on a
 * FIFO used to block forever, so each run is under an alarm).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "test/e2e/cli_fixture.h"
#include "test/harness.h"

void cli_refused(const char *const *args, const char *want)
{
	struct harness_run r;

	alarm(20);
	assert_int_equal(harness_spprof(&r, args), 0);
	alarm(0);
	if (r.status != 2 || !strstr(r.err, want))
		fprintf(stderr, "%s: status %d, stderr: %s", args[0], r.status, r.err);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, want));
	assert_int_equal(harness_count_lines(r.err), 1);
	assert_int_equal(r.out_len, 0);
	harness_run_free(&r);
}

void cli_model_and_report(const char *model, const char *report)
{
	struct harness_run r;

	RUN(&r, "synth", "-o", model, "--layer", "l1=64x64:unstructured:0.5");
	assert_int_equal(r.status, 0);
	harness_run_free(&r);
	RUN(&r, "analyze", model, "--static", "--format", "json", "-o", report);
	assert_int_equal(r.status, 0);
	harness_run_free(&r);
}

void test_fifo_inputs(void **state)
{
	char *dir = harness_tmpdir();
	char *fifo = harness_join(dir, "f"), *model = harness_join(dir, "m.safetensors");
	char *report = harness_join(dir, "r.json"), *acts = harness_join(dir, "acts");
	char *afifo = harness_join(acts, "l1.npy"), *index = harness_join(dir, "x.index.json");
	char want[600];
	static const char ix[] = "{\"weight_map\":{\"l1\":\"f\"}}";

	(void)state;
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(mkdir(acts, 0700), 0);
	assert_int_equal(mkfifo(afifo, 0600), 0);
	assert_int_equal(harness_write(index, ix, sizeof(ix) - 1), 0);
	cli_model_and_report(model, report);

	snprintf(want, sizeof(want), "'%s': not a regular file (a FIFO)", fifo);
	cli_refused((const char *[]){"analyze", fifo, "--static", NULL}, want);
	cli_refused((const char *[]){"report", fifo, NULL}, want);
	cli_refused((const char *[]){"compare", report, fifo, NULL}, want);
	cli_refused((const char *[]){"check", report, "--rules", fifo, NULL}, want);
	cli_refused((const char *[]){"analyze", index, "--static", NULL}, "not a regular file (a FIFO)");
	snprintf(want, sizeof(want), "'%s': not a regular file (a FIFO)", afifo);
	cli_refused((const char *[]){"analyze", model, "--n", "4", "--repeat", "1",
				 "--activations", acts, NULL}, want);
	snprintf(want, sizeof(want), "'%s': is a directory", acts);
	/* a rules file that is a folder was "9223372036854775807 bytes ... too large" */
	cli_refused((const char *[]){"check", report, "--rules", acts, NULL}, want);
	cli_refused((const char *[]){"report", acts, NULL}, want);
	cli_refused((const char *[]){"compare", report, acts, NULL}, want);
	cli_refused((const char *[]){"analyze", acts, "--static", NULL}, want);

	free(fifo); free(model); free(report); free(afifo); free(acts); free(index);
	harness_rmtree(dir);
}
