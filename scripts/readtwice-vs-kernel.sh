#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# readtwice-vs-kernel.sh - set lruvec's readtwice beside the host kernel's, as docs/benchmarks.md
# (readtwice) quotes the comparison: `lvbench readtwice` and scripts/kernel-readtwice.sh in the
# same shape, alternately, round after round, so that both see the same hours of a noisy machine. Prints
# each round's MB/s per reader of both and their ratio, lvbench's ceiling per reader and the
# bound (ceiling / kernel), then the medians, their ratios and how many rounds reached
# --target, ending with one line a script can read:
#
#   readtwice-vs-kernel: containers=C readers=R rounds=N lvbench_mb_per_s_reader=X
#     kernel_mb_per_s_reader=Y ratio=Z at_target=K/N target=T ceiling_mb_per_s_reader=M
#     bound=B
#
# (on one line; R counts the readers of all containers, as lvbench's and kernel-readtwice.sh's
# summary lines do; X, Y and M are the medians over the rounds of each side's mean per reader
# and of lvbench's ceiling per reader, Z is X / Y, K counts the rounds whose own ratio is at
# least T, B is M / Y. The last two fields are left out if lvbench printed no ceiling.)
#
# The bound is the highest ratio the engine could reach on this machine: the ceiling is its
# memory work alone (zeroing and copying 4 KiB per read), which no cache management can make
# cheaper. It moves from machine to machine with the memory bandwidth a thread gets against
# the host kernel's per-read cost (large folios on ext4 since Linux 6.16 lower the latter).
set -u
set -o pipefail

prog=${0##*/}
tag=readtwice-vs-kernel # prefix of the lines a script reads
here=$(cd "$(dirname "$0")" && pwd)

usage() {
	cat <<EOF
Usage: $prog [OPTIONS] [-- LVBENCH_OPTIONS...]

Runs 'lvbench readtwice' and scripts/kernel-readtwice.sh (dd on this kernel) one after the
other, --rounds times, with the same containers, readers, limit and duration, and compares
their MB/s per reader. The defaults are the shape docs/benchmarks.md (readtwice) quotes:
2 containers x 2 readers, 512 MiB limit each, 5 s, lvbench with --folio-order 6; the
target is 5x. Each round also
shows lvbench's ceiling (the same readers doing only the memory work) and the bound, the
ceiling over the kernel: the highest ratio this machine allows.

Options:
  --rounds N      pairs of runs (default 10)
  --containers N  containers on both sides (default 2)
  --readers N     readers per container on both sides (default 2)
  --limit SIZE    memory limit of each container on both sides, MiB or a size in whole MiB
                  (512M, 1G; as lvbench reads sizes); 0: none (default 512; the kernel
                  side needs memory cgroups for it, see kernel-readtwice.sh --help)
  --duration SEC  length of each run (default 5)
  --pin           both sides run each container's readers on one CPU (their --pin)
  --dir DIR       where the kernel side puts its sparse files (its --dir; default: its
                  own, under \${TMPDIR:-/tmp}); use ext4 or xfs, not tmpfs
  --target X      count the rounds whose ratio is at least X (default 5)
  --lvbench PATH  the lvbench to run (default: build/lvbench of this repository)
  --kernel PATH   the kernel side to run (default: kernel-readtwice.sh beside this script)
  -h, --help      this help
Options after '--' go to lvbench alone, replacing the default --folio-order 6.

Exit status: 0 when every run succeeded (whether or not the target was reached), 1 when a
run failed (its output is shown), 2 usage.
EOF
}

die_usage() {
	echo "$prog: $*" >&2
	echo "Try '$prog --help'." >&2
	exit 2
}

rounds=10
containers=2
readers=2
limit=512
duration=5
pin=
target=5
lvbench=$here/../build/lvbench
kernel=$here/kernel-readtwice.sh
lv_extra=(--folio-order 6)
k_dir=()

while [ $# -gt 0 ]; do
	opt=$1
	case $opt in
	--*=*)
		val=${opt#*=}
		opt=${opt%%=*}
		;;
	--rounds | --containers | --readers | --limit | --duration | --target | --lvbench | \
		--kernel | --dir)
		[ $# -ge 2 ] || die_usage "option '$opt' needs a value"
		val=$2
		shift
		;;
	esac
	case $opt in
	--rounds | --containers | --readers)
		if ! [[ $val =~ ^[0-9]{1,4}$ ]] || [ "$val" -lt 1 ] || [ "$val" -gt 1024 ]; then
			die_usage "$opt: '$val' is not an integer in 1..1024"
		fi
		printf -v "${opt#--}" %s "$((10#$val))" # not octal
		;;
	--limit)
		# As lvbench reads a size: powers of 1024, a bare number in MiB, whole MiB only.
		if [[ $val =~ ^([0-9]{1,9})$ ]]; then
			limit=$((10#$val))
		elif [[ $val =~ ^([0-9]{1,12})([KMGTkmgt])(iB)?$ ]]; then
			p=KMGT
			p=${p%%"${BASH_REMATCH[2]^^}"*}
			kib=$((10#${BASH_REMATCH[1]} << (10 * ${#p})))
			[ $((kib % 1024)) -eq 0 ] || die_usage "--limit: $val is not a whole number of MiB"
			limit=$((kib >> 10))
		else
			die_usage "--limit: '$val' is not a size (MiB, or digits and K, M, G or T)"
		fi
		;;
	--duration)
		if ! [[ $val =~ ^([0-9]+\.?[0-9]*|\.[0-9]+)$ ]] || [[ $val =~ ^0*\.?0*$ ]]; then
			die_usage "--duration: '$val' is not a positive number of seconds"
		fi
		duration=$val
		;;
	--target)
		if ! [[ $val =~ ^([0-9]+\.?[0-9]*|\.[0-9]+)$ ]] || [[ $val =~ ^0*\.?0*$ ]]; then
			die_usage "--target: '$val' is not a positive ratio"
		fi
		target=$val
		;;
	--lvbench | --kernel)
		[ -x "$val" ] && [ -f "$val" ] || die_usage "$opt: '$val' is not an executable file"
		printf -v "${opt#--}" %s "$val"
		;;
	--dir)
		[ -d "$val" ] && [ -w "$val" ] || die_usage "--dir: '$val' is not a writable directory"
		k_dir=(--dir "$val")
		;;
	--pin) pin=--pin ;;
	--)
		shift
		lv_extra=("$@")
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
[ -x "$lvbench" ] || die_usage "no lvbench at '$lvbench' (run 'make', or give --lvbench)"
[ -x "$kernel" ] || die_usage "no kernel side at '$kernel' (give --kernel)"

shape=(--containers "$containers" --readers "$readers" --duration "$duration")
[ "$limit" -gt 0 ] && shape+=(--limit "$limit")
[ -n "$pin" ] && shape+=("$pin")
lv_cmd=("$lvbench" readtwice "${shape[@]}" "${lv_extra[@]}")
k_cmd=("$kernel" "${shape[@]}" "${k_dir[@]}")

out=$(mktemp "${TMPDIR:-/tmp}/readtwice-vs-kernel.XXXXXX") || exit 1
trap 'rm -f "$out"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# run NAME CMD... - run one side into $out; print its mean MB/s per reader and, for lvbench,
# its ceiling per reader and its refaults ("-" where the side prints none). Exits 1, showing the
# output, if it failed. Its warnings (kernel-readtwice.sh's about tmpfs, say) go to stderr.
run() {
	local name=$1 rate rc refaults ceiling
	shift
	"$@" >"$out" 2>&1
	rc=$?
	if [ $rc -ne 0 ]; then
		echo "$prog: $name failed (exit $rc): $*" >&2
		cat "$out" >&2
		exit 1
	fi
	rate=$(sed -n 's/^readtwice: .* mean_mb_per_s_reader=\([0-9.]*\) .*/\1/p' "$out" | tail -n 1)
	if ! awk -v r="$rate" 'BEGIN { exit !(r + 0 > 0) }'; then
		echo "$prog: $name printed no summary line with a positive rate: $*" >&2
		cat "$out" >&2
		exit 1
	fi
	grep -i 'warning' "$out" >&2
	refaults=$(awk '$1 == "workingset_refault" { r = $2 } END { print r == "" ? "-" : r }' "$out")
	ceiling=$(sed -n 's/^ceiling .*(\([0-9.]*\) per reader).*/\1/p' "$out" | tail -n 1)
	printf '%s %s %s\n' "$rate" "${ceiling:--}" "$refaults"
}

echo "$tag: lvbench: ${lv_cmd[*]}"
echo "$tag: kernel:  ${k_cmd[*]}"
printf '%6s %10s %10s %8s %10s %8s %12s\n' round lvbench kernel ratio ceiling bound refaults
results=()
for ((i = 1; i <= rounds; i++)); do
	read -r lv ceil refaults < <(run lvbench "${lv_cmd[@]}") || exit 1
	read -r k _ < <(run kernel "${k_cmd[@]}") || exit 1
	results+=("$lv $k $ceil")
	awk -v i="$i" -v lv="$lv" -v k="$k" -v c="$ceil" -v rf="$refaults" 'BEGIN {
		printf "%6d %10.1f %10.1f %7.2fx ", i, lv, k, lv / k
		if (c == "-")
			printf "%10s %8s %12s\n", "-", "-", rf
		else
			printf "%10.1f %7.2fx %12s\n", c, c / k, rf
	}'
done

printf '%s\n' "${results[@]}" | awk -v target="$target" -v c="$containers" \
	-v r=$((containers * readers)) -v tag="$tag" '
	function median(a, n,    i, j, t) {
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
				t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
			}
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	{
		n++; lv[n] = $1; k[n] = $2; if ($1 / $2 >= target) hit++
		if ($3 != "-")
			ceil[++nc] = $3
	}
	END {
		mlv = median(lv, n)
		mk = median(k, n)
		printf "%6s %10.1f %10.1f %7.2fx ", "median", mlv, mk, mlv / mk
		if (nc) {
			mc = median(ceil, nc)
			printf "%10.1f %7.2fx   (ratios of the medians)\n", mc, mc / mk
		} else {
			printf "  (ratio of the medians)\n"
		}
		printf "rounds at or above %gx: %d of %d\n", target, hit, n
		if (nc) {
			verdict = "the target is within it"
			if (mc / mk < target)
				verdict = "a ratio of " target "x would need the engine to beat its " \
					  "own memory work"
			printf "bound: lvbench'"'"'s ceiling (its memory work alone) is %.2fx the " \
			       "kernel here; %s\n", mc / mk, verdict
		}
		printf "%s: containers=%d readers=%d rounds=%d lvbench_mb_per_s_reader=%.1f " \
		       "kernel_mb_per_s_reader=%.1f ratio=%.2f at_target=%d/%d target=%g",
		       tag, c, r, n, mlv, mk, mlv / mk, hit, n, target
		if (nc)
			printf " ceiling_mb_per_s_reader=%.1f bound=%.2f", mc, mc / mk
		printf "\n"
	}'
