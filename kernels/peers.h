/*
 * Reference peers: established sparse libraries run as one more format
 * (struct spp_format_ops), so that a report shows spprof's formats beside
 * them and OpenBLAS in one table, checked and timed by the same code.
 * Each peer is optional at build time (meson feature option, HAVE_<NAME>
 * in config.h); the registry lists only those built.
 */
#ifndef SPP_KERNELS_PEERS_H
#define SPP_KERNELS_PEERS_H

#include "kernels/kernels.h"

/* The peers built into this binary, NULL-terminated (empty without any). */
extern const struct spp_format_ops *const spp_cpu_peers[];

/* A built peer by key ("librsb"); NULL when unknown or not built. */
const struct spp_format_ops *spp_cpu_peer_find(const char *key);

/* Whether key names a peer spprof knows, built here or not. */
int spp_cpu_peer_known(const char *key);

/* The keys of every known peer, comma-separated ("librsb"), for messages. */
const char *spp_cpu_peer_names(void);

#endif
