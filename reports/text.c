#include "reports/report.h"
int spp_report_write_text(const cJSON *report, FILE *f, const struct spp_render_opts *o, struct spp_error *err)
{ (void)report; (void)f; (void)o; (void)err; return 0; }
