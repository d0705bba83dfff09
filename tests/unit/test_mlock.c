// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mlock: lv_mlock() and friends, LV_MAP_LOCKED and LV_MCL_FUTURE, NR_MLOCK and the
 * unevictable_pgs_* counters, the per-CPU mlock batch and its drains, the munlock order
 * (stranded and rescued folios), check_move_unevictable_folios(), reclaim's culling, memcg
 * removal and migration carrying NR_MLOCK, and a munmap racing mlock. Paths that need an
 * interleaving get it by construction: a folio's pin held by the test, or an entry forced onto
 * a chosen CPU slot by holding the other slot's lock from a helper thread.
 */
#include "lvtest_internal.h"
#include "lvtest.h"
#include "mm_types.h"

#define PAGE LV_PAGE_SIZE

static const char *cfg_name[] = { "lruvec", "memcg-disabled", "node-lock" };

static struct lv_config test_config(int variant, unsigned int slots)
{
	struct lv_config cfg = small_config();

	cfg.nr_cpu_slots = slots;
	if (variant == 1)
		cfg.memcg_disabled = true;
	if (variant == 2)
		cfg.lock_design = LV_LOCK_NODE;
	return cfg;
}

/* st - a statistic of @memcg, or of node 0 with memcg disabled (@memcg NULL). */
static uint64_t st(struct lv_machine *m, struct lv_memcg *memcg, enum lv_stat_item item)
{
	return memcg ? lv_memcg_stat(memcg, item) : lv_node_stat(m, 0, item);
}

static struct lv_folio *folio_at(struct lv_mm *mm, uint64_t addr)
{
	int err = 0;
	struct lv_folio *f = anon_folio_get(mm, addr / PAGE, &err);

	if (!f)
		BAIL_OUT("no folio at %#llx: %d", (unsigned long long)addr, err);
	lv_folio_put(f); /* the page table entry keeps it */
	return f;
}

/* mlocked_pages - pages of [@addr, +@n pages) whose folio is mlocked and unevictable. */
static unsigned int mlocked_pages(struct lv_mm *mm, uint64_t addr, unsigned int n)
{
	unsigned int c = 0;

	for (unsigned int i = 0; i < n; i++) {
		struct lv_folio *f = folio_at(mm, addr + i * PAGE);

		c += lv_folio_test(f, LV_PG_MLOCKED) && lv_folio_test(f, LV_PG_UNEVICTABLE);
	}
	return c;
}

/* ---- holding a slot from another thread ---------------------------------------------------- */

struct slot_holder {
	pthread_t thread;
	pthread_barrier_t held, release;
	struct lv_lock *lock;
};

static void *hold_slot(void *arg)
{
	struct slot_holder *h = arg;

	lv_lock_acquire(h->lock);
	pthread_barrier_wait(&h->held);
	pthread_barrier_wait(&h->release);
	lv_lock_release(h->lock);
	return NULL;
}

/*
 * slot_hold - hold slot @s of a two-slot machine from a helper thread: a request queued by
 * this thread meanwhile goes to the other slot, whichever CPU we run on (this_cpu_slot_lock()
 * takes a free slot when its own is held).
 */
static void slot_hold(struct slot_holder *h, struct lv_machine *m, unsigned int s)
{
	h->lock = &m->slots[s].lock;
	pthread_barrier_init(&h->held, NULL, 2);
	pthread_barrier_init(&h->release, NULL, 2);
	if (pthread_create(&h->thread, NULL, hold_slot, h))
		BAIL_OUT("pthread_create");
	pthread_barrier_wait(&h->held);
}

static void slot_release(struct slot_holder *h)
{
	pthread_barrier_wait(&h->release);
	pthread_join(h->thread, NULL);
	pthread_barrier_destroy(&h->held);
	pthread_barrier_destroy(&h->release);
}

static cpu_set_t saved_cpus;

/* pin_cpu0 - run this thread on CPU 0 (slot 0 of a two-slot machine) until unpin_cpu(). */
static void pin_cpu0(void)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(0, &one);
	if (sched_getaffinity(0, sizeof(saved_cpus), &saved_cpus) ||
	    sched_setaffinity(0, sizeof(one), &one) || sched_getcpu() != 0)
		BAIL_OUT("cannot run on CPU 0");
}

static void unpin_cpu(void)
{
	sched_setaffinity(0, sizeof(saved_cpus), &saved_cpus);
}

/* ---- lock, relock, unlock part -------------------------------------------------------------- */

static void test_lock_unlock(int v)
{
	struct lv_config cfg = test_config(v, 1);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *a = v == 1 ? NULL : new_memcg(m, NULL, "a");
	struct lv_mm *mm = new_mm(m, a, 0);
	const char *d = cfg_name[v];
	uint64_t r = map_or_bail(mm, 64 * PAGE), mlocked0, culled0, munlocked0, rescued0;
	struct lv_folio *f;

	is(write_pat(mm, r, 64 * PAGE, 1), 0, "%s: write 64 pages", d);
	lv_lru_add_drain_all(m);
	mlocked0 = st(m, a, LV_UNEVICTABLE_PGS_MLOCKED);
	culled0 = st(m, a, LV_UNEVICTABLE_PGS_CULLED);
	is(lv_mlock(mm, r, 64 * PAGE), 0, "%s: mlock 64 pages -> 0", d);
	is(st(m, a, LV_NR_MLOCK), 64, "%s: nr_mlock 64", d);
	is(st(m, a, LV_NR_UNEVICTABLE), 64, "%s: 64 on the unevictable list", d);
	is(st(m, a, LV_NR_INACTIVE_ANON) + st(m, a, LV_NR_ACTIVE_ANON), 0, "%s: none on anon", d);
	is(st(m, a, LV_UNEVICTABLE_PGS_MLOCKED) - mlocked0, 64, "%s: unevictable_pgs_mlocked 64",
	   d);
	is(st(m, a, LV_UNEVICTABLE_PGS_CULLED) - culled0, 64, "%s: unevictable_pgs_culled 64", d);
	is(mlocked_pages(mm, r, 64), 64, "%s: every folio mlocked and unevictable", d);
	f = folio_at(mm, r);
	is(f->mlock_count, 1, "%s: mlock_count 1", d);
	check_ok(m, d);

	is(lv_mlock(mm, r, 64 * PAGE), 0, "%s: mlock the locked range again -> 0", d);
	is(lv_mlock(mm, r + 8 * PAGE, 8 * PAGE), 0, "%s: and a part of it", d);
	is(st(m, a, LV_NR_MLOCK), 64, "%s: relock: nr_mlock still 64", d);
	is(st(m, a, LV_UNEVICTABLE_PGS_MLOCKED) - mlocked0, 64, "%s: relock: mlocked still 64", d);
	is(st(m, a, LV_UNEVICTABLE_PGS_CULLED) - culled0, 64, "%s: relock: culled still 64", d);
	is(f->mlock_count, 1, "%s: relock: mlock_count still 1", d);

	munlocked0 = st(m, a, LV_UNEVICTABLE_PGS_MUNLOCKED);
	rescued0 = st(m, a, LV_UNEVICTABLE_PGS_RESCUED);
	is(lv_munlock(mm, r + 16 * PAGE, 32 * PAGE), 0, "%s: munlock pages 16..47 -> 0", d);
	is(st(m, a, LV_NR_MLOCK), 32, "%s: part: nr_mlock 32", d);
	is(st(m, a, LV_NR_UNEVICTABLE), 32, "%s: part: 32 unevictable", d);
	is(st(m, a, LV_NR_INACTIVE_ANON), 32, "%s: part: 32 back on the inactive anon list", d);
	is(st(m, a, LV_NR_ACTIVE_ANON), 0, "%s: part: none active", d);
	is(st(m, a, LV_UNEVICTABLE_PGS_MUNLOCKED) - munlocked0, 32, "%s: part: munlocked 32", d);
	is(st(m, a, LV_UNEVICTABLE_PGS_RESCUED) - rescued0, 32, "%s: part: rescued 32", d);
	is(mlocked_pages(mm, r, 16), 16, "%s: part: pages 0..15 still mlocked", d);
	is(mlocked_pages(mm, r + 16 * PAGE, 32), 0, "%s: part: pages 16..47 not", d);
	is(mlocked_pages(mm, r + 48 * PAGE, 16), 16, "%s: part: pages 48..63 still mlocked", d);
	f = folio_at(mm, r + 20 * PAGE);
	ok(lv_folio_test(f, LV_PG_LRU) && !lv_folio_test(f, LV_PG_UNEVICTABLE) &&
		   !lv_folio_test(f, LV_PG_ACTIVE) && f->mlock_count == 0,
	   "%s: part: an unlocked folio is inactive, evictable, on the LRU", d);
	is(lv_munlock(mm, r + 16 * PAGE, 32 * PAGE), 0, "%s: munlock the same part again", d);
	is(st(m, a, LV_NR_MLOCK), 32, "%s: again: nr_mlock still 32", d);
	is(st(m, a, LV_UNEVICTABLE_PGS_MUNLOCKED) - munlocked0, 32, "%s: again: munlocked 32", d);
	check_ok(m, d);

	is(lv_munlock(mm, r, 64 * PAGE), 0, "%s: munlock all", d);
	is(st(m, a, LV_NR_MLOCK), 0, "%s: all: nr_mlock 0", d);
	is(st(m, a, LV_NR_UNEVICTABLE), 0, "%s: all: nothing unevictable", d);
	is(st(m, a, LV_NR_INACTIVE_ANON), 64, "%s: all: 64 inactive anon", d);
	is(bad_pat(mm, r, 64 * PAGE, 1), 0, "%s: the data survived", d);
	is(lv_mm_rss(mm), 64, "%s: rss 64", d);
	if (a)
		finish_mm(m, mm, a, d);
	else {
		lv_mm_destroy(mm);
		finish(m, d);
	}
}

/* ---- pressure ------------------------------------------------------------------------------ */

/*
 * Lazily freed anon pages are the ones reclaim can take (there is no swap): mlocked, neither
 * node reclaim nor the memcg limit gets them; munlocked, they return to the inactive file
 * list where lazyfree folios live, and reclaim frees them.
 */
static void test_pressure(int v)
{
	struct lv_config cfg = test_config(v, 1);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *a = v == 1 ? NULL : new_memcg(m, NULL, "a");
	struct lv_mm *mm = new_mm(m, a, 0);
	const char *d = cfg_name[v];
	uint64_t r = map_or_bail(mm, 64 * PAGE), other = map_or_bail(mm, 16 * PAGE);

	is(write_pat(mm, r, 64 * PAGE, 2), 0, "%s: pressure: write 64 pages", d);
	is(write_pat(mm, other, 16 * PAGE, 3), 0, "%s: pressure: and 16 others", d);
	is(lv_madvise(mm, r, 64 * PAGE, LV_MADV_FREE), 0, "%s: pressure: MADV_FREE the 64", d);
	is(lv_madvise(mm, other, 16 * PAGE, LV_MADV_FREE), 0, "%s: pressure: and the 16", d);
	lv_lru_add_drain_all(m);
	is(st(m, a, LV_NR_INACTIVE_FILE), 80, "%s: pressure: 80 lazyfree on inactive file", d);
	is(lv_mlock(mm, r, 64 * PAGE), 0, "%s: pressure: mlock the 64", d);
	is(st(m, a, LV_NR_UNEVICTABLE), 64, "%s: pressure: 64 unevictable", d);
	is(st(m, a, LV_NR_INACTIVE_FILE), 16, "%s: pressure: 16 still inactive file", d);

	is(lv_reclaim_node(m, 0, 1000), 16, "%s: pressure: node reclaim frees only the 16", d);
	if (a) {
		is(lv_memcg_reclaim(a, 1000), 0, "%s: pressure: memcg reclaim frees nothing", d);
		is(lv_memcg_set_max(a, 32), 0, "%s: pressure: limit 32 pages below usage 64", d);
		is(lv_memcg_reclaim(a, 1000), 0, "%s: pressure: ... and still frees nothing", d);
		is(lv_memcg_usage(a), 64, "%s: pressure: usage 64", d);
	}
	is(lv_mm_rss(mm), 64, "%s: pressure: rss 64", d);
	is(bad_pat(mm, r, 64 * PAGE, 2), 0, "%s: pressure: the mlocked data is all there", d);
	check_ok(m, d);

	is(lv_munlock(mm, r, 64 * PAGE), 0, "%s: pressure: munlock", d);
	is(st(m, a, LV_NR_INACTIVE_FILE), 64, "%s: pressure: back on the inactive file list", d);
	is(st(m, a, LV_NR_UNEVICTABLE), 0, "%s: pressure: nothing unevictable", d);
	if (a)
		is(lv_memcg_reclaim(a, 1000), 64, "%s: pressure: now memcg reclaim frees them", d);
	else
		is(lv_reclaim_node(m, 0, 1000), 64, "%s: pressure: now node reclaim frees them", d);
	is(lv_mm_rss(mm), 0, "%s: pressure: rss 0", d);
	if (a) {
		lv_memcg_set_max(a, SIZE_MAX);
		finish_mm(m, mm, a, d);
	} else {
		lv_mm_destroy(mm);
		finish(m, d);
	}
}

/* ---- LV_MAP_LOCKED, LV_MCL_FUTURE, mlockall ------------------------------------------------ */

static void test_map_locked_future(void)
{
	struct lv_config cfg = test_config(0, 1);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *a = new_memcg(m, NULL, "a");
	struct lv_mm *mm = new_mm(m, a, 0);
	uint64_t locked, plain, later, later2, brk;

	is(lv_mmap_flags(mm, 8 * PAGE, LV_MAP_LOCKED, &locked), 0, "MAP_LOCKED: map 8 pages");
	is(write_pat(mm, locked, 8 * PAGE, 1), 0, "MAP_LOCKED: fault them in");
	is(lv_memcg_stat(a, LV_NR_MLOCK), 8, "MAP_LOCKED: nr_mlock 8 at once");
	lv_lru_add_drain_all(m);
	is(lv_memcg_stat(a, LV_NR_UNEVICTABLE), 8, "MAP_LOCKED: 8 unevictable after the drain");
	is(mlocked_pages(mm, locked, 8), 8, "MAP_LOCKED: every folio mlocked");
	is(lv_mmap_flags(mm, PAGE, 0x4, &plain), -EINVAL, "MAP_LOCKED: an unknown flag -> -EINVAL");

	plain = map_or_bail(mm, 4 * PAGE);
	is(write_pat(mm, plain, 4 * PAGE, 2), 0, "FUTURE: 4 pages mapped before");
	is(lv_mlockall(mm, LV_MCL_FUTURE), 0, "FUTURE: mlockall(MCL_FUTURE) -> 0");
	lv_lru_add_drain_all(m);
	is(lv_memcg_stat(a, LV_NR_MLOCK), 8, "FUTURE: the earlier region is left alone");
	later = map_or_bail(mm, 4 * PAGE);
	is(write_pat(mm, later, 4 * PAGE, 3), 0, "FUTURE: a later region faults");
	lv_lru_add_drain_all(m);
	is(mlocked_pages(mm, later, 4), 4, "FUTURE: ... mlocked pages");
	is(lv_mm_brk(mm, 4 * PAGE, &brk), 0, "FUTURE: the heap grows 4 pages");
	is(write_pat(mm, brk, 4 * PAGE, 4), 0, "FUTURE: heap pages fault");
	lv_lru_add_drain_all(m);
	is(mlocked_pages(mm, brk, 4), 4, "FUTURE: ... mlocked");
	is(lv_memcg_stat(a, LV_NR_MLOCK), 16, "FUTURE: nr_mlock 16");
	is(lv_mlockall(mm, LV_MCL_CURRENT), 0, "CURRENT: mlockall(MCL_CURRENT) -> 0");
	is(lv_memcg_stat(a, LV_NR_MLOCK), 20, "CURRENT: the earlier region too: 20");
	check_ok(m, "mlockall");

	is(lv_munlockall(mm), 0, "munlockall -> 0");
	is(lv_memcg_stat(a, LV_NR_MLOCK), 0, "munlockall: nr_mlock 0");
	is(lv_memcg_stat(a, LV_NR_UNEVICTABLE), 0, "munlockall: nothing unevictable");
	later2 = map_or_bail(mm, 2 * PAGE);
	is(write_pat(mm, later2, 2 * PAGE, 5), 0, "munlockall: a new region faults");
	lv_lru_add_drain_all(m);
	is(lv_memcg_stat(a, LV_NR_MLOCK), 0, "munlockall: MCL_FUTURE is cancelled");
	is(lv_mm_brk(mm, PAGE, &brk), 0, "munlockall: the heap grows");
	is(write_pat(mm, brk, PAGE, 6), 0, "munlockall: a heap page faults");
	lv_lru_add_drain_all(m);
	is(lv_memcg_stat(a, LV_NR_MLOCK), 0, "munlockall: ... unlocked");
	is(bad_pat(mm, locked, 8 * PAGE, 1) + bad_pat(mm, later, 4 * PAGE, 3), 0,
	   "mlockall: the data survived");
	finish_mm(m, mm, a, "mlockall");
}

/* ---- bad input ----------------------------------------------------------------------------- */

static void test_bad_input(void)
{
	struct lv_config cfg = test_config(0, 1);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *a = new_memcg(m, NULL, "a");
	struct lv_mm *mm = new_mm(m, a, 0);
	uint64_t r = map_or_bail(mm, 8 * PAGE), r2 = map_or_bail(mm, 2 * PAGE);

	is(write_pat(mm, r, 8 * PAGE, 1), 0, "bad: write 8 pages");
	is(write_pat(mm, r2, 2 * PAGE, 1), 0, "bad: and 2 in a second region");
	lv_lru_add_drain_all(m);
	is(lv_mlock(NULL, r, PAGE), -EINVAL, "bad: mlock(NULL mm) -> -EINVAL");
	is(lv_munlock(NULL, r, PAGE), -EINVAL, "bad: munlock(NULL mm) -> -EINVAL");
	is(lv_mlock(mm, UINT64_MAX - PAGE, 2 * PAGE), -EINVAL, "bad: a wrapping range -> -EINVAL");
	is(lv_mlock(mm, r + 100, SIZE_MAX), -EINVAL, "bad: a wrapping length -> -EINVAL");
	is(lv_munlock(mm, UINT64_MAX - PAGE, 2 * PAGE), -EINVAL,
	   "bad: munlock wrapping -> -EINVAL");
	is(lv_mlockall(mm, 0), -EINVAL, "bad: mlockall(0) -> -EINVAL");
	is(lv_mlockall(mm, 4), -EINVAL, "bad: mlockall(unknown flag) -> -EINVAL");
	is(lv_mlockall(NULL, LV_MCL_CURRENT), -EINVAL, "bad: mlockall(NULL) -> -EINVAL");
	is(lv_munlockall(NULL), -EINVAL, "bad: munlockall(NULL) -> -EINVAL");
	is(lv_memcg_stat(a, LV_NR_MLOCK), 0, "bad: nothing was locked");
	is(lv_mlock(mm, r, 0), 0, "bad: len 0 -> 0");
	is(lv_memcg_stat(a, LV_NR_MLOCK), 0, "bad: ... and nothing locked");
	is(lv_mlock(mm, r + 3 * PAGE + 100, 10), 0, "bad: an unaligned address is rounded down");
	is(lv_memcg_stat(a, LV_NR_MLOCK), 1, "bad: ... locking its page only");
	ok(lv_folio_test(folio_at(mm, r + 3 * PAGE), LV_PG_MLOCKED), "bad: ... page 3");
	is(lv_mlock(mm, r + 4 * PAGE - 1, 2), 0, "bad: two bytes across a boundary");
	is(lv_memcg_stat(a, LV_NR_MLOCK), 2, "bad: ... lock both pages");
	is(lv_mlock(mm, r + 6 * PAGE, 3 * PAGE), -ENOMEM, "bad: part unmapped -> -ENOMEM");
	is(lv_memcg_stat(a, LV_NR_MLOCK), 4, "bad: ... the mapped part (pages 6, 7) is locked");
	is(lv_mlock(mm, r2 + 4 * PAGE, PAGE), -ENOMEM, "bad: nothing mapped -> -ENOMEM");
	is(lv_memcg_stat(a, LV_NR_MLOCK), 4, "bad: ... nothing more locked");
	is(lv_munlock(mm, r, 12 * PAGE), -ENOMEM, "bad: munlock over a hole -> -ENOMEM");
	is(lv_memcg_stat(a, LV_NR_MLOCK), 0, "bad: ... the mapped part is unlocked");
	check_ok(m, "bad input");
	finish_mm(m, mm, a, "bad input");
}

/* ---- stranded and rescued ------------------------------------------------------------------ */

/* A munlock of an isolated folio cannot move it: stranded. Its putback rescues it. */
static void test_stranded(int v)
{
	struct lv_config cfg = test_config(v, 1);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *a = v == 1 ? NULL : new_memcg(m, NULL, "a");
	struct lv_mm *mm = new_mm(m, a, 0);
	const char *d = cfg_name[v];
	uint64_t r = map_or_bail(mm, 4 * PAGE), stranded0, rescued0, munlocked0;
	struct lv_folio *f;

	is(write_pat(mm, r, 4 * PAGE, 1), 0, "%s: stranded: write", d);
	is(lv_mlock(mm, r, 4 * PAGE), 0, "%s: stranded: mlock", d);
	f = folio_at(mm, r + PAGE);
	is(lv_folio_isolate_lru(f), 0, "%s: stranded: isolate page 1", d);
	stranded0 = st(m, a, LV_UNEVICTABLE_PGS_STRANDED);
	munlocked0 = st(m, a, LV_UNEVICTABLE_PGS_MUNLOCKED);
	rescued0 = st(m, a, LV_UNEVICTABLE_PGS_RESCUED);
	is(lv_munlock(mm, r, 4 * PAGE), 0, "%s: stranded: munlock the range", d);
	is(st(m, a, LV_UNEVICTABLE_PGS_STRANDED) - stranded0, 1, "%s: stranded: 1 stranded", d);
	is(st(m, a, LV_UNEVICTABLE_PGS_MUNLOCKED) - munlocked0, 3, "%s: stranded: 3 munlocked", d);
	is(st(m, a, LV_UNEVICTABLE_PGS_RESCUED) - rescued0, 3, "%s: stranded: 3 rescued", d);
	ok(!lv_folio_test(f, LV_PG_MLOCKED) && lv_folio_test(f, LV_PG_UNEVICTABLE),
	   "%s: stranded: it lost PG_mlocked, still flagged unevictable", d);
	is(st(m, a, LV_NR_MLOCK), 0, "%s: stranded: nr_mlock 0", d);
	is(st(m, a, LV_NR_UNEVICTABLE), 0, "%s: stranded: isolated, so not counted", d);
	is(lv_folio_putback_lru(f), 0, "%s: stranded: put it back", d);
	lv_lru_add_drain_all(m);
	is(st(m, a, LV_UNEVICTABLE_PGS_RESCUED) - rescued0, 4, "%s: stranded: the add rescues it",
	   d);
	ok(lv_folio_test(f, LV_PG_LRU) && !lv_folio_test(f, LV_PG_UNEVICTABLE),
	   "%s: stranded: on an evictable list", d);
	is(st(m, a, LV_NR_INACTIVE_ANON), 4, "%s: stranded: 4 inactive anon", d);

	/* Isolated and mlocked: the mlock's drain has no pin, the putback culls. */
	is(lv_folio_isolate_lru(f), 0, "%s: cull: isolate page 1", d);
	is(lv_mlock(mm, r, 4 * PAGE), 0, "%s: cull: mlock while it is isolated", d);
	ok(lv_folio_test(f, LV_PG_MLOCKED) && !lv_folio_test(f, LV_PG_UNEVICTABLE),
	   "%s: cull: mlocked, not moved", d);
	is(lv_folio_putback_lru(f), 0, "%s: cull: put it back", d);
	lv_lru_add_drain_all(m);
	ok(lv_folio_test(f, LV_PG_UNEVICTABLE), "%s: cull: the putback culled it", d);
	is(st(m, a, LV_NR_UNEVICTABLE), 4, "%s: cull: 4 unevictable", d);
	is(f->mlock_count, 0, "%s: cull: with mlock_count 0 (an underestimate)", d);
	check_ok(m, d);
	is(lv_munlock(mm, r, 4 * PAGE), 0, "%s: cull: munlock", d);
	is(st(m, a, LV_NR_UNEVICTABLE), 0, "%s: cull: mlock_count 0 unlocks at once", d);
	if (a)
		finish_mm(m, mm, a, d);
	else {
		lv_mm_destroy(mm);
		finish(m, d);
	}
}

/*
 * An mlock queued on slot 1, then a munlock on slot 0 that drains first without the pin (the
 * test holds it): stranded on the unevictable list. The pin comes back unmoved, and the mlock's
 * drain finds the folio evictable after all: rescued. Then a folio stranded the same way is
 * rescued by lv_munlock() (check_move_unevictable_folios()).
 */
static void test_rescued(int v)
{
	struct lv_config cfg = test_config(v, 2);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *a = v == 1 ? NULL : new_memcg(m, NULL, "a");
	struct lv_mm *mm = new_mm(m, a, 0);
	const char *d = cfg_name[v];
	uint64_t r = map_or_bail(mm, 2 * PAGE), rescued0, stranded0, scanned0;
	struct slot_holder h;
	struct lv_folio *f, *g;

	is(write_pat(mm, r, 2 * PAGE, 1), 0, "%s: rescued: write", d);
	is(lv_mlock(mm, r, 2 * PAGE), 0, "%s: rescued: mlock", d);
	lv_lru_add_drain_all(m);
	f = folio_at(mm, r);
	g = folio_at(mm, r + PAGE);
	rescued0 = st(m, a, LV_UNEVICTABLE_PGS_RESCUED);
	stranded0 = st(m, a, LV_UNEVICTABLE_PGS_STRANDED);

	slot_hold(&h, m, 0);
	mlock_folio(f);
	slot_release(&h);
	is(m->slots[1].fbatch[FB_MLOCK].nr, 1, "%s: rescued: the mlock is queued on slot 1", d);
	slot_hold(&h, m, 1);
	munlock_folio(f);
	slot_release(&h);
	is(m->slots[0].fbatch[FB_MLOCK].nr, 1, "%s: rescued: the munlock is queued on slot 0", d);
	ok(folio_test_clear_lru(f), "%s: rescued: the test takes the pin", d);
	drain_slot(&m->slots[0]);
	ok(!lv_folio_test(f, LV_PG_MLOCKED) && lv_folio_test(f, LV_PG_UNEVICTABLE),
	   "%s: rescued: munlocked without the pin: still unevictable", d);
	is(st(m, a, LV_UNEVICTABLE_PGS_STRANDED) - stranded0, 1, "%s: rescued: counted stranded",
	   d);
	folio_set_lru(f); /* back unmoved, as a batch move skips an unevictable folio */
	drain_slot(&m->slots[1]);
	is(st(m, a, LV_UNEVICTABLE_PGS_RESCUED) - rescued0, 1,
	   "%s: rescued: the mlock's drain rescued it", d);
	ok(!lv_folio_test(f, LV_PG_UNEVICTABLE) && lv_folio_test(f, LV_PG_LRU),
	   "%s: rescued: on an evictable list", d);
	is(st(m, a, LV_NR_MLOCK), 1, "%s: rescued: nr_mlock 1 (the other page)", d);
	check_ok(m, d);

	/* Stranded on the unevictable list by a munlock that lost the pin, then lv_munlock(). */
	ok(folio_test_clear_lru(g), "%s: check_move: the test takes page 1's pin", d);
	munlock_folio(g);
	lv_lru_add_drain_all(m);
	folio_set_lru(g);
	ok(!lv_folio_test(g, LV_PG_MLOCKED) && lv_folio_test(g, LV_PG_UNEVICTABLE),
	   "%s: check_move: stranded on the unevictable list", d);
	scanned0 = st(m, a, LV_UNEVICTABLE_PGS_SCANNED);
	is(lv_munlock(mm, r, 2 * PAGE), 0, "%s: check_move: munlock the region", d);
	ok(!lv_folio_test(g, LV_PG_UNEVICTABLE), "%s: check_move: rescued", d);
	is(st(m, a, LV_UNEVICTABLE_PGS_SCANNED) - scanned0, 1, "%s: check_move: 1 scanned", d);
	is(st(m, a, LV_UNEVICTABLE_PGS_RESCUED) - rescued0, 2, "%s: check_move: 2 rescued", d);
	is(st(m, a, LV_NR_UNEVICTABLE), 0, "%s: check_move: nothing unevictable", d);
	check_ok(m, d);

	/* A folio someone else pins is skipped and counted scanned. */
	ok(folio_test_clear_lru(g), "%s: check_move: pin again", d);
	check_move_unevictable_folios(&g, 1);
	is(st(m, a, LV_UNEVICTABLE_PGS_SCANNED) - scanned0, 2, "%s: check_move: skipped, scanned",
	   d);
	folio_set_lru(g);
	if (a)
		finish_mm(m, mm, a, d);
	else {
		lv_mm_destroy(mm);
		finish(m, d);
	}
}

/*
 * A folio stranded on the unevictable list (munlocked while its pin was elsewhere) and then
 * MADV_PAGEOUT: the advice isolates it but must hand it straight back, through the add that
 * rescues it, as the kernel's madvise_cold_or_pageout_pte_range() does. Reclaiming it instead
 * kept PG_unevictable on a folio it then marked active (no swap: "keep it active"), and the
 * putback found a folio both active and unevictable.
 */
static void test_pageout_stranded(int v)
{
	struct lv_config cfg = test_config(v, 2);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *a = v == 1 ? NULL : new_memcg(m, NULL, "a");
	struct lv_mm *mm = new_mm(m, a, 0);
	const char *d = cfg_name[v];
	uint64_t r = map_or_bail(mm, 2 * PAGE), rescued0;
	struct lv_folio *f, *g;

	is(write_pat(mm, r, 2 * PAGE, 1), 0, "%s: pageout stranded: write", d);
	is(lv_mlock(mm, r, 2 * PAGE), 0, "%s: pageout stranded: mlock", d);
	lv_lru_add_drain_all(m);
	f = folio_at(mm, r);
	g = folio_at(mm, r + PAGE);
	ok(folio_test_clear_lru(g), "%s: pageout stranded: the test takes page 1's pin", d);
	munlock_folio(g);
	lv_lru_add_drain_all(m);
	folio_set_lru(g);
	ok(!lv_folio_test(g, LV_PG_MLOCKED) && lv_folio_test(g, LV_PG_UNEVICTABLE),
	   "%s: pageout stranded: stranded on the unevictable list", d);
	rescued0 = st(m, a, LV_UNEVICTABLE_PGS_RESCUED);
	is(lv_madvise(mm, r, 2 * PAGE, LV_MADV_PAGEOUT), 0, "%s: pageout stranded: PAGEOUT", d);
	lv_lru_add_drain_all(m);
	ok(!lv_folio_test(g, LV_PG_UNEVICTABLE) && !lv_folio_test(g, LV_PG_ACTIVE) &&
		   lv_folio_test(g, LV_PG_LRU),
	   "%s: pageout stranded: rescued to an inactive list", d);
	is(st(m, a, LV_UNEVICTABLE_PGS_RESCUED) - rescued0, 1, "%s: pageout stranded: 1 rescued",
	   d);
	ok(lv_folio_test(f, LV_PG_MLOCKED) && lv_folio_test(f, LV_PG_UNEVICTABLE) &&
		   !lv_folio_test(f, LV_PG_ACTIVE),
	   "%s: pageout stranded: the mlocked page is left mlocked", d);
	is(st(m, a, LV_NR_UNEVICTABLE), 1, "%s: pageout stranded: 1 unevictable", d);
	is(st(m, a, LV_NR_INACTIVE_ANON), 1, "%s: pageout stranded: 1 inactive anon", d);
	check_ok(m, d);
	if (a)
		finish_mm(m, mm, a, d);
	else {
		lv_mm_destroy(mm);
		finish(m, d);
	}
}

/* ---- the batch and the drains --------------------------------------------------------------- */

static void test_drains(void)
{
	struct lv_config cfg = test_config(0, 2);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *a = new_memcg(m, NULL, "a");
	struct lv_mm *mm = new_mm(m, a, 0);
	uint64_t r = map_or_bail(mm, 4 * PAGE);
	struct slot_holder h;
	struct lv_folio *f, *big;

	is(write_pat(mm, r, 4 * PAGE, 1), 0, "drains: write");
	lv_lru_add_drain_all(m);
	f = folio_at(mm, r);

	slot_hold(&h, m, 0);
	mlock_folio(f);
	slot_release(&h);
	ok(lv_folio_test(f, LV_PG_MLOCKED) && !lv_folio_test(f, LV_PG_UNEVICTABLE),
	   "drains: queued on slot 1: mlocked, not moved yet");
	is(lv_memcg_stat(a, LV_NR_MLOCK), 1, "drains: nr_mlock counts it at once");
	/* Run on CPU 0, whose slot is 0: only the sweep, not the local drain, reaches slot 1. */
	pin_cpu0();
	lv_lru_add_drain_all(m);
	ok(lv_folio_test(f, LV_PG_UNEVICTABLE), "drains: lv_lru_add_drain_all moved it");
	is(m->slots[1].fbatch[FB_MLOCK].nr, 0, "drains: slot 1's mlock batch is empty");

	slot_hold(&h, m, 0);
	munlock_folio(f);
	slot_release(&h);
	ok(lv_folio_test(f, LV_PG_MLOCKED), "drains: munlock queued on slot 1: still mlocked");
	lv_lru_cache_disable(m);
	ok(!lv_folio_test(f, LV_PG_MLOCKED) && !lv_folio_test(f, LV_PG_UNEVICTABLE),
	   "drains: lv_lru_cache_disable drained it");
	unpin_cpu();
	mlock_folio(f);
	ok(lv_folio_test(f, LV_PG_UNEVICTABLE), "drains: while disabled an mlock applies at once");
	munlock_folio(f);
	ok(!lv_folio_test(f, LV_PG_UNEVICTABLE), "drains: ... and a munlock");
	lv_lru_cache_enable(m);
	mlock_folio(f);
	ok(!lv_folio_test(f, LV_PG_UNEVICTABLE), "drains: enabled again: queued");
	lv_lru_add_drain(m);
	lv_lru_add_drain_all(m);
	ok(lv_folio_test(f, LV_PG_UNEVICTABLE), "drains: drained");
	munlock_folio(f);
	lv_lru_add_drain_all(m);

	/* A large folio never waits in a batch (folio_may_be_lru_cached() is false). */
	big = alloc_or_bail(m, 0, 2, a, 0);
	is(lv_folio_add_lru(big), 0, "drains: an order-2 folio on the LRU");
	mlock_folio(big);
	ok(lv_folio_test(big, LV_PG_UNEVICTABLE), "drains: large: mlocked at once");
	is(lv_memcg_stat(a, LV_NR_MLOCK), 4, "drains: large: nr_mlock 4 pages");
	check_ok(m, "drains");
	munlock_folio(big);
	ok(!lv_folio_test(big, LV_PG_UNEVICTABLE) && !lv_folio_test(big, LV_PG_MLOCKED),
	   "drains: large: munlocked at once");
	mlock_folio(big);
	lv_folio_put(big); /* freed mlocked, by the release path */
	is(lv_memcg_stat(a, LV_NR_MLOCK), 0, "drains: large: the free uncounts it");
	finish_mm(m, mm, a, "drains");
}

/* ---- reclaim culls ------------------------------------------------------------------------- */

/*
 * An mlocked folio left on an evictable list (its mlock lost the pin to the test): a batch
 * move culls it instead of moving it, and so does reclaim, which never frees it.
 */
static void test_cull(void)
{
	struct lv_config cfg = test_config(0, 1);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *a = new_memcg(m, NULL, "a");
	struct lv_mm *mm = new_mm(m, a, 0);
	uint64_t r = map_or_bail(mm, 2 * PAGE), culled0;
	struct lv_folio *f, *g;

	is(write_pat(mm, r, 2 * PAGE, 7), 0, "cull: write");
	is(lv_madvise(mm, r, 2 * PAGE, LV_MADV_FREE), 0, "cull: MADV_FREE");
	lv_lru_add_drain_all(m);
	f = folio_at(mm, r);
	g = folio_at(mm, r + PAGE);
	ok(folio_test_clear_lru(f) && folio_test_clear_lru(g), "cull: the test pins both");
	is(lv_mlock(mm, r, 2 * PAGE), 0, "cull: mlock them");
	folio_set_lru(f);
	folio_set_lru(g);
	ok(lv_folio_test(f, LV_PG_MLOCKED) && !lv_folio_test(f, LV_PG_UNEVICTABLE),
	   "cull: mlocked on the inactive file list");
	culled0 = lv_memcg_stat(a, LV_UNEVICTABLE_PGS_CULLED);
	lv_folio_mark_accessed(f);
	lv_folio_mark_accessed(f); /* queues an activation */
	lv_lru_add_drain(m);
	ok(lv_folio_test(f, LV_PG_UNEVICTABLE) && !lv_folio_test(f, LV_PG_ACTIVE),
	   "cull: the activation culled it instead");
	is(lv_memcg_stat(a, LV_UNEVICTABLE_PGS_CULLED) - culled0, 1, "cull: culled 1");
	is(lv_reclaim_node(m, 0, 100), 0, "cull: node reclaim frees nothing");
	lv_lru_add_drain_all(m);
	ok(lv_folio_test(g, LV_PG_UNEVICTABLE), "cull: reclaim culled the other one");
	is(lv_memcg_stat(a, LV_UNEVICTABLE_PGS_CULLED) - culled0, 2, "cull: culled 2");
	is(bad_pat(mm, r, 2 * PAGE, 7), 0, "cull: the data is there");
	check_ok(m, "cull");
	finish_mm(m, mm, a, "cull");
}

/* ---- memcg removal and charge moves; migration ---------------------------------------------- */

static void test_memcg(void)
{
	struct lv_config cfg = test_config(0, 2);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *p = new_memcg(m, NULL, "p"), *c = new_memcg(m, p, "c");
	struct lv_memcg *t = new_memcg(m, NULL, "t");
	struct lv_mm *mm = new_mm(m, t, 0);
	uint64_t r = map_or_bail(mm, 8 * PAGE);
	struct lv_folio *own[3], *mapped[8];
	struct slot_holder h;

	/* Mlocked folios charged to c: three of the caller's, eight mapped and moved to c. */
	for (int i = 0; i < 3; i++) {
		own[i] = alloc_or_bail(m, 0, 0, c, 0);
		is(lv_folio_set_state(own[i], LV_PG_MLOCKED, true), 0, "memcg: mlock own %d", i);
		is(lv_folio_add_lru(own[i]), 0, "memcg: add own %d", i);
	}
	is(write_pat(mm, r, 8 * PAGE, 1), 0, "memcg: write 8 pages in t");
	is(lv_mlock(mm, r, 8 * PAGE), 0, "memcg: mlock them");
	is(lv_memcg_stat(t, LV_NR_MLOCK), 8, "memcg: t counts 8");
	for (int i = 0; i < 8; i++) {
		mapped[i] = folio_at(mm, r + (uint64_t)i * PAGE);
		is(lv_folio_move_memcg(mapped[i], c), 0, "memcg: move mapped %d to c", i);
	}
	lv_lru_add_drain_all(m);
	is(lv_memcg_stat(t, LV_NR_MLOCK), 0, "memcg: the moves take nr_mlock from t");
	is(lv_memcg_stat(c, LV_NR_MLOCK), 11, "memcg: c counts 11");
	is(lv_memcg_stat(c, LV_NR_UNEVICTABLE), 11, "memcg: 11 unevictable in c");
	check_ok(m, "memcg moves");
	/* One queued munlock of a c folio: the removal's scoped drain must apply it. */
	slot_hold(&h, m, 0);
	munlock_folio(mapped[0]);
	slot_release(&h);
	is(lv_memcg_remove(c), 0, "memcg: remove c");
	is(lv_memcg_stat(p, LV_NR_MLOCK), 10, "memcg: p counts the 10 still mlocked");
	is(lv_memcg_stat(p, LV_NR_UNEVICTABLE), 10, "memcg: p has 10 unevictable");
	is(lv_memcg_stat(p, LV_NR_INACTIVE_ANON), 1, "memcg: and the munlocked one inactive");
	is(lv_node_stat(m, 0, LV_NR_MLOCK), 10, "memcg: node nr_mlock 10");
	check_ok(m, "memcg removal");
	is(lv_munlock(mm, r, 8 * PAGE), 0, "memcg: munlock the mapped ones");
	is(lv_memcg_stat(p, LV_NR_MLOCK), 3, "memcg: p counts the 3 own ones");
	for (int i = 0; i < 3; i++)
		lv_folio_put(own[i]);
	lv_lru_add_drain_all(m);
	is(lv_memcg_stat(p, LV_NR_MLOCK), 0, "memcg: freed: p counts none");
	check_ok(m, "memcg frees");
	lv_mm_destroy(mm);
	lv_lru_add_drain_all(m);
	is(lv_memcg_remove(t), 0, "memcg: remove t");
	is(lv_memcg_remove(p), 0, "memcg: remove p");
	finish(m, "memcg");
}

static void test_migrate(void)
{
	struct lv_config cfg = test_config(0, 1);
	struct lv_machine *m;
	struct lv_memcg *a;
	struct lv_mm *mm;
	uint64_t r;

	cfg.nr_nodes = 2;
	m = new_machine(&cfg);
	a = new_memcg(m, NULL, "a");
	mm = new_mm(m, a, 0);
	r = map_or_bail(mm, 8 * PAGE);
	is(write_pat(mm, r, 8 * PAGE, 1), 0, "migrate: write 8 pages on node 0");
	is(lv_mlock(mm, r, 8 * PAGE), 0, "migrate: mlock them");
	is(lv_node_stat(m, 0, LV_NR_MLOCK), 8, "migrate: node 0 counts 8");
	is(lv_migrate_pages(mm, 1, 1), 0, "migrate: move them to node 1");
	is(lv_node_stat(m, 0, LV_NR_MLOCK), 0, "migrate: node 0 counts none");
	is(lv_node_stat(m, 1, LV_NR_MLOCK), 8, "migrate: node 1 counts 8");
	is(lv_node_stat(m, 1, LV_NR_UNEVICTABLE), 8, "migrate: unevictable on node 1");
	is(mlocked_pages(mm, r, 8), 8, "migrate: still mlocked");
	is(bad_pat(mm, r, 8 * PAGE, 1), 0, "migrate: the data moved");
	check_ok(m, "migrate");
	is(lv_munlock(mm, r, 8 * PAGE), 0, "migrate: munlock");
	is(lv_node_stat(m, 1, LV_NR_MLOCK), 0, "migrate: none left");
	finish_mm(m, mm, a, "migrate");
}

/* ---- munmap racing mlock ------------------------------------------------------------------- */

/* Unmapping with mlock and munlock entries still queued, then threads doing both at once. */
static void test_munmap(int v)
{
	struct lv_config cfg = test_config(v, 2);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *a = v == 1 ? NULL : new_memcg(m, NULL, "a");
	struct lv_mm *mm = new_mm(m, a, 0);
	const char *d = cfg_name[v];
	uint64_t r = map_or_bail(mm, 16 * PAGE), q;
	struct lv_folio *f[16];

	is(write_pat(mm, r, 16 * PAGE, 1), 0, "%s: munmap: write 16", d);
	lv_lru_add_drain_all(m);
	for (int i = 0; i < 16; i++)
		f[i] = folio_at(mm, r + (uint64_t)i * PAGE);
	/* Queued mlocks (the region itself is not locked) on folios that then go away. */
	for (int i = 0; i < 8; i++)
		mlock_folio(f[i]);
	is(st(m, a, LV_NR_MLOCK), 8, "%s: munmap: 8 mlocks counted, queued", d);
	is(lv_munmap(mm, r, 16 * PAGE), 0, "%s: munmap: unmap all 16", d);
	lv_lru_add_drain_all(m);
	is(st(m, a, LV_NR_MLOCK), 0, "%s: munmap: the frees uncount them", d);
	is(lv_mm_rss(mm), 0, "%s: munmap: rss 0", d);
	if (a)
		is(lv_memcg_usage(a), 0, "%s: munmap: usage 0", d);
	check_ok(m, d);

	/* A locked region unmapped in part with the munlocks left queued on the other slot. */
	is(lv_mmap_flags(mm, 16 * PAGE, LV_MAP_LOCKED, &q), 0, "%s: munmap: a locked region", d);
	is(write_pat(mm, q, 16 * PAGE, 2), 0, "%s: munmap: fault 16 locked pages", d);
	lv_lru_add_drain_all(m);
	is(st(m, a, LV_NR_UNEVICTABLE), 16, "%s: munmap: 16 unevictable", d);
	is(lv_munmap(mm, q + 4 * PAGE, 8 * PAGE), 0, "%s: munmap: unmap 8 in the middle", d);
	lv_lru_add_drain_all(m);
	is(st(m, a, LV_NR_MLOCK), 8, "%s: munmap: nr_mlock 8", d);
	is(st(m, a, LV_NR_UNEVICTABLE), 8, "%s: munmap: 8 unevictable", d);
	is(lv_mm_rss(mm), 8, "%s: munmap: rss 8", d);
	if (a)
		is(lv_memcg_usage(a), 8, "%s: munmap: usage 8", d);
	is(bad_pat(mm, q, 4 * PAGE, 2) + bad_pat(mm, q + 12 * PAGE, 4 * PAGE, 2), 0,
	   "%s: munmap: the rest kept its data", d);
	check_ok(m, d);
	lv_mm_destroy(mm);
	lv_lru_add_drain_all(m);
	is(st(m, a, LV_NR_MLOCK), 0, "%s: munmap: destroyed: nr_mlock 0", d);
	if (a)
		is(lv_memcg_remove(a), 0, "%s: munmap: memcg removed", d);
	finish(m, d);
}

struct race {
	struct lv_mm *mm;
	uint64_t r;
	int iters;
	pthread_barrier_t start;
};

static void *race_locker(void *arg)
{
	struct race *x = arg;

	pthread_barrier_wait(&x->start);
	for (int i = 0; i < x->iters; i++) {
		lv_mlock(x->mm, x->r, 64 * PAGE);
		lv_munlock(x->mm, x->r + (uint64_t)(i % 32) * PAGE, 16 * PAGE);
		if (i % 7 == 0)
			lv_munlockall(x->mm);
	}
	return NULL;
}

static void *race_mapper(void *arg)
{
	struct race *x = arg;

	pthread_barrier_wait(&x->start);
	for (int i = 0; i < x->iters; i++) {
		uint64_t at = x->r + (uint64_t)(i % 48) * PAGE;

		lv_munmap(x->mm, at, 8 * PAGE);
		write_pat(x->mm, x->r, 64 * PAGE, 3); /* faults where mapped; -EFAULT in holes */
	}
	return NULL;
}

static void test_munmap_race(void)
{
	struct lv_config cfg = test_config(0, 2);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *a = new_memcg(m, NULL, "a");
	struct lv_mm *mm = new_mm(m, a, 0);
	struct race x = { .mm = mm, .iters = 300 };
	pthread_t t1, t2;
	size_t rss;

	x.r = map_or_bail(mm, 64 * PAGE);
	is(write_pat(mm, x.r, 64 * PAGE, 3), 0, "race: write 64 pages");
	pthread_barrier_init(&x.start, NULL, 2);
	pthread_create(&t1, NULL, race_locker, &x);
	pthread_create(&t2, NULL, race_mapper, &x);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	pthread_barrier_destroy(&x.start);
	check_ok(m, "race");
	rss = lv_mm_rss(mm);
	is(lv_memcg_usage(a), rss, "race: usage equals rss (%zu)", rss);
	{
		unsigned int present = 0, mlocked = 0;

		for (unsigned int i = 0; i < 64; i++) {
			int err;
			struct lv_folio *f = anon_folio_get(mm, x.r / PAGE + i, &err);

			if (!f)
				continue;
			present++;
			mlocked += lv_folio_test(f, LV_PG_MLOCKED);
			lv_folio_put(f);
		}
		is(present, rss, "race: rss counts the present pages");
		is(lv_memcg_stat(a, LV_NR_MLOCK), mlocked,
		   "race: nr_mlock counts the mlocked ones");
	}
	is(lv_munlockall(mm), 0, "race: munlockall");
	is(lv_memcg_stat(a, LV_NR_MLOCK), 0, "race: nothing mlocked after munlockall");
	is(lv_memcg_stat(a, LV_NR_UNEVICTABLE), 0, "race: nothing unevictable after munlockall");
	finish_mm(m, mm, a, "race");
}

/*
 * Huge pages in locked regions: a huge fault in a locked region is mlocked whole; lv_mlock()
 * of a huge page covered whole mlocks it, of part of it does not; a munlock of part of it
 * munlocks all of it; a partial munmap of a locked huge page splits it, and the pages that
 * stay stay mlocked while those that leave are munlocked.
 */
static void test_huge(void)
{
	const uint64_t huge = 2ul << 20, nr = huge / PAGE;
	struct lv_config cfg = test_config(0, 1);
	struct lv_machine *m;
	struct lv_memcg *memcg;
	struct lv_folio *f;
	uint64_t addr, h;
	struct lv_mm *mm;

	cfg.node_mem_bytes = 32ul << 20;
	cfg.no_kcompactd = true;
	m = new_machine(&cfg);
	memcg = new_memcg(m, NULL, "huge");
	mm = lv_mm_create(m, memcg, 0);
	if (!mm)
		BAIL_OUT("lv_mm_create");

	/* A locked region faults its huge page in mlocked. */
	if (lv_mmap_flags(mm, 2 * huge, LV_MAP_LOCKED, &addr) ||
	    lv_madvise(mm, addr, 2 * huge, LV_MADV_HUGEPAGE))
		BAIL_OUT("locked huge region");
	h = (addr + huge - 1) & ~(huge - 1);
	ok(lv_mm_memset(mm, h, 1, 1) == 0, "huge: fault in a locked huge region");
	lv_lru_add_drain(m);
	f = folio_at(mm, h);
	is(lv_folio_nr_pages(f), nr, "huge: the fault mapped a huge page");
	ok(lv_folio_test(f, LV_PG_MLOCKED) && lv_folio_test(f, LV_PG_UNEVICTABLE),
	   "huge: mlocked and unevictable");
	is(st(m, memcg, LV_NR_MLOCK), nr, "huge: nr_mlock counts its 512 pages");
	is(lv_munmap(mm, addr, 2 * huge), 0, "huge: munmap of the locked region");
	lv_lru_add_drain_all(m);
	is(st(m, memcg, LV_NR_MLOCK), 0, "huge: nr_mlock back to 0 after the munmap");

	/* lv_mlock() of part of a huge page leaves it alone; of all of it mlocks it. */
	if (lv_mmap(mm, 2 * huge, &addr) || lv_madvise(mm, addr, 2 * huge, LV_MADV_HUGEPAGE))
		BAIL_OUT("huge region");
	h = (addr + huge - 1) & ~(huge - 1);
	if (lv_mm_memset(mm, h, 1, 1) || lv_folio_nr_pages(folio_at(mm, h)) != nr)
		BAIL_OUT("no huge page");
	is(lv_mlock(mm, h, PAGE), 0, "huge: lv_mlock of its first page");
	is(st(m, memcg, LV_NR_MLOCK), 0, "huge: a huge page covered in part is not mlocked");
	is(lv_mlock(mm, h, huge), 0, "huge: lv_mlock of all of it");
	f = folio_at(mm, h);
	ok(lv_folio_nr_pages(f) == nr && lv_folio_test(f, LV_PG_MLOCKED),
	   "huge: covered whole, it is mlocked, still huge");
	is(st(m, memcg, LV_NR_MLOCK), nr, "huge: nr_mlock 512");
	is(lv_munlock(mm, h + PAGE, PAGE), 0, "huge: lv_munlock of one page of it");
	f = folio_at(mm, h);
	ok(!lv_folio_test(f, LV_PG_MLOCKED) && !lv_folio_test(f, LV_PG_UNEVICTABLE),
	   "huge: a munlock of part of it munlocks all of it");
	is(st(m, memcg, LV_NR_MLOCK), 0, "huge: nr_mlock 0");

	/* A partial munmap of a locked huge page: the pages left stay mlocked. */
	is(lv_mlock(mm, h, huge), 0, "huge: lv_mlock of all of it again");
	is(lv_munmap(mm, h + huge / 2, huge / 2), 0, "huge: munmap of its second half");
	lv_lru_add_drain_all(m);
	is(lv_mm_rss(mm), nr / 2, "huge: half of it still mapped");
	is(mlocked_pages(mm, h, (unsigned int)(nr / 2)), nr / 2,
	   "huge: every page left is mlocked and unevictable");
	is(lv_folio_nr_pages(folio_at(mm, h)), 1, "huge: the huge page was split");
	is(st(m, memcg, LV_NR_MLOCK), nr / 2, "huge: nr_mlock counts the half left");
	is(lv_check(m, NULL), 0, "huge: lv_check");
	lv_mm_destroy(mm);
	lv_lru_add_drain_all(m);
	is(st(m, memcg, LV_NR_MLOCK), 0, "huge: nr_mlock 0 after lv_mm_destroy");
	finish(m, "huge");
}

int main(void)
{
	for (int v = 0; v < 3; v++) {
		test_lock_unlock(v);
		test_pressure(v);
		test_stranded(v);
		test_rescued(v);
		test_pageout_stranded(v);
		test_munmap(v);
	}
	test_map_locked_future();
	test_bad_input();
	test_drains();
	test_cull();
	test_memcg();
	test_migrate();
	test_munmap_race();
	test_huge();
	return done_testing();
}
