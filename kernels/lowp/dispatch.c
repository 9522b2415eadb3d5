/*
 * The lowp paths: what this CPU has of each (cpuid, asked once), what
 * SPPROF_ISA allows (spp_isa_detect, asked on every pick so that a test
 * can change it), and the one dispatch over the tables of lowp_impl.h.
 */
#include <omp.h>
#include <stdatomic.h>

#include "kernels/lowp/lowp_impl.h"

#if LP_X86
#include <cpuid.h>
#endif

static const char *const path_names[SPP_LOWP_NPATHS] = {
	"portable", "avx2", "avx2_vnni", "avx512", "avx512_vnni", "avx512_bf16",
};

/* The kernels' ISA each path needs. */
static const enum spp_isa path_isa[SPP_LOWP_NPATHS] = {
	SPP_ISA_PORTABLE, SPP_ISA_AVX2, SPP_ISA_AVX2,
	SPP_ISA_AVX512, SPP_ISA_AVX512, SPP_ISA_AVX512,
};

static const struct lp_table *const tables[SPP_LOWP_NPATHS] = {
#if LP_X86
	&lp_portable, &lp_avx2, &lp_avx2_vnni, &lp_avx512, &lp_avx512_vnni, &lp_avx512_bf16,
#else
	&lp_portable,
#endif
};

const char *spp_lowp_path_name(enum spp_lowp_path p)
{
	return (unsigned)p < SPP_LOWP_NPATHS ? path_names[p] : "unknown";
}

const char *spp_lowp_format_name(enum spp_lowp_format f)
{
	static const char *const names[] = { "csr", "nm2_4", "nm4_8", "bsr1x4", "bitmask" };

	return (unsigned)f < SPP_LOWP_NFORMATS ? names[f] : NULL;
}

/*
 * Bit p: the CPU has the features of path p beyond its ISA (F16C,
 * AVX-VNNI, AVX512_VNNI, AVX512_BF16).
 */
static unsigned cpu_features(void)
{
	static _Atomic int facts = -1;
	int f = atomic_load_explicit(&facts, memory_order_relaxed);

	if (f >= 0)
		return (unsigned)f;
	f = 1u << SPP_LOWP_PORTABLE;
#if LP_X86
	unsigned a, b, c, d, f16c = 0, vnni512 = 0, avxvnni = 0, bf16 = 0;

	if (__get_cpuid(1, &a, &b, &c, &d))
		f16c = (c >> 29) & 1;
	if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
		vnni512 = (c >> 11) & 1;
		if (a >= 1 && __get_cpuid_count(7, 1, &a, &b, &c, &d)) {
			avxvnni = (a >> 4) & 1;
			bf16 = (a >> 5) & 1;
		}
	}
	if (f16c)
		f |= 1u << SPP_LOWP_AVX2 | 1u << SPP_LOWP_AVX512;
	if (f16c && avxvnni)
		f |= 1u << SPP_LOWP_AVX2_VNNI;
	if (f16c && vnni512)
		f |= 1u << SPP_LOWP_AVX512_VNNI;
	if (f16c && bf16)
		f |= 1u << SPP_LOWP_AVX512_BF16;
#endif
	atomic_store_explicit(&facts, f, memory_order_relaxed);
	return (unsigned)f;
}

int spp_lowp_path_ok(enum spp_lowp_path p)
{
	if ((unsigned)p >= SPP_LOWP_NPATHS || !tables[p])
		return 0;
	return (cpu_features() >> p & 1) && path_isa[p] <= spp_isa_detect();
}

enum spp_lowp_path spp_lowp_pick(enum spp_lowp_format f, enum spp_prec p,
				 enum spp_lowp_path want)
{
	int top = (unsigned)want < SPP_LOWP_NPATHS ? (int)want : SPP_LOWP_NPATHS - 1;

	for (int q = top; q > SPP_LOWP_PORTABLE; q--)
		if (spp_lowp_path_ok((enum spp_lowp_path)q) && tables[q]->k[f][p])
			return (enum spp_lowp_path)q;
	return SPP_LOWP_PORTABLE;
}

/*
 * First row of part p of `parts`, balancing stored entries plus one a row
 * (csr, bsr1x4, bitmask: ptr is their prefix; nm rows all cost the same).
 */
static int64_t part_row(const struct spp_lowp_w *w, int p, int parts)
{
	int64_t lo = 0, hi = w->m, goal;

	if (!w->ptr)
		return w->m * p / parts;
	goal = (int64_t)((double)(w->ptr[w->m] + w->m) * p / parts);
	while (lo < hi) { /* the first row r with ptr[r] + r >= goal */
		int64_t mid = lo + (hi - lo) / 2;

		if (w->ptr[mid] + mid < goal)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int spp_lowp_spmm(const struct spp_lowp_w *w, const struct spp_lowp_x *x, float *y,
		  enum spp_lowp_path want, int threads, enum spp_lowp_path *ran,
		  struct spp_error *err)
{
	enum spp_lowp_path path;
	lp_kern kern;

	if (x->prec != w->prec || x->k != w->k || x->n < 1 || threads < 1)
		return spp_error_set(err, SPP_E_USAGE,
				     "lowp: X is %s %lld x %lld on %d threads, W wants %s with k = %lld",
				     spp_prec_info(x->prec) ? spp_prec_info(x->prec)->name : "?",
				     (long long)x->k, (long long)x->n, threads,
				     spp_prec_info(w->prec) ? spp_prec_info(w->prec)->name : "?",
				     (long long)w->k);
	path = spp_lowp_pick(w->format, w->prec, want);
	if (ran)
		*ran = path;
	kern = tables[path]->k[w->format][w->prec];
	if (threads == 1) {
		kern(w, 0, w->m, x, y);
		return 0;
	}
#pragma omp parallel for num_threads(threads) schedule(static, 1)
	for (int p = 0; p < threads; p++)
		kern(w, part_row(w, p, threads), part_row(w, p + 1, threads), x, y);
	return 0;
}
