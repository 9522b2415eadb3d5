/*
 * NumPy's .npy and .npz files, parsed from buffers so that the file loaders
 * and the fuzz harness share one validator.
 *
 * .npy (numpy.lib.format, versions 1.0, 2.0, 3.0):
 *   "\x93NUMPY" | u8 major | u8 minor | header length (u16 in 1.0, u32 in
 *   2.0 and 3.0) | header | data
 * The header is a Python dict literal ending in '\n', read strictly: exactly
 * the keys 'descr' (a string), 'fortran_order' (True/False) and 'shape' (a
 * tuple of integers), in any order, with an optional trailing comma and
 * spaces. The data is exactly shape x itemsize bytes.
 *
 * descr: a byte order '<', '>', '=' (native, little-endian here) or '|',
 * then b1, i1, u1, i2, u2, i4, u4, i8, u8, f2, f4, f8 or c8. What is kept
 * in place and what the model owns (spp_model_own):
 * - little-endian C-order data: a byte range of the buffer, not copied;
 * - big-endian data: byte-swapped into an owned copy;
 * - Fortran-order data (column-major) of rank >= 2: transposed into an owned
 *   C-order copy, so that the tensor's shape and every figure (rows,
 *   columns, N:M groups along K) are those of the array numpy shows.
 *
 * .npz: a zip archive (numpy.savez: stored; savez_compressed: deflated) of
 * .npy members, read with libzip. Each member is read into an owned buffer
 * (an npz is usually a bundle of small arrays); its tensor is named after
 * the member without ".npy". Sizes are checked before memory is taken: the
 * member's npy header must announce exactly its uncompressed size, and that
 * size must be one deflate can reach from the compressed one (1032:1).
 */
#ifndef SPP_PROFILER_NPY_H
#define SPP_PROFILER_NPY_H

#include <stdint.h>

#include "base/error.h"
#include "profiler/model.h"

/*
 * Parse the .npy image buf[0, size) and append its array to m as a tensor
 * named name (copied), file index file, data offset base_offset + the
 * header's length (for an image inside a file). where starts every error
 * message ("'w.npz': member 'a.npy'" or "'a.npy'"). The tensor's data
 * borrows buf unless a copy was needed (see above), which m owns.
 * Returns 0, SPP_E_FORMAT (one line naming where and the fault) or
 * SPP_E_NOMEM; on failure m holds no new tensor.
 */
int spp_npy_add(struct spp_model *m, const unsigned char *buf, uint64_t size,
		const char *where, const char *name, int file, uint64_t base_offset,
		struct spp_error *err);

/*
 * Parse the .npz image buf[0, size), file `file` of m (display_name starts
 * error messages), and append one tensor per member to m: a stored member
 * read in place (its tensor borrows buf, at its offset in the file), any
 * other read whole into memory m owns. Returns 0, SPP_E_FORMAT (a bad
 * archive or member) or SPP_E_NOMEM.
 */
int spp_npz_add(struct spp_model *m, const unsigned char *buf, uint64_t size, int file,
		const char *display_name, struct spp_error *err);

#endif
