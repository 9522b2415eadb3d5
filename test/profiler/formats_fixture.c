#include "test/profiler/formats_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "test/harness.h"

static char *scratch;

void bytes_put(struct bytes *b, const void *data, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 64;
		b->p = realloc(b->p, b->cap);
		assert_non_null(b->p);
	}
	if (n)
		memcpy(b->p + b->n, data, n);
	b->n += n;
}

void bytes_u8(struct bytes *b, uint8_t v)
{
	bytes_put(b, &v, 1);
}

void bytes_u16(struct bytes *b, uint16_t v)
{
	unsigned char x[2] = {(unsigned char)v, (unsigned char)(v >> 8)};
	bytes_put(b, x, 2);
}

void bytes_u32(struct bytes *b, uint32_t v)
{
	bytes_u16(b, (uint16_t)v);
	bytes_u16(b, (uint16_t)(v >> 16));
}

void bytes_u64(struct bytes *b, uint64_t v)
{
	bytes_u32(b, (uint32_t)v);
	bytes_u32(b, (uint32_t)(v >> 32));
}

void bytes_pad(struct bytes *b, size_t align)
{
	while (b->n % align)
		bytes_u8(b, 0);
}

void bytes_free(struct bytes *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

char *fx_path(const char *name)
{
	char *p;

	if (!scratch) {
		scratch = harness_tmpdir();
		assert_non_null(scratch);
	}
	p = harness_join(scratch, name);
	assert_non_null(p);
	return p;
}

void fx_cleanup(void)
{
	if (scratch)
		harness_rmtree(scratch);
	scratch = NULL;
}

char *fx_write(const char *name, const struct bytes *b)
{
	char *p = fx_path(name);

	assert_int_equal(harness_write(p, b->p, b->n), 0);
	return p;
}

struct spp_analysis *fx_analyze(const char *path)
{
	struct spp_analyze_opts o;
	struct spp_analysis *a = NULL;
	struct spp_error err = {0};
	int rc;

	spp_analyze_opts_init(&o);
	o.static_only = 1;
	rc = spp_analyze_run(path, &o, &a, &err);
	if (rc)
		fail_msg("analyze '%s': %s", path, err.msg);
	return a;
}

int fx_layer(const struct spp_analysis *a, const char *name)
{
	for (int i = 0; i < a->nlayers; i++)
		if (strcmp(a->layers[i].name, name) == 0)
			return i;
	fail_msg("no layer '%s'", name);
	return -1;
}

void fx_expect_bad(const char *path, const char *want)
{
	const char *args[] = {"analyze", path, "--static", NULL};
	struct harness_run r;

	assert_int_equal(harness_spprof(&r, args), 0);
	if (r.status != 2 || harness_count_lines(r.err) != 1 || !strstr(r.err, path) ||
	    (want && !strstr(r.err, want)) || r.out_len != 0)
		fail_msg("'%s': status %d, stdout %zu bytes, stderr: %s (want '%s')", path,
			 r.status, r.out_len, r.err, want ? want : "");
	harness_run_free(&r);
}
