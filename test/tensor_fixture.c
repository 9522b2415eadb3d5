#include "test/tensor_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

void tensor_make_named(struct spp_tensor *t, const char *name, enum spp_dtype dt,
		       int ndim, const int64_t *shape, const void *data)
{
	memset(t, 0, sizeof(*t));
	t->name = (char *)name;
	t->dtype = dt;
	t->ndim = ndim;
	t->numel = 1;
	for (int d = 0; d < ndim; d++) {
		t->shape[d] = shape[d];
		t->numel *= (uint64_t)shape[d];
	}
	assert_int_equal(spp_dtype_nbytes(dt, t->numel, &t->nbytes), 0);
	t->data = data;
}
