// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Transparent huge pages: huge anonymous faults, and splitting a large folio into order-0 folios
 * (the kernel's mm/huge_memory.c).
 *
 * Theory of operation.
 *
 * Huge faults. A write fault in a region that may have huge pages (cfg.thp, the region's
 * VM_HUGEPAGE / VM_NOHUGEPAGE) whose aligned 2 MiB block lies wholly inside the region and
 * has no page mapped yet allocates an order-9 folio with no lock held: charged, zeroed, and
 * compacting directly for it only where cfg.thp_defrag says so. Under the page_table_lock it
 * then checks again that the block is still empty, and maps all 512 entries at the head, each
 * holding one reference, as a small fault maps one. The folio goes to the LRU at once, in one
 * lock hold: large folios never wait in a batch (docs/protocol.md §5.3) unless cfg.batch_large. A
 * fault that gets no huge page falls back to a small one; one that loses the block to a racing
 * fault releases its huge page and faults a small page too. Pages of a large anon folio are found
 * by their offset from folio->index, the first virtual page of the block.
 *
 * A large anon folio may be mapped by fewer than 512 entries: a range was unmapped while
 * the folio could not be split (someone held a reference). It stays large, mapped by the
 * rest, until it is split or its last entry goes (the kernel queues such folios for a
 * deferred split; nothing here does that).
 *
 * Splitting (docs/protocol.md §4.14). With the owner's lock held (the mm's page_table_lock,
 * or the file's mapping lock), the head's count is frozen at exactly what its owner and the
 * caller hold: one reference per mapping entry, or the page cache's one, plus the caller's.
 * Any other holder makes the freeze fail and the split return -EBUSY with nothing changed:
 * a batch (this CPU's is drained first), an isolator, a reader copying a page cache folio, a
 * migration. Frozen, the folio is ours alone: no try-get succeeds, so every LRU actor passes
 * over it, and the release path cannot run. Each tail frame is turned into an order-0 folio
 * (flags, owner and index; its data stays where it is) and the owner's entries are pointed at
 * the new folios. Then, under the lock of the head's lruvec (found with the re-check: a
 * removal may have reparented the frozen head meanwhile, as it moves linked folios without a
 * reference), the tails take the head's memcg binding, the head becomes order 0, and "tail
 * pages are added to the LRU anyway": linked right after the head with PG_lru set (or
 * counted as unevictable with mlock_count 0) when the head is on the LRU, or appended to the
 * caller's list, isolated with a reference each, when the caller isolated the head. List
 * sizes count pages and the charge is per page, so neither changes. Pages nobody owns any
 * more (anon pages no entry maps, page cache pages past a truncation) are left frozen,
 * taken out of the counts, and freed after the lruvec unlock.
 *
 * Lock order: the local drain's slot lock, before any other → owner lock → lruvec lock;
 * then, after the lruvec unlock and still under the owner's lock, the page cache's shadow
 * lock (pages dropped by a truncation) and the allocator's (pages freed).
 */
#include "internal.h"
#include "mm_inline.h"
#include "mm_types.h"

#include <limits.h>

/* The flags a new folio takes from the head: its LRU state and the state of its data. */
#define SPLIT_FLAGS                                                                                \
	((1ul << PG_active) | (1ul << PG_referenced) | (1ul << PG_workingset) |                    \
	 (1ul << PG_unevictable) | (1ul << PG_mlocked) | (1ul << PG_swapbacked) |                  \
	 (1ul << PG_dirty) | (1ul << PG_writeback) | (1ul << PG_reclaim) | (1ul << PG_mapped) |    \
	 (1ul << PG_lru_claimed) | (1ul << PG_uptodate))

#define BITS_PER_LONG (8 * (int)sizeof(long))

#ifdef LV_DEBUG
void (*split_frozen_hook)(struct lv_folio *folio);
#endif

/* ---- the reverse map of large anon folios ------------------------------------------------- */

/* anon_entry - the page table entry of page @vpn of @mm, or NULL if no region holds it. */
static struct lv_folio **anon_entry(struct lv_mm *mm, uint64_t vpn)
{
	struct vm_area *vma = find_vma(mm, vpn);

	return vma ? vma_pte(vma, vpn) : NULL;
}

/**
 * folio_mapcount_mm - how many entries of @mm map @folio: one for a small folio, up to
 * 2^order for a large one (its entries lie in [folio->index, folio->index + 2^order), maybe in
 * more than one region).
 * Return: that count; each entry holds one reference.
 * Context: @mm's page_table_lock held; @folio is mapped by @mm.
 */
long folio_mapcount_mm(struct lv_mm *mm, struct lv_folio *folio)
{
	long nr = folio_nr_pages(folio), mapped = 0;

	lockdep_assert_held(&mm->page_table_lock);
	if (nr == 1)
		return 1;
	for (long i = 0; i < nr; i++) {
		struct lv_folio **pte = anon_entry(mm, folio->index + (uint64_t)i);

		mapped += pte && *pte == folio;
	}
	return mapped;
}

/* ---- huge faults ---------------------------------------------------------------------------- */

/* thp_vma_allowable - may faults in a region with @vm_flags get huge pages (cfg.thp)? */
static bool thp_vma_allowable(struct lv_machine *m, unsigned long vm_flags)
{
	switch (m->cfg.thp) {
	case LV_THP_ALWAYS:
		return !(vm_flags & VM_NOHUGEPAGE);
	case LV_THP_MADVISE:
		return vm_flags & VM_HUGEPAGE;
	default:
		return false;
	}
}

/* block_empty - whether no entry of @vma in the huge block at @haddr is present. */
static bool block_empty(struct vm_area *vma, uint64_t haddr, uint64_t vpn)
{
	struct lv_folio **pte = vma_pte(vma, haddr);
	uint64_t at = vpn - haddr;

	/* The neighbours first: a block filled page by page is refused in one look. */
	if ((at > 0 && pte[at - 1]) || (at + 1 < HPAGE_PMD_NR && pte[at + 1]))
		return false;
	for (uint64_t i = 0; i < HPAGE_PMD_NR; i++)
		if (pte[i])
			return false;
	return true;
}

/**
 * thp_fault_suitable - where a write fault at page @vpn of @vma may map a huge page.
 * Return: the first page of the aligned 2 MiB block holding @vpn, if huge pages are allowed
 * in @vma, the block lies wholly inside it and none of its pages is mapped; THP_NO_FAULT
 * otherwise.
 * Context: @mm's page_table_lock held.
 */
uint64_t thp_fault_suitable(struct lv_mm *mm, struct vm_area *vma, uint64_t vpn)
{
	uint64_t haddr = vpn & ~(HPAGE_PMD_NR - 1);

	lockdep_assert_held(&mm->page_table_lock);
	if (!thp_vma_allowable(mm->machine, vma->vm_flags) || haddr < vma->start ||
	    haddr + HPAGE_PMD_NR > vma->end || !block_empty(vma, haddr, vpn))
		return THP_NO_FAULT;
	return haddr;
}

/*
 * thp_fault_lruvec - the lruvec a fault of @mm counts its THP events on. Stable: the mm pins
 * its memcg (it cannot be removed while the mm lives).
 */
static struct lruvec *thp_fault_lruvec(struct lv_mm *mm, int nid)
{
	return mem_cgroup_lruvec(mm->memcg, mm->machine->nodes[nid]);
}

/**
 * thp_fault_alloc - allocate, charge and zero a huge page for a fault of @mm in a region
 * with @vm_flags: direct compaction if cfg.thp_defrag allows it there (the kernel's
 * GFP_TRANSHUGE), else a light attempt that only wakes kcompactd (GFP_TRANSHUGE_LIGHT).
 * Return: the folio with one reference, or NULL (counted as thp_fault_fallback: the fault
 * falls back to a small page).
 * Context: no lock held (the allocation and the charge may reclaim and compact).
 */
struct lv_folio *thp_fault_alloc(struct lv_mm *mm, unsigned long vm_flags)
{
	struct lv_machine *m = mm->machine;
	int nid = READ_ONCE(mm->nid);
	unsigned int flags = LV_FOLIO_ANON | LV_FOLIO_ZERO;
	struct lv_folio *folio;
	bool defrag;

	lockdep_assert_class_not_held(LV_LOCK_CLASS_MM, "a huge page allocation");
	switch (m->cfg.thp_defrag) {
	case LV_THP_DEFRAG_ALWAYS:
		defrag = true;
		break;
	case LV_THP_DEFRAG_MADVISE:
		defrag = vm_flags & VM_HUGEPAGE;
		break;
	default:
		defrag = false;
		break;
	}
	flags |= defrag ? FOLIO_ALLOC_COMPACT : FOLIO_ALLOC_LIGHT;
	folio = folio_alloc(m, nid, HPAGE_PMD_ORDER, mm->memcg, flags);
	if (!folio)
		lruvec_count_event_atomic(thp_fault_lruvec(mm, nid), EV_THP_FAULT_FALLBACK, 1);
	return folio;
}

/**
 * thp_fault_map - map huge @folio (from thp_fault_alloc()) at the block @haddr of @mm, if
 * the block is still suitable (thp_fault_suitable()): all 512 entries point at the head and
 * hold a reference each (the allocation's becomes the first), and the folio is added to the
 * LRU at once. Counts thp_fault_alloc.
 * Return: true if mapped; false if a racing fault or unmap got there first (the caller
 * releases @folio after the unlock).
 * Context: @mm's page_table_lock held; takes a slot lock and an lruvec lock under it.
 */
bool thp_fault_map(struct lv_mm *mm, struct lv_folio *folio, uint64_t haddr)
{
	struct vm_area *vma = find_vma(mm, haddr);
	struct lv_folio **pte;

	lockdep_assert_held(&mm->page_table_lock);
	if (!vma || thp_fault_suitable(mm, vma, haddr) != haddr)
		return false;
	/* Counted while unpublished: nothing can rebind the folio yet. */
	folio_count_event(folio, EV_THP_FAULT_ALLOC, 1);
	folio->mapping = anon_mapping(mm);
	folio->index = haddr;
	__atomic_fetch_add(&folio->_refcount, (int)HPAGE_PMD_NR - 1, __ATOMIC_RELAXED);
	/* As a small fault: on the LRU only once it won the block, under the lock (mlocked in
	 * a locked region). */
	folio_add_lru_vma(folio, vma);
	pte = vma_pte(vma, haddr);
	for (uint64_t i = 0; i < HPAGE_PMD_NR; i++)
		pte[i] = folio;
	WRITE_ONCE(mm->rss, mm->rss + (long)HPAGE_PMD_NR);
	return true;
}

/* ---- splitting ------------------------------------------------------------------------------ */

static void folio_ref_unfreeze(struct lv_folio *folio, int count)
{
	__atomic_store_n(&folio->_refcount, count, __ATOMIC_RELEASE);
}

static void split_failed(struct lv_folio *folio)
{
	/* Not frozen: a charge move may rebind it; RCU keeps the memcg it reads alive. */
	folio_count_event(folio, EV_THP_SPLIT_PAGE_FAILED, 1);
}

static bool test_bit_ul(const unsigned long *map, unsigned long i)
{
	return (map[i / BITS_PER_LONG] >> (i % BITS_PER_LONG)) & 1;
}

/*
 * free_dead - free the pages of the split @folio not set in @live (their count still frozen
 * at zero, on no list, counted nowhere), a batch at a time; the head too if @head_dead.
 * Context: no LRU lock held.
 */
static void free_dead(struct lv_folio *folio, unsigned long nr, const unsigned long *live,
		      bool head_dead)
{
	struct lv_folio *batch[LV_MAX_BATCH];
	unsigned int n = 0;

	for (unsigned long i = head_dead ? 0 : 1; i < nr; i++) {
		if (test_bit_ul(live, i))
			continue;
		batch[n++] = folio + i;
		if (n == LV_MAX_BATCH) {
			free_folios(batch, n);
			n = 0;
		}
	}
	free_folios(batch, n);
}

/**
 * split_folio_locked - split @folio whose owner's lock the caller holds (see internal.h).
 * @folio: a folio owned by the mm or file whose lock is held, or owned by nobody (no lock:
 *         every page but the first is then freed).
 * @list:  NULL if @folio may be on an LRU list; else the caller isolated it, and the new
 *         folios are appended to @list, isolated, with a reference each.
 * @extra: references the caller holds besides the owner's.
 * @end:   page cache only: pages at this index and beyond are dropped (ULONG_MAX: none).
 *
 * Return: 0; -EINVAL (@folio is not large); -EBUSY (a reference beyond the expected ones, the
 * folio is being filled or was isolated with lv_folio_isolate_lru(), or, with @list NULL, the
 * caller isolated it: nothing changed, counted as thp_split_page_failed).
 * Context: the owner's lock held (mm page_table_lock or file mapping lock); takes the lruvec
 * lock, then the shadow lock (truncated pages) and pcp and zone locks (freed pages).
 */
int split_folio_locked(struct lv_folio *folio, struct list_head *list, int extra, unsigned long end)
{
	struct lv_mm *mm = folio_anon_mm(folio);
	struct lv_file *file = mm ? NULL : folio_file_mapping(folio);
	unsigned long live[HPAGE_PMD_NR / BITS_PER_LONG] = { 0 };
	unsigned long nr = (unsigned long)folio_nr_pages(folio), index = folio->index, flags;
	long owner_refs = 0, dead = 0;
	struct list_head *at;
	struct lruvec *lruvec;
	struct obj_cgroup *objcg;
	enum lru_list lru = LRU_UNEVICTABLE;
	bool linked;
	int head_refs;

	if (nr == 1)
		return -EINVAL;
	VM_BUG_ON_FOLIO(nr > HPAGE_PMD_NR, folio);
	if (mm)
		lockdep_assert_held(&mm->page_table_lock);
	if (folio_test_isolated(folio) ||
	    (file && (folio_test(folio, PG_locked) || !folio_test(folio, PG_uptodate))))
		goto busy;
	/* A hole folio keeps its per-page state in its second frame: zero it, as migration does. */
	if (file)
		folio_zero_holes(folio);
	/* Which pages keep an owner, and how many references the owner holds. */
	for (unsigned long i = 0; i < nr; i++) {
		bool owned;

		if (mm) {
			struct lv_folio **pte = anon_entry(mm, index + i);

			owned = pte && *pte == folio;
			owner_refs += owned;
		} else {
			owned = file && index + i < end; /* nobody's pages are all freed */
		}
		if (owned)
			live[i / BITS_PER_LONG] |= 1ul << (i % BITS_PER_LONG);
	}
	if (file)
		owner_refs = 1; /* the page cache's */
	if (!folio_ref_freeze(folio, extra + (int)owner_refs))
		goto busy;
	/*
	 * Frozen, PG_lru can no longer change: a head on no list was either never added or was
	 * isolated by the caller, who must then take the pages on a list.
	 */
	linked = folio_test_lru(folio);
	if ((!list && !linked && folio_test(folio, PG_lru_claimed)) || (list && linked)) {
		VM_BUG_ON_FOLIO(list && linked, folio);
		folio_ref_unfreeze(folio, extra + (int)owner_refs);
		goto busy;
	}
#ifdef LV_DEBUG
	if (split_frozen_hook)
		split_frozen_hook(folio);
#endif
	folio_clear(folio, PG_hole); /* zeroed whole above; nobody holds it to look */
	flags = (READ_ONCE(folio->flags) & SPLIT_FLAGS) | (1ul << PG_head);

	/* The new folios, still frozen and bound to no memcg yet, then the owner's entries. */
	for (unsigned long i = 1; i < nr; i++) {
		struct lv_folio *page = folio + i;
		bool owned = test_bit_ul(live, i);

		page->mlock_count = 0;
		page->lru.next = LIST_POISON1;
		page->lru.prev = LIST_POISON2;
		WRITE_ONCE(page->index, index + i);
		/* A truncated page keeps its file until page_cache_delete() takes it out. */
		WRITE_ONCE(page->mapping, owned || file ? folio->mapping : NULL);
		__atomic_store_n(&page->flags, flags, __ATOMIC_RELEASE);
	}
	if (mm) {
		for (unsigned long i = 1; i < nr; i++) {
			struct lv_folio **pte;

			if (test_bit_ul(live, i) && (pte = anon_entry(mm, index + i)))
				*pte = folio + i;
		}
	} else if (file) {
		filemap_split_store(file, folio);
	}

	lruvec = folio_lruvec_lock_at(folio, "__split_huge_page");
	objcg = folio->objcg;
	if (objcg) /* each new folio holds a reference, as every bound folio does */
		__atomic_fetch_add(&objcg->refcnt, nr - 1, __ATOMIC_RELAXED);
	if (linked)
		lru = folio_lru_list(folio);
	at = list ? list->prev : NULL;
	__atomic_fetch_and(&folio->flags, ~PG_ORDER_MASK, __ATOMIC_RELEASE);
	/*
	 * Last to first, each inserted at the same place: right after the head on its list
	 * (reclaim then meets the head, page 1, page 2...), in page order at @list's end.
	 */
	for (unsigned long i = nr - 1; i >= 1; i--) {
		struct lv_folio *page = folio + i;

		/* Released: descriptors are read racily (compaction's scanner). */
		__atomic_store_n(&page->objcg, objcg, __ATOMIC_RELEASE);
		if (!test_bit_ul(live, i)) {
			dead++;
			continue;
		}
		if (list) {
			list_add(&page->lru, at);
		} else if (linked) {
			if (lru != LRU_UNEVICTABLE)
				list_add_tail(&page->lru, &folio->lru);
			folio_set_lru(page);
		}
		/* The owner's reference (its entry, or the page cache's), and the isolation's. */
		folio_ref_unfreeze(page, 1 + (list != NULL));
	}
	if (linked && dead)
		update_lru_size(lruvec, lru, -dead);
	head_refs = extra + (mm ? (int)test_bit_ul(live, 0) : file ? 1 : 0);
	/*
	 * The pages freed below leave NR_MLOCK here, under the lock that holds the binding still:
	 * freeing a frozen page never looks at PG_mlocked.
	 */
	if (folio_test_mlocked(folio) && dead + !head_refs)
		folio_mlock_count(folio, -(dead + !head_refs));
	if (!head_refs) {
		/* An anon head no entry maps, split for an unmap: it goes with the dead pages. */
		if (linked) {
			lruvec_del_folio(lruvec, folio);
			folio_clear_lru(folio);
		}
	}
	lruvec_count_event_atomic(lruvec, EV_THP_SPLIT_PAGE, 1);
	lruvec_unlock(lruvec);

	if (file) {
		for (unsigned long i = 1; i < nr; i++)
			if (!test_bit_ul(live, i))
				filemap_split_drop(file, folio + i);
	} else if (!test_bit_ul(live, 0)) {
		WRITE_ONCE(folio->mapping, NULL);
	}
	if (head_refs)
		folio_ref_unfreeze(folio, head_refs);
	free_dead(folio, nr, live, !head_refs);
	return 0;
busy:
	split_failed(folio);
	return -EBUSY;
}

/* struct split_owner - the owner split_folio_to_list() found and locked: one of the two. */
struct split_owner {
	struct lv_mm *mm;
	struct lv_file *file;
};

/* lock_owner - lock the mm or file that owns @folio. Return: false if it has none. */
static bool lock_owner(struct lv_folio *folio, struct split_owner *o)
{
	/* RCU keeps an owner being destroyed valid to lock; still owning the folio, it lives. */
	rcu_read_lock();
	o->file = NULL;
	if ((o->mm = folio_anon_mm(folio))) {
		lv_lock_acquire_at(&o->mm->page_table_lock, "split_huge_page_to_list_to_order");
		if (folio_anon_mm(folio) != o->mm) {
			lv_lock_release(&o->mm->page_table_lock);
			o->mm = NULL;
		}
	} else {
		o->file = filemap_lock_owner_at(folio, "split_huge_page_to_list_to_order");
	}
	rcu_read_unlock();
	return o->mm || o->file;
}

static void unlock_owner(struct split_owner *o)
{
	if (o->mm)
		lv_lock_release(&o->mm->page_table_lock);
	else
		filemap_unlock_owner(o->file);
}

/**
 * split_folio_to_list - split a large folio the caller holds a reference on (internal.h).
 * @folio: the folio; its owner (the mm mapping it or the file caching it) is found under RCU
 *         from folio->mapping, as reclaim finds it.
 * @list:  NULL, or the caller's list for the new folios if it isolated @folio (its isolation
 *         reference is then the one reference it holds).
 *
 * This CPU's batches are drained first, as a folio in one holds a reference. What still
 * makes the split fail is a reference held elsewhere: another CPU caught flushing a batch
 * that holds it, an isolation (reclaim, migration, compaction, lv_folio_isolate_lru()), a
 * reader copying a page cache folio, a reference taken with lv_folio_get().
 *
 * A folio nobody owns (never mapped or cached, or let go by its owner) keeps only its first
 * page: the others are freed.
 * Return: as split_folio_locked(); -EBUSY also if its owner changed while we locked it.
 * Context: no lock held; takes a slot lock (the drain), then the owner's lock, then the
 * lruvec lock.
 */
int split_folio_to_list(struct lv_folio *folio, struct list_head *list)
{
	struct split_owner owner;
	int err;

	if (!folio_test_large(folio))
		return -EINVAL;
	lv_lru_add_drain(folio_machine(folio));
	if (!lock_owner(folio, &owner)) {
		/*
		 * Nobody owns it: the exact freeze alone makes the caller's reference the only
		 * one, and the other pages, which nobody could hold, are freed.
		 */
		if (!__atomic_load_n(&folio->mapping, __ATOMIC_ACQUIRE))
			return split_folio_locked(folio, list, 1, ULONG_MAX);
		split_failed(folio);
		return -EBUSY;
	}
	err = split_folio_locked(folio, list, 1, ULONG_MAX);
	unlock_owner(&owner);
	return err;
}

int lv_split_folio(struct lv_folio *folio)
{
	if (!folio)
		return -EINVAL;
	return split_folio(folio);
}
