// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Isolation from the LRU. Reclaim (shrink_*_list, kswapd) arrives with the page cache issue.
 *
 * Isolating a folio is winning its PG_lru pin and unlinking it. The caller's reference comes
 * first: the release path decides whether to unlink by looking at PG_lru, so clearing it on a
 * folio whose last reference is concurrently being dropped would free a linked folio.
 */
#include "internal.h"
#include "mm_inline.h"

/**
 * folio_isolate_lru - win the pin and take @folio off its list.
 * Return: true with an extra (isolation) reference held; false if the folio is on no LRU or
 * another actor owns the pin.
 * Context: the caller holds a reference and no LRU lock.
 */
bool folio_isolate_lru(struct lv_folio *folio)
{
	struct lruvec *lruvec;

	VM_BUG_ON_FOLIO(folio_ref_count(folio) <= 0, folio);
	if (!folio_test_clear_lru(folio))
		return false;
	folio_get(folio);
	lruvec = folio_lruvec_lock(folio);
	lruvec_del_folio(lruvec, folio);
	lruvec_unlock(lruvec);
	return true;
}

int lv_folio_isolate_lru(struct lv_folio *folio)
{
	if (!folio_isolate_lru(folio))
		return -EBUSY;
	/* The folio is the caller's now: its binding and therefore its lruvec are stable. */
	folio_set_isolated(folio);
	folio_clear(folio, PG_lru_claimed);
	__atomic_fetch_add(&mem_cgroup_lruvec(folio->memcg, folio->pgdat)->nr_isolated,
			   folio_nr_pages(folio), __ATOMIC_RELAXED);
	return 0;
}

int lv_folio_putback_lru(struct lv_folio *folio)
{
	if (!folio_test_clear_isolated(folio))
		return -EINVAL;
	__atomic_fetch_sub(&mem_cgroup_lruvec(folio->memcg, folio->pgdat)->nr_isolated,
			   folio_nr_pages(folio), __ATOMIC_RELAXED);
	folio_putback_lru(folio);
	return 0;
}
