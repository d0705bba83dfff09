#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The library as a user gets it: make install into a temporary DESTDIR under $BUILD, then check
# what was installed (every file, the soname and its symlinks, the exported symbols against the
# functions the installed header declares, pkg-config's answers, the man page), build both
# programs of examples/ against the installed copy through pkg-config, shared and --static, run
# them, and make uninstall, after which nothing of ours may remain. A second installation with
# its own PREFIX and LIBDIR checks that lruvec.pc finds a layout other than the default.
# TAP; run from the top of the tree: prove -f tests/install.sh  (BUILD selects the build dir,
# which must hold the release build: make BUILD=... all build/lvbench.1).
#
#   tests/install.sh --check-symbols LIB.so HEADER
#
# runs only the symbol check, on any shared library and header: it prints the symbols missing
# from the library and those it exports beyond the header's functions, and fails if there are
# any (try it on a liblruvec.so linked without liblruvec.map).
#
# The test points are functions that check() calls; A && B || C is meant as it reads.
# shellcheck disable=SC2317,SC2015
set -u

CC=${CC:-cc}
MAKE=${MAKE:-make}

# The external names the header declares: functions, and variables declared extern. The header
# is run through the preprocessor (so comments, conditionals and macros are gone) and only the
# lines that come from it are kept; every declaration at file scope that is not a typedef is
# then a function (the name before its parameter list) or, with extern, a variable.
header_symbols() {
	local header=$1
	printf '#include "%s"\n' "$header" | "$CC" -std=gnu11 -E -x c - | perl -e '
		my ($in, $text) = (0, "");
		while (<STDIN>) {
			if (/^# \d+ "([^"]*)"/) {
				$in = $1 =~ m{(^|/)lruvec\.h$};
				next;
			}
			$text .= $_ if $in;
		}
		# Attributes and asm labels hold parentheses that are not parameter lists.
		$text =~ s/\b(?:__attribute__|__asm__|asm)\s*(\((?:[^()]++|(?1))*\))//g;
		my ($depth, $stmt) = (0, "");
		my @names;
		for my $c (split //, $text) {
			if ($c eq "{") {
				# A function body (an inline function): not a declaration.
				$stmt = "" if $depth == 0 && $stmt =~ /\)\s*$/;
				$depth++;
			} elsif ($c eq "}") {
				$depth--;
			} elsif ($depth == 0 && $c eq ";") {
				push @names, declared($stmt);
				$stmt = "";
			} elsif ($depth == 0) {
				$stmt .= $c;
			}
		}
		print "$_\n" for @names;

		# The names a declaration at file scope gives to functions, and with extern to
		# variables (a pointer to a function is a variable: its name follows the "*").
		sub declared {
			my ($s) = @_;
			$s =~ s/\s+/ /g;
			return () if $s =~ /^\s*(typedef|_Static_assert|static)\b/;
			my $extern = $s =~ /\bextern\b/;
			my ($depth, $cur, @parts, @names) = (0, "");
			for my $c (split //, $s) {
				$depth++ if $c eq "(";
				$depth-- if $c eq ")";
				if ($c eq "," && $depth == 0) {
					push @parts, $cur;
					$cur = "";
				} else {
					$cur .= $c;
				}
			}
			push @parts, $cur;
			for my $p (@parts) {
				if ($p =~ /^([^(]*)\(\s*(\*?)\s*(\w*)/) {
					my ($before, $pointer, $inner) = ($1, $2, $3);
					if ($pointer) {
						push @names, $inner if $extern;
					} elsif ($before =~ /(\w+)\s*$/) {
						push @names, $1;
					}
				} elsif ($extern && $p =~ /(\w+)\s*(?:\[[^\]]*\]\s*)*$/) {
					push @names, $1;
				}
			}
			return @names;
		}
	' | sort -u
}

library_symbols() {
	nm -D --defined-only "$1" | awk '{ sub(/@.*/, "", $NF); print $NF }' | sort -u
}

# Prints the differences, one symbol a line; fails if there are any.
check_symbols() {
	local so=$1 header=$2 declared exported missing extra
	declared=$(header_symbols "$header") || return 1
	exported=$(library_symbols "$so") || return 1
	if [ -z "$declared" ]; then
		echo "# no function found in $header"
		return 1
	fi
	missing=$(comm -23 <(echo "$declared") <(echo "$exported"))
	extra=$(comm -13 <(echo "$declared") <(echo "$exported"))
	[ -z "$missing" ] || echo "$missing" | sed 's/^/declared but not exported: /'
	[ -z "$extra" ] || echo "$extra" | sed 's/^/exported but not declared: /'
	[ -z "$missing" ] && [ -z "$extra" ]
}

if [ "${1:-}" = --check-symbols ]; then
	[ $# -eq 3 ] || { echo "usage: $0 --check-symbols LIB.so HEADER" >&2; exit 2; }
	check_symbols "$2" "$3"
	exit
fi

BUILD=${BUILD:-build}
if [ ! -f "$BUILD/liblruvec.so" ] || [ ! -x "$BUILD/lvbench" ] || [ ! -f "$BUILD/lvbench.1" ]; then
	echo "Bail out! $BUILD holds no release build (make BUILD=$BUILD all $BUILD/lvbench.1)"
	exit 1
fi
STAGE=$(cd "$BUILD" && pwd)/install-test
rm -rf "$STAGE"
mkdir -p "$STAGE"
# This runs under make check: the make below is not its child job, and must not think it is.
unset MAKEFLAGS MFLAGS MAKELEVEL

# shellcheck source=tests/tap.sh
. "$(dirname "$0")/tap.sh"
# check DESCRIPTION COMMAND...: tap.sh's, but COMMAND's output is kept and shown as comments
# when it fails.
check() {
	local desc=$1 out
	shift
	if out=$("$@" 2>&1); then
		ok "$desc"
	else
		not_ok "$desc"
		[ -z "$out" ] || printf '%s\n' "$out" | sed 's/^/# /'
	fi
}

DEST=$STAGE/dest
PREFIX=/usr
ROOT=$DEST$PREFIX
check "make install DESTDIR=... PREFIX=$PREFIX" \
	"$MAKE" --no-print-directory -s BUILD="$BUILD" install DESTDIR="$DEST" PREFIX="$PREFIX"

MAJOR=$(awk '$2 == "LV_VERSION_MAJOR" { print $3 }' "$ROOT/include/lruvec.h" 2>/dev/null)
MINOR=$(awk '$2 == "LV_VERSION_MINOR" { print $3 }' "$ROOT/include/lruvec.h" 2>/dev/null)
SOFILE=liblruvec.so.$MAJOR.$MINOR
SONAME=liblruvec.so.$MAJOR

# Exactly these files and symlinks are installed, the shared library under its full version.
expected="bin/lvbench
include/lruvec.h
lib/liblruvec.a
lib/liblruvec.so -> $SONAME
lib/$SOFILE
lib/$SONAME -> $SOFILE
lib/pkgconfig/lruvec.pc
share/man/man1/lvbench.1"
installed_files() {
	(cd "$1" && find . -type l -printf '%P -> %l\n' -o ! -type d -printf '%P\n') | LC_ALL=C sort
}
installed() {
	local got want
	got=$(installed_files "$ROOT")
	want=$(echo "$expected" | LC_ALL=C sort)
	[ "$got" = "$want" ] || { diff <(echo "$want") <(echo "$got"); return 1; }
}
check "installed exactly the header, both libraries and symlinks, lruvec.pc, lvbench, lvbench.1" \
	installed

soname() {
	readelf -d "$ROOT/lib/$SOFILE" | grep -F "(SONAME)" | grep -qF "[$SONAME]" ||
		{ readelf -d "$ROOT/lib/$SOFILE" | grep -F SONAME; return 1; }
}
check "$SOFILE has the soname $SONAME" soname

check "the library exports exactly the functions the installed lruvec.h declares" \
	check_symbols "$ROOT/lib/$SOFILE" "$ROOT/include/lruvec.h"

export PKG_CONFIG_PATH=$ROOT/lib/pkgconfig
unset PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_LIBDIR
modversion() {
	local v
	v=$(pkg-config --modversion lruvec) && [ "$v" = "$MAJOR.$MINOR" ] || {
		echo "pkg-config says '$v'"
		return 1
	}
}
check "pkg-config --modversion lruvec is $MAJOR.$MINOR" modversion
# The staged files, not the build tree's nor a copy under /usr, are what pkg-config points at.
pc_paths() {
	local cflags libs
	cflags=$(pkg-config --cflags lruvec) && libs=$(pkg-config --libs lruvec) || return 1
	[ -f "$(echo "$cflags" | sed 's/^-I\([^ ]*\).*/\1/')/lruvec.h" ] &&
		[ -f "$(echo "$libs" | sed 's/^-L\([^ ]*\).*/\1/')/$SOFILE" ] || {
		echo "cflags: $cflags"
		echo "libs: $libs"
		return 1
	}
}
check "pkg-config's -I and -L name the staged include and lib directories" pc_paths

man_page() {
	local page=$ROOT/share/man/man1/lvbench.1 warnings opt missing=""
	if command -v groff >/dev/null; then
		warnings=$(groff -k -man -Tutf8 -ww -z "$page" 2>&1)
		[ -z "$warnings" ] || { echo "$warnings"; return 1; }
	fi
	for section in NAME SYNOPSIS DESCRIPTION OPTIONS WORKLOADS; do
		grep -q "^\.SH $section\$" "$page" || missing="$missing $section"
	done
	# Every option the help texts of the page's subcommands and workloads name is in it.
	for opt in $( ("$ROOT/bin/lvbench" --help
		for w in $(sed -n 's/^\.S[HS] \([A-Za-z0-9-]*\)$/\1/p' "$page" | tr A-Z a-z); do
			"$ROOT/bin/lvbench" "$w" --help 2>/dev/null
		done) | grep -oE '(^ |  )--[a-z][a-z-]*' | sort -u); do
		roff="\\fB$(echo "$opt" | sed 's/-/\\-/g')\\fR"
		grep -qF -- "$roff" "$page" || missing="$missing $opt"
	done
	[ -z "$missing" ] || { echo "missing from lvbench.1:$missing"; return 1; }
}
check "lvbench.1 formats without warnings and documents every option of the help texts" man_page

# ---- the examples, built against the installed copy -------------------------------------

EXAMPLES=$STAGE/examples
mkdir -p "$EXAMPLES"
CFLAGS_EX="-std=gnu11 -O2 -Wall -Wextra -Werror"
for ex in tenant-cache lock-designs; do
	# shellcheck disable=SC2046,SC2086 # pkg-config's words are meant to split
	check "$ex builds against the installed shared library through pkg-config" \
		"$CC" $CFLAGS_EX -o "$EXAMPLES/$ex" "examples/$ex.c" \
		$(pkg-config --cflags --libs lruvec)
	# shellcheck disable=SC2046,SC2086
	check "$ex builds statically through pkg-config --static" \
		"$CC" $CFLAGS_EX -static -o "$EXAMPLES/$ex-static" "examples/$ex.c" \
		$(pkg-config --static --cflags --libs lruvec)
done

linked() {
	local bin=$1 resolved
	readelf -d "$bin" | grep -F "(NEEDED)" | grep -qF "[$SONAME]" ||
		{ echo "$bin does not need $SONAME"; readelf -d "$bin" | grep NEEDED; return 1; }
	resolved=$(LD_LIBRARY_PATH=$ROOT/lib ldd "$bin" | grep -F "$SONAME")
	[ "$resolved" != "${resolved#*"$ROOT/lib/$SONAME"}" ] ||
		{ echo "ldd: $resolved"; return 1; }
}
static_linked() {
	! readelf -d "$1" 2>/dev/null | grep -q "(NEEDED)" ||
		{ readelf -d "$1" | grep NEEDED; return 1; }
}
both_linked() {
	linked "$EXAMPLES/tenant-cache" && linked "$EXAMPLES/lock-designs"
}
both_static() {
	static_linked "$EXAMPLES/tenant-cache-static" &&
		static_linked "$EXAMPLES/lock-designs-static"
}
# The static archive exports the shared library's symbols and nothing else: a program may
# define the library's kernel-named internals for itself.
archive_symbols() {
	local a s
	a=$(nm -g --defined-only "$ROOT/lib/liblruvec.a" | awk 'NF == 3 { print $3 }' | sort -u)
	s=$(library_symbols "$ROOT/lib/$SOFILE")
	[ "$a" = "$s" ] || { diff <(echo "$s") <(echo "$a") | sed 's/^/# /'; return 1; }
}
check "liblruvec.a defines as global exactly the symbols liblruvec.so exports" archive_symbols
cat >"$EXAMPLES/own-names.c" <<'END'
#include <lruvec.h>
/* Names the library uses inside: a program linked statically may have its own. */
int folio_alloc(void);
int css_get(void);
int try_to_free_pages(void);
int folio_alloc(void) { return 1; }
int css_get(void) { return 2; }
int try_to_free_pages(void) { return 3; }
int main(void)
{
	struct lv_machine *m = lv_machine_create(NULL);

	if (!m)
		return 1;
	lv_machine_destroy(m);
	return folio_alloc() + css_get() + try_to_free_pages() == 6 ? 0 : 1;
}
END
own_names() {
	# shellcheck disable=SC2046,SC2086 # pkg-config's words are meant to split
	"$CC" $CFLAGS_EX -static -o "$EXAMPLES/own-names" "$EXAMPLES/own-names.c" \
		$(pkg-config --static --cflags --libs lruvec) && "$EXAMPLES/own-names"
}
check "a program defining folio_alloc, css_get and try_to_free_pages links statically" own_names

check "the shared builds need $SONAME, which ldd finds in the staged lib directory" both_linked
check "the static builds need no shared library" both_static

export LD_LIBRARY_PATH=$ROOT/lib
tenant_cache() {
	local out
	out=$("$@") || { echo "$out"; return 1; }
	# The roomy tenant (no limit) hit after its first pass; the tight one (a limit of an eighth
	# of the file) had to read pages again that the roomy one kept.
	echo "$out" | grep -q "every byte matched" &&
		echo "$out" | awk '$1 == "roomy" { hits = $3; misses = $4 }
			$1 == "tight" { tight = $4 }
			END { exit !(hits > 0 && tight > misses) }' ||
		{ echo "$out"; return 1; }
}
check "tenant-cache (shared) reads the C library's file, every byte verified, limits kept" \
	tenant_cache "$EXAMPLES/tenant-cache"
check "tenant-cache (static) reads the installed $SOFILE, every byte verified, limits kept" \
	tenant_cache "$EXAMPLES/tenant-cache-static" "$ROOT/lib/$SOFILE"
missing_file() {
	local out rc
	out=$("$EXAMPLES/tenant-cache" "$STAGE/no-such-file" 2>&1)
	rc=$?
	[ "$rc" -eq 1 ] &&
		[ "$out" = "tenant-cache: $STAGE/no-such-file: No such file or directory" ] ||
		{ echo "exit $rc: $out"; return 1; }
}
check "tenant-cache names a missing file and exits with 1" missing_file
lock_designs() {
	local out
	out=$("$@") || { echo "$out"; return 1; }
	# The node design takes only node locks and the lruvec design only lruvec locks.
	echo "$out" | awk '
		NF == 6 { design = $1; lock = $3; acq = $4 }
		NF == 4 { lock = $1; acq = $2 }
		lock == "node" || lock == "lruvec" {
			if ((lock == design) != (acq > 0))
				bad = 1
			rows++
		}
		END { exit bad || rows != 4 }' || { echo "$out"; return 1; }
}
check "lock-designs (shared): each design takes only its own LRU lock" \
	lock_designs "$EXAMPLES/lock-designs"
check "lock-designs (static): each design takes only its own LRU lock" \
	lock_designs "$EXAMPLES/lock-designs-static"

check "make uninstall DESTDIR=... PREFIX=$PREFIX" \
	"$MAKE" --no-print-directory -s BUILD="$BUILD" uninstall DESTDIR="$DEST" PREFIX="$PREFIX"
nothing_left() {
	local left
	left=$(find "$1" ! -type d)
	[ -z "$left" ] || { echo "$left"; return 1; }
}
check "nothing of ours remains after make uninstall" nothing_left "$DEST"

# ---- another layout: its own PREFIX and LIBDIR ---------------------------------------------

DEST2=$STAGE/dest2
LAYOUT2=(DESTDIR="$DEST2" PREFIX=/opt/lruvec LIBDIR=/opt/lruvec/lib64)
check "make install with PREFIX=/opt/lruvec LIBDIR=/opt/lruvec/lib64" \
	"$MAKE" --no-print-directory -s BUILD="$BUILD" install "${LAYOUT2[@]}"
export PKG_CONFIG_PATH=$DEST2/opt/lruvec/lib64/pkgconfig LD_LIBRARY_PATH=$DEST2/opt/lruvec/lib64
layout2_example() {
	# shellcheck disable=SC2046,SC2086 # pkg-config's words are meant to split
	"$CC" $CFLAGS_EX -o "$EXAMPLES/tenant-cache2" examples/tenant-cache.c \
		$(pkg-config --cflags --libs lruvec) && "$EXAMPLES/tenant-cache2" >/dev/null
}
layout2_uninstall() {
	"$MAKE" --no-print-directory -s BUILD="$BUILD" uninstall "${LAYOUT2[@]}" &&
		nothing_left "$DEST2"
}
check "an example builds and runs against that layout through pkg-config" layout2_example
check "make uninstall with the same PREFIX and LIBDIR leaves nothing" layout2_uninstall

echo "1..$n"
[ "$failed" -eq 0 ] && rm -rf "$STAGE"
exit $((failed > 0))
