#include "base/share.h"

#include <stdio.h>

char *spp_share_text(uint64_t part, uint64_t whole, char *buf, size_t n)
{
	double pct = whole ? 100.0 * (double)part / (double)whole : 0;

	if (part > 0 && pct < 0.1)
		snprintf(buf, n, "< 0.1%% (%llu of %llu)", (unsigned long long)part,
			 (unsigned long long)whole);
	else if (part < whole && pct > 99.9)
		snprintf(buf, n, "> 99.9%% (%llu of %llu)", (unsigned long long)part,
			 (unsigned long long)whole);
	else
		snprintf(buf, n, "%.3g%%", pct);
	return buf;
}
