/* Decoding protobuf files into memory the model owns (pbuf.h). */
#include "profiler/pbuf.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>

/*
 * The decoded message is allocated from chunks that the model owns, so one
 * spp_model_own() per chunk frees it all; protobuf-c's own frees (on a
 * failed decode) are no-ops, the chunks go at once.
 */
#define CHUNK (size_t)(1 << 20)

struct chunk {
	struct chunk *next;
	size_t used, size;
	_Alignas(16) unsigned char data[];
};

struct arena {
	struct chunk *head;  /* the chunk being filled */
	struct chunk *big;   /* allocations of their own (raw_data) */
};

static void *arena_alloc(void *p, size_t size)
{
	struct arena *a = p;
	struct chunk *k;

	if (size > SIZE_MAX / 2)
		return NULL; /* rounding up, or the chunk's header, would wrap */
	size = (size + 15) & ~(size_t)15;
	if (size > CHUNK / 4) {
		k = malloc(sizeof(*k) + size);
		if (!k)
			return NULL;
		k->next = a->big;
		k->used = k->size = size;
		a->big = k;
		return k->data;
	}
	if (!a->head || a->head->size - a->head->used < size) {
		k = malloc(sizeof(*k) + CHUNK);
		if (!k)
			return NULL;
		k->next = a->head;
		k->used = 0;
		k->size = CHUNK;
		a->head = k;
	}
	k = a->head;
	k->used += size;
	return k->data + k->used - size;
}

static void arena_free(void *p, void *ptr)
{
	(void)p;
	(void)ptr;
}

static void arena_release(struct arena *a)
{
	struct chunk *lists[2] = {a->head, a->big};

	for (int i = 0; i < 2; i++)
		while (lists[i]) {
			struct chunk *next = lists[i]->next;
			free(lists[i]);
			lists[i] = next;
		}
	a->head = a->big = NULL;
}

/* Hand every chunk to the model; the arena is empty afterwards. */
static int arena_give(struct arena *a, struct spp_model *m, struct spp_error *err)
{
	struct chunk **lists[2] = {&a->head, &a->big};

	for (int i = 0; i < 2; i++)
		while (*lists[i]) {
			struct chunk *k = *lists[i];
			*lists[i] = k->next;
			if (spp_model_own(m, k, err)) {
				arena_release(a);
				return SPP_E_NOMEM;
			}
		}
	return SPP_OK;
}

ProtobufCMessage *spp_pb_decode(const ProtobufCMessageDescriptor *d, const unsigned char *buf,
				uint64_t size, const char *file, struct spp_model *m,
				struct spp_error *err)
{
	struct arena a = {0};
	ProtobufCAllocator alloc = {arena_alloc, arena_free, &a};
	ProtobufCMessage *msg;

	if (size > SPP_PB_MAX_BYTES) {
		spp_error_format(err, file, "%" PRIu64 " bytes exceed protobuf's 2 GiB limit", size);
		return NULL;
	}
	if (spp_pb_wire_check(buf, (size_t)size, d, file, err))
		return NULL;
	msg = protobuf_c_message_unpack(d, &alloc, (size_t)size, buf);
	if (!msg) {
		arena_release(&a);
		spp_error_format(err, file, "protobuf decoding failed");
		return NULL;
	}
	return arena_give(&a, m, err) ? NULL : msg;
}
