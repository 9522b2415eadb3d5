/*
 * What every CPU format shares: the non-zero-balanced partition, the
 * K-tile width, and the OpenMP driver that runs the parts and records
 * per-thread busy time.
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/buffer.h"
#include "kernels/cpu/cpu.h"

void cpu_partition(const int64_t *cum, int64_t units, int parts, int64_t *lo)
{
	int64_t total = cum[units];

	lo[0] = 0;
	for (int p = 1; p < parts; p++) {
		/* first unit whose cumulative cost reaches p/parts of the total */
		int64_t target = (int64_t)((double)total * p / parts);
		int64_t a = lo[p - 1], b = units;

		while (a < b) {
			int64_t mid = a + (b - a) / 2;

			if (cum[mid] < target)
				a = mid + 1;
			else
				b = mid;
		}
		lo[p] = a;
	}
	lo[parts] = units;
}

double cpu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int64_t cpu_tile_width(int64_t k, double density, int64_t n)
{
	/*
	 * 128 X rows of a 64-column chunk are 32 KiB, which leaves room in a
	 * 48 KiB L1 for the streamed W and the Y row (measured at 30 %
	 * sparsity, N = 64: 96 to 192 columns within 3 %, 256 a third slower).
	 * Sparser matrices get wider tiles so that a (row, tile) segment keeps
	 * about 64 non-zeros: with fewer, the Y row load and store per segment
	 * cost more than L1 saves (measured at 90 % and 95 %, N = 64, on a Zen 3
	 * with AVX2: 64 within 2 % of the best of 16, 32, 64, 128 and untiled;
	 * 16 was 7 to 17 % slower, untiled 5 to 17 %). Where the AVX-512
	 * kernels run, 32 (measured on an EPYC Zen 5, 4096 x 4096, 1 thread,
	 * N = 64, 2 rounds: csr at 90 % 4.42x/4.43x the dense baseline against
	 * 4.02x/3.81x at 64; 24 and 48 between; at 80 % and 95 % within 3 %).
	 */
	int64_t w = 128;
	double seg = spp_isa_detect() >= SPP_ISA_AVX512 ? 32.0 : 64.0;

	/*
	 * N = 1: one segment per row. Measured on the EPYC Zen 5 (AVX-512,
	 * 4096 x 4096, 1 thread): nm2_4 on 2:4 went from 0.91-1.10x to
	 * 1.67-1.75x the dense GEMV untiled, csr at 90 % from 2.37x to 2.80x.
	 */
	if (n == 1)
		return k > 0 ? k : 1;
	if (density > 0 && seg / density > (double)w)
		w = (int64_t)(seg / density);
	w = (w + 15) / 16 * 16;
	return w >= k ? (k > 0 ? k : 1) : w;
}

int64_t *cpu_row_cum(const struct spp_matrix *w)
{
	int64_t m = w->m, k = w->k;
	int64_t *cum = malloc((size_t)(m + 1) * sizeof(*cum));

	if (!cum)
		return NULL;
	cum[0] = 0;
	for (int64_t i = 0; i < m; i++) {
		int64_t n = 0;

		for (int64_t j = 0; j < k; j++)
			n += w->v[i * k + j] != 0.0f;
		cum[i + 1] = cum[i] + n;
	}
	return cum;
}

int64_t cpu_x_rows(const struct spp_matrix *w, int64_t block)
{
	int64_t m = w->m, k = w->k, rows = 0;
	unsigned char *nz = calloc((size_t)(k > 0 ? k : 1), 1);

	if (!nz)
		return 0;
	for (int64_t i = 0; i < m; i++)
		for (int64_t j = 0; j < k; j++)
			nz[j] |= w->v[i * k + j] != 0.0f;
	for (int64_t j0 = 0; j0 < k; j0 += block) {
		int64_t j1 = j0 + block < k ? j0 + block : k, any = 0;

		for (int64_t j = j0; j < j1; j++)
			any |= nz[j];
		rows += any ? j1 - j0 : 0;
	}
	free(nz);
	return rows;
}

int cpu_set_parts(struct spp_encoded *out, int threads, const int64_t *lo,
		  const int64_t *nnz_cum, struct spp_error *err)
{
	out->part_nnz = calloc((size_t)threads, sizeof(*out->part_nnz));
	if (!out->part_nnz)
		return spp_error_set(err, SPP_E_NOMEM, "cannot allocate the partition of %d parts", threads);
	out->nparts = threads;
	for (int p = 0; p < threads; p++)
		out->part_nnz[p] = nnz_cum[lo[p + 1]] - nnz_cum[lo[p]];
	return 0;
}

void cpu_release_common(struct spp_encoded *e)
{
	free(e->part_nnz);
	free(e->impl);
	memset(e, 0, sizeof(*e));
}

spp_part_fn spp_format_part(const struct spp_format_ops *f, enum spp_isa isa)
{
	for (int i = isa < SPP_ISA_COUNT ? (int)isa : SPP_ISA_COUNT - 1; i >= 0; i--)
		if (f->part[i])
			return f->part[i];
	return NULL;
}

int cpu_spmm(const struct spp_encoded *w, const float *x, float *y, int64_t n,
	     const struct spp_exec *ex)
{
	int threads = ex->threads > 0 ? ex->threads : 1;
	spp_part_fn fn = spp_format_part(w->ops, ex->isa);

	if (ex->busy_ns)
		for (int t = 0; t < threads; t++)
			ex->busy_ns[t] = 0;

#pragma omp parallel num_threads(threads)
	{
		int t = omp_get_thread_num(), nt = omp_get_num_threads();
		double t0 = ex->busy_ns ? cpu_now_ns() : 0;

		/* a runtime that grants fewer threads still runs every part */
		for (int p = t; n > 0 && p < w->nparts; p += nt)
			fn(w, p, x, y, n, &ex->epi);
		if (ex->busy_ns && t < threads)
			ex->busy_ns[t] = cpu_now_ns() - t0;
	}
	return 0;
}

int64_t *cpu_narrow_lo(const int64_t *lo, int nparts, int p, int64_t u0, int64_t u1,
		       int64_t *scratch)
{
	memcpy(scratch, lo, (size_t)(nparts + 1) * sizeof(*scratch));
	scratch[p] = u0;
	scratch[p + 1] = u1;
	return scratch;
}
