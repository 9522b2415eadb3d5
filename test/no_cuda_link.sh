#!/bin/sh
# The binary links no CUDA library (kernels/cuda/module.h): cudart, cuBLAS,
# cuSPARSE, CUPTI and nvperf are loaded with the CUDA modules only when a
# CUDA backend is asked for, so that `spprof --version` or a static
# analysis maps none of them. Fails naming each DT_NEEDED entry that is one.
#   usage: test/no_cuda_link.sh BINARY...
set -u
command -v readelf >/dev/null 2>&1 || { echo "readelf not found (binutils)"; exit 77; }
bad=0
for bin in "$@"; do
	needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p') || exit 1
	[ -n "$needed" ] || { echo "$bin: no DT_NEEDED read"; exit 1; }
	for lib in $needed; do
		case $lib in
		*cuda* | *cublas* | *cusparse* | *cupti* | *nvperf* | *nvJitLink* | *nvrtc*)
			echo "$bin: links $lib"
			bad=1 ;;
		esac
	done
done
[ "$bad" = 0 ] && echo "no CUDA library linked: $*"
exit "$bad"
