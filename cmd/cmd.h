/*
 * The spprof subcommands: one file each, dispatched from a table in main.c.
 * Each returns the process exit code (DESIGN section 7): 0 ok, 1 a check
 * failed, 2 bad usage or input, 3 runtime or device failure.
 */
#ifndef SPP_CMD_CMD_H
#define SPP_CMD_CMD_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "cmd/parse_options.h"
#include "base/error.h"

struct spp_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
	const struct cmd_help *help; /* `spprof help NAME` */
};

int cmd_analyze(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_merge(int argc, char **argv);

int cmd_synth(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_sweep(int argc, char **argv);

/* Each command's help, its options table among it. */
extern const struct cmd_help cmd_analyze_help;
extern const struct cmd_help cmd_report_help;
extern const struct cmd_help cmd_merge_help;
extern const struct cmd_help cmd_synth_help;
extern const struct cmd_help cmd_info_help;
extern const struct cmd_help cmd_calibrate_help;
extern const struct cmd_help cmd_bench_help;
extern const struct cmd_help cmd_sweep_help;

/* Print "spprof: MSG" for err on stderr; returns the status's exit code. */
int cmd_fail(const struct spp_error *err);

/* Print "spprof CMD: MSG" plus a hint to `spprof help CMD`; returns 2. */
int cmd_usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Strict number parsing for option values: 0 ok, -1 not a number / out of range. */
int cmd_parse_i64(const char *s, int64_t min, int64_t max, int64_t *out);
int cmd_parse_u64(const char *s, uint64_t *out);

enum spp_report_format;

/*
 * The output format of a report command: --format NAME when given (an
 * unknown name is a usage error of cmd), else from -o FILE's extension,
 * else text. Returns 0, or 2 after printing the usage error.
 */
int cmd_output_format(const char *cmd, const char *format_name,
		      const char *output, enum spp_report_format *fmt);

/* The one limit of --time-budget (seconds per layer or measured point), in every command. */
#define CMD_MAX_TIME_BUDGET_S 3600

/* --time-budget S: 0 with *out set, or 2 after printing the usage error of cmd. */
int cmd_parse_time_budget(const char *cmd, const char *arg, double *out);

struct spp_format_ops;

/*
 * --formats LIST: the CPU formats it names into out[0..max-1], each once
 * (*n of them; "dense" is skipped: the baseline always runs). With
 * dense_alone_ok, "dense" alone is an empty list. 0, or 2 after printing
 * the usage error of cmd.
 */
int cmd_parse_formats(const char *cmd, const char *list, const struct spp_format_ops **out, int max,
		      int *n, int dense_alone_ok);

/* --peers LIST: the reference peers built in, each once; 0, or 2 after printing why. */
int cmd_parse_peers(const char *cmd, const char *list, const struct spp_format_ops **out, int max,
		    int *n);

/* --backends LIST: how often cpu and cuda are named; 0, or 2 after the usage error. */
int cmd_parse_backends(const char *cmd, const char *list, int *cpu, int *cuda);

/* A --dense LIST is valid (NULL is): 0, or 2 after printing the usage error. */
int cmd_dense_check(const char *cmd, const char *list);

struct spp_session;
struct spp_session_opts;
struct spp_machine;

/*
 * Open the measurement session of o on machine m (NULL: this one; profiler/
 * session.h), warning on stderr (unless quiet) of each dense candidate
 * that cannot run. 0, or the exit code after printing why (3 none can
 * run); spp_session_close releases s either way.
 */
int cmd_session_open(const char *cmd, const struct spp_session_opts *o, struct spp_machine *m,
		     int quiet, struct spp_session *s);
/*
 * The options several commands take, each defined once here: name,
 * placeholder, limits and parser. A command's row adds where the value
 * goes (struct st, field f) and its own .help, since the defaults the help
 * states differ:
 *
 *	{CMD_OPT_THREADS(struct sweep_cfg, so.threads), .help = "threads; default 1"},
 */
#define CMD_MAX_THREADS 4096

#define CMD_OPT_THREADS(st, f) CMD_INT("threads", "T", st, f, 1, CMD_MAX_THREADS)
/* f an int64_t array of room thread counts, n their number */
#define CMD_OPT_THREAD_LIST(st, f, n, room) \
	CMD_INT_LIST("threads", "LIST", st, f, n, room, 1, CMD_MAX_THREADS)
/* a uint64_t seed up to hi; a row with hi below UINT64_MAX gives its .want */
#define CMD_OPT_SEED(st, f, hi) CMD_UINT("seed", "S", st, f, hi)
/* a double, by cmd_parse_time_budget */
#define CMD_OPT_TIME_BUDGET(st, f) \
	CMD_CALLBACK("time-budget", "S", cmd_opt_time_budget), .off = CMD_OFF(double, st, f)
/* the const char * list, checked by cmd_dense_check */
#define CMD_OPT_DENSE(st, f) \
	CMD_CALLBACK("dense", "L,...", cmd_opt_dense), .off = CMD_OFF(const char *, st, f)
/* f an array of room format pointers, n their int count; by cmd_parse_formats */
#define CMD_OPT_FORMATS(st, f, n, room_) \
	CMD_CALLBACK("formats", "F,...", cmd_opt_formats), \
	.off = CMD_OFF(const struct spp_format_ops *, st, f[0]), .off_n = CMD_OFF(int, st, n), \
	.room = (room_)
/* the .flags of a --formats row where "dense" alone is an empty list */
#define CMD_FORMATS_DENSE_ALONE 1u
/* as CMD_OPT_FORMATS, by cmd_parse_peers */
#define CMD_OPT_PEERS(st, f, n, room_) \
	CMD_CALLBACK("peers", "P,...", cmd_opt_peers), \
	.off = CMD_OFF(const struct spp_format_ops *, st, f[0]), .off_n = CMD_OFF(int, st, n), \
	.room = (room_)
/*
 * The session group: the options of the measurement session (profiler/
 * session.h: --dense, --time-budget, --cold, --seed), one row each with
 * its help, in every command that times runs. defaults: the command's
 * struct spp_session_opts as it starts, whose values help prints.
 */
extern const struct cmd_option cmd_session_options[];
#define CMD_OPT_SESSION(st, f, defaults) \
	CMD_GROUP(cmd_session_options, struct spp_session_opts, st, f, defaults)

/* the output group: the names are checked by the command, after parsing */
#define CMD_OPT_FORMAT(st, f) CMD_STRING("format", "F", st, f)
#define CMD_OPT_OUTPUT(st, f) \
	CMD_STRING("output", "FILE", st, f), .alias = 'o', .flags = CMD_OPT_OUT_FILE
#define CMD_OPT_QUIET(st, f) CMD_FLAG("quiet", st, f)

/* The parsers of those rows (cmd_opt_fn): 0, or 2 after the usage error. */
int cmd_opt_time_budget(const char *cmd, const struct cmd_option *o, const char *arg, void *args);
int cmd_opt_dense(const char *cmd, const struct cmd_option *o, const char *arg, void *args);
int cmd_opt_formats(const char *cmd, const struct cmd_option *o, const char *arg, void *args);
int cmd_opt_peers(const char *cmd, const struct cmd_option *o, const char *arg, void *args);

/* Whether stderr/stdout should get colour: a terminal and NO_COLOR unset. */
int cmd_use_color(int fd);

/*
 * A report tree (taken, freed) written atomically to output in format
 * fmt, or rendered to stdout (in colour on a terminal) when output is
 * NULL. Returns 0 or the failure's exit status (cmd_fail).
 */
enum spp_report_format;
int cmd_emit_report(cJSON *report, enum spp_report_format fmt, const char *output,
		    struct spp_error *err);

#endif
