#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# lvbench command line: usage errors, help, and short runs of churn and compare churn whose
# output must carry what scripts rely on. Every run also exercises lv_check() inside lvbench.
# TAP; run from the top of the tree: prove -f tests/lvbench.sh  (BUILD selects the build dir).
set -u

LVBENCH=${BUILD:-build}/lvbench
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

if [ ! -x "$LVBENCH" ]; then
	echo "Bail out! $LVBENCH is not built (make $LVBENCH)"
	exit 1
fi

# "expected stderr text | arguments": each must exit 2 and name the culprit on stderr.
bad=(
	"--bogus|churn --bogus"
	"--threads|churn --threads abc"
	"--threads|churn --threads 0"
	"--threads|churn --threads"
	"--containers|churn --containers 99999999999999999999"
	"--duration|churn --duration -1"
	"--duration|churn --duration nan"
	"--lock|churn --lock foo"
	"--backend|churn --backend ticket"
	"--batch|churn --batch 32"
	"--json|churn --json=yes"
	"--working-set|churn --working-set 0"
	"frobnicate|frobnicate"
	"nosuch|compare nosuch"
	"--lock|compare churn --lock node"
	"--rounds|compare churn --rounds x"
)
helps=("--help" "churn --help" "compare --help" "compare churn --help")

echo "1..$((${#bad[@]} + ${#helps[@]} + 8))"
n=0
failed=0
ok() {
	n=$((n + 1))
	echo "ok $n - $1"
}
not_ok() {
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - $1"
}
check() { # check DESCRIPTION COMMAND... : ok if the command succeeds
	local desc=$1
	shift
	if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}
diag() {
	sed 's/^/# /' "$@" >&2
}

for c in "${bad[@]}"; do
	want=${c%%|*}
	args=${c#*|}
	# shellcheck disable=SC2086 # the arguments are meant to be split
	"$LVBENCH" $args >"$TMP/out" 2>"$TMP/err" </dev/null
	rc=$?
	if [ $rc -eq 2 ] && grep -qF -- "$want" "$TMP/err"; then
		ok "lvbench $args: exit 2 naming $want"
	else
		not_ok "lvbench $args: exit 2 naming $want (got exit $rc)"
		diag "$TMP/err"
	fi
done

"$LVBENCH" >/dev/null 2>&1 </dev/null
check "lvbench without arguments: exit 2" test $? -eq 2

for h in "${helps[@]}"; do
	# shellcheck disable=SC2086
	"$LVBENCH" $h >"$TMP/out" 2>"$TMP/err"
	rc=$?
	check "lvbench $h: exit 0 with usage on stdout" \
		test $rc -eq 0 -a -s "$TMP/out" -a ! -s "$TMP/err"
	grep -q '^Usage:' "$TMP/out" || diag "$TMP/out"
done

# JSON of one design: the keys scripts rely on, sane values, nothing on a non-tty stderr.
"$LVBENCH" churn --duration 1 --containers 2 --threads 4 --json >"$TMP/json" 2>"$TMP/err"
rc=$?
check "churn --json: exit 0" test $rc -eq 0
check "churn --json: stderr stays quiet when it is not a terminal" test ! -s "$TMP/err"
[ -s "$TMP/err" ] && diag "$TMP/err"
python3 - "$TMP/json" <<'EOF' >"$TMP/py" 2>&1
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1, "one object per design, one per line: %d lines" % len(lines)
o = json.loads(lines[0])
for k in ("workload", "lock", "threads", "containers", "cpus", "ops_per_sec", "locks",
          "vmstat", "threads_per_cpu", "ops_per_sec_per_thread", "check"):
    assert k in o, "missing key " + k
assert o["workload"] == "churn" and o["lock"] == "lruvec", o
assert o["threads"] == 4 and o["containers"] == 2 and o["cpus"] >= 1, o
assert o["ops_per_sec"] > 0, "ops_per_sec %r" % o["ops_per_sec"]
assert o["check"] == "ok"
names = set()
for l in o["locks"]:
    for k in ("name", "acquired", "contended", "wait_total_ns", "wait_max_ns"):
        assert k in l, "lock entry without " + k
    names.add(l["name"])
assert {"lruvec", "node", "slot"} <= names, names
lru = [l for l in o["locks"] if l["name"] == "lruvec"][0]
assert lru["acquired"] > 0 and lru["contended"] <= lru["acquired"], lru
for k in ("pgactivate", "pgdeactivate", "pgmoved", "lock_retries"):
    assert k in o["vmstat"], "vmstat without " + k
assert o["vmstat"]["pgactivate"] > 0 and o["vmstat"]["pgmoved"] > 0, o["vmstat"]
EOF
rc=$?
check "churn --json: every required key, ops_per_sec > 0" test $rc -eq 0
[ $rc -eq 0 ] || diag "$TMP/py"

# Out of memory, by memcg limit and by a full node: handled, counted, never fatal.
"$LVBENCH" churn --duration 0.5 --containers 2 --threads 4 --limit 1 --memory 4 \
	--working-set 1024 --lock node --json >"$TMP/json" 2>"$TMP/err"
rc=$?
python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))
assert o["lock"] == "node" and o["counters"]["alloc_enomem"] > 0 and o["ops_per_sec"] > 0, o
' "$TMP/json" >"$TMP/py" 2>&1
py=$?
check "churn under memory pressure: exit 0, ENOMEM counted" test $rc -eq 0 -a $py -eq 0
if [ $rc -ne 0 ] || [ $py -ne 0 ]; then diag "$TMP/err" "$TMP/py"; fi

# compare: both designs side by side, the lock table of each, the contended fraction.
"$LVBENCH" compare churn --duration 1 --rounds 1 --containers 4 --threads 8 \
	>"$TMP/out" 2>"$TMP/err"
rc=$?
check "compare churn: exit 0" test $rc -eq 0
ratio=$(awk -v c="$(getconf _NPROCESSORS_ONLN)" 'BEGIN { printf "%.2f", 8 / c }')
if grep -Eq '^ +node +lruvec$' "$TMP/out" &&
	grep -q '^Hmean .*(   0.00%) .*%)$' "$TMP/out" &&
	grep -q 'Lock statistics, node design' "$TMP/out" &&
	grep -q 'Lock statistics, lruvec design' "$TMP/out" &&
	grep -Eq '^contended/acquired +[0-9.]+% +[0-9.]+%$' "$TMP/out" &&
	grep -qF "thread-to-core ratio $ratio" "$TMP/out"; then
	ok "compare churn: both designs, percentages, lock tables, thread-to-core ratio"
else
	not_ok "compare churn: both designs, percentages, lock tables, thread-to-core ratio"
	diag "$TMP/out" "$TMP/err"
fi

"$LVBENCH" compare churn --duration 0.5 --rounds 1 --containers 2 --threads 4 --json \
	>"$TMP/json" 2>"$TMP/err"
rc=$?
python3 -c '
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
assert [o["lock"] for o in objs] == ["node", "lruvec"], objs
assert all(o["ops_per_sec"] > 0 and o["rounds"] == 1 for o in objs), objs
' "$TMP/json" >"$TMP/py" 2>&1
py=$?
check "compare churn --json: one line per design, node then lruvec" test $rc -eq 0 -a $py -eq 0
if [ $rc -ne 0 ] || [ $py -ne 0 ]; then diag "$TMP/err" "$TMP/py"; fi

[ $failed -eq 0 ]
