/*
 * The PyTorch peer (profiler/peer_torch.h). Without torch, on fake
 * interpreters (shell scripts): no torch (exit 77: SPP_E_UNSUPPORTED with
 * the script's line), an interpreter that cannot run, a script that fails,
 * is killed or writes no or half a result, bad arguments. With torch: both
 * ops verified and timed on small ragged cases, and a Y that fails its
 * check (verified 0, not an error). Every case leaves no temporary folder
 * behind. After the first group, exits 77 with the reason where the
 * interpreter spprof would use cannot import torch.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "kernels/kernels.h"
#include "base/rng.h"
#include "profiler/peer_torch.h"
#include "test/harness.h"

#define BUDGET_S 0.05

/* The folder TMPDIR points at for the calls, to see that each cleans up. */
struct fixture {
	char *tmp;
	char *old_tmpdir;
	char *old_python;
};

static char *dup_env(const char *name)
{
	const char *v = getenv(name);

	return v ? strdup(v) : NULL;
}

static void restore_env(const char *name, const char *v)
{
	if (v)
		setenv(name, v, 1);
	else
		unsetenv(name);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->tmp = harness_tmpdir();
	assert_non_null(f->tmp);
	f->old_tmpdir = dup_env("TMPDIR");
	f->old_python = dup_env("SPPROF_PYTHON");
	setenv("TMPDIR", f->tmp, 1);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	restore_env("TMPDIR", f->old_tmpdir);
	restore_env("SPPROF_PYTHON", f->old_python);
	harness_rmtree(f->tmp);
	free(f->old_tmpdir), free(f->old_python), free(f);
	return 0;
}

/* An executable file dir/name with text; heap path. */
static char *write_exe(const char *dir, const char *name, const char *text)
{
	char *p = harness_join(dir, name);

	assert_non_null(p);
	assert_int_equal(harness_write(p, text, strlen(text)), 0);
	assert_int_equal(chmod(p, 0755), 0);
	return p;
}

static float *make(int64_t rows, int64_t cols, double sparsity, uint64_t seed)
{
	float *v = malloc(sizeof(float) * (size_t)(rows * cols));
	struct spp_rng r;

	assert_non_null(v);
	spp_rng_seed(&r, seed);
	for (int64_t i = 0; i < rows * cols; i++) {
		double keep = spp_rng_uniform(&r) >= sparsity;

		v[i] = keep ? (float)(2 * spp_rng_uniform(&r) - 1) : 0.0f;
	}
	return v;
}

/* TMPDIR holds only the fixture's own scripts (names starting "fake"). */
static void assert_no_leftovers(const struct fixture *f, int scripts)
{
	assert_int_equal(harness_count_entries(f->tmp), scripts);
}

static void test_ragged(void **state)
{
	struct fixture *f = *state;
	const int64_t M = 37, K = 53, ns[] = {1, 5};
	float *w = make(M, K, 0.8, 1);
	struct spp_matrix wm = {M, K, w};

	unsetenv("SPPROF_PYTHON");
	for (size_t c = 0; c < sizeof(ns) / sizeof(ns[0]); c++) {
		float *x = make(K, ns[c], 0.0, 2 + c);
		struct spp_peer_torch out;
		struct spp_error err = {0};
		int rc = spp_peer_torch_run(&wm, x, ns[c], 1, BUDGET_S, &out, &err);

		if (rc)
			fail_msg("N %lld: %s", (long long)ns[c], err.msg);
		assert_true(out.torch_version[0] != '\0' && strcmp(out.torch_version, "?") != 0);
		assert_int_equal(out.threads, 1);
		assert_non_null(strstr(out.script, "torch_spmm.py"));
		assert_string_equal(out.ops[SPP_PEER_TORCH_CSR].name, "torch_csr");
		assert_string_equal(out.ops[SPP_PEER_TORCH_DENSE].name, "torch_dense");
		assert_string_equal(out.ops[SPP_PEER_TORCH_CSR].call, "torch.sparse.mm");
		for (int i = 0; i < SPP_PEER_TORCH_NOPS; i++) {
			const struct spp_peer_torch_op *op = &out.ops[i];

			print_message("N %lld %s: median %.0f ns p10 %.0f p90 %.0f, %d runs, max error %.3g\n",
				      (long long)ns[c], op->name, op->median_ns, op->p10_ns, op->p90_ns,
				      op->runs, op->max_error);
			assert_true(op->verified);
			assert_true(op->max_error >= 0 && op->max_error <= 1e-4);
			assert_true(op->median_ns > 0 && op->p10_ns > 0 && op->p90_ns > 0);
			assert_true(op->p10_ns <= op->median_ns && op->median_ns <= op->p90_ns);
			assert_true(op->runs >= 5);
		}
		assert_no_leftovers(f, 0);
		free(x);
	}
	free(w);
}

/* The real script, then the last value of one Y overwritten: verified 0, rc 0. */
static void test_wrong_y(void **state)
{
	struct fixture *f = *state;
	char py[256], text[1024];
	const int64_t M = 9, K = 11, N = 3;
	float *w = make(M, K, 0.5, 7), *x = make(K, N, 0.0, 8);
	struct spp_matrix wm = {M, K, w};
	struct spp_peer_torch out;
	struct spp_error err = {0};
	char *fake;

	unsetenv("SPPROF_PYTHON");
	spp_peer_torch_python(py, sizeof(py));
	snprintf(text, sizeof(text),
		 "#!/bin/sh\n"
		 "'%s' \"$@\" || exit $?\n"
		 "while [ $# -gt 0 ]; do [ \"$1\" = --out ] && out=$2; shift; done\n"
		 "y=\"$out/y_torch_csr.npy\"\n"
		 "printf '\\177\\177\\177\\177' | dd of=\"$y\" bs=1 conv=notrunc "
		 "seek=$(( $(wc -c < \"$y\") - 4 )) 2>/dev/null\n", py);
	fake = write_exe(f->tmp, "fake-corrupt", text);
	setenv("SPPROF_PYTHON", fake, 1);
	assert_int_equal(spp_peer_torch_run(&wm, x, N, 1, BUDGET_S, &out, &err), 0);
	assert_false(out.ops[SPP_PEER_TORCH_CSR].verified);
	assert_true(out.ops[SPP_PEER_TORCH_CSR].max_error > 1e-4);
	assert_true(out.ops[SPP_PEER_TORCH_DENSE].verified);
	assert_true(out.ops[SPP_PEER_TORCH_CSR].median_ns > 0);
	assert_no_leftovers(f, 1);
	free(fake), free(w), free(x);
}

/* Run with SPPROF_PYTHON = a fake interpreter; the status, err filled. */
static int run_fake(struct fixture *f, const char *name, const char *text, struct spp_error *err)
{
	const int64_t M = 5, K = 4, N = 2;
	float *w = make(M, K, 0.5, 3), *x = make(K, N, 0.0, 4);
	struct spp_matrix wm = {M, K, w};
	struct spp_peer_torch out;
	char *fake = write_exe(f->tmp, name, text);
	int rc;

	setenv("SPPROF_PYTHON", fake, 1);
	rc = spp_peer_torch_run(&wm, x, N, 1, BUDGET_S, &out, err);
	print_message("%s: %s\n", name, err->msg);
	free(fake), free(w), free(x);
	return rc;
}

static void test_no_torch(void **state)
{
	struct fixture *f = *state;
	struct spp_error err = {0};

	assert_int_equal(run_fake(f, "fake-no-torch",
				  "#!/bin/sh\necho 'no module named torch' >&2\nexit 77\n", &err),
			 SPP_E_UNSUPPORTED);
	assert_int_equal(err.code, SPP_E_UNSUPPORTED);
	assert_string_equal(err.msg, "no module named torch");
	assert_no_leftovers(f, 1);
}

static void test_failures(void **state)
{
	struct fixture *f = *state;
	struct spp_error err = {0};
	const struct spp_matrix empty = {0, 0, NULL};
	struct spp_peer_torch out;
	float one = 1;

	/* a failing script: its status and last line */
	assert_int_equal(run_fake(f, "fake-fails", "#!/bin/sh\necho 'line one'\necho 'boom' >&2\nexit 3\n",
				  &err), SPP_E_RUNTIME);
	assert_non_null(strstr(err.msg, "status 3"));
	assert_non_null(strstr(err.msg, "boom"));
	/* exit 0 without a result */
	assert_int_equal(run_fake(f, "fake-silent", "#!/bin/sh\nexit 0\n", &err), SPP_E_RUNTIME);
	assert_non_null(strstr(err.msg, "result.json"));
	/* a result without the ops */
	assert_int_equal(run_fake(f, "fake-half",
				  "#!/bin/sh\nwhile [ $# -gt 0 ]; do [ \"$1\" = --out ] && out=$2; shift; done\n"
				  "echo '{\"torch_version\": \"x\", \"threads\": 1, \"ops\": {}}' > \"$out/result.json\"\n",
				  &err), SPP_E_RUNTIME);
	assert_non_null(strstr(err.msg, "torch_csr"));
	/* killed by a signal */
	assert_int_equal(run_fake(f, "fake-killed", "#!/bin/sh\nkill -9 $$\n", &err), SPP_E_RUNTIME);
	assert_non_null(strstr(err.msg, "signal 9"));
	assert_no_leftovers(f, 4);
	/* no interpreter at all */
	setenv("SPPROF_PYTHON", "/nonexistent/python3", 1);
	{
		float *w = make(3, 3, 0, 1), *x = make(3, 1, 0, 2);
		struct spp_matrix wm = {3, 3, w};

		assert_int_equal(spp_peer_torch_run(&wm, x, 1, 1, BUDGET_S, &out, &err),
				 SPP_E_UNSUPPORTED);
		assert_non_null(strstr(err.msg, "/nonexistent/python3"));
		free(w), free(x);
	}
	assert_no_leftovers(f, 4);
	/* bad arguments */
	assert_int_equal(spp_peer_torch_run(&empty, &one, 1, 1, BUDGET_S, &out, &err), SPP_E_USAGE);
	{
		struct spp_matrix wm = {1, 1, &one};

		assert_int_equal(spp_peer_torch_run(&wm, &one, 1, 0, BUDGET_S, &out, &err), SPP_E_USAGE);
		assert_int_equal(spp_peer_torch_run(&wm, &one, 1, 1, 0, &out, &err), SPP_E_USAGE);
		assert_int_equal(spp_peer_torch_run(&wm, &one, 0, 1, BUDGET_S, &out, &err), SPP_E_USAGE);
	}
}

/*
 * Whether the interpreter spprof would use imports torch, asked the way
 * spprof asks (a 2 x 2 run); why not into why. Other failures are the
 * tests' to report.
 */
static int have_torch(char *why, size_t n)
{
	float v[4] = {1, 0, 0, 1};
	struct spp_matrix wm = {2, 2, v};
	struct spp_peer_torch out;
	struct spp_error err = {0};
	char py[256];

	spp_peer_torch_python(py, sizeof(py));
	if (spp_peer_torch_run(&wm, v, 2, 1, 0.001, &out, &err) != SPP_E_UNSUPPORTED)
		return 1;
	snprintf(why, n, "no torch peer with '%s' (Debian: apt-get install python3-torch, or set "
		 "SPPROF_PYTHON to an interpreter that has torch): %s", py, err.msg);
	return 0;
}

int main(void)
{
	/* the failure paths need no torch: fake interpreters */
	const struct CMUnitTest no_torch[] = {
		cmocka_unit_test_setup_teardown(test_no_torch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failures, setup, teardown),
	};
	const struct CMUnitTest with_torch[] = {
		cmocka_unit_test_setup_teardown(test_ragged, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_y, setup, teardown),
	};
	char why[1024];
	int rc = cmocka_run_group_tests_name("peer_torch_failures", no_torch, NULL, NULL);

	if (rc)
		return rc;
	if (!have_torch(why, sizeof(why))) {
		printf("skipped: %s\n", why);
		return 77;
	}
	return cmocka_run_group_tests_name("peer_torch", with_torch, NULL, NULL);
}
