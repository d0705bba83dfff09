// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * NUMA migration: migrate_pages(2), move_pages(2), and moving a file's page cache.
 *
 * Theory of operation.
 *
 * Every call runs between lv_lru_cache_disable() and lv_lru_cache_enable(), as the kernel's
 * do_migrate_pages() and do_pages_move() do: a folio sitting in some CPU's batch has PG_lru
 * clear and a batch reference, so it could be neither isolated nor frozen; disabling drains
 * every batch and makes later LRU requests apply at once.
 *
 * One folio moves in five steps (migrate_folio_to()):
 *  1. isolate it (win the PG_lru pin; the folio leaves its list, we hold one more reference);
 *  2. allocate the copy on the target node, bound to the same memcg without a new charge:
 *     the original's charge moves with the data, so usage never changes;
 *  3. under the owner's lock (the mm's page_table_lock or the file's mapping lock), freeze the
 *     original's reference count from exactly the expected value (owner + caller + isolation)
 *     to zero: any other holder — a reader copying out of a page cache folio, a batch — makes
 *     it fail, and we retry a few times before reporting -EBUSY. Frozen, the original is
 *     ours alone: its data and flags go to the copy, and the owner's entry (page table entry
 *     or page cache slot) is switched to the copy, all before the owner's lock is dropped.
 *     Users of anon pages copy under the page_table_lock; page cache readers that look the
 *     index up meanwhile fail to try-get the frozen original and retry their lookup;
 *  4. put the copy on the LRU (at once, the cache being disabled);
 *  5. free the original, which has no charge left to drop.
 * If anything fails before step 3 succeeds, the copy is freed without uncharging and the
 * original goes back to its LRU untouched.
 *
 * Lock order: slot locks or the drain mutex (inside lv_lru_cache_disable(), released before
 * the walk) → mm lock or mapping lock → nothing else is taken under them here; isolation and
 * putback take the lruvec locks with no other lock held (docs/protocol.md §4.7, §5.5).
 */
#include "internal.h"
#include "mm_inline.h"

#include <sched.h>
#include <string.h>

#define MIGRATE_RETRIES 3

/*
 * The flags that describe the data and its LRU history; the rest belong to the frame. PG_hole
 * is not among them: a hole folio is zeroed whole before it is copied.
 */
#define MIGRATE_FLAGS                                                                              \
	((1ul << PG_active) | (1ul << PG_referenced) | (1ul << PG_workingset) |                    \
	 (1ul << PG_swapbacked) | (1ul << PG_dirty) | (1ul << PG_mapped) | (1ul << PG_mlocked) |   \
	 (1ul << PG_uptodate) | (1ul << PG_readahead))

/**
 * folio_copy_data - copy @old's data into @new. For anon folios it runs with the count frozen
 * under the page_table_lock (users write under that lock); page cache data never changes once
 * uptodate (and, for a hole folio, zeroed whole: folio_zero_holes()), so
 * filemap_folio_replace() copies before it freezes, keeping the frozen window (readers retry
 * their lookup meanwhile) short.
 */
void folio_copy_data(struct lv_folio *new, struct lv_folio *old)
{
	void *to = lv_folio_data(new), *from = lv_folio_data(old);

	if (to && from)
		memcpy(to, from, LV_PAGE_SIZE << folio_order(old));
}

/*
 * folio_migrate_copy - give @new the state, owner and charge of frozen @old.
 * Context: @old's count is frozen at zero and it is isolated; @new is not yet visible; the
 * owner's lock is held.
 */
void folio_migrate_copy(struct lv_folio *new, struct lv_folio *old)
{
	__atomic_fetch_or(&new->flags, READ_ONCE(old->flags) & MIGRATE_FLAGS, __ATOMIC_RELAXED);
	new->index = old->index;
	WRITE_ONCE(new->mapping, old->mapping);
	WRITE_ONCE(old->mapping, NULL);
	/* @new was bound to old's memcg at allocation; the charge is now @new's alone. */
	mlock_migrate_folio(new, old);
	folio_unbind(old);
}

/* folio_alloc_migration_target - a folio on node @nid bound to @old's memcg, not charged. */
static struct lv_folio *folio_alloc_migration_target(struct lv_folio *old, int nid)
{
	struct lv_machine *m = folio_machine(old);
	struct lv_memcg *memcg = get_mem_cgroup_from_folio(old); /* the allocation may block */
	struct lv_folio *new;

	/* A large folio never reclaims for a block: without compaction it would evict in vain. */
	new = folio_alloc_charged(m->nodes[nid], folio_order(old), memcg,
				  folio_order(old) ? FOLIO_ALLOC_NORETRY : 0);
	if (memcg)
		css_put(memcg);
	return new;
}

/**
 * folio_owner_refs - the references @folio's owner holds: one per page table entry mapping an
 * anon folio (every entry of a large one points at its head), the page cache's one, or none.
 * Migration freezes the count at exactly this plus its own, and compaction's scanner passes
 * over a folio anyone else holds (pinned: migration would fail).
 * Context: racy unless the owner's lock is held or the folio is frozen; the answer is a
 * guess for a folio whose owner may be letting go of it.
 */
int folio_owner_refs(const struct lv_folio *folio)
{
	if (folio_anon_mm(folio))
		return (int)folio_nr_pages(folio);
	return folio_file_mapping(folio) ? 1 : 0;
}

/**
 * migrate_folio_into - steps 3 and 4 (at the top) for @folio, isolated by the caller, into
 * @new, the same order, prepared by the caller and visible to nobody: bound to @folio's memcg
 * without a charge, one reference (its allocation's). Retries a frozen count a few times
 * while someone holds a transient reference (a reader, a batch).
 * @expected: every reference on @folio that migration accounts for: folio_owner_refs() plus
 *            the caller's.
 * Return: 0: @folio's data, owner and charge are @new's, @folio's count is zero and the
 * caller frees it (free_folios()); @new is on its way to the LRU and the caller's reference
 * on it is dropped. -EBUSY: nothing moved; @folio is still the caller's, isolated, with its
 * references; @new is still the caller's, with garbage data. Counted in pgmigrate_success or
 * pgmigrate_fail either way.
 * Context: no lock held; takes the owner's lock, then a slot lock and lruvec locks (the add).
 */
int migrate_folio_into(struct lv_folio *folio, struct lv_folio *new, int expected)
{
	long nr = folio_nr_pages(folio);
	int err = -EBUSY;

	for (int tries = 0; tries < MIGRATE_RETRIES; tries++) {
		if (folio_anon_mm(folio))
			/* It counts the entries itself, under the mm's lock: the owner's as one. */
			err = anon_folio_replace(folio, new,
						 expected - folio_owner_refs(folio) + 1);
		else if (folio_file_mapping(folio))
			err = filemap_folio_replace(folio, new, expected);
		else
			err = -EBUSY; /* unmapped or truncated meanwhile */
		if (err != -EAGAIN)
			break;
		sched_yield();
	}
	if (err) {
		/* Count while isolated: once back on its LRU, a charge move may rebind it. */
		folio_count_event(folio, EV_PGMIGRATE_FAIL, nr);
		return -EBUSY;
	}
	folio_count_event(new, EV_PGMIGRATE_SUCCESS, nr);
	folio_add_lru(new);
	lv_folio_put(new); /* the allocation's: the owner holds its own now */
	return 0;
}

/*
 * migrate_split_to - a large @folio, isolated by the caller with one reference, for which @nid
 * has no free block of its order: split it (the kernel's migrate_pages() does the same when a
 * large target cannot be had) and move each page. Return: @nid if every page moved, else
 * -ENOMEM (not split, or pages left behind, each back on its LRU).
 */
static int migrate_split_to(struct lv_folio *folio, int nid)
{
	struct list_head pages;
	int err = 0;

	INIT_LIST_HEAD(&pages);
	if (split_folio_to_list(folio, &pages)) {
		/* -EBUSY (someone else holds it): as if it could not be moved. */
		folio_count_event(folio, EV_PGMIGRATE_FAIL, folio_nr_pages(folio));
		folio_putback_lru(folio);
		return -ENOMEM;
	}
	list_add(&folio->lru, &pages); /* the head, a page of its own now, goes first */
	while (!list_empty(&pages)) {
		struct lv_folio *page = list_first_entry(&pages, struct lv_folio, lru);
		struct lv_folio *new;

		list_del(&page->lru);
		new = folio_alloc_migration_target(page, nid);
		if (new && !migrate_folio_into(page, new, folio_owner_refs(page) + 1)) {
			free_folios(&page, 1);
			continue;
		}
		if (new) {
			folio_unbind(new); /* never published, holds no charge */
			lv_folio_put(new);
		} else {
			folio_count_event(page, EV_PGMIGRATE_FAIL, 1);
		}
		err = -ENOMEM;
		folio_putback_lru(page);
	}
	return err ? err : nid;
}

/**
 * migrate_folio_to - move @folio to node @nid (steps 1-5 at the top). A large folio for which
 * @nid has no free block of its order is split and moved page by page.
 * Return: @nid, or -EBUSY (not on an LRU, pinned or in use, or unmapped or truncated
 * meanwhile), -ENOMEM (no free page on @nid; a split folio: some pages could not move). The
 * caller's reference is consumed either way.
 * Context: the LRU cache is disabled; no lock held; may block (allocation may reclaim).
 */
int migrate_folio_to(struct lv_folio *folio, int nid)
{
	long nr = folio_nr_pages(folio);
	struct lv_folio *new;
	int err = -EBUSY;

	if (folio_nid(folio) == nid) {
		lv_folio_put(folio);
		return nid;
	}
	if (!folio_isolate_lru(folio))
		goto fail_put;
	new = folio_alloc_migration_target(folio, nid);
	if (!new &&folio_test_large(folio)) {
		/* Split with the isolation's reference alone: the caller's goes first. */
		lv_folio_put(folio);
		return migrate_split_to(folio, nid);
	}
	if (!new) {
		err = -ENOMEM;
		folio_count_event(folio, EV_PGMIGRATE_FAIL, nr);
		goto fail_putback;
	}
	/* The owner's references, the caller's and the isolation's. */
	if (migrate_folio_into(folio, new, folio_owner_refs(folio) + 2)) {
		/* Never published: drop it without touching the charge it does not hold. */
		folio_unbind(new);
		lv_folio_put(new);
		err = -EBUSY;
		goto fail_putback;
	}
	free_folios(&folio, 1);
	return nid;

fail_putback:
	folio_putback_lru(folio);
	lv_folio_put(folio);
	return err;
fail_put:
	folio_count_event(folio, EV_PGMIGRATE_FAIL, nr);
	lv_folio_put(folio);
	return err;
}

long lv_migrate_pages(struct lv_mm *mm, uint64_t from_nodes, int to_node)
{
	struct lv_machine *m;
	long failed;

	if (!mm)
		return -EINVAL;
	m = mm_machine(mm);
	if (!node_valid(m, to_node))
		return -EINVAL;
	lv_lru_cache_disable(m);
	failed = mm_migrate_walk(mm, from_nodes, to_node);
	lv_lru_cache_enable(m);
	return failed;
}

int lv_move_pages(struct lv_mm *mm, size_t count, const uint64_t *addrs, const int *nodes,
		  int *status)
{
	struct lv_machine *m;

	if (!mm || (count && (!addrs || !status)))
		return -EINVAL;
	m = mm_machine(mm);
	if (nodes)
		for (size_t i = 0; i < count; i++)
			if (!node_valid(m, nodes[i]))
				return -EINVAL;
	if (nodes)
		lv_lru_cache_disable(m);
	for (size_t i = 0; i < count; i++) {
		int err;
		struct lv_folio *folio = anon_folio_get(mm, addrs[i] / LV_PAGE_SIZE, &err);

		if (!folio) {
			status[i] = err;
		} else if (!nodes) {
			status[i] = folio_nid(folio);
			lv_folio_put(folio);
		} else {
			status[i] = migrate_folio_to(folio, nodes[i]);
		}
	}
	if (nodes)
		lv_lru_cache_enable(m);
	return 0;
}

long lv_file_migrate_pages(struct lv_file *file, uint64_t from_nodes, int to_node)
{
	struct lv_folio *batch[64];
	unsigned long index = 0;
	struct lv_machine *m;
	unsigned int nr;
	long failed = 0;

	if (!file)
		return -EINVAL;
	m = file_machine(file);
	if (!node_valid(m, to_node))
		return -EINVAL;
	lv_lru_cache_disable(m);
	while ((nr = filemap_get_folios(file, &index, batch, 64))) {
		for (unsigned int i = 0; i < nr; i++) {
			if (!(from_nodes & (1ull << folio_nid(batch[i]))) ||
			    folio_nid(batch[i]) == to_node)
				lv_folio_put(batch[i]);
			else if (migrate_folio_to(batch[i], to_node) < 0)
				failed++;
		}
	}
	lv_lru_cache_enable(m);
	return failed;
}
