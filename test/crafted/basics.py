"""Defences of the first campaign, kept as crafted cases: a FIFO given as the
model, a safetensors header longer than its file, a header length that is
a text file's first 8 bytes."""
import os
import struct

from crafted_check import Case


def cases(d, spprof):
    out = []
    fifo = os.path.join(d, "fifo.safetensors")
    os.mkfifo(fifo)
    out.append(Case("basics: a FIFO as the model", ["analyze", "fifo.safetensors", "--static"],
                    says=["FIFO"]))
    with open(os.path.join(d, "long_header.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", 1 << 40) + b"{}")
    out.append(Case("basics: header past the file", ["analyze", "long_header.safetensors", "--static"]))
    with open(os.path.join(d, "text.safetensors"), "wb") as f:
        f.write(b"root:x:0:0:root:/root:/bin/bash\n")
    out.append(Case("basics: text as safetensors", ["analyze", "text.safetensors", "--static"]))
    return out
