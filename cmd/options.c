#include "cmd/cmd.h"
#include "base/safe_text.h"
#include "reports/report.h"
#include "kernels/dense/dense.h"
#include "kernels/kernels.h"
#include "kernels/peers.h"
#include "profiler/session.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cmd_fail(const struct spp_error *err)
{
	fprintf(stderr, "spprof: %s\n",
		err->msg[0] ? err->msg : spp_status_message(err->code));
	return spp_status_exit_code(err->code);
}

int cmd_usage_error(const char *cmd, const char *fmt, ...)
{
	char what[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	/* arguments are shown escaped: one line, nothing for the terminal */
	fprintf(stderr, "spprof %s: ", cmd);
	spp_safe_fputs(stderr, what, (size_t)-1);
	fprintf(stderr, " (see 'spprof help %s')\n", cmd);
	return 2;
}

int cmd_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out)
{
	char *end = NULL;
	long long v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

int cmd_parse_u64(const char *s, uint64_t *out)
{
	char *end = NULL;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int cmd_use_color(int fd)
{
	const char *nc = getenv("NO_COLOR");
	if (nc && *nc)
		return 0;
	return isatty(fd);
}

int cmd_output_format(const char *cmd, const char *format_name,
		      const char *output, enum spp_report_format *fmt)
{
	*fmt = SPP_REPORT_TEXT;
	if (format_name) {
		if (spp_report_format_from_name(format_name, fmt))
			return cmd_usage_error(cmd, "unknown --format '%s'", format_name);
		return 0;
	}
	if (output && spp_report_format_from_path(output, fmt)) {
		const char *slash = strrchr(output, '/'), *dot = strrchr(slash ? slash + 1 : output, '.');

		/* a name without an extension is text; one with an extension no writer has is a mistake
		 * (-o r.xlsx wrote text silently) */
		if (dot && dot[1])
			return cmd_usage_error(cmd, "cannot tell the report format from '%s': name it .txt, .json, "
					       ".csv, .md or .html, or give --format", output);
		*fmt = SPP_REPORT_TEXT;
	}
	return 0;
}

int cmd_dense_check(const char *cmd, const char *list)
{
	struct spp_dense_want want;
	struct spp_error err = {0};
	char storage[512];

	if (list && spp_dense_parse(list, &want, storage, sizeof(storage), &err))
		return cmd_usage_error(cmd, "%s", err.msg);
	return 0;
}

int cmd_session_open(const char *cmd, const struct spp_session_opts *o, struct spp_machine *m,
		     int quiet, struct spp_session *s)
{
	struct spp_error err = {0};
	int rc = spp_session_open(s, o, m, NULL, &err);
	const struct spp_dense_set *d = &s->rec->dense;

	for (int i = 0; !quiet && i < d->n; i++)
		if (!d->c[i].ok)
			fprintf(stderr, "spprof %s: warning: dense baseline %s: not a candidate: %s\n", cmd,
				d->c[i].name, d->c[i].reason);
	return rc ? cmd_fail(&err) : 0;
}

int cmd_parse_time_budget(const char *cmd, const char *arg, double *out)
{
	char *end = NULL;
	double d = strtod(arg, &end);

	if (!*arg || *end || !isfinite(d) || d <= 0 || d > CMD_MAX_TIME_BUDGET_S)
		return cmd_usage_error(cmd, "--time-budget wants seconds in (0, %d], not '%s'",
				       CMD_MAX_TIME_BUDGET_S, arg);
	*out = d;
	return 0;
}

int cmd_parse_formats(const char *cmd, const char *list, const struct spp_format_ops **out, int max,
		      int *n, int dense_alone_ok)
{
	char buf[512], *save = NULL;
	int dense = 0;

	if (snprintf(buf, sizeof(buf), "%s", list) >= (int)sizeof(buf))
		return cmd_usage_error(cmd, "--formats list too long");
	*n = 0;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		const struct spp_format_ops *f = spp_cpu_format_find(t);
		int dup = 0;

		if (strcmp(t, "dense") == 0) {
			dense = 1; /* the baseline always runs */
			continue;
		}
		if (!f)
			return cmd_usage_error(cmd, "unknown format '%s' in --formats", t);
		for (int i = 0; i < *n; i++)
			dup |= out[i] == f;
		if (!dup && *n < max)
			out[(*n)++] = f;
	}
	if (*n == 0 && !(dense_alone_ok && dense))
		return cmd_usage_error(cmd, "--formats names no format");
	return 0;
}

int cmd_parse_peers(const char *cmd, const char *list, const struct spp_format_ops **out, int max,
		    int *n)
{
	char buf[256], *save = NULL;

	if (snprintf(buf, sizeof(buf), "%s", list) >= (int)sizeof(buf))
		return cmd_usage_error(cmd, "--peers list too long");
	*n = 0;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		const struct spp_format_ops *p = spp_cpu_peer_find(t);
		int dup = 0;

		if (!p && spp_cpu_peer_known(t)) {
			fprintf(stderr, "spprof %s: peer '%s' is not built into this spprof "
					"(install its library and rebuild, e.g. -D%s=enabled)\n", cmd, t, t);
			return 2;
		}
		if (!p)
			return cmd_usage_error(cmd, "unknown peer '%s' in --peers (known: %s)", t,
					       spp_cpu_peer_names());
		for (int i = 0; i < *n; i++)
			dup |= out[i] == p;
		if (!dup && *n < max)
			out[(*n)++] = p;
	}
	return *n ? 0 : cmd_usage_error(cmd, "--peers names no peer");
}

int cmd_parse_backends(const char *cmd, const char *list, int *cpu, int *cuda)
{
	char buf[256], *save = NULL;
	int n = 0;

	*cpu = *cuda = 0;
	if (snprintf(buf, sizeof(buf), "%s", list) >= (int)sizeof(buf))
		return cmd_usage_error(cmd, "--backends list too long");
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save), n++) {
		if (strcmp(t, "cpu") == 0)
			(*cpu)++;
		else if (strcmp(t, "cuda") == 0)
			(*cuda)++;
		else
			return cmd_usage_error(cmd, "unknown backend '%s' in --backends (cpu, cuda)", t);
	}
	return n ? 0 : cmd_usage_error(cmd, "--backends names no backend");
}

int cmd_opt_time_budget(const char *cmd, const struct cmd_option *o, const char *arg, void *args)
{
	return cmd_parse_time_budget(cmd, arg, (double *)((char *)args + o->off));
}

int cmd_opt_dense(const char *cmd, const struct cmd_option *o, const char *arg, void *args)
{
	if (cmd_dense_check(cmd, arg))
		return 2;
	*(const char **)((char *)args + o->off) = arg;
	return 0;
}

int cmd_opt_formats(const char *cmd, const struct cmd_option *o, const char *arg, void *args)
{
	return cmd_parse_formats(cmd, arg, (const struct spp_format_ops **)((char *)args + o->off),
				 o->room, (int *)((char *)args + o->off_n),
				 (o->flags & CMD_FORMATS_DENSE_ALONE) != 0);
}

int cmd_opt_peers(const char *cmd, const struct cmd_option *o, const char *arg, void *args)
{
	return cmd_parse_peers(cmd, arg, (const struct spp_format_ops **)((char *)args + o->off),
			       o->room, (int *)((char *)args + o->off_n));
}

int cmd_emit_report(cJSON *report, enum spp_report_format fmt, const char *output,
		    struct spp_error *err)
{
	struct spp_render_opts ropts = {0};
	int rc;

	if (output) {
		rc = spp_report_write_file(report, fmt, output, &ropts, err);
	} else {
		ropts.color = fmt == SPP_REPORT_TEXT && cmd_use_color(STDOUT_FILENO);
		rc = spp_report_render(report, fmt, stdout, &ropts, err);
	}
	cJSON_Delete(report);
	return rc ? cmd_fail(err) : 0;
}

/* A session row's default as help prints it. */
static void default_seconds(const void *at, char *buf, size_t n)
{
	snprintf(buf, n, "%g", *(const double *)at);
}

static void default_u64(const void *at, char *buf, size_t n)
{
	snprintf(buf, n, "%llu", (unsigned long long)*(const uint64_t *)at);
}

/* --cache S into the int at o->off (enum spp_cache_state). */
static int opt_cache(const char *cmd, const struct cmd_option *o, const char *arg, void *args)
{
	static const char *const names[] = {[SPP_CACHE_AUTO] = "auto", [SPP_CACHE_COLD] = "cold",
					    [SPP_CACHE_WARM] = "warm"};

	for (int i = 0; i < 3; i++)
		if (strcmp(arg, names[i]) == 0) {
			*(int *)((char *)args + o->off) = i;
			return 0;
		}
	return cmd_usage_error(cmd, "--cache wants warm, cold or auto, not '%s'", arg);
}

#define G struct spp_session_opts

const struct cmd_option cmd_session_options[] = {
	{CMD_OPT_DENSE(G, dense),
	 .help = "dense candidates, the fastest is the baseline: openblas, onednn, blis, "
		 "spprof (its own GEMV, at N <= 8), or a variant such as openblas:Haswell; "
		 "default all (OpenBLAS also on its best core when its detection fell short and "
		 "OPENBLAS_CORETYPE is unset)"},
	{CMD_OPT_TIME_BUDGET(G, time_budget_s), .dflt = default_seconds,
	 .help = "seconds of timed runs per layer (analyze) or per measured point (sweep, "
		 "bench)"},
	{CMD_CALLBACK("cache", "S", opt_cache), .off = CMD_OFF(int, G, cache),
	 .help = "the cache state of every timed run: cold (W evicted from every level "
		 "before each run and X and Y read back, as a layer meets them in a model "
		 "larger than the LLC), warm (each run follows the last) or auto: cold when the weights "
		 "(the model's, the sweep's or bench's W) exceed the LLC, else warm; the report "
		 "says which and why (settings.cache, cache_rule); default auto"},
	{CMD_FLAG("cold", G, cache), .help = "--cache cold"},
	{CMD_OPT_SEED(G, seed, SPP_SESSION_MAX_SEED), .want = "an integer in 0..2^53",
	 .dflt = default_u64,
	 .help = "seed of X (uniform in [-1, 1]) and of the synthetic W and values of sweep "
		 "and bench"},
	{0},
};

#undef G
