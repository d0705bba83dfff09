// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mlock: lv_mlock() and friends, the per-CPU mlock batch, mlock_count, munlock and the
 * unevictable list (docs/protocol.md §4.11, §4.12).
 *
 * Theory of operation.
 *
 * State. A folio is mlocked while PG_mlocked is set. An mlocked folio on an LRU is counted on
 * its lruvec's LRU_UNEVICTABLE list and linked nowhere; folio->mlock_count then says how many
 * mlocks it has (at most one here: a folio is mapped by one region of one mm), and may
 * undercount, as the kernel's may: an add that culls a folio (lru_add()) sets it to 0, and a
 * munlock that finds 0 unlocks at once. NR_MLOCK counts the pages with PG_mlocked per lruvec.
 *
 * The bit and the count. The kernel counts NR_MLOCK per zone, which a folio never leaves, so
 * its mlock_folio() sets PG_mlocked and counts with no lock. Here the count is per lruvec,
 * whose memcg half changes under charge moves and reparenting, which move the count of an
 * mlocked folio with it under the old lruvec's lock. So PG_mlocked changes, with its count,
 * only where the binding holds still: under the folio's lruvec lock (mlock_folio(), the
 * munlock drain, the release path), or by an owner no binding change can reach (a new folio
 * not yet on an LRU, a folio its caller isolated, a frozen migration original).
 *
 * The batch. Moving a folio between the evictable and unevictable lists needs its PG_lru pin,
 * and is batched per CPU slot like the other LRU moves (swap.c): one batch for the three
 * operations, each entry tagged in its low pointer bits (MLOCK_LRU, MLOCK_NEW, none for a
 * munlock), so that a munlock never waits for mlocks to drain first. mlock_folio() sets
 * PG_mlocked before queueing, and a munlock clears it only when its entry is drained, so two
 * entries for one folio on two slots may drain in either order: every drain re-reads the bit
 * under the lock. An mlock drained after the munlock that followed it finds the folio
 * evictable after all and rescues it if it is unevictable; a munlock drained first leaves the
 * mlock nothing to do. A full batch, a large folio (!folio_may_be_lru_cached(), unless
 * cfg.batch_large) and a disabled cache flush at once; the batch follows the machine's batch
 * policy like the others (swap.c), and joins every drain
 * (lru_add_drain_slot(), cpu_needs_drain() and drain_slot_scope() in swap.c).
 *
 * The pin. __mlock_folio() needs it: without it, someone else owns the folio's LRU position,
 * and its way back culls the folio because PG_mlocked is already set (lru_add(), and swap.c's
 * batch moves). __mlock_new_folio() needs none: the folio is on no list. __munlock_folio()
 * tries for it and goes on without it, as the kernel's does: it clears PG_mlocked under the
 * lruvec lock, and checks folio_evictable() only after clearing it; without the pin it cannot
 * move the folio and counts it stranded. An isolator's putback goes through lru_add(), which
 * rescues a stranded folio; lv_munlock() also rescues those left on the unevictable list by a
 * pin owner that put them back unmoved, through check_move_unevictable_folios().
 *
 * Regions. lv_mlock() and lv_munlock() change VM_LOCKED through mm_vma_modify_flags(), whose
 * apply function walks the present entries of each region part under the page_table_lock and
 * mlocks or munlocks each folio once, only on a change of the region's flag: locking a locked
 * region again changes no count. A large folio is mlocked only when the whole folio lies in
 * the range (the kernel's page table walk), and munlocked when any part of it leaves a locked
 * region. Faults in a VM_LOCKED region queue their new folio with mlock_new_folio() instead of
 * lru_add (folio_add_lru_vma()); unmapping a page of a locked region munlocks its folio.
 *
 * Lock order: page_table_lock → slot lock → lruvec lock, and page_table_lock → lruvec lock
 * (mlock_folio()); the batch's final puts happen after the lruvec unlock.
 */
#include "internal.h"
#include "mm_inline.h"
#include "mm_types.h"
#include "swap.h"

/* ---- counts --------------------------------------------------------------------------------- */

/**
 * mlock_migrate_folio - @new takes @old's place (and PG_mlocked with its flags): the NR_MLOCK
 * pages @old carries move to @new's obj_cgroup (another node's). Called by folio_migrate_copy()
 * while @old is still bound.
 * Context: @old is frozen and @new not yet visible: both bindings are theirs alone.
 */
void mlock_migrate_folio(struct lv_folio *new, struct lv_folio *old)
{
	long nr = folio_nr_pages(old);

	if (!folio_test_mlocked(old))
		return;
	if (!folio_test_mlocked(new))
		folio_set_mlocked(new);
	folio_mlock_count(old, -nr);
	folio_mlock_count(new, nr);
}

/* ---- the batch's operations (slot lock held; the lruvec lock taken by relock) -----------------
 */

/*
 * __mlock_folio - the drain of an mlock_folio() entry: move @folio to the unevictable list.
 * Return: the lruvec whose lock is held (@lruvec if nothing was locked).
 */
static struct lruvec *__mlock_folio(struct lv_folio *folio, struct lruvec *lruvec)
{
	long nr = folio_nr_pages(folio);

	/* Off the LRU: its pin owner's way back culls it (PG_mlocked is set). */
	if (!folio_test_clear_lru(folio))
		return lruvec;
	lruvec = folio_lruvec_relock_at(folio, lruvec, "mlock_folio_batch");
	if (folio_evictable(folio)) {
		/* A munlock drained before us: undo our cull if it was done. */
		if (folio_test_unevictable(folio)) {
			lruvec_del_folio(lruvec, folio);
			folio_clear_unevictable(folio);
			folio->mlock_count = 0;
			lruvec_add_folio(lruvec, folio);
			lruvec_count_event_atomic(lruvec, EV_UNEVICTABLE_PGS_RESCUED, nr);
		}
	} else if (folio_test_unevictable(folio)) {
		folio->mlock_count++;
	} else {
		lruvec_del_folio(lruvec, folio);
		folio_clear_active(folio);
		folio_set_unevictable(folio);
		folio->mlock_count = 1;
		lruvec_add_folio(lruvec, folio);
		lruvec_count_event_atomic(lruvec, EV_UNEVICTABLE_PGS_CULLED, nr);
	}
	folio_set_lru(folio);
	return lruvec;
}

/* __mlock_new_folio - the drain of an mlock_new_folio() entry: add @folio to the LRU. */
static struct lruvec *__mlock_new_folio(struct lv_folio *folio, struct lruvec *lruvec)
{
	VM_BUG_ON_FOLIO(folio_test_lru(folio), folio);
	lruvec = folio_lruvec_relock_at(folio, lruvec, "mlock_folio_batch");
	folio_clear_unevictable(folio);
	folio->mlock_count = 0;
	/* A munlock (an unmap) may have drained first: then it is an ordinary add. */
	if (!folio_evictable(folio)) {
		folio_clear_active(folio);
		folio_set_unevictable(folio);
		folio->mlock_count = 1;
		lruvec_count_event_atomic(lruvec, EV_UNEVICTABLE_PGS_CULLED, folio_nr_pages(folio));
	}
	lruvec_add_folio(lruvec, folio);
	folio_set_lru(folio);
	return lruvec;
}

/*
 * __munlock_folio - the drain of a munlock_folio() entry, in the kernel's order: try for the
 * pin (and go on without it), lock, drop one mlock and stop while others remain, clear
 * PG_mlocked, and only then look at evictability; move the folio only if we hold the pin.
 */
static struct lruvec *__munlock_folio(struct lv_folio *folio, struct lruvec *lruvec)
{
	bool isolated = folio_test_clear_lru(folio);
	long nr = folio_nr_pages(folio);

	lruvec = folio_lruvec_relock_at(folio, lruvec, "mlock_folio_batch");
	if (folio_test_unevictable(folio)) {
		if (folio->mlock_count)
			folio->mlock_count--;
		if (folio->mlock_count)
			goto out;
	}
	if (!folio_test_clear_mlocked(folio))
		goto out;
	folio_mlock_count(folio, -nr);
	lruvec_count_event_atomic(
		lruvec, isolated ? EV_UNEVICTABLE_PGS_MUNLOCKED : EV_UNEVICTABLE_PGS_STRANDED, nr);
	/* folio_evictable() has to be checked after clearing PG_mlocked. */
	if (isolated && folio_test_unevictable(folio) && folio_evictable(folio)) {
		lruvec_del_folio(lruvec, folio);
		folio_clear_unevictable(folio);
		lruvec_add_folio(lruvec, folio);
		lruvec_count_event_atomic(lruvec, EV_UNEVICTABLE_PGS_RESCUED, nr);
	}
out:
	if (isolated)
		folio_set_lru(folio);
	return lruvec;
}

/**
 * mlock_folio_batch_entry - apply one entry of the mlock batch: the operation its tag names,
 * relocking only when the lruvec changes; swap.c's folio_batch_move_lru() loops over the batch
 * (in the order the machine's batch policy gives it) and drops the references after the unlock.
 * Return: the lruvec whose lock is held (@lruvec if nothing was locked).
 * Context: the slot lock that protects the batch is held; @lruvec's lock, if any.
 */
struct lruvec *mlock_folio_batch_entry(struct lv_folio *entry, struct lruvec *lruvec)
{
	unsigned long op = (uintptr_t)entry & MLOCK_MASK;
	struct lv_folio *folio = mlock_entry_folio(entry);

	if (op == MLOCK_LRU)
		return __mlock_folio(folio, lruvec);
	if (op == MLOCK_NEW)
		return __mlock_new_folio(folio, lruvec);
	return __munlock_folio(folio, lruvec);
}

/*
 * mlock_batch_add - queue @folio with @op on this CPU's slot (swap.c's
 * folio_batch_add_and_move(), which also flushes when the batch is full, the folio may not
 * wait (a large folio, unless cfg.batch_large) or the cache is disabled).
 */
static void mlock_batch_add(struct lv_folio *folio, unsigned long op)
{
	folio_batch_add_and_move(folio, (struct lv_folio *)((uintptr_t)folio | op), FB_MLOCK);
}

/* ---- the entry points ------------------------------------------------------------------------ */

/**
 * mlock_folio - mlock @folio, which is on an LRU or queued for one: set PG_mlocked (and count
 * it) now, and queue the move to the unevictable list.
 * Context: the caller holds a reference (a page table entry, under the page_table_lock) and
 * no LRU lock; takes the folio's lruvec lock, then the slot lock.
 */
void mlock_folio(struct lv_folio *folio)
{
	struct lruvec *lruvec = folio_lruvec_lock(folio);

	if (!folio_test_set_mlocked(folio)) {
		folio_mlock_count(folio, folio_nr_pages(folio));
		lruvec_count_event_atomic(lruvec, EV_UNEVICTABLE_PGS_MLOCKED,
					  folio_nr_pages(folio));
	}
	lruvec_unlock(lruvec);
	mlock_batch_add(folio, MLOCK_LRU);
}

/**
 * mlock_new_folio - put a new folio of a VM_LOCKED region on the LRU, mlocked: the fault
 * path's folio_add_lru().
 * Context: @folio is on no LRU, not queued, and the caller's (so its obj_cgroup is stable); no
 * LRU lock held; takes the slot lock.
 */
void mlock_new_folio(struct lv_folio *folio)
{
	long nr = folio_nr_pages(folio);

	VM_BUG_ON_FOLIO(folio_test_lru(folio), folio);
	folio_set(folio, PG_lru_claimed);
	if (!folio_test_set_mlocked(folio)) {
		folio_mlock_count(folio, nr);
		folio_count_event(folio, EV_UNEVICTABLE_PGS_MLOCKED, nr);
	}
	mlock_batch_add(folio, MLOCK_NEW);
}

/**
 * munlock_folio - drop one mlock of @folio: queued, the drain clears PG_mlocked (under the
 * lruvec lock) and moves the folio back to an evictable list.
 * Context: the caller holds a reference; no LRU lock held; takes the slot lock.
 */
void munlock_folio(struct lv_folio *folio)
{
	mlock_batch_add(folio, 0);
}

/**
 * folio_add_lru_vma - add a new folio mapped in @vma: mlocked if @vma is VM_LOCKED.
 * Context: the page_table_lock of @vma's mm held; as folio_add_lru().
 */
void folio_add_lru_vma(struct lv_folio *folio, struct vm_area *vma)
{
	if (vma->vm_flags & VM_LOCKED)
		mlock_new_folio(folio);
	else
		folio_add_lru(folio);
}

/* ---- regions ----------------------------------------------------------------------------------
 */

/*
 * folio_locked_whole - is every page of large @folio mapped by it in a locked region of @mm?
 * Region parts of one lv_mlock() are flagged one after the other, so only the walk of the
 * last part a folio spans finds it locked whole, and mlocks it.
 */
static bool folio_locked_whole(struct lv_mm *mm, struct lv_folio *folio)
{
	for (uint64_t v = folio->index; v < folio->index + (uint64_t)folio_nr_pages(folio); v++) {
		struct vm_area *vma = find_vma(mm, v);

		if (!vma || !(vma->vm_flags & VM_LOCKED) || *vma_pte(vma, v) != folio)
			return false;
	}
	return true;
}

/**
 * mlock_vma_range - mlock (@lock) or munlock every folio mapped in [@start, @end) of @vma once;
 * a large folio is mlocked only once every page of it lies in a locked region (the kernel's
 * folio_within_vma() test, across the parts one call flags), and munlocked if any of it
 * stops being locked (all entries of a large folio point at its head, whose index is its
 * first page).
 * Context: @mm's page_table_lock held; no LRU lock held.
 */
void mlock_vma_range(struct lv_mm *mm, struct vm_area *vma, uint64_t start, uint64_t end, bool lock)
{
	lockdep_assert_held(&mm->page_table_lock);
	for (uint64_t vpn = start; vpn < end; vpn++) {
		struct lv_folio *folio = *vma_pte(vma, vpn);

		if (!pte_present(folio))
			continue; /* swapped out: mlocked when it is swapped in */
		if (pte_is_file(folio))
			continue; /* page cache: reclaim keeps it mapped, unmlocked */
		if (!lock)
			munlock_folio(folio);
		else if (!folio_test_large(folio) || folio_locked_whole(mm, folio))
			mlock_folio(folio);
		vpn = folio->index + (uint64_t)folio_nr_pages(folio) - 1;
	}
}

struct mlock_walk {
	bool lock;
	unsigned long changed; /* region parts whose VM_LOCKED flipped */
};

/*
 * mlock_apply - mm_vma_modify_flags()'s apply function: flip VM_LOCKED on the region part
 * (split off already) and walk it, if the flag changes. The heap is one region whatever the
 * range (mm_types.h): its flag covers all of it, so all of it is walked.
 */
static void mlock_apply(struct lv_mm *mm, struct vm_area *vma, uint64_t start, uint64_t end,
			void *arg)
{
	struct mlock_walk *w = arg;

	lockdep_assert_held(&mm->page_table_lock);
	if (!!(vma->vm_flags & VM_LOCKED) == w->lock)
		return;
	if (w->lock)
		vma->vm_flags |= VM_LOCKED;
	else
		vma->vm_flags &= ~VM_LOCKED;
	if (vma == mm->heap) {
		start = vma->start;
		end = vma->end;
	}
	mlock_vma_range(mm, vma, start, end, w->lock);
	w->changed++;
}

/*
 * mlock_range_pages - the pages [*@start, *@end) mlock(2) covers for @addr, @len: @addr
 * rounded down to its page, the end rounded up. Return: false if the range wraps past 2^64.
 */
static bool mlock_range_pages(uint64_t addr, size_t len, uint64_t *start, uint64_t *end)
{
	uint64_t off = addr & (LV_PAGE_SIZE - 1), bytes = (uint64_t)len + off;

	if (bytes < off || (bytes && bytes - 1 > UINT64_MAX - (addr - off)))
		return false;
	*start = addr >> PAGE_SHIFT;
	*end = *start + (bytes >> PAGE_SHIFT) + ((bytes & (LV_PAGE_SIZE - 1)) != 0);
	return true;
}

/*
 * rescue_range - after a munlock: put back on an evictable list the folios in [@start, @end)
 * left unevictable without PG_mlocked by a munlock that lost their pin to an owner that put
 * them back unmoved (check_move_unevictable_folios()). A racy look under the page_table_lock
 * chooses them; the rescue re-checks each under its lruvec lock.
 * Context: no lock held.
 */
static void rescue_range(struct lv_mm *mm, uint64_t start, uint64_t end)
{
	const unsigned long want = (1ul << PG_lru) | (1ul << PG_unevictable);
	struct lv_folio *batch[LV_MAX_BATCH];

	while (start < end) {
		unsigned int nr = 0;
		struct list_head *pos;

		lv_lock_acquire(&mm->page_table_lock);
		list_for_each (pos, &mm->vmas) {
			struct vm_area *vma = list_entry(pos, struct vm_area, list);
			uint64_t v = vma->start > start ? vma->start : start;

			for (; v < vma->end && v < end && nr < LV_MAX_BATCH; v++) {
				struct lv_folio *folio = *vma_pte(vma, v);
				unsigned long flags;

				if (!pte_present(folio) ||
				    (folio_test_large(folio) && v != folio->index && v != start))
					continue;
				flags = __atomic_load_n(&folio->flags, __ATOMIC_RELAXED);
				if ((flags & want) != want || (flags & (1ul << PG_mlocked)) ||
				    (vma->vm_flags & VM_LOCKED))
					continue;
				folio_get(folio);
				batch[nr++] = folio;
			}
			if (v > start)
				start = v;
			if (nr == LV_MAX_BATCH)
				break;
		}
		if (nr < LV_MAX_BATCH)
			start = end;
		lv_lock_release(&mm->page_table_lock);
		if (nr) {
			check_move_unevictable_folios(batch, nr);
			folios_put_refs(batch, nr);
		}
	}
}

/* do_mlock - lv_mlock() and lv_munlock() on the pages [@start, @end). */
static int do_mlock(struct lv_mm *mm, uint64_t start, uint64_t end, bool lock)
{
	struct mlock_walk w = { .lock = lock };
	long covered;

	if (start == end)
		return 0;
	/* As mlock_vma_pages_range(): what is still queued for the LRU is added first. */
	lv_lru_add_drain(mm->machine);
	covered = mm_vma_modify_flags(mm, start, end, 0, 0, mlock_apply, &w);
	lv_lru_add_drain(mm->machine);
	if (covered < 0)
		return (int)covered;
	if (!lock && w.changed)
		rescue_range(mm, start, end);
	return (uint64_t)covered == end - start ? 0 : -ENOMEM;
}

int lv_mlock(struct lv_mm *mm, uint64_t addr, size_t len)
{
	uint64_t start, end;

	if (!mm || !mlock_range_pages(addr, len, &start, &end))
		return -EINVAL;
	return do_mlock(mm, start, end, true);
}

int lv_munlock(struct lv_mm *mm, uint64_t addr, size_t len)
{
	uint64_t start, end;

	if (!mm || !mlock_range_pages(addr, len, &start, &end))
		return -EINVAL;
	return do_mlock(mm, start, end, false);
}

int lv_mlockall(struct lv_mm *mm, unsigned int flags)
{
	if (!mm || !flags || (flags & ~(LV_MCL_CURRENT | LV_MCL_FUTURE)))
		return -EINVAL;
	if (flags & LV_MCL_FUTURE) {
		lv_lock_acquire(&mm->page_table_lock);
		mm->def_flags |= VM_LOCKED;
		lv_lock_release(&mm->page_table_lock);
	}
	if (flags & LV_MCL_CURRENT) {
		int err = do_mlock(mm, 0, UINT64_MAX, true);

		/* Every region is covered; the holes between them are no error here. */
		if (err != -ENOMEM)
			return err;
	}
	return 0;
}

int lv_munlockall(struct lv_mm *mm)
{
	int err;

	if (!mm)
		return -EINVAL;
	lv_lock_acquire(&mm->page_table_lock);
	mm->def_flags &= ~VM_LOCKED;
	lv_lock_release(&mm->page_table_lock);
	err = do_mlock(mm, 0, UINT64_MAX, false);
	return err == -ENOMEM ? 0 : err;
}
