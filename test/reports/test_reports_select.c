/*
 * The selections every report prints: each layer's best storage, fastest
 * run and recommendation are chosen once (profiler/derive.c) and the
 * text, Markdown and HTML reports name the same ones (the text and
 * Markdown tables print the recommendation as "deploy", the HTML both). Before, each renderer chose with
 * its own rule: on a layer no format shrinks, the text said "dense 1.00x"
 * and the HTML "bsr16 1.00x"; the text and Markdown took a failed run's
 * speedup as the fastest. The fixture's three layers, with runs added by
 * hand: layer 0 (2:4) with an ok csr and nm2_4 and a failed bsr4 that
 * carries a larger speedup; layer 1 made 1 % sparse (no format smaller
 * than dense) with every run slower than dense; layer 2 with no ok sparse
 * run at all.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test/reports_fixture.h"

struct want {
	const char *best;    /* best storage format */
	const char *fastest; /* NULL: none */
	const char *not_best, *not_fastest; /* what a renderer's own rule would have named */
	const char *deploy;  /* the recommendation the text and Markdown tables print */
};

static void add_run(struct spp_layer_runs *lr, const char *format, enum spp_run_status st,
		    double median, double dense_median)
{
	struct spp_run *r = &lr->runs[lr->nruns++];

	spp_run_init(r, "cpu", format);
	r->status = st;
	if (st != SPP_RUN_OK) {
		snprintf(r->reason, sizeof(r->reason), "output differs from the reference");
		r->speedup = 9; /* what a failed run may still carry; never chosen */
		return;
	}
	r->time = (struct spp_time_stats){median, median, median, 5, 0, 0};
	r->speedup = dense_median / median;
	r->efficiency = r->speedup / 2;
}

/* Layer 1 as a 1 %-sparse layer: every sparse format larger than dense. */
static void one_percent(struct spp_layer_static *s)
{
	s->counts.nnz = 32, s->sparsity = 0.01;
	for (int f = 1; f < SPP_ST_COUNT; f++)
		if (s->storage[f].applicable) {
			s->storage[f].bytes = s->storage[SPP_ST_DENSE].bytes * (1.0 + f / 100.0);
			s->storage[f].ratio = s->storage[SPP_ST_DENSE].bytes / s->storage[f].bytes;
		}
}

static void with_runs(struct fixture *fx)
{
	struct spp_layer_runs *lr = calloc(3, sizeof(*lr));

	assert_non_null(lr);
	for (int i = 0; i < 3; i++) {
		assert_non_null(lr[i].runs = calloc(4, sizeof(*lr[i].runs)));
		add_run(&lr[i], "dense", SPP_RUN_OK, 1000, 1000);
		lr[i].runs[0].candidate[0] = '\0';
	}
	add_run(&lr[0], "csr", SPP_RUN_OK, 800, 1000);
	add_run(&lr[0], "nm2_4", SPP_RUN_OK, 625, 1000);
	add_run(&lr[0], "bsr4", SPP_RUN_FAILED, 0, 1000);
	add_run(&lr[1], "csr", SPP_RUN_OK, 1600, 1000);
	add_run(&lr[1], "bitmask", SPP_RUN_OK, 1250, 1000);
	add_run(&lr[1], "bsr16", SPP_RUN_FAILED, 0, 1000);
	add_run(&lr[2], "bsr4", SPP_RUN_FAILED, 0, 1000);
	one_percent(&fx->stats[1]);
	fx->a.runs = lr;
	fx->a.opts.static_only = 0;
	spp_analysis_derived_free(&fx->a);
	assert_int_equal(spp_analysis_derive(&fx->a, &(struct spp_error){0}), 0);
}

static void free_runs(struct fixture *fx)
{
	for (int i = 0; i < 3; i++)
		free(fx->a.runs[i].runs);
	free(fx->a.runs);
	fx->a.runs = NULL;
}

/*
 * The line of text (a row of the text or Markdown table, an HTML <tr>)
 * naming layer key, with Markdown's backslash escapes taken out.
 */
static char *row_of(const char *text, const char *key, const char *row_start, const char *row_end)
{
	for (const char *s = strstr(text, row_start); s; s = strstr(s + 1, row_start)) {
		const char *e = strstr(s + strlen(row_start), row_end);
		char *row, *w;

		if (!e)
			break;
		if (!(row = strndup(s, (size_t)(e - s))))
			return NULL;
		if (!strstr(row, key)) {
			free(row);
			continue;
		}
		w = row;
		for (const char *c = row; *c; c++)
			if (*c != '\\')
				*w++ = *c;
		*w = '\0';
		return row;
	}
	return NULL;
}

/* A cell holding exactly word (as the renderers set it apart: spaces, pipes, tags). */
static int has_word(const char *row, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = strstr(row, word); p; p = strstr(p + 1, word)) {
		char before = p > row ? p[-1] : ' ', after = p[n];

		if (strchr(" |>", before) && strchr(" |<", after))
			return 1;
	}
	return 0;
}

static void check_rows(const char *what, const char *text, const char *const keys[3],
		       const struct want want[3], const char *row_start, const char *row_end)
{
	for (int i = 0; i < 3; i++) {
		char *row = row_of(text, keys[i], row_start, row_end);

		if (!row)
			fail_msg("%s: no row for layer %d (%s)", what, i, keys[i]);
		if (!has_word(row, want[i].best))
			fail_msg("%s: layer %d's row does not name %s as its best storage:\n%s", what, i,
				 want[i].best, row);
		if (want[i].fastest && !has_word(row, want[i].fastest))
			fail_msg("%s: layer %d's row does not name %s as its fastest run:\n%s", what, i,
				 want[i].fastest, row);
		if (want[i].not_best && has_word(row, want[i].not_best))
			fail_msg("%s: layer %d's row names %s (a renderer's own choice):\n%s", what, i,
				 want[i].not_best, row);
		if (want[i].not_fastest && has_word(row, want[i].not_fastest))
			fail_msg("%s: layer %d's row names the failed run %s:\n%s", what, i,
				 want[i].not_fastest, row);
		free(row);
	}
}

void test_selections_agree(void **state)
{
	static const struct want want[3] = {
		{"nm2_4", "nm2_4", NULL, "bsr4", "nm2_4"},
		{"dense", "bitmask", "bsr16", "bsr16", "dense"},
		{"bsr4", NULL, NULL, NULL, "dense"},
	};
	/* the rows' keys: the names the tables print (the HTML's full name in its tooltip) */
	static const char *const text_keys[3] = {"q_proj", "down_proj", "conv.weight"};
	struct fixture fx;
	cJSON *r;
	char *text, *md, *html;

	(void)state;
	fixture_init(&fx, -1);
	with_runs(&fx);
	r = build(&fx);
	/* the tree carries the choices the renderers print */
	for (int i = 0; i < 3; i++) {
		const cJSON *l = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "layers"), i);
		const cJSON *b = cJSON_GetObjectItem(cJSON_GetObjectItem(l, "best_storage"), "format");
		const cJSON *f = cJSON_GetObjectItem(l, "fastest");

		assert_true(cJSON_IsString(b));
		assert_string_equal(b->valuestring, want[i].best);
		if (want[i].fastest)
			assert_string_equal(cJSON_GetObjectItem(f, "format")->valuestring, want[i].fastest);
		else
			assert_true(cJSON_IsNull(f));
		assert_string_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(l, "recommendation"), "format")
					    ->valuestring,
				    want[i].deploy);
	}
	text = render(r, SPP_REPORT_TEXT, 0);
	md = render(r, SPP_REPORT_MD, 0);
	html = render(r, SPP_REPORT_HTML, 0);
	/* the text and Markdown tables name what to deploy (dense where nothing is clear of the noise) */
	{
		struct want deploy[3], md_deploy[3];

		for (int i = 0; i < 3; i++) {
			deploy[i] = want[i];
			deploy[i].fastest = want[i].deploy;
			/* Markdown's layer table names no best storage */
			md_deploy[i] = (struct want){want[i].deploy, want[i].deploy, NULL, want[i].not_fastest,
						     want[i].deploy};
		}
		check_rows("text", text, text_keys, deploy, "\n", "\n");
		check_rows("markdown", md, text_keys, md_deploy, "\n|", "\n");
	}
	check_rows("html", html, text_keys, want, "<tr class=\"layer\"", "</tr>");
	/* and the model's deploy line, from summary.projection.deploy (most layers first) */
	assert_non_null(strstr(text, "deploy    dense on 2 layers, nm2_4 on 1 layer: the 3 layers"));
	assert_non_null(strstr(md, "**Deploy:** dense on 2 layers, nm2\\_4 on 1 layer"));
	assert_non_null(strstr(html, ">deploy</div>"));
	free(text);
	free(md);
	free(html);
	cJSON_Delete(r);
	free_runs(&fx);
	fixture_fini(&fx);
}

/*
 * The run tables' figure columns are the rows of SPP_RUN_FIGURES shown in
 * each (SPP_FIG_TEXT, SPP_FIG_MD), in the table's order: a row added there
 * is a column here with no other edit.
 */
void test_run_columns_from_table(void **state)
{
	struct fixture fx;
	cJSON *r;
	char *text, *md;
	const char *at_text, *at_md;
	int ntext = 0, nmd = 0;

	(void)state;
	fixture_init(&fx, -1);
	with_runs(&fx);
	r = build(&fx);
	text = render(r, SPP_REPORT_TEXT, 0);
	md = render(r, SPP_REPORT_MD, 0);
	/* the header rows: the text table's starts at "layer  format", Markdown's at "| layer | backend" */
	at_text = strstr(text, "p10\xe2\x80\x93p90");
	at_md = strstr(md, "| layer | backend/format |");
	assert_non_null(at_text);
	assert_non_null(at_md);
	for (int i = 0; i < spp_run_figure_nrows; i++) {
		const struct spp_run_figure *g = &spp_run_figure_rows[i];
		char cell[64];
		const char *p;

		if (g->flags & SPP_FIG_TEXT) {
			p = strstr(at_text, g->title);
			if (!p || memchr(at_text, '\n', (size_t)(p - at_text)))
				fail_msg("text: no column '%s' in the runs table's header", g->title);
			at_text = p;
			ntext++;
		}
		if (g->flags & SPP_FIG_MD) {
			snprintf(cell, sizeof(cell), "| %s |", g->title);
			p = strstr(at_md, cell);
			if (!p || memchr(at_md, '\n', (size_t)(p - at_md)))
				fail_msg("markdown: no column '%s' in the runs table's header", g->title);
			at_md = p + 1;
			nmd++;
		}
	}
	assert_true(ntext >= 3 && nmd >= 3);
	free(text);
	free(md);
	cJSON_Delete(r);
	free_runs(&fx);
	fixture_fini(&fx);
}
