#define _POSIX_C_SOURCE 200809L
#include "profiler/model.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Enough of the file's start to tell the formats apart. */
#define SNIFF_BYTES 64

enum sniffed {
	SNIFF_UNKNOWN,
	SNIFF_SAFETENSORS,
	SNIFF_SAFETENSORS_INDEX,
};

static enum sniffed sniff(const unsigned char *b, size_t n, uint64_t file_size)
{
	size_t i = 0;

	/* a safetensors file: u64 little-endian header length, then the JSON
	 * header; a length that fits the file also counts, so that a broken
	 * header gets the loader's precise message */
	if (n >= 8) {
		uint64_t len = 0;
		for (int k = 7; k >= 0; k--)
			len = (len << 8) | b[k];
		if ((n > 8 && b[8] == '{') || (len > 0 && len <= file_size - 8))
			return SNIFF_SAFETENSORS;
	}
	/* a sharded checkpoint's index: a JSON object */
	while (i < n && isspace(b[i]))
		i++;
	if (i < n && b[i] == '{')
		return SNIFF_SAFETENSORS_INDEX;
	return SNIFF_UNKNOWN;
}

int spp_model_open(const char *path, struct spp_model **out,
		   struct spp_error *err)
{
	unsigned char buf[SNIFF_BYTES];
	struct stat st;
	ssize_t got;
	int fd;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return spp_error_set(err, SPP_E_IO, "cannot open '%s': %s", path,
				     strerror(errno));
	got = read(fd, buf, sizeof(buf));
	if (got < 0 || fstat(fd, &st) != 0) {
		int e = errno;
		close(fd);
		return spp_error_set(err, SPP_E_IO, "cannot read '%s': %s", path,
				     strerror(e));
	}
	close(fd);
	switch (sniff(buf, (size_t)got, (uint64_t)st.st_size)) {
	case SNIFF_SAFETENSORS:
		return spp_load_safetensors(path, out, err);
	case SNIFF_SAFETENSORS_INDEX:
		return spp_load_safetensors_index(path, out, err);
	case SNIFF_UNKNOWN:
		break;
	}
	if (got == 0)
		return spp_error_set(err, SPP_E_FORMAT, "'%s': empty file", path);
	return spp_error_set(err, SPP_E_UNSUPPORTED,
			     "'%s': unknown model format (supported: safetensors, "
			     "safetensors index json)", path);
}

void spp_model_destroy(struct spp_model *m)
{
	if (!m)
		return;
	for (int i = 0; i < m->ntensors; i++)
		free(m->tensors[i].name);
	free(m->tensors);
	for (int i = 0; i < m->nfiles; i++)
		spp_mapfile_close(&m->files[i]);
	free(m->files);
	free(m->path);
	free(m);
}
