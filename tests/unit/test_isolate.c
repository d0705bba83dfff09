// SPDX-License-Identifier: LGPL-2.1-or-later
/* Isolation and putback: lv_folio_isolate_lru / lv_folio_putback_lru, their errors, the
 * isolated count, abandoning an isolated folio, and a putback racing a second add. */
#include "lvtest.h"

#include <pthread.h>

#define S(item) nstat(m, (item))

static struct lv_machine *iso_machine(void)
{
	struct lv_config cfg = small_config();

	cfg.metadata_only = true;
	return new_machine(&cfg);
}

static void test_isolate_errors(void)
{
	struct lv_machine *m = iso_machine();
	struct lv_folio *f = alloc_or_bail(m, 0, 0, NULL, 0);

	is(lv_folio_isolate_lru(f), -EBUSY, "isolate a never-added folio -> -EBUSY");
	is(lv_folio_ref_count(f), 1, "the failed isolation took no reference");
	ok(!lv_folio_test(f, LV_PG_ISOLATED), "not marked isolated");
	is(lv_folio_putback_lru(f), -EINVAL, "putback of a never-isolated folio -> -EINVAL");
	ok(!lv_folio_test(f, LV_PG_LRU), "the refused putback did not add it");

	lv_folio_add_lru(f);
	is(lv_folio_isolate_lru(f), -EBUSY, "isolate a folio still in the lru_add batch -> -EBUSY");
	is(lv_folio_putback_lru(f), -EINVAL, "putback of a queued folio -> -EINVAL");
	lv_lru_add_drain(m);
	is(S(LV_NR_INACTIVE_FILE), 1, "the folio was added exactly once");
	is(lv_folio_putback_lru(f), -EINVAL, "putback of an on-LRU folio -> -EINVAL");
	is(lv_folio_ref_count(f), 1, "refcount untouched by the refusals");
	is(S(LV_NR_ISOLATED), 0, "nothing isolated");
	check_ok(m, "isolate errors");
	lv_folio_put(f);
	finish(m, "isolate-errors machine");
}

static void test_isolate_putback(void)
{
	struct lv_machine *m = iso_machine();
	struct lv_memcg *mg = lv_memcg_create(m, NULL, "iso");
	struct lv_folio *f = alloc_or_bail(m, 0, 2, mg, LV_FOLIO_ANON);
	struct lv_folio *g = alloc_or_bail(m, 0, 0, mg, 0);

	lv_folio_add_lru(f);
	lv_folio_add_lru(g);
	lv_lru_add_drain(m);
	lv_folio_activate(g);
	lv_lru_add_drain(m);
	is(S(LV_NR_INACTIVE_ANON), 4, "setup: 4 inactive anon pages");
	is(S(LV_NR_ACTIVE_FILE), 1, "setup: 1 active file page");

	is(lv_folio_isolate_lru(f), 0, "isolate f -> 0");
	ok(!lv_folio_test(f, LV_PG_LRU), "isolated: PG_lru clear");
	ok(lv_folio_test(f, LV_PG_ISOLATED), "isolated: LV_PG_ISOLATED");
	is(lv_folio_ref_count(f), 2, "isolated: refcount + 1");
	is(S(LV_NR_INACTIVE_ANON), 0, "isolated: off the list");
	is(S(LV_NR_ISOLATED), 4, "isolated: node LV_NR_ISOLATED 4");
	is(lv_memcg_stat(mg, LV_NR_ISOLATED), 4, "isolated: memcg LV_NR_ISOLATED 4");
	is(lv_memcg_usage(mg), 5, "isolation keeps the charge");
	ok(lv_folio_memcg(f) == mg, "isolated: still bound to its memcg");
	is(lv_folio_isolate_lru(f), -EBUSY, "second isolate -> -EBUSY");
	is(lv_folio_ref_count(f), 2, "second isolate took no reference");
	is(lv_folio_add_lru(f), -EINVAL, "adding an isolated folio -> -EINVAL");
	check_ok(m, "with an isolated folio");

	is(lv_folio_isolate_lru(g), 0, "isolate the active folio g");
	ok(lv_folio_test(g, LV_PG_ACTIVE), "isolation leaves PG_active for the caller");
	is(S(LV_NR_ACTIVE_FILE), 0, "g off the active list");
	is(S(LV_NR_ISOLATED), 5, "5 pages isolated");

	is(lv_folio_putback_lru(f), 0, "putback f -> 0");
	ok(!lv_folio_test(f, LV_PG_ISOLATED), "putback clears LV_PG_ISOLATED");
	is(S(LV_NR_ISOLATED), 1, "putback: isolated count drops by 4");
	is(lv_folio_putback_lru(f), -EINVAL, "second putback -> -EINVAL");
	lv_lru_add_drain(m);
	ok(lv_folio_test(f, LV_PG_LRU), "after the drain: back on the LRU");
	is(lv_folio_ref_count(f), 1, "after the drain: isolation reference dropped");
	is(S(LV_NR_INACTIVE_ANON), 4, "counters restored: inactive anon 4");

	is(lv_folio_putback_lru(g), 0, "putback g");
	lv_lru_add_drain(m);
	ok(lv_folio_test(g, LV_PG_ACTIVE) && lv_folio_test(g, LV_PG_LRU),
	   "g back on the active list");
	is(S(LV_NR_ACTIVE_FILE), 1, "counters restored: active file 1");
	is(S(LV_NR_ISOLATED), 0, "nothing isolated");
	is(lv_memcg_stat(mg, LV_NR_ISOLATED), 0, "memcg: nothing isolated");

	/* Isolate again after a round trip, and on a batch-1 style immediate putback. */
	is(lv_folio_isolate_lru(f), 0, "isolate f again");
	lv_lru_cache_disable(m);
	is(lv_folio_putback_lru(f), 0, "putback with the cache disabled");
	ok(lv_folio_test(f, LV_PG_LRU), "disabled cache: back on the LRU at once");
	is(lv_folio_ref_count(f), 1, "disabled cache: isolation reference dropped at once");
	lv_lru_cache_enable(m);
	check_ok(m, "after putbacks");
	lv_folio_put(f);
	lv_folio_put(g);
	is(lv_memcg_remove(mg), 0, "remove iso");
	finish(m, "isolate machine");
}

static void test_abandon(void)
{
	struct lv_machine *m = iso_machine();
	struct lv_memcg *mg = lv_memcg_create(m, NULL, "abandon");
	struct lv_folio *f = alloc_or_bail(m, 0, 3, mg, 0);
	struct lv_folio *u = alloc_or_bail(m, 0, 0, mg, 0);

	lv_folio_set_state(u, LV_PG_MLOCKED, true);
	lv_folio_add_lru(f);
	lv_folio_add_lru(u);
	lv_lru_add_drain(m);
	is(S(LV_NR_UNEVICTABLE), 1, "setup: u unevictable");
	is(lv_folio_isolate_lru(f), 0, "isolate f (8 pages)");
	is(lv_folio_isolate_lru(u), 0, "isolate the unevictable u");
	is(S(LV_NR_UNEVICTABLE), 0, "u uncounted while isolated");
	is(S(LV_NR_ISOLATED), 9, "9 pages isolated");
	lv_folio_put(f);
	is(lv_folio_ref_count(f), 1, "caller's reference dropped; isolation's remains");
	is(S(LV_NR_FREE), SMALL_PAGES - 9, "still allocated");
	check_ok(m, "isolated folio held only by its isolation reference");
	lv_folio_put(f); /* abandon: drop the isolation reference too */
	is(S(LV_NR_ISOLATED), 1, "abandoned folio not counted isolated");
	is(S(LV_NR_FREE), SMALL_PAGES - 1, "abandoned folio freed");
	is(lv_memcg_usage(mg), 1, "and uncharged");
	lv_folio_put(u);
	lv_folio_put(u);
	is(S(LV_NR_ISOLATED), 0, "LV_NR_ISOLATED back to 0");
	is(lv_memcg_stat(mg, LV_NR_ISOLATED), 0, "memcg LV_NR_ISOLATED back to 0");
	is(S(LV_NR_UNEVICTABLE), 0, "unevictable count still 0");
	is(lv_memcg_remove(mg), 0, "remove abandon");
	finish(m, "abandon machine");
}

/* Isolation wins the pin over a queued request: the request is skipped at the drain. */
static void test_isolate_vs_queued_request(void)
{
	struct lv_machine *m = iso_machine();
	struct lv_folio *f = alloc_or_bail(m, 0, 0, NULL, 0);
	struct lv_folio *g = alloc_or_bail(m, 0, 0, NULL, LV_FOLIO_ANON);

	lv_folio_add_lru(f);
	lv_folio_add_lru(g);
	lv_lru_add_drain(m);
	lv_folio_activate(f);	   /* queued */
	lv_folio_mark_lazyfree(g); /* queued */
	is(lv_folio_isolate_lru(f), 0, "isolate a folio with a queued activate -> 0");
	is(lv_folio_isolate_lru(g), 0, "isolate a folio with a queued lazyfree -> 0");
	lv_lru_add_drain(m);
	ok(!lv_folio_test(f, LV_PG_LRU) && !lv_folio_test(f, LV_PG_ACTIVE),
	   "the drain skipped the isolated folio's activate");
	ok(!lv_folio_test(g, LV_PG_LRU) && lv_folio_test(g, LV_PG_SWAPBACKED),
	   "the drain skipped the isolated folio's lazyfree");
	is(S(LV_PGACTIVATE) + S(LV_PGLAZYFREE), 0, "no events for skipped requests");
	is(lv_folio_ref_count(f), 2,
	   "the request's reference was dropped (caller + isolation remain)");
	is(S(LV_NR_ISOLATED), 2, "both still isolated");
	check_ok(m, "isolated with skipped requests");
	is(lv_folio_putback_lru(f), 0, "putback f");
	is(lv_folio_putback_lru(g), 0, "putback g");
	lv_lru_add_drain(m);
	is(S(LV_NR_INACTIVE_FILE), 1, "f back on the inactive file list");
	is(S(LV_NR_INACTIVE_ANON), 1, "g back on the inactive anon list");
	lv_folio_put(f);
	lv_folio_put(g);
	finish(m, "queued-request machine");
}

/* Isolation works the same in the node-lock design and with memcg disabled. */
static void test_designs(void)
{
	for (int v = 0; v < 2; v++) {
		struct lv_config cfg = small_config();
		struct lv_machine *m;
		struct lv_folio *f;
		const char *name = v ? "memcg disabled" : "node lock";

		if (v)
			cfg.memcg_disabled = true;
		else
			cfg.lock_design = LV_LOCK_NODE;
		m = new_machine(&cfg);
		f = alloc_or_bail(m, 0, 1, NULL, 0);
		lv_folio_add_lru(f);
		lv_lru_add_drain_all(m);
		is(lv_folio_isolate_lru(f), 0, "%s: isolate", name);
		is(S(LV_NR_ISOLATED), 2, "%s: 2 pages isolated", name);
		is(S(LV_NR_INACTIVE_FILE), 0, "%s: off the list", name);
		is(lv_folio_putback_lru(f), 0, "%s: putback", name);
		lv_lru_add_drain_all(m);
		is(S(LV_NR_INACTIVE_FILE), 2, "%s: back on the list", name);
		is(S(LV_NR_ISOLATED), 0, "%s: nothing isolated", name);
		lv_folio_put(f);
		finish(m, name);
	}
}

/*
 * A putback hands the folio from its isolator back to the LRU in one step: an add racing it
 * must always be refused. A putback that cleared PG_isolated before claiming the folio for
 * the LRU would let an add in between queue it a second time (linked twice).
 */
struct add_racer {
	struct lv_folio *folio;
	int stop;
	unsigned long tries, accepted;
};

static void *add_racer_thread(void *arg)
{
	struct add_racer *r = arg;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		r->accepted += lv_folio_add_lru(r->folio) == 0;
		r->tries++;
	}
	return NULL;
}

static void test_putback_vs_add(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m;
	struct add_racer r = { 0 };
	unsigned long cycles = 0;
	pthread_t th;

	cfg.metadata_only = true;
	cfg.nr_cpu_slots = 2;
	m = new_machine(&cfg);
	r.folio = alloc_or_bail(m, 0, 0, NULL, 0);
	lv_folio_add_lru(r.folio);
	lv_lru_add_drain_all(m);
	if (pthread_create(&th, NULL, add_racer_thread, &r))
		BAIL_OUT("pthread_create failed");
	for (double end = now() + 0.5; now() < end;) {
		if (lv_folio_isolate_lru(r.folio) == 0) {
			lv_folio_putback_lru(r.folio);
			cycles++;
		}
		lv_lru_add_drain_all(m);
	}
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	diag("putback vs add: %lu isolate/putback cycles, %lu adds tried", cycles, r.tries);
	ok(cycles > 100 && r.tries > 100, "putback vs add: both sides ran");
	is(r.accepted, 0, "putback vs add: no add accepted while the folio belonged to the LRU");
	lv_lru_add_drain_all(m);
	is(S(LV_NR_ISOLATED), 0, "putback vs add: nothing isolated");
	check_ok(m, "putback vs add");
	lv_folio_put(r.folio);
	finish(m, "putback vs add");
}

int main(void)
{
	test_isolate_errors();
	test_isolate_putback();
	test_abandon();
	test_isolate_vs_queued_request();
	test_designs();
	test_putback_vs_add();
	return done_testing();
}
