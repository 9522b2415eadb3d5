/*
 * SVG chart primitives of the HTML report (see svg.h). Coordinates are
 * written with one decimal: enough for a screen, and it keeps a 300-layer
 * page small.
 */
#include "reports/svg.h"

#include <math.h>
#include <string.h>

#include "base/safe_text.h"

void spp_html_escape(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = s ? strlen(s) : 0, at = 0;
	char esc[16];

	while (at < n) {
		const char *raw;
		size_t len;

		/* a newline or tab stays (pre-formatted notes); the rest of the
		 * hostile set is shown escaped, as on the terminal */
		if (p[at] == '\n' || p[at] == '\t') {
			fputc(p[at++], f);
			continue;
		}
		at += spp_safe_next(p + at, n - at, esc, &raw, &len);
		if (len != 1) {
			fwrite(raw, 1, len, f);
			continue;
		}
		switch (*raw) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(*raw, f);
		}
	}
}

static double step_of(double range)
{
	double rough = range / 5, mag, norm;

	if (!(rough > 0))
		return 1;
	mag = pow(10, floor(log10(rough)));
	norm = rough / mag;
	return (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * mag;
}

void spp_svg_scale_init(struct spp_svg_scale *s, double lo, double hi, int log,
			double p0, double p1)
{
	s->p0 = p0;
	s->p1 = p1;
	s->log = log;
	if (!isfinite(lo) || !isfinite(hi) || lo > hi)
		lo = hi = log ? 1 : 0;
	if (log) {
		if (!(lo > 0))
			lo = hi > 0 ? hi / 10 : 1;
		if (!(hi > 0))
			hi = lo * 10;
		s->lo = pow(10, floor(log10(lo) + 1e-9));
		s->hi = pow(10, ceil(log10(hi) - 1e-9));
		if (s->hi <= s->lo)
			s->hi = s->lo * 10;
		return;
	}
	if (hi == lo) {
		double d = lo == 0 ? 1 : fabs(lo) * 0.1;

		lo -= d;
		hi += d;
	}
	double step = step_of(hi - lo);

	s->lo = floor(lo / step + 1e-9) * step;
	s->hi = ceil(hi / step - 1e-9) * step;
}

double spp_svg_map(const struct spp_svg_scale *s, double v)
{
	double t;

	if (s->log)
		t = v > 0 ? (log10(v) - log10(s->lo)) / (log10(s->hi) - log10(s->lo)) : 0;
	else
		t = (v - s->lo) / (s->hi - s->lo);
	if (!(t >= 0))
		t = 0;
	if (t > 1)
		t = 1;
	return s->p0 + t * (s->p1 - s->p0);
}

int spp_svg_ticks(const struct spp_svg_scale *s, double *t, int max)
{
	int n = 0;

	if (s->log) {
		int d0 = (int)lround(log10(s->lo)), d1 = (int)lround(log10(s->hi));
		int every = (d1 - d0 + 5) / 6; /* at most about six labelled decades */

		if (every < 1)
			every = 1;
		for (int d = d0; d <= d1 && n < max; d += every) {
			t[n++] = pow(10, d);
			/* one or two decades read better with 2 and 5 between */
			if (d1 - d0 <= 2 && d < d1) {
				if (n < max)
					t[n++] = 2 * pow(10, d);
				if (n < max)
					t[n++] = 5 * pow(10, d);
			}
		}
		return n;
	}
	double step = step_of(s->hi - s->lo);

	for (double v = s->lo; v <= s->hi + step * 1e-6 && n < max; v += step)
		t[n++] = fabs(v) < step * 1e-9 ? 0 : v;
	return n;
}

void spp_svg_tick_label(double v, int pct, char *buf, size_t n)
{
	double a = fabs(v);

	if (pct)
		snprintf(buf, n, "%g%%", round(v * 1000) / 10);
	else if (a >= 1e9)
		snprintf(buf, n, "%gG", v / 1e9);
	else if (a >= 1e6)
		snprintf(buf, n, "%gM", v / 1e6);
	else if (a >= 1e3)
		snprintf(buf, n, "%gk", v / 1e3);
	else
		snprintf(buf, n, "%g", v);
}

void spp_svg_plot_init(struct spp_svg_plot *p, FILE *f, double x, double y, double w,
		       double h, double xlo, double xhi, int xlog, double ylo, double yhi,
		       int ylog)
{
	p->f = f;
	p->x = x;
	p->y = y;
	p->w = w;
	p->h = h;
	spp_svg_scale_init(&p->xs, xlo, xhi, xlog, x, x + w);
	spp_svg_scale_init(&p->ys, ylo, yhi, ylog, y + h, y);
}

void spp_svg_open(FILE *f, const char *id, double w, double h, const char *label)
{
	fputs("<svg", f);
	if (id) {
		fputs(" id=\"", f);
		spp_html_escape(f, id);
		fputc('"', f);
	}
	fprintf(f, " class=\"chart\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\""
		" role=\"img\" aria-label=\"", w, h, w, h);
	spp_html_escape(f, label);
	fputs("\">\n", f);
}

void spp_svg_close(FILE *f)
{
	fputs("</svg>\n", f);
}

void spp_svg_text(FILE *f, double x, double y, const char *anchor, const char *cls,
		  const char *text)
{
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\"", x, y);
	if (anchor && strcmp(anchor, "start") != 0)
		fprintf(f, " text-anchor=\"%s\"", anchor);
	if (cls)
		fprintf(f, " class=\"%s\"", cls);
	fputc('>', f);
	spp_html_escape(f, text);
	fputs("</text>\n", f);
}

void spp_svg_xaxis(const struct spp_svg_plot *p, const char *xlabel, int xpct)
{
	double t[64];
	char lab[32];
	int n = spp_svg_ticks(&p->xs, t, 64);

	for (int i = 0; i < n; i++) {
		double px = spp_svg_map(&p->xs, t[i]);

		fprintf(p->f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
			px, p->y, px, p->y + p->h);
		spp_svg_tick_label(t[i], xpct, lab, sizeof(lab));
		spp_svg_text(p->f, px, p->y + p->h + 14, "middle", "tick", lab);
	}
	fprintf(p->f, "<rect class=\"frame\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n",
		p->x, p->y, p->w, p->h);
	if (xlabel)
		spp_svg_text(p->f, p->x + p->w / 2, p->y + p->h + 32, "middle", "axis", xlabel);
}

void spp_svg_axes(const struct spp_svg_plot *p, const char *xlabel, const char *ylabel,
		  int xpct, int ypct)
{
	double t[64];
	char lab[32];
	int n;

	spp_svg_xaxis(p, xlabel, xpct);
	n = spp_svg_ticks(&p->ys, t, 64);
	for (int i = 0; i < n; i++) {
		double py = spp_svg_map(&p->ys, t[i]);

		fprintf(p->f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
			p->x, py, p->x + p->w, py);
		spp_svg_tick_label(t[i], ypct, lab, sizeof(lab));
		spp_svg_text(p->f, p->x - 5, py + 4, "end", "tick", lab);
	}
	if (ylabel) {
		fprintf(p->f, "<text class=\"axis\" text-anchor=\"middle\" transform=\"translate(%.1f %.1f) rotate(-90)\">",
			p->x - 44, p->y + p->h / 2);
		spp_html_escape(p->f, ylabel);
		fputs("</text>\n", p->f);
	}
}

static int in_scale(const struct spp_svg_scale *s, double v)
{
	double lo = s->lo, hi = s->hi;

	if (!isfinite(v) || (s->log && v <= 0))
		return 0;
	/* a hair of slack so a point exactly on a bound is drawn */
	return v >= lo - (hi - lo) * 1e-9 && v <= hi + (hi - lo) * 1e-9;
}

void spp_svg_polyline(const struct spp_svg_plot *p, const double *x, const double *y, int n,
		      const char *color, const char *dash)
{
	int drawn = 0;

	fprintf(p->f, "<polyline class=\"series\" stroke=\"%s\"", color);
	if (dash)
		fprintf(p->f, " stroke-dasharray=\"%s\"", dash);
	fputs(" points=\"", p->f);
	for (int i = 0; i < n; i++) {
		if (!in_scale(&p->xs, x[i]) || !in_scale(&p->ys, y[i]))
			continue;
		fprintf(p->f, "%s%.1f,%.1f", drawn++ ? " " : "", spp_svg_map(&p->xs, x[i]),
			spp_svg_map(&p->ys, y[i]));
	}
	fputs("\"/>\n", p->f);
}

void spp_svg_point(const struct spp_svg_plot *p, double x, double y, double r,
		   const char *color, const char *title)
{
	spp_svg_point_dodged(p, x, y, 0, r, color, title);
}

void spp_svg_point_dodged(const struct spp_svg_plot *p, double x, double y, double dx, double r,
			  const char *color, const char *title)
{
	if (!in_scale(&p->xs, x) || !in_scale(&p->ys, y))
		return;
	fprintf(p->f, "<circle class=\"pt\" cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\">",
		spp_svg_map(&p->xs, x) + dx, spp_svg_map(&p->ys, y), r, color);
	if (title) {
		fputs("<title>", p->f);
		spp_html_escape(p->f, title);
		fputs("</title>", p->f);
	}
	fputs("</circle>\n", p->f);
}

void spp_svg_hline(const struct spp_svg_plot *p, double y, const char *cls, const char *label)
{
	double py;

	if (!in_scale(&p->ys, y))
		return;
	py = spp_svg_map(&p->ys, y);
	fprintf(p->f, "<line class=\"%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
		cls, p->x, py, p->x + p->w, py);
	if (label)
		spp_svg_text(p->f, p->x + p->w - 4, py - 4, "end", "ref", label);
}

void spp_svg_vline(const struct spp_svg_plot *p, double x, const char *cls, const char *label)
{
	double px;

	if (!in_scale(&p->xs, x))
		return;
	px = spp_svg_map(&p->xs, x);
	fprintf(p->f, "<line class=\"%s\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n",
		cls, px, p->y, px, p->y + p->h);
	if (label) {
		/* label inside the plot, on the side with room */
		int left = px > p->x + p->w * 0.7;

		spp_svg_text(p->f, px + (left ? -4 : 4), p->y + 12, left ? "end" : "start", "ref",
			     label);
	}
}

void spp_svg_rect(FILE *f, double x, double y, double w, double h, const char *color,
		  const char *title)
{
	if (!(w > 0) || !(h > 0))
		return;
	fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">", x, y,
		w, h, color);
	if (title) {
		fputs("<title>", f);
		spp_html_escape(f, title);
		fputs("</title>", f);
	}
	fputs("</rect>\n", f);
}

double spp_svg_legend(FILE *f, double x, double y, double w, const char *const *names,
		      const char *const *colors, int n)
{
	double cx = x, cy = y;

	for (int i = 0; i < n; i++) {
		/* about 6.5 px a character at the legend's 11 px */
		double item = 22 + 6.5 * (double)strlen(names[i]) + 14;

		if (cx > x && cx + item > x + w) {
			cx = x;
			cy += 16;
		}
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"10\" fill=\"%s\"/>\n",
			cx, cy - 9, colors[i]);
		spp_svg_text(f, cx + 16, cy, "start", "legend", names[i]);
		cx += item;
	}
	return cy - y + 16;
}
