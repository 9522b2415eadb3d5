#include "cmd/progress.h"

#include <math.h>
#include <string.h>

void cmd_progress_init(struct cmd_progress *p, FILE *f, int enabled,
		       const double *work, int total)
{
	memset(p, 0, sizeof(*p));
	p->f = enabled ? f : NULL;
	p->work = work;
	p->total = total;
}

static void clock_text(double s, char *buf, size_t n)
{
	long t = (long)(s + 0.5);

	if (t >= 3600)
		snprintf(buf, n, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
	else
		snprintf(buf, n, "%ld:%02ld", t / 60, t % 60);
}

/* Fraction of the work in the first done layers. */
static double fraction_done(const struct cmd_progress *p, int done)
{
	double all = 0, part = 0;

	if (!p->work)
		return p->total > 0 ? (double)done / p->total : 1;
	for (int i = 0; i < p->total; i++) {
		all += p->work[i];
		if (i < done)
			part += p->work[i];
	}
	return all > 0 ? part / all : 1;
}

void cmd_progress_format(const struct cmd_progress *p, int done, const char *layer,
			 double elapsed_s, char *buf, size_t n)
{
	char el[32], left[32];
	double frac = fraction_done(p, done);

	clock_text(elapsed_s, el, sizeof(el));
	/* no estimate until some work is done: it would be a guess */
	if (frac > 0 && frac < 1)
		clock_text(elapsed_s / frac * (1 - frac), left, sizeof(left));
	else
		snprintf(left, sizeof(left), "%s", frac >= 1 ? "0:00" : "?");
	snprintf(buf, n, "[%d/%d] %.60s  %s elapsed, ~%s left", done, p->total,
		 layer ? layer : "", el, left);
}

void cmd_progress_update(struct cmd_progress *p, int done, const char *layer,
			 double elapsed_s)
{
	char line[160];
	int w;

	if (!p->f)
		return;
	cmd_progress_format(p, done, layer, elapsed_s, line, sizeof(line));
	w = (int)strlen(line);
	/* pad over the tail of a longer previous line */
	fprintf(p->f, "\r%s%*s", line, p->width > w ? p->width - w : 0, "");
	fflush(p->f);
	p->width = w;
}

void cmd_progress_clear(struct cmd_progress *p)
{
	if (!p->f || !p->width)
		return;
	fprintf(p->f, "\r%*s\r", p->width, "");
	fflush(p->f);
	p->width = 0;
}
