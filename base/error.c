#include "base/error.h"
#include "base/safe_text.h"

#include <stdarg.h>
#include <stdio.h>

struct status_row {
	int code;
	int exit_code;
	const char *name;
	const char *msg;
};

static const struct status_row status_rows[] = {
#define SPP_STATUS_ROW(name, value, exit_code, msg) {value, exit_code, #name, msg},
	SPP_STATUS_LIST(SPP_STATUS_ROW)
#undef SPP_STATUS_ROW
};

static const struct status_row *find_row(int code)
{
	for (size_t i = 0; i < sizeof(status_rows) / sizeof(status_rows[0]); i++)
		if (status_rows[i].code == code)
			return &status_rows[i];
	return NULL;
}

const char *spp_status_name(int code)
{
	const struct status_row *r = find_row(code);
	return r ? r->name : "SPP_E_UNKNOWN";
}

const char *spp_status_message(int code)
{
	const struct status_row *r = find_row(code);
	return r ? r->msg : "unknown error";
}

int spp_status_exit_code(int code)
{
	const struct status_row *r = find_row(code);
	return r ? r->exit_code : 3;
}

int spp_error_set(struct spp_error *err, int code, const char *fmt, ...)
{
	if (err) {
		char raw[sizeof(err->msg)];
		va_list ap;

		err->code = code;
		va_start(ap, fmt);
		vsnprintf(raw, sizeof(raw), fmt, ap);
		va_end(ap);
		/* names come from files: one line, nothing that drives a terminal */
		spp_safe_copy(err->msg, sizeof(err->msg), raw, (size_t)-1);
	}
	return code;
}

int spp_error_vfile(struct spp_error *err, int code, const char *file, const char *fmt,
		    va_list ap)
{
	char what[256];

	vsnprintf(what, sizeof(what), fmt, ap);
	return spp_error_set(err, code, "'%s': %s", file, what);
}

int spp_error_format(struct spp_error *err, const char *file, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = spp_error_vfile(err, SPP_E_FORMAT, file, fmt, ap);
	va_end(ap);
	return rc;
}

void spp_error_clear(struct spp_error *err)
{
	if (err) {
		err->code = SPP_OK;
		err->msg[0] = '\0';
	}
}
