/*
 * Model formats spprof does not read, named: a user handed a Keras .h5,
 * a pickle torch.save did not write, an OpenVINO IR or a SavedModel folder
 * learns what the file is and what to do instead, rather than a guess at a
 * format it is not.
 */
#ifndef SPP_PROFILER_FOREIGN_H
#define SPP_PROFILER_FOREIGN_H

#include <stddef.h>

#include "base/error.h"

/* SPP_E_UNSUPPORTED naming the format when the first got bytes b of path
 * are one of those; else 0. */
int spp_foreign_file(const char *path, const unsigned char *b, size_t got, struct spp_error *err);

/* The same for a folder (a SavedModel folder); 0 when none. */
int spp_foreign_dir(const char *path, struct spp_error *err);

#endif
