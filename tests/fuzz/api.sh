#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Every function that include/lruvec.h declares is called by a fuzz harness (tests/fuzz/): a new
# public call must come with the fuzzer's checks of what its header promises.
set -u
cd "$(dirname "$0")/../.."
# shellcheck source=tests/tap.sh
. tests/tap.sh
# Declarations start a line (comments start with ' *'); a name is followed by its '('.
names=$(grep -oE '^[a-z][a-z0-9_ ]*[ *]lv_[a-z0-9_]+\(' include/lruvec.h |
	grep -oE 'lv_[a-z0-9_]+\($' | tr -d '(' | sort -u)
count=$(echo "$names" | grep -c .)
echo "1..2"
check "lruvec.h declares functions ($count found)" test "$count" -ge 50
missing=
for f in $names; do
	grep -qw "$f" tests/fuzz/fuzz_ops.c tests/fuzz/fuzz_race.c || missing="$missing $f"
done
check "a fuzz harness calls each of the $count${missing:+ (not called:$missing)}" test -z "$missing"
[ "$failed" -eq 0 ]
