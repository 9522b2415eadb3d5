/* Choosing a writer, and writing a report file atomically. */
#include "reports/report.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

int spp_report_format_from_name(const char *name, enum spp_report_format *out)
{
	if (!name)
		return -1;
	if (strcmp(name, "text") == 0 || strcmp(name, "txt") == 0)
		*out = SPP_REPORT_TEXT;
	else if (strcmp(name, "json") == 0)
		*out = SPP_REPORT_JSON;
	else if (strcmp(name, "csv") == 0)
		*out = SPP_REPORT_CSV;
	else
		return -1;
	return 0;
}

int spp_report_format_from_path(const char *path, enum spp_report_format *out)
{
	const char *slash, *dot;

	if (!path)
		return -1;
	slash = strrchr(path, '/');
	dot = strrchr(slash ? slash + 1 : path, '.');
	if (!dot)
		return -1;
	dot++;
	if (strcasecmp(dot, "json") == 0)
		*out = SPP_REPORT_JSON;
	else if (strcasecmp(dot, "csv") == 0)
		*out = SPP_REPORT_CSV;
	else if (strcasecmp(dot, "txt") == 0 || strcasecmp(dot, "text") == 0)
		*out = SPP_REPORT_TEXT;
	else
		return -1;
	return 0;
}

int spp_report_render(const cJSON *report, enum spp_report_format fmt, FILE *f,
		      const struct spp_render_opts *o, struct spp_error *err)
{
	switch (fmt) {
	case SPP_REPORT_TEXT:
		return spp_report_write_text(report, f, o, err);
	case SPP_REPORT_JSON:
		return spp_report_write_json(report, f, err);
	case SPP_REPORT_CSV:
		return spp_report_write_csv(report, f, err);
	}
	return spp_error_set(err, SPP_E_USAGE, "unknown report format %d", (int)fmt);
}

/* Make the rename itself durable; a failure here loses nothing already written. */
static void sync_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? strndup(path, (size_t)(slash - path) + 1) : strdup(".");
	int fd;

	if (!dir)
		return;
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(dir);
}

static int write_error(struct spp_error *err, const char *path)
{
	return spp_error_set(err, SPP_E_OUTPUT, "cannot write '%s': %s", path,
			     strerror(errno ? errno : EIO));
}

int spp_report_write_file(const cJSON *report, enum spp_report_format fmt,
			  const char *path, const struct spp_render_opts *o,
			  struct spp_error *err)
{
	const char *slash = strrchr(path, '/');
	size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
	size_t cap = strlen(path) + sizeof("/..XXXXXX");
	struct spp_error rerr = {0};
	char *tmp = malloc(cap);
	FILE *f = NULL;
	int fd = -1, rc;

	if (!tmp)
		return spp_error_set(err, SPP_E_NOMEM, "cannot write '%s': out of memory", path);
	/* hidden and in the same folder, so the rename cannot cross file systems */
	snprintf(tmp, cap, "%.*s.%s.XXXXXX", (int)dirlen, path, path + dirlen);
	fd = mkstemp(tmp);
	if (fd < 0) {
		rc = write_error(err, path);
		free(tmp);
		return rc;
	}
	/* mkstemp makes 0600; a report is meant to be read by others */
	if (fchmod(fd, 0644) != 0 || !(f = fdopen(fd, "w"))) {
		rc = write_error(err, path);
		goto fail;
	}
	fd = -1;
	errno = 0;
	rc = spp_report_render(report, fmt, f, o, &rerr);
	if (rc == SPP_E_NOMEM) {
		spp_error_set(err, rc, "cannot write '%s': %s", path, rerr.msg);
		goto fail;
	}
	if (rc || fflush(f) != 0 || fsync(fileno(f)) != 0) {
		rc = write_error(err, path);
		goto fail;
	}
	rc = fclose(f);
	f = NULL;
	if (rc != 0 || rename(tmp, path) != 0) {
		rc = write_error(err, path);
		goto fail;
	}
	free(tmp);
	sync_dir(path);
	return SPP_OK;
fail:
	if (f)
		fclose(f);
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	free(tmp);
	return rc;
}
