/*
 * What of the object torch.save wrote is the model (load_torch.c). A
 * training checkpoint saves training state beside the model's state dict
 * ({'model': sd, 'optimizer': opt.state_dict(), 'epoch': 3}): an
 * optimizer's momentum buffers and Adam's moments have the shapes of the
 * weights, and profiled as layers they would double the parameters and
 * blur the sparsity. The rule (docs/METRICS.md, "What a PyTorch file's
 * model is"):
 *   - an optimizer's state dict, a dict holding both 'state' and
 *     'param_groups', is never profiled, wherever it lies;
 *   - a top-level dict holding a state dict (a dict with a tensor among its
 *     values) under a model key (spp_ckpt_model_entry's list, in order of
 *     preference) is profiled through that entry alone;
 *   - else a top-level entry whose key names training state (optimizer*,
 *     optim*, scheduler*, lr_scheduler*, scaler, grad_scaler, amp) is left
 *     out, and everything else profiled as before.
 * The tensors left out are tallied (struct spp_ckpt_left) and named in one
 * line per file, the training_state warning. Nothing here allocates but
 * that line; values are borrowed from the caller's struct spp_pickle.
 */
#ifndef SPP_PROFILER_TORCH_CKPT_H
#define SPP_PROFILER_TORCH_CKPT_H

#include <stdint.h>

#include "base/error.h"
#include "profiler/pickle.h"

/* Why a value is left out: not (profiled), training state, or an optimizer's state. */
enum spp_ckpt_out { SPP_CKPT_KEEP, SPP_CKPT_TRAINING, SPP_CKPT_OPTIMIZER };

#define SPP_CKPT_PATTERNS 4

/* The tensors left out of one file: counts, and the first distinct name patterns. */
struct spp_ckpt_left {
	uint64_t tensors, values;
	int all_optimizer;      /* every tensor left out lay in an optimizer's state dict */
	int npatterns, more;    /* more: a tensor whose pattern is not among those kept */
	char pattern[SPP_CKPT_PATTERNS][80];
};

/* Whether value vi of pk is an optimizer's state dict (string keys 'state' and 'param_groups'). */
int spp_ckpt_is_optimizer(const struct spp_pickle *pk, uint32_t vi);

/*
 * The entry of the top-level value root that holds the model: the index
 * among root's key/value pairs of the first model key present (model,
 * state_dict, model_state_dict, model_state, module, net, network, ema,
 * model_ema, state_dict_ema) whose value is a state dict: a dict, not an
 * optimizer's, with a tensor among its values. -1 when root is not a dict
 * or holds none; *key (may be NULL) then "".
 */
int spp_ckpt_model_entry(const struct spp_pickle *pk, uint32_t root, const char **key);

/*
 * Whether the value val under the top-level key k (a string, else never)
 * is left out, and why, when no entry holds the model (model_entry -1);
 * when one does, every other entry is left out as training state.
 */
enum spp_ckpt_out spp_ckpt_top_entry(const struct spp_pickle *pk, uint32_t k, uint32_t val,
				     int entry, int model_entry);

/*
 * Tally tensor value vi of pk, named name, as left out for why. Its size
 * tuple checked as load_torch.c checks a profiled one (each size an
 * integer in [0, 2^40], the count at most 2^50, no product wrapping):
 * else SPP_E_FORMAT naming path and the tensor. Returns 0.
 */
int spp_ckpt_left_add(struct spp_ckpt_left *l, const struct spp_pickle *pk, uint32_t vi,
		      const char *name, enum spp_ckpt_out why, const char *path,
		      struct spp_error *err);

/*
 * The line naming what l left out of path, into buf (size n): "'ckpt.pt':
 * optimizer state left out (2 tensors, 10.2 k values:
 * optimizer.state.*.momentum_buffer); profiled the 'model' state dict".
 * model_key "" when no entry held the model, kept the tensors the file
 * gave the model. Empty when nothing was left out.
 */
void spp_ckpt_left_line(const struct spp_ckpt_left *l, const char *path, const char *model_key,
			uint64_t kept, char *buf, size_t n);

#endif
