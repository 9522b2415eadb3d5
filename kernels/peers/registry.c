/* The table of reference peers built into this binary. */
#include <string.h>

#include "config.h"
#include "kernels/peers.h"

#if HAVE_LIBRSB
extern const struct spp_format_ops spp_peer_librsb;
#endif
#if HAVE_XNNPACK
extern const struct spp_format_ops spp_peer_xnnpack;
#endif

const struct spp_format_ops *const spp_cpu_peers[] = {
#if HAVE_LIBRSB
	&spp_peer_librsb,
#endif
#if HAVE_XNNPACK
	&spp_peer_xnnpack,
#endif
	NULL,
};

/* Every peer spprof knows, built or not; spp_cpu_peer_names() lists them. */
#define KNOWN_PEERS(X) X("librsb") X("xnnpack")

static const char *const known[] = {
#define KNOWN_PEER_KEY(key) key,
	KNOWN_PEERS(KNOWN_PEER_KEY)
#undef KNOWN_PEER_KEY
};

const struct spp_format_ops *spp_cpu_peer_find(const char *key)
{
	if (!key)
		return NULL;
	for (int i = 0; spp_cpu_peers[i]; i++)
		if (strcmp(spp_cpu_peers[i]->key, key) == 0)
			return spp_cpu_peers[i];
	return NULL;
}

int spp_cpu_peer_known(const char *key)
{
	for (size_t i = 0; key && i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(known[i], key) == 0)
			return 1;
	return 0;
}

const char *spp_cpu_peer_names(void)
{
	/* the same list, joined at compile time: "librsb, xnnpack" */
#define KNOWN_PEER_NAME(key) ", " key
	return &(KNOWN_PEERS(KNOWN_PEER_NAME))[2];
#undef KNOWN_PEER_NAME
}
