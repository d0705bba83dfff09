// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Anonymous memory: address spaces, their regions and page tables, faults, unmapping,
 * madvise, and the reverse map that reclaim and migration use.
 *
 * Theory of operation.
 *
 * An address space (struct lv_mm, the kernel's mm_struct) is a sorted list of regions (struct
 * vm_area): the heap, which lv_mm_brk() moves, and regions made by lv_mmap(). A region's page
 * table is an array of folio pointers indexed by virtual page number from the region's base.
 * One lock per mm, its page_table_lock, protects the region list and every page table entry,
 * and it is held while data is copied into or out of a page: so whoever holds it may change
 * which folio backs a page (migration), or take a page away (reclaim of a lazyfree page),
 * without a user seeing a torn copy. It ranks just below the drain mutex, above everything
 * the LRU does: a batch may be queued and folios released while it is held.
 *
 * References. A present page table entry holds one reference on its folio. A folio mapped
 * here has folio->mapping = the mm tagged with FOLIO_MAPPING_ANON and folio->index = its
 * virtual page number: the reverse map. It is set before the folio is mapped and cleared (or
 * moved to a migration's copy) under the page_table_lock when the entry is cleared, so an
 * actor that found the mm through a folio under RCU re-checks it after locking. An mm is
 * freed a grace period after lv_mm_destroy() for that reason.
 *
 * Faults. A write to a missing page allocates and charges a zeroed folio with no lock held
 * (limit reclaim may run), queues it for the anon LRU through the lru_add batch (which holds
 * its own reference), and then installs it unless another thread won the race, in which case
 * the new folio is simply released.
 *
 * Lazy free. LV_MADV_FREE cleans a page and queues it to lose PG_swapbacked, which moves it
 * to the inactive file list. Reclaim then calls try_to_unmap_lazyfree(): under the
 * page_table_lock, a page written since (PG_dirty) becomes swap-backed again and stays; a
 * clean one has its reference count frozen from exactly 2 (the entry's and the isolation's)
 * to 0, and its entry cleared, so the next read sees zeros, as with MADV_FREE in Linux.
 *
 * Release. Unmapping clears entries and drops their references through folios_put_refs(), a
 * batch at a time: the release path unlinks the last-referenced folios from their LRU lists
 * under one lruvec lock hold per batch and frees and uncharges them after the unlock.
 */
#include "internal.h"
#include "mm_inline.h"
#include "mm_types.h"
#include "swap.h"

#include <limits.h>

#include <string.h>
#include <unistd.h>

#define BRK_BASE      (0x10000000ull >> PAGE_SHIFT) /* first heap page */
#define MMAP_BASE     (1ull << 32)		    /* first lv_mmap() page, above any heap */
#define RELEASE_BATCH 64			    /* folios dropped per release-path call */

/* ---- regions --------------------------------------------------------------------------------- */

/*
 * pt_alloc - a zeroed page-table array of @cap entries. Page tables are allocated before
 * page_table_lock is taken, as the kernel's pte_alloc() allocates before it takes the PTE
 * lock: the host's allocator may take its own locks or even fault, and a fault in the same mm
 * would wait behind it. A caller that finds under the lock that a table must grow drops the
 * lock, allocates and looks again (lv_mm_brk(), lv_munmap()).
 * Context: no page_table_lock held.
 */
static struct lv_folio **pt_alloc(size_t cap)
{
	lockdep_assert_class_not_held(LV_LOCK_CLASS_MM, "page-table allocation");
	return calloc(cap, sizeof(struct lv_folio *));
}

static struct vm_area *vma_alloc(uint64_t start, uint64_t end, size_t capacity)
{
	struct vm_area *vma;

	lockdep_assert_class_not_held(LV_LOCK_CLASS_MM, "region allocation");
	vma = calloc(1, sizeof(*vma));
	if (!vma)
		return NULL;
	vma->start = vma->base = start;
	vma->end = end;
	vma->capacity = capacity;
	if (capacity && !(vma->pte = pt_alloc(capacity))) {
		free(vma);
		return NULL;
	}
	return vma;
}

static void vma_free(struct vm_area *vma)
{
	free(vma->pte);
	free(vma);
}

/*
 * file_rmap_put - a region of @mm mapping a file went away: the mm leaves the file's mappers
 * with its last such region. The count changes under the page_table_lock, taken nested under
 * the file's i_mmap lock, which the list needs. Context: no lock held.
 */
static void file_rmap_put(struct lv_mm *mm, struct file_rmap *rmap)
{
	struct i_mmap *im = file_i_mmap(rmap->file);
	bool last;

	lv_lock_acquire_at(&im->lock, "unlink_file_vma");
	lv_lock_acquire_nested(&mm->page_table_lock);
	last = !--rmap->nr_vmas;
	lv_lock_release(&mm->page_table_lock);
	if (last) {
		list_del(&rmap->list);
		WRITE_ONCE(im->nr, im->nr - 1);
	}
	lv_lock_release(&im->lock);
	if (last)
		free(rmap);
}

/*
 * vmas_free - free the regions of @mm on @dead, unlinked under page_table_lock, and drop their
 * places in the files they map. Context: dropped.
 */
static void vmas_free(struct lv_mm *mm, struct list_head *dead)
{
	while (!list_empty(dead)) {
		struct vm_area *vma = list_entry(dead->next, struct vm_area, list);

		list_del(&vma->list);
		/* Read without the lock: only lv_file_close() clears it, and not for ours. */
		if (vma->rmap)
			file_rmap_put(mm, vma->rmap);
		vma_free(vma);
	}
}

/* find_vma - the region holding page @vpn, or NULL. */
struct vm_area *find_vma(struct lv_mm *mm, uint64_t vpn)
{
	struct vm_area *vma = mm->cache;
	struct list_head *pos;

	lockdep_assert_held(&mm->page_table_lock);
	if (vma && vpn >= vma->start && vpn < vma->end)
		return vma;
	list_for_each (pos, &mm->vmas) {
		vma = list_entry(pos, struct vm_area, list);
		if (vpn < vma->start)
			break;
		if (vpn < vma->end) {
			mm->cache = vma;
			return vma;
		}
	}
	return NULL;
}

/* vma_insert - link @vma into the sorted region list. */
static void vma_insert(struct lv_mm *mm, struct vm_area *vma)
{
	struct list_head *pos;

	lockdep_assert_held(&mm->page_table_lock);
	/* Before the first region that starts after it, or at the end. */
	list_for_each (pos, &mm->vmas)
		if (list_entry(pos, struct vm_area, list)->start > vma->start)
			break;
	list_add_tail(&vma->list, pos);
}

/* ---- release --------------------------------------------------------------------------------- */

/*
 * struct mmu_gather - folios unmapped and waiting for the release path. Its buffer is sized
 * before page_table_lock is taken (tlb_gather_mmu()), for as many pages as the range or the mm
 * can hold, so that the release runs after the unlock, as the kernel's tlb_finish_mmu() runs
 * after the PTE lock is dropped: a fault in the same mm does not wait for frees. If there is
 * no such buffer (the allocation failed, or faults outgrew it meanwhile), full batches are
 * released under the lock, which the lock order allows. It lives on one caller's stack.
 */
struct mmu_gather {
	unsigned long nr, max;
	bool munlocked;		  /* munlocks were queued: drain them at the finish */
	struct lv_folio **folios; /* ->local, or a buffer of ->max entries */
	struct lv_folio *local[RELEASE_BATCH];
};

/* tlb_gather_mmu - ready @tlb for unmapping up to @pages pages of @mm. Context: no lock held. */
static void tlb_gather_mmu(struct mmu_gather *tlb, struct lv_mm *mm, uint64_t pages)
{
	uint64_t want = (uint64_t)READ_ONCE(mm->rss) + RELEASE_BATCH;
	struct lv_folio **buf;

	tlb->nr = 0;
	tlb->munlocked = false;
	tlb->folios = tlb->local;
	tlb->max = RELEASE_BATCH;
	if (pages < want)
		want = pages;
	if (want > RELEASE_BATCH && (buf = malloc(want * sizeof(*buf)))) {
		tlb->folios = buf;
		tlb->max = want;
	}
}

static void tlb_flush(struct mmu_gather *tlb)
{
	lv_folios_put(tlb->folios, tlb->nr);
	tlb->nr = 0;
}

/* tlb_finish_mmu - release what was gathered. Context: page_table_lock dropped. */
static void tlb_finish_mmu(struct mmu_gather *tlb, struct lv_mm *mm)
{
	tlb_flush(tlb);
	if (tlb->folios != tlb->local)
		free(tlb->folios);
	/* The munlock entries hold the last references of what an unmap munlocked: free it now. */
	if (tlb->munlocked)
		lv_lru_add_drain(mm->machine);
}

/* pte_clear_folio - the folio at @pte leaves @mm: entry, reverse map and rss. */
static struct lv_folio *pte_clear_folio(struct lv_mm *mm, struct lv_folio **pte)
{
	struct lv_folio *folio = *pte;

	lockdep_assert_held(&mm->page_table_lock);
	*pte = NULL;
	WRITE_ONCE(folio->mapping, NULL);
	WRITE_ONCE(mm->rss, mm->rss - 1);
	return folio;
}

/*
 * zap_pte - clear one present entry: the folio leaves the mm, and its reference goes to @tlb.
 * A full gather is released first (lruvec, pcp and zone locks all rank below ours); one
 * sized by tlb_gather_mmu() is full only if faults outgrew it.
 */
static void zap_pte(struct lv_mm *mm, struct lv_folio **pte, struct mmu_gather *tlb)
{
	if (tlb->nr == tlb->max)
		tlb_flush(tlb);
	tlb->folios[tlb->nr++] = pte_clear_folio(mm, pte);
}

/*
 * zap_file_pte - clear one entry mapping a page cache folio (of a file mapping): the folio stays
 * in its file, one mapping fewer, and the entry's reference goes to @tlb (a page of a large
 * folio holds its own on the head, which every entry of it points at).
 */
static void zap_file_pte(struct lv_mm *mm, struct lv_folio **pte, struct mmu_gather *tlb)
{
	struct lv_folio *folio = *pte;

	lockdep_assert_held(&mm->page_table_lock);
	if (tlb->nr == tlb->max)
		tlb_flush(tlb);
	*pte = NULL;
	folio_file_map_add(folio, -1);
	WRITE_ONCE(mm->rss, mm->rss - 1);
	tlb->folios[tlb->nr++] = folio;
}

/*
 * large_run - for the large folio mapped at page @vpn of @vma: *@stop is where its entries in
 * [@vpn, @end) of @vma end, *@here how many there are. Return: whether they are all of its
 * entries in @mm (the range covers the folio's whole mapping).
 */
static bool large_run(struct lv_mm *mm, struct vm_area *vma, uint64_t vpn, uint64_t end,
		      uint64_t *stop, long *here)
{
	struct lv_folio *folio = *vma_pte(vma, vpn);
	uint64_t last = folio->index + (uint64_t)folio_nr_pages(folio);

	lockdep_assert_held(&mm->page_table_lock);
	if (last > end)
		last = end;
	if (last > vma->end)
		last = vma->end;
	*here = 0;
	for (uint64_t v = vpn; v < last; v++)
		*here += *vma_pte(vma, v) == folio;
	*stop = last;
	return *here == folio_mapcount_mm(mm, folio);
}

/*
 * zap_large_split - split the large folio mapped at page @vpn of @vma if [@vpn, @end) covers
 * only part of its mapping, so that its pages can leave one by one. Return: whether it was
 * split (false: covered whole, or someone holds a reference and it stays large).
 */
static bool zap_large_split(struct lv_mm *mm, struct vm_area *vma, uint64_t vpn, uint64_t end)
{
	uint64_t stop;
	long here;

	return !large_run(mm, vma, vpn, end, &stop, &here) &&
	       !split_folio_locked(*vma_pte(vma, vpn), NULL, 0, ULONG_MAX);
}

/*
 * zap_large - unmap the entries of the large folio mapped at page @vpn of @vma that lie in
 * [@vpn, @end). If they are all its entries, the folio leaves the mm at once: one reference
 * goes to @tlb, the others are dropped here (none of them can be the last). Otherwise (it
 * could not be split: someone holds a reference), its entries in the range are cleared and it
 * stays, large, mapped by the rest. Return: the next page to look at.
 */
static uint64_t zap_large(struct lv_mm *mm, struct vm_area *vma, uint64_t vpn, uint64_t end,
			  struct mmu_gather *tlb)
{
	struct lv_folio *folio = *vma_pte(vma, vpn);
	bool whole;
	uint64_t stop;
	long here;

	whole = large_run(mm, vma, vpn, end, &stop, &here);
	for (uint64_t v = vpn; v < stop; v++)
		if (*vma_pte(vma, v) == folio)
			*vma_pte(vma, v) = NULL;
	if (whole)
		WRITE_ONCE(folio->mapping, NULL);
	WRITE_ONCE(mm->rss, mm->rss - here);
	__atomic_fetch_sub(&folio->_refcount, (int)here - 1, __ATOMIC_RELEASE);
	if (tlb->nr == tlb->max)
		tlb_flush(tlb);
	tlb->folios[tlb->nr++] = folio;
	return stop;
}

/*
 * zap_range - unmap the present pages of @vma in [start, end). A large folio the range covers
 * in part is split first, so that only its pages in the range leave. A folio of a locked
 * region is munlocked as it leaves (the kernel's munlock_vma_folio() from the rmap removal),
 * once per folio: the pieces of a split keep PG_mlocked, and the ones that stay stay mlocked.
 * mlock_folio() set PG_mlocked under this page_table_lock, so the unlocked test sees it; a
 * large folio's munlock is not left batched (but with cfg.batch_large), so no batch holds a
 * reference to it afterwards.
 */
static void zap_range(struct lv_mm *mm, struct vm_area *vma, uint64_t start, uint64_t end,
		      struct mmu_gather *tlb)
{
	struct lv_folio *last = NULL;

	lockdep_assert_held(&mm->page_table_lock);
	for (uint64_t vpn = start; vpn < end;) {
		struct lv_folio **pte = vma_pte(vma, vpn);

		if (!*pte) {
			vpn++;
			continue;
		}
		if (pte_is_swap(*pte)) {
			free_swap_and_cache(mm->machine, pte_to_swp_entry(*pte));
			*pte = NULL;
			vpn++;
			continue;
		}
		if (pte_is_file(*pte)) {
			zap_file_pte(mm, pte, tlb);
			vpn++;
			continue;
		}
		if (folio_test_large(*pte) && zap_large_split(mm, vma, vpn, end)) {
			last = NULL; /* the head is a folio of its own now */
			continue;
		}
		if ((vma->vm_flags & VM_LOCKED) && *pte != last && folio_test_mlocked(*pte)) {
			munlock_folio(*pte);
			tlb->munlocked = true;
		}
		last = *pte;
		if (folio_test_large(*pte)) {
			vpn = zap_large(mm, vma, vpn, end, tlb);
		} else {
			zap_pte(mm, pte, tlb);
			vpn++;
		}
	}
}

/* ---- address spaces ------------------------------------------------------------------------ */

struct lv_mm *lv_mm_create(struct lv_machine *m, struct lv_memcg *memcg, int nid)
{
	struct memcg_guard guard;
	struct lv_mm *mm = NULL;
	int err = 0;

	if (!m || !node_valid(m, nid)) {
		errno = EINVAL;
		return NULL;
	}
	if (mem_cgroup_disabled(m))
		memcg = NULL;
	/* The caller's handle, until our address space pins the memcg (nr_mms below). */
	memcg_guard_enter(&guard, memcg);
	if ((memcg && memcg->machine != m) || !memcg_guard_pin(&guard)) {
		err = EINVAL;
		goto out;
	}
	if (!memcg && !mem_cgroup_disabled(m))
		memcg = m->root;
	mm = calloc(1, sizeof(*mm));
	if (!mm || !(mm->heap = vma_alloc(BRK_BASE, BRK_BASE, 0))) {
		free(mm);
		mm = NULL;
		err = ENOMEM;
		goto out;
	}
	mm->machine = m;
	mm->memcg = memcg;
	mm->nid = nid;
	mm->mmap_next = MMAP_BASE;
	INIT_LIST_HEAD(&mm->vmas);
	list_add(&mm->heap->list, &mm->vmas);
	lv_lock_init(&mm->page_table_lock, m->cfg.lock_backend, LV_LOCK_CLASS_MM, m->lock_sites);
	/* Like a task in a cgroup: the memcg cannot be removed while we belong to it. */
	lv_lock_acquire(&m->memcg_mutex);
	if (memcg && __atomic_load_n(&memcg->dying, __ATOMIC_SEQ_CST)) {
		lv_lock_release(&m->memcg_mutex);
		lv_lock_destroy(&mm->page_table_lock);
		vma_free(mm->heap);
		free(mm);
		mm = NULL;
		err = EINVAL;
		goto out;
	}
	if (memcg)
		memcg->nr_mms++; /* which also keeps it from being freed: it cannot be removed */
	list_add_tail(&mm->mms, &m->mms);
	lv_lock_release(&m->memcg_mutex);
out:
	memcg_guard_exit(&guard);
	if (err)
		errno = err;
	return mm;
}

static void mm_rcu_free(struct rcu_head *head)
{
	struct lv_mm *mm = container_of(head, struct lv_mm, rcu);

	rcu_free_begin();
	lv_lock_destroy(&mm->page_table_lock);
	free(mm);
	rcu_free_end();
}

void lv_mm_destroy(struct lv_mm *mm)
{
	struct lv_machine *m;
	struct mmu_gather tlb;
	struct list_head *pos, dead;

	if (!mm)
		return;
	m = mm->machine;
	tlb_gather_mmu(&tlb, mm, UINT64_MAX);
	lv_lock_acquire(&mm->page_table_lock);
	list_for_each (pos, &mm->vmas) {
		struct vm_area *vma = list_entry(pos, struct vm_area, list);

		zap_range(mm, vma, vma->start, vma->end, &tlb);
	}
	/* The regions go on our list, to be freed after the unlock. */
	INIT_LIST_HEAD(&dead);
	list_splice_tail_init(&mm->vmas, &dead);
	mm->cache = NULL;
	mm->heap = NULL;
	lv_lock_release(&mm->page_table_lock);
	tlb_finish_mmu(&tlb, mm);
	vmas_free(mm, &dead);

	lv_lock_acquire(&m->memcg_mutex);
	/* A swapoff walking us keeps its place in the list: wait until it moves on. */
	while (mm->pins) {
		lv_lock_release(&m->memcg_mutex);
		usleep(100);
		lv_lock_acquire(&m->memcg_mutex);
	}
	list_del(&mm->mms);
	lv_lock_stat_add(&m->retired_lock_stats[LV_LOCK_CLASS_MM], &mm->page_table_lock);
	if (mm->memcg)
		mm->memcg->nr_mms--;
	lv_lock_release(&m->memcg_mutex);
	/* Reclaim or migration may be about to lock us through a folio it isolated. */
	call_rcu_lv(&mm->rcu, mm_rcu_free);
}

/* destroy_all_mms - destroy what the caller left at machine teardown, reporting it. */
void destroy_all_mms(struct lv_machine *m)
{
	for (;;) {
		struct lv_mm *mm = NULL;

		lv_lock_acquire(&m->memcg_mutex);
		if (!list_empty(&m->mms))
			mm = list_first_entry(&m->mms, struct lv_mm, mms);
		lv_lock_release(&m->memcg_mutex);
		if (!mm)
			return;
		fprintf(stderr, "lruvec: machine destroyed with an address space still alive\n");
		lv_mm_destroy(mm);
	}
}

/*
 * for_each_mm_lock - call @fn on the page table lock of every live mm (statistics).
 * Context: m->memcg_mutex held, which also covers the retired totals a destroyed mm adds to.
 */
void for_each_mm_lock(struct lv_machine *m, void (*fn)(struct lv_lock *, void *), void *arg)
{
	struct list_head *pos;

	lockdep_assert_held(&m->memcg_mutex);
	list_for_each (pos, &m->mms)
		fn(&list_entry(pos, struct lv_mm, mms)->page_table_lock, arg);
}

struct lv_mm *mm_next_pinned(struct lv_machine *m, struct lv_mm *prev)
{
	struct lv_mm *next = NULL;
	struct list_head *pos;

	lv_lock_acquire(&m->memcg_mutex);
	pos = prev ? prev->mms.next : m->mms.next;
	if (pos != &m->mms) {
		next = list_entry(pos, struct lv_mm, mms);
		next->pins++;
	}
	if (prev)
		prev->pins--;
	lv_lock_release(&m->memcg_mutex);
	return next;
}

void mm_unpin(struct lv_mm *mm)
{
	lv_lock_acquire(&mm->machine->memcg_mutex);
	mm->pins--;
	lv_lock_release(&mm->machine->memcg_mutex);
}

struct lv_machine *mm_machine(const struct lv_mm *mm)
{
	return mm->machine;
}

int lv_mm_set_node(struct lv_mm *mm, int nid)
{
	if (!node_valid(mm->machine, nid))
		return -EINVAL;
	WRITE_ONCE(mm->nid, nid);
	return 0;
}

size_t lv_mm_rss(const struct lv_mm *mm)
{
	return (size_t)READ_ONCE(mm->rss);
}

/* ---- mapping and unmapping ----------------------------------------------------------------- */

/*
 * vma_grow - make room in @vma's page table for pages up to @end (exclusive), moving it into
 * *@spare (*@spare_cap entries, zeroed) if it is too small; *@spare then holds the old table,
 * to be freed after the unlock. Return: 0, or the capacity to allocate and try again with if
 * *@spare is too small as well (the table doubles, so that a heap grown a page at a time
 * copies each entry a bounded number of times).
 */
static size_t vma_grow(struct vm_area *vma, uint64_t end, struct lv_folio ***spare,
		       size_t *spare_cap)
{
	size_t need = end - vma->base, cap = vma->capacity ? vma->capacity : 64;
	struct lv_folio **old = vma->pte;

	if (need <= vma->capacity)
		return 0;
	while (cap < need)
		cap *= 2;
	if (*spare_cap < cap)
		return cap;
	if (vma->capacity) /* a new heap has no table yet */
		memcpy(*spare, old, vma->capacity * sizeof(*old));
	vma->pte = *spare;
	vma->capacity = *spare_cap;
	*spare = old;
	*spare_cap = 0;
	return 0;
}

/* pages_up - pages covering @bytes, without wrapping near 2^64. */
static uint64_t pages_up(uint64_t bytes)
{
	return (bytes >> PAGE_SHIFT) + ((bytes & (LV_PAGE_SIZE - 1)) != 0);
}

int lv_mm_brk(struct lv_mm *mm, int64_t delta, uint64_t *old_brk)
{
	struct vm_area *heap = mm->heap;
	uint64_t pages = pages_up(delta < 0 ? -(uint64_t)delta : (uint64_t)delta);
	struct lv_folio **spare = NULL;
	size_t spare_cap = 0, want = 0;
	struct mmu_gather tlb;
	int err;

	for (;;) {
		err = 0;
		tlb_gather_mmu(&tlb, mm, delta < 0 ? pages : 0);
		lv_lock_acquire(&mm->page_table_lock);
		if (old_brk)
			*old_brk = heap->end << PAGE_SHIFT;
		if (delta >= 0) {
			if (heap->end - heap->start + pages > MAX_MAP_PAGES)
				err = -ENOMEM;
			else if ((want = vma_grow(heap, heap->end + pages, &spare, &spare_cap)))
				err = -EAGAIN;
			else
				heap->end += pages;
			/* LV_MCL_FUTURE: the heap grows locked; it is one region (mm_types.h). */
			if (!err && (mm->def_flags & VM_LOCKED) && !(heap->vm_flags & VM_LOCKED)) {
				heap->vm_flags |= VM_LOCKED;
				mlock_vma_range(mm, heap, heap->start, heap->end, true);
			}
		} else if (pages > heap->end - heap->start) {
			err = -EINVAL;
		} else {
			zap_range(mm, heap, heap->end - pages, heap->end, &tlb);
			heap->end -= pages;
		}
		lv_lock_release(&mm->page_table_lock);
		tlb_finish_mmu(&tlb, mm);
		if (err != -EAGAIN)
			break;
		/* The table must grow: allocate unlocked, then look again (the heap may move). */
		free(spare);
		spare_cap = want;
		spare = pt_alloc(want);
		if (!spare) {
			err = -ENOMEM;
			break;
		}
	}
	free(spare); /* unused, or the table the heap outgrew */
	return err;
}

int lv_mmap_flags(struct lv_mm *mm, size_t len, unsigned int flags, uint64_t *addr)
{
	uint64_t pages = pages_up(len);
	struct vm_area *vma;

	if (!len || pages > MAX_MAP_PAGES || !addr || (flags & ~LV_MAP_LOCKED))
		return -EINVAL;
	vma = vma_alloc(0, 0, pages);
	if (!vma)
		return -ENOMEM;
	lv_lock_acquire(&mm->page_table_lock);
	vma->start = vma->base = mm->mmap_next;
	vma->end = vma->start + pages;
	vma->vm_flags = mm->def_flags | (flags & LV_MAP_LOCKED ? VM_LOCKED : 0);
	/* One guard page between regions, so that neighbours never merge by accident. */
	mm->mmap_next = vma->end + 1;
	vma_insert(mm, vma);
	*addr = vma->start << PAGE_SHIFT;
	lv_lock_release(&mm->page_table_lock);
	return 0;
}

int lv_mmap(struct lv_mm *mm, size_t len, uint64_t *addr)
{
	return lv_mmap_flags(mm, len, 0, addr);
}

int lv_mmap_file(struct lv_mm *mm, struct lv_file *file, uint64_t offset, size_t len,
		 unsigned int flags, uint64_t *addr)
{
	uint64_t pages = pages_up(len);
	struct file_rmap *rmap, *fresh;
	struct list_head *pos;
	struct vm_area *vma;
	struct i_mmap *im;

	if (!mm || !file || !len || pages > MAX_MAP_PAGES || !addr ||
	    (offset & (LV_PAGE_SIZE - 1)) || offset > UINT64_MAX - pages * LV_PAGE_SIZE ||
	    file_machine(file) != mm->machine)
		return -EINVAL;
	/* Shared mappings would need writeback of file pages: not built. */
	if ((flags & ~(LV_MAP_PRIVATE | LV_MAP_LOCKED)) || !(flags & LV_MAP_PRIVATE))
		return -EINVAL;
	vma = vma_alloc(0, 0, pages);
	fresh = calloc(1, sizeof(*fresh));
	if (!vma || !fresh) {
		if (vma)
			vma_free(vma);
		free(fresh);
		return -ENOMEM;
	}
	/* Our entry in the file's mappers is found or added before the region can fault. */
	im = file_i_mmap(file);
	lv_lock_acquire(&im->lock);
	rmap = NULL;
	list_for_each (pos, &im->list)
		if (list_entry(pos, struct file_rmap, list)->mm == mm) {
			rmap = list_entry(pos, struct file_rmap, list);
			break;
		}
	if (!rmap) {
		rmap = fresh;
		fresh = NULL;
		rmap->mm = mm;
		rmap->file = file;
		list_add_tail(&rmap->list, &im->list);
		WRITE_ONCE(im->nr, im->nr + 1);
		/* Before any fault reads the file's size: see file_mapped() (filemap.c). */
		smp_mb();
	}
	lv_lock_acquire_nested(&mm->page_table_lock);
	rmap->nr_vmas++;
	vma->start = vma->base = mm->mmap_next;
	vma->end = vma->start + pages;
	vma->file = file;
	vma->pgoff = offset >> PAGE_SHIFT;
	vma->rmap = rmap;
	/* Private copies are small pages: no huge page is faulted in a file mapping. */
	vma->vm_flags = mm->def_flags | VM_NOHUGEPAGE | (flags & LV_MAP_LOCKED ? VM_LOCKED : 0);
	mm->mmap_next = vma->end + 1;
	vma_insert(mm, vma);
	*addr = vma->start << PAGE_SHIFT;
	lv_lock_release(&mm->page_table_lock);
	lv_lock_release(&im->lock);
	free(fresh);
	return 0;
}

/*
 * vma_split - cut @vma at @at: [start, at) stays, [at, end) moves to @tail, a region allocated
 * before the lock with room for it.
 */
static void vma_split(struct lv_mm *mm, struct vm_area *vma, uint64_t at, struct vm_area *tail)
{
	lockdep_assert_held(&mm->page_table_lock);
	tail->start = tail->base = at;
	tail->end = vma->end;
	tail->vm_flags = vma->vm_flags;
	tail->file = vma->file;
	tail->pgoff = vma->file ? vma_file_index(vma, at) : 0;
	tail->rmap = vma->rmap;
	if (vma->rmap)
		vma->rmap->nr_vmas++;
	memcpy(tail->pte, vma_pte(vma, at), (vma->end - at) * sizeof(*tail->pte));
	vma->end = at;
	list_add(&tail->list, &vma->list);
}

/*
 * unmap_regions - unmap [@start, @end) of @mm's regions; regions that go away move to @dead,
 * to be freed after the unlock. Return: 0, -EINVAL (the range overlaps the heap), or -EAGAIN
 * before changing anything if the range is a hole in the middle of a region and *@tail is
 * missing or smaller than the *@want entries the region's far part needs.
 */
static int unmap_regions(struct lv_mm *mm, uint64_t start, uint64_t end, struct mmu_gather *tlb,
			 struct vm_area **tail, size_t *want, struct list_head *dead)
{
	struct list_head *pos, *n;

	lockdep_assert_held(&mm->page_table_lock);
	/* The heap shrinks only through lv_mm_brk(); an empty heap is nothing to overlap. */
	if (mm->heap->start < mm->heap->end && start < mm->heap->end && end > mm->heap->start)
		return -EINVAL;
	list_for_each_safe (pos, n, &mm->vmas) {
		struct vm_area *vma = list_entry(pos, struct vm_area, list);
		uint64_t s, e;

		if (vma == mm->heap || vma->end <= start || vma->start >= end)
			continue;
		if (vma->start < start && vma->end > end) {
			/* A hole in the middle (nothing else overlaps): the far part splits off. */
			if (!*tail || (*tail)->capacity < vma->end - end) {
				*want = vma->end - end;
				return -EAGAIN;
			}
			vma_split(mm, vma, end, *tail);
			*tail = NULL;
		}
		s = vma->start > start ? vma->start : start;
		e = vma->end < end ? vma->end : end;
		zap_range(mm, vma, s, e, tlb);
		if (s == vma->start && e == vma->end) {
			list_del(&vma->list);
			list_add(&vma->list, dead);
			if (mm->cache == vma)
				mm->cache = NULL;
		} else if (s == vma->start) {
			vma->start = e;
		} else {
			vma->end = s;
		}
	}
	return 0;
}

/*
 * page_range - the pages [*@start, *@end) of the bytes [@addr, @addr + @len), which must begin
 * on a page boundary and not wrap past 2^64 (munmap(2) refuses such a range as well).
 * Return: false if they do not.
 */
static bool page_range(uint64_t addr, size_t len, uint64_t *start, uint64_t *end)
{
	if ((addr & (LV_PAGE_SIZE - 1)) || (len && len - 1 > UINT64_MAX - addr))
		return false;
	*start = addr >> PAGE_SHIFT;
	*end = *start + pages_up(len);
	return true;
}

int lv_munmap(struct lv_mm *mm, uint64_t addr, size_t len)
{
	struct vm_area *tail = NULL;
	struct mmu_gather tlb;
	struct list_head dead;
	uint64_t start, end;
	size_t want = 0;
	int err;

	if (!len || !page_range(addr, len, &start, &end))
		return -EINVAL;
	INIT_LIST_HEAD(&dead);
	for (;;) {
		tlb_gather_mmu(&tlb, mm, end - start);
		lv_lock_acquire(&mm->page_table_lock);
		err = unmap_regions(mm, start, end, &tlb, &tail, &want, &dead);
		lv_lock_release(&mm->page_table_lock);
		tlb_finish_mmu(&tlb, mm);
		if (err != -EAGAIN)
			break;
		/* Allocate the far part's region unlocked, then look again. */
		if (tail)
			vma_free(tail);
		tail = vma_alloc(0, 0, want);
		if (!tail) {
			err = -ENOMEM;
			break;
		}
	}
	if (tail)
		vma_free(tail);
	vmas_free(mm, &dead);
	return err;
}

/*
 * split_needed - the size of the far part if [@start, @end) cuts @vma at @at (@at strictly
 * inside it), else 0. The heap is never cut: lv_mm_brk() moves its end, so it stays one
 * region, and a flag change on part of it applies to all of it.
 */
static size_t split_needed(struct lv_mm *mm, struct vm_area *vma, uint64_t at)
{
	if (!vma || vma == mm->heap || at <= vma->start || at >= vma->end)
		return 0;
	return vma->end - at;
}

/**
 * mm_vma_modify_flags - set @set and clear @clear in the flags of the regions covering
 * [@start, @end), splitting a region the range cuts (as the kernel's vma_modify_flags()
 * does), then call @fn (if not NULL) on each covered part under the same lock hold.
 * Return: the pages of the range covered by regions (the caller compares it with the range
 * for mlock(2)'s and madvise(2)'s -ENOMEM), or -ENOMEM if a region could not be split
 * (nothing changed).
 * Context: no lock held; allocates with none; takes the page_table_lock.
 */
long mm_vma_modify_flags(struct lv_mm *mm, uint64_t start, uint64_t end, unsigned long set,
			 unsigned long clear, vma_apply_fn fn, void *arg)
{
	struct vm_area *tail[2] = { NULL, NULL };
	size_t want[2] = { 0, 0 };
	struct list_head *pos;
	long covered = 0;

	for (;;) {
		bool again = false;

		lv_lock_acquire(&mm->page_table_lock);
		/* The far part of a cut at @start, then of a cut at @end (sizes before cutting). */
		want[0] = split_needed(mm, find_vma(mm, start), start);
		want[1] = end > start ? split_needed(mm, find_vma(mm, end - 1), end) : 0;
		for (int i = 0; i < 2; i++)
			if (want[i] && (!tail[i] || tail[i]->capacity < want[i]))
				again = true;
		if (!again)
			break;
		lv_lock_release(&mm->page_table_lock);
		for (int i = 0; i < 2; i++) {
			if (!want[i] || (tail[i] && tail[i]->capacity >= want[i]))
				continue;
			if (tail[i])
				vma_free(tail[i]);
			tail[i] = vma_alloc(0, 0, want[i]);
			if (!tail[i]) {
				if (tail[1 - i])
					vma_free(tail[1 - i]);
				return -ENOMEM;
			}
		}
	}
	if (want[0]) {
		vma_split(mm, find_vma(mm, start), start, tail[0]);
		tail[0] = NULL;
	}
	if (want[1]) {
		vma_split(mm, find_vma(mm, end - 1), end, tail[1]);
		tail[1] = NULL;
	}
	mm->cache = NULL;
	list_for_each (pos, &mm->vmas) {
		struct vm_area *vma = list_entry(pos, struct vm_area, list);
		uint64_t s = vma->start > start ? vma->start : start;
		uint64_t e = vma->end < end ? vma->end : end;

		if (s >= e)
			continue;
		covered += (long)(e - s);
		vma->vm_flags = (vma->vm_flags & ~clear) | set;
		if (fn)
			fn(mm, vma, s, e, arg);
	}
	lv_lock_release(&mm->page_table_lock);
	for (int i = 0; i < 2; i++)
		if (tail[i])
			vma_free(tail[i]);
	return covered;
}

/* ---- faults and data ----------------------------------------------------------------------- */

/*
 * do_anonymous_page - allocate, charge and zero (if @zero) a folio for @mm.
 * Return: the folio (one reference: the one the page table entry will hold), or NULL with
 * *@err set.
 * Context: no lock held (charging may reclaim).
 */
static struct lv_folio *do_anonymous_page(struct lv_mm *mm, bool zero, int *err)
{
	struct lv_folio *folio;

	folio = lv_folio_alloc(mm->machine, READ_ONCE(mm->nid), 0, mm->memcg,
			       LV_FOLIO_ANON | (zero ? LV_FOLIO_ZERO : 0));
	if (!folio)
		*err = -errno;
	return folio;
}

enum access_op { ACCESS_READ, ACCESS_WRITE, ACCESS_MEMSET };

/* page_data - the data of the page of @folio at page @index of its owner (NULL: no data). */
static char *page_data(struct lv_folio *folio, unsigned long index)
{
	char *data = lv_folio_data(folio);

	return data ? data + (index - folio->index) * LV_PAGE_SIZE : NULL;
}

/*
 * do_copy - copy @op's bytes between @buf and @data (NULL: a page without data, which reads as
 * zeros), and keep the page's accessed and dirty bits. Context: page_table_lock held.
 */
static void do_copy(struct lv_folio *folio, char *data, size_t off, size_t len, char *buf, int c,
		    enum access_op op)
{
	/* The page table's accessed bit: reclaim keeps a page used since it last looked. */
	if (!folio_test_referenced(folio))
		folio_set_referenced(folio);
	if (op == ACCESS_READ) {
		if (data)
			memcpy(buf, data + off, len);
		else
			memset(buf, 0, len);
		return;
	}
	if (data) {
		if (op == ACCESS_WRITE)
			memcpy(data + off, buf, len);
		else
			memset(data + off, c, len);
	}
	if (!folio_test_dirty(folio))
		folio_set_dirty(folio);
}

#define FILE_FAULT_RETRY 1 /* file_access_page(): the region changed; start again */

/*
 * file_access_page - access_page() on page @vpn of file mapping @vma, entered with the
 * page_table_lock held, left without it. A read of a missing page maps the page cache folio
 * (read in through the page cache, charged to the mm's memcg as a read of the file would be),
 * read-only: the entry holds a reference and counts in the folio's mapcount. A write to a page
 * the mm has no copy of yet is the COW fault of a private mapping: a new anon folio charged to
 * the mm's memcg gets the file page's bytes and replaces the entry (if any), added to the anon
 * LRU through folio_add_lru_vma(). Allocation and copying happen unlocked; the entry is
 * installed only if it did not change meanwhile and the page still lies in the file, whose size
 * is read under the lock (truncation stores it before it unmaps: docs/protocol.md).
 * Return: 0, FILE_FAULT_RETRY, -EFAULT (past the end of the file, or the file was closed),
 * -ENOMEM, -EIO, -ENOENT.
 */
static int file_access_page(struct lv_mm *mm, struct vm_area *vma, uint64_t vpn, size_t off,
			    size_t len, char *buf, int c, enum access_op op)
{
	struct lv_folio *cache = NULL, *new = NULL, *old = NULL, *folio, **pte;
	struct lv_file *file = vma->file;
	unsigned long index = vma_file_index(vma, vpn);
	int err = 0;

	lockdep_assert_held(&mm->page_table_lock);
	for (;;) {
		bool install;

		if (!file || (vma->vm_flags & VM_FILE_GONE)) {
			err = -EFAULT;
			break;
		}
		pte = vma_pte(vma, vpn);
		folio = *pte;
		if (pte_is_swap(folio)) {
			/* A private copy was swapped out: the anon path reads it back. */
			err = FILE_FAULT_RETRY;
			break;
		}
		if (folio && (op == ACCESS_READ || !pte_is_file(folio))) {
			do_copy(folio, page_data(folio, pte_is_file(folio) ? index : vpn), off, len,
				buf, c, op);
			break;
		}
		if ((uint64_t)index * LV_PAGE_SIZE >= file_size(file)) {
			err = -EFAULT; /* SIGBUS: past the end of the file */
			break;
		}
		install = op == ACCESS_READ ? cache && !folio : new && (!folio || folio == cache);
		if (install && folio_file_mapping(cache) == file) {
			if (op == ACCESS_READ) {
				*pte = cache; /* the entry takes the lookup's reference */
				folio_file_map_add(cache, 1);
				WRITE_ONCE(mm->rss, mm->rss + 1);
				do_copy(cache, page_data(cache, index), off, len, buf, c, op);
				cache = NULL;
				break;
			}
			if (folio) {
				/* The read-only entry gives way to the copy. */
				folio_file_map_add(folio, -1);
				old = folio;
			} else {
				WRITE_ONCE(mm->rss, mm->rss + 1);
			}
			new->mapping = anon_mapping(mm);
			new->index = vpn;
			folio_add_lru_vma(new, vma); /* mlocked if VM_LOCKED */
			*pte = new; /* the entry takes the allocation's reference */
			do_copy(new, page_data(new, vpn), off, len, buf, c, op);
			new = NULL;
			break;
		}
		/* Missing what the entry needs, or the page cache changed: get it unlocked. */
		if (!cache && folio && pte_is_file(folio)) {
			/* A write to a page mapped read-only copies the folio the entry maps. */
			folio_get(folio);
			cache = folio;
		}
		lv_lock_release(&mm->page_table_lock);
		if (cache && folio_file_mapping(cache) != file) {
			/* Truncated meanwhile: the copy, if any, holds stale bytes. */
			lv_folio_put(cache);
			cache = NULL;
			if (new)
				lv_folio_put(new);
			new = NULL;
		}
		if (!cache) {
			cache = filemap_fault(file, mm->memcg, index, &err);
			if (!cache)
				goto out;
		}
		if (op != ACCESS_READ && !new) {
			char *from = page_data(cache, index), *to;

			new = do_anonymous_page(mm, false, &err);
			if (!new)
				goto out;
			to = lv_folio_data(new);
			if (to && from)
				memcpy(to, from, LV_PAGE_SIZE);
			else if (to)
				memset(to, 0, LV_PAGE_SIZE);
		}
#ifdef LV_DEBUG
		if (file_fault_hook)
			file_fault_hook(mm, cache);
#endif
		lv_lock_acquire(&mm->page_table_lock);
		vma = find_vma(mm, vpn);
		if (!vma || vma->file != file || vma_file_index(vma, vpn) != index) {
			err = vma ? FILE_FAULT_RETRY : -EFAULT;
			break;
		}
	}
	lv_lock_release(&mm->page_table_lock);
out:
	/* None of these is a last reference but the unused copy's, and no lock is held. */
	if (new)
		lv_folio_put(new);
	if (cache)
		lv_folio_put(cache);
	if (old)
		lv_folio_put(old);
	return err;
}

/*
 * access_page - do @op on @len bytes at offset @off of page @vpn, faulting it in for writes.
 * Return: 0, -EFAULT or -ENOMEM.
 */
static int access_page(struct lv_mm *mm, uint64_t vpn, size_t off, size_t len, char *buf, int c,
		       enum access_op op)
{
	struct lv_folio *new = NULL, *huge = NULL, *folio, **pte;
	bool huge_tried = false;
	struct vm_area *vma;
	uint64_t haddr = THP_NO_FAULT;
	char *data;
	int err;

	for (;;) {
		unsigned long vm_flags;

		lv_lock_acquire(&mm->page_table_lock);
		vma = find_vma(mm, vpn);
		if (!vma) {
			lv_lock_release(&mm->page_table_lock);
			if (new)
				lv_folio_put(new); /* unmapped while we allocated */
			if (huge)
				lv_folio_put(huge);
			return -EFAULT;
		}
		if (vma->file || (vma->vm_flags & VM_FILE_GONE)) {
			if (new || huge) {
				/* The region was replaced while we allocated: start again. */
				lv_lock_release(&mm->page_table_lock);
				if (new)
					lv_folio_put(new);
				if (huge)
					lv_folio_put(huge);
				new = huge = NULL;
				continue;
			}
			if (!pte_is_swap(*vma_pte(vma, vpn))) {
				err = file_access_page(mm, vma, vpn, off, len, buf, c, op);
				if (err == FILE_FAULT_RETRY)
					continue;
				return err;
			}
		}
		pte = vma_pte(vma, vpn);
		/* A huge page allocated unlocked goes in if its block is still empty. */
		if (huge && thp_fault_map(mm, huge, haddr))
			huge = NULL;
		folio = *pte;
		if (pte_is_swap(folio)) {
			/* Swapped out: read it back with no lock held, then look again. */
			swp_entry_t e = pte_to_swp_entry(folio);

			lv_lock_release(&mm->page_table_lock);
			if (new)
				lv_folio_put(new);
			if (huge)
				lv_folio_put(huge);
			new = huge = NULL;
			err = do_swap_page(mm, vpn, e);
			if (err)
				return err;
			continue;
		}
		if (folio || op == ACCESS_READ || new)
			break;
		vm_flags = vma->vm_flags;
		if (!huge_tried)
			haddr = thp_fault_suitable(mm, vma, vpn);
		lv_lock_release(&mm->page_table_lock);
		if (huge) {
			/* A racing fault took part of the block: fall back to a small page. */
			lv_folio_put(huge);
			huge = NULL;
		} else if (!huge_tried && haddr != THP_NO_FAULT) {
			huge_tried = true;
			huge = thp_fault_alloc(mm, vm_flags);
			if (huge)
				continue;
		}
		/*
		 * A write of the whole page need not zero it first: the page is installed and
		 * written in one page_table_lock section, so nobody sees what it held before.
		 */
		new = do_anonymous_page(mm, off || len != LV_PAGE_SIZE, &err);
		if (!new)
			return err;
	}
	if (!folio && new) {
		/*
		 * Owned and on the LRU only once it won the entry, as the kernel adds a new anon
		 * folio under the PTE lock: a losing fault's folio was never seen by anyone.
		 */
		new->mapping = anon_mapping(mm);
		new->index = vpn;
		folio_add_lru_vma(new, vma); /* mlocked if VM_LOCKED */
		*pte = folio = new;	     /* the entry takes the allocation's reference */
		WRITE_ONCE(mm->rss, mm->rss + 1);
		new = NULL;
	}
	data = folio ? lv_folio_data(folio) : NULL;
	/* The page table's accessed bit: reclaim keeps a page used since it last looked. */
	if (folio && !folio_test_referenced(folio))
		folio_set_referenced(folio);
	/* Every entry of a large folio points at its head: the page is at its offset. */
	if (data && folio_test_large(folio))
		data += (vpn - folio->index) * LV_PAGE_SIZE;
	if (op == ACCESS_READ) {
		if (data)
			memcpy(buf, data + off, len);
		else
			memset(buf, 0, len);
	} else {
		if (data) {
			if (op == ACCESS_WRITE)
				memcpy(data + off, buf, len);
			else
				memset(data + off, c, len);
		}
		/* A write after MADV_FREE keeps the page (reclaim tests this under our lock). */
		if (!folio_test_dirty(folio))
			folio_set_dirty(folio);
	}
	lv_lock_release(&mm->page_table_lock);
	if (new)
		lv_folio_put(new); /* another thread faulted it in first */
	if (huge)
		lv_folio_put(huge);
	return 0;
}

static int access_range(struct lv_mm *mm, uint64_t addr, char *buf, int c, size_t len,
			enum access_op op)
{
	if (!mm || (len && addr + len - 1 < addr))
		return -EFAULT;
	while (len) {
		size_t off = addr & (LV_PAGE_SIZE - 1);
		size_t n = LV_PAGE_SIZE - off < len ? LV_PAGE_SIZE - off : len;
		int err = access_page(mm, addr >> PAGE_SHIFT, off, n, buf, c, op);

		if (err)
			return err;
		addr += n;
		len -= n;
		if (buf)
			buf += n;
	}
	return 0;
}

int lv_mm_write(struct lv_mm *mm, uint64_t addr, const void *buf, size_t len)
{
	return access_range(mm, addr, (char *)buf, 0, len, ACCESS_WRITE);
}

int lv_mm_memset(struct lv_mm *mm, uint64_t addr, int c, size_t len)
{
	return access_range(mm, addr, NULL, c, len, ACCESS_MEMSET);
}

int lv_mm_read(struct lv_mm *mm, uint64_t addr, void *buf, size_t len)
{
	return access_range(mm, addr, buf, 0, len, ACCESS_READ);
}

/* ---- madvise ------------------------------------------------------------------------------- */

/* madvise_folio - apply LV_MADV_COLD or LV_MADV_FREE to one folio, small or whole. */
static void madvise_folio(struct lv_folio *folio, int advice)
{
	if (advice == LV_MADV_COLD) {
		lv_folio_deactivate(folio);
		return;
	}
	/* Clean now: reclaim may drop it unless it is written again. */
	folio_clear_dirty(folio);
	if (folio_test_swapbacked(folio))
		lv_folio_mark_lazyfree(folio);
}

/*
 * madvise_range - apply LV_MADV_COLD or LV_MADV_FREE to the present pages of @vma in [@s, @e).
 * A large folio the range covers whole is advised once; one it covers in part is split first
 * and its pages in the range advised one by one, or left alone if it cannot be split, as the
 * kernel leaves it.
 */
static void madvise_range(struct lv_mm *mm, struct vm_area *vma, uint64_t s, uint64_t e, int advice)
{
	lockdep_assert_held(&mm->page_table_lock);
	for (uint64_t vpn = s; vpn < e;) {
		struct lv_folio *folio = *vma_pte(vma, vpn);
		uint64_t stop;
		long here;

		/* A page cache page belongs to its file: only private copies are advised. */
		if (!pte_present(folio) || pte_is_file(folio)) {
			vpn++;
			continue;
		}
		if (!folio_test_large(folio)) {
			madvise_folio(folio, advice);
			vpn++;
			continue;
		}
		if (large_run(mm, vma, vpn, e, &stop, &here))
			madvise_folio(folio, advice);
		else if (!split_folio_locked(folio, NULL, 0, ULONG_MAX))
			continue; /* small pages now: look at them again */
		vpn = stop;
	}
}

/*
 * madvise_pageout - LV_MADV_PAGEOUT: isolate the present folios of [@start, @end) a batch at a
 * time (references taken under the page_table_lock, isolation after it) and reclaim them at
 * once, accessed or not, as the kernel's madvise_pageout() (large folios are split by reclaim;
 * unevictable ones go straight back, ones in batches or pinned elsewhere are left). Return: 0, or
 * -ENOMEM if part of the range is not mapped.
 */
static int madvise_pageout(struct lv_mm *mm, uint64_t start, uint64_t end)
{
	struct lv_folio *batch[RELEASE_BATCH];
	uint64_t vpn = start, covered = 0;
	struct list_head *pos;

	lv_lock_acquire(&mm->page_table_lock);
	list_for_each (pos, &mm->vmas) {
		struct vm_area *vma = list_entry(pos, struct vm_area, list);
		uint64_t s = vma->start > start ? vma->start : start;
		uint64_t e = vma->end < end ? vma->end : end;

		covered += s < e ? e - s : 0;
	}
	lv_lock_release(&mm->page_table_lock);
	/* Folios in this CPU's batches cannot be isolated (the kernel's lru_add_drain()). */
	lv_lru_add_drain(mm->machine);
	while (vpn < end) {
		struct list_head list;
		unsigned int nr = 0;

		lv_lock_acquire(&mm->page_table_lock);
		list_for_each (pos, &mm->vmas) {
			struct vm_area *vma = list_entry(pos, struct vm_area, list);
			uint64_t v = vma->start > vpn ? vma->start : vpn;
			uint64_t e = vma->end < end ? vma->end : end;

			for (; v < e && nr < RELEASE_BATCH; v++) {
				struct lv_folio *folio = *vma_pte(vma, v);

				if (!pte_present(folio) || (nr && batch[nr - 1] == folio))
					continue;
				folio_get(folio);
				batch[nr++] = folio;
			}
			if (nr == RELEASE_BATCH) {
				vpn = v;
				break;
			}
		}
		if (nr < RELEASE_BATCH)
			vpn = end;
		lv_lock_release(&mm->page_table_lock);
		INIT_LIST_HEAD(&list);
		for (unsigned int i = 0; i < nr; i++) {
			if (!folio_isolate_lru(batch[i]))
				continue;
			/*
			 * Unevictable goes straight back, through the add that rescues a folio
			 * stranded there by a munlock that lost the pin: reclaim would keep its
			 * PG_unevictable and might mark it active besides.
			 */
			if (folio_test_unevictable(batch[i]))
				folio_putback_lru(batch[i]);
			else
				list_add_tail(&batch[i]->lru, &list);
		}
		lv_folios_put(batch, nr); /* the isolation holds its own */
		reclaim_pages(&list);
	}
	return covered == end - start ? 0 : -ENOMEM;
}

int lv_madvise(struct lv_mm *mm, uint64_t addr, size_t len, int advice)
{
	uint64_t start, end, covered = 0;
	struct mmu_gather tlb;
	struct list_head *pos;
	struct vm_area *vma;

	if (!page_range(addr, len, &start, &end) ||
	    (advice != LV_MADV_DONTNEED && advice != LV_MADV_FREE && advice != LV_MADV_COLD &&
	     advice != LV_MADV_HUGEPAGE && advice != LV_MADV_NOHUGEPAGE &&
	     advice != LV_MADV_PAGEOUT))
		return -EINVAL;
	if (advice == LV_MADV_PAGEOUT)
		return madvise_pageout(mm, start, end);
	if (advice == LV_MADV_HUGEPAGE || advice == LV_MADV_NOHUGEPAGE) {
		/* One excludes the other, as in the kernel's hugepage_madvise(). */
		bool huge = advice == LV_MADV_HUGEPAGE;
		long pages = mm_vma_modify_flags(mm, start, end, huge ? VM_HUGEPAGE : VM_NOHUGEPAGE,
						 huge ? VM_NOHUGEPAGE : VM_HUGEPAGE, NULL, NULL);

		if (pages < 0)
			return (int)pages;
		return (uint64_t)pages == end - start ? 0 : -ENOMEM;
	}
	/*
	 * Folios still in this CPU's lru_add batch could be neither deactivated nor freed. As
	 * the kernel's lru_add_drain(), this is local: folios queued on another slot (the add
	 * found this slot busy, or ran on another CPU) stay as they are.
	 */
	if (advice != LV_MADV_DONTNEED)
		lv_lru_add_drain(mm->machine);
	tlb_gather_mmu(&tlb, mm, advice == LV_MADV_DONTNEED ? end - start : 0);
	lv_lock_acquire(&mm->page_table_lock);
	list_for_each (pos, &mm->vmas) {
		uint64_t s, e;

		vma = list_entry(pos, struct vm_area, list);
		s = vma->start > start ? vma->start : start;
		e = vma->end < end ? vma->end : end;
		if (s >= e)
			continue;
		covered += e - s;
		if (advice == LV_MADV_DONTNEED)
			zap_range(mm, vma, s, e, &tlb);
		else
			madvise_range(mm, vma, s, e, advice);
	}
	lv_lock_release(&mm->page_table_lock);
	tlb_finish_mmu(&tlb, mm);
	return covered == end - start ? 0 : -ENOMEM;
}

/* ---- reverse map: reclaim and migration ---------------------------------------------------- */

/*
 * mm_lock_folio - lock the mm that maps @folio. A small folio's entry is then *@ptep; a
 * large folio's entries are the ones in [index, index + 2^order) that point at it
 * (folio_mapcount_mm() counts them), and *@ptep is NULL.
 * Return: the mm, locked, or NULL (unlocked) if the folio is no longer mapped by an mm.
 * Context: RCU read-side critical section (keeps the mm valid to lock).
 */
struct lv_mm *mm_lock_folio(struct lv_folio *folio, struct lv_folio ***ptep)
{
	struct lv_mm *mm = folio_anon_mm(folio);
	struct vm_area *vma;

	*ptep = NULL;
	if (!mm)
		return NULL;
	/* The rmap walk's PTE lock: the kernel's page_vma_mapped_walk() takes it. */
	lv_lock_acquire_at(&mm->page_table_lock, "page_vma_mapped_walk");
	if (folio_anon_mm(folio) == mm) {
		if (folio_test_large(folio))
			return mm;
		vma = find_vma(mm, folio->index);
		VM_BUG_ON_FOLIO(!vma || *vma_pte(vma, folio->index) != folio, folio);
		if (vma && *vma_pte(vma, folio->index) == folio) {
			*ptep = vma_pte(vma, folio->index);
			return mm;
		}
	}
	lv_lock_release(&mm->page_table_lock);
	return NULL;
}

/**
 * try_to_unmap_lazyfree - reclaim an isolated lazyfree folio from the mm that maps it. One
 * written since LV_MADV_FREE is swap-backed again: reclaim swaps it out, or puts it on the
 * active anon list, as the kernel's shrink_folio_list() does when it cannot. A clean large folio is
 * not freed here: reclaim splits it first, and its pages come here one by one; one that could not
 * be split stays. Return: true if the folio left the mm; its count is then zero and the caller
 * frees it. Context: the caller owns the isolation reference and holds no lock.
 */
bool try_to_unmap_lazyfree(struct lv_folio *folio)
{
	struct lv_folio **pte;
	struct lv_mm *mm;
	bool freed = false;

	/* Only lazyfree folios sit on the file lists reclaim scans; a written one went to anon. */
	VM_BUG_ON_FOLIO(folio_test_swapbacked(folio), folio);
	rcu_read_lock();
	mm = mm_lock_folio(folio, &pte);
	if (!mm) {
		rcu_read_unlock();
		/* Unmapped while isolated: only the isolation holds it. */
		return folio_ref_freeze(folio, 1);
	}
	if (find_vma(mm, folio->index)->vm_flags & VM_LOCKED) {
		/*
		 * The kernel's try_to_unmap_one() on a VM_LOCKED region: never unmap, mlock the
		 * folio instead (our isolation makes its drain a no-op, and the putback culls it).
		 * The region may have been locked while the folio sat in a batch.
		 */
		mlock_folio(folio);
	} else if (folio_test_dirty(folio)) {
		/* Isolated, so unlinked: PG_swapbacked may change. Reclaim swaps it or keeps it. */
		folio_set_swapbacked(folio);
	} else if (pte && folio_ref_freeze(folio, 2 /* the entry's and the isolation's */)) {
		pte_clear_folio(mm, pte);
		freed = true;
	}
	lv_lock_release(&mm->page_table_lock);
	rcu_read_unlock();
	return freed;
}

/*
 * The reverse map of page cache folios. A file's mappers (struct i_mmap: one file_rmap per
 * address space, on a list under the file's i_mmap lock) lead to the regions that may map a
 * page: each address space's regions of that file, walked under its page_table_lock, taken
 * nested under the i_mmap lock. Neither is ever taken under a mapping lock or an LRU lock, so
 * reclaim and truncation walk with nothing else held; the i_mmap lock keeps every listed mm
 * alive (an mm leaves the lists in lv_mm_destroy() before it is freed).
 */

/*
 * vma_file_range - the pages of @vma that map file pages [@first, @last]: [*@s, *@e).
 * Return: whether there are any.
 */
static bool vma_file_range(const struct vm_area *vma, unsigned long first, unsigned long last,
			   uint64_t *s, uint64_t *e)
{
	uint64_t lo = vma_file_index(vma, vma->start), hi = vma_file_index(vma, vma->end - 1);

	if (last < lo || first > hi)
		return false;
	*s = vma->start + (first > lo ? first - lo : 0);
	*e = vma->end - (last < hi ? hi - last : 0);
	return true;
}

#ifdef LV_DEBUG
void (*file_unmap_hook)(struct lv_folio *folio);
void (*file_fault_hook)(struct lv_mm *mm, struct lv_folio *cache);
#endif

/**
 * try_to_unmap_file - unmap an isolated page cache folio from every page table mapping it, for
 * its eviction. An entry of a locked region stays (the kernel's try_to_unmap_one() refuses
 * VM_LOCKED), and so does the folio.
 * Return: true if no entry maps the folio any more.
 * Context: the caller owns the isolation reference and holds no lock; takes the file's i_mmap
 * lock, then each mapper's page_table_lock.
 */
bool try_to_unmap_file(struct lv_folio *folio)
{
	unsigned long first = folio->index, last = first + (unsigned long)folio_nr_pages(folio) - 1;
	struct list_head *pos, *p;
	struct lv_file *file;
	struct i_mmap *im;
	int dropped = 0;

	rcu_read_lock(); /* keeps a file being closed valid to lock */
	file = folio_file_mapping(folio);
	if (!file) {
		rcu_read_unlock();
		return !folio_file_mapcount(folio);
	}
	im = file_i_mmap(file);
	lv_lock_acquire_at(&im->lock, "rmap_walk_file");
	list_for_each (pos, &im->list) {
		struct lv_mm *mm = list_entry(pos, struct file_rmap, list)->mm;

		lv_lock_acquire_nested_at(&mm->page_table_lock, "page_vma_mapped_walk");
		list_for_each (p, &mm->vmas) {
			struct vm_area *vma = list_entry(p, struct vm_area, list);
			uint64_t s, e;

			if (vma->file != file || !vma_file_range(vma, first, last, &s, &e))
				continue;
			for (uint64_t vpn = s; vpn < e; vpn++) {
				struct lv_folio **pte = vma_pte(vma, vpn);

				if (*pte != folio || (vma->vm_flags & VM_LOCKED))
					continue;
				*pte = NULL;
				folio_file_map_add(folio, -1);
				WRITE_ONCE(mm->rss, mm->rss - 1);
				dropped++;
			}
		}
		lv_lock_release(&mm->page_table_lock);
	}
	lv_lock_release(&im->lock);
	rcu_read_unlock();
	/* The entries' references: never the last, the page cache and the isolation hold theirs. */
	if (dropped)
		__atomic_fetch_sub(&folio->_refcount, dropped, __ATOMIC_RELEASE);
#ifdef LV_DEBUG
	if (file_unmap_hook)
		file_unmap_hook(folio);
#endif
	return !folio_file_mapcount(folio);
}

/**
 * unmap_mapping_range - unmap every page table entry mapping a page of @file at index @from or
 * beyond, and every private copy of a page at @cow_from or beyond (truncation: the kernel's
 * unmap_mapping_range() with even_cows for the part past the end).
 * Context: no lock held; takes the file's i_mmap lock, then each mapper's page_table_lock, then
 * (for full release batches) LRU, pcp and zone locks.
 */
void unmap_mapping_range(struct lv_file *file, unsigned long from, unsigned long cow_from)
{
	struct i_mmap *im = file_i_mmap(file);
	struct list_head *pos, *p;

	lv_lock_acquire(&im->lock);
	list_for_each (pos, &im->list) {
		struct lv_mm *mm = list_entry(pos, struct file_rmap, list)->mm;
		struct mmu_gather tlb;

		/* No buffer: allocating under the lock is not allowed; full batches go at once. */
		tlb_gather_mmu(&tlb, mm, 0);
		lv_lock_acquire_nested_at(&mm->page_table_lock, "zap_pte_range");
		list_for_each (p, &mm->vmas) {
			struct vm_area *vma = list_entry(p, struct vm_area, list);
			uint64_t s, e, cs, ce;

			if (vma->file != file || !vma_file_range(vma, from, ULONG_MAX, &s, &e))
				continue;
			if (vma_file_range(vma, cow_from, ULONG_MAX, &cs, &ce)) {
				zap_range(mm, vma, cs, ce, &tlb);
				e = cs;
			}
			for (uint64_t vpn = s; vpn < e; vpn++) {
				struct lv_folio **pte = vma_pte(vma, vpn);

				if (pte_present(*pte) && pte_is_file(*pte))
					zap_file_pte(mm, pte, &tlb);
			}
		}
		lv_lock_release(&mm->page_table_lock);
		/* Under the i_mmap lock, which ranks above the LRU's, as page_table_lock does. */
		tlb_finish_mmu(&tlb, mm);
	}
	lv_lock_release(&im->lock);
}

/**
 * unmap_mapping_detach - @file is being closed: the regions still mapping it (a caller's bug,
 * reported) lose it, and every later access to them fails with -EFAULT. Its pages are already
 * unmapped (lv_file_truncate() to 0).
 * Context: no lock held; takes the i_mmap lock, then each mapper's page_table_lock.
 */
void unmap_mapping_detach(struct lv_file *file)
{
	struct i_mmap *im = file_i_mmap(file);

	lv_lock_acquire(&im->lock);
	if (!list_empty(&im->list))
		fprintf(stderr, "lruvec: file closed while still mapped: its regions fail from now "
				"on\n");
	while (!list_empty(&im->list)) {
		struct file_rmap *rmap = list_first_entry(&im->list, struct file_rmap, list);
		struct lv_mm *mm = rmap->mm;
		struct list_head *p;

		lv_lock_acquire_nested(&mm->page_table_lock);
		list_for_each (p, &mm->vmas) {
			struct vm_area *vma = list_entry(p, struct vm_area, list);

			if (vma->rmap == rmap) {
				vma->file = NULL;
				vma->rmap = NULL;
				vma->vm_flags |= VM_FILE_GONE;
			}
		}
		lv_lock_release(&mm->page_table_lock);
		list_del(&rmap->list);
		WRITE_ONCE(im->nr, im->nr - 1);
		free(rmap);
	}
	lv_lock_release(&im->lock);
}

/**
 * anon_folio_get - the folio mapped at page @vpn of @mm, with a reference.
 * Return: the folio, or NULL with *@err = -EFAULT (no region) or -ENOENT (not present).
 */
struct lv_folio *anon_folio_get(struct lv_mm *mm, uint64_t vpn, int *err)
{
	struct lv_folio *folio = NULL;
	struct vm_area *vma;

	lv_lock_acquire(&mm->page_table_lock);
	vma = find_vma(mm, vpn);
	if (!vma)
		*err = -EFAULT;
	else if (!pte_present(*vma_pte(vma, vpn)))
		*err = -ENOENT; /* not there, or swapped out */
	else
		folio_get(folio = *vma_pte(vma, vpn));
	lv_lock_release(&mm->page_table_lock);
	return folio;
}

/**
 * anon_folio_replace - the anon half of migration: if @old is still mapped and exactly
 * @expected references exist, freeze them, copy @old into @new and point the entry at @new.
 * @expected counts the owner's references as one; a large folio has one per entry mapping
 * it, all of which are counted and switched to @new.
 * Return: 0 (@old's count is zero, @new holds the entries' references plus the caller's),
 * -EAGAIN (someone holds a transient reference: retry), -EBUSY (@old is no longer mapped).
 * Context: the caller owns @old's isolation; no lock held.
 */
int anon_folio_replace(struct lv_folio *old, struct lv_folio *new, int expected)
{
	uint64_t index = old->index;
	long nr = folio_nr_pages(old), mapped = 1;
	struct lv_folio **pte;
	struct lv_mm *mm;
	int err = 0;

	rcu_read_lock();
	mm = mm_lock_folio(old, &pte);
	if (mm && !pte)
		mapped = folio_mapcount_mm(mm, old);
	if (!mm) {
		err = -EBUSY;
	} else if (!folio_ref_freeze(old, expected - 1 + (int)mapped)) {
		err = -EAGAIN;
	} else {
		folio_copy_data(new, old);
		folio_migrate_copy(new, old);
		/* The entries' references. */
		__atomic_fetch_add(&new->_refcount, (int)mapped, __ATOMIC_RELAXED);
		if (pte) {
			*pte = new;
		} else {
			for (long i = 0; i < nr; i++) {
				struct vm_area *vma = find_vma(mm, index + (uint64_t)i);

				if (vma && *vma_pte(vma, index + (uint64_t)i) == old)
					*vma_pte(vma, index + (uint64_t)i) = new;
			}
		}
	}
	if (mm)
		lv_lock_release(&mm->page_table_lock);
	rcu_read_unlock();
	return err;
}

/*
 * gather_misplaced - take a reference on up to @max folios of @mm at pages >= *@vpn that sit
 * on a node in @from_nodes other than @to_node, each folio once (a large one is mapped by up
 * to 512 entries); *@vpn moves past the last page looked at.
 * Return: how many were gathered (0: none left).
 */
static unsigned int gather_misplaced(struct lv_mm *mm, uint64_t *vpn, uint64_t from_nodes,
				     int to_node, struct lv_folio **batch, unsigned int max)
{
	unsigned int nr = 0;
	struct list_head *pos;

	lv_lock_acquire(&mm->page_table_lock);
	list_for_each (pos, &mm->vmas) {
		struct vm_area *vma = list_entry(pos, struct vm_area, list);
		uint64_t v = *vpn > vma->start ? *vpn : vma->start;

		for (; v < vma->end && nr < max; v++) {
			struct lv_folio *folio = *vma_pte(vma, v);

			/* Page cache pages move with their file (lv_file_migrate_pages()). */
			if (pte_present(folio) && !pte_is_file(folio) &&
			    (from_nodes & (1ull << folio_nid(folio))) &&
			    folio_nid(folio) != to_node && (!nr || batch[nr - 1] != folio)) {
				folio_get(folio);
				batch[nr++] = folio;
				/* Its other entries follow it: skip them (in any region). */
				if (folio_test_large(folio) &&
				    folio->index + (uint64_t)folio_nr_pages(folio) > v + 1)
					v = folio->index + (uint64_t)folio_nr_pages(folio) - 1;
			}
		}
		if (v > *vpn)
			*vpn = v;
		if (nr == max)
			break;
	}
	lv_lock_release(&mm->page_table_lock);
	return nr;
}

/**
 * mm_migrate_walk - migrate every page of @mm on a node in @from_nodes to @to_node.
 * Return: pages that could not be moved.
 * Context: the LRU cache is disabled by the caller; no lock held.
 */
long mm_migrate_walk(struct lv_mm *mm, uint64_t from_nodes, int to_node)
{
	struct lv_folio *batch[RELEASE_BATCH];
	unsigned int nr;
	uint64_t vpn = 0;
	long failed = 0;

	/* Gather a batch with references under the lock, migrate it without. */
	while ((nr = gather_misplaced(mm, &vpn, from_nodes, to_node, batch, RELEASE_BATCH)))
		for (unsigned int i = 0; i < nr; i++)
			failed += migrate_folio_to(batch[i], to_node) < 0;
	return failed;
}

/* ---- lv_check ------------------------------------------------------------------------------ */

/* quiescent_entry - the entry of page @vpn of @mm, read without its lock (lv_check only). */
static struct lv_folio *quiescent_entry(struct lv_mm *mm, uint64_t vpn)
{
	struct list_head *pos;

	list_for_each (pos, &mm->vmas) {
		struct vm_area *vma = list_entry(pos, struct vm_area, list);

		if (vpn >= vma->start && vpn < vma->end)
			return *vma_pte(vma, vpn);
	}
	return NULL;
}

/* check_large_refs - @folio, large and mapped by @mm, holds a reference per entry mapping it. */
static void check_large_refs(struct lv_mm *mm, struct lv_folio *folio,
			     void (*bad)(void *, const char *, const void *), void *arg)
{
	uint64_t nr = (uint64_t)folio_nr_pages(folio);
	long mapped = 0;

	for (uint64_t i = 0; i < nr; i++)
		mapped += quiescent_entry(mm, folio->index + i) == folio;
	if (folio_ref_count(folio) < mapped)
		bad(arg, "large folio: fewer references than entries", folio);
}

/*
 * check_file_pte - an entry of a file mapping that maps a page cache folio must map the file's
 * folio at the page's index (the head of a large one), mapped and referenced.
 */
static void check_file_pte(struct vm_area *vma, uint64_t vpn, struct lv_folio *folio,
			   void (*bad)(void *, const char *, const void *), void *arg)
{
	unsigned long index;

	if (!vma->file) {
		bad(arg, "page cache folio mapped by an anonymous region", folio);
		return;
	}
	index = vma_file_index(vma, vpn);
	if (folio_file_mapping(folio) != vma->file || index < folio->index ||
	    index >= folio->index + (unsigned long)folio_nr_pages(folio) ||
	    filemap_peek(vma->file, index) != folio)
		bad(arg, "file page table entry maps no page cache folio of its file and index",
		    folio);
	if (folio_file_mapcount(folio) < 1 || !folio_test_mapped(folio))
		bad(arg, "file page table entry's folio not counted as mapped", folio);
	if (folio_ref_count(folio) < 1 + folio_file_mapcount(folio))
		bad(arg, "mapped page cache folio: fewer references than mappings", folio);
}

/*
 * check_mms - report every page table entry whose folio does not map back to it, every large
 * folio with fewer references than entries, and every mm whose rss disagrees with its entries.
 * Context: quiescent machine (no page_table_lock is taken: it ranks below the memcg mutex).
 */
void check_mms(struct lv_machine *m, void (*bad)(void *, const char *, const void *), void *arg)
{
	struct list_head *pos, *p;
	struct lv_mm *mm;

	lv_lock_acquire(&m->memcg_mutex);
	list_for_each (pos, &m->mms) {
		struct lv_folio *prev = NULL;
		long present = 0;

		mm = list_entry(pos, struct lv_mm, mms);
		list_for_each (p, &mm->vmas) {
			struct vm_area *vma = list_entry(p, struct vm_area, list);

			for (uint64_t vpn = vma->start; vpn < vma->end; vpn++) {
				struct lv_folio *folio = *vma_pte(vma, vpn);
				uint64_t nr;

				if (!folio) {
					prev = NULL;
					continue;
				}
				if (pte_is_swap(folio)) {
					/* Its slot's one page table user is us. */
					if ((swap_map_value(pte_to_swp_entry(folio)) &
					     SWAP_COUNT_MASK) != 1)
						bad(arg, "swap entry's slot is not in use once",
						    mm);
					prev = NULL;
					continue;
				}
				present++;
				nr = (uint64_t)folio_nr_pages(folio);
				if (pte_is_file(folio)) {
					check_file_pte(vma, vpn, folio, bad, arg);
					prev = NULL;
					continue;
				}
				/* A large folio's entries point at its head, from its index. */
				if (folio_anon_mm(folio) != mm || vpn < folio->index ||
				    vpn >= folio->index + nr || (nr == 1 && folio->index != vpn))
					bad(arg, "page table entry's folio maps elsewhere", folio);
				if (folio_ref_count(folio) < 1)
					bad(arg, "mapped folio has no reference", folio);
				/* Once per run of its entries: a large folio is usually one run. */
				if (nr > 1 && folio != prev)
					check_large_refs(mm, folio, bad, arg);
				prev = folio;
			}
		}
		if (present != mm->rss)
			bad(arg, "address space's rss differs from its page tables", mm);
	}
	lv_lock_release(&m->memcg_mutex);
}
