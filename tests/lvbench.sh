#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# lvbench command line: usage errors, every form of every size option, the limits of the counts
# (--containers up to the library's memcg ids), the short and the long help, and short runs of
# every workload, of compare (with --sweep and --plot) and of scale whose output must carry what
# scripts rely on; and scripts/kernel-readtwice.sh and scripts/readtwice-vs-kernel.sh. Every run
# also exercises lv_check() inside lvbench.
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
	"--readers|readtwice --readers 0"
	"--readers|readtwice --readers"
	"--threads: 4 threads for 1 container x 2 readers|readtwice --containers 1 --threads 4"
	"--threads: 4 threads for 2 containers x 1 reader|compare readonce --containers 2 --threads 4"
	"--limit|readtwice --limit abc"
	"--file-size|readtwice --file-size 8Q"
	"--file-size|readtwice --file-size 0"
	"--file|readtwice --file /nonexistent/lvbench-test"
	"--file|readonce --file /"
	"--file-size|readtwice --file-size 1M --file /etc/hostname"
	"--memory|readtwice --memory 2"
	"--containers|readtwice --containers 0"
	"40000 containers x 2 readers is more than 65535 threads|readtwice --containers 40000 --readers 2"
	"--sweep|readtwice --sweep 1,2"
	"--sweep|compare readtwice --sweep 1,,2"
	"--sweep|compare readtwice --sweep 0,1"
	"--sweep|compare readtwice --sweep 2,1"
	"--sweep|compare readtwice --sweep 1,1"
	"--containers|compare readtwice --sweep 1,2 --containers 3"
	"--plot|compare readtwice --plot x.svg"
	"--plot|readtwice --plot x.svg"
	"--lock|compare readtwice --lock node"
	"--readers|churn --readers 2"
	"--test|aim9 --test fork_test"
	"--test|aim9 --test"
	"--iterations|aim9 --iterations 0"
	"--iterations|aim9 --iterations 1001"
	"--iterations|aim9 --iterations x"
	"--touch|aim9 --touch all"
	"--threads|aim9 --threads 2"
	"--threads|compare aim9 --threads 2"
	"--containers|aim9 --containers 0"
	"--duration|aim9 --duration 0"
	"--lock|compare aim9 --lock lruvec"
	"--threads|compact --threads 4"
	"--containers|compact --containers 1"
	"--thp-tenants|compact --thp-tenants 8"
	"--thp-tenants|compact --thp-tenants 0"
	"--proactiveness|compact --proactiveness 101"
	"--folio-order|compact --folio-order 7"
	"--hugepages|compact --hugepages 0"
	"--nodes|compact --nodes 2"
	"--sweep|compare compact --sweep 2,4"
	"the tenants would keep|compact --memory 64 --limit 64"
	"--threads|swap --threads 2"
	"--threads|compare swap --threads 2"
	"--nodes|swap --nodes 2"
	"--sweep|compare swap --sweep 1,2"
	"--readers|swap --readers 17"
	"--region|swap --region 0"
	"--limit: 3 MiB is out of range|swap --limit 3"
	"--swap-size 2 MiB cannot hold the tenants' overflow|swap --swap-size 2"
	"--swap-file: '/' exists and is not a regular file|swap --swap-file /"
	"--swap-file: cannot create files beside|swap --swap-file /nonexistent/lvbench.swap"
	"the containers' limits add up to 520 MiB|swap --memory 512 --limit 480 --file-limit 40"
	"--disable|swap --disable rcu"
	"--threads|reparent --threads 3"
	"--pages: 0 is out of range (1..16777216)|reparent --pages 0"
	"--memory: 100 MiB is less than the 4612 MiB|reparent --memory 100"
	"--nodes|reparent --nodes 2"
	"--isolated: 65537 is out of range|reparent --isolated 65537"
	"--folio-order|reparent --folio-order 2"
	"--containers must be 1|usemem --containers 2"
	"--scan-cost|usemem --scan-cost fast"
	"--limit 120 MiB leaves the node|usemem --limit 120"
	"compare --by cost: option '--scan-cost' does not apply|compare usemem --scan-cost vmstat"
	"--file-size: 1000 is out of range|page_fault2 --file-size 1000"
	"--memory: 100 MiB per node is too little|page_fault2 --memory 100"
	"--by folio-order applies to readtwice, readonce only|compare page_fault2 --by folio-order"
	"option '--batch' does not apply|compare page_fault2 --batch 15"
	"--disable|page_fault2 --disable rcu"
	"--iterations|churn --iterations 3"
	"--instances|numa --instances 0"
	"--instances: 65536 is out of range (1..65535)|numa --instances 65536"
	"--instances|numa --instances x"
	"--threads|numa --threads 4"
	"--threads|compare numa --threads 4"
	"--disable|numa --disable fast"
	"--disable|numa --disable"
	"--disable|compare numa --disable rcu"
	"--by|numa --by disable"
	"--by|churn --by disable"
	"--by|compare numa --by nodes"
	"--sweep|compare numa --sweep 1,2"
	"--memory|numa --instances 64 --memory 16"
	"--nodes|numa --nodes 0"
	"--lock|compare numa --by lock --lock node"
	"--instances|churn --instances 2"
	"--disable|churn --disable rcu"
	"--disable|aim9 --disable sweep"
	"--by disable|compare churn --by disable"
	"--by disable|compare aim9 --by disable"
	"--memory|aim9 --containers 256 --memory 4"
	# compare --by over a knob: the option it sets, and the workloads it applies to.
	"--by folio-order applies to readtwice, readonce only|compare churn --by folio-order"
	"--by folio-order applies to readtwice, readonce only|compare compact --by folio-order"
	"--folio-order' does not apply to churn|churn --folio-order 2"
	"--folio-order' does not apply to numa|compare numa --folio-order 1"
	"--folio-order: 7 is out of range (0..6)|readtwice --folio-order 7"
	"option '--folio-order' does not apply|compare readtwice --by folio-order --folio-order 2"
	"option '--batch' does not apply|compare churn --by batch --batch 15"
	"option '--scan-cost' does not apply|compare churn --by cost --scan-cost vmstat"
	"option '--batch-large' does not apply|compare aim9 --by batch-large --batch-large on"
	"--scan-cost: unknown value 'fast'|churn --scan-cost fast"
	"--batch-large: unknown value 'yes'|churn --batch-large yes"
	"--by: unknown value 'batches'|compare churn --by batches"
	"--by|readtwice --by folio-order"
	"--sweep|compare numa --by disable --sweep 1,2"
	"--touch|aim9 --test brk_test --touch stores"
	# Sizes: powers of 1024 only, whole MiB where the unit is MiB, within the range.
	"--memory: 1000K is not a whole number of MiB|churn --memory 1000K"
	"--memory: 1048577K is not a whole number of MiB|readtwice --memory 1048577K"
	"--limit: 1000K is not a whole number of MiB|churn --limit 1000K"
	"--limit: 1536K is not a whole number of MiB|readtwice --limit 1536K"
	"--limit: 1536K is not a whole number of MiB|readonce --limit 1536K"
	"--memory: '1KB': decimal units are not accepted|churn --memory 1KB"
	"--limit: '8MB': decimal units are not accepted|readtwice --limit 8MB"
	"--file-size: '4kB': decimal units are not accepted|readtwice --file-size 4kB"
	"--memory: '1.5G' is not a size|churn --memory 1.5G"
	"--memory: '64X' is not a size|aim9 --memory 64X"
	"--limit: '-1' is not a size|readtwice --limit -1"
	"--limit: '' is not a size|churn --limit="
	"--file-size: '1Gib' is not a size|readtwice --file-size 1Gib"
	"--file-size: '0x1000' is not a size|readonce --file-size 0x1000"
	"--memory: 2 MiB is out of range (4 MiB..64 GiB)|churn --memory 2"
	"--memory: 3M is out of range (4 MiB..64 GiB)|readtwice --memory 3M"
	"--memory: 65G is out of range (4 MiB..64 GiB)|numa --memory 65G"
	"--memory: 99999999999999999999 MiB is out of range|churn --memory 99999999999999999999"
	"--limit: 2T is out of range (0..1 TiB)|churn --limit 2T"
	"--limit: 1048577 MiB is out of range (0..1 TiB)|readtwice --limit 1048577"
	"--file-size: 4095 is out of range (4 KiB..4 PiB)|readtwice --file-size 4095"
	"--file-size: 5P is out of range (4 KiB..4 PiB)|readonce --file-size 5P"
	"--file-size: 99999999999999999999K is out of range|readtwice --file-size 99999999999999999999K"
	# The counts: containers up to the library's memcg ids, threads one per id.
	"--containers: 65535 is out of range (1..65534)|churn --containers 65535"
	"--containers: 65535 is out of range (1..65534)|compare readtwice --containers 65535"
	"--sweep: 65535 is out of range (1..65534)|compare churn --sweep 1,65535"
	"--threads: 65536 is out of range (1..65535)|churn --threads 65536"
	"more --nodes or fewer --instances|numa --instances 40000"
	# help: workloads only, nothing after them.
	"help: unknown workload 'nosuch'|help nosuch"
	"help: unknown workload 'nosuch'|help compare nosuch"
	"help: unknown workload 'nosuch'|help scale nosuch"
	"scale: aim9 is not supported (scale runs churn, readtwice|help scale aim9"
	# scale: its workloads, its sweep, the options a sweep of fixed threads excludes.
	"scale: missing workload|scale"
	"scale: missing workload|scale --sweep 1,2"
	"scale: unknown workload 'nosuch'|scale nosuch"
	"scale: aim9 is not supported (scale runs churn, readtwice|scale aim9"
	"scale: readonce is not supported (scale runs churn, readtwice|scale readonce"
	"scale: numa is not supported|scale numa --sweep 1,2"
	"--sweep: the container counts must increase (2 after 4)|scale churn --sweep 4,2"
	"--sweep: the container counts must increase (10 after 10)|scale readtwice --sweep 1,10,10"
	"--sweep: '1,,2' is not a comma-separated list of integers|scale churn --sweep 1,,2"
	"--sweep: 'x' is not a non-negative integer|scale churn --sweep x"
	"--sweep: 0 is out of range (1..65534)|scale churn --sweep 0,10"
	"--sweep: 65535 is out of range (1..65534)|scale readtwice --sweep 10,65535"
	"option '--sweep' needs a value|scale churn --sweep"
	"option '--containers' does not apply with --sweep|scale churn --containers 10"
	"option '--plot' applies to compare only|scale churn --plot x.svg"
	"option '--by' applies to compare only|scale readtwice --by lock"
	"--threads: 8 threads for 2 containers x 2 readers|scale readtwice --sweep 2,4 --threads 8"
	"--threads (scale), --pin: --pin places one reader per thread|scale readtwice --pin"
	"--threads (scale), --passes|scale readtwice --once"
	"--threads, --passes|readtwice --threads 2 --passes 2"
	"--threads: 65536 is out of range (1..65535)|scale churn --threads 65536"
	"--disable|scale churn --disable rcu"
	"--folio-order' does not apply to churn|scale churn --folio-order 1"
	"option '--sweep' applies to compare and scale only|churn --sweep 1,2"
	"Try 'lvbench help scale churn'|scale churn --bogus"
	"help: unexpected argument 'extra'|help churn extra"
	"Try 'lvbench help readtwice'|readtwice --bogus"
	"Try 'lvbench help compare aim9'|compare aim9 --bogus"
)
helps=("--help" "churn --help" "compare --help" "compare churn --help" "readtwice --help"
	"readonce --help" "compare readtwice --help" "aim9 --help" "compare aim9 --help"
	"numa --help" "compare numa --help" "compact --help" "compare compact --help" "swap --help"
	"compare swap --help" "reparent --help" "compare reparent --help" "usemem --help"
	"compare usemem --help" "page_fault2 --help" "compare page_fault2 --help" "replay --help"
	"compare replay --help" "scale --help" "scale churn --help" "scale readtwice --help"
	"help scale" "help scale readtwice")

# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"
diag() {
	sed 's/^/# /' "$@" >&2
}
verdict() { # verdict DESCRIPTION STATUS: ok if STATUS is 0, else not ok with the run's output
	if [ "$2" -eq 0 ]; then
		ok "$1"
	else
		not_ok "$1"
		diag "$TMP/out" "$TMP/err"
	fi
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

# compare's help opens with the comparison the workload makes by default.
first_para() { "$LVBENCH" "$@" | sed -n 3p; }
check "compare numa --help: opens with --by disable (its default)" \
	grep -q '^--by disable (numa' <(first_para compare numa --help)
check "compare churn --help: opens with --by lock (its default)" \
	grep -q '^--by lock ' <(first_para compare churn --help)
check "compare page_fault2 --help: opens with --by batch (its default)" \
	grep -q '^--by batch (page_fault2.s default): batch-15 vs batch-31 ' \
	<(first_para compare page_fault2 --help)

# ---- help --------------------------------------------------------------------------------------

# The short help fits one screen, alone (--help) and after a usage error without arguments;
# plain text, a usage line first, every workload on a line of its own.
"$LVBENCH" --help >"$TMP/out" 2>"$TMP/err"
"$LVBENCH" >"$TMP/noargs" 2>&1 </dev/null
rc=$?
lines=$(wc -l <"$TMP/out")
width=$(awk '{ if (length > m) m = length } END { print m }' "$TMP/out")
listed=$(grep -Ec '^  (churn|readtwice|readonce|aim9|numa|compact|swap|reparent|usemem|page_fault2|replay)  +[a-zA-Z]' \
	"$TMP/out")
[ "$lines" -le 24 ] && [ "$width" -le 100 ] && [ "$listed" -eq 11 ] &&
	head -n 1 "$TMP/out" | grep -q '^Usage: lvbench ' &&
	grep -q "lvbench help \[WORKLOAD | compare | scale\]" "$TMP/out" && ! grep -q $'\033' "$TMP/out" &&
	[ $rc -eq 2 ] && cmp -s "$TMP/out" "$TMP/noargs"
verdict "lvbench --help: $lines lines of at most $width columns, the same without arguments" $?

# help WORKLOAD is WORKLOAD --help: the long form, every option with its default (or why it does
# not apply), the sizes, the output, the published numbers (numa, aim9, readtwice).
cat >"$TMP/opts.py" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
assert "\033" not in text, "a terminal escape"
assert max(len(l) for l in text.splitlines()) <= 100, "a line longer than 100 columns"
entries = re.split(r"\n(?=  --)", text.split("\nOptions of ", 1)[1].split("\nSizes ", 1)[0])
opts = [e for e in entries if e.startswith("  --")]
assert len(opts) >= 15, "too few options: %d" % len(opts)
for e in opts:
    name = e.split()[0]
    if name in ("--json", "--help", "--sweep", "--plot"):
        continue
    assert "(default: " in e or "(not for " in e, "no default for " + name + ": " + e
PY
for w in churn readtwice readonce aim9 numa swap reparent usemem page_fault2; do
	"$LVBENCH" help "$w" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	"$LVBENCH" "$w" --help >"$TMP/out2" 2>&1
	python3 "$TMP/opts.py" "$TMP/out" >"$TMP/py" 2>&1
	py=$?
	[ $rc -eq 0 ] && [ ! -s "$TMP/err" ] && cmp -s "$TMP/out" "$TMP/out2" && [ $py -eq 0 ] &&
		head -n 1 "$TMP/out" | grep -q "^Usage: lvbench $w \[OPTIONS\]$" &&
		grep -q '^Sizes (--memory, --limit, --file-size): ' "$TMP/out" &&
		grep -q '^Output: ' "$TMP/out" && grep -q "^Options of every workload, defaults in $w:" \
		"$TMP/out" && grep -q "docs/benchmarks.md" "$TMP/out"
	verdict "lvbench help $w: the same as $w --help; every option with a default or why not" $?
	[ $py -eq 0 ] || diag "$TMP/py"
done
"$LVBENCH" help readtwice | grep -q '(default: 2048 MiB, one node)' &&
	"$LVBENCH" help churn | grep -q '(default: 256 MiB)' &&
	"$LVBENCH" help numa | grep -q '(not for numa: one thread per instance: use --instances)' &&
	"$LVBENCH" help aim9 | grep -q 'Hmean page_test 34355.4 vs 35810.9 ops/s (+4.24%)' &&
	"$LVBENCH" help numa | grep -q '412.88' &&
	"$LVBENCH" help readtwice | grep -q '123.0 vs 144.0 (1.17x)'
verdict "help WORKLOAD: the workload's own defaults and the published numbers" $?
"$LVBENCH" help compare >"$TMP/out" 2>"$TMP/err" && "$LVBENCH" compare --help >"$TMP/out2" &&
	cmp -s "$TMP/out" "$TMP/out2" && grep -q '^Usage: lvbench compare WORKLOAD' "$TMP/out" &&
	"$LVBENCH" help compare numa >"$TMP/out" && "$LVBENCH" compare numa --help >"$TMP/out2" &&
	cmp -s "$TMP/out" "$TMP/out2" && sed -n 3p "$TMP/out" | grep -q '^--by disable' &&
	"$LVBENCH" help >"$TMP/out" && "$LVBENCH" --help | cmp -s - "$TMP/out"
verdict "help compare [WORKLOAD] is compare [WORKLOAD] --help; help alone is --help" $?

# help scale [WORKLOAD] is scale [WORKLOAD] --help: every option with scale's default, the
# workload's or why it does not apply; the sweep's default; the workloads it runs.
"$LVBENCH" help scale churn >"$TMP/out" 2>"$TMP/err"
rc=$?
"$LVBENCH" scale churn --help >"$TMP/out2" 2>&1
python3 "$TMP/opts.py" "$TMP/out" >"$TMP/py" 2>&1
py=$?
[ $rc -eq 0 ] && [ ! -s "$TMP/err" ] && cmp -s "$TMP/out" "$TMP/out2" && [ $py -eq 0 ] &&
	head -n 1 "$TMP/out" | grep -q '^Usage: lvbench scale churn \[--sweep N,N,...\] \[OPTIONS\]$' &&
	grep -q '^Options of churn:$' "$TMP/out" && grep -q '(default: 10,100,1000,10000)' "$TMP/out" &&
	grep -q '(default: 2 x online CPUs, the same at every count' "$TMP/out" &&
	grep -q '(not for scale: --sweep gives the counts)' "$TMP/out" &&
	grep -q '(not for churn: it has no page cache)' "$TMP/out" &&
	grep -q 'docs/benchmarks.md, scale' "$TMP/out" &&
	"$LVBENCH" help scale >"$TMP/out" && "$LVBENCH" scale --help | cmp -s - "$TMP/out" &&
	grep -q '^Workloads: churn, readtwice ' "$TMP/out"
verdict "help scale [churn] is scale [churn] --help: scale's defaults, the workloads" $?
[ $py -eq 0 ] || diag "$TMP/py"

# Nothing in lvbench, its help or the two scripts points outside the repository.
rc=0
for h in "--help" "help compare" "help churn" "help readtwice" "help readonce" "help aim9" \
	"help numa" "help swap" "help usemem" "help scale" "help scale churn"; do
	# shellcheck disable=SC2086
	"$LVBENCH" $h
done >"$TMP/helps"
outside='(^|[^/a-z])benchmarks\.md|kernel-lru-loc[k]|/work/|reference/|design\.md [0-9]|§'
grep -nE "$outside" "$TMP/helps" && rc=1
grep -nE "$outside" tools/lvbench/*.[ch] scripts/kernel-readtwice.sh \
	scripts/readtwice-vs-kernel.sh | grep -v 'docs/protocol.md §' && rc=1
verdict "no reference outside the repository in lvbench, its help and the scripts" $rc

# ---- sizes: every form on every size option ------------------------------------------------------

# "arguments|key=value ...": the settings a short run reports in its JSON. A bare number keeps
# its unit (MiB for --memory and --limit, bytes for --file-size); suffixes are powers of 1024.
forms=(
	"churn --memory 64|memory_mib_per_node=64"
	"churn --memory 64M|memory_mib_per_node=64"
	"churn --memory 65536K|memory_mib_per_node=64"
	"churn --memory 64MiB|memory_mib_per_node=64"
	"churn --memory=1G|memory_mib_per_node=1024"
	"churn --memory 1g|memory_mib_per_node=1024"
	"churn --memory 1GiB --nodes 2|memory_mib_per_node=1024 nodes=2"
	"churn --limit 8|limit_mib=8"
	"churn --limit 8M|limit_mib=8"
	"churn --limit 8192k|limit_mib=8"
	"churn --limit 1G|limit_mib=1024"
	"churn --limit 0|limit_mib=0"
	"aim9 --memory 64M --iterations 1|memory_mib_per_node=64"
	"numa --memory 64M --instances 1|memory_mib_per_node=64"
	"readtwice --file-size 4096|file_size=4096"
	"readtwice --file-size 512K|file_size=524288"
	"readtwice --file-size 512M|file_size=536870912"
	"readtwice --file-size 1G|file_size=1073741824"
	"readtwice --file-size 1GiB|file_size=1073741824"
	"readtwice --file-size 1T|file_size=1099511627776"
	"readtwice --limit 8|limit_mib=8"
	"readtwice --limit 8M|limit_mib=8"
	"readtwice --limit 8192KiB|limit_mib=8"
	"readonce --limit 1G|limit_mib=1024"
	"readtwice --memory 1G --limit 256M|memory_mib=1024 limit_mib=256"
)
for f in "${forms[@]}"; do
	args=${f%%|*}
	want=${f#*|}
	# shellcheck disable=SC2086 # the arguments are meant to be split
	set -- $args
	# Page cache workloads: one container, and 32 MiB where the form gives no --memory.
	shape=()
	case $1 in readtwice | readonce) shape=(--containers 1) ;; esac
	case " $args " in *" --memory"*) ;; *" --file-size "* | *" --limit "*) shape+=(--memory 32) ;; esac
	"$LVBENCH" "$@" "${shape[@]}" --duration 0.1 --json >"$TMP/json" 2>"$TMP/err" </dev/null
	rc=$?
	python3 - "$TMP/json" $want >"$TMP/py" 2>&1 <<'PY'
import json, sys
o = json.loads(open(sys.argv[1]).readline())
for kv in sys.argv[2:]:
    k, v = kv.split("=")
    assert o[k] == int(v), "%s is %r, not %s" % (k, o[k], v)
assert o["check"] == "ok", o["check"]
PY
	py=$?
	check "lvbench $args: $want" test $rc -eq 0 -a $py -eq 0
	if [ $rc -ne 0 ] || [ $py -ne 0 ]; then diag "$TMP/err" "$TMP/py"; fi
done

# The settings lines say the same in words: a bare --memory is MiB.
"$LVBENCH" churn --memory 96 --duration 0.1 --containers 2 --threads 2 >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && grep -q '^2 containers, 2 threads on [0-9]* online CPUs* .*,$' "$TMP/out" &&
	grep -q '^1 node x 96 MiB, futex locks, batch 31, seed 1$' "$TMP/out"
verdict "churn --memory 96: the settings line says 1 node x 96 MiB" $?
"$LVBENCH" readtwice --memory 64 --containers 1 --readers 1 --limit 8 --file-size 3G \
	--duration 0.1 >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && grep -q '^readtwice: 1 reader per container, each container reading a sparse file of 3.0 GiB;$' \
	"$TMP/out" && grep -q '^memcg limit 8 MiB each, ' "$TMP/out" &&
	grep -q '^Memory: configured 64 MiB (1 node x 64 MiB)' "$TMP/out"
verdict "readtwice --limit 8 --file-size 3G: the settings say 8 MiB, 3.0 GiB, 64 MiB" $?

# ---- counts: up to the library's memcg ids --------------------------------------------------------

# Every container exists for the whole round (created before, removed after): 65534 of them
# beside the root use every memcg id of the library.
"$LVBENCH" churn --containers 65534 --threads 4 --duration 0.1 --json >"$TMP/json" 2>"$TMP/err"
rc=$?
python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))
assert o["containers"] == 65534 and o["check"] == "ok" and o["ops"] > 0, o
' "$TMP/json" >"$TMP/py" 2>&1
check "churn --containers 65534: every memcg id of the library in use, checks ok" \
	test $rc -eq 0 -a $? -eq 0
[ $rc -eq 0 ] || diag "$TMP/err" "$TMP/py"

# readtwice and readonce reach every id too, their readers served by a few threads.
for w in readtwice readonce; do
	"$LVBENCH" "$w" --containers 65534 --threads 4 --memory 256 --duration 0.1 --json \
		>"$TMP/json" 2>"$TMP/err"
	rc=$?
	python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))
assert o["containers"] == 65534 and o["threads"] == 4 and o["check"] == "ok", o
assert o["ops"] > 0, o
' "$TMP/json" >"$TMP/py" 2>&1
	check "$w --containers 65534 --threads 4: every memcg id of the library in use, checks ok" \
		test $rc -eq 0 -a $? -eq 0
	[ $rc -eq 0 ] || diag "$TMP/err" "$TMP/py"
done

"$LVBENCH" churn --containers 10000 --duration 0.5 --json >"$TMP/json" 2>"$TMP/err"
rc=$?
python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))
assert o["containers"] == 10000 and o["threads"] == 32 and o["check"] == "ok", o
assert o["ops_per_sec"] > 0 and o["vmstat"]["pgmoved"] > 0, o
' "$TMP/json" >"$TMP/py" 2>&1
check "churn --containers 10000: a real run, folios moved between containers" \
	test $rc -eq 0 -a $? -eq 0
[ $rc -eq 0 ] || diag "$TMP/err" "$TMP/py"

"$LVBENCH" compare churn --sweep 2,20000 --threads 2 --duration 0.1 --rounds 1 \
	>"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && grep -Eq '^ +20000 +2 +[0-9.]+ +[0-9.]+ ' "$TMP/out" &&
	grep -q '^churn: 2 threads, working sets of 256 folios, no memcg limit$' "$TMP/out"
verdict "compare churn --sweep 2,20000: a row for 20000 containers" $?

# Every container in use with fewer threads than containers: two threads fill 64 containers
# in turn, so limits of 2 MiB each hold their 8192 folios without a failed allocation (two
# containers of their own would hold 1024).
"$LVBENCH" churn --containers 64 --threads 2 --working-set 4096 --limit 2 --memory 64 \
	--duration 0.3 --json >"$TMP/json" 2>"$TMP/err"
rc=$?
python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))
assert o["check"] == "ok" and o["ops"] > 0, o
assert o["counters"]["alloc_enomem"] == 0, o["counters"]
' "$TMP/json" >"$TMP/py" 2>&1
check "churn --containers 64 --threads 2: every container charged, no allocation over a limit" \
	test $rc -eq 0 -a $? -eq 0
[ $rc -eq 0 ] || diag "$TMP/err"
diag "$TMP/py"

"$LVBENCH" churn --threads 1100 --containers 1100 --working-set 4 --duration 0.2 --json \
	>"$TMP/json" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && grep -q '"threads":1100,"containers":1100,' "$TMP/json"
verdict "churn --threads 1100 --containers 1100: over a thousand threads" $?

# Threads the system refuses (their stacks do not fit in 1 GB of address space): a clear
# error, and the threads already created are stopped and released, not waited for forever.
(
	ulimit -v 1000000 && exec timeout 120 "$LVBENCH" churn --threads 5000 --memory 16 \
		--duration 0.1
) >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 1 ] && grep -Eq '^lvbench: cannot create thread [0-9]+ of 5000: .*ulimit' "$TMP/err"
verdict "churn --threads 5000 under ulimit -v: exit 1, the thread it could not create named" $?

# One container, one reader: counts in the singular.
"$LVBENCH" readtwice --containers 1 --readers 1 --memory 64 --duration 0.2 >"$TMP/out" 2>&1
grep -q '^1 container, 1 reader thread on [0-9]* CPUs*$' "$TMP/out"
verdict "readtwice --containers 1 --readers 1: '1 container, 1 reader thread'" $?

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

# The call sites: every one with its keys, most wait first, adding up to the classes' counts
# (read just after them: a daemon's contention in between can only add to the sites).
python3 - "$TMP/json" <<'EOF' >"$TMP/py" 2>&1
import json, sys
o = json.loads(open(sys.argv[1]).readline())
sites = o["lock_sites"]
classes = {l["name"]: l["contended"] for l in o["locks"]}
by = {}
for s in sites:
    for k in ("caller", "type", "contended", "wait_total_ns", "wait_max_ns", "wait_avg_ns"):
        assert k in s, "site without " + k
    assert s["type"] in classes and s["contended"] > 0 and s["caller"], s
    by[s["type"]] = by.get(s["type"], 0) + s["contended"]
waits = [s["wait_total_ns"] for s in sites]
assert waits == sorted(waits, reverse=True), "not sorted by total wait"
for name, n in classes.items():
    assert by.get(name, 0) >= n, (name, by.get(name, 0), n)
if classes["lruvec"]:
    assert any(s["type"] == "lruvec" for s in sites), sites
EOF
rc=$?
check "churn --json: lock_sites, sorted, adding up to the lock classes" test $rc -eq 0
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
grep -Eq '^ +node +lruvec$' "$TMP/out" &&
	grep -q '^Hmean .*(   0.00%) .*%)$' "$TMP/out" &&
	grep -q 'Lock statistics, node design' "$TMP/out" &&
	grep -q 'Lock statistics, lruvec design' "$TMP/out" &&
	grep -Eq '^contended/acquired +[0-9.]+% +[0-9.]+%$' "$TMP/out" &&
	grep -qF "thread-to-CPU ratio $ratio" "$TMP/out" &&
	grep -q 'Lock contention by call site, lruvec design' "$TMP/out" &&
	grep -Eq '^ +contended +total wait +max wait +avg wait +type +caller$' "$TMP/out"
verdict "compare churn: both designs, percentages, lock and site tables, thread-to-CPU ratio" $?

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

# ---- readtwice, readonce ----------------------------------------------------------------------

# The keys of the issue, plus sane values: every reader read, the ceiling was measured.
cat >"$TMP/rt.py" <<'PY'
import json, sys
path, workload, lock = sys.argv[1], sys.argv[2], sys.argv[3]
containers, readers = int(sys.argv[4]), int(sys.argv[5])
lines = open(path).read().splitlines()
assert len(lines) == 1, "one object per design, one per line: %d lines" % len(lines)
o = json.loads(lines[0])
for k in ("workload", "lock", "containers", "readers", "cpus", "mb_per_s_reader_mean",
          "mb_per_s_total", "ceiling_mb_per_s", "locks", "vmstat", "vm_hwm_kib", "check"):
    assert k in o, "missing key " + k
assert o["workload"] == workload and o["lock"] == lock, o
assert o["containers"] == containers and o["readers"] == containers * readers, o
assert o["mb_per_s_reader_mean"] > 0 and o["ceiling_mb_per_s"] > 0, o
# The ceiling zeroes each frame once however its readers meet (they meet often on 2 CPUs).
assert o["ceiling_zeroes_per_frame"] == 1, o["ceiling_zeroes_per_frame"]
total, mean = o["mb_per_s_total"], o["mb_per_s_reader_mean"]
assert abs(total - mean * o["readers"]) <= 0.01 * total + 0.1, (total, mean)
assert o["mb_per_s_reader"]["min"] > 0, "a reader read nothing: %r" % o["mb_per_s_reader"]
for k in ("pgactivate", "pgdeactivate", "pgscan", "pgsteal", "workingset_refault",
          "workingset_activate"):
    assert k in o["vmstat"], "vmstat without " + k
assert {"lruvec", "node", "mapping"} <= {l["name"] for l in o["locks"]}, o["locks"]
assert o["check"] == "ok"
import os
# Each ring of the ceiling: the memory a container's page cache cycles through (its share or
# its limit, per reader of its own file), all rings within half the memory.
assert o["ceiling_ring_bytes"] == int(os.environ["RING_BYTES"]), o["ceiling_ring_bytes"]
# --pin: each container's CPU, round-robin over the affinity mask (lvb_pin_cpus()); else null.
assert o["pin_cpus"] == json.loads(os.environ.get("PIN_EXPECT", "null")), o["pin_cpus"]
PY

rt_json() { # rt_json DESCRIPTION WORKLOAD LOCK CONTAINERS READERS-PER-CONTAINER ARGS...
	local desc=$1 wl=$2 lock=$3 c=$4 r=$5 rc py
	shift 5
	"$LVBENCH" "$wl" --lock "$lock" --containers "$c" "$@" --json >"$TMP/json" 2>"$TMP/err" \
		</dev/null
	rc=$?
	python3 "$TMP/rt.py" "$TMP/json" "$wl" "$lock" "$c" "$r" >"$TMP/py" 2>&1
	py=$?
	check "$desc" test $rc -eq 0 -a $py -eq 0 -a ! -s "$TMP/err"
	if [ $rc -ne 0 ] || [ $py -ne 0 ] || [ -s "$TMP/err" ]; then diag "$TMP/err" "$TMP/py"; fi
}

# RING_BYTES: the ceiling's rings, a container's share of the memory or its limit (per reader of
# its own file), at most half the memory in all.
RING_BYTES=$((16 << 20)) rt_json "readtwice --json: every required key, MB/s and ceiling > 0" \
	readtwice lruvec 2 2 --duration 1 --memory 64
RING_BYTES=$((16 << 20)) \
	rt_json "readonce --json: one reader per container, each with its own file" readonce \
	lruvec 2 1 --duration 0.5 --memory 64
head -c $((1 << 20)) /dev/urandom >"$TMP/data"
RING_BYTES=$((16 << 20)) rt_json "readtwice --file: a small real file, read and re-read" \
	readtwice lruvec 2 2 --duration 0.5 --memory 64 --file "$TMP/data"
RING_BYTES=$((8 << 20)) rt_json "readtwice --limit --readers 3 --file-size 1G, node design" \
	readtwice node 1 3 --duration 0.5 --memory 64 --limit 8 --readers 3 --file-size 1G
RING_BYTES=$((4 << 20)) rt_json "readonce --readers 2 --limit 8: a ring per reader, half a limit" \
	readonce lruvec 2 2 --duration 0.5 --memory 64 --readers 2 --limit 8
RING_BYTES=$((8 << 20)) rt_json "readonce --readers 2: rings capped at half the memory in all" \
	readonce lruvec 2 2 --duration 0.5 --memory 64 --readers 2

# --pin: the harness fails the run if a pinned thread is seen on another CPU (at its first and
# last step), so with two CPUs or more in the mask an ignored pin shows as a failure.
mapfile -t CPUS < <(python3 -c 'import os; print(*sorted(os.sched_getaffinity(0)), sep="\n")')
expect=$(python3 -c 'import sys; c = sys.argv[1:]; print([int(c[i % len(c)]) for i in range(3)])' \
	"${CPUS[@]}")
# Three containers of 64 MiB: rings of a sixth of it, in whole pages.
PIN_EXPECT=$expect RING_BYTES=$((64 * 1048576 / 6 / 4096 * 4096)) \
	rt_json "readtwice --pin: each container's readers on the CPU it names, $expect" \
	readtwice lruvec 3 2 --duration 0.5 --memory 64 --pin
taskset -c "${CPUS[0]}" "$LVBENCH" readtwice --pin --containers 2 --duration 0.3 --memory 64 \
	--json >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && [ ! -s "$TMP/err" ] && grep -q "\"pin_cpus\":\[${CPUS[0]}, ${CPUS[0]}\]" "$TMP/out"
verdict "readtwice --pin under taskset -c ${CPUS[0]}: both containers on that CPU" $?

"$LVBENCH" readtwice --duration 0.5 --containers 2 --memory 64 >"$TMP/out" 2>"$TMP/err"
rc=$?
summary='^readtwice: containers=2 readers=4 mean_mb_per_s_reader=[0-9]+\.[0-9] total_mb_per_s=[0-9]+\.[0-9]'
[ $rc -eq 0 ] && grep -Eq "$summary\$" "$TMP/out" &&
	grep -q '^MB/s per reader' "$TMP/out" &&
	grep -Eq '^lruvec +[0-9.]+ MB/s = +[0-9.]+% of the ceiling$' "$TMP/out" &&
	grep -q "ring out; the first reader to reach it memsets it first" "$TMP/out" &&
	grep -Eq '^Memory: configured 64 MiB .* VmHWM [0-9.]+ MiB' "$TMP/out"
verdict "readtwice: summary line, MB/s per reader, share of a ceiling zeroing on first touch, memory used" $?

# Fewer threads than readers (--threads): every file of every container is read in (32 pages
# each of 128 KiB files, 16 of 64 KiB ones), by 2 and 3 threads.
for c in "readtwice 8 2 128K 2 256" "readonce 4 2 64K 3 128"; do
	read -r w nc nr size nt pages <<<"$c"
	"$LVBENCH" "$w" --containers "$nc" --readers "$nr" --threads "$nt" --file-size "$size" \
		--memory 64 --duration 0.3 --json >"$TMP/json" 2>"$TMP/err"
	rc=$?
	python3 - "$TMP/json" "$nc" "$nr" "$nt" "$pages" >"$TMP/py" 2>&1 <<'PY'
import json, sys
o = json.load(open(sys.argv[1]))
nc, nr, nt, pages = (int(a) for a in sys.argv[2:])
assert o["check"] == "ok" and o["threads"] == nt and o["readers"] == nc * nr, o
assert o["turn_reads"] == 32 and "ceiling_mb_per_s" not in o, o
assert o["vmstat"]["pgpgin"] == pages, "pgpgin %d, not %d" % (o["vmstat"]["pgpgin"], pages)
PY
	check "$w --containers $nc --readers $nr --threads $nt: all $pages pages read in" \
		test $rc -eq 0 -a $? -eq 0
	[ $rc -eq 0 ] || diag "$TMP/err"
	diag "$TMP/py"
done

# ---- compare --by a knob: cost, batch, batch-large, folio-order, lock-sites -----------------------

# "by|workload and options|columns|key=value checked in every object": one line per column, the
# column's own settings in it, checks ok.
knobs=(
	"cost|churn --containers 2 --threads 2|locked,vmstat|lock=lruvec"
	"cost|churn --containers 2 --threads 2 --lock node|locked,vmstat|lock=node"
	"batch|churn --containers 2 --threads 2 --batch-large on|batch-15,batch-31|batch_large=True"
	"batch-large|readonce --containers 1 --memory 32 --folio-order 4|large-on,large-off|folio_order=4"
	"folio-order|readtwice --containers 1 --memory 32|order-0,order-2,order-4|lock=lruvec"
	"lock-sites|churn --containers 2 --threads 4|sites-off,sites-on|lock=lruvec"
)
for k in "${knobs[@]}"; do
	IFS='|' read -r by args cols want <<<"$k"
	# shellcheck disable=SC2086
	"$LVBENCH" compare $args --by "$by" --duration 0.1 --rounds 1 --json >"$TMP/json" \
		2>"$TMP/err" </dev/null
	rc=$?
	python3 - "$TMP/json" "$by" "$cols" "$want" >"$TMP/py" 2>&1 <<'PY'
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
by, cols, want = sys.argv[2], sys.argv[3].split(","), sys.argv[4]
assert [o["column"] for o in objs] == cols, [o["column"] for o in objs]
key, val = want.split("=")
for o in objs:
    assert str(o[key]) == val, (key, o[key])
    assert o["check"] == "ok", o["check"]
knob = {"cost": ("scan_cost", ["locked", "vmstat"]), "batch": ("batch", [15, 31]),
        "batch-large": ("batch_large", [True, False]),
        "folio-order": ("folio_order", [0, 2, 4]),
        "lock-sites": ("record_lock_sites", [False, True])}[by]
assert [o[knob[0]] for o in objs] == knob[1], [o[knob[0]] for o in objs]
for o in objs:
    # Nothing is recorded with the table off: not even a contended acquisition.
    assert o["record_lock_sites"] or o["lock_sites"] == [], o["lock_sites"]
PY
	py=$?
	check "compare ${args%% *} --by $by --json: columns $cols, each with its own setting" \
		test $rc -eq 0 -a $py -eq 0
	if [ $rc -ne 0 ] || [ $py -ne 0 ]; then diag "$TMP/err" "$TMP/py"; fi
done

# The tables: three columns, named in the header, the lock table and the ratio lines.
"$LVBENCH" compare readtwice --by folio-order --containers 1 --memory 32 --duration 0.2 \
	--rounds 1 >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && grep -q '^lvbench compare readtwice: order-0 vs order-2 vs order-4 page cache folios, lruvec lru_lock, ABCABC order, 1 round of 0.2 s per setting$' "$TMP/out" &&
	grep -Eq '^ +order-0 +order-2 +order-4$' "$TMP/out" &&
	grep -q 'Lock statistics, order-4 setting' "$TMP/out" &&
	grep -Eq '^wait per MB \(ns\) +[0-9.]+ +[0-9.]+ +[0-9.]+$' "$TMP/out" &&
	grep -q '^order-0/order-4: contended/acquired ' "$TMP/out" &&
	grep -q 'folios of 2^N pages by column' "$TMP/out" &&
	grep -q 'lock=lruvec column=order-2$' "$TMP/out" && ! grep -q 'Published readtwice' "$TMP/out"
verdict "compare readtwice --by folio-order: three columns, header, lock tables, summary lines" $?
"$LVBENCH" compare churn --by batch --scan-cost vmstat --containers 2 --threads 2 \
	--duration 0.1 --rounds 1 >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && grep -q '^lvbench compare churn: batch-15 vs batch-31 per-CPU batches, lruvec lru_lock, ABAB order, ' "$TMP/out" &&
	grep -q '^1 node x 256 MiB, futex locks, batch 15/31, seed 1, scan cost vmstat$' "$TMP/out"
verdict "compare churn --by batch --scan-cost vmstat: the columns and the settings line" $?
"$LVBENCH" compare churn --by cost --sweep 1,2 --threads 2 --duration 0.1 --rounds 1 \
	>"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && grep -q '^lvbench compare churn --sweep: locked vs vmstat scan cost, lruvec lru_lock, ABAB order' "$TMP/out" &&
	grep -Eq '^containers +threads +locked +vmstat +vmstat/locked +locked cont +vmstat cont +ceiling +locked% +vmstat%$' "$TMP/out" &&
	grep -Eq '^ +2 +2 +[0-9.]+ +[0-9.]+ +[0-9.]+x ' "$TMP/out"
verdict "compare churn --by cost --sweep 1,2: a row per count, a column per setting" $?
"$LVBENCH" compare churn --by lock-sites --containers 2 --threads 4 --duration 0.1 --rounds 1 \
	>"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && grep -q '^lvbench compare churn: sites-off vs sites-on contention by call site, ' "$TMP/out" &&
	grep -A1 '^Lock contention by call site, sites-off setting' "$TMP/out" |
	grep -q '(not recorded: --lock-sites off)' &&
	! grep -A1 '^Lock contention by call site, sites-on setting' "$TMP/out" | grep -q 'not recorded'
verdict "compare churn --by lock-sites: the table is off in one column only" $?
"$LVBENCH" churn --lock-sites off --containers 2 --threads 2 --duration 0.1 >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && grep -q '^1 node x 256 MiB, futex locks, batch 31, seed 1, no call-site table$' "$TMP/out"
verdict "churn --lock-sites off: the settings line says so" $?

# ---- compare readtwice, --sweep, --plot --------------------------------------------------------

"$LVBENCH" compare readtwice --duration 1 --rounds 1 --containers 2 --memory 64 \
	>"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && grep -Eq '^ +node +lruvec$' "$TMP/out" &&
	grep -q '^Amean .*(   0.00%) .*%)$' "$TMP/out" &&
	grep -q 'Lock statistics, node design' "$TMP/out" &&
	grep -q 'Lock statistics, lruvec design' "$TMP/out" &&
	grep -Eq '^contended/acquired +[0-9.]+% +[0-9.]+%$' "$TMP/out" &&
	grep -q 'Alex Shi.* 123\.0 .* 144\.0' "$TMP/out" &&
	grep -q 'Daniel Jordan.* 220\.5 .* 356\.9' "$TMP/out" &&
	grep -Eq "$summary lock=node\$" "$TMP/out" &&
	grep -Eq "$summary lock=lruvec\$" "$TMP/out"
verdict "compare readtwice: both designs, lock tables, published numbers, summary lines" $?

"$LVBENCH" compare readtwice --sweep 1,2 --duration 0.5 --rounds 1 --memory 64 \
	>"$TMP/out" 2>"$TMP/err"
rc=$?
row='+[0-9.]+ +[0-9.]+ +[0-9.]+x +[0-9.]+% +[0-9.]+% +[0-9.]+ +[0-9.]+% +[0-9.]+%$'
[ $rc -eq 0 ] && grep -Eq "^ +1 +2 $row" "$TMP/out" && grep -Eq "^ +2 +4 $row" "$TMP/out" &&
	grep -q "^readtwice: 2 readers per container, " "$TMP/out" &&
	grep -q "^no memcg limit, kswapd on, 4096-byte reads, folios of 1 page$" "$TMP/out"
verdict "compare readtwice --sweep 1,2: the settings, one row per container count" $?

PATH=/nonexistent "$LVBENCH" compare readtwice --sweep 1 --plot "$TMP/p.svg" >"$TMP/out" \
	2>"$TMP/err"
rc=$?
if [ $rc -eq 1 ] && grep -q 'gnuplot' "$TMP/err" && [ ! -s "$TMP/out" ]; then
	ok "--plot without gnuplot: exit 1 naming gnuplot, before running anything"
else
	not_ok "--plot without gnuplot: exit 1 naming gnuplot, before running anything (exit $rc)"
	diag "$TMP/out" "$TMP/err"
fi

# With a (fake) gnuplot: an SVG that cannot be written, and a name that would smuggle
# commands into gnuplot's script, are refused before the sweep, and gnuplot never runs.
mkdir -p "$TMP/fakegp"
printf '#!/bin/sh\ntouch "%s/fakegp/ran"\n' "$TMP" >"$TMP/fakegp/gnuplot"
chmod +x "$TMP/fakegp/gnuplot"
PATH="$TMP/fakegp:$PATH" "$LVBENCH" compare readtwice --sweep 1 --plot "$TMP/nodir/p.svg" \
	>"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 1 ] && grep -q "cannot write '$TMP/nodir/p.svg'" "$TMP/err" && [ ! -s "$TMP/out" ] &&
	[ ! -e "$TMP/fakegp/ran" ]
verdict "--plot into a missing directory: exit 1 naming the file, before running anything" $?
PATH="$TMP/fakegp:$PATH" "$LVBENCH" compare readtwice --sweep 1 \
	--plot "$TMP/p.svg"$'\nsystem "touch '"$TMP"'/pwned"' >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 2 ] && grep -q 'control character' "$TMP/err" && [ ! -e "$TMP/pwned" ] &&
	[ ! -e "$TMP/fakegp/ran" ] && [ ! -e "$TMP/p.svg" ]
verdict "--plot with a newline in the name: exit 2, no gnuplot" $?

mkfifo "$TMP/fifo"
timeout 20 "$LVBENCH" readtwice --file "$TMP/fifo" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 2 ] && grep -q "not a non-empty regular file" "$TMP/err"
verdict "readtwice --file FIFO: exit 2 at once (not blocked opening it)" $?

if command -v gnuplot >/dev/null 2>&1; then
	"$LVBENCH" compare readtwice --sweep 1,2 --duration 0.3 --rounds 1 --memory 64 \
		--plot "$TMP/p.svg" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	[ $rc -eq 0 ] && grep -q '<svg' "$TMP/p.svg" && grep -q 'lruvec' "$TMP/p.svg"
	verdict "compare readtwice --sweep --plot: an SVG with both designs" $?
else
	ok "compare readtwice --sweep --plot # SKIP gnuplot is not installed"
fi

# ---- scale ---------------------------------------------------------------------------------------

# One object per count, in the sweep's order, with every key the help names (and the help names
# every key), the same threads at every count, the cost per op the median of the rounds' and its
# ratio to the first count's, the memory per memcg measured and the budget its formula.
cat >"$TMP/scale.py" <<'PY'
import json, re, sys
path, help_path, workload, counts, threads, rounds = sys.argv[1:]
KEYS = ["workload", "lock", "containers", "threads", "nodes", "memory_mib_per_node", "cpus",
        "threads_per_cpu", "cpu_slots", "duration_s", "rounds", "elapsed_s", "ops", "ops_per_sec", "ns_per_op",
        "ns_per_op_rounds", "ns_per_op_ratio", "lru_lock_acquired", "lru_lock_contended",
        "lru_lock_contended_fraction",
        "lru_lock_wait_per_op_ns", "memcg_bytes", "memcg_budget_bytes", "memcg_budget_met",
        "memcg_fixed_bytes", "memcg_node_bytes", "memcg_slot_bytes", "vm_hwm_kib", "check"]
OWN = {"churn": ["working_set", "limit_mib"],
       "readtwice": ["readers", "readers_per_container", "turn_reads", "file", "file_size"]}
text = " ".join(open(help_path).read().split())
for k in KEYS + OWN[workload]:
    assert re.search(r"[ (]%s[,;) ]" % k, text), "lvbench help scale does not name " + k
objs = [json.loads(l) for l in open(path)]
assert [o["containers"] for o in objs] == [int(c) for c in counts.split(",")], objs
first = objs[0]
for o in objs:
    for k in KEYS + OWN[workload]:
        assert k in o, "missing key %s: %r" % (k, o)
    assert o["workload"] == workload and o["lock"] == "lruvec" and o["check"] == "ok", o
    assert o["threads"] == (int(threads) if threads != "2cpus" else 2 * o["cpus"]), o
    r = o["ns_per_op_rounds"]
    assert o["rounds"] == int(rounds) and len(r) == int(rounds), o
    assert o["ops"] > 0 and o["ops_per_sec"] > 0 and min(r) <= o["ns_per_op"] <= max(r), o
    # threads / (ops per second) over all rounds lies within the rounds' own.
    assert min(r) * 0.999 <= o["threads"] * 1e9 / o["ops_per_sec"] <= max(r) * 1.001, o
    assert abs(o["ns_per_op_ratio"] - o["ns_per_op"] / first["ns_per_op"]) < 0.002, o
    assert 0 <= o["lru_lock_contended"] <= o["lru_lock_acquired"], o
    assert o["lru_lock_acquired"] > 0, o
    assert abs(o["lru_lock_contended_fraction"] -
               o["lru_lock_contended"] / o["lru_lock_acquired"]) <= 0.0005, o
    # A memcg holds an lruvec per node (with its locks, well over 512 bytes), far below 64 KiB.
    assert 512 * o["nodes"] < o["memcg_bytes"] < 65536, o
    assert o["memcg_node_bytes"] > 512, o
    assert o["memcg_budget_bytes"] == 8192 + 2048 * o["nodes"] + 256 * o["cpu_slots"], o
    assert o["memcg_budget_met"] == (o["memcg_bytes"] <= o["memcg_budget_bytes"]), o
assert first["ns_per_op_ratio"] == 1, first
PY
"$LVBENCH" help scale >"$TMP/scale-help"
"$LVBENCH" scale churn --sweep 1,4 --duration 0.2 --memory 16 --json >"$TMP/json" 2>"$TMP/err"
rc=$?
python3 "$TMP/scale.py" "$TMP/json" "$TMP/scale-help" churn 1,4 2cpus 3 >"$TMP/py" 2>&1
check "scale churn --sweep 1,4 --json: an object per count, every key, 2 x CPUs threads" \
	test $rc -eq 0 -a $? -eq 0 -a ! -s "$TMP/err"
[ $rc -eq 0 ] || diag "$TMP/err"
diag "$TMP/py"
"$LVBENCH" scale readtwice --sweep 1,3 --threads 2 --rounds 2 --duration 0.2 --memory 16 --json \
	>"$TMP/json" 2>"$TMP/err"
rc=$?
python3 "$TMP/scale.py" "$TMP/json" "$TMP/scale-help" readtwice 1,3 2 2 >"$TMP/py" 2>&1
check "scale readtwice --sweep 1,3 --threads 2 --rounds 2 --json: every key, 2 threads" \
	test $rc -eq 0 -a $? -eq 0 -a ! -s "$TMP/err"
[ $rc -eq 0 ] || diag "$TMP/err"
diag "$TMP/py"

# The table: the settings, the budget's terms, one row per count.
"$LVBENCH" scale readtwice --sweep 2,8 --threads 4 --rounds 1 --duration 0.2 --memory 32 \
	>"$TMP/out" 2>"$TMP/err"
rc=$?
row='+4 +[0-9]+ +[0-9.]+ +[0-9.]+x +[0-9.]+% +[0-9]+ +[0-9]+ +(yes|no)$'
[ $rc -eq 0 ] &&
	grep -q '^lvbench scale readtwice: lruvec lru_lock, 1 round of 0.2 s per count, the counts ' \
		"$TMP/out" && grep -q '^4 threads serving the readers in turns of 32 reads$' "$TMP/out" &&
	grep -Eq '^2 KiB x 1 node \+ 256 B x [0-9]+ CPU slots?\. A memcg.s heap splits into ' "$TMP/out" &&
	grep -Eq '^containers +threads +ops/s +ns/op +x first +cont +memcg B +budget B +met$' "$TMP/out" &&
	grep -Eq "^ +2 +4 +[0-9]+ +[0-9.]+ +1\.00x +[0-9.]+% +[0-9]+ +[0-9]+ +(yes|no)\$" "$TMP/out" &&
	grep -Eq "^ +8 $row" "$TMP/out"
verdict "scale readtwice --sweep 2,8: the settings, the budget, a row per count" $?

# ---- scripts/kernel-readtwice.sh ---------------------------------------------------------------

KRT=scripts/kernel-readtwice.sh
check "kernel-readtwice.sh: bash -n" bash -n "$KRT"

rc=0
for args in "--size 0" "--size 0G" "--size 1Q" "--size 1GB" "--size 1.5G" \
	"--size 99999999999999999999" "--containers 0" "--readers 1025" "--duration 0" "--limit 0" \
	"--limit 1000K" "--limit 8MB" "--dir /nonexistent" "--bogus"; do
	# shellcheck disable=SC2086
	"$KRT" $args >"$TMP/out" 2>"$TMP/err"
	if ! [ $? -eq 2 ] || ! grep -q -- "${args%% *}" "$TMP/err" || [ -s "$TMP/out" ]; then
		rc=1
		diag "$TMP/err"
	fi
done
verdict "kernel-readtwice.sh: usage errors exit 2 naming the option, before any dd" $rc

# dd picks the unit of its rate; the rate is taken from bytes and seconds unless those are 0.
printf '3000000000 bytes (3.0 GB, 2.8 GiB) copied, 2 s, 1.5 GB/s\n' >"$TMP/k.dd-0-1"
printf '1+0 records in\n1+0 records out\n4096 bytes (4.1 kB, 4.0 KiB) copied, 0.004096 s, 1.0 MB/s\n' \
	>"$TMP/k.dd-0-2"
printf '0 bytes copied, 0 s, 500 kB/s\n' >"$TMP/k.dd-1-1"
printf '0 bytes copied, 0 s, 2.5 GB/s\n' >"$TMP/k.dd-1-2"
"$KRT" --containers 2 --parse "$TMP"/k.dd-* >"$TMP/out" 2>"$TMP/err"
rc=$?
want='readtwice: containers=2 readers=4 mean_mb_per_s_reader=1000.4 total_mb_per_s=4001.5'
[ $rc -eq 0 ] && grep -qx "$want" "$TMP/out"
verdict "kernel-readtwice.sh --parse: kB/s, MB/s and GB/s lines normalised to MB/s" $?

"$KRT" --containers 2 --duration 0.5 --no-memcg --size 64GiB >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && grep -Eq "$summary\$" "$TMP/out" && grep -q 'sparse files of 64GiB on ' "$TMP/out"
verdict "kernel-readtwice.sh --size 64GiB: a short run prints the summary line of lvbench readtwice" $?

taskset -c "${CPUS[0]}" "$KRT" --containers 2 --duration 0.3 --no-memcg --pin >"$TMP/out" \
	2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && grep -q "^kernel-readtwice: pinned .* on CPU ${CPUS[0]} ${CPUS[0]}\$" "$TMP/out" &&
	grep -Eq "$summary\$" "$TMP/out"
verdict "kernel-readtwice.sh --pin under taskset -c ${CPUS[0]}: both containers on that CPU" $?

# A fake taskset: the affinity list it prints, and the pins the script asks for (one per
# container, in its subshell; the dd inherit it).
mkdir -p "$TMP/bin"
cat >"$TMP/bin/taskset" <<'SH'
#!/bin/sh
if [ $# -eq 2 ]; then echo "pid $2's current affinity list: $FAKE_CPUS"; else echo "$2" >>"$FAKE_LOG"; fi
SH
chmod +x "$TMP/bin/taskset"
: >"$TMP/pins"
PATH="$TMP/bin:$PATH" FAKE_CPUS=0-3,8-11 FAKE_LOG="$TMP/pins" "$KRT" --containers 5 \
	--duration 0.3 --no-memcg --pin >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && grep -q "^kernel-readtwice: pinned .* on CPU 0 1 2 3 8\$" "$TMP/out" &&
	[ "$(sort -n "$TMP/pins" | tr '\n' ' ')" = "0 1 2 3 8 " ]
verdict "kernel-readtwice.sh --pin over CPUs 0-3,8-11: containers on 0 1 2 3 8, each pinned" $?
PATH="$TMP/bin:$PATH" FAKE_CPUS=0-7:2 FAKE_LOG="$TMP/pins" "$KRT" --containers 2 \
	--duration 0.3 --no-memcg --pin >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 1 ] && grep -q "cannot read this shell's CPU affinity" "$TMP/err" && [ ! -s "$TMP/out" ]
verdict "kernel-readtwice.sh --pin with a list it cannot read: exit 1 before any dd" $?

"$KRT" --containers 1 --duration 0.5 --limit 64 >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ $rc -ne 0 ] && grep -q 'needs memory cgroups' "$TMP/err"; then
	ok "kernel-readtwice.sh --limit # SKIP memory cgroups cannot be created here"
elif [ $rc -eq 0 ] && grep -q 'cgroups: v[12], limit 64 MiB' "$TMP/out" &&
	grep -Eq '^readtwice: containers=1 readers=2 ' "$TMP/out"; then
	ok "kernel-readtwice.sh --limit: inside memory cgroups with a limit"
else
	not_ok "kernel-readtwice.sh --limit: inside memory cgroups with a limit (exit $rc)"
	diag "$TMP/out" "$TMP/err"
fi

# ---- scripts/readtwice-vs-kernel.sh ------------------------------------------------------------

RVK=scripts/readtwice-vs-kernel.sh
check "readtwice-vs-kernel.sh: bash -n" bash -n "$RVK"

# Fakes of both sides: each logs its arguments in one file (to see the alternation and the
# shape each was given) and prints a summary line; the fake lvbench takes its rates in turn
# from FAKE_RATES (and its ceilings per reader from FAKE_CEILINGS, if set) and prints refaults.
cat >"$TMP/bin/fake-lvbench" <<'SH'
#!/bin/sh
echo "lvbench $*" >>"$FAKE_LOG"
n=$(grep -c '^lvbench' "$FAKE_LOG")
rate=$(echo "$FAKE_RATES" | cut -d' ' -f"$n")
if [ -n "${FAKE_CEILINGS:-}" ]; then
	c=$(echo "$FAKE_CEILINGS" | cut -d' ' -f"$n")
	echo "ceiling                             99999.0 MB/s ($c per reader)"
fi
echo "workingset_refault $((n * 100))"
echo "readtwice: containers=2 readers=4 mean_mb_per_s_reader=$rate total_mb_per_s=1.0"
SH
cat >"$TMP/bin/fake-kernel" <<'SH'
#!/bin/sh
echo "kernel $*" >>"$FAKE_LOG"
[ -z "${FAKE_FAIL:-}" ] || { echo "no dd reported" >&2; exit 1; }
[ -z "${FAKE_WARN:-}" ] || echo "kernel-readtwice: warning: $FAKE_WARN" >&2
echo "readtwice: containers=2 readers=4 mean_mb_per_s_reader=1800.0 total_mb_per_s=7200.0"
SH
chmod +x "$TMP/bin/fake-lvbench" "$TMP/bin/fake-kernel"
fakes=(--lvbench "$TMP/bin/fake-lvbench" --kernel "$TMP/bin/fake-kernel")

: >"$TMP/log"
FAKE_LOG="$TMP/log" FAKE_RATES="9000.0 7000.0 11000.0 8000.0" "$RVK" --rounds 4 --pin \
	"${fakes[@]}" >"$TMP/out" 2>"$TMP/err"
rc=$?
lv_args='lvbench readtwice --containers 2 --readers 2 --duration 5 --limit 512 --pin'
lv_args+=' --folio-order 6'
k_args='kernel --containers 2 --readers 2 --duration 5 --limit 512 --pin'
want='readtwice-vs-kernel: containers=2 readers=4 rounds=4 lvbench_mb_per_s_reader=8500.0'
want+=' kernel_mb_per_s_reader=1800.0 ratio=4.72 at_target=2/4 target=5'
[ $rc -eq 0 ] && grep -qx "$want" "$TMP/out" &&
	grep -Eq '^ +3 +11000\.0 +1800\.0 +6\.11x +- +- +300$' "$TMP/out" &&
	! grep -q '^bound' "$TMP/out" &&
	[ "$(uniq -c "$TMP/log" | awk '{ print $1 }' | sort -u)" = 1 ] &&
	[ "$(sort -u "$TMP/log")" = "$k_args"$'\n'"$lv_args" ] &&
	[ "$(head -n 1 "$TMP/log")" = "$lv_args" ]
verdict "readtwice-vs-kernel.sh: alternation, one shape, an even count's medians, rounds at 5x" $?

# The ceiling's median over the kernel's is the bound; whether it allows the target is said.
: >"$TMP/log"
FAKE_LOG="$TMP/log" FAKE_RATES="4000.0 4500.0 4200.0" FAKE_CEILINGS="5000.0 6300.0 5400.0" \
	"$RVK" --rounds 3 "${fakes[@]}" >"$TMP/out" 2>"$TMP/err"
rc=$?
want='readtwice-vs-kernel: containers=2 readers=4 rounds=3 lvbench_mb_per_s_reader=4200.0'
want+=' kernel_mb_per_s_reader=1800.0 ratio=2.33 at_target=0/3 target=5'
want+=' ceiling_mb_per_s_reader=5400.0 bound=3.00'
[ $rc -eq 0 ] && grep -qx "$want" "$TMP/out" &&
	grep -Eq '^ +2 +4500\.0 +1800\.0 +2\.50x +6300\.0 +3\.50x +200$' "$TMP/out" &&
	grep -Eq '^median +4200\.0 +1800\.0 +2\.33x +5400\.0 +3\.00x ' "$TMP/out" &&
	grep -q '^bound: .* is 3.00x the kernel here; a ratio of 5x would need' "$TMP/out"
rc1=$?
FAKE_LOG="$TMP/log" FAKE_RATES="9000.0" FAKE_CEILINGS="9900.0" "$RVK" --rounds 1 "${fakes[@]}" \
	>"$TMP/out" 2>"$TMP/err" &&
	grep -q '^bound: .* is 5.50x the kernel here; the target is within it$' "$TMP/out" &&
	grep -q ' ratio=5.00 at_target=1/1 target=5 ceiling_mb_per_s_reader=9900.0 bound=5.50$' \
		"$TMP/out"
verdict "readtwice-vs-kernel.sh: the ceiling's column and the bound, below and above the target" \
	$((rc1 | $?))

: >"$TMP/log"
FAKE_LOG="$TMP/log" FAKE_RATES="5000.0" "$RVK" --rounds 1 --limit 0 --target 2.5 "${fakes[@]}" \
	-- --memory 64 >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && grep -q 'ratio=2.78 at_target=1/1 target=2.5$' "$TMP/out" &&
	[ "$(cat "$TMP/log")" = "lvbench readtwice --containers 2 --readers 2 --duration 5 --memory 64
kernel --containers 2 --readers 2 --duration 5" ]
verdict "readtwice-vs-kernel.sh: options after -- replace lvbench's, --limit 0 is no limit" $?

: >"$TMP/log"
FAKE_LOG="$TMP/log" FAKE_RATES="5000.0" "$RVK" --rounds 1 --limit 1G "${fakes[@]}" >"$TMP/out" \
	2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && [ "$(grep -c -- '--limit 1024' "$TMP/log")" -eq 2 ]
verdict "readtwice-vs-kernel.sh --limit 1G: both sides get --limit 1024 (MiB)" $?

: >"$TMP/log"
FAKE_LOG="$TMP/log" FAKE_RATES="1 2 3 4 5 6 7 8 9" FAKE_WARN="on tmpfs" "$RVK" --rounds 08 \
	--containers 09 --dir "$TMP" "${fakes[@]}" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && [ "$(grep -c '^lvbench .*--containers 9 ' "$TMP/log")" -eq 8 ] &&
	[ "$(grep -c "^kernel --containers 9 .* --dir $TMP\$" "$TMP/log")" -eq 8 ] &&
	grep -q 'rounds=8 ' "$TMP/out" && [ "$(grep -c 'warning: on tmpfs' "$TMP/err")" -eq 8 ]
verdict "readtwice-vs-kernel.sh: counts with leading zeros are decimal; --dir and warnings pass" $?

: >"$TMP/log"
FAKE_LOG="$TMP/log" FAKE_RATES="9000.0 9000.0" FAKE_FAIL=1 "$RVK" --rounds 2 "${fakes[@]}" \
	>"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 1 ] && grep -q 'kernel failed (exit 1)' "$TMP/err" &&
	grep -q 'no dd reported' "$TMP/err" &&
	! grep -q 'median' "$TMP/out" && [ "$(wc -l <"$TMP/log")" -eq 2 ]
verdict "readtwice-vs-kernel.sh: a failed run stops it with exit 1 and shows that run's output" $?

rc=0
for args in "--rounds 0" "--target 0" "--target x" "--limit -1" "--limit 1000K" "--limit 1GB" \
	"--lvbench /nonexistent" "--bogus"; do
	# shellcheck disable=SC2086
	"$RVK" $args >"$TMP/out" 2>"$TMP/err"
	[ $? -eq 2 ] && grep -q -- "${args%% *}" "$TMP/err" && [ ! -s "$TMP/out" ] || rc=1
done
verdict "readtwice-vs-kernel.sh: usage errors exit 2 before running anything" $rc

"$RVK" --rounds 1 --containers 1 --limit 0 --duration 0.3 --lvbench "$LVBENCH" -- --memory 64 \
	--file-size 1G >"$TMP/out" 2>"$TMP/err"
rc=$?
want='^readtwice-vs-kernel: containers=1 readers=2 rounds=1 lvbench_mb_per_s_reader=[0-9]+\.[0-9]'
want+=' kernel_mb_per_s_reader=[0-9]+\.[0-9] ratio=[0-9]+\.[0-9]{2} at_target=[01]/1 target=5'
want+=' ceiling_mb_per_s_reader=[0-9]+\.[0-9] bound=[0-9]+\.[0-9]{2}$'
[ $rc -eq 0 ] && grep -Eq "$want" "$TMP/out"
verdict "readtwice-vs-kernel.sh: a short real round of both sides" $?

# ---- aim9 -------------------------------------------------------------------------------------

# One object per design: the keys of the issue, the mmtests statistics in order, every
# iteration of every container, ops and faults consistent with the calls made.
cat >"$TMP/aim9.py" <<'PY'
import json, sys
path, test, locks, containers, iterations = sys.argv[1], sys.argv[2], sys.argv[3].split(","), \
    int(sys.argv[4]), int(sys.argv[5])
objs = [json.loads(l) for l in open(path).read().splitlines()]
assert [o["lock"] for o in objs] == locks, [o["lock"] for o in objs]
per_call = {"page_test": 1700, "brk_test": 17000}[test]
for o in objs:
    for k in ("test", "lock", "containers", "iterations", "ops_per_sec", "locks",
              "pages_per_sec", "iteration_ops_per_sec", "counters", "check"):
        assert k in o, "missing key " + k
    assert o["workload"] == "aim9" and o["test"] == test, o
    assert o["containers"] == containers and o["threads"] == containers, o
    assert o["iterations"] == iterations and o["ops_per_call"] == per_call, o
    st = o["ops_per_sec"]
    for k in ("min", "max", "hmean", "stddev", "coeffvar", "bhmean50", "bhmean95", "bhmean99"):
        assert k in st, "ops_per_sec without " + k
    assert all(st[k] > 0 for k in ("min", "max", "hmean", "bhmean50", "bhmean95")), st
    eps = 1e-6 * st["max"] + 0.01
    assert st["min"] <= st["hmean"] + eps and st["hmean"] <= st["max"] + eps, st
    assert st["hmean"] <= st["bhmean95"] + eps <= st["bhmean50"] + 2 * eps, st
    assert st["stddev"] >= 0 and st["coeffvar"] >= 0, st
    its = o["iteration_ops_per_sec"]
    assert len(its) == containers * o["rounds"], "one array per container and round: %r" % its
    assert all(len(g) == iterations and min(g) > 0 for g in its), its
    c = o["counters"]
    assert c["calls"] > 0 and o["ops"] == c["calls"] * per_call, (o["ops"], c)
    lru = sum(l["acquired"] for l in o["locks"] if l["name"] in ("lruvec", "node"))
    mm = [l for l in o["locks"] if l["name"] == "mm"][0]
    assert mm["acquired"] > o["ops"], mm
    if test == "page_test":
        assert c["page_faults"] == 1600 * c["calls"], c
        assert o["pages_per_sec"] > 0 and lru > 0, (o["pages_per_sec"], lru)
    else:
        assert c["page_faults"] == 0 and o["pages_per_sec"] is None and lru == 0, (c, lru)
    assert o["check"] == "ok"
PY

aim9_json() { # aim9_json DESCRIPTION TEST LOCKS CONTAINERS ITERATIONS ARGS...
	local desc=$1 test=$2 locks=$3 c=$4 it=$5 rc py
	shift 5
	"$LVBENCH" "$@" --test "$test" --containers "$c" --iterations "$it" --json \
		>"$TMP/json" 2>"$TMP/err" </dev/null
	rc=$?
	python3 "$TMP/aim9.py" "$TMP/json" "$test" "$locks" "$c" "$it" >"$TMP/py" 2>&1
	py=$?
	check "$desc" test $rc -eq 0 -a $py -eq 0 -a ! -s "$TMP/err"
	if [ $rc -ne 0 ] || [ $py -ne 0 ] || [ -s "$TMP/err" ]; then diag "$TMP/err" "$TMP/py"; fi
}

aim9_json "aim9 --test page_test --json: statistics, iterations, faults per call" page_test \
	lruvec 2 3 aim9 --duration 0.1
aim9_json "aim9 --test brk_test --lock node --json: no page touched, no LRU lock taken" \
	brk_test node 1 4 aim9 --duration 0.1 --lock node
aim9_json "compare aim9 --json: node then lruvec, two rounds" page_test node,lruvec 1 2 \
	compare aim9 --duration 0.1 --rounds 2

"$LVBENCH" compare aim9 --duration 0.1 --iterations 3 --rounds 1 --containers 2 \
	>"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && grep -Eq '^ +node +lruvec$' "$TMP/out" &&
	grep -q '^lvbench compare aim9: node vs lruvec lru_lock, ABAB order, 1 round of 0.3 s ' \
		"$TMP/out" &&
	grep -Eq '^Hmean +page_test +[0-9.]+ \(   0\.00%\) +[0-9.]+ \( *-?[0-9.]+%\)$' "$TMP/out" &&
	grep -Eq '^CoeffVar +page_test +[0-9.]+ \(   0\.00%\) +[0-9.]+ \( *-?[0-9.]+%\)$' "$TMP/out" &&
	grep -Eq '^BHmean-99 +page_test ' "$TMP/out" &&
	grep -q 'Lock statistics, node design' "$TMP/out" &&
	grep -q 'Lock statistics, lruvec design' "$TMP/out" &&
	grep -Eq '^Hmean +page_test +34355\.40 \(   0\.00%\) +35810\.90 \(   4\.24%\)$' "$TMP/out" &&
	grep -Eq '^lruvec design: [0-9]+ pages faulted and released per second per thread$' \
		"$TMP/out"
verdict "compare aim9: a round of 3 iterations, both designs, lock tables, published numbers" $?

"$LVBENCH" compare aim9 --test brk_test --duration 0.1 --iterations 2 --rounds 1 \
	--containers 1 >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && grep -Eq '^Stddev +brk_test +[0-9.]+ \(   0\.00%\) ' "$TMP/out" &&
	grep -Eq '^Hmean +brk_test +95470\.00 \(   0\.00%\) +97769\.60 \(   2\.41%\)$' "$TMP/out" &&
	! grep -q 'pages faulted' "$TMP/out"
verdict "compare aim9 --test brk_test: brk_test rows and its published numbers" $?

# ---- numa -------------------------------------------------------------------------------------

# One object per mode: the keys of the issue, sane rates and latencies, 22 disables per op.
cat >"$TMP/numa.py" <<'PY'
import json, sys
path, modes, instances, nodes = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3]), \
    int(sys.argv[4])
objs = [json.loads(l) for l in open(path).read().splitlines()]
assert [o["disable"] for o in objs] == modes, [o["disable"] for o in objs]
for o in objs:
    for k in ("workload", "lock", "disable", "instances", "nodes", "bogo_ops_per_sec",
              "disable_latency_ns", "locks", "counters", "check"):
        assert k in o, "missing key " + k
    assert o["workload"] == "numa" and o["lock"] == "lruvec", o
    assert o["instances"] == instances and o["threads"] == instances, o
    assert o["nodes"] == nodes and o["containers"] == 1, o
    assert o["bogo_ops_per_sec"] > 0 and o["ops"] > 0, o
    assert abs(o["bogo_ops_per_sec"] - o["bogo_ops_per_sec_total"]) < 0.01, o
    lat = o["disable_latency_ns"]
    assert 0 < lat["p50"] <= lat["p99"] <= lat["max"], lat
    assert lat["calls"] == 22 * o["ops"] == o["counters"]["disable_pairs"], (lat, o["ops"])
    names = {l["name"] for l in o["locks"]}
    assert {"lruvec", "slot", "mm"} <= names, names
    for l in o["locks"]:
        for k in ("acquired", "contended", "wait_total_ns", "wait_max_ns"):
            assert k in l, "lock entry without " + k
    assert (o["pgmigrate_success"] > 0) == (nodes > 1), o["pgmigrate_success"]
    assert o["published_bogo_ops_per_sec"]["v5.18"] == 49.33, o
    assert o["check"] == "ok"
PY

numa_json() { # numa_json DESCRIPTION MODES INSTANCES NODES ARGS...
	local desc=$1 modes=$2 i=$3 nodes=$4 rc py
	shift 4
	"$LVBENCH" "$@" --instances "$i" --duration 0.3 --json >"$TMP/json" 2>"$TMP/err" </dev/null
	rc=$?
	python3 "$TMP/numa.py" "$TMP/json" "$modes" "$i" "$nodes" >"$TMP/py" 2>&1
	py=$?
	check "$desc" test $rc -eq 0 -a $py -eq 0 -a ! -s "$TMP/err"
	if [ $rc -ne 0 ] || [ $py -ne 0 ] || [ -s "$TMP/err" ]; then diag "$TMP/err" "$TMP/py"; fi
}

numa_json "numa --json (sweep, 2 nodes): bogo ops/s, disable latency, 22 disables per op" \
	sweep 2 2 numa
numa_json "numa --disable rcu --nodes 1 --json: nothing migrates, latencies ordered" \
	rcu 3 1 numa --disable rcu --nodes 1
numa_json "compare numa --json: the rcu object, then the sweep object" rcu,sweep 2 2 \
	compare numa --rounds 1

"$LVBENCH" compare numa --by disable --instances 2 --duration 0.3 --rounds 1 \
	>"$TMP/out" 2>"$TMP/err"
rc=$?
line='numa: instances=2 nodes=2 disable=%s lock=lruvec bogo_ops_per_sec=[0-9.]+ disable_p50_us=[0-9.]+'
# shellcheck disable=SC2059 # the format is ours
[ $rc -eq 0 ] && grep -Eq '^ +rcu +sweep$' "$TMP/out" &&
	grep -q 'Lock statistics, rcu mode' "$TMP/out" &&
	grep -q 'Lock statistics, sweep mode' "$TMP/out" &&
	grep -Eq '^Total +numa +[0-9.]+ \(   0\.00%\) +[0-9.]+ \( *-?[0-9.]+%\)$' "$TMP/out" &&
	grep -Eq 'v5\.17 .* 412\.88$' "$TMP/out" && grep -Eq 'v5\.18 .* 49\.33$' "$TMP/out" &&
	grep -Eq 'expedited .* 468\.81$' "$TMP/out" &&
	grep -q '412.88/49.33 = 8.4x' "$TMP/out" &&
	grep -Eq '^  measured ratio sweep/rcu = [0-9.]+/[0-9.]+ = [0-9.]+x$' "$TMP/out" &&
	grep -Eq "$(printf "$line" rcu)" "$TMP/out" &&
	grep -Eq "$(printf "$line" sweep)" "$TMP/out"
verdict "compare numa --by disable: both modes, lock tables, published numbers, ratio" $?

# compact: both designs, the readers' rate, the THP and compaction counters, the mechanisms.
"$LVBENCH" compare compact --memory 128 --duration 0.3 --rounds 1 --json >"$TMP/json" \
	2>"$TMP/err"
rc=$?
python3 - "$TMP/json" >"$TMP/py" 2>&1 <<'PY'
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert [o["lock"] for o in objs] == ["node", "lruvec"], [o["lock"] for o in objs]
for o in objs:
    assert o["check"] == "ok", o["check"]
    assert o["readers"] == 6 and o["thp_tenants"] == 2, (o["readers"], o["thp_tenants"])
    assert o["mb_per_s_reader_mean"] > 0 and len(o["mb_per_s_round_total"]) == 1
    assert o["thp_fault_alloc"] + o["thp_fault_fallback"] > 0, "no huge page fault"
    assert 0 <= o["thp_fault_success_pct"] <= 100
    assert o["compact_isolated"] > 0 or o["thp_fault_fallback"] == 0, "no compaction"
    assert o["scan_pfns_per_s"] > 0 and o["zero_2m_ns"] > 0 and o["thp_fault_ns"] > 0
    assert o["lru_acquired_per_mib_huge"] < o["lru_acquired_per_mib_small"]
PY
py=$?
check "compare compact --json: both designs, readers, THP and compaction counters, mechanisms" \
	test $rc -eq 0 -a $py -eq 0
if [ $rc -ne 0 ] || [ $py -ne 0 ]; then diag "$TMP/err" "$TMP/py"; fi

# swap: tenants over their limits swapping beside a reader, the data checked, the ceiling after
# each round; one tenant in memory, both designs with two, and a swap file removed afterwards.
cat >"$TMP/swap.py" <<'PY'
import json, sys
path, locks, tenants, device = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3]), sys.argv[4]
objs = [json.loads(l) for l in open(path) if l.strip()]
assert [o["lock"] for o in objs] == locks, [o["lock"] for o in objs]
for o in objs:
    assert o["check"] == "ok", o["check"]
    assert o["workload"] == "swap" and o["tenants"] == tenants == o["containers"], o["tenants"]
    assert o["threads"] == tenants + o["readers"] and o["readers"] == 1, (o["threads"], o["readers"])
    overflow = tenants * (o["region_mib"] - o["limit_mib"])
    assert o["swap_device"] == device and o["swap_mib"] == 8 + 2 * overflow, o
    assert o["region_mib"] == o["limit_mib"] * 3 // 2, (o["region_mib"], o["limit_mib"])
    c = o["counters"]
    assert c["setup_pswpout"] > 0 and c["setup_thp_fault_alloc"] > 0, c
    assert c["sweep_reads"] > 0 and c["sweep_writes"] > 0 and c["random_writes"] > 0, c
    assert c["file_reads"] > 0 and c["access_enomem"] == 0, c
    assert o["ops"] == c["sweep_reads"] + c["sweep_writes"] + c["random_writes"], o["ops"]
    assert o["pswpout"] > 0 and o["pswpin"] > 0 and o["pgsteal_anon"] > 0, o
    assert o["swap_read_error"] == 0 and o["swap_write_error"] == 0
    faults = o["pswpin"] - o["swap_ra"] + o["swap_ra_hit"]
    assert 0 < o["faults_per_s_total"] * o["elapsed_s"] <= faults * 1.01 + 1, (o["faults_per_s_total"], faults)
    assert len(o["faults_per_s_tenant"]) and o["faults_per_s_tenant"]["n"] == tenants * o["rounds"]
    assert o["accesses_per_s"] > 0 and o["swap_traffic_pages_per_s"] > 0
    assert abs(o["file_mb_per_s"] * o["elapsed_s"] - c["file_reads"] * 4096e-6) <= \
        c["file_reads"] * 4096e-6 / 200 + 0.01
    traffic = o["pswpin"] + o["pswpout"]  # elapsed_s has 3 decimals
    assert abs(o["swap_traffic_pages_per_s"] * o["elapsed_s"] - traffic) <= traffic / 200 + 1
    assert o["swap_ceiling_slices"] == 5 * o["rounds"], o["swap_ceiling_slices"]
    assert 0 < o["swap_ceiling_min"] <= o["swap_ceiling_max"], o
    assert o["swap_ceiling_pages_per_s"] > 0 and o["swap_ceiling_ratio"] > 0
    assert o["hwm_budget_mib"] == 64 + (o["swap_mib"] if device == "memory" else 0)
    assert o["vm_hwm_end_kib"] >= o["vm_hwm_kib"] > 0 and o["vm_hwm_budget_pct"] > 0
PY
swap_run() { # swap_run DESCRIPTION LOCKS TENANTS DEVICE ARGS...
	local desc=$1 locks=$2 t=$3 dev=$4 rc py
	shift 4
	"$LVBENCH" "$@" --memory 64 --duration 0.4 --json >"$TMP/json" 2>"$TMP/err" </dev/null
	rc=$?
	python3 "$TMP/swap.py" "$TMP/json" "$locks" "$t" "$dev" >"$TMP/py" 2>&1
	py=$?
	check "$desc" test $rc -eq 0 -a $py -eq 0 -a ! -s "$TMP/err"
	if [ $rc -ne 0 ] || [ $py -ne 0 ] || [ -s "$TMP/err" ]; then diag "$TMP/err" "$TMP/py"; fi
}
swap_run "swap --json: one tenant swaps, its data checked, faults and traffic against the ceiling" \
	lruvec 1 memory swap
swap_run "compare swap --json: the node object, then the lruvec object, two tenants" node,lruvec \
	2 memory compare swap --containers 2 --rounds 1
swap_run "swap --swap-file --json: the same on a file" lruvec 1 file swap \
	--swap-file "$TMP/swapfile"
check "swap --swap-file: the file is removed after the run" test ! -e "$TMP/swapfile"

"$LVBENCH" compare swap --containers 2 --memory 64 --duration 0.3 --rounds 1 >"$TMP/out" \
	2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && grep -Eq '^ +node +lruvec$' "$TMP/out" &&
	grep -q '^2 containers, 3 threads on ' "$TMP/out" &&
	grep -q '^faults/s per tenant (2 samples per design: tenants x rounds)$' "$TMP/out" &&
	grep -Eq '^Total +swap +[0-9.]+ \(   0\.00%\) +[0-9.]+ \( *-?[0-9.]+%\)$' "$TMP/out" &&
	grep -q 'Lock statistics, lruvec design' "$TMP/out" &&
	grep -Eq '^(node|lruvec): swap traffic: [0-9]+ pages/s, ceiling [0-9]+ pages/s, ratio [0-9.]+$' \
		"$TMP/out" &&
	[ "$(grep -Ec '^ +ceiling spread over 5 slices of 1 round: [0-9]+\.\.[0-9]+ pages/s' \
		"$TMP/out")" = 2 ] &&
	grep -Eq "^lruvec/node: faults/s [0-9.]+x, readers' MB/s [0-9.]+x; node/lruvec: LRU lock " \
		"$TMP/out" &&
	grep -Eq '^pswpin +[1-9][0-9]* +[1-9][0-9]*$' "$TMP/out" &&
	grep -Eq '^VmHWM [0-9]+ MiB = [0-9.]+% of memory \+ in-memory swap \(104 MiB; ' "$TMP/out"
verdict "compare swap: both designs, faults/s per tenant, swap counters, traffic and ceiling" $?

# ---- usemem ------------------------------------------------------------------------------------

# usemem: writers in one memcg at a quarter of their regions, swapping; in both cost modes, the
# vmstat one without an LRU lock wait at lru_note_cost (it takes no LRU lock there).
cat >"$TMP/usemem.py" <<'PY'
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
modes = sys.argv[2:]
assert [o["scan_cost"] for o in objs] == modes, [o["scan_cost"] for o in objs]
for o in objs:
    mode = o["scan_cost"]
    assert o["workload"] == "usemem" and o["check"] == "ok", o
    assert o["threads"] == 2 and o["containers"] == 1 and o["limit_mib"] == 4, o
    assert o["mb_per_s_total"] > 0 and o["counters"]["swap-in faults"] > 0, o["counters"]
    assert o["lru_wait_ms"] >= o["cost_sites_wait_ms"] >= o["lru_note_cost_wait_ms"] >= 0, o
    assert len(o["round_lru_wait_ms"]) == o["rounds"], o["round_lru_wait_ms"]
    lru = [s for s in o["lock_sites"] if s["type"] in ("lruvec", "node")]
    note = [s for s in lru if s["caller"] == "lru_note_cost"]
    assert mode == "locked" or (not note and o["lru_note_cost_wait_ms"] == 0), note
    total = sum(s["wait_total_ns"] for s in lru) / 1e6
    assert abs(total - o["lru_wait_ms"]) <= 0.01 + 1e-6 * total or o["rounds"] > 1, \
        (total, o["lru_wait_ms"])
PY
for mode in locked vmstat; do
	"$LVBENCH" usemem --threads 2 --memory 64 --duration 0.4 --scan-cost $mode --json \
		>"$TMP/json" 2>"$TMP/err" </dev/null
	rc=$?
	python3 "$TMP/usemem.py" "$TMP/json" $mode >"$TMP/py" 2>&1
	py=$?
	check "usemem --scan-cost $mode --json: swaps in one memcg, the LRU lock wait by site" \
		test $rc -eq 0 -a $py -eq 0 -a ! -s "$TMP/err"
	if [ $rc -ne 0 ] || [ $py -ne 0 ]; then diag "$TMP/err" "$TMP/py"; fi
done
"$LVBENCH" usemem --threads 2 --memory 64 --duration 0.3 >"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && grep -q '^LRU lock wait (ms, the median of 1 round; lruvec and node classes)$' \
	"$TMP/out" && grep -Eq '^total +[0-9.]+$' "$TMP/out" &&
	grep -Eq '^lru_note_cost +[0-9.]+$' "$TMP/out" && grep -q "usemem -n 16" "$TMP/out"
verdict "usemem: the LRU lock wait table" $?
# compare usemem runs --by cost by default: locked, then vmstat, each with its medians.
"$LVBENCH" compare usemem --threads 2 --memory 64 --duration 0.3 --rounds 2 --json \
	>"$TMP/json" 2>"$TMP/err" </dev/null
rc=$?
python3 "$TMP/usemem.py" "$TMP/json" locked vmstat >"$TMP/py" 2>&1
py=$?
check "compare usemem --json: --by cost, locked and vmstat columns, two rounds each" \
	test $rc -eq 0 -a $py -eq 0 -a ! -s "$TMP/err"
if [ $rc -ne 0 ] || [ $py -ne 0 ]; then diag "$TMP/err" "$TMP/py"; fi
"$LVBENCH" compare usemem --by cost --threads 2 --memory 64 --duration 0.3 --rounds 1 \
	>"$TMP/out" 2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && grep -q '^lvbench compare usemem: locked vs vmstat scan cost' "$TMP/out" &&
	grep -Eq '^ +locked +vmstat +vmstat/locked$' "$TMP/out" &&
	grep -Eq '^lru_note_cost \+ shrink_\* +[0-9.]+ +[0-9.]+ +[0-9.]+x$' "$TMP/out" &&
	grep -Eq '^lru_note_cost +[0-9.]+ +0\.0 +0\.00x$' "$TMP/out" &&
	grep -Eq 'Targets: total <= 0.6x \((met|not met)\)' "$TMP/out" &&
	grep -q '^Lock contention by call site, vmstat setting' "$TMP/out"
verdict "compare usemem --by cost: the call-site tables and the LRU lock wait per column" $?

# ---- reparent -----------------------------------------------------------------------------------

"$LVBENCH" compare reparent --pages 4096 --isolated 64 --containers 2 --duration 0.4 --rounds 1 \
	--json >"$TMP/json" 2>"$TMP/err" </dev/null
rc=$?
python3 - "$TMP/json" >"$TMP/py" 2>&1 <<'PY'
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
assert [o["lock"] for o in objs] == ["node", "lruvec"], [o["lock"] for o in objs]
for o in objs:
    assert o["check"] == "ok", o["check"]
    assert o["workload"] == "reparent" and o["readers"] == 4 and o["threads"] == 5, o
    # The victim's pages and its extra folios, all charged to it when it went.
    assert o["pages_reparented"] == 4096 + 64, o["pages_reparented"]
    assert o["isolated_at_removal"] == 64, o["isolated_at_removal"]
    assert o["remove_us"] > 0 and o["mb_per_s_reader_before"] > 0, o
    assert o["mb_per_s_reader_after"] > 0 and o["after_before_ratio"] > 0, o
    assert o["mb_per_s_reader"]["n"] == 4, o["mb_per_s_reader"]
PY
py=$?
check "compare reparent --json: the victim removed with its folios isolated, in both designs" \
	test $rc -eq 0 -a $py -eq 0
if [ $rc -ne 0 ] || [ $py -ne 0 ]; then diag "$TMP/err" "$TMP/py"; fi
"$LVBENCH" reparent --pages 2048 --isolated 0 --containers 1 --duration 0.4 >"$TMP/out" \
	2>"$TMP/err"
rc=$?
[ $rc -eq 0 ] && grep -Eq '^pages reparented +2048$' "$TMP/out" &&
	grep -Eq '^folios isolated during it +0$' "$TMP/out" &&
	grep -Eq '^after/before +[0-9.]+x$' "$TMP/out"
verdict "reparent: the removal table, no folio isolated" $?

# ---- page_fault2 --------------------------------------------------------------------------------

"$LVBENCH" page_fault2 --threads 2 --file-size 8M --duration 0.3 >"$TMP/out" 2>"$TMP/err" \
	</dev/null
rc=$?
[ $rc -eq 0 ] &&
	grep -q '^page_fault2: 2 threads, each mapping its own 8 MiB sparse file privately' \
		"$TMP/out" &&
	grep -Eq '^lruvec: [1-9][0-9]* faults/s in all, median round [1-9][0-9]*, [1-9][0-9]* iterations$' \
		"$TMP/out" &&
	grep -q '^Lock statistics, lruvec' "$TMP/out" && grep -Eq '^checks .* +ok$' "$TMP/out"
verdict "page_fault2: faults/s and iterations, the lock table, checks ok" $?

# compare's default: --by batch, 4 threads per CPU, the median rounds' ratio.
"$LVBENCH" compare page_fault2 --file-size 8M --duration 0.2 --rounds 2 --json >"$TMP/json" \
	2>"$TMP/err" </dev/null
rc=$?
python3 - "$TMP/json" >"$TMP/py" 2>&1 <<'PY'
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
assert [o["column"] for o in objs] == ["batch-15", "batch-31"], [o["column"] for o in objs]
assert [o["batch"] for o in objs] == [15, 31], [o["batch"] for o in objs]
for o in objs:
    assert o["check"] == "ok" and o["workload"] == "page_fault2", o
    assert o["threads"] == 4 * o["cpus"] and o["containers"] == 1, o
    assert o["file_size"] == 8 << 20 and o["iterations"] > 0, o
    assert o["faults_per_s_median_round"] > 0 and len(o["round_ops_per_sec"]) == 2, o
    sites = sum(s["contended"] for s in o["lock_sites"])
    classes = sum(l["contended"] for l in o["locks"])
    assert sites == classes, (sites, classes)
PY
py=$?
check "compare page_fault2 --json: batch-15 then batch-31, 4 threads per CPU, sites add up" \
	test $rc -eq 0 -a $py -eq 0
if [ $rc -ne 0 ] || [ $py -ne 0 ]; then diag "$TMP/err" "$TMP/py"; fi
"$LVBENCH" compare page_fault2 --by batch --file-size 8M --duration 0.2 --rounds 2 >"$TMP/out" \
	2>"$TMP/err" </dev/null
rc=$?
[ $rc -eq 0 ] && grep -Eq '^batch-31/batch-15, median rounds: [0-9]+\.[0-9]{3}x$' "$TMP/out" &&
	grep -q '^Lock contention by call site, batch-31 setting' "$TMP/out" &&
	grep -Eq '^batch-15: [1-9][0-9]* faults/s in all' "$TMP/out" &&
	grep -q '^Published (LKP, 2024, 104 threads): batch 15 -> 31' "$TMP/out"
verdict "compare page_fault2 --by batch: both columns, the ratio, the call-site tables" $?

# ---- readtwice --once (scripts/fidelity.sh) ------------------------------------------------------

# Two readers of one 8 MiB file, each once: every page is read in once and stays (no limit),
# and the JSON has the insertions (pgpgin) and the lists' sizes at the end.
"$LVBENCH" readtwice --once --containers 1 --file-size 8M --duration 0.5 --json >"$TMP/json" \
	2>"$TMP/err" </dev/null
rc=$?
python3 - "$TMP/json" >"$TMP/py" 2>&1 <<'PY'
import json, sys
o = json.loads(open(sys.argv[1]).readline())
assert o["check"] == "ok" and o["once"] is True, o
assert o["counters"]["wraps"] == 2, o["counters"]
assert o["vmstat"]["pgpgin"] == 2048, o["vmstat"]
# Listed, or still waiting in a CPU's lru_add batch.
lru = o["lru_pages"]
listed = lru["nr_active_file"] + lru["nr_inactive_file"]
assert 2048 - 31 * o["cpus"] <= listed <= 2048 and lru["nr_active_file"] > 0, lru
PY
py=$?
check "readtwice --once: each reader reads the file once; pgpgin and lru_pages in the JSON" \
	test $rc -eq 0 -a $py -eq 0
if [ $rc -ne 0 ] || [ $py -ne 0 ]; then diag "$TMP/err" "$TMP/py"; fi

# ---- readonce --passes (scripts/fidelity.sh's readseq) --------------------------------------------

# One reader reads an 8 MiB file twice in a 4 MiB container: the LRU is a FIFO for pages read
# once, so every page of the second pass was evicted before the reader came back to it and
# refaults, at a distance larger than the (empty) active list: none is activated.
"$LVBENCH" readonce --passes 2 --containers 1 --file-size 8M --limit 4 --duration 0.5 --json \
	>"$TMP/json" 2>"$TMP/err" </dev/null
rc=$?
python3 - "$TMP/json" >"$TMP/py" 2>&1 <<'PY'
import json, sys
o = json.loads(open(sys.argv[1]).readline())
assert o["check"] == "ok" and o["passes"] == 2 and o["once"] is False, o
assert o["counters"]["wraps"] == 2, o["counters"]
v = o["vmstat"]
assert v["pgpgin"] == 4096, v
assert v["workingset_refault"] == 2048 and v["workingset_activate"] == 0, v
assert v["pgactivate"] == 0 and v["pgsteal"] >= 4096 - 1024 - 31 * o["cpus"], v
PY
py=$?
check "readonce --passes 2: the second pass refaults every page, activates none" \
	test $rc -eq 0 -a $py -eq 0
if [ $rc -ne 0 ] || [ $py -ne 0 ]; then diag "$TMP/err" "$TMP/py"; fi

"$LVBENCH" readonce --once --passes 2 --duration 0.1 >"$TMP/out" 2>"$TMP/err" </dev/null
[ $? -eq 2 ] && [ ! -s "$TMP/out" ] &&
	grep -q -- "--once, --passes: --once is --passes 1, not 2" "$TMP/err"
verdict "readonce --once --passes 2: refused with exit 2, naming both options" $?

# ---- readtwice --readahead ------------------------------------------------------------------------

# One pass over an 8 MiB file in a 4 MiB container, with and without readahead: the same pages
# read in, the same refaults (none), whatever the window.
for ra in 0 32; do
	"$LVBENCH" readonce --once --readahead $ra --containers 1 --file-size 8M --limit 4 \
		--duration 0.3 --json >"$TMP/json.$ra" 2>"$TMP/err" </dev/null
	rc=$?
	python3 - "$TMP/json.$ra" $ra >"$TMP/py" 2>&1 <<'PY'
import json, sys
o = json.loads(open(sys.argv[1]).readline())
assert o["check"] == "ok" and o["readahead"] == int(sys.argv[2]), o
v = o["vmstat"]
assert v["pgpgin"] == 2048 and v["workingset_refault"] == 0, v
# Each miss reads up to 32 pages: all but about one in 32 of them ahead.
ra = int(sys.argv[2])
assert (v["file_ra"] == 0) if ra == 0 else (2048 * (ra - 1) // ra <= v["file_ra"] < 2048), v
PY
	py=$?
	check "readonce --readahead $ra: one pass reads every page in once" test $rc -eq 0 -a $py -eq 0
	if [ $rc -ne 0 ] || [ $py -ne 0 ]; then diag "$TMP/err" "$TMP/py"; fi
done
"$LVBENCH" readtwice --readahead 65 --duration 0.1 >"$TMP/out" 2>"$TMP/err" </dev/null
[ $? -eq 2 ] && [ ! -s "$TMP/out" ] && grep -q -- "--readahead" "$TMP/err"
verdict "readtwice --readahead 65: refused with exit 2, naming the option" $?

echo "1..$n"
[ $failed -eq 0 ]
