/* A string-keyed open-addressing hash map for the names of a graph scope. */
#include "profiler/onnx/onnx_internal.h"

#include <stdlib.h>
#include <string.h>

/* FNV-1a: names are short; any decent spread will do */
static size_t hash(const char *s)
{
	uint64_t h = UINT64_C(1469598103934665603);

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
	return (size_t)h;
}

static struct onnx_map_entry *find(const struct onnx_map *map, const char *key)
{
	size_t i = hash(key) & (map->cap - 1);

	while (map->slots[i].key && strcmp(map->slots[i].key, key) != 0)
		i = (i + 1) & (map->cap - 1);
	return &map->slots[i];
}

static int grow(struct onnx_map *map)
{
	struct onnx_map old = *map;
	size_t cap = old.cap ? old.cap * 2 : 16;

	map->slots = calloc(cap, sizeof(*map->slots));
	if (!map->slots) {
		map->slots = old.slots;
		return -1;
	}
	map->cap = cap;
	for (size_t i = 0; i < old.cap; i++)
		if (old.slots[i].key)
			*find(map, old.slots[i].key) = old.slots[i];
	free(old.slots);
	return 0;
}

int onnx_map_put(struct onnx_map *map, const char *key, int index, const void *ptr)
{
	struct onnx_map_entry *e;

	/* at most half full, so probes stay short and always end */
	if ((map->count + 1) * 2 > map->cap && grow(map))
		return -1;
	e = find(map, key);
	if (!e->key)
		map->count++;
	*e = (struct onnx_map_entry){.key = key, .index = index, .ptr = ptr};
	return 0;
}

const struct onnx_map_entry *onnx_map_get(const struct onnx_map *map, const char *key)
{
	const struct onnx_map_entry *e;

	if (!map->cap || !key)
		return NULL;
	e = find(map, key);
	return e->key ? e : NULL;
}

void onnx_map_free(struct onnx_map *map)
{
	free(map->slots);
	*map = (struct onnx_map){0};
}
