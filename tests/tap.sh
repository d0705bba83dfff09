# SPDX-License-Identifier: LGPL-2.1-or-later
# TAP helpers for the shell tests, sourced: test points numbered in order, a count of the
# failed ones for the exit status (end a test with: [ "$failed" -eq 0 ]).
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
# check DESCRIPTION COMMAND...: a test point that passes if COMMAND, run in this shell, succeeds.
check() {
	local desc=$1
	shift
	if "$@"; then ok "$desc"; else not_ok "$desc"; fi
}
