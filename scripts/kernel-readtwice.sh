#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# kernel-readtwice.sh - vm-scalability's lru-file-readtwice in containers, on the host kernel:
# the shape `lvbench readtwice` models (docs/benchmarks.md, readtwice), so that lruvec's numbers
# can be set beside the kernel's. Per container: a sparse file and --readers `dd bs=4k` readers started
# together on it, stopped by SIGINT after --duration seconds; inside a memory cgroup per
# container when this user may create one. It ends with the summary line lvbench prints:
#
#   readtwice: containers=C readers=R mean_mb_per_s_reader=X total_mb_per_s=Y
#
# (R counts every reader; MB = 10^6 bytes, as dd prints it; the mean is over readers, as Alex
# Shi and Daniel Jordan reported it; the total is their sum.)
#
# Bash, coreutils (truncate, dd, timeout, mktemp, df) and getconf; --pin also needs taskset
# (util-linux).
set -u
set -o pipefail

prog=${0##*/}

usage() {
	cat <<EOF
Usage: $prog [OPTIONS]

Runs vm-scalability's case-lru-file-readtwice in containers on this kernel: C containers,
each a memory cgroup with a sparse file read by R dd (bs=4k) started together, for a fixed
time. Prints every dd's rate and the summary line that 'lvbench readtwice' prints.

Options:
  --containers N  containers (default: online CPUs, as lvbench readtwice)
  --readers N     dd per container, all on the container's file (default 2)
  --duration SEC  how long each dd reads (default 5); fractions allowed
  --limit SIZE    memory limit of each container's cgroup: MiB, or a size as below in whole
                  MiB (default: none; the kernel then reclaims only once the machine's
                  memory is full)
  --dir DIR       where the sparse files go (default: a new directory under \${TMPDIR:-/tmp},
                  removed at exit). Use a directory on ext4 or xfs: reading a hole on tmpfs
                  maps the shared zero page and never touches the page cache or the LRU
  --size SIZE     size of each sparse file in bytes, or a size as below (default 1T)
  --no-memcg      do not create memory cgroups even when permitted
  --pin           run each container's dd on one CPU: container c on the c-th CPU this
                  shell may use, round-robin, as 'lvbench readtwice --pin' places its readers
  --parse FILE... only summarise saved dd outputs (named ...dd-CONTAINER-READER), e.g.
                  to test the parser; --containers gives the count for the summary line
  -h, --help      this help

Sizes, as lvbench reads them: digits, optionally followed by K, M, G, T or P (or k, m, g,
t, p), optionally followed by iB: powers of 1024 (512M, 1G, 1GiB). Decimal units (KB, MB)
and fractions are refused.

Memory cgroups: cgroup v2 (/sys/fs/cgroup with the memory controller) or cgroup v1
(/sys/fs/cgroup/memory), created as children of this shell's own cgroup, one per container
(memory.max or memory.limit_in_bytes with --limit). If that is not permitted (not root, or
the memory controller cannot be enabled there), the readers run without cgroups and --limit
is refused. Cgroups and files are removed at exit, also on Ctrl-C.

Exit status: 0 success, 1 failure (no dd output, cgroup setup failed with --limit), 2 usage.
EOF
}

die_usage() {
	echo "$prog: $*" >&2
	echo "Try '$prog --help'." >&2
	exit 2
}

# size_bytes SIZE UNIT - print SIZE in bytes, a bare number being in UNIT bytes; fail with a
# message on stdout for a malformed or too large size.
size_bytes() {
	local n sfx mult=1 p
	if [[ $1 =~ ^([0-9]+)([KMGTPkmgtp](iB)?)?$ ]]; then
		n=${BASH_REMATCH[1]}
		sfx=${BASH_REMATCH[2]:0:1}
	elif [[ $1 =~ ^[0-9]+[KMGTPkmgtp]B$ ]]; then
		echo "'$1': decimal units are not accepted; use K, M, G, T or P (powers of 1024)"
		return 1
	else
		echo "'$1' is not a size (digits, optionally followed by K, M, G, T or P)"
		return 1
	fi
	if [ ${#n} -gt 18 ]; then
		echo "$1 is too large"
		return 1
	fi
	n=$((10#$n))
	if [ -z "$sfx" ]; then
		mult=$2
	else
		p=KMGTP
		p=${p%%"${sfx^^}"*}
		mult=$((1024 << (10 * ${#p})))
	fi
	if [ "$n" -gt $(((1 << 62) / mult)) ]; then
		echo "$1 is too large"
		return 1
	fi
	echo $((n * mult))
}

# Online CPUs, as lvbench counts them (nproc would count only those this shell may use).
online_cpus=$(getconf _NPROCESSORS_ONLN 2>/dev/null) || online_cpus=1
containers=$online_cpus
readers=2
duration=5
limit=
dir=
size=1T
size_b=$((1 << 40))
use_memcg=1
pin=
parse_only=

while [ $# -gt 0 ]; do
	opt=$1
	case $opt in
	--*=*)
		val=${opt#*=}
		opt=${opt%%=*}
		;;
	--containers | --readers | --duration | --limit | --dir | --size)
		[ $# -ge 2 ] || die_usage "option '$opt' needs a value"
		val=$2
		shift
		;;
	esac
	case $opt in
	--containers | --readers)
		if ! [[ $val =~ ^[0-9]{1,4}$ ]] || [ "$val" -lt 1 ] || [ "$val" -gt 1024 ]; then
			die_usage "$opt: '$val' is not an integer in 1..1024"
		fi
		if [ "$opt" = --containers ]; then containers=$val; else readers=$val; fi
		;;
	--duration)
		if ! [[ $val =~ ^([0-9]+\.?[0-9]*|\.[0-9]+)$ ]] || [[ $val =~ ^0*\.?0*$ ]]; then
			die_usage "--duration: '$val' is not a positive number of seconds"
		fi
		duration=$val
		;;
	--limit)
		bytes=$(size_bytes "$val" $((1 << 20))) || die_usage "--limit: $bytes"
		if [ $((bytes % (1 << 20))) -ne 0 ]; then
			die_usage "--limit: $val is not a whole number of MiB"
		fi
		[ "$bytes" -gt 0 ] || die_usage "--limit: '$val' is not a positive size"
		limit=$((bytes >> 20))
		;;
	--dir)
		if ! [ -d "$val" ] || ! [ -w "$val" ]; then
			die_usage "--dir: '$val' is not a writable directory"
		fi
		dir=$val
		;;
	--size)
		bytes=$(size_bytes "$val" 1) || die_usage "--size: $bytes"
		[ "$bytes" -gt 0 ] || die_usage "--size: '$val' is not a positive size (e.g. 1T, 64G)"
		size=$val
		size_b=$bytes
		;;
	--no-memcg) use_memcg= ;;
	--pin) pin=1 ;;
	--parse)
		shift
		[ $# -gt 0 ] || die_usage "--parse: no files"
		parse_only=1
		break
		;;
	-h | --help)
		usage
		exit 0
		;;
	*) die_usage "unknown option '$opt'" ;;
	esac
	shift
done

# ---- parse ------------------------------------------------------------------------------------

# dd's last line: "N bytes (X GB, Y GiB) copied, T s, R UNIT/s". MB/s = N / T / 10^6; when
# T is 0, R is used with its unit (B/s, kB/s, MB/s, GB/s, TB/s) scaled to MB/s.
# summarise FILE... - one line per dd, then the summary line; fails if no dd reported.
summarise() {
	awk -v containers="$containers" -v expected=$# '
	function unit_scale(u) {
		if (u == "B/s") return 1e-6
		if (u == "kB/s" || u == "KB/s") return 1e-3
		if (u == "MB/s") return 1
		if (u == "GB/s") return 1e3
		if (u == "TB/s") return 1e6
		return -1
	}
	/ copied, / {
		n = split($0, part, ", ")
		split(part[n], rate, " ")
		split(part[n - 1], secs, " ")
		mb = -1
		if (secs[1] + 0 > 0)
			mb = $1 / secs[1] / 1e6
		else if (unit_scale(rate[2]) >= 0)
			mb = rate[1] * unit_scale(rate[2])
		if (mb < 0) {
			printf "%s: cannot read the rate of: %s\n", FILENAME, $0 > "/dev/stderr"
			next
		}
		# The output file is named ...dd-CONTAINER-READER.
		name = FILENAME
		sub(/.*dd-/, "", name)
		split(name, cr, "-")
		printf "container %d reader %d: %12.0f bytes in %8.3f s = %9.1f MB/s (dd: %s %s)\n",
		       cr[1], cr[2], $1, secs[1], mb, rate[1], rate[2]
		sum += mb
		lines++
		seen[FILENAME] = 1
	}
	END {
		for (i = 1; i < ARGC; i++)
			if (!(ARGV[i] in seen))
				printf "kernel-readtwice: no \"copied\" line in %s\n", ARGV[i] > "/dev/stderr"
		if (lines < expected)
			printf "kernel-readtwice: %d of %d dd reported\n", lines, expected > "/dev/stderr"
		if (!lines)
			exit 1
		printf "readtwice: containers=%d readers=%d mean_mb_per_s_reader=%.1f total_mb_per_s=%.1f\n",
		       containers, lines, sum / lines, sum
	}' "$@"
}

if [ -n "$parse_only" ]; then
	for f in "$@"; do
		[ -r "$f" ] || die_usage "--parse: cannot read '$f'"
	done
	summarise "$@"
	exit
fi

# ---- cleanup ----------------------------------------------------------------------------------

workdir=     # our own directory of files, removed whole
files=()     # sparse files we created
cg_parent=   # the cgroup directory we created, with one child per container
pids=()      # container subshells

cleanup() {
	local p c
	trap - EXIT INT TERM
	# A container subshell passes TERM on to its readers (see below).
	for p in "${pids[@]}"; do
		kill -TERM "$p" 2>/dev/null
	done
	wait 2>/dev/null
	if [ -n "$cg_parent" ] && [ -d "$cg_parent" ]; then
		for c in "$cg_parent"/c*/; do
			[ -d "$c" ] && rmdir "$c" 2>/dev/null
		done
		rmdir "$cg_parent" 2>/dev/null ||
			echo "$prog: could not remove cgroup $cg_parent" >&2
	fi
	[ ${#files[@]} -gt 0 ] && rm -f -- "${files[@]}"
	[ -n "$workdir" ] && rm -rf -- "$workdir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---- memory cgroups ---------------------------------------------------------------------------

cg_mode=none  # none, v1 or v2
cg_note=

# own_cgroup v2|memory - this shell's cgroup path in the v2 or the v1 memory hierarchy.
own_cgroup() {
	local line
	while IFS= read -r line; do
		case $1:$line in
		v2:0::*) echo "${line#0::}"; return 0 ;;
		memory:*:memory:* | memory:*:*,memory:* | memory:*:memory,*:*)
			echo "${line##*:}"
			return 0
			;;
		esac
	done </proc/self/cgroup
	return 1
}

# setup_cgroups - one child cgroup per container under this shell's own cgroup.
setup_cgroups() {
	local base own i
	if [ -f /sys/fs/cgroup/cgroup.controllers ] &&
		grep -qw memory /sys/fs/cgroup/cgroup.controllers; then
		own=$(own_cgroup v2) || return 1
		base=/sys/fs/cgroup${own%/}
		# Our parent group needs the memory controller from its parent (ours) for the
		# children to get memory.max. v2 forbids that where processes live, except at root.
		if ! grep -qw memory "$base/cgroup.subtree_control" 2>/dev/null; then
			echo +memory >"$base/cgroup.subtree_control" 2>/dev/null || {
				cg_note="cgroup v2: cannot enable the memory controller below $base"
				return 1
			}
		fi
		cg_parent=$base/lvbench-readtwice.$$
		mkdir "$cg_parent" 2>/dev/null || {
			cg_parent=
			cg_note="cgroup v2: cannot create a cgroup in $base"
			return 1
		}
		echo +memory >"$cg_parent/cgroup.subtree_control" 2>/dev/null || {
			cg_note="cgroup v2: cannot enable the memory controller in $cg_parent"
			return 1
		}
		for ((i = 0; i < containers; i++)); do
			mkdir "$cg_parent/c$i" || return 1
			if [ -n "$limit" ]; then
				echo $((limit << 20)) >"$cg_parent/c$i/memory.max" || return 1
			fi
		done
		cg_mode=v2
		return 0
	fi
	if [ -f /sys/fs/cgroup/memory/memory.limit_in_bytes ]; then
		own=$(own_cgroup memory) || return 1
		base=/sys/fs/cgroup/memory${own%/}
		cg_parent=$base/lvbench-readtwice.$$
		mkdir "$cg_parent" 2>/dev/null || {
			cg_parent=
			cg_note="cgroup v1: cannot create a cgroup in $base"
			return 1
		}
		for ((i = 0; i < containers; i++)); do
			mkdir "$cg_parent/c$i" || return 1
			if [ -n "$limit" ]; then
				echo $((limit << 20)) >"$cg_parent/c$i/memory.limit_in_bytes" || return 1
			fi
		done
		cg_mode=v1
		return 0
	fi
	cg_note="no cgroup v2 memory controller at /sys/fs/cgroup and no v1 /sys/fs/cgroup/memory"
	return 1
}

if [ -n "$use_memcg" ]; then
	if ! setup_cgroups; then
		[ -n "$limit" ] && {
			echo "$prog: --limit needs memory cgroups: ${cg_note:-cgroup setup failed}" >&2
			exit 1
		}
		[ -n "$cg_note" ] && echo "$prog: ${cg_note}; running without cgroups" >&2
		cg_mode=none
	fi
elif [ -n "$limit" ]; then
	die_usage "--limit: needs memory cgroups (drop --no-memcg)"
fi

# ---- CPUs for --pin ---------------------------------------------------------------------------

# allowed_cpus - the CPUs this shell may run on, one per line, from taskset's list (0-3,8,...).
allowed_cpus() {
	local list range
	list=$(LC_ALL=C taskset -pc $$ 2>/dev/null) || return 1
	list=${list##*: }
	for range in ${list//,/ }; do
		if [[ $range =~ ^([0-9]+)-([0-9]+)$ ]]; then
			seq "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}"
		elif [[ $range =~ ^[0-9]+$ ]]; then
			echo "$range"
		else
			return 1
		fi
	done
}

pin_cpus=() # per container, with --pin
if [ -n "$pin" ]; then
	command -v taskset >/dev/null || {
		echo "$prog: --pin needs taskset (util-linux)" >&2
		exit 1
	}
	list=$(allowed_cpus) && [ -n "$list" ] || {
		echo "$prog: --pin: cannot read this shell's CPU affinity" >&2
		exit 1
	}
	mapfile -t cpus <<<"$list"
	for ((i = 0; i < containers; i++)); do
		pin_cpus+=("${cpus[i % ${#cpus[@]}]}")
	done
fi

# ---- files ------------------------------------------------------------------------------------

if [ -z "$dir" ]; then
	workdir=$(mktemp -d "${TMPDIR:-/tmp}/kernel-readtwice.XXXXXX") || exit 1
	dir=$workdir
fi
fstype=$(df --output=fstype "$dir" 2>/dev/null | tail -n 1)
if [ "$fstype" = tmpfs ]; then
	echo "$prog: warning: $dir is on tmpfs, where reading a hole maps the zero page: no page" \
		"cache, no LRU, no reclaim. Use --dir on ext4 or xfs." >&2
fi
sparse=() # per container
outs=()   # per dd, in container order
for ((i = 0; i < containers; i++)); do
	f=$dir/kernel-readtwice.$$.sparse-$i
	sparse+=("$f")
	files+=("$f")
	truncate -s "$size_b" "$f" || exit 1
	for ((r = 1; r <= readers; r++)); do
		outs+=("$dir/kernel-readtwice.$$.dd-$i-$r")
	done
done
files+=("${outs[@]}")

# ---- run --------------------------------------------------------------------------------------

echo "kernel-readtwice: $(uname -sr), $online_cpus online CPUs, $containers containers x" \
	"$readers dd (bs=4k) for $duration s, sparse files of $size on ${fstype:-?} ($dir)," \
	"cgroups: $cg_mode${limit:+, limit $limit MiB each}"
[ -n "$pin" ] && echo "kernel-readtwice: pinned (--pin): the dd of container 0, 1, ... on CPU" \
	"${pin_cpus[*]}"

for ((i = 0; i < containers; i++)); do
	(
		# timeout relays the signal to its dd, which then stop before the files go.
		trap 'kill -TERM $(jobs -p) 2>/dev/null; wait; exit 143' TERM
		if [ "$cg_mode" != none ]; then
			echo "$BASHPID" >"$cg_parent/c$i/cgroup.procs" || exit 1
		fi
		# The dd inherit the affinity.
		if [ -n "$pin" ]; then
			taskset -pc "${pin_cpus[i]}" "$BASHPID" >/dev/null || exit 1
		fi
		for ((r = 1; r <= readers; r++)); do
			LC_ALL=C timeout --foreground -s INT "$duration" \
				dd bs=4k if="${sparse[$i]}" of=/dev/null 2>"${outs[$((i * readers + r - 1))]}" &
		done
		wait
	) &
	pids+=($!)
done
wait "${pids[@]}"
pids=()

summarise "${outs[@]}"
