/*
 * What of a torch.save object is the model (torch_ckpt.h): the optimizer's
 * state and the training state beside a model's state dict recognised,
 * and the tensors left out tallied and named.
 */
#include "profiler/torch_ckpt.h"

#include <stdio.h>
#include <string.h>

/* Model keys, in order of preference: the model before its EMA copy. */
static const char *const model_keys[] = {
	"model", "state_dict", "model_state_dict", "model_state", "module", "net", "network",
	"ema", "model_ema", "state_dict_ema",
};

/* Keys (prefixes, then whole keys) naming training state. */
static const char *const training_prefixes[] = {"optim", "sched", "lr_sched"};
static const char *const training_keys[] = {"scaler", "grad_scaler", "amp"};

static int str_is(const struct spp_pv *k, const char *s)
{
	return k->kind == SPP_PV_STR && k->len == strlen(s) && memcmp(k->s, s, k->len) == 0;
}

int spp_ckpt_is_optimizer(const struct spp_pickle *pk, uint32_t vi)
{
	const struct spp_pv *v = &pk->v[vi];
	int state = 0, groups = 0;

	if (v->kind != SPP_PV_DICT)
		return 0;
	for (uint32_t i = 0; i + 1 < v->n; i += 2) {
		state |= str_is(&pk->v[v->items[i]], "state");
		groups |= str_is(&pk->v[v->items[i]], "param_groups");
	}
	return state && groups;
}

/* A dict, not an optimizer's, with a tensor among its values. */
static int state_dict(const struct spp_pickle *pk, uint32_t vi)
{
	const struct spp_pv *v = &pk->v[vi];

	if (v->kind != SPP_PV_DICT || spp_ckpt_is_optimizer(pk, vi))
		return 0;
	for (uint32_t i = 1; i < v->n; i += 2)
		if (pk->v[v->items[i]].kind == SPP_PV_TENSOR)
			return 1;
	return 0;
}

int spp_ckpt_model_entry(const struct spp_pickle *pk, uint32_t root, const char **key)
{
	const struct spp_pv *r = &pk->v[root];

	if (key)
		*key = "";
	if (r->kind != SPP_PV_DICT)
		return -1;
	for (size_t m = 0; m < sizeof(model_keys) / sizeof(model_keys[0]); m++)
		for (uint32_t i = 0; i + 1 < r->n; i += 2)
			if (str_is(&pk->v[r->items[i]], model_keys[m]) && state_dict(pk, r->items[i + 1])) {
				if (key)
					*key = model_keys[m];
				return (int)(i / 2);
			}
	return -1;
}

enum spp_ckpt_out spp_ckpt_top_entry(const struct spp_pickle *pk, uint32_t k, uint32_t val,
				     int entry, int model_entry)
{
	const struct spp_pv *key = &pk->v[k];

	if (spp_ckpt_is_optimizer(pk, val))
		return SPP_CKPT_OPTIMIZER;
	if (model_entry >= 0)
		return entry == model_entry ? SPP_CKPT_KEEP : SPP_CKPT_TRAINING;
	if (key->kind != SPP_PV_STR)
		return SPP_CKPT_KEEP;
	for (size_t i = 0; i < sizeof(training_prefixes) / sizeof(training_prefixes[0]); i++)
		if (key->len >= strlen(training_prefixes[i]) &&
		    memcmp(key->s, training_prefixes[i], strlen(training_prefixes[i])) == 0)
			return SPP_CKPT_TRAINING;
	for (size_t i = 0; i < sizeof(training_keys) / sizeof(training_keys[0]); i++)
		if (str_is(key, training_keys[i]))
			return SPP_CKPT_TRAINING;
	return SPP_CKPT_KEEP;
}

/* name with each all-digit part (a parameter's or a list's index) as '*', truncated to fit. */
static void pattern_of(const char *name, char *out, size_t n)
{
	size_t o = 0;

	while (*name && o + 1 < n) {
		size_t part = strcspn(name, "."), digits = strspn(name, "0123456789");

		if (part > 0 && digits == part) {
			out[o++] = '*';
		} else {
			size_t c = part < n - 1 - o ? part : n - 1 - o;

			memcpy(out + o, name, c);
			o += c;
		}
		name += part;
		if (*name == '.' && o + 1 < n)
			out[o++] = *name++;
		else if (*name == '.')
			name++;
	}
	out[o] = '\0';
}

int spp_ckpt_left_add(struct spp_ckpt_left *l, const struct spp_pickle *pk, uint32_t vi,
		      const char *name, enum spp_ckpt_out why, const char *path,
		      struct spp_error *err)
{
	const struct spp_pv *sz = &pk->v[pk->v[vi].items[1]];
	uint64_t numel = 1, sum;
	char pat[sizeof(l->pattern[0])];
	int i;

	for (uint32_t d = 0; d < sz->n; d++) {
		const struct spp_pv *s = &pk->v[sz->items[d]];

		if (s->kind != SPP_PV_INT || s->i < 0 || s->i > (INT64_C(1) << 40) ||
		    __builtin_mul_overflow(numel, (uint64_t)s->i, &numel) || numel > (UINT64_C(1) << 50))
			return spp_error_set(err, SPP_E_FORMAT,
					     "'%s': tensor '%.200s': a size out of range", path, name);
	}
	if (l->tensors == 0)
		l->all_optimizer = 1;
	l->all_optimizer &= why == SPP_CKPT_OPTIMIZER;
	l->tensors++;
	/* at most 2^50 each and fewer tensors than pickle bytes: saturate rather than wrap */
	l->values = __builtin_add_overflow(l->values, numel, &sum) ? UINT64_MAX : sum;
	pattern_of(name, pat, sizeof(pat));
	for (i = 0; i < l->npatterns && strcmp(l->pattern[i], pat); i++)
		;
	if (i == l->npatterns && i < SPP_CKPT_PATTERNS)
		memcpy(l->pattern[l->npatterns++], pat, sizeof(pat));
	else if (i == l->npatterns)
		l->more = 1;
	return SPP_OK;
}

/* v as "123", "10.2 k", "2.2 M", "1.1 G". */
static void count_text(uint64_t v, char *buf, size_t n)
{
	if (v < 1000)
		snprintf(buf, n, "%llu", (unsigned long long)v);
	else if (v < 1000000)
		snprintf(buf, n, "%.1f k", (double)v / 1e3);
	else if (v < 1000000000)
		snprintf(buf, n, "%.1f M", (double)v / 1e6);
	else
		snprintf(buf, n, "%.1f G", (double)v / 1e9);
}

void spp_ckpt_left_line(const struct spp_ckpt_left *l, const char *path, const char *model_key,
			uint64_t kept, char *buf, size_t n)
{
	char values[32], pats[4 * sizeof(l->pattern[0]) + 8] = "";

	if (n)
		buf[0] = '\0';
	if (!l->tensors || !n)
		return;
	count_text(l->values, values, sizeof(values));
	for (int i = 0; i < l->npatterns; i++) {
		size_t o = strlen(pats);

		snprintf(pats + o, sizeof(pats) - o, "%s%s", i ? ", " : "", l->pattern[i]);
	}
	if (l->more) {
		size_t o = strlen(pats);

		snprintf(pats + o, sizeof(pats) - o, ", ...");
	}
	snprintf(buf, n, "'%.200s': %s left out (%llu tensor%s, %s values: %s); %s%s%s", path,
		 l->all_optimizer ? "optimizer state" : "training state",
		 (unsigned long long)l->tensors, l->tensors == 1 ? "" : "s", values, pats,
		 model_key[0] ? "profiled the '" : kept ? "profiled the rest" : "no model weights beside it",
		 model_key, model_key[0] ? "' state dict" : "");
}
