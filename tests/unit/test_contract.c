// SPDX-License-Identifier: LGPL-2.1-or-later
/* Promises of lruvec.h that no other test pins down: lv_folio_add_lru() on a large folio
 * (on its list when the call returns, with what was queued before it) and on a folio in each
 * state the LRU may refuse. Public API only. */
#include "lvtest.h"

static uint64_t file_pages(struct lv_machine *m)
{
	return nstat(m, LV_NR_INACTIVE_FILE) + nstat(m, LV_NR_ACTIVE_FILE);
}

static void test_add_large(void)
{
	struct lv_config cfg = small_config(); /* one CPU slot: "still queued" is exact */
	struct lv_machine *m = new_machine(&cfg);
	struct lv_folio *small = alloc_or_bail(m, 0, 0, NULL, 0);
	struct lv_folio *large = alloc_or_bail(m, 0, 2, NULL, 0);

	is(lv_folio_add_lru(small), 0, "add: a small folio -> 0");
	ok(!lv_folio_test(small, LV_PG_LRU), "add: ... queued, not on a list yet");
	is(file_pages(m), 0, "add: ... no list counts it");
	is(lv_folio_add_lru(large), 0, "add: a large folio -> 0");
	ok(lv_folio_test(large, LV_PG_LRU), "add: ... on its list when the call returns");
	ok(lv_folio_test(small, LV_PG_LRU), "add: ... and so is the folio queued before it");
	is(file_pages(m), 5, "add: both counted (1 + 4 pages) without a drain");
	is(lv_folio_ref_count(large), 1, "add: no batch holds the large folio");
	lv_folio_put(small);
	lv_folio_put(large);
	finish(m, "add large");
}

static void test_add_refused(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_folio *f = alloc_or_bail(m, 0, 0, NULL, LV_FOLIO_ANON);

	is(lv_folio_add_lru(f), 0, "refused: first add -> 0");
	is(lv_folio_add_lru(f), -EINVAL, "refused: a second add while queued -> -EINVAL");
	lv_lru_add_drain_all(m);
	is(lv_folio_add_lru(f), -EINVAL, "refused: an add while on a list -> -EINVAL");
	is(lv_folio_isolate_lru(f), 0, "refused: isolated");
	is(lv_folio_add_lru(f), -EINVAL, "refused: an add of an isolated folio -> -EINVAL");
	ok(lv_folio_test(f, LV_PG_ISOLATED) && !lv_folio_test(f, LV_PG_LRU),
	   "refused: ... which stays isolated, off the LRU");
	is(nstat(m, LV_NR_ISOLATED), 1, "refused: ... and counted as isolated");
	is(lv_folio_putback_lru(f), 0, "refused: put back instead -> 0");
	is(lv_folio_add_lru(f), -EINVAL, "refused: an add after the putback -> -EINVAL");
	lv_lru_add_drain_all(m);
	ok(lv_folio_test(f, LV_PG_LRU), "refused: on its list once, after the drain");
	is(nstat(m, LV_NR_INACTIVE_ANON), 1, "refused: counted once");
	lv_folio_put(f);
	finish(m, "add refused");
}

int main(void)
{
	test_add_large();
	test_add_refused();
	return done_testing();
}
