/*
 * spprof calibrate, the cache half: the machine's calibrated bandwidths
 * and FMA rate (measured by calibrate_bw.c) cached per machine and thread
 * count so that every later report can give bw_util without measuring again.
 *
 * Cache file: <spp_calibration_path()>/calibration.json,
 *   {"schema": "spprof.calibration/1",
 *    "entries": [{machine, cpu, threads, read_gbs, triad_gbs, peak_gflops, isa, when,
 *                 levels: {L1|L2|LLC|DRAM: {read_gbs, bytes}}}]}
 * where machine is /etc/machine-id (the hostname when absent).
 */
#include "profiler/machine.h"
#include "base/infile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "base/atomic_file.h"

#define CAL_SCHEMA "spprof.calibration/1"

int spp_calibration_path(char *buf, size_t len)
{
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	int n;

	if (xdg && *xdg)
		n = snprintf(buf, len, "%s/spprof", xdg);
	else if (home && *home)
		n = snprintf(buf, len, "%s/.cache/spprof", home);
	else
		return -1;
	return n > 0 && (size_t)n < len ? 0 : -1;
}

static void machine_id(char *buf, size_t len)
{
	FILE *f = fopen("/etc/machine-id", "r");

	buf[0] = '\0';
	if (f) {
		if (fgets(buf, (int)len, f))
			buf[strcspn(buf, "\n")] = '\0';
		fclose(f);
	}
	if (!buf[0] && gethostname(buf, len) != 0)
		snprintf(buf, len, "unknown");
}

static cJSON *load_cache(const char *file)
{
	FILE *f = spp_infile_fopen(file, NULL);
	char *text = NULL;
	long n;
	cJSON *doc = NULL;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && n < (1 << 24) &&
	    fseek(f, 0, SEEK_SET) == 0 && (text = malloc((size_t)n + 1)) &&
	    fread(text, 1, (size_t)n, f) == (size_t)n) {
		text[n] = '\0';
		doc = cJSON_Parse(text);
	}
	free(text);
	fclose(f);
	if (doc && !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(doc, "entries"))) {
		cJSON_Delete(doc);
		doc = NULL;
	}
	return doc;
}

static int entry_matches(const cJSON *e, const char *id, const char *cpu, int threads)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(e, "machine");
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(e, "cpu");
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(e, "threads");

	return cJSON_IsString(m) && strcmp(m->valuestring, id) == 0 &&
	       cJSON_IsString(c) && strcmp(c->valuestring, cpu) == 0 &&
	       cJSON_IsNumber(t) && t->valueint == threads;
}

static double entry_num(const cJSON *e, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(e, key);
	return cJSON_IsNumber(v) ? v->valuedouble : 0.0;
}

int spp_calibration_load(const char *cpu, int threads, struct spp_calibration *out)
{
	char dir[4096], file[4200], id[128];
	const cJSON *e;
	cJSON *doc;
	int rc = -1;

	if (spp_calibration_path(dir, sizeof(dir)))
		return -1;
	snprintf(file, sizeof(file), "%s/calibration.json", dir);
	doc = load_cache(file);
	if (!doc)
		return -1;
	machine_id(id, sizeof(id));
	cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "entries")) {
		const cJSON *isa = cJSON_GetObjectItemCaseSensitive(e, "isa");
		const cJSON *when = cJSON_GetObjectItemCaseSensitive(e, "when");

		if (!entry_matches(e, id, cpu, threads))
			continue;
		memset(out, 0, sizeof(*out));
		out->threads = threads;
		out->read_gbs = entry_num(e, "read_gbs");
		out->triad_gbs = entry_num(e, "triad_gbs");
		out->peak_gflops = entry_num(e, "peak_gflops");
		for (int l = 0; l < SPP_BW_LEVELS; l++) {
			const cJSON *lv = cJSON_GetObjectItemCaseSensitive(
				cJSON_GetObjectItemCaseSensitive(e, "levels"), spp_bw_level_name((enum spp_bw_level)l));

			out->level_gbs[l] = entry_num(lv, "read_gbs");
			out->level_bytes[l] = entry_num(lv, "bytes");
		}
		if (cJSON_IsString(isa))
			snprintf(out->isa, sizeof(out->isa), "%s", isa->valuestring);
		if (cJSON_IsString(when))
			snprintf(out->when, sizeof(out->when), "%s", when->valuestring);
		/* an entry of an older spprof without the levels is measured again */
		rc = out->read_gbs > 0 && out->peak_gflops > 0 && out->level_gbs[SPP_BW_DRAM] > 0 ? 0 : -1;
		break;
	}
	cJSON_Delete(doc);
	return rc;
}

/* mkdir -p for the cache folder. */
static int make_dirs(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) != 0 && errno != EEXIST) {
			*p = '/';
			return -1;
		}
		*p = '/';
	}
	return mkdir(path, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

int spp_calibration_store(const char *cpu, const struct spp_calibration *cal,
			  int count, struct spp_error *err)
{
	char dir[4096], file[4200], id[128];
	struct spp_atomic_file af;
	cJSON *doc, *entries, *e, *next;
	char *text;
	int rc;

	if (spp_calibration_path(dir, sizeof(dir)))
		return spp_error_set(err, SPP_E_OUTPUT,
				     "cannot store the calibration: neither XDG_CACHE_HOME nor HOME is set");
	if (make_dirs(dir))
		return spp_error_set(err, SPP_E_OUTPUT, "cannot create '%s': %s", dir,
				     strerror(errno));
	snprintf(file, sizeof(file), "%s/calibration.json", dir);
	machine_id(id, sizeof(id));
	doc = load_cache(file);
	if (!doc) {
		doc = cJSON_CreateObject();
		cJSON_AddItemToObject(doc, "entries", cJSON_CreateArray());
	}
	cJSON_DeleteItemFromObjectCaseSensitive(doc, "schema");
	cJSON_AddStringToObject(doc, "schema", CAL_SCHEMA);
	entries = cJSON_GetObjectItemCaseSensitive(doc, "entries");
	/* replace this machine's entries for the measured thread counts */
	for (e = entries->child; e; e = next) {
		next = e->next;
		for (int i = 0; i < count; i++)
			if (entry_matches(e, id, cpu, cal[i].threads)) {
				cJSON_Delete(cJSON_DetachItemViaPointer(entries, e));
				break;
			}
	}
	for (int i = 0; i < count; i++) {
		e = cJSON_CreateObject();
		cJSON_AddStringToObject(e, "machine", id);
		cJSON_AddStringToObject(e, "cpu", cpu);
		cJSON_AddNumberToObject(e, "threads", cal[i].threads);
		cJSON_AddNumberToObject(e, "read_gbs", cal[i].read_gbs);
		cJSON_AddNumberToObject(e, "triad_gbs", cal[i].triad_gbs);
		cJSON_AddNumberToObject(e, "peak_gflops", cal[i].peak_gflops);
		{
			cJSON *lv = cJSON_AddObjectToObject(e, "levels");

			for (int l = 0; lv && l < SPP_BW_LEVELS; l++) {
				cJSON *o = cJSON_AddObjectToObject(lv, spp_bw_level_name((enum spp_bw_level)l));

				cJSON_AddNumberToObject(o, "read_gbs", cal[i].level_gbs[l]);
				cJSON_AddNumberToObject(o, "bytes", cal[i].level_bytes[l]);
			}
		}
		cJSON_AddStringToObject(e, "isa", cal[i].isa);
		cJSON_AddStringToObject(e, "when", cal[i].when);
		cJSON_AddItemToArray(entries, e);
	}
	text = cJSON_Print(doc);
	cJSON_Delete(doc);
	if (!text)
		return spp_error_set(err, SPP_E_NOMEM, "out of memory writing '%s'", file);
	rc = spp_atomic_open_rewrite(&af, file, err); /* read by load_cache */
	if (rc == 0) {
		fputs(text, af.f);
		fputc('\n', af.f);
		rc = spp_atomic_commit(&af, err);
	}
	free(text);
	return rc;
}
