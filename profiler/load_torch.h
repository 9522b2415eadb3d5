/*
 * What the PyTorch loader's two readers share (load_torch.c: the zip
 * format; load_torch_legacy.c: the pre-1.6 stream).
 */
#ifndef SPP_PROFILER_LOAD_TORCH_H
#define SPP_PROFILER_LOAD_TORCH_H

#include <stddef.h>
#include <stdint.h>

#include "profiler/loaders.h"
#include "profiler/pickle.h"
#include "profiler/torch_ckpt.h"
#include "profiler/zip_member.h"

#define MAX_DEPTH 16 /* dicts and lists nested in the object saved */

struct storage {
	const char *key;
	size_t key_len;
	const unsigned char *data;  /* in the mapping, or a copy the model owns */
	uint64_t size;
};

struct tl {
	struct spp_model *m;
	int file;                /* the archive: m->files[file] */
	zip_t *za;
	struct spp_zip_places places;  /* where stored members lie, to read them in place */
	const char *path;
	char dir[512];           /* "<name>/" of data.pkl */
	int big_endian;
	struct spp_pickle pk;
	struct storage *st;
	size_t nst, capst;
	uint64_t visits;         /* values the walk may still enter (walk) */
	int model_entry;         /* the top-level entry holding the model; -1: none (torch_ckpt.h) */
	struct spp_ckpt_left left; /* the tensors left out */
	struct spp_error *err;
};

/*
 * Values the walk may enter: one per byte of the object's pickle, plus
 * this. Without sharing each value entered costs at least one byte of
 * pickle (the opcode that put it in its container); a container shared
 * through the memo is entered once per reference, and containers of
 * shared containers multiply ("billion laughs": 8 references a level, 14
 * levels, 8^14 values from 572 bytes). A state dict saved twice under two
 * keys stays far below this.
 */
#define VISITS_BASE 4096

/* Room for one more storage in t->st; -1 out of memory. */
int torch_grow_storages(struct tl *t);

/* Storage keys in one order: by length, then bytes (and qsort's form on struct storage). */
int torch_key_cmp(const char *a, size_t al, const char *b, size_t bl);
int torch_storage_cmp(const void *a, const void *b);

/* The object saved, from its root t->pk.root: the model's tensors added to t->m, what was left out named. */
int torch_walk_root(struct tl *t);

/* Read the legacy stream of t->m->files[t->file] into t->m. */
int torch_legacy(struct tl *t);

#endif
