// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Nodes, the memmap, the buddy allocator and per-CPU page lists.
 *
 * Each node owns an arena of real frames (mmap()ed and faulted in up front, so that no
 * benchmark pays for first touches) and a memmap of one 64-byte descriptor per frame. Free
 * frames live in a buddy allocator of orders 0..LV_MAX_ORDER under the zone lock; order-0
 * frames are cached in per-(CPU slot, node) lists under their own lock, refilled and trimmed
 * a batch at a time, as the kernel's pcp lists are. A batch of frees keeps one of these locks
 * across consecutive frames that need it (struct free_locks). The allocator is never entered
 * with an LRU lock held (lockdep-lite checks it): frees happen after the lruvec lock is
 * dropped.
 *
 * Watermarks min/low/high are computed like the kernel's min_free_kbytes; kswapd and direct
 * reclaim (vmscan.c) consume them. A large allocation that fails wakes kcompactd, and one
 * with FOLIO_ALLOC_COMPACT compacts first (compaction.c); compaction's free scanner takes free
 * blocks out of the buddy allocator here, under the zone lock, as its migration targets.
 */
#include "internal.h"

#include <math.h>
#include <string.h>
#include <sys/mman.h>

_Static_assert(sizeof(struct lv_folio) <= 64, "a frame descriptor must fit in 64 bytes");

#define PCP_BATCH 31
#define PCP_HIGH  (4 * PCP_BATCH)

static unsigned long folio_pfn(const struct lv_folio *f)
{
	return (unsigned long)(f - f->pgdat->memmap);
}

static void set_order(struct lv_folio *f, unsigned int order, unsigned long flags)
{
	/* The frame is exclusively ours (free or being allocated): a plain store is enough. */
	__atomic_store_n(&f->flags, flags | ((unsigned long)order << PG_ORDER_SHIFT),
			 __ATOMIC_RELAXED);
}

/* ---- buddy ---------------------------------------------------------------------------------- */

static void buddy_add(struct zone *zone, struct lv_folio *f, unsigned int order)
{
	lockdep_assert_held(&zone->lock);
	set_order(f, order, 1ul << PG_buddy);
	list_add(&f->lru, &zone->free_area[order]);
	/* Compaction reads the counts racily (free_block_exists()). */
	WRITE_ONCE(zone->nr_free_area[order], zone->nr_free_area[order] + 1);
}

static void buddy_del(struct zone *zone, struct lv_folio *f, unsigned int order)
{
	lockdep_assert_held(&zone->lock);
	list_del(&f->lru);
	WRITE_ONCE(zone->nr_free_area[order], zone->nr_free_area[order] - 1);
	set_order(f, 0, 0);
}

static void __free_one_block(struct pglist_data *pgdat, unsigned long pfn, unsigned int order)
{
	struct zone *zone = &pgdat->zone;

	lockdep_assert_held(&zone->lock);
	WRITE_ONCE(zone->free_pages, zone->free_pages + (1ul << order));
	while (order < LV_MAX_ORDER) {
		unsigned long buddy_pfn = pfn ^ (1ul << order);
		struct lv_folio *buddy = &pgdat->memmap[buddy_pfn];

		if (buddy_pfn + (1ul << order) > pgdat->nr_pages || !folio_test(buddy, PG_buddy) ||
		    folio_order(buddy) != order)
			break;
		buddy_del(zone, buddy, order);
		pfn &= ~(1ul << order);
		order++;
	}
	buddy_add(zone, &pgdat->memmap[pfn], order);
}

/* __rmqueue - take a block of @order, splitting a larger one. */
static struct lv_folio *__rmqueue(struct pglist_data *pgdat, unsigned int order)
{
	struct zone *zone = &pgdat->zone;

	lockdep_assert_held(&zone->lock);
	for (unsigned int o = order; o <= LV_MAX_ORDER; o++) {
		struct lv_folio *f;
		unsigned long pfn;

		if (list_empty(&zone->free_area[o]))
			continue;
		f = list_first_entry(&zone->free_area[o], struct lv_folio, lru);
		buddy_del(zone, f, o);
		pfn = folio_pfn(f);
		/* Give back the upper halves until the block has the wanted size. */
		while (o > order) {
			o--;
			buddy_add(zone, &pgdat->memmap[pfn + (1ul << o)], o);
		}
		WRITE_ONCE(zone->free_pages, zone->free_pages - (1ul << order));
		return f;
	}
	return NULL;
}

/* ---- per-CPU page lists --------------------------------------------------------------------- */

static struct per_cpu_pages *this_pcp(struct lv_machine *m, int nid)
{
	return &m->pcp[this_cpu_index(m) * m->cfg.nr_nodes + (unsigned int)nid];
}

/* pcp_refill - move up to PCP_BATCH frames from the buddy allocator to @pcp's list. */
static void pcp_refill(struct pglist_data *pgdat, struct per_cpu_pages *pcp)
{
	lockdep_assert_held(&pcp->lock);
	lv_lock_acquire_at(&pgdat->zone.lock, "rmqueue_bulk");
	for (int i = 0; i < PCP_BATCH; i++) {
		struct lv_folio *p = __rmqueue(pgdat, 0);

		if (!p)
			break;
		set_order(p, 0, 1ul << PG_pcp);
		list_add_tail(&p->lru, &pcp->list);
		WRITE_ONCE(pcp->count, pcp->count + 1);
	}
	lv_lock_release(&pgdat->zone.lock);
}

static struct lv_folio *rmqueue_pcp(struct pglist_data *pgdat)
{
	struct per_cpu_pages *pcp = this_pcp(pgdat->machine, pgdat->node_id);
	struct lv_folio *f = NULL;

	/*
	 * Only try the list's lock, as the kernel's pcp_spin_trylock(): its holder may be a thread
	 * preempted on this CPU slot, and waiting a time slice for it costs more than taking the
	 * frame from the buddy allocator.
	 */
	if (!lv_lock_trylock(&pcp->lock)) {
		lv_lock_acquire_at(&pgdat->zone.lock, "rmqueue");
		f = __rmqueue(pgdat, 0);
		lv_lock_release(&pgdat->zone.lock);
		return f;
	}
	if (list_empty(&pcp->list))
		pcp_refill(pgdat, pcp);
	if (!list_empty(&pcp->list)) {
		f = list_first_entry(&pcp->list, struct lv_folio, lru);
		list_del(&f->lru);
		WRITE_ONCE(pcp->count, pcp->count - 1);
	}
	lv_lock_release(&pcp->lock);
	return f;
}

/* free_pcp_pages - return @nr frames from the cold end of @pcp to the buddy allocator. */
static void free_pcp_pages(struct pglist_data *pgdat, struct per_cpu_pages *pcp, int nr)
{
	lockdep_assert_held(&pcp->lock);
	lv_lock_acquire_at(&pgdat->zone.lock, "free_pcppages_bulk");
	while (nr-- > 0 && !list_empty(&pcp->list)) {
		struct lv_folio *p = list_last_entry(&pcp->list, struct lv_folio, lru);

		list_del(&p->lru);
		WRITE_ONCE(pcp->count, pcp->count - 1);
		set_order(p, 0, 0);
		__free_one_block(pgdat, folio_pfn(p), 0);
	}
	lv_lock_release(&pgdat->zone.lock);
}

/*
 * drain_all_pages - return every slot's cached frames of @pgdat to the buddy allocator, so
 * that an allocation does not fail while free frames sit in another CPU's list (and so that
 * they can merge into larger blocks: compaction drains before and after it scans).
 * Return: true if any frame was returned.
 * Context: no LRU lock held; takes pcp locks one at a time, and under each the zone lock.
 */
bool drain_all_pages(struct pglist_data *pgdat)
{
	struct lv_machine *m = pgdat->machine;
	bool drained = false;

	for (unsigned int s = 0; s < m->nr_slots; s++) {
		struct per_cpu_pages *pcp =
			&m->pcp[s * m->cfg.nr_nodes + (unsigned int)pgdat->node_id];

		lv_lock_acquire(&pcp->lock);
		if (pcp->count) {
			free_pcp_pages(pgdat, pcp, pcp->count);
			drained = true;
		}
		lv_lock_release(&pcp->lock);
	}
	return drained;
}

/*
 * drain_local_pages - the same for this slot's list of @pgdat only: where compaction has just
 * freed the folios it migrated, so that they merge with their free neighbours.
 * Context: as drain_all_pages().
 */
void drain_local_pages(struct pglist_data *pgdat)
{
	struct per_cpu_pages *pcp = this_pcp(pgdat->machine, pgdat->node_id);

	lv_lock_acquire(&pcp->lock);
	if (pcp->count)
		free_pcp_pages(pgdat, pcp, pcp->count);
	lv_lock_release(&pcp->lock);
}

static struct lv_folio *rmqueue(struct pglist_data *pgdat, unsigned int order)
{
	struct lv_folio *f;

	if (order == 0) {
		f = rmqueue_pcp(pgdat);
	} else {
		lv_lock_acquire_at(&pgdat->zone.lock, "rmqueue");
		f = __rmqueue(pgdat, order);
		lv_lock_release(&pgdat->zone.lock);
	}
	/*
	 * Every attempt, after its take, asks kswapd if the zone is below low: so the allocation
	 * that takes the zone below the mark is the one that asks, wherever in the slow path it
	 * took (wakeup_kswapd() orders our take before its look at kswapd).
	 */
	if (READ_ONCE(pgdat->zone.free_pages) < pgdat->zone.watermark[WMARK_LOW])
		wakeup_kswapd(pgdat);
	return f;
}

/*
 * The locks free_folios() keeps across a batch, at most one at a time: the page list of this
 * slot for one node, or one node's zone lock. A reclaim batch of large folios then takes the
 * zone lock once instead of once per folio. The kernel takes it per folio for orders its page
 * lists do not hold, but its holders cannot be preempted; here every acquisition is a chance
 * to queue behind a preempted holder (docs/design.md, decision 15).
 */
struct free_locks {
	struct per_cpu_pages *pcp;
	struct zone *zone;
};

static void free_locks_release(struct free_locks *held)
{
	if (held->pcp)
		lv_lock_release(&held->pcp->lock);
	if (held->zone)
		lv_lock_release(&held->zone->lock);
	*held = (struct free_locks){ 0 };
}

/*
 * free_frames - give frames back: order 0 to this slot's list for the frame's node, larger
 * blocks to the buddy allocator, keeping in *@held the lock the next frame will likely need.
 */
static void free_frames(struct lv_folio *f, unsigned int order, struct free_locks *held)
{
	struct pglist_data *pgdat = f->pgdat;

	lockdep_assert_no_lru_lock();
	if (order == 0) {
		struct per_cpu_pages *pcp = this_pcp(pgdat->machine, pgdat->node_id);

		if (held->pcp != pcp) {
			/* The zone lock ranks below the page lists: never wait for one under it. */
			free_locks_release(held);
			/* As in rmqueue_pcp(): a busy list sends the frame to the buddy allocator.
			 */
			if (!lv_lock_trylock(&pcp->lock)) {
				lv_lock_acquire_at(&pgdat->zone.lock, "free_one_page");
				set_order(f, 0, 0);
				__free_one_block(pgdat, folio_pfn(f), 0);
				lv_lock_release(&pgdat->zone.lock);
				return;
			}
			held->pcp = pcp;
		}
		set_order(f, 0, 1ul << PG_pcp);
		list_add(&f->lru, &pcp->list);
		WRITE_ONCE(pcp->count, pcp->count + 1);
		if (pcp->count > PCP_HIGH)
			free_pcp_pages(pgdat, pcp, PCP_BATCH);
		return;
	}
	if (held->zone != &pgdat->zone) {
		free_locks_release(held);
		lv_lock_acquire_at(&pgdat->zone.lock, "free_one_page");
		held->zone = &pgdat->zone;
	}
	set_order(f, 0, 0);
	__free_one_block(pgdat, folio_pfn(f), order);
}

unsigned long node_free_pages(struct pglist_data *pgdat)
{
	struct lv_machine *m = pgdat->machine;
	unsigned long nr = READ_ONCE(pgdat->zone.free_pages);

	for (unsigned int s = 0; s < m->nr_slots; s++)
		nr += (unsigned long)READ_ONCE(
			m->pcp[s * m->cfg.nr_nodes + (unsigned)pgdat->node_id].count);
	return nr;
}

/* ---- the allocation slow path ------------------------------------------------------------- */

#define MAX_RECLAIM_RETRIES 16
#define COMPACT_PRIORITIES  2 /* direct compaction attempts: asynchronous, then waiting */

/*
 * alloc_pages_direct_compact - the rest of the slow path of an order > 0 allocation with
 * FOLIO_ALLOC_COMPACT (a huge page fault's defrag) that found no free block: compact the node
 * and retry, the first time giving up at the first LRU lock compaction would wait for (the
 * kernel's asynchronous priority), then waiting for them. Where the node lacks the free
 * memory to make a block (compaction_suitable()), reclaim some first, as the kernel's path
 * for costly orders alternates the two. No reclaim loop beyond that: the caller can do with
 * small pages, and evicting for a block that compaction cannot make would be in vain.
 * Context: no library lock held.
 */
static struct lv_folio *alloc_pages_direct_compact(struct pglist_data *pgdat, unsigned int order,
						   struct lruvec *stall)
{
	struct lv_folio *f = NULL;

	for (int prio = 0; prio < COMPACT_PRIORITIES && !f; prio++) {
		if (!compaction_suitable(pgdat, order)) {
			lruvec_count_event_atomic(stall, EV_ALLOCSTALL, 1);
			try_to_free_pages(pgdat->machine, NULL, pgdat->node_id, 2ul << order);
		}
		try_to_compact_node(pgdat, order, prio == 0);
		f = rmqueue(pgdat, order);
	}
	return f;
}

/*
 * alloc_pages_slowpath - allocate, waking kswapd below the low watermark and reclaiming
 * directly below the min watermark or when the node is out of blocks: rmqueue() asks kswapd
 * after every attempt, and we ask before reclaiming directly, so that it reclaims beside us.
 * A large allocation with FOLIO_ALLOC_LIGHT neither reclaims nor compacts (it only returns the
 * per-CPU lists' frames to the buddy allocator); one with
 * FOLIO_ALLOC_COMPACT compacts (alloc_pages_direct_compact()). Every large allocation that
 * fails wakes kcompactd, which makes such blocks for the next one (a large page cache folio
 * or a huge page falling back to small pages, the kernel's wakeup_kcompactd()).
 * Context: no library lock held (reclaim takes LRU and mapping locks, compaction those and
 * the owners').
 */
static struct lv_folio *alloc_pages_slowpath(struct pglist_data *pgdat, unsigned int order,
					     struct lv_memcg *memcg, unsigned int flags)
{
	struct lv_machine *m = pgdat->machine;
	unsigned long free = READ_ONCE(pgdat->zone.free_pages);
	struct lruvec *stall = mem_cgroup_lruvec(memcg, pgdat);
	bool drained = false;
	struct lv_folio *f;

	if (order && (flags & FOLIO_ALLOC_LIGHT)) {
		/* Frames waiting in the per-CPU lists keep their buddies from merging; returning
		 * them costs no reclaim, so even a light allocation does it once. */
		f = rmqueue(pgdat, order);
		if (!f && drain_all_pages(pgdat))
			f = rmqueue(pgdat, order);
		goto out;
	}
	if (flags & FOLIO_ALLOC_NORETRY) {
		/* One direct reclaim pass at most, then give up (__GFP_NORETRY). */
		if (free < pgdat->zone.watermark[WMARK_MIN] + (1ul << order) ||
		    !(f = rmqueue(pgdat, order))) {
			wakeup_kswapd(pgdat);
			lruvec_count_event_atomic(stall, EV_ALLOCSTALL, 1);
			try_to_free_pages(m, NULL, pgdat->node_id, 1ul << order);
			f = rmqueue(pgdat, order);
		}
		goto out;
	}
	if (free < pgdat->zone.watermark[WMARK_MIN]) {
		wakeup_kswapd(pgdat);
		lruvec_count_event_atomic(stall, EV_ALLOCSTALL, 1);
		try_to_free_pages(m, NULL, pgdat->node_id, 1ul << order);
	}
	f = rmqueue(pgdat, order);
	if (!f && order && (flags & FOLIO_ALLOC_COMPACT)) {
		f = alloc_pages_direct_compact(pgdat, order, stall);
		goto out;
	}
	for (int retries = MAX_RECLAIM_RETRIES; !f && retries; retries--) {
		/* Frames stranded in other slots' lists come first: they cost no reclaim. */
		if (!drain_all_pages(pgdat)) {
			unsigned long freed;

			lruvec_count_event_atomic(stall, EV_ALLOCSTALL, 1);
			freed = try_to_free_pages(m, NULL, pgdat->node_id, 1ul << order);
			if (!freed && !drained) {
				/* Page cache queued in other CPUs' batches is on no list yet. */
				lru_add_drain_scope(m, NULL, pgdat->node_id);
				lruvec_count_event_atomic(stall, EV_RECLAIM_DRAIN, 1);
				drained = true;
			} else if (!freed && retries < MAX_RECLAIM_RETRIES - 2) {
				break; /* no progress twice: out of memory */
			}
		}
		f = rmqueue(pgdat, order);
	}
out:
	if (!f && order)
		wakeup_kcompactd(pgdat, order);
	return f;
}

/*
 * arena_map - the node's physical memory: anonymous memory aligned to 2 MiB and backed by
 * transparent huge pages where the system allows it, as the kernel's direct map uses large
 * pages (frames touched one after another must not each cost a TLB miss), faulted in now so
 * that no benchmark pays for first touches.
 */
static char *arena_map(size_t bytes)
{
	const size_t huge = 2ul << 20;
	char *p = mmap(NULL, bytes + huge, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	char *aligned;

	if (p == MAP_FAILED)
		return NULL;
	aligned = (char *)(((uintptr_t)p + huge - 1) & ~(huge - 1));
	if (aligned > p)
		munmap(p, (size_t)(aligned - p));
	munmap(aligned + bytes, (size_t)(p + huge - aligned));
	madvise(aligned, bytes, MADV_HUGEPAGE); /* advice only: fine if refused */
	for (size_t off = 0; off < bytes; off += LV_PAGE_SIZE)
		((volatile char *)aligned)[off] = 0;
	return aligned;
}

/* ---- folios --------------------------------------------------------------------------------- */

/*
 * prep_new_folio - make the free block at @f, ours alone, a folio of 2^@order pages with one
 * reference, bound to @memcg, flags @flags besides PG_head.
 */
static void prep_new_folio(struct lv_folio *f, unsigned int order, struct lv_memcg *memcg,
			   unsigned long flags)
{
	f->mlock_count = 0;
	f->mapping = NULL;
	f->index = 0;
	f->lru.next = LIST_POISON1;
	f->lru.prev = LIST_POISON2;
	folio_bind_memcg(f, memcg);
	__atomic_store_n(&f->_refcount, 1, __ATOMIC_RELAXED);
	set_order(f, order, (1ul << PG_head) | flags);
}

struct lv_folio *lv_folio_alloc(struct lv_machine *m, int nid, unsigned int order,
				struct lv_memcg *memcg, unsigned int flags)
{
	if (!m || !node_valid(m, nid) || order > LV_MAX_ORDER ||
	    (flags & ~(LV_FOLIO_ANON | LV_FOLIO_ZERO))) {
		errno = EINVAL;
		return NULL;
	}
	return folio_alloc(m, nid, order, memcg, flags);
}

/*
 * folio_alloc - lv_folio_alloc() for callers inside the library, which may also pass
 * FOLIO_ALLOC_NORETRY: one reclaim pass at most, for the charge and for the block, then give
 * up (the kernel's __GFP_NORETRY: the caller can do with a smaller folio).
 */
struct lv_folio *folio_alloc(struct lv_machine *m, int nid, unsigned int order,
			     struct lv_memcg *memcg, unsigned int flags)
{
	struct pglist_data *pgdat = m->nodes[nid];
	struct lv_folio *f;
	int err;

	if (mem_cgroup_disabled(m)) {
		memcg = NULL;
	} else {
		if (!memcg)
			memcg = m->root;
		err = mem_cgroup_charge(m, memcg, 1l << order, flags & FOLIO_ALLOC_NORETRY);
		if (err) {
			errno = -err;
			return NULL;
		}
	}

	f = folio_alloc_charged(pgdat, order, memcg, flags);
	if (!f) {
		if (memcg)
			mem_cgroup_uncharge(memcg, 1l << order);
		errno = ENOMEM;
	}
	return f;
}

/*
 * rmqueue_pcp_bulk - up to @nr order-0 frames from this slot's page list of @pgdat in one hold
 * of its lock, refilled from the buddy allocator as it runs dry, into @out; none if the node is
 * below its min watermark or the list's lock is held (its holder may be preempted: the caller
 * falls back to one frame at a time). Return: how many.
 */
static unsigned int rmqueue_pcp_bulk(struct pglist_data *pgdat, unsigned int nr,
				     struct lv_folio **out)
{
	struct per_cpu_pages *pcp = this_pcp(pgdat->machine, pgdat->node_id);
	unsigned int n = 0;

	if (READ_ONCE(pgdat->zone.free_pages) < pgdat->zone.watermark[WMARK_MIN] + nr ||
	    !lv_lock_trylock(&pcp->lock))
		return 0;
	while (n < nr) {
		if (list_empty(&pcp->list)) {
			pcp_refill(pgdat, pcp);
			if (list_empty(&pcp->list))
				break;
		}
		out[n] = list_first_entry(&pcp->list, struct lv_folio, lru);
		list_del(&out[n]->lru);
		WRITE_ONCE(pcp->count, pcp->count - 1);
		n++;
	}
	lv_lock_release(&pcp->lock);
	if (READ_ONCE(pgdat->zone.free_pages) < pgdat->zone.watermark[WMARK_LOW])
		wakeup_kswapd(pgdat);
	return n;
}

/**
 * folios_alloc_bulk - up to @nr order-0 folios of node @nid charged to @memcg, into @folios,
 * for readahead: one charge (one reclaim pass at most, as FOLIO_ALLOC_NORETRY) and one hold
 * of this slot's page list for all of them, where folio_alloc() would take both @nr times.
 * It never reclaims for frames: below the min watermark it gets none, and the caller goes on
 * one folio at a time. Return: how many (0..@nr), each with one reference.
 * Context: no library lock held (the charge may reclaim).
 */
unsigned int folios_alloc_bulk(struct lv_machine *m, int nid, struct lv_memcg *memcg,
			       unsigned int nr, struct lv_folio **folios)
{
	struct pglist_data *pgdat = m->nodes[nid];
	unsigned int n;

	if (mem_cgroup_disabled(m)) {
		memcg = NULL;
	} else {
		if (!memcg)
			memcg = m->root;
		if (mem_cgroup_charge(m, memcg, nr, true))
			return 0;
	}
	n = fault_inject(FAULT_FRAME) ? 0 : rmqueue_pcp_bulk(pgdat, nr, folios);
	for (unsigned int i = 0; i < n; i++)
		prep_new_folio(folios[i], 0, memcg, 0);
	if (memcg && n < nr)
		mem_cgroup_uncharge(memcg, nr - n);
	return n;
}

/*
 * folio_alloc_charged - allocate a folio bound to @memcg whose charge the caller already
 * holds (lv_folio_alloc() charged it; migration takes over the original's).
 * Return: the folio with one reference, or NULL.
 * Context: no library lock held (the slow path reclaims).
 */
struct lv_folio *folio_alloc_charged(struct pglist_data *pgdat, unsigned int order,
				     struct lv_memcg *memcg, unsigned int flags)
{
	struct lv_folio *f =
		fault_inject(FAULT_FRAME) ? NULL : alloc_pages_slowpath(pgdat, order, memcg, flags);

	if (!f)
		return NULL;
	prep_new_folio(f, order, memcg, flags & LV_FOLIO_ANON ? 1ul << PG_swapbacked : 0);
	if ((flags & LV_FOLIO_ZERO) && pgdat->frames)
		memset(lv_folio_data(f), 0, LV_PAGE_SIZE << order);
	return f;
}

/*
 * free_folios - uncharge and free folios whose last reference is gone and that are on no
 * list. Consecutive folios of one memcg share one uncharge.
 * Context: no LRU lock held (the final-put rule); takes pcp and zone locks.
 */
void free_folios(struct lv_folio **folios, unsigned int nr)
{
	struct free_locks held = { 0 }; /* one page-list or zone lock hold for a batch */
	struct obj_cgroup *objcg = NULL;
	long nr_pages = 0, nr_folios = 0;

	lockdep_assert_no_lru_lock();
	for (unsigned int i = 0; i < nr; i++) {
		struct lv_folio *f = folios[i];
		unsigned int order = folio_order(f);

		VM_BUG_ON_FOLIO(folio_ref_count(f) != 0 || folio_test_lru(f), f);
		if (folio_test_clear_isolated(f))
			folio_isolated_count(f, -folio_nr_pages(f));
		if (f->objcg != objcg) {
			if (objcg)
				objcg_uncharge_put(objcg, nr_pages, nr_folios);
			objcg = f->objcg;
			nr_pages = nr_folios = 0;
		}
		nr_pages += 1l << order;
		nr_folios++;
		WRITE_ONCE(f->objcg, NULL);
		f->mapping = NULL;
		free_frames(f, order, &held);
	}
	free_locks_release(&held);
	if (objcg)
		objcg_uncharge_put(objcg, nr_pages, nr_folios);
}

/* ---- compaction's free frames -------------------------------------------------------------- */

/*
 * Compaction's free scanner takes free blocks out of the buddy allocator as migration targets.
 * An isolated block's first frame keeps its order and no flag at all: neither free (nothing
 * allocates it, and no freed neighbour merges with it) nor a folio (no scanner takes a
 * reference on it). Isolated blocks live on the compactor's own lists, one per order, and
 * exist only while a compaction runs: lv_check() never sees one.
 */

/**
 * isolate_freepages_block - take every free block of an order below LV_MAX_ORDER in
 * [@start, @end) of @pgdat out of the buddy allocator, onto @lists[order]. A free block of
 * LV_MAX_ORDER is what compaction makes, never a target.
 * Return: the pages isolated.
 * Context: no LRU lock held (compaction never nests the zone lock and an lruvec lock); takes
 * the zone lock if the lockless look found a candidate.
 */
unsigned long isolate_freepages_block(struct pglist_data *pgdat, unsigned long start,
				      unsigned long end, struct list_head *lists)
{
	struct zone *zone = &pgdat->zone;
	unsigned long pfn, isolated = 0;

	/* Look without the lock first: most blocks the free scanner passes have nothing. */
	for (pfn = start; pfn < end; pfn++) {
		struct lv_folio *f = &pgdat->memmap[pfn];

		if (folio_test(f, PG_buddy) && folio_order(f) < LV_MAX_ORDER)
			break;
	}
	if (pfn == end)
		return 0;
	lv_lock_acquire(&zone->lock);
	while (pfn < end) {
		struct lv_folio *f = &pgdat->memmap[pfn];
		unsigned int order;

		if (!folio_test(f, PG_buddy)) {
			pfn++;
			continue;
		}
		order = folio_order(f); /* stable: we hold the zone lock */
		if (order < LV_MAX_ORDER) {
			buddy_del(zone, f, order);
			set_order(f, order, 0);
			WRITE_ONCE(zone->free_pages, zone->free_pages - (1ul << order));
			list_add_tail(&f->lru, &lists[order]);
			isolated += 1ul << order;
		}
		pfn += 1ul << order;
	}
	lv_lock_release(&zone->lock);
	return isolated;
}

/**
 * take_isolated_free - an isolated block of exactly 2^@order pages from @lists, splitting a
 * larger one (the upper halves go back on @lists).
 * Return: its first frame, or NULL if @lists hold nothing that large.
 * Context: @lists are the caller's; no lock.
 */
struct lv_folio *take_isolated_free(struct list_head *lists, unsigned int order)
{
	for (unsigned int o = order; o <= LV_MAX_ORDER; o++) {
		struct lv_folio *f;
		unsigned long pfn;

		if (list_empty(&lists[o]))
			continue;
		f = list_first_entry(&lists[o], struct lv_folio, lru);
		list_del(&f->lru);
		pfn = folio_pfn(f);
		while (o > order) {
			struct lv_folio *half = &f->pgdat->memmap[pfn + (1ul << --o)];

			set_order(half, o, 0);
			list_add(&half->lru, &lists[o]);
		}
		set_order(f, order, 0);
		return f;
	}
	return NULL;
}

/**
 * release_isolated_free - give every block on @lists back to the buddy allocator, where it
 * merges with its free neighbours.
 * Context: no LRU lock held; takes the zone lock.
 */
void release_isolated_free(struct pglist_data *pgdat, struct list_head *lists)
{
	bool locked = false;

	for (unsigned int o = 0; o <= LV_MAX_ORDER; o++) {
		while (!list_empty(&lists[o])) {
			struct lv_folio *f = list_first_entry(&lists[o], struct lv_folio, lru);

			if (!locked) {
				lv_lock_acquire(&pgdat->zone.lock);
				locked = true;
			}
			list_del(&f->lru);
			set_order(f, 0, 0);
			__free_one_block(pgdat, folio_pfn(f), o);
		}
	}
	if (locked)
		lv_lock_release(&pgdat->zone.lock);
}

/**
 * prep_migration_target - make the isolated block @f of 2^@order pages a migration target:
 * a folio with one reference, bound to @memcg without a charge (the original's moves to it).
 * Return: the folio.
 * Context: @f is the caller's (taken with take_isolated_free()).
 */
struct lv_folio *prep_migration_target(struct lv_folio *f, unsigned int order,
				       struct lv_memcg *memcg)
{
	prep_new_folio(f, order, memcg, 0);
	return f;
}

/**
 * return_migration_target - a target that was not used (the migration failed) goes back on
 * @lists, isolated again. Never published, it may still carry the speculative reference of a
 * scanner that found it in the memmap: then it is freed like any folio when that reference
 * goes, which loses the frame to compaction but nothing else.
 * Context: no LRU lock held; @new was prepared by prep_migration_target() and holds no charge.
 */
void return_migration_target(struct lv_folio *new, struct list_head *lists)
{
	unsigned int order = folio_order(new);

	folio_unbind(new); /* it holds no charge: its free must not uncharge */
	if (!folio_ref_freeze(new, 1)) {
		lv_folio_put(new);
		return;
	}
	set_order(new, order, 0);
	list_add(&new->lru, &lists[order]);
}

/**
 * free_block_exists - whether the buddy allocator of @pgdat has a free block of 2^@order pages
 * or more (order 0: any free frame, per-CPU lists included). Racy.
 * Context: any; lock-free.
 */
bool free_block_exists(struct pglist_data *pgdat, unsigned int order)
{
	if (order == 0)
		return node_free_pages(pgdat) != 0;
	for (unsigned int o = order; o <= LV_MAX_ORDER; o++)
		if (READ_ONCE(pgdat->zone.nr_free_area[o]))
			return true;
	return false;
}

/**
 * fill_contig_page_info - count @pgdat's free blocks for an allocation of 2^@order pages, as
 * the kernel's fill_contig_page_info() (per-CPU lists, which cannot serve a large allocation,
 * are left out).
 * Context: no LRU lock held; takes the zone lock.
 */
void fill_contig_page_info(struct pglist_data *pgdat, unsigned int order,
			   struct contig_page_info *info)
{
	*info = (struct contig_page_info){ 0 };
	lv_lock_acquire(&pgdat->zone.lock);
	for (unsigned int o = 0; o <= LV_MAX_ORDER; o++) {
		unsigned long blocks = pgdat->zone.nr_free_area[o];

		info->free_blocks_total += blocks;
		info->free_pages += blocks << o;
		if (o >= order)
			info->free_blocks_suitable += blocks << (o - order);
	}
	lv_lock_release(&pgdat->zone.lock);
}

void *lv_folio_data(struct lv_folio *folio)
{
	struct pglist_data *pgdat = folio->pgdat;

	if (!pgdat->frames)
		return NULL;
	return pgdat->frames + folio_pfn(folio) * LV_PAGE_SIZE;
}

/* ---- nodes ---------------------------------------------------------------------------------- */

void lruvec_init(struct lruvec *lruvec, struct pglist_data *pgdat, struct lv_memcg *memcg)
{
	struct lv_machine *m = pgdat->machine;

	memset(lruvec, 0, sizeof(*lruvec));
	for (int l = 0; l < NR_LRU_LISTS; l++)
		INIT_LIST_HEAD(&lruvec->lists[l]);
	lruvec->pgdat = pgdat;
	lruvec->memcg = memcg;
	lv_lock_init(&lruvec->own_lock, m->cfg.lock_backend, LV_LOCK_CLASS_LRUVEC, m->lock_sites);
	lv_lock_init(&lruvec->shadow_lock, m->cfg.lock_backend, LV_LOCK_CLASS_SHADOW,
		     m->lock_sites);
	lv_lock_init(&lruvec->cost_lock, m->cfg.lock_backend, LV_LOCK_CLASS_COST, m->lock_sites);
	INIT_LIST_HEAD(&lruvec->shadow_nodes);
	INIT_LIST_HEAD(&lruvec->objcg_list);
	/*
	 * The baseline design shares the node's lock; the code paths are otherwise identical, so
	 * the comparison measures the lock split and nothing else.
	 */
	if (memcg && m->cfg.lock_design == LV_LOCK_LRUVEC)
		lruvec->lru_lock = &lruvec->own_lock;
	else
		lruvec->lru_lock = &pgdat->lru_lock;
}

int node_init(struct lv_machine *m, int nid)
{
	unsigned long nr_pages = m->cfg.node_mem_bytes / LV_PAGE_SIZE;
	struct pglist_data *pgdat;
	unsigned long min_pages;

	pgdat = aligned_alloc(64, sizeof(*pgdat));
	if (!pgdat)
		return -ENOMEM;
	memset(pgdat, 0, sizeof(*pgdat));
	pgdat->node_id = nid;
	pgdat->machine = m;
	pgdat->nr_pages = nr_pages;
	pgdat->memmap = aligned_alloc(64, nr_pages * sizeof(struct lv_folio));
	if (!pgdat->memmap)
		goto fail;
	memset(pgdat->memmap, 0, nr_pages * sizeof(struct lv_folio));
	/* Touched only where swap cache folios live: calloc's pages stay unmapped until then. */
	pgdat->swap_slot = calloc(nr_pages, sizeof(*pgdat->swap_slot));
	if (!pgdat->swap_slot)
		goto fail;
	pgdat->memcg_levels = calloc((DEF_PRIORITY + 1) * MEMCG_LEVEL_STRIDE, sizeof(long));
	if (!pgdat->memcg_levels)
		goto fail;
	if (!m->cfg.metadata_only) {
		pgdat->frames = arena_map(nr_pages * LV_PAGE_SIZE);
		if (!pgdat->frames)
			goto fail;
	}
	lv_lock_init(&pgdat->zone.lock, m->cfg.lock_backend, LV_LOCK_CLASS_ZONE, m->lock_sites);
	lv_lock_init(&pgdat->lru_lock, m->cfg.lock_backend, LV_LOCK_CLASS_NODE, m->lock_sites);
	drain_gate_init(m, &pgdat->drain);
	lruvec_init(&pgdat->__lruvec, pgdat, NULL);
	for (int o = 0; o <= LV_MAX_ORDER; o++)
		INIT_LIST_HEAD(&pgdat->zone.free_area[o]);

	/* min_free_kbytes = sqrt(16 * memory in KiB), as the kernel sizes it. */
	min_pages = (unsigned long)sqrt(16.0 * (double)(nr_pages * 4)) / 4;
	if (min_pages < 32)
		min_pages = 32;
	pgdat->zone.watermark[WMARK_MIN] = min_pages;
	pgdat->zone.watermark[WMARK_LOW] = min_pages * 5 / 4;
	pgdat->zone.watermark[WMARK_HIGH] = min_pages * 3 / 2;

	lv_lock_acquire(&pgdat->zone.lock);
	for (unsigned long pfn = 0; pfn < nr_pages; pfn++)
		pgdat->memmap[pfn].pgdat = pgdat;
	for (unsigned long pfn = 0; pfn < nr_pages;) {
		unsigned int order = LV_MAX_ORDER;

		while ((pfn & ((1ul << order) - 1)) || pfn + (1ul << order) > nr_pages)
			order--;
		__free_one_block(pgdat, pfn, order);
		pfn += 1ul << order;
	}
	lv_lock_release(&pgdat->zone.lock);
	m->nodes[nid] = pgdat;
	return 0;
fail:
	free(pgdat->memcg_levels);
	free(pgdat->swap_slot);
	free(pgdat->memmap);
	free(pgdat);
	return -ENOMEM;
}

void node_exit(struct lv_machine *m, int nid)
{
	struct pglist_data *pgdat = m->nodes[nid];

	if (!pgdat)
		return;
	if (pgdat->frames)
		munmap(pgdat->frames, pgdat->nr_pages * LV_PAGE_SIZE);
	lv_lock_destroy(&pgdat->zone.lock);
	lv_lock_destroy(&pgdat->lru_lock);
	lv_lock_destroy(&pgdat->drain.mutex);
	lv_lock_destroy(&pgdat->__lruvec.own_lock);
	lv_lock_destroy(&pgdat->__lruvec.shadow_lock);
	lv_lock_destroy(&pgdat->__lruvec.cost_lock);
	free(pgdat->memcg_levels);
	free(pgdat->swap_slot);
	free(pgdat->memmap);
	free(pgdat);
	m->nodes[nid] = NULL;
}

/* pcp_init - allocate the per-(slot, node) page lists. */
int pcp_init(struct lv_machine *m)
{
	size_t n = (size_t)m->nr_slots * m->cfg.nr_nodes;

	m->pcp = aligned_alloc(64, n * sizeof(*m->pcp));
	if (!m->pcp)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		memset(&m->pcp[i], 0, sizeof(m->pcp[i]));
		lv_lock_init(&m->pcp[i].lock, m->cfg.lock_backend, LV_LOCK_CLASS_PCP,
			     m->lock_sites);
		INIT_LIST_HEAD(&m->pcp[i].list);
	}
	return 0;
}

/* pcp_exit - return every cached frame to the buddy allocator and free the lists. */
void pcp_exit(struct lv_machine *m)
{
	if (!m->pcp)
		return;
	for (unsigned int s = 0; s < m->nr_slots; s++) {
		for (unsigned int nid = 0; nid < m->cfg.nr_nodes; nid++) {
			struct per_cpu_pages *pcp = &m->pcp[s * m->cfg.nr_nodes + nid];

			lv_lock_acquire(&pcp->lock);
			free_pcp_pages(m->nodes[nid], pcp, pcp->count);
			lv_lock_release(&pcp->lock);
			lv_lock_destroy(&pcp->lock);
		}
	}
	free(m->pcp);
	m->pcp = NULL;
}
