/*
 * PyTorch's legacy (pre-1.6) torch.save stream (load_torch.h): a magic
 * number, protocol and system-info pickles, the object's pickle, the list
 * of storage keys, then each storage raw, its element count first.
 */
#include "profiler/load_torch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The legacy (pre-1.6) format opens with the pickled magic number 0x1950a86a20f9469cfc6c. */
static const unsigned char legacy_magic[15] = {0x80, 0x02, 0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46,
					       0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19, 0x2e};

int spp_torch_legacy_sniff(const unsigned char *b, size_t got, uint64_t size)
{
	(void)size;
	return got >= sizeof(legacy_magic) && memcmp(b, legacy_magic, sizeof(legacy_magic)) == 0;
}

/* One pickle of the legacy stream at *pos into pk, *pos moved past it; the object's sets the visits. */
static int legacy_pickle(struct tl *t, size_t *pos, const char *what, struct spp_pickle *pk)
{
	const struct spp_mapped_file *f = &t->m->files[t->file];
	char where[600];
	size_t used = 0;
	int rc;

	snprintf(where, sizeof(where), "'%s': the legacy torch.save %s", t->path, what);
	if ((rc = spp_pickle_load(f->base + *pos, (size_t)(f->size - *pos), where, pk, &used, t->err)))
		return rc;
	*pos += used;
	if (pk == &t->pk)
		t->visits = (uint64_t)used + VISITS_BASE;
	return SPP_OK;
}

/* Persistent ids by key, then by their place in the pickle (the first of a key first). */
static int pv_cmp(const void *a, const void *b)
{
	const struct spp_pv *x = *(const struct spp_pv *const *)a, *y = *(const struct spp_pv *const *)b;
	int c = torch_key_cmp(x->s, x->len, y->s, y->len);

	return c ? c : (x > y) - (x < y);
}

/*
 * The persistent ids of the object pickle, sorted by key into *out (n of
 * them; the caller frees): each key of the stream is then found in log
 * time, not by a scan of the pickle per key.
 */
static int storage_ids(const struct tl *t, const struct spp_pv ***out, size_t *n)
{
	*n = 0;
	if (!(*out = malloc((t->pk.nv ? t->pk.nv : 1) * sizeof(**out))))
		return spp_error_set(t->err, SPP_E_NOMEM, "'%s': out of memory", t->path);
	for (uint32_t i = 0; i < t->pk.nv; i++)
		if (t->pk.v[i].kind == SPP_PV_STORAGE)
			(*out)[(*n)++] = &t->pk.v[i];
	qsort(*out, *n, sizeof(**out), pv_cmp);
	return SPP_OK;
}

/* The first persistent id of key among ids[0, n), sorted by storage_ids; NULL if none. */
static const struct spp_pv *storage_of(const struct spp_pv **ids, size_t n, const struct spp_pv *key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (torch_key_cmp(ids[mid]->s, ids[mid]->len, key->s, key->len) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && torch_key_cmp(ids[lo]->s, ids[lo]->len, key->s, key->len) == 0 ? ids[lo] : NULL;
}

/*
 * The storages after the stream's pickles, from pos: one per key of list
 * kl (of the keys pickle), each its count and bytes, the count the one
 * the object's persistent id declares. Into t->st, sorted by key.
 */
static int legacy_storages(struct tl *t, const struct spp_pickle *keys, const struct spp_pv *kl,
			   size_t pos)
{
	const struct spp_mapped_file *f = &t->m->files[t->file];
	const struct spp_pv **ids;
	size_t nids;
	int rc = storage_ids(t, &ids, &nids);

	for (uint32_t i = 0; !rc && i < kl->n; i++) {
		const struct spp_pv *key = &keys->v[kl->items[i]], *sv;
		uint64_t count = 0, bytes;

		if (key->kind != SPP_PV_STR || !(sv = storage_of(ids, nids, key)) || f->size - pos < 8) {
			rc = spp_error_set(t->err, SPP_E_FORMAT,
					   "'%s': legacy storage %u: no tensor uses it, or the file ends",
					   t->path, i);
			break;
		}
		for (int b = 7; b >= 0; b--)
			count = count << 8 | f->base[pos + (size_t)(t->big_endian ? 7 - b : b)];
		if (count != (uint64_t)sv->i || count > (UINT64_C(1) << 50) ||
		    (bytes = count * (uint64_t)(spp_dtype_info(sv->dtype)->bits / 8)) > f->size - pos - 8) {
			rc = spp_error_set(t->err, SPP_E_FORMAT,
					   "'%s': legacy storage %u: %llu elements, its tensor says %lld or "
					   "the file is shorter", t->path, i, (unsigned long long)count,
					   (long long)sv->i);
			break;
		}
		if (torch_grow_storages(t)) {
			rc = spp_error_set(t->err, SPP_E_NOMEM, "'%s': out of memory", t->path);
			break;
		}
		t->st[t->nst++] = (struct storage){sv->s, sv->len, (unsigned char *)f->base + pos + 8, bytes};
		pos += 8 + (size_t)bytes;
	}
	free(ids);
	if (!rc)
		qsort(t->st, t->nst, sizeof(*t->st), torch_storage_cmp);
	for (size_t i = 1; !rc && i < t->nst; i++)
		if (torch_storage_cmp(&t->st[i - 1], &t->st[i]) == 0)
			rc = spp_error_set(t->err, SPP_E_FORMAT, "'%s': legacy storage '%.*s' listed twice",
					   t->path, (int)(t->st[i].key_len > 64 ? 64 : t->st[i].key_len),
					   t->st[i].key);
	return rc;
}

/*
 * The legacy stream: pickles of the magic number, the protocol (1001), the
 * system's sizes and byte order, the object, and the storage keys; then
 * each storage as an int64 count and its bytes, in the keys' order. The
 * storages are runs of the mapped file, read in place.
 */
int torch_legacy(struct tl *t)
{
	struct spp_pickle proto = {0}, sys = {0}, keys = {0};
	size_t pos = sizeof(legacy_magic);
	const struct spp_pv *kl, *le = NULL;
	int rc;

	if ((rc = legacy_pickle(t, &pos, "protocol", &proto)) ||
	    (rc = legacy_pickle(t, &pos, "system info", &sys)) ||
	    (rc = legacy_pickle(t, &pos, "object", &t->pk)) ||
	    (rc = legacy_pickle(t, &pos, "storage keys", &keys)))
		goto out;
	if (proto.v[proto.root].kind != SPP_PV_INT || proto.v[proto.root].i != 1001) {
		rc = spp_error_set(t->err, SPP_E_FORMAT, "'%s': legacy torch.save protocol %lld, want 1001",
				   t->path, (long long)proto.v[proto.root].i);
		goto out;
	}
	for (uint32_t i = 0; sys.v[sys.root].kind == SPP_PV_DICT && i + 1 < sys.v[sys.root].n; i += 2) {
		const struct spp_pv *k = &sys.v[sys.v[sys.root].items[i]];

		if (k->kind == SPP_PV_STR && k->len == 13 && memcmp(k->s, "little_endian", 13) == 0)
			le = &sys.v[sys.v[sys.root].items[i + 1]];
	}
	t->big_endian = le && le->kind == SPP_PV_BOOL && le->i == 0;
	kl = &keys.v[keys.root];
	if (kl->kind != SPP_PV_LIST) {
		rc = spp_error_set(t->err, SPP_E_FORMAT, "'%s': legacy storage keys are not a list", t->path);
		goto out;
	}
	if ((rc = legacy_storages(t, &keys, kl, pos)))
		goto out;
	rc = torch_walk_root(t);
out:
	spp_pickle_free(&proto);
	spp_pickle_free(&sys);
	spp_pickle_free(&keys);
	return rc;
}
