/*
 * The restricted unpickler of pickle.h. Opcodes are taken from the pickle
 * format's documentation (Lib/pickletools.py); only what torch.save's
 * data.pkl of a state dict can hold is accepted. Bounds: the stack, the
 * marks and the memo are limited (a memo index past the pickle's length
 * cannot be a real one), and every value costs at least one byte of input,
 * so memory stays linear in the pickle.
 */
#include "profiler/pickle.h"
#include "base/le.h"

#include <stdlib.h>
#include <string.h>

#define MAX_MARKS 4096
#define NO_VAL UINT32_MAX

enum g_kind { G_ORDERED_DICT, G_REBUILD_TENSOR, G_REBUILD_PARAMETER, G_STORAGE };

/* The globals torch.save writes for tensors and state dicts; nothing else loads. */
static const struct allowed {
	const char *module, *name;
	enum g_kind kind;
	enum spp_dtype dtype;
} allowed[] = {
	{"collections", "OrderedDict", G_ORDERED_DICT, SPP_DTYPE_COUNT},
	{"torch._utils", "_rebuild_tensor_v2", G_REBUILD_TENSOR, SPP_DTYPE_COUNT},
	{"torch._utils", "_rebuild_parameter", G_REBUILD_PARAMETER, SPP_DTYPE_COUNT},
	{"torch", "FloatStorage", G_STORAGE, SPP_DTYPE_F32},
	{"torch", "DoubleStorage", G_STORAGE, SPP_DTYPE_F64},
	{"torch", "HalfStorage", G_STORAGE, SPP_DTYPE_F16},
	{"torch", "BFloat16Storage", G_STORAGE, SPP_DTYPE_BF16},
	{"torch", "ByteStorage", G_STORAGE, SPP_DTYPE_U8},
	{"torch", "CharStorage", G_STORAGE, SPP_DTYPE_I8},
	{"torch", "ShortStorage", G_STORAGE, SPP_DTYPE_I16},
	{"torch", "IntStorage", G_STORAGE, SPP_DTYPE_I32},
	{"torch", "LongStorage", G_STORAGE, SPP_DTYPE_I64},
	{"torch", "BoolStorage", G_STORAGE, SPP_DTYPE_BOOL},
};

struct up {
	const unsigned char *p;
	size_t n, pos;
	const char *where;
	struct spp_pickle *pk;
	uint32_t *stack;
	size_t sn, scap;
	size_t marks[MAX_MARKS];
	int nmarks;
	uint32_t *memo;
	size_t memo_cap, memo_n; /* slots, and those put (MEMOIZE's next index) */
	struct spp_error *err;
};

static int bad(struct up *u, const char *what)
{
	return spp_error_set(u->err, SPP_E_FORMAT, "%s: %s at byte %zu", u->where, what, u->pos);
}

static int oom(struct up *u)
{
	return spp_error_set(u->err, SPP_E_NOMEM, "%s: out of memory", u->where);
}

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t c = *cap ? *cap : 16;
	void *q;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	if (!(q = realloc(*p, c * size)))
		return -1;
	*p = q;
	*cap = c;
	return 0;
}

/* A new value of kind; NO_VAL when out of memory. */
static uint32_t val(struct up *u, enum spp_pv_kind kind)
{
	struct spp_pickle *pk = u->pk;
	size_t cap = pk->cap;

	if (pk->nv == NO_VAL - 1 || grow((void **)&pk->v, &cap, (size_t)pk->nv + 1, sizeof(*pk->v)))
		return NO_VAL;
	pk->cap = (uint32_t)cap;
	memset(&pk->v[pk->nv], 0, sizeof(pk->v[0]));
	pk->v[pk->nv].kind = kind;
	return pk->nv++;
}

static int push(struct up *u, uint32_t v)
{
	if (v == NO_VAL)
		return oom(u);
	if (grow((void **)&u->stack, &u->scap, u->sn + 1, sizeof(*u->stack)))
		return oom(u);
	u->stack[u->sn++] = v;
	return 0;
}

/* The top value, not below the last mark. */
static int pop(struct up *u, uint32_t *v)
{
	if (u->sn == 0 || (u->nmarks && u->sn <= u->marks[u->nmarks - 1]))
		return bad(u, "pop from an empty stack");
	*v = u->stack[--u->sn];
	return 0;
}

static int top(struct up *u, uint32_t *v)
{
	if (u->sn == 0 || (u->nmarks && u->sn <= u->marks[u->nmarks - 1]))
		return bad(u, "no value on the stack");
	*v = u->stack[u->sn - 1];
	return 0;
}

static int add_item(struct up *u, uint32_t to, uint32_t item)
{
	struct spp_pv *c = &u->pk->v[to];
	size_t cap = c->cap;

	if (c->n == NO_VAL - 1 || grow((void **)&c->items, &cap, (size_t)c->n + 1, sizeof(*c->items)))
		return oom(u);
	c->cap = (uint32_t)cap;
	c->items[c->n++] = item;
	return 0;
}

/* k bytes of operand, or an error. */
static int need(struct up *u, size_t k)
{
	return u->n - u->pos < k ? bad(u, "the pickle ends inside an opcode") : 0;
}

static int push_int(struct up *u, int64_t i, enum spp_pv_kind kind)
{
	uint32_t v = val(u, kind);

	if (v != NO_VAL)
		u->pk->v[v].i = i;
	return push(u, v);
}

/* A string of k bytes at the cursor. */
static int push_str(struct up *u, uint64_t k)
{
	uint32_t v;

	if (k > u->n - u->pos)
		return bad(u, "a string runs past the pickle");
	if ((v = val(u, SPP_PV_STR)) != NO_VAL) {
		u->pk->v[v].s = (const char *)u->p + u->pos;
		u->pk->v[v].len = (size_t)k;
	}
	u->pos += (size_t)k;
	return push(u, v);
}

/* Values: constants, integers, floats, strings. 1 handled, 0 not this group, < 0 error. */
static int op_value(struct up *u, unsigned char op)
{
	const unsigned char *a = u->p + u->pos;
	int rc;

	switch (op) {
	case 'N':
		return push(u, val(u, SPP_PV_NONE)) ? -1 : 1;
	case 0x88: case 0x89:
		return push_int(u, op == 0x88, SPP_PV_BOOL) ? -1 : 1;
	case 'K':
		if ((rc = need(u, 1)))
			return -1;
		u->pos += 1;
		return push_int(u, a[0], SPP_PV_INT) ? -1 : 1;
	case 'M':
		if ((rc = need(u, 2)))
			return -1;
		u->pos += 2;
		return push_int(u, (int64_t)spp_le(a, 2), SPP_PV_INT) ? -1 : 1;
	case 'J':
		if ((rc = need(u, 4)))
			return -1;
		u->pos += 4;
		return push_int(u, (int32_t)(uint32_t)spp_le(a, 4), SPP_PV_INT) ? -1 : 1;
	case 0x8a: { /* LONG1: n bytes, two's complement */
		uint64_t v;
		int k;

		if (need(u, 1) || (k = a[0], need(u, 1 + (size_t)k)))
			return -1;
		if (k > 8)
			return bad(u, "an integer wider than 64 bits"), -1;
		v = spp_le(a + 1, k);
		if (k > 0 && k < 8 && (a[k] & 0x80))
			v |= ~UINT64_C(0) << (8 * k);
		u->pos += 1 + (size_t)k;
		return push_int(u, (int64_t)v, SPP_PV_INT) ? -1 : 1;
	}
	case 'G': {
		uint64_t bits = 0;
		double d;
		uint32_t v;

		if (need(u, 8))
			return -1;
		for (int i = 0; i < 8; i++)
			bits = bits << 8 | a[i]; /* big-endian */
		memcpy(&d, &bits, sizeof(d));
		u->pos += 8;
		if ((v = val(u, SPP_PV_FLOAT)) != NO_VAL)
			u->pk->v[v].f = d;
		return push(u, v) ? -1 : 1;
	}
	case 'X': case 'T': case 'B':
		if (need(u, 4))
			return -1;
		u->pos += 4;
		return push_str(u, spp_le(a, 4)) ? -1 : 1;
	case 0x8c: case 'U': case 'C':
		if (need(u, 1))
			return -1;
		u->pos += 1;
		return push_str(u, a[0]) ? -1 : 1;
	case 0x8e: /* BINBYTES8 */
	case 0x8d: /* BINUNICODE8 */
		if (need(u, 8))
			return -1;
		u->pos += 8;
		return push_str(u, spp_le(a, 8)) ? -1 : 1;
	}
	return 0;
}

/* The values above the last mark into a new container of kind (the mark popped). */
static int from_mark(struct up *u, enum spp_pv_kind kind, uint32_t *out)
{
	size_t m;
	uint32_t c;

	if (!u->nmarks)
		return bad(u, "no mark");
	m = u->marks[--u->nmarks];
	if ((c = val(u, kind)) == NO_VAL)
		return oom(u);
	for (size_t i = m; i < u->sn; i++)
		if (add_item(u, c, u->stack[i]))
			return -1;
	u->sn = m;
	*out = c;
	return 0;
}

/* Items above the mark appended to (or set in) the container below it. */
static int extend(struct up *u, enum spp_pv_kind want)
{
	uint32_t items, c;
	const struct spp_pv *iv;

	if (from_mark(u, SPP_PV_TUPLE, &items) || top(u, &c))
		return -1;
	if (u->pk->v[c].kind != want)
		return bad(u, want == SPP_PV_LIST ? "APPENDS to a value not a list"
						  : "SETITEMS on a value not a dict");
	iv = &u->pk->v[items];
	if (want == SPP_PV_DICT && iv->n % 2)
		return bad(u, "SETITEMS of an odd number of values");
	for (uint32_t i = 0; i < iv->n; i++)
		if (add_item(u, c, u->pk->v[items].items[i]))
			return -1;
	return 0;
}

/* Containers and marks. 1 handled, 0 not this group, < 0 error. */
static int op_container(struct up *u, unsigned char op)
{
	uint32_t a, b, c;
	int k;

	switch (op) {
	case '}': case ']': case ')':
		return push(u, val(u, op == '}' ? SPP_PV_DICT : op == ']' ? SPP_PV_LIST : SPP_PV_TUPLE))
			       ? -1 : 1;
	case '(':
		if (u->nmarks == MAX_MARKS)
			return bad(u, "marks nest deeper than 4096"), -1;
		u->marks[u->nmarks++] = u->sn;
		return 1;
	case 't':
		return from_mark(u, SPP_PV_TUPLE, &c) || push(u, c) ? -1 : 1;
	case 0x85: case 0x86: case 0x87: {
		uint32_t it[3];

		k = op - 0x84;
		for (int i = k - 1; i >= 0; i--)
			if (pop(u, &it[i]))
				return -1;
		if ((c = val(u, SPP_PV_TUPLE)) == NO_VAL)
			return oom(u), -1;
		for (int i = 0; i < k; i++)
			if (add_item(u, c, it[i]))
				return -1;
		return push(u, c) ? -1 : 1;
	}
	case 'a':
		if (pop(u, &a) || top(u, &c))
			return -1;
		if (u->pk->v[c].kind != SPP_PV_LIST)
			return bad(u, "APPEND to a value not a list"), -1;
		return add_item(u, c, a) ? -1 : 1;
	case 'e':
		return extend(u, SPP_PV_LIST) ? -1 : 1;
	case 's':
		if (pop(u, &b) || pop(u, &a) || top(u, &c))
			return -1;
		if (u->pk->v[c].kind != SPP_PV_DICT)
			return bad(u, "SETITEM on a value not a dict"), -1;
		return add_item(u, c, a) || add_item(u, c, b) ? -1 : 1;
	case 'u':
		return extend(u, SPP_PV_DICT) ? -1 : 1;
	case '0':
		return pop(u, &a) ? -1 : 1;
	}
	return 0;
}

/* Memo index i: bounded by the pickle's length, grown on demand. */
static int memo_slot(struct up *u, uint64_t i, int put, uint32_t **slot)
{
	size_t old = u->memo_cap;

	if (i > u->n)
		return bad(u, "a memo index past the pickle's length");
	if (i >= u->memo_cap) {
		if (!put)
			return bad(u, "a memo index never put");
		if (grow((void **)&u->memo, &u->memo_cap, (size_t)i + 1, sizeof(*u->memo)))
			return oom(u);
		for (size_t j = old; j < u->memo_cap; j++)
			u->memo[j] = NO_VAL;
	}
	*slot = &u->memo[i];
	if (!put && **slot == NO_VAL)
		return bad(u, "a memo index never put");
	return 0;
}

static int op_memo(struct up *u, unsigned char op)
{
	const unsigned char *a = u->p + u->pos;
	uint32_t *slot = NULL, v;
	uint64_t i;

	switch (op) {
	case 'q': case 'h':
		if (need(u, 1))
			return -1;
		i = a[0], u->pos += 1;
		break;
	case 'r': case 'j':
		if (need(u, 4))
			return -1;
		i = spp_le(a, 4), u->pos += 4;
		break;
	case 0x94: /* MEMOIZE: the next index, the count of those put */
		i = u->memo_n;
		break;
	default:
		return 0;
	}
	if (op == 'h' || op == 'j')
		return memo_slot(u, i, 0, &slot) || push(u, *slot) ? -1 : 1;
	if (memo_slot(u, i, 1, &slot) || top(u, &v))
		return -1;
	u->memo_n += *slot == NO_VAL;
	*slot = v;
	return 1;
}

/* A global by its module and name: an allowed one, else refused by name. */
static int global(struct up *u, const char *mod, size_t ml, const char *name, size_t nl)
{
	uint32_t v;

	for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
		if (strlen(allowed[i].module) == ml && strncmp(allowed[i].module, mod, ml) == 0 &&
		    strlen(allowed[i].name) == nl && strncmp(allowed[i].name, name, nl) == 0) {
			if ((v = val(u, SPP_PV_GLOBAL)) != NO_VAL)
				u->pk->v[v].g = (int)i;
			return push(u, v);
		}
	return spp_error_set(u->err, SPP_E_UNSUPPORTED,
			     "%s: the global '%.*s.%.*s' is not one torch.save writes for tensors: "
			     "refused (a model file never runs code)", u->where, (int)(ml > 64 ? 64 : ml),
			     mod, (int)(nl > 64 ? 64 : nl), name);
}

/* GLOBAL's "module\nname\n" operand. */
static int op_global_text(struct up *u)
{
	const char *s = (const char *)u->p + u->pos, *nl1, *nl2;
	size_t left = u->n - u->pos;

	nl1 = memchr(s, '\n', left);
	nl2 = nl1 ? memchr(nl1 + 1, '\n', left - (size_t)(nl1 + 1 - s)) : NULL;
	if (!nl2)
		return bad(u, "GLOBAL without its two lines");
	u->pos += (size_t)(nl2 + 1 - s);
	return global(u, s, (size_t)(nl1 - s), nl1 + 1, (size_t)(nl2 - nl1 - 1));
}

static const struct spp_pv *item(const struct up *u, const struct spp_pv *t, uint32_t i)
{
	return &u->pk->v[t->items[i]];
}

/* BINPERSID: ('storage', storage class, key, location, numel), with a sixth
 * view item (None) in the legacy format -> a storage. */
static int persid(struct up *u)
{
	uint32_t id, v;
	const struct spp_pv *t, *cls;

	if (pop(u, &id))
		return -1;
	t = &u->pk->v[id];
	if (t->kind != SPP_PV_TUPLE || (t->n != 5 && t->n != 6) || item(u, t, 0)->kind != SPP_PV_STR ||
	    item(u, t, 0)->len != 7 || memcmp(item(u, t, 0)->s, "storage", 7) != 0 ||
	    (cls = item(u, t, 1))->kind != SPP_PV_GLOBAL || allowed[cls->g].kind != G_STORAGE ||
	    item(u, t, 2)->kind != SPP_PV_STR || item(u, t, 4)->kind != SPP_PV_INT ||
	    item(u, t, 4)->i < 0)
		return bad(u, "a persistent id not ('storage', type, key, location, numel)");
	if ((v = val(u, SPP_PV_STORAGE)) == NO_VAL)
		return oom(u);
	t = &u->pk->v[id];
	u->pk->v[v].dtype = allowed[item(u, t, 1)->g].dtype;
	u->pk->v[v].s = item(u, t, 2)->s;
	u->pk->v[v].len = item(u, t, 2)->len;
	u->pk->v[v].i = item(u, t, 4)->i;
	return push(u, v);
}

/* _rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks[, metadata]). */
static int rebuild_tensor(struct up *u, uint32_t args)
{
	const struct spp_pv *a = &u->pk->v[args];
	uint32_t t, st, sz, sd;

	if (a->n < 4 || item(u, a, 0)->kind != SPP_PV_STORAGE || item(u, a, 1)->kind != SPP_PV_INT ||
	    item(u, a, 2)->kind != SPP_PV_TUPLE || item(u, a, 3)->kind != SPP_PV_TUPLE)
		return bad(u, "_rebuild_tensor_v2 without (storage, offset, size, stride, ...)");
	st = a->items[0], sz = a->items[2], sd = a->items[3];
	if (u->pk->v[sz].n != u->pk->v[sd].n)
		return bad(u, "a tensor whose size and stride differ in rank");
	if ((t = val(u, SPP_PV_TENSOR)) == NO_VAL)
		return oom(u);
	u->pk->v[t].i = u->pk->v[u->pk->v[args].items[1]].i;
	if (add_item(u, t, st) || add_item(u, t, sz) || add_item(u, t, sd))
		return -1;
	return push(u, t);
}

/* REDUCE: only the calls torch.save writes. */
static int reduce(struct up *u)
{
	uint32_t args, fn, v;
	const struct spp_pv *f, *a;

	if (pop(u, &args) || pop(u, &fn))
		return -1;
	f = &u->pk->v[fn];
	a = &u->pk->v[args];
	if (f->kind != SPP_PV_GLOBAL || a->kind != SPP_PV_TUPLE)
		return bad(u, "REDUCE of a value that is not an allowed global");
	switch (allowed[f->g].kind) {
	case G_ORDERED_DICT:
		if (a->n != 0)
			return bad(u, "OrderedDict called with arguments");
		if ((v = val(u, SPP_PV_DICT)) != NO_VAL)
			u->pk->v[v].g = 1; /* an OrderedDict: BUILD may set its attributes */
		return push(u, v);
	case G_REBUILD_TENSOR:
		return rebuild_tensor(u, args);
	case G_REBUILD_PARAMETER:
		if (a->n < 1 || item(u, a, 0)->kind != SPP_PV_TENSOR)
			return bad(u, "_rebuild_parameter of a value not a tensor");
		v = a->items[0];
		return push(u, v);
	case G_STORAGE:
		break;
	}
	return spp_error_set(u->err, SPP_E_UNSUPPORTED, "%s: a call of %s.%s: refused", u->where,
			     allowed[f->g].module, allowed[f->g].name);
}

static int op_call(struct up *u, unsigned char op)
{
	uint32_t a, b;

	switch (op) {
	case 'c':
		return op_global_text(u) ? -1 : 1;
	case 0x93: /* STACK_GLOBAL */
		if (pop(u, &b) || pop(u, &a))
			return -1;
		if (u->pk->v[a].kind != SPP_PV_STR || u->pk->v[b].kind != SPP_PV_STR)
			return bad(u, "STACK_GLOBAL of values not strings"), -1;
		return global(u, u->pk->v[a].s, u->pk->v[a].len, u->pk->v[b].s, u->pk->v[b].len)
			       ? -1 : 1;
	case 'Q':
		return persid(u) ? -1 : 1;
	case 'R':
		return reduce(u) ? -1 : 1;
	case 'b':
		/* BUILD: only the attributes of an OrderedDict (a state dict's _metadata),
		 * a dict, dropped. torch.save writes no other: a tensor's state would
		 * reach __setstate__ or set_ (weights_only's BUILD let it), a dict has none */
		if (pop(u, &b) || top(u, &a))
			return -1;
		if (u->pk->v[a].kind != SPP_PV_DICT || u->pk->v[a].g != 1 ||
		    u->pk->v[b].kind != SPP_PV_DICT)
			return bad(u, "BUILD other than an OrderedDict's attributes"), -1;
		return 1;
	}
	return 0;
}

static int run(struct up *u)
{
	while (u->pos < u->n) {
		unsigned char op = u->p[u->pos++];
		int r;

		if (op == '.') {
			if (u->sn != 1 || u->nmarks)
				return bad(u, "STOP with the stack not one value");
			u->pk->root = u->stack[0];
			return 0;
		}
		if (op == 0x80 || op == 0x95) { /* PROTO n; FRAME length */
			size_t k = op == 0x80 ? 1 : 8;

			if (need(u, k))
				return -1;
			if (op == 0x80 && (u->p[u->pos] < 2 || u->p[u->pos] > 5))
				return bad(u, "a pickle protocol other than 2 to 5");
			u->pos += k;
			continue;
		}
		if ((r = op_value(u, op)) == 0 && (r = op_container(u, op)) == 0 &&
		    (r = op_memo(u, op)) == 0 && (r = op_call(u, op)) == 0) {
			u->pos--;
			return spp_error_set(u->err, SPP_E_UNSUPPORTED,
					     "%s: pickle opcode 0x%02x at byte %zu is not one torch.save "
					     "writes: refused", u->where, op, u->pos);
		}
		if (r < 0)
			return -1;
	}
	return bad(u, "the pickle ends without STOP");
}

int spp_pickle_load(const unsigned char *p, size_t n, const char *where, struct spp_pickle *out,
		    size_t *used, struct spp_error *err)
{
	struct up *u = calloc(1, sizeof(*u));
	int rc;

	memset(out, 0, sizeof(*out));
	if (!u)
		return spp_error_set(err, SPP_E_NOMEM, "%s: out of memory", where);
	u->p = p;
	u->n = n;
	u->where = where;
	u->pk = out;
	u->err = err;
	rc = run(u);
	if (rc)
		rc = err->code ? err->code : SPP_E_FORMAT;
	else if (used)
		*used = u->pos;
	free(u->stack);
	free(u->memo);
	free(u);
	return rc;
}

void spp_pickle_free(struct spp_pickle *pk)
{
	for (uint32_t i = 0; pk->v && i < pk->nv; i++)
		free(pk->v[i].items);
	free(pk->v);
	memset(pk, 0, sizeof(*pk));
}
