/*
 * Short, unique layer names for the writers for people. A name that fits
 * SPP_NAME_WIDTH columns is shown whole; a longer one has its middle
 * elided, keeping the head up to the layer index and the last parts. Where
 * two layers would then read the same, each is shown from where it first
 * differs from the others ("…dense_1.kernel" against "…dense_2.kernel"),
 * and a pair that still reads the same gets "~2", "~3". The result is the
 * layer's "display_name" in the writer's copy of the report; JSON and CSV
 * keep the full name, text lists the shortened ones after its table and
 * HTML keeps the full name in its tooltips.
 */
#include "reports/cells.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ELLIPSIS "\xe2\x80\xa6"

static size_t width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

/* byte offset of code point i of s (or its end) */
static size_t at_cp(const char *s, size_t i)
{
	size_t p = 0;

	for (; s[p] && i; i--)
		do
			p++;
		while (((unsigned char)s[p] & 0xc0) == 0x80);
	return p;
}

void spp_names_elide(const char *s, int maxw, char *out, size_t n)
{
	size_t len = strlen(s), w = width(s), budget = (size_t)maxw - 1, head = 0, room, p;

	if (w <= (size_t)maxw || maxw < 8) {
		snprintf(out, n, "%s", s);
		return;
	}
	/* the head: up to the first numeric part (the layer index) */
	for (p = 0; p < len && !head;) {
		size_t e = p;
		int digits = 1;

		while (e < len && s[e] != '.') {
			digits &= s[e] >= '0' && s[e] <= '9';
			e++;
		}
		if (digits && e > p && width(s) - width(s + e) + 8 <= budget)
			head = width(s) - width(s + e);
		p = e + 1;
	}
	if (!head) {
		head = budget / 2;
		for (p = at_cp(s, head); p > 0 && s[p] != '.'; p--)
			;
		if (p > 0 && width(s) - width(s + p) >= head / 2)
			head = width(s) - width(s + p);
	}
	room = budget - head;
	/* the tail starts after a dot if that keeps over half its room */
	p = at_cp(s, w - room);
	for (size_t q = p; q < len; q++)
		if (s[q - 1] == '.') {
			if (2 * width(s + q) > room)
				p = q;
			break;
		}
	snprintf(out, n, "%.*s" ELLIPSIS "%s", (int)at_cp(s, head), s, s + p);
}

static size_t common_prefix(const char *a, const char *b)
{
	size_t i = 0;

	while (a[i] && a[i] == b[i])
		i++;
	while (i > 0 && ((unsigned char)a[i] & 0xc0) == 0x80)
		i--;
	return i;
}

struct entry {
	cJSON *layer;
	const char *name;
	char shown[4 * SPP_NAME_WIDTH + 16];
};

static int by_shown(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->shown, ((const struct entry *)b)->shown);
}

/* "…" and name from where it first differs from the others in e[lo, hi) */
static void distinguish(struct entry *e, int lo, int hi, int i, int maxw)
{
	size_t d = 0, start;

	for (int j = lo; j < hi; j++)
		if (j != i) {
			size_t c = common_prefix(e[i].name, e[j].name);
			d = c > d ? c : d;
		}
	/* back to the start of the part that differs */
	for (start = d; start > 0 && !strchr("./:", e[i].name[start - 1]); start--)
		;
	if (start == 0 || width(e[i].name + start) + 1 >= width(e[i].name))
		return; /* differs early: the plain elision shows it already */
	strcpy(e[i].shown, ELLIPSIS);
	spp_names_elide(e[i].name + start, maxw - 1, e[i].shown + strlen(ELLIPSIS),
			sizeof(e[i].shown) - strlen(ELLIPSIS));
}

/* every group of equal shown names in the sorted e gets f applied */
static void each_group(struct entry *e, int n, int maxw, int suffix)
{
	for (int lo = 0, hi; lo < n; lo = hi) {
		for (hi = lo + 1; hi < n && !strcmp(e[hi].shown, e[lo].shown); hi++)
			;
		for (int i = lo; hi - lo > 1 && i < hi; i++) {
			if (!suffix) {
				if (width(e[i].name) > (size_t)maxw)
					distinguish(e, lo, hi, i, maxw);
			} else if (i > lo) {
				size_t cut = at_cp(e[i].shown, (size_t)maxw - 4);
				snprintf(e[i].shown + cut, sizeof(e[i].shown) - cut, "~%d", i - lo + 1);
			}
		}
	}
}

int spp_names_shorten(cJSON *tree, int maxw)
{
	cJSON *layers = cJSON_GetObjectItemCaseSensitive(tree, "layers"), *l;
	int n = 0, k = 0, rc = 0;
	struct entry *e;

	cJSON_ArrayForEach(l, (cJSON_IsArray(layers) ? layers : NULL))
		n += cJSON_IsString(cJSON_GetObjectItemCaseSensitive(l, "name"));
	if (!n)
		return 0;
	if (!(e = calloc((size_t)n, sizeof(*e))))
		return -1;
	cJSON_ArrayForEach(l, layers) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(l, "name");

		if (!cJSON_IsString(name))
			continue;
		e[k].layer = l;
		e[k].name = name->valuestring;
		spp_names_elide(e[k].name, maxw, e[k].shown, sizeof(e[k].shown));
		k++;
	}
	for (int pass = 0; pass < 2; pass++) {
		qsort(e, (size_t)n, sizeof(*e), by_shown);
		each_group(e, n, maxw, pass);
	}
	for (int i = 0; i < n && !rc; i++)
		if (strcmp(e[i].shown, e[i].name) &&
		    !cJSON_AddStringToObject(e[i].layer, "display_name", e[i].shown))
			rc = -1;
	free(e);
	return rc;
}
