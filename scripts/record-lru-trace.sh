#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# record-lru-trace.sh - record the host kernel's LRU events of one command into the compact
# trace that `lvbench replay` reads (the format: docs/fidelity.md, "Trace format").
#
# The command runs in a memory cgroup of its own, created for it below this shell's cgroup
# (v2 or v1, whichever has the memory controller); its path is exported as LV_TRACE_CGROUP so
# that the command may make child cgroups, each of which becomes a tenant of the replay. The
# kernel's events are read from a tracefs instance of our own (so that no other tracer is
# disturbed): pagemap:mm_lru_insertion, pagemap:mm_lru_activate, kmem:mm_page_free(_batched),
# filemap:mm_filemap_add_to_page_cache (for the folio order) and sched:sched_process_fork (for
# the command's process tree). A folio belongs to the trace when a process of the command's
# tree inserted it; its later events are kept whoever caused them (kswapd's frees, say).
#
# Needs root (tracefs, cgroups), bash, coreutils and python3.
set -u
set -o pipefail

prog=${0##*/}

usage() {
	cat <<EOF
Usage: $prog [OPTIONS] -o FILE -- CMD [ARGS...]
       $prog -o FILE --convert TEXT PIDS ROOT

Runs CMD in a memory cgroup of its own with the kernel's LRU events traced, and writes
them as a trace for 'lvbench replay FILE'.

Options:
  -o, --output FILE   the trace to write (FILE.gz: compressed with gzip -9)
  --limit SIZE        memory limit of the command's cgroup, in MiB (default: none)
  --duration SEC      stop CMD (SIGINT) after SEC seconds (default: let it finish)
  --max-events N      keep the first N events of the command's folios (default 200000)
  --raw FILE          keep the tracefs text as well (default: a temporary file)
  --convert TEXT PIDS ROOT
                      only convert: TEXT a tracefs text (as --raw keeps it), PIDS lines of
                      "pid cgroup" (cgroup relative to the command's, / for its own), ROOT the
                      command's pid; no CMD, no root needed (the trace says 1 CPU, or more
                      if TEXT has events of more)
  -h, --help          this help

Exit status: 0 success, 1 failure (tracing, the converter, or no event recorded), 2 usage
or not permitted (not root, no tracefs, no memory cgroup).
EOF
}

die_usage() {
	echo "$prog: $*" >&2
	exit 2
}

out=
limit=
duration=
max_events=200000
raw=
convert_args=
while [ $# -gt 0 ]; do
	case $1 in
	-o | --output | --limit | --duration | --max-events | --raw)
		[ $# -ge 2 ] || die_usage "option '$1' needs a value"
		case $1 in
		-o | --output) out=$2 ;;
		--limit)
			[[ $2 =~ ^[1-9][0-9]{0,6}$ ]] || die_usage "--limit: '$2' is not a number of MiB"
			limit=$2
			;;
		--duration)
			[[ $2 =~ ^[0-9]+(\.[0-9]+)?$ ]] || die_usage "--duration: '$2' is not seconds"
			duration=$2
			;;
		--max-events)
			[[ $2 =~ ^[1-9][0-9]{0,8}$ ]] || die_usage "--max-events: '$2' is not a count"
			max_events=$2
			;;
		--raw) raw=$2 ;;
		esac
		shift 2
		;;
	--convert)
		[ $# -ge 4 ] || die_usage "--convert needs TEXT PIDS ROOT"
		for f in "$2" "$3"; do
			[ -r "$f" ] || die_usage "--convert: cannot read '$f'"
		done
		[[ $4 =~ ^[1-9][0-9]*$ ]] || die_usage "--convert: '$4' is not a pid"
		convert_args="$2 $3 $4"
		shift 4
		;;
	-h | --help)
		usage
		exit 0
		;;
	--)
		shift
		break
		;;
	*) die_usage "unknown option '$1' (the command goes after '--')" ;;
	esac
done
[ -n "$out" ] || die_usage "no output file (-o FILE)"
[ $# -gt 0 ] || [ -n "$convert_args" ] || die_usage "no command (after '--')"
# convert TEXT PIDS ROOT NR_CPUS BIN - the tracefs text TEXT into the trace BIN, keeping the
# folios that ROOT's process tree inserted; PIDS has "pid cgroup" lines (the cgroup relative to
# the command's, "/" for its own).
convert() {
	python3 - "$@" "$max_events" <<'PY'
import re, struct, sys

raw, pidfile, root, nr_cpus, outfile, max_events = sys.argv[1:7]
root, max_events, nr_cpus = int(root), int(max_events), int(nr_cpus)
INSERT, ACTIVATE, PUTBACK, FREE = 1, 2, 3, 4

cg_of = {}  # pid -> cgroup path relative to the command's
for line in open(pidfile):
    parts = line.split()
    if len(parts) == 2 and parts[0].isdigit():
        cg_of.setdefault(int(parts[0]), parts[1])
tree = {root}
memcgs = {"/": 0}
head = re.compile(r"^\s*(.*)-(\d+)\s+\[(\d+)\]\s+\S+\s+[\d.]+:\s+(\w+):\s+(.*)$")
field = re.compile(r"(\w+)=(\S*)")
orders = {}  # pfn -> order of its page cache insertion, until its LRU insertion
live = {}  # pfn -> slot
free_slots, nr_slots = [], 0
recs, lost, max_cpu = [], 0, 0

def memcg(pid):
    path = cg_of.get(pid, "/")
    if path not in memcgs:
        memcgs[path] = len(memcgs)
    return memcgs[path]

for line in open(raw, errors="replace"):
    if "LOST" in line and "EVENTS" in line:
        lost += int(re.search(r"LOST (\d+)", line).group(1))
        continue
    m = head.match(line)
    if not m:
        continue
    pid, cpu, ev, rest = int(m.group(2)), int(m.group(3)), m.group(4), m.group(5)
    f = dict(field.findall(rest))
    if ev == "sched_process_fork":
        parent, child = int(f["pid"]), int(f["child_pid"])
        if parent in tree:
            tree.add(child)
            cg_of.setdefault(child, cg_of.get(parent, "/"))
        continue
    if "pfn" not in f:
        continue
    pfn = int(f["pfn"], 16)
    if ev == "mm_filemap_add_to_page_cache":
        if pid in tree:
            orders[pfn] = int(f.get("order", "0"))
        continue
    if ev == "mm_lru_insertion":
        lru, flags = int(f["lru"]), rest.split("flags=")[1]
        info = (0x10 if "a" in flags[:2] else 0) | (0x20 if lru in (1, 3) else 0)
        if pfn in live:
            recs.append((PUTBACK, info, cpu, memcg(pid), pid, live[pfn]))
        elif pid in tree:
            slot = free_slots.pop() if free_slots else nr_slots
            nr_slots = max(nr_slots, slot + 1)
            live[pfn] = slot
            info |= min(orders.pop(pfn, 0), 15)
            recs.append((INSERT, info, cpu, memcg(pid), pid, slot))
        else:
            continue
    elif ev == "mm_lru_activate":
        if pfn not in live:
            continue
        recs.append((ACTIVATE, 0, cpu, memcg(pid), pid, live[pfn]))
    elif ev in ("mm_page_free", "mm_page_free_batched"):
        if pfn not in live:
            continue
        slot = live.pop(pfn)
        free_slots.append(slot)
        recs.append((FREE, 0, cpu, memcg(pid), pid, slot))
    else:
        continue
    max_cpu = max(max_cpu, cpu)
    if len(recs) >= max_events:
        break

if not recs:
    sys.exit("record-lru-trace: no LRU event of the command's folios was recorded")
if len(memcgs) > 65535 or max_cpu >= 65535:
    sys.exit("record-lru-trace: more memcgs or CPUs than the format holds")
with open(outfile, "wb") as o:
    o.write(struct.pack("<8sIIIIQ", b"LVTRACE\0", 1, max(nr_cpus, max_cpu + 1), len(memcgs),
                        nr_slots, len(recs)))
    for r in recs:
        o.write(struct.pack("<BBHHHII", r[0], r[1], r[2], r[3], 0, r[4] & 0xffffffff, r[5]))
kinds = {k: sum(1 for r in recs if r[0] == k) for k in (INSERT, ACTIVATE, PUTBACK, FREE)}
print("record-lru-trace: %d events (%d insert, %d activate, %d putback, %d free), %d folio "
      "slots, %d memcgs, %d CPUs%s" % (len(recs), kinds[INSERT], kinds[ACTIVATE], kinds[PUTBACK],
      kinds[FREE], nr_slots, len(memcgs), max(nr_cpus, max_cpu + 1),
      ", %d events lost by tracefs" % lost if lost else ""))
PY
}

write_out() {
	case $out in
	*.gz) gzip -9 -n -c "$1" >"$out" || exit 1 ;;
	*) cp "$1" "$out" || exit 1 ;;
	esac
	echo "$prog: wrote $out ($(wc -c <"$out") bytes)"
}

if [ -n "$convert_args" ]; then
	read -r ctext cpids croot <<<"$convert_args"
	work=$(mktemp -d "${TMPDIR:-/tmp}/record-lru-trace.XXXXXX") || exit 1
	trap 'rm -rf -- "$work"' EXIT
	convert "$ctext" "$cpids" "$croot" 1 "$work/trace.lvtrace" || exit 1
	write_out "$work/trace.lvtrace"
	exit 0
fi
[ "$(id -u)" -eq 0 ] || die_usage "tracing and memory cgroups need root"
command -v python3 >/dev/null || die_usage "the converter needs python3"

tracefs=/sys/kernel/tracing
[ -d $tracefs/instances ] || mount -t tracefs nodev $tracefs 2>/dev/null
[ -d $tracefs/instances ] || die_usage "no tracefs at $tracefs (mount -t tracefs nodev $tracefs)"

work=$(mktemp -d "${TMPDIR:-/tmp}/record-lru-trace.XXXXXX") || exit 1
inst=
cg=
reader=
poller=
cleanup() {
	trap - EXIT INT TERM
	[ -n "$poller" ] && kill "$poller" 2>/dev/null
	[ -n "$inst" ] && echo 0 >"$inst/tracing_on" 2>/dev/null
	[ -n "$reader" ] && kill "$reader" 2>/dev/null
	wait 2>/dev/null
	if [ -n "$cg" ] && [ -d "$cg" ]; then
		find "$cg" -depth -mindepth 1 -type d -exec rmdir {} + 2>/dev/null
		rmdir "$cg" 2>/dev/null || echo "$prog: could not remove cgroup $cg" >&2
	fi
	[ -n "$inst" ] && rmdir "$inst" 2>/dev/null
	rm -rf -- "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---- the command's memory cgroup -------------------------------------------------------------

own=$(sed -n 's/^0:://p' /proc/self/cgroup)
if [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw memory /sys/fs/cgroup/cgroup.controllers
then
	cg=/sys/fs/cgroup${own%/}/lvtrace.$$
	limit_file=memory.max
else
	own=$(sed -n 's/^[0-9]*:\([^:]*,\)\?memory\(,[^:]*\)\?:\(.*\)/\3/p' /proc/self/cgroup)
	cg=/sys/fs/cgroup/memory${own%/}/lvtrace.$$
	limit_file=memory.limit_in_bytes
fi
mkdir "$cg" 2>/dev/null || {
	try=$cg
	cg=
	die_usage "cannot create the memory cgroup $try"
}
if [ -n "$limit" ]; then
	echo $((limit << 20)) >"$cg/$limit_file" || exit 1
fi

# ---- tracing ---------------------------------------------------------------------------------

inst=$tracefs/instances/lvtrace.$$
mkdir "$inst" || {
	inst=
	die_usage "cannot create a tracefs instance in $tracefs/instances"
}
echo 65536 >"$inst/buffer_size_kb"
for e in pagemap/mm_lru_insertion pagemap/mm_lru_activate kmem/mm_page_free \
	kmem/mm_page_free_batched filemap/mm_filemap_add_to_page_cache sched/sched_process_fork; do
	echo 1 >"$inst/events/$e/enable" || {
		echo "$prog: cannot enable the event $e" >&2
		exit 1
	}
done
[ -n "$raw" ] || raw=$work/trace.txt
cat "$inst/trace_pipe" >"$raw" &
reader=$!

# pid -> cgroup, sampled while the command runs; a process too short-lived to be seen gets
# its parent's cgroup (from the fork events), as the kernel gives it at fork.
(
	while :; do
		find "$cg" -name cgroup.procs 2>/dev/null | while read -r f; do
			d=${f%/cgroup.procs}
			sed "s|\$| ${d#"$cg"}/|" "$f"
		done
		sleep 0.05
	done
) >"$work/pids" 2>/dev/null &
poller=$!

echo 1 >"$inst/tracing_on"
(
	echo "$BASHPID" >"$cg/cgroup.procs" || exit 1
	export LV_TRACE_CGROUP=$cg
	if [ -n "$duration" ]; then
		exec timeout --foreground -s INT "$duration" "$@"
	fi
	exec "$@"
) &
cmd=$!
echo "$cmd /" >>"$work/pids"
wait $cmd
rc=$?
echo 0 >"$inst/tracing_on"
kill "$poller" 2>/dev/null
wait "$poller" 2>/dev/null
poller=
# trace_pipe blocks when empty: give the reader the rest, then stop it.
sleep 1
kill "$reader" 2>/dev/null
wait "$reader" 2>/dev/null
reader=
echo "$prog: command exited with $rc; $(wc -l <"$raw") trace lines"

# ---- conversion ------------------------------------------------------------------------------

bin=$work/trace.lvtrace
convert "$raw" "$work/pids" "$cmd" "$(getconf _NPROCESSORS_ONLN)" "$bin" || exit 1
write_out "$bin"
