#!/bin/sh
# The layers of the source tree, held to meson.build's table `layers`
# (given here as PART=USES,... arguments, the one table): a part may use
# itself and the parts it declares. A file's part is the folder it is in
# (base/, kernels/, counters/, reports/), or for profiler/, which is six
# parts, the part profiler/meson.build lists it in (given as FILE:PART
# arguments; a file of profiler/ in no part is a fault too). Two checks,
# each failing with one line per reach:
#
#   symbols   every symbol a part's archive (libspp_PART.a) leaves
#             undefined and another part's archive defines must be of a
#             part it declares (a direct reach; what a declared part
#             reaches in turn is that part's own row)
#   includes  every `#include "part/..."` of a part's source files must
#             name a header of a part it declares, or its own
#
# One refinement of the includes: counters includes of kernels its public
# headers only (kernels/kernels.h, kernels/trace.h). cmd, above every
# part, may include them all; config.h and generated headers are no part's.
# usage: test/layers.sh SOURCE_ROOT BUILD_ROOT PART=USES... FILE:PART...
set -u
root=$1 build=$2
shift 2
cd "$root" || exit 2

tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

PARTS="" ROWS=""
: >"$tmp/map"
for row in "$@"; do
	case $row in
	*=*) PARTS="$PARTS ${row%%=*}" ROWS="$ROWS $row" ;;
	*:*) echo "${row%%:*} ${row#*:}" >>"$tmp/map" ;;
	esac
done
uses_of() { # the parts PART declares, space separated
	for row in $ROWS; do
		[ "${row%%=*}" = "$1" ] && echo "${row#*=}" | tr ',' ' ' && return
	done
}

declares() { # declares PART OTHER: PART may use OTHER
	[ "$1" = "$2" ] && return 0
	for u in $(uses_of "$1"); do
		[ "$u" = "$2" ] && return 0
	done
	return 1
}

part_of() {
	top=${1%%/*}
	if [ "$top" = profiler ]; then
		p=$(awk -v f="$1" '$1 == f { print $2; exit }' "$tmp/map")
		if [ -n "$p" ]; then
			echo "$p"
		elif [ -e "$1" ]; then
			echo unlisted # in no part of profiler/meson.build
		else
			echo other # generated in the build
		fi
		return
	fi
	for p in $PARTS cmd; do
		[ "$p" = "$top" ] && echo "$p" && return
	done
	echo other
}

bad=0

# symbols: from each archive, what it defines and what it leaves undefined
for p in $PARTS; do
	a="$build/libspp_$p.a"
	if [ ! -f "$a" ]; then
		echo "layers: $a not built"
		exit 2
	fi
	nm -g --defined-only "$a" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u >"$tmp/def.$p"
	nm -u "$a" 2>/dev/null | awk 'NF >= 2 { print $NF }' | sort -u >"$tmp/und.$p"
done
nsym=0
for p in $PARTS; do
	for q in $PARTS; do
		declares "$p" "$q" && continue
		for s in $(comm -12 "$tmp/und.$p" "$tmp/def.$q"); do
			echo "libspp_$p.a: $p uses $s of $q, a part it does not declare"
			bad=$((bad + 1))
		done
	done
	nsym=$((nsym + $(wc -l <"$tmp/und.$p")))
done

refined() { # refined FROM HEADER: the include is one of the refinements' exceptions
	to=$(part_of "$2")
	case $1:$to in
	counters:kernels) [ "$2" = kernels/kernels.h ] || [ "$2" = kernels/trace.h ] ;;
	*) return 0 ;;
	esac
}

files=0
for f in $(find base kernels counters profiler reports cmd -type f \
	\( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cpp' \) | sort); do
	files=$((files + 1))
	from=$(part_of "$f")
	if [ "$from" = unlisted ]; then
		echo "$f: in no part of profiler/meson.build"
		bad=$((bad + 1))
		continue
	fi
	for h in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
		case $h in */*) ;; *) continue ;; esac # a file's own neighbours
		to=$(part_of "$h")
		[ "$to" = other ] && continue
		[ "$from" = cmd ] && continue
		if ! declares "$from" "$to" || ! refined "$from" "$h"; then
			echo "$f: $from includes $h ($to)"
			bad=$((bad + 1))
		fi
	done
done
echo "layers: $files files, $nsym undefined symbols of $(echo $PARTS | wc -w) archives," \
	"$bad reaches across a layer"
[ "$bad" -eq 0 ]
