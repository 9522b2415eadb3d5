/*
 * The ONNX file loader: sniffing, decoding with protobuf-c into memory the
 * model owns (profiler/pbuf.h), and the buffer-level entry point shared
 * with the fuzz harness.
 */
#include "profiler/onnx/onnx_internal.h"
#include "profiler/onnx/onnx_cost.h"
#include "profiler/loaders.h"
#include "profiler/pbuf.h"

#include <inttypes.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


int onnx_fault(struct onnx_ctx *c, int code, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = spp_error_vfile(c->err, code, c->file, fmt, ap);
	va_end(ap);
	return rc;
}

const char *onnx_name(const char *s)
{
	return s && *s ? s : "(unnamed)";
}

/* The unresolved weight inputs, one line each, those past the first
 * lines counted in a last one. */
static int weights_done(struct onnx_ctx *c)
{
	const char *p = c->unresolved;
	int lines = 0;

	if (!c->nunresolved)
		return SPP_OK;
	while (*p && ++lines)
		p += strcspn(p, "\n") + (p[strcspn(p, "\n")] == '\n');
	if (lines < c->nunresolved &&
	    asprintf(&c->m->weight_notes, "%s%s%d more weight inputs are not constants spprof "
		     "resolves: their weights are not profiled", c->unresolved, lines ? "\n" : "",
		     c->nunresolved - lines) < 0)
		c->m->weight_notes = NULL;
	else if (lines == c->nunresolved)
		c->m->weight_notes = strdup(c->unresolved);
	return c->m->weight_notes ? SPP_OK : onnx_fault(c, SPP_E_NOMEM, "out of memory");
}

/* After the walk: every --input-shape named an input; the notes kept. */
static int inputs_done(struct onnx_ctx *c, const Onnx__GraphProto *g)
{
	for (int j = 0; c->opts && j < c->opts->ninput_shapes; j++) {
		char names[256] = "";

		if (c->bound[j])
			continue;
		for (size_t i = 0; i < g->n_input && strlen(names) < 200; i++)
			if (g->input[i]->name && spp_model_find(c->m, c->m->ntensors, g->input[i]->name,
								 strlen(g->input[i]->name), "") < 0)
				snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s'%.60s'",
					 *names ? ", " : "", g->input[i]->name);
		return onnx_fault(c, SPP_E_FORMAT, "--input-shape names '%.80s', which is not an "
				  "input of the graph (its inputs: %s)", c->opts->input_shapes[j].name,
				  *names ? names : "none");
	}
	if (c->notes[0] && !(c->m->shape_notes = strdup(c->notes)))
		return onnx_fault(c, SPP_E_NOMEM, "out of memory");
	return weights_done(c);
}

int spp_onnx_parse(const unsigned char *buf, uint64_t size,
		   const char *display_name, const char *dir,
		   const struct spp_open_opts *opts, struct spp_model *m,
		   struct spp_error *err)
{
	struct onnx_ctx c = {.m = m, .file = display_name, .dir = dir, .err = err, .opts = opts};
	Onnx__ModelProto *mp;
	int rc;

	if (size > SPP_PB_MAX_BYTES)
		return onnx_fault(&c, SPP_E_FORMAT, "%" PRIu64 " bytes exceed protobuf's 2 GiB "
				  "limit (large ONNX models keep weights in external data)", size);
	/* raw_data is copied here, once; nothing is copied after */
	mp = (Onnx__ModelProto *)spp_pb_decode(&onnx__model_proto__descriptor, buf, size,
					      display_name, m, err);
	if (!mp)
		return err->code;
	if (!mp->graph)
		return onnx_fault(&c, SPP_E_FORMAT, "the ModelProto holds no graph");
	if (opts && opts->ninput_shapes &&
	    !(c.bound = calloc((size_t)opts->ninput_shapes, 1)))
		return onnx_fault(&c, SPP_E_NOMEM, "out of memory");
	rc = onnx_graph_walk(&c, mp->graph, NULL, 0);
	if (!rc)
		rc = inputs_done(&c, mp->graph);
	if (!rc)
		rc = onnx_cost_walk(&c, mp->graph);
	free(c.bound);
	return rc ? rc : onnx_layers_unique(&c);
}

/* Field numbers and wire types of ModelProto, for the sniffer. */
static int model_field(unsigned field, unsigned wt)
{
	switch (field) {
	case 1: /* ir_version */
	case 5: /* model_version */
		return wt == 0;
	case 2: case 3: case 4: case 6: /* producer, version, domain, doc */
	case 7: case 8: case 14:        /* graph, opset_import, metadata */
	case 20: case 25:               /* training_info, functions */
		return wt == 2;
	default:
		return 0;
	}
}

int spp_onnx_sniff(const unsigned char *b, size_t got, uint64_t size)
{
	size_t pos = 0;
	int fields = 0;

	while (pos < got) {
		uint64_t tag = 0, v = 0;
		int i, shift;

		for (i = 0, shift = 0; i < 2 && pos < got; i++, shift += 7) {
			tag |= (uint64_t)(b[pos] & 0x7f) << shift;
			if (!(b[pos++] & 0x80))
				break;
		}
		if (i == 2 || !model_field((unsigned)(tag >> 3), (unsigned)(tag & 7)))
			return 0;
		if (pos >= got)
			break;
		for (i = 0, shift = 0; i < 10 && pos < got; i++, shift += 7) {
			v |= (uint64_t)(b[pos] & 0x7f) << (shift < 64 ? shift : 0);
			if (!(b[pos++] & 0x80))
				break;
		}
		if (i == 10)
			return 0;
		if ((tag & 7) == 2) {
			/* a length must fit the file, unless fields before it
			 * already said ModelProto (a truncated file gets the
			 * loader's message); the body is not looked at */
			return v <= size - pos || fields > 0;
		}
		fields++;
	}
	return fields > 0;
}

int spp_load_onnx(const char *path, const struct spp_open_opts *opts,
		  struct spp_model **out, struct spp_error *err)
{
	struct spp_model *m = NULL;
	char *copy = NULL;
	int rc;

	*out = NULL;
	if ((rc = spp_model_open_mapped(path, "onnx", &m, err)))
		return rc;
	if (!(copy = strdup(path))) {
		rc = spp_error_set(err, SPP_E_NOMEM, "'%s': out of memory", path);
		goto fail;
	}
	rc = spp_onnx_parse(m->files[0].base, m->files[0].size, path, dirname(copy), opts, m, err);
	if (rc)
		goto fail;
	free(copy);
	*out = m;
	return SPP_OK;
fail:
	free(copy);
	spp_model_destroy(m);
	return rc;
}
