/*
 * The PyTorch peer in `spprof bench --peers torch`'s report
 * (profiler/peer_torch_result.h): per synthetic case, torch.sparse.mm on
 * CSR and torch.mm, each against the case's dense baseline. torch times itself in its own process, so its
 * figures come from a later minute than spprof's interleaved run.
 */
#include "reports/bench.h"
#include "reports/bench_internal.h"
#include "reports/json_values.h"

#include <math.h>
#include <stdio.h>

static cJSON *op_json(const struct spp_peer_torch_op *op, double dense_ns)
{
	cJSON *j = cJSON_CreateObject();

	if (!j)
		return NULL;
	cJSON_AddStringToObject(j, "name", op->name);
	cJSON_AddStringToObject(j, "call", op->call);
	cJSON_AddBoolToObject(j, "verified", op->verified);
	cJSON_AddItemToObject(j, "max_error", spp_json_num(op->max_error));
	cJSON_AddItemToObject(j, "median_ns", spp_json_num(op->median_ns));
	cJSON_AddItemToObject(j, "p10_ns", spp_json_num(op->p10_ns));
	cJSON_AddItemToObject(j, "p90_ns", spp_json_num(op->p90_ns));
	cJSON_AddNumberToObject(j, "runs", op->runs);
	cJSON_AddItemToObject(j, "speedup", spp_json_num(op->verified ? dense_ns / op->median_ns : NAN));
	return j;
}

int spp_bench_out_torch(struct spp_bench_out *o, const char *name, const struct spp_peer_torch *t,
			double dense_ns, struct spp_error *err)
{
	char a[16], b[16];

	if (!o->d.json) {
		spp_bench_fmt_time(dense_ns, b, sizeof(b));
		fprintf(o->f, "peer torch %s (%d thread%s) on %s, against dense %s:", t->torch_version,
			t->threads, t->threads == 1 ? "" : "s", name, b);
		for (int i = 0; i < SPP_PEER_TORCH_NOPS; i++) {
			const struct spp_peer_torch_op *op = &t->ops[i];

			spp_bench_fmt_time(op->median_ns, a, sizeof(a));
			if (op->verified)
				fprintf(o->f, "  %s %s %.2fx", op->name, a, dense_ns / op->median_ns);
			else
				fprintf(o->f, "  %s failed the check (max error %.3g)", op->name, op->max_error);
		}
		fputc('\n', o->f);
		return SPP_OK;
	}
	{
		cJSON *arr = cJSON_GetObjectItemCaseSensitive(o->cur, "torch"), *j, *ops;

		if (!arr && !(arr = cJSON_AddArrayToObject(o->cur, "torch")))
			return spp_bench_fail_nomem(err);
		if (!(j = cJSON_CreateObject()))
			return spp_bench_fail_nomem(err);
		cJSON_AddItemToArray(arr, j);
		cJSON_AddStringToObject(j, "matrix", name);
		cJSON_AddStringToObject(j, "torch_version", t->torch_version);
		cJSON_AddNumberToObject(j, "threads", t->threads);
		cJSON_AddItemToObject(j, "dense_time_ns", spp_json_num(dense_ns));
		if (!(ops = cJSON_AddArrayToObject(j, "ops")))
			return spp_bench_fail_nomem(err);
		for (int i = 0; i < SPP_PEER_TORCH_NOPS; i++) {
			cJSON *e = op_json(&t->ops[i], dense_ns);

			if (!e)
				return spp_bench_fail_nomem(err);
			cJSON_AddItemToArray(ops, e);
		}
	}
	return SPP_OK;
}

int spp_bench_out_note(struct spp_bench_out *o, const char *what, const char *msg,
		       struct spp_error *err)
{
	char line[512];
	cJSON *arr;

	if (!o->d.json) {
		fprintf(o->f, "%s: %s\n", what, msg);
		return SPP_OK;
	}
	snprintf(line, sizeof(line), "%s: %s", what, msg);
	arr = cJSON_GetObjectItemCaseSensitive(o->root, "notes");
	if (!arr && !(arr = cJSON_AddArrayToObject(o->root, "notes")))
		return spp_bench_fail_nomem(err);
	if (!cJSON_AddItemToArray(arr, cJSON_CreateString(line)))
		return spp_bench_fail_nomem(err);
	return SPP_OK;
}
