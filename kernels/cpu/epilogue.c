/*
 * The epilogue's names, and the epilogue as a pass of its own over Y: the
 * portable kernels' per-part fusion, the unfused comparison (kernel, then
 * this pass) and the reference the fused kernels are checked against.
 */
#include <string.h>

#include "kernels/cpu/cpu.h"

#if CPU_X86
#include <immintrin.h>
#endif

static const char *const names[SPP_EPILOGUE_COUNT] = {"none", "bias", "bias_relu"};

const char *spp_epilogue_name(enum spp_epilogue e)
{
	return (unsigned)e < SPP_EPILOGUE_COUNT ? names[e] : NULL;
}

int spp_epilogue_parse(const char *name)
{
	for (int i = 0; name && i < SPP_EPILOGUE_COUNT; i++)
		if (strcmp(names[i], name) == 0)
			return i;
	return -1;
}

void cpu_epi_rows(const struct spp_epi *e, float *y, int64_t r0, int64_t r1, int64_t n)
{
	if (!e || e->kind == SPP_EPILOGUE_NONE)
		return;
	for (int64_t i = r0; i < r1; i++) {
		float b = e->bias[i], *yr = y + i * n;

		if (e->kind == SPP_EPILOGUE_BIAS_RELU)
			for (int64_t j = 0; j < n; j++)
				yr[j] = yr[j] + b > 0 ? yr[j] + b : 0.0f;
		else
			for (int64_t j = 0; j < n; j++)
				yr[j] += b;
	}
}

#if CPU_X86
/* The pass with AVX2 (-O2 does not vectorise the loop above): a fair unfused time. */
CPU_AVX2 static void epi_row_avx2(const struct spp_epi *e, float *yr, float b, int64_t n)
{
	__m256 vb = _mm256_set1_ps(b), z = _mm256_setzero_ps();
	int relu = e->kind == SPP_EPILOGUE_BIAS_RELU;
	int64_t j = 0;

	for (; j + 8 <= n; j += 8) {
		__m256 v = _mm256_add_ps(_mm256_loadu_ps(yr + j), vb);

		_mm256_storeu_ps(yr + j, relu ? _mm256_max_ps(v, z) : v);
	}
	for (; j < n; j++)
		yr[j] = relu ? (yr[j] + b > 0 ? yr[j] + b : 0.0f) : yr[j] + b;
}
#endif

void spp_epilogue_apply(const struct spp_epi *e, float *y, int64_t m, int64_t n, int threads,
			enum spp_isa isa)
{
	/* the caller's ISA, not a cpuid per call: the unfused item runs this every timed run */
	int vec = CPU_X86 && isa >= SPP_ISA_AVX2;

	if (!e || e->kind == SPP_EPILOGUE_NONE || m <= 0 || n <= 0)
		return;
#pragma omp parallel for num_threads(threads > 0 ? threads : 1) schedule(static)
	for (int64_t i = 0; i < m; i++) {
#if CPU_X86
		if (vec) {
			epi_row_avx2(e, y + i * n, e->bias[i], n);
			continue;
		}
#endif
		cpu_epi_rows(e, y, i, i + 1, n);
	}
}
