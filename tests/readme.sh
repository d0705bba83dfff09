#!/usr/bin/env bash
# The README's example compiles cleanly with gcc (and clang, when installed) against the
# debug library and prints what its text promises: the unlimited tenant hits on its second
# pass and activates what it read twice, the limited one stays under its 256 pages.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
lib=$BUILD/debug/liblruvec.a
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=tests/tap.sh
. tests/tap.sh
t() { # t STATUS DESCRIPTION: a test point that passes if STATUS is 0
	if [ "$1" = 0 ]; then ok "$2"; else not_ok "$2"; fi
}

echo "1..7"
awk '/^## Example/ { f = 1 } f && /^```c/ { g = 1; next } g && /^```/ { exit } g' README.md \
	>"$tmp/example.c"
[ -s "$tmp/example.c" ] && grep -q 'int main' "$tmp/example.c"
t $? "README.md has a complete C example after '## Example'"

libs=$(pkg-config --libs liburcu-bp 2>/dev/null || echo -lurcu-bp -lurcu-common)
cflags="-std=gnu11 -Wall -Wextra -Werror -Iinclude"
# shellcheck disable=SC2086
gcc $cflags "$tmp/example.c" "$lib" $libs -lm -pthread -o "$tmp/example" 2>"$tmp/cc.err"
t $? "the example builds with gcc -Wall -Wextra -Werror$(sed 's/^/ # /' "$tmp/cc.err")"
if command -v clang >/dev/null 2>&1; then
	# shellcheck disable=SC2086
	clang $cflags -c "$tmp/example.c" -o "$tmp/example.o" 2>"$tmp/clang.err"
	t $? "the example compiles with clang -Wall -Wextra -Werror"
else
	ok "# skip clang is not installed"
fi

"$tmp/example" >"$tmp/out" 2>&1
t $? "the example runs and exits 0"
sed 's/^/# /' "$tmp/out"

# big   usage 2048 pages, misses 2048, active 2048, limit none
# small usage  246 pages, misses 4096, active    0, limit 256 pages
read -r _ _ bu _ _ bm _ ba _ bl <<<"$(grep '^big ' "$tmp/out" | tr -d ,)"
read -r _ _ su _ _ sm _ _ _ sl _ <<<"$(grep '^small ' "$tmp/out" | tr -d ,)"
[ "${bu:-}" = 2048 ] && [ "${bm:-}" = 2048 ] && [ "${ba:-}" = 2048 ] && [ "${bl:-}" = none ]
t $? "big: 2048 pages charged, 2048 misses (the second pass hits), 2048 active, no limit"
[ -n "${su:-}" ] && [ "$su" -le 256 ] && [ "$su" -gt 0 ] && [ "${sl:-}" = 256 ]
t $? "small: usage within its 256-page limit (${su:-?})"
[ -n "${sm:-}" ] && [ "$sm" -ge $((4096 - 256)) ]
t $? "small: its second pass misses (evicted by its own limit): ${sm:-?} misses"
[ "$failed" -eq 0 ]
