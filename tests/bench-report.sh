#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# scripts/bench-report.sh: a --quick run of two cheap tables against a copy of
# docs/benchmarks.md rewrites exactly those tables (machine line and commands included) and
# nothing else; a failed run, a run whose JSON reports a failed check, a run that prints no
# JSON and a missing marker each exit non-zero with the copy left byte for byte as it was.
# TAP; run from the top of the tree: prove -f tests/bench-report.sh  (BUILD selects the build dir).
# check's conditions are single-quoted on purpose: eval expands them when they run.
# shellcheck disable=SC2016
set -u

LVBENCH=${BUILD:-build}/lvbench
SCRIPT=scripts/bench-report.sh
DOC=docs/benchmarks.md
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

if [ ! -x "$LVBENCH" ]; then
	echo "Bail out! $LVBENCH is not built (make $LVBENCH)"
	exit 1
fi
LVBENCH=$(realpath "$LVBENCH")

# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"

# block FILE NAME - the lines between NAME's markers.
block() {
	awk -v a="<!-- bench:$2 -->" -v b="<!-- /bench:$2 -->" \
		'$0 == b { inside = 0 } inside { print } $0 == a { inside = 1 }' "$1"
}

# outside FILE NAME... - the file, byte for byte, without the lines between the markers of the
# NAMEs (a lost final newline or a changed byte anywhere else shows).
outside() {
	python3 - "$@" <<'EOF'
import sys

path, names = sys.argv[1], sys.argv[2:]
opens = {f"<!-- bench:{n} -->".encode() for n in names}
closes = {f"<!-- /bench:{n} -->".encode() for n in names}
inside = False
out = sys.stdout.buffer
for line in open(path, "rb").read().split(b"\n"):
    if line in closes:
        inside = False
    if not inside:
        out.write(line + b"\n")
    if line in opens:
        inside = True
EOF
}

count() { # count FILE STRING - lines equal to STRING
	awk -v s="$2" '$0 == s { c++ } END { print c + 0 }' "$1"
}

# fake NAME BODY - an executable lvbench stand-in.
fake() {
	printf '#!/usr/bin/env bash\n%s\n' "$2" >"$TMP/$1"
	chmod +x "$TMP/$1"
	echo "$TMP/$1"
}

echo "1..26"

# ---- usage -----------------------------------------------------------------------------------

"$SCRIPT" --help >"$TMP/help" 2>&1
rc=$?
check "--help exits 0 and lists every table" \
	eval '[ $rc -eq 0 ] && grep -q readtwice-ceiling "$TMP/help" && grep -q aim9-faults "$TMP/help" &&
	      grep -q "^  swap " "$TMP/help"'

"$SCRIPT" --only nosuch >/dev/null 2>"$TMP/err"
rc=$?
check "--only with an unknown table exits 2 naming it" \
	eval '[ $rc -eq 2 ] && grep -q nosuch "$TMP/err"'

cp "$DOC" "$TMP/doc.md"
LVBENCH=$(fake dry 'touch "'"$TMP"'/dry-ran"') "$SCRIPT" --dry-run --only churn --out "$TMP/doc.md" \
	>"$TMP/dry" 2>&1
rc=$?
check "--dry-run exits 0, prints the command and the machine, runs nothing, writes nothing" \
	eval '[ $rc -eq 0 ] && grep -q "compare churn --containers 16 --threads 32" "$TMP/dry" &&
	      grep -q "machine:" "$TMP/dry" && [ ! -e "$TMP/dry-ran" ] && cmp -s "$DOC" "$TMP/doc.md"'

# ---- a quick run of two tables ---------------------------------------------------------------

cp "$DOC" "$TMP/doc.md"
cp README.md "$TMP/readme.md"
chmod 0640 "$TMP/doc.md"
LVBENCH=$LVBENCH "$SCRIPT" --quick --only churn,numa --out "$TMP/doc.md" \
	--readme "$TMP/readme.md" >"$TMP/out" 2>&1
rc=$?
check "--quick --only churn,numa exits 0" [ $rc -eq 0 ]
[ $rc -eq 0 ] || sed 's/^/# /' "$TMP/out"

for t in churn numa; do
	block "$DOC" $t >"$TMP/$t.before"
	block "$TMP/doc.md" $t >"$TMP/$t.after"
	check "the $t table was rewritten" eval '! cmp -s "$TMP/$t.before" "$TMP/$t.after"'
	check "the $t table has the machine line, the command and the quick mark" \
		eval 'grep -q "^Machine: .*online CPUs.*commit " "$TMP/$t.after" &&
		      grep -q "lvbench.* $t " "$TMP/$t.after" && grep -q "^\*\*Quick run" "$TMP/$t.after"'
done
check "the churn table has a row of the contended fraction and the thread-to-CPU ratio" \
	eval 'grep -q "^| LRU lock contended/acquired | [0-9.]* % | [0-9.]* %" "$TMP/churn.after" &&
	      grep -q "thread-to-CPU ratio 16.00" "$TMP/churn.after"'
check "the numa table has its three modes and the p50 latency" \
	eval 'grep -q "rcu-expedited" "$TMP/numa.after" &&
	      grep -q "^| \`lru_cache_disable\` p50 |" "$TMP/numa.after"'
check "everything outside the two tables is unchanged" \
	eval 'cmp -s <(outside "$DOC" churn numa) <(outside "$TMP/doc.md" churn numa)'
check "each marker still appears once" \
	eval '[ "$(count "$TMP/doc.md" "<!-- bench:churn -->")" = 1 ] &&
	      [ "$(count "$TMP/doc.md" "<!-- /bench:numa -->")" = 1 ]'
check "the file keeps its mode and no temporary file is left beside it" \
	eval '[ "$(stat -c %a "$TMP/doc.md")" = 640 ] && [ -z "$(ls -A "$TMP" | grep "^\.bench-report")" ]'

check "a run of only some of the headline's tables leaves the README's headline alone" \
	cmp -s README.md "$TMP/readme.md"

# The scale table: both workloads, a row per count of the sweep (its commas as typed), a goal
# for the cost per op and one for the memory per memcg.
cp "$DOC" "$TMP/scale.md"
LVBENCH=$LVBENCH "$SCRIPT" --quick --only scale --readme "" --out "$TMP/scale.md" >"$TMP/out" 2>&1
rc=$?
block "$TMP/scale.md" scale >"$TMP/scale.after"
check "--quick --only scale: the commands, a row per count of each workload" \
	eval '[ $rc -eq 0 ] && grep -q "lvbench scale churn --sweep 2,8 " "$TMP/scale.after" &&
	      grep -q "lvbench scale readtwice --sweep 2,8 " "$TMP/scale.after" &&
	      [ "$(grep -Ec "^\| [28] \| [0-9]+ \| [0-9,]+ \| [0-9,.]+ \| [0-9.]+× \| [0-9.]+ % \| [0-9,]+ \| [0-9,]+ \| (yes|\*\*no\*\*) \|$" \
		"$TMP/scale.after")" = 4 ] &&
	      [ "$(grep -c "^Goal: ns/op per thread at 8 memcgs at most 1.1× that at 2 " "$TMP/scale.after")" = 2 ] &&
	      [ "$(grep -c "^Goal: library memory per memcg within 8 KiB" "$TMP/scale.after")" = 2 ]'
[ $rc -eq 0 ] || sed 's/^/# /' "$TMP/out"
check "... and nothing outside its markers changes" \
	eval 'cmp -s <(outside "$DOC" scale) <(outside "$TMP/scale.md" scale)'

# ---- the README's headline table -------------------------------------------------------------

cp "$DOC" "$TMP/full.md"
LVBENCH=$LVBENCH "$SCRIPT" --quick \
	--only readtwice,readtwice-c16,readtwice-ceiling,churn,aim9,numa,compact,swap,usemem \
	--out "$TMP/full.md" --readme "$TMP/readme.md" >"$TMP/full.out" 2>&1
rc=$?
block "$TMP/readme.md" headline >"$TMP/headline"
check "a run of every table the headline quotes rewrites it: ten results with their commands" \
	eval '[ $rc -eq 0 ] && [ "$(grep -c "^| .* | .* | \`.*\` |$" "$TMP/headline")" = 10 ] &&
	      grep -q "^| readtwice, 4 containers × 2 readers.*\`make bench\` |$" "$TMP/headline" &&
	      grep -q "^| 8 tenants swapping .*\`lvbench compare swap --containers 8\` |$" \
		"$TMP/headline" &&
	      grep -q "^Machine: " "$TMP/headline" && grep -q "^\*\*Quick run" "$TMP/headline" &&
	      grep -q "^Goal: swap traffic at 40 % of the ceiling or more: " "$TMP/full.md" &&
	      grep -q "^| faults/s per tenant, Hmean | " "$TMP/full.md" &&
	      grep -q "^| usemem, 2 writers in one memcg: .* | LRU lock wait [0-9.]*×, " "$TMP/headline" &&
	      grep -q "^| LRU lock wait per round, median (ms): \`lru_note_cost\` | [0-9.,]* | 0.0 | [^|]* |$" \
		"$TMP/full.md" &&
	      grep -q "^Goal: total LRU lock wait with vmstat at most 0.6× locked" "$TMP/full.md"'
[ $rc -eq 0 ] || sed 's/^/# /' "$TMP/full.out"
check "... and leaves the rest of the README unchanged" \
	eval 'cmp -s <(outside README.md headline) <(outside "$TMP/readme.md" headline)'

# A second run replaces what the first wrote.
cp "$TMP/doc.md" "$TMP/doc1.md"
LVBENCH=$LVBENCH "$SCRIPT" --quick --only churn --readme "" --out "$TMP/doc.md" >/dev/null 2>&1
rc=$?
check "a second run rewrites the block in place (same length, rest unchanged)" \
	eval '[ $rc -eq 0 ] && [ "$(block "$TMP/doc.md" churn | wc -l)" = "$(wc -l <"$TMP/churn.after")" ] &&
	      cmp -s <(outside "$TMP/doc1.md" churn) <(outside "$TMP/doc.md" churn)'

# ---- failures leave the document alone -------------------------------------------------------

cp "$TMP/doc.md" "$TMP/keep.md"
LVBENCH=$(fake exit1 'echo "lvbench: fake failure" >&2; exit 1') \
	"$SCRIPT" --quick --only churn,numa --readme "" --out "$TMP/doc.md" >/dev/null 2>"$TMP/err"
rc=$?
check "a failing lvbench makes it exit 1, showing lvbench's error" \
	eval '[ $rc -eq 1 ] && grep -q "fake failure" "$TMP/err"'
check "... and leaves the document byte for byte as it was" cmp -s "$TMP/keep.md" "$TMP/doc.md"

# numa runs after churn succeeded: nothing may be written for churn either.
LVBENCH=$(fake json-exit1 '"'"$LVBENCH"'" "$@"; exit 1') \
	"$SCRIPT" --quick --only churn --readme "" --out "$TMP/doc.md" >/dev/null 2>&1
rc=$?
check "a run that exits 1 after printing good JSON is a failed run; the document is unchanged" \
	eval '[ $rc -eq 1 ] && cmp -s "$TMP/keep.md" "$TMP/doc.md"'

LVBENCH=$(fake numa-fails 'case " $* " in *" numa "*) exit 1 ;; esac; exec "'"$LVBENCH"'" "$@"') \
	"$SCRIPT" --quick --only churn,numa --readme "" --out "$TMP/doc.md" >/dev/null 2>&1
rc=$?
check "a later run failing writes none of the tables" \
	eval '[ $rc -eq 1 ] && cmp -s "$TMP/keep.md" "$TMP/doc.md"'

LVBENCH=$(fake check-failed '"'"$LVBENCH"'" "$@" | sed "s/\"check\":\"ok\"/\"check\":\"failed\"/"') \
	"$SCRIPT" --quick --only churn --readme "" --out "$TMP/doc.md" >/dev/null 2>"$TMP/err"
rc=$?
check "JSON reporting a failed check is a failed run; the document is unchanged" \
	eval '[ $rc -eq 1 ] && grep -q "check=.failed" "$TMP/err" && cmp -s "$TMP/keep.md" "$TMP/doc.md"'

LVBENCH=$(fake no-json 'echo "not json"') \
	"$SCRIPT" --quick --only churn --readme "" --out "$TMP/doc.md" >/dev/null 2>"$TMP/err"
rc=$?
check "output that is not JSON is a failed run; the document is unchanged" \
	eval '[ $rc -eq 1 ] && grep -q "not JSON" "$TMP/err" && cmp -s "$TMP/keep.md" "$TMP/doc.md"'

grep -v -x -F "<!-- /bench:numa -->" "$TMP/keep.md" >"$TMP/nomarker.md"
cp "$TMP/nomarker.md" "$TMP/nomarker.orig"
rm -f "$TMP/ran"
LVBENCH=$(fake ran2 'touch "'"$TMP"'/ran"; exec "'"$LVBENCH"'" "$@"') \
	"$SCRIPT" --quick --only churn,numa --out "$TMP/nomarker.md" >/dev/null 2>"$TMP/err"
rc=$?
check "a missing marker is an error named on stderr, found before anything runs" \
	eval '[ $rc -eq 1 ] && grep -q "/bench:numa" "$TMP/err" && [ ! -e "$TMP/ran" ] &&
	      cmp -s "$TMP/nomarker.orig" "$TMP/nomarker.md"'

[ "$failed" -eq 0 ]
