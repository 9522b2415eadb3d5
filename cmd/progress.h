/*
 * The progress line of `spprof analyze` on stderr: layers done of total,
 * the current layer, elapsed and estimated remaining time. Shown only when
 * stderr is a terminal and --quiet is off; redrawn in place with '\r' and
 * cleared at the end, so nothing of it stays in the scrollback or in a log.
 *
 * The estimate weights layers by their dense FLOPs: a 4096x4096 layer
 * takes far longer than a 64x64 one, so "3 of 6 layers" is not half way.
 */
#ifndef SPP_CMD_PROGRESS_H
#define SPP_CMD_PROGRESS_H

#include <stdio.h>

struct cmd_progress {
	FILE *f;            /* stderr; NULL: silent */
	const double *work; /* per layer, e.g. dense FLOPs; NULL: every layer weighs 1 */
	int total;
	int width;          /* columns last drawn, to blank them on clear */
};

/*
 * Start: f is used only when enabled (a terminal, not --quiet); work is
 * borrowed and must outlive p.
 */
void cmd_progress_init(struct cmd_progress *p, FILE *f, int enabled,
		       const double *work, int total);

/* Redraw: done layers finished, layer is the one now running (may be NULL). */
void cmd_progress_update(struct cmd_progress *p, int done, const char *layer,
			 double elapsed_s);

/* Blank the line and return the cursor to its start. */
void cmd_progress_clear(struct cmd_progress *p);

/*
 * The line's text without the '\r' (for tests and for update): e.g.
 * "[3/6] encoder.layer.0.output.dense.weight  0:04 elapsed, ~0:07 left".
 */
void cmd_progress_format(const struct cmd_progress *p, int done, const char *layer,
			 double elapsed_s, char *buf, size_t n);

#endif
