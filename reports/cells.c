#include "reports/cells.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const cJSON *spp_cell_get(const cJSON *obj, const char *key)
{
	if (!cJSON_IsObject(obj))
		return NULL;
	return cJSON_GetObjectItemCaseSensitive(obj, key);
}

const cJSON *spp_cell_path(const cJSON *obj, const char *path)
{
	char key[128];

	while (obj && *path) {
		const char *dot = strchr(path, '.');
		size_t len = dot ? (size_t)(dot - path) : strlen(path);

		if (len >= sizeof(key))
			return NULL;
		memcpy(key, path, len);
		key[len] = '\0';
		obj = spp_cell_get(obj, key);
		path += len + (dot != NULL);
	}
	return obj;
}

int spp_cell_num(const cJSON *obj, const char *path, double *out)
{
	const cJSON *v = spp_cell_path(obj, path);

	if (!cJSON_IsNumber(v))
		return 0;
	*out = v->valuedouble;
	return 1;
}

const char *spp_cell_str(const cJSON *obj, const char *path)
{
	const cJSON *v = spp_cell_path(obj, path);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

void spp_cell_number(double v, char *buf, size_t n)
{
	if (!isfinite(v)) {
		snprintf(buf, n, "%s", "");
		return;
	}
	/* integers print whole: "%.17g" would turn 1e17 into "1e+17" */
	if (v == floor(v) && fabs(v) < 9.2e18) {
		snprintf(buf, n, "%.0f", v);
		return;
	}
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, n, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

void spp_cell_frac(double v, double scale, int decimals, const char *suffix, char *buf, size_t n)
{
	int d = decimals;

	if (!isfinite(v)) {
		snprintf(buf, n, "%s", "");
		return;
	}
	for (; d <= decimals + 4; d++) {
		double shown;

		snprintf(buf, n, "%.*f%s", d, v * scale, suffix);
		shown = strtod(buf, NULL) / scale;
		if (!(v < 1 && shown >= 1) && !(v > 0 && shown <= 0))
			return;
	}
	d--;
	if (v > 0.5)
		snprintf(buf, n, "> %.*f%s", d, scale - pow(10, -d), suffix);
	else
		snprintf(buf, n, "< %.*f%s", d, pow(10, -d), suffix);
}

void spp_cell_frac_ci(double v, double lo, double hi, double scale, int decimals,
		      const char *suffix, char *buf, size_t n)
{
	char a[32], b[32], c[32];

	spp_cell_frac(v, scale, decimals, suffix, a, sizeof(a));
	if (!isfinite(v) || !isfinite(lo) || !isfinite(hi)) {
		snprintf(buf, n, "%s", a);
		return;
	}
	spp_cell_frac(lo, scale, decimals, "", b, sizeof(b));
	spp_cell_frac(hi, scale, decimals, suffix, c, sizeof(c));
	snprintf(buf, n, "%s (%s\xe2\x80\x93%s)", a, b, c); /* en dash */
}

int spp_cell_efficiency(const cJSON *run, char *buf, size_t n)
{
	double v;

	buf[0] = '\0';
	if (spp_cell_num(run, "efficiency", &v)) {
		snprintf(buf, n, "%.1f%%", v * 100);
		return 1;
	}
	if (!spp_cell_num(run, "peak_share", &v))
		return 0;
	spp_cell_frac(v, 100, 1, "% of peak", buf, n);
	return 1;
}

const char *spp_cell_plural(double n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

void spp_cell_figure(double v, int sig, int sign, char *buf, size_t n)
{
	if (!isfinite(v))
		snprintf(buf, n, "%s", "");
	else if ((v == floor(v) && fabs(v) < 1e15) || fabs(v) >= pow(10, sig))
		snprintf(buf, n, sign ? "%+.0f" : "%.0f", v);
	else
		snprintf(buf, n, sign ? "%+.*g" : "%.*g", sig, v);
}

static void scaled(double v, double base, const char *const *suffix,
		   int nsuffix, const char *unit, char *buf, size_t n)
{
	int i = 0;
	double a = fabs(v);

	if (!isfinite(v)) {
		snprintf(buf, n, "%s", "");
		return;
	}
	if (a < base) {
		snprintf(buf, n, "%.0f%s%s", v, *unit ? " " : "", unit);
		return;
	}
	while (a >= base && i < nsuffix - 1) {
		a /= base;
		v /= base;
		i++;
	}
	/* three significant digits: 1.61, 16.1, 161 */
	snprintf(buf, n, a < 10 ? "%.2f %s%s" : a < 100 ? "%.1f %s%s" : "%.0f %s%s",
		 v, suffix[i], unit);
}

void spp_cell_count(double v, const char *unit, char *buf, size_t n)
{
	static const char *const sfx[] = {"", "K", "M", "G", "T", "P", "E"};

	scaled(v, 1000.0, sfx, (int)(sizeof(sfx) / sizeof(sfx[0])), unit, buf, n);
}

void spp_cell_bytes(double v, char *buf, size_t n)
{
	static const char *const sfx[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};

	scaled(v, 1024.0, sfx, (int)(sizeof(sfx) / sizeof(sfx[0])), "B", buf, n);
}

int spp_cell_baseline_line(const cJSON *report, char *buf, size_t n)
{
	const cJSON *b = spp_cell_path(report, "summary.dense_baseline"), *w;
	struct spp_buf t;
	double v, gf, peak, share, weak = 0;
	int k = 0;

	spp_buf_init(&t, buf, n);
	if (!cJSON_IsObject(b))
		return -1;
	cJSON_ArrayForEach(w, spp_cell_get(b, "winners")) {
		const char *lib = spp_cell_str(w, "library");

		if (!spp_cell_num(w, "layers", &v))
			continue;
		spp_buf_add(&t, "%s%s on %.0f layer%s", k++ ? ", " : "", lib ? lib : "?", v, v == 1 ? "" : "s");
	}
	if (spp_cell_num(b, "gflops", &gf))
		spp_buf_add(&t, "; %.1f GFLOP/s", gf);
	if (spp_cell_num(b, "share_of_peak", &share) && spp_cell_num(b, "peak_gflops", &peak))
		spp_buf_add(&t, ", %.0f%% of the %.1f GFLOP/s FMA peak", 100 * share, peak);
	else
		spp_buf_add(&t, " (no calibrated peak)");
	if (spp_cell_num(b, "weak_shapes", &weak) && weak > 0)
		spp_buf_add(&t, "; weak on %.0f shape%s (see warnings)", weak, weak == 1 ? "" : "s");
	return 0;
}

const char *spp_cell_warning_text(const cJSON *w)
{
	if (cJSON_IsString(w))
		return w->valuestring;
	return spp_cell_str(w, "message");
}

void spp_cell_build_line(const cJSON *m, char *buf, size_t n)
{
	const char *type = spp_cell_str(m, "build.type"), *flags = spp_cell_str(m, "build.kernel_flags");
	const char *cc = spp_cell_str(m, "build.compiler"), *san = spp_cell_str(m, "build.sanitize");

	if (!type) {
		snprintf(buf, n, "not recorded (a report of spprof before machine.build)");
		return;
	}
	snprintf(buf, n, "%s build, kernels %s, %s%s%s", type, flags ? flags : "?", cc ? cc : "?",
		 san ? ", sanitize " : "", san ? san : "");
}

void spp_cell_machine_label(const cJSON *m, char *buf, size_t n)
{
	const char *cpu = spp_cell_str(m, "cpu"), *isa = spp_cell_str(m, "isa");
	const char *blas = spp_cell_str(m, "dense_blas.name"), *ver = spp_cell_str(m, "dense_blas.version");
	const char *core = spp_cell_str(m, "dense_blas.core");
	double t = 0;

	spp_cell_num(m, "threads", &t);
	snprintf(buf, n, "%.120s, %s, %.0f thread%s, %s %s (%s)", cpu ? cpu : "unknown CPU",
		 isa ? isa : "unknown ISA", t, t == 1 ? "" : "s", blas ? blas : "BLAS", ver ? ver : "",
		 core ? core : "unknown core");
}
