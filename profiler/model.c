#define _POSIX_C_SOURCE 200809L
/* The model container of model.h: tensors, layers, files and the model's budget. */
#include "profiler/model.h"
#include "base/beneath.h"
#include "base/budget.h"
#include "base/infile.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

int spp_model_note_left_out(struct spp_model *m, const char *line, const char *path,
			    struct spp_error *err)
{
	size_t have = m->left_out ? strlen(m->left_out) : 0, add = strlen(line);
	char *p = realloc(m->left_out, have + add + 2); /* a file's line: far below SIZE_MAX */

	if (!p)
		return spp_error_set(err, SPP_E_NOMEM, "'%s': out of memory", path);
	memcpy(p + have, line, add);
	memcpy(p + have + add, "\n", 2);
	m->left_out = p;
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
	free(m->weight_notes);
	free(m->left_out);
	free(m->path);
	free(m);
}
