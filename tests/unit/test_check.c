// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * lv_check() must be able to fail: every other test relies on "lv_check passes" meaning
 * something. A healthy machine cannot be corrupted through the public API, so this one test
 * flips folio flag bits and counters with the internal helpers (src/ headers, which unit tests use
 * only where no public call can set the scene), checks that lv_check reports -EUCLEAN with a
 * description, and restores them.
 */
#include "internal.h"

#include "lvtest.h"

static int check_quiet(struct lv_machine *m, char **report)
{
	size_t len = 0;
	FILE *f = open_memstream(report, &len);
	int rc = lv_check(m, f);

	fclose(f);
	return rc;
}

/*
 * Swap slots are counted per memcg of the tree and summed up it: a grandchild's slots are its
 * parent's too, and a usage one off at any level is reported. A few other memcgs around the
 * swapping one make the per-id lookup find the right entry.
 */
static void check_swap_usage_sums(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *a = new_memcg(m, NULL, "a"), *x = new_memcg(m, NULL, "x");
	struct lv_memcg *b = new_memcg(m, a, "b"), *y = new_memcg(m, a, "y");
	struct lv_mm *mm = new_mm(m, b, 0);
	const size_t len = 64 * LV_PAGE_SIZE;
	uint64_t r = map_or_bail(mm, len);
	char *report = NULL;

	ok(lv_swap_on(m, -1, 2u << 20, 0) >= 0, "swap: an in-memory device");
	is(write_pat(mm, r, len, 3), 0, "swap: write 64 pages in a/b");
	is(lv_madvise(mm, r, len, LV_MADV_PAGEOUT), 0, "swap: page them out");
	is(lv_memcg_swap_usage(b), 64, "swap: a/b holds 64 slots");
	is(lv_memcg_swap_usage(a), 64, "swap: so does a");
	is(check_quiet(m, &report), 0, "swap: lv_check sums the slots up the tree");
	free(report);

	__atomic_fetch_add(&a->swap_usage, 1, __ATOMIC_RELAXED);
	is(check_quiet(m, &report), -EUCLEAN, "swap: a's usage one over: -EUCLEAN");
	ok(strstr(report, "memcg 'a': swap usage 65, slots charged 64") != NULL,
	   "swap: the parent's sum is reported");
	free(report);
	__atomic_fetch_sub(&a->swap_usage, 1, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&b->swap_usage, 1, __ATOMIC_RELAXED);
	is(check_quiet(m, &report), -EUCLEAN, "swap: a/b's usage one under: -EUCLEAN");
	ok(strstr(report, "memcg 'b': swap usage 63, slots charged 64") != NULL,
	   "swap: the child's own slots are reported");
	free(report);
	__atomic_fetch_add(&b->swap_usage, 1, __ATOMIC_RELAXED);
	is(check_quiet(m, &report), 0, "swap: restored: lv_check -> 0");
	free(report);
	is(lv_memcg_remove(x), 0, "swap: x removed");
	is(lv_memcg_remove(y), 0, "swap: a/y removed");
	lv_mm_destroy(mm);
	is(lv_memcg_remove(b), 0, "swap: a/b removed");
	is(lv_memcg_remove(a), 0, "swap: a removed");
	finish(m, "swap check machine");
}

int main(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_folio *f = alloc_or_bail(m, 0, 0, NULL, 0);
	char *report = NULL;

	lv_folio_add_lru(f);
	lv_lru_add_drain_all(m);
	is(check_quiet(m, &report), 0, "healthy machine: lv_check -> 0");
	is(strlen(report), 0, "healthy machine: empty report");
	free(report);

	/* On the inactive file list, but its flags now select the active one. */
	folio_set(f, PG_active);
	is(check_quiet(m, &report), -EUCLEAN, "folio on the wrong list: lv_check -> -EUCLEAN");
	ok(strstr(report, "lv_check") != NULL, "the violation is described");
	diag("report: %.*s", (int)strcspn(report, "\n"), report);
	free(report);
	folio_clear(f, PG_active);
	is(check_quiet(m, &report), 0, "restored: lv_check -> 0");
	free(report);

	/* Linked without PG_lru. */
	folio_clear(f, PG_lru);
	is(check_quiet(m, &report), -EUCLEAN, "linked folio without PG_lru: lv_check -> -EUCLEAN");
	ok(strlen(report) > 0, "the violation is described");
	free(report);
	folio_set(f, PG_lru);

	is(lv_bug_count(m), 0, "lv_check reports, it does not count run-time bugs");
	lv_folio_put(f);
	finish(m, "check machine");
	check_swap_usage_sums();
	return done_testing();
}
