#include "profiler/diagnose.h"
#include "base/share.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

__attribute__((format(printf, 2, 3)))
/* Below this sparsity no sparse format is a candidate: the format notes are left out. */
#define SPP_DIAG_SPARSE 0.1

static void say(struct spp_diagnosis *d, const char *fmt, ...)
{
	va_list ap;

	if (d->n >= SPP_DIAG_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(d->line[d->n++], sizeof(d->line[0]), fmt, ap);
	va_end(ap);
}

static int timed(const struct spp_run *r)
{
	return r->status == SPP_RUN_OK && r->time.repeats > 0;
}

static void run_rules(const struct spp_layer_runs *runs, struct spp_diagnosis *d)
{
	for (int i = 0; i < runs->nruns; i++) {
		const struct spp_run *r = &runs->runs[i];

		if (!timed(r))
			continue;
		if (r->bw_util >= SPP_DIAG_MEMORY_BOUND && r->bw_level >= 0) {
			const char *lv = spp_bw_level_name((enum spp_bw_level)r->bw_level);

			/* DRAM-bound, or bound by the cache level that holds the working set */
			say(d, "%s is %s%s: %.1f GB/s is %.0f%% of the calibrated %s read bandwidth "
			       "(%.1f GB/s), the level its working set fits",
			    r->format, r->bw_level == SPP_BW_DRAM ? "DRAM-bound" : lv,
			    r->bw_level == SPP_BW_DRAM ? "" : "-resident and bandwidth-bound",
			    r->bandwidth_gbs, 100 * r->bw_util, lv, r->bandwidth_gbs / r->bw_util);
		}
		if (r->imbalance > SPP_DIAG_IMBALANCE)
			say(d, "%s is imbalanced across threads: the busiest works %.2fx the mean",
			    r->format, r->imbalance);
	}
	if (runs->nruns > 0 && timed(&runs->runs[0]) && runs->runs[0].time.median < SPP_DIAG_SMALL_NS)
		say(d, "layer too small for kernel overhead: dense takes %.1f us, the range of a "
		       "kernel call's fixed costs", runs->runs[0].time.median / 1e3);
}

/* "3x3" for a kernel's shape. */
static void kernel_shape(const struct spp_kernel_counts *kc, char *buf, size_t n)
{
	size_t u = 0;

	buf[0] = '\0';
	for (int i = 0; i < kc->ndims && u < n; i++)
		u += (size_t)snprintf(buf + u, n - u, "%s%d", i ? "x" : "", kc->dims[i]);
}

/* A conv's kernel-level and pattern-based structure, when its class says so. */
static void kernel_rules(const struct spp_layer_static *s, struct spp_diagnosis *d)
{
	const struct spp_kernel_counts *kc = &s->counts.kernel;
	char shape[32], share[64], masks[200], mask[96];
	uint64_t nzk = kc->kernels - kc->zero;
	size_t u = 0;

	if (kc->size == 0)
		return;
	kernel_shape(kc, shape, sizeof(shape));
	if (s->cls == SPP_CLASS_KERNEL)
		say(d, "kernel-level pruning: %s of the %llu %s kernels are all zero, and they hold "
		       "%.3g%% of the zeros (a kernel-sparse conv skips whole (output, input) pairs)",
		    spp_share_text(kc->zero, kc->kernels, share, sizeof(share)),
		    (unsigned long long)kc->kernels, shape, 100 * s->gran[SPP_GRAN_KERNEL].zeros_share);
	if (s->cls != SPP_CLASS_PATTERN)
		return;
	masks[0] = '\0';
	for (int i = 0; i < kc->ntop && i < 4 && u < sizeof(masks); i++)
		u += (size_t)snprintf(masks + u, sizeof(masks) - u, "%s%s %.3g%%", i ? ", " : "",
				      spp_kernel_mask_text(kc, kc->top_mask[i], mask, sizeof(mask)),
				      100.0 * (double)kc->top_count[i] / (double)nzk);
	say(d, "pattern-based pruning: %lld kernel masks in all, the 4 commonest hold %.3g%% of "
	       "the %llu non-zero %s kernels (%s)", (long long)kc->patterns, 100 * s->kernel_cover[0],
	    (unsigned long long)nzk, shape, masks);
}

/* Zero layers and input channels, and a general N:M the formats do not run. */
/*
 * Whole zero rows (output channels) or columns (inputs): the layer shrinks,
 * and what is left may be dense. Handlandmark-sparse's Conv2D_24 had 1,146
 * of 1,152 rows zero and was advised an N:M transpose.
 */
static void shrink_rules(const struct spp_layer_static *s, struct spp_diagnosis *d)
{
	uint64_t m = (uint64_t)s->counts.m, k = (uint64_t)s->counts.k;
	uint64_t r = s->counts.zero_rows, c = s->counts.zero_cols;
	double vb = s->numel > 0 ? s->storage[SPP_ST_DENSE].bytes / (double)s->numel : 0;

	if (s->layer_zero != SPP_LAYER_LIVE || m == 0 || k == 0 || (r == 0 && c == 0) || r >= m || c >= k)
		return;
	{
		uint64_t mm = m - r, kk = k - c, left = mm * kk;
		double kept = (double)s->counts.nnz / (double)left;
		double cut = 1 - (double)left / (double)(m * k);
		char what[128];

		size_t u = 0;

		what[0] = '\0';
		if (r)
			u += (size_t)snprintf(what, sizeof(what), "the %llu zero output row%s",
					      (unsigned long long)r, r == 1 ? "" : "s");
		if (c && u < sizeof(what))
			snprintf(what + u, sizeof(what) - u, "%sthe %llu zero input column%s", r ? " and " : "",
				 (unsigned long long)c, c == 1 ? "" : "s");
		say(d, "remove %s: the layer becomes %llux%llu%s, dense FLOPs and weight bytes -%.1f%% "
		       "(%.3g MFLOP, %.0f bytes), and %s",
		    what, (unsigned long long)mm, (unsigned long long)kk,
		    kept >= 1 - SPP_DIAG_SPARSE ? " and dense" : "", 100 * cut, s->flops_dense * cut / 1e6,
		    vb * (double)(m * k - left),
		    r && c ? "the next layer drops those inputs, the one before those outputs"
		    : r ? "the next layer drops those inputs" : "the layer before drops those outputs");
	}
}

static void structure_rules(const struct spp_layer_static *s, struct spp_diagnosis *d)
{
	const struct spp_granularity *ch = &s->gran[SPP_GRAN_CHANNEL];
	char share[64];
	int any_nm = 0;

	if (s->layer_zero == SPP_LAYER_ZERO)
		say(d, "every weight is zero: the layer adds only its bias, and can be removed");
	else if (s->layer_zero == SPP_LAYER_NEARLY_ZERO)
		say(d, "zero but for %s of the weights: nearly all of the layer is pruned, "
		       "remove it or keep its few values apart",
		    spp_share_text(s->counts.nnz, s->numel, share, sizeof(share)));
	if (ch->defined && ch->zero > 0 && ch->zero < ch->units)
		say(d, "%llu of the %llu input channels are zero in every kernel: the layer feeding "
		       "them can drop those output channels", (unsigned long long)ch->zero,
		    (unsigned long long)ch->units);
	for (int i = 0; i < SPP_NNM; i++)
		any_nm |= s->nm[i] == 1.0;
	for (int w = 0; !any_nm && s->layer_zero == SPP_LAYER_LIVE && w < SPP_NWIDTH; w++) {
		uint32_t n = s->counts.nm_max[SPP_AXIS_K][w];

		if (n * 2 <= (uint32_t)spp_nm_widths[w]) {
			say(d, "%u:%d along K holds for every group (the tightest N of groups of %d), "
			       "though no N:M format here runs it",
			    n, spp_nm_widths[w], spp_nm_widths[w]);
			break;
		}
	}
}

/*
 * A pattern that holds along M (s->nm_m) but not along K was pruned on the
 * other axis: the kernels (and sparse tensor cores) group along K, the
 * reduction axis.
 */
static void static_rules(const struct spp_layer_static *s, struct spp_diagnosis *d)
{
	static const int sizes[] = {4, 8, 16};
	int64_t k = s->counts.k;
	double dense = s->storage[SPP_ST_DENSE].bytes;

	for (int i = 0; i < SPP_NNM; i++) {
		const struct spp_nm *p = &spp_nm_patterns[i];
		uint64_t groups = s->counts.nm_groups[i], bad = groups - s->counts.nm_ok[i];
		char share[64];

		spp_share_text(bad, groups, share, sizeof(share));
		/* whole zero rows make every group of rows comply: that is a shrink, not a transpose */
		if (s->gran[SPP_GRAN_ROW].defined && s->gran[SPP_GRAN_ROW].zeros_share >= 0.5)
			continue;
		if (s->nm[i] < 1.0 && s->nm_m[i] == 1.0)
			say(d, "%d:%d along the wrong axis: every group of %d rows in a column complies, "
			       "but %s of groups of %d along K hold more than %d non-zero%s, and the "
			       "kernels group along K (prune along K, or transpose W)",
			    p->n, p->m, p->m, share, p->m, p->n, p->n == 1 ? "" : "s");
		/* only where the layer has enough zeros for the pattern to be possible */
		else if (s->nm[i] < 1.0 && s->sparsity >= 1.0 - (double)p->n / p->m)
			say(d, "%d:%d not applicable: %s of groups of %d hold more than %d non-zero%s",
			    p->n, p->m, share, p->m, p->n, p->n == 1 ? "" : "s");
	}
	kernel_rules(s, d);
	structure_rules(s, d);
	shrink_rules(s, d);
	/*
	 * the padding and index notes only where a sparse format is a candidate:
	 * on a dense face model they were 64 of 115 note lines, one pair a layer
	 */
	if (!(s->sparsity >= SPP_DIAG_SPARSE))
		return;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (k % sizes[i] != 0) {
			say(d, "K = %lld is not a multiple of %d: the last group or block of each "
			       "row is zero-padded", (long long)k, sizes[i]);
			break; /* not a multiple of 4 is not one of 8 or 16 either */
		}
	if (s->numel > 0 && dense > 0 && s->storage[SPP_ST_CSR].applicable) {
		double vb = dense / (double)s->numel;
		double saved = vb * (double)(s->numel - s->counts.nnz);
		double index = s->storage[SPP_ST_CSR].bytes - vb * (double)s->counts.nnz;

		if (index > saved)
			say(d, "csr index metadata (%.0f bytes) is larger than the values it saves "
			       "(%.0f bytes)", index, saved);
	}
}

void spp_diagnose_layer(const struct spp_layer_static *s, const struct spp_layer_runs *runs,
			struct spp_diagnosis *out)
{
	memset(out, 0, sizeof(*out));
	if (s->unsupported)
		return;
	if (runs)
		run_rules(runs, out);
	static_rules(s, out);
}
