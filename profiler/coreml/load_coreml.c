/*
 * Core ML models: a .mlmodel (the Model protobuf of Apple's public schema,
 * a subset in coreml_subset.proto) or a .mlpackage folder (its
 * Manifest.json names the root model under Data/, whose ML program keeps
 * its weights in weights/weight.bin beside it).
 *
 * Choices:
 * - The protobuf is checked and decoded into memory the model owns
 *   (profiler/pbuf.h); weights inside it are borrowed from there, weight
 *   files are mapped.
 * - A neural network (neuralNetwork, its classifier and regressor forms)
 *   gives its innerProduct, convolution and batchedMatmul layers
 *   (coreml_nn.c); an ML program its linear, conv, conv_transpose and
 *   matmul ops with constant weights, sparse and palettized ones decoded
 *   (coreml_mil.c, coreml_constexpr.c). Other model types (trees, GLMs,
 *   pipelines) hold no layers spprof reads: an error says so.
 */
#include "profiler/coreml/coreml.h"
#include "profiler/loaders.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/beneath.h"
#include "profiler/pbuf.h"

int coreml_fault(struct coreml *c, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = spp_error_vfile(c->err, SPP_E_FORMAT, c->file, fmt, ap);
	va_end(ap);
	return rc;
}

int coreml_nomem(struct coreml *c)
{
	return spp_error_set(c->err, SPP_E_NOMEM, "out of memory loading '%s'", c->file);
}

int coreml_add_tensor(struct coreml *c, struct spp_tensor *t)
{
	int rc = spp_model_add_tensor(c->m, t, c->file, c->err);

	return rc ? rc : c->m->ntensors - 1;
}

/*
 * A Model message: a top-level field numbered 200-999 (the model types:
 * pipeline 200..., neuralNetwork 500, mlProgram 502) that is a message;
 * an ONNX ModelProto's fields stop at 25.
 */
int spp_coreml_sniff(const unsigned char *b, size_t got, uint64_t size)
{
	size_t pos = 0;

	(void)size;
	while (pos < got) {
		uint64_t key = 0, v = 0;
		int shift;

		for (shift = 0; pos < got && shift < 35; shift += 7) {
			key |= (uint64_t)(b[pos] & 0x7f) << shift;
			if (!(b[pos++] & 0x80))
				break;
		}
		if (key >> 3 >= 200 && key >> 3 < 1000 && (key & 7) == 2)
			return 1;
		if ((key & 7) == 1 || (key & 7) == 5) {
			pos += (key & 7) == 1 ? 8 : 4;
			continue;
		}
		if (key >> 3 == 0 || key >> 3 > 20 || ((key & 7) != 0 && (key & 7) != 2))
			return 0;
		for (shift = 0; pos < got && shift < 64; shift += 7) {
			v |= (uint64_t)(b[pos] & 0x7f) << shift;
			if (!(b[pos++] & 0x80))
				break;
		}
		if ((key & 7) == 2) {
			if (v > got - pos)
				return 0;
			pos += (size_t)v;
		}
	}
	return 0;
}

/* The model file of a .mlpackage folder: "Data/<the root item's path>" (malloc'd), read
 * from its Manifest.json; both resolved beneath the folder when opened. */
static char *package_model(const char *dir, struct spp_error *err)
{
	struct spp_mapped_file f;
	const cJSON *items, *id, *item, *path;
	cJSON *root = NULL;
	char *out = NULL;

	if (spp_mapfile_beneath(dir, "Manifest.json", dir, &f, NULL, err))
		return NULL;
	if (spp_json_mapped(&f, &root, err))
		return spp_mapfile_close(&f), NULL;
	items = cJSON_GetObjectItemCaseSensitive(root, "itemInfoEntries");
	id = cJSON_GetObjectItemCaseSensitive(root, "rootModelIdentifier");
	item = cJSON_IsString(id) ? cJSON_GetObjectItemCaseSensitive(items, id->valuestring) : NULL;
	path = cJSON_GetObjectItemCaseSensitive(item, "path");
	if (!cJSON_IsString(path) || spp_name_beneath(path->valuestring))
		spp_error_format(err, f.path, "no \"itemInfoEntries\" item of the "
				 "\"rootModelIdentifier\" with a \"path\" inside the package");
	else if (asprintf(&out, "Data/%s", path->valuestring) < 0)
		out = NULL, spp_error_set(err, SPP_E_NOMEM, "out of memory loading '%s'", dir);
	cJSON_Delete(root);
	spp_mapfile_close(&f);
	return out;
}

/* A .mlpackage's model: m with the file the manifest names as files[0]. */
static int open_package(struct coreml *c, const char *dir)
{
	char *name = package_model(dir, c->err);
	int rc, fi;

	if (!name)
		return c->err->code;
	if (!(c->m = calloc(1, sizeof(*c->m))) || !(c->m->path = strdup(dir))) {
		free(name);
		return spp_error_set(c->err, SPP_E_NOMEM, "out of memory loading '%s'", dir);
	}
	c->m->format = "coreml";
	rc = spp_model_map_beneath(c->m, dir, name, dir, &fi, c->err);
	if (rc == SPP_E_IO)
		rc = spp_error_format(c->err, dir, "its Manifest.json names the model '%s', which "
				      "is not a file in the package", name);
	free(name);
	c->file = rc ? dir : c->m->files[0].path;
	return rc;
}

static int load(struct coreml *c)
{
	const struct spp_mapped_file *f = &c->m->files[0];
	Coreml__Model *model;
	const Coreml__NeuralNetwork *nn;
	char *slash;

	model = (Coreml__Model *)spp_pb_decode(&coreml__model__descriptor, f->base, f->size, c->file,
					       c->m, c->err);
	if (!model)
		return c->err->code;
	if (!(c->dir = strdup(c->file)))
		return coreml_nomem(c);
	slash = strrchr(c->dir, '/');
	if (slash)
		slash[slash == c->dir] = 0; /* "/m.mlmodel": its folder is "/" */
	else
		strcpy(c->dir, ".");
	nn = model->neuralnetwork ? model->neuralnetwork : model->neuralnetworkclassifier
		? model->neuralnetworkclassifier : model->neuralnetworkregressor;
	if (nn)
		return coreml_nn(c, nn);
	if (model->mlprogram)
		return coreml_mil(c, model->mlprogram);
	return coreml_fault(c, "a Core ML model of a type with no neural network or ML program "
			    "(specification version %d): no layers spprof reads",
			    model->specificationversion);
}

int spp_load_coreml(const char *path, struct spp_model **out, struct spp_error *err)
{
	struct coreml c = {.err = err, .file = path};
	struct stat st;
	int rc;

	*out = NULL;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		rc = open_package(&c, path);
	else
		rc = spp_model_open_mapped(path, "coreml", &c.m, err);
	if (!rc)
		rc = load(&c);
	free(c.dir);
	if (rc) {
		spp_model_destroy(c.m);
		return rc;
	}
	*out = c.m;
	return SPP_OK;
}
