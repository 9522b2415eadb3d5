/*
 * The harness's view of the machine (measure.h): its clock, and the steal
 * time and runnable tasks of /proc/stat that judge a round disturbed.
 */
#include "profiler/measure.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static double monotonic_ns(void *ctx)
{
	struct timespec ts;

	(void)ctx;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

void spp_clock_monotonic(struct spp_clock *c)
{
	c->now_ns = monotonic_ns;
	c->ctx = NULL;
}

int spp_sys_sample_read(struct spp_sys_sample *s)
{
	unsigned long long v[8] = {0};
	char line[256];
	FILE *f = fopen("/proc/stat", "r");
	int got = 0;

	memset(s, 0, sizeof(*s));
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
			   &v[3], &v[4], &v[5], &v[6], &v[7]) == 8) {
			for (int i = 0; i < 8; i++)
				s->ticks += (double)v[i];
			s->steal = (double)v[7];
			got |= 1;
		} else if (sscanf(line, "procs_running %d", &s->running) == 1) {
			got |= 2;
		}
	}
	fclose(f);
	return got == 3 ? 0 : -1;
}

static int proc_read(void *ctx, struct spp_sys_sample *s)
{
	(void)ctx;
	return spp_sys_sample_read(s);
}

void spp_sys_probe_proc(struct spp_sys_probe *p)
{
	p->read = proc_read;
	p->ctx = NULL;
}
