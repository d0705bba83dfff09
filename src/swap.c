// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Per-CPU folio batches, LRU moves, the release path, draining and lru_cache_disable().
 *
 * Theory of operation.
 *
 * Batches. Each CPU slot (cpu.c) holds six folio batches under the slot's lock: lru_add,
 * move_tail, deactivate_file, deactivate, lazyfree, activate; and the mlock batch, whose
 * entries mlock.c tags with their operation and which every drain flushes last, as the
 * kernel's mlock_drain_local() follows lru_add_drain_cpu(). A request takes a reference,
 * appends the folio to the batch of the slot of the CPU it runs on, and flushes the batch when
 * it is full, when the folio may not be cached there (folio_may_be_lru_cached(): a large folio,
 * unless cfg.batch_large lets it wait like a small one), or while the cache is disabled. A thread
 * that migrates between reading its CPU and taking the slot lock just uses another slot, and one
 * that finds its CPU's slot locked takes any free slot rather than wait for a holder that may be
 * preempted (the kernel's local_lock cannot be): correctness never depends on the slot being the
 * current CPU's, since drains and the cache disable visit every slot. For the same reason reclaim's
 * local drain and the search of the local lru_add batch on activation only try the slot lock.
 *
 * Batch policy (cfg.batch_policy, docs/design.md decisions 135-144). In arrival order a slot
 * has one batch of each kind, flushed as queued. LV_BATCH_SORTED sorts a batch by lruvec just
 * before its flush, stably, so that each lruvec's folios keep their order (folio_batch_sort()).
 * LV_BATCH_PER_LRUVEC gives each kind LV_LRUVEC_BATCHES batches keyed by the lock of their
 * folios' lruvec (lruvec_batch_get()), flushing the one that fills or, for a folio of a new
 * lruvec, the least recently used. The grouping is read without the lruvec lock, so it is a
 * hint: the flush relocks by each folio's real lruvec, as in arrival order. Every drain visits
 * every batch of a slot (for_each_slot_batch()).
 *
 * Flushing (folio_batch_move_lru). For every op except lru_add the flusher must first win the
 * folio's PG_lru pin and skips the folio if it loses (someone else is moving or freeing it);
 * lru_add folios are not on any list yet and nobody else can pin them. The flusher relocks
 * only when the folio's lruvec uses a different lock, applies the move function, publishes
 * PG_lru while still holding the lock, and after unlocking drops the batch references — which
 * may be final puts, so they must not happen under the lruvec lock. Move functions re-validate
 * the folio's state under the lock (it may have changed since it was queued) and never test
 * PG_lru: the flusher cleared it (the "pgrotated 0" bug, docs/protocol.md §4.5; hazard 6 of
 * docs/protocol.md §9.1). A folio mlocked since it was queued is culled to the unevictable
 * list instead of moved: its mlock may have lost the pin to us (docs/protocol.md §4.12).
 *
 * Draining all slots. lv_lru_add_drain_all() keeps the kernel's generation protocol (A)–(D)
 * (docs/protocol.md §5.4):
 * a caller samples the generation after a full fence; under the drain mutex, if the
 * generation moved, a sweep that began after our sample already covers our folios and we
 * return. Otherwise we advance it, fence, and sweep every slot that has work. A slot's count
 * is peeked without its lock, so it drops only once the folios it counted are on their lists
 * (or freed): a sweep that sees a zero has nothing in transit to miss.
 *
 * Draining a scope. Reclaim that freed nothing, and a memcg's removal, flush only the folios
 * of one memcg's subtree or of one node, from every batch of every slot, and leave the
 * others queued in order (lru_add_drain_scope()): one tenant's limit never flushes another
 * tenant's batches into its lists under its lruvec locks. The same protocol runs on the
 * scope's own gate (struct drain_gate: the memcg's, the node's; the machine's is
 * lv_lru_add_drain_all()'s), so concurrent drains of a scope coalesce and wait on no other
 * scope's mutex. Which folios belong to the scope is read under the slot lock only.
 * Truncation flushes the scope of dropped folios, those deleted from any file's page cache
 * (lru_add_drain_dropped()), so that they are freed at once: one scope for every file, so
 * one gate, the machine's drop_drain.
 *
 * Disabling the cache. lv_lru_cache_disable() raises the count and then, in sweep mode, locks
 * and drains every slot. Adders read the count inside the slot lock, so a slot lock acquired
 * after the raise proves that no adder that saw the old count is still adding: every earlier
 * add is in a batch we then drain, and every later add sees the count and flushes itself. In
 * the rcu modes (docs/protocol.md §5.5) adders also hold rcu_read_lock(), and the disabler
 * waits for a grace period instead, then sweeps every slot: in rcu mode one as long as a
 * kernel's (Linux 5.18), which costs milliseconds and is the stress-ng NUMA regression (the
 * numa workload of docs/benchmarks.md); in rcu-expedited mode liburcu's alone (the 5.19 fix).
 *
 * Lock order: a drain gate's mutex (one at a time) → slot lock → lruvec lock. Frees happen after
 * the lruvec unlock, possibly under the slot lock (pcp and zone locks rank below it).
 */
#include "internal.h"
#include "mm_inline.h"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* ---- move functions (under the lruvec lock; the caller owns the pin, or the folio is new)
 * ------------ */

static void lru_add(struct lruvec *lruvec, struct lv_folio *folio)
{
	/* Evictability is decided afresh at every add: mlock state may have changed. */
	bool was_unevictable = folio_test_clear_unevictable(folio);
	long nr = folio_nr_pages(folio);

	VM_BUG_ON_FOLIO(folio_test_lru(folio), folio);
	/*
	 * An underestimate for an mlocked folio, as the kernel's: a munlock that finds no count
	 * unlocks at once, rather than leave the folio unevictable for good.
	 */
	folio->mlock_count = 0;
	if (folio_evictable(folio)) {
		if (was_unevictable) /* munlocked while isolated (stranded) */
			lruvec_count_event_atomic(lruvec, EV_UNEVICTABLE_PGS_RESCUED, nr);
	} else {
		/* An mlocked folio: count it on the unevictable list, never link it. */
		folio_clear_active(folio);
		folio_set_unevictable(folio);
		if (!was_unevictable)
			lruvec_count_event_atomic(lruvec, EV_UNEVICTABLE_PGS_CULLED, nr);
	}
	lruvec_add_folio(lruvec, folio);
}

/*
 * lru_cull - @folio, pinned for a move, was mlocked since it was queued (its mlock lost the
 * pin to us): instead of the move, take it to the unevictable list, where the mlock's drain
 * would have put it. Move functions skip unevictable folios, so nobody else would.
 */
static void lru_cull(struct lruvec *lruvec, struct lv_folio *folio)
{
	lruvec_del_folio(lruvec, folio);
	folio_clear_active(folio);
	folio_set_unevictable(folio);
	folio->mlock_count = 0;
	lruvec_add_folio(lruvec, folio);
	lruvec_count_event_atomic(lruvec, EV_UNEVICTABLE_PGS_CULLED, folio_nr_pages(folio));
}

static void lru_move_tail(struct lruvec *lruvec, struct lv_folio *folio)
{
	if (folio_test_unevictable(folio))
		return;
	lruvec_del_folio(lruvec, folio);
	folio_clear_active(folio);
	lruvec_add_folio_tail(lruvec, folio);
	lruvec_count_event(lruvec, EV_PGROTATED, folio_nr_pages(folio));
}

static void lru_deactivate_file(struct lruvec *lruvec, struct lv_folio *folio)
{
	bool active = folio_test_active(folio);
	long nr = folio_nr_pages(folio);

	if (folio_test_unevictable(folio) || folio_test_mapped(folio))
		return; /* in use by a process: leave it where it is */
	lruvec_del_folio(lruvec, folio);
	folio_clear_active(folio);
	folio_clear_referenced(folio);
	if (folio_test_writeback(folio) || folio_test_dirty(folio)) {
		/* Reclaim would only skip it: queue it near the tail via rotation when written. */
		lruvec_add_folio(lruvec, folio);
		folio_set_reclaim(folio);
	} else {
		/* Clean and unused: put it where reclaim looks first. */
		lruvec_add_folio_tail(lruvec, folio);
		lruvec_count_event(lruvec, EV_PGROTATED, nr);
	}
	if (active)
		lruvec_count_event(lruvec, EV_PGDEACTIVATE, nr);
}

static void lru_deactivate(struct lruvec *lruvec, struct lv_folio *folio)
{
	if (folio_test_unevictable(folio) || !folio_test_active(folio))
		return;
	lruvec_del_folio(lruvec, folio);
	folio_clear_active(folio);
	folio_clear_referenced(folio);
	lruvec_add_folio(lruvec, folio);
	lruvec_count_event(lruvec, EV_PGDEACTIVATE, folio_nr_pages(folio));
}

static void lru_lazyfree(struct lruvec *lruvec, struct lv_folio *folio)
{
	if (!folio_test_swapbacked(folio) || folio_test_unevictable(folio))
		return;
	lruvec_del_folio(lruvec, folio);
	folio_clear_active(folio);
	folio_clear_referenced(folio);
	/* PG_swapbacked selects the list, so it may only change while the folio is unlinked. */
	folio_clear_swapbacked(folio);
	lruvec_add_folio(lruvec, folio);
	lruvec_count_event(lruvec, EV_PGLAZYFREE, folio_nr_pages(folio));
}

static void lru_activate(struct lruvec *lruvec, struct lv_folio *folio)
{
	if (folio_test_active(folio) || folio_test_unevictable(folio))
		return;
	lruvec_del_folio(lruvec, folio);
	folio_set_active(folio);
	lruvec_add_folio(lruvec, folio);
	lruvec_count_event(lruvec, EV_PGACTIVATE, folio_nr_pages(folio));
}

typedef void (*move_fn_t)(struct lruvec *lruvec, struct lv_folio *folio);

static const move_fn_t move_fns[NR_FBATCHES] = {
	[FB_LRU_ADD] = lru_add,
	[FB_MOVE_TAIL] = lru_move_tail,
	[FB_DEACTIVATE_FILE] = lru_deactivate_file,
	[FB_DEACTIVATE] = lru_deactivate,
	[FB_LAZYFREE] = lru_lazyfree,
	[FB_ACTIVATE] = lru_activate,
};

/* ---- the release path ------------------------------------------------------------------------ */

/* The folio's count is zero, so it is frozen: flags may be cleared without the pin. */
static void folio_clear_lru_flags(struct lv_folio *folio)
{
	folio_clear_lru(folio);
	if (folio_test_active(folio) && folio_test_unevictable(folio))
		return; /* leave both for the bad-state check */
	folio_clear_active(folio);
	folio_clear_unevictable(folio);
}

/**
 * folios_put_refs - drop one reference on each folio; unlink and free those that reach zero.
 * Consecutive folios of lruvecs sharing a lock share one lock hold. Frees and uncharges run
 * after the unlock, a batch at a time.
 * Context: no LRU lock held.
 */
void folios_put_refs(struct lv_folio **folios, unsigned int nr)
{
	struct lv_folio *to_free[LV_MAX_BATCH];
	struct lruvec *lruvec = NULL;
	unsigned int nr_free = 0;

	for (unsigned int i = 0; i < nr; i++) {
		struct lv_folio *folio = folios[i];

		if (!folio_put_testzero(folio))
			continue;
		/*
		 * Isolators take a reference before the pin, so a folio at zero with PG_lru clear
		 * is on no list, and one with PG_lru set is linked and needs unlinking.
		 */
		if (folio_test_lru(folio)) {
			lruvec = folio_lruvec_relock(folio, lruvec);
			lruvec_del_folio(lruvec, folio);
			folio_clear_lru_flags(folio);
			/* Under the lock: reparenting moves a counted folio until unlinked. */
			if (folio_test_clear_mlocked(folio))
				folio_mlock_count(folio, -folio_nr_pages(folio));
		} else if (folio_test_clear_mlocked(folio)) {
			/* Off the LRU and unreferenced: nobody can rebind it. */
			folio_mlock_count(folio, -folio_nr_pages(folio));
		}
		to_free[nr_free++] = folio;
		if (nr_free == LV_MAX_BATCH) {
			if (lruvec)
				lruvec_unlock(lruvec);
			lruvec = NULL;
			free_folios(to_free, nr_free);
			nr_free = 0;
		}
	}
	if (lruvec)
		lruvec_unlock(lruvec);
	free_folios(to_free, nr_free);
}

void lv_folio_put(struct lv_folio *folio)
{
	/* Most puts are not the last: only the last one needs the release path. */
	int c = __atomic_load_n(&folio->_refcount, __ATOMIC_RELAXED);

	while (c > 1)
		if (__atomic_compare_exchange_n(&folio->_refcount, &c, c - 1, true,
						__ATOMIC_RELEASE, __ATOMIC_RELAXED))
			return;
	folios_put_refs(&folio, 1);
}

void lv_folios_put(struct lv_folio **folios, size_t nr)
{
	while (nr > 0) {
		unsigned int n = nr > 4096 ? 4096 : (unsigned int)nr;

		folios_put_refs(folios, n);
		folios += n;
		nr -= n;
	}
}

void lv_folio_get(struct lv_folio *folio)
{
	folio_get(folio);
}

bool lv_folio_try_get(struct lv_folio *folio)
{
	return folio_try_get(folio);
}

/* ---- batches ------------------------------------------------------------------------------- */

/*
 * folio_key_after - does @a sort after @b in LV_BATCH_SORTED's order (node, then memcg)? The
 * pair names the folio's lruvec, and the lock it will take in either design.
 * Context: RCU read lock (folio_memcg()); the answer may change until the lruvec lock is held.
 */
static bool folio_key_after(const struct lv_folio *a, const struct pglist_data *pgdat,
			    const struct lv_memcg *memcg)
{
	if (a->pgdat != pgdat)
		return (uintptr_t)a->pgdat > (uintptr_t)pgdat;
	return (uintptr_t)folio_memcg(a) > (uintptr_t)memcg;
}

/*
 * folio_batch_sort - LV_BATCH_SORTED: order @fbatch by lruvec, by insertion: stable (a folio
 * moves back only past folios with a strictly greater key, so the folios of one lruvec keep
 * their arrival order, which is their LRU order), in place, and with a few words of stack; at
 * most 31 entries, so the quadratic worst case is a few hundred comparisons, and a batch
 * already in runs costs one comparison per run per folio. A key that changes meanwhile (a
 * reparenting, a charge move) only spoils the grouping: the flush relocks by the real lruvec.
 * Out of line, so that its registers never grow the frame of a flush in arrival order: the
 * sorted flush's extra stack is this function's frame (scripts/stack-usage.sh).
 * Context: the slot lock that protects @fbatch is held.
 */
static __attribute__((noinline)) void folio_batch_sort(struct folio_batch *fbatch)
{
	rcu_read_lock();
	for (unsigned int i = 1; i < fbatch->nr; i++) {
		struct lv_folio *entry = fbatch->folios[i];
		struct lv_folio *folio = mlock_entry_folio(entry);
		const struct pglist_data *pgdat = folio->pgdat;
		const struct lv_memcg *memcg = folio_memcg(folio);
		unsigned int j = i;

		while (j > 0 &&
		       folio_key_after(mlock_entry_folio(fbatch->folios[j - 1]), pgdat, memcg)) {
			fbatch->folios[j] = fbatch->folios[j - 1];
			j--;
		}
		fbatch->folios[j] = entry;
	}
	rcu_read_unlock();
}

/* batch_stat_add - add to a slot's counter. Context: the slot's lock held (read racily). */
static void batch_stat_add(uint64_t *counter, uint64_t n)
{
	__atomic_store_n(counter, __atomic_load_n(counter, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

/*
 * folio_batch_move_lru - apply the @kind batch @fbatch of @slot (or a part of one that @slot's
 * lock guards) and empty it: the LRU kinds through their move function, FB_MLOCK through
 * mlock.c's. Counts the flush, its lock holds and the folios moved in @slot's statistics.
 * Context: @slot's lock held; no LRU lock held.
 */
static void folio_batch_move_lru(struct cpu_slot *slot, struct folio_batch *fbatch, int kind)
{
	struct lruvec *lruvec = NULL;
	struct lv_lock *held = NULL;
	unsigned int holds = 0, moved = 0;

	lockdep_assert_held(&slot->lock);
	if (fbatch->nr > 1 &&
	    folio_machine(mlock_entry_folio(fbatch->folios[0]))->cfg.batch_policy ==
		    LV_BATCH_SORTED)
		folio_batch_sort(fbatch);
	for (unsigned int i = 0; i < fbatch->nr; i++) {
		struct lv_folio *folio = mlock_entry_folio(fbatch->folios[i]);

		if (kind == FB_MLOCK) {
			lruvec = mlock_folio_batch_entry(fbatch->folios[i], lruvec);
			fbatch->folios[i] = folio; /* untagged, for the puts */
		} else {
			/* Only the winner of the pin may move an on-LRU folio. */
			if (kind != FB_LRU_ADD && !folio_test_clear_lru(folio))
				continue;
			lruvec = folio_lruvec_relock(folio, lruvec);
#ifdef LV_DEBUG
			VM_BUG_ON_FOLIO(!folio_matches_lruvec(folio, lruvec), folio);
#endif
			if (kind != FB_LRU_ADD && !folio_evictable(folio) &&
			    !folio_test_unevictable(folio))
				lru_cull(lruvec, folio);
			else
				move_fns[kind](lruvec, folio);
			/* Publish while still holding the lock: the folio is linked and counted. */
			folio_set_lru(folio);
		}
		if (!lruvec)
			continue;
		moved++;
		if (lruvec->lru_lock != held) {
			held = lruvec->lru_lock;
			holds++;
		}
	}
	if (lruvec)
		lruvec_unlock(lruvec);
	folios_put_refs(fbatch->folios, fbatch->nr);
	WRITE_ONCE(fbatch->nr, 0);
	if (moved) {
		batch_stat_add(&slot->stat.flushes, 1);
		batch_stat_add(&slot->stat.holds, holds);
		batch_stat_add(&slot->stat.folios, moved);
	}
}

void lv_batch_stats(struct lv_machine *m, struct lv_batch_stat *out)
{
	*out = (struct lv_batch_stat){ 0 };
	for (unsigned int s = 0; s < m->nr_slots; s++) {
		const struct lv_batch_stat *st = &m->slots[s].stat;

		out->flushes += __atomic_load_n(&st->flushes, __ATOMIC_RELAXED);
		out->holds += __atomic_load_n(&st->holds, __ATOMIC_RELAXED);
		out->folios += __atomic_load_n(&st->folios, __ATOMIC_RELAXED);
	}
}

/*
 * lruvec_batch_get - LV_BATCH_PER_LRUVEC: the batch of @kind in @slot for @folio: the one
 * keyed by the lock of @folio's lruvec, else an empty one, else the least recently used one,
 * flushed first. The key is read without the lruvec lock, so it is only where @folio waits:
 * a batch may come to hold folios of another lruvec, which costs its flush one more hold.
 * Context: @slot's lock and the RCU read lock held (the lruvec read stays allocated).
 */
static struct folio_batch *lruvec_batch_get(struct cpu_slot *slot, int kind, struct lv_folio *folio)
{
	struct lruvec_batch *set = slot->lvb[kind], *b, *victim = NULL;
	const struct lv_lock *key = folio_lruvec(folio)->lru_lock;

	lockdep_assert_held(&slot->lock);
	for (b = set; b < set + LV_LRUVEC_BATCHES; b++) {
		if (b->fb.nr && b->key == key)
			goto found;
		if (!victim || (victim->fb.nr && (!b->fb.nr || b->used < victim->used)))
			victim = b;
	}
	b = victim;
	if (b->fb.nr)
		folio_batch_move_lru(slot, &b->fb, kind);
	b->key = key;
found:
	b->used = ++slot->clock;
	return &b->fb;
}

/*
 * folio_batch_add_and_move - queue @entry (@folio, tagged for FB_MLOCK) in this CPU slot's
 * batch of @kind, taking the batch's reference, and flush that batch when it is full, when
 * the folio may not wait there (folio_may_be_lru_cached()), or while the cache is disabled.
 * Context: no LRU lock held; takes a slot lock, and lruvec locks if it flushes.
 */
void folio_batch_add_and_move(struct lv_folio *folio, struct lv_folio *entry, int kind)
{
	struct lv_machine *m = folio_machine(folio);
	struct folio_batch *fbatch;
	struct cpu_slot *slot;

	folio_get(folio); /* the batch's own reference */
	/* Only LV_DISABLE_RCU needs the read-side section; it is ~1 ns, so always take it. */
	rcu_read_lock();
	slot = this_cpu_slot_lock(m);
	fbatch = slot->lvb ? lruvec_batch_get(slot, kind, folio) : &slot->fbatch[kind];
	fbatch->folios[fbatch->nr] = entry;
	WRITE_ONCE(fbatch->nr, fbatch->nr + 1);
	if (fbatch->nr >= m->cfg.batch_size || !folio_may_be_lru_cached(m, folio) ||
	    lru_cache_disabled(m))
		folio_batch_move_lru(slot, fbatch, kind);
	lv_lock_release(&slot->lock);
	rcu_read_unlock();
}

bool lru_cache_disabled(struct lv_machine *m)
{
	return __atomic_load_n(&m->lru_disable_count, __ATOMIC_ACQUIRE) != 0;
}

/* folio_add_lru - queue a folio that is on no LRU list (new, or isolated by us). */
void folio_add_lru(struct lv_folio *folio)
{
	VM_BUG_ON_FOLIO(folio_test_lru(folio), folio);
	folio_set(folio, PG_lru_claimed);
	folio_batch_add_and_move(folio, folio, FB_LRU_ADD);
}

int lv_folio_add_lru(struct lv_folio *folio)
{
	const unsigned long busy = (1ul << PG_lru) | (1ul << PG_isolated) | (1ul << PG_lru_claimed);
	unsigned long flags = __atomic_load_n(&folio->flags, __ATOMIC_RELAXED);

	/*
	 * Claim the folio for the LRU only if it is on no list, not queued, not pinned and not
	 * isolated, all in one atomic step: a second add would link it twice.
	 */
	do {
		if (flags & busy)
			return -EINVAL;
	} while (!__atomic_compare_exchange_n(&folio->flags, &flags,
					      flags | (1ul << PG_lru_claimed), true,
					      __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
	folio_batch_add_and_move(folio, folio, FB_LRU_ADD);
	return 0;
}

/* folio_putback_lru - return a folio we isolated and drop the isolation reference. */
void folio_putback_lru(struct lv_folio *folio)
{
	folio_add_lru(folio);
	lv_folio_put(folio);
}

/* ---- requests ------------------------------------------------------------------------------ */

void lv_folio_activate(struct lv_folio *folio)
{
	if (folio_test_active(folio) || folio_test_unevictable(folio) || !folio_test_lru(folio))
		return;
	folio_batch_add_and_move(folio, folio, FB_ACTIVATE);
}

/*
 * lru_cache_activate_folio - a folio not yet on the LRU is probably in this CPU's lru_add
 * batch: mark it active there so it is added to the active list. Only the local batch is
 * searched: a folio in a remote batch may be being drained, and marking it active just after
 * it was added to an inactive list would corrupt the accounting.
 */
static void lru_cache_activate_folio(struct lv_folio *folio)
{
	struct cpu_slot *slot = this_cpu_slot(folio_machine(folio));
	struct folio_batch *fbatch;
	unsigned int b;

	/* A hint only: if the slot's holder is preempted, do not wait a time slice for it. */
	if (!lv_lock_trylock(&slot->lock))
		return;
	for_each_slot_batch(slot, FB_LRU_ADD, b, fbatch)
	{
		for (int i = (int)fbatch->nr - 1; i >= 0; i--) {
			if (fbatch->folios[i] == folio) {
				folio_set_active(folio);
				goto out;
			}
		}
	}
out:
	lv_lock_release(&slot->lock);
}

void lv_folio_mark_accessed(struct lv_folio *folio)
{
	if (!folio_test_referenced(folio)) {
		folio_set_referenced(folio);
	} else if (folio_test_unevictable(folio)) {
		/* The unevictable list is never rotated: an access changes nothing. */
	} else if (!folio_test_active(folio)) {
		/* Second access: activate, and start the second-chance cycle again. */
		if (folio_test_lru(folio))
			lv_folio_activate(folio);
		else
			lru_cache_activate_folio(folio);
		folio_clear_referenced(folio);
		workingset_activation(folio);
	}
}

void lv_folio_deactivate(struct lv_folio *folio)
{
	if (folio_test_unevictable(folio) || !folio_test_lru(folio) || !folio_test_active(folio))
		return;
	folio_batch_add_and_move(folio, folio, FB_DEACTIVATE);
}

void lv_deactivate_file_folio(struct lv_folio *folio)
{
	/* An anon folio is not the page cache's to invalidate (as lazyfree ignores a file one). */
	if (folio_test_swapbacked(folio) || folio_test_unevictable(folio) || !folio_test_lru(folio))
		return;
	folio_batch_add_and_move(folio, folio, FB_DEACTIVATE_FILE);
}

void lv_folio_mark_lazyfree(struct lv_folio *folio)
{
	if (!folio_test_swapbacked(folio) || folio_test_unevictable(folio) ||
	    !folio_test_lru(folio))
		return;
	folio_batch_add_and_move(folio, folio, FB_LAZYFREE);
}

void lv_folio_rotate_reclaimable(struct lv_folio *folio)
{
	if (folio_test_dirty(folio) || folio_test_unevictable(folio) || !folio_test_lru(folio))
		return;
	folio_batch_add_and_move(folio, folio, FB_MOVE_TAIL);
}

/* ---- draining ----------------------------------------------------------------------------- */

/*
 * lru_add_drain_slot - flush every batch of @slot: the LRU kinds in the kernel's order, then
 * the mlock batch, as the kernel's lru_add_drain() ends with mlock_drain_local(); under
 * LV_BATCH_PER_LRUVEC every batch of each kind. Context: @slot's lock held.
 */
static void lru_add_drain_slot(struct cpu_slot *slot)
{
	struct folio_batch *fb;
	unsigned int i;

	lockdep_assert_held(&slot->lock);
	for (int kind = 0; kind < NR_BATCH_KINDS; kind++)
		for_each_slot_batch(slot, kind, i, fb) if (fb->nr)
			folio_batch_move_lru(slot, fb, kind);
}

/* drain_slot - lock @slot and flush its batches. Context: no LRU lock held. */
void drain_slot(struct cpu_slot *slot)
{
	lv_lock_acquire_at(&slot->lock, "lru_add_drain_cpu");
	lru_add_drain_slot(slot);
	lv_lock_release(&slot->lock);
}

void lv_lru_add_drain(struct lv_machine *m)
{
	drain_slot(this_cpu_slot(m));
}

/*
 * lru_add_drain_try - reclaim's local drain: folios still queued are invisible to isolation,
 * so flush this CPU's batches, unless the slot is held (by a thread preempted on this CPU,
 * most likely): then reclaim goes on without them rather than wait a time slice.
 */
void lru_add_drain_try(struct lv_machine *m)
{
	struct cpu_slot *slot = this_cpu_slot(m);

	if (!lv_lock_trylock(&slot->lock))
		return;
	lru_add_drain_slot(slot);
	lv_lock_release(&slot->lock);
}

/*
 * A racy peek: the generation protocol's fences make a stale zero harmless, and a count drops
 * only after its folios are on their lists (see above).
 */
static bool cpu_needs_drain(struct cpu_slot *slot)
{
	struct folio_batch *fb;
	unsigned int i;

	/* The mlock batch among them: the kernel's need_mlock_drain(). */
	for (int kind = 0; kind < NR_BATCH_KINDS; kind++)
		for_each_slot_batch(slot, kind, i, fb) if (READ_ONCE(fb->nr)) return true;
	return false;
}

/*
 * struct drain_scope - what a scoped drain flushes: the folios charged in @memcg's subtree, or
 * with @memcg NULL those of node @nid, or with @dropped those deleted from the page cache
 * (PG_dropped), whose batch reference may be the last.
 */
struct drain_scope {
	struct lv_memcg *memcg;
	int nid;
	bool dropped;
};

/*
 * folio_in_scope - is @folio one a reclaimer of @scope could free? Context: RCU read lock: a
 * memcg read from ->memcg stays allocated until the section ends (its free waits for a grace
 * period), and so do its ancestors.
 */
static bool folio_in_scope(struct lv_folio *folio, const struct drain_scope *scope)
{
	if (scope->dropped)
		return folio_test(folio, PG_dropped);
	if (!scope->memcg)
		return folio_nid(folio) == scope->nid;
	for (struct lv_memcg *c = folio_memcg(folio); c; c = c->parent)
		if (c == scope->memcg)
			return true;
	return false;
}

/*
 * drain_slot_scope - flush @slot's folios of @scope, in every batch, in order, and leave the
 * others queued, in order. Context: @slot's lock held.
 */
static void drain_slot_scope(struct cpu_slot *slot, const struct drain_scope *scope)
{
	struct folio_batch *fb;
	unsigned int b;

	lockdep_assert_held(&slot->lock);
	/* The six LRU kinds, then the mlock batch, whose entries are tagged; every batch of each.
	 */
	for (int kind = 0; kind < NR_BATCH_KINDS; kind++) {
		for_each_slot_batch(slot, kind, b, fb)
		{
			struct folio_batch mine;
			unsigned int keep = 0;

			mine.nr = 0;
			rcu_read_lock();
			for (unsigned int i = 0; i < fb->nr; i++) {
				struct lv_folio *entry = fb->folios[i];

				if (folio_in_scope(mlock_entry_folio(entry), scope))
					mine.folios[mine.nr++] = entry;
				else
					fb->folios[keep++] = entry;
			}
			rcu_read_unlock();
			if (!mine.nr)
				continue;
			/*
			 * The count drops only once our folios are on their lists: a drain that
			 * peeks this slot (cpu_needs_drain()) and sees it empty must find nothing
			 * still in transit. Until then the entries from @keep on are stale; only
			 * lock holders read entries.
			 */
			folio_batch_move_lru(slot, &mine, kind);
			WRITE_ONCE(fb->nr, keep);
		}
	}
}

/*
 * sweep_slots - steps (A)-(D) on @gate, then a sweep of every slot that has work (every slot
 * with @force_all_slots): each one's batches whole (@scope NULL), or only the folios of
 * @scope.
 * Return: whether this call swept (false: a sweep begun after our sample covered us).
 * Context: no library lock held; takes @gate's mutex, then slot locks one at a time, then
 * lruvec locks.
 */
static bool sweep_slots(struct lv_machine *m, struct drain_gate *gate,
			const struct drain_scope *scope, bool force_all_slots)
{
	unsigned long this_gen;
	bool swept = false;

	/* (A) our batch stores must be visible before we sample the generation. */
	smp_mb();
	/* (B) */
	this_gen = smp_load_acquire(&gate->gen);
	/* Our own slot first: it helps everyone, and it needs no mutex. */
	if (!scope)
		lv_lru_add_drain(m);

	lv_lock_acquire_at(&gate->mutex, "__lru_add_drain_all");
	/*
	 * (C) the generation moved after (B): a sweep that started after we sampled has read
	 * every slot after its fence (D), so it saw our folios. Nothing left for us to do.
	 */
	if (!force_all_slots && this_gen != READ_ONCE(gate->gen))
		goto done;
	/* (D) advance, then fence before reading any slot's counts or folios. */
	__atomic_store_n(&gate->gen, gate->gen + 1, __ATOMIC_RELAXED);
	smp_mb();
	swept = true;
	for (unsigned int s = 0; s < m->nr_slots; s++) {
		struct cpu_slot *slot = &m->slots[s];

		if (!force_all_slots && !cpu_needs_drain(slot))
			continue;
		lv_lock_acquire_at(&slot->lock, "lru_add_drain_per_cpu");
		if (scope)
			drain_slot_scope(slot, scope);
		else
			lru_add_drain_slot(slot);
		lv_lock_release(&slot->lock);
	}
done:
	lv_lock_release(&gate->mutex);
	return swept;
}

/*
 * lru_add_drain_scope - flush, from every slot's batches, the folios of @memcg's subtree
 * (@memcg non-NULL) or of node @nid, and leave the other folios queued, in their order.
 *
 * A reclaim pass that freed nothing calls it once, in case what it may free is all queued
 * (docs/design.md, decision 30: a memcg limit below what the batches hold), and so does a
 * memcg's removal before each reparenting pass. Flushing whole slots, as lv_lru_add_drain_all()
 * does, would put every other tenant's queued folios on their lists too, taking their lruvec locks
 * and emptying their batches on behalf of one tenant; the kernel's charge likewise drains only the
 * stocks of the memcg over its limit (drain_all_stock()). Every batch is searched, not only
 * lru_add: a folio queued to move holds a batch reference, and reclaim passes over a folio someone
 * else holds.
 *
 * Concurrent drains of one scope coalesce on that scope's gate (the memcg's, or the node's),
 * as lv_lru_add_drain_all()'s do on the machine's: a tenant at its limit, many threads at
 * once, makes one sweep at a time and waits on its own mutex, not on anyone else's. Which
 * folios are in the scope is decided under the slot lock only: entries move while another
 * scope's drain compacts a batch, so a look without the lock could miss one (the spin model
 * tests/models/drain_add.pml rejects such a look, BUG_SCOPE_LOOK).
 *
 * Context: no library lock held; takes the scope's drain mutex, then slot locks one at a
 * time, then lruvec locks; final puts free folios (pcp, zone locks) under a slot lock.
 */
void lru_add_drain_scope(struct lv_machine *m, struct lv_memcg *memcg, int nid)
{
	struct drain_scope scope = { .memcg = memcg, .nid = nid };

	sweep_slots(m, memcg ? &memcg->drain : &m->nodes[nid]->drain, &scope, false);
}

/*
 * lru_add_drain_dropped - flush, from every slot's batches, the folios deleted from the page
 * cache (PG_dropped), so that those the caller just dropped are freed (and uncharged) now: a
 * batch reference would keep each alive until its batch filled up. Other folios stay queued,
 * so a tenant truncating or closing its files never flushes another tenant's batches or takes
 * its lruvec locks, as lv_lru_add_drain_all() would. A flag, not a cleared ->mapping: folios a
 * caller queued with lv_folio_add_lru() never had a mapping, and a test of the mapping would
 * flush another tenant's such folios too.
 *
 * The caller set PG_dropped on each folio it dropped before calling (page_cache_delete() under
 * the mapping lock): the (A) fence orders those stores before the generation sample, as it
 * orders batch stores, so a sweep that coalesces us at (C) reads them after its (D) fence. The
 * flag stays set while the batch reference keeps the folio; a new allocation clears it.
 * One scope for every file, so one gate: any sweep begun after our sample covers our folios.
 * Context: no library lock held; takes the drop_drain mutex, then slot locks one at a time,
 * then lruvec locks; final puts free folios under a slot lock.
 */
void lru_add_drain_dropped(struct lv_machine *m)
{
	struct drain_scope scope = { .dropped = true };

	sweep_slots(m, &m->drop_drain, &scope, false);
}

void drain_gate_init(struct lv_machine *m, struct drain_gate *gate)
{
	lv_lock_init(&gate->mutex, m->cfg.lock_backend, LV_LOCK_CLASS_DRAIN, m->lock_sites);
	gate->gen = 0;
}

void lv_lru_add_drain_all(struct lv_machine *m)
{
	__atomic_fetch_add(&m->drain_calls, 1, __ATOMIC_RELAXED);
	if (sweep_slots(m, &m->drain, NULL, false))
		__atomic_fetch_add(&m->drain_sweeps, 1, __ATOMIC_RELAXED);
}

void lv_drain_all_stats(struct lv_machine *m, uint64_t *calls, uint64_t *sweeps)
{
	if (calls)
		*calls = __atomic_load_n(&m->drain_calls, __ATOMIC_RELAXED);
	if (sweeps)
		*sweeps = __atomic_load_n(&m->drain_sweeps, __ATOMIC_RELAXED);
}

static unsigned int latency_bucket(uint64_t ns)
{
	unsigned int e;

	if (ns < 8)
		return (unsigned int)ns;
	e = 63u - (unsigned int)__builtin_clzll(ns);
	if (e > 39)
		return LV_LATENCY_BUCKETS - 1;
	return 8 * (e - 2) + (unsigned int)((ns >> (e - 3)) & 7);
}

/* latency_bucket_limit - the smallest latency above bucket @b. */
static uint64_t latency_bucket_limit(unsigned int b)
{
	unsigned int e = b / 8 + 2;

	if (b < 8)
		return b + 1;
	return (1ull << e) + ((uint64_t)(b % 8) + 1) * (1ull << (e - 3));
}

static void latency_record(struct lv_latency *lat, uint64_t ns)
{
	uint64_t max = __atomic_load_n(&lat->max_ns, __ATOMIC_RELAXED);

	__atomic_fetch_add(&lat->total_ns, ns, __ATOMIC_RELAXED);
	__atomic_fetch_add(&lat->buckets[latency_bucket(ns)], 1, __ATOMIC_RELAXED);
	while (ns > max && !__atomic_compare_exchange_n(&lat->max_ns, &max, ns, true,
							__ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

void lv_lru_cache_disable_latency(struct lv_machine *m, struct lv_latency *out)
{
	const struct lv_latency *lat = &m->disable_latency;

	out->count = 0;
	out->total_ns = __atomic_load_n(&lat->total_ns, __ATOMIC_RELAXED);
	out->max_ns = __atomic_load_n(&lat->max_ns, __ATOMIC_RELAXED);
	for (unsigned int b = 0; b < LV_LATENCY_BUCKETS; b++) {
		out->buckets[b] = __atomic_load_n(&lat->buckets[b], __ATOMIC_RELAXED);
		out->count += out->buckets[b];
	}
}

uint64_t lv_latency_percentile(const struct lv_latency *lat, double pct)
{
	uint64_t total = 0, rank, seen = 0;

	for (unsigned int b = 0; b < LV_LATENCY_BUCKETS; b++)
		total += lat->buckets[b];
	if (!total)
		return 0;
	if (pct >= 100)
		return lat->max_ns;
	if (!(pct > 0))
		pct = 0; /* a negative or NaN rank would not convert */
	rank = (uint64_t)(pct / 100 * (double)total);
	if (rank >= total)
		rank = total - 1;
	for (unsigned int b = 0; b < LV_LATENCY_BUCKETS; b++) {
		seen += lat->buckets[b];
		if (seen > rank) {
			uint64_t limit = latency_bucket_limit(b);

			return limit < lat->max_ns ? limit : lat->max_ns;
		}
	}
	return lat->max_ns;
}

/*
 * kernel_grace_period - wait as long as a normal (not expedited) kernel RCU grace period: ask
 * the host kernel for one (MEMBARRIER_CMD_GLOBAL runs its synchronize_rcu()), or sleep a tick
 * where membarrier is refused (seccomp, nohz_full CPUs).
 */
static void kernel_grace_period(void)
{
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) != 0)
		nanosleep(&(struct timespec){ .tv_nsec = 4000000 }, NULL);
}

void lv_lru_cache_disable(struct lv_machine *m)
{
	uint64_t t0 = now_ns();

	__atomic_fetch_add(&m->lru_disable_count, 1, __ATOMIC_SEQ_CST);
	if (m->cfg.disable_mode != LV_DISABLE_SWEEP) {
		/* Every adder that read the old count was inside a read-side section. */
		synchronize_rcu();
		if (m->cfg.disable_mode == LV_DISABLE_RCU)
			kernel_grace_period();
		sweep_slots(m, &m->drain, NULL, true);
	} else {
		/* Each slot lock taken after the raise is the proof for that slot (see the top). */
		for (unsigned int s = 0; s < m->nr_slots; s++)
			drain_slot(&m->slots[s]);
	}
	latency_record(&m->disable_latency, now_ns() - t0);
}

void lv_lru_cache_enable(struct lv_machine *m)
{
	int c = __atomic_load_n(&m->lru_disable_count, __ATOMIC_RELAXED);

	/* An unmatched enable is a caller bug; never let the count go negative. */
	do {
		if (c <= 0)
			return;
	} while (!__atomic_compare_exchange_n(&m->lru_disable_count, &c, c - 1, true,
					      __ATOMIC_RELEASE, __ATOMIC_RELAXED));
}
