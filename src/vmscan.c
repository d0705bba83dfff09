// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Isolation and reclaim: isolate_lru_folios, shrink_{inactive,active}_list, the per-memcg and
 * per-node drivers, cost accounting, kswapd.
 *
 * Theory of operation.
 *
 * Isolating a folio is winning its PG_lru pin and unlinking it (docs/protocol.md §3.2, §4.7,
 * §4.8). The reference comes first: the release path decides whether to unlink by looking at
 * PG_lru, so clearing it on a folio whose last reference is concurrently being dropped would
 * free a linked folio (hazard 2 of docs/protocol.md §9.1).
 *
 * Reclaim works on an lruvec it already holds, so it has no lookup race: it takes the lock,
 * isolates up to SWAP_CLUSTER_MAX folios from the tail of a list, drops the lock, decides each
 * folio's fate without any LRU lock (evicting a page cache folio takes its mapping lock, which
 * ranks above the LRU locks), and takes the lock again only to put the survivors back. The
 * survivors are linked and published (PG_lru) before their isolation references are dropped,
 * after the unlock — a drop may be a final put, and the final put takes the lruvec lock
 * (hazards 3 and 4, docs/protocol.md §4.9).
 *
 * Scan targets are fair across memcgs: each lruvec is scanned in proportion to its size
 * (size >> priority), priority falling from DEF_PRIORITY until enough was reclaimed. The
 * active file list is aged (deactivated) whenever the inactive list is smaller than
 * active / sqrt(10 × GiB), the kernel's inactive_is_low(), and whenever refaults were
 * activated since reclaim last finished with the lruvec (see refaulting()). The anon lists
 * are scanned only when the lruvec's memcg can have pages swapped out (a swap device with
 * free slots, its swap limit not reached); get_scan_count() then splits the scan between anon
 * and file by swappiness and the costs each side noted. Lazily freed anon folios live on the
 * file lists.
 *
 * Reclaim is driven three ways: kswapd (one thread per node, woken below the low watermark,
 * reclaiming to the high one), direct reclaim (an allocation below the min watermark or
 * failing), and memcg limit reclaim (a charge over a limit reclaims from that memcg's subtree
 * and retries). kswapd is a node daemon (kthread.c): its request protocol, which loses no
 * wakeup, and its thread's start and stop are kcompactd's too.
 *
 * One departure from the kernel: a lock holder here can be preempted for a time slice, and
 * global reclaim visits every tenant's lruvec. So global reclaim, while pressure is low (the
 * first SKIP_BUSY_PRIORITIES priorities), only tries each lruvec's lock and moves on to the
 * next memcg if it is held; from then on it waits, so a held lruvec cannot starve it. Limit
 * reclaim works for one subtree and always waits.
 */
#include "internal.h"
#include "mm_inline.h"
#include "swap.h"

#include <math.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#define SWAP_CLUSTER_MAX 32
/* Lruvecs a reclaim call remembers aging, for snapshot_refaults() at its end. */
#define SC_AGED_MAX 16
/* Global reclaim passes over busy lruvecs at its first priorities only: it always progresses. */
#define SKIP_BUSY_PRIORITIES 3
/* How long kswapd stays awake after reaching the high watermark (see kswapd_linger()). */
#define KSWAPD_LINGER_NS (500 * 1000)
/* How long kswapd waits after a pass that found nothing to reclaim (kswapd_backoff()). */
#define KSWAPD_BACKOFF_MS 10

struct scan_control {
	unsigned long nr_to_reclaim;
	unsigned long nr_reclaimed;
	int priority;
	bool may_skip;	      /* pass over lruvecs whose lock is held (see reclaim_lock()) */
	bool skipped;	      /* the lruvec being visited was passed over */
	unsigned long id;     /* this call's mark on the lruvecs it aged (lruvec->reclaim_id) */
	unsigned int nr_aged; /* entries of aged[] */
	struct lruvec *aged[SC_AGED_MAX]; /* lruvecs marked with id, their memcgs referenced */
	struct lv_memcg *target; /* limit reclaim's memcg (its swappiness), NULL for global */
	bool can_swap;		 /* the lruvec being visited may have anon pages swapped out */
};

/*
 * struct kswapd - a node's reclaim thread. Its daemon's busy covers a pass, the linger after
 * it and the backoff after a fruitless one: wakeup_kswapd() then leaves its request for the
 * pass's end, and kswapd_quiesce() waits for it.
 */
struct kswapd {
	struct node_daemon d; /* as struct node_daemon says */
};

/* ---- many memcgs ------------------------------------------------------------------------- */

/*
 * Many memcgs. A host with thousands of tenants has thousands of small lruvecs per node, and
 * reclaim scans each list's size >> priority: at the first priorities a list of a few hundred
 * pages gives nothing, and a walk of every memcg at each of them reclaims nothing either. Three
 * things keep a call's cost proportional to what it reclaims rather than to the number of
 * memcgs:
 *
 * - Size levels. Each lruvec has one: 1 + the highest lru_size_order() of its evictable lists
 *   (0: empty). The node counts its lruvecs per level (pgdat->level_stripes) and keeps, per
 *   level, a bitmap of the memcg ids at that level or above, with a summary of its words that
 *   are not zero (pgdat->memcg_levels).
 * - The first priority is the highest at which some lruvec of the node can scan a list
 *   (reclaim_first_priority()): the walks skipped would have scanned nothing, anywhere. The
 *   kernel's MGLRU sets its initial priority from the node's size for the same reason.
 * - Global reclaim walks the memcgs from a position per node shared by every reclaimer
 *   (mem_cgroup_reclaim_next(), the kernel's reclaim cookie), looks at priority p only at the
 *   lruvecs of level p + 1 and up (the summary skips 4,096 others a load), and stops once it
 *   reclaimed enough, as the kernel's direct reclaim does with partial walks: the next call
 *   goes on from there, so every memcg takes its turn and no call pins them all.
 *
 * A level rises as soon as a list grows past it (update_lru_size()), so reclaim finds every
 * lruvec it would scan. It falls only when reclaim looks: at an isolation, or a visit that
 * finds nothing to scan (shrink_lruvec()), and at a reparenting, which empties the child. A
 * small lruvec whose size swings around a power of two would otherwise change its node's
 * counts and maps with nearly every LRU update. A level too high costs one visit that
 * corrects it. Everything is read racily: a stale read starts a call one priority off, or
 * passes over a lruvec that grew a moment ago. Either way it changes only which lruvec gives
 * the pages, and the walk goes on down to priority 0.
 *
 * Limit reclaim walks its target's subtree, pinned by a snapshot: it is small, and nothing
 * else reclaims from it in the same order.
 * Historical note: global reclaim pinned a snapshot of the whole tree per call, from a start
 * that moved one memcg per call, at every priority from DEF_PRIORITY down. At 10,000 memcgs a
 * 4 KiB read cost 5.4 times what it cost at 10 (docs/design.md, decision 169).
 */

/* lruvec_true_level - @lruvec's size level from its lists' sizes (read racily without the lock). */
static int lruvec_true_level(struct lruvec *lruvec)
{
	int level = 0;

	for (enum lru_list lru = 0; lru < LRU_UNEVICTABLE; lru++) {
		int order = lru_size_order(READ_ONCE(lruvec->lru_size[lru]));

		if (order + 1 > level)
			level = order + 1;
	}
	return level;
}

/* level_map_set - set @bit of @pgdat's map of level @l, and its word's bit in the summary. */
static void level_map_set(struct pglist_data *pgdat, int l, unsigned int bit)
{
	unsigned int w = bit / 64;

	if (!__atomic_fetch_or(&memcg_level_map(pgdat, l)[w], 1ul << (bit % 64), __ATOMIC_SEQ_CST))
		__atomic_fetch_or(&memcg_level_summary(pgdat, l)[w / 64], 1ul << (w % 64),
				  __ATOMIC_SEQ_CST);
}

/*
 * level_map_clear - clear @bit of @pgdat's map of level @l, and its word's summary bit if that
 * emptied the word. A setter that filled the word again meanwhile may have set the summary bit
 * before we cleared it: the word is read again after, and the bit put back if it is not empty
 * (all seq_cst: one of us sees the other). A summary bit may so stay set over an empty word,
 * which costs a look; never the other way round.
 */
static void level_map_clear(struct pglist_data *pgdat, int l, unsigned int bit)
{
	unsigned long *word = &memcg_level_map(pgdat, l)[bit / 64];
	unsigned long *sum = &memcg_level_summary(pgdat, l)[bit / 64 / 64];
	unsigned long sbit = 1ul << (bit / 64 % 64), mask = 1ul << (bit % 64);

	if (__atomic_fetch_and(word, ~mask, __ATOMIC_SEQ_CST) != mask)
		return;
	__atomic_fetch_and(sum, ~sbit, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(word, __ATOMIC_SEQ_CST))
		__atomic_fetch_or(sum, sbit, __ATOMIC_SEQ_CST);
}

/**
 * lruvec_size_level_update - recompute @lruvec's size level and publish a change to its node
 * ("Many memcgs"): a rise always, a fall only if @lower (reclaim's visits, a reparenting).
 * Context: @lruvec's LRU lock held.
 */
void lruvec_size_level_update(struct lruvec *lruvec, bool lower)
{
	struct pglist_data *pgdat = lruvec->pgdat;
	struct level_stripe *stripe;
	int level;

	lockdep_assert_held(lruvec->lru_lock);
	level = lruvec_true_level(lruvec);
	if (level == lruvec->size_level || (level < lruvec->size_level && !lower))
		return;
	/*
	 * Level 0 is not counted: every lruvec starts there, and an empty one gives nothing. The
	 * count goes to this CPU's stripe: a line shared by the whole node would bounce with
	 * every change, and with many small tenants nearly every LRU update is one.
	 */
	stripe = &pgdat->level_stripes[this_cpu_index(pgdat->machine) % LEVEL_STRIPES];
	if (lruvec->size_level)
		__atomic_fetch_sub(&stripe->nr[lruvec->size_level], 1, __ATOMIC_RELAXED);
	if (level)
		__atomic_fetch_add(&stripe->nr[level], 1, __ATOMIC_RELAXED);
	if (lruvec->memcg) {
		unsigned int bit = memcg_level_bit(lruvec->memcg->id);

		for (int l = lruvec->size_level + 1; l <= level; l++)
			level_map_set(pgdat, l, bit);
		for (int l = level + 1; l <= lruvec->size_level; l++)
			level_map_clear(pgdat, l, bit);
	}
	__atomic_store_n(&lruvec->size_level, (unsigned char)level, __ATOMIC_RELAXED);
}

/* nr_lruvecs_at_level - how many of @pgdat's lruvecs have size level @level (> 0). */
long nr_lruvecs_at_level(struct pglist_data *pgdat, int level)
{
	long nr = 0;

	for (int s = 0; s < LEVEL_STRIPES; s++)
		nr += __atomic_load_n(&pgdat->level_stripes[s].nr[level], __ATOMIC_RELAXED);
	return nr;
}

/* reclaim_first_priority - see "Many memcgs": the highest priority that scans a list of @nid. */
static int reclaim_first_priority(struct lv_machine *m, int nid)
{
	for (int level = DEF_PRIORITY + 1; level > 0; level--)
		for (unsigned int n = 0; n < m->cfg.nr_nodes; n++)
			if ((nid < 0 || (unsigned int)nid == n) &&
			    nr_lruvecs_at_level(m->nodes[n], level) > 0)
				return level - 1;
	return DEF_PRIORITY; /* all empty, or emptied as we looked: walk them all */
}

/* ---- single-folio isolation ----------------------------------------------------------------- */

/**
 * folio_isolate_lru - win the pin and take @folio off its list.
 * Return: true with an extra (isolation) reference held; false if the folio is on no LRU or
 * another actor owns the pin.
 * Context: the caller holds a reference and no LRU lock.
 */
bool folio_isolate_lru(struct lv_folio *folio)
{
	struct lruvec *lruvec;

	VM_BUG_ON_FOLIO(folio_ref_count(folio) <= 0, folio);
	if (!folio_test_clear_lru(folio))
		return false;
	folio_get(folio);
	lruvec = folio_lruvec_lock(folio);
	lruvec_del_folio(lruvec, folio);
	lruvec_unlock(lruvec);
	return true;
}

int lv_folio_isolate_lru(struct lv_folio *folio)
{
	unsigned long old;

	if (!folio_isolate_lru(folio))
		return -EBUSY;
	/*
	 * The folio is the caller's now: its obj_cgroup, which carries the count, is stable. Count
	 * it before publishing PG_isolated (a putback may follow at once), and hand the claim
	 * over to PG_isolated in one atomic step, so that no add can slip in between.
	 */
	folio_isolated_count(folio, folio_nr_pages(folio));
	old = __atomic_fetch_xor(&folio->flags, (1ul << PG_isolated) | (1ul << PG_lru_claimed),
				 __ATOMIC_ACQ_REL);
	VM_BUG_ON_FOLIO(!(old & (1ul << PG_lru_claimed)) || (old & (1ul << PG_isolated)), folio);
	return 0;
}

int lv_folio_putback_lru(struct lv_folio *folio)
{
	unsigned long flags = __atomic_load_n(&folio->flags, __ATOMIC_RELAXED);

	/*
	 * The mirror of isolation: hand PG_isolated back to PG_lru_claimed in one atomic step.
	 * Clearing PG_isolated first left an instant with neither bit set, in which a concurrent
	 * lv_folio_add_lru() could claim the folio too, and both queued it (linked twice).
	 */
	do {
		if (!(flags & (1ul << PG_isolated)))
			return -EINVAL;
	} while (!__atomic_compare_exchange_n(
		&folio->flags, &flags, (flags & ~(1ul << PG_isolated)) | (1ul << PG_lru_claimed),
		true, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
	/* Claimed and on no list, the folio keeps its obj_cgroup: count it off the same one. */
	folio_isolated_count(folio, -folio_nr_pages(folio));
	folio_putback_lru(folio);
	return 0;
}

/**
 * check_move_unevictable_folios - rescue the folios of @folios that stopped being mlocked
 * from the unevictable list to the evictable list their flags select (docs/protocol.md
 * §4.11). Each folio is pinned first (PG_lru test-and-clear; one pinned by someone else is
 * skipped: its owner decides where it goes), because the relock below may move to another
 * lruvec, and a charge move must not rebind the folio meanwhile.
 * Context: the caller holds a reference on each folio and no LRU lock.
 */
void check_move_unevictable_folios(struct lv_folio **folios, unsigned int nr)
{
	struct lruvec *lruvec = NULL;

	for (unsigned int i = 0; i < nr; i++) {
		struct lv_folio *folio = folios[i];
		long pages = folio_nr_pages(folio);

		if (!folio_test_clear_lru(folio)) {
			/* Counted where it is bound now; RCU keeps that memcg readable. */
			folio_count_event(folio, EV_UNEVICTABLE_PGS_SCANNED, pages);
			continue;
		}
		lruvec = folio_lruvec_relock(folio, lruvec);
		lruvec_count_event_atomic(lruvec, EV_UNEVICTABLE_PGS_SCANNED, pages);
		if (folio_evictable(folio) && folio_test_unevictable(folio)) {
			lruvec_del_folio(lruvec, folio);
			folio_clear_unevictable(folio);
			folio->mlock_count = 0;
			lruvec_add_folio(lruvec, folio);
			lruvec_count_event_atomic(lruvec, EV_UNEVICTABLE_PGS_RESCUED, pages);
		}
		folio_set_lru(folio);
	}
	if (lruvec)
		lruvec_unlock(lruvec);
}

/* ---- cost accounting ("Scan cost") ---------------------------------------------------------
 *
 * Scan cost. Reclaim notes what scanning each side cost it (rotations, I/O, refaults) on the
 * lruvec it scanned and on every ancestor, and get_scan_count() splits its scan by those
 * costs. Both are halved whenever their sum outgrows a quarter of the lruvec's lists, so the
 * split follows recent history. cfg.scan_cost says where the adds happen:
 *
 * LV_COST_LOCKED, the kernel's until 7.1: each noting takes the LRU lock of the lruvec and then
 * of each ancestor, one level at a time, to add and maybe halve. Under a memcg limit every
 * reclaimer of the memcg queues on the same locks, the root's included, for a few adds.
 *
 * LV_COST_VMSTAT, Usama Arif's change: a noting is one atomic add into a stripe of pending
 * counts of the lruvec (its CPU slot's stripe, COST_STRIPES of them, a line each), and takes
 * no lock. The consumer, get_scan_count(), folds first: it exchanges the stripes with zero and
 * adds their sum, as one noting, to the lruvec and to each ancestor, one level at a time under
 * each level's cost lock (a leaf lock: nothing is taken under it, and it never needs an LRU
 * lock; the list sizes the halving compares with are read racily, as get_scan_count() reads
 * them). So the hierarchy is the fold's: an ancestor holds a descendant's costs from the
 * descendant's last fold on, which is at most one reclaim visit of the descendant late, where
 * LOCKED has them at once. A sum halved once where LOCKED may have halved between two notings
 * keeps a little more history; the split is a ratio of the two sides, which both rules keep.
 *
 * The memory: COST_STRIPES lines per lruvec (256 bytes) and its cost lock, whatever the number
 * of CPU slots (up to 4096): slots beyond COST_STRIPES share stripes, which costs their adds
 * only a shared line. Per-slot arrays of every lruvec would be nr_slots x lruvecs x 16 bytes.
 *
 * Deferred deltas across a removal. Both modes add a delta collected for one lruvec a while
 * later: a reclaim batch's or a refault's cost, and in VMSTAT mode the pending counts. None may
 * reach an lruvec whose memcg was removed meanwhile (the 7.1 rule for deferred per-lruvec
 * deltas): the reparenting hands the child's costs to the parent, and anything added to the
 * child after that is lost to every reader. Every level is therefore taken with
 * lruvec_live_lock() (memcontrol.c: the one implementation of the rule), which locks the first
 * live lruvec from there up and re-checks under the lock; a reparenting takes the child's LRU
 * lock and, in VMSTAT mode, its cost lock only after setting dying, so an lruvec still live
 * under its lock is handed over by it later, with what we added. The pending counts follow the
 * same rule: a noting adds to the stripes of lruvec_live(), and the reparenting folds the
 * child's stripes into its live ancestors before handing its sums over
 * (lru_note_cost_reparent()). A noting that chose the child before dying was set and adds after
 * that fold would strand its count: the two form a Dekker pair (the remover stores dying, then
 * exchanges the stripes; the noting adds, then loads dying, all seq_cst), so at least one of
 * them sees the other, and a noting that sees dying folds the child itself (the exchange moves
 * each count exactly once). Whoever adds or folds keeps the lruvec readable meanwhile: reclaim
 * holds a reference on its memcg (mem_cgroup_reclaim_next(), mem_cgroup_snapshot()), a
 * refault the charge of its folio, the removal its own; a memcg pins its parent, so the walk up
 * is safe.
 */

/*
 * lruvec_cost_add - one noting of @anon and @file on @lruvec: add, then halve both sides if
 * their sum outgrew a quarter of the lists (the lists' sizes read racily in VMSTAT mode).
 * Context: @lruvec's LRU lock (LV_COST_LOCKED) or its cost lock (LV_COST_VMSTAT).
 */
static void lruvec_cost_add(struct lruvec *lruvec, unsigned long anon, unsigned long file)
{
	unsigned long lrusize, anon_cost, file_cost;

	lockdep_assert_held(lruvec->pgdat->machine->cfg.scan_cost == LV_COST_VMSTAT
				    ? &lruvec->cost_lock
				    : lruvec->lru_lock);
	lrusize = READ_ONCE(lruvec->lru_size[LRU_INACTIVE_ANON]) +
		  READ_ONCE(lruvec->lru_size[LRU_ACTIVE_ANON]) +
		  READ_ONCE(lruvec->lru_size[LRU_INACTIVE_FILE]) +
		  READ_ONCE(lruvec->lru_size[LRU_ACTIVE_FILE]);
	anon_cost = lruvec->anon_cost + anon;
	file_cost = lruvec->file_cost + file;
	if (anon_cost + file_cost > lrusize / 4) {
		anon_cost /= 2;
		file_cost /= 2;
	}
	/* Stored with WRITE_ONCE: get_scan_count() reads them without the lock. */
	WRITE_ONCE(lruvec->anon_cost, anon_cost);
	WRITE_ONCE(lruvec->file_cost, file_cost);
}

/*
 * lruvec_cost_fold - the consumer's fold (LV_COST_VMSTAT): take @lruvec's pending counts and
 * note their sum on the first live lruvec from @lruvec up and on each of its ancestors, each
 * under its cost lock (a contention recorded under @site).
 * Context: no cost lock held; the caller keeps @lruvec's memcg alive.
 */
static void lruvec_cost_fold(struct lruvec *lruvec, const char *site)
{
	unsigned long anon = 0, file = 0;

	for (int s = 0; s < COST_STRIPES; s++) {
		struct cost_stripe *stripe = &lruvec->cost_pending[s];

		/* A plain load first: most stripes are empty, and an exchange dirties the line. */
		if (__atomic_load_n(&stripe->pending[0], __ATOMIC_RELAXED))
			anon += __atomic_exchange_n(&stripe->pending[0], 0, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&stripe->pending[1], __ATOMIC_RELAXED))
			file += __atomic_exchange_n(&stripe->pending[1], 0, __ATOMIC_SEQ_CST);
	}
	if (!anon && !file)
		return;
	for (; lruvec; lruvec = parent_lruvec(lruvec)) {
		lruvec = lruvec_live_lock_at(lruvec, true, site);
		lruvec_cost_add(lruvec, anon, file);
		lv_lock_release(&lruvec->cost_lock);
	}
}

/**
 * lru_note_cost - charge @cost to the file or anon side of @lruvec and its ancestors (see
 * "Scan cost" above). LV_COST_LOCKED: under each level's LRU lock in turn, a child's never
 * held while taking its parent's. LV_COST_VMSTAT: one atomic add into the pending counts of
 * the first live lruvec from @lruvec up; no lock (but a fold when that lruvec's memcg started
 * dying meanwhile).
 * Context: no LRU lock held; the caller keeps @lruvec's memcg alive.
 */
void lru_note_cost(struct lruvec *lruvec, bool file, unsigned long cost)
{
	struct lv_machine *m = lruvec->pgdat->machine;

	if (m->cfg.scan_cost == LV_COST_VMSTAT) {
		struct lruvec *live = lruvec_live(lruvec);
		struct cost_stripe *stripe = &live->cost_pending[this_cpu_index(m) % COST_STRIPES];

		__atomic_fetch_add(&stripe->pending[file], cost, __ATOMIC_SEQ_CST);
		/* The Dekker pair with lru_note_cost_reparent(): see "Scan cost". */
		if (lruvec_live(live) != live)
			lruvec_cost_fold(live, __func__);
		return;
	}
	/*
	 * The cost was collected for @lruvec a while ago (a reclaim batch, a refault's lookup):
	 * each level whose memcg was removed meanwhile has handed it to its first live ancestor.
	 */
	for (; lruvec; lruvec = parent_lruvec(lruvec)) {
		lruvec = lruvec_live_lock(lruvec);
		lruvec_cost_add(lruvec, file ? 0 : cost, file ? cost : 0);
		lv_lock_release(lruvec->lru_lock);
	}
}

/**
 * lruvec_scan_costs - the consumer's read of @lruvec's costs for get_scan_count(): in
 * LV_COST_VMSTAT mode after a fold of its pending counts. A racy snapshot of two counters.
 * Context: no LRU lock held; the caller keeps @lruvec's memcg alive.
 */
void lruvec_scan_costs(struct lruvec *lruvec, unsigned long *anon, unsigned long *file)
{
	if (lruvec->pgdat->machine->cfg.scan_cost == LV_COST_VMSTAT)
		lruvec_cost_fold(lruvec, "get_scan_count");
	*anon = READ_ONCE(lruvec->anon_cost);
	*file = READ_ONCE(lruvec->file_cost);
}

/**
 * lru_note_cost_reparent - the reparenting of @child's node hands its scan costs to @parent:
 * the child's recent costs are the parent's now, as its folios are (7.1 adds them). In
 * LV_COST_VMSTAT mode the child's pending counts are folded first, into its first live
 * ancestors, and the sums move under both cost locks, which protect them in that mode.
 * Context: @child's memcg is dying; both lruvecs' LRU locks held (lruvec_reparent()).
 */
void lru_note_cost_reparent(struct lruvec *child, struct lruvec *parent)
{
	bool vmstat = child->pgdat->machine->cfg.scan_cost == LV_COST_VMSTAT;

	lockdep_assert_held(child->lru_lock);
	lockdep_assert_held(parent->lru_lock);
	if (vmstat) {
		lruvec_cost_fold(child, "lruvec_reparent");
		lv_lock_acquire_at(&child->cost_lock, "lruvec_reparent");
		lv_lock_acquire_nested_at(&parent->cost_lock, "lruvec_reparent");
	}
	WRITE_ONCE(parent->anon_cost, parent->anon_cost + child->anon_cost);
	WRITE_ONCE(parent->file_cost, parent->file_cost + child->file_cost);
	WRITE_ONCE(child->anon_cost, 0);
	WRITE_ONCE(child->file_cost, 0);
	if (vmstat) {
		lv_lock_release(&parent->cost_lock);
		lv_lock_release(&child->cost_lock);
	}
}

/* ---- isolation and putback for reclaim ---------------------------------------------------------
 */

/*
 * reclaim_lock - take @lruvec's lock to isolate from it, or, when @sc may skip, give up at once
 * if it is held and count the skip. The holder of a tenant's lock in user space can be a
 * preempted thread that keeps it for a whole time slice; reclaim that is not bound to one
 * memcg has other lruvecs to scan and comes back to this one at the next priority.
 * Return: true with the lock held.
 */
static bool reclaim_lock_at(struct lruvec *lruvec, struct scan_control *sc, const char *site)
{
	if (!sc->may_skip) {
		lv_lock_acquire_at(lruvec->lru_lock, site);
		return true;
	}
	if (lv_lock_trylock(lruvec->lru_lock))
		return true;
	sc->skipped = true;
	lruvec_count_event_atomic(lruvec, EV_RECLAIM_SKIP_BUSY, 1);
	return false;
}
/* shrink_inactive_list() and shrink_active_list() take the lock: name them. */
#define reclaim_lock(lruvec, sc) reclaim_lock_at((lruvec), (sc), __func__)

static void list_move(struct list_head *entry, struct list_head *head)
{
	list_del(entry);
	list_add(entry, head);
}

/*
 * isolate_lru_folios - move up to @nr_to_scan folios from the tail of list @lru to @dst.
 * Folios someone else pinned (PG_lru clear while still linked: their owner waits for this
 * lock) or that are being freed are passed over and moved to the head.
 * Return: pages isolated; *@nr_scanned pages looked at (for pgscan and pgrefill, which count
 * pages, as the kernel's do). @nr_to_scan counts folios, unlike the kernel's pages: a batch
 * of large folios is then as many lock round trips as one of small folios.
 * Context: @lruvec's lock held.
 */
static unsigned long isolate_lru_folios(struct lruvec *lruvec, enum lru_list lru,
					unsigned long nr_to_scan, struct list_head *dst,
					unsigned long *nr_scanned)
{
	struct list_head *src = &lruvec->lists[lru];
	unsigned long taken = 0, scanned = 0, scanned_pages = 0;
	struct list_head busy;

	lockdep_assert_held(lruvec->lru_lock);
	INIT_LIST_HEAD(&busy);
	while (scanned < nr_to_scan && !list_empty(src)) {
		struct lv_folio *folio = list_last_entry(src, struct lv_folio, lru);

		scanned++;
		/* Linked, so not freed under us: its order holds still (folios_put_refs()). */
		scanned_pages += (unsigned long)folio_nr_pages(folio);
		if (!folio_test_lru(folio) || !folio_try_get(folio)) {
			list_move(&folio->lru, &busy);
			continue;
		}
		if (!folio_test_clear_lru(folio)) {
			/* The pin owner holds a reference too: ours cannot be the last. */
			bool last = folio_put_testzero(folio);

			VM_BUG_ON_FOLIO(last, folio);
			list_move(&folio->lru, &busy);
			continue;
		}
		lruvec_del_folio(lruvec, folio);
		list_add(&folio->lru, dst);
		taken += (unsigned long)folio_nr_pages(folio);
	}
	while (!list_empty(&busy))
		list_move(busy.next, src);
	/* A visit brings a level its lists no longer have back down ("Many memcgs"). */
	lruvec_size_level_update(lruvec, true);
	*nr_scanned = scanned_pages;
	return taken;
}

/*
 * move_folios_to_lru - put isolated folios back on the lists their flags select, counting the
 * inactive ones as deactivated if @deactivated, then drop the isolation references after
 * unlocking.
 * Context: no lock held.
 */
static void move_folios_to_lru(struct list_head *list, bool deactivated)
{
	/* Isolation takes at most SWAP_CLUSTER_MAX folios: they all go back under one hold. */
	struct lv_folio *done[SWAP_CLUSTER_MAX];
	struct lruvec *lruvec = NULL;
	unsigned int nr = 0;

	while (!list_empty(list)) {
		struct lv_folio *folio = list_first_entry(list, struct lv_folio, lru);

		list_del(&folio->lru);
		if (!folio_evictable(folio)) {
			/* Became mlocked: lru_add decides where it goes. */
			if (lruvec)
				lruvec_unlock(lruvec);
			lruvec = NULL;
			folio_putback_lru(folio);
			continue;
		}
		/* A removal may have reparented it meanwhile: the relock finds where it is now. */
		lruvec = folio_lruvec_relock(folio, lruvec);
		lruvec_add_folio(lruvec, folio);
		folio_set_lru(folio);
		if (folio_test_active(folio))
			workingset_age_nonresident(lruvec, folio_nr_pages(folio));
		else if (deactivated)
			lruvec_count_event(lruvec, EV_PGDEACTIVATE, folio_nr_pages(folio));
		done[nr++] = folio;
		if (nr == SWAP_CLUSTER_MAX) {
			lruvec_unlock(lruvec);
			lruvec = NULL;
			folios_put_refs(done, nr);
			nr = 0;
		}
	}
	if (lruvec)
		lruvec_unlock(lruvec);
	folios_put_refs(done, nr);
}

/* ---- deciding each folio's fate ------------------------------------------------------------- */

/* folio_memcg_nr_swap_pages - the slots @folio's memcg may still take (its binding may move). */
static long folio_memcg_nr_swap_pages(struct lv_folio *folio)
{
	long nr;

	rcu_read_lock();
	nr = mem_cgroup_get_nr_swap_pages(folio_memcg(folio));
	rcu_read_unlock();
	return nr;
}

/*
 * shrink_anon_folio - the fate of an isolated swap-backed folio (mapped, or in the swap cache):
 * one used since reclaim last looked (its accessed bit, PG_referenced) is activated, unless
 * @force (LV_MADV_PAGEOUT); a large one is split first, its pages following on @list; the
 * rest are swapped out. Return: true if freed (count zero). *@activate: it goes to the active
 * list. @pageout counts pages written.
 */
static bool shrink_anon_folio(struct lv_folio *folio, struct list_head *list, bool force,
			      bool *activate, unsigned long *pageout)
{
	struct lv_machine *m = folio_machine(folio);

	*activate = false;
	if (!folio_evictable(folio))
		return false;
	if (folio_test_clear_referenced(folio) && !force) {
		*activate = true;
		return false;
	}
	/* Nowhere to put it (no slot, the swap limit): keep it whole, off the inactive tail. */
	if (!folio_test(folio, PG_swapcache) &&
	    (mem_cgroup_disabled(m) ? get_nr_swap_pages(m) : folio_memcg_nr_swap_pages(folio)) <=
		    0) {
		*activate = true;
		return false;
	}
	if (folio_test_large(folio) && split_folio_to_list(folio, list)) {
		/* Someone holds a reference: it stays large, in memory, off the inactive tail. */
		*activate = true;
		return false;
	}
	return swap_out_folio(folio, activate, pageout);
}

/*
 * shrink_folio_list - free what can be freed among isolated folios; the rest stay on @list
 * (marked active if they earned it). @force: ignore accessed bits (LV_MADV_PAGEOUT). Return:
 * pages reclaimed; *@pageout pages written to swap.
 * Context: no lock held; may take mapping, mm, swap, pcp and zone locks; may block (I/O).
 */
static unsigned long shrink_folio_list(struct list_head *list, bool force, unsigned long *pageout)
{
	struct lv_folio *to_free[LV_MAX_BATCH];
	unsigned long reclaimed = 0;
	unsigned int nr_free = 0;
	struct list_head keep;

	INIT_LIST_HEAD(&keep);
	while (!list_empty(list)) {
		struct lv_folio *folio = list_first_entry(list, struct lv_folio, lru);
		bool freed, activate = false;

		list_del(&folio->lru);
		/* Its putback would keep the bit: callers hand unevictable folios back first. */
		VM_BUG_ON_FOLIO(folio_test_unevictable(folio), folio);
		if (folio_test_swapbacked(folio) || folio_test(folio, PG_swapcache)) {
			freed = shrink_anon_folio(folio, list, force, &activate, pageout);
		} else if (folio_anon_mm(folio)) {
			/*
			 * A clean large folio is split before it is lazily freed: its pages follow
			 * on @list, isolated, and each leaves with its own entry. A written one
			 * needs no split: all of it goes back to anon.
			 */
			if (folio_test_large(folio) && !folio_test_dirty(folio) &&
			    folio_evictable(folio))
				split_folio_to_list(folio, list);
			/* Lazyfree: freed unless written since; a written one is anon again. */
			freed = folio_evictable(folio) && try_to_unmap_lazyfree(folio);
			/* Written since: swapped out like any anon page, or kept active. */
			if (!freed && folio_test_swapbacked(folio)) {
				freed = shrink_anon_folio(folio, list, true, &activate, pageout);
				activate |= !freed;
			}
		} else if (folio_test_dirty(folio) || folio_test_writeback(folio)) {
			/* No writeback here: rotate it to the tail when its owner cleans it. */
			folio_set_reclaim(folio);
			freed = false;
		} else if (!folio_evictable(folio) || folio_test(folio, PG_locked)) {
			freed = false;
		} else if (folio_test_mapped(folio) && folio_test_clear_referenced(folio)) {
			activate = true; /* used through a mapping since it was queued */
			freed = false;
		} else if (folio_file_mapping(folio)) {
			/* Mapped, not used since: unmapped first, as try_to_unmap() does. */
			freed = (!folio_file_mapcount(folio) || try_to_unmap_file(folio)) &&
				remove_mapping(folio);
		} else {
			/* Truncated while isolated, or a lazily freed anon folio nobody maps. */
			freed = folio_ref_freeze(folio, 1);
		}
		if (!freed) {
			if (activate)
				folio_set_active(folio);
			list_add_tail(&folio->lru, &keep);
			continue;
		}
		reclaimed += (unsigned long)folio_nr_pages(folio);
		to_free[nr_free++] = folio;
		if (nr_free == LV_MAX_BATCH) {
			free_folios(to_free, nr_free);
			nr_free = 0;
		}
	}
	free_folios(to_free, nr_free);
	while (!list_empty(&keep))
		list_move(keep.next, list);
	return reclaimed;
}

static unsigned long shrink_inactive_list(struct lruvec *lruvec, enum lru_list lru,
					  unsigned long nr_to_scan, struct scan_control *sc)
{
	struct lv_machine *m = lruvec->pgdat->machine;
	unsigned long nr_scanned, nr_taken, nr_reclaimed, nr_pageout = 0;
	bool file = lru >= LRU_INACTIVE_FILE;
	struct list_head folio_list;

	INIT_LIST_HEAD(&folio_list);
	/* Folios still in this CPU's batches are invisible to isolation. */
	lru_add_drain_try(m);
	if (!reclaim_lock(lruvec, sc))
		return 0;
	nr_taken = isolate_lru_folios(lruvec, lru, nr_to_scan, &folio_list, &nr_scanned);
	lruvec_count_event(lruvec, EV_PGSCAN, (long)nr_scanned);
	lv_lock_release(lruvec->lru_lock);
	if (!file)
		lruvec_count_event_atomic(lruvec, EV_PGSCAN_ANON, (long)nr_scanned);
	if (!nr_taken)
		return 0;

	nr_reclaimed = shrink_folio_list(&folio_list, false, &nr_pageout);
	lruvec_count_event_atomic(lruvec, EV_PGSTEAL, (long)nr_reclaimed);
	if (!file)
		lruvec_count_event_atomic(lruvec, EV_PGSTEAL_ANON, (long)nr_reclaimed);
	move_folios_to_lru(&folio_list, false);
	/*
	 * The cost of this side: I/O weighs SWAP_CLUSTER_MAX times a rotation, as the kernel's
	 * lru_note_cost(). Without swap only the file lists are scanned and the balance has
	 * nothing to decide: skip the walk to the root that takes every ancestor's lock (Roman
	 * Gushchin, 2025).
	 */
	if (sc->can_swap && (nr_pageout || nr_scanned > nr_reclaimed))
		lru_note_cost(lruvec, file,
			      nr_pageout * SWAP_CLUSTER_MAX +
				      (nr_scanned > nr_reclaimed ? nr_scanned - nr_reclaimed : 0));
	return nr_reclaimed;
}

/*
 * shrink_active_list - age an active list. Active file folios used again while active
 * (PG_referenced) rotate and stay active; anon folios all move to the inactive list, their
 * accessed bits cleared, as the kernel's (only executable file pages are kept there), so that
 * the inactive list's second look decides; the moved ones get PG_workingset.
 */
static void shrink_active_list(struct lruvec *lruvec, enum lru_list lru, unsigned long nr_to_scan,
			       struct scan_control *sc)
{
	struct lv_machine *m = lruvec->pgdat->machine;
	bool file = lru >= LRU_INACTIVE_FILE;
	struct list_head hold, moved;
	unsigned long nr_scanned, nr_rotated = 0;

	INIT_LIST_HEAD(&hold);
	INIT_LIST_HEAD(&moved);
	lru_add_drain_try(m);
	if (!reclaim_lock(lruvec, sc))
		return;
	isolate_lru_folios(lruvec, lru, nr_to_scan, &hold, &nr_scanned);
	lruvec_count_event(lruvec, EV_PGREFILL, (long)nr_scanned);
	lv_lock_release(lruvec->lru_lock);

	while (!list_empty(&hold)) {
		struct lv_folio *folio = list_first_entry(&hold, struct lv_folio, lru);

		list_del(&folio->lru);
		/* Nobody else plays with PG_active on an isolated folio: it is ours to change. */
		if (folio_test_clear_referenced(folio) && file) {
			nr_rotated += (unsigned long)folio_nr_pages(folio);
		} else {
			folio_clear_active(folio);
			folio_set_workingset(folio);
		}
		list_add_tail(&folio->lru, &moved);
	}
	/* Rotated and deactivated folios go back under one hold of the lock, as in the kernel. */
	move_folios_to_lru(&moved, true);
	if (nr_rotated)
		lru_note_cost(lruvec, file, nr_rotated);
}

/* inactive_is_low - the kernel's ratio: inactive × sqrt(10 × GiB of the lists) < active. */
static bool inactive_is_low(struct lruvec *lruvec, bool file)
{
	enum lru_list base = file ? LRU_INACTIVE_FILE : LRU_INACTIVE_ANON;
	unsigned long inactive = READ_ONCE(lruvec->lru_size[base]);
	unsigned long active = READ_ONCE(lruvec->lru_size[base + LRU_ACTIVE]);
	unsigned long gb = (inactive + active) >> (30 - 12);
	unsigned long ratio = gb ? (unsigned long)sqrt(10.0 * (double)gb) : 1;

	return inactive * ratio < active;
}

/*
 * refaulting - were refaults activated in @lruvec since reclaim last finished with it? Then a
 * new workingset is being established, and the active list is aged whatever the ratio, so that
 * its stale folios make room for it quickly (the kernel since 4.12; DEACTIVATE_FILE from 5.5).
 * The count is read racily and the snapshot is a plain store, as the kernel's: concurrent
 * reclaimers may age a little more or less than one of them alone would.
 */
static bool refaulting(struct lruvec *lruvec)
{
	return lruvec_event(lruvec, EV_WORKINGSET_ACTIVATE) !=
	       __atomic_load_n(&lruvec->refaults, __ATOMIC_RELAXED);
}

/*
 * snapshot_refaults - the reclaim call @sc finished: in @lruvec, if that call aged its active
 * list on news of refaults, refaults from now on are news. An lruvec that reclaim stopped
 * before, passed over because its lock was held, or visited at a priority too high to scan
 * any of its active list keeps its news for the next call (the kernel's snapshot, taken for
 * every memcg under the reclaim root, can drop news that nothing acted on).
 */
static void snapshot_refaults(struct lruvec *lruvec, const struct scan_control *sc)
{
	uint64_t refaults = lruvec_event(lruvec, EV_WORKINGSET_ACTIVATE);

	if (__atomic_load_n(&lruvec->reclaim_id, __ATOMIC_RELAXED) == sc->id &&
	    __atomic_load_n(&lruvec->refaults, __ATOMIC_RELAXED) != refaults)
		__atomic_store_n(&lruvec->refaults, refaults, __ATOMIC_RELAXED);
}

/*
 * sc_aged - @sc aged @lruvec's active file list on news of refaults (and marked it with its
 * id): remember it, with a reference on its memcg, for the snapshot at the call's end. Past
 * SC_AGED_MAX lruvecs in one call, the snapshot is taken at once.
 */
static void sc_aged(struct scan_control *sc, struct lruvec *lruvec)
{
	for (unsigned int i = 0; i < sc->nr_aged; i++)
		if (sc->aged[i] == lruvec)
			return;
	if (sc->nr_aged == SC_AGED_MAX) {
		snapshot_refaults(lruvec, sc);
		return;
	}
	if (lruvec->memcg)
		css_get(lruvec->memcg);
	sc->aged[sc->nr_aged++] = lruvec;
}

/* sc_aged_snapshot - the call @sc ends: the snapshot of every lruvec it aged (sc_aged()). */
static void sc_aged_snapshot(struct scan_control *sc)
{
	for (unsigned int i = 0; i < sc->nr_aged; i++) {
		snapshot_refaults(sc->aged[i], sc);
		if (sc->aged[i]->memcg)
			css_put(sc->aged[i]->memcg);
	}
	sc->nr_aged = 0;
}

enum scan_balance { SCAN_EQUAL, SCAN_FRACT, SCAN_ANON, SCAN_FILE };

/*
 * get_scan_count - how many pages of each list to scan at @sc's priority (the kernel's
 * get_scan_count()): each list's size >> priority, split between anon and file by balance.
 * Anon is left alone when its pages cannot be swapped (no free slot, or the memcg's swap
 * limit), in limit reclaim with swappiness 0 (a memcg's way to opt out of swap), and while
 * the inactive file list alone can meet the pressure and file refaults are not activating
 * (cache trim mode). At the last priority both sides are scanned equally unless swappiness
 * is 0; with no file pages only anon is (global reclaim with swappiness 0 still swaps then,
 * rather than fail). Otherwise the split follows the costs reclaim noted: each side's share is
 * its swappiness weight (swappiness for anon, 200 - swappiness for file) over its recent cost
 * (rotations and refaults, and I/O at SWAP_CLUSTER_MAX each), as the kernel weighs them. The
 * costs are read without the lock: a racy snapshot of two counters only shifts the split.
 */
static void get_scan_count(struct lruvec *lruvec, struct scan_control *sc, bool deactivate,
			   unsigned long nr[NR_LRU_LISTS - 1])
{
	struct lv_machine *m = lruvec->pgdat->machine;
	unsigned int swappiness = mem_cgroup_swappiness(m, sc->target ? sc->target : lruvec->memcg);
	unsigned long ap = 0, fp = 0, anon_cost, file_cost;
	enum scan_balance balance;

	sc->can_swap = (mem_cgroup_disabled(m) ? get_nr_swap_pages(m)
					       : mem_cgroup_get_nr_swap_pages(lruvec->memcg)) > 0;
	if (!sc->can_swap || (sc->target && !swappiness))
		balance = SCAN_FILE;
	else if (!sc->priority && swappiness)
		balance = SCAN_EQUAL;
	else if (!(READ_ONCE(lruvec->lru_size[LRU_INACTIVE_FILE]) +
		   READ_ONCE(lruvec->lru_size[LRU_ACTIVE_FILE])))
		balance = SCAN_ANON;
	else if (!deactivate && READ_ONCE(lruvec->lru_size[LRU_INACTIVE_FILE]) >> sc->priority)
		balance = SCAN_FILE;
	else
		balance = SCAN_FRACT;
	/* Folded whatever the balance: an ancestor's costs wait for this lruvec's fold. */
	lruvec_scan_costs(lruvec, &anon_cost, &file_cost);
	if (balance == SCAN_FRACT) {
		unsigned long total = anon_cost + file_cost;

		/* Each side's own cost counts twice, so that neither share can reach zero. */
		anon_cost += total;
		file_cost += total;
		total = anon_cost + file_cost;
		ap = swappiness * (total + 1) / (anon_cost + 1);
		fp = (200 - swappiness) * (total + 1) / (file_cost + 1);
	}
	for (enum lru_list lru = 0; lru < LRU_UNEVICTABLE; lru++) {
		bool file = lru >= LRU_INACTIVE_FILE;
		unsigned long scan = READ_ONCE(lruvec->lru_size[lru]) >> sc->priority;

		switch (balance) {
		case SCAN_EQUAL:
			break;
		case SCAN_FRACT:
			/* Rounded up, so that a small share still scans something. */
			scan = (scan * (file ? fp : ap) + ap + fp - 1) / (ap + fp);
			break;
		case SCAN_ANON:
			scan = file ? 0 : scan;
			break;
		case SCAN_FILE:
			scan = file ? scan : 0;
			break;
		}
		nr[lru] = scan;
	}
}

static void shrink_lruvec(struct lruvec *lruvec, struct scan_control *sc)
{
	bool deactivate = refaulting(lruvec);
	unsigned long nr[NR_LRU_LISTS - 1];

	get_scan_count(lruvec, sc, deactivate, nr);
	sc->skipped = false;
	/*
	 * Visited for a level its lists have lost since (levels fall only when reclaim looks,
	 * "Many memcgs"): bring it down, so that the walks at this priority pass over it.
	 */
	if (!(nr[LRU_INACTIVE_ANON] | nr[LRU_ACTIVE_ANON] | nr[LRU_INACTIVE_FILE] |
	      nr[LRU_ACTIVE_FILE]) &&
	    lruvec_true_level(lruvec) < __atomic_load_n(&lruvec->size_level, __ATOMIC_RELAXED)) {
		lv_lock_acquire(lruvec->lru_lock);
		lruvec_size_level_update(lruvec, true);
		lv_lock_release(lruvec->lru_lock);
	}
	while ((nr[LRU_INACTIVE_ANON] || nr[LRU_ACTIVE_ANON] || nr[LRU_INACTIVE_FILE] ||
		nr[LRU_ACTIVE_FILE]) &&
	       sc->nr_reclaimed < sc->nr_to_reclaim && !sc->skipped) {
		for (enum lru_list lru = 0; lru < LRU_UNEVICTABLE && !sc->skipped; lru++) {
			bool file = lru >= LRU_INACTIVE_FILE;
			unsigned long n = nr[lru] < SWAP_CLUSTER_MAX ? nr[lru] : SWAP_CLUSTER_MAX;

			if (!n)
				continue;
			nr[lru] -= n;
			if (!(lru & LRU_ACTIVE)) {
				sc->nr_reclaimed += shrink_inactive_list(lruvec, lru, n, sc);
				continue;
			}
			if ((file && deactivate) || inactive_is_low(lruvec, file)) {
				shrink_active_list(lruvec, lru, n, sc);
				/* Aged: the news of refaults can be taken (snapshot_refaults()). */
				if (file && deactivate && !sc->skipped) {
					__atomic_store_n(&lruvec->reclaim_id, sc->id,
							 __ATOMIC_RELAXED);
					sc_aged(sc, lruvec);
				}
			}
		}
	}
	/*
	 * Keep the anon lists balanced even when this pass did not scan them, as the kernel
	 * does; the file lists are aged only by the loop above, in proportion to their size.
	 * Historical note: aging the active file list here as well, SWAP_CLUSTER_MAX pages per
	 * pass, deactivated several times what the kernel does in readtwice at half the file
	 * (docs/fidelity.md).
	 */
	if (!sc->skipped && sc->can_swap && inactive_is_low(lruvec, false))
		shrink_active_list(lruvec, LRU_ACTIVE_ANON, SWAP_CLUSTER_MAX, sc);
	/*
	 * The shadow shrinker of this lruvec, as shrink_node_memcgs() follows shrink_lruvec()
	 * with shrink_slab() for the memcg, whatever its lists held: a parent's list fills up
	 * with a removed child's nodes while its own lists stay empty.
	 */
	shadow_nodes_shrink(lruvec, SHADOW_SHRINK_BATCH);
}

/**
 * reclaim_pages - reclaim the folios on @list, isolated by the caller, whatever their accessed
 * bits (LV_MADV_PAGEOUT, the kernel's reclaim_pages()); the ones kept go back to their lists.
 * Return: pages reclaimed.
 * Context: no lock held; may block.
 */
unsigned long reclaim_pages(struct list_head *list)
{
	unsigned long reclaimed, pageout = 0;

	reclaimed = shrink_folio_list(list, true, &pageout);
	move_folios_to_lru(list, false);
	return reclaimed;
}

/* shrink_node_memcgs - one walk of @pgdat's memcgs at @sc's priority ("Many memcgs"). */
static void shrink_node_memcgs(struct pglist_data *pgdat, struct lv_memcg **memcgs,
			       size_t nr_memcgs, size_t start, struct scan_control *sc)
{
	struct lv_machine *m = pgdat->machine;
	unsigned int left;
	struct lv_memcg *memcg;

	if (mem_cgroup_disabled(m)) {
		shrink_lruvec(mem_cgroup_lruvec(NULL, pgdat), sc);
		return;
	}
	if (memcgs) {
		for (size_t k = 0; k < nr_memcgs && sc->nr_reclaimed < sc->nr_to_reclaim; k++)
			shrink_lruvec(mem_cgroup_lruvec(memcgs[(start + k) % nr_memcgs], pgdat),
				      sc);
		return;
	}
	left = MEMCG_MAX_IDS;
	while (sc->nr_reclaimed < sc->nr_to_reclaim &&
	       (memcg = mem_cgroup_reclaim_next(pgdat, sc->priority + 1, &left))) {
		shrink_lruvec(mem_cgroup_lruvec(memcg, pgdat), sc);
		css_put(memcg);
	}
}

/**
 * try_to_free_pages - reclaim about @nr pages from @target's subtree (NULL: every memcg) on
 * node @nid (-1: every node), raising the scan pressure until enough was freed.
 * Return: pages reclaimed.
 * Context: may block; no library lock held; @target kept alive by the caller.
 */
unsigned long try_to_free_pages(struct lv_machine *m, struct lv_memcg *target, int nid,
				unsigned long nr)
{
	struct scan_control sc = { .nr_to_reclaim = nr > SWAP_CLUSTER_MAX ? nr : SWAP_CLUSTER_MAX,
				   .target = target };
	struct lv_memcg **memcgs = NULL;
	size_t nr_memcgs = 0, start;
	int first;

	lockdep_assert_no_lru_lock();
	/*
	 * Folios queued in this CPU's batches are on no list, so the list sizes that decide how
	 * much to scan leave them out, and a small memcg may have nothing else: drain them first
	 * (shrink_inactive_list() drains again as it goes).
	 */
	lru_add_drain_try(m);
	/* Limit reclaim's subtree, each memcg pinned: the kernel's mem_cgroup_iter. */
	if (target && !mem_cgroup_disabled(m)) {
		memcgs = mem_cgroup_snapshot(target, &nr_memcgs);
		if (!memcgs)
			return 0;
	}
	/*
	 * Concurrent limit reclaimers start at different memcgs, as the kernel's shared
	 * mem_cgroup_iter position makes them, instead of queueing on the same lruvec locks one
	 * after another.
	 */
	start = __atomic_fetch_add(&m->reclaim_rotor, 1, __ATOMIC_RELAXED);
	sc.id = start + 1; /* unique among concurrent calls; 0 marks no lruvec */
	first = reclaim_first_priority(m, nid);
	for (sc.priority = first; sc.priority >= 0; sc.priority--) {
		/* Global reclaim waits for no lock it can do without, while pressure is low. */
		sc.may_skip = !target && sc.priority > first - SKIP_BUSY_PRIORITIES;
		for (unsigned int n = 0; n < m->cfg.nr_nodes; n++)
			if (nid < 0 || (unsigned int)nid == n)
				shrink_node_memcgs(m->nodes[n], memcgs, nr_memcgs, start, &sc);
		if (sc.nr_reclaimed >= sc.nr_to_reclaim)
			break;
	}
	/*
	 * Each lruvec keeps its own snapshot, as the kernel did from 4.12 to 5.4 (5.5 moved the
	 * decision to the reclaim root).
	 */
	sc_aged_snapshot(&sc);
	if (memcgs)
		mem_cgroup_snapshot_put(memcgs, nr_memcgs);
	return sc.nr_reclaimed;
}

unsigned long lv_reclaim_node(struct lv_machine *m, int nid, unsigned long nr)
{
	if (!m || !node_valid(m, nid) || !nr)
		return 0;
	return try_to_free_pages(m, NULL, nid, nr);
}

unsigned long lv_memcg_reclaim(struct lv_memcg *memcg, unsigned long nr)
{
	struct memcg_guard guard;
	unsigned long reclaimed = 0;
	struct lv_machine *m;

	if (!memcg || !nr)
		return 0;
	/* Reclaim blocks: hold a reference against a concurrent lv_memcg_remove(). */
	memcg_guard_enter(&guard, memcg);
	m = memcg->machine;
	if (memcg_guard_pin(&guard))
		reclaimed = try_to_free_pages(m, memcg, -1, nr);
	memcg_guard_exit(&guard);
	return reclaimed;
}

/* ---- kswapd --------------------------------------------------------------------------------- */

static unsigned long zone_free(struct pglist_data *pgdat)
{
	return READ_ONCE(pgdat->zone.free_pages);
}

/*
 * kswapd_linger - stay awake (busy, so allocators only leave a request and signal no one) for
 * KSWAPD_LINGER_NS after a pass, yielding the CPU, in case free memory falls below @low again
 * at once: a streaming reader does that within microseconds, and every wakeup costs it a futex
 * syscall and us two context switches. Yielding, not spinning: with more threads than CPUs, the
 * time goes to them. Return: free pages when it stopped lingering.
 */
static unsigned long kswapd_linger(struct kswapd *k, unsigned long low)
{
	uint64_t end = now_ns() + KSWAPD_LINGER_NS;
	unsigned long free;

	while ((free = zone_free(k->d.pgdat)) >= low && now_ns() < end &&
	       !__atomic_load_n(&k->d.stop, __ATOMIC_RELAXED))
		sched_yield();
	return free;
}

/*
 * kswapd_backoff - after a pass that found nothing reclaimable, wait KSWAPD_BACKOFF_MS (or
 * until stopped) before the next one, still busy. Allocators below low leave a request after
 * every pass, so without the wait a node with nothing on its lists (all of it held or
 * queued) would keep kswapd in fruitless passes back to back, most of a CPU spent on nothing
 * (test_kswapd_backoff counts the passes). Requests made meanwhile wait in wake, served late,
 * never lost; the kernel instead stops waking a node after 16 fruitless passes until some
 * reclaim succeeds, which would drop them.
 */
static void kswapd_backoff(struct kswapd *k)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += KSWAPD_BACKOFF_MS * 1000000l;
	if (until.tv_nsec >= 1000000000l) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000l;
	}
	pthread_mutex_lock(&k->d.lock);
	while (!k->d.stop && pthread_cond_timedwait(&k->d.wait, &k->d.lock, &until) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&k->d.lock);
}

static void *kswapd_thread(void *arg)
{
	struct kswapd *k = container_of(arg, struct kswapd, d);
	struct pglist_data *pgdat = k->d.pgdat;
	unsigned long high = pgdat->zone.watermark[WMARK_HIGH];
	unsigned long low = pgdat->zone.watermark[WMARK_LOW];

	for (;;) {
		pthread_mutex_lock(&k->d.lock);
		while (!node_daemon_requested(&k->d) && !k->d.stop)
			pthread_cond_wait(&k->d.wait, &k->d.lock);
		if (k->d.stop) {
			pthread_mutex_unlock(&k->d.lock);
			return NULL;
		}
		/* Consume the request before the pass: one made while it runs asks for another. */
		node_daemon_begin(&k->d);
		pthread_mutex_unlock(&k->d.lock);
		lruvec_count_event_atomic(mem_cgroup_lruvec(pgdat->machine->root, pgdat),
					  EV_PAGEOUTRUN, 1);
		/* balance_pgdat: reclaim until the node is back above its high watermark. */
		for (;;) {
			unsigned long free = zone_free(pgdat);

			if (free >= high && (free = kswapd_linger(k, low)) >= low)
				break;
			if (__atomic_load_n(&k->d.stop, __ATOMIC_RELAXED))
				break;
			if (!try_to_free_pages(pgdat->machine, NULL, pgdat->node_id, high - free)) {
				kswapd_backoff(k); /* nothing reclaimable */
				break;
			}
		}
		node_daemon_end(&k->d);
	}
}

/*
 * kswapd_quiesce - wait until no kswapd has a pass running or requested. With no other thread
 * allocating, nothing wakes them again, so the machine is then quiescent. wake is read before
 * busy (acquire), the opposite of the order in which node_daemon_begin() writes them, so with
 * no allocator left to make a new request (the precondition) we never see both clear while a
 * pass starts.
 */
void kswapd_quiesce(struct lv_machine *m)
{
	for (unsigned int nid = 0; m->kswapd && nid < m->cfg.nr_nodes; nid++) {
		struct node_daemon *d = &m->kswapd[nid].d;

		while (d->pgdat && (__atomic_load_n(&d->wake, __ATOMIC_ACQUIRE) ||
				    __atomic_load_n(&d->busy, __ATOMIC_ACQUIRE)))
			usleep(200);
	}
}

/**
 * wakeup_kswapd - ask @pgdat's kswapd to reclaim up to the high watermark, after the caller
 * took pages. Lock-free if kswapd is awake or asked already. No request is lost, and the pass
 * that serves it sees the pages taken before it; a request made while kswapd is busy asks for
 * another pass (tests/models/kswapd_wake.pml; the C11 argument is node_daemon_wake()'s).
 * Context: any; takes kswapd's mutex only when kswapd is asleep.
 */
void wakeup_kswapd(struct pglist_data *pgdat)
{
	struct lv_machine *m = pgdat->machine;

	if (m->kswapd)
		node_daemon_wake(&m->kswapd[pgdat->node_id].d);
}

/**
 * kswapd_start - start a kswapd thread per node unless cfg.no_kswapd; a node whose thread
 * cannot be created runs without one.
 * Return: 0 or -ENOMEM.
 * Context: machine creation; may block.
 */
int kswapd_start(struct lv_machine *m)
{
	if (m->cfg.no_kswapd)
		return 0;
	m->kswapd = calloc(m->cfg.nr_nodes, sizeof(*m->kswapd));
	return node_daemons_start(m, m->kswapd, sizeof(*m->kswapd), offsetof(struct kswapd, d),
				  kswapd_thread, "kswapd");
}

/**
 * kswapd_stop - stop and join the kswapd threads.
 * Context: machine teardown or a failed creation, nobody left allocating; may block.
 */
void kswapd_stop(struct lv_machine *m)
{
	node_daemons_stop(m, m->kswapd, sizeof(*m->kswapd), offsetof(struct kswapd, d));
	m->kswapd = NULL;
}
