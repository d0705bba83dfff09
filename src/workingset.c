// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Workingset detection: shadow entries and refault distance, as mm/workingset.c decides.
 *
 * Theory of operation. Each lruvec has a clock, nonresident_age, that advances by one page
 * for every eviction and every activation (both are the events that push a page towards the
 * end of the inactive list). When a page cache folio is evicted, its slot keeps a shadow entry
 * recording the clock of its lruvec (and the memcg, node and PG_workingset). On a later miss
 * that finds the shadow, the distance the clock moved since the eviction is how many more
 * pages the inactive list would have needed to keep the folio. If that refault distance is at
 * most the active file list's size — the memory the workingset could have yielded — the
 * folio is part of the workingset and is activated at once instead of starting on the
 * inactive list again. Anon pages work the same way through the swap cache's shadow entries.
 * When swap is available the two kinds compete for memory, so the workingset a refault is
 * measured against includes the other kind's lists, as the kernel's workingset_test_recent():
 * a file refault counts the anon lists too, an anon refault the inactive file list as well as
 * the active file list and the active anon list. The clock advances in the lruvec and all its
 * ancestors, so that limit reclaim in a parent sees its children's ageing.
 *
 * The clocks are atomics, not lock-protected, as in the kernel: they advance on eviction
 * (under the mapping lock), on reclaim's putback of active folios (under an lruvec lock) and
 * on accesses and refaults (under no lock), so no one lock could cover them.
 *
 * Shadow layout (bit 0 is the tag that tells a shadow from a folio pointer):
 *   | eviction clock (40) | memcg id (16) | node (6) | workingset (1) | 1 |
 */
#include "internal.h"
#include "swap.h"

#define SHADOW_NODE_BITS  6
#define SHADOW_MEMCG_BITS 16
#define EVICTION_SHIFT	  (1 + 1 + SHADOW_NODE_BITS + SHADOW_MEMCG_BITS)
#define EVICTION_MASK	  ((1ul << (64 - EVICTION_SHIFT)) - 1)

_Static_assert(LV_MAX_NODES <= (1 << SHADOW_NODE_BITS), "node id must fit a shadow entry");

void workingset_age_nonresident(struct lruvec *lruvec, long nr)
{
	/* The caller keeps the memcg alive (a charge, or RCU), and with it every ancestor. */
	for (; lruvec; lruvec = parent_lruvec(lruvec))
		__atomic_fetch_add(&lruvec->nonresident_age, (unsigned long)nr, __ATOMIC_RELAXED);
}

/**
 * workingset_activation - an activation pushes the inactive list like an eviction does:
 * advance the clock of @folio's lruvec.
 * Context: the caller holds a reference; the binding may change meanwhile (then the clock of
 * the old lruvec advances, which only blurs the estimate).
 */
void workingset_activation(struct lv_folio *folio)
{
	rcu_read_lock();
	workingset_age_nonresident(folio_lruvec(folio), folio_nr_pages(folio));
	rcu_read_unlock();
}

/**
 * workingset_eviction - record the eviction of @folio and return its shadow entry.
 * Context: the folio's reference count is frozen (it is leaving the page cache).
 */
void *workingset_eviction(struct lv_folio *folio)
{
	unsigned long eviction, memcgid;
	struct lv_memcg *memcg;
	struct lruvec *lruvec;

	rcu_read_lock(); /* a removal may re-point the folio and free the memcg read */
	memcg = folio_memcg(folio);
	lruvec = mem_cgroup_lruvec(memcg, folio->pgdat);
	memcgid = memcg ? memcg->id : 0;
	eviction = __atomic_load_n(&lruvec->nonresident_age, __ATOMIC_RELAXED);
	workingset_age_nonresident(lruvec, folio_nr_pages(folio));
	rcu_read_unlock();
	eviction &= EVICTION_MASK;
	return (void *)((((eviction << SHADOW_MEMCG_BITS | memcgid) << SHADOW_NODE_BITS |
			  (unsigned long)folio_nid(folio))
				 << 1 |
			 folio_test_workingset(folio))
				<< 1 |
			1);
}

/**
 * workingset_refault - @folio replaces the shadow entry @shadow: count the refault (unless
 * @counted: a read-ahead run counts its refaults once) and activate @folio if it refaulted
 * within the workingset.
 * Return: whether it was activated.
 * Context: the folio is new in the page cache and not yet on an LRU (its obj_cgroup is stable).
 */
bool workingset_refault(struct lv_folio *folio, void *shadow, bool counted)
{
	struct lv_machine *m = folio_machine(folio);
	unsigned long entry = (unsigned long)shadow >> 1;
	bool workingset = entry & 1;
	int nid = (int)((entry >> 1) & ((1u << SHADOW_NODE_BITS) - 1));
	unsigned int memcgid =
		(unsigned int)((entry >> (1 + SHADOW_NODE_BITS)) & ((1u << SHADOW_MEMCG_BITS) - 1));
	unsigned long eviction = entry >> (EVICTION_SHIFT - 1);
	struct lruvec *eviction_lruvec, *lruvec;
	unsigned long refault, distance, workingset_size;
	struct lv_memcg *eviction_memcg = NULL;
	long nr = folio_nr_pages(folio);
	bool file = folio_is_file_lru(folio);
	bool activated = false;

	if ((unsigned int)nid >= m->cfg.nr_nodes)
		return false;
	/*
	 * The verdict is taken under RCU alone, the folio's memcg read once: a removal may
	 * re-point the folio meanwhile and free the memcg read only after a grace period. A
	 * reference is taken only for the cost an activation notes, which takes locks.
	 */
	rcu_read_lock();
	lruvec = mem_cgroup_lruvec(folio_memcg(folio), folio->pgdat);
	if (!counted)
		lruvec_count_event_atomic(
			lruvec, file ? EV_WORKINGSET_REFAULT : EV_WORKINGSET_REFAULT_ANON, nr);
	if (!mem_cgroup_disabled(m)) {
		/* The memcg that evicted it may be gone (or its id reused): then no verdict. */
		eviction_memcg = mem_cgroup_from_id(m, memcgid);
		if (!eviction_memcg)
			goto out;
	}
	eviction_lruvec = mem_cgroup_lruvec(eviction_memcg, m->nodes[nid]);
	refault = __atomic_load_n(&eviction_lruvec->nonresident_age, __ATOMIC_RELAXED);
	workingset_size = READ_ONCE(eviction_lruvec->lru_size[LRU_ACTIVE_FILE]);
	if (!file)
		workingset_size += READ_ONCE(eviction_lruvec->lru_size[LRU_INACTIVE_FILE]);
	if ((mem_cgroup_disabled(m) ? get_nr_swap_pages(m)
				    : mem_cgroup_get_nr_swap_pages(eviction_memcg)) > 0) {
		workingset_size += READ_ONCE(eviction_lruvec->lru_size[LRU_ACTIVE_ANON]);
		if (file)
			workingset_size += READ_ONCE(eviction_lruvec->lru_size[LRU_INACTIVE_ANON]);
	}

	/* The clock is kept modulo 2^40: the distance is too. */
	distance = (refault - eviction) & EVICTION_MASK;
	if (distance > workingset_size)
		goto out;
	folio_set_active(folio);
	workingset_age_nonresident(lruvec, nr);
	lruvec_count_event_atomic(lruvec,
				  file ? EV_WORKINGSET_ACTIVATE : EV_WORKINGSET_ACTIVATE_ANON, nr);
	if (workingset)
		folio_set_workingset(folio);
	activated = true;
out:
	rcu_read_unlock();
	if (activated) {
		/* Reclaim was wrong to evict it: that is a cost of its side. */
		struct lv_memcg *memcg = get_mem_cgroup_from_folio(folio);

		lru_note_cost(mem_cgroup_lruvec(memcg, folio->pgdat), file, (unsigned long)nr);
		if (memcg)
			css_put(memcg);
	}
	return activated;
}
