#!/bin/sh
# run.sh HARNESS SECONDS BUILD - run a libFuzzer harness for SECONDS on one core, its new
# inputs kept in BUILD/<harness>-corpus (seeded from tests/fuzz/corpus, or corpus-race for
# fuzz_race), a crash saved as BUILD/crash-*; the whole log goes to BUILD/<harness>.log and
# the last line says
#   fuzz: N execs in S s = R exec/s, cov E edges, corpus C
# Leaks are looked for once, when the run ends: the machines live across inputs, and what an
# input frees after a grace period would otherwise count as its leak (the replay under
# `make asan` checks each corpus input alone). Entropic scheduling is off: its bookkeeping
# per input cost more than the inputs.
set -u
harness=$1 seconds=$2 build=$3
name=$(basename "$harness")
log=$build/$name.log
seeds=tests/fuzz/corpus
[ "$name" = fuzz_race ] && seeds=tests/fuzz/corpus-race
mkdir -p "$build/$name-corpus"
"$harness" -max_total_time="$seconds" -max_len=512 -detect_leaks=0 -entropic=0 \
	-print_final_stats=1 -artifact_prefix="$build/" "$build/$name-corpus" "$seeds" \
	>"$log" 2>&1
status=$?
grep -v -e '^#[0-9]*	\(NEW\|REDUCE\)' "$log" | grep -v -e '^stat::' | tail -n 20
awk -v name="$name" '
	/^stat::number_of_executed_units:/ { n = $2 }
	/^stat::average_exec_per_sec:/ { r = $2 }
	/^Done [0-9]+ runs in/ { s = $5 }
	/ cov: / { for (i = 1; i < NF; i++) { if ($i == "cov:") e = $(i + 1); if ($i == "corp:") { c = $(i + 1); sub("/.*", "", c) } } }
	END { printf "fuzz: %s: %d execs in %d s = %d exec/s, cov %d edges, corpus %d\n", name, n, s, r, e, c }
' "$log"
exit $status
