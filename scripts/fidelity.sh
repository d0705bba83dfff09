#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# fidelity.sh - the same workload shape on the host kernel and on lruvec, event by event
# (docs/fidelity.md). Each shape runs `dd bs=4k` readers on this kernel, in memory cgroups with
# limits, on files of a real file system (the page cache dropped before each run), then the same
# shape through `lvbench readtwice|readonce --passes N --json`, at --folio-order 0 and at the order
# the host's file system gives its page cache. It prints, per MiB read: LRU insertions,
# activations, deactivations, pages scanned and reclaimed by reclaim, refaults and activated
# refaults, and the final active share of the file LRU; then each lruvec figure over the
# kernel's, a star marking those more than 1.5x apart.
#
# Kernel figures: the readers' own events, from a tracefs instance that follows their process
# tree (set_event_pid, event-fork): page cache insertions and their order
# (mm_filemap_add_to_page_cache), mm_lru_activate, and reclaim's mm_vmscan_lru_shrink_inactive
# (scanned, reclaimed, activated) and mm_vmscan_lru_shrink_active (deactivated), which run in
# the readers' context when their memcg is at its limit; refaults and the LRU sizes from the
# memcgs' memory.stat; activated refaults from /proc/vmstat (global: the one figure other
# processes on the machine can add to). An aim9 page_test shape (anon faults and brk shrinks) is
# set beside `lvbench aim9` the same way.
#
# Needs root (cgroups, tracefs, drop_caches), bash, coreutils, python3 and a built lvbench.
set -u
set -o pipefail

prog=${0##*/}
here=$(cd "$(dirname "$0")" && pwd)

usage() {
	cat <<EOF
Usage: $prog [OPTIONS]

Runs each shape on this kernel and through lvbench and prints the per-MiB table and the
ratios. Shapes: readonce, readtwice (two readers of a file started together) and readseq
(one reader reading its file twice, one pass after the other), 1 and 4 tenants, memcg limit
at 1/2 and 2x the file, sparse files; readtwice on a real file; aim9 page_test.

Options:
  --size MIB      file size per tenant in MiB (default 512)
  --dir DIR       where the files go, on the file system to measure (default: a new
                  directory under the repository's top, removed at exit); not tmpfs
  --lvbench PATH  the lvbench to run (default: build/lvbench of this repository)
  --quick         readonce, readtwice and readseq with 1 tenant at 1/2 the file only
  --out FILE      also write the table into FILE between the lines
                  '<!-- fidelity.sh begin -->' and '<!-- fidelity.sh end -->'
  -h, --help      this help

Exit status: 0 success, 1 a run failed, 2 usage or not permitted (not root, no memory
cgroup, no tracefs).
EOF
}

die_usage() {
	echo "$prog: $*" >&2
	exit 2
}

size=512
dir=
lvbench=$here/../build/lvbench
quick=
out=
while [ $# -gt 0 ]; do
	case $1 in
	--size | --dir | --lvbench | --out)
		[ $# -ge 2 ] || die_usage "option '$1' needs a value"
		case $1 in
		--size)
			[[ $2 =~ ^[1-9][0-9]{0,5}$ ]] || die_usage "--size: '$2' is not a number of MiB"
			size=$2
			;;
		--dir)
			[ -d "$2" ] && [ -w "$2" ] || die_usage "--dir: '$2' is not a writable directory"
			dir=$2
			;;
		--lvbench)
			[ -x "$2" ] || die_usage "--lvbench: '$2' is not executable"
			lvbench=$2
			;;
		--out)
			grep -q '^<!-- fidelity.sh begin -->$' "$2" 2>/dev/null &&
				grep -q '^<!-- fidelity.sh end -->$' "$2" ||
				die_usage "--out: '$2' has no fidelity.sh begin/end lines"
			out=$2
			;;
		esac
		shift 2
		;;
	--quick)
		quick=1
		shift
		;;
	-h | --help)
		usage
		exit 0
		;;
	*) die_usage "unknown option '$1'" ;;
	esac
done
[ -x "$lvbench" ] || die_usage "no lvbench at '$lvbench' (run 'make', or give --lvbench)"
[ "$(id -u)" -eq 0 ] ||
	die_usage "the kernel side needs root (memory cgroups, tracefs, drop_caches)"
command -v python3 >/dev/null || die_usage "needs python3"

tracefs=/sys/kernel/tracing
[ -d $tracefs/instances ] || mount -t tracefs nodev $tracefs 2>/dev/null
[ -d $tracefs/instances ] || die_usage "no tracefs at $tracefs"

work=$(mktemp -d "${TMPDIR:-/tmp}/fidelity.XXXXXX") || exit 1
filedir=
cgroot=
inst=
cleanup() {
	trap - EXIT INT TERM
	[ -n "$inst" ] && echo 0 >"$inst/tracing_on" 2>/dev/null
	jobs -p | xargs -r kill 2>/dev/null
	wait 2>/dev/null
	if [ -n "$cgroot" ] && [ -d "$cgroot" ]; then
		find "$cgroot" -depth -mindepth 1 -type d -exec rmdir {} + 2>/dev/null
		rmdir "$cgroot" 2>/dev/null || echo "$prog: could not remove cgroup $cgroot" >&2
	fi
	[ -n "$inst" ] && rmdir "$inst" 2>/dev/null
	[ -n "$filedir" ] && rm -rf -- "$filedir"
	rm -rf -- "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---- memory cgroups, tracefs, files ------------------------------------------------------------

if [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw memory /sys/fs/cgroup/cgroup.controllers
then
	cgv=2
	own=$(sed -n 's/^0:://p' /proc/self/cgroup)
	base=/sys/fs/cgroup${own%/}
	grep -qw memory "$base/cgroup.subtree_control" 2>/dev/null ||
		echo +memory >"$base/cgroup.subtree_control" 2>/dev/null ||
		die_usage "cgroup v2: cannot enable the memory controller below $base"
else
	cgv=1
	own=$(sed -n 's/^[0-9]*:\([^:]*,\)\?memory\(,[^:]*\)\?:\(.*\)/\3/p' /proc/self/cgroup)
	base=/sys/fs/cgroup/memory${own%/}
	[ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ] ||
		die_usage "no memory cgroup: neither cgroup v2 with memory nor v1 /sys/fs/cgroup/memory"
fi
cgroot=$base/fidelity.$$
mkdir "$cgroot" 2>/dev/null || {
	try=$cgroot
	cgroot=
	die_usage "cannot create the memory cgroup $try (root and a writable cgroup tree needed)"
}
[ $cgv = 2 ] && { echo +memory >"$cgroot/cgroup.subtree_control" || exit 1; }

inst=$tracefs/instances/fidelity.$$
mkdir "$inst" || {
	inst=
	die_usage "cannot create a tracefs instance"
}
echo 32768 >"$inst/buffer_size_kb"
for e in filemap/mm_filemap_add_to_page_cache pagemap/mm_lru_insertion pagemap/mm_lru_activate \
	vmscan/mm_vmscan_lru_shrink_inactive vmscan/mm_vmscan_lru_shrink_active; do
	echo 1 >"$inst/events/$e/enable" || exit 1
done
echo 1 >"$inst/options/event-fork"

if [ -z "$dir" ]; then
	filedir=$(mktemp -d "$here/../.fidelity.XXXXXX") || exit 1
	dir=$filedir
fi
fstype=$(df --output=fstype "$dir" | tail -n 1)
[ "$fstype" = tmpfs ] && die_usage "--dir: $dir is on tmpfs, which has no page cache to measure"
fsdev=$(df --output=source "$dir" | tail -n 1)

# ---- one kernel run ------------------------------------------------------------------------------

# trace_start - empty the tracefs instance, start copying its events to $work/trace, and make
# the fifo $work/go on which the workload started next waits for trace_run's go.
trace_start() {
	echo >"$inst/trace"
	cat "$inst/trace_pipe" >"$work/trace" &
	trace_reader=$!
	rm -f "$work/go"
	mkfifo "$work/go"
}

# trace_run PID - trace PID's process tree (the workload waiting on $work/go) until it ends,
# then stop tracing and the copy trace_start began.
trace_run() {
	echo "$1" >"$inst/set_event_pid"
	echo 1 >"$inst/tracing_on"
	echo go >"$work/go"
	wait "$1"
	echo 0 >"$inst/tracing_on"
	echo >"$inst/set_event_pid"
	sleep 0.5
	kill $trace_reader 2>/dev/null
	wait $trace_reader 2>/dev/null
}

# kernel_run NAME MODE TENANTS LIMIT_MIB KIND - MODE readtwice (2 dd per tenant on its file,
# started together), readonce (1 dd per tenant on its own file) or readseq (2 dd per tenant on
# its own file, one after the other); KIND sparse or real. Writes $work/NAME.k: "key value" lines.
kernel_run() {
	local name=$1 mode=$2 tenants=$3 limit=$4 kind=$5 i r readers passes cg
	shape_readers "$mode"
	cg=$cgroot/$name
	mkdir "$cg" || return 1
	[ $cgv = 2 ] && { echo +memory >"$cg/cgroup.subtree_control" || return 1; }
	for ((i = 0; i < tenants; i++)); do
		mkdir "$cg/t$i" || return 1
		if [ $cgv = 2 ]; then
			echo $((limit << 20)) >"$cg/t$i/memory.max" || return 1
		else
			echo $((limit << 20)) >"$cg/t$i/memory.limit_in_bytes" || return 1
		fi
		if [ "$kind" = real ]; then
			[ -f "$dir/real-$i" ] || dd if=/dev/zero of="$dir/real-$i" bs=1M count="$size" \
				conv=fsync status=none || return 1
		else
			rm -f "$dir/sparse-$i"
			truncate -s "${size}M" "$dir/sparse-$i" || return 1
		fi
	done
	sync
	echo 3 >/proc/sys/vm/drop_caches
	cat /proc/vmstat >"$work/vm0"
	trace_start
	(
		read -r _ <"$work/go"
		for ((i = 0; i < tenants; i++)); do
			(
				echo "$BASHPID" >"$cg/t$i/cgroup.procs" || exit 1
				for ((r = 0; r < readers; r++)); do
					for ((p = 0; p < passes; p++)); do
						dd bs=4k if="$dir/$kind-$i" of=/dev/null status=none
					done &
				done
				wait
			) &
		done
		wait
	) &
	trace_run $!
	cat /proc/vmstat >"$work/vm1"
	for ((i = 0; i < tenants; i++)); do
		cat "$cg/t$i/memory.stat"
	done >"$work/stat"
	python3 - "$work/trace" "$work/vm0" "$work/vm1" "$work/stat" $cgv \
		$((tenants * readers * passes * size)) >"$work/$name.k" <<'PY' || return 1
import re, sys
trace, vm0, vm1, stat, cgv, mib = sys.argv[1:7]
ev = re.compile(r"\s(\w+):\s(.*)$")
fields = re.compile(r"(\w+)=(\S+)")
order, pages_by_order = {}, {}
s = dict.fromkeys(("insert", "insert_folios", "activate", "deactivate", "scan", "steal"), 0)
lost = 0
for line in open(trace, errors="replace"):
    if "LOST" in line:
        lost += 1
    m = ev.search(line)
    if not m:
        continue
    name, f = m.group(1), dict(fields.findall(m.group(2)))
    if name == "mm_filemap_add_to_page_cache":
        o = int(f.get("order", "0"))
        order[f["pfn"]] = o
        s["insert"] += 1 << o
        pages_by_order[o] = pages_by_order.get(o, 0) + (1 << o)
    elif name == "mm_lru_insertion":
        s["insert_folios"] += 1
    elif name == "mm_lru_activate":
        s["activate"] += 1 << order.get(f["pfn"], 0)
    elif name == "mm_vmscan_lru_shrink_inactive":
        s["scan"] += int(f["nr_scanned"])
        s["steal"] += int(f["nr_reclaimed"])
        s["activate"] += int(f["nr_activate_file"])
    elif name == "mm_vmscan_lru_shrink_active" and "FILE" in f.get("flags", ""):
        s["deactivate"] += int(f["nr_deactivated"])
def kv(path):
    return {l.split()[0]: int(l.split()[1]) for l in open(path) if len(l.split()) == 2}
a, b = kv(vm0), kv(vm1)
st = {}
for l in open(stat):
    k, v = l.split()
    st[k] = st.get(k, 0) + int(v)
s["refault"] = st.get("workingset_refault_file", 0)
s["refault_activate"] = b.get("workingset_activate_file", 0) - a.get("workingset_activate_file", 0)
if cgv == "2":
    act, inact = st.get("active_file", 0), st.get("inactive_file", 0)
else:
    act, inact = st.get("active_file", 0), st.get("inactive_file", 0)
s["active_share"] = act / (act + inact) if act + inact else 0
s["mib"] = int(mib)
# The order that holds the most pages: what the host's file system gives its page cache.
s["order"] = max(pages_by_order, key=pages_by_order.get) if pages_by_order else 0
s["lost"] = lost
for k, v in s.items():
    print(k, v)
PY
}

# shape_readers MODE - sets readers (per tenant) and passes (each reader's, in sequence).
shape_readers() {
	readers=1 passes=1
	case $1 in
	readtwice) readers=2 ;;
	readseq) passes=2 ;;
	esac
}

# ---- one lvbench run -----------------------------------------------------------------------------

# lvbench_run NAME MODE TENANTS LIMIT_MIB KIND ORDER - the same shape through lvbench, into
# $work/NAME.l: readtwice or readonce with --passes 1 (each reader reads its file once, as one
# dd), readseq as readonce --passes 2. A round too short for the readers to finish is run again
# twice as long.
lvbench_run() {
	local name=$1 mode=$2 tenants=$3 limit=$4 kind=$5 order=$6 dur=2 try readers passes
	local file=(--file-size "${size}M") workload=$mode
	shape_readers "$mode"
	[ "$mode" = readseq ] && workload=readonce
	[ "$kind" = real ] && file=(--file "$dir/real-0")
	for try in 1 2 3; do
		"$lvbench" "$workload" --containers "$tenants" --readers $readers "${file[@]}" \
			--limit "$limit" --memory $((tenants * size * 2 + 256)) --folio-order "$order" \
			--passes $passes --duration $dur --json >"$work/$name.json" 2>"$work/$name.err" || {
			echo "$prog: lvbench failed:" >&2
			cat "$work/$name.err" >&2
			return 1
		}
		python3 - "$work/$name.json" $((tenants * readers * passes)) \
			$((tenants * readers * passes * size)) \
			>"$work/$name.l" <<'PY' && return 0
import json, sys
o = json.loads(open(sys.argv[1]).readline())
if o["counters"]["wraps"] < int(sys.argv[2]):
    sys.exit(1)
v, lru = o["vmstat"], o["lru_pages"]
act, inact = lru["nr_active_file"], lru["nr_inactive_file"]
for k, x in (("insert", v["pgpgin"]), ("activate", v["pgactivate"]),
             ("deactivate", v["pgdeactivate"]), ("scan", v["pgscan"]), ("steal", v["pgsteal"]),
             ("refault", v["workingset_refault"]),
             ("refault_activate", v["workingset_activate"]),
             ("active_share", act / (act + inact) if act + inact else 0),
             ("mib", int(sys.argv[3]))):
    print(k, x)
PY
		dur=$((dur * 2))
	done
	echo "$prog: lvbench $mode: the readers did not finish their files in ${dur} s" >&2
	return 1
}

# ---- aim9 page_test ------------------------------------------------------------------------------

# The kernel side of aim9 page_test: the same sbrk pattern as lvbench aim9 (see its help), in
# a python3 loop through libc, for 1 s in a memcg of its own; figures per MiB faulted.
aim9_kernel() {
	local cg=$cgroot/aim9
	mkdir "$cg" || return 1
	trace_start
	(
		read -r _ <"$work/go"
		echo "$BASHPID" >"$cg/cgroup.procs" || exit 1
		exec python3 -c '
import ctypes, time
libc = ctypes.CDLL(None, use_errno=True)
libc.sbrk.restype = ctypes.c_void_p
libc.sbrk.argtypes = [ctypes.c_long]
calls, end = 0, time.time() + 1
while time.time() < end:
    old = libc.sbrk(0)
    libc.sbrk(1 << 20)
    for _ in range(100):
        libc.sbrk(-(64 << 10))
        for _ in range(16):
            p = libc.sbrk(4096)
            ctypes.memset(p, 1, 4096)
    libc.brk(ctypes.c_void_p(old))
    calls += 1
open("'"$work"'/aim9.calls", "w").write(str(calls))'
	) &
	trace_run $!
	cat "$cg/memory.stat" >"$work/stat"
	python3 - "$work/trace" "$work/stat" "$(cat "$work/aim9.calls")" >"$work/aim9.k" <<'PY'
import sys
n = dict.fromkeys(("mm_lru_insertion", "mm_lru_activate"), 0)
for line in open(sys.argv[1], errors="replace"):
    for k in n:
        if " " + k + ":" in line:
            n[k] += 1
st = {l.split()[0]: int(l.split()[1]) for l in open(sys.argv[2])}
act, inact = st.get("active_anon", 0), st.get("inactive_anon", 0)
# 1600 pages faulted per call.
for k, x in (("insert", n["mm_lru_insertion"]), ("activate", n["mm_lru_activate"]),
             ("deactivate", 0), ("scan", 0), ("steal", 0), ("refault", 0),
             ("refault_activate", 0), ("active_share", act / (act + inact) if act + inact else 0),
             ("mib", int(sys.argv[3]) * 1600 / 256)):
    print(k, x)
PY
}

aim9_lvbench() {
	"$lvbench" aim9 --test page_test --containers 1 --duration 1 --json >"$work/aim9.json" \
		2>"$work/aim9.err" || {
		cat "$work/aim9.err" >&2
		return 1
	}
	python3 - "$work/aim9.json" >"$work/aim9.l" <<'PY'
import json, sys
o = json.loads(open(sys.argv[1]).readline())
v, lru = o["vmstat"], o["lru_pages"]
pages = o["pages_per_sec"] * o["elapsed_s"]
act, inact = lru["nr_active_anon"], lru["nr_inactive_anon"]
# Each fault adds its page to the LRU: lruvec counts no anon insertions apart from them.
for k, x in (("insert", pages), ("activate", v["pgactivate"]), ("deactivate", v["pgdeactivate"]),
             ("scan", v["pgscan"]), ("steal", v["pgsteal"]), ("refault", v["workingset_refault"]),
             ("refault_activate", v["workingset_activate"]),
             ("active_share", act / (act + inact) if act + inact else 0), ("mib", pages / 256)):
    print(k, x)
PY
}

# ---- the shapes ----------------------------------------------------------------------------------

shapes=() # "name mode tenants limit kind"
for mode in readonce readtwice readseq; do
	for tenants in 1 4; do
		for half in 1 0; do
			[ -n "$quick" ] && { [ $tenants -eq 1 ] && [ $half -eq 1 ] || continue; }
			limit=$((half ? size / 2 : size * 2))
			shapes+=("$mode-t$tenants-l$limit $mode $tenants $limit sparse")
		done
	done
done
[ -n "$quick" ] || shapes+=("readtwice-real-t1-l$((size / 2)) readtwice 1 $((size / 2)) real")

echo "$prog: $(uname -sr), $fstype on $fsdev ($dir), cgroup v$cgv, files of $size MiB per tenant"
host_order=
for s in "${shapes[@]}"; do
	read -r name mode tenants limit kind <<<"$s"
	kernel_run "$name" "$mode" "$tenants" "$limit" "$kind" || exit 1
	if [ -z "$host_order" ]; then
		host_order=$(awk '$1 == "order" { print $2 }' "$work/$name.k")
		lv_order=$((host_order > 6 ? 6 : host_order))
		echo "$prog: the host's page cache on $fstype: most pages in folios of order" \
			"$host_order; lvbench runs --folio-order 0 and $lv_order (its largest is 6)"
	fi
	lvbench_run "$name-o0" "$mode" "$tenants" "$limit" "$kind" 0 || exit 1
	lvbench_run "$name-o$lv_order" "$mode" "$tenants" "$limit" "$kind" "$lv_order" || exit 1
	echo "$name $work/$name.k $work/$name-o0.l $work/$name-o$lv_order.l" >>"$work/list"
	echo "$prog: $name done" >&2
done
if [ -z "$quick" ]; then
	aim9_kernel && aim9_lvbench || exit 1
	echo "aim9-page_test $work/aim9.k $work/aim9.l" >>"$work/list"
fi

python3 - "$work/list" >"$work/table" <<'PY'
import re, sys
cols = ("insert", "activate", "deactivate", "scan", "steal", "refault", "refault_activate")
heads = ("insert", "activate", "deact", "scan", "reclaim", "refault", "ref_act")
def load(path):
    d = {}
    for line in open(path):
        k, v = line.split()
        d[k] = float(v)
    return d
def ratio(a, b):
    # Below a page per MiB both ways (0.4% of the pages read) is noise, not a difference.
    if a < 1 and b < 1:
        return "~0", False
    if b < 1:
        return "k~0", True
    r = a / b
    return "%.2f" % r, r > 1.5 or r < 1 / 1.5
print("Per MiB read (aim9: per MiB faulted), in pages; act%: the active share of the LRU at")
print("the end. Ratios: lruvec / kernel; '*' more than 1.5x apart, 'k~0': the kernel below one")
print("page per MiB, '~0': both below one page per MiB.")
print()
fmt = "%-26s" + " %8s" * (len(cols) + 1)
print("```")
print(fmt % (("",) + heads + ("act%",)))
for line in open(sys.argv[1]):
    name, kpath, *lpaths = line.split()
    k = load(kpath)
    rows = [("kernel", k)] + [(("lruvec " + (re.findall(r"-(o[0-9]+)\.l$", p) or [""])[0]).strip(),
                               load(p)) for p in lpaths]
    print(name)
    for label, d in rows:
        print(fmt % ((" " + label,) + tuple("%.1f" % (d[c] / d["mib"]) for c in cols)
                     + ("%.0f" % (100 * d["active_share"]),)))
    for label, d in rows[1:]:
        cells = []
        for c in cols:
            text, far = ratio(d[c] / d["mib"], k[c] / k["mib"])
            cells.append(text + ("*" if far else ""))
        text, far = ratio(100 * d["active_share"], 100 * k["active_share"])
        cells.append(text + ("*" if far else ""))
        print(fmt % ((" ratio " + label[len("lruvec"):].strip(),) + tuple(cells)))
print("```")
PY
# The shipped traces replayed, both designs (docs/fidelity.md, "Real LRU traffic, replayed").
if [ -z "$quick" ]; then
	for t in "$here"/../tests/data/*.lvtrace.gz; do
		b=$(basename "$t" .lvtrace.gz)
		gzip -dc "$t" >"$work/$b.lvtrace" || exit 1
		"$lvbench" compare replay "$work/$b.lvtrace" --json >"$work/$b.replay" \
			2>"$work/$b.replay.err" || {
			cat "$work/$b.replay.err" >&2
			exit 1
		}
		echo "$b $work/$b.replay"
	done >"$work/replays"
	python3 - "$work/replays" >>"$work/table" <<'PY' || exit 1
import json, sys
print()
print("`lvbench compare replay` of the traces in tests/data (3 alternating rounds of 1 s per")
print("design): events/s per thread (Hmean), the LRU lock's contended/acquired and wait per event.")
print()
print("| trace | events | threads | node lock | lruvec lock | node contended, wait | "
      "lruvec contended, wait |")
print("|---|---|---|---|---|---|---|")
for line in open(sys.argv[1]):
    name, path = line.split()
    objs = [json.loads(l) for l in open(path) if l.strip()]
    by = {o["lock"]: o for o in objs}
    cells = []
    for d in ("node", "lruvec"):
        cells.append("%.2f M" % (by[d]["events_per_s_thread"]["hmean"] / 1e6))
    for d in ("node", "lruvec"):
        o = by[d]
        lck = [l for l in o["locks"] if l["name"] == d]
        acq = sum(l["acquired"] for l in lck)
        cont = sum(l["contended"] for l in lck)
        wait = sum(l["wait_total_ns"] for l in lck)
        cells.append("%.3f %%, %.1f ns" % (100 * cont / acq if acq else 0, wait / o["ops"]))
    print("| `%s` | %d | %d | %s |" % (name, by["node"]["trace_events"], by["node"]["threads"],
                                     " | ".join(cells)))
PY
fi
cat "$work/table"
if [ -n "$out" ]; then
	{
		sed '/^<!-- fidelity.sh begin -->$/q' "$out"
		echo
		echo "$(uname -sr), $fstype, cgroup v$cgv, files of $size MiB per tenant; the host's"
		echo "page cache mostly in folios of order $host_order (lruvec's o$lv_order: its largest)."
		echo
		cat "$work/table"
		echo
		sed -n '/^<!-- fidelity.sh end -->$/,$p' "$out"
	} >"$work/out" && cp "$work/out" "$out"
fi
