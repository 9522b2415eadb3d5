/*
 * A sharded checkpoint: model.safetensors.index.json (or transformers'
 * pytorch_model.bin.index.json, whose shards are torch.save files) names,
 * in its "weight_map" object, the shard file that holds each tensor:
 *
 *   {"metadata": {"total_size": 123}, "weight_map": {"a.weight":
 *    "model-00001-of-00002.safetensors", ...}}
 *
 * Choices:
 * - Shard names are relative to the index's folder; absolute names, empty
 *   names and any ".." component are rejected, so a shard cannot lie outside
 *   that folder (symbolic links aside). Subfolders are allowed.
 * - Each distinct shard is loaded once, in order of first appearance in
 *   weight_map; files[] follows that order and tensor.file indexes it.
 * - A tensor stored in a shard but missing from weight_map is included: it is
 *   in the checkpoint, and loaders such as transformers read whole shards.
 *   A tensor stored in two shards is an error, as is a weight_map entry whose
 *   tensor is not in the shard it names.
 * - "metadata" is optional and, when present, must be an object; its content
 *   (total_size) is not checked against the shards.
 */
#include "profiler/safetensors.h"
#include "profiler/loaders.h"
#include "base/beneath.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One weight_map entry. */
struct entry {
	const char *name;  /* borrowed from the cJSON tree */
	const char *shard; /* borrowed from the cJSON tree */
	int order;         /* position in weight_map */
	int file;          /* index of its shard in model->files */
};

static int nomem(struct spp_error *err, const char *file)
{
	return spp_error_set(err, SPP_E_NOMEM, "out of memory loading '%s'", file);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

static int by_shard(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int c = strcmp(x->shard, y->shard);

	if (c)
		return c;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int by_order(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	return x->order < y->order ? -1 : x->order > y->order;
}

static int tensor_by_name(const void *a, const void *b)
{
	return strcmp(((const struct spp_tensor *)a)->name,
		      ((const struct spp_tensor *)b)->name);
}

/* by name, then file: a name stored twice is reported in shard order */
static int tensor_by_name_file(const void *a, const void *b)
{
	const struct spp_tensor *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return x->file < y->file ? -1 : x->file > y->file;
}

/*
 * Number the distinct shards by first appearance: entries come back in
 * weight_map order with .file set; *shards (heap, borrowed names) lists each
 * shard once. O(n log n) for any number of shards.
 */
static int number_shards(struct entry *e, int n, const char ***shards, int *nshards)
{
	struct entry *firsts;
	const char **names;
	int k = 0;

	*shards = NULL;
	*nshards = 0;
	firsts = malloc((size_t)n * sizeof(*firsts));
	names = malloc((size_t)n * sizeof(*names));
	if (!firsts || !names) {
		free(firsts);
		free(names);
		return -1;
	}
	qsort(e, (size_t)n, sizeof(*e), by_shard);
	for (int i = 0; i < n; i++)
		if (i == 0 || strcmp(e[i - 1].shard, e[i].shard) != 0)
			firsts[k++] = e[i]; /* the lowest order of its group */
	qsort(firsts, (size_t)k, sizeof(*firsts), by_order);
	for (int i = 0; i < k; i++) {
		names[i] = firsts[i].shard;
		firsts[i].file = i;
	}
	/* each entry finds its shard's number by binary search over the firsts */
	qsort(firsts, (size_t)k, sizeof(*firsts), by_shard);
	for (int i = 0; i < n; i++) {
		int lo = 0, hi = k - 1;
		while (lo < hi) {
			int mid = (lo + hi) / 2;
			if (strcmp(firsts[mid].shard, e[i].shard) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		e[i].file = firsts[lo].file;
	}
	qsort(e, (size_t)n, sizeof(*e), by_order);
	free(firsts);
	*shards = names;
	*nshards = k;
	return 0;
}

int spp_json_file_read(const char *path, struct cJSON **root, struct spp_error *err)
{
	struct spp_mapped_file f = {0};
	int rc;

	*root = NULL;
	if ((rc = spp_mapfile_open(path, &f, err)))
		return rc;
	rc = spp_json_mapped(&f, root, err);
	spp_mapfile_close(&f);
	return rc;
}

int spp_json_mapped(const struct spp_mapped_file *f, struct cJSON **root, struct spp_error *err)
{
	const char *end = NULL, *path = f->path;
	char *text = NULL;
	int rc;

	*root = NULL;
	if (f->size == 0)
		return spp_error_format(err, path, "empty file");
	if (f->size > SPP_SAFETENSORS_MAX_HEADER)
		return spp_error_format(err, path, "JSON of %" PRIu64 " bytes exceeds the limit of %"
					PRIu64 " bytes", f->size, SPP_SAFETENSORS_MAX_HEADER);
	if (memchr(f->base, 0, (size_t)f->size))
		return spp_error_format(err, path, "NUL byte in the index at byte %td",
					(const unsigned char *)memchr(f->base, 0, (size_t)f->size) -
						f->base);
	if (!(text = malloc((size_t)f->size + 1)))
		return nomem(err, path);
	memcpy(text, f->base, (size_t)f->size);
	text[f->size] = '\0';
	*root = cJSON_ParseWithLengthOpts(text, (size_t)f->size, &end, 0);
	if (!*root) {
		rc = spp_error_format(err, path, "not valid JSON (error near byte %td)",
				      end && end >= text && end <= text + f->size ? end - text : 0);
		goto out;
	}
	for (const char *p = end; p < text + f->size; p++) {
		if (!strchr(" \t\r\n", *p)) {
			rc = spp_error_format(err, path, "bytes after the JSON object, at byte %td",
					      p - text);
			goto out;
		}
	}
	rc = cJSON_IsObject(*root) ? SPP_OK : spp_error_format(err, path, "not a JSON object");
out:
	if (rc) {
		cJSON_Delete(*root);
		*root = NULL;
	}
	free(text);
	return rc;
}

/* weight_map into entries, in order; names and shards checked. */
static int read_weight_map(const cJSON *root, const char *path, struct entry **out,
			   int *nout, struct spp_error *err)
{
	const cJSON *wm = cJSON_GetObjectItemCaseSensitive(root, "weight_map");
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(root, "metadata");
	const cJSON *c;
	struct entry *e = NULL;
	int n = 0, rc;

	*out = NULL;
	*nout = 0;
	if (meta && !cJSON_IsObject(meta))
		return spp_error_format(err, path, "'metadata' is not an object");
	if (!wm)
		return spp_error_format(err, path, "missing 'weight_map'");
	if (!cJSON_IsObject(wm))
		return spp_error_format(err, path, "'weight_map' is not an object");
	n = cJSON_GetArraySize(wm);
	if (n == 0)
		return spp_error_format(err, path, "'weight_map' is empty");
	cJSON_ArrayForEach(c, wm) {
		if (!cJSON_IsString(c))
			return spp_error_format(err, path, "weight_map: tensor '%s' maps to a non-string",
				     c->string);
		if (spp_name_beneath(c->valuestring))
			return spp_error_format(err, path, "weight_map: tensor '%s': shard '%s' is not a "
				     "file inside the index's folder", c->string, c->valuestring);
	}
	e = calloc((size_t)n, sizeof(*e));
	if (!e)
		return nomem(err, path);
	n = 0;
	cJSON_ArrayForEach(c, wm) {
		e[n].name = c->string;
		e[n].shard = c->valuestring;
		e[n].order = n;
		n++;
	}
	/* cJSON keeps duplicate keys; sorting by name finds them */
	qsort(e, (size_t)n, sizeof(*e), by_name);
	for (int i = 1; i < n; i++) {
		if (strcmp(e[i - 1].name, e[i].name) == 0) {
			rc = spp_error_format(err, path, "weight_map: tensor '%s' appears twice", e[i].name);
			goto out;
		}
	}
	qsort(e, (size_t)n, sizeof(*e), by_order);
	*out = e;
	*nout = n;
	e = NULL;
	rc = SPP_OK;
out:
	free(e);
	return rc;
}

/* Map and parse shard i (beneath the index's folder); append its tensors to m with
 * file = i. A shard that is an earlier one's file under another name is refused. */
static int load_shard(struct spp_model *m, const char *dir, const char **shards, int i,
		      struct spp_error *err)
{
	const struct spp_mapped_file *f;
	struct spp_tensor *ts = NULL, *grown;
	const char *p;
	int n = 0, fi, rc;

	if ((rc = spp_model_map_beneath(m, dir, shards[i], m->path, &fi, err)))
		return rc;
	if (fi != i)
		return spp_error_format(err, m->path, "weight_map: shards '%s' and '%s' are one file",
					shards[fi], shards[i]);
	f = &m->files[fi];
	p = f->path;
	/* pytorch_model.bin.index.json names torch.save shards */
	if (spp_torch_sniff(f->base, f->size < 4096 ? (size_t)f->size : 4096, f->size) ||
	    spp_torch_legacy_sniff(f->base, (size_t)f->size, f->size)) {
		m->format = "pytorch";
		return spp_torch_add(m, fi, p, err);
	}
	rc = spp_safetensors_parse(f->base, f->size, p, &ts, &n, err);
	if (rc)
		goto out;
	if (n > 0) {
		if (m->ntensors > INT32_MAX - n) {
			rc = spp_error_format(err, m->path, "more than %d tensors", INT32_MAX);
			goto out;
		}
		grown = realloc(m->tensors, (size_t)(m->ntensors + n) * sizeof(*grown));
		if (!grown) {
			rc = nomem(err, m->path);
			goto out;
		}
		m->tensors = grown;
		for (int k = 0; k < n; k++) {
			ts[k].file = fi;
			m->tensors[m->ntensors++] = ts[k];
		}
		free(ts); /* names now belong to the model */
		ts = NULL;
		n = 0;
	}
out:
	spp_safetensors_tensors_free(ts, n);
	return rc;
}

/* Every weight_map entry is in the shard it names; no tensor in two shards. */
static int cross_check(struct spp_model *m, struct entry *e, int n, const char **shards,
		       struct spp_error *err)
{
	struct spp_tensor *t = m->tensors;
	int nt = m->ntensors;

	qsort(t, (size_t)nt, sizeof(*t), tensor_by_name_file);
	for (int i = 1; i < nt; i++)
		if (strcmp(t[i - 1].name, t[i].name) == 0)
			return spp_error_format(err, m->path, "tensor '%s' is stored in two shards, '%s' and '%s'",
				     t[i].name, shards[t[i - 1].file], shards[t[i].file]);
	for (int i = 0; i < n; i++) {
		struct spp_tensor key = {.name = (char *)e[i].name};
		struct spp_tensor *hit = bsearch(&key, t, (size_t)nt, sizeof(*t), tensor_by_name);
		if (!hit)
			return spp_error_format(err, m->path, "tensor '%s' is listed in shard '%s' but is not in it",
				     e[i].name, e[i].shard);
		if (hit->file != e[i].file)
			return spp_error_format(err, m->path,
				     "tensor '%s' is listed in shard '%s' but is stored in '%s'",
				     e[i].name, e[i].shard, shards[hit->file]);
	}
	qsort(t, (size_t)nt, sizeof(*t), spp_safetensors_tensor_cmp);
	return SPP_OK;
}

int spp_load_safetensors_index(const char *path, struct spp_model **out,
			       struct spp_error *err)
{
	struct spp_model *m = NULL;
	struct entry *e = NULL;
	const char **shards = NULL;
	cJSON *root = NULL;
	char *dir = NULL;
	const char *slash;
	int n = 0, nshards = 0, rc;

	*out = NULL;
	rc = spp_json_file_read(path, &root, err);
	if (rc)
		goto out;
	rc = read_weight_map(root, path, &e, &n, err);
	if (rc)
		goto out;
	m = calloc(1, sizeof(*m));
	slash = strrchr(path, '/');
	dir = slash ? strndup(path, (size_t)(slash - path + 1)) : strdup("");
	if (!m || !dir || number_shards(e, n, &shards, &nshards)) {
		rc = nomem(err, path);
		goto out;
	}
	m->format = "safetensors";
	m->path = strdup(path);
	if (!m->path) {
		rc = nomem(err, path);
		goto out;
	}
	for (int i = 0; i < nshards; i++) {
		rc = load_shard(m, dir, shards, i, err);
		if (rc)
			goto out;
	}
	rc = cross_check(m, e, n, shards, err);
	if (rc)
		goto out;
	*out = m;
	m = NULL;
out:
	spp_model_destroy(m);
	free(shards);
	free(dir);
	free(e);
	cJSON_Delete(root);
	return rc;
}
