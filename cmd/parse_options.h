/*
 * A command's options as data, after git's parse-options: one table of
 * rows both parses argv (cmd_parse_options) and prints the options section
 * of `spprof help CMD` (cmd_help_print), so the help cannot drift from what
 * is accepted. A row names the long option (and a short alias), its
 * placeholder, how its value is checked, where in the command's argument
 * struct it goes (an offset, so the table is a static const the help can
 * reach without running the command), and its help paragraph.
 *
 * Rows are written as designated initialisers, the CMD_* macros below
 * giving the kind, name and target:
 *
 *	{CMD_INT("repeat", "R", struct analyze_args, opts.repeat, 1, 1000000),
 *	 .help = "timed runs per format"},
 *
 * The options several commands share (--threads, --seed, --formats, the
 * output group ...) are the CMD_OPT_* rows of cmd/cmd.h, defined once.
 * The tables and their strings are static; values stored by STRING rows
 * point into argv.
 */
#ifndef SPP_CMD_PARSE_OPTIONS_H
#define SPP_CMD_PARSE_OPTIONS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum cmd_opt_type {
	CMD_OPT_END = 0,  /* ends a table */
	CMD_OPT_FLAG,     /* int set to 1; takes no value */
	CMD_OPT_STRING,   /* const char *: the value itself */
	CMD_OPT_INT,      /* int or int64_t in [min, max], decimal */
	CMD_OPT_UINT,     /* uint64_t in [0, umax]: decimal, 0x hex or 0 octal */
	CMD_OPT_DOUBLE,   /* double in [dmin, dmax], an end open by flags */
	CMD_OPT_INT_LIST, /* "1,64": 1..room int64_t in [min, max], the count an int */
	CMD_OPT_CALLBACK, /* fn parses and stores */
	CMD_OPT_GROUP,    /* the rows of group, their fields in the struct at off (CMD_GROUP) */
};

/* flags of a DOUBLE row: that end is outside the range */
#define CMD_OPT_MIN_OPEN 1u
#define CMD_OPT_MAX_OPEN 2u
/* flag of a STRING row: an output file, checked once parsed (spp_outfile_check) */
#define CMD_OPT_OUT_FILE 4u

struct cmd_option;

/*
 * A CALLBACK row's parser: store arg of option o of command cmd into args
 * (the command's argument struct, o->off and o->off_n locating the fields
 * of shared rows). Returns 0, or the exit code after printing why.
 */
typedef int (*cmd_opt_fn)(const char *cmd, const struct cmd_option *o, const char *arg,
			  void *args);

struct cmd_option {
	enum cmd_opt_type type;
	const char *name;  /* long name, without "--" */
	char alias;        /* short name ('o' for -o), or 0 */
	const char *arg;   /* placeholder of the value; NULL for a FLAG */
	size_t off;        /* the value in args */
	size_t size;       /* INT: sizeof the value, int or int64_t */
	size_t off_n;      /* INT_LIST and list callbacks: the int count */
	int room;          /* INT_LIST and list callbacks: entries the array holds */
	int64_t min, max;  /* INT, INT_LIST */
	uint64_t umax;     /* UINT */
	double dmin, dmax; /* DOUBLE */
	unsigned flags;    /* DOUBLE: CMD_OPT_*_OPEN; STRING: CMD_OPT_OUT_FILE; callbacks: their own */
	const char *want;  /* "--NAME wants WANT, not 'x'"; NULL: said from the limits */
	cmd_opt_fn fn;     /* CALLBACK */
	size_t seen;       /* CMD_SEEN: 1 + offset of an int set to 1 when given; 0 none */
	const char *help;  /* one paragraph, wrapped when printed */
	/* a group's row: its default as help prints it ("; default X") from the value at `at` */
	void (*dflt)(const void *at, char *buf, size_t n);
	/* GROUP: the group's rows (ended by {0}) and the command's defaults of its struct */
	const struct cmd_option *group;
	const void *defaults;
};

/* A command's `spprof help CMD`: the options section between hand-written text. */
struct cmd_help {
	const char *head;                 /* usage line and description */
	const struct cmd_option *options; /* NULL: the command takes none */
	const char *tail;                 /* after the options (exit codes); may be NULL */
};

/* The field f of struct st, unevaluated. */
#define CMD_MEMBER(st, f) (((st *)0)->f)
/* offsetof(st, f), f of type t (an incompatible-pointer diagnostic otherwise). */
#define CMD_OFF(t, st, f) (offsetof(st, f) + 0 * sizeof((t *){0} = &CMD_MEMBER(st, f)))
/* sizeof f, which must be an int or an int64_t. */
#define CMD_INT_SIZE(st, f) \
	_Generic(CMD_MEMBER(st, f), int: sizeof(int), int64_t: sizeof(int64_t))

#define CMD_FLAG(name_, st, f) \
	.type = CMD_OPT_FLAG, .name = (name_), .off = CMD_OFF(int, st, f)
#define CMD_STRING(name_, arg_, st, f) \
	.type = CMD_OPT_STRING, .name = (name_), .arg = (arg_), .off = CMD_OFF(const char *, st, f)
#define CMD_INT(name_, arg_, st, f, lo, hi) \
	.type = CMD_OPT_INT, .name = (name_), .arg = (arg_), .off = offsetof(st, f), \
	.size = CMD_INT_SIZE(st, f), .min = (lo), .max = (hi)
#define CMD_UINT(name_, arg_, st, f, hi) \
	.type = CMD_OPT_UINT, .name = (name_), .arg = (arg_), .off = CMD_OFF(uint64_t, st, f), \
	.umax = (hi)
#define CMD_DOUBLE(name_, arg_, st, f, lo, hi, open) \
	.type = CMD_OPT_DOUBLE, .name = (name_), .arg = (arg_), .off = CMD_OFF(double, st, f), \
	.dmin = (lo), .dmax = (hi), .flags = (open)
/* f an int64_t array of room entries, n its int count */
#define CMD_INT_LIST(name_, arg_, st, f, n, room_, lo, hi) \
	.type = CMD_OPT_INT_LIST, .name = (name_), .arg = (arg_), \
	.off = CMD_OFF(int64_t, st, f[0]), .off_n = CMD_OFF(int, st, n), .room = (room_), \
	.min = (lo), .max = (hi)
#define CMD_CALLBACK(name_, arg_, fn_) \
	.type = CMD_OPT_CALLBACK, .name = (name_), .arg = (arg_), .fn = (fn_)
/*
 * The rows of a group shared by commands (git's parse_options_concat): the
 * group's offsets are into the struct f of st, where each command keeps
 * it; defaults_ points to that struct as the command initialises it, for
 * the defaults help prints. A group's rows cannot be groups.
 */
#define CMD_GROUP(rows_, t, st, f, defaults_) \
	.type = CMD_OPT_GROUP, .group = (rows_), .off = CMD_OFF(t, st, f), .defaults = (defaults_)
/* the int f of st is set to 1 when the option is given */
#define CMD_SEEN(st, f) .seen = CMD_OFF(int, st, f) + 1

/*
 * Parse the options of command cmd in argv[1..argc-1] (argv[0] is the
 * command's name) by the table opts into args, as getopt_long did: a long
 * option by its name or an unambiguous prefix, its value as "--name=value"
 * or the next argument; the alias as "-o value" or "-ovalue"; "--" ends
 * the options; a later option overrides an earlier one. The arguments that
 * are not options are moved, in order, to argv[1..*npos]. Then each output
 * file given (CMD_OPT_OUT_FILE) is checked, so that a FIFO, a device, a
 * folder or a read-only folder fails before any work. Returns 0, or
 * the exit code (2 for bad usage, "spprof CMD: ... (see 'spprof help
 * CMD')"; 2 for a refused output file, "spprof: cannot write ...") after
 * printing why.
 */
int cmd_parse_options(const char *cmd, const struct cmd_option *opts, void *args, int argc,
		      char **argv, int *npos);

/* The largest number of rows a command's table has, its groups' rows counted. */
#define CMD_MAX_ROWS 96

/* Print h: its head, "options:" with one entry per row of h->options, its tail. */
void cmd_help_print(FILE *f, const struct cmd_help *h);

#endif
