/*
 * Private to the HTML report (html*.c, svg*.c): the chart primitives spprof
 * draws its inline SVG with. A page must open with no network access, so
 * every chart is plain markup written here: scales with nice ticks (log
 * where a ratio spans decades), axes, lines, points, bars, legends. Every
 * string that enters the markup goes through spp_html_escape.
 */
#ifndef SPP_REPORTS_SVG_H
#define SPP_REPORTS_SVG_H

#include <stddef.h>
#include <stdio.h>

/*
 * Write s as HTML text or attribute value: & < > " ' escaped, and every
 * control, bidi or invisible code point and invalid UTF-8 byte but newline
 * and tab shown as an escape (base/safe_text.h), so a hostile
 * layer name can neither inject markup, reorder the page nor make it
 * invalid. NULL writes nothing.
 */
void spp_html_escape(FILE *f, const char *s);


/* A value axis: [lo, hi] drawn over pixels [p0, p1] (p1 < p0 for y). */
struct spp_svg_scale {
	double lo, hi;
	double p0, p1;
	int log;
};

/*
 * A scale over the data range [lo, hi], widened to nice bounds: whole
 * decades on a log scale (lo, hi must be > 0), multiples of the tick step
 * on a linear one. A degenerate range is widened around its value.
 */
void spp_svg_scale_init(struct spp_svg_scale *s, double lo, double hi, int log,
			double p0, double p1);

/* Pixel of v, clamped to the scale's ends (a log scale maps v <= 0 to lo). */
double spp_svg_map(const struct spp_svg_scale *s, double v);

/* Tick values of s into t (at most max); returns how many. */
int spp_svg_ticks(const struct spp_svg_scale *s, double *t, int max);

/* A tick label: "0.5", "20", "1k", "1M"; pct: "50%" for a 0..1 value. */
void spp_svg_tick_label(double v, int pct, char *buf, size_t n);

/* A plot area in an open <svg>: pixels x..x+w, y..y+h, and its scales. */
struct spp_svg_plot {
	FILE *f;
	double x, y, w, h;
	struct spp_svg_scale xs, ys;
};

void spp_svg_plot_init(struct spp_svg_plot *p, FILE *f, double x, double y, double w,
		       double h, double xlo, double xhi, int xlog, double ylo, double yhi,
		       int ylog);

/*
 * Open an <svg> of w x h pixels that scales down with the page; id may be
 * NULL; label is its accessible name. spp_svg_close ends it.
 */
void spp_svg_open(FILE *f, const char *id, double w, double h, const char *label);
void spp_svg_close(FILE *f);

/* Vertical grid, x ticks, frame and x title of p (xpct: ticks as percentages). */
void spp_svg_xaxis(const struct spp_svg_plot *p, const char *xlabel, int xpct);

/* Grid, ticks and axis titles of p on both axes (xpct/ypct: ticks as percentages). */
void spp_svg_axes(const struct spp_svg_plot *p, const char *xlabel, const char *ylabel,
		  int xpct, int ypct);

/* Text at pixel (x, y); anchor "start", "middle" or "end"; cls may be NULL. */
void spp_svg_text(FILE *f, double x, double y, const char *anchor, const char *cls,
		  const char *text);

/* Data polyline through the n points whose x and y are finite and in range. */
void spp_svg_polyline(const struct spp_svg_plot *p, const double *x, const double *y, int n,
		      const char *color, const char *dash);

/* A data point with a hover tooltip (title may be NULL). */
void spp_svg_point(const struct spp_svg_plot *p, double x, double y, double r,
		   const char *color, const char *title);

/*
 * The same, dx pixels off its x: series that share x values (every layer
 * of a model often has the same theoretical speedup) sit side by side.
 */
void spp_svg_point_dodged(const struct spp_svg_plot *p, double x, double y, double dx, double r,
			  const char *color, const char *title);

/* Reference lines across the plot at data y / data x, with a label. */
void spp_svg_hline(const struct spp_svg_plot *p, double y, const char *cls, const char *label);
void spp_svg_vline(const struct spp_svg_plot *p, double x, const char *cls, const char *label);

/* A filled rectangle in pixels, with a tooltip (title may be NULL). */
void spp_svg_rect(FILE *f, double x, double y, double w, double h, const char *color,
		  const char *title);

/*
 * A legend row of n swatches from pixel (x, y), wrapping at width w;
 * returns the height it took.
 */
double spp_svg_legend(FILE *f, double x, double y, double w, const char *const *names,
		      const char *const *colors, int n);

#endif
