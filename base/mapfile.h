/*
 * Read-only memory mapping of an input file. The mapping owns its pages;
 * tensors borrow pointers into it for as long as the mapping lives.
 */
#ifndef SPP_BASE_MAPFILE_H
#define SPP_BASE_MAPFILE_H

#include <stdint.h>

#include "base/error.h"

struct spp_mapped_file {
	char *path;                 /* owned copy of the path given */
	const unsigned char *base;  /* NULL for an empty file */
	uint64_t size;
};

/*
 * Map path read-only. Returns 0, or SPP_E_IO with "cannot open 'path': why"
 * (missing, unreadable, a directory). An empty file maps with base NULL.
 */
int spp_mapfile_open(const char *path, struct spp_mapped_file *out,
		     struct spp_error *err);

/*
 * Map the open descriptor fd (size bytes, from its fstat) read-only into
 * out, out->path a copy of path; fd is closed in every case. Returns 0, or
 * SPP_E_IO "cannot map 'path': why" / SPP_E_NOMEM. The one mapping step of
 * spp_mapfile_open and of files opened beneath a model's folder.
 */
int spp_mapfile_fd(int fd, uint64_t size, const char *path, struct spp_mapped_file *out,
		   struct spp_error *err);

/* Unmap and free; accepts NULL and a zeroed struct. */
void spp_mapfile_close(struct spp_mapped_file *f);

#endif
