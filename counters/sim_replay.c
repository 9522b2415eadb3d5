/*
 * Replay of the traced kernels through the cache model (counters/sim.h);
 * the `sim` counter backend over it is sim_backend.c.
 *
 * The traced copies of kernels/cpu/<format>.c (kernels/trace.h) call
 * spp_trace_access() at every trace point and spp_trace_spmm() in
 * place of the OpenMP driver. Neither carries a context through the
 * kernels' signatures, so the simulator listening to the calling thread is
 * a thread-local pointer, set only for the length of a replay (or between
 * the backend's start and stop): the one piece of mutable state here, and
 * it never crosses threads. No format is known here: each entry's replay
 * hooks (spp_format_ops.trace) name its partition and its buffers.
 */
#include "counters/sim.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/kernels.h"
#include "kernels/trace.h"

/* Rows per sampled block, and of a pilot replay (counters/sim.h), in whole row units (bsr's block rows). */
#define SAMPLE_ROWS 8
#define PILOT_ROWS 16
/* The rows before a sampled block of a K tile replayed to warm it, in blocks. */
#define WARM_WINDOW 3
#define MAX_REGIONS 8
/* Each registered buffer starts on its own boundary of the canonical space. */
#define REGION_SHIFT 36

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
	/*
	 * sampling (counters/sim.h): every stride-th block of `block` row units
	 * over the parts (of each K tile of a tiled encoding: units are then
	 * columns x rows), or every tile_stride-th whole K tile (units are
	 * columns); units_total / units_sim scales the counts
	 */
	const struct spp_trace_ops *trace;  /* NULL: no sampling */
	int64_t block, stride, tile_stride, tiles, units_total, units_sim;
	int warm;               /* a sample's warming passes leave the caches as the timed runs found them */
	/*
	 * Y's rows stay in the L2 (its LRU) from one K tile's pass to the next:
	 * a pass's lines (its share of W, its X rows, Y) are fewer than the L2's
	 */
	int y_kept;
	int64_t pilot;          /* > 0: run only the first `pilot` row units of the first part */
	int64_t block_no;       /* row blocks met so far, over the parts (and tiles) */
	double est;             /* line accesses of one whole replay (the pilot's estimate) */
	int64_t *lo, *rlo;      /* scratch partitions (nparts + 1) */
	void *impl;             /* scratch copy of the encoding's impl struct */
};

static _Thread_local struct sink *cur;

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

void spp_trace_masked(const void *p, size_t esize, uint64_t lanes, int store)
{
	const char *b = p;
	uint64_t line = UINT64_MAX;

	if (!cur)
		return;
	for (; lanes; lanes &= lanes - 1) {
		const char *a = b + (size_t)__builtin_ctzll(lanes) * esize;

		/* one access per distinct 64-byte line (the element's lines) */
		if ((uint64_t)(uintptr_t)a / 64 != line ||
		    (uint64_t)((uintptr_t)a + esize - 1) / 64 != line) {
			spp_trace_access(a, esize, store);
			line = (uint64_t)((uintptr_t)a + esize - 1) / 64;
		}
	}
}

void spp_trace_gather(const void *base, const int32_t *idx, int n, uint64_t lanes, size_t esize)
{
	if (!cur)
		return;
	for (int l = 0; l < n; l++)
		if (lanes >> l & 1)
			spp_trace_access((const char *)base + (int64_t)idx[l] * (int64_t)esize, esize, 0);
}

/* The traced copy of every CPU format (counters/meson.build), in registry order. */
#define TRACED_DECLARE(id, key) extern const struct spp_format_ops spp_trace_##key;
SPP_CPU_FORMAT_LIST(TRACED_DECLARE)
#undef TRACED_DECLARE

static const struct spp_format_ops *const traced[] = {
#define TRACED_ENTRY(id, key) &spp_trace_##key,
	SPP_CPU_FORMAT_LIST(TRACED_ENTRY)
#undef TRACED_ENTRY
	NULL,
};

const struct spp_format_ops *spp_trace_format_find(const char *key)
{
	for (int i = 0; key && traced[i]; i++)
		if (strcmp(traced[i]->key, key) == 0)
			return traced[i];
	return NULL;
}

/*
 * Run part p on a view of w: K tile t alone (trace->tile_view; t < 0: every
 * tile) and row units [u0, u1) only (trace->narrow; u0 < 0: all the
 * part's), in a copy of the encoding's impl struct; fn NULL: only check
 * the view. Returns the columns the view covers, or -1 when tile t cannot
 * stand alone.
 */
static int64_t run_view(struct sink *s, const struct spp_encoded *w, spp_part_fn fn, int p,
			int64_t t, int64_t u0, int64_t u1, const float *x, float *y, int64_t n,
			const struct spp_epi *e)
{
	struct spp_encoded wc = *w;
	int64_t *const scratch[2] = {s->lo, s->rlo};
	int64_t k0 = 0, kw = w->k;

	memcpy(s->impl, w->impl, s->trace->impl_size);
	if (t >= 0 && s->trace->tile_view(w, s->impl, t, &k0, &kw))
		return -1;
	if (u0 >= 0)
		s->trace->narrow(w, s->impl, p, u0, u1, scratch);
	wc.impl = s->impl;
	wc.k = kw;
	if (fn)
		fn(&wc, p, x + k0 * n, y, n, e);
	return kw;
}

/* The sampled tiles: every tile_stride-th, from the middle of the first stride. */
static int tile_sampled(const struct sink *s, int64_t t)
{
	return t % s->tile_stride == (s->tile_stride - 1) / 2;
}

/*
 * The traced kernels' driver: every part in turn on the calling thread,
 * part p on simulated core p mod threads; sampled row blocks or K tiles
 * when the replay asked for them.
 */
int spp_trace_spmm(const struct spp_encoded *w, const float *x, float *y, int64_t n,
		   const struct spp_exec *ex)
{
	struct sink *s = cur;
	int threads = ex->threads > 0 ? ex->threads : 1;
	/* the traced copy's implementations, whichever copy encoded w (they share its layout) */
	const struct spp_format_ops *traced_ops = spp_trace_format_find(w->ops->key);
	spp_part_fn fn = spp_format_part(traced_ops ? traced_ops : w->ops, ex->isa);
	const struct spp_epi *e = &ex->epi;

	if (ex->busy_ns)
		for (int t = 0; t < threads; t++)
			ex->busy_ns[t] = 0;
	for (int p = 0; n > 0 && p < w->nparts; p++) {
		const int64_t *lo = s && s->trace ? s->trace->part_lo(w) : NULL;
		int64_t u0 = lo ? lo[p] : 0, u1 = lo ? lo[p + 1] : 0;

		if (s)
			s->core = (p % threads) % s->cores;
		if (!lo) {
			fn(w, p, x, y, n, e);
			continue;
		}
		if (s->pilot > 0) {
			if (u1 <= u0)
				continue;
			u1 = u0 + s->pilot < u1 ? u0 + s->pilot : u1;
			s->units_sim += u1 - u0;
			run_view(s, w, fn, p, -1, u0, u1, x, y, n, e);
			return 0;
		}
		if (s->tile_stride > 1) {
			/* whole K tiles, each after its warming passes (counters/sim.h), in columns */
			for (int64_t t = 0; t < s->tiles; t++) {
				int64_t kw = run_view(s, w, NULL, p, t, -1, 0, x, y, n, e);

				s->units_total += kw;
				if (!tile_sampled(s, t))
					continue;
				spp_sim_counting(s->sim, 0);
				if (s->warm) {
					spp_sim_llc_only(s->sim, 1);
					run_view(s, w, fn, p, t, -1, 0, x, y, n, e);
					spp_sim_llc_only(s->sim, 0);
				}
				if (s->warm || t > 0)
					run_view(s, w, fn, p, (t + s->tiles - 1) % s->tiles, -1, 0, x, y, n, e);
				spp_sim_counting(s->sim, 1);
				s->units_sim += run_view(s, w, fn, p, t, -1, 0, x, y, n, e);
			}
			continue;
		}
		if (s->stride <= 1) {
			s->units_total += u1 - u0, s->units_sim += u1 - u0;
			fn(w, p, x, y, n, e);
			continue;
		}
		/* row blocks (in each K tile of a tiled encoding), every stride-th over the parts */
		for (int64_t t = s->tiles > 1 ? 0 : -1; t < s->tiles; t++) {
			int64_t kw = s->tiles > 1 ? run_view(s, w, NULL, p, t, -1, 0, x, y, n, e) : 1;

			s->units_total += kw * (u1 - u0);
			for (int64_t b0 = u0; b0 < u1; b0 += s->block) {
				int64_t b1 = b0 + s->block < u1 ? b0 + s->block : u1;
				int64_t w0 = b0 - WARM_WINDOW * s->block > u0 ? b0 - WARM_WINDOW * s->block : u0;

				/* from the middle of the first stride, so that every sampled block has its window */
				if (s->block_no++ % s->stride != (s->stride - 1) / 2)
					continue;
				/* warming passes, uncounted (counters/sim.h) */
				spp_sim_counting(s->sim, 0);
				if (s->warm) {
					spp_sim_llc_only(s->sim, 1);
					run_view(s, w, fn, p, t, b0, b1, x, y, n, e);
					spp_sim_llc_only(s->sim, 0);
				}
				/*
				 * the block's Y as the tile before left it: in the L2 where a
				 * tile's pass fits there, else only in the LLC
				 */
				if (t >= 0 && (t > 0 || s->warm)) {
					spp_sim_llc_only(s->sim, !s->y_kept);
					run_view(s, w, fn, p, (t + s->tiles - 1) % s->tiles, b0, b1, x, y, n, e);
					spp_sim_llc_only(s->sim, 0);
				}
				if (w0 < b0)
					run_view(s, w, fn, p, t, w0, b0, x, y, n, e);
				spp_sim_counting(s->sim, 1);
				s->units_sim += kw * (b1 - b0);
				run_view(s, w, fn, p, t, b0, b1, x, y, n, e);
			}
			if (t < 0)
				break;
		}
	}
	return 0;
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
	struct spp_trace_buffer b[SPP_TRACE_MAX_BUFFERS];
	int nb = s->trace->buffers(w, b);

	for (int i = 0; i < nb && i < SPP_TRACE_MAX_BUFFERS; i++)
		add_region(s, b[i].p, b[i].bytes);
}

static void figures_from_sim(struct spp_cache_figures *f, const struct spp_sim *sim,
			     const struct spp_sim_geometry *g, int threads, double scale,
			     const struct spp_sim_counts *base)
{
	struct spp_counter_sample *smp = malloc(sizeof(*smp));

	if (!smp)
		return; /* figures stay unknown */
	spp_sim_sample(smp, sim, g, threads, scale, base);
	spp_cache_figures_from_sample(f, "sim", smp, 1, g->line);
	spp_sim_geometry_format(g, f->geometry, sizeof(f->geometry));
	free(smp);
}

/*
 * The last replay's simulator, kept for the next one of the same geometry
 * and cores, which resets it: a fresh one's tags (8 MiB for a 64 MiB LLC)
 * cost 10-15 ms to map and zero in this VM, more than the replay of a
 * small layer. Taken and given back by atomic exchange, so concurrent
 * replays each get their own.
 */
static _Atomic(struct spp_sim *) kept;

static int sim_take(const struct spp_sim_geometry *g, int cores, struct spp_sim **out,
		    struct spp_error *err)
{
	struct spp_sim *s = atomic_exchange(&kept, NULL);

	if (s && spp_sim_same(s, g, cores)) {
		spp_sim_reset(s);
		*out = s;
		return SPP_OK;
	}
	spp_sim_destroy(s);
	return spp_sim_create(g, cores, out, err);
}

static void sim_keep(struct spp_sim *s)
{
	spp_sim_destroy(atomic_exchange(&kept, s));
}

/*
 * Passes over each sampled unit (counters/sim.h): whole tiles, three warm (two
 * cold); row blocks, the window before the block, warm the block itself
 * (LLC only), and in a tiled encoding the block in the tile before.
 */
static int replay_passes(int tiles_whole, int64_t tiles, int warm)
{
	if (tiles > 1 && tiles_whole)
		return warm ? 3 : 2;
	return 1 + WARM_WINDOW + warm + (tiles > 1);
}

/*
 * The line accesses of one whole replay of enc, from a pilot replay of the
 * first 2 sampling blocks of its first non-empty part, scaled to all
 * of its row units; s's simulator is reset afterwards. ops: enc's traced
 * copy. 0 when the pilot ran nothing.
 */
static double replay_estimate(struct sink *s, const struct spp_format_ops *ops,
			      const struct spp_encoded *enc, const float *x, float *y, int64_t n,
			      const struct spp_exec *ex)
{
	const int64_t *lo = s->trace->part_lo(enc);
	double acc;

	s->pilot = PILOT_ROWS / SAMPLE_ROWS * s->block;
	s->units_sim = 0;
	cur = s;
	ops->spmm(enc, x, y, n, ex);
	cur = NULL;
	s->pilot = 0;
	acc = (double)spp_sim_total_accesses(s->sim);
	spp_sim_reset(s->sim);
	if (s->units_sim <= 0)
		return 0;
	acc = acc / (double)s->units_sim * (double)(lo[enc->nparts] - lo[0]);
	s->units_sim = 0;
	s->unmapped = 0;
	return acc;
}

/* f->note: how the replay ran (ISA, warm or cold, parts and cores) and what was sampled. */
static void replay_note(struct spp_cache_figures *f, const struct sink *s, int nparts,
			enum spp_isa isa, int warm, int threads, double scale)
{
	size_t len;

	len = (size_t)snprintf(f->note, sizeof(f->note),
			       "simulated: the %s kernel's accesses replayed %s, its %d part%s in "
			       "turn on %d simulated core%s", spp_isa_name(isa), warm ? "warm (the second of two "
			       "replays counted)" : "cold (W from DRAM, X and Y read back first)", nparts,
			       nparts == 1 ? "" : "s", threads, threads == 1 ? "" : "s");
	if (scale > 1 && s->tile_stride > 1 && len < sizeof(f->note))
		len += (size_t)snprintf(f->note + len, sizeof(f->note) - len,
					"; 1 in %lld of its %lld K tiles simulated (%.3g%% of the columns), "
					"counts scaled", (long long)s->tile_stride, (long long)s->tiles,
					100 * f->sampled);
	else if (scale > 1 && s->tiles > 1 && len < sizeof(f->note))
		len += (size_t)snprintf(f->note + len, sizeof(f->note) - len,
					"; 1 in %lld blocks of %d %ss of each of its %lld K tiles simulated "
					"(%.3g%%), each after the %d blocks before it, counts scaled",
					(long long)s->stride, (int)s->block, s->trace->unit, (long long)s->tiles,
					100 * f->sampled, WARM_WINDOW);
	else if (scale > 1 && len < sizeof(f->note))
		len += (size_t)snprintf(f->note + len, sizeof(f->note) - len,
					"; 1 in %lld blocks of %d %ss simulated (%.3g%%), each after the %d "
					"blocks before it, counts scaled", (long long)s->stride, (int)s->block,
					s->trace->unit, 100 * f->sampled, WARM_WINDOW);
	if (s->unmapped && len < sizeof(f->note))
		snprintf(f->note + len, sizeof(f->note) - len,
			 "; %llu accesses outside known buffers (not deterministic)",
			 (unsigned long long)s->unmapped);
}

/*
 * A cold run's X and Y as the harness leaves them (profiler/run.c): read
 * back by the caller after the eviction, so in core 0's caches and the LLC
 * as far as they fit; uncounted.
 */
static void touch_xy(struct sink *s, const float *x, const float *y, uint64_t xbytes, uint64_t ybytes)
{
	const unsigned char *b[2] = {(const unsigned char *)x, (const unsigned char *)y};
	uint64_t n[2] = {xbytes, ybytes};

	cur = s;
	s->core = 0;
	spp_sim_counting(s->sim, 0);
	for (int i = 0; i < 2; i++)
		for (uint64_t o = 0; o < n[i]; o += 64)
			spp_trace_access(b[i] + o, n[i] - o < 64 ? n[i] - o : 64, 0);
	spp_sim_counting(s->sim, 1);
	cur = NULL;
}

/* The row blocks the sampled replay walks: each part's units in blocks of s->block, in each K tile. */
static int64_t row_blocks(const struct sink *s, const struct spp_encoded *enc)
{
	const int64_t *lo = s->trace->part_lo(enc);
	int64_t blocks = 0;

	for (int p = 0; p < enc->nparts; p++)
		blocks += (lo[p + 1] - lo[p] + s->block - 1) / s->block;
	blocks *= s->tiles > 1 ? s->tiles : 1;
	return blocks > 1 ? blocks : 1;
}

int spp_sim_replay_stride(const struct spp_sim_geometry *g, int threads, uint64_t budget, int warm,
			  enum spp_isa isa, const struct spp_encoded *enc, const float *x, float *y,
			  int64_t n, int64_t stride, struct spp_cache_figures *f, struct spp_error *err)
{
	struct spp_sim_counts base[SPP_COUNTERS_MAX_THREADS + 1];
	const struct spp_format_ops *ops = enc->ops ? spp_trace_format_find(enc->ops->key) : NULL;
	/* the ISA the timed runs used, where this CPU has it (a report replayed elsewhere) */
	struct spp_exec ex = {.threads = threads, .isa = isa <= spp_isa_detect() ? isa : spp_isa_detect()};
	struct sink s;
	double scale = 1;
	int64_t want;           /* the stride the budget asks for */
	int64_t units, rows_per_unit;
	int rc;

	spp_cache_figures_init(f);
	memset(&s, 0, sizeof(s));
	if (!ops || !(s.trace = ops->trace))
		return spp_error_set(err, SPP_E_UNSUPPORTED, "sim: no traced kernel for '%s'",
				     enc->ops ? enc->ops->key : "?");
	if (threads < 1 || threads > SPP_COUNTERS_MAX_THREADS)
		threads = threads < 1 ? 1 : SPP_COUNTERS_MAX_THREADS;
	ex.threads = threads;
	rc = sim_take(g, threads, &s.sim, err);
	if (rc)
		return rc;
	s.cores = threads;
	s.lo = malloc((size_t)(enc->nparts + 1) * sizeof(*s.lo));
	s.rlo = malloc((size_t)(enc->nparts + 1) * sizeof(*s.rlo));
	s.impl = malloc(s.trace->impl_size);
	if (!s.lo || !s.rlo || !s.impl) {
		rc = spp_error_set(err, SPP_E_NOMEM, "sim: out of memory");
		goto out;
	}
	add_format_regions(&s, enc);
	add_region(&s, x, (uint64_t)enc->k * (uint64_t)n * 4);
	add_region(&s, y, (uint64_t)enc->m * (uint64_t)n * 4);
	/* whole row units of about SAMPLE_ROWS and PILOT_ROWS rows */
	units = s.trace->part_lo(enc)[enc->nparts] - s.trace->part_lo(enc)[0];
	rows_per_unit = units > 0 ? (enc->m + units - 1) / units : 1;
	s.block = SAMPLE_ROWS / rows_per_unit > 1 ? SAMPLE_ROWS / rows_per_unit : 1;
	s.tiles = s.trace->tiles ? s.trace->tiles(enc) : 1;
	s.est = replay_estimate(&s, ops, enc, x, y, n, &ex);
	if (budget == 0)
		budget = SPP_SIM_DEFAULT_BUDGET;
	/* whole K tiles where one in `want` is enough, else row blocks (of each tile) */
	want = stride > 0 ? stride : (int64_t)ceil(s.est * replay_passes(1, s.tiles, warm) / (double)budget);
	s.stride = s.tile_stride = 1;
	{
		const struct spp_sim_level *l2 = g->l2.size ? &g->l2 : &g->llc;
		double pass = ((double)enc->bytes / (double)s.tiles +
			       (double)enc->k / (double)s.tiles * (double)n * 4 + (double)enc->m * (double)n * 4) /
			      (double)threads;

		s.y_kept = pass < (double)l2->size;
	}
	for (int64_t t = 0; want > 1 && s.tiles > 1 && t < s.tiles; t++)
		if (run_view(&s, enc, NULL, 0, t, -1, 0, x, y, n, NULL) < 0)
			want = 1; /* a tile that cannot stand alone: replayed whole */
	if (want > 1 && s.tiles > 1 && want <= s.tiles) {
		s.tile_stride = want;
	} else if (want > 1) {
		if (stride == 0)
			want = (int64_t)ceil(s.est * replay_passes(0, s.tiles, warm) / (double)budget);
		/* at most one stride over all the row blocks: one block is sampled at least, never none */
		s.stride = want < row_blocks(&s, enc) ? want : row_blocks(&s, enc);
	}
	s.warm = warm;
	/* whole: the first replay fills the caches as the timed runs found them */
	if (warm && s.tile_stride == 1 && s.stride == 1) {
		cur = &s;
		ops->spmm(enc, x, y, n, &ex);
		cur = NULL;
		for (int c = -1; c < threads; c++)
			spp_sim_counts(s.sim, c, &base[c + 1]);
		s.units_sim = s.units_total = s.block_no = 0;
		s.unmapped = 0;
	}
	/* cold: W starts in DRAM, X and Y where the harness reads them back (core 0, the LLC) */
	if (!warm)
		touch_xy(&s, x, y, (uint64_t)enc->k * (uint64_t)n * 4, (uint64_t)enc->m * (uint64_t)n * 4);
	cur = &s;
	ops->spmm(enc, x, y, n, &ex);
	cur = NULL;
	if (s.units_sim > 0 && s.units_total > s.units_sim)
		scale = (double)s.units_total / (double)s.units_sim;
	figures_from_sim(f, s.sim, g, threads, scale, warm && s.tile_stride == 1 && s.stride == 1 ? base : NULL);
	f->sampled = s.units_total > 0 ? (double)s.units_sim / (double)s.units_total : 1;
	replay_note(f, &s, enc->nparts, ex.isa, warm, threads, scale);
out:
	cur = NULL;
	free(s.lo);
	free(s.rlo);
	free(s.impl);
	sim_keep(s.sim);
	return rc;
}


int spp_sim_replay(const struct spp_sim_geometry *g, int threads, uint64_t budget, int warm,
		   enum spp_isa isa, const struct spp_encoded *enc, const float *x, float *y, int64_t n,
		   struct spp_cache_figures *f, struct spp_error *err)
{
	return spp_sim_replay_stride(g, threads, budget, warm, isa, enc, x, y, n, 0, f, err);
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

void spp_sim_trace_detach(const struct spp_sim *sim)
{
	if (cur && cur->sim == sim)
		cur = NULL;
}
