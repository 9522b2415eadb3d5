/* spprof synth: write a synthetic model with chosen layer patterns. */
#include <stdio.h>
#include <stdlib.h>

#include "cmd/cmd.h"
#include "profiler/synth.h"

struct synth_args {
	struct spp_synth_layer *layers; /* room for one per argument */
	int nlayers;
	const char *output;
	uint64_t seed;
};

static int opt_layer(const char *cmd, const struct cmd_option *o, const char *arg, void *args)
{
	struct synth_args *a = args;
	struct spp_error err = {0};

	(void)o;
	if (spp_synth_parse_layer(arg, &a->layers[a->nlayers], &err))
		return cmd_usage_error(cmd, "%s", err.msg);
	a->nlayers++;
	return 0;
}

static const struct cmd_option synth_options[] = {
	{CMD_OPT_OUTPUT(struct synth_args, output),
	 .help = "the safetensors file to write, atomically (required)"},
	{CMD_CALLBACK("layer", "SPEC", opt_layer),
	 .help = "a layer to write, SPEC as below; repeated for more (at least one)"},
	{CMD_OPT_SEED(struct synth_args, seed, UINT64_MAX), .want = "an unsigned integer",
	 .help = "seed of the values; default 1"},
	{0},
};

const struct cmd_help cmd_synth_help = {
	.head = "usage: spprof synth -o FILE.safetensors --layer SPEC [--layer SPEC ...] [--seed S]\n"
		"\n"
		"Write a safetensors model whose layers have the given shape, sparsity\n"
		"pattern and sparsity. Values are magnitude-style (no exact zeros outside\n"
		"the pattern) and fixed by --seed (default 1).\n",
	.options = synth_options,
	.tail = "SPEC: NAME=MxK:PATTERN:SPARSITY[:DTYPE]        linear [out, in]\n"
		"      NAME=OxIxKHxKW:PATTERN:SPARSITY[:DTYPE]  conv2d OIHW\n"
		"      NAME=OxIxK:PATTERN:SPARSITY[:DTYPE]      conv1d\n"
		"      NAME=D:dense|unstructured:SPARSITY[:DTYPE] 1-D tensor (bias, norm)\n"
		"PATTERN: dense, unstructured, nmN_M (e.g. nm2_4), blockB (e.g. block4),\n"
		"         channel (whole output channels zero); nmN_M fixes SPARSITY\n"
		"         at 1 - N/M (give it within 0.005)\n"
		"DTYPE: F32 (default), F16, BF16, F64, F8_E4M3, F8_E5M2, I8, I16, I32,\n"
		"       I64, U8, U16, U32, U64\n"
		"Patterns lie in the GEMM view: N:M groups run along K = (kh, kw, c).\n"
		"\n"
		"example:\n"
		"  spprof synth -o m.safetensors --layer fc1=3072x768:nm2_4:0.5:F16 \\\n"
		"                                --layer conv=64x32x3x3:unstructured:0.9\n",
};

int cmd_synth(int argc, char **argv)
{
	struct synth_args args = {NULL, 0, NULL, 1};
	struct spp_error err = {0};
	int rc, npos;

	args.layers = calloc((size_t)argc, sizeof(*args.layers));
	if (!args.layers) {
		fprintf(stderr, "spprof synth: out of memory\n");
		return 3;
	}
	rc = cmd_parse_options("synth", synth_options, &args, argc, argv, &npos);
	if (!rc && npos)
		rc = cmd_usage_error("synth", "unexpected argument '%s'", argv[1]);
	if (!rc && (!args.output || args.nlayers == 0))
		rc = cmd_usage_error("synth", "needs -o FILE and at least one --layer");
	if (!rc && spp_synth_write(args.output, args.layers, args.nlayers, args.seed, &err))
		rc = cmd_fail(&err);
	free(args.layers);
	return rc;
}
