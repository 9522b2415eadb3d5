#!/bin/sh
# The layers of the source tree, held by their includes: every
# `#include "part/..."` of a source file must name a header of a part the
# file's own part may use. Fails with one line per reach.
#
#   part        its files                may include
#   base        profiler/base/           base
#   kernels     kernels/                 base, kernels
#   counters    counters/                base, counters, the public kernels
#                                        headers (kernels/kernels.h, trace.h)
#   profiler    profiler/ (not base/)    base, kernels, counters, profiler
#   reports     reports/                 base, reports, profiler's results
#   cmd         cmd/                     everything
#
# profiler's results: the headers of the result model that reports render
# (RESULTS below); the types they carry from lower parts come with them.
# usage: test/layers.sh SOURCE_ROOT
set -u
root=${1:-.}
cd "$root" || exit 2

RESULTS="profiler/analyze.h profiler/breakeven.h profiler/diagnose.h profiler/layer.h
profiler/machine.h profiler/model.h profiler/plausible.h profiler/run.h profiler/run_dense.h
profiler/static.h profiler/sweep.h profiler/measure.h"

part_of() {
	case $1 in
	profiler/base/*) echo base ;;
	kernels/*) echo kernels ;;
	counters/*) echo counters ;;
	profiler/*) echo profiler ;;
	reports/*) echo reports ;;
	cmd/*) echo cmd ;;
	*) echo other ;;
	esac
}

allowed() { # allowed FROM_PART HEADER
	to=$(part_of "$2")
	[ "$to" = other ] && return 0 # config.h and the generated headers
	[ "$to" = base ] && return 0
	case $1 in
	base) return 1 ;;
	kernels) [ "$to" = kernels ] ;;
	counters)
		[ "$to" = counters ] || [ "$2" = kernels/kernels.h ] || [ "$2" = kernels/trace.h ] ;;
	profiler) [ "$to" != reports ] && [ "$to" != cmd ] ;;
	reports)
		[ "$to" = reports ] && return 0
		for r in $RESULTS; do [ "$2" = "$r" ] && return 0; done
		return 1 ;;
	cmd) return 0 ;;
	*) return 0 ;;
	esac
}

bad=0 files=0
for f in $(find profiler kernels counters reports cmd -type f \
	\( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cpp' \) | sort); do
	files=$((files + 1))
	from=$(part_of "$f")
	for h in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
		case $h in */*) ;; *) continue ;; esac # a file's own neighbours
		if ! allowed "$from" "$h"; then
			echo "$f: $from includes $h ($(part_of "$h"))"
			bad=$((bad + 1))
		fi
	done
done
echo "layers: $files files, $bad includes across a layer"
[ "$bad" -eq 0 ]
