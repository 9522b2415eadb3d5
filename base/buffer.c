#include "base/buffer.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define HUGE ((size_t)2 << 20)

void *spp_buffer_alloc(size_t bytes)
{
	/*
	 * Large buffers on 2 MiB boundaries with a transparent-huge-page hint:
	 * the kernels touch W's pages in a stream and X's rows at random, and
	 * page walks (costly under virtualisation) were measured to cost up to
	 * a third of the time with 4 KiB pages. From 256 KiB: X and Y of
	 * 4096 x 64 (1 MiB each) on huge pages made csr and nm2_4 at N = 64
	 * 3-5 % faster and oneDNN's dense GEMM 3 % (EPYC Zen 5, 3 rounds).
	 */
	size_t align = bytes >= HUGE / 8 ? HUGE : 64, size;
	void *p = NULL;

	if (bytes > SIZE_MAX - SPP_BUFFER_PAD - HUGE)
		return NULL;
	size = bytes + SPP_BUFFER_PAD;
	if (align == HUGE)
		size = (size + HUGE - 1) / HUGE * HUGE;
	if (posix_memalign(&p, align, size) != 0)
		return NULL;
#ifdef MADV_HUGEPAGE
	if (align == HUGE)
		madvise(p, size, MADV_HUGEPAGE); /* a hint: failure is harmless */
#endif
	memset(p, 0, size);
	return p;
}

void spp_buffer_free(void *p)
{
	free(p);
}
