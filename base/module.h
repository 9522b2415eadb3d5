/*
 * Optional parts loaded at run time: a shared module (the CUDA backend,
 * libspprof-cuda.so) looked for beside the executable, in the folder above
 * it (a build folder: build/cmd/spprof, build/libspprof-cuda.so), then in
 * the install folder SPP_MODULE_DIR (config.h). Never the current folder.
 *
 * A module exports one function per table it offers, taking nothing and
 * returning a pointer to a const table of operations; the caller checks the
 * table's version. Modules stay loaded until the process exits.
 */
#ifndef SPP_BASE_MODULE_H
#define SPP_BASE_MODULE_H

#include <stddef.h>

/*
 * Load the module file (a bare file name) and call its exported function
 * symbol. Returns the table it returns, or NULL with why (one line, "" on
 * success) holding the reason: not found (and where it looked), dlopen's
 * or dlsym's own message (a library the module needs is missing), or the
 * module returning NULL.
 */
const void *spp_module_table(const char *file, const char *symbol, char *why, size_t n);

#endif
