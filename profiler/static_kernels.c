/*
 * The kernels of a convolution (static.h, struct spp_kernel_counts): in the
 * GEMM view a row is one output channel o and K runs over (spatial p,
 * input channel c) with c fastest, so kernel (o, c) is the K-elements
 * p * C + c of row o, whichever of the weight's dimensions hold p and c
 * (the layer's layout). Each kernel's zero mask is a bit per p: an all-zero
 * kernel is kernel-level pruning; a few masks shared by most kernels are
 * pattern-based pruning (4 of 9 kept in fixed shapes). A 1x1 conv has no
 * kernels to speak of (each is one weight): size 0, as for other layers.
 */
#include "profiler/static_scan_internal.h"

#include <stdlib.h>
#include <string.h>

struct kpass {
	struct spp_kernel_counts *out;
	int64_t c;               /* input channels per group (1 for depthwise layouts) */
	uint64_t *key, *count;   /* open addressing over non-zero masks; key 0 empty */
	uint64_t cap, used;
	uint8_t *chan_any;       /* input channel c has a non-zero kernel */
};

static void count_mask(struct kpass *p, uint64_t mask)
{
	uint64_t h = (mask * UINT64_C(0x9e3779b97f4a7c15)) >> 20;

	if (p->out->patterns < 0)
		return;
	for (uint64_t i = h & (p->cap - 1);; i = (i + 1) & (p->cap - 1)) {
		if (p->key[i] == mask) {
			p->count[i]++;
			return;
		}
		if (p->key[i] == 0) {
			if (p->used == SPP_KERNEL_MAX_PATTERNS) {
				p->out->patterns = -1; /* too many to be a pattern-pruned conv */
				return;
			}
			p->key[i] = mask;
			p->count[i] = 1;
			p->used++;
			return;
		}
	}
}

static void kernel_row(void *ctx, int64_t i, const uint8_t *mk)
{
	struct kpass *p = ctx;
	int size = p->out->size;

	(void)i;
	for (int64_t c = 0; c < p->c; c++) {
		uint64_t mask = 0;
		int any = 0;

		for (int q = 0; q < size; q++)
			if (mk[(int64_t)q * p->c + c]) {
				any = 1;
				if (size <= 64)
					mask |= UINT64_C(1) << q;
			}
		p->chan_any[c] |= (uint8_t)any;
		if (!any)
			p->out->zero++;
		else if (size <= 64)
			count_mask(p, mask);
	}
}

/* The most common masks into out's top list: count descending, then mask ascending. */
static void keep_top(const struct kpass *p, struct spp_kernel_counts *out)
{
	out->ntop = 0;
	for (uint64_t i = 0; i < p->cap; i++) {
		int at;

		if (!p->key[i])
			continue;
		for (at = out->ntop; at > 0; at--) {
			uint64_t cc = out->top_count[at - 1], cm = out->top_mask[at - 1];

			if (cc > p->count[i] || (cc == p->count[i] && cm < p->key[i]))
				break;
		}
		if (at == SPP_KERNEL_TOP)
			continue;
		if (out->ntop < SPP_KERNEL_TOP)
			out->ntop++;
		memmove(out->top_mask + at + 1, out->top_mask + at,
			(size_t)(out->ntop - 1 - at) * sizeof(uint64_t));
		memmove(out->top_count + at + 1, out->top_count + at,
			(size_t)(out->ntop - 1 - at) * sizeof(uint64_t));
		out->top_mask[at] = p->key[i];
		out->top_count[at] = p->count[i];
	}
}

int spp_static_kernels(const struct spp_layer *l, struct spp_kernel_counts *out,
		       struct spp_error *err)
{
	const struct spp_tensor *t = l->weight;
	struct kpass p = {out, 0, NULL, NULL, 0, 0, NULL};
	struct spp_conv_axes ax;
	int64_t size = 1;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((l->op != SPP_OP_CONV1D && l->op != SPP_OP_CONV2D && l->op != SPP_OP_CONV3D) ||
	    t->coo || !spp_conv_axes(l->layout, t->ndim, &ax))
		return SPP_OK;
	/* the weight's own axes (profiler/layer.h, enum spp_layout): TFLite's OHWI
	 * [24, 5, 5, 3] has the kernels 5x5 of ONNX's OIHW [24, 3, 5, 5] */
	p.c = ax.channel >= 0 ? t->shape[ax.channel] : 1;
	for (int d = ax.first; d < ax.first + ax.count; d++)
		size *= t->shape[d];
	if (size < 2 || p.c <= 0 || l->view.k != size * p.c ||
	    (uint64_t)l->view.m * (uint64_t)l->view.k != t->numel)
		return SPP_OK; /* not a conv view of K (spatial, c): no kernels to name */
	out->size = (int)size;
	out->ndims = ax.count;
	for (int d = 0; d < ax.count; d++)
		out->dims[d] = (int)t->shape[ax.first + d];
	out->kernels = (uint64_t)l->view.m * (uint64_t)p.c;
	out->channels = (uint64_t)p.c;
	p.chan_any = calloc((size_t)p.c, 1);
	if (!p.chan_any)
		return spp_error_set(err, SPP_E_NOMEM, "tensor '%s': out of memory for its "
				     "channels", t->name ? t->name : "?");
	if (size <= 64) {
		uint64_t most = out->kernels < SPP_KERNEL_MAX_PATTERNS ? out->kernels
								       : SPP_KERNEL_MAX_PATTERNS;

		for (p.cap = 16; p.cap < 2 * most; p.cap *= 2)
			;
		p.key = calloc((size_t)p.cap, sizeof(*p.key));
		p.count = calloc((size_t)p.cap, sizeof(*p.count));
		if (!p.key || !p.count) {
			free(p.key), free(p.count), free(p.chan_any);
			return spp_error_set(err, SPP_E_NOMEM, "tensor '%s': out of memory for its "
					     "kernel patterns", t->name ? t->name : "?");
		}
	} else {
		out->patterns = -1;
	}
	rc = spp_scan_each_row(l, kernel_row, &p, err);
	if (!rc && out->patterns == 0) {
		out->patterns = (int64_t)p.used;
		keep_top(&p, out);
	}
	for (int64_t c = 0; !rc && c < p.c; c++)
		out->zero_channels += !p.chan_any[c];
	free(p.key), free(p.count), free(p.chan_any);
	if (rc)
		memset(out, 0, sizeof(*out));
	return rc;
}

char *spp_kernel_mask_text(const struct spp_kernel_counts *k, uint64_t mask, char *buf, size_t n)
{
	int last = k->dims[k->ndims - 1], plane = k->ndims == 3 ? k->dims[1] * k->dims[2] : 0;
	size_t u = 0;

	for (int q = 0; q < k->size && q < 64 && u + 2 < n; q++) {
		if (q > 0 && plane && q % plane == 0)
			buf[u++] = '|';
		else if (q > 0 && k->ndims > 1 && q % last == 0)
			buf[u++] = '/';
		buf[u++] = (mask >> q) & 1 ? '1' : '0';
	}
	buf[u < n ? u : n - 1] = '\0';
	return buf;
}
