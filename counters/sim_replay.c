/*
 * Replay of the traced kernels through the cache model (counters/sim.h),
 * and the `sim` counter backend.
 *
 * The traced copies of kernels/cpu/<format>.c (kernels/trace.h) call
 * spp_trace_access() at every trace point and spp_trace_run_parts() in
 * place of the OpenMP driver. Neither carries a context through the
 * kernels' signatures, so the simulator listening to the calling thread is
 * a thread-local pointer, set only for the length of a replay (or between
 * the backend's start and stop): the one piece of mutable state here, and
 * it never crosses threads.
 */
#include "counters/sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/cpu.h"

/* Row units per sampled block. */
#define SAMPLE_BLOCK 64
#define MAX_REGIONS 8
/* Each registered buffer starts on its own boundary of the canonical space. */
#define REGION_SHIFT 36

enum kind { K_NONE, K_CSR, K_COO, K_BSR, K_BITMASK, K_NM };

struct region {
	uint64_t lo, hi, base;
};

struct sink {
	struct spp_sim *sim;
	int cores, core;
	/* canonical mapping (replays); nreg 0: raw addresses */
	struct region reg[MAX_REGIONS];
	int nreg, last;
	uint64_t unmapped;
	/* sampling: every stride-th block of `block` row units of each part */
	enum kind kind;
	int64_t block, stride, units_total, units_sim;
	int64_t *lo, *rlo;      /* scratch partitions (nparts + 1) */
};

static _Thread_local struct sink *cur;

void spp_trace_access(const void *p, size_t bytes, int store);
void spp_trace_run_parts(const struct spp_encoded *w, cpu_part_fn fn, const float *x,
			 float *y, int64_t n, const struct spp_exec *ex);

void spp_trace_access(const void *p, size_t bytes, int store)
{
	struct sink *s = cur;
	uint64_t a = (uint64_t)(uintptr_t)p;

	if (!s || !bytes)
		return;
	if (s->nreg) {
		const struct region *r = &s->reg[s->last];

		if (a < r->lo || a >= r->hi) {
			int i;

			for (i = 0; i < s->nreg; i++)
				if (a >= s->reg[i].lo && a < s->reg[i].hi)
					break;
			if (i == s->nreg) {
				/* not a registered buffer: counted as it is, and said */
				s->unmapped++;
				spp_sim_access(s->sim, s->core, a, bytes, store);
				return;
			}
			s->last = i;
			r = &s->reg[i];
		}
		a = r->base + (a - r->lo);
	}
	spp_sim_access(s->sim, s->core, a, bytes, store);
}

static enum kind kind_of(const char *key)
{
	if (strcmp(key, "csr") == 0)
		return K_CSR;
	if (strcmp(key, "coo") == 0)
		return K_COO;
	if (strncmp(key, "bsr", 3) == 0)
		return K_BSR;
	if (strcmp(key, "bitmask") == 0)
		return K_BITMASK;
	if (strncmp(key, "nm", 2) == 0)
		return K_NM;
	return K_NONE;
}

extern const struct spp_format_ops spp_trace_csr, spp_trace_coo, spp_trace_bsr4,
	spp_trace_bsr8, spp_trace_bsr16, spp_trace_bitmask, spp_trace_nm1_4,
	spp_trace_nm2_4, spp_trace_nm4_8;

static const struct spp_format_ops *const traced[] = {
	&spp_trace_csr, &spp_trace_coo, &spp_trace_bsr4, &spp_trace_bsr8,
	&spp_trace_bsr16, &spp_trace_bitmask, &spp_trace_nm1_4, &spp_trace_nm2_4,
	&spp_trace_nm4_8, NULL,
};

const struct spp_format_ops *spp_trace_format_find(const char *key)
{
	for (int i = 0; key && traced[i]; i++)
		if (strcmp(traced[i]->key, key) == 0)
			return traced[i];
	return NULL;
}

/* The partition array of a format's buffers (row units; coo: non-zeros). */
static int64_t *part_lo(enum kind k, const void *impl)
{
	switch (k) {
	case K_CSR:
		return ((const struct cpu_csr *)impl)->lo;
	case K_COO:
		return ((const struct cpu_coo *)impl)->rlo;
	case K_BSR:
		return ((const struct cpu_bsr *)impl)->lo;
	case K_BITMASK:
		return ((const struct cpu_bitmask *)impl)->lo;
	case K_NM:
		return ((const struct cpu_nm *)impl)->lo;
	default:
		return NULL;
	}
}

union impl_copy {
	struct cpu_csr csr;
	struct cpu_coo coo;
	struct cpu_bsr bsr;
	struct cpu_bitmask bitmask;
	struct cpu_nm nm;
};

/* First non-zero of coo part p whose row is >= r. */
static int64_t coo_first(const struct cpu_coo *c, int p, int64_t r)
{
	int64_t a = c->lo[p], b = c->lo[p + 1];

	while (a < b) {
		int64_t mid = a + (b - a) / 2;

		if (c->row[mid] < r)
			a = mid + 1;
		else
			b = mid;
	}
	return a;
}

/* Run part p on row units [u0, u1) only: a copy of the buffers' header with a narrowed partition. */
static void run_block(struct sink *s, const struct spp_encoded *w, cpu_part_fn fn, int p,
		      int64_t u0, int64_t u1, const float *x, float *y, int64_t n)
{
	union impl_copy c;
	struct spp_encoded wc = *w;
	size_t size[] = {0, sizeof(c.csr), sizeof(c.coo), sizeof(c.bsr), sizeof(c.bitmask), sizeof(c.nm)};

	memcpy(&c, w->impl, size[s->kind]);
	memcpy(s->lo, part_lo(s->kind, w->impl), (size_t)(w->nparts + 1) * sizeof(*s->lo));
	s->lo[p] = u0;
	s->lo[p + 1] = u1;
	switch (s->kind) {
	case K_CSR:
		c.csr.lo = s->lo;
		break;
	case K_COO:
		memcpy(s->rlo, c.coo.lo, (size_t)(w->nparts + 1) * sizeof(*s->rlo));
		s->rlo[p] = coo_first(w->impl, p, u0);
		s->rlo[p + 1] = coo_first(w->impl, p, u1);
		c.coo.rlo = s->lo;
		c.coo.lo = s->rlo;
		break;
	case K_BSR:
		c.bsr.lo = s->lo;
		break;
	case K_BITMASK:
		c.bitmask.lo = s->lo;
		break;
	case K_NM:
		c.nm.lo = s->lo;
		break;
	default:
		return;
	}
	wc.impl = &c;
	fn(&wc, p, x, y, n, SPP_ISA_PORTABLE);
}

/*
 * The traced kernels' driver: every part in turn on the calling thread,
 * part p on simulated core p mod threads; sampled row blocks when the
 * replay asked for them.
 */
void spp_trace_run_parts(const struct spp_encoded *w, cpu_part_fn fn, const float *x,
			 float *y, int64_t n, const struct spp_exec *ex)
{
	struct sink *s = cur;
	int threads = ex->threads > 0 ? ex->threads : 1;

	if (ex->busy_ns)
		for (int t = 0; t < threads; t++)
			ex->busy_ns[t] = 0;
	for (int p = 0; n > 0 && p < w->nparts; p++) {
		const int64_t *lo;
		int64_t u0, u1;

		if (!s) {
			fn(w, p, x, y, n, SPP_ISA_PORTABLE);
			continue;
		}
		s->core = (p % threads) % s->cores;
		lo = s->kind != K_NONE ? part_lo(s->kind, w->impl) : NULL;
		if (!lo || s->stride <= 1) {
			if (lo)
				s->units_total += lo[p + 1] - lo[p], s->units_sim += lo[p + 1] - lo[p];
			fn(w, p, x, y, n, SPP_ISA_PORTABLE);
			continue;
		}
		u0 = lo[p], u1 = lo[p + 1];
		s->units_total += u1 - u0;
		for (int64_t b = 0; u0 + b * s->block < u1; b++) {
			int64_t b0 = u0 + b * s->block, b1 = b0 + s->block < u1 ? b0 + s->block : u1;

			if (b % s->stride)
				continue;
			s->units_sim += b1 - b0;
			run_block(s, w, fn, p, b0, b1, x, y, n);
		}
	}
}

static void add_region(struct sink *s, const void *p, uint64_t bytes)
{
	if (!p || s->nreg >= MAX_REGIONS)
		return;
	s->reg[s->nreg] = (struct region){(uint64_t)(uintptr_t)p, (uint64_t)(uintptr_t)p + bytes,
					  (uint64_t)(s->nreg + 1) << REGION_SHIFT};
	s->nreg++;
}

/* The encoded buffers of enc, for the canonical mapping. */
static void add_format_regions(struct sink *s, const struct spp_encoded *w)
{
	uint64_t m = (uint64_t)w->m, nnz = (uint64_t)w->nnz;

	switch (s->kind) {
	case K_CSR: {
		const struct cpu_csr *c = w->impl;

		add_region(s, c->ptr, ((uint64_t)c->tiles * m + 1) * 4);
		add_region(s, c->col, nnz * 2);
		add_region(s, c->val, nnz * 4);
		break;
	}
	case K_COO: {
		const struct cpu_coo *c = w->impl;

		add_region(s, c->row, nnz * 4);
		add_region(s, c->col, nnz * 4);
		add_region(s, c->val, nnz * 4);
		break;
	}
	case K_BSR: {
		const struct cpu_bsr *c = w->impl;

		add_region(s, c->ptr, ((uint64_t)c->mb + 1) * 4);
		add_region(s, c->bcol, (uint64_t)c->nzb * 4);
		add_region(s, c->val, (uint64_t)c->nzb * (uint64_t)(c->b * c->b) * 4);
		break;
	}
	case K_BITMASK: {
		const struct cpu_bitmask *c = w->impl;

		add_region(s, c->mask, m * (uint64_t)c->stride);
		add_region(s, c->ptr, (m + 1) * 4);
		add_region(s, c->val, nnz * 4);
		break;
	}
	case K_NM: {
		const struct cpu_nm *c = w->impl;
		uint64_t slots = m * (uint64_t)c->groups * (uint64_t)c->keep;

		add_region(s, c->val, slots * 4);
		add_region(s, c->pos, (slots * (uint64_t)c->bits + 7) / 8 + 8);
		break;
	}
	default:
		break;
	}
}

static void sample_from_sim(struct spp_counter_sample *smp, const struct spp_sim *sim,
			    const struct spp_sim_geometry *g, int threads, double scale)
{
	memset(smp, 0, sizeof(*smp));
	smp->nthreads = threads;
	smp->scaled = 1;
	for (int c = -1; c < threads; c++) {
		double *v = c < 0 ? smp->v : smp->thread[c];
		struct spp_sim_counts k;

		spp_sim_counts(sim, c, &k);
		for (int e = 0; e < SPP_CEV_COUNT; e++)
			v[e] = NAN;
		v[SPP_CEV_L1D_ACCESSES] = (double)k.l1_acc * scale;
		v[SPP_CEV_L1D_MISSES] = (double)k.l1_miss * scale;
		if (g->l2.size) {
			v[SPP_CEV_L2_ACCESSES] = (double)k.l2_acc * scale;
			v[SPP_CEV_L2_MISSES] = (double)k.l2_miss * scale;
		}
		v[SPP_CEV_LLC_ACCESSES] = (double)k.llc_acc * scale;
		v[SPP_CEV_LLC_MISSES] = (double)k.llc_miss * scale;
	}
}

static void figures_from_sim(struct spp_cache_figures *f, const struct spp_sim *sim,
			     const struct spp_sim_geometry *g, int threads, double scale)
{
	struct spp_counter_sample *smp = malloc(sizeof(*smp));

	if (!smp)
		return; /* figures stay unknown */
	sample_from_sim(smp, sim, g, threads, scale);
	spp_cache_figures_from_sample(f, "sim", smp, 1, g->line);
	spp_sim_geometry_format(g, f->geometry, sizeof(f->geometry));
	free(smp);
}

int spp_sim_replay(const struct spp_sim_geometry *g, int threads, uint64_t budget,
		   const struct spp_encoded *enc, const float *x, float *y, int64_t n,
		   struct spp_cache_figures *f, struct spp_error *err)
{
	const struct spp_format_ops *ops = enc->ops ? spp_trace_format_find(enc->ops->key) : NULL;
	struct spp_exec ex = {threads, SPP_ISA_PORTABLE, NULL};
	struct sink s;
	double est, units, scale = 1;
	size_t len;
	int rc;

	spp_cache_figures_init(f);
	memset(&s, 0, sizeof(s));
	if (!ops || (s.kind = kind_of(ops->key)) == K_NONE)
		return spp_error_set(err, SPP_E_UNSUPPORTED, "sim: no traced kernel for '%s'",
				     enc->ops ? enc->ops->key : "?");
	if (threads < 1 || threads > SPP_COUNTERS_MAX_THREADS)
		threads = threads < 1 ? 1 : SPP_COUNTERS_MAX_THREADS;
	ex.threads = threads;
	rc = spp_sim_create(g, threads, &s.sim, err);
	if (rc)
		return rc;
	s.cores = threads;
	s.lo = malloc((size_t)(enc->nparts + 1) * sizeof(*s.lo));
	s.rlo = malloc((size_t)(enc->nparts + 1) * sizeof(*s.rlo));
	if (!s.lo || !s.rlo) {
		rc = spp_error_set(err, SPP_E_NOMEM, "sim: out of memory");
		goto out;
	}
	add_format_regions(&s, enc);
	add_region(&s, x, (uint64_t)enc->k * (uint64_t)n * 4);
	add_region(&s, y, (uint64_t)enc->m * (uint64_t)n * 4);
	/* a planning estimate: each stored value, its index and X / Y slices */
	units = (double)enc->bytes / 4 > (double)enc->nnz ? (double)enc->bytes / 4 : (double)enc->nnz;
	est = units * (2 + 3 * ceil((double)n * 4 / g->line));
	s.block = SAMPLE_BLOCK;
	s.stride = budget == 0 ? (int64_t)ceil(est / (double)SPP_SIM_DEFAULT_BUDGET)
			       : (int64_t)ceil(est / (double)budget);
	if (s.stride < 1)
		s.stride = 1;
	cur = &s;
	ops->spmm(enc, x, y, n, &ex);
	cur = NULL;
	if (s.units_sim > 0 && s.units_total > s.units_sim)
		scale = (double)s.units_total / (double)s.units_sim;
	figures_from_sim(f, s.sim, g, threads, scale);
	f->sampled = s.units_total > 0 ? (double)s.units_sim / (double)s.units_total : 1;
	len = (size_t)snprintf(f->note, sizeof(f->note),
			       "simulated: the portable kernel's accesses replayed, its %d part%s in turn on %d simulated core%s",
			       enc->nparts, enc->nparts == 1 ? "" : "s", threads, threads == 1 ? "" : "s");
	if (scale > 1 && len < sizeof(f->note))
		len += (size_t)snprintf(f->note + len, sizeof(f->note) - len,
					"; %.3g%% of %s blocks simulated, counts scaled",
					100 * f->sampled, s.kind == K_BSR ? "64-block-row" : "64-row");
	if (n == 1 && (s.kind == K_BITMASK || s.kind == K_NM) && len < sizeof(f->note))
		len += (size_t)snprintf(f->note + len, sizeof(f->note) - len,
					"; at N = 1 the vector kernels read X in another order");
	if (s.unmapped && len < sizeof(f->note))
		snprintf(f->note + len, sizeof(f->note) - len,
			 "; %llu accesses outside known buffers (not deterministic)",
			 (unsigned long long)s.unmapped);
out:
	cur = NULL;
	free(s.lo);
	free(s.rlo);
	spp_sim_destroy(s.sim);
	return rc;
}

void spp_sim_trace_attach(struct spp_sim *sim, int core)
{
	static _Thread_local struct sink attached;

	if (!sim) {
		cur = NULL;
		return;
	}
	memset(&attached, 0, sizeof(attached));
	attached.sim = sim;
	attached.core = core;
	attached.cores = spp_sim_cores(sim);
	cur = &attached;
}

/* The backend: a simulator per session that listens between start and stop. */
struct sim_session {
	struct spp_sim *sim;
	struct spp_sim_geometry g;
	int threads;
};

static void sim_probe(struct spp_counter_avail *out)
{
	memset(out, 0, sizeof(*out));
	out->name = "sim";
	out->works = 1;
	out->cache_events = 1;
	out->events = 1u << SPP_CEV_L1D_ACCESSES | 1u << SPP_CEV_L1D_MISSES |
		      1u << SPP_CEV_L2_ACCESSES | 1u << SPP_CEV_L2_MISSES |
		      1u << SPP_CEV_LLC_ACCESSES | 1u << SPP_CEV_LLC_MISSES;
}

static int sim_open(const struct spp_counter_config *cfg, void **session, struct spp_error *err)
{
	struct sim_session *s = calloc(1, sizeof(*s));
	int rc;

	*session = NULL;
	if (!s)
		return spp_error_set(err, SPP_E_NOMEM, "sim: out of memory");
	if (cfg->sim)
		s->g = *(const struct spp_sim_geometry *)cfg->sim;
	else
		spp_sim_geometry_default(&s->g);
	s->threads = cfg->threads > 0 ? cfg->threads : 1;
	rc = spp_sim_create(&s->g, s->threads, &s->sim, err);
	if (rc) {
		free(s);
		return rc;
	}
	*session = s;
	return SPP_OK;
}

static int sim_start(void *session)
{
	struct sim_session *s = session;

	spp_sim_trace_attach(s->sim, 0);
	return SPP_OK;
}

static int sim_stop(void *session)
{
	(void)session;
	spp_sim_trace_attach(NULL, 0);
	return SPP_OK;
}

static int sim_read(void *session, struct spp_counter_sample *out)
{
	struct sim_session *s = session;

	sample_from_sim(out, s->sim, &s->g, s->threads, 1);
	return SPP_OK;
}

static void sim_close(void *session)
{
	struct sim_session *s = session;

	if (!s)
		return;
	if (cur && cur->sim == s->sim)
		cur = NULL;
	spp_sim_destroy(s->sim);
	free(s);
}

static int sim_list_events(void (*fn)(void *ctx, const char *name, const char *desc), void *ctx)
{
	static const char *const names[][2] = {
		{"l1d_accesses", "cache lines touched by the trace points"},
		{"l1d_misses", "L1D misses (per simulated core)"},
		{"l2_accesses", "L1D misses looked up in the L2"},
		{"l2_misses", "L2 misses"},
		{"llc_accesses", "lookups in the shared LLC"},
		{"llc_misses", "LLC misses, one DRAM line fill each"},
	};
	int n = (int)(sizeof(names) / sizeof(names[0]));

	for (int i = 0; fn && i < n; i++)
		fn(ctx, names[i][0], names[i][1]);
	return n;
}

const struct spp_counter_backend spp_counters_sim = {
	.name = "sim",
	.summary = "trace-driven cache simulator (LRU L1D/L2 per thread, shared LLC), deterministic",
	.probe = sim_probe,
	.open = sim_open,
	.start = sim_start,
	.stop = sim_stop,
	.read = sim_read,
	.close = sim_close,
	.list_events = sim_list_events,
};
