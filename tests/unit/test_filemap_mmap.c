// SPDX-License-Identifier: LGPL-2.1-or-later
/* Private file mappings (lv_mmap_file): bad input; a read fault maps the page cache folio
 * (same bytes, counted as mapped); a write fault copies the page into an anon folio of the
 * mm's memcg (the file unchanged); munmap drops the mapping; reclaim unmaps a mapped file
 * folio not used since it last looked, keeps a used one, and a fault between its unmap and
 * its eviction keeps the folio (by construction: a hook in the reclaim path faults); truncation
 * unmaps pages and private copies past the new end, whose accesses then fail; large page
 * cache folios; a file closed under a mapping; reclaim and truncation in a fault's window
 * between its page cache lookup and its install (a hook in the fault); removal of a memcg whose
 * page cache folios and a private copy are mapped, also in reclaim's window; mapped page
 * cache folios are not migrated (lv_file_migrate_pages, compaction), private copies are;
 * lv_check after each. */
#include "internal.h" /* folio flags, the mapcount, file_unmap_hook */
#include "mm_types.h"

#include "lvtest.h"

#include <fcntl.h>
#include <unistd.h>

#define PAGE  LV_PAGE_SIZE
#define PAGES 16

struct env {
	struct lv_machine *m;
	struct lv_memcg *memcg;
	struct lv_mm *mm;
	struct lv_file *file;
	int fd;
	uint64_t addr;
};

/* A real file of PAGES pages of pat(offset, 1), mapped whole by a fresh mm on machine @cfg. */
static void setup_config(struct env *e, const struct lv_config *cfg)
{
	unsigned char buf[PAGE];
	char name[] = "/tmp/lvtest-mmap-XXXXXX";

	e->m = new_machine(cfg);
	e->memcg = lv_memcg_create(e->m, NULL, "t");
	e->fd = mkstemp(name);
	if (!e->memcg || e->fd < 0)
		BAIL_OUT("setup: %s", strerror(errno));
	unlink(name);
	for (uint64_t p = 0; p < PAGES; p++) {
		for (size_t i = 0; i < PAGE; i++)
			buf[i] = pat(p * PAGE + i, 1);
		if (pwrite(e->fd, buf, PAGE, (off_t)(p * PAGE)) != (ssize_t)PAGE)
			BAIL_OUT("pwrite: %s", strerror(errno));
	}
	e->file = lv_file_open(e->m, e->fd, PAGES * PAGE);
	e->mm = lv_mm_create(e->m, e->memcg, 0);
	if (!e->file || !e->mm)
		BAIL_OUT("setup: %s", strerror(errno));
	if (lv_mmap_file(e->mm, e->file, 0, PAGES * PAGE, LV_MAP_PRIVATE, &e->addr))
		BAIL_OUT("lv_mmap_file failed");
}

static void setup(struct env *e, unsigned int folio_order)
{
	struct lv_config cfg = small_config();

	cfg.file_folio_order = folio_order;
	setup_config(e, &cfg);
}

static void teardown(struct env *e, const char *what)
{
	check_ok(e->m, what);
	lv_mm_destroy(e->mm);
	lv_file_close(e->file);
	close(e->fd);
	lv_lru_add_drain_all(e->m);
	is(lv_memcg_usage(e->memcg), 0, "%s: usage 0 after destroy and close", what);
	is(lv_memcg_remove(e->memcg), 0, "%s: memcg removed", what);
	finish(e->m, what);
}

/* page_is - whether page @p of the mapping reads as generation @seed of the file's bytes. */
static bool page_is(struct env *e, uint64_t p, unsigned int seed)
{
	unsigned char buf[PAGE];

	if (lv_mm_read(e->mm, e->addr + p * PAGE, buf, PAGE))
		return false;
	for (size_t i = 0; i < PAGE; i++)
		if (buf[i] != pat(p * PAGE + i, seed))
			return false;
	return true;
}

/* mapped_folio - the folio page @p maps, with a reference (NULL: none). */
static struct lv_folio *mapped_folio(struct env *e, uint64_t p)
{
	int err;

	return anon_folio_get(e->mm, (e->addr >> PAGE_SHIFT) + p, &err);
}

/* cache_folio - the page cache folio at index @p (no reference; NULL: none). */
static struct lv_folio *cache_folio(struct env *e, unsigned long p)
{
	void *entry = filemap_peek(e->file, p);

	return entry && !((uintptr_t)entry & 1) ? entry : NULL;
}

static void test_errors(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg), *other = new_machine(&cfg);
	struct lv_file *file = lv_file_open(m, -1, 4 * PAGE), *far = lv_file_open(other, -1, PAGE);
	struct lv_mm *mm = lv_mm_create(m, NULL, 0);
	uint64_t addr;

	is(lv_mmap_file(NULL, file, 0, PAGE, LV_MAP_PRIVATE, &addr), -EINVAL, "NULL mm");
	is(lv_mmap_file(mm, NULL, 0, PAGE, LV_MAP_PRIVATE, &addr), -EINVAL, "NULL file");
	is(lv_mmap_file(mm, file, 0, PAGE, LV_MAP_PRIVATE, NULL), -EINVAL, "NULL addr");
	is(lv_mmap_file(mm, file, 0, 0, LV_MAP_PRIVATE, &addr), -EINVAL, "length 0");
	is(lv_mmap_file(mm, file, 100, PAGE, LV_MAP_PRIVATE, &addr), -EINVAL, "unaligned offset");
	is(lv_mmap_file(mm, file, 0, PAGE, 0, &addr), -EINVAL, "no LV_MAP_PRIVATE (shared)");
	is(lv_mmap_file(mm, file, 0, PAGE, LV_MAP_SHARED, &addr), -EINVAL,
	   "LV_MAP_SHARED is not built");
	is(lv_mmap_file(mm, file, 0, PAGE, LV_MAP_SHARED | LV_MAP_PRIVATE, &addr), -EINVAL,
	   "LV_MAP_SHARED with LV_MAP_PRIVATE");
	is(lv_mmap_file(mm, file, 0, (size_t)65 << 30, LV_MAP_PRIVATE, &addr), -EINVAL,
	   "a length above 64 GiB");
	is(lv_mmap_file(mm, file, 0, PAGE, LV_MAP_PRIVATE | LV_MAP_LOCKED, &addr), 0,
	   "LV_MAP_LOCKED is allowed");
	is(lv_munmap(mm, addr, PAGE), 0, "and unmapped");
	is(lv_mmap_file(mm, file, 0, PAGE, LV_MAP_PRIVATE | 0x1, &addr), -EINVAL, "unknown flag");
	is(lv_mmap_file(mm, far, 0, PAGE, LV_MAP_PRIVATE, &addr), -EINVAL,
	   "a file of another machine");
	is(lv_mmap_file(mm, file, UINT64_MAX & ~(uint64_t)(PAGE - 1), 2 * PAGE, LV_MAP_PRIVATE,
			&addr),
	   -EINVAL, "a file range wrapping past 2^64");
	/* Past the end of the file: the region is made, its accesses fail there. */
	is(lv_mmap_file(mm, file, 2 * PAGE, 4 * PAGE, LV_MAP_PRIVATE, &addr), 0,
	   "a mapping reaching past the end of the file");
	{
		char c = 1;

		is(lv_mm_read(mm, addr + PAGE, &c, 1), 0, "the file's last page reads");
		is(c, 0, "a sparse file's page reads as zero");
		is(lv_mm_read(mm, addr + 2 * PAGE, &c, 1), -EFAULT, "a read past the end: EFAULT");
		is(lv_mm_write(mm, addr + 3 * PAGE, &c, 1), -EFAULT,
		   "a write past the end: EFAULT");
	}
	check_ok(m, "errors");
	lv_mm_destroy(mm);
	lv_file_close(file);
	lv_file_close(far);
	finish(other, "errors (other machine)");
	finish(m, "errors");
}

static void test_read_write_unmap(void)
{
	unsigned char buf[PAGE], c = 0x5a;
	struct lv_folio *cache, *f;
	struct env e;

	setup(&e, 0);
	ok(page_is(&e, 3, 1), "a read fault sees the file's bytes");
	cache = cache_folio(&e, 3);
	f = mapped_folio(&e, 3);
	ok(cache && f == cache, "the entry maps the page cache folio");
	ok(cache && folio_test_mapped(cache) && folio_file_mapcount(cache) == 1,
	   "the folio is mapped once (PG_mapped, mapcount 1)");
	if (f)
		lv_folio_put(f);
	is(lv_mm_rss(e.mm), 1, "rss counts the file page");
	is(lv_file_cached_pages(e.file), 1, "one page cached");
	check_ok(e.m, "read fault");

	/* COW of the mapped page: the file keeps its bytes. */
	is(lv_mm_write(e.mm, e.addr + 3 * PAGE + 7, &c, 1), 0, "a write to a mapped page");
	f = mapped_folio(&e, 3);
	ok(f && f != cache && folio_test_swapbacked(f) && !pte_is_file(f),
	   "the entry now maps a private anon copy");
	ok(f && lv_folio_memcg(f) == e.memcg, "the copy is charged to the mm's memcg");
	if (f)
		lv_folio_put(f);
	ok(!folio_test_mapped(cache) && folio_file_mapcount(cache) == 0,
	   "the page cache folio is no longer mapped");
	is(lv_mm_read(e.mm, e.addr + 3 * PAGE + 7, buf, 1), 0, "read the written byte");
	is(buf[0], c, "the mm sees its write");
	is(lv_file_read(e.file, e.memcg, buf, PAGE, 3 * PAGE), (long)PAGE, "read the file");
	is(buf[7], pat(3 * PAGE + 7, 1), "the file does not");

	/* COW of a page never read: the page cache folio is read in, copied, not mapped. */
	is(lv_mm_write(e.mm, e.addr + 5 * PAGE, &c, 1), 0, "a write to a missing page");
	ok(cache_folio(&e, 5) && !folio_test_mapped(cache_folio(&e, 5)),
	   "the file page is cached, not mapped");
	is(lv_mm_read(e.mm, e.addr + 5 * PAGE + 1, buf, 1), 0, "read beside the write");
	is(buf[0], pat(5 * PAGE + 1, 1), "the copy holds the file's other bytes");
	lv_lru_add_drain_all(e.m);
	is(lv_memcg_stat(e.memcg, LV_NR_INACTIVE_ANON) + lv_memcg_stat(e.memcg, LV_NR_ACTIVE_ANON),
	   2, "both copies are on the anon LRU");
	is(lv_mm_rss(e.mm), 2, "rss: two copies");
	check_ok(e.m, "write faults");

	/* munmap: the mapping's references go, the page cache stays. */
	ok(page_is(&e, 8, 1), "map page 8");
	is(lv_munmap(e.mm, e.addr, PAGES * PAGE), 0, "munmap the whole mapping");
	lv_lru_add_drain_all(e.m); /* the lru_add batch's references */
	is(lv_mm_rss(e.mm), 0, "rss 0");
	ok(cache_folio(&e, 8) && !folio_test_mapped(cache_folio(&e, 8)) &&
		   folio_ref_count(cache_folio(&e, 8)) == 1,
	   "page 8 is cached, unmapped, held by the page cache alone");
	is(lv_mm_read(e.mm, e.addr, buf, 1), -EFAULT, "the range is gone");
	teardown(&e, "read, write, unmap");
}

static struct env *hook_env;
static int hook_calls;

/* A fault between reclaim's unmap and its eviction maps the folio again. */
static void fault_in_hook(struct lv_folio *folio)
{
	(void)folio;
	hook_calls++;
	ok(page_is(hook_env, 2, 1), "hook: a fault after the unmap reads the file's bytes");
}

static void test_reclaim(void)
{
	struct lv_folio *cache;
	struct env e;

	setup(&e, 0);
	ok(page_is(&e, 2, 1) && page_is(&e, 4, 1), "map pages 2 and 4");
	lv_lru_add_drain_all(e.m);
	/* Page 4 was used since reclaim last looked (its accessed bit): it stays, active. */
	folio_clear_referenced(cache_folio(&e, 2));
	lv_memcg_reclaim(e.memcg, 1);
	ok(!cache_folio(&e, 2), "reclaim evicted the unused mapped page");
	ok(cache_folio(&e, 4) && folio_test_mapped(cache_folio(&e, 4)),
	   "the used one is still cached and mapped");
	/* Activated for it (then maybe aged again by the same reclaim): the bit was consumed. */
	ok(cache_folio(&e, 4) && !folio_test_referenced(cache_folio(&e, 4)) &&
		   (folio_test_active(cache_folio(&e, 4)) ||
		    folio_test_workingset(cache_folio(&e, 4))),
	   "its accessed bit was consumed by an activation");
	is(lv_mm_rss(e.mm), 1, "rss: one page left mapped");
	check_ok(e.m, "reclaim");
	ok(page_is(&e, 2, 1), "a later read faults the evicted page back in");
	is(lv_mm_rss(e.mm), 2, "rss: mapped again");

	/* The race: a fault maps the folio between reclaim's unmap and its eviction. */
	lv_lru_add_drain_all(e.m);
	cache = cache_folio(&e, 2);
	folio_clear_referenced(cache);
	hook_env = &e;
	hook_calls = 0;
	file_unmap_hook = fault_in_hook;
	lv_memcg_reclaim(e.memcg, 1);
	file_unmap_hook = NULL;
	ok(hook_calls >= 1, "reclaim unmapped page 2 (the hook ran)");
	ok(cache_folio(&e, 2) == cache && folio_file_mapcount(cache) == 1,
	   "the refaulted folio stayed cached and mapped once");
	ok(page_is(&e, 2, 1), "its bytes are intact");
	check_ok(e.m, "reclaim racing a fault");

	/* A locked region keeps its file pages mapped. */
	{
		uint64_t locked;
		struct lv_folio *f;
		int err;

		is(lv_mmap_file(e.mm, e.file, 6 * PAGE, PAGE, LV_MAP_PRIVATE | LV_MAP_LOCKED,
				&locked),
		   0, "a locked file mapping");
		ok(lv_mm_read(e.mm, locked, &err, 1) == 0, "map its page");
		lv_lru_add_drain_all(e.m);
		f = cache_folio(&e, 6);
		folio_clear_referenced(f);
		lv_memcg_reclaim(e.memcg, PAGES);
		ok(cache_folio(&e, 6) == f && folio_test_mapped(f),
		   "reclaim leaves a locked region's file page mapped");
		is(lv_mm_write(e.mm, locked, &err, 1), 0, "COW in the locked region");
		f = anon_folio_get(e.mm, locked >> PAGE_SHIFT, &err);
		ok(f && folio_test_mlocked(f), "the private copy is mlocked");
		if (f)
			lv_folio_put(f);
	}
	teardown(&e, "reclaim");
}

static void test_truncate(unsigned int order)
{
	unsigned char c = 9, buf[PAGE];
	char what[64];
	struct env e;

	snprintf(what, sizeof(what), "truncate (folio order %u)", order);
	setup(&e, order);
	for (uint64_t p = 0; p < PAGES; p++)
		ok(page_is(&e, p, 1), "%s: page %llu reads the file", what, (unsigned long long)p);
	is(lv_mm_write(e.mm, e.addr + 9 * PAGE, &c, 1), 0, "%s: COW page 9", what);
	is(lv_mm_write(e.mm, e.addr + 3 * PAGE, &c, 1), 0, "%s: COW page 3", what);
	is(lv_mm_rss(e.mm), PAGES, "%s: every page mapped", what);
	check_ok(e.m, what);
	is(lv_file_truncate(e.file, 6 * PAGE + 100), 0, "%s: truncate to 6 pages and 100 bytes",
	   what);
	/*
	 * Pages 0-5 stay (the page holding the end goes, as lv_file_truncate() drops it); with
	 * order 2 the end's folio [4, 8) is unmapped whole to be split, and pages 4, 5 refault.
	 */
	is(lv_mm_rss(e.mm), order ? 4 : 6, "%s: pages past the new end are unmapped, copies too",
	   what);
	is(lv_mm_read(e.mm, e.addr + 9 * PAGE, buf, 1), -EFAULT,
	   "%s: a read past the end fails (SIGBUS)", what);
	is(lv_mm_write(e.mm, e.addr + 12 * PAGE, &c, 1), -EFAULT, "%s: so does a write", what);
	is(lv_mm_read(e.mm, e.addr + 3 * PAGE, buf, 1), 0, "%s: the copy before the end stays",
	   what);
	is(buf[0], c, "%s: with its write", what);
	ok(page_is(&e, 5, 1), "%s: a page before the end reads the file", what);
	is(lv_mm_read(e.mm, e.addr + 6 * PAGE + 100, buf, 1), 0,
	   "%s: the page holding the end faults", what);
	is(buf[0], 0, "%s: and reads zeros past the end", what);
	check_ok(e.m, what);
	teardown(&e, what);
}

static void test_close_mapped(void)
{
	char c;
	struct env e;

	setup(&e, 0);
	ok(page_is(&e, 1, 1), "close: map a page");
	is(lv_mm_write(e.mm, e.addr, "x", 1), 0, "close: and a copy");
	lv_file_close(e.file);
	is(lv_mm_rss(e.mm), 0, "close: the mapping lost its pages");
	is(lv_mm_read(e.mm, e.addr + PAGE, &c, 1), -EFAULT, "close: accesses fail");
	check_ok(e.m, "close while mapped");
	is(lv_munmap(e.mm, e.addr, PAGES * PAGE), 0, "close: the region still unmaps");
	lv_mm_destroy(e.mm);
	close(e.fd);
	lv_lru_add_drain_all(e.m);
	is(lv_memcg_remove(e.memcg), 0, "close: memcg removed");
	finish(e.m, "close while mapped");
}

static struct env *race_env;
static struct lv_folio *race_cache;
static struct lv_memcg *race_child;
static int race_calls;

/*
 * A fault between its page cache lookup and its install: reclaim cannot evict the folio the
 * fault holds (the freeze fails on the fault's reference), but does evict an idle neighbour.
 */
static void reclaim_in_fault_hook(struct lv_mm *mm, struct lv_folio *cache)
{
	(void)mm;
	file_fault_hook = NULL; /* the calls below fault too */
	race_calls++;
	race_cache = cache;
	folio_clear_referenced(cache);
	folio_clear_referenced(cache_folio(race_env, 3));
	lv_memcg_reclaim(race_env->memcg, PAGES);
	ok(cache_folio(race_env, 2) == cache,
	   "fault hook: reclaim left the looked-up folio cached");
	ok(!cache_folio(race_env, 3), "fault hook: and evicted the idle page beside it");
}

/* The same window, truncation instead: the folio leaves the page cache under the fault. */
static void truncate_in_fault_hook(struct lv_mm *mm, struct lv_folio *cache)
{
	(void)mm;
	file_fault_hook = NULL;
	race_calls++;
	race_cache = cache;
	is(lv_file_truncate(race_env->file, 4 * PAGE), 0, "fault hook: truncate to 4 pages");
	ok(!cache_folio(race_env, cache->index), "fault hook: the looked-up folio left the cache");
}

static void test_fault_races(void)
{
	unsigned char buf[PAGE], c = 0x33;
	long rss;
	struct env e;

	setup(&e, 0);
	race_env = &e;
	/* Pages 2 and 3 cached, unmapped, on the LRU. */
	is(lv_file_read(e.file, e.memcg, buf, PAGE, 2 * PAGE), (long)PAGE, "races: cache page 2");
	is(lv_file_read(e.file, e.memcg, buf, PAGE, 3 * PAGE), (long)PAGE, "races: cache page 3");
	lv_lru_add_drain_all(e.m);
	race_calls = 0;
	file_fault_hook = reclaim_in_fault_hook;
	ok(page_is(&e, 2, 1), "a read fault racing reclaim reads the file's bytes");
	file_fault_hook = NULL;
	is(race_calls, 1, "the fault ran the hook (reclaim in its window)");
	ok(cache_folio(&e, 2) == race_cache && folio_file_mapcount(race_cache) == 1,
	   "the fault mapped the folio reclaim could not take");
	is(lv_mm_rss(e.mm), 1, "rss: the one page");
	check_ok(e.m, "reclaim racing a fault");

	/* A COW fault whose page leaves the file meanwhile fails, leaking nothing. */
	race_calls = 0;
	file_fault_hook = truncate_in_fault_hook;
	is(lv_mm_write(e.mm, e.addr + 5 * PAGE, &c, 1), -EFAULT,
	   "a COW fault racing truncation past its page fails (SIGBUS)");
	file_fault_hook = NULL;
	is(race_calls, 1, "the write fault ran the hook (truncation in its window)");
	rss = lv_mm_rss(e.mm);
	is(rss, 1, "no copy was installed");
	check_ok(e.m, "a COW fault racing truncation");

	/* A read fault likewise (the file first grows back: lv_file_truncate() extends it). */
	is(lv_file_truncate(e.file, PAGES * PAGE), 0, "the file grows back to 16 pages");
	race_calls = 0;
	file_fault_hook = truncate_in_fault_hook;
	is(lv_mm_read(e.mm, e.addr + 6 * PAGE, buf, 1), -EFAULT,
	   "a read fault racing truncation past its page fails (SIGBUS)");
	file_fault_hook = NULL;
	is(race_calls, 1, "the read fault ran the hook");
	is(lv_mm_rss(e.mm), 1, "nothing was mapped");
	ok(page_is(&e, 2, 1), "the page before the end still reads the file");
	check_ok(e.m, "a read fault racing truncation");
	teardown(&e, "fault races");
}

/* Reclaim has unmapped an isolated folio of the child: remove the child now. */
static void remove_in_unmap_hook(struct lv_folio *folio)
{
	file_unmap_hook = NULL;
	race_calls++;
	ok(!folio_test_mapped(folio), "unmap hook: reclaim unmapped the child's folio");
	is(lv_memcg_remove(race_child), 0, "unmap hook: the child is removed, its folio isolated");
	ok(lv_folio_memcg(folio) == race_env->memcg,
	   "unmap hook: the isolated folio is the parent's");
}

/*
 * Removal of a memcg whose page cache folios another memcg's mm maps, and one of whose folios
 * is a private copy that mm maps: everything goes to the parent, mapped as before, charged once.
 */
static void test_reparent(void)
{
	unsigned char buf[4 * PAGE], c = 7;
	struct lv_folio *cached[4], *copy;
	bool ok_all = true;
	long usage;
	struct env e;

	setup(&e, 0);
	race_env = &e;
	race_child = lv_memcg_create(e.m, e.memcg, "child");
	if (!race_child)
		BAIL_OUT("lv_memcg_create: %s", strerror(errno));
	/* The child reads pages 0-3 in; the mm, of the parent, maps them. */
	is(lv_file_read(e.file, race_child, buf, sizeof(buf), 0), (long)sizeof(buf),
	   "reparent: the child reads pages 0-3");
	for (unsigned long p = 0; p < 4; p++) {
		ok_all &= page_is(&e, p, 1);
		cached[p] = cache_folio(&e, p);
		ok_all &= cached[p] && folio_test_mapped(cached[p]) &&
			  lv_folio_memcg(cached[p]) == race_child;
	}
	ok(ok_all, "reparent: the mm maps the child's page cache folios");
	/* Copies of pages 8 and 9 are the parent's; page 8's moves to the child. */
	is(lv_mm_write(e.mm, e.addr + 8 * PAGE, &c, 1), 0, "reparent: COW page 8");
	is(lv_mm_write(e.mm, e.addr + 9 * PAGE, &c, 1), 0, "reparent: COW page 9");
	lv_lru_add_drain_all(e.m);
	copy = mapped_folio(&e, 8);
	is(copy ? lv_folio_move_memcg(copy, race_child) : -1, 0,
	   "reparent: page 8's copy is charged to the child");
	if (copy)
		lv_folio_put(copy);
	is(lv_memcg_usage(race_child), 5, "reparent: the child's usage: 4 file pages, 1 copy");
	usage = (long)lv_memcg_usage(e.memcg);
	is(usage, 8, "reparent: the parent's: and its own 2 file pages and 1 copy");
	check_ok(e.m, "before the removal");

	is(lv_memcg_remove(race_child), 0, "reparent: the child is removed while mapped");
	ok_all = true;
	for (unsigned long p = 0; p < 4; p++)
		ok_all &= cache_folio(&e, p) == cached[p] && folio_file_mapcount(cached[p]) == 1 &&
			  lv_folio_memcg(cached[p]) == e.memcg;
	ok(ok_all, "reparent: the file folios stay cached and mapped, the parent's");
	copy = mapped_folio(&e, 8);
	ok(copy && lv_folio_memcg(copy) == e.memcg && !pte_is_file(copy),
	   "reparent: the mapped copy is the parent's");
	if (copy)
		lv_folio_put(copy);
	is((long)lv_memcg_usage(e.memcg), usage, "reparent: the parent's usage is unchanged");
	is(lv_memcg_stat(e.memcg, LV_NR_INACTIVE_FILE) + lv_memcg_stat(e.memcg, LV_NR_ACTIVE_FILE),
	   6, "reparent: the 6 file pages are on the parent's file lists");
	is(lv_memcg_stat(e.memcg, LV_NR_INACTIVE_ANON) + lv_memcg_stat(e.memcg, LV_NR_ACTIVE_ANON),
	   2, "reparent: the 2 copies on its anon lists");
	check_ok(e.m, "after the removal (charged once)");

	/* The parent's reclaim unmaps and evicts them; they fault back in, charged to it. */
	for (unsigned long p = 0; p < 4; p++)
		folio_clear_referenced(cached[p]);
	lv_memcg_reclaim(e.memcg, PAGES);
	ok(!cache_folio(&e, 0) && !cache_folio(&e, 3),
	   "reparent: the parent's reclaim evicted them");
	is(lv_mm_rss(e.mm), 2, "reparent: only the copies stay mapped");
	ok(page_is(&e, 0, 1), "reparent: page 0 faults back in");
	ok(cache_folio(&e, 0) && lv_folio_memcg(cache_folio(&e, 0)) == e.memcg,
	   "reparent: charged to the mm's memcg");
	check_ok(e.m, "reclaim after the removal");

	/* The removal in reclaim's window: after the unmap, before the eviction. */
	race_child = lv_memcg_create(e.m, e.memcg, "child2");
	if (!race_child)
		BAIL_OUT("lv_memcg_create: %s", strerror(errno));
	is(lv_file_read(e.file, race_child, buf, PAGE, 5 * PAGE), (long)PAGE,
	   "removal in reclaim: the child reads page 5");
	ok(page_is(&e, 5, 1), "removal in reclaim: the mm maps it");
	lv_lru_add_drain_all(e.m);
	folio_clear_referenced(cache_folio(&e, 5));
	race_calls = 0;
	file_unmap_hook = remove_in_unmap_hook;
	lv_memcg_reclaim(e.memcg, PAGES);
	file_unmap_hook = NULL;
	is(race_calls, 1, "removal in reclaim: reclaim unmapped a child's folio (the hook ran)");
	ok(!cache_folio(&e, 5), "removal in reclaim: the folio was evicted all the same");
	ok(page_is(&e, 5, 1), "removal in reclaim: and faults back in");
	check_ok(e.m, "removal in reclaim");
	teardown(&e, "reparent");
}

/*
 * Migration: a mapped page cache folio stays where it is (lv_file_migrate_pages(), compaction)
 * until it is unmapped; lv_migrate_pages() moves the mm's private copies only.
 */
static void test_migrate(void)
{
	struct lv_config cfg = small_config();
	struct lv_folio *mapped, *copy;
	unsigned char buf[PAGE], c = 3;
	int from, to, copy_from;
	struct env e;

	cfg.nr_nodes = 2;
	setup_config(&e, &cfg);
	ok(page_is(&e, 1, 1), "migrate: map page 1");
	is(lv_mm_write(e.mm, e.addr + 2 * PAGE, &c, 1), 0, "migrate: COW page 2");
	is(lv_file_read(e.file, e.memcg, buf, PAGE, 3 * PAGE), (long)PAGE,
	   "migrate: cache page 3, unmapped");
	lv_lru_add_drain_all(e.m);
	mapped = cache_folio(&e, 1);
	from = lv_folio_nid(mapped);
	to = !from;
	ok(lv_folio_nid(cache_folio(&e, 3)) == from, "migrate: pages 1 and 3 on one node");
	ok(lv_file_migrate_pages(e.file, 1ull << from, to) >= 1,
	   "lv_file_migrate_pages: not every folio moved");
	ok(cache_folio(&e, 1) == mapped && lv_folio_nid(mapped) == from &&
		   folio_test_mapped(mapped),
	   "migrate: the mapped folio stayed, mapped");
	ok(cache_folio(&e, 3) && lv_folio_nid(cache_folio(&e, 3)) == to,
	   "migrate: the unmapped one moved");
	ok(page_is(&e, 1, 1), "migrate: the mapping still reads the file");
	check_ok(e.m, "lv_file_migrate_pages");

	copy = mapped_folio(&e, 2);
	copy_from = copy ? lv_folio_nid(copy) : 0;
	if (copy)
		lv_folio_put(copy);
	is(lv_migrate_pages(e.mm, 3, !copy_from), 0, "lv_migrate_pages: every private page moved");
	copy = mapped_folio(&e, 2);
	ok(copy && !pte_is_file(copy) && lv_folio_nid(copy) == !copy_from,
	   "lv_migrate_pages moved the copy");
	if (copy)
		lv_folio_put(copy);
	ok(cache_folio(&e, 1) == mapped && lv_folio_nid(mapped) == from,
	   "lv_migrate_pages left the page cache folio");
	check_ok(e.m, "lv_migrate_pages");

	{
		uint64_t a = e.addr + PAGE;
		int st = -1, node = to;

		is(lv_move_pages(e.mm, 1, &a, NULL, &st), 0, "move_pages: locate the file page");
		is(st, from, "move_pages: the node of the page cache folio");
		is(lv_move_pages(e.mm, 1, &a, &node, &st), 0, "move_pages: move the file page");
		is(st, -EBUSY, "move_pages: -EBUSY for a mapped page cache folio");
		ok(cache_folio(&e, 1) == mapped && lv_folio_nid(mapped) == from &&
			   folio_file_mapcount(mapped) == 1,
		   "move_pages: it stayed, mapped");
	}

	ok(lv_compact_node(e.m, from, -1) >= 0, "compact the mapped folio's node");
	ok(cache_folio(&e, 1) == mapped && folio_file_mapcount(mapped) == 1,
	   "compaction left the mapped folio where it was");
	ok(page_is(&e, 1, 1), "compaction: the mapping still reads the file");
	check_ok(e.m, "compaction");

	is(lv_munmap(e.mm, e.addr + PAGE, PAGE), 0, "migrate: unmap page 1");
	lv_lru_add_drain_all(e.m);
	is(lv_file_migrate_pages(e.file, 1ull << from, to), 0, "migrate: unmapped, it moves");
	ok(cache_folio(&e, 1) && lv_folio_nid(cache_folio(&e, 1)) == to,
	   "migrate: page 1 is on the other node");
	teardown(&e, "migrate");
}

int main(void)
{
	test_errors();
	test_read_write_unmap();
	test_reclaim();
	test_truncate(0);
	test_truncate(2);
	test_close_mapped();
	test_fault_races();
	test_reparent();
	test_migrate();
	return done_testing();
}
