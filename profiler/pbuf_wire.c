/*
 * The protobuf wire format, checked before protobuf-c decodes it (ONNX,
 * Core ML): protobuf-c
 * recurses without a depth limit and reports no position, and a length that
 * does not fit 32 bits would be truncated by it. Walking with the generated
 * descriptors, every field of a known number must have a wire type its
 * declared type allows (packed repeated scalars included); unknown fields
 * only need to be well formed.
 */
#include "profiler/pbuf.h"

#include <stdarg.h>

#include <inttypes.h>
#include <stdint.h>

/* A varint of at most max bytes at buf[*pos, size); 0 or -1. */
static int varint(const unsigned char *buf, size_t size, size_t *pos, int max,
		  uint64_t *out)
{
	uint64_t v = 0;

	for (int i = 0; i < max; i++) {
		if (*pos >= size)
			return -1;
		unsigned char b = buf[(*pos)++];
		v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			*out = v;
			return 0;
		}
	}
	return -1;
}

/* Whether p[0, n) is a whole number of varints (a packed repeated field). */
static int packed_varints(const unsigned char *p, size_t n)
{
	size_t pos = 0;
	uint64_t v;

	while (pos < n)
		if (varint(p, n, &pos, 10, &v))
			return 0;
	return 1;
}

static int is_varint_type(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_BOOL:
	case PROTOBUF_C_TYPE_ENUM:
		return 1;
	default:
		return 0;
	}
}

/* Bytes of a fixed-width scalar type, 0 for others. */
static int fixed_size(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_FLOAT:
	case PROTOBUF_C_TYPE_FIXED32:
	case PROTOBUF_C_TYPE_SFIXED32:
		return 4;
	case PROTOBUF_C_TYPE_DOUBLE:
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_SFIXED64:
		return 8;
	default:
		return 0;
	}
}

struct wire {
	const char *file;
	struct spp_error *err;
};

static int fault(const struct wire *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int fault(const struct wire *c, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = spp_error_vfile(c->err, SPP_E_FORMAT, c->file, fmt, ap);
	va_end(ap);
	return rc;
}

static int walk(const struct wire *c, const unsigned char *buf, size_t size,
		size_t origin, const ProtobufCMessageDescriptor *d, int depth)
{
	size_t pos = 0;

	if (depth > SPP_PB_MAX_NESTING)
		return fault(c, "messages nest deeper than %d at byte %zu (%s)",
				  SPP_PB_MAX_NESTING, origin, d->short_name);
	while (pos < size) {
		size_t at = origin + pos;
		const ProtobufCFieldDescriptor *f;
		uint64_t tag, len = 0;
		unsigned field, wt;
		size_t body;

		if (varint(buf, size, &pos, 5, &tag) || tag >> 32)
			return fault(c, "truncated or overlong field tag at byte %zu", at);
		field = (unsigned)(tag >> 3);
		wt = (unsigned)(tag & 7);
		if (field == 0 || field > 536870911u)
			return fault(c, "field number %u at byte %zu is out of range",
					  field, at);
		body = pos;
		switch (wt) {
		case 0:
			if (varint(buf, size, &pos, 10, &len))
				return fault(c, "truncated varint of field %u at byte %zu",
						  field, at);
			break;
		case 1:
		case 5:
			len = wt == 1 ? 8 : 4;
			if (size - pos < len)
				return fault(c, "field %u at byte %zu runs past the end of its message",
						  field, at);
			pos += (size_t)len;
			break;
		case 2:
			if (varint(buf, size, &pos, 5, &len) || len > INT32_MAX)
				return fault(c, "bad length of field %u at byte %zu", field, at);
			if (size - pos < len)
				return fault(c, "field %u at byte %zu holds %" PRIu64
						  " bytes, only %zu remain in its message",
						  field, at, len, size - pos);
			body = pos;
			pos += (size_t)len;
			break;
		default:
			return fault(c, "field %u at byte %zu has wire type %u (groups and "
					  "undefined types are not protobuf 3)",
					  field, at, wt);
		}
		f = protobuf_c_message_descriptor_get_field(d, field);
		if (!f)
			continue; /* unknown fields are skipped, as protobuf does */
		int repeated = f->label == PROTOBUF_C_LABEL_REPEATED, ok;
		int fs = fixed_size(f->type);
		if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
			if (wt != 2)
				ok = 0;
			else {
				int rc = walk(c, buf + body, (size_t)len, origin + body,
					      f->descriptor, depth + 1);
				if (rc)
					return rc;
				ok = 1;
			}
		} else if (f->type == PROTOBUF_C_TYPE_STRING ||
			   f->type == PROTOBUF_C_TYPE_BYTES) {
			ok = wt == 2;
		} else if (is_varint_type(f->type)) {
			ok = wt == 0 || (wt == 2 && repeated &&
					 packed_varints(buf + body, (size_t)len));
		} else {
			ok = (fs == 4 && wt == 5) || (fs == 8 && wt == 1) ||
			     (wt == 2 && repeated && fs && len % (uint64_t)fs == 0);
		}
		if (!ok)
			return fault(c, "%s.%s (field %u) at byte %zu has wire type %u, "
					  "which its type does not allow",
					  d->short_name, f->name, field, at, wt);
	}
	return SPP_OK;
}

int spp_pb_wire_check(const unsigned char *buf, size_t size, const ProtobufCMessageDescriptor *d,
		      const char *file, struct spp_error *err)
{
	struct wire c = {file, err};

	return walk(&c, buf, size, 0, d, 1);
}
