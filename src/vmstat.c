// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Statistics: vmstat-like counters per node and per memcg, lock statistics per class, and the
 * folio accessors of the public header.
 *
 * Counters are kept where they are cheapest to update: list sizes and events in the lruvec,
 * under its lock (no atomics on the hot path); node values are sums over the node's lruvecs,
 * plus what removed memcgs left behind.
 */
#include "internal.h"
#include "swap.h"

#include <string.h>

static const char *const class_names[LV_NR_LOCK_CLASSES] = {
	[LV_LOCK_CLASS_LRUVEC] = "lruvec", [LV_LOCK_CLASS_NODE] = "node",
	[LV_LOCK_CLASS_ZONE] = "zone",	   [LV_LOCK_CLASS_SLOT] = "slot",
	[LV_LOCK_CLASS_PCP] = "pcp",	   [LV_LOCK_CLASS_DRAIN] = "drain",
	[LV_LOCK_CLASS_MEMCG] = "memcg",   [LV_LOCK_CLASS_MAPPING] = "mapping",
	[LV_LOCK_CLASS_SHADOW] = "shadow", [LV_LOCK_CLASS_MM] = "mm",
	[LV_LOCK_CLASS_SWAP] = "swap",	   [LV_LOCK_CLASS_COST] = "cost",
};

static const char *const stat_names[LV_NR_STAT_ITEMS] = {
	[LV_NR_INACTIVE_ANON] = "nr_inactive_anon",
	[LV_NR_ACTIVE_ANON] = "nr_active_anon",
	[LV_NR_INACTIVE_FILE] = "nr_inactive_file",
	[LV_NR_ACTIVE_FILE] = "nr_active_file",
	[LV_NR_UNEVICTABLE] = "nr_unevictable",
	[LV_NR_ISOLATED] = "nr_isolated",
	[LV_NR_CHARGED] = "nr_charged",
	[LV_NR_FREE] = "nr_free_pages",
	[LV_WMARK_MIN] = "wmark_min",
	[LV_WMARK_LOW] = "wmark_low",
	[LV_WMARK_HIGH] = "wmark_high",
	[LV_PGACTIVATE] = "pgactivate",
	[LV_PGDEACTIVATE] = "pgdeactivate",
	[LV_PGLAZYFREE] = "pglazyfree",
	[LV_PGROTATED] = "pgrotated",
	[LV_PGMOVED] = "pgmoved",
	[LV_LOCK_RETRIES] = "lock_retries",
	[LV_PGSCAN] = "pgscan",
	[LV_PGSTEAL] = "pgsteal",
	[LV_PGREFILL] = "pgrefill",
	[LV_WORKINGSET_REFAULT] = "workingset_refault",
	[LV_WORKINGSET_ACTIVATE] = "workingset_activate",
	[LV_WORKINGSET_NODERECLAIM] = "workingset_nodereclaim",
	[LV_ALLOCSTALL] = "allocstall",
	[LV_NR_FILE_PAGES] = "nr_file_pages",
	[LV_PGMIGRATE_SUCCESS] = "pgmigrate_success",
	[LV_PGMIGRATE_FAIL] = "pgmigrate_fail",
	[LV_RECLAIM_SKIP_BUSY] = "reclaim_skip_busy",
	[LV_WORKINGSET_NODES] = "workingset_nodes",
	[LV_RECLAIM_DRAIN] = "reclaim_drain",
	[LV_PAGEOUTRUN] = "pageoutrun",
	[LV_PGPGIN] = "pgpgin",
	[LV_NR_MLOCK] = "nr_mlock",
	[LV_UNEVICTABLE_PGS_MLOCKED] = "unevictable_pgs_mlocked",
	[LV_UNEVICTABLE_PGS_MUNLOCKED] = "unevictable_pgs_munlocked",
	[LV_UNEVICTABLE_PGS_CULLED] = "unevictable_pgs_culled",
	[LV_UNEVICTABLE_PGS_SCANNED] = "unevictable_pgs_scanned",
	[LV_UNEVICTABLE_PGS_RESCUED] = "unevictable_pgs_rescued",
	[LV_UNEVICTABLE_PGS_STRANDED] = "unevictable_pgs_stranded",
	[LV_THP_FAULT_ALLOC] = "thp_fault_alloc",
	[LV_THP_FAULT_FALLBACK] = "thp_fault_fallback",
	[LV_THP_SPLIT_PAGE] = "thp_split_page",
	[LV_THP_SPLIT_PAGE_FAILED] = "thp_split_page_failed",
	[LV_COMPACT_STALL] = "compact_stall",
	[LV_COMPACT_SUCCESS] = "compact_success",
	[LV_COMPACT_FAIL] = "compact_fail",
	[LV_COMPACT_ISOLATED] = "compact_isolated",
	[LV_COMPACT_MIGRATE_SCANNED] = "compact_migrate_scanned",
	[LV_COMPACT_FREE_SCANNED] = "compact_free_scanned",
	[LV_COMPACT_DAEMON_WAKE] = "compact_daemon_wake",
	[LV_PSWPIN] = "pswpin",
	[LV_PSWPOUT] = "pswpout",
	[LV_NR_SWAPCACHE] = "nr_swapcached",
	[LV_NR_SWAP] = "nr_swap",
	[LV_SWAP_RA] = "swap_ra",
	[LV_SWAP_RA_HIT] = "swap_ra_hit",
	[LV_WORKINGSET_REFAULT_ANON] = "workingset_refault_anon",
	[LV_WORKINGSET_ACTIVATE_ANON] = "workingset_activate_anon",
	[LV_PGSCAN_ANON] = "pgscan_anon",
	[LV_PGSTEAL_ANON] = "pgsteal_anon",
	[LV_SWAP_WRITE_ERROR] = "swap_write_error",
	[LV_SWAP_READ_ERROR] = "swap_read_error",
	[LV_FILE_RA] = "file_ra",
};

const char *lv_lock_class_name(enum lv_lock_class cls)
{
	return (unsigned int)cls < LV_NR_LOCK_CLASSES ? class_names[cls] : "?";
}

const char *lv_stat_name(enum lv_stat_item item)
{
	return (unsigned int)item < LV_NR_STAT_ITEMS ? stat_names[item] : "?";
}

/* ---- lock statistics ---------------------------------------------------------------------- */

/*
 * Two kinds of locks. Fixed ones live as long as the machine (node, zone, CPU slots, the
 * machine's and the nodes' drain mutexes, the memcg mutex). Listed ones live in objects on lists
 * under the memcg tree mutex (lruvecs, memcgs' drain mutexes, open files, mms); an object that goes
 * away adds its lock's statistics to m->retired_lock_stats under that mutex, so a sum walks the
 * lists and adds the retired totals in one hold of it: an object retired in between would otherwise
 * be counted twice, or not at all.
 */
struct lock_walk {
	int cls; /* a class, or -1: every class */
	void (*fn)(struct lv_lock *, void *);
	void *arg;
};

static bool lock_class_listed(int cls)
{
	return cls == LV_LOCK_CLASS_LRUVEC || cls == LV_LOCK_CLASS_SHADOW ||
	       cls == LV_LOCK_CLASS_MAPPING || cls == LV_LOCK_CLASS_MM ||
	       cls == LV_LOCK_CLASS_DRAIN || cls == LV_LOCK_CLASS_SWAP || cls == LV_LOCK_CLASS_COST;
}

static void walk_lruvec_lock(struct lruvec *lruvec, void *arg)
{
	struct lock_walk *w = arg;

	if (lruvec->memcg && (w->cls < 0 || w->cls == LV_LOCK_CLASS_LRUVEC))
		w->fn(&lruvec->own_lock, w->arg);
	if (w->cls < 0 || w->cls == LV_LOCK_CLASS_SHADOW)
		w->fn(&lruvec->shadow_lock, w->arg);
	if (w->cls < 0 || w->cls == LV_LOCK_CLASS_COST)
		w->fn(&lruvec->cost_lock, w->arg);
	/* A memcg's drain mutex, once: with its first node's lruvec. */
	if (lruvec->memcg && lruvec == &lruvec->memcg->nodeinfo[0] &&
	    (w->cls < 0 || w->cls == LV_LOCK_CLASS_DRAIN))
		w->fn(&lruvec->memcg->drain.mutex, w->arg);
}

/* Context: m->memcg_mutex held. */
static void for_each_listed_lock(struct lv_machine *m, struct lock_walk *w)
{
	lockdep_assert_held(&m->memcg_mutex);
	if (w->cls < 0 || w->cls == LV_LOCK_CLASS_LRUVEC || w->cls == LV_LOCK_CLASS_SHADOW ||
	    w->cls == LV_LOCK_CLASS_DRAIN || w->cls == LV_LOCK_CLASS_COST)
		for_each_lruvec_locked(m, true, walk_lruvec_lock, w);
	if (w->cls < 0 || w->cls == LV_LOCK_CLASS_MAPPING)
		for_each_file_lock(m, w->fn, w->arg);
	if (w->cls < 0 || w->cls == LV_LOCK_CLASS_MM) {
		for_each_mm_lock(m, w->fn, w->arg);
		for_each_file_i_mmap_lock(m, w->fn, w->arg);
	}
	if (w->cls < 0 || w->cls == LV_LOCK_CLASS_SWAP)
		for_each_swap_lock(m, w->fn, w->arg);
}

static void for_each_fixed_lock(struct lv_machine *m, const struct lock_walk *w)
{
	int cls = w->cls;

	for (unsigned int nid = 0; nid < m->cfg.nr_nodes; nid++) {
		if (cls < 0 || cls == LV_LOCK_CLASS_NODE)
			w->fn(&m->nodes[nid]->lru_lock, w->arg);
		if (cls < 0 || cls == LV_LOCK_CLASS_ZONE)
			w->fn(&m->nodes[nid]->zone.lock, w->arg);
	}
	for (unsigned int s = 0; s < m->nr_slots; s++) {
		if (cls < 0 || cls == LV_LOCK_CLASS_SLOT)
			w->fn(&m->slots[s].lock, w->arg);
		for (unsigned int nid = 0; nid < m->cfg.nr_nodes; nid++)
			if (cls < 0 || cls == LV_LOCK_CLASS_PCP)
				w->fn(&m->pcp[s * m->cfg.nr_nodes + nid].lock, w->arg);
	}
	if (cls < 0 || cls == LV_LOCK_CLASS_DRAIN) {
		w->fn(&m->drain.mutex, w->arg);
		w->fn(&m->drop_drain.mutex, w->arg);
		for (unsigned int nid = 0; nid < m->cfg.nr_nodes; nid++)
			w->fn(&m->nodes[nid]->drain.mutex, w->arg);
	}
	if (cls < 0 || cls == LV_LOCK_CLASS_MEMCG)
		w->fn(&m->memcg_mutex, w->arg);
}

static void sum_lock(struct lv_lock *l, void *arg)
{
	lv_lock_stat_add(arg, l);
}

static void clear_lock(struct lv_lock *l, void *arg)
{
	(void)arg;
	lv_lock_stat_clear(l);
}

void lv_lock_stats(struct lv_machine *m, enum lv_lock_class cls, struct lv_lock_stat *out)
{
	struct lock_walk w = { cls, sum_lock, out };

	memset(out, 0, sizeof(*out));
	if ((unsigned int)cls >= LV_NR_LOCK_CLASSES)
		return;
	for_each_fixed_lock(m, &w);
	if (!lock_class_listed(cls))
		return;
	lv_lock_acquire(&m->memcg_mutex);
	for_each_listed_lock(m, &w);
	lv_lock_stat_merge(out, &m->retired_lock_stats[cls]);
	lv_lock_release(&m->memcg_mutex);
}

void lv_lock_stats_reset(struct lv_machine *m)
{
	struct lock_walk w = { -1, clear_lock, NULL };

	lv_lock_acquire(&m->memcg_mutex);
	/* Under the memcg mutex, whose statistics only its holder writes: ours are cleared too. */
	for_each_fixed_lock(m, &w);
	for_each_listed_lock(m, &w);
	memset(m->retired_lock_stats, 0, sizeof(m->retired_lock_stats));
	if (m->lock_sites)
		lock_sites_clear(m->lock_sites);
	/* Quiescent: no flush updates a slot's counts meanwhile. */
	for (unsigned int s = 0; s < m->nr_slots; s++)
		memset(&m->slots[s].stat, 0, sizeof(m->slots[s].stat));
	lv_lock_release(&m->memcg_mutex);
}

size_t lv_lock_sites(struct lv_machine *m, struct lv_lock_site_stat *out, size_t max)
{
	return m->lock_sites ? lock_sites_read(m->lock_sites, out, max) : 0;
}

void lv_lock_stats_print(struct lv_machine *m, FILE *out)
{
	struct lv_lock_stat stats[LV_NR_LOCK_CLASSES];

	/*
	 * The memcg class first: summing the listed classes takes the memcg mutex, and the row
	 * should not count this call's own acquisitions.
	 */
	lv_lock_stats(m, LV_LOCK_CLASS_MEMCG, &stats[LV_LOCK_CLASS_MEMCG]);
	for (int cls = 0; cls < LV_NR_LOCK_CLASSES; cls++)
		if (cls != LV_LOCK_CLASS_MEMCG)
			lv_lock_stats(m, cls, &stats[cls]);
	fprintf(out, "%20s %12s %12s %15s %17s %15s %15s\n", "Name", "acquired", "contended",
		"avg wait (ns)", "total wait (ns)", "max wait (ns)", "min wait (ns)");
	for (int cls = 0; cls < LV_NR_LOCK_CLASSES; cls++) {
		const struct lv_lock_stat s = stats[cls];

		if (!s.acquired)
			continue;
		fprintf(out, "%20s %12llu %12llu %15llu %17llu %15llu %15llu\n",
			lv_lock_class_name(cls), (unsigned long long)s.acquired,
			(unsigned long long)s.contended,
			(unsigned long long)(s.contended ? s.wait_total_ns / s.contended : 0),
			(unsigned long long)s.wait_total_ns, (unsigned long long)s.wait_max_ns,
			(unsigned long long)s.wait_min_ns);
	}
}

/* ---- vmstat ------------------------------------------------------------------------------- */

static const enum lru_event item_event[LV_NR_STAT_ITEMS] = {
	[LV_PGACTIVATE] = EV_PGACTIVATE,
	[LV_PGDEACTIVATE] = EV_PGDEACTIVATE,
	[LV_PGLAZYFREE] = EV_PGLAZYFREE,
	[LV_PGROTATED] = EV_PGROTATED,
	[LV_PGMOVED] = EV_PGMOVED,
	[LV_LOCK_RETRIES] = EV_LOCK_RETRIES,
	[LV_PGSCAN] = EV_PGSCAN,
	[LV_PGSTEAL] = EV_PGSTEAL,
	[LV_PGREFILL] = EV_PGREFILL,
	[LV_WORKINGSET_REFAULT] = EV_WORKINGSET_REFAULT,
	[LV_WORKINGSET_ACTIVATE] = EV_WORKINGSET_ACTIVATE,
	[LV_WORKINGSET_NODERECLAIM] = EV_WORKINGSET_NODERECLAIM,
	[LV_ALLOCSTALL] = EV_ALLOCSTALL,
	[LV_PGMIGRATE_SUCCESS] = EV_PGMIGRATE_SUCCESS,
	[LV_PGMIGRATE_FAIL] = EV_PGMIGRATE_FAIL,
	[LV_RECLAIM_SKIP_BUSY] = EV_RECLAIM_SKIP_BUSY,
	[LV_RECLAIM_DRAIN] = EV_RECLAIM_DRAIN,
	[LV_PAGEOUTRUN] = EV_PAGEOUTRUN,
	[LV_PGPGIN] = EV_PGPGIN,
	[LV_NR_MLOCK] = EV_NR_MLOCK,
	[LV_UNEVICTABLE_PGS_MLOCKED] = EV_UNEVICTABLE_PGS_MLOCKED,
	[LV_UNEVICTABLE_PGS_MUNLOCKED] = EV_UNEVICTABLE_PGS_MUNLOCKED,
	[LV_UNEVICTABLE_PGS_CULLED] = EV_UNEVICTABLE_PGS_CULLED,
	[LV_UNEVICTABLE_PGS_SCANNED] = EV_UNEVICTABLE_PGS_SCANNED,
	[LV_UNEVICTABLE_PGS_RESCUED] = EV_UNEVICTABLE_PGS_RESCUED,
	[LV_UNEVICTABLE_PGS_STRANDED] = EV_UNEVICTABLE_PGS_STRANDED,
	[LV_THP_FAULT_ALLOC] = EV_THP_FAULT_ALLOC,
	[LV_THP_FAULT_FALLBACK] = EV_THP_FAULT_FALLBACK,
	[LV_THP_SPLIT_PAGE] = EV_THP_SPLIT_PAGE,
	[LV_THP_SPLIT_PAGE_FAILED] = EV_THP_SPLIT_PAGE_FAILED,
	[LV_PSWPIN] = EV_PSWPIN,
	[LV_PSWPOUT] = EV_PSWPOUT,
	[LV_SWAP_RA] = EV_SWAP_RA,
	[LV_SWAP_RA_HIT] = EV_SWAP_RA_HIT,
	[LV_WORKINGSET_REFAULT_ANON] = EV_WORKINGSET_REFAULT_ANON,
	[LV_WORKINGSET_ACTIVATE_ANON] = EV_WORKINGSET_ACTIVATE_ANON,
	[LV_PGSCAN_ANON] = EV_PGSCAN_ANON,
	[LV_PGSTEAL_ANON] = EV_PGSTEAL_ANON,
	[LV_SWAP_WRITE_ERROR] = EV_SWAP_WRITE_ERROR,
	[LV_SWAP_READ_ERROR] = EV_SWAP_READ_ERROR,
	[LV_FILE_RA] = EV_FILE_RA,
};

/* Items kept in the lruvecs' event counters (EV_NR_MLOCK is a count kept the same way). */
static bool item_is_event(enum lv_stat_item item)
{
	return (item >= LV_PGACTIVATE && item <= LV_ALLOCSTALL) || item == LV_PGMIGRATE_SUCCESS ||
	       item == LV_PGMIGRATE_FAIL || item == LV_RECLAIM_SKIP_BUSY ||
	       item == LV_RECLAIM_DRAIN || item == LV_PAGEOUTRUN || item == LV_PGPGIN ||
	       (item >= LV_NR_MLOCK && item <= LV_THP_SPLIT_PAGE_FAILED) ||
	       (item >= LV_PSWPIN && item <= LV_FILE_RA && item != LV_NR_SWAP &&
		item != LV_NR_SWAPCACHE);
}

/* lruvec_stat - an item that lives in one lruvec (list sizes, isolated, events). */
static uint64_t lruvec_stat(struct lruvec *lruvec, enum lv_stat_item item)
{
	if (item <= LV_NR_UNEVICTABLE)
		return READ_ONCE(lruvec->lru_size[item - LV_NR_INACTIVE_ANON]);
	if (item == LV_NR_ISOLATED)
		return (uint64_t)lruvec_nr_isolated(lruvec);
	if (item == LV_NR_MLOCK)
		return (uint64_t)lruvec_nr_mlock(lruvec);
	if (item == LV_WORKINGSET_NODES)
		return READ_ONCE(lruvec->nr_shadow_nodes);
	if (item_is_event(item))
		return lruvec_event(lruvec, item_event[item]);
	return 0;
}

struct node_sum {
	int nid;
	enum lv_stat_item item;
	uint64_t sum;
};

static void sum_node_lruvec(struct lruvec *lruvec, void *arg)
{
	struct node_sum *ns = arg;

	if (lruvec->pgdat->node_id == ns->nid)
		ns->sum += lruvec_stat(lruvec, ns->item);
}

uint64_t lv_node_stat(struct lv_machine *m, int nid, enum lv_stat_item item)
{
	struct node_sum ns = { nid, item, 0 };
	struct pglist_data *pgdat;

	if (!node_valid(m, nid) || (unsigned int)item >= LV_NR_STAT_ITEMS)
		return 0;
	pgdat = m->nodes[nid];
	switch (item) {
	case LV_NR_CHARGED:
		return pgdat->nr_pages - node_free_pages(pgdat);
	case LV_NR_FREE:
		return node_free_pages(pgdat);
	case LV_WMARK_MIN:
	case LV_WMARK_LOW:
	case LV_WMARK_HIGH:
		return pgdat->zone.watermark[item - LV_WMARK_MIN];
	case LV_NR_FILE_PAGES:
		return __atomic_load_n(&pgdat->nr_file_pages, __ATOMIC_RELAXED);
	case LV_NR_SWAPCACHE:
		return __atomic_load_n(&pgdat->nr_swapcache, __ATOMIC_RELAXED);
	case LV_NR_SWAP:
		/* Slots belong to no node: node 0 reports them all, so that a sum is right. */
		return nid ? 0 : (uint64_t)swap_inuse_pages(m);
	case LV_COMPACT_STALL ... LV_COMPACT_DAEMON_WAKE:
		return __atomic_load_n(&pgdat->compact_events[item - LV_COMPACT_STALL],
				       __ATOMIC_RELAXED);
	default:
		break;
	}
	/* One hold: a removed memcg folds its counts into the retired ones when it is freed. */
	lv_lock_acquire(&m->memcg_mutex);
	for_each_lruvec_locked(m, true, sum_node_lruvec, &ns);
	if (item_is_event(item))
		ns.sum += pgdat->retired_events[item_event[item]];
	lv_lock_release(&m->memcg_mutex);
	return ns.sum;
}

uint64_t lv_memcg_stat(struct lv_memcg *memcg, enum lv_stat_item item)
{
	uint64_t sum = 0;

	if ((unsigned int)item >= LV_NR_STAT_ITEMS)
		return 0;
	if (item == LV_NR_CHARGED)
		return lv_memcg_usage(memcg);
	if (item == LV_NR_SWAP)
		return lv_memcg_swap_usage(memcg);
	/* A caller's handle: a concurrent removal frees it only after this section. */
	rcu_read_lock();
	memcg_handle_hook_call(memcg);
	for (unsigned int nid = 0; nid < memcg->machine->cfg.nr_nodes; nid++)
		sum += lruvec_stat(&memcg->nodeinfo[nid], item);
	rcu_read_unlock();
	return sum;
}

/* ---- folio accessors ---------------------------------------------------------------------- */

int lv_folio_ref_count(const struct lv_folio *folio)
{
	return folio_ref_count(folio);
}

int lv_folio_nid(const struct lv_folio *folio)
{
	return folio_nid(folio);
}

unsigned int lv_folio_nr_pages(const struct lv_folio *folio)
{
	return 1u << folio_order(folio);
}

bool lv_folio_test(const struct lv_folio *folio, enum lv_folio_flag flag)
{
	return (unsigned int)flag < LV_NR_FOLIO_FLAGS && folio_test(folio, (int)flag);
}

int lv_folio_set_state(struct lv_folio *folio, enum lv_folio_flag flag, bool on)
{
	switch (flag) {
	case LV_PG_MLOCKED:
		/* Evictability is decided at add time; it may not change under a linked folio. */
		if (folio_test(folio, PG_lru_claimed))
			return -EBUSY;
		break;
	case LV_PG_DIRTY:
	case LV_PG_WRITEBACK:
	case LV_PG_MAPPED:
		break;
	default:
		return -EINVAL;
	}
	if (flag == LV_PG_MLOCKED) {
		/*
		 * On no LRU and not queued, the folio is its caller's, so NR_MLOCK is counted on
		 * the obj_cgroup it carries without the lock (mlock.c, "The bit and the count").
		 * Isolated, it is munlocked off the LRU: stranded, as the kernel says.
		 */
		long nr = folio_nr_pages(folio);

		if (on && !folio_test_set_mlocked(folio)) {
			folio_mlock_count(folio, nr);
			folio_count_event(folio, EV_UNEVICTABLE_PGS_MLOCKED, nr);
		} else if (!on && folio_test_clear_mlocked(folio)) {
			folio_mlock_count(folio, -nr);
			folio_count_event(folio,
					  folio_test_isolated(folio) ? EV_UNEVICTABLE_PGS_STRANDED
								     : EV_UNEVICTABLE_PGS_MUNLOCKED,
					  nr);
		}
		return 0;
	}
	if (on)
		folio_set(folio, (int)flag);
	else
		folio_clear(folio, (int)flag);
	return 0;
}
