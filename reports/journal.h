/* The journal of a resumable analyze (journal.c): -o FILE --resume. */
#ifndef SPP_REPORTS_JOURNAL_H
#define SPP_REPORTS_JOURNAL_H

#include <stdio.h>

#include "reports/report.h"

struct spp_journal {
	char path[4200];         /* FILE.journal */
	int resume;              /* --resume: take the layers a journal of this run holds */
	int opened;              /* opened at the first layer (the settings are known then) */
	FILE *f;
	cJSON **lines;           /* --resume: the journal's line of each layer, or NULL */
	int nlines;
};

/* A journal beside output (not yet opened). 0 or SPP_E_USAGE. */
int spp_journal_init(struct spp_journal *j, const char *output, int resume, struct spp_error *err);

/* The analyze callbacks (spp_analyze_opts restore and done; ctx the journal). */
int spp_journal_restore(void *ctx, struct spp_analysis *a, int i, struct spp_error *err);
int spp_journal_done(void *ctx, const struct spp_analysis *a, int i, struct spp_error *err);

/* One line, written whole, flushed and fsync'd. 0 or SPP_E_OUTPUT. */
int spp_journal_line(struct spp_journal *j, const char *text, struct spp_error *err);

/* Close; remove_file: the report is written, the journal goes. */
void spp_journal_close(struct spp_journal *j, int remove_file);

#endif
