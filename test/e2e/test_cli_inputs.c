/*
 * End-to-end tests of hostile input paths: a FIFO or a directory where a
 * file is read exits 2 at once with one line naming the path (open() on a
 * FIFO used to block forever, so each run is under an alarm); files of
 * formats spprof does not read are named; embedding tables are no layers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "test/e2e/cli_fixture.h"
#include "test/harness.h"

void cli_refused(const char *const *args, const char *want)
{
	struct harness_run r;

	alarm(20);
	assert_int_equal(harness_spprof(&r, args), 0);
	alarm(0);
	if (r.status != 2 || !strstr(r.err, want))
		fprintf(stderr, "%s: status %d, stderr: %s", args[0], r.status, r.err);
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, want));
	assert_int_equal(harness_count_lines(r.err), 1);
	assert_int_equal(r.out_len, 0);
	harness_run_free(&r);
}

void cli_model_and_report(const char *model, const char *report)
{
	struct harness_run r;

	RUN(&r, "synth", "-o", model, "--layer", "l1=64x64:unstructured:0.5");
	assert_int_equal(r.status, 0);
	harness_run_free(&r);
	RUN(&r, "analyze", model, "--static", "--format", "json", "-o", report);
	assert_int_equal(r.status, 0);
	harness_run_free(&r);
}

void test_fifo_inputs(void **state)
{
	char *dir = harness_tmpdir();
	char *fifo = harness_join(dir, "f"), *model = harness_join(dir, "m.safetensors");
	char *report = harness_join(dir, "r.json"), *acts = harness_join(dir, "acts");
	char *afifo = harness_join(acts, "l1.npy"), *index = harness_join(dir, "x.index.json");
	char want[600];
	static const char ix[] = "{\"weight_map\":{\"l1\":\"f\"}}";

	(void)state;
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(mkdir(acts, 0700), 0);
	assert_int_equal(mkfifo(afifo, 0600), 0);
	assert_int_equal(harness_write(index, ix, sizeof(ix) - 1), 0);
	cli_model_and_report(model, report);

	snprintf(want, sizeof(want), "'%s': not a regular file (a FIFO)", fifo);
	cli_refused((const char *[]){"analyze", fifo, "--static", NULL}, want);
	cli_refused((const char *[]){"report", fifo, NULL}, want);
	cli_refused((const char *[]){"compare", report, fifo, NULL}, want);
	cli_refused((const char *[]){"check", report, "--rules", fifo, NULL}, want);
	cli_refused((const char *[]){"analyze", index, "--static", NULL}, "not a regular file (a FIFO)");
	snprintf(want, sizeof(want), "'%s': not a regular file (a FIFO)", afifo);
	cli_refused((const char *[]){"analyze", model, "--n", "4", "--repeat", "1",
				 "--activations", acts, NULL}, want);
	snprintf(want, sizeof(want), "'%s': is a directory", acts);
	/* a rules file that is a folder was "9223372036854775807 bytes ... too large" */
	cli_refused((const char *[]){"check", report, "--rules", acts, NULL}, want);
	cli_refused((const char *[]){"report", acts, NULL}, want);
	cli_refused((const char *[]){"compare", report, acts, NULL}, want);
	/* analyze reads a folder as the one model it holds: this one holds a FIFO, no model */
	snprintf(want, sizeof(want), "'%s': a folder holding no model", acts);
	cli_refused((const char *[]){"analyze", acts, "--static", NULL}, want);

	free(fifo); free(model); free(report); free(afifo); free(acts); free(index);
	harness_rmtree(dir);
}

/* A minimal zip: one stored member named name holding n bytes of data. */
static size_t zip_one(unsigned char *out, const char *name, const char *data, size_t n)
{
	size_t nl = strlen(name);

	memset(out, 0, 30);
	memcpy(out, "PK\x03\x04", 4);
	out[18] = out[22] = (unsigned char)n; /* sizes (n < 256) */
	out[26] = (unsigned char)nl;
	memcpy(out + 30, name, nl);
	memcpy(out + 30 + nl, data, n);
	return 30 + nl + n;
}

/*
 * Formats spprof does not read are named in the refusal (profiler/foreign.c),
 * not taken for the format they resemble (a Core ML protobuf was an ONNX
 * model); a torch.save zip is the PyTorch loader's, a model.json TF.js's.
 */
void test_foreign_formats(void **state)
{
	static const struct {
		const char *file, *bytes;
		size_t n;
		const char *want;
	} files[] = {
		{"m.h5", "\x89HDF\r\n\x1a\n\0\0\0\0", 12, "a Keras / HDF5 file"},
		/* a .tflite is the TFLite loader's: this one's root table lies past its end */
		{"m.tflite", "\x1c\0\0\0TFL3\0\0\0\0", 12, "not a valid TFLite FlatBuffer"},
		{"p.pkl", "\x80\x02}q\x00.", 6, "a Python pickle"},
		{"m.xml", "<?xml version=\"1.0\"?>\n<net name=\"x\">\n</net>\n", 45, "an OpenVINO IR"},
		/* a model.json is the TF.js loader's: this one has no weights */
		{"model.json", "{\"format\": \"graph-model\", \"modelTopology\": {}}", 46,
		 "no \"weightsManifest\" list"},
		/* a Core ML model is the Core ML loader's: this GLM classifier (field 400) has no layers */
		{"coreml.bin", "\x08\x04\x82\x19\x00", 5, "a Core ML model of a type with no"},
	};
	char *dir = harness_tmpdir(), *p, want[600];
	unsigned char zip[128];
	size_t zn = zip_one(zip, "archive/data.pkl", "\x80\x02}q\x00.", 6);

	(void)state;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		p = harness_join(dir, files[i].file);
		assert_int_equal(harness_write(p, files[i].bytes, files[i].n), 0);
		snprintf(want, sizeof(want), "'%s': %s", p, files[i].want);
		cli_refused((const char *[]){"analyze", p, "--static", NULL}, want);
		free(p);
	}
	/* a torch.save zip goes to the PyTorch loader: this one has no central directory */
	p = harness_join(dir, "pruned.pt");
	assert_int_equal(harness_write(p, zip, zn), 0);
	cli_refused((const char *[]){"analyze", p, "--static", NULL}, "not a valid zip archive");
	free(p);
	p = harness_join(dir, "sm");
	assert_int_equal(mkdir(p, 0700), 0);
	free(p);
	p = harness_join(dir, "sm/saved_model.pb");
	assert_int_equal(harness_write(p, "", 0), 0);
	free(p);
	p = harness_join(dir, "sm");
	cli_refused((const char *[]){"analyze", p, "--static", NULL}, "a TensorFlow SavedModel");
	free(p);
	harness_rmtree(dir);
}

/* Embedding tables count in the totals but are no layers; an MoE's shared_expert is one. */
void test_embedding_names(void **state)
{
	char *dir = harness_tmpdir(), *model = harness_join(dir, "e.safetensors");
	struct harness_run r;
	cJSON *doc, *l;
	int layers = 0;

	(void)state;
	RUN(&r, "synth", "-o", model, "--layer", "token_embd.weight=64x32:unstructured:0.5",
	    "--layer", "shared.weight=64x32:unstructured:0.5", "--layer",
	    "model.wte.weight=64x32:unstructured:0.5", "--layer",
	    "mlp.shared_expert.up.weight=64x32:unstructured:0.5");
	assert_int_equal(r.status, 0);
	harness_run_free(&r);
	RUN(&r, "analyze", model, "--static", "--format", "json");
	assert_int_equal(r.status, 0);
	doc = cJSON_Parse(r.out);
	assert_non_null(doc);
	cJSON_ArrayForEach(l, cJSON_GetObjectItem(doc, "layers")) {
		assert_string_equal(cJSON_GetObjectItem(l, "name")->valuestring,
				    "mlp.shared_expert.up.weight");
		layers++;
	}
	assert_int_equal(layers, 1);
	assert_int_equal(cJSON_GetObjectItem(cJSON_GetObjectItem(doc, "model"), "params")->valuedouble,
			 4 * 64 * 32);
	cJSON_Delete(doc);
	harness_run_free(&r);
	free(model);
	harness_rmtree(dir);
}
