/*
 * The spprof subcommands: one file each, dispatched from a table in main.c.
 * Each returns the process exit code (DESIGN section 7): 0 ok, 1 a check
 * failed, 2 bad usage or input, 3 runtime or device failure.
 */
#ifndef SPP_CMD_CMD_H
#define SPP_CMD_CMD_H

#include <stdint.h>

#include "profiler/base/error.h"

struct spp_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
	const char *usage; /* full help text of `spprof help NAME` */
};

int cmd_analyze(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_synth(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_sweep(int argc, char **argv);

extern const char cmd_analyze_usage[];
extern const char cmd_report_usage[];
extern const char cmd_synth_usage[];
extern const char cmd_info_usage[];
extern const char cmd_calibrate_usage[];
extern const char cmd_bench_usage[];
extern const char cmd_sweep_usage[];

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

struct spp_dense_set;

/* A --dense LIST is valid (NULL is): 0, or 2 after printing the usage error. */
int cmd_dense_check(const char *cmd, const char *list);

/*
 * Open the dense candidates of --dense LIST (NULL: every library) into
 * set, warning on stderr (unless quiet) of each that cannot run. 0, or the
 * exit code after printing why (2 a bad list, 3 none can run).
 */
int cmd_dense_open(const char *cmd, const char *list, int quiet, struct spp_dense_set *set);

/* Whether stderr/stdout should get colour: a terminal and NO_COLOR unset. */
int cmd_use_color(int fd);

#endif
