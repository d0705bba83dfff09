// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Memory cgroups: the tree, hierarchical page counters, and the folio → lruvec protocol.
 *
 * Theory of operation.
 *
 * A folio's lruvec is a function of (node, memcg). The node never changes; the memcg
 * (folio_memcg(): the memcg the folio's obj_cgroup points at) changes when
 * lv_folio_move_memcg() rebinds the folio to another obj_cgroup, and when the removal of its
 * memcg re-points the obj_cgroup at the parent (reparenting, below). A thread that computed a
 * folio's lruvec and then took that lruvec's lock could therefore hold the wrong lock. Two
 * mechanisms close that race, as in Linux 5.11 plus the 7.1 reparenting (docs/protocol.md §3):
 *
 *  1. The PG_lru pin. Anyone who moves an on-LRU folio first wins folio_test_clear_lru(), after
 *     taking a reference. A charge move must isolate the folio (win the same pin), so the
 *     obj_cgroup of an isolated folio is stable for its owner; its memcg is not: reparenting
 *     re-points obj_cgroups whoever holds their folios, and a pin owner that has not yet
 *     locked is then saved by mechanism 2.
 *
 *  2. Lookup, lock, re-check (folio_lruvec_lock()). Under RCU, read folio_memcg(), take that
 *     lruvec's lock, and read it again; on a mismatch unlock and retry. Both writers hold the
 *     lock of the folio's *current* (old) lruvec (reparenting the new one's too), so a thread
 *     that holds lruvec L and sees the folio bound to L's memcg knows it cannot change until
 *     it unlocks. RCU keeps a memcg freed by a concurrent lv_memcg_remove() readable until
 *     the re-check has failed; once it succeeds, the lock keeps the memcg alive (a memcg is
 *     freed only after every node of it was reparented, which needs that lock), so RCU is
 *     dropped.
 *
 * With memcg disabled every folio's memcg is NULL and every lruvec is a node's __lruvec, so
 * the re-check compares NULL with NULL and the loop ends (hazard 9, docs/protocol.md §9.1). In
 * the node-lock design the lruvecs of one node share the node's lock; the re-check is the
 * same, and the batch relock compares locks, not lruvecs, so the baseline keeps its batching.
 *
 * Page counters. Each non-root memcg counts its own and its descendants' pages; the root is
 * not counted (like the kernel, so that tenants do not all bounce one cache line). A charge
 * adds along the path to the root and backs out if any level goes over its limit.
 *
 * Removal. A memcg with children or address spaces cannot be removed (-EBUSY), like a
 * cgroup with children or tasks. Its folios can: removal marks it dying, so that no new charge
 * succeeds, applies its requests queued in CPU batches (lru_add_drain_scope()), and then
 * reparents (memcg_reparent_folios()), one node at a time under that node's child and parent
 * lruvec locks: every obj_cgroup listed on the child's lruvec is re-pointed at the parent and
 * moved to its list, and the child's lists, sizes and costs are spliced onto the parent's
 * tails. No folio is touched and none is waited for: linked, queued, isolated and in-flight
 * folios all follow their obj_cgroup. The charge needs no move: the parent's counters already
 * count it, uncharging goes through the obj_cgroup to the memcg it points at now, and the
 * child's own counter is dead with it. The counts a folio carries off the lists (NR_MLOCK,
 * the isolated pages) live in the obj_cgroup, so they move with it. A charger adds to ->usage
 * and then reads ->dying, and fails with -ENOENT if it is set; one that read it just before
 * binds its folio to the child's obj_cgroup, which the reparenting carries to the parent like
 * any other. The
 * lists of shadow-only page cache nodes move to the parent's lruvecs (filemap.c), which are then
 * shrunk to their limit. The memory is freed by call_rcu(); an obj_cgroup lives on until its
 * last folio lets go (objcg_release()). Historical note: the 5.x design rebound folio by
 * folio, walked the descriptors for unevictable ones and waited for folios in transit; a
 * caller holding one folio off the LRU could make a removal fail.
 *
 * Handles. A caller's memcg pointer is outside any RCU read-side section: the caller found it
 * in no RCU-protected structure, so a grace period protects it only from the moment a call
 * enters a section of its own. Every public call that takes a memcg therefore enters one (or
 * holds a reference) before its first read of the memcg and keeps it until its last:
 * read-only calls hold RCU's read lock around their reads; calls that block (charging,
 * reclaim, page cache reads) take a reference inside that section before they block
 * (struct memcg_guard, css_tryget()), as the kernel's css_tryget() under rcu_read_lock().
 * The removal's last step queues the drop of the tree's reference behind a grace period, and
 * the memory goes a grace period after the last reference: so every call that entered before
 * the removal returned has finished with the memcg, or holds its own reference, when it is
 * freed. A call that enters after the return cannot be told from one that entered just
 * before it; the rule that no call may start after a successful removal is the caller's
 * (lv_memcg_remove() in lruvec.h, docs/locking.md "Handle lifetimes").
 */
#include "internal.h"
#include "mm_inline.h"
#include "swap.h"

#include <limits.h>
#include <string.h>
#include <unistd.h>

static void memcg_free(struct lv_memcg *memcg);
static void objcg_put_many(struct obj_cgroup *objcg, long nr);

/* ---- the tree ----------------------------------------------------------------------------- */

static struct lv_memcg *memcg_alloc(struct lv_machine *m, struct lv_memcg *parent, const char *name)
{
	size_t size = sizeof(struct lv_memcg) + m->cfg.nr_nodes * sizeof(struct lruvec);
	struct lv_memcg *memcg = aligned_alloc(64, (size + 63) & ~(size_t)63);

	if (!memcg)
		return NULL;
	memset(memcg, 0, sizeof(*memcg));
	memcg->machine = m;
	memcg->parent = parent;
	memcg->max = LONG_MAX;
	memcg->swap_max = LONG_MAX;
	memcg->swappiness = -1;
	memcg->refcnt = 1; /* the tree's */
	INIT_LIST_HEAD(&memcg->children);
	INIT_LIST_HEAD(&memcg->sibling);
	INIT_LIST_HEAD(&memcg->dying_list);
	snprintf(memcg->name, sizeof(memcg->name), "%s", name ? name : "");
	drain_gate_init(m, &memcg->drain);
	for (unsigned int nid = 0; nid < m->cfg.nr_nodes; nid++)
		lruvec_init(&memcg->nodeinfo[nid], m->nodes[nid], memcg);
	for (unsigned int nid = 0; nid < m->cfg.nr_nodes; nid++) {
		struct lruvec *lruvec = &memcg->nodeinfo[nid];
		struct obj_cgroup *objcg = aligned_alloc(64, sizeof(*objcg));

		if (objcg)
			memset(objcg, 0, sizeof(*objcg));
		if (!objcg) {
			memcg_free(memcg);
			return NULL;
		}
		objcg->memcg = memcg;
		objcg->refcnt = 1; /* the memcg's, dropped when it is freed */
		objcg->nid = nid;
		list_add(&objcg->list, &lruvec->objcg_list);
		lruvec->nr_objcgs = 1;
		lruvec->objcg = objcg;
	}
	return memcg;
}

/*
 * memcg_free - free @memcg's memory; its own obj_cgroups only if @objcgs (the whole machine is
 * going: then every obj_cgroup still listed anywhere is freed with the lruvec listing it).
 */
static void memcg_free_objcgs(struct lv_memcg *memcg, bool objcgs)
{
	for (unsigned int nid = 0; nid < memcg->machine->cfg.nr_nodes; nid++) {
		struct lruvec *lruvec = &memcg->nodeinfo[nid];

		while (objcgs && !list_empty(&lruvec->objcg_list)) {
			struct obj_cgroup *objcg =
				list_first_entry(&lruvec->objcg_list, struct obj_cgroup, list);

			list_del(&objcg->list);
			free(objcg);
		}
	}
	for (unsigned int nid = 0; nid < memcg->machine->cfg.nr_nodes; nid++) {
		lv_lock_destroy(&memcg->nodeinfo[nid].own_lock);
		lv_lock_destroy(&memcg->nodeinfo[nid].shadow_lock);
		lv_lock_destroy(&memcg->nodeinfo[nid].cost_lock);
	}
	lv_lock_destroy(&memcg->drain.mutex);
	free(memcg);
}

static void memcg_free(struct lv_memcg *memcg)
{
	memcg_free_objcgs(memcg, true);
}

#ifdef LV_TSAN
char lv_rcu_tsan_sync;
#endif

/*
 * memcg_retire_stats - fold a removed memcg's event counts and lock statistics into the
 * machine's, so that totals survive it. Called when it is freed, not when it is removed: until
 * a grace period after its last reference, a thread that looked one of its lruvecs up before
 * the removal may still lock it (a stale folio->memcg, then a re-check) or count an event on
 * it (a charge in flight, a refault); until then it stays on machine->dying_memcgs, which
 * the statistics walk with the live tree (for_each_lruvec()).
 * Context: memcg tree mutex; nobody can reach @memcg any more.
 */
static void memcg_retire_stats(struct lv_memcg *memcg)
{
	struct lv_machine *m = memcg->machine;

	lockdep_assert_held(&m->memcg_mutex);
	for (unsigned int nid = 0; nid < m->cfg.nr_nodes; nid++) {
		struct lruvec *lruvec = &memcg->nodeinfo[nid];
		struct pglist_data *pgdat = lruvec->pgdat;

		for (int ev = 0; ev < NR_LRU_EVENTS; ev++)
			pgdat->retired_events[ev] += lruvec_event(lruvec, ev);
		lv_lock_stat_add(&m->retired_lock_stats[LV_LOCK_CLASS_LRUVEC], &lruvec->own_lock);
		lv_lock_stat_add(&m->retired_lock_stats[LV_LOCK_CLASS_SHADOW],
				 &lruvec->shadow_lock);
		lv_lock_stat_add(&m->retired_lock_stats[LV_LOCK_CLASS_COST], &lruvec->cost_lock);
	}
	lv_lock_stat_add(&m->retired_lock_stats[LV_LOCK_CLASS_DRAIN], &memcg->drain.mutex);
}

/*
 * A memcg pins its parent (css_get at creation), so that anyone holding a reference on a memcg
 * may walk its ancestors. The last put of a removed memcg frees it after a grace period and
 * then drops that parent reference, which may free the parent in turn.
 */
static void memcg_rcu_free(struct rcu_head *head)
{
	struct lv_memcg *memcg = container_of(head, struct lv_memcg, rcu);
	struct lv_memcg *parent = memcg->parent;
	struct lv_machine *m = memcg->machine;

	rcu_free_begin();
	lv_lock_acquire(&m->memcg_mutex);
	list_del(&memcg->dying_list);
	memcg_retire_stats(memcg);
	lv_lock_release(&m->memcg_mutex);
	/* Its obj_cgroups point at an ancestor now, and live on while folios are bound to them. */
	for (unsigned int nid = 0; nid < m->cfg.nr_nodes; nid++)
		objcg_put_many(memcg->nodeinfo[nid].objcg, 1);
	memcg_free_objcgs(memcg, false);
	if (parent)
		css_put(parent);
	__atomic_fetch_sub(&m->memcgs_freeing, 1, __ATOMIC_RELEASE);
	rcu_free_end();
}

int mem_cgroup_init(struct lv_machine *m)
{
	if (mem_cgroup_disabled(m))
		return 0;
	m->memcg_ids = calloc(MEMCG_MAX_IDS, sizeof(*m->memcg_ids));
	m->root = memcg_alloc(m, NULL, "root");
	if (!m->memcg_ids || !m->root)
		return -ENOMEM;
	m->root->id = 1;
	m->memcg_ids[1] = m->root;
	m->next_memcg_id = 2;
	return 0;
}

/*
 * memcg_id_alloc - give @memcg a free id, cycling so that an id is reused as late as
 * possible (a stale shadow entry then names a memcg that no longer exists, not a new one).
 * Return: 0, or -ENOSPC when all 65535 ids are in use.
 */
static int memcg_id_alloc(struct lv_machine *m, struct lv_memcg *memcg)
{
	lockdep_assert_held(&m->memcg_mutex);
	for (unsigned int n = 0; n < MEMCG_MAX_IDS; n++) {
		unsigned int id = m->next_memcg_id;

		m->next_memcg_id = id + 1 < MEMCG_MAX_IDS ? id + 1 : 1;
		if (!m->memcg_ids[id]) {
			memcg->id = id;
			rcu_assign_pointer_lv(m->memcg_ids[id], memcg);
			return 0;
		}
	}
	return -ENOSPC;
}

/* mem_cgroup_from_id - the memcg with @id, or NULL. Context: RCU read side. */
struct lv_memcg *mem_cgroup_from_id(struct lv_machine *m, unsigned int id)
{
	if (!id || id >= MEMCG_MAX_IDS)
		return NULL;
	return rcu_dereference_lv(m->memcg_ids[id]);
}

void css_get(struct lv_memcg *memcg)
{
	__atomic_fetch_add(&memcg->refcnt, 1, __ATOMIC_RELAXED);
}

/* The tree's reference, dropped a grace period after removal (see lv_memcg_remove()). */
static void memcg_put_rcu(struct rcu_head *head)
{
	struct lv_memcg *memcg = container_of(head, struct lv_memcg, rcu_put);
	struct lv_machine *m;

	rcu_free_begin();
	m = memcg->machine; /* after rcu_free_begin(): TSan sees the grace period from here */
	css_put(memcg);
	__atomic_fetch_sub(&m->memcgs_freeing, 1, __ATOMIC_RELEASE);
	rcu_free_end();
}

/* css_put - drop a reference; the last one frees the memcg after a grace period. */
void css_put(struct lv_memcg *memcg)
{
	if (__atomic_sub_fetch(&memcg->refcnt, 1, __ATOMIC_ACQ_REL) == 0) {
		__atomic_fetch_add(&memcg->machine->memcgs_freeing, 1, __ATOMIC_RELAXED);
		call_rcu_lv(&memcg->rcu, memcg_rcu_free);
	}
}

/* css_tryget - a reference unless the memcg is already on its way to being freed. */
bool css_tryget(struct lv_memcg *memcg)
{
	long c = __atomic_load_n(&memcg->refcnt, __ATOMIC_RELAXED);

	do {
		if (c <= 0)
			return false;
	} while (!__atomic_compare_exchange_n(&memcg->refcnt, &c, c + 1, true, __ATOMIC_ACQUIRE,
					      __ATOMIC_RELAXED));
	return true;
}

/* ---- callers' handles ("Handles" at the top) ------------------------------------------------- */

#ifdef LV_DEBUG
void (*memcg_handle_hook)(const struct lv_memcg *memcg);
void (*memcg_remove_hook)(struct lv_memcg *memcg, int err);
#endif

/* memcg_is_root - whether @memcg is the root (NULL stands for it). Context: RCU or a reference. */
static bool memcg_is_root(const struct lv_memcg *memcg)
{
	return !memcg || !memcg->parent;
}

/**
 * memcg_guard_enter - start protecting the handle @memcg (NULL: the root) for one call: from
 * here until memcg_guard_exit() a removal of @memcg that had not returned when we entered
 * cannot free it.
 * Context: before the call's first read of @memcg; enters an RCU read-side section.
 */
void memcg_guard_enter(struct memcg_guard *g, struct lv_memcg *memcg)
{
	rcu_read_lock();
	g->memcg = memcg;
	g->pinned = false;
	memcg_handle_hook_call(memcg);
}

/**
 * memcg_guard_pin - before the call blocks: trade the read-side section for a reference (the
 * root needs none: it lives as long as the machine). Idempotent.
 * Return: true, the read-side section left (the reference protects from here on); false if
 * the memcg is already on its way to being freed, which only a call made after its removal
 * returned can see (the call should fail with -ENOENT), still inside the section.
 * Context: inside the guard.
 */
bool memcg_guard_pin(struct memcg_guard *g)
{
	if (g->pinned)
		return true;
	if (!memcg_is_root(g->memcg) && !css_tryget(g->memcg))
		return false;
	g->pinned = true;
	rcu_read_unlock();
	return true;
}

/* memcg_guard_exit - end the protection begun by memcg_guard_enter(). */
void memcg_guard_exit(struct memcg_guard *g)
{
	if (!g->pinned)
		rcu_read_unlock();
	else if (!memcg_is_root(g->memcg))
		css_put(g->memcg);
}

struct snapshot {
	struct lv_memcg **memcgs;
	size_t nr, cap;
};

/* Context: RCU read side. Memcgs freed meanwhile fail css_tryget() and are left out. */
static void snapshot_add(struct lv_memcg *memcg, struct snapshot *s)
{
	struct list_head *pos;

	if (s->nr == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		struct lv_memcg **p = realloc(s->memcgs, cap * sizeof(*p));

		if (!p)
			return; /* reclaim works with the memcgs it has */
		s->memcgs = p;
		s->cap = cap;
	}
	if (!css_tryget(memcg))
		return;
	s->memcgs[s->nr++] = memcg;
	list_for_each_rcu (pos, &memcg->children)
		snapshot_add(list_entry(pos, struct lv_memcg, sibling), s);
}

/**
 * mem_cgroup_snapshot - @top and its descendants, pre-order, each with a reference, so that
 * reclaim can walk them while memcgs come and go (the kernel's mem_cgroup_iter). The tree is
 * walked under RCU, not the tree mutex: reclaim in one tenant never waits for another's
 * cgroup creation or removal.
 * Return: a malloc'd array (release with mem_cgroup_snapshot_put()), or NULL (also when @top
 * is already on its way to being freed).
 * Context: @top is alive: the caller holds a reference or a charge on it, or is in an RCU
 * read-side section that began before @top's removal returned.
 */
struct lv_memcg **mem_cgroup_snapshot(struct lv_memcg *top, size_t *nr)
{
	struct snapshot s = { 0 };

	rcu_read_lock();
	snapshot_add(top, &s);
	rcu_read_unlock();
	*nr = s.nr;
	if (!s.nr) {
		free(s.memcgs);
		return NULL;
	}
	return s.memcgs;
}

/*
 * find_next_level - from bit @*bit of @pgdat's size level maps on, wrapping, the first memcg
 * of size level @level or more: its map read a word at a time, the words that are zero
 * skipped through the map's summary, 64 at a time. Return: how many bits come before it,
 * @*bit set to it; @left when there is none among the next @left.
 */
static unsigned int find_next_level(struct pglist_data *pgdat, unsigned int level,
				    unsigned int *bit, unsigned int left)
{
	const unsigned long *map = memcg_level_map(pgdat, level);
	const unsigned long *sum = memcg_level_summary(pgdat, level);
	unsigned int n = 0, i = *bit;

	while (n < left) {
		unsigned long word = __atomic_load_n(&map[i / 64], __ATOMIC_RELAXED) >> (i % 64);
		unsigned int w, skip = 0;

		if (word) {
			unsigned int d = (unsigned int)__builtin_ctzl(word);

			if (n + d >= left)
				break;
			*bit = i + d;
			return n + d;
		}
		n += 64 - i % 64;
		/* The next word the summary says is not zero, at most a round away. */
		w = (i / 64 + 1) % MEMCG_LEVEL_WORDS;
		while (skip < MEMCG_LEVEL_WORDS) {
			unsigned long s =
				__atomic_load_n(&sum[w / 64], __ATOMIC_RELAXED) >> (w % 64);

			if (s) {
				skip += (unsigned int)__builtin_ctzl(s);
				break;
			}
			skip += 64 - w % 64;
			w = (w + 64 - w % 64) % MEMCG_LEVEL_WORDS;
		}
		n += 64 * skip;
		i = (i / 64 + 1 + skip) % MEMCG_LEVEL_WORDS * 64;
	}
	return left;
}

/**
 * mem_cgroup_reclaim_next - the next memcg @pgdat's global reclaim visits, with a reference:
 * the kernel's shared reclaim cookie (mem_cgroup_iter() with a cookie). Every reclaimer of the
 * node moves the one position on, so a call takes the walk up where the last one stopped
 * instead of starting it over, and concurrent calls visit different memcgs. The position is a
 * bit of the node's size level maps, which stands for a memcg id (memcg_level_id()): the walk
 * reads those maps and the id array (written under the memcg mutex, read under RCU), none of
 * the tree's pointers, which a removal unlinks, and visits every memcg alike.
 * @level: the size level a memcg's lruvec on @pgdat needs to be visited (vmscan.c, "Many
 * memcgs"): the ones below it have nothing to scan at this priority and are passed over
 * (find_next_level()).
 * @left: the positions still to look at in the caller's round (MEMCG_MAX_IDS at its start:
 * every memcg once, unless concurrent callers took some), decremented per position passed.
 * Return: a memcg to css_put() after the visit, or NULL when the round is over.
 * Context: any; takes no lock.
 */
struct lv_memcg *mem_cgroup_reclaim_next(struct pglist_data *pgdat, unsigned int level,
					 unsigned int *left)
{
	struct lv_memcg *memcg = NULL;

	rcu_read_lock();
	while (*left && !memcg) {
		unsigned int pos = __atomic_load_n(&pgdat->reclaim_pos, __ATOMIC_RELAXED);
		unsigned int bit = pos % MEMCG_MAX_IDS;
		unsigned int n = find_next_level(pgdat, level, &bit, *left);

		if (n == *left) {
			*left = 0; /* the rest of the round has nothing at this level */
			break;
		}
		/* Taken by another reclaimer meanwhile: look again from where it left off. */
		if (!__atomic_compare_exchange_n(&pgdat->reclaim_pos, &pos, pos + n + 1, false,
						 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			continue;
		*left -= n + 1;
		memcg = mem_cgroup_from_id(pgdat->machine, memcg_level_id(bit));
		/* Read before a removal cleared the id, and freed since: nothing to reclaim. */
		if (memcg && !css_tryget(memcg))
			memcg = NULL;
	}
	rcu_read_unlock();
	return memcg;
}

void mem_cgroup_snapshot_put(struct lv_memcg **memcgs, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		css_put(memcgs[i]);
	free(memcgs);
}

/* mem_cgroup_exit - free the whole tree; the machine is being destroyed, nobody looks. */
static void memcg_free_tree(struct lv_memcg *memcg)
{
	while (!list_empty(&memcg->children)) {
		struct lv_memcg *child =
			list_first_entry(&memcg->children, struct lv_memcg, sibling);

		list_del(&child->sibling);
		memcg_free_tree(child);
	}
	memcg_free(memcg);
}

void mem_cgroup_exit(struct lv_machine *m)
{
	if (m->root)
		memcg_free_tree(m->root);
	m->root = NULL;
	free(m->memcg_ids);
	m->memcg_ids = NULL;
}

struct lv_memcg *lv_memcg_root(struct lv_machine *m)
{
	return m->root;
}

struct lv_memcg *lv_memcg_create(struct lv_machine *m, struct lv_memcg *parent, const char *name)
{
	struct memcg_guard guard;
	struct lv_memcg *memcg;
	int err = 0;

	if (!m || mem_cgroup_disabled(m)) {
		errno = EINVAL;
		return NULL;
	}
	memcg_guard_enter(&guard, parent);
	if (parent && parent->machine != m)
		err = EINVAL;
	else if (!memcg_guard_pin(&guard))
		err = EINVAL; /* removed: its tree reference is gone */
	if (err) {
		memcg_guard_exit(&guard);
		errno = err;
		return NULL;
	}
	if (!parent)
		parent = m->root;
	memcg = memcg_alloc(m, parent, name);
	if (!memcg) {
		err = ENOMEM;
		goto out;
	}
	lv_lock_acquire(&m->memcg_mutex);
	if (__atomic_load_n(&parent->dying, __ATOMIC_SEQ_CST))
		err = EINVAL;
	else if (memcg_id_alloc(m, memcg))
		err = ENOSPC;
	if (err) {
		lv_lock_release(&m->memcg_mutex);
		memcg_free(memcg);
		memcg = NULL;
		goto out;
	}
	css_get(parent); /* the child's, dropped when the child is freed */
	list_add_tail_rcu(&memcg->sibling, &parent->children);
	lv_lock_release(&m->memcg_mutex);
out:
	memcg_guard_exit(&guard);
	if (err)
		errno = err;
	return memcg;
}

static void page_counter_uncharge(struct lv_memcg *memcg, struct lv_memcg *stop, long nr);

/* ---- obj_cgroups ------------------------------------------------------------------------------
 */

/*
 * objcg_release - the last reference went a grace period ago: take the obj_cgroup off the list
 * of the lruvec its memcg's node has (looked up, locked and re-checked, since a reparenting
 * may move it meanwhile), and free it. Nothing points at it any more, and every reader that
 * found it through a folio before that folio let go has left its read-side section.
 */
static void objcg_release(struct rcu_head *head)
{
	struct obj_cgroup *objcg = container_of(head, struct obj_cgroup, rcu);
	struct lv_machine *m;
	struct lruvec *lruvec;

	rcu_free_begin();
	rcu_read_lock();
	for (;;) {
		struct lv_memcg *memcg = __atomic_load_n(&objcg->memcg, __ATOMIC_ACQUIRE);

		lruvec = &memcg->nodeinfo[objcg->nid];
		lv_lock_acquire(lruvec->lru_lock);
		if (__atomic_load_n(&objcg->memcg, __ATOMIC_RELAXED) == memcg)
			break;
		lv_lock_release(lruvec->lru_lock);
	}
	m = lruvec->memcg->machine;
	list_del(&objcg->list);
	WRITE_ONCE(lruvec->nr_objcgs, lruvec->nr_objcgs - 1);
	lv_lock_release(lruvec->lru_lock);
	rcu_read_unlock();
	free(objcg);
	__atomic_fetch_sub(&m->memcgs_freeing, 1, __ATOMIC_RELEASE);
	rcu_free_end();
}

static void objcg_put_many(struct obj_cgroup *objcg, long nr)
{
	if (__atomic_sub_fetch(&objcg->refcnt, nr, __ATOMIC_ACQ_REL) == 0) {
		struct lv_memcg *memcg;

		/* Its memcg (or an ancestor it was re-pointed at) is alive: it lists the objcg. */
		rcu_read_lock();
		memcg = __atomic_load_n(&objcg->memcg, __ATOMIC_ACQUIRE);
		__atomic_fetch_add(&memcg->machine->memcgs_freeing, 1, __ATOMIC_RELAXED);
		rcu_read_unlock();
		call_rcu_lv(&objcg->rcu, objcg_release);
	}
}

void folio_bind_memcg(struct lv_folio *folio, struct lv_memcg *memcg)
{
	struct obj_cgroup *objcg = memcg ? memcg->nodeinfo[folio_nid(folio)].objcg : NULL;

	if (objcg)
		__atomic_fetch_add(&objcg->refcnt, 1, __ATOMIC_RELAXED);
	/* Released: the descriptors are read racily (compaction's scanner, under RCU). */
	__atomic_store_n(&folio->objcg, objcg, __ATOMIC_RELEASE);
}

void folio_unbind(struct lv_folio *folio)
{
	struct obj_cgroup *objcg = folio->objcg;

	WRITE_ONCE(folio->objcg, NULL);
	if (objcg)
		objcg_put_many(objcg, 1);
}

void objcg_uncharge_put(struct obj_cgroup *objcg, long nr_pages, long nr_folios)
{
	/* The charge is counted from the memcg the objcg points at now up (removed ones gone). */
	rcu_read_lock();
	page_counter_uncharge(__atomic_load_n(&objcg->memcg, __ATOMIC_ACQUIRE), NULL, nr_pages);
	rcu_read_unlock();
	objcg_put_many(objcg, nr_folios);
}

void folio_count_event(struct lv_folio *folio, enum lru_event ev, long nr)
{
	rcu_read_lock();
	lruvec_count_event_atomic(mem_cgroup_lruvec(folio_memcg(folio), folio->pgdat), ev, nr);
	rcu_read_unlock();
}

struct lv_memcg *get_mem_cgroup_from_folio(struct lv_folio *folio)
{
	struct lv_memcg *memcg;

	rcu_read_lock();
	do {
		memcg = folio_memcg(folio);
		/* Failing only while a removal re-points it: the next read finds the parent. */
	} while (memcg && !css_tryget(memcg));
	rcu_read_unlock();
	return memcg;
}

void folio_mlock_count(struct lv_folio *folio, long nr)
{
	struct obj_cgroup *objcg = folio_objcg(folio);

	if (objcg)
		__atomic_fetch_add(&objcg->nr_mlock, nr, __ATOMIC_RELAXED);
	else
		lruvec_count_event_atomic(&folio->pgdat->__lruvec, EV_NR_MLOCK, nr);
}

void folio_isolated_count(struct lv_folio *folio, long nr)
{
	struct obj_cgroup *objcg = folio_objcg(folio);

	__atomic_fetch_add(objcg ? &objcg->nr_isolated : &folio->pgdat->__lruvec.nr_isolated, nr,
			   __ATOMIC_RELAXED);
}

/* lruvec_objcg_sum - the sum of a count over the obj_cgroups listed on @lruvec. */
static long lruvec_objcg_sum(struct lruvec *lruvec, size_t offset, long own)
{
	struct list_head *pos;
	long sum = 0;

	if (!lruvec->memcg)
		return own;
	/*
	 * Usually the list holds only the memcg's own obj_cgroup, which lives as long as the
	 * memcg: read it without the lock, so that statistics take no LRU lock.
	 */
	switch (READ_ONCE(lruvec->nr_objcgs)) {
	case 0:
		return 0;
	case 1:
		if (!__atomic_load_n(&lruvec->memcg->offline, __ATOMIC_ACQUIRE))
			return __atomic_load_n((long *)((char *)lruvec->objcg + offset),
					       __ATOMIC_RELAXED);
		break;
	}
	lv_lock_acquire(lruvec->lru_lock);
	list_for_each (pos, &lruvec->objcg_list)
		sum += __atomic_load_n(
			(long *)((char *)list_entry(pos, struct obj_cgroup, list) + offset),
			__ATOMIC_RELAXED);
	lv_lock_release(lruvec->lru_lock);
	return sum;
}

long lruvec_nr_mlock(struct lruvec *lruvec)
{
	return lruvec_objcg_sum(lruvec, offsetof(struct obj_cgroup, nr_mlock),
				(long)lruvec_event(lruvec, EV_NR_MLOCK));
}

long lruvec_nr_isolated(struct lruvec *lruvec)
{
	return lruvec_objcg_sum(lruvec, offsetof(struct obj_cgroup, nr_isolated),
				__atomic_load_n(&lruvec->nr_isolated, __ATOMIC_RELAXED));
}

#ifdef LV_DEBUG
void (*lruvec_live_hook)(struct lruvec *lruvec);
#endif

struct lruvec *lruvec_live(struct lruvec *lruvec)
{
	struct lv_memcg *memcg = lruvec->memcg;

	/* Dying is set before the first node is reparented: never a removed memcg's lists. */
	while (memcg && memcg->parent && __atomic_load_n(&memcg->dying, __ATOMIC_SEQ_CST))
		memcg = memcg->parent;
	lruvec = mem_cgroup_lruvec(memcg, lruvec->pgdat);
#ifdef LV_DEBUG
	if (lruvec_live_hook) /* tests: a removal between the choice and its use */
		lruvec_live_hook(lruvec);
#endif
	return lruvec;
}

struct lruvec *lruvec_live_lock_at(struct lruvec *lruvec, bool cost, const char *site)
{
	struct lv_lock *lock;

	rcu_read_lock();
	for (;;) {
		lruvec = lruvec_live(lruvec);
		lock = cost ? &lruvec->cost_lock : lruvec->lru_lock;
		lv_lock_acquire_at(lock, site);
		/*
		 * The reparenting of this node takes this lock after setting dying: if it is not
		 * set now, that reparenting hands over what the caller adds under the lock.
		 */
		if (likely(lruvec_live(lruvec) == lruvec))
			break;
		lv_lock_release(lock);
	}
	rcu_read_unlock();
	return lruvec;
}

/* ---- reparenting ----------------------------------------------------------------------------- */

/* reparent_lock - take @child's LRU lock, then @parent's (one lock in the node design). */
static void reparent_lock_at(struct lruvec *child, struct lruvec *parent, const char *site)
{
	lv_lock_acquire_at(child->lru_lock, site);
	if (parent->lru_lock != child->lru_lock)
		lv_lock_acquire_nested_at(parent->lru_lock, site);
}
#define reparent_lock(child, parent) reparent_lock_at((child), (parent), __func__)

static void reparent_unlock(struct lruvec *child, struct lruvec *parent)
{
	if (parent->lru_lock != child->lru_lock)
		lv_lock_release(parent->lru_lock);
	lv_lock_release(child->lru_lock);
}

#ifdef LV_DEBUG
void (*reparent_node_hook)(struct lv_memcg *memcg, unsigned int nid);
#endif

/*
 * lruvec_reparent - hand @child's lruvec of one node to @parent, as the 7.1 kernel does: under
 * both LRU locks of that node, re-point every obj_cgroup listed on @child at the parent and
 * move them to the parent's list, then splice each of the child's LRU lists onto the tail of
 * the parent's (a removed tenant's folios become the parent's oldest, in their order) and add
 * the sizes, the unevictable count included. No folio is touched: every folio charged through
 * those obj_cgroups, linked, queued in a batch, isolated or in flight, belongs to the parent
 * from this moment. A thread that read the child from a folio before and waits for the child's
 * lock fails its re-check afterwards and retries; one holding the parent's lock already
 * cannot be affected, since we take it too. Holding both locks is what makes the re-check
 * exact: while any lruvec lock a re-check saw is held, folio_memcg() cannot change.
 * Return: the pages moved off @child's lists.
 * Context: @child's memcg is dying; no LRU lock held; takes @child's lock, then @parent's.
 */
static long lruvec_reparent(struct lruvec *child, struct lruvec *parent)
{
	struct list_head *pos;
	long moved = 0;

	reparent_lock(child, parent);
	list_for_each (pos, &child->objcg_list)
		__atomic_store_n(&list_entry(pos, struct obj_cgroup, list)->memcg, parent->memcg,
				 __ATOMIC_RELEASE);
	list_splice_tail_init(&child->objcg_list, &parent->objcg_list);
	WRITE_ONCE(parent->nr_objcgs, parent->nr_objcgs + child->nr_objcgs);
	WRITE_ONCE(child->nr_objcgs, 0);
	lru_note_cost_reparent(child, parent); /* the child's recent scan costs */
	for (enum lru_list lru = 0; lru < NR_LRU_LISTS; lru++) {
		long nr = (long)child->lru_size[lru];

		if (lru != LRU_UNEVICTABLE)
			list_splice_tail_init(&child->lists[lru], &parent->lists[lru]);
		update_lru_size(child, lru, -nr);
		update_lru_size(parent, lru, nr);
		moved += nr;
	}
	if (moved)
		lruvec_count_event(child, EV_PGMOVED, moved);
	/* Empty now: its id may go to a new memcg, whose level starts at 0. */
	lruvec_size_level_update(child, true);
	reparent_unlock(child, parent);
	return moved;
}

/*
 * memcg_reparent_folios - move everything charged to @memcg to the parent, one node at a time,
 * never holding two nodes' locks (the per-node obj_cgroups make that possible). Nothing is
 * waited for: folios in transit follow their obj_cgroup. The charge needs no move either: the
 * parent's counters already count it, and the child's are dead with it.
 * Context: @memcg is dying (nothing new is charged to it); no library lock held.
 */
static void memcg_reparent_folios(struct lv_memcg *memcg)
{
	struct lv_machine *m = memcg->machine;

	for (unsigned int nid = 0; nid < m->cfg.nr_nodes; nid++) {
		lruvec_reparent(&memcg->nodeinfo[nid], &memcg->parent->nodeinfo[nid]);
#ifdef LV_DEBUG
		if (reparent_node_hook) /* tests: what others do between two nodes */
			reparent_node_hook(memcg, nid);
#endif
	}
}

static bool memcg_has_folios(struct lv_memcg *memcg)
{
	for (unsigned int nid = 0; nid < memcg->machine->cfg.nr_nodes; nid++)
		for (int l = 0; l < NR_LRU_LISTS; l++)
			if (READ_ONCE(memcg->nodeinfo[nid].lru_size[l]))
				return true;
	return false;
}

int lv_memcg_remove(struct lv_memcg *memcg)
{
	struct lv_machine *m;
	int err = 0;

	if (!memcg)
		return -EINVAL;
	/*
	 * Another remover may win and free @memcg meanwhile: read it under RCU until we own the
	 * removal (dying set by us), after which nobody else can free it.
	 */
	rcu_read_lock();
	memcg_handle_hook_call(memcg);
	if (!memcg->parent) {
		rcu_read_unlock();
		return -EINVAL;
	}
	m = memcg->machine;
	lv_lock_acquire(&m->memcg_mutex);
	if (__atomic_load_n(&memcg->dying, __ATOMIC_SEQ_CST) || !list_empty(&memcg->children) ||
	    memcg->nr_mms)
		err = -EBUSY; /* dying: another thread is removing it, and may yet fail */
	else
		__atomic_store_n(&memcg->dying, 1, __ATOMIC_SEQ_CST);
	lv_lock_release(&m->memcg_mutex);
	rcu_read_unlock();
	if (err)
		return err;
	/*
	 * Dying refuses new children and address spaces too: the checks above still hold. Its
	 * queued requests are applied on its own lists first (only its: the other tenants' stay
	 * queued), so that what the removal returns to sees them done; correctness does not need
	 * it, since a queued folio follows its obj_cgroup to the parent.
	 */
	lru_add_drain_scope(m, memcg, -1);
	memcg_reparent_folios(memcg);
	__atomic_store_n(&memcg->offline, 1, __ATOMIC_RELEASE);
#ifdef LV_DEBUG
	if (memcg_remove_hook) /* tests: what other threads do until the removal commits */
		memcg_remove_hook(memcg, 0);
#endif
	lv_lock_acquire(&m->memcg_mutex);
	/* Every obj_cgroup and every list moved: nothing can be linked here again. */
	VM_BUG_ON_M(m, memcg_has_folios(memcg));
	list_del_rcu(&memcg->sibling);
	/* Before the id goes: a swap record then never names an unpublished id for long. */
	swap_reparent(m, memcg, memcg->parent);
	rcu_assign_pointer_lv(m->memcg_ids[memcg->id], NULL);
	for (unsigned int nid = 0; nid < m->cfg.nr_nodes; nid++)
		shadow_nodes_reparent(&memcg->nodeinfo[nid], &memcg->parent->nodeinfo[nid]);
	list_add_tail(&memcg->dying_list, &m->dying_memcgs);
	lv_lock_release(&m->memcg_mutex);
	/* The parent's lists may be over their limit while its own LRU stays empty. */
	for (unsigned int nid = 0; nid < m->cfg.nr_nodes; nid++)
		while (shadow_nodes_shrink(&memcg->parent->nodeinfo[nid], SHADOW_SHRINK_BATCH))
			;
	/*
	 * The last step: drop the tree's reference a grace period from now. Every call that
	 * entered with @memcg before this point is in a read-side section (and so is waited for)
	 * or holds a reference of its own; lookups that read a stale folio->memcg under RCU, and
	 * charges and moves that pinned us (css_tryget), are covered the same way. The memory
	 * goes a grace period after the last reference (css_put()).
	 */
	__atomic_fetch_add(&m->memcgs_freeing, 1, __ATOMIC_RELAXED);
	call_rcu_lv(&memcg->rcu_put, memcg_put_rcu);
	return 0;
}

/**
 * memcg_set_limit - set @memcg's memory limit (@swap false) or swap limit to @pages
 * (anything above LONG_MAX: none). Return: 0, or -EINVAL for NULL or the root.
 * Context: any thread; RCU read-side (the handle may be under removal).
 */
int memcg_set_limit(struct lv_memcg *memcg, bool swap, size_t pages)
{
	int err = -EINVAL;

	if (!memcg)
		return -EINVAL;
	rcu_read_lock();
	memcg_handle_hook_call(memcg);
	if (memcg->parent) {
		__atomic_store_n(swap ? &memcg->swap_max : &memcg->max,
				 pages > LONG_MAX ? LONG_MAX : (long)pages, __ATOMIC_RELAXED);
		err = 0;
	}
	rcu_read_unlock();
	return err;
}

int lv_memcg_set_max(struct lv_memcg *memcg, size_t pages)
{
	return memcg_set_limit(memcg, false, pages);
}

size_t lv_memcg_max(const struct lv_memcg *memcg)
{
	long max;

	rcu_read_lock();
	memcg_handle_hook_call(memcg);
	max = __atomic_load_n(&memcg->max, __ATOMIC_RELAXED);
	rcu_read_unlock();
	return max == LONG_MAX ? SIZE_MAX : (size_t)max;
}

size_t lv_memcg_usage(const struct lv_memcg *memcg)
{
	struct lv_machine *m;
	size_t used = 0;

	rcu_read_lock();
	memcg_handle_hook_call(memcg);
	if (memcg->parent) {
		/* Reparented, its own counter is dead: what it counted belongs to the parent. */
		if (!__atomic_load_n(&memcg->offline, __ATOMIC_ACQUIRE))
			used = (size_t)__atomic_load_n(&memcg->usage, __ATOMIC_RELAXED);
	} else {
		/* The root is not counted: everything allocated is charged to it or below. */
		m = memcg->machine;
		for (unsigned int nid = 0; nid < m->cfg.nr_nodes; nid++)
			used += m->nodes[nid]->nr_pages - node_free_pages(m->nodes[nid]);
	}
	rcu_read_unlock();
	return used;
}

struct lv_memcg *lv_memcg_parent(const struct lv_memcg *memcg)
{
	struct lv_memcg *parent;

	rcu_read_lock();
	memcg_handle_hook_call(memcg);
	parent = memcg->parent;
	rcu_read_unlock();
	return parent;
}

const char *lv_memcg_name(const struct lv_memcg *memcg)
{
	const char *name;

	rcu_read_lock();
	memcg_handle_hook_call(memcg);
	name = memcg->name;
	rcu_read_unlock();
	return name;
}

static void for_each_memcg_lruvec(struct lv_memcg *memcg, void (*fn)(struct lruvec *, void *),
				  void *arg)
{
	struct list_head *pos;

	for (unsigned int nid = 0; nid < memcg->machine->cfg.nr_nodes; nid++)
		fn(&memcg->nodeinfo[nid], arg);
	list_for_each (pos, &memcg->children)
		for_each_memcg_lruvec(list_entry(pos, struct lv_memcg, sibling), fn, arg);
}

void for_each_lruvec_locked(struct lv_machine *m, bool dying, void (*fn)(struct lruvec *, void *),
			    void *arg)
{
	struct list_head *pos;

	lockdep_assert_held(&m->memcg_mutex);
	if (m->root) {
		for_each_memcg_lruvec(m->root, fn, arg);
		/* Removed, childless, not freed yet: still counting (memcg_retire_stats()). */
		if (dying) {
			list_for_each (pos, &m->dying_memcgs) {
				struct lv_memcg *memcg =
					list_entry(pos, struct lv_memcg, dying_list);

				for (unsigned int nid = 0; nid < m->cfg.nr_nodes; nid++)
					fn(&memcg->nodeinfo[nid], arg);
			}
		}
	} else {
		for (unsigned int nid = 0; nid < m->cfg.nr_nodes; nid++)
			fn(&m->nodes[nid]->__lruvec, arg);
	}
}

void for_each_lruvec(struct lv_machine *m, bool dying, void (*fn)(struct lruvec *, void *),
		     void *arg)
{
	lv_lock_acquire(&m->memcg_mutex);
	for_each_lruvec_locked(m, dying, fn, arg);
	lv_lock_release(&m->memcg_mutex);
}

/* ---- page counters -------------------------------------------------------------------------- */

/* Undo a charge of @nr on every level from @memcg up to, but not including, @stop. */
static void page_counter_uncharge(struct lv_memcg *memcg, struct lv_memcg *stop, long nr)
{
	for (struct lv_memcg *c = memcg; c != stop && c->parent; c = c->parent)
		__atomic_sub_fetch(&c->usage, nr, __ATOMIC_RELAXED);
}

/*
 * try_charge_upto - charge @nr pages on every level from @memcg up to, not including, @stop.
 * Return: 0, -ENOMEM (a level would exceed its limit) or -ENOENT (@memcg is being removed);
 * nothing is left charged on failure.
 * Context: the caller is in an RCU read-side section or holds a charge on @memcg.
 */
static int try_charge_upto(struct lv_memcg *memcg, struct lv_memcg *stop, long nr,
			   struct lv_memcg **over)
{
	struct lv_memcg *c;

	if (fault_inject(FAULT_CHARGE)) {
		if (over)
			*over = memcg;
		return -ENOMEM;
	}
	for (c = memcg; c != stop && c->parent; c = c->parent) {
		long usage = __atomic_load_n(&c->usage, __ATOMIC_RELAXED);

		/* Never above the limit, not even for an instant: the limit is hard. */
		do {
			if (usage + nr > __atomic_load_n(&c->max, __ATOMIC_RELAXED)) {
				page_counter_uncharge(memcg, c, nr);
				if (over)
					*over = c;
				return -ENOMEM;
			}
		} while (!__atomic_compare_exchange_n(&c->usage, &usage, usage + nr, true,
						      __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
	}
	/* A charge that sees the removal begun backs out; one that misses it is reparented. */
	if (memcg != stop && __atomic_load_n(&memcg->dying, __ATOMIC_SEQ_CST)) {
		page_counter_uncharge(memcg, stop, nr);
		return -ENOENT;
	}
	return 0;
}

#define MAX_RECLAIM_RETRIES 16

/**
 * mem_cgroup_charge - charge @nr pages to @memcg, a memcg of @m, reclaiming from the memcg
 * that is at its limit and retrying, as try_charge() does, before giving up; with @noretry,
 * after one reclaim pass (the kernel's __GFP_NORETRY: an optional large folio).
 * Return: 0, -ENOMEM, -ENOENT, or -EINVAL if @memcg belongs to another machine (checked
 * here, under the read-side section that protects a handle under removal).
 * Context: may block (reclaim, lru_add_drain_scope()); no library lock held.
 */
int mem_cgroup_charge(struct lv_machine *m, struct lv_memcg *memcg, long nr, bool noretry)
{
	int fruitless = 0, err;
	bool drained = false;

	/*
	 * Pin @memcg (and through it every ancestor) for the whole charge: between a failed
	 * attempt and reclaim nothing is charged to it, and a concurrent lv_memcg_remove() could
	 * otherwise free it under us. The root is not charged.
	 */
	rcu_read_lock();
	memcg_handle_hook_call(memcg);
	if (memcg->machine != m || memcg_is_root(memcg)) {
		err = memcg->machine != m ? -EINVAL : 0;
		rcu_read_unlock();
		return err;
	}
	err = css_tryget(memcg) ? 0 : -ENOENT;
	rcu_read_unlock();
	if (err)
		return err;
	for (int retries = noretry ? 1 : MAX_RECLAIM_RETRIES;; retries--) {
		struct lv_memcg *over = NULL;

		err = try_charge_upto(memcg, NULL, nr, &over);
		/* Two full reclaim passes that freed nothing: the kernel would OOM here. */
		if (err != -ENOMEM || !retries || fruitless == 2)
			break;
		/*
		 * Over a limit, try_charge_upto() backs out before it looks at ->dying: do not
		 * reclaim for a memcg being removed (a hint; the Dekker pair decides the rest).
		 */
		if (__atomic_load_n(&memcg->dying, __ATOMIC_RELAXED)) {
			err = -ENOENT;
			break;
		}
		/* Larger than the limit itself: evicting would free nothing that helps. */
		if (nr > __atomic_load_n(&over->max, __ATOMIC_RELAXED))
			break;
		lruvec_count_event_atomic(&memcg->nodeinfo[0], EV_ALLOCSTALL, 1);
		if (try_to_free_pages(memcg->machine, over, -1, nr > 32 ? (unsigned long)nr : 32)) {
			fruitless = 0;
		} else if (!drained) {
			/*
			 * What is charged may all be queued in CPU batches, on no list that reclaim
			 * scans: with a limit below what the batches hold (the kernel's limits
			 * never are), nothing else would ever free it. Once per charge, as the
			 * kernel drains its charge stocks once.
			 */
			lru_add_drain_scope(memcg->machine, over, -1);
			lruvec_count_event_atomic(&over->nodeinfo[0], EV_RECLAIM_DRAIN, 1);
			drained = true;
		} else {
			fruitless++;
		}
	}
	css_put(memcg);
	return err;
}

/*
 * mem_cgroup_uncharge_upto - drop @nr pages from @memcg and its ancestors below @stop.
 * Context: RCU protects the walk: once a level reaches zero it may be removed and freed
 * after a grace period, and we still read its ->parent.
 */
static void mem_cgroup_uncharge_upto(struct lv_memcg *memcg, struct lv_memcg *stop, long nr)
{
	rcu_read_lock();
	page_counter_uncharge(memcg, stop, nr);
	rcu_read_unlock();
}

void mem_cgroup_uncharge(struct lv_memcg *memcg, long nr)
{
	mem_cgroup_uncharge_upto(memcg, NULL, nr);
}

/* ---- folio → lruvec ---------------------------------------------------------------------------
 */

struct lruvec *mem_cgroup_lruvec(struct lv_memcg *memcg, struct pglist_data *pgdat)
{
	return memcg ? &memcg->nodeinfo[pgdat->node_id] : &pgdat->__lruvec;
}

/*
 * folio_lruvec - the lruvec @folio is bound to right now.
 * Context: the answer is stable only under the lock of the returned lruvec after
 * folio_matches_lruvec() (a removal may re-point any folio, isolated or not); the caller must
 * be in an RCU read-side section, or hold a reference on the memcg, to use the lruvec at all.
 */
struct lruvec *folio_lruvec(struct lv_folio *folio)
{
	return mem_cgroup_lruvec(folio_memcg(folio), folio->pgdat);
}

#ifdef LV_DEBUG
void (*folio_lruvec_lock_hook)(struct lv_folio *folio);
#define folio_lruvec_lock_hook_call(folio)                                                         \
	do {                                                                                       \
		if (folio_lruvec_lock_hook)                                                        \
			folio_lruvec_lock_hook(folio);                                             \
	} while (0)
#else
#define folio_lruvec_lock_hook_call(folio) ((void)(folio))
#endif

/*
 * A lookup is retried only when the binding changed between the read and the lock: a
 * reparenting step (each goes one level up the tree) or a charge move (which needs the pin, so
 * it cannot repeat under a caller holding it). This many retries for one folio is a loop that
 * will not end — the "froze in booting" of docs/protocol.md §7.1 — and is reported (check C6).
 */
#define LOCK_RETRIES_BUG 1024

/*
 * lruvec_memcg_debug - the lock just taken must be @folio's lruvec's (check C2 of
 * docs/protocol.md §9.2; the kernel's DEBUG_VM check of that name). With memcg disabled the
 * folio's memcg and the node lruvec's are both NULL, so it holds trivially (hazard 9).
 * Context: @lruvec's lock held.
 */
static void lruvec_memcg_debug(struct lruvec *lruvec, struct lv_folio *folio)
{
	lockdep_assert_held(lruvec->lru_lock);
	VM_BUG_ON_FOLIO(!folio_matches_lruvec(folio, lruvec), folio);
}

/*
 * folio_lruvec_lock_v1 - LV_PROTOCOL_V1, broken on purpose: lock the lruvec of @folio's memcg
 * as read once, with no re-check, as the first version of the per-memcg lock (August 2019)
 * did (docs/protocol.md §7.1). A rebinding between the read and the lock leaves the caller
 * holding the old lruvec's lock while the folio is on the new one's list, or freeing the old
 * memcg. lruvec_memcg_debug(), which v1 did not have, turns that into a bug report when it
 * happens instead of a list corrupted later. The read-side section keeps the memcg read
 * readable only up to that check. With memcg disabled every folio maps to its node's lruvec,
 * whose binding never changes: v1's lookup is then the real one (docs/design.md, decision 78).
 * Context: as folio_lruvec_lock().
 */
static struct lruvec *folio_lruvec_lock_v1(struct lv_folio *folio, const char *site)
{
	struct lruvec *lruvec;

	rcu_read_lock();
	lruvec = folio_lruvec(folio);
	folio_lruvec_lock_hook_call(folio);
	lv_lock_acquire_at(lruvec->lru_lock, site);
	lruvec_memcg_debug(lruvec, folio);
	rcu_read_unlock();
	return lruvec;
}

/**
 * folio_lruvec_lock - lock the lruvec @folio belongs to.
 * Return: the lruvec, locked, which @folio matches; the binding cannot change until unlock.
 * Context: the caller holds a reference, the pin, or is freeing the folio (refcount zero);
 * holds no LRU lock. Enters an RCU read-side section for the lookup.
 */
struct lruvec *folio_lruvec_lock_at(struct lv_folio *folio, const char *site)
{
	unsigned int retries = 0;
	struct lruvec *lruvec;

	/* The machine's protocol is constant: one branch, always predicted the same way. */
	if (unlikely(folio_machine(folio)->cfg.protocol == LV_PROTOCOL_V1))
		return folio_lruvec_lock_v1(folio, site);
	rcu_read_lock();
	for (;;) {
		lruvec = folio_lruvec(folio);
		folio_lruvec_lock_hook_call(folio);
		lv_lock_acquire_at(lruvec->lru_lock, site);
		if (likely(folio_matches_lruvec(folio, lruvec)))
			break;
		/* A charge move or reparenting rebound the folio between our lookup and lock. */
		lruvec_count_event(lruvec, EV_LOCK_RETRIES, 1);
		lv_lock_release(lruvec->lru_lock);
		VM_BUG_ON_FOLIO(++retries == LOCK_RETRIES_BUG, folio);
	}
	rcu_read_unlock();
	return lruvec;
}

void lruvec_unlock(struct lruvec *lruvec)
{
	lv_lock_release(lruvec->lru_lock);
}

/**
 * folio_lruvec_relock - switch to @folio's lruvec, keeping the held lock if it covers it.
 * @locked: the lruvec whose lock is held, or NULL.
 * The fast path compares locks, not lruvecs: in the node design every lruvec of a node shares
 * one lock and a batch keeps it across memcgs, as Linux <= 5.10 did. Holding that lock freezes
 * the binding of any folio whose current lruvec uses it, so the lookup is exact.
 * Return: @folio's lruvec, whose lock is held.
 */
struct lruvec *folio_lruvec_relock_at(struct lv_folio *folio, struct lruvec *locked,
				      const char *site)
{
	if (locked) {
		struct lruvec *lruvec;
		bool covered;

		if (folio_matches_lruvec(folio, locked))
			return locked;
		/*
		 * Compare inside the read-side section: if the lock differs, a removal may be
		 * reparenting the folio right now and free the memcg we read after a grace period.
		 */
		rcu_read_lock();
		lruvec = folio_lruvec(folio);
		covered = lruvec->lru_lock == locked->lru_lock;
		rcu_read_unlock();
		if (covered)
			return lruvec;
		lruvec_unlock(locked);
	}
	return folio_lruvec_lock_at(folio, site);
}

struct lv_memcg *lv_folio_memcg(const struct lv_folio *folio)
{
	return folio_memcg(folio);
}

/* ---- charge moving -------------------------------------------------------------------------- */

static int memcg_depth(const struct lv_memcg *memcg)
{
	int depth = 0;

	for (; memcg->parent; memcg = memcg->parent)
		depth++;
	return depth;
}

static struct lv_memcg *common_ancestor(struct lv_memcg *a, struct lv_memcg *b)
{
	int da = memcg_depth(a), db = memcg_depth(b);

	for (; da > db; da--)
		a = a->parent;
	for (; db > da; db--)
		b = b->parent;
	while (a != b) {
		a = a->parent;
		b = b->parent;
	}
	return a;
}

int lv_folio_move_memcg(struct lv_folio *folio, struct lv_memcg *to)
{
	struct lv_machine *m = folio_machine(folio);
	struct lv_memcg *from, *common;
	struct obj_cgroup *old, *new;
	struct lruvec *lruvec;
	long nr = folio_nr_pages(folio);
	int err;

	if (!m->cfg.charge_moving)
		return -EOPNOTSUPP; /* charge moving is gone since Linux 6.13 */
	if (mem_cgroup_disabled(m) || !to)
		return -EINVAL;
	/*
	 * Charge before isolating, so that a refused charge leaves the folio exactly where it
	 * was. The binding read here is a guess until we own the pin; RCU keeps a memcg that a
	 * concurrent move empties and removes readable meanwhile, and @to until it is pinned.
	 */
	rcu_read_lock();
	memcg_handle_hook_call(to);
	if (to->machine != m) {
		rcu_read_unlock();
		return -EINVAL;
	}
	from = lv_folio_memcg(folio);
	if (from == to) {
		rcu_read_unlock();
		return 0;
	}
	/*
	 * Pin the guess: if another move empties and removes @from meanwhile, its memory must not
	 * be reused for a new memcg that our re-check below would mistake for it.
	 */
	if (!css_tryget(from)) {
		rcu_read_unlock();
		return -EBUSY; /* moved away and its old memcg is being freed */
	}
	if (!css_tryget(to)) {
		rcu_read_unlock();
		css_put(from);
		return -ENOENT; /* being removed */
	}
	rcu_read_unlock();
	/* Levels above the common ancestor keep the charge; only the two branches change. */
	common = common_ancestor(from, to);
	err = try_charge_upto(to, common, nr, NULL);
	if (err)
		goto out;
	err = -EBUSY;
	if (!folio_isolate_lru(folio)) {
		mem_cgroup_uncharge_upto(to, common, nr);
		goto out;
	}
	/*
	 * Rebind under the old lruvec's lock: a thread holding that lock and seeing the old
	 * binding keeps seeing it until it unlocks; one that locks after us sees the new binding
	 * and retries. The lock also keeps a removal from re-pointing the folio's obj_cgroup
	 * meanwhile: if one did before (or another move won the race before our pin), the
	 * binding is no longer @from's and that result stands.
	 */
	lruvec = folio_lruvec_lock_at(folio, "mem_cgroup_move_account");
	if (lruvec->memcg != from) {
		lruvec_unlock(lruvec);
		mem_cgroup_uncharge_upto(to, common, nr);
		folio_putback_lru(folio);
		goto out;
	}
	old = folio->objcg;
	new = to->nodeinfo[folio_nid(folio)].objcg;
	__atomic_fetch_add(&new->refcnt, 1, __ATOMIC_RELAXED);
	/* The counts the folio carries go with it; PG_mlocked changes only under our lock. */
	if (folio_test_mlocked(folio)) {
		__atomic_fetch_sub(&old->nr_mlock, nr, __ATOMIC_RELAXED);
		__atomic_fetch_add(&new->nr_mlock, nr, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&folio->objcg, new, __ATOMIC_RELEASE);
	lruvec_count_event(lruvec, EV_PGMOVED, nr);
	lruvec_unlock(lruvec);
	objcg_put_many(old, 1);
	mem_cgroup_uncharge_upto(from, common, nr);
	folio_putback_lru(folio);
	err = 0;
out:
	css_put(to);
	css_put(from);
	return err;
}
