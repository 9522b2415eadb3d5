/*
 * A restricted unpickler for torch.save's data.pkl: the opcodes of pickle
 * protocols 2 to 5 that plain data needs, and of the globals only those
 * torch.save writes for a state dict (collections.OrderedDict, the tensor
 * and parameter rebuild functions, the storage classes). Every other
 * global, and every call but those, is refused with its name: a model file
 * never runs code. Values live in one arena; strings point into the pickle.
 */
#ifndef SPP_PROFILER_PICKLE_H
#define SPP_PROFILER_PICKLE_H

#include <stddef.h>
#include <stdint.h>

#include "base/dtype.h"
#include "base/error.h"

enum spp_pv_kind {
	SPP_PV_NONE,
	SPP_PV_BOOL,
	SPP_PV_INT,
	SPP_PV_FLOAT,
	SPP_PV_STR,     /* str or bytes: s, len (not NUL-terminated) */
	SPP_PV_TUPLE,   /* items[n] */
	SPP_PV_LIST,    /* items[n] */
	SPP_PV_DICT,    /* items[2n]: key, value, ... in insertion order; g 1: an OrderedDict */
	SPP_PV_GLOBAL,  /* an allowed global: g, its row */
	SPP_PV_STORAGE, /* a persistent id ('storage', type, key, location, numel[, view]):
			   dtype, s/len the key, i numel */
	SPP_PV_TENSOR,  /* _rebuild_tensor_v2: items {storage, size tuple, stride tuple}, i the storage offset */
};

struct spp_pv {
	enum spp_pv_kind kind;
	int g;                  /* SPP_PV_GLOBAL: index of the allowed global; SPP_PV_DICT: 1
				   when made by OrderedDict() */
	enum spp_dtype dtype;   /* SPP_PV_STORAGE */
	int64_t i;
	double f;
	const char *s;
	size_t len;
	uint32_t *items, n, cap;
};

struct spp_pickle {
	struct spp_pv *v;
	uint32_t nv, cap;
	uint32_t root;
};

/*
 * Unpickle p[0, n) into out (spp_pickle_free it, also on failure); *used
 * (when not NULL) gets the bytes up to and with its STOP, where the next
 * pickle of a stream starts. where names the pickle in errors ("'m.pt':
 * member 'm/data.pkl'"). Returns 0,
 * SPP_E_FORMAT (malformed, too deep, a memo index past the pickle),
 * SPP_E_UNSUPPORTED (a global or call torch.save does not write, named),
 * or SPP_E_NOMEM.
 */
int spp_pickle_load(const unsigned char *p, size_t n, const char *where, struct spp_pickle *out,
		    size_t *used, struct spp_error *err);

void spp_pickle_free(struct spp_pickle *pk);

#endif
