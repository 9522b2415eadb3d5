#include "profiler/machine.h"

#include <ctype.h>
#include <inttypes.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

/* Read the first line of a small sysfs/proc file; 0 or -1. */
static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static void trim(char *s)
{
	size_t n = strlen(s);
	char *p = s;

	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	while (*p && isspace((unsigned char)*p))
		p++;
	memmove(s, p, strlen(p) + 1);
}

static void cpuinfo_field(const char *key, char *out, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];
	size_t klen = strlen(key);

	out[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');
		if (strncmp(line, key, klen) != 0 || !colon)
			continue;
		snprintf(out, len, "%s", colon + 1);
		trim(out);
		break;
	}
	fclose(f);
}

static void hypervisor_name(char *out, size_t len)
{
	out[0] = '\0';
#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d;
	char sig[13];

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 31)))
		return;
	__cpuid(0x40000000, a, b, c, d);
	memcpy(sig, &b, 4);
	memcpy(sig + 4, &c, 4);
	memcpy(sig + 8, &d, 4);
	sig[12] = '\0';
	if (strcmp(sig, "KVMKVMKVM") == 0)
		snprintf(out, len, "KVM");
	else if (strcmp(sig, "Microsoft Hv") == 0)
		snprintf(out, len, "Hyper-V");
	else if (strcmp(sig, "VMwareVMware") == 0)
		snprintf(out, len, "VMware");
	else if (strcmp(sig, "XenVMMXenVMM") == 0)
		snprintf(out, len, "Xen");
	else
		snprintf(out, len, "%s", sig[0] ? sig : "unknown");
#endif
}

/* "48K" / "2048K" / "1M" as sysfs writes them. */
static uint64_t parse_size(const char *s)
{
	char *end = NULL;
	uint64_t v = strtoull(s, &end, 10);

	if (end && (*end == 'K' || *end == 'k'))
		v <<= 10;
	else if (end && *end == 'M')
		v <<= 20;
	else if (end && *end == 'G')
		v <<= 30;
	return v;
}

/* Logical CPUs in a sysfs cpu list such as "0-3,8". */
static int count_cpu_list(const char *s)
{
	int n = 0;

	while (*s) {
		char *end;
		long a = strtol(s, &end, 10), b;
		if (end == s)
			break;
		b = a;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		n += (int)(b - a + 1);
		s = end;
		if (*s == ',')
			s++;
	}
	return n;
}

static void caches_from_sysfs(struct spp_machine *m)
{
	for (int i = 0; i < 16 && m->ncaches < SPP_MAX_CACHES; i++) {
		char path[128], buf[128];
		struct spp_cache_level *c = &m->caches[m->ncaches];

		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
		if (read_line(path, buf, sizeof(buf)))
			break;
		memset(c, 0, sizeof(*c));
		c->level = atoi(buf);
#define SYSFS(field) \
	(snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/" field, i), \
	 read_line(path, buf, sizeof(buf)) == 0)
		if (SYSFS("type"))
			snprintf(c->type, sizeof(c->type), "%.15s",
				 strcmp(buf, "Data") == 0 ? "data" :
				 strcmp(buf, "Instruction") == 0 ? "instruction" :
				 strcmp(buf, "Unified") == 0 ? "unified" : buf);
		if (SYSFS("size"))
			c->size = parse_size(buf);
		if (SYSFS("ways_of_associativity"))
			c->ways = atoi(buf);
		if (SYSFS("coherency_line_size"))
			c->line = atoi(buf);
		if (SYSFS("shared_cpu_list"))
			c->shared_by = count_cpu_list(buf);
#undef SYSFS
		m->ncaches++;
	}
	if (m->ncaches)
		snprintf(m->cache_source, sizeof(m->cache_source), "sysfs");
}


/* AMD's associativity codes of leaf 0x80000006; 0: not given there (9: see leaf 0x8000001d) */
static int amd_ways(unsigned code, uint64_t size, unsigned line)
{
	static const int ways[16] = {0, 1, 2, 0, 4, 0, 8, 0, 16, 0, 32, 48, 64, 96, 128, 0};

	if (code == 0xf && line)
		return (int)(size / line); /* fully associative */
	return ways[code & 0xf];
}

static void add_level(struct spp_machine *m, int level, const char *type, uint64_t size, int ways,
		      int line, int shared_by)
{
	struct spp_cache_level *cl = &m->caches[m->ncaches];

	if (size == 0 || m->ncaches >= SPP_MAX_CACHES)
		return;
	memset(cl, 0, sizeof(*cl));
	cl->level = level;
	snprintf(cl->type, sizeof(cl->type), "%s", type);
	cl->size = size;
	cl->ways = ways;
	cl->line = line;
	cl->shared_by = shared_by;
	m->ncaches++;
}

void spp_machine_caches_amd_legacy(struct spp_machine *m, unsigned ecx5, unsigned ecx6, unsigned edx6)
{
	uint64_t l1 = (uint64_t)(ecx5 >> 24) << 10, l2 = (uint64_t)(ecx6 >> 16) << 10;
	uint64_t l3 = (uint64_t)(edx6 >> 18) << 19;
	unsigned l1_ways = (ecx5 >> 16) & 0xff;

	/* L1's associativity is a count (0xff: fully associative) */
	add_level(m, 1, "data", l1, l1_ways == 0xff && (ecx5 & 0xff) ? (int)(l1 / (ecx5 & 0xff)) : (int)l1_ways,
		  (int)(ecx5 & 0xff), 1);
	add_level(m, 2, "unified", l2, amd_ways((ecx6 >> 12) & 0xf, l2, ecx6 & 0xff), (int)(ecx6 & 0xff), 1);
	add_level(m, 3, "unified", l3, amd_ways((edx6 >> 12) & 0xf, l3, edx6 & 0xff), (int)(edx6 & 0xff),
		  m->logical_cpus > 0 ? m->logical_cpus : 1);
	if (m->ncaches)
		snprintf(m->cache_source, sizeof(m->cache_source), "cpuid-amd");
}

#if defined(__x86_64__) || defined(__i386__)
/* Deterministic cache parameters: Intel leaf 4, AMD leaf 0x8000001d. */
static void caches_from_cpuid(struct spp_machine *m)
{
	unsigned leaf = strcmp(m->vendor, "AuthenticAMD") == 0 ? 0x8000001du : 4u;
	unsigned max = __get_cpuid_max(leaf & 0x80000000u, NULL);

	if (max < leaf)
		return;
	for (unsigned i = 0; i < 16 && m->ncaches < SPP_MAX_CACHES; i++) {
		unsigned a, b, c, d, type, ways, line;

		__cpuid_count(leaf, i, a, b, c, d);
		type = a & 0x1f;
		if (type == 0)
			break;
		ways = ((b >> 22) & 0x3ff) + 1;
		line = (b & 0xfff) + 1;
		add_level(m, (int)((a >> 5) & 7), type == 1 ? "data" : type == 2 ? "instruction" : "unified",
			  (uint64_t)ways * (((b >> 12) & 0x3ff) + 1) * line * ((uint64_t)c + 1), (int)ways,
			  (int)line, (int)((a >> 14) & 0xfff) + 1);
	}
	if (m->ncaches)
		snprintf(m->cache_source, sizeof(m->cache_source), "cpuid");
}

/* AMD's older leaves, for a hypervisor that passes no cache topology (leaf 0x8000001d empty). */
static void caches_from_amd_legacy(struct spp_machine *m)
{
	unsigned a, b, c5, d, c6, d6;

	if (strcmp(m->vendor, "AuthenticAMD") != 0 || __get_cpuid_max(0x80000000u, NULL) < 0x80000006u)
		return;
	__cpuid(0x80000005u, a, b, c5, d);
	__cpuid(0x80000006u, a, b, c6, d6);
	spp_machine_caches_amd_legacy(m, c5, c6, d6);
}
#endif

/* no shipping CPU has more than this much last-level cache per core */
#define MAX_LLC_PER_CPU (UINT64_C(32) << 20)

uint64_t spp_machine_largest_cache(const struct spp_machine *m)
{
	uint64_t max = 0;

	for (int i = 0; i < m->ncaches; i++) {
		uint64_t size = m->caches[i].size;
		if (m->caches[i].shared_by > 0 &&
		    size > MAX_LLC_PER_CPU * (uint64_t)m->caches[i].shared_by)
			size = MAX_LLC_PER_CPU * (uint64_t)m->caches[i].shared_by;
		if (size > max)
			max = size;
	}
	return max;
}

const char *spp_bw_level_name(enum spp_bw_level l)
{
	static const char *const names[SPP_BW_LEVELS] = {"L1", "L2", "LLC", "DRAM"};

	return l >= 0 && l < SPP_BW_LEVELS ? names[l] : "?";
}

/* Size of the data cache at level (1, 2), times the instances `threads` threads use. */
static uint64_t private_capacity(const struct spp_machine *m, int level, int threads)
{
	for (int i = 0; i < m->ncaches; i++) {
		const struct spp_cache_level *c = &m->caches[i];
		int share = c->shared_by > 0 ? c->shared_by : 1;

		if (c->level == level && strcmp(c->type, "instruction") != 0)
			return c->size * (uint64_t)((threads + share - 1) / share);
	}
	return 0;
}

void spp_bw_capacities(const struct spp_machine *m, int threads, uint64_t cap[SPP_BW_LEVELS])
{
	if (threads < 1)
		threads = 1;
	cap[SPP_BW_L1] = private_capacity(m, 1, threads);
	cap[SPP_BW_L2] = private_capacity(m, 2, threads);
	cap[SPP_BW_LLC] = spp_machine_largest_cache(m);
	/* a level no larger than the one below adds nothing */
	if (cap[SPP_BW_LLC] <= cap[SPP_BW_L2])
		cap[SPP_BW_LLC] = 0;
	cap[SPP_BW_DRAM] = UINT64_MAX;
}

enum spp_bw_level spp_bw_level_of(const uint64_t cap[SPP_BW_LEVELS], double bytes, int cold)
{
	if (cold)
		return SPP_BW_DRAM;
	for (int l = 0; l < SPP_BW_DRAM; l++)
		if (cap[l] > 0 && bytes <= (double)cap[l])
			return (enum spp_bw_level)l;
	return SPP_BW_DRAM;
}

void spp_bw_model_init(struct spp_bw_model *b, const struct spp_machine *m, int threads, int cold)
{
	memset(b, 0, sizeof(*b));
	spp_bw_capacities(m, threads, b->cap);
	b->cold = cold;
	if (m->have_calibration && m->cal.threads == threads) {
		for (int l = 0; l < SPP_BW_LEVELS; l++)
			b->gbs[l] = m->cal.level_gbs[l];
		b->peak_gflops = m->cal.peak_gflops;
	}
}

/*
 * Virtual machines pass the host's figures through, so a 2-CPU guest can
 * "have" a 480 MiB L3. Flag what no real cache hierarchy looks like.
 */
void spp_machine_check_caches(struct spp_machine *m)
{
	uint64_t prev = 0;
	int prev_level = 0;

	m->cache_note[0] = '\0';
	if (m->ncaches == 0) {
		snprintf(m->cache_note, sizeof(m->cache_note),
			 "the OS reports no cache geometry");
		return;
	}
	for (int i = 0; i < m->ncaches; i++) {
		const struct spp_cache_level *c = &m->caches[i];

		if (strcmp(c->type, "instruction") == 0)
			continue;
		if (c->size == 0 || (c->ways > 0 && c->line > 0 &&
				     c->size % ((uint64_t)c->ways * c->line))) {
			snprintf(m->cache_note, sizeof(m->cache_note),
				 "L%d size %llu bytes does not divide into %d ways of %d-byte lines",
				 c->level, (unsigned long long)c->size, c->ways, c->line);
			return;
		}
		if (c->level > prev_level && prev && c->size < prev) {
			snprintf(m->cache_note, sizeof(m->cache_note),
				 "L%d (%llu KiB) is smaller than the level below it",
				 c->level, (unsigned long long)(c->size >> 10));
			return;
		}
		if (c->level >= 3 && c->shared_by > 0 &&
		    c->size / (uint64_t)c->shared_by > MAX_LLC_PER_CPU) {
			snprintf(m->cache_note, sizeof(m->cache_note),
				 "L%d of %llu MiB shared by %d CPUs is implausible: likely the "
				 "host's figure passed through by the hypervisor",
				 c->level, (unsigned long long)(c->size >> 20), c->shared_by);
			return;
		}
		prev = c->size;
		prev_level = c->level;
	}
}

static int usable(const struct spp_cache_level *c)
{
	return c->size > 0 && c->ways > 0 && c->line > 0 &&
	       c->size % ((uint64_t)c->ways * (uint64_t)c->line) == 0;
}

void spp_sim_geometry_from_machine(const struct spp_machine *m, struct spp_sim_geometry *g,
				   char *note, size_t note_n)
{
	const struct spp_cache_level *l1 = NULL, *l2 = NULL, *last = NULL;
	struct spp_cache_level guessed;
	char buf[256] = "";
	size_t len = 0;

	spp_sim_geometry_default(g);
	for (int i = 0; m && i < m->ncaches; i++) {
		const struct spp_cache_level *c = &m->caches[i];

		if (strcmp(c->type, "instruction") == 0)
			continue;
		/* a last level of known size whose associativity the CPU left unsaid */
		if (c->ways == 0 && c->level >= 3 && c->line > 0 && c->size % (16u * (unsigned)c->line) == 0) {
			guessed = *c;
			guessed.ways = 16;
			c = &guessed;
			len += (size_t)snprintf(buf + len, sizeof(buf) - len,
						"L%d associativity not reported: 16 ways assumed; ", c->level);
		}
		if (!usable(c))
			continue;
		if (c->level == 1)
			l1 = c;
		else if (c->level == 2)
			l2 = c;
		if (c->level >= 2 && (!last || c->level > last->level))
			last = c;
	}
	if (l1) {
		g->l1 = (struct spp_sim_level){l1->size, l1->ways};
		g->line = l1->line;
	} else {
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "no L1D geometry from the OS: 48K/12 assumed; ");
	}
	if (last && last != l2) {
		uint64_t size = last->size, cap = spp_machine_largest_cache(m);
		uint64_t unit = (uint64_t)last->ways * (uint64_t)last->line;

		g->l2 = l2 ? (struct spp_sim_level){l2->size, l2->ways} : (struct spp_sim_level){0, 0};
		if (cap && cap < size) {
			size = cap / unit * unit;
			len += (size_t)snprintf(buf + len, sizeof(buf) - len,
						"LLC: the OS reports %" PRIu64 " MiB (a hypervisor's figure), modelled as %" PRIu64
						" MiB, the believable size; ",
						last->size >> 20, size >> 20);
		}
		g->llc = (struct spp_sim_level){size, last->ways};
	} else if (l2) {
		/* two levels: the L2 is the last level, shared in the model */
		g->l2 = (struct spp_sim_level){0, 0};
		g->llc = (struct spp_sim_level){l2->size, l2->ways};
	} else {
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "no L2/LLC geometry from the OS: 2M/16 and 32M/16 assumed; ");
	}
	if (len >= 2 && len < sizeof(buf))
		buf[len - 2] = '\0';
	if (note && note_n)
		snprintf(note, note_n, "%s", buf);
}

void spp_machine_describe(struct spp_machine *m, int threads)
{
	memset(m, 0, sizeof(*m));
	cpuinfo_field("model name", m->cpu, sizeof(m->cpu));
	cpuinfo_field("vendor_id", m->vendor, sizeof(m->vendor));
	hypervisor_name(m->hypervisor, sizeof(m->hypervisor));
	m->isa = spp_isa_detect();
	m->logical_cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	m->threads = threads > 0 ? threads : m->logical_cpus;
	caches_from_sysfs(m);
#if defined(__x86_64__) || defined(__i386__)
	if (m->ncaches == 0)
		caches_from_cpuid(m);
	if (m->ncaches == 0)
		caches_from_amd_legacy(m);
#endif
	spp_machine_check_caches(m);
	spp_blas_info(&m->blas);
	m->ncounters = spp_counters_probe_all(m->counters, SPP_COUNTERS_MAX_BACKENDS);
	m->have_calibration =
		spp_calibration_load(m->cpu, m->threads, &m->cal) == 0;
	spp_sim_geometry_from_machine(m, &m->sim, m->sim_note, sizeof(m->sim_note));
	spp_cuda_probe(&m->gpus);
}
