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
 *
 * The journal is an output beside -o and gets -o's rules: absent or a
 * regular file, never a symbolic link (it would be written through and then
 * unlinked), never a file this run reads (the model: truncating it under
 * its mapping kills the run), never a FIFO (opening one blocks). It is
 * opened O_NOFOLLOW | O_NONBLOCK and judged by fstat before it is read or
 * truncated. What --resume reads is measured, not believed: a line is read
 * at most MAX_LINE bytes at a time, and each layer's figures are derived
 * again from its times (spp_report_runs_refigure).
 */
#include "reports/journal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/infile.h"
#include "profiler/run_dense.h"
#include "reports/json_values.h"

#define JOURNAL_SCHEMA "spprof.journal/1"
/* A line holds one layer's runs: a few hundred KiB at most. */
#define MAX_LINE ((size_t)64 << 20)

/* The journal's path as it stands: absent, or a regular file that is no link. 0 or SPP_E_USAGE. */
static int check_kind(const char *path, struct spp_error *err)
{
	struct stat st;

	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : spp_error_set(err, SPP_E_USAGE, "cannot write journal '%s': %s",
							   path, strerror(errno));
	if (S_ISLNK(st.st_mode))
		return spp_error_set(err, SPP_E_USAGE, "cannot write journal '%s': a symbolic link "
				     "(remove it)", path);
	if (S_ISDIR(st.st_mode))
		return spp_error_set(err, SPP_E_USAGE, "cannot write journal '%s': is a directory", path);
	if (!S_ISREG(st.st_mode))
		return spp_error_set(err, SPP_E_USAGE, "cannot write journal '%s': not a regular file (%s)",
				     path, spp_file_kind(st.st_mode));
	return 0;
}

/*
 * The journal opened with flags (O_RDONLY, or O_WRONLY | O_CREAT), never
 * through a link nor blocking, and refused unless it is a regular file
 * that is no input of this run. The descriptor, -1 with err set, or -2
 * when there is none to read.
 */
static int open_journal(const char *path, int flags, struct spp_error *err)
{
	int fd = open(path, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
	const char *in;
	struct stat st;

	if (fd < 0) {
		if (errno == ENOENT && !(flags & O_CREAT))
			return -2;
		if (errno == ELOOP)
			spp_error_set(err, SPP_E_USAGE, "cannot write journal '%s': a symbolic link "
				      "(remove it)", path);
		else
			spp_error_set(err, errno == ENXIO ? SPP_E_USAGE : SPP_E_OUTPUT,
				      "cannot open journal '%s': %s", path,
				      errno == ENXIO ? "not a regular file (a FIFO)" : strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (in = spp_infile_opened(&st))) {
		if (S_ISREG(st.st_mode) && (in = spp_infile_opened(&st)))
			spp_error_set(err, SPP_E_USAGE, "cannot write journal '%s': is the input '%s'",
				      path, in);
		else
			spp_error_set(err, SPP_E_USAGE, "cannot write journal '%s': not a regular file "
				      "(%s)", path, spp_file_kind(st.st_mode));
		close(fd);
		return -1;
	}
	/* a regular file: blocking I/O from here on */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

int spp_journal_init(struct spp_journal *j, const char *output, int resume, struct spp_error *err)
{
	memset(j, 0, sizeof(*j));
	j->resume = resume;
	if (snprintf(j->path, sizeof(j->path), "%s.journal", output) >= (int)sizeof(j->path))
		return spp_error_set(err, SPP_E_USAGE, "'%s': too long a path for its journal", output);
	return check_kind(j->path, err);
}

/* The header's settings against a's; 0 when they are a's. */
static int same_run(const cJSON *head, const struct spp_analysis *a, const cJSON *settings)
{
	const cJSON *h = cJSON_GetObjectItemCaseSensitive(head, "model_hash");

	return cJSON_IsString(h) && strcmp(h->valuestring, a->totals.hash.hex) == 0 &&
	       cJSON_Compare(cJSON_GetObjectItemCaseSensitive(head, "settings"), settings, 1) ? 0 : -1;
}

/*
 * The next line of f into *line (grown as it goes, NUL-terminated, its '\n'
 * kept): its length, 0 at the end, -1 once it passes MAX_LINE (checked
 * while reading, so that a file without a newline is never read whole), -2
 * out of memory.
 */
static long read_line(FILE *f, char **line, size_t *cap)
{
	size_t len = 0;
	int c;

	while ((c = getc_unlocked(f)) != EOF) {
		if (len >= MAX_LINE)
			return -1;
		if (len + 2 > *cap) {
			size_t grown = *cap ? 2 * *cap : 4096;
			char *p;

			grown = grown > MAX_LINE + 2 ? MAX_LINE + 2 : grown;
			if (!(p = realloc(*line, grown)))
				return -2;
			*line = p;
			*cap = grown;
		}
		(*line)[len++] = (char)c;
		if (c == '\n')
			break;
	}
	if (*line)
		(*line)[len] = '\0';
	return (long)len;
}

/* Read the journal's lines: the header into *head, the layers into j->lines[layer]. */
static int read_lines(struct spp_journal *j, FILE *f, int nlayers, cJSON **head, struct spp_error *err)
{
	char *line = NULL;
	size_t cap = 0;
	long len;

	j->lines = calloc((size_t)(nlayers > 0 ? nlayers : 1), sizeof(*j->lines));
	if (!j->lines)
		return spp_error_set(err, SPP_E_NOMEM, "out of memory");
	j->nlines = nlayers;
	while ((len = read_line(f, &line, &cap)) > 0) {
		cJSON *v = line[len - 1] == '\n' ? cJSON_ParseWithLength(line, (size_t)len) : NULL;
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
	if (len == -2)
		return spp_error_set(err, SPP_E_NOMEM, "'%s': out of memory reading it", j->path);
	if (len < 0)
		return spp_error_set(err, SPP_E_FORMAT, "'%s': a line longer than %d MiB: not a journal "
				     "of spprof (remove it, or run without --resume)", j->path,
				     (int)(MAX_LINE >> 20));
	return 0;
}

static int write_json(struct spp_journal *j, const cJSON *v, struct spp_error *err)
{
	/* numbers exactly as the report writes them, so --resume reads back the figures written */
	char *text = spp_json_text_exact(v, 0);
	int rc = text ? spp_journal_line(j, text, err) : spp_error_set(err, SPP_E_NOMEM, "out of memory");

	cJSON_free(text);
	return rc;
}

/* Open the journal for a: what --resume finds (when it fits), then the file written afresh. */
static int open_for(struct spp_journal *j, const struct spp_analysis *a, struct spp_error *err)
{
	cJSON *settings = spp_report_settings(a), *head = NULL;
	int rc = settings ? 0 : spp_error_set(err, SPP_E_NOMEM, "out of memory");
	int fd = !rc && j->resume ? open_journal(j->path, O_RDONLY, err) : -2;
	FILE *old = fd >= 0 ? fdopen(fd, "r") : NULL;

	j->opened = 1;
	if (fd >= 0 && !old) {
		close(fd);
		rc = spp_error_set(err, SPP_E_NOMEM, "out of memory");
	}
	if (!rc && fd == -1)
		rc = err->code;
	if (!rc && old)
		rc = read_lines(j, old, a->nlayers, &head, err);
	if (old)
		fclose(old);
	if (!rc && old && same_run(head, a, settings))
		rc = spp_error_set(err, SPP_E_USAGE, "'%s': a journal of another model or other "
				   "settings: remove it, or run without --resume", j->path);
	/* written afresh, the header and the layers kept: a torn last line goes; judged before truncated */
	if (!rc && (fd = open_journal(j->path, O_WRONLY | O_CREAT, err)) < 0)
		rc = err->code;
	if (!rc && (ftruncate(fd, 0) != 0 || !(j->f = fdopen(fd, "w")))) {
		rc = spp_error_set(err, SPP_E_OUTPUT, "cannot write '%s': %s", j->path, strerror(errno));
		close(fd);
	}
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
	struct spp_bw_model bw;
	int rc;

	if (!j->opened && (rc = open_for(j, a, err)))
		return rc < 0 ? rc : -1;
	if (!j->lines || i >= j->nlines || !j->lines[i])
		return 0;
	if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(j->lines[i], "name")) ||
	    strcmp(cJSON_GetObjectItemCaseSensitive(j->lines[i], "name")->valuestring, a->layers[i].name))
		return spp_error_set(err, SPP_E_FORMAT, "'%s': its line for layer %d is not '%s'",
				     j->path, i, a->layers[i].name);
	if (spp_json_int(cJSON_GetObjectItemCaseSensitive(j->lines[i], "m"), 0, INT64_MAX, -1) != a->layers[i].view.m ||
	    spp_json_int(cJSON_GetObjectItemCaseSensitive(j->lines[i], "k"), 0, INT64_MAX, -1) != a->layers[i].view.k ||
	    spp_json_int(cJSON_GetObjectItemCaseSensitive(j->lines[i], "n"), 0, INT64_MAX, -1) != a->layers[i].n)
		return spp_error_set(err, SPP_E_FORMAT, "'%s': its line for layer '%s' is of another shape",
				     j->path, a->layers[i].name);
	if ((rc = spp_report_layer_runs(j->lines[i], j->path, &a->runs[i], err)))
		return rc;
	spp_bw_model_init(&bw, a->machine, a->record.settings.threads, a->record.settings.cold);
	spp_report_runs_refigure(a, i, &bw);
	/* the shape's dense choice, for the layers after it, as an uninterrupted run kept it */
	if (!a->runs[i].dense_shared && a->runs[i].dense.nt > 0 &&
	    (rc = spp_dense_choose(&a->runs[i].dense, &a->record.dense_memo, err)))
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
