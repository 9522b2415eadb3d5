/* spprof synth: write a synthetic model with chosen layer patterns. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd/cmd.h"
#include "profiler/synth.h"

const char cmd_synth_usage[] =
	"usage: spprof synth -o FILE.safetensors --layer SPEC [--layer SPEC ...] [--seed S]\n"
	"\n"
	"Write a safetensors model whose layers have the given shape, sparsity\n"
	"pattern and sparsity. Values are magnitude-style (no exact zeros outside\n"
	"the pattern) and fixed by --seed (default 1).\n"
	"\n"
	"SPEC: NAME=MxK:PATTERN:SPARSITY[:DTYPE]        linear [out, in]\n"
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
	"                                --layer conv=64x32x3x3:unstructured:0.9\n";

enum { OPT_LAYER = 1000, OPT_SEED };

static const struct option synth_options[] = {
	{"output", required_argument, NULL, 'o'},
	{"layer", required_argument, NULL, OPT_LAYER},
	{"seed", required_argument, NULL, OPT_SEED},
	{NULL, 0, NULL, 0},
};

int cmd_synth(int argc, char **argv)
{
	struct spp_synth_layer *layers = NULL;
	struct spp_error err = {0};
	const char *output = NULL;
	uint64_t seed = 1;
	int nlayers = 0, rc = 0, c;

	layers = calloc((size_t)argc, sizeof(*layers));
	if (!layers) {
		fprintf(stderr, "spprof synth: out of memory\n");
		return 3;
	}
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:", synth_options, NULL)) != -1) {
		switch (c) {
		case 'o':
			output = optarg;
			break;
		case OPT_LAYER:
			if (spp_synth_parse_layer(optarg, &layers[nlayers], &err)) {
				rc = cmd_usage_error("synth", "%s", err.msg);
				goto out;
			}
			nlayers++;
			break;
		case OPT_SEED:
			if (cmd_parse_u64(optarg, &seed)) {
				rc = cmd_usage_error("synth", "--seed wants an unsigned integer, not '%s'", optarg);
				goto out;
			}
			break;
		case ':':
			rc = cmd_usage_error("synth", "option '%s' needs a value", argv[optind - 1]);
			goto out;
		default:
			rc = cmd_usage_error("synth", "unknown option '%s'", argv[optind - 1]);
			goto out;
		}
	}
	if (optind != argc) {
		rc = cmd_usage_error("synth", "unexpected argument '%s'", argv[optind]);
		goto out;
	}
	if (!output || nlayers == 0) {
		rc = cmd_usage_error("synth", "needs -o FILE and at least one --layer");
		goto out;
	}
	if (spp_synth_write(output, layers, nlayers, seed, &err))
		rc = cmd_fail(&err);
out:
	free(layers);
	return rc;
}
