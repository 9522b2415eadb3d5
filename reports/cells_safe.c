/*
 * The report writers' side of the one sanitizer (base/safe_text.h):
 * a report tree whose strings are all clean, and the Markdown and CSV cell
 * writers, which add their own syntax escaping on top.
 */
#include "reports/cells.h"

#include <csv.h>
#include <stdlib.h>
#include <string.h>

#include "base/safe_text.h"

static int tree_clean(const cJSON *t)
{
	for (const cJSON *c = t; c; c = c->next) {
		if (c->string && !spp_safe_clean(c->string))
			return 0;
		if (cJSON_IsString(c) && c->valuestring && !spp_safe_clean(c->valuestring))
			return 0;
		if (c->child && !tree_clean(c->child))
			return 0;
	}
	return 1;
}

/* Escape in place every key and string below t; 0, or -1 out of memory. */
static int tree_escape(cJSON *t)
{
	for (cJSON *c = t; c; c = c->next) {
		char *s;

		if (c->string && !spp_safe_clean(c->string)) {
			if (!(s = spp_safe_dup(c->string)))
				return -1;
			cJSON_free(c->string);
			c->string = s;
		}
		if (cJSON_IsString(c) && c->valuestring && !spp_safe_clean(c->valuestring)) {
			if (!(s = spp_safe_dup(c->valuestring)))
				return -1;
			cJSON_free(c->valuestring);
			c->valuestring = s;
		}
		if (c->child && tree_escape(c->child))
			return -1;
	}
	return 0;
}

/* c's own key and string, and everything below it, clean */
static int node_clean(const cJSON *c)
{
	return (!c->string || spp_safe_clean(c->string)) &&
	       (!cJSON_IsString(c) || !c->valuestring || spp_safe_clean(c->valuestring)) &&
	       tree_clean(c->child);
}

const cJSON *spp_cell_safe_tree(const cJSON *tree, cJSON **owned)
{
	cJSON *copy;

	*owned = NULL;
	if (!tree || node_clean(tree))
		return tree;
	/* a duplicate has no siblings: escaping from it covers it alone */
	if (!(copy = cJSON_Duplicate(tree, 1)) || tree_escape(copy)) {
		cJSON_Delete(copy);
		return NULL;
	}
	*owned = copy;
	return copy;
}

void spp_cell_md(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t n = strlen((const char *)p), at = 0, len;
	const char *raw;
	char esc[16];

	while (at < n) {
		at += spp_safe_next(p + at, n - at, esc, &raw, &len);
		for (size_t i = 0; i < len; i++) {
			/* backslash escapes for what GFM would read as syntax */
			if (strchr("|\\*_`<[]", raw[i]) && raw[i])
				fputc('\\', f);
			fputc(raw[i], f);
		}
	}
}

void spp_cell_md_code(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t n = strlen((const char *)p), at = 0, len;
	int two = strchr((const char *)p, '`') != NULL;
	const char *raw;
	char esc[16];

	/* no backslash escapes inside a code span: only '|', which GFM
	 * tables split on even there; a backtick gets a double fence */
	fputs(two ? "`` " : "`", f);
	while (at < n) {
		at += spp_safe_next(p + at, n - at, esc, &raw, &len);
		if (len == 1 && raw[0] == '|')
			fputc('\\', f);
		fwrite(raw, 1, len, f);
	}
	fputs(two ? " ``" : "`", f);
}

void spp_cell_csv(FILE *f, const char *s)
{
	size_t need = spp_safe_copy(NULL, 0, s, (size_t)-1);
	char *buf = malloc(need + 2), *v;
	size_t len;

	if (!buf)
		return;
	/* a would-be formula gets a leading apostrophe so that no
	 * spreadsheet evaluates it */
	spp_safe_copy(buf + 1, need + 1, s, (size_t)-1);
	v = buf + 1;
	if (spp_safe_csv_formula(v))
		*--v = '\'';
	len = strlen(v);
	/* quote only where RFC 4180 needs it, so numbers stay bare */
	if (strpbrk(v, ",\"") || (len && (v[0] == ' ' || v[len - 1] == ' ')))
		csv_fwrite(f, v, len);
	else
		fwrite(v, 1, len, f);
	free(buf);
}
