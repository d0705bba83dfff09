#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# bench-report.sh - run lvbench's workloads in the fixed shapes docs/benchmarks.md quotes and
# rewrite that document's tables from their --json output.
#
# Each table of the document sits between two marker lines,
#
#   <!-- bench:NAME -->
#   ...
#   <!-- /bench:NAME -->
#
# and everything between them is generated: the machine the numbers come from, the commands
# that produced them, and the table. Text outside the markers is never touched. The markers
# of every selected table are checked before anything runs; all runs finish before the file
# is written, and it is written as a whole (a temporary file beside it, renamed over it), so
# a failed or interrupted run leaves the document exactly as it was.
#
# Bash, coreutils, git (for the commit measured) and python3 (JSON and the rewrite).
set -u
set -o pipefail

prog=${0##*/}
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)

# Every table, in the order of the document; "kernel" runs only when asked for.
tables=(readtwice readtwice-c16 readtwice-adaptive readtwice-ceiling readonce readtwice-order readtwice-large
	batch-policy churn churn-sites scale aim9 aim9-faults numa compact swap reparent usemem page-fault2
	kernel)

usage() {
	cat <<EOF
Usage: $prog [OPTIONS]

Runs lvbench's workloads in the shapes that docs/benchmarks.md quotes and rewrites each of
its tables (between <!-- bench:NAME --> and <!-- /bench:NAME -->) from their --json output,
with a line naming the machine, the compiler and the commit measured.

Tables (NAME):
  readtwice          lvbench compare readtwice                      (what 'make bench' runs)
  readtwice-c16      lvbench compare readtwice --containers 16
  readtwice-adaptive lvbench compare readtwice --backend adaptive
  readtwice-ceiling  5 x lvbench readtwice, 1 container x 1 reader, --folio-order 0 without
                     and with readahead, with readahead on the adaptive lock backend, and
                     --folio-order 6, alternately, against the ceiling (medians)
  readonce           lvbench compare readonce
  readtwice-order    lvbench compare readtwice --by folio-order (folios of 1, 4, 16 pages)
  readtwice-large    lvbench compare readtwice --by batch-large --folio-order 4
  batch-policy       lvbench compare readtwice --by batch-policy, 16 containers and 1
                     (batches in arrival order, sorted by lruvec, per lruvec), and
                     lvbench compare churn --by batch-policy (16 containers, 32 threads)
  churn              lvbench compare churn --containers 16 --threads 32 --duration 5
  churn-sites        lvbench compare churn --containers 16 --threads 32 --by lock-sites
                     --rounds 5 --duration 3 (what the call-site table costs)
  scale              lvbench scale churn --sweep 10,100,1000,10000 and lvbench scale
                     readtwice --sweep 10,100,1000,10000 (cost per op and memory per memcg)
  aim9               lvbench compare aim9, and again with --test brk_test
  aim9-faults        3 x lvbench aim9 --test page_test --containers 1 (medians)
  numa               lvbench compare numa --by disable --instances 16, and
                     lvbench numa --instances 16 --disable rcu-expedited
  compact            lvbench compare compact (8 containers: 6 readers, 2 THP tenants)
  swap               lvbench compare swap --containers 8, and lvbench swap --rounds 3
                     (1 tenant, against the ceiling)
  reparent           lvbench compare reparent (a memcg of 1 M cached pages removed while
                     4 containers x 2 readers read)
  usemem             lvbench compare usemem --by cost --rounds 5 (16 writers in one memcg
                     limited to a quarter of their memory, swapping; scan costs under the
                     LRU locks vs counted per CPU; the LRU lock wait by call site)
  page-fault2        lvbench compare page_fault2 --by batch --rounds 5 (COW faults of private
                     file mappings, 4 threads per CPU, batches of 15 and 31)
  kernel             scripts/readtwice-vs-kernel.sh, unpinned and with --pin (needs root
                     for memory cgroups and a directory on ext4 or xfs; only with
                     --with-kernel or --only kernel)

Options:
  --only NAME[,NAME]  run and rewrite only these tables
  --with-kernel       add the kernel table to the default set
  --kernel-dir DIR    where the kernel side puts its sparse files (readtwice-vs-kernel.sh
                      --dir; default: its own, under \${TMPDIR:-/tmp})
  --quick             very short runs, to test this script; the tables say so
  --dry-run           check the markers, print the machine and the commands; run nothing
  --out FILE          the document to rewrite (default: docs/benchmarks.md)
  --readme FILE       where the headline table is (default: README.md; '' for none); it
                      is rewritten only by a run of all the tables it quotes
  -h, --help          this help

Environment:
  LVBENCH   the lvbench to run; without it, \$BUILD/lvbench is built with make first
  BUILD     the build directory of make (default: build)
  CC        the compiler named on the machine line (default: cc, as the Makefile's)

Exit status: 0 when every run succeeded and the tables were written, 1 when a run failed or a
marker is missing (the document is then left as it was), 2 usage.
The full default set takes about twenty-six minutes on a 2-CPU machine; the kernel table about seven
more.
EOF
}

die_usage() {
	echo "$prog: $*" >&2
	echo "Try '$prog --help'." >&2
	exit 2
}

die() {
	echo "$prog: $*" >&2
	exit 1
}

only=
with_kernel=
kernel_dir=
quick=
dry_run=
out=
readme=$top/README.md

while [ $# -gt 0 ]; do
	opt=$1
	case $opt in
	--*=*)
		val=${opt#*=}
		opt=${opt%%=*}
		;;
	--only | --out | --kernel-dir | --readme)
		[ $# -ge 2 ] || die_usage "option '$opt' needs a value"
		val=$2
		shift
		;;
	esac
	case $opt in
	--only) only=$val ;;
	--out) out=$val ;;
	--readme) readme=$val ;;
	--kernel-dir) kernel_dir=$val ;;
	--with-kernel) with_kernel=1 ;;
	--quick) quick=1 ;;
	--dry-run) dry_run=1 ;;
	-h | --help)
		usage
		exit 0
		;;
	*) die_usage "unknown option '$opt'" ;;
	esac
	shift
done

selected=()
if [ -n "$only" ]; then
	IFS=, read -r -a names <<<"$only"
	[ ${#names[@]} -gt 0 ] || die_usage "--only: no table named"
	for n in "${names[@]}"; do
		known=
		for t in "${tables[@]}"; do
			[ "$n" = "$t" ] && known=1
		done
		[ -n "$known" ] || die_usage "--only: unknown table '$n' (${tables[*]})"
	done
	# In the document's order, each once.
	for t in "${tables[@]}"; do
		for n in "${names[@]}"; do
			if [ "$n" = "$t" ]; then
				selected+=("$t")
				break
			fi
		done
	done
else
	for t in "${tables[@]}"; do
		[ "$t" = kernel ] && [ -z "$with_kernel" ] && continue
		selected+=("$t")
	done
fi

# Paths the user gave are relative to where the script was started; it runs from the top.
out=$(realpath -m -- "${out:-$top/docs/benchmarks.md}")
if [ -n "$kernel_dir" ]; then
	if ! [ -d "$kernel_dir" ] || ! [ -w "$kernel_dir" ]; then
		die_usage "--kernel-dir: '$kernel_dir' is not a writable directory"
	fi
	kernel_dir=$(realpath -- "$kernel_dir")
fi
build_lvbench=
if [ -n "${LVBENCH:-}" ]; then
	lvbench=$(realpath -m -- "$LVBENCH")
else
	build=${BUILD:-build}
	case $build in
	/*) lvbench=$build/lvbench ;;
	*) lvbench=$top/$build/lvbench ;;
	esac
	build_lvbench=1
fi
cd "$top" || die "cannot enter $top"
[ -f "$out" ] || die "$out: no such file"
command -v python3 >/dev/null || die "python3 is needed to read lvbench's JSON"

# shown - a path as the document shows it: relative to the top of the tree when inside it.
shown() {
	case $1 in
	"$top"/*) printf '%s' "${1#"$top"/}" ;;
	*) printf '%s' "$1" ;;
	esac
}

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-report.XXXXXX") || die "cannot create a directory"
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---- the python half: markers, JSON, tables, the rewrite -------------------------------------

cat >"$work/report.py" <<'PYTHON'
import json
import os
import re
import statistics
import sys
import tempfile

prog = "bench-report.sh"


def fail(msg):
    print(f"{prog}: {msg}", file=sys.stderr)
    sys.exit(1)


def markers(name):
    return f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"


def find_block(lines, name, path):
    """Line numbers of the opening and closing marker of NAME, each present exactly once."""
    start, end = markers(name)
    opens = [i for i, l in enumerate(lines) if l.strip() == start]
    closes = [i for i, l in enumerate(lines) if l.strip() == end]
    if len(opens) != 1 or len(closes) != 1:
        fail(f"{path}: the table '{name}' needs exactly one line '{start}' and one line "
             f"'{end}' after it (found {len(opens)} and {len(closes)})")
    if closes[0] < opens[0]:
        fail(f"{path}: '{end}' comes before '{start}'")
    for i in range(opens[0] + 1, closes[0]):
        if lines[i].strip().startswith("<!-- bench:") or lines[i].strip().startswith("<!-- /bench:"):
            fail(f"{path}: another marker inside the table '{name}' (line {i + 1})")
    return opens[0], closes[0]


# ---- numbers ---------------------------------------------------------------------------------


def num(v, digits=1):
    if v is None:
        return "n/a"
    return f"{v:,.{digits}f}"


def change(new, base):
    """mmtests' percentage of a higher-is-better value against the baseline column."""
    if not base:
        return ""
    return f" ({new * 100 / base - 100:+.1f} %)"


def times(a, b):
    if not b:
        return "∞" if a else "n/a"
    return f"{a / b:.2f}×"


def median(xs):
    return statistics.median(xs) if xs else None


def lru_lock(obj):
    """The LRU lock of a design: the node class in one, the lruvec class in the other."""
    acq = con = wait = 0
    for l in obj["locks"]:
        if l["name"] in ("lruvec", "node"):
            acq += l["acquired"]
            con += l["contended"]
            wait += l["wait_total_ns"]
    return {
        "acquired": acq,
        "contended": con,
        "fraction": con / acq if acq else 0.0,
        "wait_ns": wait,
        "wait_per_op": wait / obj["ops"] if obj["ops"] else 0.0,
    }


def hwm_share(objs):
    """The largest VmHWM of the runs over the configured memory, in percent."""
    best = None
    for o in objs:
        mib = o["nodes"] * o["memory_mib_per_node"]
        share = 100 * o["vm_hwm_kib"] / 1024 / mib
        if best is None or share > best[0]:
            best = (share, mib)
    return best


def goal(text, met):
    return f"Goal: {text}: **{'met' if met else 'not met'}**."


def less(a, b):
    """a / b as "N× less" when the second column is the smaller."""
    return f" ({times(a, b)} less)" if b and a >= b else f" ({times(a, b)})"


# ---- runs ------------------------------------------------------------------------------------


class Runs:
    def __init__(self, work):
        self.work = work
        self.cmds = {}
        with open(os.path.join(work, "runs")) as f:
            for line in f:
                table, rid, cmd = line.rstrip("\n").split("\t", 2)
                self.cmds.setdefault(table, []).append((rid, cmd))

    def out(self, table, rid):
        return os.path.join(self.work, f"{table}.{rid}.out")

    def json(self, table, rid, count):
        """The COUNT JSON objects run RID printed, each with check "ok"."""
        objs = []
        path = self.out(table, rid)
        with open(path) as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    objs.append(json.loads(line))
                except ValueError as e:
                    fail(f"{table}: run {rid} printed a line that is not JSON ({e}): "
                         f"{line[:80]!r}")
        if len(objs) != count:
            fail(f"{table}: run {rid} printed {len(objs)} JSON objects, not {count}")
        for o in objs:
            if o.get("check") != "ok":
                fail(f"{table}: run {rid} reports check={o.get('check')!r} "
                     f"({o.get('lock', '?')} design): the run is not valid")
        return objs

    def kv(self, table, rid, tag):
        """The key=value summary line starting with TAG: that run RID printed last."""
        found = None
        with open(self.out(table, rid)) as f:
            for line in f:
                if line.startswith(tag + ":"):
                    found = line
        if not found:
            fail(f"{table}: run {rid} printed no '{tag}:' summary line")
        kv = {}
        for field in found.split()[1:]:
            if "=" in field:
                k, v = field.split("=", 1)
                kv[k] = v
        return kv

    def lines(self, table, rid, prefixes):
        """The lines of run RID's output that start with one of PREFIXES."""
        with open(self.out(table, rid)) as f:
            return [l.rstrip("\n") for l in f if l.startswith(prefixes)]

    def commands(self, table, ids=None):
        return [c for rid, c in self.cmds[table] if ids is None or rid in ids]


def plural(n, word, words=None):
    return f"{n:g} {word if n == 1 else (words or word + 's')}"


def shape_line(o, what):
    """Threads, CPUs and their ratio, which every table states."""
    return (f"{what}; {plural(o['threads'], 'thread')} on {plural(o['cpus'], 'CPU')} "
            f"(thread-to-CPU ratio {o['threads_per_cpu']:.2f})")


def table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        out.append("| " + " | ".join(r) + " |")
    return out


def code_list(cmds):
    return [f"    {c}" for c in cmds]


# ---- the tables --------------------------------------------------------------------------------


def compare_lock_rows(node, lru, unit, per):
    """Rows shared by the readtwice and readonce comparisons (node first, lruvec second)."""
    sn, sl = node[f"mb_per_s_{per}"], lru[f"mb_per_s_{per}"]
    rn, rl = node["mb_per_s_round_total"], lru["mb_per_s_round_total"]
    mn, ml = median(rn), median(rl)
    ln, ll = lru_lock(node), lru_lock(lru)
    ceil = node.get("ceiling_mb_per_s")
    rows = [
        [f"{unit} per {per}, Amean", num(sn["amean"]), num(sl["amean"]) + change(sl["amean"], sn["amean"])],
        [f"{unit} per {per}, Hmean", num(sn["hmean"]), num(sl["hmean"]) + change(sl["hmean"], sn["hmean"])],
        [f"{unit} per {per}, CoeffVar", num(sn["coeffvar"], 2), num(sl["coeffvar"], 2)],
        [f"{unit} of all {per}s, median of {len(rn)} rounds", num(mn), num(ml) + change(ml, mn)],
    ]
    if ceil:
        rows.append([f"share of the ceiling ({num(ceil)} {unit}, {num(ceil / node['threads'])} per {per})",
                     f"{100 * node['ceiling_fraction']:.1f} %", f"{100 * lru['ceiling_fraction']:.1f} %"])
        if "ceiling_min" in node:
            rows.append([f"the ceiling's spread over its {node['ceiling_rounds']} runs "
                         "(lowest–highest, CoeffVar)",
                         f"{num(node['ceiling_min'])}–{num(node['ceiling_max'])} {unit}, "
                         f"{node['ceiling_coeffvar']:.2f} %", ""])
    rows += [
        ["LRU lock contended/acquired", f"{100 * ln['fraction']:.3f} %",
         f"{100 * ll['fraction']:.3f} %" + less(ln["fraction"], ll["fraction"])],
        ["LRU lock wait per op", f"{num(ln['wait_per_op'])} ns",
         f"{num(ll['wait_per_op'])} ns" + less(ln["wait_per_op"], ll["wait_per_op"])],
        ["workingset_refault", num(node["vmstat"]["workingset_refault"], 0),
         num(lru["vmstat"]["workingset_refault"], 0)],
    ]
    share, mib = hwm_share([node, lru])
    rows.append([f"VmHWM, share of the configured {mib} MiB", f"{share:.1f} % (the larger of the two)", ""])
    return rows


def readtwice_like(runs, name, workload):
    node, lru = runs.json(name, "compare", 2)
    if node["lock"] != "node" or lru["lock"] != "lruvec":
        fail(f"{name}: expected the node object, then the lruvec object")
    what = (f"{plural(node['containers'], 'container')} × "
            f"{plural(node['readers_per_container'], 'reader')}, {node['memory_mib']} MiB, "
            f"{plural(node['rounds'], 'alternating round')} of "
            f"{node['duration_s']:g} s per design, one page per folio")
    lines = [shape_line(node, what) + ".", ""]
    lines += table(["", "node lock (Linux ≤ 5.10)", "lruvec lock (Linux 5.11+)"],
                   compare_lock_rows(node, lru, "MB/s", "reader"))
    share, _ = hwm_share([node, lru])
    lines += ["", goal("VmHWM within the configured memory + 10 %", share <= 110)]
    if name == "readtwice-c16":
        ln, ll = lru_lock(node), lru_lock(lru)
        ok = (ln["fraction"] >= 5 * ll["fraction"] and
              lru["mb_per_s_reader"]["amean"] >= node["mb_per_s_reader"]["amean"])
        lines += ["", goal("the node design's LRU lock contended/acquired at least 5× the "
                           "lruvec design's, and the lruvec design not slower (Amean)", ok)]
    return lines, runs.commands(name)


def t_readtwice(runs):
    return readtwice_like(runs, "readtwice", "readtwice")


def t_readtwice_c16(runs):
    return readtwice_like(runs, "readtwice-c16", "readtwice")


def t_readtwice_adaptive(runs):
    return readtwice_like(runs, "readtwice-adaptive", "readtwice")


def t_readonce(runs):
    return readtwice_like(runs, "readonce", "readonce")


def t_readtwice_ceiling(runs):
    cols = []
    for kind in ("ra0", "order0", "adaptive0", "order6"):
        ids = sorted((rid for rid, _ in runs.cmds["readtwice-ceiling"]
                      if rid.startswith(f"{kind}-")), key=lambda r: int(r.split("-")[1]))
        objs = [runs.json("readtwice-ceiling", rid, 1)[0] for rid in ids]
        cols.append(objs)
    o = cols[0][0]
    what = (f"{plural(o['containers'], 'container')} × {plural(o['readers'], 'reader')}, "
            f"{o['memory_mib']} MiB, a sparse file of {o['file_size'] / 2**30:g} GiB, "
            f"{plural(len(cols[0]), 'alternating set')} of four of {o['duration_s']:g} s runs")
    rate = [[x["mb_per_s_reader_mean"] for x in c] for c in cols]
    ceil = [[x["ceiling_mb_per_s"] for x in c] for c in cols]
    share = [[100 * x["ceiling_fraction"] for x in c] for c in cols]
    rows = [
        ["MB/s per reader, each run"] + [", ".join(num(v, 0) for v in r) for r in rate],
        ["MB/s per reader, median"] + [num(median(r)) for r in rate],
        ["ceiling, MB/s, median"] + [num(median(c)) for c in ceil],
        ["ceiling, MB/s, lowest–highest"] + [f"{num(min(c))}–{num(max(c))}" for c in ceil],
        ["share of the ceiling, each run"] + [", ".join(f"{v:.1f}" for v in s) + " %" for s in share],
        ["share of the ceiling, median"] + [f"**{median(s):.1f} %**" for s in share],
        ["share of the ceiling, range"] + [f"{min(s):.1f}–{max(s):.1f} %" for s in share],
    ]
    s0, mib = hwm_share(cols[0] + cols[1] + cols[2] + cols[3])
    rows.append([f"VmHWM, share of the configured {mib} MiB", f"{s0:.1f} % (the largest of all runs)", "", "", ""])
    ra = cols[1][0]["readahead"]
    lines = [shape_line(o, what) + ".", ""]
    lines += table(["", "one page per folio, no readahead (`--readahead 0`)",
                    f"one page per folio, reading {ra} pages ahead",
                    f"the same on the adaptive lock backend (`--backend adaptive`)",
                    "64-page folios (`--folio-order 6`)"],
                   rows)
    lines += ["", goal("one page per folio (reading ahead) at 65 % of the ceiling or more (median)",
                       median(share[1]) >= 65),
              "", goal("the same on the adaptive lock backend (median)", median(share[2]) >= 65),
              "", goal("64-page folios at 60 % of the ceiling or more (median)",
                       median(share[3]) >= 60)]
    # One command per column is enough to show: the runs repeat them.
    cmds = runs.commands("readtwice-ceiling", {"ra0-1", "order0-1", "adaptive0-1", "order6-1"})
    return lines, [f"{c}    # x {len(cols[0])}" for c in cmds]


def t_churn(runs):
    node, lru = runs.json("churn", "compare", 2)
    sn, sl = node["ops_per_sec_per_thread"], lru["ops_per_sec_per_thread"]
    mn, ml = median(node["round_ops_per_sec"]), median(lru["round_ops_per_sec"])
    ln, ll = lru_lock(node), lru_lock(lru)
    what = (f"{plural(node['containers'], 'container')}, "
            f"{plural(node['rounds'], 'alternating round')} of "
            f"{node['duration_s']:g} s per design, batch {node['batch']}")
    rows = [
        ["ops/s per thread, Hmean", num(sn["hmean"], 0), num(sl["hmean"], 0) + change(sl["hmean"], sn["hmean"])],
        ["ops/s per thread, Amean", num(sn["amean"], 0), num(sl["amean"], 0) + change(sl["amean"], sn["amean"])],
        ["ops/s per thread, CoeffVar", num(sn["coeffvar"], 2), num(sl["coeffvar"], 2)],
        ["ops/s of all threads", num(node["ops_per_sec"], 0),
         num(lru["ops_per_sec"], 0) + change(lru["ops_per_sec"], node["ops_per_sec"])],
        [f"ops/s of all threads, median of {len(node['round_ops_per_sec'])} rounds", num(mn, 0),
         num(ml, 0) + change(ml, mn)],
        ["LRU lock acquired", num(ln["acquired"], 0), num(ll["acquired"], 0)],
        ["LRU lock contended/acquired", f"{100 * ln['fraction']:.3f} %",
         f"{100 * ll['fraction']:.3f} %" + less(ln["fraction"], ll["fraction"])],
        ["LRU lock total wait", f"{ln['wait_ns'] / 1e9:.2f} s", f"{ll['wait_ns'] / 1e9:.2f} s"],
        ["LRU lock wait per op", f"{num(ln['wait_per_op'])} ns",
         f"{num(ll['wait_per_op'])} ns" + less(ln["wait_per_op"], ll["wait_per_op"])],
    ]
    lines = [shape_line(node, what) + ".", ""]
    lines += table(["", "node lock", "lruvec lock"], rows)
    return lines, runs.commands("churn")


def columns(runs, name, want):
    """The objects of a compare --by run, checked to be the columns WANT in this order."""
    objs = runs.json(name, "compare", len(want))
    got = [o.get("column") for o in objs]
    if got != want:
        fail(f"{name}: expected the columns {', '.join(want)}, got {got}")
    return objs


def mb_read(o):
    return o["mb_per_s_total"] * o["elapsed_s"]


def all_lock_wait(o):
    return sum(l["wait_total_ns"] for l in o["locks"])


def knob_readtwice(runs, name, want, heads, what_extra):
    """A readtwice comparison of one library setting: MB/s and the LRU lock per MB read."""
    objs = columns(runs, name, want)
    base = objs[0]
    what = (f"{plural(base['containers'], 'container')} × "
            f"{plural(base['readers_per_container'], 'reader')}, {base['memory_mib']} MiB, "
            f"{plural(base['rounds'], 'alternating round')} of {base['duration_s']:g} s per "
            f"setting{what_extra}")
    locks = [lru_lock(o) for o in objs]
    meds = [median(o["mb_per_s_round_total"]) for o in objs]
    mb = [mb_read(o) for o in objs]
    b = base["mb_per_s_reader"]["amean"]
    rows = [
        ["MB/s per reader, Amean"] + [num(o["mb_per_s_reader"]["amean"]) +
                                      ("" if o is base else change(o["mb_per_s_reader"]["amean"], b))
                                      for o in objs],
        ["MB/s per reader, CoeffVar"] + [num(o["mb_per_s_reader"]["coeffvar"], 2) for o in objs],
        [f"MB/s of all readers, median of {len(base['mb_per_s_round_total'])} rounds"] +
        [num(m) + ("" if i == 0 else change(m, meds[0])) for i, m in enumerate(meds)],
        ["LRU lock acquired per MB read"] + [num(l["acquired"] / m if m else 0) for l, m in zip(locks, mb)],
        ["LRU lock contended/acquired"] + [f"{100 * l['fraction']:.3f} %" for l in locks],
        ["LRU lock wait per MB read"] + [f"{num(l['wait_ns'] / m / 1e3 if m else 0)} µs"
                                         for l, m in zip(locks, mb)],
        ["LRU lock's share of all lock wait"] +
        [f"{100 * l['wait_ns'] / all_lock_wait(o):.1f} %" if all_lock_wait(o) else "n/a"
         for l, o in zip(locks, objs)],
        ["workingset_refault"] + [num(o["vmstat"]["workingset_refault"], 0) for o in objs],
    ]
    lines = [shape_line(base, what) + ".", ""]
    lines += table([""] + heads, rows)
    return lines, objs, locks, meds, mb


def t_readtwice_order(runs):
    lines, objs, locks, meds, mb = knob_readtwice(
        runs, "readtwice-order", ["order-0", "order-2", "order-4"],
        ["folios of 1 page", "folios of 4 pages", "folios of 16 pages"], ", lruvec lock")
    trips = [l["acquired"] / m if m else 0 for l, m in zip(locks, mb)]
    ok = meds[0] < meds[2] and trips[0] > trips[2]
    lines += ["", goal("the direction of LKP's report on ab4443fe3c (smaller folios: more LRU "
                       f"lock trips per MB, fewer MB/s): order-0 at {meds[0] / meds[2]:.2f}× "
                       f"order-4's MB/s with {trips[0] / trips[2] if trips[2] else 0:.1f}× its "
                       "lock acquisitions per MB", ok)]
    return lines, runs.commands("readtwice-order")


def t_readtwice_large(runs):
    lines, objs, locks, meds, mb = knob_readtwice(
        runs, "readtwice-large", ["large-on", "large-off"],
        ["large folios batched (≤ 6.16)", "large folios never batched (6.17+)"],
        ", 16-page folios, lruvec lock")
    lines += ["", f"large-off/large-on: MB/s of all readers {meds[1] / meds[0]:.2f}×, LRU lock "
              f"acquired per MB {times(locks[1]['acquired'] / mb[1], locks[0]['acquired'] / mb[0])}."]
    return lines, runs.commands("readtwice-large")


def t_batch_policy(runs):
    """MB/s per reader and the folios per lock hold of each batch policy, 16 containers and 1."""
    want = ["arrival", "sorted", "per-lruvec"]
    heads = ["arrival order (Linux)", "sorted by lruvec", "per-lruvec batches"]
    lines, ok16, ok1 = [], False, True
    for rid, shape in (("c16", "many tenants per CPU"), ("c1", "one container")):
        objs = runs.json("batch-policy", rid, 3)
        got = [o.get("column") for o in objs]
        if got != want:
            fail(f"batch-policy: expected the columns {', '.join(want)}, got {got}")
        base = objs[0]
        b = base["mb_per_s_reader"]["amean"]
        meds = [median(o["mb_per_s_round_total"]) for o in objs]
        fph = [o["batches"]["folios_per_hold"] for o in objs]
        what = (f"{shape}: {plural(base['containers'], 'container')} × "
                f"{plural(base['readers_per_container'], 'reader')}, {base['memory_mib']} MiB, "
                f"{plural(base['rounds'], 'alternating round')} of {base['duration_s']:g} s per "
                "policy, lruvec lock")
        rows = [
            ["MB/s per reader, Amean"] + [num(o["mb_per_s_reader"]["amean"]) +
                                          ("" if o is base else change(o["mb_per_s_reader"]["amean"], b))
                                          for o in objs],
            [f"MB/s of all readers, median of {len(base['mb_per_s_round_total'])} rounds"] +
            [num(m) + ("" if i == 0 else change(m, meds[0])) for i, m in enumerate(meds)],
            ["ratio to arrival (medians)"] + [f"{m / meds[0]:.3f}×" if meds[0] else "n/a" for m in meds],
            ["batch flushes"] + [num(o["batches"]["flushes"], 0) for o in objs],
            ["lock holds per flush"] + [num(o["batches"]["holds_per_flush"], 2) for o in objs],
            ["folios per lock hold"] + [num(f, 2) for f in fph],
            ["LRU lock contended/acquired"] + [f"{100 * lru_lock(o)['fraction']:.3f} %" for o in objs],
        ]
        lines += [shape_line(base, what) + ".", ""] + table([""] + heads, rows) + [""]
        if rid == "c16":
            ok16 = any(meds[0] and meds[i] / meds[0] >= 1.05 and fph[0] and fph[i] / fph[0] >= 4
                       for i in (1, 2))
            ratios16 = ", ".join(f"{want[i]} {meds[i] / meds[0] if meds[0] else 0:.3f}× MB/s, "
                                 f"{fph[i] / fph[0] if fph[0] else 0:.1f}× folios per hold"
                                 for i in (1, 2))
        else:
            ok1 = all(meds[0] and meds[i] / meds[0] >= 0.98 for i in (1, 2))
            ratios1 = ", ".join(f"{want[i]} {meds[i] / meds[0] if meds[0] else 0:.3f}×"
                                for i in (1, 2))
    objs = runs.json("batch-policy", "churn", 3)
    if [o.get("column") for o in objs] != want:
        fail(f"batch-policy: churn: expected the columns {', '.join(want)}")
    meds = [median(o["round_ops_per_sec"]) for o in objs]
    base = objs[0]
    what = (f"churn, whose threads move folios between containers, so a thread's batches mix "
            f"them: "
            f"{plural(base['containers'], 'container')}, "
            f"{plural(base['rounds'], 'alternating round')} of {base['duration_s']:g} s per "
            "policy, lruvec lock")
    rows = [
        ["ops/s per thread, Hmean"] + [num(o["ops_per_sec_per_thread"]["hmean"], 0) +
                                       ("" if o is base else
                                        change(o["ops_per_sec_per_thread"]["hmean"],
                                               base["ops_per_sec_per_thread"]["hmean"]))
                                       for o in objs],
        [f"ops/s of all threads, median of {len(base['round_ops_per_sec'])} rounds"] +
        [num(m, 0) + ("" if i == 0 else change(m, meds[0])) for i, m in enumerate(meds)],
        ["batch flushes"] + [num(o["batches"]["flushes"], 0) for o in objs],
        ["lock holds per flush"] + [num(o["batches"]["holds_per_flush"], 2) for o in objs],
        ["folios per lock hold"] + [num(o["batches"]["folios_per_hold"], 2) for o in objs],
        ["LRU lock contended/acquired"] + [f"{100 * lru_lock(o)['fraction']:.3f} %" for o in objs],
    ]
    lines += [shape_line(base, what) + ".", ""] + table([""] + heads, rows) + [""]
    lines += [goal("16 containers: sorted or per-lruvec at 1.05× arrival's MB/s or more with 4× "
                   f"its folios per lock hold ({ratios16})", ok16),
              goal(f"one container: no policy more than 2 % slower than arrival ({ratios1})", ok1)]
    return lines, runs.commands("batch-policy")


def sites_add_up(o):
    """Whether every lock class's call sites add up to its contended count."""
    per = {}
    for st in o["lock_sites"]:
        per[st["type"]] = per.get(st["type"], 0) + st["contended"]
    return all(per.get(l["name"], 0) == l["contended"] for l in o["locks"])


def t_churn_sites(runs):
    off, on = columns(runs, "churn-sites", ["sites-off", "sites-on"])
    mo, mn = median(off["round_ops_per_sec"]), median(on["round_ops_per_sec"])
    lo, ln = lru_lock(off), lru_lock(on)
    what = (f"{plural(off['containers'], 'container')}, "
            f"{plural(off['rounds'], 'alternating round')} of {off['duration_s']:g} s per "
            f"setting, lruvec lock, batch {off['batch']}")
    rows = [
        ["ops/s per thread, Hmean", num(off["ops_per_sec_per_thread"]["hmean"], 0),
         num(on["ops_per_sec_per_thread"]["hmean"], 0) +
         change(on["ops_per_sec_per_thread"]["hmean"], off["ops_per_sec_per_thread"]["hmean"])],
        ["ops/s of all threads, each round", ", ".join(num(v, 0) for v in off["round_ops_per_sec"]),
         ", ".join(num(v, 0) for v in on["round_ops_per_sec"])],
        [f"ops/s of all threads, median of {len(off['round_ops_per_sec'])} rounds", num(mo, 0),
         num(mn, 0) + change(mn, mo)],
        ["LRU lock contended/acquired", f"{100 * lo['fraction']:.3f} %", f"{100 * ln['fraction']:.3f} %"],
        ["call sites recorded", "none (off)", str(len(on["lock_sites"]))],
        ["call sites' contended counts = the class table's", "", "yes" if sites_add_up(on) else "**no**"],
    ]
    ratio = mn / mo if mo else 0
    lines = [shape_line(off, what) + ".", ""]
    lines += table(["", "no call-site table", "contention by call site"], rows)
    lines += ["", goal("recording by call site costs at most 2 % (sites-on at "
                       f"{ratio:.3f}× sites-off, medians of the rounds)", ratio >= 0.98),
              goal("the call sites add up to the class table", sites_add_up(on))]
    top = sorted(on["lock_sites"], key=lambda st: -st["wait_total_ns"])[:8]
    if top:
        lines += ["", "The call sites with the most wait, sites-on (`perf lock contention` columns):", ""]
        lines += table(["contended", "total wait", "max wait", "avg wait", "type", "caller"],
                       [[num(st["contended"], 0), f"{st['wait_total_ns'] / 1e6:,.1f} ms",
                         f"{st['wait_max_ns'] / 1e6:,.2f} ms", f"{st['wait_avg_ns'] / 1e3:,.1f} µs",
                         st["type"], f"`{st['caller']}`"] for st in top])
    return lines, runs.commands("churn-sites")


def t_scale(runs):
    lines = []
    for rid in ("churn", "readtwice"):
        (cmd,) = runs.commands("scale", {rid})
        sweep = re.search(r"--sweep (\S+)", cmd)
        objs = runs.json("scale", rid, len(sweep.group(1).split(",")) if sweep else 4)
        first, last = objs[0], objs[-1]
        if rid == "churn":
            own = f"working sets of {first['working_set']} folios"
        else:
            own = (f"{first['readers_per_container']} readers per container taking turns of "
                   f"{first['turn_reads']} reads, sparse files of {first['file_size'] / 2**30:g} GiB")
        what = (f"**{rid}**: {plural(first['nodes'], 'node')} × {first['memory_mib_per_node']} MiB, "
                f"{plural(first['cpu_slots'], 'CPU slot')}, {plural(first['rounds'], 'round')} of "
                f"{first['duration_s']:g} s per count, the counts taking turns; {own}")
        rows = [[num(o["containers"], 0), num(o["threads"], 0), num(o["ops_per_sec"], 0),
                 num(o["ns_per_op"]), times(o["ns_per_op"], first["ns_per_op"]),
                 f"{100 * o['lru_lock_contended'] / max(o['lru_lock_acquired'], 1):.3f} %",
                 num(o["memcg_bytes"], 0),
                 num(o["memcg_budget_bytes"], 0), "yes" if o["memcg_budget_met"] else "**no**"]
                for o in objs]
        ratio = last["ns_per_op"] / first["ns_per_op"]
        lines += [shape_line(first, what) + ".", ""]
        lines += table(["containers", "threads", "ops/s", "ns/op per thread", "× the first",
                        "LRU lock contended/acquired", "memory per memcg (B)", "budget (B)",
                        "within"], rows)
        lines += ["", goal(f"ns/op per thread at {num(last['containers'], 0)} memcgs at most 1.1× "
                           f"that at {num(first['containers'], 0)} ({ratio:.2f}×)", ratio <= 1.1),
                  goal("library memory per memcg within 8 KiB + 2 KiB × nodes + 256 B × CPU "
                       "slots at every count", all(o["memcg_budget_met"] for o in objs)),
                  f"A memcg's heap splits into {first['memcg_fixed_bytes']:,.0f} B fixed, "
                  f"{first['memcg_node_bytes']:,.0f} B per node and "
                  f"{first['memcg_slot_bytes']:,.1f} B per CPU slot.", ""]
    return lines[:-1], runs.commands("scale")


def t_page_fault2(runs):
    b15, b31 = columns(runs, "page-fault2", ["batch-15", "batch-31"])
    s15, s31 = b15["ops_per_sec_per_thread"], b31["ops_per_sec_per_thread"]
    m15, m31 = median(b15["round_ops_per_sec"]), median(b31["round_ops_per_sec"])
    l15, l31 = lru_lock(b15), lru_lock(b31)
    what = (f"{plural(b15['containers'], 'container')}, each thread mapping its own "
            f"{b15['file_size'] / 2**20:g} MiB file privately and "
            f"writing a byte per page, {plural(b15['rounds'], 'alternating round')} of "
            f"{b15['duration_s']:g} s per setting, lruvec lock")
    rows = [
        ["faults/s per thread, Hmean", num(s15["hmean"], 0), num(s31["hmean"], 0) + change(s31["hmean"], s15["hmean"])],
        ["faults/s per thread, CoeffVar", num(s15["coeffvar"], 2), num(s31["coeffvar"], 2)],
        ["faults/s of all threads, each round", ", ".join(num(v, 0) for v in b15["round_ops_per_sec"]),
         ", ".join(num(v, 0) for v in b31["round_ops_per_sec"])],
        [f"faults/s of all threads, median of {len(b15['round_ops_per_sec'])} rounds", num(m15, 0),
         num(m31, 0) + change(m31, m15)],
        ["LRU lock acquired per 1000 faults", num(1000 * l15["acquired"] / b15["ops"]),
         num(1000 * l31["acquired"] / b31["ops"])],
        ["LRU lock contended/acquired", f"{100 * l15['fraction']:.3f} %", f"{100 * l31['fraction']:.3f} %"],
        ["LRU lock wait per fault", f"{num(l15['wait_per_op'])} ns", f"{num(l31['wait_per_op'])} ns"],
        ["mappings written whole and unmapped", num(b15["iterations"], 0), num(b31["iterations"], 0)],
    ]
    ratio = m31 / m15 if m15 else 0
    lines = [shape_line(b15, what) + ".", ""]
    lines += table(["", "batch 15 (Linux ≤ 6.8)", "batch 31 (Linux 6.9+)"], rows)
    lines += ["", f"batch-31/batch-15, medians of the rounds: {ratio:.3f}× (LKP, 2024, 104 threads: "
              "8,839,851 → 9,949,112 ops, 1.125×).",
              goal("batch 31 at 1.05× batch 15 or more (medians of the rounds)", ratio >= 1.05)]
    sites = {}
    for col, o in enumerate((b15, b31)):
        for st in o["lock_sites"]:
            e = sites.setdefault((st["caller"], st["type"]), [[0, 0], [0, 0]])
            e[col] = [st["contended"], st["wait_total_ns"]]
    top = sorted(sites.items(), key=lambda kv: -(kv[1][0][1] + kv[1][1][1]))[:8]
    if top:
        lines += ["", "The call sites with the most wait (`perf lock contention`'s caller and type; "
                  "contended, total wait):", ""]
        lines += table(["caller", "type", "batch 15", "batch 31"],
                       [[f"`{k[0]}`", k[1], f"{num(v[0][0], 0)}, {v[0][1] / 1e6:,.1f} ms",
                         f"{num(v[1][0], 0)}, {v[1][1] / 1e6:,.1f} ms"] for k, v in top])
    return lines, runs.commands("page-fault2")


def t_compact(runs):
    node, lru = runs.json("compact", "compare", 2)
    sn, sl = node["mb_per_s_reader"], lru["mb_per_s_reader"]
    mn, ml = median(node["mb_per_s_round_total"]), median(lru["mb_per_s_round_total"])
    ln, ll = lru_lock(node), lru_lock(lru)
    what = (f"{plural(node['readers'], 'reader')} and {plural(node['thp_tenants'], 'THP tenant')}, "
            f"{node['memory_mib_per_node']} MiB, page cache folios of "
            f"{plural(1 << node['folio_order'], 'page')}, "
            f"{plural(node['rounds'], 'alternating round')} of {node['duration_s']:g} s per design")
    rows = [
        ["MB/s per reader, Amean", num(sn["amean"]), num(sl["amean"]) + change(sl["amean"], sn["amean"])],
        ["MB/s per reader, Hmean", num(sn["hmean"]), num(sl["hmean"]) + change(sl["hmean"], sn["hmean"])],
        ["MB/s per reader, CoeffVar", num(sn["coeffvar"], 2), num(sl["coeffvar"], 2)],
        [f"MB/s of all readers, median of {plural(len(node['mb_per_s_round_total']), 'round')}", num(mn),
         num(ml) + change(ml, mn)],
        ["LRU lock contended/acquired", f"{100 * ln['fraction']:.3f} %",
         f"{100 * ll['fraction']:.3f} %" + less(ln["fraction"], ll["fraction"])],
        ["LRU lock wait per op", f"{num(ln['wait_per_op'])} ns",
         f"{num(ll['wait_per_op'])} ns" + less(ln["wait_per_op"], ll["wait_per_op"])],
        ["THP faults that got a huge page", f"{node['thp_fault_success_pct']:.1f} %",
         f"{lru['thp_fault_success_pct']:.1f} %"],
    ]
    for key in ("compact_stall", "compact_success", "compact_isolated", "compact_daemon_wake",
                "pgmigrate_success"):
        rows.append([key, num(node[key], 0), num(lru[key], 0)])
    ratio = median(lru["mb_per_s_round_total"]) / mn if mn else 0
    con = ln["fraction"] / ll["fraction"] if ll["fraction"] else float("inf")
    lines = [shape_line(node, what) + ".", ""]
    lines += table(["", "node lock", "lruvec lock"], rows)
    lines += ["", goal("readers' MB/s in the lruvec design at least 1.2× the node design's "
                       f"(medians of the rounds: {ratio:.2f}×)", ratio >= 1.2),
              goal(f"the node design's LRU lock contended/acquired at least 5× the lruvec "
                   f"design's ({con:.1f}×)", con >= 5), ""]
    over = lru["thp_fault_over_zero"]
    fewer = lru["lru_acquired_per_mib_small"] / lru["lru_acquired_per_mib_huge"] \
        if lru["lru_acquired_per_mib_huge"] else float("inf")
    mech = [
        ["migrate scanner, isolate and put back, one thread", f"{lru['scan_pfns_per_s'] / 1e6:.1f} M PFNs/s", "at least 20 M PFNs/s"],
        ["2 MiB huge page fault", f"{lru['thp_fault_ns'] / 1e3:.1f} µs = {over:.2f}× a bare 2 MiB memset ({lru['zero_2m_ns'] / 1e3:.1f} µs)", "at most 1.2×"],
        ["LRU lock acquisitions per MiB faulted", f"{lru['lru_acquired_per_mib_huge']:.2f} huge, {lru['lru_acquired_per_mib_small']:.2f} small ({fewer:.1f}× fewer)", "at least 10× fewer"],
    ]
    lines += ["The mechanisms, measured once after the rounds on an idle machine (medians of 7 rounds):", ""]
    lines += table(["", "measured", "goal"], mech)
    lines += ["", goal("all three", lru["scan_pfns_per_s"] >= 20e6 and over <= 1.2 and fewer >= 10)]
    return lines, runs.commands("compact")


def swap_budget_share(objs):
    """The largest VmHWM (after every round and ceiling) over memory + the in-memory device."""
    return max(o["vm_hwm_budget_pct"] for o in objs), objs[0]["hwm_budget_mib"]


def swap_kind(o):
    return "in-memory" if o["swap_device"] == "memory" else o["swap_device"]


def swap_ceiling_cells(o):
    if "swap_ceiling_pages_per_s" not in o:
        return "n/a", "n/a", "n/a"
    return (f"{num(o['swap_ceiling_pages_per_s'], 0)} ({num(o['swap_ceiling_min'], 0)}–"
            f"{num(o['swap_ceiling_max'], 0)} over {o['swap_ceiling_slices']} slices)",
            f"{100 * o['swap_ceiling_ratio']:.1f} %", o["swap_ceiling_ratio"])


def t_swap(runs):
    node, lru = runs.json("swap", "compare", 2)
    (one,) = runs.json("swap", "single", 1)
    if node["lock"] != "node" or lru["lock"] != "lruvec":
        fail("swap: expected the node object, then the lruvec object")
    sn, sl = node["faults_per_s_tenant"], lru["faults_per_s_tenant"]
    mn, ml = median(node["faults_per_s_round_total"]), median(lru["faults_per_s_round_total"])
    ln, ll = lru_lock(node), lru_lock(lru)
    what = (f"{plural(node['tenants'], 'tenant')} (memcg limit {node['limit_mib']} MiB, "
            f"address space {node['region_mib']} MiB each) and "
            f"{plural(node['readers'], 'page cache reader')}, {node['memory_mib_per_node']} MiB, "
            f"{swap_kind(node)} swap of {node['swap_mib']} MiB, "
            f"{plural(node['rounds'], 'alternating round')} of {node['duration_s']:g} s per design")
    cn, cl = swap_ceiling_cells(node), swap_ceiling_cells(lru)
    rows = [
        ["faults/s per tenant, Amean", num(sn["amean"], 0), num(sl["amean"], 0) + change(sl["amean"], sn["amean"])],
        ["faults/s per tenant, Hmean", num(sn["hmean"], 0), num(sl["hmean"], 0) + change(sl["hmean"], sn["hmean"])],
        ["faults/s per tenant, CoeffVar", num(sn["coeffvar"], 2), num(sl["coeffvar"], 2)],
        [f"faults/s of all tenants, median of {plural(len(node['faults_per_s_round_total']), 'round')}",
         num(mn, 0), num(ml, 0) + change(ml, mn)],
        ["page accesses/s of all tenants", num(node["accesses_per_s"], 0),
         num(lru["accesses_per_s"], 0) + change(lru["accesses_per_s"], node["accesses_per_s"])],
        ["page cache readers' MB/s", num(node["file_mb_per_s"]),
         num(lru["file_mb_per_s"]) + change(lru["file_mb_per_s"], node["file_mb_per_s"])],
        ["swap traffic, (pswpin + pswpout)/s", num(node["swap_traffic_pages_per_s"], 0),
         num(lru["swap_traffic_pages_per_s"], 0)],
        ["ceiling, pages/s (spread)", cn[0], cl[0]],
        ["swap traffic / ceiling", cn[1], cl[1]],
        ["LRU lock contended/acquired", f"{100 * ln['fraction']:.3f} %",
         f"{100 * ll['fraction']:.3f} %" + less(ln["fraction"], ll["fraction"])],
        ["LRU lock wait per access", f"{num(ln['wait_per_op'])} ns",
         f"{num(ll['wait_per_op'])} ns" + less(ln["wait_per_op"], ll["wait_per_op"])],
    ]
    for key in ("pswpin", "pswpout", "swap_ra", "swap_ra_hit", "workingset_refault_anon",
                "workingset_activate_anon", "workingset_refault", "pgscan_anon", "pgsteal_anon"):
        rows.append([f"`{key}`", num(node[key], 0), num(lru[key], 0)])
    share, budget = swap_budget_share([node, lru])
    rows.append([f"VmHWM, share of memory + in-memory swap ({budget} MiB)",
                 f"{share:.1f} % (the larger of the two)", ""])
    ratio = ml / mn if mn else 0
    con = ln["fraction"] / ll["fraction"] if ll["fraction"] else float("inf")
    lines = [shape_line(node, what) + ".", ""]
    lines += table(["", "node lock", "lruvec lock"], rows)
    lines += ["", goal("faults/s in the lruvec design at least 1.1× the node design's (medians of "
                       f"the rounds: {ratio:.2f}×)", ratio >= 1.1),
              goal(f"the node design's LRU lock contended/acquired at least 5× the lruvec "
                   f"design's ({con:.1f}×)", con >= 5),
              goal(f"VmHWM at most 110 % of memory + in-memory swap ({share:.1f} %)", share <= 110), ""]
    c1 = swap_ceiling_cells(one)
    s1, b1 = swap_budget_share([one])
    what1 = (f"{plural(one['tenants'], 'tenant')} (memcg limit {one['limit_mib']} MiB, address "
             f"space {one['region_mib']} MiB) and {plural(one['readers'], 'page cache reader')}, "
             f"{one['memory_mib_per_node']} MiB, {swap_kind(one)} swap of {one['swap_mib']} MiB, "
             f"{plural(one['rounds'], 'round')} of {one['duration_s']:g} s")
    rows1 = [
        ["faults/s", num(one["faults_per_s_total"], 0)],
        ["page accesses/s", num(one["accesses_per_s"], 0)],
        ["`pswpin`, `pswpout`", f"{num(one['pswpin'], 0)}, {num(one['pswpout'], 0)}"],
        ["swap traffic, (pswpin + pswpout)/s", num(one["swap_traffic_pages_per_s"], 0)],
        ["ceiling, pages/s (spread)", c1[0]],
        ["swap traffic / ceiling", f"**{c1[1]}**"],
        ["swap traffic / ceiling, each round",
         ", ".join(f"{100 * t / c:.1f} %" for t, c in zip(one.get("swap_traffic_round_pages_per_s", []),
                                                          one.get("swap_ceiling_round_pages_per_s", [])))
         or "n/a"],
        [f"VmHWM, share of memory + in-memory swap ({b1} MiB)", f"{s1:.1f} %"],
    ]
    lines += ["One tenant against the ceiling: " + shape_line(one, what1) + ".", ""]
    lines += table(["", "lruvec lock"], rows1)
    lines += ["", goal("swap traffic at 40 % of the ceiling or more",
                       c1[2] != "n/a" and c1[2] >= 0.4)]
    return lines, runs.commands("swap")


def t_reparent(runs):
    node, lru = runs.json("reparent", "compare", 2)
    if node["lock"] != "node" or lru["lock"] != "lruvec":
        fail("reparent: expected the node object, then the lruvec object")
    what = (f"{plural(node['containers'], 'container')} × "
            f"{plural(node['readers_per_container'], 'reader')} (memcg limit "
            f"{node['limit_mib']} MiB each) and a memcg of {node['pages']:,} cached pages removed "
            f"at the half of each round, {plural(node['rounds'], 'alternating round')} of "
            f"{node['duration_s']:g} s per design")
    sn, sl = node["mb_per_s_reader"], lru["mb_per_s_reader"]
    rows = [
        ["MB/s per reader, Amean (the whole round)", num(sn["amean"]),
         num(sl["amean"]) + change(sl["amean"], sn["amean"])],
        ["pages reparented per removal", num(node["pages_reparented"], 0), num(lru["pages_reparented"], 0)],
        ["folios isolated during the removal", num(node["isolated_at_removal"], 0),
         num(lru["isolated_at_removal"], 0)],
        ["`lv_memcg_remove()`, mean", f"{num(node['remove_us'])} µs", f"{num(lru['remove_us'])} µs"],
        ["MB/s per reader, the quarter before the removal", num(node["mb_per_s_reader_before"]),
         num(lru["mb_per_s_reader_before"])],
        ["MB/s per reader, the quarter from the removal on", num(node["mb_per_s_reader_after"]),
         num(lru["mb_per_s_reader_after"])],
        ["after / before", f"{node['after_before_ratio']:.3f}×", f"**{lru['after_before_ratio']:.3f}×**"],
        ["LRU lock contended/acquired", f"{100 * lru_lock(node)['fraction']:.3f} %",
         f"{100 * lru_lock(lru)['fraction']:.3f} %"],
    ]
    share, mib = hwm_share([node, lru])
    rows.append([f"VmHWM, share of the configured {mib} MiB", f"{share:.1f} % (the larger of the two)", ""])
    ok = (lru["after_before_ratio"] >= 0.9 and lru["isolated_at_removal"] > 0 and
          lru["pages_reparented"] >= node["pages"])
    lines = [shape_line(node, what) + ".", ""]
    lines += table(["", "node lock", "lruvec lock"], rows)
    lines += ["", goal("the memcg removed with its folios isolated, and the other tenants' MB/s from "
                       "the removal on at least 0.9× the quarter before, in the lruvec design", ok)]
    return lines, runs.commands("reparent")


USEMEM_WAITS = [("total (lruvec and node classes)", "lru_wait_ms"),
                ("`lru_note_cost` + `shrink_*`", "cost_sites_wait_ms"),
                ("`lru_note_cost`", "lru_note_cost_wait_ms"),
                ("`shrink_inactive_list`", "shrink_inactive_list_wait_ms"),
                ("`shrink_active_list`", "shrink_active_list_wait_ms")]


def lru_sites(o):
    """The LRU lock's call sites of a column, summed over its rounds: caller -> wait in ns."""
    out = {}
    for st in o["lock_sites"]:
        if st["type"] in ("lruvec", "node"):
            out[st["caller"]] = out.get(st["caller"], 0) + st["wait_total_ns"]
    return out


def usemem_ratios(lck, vm):
    return (vm["lru_wait_ms"] / lck["lru_wait_ms"] if lck["lru_wait_ms"] else 0,
            vm["cost_sites_wait_ms"] / lck["cost_sites_wait_ms"] if lck["cost_sites_wait_ms"] else 0)


def t_usemem(runs):
    lck, vm = columns(runs, "usemem", ["locked", "vmstat"])
    what = (f"{plural(lck['threads'], 'writer')} of {lck['region_mib']} MiB each in one memcg limited "
            f"to {lck['limit_mib']} MiB, {lck['memory_mib_per_node']} MiB, in-memory swap of "
            f"{lck['swap_mib']} MiB, {plural(lck['rounds'], 'alternating round')} of "
            f"{lck['duration_s']:g} s per setting, lruvec lock, {lck['backend']} locks")
    sl, sv = lck["mb_per_s_thread"], vm["mb_per_s_thread"]
    ml, mv = median(lck["mb_per_s_round_total"]), median(vm["mb_per_s_round_total"])
    ll, lv = lru_lock(lck), lru_lock(vm)
    mbl, mbv = mb_read(lck), mb_read(vm)
    rows = [
        ["MB/s per writer, Hmean", num(sl["hmean"]), num(sv["hmean"]) + change(sv["hmean"], sl["hmean"]), ""],
        [f"MB/s of all writers, median of {plural(len(lck['mb_per_s_round_total']), 'round')}", num(ml),
         num(mv) + change(mv, ml), ""],
        ["LRU lock acquired per MB written", num(ll["acquired"] / mbl if mbl else 0),
         num(lv["acquired"] / mbv if mbv else 0),
         times(lv["acquired"] / mbv if mbv else 0, ll["acquired"] / mbl if mbl else 0)],
        ["LRU lock contended/acquired", f"{100 * ll['fraction']:.3f} %", f"{100 * lv['fraction']:.3f} %", ""],
        ["LRU lock wait per round, each round (ms)", ", ".join(num(v) for v in lck["round_lru_wait_ms"]),
         ", ".join(num(v) for v in vm["round_lru_wait_ms"]), ""],
    ]
    for label, key in USEMEM_WAITS:
        rows.append([f"LRU lock wait per round, median (ms): {label}", num(lck[key]), num(vm[key]),
                     times(vm[key], lck[key])])
    rows.append(["swap-in faults (all rounds)", num(lck["counters"]["swap-in faults"], 0),
                 num(vm["counters"]["swap-in faults"], 0), ""])
    total, sites = usemem_ratios(lck, vm)
    lines = [shape_line(lck, what) + ".", ""]
    lines += table(["", "locked", "vmstat", "vmstat/locked"], rows)
    lines += ["", goal(f"total LRU lock wait with vmstat at most 0.6× locked's ({total:.2f}×, medians "
                       "of the rounds)", total <= 0.6),
              goal(f"the `lru_note_cost` and `shrink_*` sites' wait at most 0.2× ({sites:.2f}×)",
                   sites <= 0.2)]
    a, b = lru_sites(lck), lru_sites(vm)
    top = sorted(set(a) | set(b), key=lambda c: -max(a.get(c, 0), b.get(c, 0)))[:8]
    if top:
        lines += ["", "The LRU lock's call sites with the most wait, all rounds (`perf lock contention`'s "
                  "caller):", ""]
        lines += table(["caller", "locked", "vmstat", "vmstat/locked"],
                       [[f"`{c}`", f"{a.get(c, 0) / 1e6:,.1f} ms", f"{b.get(c, 0) / 1e6:,.1f} ms",
                         times(b.get(c, 0), a.get(c, 0))] for c in top])
    return lines, runs.commands("usemem")


# Alex Shi's v1 numbers, averaged over 24 containers on 24 CPUs (5.3-rc4, then + the series).
AIM9_PUBLISHED = {
    "page_test": {"hmean": (34355.4, 35810.9), "coeffvar": (0.93125, 0.623333), "bhmean50": (34579.2, 35977.1)},
    "brk_test": {"hmean": (95470.0, 97769.6), "coeffvar": (1.31375, 0.609583), "bhmean50": (96141.4, 98194.0)},
}


def t_aim9(runs):
    page = runs.json("aim9", "page_test", 2)
    brk = runs.json("aim9", "brk_test", 2)
    o = page[0]
    what = (f"{plural(o['containers'], 'container')}, one aim9 thread each, "
            f"{plural(o['iterations'], 'iteration')} of {o['duration_s']:g} s per container and "
            f"round, {plural(o['rounds'], 'alternating round')} per design")
    rows = []
    for test, (node, lru) in (("page_test", page), ("brk_test", brk)):
        pub = AIM9_PUBLISHED[test]
        sn, sl = node["ops_per_sec"], lru["ops_per_sec"]
        for key, label, digits, pct in (("hmean", "Hmean", 0, True), ("bhmean50", "BHmean-50", 0, True),
                                        ("coeffvar", "CoeffVar", 2, False)):
            a, b = pub[key]
            rows.append([f"{test} ops/s per container, {label}", num(sn[key], digits),
                         num(sl[key], digits) + (change(sl[key], sn[key]) if pct else ""),
                         f"{num(a, digits)} → {num(b, digits)}" + (change(b, a) if pct else "")])
        ln, ll = lru_lock(node), lru_lock(lru)
        rows.append([f"{test} LRU lock contended/acquired", f"{100 * ln['fraction']:.3f} %",
                     f"{100 * ll['fraction']:.3f} %", ""])
        if test == "page_test":
            rows.append(["page_test pages faulted and released per second per thread",
                         num(node["pages_per_sec"], 0), num(lru["pages_per_sec"], 0), ""])
    lines = [shape_line(o, what) + ".", ""]
    lines += table(["", "node lock", "lruvec lock", "published, 24 CPUs (5.3-rc4 → + series)"], rows)
    return lines, runs.commands("aim9")


def t_aim9_faults(runs):
    ids = [rid for rid, _ in runs.cmds["aim9-faults"]]
    objs = [runs.json("aim9-faults", rid, 1)[0] for rid in ids]
    o = objs[0]
    pps = [x["pages_per_sec"] for x in objs]
    hm = [x["ops_per_sec"]["hmean"] for x in objs]
    what = (f"1 container, one aim9 thread, {plural(o['iterations'], 'iteration')} of "
            f"{o['duration_s']:g} s, {plural(len(objs), 'run')}")
    rows = [
        ["pages faulted and released per second, each run", ", ".join(num(v / 1e6, 2) + " M" for v in pps)],
        ["pages faulted and released per second, median", f"**{num(median(pps) / 1e6, 2)} M**"],
        ["page_test ops/s, Hmean, median", num(median(hm), 0)],
    ]
    lines = [shape_line(o, what) + ".", ""]
    lines += table(["", "lruvec lock"], rows)
    lines += ["", goal("2 M pages faulted and released per second or more (median)",
                       median(pps) >= 2e6)]
    cmds = runs.commands("aim9-faults", {ids[0]})
    return lines, [f"{c}    # x {len(ids)}" for c in cmds]


# Michael Larabel's stress-ng NUMA results on a Ryzen 9 5950X (one node, 32 threads).
NUMA_PUBLISHED = {"rcu": 49.33, "sweep": 412.88, "rcu-expedited": 468.81}


def t_numa(runs):
    rcu, sweep = runs.json("numa", "compare", 2)
    (exp,) = runs.json("numa", "expedited", 1)
    if rcu["disable"] != "rcu" or sweep["disable"] != "sweep":
        fail("numa: expected the rcu object, then the sweep object")
    cols = [rcu, sweep, exp]
    base = rcu["bogo_ops_per_sec"]
    what = (f"{plural(rcu['instances'], 'instance')}, {plural(rcu['nodes'], 'node')}, lruvec "
            f"lock; compare: {plural(rcu['rounds'], 'alternating round')} of "
            f"{rcu['duration_s']:g} s per mode; "
            f"rcu-expedited: one run of {exp['duration_s']:g} s")

    def us(ns):
        return f"{ns / 1e3:,.1f} µs" if ns < 1e6 else f"{ns / 1e6:,.1f} ms"

    rows = [
        ["bogo ops/s (real time)"] + [num(c["bogo_ops_per_sec"], 2) + ("" if c is rcu else f" ({times(c['bogo_ops_per_sec'], base)})") for c in cols],
        ["bogo ops/s, median of rounds"] + [num(median(c["bogo_ops_per_sec_round_total"]), 2) for c in cols],
        ["`lru_cache_disable` p50"] + [us(c["disable_latency_ns"]["p50"]) for c in cols],
        ["`lru_cache_disable` p99"] + [us(c["disable_latency_ns"]["p99"]) for c in cols],
        ["`lru_cache_disable` max"] + [us(c["disable_latency_ns"]["max"]) for c in cols],
        ["`lru_cache_disable` calls"] + [num(c["disable_latency_ns"]["calls"], 0) for c in cols],
        ["pages migrated"] + [num(c["pgmigrate_success"], 0) for c in cols],
        ["published bogo ops/s (Ryzen 9 5950X, 32 threads, one node)"] +
        [num(NUMA_PUBLISHED[k], 2) + ("" if k == "rcu" else f" ({times(NUMA_PUBLISHED[k], NUMA_PUBLISHED['rcu'])})")
         for k in ("rcu", "sweep", "rcu-expedited")],
    ]
    lines = [shape_line(rcu, what) + ".", ""]
    lines += table(["", "rcu (as v5.18)", "sweep (as v5.17)", "rcu-expedited (as the fix)"], rows)
    lines += ["", goal("sweep at 5× rcu or more, and sweep's `lru_cache_disable` p50 at 20 µs "
                       "or less", sweep["bogo_ops_per_sec"] >= 5 * base and
                       sweep["disable_latency_ns"]["p50"] <= 20000)]
    return lines, runs.commands("numa")


def t_kernel(runs):
    rows = []
    kv = None
    kvs = []
    sides = []
    for rid, label in (("free", "unpinned"), ("pin", "`--pin`")):
        kv = runs.kv("kernel", rid, "readtwice-vs-kernel")
        kvs.append(kv)
        sides += runs.lines("kernel", rid, ("readtwice-vs-kernel: lvbench:",
                                              "readtwice-vs-kernel: kernel:"))
        rows.append([label, kv["lvbench_mb_per_s_reader"], kv["kernel_mb_per_s_reader"],
                     f"**{float(kv['ratio']):.2f}×**", kv["at_target"],
                     kv.get("ceiling_mb_per_s_reader", "n/a"),
                     f"{float(kv['bound']):.2f}×" if "bound" in kv else "n/a"])
    fs = os.environ.get("BENCH_KERNEL_FS", "?")
    lines = [f"{plural(int(kv['containers']), 'container')}, "
             f"{plural(int(kv['readers']), 'reader')} in all, "
             f"{plural(int(kv['rounds']), 'alternating round')} per line; target {kv['target']}×; "
             f"the kernel side's sparse files on {fs}. MB/s per reader, medians over the rounds. "
             f"The two sides ran:", ""]
    lines += [f"    {l.split(':', 2)[2].strip()}" for l in sides]
    lines += [""]
    lines += table(["", "lvbench", "host kernel `dd`", "ratio", "rounds ≥ target", "ceiling",
                    "bound"], rows)
    target = float(kv["target"])
    lines += [""]
    for label, k in zip(("unpinned", "`--pin`"), kvs):
        within = "bound" in k and float(k["bound"]) >= target
        lines += [f"- {label}: " + goal(f"lvbench at {target:g}× the host kernel or more (ratio of "
                                        f"the medians)", float(k["ratio"]) >= target)
                  + (f" The bound is {float(k['bound']):.2f}×: the goal is "
                     f"{'within' if within else 'beyond'} what this machine allows."
                     if "bound" in k else "")]
    return lines, runs.commands("kernel")


# The README's headline table: one row per result, from the same runs as the tables above.
HEADLINE_NEEDS = ("readtwice", "readtwice-c16", "readtwice-ceiling", "churn", "aim9", "numa",
                  "compact", "swap", "usemem")


def headline(runs):
    def pct(new, base):
        return f"{new * 100 / base - 100:+.1f} %"

    def designs(name, key):
        node, lru = runs.json(name, "compare", 2)
        ln, ll = lru_lock(node), lru_lock(lru)
        return (pct(lru[key]["amean"] if "amean" in lru[key] else lru[key]["hmean"],
                    node[key]["amean"] if "amean" in node[key] else node[key]["hmean"]),
                times(ln["fraction"], ll["fraction"]))

    rows = []
    g, c = designs("readtwice", "mb_per_s_reader")
    rows.append(["readtwice, 4 containers × 2 readers: lruvec lock vs node lock",
                 f"{g} MB/s per reader, LRU lock contention {c} less", "`make bench`"])
    g, c = designs("readtwice-c16", "mb_per_s_reader")
    rows.append(["readtwice, 16 containers × 2 readers", f"{g} MB/s per reader, contention {c} less",
                 "`lvbench compare readtwice --containers 16`"])
    node, lru = runs.json("churn", "compare", 2)
    rows.append(["LRU churn, 16 containers, 32 threads",
                 f"{pct(lru['ops_per_sec_per_thread']['hmean'], node['ops_per_sec_per_thread']['hmean'])}"
                 f" ops/s per thread, LRU lock wait per op "
                 f"{times(lru_lock(node)['wait_per_op'], lru_lock(lru)['wait_per_op'])} less",
                 "`lvbench compare churn --containers 16 --threads 32`"])
    node, lru = runs.json("aim9", "page_test", 2)
    rows.append(["AIM9 page_test, one container per CPU",
                 f"{pct(lru['ops_per_sec']['hmean'], node['ops_per_sec']['hmean'])} ops/s (Hmean)",
                 "`lvbench compare aim9`"])
    rcu, sweep = runs.json("numa", "compare", 2)
    rows.append(["stress-ng numa: `lru_cache_disable()` by sweep vs the 5.18 RCU wait",
                 f"{times(sweep['bogo_ops_per_sec'], rcu['bogo_ops_per_sec'])} bogo ops/s "
                 f"(published: 8.37×)", "`lvbench compare numa --by disable --instances 16`"])
    node, lru = runs.json("compact", "compare", 2)
    mn, ml = median(node["mb_per_s_round_total"]), median(lru["mb_per_s_round_total"])
    rows.append(["readers beside tenants whose huge page faults compact",
                 f"{pct(ml, mn)} readers' MB/s, LRU lock contention "
                 f"{times(lru_lock(node)['fraction'], lru_lock(lru)['fraction'])} less",
                 "`lvbench compare compact`"])
    node, lru = runs.json("swap", "compare", 2)
    mn, ml = median(node["faults_per_s_round_total"]), median(lru["faults_per_s_round_total"])
    rows.append([f"{node['tenants']} tenants swapping at 1.5× their memory limits",
                 f"{pct(ml, mn)} faults/s, LRU lock contention "
                 f"{times(lru_lock(node)['fraction'], lru_lock(lru)['fraction'])} less",
                 f"`lvbench compare swap --containers {node['tenants']}`"])
    lck, vm = columns(runs, "usemem", ["locked", "vmstat"])
    total, sites = usemem_ratios(lck, vm)
    rows.append([f"usemem, {lck['threads']} writers in one memcg: scan costs counted per CPU "
                 "vs under the LRU locks",
                 f"LRU lock wait {total:.2f}×, `lru_note_cost` + `shrink_*` {sites:.2f}× "
                 "(published: 0.39×, 0.04×)", "`lvbench compare usemem --by cost`"])
    ids = [rid for rid, _ in runs.cmds["readtwice-ceiling"] if rid.startswith("order0-")]
    share = median([100 * runs.json("readtwice-ceiling", rid, 1)[0]["ceiling_fraction"] for rid in ids])
    rows.append(["one reader, one page per folio, reading ahead: share of the memory-work ceiling",
                 f"{share:.1f} % (median of {len(ids)})",
                 "`lvbench readtwice --containers 1 --readers 1 --memory 1024 --file-size 8G`"])
    ids = [rid for rid, _ in runs.cmds["readtwice-ceiling"] if rid.startswith("order6-")]
    share = median([100 * runs.json("readtwice-ceiling", rid, 1)[0]["ceiling_fraction"] for rid in ids])
    rows.append(["one reader, 64-page folios: share of the memory-work ceiling",
                 f"{share:.1f} % (median of {len(ids)})",
                 "`lvbench readtwice --containers 1 --readers 1 --memory 1024 --file-size 8G "
                 "--folio-order 6`"])
    return table(["result", "measured", "command"], rows)


RENDER = {
    "readtwice": t_readtwice,
    "readtwice-c16": t_readtwice_c16,
    "readtwice-adaptive": t_readtwice_adaptive,
    "readtwice-ceiling": t_readtwice_ceiling,
    "readonce": t_readonce,
    "readtwice-order": t_readtwice_order,
    "readtwice-large": t_readtwice_large,
    "batch-policy": t_batch_policy,
    "churn": t_churn,
    "churn-sites": t_churn_sites,
    "scale": t_scale,
    "aim9": t_aim9,
    "aim9-faults": t_aim9_faults,
    "numa": t_numa,
    "compact": t_compact,
    "swap": t_swap,
    "reparent": t_reparent,
    "usemem": t_usemem,
    "page-fault2": t_page_fault2,
    "kernel": t_kernel,
}


def block(name, machine, quick, body, cmds):
    lines = ["<!-- Generated by scripts/bench-report.sh; edit the script, not this block. -->"]
    if quick:
        lines += ["", "**Quick run (`--quick`): durations cut to test the script; these numbers "
                  "are not measurements.**"]
    lines += ["", f"Machine: {machine}", "", "Produced by:", ""]
    lines += code_list(cmds)
    lines += ["", f"Regenerate with `scripts/bench-report.sh --only {name}`.", ""]
    lines += body
    return lines


def main():
    mode, path = sys.argv[1], sys.argv[2]
    names = sys.argv[3:]
    with open(path) as f:
        text = f.read()
    lines = text.split("\n")
    for n in names:
        find_block(lines, n, path)
    if mode == "check":
        return
    work = os.environ["BENCH_WORK"]
    machine = os.environ["BENCH_MACHINE"]
    quick = os.environ.get("BENCH_QUICK") == "1"
    runs = Runs(work)
    new = {}
    for n in names:
        try:
            body, cmds = RENDER[n](runs)
        except (KeyError, IndexError, TypeError, ValueError, ZeroDivisionError) as e:
            fail(f"{n}: cannot read the runs' output ({type(e).__name__}: {e})")
        top = os.environ.get("BENCH_TOP", "") + "/"
        body = [l.replace(top, "") for l in body]
        new[n] = block(n, machine, quick, body, cmds)
        print("\n".join(new[n][1:]) + "\n")
    for n in names:
        a, b = find_block(lines, n, path)
        lines[a + 1:b] = new[n]
    readme = os.environ.get("BENCH_README", "")
    readme_lines = None
    if readme and all(n in names for n in HEADLINE_NEEDS):
        with open(readme) as f:
            readme_lines = f.read().split("\n")
        a, b = find_block(readme_lines, "headline", readme)
        try:
            rows = headline(runs)
        except (KeyError, IndexError, TypeError, ValueError, ZeroDivisionError) as e:
            fail(f"headline: cannot read the runs' output ({type(e).__name__}: {e})")
        note = [f"Machine: {machine}", ""]
        if quick:
            note = ["**Quick run (`--quick`): not measurements.**", ""] + note
        readme_lines[a + 1:b] = note + rows
    elif readme:
        print(f"{prog}: {readme} not rewritten: its headline table needs "
              f"{', '.join(HEADLINE_NEEDS)} in one run")
    # Both files are complete before either is replaced.
    replace(path, lines)
    if readme_lines is not None:
        replace(readme, readme_lines)


def replace(path, lines):
    # Beside the document, so the rename stays on one file system; its mode is kept.
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".bench-report.", dir=d)
    try:
        with os.fdopen(fd, "w") as f:
            f.write("\n".join(lines))
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, os.stat(path).st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


main()
PYTHON

python3 "$work/report.py" check "$out" "${selected[@]}" || exit 1

# ---- the machine -------------------------------------------------------------------------------

cpu=$(sed -n 's/^model name[[:space:]]*: *//p' /proc/cpuinfo 2>/dev/null | head -n 1)
[ -n "$cpu" ] || cpu=$(uname -m)
cpus=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo '?')
mem=$(awk '$1 == "MemTotal:" { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo 2>/dev/null)
cc_version=$(${CC:-cc} --version 2>/dev/null | head -n 1)
if commit=$(git -C "$top" rev-parse --short=12 HEAD 2>/dev/null); then
	# What lvbench is built from; documents and tests do not change a measurement.
	if [ -n "$(git -C "$top" status --porcelain -- src include tools Makefile 2>/dev/null)" ]; then
		tree="with uncommitted changes to src/, include/, tools/ or the Makefile"
	else
		tree="clean"
	fi
	source="commit $commit, $tree"
else
	source="not a git checkout"
fi
if [ -z "$build_lvbench" ]; then
	source="$source; lvbench given as $(shown "$lvbench"), not built by this script"
fi
load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')
machine="$cpu, $cpus online CPUs, ${mem:-? GiB}, $(uname -sr), ${cc_version:-unknown compiler};"
machine="$machine $source; load average $load at the start"
echo "$prog: machine: $machine"

# ---- the runs ----------------------------------------------------------------------------------

lv=$(shown "$lvbench")
vs_kernel=scripts/readtwice-vs-kernel.sh
run_tables=()
run_ids=()
run_cmds=()

# add TABLE ID CMD... - one run of a table.
add() {
	local t=$1 id=$2
	shift 2
	run_tables+=("$t")
	run_ids+=("$id")
	local c
	printf -v c '%q ' "$@"
	# A comma is never special to the shell: the sweep's counts read as typed.
	c=${c//\\,/,}
	run_cmds+=("${c% }")
}

# Quick shapes keep each workload's structure (both designs, alternating rounds, every run of
# a median) and cut durations, memory and counts so that a run takes about a second.
q_rt=()
q_1x1=(--memory 1024 --file-size 8G)
q_churn=(--duration 5)
q_sites=(--rounds 5 --duration 3)
q_aim9=()
q_numa=(--instances 16)
q_compact=()
q_swap=()
q_reparent=()
q_usemem=(--rounds 5)
q_pf2=(--rounds 5)
q_scale=(--sweep 10,100,1000,10000)
swap_rounds=3
pairs=5
fault_runs=3
q_kernel=()
if [ -n "$quick" ]; then
	q_rt=(--duration 0.2 --rounds 2 --memory 256)
	q_1x1=(--memory 128 --file-size 1G --duration 0.2)
	q_churn=(--duration 0.2 --rounds 2)
	q_sites=(--duration 0.2 --rounds 2)
	q_aim9=(--iterations 3 --duration 0.1)
	q_numa=(--instances 2 --duration 0.2)
	q_compact=(--memory 128 --duration 0.3 --rounds 1)
	q_swap=(--memory 64 --duration 0.3)
	q_reparent=(--pages 4096 --duration 0.4 --rounds 1)
	q_usemem=(--threads 2 --memory 64 --duration 0.3 --rounds 2)
	q_pf2=(--rounds 2 --duration 0.2 --file-size 16M)
	q_scale=(--sweep 2,8 --duration 0.2 --rounds 1 --memory 64)
	swap_rounds=1
	pairs=1
	fault_runs=1
	q_kernel=(--rounds 1 --duration 0.5)
fi

plan() {
	local i
	case $1 in
	readtwice) add "$1" compare "$lv" compare readtwice "${q_rt[@]}" --json ;;
	readtwice-c16) add "$1" compare "$lv" compare readtwice --containers 16 "${q_rt[@]}" --json ;;
	readtwice-adaptive)
		add "$1" compare "$lv" compare readtwice --backend adaptive "${q_rt[@]}" --json
		;;
	readonce) add "$1" compare "$lv" compare readonce "${q_rt[@]}" --json ;;
	readtwice-order) add "$1" compare "$lv" compare readtwice --by folio-order "${q_rt[@]}" --json ;;
	readtwice-large)
		add "$1" compare "$lv" compare readtwice --by batch-large --folio-order 4 "${q_rt[@]}" \
			--json
		;;
	batch-policy)
		add "$1" c16 "$lv" compare readtwice --by batch-policy --containers 16 "${q_rt[@]}" --json
		add "$1" c1 "$lv" compare readtwice --by batch-policy --containers 1 "${q_rt[@]}" --json
		add "$1" churn "$lv" compare churn --containers 16 --threads 32 --by batch-policy \
			"${q_churn[@]}" --json
		;;
	readtwice-ceiling)
		for ((i = 1; i <= pairs; i++)); do
			add "$1" "ra0-$i" "$lv" readtwice --containers 1 --readers 1 "${q_1x1[@]}" \
				--folio-order 0 --readahead 0 --json
			add "$1" "order0-$i" "$lv" readtwice --containers 1 --readers 1 "${q_1x1[@]}" \
				--folio-order 0 --json
			add "$1" "adaptive0-$i" "$lv" readtwice --containers 1 --readers 1 "${q_1x1[@]}" \
				--folio-order 0 --backend adaptive --json
			add "$1" "order6-$i" "$lv" readtwice --containers 1 --readers 1 "${q_1x1[@]}" \
				--folio-order 6 --json
		done
		;;
	churn)
		add "$1" compare "$lv" compare churn --containers 16 --threads 32 "${q_churn[@]}" --json
		;;
	churn-sites)
		add "$1" compare "$lv" compare churn --containers 16 --threads 32 --by lock-sites \
			"${q_sites[@]}" --json
		;;
	scale)
		add "$1" churn "$lv" scale churn "${q_scale[@]}" --json
		add "$1" readtwice "$lv" scale readtwice "${q_scale[@]}" --json
		;;
	aim9)
		add "$1" page_test "$lv" compare aim9 "${q_aim9[@]}" ${quick:+--rounds 2} --json
		add "$1" brk_test "$lv" compare aim9 --test brk_test "${q_aim9[@]}" ${quick:+--rounds 2} \
			--json
		;;
	aim9-faults)
		for ((i = 1; i <= fault_runs; i++)); do
			add "$1" "run$i" "$lv" aim9 --test page_test --containers 1 "${q_aim9[@]}" --json
		done
		;;
	numa)
		add "$1" compare "$lv" compare numa --by disable "${q_numa[@]}" ${quick:+--rounds 2} --json
		add "$1" expedited "$lv" numa "${q_numa[@]}" --disable rcu-expedited --json
		;;
	compact) add "$1" compare "$lv" compare compact "${q_compact[@]}" --json ;;
	swap)
		add "$1" compare "$lv" compare swap --containers 8 "${q_swap[@]}" ${quick:+--rounds 1} \
			--json
		add "$1" single "$lv" swap --rounds "$swap_rounds" "${q_swap[@]}" --json
		;;
	reparent) add "$1" compare "$lv" compare reparent "${q_reparent[@]}" --json ;;
	usemem) add "$1" compare "$lv" compare usemem --by cost "${q_usemem[@]}" --json ;;
	page-fault2) add "$1" compare "$lv" compare page_fault2 --by batch "${q_pf2[@]}" --json ;;
	kernel)
		local dir=()
		[ -n "$kernel_dir" ] && dir=(--dir "$(shown "$kernel_dir")")
		add "$1" free "$vs_kernel" --lvbench "$lv" "${dir[@]}" "${q_kernel[@]}"
		add "$1" pin "$vs_kernel" --lvbench "$lv" "${dir[@]}" "${q_kernel[@]}" --pin
		;;
	esac
}

for t in "${selected[@]}"; do
	plan "$t"
done
: >"$work/runs"
for i in "${!run_ids[@]}"; do
	printf '%s\t%s\t%s\n' "${run_tables[i]}" "${run_ids[i]}" "${run_cmds[i]}" >>"$work/runs"
done

if [ -n "$dry_run" ]; then
	echo "$prog: would rewrite in $(shown "$out"): ${selected[*]}"
	[ -n "$build_lvbench" ] && echo "make --no-print-directory BUILD=${BUILD:-build} $lv"
	printf '%s\n' "${run_cmds[@]}"
	exit 0
fi

if [ -n "$build_lvbench" ]; then
	echo "$prog: make --no-print-directory BUILD=${BUILD:-build} $lv"
	make --no-print-directory BUILD="${BUILD:-build}" "$lv" >"$work/make.log" 2>&1 || {
		cat "$work/make.log" >&2
		die "building $lv failed"
	}
fi
[ -x "$lvbench" ] || die "no lvbench at '$lv'"
if [[ " ${selected[*]} " == *" kernel "* ]]; then
	export BENCH_KERNEL_FS
	BENCH_KERNEL_FS=$(df --output=fstype "${kernel_dir:-${TMPDIR:-/tmp}}" 2>/dev/null | tail -n 1)
fi

start=$SECONDS
n=${#run_ids[@]}
for i in "${!run_ids[@]}"; do
	t=${run_tables[i]} id=${run_ids[i]} cmd=${run_cmds[i]}
	t0=$SECONDS
	printf '%s: [%d/%d] %s\n' "$prog" $((i + 1)) "$n" "$cmd"
	eval "$cmd" <"/dev/null" >"$work/$t.$id.out" 2>"$work/$t.$id.err"
	rc=$?
	if [ $rc -ne 0 ]; then
		echo "$prog: run failed (exit $rc): $cmd" >&2
		tail -n 20 "$work/$t.$id.err" >&2
		die "$(shown "$out") left as it was"
	fi
	printf '%s:        %d s\n' "$prog" $((SECONDS - t0))
done

BENCH_README=$readme BENCH_TOP=$top BENCH_WORK=$work BENCH_MACHINE=$machine BENCH_QUICK=${quick:-0} \
	python3 "$work/report.py" write "$out" "${selected[@]}" || die "$(shown "$out") left as it was"
elapsed=$((SECONDS - start))
echo "$prog: $n runs in $((elapsed / 60)) min $((elapsed % 60)) s; rewrote ${selected[*]} in $(shown "$out")"
