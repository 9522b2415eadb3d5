/*
 * The journal of a resumable analyze (-o FILE --resume): FILE.journal,
 * JSON lines, each written whole and fsync'd. The first line names the
 * model (its hash) and the settings; each later one is a finished layer's
 * runs as the report writes them (spp_report_layer_runs_json). With
 * --resume, a journal of the same model and settings gives back the
 * layers it holds (spp_report_layer_runs) and the run goes on after them;
 * a torn last line (a kill mid-write) is dropped. Without --resume, or
 * when the journal is of another model or settings, it is started afresh
 * (--resume says so and refuses). The journal goes once the report is
 * written.
 */
#include "reports/journal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profiler/run_dense.h"
#include "reports/json_values.h"

#define JOURNAL_SCHEMA "spprof.journal/1"
/* A line holds one layer's runs: a few hundred KiB at most. */
#define MAX_LINE ((size_t)64 << 20)

int spp_journal_init(struct spp_journal *j, const char *output, int resume, struct spp_error *err)
{
	memset(j, 0, sizeof(*j));
	j->resume = resume;
	if (snprintf(j->path, sizeof(j->path), "%s.journal", output) >= (int)sizeof(j->path))
		return spp_error_set(err, SPP_E_USAGE, "'%s': too long a path for its journal", output);
	return 0;
}

/* The header's settings against a's; 0 when they are a's. */
static int same_run(const cJSON *head, const struct spp_analysis *a, const cJSON *settings)
{
	const cJSON *h = cJSON_GetObjectItemCaseSensitive(head, "model_hash");

	return cJSON_IsString(h) && strcmp(h->valuestring, a->totals.hash.hex) == 0 &&
	       cJSON_Compare(cJSON_GetObjectItemCaseSensitive(head, "settings"), settings, 1) ? 0 : -1;
}

/* Read the journal's lines: the header into *head, the layers into j->lines[layer]. */
static int read_lines(struct spp_journal *j, FILE *f, int nlayers, cJSON **head, struct spp_error *err)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;

	j->lines = calloc((size_t)(nlayers > 0 ? nlayers : 1), sizeof(*j->lines));
	if (!j->lines)
		return spp_error_set(err, SPP_E_NOMEM, "out of memory");
	j->nlines = nlayers;
	while ((len = getline(&line, &cap, f)) > 0) {
		cJSON *v = (size_t)len < MAX_LINE && line[len - 1] == '\n' ? cJSON_Parse(line) : NULL;
		long long i = spp_json_int(cJSON_GetObjectItemCaseSensitive(v, "layer"), 0, nlayers - 1, -1);

		if (!*head) {
			*head = v; /* the first line, whatever it holds: checked by the caller */
			if (!v)
				break;
		} else if (i >= 0 && !j->lines[i]) {
			j->lines[i] = v;
		} else {
			cJSON_Delete(v); /* a torn line, or one for no layer of this model */
		}
	}
	free(line);
	return 0;
}

static int write_json(struct spp_journal *j, const cJSON *v, struct spp_error *err)
{
	char *text = cJSON_PrintUnformatted(v);
	int rc = text ? spp_journal_line(j, text, err) : spp_error_set(err, SPP_E_NOMEM, "out of memory");

	free(text);
	return rc;
}

/* Open the journal for a: what --resume finds (when it fits), then the file written afresh. */
static int open_for(struct spp_journal *j, const struct spp_analysis *a, struct spp_error *err)
{
	cJSON *settings = spp_report_settings(a), *head = NULL;
	FILE *old = j->resume ? fopen(j->path, "r") : NULL;
	int rc = settings ? 0 : spp_error_set(err, SPP_E_NOMEM, "out of memory");

	j->opened = 1;
	if (!rc && old)
		rc = read_lines(j, old, a->nlayers, &head, err);
	if (old)
		fclose(old);
	if (!rc && old && same_run(head, a, settings))
		rc = spp_error_set(err, SPP_E_USAGE, "'%s': a journal of another model or other "
				   "settings: remove it, or run without --resume", j->path);
	/* written afresh, the header and the layers kept: a torn last line goes */
	if (!rc && (j->f = fopen(j->path, "w")) == NULL)
		rc = spp_error_set(err, SPP_E_OUTPUT, "cannot write '%s': %s", j->path, strerror(errno));
	if (!rc) {
		cJSON *h = cJSON_CreateObject();

		cJSON_AddStringToObject(h, "schema", JOURNAL_SCHEMA);
		cJSON_AddStringToObject(h, "model_hash", a->totals.hash.hex);
		cJSON_AddItemToObject(h, "settings", settings);
		settings = NULL;
		rc = write_json(j, h, err);
		cJSON_Delete(h);
	}
	for (int i = 0; !rc && j->lines && i < j->nlines; i++)
		if (j->lines[i])
			rc = write_json(j, j->lines[i], err);
	cJSON_Delete(settings);
	cJSON_Delete(head);
	return rc;
}

int spp_journal_line(struct spp_journal *j, const char *text, struct spp_error *err)
{
	if (fputs(text, j->f) < 0 || fputc('\n', j->f) == EOF || fflush(j->f) || fsync(fileno(j->f)))
		return spp_error_set(err, SPP_E_OUTPUT, "cannot write '%s': %s", j->path, strerror(errno));
	return 0;
}

int spp_journal_restore(void *ctx, struct spp_analysis *a, int i, struct spp_error *err)
{
	struct spp_journal *j = ctx;
	int rc;

	if (!j->opened && (rc = open_for(j, a, err)))
		return rc < 0 ? rc : -1;
	if (!j->lines || i >= j->nlines || !j->lines[i])
		return 0;
	if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j->lines[i], "name")) ||
	    strcmp(cJSON_GetObjectItemCaseSensitive(j->lines[i], "name")->valuestring, a->layers[i].name))
		return spp_error_set(err, SPP_E_FORMAT, "'%s': its line for layer %d is not '%s'",
				     j->path, i, a->layers[i].name);
	if ((rc = spp_report_layer_runs(j->lines[i], j->path, &a->runs[i], err)))
		return rc;
	/* the shape's dense choice, for the layers after it, as an uninterrupted run kept it */
	if (!a->runs[i].dense_shared && a->runs[i].dense.nt > 0 &&
	    (rc = spp_dense_choose(&a->runs[i].dense, &a->dense_memo, err)))
		return rc;
	return 1;
}

int spp_journal_done(void *ctx, const struct spp_analysis *a, int i, struct spp_error *err)
{
	struct spp_journal *j = ctx;
	cJSON *line;
	int rc;

	if (!j->opened && (rc = open_for(j, a, err)))
		return rc;
	line = spp_report_layer_runs_json(a, i);
	rc = line ? write_json(j, line, err) : spp_error_set(err, SPP_E_NOMEM, "out of memory");
	cJSON_Delete(line);
	return rc;
}

void spp_journal_close(struct spp_journal *j, int remove_file)
{
	if (j->f)
		fclose(j->f);
	j->f = NULL;
	for (int i = 0; j->lines && i < j->nlines; i++)
		cJSON_Delete(j->lines[i]);
	free(j->lines);
	j->lines = NULL;
	if (remove_file && j->opened)
		unlink(j->path);
}
