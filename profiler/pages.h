/*
 * Page residency for read-once passes over mmap'd model files (the static
 * scan and the hash). A pass maps pages ahead of itself in one call and
 * drops them from the process behind itself, so that peak RSS stays near one
 * tensor (or one chunk per thread) however large the model is; the page
 * cache keeps the data, so a later pass re-maps it without disk reads.
 *
 * Dropping uses madvise(MADV_DONTNEED), which is harmless on a clean page of
 * a private file mapping but would zero an anonymous page (a caller's heap
 * or stack buffer seen through a tensor built in memory). So every drop is
 * checked against /proc/self/pagemap first and skips any page that is
 * anonymous (present or swapped); where pagemap cannot be read nothing is
 * dropped.
 */
#ifndef SPP_PROFILER_PAGES_H
#define SPP_PROFILER_PAGES_H

#include <stdint.h>

struct spp_pages {
	int pagemap_fd; /* -1 when /proc/self/pagemap is unavailable */
};

/* Open the pagemap for one pass; never fails (drops become no-ops). */
void spp_pages_open(struct spp_pages *pg);

/* Close what spp_pages_open() opened; accepts a closed one. */
void spp_pages_close(struct spp_pages *pg);

/*
 * Map the pages of [p, p + n) into the process now (MADV_POPULATE_READ),
 * one system call instead of a fault per few pages. A hint: errors ignored.
 */
void spp_pages_prefault(const void *p, uint64_t n);

/*
 * Drop the file pages of [p, p + n) from the process. interior != 0 drops
 * only pages lying wholly inside the range (a neighbour may still be
 * reading the boundary pages); 0 drops every page the range touches.
 * Thread-safe; errors ignored (the data stays correct either way).
 */
void spp_pages_drop(const struct spp_pages *pg, const void *p, uint64_t n,
		    int interior);

/*
 * Drop every file page of [p, p + n) once it has been read whole, in a
 * pass of its own (open, drop, close): a tensor decoded or hashed once.
 */
void spp_pages_release(const void *p, uint64_t n);

#endif
