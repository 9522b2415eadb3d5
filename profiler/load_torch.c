/*
 * PyTorch checkpoints in torch.save's zip format ("<name>/data.pkl",
 * "<name>/data/<key>" per storage, "<name>/byteorder" since torch 2.1),
 * and in its legacy (pre-1.6) stream of pickles and raw storages,
 * read without Python: the pickle through the restricted unpickler of
 * pickle.h, so a file never runs code. Every tensor of the object saved
 * (a state dict, a checkpoint dict holding one, nested dicts and lists)
 * becomes a tensor named by its path of keys ("model.fc.weight"), but
 * a training checkpoint's optimizer and training state, left out and
 * named (torch_ckpt.h).
 * A stored (uncompressed) storage is read in place from the mapped archive
 * once its CRC checks (zip_member.h: as torch.save writes them), any other
 * is read whole (libzip); a tensor that is a contiguous little-endian run
 * of its storage points into it, any other
 * (strided views, a big-endian file) is gathered into a copy the model
 * owns. Views sharing a storage share its one read.
 */
#include "profiler/load_torch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


int spp_torch_sniff(const unsigned char *b, size_t got, uint64_t size)
{
	size_t n;

	(void)size;
	if (got < 30 || memcmp(b, "PK\x03\x04", 4) != 0)
		return 0;
	n = (size_t)b[26] | (size_t)b[27] << 8;
	return n >= 8 && 30 + n <= got && memcmp(b + 30 + n - 8, "data.pkl", 8) == 0;
}

/*
 * Member name into *data: in place in the archive's mapping when stored,
 * else read whole into *copy, which the caller owns; *data NULL (and 0)
 * when absent and optional.
 */
static int member(struct tl *t, const char *name, int optional, const unsigned char **data,
		  uint64_t *size, unsigned char **copy)
{
	zip_int64_t i = zip_name_locate(t->za, name, 0);
	zip_stat_t st;
	char where[700];
	int rc;

	*data = NULL;
	*copy = NULL;
	*size = 0;
	if (i < 0)
		return optional ? SPP_OK
				: spp_error_set(t->err, SPP_E_FORMAT, "'%s': no member '%.400s'",
						t->path, name);
	if ((rc = spp_zip_member_stat(t->za, (zip_uint64_t)i, t->path, t->places.size, &st, t->err)))
		return rc;
	snprintf(where, sizeof(where), "'%s': member '%.400s'", t->path, name);
	if ((rc = spp_zip_member_get(t->za, &t->places, (zip_uint64_t)i, &st, t->m, t->path, where,
				     data, copy, t->err)))
		return rc;
	*size = st.size;
	return SPP_OK;
}

/* Room for one more storage; -1 out of memory. */
int torch_grow_storages(struct tl *t)
{
	size_t c = t->capst ? 2 * t->capst : 16;
	void *p;

	if (t->nst < t->capst)
		return 0;
	if (!(p = realloc(t->st, c * sizeof(*t->st))))
		return -1;
	t->st = p;
	t->capst = c;
	return 0;
}

/* Keys in one order: by length, then bytes. */
int torch_key_cmp(const char *a, size_t al, const char *b, size_t bl)
{
	return al != bl ? (al < bl ? -1 : 1) : memcmp(a, b, al);
}

int torch_storage_cmp(const void *a, const void *b)
{
	const struct storage *x = a, *y = b;

	return torch_key_cmp(x->key, x->key_len, y->key, y->key_len);
}

/* The storage of key, read once and owned by the model. */
static int storage(struct tl *t, const struct spp_pv *s, struct storage **out)
{
	char name[700];
	struct storage *x;
	unsigned char *copy;
	int rc;

	if (!t->za) { /* legacy: every storage was found before the walk, sorted by key */
		struct storage want = {s->s, s->len, NULL, 0};

		if ((*out = bsearch(&want, t->st, t->nst, sizeof(*t->st), torch_storage_cmp)))
			return SPP_OK;
		return spp_error_set(t->err, SPP_E_FORMAT, "'%s': storage '%.*s' is not in the file",
				     t->path, (int)(s->len > 64 ? 64 : s->len), s->s);
	}
	for (size_t i = 0; i < t->nst; i++)
		if (t->st[i].key_len == s->len && memcmp(t->st[i].key, s->s, s->len) == 0) {
			*out = &t->st[i];
			return SPP_OK;
		}
	if (torch_grow_storages(t))
		return spp_error_set(t->err, SPP_E_NOMEM, "'%s': out of memory", t->path);
	x = &t->st[t->nst];
	x->key = s->s;
	x->key_len = s->len;
	snprintf(name, sizeof(name), "%sdata/%.*s", t->dir, (int)(s->len > 128 ? 128 : s->len), s->s);
	if ((rc = member(t, name, 0, &x->data, &x->size, &copy)) ||
	    (copy && (rc = spp_model_own(t->m, copy, t->err))))
		return rc;
	t->nst++;
	*out = x;
	return SPP_OK;
}

/* Element e of a storage of elements of w bytes, byte-swapped from big-endian when asked. */
static void copy_elem(unsigned char *dst, const unsigned char *src, int w, int swap)
{
	for (int b = 0; b < w; b++)
		dst[b] = src[swap ? w - 1 - b : b];
}

/*
 * The shape of tensor v into x (shape, numel) and *hi, the index of its
 * last element past the storage offset; *contiguous when its strides are
 * the row-major ones. Every product and sum checked: a crafted size or
 * stride must not wrap 64 bits into a small extent.
 */
static int extent(struct tl *t, const struct spp_pv *sz, const struct spp_pv *sd, const char *name,
		  struct spp_tensor *x, uint64_t *hi, int *contiguous)
{
	uint64_t span;
	int over = 0;

	*hi = 0;
	*contiguous = 1;
	x->numel = 1;
	for (int i = (int)sz->n - 1; i >= 0; i--) {
		int64_t n = t->pk.v[sz->items[i]].i, st = t->pk.v[sd->items[i]].i;

		if (t->pk.v[sz->items[i]].kind != SPP_PV_INT || t->pk.v[sd->items[i]].kind != SPP_PV_INT ||
		    n < 0 || st < 0 || n > (INT64_C(1) << 40) || st > (INT64_C(1) << 40))
			return spp_error_set(t->err, SPP_E_FORMAT,
					     "'%s': tensor '%s': a size or stride out of range", t->path, name);
		x->shape[i] = n;
		if (n != 1 && (uint64_t)st != x->numel) /* the row-major stride: the count so far */
			*contiguous = 0;
		over |= __builtin_mul_overflow(x->numel, (uint64_t)n, &x->numel);
		over |= __builtin_mul_overflow((uint64_t)(n > 0 ? n - 1 : 0), (uint64_t)st, &span);
		over |= __builtin_add_overflow(*hi, span, hi);
		if (over || x->numel > (UINT64_C(1) << 50) || *hi > (UINT64_C(1) << 50))
			return spp_error_set(t->err, SPP_E_FORMAT, "'%s': tensor '%s' is too large",
					     t->path, name);
	}
	if (x->numel == 0)
		*hi = 0;
	return SPP_OK;
}

/*
 * Whether the storage s of persistent id sv holds the elements its id
 * declares (torch writes numel x element size bytes; a count that
 * disagrees is how CVE-2026-24747 corrupted torch's heap), and elements
 * offset to offset + hi lie inside it.
 */
static int in_storage(struct tl *t, const struct spp_pv *sv, const struct storage *s, int w,
		      uint64_t offset, uint64_t hi, uint64_t numel, const char *name)
{
	uint64_t declared, end, bytes;
	int key = (int)(sv->len > 64 ? 64 : sv->len);

	if (__builtin_mul_overflow((uint64_t)sv->i, (uint64_t)w, &declared) || declared > s->size ||
	    s->size - declared >= (uint64_t)w)
		return spp_error_set(t->err, SPP_E_FORMAT,
				     "'%s': storage '%.*s' declares %lld elements of %d bytes, its member "
				     "holds %llu bytes", t->path, key, sv->s, (long long)sv->i, w,
				     (unsigned long long)s->size);
	if (numel > 0 && (__builtin_add_overflow(offset, hi, &end) ||
			  __builtin_add_overflow(end, 1, &end) ||
			  __builtin_mul_overflow(end, (uint64_t)w, &bytes) || bytes > declared))
		return spp_error_set(t->err, SPP_E_FORMAT,
				     "'%s': tensor '%s' reaches past its storage '%.*s' of %llu bytes",
				     t->path, name, key, sv->s, (unsigned long long)s->size);
	return SPP_OK;
}

/*
 * x's numel elements of storage data from offset, strides sd, gathered
 * into a copy the model owns, charged to its budget before it is made
 * (a stride-0 view of one element can name gigabytes).
 */
static int gather(struct tl *t, const struct spp_pv *sd, const unsigned char *data,
		  uint64_t offset, int w, const char *name, struct spp_tensor *x)
{
	uint64_t idx[SPP_MAX_DIMS] = {0};
	unsigned char *buf;
	char what[600];
	int rc;

	snprintf(what, sizeof(what), "tensor '%.400s' gathered from its strided storage", name);
	if ((rc = spp_model_charge(t->m, x->nbytes, t->path, what, t->err)))
		return rc;
	if (!(buf = malloc((size_t)x->nbytes)))
		return spp_error_set(t->err, SPP_E_NOMEM, "'%s': out of memory", t->path);
	if ((rc = spp_model_own(t->m, buf, t->err)))
		return rc;
	for (uint64_t e = 0; e < x->numel; e++) {
		uint64_t off = offset; /* below offset + hi: checked by in_storage */

		for (int i = 0; i < x->ndim; i++)
			off += idx[i] * (uint64_t)t->pk.v[sd->items[i]].i;
		copy_elem(buf + e * (uint64_t)w, data + off * (uint64_t)w, w, t->big_endian);
		for (int i = x->ndim - 1; i >= 0 && ++idx[i] == (uint64_t)x->shape[i]; i--)
			idx[i] = 0;
	}
	x->data = buf;
	return SPP_OK;
}

/*
 * Tensor v at name: its shape and strides checked against its storage;
 * the data a run of the storage when contiguous and little-endian, else
 * gathered into a copy.
 */
static int tensor(struct tl *t, const struct spp_pv *v, const char *name)
{
	const struct spp_pv *sv = &t->pk.v[v->items[0]], *sz = &t->pk.v[v->items[1]];
	const struct spp_pv *sd = &t->pk.v[v->items[2]];
	const struct spp_dtype_info *d = spp_dtype_info(sv->dtype);
	struct spp_tensor x = {0};
	struct storage *s = NULL;
	uint64_t hi;
	int w = d->bits / 8, contiguous, rc;

	if (sz->n > SPP_MAX_DIMS)
		return spp_error_set(t->err, SPP_E_FORMAT, "'%s': tensor '%s' has %u dims, over %d",
				     t->path, name, sz->n, SPP_MAX_DIMS);
	if (v->i < 0)
		return spp_error_set(t->err, SPP_E_FORMAT, "'%s': tensor '%s' has a negative storage offset",
				     t->path, name);
	if ((rc = extent(t, sz, sd, name, &x, &hi, &contiguous)) || (rc = storage(t, sv, &s)) ||
	    (rc = in_storage(t, sv, s, w, (uint64_t)v->i, hi, x.numel, name)))
		return rc;
	x.dtype = sv->dtype;
	x.ndim = (int)sz->n;
	x.nbytes = x.numel * (uint64_t)w;
	if (x.numel == 0) {
		x.data = NULL;
		x.nbytes = 0;
	} else if (contiguous && (!t->big_endian || w == 1)) {
		x.data = s->data + (uint64_t)v->i * (uint64_t)w;
	} else if ((rc = gather(t, sd, s->data, (uint64_t)v->i, w, name, &x))) {
		return rc;
	}
	if (!(x.name = strdup(name)))
		return spp_error_set(t->err, SPP_E_NOMEM, "'%s': out of memory", t->path);
	x.file = t->file;
	return spp_model_add_tensor(t->m, &x, t->path, t->err);
}

/*
 * The tensors of value v, named under prefix: dict keys and list indices
 * joined by '.'; out says why they are left out (SPP_CKPT_KEEP: profiled).
 */
static int walk(struct tl *t, uint32_t vi, const char *prefix, int depth, enum spp_ckpt_out out)
{
	const struct spp_pv *v = &t->pk.v[vi];
	int dict = v->kind == SPP_PV_DICT, rc;
	uint32_t n = dict ? v->n / 2 : v->n;

	if (t->visits-- == 0)
		return spp_error_set(t->err, SPP_E_FORMAT,
				     "'%s': the object saved reaches more values than its pickle holds "
				     "(containers shared through the memo, at '%.200s')", t->path, prefix);
	if (v->kind == SPP_PV_TENSOR)
		return out ? spp_ckpt_left_add(&t->left, &t->pk, vi, prefix[0] ? prefix : "tensor", out,
					       t->path, t->err)
			   : tensor(t, v, prefix[0] ? prefix : "tensor");
	if (!dict && v->kind != SPP_PV_LIST && v->kind != SPP_PV_TUPLE)
		return SPP_OK; /* numbers, strings, None: not weights */
	if (depth == MAX_DEPTH)
		return spp_error_set(t->err, SPP_E_FORMAT,
				     "'%s': dicts and lists nest deeper than %d at '%.200s'", t->path,
				     MAX_DEPTH, prefix);
	for (uint32_t i = 0; i < n; i++) {
		const struct spp_pv *k = dict ? &t->pk.v[v->items[2 * i]] : NULL;
		uint32_t c = dict ? v->items[2 * i + 1] : v->items[i];
		enum spp_ckpt_out why = out;
		char name[1024];

		if (k && k->kind == SPP_PV_STR)
			snprintf(name, sizeof(name), "%s%s%.*s", prefix, prefix[0] ? "." : "",
				 (int)(k->len > 400 ? 400 : k->len), k->s);
		else
			snprintf(name, sizeof(name), "%s%s%lld", prefix, prefix[0] ? "." : "",
				 (long long)(k ? k->i : (int64_t)i));
		if (depth == 0 && dict && !out)
			why = spp_ckpt_top_entry(&t->pk, v->items[2 * i], c, (int)i, t->model_entry);
		else if (spp_ckpt_is_optimizer(&t->pk, c))
			why = SPP_CKPT_OPTIMIZER;
		if ((rc = walk(t, c, name, depth + 1, why)))
			return rc;
	}
	return SPP_OK;
}

/*
 * The object saved, from its root: the model's tensors added to t->m,
 * and one line naming what was left out, if anything, in its notes.
 */
int torch_walk_root(struct tl *t)
{
	const char *key;
	char line[512];
	int before = t->m->ntensors, rc;

	t->model_entry = spp_ckpt_model_entry(&t->pk, t->pk.root, &key);
	if ((rc = walk(t, t->pk.root, "", 0,
		       spp_ckpt_is_optimizer(&t->pk, t->pk.root) ? SPP_CKPT_OPTIMIZER : SPP_CKPT_KEEP)))
		return rc;
	spp_ckpt_left_line(&t->left, t->path, key, (uint64_t)(t->m->ntensors - before), line,
			   sizeof(line));
	return line[0] ? spp_model_note_left_out(t->m, line, t->path, t->err) : SPP_OK;
}

/* The archive's data.pkl: its directory into t->dir; its index, or an error. */
static int find_pickle(struct tl *t, zip_int64_t *at)
{
	zip_int64_t n = zip_get_num_entries(t->za, 0);

	for (zip_int64_t i = 0; i < n; i++) {
		const char *name = zip_get_name(t->za, (zip_uint64_t)i, 0);
		size_t len = name ? strlen(name) : 0;

		if (len >= 8 && strcmp(name + len - 8, "data.pkl") == 0 &&
		    (len == 8 || name[len - 9] == '/') && len - 8 < sizeof(t->dir)) {
			memcpy(t->dir, name, len - 8);
			t->dir[len - 8] = '\0';
			*at = i;
			return SPP_OK;
		}
	}
	return spp_error_set(t->err, SPP_E_FORMAT, "'%s': a zip without a torch.save data.pkl",
			     t->path);
}

static int load(struct tl *t)
{
	const unsigned char *pkl = NULL, *order = NULL;
	unsigned char *pkl_copy = NULL, *order_copy = NULL;
	uint64_t pn, on;
	char name[600], where[700];
	zip_int64_t at;
	int rc;

	if ((rc = spp_zip_open_buffer(t->m->files[t->file].base, t->m->files[t->file].size, t->path,
				      &t->za, t->err)) ||
	    (rc = spp_zip_places_find(t->za, t->m->files[t->file].base, t->m->files[t->file].size,
				      &t->places, t->err)) ||
	    (rc = find_pickle(t, &at)))
		return rc;
	snprintf(name, sizeof(name), "%sbyteorder", t->dir);
	if ((rc = member(t, name, 1, &order, &on, &order_copy)))
		return rc;
	if (order && !(on >= 3 && memcmp(order, "big", 3) == 0) &&
	    !(on >= 6 && memcmp(order, "little", 6) == 0))
		rc = spp_error_set(t->err, SPP_E_FORMAT, "'%s': byteorder is neither little nor big",
				   t->path);
	t->big_endian = order && on >= 3 && memcmp(order, "big", 3) == 0;
	free(order_copy);
	snprintf(name, sizeof(name), "%sdata.pkl", t->dir);
	if (rc || (rc = member(t, name, 0, &pkl, &pn, &pkl_copy)))
		return rc;
	snprintf(where, sizeof(where), "'%s': member '%.400s'", t->path, name);
	t->visits = pn + VISITS_BASE;
	if (!(rc = spp_pickle_load(pkl, (size_t)pn, where, &t->pk, NULL, t->err)))
		rc = torch_walk_root(t);
	free(pkl_copy);
	return rc;
}

int spp_torch_add(struct spp_model *m, int file, const char *path, struct spp_error *err)
{
	struct tl t = {0};
	int rc;

	t.m = m;
	t.file = file;
	t.path = path;
	t.err = err;
	if (spp_torch_legacy_sniff(m->files[file].base, (size_t)m->files[file].size, m->files[file].size))
		rc = torch_legacy(&t);
	else
		rc = load(&t);
	spp_pickle_free(&t.pk);
	free(t.st);
	spp_zip_places_free(&t.places);
	if (t.za)
		zip_discard(t.za);
	return rc;
}

int spp_load_torch(const char *path, struct spp_model **out, struct spp_error *err)
{
	struct spp_model *m;
	int rc = spp_model_open_mapped(path, "pytorch", &m, err);

	*out = NULL;
	if (rc)
		return rc;
	if ((rc = spp_torch_add(m, 0, path, err))) {
		spp_model_destroy(m);
		return rc;
	}
	*out = m;
	return SPP_OK;
}
