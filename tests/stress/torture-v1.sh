#!/usr/bin/env bash
# The first version, reproduced: the torture test must catch LV_PROTOCOL_V1, the per-memcg lock
# of August 2019 (a folio's lruvec looked up once, never re-checked; compaction's v1 isolation
# order), and must pass the same runs with the real protocol. As TAP, one test point per run:
#  - for each of 5 seeds, a run with --protocol v1 must FAIL within 60 s, through the lock
#    watchdog (exit 3), a debug assertion or lockdep-lite (SIGABRT), or a failed check of the
#    run's own (lv_check, a counted invariant violation: exit 1); the point says which and
#    quotes it. A run that passes, runs past 60 s, hangs (killed at 90 s) or crashes otherwise
#    is "not ok";
#  - the same seeds with --protocol pin must pass;
#  - memcg disabled (cgroup_disable=memory, where v1 froze at boot) with compaction on must
#    pass.
# Compaction, kcompactd, huge page faults and splits, mlock and swap run, and are required, in
# every run (see tests/stress/torture.c). Every run swaps from its start: before any thread
# starts, the torture binary pages a range out to swap and reads it back, and says so on a
# "# swapping" line; a v1 run counts as caught only if that line shows pages swapped out, so
# that it was caught under swapping load.
#   BUILD=build VARIANT=debug|tsan|asan TORTURE_SEED=n (the first of the 5 seeds)
#   TORTURE_DURATION=seconds (of each passing run; 5 by default)
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD:-build}
variant=${VARIANT:-debug}
duration=${TORTURE_DURATION:-5}
seed=${TORTURE_SEED:-1}
bin=$build/$variant/torture
limit=60 # seconds a v1 run may take to be caught
export TSAN_OPTIONS="suppressions=$here/../tsan.supp halt_on_error=1 ${TSAN_OPTIONS:-}"
export ASAN_OPTIONS="detect_leaks=1 ${ASAN_OPTIONS:-}"

# More threads than the 2 cores, huge pages in every region that can hold one.
config="--lock lruvec --threads 8 --thp always"
seeds=$(seq "$seed" $((seed + 4)))

echo "1..11"
if [ ! -x "$bin" ]; then
	echo "Bail out! $bin not built"
	exit 1
fi
n=0 fail=0

# save_log NAME OUTPUT - keep a run's output (prove shows diagnostics only with -v), with the
# functions and lines of a lock watchdog report's frames.
save_log() {
	local log="$build/torture-v1-$variant-$1.log"

	printf '%s\n' "$2" | "$here/symbolize.sh" "$bin" >"$log" 2>/dev/null || log="(not saved)"
	echo "$log"
}

# swapped OUTPUT - the pages the run swapped out before its threads started, or nothing.
swapped() {
	printf '%s\n' "$1" |
		sed -n 's/^# swapping before the threads start: \([0-9]*\) pages out.*/\1/p'
}

# caught_by RC OUTPUT - how a failed run was caught, or nothing if it was not.
caught_by() {
	local rc=$1 out=$2 line

	case $rc in
	3)
		line=$(printf '%s\n' "$out" | grep -m1 'lruvec: lock watchdog:')
		echo "the lock watchdog: ${line:-exit 3}"
		;;
	134)
		line=$(printf '%s\n' "$out" | grep -m1 -E 'lruvec: (BUG at|lockdep:)')
		case $line in
		*lockdep:*) echo "lockdep-lite: $line" ;;
		*BUG*) echo "a debug assertion: $line" ;;
		*)
			# The torture test's own checks say why on a "# " line, then abort().
			line=$(printf '%s\n' "$out" | grep -E '^# ' |
				grep -m1 -v -E '^# (seed=|swapping|waiting for)')
			echo "the run's checks: ${line:-an abort without a message}"
			;;
		esac
		;;
	1)
		line=$(printf '%s\n' "$out" | grep -m1 '^not ok')
		[ -n "$line" ] && echo "the run's checks: $line"
		;;
	esac
}

for s in $seeds; do
	n=$((n + 1))
	start=$(date +%s%N)
	# shellcheck disable=SC2086
	out=$(timeout -s KILL $((limit + 30)) "$bin" --seed "$s" --duration "$limit" --wait 0 \
		--protocol v1 $config 2>&1)
	rc=$?
	secs=$((($(date +%s%N) - start) / 1000000))
	took=$(printf '%d.%03d s' $((secs / 1000)) $((secs % 1000)))
	how=$(caught_by "$rc" "$out")
	out_pages=$(swapped "$out")
	log=$(save_log "v1-$s" "$out")
	if [ -n "$how" ] && [ "${out_pages:-0}" -gt 0 ] && [ "$secs" -le $((limit * 1000)) ]; then
		echo "ok $n - v1 caught (seed $s) in $took by $how, swapping since its start" \
			"($out_pages pages out before the threads) (log: $log)"
	else
		fail=1
		case $rc in
		0) why="it passed" ;;
		137) why="it hung until killed: the watchdog did not end it" ;;
		*) why="exit $rc${how:+, caught by $how}" ;;
		esac
		[ "${out_pages:-0}" -gt 0 ] ||
			why="$why; it never swapped (no swap-out before its threads)"
		echo "not ok $n - v1 not caught within ${limit} s (seed $s): $why after $took; output in $log"
		printf '%s\n' "$out" | tail -40 | sed 's/^/# /'
	fi
done

# run_pass DESCRIPTION ARGS... - a run of the real protocol that must pass.
run_pass() {
	local what=$1 out rc summary

	shift
	n=$((n + 1))
	out=$("$bin" --duration "$duration" "$@" 2>&1)
	rc=$?
	summary=$(printf '%s\n' "$out" | sed -n 's/^ok 1 - //p' | cut -c1-160)
	if [ $rc -eq 0 ]; then
		echo "ok $n - $what passes: $summary"
	else
		fail=1
		echo "not ok $n - $what fails (exit $rc); output in $(save_log "pass-$n" "$out")"
		printf '%s\n' "$out" | tail -40 | sed 's/^/# /'
	fi
}

for s in $seeds; do
	# shellcheck disable=SC2086
	run_pass "the real protocol (seed $s)" --seed "$s" --protocol pin $config
done
run_pass "memcg disabled with compaction on (seed $seed)" --seed "$seed" --protocol pin \
	--lock nomemcg --threads 8 --thp always
exit $fail
