#include "cmd/parse_options.h"
#include "cmd/cmd.h"
#include "base/atomic_file.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define HELP_WIDTH 79 /* the last column of a help line */
#define HELP_GAP 3    /* spaces between the widest option and its help */

/* The row named exactly name[0..len-1], else the one it is a prefix of; NULL none or ambiguous. */
static const struct cmd_option *find_long(const struct cmd_option *opts, const char *name, size_t len)
{
	const struct cmd_option *prefix = NULL;
	int nprefix = 0;

	for (const struct cmd_option *o = opts; o->type != CMD_OPT_END; o++) {
		if (strncmp(o->name, name, len) != 0)
			continue;
		if (o->name[len] == '\0')
			return o;
		prefix = o;
		nprefix++;
	}
	return nprefix == 1 ? prefix : NULL;
}

static const struct cmd_option *find_short(const struct cmd_option *opts, char c)
{
	for (const struct cmd_option *o = opts; o->type != CMD_OPT_END; o++)
		if (o->alias && o->alias == c)
			return o;
	return NULL;
}

/* What a valid value of o is, for the error: its want, else from its limits. */
static void want(const struct cmd_option *o, char *buf, size_t n)
{
	if (o->want)
		snprintf(buf, n, "%s", o->want);
	else if (o->type == CMD_OPT_DOUBLE)
		snprintf(buf, n, "a number in %c%g, %g%c", o->flags & CMD_OPT_MIN_OPEN ? '(' : '[',
			 o->dmin, o->dmax, o->flags & CMD_OPT_MAX_OPEN ? ')' : ']');
	else if (o->type == CMD_OPT_UINT && o->umax == UINT64_MAX)
		snprintf(buf, n, "an integer");
	else if (o->type == CMD_OPT_UINT)
		snprintf(buf, n, "an integer in 0..%llu", (unsigned long long)o->umax);
	else
		snprintf(buf, n, "%lld..%lld", (long long)o->min, (long long)o->max);
}

static int bad_value(const char *cmd, const struct cmd_option *o, const char *arg)
{
	char w[128];

	want(o, w, sizeof(w));
	if (o->type == CMD_OPT_INT_LIST)
		return cmd_usage_error(cmd, "--%s wants up to %d integers in %s, not '%s'", o->name,
				       o->room, w, arg);
	return cmd_usage_error(cmd, "--%s wants %s, not '%s'", o->name, w, arg);
}

static int parse_double(const char *s, const struct cmd_option *o, double *out)
{
	char *end = NULL;
	double d = strtod(s, &end);

	if (!*s || *end || !isfinite(d) || d < o->dmin || d > o->dmax ||
	    (d == o->dmin && (o->flags & CMD_OPT_MIN_OPEN)) ||
	    (d == o->dmax && (o->flags & CMD_OPT_MAX_OPEN)))
		return -1;
	*out = d;
	return 0;
}

/* "1,64" (empty entries skipped): 1 to room entries in [lo, hi]; 0 or -1. */
static int parse_list(const char *s, const struct cmd_option *o, int64_t *out, int *n)
{
	char buf[256], *save = NULL;

	if (snprintf(buf, sizeof(buf), "%s", s) >= (int)sizeof(buf))
		return -1;
	*n = 0;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (*n >= o->room || cmd_parse_i64(t, o->min, o->max, &out[*n]))
			return -1;
		(*n)++;
	}
	return *n ? 0 : -1;
}

/* Check arg of o and store it into args: 0, or the exit code after printing why. */
static int store(const char *cmd, const struct cmd_option *o, const char *arg, void *args)
{
	char *p = (char *)args + o->off;
	int64_t v;
	int rc = 0;

	switch (o->type) {
	case CMD_OPT_FLAG:
		*(int *)p = 1;
		break;
	case CMD_OPT_STRING:
		*(const char **)p = arg;
		break;
	case CMD_OPT_INT:
		if (cmd_parse_i64(arg, o->min, o->max, &v))
			return bad_value(cmd, o, arg);
		if (o->size == sizeof(int))
			*(int *)p = (int)v;
		else
			*(int64_t *)p = v;
		break;
	case CMD_OPT_UINT:
		if (cmd_parse_u64(arg, (uint64_t *)p) || *(uint64_t *)p > o->umax)
			return bad_value(cmd, o, arg);
		break;
	case CMD_OPT_DOUBLE:
		if (parse_double(arg, o, (double *)p))
			return bad_value(cmd, o, arg);
		break;
	case CMD_OPT_INT_LIST:
		if (parse_list(arg, o, (int64_t *)p, (int *)((char *)args + o->off_n)))
			return bad_value(cmd, o, arg);
		break;
	case CMD_OPT_CALLBACK:
		rc = o->fn(cmd, o, arg, args);
		break;
	case CMD_OPT_END:
	case CMD_OPT_GROUP: /* expanded by flatten */
		break;
	}
	if (!rc && o->seen)
		*(int *)((char *)args + o->seen - 1) = 1;
	return rc;
}

/*
 * The row of option argument a, with *value set where a carries it
 * ("--name=value", "-ovalue"); NULL after printing the usage error. Short
 * flags do not cluster ("-ab"): no flag has an alias.
 */
static const struct cmd_option *lookup(const char *cmd, const struct cmd_option *opts,
				       const char *a, const char **value)
{
	const struct cmd_option *o;

	*value = NULL;
	if (a[1] == '-') {
		const char *eq = strchr(a + 2, '=');

		o = find_long(opts, a + 2, eq ? (size_t)(eq - (a + 2)) : strlen(a + 2));
		/* a flag given a value was an unknown option to getopt_long too */
		if (o && eq && o->type == CMD_OPT_FLAG)
			o = NULL;
		if (o && eq)
			*value = eq + 1;
	} else {
		o = find_short(opts, a[1]);
		if (o && a[2] && o->type == CMD_OPT_FLAG)
			o = NULL;
		else if (o && a[2])
			*value = a + 2;
	}
	if (!o)
		cmd_usage_error(cmd, "unknown option '%s'", a);
	return o;
}

/* Each output file given: 0, or the exit code after printing why it cannot be written. */
static int check_out_files(const struct cmd_option *opts, const void *args)
{
	for (const struct cmd_option *o = opts; o->type != CMD_OPT_END; o++) {
		struct spp_error err = {0};
		const char *path;

		/* only a STRING row's value is a pointer */
		if (o->type != CMD_OPT_STRING || !(o->flags & CMD_OPT_OUT_FILE))
			continue;
		path = *(const char *const *)((const char *)args + o->off);
		if (path && spp_outfile_check(path, &err))
			return cmd_fail(&err);
	}
	return 0;
}

/*
 * opts with each GROUP row replaced by its group's rows, their offsets into
 * the command's struct and the defaults they print located, ended by {0}
 * in out (CMD_MAX_ROWS + 1 rows); a table too long stops the program, a
 * fault of the tables, not of the user.
 */
static void flatten(const struct cmd_option *opts, struct cmd_option *out)
{
	int n = 0;

	for (const struct cmd_option *o = opts; o->type != CMD_OPT_END; o++) {
		const struct cmd_option *g = o->type == CMD_OPT_GROUP ? o->group : o;

		for (; g->type != CMD_OPT_END; g++) {
			if (n == CMD_MAX_ROWS)
				abort();
			out[n] = *g;
			if (o->type == CMD_OPT_GROUP) {
				out[n].defaults = o->defaults ? (const char *)o->defaults + g->off : NULL;
				out[n].off += o->off;
				out[n].off_n += o->off;
				out[n].seen += g->seen ? o->off : 0;
			}
			n++;
			if (o->type != CMD_OPT_GROUP)
				break;
		}
	}
	memset(&out[n], 0, sizeof(out[n]));
}

int cmd_parse_options(const char *cmd, const struct cmd_option *table, void *args, int argc,
		      char **argv, int *npos)
{
	struct cmd_option opts[CMD_MAX_ROWS + 1];
	int np = 0, i, rc;

	flatten(table, opts);

	for (i = 1; i < argc; i++) {
		char *a = argv[i];
		const struct cmd_option *o;
		const char *value;

		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (a[0] != '-' || a[1] == '\0') {
			argv[1 + np++] = a; /* 1 + np <= i: an argument already read */
			continue;
		}
		o = lookup(cmd, opts, a, &value);
		if (!o)
			return 2;
		if (o->type != CMD_OPT_FLAG && !value) {
			if (i + 1 >= argc)
				return cmd_usage_error(cmd, "option '%s' needs a value", a);
			value = argv[++i];
		}
		if ((rc = store(cmd, o, value, args)))
			return rc;
	}
	for (; i < argc; i++)
		argv[1 + np++] = argv[i];
	*npos = np;
	return check_out_files(opts, args);
}

/* "-o, --output FILE" of o into buf; its length. */
static int spec(const struct cmd_option *o, char *buf, size_t n)
{
	char alias[8] = "";
	int len;

	if (o->alias)
		snprintf(alias, sizeof(alias), "-%c, ", o->alias);
	len = snprintf(buf, n, "%s--%s%s%s", alias, o->name, o->arg ? " " : "", o->arg ? o->arg : "");
	return len < (int)n ? len : (int)n - 1;
}

/* text from column col on, wrapped at HELP_WIDTH; the cursor is at col already. */
static void wrap(FILE *f, const char *text, int col)
{
	int at = col;

	while (*text) {
		size_t word = strcspn(text, " \n");

		if (at > col && at + 1 + (int)word > HELP_WIDTH) {
			fprintf(f, "\n%*s", col, "");
			at = col;
		} else if (at > col) {
			fputc(' ', f);
			at++;
		}
		fwrite(text, 1, word, f);
		at += (int)word;
		text += word;
		while (*text == ' ' || *text == '\n')
			text++;
	}
	fputc('\n', f);
}

static void options_help(FILE *f, const struct cmd_option *table)
{
	struct cmd_option opts[CMD_MAX_ROWS + 1];
	char buf[96], help[2048];
	int width = 0;

	flatten(table, opts);
	for (const struct cmd_option *o = opts; o->type != CMD_OPT_END; o++) {
		int len = spec(o, buf, sizeof(buf));

		width = len > width ? len : width;
	}
	fprintf(f, "options:\n");
	for (const struct cmd_option *o = opts; o->type != CMD_OPT_END; o++) {
		int len = spec(o, buf, sizeof(buf));

		char dflt[64];

		fprintf(f, "  %s%*s", buf, width - len + HELP_GAP, "");
		if (o->dflt && o->defaults) {
			o->dflt(o->defaults, dflt, sizeof(dflt));
			snprintf(help, sizeof(help), "%s; default %s", o->help ? o->help : "", dflt);
		} else {
			snprintf(help, sizeof(help), "%s", o->help ? o->help : "");
		}
		wrap(f, help, 2 + width + HELP_GAP);
	}
}

void cmd_help_print(FILE *f, const struct cmd_help *h)
{
	fputs(h->head, f);
	if (h->options && h->options->type != CMD_OPT_END) {
		fputc('\n', f);
		options_help(f, h->options);
	}
	if (h->tail) {
		fputc('\n', f);
		fputs(h->tail, f);
	}
}
