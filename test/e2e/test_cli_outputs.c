/*
 * End-to-end tests of hostile output paths: -o onto a FIFO, a device, a
 * folder or an input is refused with exit 2 and one line, before any work
 * and without touching the target; a read-only folder fails before the
 * analysis; SIGTERM or SIGINT during a write leaves no temporary file.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "test/e2e/cli_fixture.h"
#include "test/harness.h"

/*
 * Entries of dir whose name starts with '.' (temporary files), "." and
 * ".." aside; *bytes (when not NULL) their total size.
 */
static int hidden_entries_size(const char *dir, long long *bytes)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	struct stat st;
	char path[4096];
	int n = 0;

	assert_non_null(d);
	if (bytes)
		*bytes = 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] != '.' || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		n++;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (bytes && stat(path, &st) == 0)
			*bytes += (long long)st.st_size;
	}
	closedir(d);
	return n;
}

static int hidden_entries(const char *dir)
{
	return hidden_entries_size(dir, NULL);
}

static void same_file(const char *path, const char *want, size_t want_len)
{
	size_t len;
	char *got = harness_slurp(path, &len);

	assert_non_null(got);
	assert_int_equal(len, want_len);
	assert_memory_equal(got, want, len);
	free(got);
}

/* A FIFO, links to a FIFO and to /dev/null, a folder: refused by every command with -o. */
static void refuse_kinds(const char *dir, const char *model, const char *report)
{
	char *fifo = harness_join(dir, "f"), *lfifo = harness_join(dir, "lf");
	char *lnull = harness_join(dir, "ln"), *sub = harness_join(dir, "sub");
	char want[600];
	struct stat st;

	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(symlink(fifo, lfifo), 0);
	assert_int_equal(symlink("/dev/null", lnull), 0);
	assert_int_equal(mkdir(sub, 0700), 0);

	snprintf(want, sizeof(want), "cannot write '%s': not a regular file (a FIFO)", fifo);
	cli_refused((const char *[]){"analyze", model, "--static", "-o", fifo, NULL}, want);
	cli_refused((const char *[]){"report", report, "-o", fifo, NULL}, want);
	cli_refused((const char *[]){"compare", report, report, "-o", fifo, NULL}, want);
	cli_refused((const char *[]){"check", report, "--rules", report, "-o", fifo, NULL}, want);
	cli_refused((const char *[]){"check", report, "--rules", report, "--junit", fifo, NULL}, want);
	cli_refused((const char *[]){"synth", "-o", fifo, "--layer", "l1=8x8:unstructured:0.5", NULL},
		want);
	cli_refused((const char *[]){"sweep", "--shape", "16x16x4", "-o", fifo, NULL}, want);
	cli_refused((const char *[]){"bench", "-o", fifo, NULL}, want);
	snprintf(want, sizeof(want), "cannot write '%s': not a regular file (a FIFO)", lfifo);
	cli_refused((const char *[]){"analyze", model, "--static", "-o", lfifo, NULL}, want);
	snprintf(want, sizeof(want), "cannot write '%s': not a regular file (a character device)",
		 lnull);
	cli_refused((const char *[]){"analyze", model, "--static", "-o", lnull, NULL}, want);
	cli_refused((const char *[]){"synth", "-o", lnull, "--layer", "l1=8x8:unstructured:0.5", NULL},
		want);
	snprintf(want, sizeof(want), "cannot write '%s': is a directory", sub);
	cli_refused((const char *[]){"analyze", model, "--static", "-o", sub, NULL}, want);
	cli_refused((const char *[]){"analyze", model, "--static", "-o", "", NULL},
		"cannot write '': an empty path");

	/* nothing replaced: the FIFO, the links and /dev/null are what they were */
	assert_int_equal(lstat(fifo, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	assert_int_equal(lstat(lfifo, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(lstat(lnull, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(stat("/dev/null", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
	assert_int_equal(hidden_entries(dir), 0);
	free(fifo), free(lfifo), free(lnull), free(sub);
}

void test_output_targets(void **state)
{
	char *dir = harness_tmpdir();
	char *model = harness_join(dir, "m.safetensors"), *report = harness_join(dir, "r.json");
	char *index = harness_join(dir, "x.index.json"), *m, *rep, want[600];
	static const char ix[] = "{\"weight_map\":{\"l1\":\"m.safetensors\"}}";
	size_t mlen, rlen;

	(void)state;
	cli_model_and_report(model, report);
	assert_int_equal(harness_write(index, ix, sizeof(ix) - 1), 0);
	m = harness_slurp(model, &mlen);
	rep = harness_slurp(report, &rlen);
	assert_non_null(m);
	assert_non_null(rep);

	refuse_kinds(dir, model, report);

	/* an input of the run, the model itself or a shard behind an index */
	snprintf(want, sizeof(want), "cannot write '%s': is the input '%s'", model, model);
	cli_refused((const char *[]){"analyze", model, "--static", "--format", "text", "-o", model, NULL}, want);
	cli_refused((const char *[]){"analyze", model, "--n", "4", "--repeat", "1", "--format", "json",
				 "-o", model, NULL}, want);
	cli_refused((const char *[]){"analyze", index, "--static", "--format", "md", "-o", model, NULL},
		    "is the input");
	/* without --format, a name no writer has is refused first (-o r.xlsx wrote text) */
	cli_refused((const char *[]){"analyze", model, "--static", "-o", model, NULL},
		    "cannot tell the report format from");
	snprintf(want, sizeof(want), "cannot write '%s': is the input '%s'", report, report);
	cli_refused((const char *[]){"report", report, "--format", "json", "-o", report, NULL}, want);
	cli_refused((const char *[]){"compare", report, report, "-o", report, NULL}, want);
	same_file(model, m, mlen);
	same_file(report, rep, rlen);
	assert_int_equal(hidden_entries(dir), 0);
	/* bench's matrices are inputs too: refused before the first run */
	{
		char *dlmc = harness_join(dir, "dlmc"), *smtx = harness_join(dlmc, "a.smtx");
		static const char pat[] = "2, 4, 2\n0 1 2\n3 0\n";

		assert_int_equal(mkdir(dlmc, 0755), 0);
		assert_int_equal(harness_write(smtx, pat, sizeof(pat) - 1), 0);
		snprintf(want, sizeof(want), "cannot write '%s': is the input '%s'", smtx, smtx);
		cli_refused((const char *[]){"bench", "--dlmc", dlmc, "-o", smtx, NULL}, want);
		same_file(smtx, pat, sizeof(pat) - 1);
		free(smtx), free(dlmc);
	}

	free(m), free(rep), free(model), free(report), free(index);
	harness_rmtree(dir);
}

/*
 * A folder this process cannot create files in: a 0555 one, or where the
 * mode does not hold (root), /sys (sysfs takes no new files); NULL with
 * none. *made says whether it is ours.
 */
static char *readonly_dir(const char *dir, int *made)
{
	char *ro = harness_join(dir, "ro"), *probe = harness_join(ro, "probe");
	int ok;

	assert_int_equal(mkdir(ro, 0555), 0);
	ok = harness_write(probe, "x", 1) != 0;
	unlink(probe);
	free(probe);
	*made = 1;
	if (ok)
		return ro;
	free(ro);
	*made = 0;
	probe = strdup("/sys/spprof-probe");
	ok = probe && harness_write(probe, "x", 1) != 0;
	if (!ok && probe)
		unlink(probe);
	free(probe);
	return ok ? strdup("/sys") : NULL;
}

void test_output_readonly_dir(void **state)
{
	char *dir = harness_tmpdir(), *model = harness_join(dir, "m.safetensors"), *ro, *out;
	struct harness_run r;
	int made;

	(void)state;
	RUN(&r, "synth", "-o", model, "--layer", "l1=64x64:unstructured:0.5");
	assert_int_equal(r.status, 0);
	harness_run_free(&r);
	ro = readonly_dir(dir, &made);
	if (!ro) {
		fprintf(stderr, "skipped: no folder here refuses new files\n");
		free(model);
		harness_rmtree(dir);
		return;
	}
	out = harness_join(ro, "r.json");
	/* exit 2 before the runs; after them it was 3, a failed write */
	cli_refused((const char *[]){"analyze", model, "--n", "4", "--repeat", "1", "-o", out, NULL},
		"cannot write");
	cli_refused((const char *[]){"analyze", model, "--static", "-o", out, NULL}, out);
	cli_refused((const char *[]){"sweep", "--shape", "16x16x4", "-o", out, NULL}, "folder");
	if (made) {
		assert_int_equal(harness_count_entries(ro), 0);
		chmod(ro, 0755);
	}
	free(out), free(ro), free(model);
	harness_rmtree(dir);
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

/*
 * Write a model of rows x rows fp32 into dir and send sig once its
 * temporary file shows: the exit status (128 + sig expected), or -1 when
 * the write ended before the file was seen.
 */
static int kill_during_write(const char *dir, const char *errlog, int rows, int sig)
{
	char *out = harness_join(dir, "big.safetensors"), layer[64];
	const char *prog = getenv("SPPROF");
	int status, seen = 0;
	pid_t pid;

	assert_non_null(prog);
	snprintf(layer, sizeof(layer), "l1=%dx%d:unstructured:0.5", rows, rows);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* as a shell's background job would not: the signals at their default */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		if (!freopen("/dev/null", "w", stdout) || !freopen(errlog, "w", stderr))
			_exit(126);
		execl(prog, prog, "synth", "-o", out, "--layer", layer, (char *)NULL);
		_exit(127);
	}
	/*
	 * Written to, not merely there: the empty temp file by which -o's
	 * folder is tried at parse time lives for microseconds and is not it.
	 */
	for (int i = 0; i < 60000 && !seen; i++) {
		long long bytes;

		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		seen = hidden_entries_size(dir, &bytes) > 0 && bytes > 0;
		if (!seen)
			sleep_ms(1);
	}
	if (seen) {
		kill(pid, sig);
		assert_int_equal(waitpid(pid, &status, 0), pid);
	}
	assert_int_equal(hidden_entries(dir), 0);
	unlink(out);
	free(out);
	if (!seen)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void test_output_signal(void **state)
{
	static const int sigs[] = {SIGTERM, SIGINT};
	char *dir = harness_tmpdir(), *logdir = harness_tmpdir(), *errlog;

	(void)state;
	errlog = harness_join(logdir, "stderr");
	for (int s = 0; s < 2; s++) {
		int rc = -1;
		char *log;

		/* bigger when the write was over before its temp file was seen */
		for (int rows = 4096; rc < 0 && rows <= 8192; rows *= 2)
			rc = kill_during_write(dir, errlog, rows, sigs[s]);
		if (rc < 0) {
			fprintf(stderr, "skipped: every write ended before its temp file was seen\n");
			break;
		}
		assert_int_equal(rc, 128 + sigs[s]);
		log = harness_slurp(errlog, NULL);
		assert_non_null(log);
		assert_non_null(strstr(log, "big.safetensors' not written"));
		assert_int_equal(harness_count_lines(log), 1);
		free(log);
		assert_int_equal(harness_count_entries(dir), 0);
	}
	free(errlog);
	harness_rmtree(dir);
	harness_rmtree(logdir);
}
