#!/usr/bin/env bash
# Runs the torture test once per lock design and backend, as TAP (one test point per run).
# Every run also races the anonymous memory side: shared address spaces on both nodes (faults,
# brk, mmap/munmap, madvise, lazyfree reclaim), migration and address space churn; compaction
# (direct, of memcgs and by kcompactd), huge page faults and splits, lv_split_folio(), and
# mlock, munlock and mlockall, the first of each made to happen in every run (the torture
# binary's opener); swap (one or two in-memory devices, address spaces outgrowing their memcgs'
# limits, MADV_PAGEOUT and swap-ins, swap limit changes, swapoff and swapon of the second
# device), its first swap-out, swap-in, read-ahead and swapoff made to happen in every run too,
# with the swappiness and read-ahead window (page-cluster) varying across the configurations;
# one configuration with large folios waiting in the batches like small ones (--batch-large,
# cfg.batch_large), the rest with the default that never leaves one there; one configuration's
# scan costs counted off the LRU lock (--scan-cost vmstat); each batch policy (--batch-policy,
# cfg.batch_policy: arrival, sorted, per-lruvec) in two configurations or more, of two lock
# designs; three configurations reading files ahead (--readahead, cfg.readahead_pages: 8, 32,
# 64 pages); and every run has the lock watchdog armed (a lock held or waited for over 10 s ends
# the run with exit 3 and a report).
#   BUILD=build VARIANT=debug|tsan|asan TORTURE_DURATION=seconds TORTURE_SEED=n
#   TORTURE_RUNS=n: run every config n times, with seeds TORTURE_SEED, TORTURE_SEED+1, ...
#   TORTURE_WAIT=seconds: how much longer than TORTURE_DURATION a run may go on for a racing
#   path it requires that has not run yet (the torture binary's --wait; 60 by default).
#   TORTURE_LIST=1: print the configurations, one a line, and run nothing (for soak.sh).
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=${BUILD:-build}
variant=${VARIANT:-debug}
duration=${TORTURE_DURATION:-3}
seed=${TORTURE_SEED:-$RANDOM}
runs=${TORTURE_RUNS:-1}
wait_opt=${TORTURE_WAIT:+--wait $TORTURE_WAIT}
bin=$build/$variant/torture
export TSAN_OPTIONS="suppressions=$here/../tsan.supp halt_on_error=1 ${TSAN_OPTIONS:-}"
export ASAN_OPTIONS="detect_leaks=1 ${ASAN_OPTIONS:-}"

# More threads than the 2 cores in every run: the oversubscribed case is the normal one.
configs=(
	"--lock lruvec --threads 8 --folio-order 4 --thp always --batch-large --batch-policy per-lruvec"
	"--lock node --threads 8 --backend adaptive --swappiness 200 --page-cluster 1 --batch-policy sorted --readahead 32"
	"--lock nomemcg --threads 8 --thp always --thp-defrag always --readahead 8"
	"--lock lruvec --threads 6 --disable rcu --swappiness 0 --batch-policy sorted --readahead 64"
	"--lock lruvec --threads 16 --backend spin --page-cluster 5 --scan-cost vmstat --batch-policy per-lruvec"
	"--lock node --threads 8 --backend mutex --batch 15 --thp-defrag defer --swappiness 100 --batch-policy per-lruvec"
	"--lock lruvec --threads 4 --backend adaptive --batch 1 --slots 7 --disable rcu-expedited --folio-order 2"
)

if [ -n "${TORTURE_LIST:-}" ]; then
	printf '%s\n' "${configs[@]}"
	exit 0
fi
echo "1..$((${#configs[@]} * runs))"
if [ ! -x "$bin" ]; then
	echo "Bail out! $bin not built"
	exit 1
fi
n=0 fail=0
for ((run = 0; run < runs; run++)); do
	s=$((seed + run))
	for c in "${configs[@]}"; do
		n=$((n + 1))
		# shellcheck disable=SC2086
		out=$("$bin" --seed "$s" --duration "$duration" $wait_opt $c 2>&1)
		rc=$?
		summary=$(printf '%s\n' "$out" | sed -n 's/^ok 1 - //p')
		if [ $rc -eq 0 ]; then
			echo "ok $n - torture $c (seed $s): $summary"
		else
			fail=1
			# A lock watchdog report's frames get their functions and lines.
			out=$(printf '%s\n' "$out" | "$here/symbolize.sh" "$bin")
			# prove shows diagnostics only with -v: keep the report in a file as well.
			log="$build/torture-failed-$variant-$s-$n.log"
			printf '%s\n' "$out" >"$log" 2>/dev/null || log="(not saved)"
			echo "not ok $n - torture $c (seed $s, exit $rc; output in $log)"
			printf '%s\n' "$out" | sed 's/^/# /'
		fi
	done
done
exit $fail
