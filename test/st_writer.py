"""The one safetensors writer of the Python checks: numpy arrays to a file."""
import json
import struct

import numpy as np

DTYPES = {np.float32: "F32", np.float16: "F16", np.uint8: "U8", np.int8: "I8", np.int64: "I64"}


def write_safetensors(path, tensors):
    """tensors: name -> numpy array, written in order, C-contiguous."""
    header, blobs, off = {}, [], 0
    for name, a in tensors.items():
        raw = np.ascontiguousarray(a).tobytes()
        header[name] = {"dtype": DTYPES[a.dtype.type], "shape": list(a.shape),
                        "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
