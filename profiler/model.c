#define _POSIX_C_SOURCE 200809L
#include "profiler/model.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Enough of the file's start to tell the formats apart. */
#define SNIFF_BYTES 64

/*
 * A format: whether a file's first bytes (got of them; size is the whole
 * file's) look like it, and its loader. Tried in order: formats with a magic
 * number first, heuristics last.
 */
struct format_row {
	const char *name;
	int (*sniff)(const unsigned char *b, size_t got, uint64_t size);
	int (*load)(const char *path, struct spp_model **out, struct spp_error *err);
};

/* u64 little-endian header length, then the JSON header; a length that fits
 * the file also counts, so that a broken header gets the loader's message */
static int sniff_safetensors(const unsigned char *b, size_t got, uint64_t size)
{
	uint64_t len = 0;

	if (got < 8)
		return 0;
	for (int k = 7; k >= 0; k--)
		len = (len << 8) | b[k];
	return (got > 8 && b[8] == '{') || (len > 0 && len <= size - 8);
}

/* a sharded checkpoint's index: a JSON object */
static int sniff_json_object(const unsigned char *b, size_t got, uint64_t size)
{
	size_t i = 0;

	(void)size;
	while (i < got && isspace(b[i]))
		i++;
	return i < got && b[i] == '{';
}

static const struct format_row formats[] = {
	{"safetensors", sniff_safetensors, spp_load_safetensors},
	{"safetensors index json", sniff_json_object, spp_load_safetensors_index},
};

int spp_model_open(const char *path, struct spp_model **out,
		   struct spp_error *err)
{
	unsigned char buf[SNIFF_BYTES];
	char names[256] = "";
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
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (formats[i].sniff(buf, (size_t)got, (uint64_t)st.st_size))
			return formats[i].load(path, out, err);
	if (got == 0)
		return spp_error_set(err, SPP_E_FORMAT, "'%s': empty file", path);
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		size_t used = strlen(names);
		snprintf(names + used, sizeof(names) - used, "%s%s", i ? ", " : "",
			 formats[i].name);
	}
	return spp_error_set(err, SPP_E_UNSUPPORTED,
			     "'%s': unknown model format (supported: %s)", path, names);
}

int spp_model_own(struct spp_model *m, void *buf, struct spp_error *err)
{
	void **grown = realloc(m->owned, (size_t)(m->nowned + 1) * sizeof(*grown));

	if (!grown) {
		free(buf);
		return spp_error_set(err, SPP_E_NOMEM, "'%s': out of memory", m->path);
	}
	m->owned = grown;
	m->owned[m->nowned++] = buf;
	return SPP_OK;
}

void spp_model_destroy(struct spp_model *m)
{
	if (!m)
		return;
	for (int i = 0; i < m->nlayer_descs; i++) {
		free(m->layer_descs[i].name);
		free(m->layer_descs[i].node_name);
		free(m->layer_descs[i].op_type);
	}
	free(m->layer_descs);
	for (int i = 0; i < m->nowned; i++)
		free(m->owned[i]);
	free(m->owned);
	for (int i = 0; i < m->ntensors; i++)
		free(m->tensors[i].name);
	free(m->tensors);
	for (int i = 0; i < m->nfiles; i++)
		spp_mapfile_close(&m->files[i]);
	free(m->files);
	free(m->path);
	free(m);
}
