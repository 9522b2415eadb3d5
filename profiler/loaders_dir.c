#define _POSIX_C_SOURCE 200809L
/*
 * A folder given as the model (loaders.h, spp_model_dir_entry): the one
 * model it holds. A face-api or TF.js folder (age.json + age.bin), a
 * Hugging Face folder of shards and their index, or a folder with one
 * .onnx or .safetensors; several candidates are named, not guessed.
 */
#include "profiler/loaders.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/safe_text.h"

#define DIR_ENTRIES_MAX 100000 /* entries looked at: a folder of a model, not a dataset */
#define HEAD_BYTES 4096         /* as the format tests read */

enum kind { NONE, FILE_MODEL, TFJS, INDEX, NKINDS };

struct found {
	int count[NKINDS];
	char first[NKINDS][NAME_MAX + 1]; /* the first candidate of each kind, as named */
	char names[NKINDS][512];   /* the candidates of each kind, for the error */
};

/* The kind of dir/name: its first bytes through the format tests. */
static enum kind classify(int dfd, const char *name)
{
	unsigned char b[HEAD_BYTES];
	struct stat st;
	const char *fmt;
	ssize_t got;
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return NONE;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (got = read(fd, b, sizeof(b))) <= 0) {
		close(fd);
		return NONE;
	}
	close(fd);
	fmt = spp_model_sniff(b, (size_t)got, (uint64_t)st.st_size);
	if (!fmt)
		return NONE;
	if (strcmp(fmt, "tfjs") == 0)
		return TFJS;
	/* any JSON object passes the index test: config.json, tokenizer.json are no model */
	if (strcmp(fmt, "safetensors index json") == 0) {
		size_t len = strlen(name);

		return len > 11 && strcmp(name + len - 11, ".index.json") == 0 ? INDEX : NONE;
	}
	return FILE_MODEL;
}

static void note(struct found *f, enum kind k, const char *name)
{
	size_t used = strlen(f->names[k]);
	char shown[96];

	if (f->count[k]++ == 0)
		snprintf(f->first[k], sizeof(f->first[k]), "%s", name); /* NAME_MAX fits: the raw name */
	spp_safe_copy(shown, sizeof(shown), name, (size_t)-1);
	if (used < sizeof(f->names[k]) - 1)
		snprintf(f->names[k] + used, sizeof(f->names[k]) - used, "%s'%s'", used ? ", " : "", shown);
}

int spp_model_dir_entry(const char *dir, char *entry, size_t n, struct spp_error *err)
{
	struct found f;
	struct dirent *e;
	DIR *d = opendir(dir);
	int seen = 0;
	enum kind pick = NONE;

	memset(&f, 0, sizeof(f));
	if (!d)
		return spp_error_set(err, SPP_E_IO, "cannot open the folder '%s': %s", dir, strerror(errno));
	while ((e = readdir(d)) && seen++ < DIR_ENTRIES_MAX) {
		enum kind k;

		if (e->d_name[0] == '.')
			continue; /* hidden, ".", ".." */
		if ((k = classify(dirfd(d), e->d_name)) != NONE)
			note(&f, k, e->d_name);
	}
	closedir(d);
	/* an index names its shards; a TF.js json its .bin shards; else one file is the model */
	for (int k = INDEX; k >= FILE_MODEL && pick == NONE; k--)
		if (f.count[k])
			pick = (enum kind)k;
	if (pick == NONE)
		return spp_error_set(err, SPP_E_FORMAT, "'%s': a folder holding no model spprof reads "
				     "(no .safetensors, .onnx, .tflite, .gguf, .pt, TF.js model.json or "
				     "weights manifest, shard index)", dir);
	if (f.count[pick] > 1)
		return spp_error_set(err, SPP_E_USAGE, "'%s': the folder holds %d models (%s): name "
				     "the one to profile", dir, f.count[pick], f.names[pick]);
	if (snprintf(entry, n, "%s/%s", dir, f.first[pick]) >= (int)n)
		return spp_error_set(err, SPP_E_USAGE, "'%s': the folder's path is too long", dir);
	return SPP_OK;
}
