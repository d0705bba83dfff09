#!/usr/bin/env bash
# run-models.sh -- model-check the Promela models in this directory with spin
# and report TAP (run it directly or under `prove -v tests/models/run-models.sh`).
#
# A model that should verify must finish its exhaustive search with
# "errors: 0" and no depth truncation.  A seeded-bug variant must be
# rejected: pan must report errors > 0, and the first violation must be the
# one the bug is meant to cause (so the variant fails for the intended reason,
# not because the model is broken).
#
# Everything is built in a temporary directory that is removed on exit;
# nothing is written to the repository.  Needs spin (Debian package `spin`)
# and a C compiler (${CC:-cc}).  Without spin it prints "1..0 # SKIP".
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CC="${CC:-cc}"
# Safety properties only (assertions, invalid end states); -O1 gives the
# shortest build + run time for these small models.
PAN_CFLAGS="-O1 -DSAFETY"
PAN_RUNFLAGS="-m100000 -w21"      # max depth, 2^21-slot hash table (exhaustive)

if ! command -v spin >/dev/null 2>&1; then
	echo "1..0 # SKIP spin not installed"
	exit 0
fi
if ! command -v "$CC" >/dev/null 2>&1; then
	echo "1..0 # SKIP no C compiler ($CC) to build pan"
	exit 0
fi

tmp="$(mktemp -d "${TMPDIR:-/tmp}/lv-models.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT

# name | source | spin -D flags | expect (verify|reject) | ERE the violation
# must match.  The ERE is the last field, so it may itself contain "|".
tests=(
	"lruvec_lock|lruvec_lock.pml||verify|"
	"lruvec_lock (2 batch movers, 2 charge movers)|lruvec_lock.pml|-DNBATCH=2 -DNMOVE=2|verify|"
	"lruvec_lock REPARENT (re-check needed)|lruvec_lock.pml|-DREPARENT|verify|"
	"lruvec_lock REPARENT_LINKED (as built, with a charge mover)|lruvec_lock.pml|-DREPARENT_LINKED|verify|"
	"lruvec_lock REPARENT_LINKED (2 batch movers, 2 charge movers)|lruvec_lock.pml|-DREPARENT_LINKED -DNBATCH=2 -DNMOVE=2|verify|"
	"lruvec_lock REPARENT_LINKED+NO_RECHECK|lruvec_lock.pml|-DREPARENT_LINKED -DNO_RECHECK|reject|assertion violated .*inlist==lv"
	"lruvec_lock REPARENT_UNEVICTABLE (the memmap walk, as built)|lruvec_lock.pml|-DREPARENT_UNEVICTABLE|verify|"
	"lruvec_lock REPARENT_UNEVICTABLE (2 batch movers, 2 charge movers)|lruvec_lock.pml|-DREPARENT_UNEVICTABLE -DNBATCH=2 -DNMOVE=2|verify|"
	"lruvec_lock REPARENT_UNEVICTABLE+NO_CONFIRM (moves a freed or uncounted folio)|lruvec_lock.pml|-DREPARENT_UNEVICTABLE -DNO_CONFIRM|reject|assertion violated .*(inlist==lv|freed)"
	"lruvec_lock REPARENT beside a charge mover|lruvec_lock.pml|-DREPARENT -DNMOVE=1|reject|assertion violated \\(memcg==old\\)"
	"lruvec_lock NO_RECHECK (pin alone suffices against charge moving)|lruvec_lock.pml|-DNO_RECHECK|verify|"
	"lruvec_lock_v1bug|lruvec_lock_v1bug.pml||reject|assertion violated .*inlist==lv"
	"lruvec_lock REPARENT+NO_RECHECK|lruvec_lock.pml|-DREPARENT -DNO_RECHECK|reject|assertion violated .*inlist==lv"
	"lruvec_lock NO_TRYGET|lruvec_lock.pml|-DNO_TRYGET|reject|assertion violated .*freed|assertion violated \(inlist==2\)"
	"drain_add|drain_add.pml||verify|"
	"drain_add_bug|drain_add_bug.pml||reject|assertion violated .*(disabled_done|added\[i\])"
	"drain_add BUG_GEN_LATE|drain_add.pml|-DBUG_GEN_LATE|reject|assertion violated onlru\[f\]"
	"drain_add BUG_EARLY_SAMPLE|drain_add.pml|-DBUG_EARLY_SAMPLE|reject|assertion violated onlru\[f\]"
	"drain_add BUG_RACY_SWEEP|drain_add.pml|-DBUG_RACY_SWEEP|reject|assertion violated (onlru|.*added\[i\]|.*disabled_done)"
	"drain_add SCOPE (reclaim's scoped drain beside drain_all and disable)|drain_add.pml|-DSCOPE|verify|"
	"drain_add SCOPE+BUG_SCOPE_COUNT_EARLY|drain_add.pml|-DSCOPE -DBUG_SCOPE_COUNT_EARLY|reject|assertion violated onlru\[f\]"
	"drain_add TWO_SCOPES (two scoped drains compacting one batch)|drain_add.pml|-DTWO_SCOPES|verify|"
	"drain_add TWO_SCOPES+BUG_SCOPE_LOOK|drain_add.pml|-DTWO_SCOPES -DBUG_SCOPE_LOOK|reject|assertion violated onlru\[f\]"
	"drain_add TWO_SCOPES+BUG_SHARED_GATE|drain_add.pml|-DTWO_SCOPES -DBUG_SHARED_GATE|reject|assertion violated onlru\[f\]"
	"drain_add TWO_SCOPES+SAME_SCOPE (two drains of one scope coalescing)|drain_add.pml|-DTWO_SCOPES -DSAME_SCOPE|verify|"
	"drain_add TWO_SCOPES+SAME_SCOPE+BUG_SCOPE_GEN_LATE|drain_add.pml|-DTWO_SCOPES -DSAME_SCOPE -DBUG_SCOPE_GEN_LATE|reject|assertion violated onlru\[f\]"
	"drain_add PER_LRUVEC (two batches per slot keyed by lruvec)|drain_add.pml|-DPER_LRUVEC|verify|"
	"drain_add_lruvec_bug (a flush forgets one of a slot's batches)|drain_add_lruvec_bug.pml||reject|assertion violated .*(onlru|added\[i\]|disabled_done)"
	"drain_add PER_LRUVEC+TWO_SCOPES+BUG_FORGET_BATCH (a scoped drain forgets one)|drain_add.pml|-DPER_LRUVEC -DTWO_SCOPES -DBUG_FORGET_BATCH|reject|assertion violated onlru\[f\]"
	"kswapd_wake (no request lost at the end of a pass)|kswapd_wake.pml||verify|"
	"kswapd_wake (3 allocators)|kswapd_wake.pml|-DNALLOC=3|verify|"
	"kswapd_wake BUG_WAKE_FIRST (a look before the take)|kswapd_wake.pml|-DBUG_WAKE_FIRST|reject|assertion violated \(free>=2\)"
	"kswapd_wake BUG_LOST_WAKEUP (a return while busy drops the request)|kswapd_wake.pml|-DBUG_LOST_WAKEUP|reject|assertion violated \(free>=2\)"
	"compaction_put (the migrate scanner against the release path)|compaction_put.pml||verify|"
	"compaction_put (2 scanners)|compaction_put.pml|-DNSCAN=2|verify|"
	"compaction_put_bug (the v1 order: a final put under the lock)|compaction_put_bug.pml||reject|assertion violated \(owner!="
	"compaction_put PUT_UNDER_LOCK (isolate_fail_put keeps the lock)|compaction_put.pml|-DPUT_UNDER_LOCK|reject|assertion violated \(owner!="
	"compaction_put PIN_BEFORE_REF (the pin before the reference)|compaction_put.pml|-DPIN_BEFORE_REF|reject|assertion violated .*inlist"
	"objcg_reparent (relock and re-check against objcg reparenting)|objcg_reparent.pml||verify|"
	"objcg_reparent (3 movers, 3 folios)|objcg_reparent.pml|-DNMOVER=3 -DNF=3|verify|"
	"objcg_reparent_bug (no re-check)|objcg_reparent_bug.pml||reject|assertion violated .*inlist\\[f\\]==lv"
)

now_ms() { date +%s%3N; }

# Print the captured output of a failed step as TAP diagnostics: the key
# lines of a pan report, or the tail of a spin/cc log.
diag() {
	if grep -q 'errors:' "$1"; then
		grep -E 'violated|invalid end|errors:|states, stored|depth too small' "$1"
	else
		tail -n 20 "$1"
	fi | sed 's/^/# /'
}

echo "1..${#tests[@]}"
failed=0
k=0
for t in "${tests[@]}"; do
	k=$((k + 1))
	IFS='|' read -r name src defs expect want <<<"$t"
	read -r -a dflags <<<"$defs"
	d="$tmp/$k"
	mkdir -p "$d"

	if ! (cd "$d" && spin "${dflags[@]}" -a "$here/$src") >"$d/spin.log" 2>&1; then
		echo "not ok $k - $name: spin -a failed"
		diag "$d/spin.log"
		failed=$((failed + 1))
		continue
	fi
	# shellcheck disable=SC2086
	if ! (cd "$d" && "$CC" $PAN_CFLAGS -o pan pan.c) >"$d/cc.log" 2>&1; then
		echo "not ok $k - $name: building pan failed"
		diag "$d/cc.log"
		failed=$((failed + 1))
		continue
	fi
	t0="$(now_ms)"
	# pan's exit status does not reflect errors; parse its report instead.
	# shellcheck disable=SC2086
	(cd "$d" && ./pan $PAN_RUNFLAGS) >"$d/pan.out" 2>&1 || true
	t1="$(now_ms)"
	secs="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1000 }')"

	errors="$(sed -n 's/.*errors: \([0-9][0-9]*\).*/\1/p' "$d/pan.out" | head -n 1)"
	states="$(awk '/states, stored/ { print $1; exit }' "$d/pan.out")"
	found="$(grep -m 1 -oE '(assertion violated|invalid end state).*' "$d/pan.out" || true)"

	if [ -z "$errors" ]; then
		echo "not ok $k - $name: no pan summary"
		diag "$d/pan.out"
		failed=$((failed + 1))
	elif [ "$expect" = verify ]; then
		if [ "$errors" -eq 0 ] && ! grep -q 'max search depth too small' "$d/pan.out"; then
			echo "ok $k - $name verifies ($states states, ${secs}s)"
		else
			echo "not ok $k - $name should verify (errors: $errors${found:+; $found})"
			diag "$d/pan.out"
			failed=$((failed + 1))
		fi
	else
		if [ "$errors" -gt 0 ] && printf '%s\n' "$found" | grep -qE "$want"; then
			echo "ok $k - $name rejected (spin found: $found; ${secs}s)"
		elif [ "$errors" -gt 0 ]; then
			echo "not ok $k - $name rejected for the wrong reason: $found (expected /$want/)"
			diag "$d/pan.out"
			failed=$((failed + 1))
		else
			echo "not ok $k - $name should be rejected but verifies ($states states)"
			failed=$((failed + 1))
		fi
	fi
done

if [ "$failed" -ne 0 ]; then
	echo "# $failed of ${#tests[@]} model checks failed"
	exit 1
fi
exit 0
