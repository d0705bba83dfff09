/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * List membership helpers (docs/protocol.md §2.5). They never touch PG_lru (that is the
 * caller's protocol duty) and they always run under the lruvec's lock, which also protects the
 * size counters they update: a list and its counter change in one critical section (hazard 8
 * of docs/protocol.md §9.1).
 */
#ifndef LV_MM_INLINE_H
#define LV_MM_INLINE_H

#include "internal.h"

/* folio_lru_list - the list a folio's flags select. Active and unevictable together is a bug. */
static inline enum lru_list folio_lru_list(struct lv_folio *folio)
{
	enum lru_list lru;

	VM_BUG_ON_FOLIO(folio_test_active(folio) && folio_test_unevictable(folio), folio);
	if (folio_test_unevictable(folio))
		return LRU_UNEVICTABLE;
	lru = folio_is_file_lru(folio) ? LRU_INACTIVE_FILE : LRU_INACTIVE_ANON;
	if (folio_test_active(folio))
		lru += LRU_ACTIVE;
	return lru;
}

/*
 * lru_size_order - the highest priority at which reclaim scans a list of @size pages
 * (size >> priority >= 1): floor(log2(size)), at most DEF_PRIORITY; -1 for an empty list.
 */
static inline int lru_size_order(unsigned long size)
{
	int order = size ? 63 - __builtin_clzl(size) : -1;

	return order < DEF_PRIORITY ? order : DEF_PRIORITY;
}

void lruvec_size_level_update(struct lruvec *lruvec, bool lower);

static inline void update_lru_size(struct lruvec *lruvec, enum lru_list lru, long nr_pages)
{
	unsigned long old = lruvec->lru_size[lru], new = old + (unsigned long)nr_pages;

	lockdep_assert_held(lruvec->lru_lock);
	/* A negative size: a list and its counter went out of step (C4, docs/protocol.md §9.2). */
	VM_BUG_ON_M(lruvec->pgdat->machine, nr_pages < 0 && old < (unsigned long)-nr_pages);
	WRITE_ONCE(lruvec->lru_size[lru], new);
	if (lru == LRU_UNEVICTABLE)
		return;
	/*
	 * A list that grows past the lruvec's level raises it at once, so that reclaim finds it;
	 * a level is lowered only by reclaim's visits (vmscan.c, "Many memcgs"): a small lruvec
	 * whose size swings around a power of two would otherwise change its node's counts and
	 * maps with nearly every update.
	 */
	if (lru_size_order(new) >= lruvec->size_level)
		lruvec_size_level_update(lruvec, false);
}

/* Unevictable folios are counted but not linked: the list head is only an accounting bucket. */
static inline void lruvec_add_folio(struct lruvec *lruvec, struct lv_folio *folio)
{
	enum lru_list lru = folio_lru_list(folio);

	update_lru_size(lruvec, lru, folio_nr_pages(folio));
	if (lru != LRU_UNEVICTABLE)
		list_add(&folio->lru, &lruvec->lists[lru]);
}

static inline void lruvec_add_folio_tail(struct lruvec *lruvec, struct lv_folio *folio)
{
	enum lru_list lru = folio_lru_list(folio);

	update_lru_size(lruvec, lru, folio_nr_pages(folio));
	if (lru != LRU_UNEVICTABLE)
		list_add_tail(&folio->lru, &lruvec->lists[lru]);
}

static inline void lruvec_del_folio(struct lruvec *lruvec, struct lv_folio *folio)
{
	enum lru_list lru = folio_lru_list(folio);

	if (lru != LRU_UNEVICTABLE)
		list_del(&folio->lru);
	update_lru_size(lruvec, lru, -folio_nr_pages(folio));
}

static inline void lruvec_count_event(struct lruvec *lruvec, enum lru_event ev, long nr)
{
	lockdep_assert_held(lruvec->lru_lock);
	VM_BUG_ON_M(lruvec->pgdat->machine, ev >= EV_PGSTEAL); /* those are counted atomically */
	WRITE_ONCE(lruvec->events[ev], lruvec->events[ev] + (uint64_t)nr);
}

#endif /* LV_MM_INLINE_H */
