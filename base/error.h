/*
 * Status codes and the error record shared by every module.
 *
 * Library functions return 0 (SPP_OK) or a negative status from the list
 * below and fill a caller-owned struct spp_error with one line that names the
 * file, tensor or byte offset at fault. Only cmd/ prints.
 */
#ifndef SPP_BASE_ERROR_H
#define SPP_BASE_ERROR_H

#include <stdarg.h>

/* X(name, value, exit code, message) */
#define SPP_STATUS_LIST(X)                                                     \
	X(SPP_OK, 0, 0, "ok")                                                  \
	X(SPP_E_USAGE, -1, 2, "invalid argument")                              \
	X(SPP_E_IO, -2, 2, "cannot read input")                                \
	X(SPP_E_FORMAT, -3, 2, "malformed input")                              \
	X(SPP_E_UNSUPPORTED, -4, 2, "not supported")                           \
	X(SPP_E_NOMEM, -5, 3, "out of memory")                                 \
	X(SPP_E_OUTPUT, -6, 3, "cannot write output")                          \
	X(SPP_E_RUNTIME, -7, 3, "runtime failure")                             \
	X(SPP_E_DEVICE, -8, 3, "device failure")                               \
	X(SPP_E_VERIFY, -9, 3, "verification failed")                         \
	X(SPP_E_BUDGET, -10, 2, "over the resource budget")

enum spp_status {
#define SPP_STATUS_ENUM(name, value, exit_code, msg) name = value,
	SPP_STATUS_LIST(SPP_STATUS_ENUM)
#undef SPP_STATUS_ENUM
};

struct spp_error {
	int code;
	char msg[256];
};

/* Name of a status ("SPP_E_FORMAT"); "SPP_E_UNKNOWN" for other values. */
const char *spp_status_name(int code);

/* Generic message of a status ("malformed input"). */
const char *spp_status_message(int code);

/* Process exit code of a status: 0 ok, 2 bad usage or input, 3 runtime. */
int spp_status_exit_code(int code);

/*
 * Fill err (may be NULL) with code and a printf-style message; returns code
 * so that callers can write `return spp_error_set(err, SPP_E_FORMAT, ...)`.
 * The message goes through the one sanitizer (base/safe_text.h):
 * names quoted from a file cannot break its line or drive a terminal.
 */
int spp_error_set(struct spp_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * A malformed-input error: SPP_E_FORMAT with one line "'file': what" (its
 * names escaped, as every message). Returns SPP_E_FORMAT. Loaders use this.
 */
int spp_error_format(struct spp_error *err, const char *file, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * The same with status code and a va_list, for the parsers' own fault
 * helpers: "'file': what".
 */
int spp_error_vfile(struct spp_error *err, int code, const char *file, const char *fmt,
		    va_list ap) __attribute__((format(printf, 4, 0)));

/* Reset err to SPP_OK with an empty message; accepts NULL. */
void spp_error_clear(struct spp_error *err);

#endif
