#include "base/budget.h"

#include <stdio.h>
#include <unistd.h>

static uint64_t explicit_layers, explicit_bytes;

void spp_budget_set(uint64_t max_layers, uint64_t max_bytes)
{
	explicit_layers = max_layers;
	explicit_bytes = max_bytes;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

uint64_t spp_budget_layers(uint64_t model_bytes)
{
	if (explicit_layers)
		return explicit_layers;
	return SPP_BUDGET_LAYERS_BASE + model_bytes / SPP_BUDGET_LAYERS_PER_BYTE;
}

static uint64_t machine_bytes(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);

	if (pages <= 0 || size <= 0)
		return UINT64_MAX;
	return (uint64_t)pages / 10 * 8 * (uint64_t)size;
}

uint64_t spp_budget_bytes(uint64_t model_bytes)
{
	uint64_t b, ram;

	if (explicit_bytes)
		return explicit_bytes;
	b = model_bytes > UINT64_MAX / SPP_BUDGET_BYTES_PER_BYTE
		    ? UINT64_MAX
		    : sat_add(SPP_BUDGET_BYTES_BASE, model_bytes * SPP_BUDGET_BYTES_PER_BYTE);
	ram = machine_bytes();
	return b < ram ? b : ram;
}

/* "8.00 GiB": binary units, for the messages */
static void bytes_text(uint64_t v, char *buf, int n)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	double x = (double)v;
	int u = 0;

	while (x >= 1024 && u < 6)
		x /= 1024, u++;
	if (u == 0)
		snprintf(buf, (size_t)n, "%llu B", (unsigned long long)v);
	else
		snprintf(buf, (size_t)n, "%.2f %s", x, unit[u]);
}

int spp_budget_check_layers(uint64_t count, uint64_t model_bytes, const char *path,
			    const char *what, struct spp_error *err)
{
	uint64_t max = spp_budget_layers(model_bytes);

	if (count <= max)
		return SPP_OK;
	if (explicit_layers)
		return spp_error_set(err, SPP_E_BUDGET, "'%s': %s makes more than %llu layers, "
				     "the --max-layers limit", path, what, (unsigned long long)max);
	return spp_error_set(err, SPP_E_BUDGET, "'%s': %s makes more than %llu layers, the "
			     "budget for a %llu-byte model (--max-layers raises it)", path, what,
			     (unsigned long long)max, (unsigned long long)model_bytes);
}

int spp_budget_check_bytes(uint64_t need, uint64_t model_bytes, const char *path,
			   const char *what, struct spp_error *err)
{
	uint64_t max = spp_budget_bytes(model_bytes);
	char a[32], b[32];

	if (need <= max)
		return SPP_OK;
	bytes_text(need, a, sizeof(a));
	bytes_text(max, b, sizeof(b));
	if (explicit_bytes)
		return spp_error_set(err, SPP_E_BUDGET, "'%s': %s needs %s, over the --max-memory "
				     "limit of %s", path, what, a, b);
	return spp_error_set(err, SPP_E_BUDGET, "'%s': %s needs %s, over the memory budget of "
			     "%s for a %llu-byte model (--max-memory raises it)", path, what, a, b,
			     (unsigned long long)model_bytes);
}
