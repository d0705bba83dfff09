#!/usr/bin/env bash
# soak.sh - the torture test for hours: every configuration of torture.sh under every build
# variant (debug, tsan, asan), round-robin, each run with a fresh seed, until DURATION seconds
# have passed. Stops at the first failure, with its seed, its command line and its log. Prints
# a line per run, and at the end the runs, operations, seeds and hours.
#   BUILD=build DURATION=seconds SOAK_RUN=seconds-per-run (10) SOAK_VARIANTS="debug tsan asan"
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD:-build}
duration=${DURATION:-3600}
per_run=${SOAK_RUN:-10}
read -r -a variants <<<"${SOAK_VARIANTS:-debug tsan asan}"
mapfile -t configs < <(TORTURE_LIST=1 "$here/torture.sh")
export TSAN_OPTIONS="suppressions=$here/../tsan.supp halt_on_error=1 ${TSAN_OPTIONS:-}"
export ASAN_OPTIONS="detect_leaks=1 ${ASAN_OPTIONS:-}"

for v in "${variants[@]}"; do
	if [ ! -x "$build/$v/torture" ]; then
		echo "soak: $build/$v/torture not built (make soak builds it)" >&2
		exit 1
	fi
done

start=$(date +%s)
runs=0 ops=0 seeds=()
report() {
	local secs=$(($(date +%s) - start))
	printf 'soak: %d runs, %d operations, %d seeds, %d.%02d hours, %s\n' "$runs" "$ops" \
		"${#seeds[@]}" $((secs / 3600)) $((secs % 3600 * 100 / 3600)) "$1"
}
while [ $(($(date +%s) - start)) -lt "$duration" ]; do
	for c in "${configs[@]}"; do
		for v in "${variants[@]}"; do
			[ $(($(date +%s) - start)) -lt "$duration" ] || break 3
			# A fresh seed from the kernel, printed so that the run can be repeated.
			seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
			# shellcheck disable=SC2086
			out=$("$build/$v/torture" --seed "$seed" --duration "$per_run" $c 2>&1)
			rc=$?
			runs=$((runs + 1))
			seeds+=("$seed")
			n=$(printf '%s\n' "$out" | sed -n 's/^ok 1 - \([0-9]*\) operations.*/\1/p')
			ops=$((ops + ${n:-0}))
			if [ $rc -ne 0 ]; then
				log="$build/soak-failed-$v-$seed.log"
				printf '%s\n' "$out" | "$here/symbolize.sh" "$build/$v/torture" >"$log"
				echo "soak: FAILED: $v, exit $rc, seed $seed; log in $log"
				echo "soak: repeat with: $build/$v/torture --seed $seed --duration $per_run $c"
				grep -E '^not ok|lruvec:|ERROR|WARNING' "$log" | head -n 20
				report "1 failure"
				exit 1
			fi
			echo "soak: ok $runs $v seed $seed ${n:-0} operations: $c"
		done
	done
done
report "0 failures"
