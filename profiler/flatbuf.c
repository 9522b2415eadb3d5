/* The verified FlatBuffers reader of flatbuf.h. */
#include "profiler/flatbuf.h"
#include "base/le.h"

#include <string.h>

static void fault(struct spp_fb *f, const char *what, uint64_t at)
{
	if (!f->bad) {
		f->bad = what;
		f->bad_at = at;
	}
}

/* Whether [pos, pos + len) lies in the buffer; a fault otherwise. */
static int inside(struct spp_fb *f, uint64_t pos, uint64_t len, const char *what)
{
	if (f->bad)
		return 0;
	if (pos > f->n || len > f->n - pos) {
		fault(f, what, pos);
		return 0;
	}
	return 1;
}

static struct spp_fb_table table_at(struct spp_fb *f, uint64_t pos)
{
	struct spp_fb_table t = {0};
	int64_t so;

	if (!inside(f, pos, 4, "a table runs past the end"))
		return t;
	so = (int32_t)(uint32_t)spp_le(f->b + pos, 4);
	if (so > 0 && (uint64_t)so > pos) {
		fault(f, "a vtable lies before the file", pos);
		return t;
	}
	t.vt = pos - (uint64_t)so; /* a negative soffset wraps to pos + |so| */
	if (!inside(f, t.vt, 4, "a vtable lies outside the file"))
		return t;
	t.vtlen = (uint32_t)spp_le(f->b + t.vt, 2);
	t.tlen = (uint32_t)spp_le(f->b + t.vt + 2, 2);
	if (t.vtlen < 4 || t.vtlen % 2 || t.tlen < 4 ||
	    !inside(f, t.vt, t.vtlen, "a vtable runs past the end") ||
	    !inside(f, pos, t.tlen, "a table runs past the end")) {
		fault(f, "a malformed vtable", t.vt);
		return (struct spp_fb_table){0};
	}
	t.pos = pos;
	return t;
}

struct spp_fb_table spp_fb_root(struct spp_fb *f)
{
	if (!inside(f, 0, 8, "shorter than a FlatBuffer"))
		return (struct spp_fb_table){0};
	return table_at(f, spp_le(f->b, 4));
}

/* The position of slot's field of size bytes, 0 when absent. */
static uint64_t field(struct spp_fb *f, const struct spp_fb_table *t, int slot, int size)
{
	uint32_t o = 4 + 2 * (uint32_t)slot, fo;

	if (f->bad || !t->pos || o + 2 > t->vtlen)
		return 0;
	fo = (uint32_t)spp_le(f->b + t->vt + o, 2);
	if (!fo)
		return 0;
	if (fo + (uint32_t)size > t->tlen) {
		fault(f, "a field runs past its table", t->pos + fo);
		return 0;
	}
	return t->pos + fo;
}

uint64_t spp_fb_uint(struct spp_fb *f, const struct spp_fb_table *t, int slot, int size,
		     uint64_t dflt)
{
	uint64_t p = field(f, t, slot, size);

	return p ? spp_le(f->b + p, size) : dflt;
}

int64_t spp_fb_int(struct spp_fb *f, const struct spp_fb_table *t, int slot, int size,
		   int64_t dflt)
{
	uint64_t p = field(f, t, slot, size), v;

	if (!p)
		return dflt;
	v = spp_le(f->b + p, size);
	if (size < 8 && v >> (8 * size - 1))
		v |= ~UINT64_C(0) << (8 * size);
	return (int64_t)v;
}

/* The target of the uoffset at slot, 0 when absent. */
static uint64_t target(struct spp_fb *f, const struct spp_fb_table *t, int slot)
{
	uint64_t p = field(f, t, slot, 4), to;

	if (!p)
		return 0;
	to = p + spp_le(f->b + p, 4);
	return inside(f, to, 4, "an offset points past the end") ? to : 0;
}

struct spp_fb_table spp_fb_child(struct spp_fb *f, const struct spp_fb_table *t, int slot)
{
	uint64_t to = target(f, t, slot);

	return to ? table_at(f, to) : (struct spp_fb_table){0};
}

struct spp_fb_vec spp_fb_vector(struct spp_fb *f, const struct spp_fb_table *t, int slot,
				int size)
{
	struct spp_fb_vec v = {0, 0, (uint32_t)size};
	uint64_t to = target(f, t, slot), len;

	if (!to)
		return v;
	len = spp_le(f->b + to, 4);
	if (!inside(f, to + 4, len * (uint64_t)size, "a vector runs past the end"))
		return v;
	v.pos = to + 4;
	v.len = (uint32_t)len;
	return v;
}

struct spp_fb_table spp_fb_at(struct spp_fb *f, const struct spp_fb_vec *v, uint32_t i)
{
	uint64_t p = v->pos + 4 * (uint64_t)i, to;

	if (f->bad || i >= v->len || v->size != 4)
		return (struct spp_fb_table){0};
	to = p + spp_le(f->b + p, 4);
	return inside(f, to, 4, "an offset points past the end") ? table_at(f, to)
								  : (struct spp_fb_table){0};
}

uint64_t spp_fb_vec_uint(const struct spp_fb *f, const struct spp_fb_vec *v, uint32_t i)
{
	return i < v->len ? spp_le(f->b + v->pos + (uint64_t)i * v->size, (int)v->size) : 0;
}

int64_t spp_fb_vec_int(const struct spp_fb *f, const struct spp_fb_vec *v, uint32_t i)
{
	uint64_t x = spp_fb_vec_uint(f, v, i);

	if (v->size < 8 && x >> (8 * v->size - 1))
		x |= ~UINT64_C(0) << (8 * v->size);
	return (int64_t)x;
}

const char *spp_fb_string(struct spp_fb *f, const struct spp_fb_table *t, int slot,
			  uint32_t *len)
{
	struct spp_fb_vec v = spp_fb_vector(f, t, slot, 1);

	*len = v.len;
	return v.pos ? (const char *)f->b + v.pos : NULL;
}
