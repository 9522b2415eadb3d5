#include "reports/report.h"
int spp_report_load(const char *path, cJSON **out, struct spp_error *err)
{ *out = NULL; return spp_error_set(err, SPP_E_UNSUPPORTED, "'%s': report loader not written yet", path); }
