/*
 * Buffers for kernel operands (X, Y, the dense W of the baseline): 2 MiB
 * aligned with a transparent-huge-page hint, zero-filled. The SpMM kernels
 * read X rows at random; with 4 KiB pages the page walks were measured to
 * cost up to a third of a kernel's time on a KVM guest, so the measurement
 * code should allocate X and Y (and the dense W, so that dense and sparse
 * runs are compared on equal terms) with these. Caller owns the buffer.
 */
#ifndef SPP_KERNELS_CPU_BUFFER_H
#define SPP_KERNELS_CPU_BUFFER_H

#include <stddef.h>

/* A zeroed buffer of at least `bytes` bytes; NULL when out of memory. */
void *spp_buffer_alloc(size_t bytes);

/* Free a buffer of spp_buffer_alloc; accepts NULL. */
void spp_buffer_free(void *p);

#endif
