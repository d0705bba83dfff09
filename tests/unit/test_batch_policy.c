// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cfg.batch_policy: in every policy, the folios of each lruvec reach its list in the order
 * they were queued (a sort that is not stable, or that reverses equal keys, fails here); the
 * lock holds a flush takes are one per lruvec under the sorted and per-lruvec policies, and
 * one per run of neighbours under arrival order (lv_batch_stats()); and every drain keeps its
 * guarantee: the local drain, lv_lru_add_drain_all(), the scoped drains by memcg and by node
 * (which leave the other folios queued, in order), lv_lru_cache_disable() in its three modes,
 * and a memcg's removal. More memcgs than LV_LRUVEC_BATCHES make the per-lruvec policy flush
 * its least recently used batch; in test_order() batches of ORDER_BATCH fill as well.
 */
#include "lvtest_internal.h"

#include "lvtest.h"

#define NR_MEMCGS   6 /* more than LV_LRUVEC_BATCHES */
#define NR_FOLIOS   30
#define ORDER_BATCH 8 /* test_order()'s cfg.batch_size: fewer than memcg 0's folios */

static const enum lv_batch_policy policies[] = { LV_BATCH_ARRIVAL, LV_BATCH_SORTED,
						 LV_BATCH_PER_LRUVEC };
static const char *const policy_names[] = { "arrival", "sorted", "per-lruvec" };

/*
 * The memcg of the i-th folio queued: interleaved so that no two neighbours share an lruvec
 * more than twice in a row, and with memcg 0 getting more than a per-lruvec batch holds.
 */
static unsigned int owner(unsigned int i, unsigned int nr_memcgs)
{
	static const unsigned char pattern[] = { 0, 1, 0, 2, 0, 1, 0, 3, 0, 2, 1, 0, 0, 4, 5,
						 0, 1, 0, 2, 0, 0, 3, 0, 1, 0, 5, 0, 4, 0, 0 };

	return pattern[i % sizeof(pattern)] % nr_memcgs;
}

static struct lv_config policy_config(enum lv_batch_policy policy, enum lv_lock_design design,
				      unsigned int nr_nodes)
{
	struct lv_config cfg = small_config();

	cfg.batch_policy = policy;
	cfg.lock_design = design;
	cfg.nr_nodes = nr_nodes;
	return cfg;
}

/* in_order - are @want's folios that belong to @lruvec its @lru list, oldest (tail) first? */
static bool in_order(struct lruvec *lruvec, enum lru_list lru, struct lv_folio **want,
		     unsigned int nr)
{
	struct list_head *head = &lruvec->lists[lru], *pos = head->prev;

	for (unsigned int i = 0; i < nr; i++) {
		if (folio_lruvec(want[i]) != lruvec)
			continue;
		if (pos == head || list_entry(pos, struct lv_folio, lru) != want[i])
			return false;
		pos = pos->prev;
	}
	return pos == head;
}

/* lists_in_order - every memcg's lruvec on node 0 holds its folios of @f in queue order. */
static bool lists_in_order(struct lv_memcg **memcgs, unsigned int nr_memcgs, enum lru_list lru,
			   struct lv_folio **f, unsigned int nr)
{
	for (unsigned int c = 0; c < nr_memcgs; c++)
		if (!in_order(mem_cgroup_lruvec(memcgs[c], f[0]->pgdat), lru, f, nr))
			return false;
	return true;
}

/*
 * holds - the lock holds flushing @f in batches of @size takes: in arrival order one per run
 * of neighbours sharing a lock; sorted, one per lock in each batch.
 */
static uint64_t holds(struct lv_folio **f, unsigned int nr, unsigned int size, bool sorted)
{
	uint64_t n = 0;

	for (unsigned int i = 0; i < nr; i++) {
		unsigned int first = i - i % size, j = i;

		if (sorted)
			for (j = first; j < i; j++)
				if (folio_lruvec(f[j])->lru_lock == folio_lruvec(f[i])->lru_lock)
					break;
		if (sorted ? j == i
			   : i == first || folio_lruvec(f[i])->lru_lock !=
						   folio_lruvec(f[i - 1])->lru_lock)
			n++;
	}
	return n;
}

static void put_all(struct lv_folio **f, unsigned int nr)
{
	for (unsigned int i = 0; i < nr; i++)
		lv_folio_put(f[i]);
}

static void remove_all(struct lv_memcg **memcgs, unsigned int nr)
{
	for (unsigned int c = 0; c < nr; c++)
		if (lv_memcg_remove(memcgs[c]))
			BAIL_OUT("lv_memcg_remove: %s", strerror(errno));
}

/*
 * LRU order and lock holds: queue @NR_FOLIOS folios of interleaved memcgs (adds, then
 * activations), drain, and compare each lruvec's list with the queue order.
 */
static void test_order(unsigned int p, enum lv_lock_design design)
{
	struct lv_config cfg = policy_config(policies[p], design, 1);
	struct lv_machine *m;
	const char *d = policy_names[p];
	const char *ld = design == LV_LOCK_NODE ? "node" : "lruvec";
	struct lv_memcg *memcgs[NR_MEMCGS];
	struct lv_folio *f[NR_FOLIOS];
	struct lv_batch_stat st;
	uint64_t want_holds;

	cfg.batch_size = ORDER_BATCH;
	m = new_machine(&cfg);
	for (unsigned int c = 0; c < NR_MEMCGS; c++) {
		char name[8];

		snprintf(name, sizeof(name), "c%u", c);
		memcgs[c] = new_memcg(m, NULL, name);
	}
	for (unsigned int i = 0; i < NR_FOLIOS; i++)
		f[i] = alloc_or_bail(m, 0, 0, memcgs[owner(i, NR_MEMCGS)], 0);

	lv_lock_stats_reset(m);
	for (unsigned int i = 0; i < NR_FOLIOS; i++)
		is(lv_folio_add_lru(f[i]), 0, "%s/%s: add folio %u", d, ld, i);
	lv_lru_add_drain(m);
	is(nstat(m, LV_NR_INACTIVE_FILE), NR_FOLIOS, "%s/%s: drained: all on the inactive list", d,
	   ld);
	ok(lists_in_order(memcgs, NR_MEMCGS, LRU_INACTIVE_FILE, f, NR_FOLIOS),
	   "%s/%s: added: each lruvec's list is in arrival order", d, ld);
	lv_batch_stats(m, &st);
	is(st.folios, NR_FOLIOS, "%s/%s: the flushes moved every folio", d, ld);
	if (policies[p] == LV_BATCH_PER_LRUVEC)
		want_holds = st.flushes; /* one lock per batch: one hold per flush */
	else
		want_holds = holds(f, NR_FOLIOS, ORDER_BATCH, policies[p] == LV_BATCH_SORTED);
	is(st.holds, want_holds, "%s/%s: %llu lock holds (%llu flushes)", d, ld,
	   (unsigned long long)want_holds, (unsigned long long)st.flushes);
	if (policies[p] == LV_BATCH_PER_LRUVEC && design == LV_LOCK_LRUVEC)
		ok(st.flushes > NR_MEMCGS, "%s/%s: %llu flushes: a full batch and the LRU one", d,
		   ld, (unsigned long long)st.flushes);

	/* Activations in another order: the active lists follow it too. */
	for (unsigned int i = 0; i < NR_FOLIOS / 2; i++) {
		struct lv_folio *t = f[i];

		f[i] = f[NR_FOLIOS - 1 - i];
		f[NR_FOLIOS - 1 - i] = t;
	}
	for (unsigned int i = 0; i < NR_FOLIOS; i++)
		lv_folio_activate(f[i]);
	lv_lru_add_drain(m);
	is(nstat(m, LV_NR_ACTIVE_FILE), NR_FOLIOS, "%s/%s: activated: all active", d, ld);
	ok(lists_in_order(memcgs, NR_MEMCGS, LRU_ACTIVE_FILE, f, NR_FOLIOS),
	   "%s/%s: activated: each lruvec's active list is in request order", d, ld);

	put_all(f, NR_FOLIOS);
	remove_all(memcgs, NR_MEMCGS);
	finish(m, d);
}

/* queue_mixed - allocate and queue @nr folios of interleaved memcgs on alternate nodes. */
static void queue_mixed(struct lv_machine *m, struct lv_memcg **memcgs, struct lv_folio **f,
			unsigned int nr, unsigned int nr_nodes)
{
	for (unsigned int i = 0; i < nr; i++) {
		f[i] = alloc_or_bail(m, (int)(i / 3 % nr_nodes), 0, memcgs[owner(i, NR_MEMCGS)], 0);
		if (lv_folio_add_lru(f[i]))
			BAIL_OUT("lv_folio_add_lru failed");
	}
}

static unsigned int nr_on_lru(struct lv_folio **f, unsigned int nr)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < nr; i++)
		n += lv_folio_test(f[i], LV_PG_LRU);
	return n;
}

/* in_scope - is @f charged to @memcg (NULL: on node @nid)? */
static bool in_scope(struct lv_folio *f, struct lv_memcg *memcg, int nid)
{
	return memcg ? lv_folio_memcg(f) == memcg : folio_nid(f) == nid;
}

/*
 * A scoped drain (by @memcg, or by node @nid) puts exactly the scope's folios on their lists,
 * leaves the others queued, and a drain then adds those in their order.
 */
static void test_scope(unsigned int p, bool by_memcg)
{
	struct lv_config cfg = policy_config(policies[p], LV_LOCK_LRUVEC, 2);
	struct lv_machine *m = new_machine(&cfg);
	const char *d = policy_names[p];
	const char *sd = by_memcg ? "memcg scope" : "node scope";
	struct lv_memcg *memcgs[NR_MEMCGS], *memcg;
	struct lv_folio *f[NR_FOLIOS];
	unsigned int want = 0, bad = 0;
	int nid = by_memcg ? -1 : 1;

	for (unsigned int c = 0; c < NR_MEMCGS; c++) {
		char name[8];

		snprintf(name, sizeof(name), "c%u", c);
		memcgs[c] = new_memcg(m, NULL, name);
	}
	memcg = by_memcg ? memcgs[1] : NULL;
	/* Fewer than a per-lruvec batch of any lruvec, so nothing is flushed yet. */
	queue_mixed(m, memcgs, f, 12, 2);
	is(nr_on_lru(f, 12), policies[p] == LV_BATCH_PER_LRUVEC ? nr_on_lru(f, 12) : 0,
	   "%s/%s: queued", d, sd);
	lru_add_drain_scope(m, memcg, nid);
	for (unsigned int i = 0; i < 12; i++) {
		bool on = lv_folio_test(f[i], LV_PG_LRU);

		if (in_scope(f[i], memcg, nid)) {
			want++;
			bad += !on;
		}
	}
	ok(want > 0, "%s/%s: the scope has %u folios", d, sd, want);
	is(bad, 0, "%s/%s: every folio of the scope is on its list", d, sd);
	lv_lru_add_drain(m);
	is(nr_on_lru(f, 12), 12, "%s/%s: the others after a drain", d, sd);
	{
		bool ordered = true;

		for (unsigned int c = 0; c < NR_MEMCGS; c++)
			for (int n = 0; n < 2; n++)
				ordered &= in_order(mem_cgroup_lruvec(memcgs[c], m->nodes[n]),
						    LRU_INACTIVE_FILE, f, 12);
		ok(ordered, "%s/%s: every lruvec's list is in arrival order", d, sd);
	}
	put_all(f, 12);
	remove_all(memcgs, NR_MEMCGS);
	finish(m, d);
}

/* lv_lru_add_drain_all() and lv_lru_cache_disable() in @mode flush every batch of every slot. */
static void test_drains(unsigned int p, enum lv_disable_mode mode)
{
	struct lv_config cfg = policy_config(policies[p], LV_LOCK_LRUVEC, 1);
	struct lv_machine *m;
	const char *d = policy_names[p];
	static const char *const modes[] = { [LV_DISABLE_SWEEP] = "sweep",
					     [LV_DISABLE_RCU] = "rcu",
					     [LV_DISABLE_RCU_EXPEDITED] = "rcu-expedited" };
	struct lv_memcg *memcgs[NR_MEMCGS];
	struct lv_folio *f[NR_FOLIOS], *late;

	cfg.disable_mode = mode;
	cfg.nr_cpu_slots = 2;
	m = new_machine(&cfg);
	for (unsigned int c = 0; c < NR_MEMCGS; c++) {
		char name[8];

		snprintf(name, sizeof(name), "c%u", c);
		memcgs[c] = new_memcg(m, NULL, name);
	}
	queue_mixed(m, memcgs, f, 12, 1);
	lv_lru_add_drain_all(m);
	is(nr_on_lru(f, 12), 12, "%s/%s: lv_lru_add_drain_all flushed every batch", d, modes[mode]);
	for (unsigned int i = 0; i < 12; i++)
		lv_folio_activate(f[i]);
	lv_lru_cache_disable(m);
	is(nstat(m, LV_NR_ACTIVE_FILE), 12, "%s/%s: lv_lru_cache_disable flushed every batch", d,
	   modes[mode]);
	late = alloc_or_bail(m, 0, 0, memcgs[2], 0);
	is(lv_folio_add_lru(late), 0, "%s/%s: an add while disabled", d, modes[mode]);
	ok(lv_folio_test(late, LV_PG_LRU), "%s/%s: is on its list at once", d, modes[mode]);
	lv_lru_cache_enable(m);
	lv_folio_put(late);
	put_all(f, 12);
	remove_all(memcgs, NR_MEMCGS);
	finish(m, d);
}

/*
 * A memcg's removal flushes its queued folios from every batch and reparents them; batches
 * that were keyed by its lruvec are free afterwards, and the folios' later requests work.
 */
static void test_removal(unsigned int p)
{
	struct lv_config cfg = policy_config(policies[p], LV_LOCK_LRUVEC, 1);
	struct lv_machine *m = new_machine(&cfg);
	const char *d = policy_names[p];
	struct lv_memcg *parent = new_memcg(m, NULL, "parent"), *memcgs[NR_MEMCGS];
	struct lv_folio *f[NR_FOLIOS];
	unsigned int mine = 0, bad = 0;

	for (unsigned int c = 0; c < NR_MEMCGS; c++) {
		char name[8];

		snprintf(name, sizeof(name), "c%u", c);
		memcgs[c] = new_memcg(m, parent, name);
	}
	queue_mixed(m, memcgs, f, 12, 1);
	is(lv_memcg_remove(memcgs[0]), 0, "%s: removal: memcg c0 removed", d);
	for (unsigned int i = 0; i < 12; i++) {
		if (owner(i, NR_MEMCGS) != 0)
			continue;
		mine++;
		bad += !lv_folio_test(f[i], LV_PG_LRU) || lv_folio_memcg(f[i]) != parent;
	}
	ok(mine > 0, "%s: removal: c0 had %u folios queued", d, mine);
	is(bad, 0, "%s: removal: each is on its list, in the parent", d);
	/* New requests for them, and for the others, after the key's lruvec is gone. */
	lv_lru_add_drain(m);
	for (unsigned int i = 0; i < 12; i++)
		lv_folio_activate(f[i]);
	lv_lru_add_drain(m);
	is(nstat(m, LV_NR_ACTIVE_FILE), 12, "%s: removal: every folio activated afterwards", d);
	put_all(f, 12);
	remove_all(memcgs + 1, NR_MEMCGS - 1);
	is(lv_memcg_remove(parent), 0, "%s: removal: parent removed", d);
	finish(m, d);
}

int main(void)
{
	struct lv_config cfg;

	lv_config_init(&cfg);
	is(cfg.batch_policy, LV_BATCH_ARRIVAL, "the default policy is arrival order");
	cfg.batch_policy = (enum lv_batch_policy)3;
	is_str(lv_config_invalid(&cfg), "batch_policy", "an unknown policy is refused");
	for (unsigned int p = 0; p < 3; p++) {
		test_order(p, LV_LOCK_LRUVEC);
		test_order(p, LV_LOCK_NODE);
		test_scope(p, true);
		test_scope(p, false);
		test_drains(p, LV_DISABLE_SWEEP);
		test_drains(p, LV_DISABLE_RCU);
		test_drains(p, LV_DISABLE_RCU_EXPEDITED);
		test_removal(p);
	}
	return done_testing();
}
