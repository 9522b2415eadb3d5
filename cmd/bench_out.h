/*
 * Output of `spprof bench` (cmd_bench.c runs the cases): the text tables
 * printed as each case finishes, or one JSON document
 * ("schema": "spprof.bench/1") written at the end, plus the summary the
 * issue's targets are judged on. Printing only; figures come from the
 * measured runs and sweeps handed in.
 */
#ifndef SPP_CMD_BENCH_OUT_H
#define SPP_CMD_BENCH_OUT_H

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#include "kernels/kernels.h"
#include "base/error.h"
#include "profiler/machine.h"
#include "profiler/peer_torch.h"
#include "profiler/run.h"
#include "profiler/session.h"
#include "profiler/sweep.h"

#define BENCH_MAX_FORMATS 32
#define BENCH_MAX_PEERS 4
#define BENCH_MAX_DLMC 256
#define BENCH_MAX_LIST 8
#define BENCH_MAX_CASES (BENCH_MAX_LIST * BENCH_MAX_LIST)

/* What to run (options of the command). */
struct bench_cfg {
	char dlmc_dir[PATH_MAX];
	char *dlmc[BENCH_MAX_DLMC];   /* .smtx paths relative to dlmc_dir, sorted */
	int ndlmc;
	int64_t ns[BENCH_MAX_LIST];
	int nn;
	int64_t threads[BENCH_MAX_LIST];
	int nthreads;
	const struct spp_format_ops *formats[BENCH_MAX_FORMATS];
	int nformats;
	const struct spp_format_ops *peers[BENCH_MAX_PEERS];
	int npeers;
	const struct spp_format_ops *all[BENCH_MAX_FORMATS + BENCH_MAX_PEERS];
	int nall;                     /* formats then peers */
	int64_t size;                 /* synthetic layers size x size */
	struct spp_session_opts session; /* --dense, --time-budget, --cold, --seed */
	struct spp_session sess;      /* the measurement session, open while the cases run */
	int quick, json, quiet;
	int torch;                    /* --peers torch: the PyTorch peer on the synthetic layers */
	const char *output;
	/*
	 * The read-bandwidth and FMA probes of `spprof calibrate`, measured
	 * at the start of this run for each thread count (probe[i] for
	 * threads[i]), probe_s seconds a probe: the yardstick of each run's
	 * bw_util, and of the targets' bounds. machine: this machine, for the
	 * capacities of its levels.
	 */
	struct spp_calibration probe[BENCH_MAX_LIST];
	double probe_s;
	struct spp_machine *machine;
};

/* The thread setup of a group of cases. */
struct bench_threads {
	int threads, pinned;
	char schedule[16];
	char policy[512];
};

/* Figures of one (threads, N) case for the summary; NAN unknown. */
struct bench_sum {
	int threads;
	int64_t n;
	double dense_ns;              /* median dense time over the sweep's grid */
	double best_be, csr_be;       /* breakevens */
	char best_be_fmt[16];
	double best_90;               /* best speedup at sparsity 0.9 */
	char best_90_fmt[16];
	double best_24;               /* speedup of the best format on the 2:4 layer (nm2_4's: r24) */
	char best_24_fmt[16];
	double dlmc_best_geo;         /* geometric mean over DLMC of the best format's speedup */
	double csr90_ns;              /* median of csr at 0.9 (thread scaling) */
	/*
	 * The whole runs behind the speedup targets, for their bounds: the
	 * best format at 0.9 and nm2_4 on the 2:4 layer, each with the dense
	 * baseline of the same timing; format "" and figures NAN when there
	 * is none.
	 */
	struct spp_run r90, d90, r24, d24;
};

struct bench_out {
	const struct bench_cfg *c;
	FILE *f;
	cJSON *root, *cases, *cur;
	struct bench_sum sums[BENCH_MAX_CASES];
	int nsums;
	int dlmc_rows;                /* rows printed in the current case's DLMC table */
	double dlmc_log_sum;
	int dlmc_n;
};

/* Start: the header (machine, BLAS, values, timing). 0 or SPP_E_NOMEM. */
int bench_out_init(struct bench_out *o, const struct bench_cfg *c, FILE *f,
		   struct spp_error *err);

/* A new (threads, N) case. */
int bench_out_case(struct bench_out *o, const struct bench_threads *t, int64_t n,
		   struct spp_error *err);

/* One DLMC matrix's runs (dense first). */
int bench_out_matrix(struct bench_out *o, const char *name, int64_t m, int64_t k,
		     uint64_t nnz, const struct spp_layer_runs *runs, struct spp_error *err);

/* The synthetic unstructured sweep of the case; at90: the runs of its point 0.9 (may be empty). */
int bench_out_sweep(struct bench_out *o, const struct spp_sweep *s,
		    const struct spp_layer_runs *at90, struct spp_error *err);

/* The synthetic 2:4 layer's runs. */
int bench_out_nm(struct bench_out *o, const char *name, int64_t m, int64_t k, uint64_t nnz,
		 const struct spp_layer_runs *runs, struct spp_error *err);

/* The summary (dense scaling, targets) and, in JSON, the whole document. */
int bench_out_finish(struct bench_out *o, struct spp_error *err);

/* Free; accepts a zeroed struct. */
/* The PyTorch peer's two ops on the synthetic layer `name` against its dense baseline (bench_out_peer.c). */
int bench_out_torch(struct bench_out *o, const char *name, const struct spp_peer_torch *t,
		    double dense_ns, struct spp_error *err);

/* A line about the run ("torch: not run: no module named torch"): text at once, JSON in "notes". */
int bench_out_note(struct bench_out *o, const char *what, const char *msg, struct spp_error *err);

void bench_out_fini(struct bench_out *o);

/*
 * The default DLMC folder into out: ../shared/bench/dlmc beside the
 * repository this binary was built in, else beside the current folder; -1
 * with where it looked in tried (bench_dlmc.c).
 */
int bench_find_dlmc(char *out, size_t n, char *tried, size_t tn);

/* Every .smtx under root/rel (relative paths, sorted) into c. 0, or an exit code. */
int bench_list_dlmc(const char *root, const char *rel, struct bench_cfg *c, int depth);

/* --quick: two matrices at 90%, a Transformer one and a ResNet one where present. */
void bench_pick_quick(struct bench_cfg *c);

#endif
