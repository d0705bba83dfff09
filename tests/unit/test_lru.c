// SPDX-License-Identifier: LGPL-2.1-or-later
/* LRU operations: add and list selection, mark_accessed, activate/deactivate,
 * deactivate_file, lazyfree, rotate_reclaimable, mlocked folios, lv_folio_set_state,
 * batching (batch sizes, lru_cache_disable), drain statistics and the release path. */
#include "lvtest.h"

#define S(item) nstat(m, (item))

static struct lv_config lru_config(unsigned int batch)
{
	struct lv_config cfg = small_config(); /* one slot: batches are deterministic */

	cfg.batch_size = batch;
	cfg.metadata_only = true;
	return cfg;
}

static void test_add(void)
{
	struct lv_config cfg = lru_config(LV_MAX_BATCH);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_folio *f = alloc_or_bail(m, 0, 0, NULL, 0);
	struct lv_folio *a = alloc_or_bail(m, 0, 0, NULL, LV_FOLIO_ANON);
	struct lv_folio *big = alloc_or_bail(m, 0, 2, NULL, 0);
	struct lv_folio *biganon = alloc_or_bail(m, 0, 3, NULL, LV_FOLIO_ANON);

	is(lv_folio_add_lru(f), 0, "add file folio -> 0");
	ok(!lv_folio_test(f, LV_PG_LRU), "queued folio is not on the LRU yet");
	is(S(LV_NR_INACTIVE_FILE), 0, "inactive file 0 before the drain");
	is(lv_folio_add_lru(f), -EINVAL, "second add while queued -> -EINVAL");
	is(lv_folio_add_lru(a), 0, "add anon folio -> 0");
	lv_lru_add_drain(m);
	ok(lv_folio_test(f, LV_PG_LRU), "after the drain: LV_PG_LRU");
	ok(!lv_folio_test(f, LV_PG_ACTIVE) && !lv_folio_test(f, LV_PG_UNEVICTABLE),
	   "after the drain: inactive, evictable");
	is(S(LV_NR_INACTIVE_FILE), 1, "file folio: inactive file grows by 1 (added once)");
	is(S(LV_NR_INACTIVE_ANON), 1, "anon folio: inactive anon grows by 1");
	is(S(LV_NR_ACTIVE_FILE) + S(LV_NR_ACTIVE_ANON) + S(LV_NR_UNEVICTABLE), 0, "nothing else");
	is(lv_folio_add_lru(f), -EINVAL, "add of an on-LRU folio -> -EINVAL");
	is(lv_folio_add_lru(a), -EINVAL, "add of an on-LRU anon folio -> -EINVAL");
	lv_lru_add_drain(m);
	is(S(LV_NR_INACTIVE_FILE), 1, "the refused adds did not link it twice");

	is(lv_folio_add_lru(big), 0, "add order-2 file folio");
	is(lv_folio_add_lru(biganon), 0, "add order-3 anon folio");
	lv_lru_add_drain(m);
	is(S(LV_NR_INACTIVE_FILE), 1 + 4, "order 2: inactive file grows by 4 pages");
	is(S(LV_NR_INACTIVE_ANON), 1 + 8, "order 3: inactive anon grows by 8 pages");
	is(lv_memcg_stat(lv_memcg_root(m), LV_NR_INACTIVE_FILE), 5,
	   "the root memcg's lruvec holds them");
	ok(lv_folio_test(big, LV_PG_LRU) && lv_folio_test(biganon, LV_PG_LRU),
	   "large folios on the LRU");
	is(lv_folio_ref_count(f), 1, "the LRU holds no reference");

	is(lv_folio_isolate_lru(f), 0, "isolate f");
	is(lv_folio_add_lru(f), -EINVAL, "add of an isolated folio -> -EINVAL");
	is(lv_folio_putback_lru(f), 0, "putback f");
	check_ok(m, "add scenario");
	lv_folio_put(f);
	lv_folio_put(a);
	lv_folio_put(big);
	lv_folio_put(biganon);
	is(S(LV_NR_INACTIVE_FILE) + S(LV_NR_INACTIVE_ANON), 0, "released folios left the lists");
	finish(m, "add machine");
}

static void test_mark_accessed(void)
{
	struct lv_config cfg = lru_config(LV_MAX_BATCH);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_folio *f = alloc_or_bail(m, 0, 0, NULL, 0);
	struct lv_folio *q = alloc_or_bail(m, 0, 1, NULL, LV_FOLIO_ANON);
	struct lv_folio *p = alloc_or_bail(m, 0, 0, NULL, LV_FOLIO_ANON);

	/* On the LRU: the second-chance cycle. */
	lv_folio_add_lru(f);
	lv_lru_add_drain(m);
	lv_folio_mark_accessed(f);
	ok(lv_folio_test(f, LV_PG_REFERENCED), "first access: referenced");
	ok(!lv_folio_test(f, LV_PG_ACTIVE), "first access: not active");
	lv_lru_add_drain(m);
	is(S(LV_NR_INACTIVE_FILE), 1, "first access: still on the inactive list");
	is(S(LV_PGACTIVATE), 0, "first access: no pgactivate");
	lv_folio_mark_accessed(f);
	lv_lru_add_drain(m);
	ok(lv_folio_test(f, LV_PG_ACTIVE), "second access: active");
	ok(!lv_folio_test(f, LV_PG_REFERENCED), "second access: referenced cleared");
	is(S(LV_NR_ACTIVE_FILE), 1, "second access: on the active file list");
	is(S(LV_NR_INACTIVE_FILE), 0, "second access: off the inactive list");
	is(S(LV_PGACTIVATE), 1, "second access: pgactivate counted");
	lv_folio_mark_accessed(f);
	ok(lv_folio_test(f, LV_PG_ACTIVE) && lv_folio_test(f, LV_PG_REFERENCED),
	   "third access: active, referenced");
	lv_folio_mark_accessed(f);
	lv_lru_add_drain(m);
	ok(lv_folio_test(f, LV_PG_ACTIVE) && lv_folio_test(f, LV_PG_REFERENCED),
	   "fourth access: stays active, referenced");
	is(S(LV_PGACTIVATE), 1, "no further pgactivate");
	is(S(LV_NR_ACTIVE_FILE), 1, "still exactly one active page");

	/* Still in this CPU's lru_add batch: activated in place, added straight to active. */
	is(lv_folio_add_lru(p), 0, "queue p (not yet drained)");
	lv_folio_mark_accessed(p);
	lv_folio_mark_accessed(p);
	ok(!lv_folio_test(p, LV_PG_LRU), "p is still queued");
	lv_lru_add_drain(m);
	ok(lv_folio_test(p, LV_PG_LRU) && lv_folio_test(p, LV_PG_ACTIVE),
	   "queued folio accessed twice is added active");
	is(S(LV_NR_ACTIVE_ANON), 1, "on the active anon list directly");
	is(S(LV_NR_INACTIVE_ANON), 0, "never on the inactive anon list");
	is(S(LV_PGACTIVATE), 1, "no pgactivate for a folio activated in its batch");

	/* A large folio: events count pages. */
	is(lv_folio_add_lru(q), 0, "add order-1 anon");
	lv_lru_add_drain(m);
	lv_folio_mark_accessed(q);
	lv_folio_mark_accessed(q);
	lv_lru_add_drain(m);
	is(S(LV_NR_ACTIVE_ANON), 3, "order-1 folio activated: 2 more active pages");
	is(S(LV_PGACTIVATE), 3, "pgactivate counts pages (1 + 2)");
	check_ok(m, "mark_accessed scenario");
	lv_folio_put(f);
	lv_folio_put(p);
	lv_folio_put(q);
	finish(m, "mark_accessed machine");
}

static void test_activate_deactivate(void)
{
	struct lv_config cfg = lru_config(LV_MAX_BATCH);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_folio *f = alloc_or_bail(m, 0, 0, NULL, 0);
	struct lv_folio *g = alloc_or_bail(m, 0, 2, NULL, LV_FOLIO_ANON);
	struct lv_folio *n = alloc_or_bail(m, 0, 0, NULL, 0);

	lv_folio_add_lru(f);
	lv_folio_add_lru(g);
	lv_lru_add_drain(m);
	lv_folio_deactivate(f);
	lv_lru_add_drain(m);
	is(S(LV_PGDEACTIVATE), 0, "deactivate of an inactive folio: no pgdeactivate");
	is(S(LV_NR_INACTIVE_FILE), 1, "deactivate of an inactive folio: still inactive");

	lv_folio_activate(f);
	lv_folio_activate(g);
	lv_lru_add_drain(m);
	ok(lv_folio_test(f, LV_PG_ACTIVE) && lv_folio_test(g, LV_PG_ACTIVE),
	   "activate: both active");
	is(S(LV_NR_ACTIVE_FILE), 1, "activate: active file 1");
	is(S(LV_NR_ACTIVE_ANON), 4, "activate: active anon 4 (order 2)");
	is(S(LV_NR_INACTIVE_FILE) + S(LV_NR_INACTIVE_ANON), 0, "activate: inactive lists empty");
	is(S(LV_PGACTIVATE), 5, "pgactivate += 1 + 4 pages");
	lv_folio_activate(f);
	lv_lru_add_drain(m);
	is(S(LV_PGACTIVATE), 5, "activate of an active folio: no event");

	lv_folio_activate(n);
	lv_lru_add_drain(m);
	ok(!lv_folio_test(n, LV_PG_LRU) && !lv_folio_test(n, LV_PG_ACTIVE),
	   "activate of a folio on no LRU is a no-op");
	is(lv_folio_ref_count(n), 1, "and takes no reference");
	lv_folio_deactivate(n);
	lv_deactivate_file_folio(n);
	lv_folio_mark_lazyfree(n);
	lv_folio_rotate_reclaimable(n);
	lv_lru_add_drain(m);
	ok(!lv_folio_test(n, LV_PG_LRU), "no request puts a never-added folio on an LRU");
	is(lv_folio_ref_count(n), 1, "nor keeps a reference on it");

	lv_folio_deactivate(f);
	lv_folio_deactivate(g);
	lv_lru_add_drain(m);
	ok(!lv_folio_test(f, LV_PG_ACTIVE) && !lv_folio_test(g, LV_PG_ACTIVE),
	   "deactivate: inactive");
	is(S(LV_NR_INACTIVE_FILE), 1, "deactivate: back on inactive file");
	is(S(LV_NR_INACTIVE_ANON), 4, "deactivate: back on inactive anon");
	is(S(LV_NR_ACTIVE_FILE) + S(LV_NR_ACTIVE_ANON), 0, "deactivate: active lists empty");
	is(S(LV_PGDEACTIVATE), 5, "pgdeactivate += 1 + 4 pages");
	ok(lv_folio_test(f, LV_PG_LRU), "still on the LRU after the moves");
	check_ok(m, "activate scenario");
	lv_folio_put(f);
	lv_folio_put(g);
	lv_folio_put(n);
	finish(m, "activate machine");
}

static void test_deactivate_file(void)
{
	struct lv_config cfg = lru_config(LV_MAX_BATCH);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_folio *clean = alloc_or_bail(m, 0, 1, NULL, 0);
	struct lv_folio *cleanact = alloc_or_bail(m, 0, 0, NULL, 0);
	struct lv_folio *dirty = alloc_or_bail(m, 0, 0, NULL, 0);
	struct lv_folio *wb = alloc_or_bail(m, 0, 0, NULL, 0);
	struct lv_folio *mapped = alloc_or_bail(m, 0, 0, NULL, 0);
	struct lv_folio *anon = alloc_or_bail(m, 0, 0, NULL, LV_FOLIO_ANON);
	struct lv_folio *all[] = { clean, cleanact, dirty, wb, mapped };

	for (int i = 0; i < 5; i++)
		lv_folio_add_lru(all[i]);
	lv_lru_add_drain(m);
	lv_folio_activate(cleanact);
	lv_folio_activate(dirty);
	lv_folio_activate(mapped);
	lv_lru_add_drain(m);
	is(S(LV_NR_ACTIVE_FILE), 3, "setup: 3 active pages");
	is(lv_folio_set_state(dirty, LV_PG_DIRTY, true), 0, "mark dirty");
	is(lv_folio_set_state(wb, LV_PG_WRITEBACK, true), 0, "mark writeback");
	is(lv_folio_set_state(mapped, LV_PG_MAPPED, true), 0, "mark mapped");
	lv_folio_mark_accessed(clean);

	lv_deactivate_file_folio(clean);
	lv_lru_add_drain(m);
	ok(lv_folio_test(clean, LV_PG_LRU) && !lv_folio_test(clean, LV_PG_ACTIVE),
	   "clean inactive: stays inactive");
	ok(!lv_folio_test(clean, LV_PG_REFERENCED), "clean: referenced cleared");
	ok(!lv_folio_test(clean, LV_PG_RECLAIM), "clean: no PG_reclaim");
	is(S(LV_PGROTATED), 2, "clean: moved to the tail, pgrotated += 2 pages");
	is(S(LV_PGDEACTIVATE), 0, "clean inactive: no pgdeactivate");

	lv_deactivate_file_folio(cleanact);
	lv_lru_add_drain(m);
	ok(!lv_folio_test(cleanact, LV_PG_ACTIVE), "clean active: deactivated");
	is(S(LV_PGROTATED), 3, "clean active: pgrotated");
	is(S(LV_PGDEACTIVATE), 1, "clean active: pgdeactivate");

	lv_deactivate_file_folio(dirty);
	lv_deactivate_file_folio(wb);
	lv_lru_add_drain(m);
	ok(lv_folio_test(dirty, LV_PG_RECLAIM), "dirty: PG_reclaim set");
	ok(!lv_folio_test(dirty, LV_PG_ACTIVE) && lv_folio_test(dirty, LV_PG_LRU),
	   "dirty active: moved to the inactive list");
	ok(lv_folio_test(wb, LV_PG_RECLAIM), "writeback: PG_reclaim set");
	is(S(LV_PGROTATED), 3, "dirty/writeback: not rotated to the tail");
	is(S(LV_PGDEACTIVATE), 2, "dirty active: pgdeactivate");

	lv_deactivate_file_folio(mapped);
	lv_lru_add_drain(m);
	ok(lv_folio_test(mapped, LV_PG_ACTIVE) && lv_folio_test(mapped, LV_PG_LRU),
	   "mapped: untouched (still active)");
	ok(!lv_folio_test(mapped, LV_PG_RECLAIM), "mapped: no PG_reclaim");
	is(S(LV_PGDEACTIVATE), 2, "mapped: no pgdeactivate");
	is(S(LV_PGROTATED), 3, "mapped: no pgrotated");
	is(S(LV_NR_ACTIVE_FILE), 1, "only the mapped folio is active");
	is(S(LV_NR_INACTIVE_FILE), 2 + 1 + 1 + 1, "the rest is inactive file");

	/* An anon folio is not page cache: it stays where it is. */
	lv_folio_add_lru(anon);
	lv_lru_add_drain(m);
	lv_folio_activate(anon);
	lv_lru_add_drain(m);
	lv_deactivate_file_folio(anon);
	lv_lru_add_drain(m);
	ok(lv_folio_test(anon, LV_PG_ACTIVE) && lv_folio_test(anon, LV_PG_SWAPBACKED),
	   "anon: untouched (still active anon)");
	is(S(LV_PGDEACTIVATE), 2, "anon: no pgdeactivate");
	is(S(LV_NR_ACTIVE_ANON), 1, "anon: still on the active anon list");

	/* Writeback ends on the PG_reclaim folio: rotate it. */
	is(lv_folio_set_state(wb, LV_PG_WRITEBACK, false), 0, "writeback ends");
	ok(!lv_folio_test(wb, LV_PG_WRITEBACK), "writeback flag cleared");
	lv_folio_rotate_reclaimable(wb);
	lv_lru_add_drain(m);
	is(S(LV_PGROTATED), 4, "rotate_reclaimable: pgrotated");
	ok(lv_folio_test(wb, LV_PG_LRU) && !lv_folio_test(wb, LV_PG_ACTIVE),
	   "rotated: inactive, on LRU");
	lv_folio_rotate_reclaimable(mapped);
	lv_lru_add_drain(m);
	is(S(LV_PGROTATED), 5, "rotate of an active folio: pgrotated");
	ok(!lv_folio_test(mapped, LV_PG_ACTIVE), "rotate: to the tail of the inactive list");
	is(S(LV_NR_ACTIVE_FILE), 0, "active file list empty");
	is(S(LV_NR_INACTIVE_FILE), 6, "all 6 pages on the inactive file list");
	check_ok(m, "deactivate_file scenario");
	for (int i = 0; i < 5; i++)
		lv_folio_put(all[i]);
	lv_folio_put(anon);
	finish(m, "deactivate_file machine");
}

static void test_lazyfree(void)
{
	struct lv_config cfg = lru_config(LV_MAX_BATCH);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_folio *a = alloc_or_bail(m, 0, 0, NULL, LV_FOLIO_ANON);
	struct lv_folio *act = alloc_or_bail(m, 0, 2, NULL, LV_FOLIO_ANON);
	struct lv_folio *file = alloc_or_bail(m, 0, 0, NULL, 0);
	struct lv_folio *off = alloc_or_bail(m, 0, 0, NULL, LV_FOLIO_ANON);

	lv_folio_add_lru(a);
	lv_folio_add_lru(act);
	lv_folio_add_lru(file);
	lv_lru_add_drain(m);
	lv_folio_activate(act);
	lv_lru_add_drain(m);
	lv_folio_mark_accessed(a);

	lv_folio_mark_lazyfree(a);
	lv_folio_mark_lazyfree(act);
	lv_folio_mark_lazyfree(file);
	lv_folio_mark_lazyfree(off);
	lv_lru_add_drain(m);
	ok(!lv_folio_test(a, LV_PG_SWAPBACKED), "lazyfree: PG_swapbacked cleared");
	ok(lv_folio_test(a, LV_PG_LRU) && !lv_folio_test(a, LV_PG_ACTIVE),
	   "lazyfree: inactive, on LRU");
	ok(!lv_folio_test(a, LV_PG_REFERENCED), "lazyfree: referenced cleared");
	ok(!lv_folio_test(act, LV_PG_SWAPBACKED) && !lv_folio_test(act, LV_PG_ACTIVE),
	   "lazyfree of an active anon folio: inactive, not swapbacked");
	is(S(LV_NR_INACTIVE_FILE), 1 + 4 + 1,
	   "lazyfree: anon folios moved to the inactive file list");
	is(S(LV_NR_INACTIVE_ANON) + S(LV_NR_ACTIVE_ANON), 0, "anon lists empty");
	is(S(LV_PGLAZYFREE), 1 + 4, "pglazyfree counts the anon pages only");
	ok(lv_folio_test(file, LV_PG_LRU) && !lv_folio_test(file, LV_PG_SWAPBACKED),
	   "file folio: untouched");
	ok(lv_folio_test(off, LV_PG_SWAPBACKED) && !lv_folio_test(off, LV_PG_LRU),
	   "anon folio on no LRU: untouched");
	lv_folio_mark_lazyfree(a);
	lv_lru_add_drain(m);
	is(S(LV_PGLAZYFREE), 5, "second lazyfree (now file): no-op");
	is(lv_memcg_stat(lv_memcg_root(m), LV_PGLAZYFREE), 5,
	   "pglazyfree also counted on the memcg");
	check_ok(m, "lazyfree scenario");
	lv_folio_put(a);
	lv_folio_put(act);
	lv_folio_put(file);
	lv_folio_put(off);
	finish(m, "lazyfree machine");
}

static void test_mlocked(void)
{
	struct lv_config cfg = lru_config(LV_MAX_BATCH);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_folio *u = alloc_or_bail(m, 0, 1, NULL, LV_FOLIO_ANON);
	struct lv_folio *v = alloc_or_bail(m, 0, 0, NULL, 0);

	is(lv_folio_set_state(u, LV_PG_MLOCKED, true), 0, "mlock u before add");
	is(lv_folio_set_state(v, LV_PG_MLOCKED, true), 0, "mlock v before add");
	ok(lv_folio_test(u, LV_PG_MLOCKED), "PG_mlocked reads back");
	lv_folio_add_lru(u);
	lv_folio_add_lru(v);
	is(lv_folio_set_state(v, LV_PG_MLOCKED, false), -EBUSY, "munlock while queued -> -EBUSY");
	/* v is accessed twice while queued: it must still end up unevictable, not active. */
	lv_folio_mark_accessed(v);
	lv_folio_mark_accessed(v);
	lv_lru_add_drain(m);
	ok(lv_folio_test(u, LV_PG_UNEVICTABLE) && lv_folio_test(u, LV_PG_LRU),
	   "mlocked folio: unevictable, PG_lru");
	ok(lv_folio_test(v, LV_PG_UNEVICTABLE) && !lv_folio_test(v, LV_PG_ACTIVE),
	   "mlocked folio activated in its batch: unevictable, not active");
	is(S(LV_NR_UNEVICTABLE), 3, "LV_NR_UNEVICTABLE counts 2 + 1 pages");
	is(S(LV_NR_INACTIVE_ANON) + S(LV_NR_INACTIVE_FILE) + S(LV_NR_ACTIVE_ANON) +
		   S(LV_NR_ACTIVE_FILE),
	   0, "not on any evictable list");

	lv_folio_activate(u);
	lv_folio_mark_accessed(u);
	lv_folio_mark_accessed(u);
	lv_folio_mark_accessed(u);
	lv_folio_deactivate(u);
	lv_deactivate_file_folio(v);
	lv_folio_mark_lazyfree(u);
	lv_folio_rotate_reclaimable(v);
	lv_lru_add_drain(m);
	ok(!lv_folio_test(u, LV_PG_ACTIVE), "unevictable folio cannot be activated");
	ok(lv_folio_test(u, LV_PG_SWAPBACKED), "unevictable folio is not lazyfreed");
	is(S(LV_NR_UNEVICTABLE), 3, "still counted unevictable");
	is(S(LV_PGACTIVATE) + S(LV_PGDEACTIVATE) + S(LV_PGLAZYFREE) + S(LV_PGROTATED), 0,
	   "no events for unevictable folios");
	is(lv_folio_set_state(u, LV_PG_MLOCKED, false), -EBUSY, "munlock on the LRU -> -EBUSY");
	ok(lv_folio_test(u, LV_PG_MLOCKED), "still mlocked after the refusal");
	check_ok(m, "mlocked on the LRU");

	/* Munlock through isolation: the folio is rescued to an evictable list. */
	is(lv_folio_isolate_lru(u), 0, "isolate the unevictable folio");
	is(S(LV_NR_UNEVICTABLE), 1, "isolated: uncounted");
	is(lv_folio_set_state(u, LV_PG_MLOCKED, false), 0, "munlock while isolated -> 0");
	is(lv_folio_putback_lru(u), 0, "putback");
	lv_lru_add_drain(m);
	ok(!lv_folio_test(u, LV_PG_UNEVICTABLE) && lv_folio_test(u, LV_PG_LRU),
	   "rescued: evictable, on LRU");
	is(S(LV_NR_INACTIVE_ANON), 2, "rescued to the inactive anon list");
	is(S(LV_NR_UNEVICTABLE), 1, "only v is unevictable");
	check_ok(m, "after munlock");
	lv_folio_put(u);
	lv_folio_put(v); /* release of an unevictable folio */
	is(S(LV_NR_UNEVICTABLE), 0, "released unevictable folio uncounted");
	finish(m, "mlock machine");
}

static void test_set_state(void)
{
	struct lv_config cfg = lru_config(LV_MAX_BATCH);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_folio *f = alloc_or_bail(m, 0, 0, NULL, LV_FOLIO_ANON);
	static const enum lv_folio_flag owned[] = {
		LV_PG_LRU,	   LV_PG_ACTIVE,     LV_PG_REFERENCED, LV_PG_WORKINGSET,
		LV_PG_UNEVICTABLE, LV_PG_SWAPBACKED, LV_PG_RECLAIM,    LV_PG_ISOLATED,
	};
	static const enum lv_folio_flag caller[] = { LV_PG_DIRTY, LV_PG_WRITEBACK, LV_PG_MAPPED,
						     LV_PG_MLOCKED };

	for (size_t i = 0; i < sizeof(owned) / sizeof(owned[0]); i++) {
		bool before = lv_folio_test(f, owned[i]);

		is(lv_folio_set_state(f, owned[i], !before), -EINVAL,
		   "set_state LRU-owned flag %d -> -EINVAL", (int)owned[i]);
		is(lv_folio_test(f, owned[i]), before, "flag %d unchanged", (int)owned[i]);
	}
	is(lv_folio_set_state(f, LV_NR_FOLIO_FLAGS, true), -EINVAL,
	   "set_state LV_NR_FOLIO_FLAGS -> -EINVAL");
	is(lv_folio_set_state(f, (enum lv_folio_flag) - 1, true), -EINVAL,
	   "set_state -1 -> -EINVAL");
	ok(!lv_folio_test(f, LV_NR_FOLIO_FLAGS), "lv_folio_test of an out-of-range flag is false");
	for (size_t i = 0; i < sizeof(caller) / sizeof(caller[0]); i++) {
		is(lv_folio_set_state(f, caller[i], true), 0, "set caller flag %d", (int)caller[i]);
		ok(lv_folio_test(f, caller[i]), "flag %d set", (int)caller[i]);
		is(lv_folio_set_state(f, caller[i], false), 0, "clear caller flag %d",
		   (int)caller[i]);
		ok(!lv_folio_test(f, caller[i]), "flag %d clear", (int)caller[i]);
	}
	lv_folio_add_lru(f);
	is(lv_folio_set_state(f, LV_PG_MLOCKED, true), -EBUSY, "mlock a queued folio -> -EBUSY");
	lv_lru_add_drain(m);
	is(lv_folio_set_state(f, LV_PG_MLOCKED, true), -EBUSY, "mlock an LRU folio -> -EBUSY");
	ok(!lv_folio_test(f, LV_PG_MLOCKED), "not mlocked after the refusals");
	is(lv_folio_set_state(f, LV_PG_DIRTY, true), 0, "dirty may change on the LRU");
	is(lv_folio_set_state(f, LV_PG_MAPPED, true), 0, "mapped may change on the LRU");
	is(lv_folio_set_state(f, LV_PG_DIRTY, false), 0, "clean again");
	check_ok(m, "set_state scenario");
	lv_folio_put(f);
	finish(m, "set_state machine");
}

/* Batch sizes, lv_lru_add_drain and lv_lru_cache_disable/enable. */
static void test_batching(void)
{
	struct lv_config cfg = lru_config(1);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_folio *fs[LV_MAX_BATCH + 1];
	int on = 0;

	fs[0] = alloc_or_bail(m, 0, 0, NULL, 0);
	is(lv_folio_add_lru(fs[0]), 0, "batch 1: add");
	ok(lv_folio_test(fs[0], LV_PG_LRU), "batch 1: on the LRU at once");
	is(S(LV_NR_INACTIVE_FILE), 1, "batch 1: counted at once");
	lv_folio_activate(fs[0]);
	ok(lv_folio_test(fs[0], LV_PG_ACTIVE) && S(LV_NR_ACTIVE_FILE) == 1,
	   "batch 1: activate applied at once");
	lv_folio_put(fs[0]);
	finish(m, "batch-1 machine");

	cfg = lru_config(LV_MAX_BATCH);
	m = new_machine(&cfg);
	for (int i = 0; i < LV_MAX_BATCH; i++)
		fs[i] = alloc_or_bail(m, 0, 0, NULL, 0);
	is(lv_folio_add_lru(fs[0]), 0, "batch 31: add one");
	ok(!lv_folio_test(fs[0], LV_PG_LRU), "batch 31: a single add is not on the LRU");
	is(S(LV_NR_INACTIVE_FILE), 0, "batch 31: not counted");
	for (int i = 1; i < LV_MAX_BATCH - 1; i++)
		lv_folio_add_lru(fs[i]);
	for (int i = 0; i < LV_MAX_BATCH - 1; i++)
		on += lv_folio_test(fs[i], LV_PG_LRU);
	is(on, 0, "batch 31: 30 adds are all still queued");
	lv_folio_add_lru(fs[LV_MAX_BATCH - 1]);
	on = 0;
	for (int i = 0; i < LV_MAX_BATCH; i++)
		on += lv_folio_test(fs[i], LV_PG_LRU);
	is(on, LV_MAX_BATCH, "batch 31: the 31st add flushes the whole batch");
	is(S(LV_NR_INACTIVE_FILE), LV_MAX_BATCH, "batch 31: 31 pages counted");

	/* Requests are batched too. */
	lv_folio_activate(fs[0]);
	ok(!lv_folio_test(fs[0], LV_PG_ACTIVE), "batch 31: a queued activate is not applied yet");
	lv_lru_add_drain(m);
	ok(lv_folio_test(fs[0], LV_PG_ACTIVE), "lv_lru_add_drain applies it");

	/* Disable drains everything already queued. */
	fs[LV_MAX_BATCH] = alloc_or_bail(m, 0, 0, NULL, LV_FOLIO_ANON);
	lv_folio_add_lru(fs[LV_MAX_BATCH]);
	lv_folio_activate(fs[1]);
	lv_lru_cache_disable(m);
	ok(lv_folio_test(fs[LV_MAX_BATCH], LV_PG_LRU),
	   "disable: queued add applied when it returns");
	ok(lv_folio_test(fs[1], LV_PG_ACTIVE), "disable: queued activate applied when it returns");
	lv_folio_activate(fs[2]);
	ok(lv_folio_test(fs[2], LV_PG_ACTIVE), "disabled: activate applied at once");
	lv_folio_deactivate(fs[2]);
	ok(!lv_folio_test(fs[2], LV_PG_ACTIVE), "disabled: deactivate applied at once");
	check_ok(m, "batching scenario");
	lv_lru_cache_enable(m);
	for (int i = 0; i <= LV_MAX_BATCH; i++)
		lv_folio_put(fs[i]);
	finish(m, "batch-31 machine");
}

static void disable_nesting(enum lv_disable_mode mode, const char *name)
{
	struct lv_config cfg = lru_config(LV_MAX_BATCH);
	struct lv_machine *m;
	struct lv_folio *f[6];

	cfg.disable_mode = mode;
	m = new_machine(&cfg);
	for (int i = 0; i < 6; i++)
		f[i] = alloc_or_bail(m, 0, 0, NULL, 0);

	lv_lru_cache_enable(m); /* unmatched: must be harmless */
	lv_folio_add_lru(f[0]);
	ok(!lv_folio_test(f[0], LV_PG_LRU), "%s: after an unmatched enable, adds are still batched",
	   name);
	lv_lru_cache_disable(m);
	ok(lv_folio_test(f[0], LV_PG_LRU), "%s: disable drains the queued add", name);
	lv_folio_add_lru(f[1]);
	ok(lv_folio_test(f[1], LV_PG_LRU),
	   "%s: disabled (the unmatched enable did not go negative)", name);
	lv_lru_cache_disable(m);
	lv_lru_cache_enable(m);
	lv_folio_add_lru(f[2]);
	ok(lv_folio_test(f[2], LV_PG_LRU), "%s: nested: still disabled after one enable of two",
	   name);
	lv_lru_cache_enable(m);
	lv_folio_add_lru(f[3]);
	ok(!lv_folio_test(f[3], LV_PG_LRU), "%s: batching resumes after the matching enable", name);
	lv_lru_cache_enable(m);
	lv_lru_cache_enable(m);
	lv_lru_cache_disable(m);
	ok(lv_folio_test(f[3], LV_PG_LRU), "%s: disable after extra enables drains", name);
	lv_folio_add_lru(f[4]);
	ok(lv_folio_test(f[4], LV_PG_LRU), "%s: and disables (count never negative)", name);
	lv_lru_cache_enable(m);
	lv_folio_add_lru(f[5]);
	ok(!lv_folio_test(f[5], LV_PG_LRU), "%s: enabled again", name);
	lv_lru_add_drain_all(m);
	is(S(LV_NR_INACTIVE_FILE), 6, "%s: all six on the LRU", name);
	check_ok(m, name);
	lv_folios_put(f, 6);
	finish(m, name);
}

static void test_drain_all_stats(void)
{
	struct lv_config cfg = lru_config(LV_MAX_BATCH);
	struct lv_machine *m;
	uint64_t c0, s0, c1, s1;
	struct lv_folio *f;

	cfg.nr_cpu_slots = 4;
	m = new_machine(&cfg);
	lv_drain_all_stats(m, &c0, &s0);
	is(c0, 0, "new machine: no drain_all calls");
	is(s0, 0, "new machine: no sweeps");
	f = alloc_or_bail(m, 0, 0, NULL, 0);
	lv_folio_add_lru(f);
	lv_lru_add_drain_all(m);
	ok(lv_folio_test(f, LV_PG_LRU), "drain_all puts the queued folio on the LRU");
	for (int i = 0; i < 9; i++)
		lv_lru_add_drain_all(m);
	lv_drain_all_stats(m, &c1, &s1);
	is(c1, 10, "ten calls counted");
	ok(s1 <= c1, "sweeps (%llu) <= calls", (unsigned long long)s1);
	is(s1, 10, "uncontended calls each sweep");
	lv_drain_all_stats(m, NULL, &s1);
	lv_drain_all_stats(m, &c1, NULL);
	is(c1, 10, "NULL outputs are allowed");
	lv_lru_add_drain(m);
	lv_drain_all_stats(m, &c1, &s1);
	is(c1, 10, "lv_lru_add_drain is not a drain_all call");
	lv_folio_put(f);
	finish(m, "drain stats machine");

	/* lv_lru_cache_disable is not lv_lru_add_drain_all. */
	for (int mode = LV_DISABLE_SWEEP; mode <= LV_DISABLE_RCU_EXPEDITED; mode++) {
		cfg = lru_config(LV_MAX_BATCH);
		cfg.disable_mode = (enum lv_disable_mode)mode;
		m = new_machine(&cfg);
		lv_lru_cache_disable(m);
		lv_lru_cache_enable(m);
		lv_drain_all_stats(m, &c1, &s1);
		is(c1, 0, "%s-mode disable: lv_drain_all_stats calls unchanged",
		   mode == LV_DISABLE_SWEEP ? "sweep" : "rcu");
		finish(m, "disable stats machine");
	}
}

/* lv_lru_cache_disable() times itself; lv_latency_percentile() reads the histogram. */
static void test_disable_latency(void)
{
	struct lv_config cfg = lru_config(LV_MAX_BATCH);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_latency lat, made = { 0 };
	uint64_t p50, p99;

	lv_lru_cache_disable_latency(m, &lat);
	is(lat.count, 0, "latency: a new machine has no samples");
	is(lv_latency_percentile(&lat, 50), 0, "latency: percentile of nothing is 0");
	for (int i = 0; i < 10; i++) {
		lv_lru_cache_disable(m);
		lv_lru_cache_enable(m);
	}
	lv_lru_cache_disable_latency(m, &lat);
	is(lat.count, 10, "latency: one sample per disable");
	p50 = lv_latency_percentile(&lat, 50);
	p99 = lv_latency_percentile(&lat, 99);
	ok(p50 > 0 && p50 <= p99 && p99 <= lat.max_ns && lat.total_ns >= lat.max_ns,
	   "latency: 0 < p50 %llu <= p99 %llu <= max %llu <= total", (unsigned long long)p50,
	   (unsigned long long)p99, (unsigned long long)lat.max_ns);
	finish(m, "disable latency machine");

	/* 90 samples of 5 ns (bucket 5), 10 of ~1000 ns: [1000, 1024) is bucket 8 * 7 + 7. */
	made.buckets[5] = 90;
	made.buckets[63] = 10;
	made.count = 100;
	made.max_ns = 1010;
	is(lv_latency_percentile(&made, 50), 6, "latency: p50 is the bound of the 5 ns bucket");
	is(lv_latency_percentile(&made, 89.9), 6, "latency: p89.9 is still in it");
	is(lv_latency_percentile(&made, 95), 1010, "latency: p95 capped by the maximum");
	is(lv_latency_percentile(&made, 100), 1010, "latency: p100 is the maximum");
	made.max_ns = 5000;
	is(lv_latency_percentile(&made, 95), 1024, "latency: p95 is the bucket's upper bound");
	is(lv_latency_percentile(&made, -5), 6, "latency: below p0 counts as p0, the first bucket");
	is(lv_latency_percentile(&made, __builtin_nan("")), 6, "latency: NaN counts as p0");
}

/* The release path: last references on LRU, queued and isolated folios. */
static void test_release(void)
{
	struct lv_config cfg = lru_config(LV_MAX_BATCH);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *mg = lv_memcg_create(m, NULL, "rel");
	struct lv_folio *f = alloc_or_bail(m, 0, 2, mg, 0);
	struct lv_folio *a = alloc_or_bail(m, 0, 0, mg, LV_FOLIO_ANON);
	struct lv_folio *q = alloc_or_bail(m, 0, 0, mg, 0);

	lv_folio_add_lru(f);
	lv_folio_add_lru(a);
	lv_lru_add_drain(m);
	lv_folio_activate(a);
	lv_lru_add_drain(m);
	is(S(LV_NR_INACTIVE_FILE), 4, "setup: 4 inactive file pages");
	is(S(LV_NR_ACTIVE_ANON), 1, "setup: 1 active anon page");
	lv_folio_get(f);
	lv_folio_put(f);
	is(S(LV_NR_INACTIVE_FILE), 4, "a non-final put leaves the folio linked");
	lv_folio_put(f);
	is(S(LV_NR_INACTIVE_FILE), 0, "the final put of an LRU folio unlinks it");
	is(lv_memcg_usage(mg), 2, "and uncharges its 4 pages");
	lv_folio_put(a);
	is(S(LV_NR_ACTIVE_ANON), 0, "final put of an active folio unlinks it");
	is(S(LV_NR_FREE), SMALL_PAGES - 1, "free pages restored (one left allocated)");

	/* The caller's last reference goes while the folio is queued: the drain frees it. */
	lv_folio_add_lru(q);
	lv_folio_put(q);
	is(lv_memcg_usage(mg), 1, "queued folio still held by the batch");
	lv_lru_add_drain(m);
	is(lv_memcg_usage(mg), 0, "the drain dropped the last reference");
	is(S(LV_NR_INACTIVE_FILE), 0, "and it is not left on a list");
	is(S(LV_NR_FREE), SMALL_PAGES, "every page free");

	/* The caller's last reference goes while a move request is queued. */
	q = alloc_or_bail(m, 0, 1, mg, 0);
	lv_folio_add_lru(q);
	lv_lru_add_drain(m);
	f = alloc_or_bail(m, 0, 0, mg, 0);
	lv_folio_add_lru(f);
	lv_lru_add_drain(m);
	lv_folio_activate(f);
	lv_folio_put(f);
	is(lv_memcg_usage(mg), 2 + 1, "folio with a queued activate is held by the batch");
	lv_lru_add_drain(m);
	is(lv_memcg_usage(mg), 2, "the drain activated it and dropped the last reference");
	is(S(LV_NR_ACTIVE_FILE) + S(LV_NR_INACTIVE_FILE), 2, "only q (2 pages) remains linked");
	lv_folio_put(q);
	is(lv_memcg_remove(mg), 0, "remove rel");
	finish(m, "release machine");
}

/* lv_folios_put over thousands of folios on two nodes and three memcgs. */
static void test_folios_put_many(void)
{
	struct lv_config cfg = lru_config(LV_MAX_BATCH);
	struct lv_machine *m;
	struct lv_memcg *mg[3];
	struct lv_folio **fs;
	enum { N = 6000 };
	int survivors = 0;

	cfg.nr_nodes = 2;
	m = new_machine(&cfg);
	mg[0] = lv_memcg_root(m);
	mg[1] = lv_memcg_create(m, NULL, "m1");
	mg[2] = lv_memcg_create(m, NULL, "m2");
	fs = calloc(N, sizeof(*fs));
	for (int i = 0; i < N; i++) {
		/* Runs of the same lruvec, then switches. */
		fs[i] = alloc_or_bail(m, (i / 7) % 2, 0, mg[(i / 3) % 3],
				      i % 5 ? 0 : LV_FOLIO_ANON);
		if (i % 4)
			lv_folio_add_lru(fs[i]);
		if (i % 10 == 0) {
			lv_folio_get(fs[i]); /* survives the bulk put */
			survivors++;
		}
	}
	lv_lru_add_drain_all(m);
	is(lv_node_stat(m, 0, LV_NR_CHARGED) + lv_node_stat(m, 1, LV_NR_CHARGED), N,
	   "6000 allocated");
	lv_folios_put(fs, N);
	is(lv_node_stat(m, 0, LV_NR_CHARGED) + lv_node_stat(m, 1, LV_NR_CHARGED), survivors,
	   "lv_folios_put freed all but the %d extra-referenced folios", survivors);
	is(lv_memcg_usage(mg[0]), survivors, "root usage (everything) = survivors");
	{
		int in1 = 0, in2 = 0;

		for (int i = 0; i < N; i += 10) {
			in1 += (i / 3) % 3 == 1;
			in2 += (i / 3) % 3 == 2;
		}
		is(lv_memcg_usage(mg[1]), in1, "m1 uncharged down to its survivors");
		is(lv_memcg_usage(mg[2]), in2, "m2 uncharged down to its survivors");
	}
	check_ok(m, "after bulk put");
	{
		uint64_t linked = 0;

		for (int nid = 0; nid < 2; nid++)
			linked += lv_node_stat(m, nid, LV_NR_INACTIVE_FILE) +
				  lv_node_stat(m, nid, LV_NR_INACTIVE_ANON);
		int expect = 0;

		for (int i = 0; i < N; i += 10)
			expect += (i % 4) != 0;
		is(linked, expect, "only the surviving LRU folios are still linked");
	}
	for (int i = 0, k = 0; i < N; i += 10)
		fs[k++] = fs[i];
	lv_folios_put(fs, (size_t)survivors);
	is(lv_node_stat(m, 0, LV_NR_FREE) + lv_node_stat(m, 1, LV_NR_FREE), 2 * SMALL_PAGES,
	   "all pages free after the survivors' put");
	free(fs);
	is(lv_memcg_remove(mg[1]), 0, "remove m1");
	is(lv_memcg_remove(mg[2]), 0, "remove m2");
	finish(m, "bulk put machine");
}

int main(void)
{
	test_add();
	test_mark_accessed();
	test_activate_deactivate();
	test_deactivate_file();
	test_lazyfree();
	test_mlocked();
	test_set_state();
	test_batching();
	disable_nesting(LV_DISABLE_SWEEP, "sweep disable");
	disable_nesting(LV_DISABLE_RCU, "rcu disable");
	disable_nesting(LV_DISABLE_RCU_EXPEDITED, "rcu-expedited disable");
	test_drain_all_stats();
	test_disable_latency();
	test_release();
	test_folios_put_many();
	return done_testing();
}
