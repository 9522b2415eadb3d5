#define _POSIX_C_SOURCE 200809L
/*
 * The loader registry of loaders.h: one row per format, its test of a
 * file's first bytes and its loader, tried in order.
 */
#include "profiler/loaders.h"
#include "profiler/foreign.h"
#include "base/beneath.h"
#include "base/budget.h"
#include "base/infile.h"
#include "profiler/onnx/onnx.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Enough of the file's start to tell the formats apart. */
#define SNIFF_BYTES 64
#define FOREIGN_BYTES 4096 /* the foreign formats' tests look further in */

/*
 * A format: whether a file's first bytes (got of them; size is the whole
 * file's) look like it, and its loader. Tried in order: formats with a magic
 * number first, heuristics last.
 */
struct format_row {
	const char *name;
	int magic; /* tested before the formats spprof does not read (foreign.h) */
	int wide;  /* its test reads FOREIGN_BYTES, not SNIFF_BYTES */
	int (*sniff)(const unsigned char *b, size_t got, uint64_t size);
	int (*load)(const char *path, struct spp_model **out, struct spp_error *err);
	/* instead of load, for a format that takes the user's options (a graph) */
	int (*load_with)(const char *path, const struct spp_open_opts *opts,
			 struct spp_model **out, struct spp_error *err);
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

static int has_prefix(const unsigned char *b, size_t got, const char *magic, size_t n)
{
	return got >= n && memcmp(b, magic, n) == 0;
}

static int sniff_gguf(const unsigned char *b, size_t got, uint64_t size)
{
	(void)size;
	return has_prefix(b, got, "GGUF", 4);
}

static int sniff_npy(const unsigned char *b, size_t got, uint64_t size)
{
	(void)size;
	return has_prefix(b, got, "\x93NUMPY", 6);
}

/* a zip archive: a local file header, or the end record of an empty one */
static int sniff_npz(const unsigned char *b, size_t got, uint64_t size)
{
	(void)size;
	return has_prefix(b, got, "PK\x03\x04", 4) || has_prefix(b, got, "PK\x05\x06", 4);
}

static int sniff_mtx(const unsigned char *b, size_t got, uint64_t size)
{
	(void)size;
	return has_prefix(b, got, "%%MatrixMarket", 14);
}

/* a DLMC .smtx has no magic: its first line is "M, K, NNZ" */
static int sniff_smtx(const unsigned char *b, size_t got, uint64_t size)
{
	size_t i = 0;

	(void)size;
	for (int f = 0; f < 3; f++) {
		size_t start = i;

		if (f && (i + 2 > got || b[i] != ',' || b[i + 1] != ' '))
			return 0;
		if (f)
			start = i += 2;
		while (i < got && isdigit(b[i]) && i - start < 10)
			i++;
		if (i == start)
			return 0;
	}
	while (i < got && (b[i] == ' ' || b[i] == '\r'))
		i++;
	return i == got || b[i] == '\n';
}

static const struct format_row formats[] = {
	/* magic numbers first */
	{"gguf", 1, 0, sniff_gguf, spp_load_gguf, NULL},
	{"npy", 1, 0, sniff_npy, spp_load_npy, NULL},
	{"tflite", 1, 0, spp_tflite_sniff, spp_load_tflite, NULL},
	{"mtx", 1, 0, sniff_mtx, spp_load_mtx, NULL},
	{"safetensors", 1, 0, sniff_safetensors, spp_load_safetensors, NULL},
	{"pytorch (legacy)", 1, 0, spp_torch_legacy_sniff, spp_load_torch, NULL}, /* a pickle */
	/* after them: a Core ML model is a protobuf */
	{"pytorch", 0, 1, spp_torch_sniff, spp_load_torch, NULL}, /* a zip, before npz */
	{"npz", 0, 0, sniff_npz, spp_load_npz, NULL},
	{"tfjs", 0, 1, spp_tfjs_sniff, spp_load_tfjs, NULL}, /* a JSON object, before an index */
	{"safetensors index json", 0, 0, sniff_json_object, spp_load_safetensors_index, NULL},
	{"smtx", 0, 0, sniff_smtx, spp_load_smtx, NULL},
	/* heuristic: a protobuf ModelProto has no magic number */
	{"coreml", 0, 1, spp_coreml_sniff, spp_load_coreml, NULL}, /* protobuf, before ONNX */
	{"onnx", 0, 0, spp_onnx_sniff, NULL, spp_load_onnx},
};

const char *spp_model_sniff(const unsigned char *b, size_t got, uint64_t size)
{
	size_t head = got < SNIFF_BYTES ? got : SNIFF_BYTES;

	for (int pass = 1; pass >= 0; pass--)
		for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
			if (formats[i].magic == pass && formats[i].sniff(b, formats[i].wide ? got : head, size))
				return formats[i].name;
	return NULL;
}

/* A loader's result with compressed weights decoded and pruning masks
 * folded; *out NULL on failure. */
static int loaded(int rc, struct spp_model **out, struct spp_error *err)
{
	if (!rc && ((rc = spp_model_decompress(*out, err)) || (rc = spp_model_fold_masks(*out, err)))) {
		spp_model_destroy(*out);
		*out = NULL;
	}
	return rc;
}

/* Load path as the format of row f, with opts where it takes them. */
static int load_row(const struct format_row *f, const char *path,
		    const struct spp_open_opts *opts, struct spp_model **out,
		    struct spp_error *err)
{
	if (f->load_with)
		return loaded(f->load_with(path, opts, out, err), out, err);
	if (opts && opts->ninput_shapes)
		return spp_error_set(err, SPP_E_FORMAT, "'%s': --input-shape needs a model with "
				     "a graph (ONNX); this is a %s file", path, f->name);
	return loaded(f->load(path, out, err), out, err);
}

int spp_model_open(const char *path, struct spp_model **out,
		   struct spp_error *err)
{
	return spp_model_open_with(path, NULL, out, err);
}

int spp_model_open_with(const char *path, const struct spp_open_opts *opts,
			struct spp_model **out, struct spp_error *err)
{
	unsigned char buf[FOREIGN_BYTES];
	char names[256] = "";
	struct stat st;
	ssize_t got;
	size_t head;
	int fd, rc;

	*out = NULL;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		char json[4096];

		/* a TF.js model's folder: its model.json */
		if (snprintf(json, sizeof(json), "%s/model.json", path) < (int)sizeof(json) &&
		    stat(json, &st) == 0 && S_ISREG(st.st_mode))
			return spp_model_open_with(json, opts, out, err);
		/* a Core ML package: its Manifest.json names the model */
		if (snprintf(json, sizeof(json), "%s/Manifest.json", path) < (int)sizeof(json) &&
		    stat(json, &st) == 0 && S_ISREG(st.st_mode))
			return spp_load_coreml(path, out, err);
		if ((rc = spp_foreign_dir(path, err)))
			return rc;
		/* a folder holding one model (age.json + age.bin, an index and its shards, one file) */
		if ((rc = spp_model_dir_entry(path, json, sizeof(json), err)))
			return rc;
		return spp_model_open_with(json, opts, out, err);
	}
	fd = spp_infile_open(path, &st, err);
	if (fd < 0)
		return fd;
	got = read(fd, buf, sizeof(buf));
	if (got < 0) {
		int e = errno;
		close(fd);
		return spp_error_set(err, SPP_E_IO, "cannot read '%s': %s", path,
				     strerror(e));
	}
	close(fd);
	head = (size_t)got < SNIFF_BYTES ? (size_t)got : SNIFF_BYTES;
	for (int pass = 1; pass >= 0; pass--) {
		for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
			if (formats[i].magic == pass &&
			    formats[i].sniff(buf, formats[i].wide ? (size_t)got : head, (uint64_t)st.st_size))
				return load_row(&formats[i], path, opts, out, err);
		if (pass == 1 && (rc = spp_foreign_file(path, buf, (size_t)got, err)))
			return rc;
	}
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
