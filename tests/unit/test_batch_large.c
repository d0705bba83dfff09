// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cfg.batch_large and the per-CPU batches: by default (false) a large folio never waits in a
 * batch, so an add, an activation, a deactivation, a rotation, a lazyfree, a huge fault and
 * an mlock have it on its list when the call returns; with true it waits in the batch like a
 * small folio until a drain. And lv_lru_add_drain_all() drains the caller's own slot before
 * it waits for the drain mutex: made visible by holding that mutex while a caller drains.
 */
#include "internal.h" /* the drain gate's mutex */

#include "lvtest.h"

#include <pthread.h>
#include <sched.h>

#define PAGE  LV_PAGE_SIZE
#define ORDER 4
#define NR    (1u << ORDER)
#define HSIZE (LV_PAGE_SIZE << LV_MAX_ORDER)

static struct lv_config batch_config(bool batch_large)
{
	struct lv_config cfg = small_config();

	cfg.batch_large = batch_large;
	return cfg;
}

static const char *mode(bool batch_large)
{
	return batch_large ? "batch_large=true" : "batch_large=false";
}

/* Each request on a large file folio: on its list at once, or only after a drain. */
static void test_requests(bool large)
{
	struct lv_config cfg = batch_config(large);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_folio *f = alloc_or_bail(m, 0, ORDER, NULL, 0);
	struct lv_folio *small = alloc_or_bail(m, 0, 0, NULL, 0);
	const char *d = mode(large);
	uint64_t want = large ? 0 : NR;

	is(lv_folio_add_lru(small), 0, "%s: add a small folio", d);
	is(lv_folio_add_lru(f), 0, "%s: add an order-%d folio", d, ORDER);
	is(nstat(m, LV_NR_INACTIVE_FILE), large ? 0 : NR + 1,
	   "%s: added: %s on the inactive list, the small one with it", d,
	   large ? "neither is" : "both are");
	ok(lv_folio_test(small, LV_PG_LRU) == !large, "%s: the small folio %s", d,
	   large ? "waits in the batch" : "went with the large one's flush");
	lv_lru_add_drain(m);
	is(nstat(m, LV_NR_INACTIVE_FILE), NR + 1, "%s: after a drain both are on the list", d);

	lv_folio_activate(f);
	is(nstat(m, LV_NR_ACTIVE_FILE), want, "%s: activated: %lu pages active", d,
	   (unsigned long)want);
	lv_lru_add_drain(m);
	is(nstat(m, LV_NR_ACTIVE_FILE), NR, "%s: activated after a drain", d);

	lv_folio_deactivate(f);
	is(nstat(m, LV_NR_ACTIVE_FILE), NR - want, "%s: deactivated: %lu pages still active", d,
	   (unsigned long)(NR - want));
	lv_lru_add_drain(m);
	is(nstat(m, LV_NR_ACTIVE_FILE), 0, "%s: deactivated after a drain", d);

	lv_folio_activate(f);
	lv_lru_add_drain(m);
	lv_deactivate_file_folio(f);
	is(nstat(m, LV_NR_ACTIVE_FILE), NR - want, "%s: deactivate_file: %lu pages still active", d,
	   (unsigned long)(NR - want));
	lv_lru_add_drain(m);
	is(nstat(m, LV_NR_ACTIVE_FILE), 0, "%s: deactivate_file after a drain", d);

	{
		uint64_t rotated = nstat(m, LV_PGROTATED);

		lv_folio_rotate_reclaimable(f);
		is(nstat(m, LV_PGROTATED) - rotated, want, "%s: rotated: pgrotated +%lu", d,
		   (unsigned long)want);
		lv_lru_add_drain(m);
		is(nstat(m, LV_PGROTATED) - rotated, NR, "%s: rotated after a drain", d);
	}
	check_ok(m, d);
	lv_folio_put(small);
	lv_folio_put(f);
	lv_lru_add_drain_all(m);
	lv_machine_destroy(m);
}

/* lazyfree moves a large anon folio to the inactive file list: at once, or after a drain. */
static void test_lazyfree(bool large)
{
	struct lv_config cfg = batch_config(large);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_folio *f = alloc_or_bail(m, 0, ORDER, NULL, LV_FOLIO_ANON);
	const char *d = mode(large);

	is(lv_folio_add_lru(f), 0, "%s: add a large anon folio", d);
	lv_lru_add_drain(m);
	lv_folio_mark_lazyfree(f);
	is(nstat(m, LV_NR_INACTIVE_FILE), large ? 0 : NR, "%s: lazyfree: %s", d,
	   large ? "still anon, in the batch" : "on the inactive file list at once");
	lv_lru_add_drain(m);
	is(nstat(m, LV_NR_INACTIVE_FILE), NR, "%s: lazyfree after a drain", d);
	check_ok(m, d);
	lv_folio_put(f);
	lv_lru_add_drain_all(m);
	lv_machine_destroy(m);
}

/* A huge fault's add and an mlock's move to the unevictable list, both through batches. */
static void test_huge_mlock(bool large)
{
	struct lv_config cfg = batch_config(large);
	struct lv_machine *m;
	const char *d = mode(large);
	struct lv_mm *mm;
	uint64_t addr, a;

	cfg.thp = LV_THP_ALWAYS;
	cfg.node_mem_bytes = 32 * MiB;
	m = new_machine(&cfg);
	mm = lv_mm_create(m, NULL, 0);
	if (!mm || lv_mmap(mm, 2 * HSIZE, &addr))
		BAIL_OUT("lv_mm_create or lv_mmap failed");
	a = (addr + HSIZE - 1) / HSIZE * HSIZE; /* the aligned 2 MiB block inside the region */
	is(lv_mm_memset(mm, a, 1, HSIZE), 0, "%s: fault in one huge page", d);
	if (nstat(m, LV_THP_FAULT_ALLOC) != 1)
		BAIL_OUT("no huge page was faulted in (%llu)",
			 (unsigned long long)nstat(m, LV_THP_FAULT_ALLOC));
	is(nstat(m, LV_NR_ACTIVE_ANON) + nstat(m, LV_NR_INACTIVE_ANON), large ? 0 : HSIZE / PAGE,
	   "%s: the huge page is %s", d, large ? "in the lru_add batch" : "on its list at once");
	lv_lru_add_drain(m);
	is(nstat(m, LV_NR_ACTIVE_ANON) + nstat(m, LV_NR_INACTIVE_ANON), HSIZE / PAGE,
	   "%s: on its list after a drain", d);

	/*
	 * lv_mlock() drains after it walks (as mlock_vma_pages_range()), so the mlock batch is
	 * seen from a fault in a region locked before: mlock_new_folio() queues the huge page.
	 */
	if (lv_mmap(mm, 2 * HSIZE, &addr))
		BAIL_OUT("lv_mmap failed");
	a = (addr + HSIZE - 1) / HSIZE * HSIZE;
	is(lv_mlock(mm, addr, 2 * HSIZE), 0, "%s: mlock an empty region", d);
	is(lv_mm_memset(mm, a, 1, HSIZE), 0, "%s: fault a huge page into the locked region", d);
	is(nstat(m, LV_THP_FAULT_ALLOC), 2, "%s: it is huge", d);
	is(nstat(m, LV_NR_MLOCK), HSIZE / PAGE, "%s: mlocked at once (NR_MLOCK)", d);
	is(nstat(m, LV_NR_UNEVICTABLE), large ? 0 : HSIZE / PAGE, "%s: %s", d,
	   large ? "its add waits in the mlock batch" : "unevictable at once");
	lv_lru_add_drain(m);
	is(nstat(m, LV_NR_UNEVICTABLE), HSIZE / PAGE, "%s: unevictable after a drain", d);
	is(lv_munlock(mm, addr, 2 * HSIZE), 0, "%s: munlock", d);
	is(nstat(m, LV_NR_UNEVICTABLE), 0, "%s: evictable again", d);
	check_ok(m, d);
	lv_mm_destroy(mm);
	lv_lru_add_drain_all(m);
	check_ok(m, d);
	lv_machine_destroy(m);
}

struct drainer {
	struct lv_machine *m;
	struct lv_folio *f;
	int done;
};

static void *drain_all_thread(void *arg)
{
	struct drainer *dr = arg;

	if (lv_folio_add_lru(dr->f))
		BAIL_OUT("lv_folio_add_lru failed");
	lv_lru_add_drain_all(dr->m);
	__atomic_store_n(&dr->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * lv_lru_add_drain_all() drains the caller's slot before the drain mutex: with the mutex held
 * here, a caller's queued folio still reaches its list while the caller waits for the mutex.
 * The machine has one slot, so the caller's slot is the one its folio was queued in.
 */
static void test_drain_all_local_first(bool large)
{
	struct lv_config cfg = batch_config(large);
	struct lv_machine *m = new_machine(&cfg);
	struct drainer dr = { .m = m, .f = alloc_or_bail(m, 0, 0, NULL, 0) };
	const char *d = mode(large);
	pthread_t t;
	bool listed = false;

	lv_lock_acquire(&m->drain.mutex);
	if (pthread_create(&t, NULL, drain_all_thread, &dr))
		BAIL_OUT("pthread_create failed");
	/* Bounded: a build that drains nothing before the mutex fails here instead of hanging. */
	for (long i = 0; i < 20000000 && !listed; i++) {
		listed = lv_folio_test(dr.f, LV_PG_LRU);
		if (!listed)
			sched_yield();
	}
	ok(listed && !__atomic_load_n(&dr.done, __ATOMIC_ACQUIRE),
	   "%s: drain_all put the caller's queued folio on its list while waiting for the mutex",
	   d);
	lv_lock_release(&m->drain.mutex);
	pthread_join(t, NULL);
	ok(dr.done, "%s: drain_all returned once the mutex was free", d);
	check_ok(m, d);
	lv_folio_put(dr.f);
	lv_lru_add_drain_all(m);
	lv_machine_destroy(m);
}

int main(void)
{
	for (int large = 0; large <= 1; large++) {
		test_requests(large);
		test_lazyfree(large);
		test_huge_mlock(large);
		test_drain_all_local_first(large);
	}
	{
		struct lv_config cfg;

		lv_config_init(&cfg);
		ok(!cfg.batch_large, "lv_config_init: batch_large is false (the 6.17 rule)");
	}
	return done_testing();
}
