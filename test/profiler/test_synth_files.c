/*
 * spprof synth: written files through spp_model_open() and the GEMM views,
 * the command line against the library, and the bundled sample models.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "profiler/layer.h"
#include "profiler/loaders.h"
#include "profiler/synth.h"
#include "test/harness.h"
#include "test/profiler/synth_reader.h"

/* Count a layer's zeros through the library's own view of it. */
static uint64_t view_zeros(const struct spp_layer *ly)
{
	uint64_t z = 0;
	for (int64_t i = 0; i < ly->view.m; i++)
		for (int64_t j = 0; j < ly->view.k; j++)
			z += (uint64_t)is_zero(ly->weight->dtype, ly->weight->data,
					       spp_view_index(&ly->view, i, j));
	return z;
}

/* The same files through spp_model_open() and the GEMM views. */
void test_through_loader(void **state)
{
	static const char *const specs[] = {
		"embeddings.word_embeddings.weight=50x16:dense:0:F16",
		"fc1.weight=24x16:nm2_4:0.5:F16",
		"fc1.bias=24:dense:0:F16",
		"fc2.weight=16x24:unstructured:0.9:BF16",
		"conv.weight=16x8x3x3:nm2_4:0.5",
		"conv1d.weight=8x12x3:block4:0.5:F64",
		"head.weight=10x16:channel:0.3:I8",
	};
	enum { N = sizeof(specs) / sizeof(specs[0]) };
	struct spp_synth_layer layers[N];
	struct spp_model *m = NULL;
	struct spp_layer *ly = NULL;
	struct spp_error err = {0};
	char *dir = harness_tmpdir(), *path;
	int count = 0;

	(void)state;
	path = write_specs(dir, "l.safetensors", specs, N, 9, layers);
	if (spp_model_open(path, &m, &err) != 0)
		fail_msg("spp_model_open: %s", err.msg);
	assert_int_equal(m->ntensors, N);
	for (int i = 0; i < N; i++) {
		assert_string_equal(m->tensors[i].name, layers[i].name);
		assert_int_equal(m->tensors[i].dtype, layers[i].dtype);
		assert_int_equal(m->tensors[i].ndim, layers[i].ndim);
		assert_int_equal(m->tensors[i].nbytes,
				 m->tensors[i].numel * (uint64_t)elem_size(layers[i].dtype));
	}
	assert_int_equal(spp_layers_from_model(m, 128, 0, &ly, &count, &err), 0);
	/* the embedding and the bias are not layers */
	assert_int_equal(count, 5);
	assert_string_equal(ly[0].name, "fc1.weight");
	assert_int_equal(view_zeros(&ly[0]), 24 * 16 / 2);
	assert_int_equal(view_zeros(&ly[1]), 346); /* round(0.9 * 384) */
	assert_int_equal(view_zeros(&ly[2]), 16 * 72 / 2);
	/* conv: every group of 4 along the view's K holds 2 */
	for (int64_t i = 0; i < ly[2].view.m; i++)
		for (int64_t g = 0; g < ly[2].view.k; g += 4) {
			int nz = 0;
			for (int64_t j = g; j < g + 4; j++)
				nz += !is_zero(SPP_DTYPE_F32, ly[2].weight->data,
					       spp_view_index(&ly[2].view, i, j));
			assert_int_equal(nz, 2);
		}
	/* conv1d 8 x 36, 4x4 blocks: 2 x 9 = 18, 9 zero: 4 x (4x4) rows... count */
	assert_int_equal(view_zeros(&ly[3]), 9 * 16);
	assert_int_equal(view_zeros(&ly[4]), 3 * 16); /* round(3.0) rows of 16 */
	free(ly);
	spp_model_destroy(m);
	free(path);
	harness_rmtree(dir);
}

/* spprof synth on the command line writes what the library writes. */
void test_cli(void **state)
{
	const char *spec1 = "fc=12x8:nm2_4:0.5:F16", *spec2 = "c=4x4x3x3:unstructured:0.7";
	struct spp_synth_layer layers[2];
	struct harness_run r;
	char *dir = harness_tmpdir(), *lib, *cli = harness_join(dir, "cli.safetensors");
	char *b1, *b2;
	size_t n1, n2;
	const char *const specs[] = {spec1, spec2};

	(void)state;
	lib = write_specs(dir, "lib.safetensors", specs, 2, 77, layers);
	{
		const char *args[] = {"synth", "-o", cli, "--layer", spec1, "--layer",
				      spec2, "--seed", "77", NULL};
		assert_int_equal(harness_spprof(&r, args), 0);
	}
	assert_int_equal(r.status, 0);
	harness_run_free(&r);
	b1 = harness_slurp(lib, &n1);
	b2 = harness_slurp(cli, &n2);
	assert_non_null(b2);
	assert_int_equal(n1, n2);
	assert_memory_equal(b1, b2, n1);
	{
		const char *args[] = {"synth", "-o", cli, "--layer", "x=4x4:nm2_4:0.3", NULL};
		assert_int_equal(harness_spprof(&r, args), 0);
	}
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "'x=4x4:nm2_4:0.3'"));
	harness_run_free(&r);
	free(b1);
	free(b2);
	free(lib);
	free(cli);
	harness_rmtree(dir);
}

/* The bundled sample models hold the patterns their README promises. */
void test_sample_models(void **state)
{
	static const struct {
		const char *file;
		enum spp_synth_pattern pattern;
		double sparsity;
		int block;
		enum spp_dtype dtype;
	} models[] = {
		{"bert_block_nm2_4.safetensors", SPP_SYNTH_NM, 0.5, 0, SPP_DTYPE_F16},
		{"bert_block_unstructured90.safetensors", SPP_SYNTH_UNSTRUCTURED, 0.9, 0, SPP_DTYPE_F32},
		{"bert_block_block4.safetensors", SPP_SYNTH_BLOCK, 0.75, 4, SPP_DTYPE_F32},
	};
	static const char *const proj[] = {
		"attention.self.query.weight", "attention.self.key.weight",
		"attention.self.value.weight", "attention.output.dense.weight",
		"intermediate.dense.weight", "output.dense.weight",
	};
	const char *dir = getenv("SPP_SAMPLE_MODELS");

	(void)state;
	if (!dir)
		skip();
	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
		char *path = harness_join(dir, models[i].file), name[128];
		struct spp_model *m = NULL;
		struct spp_error err = {0};
		struct st_file f;

		st_read(path, &f);
		for (size_t p = 0; p < sizeof(proj) / sizeof(proj[0]); p++) {
			const struct st_tensor *t;
			struct spp_synth_layer want = {0};

			snprintf(name, sizeof(name), "encoder.layer.0.%s", proj[p]);
			t = st_get(&f, name);
			want.ndim = 2;
			want.shape[0] = t->shape[0];
			want.shape[1] = t->shape[1];
			want.pattern = models[i].pattern;
			want.nm_n = 2;
			want.nm_m = 4;
			want.block = models[i].block;
			want.sparsity = models[i].sparsity;
			want.dtype = models[i].dtype;
			check_layer(t, &want);
		}
		assert_int_equal(count_zeros(st_get(&f, "embeddings.word_embeddings.weight")), 0);
		if (spp_model_open(path, &m, &err) != 0)
			fail_msg("spp_model_open: %s", err.msg);
		assert_int_equal(m->ntensors, f.n);
		spp_model_destroy(m);
		st_free(&f);
		free(path);
	}
	{
		char *path = harness_join(dir, "mixed_cnn.safetensors");
		struct st_file f;
		int convs = 0, bf16 = 0;

		st_read(path, &f);
		for (int t = 0; t < f.n; t++) {
			convs += f.t[t].ndim >= 3;
			bf16 += f.t[t].dtype == SPP_DTYPE_BF16;
		}
		assert_true(convs >= 5);
		assert_true(bf16 >= 1);
		check_nm(st_get(&f, "features.2.weight"), 2, 4);
		st_free(&f);
		free(path);
	}
}
