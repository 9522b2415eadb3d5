/* The layers that hold a model back from a target sparsity (derive.h). */
#include "profiler/derive.h"

#include <math.h>
#include <string.h>

#include "profiler/analysis.h"

void spp_hold_back(const struct spp_analysis *a, struct spp_model_summary *s)
{
	struct spp_hold_back *h = &s->hold_back;

	memset(h, 0, sizeof(*h));
	if (!(s->gemm_params > 0))
		return;
	h->valid = 1;
	h->from_option = a->opts.has_target;
	h->target = h->from_option ? a->opts.target_sparsity : s->gemm_sparsity;
	h->nnz_to_remove = s->gemm_nnz - (1 - h->target) * s->gemm_params;
	/* under half a non-zero is the target's rounding (the model's own sparsity): none */
	if (h->nnz_to_remove < 0.5)
		h->nnz_to_remove = 0;
	for (int i = 0; i < a->nlayers; i++) {
		const struct spp_layer_static *st = &a->stats[i];
		struct spp_hold_back_layer x = {i, 0, 0, 0, NAN};
		int at;

		if (st->unsupported)
			continue;
		x.excess_nnz = (double)st->counts.nnz - (1 - h->target) * (double)st->numel;
		if (!(x.excess_nnz > 0.5))
			continue; /* at or past the target (to rounding) */
		x.excess_flops = 2 * x.excess_nnz * (double)a->layers[i].n;
		h->excess_flops += x.excess_flops;
		if (h->nnz_to_remove > 0 && h->nnz_to_remove <= (double)st->counts.nnz)
			x.alone = 1 - ((double)st->counts.nnz - h->nnz_to_remove) / (double)st->numel;
		/* insert by excess FLOPs, most first; equal ones keep the model's order */
		for (at = h->n; at > 0 && h->l[at - 1].excess_flops < x.excess_flops; at--)
			;
		if (at == SPP_HOLD_BACK_MAX)
			continue;
		if (h->n < SPP_HOLD_BACK_MAX)
			h->n++;
		memmove(&h->l[at + 1], &h->l[at], (size_t)(h->n - 1 - at) * sizeof(h->l[0]));
		h->l[at] = x;
	}
	for (int k = 0; k < h->n; k++)
		h->l[k].share = h->excess_flops > 0 ? h->l[k].excess_flops / h->excess_flops : NAN;
}
