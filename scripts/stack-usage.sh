#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# stack-usage.sh - the stack the per-CPU batch flush uses in each batch policy, from the
# compiler's -fstack-usage: src/swap.c is compiled as the release build compiles it (-O2
# -fPIC), with gcc and with clang when they are installed, and the frames of the flush
# (folio_batch_move_lru(), every policy's) and of the sort (folio_batch_sort(), kept out of
# line so that only LV_BATCH_SORTED's flushes have its frame on the stack) are printed. The
# sorted flush uses the flush's frame plus the sort's; the issue's bound is 64 bytes more than
# the arrival flush. Exits non-zero if a compiler puts the sort inline or over the bound.
#   scripts/stack-usage.sh [CC...]    (default: gcc clang)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
[ $# -gt 0 ] || set -- gcc clang

frame() { # frame SUFILE FUNCTION - its bytes, or nothing
	awk -F'\t' -v f="$2" '{ n = split($1, a, ":") } a[n] == f { print $2 }' "$1"
}

printf '%-14s %18s %15s %17s\n' compiler "arrival flush (B)" "sort frame (B)" "sorted flush (B)"
for cc in "$@"; do
	command -v "$cc" >/dev/null 2>&1 || continue
	if ! "$cc" -std=gnu11 -pthread -I"$top/include" -I"$top/src" -O2 -fPIC -fstack-usage \
		-c "$top/src/swap.c" -o "$tmp/swap-$cc.o" 2>"$tmp/err"; then
		cat "$tmp/err" >&2
		status=1
		continue
	fi
	flush=$(frame "$tmp/swap-$cc.su" folio_batch_move_lru)
	sort=$(frame "$tmp/swap-$cc.su" folio_batch_sort)
	if [ -z "$flush" ] || [ -z "$sort" ]; then
		echo "$cc: folio_batch_move_lru or folio_batch_sort not found out of line" >&2
		status=1
		continue
	fi
	printf '%-14s %18s %15s %17s\n' "$("$cc" -dumpversion | sed "s/^/$cc /")" "$flush" "+$sort" \
		"$((flush + sort))"
	[ "$sort" -le 64 ] || status=1
done
exit $status
