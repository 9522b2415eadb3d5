#define _POSIX_C_SOURCE 200809L
#include "base/mapfile.h"
#include "base/infile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int spp_mapfile_fd(int fd, uint64_t size, const char *path, struct spp_mapped_file *out,
		   struct spp_error *err)
{
	void *p = NULL;

	memset(out, 0, sizeof(*out));
	if (size > 0 && (p = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED) {
		int e = errno;

		close(fd);
		return spp_error_set(err, SPP_E_IO, "cannot map '%s': %s", path, strerror(e));
	}
	close(fd);
	if (!(out->path = strdup(path))) {
		if (p)
			munmap(p, (size_t)size);
		return spp_error_set(err, SPP_E_NOMEM, "out of memory mapping '%s'", path);
	}
	out->base = p;
	out->size = size;
	return SPP_OK;
}

int spp_mapfile_open(const char *path, struct spp_mapped_file *out,
		     struct spp_error *err)
{
	struct stat st;
	int fd;

	memset(out, 0, sizeof(*out));
	fd = spp_infile_open(path, &st, err);
	if (fd < 0)
		return fd;
	return spp_mapfile_fd(fd, (uint64_t)st.st_size, path, out, err);
}

void spp_mapfile_close(struct spp_mapped_file *f)
{
	if (!f)
		return;
	if (f->base)
		munmap((void *)f->base, (size_t)f->size);
	free(f->path);
	memset(f, 0, sizeof(*f));
}
