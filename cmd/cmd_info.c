/* spprof info: the machine, the dense BLAS, calibration, counter sources. */
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "profiler/session.h"
#include "config.h"
#include "counters/counters.h"
#include "counters/sim.h"
#include "kernels/cuda/device.h"
#include "kernels/dense/dense.h"
#include "kernels/dense/lowp_dense.h"
#if HAVE_CUDA
#include "counters/cupti.h"
#endif
#include "profiler/machine.h"
#include "reports/json_values.h"
#include "reports/report.h"

struct info_args {
	int threads;
	const char *dense, *format;
};

static const struct cmd_option info_options[] = {
	{CMD_OPT_THREADS(struct info_args, threads),
	 .help = "describe a run on T threads: the threads line and the calibrated peaks "
		 "for T; default: all logical CPUs"},
	{CMD_OPT_DENSE(struct info_args, dense),
	 .help = "the dense candidates to list: openblas, onednn, blis, spprof, or a variant "
		 "such as openblas:Haswell; default all"},
	{CMD_OPT_FORMAT(struct info_args, format), .help = "text (default) or json"},
	{0},
};

const struct cmd_help cmd_info_help = {
	.head = "usage: spprof info [--threads T] [--dense L,...] [--format text|json]\n"
		"\n"
		"Describe this machine as a report's \"machine\" block does: CPU model and\n"
		"vector ISA, cache sizes (with a note when the OS reports something no real\n"
		"CPU has), threads, the dense BLAS (name, version, core type in use, and\n"
		"OPENBLAS_CORETYPE when set), every dense baseline candidate (OpenBLAS,\n"
		"oneDNN, BLIS, and OpenBLAS on its best core where its detection fell\n"
		"short; --dense restricts them) with what it detected and whether it runs\n"
		"here, and the calibrated peaks for T threads\n"
		"(measure them with 'spprof calibrate'), and each counter backend (papi,\n"
		"perf, sim, none): whether it counts here, what, and why not; and the CUDA\n"
		"devices, or why there are none (\"cuda: no device (driver not found)\").\n",
	.options = info_options,
};

static void print_size(FILE *f, uint64_t b)
{
	if (b >= (UINT64_C(1) << 20) && b % (UINT64_C(1) << 20) == 0)
		fprintf(f, "%llu MiB", (unsigned long long)(b >> 20));
	else
		fprintf(f, "%llu KiB", (unsigned long long)(b >> 10));
}

/*
 * The simulator's sampling error against full replays, measured here on
 * its two synthetic layers (counters/sim.h), and its speed.
 */
static void print_sim_sampling(const struct spp_machine *m)
{
	static const char *const lev[3] = {"L1D", "L2", "LLC"};
	struct spp_sim_sampling c;
	struct spp_error err;

	if (spp_sim_check_sampling(&m->sim, m->isa, &c, &err)) {
		printf("               sampling error: not measured: %s\n", err.msg);
		return;
	}
	printf("               replays %.3g line accesses/s (%s kernels); sampling error, warm, "
	       "against full replays:\n", c.rate, spp_isa_name(m->isa));
	for (int i = 0; i < c.ncases; i++) {
		printf("                 %s, %.3g %% simulated (%.1fx faster):", c.cases[i].what,
		       100 * c.cases[i].sampled, c.cases[i].speedup);
		for (int l = 0; l < 3; l++)
			if (isnan(c.cases[i].err[l]))
				printf(" %s no misses%s", lev[l], l < 2 ? "," : "\n");
			else
				printf(" %s %+.1f %%%s", lev[l], 100 * c.cases[i].err[l], l < 2 ? "," : "\n");
	}
}

/* One line per counter backend: works here or not, what it counts, why not. */
static void print_counters(const struct spp_machine *m)
{
	for (int i = 0; i < m->ncounters; i++) {
		const struct spp_counter_avail *a = &m->counters[i];
		const struct spp_counter_backend *b = spp_counter_backend_find(a->name);
		int any = 0;

		printf("%s%s: %s", i ? "             " : "counters     ", a->name,
		       a->works ? "works" : "unavailable");
		if (a->works && a->events) {
			printf(", counts");
			for (int e = 0; e < SPP_CEV_COUNT; e++)
				if (a->events >> e & 1)
					printf("%s %s", any++ ? "," : "", spp_counter_event_name(e));
		}
		if (a->why[0])
			printf("%s%s", a->works ? "; " : ": ", a->why);
		else if (!a->events && b)
			printf(" (%s)", b->summary);
		printf("\n");
		if (strcmp(a->name, "sim") == 0) {
			char geo[96];

			spp_sim_geometry_format(&m->sim, geo, sizeof(geo));
			printf("               models %s%s%s\n", geo, m->sim_note[0] ? "; " : "", m->sim_note);
			print_sim_sampling(m);
		}
	}
	if (m->ncounters) {
		const struct spp_counter_backend *b = NULL;
		struct spp_error err;
		char why[512];

		if (spp_counters_select("auto", m->counters, m->ncounters, &b, why, sizeof(why), &err) == 0)
			printf("             --counters auto: %s\n", why);
	}
}

/* CUPTI's line: what the counters of the CUDA runs would come from, or why none. */
static void print_cupti(const struct spp_cuda_probe *p)
{
#if HAVE_CUDA
	char line[320];

	spp_cupti_probe(p->ndevices > 0, line, sizeof(line));
	printf("cupti        %s\n", line);
#else
	(void)p;
	printf("cupti        not in this build (no CUDA backend)\n");
#endif
}

/* One line per CUDA device, or one saying why there is none; then CUPTI's. */
static void print_gpus(const struct spp_cuda_probe *p)
{
	char line[320];

	if (!p->ndevices) {
		printf("gpu          cuda: %s\n", p->why);
		print_cupti(p);
		return;
	}
	for (int i = 0; i < p->ndevices; i++) {
		spp_cuda_device_describe(p, i, line, (int)sizeof(line));
		printf("%s%d %s\n", i ? "             cuda:" : "gpu          cuda:", i, line);
	}
	printf("             cuda runtime %d.%d, driver %d.%d\n", p->runtime_version / 1000,
	       p->runtime_version % 1000 / 10, p->driver_version / 1000, p->driver_version % 1000 / 10);
	print_cupti(p);
}

/* One line per dense candidate: what it is, where it came from, or why it cannot run. */
static void print_dense(const struct spp_dense_set *set)
{
	for (int i = 0; i < set->n; i++) {
		const struct spp_dense_cand *c = &set->c[i];
		char what[128];

		spp_dense_describe(c, what, sizeof(what));
		if (c->ok)
			printf("%s%s: %s; %s\n", i ? "             " : "dense        ", c->name, what, c->origin);
		else
			printf("%s%s: unavailable: %s (%s)\n", i ? "             " : "dense        ", c->name,
			       c->reason, c->origin);
	}
}

/*
 * The low-precision dense candidates (issue 47): each precision by each
 * library, opened on a W of LOWP_M x LOWP_M and run at N = LOWP_N and 1 on
 * one thread, both checked against the reference; what oneDNN ran at each
 * (its kernels depend on the shape), or why it cannot run here.
 */
#define LOWP_M 1024
#define LOWP_N 64

struct lowp_row {
	char name[16];          /* "onednn" */
	char what[160];         /* "oneDNN matmul 2.6.3 bf16", "" when unavailable */
	char isa[48];
	char impl[2][64];       /* at N = LOWP_N and at N = 1 */
	char reason[256];       /* why unavailable; "" */
};

static void lowp_row(struct lowp_row *r, const struct spp_dense_lowp_lib *lib, enum spp_prec p,
		     const float *w, void *xv, const float *x)
{
	struct spp_dense_lowp c;
	struct spp_matrix wm = {LOWP_M, LOWP_M, w};
	struct spp_error err = {0};
	int rc = spp_dense_lowp_open(&c, lib->key, p, w ? &wm : NULL, &err);

	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", lib->key);
	for (int i = 0; i < 2 && rc == SPP_OK; i++) {
		struct spp_dense_lowp_x xq;

		rc = spp_dense_lowp_quantize_x(p, 1, 0, x, LOWP_M, i ? 1 : LOWP_N, xv, &xq, &err);
		if (rc == SPP_OK)
			rc = spp_dense_lowp_verify(&c, &xq, 1, &err);
		snprintf(r->impl[i], sizeof(r->impl[i]), "%s", c.impl);
	}
	snprintf(r->isa, sizeof(r->isa), "%s", c.isa);
	if (rc == SPP_OK)
		snprintf(r->what, sizeof(r->what), "%s %s %s", lib->name, c.version, spp_prec_name(p));
	else
		snprintf(r->reason, sizeof(r->reason), "%s", err.msg);
	spp_dense_lowp_close(&c);
}

/* rows[p][l] for every precision p and library l (at most 4); the number of libraries. */
static int lowp_rows(struct lowp_row rows[SPP_PREC_COUNT][4])
{
	float *w = malloc(sizeof(float) * LOWP_M * LOWP_M), *x = malloc(sizeof(float) * LOWP_M * LOWP_N);
	void *xv = malloc(sizeof(uint16_t) * LOWP_M * LOWP_N);
	int nl = 0;

	for (int64_t i = 0; w && i < LOWP_M * LOWP_M; i++)
		w[i] = (float)((i * 7919) % 2001 - 1000) / 1000.0f;
	for (int64_t i = 0; x && i < LOWP_M * LOWP_N; i++)
		x[i] = (float)((i * 104729) % 2001 - 1000) / 1000.0f;
	while (spp_dense_lowp_libs[nl] && nl < 4)
		nl++;
	for (int p = SPP_PREC_BF16; p < SPP_PREC_COUNT; p++)
		for (int l = 0; l < nl; l++) {
			lowp_row(&rows[p][l], spp_dense_lowp_libs[l], (enum spp_prec)p,
				 w && x && xv ? w : NULL, xv, x);
			if (!w || !x || !xv)
				snprintf(rows[p][l].reason, sizeof(rows[p][l].reason), "out of memory");
		}
	free(w), free(x), free(xv);
	return nl;
}

static void print_lowp(void)
{
	struct lowp_row rows[SPP_PREC_COUNT][4];
	int nl = lowp_rows(rows);

	for (int p = SPP_PREC_BF16; p < SPP_PREC_COUNT; p++)
		for (int l = 0; l < nl; l++) {
			const struct lowp_row *r = &rows[p][l];
			char head[32];

			snprintf(head, sizeof(head), "dense %s", spp_prec_name((enum spp_prec)p));
			printf("%-13s%s: ", l ? "" : head, r->name);
			if (r->what[0])
				printf("%s, %s at %dx%dx%d, %s at N=1 (dispatches %s)\n", r->what, r->impl[0],
				       LOWP_M, LOWP_M, LOWP_N, r->impl[1], r->isa);
			else
				printf("unavailable: %s\n", r->reason);
		}
}

/* The same as JSON: {"bf16": [{"name", "library", "isa", "impl", "impl_n1", "reason"}], ...}. */
static cJSON *json_lowp(void)
{
	struct lowp_row rows[SPP_PREC_COUNT][4];
	int nl = lowp_rows(rows);
	cJSON *o = cJSON_CreateObject();

	for (int p = SPP_PREC_BF16; o && p < SPP_PREC_COUNT; p++) {
		cJSON *a = cJSON_CreateArray();

		for (int l = 0; a && l < nl; l++) {
			const struct lowp_row *r = &rows[p][l];
			cJSON *c = cJSON_CreateObject();
			int ok = r->what[0] != 0;

			if (!c)
				break;
			spp_json_put(c, "name", spp_json_str(r->name));
			spp_json_put(c, "ok", cJSON_CreateBool(ok));
			spp_json_put(c, "library", ok ? spp_json_str(r->what) : cJSON_CreateNull());
			spp_json_put(c, "isa", spp_json_str(r->isa));
			spp_json_put(c, "impl", ok ? spp_json_str(r->impl[0]) : cJSON_CreateNull());
			spp_json_put(c, "impl_n1", ok ? spp_json_str(r->impl[1]) : cJSON_CreateNull());
			spp_json_put(c, "reason", ok ? cJSON_CreateNull() : spp_json_str(r->reason));
			cJSON_AddItemToArray(a, c);
		}
		spp_json_put(o, spp_prec_name((enum spp_prec)p), a);
	}
	return o;
}

static void print_text(const struct spp_machine *m, const struct spp_dense_set *set)
{
	printf("cpu          %s%s%s%s\n", m->cpu[0] ? m->cpu : "unknown",
	       m->vendor[0] ? " (" : "", m->vendor, m->vendor[0] ? ")" : "");
	if (m->hypervisor[0])
		printf("virtualized  %s guest\n", m->hypervisor);
	if (m->isa != spp_isa_cpu())
		printf("vector isa   %s (SPPROF_ISA; the CPU has %s)\n", spp_isa_name(m->isa),
		       spp_isa_name(spp_isa_cpu()));
	else
		printf("vector isa   %s\n", spp_isa_name(m->isa));
	if (m->isa >= SPP_ISA_AVX512)
		printf("bitmask N=1  %s expand%s\n", spp_expand_name(spp_expand_detect()),
		       spp_expand_detect() != spp_expand_cpu() ? " (SPPROF_EXPAND)" : "");
	printf("build        %s build, kernels %s, %s%s%s\n", SPP_BUILD_TYPE, SPP_KERNEL_FLAGS, SPP_COMPILER,
	       strcmp(SPP_SANITIZE, "none") ? ", sanitize " : "", strcmp(SPP_SANITIZE, "none") ? SPP_SANITIZE : "");
	printf("threads      %d of %d logical CPUs\n", m->threads, m->logical_cpus);
	{
		double t[2], load = spp_load_1m();

		/* is it quiet enough to time on (the report's machine.conditions, while it runs) */
		spp_cpu_ticks(t);
		if (isfinite(load))
			printf("load         %.2f (1 minute)%s", load, t[0] > 0 ? "" : "\n");
		if (isfinite(load) && t[0] > 0)
			printf(", steal %.2f%% of CPU time since boot\n", 100 * t[1] / t[0]);
	}
	printf("caches       ");
	for (int i = 0; i < m->ncaches; i++) {
		const struct spp_cache_level *c = &m->caches[i];
		if (strcmp(c->type, "instruction") == 0)
			continue;
		printf("%sL%d%s ", i ? ", " : "", c->level,
		       strcmp(c->type, "data") == 0 ? "d" : "");
		print_size(stdout, c->size);
		if (c->ways)
			printf(" %d-way", c->ways);
		if (c->shared_by > 1)
			printf(" shared by %d", c->shared_by);
	}
	printf("%s(%s)\n", m->ncaches ? " " : "", m->cache_source[0] ? m->cache_source : "none");
	if (m->cache_note[0])
		printf("             note: %s\n", m->cache_note);
	printf("dense blas   %s %s, core %s, %d threads, OPENBLAS_CORETYPE %s\n",
	       m->blas.name, m->blas.version, m->blas.core[0] ? m->blas.core : "unknown",
	       m->blas.max_threads,
	       !m->blas.coretype_set ? "unset" : m->blas.coretype_env[0] ? m->blas.coretype_env
									  : "set, empty");
	print_dense(set);
	print_lowp();
	if (m->have_calibration)
		printf("calibration  %d threads: read %.1f GB/s (DRAM), L1 %.1f, L2 %.1f, LLC %.1f GB/s, "
		       "triad %.1f GB/s, peak %.1f GFLOP/s (%s), measured %s\n",
		       m->cal.threads, m->cal.read_gbs, m->cal.level_gbs[SPP_BW_L1],
		       m->cal.level_gbs[SPP_BW_L2], m->cal.level_gbs[SPP_BW_LLC], m->cal.triad_gbs,
		       m->cal.peak_gflops, m->cal.isa, m->cal.when);
	else
		printf("calibration  none for %d threads: run 'spprof calibrate'\n",
		       m->threads);
	print_counters(m);
	print_gpus(&m->gpus);
}

int cmd_info(int argc, char **argv)
{
	struct spp_machine m;
	struct spp_dense_set set;
	struct info_args args = {0, NULL, "text"};
	const char *format, *dense;
	int rc, npos;

	if ((rc = cmd_parse_options("info", info_options, &args, argc, argv, &npos)))
		return rc;
	if (npos)
		return cmd_usage_error("info", "unexpected argument '%s'", argv[1]);
	format = args.format, dense = args.dense;
	if (strcmp(format, "text") != 0 && strcmp(format, "json") != 0)
		return cmd_usage_error("info", "unknown --format '%s' (text, json)", format);

	spp_machine_describe(&m, args.threads);
	/* candidates that cannot run are listed with the reason, so this never fails */
	{
		struct spp_dense_want want;
		struct spp_error err = {0};
		char storage[512];

		if (dense)
			spp_dense_parse(dense, &want, storage, sizeof(storage), &err);
		spp_dense_set_open(&set, dense ? &want : NULL, m.isa, &err);
	}
	if (strcmp(format, "json") == 0) {
		double t[2];
		cJSON *o;
		char *text;

		spp_cpu_ticks(t);
		o = spp_report_info(&m, &set, spp_load_1m(), t);
		/* the low-precision dense candidates: info's own, not the report's machine block */
		if (o && spp_json_put(o, "dense_precisions", json_lowp()) != 0) {
			cJSON_Delete(o);
			o = NULL;
		}
		text = o ? spp_json_text_exact(o, 1) : NULL;
		cJSON_Delete(o);
		spp_dense_set_close(&set);
		if (!text) {
			fprintf(stderr, "spprof info: out of memory\n");
			return 3;
		}
		puts(text);
		cJSON_free(text);
		return 0;
	}
	print_text(&m, &set);
	spp_dense_set_close(&set);
	return 0;
}
