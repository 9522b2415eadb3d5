/*
 * --shard: one process's share of a model's kernel runs, for job arrays
 * and MPI ranks that each profile a part (DESIGN: spprof splits the work
 * with the cluster's engine, never with a scheduler of its own).
 *
 * A layer's work unit is (M, K, N, dtype, pattern class) under the run's
 * backends; its shard is a stable hash of the unit (XXH64 of those
 * figures, the same on every machine and run) modulo the count, so the
 * repeated blocks of a transformer land on one shard and share its
 * breakeven sweep. Every shard scans every layer statically; only the
 * layers of its own units are timed.
 */
#ifndef SPP_PROFILER_SHARD_H
#define SPP_PROFILER_SHARD_H

#include <stdint.h>

#include "base/error.h"
#include "profiler/layer.h"
#include "profiler/static.h"

struct spp_shard {
	int index, count;        /* 0 <= index < count; count 0: no sharding */
	char source[48];         /* "option", or the variables it came from */
};

/*
 * "I/N" (0 <= I < N <= 65536) or "auto": the index and count of the job
 * array or MPI rank from the environment (SLURM_ARRAY_TASK_ID less
 * SLURM_ARRAY_TASK_MIN of SLURM_ARRAY_TASK_COUNT; JOB_COMPLETION_INDEX of
 * count, the --shard-count, as Kubernetes indexed jobs give no count;
 * OMPI_COMM_WORLD_RANK of OMPI_COMM_WORLD_SIZE; PMI_RANK of PMI_SIZE),
 * count 0 when --shard-count is not given. Returns 0 or SPP_E_USAGE
 * naming what is wrong.
 */
int spp_shard_parse(const char *arg, int count, struct spp_shard *out, struct spp_error *err);

/* The shard of layer l (static figures s) among count (> 0). */
int spp_shard_of(const struct spp_layer *l, const struct spp_layer_static *s, int count);

#endif
