#include "profiler/activations.h"
#include "profiler/loaders.h"
#include "profiler/run.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "profiler/decode.h"

void spp_activations_path(const char *dir, const struct spp_layer *l, char *path, size_t path_n)
{
	size_t len = (size_t)snprintf(path, path_n, "%s/", dir);

	for (const char *c = l->name; *c && len + 1 < path_n; c++, len++) {
		int ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			 (*c >= '0' && *c <= '9') || *c == '.' || *c == '_' || *c == '-';

		path[len] = ok ? *c : '_';
	}
	path[len < path_n ? len : path_n - 1] = '\0';
	if (len + 4 < path_n)
		memcpy(path + len, ".npy", 5);
}

/* The array as rows x cols: 2-D as it is, 1-D as one column. */
static int array_dims(const struct spp_tensor *t, int64_t *rows, int64_t *cols)
{
	if (t->ndim == 2) {
		*rows = t->shape[0];
		*cols = t->shape[1];
		return 1;
	}
	if (t->ndim == 1) {
		*rows = t->shape[0];
		*cols = 1;
		return 1;
	}
	return 0;
}

int spp_activations_load(const char *dir, const struct spp_layer *l, float **x,
			 char *path, size_t path_n, struct spp_error *err)
{
	int64_t k = l->view.k, n = l->n, rows = 0, cols = 0;
	struct spp_model *model = NULL;
	struct spp_layer v;
	struct stat st;
	float *a = NULL;
	int rc;

	*x = NULL;
	spp_activations_path(dir, l, path, path_n);
	/* no file can have that name: the same as none, not an open that fails */
	if (strlen(l->name) + 4 > NAME_MAX || strlen(dir) + 1 + strlen(l->name) + 4 >= path_n) {
		path[0] = '\0';
		return SPP_OK;
	}
	if (stat(path, &st) != 0 && (errno == ENOENT || errno == ENAMETOOLONG))
		return SPP_OK;
	rc = spp_model_open(path, &model, err);
	if (rc == SPP_E_UNSUPPORTED)
		return spp_error_set(err, SPP_E_FORMAT, "'%s': activations are not a NumPy array (.npy)", path);
	if (rc)
		return rc;
	if (model->ntensors != 1 || !model->tensors[0].data)
		rc = spp_error_set(err, SPP_E_FORMAT, "'%s': activations must be one .npy array", path);
	else if (!array_dims(&model->tensors[0], &rows, &cols))
		rc = spp_error_set(err, SPP_E_FORMAT, "'%s': activations must be 1-D or 2-D, not %d-D",
				   path, model->tensors[0].ndim);
	else if (!((rows == k && cols == n) || (rows == n && cols == k)))
		rc = spp_error_set(err, SPP_E_FORMAT,
				   "'%s': activations of shape %lldx%lld fit neither KxN (%lldx%lld) nor NxK "
				   "of layer '%s' (--n sets N)",
				   path, (long long)rows, (long long)cols, (long long)k, (long long)n, l->name);
	else if (!spp_decode_supported(model->tensors[0].dtype))
		rc = spp_error_set(err, SPP_E_FORMAT, "'%s': %s activations have no fp32 decoding", path,
				   spp_dtype_name(model->tensors[0].dtype));
	if (rc)
		goto out;
	a = malloc((size_t)(rows * cols > 0 ? rows * cols : 1) * sizeof(*a));
	*x = malloc((size_t)(k * n > 0 ? k * n : 1) * sizeof(**x));
	if (!a || !*x) {
		rc = spp_error_set(err, SPP_E_NOMEM, "'%s': out of memory for %lldx%lld activations", path,
				   (long long)rows, (long long)cols);
		goto out;
	}
	/* the array as a plain row-major matrix, decoded like weights */
	spp_layer_init(&v, &model->tensors[0], 1);
	v.view = (struct spp_gemm_view){rows, cols, 0, cols, cols, 1, cols};
	rc = spp_layer_decode(&v, a, err);
	if (rc) {
		char why[sizeof(err->msg)];

		snprintf(why, sizeof(why), "%s", err->msg);
		spp_error_set(err, rc, "'%s': %s", path, why);
		goto out;
	}
	if (rows == k && cols == n) {
		memcpy(*x, a, (size_t)(k * n) * sizeof(**x));
	} else {
		for (int64_t i = 0; i < n; i++)
			for (int64_t j = 0; j < k; j++)
				(*x)[j * n + i] = a[i * k + j];
	}
out:
	if (rc) {
		free(*x);
		*x = NULL;
	}
	free(a);
	spp_model_destroy(model);
	return rc;
}

/*
 * The activation figures of X (k x n) against w: zero fraction, all-zero
 * rows, and the combined FLOPs of DESIGN section 3, 2 * sum over the
 * non-zeros w_ij of the non-zeros in row j of X. 0 or SPP_E_NOMEM.
 */
int spp_run_act_figures(const struct spp_matrix *w, const float *x, int64_t n,
			const struct spp_run_opts *o, struct spp_act_figures *a,
			struct spp_error *err)
{
	int64_t m = w->m, k = w->k;
	int64_t *colnnz = calloc((size_t)(k > 0 ? k : 1), sizeof(*colnnz));
	double zeros = 0, combined = 0;

	if (!colnnz)
		return spp_error_set(err, SPP_E_NOMEM, "out of memory");
	memset(a, 0, sizeof(*a));
	snprintf(a->source, sizeof(a->source), "%s",
		 o->act_x ? "file" : o->act_sparsity > 0 ? "synthetic" : "uniform");
	if (o->act_x && o->act_path)
		snprintf(a->path, sizeof(a->path), "%s", o->act_path);
	a->requested = !o->act_x && o->act_sparsity > 0 ? o->act_sparsity : NAN;
	for (int64_t i = 0; i < m; i++)
		for (int64_t j = 0; j < k; j++)
			colnnz[j] += w->v[i * k + j] != 0.0f;
	for (int64_t j = 0; j < k; j++) {
		int64_t nz = 0;

		for (int64_t q = 0; q < n; q++)
			nz += x[j * n + q] != 0.0f;
		zeros += (double)(n - nz);
		a->zero_rows += nz == 0;
		combined += (double)colnnz[j] * (double)nz;
	}
	free(colnnz);
	a->sparsity = k * n > 0 ? zeros / ((double)k * (double)n) : NAN;
	a->flops_combined = 2 * combined;
	a->combined_speedup = combined > 0 ? 2.0 * (double)m * (double)k * (double)n / a->flops_combined
					   : NAN;
	return SPP_OK;
}
