#include "reports/report.h"
int spp_report_format_from_name(const char *name, enum spp_report_format *out) { (void)name; (void)out; return -1; }
int spp_report_format_from_path(const char *path, enum spp_report_format *out) { (void)path; (void)out; return -1; }
int spp_report_render(const cJSON *report, enum spp_report_format fmt, FILE *f, const struct spp_render_opts *o, struct spp_error *err)
{ (void)report; (void)fmt; (void)f; (void)o; (void)err; return 0; }
int spp_report_write_file(const cJSON *report, enum spp_report_format fmt, const char *path, const struct spp_render_opts *o, struct spp_error *err)
{ (void)report; (void)fmt; (void)o; return spp_error_set(err, SPP_E_OUTPUT, "'%s': not written yet", path); }
