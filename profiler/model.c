#define _POSIX_C_SOURCE 200809L
#include "profiler/model.h"
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

/*
 * Room for one more of n entries of size bytes in *p (*room allocated):
 * doubles, so n calls copy O(n) entries, not O(n^2). 0, or -1 with *p kept.
 */
static int grow(void **p, int *room, int n, size_t size)
{
	int want = n < 8 ? 16 : 2 * n;
	void *grown;

	if (*room > n)
		return 0;
	if (n >= INT_MAX / 2)
		return -1;
	grown = realloc(*p, (size_t)want * size);
	if (!grown)
		return -1;
	*p = grown;
	*room = want;
	return 0;
}

int spp_model_own(struct spp_model *m, void *buf, struct spp_error *err)
{
	if (grow((void **)&m->owned, &m->owned_room, m->nowned, sizeof(*m->owned))) {
		free(buf);
		return spp_error_set(err, SPP_E_NOMEM, "'%s': out of memory", m->path);
	}
	m->owned[m->nowned++] = buf;
	return SPP_OK;
}

int spp_model_charge(struct spp_model *m, uint64_t bytes, const char *path, const char *what,
		     struct spp_error *err)
{
	uint64_t total = m->charged + bytes < m->charged ? UINT64_MAX : m->charged + bytes;
	char whole[300];
	int rc;

	if (total == bytes)
		snprintf(whole, sizeof(whole), "%s", what);
	else
		snprintf(whole, sizeof(whole), "%.200s, with what the model decoded before,", what);
	if ((rc = spp_budget_check_bytes(total, m->bytes, path, whole, err)))
		return rc;
	m->charged = total;
	return SPP_OK;
}

int spp_model_find(const struct spp_model *m, int n, const char *stem, size_t sl,
		   const char *suffix)
{
	size_t xl = strlen(suffix);

	for (int i = 0; i < n; i++) {
		const char *name = m->tensors[i].name;

		if (name && strlen(name) == sl + xl && strncmp(name, stem, sl) == 0 &&
		    strcmp(name + sl, suffix) == 0)
			return i;
	}
	return -1;
}

int spp_model_add_tensor(struct spp_model *m, const struct spp_tensor *t, const char *where,
			 struct spp_error *err)
{
	if (grow((void **)&m->tensors, &m->tensors_room, m->ntensors, sizeof(*m->tensors))) {
		free(t->name);
		return spp_error_set(err, SPP_E_NOMEM, "%s: out of memory", where);
	}
	m->tensors[m->ntensors++] = *t;
	return SPP_OK;
}

/* Room in m->tensor_uses for every tensor (zero for those added since). 0 or -1. */
static int tensor_uses(struct spp_model *m)
{
	int had = m->tensor_uses_room;

	if (had >= m->ntensors)
		return 0;
	if (grow((void **)&m->tensor_uses, &m->tensor_uses_room, m->ntensors - 1,
		 sizeof(*m->tensor_uses)))
		return -1;
	memset(m->tensor_uses + had, 0, (size_t)(m->tensor_uses_room - had) * sizeof(int));
	return 0;
}

/* Room for one more file in m->files and m->file_ids (files_room 0: files
 * holds nfiles, as spp_model_open_mapped allocates it). 0 or -1. */
static int file_room(struct spp_model *m)
{
	int want = m->nfiles < 8 ? 16 : 2 * m->nfiles;
	void *p;

	if (m->files_room > m->nfiles)
		return 0;
	if (m->nfiles >= INT_MAX / 4)
		return -1;
	if (!(p = realloc(m->files, (size_t)want * sizeof(*m->files))))
		return -1;
	m->files = p;
	if (!(p = realloc(m->file_ids, (size_t)want * 2 * sizeof(*m->file_ids))))
		return -1;
	m->file_ids = p;
	memset(&m->files[m->nfiles], 0, (size_t)(want - m->nfiles) * sizeof(*m->files));
	m->files_room = want;
	return 0;
}

int spp_model_map_beneath(struct spp_model *m, const char *dir, const char *name,
			  const char *from, int *file, struct spp_error *err)
{
	struct spp_mapped_file f;
	struct stat st;
	int rc;

	if (file_room(m))
		return spp_error_set(err, SPP_E_NOMEM, "out of memory loading '%s'", from);
	if ((rc = spp_mapfile_beneath(dir, name, from, &f, &st, err)))
		return rc;
	for (int i = 0; i < m->nfiles; i++)
		if (m->file_ids[2 * i] == (uint64_t)st.st_dev &&
		    m->file_ids[2 * i + 1] == (uint64_t)st.st_ino) {
			spp_mapfile_close(&f);
			*file = i;
			return SPP_OK;
		}
	m->file_ids[2 * m->nfiles] = (uint64_t)st.st_dev;
	m->file_ids[2 * m->nfiles + 1] = (uint64_t)st.st_ino;
	m->files[m->nfiles] = f;
	m->bytes += f.size;
	*file = m->nfiles++;
	return SPP_OK;
}

void spp_desc_view(struct spp_layer_desc *d, int64_t m, uint64_t numel, int transposed)
{
	d->m = m;
	d->k = m > 0 ? (int64_t)(numel / (uint64_t)m) : 0;
	d->base = 0;
	d->outer_stride = 0;
	d->row_stride = transposed ? 1 : d->k;
	d->inner = d->k;
	d->inner_stride = transposed ? d->m : 1;
}

int spp_model_add_layer(struct spp_model *m, const struct spp_layer_desc *d, const char *node,
			const char *op_type, const char *path, const char *what,
			struct spp_error *err)
{
	const char *wn = m->tensors[d->tensor].name;
	struct spp_layer_desc *g;
	int uses;

	if (d->m <= 0 || d->k <= 0)
		return SPP_OK; /* an empty weight multiplies nothing */
	if ((uint64_t)m->nlayer_descs >= spp_budget_layers(m->bytes))
		return spp_budget_check_layers((uint64_t)m->nlayer_descs + 1, m->bytes, path, what,
					       err);
	if (grow((void **)&m->layer_descs, &m->layer_descs_room, m->nlayer_descs,
		 sizeof(*m->layer_descs)) || tensor_uses(m))
		return spp_error_set(err, SPP_E_NOMEM, "out of memory loading '%s'", path);
	uses = ++m->tensor_uses[d->tensor];
	g = &m->layer_descs[m->nlayer_descs++]; /* counted first: destroy frees what is set */
	*g = *d;
	if (uses > 1 ? asprintf(&g->name, "%s#%d", wn, uses) < 0 : !(g->name = strdup(wn)))
		g->name = NULL;
	g->node_name = node ? strdup(node) : NULL;
	g->op_type = strdup(op_type);
	if (!g->name || !g->op_type || (node && !g->node_name))
		return spp_error_set(err, SPP_E_NOMEM, "out of memory loading '%s'", path);
	return SPP_OK;
}

int spp_model_open_mapped(const char *path, const char *fmt, struct spp_model **out,
		       struct spp_error *err)
{
	struct spp_model *m = calloc(1, sizeof(*m));
	struct stat st;
	int rc;

	*out = NULL;
	if (!m)
		return spp_error_set(err, SPP_E_NOMEM, "out of memory loading '%s'", path);
	m->format = fmt;
	m->path = strdup(path);
	m->files = calloc(1, sizeof(*m->files));
	if (!m->path || !m->files) {
		spp_model_destroy(m);
		return spp_error_set(err, SPP_E_NOMEM, "out of memory loading '%s'", path);
	}
	rc = spp_mapfile_open(path, &m->files[0], err);
	if (rc) {
		spp_model_destroy(m);
		return rc;
	}
	m->nfiles = 1;
	m->bytes = m->files[0].size;
	if (file_room(m)) {
		spp_model_destroy(m);
		return spp_error_set(err, SPP_E_NOMEM, "out of memory loading '%s'", path);
	}
	/* its identity, so that a file it names cannot be itself again */
	if (stat(path, &st))
		st.st_dev = (dev_t)-1, st.st_ino = (ino_t)-1;
	m->file_ids[0] = (uint64_t)st.st_dev;
	m->file_ids[1] = (uint64_t)st.st_ino;
	*out = m;
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
	free(m->file_ids);
	free(m->tensor_uses);
	free(m->shape_notes);
	free(m->path);
	free(m);
}
