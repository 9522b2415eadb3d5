#include "base/safe_text.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t spp_utf8_next(const unsigned char *s, size_t n, uint32_t *cp)
{
	static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
	size_t len;
	uint32_t c;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, c = s[0] & 0x1fu;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, c = s[0] & 0x0fu;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, c = s[0] & 0x07u;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3fu);
	}
	if (c < min[len] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return len;
}

/* ranges of code points never shown raw, in order */
static const struct {
	uint32_t lo, hi;
} hostile[] = {
	{0x0000, 0x001f},   /* C0 controls */
	{0x007f, 0x009f},   /* DEL, C1 controls (U+009B is an 8-bit CSI) */
	{0x00ad, 0x00ad},   /* soft hyphen */
	{0x034f, 0x034f},   /* combining grapheme joiner */
	{0x061c, 0x061c},   /* Arabic letter mark */
	{0x115f, 0x1160},   /* Hangul fillers */
	{0x17b4, 0x17b5},   /* Khmer inherent vowels */
	{0x180b, 0x180f},   /* Mongolian variation selectors, vowel separator */
	{0x200b, 0x200f},   /* zero-width space/joiners, LRM, RLM */
	{0x2028, 0x202e},   /* line/paragraph separators, bidi embeddings, overrides */
	{0x2060, 0x206f},   /* word joiner, invisible operators, bidi isolates */
	{0x3164, 0x3164},   /* Hangul filler */
	{0xfe00, 0xfe0f},   /* variation selectors */
	{0xfeff, 0xfeff},   /* zero-width no-break space (BOM) */
	{0xffa0, 0xffa0},   /* halfwidth Hangul filler */
	{0xfff9, 0xfffb},   /* interlinear annotation */
	{0xfffe, 0xffff},   /* noncharacters */
	{0x110bd, 0x110bd}, /* Kaithi number sign */
	{0x110cd, 0x110cd},
	{0x13430, 0x1343f}, /* Egyptian hieroglyph format controls */
	{0x1bca0, 0x1bca3}, /* shorthand format controls */
	{0x1d173, 0x1d17a}, /* musical formatting */
	{0xe0000, 0xe0fff}, /* tags, variation selectors supplement */
};

int spp_cp_hostile(uint32_t cp)
{
	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++)
		if (cp >= hostile[i].lo && cp <= hostile[i].hi)
			return 1;
		else if (cp < hostile[i].lo)
			return 0;
	return 0;
}

size_t spp_safe_next(const unsigned char *s, size_t n, char esc[16], const char **raw,
		     size_t *rawlen)
{
	uint32_t cp;
	size_t len = spp_utf8_next(s, n, &cp);

	if (len == 0) {
		snprintf(esc, 16, "\\x%02x", s[0]);
		len = 1;
	} else if (spp_cp_hostile(cp)) {
		snprintf(esc, 16, cp < 0x100 ? "\\x%02x" : cp < 0x10000 ? "\\u%04x" : "\\U%08x",
			 (unsigned)cp);
	} else {
		*raw = (const char *)s;
		*rawlen = len;
		return len;
	}
	*raw = esc;
	*rawlen = strlen(esc);
	return len;
}

size_t spp_safe_copy(char *out, size_t cap, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t need = 0, at = 0;
	int full = 0;
	char esc[16];

	if (n == (size_t)-1)
		n = strlen((const char *)p);
	if (cap)
		out[0] = '\0';
	while (at < n && p[at]) {
		const char *raw;
		size_t rawlen;

		at += spp_safe_next(p + at, n - at, esc, &raw, &rawlen);
		if (!full && need + rawlen < cap) {
			memcpy(out + need, raw, rawlen);
			out[need + rawlen] = '\0';
		} else {
			full = 1;
		}
		need += rawlen;
	}
	return need;
}

int spp_safe_clean(const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t n = strlen((const char *)p), at = 0;

	while (at < n) {
		uint32_t cp;
		size_t len = spp_utf8_next(p + at, n - at, &cp);

		if (len == 0 || spp_cp_hostile(cp))
			return 0;
		at += len;
	}
	return 1;
}

char *spp_safe_dup(const char *s)
{
	size_t need = spp_safe_copy(NULL, 0, s, (size_t)-1);
	char *out = malloc(need + 1);

	if (out)
		spp_safe_copy(out, need + 1, s, (size_t)-1);
	return out;
}

void spp_safe_fputs(FILE *f, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t at = 0;
	char esc[16];

	if (n == (size_t)-1)
		n = strlen((const char *)p);
	while (at < n && p[at]) {
		const char *raw;
		size_t rawlen;

		at += spp_safe_next(p + at, n - at, esc, &raw, &rawlen);
		fwrite(raw, 1, rawlen, f);
	}
}

int spp_safe_csv_formula(const char *s)
{
	char *end;

	if (!s || !strchr("=+-@\t\r", s[0]) || !s[0])
		return 0;
	if (s[0] == '-' || s[0] == '+') {
		strtod(s, &end);
		if (end != s && *end == '\0' && strspn(s + 1, "0123456789.eE+-") == strlen(s + 1))
			return 0;
	}
	return 1;
}

void spp_buf_init(struct spp_buf *b, char *s, size_t cap)
{
	b->s = s;
	b->cap = cap;
	b->len = 0;
	b->cut = 0;
	s[0] = '\0';
}

void spp_buf_add(struct spp_buf *b, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (b->len + 1 >= b->cap) {
		b->cut = 1;
		return;
	}
	va_start(ap, fmt);
	w = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (w < 0)
		return;
	if ((size_t)w >= b->cap - b->len) {
		b->len = b->cap - 1;
		b->cut = 1;
	} else {
		b->len += (size_t)w;
	}
}
