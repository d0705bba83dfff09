// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The swap cache, swap-out, swap-in and swapoff's walk (the kernel's swap_state.c, with the
 * pieces of vmscan.c, memory.c and swapfile.c that drive them).
 *
 * Theory of operation.
 *
 * Each swap device has a swap cache: a radix tree indexed by slot offset (filemap.c's tree,
 * with its lock-free lookup and its shadow entries), holding the folios whose data is being
 * written to or read from a slot, or is on the device and still in memory. A folio in it has
 * PG_swapcache, its slot in pgdat->swap_slot[], and one reference held by the tree; the slot's
 * swap_map byte has SWAP_HAS_CACHE. Anon folios are private to one mm (there is no fork), so
 * a slot has at most one page table user besides the cache.
 *
 * The folio lock (PG_locked) serializes the two directions for one folio: reclaim holds it from
 * the moment it gives the folio a slot until the folio is freed or given back; a swap-in holds
 * it from the moment its new folio enters the cache until the read is done, and again while it
 * maps a folio it found there. A fault that finds a locked folio in the cache waits for the
 * lock, then re-checks that the folio is still the cache's folio for its slot.
 *
 * A mapped folio is in the swap cache only inside swap_out_folio(), between entering the cache
 * and its unmap (or its removal, if it cannot be unmapped), and inside do_swap_page(), between
 * its mapping and its removal, with its lock held: so every clean folio in the cache holds
 * what its slot holds.
 *
 * Swap-out of an isolated order-0 folio (swap_out_folio(), called by shrink_folio_list()):
 * lock; get a slot (charging the memcg's swap) and enter the cache; under the mm's
 * page_table_lock, replace the page table entry by the swap entry (its use count goes to 1);
 * write; then, under the tree's lock, freeze the count from exactly 2 (the tree's and the
 * isolation's) and replace the folio by a shadow entry. A folio new to the cache is written
 * whatever its PG_dirty says (LV_MADV_FREE may clean it until the unmap), one found there only
 * if a failed write left it dirty. A fault that arrives meanwhile holds a reference, so the
 * freeze fails and the folio stays in the cache, clean, for that fault to map. A write error
 * puts the page table entry back (if the page is still there), takes the folio out of the
 * cache, frees the slot and keeps the folio dirty and active: nothing was lost, and the next
 * reclaim pass tries again.
 * The RCU read-side section that found the mm is held across the write so that the mm stays
 * valid for that: liburcu's bp flavour allows a reader to block.
 *
 * Swap-in (do_swap_page()): find the folio in the cache, or claim the slot for the cache
 * (swapcache_prepare()), allocate a folio charged to the memcg the slot is charged to (the
 * faulting mm's if none), enter it locked, add it to the LRU and read it; neighbours of the
 * slot in the aligned block of the read-ahead window are read the same way and left in the
 * cache, unlocked, marked PG_reclaim (the kernel's PG_readahead) to count a later hit. The
 * window adapts as the kernel's: it is one page unless read-ahead pages were hit since the
 * last window or the fault is next to the previous one, grows with the hits up to
 * 2^page_cluster, and shrinks by at most half at a time.
 * Mapping takes the folio out of the cache and frees the slot: the page table entry was its
 * only user, and a page written after swap-in would make the slot's copy stale anyway.
 * A shadow entry found at the slot is a refault: workingset_refault() decides its activation.
 *
 * Lock order: page_table_lock > the tree's mapping lock > the device's locks (swapfile.c),
 * and the folio lock is taken with none of them held except by trylock (free_swap_and_cache()
 * under a page_table_lock).
 */
#include "internal.h"
#include "mm_inline.h"
#include "mm_types.h"
#include "swap.h"

#include <sched.h>
#include <unistd.h>

static unsigned long folio_pfn_index(const struct lv_folio *folio)
{
	return (unsigned long)(folio - folio->pgdat->memmap);
}

swp_entry_t folio_swap_entry(const struct lv_folio *folio)
{
	return (swp_entry_t){ READ_ONCE(folio->pgdat->swap_slot[folio_pfn_index(folio)]) };
}

static bool folio_test_swapcache(const struct lv_folio *folio)
{
	return folio_test(folio, PG_swapcache);
}

/*
 * swapcache_count - NR_SWAPCACHE of @folio's node moves by @nr. Per node only: PG_swapcache
 * changes under the tree's lock, not the lruvec's, so a per-lruvec count could not follow a
 * folio whose charge moves.
 */
static void swapcache_count(struct lv_folio *folio, long nr)
{
	__atomic_fetch_add(&folio->pgdat->nr_swapcache, (unsigned long)nr, __ATOMIC_RELAXED);
}

/*
 * add_to_swap_cache - enter @folio, which the caller owns and has locked, into the cache at
 * @e, whose SWAP_HAS_CACHE the caller holds. The tree takes a reference. Return: 0 or -ENOMEM
 * (a tree node); *@shadowp: the shadow entry it replaced, or NULL.
 */
static int add_to_swap_cache(struct lv_folio *folio, swp_entry_t e, void **shadowp)
{
	struct lv_file *space = swap_address_space(e);
	int err;

	WRITE_ONCE(folio->pgdat->swap_slot[folio_pfn_index(folio)], e.val);
	folio_get(folio);
	lv_lock_acquire(mapping_lock(space));
	err = swap_cache_insert(space, swp_offset(e), folio, shadowp);
	if (!err)
		folio_set(folio, PG_swapcache);
	lv_lock_release(mapping_lock(space));
	if (err) {
		folio_put_testzero(folio); /* the caller's reference remains */
		return err;
	}
	swapcache_count(folio, 1);
	return 0;
}

/*
 * __delete_from_swap_cache - take @folio out of the cache, leaving @shadow (or nothing) in
 * its slot. The tree's reference becomes the caller's to drop, and the slot's SWAP_HAS_CACHE
 * is released.
 * Context: mapping_lock of @folio's tree held; the caller holds the folio lock, or the
 * folio's count is frozen.
 */
static void __delete_from_swap_cache(struct lv_file *space, struct lv_folio *folio, swp_entry_t e,
				     void *shadow)
{
	bool erased;

	lockdep_assert_held(mapping_lock(space));
	erased = swap_cache_erase(space, swp_offset(e), folio, shadow);
	VM_BUG_ON_FOLIO(!erased, folio);
	folio_clear(folio, PG_swapcache);
}

/* delete_from_swap_cache - the same, taking the lock; then drops the tree's reference. */
static void delete_from_swap_cache(struct lv_folio *folio)
{
	swp_entry_t e = folio_swap_entry(folio);
	struct lv_file *space = swap_address_space(e);
	bool last;

	lv_lock_acquire(mapping_lock(space));
	__delete_from_swap_cache(space, folio, e, NULL);
	lv_lock_release(mapping_lock(space));
	put_swap_folio(e);
	swapcache_count(folio, -1);
	last = folio_put_testzero(folio);
	VM_BUG_ON_FOLIO(last, folio); /* the caller holds one */
}

/*
 * swap_cache_get - the folio the cache holds for @e, with a reference, or NULL (nothing, or
 * a shadow entry, returned in *@shadowp if asked).
 */
static struct lv_folio *swap_cache_get(struct lv_file *space, swp_entry_t e, void **shadowp)
{
	for (;;) {
		struct lv_folio *folio;
		void **slot;

		rcu_read_lock();
		folio = swap_cache_load(space, swp_offset(e), &slot);
		if (!folio || ((uintptr_t)folio & 1)) {
			rcu_read_unlock();
			if (shadowp)
				*shadowp = folio;
			return NULL;
		}
		if (!folio_try_get(folio)) {
			rcu_read_unlock();
			continue; /* being freed: the slot holds a shadow shortly */
		}
		if (rcu_dereference_lv(*slot) != folio) {
			rcu_read_unlock();
			lv_folio_put(folio);
			continue;
		}
		rcu_read_unlock();
		return folio;
	}
}

/* ---- swap-out ----------------------------------------------------------------------------- */

/*
 * try_to_unmap_swap - replace the page table entry of @folio by @e. *@mmp, *@vpnp: where it
 * was, for swap_restore_pte(); the caller's RCU read-side section keeps the mm valid.
 * Return: true if it is unmapped now (the entry's reference was dropped; the caller's and the
 * tree's remain). false: it stays mapped (a locked region: mlocked instead).
 */
static bool try_to_unmap_swap(struct lv_folio *folio, swp_entry_t e, struct lv_mm **mmp,
			      uint64_t *vpnp)
{
	struct lv_folio **pte;
	struct lv_mm *mm;
	bool last, unmapped = false;

	*mmp = NULL;
	mm = mm_lock_folio(folio, &pte);
	if (!mm)
		return true; /* unmapped while isolated: only the cache and we hold it */
	if (find_vma(mm, folio->index)->vm_flags & VM_LOCKED) {
		mlock_folio(folio); /* as try_to_unmap_lazyfree(): never unmap a locked page */
	} else if (pte) {
		*mmp = mm;
		*vpnp = folio->index;
		swap_duplicate(e);
		*pte = swp_entry_to_pte(e);
		WRITE_ONCE(folio->mapping, NULL);
		WRITE_ONCE(mm->rss, mm->rss - 1);
		last = folio_put_testzero(folio);
		VM_BUG_ON_FOLIO(last, folio);
		unmapped = true;
	}
	lv_lock_release(&mm->page_table_lock);
	return unmapped;
}

/*
 * swap_restore_pte - after a failed write, map @folio again at page @vpn of @mm if the entry
 * there is still @e. Return: whether it was. Context: RCU read-side (keeps @mm valid).
 */
static bool swap_restore_pte(struct lv_folio *folio, swp_entry_t e, struct lv_mm *mm, uint64_t vpn)
{
	struct vm_area *vma;
	bool restored = false;

	lv_lock_acquire(&mm->page_table_lock);
	vma = mm->heap ? find_vma(mm, vpn) : NULL; /* a destroyed mm has no heap */
	if (vma && *vma_pte(vma, vpn) == swp_entry_to_pte(e)) {
		folio_get(folio);
		folio->index = vpn;
		WRITE_ONCE(folio->mapping, anon_mapping(mm));
		*vma_pte(vma, vpn) = folio;
		WRITE_ONCE(mm->rss, mm->rss + 1);
		swap_free(e);
		restored = true;
	}
	lv_lock_release(&mm->page_table_lock);
	return restored;
}

/*
 * swap_cache_evict - the last step of swap-out: with only the tree's and the isolation's
 * references left, leave a shadow entry. Return: true, the count is zero and the caller frees.
 */
static bool swap_cache_evict(struct lv_folio *folio, swp_entry_t e)
{
	struct lv_file *space = swap_address_space(e);
	bool evicted = false;

	lv_lock_acquire(mapping_lock(space));
	if (folio_ref_freeze(folio, 2 /* the tree's and the isolation's */)) {
		__delete_from_swap_cache(space, folio, e, workingset_eviction(folio));
		evicted = true;
	}
	lv_lock_release(mapping_lock(space));
	if (!evicted)
		return false;
	put_swap_folio(e);
	swapcache_count(folio, -1);
	/* Frozen: nobody waits on the lock (a waiter holds a reference). */
	folio_clear(folio, PG_locked);
	return true;
}

bool swap_out_folio(struct lv_folio *folio, bool *activate, unsigned long *pageout)
{
	struct lv_machine *m = folio_machine(folio);
	struct swap_info_struct *si;
	struct lv_mm *mm = NULL;
	uint64_t vpn = 0;
	bool freed = false, fresh;
	swp_entry_t e;
	void *shadow;
	int err;

	*activate = false;
	VM_BUG_ON_FOLIO(folio_test_large(folio), folio);
	if (!folio_test_swapcache(folio) && !folio_anon_mm(folio))
		return folio_ref_freeze(folio, 1); /* unmapped while isolated: nobody needs it */
	if (!folio_trylock(folio))
		return false; /* being swapped in: it is wanted */
	fresh = !folio_test_swapcache(folio);
	if (fresh) {
		e = folio_alloc_swap(folio);
		if (!e.val) {
			/* No room, or the memcg's swap limit: keep it off the inactive tail. */
			*activate = true;
			goto unlock;
		}
		if (add_to_swap_cache(folio, e, &shadow)) {
			put_swap_folio(e);
			goto unlock;
		}
		folio_set_dirty(folio);
	}
	e = folio_swap_entry(folio);
	si = get_swap_device(m, e);
	VM_BUG_ON_FOLIO(!si, folio); /* our slot pins it: swapoff waits for the cache */
	rcu_read_lock();
	if (!try_to_unmap_swap(folio, e, &mm, &vpn)) {
		rcu_read_unlock();
		/*
		 * Still mapped (a locked region): it leaves the cache, since a mapped folio can be
		 * written, or cleaned by LV_MADV_FREE, and the slot's copy would then be stale
		 * yet look clean (its data may even be the slot's last user's).
		 */
		delete_from_swap_cache(folio);
		put_swap_device(si);
		goto unlock;
	}
	/*
	 * A folio new to the cache is always written, whatever PG_dirty says: LV_MADV_FREE may
	 * have cleaned it while it was still mapped, and the slot holds its last user's data. One
	 * found in the cache is unmapped: its slot has its data unless a write failed (dirty).
	 */
	if (folio_test_clear_dirty(folio) || fresh) {
		rcu_read_lock();
		err = swap_writepage(e, lv_folio_data(folio), folio_lruvec(folio));
		rcu_read_unlock();
		if (err) {
			folio_set_dirty(folio);
			/*
			 * Still named by its entry: map it again (or, if the mm is going away,
			 * leave it dirty in the cache for the next pass). Nobody named it any
			 * more: nothing needs the data, free it.
			 */
			if (swp_swapcount(e)) {
				if (mm && swap_restore_pte(folio, e, mm, vpn))
					delete_from_swap_cache(folio);
				rcu_read_unlock();
				put_swap_device(si);
				*activate = true;
				goto unlock;
			}
		} else {
			(*pageout)++;
		}
	}
	rcu_read_unlock();
	freed = swap_cache_evict(folio, e);
	put_swap_device(si);
	if (freed)
		return true;
unlock:
	folio_unlock(folio);
	return false;
}

/* ---- swap-in ------------------------------------------------------------------------------ */

/*
 * read_swap_cache_async - the folio for slot @e, from the cache or read into it, with a
 * reference. A new folio is charged to the memcg the slot is charged to, or to @mm's.
 * Return: the folio (unlocked, uptodate), NULL with *@err 0 (the slot is free: whoever named
 * it is gone) or with *@err -ENOMEM / -EIO. *@hit: it was found in the cache.
 * Context: no lock held; @e's device pinned; may block (allocation, I/O).
 */
static struct lv_folio *read_swap_cache_async(struct lv_mm *mm, swp_entry_t e, bool readahead,
					      int *err, bool *hit)
{
	struct lv_machine *m = mm->machine;
	struct lv_file *space = swap_address_space(e);
	struct lv_memcg *memcg;
	struct lv_folio *folio;
	void *shadow = NULL;
	int ret;

	*err = 0;
	*hit = false;
	for (;;) {
		folio = swap_cache_get(space, e, NULL);
		if (folio) {
			*hit = true;
			return folio;
		}
		ret = swapcache_prepare(e);
		if (ret == -ENOENT)
			return NULL;
		if (!ret)
			break;
		/* Another thread is entering a folio for it (-EEXIST): it is there shortly. */
		sched_yield();
	}
	memcg = lookup_swap_cgroup(m, e);
	folio = folio_alloc(m, READ_ONCE(mm->nid), 0, memcg ? memcg : mm->memcg,
			    LV_FOLIO_ANON | (readahead ? FOLIO_ALLOC_NORETRY : 0));
	if (memcg)
		css_put(memcg);
	if (!folio) {
		put_swap_folio(e);
		*err = -ENOMEM;
		return NULL;
	}
	folio_set(folio, PG_locked);
	if (add_to_swap_cache(folio, e, &shadow)) {
		put_swap_folio(e);
		folio_clear(folio, PG_locked);
		lv_folio_put(folio);
		*err = -ENOMEM;
		return NULL;
	}
	if (shadow)
		workingset_refault(folio, shadow, false);
	folio_add_lru(folio);
	rcu_read_lock();
	ret = swap_readpage(e, lv_folio_data(folio), folio_lruvec(folio));
	rcu_read_unlock();
	if (ret) {
		/* The slot keeps its data and its page table entry; the folio goes. */
		delete_from_swap_cache(folio);
		folio_unlock(folio);
		lv_folio_put(folio);
		*err = -EIO;
		return NULL;
	}
	if (readahead)
		folio_set_reclaim(folio); /* PG_readahead: a later fault counts a hit */
	folio_unlock(folio);
	return folio;
}

/*
 * swapin_nr_pages - the read-ahead window for a fault at slot @offset: the kernel's
 * __swapin_nr_pages() heuristic.
 */
static unsigned long swapin_nr_pages(struct lv_machine *m, unsigned long offset)
{
	unsigned long max = 1ul << m->cfg.page_cluster, prev, pages, last;
	unsigned int hits;

	if (max == 1)
		return 1;
	hits = __atomic_exchange_n(&m->swapin_readahead_hits, 0, __ATOMIC_RELAXED);
	prev = __atomic_exchange_n(&m->swapin_prev_offset, offset, __ATOMIC_RELAXED);
	pages = hits + 2;
	if (pages == 2) {
		/* No hits: read ahead only when faults walk the slots one by one. */
		if (offset != prev + 1 && offset != prev - 1)
			pages = 1;
	} else {
		unsigned long roundup = 4;

		while (roundup < pages)
			roundup <<= 1;
		pages = roundup;
	}
	if (pages > max)
		pages = max;
	/* Shrink gradually: a random fault or two should not end a streak. */
	last = __atomic_load_n(&m->swapin_last_ra, __ATOMIC_RELAXED);
	if (pages < last / 2)
		pages = last / 2;
	__atomic_store_n(&m->swapin_last_ra, (unsigned int)pages, __ATOMIC_RELAXED);
	return pages;
}

/*
 * swapin_readahead - read the slots around @e in its aligned block of the read-ahead window,
 * then return read_swap_cache_async() of @e itself. Read-ahead folios that fail are just not
 * there; only @e's errors count.
 */
static struct lv_folio *swapin_readahead(struct lv_mm *mm, swp_entry_t e, int *err, bool *hit)
{
	unsigned long nr = 1, start = swp_offset(e);
	struct lv_folio *folio;

	/* A hit in the cache reads nothing: the window is decided by faults that read. */
	folio = swap_cache_get(swap_address_space(e), e, NULL);
	if (folio) {
		*err = 0;
		*hit = true;
		return folio;
	}
	nr = swapin_nr_pages(mm->machine, swp_offset(e));
	start &= ~(nr - 1);

	for (unsigned long off = start; nr > 1 && off < start + nr; off++) {
		swp_entry_t ra = swp_entry(swp_type(e), off);
		bool ra_hit;
		int ra_err;

		if (off == swp_offset(e) || !off || !(swap_map_value(ra) & SWAP_COUNT_MASK))
			continue;
		folio = read_swap_cache_async(mm, ra, true, &ra_err, &ra_hit);
		if (!folio)
			continue;
		if (!ra_hit) {
			folio_count_event(folio, EV_SWAP_RA, 1);
		}
		lv_folio_put(folio);
	}
	return read_swap_cache_async(mm, e, false, err, hit);
}

int do_swap_page(struct lv_mm *mm, uint64_t vpn, swp_entry_t e)
{
	struct swap_info_struct *si = get_swap_device(mm->machine, e);
	struct lv_folio *folio, **pte;
	struct vm_area *vma;
	int err = 0;
	bool hit;

	if (!si)
		return 0; /* the entry changed meanwhile: look again */
	folio = swapin_readahead(mm, e, &err, &hit);
	if (!folio)
		goto out;
	if (hit && folio_test_clear_reclaim(folio)) {
		__atomic_fetch_add(&mm->machine->swapin_readahead_hits, 1, __ATOMIC_RELAXED);
		folio_count_event(folio, EV_SWAP_RA_HIT, 1);
	}
	folio_lock(folio);
	/* Still the cache's folio for our slot (swap-out may have freed it and the slot)? */
	if (folio_test_swapcache(folio) && folio_swap_entry(folio).val == e.val) {
		lv_lock_acquire(&mm->page_table_lock);
		vma = find_vma(mm, vpn);
		pte = vma ? vma_pte(vma, vpn) : NULL;
		if (pte && *pte == swp_entry_to_pte(e)) {
			/* Our reference becomes the entry's. */
			folio->index = vpn;
			WRITE_ONCE(folio->mapping, anon_mapping(mm));
			*pte = folio;
			WRITE_ONCE(mm->rss, mm->rss + 1);
			swap_free(e);
			delete_from_swap_cache(folio);
			if (vma->vm_flags & VM_LOCKED)
				mlock_folio(folio);
			/* Under the lock: once it is dropped, an unmap may free the folio. */
			folio_unlock(folio);
			lv_lock_release(&mm->page_table_lock);
			goto out;
		}
		lv_lock_release(&mm->page_table_lock);
	}
	folio_unlock(folio);
	lv_folio_put(folio);
out:
	put_swap_device(si);
	return err;
}

/* ---- unmapping and swapoff ----------------------------------------------------------------- */

void free_swap_and_cache(struct lv_machine *m, swp_entry_t e)
{
	struct swap_info_struct *si = get_swap_device(m, e);
	struct lv_folio *folio;

	swap_free(e);
	if (!si)
		return;
	/* Only the cache holds the slot: free its folio unless someone is working on it. */
	if (swap_map_value(e) == SWAP_HAS_CACHE &&
	    (folio = swap_cache_get(swap_address_space(e), e, NULL))) {
		if (folio_trylock(folio)) {
			if (folio_test_swapcache(folio) && folio_swap_entry(folio).val == e.val &&
			    !folio_anon_mm(folio))
				delete_from_swap_cache(folio);
			folio_unlock(folio);
		}
		lv_folio_put(folio); /* a final put is allowed under the page_table_lock */
	}
	put_swap_device(si);
}

/*
 * unuse_mm - swap in every page of @mm whose entry is on device @type.
 * Return: 0, -ENOMEM or -EIO (the page that failed keeps its entry).
 */
static int unuse_mm(struct lv_mm *mm, unsigned int type)
{
	uint64_t vpn = 0;

	for (;;) {
		struct list_head *pos;
		swp_entry_t e = { 0 };
		int err;

		lv_lock_acquire(&mm->page_table_lock);
		list_for_each (pos, &mm->vmas) {
			struct vm_area *vma = list_entry(pos, struct vm_area, list);

			for (uint64_t v = vpn > vma->start ? vpn : vma->start; v < vma->end; v++) {
				struct lv_folio *pte = *vma_pte(vma, v);

				if (pte_is_swap(pte) && swp_type(pte_to_swp_entry(pte)) == type) {
					e = pte_to_swp_entry(pte);
					vpn = v;
					break;
				}
			}
			if (e.val)
				break;
		}
		lv_lock_release(&mm->page_table_lock);
		if (!e.val)
			return 0;
		err = do_swap_page(mm, vpn, e);
		if (err)
			return err;
	}
}

int try_to_unuse(struct lv_machine *m, unsigned int type)
{
	for (struct lv_mm *mm = NULL;;) {
		int err;

		mm = mm_next_pinned(m, mm);
		if (!mm)
			return 0;
		err = unuse_mm(mm, type);
		if (err) {
			mm_unpin(mm);
			return err;
		}
	}
}

void swap_cache_clear(struct lv_machine *m, unsigned int type)
{
	unsigned long max = swap_type_max(m, type);

	for (unsigned long off = 1; off < max; off++) {
		swp_entry_t e = swp_entry(type, off);
		struct lv_folio *folio;

		if (swap_map_value(e) != SWAP_HAS_CACHE)
			continue;
		folio = swap_cache_get(swap_address_space(e), e, NULL);
		if (!folio)
			continue;
		folio_lock(folio);
		if (folio_test_swapcache(folio) && folio_swap_entry(folio).val == e.val &&
		    !folio_anon_mm(folio) && !swp_swapcount(e))
			delete_from_swap_cache(folio);
		folio_unlock(folio);
		lv_folio_put(folio);
	}
}
