// SPDX-License-Identifier: LGPL-2.1-or-later
/* Anonymous memory (memory.c): address space errors, brk grow/shrink accounting, mmap and
 * munmap (splitting a region, holes, the heap refused), byte-exact data over many pages and
 * unaligned writes against a model, faults at a memcg limit (-ENOMEM, nothing leaked, lazyfree
 * pages making room), lazyfree semantics (MADV_FREE, reclaim, a write cancelling it),
 * MADV_COLD and MADV_DONTNEED, the preferred node of faults on a two-node machine, memcg
 * removal refused while an address space lives, threads sharing one address space, and a
 * metadata-only machine, and unmapping that frees its folios after dropping the page table
 * lock. Public API, plus a wrapped free_folios() that looks at the locks held. */
#include "internal.h" /* lv_held, free_folios: are unmapped folios freed under the mm lock? */

#include "lvtest.h"

#include <pthread.h>
#include <sched.h>
#include <time.h>

#define PAGE LV_PAGE_SIZE

/*
 * The library's free_folios() is wrapped (-Wl,--wrap=free_folios, see the Makefile): count the
 * folios freed, and those freed while this thread holds an mm's page_table_lock.
 */
static unsigned long freed, freed_under_mm;

void __real_free_folios(struct lv_folio **folios, unsigned int nr);
void __wrap_free_folios(struct lv_folio **folios, unsigned int nr);

void __wrap_free_folios(struct lv_folio **folios, unsigned int nr)
{
	__atomic_fetch_add(&freed, nr, __ATOMIC_RELAXED);
	if (lv_held[LV_LOCK_CLASS_MM])
		__atomic_fetch_add(&freed_under_mm, nr, __ATOMIC_RELAXED);
	__real_free_folios(folios, nr);
}

/*
 * The host allocator is wrapped too (every object linked into this test): count the calls made
 * while this thread holds an mm's page_table_lock. Page tables and regions are allocated
 * before it is taken and freed after it is dropped (memory.c, pt_alloc()).
 */
static unsigned long allocs_under_mm;

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
void __real_free(void *p);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);
void __wrap_free(void *p);

static void count_alloc(void)
{
	if (lv_held[LV_LOCK_CLASS_MM])
		__atomic_fetch_add(&allocs_under_mm, 1, __ATOMIC_RELAXED);
}

void *__wrap_malloc(size_t size)
{
	count_alloc();
	return __real_malloc(size);
}

/* calloc_countdown: when set to N > 0, this thread's Nth calloc() from now fails (ENOMEM). */
static __thread int calloc_countdown;

void *__wrap_calloc(size_t n, size_t size)
{
	count_alloc();
	if (calloc_countdown > 0 && --calloc_countdown == 0) {
		errno = ENOMEM;
		return NULL;
	}
	return __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size)
{
	count_alloc();
	return __real_realloc(p, size);
}

void __wrap_free(void *p)
{
	count_alloc();
	__real_free(p);
}

static long nonzero(struct lv_mm *mm, uint64_t addr, size_t len)
{
	return bad_pat(mm, addr, len, -1);
}

static int read_rc(struct lv_mm *mm, uint64_t addr, size_t len)
{
	unsigned char buf[64];

	return lv_mm_read(mm, addr, buf, len < sizeof(buf) ? len : sizeof(buf));
}

static uint64_t nst(struct lv_machine *m, int nid, enum lv_stat_item item)
{
	return lv_node_stat(m, nid, item);
}

static uint64_t anon_lru(struct lv_memcg *memcg)
{
	return lv_memcg_stat(memcg, LV_NR_INACTIVE_ANON) + lv_memcg_stat(memcg, LV_NR_ACTIVE_ANON);
}

/* ---- errors ---------------------------------------------------------------------------- */

static void test_errors(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg), *other = new_machine(&cfg);
	struct lv_memcg *foreign = new_memcg(other, NULL, "foreign"), *a = new_memcg(m, NULL, "a");
	uint64_t addr = 0, brk0, brk1;
	unsigned char buf[16];
	struct lv_mm *mm;

	errno = 0;
	ok(!lv_mm_create(m, NULL, -1) && errno == EINVAL, "create: nid -1 -> NULL, EINVAL");
	errno = 0;
	ok(!lv_mm_create(m, NULL, 1) && errno == EINVAL, "create: nid 1 of 1 node -> EINVAL");
	errno = 0;
	ok(!lv_mm_create(m, NULL, LV_MAX_NODES) && errno == EINVAL, "create: nid 64 -> EINVAL");
	errno = 0;
	ok(!lv_mm_create(NULL, NULL, 0) && errno == EINVAL, "create: NULL machine -> EINVAL");
	errno = 0;
	ok(!lv_mm_create(m, foreign, 0) && errno == EINVAL,
	   "create: a memcg of another machine -> EINVAL");
	is(lv_memcg_remove(foreign), 0, "create: the refused create left no hold on the memcg");
	finish(other, "errors (other machine)");

	mm = new_mm(m, a, 0);
	is(lv_mm_set_node(mm, -1), -EINVAL, "set_node: -1 -> -EINVAL");
	is(lv_mm_set_node(mm, 1), -EINVAL, "set_node: 1 of 1 node -> -EINVAL");
	is(lv_mm_set_node(mm, 0), 0, "set_node: 0 -> 0");
	is(lv_mm_rss(mm), 0, "new mm: rss 0");

	is(lv_mmap(mm, 0, &addr), -EINVAL, "mmap: len 0 -> -EINVAL");
	is(lv_mmap(mm, (64ull << 30) + 1, &addr), -EINVAL, "mmap: 64 GiB + 1 -> -EINVAL");
	/* Page rounding must not wrap for lengths near 2^64. */
	is(lv_mmap(mm, SIZE_MAX, &addr), -EINVAL, "mmap: SIZE_MAX -> -EINVAL");
	addr = map_or_bail(mm, 4 * PAGE);
	ok(addr && !(addr & (PAGE - 1)), "mmap: a page-aligned nonzero address (%#llx)",
	   (unsigned long long)addr);
	is(lv_munmap(mm, addr + 1, PAGE), -EINVAL, "munmap: unaligned address -> -EINVAL");
	is(lv_munmap(mm, addr, 0), -EINVAL, "munmap: len 0 -> -EINVAL");
	is(lv_madvise(mm, addr + 8, PAGE, LV_MADV_DONTNEED), -EINVAL,
	   "madvise: unaligned address -> -EINVAL");
	is(lv_madvise(mm, addr, PAGE, 0), -EINVAL, "madvise: advice 0 -> -EINVAL");
	is(lv_madvise(mm, addr, PAGE, 9), -EINVAL, "madvise: advice 9 (MADV_DONTFORK) -> -EINVAL");
	is(lv_madvise(mm, addr, 0, LV_MADV_FREE), 0, "madvise: len 0 -> 0");
	{
		/* The same rounding in lv_munmap() and lv_madvise(). */
		int rc;

		if (write_pat(mm, addr, PAGE, 1))
			BAIL_OUT("write failed");
		rc = lv_munmap(mm, addr, SIZE_MAX);
		ok(rc == -EINVAL && read_rc(mm, addr, 1) == 0,
		   "munmap: len SIZE_MAX wraps past 2^64 -> -EINVAL, nothing unmapped (got %d)",
		   rc);
		rc = lv_madvise(mm, addr, SIZE_MAX, LV_MADV_DONTNEED);
		ok(rc == -EINVAL && read_rc(mm, addr, 1) == 0,
		   "madvise: len SIZE_MAX wraps past 2^64 -> -EINVAL, nothing advised (got %d)",
		   rc);
		is(lv_munmap(mm, UINT64_MAX & ~(PAGE - 1), 2 * PAGE), -EINVAL,
		   "munmap: two pages from the last one wrap -> -EINVAL");
		is(lv_munmap(mm, UINT64_MAX & ~(PAGE - 1), PAGE), 0,
		   "munmap: the last page of 2^64, mapped or not -> 0");
		is(lv_madvise(mm, UINT64_MAX & ~(PAGE - 1), PAGE + 1, LV_MADV_COLD), -EINVAL,
		   "madvise: one byte past 2^64 -> -EINVAL");
		if (read_rc(mm, addr, 1) == 0)
			lv_madvise(mm, addr, PAGE, LV_MADV_DONTNEED);
		lv_lru_add_drain_all(m);
	}

	is(lv_mm_read(mm, 0, buf, 1), -EFAULT, "read: address 0 -> -EFAULT");
	is(lv_mm_write(mm, 0, buf, 1), -EFAULT, "write: address 0 -> -EFAULT");
	is(lv_mm_memset(mm, addr - PAGE, 0, 1), -EFAULT,
	   "memset: the page below a region -> -EFAULT");
	is(lv_mm_read(mm, addr + 4 * PAGE, buf, 1), -EFAULT, "read: just past a region -> -EFAULT");
	is(lv_mm_read(mm, UINT64_MAX - 3, buf, 8), -EFAULT,
	   "read: wrapping around 2^64 -> -EFAULT");
	is(lv_mm_write(mm, addr, buf, 0), 0, "write: len 0 -> 0");
	is(lv_mm_rss(mm), 0, "the refused and empty writes faulted nothing");
	is(lv_memcg_usage(a), 0, "... and charged nothing");

	is(lv_mm_brk(mm, 0, &brk0), 0, "brk: 0 reports the heap start");
	ok(brk0 && !(brk0 & (PAGE - 1)), "brk: the start is page aligned (%#llx)",
	   (unsigned long long)brk0);
	is(lv_mm_brk(mm, -1, &brk1), -EINVAL, "brk: shrinking an empty heap -> -EINVAL");
	is(lv_mm_brk(mm, (int64_t)(64ull << 30) + 1, NULL), -ENOMEM,
	   "brk: above 64 GiB -> -ENOMEM");
	is(lv_mm_brk(mm, 0, &brk1), 0, "brk: 0 again");
	is(brk1, brk0, "brk: the refused calls changed nothing");
	is(lv_mm_brk(mm, 2 * PAGE, NULL), 0, "brk: old_brk may be NULL");

	is(lv_memcg_remove(a), -EBUSY, "remove: a memcg with an address space -> -EBUSY");
	addr = map_or_bail(mm, PAGE);
	is(write_pat(mm, addr, PAGE, 1), 0, "the memcg still charges after the refused removal");
	is(lv_memcg_usage(a), 1, "... 1 page");
	lv_mm_destroy(mm);
	lv_mm_destroy(NULL); /* a no-op */
	lv_lru_add_drain_all(m);
	is(lv_memcg_usage(a), 0, "destroyed: usage 0");
	is(lv_memcg_remove(a), 0, "destroyed: the memcg can be removed");
	finish(m, "errors");
}

/* ---- brk --------------------------------------------------------------------------------- */

/*
 * Page tables and regions are allocated unlocked; when that fails, the call fails cleanly:
 * -ENOMEM, the heap and the regions as they were, every byte still there.
 */
static void test_table_enomem(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *a = new_memcg(m, NULL, "a");
	struct lv_mm *mm = new_mm(m, a, 0);
	uint64_t base, cur, r;

	is(lv_mm_brk(mm, 10 * PAGE, &base), 0, "enomem: a heap of 10 pages");
	is(write_pat(mm, base, 10 * PAGE, 4), 0, "enomem: written");
	calloc_countdown = 1;
	is(lv_mm_brk(mm, 100 * PAGE, NULL), -ENOMEM, "enomem: growing its table fails -> -ENOMEM");
	is(calloc_countdown, 0, "enomem: ... at the table's allocation");
	lv_mm_brk(mm, 0, &cur);
	is(cur, base + 10 * PAGE, "enomem: the heap did not move");
	is(bad_pat(mm, base, 10 * PAGE, 4), 0, "enomem: its pages are intact");
	is(lv_mm_brk(mm, 100 * PAGE, NULL), 0, "enomem: the same grow succeeds afterwards");
	is(bad_pat(mm, base, 10 * PAGE, 4), 0, "enomem: ... and keeps them");

	r = map_or_bail(mm, 10 * PAGE);
	is(write_pat(mm, r, 10 * PAGE, 5), 0, "enomem: a region of 10 pages, written");
	for (int nth = 1; nth <= 2; nth++) { /* the region, then its page table */
		calloc_countdown = nth;
		is(lv_munmap(mm, r + 3 * PAGE, 4 * PAGE), -ENOMEM,
		   "enomem: a hole needing a split fails at allocation %d -> -ENOMEM", nth);
		is(calloc_countdown, 0, "enomem: ... at that allocation");
		is(bad_pat(mm, r, 10 * PAGE, 5), 0, "enomem: nothing was unmapped");
	}
	is(lv_mm_rss(mm), 20, "enomem: rss unchanged (10 heap + 10 region pages)");
	is(lv_munmap(mm, r + 3 * PAGE, 4 * PAGE), 0, "enomem: the same hole succeeds afterwards");
	is(read_rc(mm, r + 3 * PAGE, 1), -EFAULT, "enomem: ... and is a hole");
	is(bad_pat(mm, r + 7 * PAGE, 3 * PAGE, 5), 0, "enomem: ... the far part keeps its data");
	finish_mm(m, mm, a, "enomem");
}

static void test_brk(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *a = new_memcg(m, NULL, "a");
	uint64_t free0 = nstat(m, LV_NR_FREE), base, old, cur;
	struct lv_mm *mm = new_mm(m, a, 0);
	long bad = 0;

	is(lv_mm_brk(mm, 0, &base), 0, "brk: current end");
	is(lv_mm_brk(mm, 100 * PAGE, &old), 0, "brk: grow by 100 pages");
	is(old, base, "brk: old_brk is the previous end");
	lv_mm_brk(mm, 0, &cur);
	is(cur, base + 100 * PAGE, "brk: the end moved by 100 pages");
	is(lv_mm_rss(mm), 0, "brk grow: nothing mapped (rss 0)");
	is(lv_memcg_usage(a), 0, "brk grow: nothing charged");
	is(nstat(m, LV_NR_FREE), free0, "brk grow: no page taken from the node");
	is(nonzero(mm, base, 100 * PAGE), 0, "brk grow: the heap reads zeros");
	is(lv_mm_rss(mm), 0, "brk grow: reading faulted nothing");

	is(write_pat(mm, base, 100 * PAGE, 1), 0, "write 100 heap pages");
	is(lv_mm_rss(mm), 100, "write: rss 100");
	is(lv_memcg_usage(a), 100, "write: usage 100");
	is(nstat(m, LV_NR_FREE), free0 - 100, "write: 100 pages taken from the node");
	is(nstat(m, LV_NR_CHARGED), 100, "write: node LV_NR_CHARGED 100");
	lv_lru_add_drain_all(m);
	is(nstat(m, LV_NR_INACTIVE_ANON), 100, "drained: 100 on the inactive anon list");
	is(nstat(m, LV_NR_ACTIVE_ANON), 0, "drained: none active");
	is(lv_memcg_stat(a, LV_NR_INACTIVE_ANON), 100, "drained: on the memcg's own list");
	is(nstat(m, LV_NR_INACTIVE_FILE) + nstat(m, LV_NR_ACTIVE_FILE), 0, "drained: no file page");
	is(bad_pat(mm, base, 100 * PAGE, 1), 0, "read back: 100 pages byte-exact");

	is(lv_mm_brk(mm, -30 * (int64_t)PAGE, &old), 0, "brk: shrink by 30 pages");
	is(old, base + 100 * PAGE, "brk shrink: old_brk is the previous end");
	is(lv_mm_rss(mm), 70, "brk shrink: rss 70");
	is(lv_memcg_usage(a), 70, "brk shrink: exactly 30 pages uncharged");
	is(nstat(m, LV_NR_FREE), free0 - 70, "brk shrink: 30 pages back on the node");
	is(nstat(m, LV_NR_INACTIVE_ANON), 70, "brk shrink: 30 pages left the LRU");
	is(read_rc(mm, base + 70 * PAGE, 1), -EFAULT, "brk shrink: the old end -> -EFAULT");
	is(read_rc(mm, base + 70 * PAGE - 1, 2), -EFAULT,
	   "brk shrink: a read crossing the end -> -EFAULT");
	is(bad_pat(mm, base, 70 * PAGE, 1), 0, "brk shrink: the 70 pages left are intact");

	/* Rounding: any part of a page counts as a page, both ways. */
	is(lv_mm_brk(mm, 1, &old), 0, "brk: grow by 1 byte");
	lv_mm_brk(mm, 0, &cur);
	is(cur, old + PAGE, "brk: ... grows by a page");
	is(lv_mm_brk(mm, PAGE + 1, NULL), 0, "brk: grow by a page + 1 byte");
	lv_mm_brk(mm, 0, &cur);
	is(cur, old + 3 * PAGE, "brk: ... grows by two pages");
	is(write_pat(mm, old, 3 * PAGE, 2), 0, "brk: write the 3 new pages");
	lv_lru_add_drain_all(m);
	is(lv_mm_brk(mm, -1, NULL), 0, "brk: shrink by 1 byte");
	lv_mm_brk(mm, 0, &cur);
	is(cur, old + 2 * PAGE, "brk: ... shrinks by a page");
	is(lv_mm_rss(mm), 72, "brk: ... and releases it (rss 72)");
	is(lv_mm_brk(mm, -(int64_t)PAGE - 1, NULL), 0, "brk: shrink by a page + 1 byte");
	lv_mm_brk(mm, 0, &cur);
	is(cur, old, "brk: ... shrinks by two pages");
	is(lv_mm_rss(mm), 70, "brk: ... rss 70");
	is(lv_memcg_usage(a), 70, "brk: usage 70");

	/* Pages still in the CPU's lru_add batch are released when the batch lets go. */
	is(lv_mm_brk(mm, 5 * PAGE, NULL), 0, "brk: grow by 5 pages");
	is(write_pat(mm, cur, 5 * PAGE, 3), 0, "brk: write them (queued for the LRU)");
	is(lv_mm_brk(mm, -5 * (int64_t)PAGE, NULL), 0, "brk: shrink them away at once");
	is(lv_mm_rss(mm), 70, "brk: rss 70");
	lv_lru_add_drain_all(m);
	is(lv_memcg_usage(a), 70, "brk: after a drain they are uncharged");
	is(nstat(m, LV_NR_FREE), free0 - 70, "brk: ... and free");

	is(lv_mm_brk(mm, -(int64_t)(cur - base) - 1, &old), -EINVAL,
	   "brk: shrinking below the start -> -EINVAL");
	lv_mm_brk(mm, 0, &cur);
	is(cur, base + 70 * PAGE, "brk: ... the end did not move");
	is(lv_mm_rss(mm), 70, "brk: ... nothing was released");
	is(bad_pat(mm, base, 70 * PAGE, 1), 0, "brk: ... the data is intact");
	is(lv_mm_brk(mm, -(int64_t)(cur - base), NULL), 0, "brk: shrink to exactly the start");
	is(lv_mm_rss(mm), 0, "brk: empty heap: rss 0");
	is(lv_memcg_usage(a), 0, "brk: empty heap: usage 0");
	is(nstat(m, LV_NR_FREE), free0, "brk: empty heap: every page back on the node");
	is(nstat(m, LV_NR_INACTIVE_ANON) + nstat(m, LV_NR_ACTIVE_ANON), 0, "brk: empty LRU");
	is(read_rc(mm, base, 1), -EFAULT, "brk: empty heap: -EFAULT");

	/* Growing again: the old pages are gone, the new ones read zeros. */
	is(lv_mm_brk(mm, 10 * PAGE, NULL), 0, "brk: grow again by 10 pages");
	is(nonzero(mm, base, 10 * PAGE), 0, "brk: regrown pages read zeros");
	is(lv_mm_rss(mm), 0, "brk: ... not faulted");
	is(lv_mm_memset(mm, base + PAGE + 7, 0x5a, 3), 0, "brk: memset 3 bytes");
	is(lv_mm_rss(mm), 1, "brk: one page faulted");
	{
		unsigned char buf[PAGE];

		lv_mm_read(mm, base + PAGE, buf, PAGE);
		for (size_t i = 0; i < PAGE; i++)
			bad += buf[i] != (i >= 7 && i < 10 ? 0x5a : 0);
	}
	is(bad, 0, "brk: the memset page is zeros around the 3 bytes");
	finish_mm(m, mm, a, "brk");
}

/* ---- mmap and munmap --------------------------------------------------------------------- */

static void test_mmap(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *a = new_memcg(m, NULL, "a");
	uint64_t free0 = nstat(m, LV_NR_FREE), r1, r2, r3, heap;
	struct lv_mm *mm = new_mm(m, a, 0);
	unsigned char buf[64];

	r1 = map_or_bail(mm, 10 * PAGE);
	r2 = map_or_bail(mm, 5 * PAGE + 1);
	ok(r2 >= r1 + 10 * PAGE || r2 + 6 * PAGE <= r1, "mmap: two regions do not overlap");
	is(lv_mm_rss(mm), 0, "mmap: nothing faulted");
	is(lv_memcg_usage(a), 0, "mmap: nothing charged");
	is(nonzero(mm, r1, 10 * PAGE), 0, "mmap: a new region reads zeros");
	is(lv_mm_rss(mm), 0, "mmap: ... without faulting (rss 0)");
	is(nstat(m, LV_NR_FREE), free0, "mmap: ... or taking a page");
	is(read_rc(mm, r2 + 6 * PAGE - 1, 1), 0, "mmap: 5 pages + 1 byte maps 6 whole pages");
	is(read_rc(mm, r2 + 6 * PAGE, 1), -EFAULT, "mmap: ... and not a seventh");

	is(write_pat(mm, r1, 10 * PAGE, 1), 0, "write region 1 (10 pages)");
	is(write_pat(mm, r2, 6 * PAGE, 2), 0, "write region 2 (6 pages)");
	is(lv_mm_rss(mm), 16, "rss 16");
	lv_lru_add_drain_all(m);

	/* A hole in the middle of region 1: pages 3..6. */
	is(lv_munmap(mm, r1 + 3 * PAGE, 4 * PAGE), 0, "munmap: pages 3..6 of region 1");
	is(lv_mm_rss(mm), 12, "munmap: rss 12");
	is(lv_memcg_usage(a), 12, "munmap: 4 pages uncharged");
	is(nstat(m, LV_NR_FREE), free0 - 12, "munmap: 4 pages back on the node");
	is(nstat(m, LV_NR_INACTIVE_ANON), 12, "munmap: 4 pages off the LRU");
	is(bad_pat(mm, r1, 3 * PAGE, 1), 0, "split: the part before the hole keeps its data");
	is(bad_pat(mm, r1 + 7 * PAGE, 3 * PAGE, 1), 0, "split: the part after it too");
	is(read_rc(mm, r1 + 3 * PAGE, 1), -EFAULT, "split: the hole's first byte -> -EFAULT");
	is(read_rc(mm, r1 + 7 * PAGE - 1, 1), -EFAULT, "split: the hole's last byte -> -EFAULT");
	is(read_rc(mm, r1 + 3 * PAGE - 8, 16), -EFAULT, "split: a read into the hole -> -EFAULT");
	is(write_pat(mm, r1 + 5 * PAGE, 10, 9), -EFAULT, "split: a write into the hole -> -EFAULT");
	is(lv_mm_rss(mm), 12, "split: ... faulted nothing");
	is(write_pat(mm, r1 + 2 * PAGE, PAGE, 3), 0, "split: the part before is still writable");
	is(write_pat(mm, r1 + 7 * PAGE, PAGE, 3), 0, "split: the part after too");
	is(bad_pat(mm, r1 + 2 * PAGE, PAGE, 3) + bad_pat(mm, r1 + 7 * PAGE, PAGE, 3), 0,
	   "split: ... with the new data");
	is(lv_madvise(mm, r1, 10 * PAGE, LV_MADV_COLD), -ENOMEM,
	   "split: madvise over the hole -> -ENOMEM");
	is(lv_munmap(mm, r1 + 3 * PAGE, 4 * PAGE), 0, "munmap: the hole again -> 0 (ignored)");
	is(lv_mm_rss(mm), 12, "munmap: ... nothing changed");

	/* A write that runs off the end of a region: the bytes before the end are written. */
	memset(buf, 0x77, sizeof(buf));
	is(lv_mm_write(mm, r2 + 6 * PAGE - 16, buf, 32), -EFAULT,
	   "write: 32 bytes over the end of a region -> -EFAULT");
	{
		unsigned char got[16];

		lv_mm_read(mm, r2 + 6 * PAGE - 16, got, 16);
		ok(memcmp(got, buf, 16) == 0, "write: ... the 16 bytes inside were written");
	}
	is(bad_pat(mm, r2, 6 * PAGE - 16, 2), 0, "write: ... nothing else changed");
	is(lv_mm_write(mm, r2 - 16, buf, 32), -EFAULT,
	   "write: 32 bytes from below a region into it -> -EFAULT");
	is(bad_pat(mm, r2, 16, 2), 0, "write: ... nothing written into the region");

	/* Trimming the ends, then removing what is left. */
	is(lv_munmap(mm, r1, PAGE), 0, "munmap: the first page of region 1");
	is(read_rc(mm, r1, 1), -EFAULT, "trim: it is gone");
	is(bad_pat(mm, r1 + PAGE, PAGE, 1) + bad_pat(mm, r1 + 2 * PAGE, PAGE, 3), 0,
	   "trim: pages 1 and 2 intact");
	is(lv_munmap(mm, r1 + 9 * PAGE, 100 * PAGE), 0,
	   "munmap: the last page of region 1 and beyond (the guard, region 2)");
	is(read_rc(mm, r1 + 9 * PAGE, 1), -EFAULT, "trim: region 1's last page is gone");
	ok(r2 < r1 + 9 * PAGE || r2 >= r1 + 109 * PAGE || read_rc(mm, r2, 1) == -EFAULT,
	   "trim: region 2 is gone if it was in range");
	if (r2 >= r1 + 9 * PAGE && r2 < r1 + 109 * PAGE)
		diag("region 2 was inside the unmapped range");
	is(lv_munmap(mm, r1 + PAGE, 2 * PAGE), 0, "munmap: the rest of the first part");
	is(read_rc(mm, r1 + PAGE, 1), -EFAULT, "unmap whole: the first part is gone");
	is(bad_pat(mm, r1 + 7 * PAGE, PAGE, 3) + bad_pat(mm, r1 + 8 * PAGE, PAGE, 1), 0,
	   "unmap whole: the second part is untouched");
	is(lv_munmap(mm, r1 + 7 * PAGE, 2 * PAGE), 0, "munmap: exactly the second part");
	is(read_rc(mm, r1 + 7 * PAGE, 1), -EFAULT, "unmap whole: the second part is gone");
	r3 = map_or_bail(mm, 2 * PAGE);
	is(write_pat(mm, r3, 2 * PAGE, 4), 0, "a third region");
	is(lv_munmap(mm, r1 & ~((1ull << 40) - 1), 1ull << 41), 0,
	   "munmap: a 2 TiB range over everything mapped");
	is(lv_mm_rss(mm), 0, "unmap all: rss 0");
	is(read_rc(mm, r3, 1), -EFAULT, "unmap all: the third region is gone");
	lv_lru_add_drain_all(m);
	is(lv_memcg_usage(a), 0, "unmap all: usage 0");
	is(nstat(m, LV_NR_FREE), free0, "unmap all: every page back on the node");

	/* The heap shrinks only through brk; an empty heap is nothing to overlap. */
	lv_mm_brk(mm, 0, &heap);
	is(lv_munmap(mm, heap - PAGE, 2 * PAGE), 0, "munmap: across an empty heap -> 0");
	is(lv_munmap(mm, 0, 1ull << 46), 0, "munmap: 64 TiB from 0, nothing mapped -> 0");
	is(lv_mm_brk(mm, 4 * PAGE, NULL), 0, "heap: 4 pages");
	is(write_pat(mm, heap, 4 * PAGE, 5), 0, "heap: written");
	is(lv_munmap(mm, heap, PAGE), -EINVAL, "munmap: the heap's first page -> -EINVAL");
	is(lv_munmap(mm, heap + 3 * PAGE, PAGE), -EINVAL,
	   "munmap: the heap's last page -> -EINVAL");
	is(lv_munmap(mm, heap - PAGE, 2 * PAGE), -EINVAL,
	   "munmap: a range into the heap -> -EINVAL");
	is(lv_mm_rss(mm), 4, "heap: nothing was unmapped");
	is(bad_pat(mm, heap, 4 * PAGE, 5), 0, "heap: intact");

	/* Many regions: each is its own; unmapping one leaves the others. */
	{
		uint64_t r[16];
		long bad = 0;

		for (int i = 0; i < 16; i++) {
			r[i] = map_or_bail(mm, (size_t)(i + 1) * PAGE);
			bad += write_pat(mm, r[i], (size_t)(i + 1) * PAGE, 10 + (unsigned)i) != 0;
		}
		for (int i = 0; i < 16; i += 2)
			bad += lv_munmap(mm, r[i], (size_t)(i + 1) * PAGE) != 0;
		for (int i = 1; i < 16; i += 2)
			bad += bad_pat(mm, r[i], (size_t)(i + 1) * PAGE, 10 + i) != 0;
		for (int i = 0; i < 16; i += 2)
			bad += read_rc(mm, r[i], 1) != -EFAULT;
		is(bad, 0, "16 regions: every other one unmapped, the others intact");
		is(lv_mm_rss(mm), 4 + 2 + 4 + 6 + 8 + 10 + 12 + 14 + 16, "16 regions: rss");
	}
	finish_mm(m, mm, a, "mmap");
}

/* ---- data against a model ---------------------------------------------------------------- */

#define DATA_PAGES 64

static void test_data(void)
{
	static const size_t chunks[] = { 1, 7, 511, PAGE - 1, PAGE, PAGE + 1, 3 * PAGE + 5 };
	const size_t size = DATA_PAGES * PAGE;
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_mm *mm = new_mm(m, NULL, 0);
	unsigned char *model = calloc(1, size), *buf = malloc(size);
	size_t bad = 0, failed = 0, present = 0;
	bool touched[DATA_PAGES] = { false };
	uint32_t seed = 777;
	uint64_t r;

	if (!model || !buf)
		BAIL_OUT("out of memory");
	r = map_or_bail(mm, size);

	/* Unaligned writes of every size at every kind of offset, then random ones. */
	for (int i = 0; i < 3000; i++) {
		size_t off, len;
		int op;

		seed = seed * 1103515245 + 12345;
		off = (seed >> 3) % size;
		seed = seed * 1103515245 + 12345;
		len = i < 70 ? chunks[i % 7] : 1 + (seed >> 3) % (3 * PAGE);
		if (i < 70)
			off = (size_t)(i / 7) * 409 * 13 % size;
		if (off + len > size)
			len = size - off;
		seed = seed * 1103515245 + 12345;
		op = (seed >> 8) % 3;
		if (op == 0) {
			for (size_t k = 0; k < len; k++)
				buf[k] = pat(r + off + k, (unsigned)i);
			failed += lv_mm_write(mm, r + off, buf, len) != 0;
			memcpy(model + off, buf, len);
		} else if (op == 1) {
			int c = (int)(seed >> 16) & 0xff;

			failed += lv_mm_memset(mm, r + off, c, len) != 0;
			memset(model + off, c, len);
		} else {
			memset(buf, 0xa5, len);
			failed += lv_mm_read(mm, r + off, buf, len) != 0;
			bad += memcmp(buf, model + off, len) != 0;
			continue;
		}
		for (size_t p = off / PAGE; p <= (off + len - 1) / PAGE; p++)
			touched[p] = true;
	}
	for (int p = 0; p < DATA_PAGES; p++)
		present += touched[p];
	is(failed, 0, "data: 3000 random writes, memsets and reads succeeded");
	is(bad, 0, "data: every read matched the model");
	memset(buf, 0xa5, size);
	is(lv_mm_read(mm, r, buf, size), 0, "data: read all 64 pages at once");
	ok(memcmp(buf, model, size) == 0, "data: all 64 pages byte-exact");
	is(lv_mm_rss(mm), present, "data: rss counts exactly the pages written (%zu)", present);

	/* Chunked reads across page boundaries. */
	bad = 0;
	for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++)
		for (size_t off = c; off < size; off += chunks[c]) {
			size_t len = off + chunks[c] > size ? size - off : chunks[c];

			failed += lv_mm_read(mm, r + off, buf, len) != 0;
			bad += memcmp(buf, model + off, len) != 0;
		}
	is(failed + bad, 0, "data: chunked reads of 1 byte to 3 pages + 5 all match");

	/* A write over two pages touches only its bytes. */
	lv_madvise(mm, r, size, LV_MADV_DONTNEED);
	is(lv_mm_rss(mm), 0, "data: DONTNEED dropped every page");
	memset(buf, 0x3c, 200);
	is(lv_mm_write(mm, r + 5 * PAGE - 100, buf, 200), 0, "data: 200 bytes across pages 4/5");
	is(lv_mm_rss(mm), 2, "data: ... faulted exactly 2 pages");
	lv_mm_read(mm, r + 4 * PAGE, buf, 2 * PAGE);
	bad = 0;
	for (size_t i = 0; i < 2 * PAGE; i++)
		bad += buf[i] != (i >= PAGE - 100 && i < PAGE + 100 ? 0x3c : 0);
	is(bad, 0, "data: ... the 200 bytes set, the rest of both pages zero");
	check_ok(m, "data");
	lv_mm_destroy(mm);
	free(model);
	free(buf);
	finish(m, "data");
}

/* ---- memcg limits ------------------------------------------------------------------------ */

#define LIMIT 200

static void test_limit(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *a = new_memcg(m, NULL, "a");
	struct lv_memcg *p = new_memcg(m, NULL, "p"), *c = lv_memcg_create(m, p, "c");
	uint64_t free0 = nstat(m, LV_NR_FREE), r, steal;
	struct lv_mm *mm = new_mm(m, a, 0), *mc;
	int err = 0, n = 0, fails = 0;
	size_t over = 0;

	if (!c)
		BAIL_OUT("lv_memcg_create(c) failed");
	is(lv_memcg_set_max(a, LIMIT), 0, "limit: max %d pages", LIMIT);
	r = map_or_bail(mm, 2 * LIMIT * PAGE);
	while (n < 2 * LIMIT - 20 && !(err = write_pat(mm, r + (uint64_t)n * PAGE, PAGE, 1))) {
		n++;
		over += lv_memcg_usage(a) > LIMIT;
	}
	is(err, -ENOMEM, "limit: a fault beyond the limit -> -ENOMEM");
	is(n, LIMIT, "limit: exactly %d pages were faulted first", LIMIT);
	is(over, 0, "limit: usage was never above the limit");
	is(lv_memcg_usage(a), LIMIT, "limit: usage %d", LIMIT);
	is(lv_mm_rss(mm), LIMIT, "limit: rss %d", LIMIT);
	is(nonzero(mm, r + LIMIT * PAGE, PAGE), 0, "limit: the failed page reads zeros");
	is(lv_mm_rss(mm), LIMIT, "limit: ... and is not mapped");
	is(nstat(m, LV_NR_FREE), free0 - LIMIT, "limit: the failed fault leaked no frame");
	is(nstat(m, LV_NR_CHARGED), LIMIT, "limit: node LV_NR_CHARGED %d", LIMIT);
	is(bad_pat(mm, r, LIMIT * PAGE, 1), 0, "limit: the pages written before hold their data");

	/* A multi-page write that fails half way: the pages before the failure keep the data. */
	is(lv_munmap(mm, r + (LIMIT - 10) * PAGE, 10 * PAGE), 0, "limit: unmap the last 10 pages");
	lv_lru_add_drain_all(m);
	is(lv_memcg_usage(a), LIMIT - 10, "limit: usage %d", LIMIT - 10);
	is(write_pat(mm, r + (LIMIT + 10) * PAGE, 20 * PAGE, 2), -ENOMEM,
	   "limit: a 20-page write with room for 10 -> -ENOMEM");
	is(lv_memcg_usage(a), LIMIT, "limit: usage back at the limit");
	is(bad_pat(mm, r + (LIMIT + 10) * PAGE, 10 * PAGE, 2), 0,
	   "limit: the 10 pages before the failure hold the data");
	is(nonzero(mm, r + (LIMIT + 20) * PAGE, 10 * PAGE), 0, "limit: the 10 after read zeros");
	is(nstat(m, LV_NR_FREE), free0 - LIMIT, "limit: still no frame leaked");

	/* Lazily freed pages make room: limit reclaim drops them instead of failing. */
	lv_lru_add_drain_all(m);
	is(lv_madvise(mm, r, 50 * PAGE, LV_MADV_FREE), 0, "limit: MADV_FREE 50 pages");
	lv_lru_add_drain_all(m);
	steal = lv_memcg_stat(a, LV_PGSTEAL);
	for (int i = 0; i < 50; i++) {
		fails += write_pat(mm, r + (uint64_t)(LIMIT + 20 + i) * PAGE, PAGE, 3) != 0;
		over += lv_memcg_usage(a) > LIMIT;
	}
	is(fails, 0, "limit: 50 more faults at the limit succeed");
	is(over, 0, "limit: ... usage never above the limit");
	is(lv_memcg_stat(a, LV_PGSTEAL) - steal, 50, "limit: ... 50 lazyfree pages reclaimed");
	is(nonzero(mm, r, 50 * PAGE), 0, "limit: the lazily freed pages read zeros");
	is(lv_mm_rss(mm), LIMIT, "limit: rss %d", LIMIT);
	is(bad_pat(mm, r + 50 * PAGE, (LIMIT - 60) * PAGE, 1), 0, "limit: the others are intact");
	is(bad_pat(mm, r + (LIMIT + 20) * PAGE, 50 * PAGE, 3), 0, "limit: the new pages too");
	is(lv_memcg_set_max(a, SIZE_MAX), 0, "limit: lifted");
	is(write_pat(mm, r, 10 * PAGE, 4), 0, "limit: faults succeed again");
	is(lv_memcg_usage(a), LIMIT + 10, "limit: usage %d", LIMIT + 10);
	check_ok(m, "limit");

	/* A parent's limit applies to a child's address space. */
	is(lv_memcg_set_max(p, 64), 0, "hierarchy: parent limited to 64 pages");
	mc = new_mm(m, c, 0);
	r = map_or_bail(mc, 100 * PAGE);
	n = 0;
	while (n < 100 && !(err = write_pat(mc, r + (uint64_t)n * PAGE, PAGE, 5)))
		n++;
	is(err, -ENOMEM, "hierarchy: the child's fault beyond the parent's limit -> -ENOMEM");
	is(n, 64, "hierarchy: after exactly 64 pages");
	is(lv_memcg_usage(p), 64, "hierarchy: the parent's usage is 64");
	is(lv_memcg_usage(c), 64, "hierarchy: the child's usage is 64");

	lv_mm_destroy(mm);
	lv_mm_destroy(mc);
	lv_lru_add_drain_all(m);
	is(lv_memcg_usage(a) + lv_memcg_usage(c) + lv_memcg_usage(p), 0,
	   "limit: destroyed: nothing charged");
	is(nstat(m, LV_NR_FREE), free0, "limit: destroyed: every page back on the node");
	is(lv_memcg_remove(a), 0, "limit: a removed");
	is(lv_memcg_remove(c), 0, "limit: c removed");
	is(lv_memcg_remove(p), 0, "limit: p removed");
	finish(m, "limit");
}

/*
 * What the header promises at the edges: munmap rounds its length up to whole pages; a write
 * or a read that meets a byte outside every region has done the bytes before it, and nothing
 * from it on; brk reports the old end whatever the result.
 */
static void test_edges(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *a = new_memcg(m, NULL, "edges");
	struct lv_mm *mm = new_mm(m, a, 0);
	unsigned char got[3 * PAGE], want[3 * PAGE];
	uint64_t r = map_or_bail(mm, 8 * PAGE), brk = 0;

	is(write_pat(mm, r, 8 * PAGE, 1), 0, "edges: 8 pages written");
	is(lv_munmap(mm, r, PAGE + 1), 0, "edges: munmap of 1 page + 1 byte -> 0");
	is(read_rc(mm, r + PAGE, 1), -EFAULT, "edges: ... unmapped the second page too");
	is(bad_pat(mm, r + 2 * PAGE, PAGE, 1), 0, "edges: ... and not the third");
	is(lv_munmap(mm, r + 7 * PAGE, 1), 0, "edges: munmap of 1 byte -> 0");
	is(read_rc(mm, r + 8 * PAGE - 1, 1), -EFAULT, "edges: ... unmapped its whole page");
	is(lv_mm_rss(mm), 5, "edges: 5 pages left mapped");

	/* Pages 2..6 are mapped: a 3-page write from page 5 meets the hole at page 7. */
	for (size_t i = 0; i < sizeof(want); i++)
		want[i] = pat(r + 5 * PAGE + i, 7);
	is(lv_mm_write(mm, r + 5 * PAGE, want, sizeof(want)), -EFAULT,
	   "edges: a write running into an unmapped page -> -EFAULT");
	is(bad_pat(mm, r + 5 * PAGE, 2 * PAGE, 7), 0, "edges: ... the 2 pages before it written");
	is(bad_pat(mm, r + 2 * PAGE, 3 * PAGE, 1), 0, "edges: ... nothing before them changed");
	memset(got, 0xaa, sizeof(got));
	is(lv_mm_read(mm, r + 6 * PAGE + 100, got, sizeof(got)), -EFAULT,
	   "edges: a read running into an unmapped page -> -EFAULT");
	ok(memcmp(got, want + PAGE + 100, PAGE - 100) == 0,
	   "edges: ... the buffer holds the bytes before it");
	{
		size_t untouched = 0;

		for (size_t i = PAGE - 100; i < sizeof(got); i++)
			untouched += got[i] == 0xaa;
		is(untouched, sizeof(got) - (PAGE - 100), "edges: ... and nothing after them");
	}
	is(lv_mm_brk(mm, -(int64_t)PAGE, &brk), -EINVAL,
	   "edges: shrinking an empty heap -> -EINVAL");
	ok(brk == 0x10000000ull, "edges: ... still reports the end (%#llx)",
	   (unsigned long long)brk);
	finish_mm(m, mm, a, "edges");
}

/* ---- lazyfree, cold, dontneed --------------------------------------------------------------- */

static void test_madvise(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *a = new_memcg(m, NULL, "a");
	uint64_t free0 = nstat(m, LV_NR_FREE), r, r2, lazy, deact, steal;
	struct lv_mm *mm = new_mm(m, a, 0);
	unsigned long rec;

	r = map_or_bail(mm, 64 * PAGE);
	is(write_pat(mm, r, 64 * PAGE, 1), 0, "lazyfree: write 64 pages");
	lv_lru_add_drain_all(m);
	is(lv_memcg_stat(a, LV_NR_INACTIVE_ANON), 64, "lazyfree: 64 on the inactive anon list");
	is(lv_memcg_reclaim(a, 1000), 0, "lazyfree: anon pages are not reclaimable (no swap)");
	is(lv_mm_rss(mm), 64, "lazyfree: ... rss still 64");

	lazy = lv_memcg_stat(a, LV_PGLAZYFREE);
	is(lv_madvise(mm, r, 64 * PAGE, LV_MADV_FREE), 0, "lazyfree: MADV_FREE 64 pages -> 0");
	lv_lru_add_drain_all(m);
	is(lv_memcg_stat(a, LV_NR_INACTIVE_FILE), 64, "lazyfree: moved to the inactive file list");
	is(anon_lru(a), 0, "lazyfree: ... off the anon lists");
	is(lv_memcg_stat(a, LV_PGLAZYFREE) - lazy, 64, "lazyfree: pglazyfree counts 64");
	is(nst(m, 0, LV_PGLAZYFREE), lazy + 64, "lazyfree: node pglazyfree too");
	is(lv_mm_rss(mm), 64, "lazyfree: still mapped until reclaim");
	is(lv_memcg_usage(a), 64, "lazyfree: still charged until reclaim");
	is(bad_pat(mm, r, 64 * PAGE, 1), 0, "lazyfree: the data is still there before reclaim");
	is(lv_mm_rss(mm), 64, "lazyfree: reading did not cancel anything");

	/* Written after MADV_FREE: pages 5 (whole) and 9 (one byte). */
	is(write_pat(mm, r + 5 * PAGE, PAGE, 2), 0, "lazyfree: rewrite page 5");
	is(lv_mm_memset(mm, r + 9 * PAGE + 100, 0xee, 1), 0, "lazyfree: write 1 byte of page 9");

	steal = lv_memcg_stat(a, LV_PGSTEAL);
	rec = lv_memcg_reclaim(a, 1000);
	is(rec, 62, "lazyfree: memcg reclaim frees the 62 clean pages");
	is(lv_memcg_stat(a, LV_PGSTEAL) - steal, 62, "lazyfree: pgsteal 62");
	is(lv_mm_rss(mm), 2, "lazyfree: rss 2");
	is(lv_memcg_usage(a), 2, "lazyfree: usage 2");
	is(nstat(m, LV_NR_FREE), free0 - 2, "lazyfree: the frames went back to the node");
	is(nonzero(mm, r, 5 * PAGE), 0, "lazyfree: freed pages read zeros");
	is(lv_mm_rss(mm), 2, "lazyfree: ... without faulting");
	is(bad_pat(mm, r + 5 * PAGE, PAGE, 2), 0, "lazyfree: the rewritten page kept its new data");
	{
		unsigned char buf[PAGE];
		long bad = 0;

		lv_mm_read(mm, r + 9 * PAGE, buf, PAGE);
		for (size_t i = 0; i < PAGE; i++)
			bad += buf[i] != (i == 100 ? 0xee : pat(r + 9 * PAGE + i, 1));
		is(bad, 0, "lazyfree: the page written one byte kept all its data");
	}
	lv_lru_add_drain_all(m);
	is(lv_memcg_stat(a, LV_NR_ACTIVE_ANON), 2,
	   "lazyfree: written pages went back to active anon");
	is(lv_memcg_stat(a, LV_NR_INACTIVE_FILE) + lv_memcg_stat(a, LV_NR_ACTIVE_FILE), 0,
	   "lazyfree: nothing left on the file lists");
	is(lv_memcg_reclaim(a, 1000), 0,
	   "lazyfree: the kept pages are anon again: not reclaimable");
	is(write_pat(mm, r, PAGE, 3), 0, "lazyfree: writing a freed page faults it anew");
	is(lv_mm_rss(mm), 3, "lazyfree: rss 3");
	is(bad_pat(mm, r, PAGE, 3), 0, "lazyfree: ... with the new data");

	/* MADV_COLD: the two active pages (5, 9) go inactive; inactive ones are left alone. */
	lv_lru_add_drain_all(m);
	deact = lv_memcg_stat(a, LV_PGDEACTIVATE);
	is(lv_madvise(mm, r, 64 * PAGE, LV_MADV_COLD), 0, "cold: MADV_COLD the region -> 0");
	lv_lru_add_drain_all(m);
	is(lv_memcg_stat(a, LV_NR_ACTIVE_ANON), 0, "cold: no active anon page left");
	is(lv_memcg_stat(a, LV_NR_INACTIVE_ANON), 3, "cold: all 3 on the inactive anon list");
	is(lv_memcg_stat(a, LV_PGDEACTIVATE) - deact, 2, "cold: pgdeactivate counts the 2 active");
	is(lv_madvise(mm, r, 64 * PAGE, LV_MADV_COLD), 0, "cold: again");
	lv_lru_add_drain_all(m);
	is(lv_memcg_stat(a, LV_PGDEACTIVATE) - deact, 2, "cold: inactive pages are not counted");
	is(bad_pat(mm, r + 5 * PAGE, PAGE, 2), 0, "cold: data intact");
	is(lv_mm_rss(mm), 3, "cold: nothing unmapped");

	/* MADV_DONTNEED: gone at once; the next write faults a zeroed page. */
	is(lv_madvise(mm, r + 5 * PAGE, 5 * PAGE, LV_MADV_DONTNEED), 0, "dontneed: pages 5..9");
	is(lv_mm_rss(mm), 1, "dontneed: rss 1");
	lv_lru_add_drain_all(m);
	is(lv_memcg_usage(a), 1, "dontneed: usage 1");
	is(nstat(m, LV_NR_FREE), free0 - 1, "dontneed: frames back on the node");
	is(nonzero(mm, r + 5 * PAGE, 5 * PAGE), 0, "dontneed: the pages read zeros");
	is(lv_mm_memset(mm, r + 9 * PAGE + 1, 0x11, 1), 0, "dontneed: write 1 byte of page 9");
	is(lv_mm_rss(mm), 2, "dontneed: it faulted anew");
	{
		unsigned char buf[PAGE];
		long bad = 0;

		lv_mm_read(mm, r + 9 * PAGE, buf, PAGE);
		for (size_t i = 0; i < PAGE; i++)
			bad += buf[i] != (i == 1 ? 0x11 : 0);
		is(bad, 0, "dontneed: ... as a zeroed page");
	}

	/* Advice over a range partly outside every region: the rest is still advised. */
	r2 = map_or_bail(mm, 4 * PAGE);
	is(write_pat(mm, r2, 4 * PAGE, 6), 0, "partial: a 4-page region");
	is(lv_madvise(mm, r2 - PAGE, 6 * PAGE, LV_MADV_DONTNEED), -ENOMEM,
	   "partial: DONTNEED from the guard page below to past the end -> -ENOMEM");
	is(lv_mm_rss(mm), 2, "partial: ... the 4 pages inside were still dropped");

	/* Node-wide reclaim frees lazyfree pages of every memcg. */
	is(write_pat(mm, r2, 4 * PAGE, 7), 0, "node reclaim: rewrite the 4 pages");
	lv_lru_add_drain_all(m);
	is(lv_madvise(mm, r2, 4 * PAGE, LV_MADV_FREE), 0, "node reclaim: MADV_FREE them");
	lv_lru_add_drain_all(m);
	is(lv_reclaim_node(m, 0, 1000), 4, "node reclaim: lv_reclaim_node frees the 4");
	is(nonzero(mm, r2, 4 * PAGE), 0, "node reclaim: they read zeros");
	is(lv_mm_rss(mm), 2, "node reclaim: rss 2");

	/*
	 * MADV_FREE right after the writes, while the pages still sit in this CPU's lru_add batch.
	 * The kernel's madvise_free_single_vma() (and madvise_cold()) drain the local batch first
	 * (lru_add_drain()), so the pages become lazyfree; lv_madvise() does not, and
	 * lv_folio_mark_lazyfree() ignores a folio not yet on an LRU: the request is lost.
	 */
	is(write_pat(mm, r2, 4 * PAGE, 8), 0, "queued: write 4 pages (left in the lru_add batch)");
	lazy = lv_memcg_stat(a, LV_PGLAZYFREE);
	is(lv_madvise(mm, r2, 4 * PAGE, LV_MADV_FREE), 0, "queued: MADV_FREE them at once");
	lv_lru_add_drain_all(m);
	is(lv_memcg_stat(a, LV_PGLAZYFREE) - lazy, 4, "queued: the 4 pages became lazyfree");
	is(lv_memcg_reclaim(a, 1000), 4, "queued: ... and reclaim frees them");
	lv_madvise(mm, r2, 4 * PAGE, LV_MADV_DONTNEED);

	/*
	 * A second MADV_FREE after a write: the kernel cleans the page again (folio_clear_dirty
	 * in madvise_free_pte_range) so reclaim may drop it. lv_madvise() cleans only folios
	 * that are still swap-backed, so a page written after the first MADV_FREE stays dirty.
	 */
	is(write_pat(mm, r2, PAGE, 9), 0, "refree: write a page");
	lv_lru_add_drain_all(m);
	is(lv_madvise(mm, r2, PAGE, LV_MADV_FREE), 0, "refree: MADV_FREE");
	lv_lru_add_drain_all(m);
	is(write_pat(mm, r2, PAGE, 10), 0, "refree: write it again (cancels the lazy free)");
	is(lv_madvise(mm, r2, PAGE, LV_MADV_FREE), 0, "refree: MADV_FREE again");
	lv_lru_add_drain_all(m);
	is(lv_memcg_reclaim(a, 1000), 1, "refree: reclaim frees the page cleaned again");
	is(nonzero(mm, r2, PAGE), 0, "refree: ... it reads zeros");

	finish_mm(m, mm, a, "madvise");
}

/* ---- nodes ------------------------------------------------------------------------------- */

static void test_nodes(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m;
	struct lv_memcg *a, *b;
	struct lv_mm *mm, *filler;
	uint64_t r, rf, free0, pages1;
	int err = 0, n = 0;

	cfg.nr_nodes = 2;
	m = new_machine(&cfg);
	a = new_memcg(m, NULL, "a");
	b = new_memcg(m, NULL, "b");
	errno = 0;
	ok(!lv_mm_create(m, a, 2) && errno == EINVAL, "nodes: create on node 2 of 2 -> EINVAL");
	mm = new_mm(m, a, 1);
	r = map_or_bail(mm, 100 * PAGE);
	is(write_pat(mm, r, 50 * PAGE, 1), 0, "nodes: 50 pages with node 1 preferred");
	is(nst(m, 1, LV_NR_CHARGED), 50, "nodes: node 1 has 50 pages allocated");
	is(nst(m, 0, LV_NR_CHARGED), 0, "nodes: node 0 none");
	lv_lru_add_drain_all(m);
	is(nst(m, 1, LV_NR_INACTIVE_ANON), 50, "nodes: on node 1's inactive anon list");
	is(nst(m, 0, LV_NR_INACTIVE_ANON), 0, "nodes: node 0's list is empty");
	is(lv_mm_set_node(mm, 2), -EINVAL, "nodes: set_node(2) -> -EINVAL");
	is(lv_mm_set_node(mm, 0), 0, "nodes: set_node(0)");
	is(write_pat(mm, r + 50 * PAGE, 30 * PAGE, 2), 0, "nodes: 30 more pages");
	lv_lru_add_drain_all(m);
	is(nst(m, 0, LV_NR_CHARGED), 30, "nodes: they landed on node 0");
	is(nst(m, 1, LV_NR_CHARGED), 50, "nodes: the earlier pages stayed on node 1");
	is(nst(m, 0, LV_NR_INACTIVE_ANON), 30, "nodes: node 0's list has 30");
	is(nst(m, 1, LV_NR_INACTIVE_ANON), 50, "nodes: node 1's list still 50");
	is(lv_memcg_usage(a), 80, "nodes: the memcg is charged for both");
	is(bad_pat(mm, r, 50 * PAGE, 1) + bad_pat(mm, r + 50 * PAGE, 30 * PAGE, 2), 0,
	   "nodes: all data intact");

	/*
	 * Faults allocate on the preferred node only: fill node 1 with another memcg's pages
	 * (anon, so nothing there is reclaimable), then fault with node 1 preferred.
	 */
	filler = new_mm(m, b, 1);
	pages1 = SMALL_PAGES;
	rf = map_or_bail(filler, pages1 * PAGE);
	while (nst(m, 1, LV_NR_FREE) > 0 && n < (int)pages1 &&
	       !(err = lv_mm_memset(filler, rf + (uint64_t)n * PAGE, 0x42, 1)))
		n++;
	is(nst(m, 1, LV_NR_FREE), 0, "bind: node 1 filled by another memcg (%d pages, last %d)", n,
	   err);
	is(lv_mm_set_node(mm, 1), 0, "bind: prefer node 1 again");
	free0 = nst(m, 0, LV_NR_FREE);
	is(write_pat(mm, r + 80 * PAGE, PAGE, 3), -ENOMEM,
	   "bind: a fault on a full node -> -ENOMEM");
	is(nst(m, 0, LV_NR_FREE), free0, "bind: ... nothing allocated on node 0 instead");
	is(lv_memcg_usage(a), 80, "bind: ... nothing left charged");
	is(lv_mm_rss(mm), 80, "bind: ... nothing mapped");
	is(lv_mm_set_node(mm, 0), 0, "bind: prefer node 0");
	is(write_pat(mm, r + 80 * PAGE, PAGE, 3), 0, "bind: the fault succeeds on node 0");
	lv_mm_destroy(filler);
	lv_lru_add_drain_all(m);
	is(nst(m, 1, LV_NR_CHARGED), 50, "bind: the filler's pages are back");
	check_ok(m, "nodes");
	lv_mm_destroy(mm);
	lv_lru_add_drain_all(m);
	is(lv_memcg_remove(a), 0, "nodes: a removed");
	is(lv_memcg_remove(b), 0, "nodes: b removed");
	finish(m, "nodes");
}

/* ---- threads sharing one address space -------------------------------------------------- */

#define THREADS	      4
#define SHARED_PAGES  16
#define RACE_PAGES    512
#define PRIVATE_PAGES 32
/* The heap grows a few pages at a time up to this (4 MiB of a 16 MiB node): 4 doublings. */
#define HEAP_PAGES 1024
#define HEAP_STEP  4 /* pages per brk (HEAP_PAGES is a multiple) */
#define SLICE	   (PAGE / THREADS)

struct shared {
	struct lv_machine *m;
	struct lv_mm *mm;
	struct lv_memcg *memcg;
	uint64_t shared, race, chaos; /* regions mapped before the threads start */
	uint64_t heap;		      /* the heap's start */
	unsigned int heap_pages;      /* atomic: pages the last thread grew the heap by so far */
	double end;
	int stop;
	pthread_barrier_t leave;
};

struct worker {
	struct shared *s;
	int id;
	pthread_t th;
	unsigned long ops, bad, errors, efault_ok, torn;
	unsigned int gen; /* last generation written into the shared pages */
	int first_error;
	unsigned char heap_wrote[HEAP_PAGES]; /* this thread wrote its byte into heap page p */
};

static void note_error(struct worker *w, int rc, const char *what)
{
	if (!w->errors++) {
		w->first_error = rc;
		diag("thread %d: %s failed with %d", w->id, what, rc);
	}
}

/* page_ok - 0 if page @addr matches the model state (see private_cycle). */
static long page_ok(struct lv_mm *mm, uint64_t addr, unsigned char state, unsigned int gen)
{
	if (state == 1)
		return bad_pat(mm, addr, PAGE, (int)gen);
	if (state == 2)
		return zero_or_pat(mm, addr, (int)gen); /* lazyfree: reclaim may have dropped it */
	return nonzero(mm, addr, PAGE);
}

/* private_cycle - map a region, write, check, advise, split, check, unmap. */
static void private_cycle(struct worker *w, uint32_t *seed)
{
	struct lv_mm *mm = w->s->mm;
	uint64_t r = 0;
	/* page state: 0 never written, 1 exact (gen), 2 exact or zero (lazyfree), 3 unmapped */
	unsigned char state[PRIVATE_PAGES];
	unsigned int gen = *seed & 0xffff;
	int rc;

	if ((rc = lv_mmap(mm, PRIVATE_PAGES * PAGE, &r))) {
		note_error(w, rc, "mmap");
		return;
	}
	memset(state, 0, sizeof(state));
	for (int i = 0; i < 12; i++) {
		unsigned int p, n, op;

		*seed = *seed * 1103515245 + 12345;
		p = (*seed >> 8) % PRIVATE_PAGES;
		n = 1 + (*seed >> 20) % 6;
		if (p + n > PRIVATE_PAGES)
			n = PRIVATE_PAGES - p;
		op = (*seed >> 4) % 8;
		if (op < 3) {
			if ((rc = write_pat(mm, r + p * PAGE, n * PAGE, gen)))
				note_error(w, rc, "private write");
			for (unsigned int k = p; k < p + n; k++)
				state[k] = 1;
		} else if (op == 3) {
			if ((rc = lv_madvise(mm, r + p * PAGE, n * PAGE, LV_MADV_FREE)))
				note_error(w, rc, "MADV_FREE");
			for (unsigned int k = p; k < p + n; k++)
				if (state[k] == 1)
					state[k] = 2;
		} else if (op == 4) {
			if ((rc = lv_madvise(mm, r + p * PAGE, n * PAGE, LV_MADV_DONTNEED)))
				note_error(w, rc, "MADV_DONTNEED");
			for (unsigned int k = p; k < p + n; k++)
				state[k] = 0;
		} else if (op == 5) {
			if ((rc = lv_madvise(mm, r + p * PAGE, n * PAGE, LV_MADV_COLD)))
				note_error(w, rc, "MADV_COLD");
		}
		/* Check every page against the model. */
		for (unsigned int k = 0; k < PRIVATE_PAGES; k++) {
			w->bad += page_ok(mm, r + k * PAGE, state[k], gen) != 0;
		}
		w->ops++;
	}
	/* Split in the middle: both sides keep their pages; the hole faults. */
	if ((rc = lv_munmap(mm, r + 8 * PAGE, 8 * PAGE)))
		note_error(w, rc, "munmap middle");
	for (unsigned int k = 8; k < 16; k++)
		state[k] = 3;
	for (unsigned int k = 0; k < PRIVATE_PAGES; k++) {
		if (state[k] == 3)
			w->bad += read_rc(mm, r + k * PAGE, 1) != -EFAULT;
		else
			w->bad += page_ok(mm, r + k * PAGE, state[k], gen) != 0;
	}
	if ((rc = lv_munmap(mm, r, PRIVATE_PAGES * PAGE)))
		note_error(w, rc, "munmap all");
	w->bad += read_rc(mm, r + 20 * PAGE, 1) != -EFAULT;
}

/* shared_write - write this thread's slice of every shared page with generation @gen. */
static void shared_write(struct worker *w, unsigned int gen)
{
	unsigned char buf[SLICE];

	for (int p = 0; p < SHARED_PAGES; p++) {
		uint64_t addr = w->s->shared + (uint64_t)p * PAGE + (uint64_t)w->id * SLICE;
		int rc;

		for (size_t i = 0; i < SLICE; i++)
			buf[i] = pat(addr + i, gen);
		if ((rc = lv_mm_write(w->s->mm, addr, buf, SLICE)))
			note_error(w, rc, "shared write");
	}
	w->gen = gen;
}

/* race_page - every thread writes its own byte of page @p of the race region. */
static void race_page(struct worker *w, unsigned int p)
{
	unsigned char c = (unsigned char)(w->id + 1);
	int rc;

	if ((rc = lv_mm_write(w->s->mm, w->s->race + (uint64_t)p * PAGE + (uint64_t)w->id, &c, 1)))
		note_error(w, rc, "race write");
}

/*
 * chaos - the overlapping case: thread 0 unmaps and remaps pieces of the chaos region while
 * the others write whole pages of it (uniform bytes) and read them back: each access either
 * fails with -EFAULT or sees a whole page, zeros or the page's byte, never a mix.
 */
static void chaos(struct worker *w, uint32_t *seed)
{
	struct shared *s = w->s;
	unsigned char buf[PAGE];
	unsigned int p;
	uint64_t addr;
	int rc;

	*seed = *seed * 1103515245 + 12345;
	p = (*seed >> 8) % 32;
	addr = __atomic_load_n(&s->chaos, __ATOMIC_ACQUIRE) + (uint64_t)p * PAGE;
	if (w->id == 0) {
		if ((*seed >> 20) % 4 == 0) {
			/*
			 * Unmap a random piece, at most up to the guard page after the region
			 * (never a neighbour); now and then remap the whole region elsewhere.
			 */
			rc = lv_munmap(s->mm, addr, (1 + (*seed >> 24) % (33 - p)) * PAGE);
			if (rc)
				note_error(w, rc, "chaos munmap");
			if ((*seed >> 28) == 0) {
				uint64_t old = __atomic_load_n(&s->chaos, __ATOMIC_ACQUIRE), nr = 0;

				lv_munmap(s->mm, old, 32 * PAGE);
				if ((rc = lv_mmap(s->mm, 32 * PAGE, &nr)))
					note_error(w, rc, "chaos mmap");
				else
					__atomic_store_n(&s->chaos, nr, __ATOMIC_RELEASE);
			}
		}
		return;
	}
	memset(buf, (int)((addr >> 12) & 0x7f) | 0x80, PAGE);
	rc = lv_mm_write(s->mm, addr, buf, PAGE);
	if (rc == -EFAULT)
		w->efault_ok++;
	else if (rc)
		note_error(w, rc, "chaos write");
	rc = lv_mm_read(s->mm, addr, buf, PAGE);
	if (rc == -EFAULT) {
		w->efault_ok++;
	} else if (rc) {
		note_error(w, rc, "chaos read");
	} else {
		for (size_t i = 1; i < PAGE; i++)
			if (buf[i] != buf[0]) {
				w->torn++;
				break;
			}
		w->torn += buf[0] && buf[0] != (((addr >> 12) & 0x7f) | 0x80);
	}
}

/*
 * heap_step - the last thread grows the heap by a few pages (its page table is copied into a larger
 * one every doubling, allocated unlocked and installed under the lock); every thread writes
 * its own byte into a random page grown so far, faulting it in while the table may be moving.
 */
static void heap_step(struct worker *w, uint32_t *seed)
{
	struct shared *s = w->s;
	unsigned int nr = __atomic_load_n(&s->heap_pages, __ATOMIC_ACQUIRE), p;
	unsigned char c = (unsigned char)(w->id + 1);
	int rc;

	if (w->id == THREADS - 1 && nr < HEAP_PAGES) {
		if ((rc = lv_mm_brk(s->mm, HEAP_STEP * PAGE, NULL)))
			note_error(w, rc, "heap brk");
		else
			__atomic_store_n(&s->heap_pages, nr += HEAP_STEP, __ATOMIC_RELEASE);
	}
	if (!nr)
		return;
	*seed = *seed * 1103515245 + 12345;
	p = (*seed >> 8) % nr;
	if ((rc = lv_mm_write(s->mm, s->heap + (uint64_t)p * PAGE + (uint64_t)w->id, &c, 1)))
		note_error(w, rc, "heap write");
	else
		w->heap_wrote[p] = 1;
}

static void *worker_thread(void *arg)
{
	struct worker *w = arg;
	struct shared *s = w->s;
	uint32_t seed = 1234567u * (unsigned int)(w->id + 1);
	unsigned int gen = 0, race = 0;

	while (now() < s->end) {
		private_cycle(w, &seed);
		shared_write(w, ++gen);
		for (int i = 0; i < 8 && race < RACE_PAGES; i++)
			race_page(w, race++);
		for (int i = 0; i < 16; i++)
			chaos(w, &seed);
		for (int i = 0; i < 16; i++)
			heap_step(w, &seed);
		if (w->id == 1)
			lv_madvise(s->mm, s->shared, SHARED_PAGES * PAGE, LV_MADV_COLD);
		if (w->id == 2) {
			lv_memcg_reclaim(s->memcg, 64);
			lv_reclaim_node(s->m, 0, 32);
		}
		w->ops++;
	}
	/* Finish the race region so that every page has every thread's byte. */
	while (race < RACE_PAGES)
		race_page(w, race++);
	pthread_barrier_wait(&s->leave);
	return NULL;
}

static void test_threads(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m;
	struct shared s = { 0 };
	struct worker w[THREADS];
	unsigned long ops = 0, bad = 0, errors = 0, efault = 0, torn = 0, wrong = 0;
	unsigned char *buf = malloc(RACE_PAGES * PAGE);

	cfg.nr_cpu_slots = 4; /* several batches: the threads' folios cross slots */
	m = new_machine(&cfg);
	s.m = m;
	s.memcg = new_memcg(m, NULL, "shared");
	s.mm = new_mm(m, s.memcg, 0);
	s.shared = map_or_bail(s.mm, SHARED_PAGES * PAGE);
	s.race = map_or_bail(s.mm, RACE_PAGES * PAGE);
	s.chaos = map_or_bail(s.mm, 32 * PAGE);
	if (lv_mm_brk(s.mm, 0, &s.heap))
		BAIL_OUT("brk failed");
	s.end = now() + 1.5;
	if (!buf)
		BAIL_OUT("out of memory");
	pthread_barrier_init(&s.leave, NULL, THREADS);
	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ .s = &s, .id = i };
		if (pthread_create(&w[i].th, NULL, worker_thread, &w[i]))
			BAIL_OUT("pthread_create failed");
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(w[i].th, NULL);
		ops += w[i].ops;
		bad += w[i].bad;
		errors += w[i].errors;
		efault += w[i].efault_ok;
		torn += w[i].torn;
	}
	pthread_barrier_destroy(&s.leave);
	diag("threads: %lu operations, %lu chaos accesses hit an unmapped page", ops, efault);
	ok(ops > 4 * THREADS, "threads: every thread made progress (%lu ops)", ops);
	is(errors, 0, "threads: no call failed unexpectedly");
	is(bad, 0, "threads: every private region matched its model");
	is(torn, 0, "threads: no chaos page was ever seen half written");

	/* Shared pages: each slice holds its thread's last generation. */
	for (int i = 0; i < THREADS; i++)
		for (int p = 0; p < SHARED_PAGES; p++)
			wrong += bad_pat(s.mm, s.shared + (uint64_t)p * PAGE + (uint64_t)i * SLICE,
					 SLICE, (int)w[i].gen) != 0;
	is(wrong, 0, "threads: every thread's slice of the shared pages has its last write");
	/* Race pages: every thread's byte survived the racing faults. */
	wrong = 0;
	if (lv_mm_read(s.mm, s.race, buf, RACE_PAGES * PAGE))
		wrong++;
	for (int p = 0; p < RACE_PAGES; p++)
		for (size_t i = 0; i < PAGE; i++)
			wrong += buf[(size_t)p * PAGE + i] !=
				 (i < THREADS ? (unsigned char)(i + 1) : 0);
	is(wrong, 0, "threads: racing first writes to %d pages lost no byte", RACE_PAGES);
	/* Heap pages: every byte a thread wrote is there, and no other. */
	wrong = 0;
	for (unsigned int p = 0; p < s.heap_pages; p++) {
		unsigned char got[THREADS];

		if (lv_mm_read(s.mm, s.heap + (uint64_t)p * PAGE, got, THREADS)) {
			wrong++;
			continue;
		}
		for (int i = 0; i < THREADS; i++)
			wrong += got[i] != (w[i].heap_wrote[p] ? (unsigned char)(i + 1) : 0);
	}
	diag("threads: the heap grew to %u pages under the other threads' faults", s.heap_pages);
	/* 1024 in a debug build; a ThreadSanitizer build, ten times slower, still passes 256. */
	ok(s.heap_pages > 256, "threads: the heap's table doubled at least three times (%u pages)",
	   s.heap_pages);
	is(wrong, 0, "threads: no heap write was lost while its table moved");
	free(buf);
	finish_mm(m, s.mm, s.memcg, "threads");
}

/* ---- other machine shapes ---------------------------------------------------------------- */

static void test_shapes(void)
{
	static const struct {
		const char *name;
		bool metadata_only, memcg_disabled;
		enum lv_lock_design design;
	} shapes[] = {
		{ "metadata only", true, false, LV_LOCK_LRUVEC },
		{ "memcg disabled", false, true, LV_LOCK_LRUVEC },
		{ "node lock", false, false, LV_LOCK_NODE },
	};

	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		struct lv_config cfg = small_config();
		const char *name = shapes[i].name;
		struct lv_machine *m;
		struct lv_mm *mm;
		struct lv_lock_stat ls, ls2;
		uint64_t r, free0;

		cfg.metadata_only = shapes[i].metadata_only;
		cfg.memcg_disabled = shapes[i].memcg_disabled;
		cfg.lock_design = shapes[i].design;
		m = new_machine(&cfg);
		free0 = nstat(m, LV_NR_FREE);
		mm = new_mm(m, NULL, 0);
		r = map_or_bail(mm, 40 * PAGE);
		is(write_pat(mm, r, 40 * PAGE, 1), 0, "%s: write 40 pages", name);
		is(lv_mm_memset(mm, r, 0x55, 10), 0, "%s: memset", name);
		is(lv_mm_rss(mm), 40, "%s: rss 40", name);
		is(nstat(m, LV_NR_FREE), free0 - 40, "%s: 40 frames allocated", name);
		if (cfg.metadata_only)
			is(nonzero(mm, r, 40 * PAGE), 0, "%s: no data frames: reads return zeros",
			   name);
		else
			is(bad_pat(mm, r + 10, 40 * PAGE - 10, 1), 0, "%s: data byte-exact", name);
		lv_lru_add_drain_all(m);
		is(nstat(m, LV_NR_INACTIVE_ANON), 40, "%s: 40 on the inactive anon list", name);
		is(lv_madvise(mm, r, 20 * PAGE, LV_MADV_FREE), 0, "%s: MADV_FREE 20", name);
		lv_lru_add_drain_all(m);
		is(lv_reclaim_node(m, 0, 100), 20, "%s: reclaim frees them", name);
		is(lv_mm_rss(mm), 20, "%s: rss 20", name);
		check_ok(m, name);
		lv_lock_stats(m, LV_LOCK_CLASS_MM, &ls);
		ok(ls.acquired >= 40, "%s: the mm lock class counts acquisitions (%llu)", name,
		   (unsigned long long)ls.acquired);
		lv_mm_destroy(mm);
		lv_lock_stats(m, LV_LOCK_CLASS_MM, &ls2);
		ok(ls2.acquired >= ls.acquired, "%s: ... kept after the mm is destroyed (%llu)",
		   name, (unsigned long long)ls2.acquired);
		lv_lru_add_drain_all(m);
		is(nstat(m, LV_NR_FREE), free0, "%s: every page back", name);
		finish(m, name);
	}
	is_str(lv_lock_class_name(LV_LOCK_CLASS_MM), "mm", "lock class name: mm");
}

/* munmap, brk, MADV_DONTNEED and destroying an mm release their folios after the unlock. */
static void test_release_unlocked(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_mm *mm = new_mm(m, NULL, 0);
	const size_t n = 1000;
	uint64_t addr, brk0;
	unsigned long before;

	if (lv_mmap(mm, 3 * n * PAGE, &addr) || lv_mm_memset(mm, addr, 1, 3 * n * PAGE) ||
	    lv_mm_brk(mm, (int64_t)(n * PAGE), &brk0) || lv_mm_memset(mm, brk0, 2, n * PAGE))
		BAIL_OUT("release: setup failed");
	lv_lru_add_drain_all(m); /* no batch holds a reference: the unmaps drop the last ones */
	__atomic_store_n(&freed_under_mm, 0, __ATOMIC_RELAXED);
	before = __atomic_load_n(&freed, __ATOMIC_RELAXED);
	is(lv_munmap(mm, addr, n * PAGE), 0, "release: munmap %zu pages", n);
	is(__atomic_load_n(&freed, __ATOMIC_RELAXED) - before, n, "release: ... all freed");
	before = __atomic_load_n(&freed, __ATOMIC_RELAXED);
	is(lv_madvise(mm, addr + n * PAGE, n * PAGE, LV_MADV_DONTNEED), 0,
	   "release: MADV_DONTNEED %zu pages", n);
	is(__atomic_load_n(&freed, __ATOMIC_RELAXED) - before, n, "release: ... all freed");
	before = __atomic_load_n(&freed, __ATOMIC_RELAXED);
	is(lv_mm_brk(mm, -(int64_t)(n * PAGE), NULL), 0, "release: brk shrinks %zu pages", n);
	is(__atomic_load_n(&freed, __ATOMIC_RELAXED) - before, n, "release: ... all freed");
	before = __atomic_load_n(&freed, __ATOMIC_RELAXED);
	lv_mm_destroy(mm);
	is(__atomic_load_n(&freed, __ATOMIC_RELAXED) - before, n,
	   "release: destroying the mm freed the last %zu", n);
	is(__atomic_load_n(&freed_under_mm, __ATOMIC_RELAXED), 0,
	   "release: no folio was freed under page_table_lock");
	finish(m, "release");
}

int main(void)
{
	test_errors();
	test_brk();
	test_table_enomem();
	test_mmap();
	test_data();
	test_limit();
	test_edges();
	test_madvise();
	test_nodes();
	test_threads();
	test_shapes();
	test_release_unlocked();
	/* After every test above: growing heaps, splitting regions, unmapping, destroying. */
	is(allocs_under_mm, 0, "no host allocation or free under page_table_lock");
	return done_testing();
}
