/*
 * Private to bench_out.c and bench_out_summary.c: the helpers both halves
 * of the `spprof bench` output share.
 */
#ifndef SPP_CMD_BENCH_OUT_INTERNAL_H
#define SPP_CMD_BENCH_OUT_INTERNAL_H

#include <stddef.h>

#include "base/error.h"

/* A time in ns as a short cell into b (n bytes): "-" unless ns > 0. */
void bench_fmt_time(double ns, char *b, size_t n);

/* Sets SPP_E_NOMEM in err for the bench output; returns the code. */
int bench_fail_nomem(struct spp_error *err);

#endif
