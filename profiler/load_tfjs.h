/*
 * What the TF.js loader's two parts share (load_tfjs.c: the manifest and
 * its weights; load_tfjs_layers.c: the layers over them).
 */
#ifndef SPP_PROFILER_LOAD_TFJS_H
#define SPP_PROFILER_LOAD_TFJS_H

#include <cjson/cJSON.h>

#include "profiler/loaders.h"

struct tfjs {
	struct spp_model *m;
	const char *path;
	struct spp_error *err;
	int *by_name; /* tensor indices sorted by name, for lookups */
};

/* SPP_E_NOMEM naming t's file. */
int tfjs_nomem(struct tfjs *t);

/* t->m's layers from the model's JSON root (an object with a topology, or a manifest's list). */
int tfjs_load_layers(struct tfjs *t, const cJSON *root);

#endif
