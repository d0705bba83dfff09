#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# lvbench replay: the two traces of tests/data (recorded from the host kernel by
# scripts/record-lru-trace.sh) replayed with one design and with compare; a trace written here
# event by event whose replay is known exactly; a trace with more CPUs than threads; and
# truncated and corrupt traces, each refused with exit 2, the offset of the first bad byte and
# the reason. The format: docs/fidelity.md.
# TAP; run from the top of the tree: prove -f tests/replay.sh  (BUILD selects the build dir).
set -u

LVBENCH=${BUILD:-build}/lvbench
DATA=$(dirname "$0")/data
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

if [ ! -x "$LVBENCH" ]; then
	echo "Bail out! $LVBENCH is not built (make $LVBENCH)"
	exit 1
fi

# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"
verdict() { # verdict DESCRIPTION STATUS: ok if STATUS is 0, else not ok with the run's output
	if [ "$2" -eq 0 ]; then
		ok "$1"
	else
		not_ok "$1"
		sed 's/^/# /' "$TMP/out" "$TMP/err" >&2
	fi
}

# trace FILE CPUS MEMCGS SLOTS "TYPE INFO CPU MEMCG SLOT"... - write a trace (pid 1 throughout).
trace() {
	python3 - "$@" <<'PY'
import struct, sys
out, cpus, memcgs, slots = sys.argv[1], *map(int, sys.argv[2:5])
recs = [list(map(int, r.split())) for r in sys.argv[5:]]
with open(out, "wb") as f:
    f.write(struct.pack("<8sIIIIQ", b"LVTRACE\0", 1, cpus, memcgs, slots, len(recs)))
    for t, info, cpu, memcg, slot in recs:
        f.write(struct.pack("<BBHHHII", t, info, cpu, memcg, 0, 1, slot))
PY
}

# json KEY[.KEY] - the value of KEY (in the object KEY) in the first JSON object of $TMP/out.
json() {
	python3 -c 'import functools, json, sys
print(functools.reduce(lambda o, k: o[k], sys.argv[2].split("."),
		       json.loads(open(sys.argv[1]).readline())))' "$TMP/out" "$1"
}

# ---- the shipped traces ----------------------------------------------------------------------

for name in make-j2 readtwice-dd; do
	gzip -dc "$DATA/$name.lvtrace.gz" >"$TMP/$name.lvtrace"
	events=$(python3 -c 'import struct, sys
print(struct.unpack_from("<Q", open(sys.argv[1], "rb").read(), 24)[0])' "$TMP/$name.lvtrace")
	"$LVBENCH" replay "$TMP/$name.lvtrace" --duration 0.3 --json >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ $rc -eq 0 ] && [ "$(json check)" = ok ] && [ "$(json trace_events)" = "$events" ] &&
		[ "$(json insert_enomem)" = 0 ] &&
		python3 -c 'import json, sys
o = json.loads(open(sys.argv[1]).readline())
assert o["workload"] == "replay" and o["events_per_s_total"] > 0, o' "$TMP/out"
	verdict "replay $name ($events events): checks ok, no allocation failed" $?
done

"$LVBENCH" compare replay "$TMP/readtwice-dd.lvtrace" --duration 0.2 --rounds 1 >"$TMP/out" \
	2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && grep -q '^Lock statistics, node design' "$TMP/out" &&
	grep -q '^Lock statistics, lruvec design' "$TMP/out" &&
	grep -Eq '^replay: .*readtwice-dd.lvtrace: [0-9]+ events of [0-9]+ folio slots' "$TMP/out" &&
	grep -Eq '^node: [0-9]+ events/s per thread' "$TMP/out" &&
	grep -Eq '^lruvec: [0-9]+ events/s per thread' "$TMP/out"
verdict "compare replay: both designs' lock tables and events/s" $?

# ---- a trace whose replay is known -----------------------------------------------------------

# One CPU: insert (order 0, file), activate, put back, free; every event finds its folio, and
# the isolation before the putback finds it on its list once the CPU's batch is drained.
trace "$TMP/one.lvtrace" 1 1 1 "1 0 0 0 0" "2 0 0 0 0" "3 0 0 0 0" "4 0 0 0 0"
"$LVBENCH" replay "$TMP/one.lvtrace" --duration 0.1 --json >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && [ "$(json check)" = ok ] && [ "$(json missed)" = 0 ] &&
	[ "$(json putback_busy)" = 0 ] && [ "$(json threads)" = 1 ] &&
	[ "$(json trace_slots)" = 1 ] && [ "$(json passes)" -ge 64 ]
verdict "replay of insert, activate, putback, free on one CPU: every event finds its folio" $?

# Four CPUs on two threads: round-robin, said on stderr; each CPU frees only its own folios.
trace "$TMP/four.lvtrace" 4 2 4 "1 0 0 0 0" "1 16 1 1 1" "1 0 2 0 2" "1 0 3 1 3" \
	"4 0 0 0 0" "4 0 1 1 1" "4 0 2 0 2" "4 0 3 1 3"
"$LVBENCH" replay "$TMP/four.lvtrace" --threads 2 --duration 0.1 --json >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && [ "$(json check)" = ok ] && [ "$(json threads)" = 2 ] &&
	[ "$(json containers)" = 2 ] && [ "$(json missed)" = 0 ] &&
	grep -q 'the trace has events on 4 CPUs, replayed on 2 threads: CPUs mapped round-robin' \
		"$TMP/err"
verdict "replay of a 4-CPU trace on 2 threads: CPUs mapped round-robin, and it says so" $?

# ---- bad input -------------------------------------------------------------------------------

good=$TMP/readtwice-dd.lvtrace
# poke OFFSET HEXBYTES - a copy of the good trace with bytes overwritten, in $TMP/bad.
poke() {
	cp "$good" "$TMP/bad"
	printf "$(echo "$2" | sed 's/\(..\)/\\x\1/g')" |
		dd of="$TMP/bad" bs=1 seek="$1" conv=notrunc status=none
}
# refused DESCRIPTION "STDERR TEXT" FILE - replay of FILE exits 2 with the text on stderr.
refused() {
	"$LVBENCH" replay "$3" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ $rc -eq 2 ] && grep -qF -- "$2" "$TMP/err"
	verdict "refused, $1: $2" $?
}

head -c 20 "$good" >"$TMP/bad"
refused "a truncated header" "offset 20: truncated header (20 of 32 bytes)" "$TMP/bad"
head -c $((32 + 16 * 10 + 5)) "$good" >"$TMP/bad"
refused "a truncated record" "offset 192: truncated: record 10 of " "$TMP/bad"
cp "$good" "$TMP/bad" && printf 'xyz' >>"$TMP/bad"
refused "trailing bytes" "3 bytes after the last of" "$TMP/bad"
poke 0 4c56545241434558
refused "a bad magic" "offset 0: not an LRU trace" "$TMP/bad"
refused "a compressed trace" "offset 0: gzip-compressed; decompress it first" \
	"$DATA/readtwice-dd.lvtrace.gz"
poke 8 02000000
refused "another version" "offset 8: version 2, this lvbench reads version 1" "$TMP/bad"
poke 12 00000000
refused "no CPUs" "offset 12: 0 CPUs" "$TMP/bad"
poke 24 0000000000000000
refused "no events" "offset 24: no events" "$TMP/bad"
poke $((32 + 16 * 5)) 09
refused "an unknown event type" "offset 112: record 5: unknown event type 9" "$TMP/bad"
poke $((32 + 16 * 6 + 1)) 0c
refused "an order above the largest" "offset 129: record 6: order 12 above 9" "$TMP/bad"
poke $((32 + 16 * 7 + 2)) 0900
refused "a CPU the header does not have" "offset 146: record 7: CPU 9 of a " "$TMP/bad"
poke $((32 + 16 * 8 + 4)) 0700
refused "a memcg the header does not have" "offset 164: record 8: memcg 7 of " "$TMP/bad"
poke $((32 + 16 * 9 + 6)) 0100
refused "a reserved field set" "offset 182: record 9: reserved field is 1" "$TMP/bad"
poke $((32 + 16 * 3 + 12)) ffffff7f
refused "a slot the header does not have" "offset 92: record 3: slot 2147483647 of " "$TMP/bad"
refused "a missing file" "replay: cannot open '$TMP/nosuch'" "$TMP/nosuch"
"$LVBENCH" replay >"$TMP/out" 2>"$TMP/err"
[ $? -eq 2 ] && grep -q 'replay: no trace (lvbench replay FILE)' "$TMP/err"
verdict "refused: no trace given" $?
"$LVBENCH" replay "$good" "$good" >"$TMP/out" 2>"$TMP/err"
[ $? -eq 2 ] && grep -q "unexpected argument '$good'" "$TMP/err"
verdict "refused: two traces" $?

# ---- the recorder's converter ---------------------------------------------------------------

# tracefs text of a command (pid 100) whose child dd (101, in child cgroup c1) inserts a file
# folio of order 2, activates it, sees kswapd put it back and free it, then inserts an anon
# folio in the freed slot; another process's folio (pid 200) is left out.
cat >"$TMP/trace.txt" <<'EOF2'
            bash-100   [000] d..3.  10.000000: sched_process_fork: comm=bash pid=100 child_comm=dd child_pid=101
              dd-101   [000] .....  10.000001: mm_filemap_add_to_page_cache: dev 254:0 ino 1 pfn=0x1000 ofs=0 order=2
              dd-101   [000] d..3.  10.000002: mm_lru_insertion: folio=0000000000000001 pfn=0x1000 lru=2 flags= f  d 
           other-200   [001] d..3.  10.000003: mm_lru_insertion: folio=0000000000000002 pfn=0x2000 lru=0 flags=Ma bd 
              dd-101   [001] d..3.  10.000004: mm_lru_activate: folio=0000000000000001 pfn=0x1000
         kswapd0-50    [001] d..3.  10.000005: mm_lru_insertion: folio=0000000000000001 pfn=0x1000 lru=3 flags= f  d 
         kswapd0-50    [001] .....  10.000006: mm_page_free: page=0000000000000000 pfn=0x1000 order=2
           other-200   [001] .....  10.000007: mm_page_free: page=0000000000000000 pfn=0x2000 order=0
              dd-101   [000] d..3.  10.000008: mm_lru_insertion: folio=0000000000000003 pfn=0x3000 lru=0 flags=Ma bd 
EOF2
printf '100 /\n101 /c1/\n' >"$TMP/pids"
scripts=$(dirname "$0")/../scripts
"$scripts/record-lru-trace.sh" -o "$TMP/conv.lvtrace" --convert "$TMP/trace.txt" "$TMP/pids" 100 \
	>"$TMP/out" 2>"$TMP/err"
rc=$?
python3 - "$TMP/conv.lvtrace" >"$TMP/py" 2>&1 <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
magic, version, cpus, memcgs, slots, events = struct.unpack_from("<8sIIIIQ", b)
assert (magic, version, cpus, memcgs, slots, events) == (b"LVTRACE\0", 1, 2, 2, 1, 5), \
    (magic, version, cpus, memcgs, slots, events)
recs = [struct.unpack_from("<BBHHHII", b, 32 + 16 * i) for i in range(events)]
want = [(1, 2, 0, 1, 0, 101, 0),     # insert, order 2, file, inactive; dd's memcg c1
        (2, 0, 1, 1, 0, 101, 0),     # activate
        (3, 0x20, 1, 0, 0, 50, 0),   # putback (a second insertion), onto the active list
        (4, 0, 1, 0, 0, 50, 0),      # free, by kswapd
        (1, 0x10, 0, 1, 0, 101, 0)]  # anon insert, in the freed slot
assert recs == want, recs
PY
py=$?
[ $rc -eq 0 ] && [ $py -eq 0 ] &&
	"$LVBENCH" replay "$TMP/conv.lvtrace" --duration 0.1 --json >"$TMP/out" 2>"$TMP/err" &&
	[ "$(json check)" = ok ]
verdict "record-lru-trace.sh --convert: the command's folios only, putback, free, slot reused" $?
[ $py -eq 0 ] || sed 's/^/# /' "$TMP/py" >&2

# The scripts that make traces and tables refuse bad usage with exit 2 before touching the host.
"$scripts/record-lru-trace.sh" -o "$TMP/x" >"$TMP/out" 2>"$TMP/err"
[ $? -eq 2 ] && grep -q "no command (after '--')" "$TMP/err"
verdict "record-lru-trace.sh without a command: exit 2" $?
"$scripts/record-lru-trace.sh" --max-events 0 -o "$TMP/x" -- true >"$TMP/out" 2>"$TMP/err"
[ $? -eq 2 ] && grep -q -- "--max-events: '0' is not a count" "$TMP/err"
verdict "record-lru-trace.sh --max-events 0: exit 2" $?
"$scripts/fidelity.sh" --size 0 >"$TMP/out" 2>"$TMP/err"
[ $? -eq 2 ] && grep -q -- "--size: '0' is not a number of MiB" "$TMP/err"
verdict "fidelity.sh --size 0: exit 2" $?
"$scripts/fidelity.sh" --out "$TMP/out" >"$TMP/out2" 2>"$TMP/err"
[ $? -eq 2 ] && grep -q -- "has no fidelity.sh begin/end lines" "$TMP/err"
verdict "fidelity.sh --out a file without the markers: exit 2" $?

echo "1..$n"
[ "$failed" -eq 0 ]
