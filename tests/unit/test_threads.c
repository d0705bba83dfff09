// SPDX-License-Identifier: LGPL-2.1-or-later
/* Small concurrency properties (not the torture test): lv_lru_add_drain_all covers every add
 * that returned before it began, concurrent drain_all callers coalesce, partly filled batches
 * of exited threads are not lost, and lv_lru_cache_disable stops batching for adds that start
 * after it returns. Real per-CPU slots (nr_cpu_slots 0). */
#include "lvtest.h"

#include <pthread.h>
#include <sched.h>
#include <time.h>

#define ADDERS 4

static struct lv_machine *lv_machine_of_test; /* for the requester's local drains */

/*
 * Threads of one scenario leave together: liburcu-bp reuses the reader slot of an exited
 * thread for a thread that registers later, an ordering ThreadSanitizer cannot see (a false
 * report). Waiting here keeps every registration before any exit.
 */
static pthread_barrier_t exit_together;

static void leave_together(void)
{
	pthread_barrier_wait(&exit_together);
}

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
	is(missed, 0,
	   "drain_all while adding: every add completed before the call is on an LRU "
	   "(%d checks over %d rounds)",
	   checked, rounds);

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
	int *stop;
	pthread_barrier_t *start;
	uint64_t calls; /* this thread's lv_lru_add_drain_all calls */
};

static void *drainer(void *p)
{
	struct drain_arg *a = p;

	pthread_barrier_wait(a->start);
	while (!__atomic_load_n(a->stop, __ATOMIC_ACQUIRE)) {
		lv_lru_add_drain_all(a->m);
		a->calls++;
	}
	leave_together();
	return NULL;
}

static void *churner(void *p)
{
	struct drain_arg *a = p;
	struct lv_folio *fs[8];

	pthread_barrier_wait(a->start);
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
	leave_together();
	return NULL;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * Coalescing needs two callers to overlap, which the scheduler decides: run until a few
 * calls were covered by another caller's sweep (typically milliseconds), or 3 s at most.
 */
static void test_coalesce(void)
{
	struct lv_machine *m = thread_machine(LV_DISABLE_SWEEP);
	enum { DRAINERS = 4, CHURNERS = 2 };
	pthread_t d[DRAINERS], c[CHURNERS];
	struct drain_arg da[DRAINERS + CHURNERS];
	pthread_barrier_t start;
	int stop = 0;
	uint64_t calls0, sweeps0, calls, sweeps, made = 0, t0;

	lv_drain_all_stats(m, &calls0, &sweeps0);
	pthread_barrier_init(&start, NULL, DRAINERS + CHURNERS + 1);
	for (int k = 0; k < DRAINERS + CHURNERS; k++)
		da[k] = (struct drain_arg){ m, &stop, &start, 0 };
	pthread_barrier_init(&exit_together, NULL, DRAINERS + CHURNERS);
	for (int k = 0; k < CHURNERS; k++)
		pthread_create(&c[k], NULL, churner, &da[DRAINERS + k]);
	for (int k = 0; k < DRAINERS; k++)
		pthread_create(&d[k], NULL, drainer, &da[k]);
	pthread_barrier_wait(&start);
	t0 = now_ms();
	do {
		struct timespec ts = { 0, 5 * 1000 * 1000 };

		nanosleep(&ts, NULL);
		lv_drain_all_stats(m, &calls, &sweeps);
	} while ((calls - calls0) - (sweeps - sweeps0) < 20 && now_ms() - t0 < 3000);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (int k = 0; k < DRAINERS; k++) {
		pthread_join(d[k], NULL);
		made += da[k].calls;
	}
	for (int k = 0; k < CHURNERS; k++)
		pthread_join(c[k], NULL);
	pthread_barrier_destroy(&start);
	pthread_barrier_destroy(&exit_together);
	lv_drain_all_stats(m, &calls, &sweeps);
	is(calls - calls0, made, "every drain_all call counted (%llu)", (unsigned long long)made);
	ok(sweeps - sweeps0 < calls - calls0,
	   "concurrent callers coalesce: %llu sweeps < %llu calls",
	   (unsigned long long)(sweeps - sweeps0), (unsigned long long)(calls - calls0));
	ok(sweeps - sweeps0 > 0, "somebody swept");
	lv_lru_add_drain_all(m);
	is(nstat(m, LV_NR_INACTIVE_FILE) + nstat(m, LV_NR_ACTIVE_FILE), 0,
	   "all churned folios freed");
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
	leave_together();
	return NULL;
}

static void test_disable_while_adding(enum lv_disable_mode mode, const char *name)
{
	struct lv_machine *m = thread_machine(mode);
	enum { THREADS = 3 };
	struct dis_arg args[THREADS];
	pthread_t t[THREADS];
	int disabled = 0, stop = 0, late = 0, miss = 0, main_miss = 0;

	pthread_barrier_init(&exit_together, NULL, THREADS);
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
	pthread_barrier_destroy(&exit_together);
	is(main_miss, 0, "%s: after disable returns, a new add is on the LRU at once", name);
	is(miss, 0,
	   "%s: other threads' adds begun after disable returned are on the LRU at once "
	   "(%d such adds)",
	   name, late);
	lv_lru_add_drain_all(m);
	is(nstat(m, LV_NR_INACTIVE_FILE) + nstat(m, LV_NR_INACTIVE_ANON), 0,
	   "%s: everything released", name);
	finish(m, name);
}

/* ---- (5) moves racing with LRU requests keep every invariant --------------------------- */

enum { MV_FOLIOS = 64 };

struct mv_arg {
	struct lv_folio **fs;
	struct lv_memcg *to[2];
	unsigned int seed;
	int iters;
	int bad; /* unexpected return values */
	int moved;
};

static unsigned int rnd(unsigned int *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 16;
}

static void *mover(void *p)
{
	struct mv_arg *a = p;

	for (int i = 0; i < a->iters; i++) {
		struct lv_folio *f = a->fs[rnd(&a->seed) % MV_FOLIOS];
		int rc = lv_folio_move_memcg(f, a->to[rnd(&a->seed) % 2]);

		if (rc == 0)
			a->moved++;
		else if (rc != -EBUSY)
			a->bad++;
	}
	leave_together();
	return NULL;
}

static void *requester(void *p)
{
	struct mv_arg *a = p;

	for (int i = 0; i < a->iters; i++) {
		struct lv_folio *f = a->fs[rnd(&a->seed) % MV_FOLIOS];

		switch (rnd(&a->seed) % 6) {
		case 0:
			lv_folio_activate(f);
			break;
		case 1:
			lv_folio_deactivate(f);
			break;
		case 2:
			lv_folio_mark_accessed(f);
			break;
		case 3:
			lv_deactivate_file_folio(f);
			break;
		case 4:
			lv_folio_rotate_reclaimable(f);
			break;
		default:
			if (lv_folio_isolate_lru(f) == 0 && lv_folio_putback_lru(f) != 0)
				a->bad++;
		}
		if (i % 100 == 0)
			lv_lru_add_drain(lv_machine_of_test);
	}
	leave_together();
	return NULL;
}

static void test_moves_race_requests(enum lv_lock_design design, const char *name)
{
	struct lv_config cfg;
	struct lv_machine *m;
	struct lv_memcg *a, *b;
	struct lv_folio *fs[MV_FOLIOS];
	struct mv_arg args[4];
	pthread_t t[4];
	int bad = 0, moved = 0, in_a = 0, in_b = 0, other = 0;
	uint64_t listed_a = 0, listed_b = 0;

	lv_config_init(&cfg);
	cfg.node_mem_bytes = 16 * MiB;
	cfg.metadata_only = true;
	cfg.lock_design = design;
	cfg.batch_size = 7;
	m = new_machine(&cfg);
	lv_machine_of_test = m;
	a = lv_memcg_create(m, NULL, "a");
	b = lv_memcg_create(m, NULL, "b");
	for (int i = 0; i < MV_FOLIOS; i++) {
		fs[i] = alloc_or_bail(m, 0, i % 4 ? 0 : 1, i % 2 ? a : b,
				      i % 3 ? 0 : LV_FOLIO_ANON);
		lv_folio_add_lru(fs[i]);
	}
	lv_lru_add_drain_all(m);
	pthread_barrier_init(&exit_together, NULL, 4);
	for (int k = 0; k < 4; k++) {
		args[k] = (struct mv_arg){ fs, { a, b }, 7u * (unsigned int)k + 1, 3000, 0, 0 };
		pthread_create(&t[k], NULL, k < 2 ? mover : requester, &args[k]);
	}
	for (int k = 0; k < 4; k++) {
		pthread_join(t[k], NULL);
		bad += args[k].bad;
		moved += args[k].moved;
	}
	pthread_barrier_destroy(&exit_together);
	lv_lru_add_drain_all(m);
	is(bad, 0, "%s: moves return 0 or -EBUSY, putbacks succeed", name);
	ok(moved > 0, "%s: some moves succeeded (%d)", name, moved);
	for (int i = 0; i < MV_FOLIOS; i++) {
		struct lv_memcg *mg = lv_folio_memcg(fs[i]);
		int nr = (int)lv_folio_nr_pages(fs[i]);

		in_a += mg == a ? nr : 0;
		in_b += mg == b ? nr : 0;
		other += mg != a && mg != b;
	}
	for (int it = LV_NR_INACTIVE_ANON; it <= LV_NR_UNEVICTABLE; it++) {
		listed_a += lv_memcg_stat(a, it);
		listed_b += lv_memcg_stat(b, it);
	}
	is(other, 0, "%s: every folio is bound to a or b", name);
	is(lv_memcg_usage(a), in_a, "%s: a's usage = pages bound to a", name);
	is(lv_memcg_usage(b), in_b, "%s: b's usage = pages bound to b", name);
	is(listed_a, in_a, "%s: a's lists hold exactly its folios", name);
	is(listed_b, in_b, "%s: b's lists hold exactly its folios", name);
	ok(lv_memcg_stat(a, LV_PGMOVED) + lv_memcg_stat(b, LV_PGMOVED) > 0 &&
		   lv_memcg_stat(a, LV_PGMOVED) + lv_memcg_stat(b, LV_PGMOVED) <=
			   2 * (uint64_t)moved,
	   "%s: pgmoved counted (at most 2 pages per successful call)", name);
	check_ok(m, name);
	lv_folios_put(fs, MV_FOLIOS);
	is(lv_memcg_remove(a), 0, "%s: remove a", name);
	is(lv_memcg_remove(b), 0, "%s: remove b", name);
	finish(m, name);
}

int main(void)
{
	test_drain_all_covers();
	test_coalesce();
	test_exited_threads();
	test_disable_while_adding(LV_DISABLE_SWEEP, "sweep disable");
	test_disable_while_adding(LV_DISABLE_RCU, "rcu disable");
	test_disable_while_adding(LV_DISABLE_RCU_EXPEDITED, "rcu-expedited disable");
	test_moves_race_requests(LV_LOCK_LRUVEC, "moves vs requests (lruvec lock)");
	test_moves_race_requests(LV_LOCK_NODE, "moves vs requests (node lock)");
	return done_testing();
}
