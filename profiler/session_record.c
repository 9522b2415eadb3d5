/* The session's options and record as results (session_record.h). */
#include "profiler/session_record.h"

#include <string.h>

void spp_session_opts_init(struct spp_session_opts *o, double time_budget_s)
{
	memset(o, 0, sizeof(*o));
	o->time_budget_s = time_budget_s;
	o->seed = 1;
}

void spp_session_record_release(struct spp_session_record *r)
{
	spp_dense_memo_free(&r->dense_memo);
	spp_dense_set_close(&r->dense);
}
