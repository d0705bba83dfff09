// SPDX-License-Identifier: LGPL-2.1-or-later
/* Small concurrency properties (not the torture test): lv_lru_add_drain_all covers every add
 * that returned before it began, concurrent drain_all callers coalesce, partly filled batches
 * of exited threads are not lost, and lv_lru_cache_disable stops batching for adds that start
 * after it returns. Real per-CPU slots (nr_cpu_slots 0). */
#include "lvtest.h"

#include <pthread.h>
#include <sched.h>

#define ADDERS 4

static struct lv_machine *thread_machine(enum lv_disable_mode mode)
{
	struct lv_config cfg;

	lv_config_init(&cfg);
	cfg.node_mem_bytes = 64 * MiB;
	cfg.metadata_only = true;
	cfg.disable_mode = mode;
	/* At least two slots even on one CPU, so batches are spread. */
	cfg.nr_cpu_slots = 0;
	return new_machine(&cfg);
}

static bool on_lru(struct lv_folio *f)
{
	return lv_folio_test(f, LV_PG_LRU);
}

/* ---- (1) drain_all covers every add that returned before it --------------------------- */

struct add_arg {
	struct lv_machine *m;
	struct lv_folio **folios;
	int *added; /* set (release) after lv_folio_add_lru returned */
	int n;
	pthread_barrier_t *hold; /* if set: wait here before exiting */
	int errors;
};

static void *adder(void *p)
{
	struct add_arg *a = p;

	for (int i = 0; i < a->n; i++) {
		if (lv_folio_add_lru(a->folios[i]))
			a->errors++;
		if (a->added)
			__atomic_store_n(&a->added[i], 1, __ATOMIC_RELEASE);
		if (i % 64 == 0)
			sched_yield();
	}
	if (a->hold)
		pthread_barrier_wait(a->hold);
	return NULL;
}

static void test_drain_all_covers(void)
{
	struct lv_machine *m = thread_machine(LV_DISABLE_SWEEP);
	enum { PER = 1500 };
	struct lv_folio **fs = calloc(ADDERS * PER, sizeof(*fs));
	int *added = calloc(ADDERS * PER, sizeof(*added));
	struct add_arg args[ADDERS];
	pthread_t t[ADDERS];
	pthread_barrier_t hold;
	int missed = 0, checked = 0, rounds = 0, errors = 0, all_done;

	for (int i = 0; i < ADDERS * PER; i++)
		fs[i] = alloc_or_bail(m, 0, 0, NULL, i % 3 ? 0 : LV_FOLIO_ANON);
	pthread_barrier_init(&hold, NULL, ADDERS + 1);
	for (int k = 0; k < ADDERS; k++) {
		args[k] = (struct add_arg){ m, fs + k * PER, added + k * PER, PER, &hold, 0 };
		pthread_create(&t[k], NULL, adder, &args[k]);
	}
	/* While they add: every add seen complete before a drain_all must be on the LRU after. */
	do {
		int *snap = calloc(ADDERS * PER, sizeof(*snap));

		all_done = 1;
		for (int i = 0; i < ADDERS * PER; i++) {
			snap[i] = __atomic_load_n(&added[i], __ATOMIC_ACQUIRE);
			all_done &= snap[i];
		}
		lv_lru_add_drain_all(m);
		for (int i = 0; i < ADDERS * PER; i++)
			if (snap[i]) {
				checked++;
				missed += !on_lru(fs[i]);
			}
		free(snap);
		rounds++;
	} while (!all_done);
	is(missed, 0, "drain_all while adding: every add completed before the call is on an LRU "
		      "(%d checks over %d rounds)", checked, rounds);

	/* The adders are alive but idle (at the barrier): their batches are drained too. */
	lv_lru_add_drain_all(m);
	missed = 0;
	for (int i = 0; i < ADDERS * PER; i++)
		missed += !on_lru(fs[i]);
	is(missed, 0, "after the adds returned, one drain_all puts all %d folios on an LRU",
	   ADDERS * PER);
	is(nstat(m, LV_NR_INACTIVE_FILE) + nstat(m, LV_NR_INACTIVE_ANON), ADDERS * PER,
	   "list sizes count every folio once");
	pthread_barrier_wait(&hold);
	for (int k = 0; k < ADDERS; k++) {
		pthread_join(t[k], NULL);
		errors += args[k].errors;
	}
	is(errors, 0, "no add failed");
	check_ok(m, "drain_all covers");
	lv_folios_put(fs, ADDERS * PER);
	pthread_barrier_destroy(&hold);
	free(fs);
	free(added);
	finish(m, "drain_all machine");
}

/* ---- (2) concurrent drain_all callers coalesce ----------------------------------------- */

struct drain_arg {
	struct lv_machine *m;
	int loops;
	int *stop;
};

static void *drainer(void *p)
{
	struct drain_arg *a = p;

	for (int i = 0; i < a->loops; i++)
		lv_lru_add_drain_all(a->m);
	return NULL;
}

static void *churner(void *p)
{
	struct drain_arg *a = p;
	struct lv_folio *fs[8];

	while (!__atomic_load_n(a->stop, __ATOMIC_ACQUIRE)) {
		int n = 0;

		for (; n < 8; n++) {
			fs[n] = lv_folio_alloc(a->m, 0, 0, NULL, 0);
			if (!fs[n])
				break;
			lv_folio_add_lru(fs[n]);
		}
		for (int i = 0; i < n; i++)
			lv_folio_mark_accessed(fs[i]);
		lv_folios_put(fs, (size_t)n);
	}
	return NULL;
}

static void test_coalesce(void)
{
	struct lv_machine *m = thread_machine(LV_DISABLE_SWEEP);
	enum { DRAINERS = 4, LOOPS = 1500, CHURNERS = 2 };
	pthread_t d[DRAINERS], c[CHURNERS];
	int stop = 0;
	struct drain_arg da = { m, LOOPS, &stop };
	uint64_t calls0, sweeps0, calls, sweeps;

	lv_drain_all_stats(m, &calls0, &sweeps0);
	for (int k = 0; k < CHURNERS; k++)
		pthread_create(&c[k], NULL, churner, &da);
	for (int k = 0; k < DRAINERS; k++)
		pthread_create(&d[k], NULL, drainer, &da);
	for (int k = 0; k < DRAINERS; k++)
		pthread_join(d[k], NULL);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (int k = 0; k < CHURNERS; k++)
		pthread_join(c[k], NULL);
	lv_drain_all_stats(m, &calls, &sweeps);
	is(calls - calls0, DRAINERS * LOOPS, "every drain_all call counted");
	ok(sweeps - sweeps0 < calls - calls0, "concurrent callers coalesce: %llu sweeps < %llu calls",
	   (unsigned long long)(sweeps - sweeps0), (unsigned long long)(calls - calls0));
	ok(sweeps - sweeps0 > 0, "somebody swept");
	lv_lru_add_drain_all(m);
	is(nstat(m, LV_NR_INACTIVE_FILE) + nstat(m, LV_NR_ACTIVE_FILE), 0, "all churned folios freed");
	finish(m, "coalesce machine");
}

/* ---- (3) exited threads' partly filled batches ------------------------------------------ */

static void test_exited_threads(void)
{
	struct lv_machine *m = thread_machine(LV_DISABLE_SWEEP);
	enum { THREADS = 8, PER = 5 };
	struct lv_folio *fs[THREADS * PER];
	struct add_arg args[THREADS];
	pthread_t t[THREADS];
	int missed = 0, queued = 0;

	ok(PER < (int)lv_machine_config(m)->batch_size, "each thread adds fewer than a batch");
	for (int i = 0; i < THREADS * PER; i++)
		fs[i] = alloc_or_bail(m, 0, 0, NULL, LV_FOLIO_ANON);
	for (int k = 0; k < THREADS; k++) {
		args[k] = (struct add_arg){ m, fs + k * PER, NULL, PER, NULL, 0 };
		pthread_create(&t[k], NULL, adder, &args[k]);
		pthread_join(t[k], NULL); /* one at a time: batches stay partly filled */
	}
	for (int i = 0; i < THREADS * PER; i++)
		queued += !on_lru(fs[i]);
	ok(queued > 0, "some folios are still queued after their threads exited (%d)", queued);
	lv_lru_add_drain_all(m);
	for (int i = 0; i < THREADS * PER; i++)
		missed += !on_lru(fs[i]);
	is(missed, 0, "a later drain_all puts all %d folios on the LRU", THREADS * PER);
	is(nstat(m, LV_NR_INACTIVE_ANON), THREADS * PER, "all counted");
	check_ok(m, "exited threads");
	lv_folios_put(fs, THREADS * PER);
	finish(m, "exited-threads machine");
}

/* ---- (4) lru_cache_disable while others add ---------------------------------------------- */

struct dis_arg {
	struct lv_machine *m;
	int *disabled; /* 1 after lv_lru_cache_disable returned, 0 after enable began */
	int *stop;
	int late;      /* adds begun after disable returned */
	int late_miss; /* of those, not on the LRU when add returned */
};

static void *dis_adder(void *p)
{
	struct dis_arg *a = p;

	while (!__atomic_load_n(a->stop, __ATOMIC_ACQUIRE)) {
		struct lv_folio *f = lv_folio_alloc(a->m, 0, 0, NULL, 0);
		int was_disabled;

		if (!f)
			continue;
		was_disabled = __atomic_load_n(a->disabled, __ATOMIC_ACQUIRE);
		lv_folio_add_lru(f);
		if (was_disabled && __atomic_load_n(a->disabled, __ATOMIC_ACQUIRE)) {
			a->late++;
			a->late_miss += !on_lru(f);
		}
		lv_folio_put(f);
	}
	return NULL;
}

static void test_disable_while_adding(enum lv_disable_mode mode, const char *name)
{
	struct lv_machine *m = thread_machine(mode);
	enum { THREADS = 3 };
	struct dis_arg args[THREADS];
	pthread_t t[THREADS];
	int disabled = 0, stop = 0, late = 0, miss = 0, main_miss = 0;

	for (int k = 0; k < THREADS; k++) {
		args[k] = (struct dis_arg){ m, &disabled, &stop, 0, 0 };
		pthread_create(&t[k], NULL, dis_adder, &args[k]);
	}
	for (int round = 0; round < 20; round++) {
		sched_yield();
		lv_lru_cache_disable(m);
		__atomic_store_n(&disabled, 1, __ATOMIC_RELEASE);
		for (int i = 0; i < 10; i++) {
			struct lv_folio *f = alloc_or_bail(m, 0, 0, NULL, LV_FOLIO_ANON);

			lv_folio_add_lru(f);
			main_miss += !on_lru(f);
			lv_folio_put(f);
		}
		for (int i = 0; i < 200; i++)
			sched_yield();
		__atomic_store_n(&disabled, 0, __ATOMIC_RELEASE);
		lv_lru_cache_enable(m);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (int k = 0; k < THREADS; k++) {
		pthread_join(t[k], NULL);
		late += args[k].late;
		miss += args[k].late_miss;
	}
	is(main_miss, 0, "%s: after disable returns, a new add is on the LRU at once", name);
	is(miss, 0, "%s: other threads' adds begun after disable returned are on the LRU at once "
		    "(%d such adds)", name, late);
	lv_lru_add_drain_all(m);
	is(nstat(m, LV_NR_INACTIVE_FILE) + nstat(m, LV_NR_INACTIVE_ANON), 0, "%s: everything released", name);
	finish(m, name);
}

int main(void)
{
	test_drain_all_covers();
	test_coalesce();
	test_exited_threads();
	test_disable_while_adding(LV_DISABLE_SWEEP, "sweep disable");
	test_disable_while_adding(LV_DISABLE_RCU, "rcu disable");
	return done_testing();
}
