// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Lock contention by call site (lv_lock_sites()): a contention made by construction — the test
 * holds a lock taken through the internal API, a thread asks for it through a known path, and
 * the test lets go only once the futex says that thread waits — is recorded under the kernel
 * function that path stands for, in the lock's class, once; cfg.no_lock_sites records nothing;
 * after a multi-threaded run every class's sites add up to the class's contended count; the
 * reset clears the sites; the answer is sorted and bounded by its room.
 */
#include "internal.h"

#include "lvtest.h"

#include <pthread.h>
#include <sched.h>

/* ---- one contention by construction ------------------------------------------------------ */

struct waiter {
	void (*fn)(struct waiter *w);
	struct lv_machine *m;
	struct lv_memcg *memcg;
	struct lv_folio *folio;
	int ret;
};

static void *waiter_main(void *arg)
{
	struct waiter *w = arg;

	w->fn(w);
	return NULL;
}

/*
 * contend - run @w->fn in a thread while this thread holds @l, and let go only once that
 * thread waits for it (the futex backend marks a waiter before it sleeps), so that its
 * acquisition is contended whatever the scheduler does.
 */
static void contend(struct lv_lock *l, struct waiter *w)
{
	pthread_t t;

	lv_lock_acquire(l);
	if (pthread_create(&t, NULL, waiter_main, w))
		BAIL_OUT("pthread_create failed");
	while (!lv_lock_is_contended(l))
		sched_yield();
	lv_lock_release(l);
	pthread_join(t, NULL);
}

static void do_isolate(struct waiter *w)
{
	w->ret = lv_folio_isolate_lru(w->folio);
}

static void do_activate(struct waiter *w)
{
	lv_folio_activate(w->folio);
}

static void do_reclaim(struct waiter *w)
{
	w->ret = (int)lv_memcg_reclaim(w->memcg, 1);
}

static uint64_t class_contended(struct lv_machine *m, enum lv_lock_class cls)
{
	struct lv_lock_stat s;

	lv_lock_stats(m, cls, &s);
	return s.contended;
}

static struct lv_machine *sites_machine(bool no_sites)
{
	struct lv_config cfg = small_config();

	cfg.metadata_only = true;
	cfg.lock_backend = LV_BACKEND_FUTEX; /* lv_lock_is_contended() sees waiters */
	cfg.no_lock_sites = no_sites;
	return new_machine(&cfg);
}

/* only_site - the machine recorded exactly one site: @caller, @cls, once. */
static void only_site(struct lv_machine *m, const char *caller, enum lv_lock_class cls,
		      const char *what)
{
	struct lv_lock_site_stat s[4];
	size_t n = lv_lock_sites(m, s, 4);

	is(n, 1, "%s: one call site recorded", what);
	if (!n)
		return;
	is_str(s[0].caller, caller, "%s: the site is %s", what, caller);
	is(s[0].cls, cls, "%s: class %s", what, lv_lock_class_name(cls));
	is(s[0].contended, 1, "%s: contended once", what);
	ok(s[0].wait_total_ns > 0 && s[0].wait_max_ns == s[0].wait_total_ns,
	   "%s: its wait is timed (%llu ns) and is the longest", what,
	   (unsigned long long)s[0].wait_total_ns);
	is(class_contended(m, cls), 1, "%s: the class table counts the same contention", what);
}

static void test_known_sites(void)
{
	struct lv_machine *m = sites_machine(false);
	struct lv_memcg *mg = lv_memcg_create(m, NULL, "sites");
	struct lv_folio *f = alloc_or_bail(m, 0, 0, mg, 0);
	struct lruvec *lruvec = mem_cgroup_lruvec(mg, m->nodes[0]);
	struct waiter w = { .m = m, .memcg = mg, .folio = f };
	struct cpu_slot *slot;

	lv_folio_add_lru(f);
	lv_lru_add_drain(m);
	lv_lock_stats_reset(m);
	is(lv_lock_sites(m, NULL, 0), 0, "after the reset: no site");

	/* lv_folio_isolate_lru() locks through folio_lruvec_lock(), a wrapper: its caller's. */
	w.fn = do_isolate;
	contend(lruvec->lru_lock, &w);
	is(w.ret, 0, "the waiter isolated the folio");
	only_site(m, "folio_isolate_lru", LV_LOCK_CLASS_LRUVEC, "isolate");
	is(lv_folio_putback_lru(f), 0, "putback");
	lv_lru_add_drain(m);

	/* lv_folio_activate() queues through this_cpu_slot_lock(): the one slot is held. */
	lv_lock_stats_reset(m);
	slot = this_cpu_slot_lock(m);
	lv_lock_release(&slot->lock);
	w.fn = do_activate;
	contend(&slot->lock, &w);
	only_site(m, "folio_batch_add_and_move", LV_LOCK_CLASS_SLOT, "activate");
	lv_lru_add_drain(m);
	ok(lv_folio_test(f, LV_PG_ACTIVE), "the queued activation was applied");
	lv_folio_deactivate(f);
	lv_lru_add_drain(m);

	/* Memcg reclaim waits for the lock in shrink_inactive_list(), through reclaim_lock(). */
	lv_lock_stats_reset(m);
	w.fn = do_reclaim;
	contend(lruvec->lru_lock, &w);
	only_site(m, "shrink_inactive_list", LV_LOCK_CLASS_LRUVEC, "reclaim");

	lv_lock_stats_reset(m);
	is(lv_lock_sites(m, NULL, 0), 0, "lv_lock_stats_reset() clears the sites");
	lv_folio_put(f);
	lv_lru_add_drain_all(m);
	is(lv_memcg_remove(mg), 0, "remove the memcg");
	finish(m, "known sites");
}

static void test_no_lock_sites(void)
{
	struct lv_machine *m = sites_machine(true);
	struct lv_folio *f = alloc_or_bail(m, 0, 0, NULL, 0);
	struct lruvec *lruvec = folio_lruvec(f); /* no memcg: constant */
	struct waiter w = { .m = m, .folio = f, .fn = do_isolate };
	struct lv_lock_site_stat s;

	lv_folio_add_lru(f);
	lv_lru_add_drain(m);
	lv_lock_stats_reset(m);
	contend(lruvec->lru_lock, &w);
	is(w.ret, 0, "no_lock_sites: the waiter isolated the folio");
	is(class_contended(m, LV_LOCK_CLASS_LRUVEC) + class_contended(m, LV_LOCK_CLASS_NODE), 1,
	   "no_lock_sites: the class table still counts the contention");
	is(lv_lock_sites(m, &s, 1), 0, "no_lock_sites: no site recorded");
	is(lv_folio_putback_lru(f), 0, "no_lock_sites: putback");
	lv_folio_put(f);
	lv_lru_add_drain_all(m);
	finish(m, "no_lock_sites");
}

/* ---- the sums after a multi-threaded run -------------------------------------------------- */

#define NR_CHURN   4
#define CHURN_OPS  4000
#define CHURN_KEEP 64

struct churner {
	struct lv_machine *m;
	struct lv_memcg *memcg;
	unsigned int id;
};

/* A tenant's life in miniature: faults, accesses, isolations, reclaim, frees. */
static void *churn_main(void *arg)
{
	struct churner *c = arg;
	struct lv_folio *keep[CHURN_KEEP] = { 0 };

	for (unsigned int i = 0; i < CHURN_OPS; i++) {
		struct lv_folio **slot = &keep[i % CHURN_KEEP];

		if (*slot) {
			if (i % 3 == 0 && lv_folio_isolate_lru(*slot) == 0)
				lv_folio_putback_lru(*slot);
			lv_folio_put(*slot);
		}
		*slot = lv_folio_alloc(c->m, 0, 0, c->memcg, i & 1 ? LV_FOLIO_ANON : 0);
		if (!*slot)
			continue;
		lv_folio_add_lru(*slot);
		lv_folio_mark_accessed(*slot);
		lv_folio_mark_accessed(*slot);
		if (i % 512 == c->id)
			lv_memcg_reclaim(c->memcg, 32);
	}
	for (unsigned int i = 0; i < CHURN_KEEP; i++)
		if (keep[i])
			lv_folio_put(keep[i]);
	return NULL;
}

static void test_sums(void)
{
	struct lv_config cfg = small_config();
	struct churner c[NR_CHURN];
	pthread_t t[NR_CHURN];
	struct lv_lock_site_stat *s, one[2];
	struct lv_memcg *mg[2];
	uint64_t sum[LV_NR_LOCK_CLASSES] = { 0 }, total = 0;
	struct lv_machine *m;
	size_t n, n2;
	bool sorted = true, all_equal = true;

	cfg.metadata_only = true;
	cfg.nr_cpu_slots = 2;
	m = new_machine(&cfg);
	mg[0] = lv_memcg_create(m, NULL, "a");
	mg[1] = lv_memcg_create(m, NULL, "b");
	for (unsigned int i = 0; i < NR_CHURN; i++) {
		c[i] = (struct churner){ m, mg[i % 2], i };
		if (pthread_create(&t[i], NULL, churn_main, &c[i]))
			BAIL_OUT("pthread_create failed");
	}
	for (unsigned int i = 0; i < NR_CHURN; i++)
		pthread_join(t[i], NULL);
	lv_lru_add_drain_all(m);

	n = lv_lock_sites(m, NULL, 0);
	s = calloc(n + 1, sizeof(*s));
	if (!s)
		BAIL_OUT("calloc failed");
	n2 = lv_lock_sites(m, s, n);
	is(n2, n, "the second reading finds the same %zu sites", n);
	for (size_t i = 0; i < n; i++) {
		ok(s[i].cls < LV_NR_LOCK_CLASSES && s[i].caller && s[i].contended,
		   "site %zu: %s (%s) contended %llu, wait %llu ns", i, s[i].caller,
		   lv_lock_class_name(s[i].cls), (unsigned long long)s[i].contended,
		   (unsigned long long)s[i].wait_total_ns);
		sum[s[i].cls] += s[i].contended;
		if (i && s[i].wait_total_ns > s[i - 1].wait_total_ns)
			sorted = false;
		for (size_t j = 0; j < i; j++)
			if (s[j].cls == s[i].cls && !strcmp(s[j].caller, s[i].caller))
				ok(0, "site %zu repeats site %zu (%s)", i, j, s[i].caller);
	}
	ok(sorted, "the sites are sorted by total wait, most first");
	for (int cls = 0; cls < LV_NR_LOCK_CLASSES; cls++) {
		uint64_t want = class_contended(m, (enum lv_lock_class)cls);

		total += want;
		if (sum[cls] != want) {
			all_equal = false;
			diag("class %s: sites %llu, class %llu", lv_lock_class_name(cls),
			     (unsigned long long)sum[cls], (unsigned long long)want);
		}
	}
	ok(all_equal, "every class's sites add up to its contended count (%llu in all)",
	   (unsigned long long)total);
	if (!total)
		diag("no contention in this run: the sums held trivially");
	memset(one, 0, sizeof(one));
	is(lv_lock_sites(m, one, 1), n, "with room for one: still the number of sites");
	ok(n == 0 || (one[0].caller == s[0].caller && one[0].cls == s[0].cls),
	   "with room for one: the site with the most wait");
	ok(one[1].caller == NULL, "with room for one: nothing stored past it");
	free(s);
	for (int i = 0; i < 2; i++)
		is(lv_memcg_remove(mg[i]), 0, "remove memcg %d", i);
	finish(m, "sums");
}

int main(void)
{
	test_known_sites();
	test_no_lock_sites();
	test_sums();
	return done_testing();
}
