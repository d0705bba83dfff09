// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Compaction: the migrate and free scanners, migration into the frames found, direct
 * compaction, kcompactd and proactive compaction.
 *
 * Theory of operation.
 *
 * Compaction moves movable folios out of partly used pageblocks (2^LV_MAX_ORDER pages, the
 * largest free block) so that whole blocks become free. Two scanners walk one node's memmap
 * towards each other: the migrate scanner upward from its start, a batch of at most
 * COMPACT_CLUSTER_MAX folios at a time, and the free scanner downward from its end, a pageblock
 * at a time, taking free blocks out of the buddy allocator as migration targets. They never
 * enter the same pageblock; when they meet, the pass is complete. A pass that wants a block of
 * some order stops as soon as one is free; a proactive pass, as soon as the node's
 * fragmentation score is down to its low mark.
 *
 * The migrate scanner finds folios in the memmap, so it holds no reference on what it finds:
 * a frame may be free, a tail, or a folio being freed or allocated at that instant. It follows
 * the kernel's isolate_migratepages_block(), whose order is that of docs/protocol.md §4.13:
 *  1. free frames (PG_buddy, its order read racily, or PG_pcp) and tails are passed over
 *     with one load of the flags and no atomic operation;
 *  2. the reference first (folio_try_get()), before anything else that matters: the release
 *     path decides by PG_lru whether a folio it frees must be unlinked (folios_put_refs()), so
 *     clearing PG_lru on a folio whose last reference is being dropped would free it linked
 *     (hazard 2 of docs/protocol.md §9.1);
 *  3. with the reference held, re-check that it is still a head of the order seen and on an
 *     LRU, unevictable only if cfg.compact_unevictable_allowed, not pinned (held beyond its
 *     owner's references and ours: migration would fail), and charged to the memcg asked for;
 *  4. the PG_lru pin (folio_test_clear_lru()): from here no charge move can rebind it;
 *  5. look the lruvec up and relock only if its lock differs from the one held, trying it
 *     first and noting contention as compact_lock_irqsave() does, with the re-check of
 *     folio_lruvec_lock(): a removal may reparent the folio, pinned or not, until we hold the
 *     lock it is counted under;
 *  6. under the lock, re-check that it is still the same head (if not, PG_lru goes back:
 *     hazard 5), unlink it and take it.
 * A folio passed over after step 2 is released by isolate_fail_put: the lruvec lock held is
 * dropped first, because that put may be the last, and the last put takes the folio's lruvec
 * lock when PG_lru is set, which may be the very lock held (hazard 4). The lock is also let
 * go every COMPACT_CLUSTER_MAX PFNs and whenever another thread waits for it, so that a scan
 * never keeps a tenant out for long.
 *
 * With cfg.protocol = LV_PROTOCOL_V1 the scanner runs isolate_folio_v1() instead: the order of
 * the August 2019 first version, broken on purpose (see there).
 *
 * Migration (migrate.c, migrate_folio_into()) copies each isolated folio into a target taken
 * from the free scanner's blocks, splitting one of a larger order. A large folio for which no
 * block of its order can be had is split (split_folio_to_list()) and its pages migrate one by
 * one; if it cannot be split it goes back. A folio whose owner let go while we held it is
 * freed at once (nothing else holds it). What could not move is put back on its list, and
 * unused targets return to the buddy allocator when the pass ends. The free scanner takes the
 * zone lock, the migrate scanner lruvec locks, and neither ever holds the other's.
 *
 * Who compacts. lv_compact_node() and lv_compact_memcg() on request; an allocation of order > 0
 * with FOLIO_ALLOC_COMPACT directly (compact_stall), after which it retries (page_alloc.c);
 * and kcompactd, one thread per node, woken when an allocation of order > 0 fails
 * (wakeup_kcompactd(), through kswapd's request protocol: both are node daemons, kthread.c),
 * and every PROACTIVE_PERIOD_MS when cfg.compaction_proactiveness is set. As the kernel's, direct
 * compaction and kcompactd skip a node without the free memory to make a block
 * (compaction_suitable()) and defer an order that failed recently (compaction_deferred()).
 * too_many_isolated() throttles scanners while compaction holds more than half of the node's LRU
 * pages isolated.
 *
 * Lock order: no lock is held across the scanners; the migrate scanner holds one lruvec lock
 * at a time (and an RCU read-side section around each lookup), the free scanner the zone lock;
 * migration takes the owner's lock, then slot and lruvec locks; putback takes lruvec locks,
 * then frees after unlocking (pcp, zone).
 */
#include "internal.h"
#include "mm_inline.h"

#include <pthread.h>
#include <time.h>
#include <unistd.h>

#define PAGEBLOCK_ORDER LV_MAX_ORDER
#define PAGEBLOCK_NR	(1ul << PAGEBLOCK_ORDER)
/* Folios per isolated batch, and PFNs per lruvec lock hold (the kernel's SWAP_CLUSTER_MAX). */
#define COMPACT_CLUSTER_MAX 32
/* How often kcompactd looks at the fragmentation score (HPAGE_FRAG_CHECK_INTERVAL_MSEC). */
#define PROACTIVE_PERIOD_MS 500
/* Failed compactions defer an order for up to 2^this attempts; a fruitless proactive pass
 * defers the next ones by as many periods. */
#define COMPACT_MAX_DEFER_SHIFT 6
/* too_many_isolated(): how many times a scanner waits a millisecond before going on anyway. */
#define COMPACT_THROTTLE_TRIES 20

enum compact_result {
	COMPACT_CONTINUE,
	COMPACT_SUCCESS,   /* the block asked for is free, or the score is at its low mark */
	COMPACT_COMPLETE,  /* the scanners met (or the pass was stopped) */
	COMPACT_CONTENDED, /* an asynchronous pass had to wait for an LRU lock */
};

/* struct compact_control - one compaction pass over one node. Lives on its caller's stack. */
struct compact_control {
	struct pglist_data *pgdat;
	struct lv_memcg *memcg; /* isolate only folios charged to its subtree; NULL: any */
	int order;		/* the block wanted, 0..LV_MAX_ORDER; -1: none (a full pass) */
	bool async;		/* give up once an LRU lock had to be waited for */
	bool proactive;		/* stop once the fragmentation score is at its low mark */
	bool putback_only;	/* isolate and put back, migrate nothing (compact_scan_putback()) */
	bool contended;		/* an LRU lock had to be waited for */
	bool free_exhausted;	/* the free scanner reached the migrate scanner */
	const bool *stop;	/* kcompactd's stop flag (atomic loads), or NULL */
	unsigned long migrate_pfn; /* where the migrate scanner goes on */
	unsigned long free_pfn;	   /* the lowest pageblock the free scanner took: it goes below */
	struct list_head migratepages;			       /* isolated folios */
	unsigned int nr_migratepages;			       /* folios on migratepages */
	struct list_head freepages[LV_MAX_ORDER + 1];	       /* isolated free blocks, by order */
	unsigned long migrate_scanned, free_scanned, isolated; /* for the counters */
};

#ifdef LV_DEBUG
void (*compact_isolate_hook)(struct lv_folio *folio, enum compact_hook_step step);
#endif

/*
 * compact_hook - call the test hook at @step. A scanner that passes the lruvec it holds
 * (*@locked) lets go of it first; one that passes NULL calls the hook with whatever it holds.
 */
static inline void compact_hook(struct lruvec **locked, struct lv_folio *folio,
				enum compact_hook_step step)
{
#ifdef LV_DEBUG
	if (!compact_isolate_hook)
		return;
	if (locked && *locked) {
		lruvec_unlock(*locked);
		*locked = NULL;
	}
	compact_isolate_hook(folio, step);
#else
	(void)locked, (void)folio, (void)step;
#endif
}

static void compact_control_init(struct compact_control *cc, struct pglist_data *pgdat, int order,
				 struct lv_memcg *memcg)
{
	*cc = (struct compact_control){ .pgdat = pgdat, .order = order, .memcg = memcg };
	INIT_LIST_HEAD(&cc->migratepages);
	for (int o = 0; o <= LV_MAX_ORDER; o++)
		INIT_LIST_HEAD(&cc->freepages[o]);
}

/* ---- heuristics: suitability, deferral, isolation limit, fragmentation ----------------------- */

/**
 * compaction_suitable - whether @pgdat has the free memory to make a free block of 2^@order
 * pages: the kernel's watermark check, the low watermark (min for small orders) plus twice the
 * block (compact_gap()), as migration needs targets besides the block's own frames.
 * Context: any; racy.
 */
bool compaction_suitable(struct pglist_data *pgdat, unsigned int order)
{
	unsigned long mark = pgdat->zone.watermark[order > 3 ? WMARK_LOW : WMARK_MIN];

	return READ_ONCE(pgdat->zone.free_pages) >= mark + (2ul << order);
}

/*
 * The kernel's deferral: after a failed compaction for an order, the next attempts at that
 * order or above are skipped, up to 2^compact_defer_shift of them, the shift growing with each
 * failure up to COMPACT_MAX_DEFER_SHIFT; a success resets it. A racy heuristic, as the
 * kernel's: every compactor of the node reads and writes it without a lock.
 */
static void defer_compaction(struct pglist_data *pgdat, unsigned int order)
{
	unsigned int shift = __atomic_load_n(&pgdat->compact_defer_shift, __ATOMIC_RELAXED);

	__atomic_store_n(&pgdat->compact_considered, 0, __ATOMIC_RELAXED);
	if (shift < COMPACT_MAX_DEFER_SHIFT)
		__atomic_store_n(&pgdat->compact_defer_shift, shift + 1, __ATOMIC_RELAXED);
	if ((int)order < __atomic_load_n(&pgdat->compact_order_failed, __ATOMIC_RELAXED))
		__atomic_store_n(&pgdat->compact_order_failed, (int)order, __ATOMIC_RELAXED);
}

static bool compaction_deferred(struct pglist_data *pgdat, unsigned int order)
{
	unsigned int limit = 1u << __atomic_load_n(&pgdat->compact_defer_shift, __ATOMIC_RELAXED);
	unsigned int considered;

	if ((int)order < __atomic_load_n(&pgdat->compact_order_failed, __ATOMIC_RELAXED))
		return false;
	considered = __atomic_load_n(&pgdat->compact_considered, __ATOMIC_RELAXED) + 1;
	if (considered >= limit) {
		__atomic_store_n(&pgdat->compact_considered, limit, __ATOMIC_RELAXED);
		return false;
	}
	__atomic_store_n(&pgdat->compact_considered, considered, __ATOMIC_RELAXED);
	return true;
}

static void compaction_defer_reset(struct pglist_data *pgdat, unsigned int order)
{
	__atomic_store_n(&pgdat->compact_considered, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&pgdat->compact_defer_shift, 0, __ATOMIC_RELAXED);
	if ((int)order >= __atomic_load_n(&pgdat->compact_order_failed, __ATOMIC_RELAXED))
		__atomic_store_n(&pgdat->compact_order_failed, (int)order + 1, __ATOMIC_RELAXED);
}

static unsigned long lruvec_lru_pages(struct lruvec *lruvec)
{
	unsigned long pages = 0;

	for (int l = 0; l < LRU_UNEVICTABLE; l++)
		pages += READ_ONCE(lruvec->lru_size[l]);
	return pages;
}

/* memcg_lru_pages - the evictable LRU pages of @memcg's subtree on node @nid. Context: RCU. */
static unsigned long memcg_lru_pages(struct lv_memcg *memcg, int nid)
{
	unsigned long pages = lruvec_lru_pages(&memcg->nodeinfo[nid]);
	struct list_head *pos;

	list_for_each_rcu (pos, &memcg->children)
		pages += memcg_lru_pages(list_entry(pos, struct lv_memcg, sibling), nid);
	return pages;
}

/**
 * too_many_isolated - whether compaction holds more than half of @pgdat's (in)active LRU pages
 * isolated, as the kernel's too_many_isolated() in compaction: scanners then wait for the
 * others' batches to go back or move before they take more. The node's list sizes are summed
 * over the memcg tree under RCU, only when something is isolated at all.
 * Context: no LRU lock needed; RCU read-side inside.
 */
bool too_many_isolated(struct pglist_data *pgdat)
{
	long isolated = __atomic_load_n(&pgdat->nr_compact_isolated, __ATOMIC_RELAXED);
	struct lv_machine *m = pgdat->machine;
	unsigned long lru;

	if (isolated <= 0)
		return false;
	if (!m->root) {
		lru = lruvec_lru_pages(&pgdat->__lruvec);
	} else {
		rcu_read_lock();
		lru = memcg_lru_pages(m->root, pgdat->node_id);
		rcu_read_unlock();
	}
	return (unsigned long)isolated > lru / 2;
}

static void isolated_add(struct compact_control *cc, long pages)
{
	if (pages)
		__atomic_fetch_add(&cc->pgdat->nr_compact_isolated, pages, __ATOMIC_RELAXED);
}

/*
 * extfrag_for_order - the percentage of @pgdat's free pages that are in blocks too small for
 * 2^@order pages (the kernel's extfrag_for_order()).
 */
static unsigned int extfrag_for_order(struct pglist_data *pgdat, unsigned int order)
{
	struct contig_page_info info;

	fill_contig_page_info(pgdat, order, &info);
	if (!info.free_pages)
		return 0;
	return (unsigned int)((info.free_pages - (info.free_blocks_suitable << order)) * 100 /
			      info.free_pages);
}

/* fragmentation_score - the node's score for proactive compaction: extfrag of a pageblock. */
static unsigned int fragmentation_score(struct pglist_data *pgdat)
{
	return extfrag_for_order(pgdat, PAGEBLOCK_ORDER);
}

/*
 * fragmentation_score_wmark - proactive compaction starts above the high mark and stops at
 * the low one: low = 100 - proactiveness (at least 5), high = low + 10 (at most 100), as the
 * kernel's fragmentation_score_wmark().
 */
static unsigned int fragmentation_score_wmark(const struct lv_machine *m, bool low)
{
	unsigned int wmark_low = 100 - m->cfg.compaction_proactiveness;

	if (wmark_low < 5)
		wmark_low = 5;
	if (low)
		return wmark_low;
	return wmark_low + 10 < 100 ? wmark_low + 10 : 100;
}

/* ---- the migrate scanner --------------------------------------------------------------------- */

/* memcg_in_subtree - whether @memcg is @top or below it. Context: RCU, or @memcg pinned. */
static bool memcg_in_subtree(const struct lv_memcg *memcg, const struct lv_memcg *top)
{
	for (; memcg; memcg = memcg->parent)
		if (memcg == top)
			return true;
	return false;
}

/* folio_charged_below - @folio's binding, read racily under RCU, is in @top's subtree. */
static bool folio_charged_below(struct lv_folio *folio, const struct lv_memcg *top)
{
	bool in;

	rcu_read_lock();
	in = memcg_in_subtree(folio_memcg(folio), top);
	rcu_read_unlock();
	return in;
}

/*
 * compact_lock - compact_lock_irqsave(): try first; if we must wait, say so, and wait. The
 * migrate scanner is its only caller: its waits are isolate_migratepages_block()'s.
 */
static void compact_lock(struct compact_control *cc, struct lv_lock *lock)
{
	if (lv_lock_trylock(lock))
		return;
	cc->contended = true;
	lv_lock_acquire_at(lock, "isolate_migratepages_block");
}

/*
 * compact_folio_lruvec_relock - lock the lruvec of @folio, whose pin we own, keeping @locked
 * (the lruvec whose lock is held, or NULL) if its lock covers it: folio_lruvec_relock() with
 * compact_lock() and the test hook. The re-check loop is folio_lruvec_lock()'s: the pin stops
 * charge moves, not a removal's reparenting, which rebinds linked folios under the lock of
 * the lruvec they are counted on.
 * Return: @folio's lruvec, locked, which @folio matches.
 * Context: @locked's lock held if @locked; RCU read-side inside (the lookup until the re-check).
 */
static struct lruvec *compact_folio_lruvec_relock(struct compact_control *cc,
						  struct lv_folio *folio, struct lruvec *locked)
{
	struct lruvec *lruvec;

	if (locked && folio_matches_lruvec(folio, locked))
		return locked;
	/* The lookup may find a memcg being removed: RCU keeps it readable until we re-check. */
	rcu_read_lock();
	for (;;) {
		lruvec = folio_lruvec(folio);
		if (locked) {
			/* The node design: the held lock freezes the binding it read. */
			if (lruvec->lru_lock == locked->lru_lock)
				break;
			lruvec_unlock(locked);
			locked = NULL;
		}
		compact_hook(NULL, folio, COMPACT_HOOK_LOCK);
		compact_lock(cc, lruvec->lru_lock);
		if (likely(folio_matches_lruvec(folio, lruvec)))
			break;
		lruvec_count_event(lruvec, EV_LOCK_RETRIES, 1);
		lruvec_unlock(lruvec);
	}
	rcu_read_unlock();
	return lruvec;
}

/*
 * isolate_folio - steps 2-6 at the top for the head at @folio, seen with PG_lru and @order.
 * *@locked is the lruvec whose lock is held, or NULL, and is kept up to date.
 * Return: true if @folio is isolated (unlinked, PG_lru clear, our reference, on
 * cc->migratepages); false if it was passed over, with any lock held dropped before our put.
 * Context: *@locked's lock held if *@locked; takes lruvec locks (one at a time); RCU
 * read-side around the lookups.
 */
static bool isolate_folio(struct compact_control *cc, struct lv_folio *folio, unsigned int order,
			  struct lruvec **locked)
{
	const unsigned long want = (1ul << PG_head) | (1ul << PG_lru);
	struct lruvec *lruvec;
	unsigned long flags;

	if (!folio_try_get(folio))
		return false; /* being freed */
	compact_hook(NULL, folio, COMPACT_HOOK_GOT);
	/* The acquire orders the checks after the allocation's and the add's stores. */
	flags = __atomic_load_n(&folio->flags, __ATOMIC_ACQUIRE);
	if ((flags & want) != want || (flags & PG_ORDER_MASK) >> PG_ORDER_SHIFT != order)
		goto isolate_fail_put;
	if ((flags & (1ul << PG_unevictable)) &&
	    !cc->pgdat->machine->cfg.compact_unevictable_allowed)
		goto isolate_fail_put;
	/* Pinned: migration's freeze would fail. A racy look, as the kernel's. */
	if (!cc->putback_only && folio_ref_count(folio) > folio_owner_refs(folio) + 1)
		goto isolate_fail_put;
	if (cc->memcg && !folio_charged_below(folio, cc->memcg))
		goto isolate_fail_put;
	compact_hook(locked, folio, COMPACT_HOOK_CHECKED);
	if (!folio_test_clear_lru(folio))
		goto isolate_fail_put; /* another actor owns its LRU position */
	compact_hook(locked, folio, COMPACT_HOOK_PINNED);
	lruvec = compact_folio_lruvec_relock(cc, folio, *locked);
	*locked = lruvec;
	/*
	 * Frozen now: the head and its order (a split needs a frozen count, which our reference
	 * prevents) and the binding (we hold its lock). A folio that changed keeps its position.
	 */
	if (unlikely(!folio_test(folio, PG_head) || folio_order(folio) != order ||
		     (cc->memcg && !memcg_in_subtree(lruvec->memcg, cc->memcg)))) {
		folio_set_lru(folio);
		goto isolate_fail_put;
	}
	lruvec_del_folio(lruvec, folio);
	list_add_tail(&folio->lru, &cc->migratepages);
	return true;

isolate_fail_put:
	/* Avoid the self-deadlock: this put may be the last, whose release takes the lock. */
	if (*locked) {
		lruvec_unlock(*locked);
		*locked = NULL;
	}
	lv_folio_put(folio);
	return false;
}

/*
 * isolate_folio_v1 - LV_PROTOCOL_V1 ONLY, AND BROKEN ON PURPOSE: the isolation order of the
 * first per-memcg lru_lock series (August 2019), kept so that the tests can show they catch
 * it. It locks the lruvec of folio->memcg as read once, with no pin and no re-check, so a
 * concurrent charge move or reparenting leaves it unlinking a folio under the wrong lock; it
 * tests PG_lru under that lock before taking its reference; and it drops a rejected folio's
 * reference while still holding the lock. That last put may be the final one, whose release
 * path takes the same lruvec lock: the kcompactd self-deadlock of docs/protocol.md §7.1,
 * which any load that frees pages makes likely. The only concession: the block runs inside
 * one RCU read-side section (isolate_migratepages_block()), so that a removed memcg's lruvec
 * stays readable and what breaks is the protocol, not a use after free.
 * Context: RCU read-side; *@locked's lock held if *@locked; returns with an lruvec lock held.
 */
static bool isolate_folio_v1(struct compact_control *cc, struct lv_folio *folio, unsigned int order,
			     struct lruvec **locked)
{
	struct lruvec *lruvec = mem_cgroup_lruvec(folio_memcg(folio), folio->pgdat);

	if (!*locked || (*locked)->lru_lock != lruvec->lru_lock) {
		if (*locked)
			lruvec_unlock(*locked);
		lv_lock_acquire_at(lruvec->lru_lock, "isolate_migratepages_block");
	}
	*locked = lruvec;
	if (!folio_test_lru(folio) || !folio_try_get(folio))
		return false;
	compact_hook(NULL, folio, COMPACT_HOOK_GOT);
	if (!folio_test(folio, PG_head) || folio_order(folio) != order ||
	    (folio_test_unevictable(folio) &&
	     !cc->pgdat->machine->cfg.compact_unevictable_allowed) ||
	    (!cc->putback_only && folio_ref_count(folio) > folio_owner_refs(folio) + 1) ||
	    (cc->memcg && !memcg_in_subtree(lruvec->memcg, cc->memcg)) ||
	    !folio_test_clear_lru(folio)) {
		lv_folio_put(folio); /* under the lruvec lock: the bug */
		return false;
	}
	lruvec_del_folio(lruvec, folio);
	list_add_tail(&folio->lru, &cc->migratepages);
	return true;
}

/*
 * isolate_migratepages_block - the migrate scanner over [@low, @end), within one pageblock:
 * isolate folios onto cc->migratepages until COMPACT_CLUSTER_MAX are there; cc->migrate_pfn
 * moves to where it stopped. Waits first (up to COMPACT_THROTTLE_TRIES ms) while
 * too_many_isolated(); an asynchronous pass gives up instead.
 * Context: no lock held; takes lruvec locks, one at a time, never more than
 * COMPACT_CLUSTER_MAX PFNs in a row; RCU read-side.
 */
static void isolate_migratepages_block(struct compact_control *cc, unsigned long low,
				       unsigned long end)
{
	struct pglist_data *pgdat = cc->pgdat;
	const bool v1 = pgdat->machine->cfg.protocol == LV_PROTOCOL_V1;
	unsigned long pfn, unlock_at = (low | (COMPACT_CLUSTER_MAX - 1)) + 1;
	struct lruvec *locked = NULL;
	long isolated = 0;

	for (int tries = 0; too_many_isolated(pgdat); tries++) {
		if (cc->async) {
			cc->contended = true;
			return;
		}
		if (tries == COMPACT_THROTTLE_TRIES)
			break; /* progress over a count that may be stale */
		usleep(1000);
	}
	if (v1)
		rcu_read_lock();
	for (pfn = low; pfn < end; pfn++) {
		struct lv_folio *folio = &pgdat->memmap[pfn];
		unsigned long flags;
		unsigned int order;
		bool taken;

		if (pfn >= unlock_at) {
			/* Give the lock's other users a chance at every cluster boundary. */
			unlock_at = (pfn | (COMPACT_CLUSTER_MAX - 1)) + 1;
			if (locked) {
				lruvec_unlock(locked);
				locked = NULL;
			}
		}
		/* One relaxed load decides for free frames and tails: no atomic RMW for them. */
		flags = __atomic_load_n(&folio->flags, __ATOMIC_RELAXED);
		order = (unsigned int)((flags & PG_ORDER_MASK) >> PG_ORDER_SHIFT);
		if (flags & (1ul << PG_buddy)) {
			/* A free block, aligned to its order: skip it whole (a racy order). */
			if (order <= LV_MAX_ORDER)
				pfn |= (1ul << order) - 1;
			continue;
		}
		if ((flags & ((1ul << PG_head) | (1ul << PG_lru))) !=
		    ((1ul << PG_head) | (1ul << PG_lru)))
			continue; /* a tail, a per-CPU free frame, a folio on no LRU */
		taken = v1 ? isolate_folio_v1(cc, folio, order, &locked)
			   : isolate_folio(cc, folio, order, &locked);
		if (!taken)
			continue;
		isolated += 1l << order;
		pfn += (1ul << order) - 1; /* confirmed under the lock */
		if (++cc->nr_migratepages == COMPACT_CLUSTER_MAX) {
			pfn++;
			break;
		}
		if (locked && lv_lock_is_contended(locked->lru_lock)) {
			lruvec_unlock(locked);
			locked = NULL;
		}
	}
	if (locked)
		lruvec_unlock(locked);
	if (v1)
		rcu_read_unlock();
	if (pfn > end)
		pfn = end;
	cc->migrate_scanned += pfn - low;
	cc->migrate_pfn = pfn;
	cc->isolated += (unsigned long)isolated;
	isolated_add(cc, isolated);
}

/*
 * compact_putback - put isolated folios back on the lists their flags select, one lock hold
 * per batch, publishing PG_lru before dropping each isolation reference after the unlock (a
 * drop may be the last: hazards 3 and 4). A folio whose evictability changed while it was
 * isolated (PG_mlocked, which decides it, may change then) goes through folio_putback_lru(),
 * so that lru_add decides afresh. A removal may reparent an isolated folio meanwhile: each
 * lookup finds the lruvec it belongs to now.
 * Context: no lock held.
 */
static void compact_putback(struct compact_control *cc, struct list_head *list)
{
	struct lv_folio *done[LV_MAX_BATCH];
	struct lruvec *lruvec = NULL;
	unsigned int nr = 0;
	long pages = 0;

	while (!list_empty(list)) {
		struct lv_folio *folio = list_first_entry(list, struct lv_folio, lru);

		list_del(&folio->lru);
		pages += folio_nr_pages(folio);
		if (unlikely(!folio_evictable(folio) || folio_test_unevictable(folio))) {
			if (lruvec)
				lruvec_unlock(lruvec);
			lruvec = NULL;
			folio_putback_lru(folio);
			continue;
		}
		/* The kernel's putback_movable_pages(), in batches. */
		lruvec = folio_lruvec_relock_at(folio, lruvec, "putback_movable_pages");
		lruvec_add_folio(lruvec, folio);
		folio_set_lru(folio);
		done[nr++] = folio;
		if (nr == LV_MAX_BATCH) {
			lruvec_unlock(lruvec);
			lruvec = NULL;
			folios_put_refs(done, nr);
			nr = 0;
		}
	}
	if (lruvec)
		lruvec_unlock(lruvec);
	folios_put_refs(done, nr);
	isolated_add(cc, -pages);
}

/* ---- the free scanner and migration ---------------------------------------------------------- */

static bool isolated_free_left(const struct compact_control *cc)
{
	for (int o = 0; o <= LV_MAX_ORDER; o++)
		if (!list_empty(&cc->freepages[o]))
			return true;
	return false;
}

/*
 * isolate_freepages - the free scanner: take the free blocks of the next pageblock down, and
 * of the ones below it until one yields something, never a pageblock at or below the one the
 * migrate scanner is in.
 * Return: true if it isolated anything; false once it reached the migrate scanner.
 * Context: no LRU lock held; takes the zone lock (isolate_freepages_block()).
 */
static bool isolate_freepages(struct compact_control *cc)
{
	struct pglist_data *pgdat = cc->pgdat;
	unsigned long limit = (cc->migrate_pfn & ~(PAGEBLOCK_NR - 1)) + PAGEBLOCK_NR;

	while (cc->free_pfn >= limit + PAGEBLOCK_NR) {
		unsigned long start = cc->free_pfn - PAGEBLOCK_NR;
		unsigned long end = start + PAGEBLOCK_NR < pgdat->nr_pages ? start + PAGEBLOCK_NR
									   : pgdat->nr_pages;

		cc->free_pfn = start;
		cc->free_scanned += end - start;
		if (isolate_freepages_block(pgdat, start, end, cc->freepages))
			return true;
	}
	cc->free_exhausted = true;
	return false;
}

/*
 * compaction_alloc - a target of 2^@order pages, scanning for more free blocks as needed.
 * Context: as isolate_freepages().
 */
static struct lv_folio *compaction_alloc(struct compact_control *cc, unsigned int order)
{
	for (;;) {
		struct lv_folio *f = take_isolated_free(cc->freepages, order);

		if (f || !isolate_freepages(cc))
			return f;
	}
}

/*
 * compact_migrate - migrate every folio isolated into the free scanner's blocks; put back what
 * cannot move. A large folio with no target of its order is split and its pages go through
 * the same loop.
 * Context: no lock held; may block.
 */
static void compact_migrate(struct compact_control *cc)
{
	struct list_head putback;

	INIT_LIST_HEAD(&putback);
	while (!list_empty(&cc->migratepages)) {
		struct lv_folio *folio = list_first_entry(&cc->migratepages, struct lv_folio, lru);
		unsigned int order = folio_order(folio);
		long nr = 1l << order;
		struct lv_folio *target, *new;

		list_del(&folio->lru);
		if (folio_ref_freeze(folio, 1)) {
			/* Its owner let go while we held it: nobody else can reach it. */
			free_folios(&folio, 1);
			isolated_add(cc, -nr);
			continue;
		}
		target = compaction_alloc(cc, order);
		if (!target) {
			struct list_head pages;

			INIT_LIST_HEAD(&pages);
			if (order && !split_folio_to_list(folio, &pages)) {
				long kept = 1;

				/*
				 * The pages nothing owns were freed by the split: they leave the
				 * isolated count here. The head, order 0 now, goes first, the
				 * pages kept follow it at the end of the list.
				 */
				for (struct list_head *pos = pages.next; pos != &pages;
				     pos = pos->next)
					kept++;
				isolated_add(cc, kept - nr);
				list_add(&folio->lru, &cc->migratepages);
				list_splice_tail_init(&pages, &cc->migratepages);
				continue;
			}
			folio_count_event(folio, EV_PGMIGRATE_FAIL, nr);
			list_add_tail(&folio->lru, &putback);
			continue;
		}
		rcu_read_lock(); /* the binding's memcg, while the target takes its obj_cgroup */
		new = prep_migration_target(target, order, folio_memcg(folio));
		rcu_read_unlock();
		if (migrate_folio_into(folio, new, folio_owner_refs(folio) + 1)) {
			return_migration_target(new, cc->freepages);
			list_add_tail(&folio->lru, &putback);
			continue;
		}
		free_folios(&folio, 1);
		isolated_add(cc, -nr);
	}
	cc->nr_migratepages = 0;
	compact_putback(cc, &putback);
	/* The originals went to this CPU's page list: let them merge with their neighbours. */
	drain_local_pages(cc->pgdat);
}

/* ---- a pass ---------------------------------------------------------------------------------- */

static enum compact_result compact_finished(struct compact_control *cc)
{
	struct pglist_data *pgdat = cc->pgdat;

	if (cc->migrate_pfn >= cc->free_pfn || (cc->free_exhausted && !isolated_free_left(cc)))
		return COMPACT_COMPLETE;
	if (cc->stop && __atomic_load_n(cc->stop, __ATOMIC_RELAXED))
		return COMPACT_COMPLETE;
	if (cc->proactive)
		return fragmentation_score(pgdat) <= fragmentation_score_wmark(pgdat->machine, true)
			       ? COMPACT_SUCCESS
			       : COMPACT_CONTINUE;
	if (cc->order >= 0 && free_block_exists(pgdat, (unsigned int)cc->order))
		return COMPACT_SUCCESS;
	return COMPACT_CONTINUE;
}

/*
 * compact_zone - one pass over cc->pgdat (the kernel's compact_zone(): one zone per node).
 * Counts the scanned, isolated and (for an order) success or fail events.
 * Context: no lock held; may block.
 */
static enum compact_result compact_zone(struct compact_control *cc)
{
	struct pglist_data *pgdat = cc->pgdat;
	enum compact_result ret;

	/* Folios in this CPU's batches are on no list; free frames in per-CPU lists cannot be
	 * targets and cannot merge. */
	lv_lru_add_drain(pgdat->machine);
	drain_all_pages(pgdat);
	cc->migrate_pfn = 0;
	cc->free_pfn = (pgdat->nr_pages + PAGEBLOCK_NR - 1) & ~(PAGEBLOCK_NR - 1);
	while ((ret = compact_finished(cc)) == COMPACT_CONTINUE) {
		unsigned long end = (cc->migrate_pfn & ~(PAGEBLOCK_NR - 1)) + PAGEBLOCK_NR;

		if (end > cc->free_pfn)
			end = cc->free_pfn;
		if (end > pgdat->nr_pages)
			end = pgdat->nr_pages;
		isolate_migratepages_block(cc, cc->migrate_pfn, end);
		if (cc->nr_migratepages)
			compact_migrate(cc);
		if (cc->async && cc->contended) {
			ret = COMPACT_CONTENDED;
			break;
		}
	}
	release_isolated_free(pgdat, cc->freepages);
	drain_all_pages(pgdat);
	/* The copies sit in this CPU's lru_add batch: on their lists when we return. */
	lv_lru_add_drain(pgdat->machine);
	count_compact_event(pgdat, CE_COMPACT_MIGRATE_SCANNED, (long)cc->migrate_scanned);
	count_compact_event(pgdat, CE_COMPACT_FREE_SCANNED, (long)cc->free_scanned);
	count_compact_event(pgdat, CE_COMPACT_ISOLATED, (long)cc->isolated);
	if (cc->order >= 0)
		count_compact_event(pgdat,
				    free_block_exists(pgdat, (unsigned int)cc->order)
					    ? CE_COMPACT_SUCCESS
					    : CE_COMPACT_FAIL,
				    1);
	return ret;
}

/*
 * compact_node_order - lv_compact_node() for @pgdat, isolating only @memcg's subtree if set.
 * Return: 1 if a free block of @order exists at the end (-1: 0).
 */
static int compact_node_order(struct pglist_data *pgdat, int order, struct lv_memcg *memcg)
{
	struct compact_control cc;

	if (order >= 0 && free_block_exists(pgdat, (unsigned int)order))
		return 1;
	compact_control_init(&cc, pgdat, order, memcg);
	compact_zone(&cc);
	return order >= 0 && free_block_exists(pgdat, (unsigned int)order);
}

int lv_compact_node(struct lv_machine *m, int nid, int order)
{
	if (!m || !node_valid(m, nid) || order < -1 || order > LV_MAX_ORDER)
		return -EINVAL;
	return compact_node_order(m->nodes[nid], order, NULL);
}

int lv_compact_memcg(struct lv_memcg *memcg, int order)
{
	struct memcg_guard guard;
	struct lv_machine *m;
	int ret = 0;

	if (!memcg || order < -1 || order > LV_MAX_ORDER)
		return -EINVAL;
	/* Compaction blocks: hold a reference against a concurrent lv_memcg_remove(). */
	memcg_guard_enter(&guard, memcg);
	m = memcg->machine;
	if (!memcg_guard_pin(&guard)) {
		memcg_guard_exit(&guard);
		return -ENOENT; /* its removal returned: no call may start on it */
	}
	for (unsigned int nid = 0; nid < m->cfg.nr_nodes; nid++)
		ret = compact_node_order(m->nodes[nid], order, memcg);
	memcg_guard_exit(&guard);
	return ret;
}

int lv_fragmentation_index(struct lv_machine *m, int nid, int order)
{
	struct contig_page_info info;
	unsigned long requested;
	long index;

	if (!m || !node_valid(m, nid) || order < 0 || order > LV_MAX_ORDER)
		return -EINVAL;
	fill_contig_page_info(m->nodes[nid], (unsigned int)order, &info);
	if (!info.free_blocks_total)
		return 0;
	if (info.free_blocks_suitable)
		return -1000;
	/* 1000 * (1 - (1 + free / requested) / blocks), as the kernel's __fragmentation_index(). */
	requested = 1ul << order;
	index = 1000 - (long)((1000 + info.free_pages * 1000 / requested) / info.free_blocks_total);
	return index < 0 ? 0 : (int)index;
}

/**
 * try_to_compact_node - direct compaction for an allocation of 2^@order pages (order > 0)
 * that found no free block, counted in compact_stall. Skipped (nothing counted) if the node
 * lacks the free memory (compaction_suitable()) or the order is deferred after failures.
 * @async: give up at the first LRU lock the pass would have to wait for.
 * Return: true if a free block of @order exists at the end (the caller retries).
 * Context: no library lock held; may block; takes what lv_compact_node() takes.
 */
bool try_to_compact_node(struct pglist_data *pgdat, unsigned int order, bool async)
{
	struct compact_control cc;
	enum compact_result ret;

	if (!compaction_suitable(pgdat, order) || compaction_deferred(pgdat, order))
		return false;
	count_compact_event(pgdat, CE_COMPACT_STALL, 1);
	compact_control_init(&cc, pgdat, (int)order, NULL);
	cc.async = async;
	ret = compact_zone(&cc);
	if (ret == COMPACT_SUCCESS)
		compaction_defer_reset(pgdat, order);
	else if (ret == COMPACT_COMPLETE)
		defer_compaction(pgdat, order);
	return free_block_exists(pgdat, order);
}

unsigned long compact_scan_putback(struct lv_machine *m, int nid)
{
	struct pglist_data *pgdat = m->nodes[nid];
	struct compact_control cc;

	compact_control_init(&cc, pgdat, -1, NULL);
	cc.putback_only = true;
	lv_lru_add_drain(m);
	while (cc.migrate_pfn < pgdat->nr_pages) {
		unsigned long end = (cc.migrate_pfn & ~(PAGEBLOCK_NR - 1)) + PAGEBLOCK_NR;

		isolate_migratepages_block(&cc, cc.migrate_pfn,
					   end < pgdat->nr_pages ? end : pgdat->nr_pages);
		if (cc.nr_migratepages) {
			compact_putback(&cc, &cc.migratepages);
			cc.nr_migratepages = 0;
		}
	}
	count_compact_event(pgdat, CE_COMPACT_MIGRATE_SCANNED, (long)cc.migrate_scanned);
	count_compact_event(pgdat, CE_COMPACT_ISOLATED, (long)cc.isolated);
	return cc.migrate_scanned;
}

/* ---- kcompactd ------------------------------------------------------------------------------- */

/*
 * struct kcompactd - a node's compaction thread, a node daemon as kswapd is (kthread.c): woken
 * by a request (d.wake, with the largest order asked for in order), it runs one pass at a time
 * (d.busy); with proactiveness set it also wakes every PROACTIVE_PERIOD_MS on its own.
 * lv_check() holds passes off (held) while it looks at a quiescent machine.
 */
struct kcompactd {
	struct node_daemon d; /* as struct node_daemon says; d.stop also stops a scan */
	unsigned int order;   /* atomic: the largest order asked for since a pass took it */
	unsigned int held;    /* d.lock: kcompactd_quiesce() callers; no pass starts meanwhile */
	unsigned int defer;   /* kcompactd only: proactive periods still to skip */
};

/*
 * kcompactd_do_work - compact for the order an allocation asked for, unless the node cannot
 * make it or it is deferred, or a block is free already.
 * Context: kcompactd, busy; no lock held; may block.
 */
static void kcompactd_do_work(struct kcompactd *k, unsigned int order)
{
	struct pglist_data *pgdat = k->d.pgdat;
	struct compact_control cc;
	enum compact_result ret;

	if (free_block_exists(pgdat, order) || !compaction_suitable(pgdat, order) ||
	    compaction_deferred(pgdat, order))
		return;
	count_compact_event(pgdat, CE_COMPACT_DAEMON_WAKE, 1);
	compact_control_init(&cc, pgdat, (int)order, NULL);
	cc.stop = &k->d.stop;
	ret = compact_zone(&cc);
	if (ret == COMPACT_SUCCESS)
		compaction_defer_reset(pgdat, order);
	else
		defer_compaction(pgdat, order);
}

/*
 * kcompactd_proactive - a period has passed: compact while the fragmentation score is above
 * its high mark, down to the low one. Skipped while the node lacks the free memory for a
 * pageblock: compaction then only shuffles what reclaim is about to evict (the kernel skips
 * nodes whose kswapd runs). A pass that did not lower the score defers the next ones by
 * 2^COMPACT_MAX_DEFER_SHIFT periods, as the kernel's proactive_defer.
 * Context: kcompactd, busy; no lock held; may block.
 */
static void kcompactd_proactive(struct kcompactd *k)
{
	struct pglist_data *pgdat = k->d.pgdat;
	struct compact_control cc;
	unsigned int score;

	if (k->defer) {
		k->defer--;
		return;
	}
	score = fragmentation_score(pgdat);
	if (score <= fragmentation_score_wmark(pgdat->machine, false) ||
	    !compaction_suitable(pgdat, PAGEBLOCK_ORDER))
		return;
	count_compact_event(pgdat, CE_COMPACT_DAEMON_WAKE, 1);
	compact_control_init(&cc, pgdat, -1, NULL);
	cc.proactive = true;
	cc.stop = &k->d.stop;
	compact_zone(&cc);
	if (fragmentation_score(pgdat) >= score)
		k->defer = 1u << COMPACT_MAX_DEFER_SHIFT;
}

static void deadline_after_ms(struct timespec *ts, long ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (ms % 1000) * 1000000l;
	if (ts->tv_nsec >= 1000000000l) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000l;
	}
}

static void *kcompactd_thread(void *arg)
{
	struct kcompactd *k = container_of(arg, struct kcompactd, d);
	const bool proactive_on = k->d.pgdat->machine->cfg.compaction_proactiveness != 0;
	struct timespec tick;

	deadline_after_ms(&tick, PROACTIVE_PERIOD_MS);
	for (;;) {
		bool tick_due = false;
		unsigned int order;
		bool woken;

		pthread_mutex_lock(&k->d.lock);
		for (;;) {
			if (k->d.stop)
				break;
			if (!k->held && (tick_due || node_daemon_requested(&k->d)))
				break;
			if (proactive_on && !k->held && !tick_due) {
				if (pthread_cond_timedwait(&k->d.wait, &k->d.lock, &tick) ==
				    ETIMEDOUT) {
					tick_due = true;
					deadline_after_ms(&tick, PROACTIVE_PERIOD_MS);
				}
			} else {
				pthread_cond_wait(&k->d.wait, &k->d.lock);
			}
		}
		if (k->d.stop) {
			pthread_mutex_unlock(&k->d.lock);
			return NULL;
		}
		/*
		 * busy before wake is consumed, both under the lock, which kcompactd_quiesce()
		 * takes to raise held: it then sees busy, or we see held. A request made while
		 * the pass runs asks for another. The order is taken after the request's fence,
		 * so it holds what every request consumed asked for (wakeup_kcompactd()).
		 */
		woken = node_daemon_begin(&k->d);
		order = __atomic_exchange_n(&k->order, 0, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&k->d.lock);
		if (woken && order)
			kcompactd_do_work(k, order);
		if (tick_due)
			kcompactd_proactive(k);
		node_daemon_end(&k->d);
	}
}

/**
 * wakeup_kcompactd - ask @pgdat's kcompactd to make a free block of 2^@order pages, after an
 * allocation of that order failed. Lock-free if kcompactd is awake or asked already; the
 * request is never lost: it is kswapd's Dekker pair (node_daemon_wake(), tests/models/
 * kswapd_wake.pml), the order raised before the request is published, so the pass that
 * consumes the request takes it.
 * Context: any; takes kcompactd's mutex only when it sleeps.
 */
void wakeup_kcompactd(struct pglist_data *pgdat, unsigned int order)
{
	struct lv_machine *m = pgdat->machine;
	struct kcompactd *k;
	unsigned int cur;

	if (!m->kcompactd || !order)
		return;
	k = &m->kcompactd[pgdat->node_id];
	if (!k->d.pgdat)
		return;
	cur = __atomic_load_n(&k->order, __ATOMIC_RELAXED);
	while (cur < order && !__atomic_compare_exchange_n(&k->order, &cur, order, true,
							   __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	node_daemon_wake(&k->d); /* its fence orders the order before its look at wake */
}

/*
 * kcompactd_quiesce - hold every kcompactd's passes off and wait for a running one to end, so
 * that nothing is isolated while lv_check() looks; kcompactd_resume() lets them go on (a
 * request made meanwhile is served then). Nests.
 * Context: no library lock held; may sleep.
 */
void kcompactd_quiesce(struct lv_machine *m)
{
	for (unsigned int nid = 0; m->kcompactd && nid < m->cfg.nr_nodes; nid++) {
		struct kcompactd *k = &m->kcompactd[nid];

		if (!k->d.pgdat)
			continue;
		pthread_mutex_lock(&k->d.lock);
		k->held++;
		pthread_mutex_unlock(&k->d.lock);
		while (__atomic_load_n(&k->d.busy, __ATOMIC_ACQUIRE))
			usleep(200);
	}
}

void kcompactd_resume(struct lv_machine *m)
{
	for (unsigned int nid = 0; m->kcompactd && nid < m->cfg.nr_nodes; nid++) {
		struct kcompactd *k = &m->kcompactd[nid];

		if (!k->d.pgdat)
			continue;
		pthread_mutex_lock(&k->d.lock);
		k->held--;
		pthread_cond_signal(&k->d.wait);
		pthread_mutex_unlock(&k->d.lock);
	}
}

/**
 * kcompactd_start - start a kcompactd thread per node unless cfg.no_kcompactd; a node whose
 * thread cannot be created runs without one.
 * Return: 0 or -ENOMEM.
 * Context: machine creation; may block.
 */
int kcompactd_start(struct lv_machine *m)
{
	if (m->cfg.no_kcompactd)
		return 0;
	m->kcompactd = calloc(m->cfg.nr_nodes, sizeof(*m->kcompactd));
	return node_daemons_start(m, m->kcompactd, sizeof(*m->kcompactd),
				  offsetof(struct kcompactd, d), kcompactd_thread, "kcompactd");
}

/**
 * kcompactd_stop - stop and join the kcompactd threads; a running pass stops at its next look
 * at d.stop (compact_finished(), between batches).
 * Context: machine teardown or a failed creation, nobody left allocating; may block.
 */
void kcompactd_stop(struct lv_machine *m)
{
	node_daemons_stop(m, m->kcompactd, sizeof(*m->kcompactd), offsetof(struct kcompactd, d));
	m->kcompactd = NULL;
}
