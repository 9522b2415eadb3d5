/*
 * The report of `spprof bench` (cmd/cmd_bench.c runs the cases): the text
 * tables printed as each case finishes, or one JSON document
 * ("schema": "spprof.bench/1") written at the end, plus the summary and
 * the targets the kernel issue is judged on. Rendering only: the figures
 * come from the measured runs and sweeps handed in, the selections from
 * profiler/bench_result.h.
 *
 * The writer keeps a copy of the description; what its pointers point to
 * is borrowed and must outlive the writer (until spp_bench_out_fini).
 */
#ifndef SPP_REPORTS_BENCH_H
#define SPP_REPORTS_BENCH_H

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>

#include "kernels/kernels.h"
#include "base/error.h"
#include "profiler/bench_result.h"
#include "profiler/machine.h"
#include "profiler/peer_torch_result.h"
#include "profiler/run_result.h"
#include "profiler/session_record.h"
#include "profiler/sweep_result.h"

/* What the report says of the run: its settings, the session's record, the probes. */
struct spp_bench_desc {
	const int64_t *ns;                           /* the N asked for, nn of them */
	int nn;
	const int64_t *threads;                      /* the thread counts, nthreads of them */
	int nthreads;
	const struct spp_format_ops *const *all;     /* formats then peers, nall */
	int nall;
	int64_t size;                                /* synthetic layers size x size */
	int quick, json;
	int torch;                                   /* --peers torch asked for */
	const char *dlmc_dir;                        /* the DLMC folder and its .smtx count */
	int ndlmc;
	struct spp_session_opts session;             /* --dense, --time-budget, --cold, --seed */
	const struct spp_session_record *rec;        /* the open session's dense candidates, settings */
	/*
	 * spprof calibrate's probes measured at the start of the run, one per
	 * thread count (probe[i] for threads[i]), probe_s seconds a probe; and
	 * the machine they describe.
	 */
	const struct spp_calibration *probe;
	double probe_s;
	const struct spp_machine *machine;
};

/* The thread setup of a group of cases, as the session resolved it. */
struct spp_bench_threads {
	int threads, pinned;
	char schedule[16];
	char policy[512];
};

struct spp_bench_out {
	struct spp_bench_desc d;
	FILE *f;
	cJSON *root, *cases, *cur;
	int dlmc_rows;                /* rows printed in the current case's DLMC table */
};

/* Start: the header (machine, BLAS, values, timing). 0 or SPP_E_NOMEM. */
int spp_bench_out_init(struct spp_bench_out *o, const struct spp_bench_desc *d, FILE *f,
		       struct spp_error *err);

/* A new (threads, N) case. 0 or SPP_E_NOMEM. */
int spp_bench_out_case(struct spp_bench_out *o, const struct spp_bench_threads *t, int64_t n,
		       struct spp_error *err);

/* One DLMC matrix's runs (dense first). 0 or SPP_E_NOMEM. */
int spp_bench_out_matrix(struct spp_bench_out *o, const char *name, int64_t m, int64_t k,
			 uint64_t nnz, const struct spp_layer_runs *runs, struct spp_error *err);

/* The synthetic unstructured sweep of the case. 0 or SPP_E_NOMEM. */
int spp_bench_out_sweep(struct spp_bench_out *o, const struct spp_sweep *s, struct spp_error *err);

/*
 * The same sweep warm, beside a cold run's (the cache state decides the
 * N = 1 dense baseline): its own table, JSON "sweep_warm". The summary
 * and targets stay the run's own cache state. 0 or SPP_E_NOMEM.
 */
int spp_bench_out_sweep_warm(struct spp_bench_out *o, const struct spp_sweep *s,
			     struct spp_error *err);

/* The synthetic 2:4 layer's runs. 0 or SPP_E_NOMEM. */
int spp_bench_out_nm(struct spp_bench_out *o, const char *name, int64_t m, int64_t k, uint64_t nnz,
		     const struct spp_layer_runs *runs, struct spp_error *err);

/*
 * The PyTorch peer's two ops on the synthetic layer `name` against its
 * dense baseline (bench_peer.c). 0 or SPP_E_NOMEM.
 */
int spp_bench_out_torch(struct spp_bench_out *o, const char *name, const struct spp_peer_torch *t,
			double dense_ns, struct spp_error *err);

/* A line about the run ("torch: not run: no module named torch"): text at once, JSON in "notes". */
int spp_bench_out_note(struct spp_bench_out *o, const char *what, const char *msg,
		       struct spp_error *err);

/*
 * The summary of the cases (dense scaling, per case, targets) and, in
 * JSON, the whole document (bench_summary.c). 0 or SPP_E_NOMEM.
 */
int spp_bench_out_finish(struct spp_bench_out *o, const struct spp_bench_sums *sums,
			 struct spp_error *err);

/* Free; accepts a zeroed struct. */
void spp_bench_out_fini(struct spp_bench_out *o);

#endif
