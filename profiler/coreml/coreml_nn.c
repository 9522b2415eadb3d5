/*
 * A Core ML neural network's layers: innerProduct (weights [C_out, C_in]),
 * convolution (OIHW; a deconvolution [C_in, C_out / groups, kH, kW], one
 * group), batchedMatmul with its own weights ([X1, X2] stored column-major,
 * so [X2, X1] row-major). Weights are float32 (floatValue, or rawValue of
 * 4-byte floats), float16, int8 by their stored code, or quantized to 1-8
 * bits in rawValue (packed from each byte's most significant bit, as
 * coremltools writes them): linear (q * scale + bias per output channel)
 * or a lookup table, decoded to F32 with the file's bytes in
 * layers[].file_storage ("coreml-linear", "coreml-lut"). A weight is named
 * "<layer>/weights", its bias "<layer>/bias". N is the output's elements
 * over M where the layer stores its output shape (outputTensor), else --n.
 */
#include "profiler/coreml/coreml.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/layer.h"

/*
 * Quantized codes decoded: W[i] = lut[q] or q * scale[k] + bias[k], k the
 * output channel (i / inner) % nch: axis 0, or 1 for a deconvolution.
 */
static int dequantize(struct coreml *c, const Coreml__WeightParams *w, struct spp_tensor *t,
		      uint64_t inner, uint64_t nch)
{
	const Coreml__QuantizationParams *q = w->quantization;
	const Coreml__LinearQuantizationParams *lin = q->linearquantization;
	const Coreml__LookUpTableQuantizationParams *lut = q->lookuptablequantization;
	uint64_t bits = q->numberofbits;
	float *v;

	if (bits < 1 || bits > 8 || (!lin == !lut) || w->rawvalue.len != (t->numel * bits + 7) / 8 ||
	    (lut && lut->n_floatvalue != (size_t)1 << bits) ||
	    (lin && ((lin->n_scale != 1 && lin->n_scale != nch) ||
		     (lin->n_bias > 1 && lin->n_bias != lin->n_scale))))
		return coreml_fault(c, "weight '%s': %" PRIu64 "-bit quantization with %zu bytes, "
				    "%zu scales or a table of %zu for %" PRIu64 " values", t->name,
				    bits, w->rawvalue.len, lin ? lin->n_scale : 0,
				    lut ? lut->n_floatvalue : 0, t->numel);
	if (spp_model_charge(c->m, t->numel * 4, c->file, "a dequantized weight", c->err))
		return c->err->code;
	if (!(v = malloc(t->numel ? t->numel * 4 : 1)) || spp_model_own(c->m, v, c->err))
		return v ? c->err->code : coreml_nomem(c);
	for (uint64_t i = 0, bit = 0; i < t->numel; i++) {
		unsigned code = 0;
		uint64_t k = lin && lin->n_scale > 1 ? i / inner % nch : 0;

		for (uint64_t b = 0; b < bits; b++, bit++)
			code = code << 1 | (w->rawvalue.data[bit / 8] >> (7 - bit % 8) & 1);
		v[i] = lut ? lut->floatvalue[code] : (float)((double)code * lin->scale[k] +
							  (lin->n_bias ? lin->bias[lin->n_bias > 1 ? k : 0] : 0));
	}
	t->stored_as = lut ? "coreml-lut" : "coreml-linear";
	t->stored_bytes = w->rawvalue.len + 4 * (lut ? lut->n_floatvalue : lin->n_scale + lin->n_bias);
	t->data = (const unsigned char *)v;
	t->dtype = SPP_DTYPE_F32;
	t->nbytes = t->numel * 4;
	return SPP_OK;
}

/* No weight: the errors (SPP_E_*) are below it, SPP_E_USAGE never comes from here. */
#define NONE (-1)

/*
 * WeightParams w of shape dims as tensor "<layer>/<what>"; its nch output
 * channels each a run of inner values, repeating (for linear scales). Its
 * index, NONE when w holds none, or an error.
 */
static int weight(struct coreml *c, const char *layer, const char *what,
		  const Coreml__WeightParams *w, int ndim, const int64_t *dims, uint64_t inner,
		  uint64_t nch)
{
	struct spp_tensor t = {.ndim = ndim, .numel = 1};
	uint64_t need, span = 1;
	int rc;

	if (!w)
		return NONE;
	/* the product of the dimensions, zeros aside, bounded: a caller's view of them
	 * (o * kh * kw) cannot overflow behind an empty one */
	for (int d = 0; d < ndim; d++) {
		uint64_t v = dims[d] > 0 ? (uint64_t)dims[d] : 1;

		if (dims[d] < 0 || span > (UINT64_C(1) << 40) / v)
			return coreml_fault(c, "layer '%s': its %s have dimension %" PRId64, layer,
					    what, dims[d]);
		span *= v;
		t.shape[d] = dims[d];
		t.numel *= (uint64_t)dims[d];
	}
	if (asprintf(&t.name, "%s/%s", layer, what) < 0)
		return coreml_nomem(c);
	if (w->n_floatvalue || (w->rawvalue.len && !w->quantization))
		t.dtype = SPP_DTYPE_F32, t.data = w->n_floatvalue ? (const unsigned char *)w->floatvalue
			: w->rawvalue.data, t.nbytes = w->n_floatvalue ? 4 * w->n_floatvalue
			: w->rawvalue.len;
	else if (w->float16value.len)
		t.dtype = SPP_DTYPE_F16, t.data = w->float16value.data, t.nbytes = w->float16value.len;
	else if (w->int8rawvalue.len)
		t.dtype = SPP_DTYPE_I8, t.data = w->int8rawvalue.data, t.nbytes = w->int8rawvalue.len;
	else if (w->quantization && (rc = dequantize(c, w, &t, inner ? inner : 1, nch)))
		return free(t.name), rc;
	else if (!w->quantization)
		return free(t.name), NONE;
	if (!t.stored_as && (spp_dtype_nbytes(t.dtype, t.numel, &need) || t.nbytes != need))
		return rc = coreml_fault(c, "weight '%s': %" PRIu64 " bytes for %" PRIu64 " values",
					 t.name, t.nbytes, t.numel), free(t.name), rc;
	return coreml_add_tensor(c, &t);
}

/* N from the layer's stored output shape: its elements over m; 0 unknown. */
static int64_t rows(const Coreml__NeuralNetworkLayer *l, int64_t m)
{
	uint64_t n = 1;

	if (!l->n_outputtensor || !l->outputtensor[0]->n_dimvalue || m <= 0)
		return 0;
	for (size_t d = 0; d < l->outputtensor[0]->n_dimvalue; d++) {
		int64_t v = l->outputtensor[0]->dimvalue[d];

		if (v <= 0 || n > (UINT64_C(1) << 50) / (uint64_t)v)
			return 0;
		n *= (uint64_t)v;
	}
	return n % (uint64_t)m ? 0 : (int64_t)(n / (uint64_t)m);
}

/* The layer of weight wi (and bias bi, -1: none) with view d set. */
static int push(struct coreml *c, const Coreml__NeuralNetworkLayer *l, struct spp_layer_desc *d,
		int wi, int bi, const char *op_type, int with_n)
{
	if (wi < 0)
		return wi == NONE ? SPP_OK : wi;
	if (bi < NONE)
		return bi;
	d->tensor = wi;
	d->bias = bi >= 0 && c->m->tensors[bi].numel == (uint64_t)d->m ? bi + 1 : 0;
	d->n = with_n ? rows(l, d->m) : 0;
	return spp_model_add_layer(c->m, d, l->name, op_type, c->file, "the network's layers",
				   c->err);
}

static int conv(struct coreml *c, const Coreml__NeuralNetworkLayer *l)
{
	const Coreml__ConvolutionLayerParams *p = l->convolution;
	int64_t kh = p->n_kernelsize == 2 ? (int64_t)p->kernelsize[0] : 3;
	int64_t kw = p->n_kernelsize == 2 ? (int64_t)p->kernelsize[1] : 3;
	int64_t o = (int64_t)p->outputchannels, kc = (int64_t)p->kernelchannels;
	int64_t g = p->ngroups ? (int64_t)p->ngroups : 1;
	int64_t dims[4] = {o, kc, kh, kw};
	struct spp_layer_desc d = {.op = SPP_OP_CONV2D};
	struct spp_layer view;
	int wi, bi;

	if (p->isdeconvolution) {
		if (g != 1)
			return SPP_OK; /* one layer per group: not read */
		dims[0] = kc, dims[1] = o;
	}
	/* output channels: a convolution's along axis 0, a deconvolution's along axis 1; the
	 * runs in unsigned arithmetic, as weight() checks the dimensions before it uses them */
	wi = p->isdeconvolution ? weight(c, l->name, "weights", p->weights, 4, dims,
					 (uint64_t)kh * (uint64_t)kw, (uint64_t)o)
		: weight(c, l->name, "weights", p->weights, 4, dims,
			 (uint64_t)kc * (uint64_t)kh * (uint64_t)kw, (uint64_t)o);
	bi = p->hasbias ? weight(c, l->name, "bias", p->bias, 1, &o, 1, (uint64_t)o) : NONE;
	if (wi < 0 || bi < NONE)
		return wi < NONE ? wi : bi < NONE ? bi : SPP_OK;
	if (p->isdeconvolution) {
		d.op = SPP_OP_CONV_TRANSPOSE;
		spp_desc_view(&d, o * kh * kw, c->m->tensors[wi].numel, 1);
		return push(c, l, &d, wi, bi, "convolution", 0);
	}
	spp_layer_init(&view, &c->m->tensors[wi], 0);
	d.m = view.view.m, d.k = view.view.k, d.base = view.view.base;
	d.row_stride = view.view.row_stride, d.inner = view.view.inner;
	d.inner_stride = view.view.inner_stride, d.outer_stride = view.view.outer_stride;
	return push(c, l, &d, wi, bi, "convolution", 1);
}

static int layer(struct coreml *c, const Coreml__NeuralNetworkLayer *l)
{
	struct spp_layer_desc d = {.op = SPP_OP_LINEAR};

	if (l->convolution)
		return conv(c, l);
	if (l->innerproduct) {
		const Coreml__InnerProductLayerParams *p = l->innerproduct;
		int64_t dims[2] = {(int64_t)p->outputchannels, (int64_t)p->inputchannels};
		int wi = weight(c, l->name, "weights", p->weights, 2, dims, (uint64_t)dims[1],
				(uint64_t)dims[0]);
		int bi = p->hasbias ? weight(c, l->name, "bias", p->bias, 1, dims, 1,
					     (uint64_t)dims[0]) : NONE;

		if (wi >= 0)
			spp_desc_view(&d, dims[0], c->m->tensors[wi].numel, 0);
		return push(c, l, &d, wi, bi, "innerProduct", 1);
	}
	if (l->batchedmatmul && l->batchedmatmul->weights) {
		const Coreml__BatchedMatMulLayerParams *p = l->batchedmatmul;
		int64_t dims[2] = {(int64_t)p->weightmatrixseconddimension,
				   (int64_t)p->weightmatrixfirstdimension};
		int wi = weight(c, l->name, "weights", p->weights, 2, dims, (uint64_t)dims[1],
				(uint64_t)dims[0]);
		int bi = p->hasbias ? weight(c, l->name, "bias", p->bias, 1, dims, 1,
					     (uint64_t)dims[0]) : NONE;

		d.op = SPP_OP_MATMUL;
		if (wi >= 0)
			spp_desc_view(&d, dims[0], c->m->tensors[wi].numel, 0);
		return push(c, l, &d, wi, bi, "batchedMatmul", 1);
	}
	return SPP_OK;
}

int coreml_nn(struct coreml *c, const Coreml__NeuralNetwork *nn)
{
	for (size_t i = 0; i < nn->n_layers; i++) {
		int rc = layer(c, nn->layers[i]);

		if (rc)
			return rc;
	}
	return SPP_OK;
}
