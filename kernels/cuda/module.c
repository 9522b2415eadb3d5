/*
 * The binary's side of the CUDA modules (module.h): load each on first use
 * and forward device.h, formats.h and measure.h through its table. Only
 * with HAVE_CUDA.
 *
 * The loaded tables are the one state kept here: set once under
 * pthread_once and read-only after, as the modules stay loaded.
 */
#include "kernels/cuda/module.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "base/module.h"

struct loaded {
	pthread_once_t once;
	const char *file, *symbol;
	size_t size;           /* the table's size this binary was built with */
	const void *table;     /* NULL: why says why */
	char why[256];
};

static struct loaded probe_mod = {PTHREAD_ONCE_INIT, SPP_CUDA_PROBE_MODULE_FILE,
				  SPP_CUDA_PROBE_SYMBOL, sizeof(struct spp_cuda_probe_ops), NULL, ""};
static struct loaded kernels_mod = {PTHREAD_ONCE_INIT, SPP_CUDA_MODULE_FILE, SPP_CUDA_MODULE_SYMBOL,
				    sizeof(struct spp_cuda_module_ops), NULL, ""};

/* Both tables begin with their version and size. */
struct table_head {
	int version;
	size_t size;
};

static void load(struct loaded *m)
{
	const struct table_head *t = spp_module_table(m->file, m->symbol, m->why, sizeof(m->why));

	if (t && (t->version != SPP_CUDA_MODULE_VERSION || t->size != m->size)) {
		snprintf(m->why, sizeof(m->why), "'%s' is from another build (table version %d, %zu bytes)",
			 m->file, t->version, t->size);
		t = NULL;
	}
	m->table = t;
}

static void load_probe(void)
{
	load(&probe_mod);
}

static void load_kernels(void)
{
	load(&kernels_mod);
}

const struct spp_cuda_module_ops *spp_cuda_module_get(const char **why)
{
	pthread_once(&kernels_mod.once, load_kernels);
	if (why)
		*why = kernels_mod.why;
	return kernels_mod.table;
}

/*
 * The GPUs: cudart's answer from the probe module. Where there are devices
 * the kernels' module is loaded too, so that ndevices > 0 means a CUDA run
 * can start; when it cannot be loaded there are none, and why says so.
 */
int spp_cuda_probe(struct spp_cuda_probe *out)
{
	const struct spp_cuda_probe_ops *p;
	const char *why;

	pthread_once(&probe_mod.once, load_probe);
	p = probe_mod.table;
	if (!p) {
		memset(out, 0, sizeof(*out));
		out->built = 1;
		snprintf(out->why, sizeof(out->why), "CUDA runtime not loaded: %.*s",
			 (int)sizeof(out->why) - 26, probe_mod.why);
		return 0;
	}
	if (!p->probe(out))
		return 0;
	if (!spp_cuda_module_get(&why)) {
		out->ndevices = 0;
		snprintf(out->why, sizeof(out->why), "CUDA kernels not loaded: %.*s",
			 (int)sizeof(out->why) - 26, why);
	}
	return out->ndevices;
}

const struct spp_cuda_format *const *spp_cuda_format_table(void)
{
	static const struct spp_cuda_format *const none[] = {NULL};
	const struct spp_cuda_module_ops *m = spp_cuda_module_get(NULL);

	return m ? m->formats() : none;
}

const struct spp_cuda_format *spp_cuda_format_find(const char *key)
{
	for (int i = 0; spp_cuda_formats[i]; i++)
		if (strcmp(spp_cuda_formats[i]->key, key) == 0)
			return spp_cuda_formats[i];
	return NULL;
}

/* No case can be open without the module: open fails, the rest are unreachable but safe. */
int spp_cuda_case_open(struct spp_cuda_case *c, const struct spp_cuda_format *f,
		       const struct spp_matrix *w, const float *x, int64_t n,
		       struct spp_error *err)
{
	const char *why;
	const struct spp_cuda_module_ops *m = spp_cuda_module_get(&why);

	if (!m) {
		memset(c, 0, sizeof(*c));
		return spp_error_set(err, SPP_E_DEVICE, "CUDA kernels not loaded: %s", why);
	}
	return m->case_open(c, f, w, x, n, err);
}

static const struct spp_cuda_module_ops *loaded(struct spp_error *err)
{
	const char *why;
	const struct spp_cuda_module_ops *m = spp_cuda_module_get(&why);

	if (!m && err)
		spp_error_set(err, SPP_E_DEVICE, "CUDA kernels not loaded: %s", why);
	return m;
}

int spp_cuda_case_run(struct spp_cuda_case *c, struct spp_error *err)
{
	const struct spp_cuda_module_ops *m = loaded(err);

	return m ? m->case_run(c, err) : SPP_E_DEVICE;
}

int spp_cuda_case_result(struct spp_cuda_case *c, float *y, struct spp_error *err)
{
	const struct spp_cuda_module_ops *m = loaded(err);

	return m ? m->case_result(c, y, err) : SPP_E_DEVICE;
}

int spp_cuda_case_time(struct spp_cuda_case *c, double *ns, struct spp_error *err)
{
	const struct spp_cuda_module_ops *m = loaded(err);

	return m ? m->case_time(c, ns, err) : SPP_E_DEVICE;
}

void spp_cuda_case_close(struct spp_cuda_case *c)
{
	const struct spp_cuda_module_ops *m = loaded(NULL);

	if (m)
		m->case_close(c);
}

void spp_cuda_flush_open(struct spp_cuda_flush *fl)
{
	const struct spp_cuda_module_ops *m = loaded(NULL);

	fl->buf = NULL;
	fl->bytes = 0;
	if (m)
		m->flush_open(fl);
}

void spp_cuda_flush_run(struct spp_cuda_flush *fl, int round)
{
	const struct spp_cuda_module_ops *m = loaded(NULL);

	if (m)
		m->flush_run(fl, round);
}

void spp_cuda_flush_close(struct spp_cuda_flush *fl)
{
	const struct spp_cuda_module_ops *m = loaded(NULL);

	if (m)
		m->flush_close(fl);
}

void spp_cuda_sync(void)
{
	const struct spp_cuda_module_ops *m = loaded(NULL);

	if (m)
		m->sync();
}
