/*
 * Buffers for kernel operands (X, Y, the dense W of the baseline, the
 * formats' arrays): zero-filled, SPP_BUFFER_PAD spare bytes past the end
 * (the vector kernels may read a full vector past the last element), 64
 * bytes aligned, and from 256 KiB on 2 MiB boundaries with a
 * transparent-huge-page hint. The SpMM kernels read X rows at random; with
 * 4 KiB pages the page walks were measured to cost up to a third of a
 * kernel's time on a KVM guest, so the measurement code allocates X and Y
 * (and the dense W, so that dense and sparse runs are compared on equal
 * terms) with these. Caller owns the buffer.
 */
#ifndef SPP_BASE_BUFFER_H
#define SPP_BASE_BUFFER_H

#include <stddef.h>

#define SPP_BUFFER_PAD 128

/* A zeroed buffer of at least `bytes` bytes; NULL when out of memory. */
void *spp_buffer_alloc(size_t bytes);

/* Free a buffer of spp_buffer_alloc; accepts NULL. */
void spp_buffer_free(void *p);

#endif
