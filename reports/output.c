/* Choosing a writer, and writing a report file atomically. */
#include "reports/report.h"

#include "base/atomic_file.h"
#include "reports/cells.h"

#include <errno.h>
#include <string.h>
#include <strings.h>

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
	else if (strcmp(name, "md") == 0 || strcmp(name, "markdown") == 0)
		*out = SPP_REPORT_MD;
	else if (strcmp(name, "html") == 0)
		*out = SPP_REPORT_HTML;
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
	else if (strcasecmp(dot, "md") == 0 || strcasecmp(dot, "markdown") == 0)
		*out = SPP_REPORT_MD;
	else if (strcasecmp(dot, "html") == 0 || strcasecmp(dot, "htm") == 0)
		*out = SPP_REPORT_HTML;
	else if (strcasecmp(dot, "txt") == 0 || strcasecmp(dot, "text") == 0)
		*out = SPP_REPORT_TEXT;
	else
		return -1;
	return 0;
}

static int render(const cJSON *report, enum spp_report_format fmt, FILE *f,
		  const struct spp_render_opts *o, struct spp_error *err)
{
	switch (fmt) {
	case SPP_REPORT_TEXT:
		return spp_report_write_text(report, f, o, err);
	case SPP_REPORT_JSON:
		return spp_report_write_json(report, f, err);
	case SPP_REPORT_CSV:
		return spp_report_write_csv(report, f, err);
	case SPP_REPORT_MD:
		return spp_report_write_md(report, f, err);
	case SPP_REPORT_HTML:
		return spp_report_write_html(report, f, err);
	}
	return spp_error_set(err, SPP_E_USAGE, "unknown report format %d", (int)fmt);
}

int spp_report_render(const cJSON *report, enum spp_report_format fmt, FILE *f,
		      const struct spp_render_opts *o, struct spp_error *err)
{
	cJSON *owned = NULL;
	const cJSON *safe = report;
	int rc;

	/* JSON escapes what it must and keeps names exact; the writers for
	 * people render from a tree with every name from the file escaped */
	if (fmt != SPP_REPORT_JSON && !(safe = spp_cell_safe_tree(report, &owned)))
		return spp_error_set(err, SPP_E_NOMEM, "out of memory writing the report");
	/* text and HTML show long names shortened, each one unique */
	if ((fmt == SPP_REPORT_TEXT || fmt == SPP_REPORT_HTML) && !owned &&
	    !(safe = owned = cJSON_Duplicate(report, 1)))
		return spp_error_set(err, SPP_E_NOMEM, "out of memory writing the report");
	if ((fmt == SPP_REPORT_TEXT || fmt == SPP_REPORT_HTML) &&
	    spp_names_shorten(owned, SPP_NAME_WIDTH)) {
		cJSON_Delete(owned);
		return spp_error_set(err, SPP_E_NOMEM, "out of memory writing the report");
	}
	rc = render(safe, fmt, f, o, err);
	cJSON_Delete(owned);
	return rc;
}

int spp_report_write_file(const cJSON *report, enum spp_report_format fmt,
			  const char *path, const struct spp_render_opts *o,
			  struct spp_error *err)
{
	struct spp_atomic_file af;
	struct spp_error rerr = {0};
	int rc;

	rc = spp_atomic_open(&af, path, err);
	if (rc)
		return rc;
	errno = 0;
	rc = spp_report_render(report, fmt, af.f, o, &rerr);
	if (rc) {
		int e = errno;
		spp_atomic_abort(&af);
		if (rc == SPP_E_NOMEM)
			return spp_error_set(err, rc, "cannot write '%s': %s", path, rerr.msg);
		return spp_error_set(err, SPP_E_OUTPUT, "cannot write '%s': %s", path,
				     strerror(e ? e : EIO));
	}
	return spp_atomic_commit(&af, err);
}
