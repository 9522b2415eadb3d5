/*
 * Fused epilogues in the HTML report (analyze --epilogue): one table row
 * per layer x format with an epilogue, the fused and unfused medians and
 * the saving, from runs[].epilogue. No section without one.
 */
#include <math.h>
#include <string.h>

#include "reports/cells.h"
#include "reports/html.h"
#include "reports/svg.h"

static int has_epilogue(const cJSON *layers)
{
	const cJSON *l, *r;

	cJSON_ArrayForEach(l, layers)
		cJSON_ArrayForEach(r, (cJSON_IsArray(spp_cell_get(l, "runs")) ? spp_cell_get(l, "runs") : NULL))
			if (cJSON_IsObject(spp_cell_get(r, "epilogue")))
				return 1;
	return 0;
}

static void cell_time(FILE *f, const cJSON *e, const char *path)
{
	char buf[32];
	double v;

	spp_html_fmt_time(spp_cell_num(e, path, &v) ? v : NAN, buf, sizeof(buf));
	fputs("<td class=\"num\">", f);
	spp_html_escape(f, buf);
	fputs("</td>", f);
}

static void row(FILE *f, const cJSON *l, const cJSON *r, const cJSON *e)
{
	double sv;

	fputs("<tr><td>", f);
	spp_html_escape(f, spp_cell_str(l, "name"));
	fputs("</td><td>", f);
	spp_html_escape(f, spp_cell_str(r, "format"));
	fputs("</td><td>", f);
	spp_html_escape(f, spp_cell_str(e, "kind"));
	fputs("</td><td>", f);
	spp_html_escape(f, spp_cell_str(e, "bias"));
	fputs("</td>", f);
	cell_time(f, e, "fused_time_ns.median");
	cell_time(f, e, "unfused_time_ns.median");
	if (spp_cell_num(e, "saving", &sv))
		fprintf(f, "<td class=\"num %s\">%+.1f%%</td>", sv >= 0 ? "good" : "bad", 100 * sv);
	else {
		fputs("<td>", f);
		spp_html_escape(f, spp_cell_str(e, "reason") ? spp_cell_str(e, "reason") : "not timed");
		fputs("</td>", f);
	}
	fputs("</tr>\n", f);
}

void spp_html_epilogue(struct spp_html *h)
{
	const cJSON *l, *r;
	FILE *f = h->f;

	if (!has_epilogue(h->layers))
		return;
	spp_html_section(f, "epilogue", "Fused epilogue",
			 "Each format with the epilogue (bias, then ReLU for bias_relu) fused into the "
			 "kernel against the same kernel followed by a pass over Y, timed in one "
			 "interleaved run; the saving is 1 - fused / unfused. The bias is the model's, "
			 "or zeros where the layer has none.");
	fputs("<table class=\"layers\" id=\"epilogue-table\">\n<thead><tr><th>layer</th><th>format</th>"
	      "<th>epilogue</th><th>bias</th><th>fused</th><th>unfused</th><th>saving</th></tr></thead>"
	      "\n<tbody>\n", f);
	cJSON_ArrayForEach(l, h->layers)
		cJSON_ArrayForEach(r, (cJSON_IsArray(spp_cell_get(l, "runs")) ? spp_cell_get(l, "runs") : NULL))
			if (cJSON_IsObject(spp_cell_get(r, "epilogue")))
				row(f, l, r, spp_cell_get(r, "epilogue"));
	fputs("</tbody></table>\n</section>\n", f);
}
