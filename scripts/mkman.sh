#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# mkman.sh LVBENCH VERSION - write lvbench's man page (roff, man macros) to stdout, made from
# the program's own help texts so that the two can never disagree:
#
#   LVBENCH --help            NAME (its first sentence), SYNOPSIS (its usage lines),
#                             DESCRIPTION (its prose and lists), OPTIONS (its option lists)
#   LVBENCH NAME --help       one section per subcommand (compare) and one subsection of
#                             WORKLOADS per workload, found in the main help's lists and usage
#
# The help texts are read as plain text with a light shape, never for their wording: the first
# paragraph is the usage (an optional "Label:" then one command form per line, a comment after
# two spaces); paragraphs are separated by blank lines; a paragraph whose first line ends with
# a colon and whose following lines are indented "TERM  description" pairs is a list (options
# when the terms start with '-'); anything else is prose, in which indented lines are kept as
# they are, and a line that starts a sentence after a line that ended one starts a paragraph (the
# help texts are wrapped by hand, so such a line break is the author's). A section leaves out
# the paragraphs and list items that the main help or a subcommand's section already showed;
# the workloads' sections do not leave out each other's.
#
# Check the result with: groff -k -man -Tutf8 -ww -z FILE, or man -l FILE.
set -eu

if [ $# -ne 2 ]; then
	echo "usage: $0 LVBENCH VERSION" >&2
	exit 2
fi
lvbench=$1
version=$2

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$lvbench" --help >"$tmp/main"
if [ ! -s "$tmp/main" ]; then
	echo "$0: '$lvbench --help' printed nothing" >&2
	exit 1
fi

# Candidate names: the terms of the main help's non-option lists (the workloads) and the literal
# lowercase words of its usage lines (the subcommands). A candidate counts only if NAME --help
# succeeds and prints something other than the main help.
candidates=$(awk '
	NR == 1 { usage = 1 }
	/^[ \t]*$/ { usage = 0; inlist = 0; next }
	usage {
		if (NR == 1)
			sub(/^[A-Za-z][A-Za-z ]*: +/, "")
		sub(/^[ \t]+/, "")
		if (NR == 1)
			prog = $1
		if ($1 != prog)
			next
		sub(/  .*/, "")
		n = split($0, w, " ")
		for (i = 2; i <= n; i++) {
			word = w[i]
			gsub(/^[[(]+|[])]+$/, "", word)
			if (word ~ /^[a-z][a-z0-9_-]*$/)
				print "sub", word
		}
		next
	}
	/^[^ \t].*:$/ { inlist = 1; next }
	inlist && /^  ? ?[a-z][a-z0-9_-]*  / { print "wl", $1 }
' "$tmp/main" | awk '!seen[$2]++')

echo "$candidates" | while read -r kind name; do
	[ -n "$name" ] || continue
	out="$tmp/$kind.$name"
	if "$lvbench" "$name" --help >"$out" 2>/dev/null && [ -s "$out" ] &&
		! cmp -s "$out" "$tmp/main"; then
		echo "$out"
	fi
done >"$tmp/list"

# Subcommands first in the file list, then workloads, each in the order the help gives them.
subs=$(grep '/sub\.' "$tmp/list" | tr '\n' ' ')
workloads=$(grep '/wl\.' "$tmp/list" | tr '\n' ' ')
files="$tmp/main $subs $workloads"

# shellcheck disable=SC2086 # the file names are ours, without spaces
awk -v version="$version" -v dir="$tmp/" '
# Escape text for roff: backslashes, and minus signs so that options stay copy-pasteable.
function esc(s) {
	gsub(/\\/, "\\e", s)
	gsub(/-/, "\\-", s)
	return s
}
# One line of running text: a leading dot or quote would be a request.
function text(s) {
	sub(/^[ \t]+/, "", s)
	s = esc(s)
	if (s ~ /^[.\047]/)
		s = "\\&" s
	print s
}
function norm(s) {
	gsub(/[ \t]+/, " ", s)
	sub(/^ /, "", s)
	sub(/ $/, "", s)
	return s
}
function indent(s) {
	match(s, /^[ \t]*/)
	return RLENGTH
}
# A command word: metasyntactic (all capitals) in italics, literal in bold, brackets roman.
function word(w,    pre, post) {
	pre = ""
	post = ""
	while (w ~ /^[[(]/) {
		pre = pre substr(w, 1, 1)
		w = substr(w, 2)
	}
	while (length(w) > 1 && w ~ /[])]$/) {
		post = substr(w, length(w)) post
		w = substr(w, 1, length(w) - 1)
	}
	if (w == "|" || w == "")
		return pre esc(w) post
	if (w ~ /^[A-Z][A-Z0-9_.,]*$/ || w ~ /^<.*>$/)
		return pre "\\fI" esc(w) "\\fR" post
	return pre "\\fB" esc(w) "\\fR" post
}
function form(s,    n, w, i, out) {
	n = split(s, w, " ")
	out = ""
	for (i = 1; i <= n; i++)
		out = out (i > 1 ? " " : "") word(w[i])
	return out
}
# A list term: options (and a name) in bold, their arguments in italics.
function term(s,    n, w, i, out) {
	n = split(s, w, " ")
	out = "\\fB" esc(w[1]) "\\fR"
	for (i = 2; i <= n; i++)
		out = out " " (w[i] ~ /^-/ ? "\\fB" : "\\fI") esc(w[i]) "\\fR"
	return out
}

# ---- parsing: the current file into paragraphs, paragraph p holding lines L[p, 1..LN[p]] -----

function reset() {
	np = 0
	split("", L)
	split("", LN)
	open = 0
}
{
	if (FNR == 1) {
		if (NR > 1)
			flush()
		reset()
		cur = FILENAME
	}
	sub(/\r$/, "")
	if ($0 ~ /^[ \t]*$/) {
		open = 0
		next
	}
	if (!open) {
		np++
		LN[np] = 0
		open = 1
	}
	L[np, ++LN[np]] = $0
}
BEGIN {
	reset()
	nfile = 0
	wl_started = 0
}
END {
	flush()
}

# Is paragraph p a list? Its first line ends with a colon, its second is an indented
# "TERM  description" pair and every later line is indented.
function is_list(p,    i) {
	if (LN[p] < 2 || !list_head(p))
		return 0
	for (i = 2; i <= LN[p]; i++)
		if (L[p, i] !~ /^[ \t]/)
			return 0
	return 1
}
# Split list p into items: T[1..nit] terms, D[k] descriptions (lines joined by newlines). A line
# of several "TERM  description" cells side by side (a list in columns) gives one item a cell.
function items(p,    i, j, ind0, s, n, c, multi) {
	nit = 0
	split("", T)
	split("", D)
	ind0 = indent(L[p, 2])
	for (i = 2; i <= LN[p]; i++) {
		s = L[p, i]
		if (indent(s) > ind0 && nit > 0) {
			sub(/^[ \t]+/, "", s)
			D[nit] = D[nit] (D[nit] == "" ? "" : "\n") s
			continue
		}
		sub(/^[ \t]+/, "", s)
		n = split(s, c, /  +/)
		multi = n >= 4 && n % 2 == 0
		for (j = 1; multi && j <= n; j += 2)
			if (c[j] !~ /^-/ && c[j] !~ /^[a-z][a-z0-9_-]*$/)
				multi = 0
		if (!multi && n > 2) {
			c[2] = substr(s, length(c[1]) + 1)
			sub(/^ +/, "", c[2])
			n = 2
		}
		for (j = 1; j <= n; j += 2) {
			nit++
			T[nit] = c[j]
			D[nit] = j + 1 <= n ? c[j + 1] : ""
		}
	}
}
function para_text(p,    i, s) {
	s = ""
	for (i = 1; i <= LN[p]; i++)
		s = s " " L[p, i]
	return norm(s)
}

# ---- output ------------------------------------------------------------------------------

# The usage paragraph: as a tagged list when some form has a comment, else as plain lines.
function usage(p,    i, s, nf, F, C, prog, commented) {
	nf = 0
	commented = 0
	for (i = 1; i <= LN[p]; i++) {
		s = L[p, i]
		if (i == 1)
			sub(/^[A-Za-z][A-Za-z ]*: +/, "", s)
		sub(/^[ \t]+/, "", s)
		if (i == 1) {
			prog = s
			sub(/ .*/, "", prog)
		}
		if (nf == 0 || index(s, prog " ") == 1 || s == prog) {
			nf++
			C[nf] = ""
			if (match(s, /  +/)) {
				F[nf] = substr(s, 1, RSTART - 1)
				C[nf] = substr(s, RSTART + RLENGTH)
				commented = 1
			} else {
				F[nf] = s
			}
		} else {
			C[nf] = C[nf] (C[nf] == "" ? "" : "\n") s
			commented = 1
		}
	}
	if (commented) {
		for (i = 1; i <= nf; i++) {
			print ".TP"
			print form(F[i])
			lines(C[i])
		}
	} else {
		print ".nf"
		for (i = 1; i <= nf; i++)
			print form(F[i])
		print ".fi"
	}
}
function lines(s,    n, a, i) {
	n = split(s, a, "\n")
	for (i = 1; i <= n; i++)
		text(a[i])
}
# Prose: running text, with indented lines kept as they are.
function prose(p,    i, lit) {
	print ".PP"
	lit = 0
	for (i = 1; i <= LN[p]; i++) {
		if (L[p, i] ~ /^[ \t]/) {
			if (!lit) {
				print ".RS 4"
				print ".nf"
				lit = 1
			}
			text(L[p, i])
			continue
		}
		if (lit) {
			print ".fi"
			print ".RE"
			lit = 0
			if (L[p, i] ~ /^([A-Z]|--)/)
				print ".PP"
		} else if (i > 1 && L[p, i - 1] ~ /[.:]$/ && L[p, i] ~ /^([A-Z]|--)/) {
			print ".PP"
		}
		text(L[p, i])
	}
	if (lit) {
		print ".fi"
		print ".RE"
	}
}
# A list. With dedup, the items already shown in the main part of the page (the sections made
# from the main help and from the subcommands) are left out, and a heading whose items all went
# says so.
function list(p, dedup,    k, head, kept, key) {
	items(p)
	head = L[p, 1]
	kept = 0
	for (k = 1; k <= nit; k++)
		if (!dedup || !(norm(T[k] " " D[k]) in shownitem))
			kept++
	if (kept == 0) {
		if (!(norm(head) in shownhead)) {
			print ".PP"
			sub(/:$/, "", head)
			text(head ": as above.")
		}
		return
	}
	print ".PP"
	text(head)
	for (k = 1; k <= nit; k++) {
		key = norm(T[k] " " D[k])
		if (dedup && key in shownitem)
			continue
		print ".TP"
		print term(T[k])
		lines(D[k])
		if (pooling)
			newitem[key] = 1
	}
	if (pooling)
		shownhead[norm(L[p, 1])] = 1
}
function is_options(p) {
	items(p)
	return nit > 0 && T[1] ~ /^-/
}

# A list runs up to its first unindented line: what follows in the same paragraph is another.
function split_lists(    p, q, i, j, n, NL, NN) {
	n = 0
	for (p = 1; p <= np; p++) {
		n++
		NN[n] = 0
		for (i = 1; i <= LN[p]; i++) {
			if (i > 2 && L[p, i] !~ /^[ \t]/ && list_head(p) && NN[n] >= 2) {
				n++
				NN[n] = 0
			}
			NL[n, ++NN[n]] = L[p, i]
		}
	}
	split("", L)
	split("", LN)
	for (q = 1; q <= n; q++) {
		LN[q] = NN[q]
		for (j = 1; j <= NN[q]; j++)
			L[q, j] = NL[q, j]
	}
	np = n
}
function list_head(p) {
	return L[p, 1] ~ /:$/ && L[p, 1] !~ /^[ \t]/ &&
	       L[p, 2] ~ /^[ \t]+[^ \t]+( [^ \t]+)*(  +[^ \t]|$)/
}

function flush(    name, kind, p, k) {
	nfile++
	split_lists()
	name = substr(cur, length(dir) + 1)
	if (nfile == 1) {
		main_page()
		return
	}
	kind = name
	sub(/\..*/, "", kind)
	sub(/^[^.]*\./, "", name)
	if (kind == "wl") {
		if (!wl_started)
			print ".SH WORKLOADS"
		wl_started = 1
		print ".SS " name
	} else {
		print ".SH " toupper(name)
	}
	usage(1)
	# Subcommands add what they show to what later sections leave out; workloads do not, so
	# that the section of a workload lacks only what the main part of the page shows.
	pooling = kind != "wl"
	for (p = 2; p <= np; p++) {
		if (is_list(p))
			list(p, 1)
		else if (!(para_text(p) in shownpara)) {
			prose(p)
			if (pooling)
				shownpara[para_text(p)] = 1
		}
	}
	for (k in newitem)
		shownitem[k] = 1
	split("", newitem)
}

function main_page(    p, k, nm) {
	# Remember what the sections must not repeat.
	for (p = 2; p <= np; p++) {
		shownpara[para_text(p)] = 1
		if (is_list(p)) {
			shownhead[norm(L[p, 1])] = 1
			items(p)
			for (k = 1; k <= nit; k++)
				shownitem[norm(T[k] " " D[k])] = 1
		}
	}
	prog = L[1, 1]
	sub(/^[A-Za-z][A-Za-z ]*: +/, "", prog)
	sub(/^[ \t]+/, "", prog)
	sub(/ .*/, "", prog)
	# NAME: the first sentence of the first prose paragraph, up to a colon.
	nm = ""
	for (p = 2; p <= np && nm == ""; p++)
		if (!is_list(p))
			nm = para_text(p)
	sub(/\. .*/, "", nm)
	sub(/: .*/, "", nm)
	sub(/\.$/, "", nm)
	if (index(nm, prog " ") == 1)
		nm = substr(nm, length(prog) + 2)
	if (substr(nm, 2, 1) !~ /[A-Z]/)
		nm = tolower(substr(nm, 1, 1)) substr(nm, 2)

	print ".\\\" -*- coding: UTF-8 -*-"
	print ".\\\" Generated by scripts/mkman.sh from the help texts of " prog "; do not edit."
	print ".TH " toupper(esc(prog)) " 1 \"\" \"lruvec " esc(version) "\" \"User Commands\""
	print ".SH NAME"
	print esc(prog) " \\- " esc(nm)
	print ".SH SYNOPSIS"
	usage(1)
	print ".SH DESCRIPTION"
	for (p = 2; p <= np; p++) {
		if (!is_list(p))
			prose(p)
		else if (!is_options(p))
			list(p, 0)
	}
	print ".SH OPTIONS"
	for (p = 2; p <= np; p++)
		if (is_list(p) && is_options(p))
			list(p, 0)
}
' $files
