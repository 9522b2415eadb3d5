/* Page residency for read-once passes; see pages.h for why and how. */
#include "profiler/pages.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14; older kernels answer EINVAL */
#endif

#define PM_PRESENT (1ull << 63)
#define PM_SWAPPED (1ull << 62)
#define PM_FILE (1ull << 61) /* a file page, or shared anonymous memory */

static uintptr_t page_bytes(void)
{
	long s = sysconf(_SC_PAGESIZE);
	return s > 0 ? (uintptr_t)s : 4096;
}

void spp_pages_open(struct spp_pages *pg)
{
	pg->pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
}

void spp_pages_close(struct spp_pages *pg)
{
	if (pg->pagemap_fd >= 0)
		close(pg->pagemap_fd);
	pg->pagemap_fd = -1;
}

void spp_pages_prefault(const void *p, uint64_t n)
{
	uintptr_t ps = page_bytes();
	uintptr_t s = (uintptr_t)p & ~(ps - 1), e = (uintptr_t)p + n;

	if (n)
		(void)madvise((void *)s, e - s, MADV_POPULATE_READ);
}

void spp_pages_drop(const struct spp_pages *pg, const void *p, uint64_t n,
		    int interior)
{
	uintptr_t ps = page_bytes();
	uintptr_t s = (uintptr_t)p, e = s + n, run, a;
	uint64_t ent[512];

	if (pg->pagemap_fd < 0 || n == 0)
		return;
	if (interior) {
		s = (s + ps - 1) & ~(ps - 1);
		e &= ~(ps - 1);
	} else {
		s &= ~(ps - 1);
		e = (e + ps - 1) & ~(ps - 1);
	}
	/* drop maximal runs of pages that hold no anonymous data */
	run = s;
	for (a = s; a < e;) {
		size_t cnt = (e - a) / ps;
		if (cnt > sizeof(ent) / sizeof(ent[0]))
			cnt = sizeof(ent) / sizeof(ent[0]);
		ssize_t got = pread(pg->pagemap_fd, ent, cnt * sizeof(ent[0]),
				    (off_t)(a / ps * sizeof(ent[0])));
		if (got != (ssize_t)(cnt * sizeof(ent[0]))) {
			e = a; /* unknown pages stay */
			break;
		}
		for (size_t i = 0; i < cnt; i++) {
			uint64_t f = ent[i];
			uintptr_t pa = a + i * ps;

			if ((f & PM_SWAPPED) || ((f & PM_PRESENT) && !(f & PM_FILE))) {
				if (pa > run)
					(void)madvise((void *)run, pa - run, MADV_DONTNEED);
				run = pa + ps;
			}
		}
		a += cnt * ps;
	}
	if (e > run)
		(void)madvise((void *)run, e - run, MADV_DONTNEED);
}

void spp_pages_release(const void *p, uint64_t n)
{
	struct spp_pages pg;

	if (!p || !n)
		return;
	spp_pages_open(&pg);
	spp_pages_drop(&pg, p, n, 0);
	spp_pages_close(&pg);
}
