/*
 * The one sanitizer for text that came from a file (layer and tensor names,
 * keys, tokens, a report's strings) before it reaches a terminal, a log
 * line, an error message, Markdown, CSV or HTML. A hostile name must not
 * drive the terminal, forge a line (a CI workflow command), reorder what is
 * shown around it, or hide: every C0 and C1 control, DEL, bidi control,
 * invisible formatting character, line or paragraph separator and byte
 * that is not UTF-8 is written as a visible escape ("\x1b", "\u202e"), so
 * the output stays on one line and shows that the name held it.
 */
#ifndef SPP_BASE_SAFE_TEXT_H
#define SPP_BASE_SAFE_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * One UTF-8 sequence at s (n bytes, n >= 1): its length with *cp set, or 0
 * when it is not well-formed UTF-8 (overlong, surrogate, past U+10FFFF,
 * truncated).
 */
size_t spp_utf8_next(const unsigned char *s, size_t n, uint32_t *cp);

/* 1 when code point cp must never be shown raw (the classes above). */
int spp_cp_hostile(uint32_t cp);

/*
 * s (n bytes, or up to its NUL with n == (size_t)-1) into out (cap bytes,
 * NUL-terminated; cap >= 1) with every hostile code point and stray byte
 * escaped. The result is cut whole: never inside an escape or a UTF-8
 * sequence. Returns the length the whole result needs (without the NUL),
 * as snprintf does; s NULL reads as "".
 */
size_t spp_safe_copy(char *out, size_t cap, const char *s, size_t n);

/*
 * The next piece of the clean text at s (n >= 1 bytes, s[0] != NUL): either
 * the UTF-8 sequence itself (*raw = s) or its escape, written into esc
 * (*raw = esc); *rawlen is the piece's length. Returns how many bytes of s
 * it consumed. The writers with escaping of their own (Markdown, HTML, CSV)
 * walk a name with it.
 */
size_t spp_safe_next(const unsigned char *s, size_t n, char esc[16], const char **raw,
		     size_t *rawlen);

/* spp_safe_copy into a new heap string (NULL when out of memory). */
char *spp_safe_dup(const char *s);

/* 1 when s holds nothing spp_safe_copy would change. */
int spp_safe_clean(const char *s);

/* s written to f through spp_safe_copy, at most n bytes of s (or to its NUL
 * with n == (size_t)-1). */
void spp_safe_fputs(FILE *f, const char *s, size_t n);

/*
 * A spreadsheet would evaluate a CSV cell that starts with '=', '+', '-',
 * '@', a tab or a CR: 1 when s does and is not a plain number ("-0.5" stays
 * a number), so the writer prefixes it with "'".
 */
int spp_safe_csv_formula(const char *s);

/*
 * A text built in pieces into a fixed buffer: every piece is cut at the
 * buffer's end and nothing is written past it, however long a piece
 * prints (a report's 1e308 as "%.0f" is 309 digits). len < cap always;
 * cut is set once a piece did not fit whole.
 */
struct spp_buf {
	char *s;
	size_t cap, len;
	int cut;
};

/* b over s (cap >= 1 bytes), holding "". */
void spp_buf_init(struct spp_buf *b, char *s, size_t cap);

/* Append printf(fmt, ...) to b, cut at its end. */
void spp_buf_add(struct spp_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
