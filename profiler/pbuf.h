/*
 * Protobuf files decoded safely (ONNX, Core ML): the wire format checked
 * first (pbuf_wire.c: protobuf-c recurses without a depth limit and names
 * no byte), then decoded by protobuf-c into chunks the model owns, so the
 * decoded message lives as long as the model and tensors may point into
 * its bytes fields (copied once by protobuf-c; nothing is copied after).
 */
#ifndef SPP_PROFILER_PBUF_H
#define SPP_PROFILER_PBUF_H

#include <protobuf-c/protobuf-c.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "profiler/model.h"

/* the deepest nesting of messages a file may have */
#define SPP_PB_MAX_NESTING 100
/* protobuf's own limit on a message */
#define SPP_PB_MAX_BYTES (UINT64_C(2147483647))

/*
 * Check buf[0, size) as a message of type d: every field of a known number
 * with a wire type its declared type allows (packed repeated scalars
 * included), unknown fields well formed, nesting at most
 * SPP_PB_MAX_NESTING. Returns 0 or SPP_E_FORMAT "'file': ... at byte N".
 */
int spp_pb_wire_check(const unsigned char *buf, size_t size, const ProtobufCMessageDescriptor *d,
		      const char *file, struct spp_error *err);

/*
 * buf[0, size) checked and decoded as a message of type d into memory m
 * owns (freed with the model, never with protobuf-c's free). NULL on
 * failure, err naming file: SPP_E_FORMAT (over SPP_PB_MAX_BYTES, a wire
 * fault, a failed decode) or SPP_E_NOMEM.
 */
ProtobufCMessage *spp_pb_decode(const ProtobufCMessageDescriptor *d, const unsigned char *buf,
				uint64_t size, const char *file, struct spp_model *m,
				struct spp_error *err);

#endif
