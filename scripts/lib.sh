# Sourced by the scripts: run a command quietly, and when it fails show what
# it said (the tail of its output) and one line naming the step.
#   quiet LABEL COMMAND [ARGS...]   returns the command's exit status

quiet() {
	local label=$1 log rc=0
	shift
	log=$(mktemp "${TMPDIR:-/tmp}/spprof-step.XXXXXX")
	"$@" >"$log" 2>&1 || rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "---- last lines of: $* ----" >&2
		tail -n 40 "$log" >&2
		echo "----" >&2
		echo "$label: failed (exit $rc): $*" >&2
	fi
	rm -f "$log"
	return "$rc"
}
