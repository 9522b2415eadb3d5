/*
 * The rules of `spprof check` (docs/CHECK.md): a RULES.json file holding
 * bound rules ("expr": "layers[*].pattern.nm2_4 == 1") and regression rules
 * ("regression": TARGET, "max_drop" / "max_growth"). The expression
 * language is ours, so it is parsed here by hand, recursive descent over
 * the string, and every fault names its 1-based column.
 */
#include "reports/gate.h"
#include "base/infile.h"
#include "reports/rules.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int spp_parse_fault_set(struct spp_parse_fault *f, int column, const char *fmt, ...)
{
	va_list ap;

	f->column = column;
	va_start(ap, fmt);
	vsnprintf(f->what, sizeof(f->what), fmt, ap);
	va_end(ap);
	return -1;
}

static int skip_ws(const char *s, int i)
{
	while (s[i] == ' ' || s[i] == '\t')
		i++;
	return i;
}

/* Whether s at i starts with word w not followed by a name character. */
static int word(const char *s, int i, const char *w)
{
	size_t n = strlen(w);

	return strncmp(s + i, w, n) == 0 && !isalnum((unsigned char)s[i + n]) &&
	       s[i + n] != '_';
}

/* A "quoted" string at s[i]; returns the index after it, or -1. */
static int quoted(const char *s, int i, char *out, size_t n, struct spp_parse_fault *f)
{
	size_t len = 0;
	int start = i++;

	for (;;) {
		char c = s[i];

		if (c == '\0')
			return spp_parse_fault_set(f, start + 1, "unterminated string");
		if (c == '"')
			break;
		if (c == '\\') {
			if (s[i + 1] != '"' && s[i + 1] != '\\')
				return spp_parse_fault_set(f, i + 1, "unknown escape '\\%c' (only \\\" and \\\\)",
					     s[i + 1] ? s[i + 1] : ' ');
			c = s[++i];
		}
		if (len + 1 >= n)
			return spp_parse_fault_set(f, start + 1, "string longer than %zu characters", n - 1);
		out[len++] = c;
		i++;
	}
	out[len] = '\0';
	return i + 1;
}

/*
 * Offset of a '[' in the fnmatch glob pat that opens a character class
 * with no closing ']' (fnmatch would then read it as a literal '[' and
 * the rule would silently match nothing), or -1.
 */
static int glob_unclosed(const char *pat)
{
	for (int i = 0; pat[i]; i++) {
		int j = i + 1;

		if (pat[i] == '\\' && pat[i + 1]) {
			i++;
			continue;
		}
		if (pat[i] != '[')
			continue;
		if (pat[j] == '!' || pat[j] == '^')
			j++;
		if (pat[j] == ']')
			j++;
		while (pat[j] && pat[j] != ']')
			j++;
		if (!pat[j])
			return i;
		i = j;
	}
	return -1;
}

/* target = ("model" | "summary" | "layers" "[" selector "]") "." path */
static int parse_target(const char *s, int i, struct spp_rule *r, struct spp_parse_fault *f)
{
	int used;

	i = skip_ws(s, i);
	if (word(s, i, "model")) {
		r->scope = SPP_SCOPE_MODEL;
		i += 5;
	} else if (word(s, i, "summary")) {
		r->scope = SPP_SCOPE_SUMMARY;
		i += 7;
	} else if (strncmp(s + i, "layers", 6) == 0 &&
		   (s[i + 6] == '[' || s[i + 6] == ' ' || s[i + 6] == '.' || !s[i + 6])) {
		int open, p0, bad;

		r->scope = SPP_SCOPE_LAYERS;
		i = skip_ws(s, i + 6);
		if (s[i] != '[')
			return spp_parse_fault_set(f, i + 1, "expected '[' and a layer name pattern after 'layers'");
		open = i;
		i = skip_ws(s, i + 1);
		p0 = i;
		if (s[i] == '"') {
			i = quoted(s, i, r->pattern, sizeof(r->pattern), f);
			if (i < 0)
				return -1;
			i = skip_ws(s, i);
		} else {
			size_t len = 0;

			while (s[i] && s[i] != ']' && s[i] != ' ' && s[i] != '\t') {
				if (len + 1 >= sizeof(r->pattern))
					return spp_parse_fault_set(f, i + 1, "layer pattern too long");
				r->pattern[len++] = s[i++];
			}
			r->pattern[len] = '\0';
			i = skip_ws(s, i);
		}
		if (s[i] != ']')
			return spp_parse_fault_set(f, i + 1, "expected ']' to close the '[' at column %d "
				     "(quote a pattern that holds ']' or spaces)", open + 1);
		if (!r->pattern[0])
			return spp_parse_fault_set(f, open + 2, "empty layer pattern (use * for every layer)");
		if ((bad = glob_unclosed(r->pattern)) >= 0)
			return spp_parse_fault_set(f, p0 + bad + (s[p0] == '"' ? 2 : 1),
				     "this '[' of the layer pattern opens a character class that is never "
				     "closed (a bare pattern ends at the first ']'; quote it, or [[] for '[')");
		i++;
	} else {
		return spp_parse_fault_set(f, i + 1, "expected 'model', 'summary' or 'layers[PATTERN]'");
	}
	if (s[i] != '.')
		return spp_parse_fault_set(f, i + 1, "expected '.' and a metric after the scope");
	i++;
	used = spp_metric_path_parse(s + i, i + 1, &r->path, f);
	if (used < 0 || spp_metric_path_check(r->scope, &r->path, f) < 0)
		return -1;
	return i + used;
}

static const char *const op_text[] = {"==", "!=", ">=", "<=", ">", "<"};

const char *spp_rule_op_text(enum spp_rule_op op)
{
	return op_text[op];
}

static int parse_op(const char *s, int i, enum spp_rule_op *op, struct spp_parse_fault *f)
{
	for (int k = 0; k < 6; k++) {
		size_t n = strlen(op_text[k]);

		if (strncmp(s + i, op_text[k], n) == 0) {
			*op = (enum spp_rule_op)k;
			return i + (int)n;
		}
	}
	if (s[i] == '=')
		return spp_parse_fault_set(f, i + 1, "'=' is not a comparison: use '=='");
	if (!s[i])
		return spp_parse_fault_set(f, i + 1, "expected a comparison (==, !=, >=, <=, >, <) at the end");
	return spp_parse_fault_set(f, i + 1, "expected a comparison (==, !=, >=, <=, >, <), found '%c'", s[i]);
}

/* number = [+-] digits [. digits] [e [+-] digits], or .digits */
static int parse_number(const char *s, int i, double *out, struct spp_parse_fault *f)
{
	int j = i, digits = 0;
	char buf[64];
	char *end;

	if (s[j] == '+' || s[j] == '-')
		j++;
	while (isdigit((unsigned char)s[j]))
		j++, digits++;
	if (s[j] == '.') {
		j++;
		while (isdigit((unsigned char)s[j]))
			j++, digits++;
	}
	if (!digits)
		return s[i] ? spp_parse_fault_set(f, i + 1, "expected a number or a \"string\", found '%c'", s[i])
			    : spp_parse_fault_set(f, i + 1, "expected a number or a \"string\" at the end");
	if (s[j] == 'e' || s[j] == 'E') {
		int k = j + 1;

		if (s[k] == '+' || s[k] == '-')
			k++;
		if (!isdigit((unsigned char)s[k]))
			return spp_parse_fault_set(f, k + 1, "expected the exponent's digits");
		while (isdigit((unsigned char)s[k]))
			k++;
		j = k;
	}
	if (j - i >= (int)sizeof(buf))
		return spp_parse_fault_set(f, i + 1, "number too long");
	memcpy(buf, s + i, (size_t)(j - i));
	buf[j - i] = '\0';
	errno = 0;
	*out = strtod(buf, &end);
	if (errno || *end || !isfinite(*out))
		return spp_parse_fault_set(f, i + 1, "number '%s' out of range", buf);
	if (isalpha((unsigned char)s[j]) || s[j] == '_' || s[j] == '%')
		return spp_parse_fault_set(f, j + 1, "unexpected '%c' after the number (write 85%% as 0.85)", s[j]);
	return j;
}

int spp_rule_parse_expr(const char *s, struct spp_rule *r, struct spp_parse_fault *f)
{
	int i = parse_target(s, 0, r, f);

	if (i < 0)
		return -1;
	i = skip_ws(s, i);
	i = parse_op(s, i, &r->op, f);
	if (i < 0)
		return -1;
	i = skip_ws(s, i);
	if (s[i] == '"') {
		if (r->op != SPP_OP_EQ && r->op != SPP_OP_NE)
			return spp_parse_fault_set(f, i + 1, "a string compares only with == or !=");
		r->rhs_is_str = 1;
		i = quoted(s, i, r->rhs_str, sizeof(r->rhs_str), f);
	} else {
		i = parse_number(s, i, &r->rhs, f);
	}
	if (i < 0)
		return -1;
	i = skip_ws(s, i);
	if (s[i])
		return spp_parse_fault_set(f, i + 1, "unexpected '%c' after the rule's value", s[i]);
	return 0;
}

int spp_rule_parse_target(const char *s, struct spp_rule *r, struct spp_parse_fault *f)
{
	int i = parse_target(s, 0, r, f);

	if (i < 0)
		return -1;
	i = skip_ws(s, i);
	if (s[i] && strchr("=!<>", s[i]))
		return spp_parse_fault_set(f, i + 1, "a regression names a metric only: the bound is "
			     "\"max_drop\" / \"max_growth\", not a comparison");
	if (s[i])
		return spp_parse_fault_set(f, i + 1, "unexpected '%c' after the metric", s[i]);
	return 0;
}

static int rule_error(struct spp_error *err, const char *file, int idx, const char *name,
		      const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int rule_error(struct spp_error *err, const char *file, int idx, const char *name,
		      const char *fmt, ...)
{
	char what[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (name)
		return spp_error_format(err, file, "rules[%d] (\"%.60s\"): %s", idx, name, what);
	return spp_error_format(err, file, "rules[%d]: %s", idx, what);
}

static int tolerance(const cJSON *o, const char *key, int *has, double *v)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!t)
		return 0;
	if (!cJSON_IsNumber(t) || !isfinite(t->valuedouble) || t->valuedouble < 0)
		return -1;
	*has = 1;
	*v = t->valuedouble;
	return 0;
}

static int parse_rule(const cJSON *o, const char *file, int idx, struct spp_rule *r,
		      struct spp_error *err)
{
	static const char *const known[] = {"name", "expr", "regression", "max_drop",
					    "max_growth", "description"};
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(o, "name");
	const cJSON *expr = cJSON_GetObjectItemCaseSensitive(o, "expr");
	const cJSON *reg = cJSON_GetObjectItemCaseSensitive(o, "regression");
	const char *nm = cJSON_IsString(name) ? name->valuestring : NULL;
	const cJSON *m;
	struct spp_parse_fault f = {0};
	const char *text;

	memset(r, 0, sizeof(*r));
	if (!cJSON_IsObject(o))
		return rule_error(err, file, idx, NULL, "not an object");
	cJSON_ArrayForEach(m, o) {
		size_t k;

		for (k = 0; k < sizeof(known) / sizeof(known[0]); k++)
			if (!strcmp(m->string, known[k]))
				break;
		if (k == sizeof(known) / sizeof(known[0]))
			return rule_error(err, file, idx, nm, "unknown key \"%.40s\" (name, expr, "
					  "regression, max_drop, max_growth, description)", m->string);
	}
	if (name && !cJSON_IsString(name))
		return rule_error(err, file, idx, NULL, "\"name\" is not a string");
	if (!!expr == !!reg)
		return rule_error(err, file, idx, nm, "needs exactly one of \"expr\" and \"regression\"");
	if ((expr && !cJSON_IsString(expr)) || (reg && !cJSON_IsString(reg)))
		return rule_error(err, file, idx, nm, "\"%s\" is not a string", expr ? "expr" : "regression");
	text = expr ? expr->valuestring : reg->valuestring;
	if (strlen(text) >= sizeof(r->text))
		return rule_error(err, file, idx, nm, "rule longer than %zu characters", sizeof(r->text) - 1);
	snprintf(r->text, sizeof(r->text), "%s", text);
	snprintf(r->name, sizeof(r->name), "%s", nm ? nm : text);
	if (tolerance(o, "max_drop", &r->has_drop, &r->max_drop) ||
	    tolerance(o, "max_growth", &r->has_growth, &r->max_growth))
		return rule_error(err, file, idx, nm, "max_drop / max_growth must be a number >= 0");
	r->regression = reg != NULL;
	if (expr && (r->has_drop || r->has_growth))
		return rule_error(err, file, idx, nm, "max_drop / max_growth belong to a \"regression\" rule");
	if (reg && !r->has_drop && !r->has_growth)
		return rule_error(err, file, idx, nm, "a regression rule needs \"max_drop\" or \"max_growth\"");
	if (r->has_drop && r->max_drop > 1)
		return rule_error(err, file, idx, nm, "max_drop is a fraction (0.10 is 10 %%), at most 1");
	if ((expr ? spp_rule_parse_expr(text, r, &f) : spp_rule_parse_target(text, r, &f)) < 0)
		return rule_error(err, file, idx, nm, "%s: column %d: %s", expr ? "expr" : "regression",
				  f.column, f.what);
	return SPP_OK;
}

int spp_rules_parse(const cJSON *doc, const char *file, struct spp_rules *out,
		    struct spp_error *err)
{
	const cJSON *rules = cJSON_GetObjectItemCaseSensitive(doc, "rules"), *o;
	int n, i = 0, rc;

	memset(out, 0, sizeof(*out));
	if (!cJSON_IsObject(doc) || !cJSON_IsArray(rules))
		return spp_error_format(err, file, "not a rules file (no \"rules\" array)");
	n = cJSON_GetArraySize(rules);
	if (n == 0)
		return spp_error_format(err, file, "\"rules\" is empty: a gate with no rules checks nothing");
	out->rule = calloc((size_t)n, sizeof(*out->rule));
	if (!out->rule)
		return spp_error_set(err, SPP_E_NOMEM, "out of memory for %d rules", n);
	cJSON_ArrayForEach(o, rules) {
		rc = parse_rule(o, file, i, &out->rule[i], err);
		if (rc) {
			spp_rules_free(out);
			return rc;
		}
		out->needs_baseline |= out->rule[i].regression;
		i++;
	}
	out->n = n;
	return SPP_OK;
}

int spp_rules_load(const char *path, struct spp_rules *out, struct spp_error *err)
{
	FILE *f = spp_infile_fopen(path, err);
	char *text = NULL;
	long size;
	cJSON *doc = NULL;
	const char *end = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!f)
		return err ? err->code : SPP_E_IO;
	if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		rc = spp_error_set(err, SPP_E_IO, "cannot read '%s': %s", path, strerror(errno));
		goto done;
	}
	if (size > (1 << 24)) {
		rc = spp_error_format(err, path, "%ld bytes is too large for a rules file", size);
		goto done;
	}
	text = malloc((size_t)size + 1);
	if (!text) {
		rc = spp_error_set(err, SPP_E_NOMEM, "out of memory reading '%s'", path);
		goto done;
	}
	if (fread(text, 1, (size_t)size, f) != (size_t)size) {
		rc = spp_error_set(err, SPP_E_IO, "cannot read '%s': %s", path, strerror(errno));
		goto done;
	}
	text[size] = '\0';
	doc = cJSON_ParseWithLengthOpts(text, (size_t)size, &end, 0);
	while (doc && end && *end && strchr(" \t\r\n", *end))
		end++;
	if (doc && end && *end) {
		rc = spp_error_format(err, path, "not JSON (trailing data at byte %zu)",
				      (size_t)(end - text));
		goto done;
	}
	if (!doc) {
		rc = spp_error_format(err, path, "not JSON (error near byte %zu)",
				      end && end >= text ? (size_t)(end - text) : 0);
		goto done;
	}
	rc = spp_rules_parse(doc, path, out, err);
done:
	cJSON_Delete(doc);
	free(text);
	fclose(f);
	return rc;
}

void spp_rules_free(struct spp_rules *r)
{
	if (!r)
		return;
	free(r->rule);
	r->rule = NULL;
	r->n = 0;
}
