/*
 * The cache model of the simulator (counters/sim.h) and its geometry:
 * parsed from --cache-model, or taken from the machine with the LLC held
 * to a believable size.
 */
#include "counters/sim.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>


/* Where the OS reports nothing: a recent server core's hierarchy. */
static const struct spp_sim_geometry fallback = {
	{48 << 10, 12}, {2 << 20, 16}, {32 << 20, 16}, 64,
};

/* One cache instance: sets x ways tags (line number + 1, 0 empty), MRU first. */
struct cache {
	uint64_t sets, mask;    /* mask = sets - 1 when sets is a power of two, else 0 */
	int ways;
	uint64_t *tags;
};

struct spp_sim {
	struct spp_sim_geometry g;
	int cores, shift;
	struct cache *l1, *l2;  /* per core; l2 NULL when absent */
	struct cache llc;
	struct spp_sim_counts *count; /* per core */
	struct spp_sim_counts muted;  /* where the accesses of a warming pass count */
	int counting, llc_only;
};

static int parse_size(const char *s, const char **end, uint64_t *out)
{
	char *e;
	unsigned long long v;

	if (!isdigit((unsigned char)*s))
		return -1;
	v = strtoull(s, &e, 10);
	switch (toupper((unsigned char)*e)) {
	case 'K':
		v <<= 10, e++;
		break;
	case 'M':
		v <<= 20, e++;
		break;
	case 'G':
		v <<= 30, e++;
		break;
	}
	*out = v;
	*end = e;
	return 0;
}

static int check_level(const char *name, const struct spp_sim_level *l, int line,
		       int required, struct spp_error *err)
{
	if (l->size == 0 && !required)
		return SPP_OK;
	if (l->size == 0 || l->ways < 1)
		return spp_error_set(err, SPP_E_USAGE, "cache model: '%s' needs a size and ways, such as %s=32K/8",
				     name, name);
	if (l->size % ((uint64_t)l->ways * (uint64_t)line))
		return spp_error_set(err, SPP_E_USAGE,
				     "cache model: '%s' of %" PRIu64 " bytes does not divide into %d ways of %d-byte lines",
				     name, l->size, l->ways, line);
	return SPP_OK;
}

static int check_geometry(const struct spp_sim_geometry *g, struct spp_error *err)
{
	int rc;

	if (g->line < 8 || g->line > 4096 || (g->line & (g->line - 1)))
		return spp_error_set(err, SPP_E_USAGE, "cache model: line %d is not a power of two in [8, 4096]",
				     g->line);
	if ((rc = check_level("l1", &g->l1, g->line, 1, err)) ||
	    (rc = check_level("l2", &g->l2, g->line, 0, err)) ||
	    (rc = check_level("llc", &g->llc, g->line, 1, err)))
		return rc;
	return SPP_OK;
}

int spp_sim_geometry_parse(const char *spec, struct spp_sim_geometry *g,
			   struct spp_error *err)
{
	const char *p = spec;

	memset(g, 0, sizeof(*g));
	g->line = 64;
	while (*p) {
		char key[8];
		size_t kl = strcspn(p, "=,");
		struct spp_sim_level *l = NULL;
		uint64_t size, ways = 0;
		const char *e;

		if (kl == 0 || kl >= sizeof(key) || p[kl] != '=')
			return spp_error_set(err, SPP_E_USAGE,
					     "cache model '%s': expected items like l1=48K/12, at '%s'", spec, p);
		memcpy(key, p, kl);
		key[kl] = '\0';
		p += kl + 1;
		if (parse_size(p, &e, &size))
			return spp_error_set(err, SPP_E_USAGE, "cache model '%s': '%s' needs a size", spec, key);
		if (strcmp(key, "line") == 0) {
			if (size > 4096)
				return spp_error_set(err, SPP_E_USAGE, "cache model '%s': line %" PRIu64 " is too large",
						     spec, size);
			g->line = (int)size;
		} else {
			if (strcmp(key, "l1") == 0 || strcmp(key, "l1d") == 0)
				l = &g->l1;
			else if (strcmp(key, "l2") == 0)
				l = &g->l2;
			else if (strcmp(key, "llc") == 0 || strcmp(key, "l3") == 0)
				l = &g->llc;
			else
				return spp_error_set(err, SPP_E_USAGE,
						     "cache model '%s': unknown level '%s' (l1, l2, llc, line)", spec, key);
			if (size && *e == '/') {
				if (parse_size(e + 1, &e, &ways) || ways < 1 || ways > 64)
					return spp_error_set(err, SPP_E_USAGE,
							     "cache model '%s': '%s' needs 1 to 64 ways", spec, key);
			} else if (size) {
				return spp_error_set(err, SPP_E_USAGE,
						     "cache model '%s': '%s' needs /ways after its size", spec, key);
			}
			l->size = size;
			l->ways = (int)ways;
		}
		if (*e && *e != ',')
			return spp_error_set(err, SPP_E_USAGE, "cache model '%s': unexpected '%s'", spec, e);
		p = *e ? e + 1 : e;
	}
	return check_geometry(g, err);
}

static void format_size(uint64_t v, char *buf, size_t n)
{
	if (v && v % (1 << 20) == 0)
		snprintf(buf, n, "%" PRIu64 "M", v >> 20);
	else if (v && v % (1 << 10) == 0)
		snprintf(buf, n, "%" PRIu64 "K", v >> 10);
	else
		snprintf(buf, n, "%" PRIu64, v);
}

void spp_sim_geometry_format(const struct spp_sim_geometry *g, char *buf, size_t n)
{
	char a[24], b[24], c[24];

	format_size(g->l1.size, a, sizeof(a));
	format_size(g->l2.size, b, sizeof(b));
	format_size(g->llc.size, c, sizeof(c));
	if (g->l2.size)
		snprintf(buf, n, "l1=%s/%d,l2=%s/%d,llc=%s/%d,line=%d", a, g->l1.ways, b,
			 g->l2.ways, c, g->llc.ways, g->line);
	else
		snprintf(buf, n, "l1=%s/%d,llc=%s/%d,line=%d", a, g->l1.ways, c, g->llc.ways, g->line);
}

void spp_sim_geometry_default(struct spp_sim_geometry *g)
{
	*g = fallback;
}

/*
 * The tags of a level, zeroed. From 2 MiB up on 2 MiB boundaries with a
 * transparent-huge-page hint: a 64 MiB LLC has 8 MiB of tags, and in a VM
 * first touching them page by page cost 20-40 ms a replay (measured: 100k
 * accesses spread over the sets 40 ms in fresh pages, 6.5 ms in touched
 * ones), more than the replay of a small layer.
 */
static int cache_init(struct cache *c, const struct spp_sim_level *l, int line)
{
	size_t bytes;

	c->ways = l->ways;
	c->sets = l->size / ((uint64_t)l->ways * (uint64_t)line);
	c->mask = (c->sets & (c->sets - 1)) == 0 ? c->sets - 1 : 0;
	bytes = (size_t)(c->sets * (uint64_t)c->ways) * sizeof(*c->tags);
	if (bytes < ((size_t)2 << 20)) {
		c->tags = calloc(1, bytes);
		return c->tags ? 0 : -1;
	}
	bytes = (bytes + ((size_t)2 << 20) - 1) & ~(((size_t)2 << 20) - 1);
	if (posix_memalign((void **)&c->tags, (size_t)2 << 20, bytes)) {
		c->tags = NULL;
		return -1;
	}
#ifdef MADV_HUGEPAGE
	madvise(c->tags, bytes, MADV_HUGEPAGE);
#endif
	memset(c->tags, 0, bytes);
	return 0;
}

void spp_sim_destroy(struct spp_sim *s)
{
	if (!s)
		return;
	for (int c = 0; c < s->cores; c++) {
		if (s->l1)
			free(s->l1[c].tags);
		if (s->l2)
			free(s->l2[c].tags);
	}
	free(s->l1);
	free(s->l2);
	free(s->llc.tags);
	free(s->count);
	free(s);
}

int spp_sim_create(const struct spp_sim_geometry *g, int cores, struct spp_sim **out,
		   struct spp_error *err)
{
	struct spp_sim *s = NULL;
	int rc;

	*out = NULL;
	rc = check_geometry(g, err);
	if (rc)
		return rc;
	if (cores < 1 || cores > SPP_COUNTERS_MAX_THREADS)
		return spp_error_set(err, SPP_E_USAGE, "cache model: %d cores, expected 1 to %d",
				     cores, SPP_COUNTERS_MAX_THREADS);
	s = calloc(1, sizeof(*s));
	if (!s)
		goto nomem;
	s->g = *g;
	s->cores = cores;
	while ((1 << s->shift) < g->line)
		s->shift++;
	s->l1 = calloc((size_t)cores, sizeof(*s->l1));
	s->count = calloc((size_t)cores, sizeof(*s->count));
	s->counting = 1;
	if (!s->l1 || !s->count)
		goto nomem;
	if (g->l2.size) {
		s->l2 = calloc((size_t)cores, sizeof(*s->l2));
		if (!s->l2)
			goto nomem;
	}
	for (int c = 0; c < cores; c++) {
		if (cache_init(&s->l1[c], &g->l1, g->line))
			goto nomem;
		if (s->l2 && cache_init(&s->l2[c], &g->l2, g->line))
			goto nomem;
	}
	if (cache_init(&s->llc, &g->llc, g->line))
		goto nomem;
	*out = s;
	return SPP_OK;
nomem:
	spp_sim_destroy(s);
	return spp_error_set(err, SPP_E_NOMEM, "cache model: out of memory for the tags");
}

/* 1 on a hit; either way the line ends up most recently used. */
static int touch(struct cache *c, uint64_t line)
{
	uint64_t set = c->mask ? line & c->mask : line % c->sets;
	uint64_t *t = c->tags + set * (uint64_t)c->ways, tag = line + 1;
	int w;

	if (t[0] == tag)
		return 1;
	for (w = 1; w < c->ways; w++)
		if (t[w] == tag) {
			memmove(t + 1, t, (size_t)w * sizeof(*t));
			t[0] = tag;
			return 1;
		}
	/* a miss evicts the last way, the least recently used */
	memmove(t + 1, t, (size_t)(c->ways - 1) * sizeof(*t));
	t[0] = tag;
	return 0;
}

void spp_sim_access(struct spp_sim *s, int core, uint64_t addr, uint64_t bytes, int store)
{
	struct spp_sim_counts *n = s->counting ? &s->count[core] : &s->muted;
	uint64_t first = addr >> s->shift, last = (addr + (bytes ? bytes : 1) - 1) >> s->shift;

	/* write-allocate: a store fills a line as a load does */
	(void)store;
	if (s->llc_only) {
		for (uint64_t line = first; line <= last; line++)
			touch(&s->llc, line);
		return;
	}
	for (uint64_t line = first; line <= last; line++) {
		n->l1_acc++;
		if (touch(&s->l1[core], line))
			continue;
		n->l1_miss++;
		if (s->l2) {
			n->l2_acc++;
			if (touch(&s->l2[core], line))
				continue;
			n->l2_miss++;
		}
		n->llc_acc++;
		if (!touch(&s->llc, line))
			n->llc_miss++;
	}
}

static void cache_clear(struct cache *c)
{
	memset(c->tags, 0, (size_t)(c->sets * (uint64_t)c->ways) * sizeof(*c->tags));
}

int spp_sim_same(const struct spp_sim *s, const struct spp_sim_geometry *g, int cores)
{
	return s->cores == cores && s->g.line == g->line && s->g.l1.size == g->l1.size &&
	       s->g.l1.ways == g->l1.ways && s->g.l2.size == g->l2.size &&
	       (!g->l2.size || s->g.l2.ways == g->l2.ways) && s->g.llc.size == g->llc.size &&
	       s->g.llc.ways == g->llc.ways;
}

void spp_sim_reset(struct spp_sim *s)
{
	for (int c = 0; c < s->cores; c++) {
		cache_clear(&s->l1[c]);
		if (s->l2)
			cache_clear(&s->l2[c]);
	}
	cache_clear(&s->llc);
	memset(s->count, 0, (size_t)s->cores * sizeof(*s->count));
	memset(&s->muted, 0, sizeof(s->muted));
	s->counting = 1;
	s->llc_only = 0;
}

void spp_sim_counting(struct spp_sim *s, int on)
{
	s->counting = on;
}

void spp_sim_llc_only(struct spp_sim *s, int on)
{
	s->llc_only = on;
}

void spp_sim_counts(const struct spp_sim *s, int c, struct spp_sim_counts *out)
{
	memset(out, 0, sizeof(*out));
	for (int i = 0; i < s->cores; i++) {
		const struct spp_sim_counts *n = &s->count[i];

		if (c >= 0 && i != c)
			continue;
		out->l1_acc += n->l1_acc, out->l1_miss += n->l1_miss;
		out->l2_acc += n->l2_acc, out->l2_miss += n->l2_miss;
		out->llc_acc += n->llc_acc, out->llc_miss += n->llc_miss;
	}
}

uint64_t spp_sim_total_accesses(const struct spp_sim *s)
{
	struct spp_sim_counts t;

	spp_sim_counts(s, -1, &t);
	return t.l1_acc + s->muted.l1_acc;
}

int spp_sim_cores(const struct spp_sim *s)
{
	return s->cores;
}

void spp_sim_sample(struct spp_counter_sample *smp, const struct spp_sim *sim,
		    const struct spp_sim_geometry *g, int threads, double scale,
		    const struct spp_sim_counts *base)
{
	memset(smp, 0, sizeof(*smp));
	smp->nthreads = threads;
	smp->scaled = 1;
	for (int c = -1; c < threads; c++) {
		double *v = c < 0 ? smp->v : smp->thread[c];
		struct spp_sim_counts k;

		spp_sim_counts(sim, c, &k);
		if (base) {
			const struct spp_sim_counts *b = &base[c + 1];

			k.l1_acc -= b->l1_acc, k.l1_miss -= b->l1_miss, k.l2_acc -= b->l2_acc;
			k.l2_miss -= b->l2_miss, k.llc_acc -= b->llc_acc, k.llc_miss -= b->llc_miss;
		}
		for (int e = 0; e < SPP_CEV_COUNT; e++)
			v[e] = NAN;
		v[SPP_CEV_L1D_ACCESSES] = (double)k.l1_acc * scale;
		v[SPP_CEV_L1D_MISSES] = (double)k.l1_miss * scale;
		if (g->l2.size) {
			v[SPP_CEV_L2_ACCESSES] = (double)k.l2_acc * scale;
			v[SPP_CEV_L2_MISSES] = (double)k.l2_miss * scale;
		}
		v[SPP_CEV_LLC_ACCESSES] = (double)k.llc_acc * scale;
		v[SPP_CEV_LLC_MISSES] = (double)k.llc_miss * scale;
	}
}
