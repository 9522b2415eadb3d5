/*
 * `spprof bench` (cmd_bench.c runs the cases, bench_dlmc.c lists the DLMC
 * inputs): what to run, as the options and the open session leave it. The
 * report is reports/bench.h, the selections profiler/bench_result.h.
 */
#ifndef SPP_CMD_BENCH_H
#define SPP_CMD_BENCH_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/kernels.h"
#include "profiler/machine.h"
#include "profiler/session.h"

#define BENCH_MAX_FORMATS 32
#define BENCH_MAX_PEERS 4
#define BENCH_MAX_DLMC 256
#define BENCH_MAX_LIST 8

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
