/*
 * Private to reports/bench.c, bench_summary.c and bench_peer.c: the
 * helpers the parts of `spprof bench`'s report share.
 */
#ifndef SPP_REPORTS_BENCH_INTERNAL_H
#define SPP_REPORTS_BENCH_INTERNAL_H

#include <stddef.h>

#include "base/error.h"

/* A time in ns as a short cell into b (n bytes): "-" unless ns > 0. */
void spp_bench_fmt_time(double ns, char *b, size_t n);

/* Sets SPP_E_NOMEM in err for the bench output; returns the code. */
int spp_bench_fail_nomem(struct spp_error *err);

#endif
