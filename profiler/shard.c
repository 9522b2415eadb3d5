/* --shard: a process's share of the kernel runs (shard.h). */
#include "profiler/shard.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#define MAX_SHARDS 65536

/* A decimal integer in [lo, hi] from s, all of s; -1 when not. */
static long parse_int(const char *s, long lo, long hi)
{
	char *end;
	long v;

	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	return errno || *end || v < lo || v > hi ? -1 : v;
}

/* The first engine whose variables are set: index and count, or an error naming them. */
static int from_env(int count, struct spp_shard *out, struct spp_error *err)
{
	static const struct {
		const char *index, *count, *min;
	} engines[] = {
		{"SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN"},
		{"JOB_COMPLETION_INDEX", NULL, NULL},
		{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", NULL},
		{"PMI_RANK", "PMI_SIZE", NULL},
	};

	for (size_t e = 0; e < sizeof(engines) / sizeof(engines[0]); e++) {
		const char *iv = getenv(engines[e].index);
		long i, n, lo = 0;

		if (!iv)
			continue;
		n = engines[e].count ? parse_int(getenv(engines[e].count), 1, MAX_SHARDS) : count;
		if (engines[e].min && getenv(engines[e].min))
			lo = parse_int(getenv(engines[e].min), 0, 1L << 30);
		i = parse_int(iv, 0, 1L << 30);
		if (n <= 0)
			return spp_error_set(err, SPP_E_USAGE, "--shard auto: %s is set but %s",
					     engines[e].index, engines[e].count
					     ? "its count is missing or not 1..65536" : "--shard-count is not given");
		if (i < 0 || lo < 0 || i - lo >= n || i < lo)
			return spp_error_set(err, SPP_E_USAGE, "--shard auto: %s=%s is not an index "
					     "below %ld", engines[e].index, iv, n);
		out->index = (int)(i - lo);
		out->count = (int)n;
		snprintf(out->source, sizeof(out->source), "%s", engines[e].index);
		return 0;
	}
	return spp_error_set(err, SPP_E_USAGE, "--shard auto: none of SLURM_ARRAY_TASK_ID, "
			     "JOB_COMPLETION_INDEX, OMPI_COMM_WORLD_RANK or PMI_RANK is set");
}

int spp_shard_parse(const char *arg, int count, struct spp_shard *out, struct spp_error *err)
{
	const char *slash = strchr(arg, '/');
	char head[16];
	long i, n;

	memset(out, 0, sizeof(*out));
	if (strcmp(arg, "auto") == 0)
		return from_env(count, out, err);
	if (!slash || (size_t)(slash - arg) >= sizeof(head))
		return spp_error_set(err, SPP_E_USAGE, "--shard '%s': want I/N such as 0/4, or auto", arg);
	memcpy(head, arg, (size_t)(slash - arg));
	head[slash - arg] = '\0';
	n = parse_int(slash + 1, 1, MAX_SHARDS);
	i = parse_int(head, 0, MAX_SHARDS - 1);
	if (n < 0 || i < 0 || i >= n)
		return spp_error_set(err, SPP_E_USAGE, "--shard '%s': want I/N with 0 <= I < N <= %d",
				     arg, MAX_SHARDS);
	out->index = (int)i;
	out->count = (int)n;
	snprintf(out->source, sizeof(out->source), "option");
	return 0;
}

int spp_shard_of(const struct spp_layer *l, const struct spp_layer_static *s, int count)
{
	/* the unit's figures as fixed-width integers, so the hash is the same everywhere */
	int64_t unit[5] = {l->view.m, l->view.k, l->n, l->weight ? (int64_t)l->weight->dtype : -1,
			   (int64_t)s->cls};

	return count > 0 ? (int)(XXH64(unit, sizeof(unit), 0) % (uint64_t)count) : 0;
}
