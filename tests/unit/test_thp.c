// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Transparent huge pages (huge_memory.c): LV_MADV_HUGEPAGE / LV_MADV_NOHUGEPAGE and cfg.thp;
 * a huge fault maps one order-9 folio (rss, data at every offset, counters, the LRU lock held
 * once); the fallback to small pages on a node with no free 2 MiB block, and the fault that
 * compacts for one; splitting anon and page cache folios, linked or isolated, keeping every
 * byte and count; the refusals (-EINVAL, -EBUSY with nothing changed); the users of split
 * (partial munmap, DONTNEED, FREE, COLD, brk, truncation, reclaim of a lazyfree huge page)
 * and the whole-folio operations that need none; migration of a huge page; lv_check's view of
 * large folios; and splits racing reclaim, migration and memcg removal, each made to happen
 * inside the split's frozen window by a debug hook.
 *
 * No public call hands out the folio behind an address or a file index, so the tests find it
 * with the internal anon_folio_get() and filemap_get_folios(), and use internal helpers where
 * a scene cannot be set otherwise (an isolation that reclaim would make, a corrupted count
 * for lv_check to catch).
 */
#include "internal.h"
#include "mm_types.h" /* struct lv_mm: the hook watches its page_table_lock */

#include "lvtest.h"

#include <limits.h>
#include <pthread.h>
#include <unistd.h>

#define PAGE	 LV_PAGE_SIZE
#define HNR	 512ul	      /* pages of a huge page */
#define HSIZE	 (HNR * PAGE) /* 2 MiB */
#define THP_NODE (32 * MiB)
#define FORDER	 6 /* page cache folios of 64 pages */
#define FNR	 (1ul << FORDER)

static struct lv_config thp_config(unsigned int nodes)
{
	struct lv_config cfg = small_config();

	cfg.node_mem_bytes = THP_NODE;
	cfg.nr_nodes = nodes;
	cfg.no_kcompactd = true; /* nothing compacts behind a test's back */
	return cfg;
}

/* map_huge - a region holding @blocks aligned huge blocks, given @advice; their start. */
static uint64_t map_huge(struct lv_mm *mm, unsigned int blocks, int advice)
{
	uint64_t addr = map_or_bail(mm, (blocks + 1) * HSIZE);

	if (advice && lv_madvise(mm, addr, (blocks + 1) * HSIZE, advice))
		BAIL_OUT("lv_madvise(%d) failed", advice);
	return (addr + HSIZE - 1) & ~(HSIZE - 1);
}

/* folio_at - the folio mapped at @addr of @mm, with a reference, or NULL. */
static struct lv_folio *folio_at(struct lv_mm *mm, uint64_t addr)
{
	int err;

	return anon_folio_get(mm, addr / PAGE, &err);
}

/* order_at - the order of the folio mapped at @addr, or -1 if none. */
static int order_at(struct lv_mm *mm, uint64_t addr)
{
	struct lv_folio *f = folio_at(mm, addr);
	int order = f ? (int)folio_order(f) : -1;

	if (f)
		lv_folio_put(f);
	return order;
}

/* file_folio - the folio caching page @index of @file (or the next one), with a reference. */
static struct lv_folio *file_folio(struct lv_file *file, unsigned long index)
{
	struct lv_folio *f = NULL;

	return filemap_get_folios(file, &index, &f, 1) ? f : NULL;
}

static uint64_t lru_pages(struct lv_machine *m, int nid)
{
	uint64_t n = 0;

	for (enum lv_stat_item i = LV_NR_INACTIVE_ANON; i <= LV_NR_UNEVICTABLE; i++)
		n += lv_node_stat(m, nid, i);
	return n;
}

/* ---- madvise and the modes ------------------------------------------------------------------ */

static void test_madvise_flags(void)
{
	struct lv_config cfg = thp_config(1);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *cg = new_memcg(m, NULL, "cg");
	struct lv_mm *mm = new_mm(m, cg, 0);
	uint64_t addr = map_or_bail(mm, 4 * HSIZE);

	is(lv_madvise(mm, addr + 1, PAGE, LV_MADV_HUGEPAGE), -EINVAL,
	   "HUGEPAGE unaligned: -EINVAL");
	is(lv_madvise(mm, addr, 5 * HSIZE, LV_MADV_HUGEPAGE), -ENOMEM,
	   "HUGEPAGE past the region: -ENOMEM");
	is(lv_madvise(mm, addr, 0, LV_MADV_NOHUGEPAGE), 0, "NOHUGEPAGE of nothing: 0");
	is(lv_madvise(mm, addr, 4 * HSIZE, LV_MADV_HUGEPAGE), 0, "HUGEPAGE of the region: 0");
	is(lv_madvise(mm, addr, 99, 16), -EINVAL, "unknown advice: -EINVAL");
	/* The part given NOHUGEPAGE splits off; the rest keeps HUGEPAGE (the second block). */
	is(lv_madvise(mm, addr, HSIZE, LV_MADV_NOHUGEPAGE), 0, "NOHUGEPAGE of the first block");
	is(write_pat(mm, addr, PAGE, 1), 0, "write into the NOHUGEPAGE block");
	is(order_at(mm, addr), 0, "NOHUGEPAGE: a small page");
	is(write_pat(mm, addr + HSIZE, PAGE, 1), 0, "write into the next block");
	is(order_at(mm, addr + HSIZE), HPAGE_PMD_ORDER, "HUGEPAGE kept there: a huge page");
	is(lv_mm_rss(mm), 1 + HNR, "rss: 1 + 512");
	finish_mm(m, mm, cg, "madvise flags");
}

static void test_huge_fault(void)
{
	struct lv_config cfg = thp_config(1);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *cg = new_memcg(m, NULL, "cg");
	struct lv_mm *mm = new_mm(m, cg, 0);
	uint64_t addr = map_huge(mm, 2, LV_MADV_HUGEPAGE);
	struct lv_folio *f, *g;
	long bad = 0;

	is(write_pat(mm, addr + 5000, 1, 3), 0, "one byte into a HUGEPAGE region");
	is(lv_mm_rss(mm), HNR, "rss 512");
	f = folio_at(mm, addr);
	ok(f && folio_order(f) == HPAGE_PMD_ORDER, "the page is an order-9 folio");
	for (uint64_t p = 1; p < HNR; p++) {
		g = folio_at(mm, addr + p * PAGE);
		bad += g != f;
		lv_folio_put(g);
	}
	is(bad, 0, "all 512 entries map that folio");
	is(folio_ref_count(f), HNR + 1, "one reference per entry (and ours)");
	ok(folio_anon_mm(f) == mm && f->index == addr / PAGE, "its reverse map: mm, first page");
	is(lv_memcg_usage(cg), HNR, "charged 512 pages");
	is(nstat(m, LV_NR_INACTIVE_ANON), HNR, "on the inactive anon list, 512 pages");
	is(nstat(m, LV_THP_FAULT_ALLOC), 1, "thp_fault_alloc 1");
	is(lv_memcg_stat(cg, LV_THP_FAULT_ALLOC), 1, "counted for the memcg");
	is(nstat(m, LV_THP_FAULT_FALLBACK), 0, "thp_fault_fallback 0");
	is(bad_pat(mm, addr, 5000, -1), 0, "the rest reads as zeros (zeroed at allocation)");
	is(write_pat(mm, addr, HSIZE, 4), 0, "write all of it");
	is(bad_pat(mm, addr, HSIZE, 4), 0, "every byte reads back");
	/* The data is where the offset says: page p of the folio is frame p. */
	bad = 0;
	for (uint64_t p = 0; p < HNR; p += 37)
		bad += memcmp((char *)lv_folio_data(f) + p * PAGE + 17,
			      &(unsigned char){ pat(addr + p * PAGE + 17, 4) }, 1) != 0;
	is(bad, 0, "page p of the huge page is page p of the folio's frames");
	lv_folio_put(f);
	check_ok(m, "huge page mapped");

	/* A write of the whole second block faults it huge too. */
	is(write_pat(mm, addr + HSIZE, HSIZE, 5), 0, "write the second block whole");
	is(order_at(mm, addr + HSIZE + 100 * PAGE), HPAGE_PMD_ORDER, "it is huge");
	is(nstat(m, LV_THP_FAULT_ALLOC), 2, "thp_fault_alloc 2");
	is(bad_pat(mm, addr + HSIZE, HSIZE, 5), 0, "its bytes read back");
	is(bad_pat(mm, addr, HSIZE, 4), 0, "the first block's still do");
	check_ok(m, "two huge pages");
	finish_mm(m, mm, cg, "huge fault");
}

static void test_modes(void)
{
	static const struct {
		enum lv_thp_mode thp;
		int advice;
		bool huge;
		const char *what;
	} cases[] = {
		{ LV_THP_MADVISE, 0, false, "madvise mode, no advice: small" },
		{ LV_THP_MADVISE, LV_MADV_HUGEPAGE, true, "madvise mode, HUGEPAGE: huge" },
		{ LV_THP_MADVISE, LV_MADV_NOHUGEPAGE, false, "madvise mode, NOHUGEPAGE: small" },
		{ LV_THP_ALWAYS, 0, true, "always, no advice: huge" },
		{ LV_THP_ALWAYS, LV_MADV_NOHUGEPAGE, false, "always, NOHUGEPAGE: small" },
		{ LV_THP_NEVER, LV_MADV_HUGEPAGE, false, "never, HUGEPAGE: small" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lv_config cfg = thp_config(1);
		struct lv_machine *m;
		struct lv_mm *mm;
		uint64_t addr;

		cfg.thp = cases[i].thp;
		m = new_machine(&cfg);
		mm = new_mm(m, NULL, 0);
		addr = map_huge(mm, 1, cases[i].advice);
		write_pat(mm, addr + 7 * PAGE, 10, 1);
		is(order_at(mm, addr + 7 * PAGE), cases[i].huge ? HPAGE_PMD_ORDER : 0, "%s",
		   cases[i].what);
		is(lv_mm_rss(mm), cases[i].huge ? HNR : 1, "%s: rss", cases[i].what);
		is(nstat(m, LV_THP_FAULT_ALLOC), cases[i].huge, "%s: thp_fault_alloc",
		   cases[i].what);
		is(nstat(m, LV_THP_FAULT_FALLBACK), 0, "%s: no fallback", cases[i].what);
		check_ok(m, cases[i].what);
		lv_mm_destroy(mm);
		finish(m, cases[i].what);
	}

	/* Where no huge page fits: a block cut by the region's end, one already populated. */
	{
		struct lv_config cfg = thp_config(1);
		struct lv_machine *m;
		struct lv_mm *mm;
		uint64_t addr, heap;

		cfg.thp = LV_THP_ALWAYS;
		m = new_machine(&cfg);
		mm = new_mm(m, NULL, 0);
		addr = map_or_bail(mm, HSIZE - PAGE); /* aligned start, one page short */
		write_pat(mm, addr, PAGE, 1);
		is(order_at(mm, addr), 0, "a block the region does not hold whole: small");
		addr = map_huge(mm, 1, 0);
		write_pat(mm, addr + 3 * PAGE, PAGE, 1);
		lv_madvise(mm, addr + 3 * PAGE, PAGE, LV_MADV_DONTNEED);
		write_pat(mm, addr + 300 * PAGE, PAGE, 1);
		is(order_at(mm, addr + 3 * PAGE), -1, "after DONTNEED of the huge page's page 3");
		is(order_at(mm, addr + 300 * PAGE), 0, "a fault in a block with pages: small");

		/* The heap, in always mode, grows into huge pages and shrinks by splitting. */
		if (lv_mm_brk(mm, (int64_t)(2 * HSIZE), &heap))
			BAIL_OUT("lv_mm_brk failed");
		is(heap % HSIZE, 0, "the heap starts on a huge page boundary");
		is(write_pat(mm, heap, 2 * HSIZE, 7), 0, "fill the heap");
		is(order_at(mm, heap + HSIZE), HPAGE_PMD_ORDER, "the heap's pages are huge");
		is(lv_mm_brk(mm, -(int64_t)(100 * PAGE), NULL), 0, "shrink the heap by 100 pages");
		is(order_at(mm, heap + HSIZE), 0, "the cut huge page was split");
		is(order_at(mm, heap), HPAGE_PMD_ORDER, "the other is whole");
		is(bad_pat(mm, heap, 2 * HSIZE - 100 * PAGE, 7), 0, "the heap's bytes are intact");
		is(lv_mm_brk(mm, -(int64_t)(2 * HSIZE - 100 * PAGE), NULL), 0, "empty the heap");
		check_ok(m, "heap");
		lv_mm_destroy(mm);
		finish(m, "where no huge page fits");
	}
}

/* ---- fallback and compaction ---------------------------------------------------------------- */

/*
 * fragment - leave node 0 of @m with no free 2 MiB block: allocate order-0 folios until
 * just above the high watermark is free (less than a block), then free all but the first
 * of each aligned block. Return: the kept folios (release with unfragment()).
 */
static struct lv_folio **fragment(struct lv_machine *m, size_t *nr)
{
	size_t cap = THP_NODE / PAGE, n = 0, kept = 0;
	struct lv_folio **all = calloc(cap, sizeof(*all));
	uint64_t margin = nstat(m, LV_WMARK_HIGH) + 32;
	unsigned char *seen = calloc(cap / HNR + 1, 1);

	if (!all || !seen || margin >= HNR)
		BAIL_OUT("fragment: no memory or the watermark is too high");
	while (n < cap && nstat(m, LV_NR_FREE) > margin)
		all[n++] = alloc_or_bail(m, 0, 0, NULL, 0);
	for (size_t i = 0; i < n; i++) {
		unsigned long block = (unsigned long)(all[i] - all[i]->pgdat->memmap) / HNR;

		if (!seen[block]) {
			seen[block] = 1;
			all[kept++] = all[i];
		} else {
			lv_folio_put(all[i]);
		}
	}
	free(seen);
	*nr = kept;
	return all;
}

static void unfragment(struct lv_folio **kept, size_t nr)
{
	lv_folios_put(kept, nr);
	free(kept);
}

static void test_fallback(void)
{
	struct lv_config cfg = thp_config(1);
	struct lv_machine *m;
	struct lv_memcg *cg;
	struct lv_mm *mm;
	struct lv_folio **kept;
	size_t nr_kept;
	uint64_t addr;

	cfg.thp_defrag = LV_THP_DEFRAG_NEVER;
	m = new_machine(&cfg);
	cg = new_memcg(m, NULL, "cg");
	mm = new_mm(m, cg, 0);
	addr = map_huge(mm, 2, LV_MADV_HUGEPAGE);
	kept = fragment(m, &nr_kept);
	ok(nr_kept >= THP_NODE / HSIZE - 1, "fragmented: a page held in each of %zu blocks",
	   nr_kept);
	ok(nstat(m, LV_NR_FREE) > 4 * HNR, "yet %llu pages are free",
	   (unsigned long long)nstat(m, LV_NR_FREE));
	is(write_pat(mm, addr, 3 * PAGE, 1), 0, "a write fault on the fragmented node works");
	is(nstat(m, LV_THP_FAULT_FALLBACK), 1, "thp_fault_fallback 1");
	is(lv_memcg_stat(cg, LV_THP_FAULT_FALLBACK), 1, "counted for the memcg");
	is(nstat(m, LV_THP_FAULT_ALLOC), 0, "thp_fault_alloc 0");
	is(order_at(mm, addr), 0, "it got a small page");
	is(lv_mm_rss(mm), 3, "three small pages");
	is(lv_memcg_usage(cg), 3, "the failed huge charge was given back");
	is(write_pat(mm, addr + 3 * PAGE, HSIZE - 3 * PAGE, 1), 0, "fill the block");
	is(nstat(m, LV_THP_FAULT_FALLBACK), 1, "a populated block is not tried again");
	is(bad_pat(mm, addr, HSIZE, 1), 0, "its bytes read back");
	check_ok(m, "fallback");
	/* The small pages came from every block's free part: free them too. */
	is(lv_madvise(mm, addr, HSIZE, LV_MADV_DONTNEED), 0, "drop the small pages");
	unfragment(kept, nr_kept);
	is(write_pat(mm, addr + HSIZE, PAGE, 2), 0, "with blocks free again");
	is(order_at(mm, addr + HSIZE), HPAGE_PMD_ORDER, "the next block is huge");
	is(nstat(m, LV_THP_FAULT_ALLOC), 1, "thp_fault_alloc 1");
	finish_mm(m, mm, cg, "fallback");
}

/* The same fragmentation, but by movable pages: a defrag-always fault compacts for its block. */
static void test_defrag_compacts(void)
{
	struct lv_config cfg = thp_config(1);
	struct lv_machine *m;
	struct lv_mm *a, *b;
	uint64_t base, addr, margin, n = 0;
	unsigned char *seen;

	cfg.thp_defrag = LV_THP_DEFRAG_ALWAYS;
	m = new_machine(&cfg);
	is(lv_compact_node(m, 0, -1), 0, "compacting an empty node: a full pass, 0");
	a = new_mm(m, NULL, 0);
	b = new_mm(m, NULL, 0);
	margin = nstat(m, LV_WMARK_HIGH) + 32;
	base = map_or_bail(a, THP_NODE);
	while (nstat(m, LV_NR_FREE) > margin && n < THP_NODE / PAGE)
		write_pat(a, base + PAGE * n++, PAGE, 9);
	seen = calloc(THP_NODE / HSIZE + 1, 1);
	for (uint64_t i = 0; i < n; i++) {
		struct lv_folio *f = folio_at(a, base + i * PAGE);
		unsigned long block = (unsigned long)(f - f->pgdat->memmap) / HNR;

		lv_folio_put(f);
		if (seen[block])
			lv_madvise(a, base + i * PAGE, PAGE, LV_MADV_DONTNEED);
		seen[block] = 1;
	}
	free(seen);
	addr = map_huge(b, 1, LV_MADV_HUGEPAGE);
	is(write_pat(b, addr, PAGE, 1), 0, "a fault on the fragmented node");
	is(order_at(b, addr), HPAGE_PMD_ORDER, "defrag always: it compacted for a huge page");
	is(nstat(m, LV_THP_FAULT_ALLOC), 1, "thp_fault_alloc 1");
	ok(nstat(m, LV_COMPACT_STALL) >= 1, "a direct compaction ran");
	n = 0;
	for (uint64_t i = 0; i < THP_NODE / PAGE; i++)
		if (order_at(a, base + i * PAGE) == 0)
			n += zero_or_pat(a, base + i * PAGE, 9) != 0;
	is(n, 0, "the moved pages kept their bytes");
	check_ok(m, "defrag compacts");
	lv_mm_destroy(a);
	lv_mm_destroy(b);
	finish(m, "defrag compacts");
}

/* ---- splitting ------------------------------------------------------------------------------ */

/* fault_huge - fault a huge page at @addr filled with pat(@seed). Return: it, referenced. */
static struct lv_folio *fault_huge(struct lv_mm *mm, uint64_t addr, unsigned int seed)
{
	struct lv_folio *f;

	if (write_pat(mm, addr, HSIZE, seed) || !(f = folio_at(mm, addr)) ||
	    folio_order(f) != HPAGE_PMD_ORDER)
		BAIL_OUT("no huge page at %#llx", (unsigned long long)addr);
	return f;
}

/* pages_split - how many of the @nr pages from @addr are order-0 folios of their own, frame i
 * being page i of @head and mapped with one reference (plus the one we take to look, and
 * @held more on the head). */
static unsigned long pages_split(struct lv_mm *mm, uint64_t addr, struct lv_folio *head,
				 unsigned long nr, int held)
{
	unsigned long good = 0;

	for (unsigned long i = 0; i < nr; i++) {
		struct lv_folio *f = folio_at(mm, addr + i * PAGE);

		if (!f)
			continue;
		good += f == head + i && folio_order(f) == 0 && f->index == addr / PAGE + i &&
			folio_anon_mm(f) == mm && folio_ref_count(f) == 2 + (f == head) * held;
		lv_folio_put(f);
	}
	return good;
}

static void test_split_anon(void)
{
	struct lv_config cfg = thp_config(1);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *cg = new_memcg(m, NULL, "cg");
	struct lv_mm *mm = new_mm(m, cg, 0);
	uint64_t addr = map_huge(mm, 2, LV_MADV_HUGEPAGE);
	struct lv_folio *f = fault_huge(mm, addr, 1), *g;
	struct list_head list;
	unsigned long n, bad = 0;

	/* Linked: the pages join the head's list, right after it. */
	lv_folio_activate(f);
	is(nstat(m, LV_NR_ACTIVE_ANON), HNR, "active: 512 pages");
	is(lv_split_folio(f), 0, "split the linked huge page");
	is(folio_order(f), 0, "the head is order 0");
	is(pages_split(mm, addr, f, HNR, 1), HNR, "each page is its own folio, mapped once");
	is(lv_mm_rss(mm), HNR, "rss still 512");
	is(lv_memcg_usage(cg), HNR, "charge unchanged");
	is(nstat(m, LV_NR_ACTIVE_ANON), HNR, "active anon still 512 pages");
	is(lv_memcg_stat(cg, LV_NR_ACTIVE_ANON), HNR, "in the memcg too");
	ok(f->lru.prev == &f[1].lru && f[1].lru.prev == &f[2].lru,
	   "page 1 follows the head towards the list's head, page 2 page 1");
	for (unsigned long i = 0; i < HNR; i++)
		bad += !folio_test_lru(f + i) || !folio_test_active(f + i) ||
		       !folio_test_dirty(f + i) || !folio_test_swapbacked(f + i) ||
		       f[i].objcg != f->objcg;
	is(bad, 0, "every page: PG_lru, active, dirty, swap-backed, the head's memcg");
	is(nstat(m, LV_THP_SPLIT_PAGE), 1, "thp_split_page 1");
	is(lv_memcg_stat(cg, LV_THP_SPLIT_PAGE), 1, "counted for the memcg");
	is(bad_pat(mm, addr, HSIZE, 1), 0, "every byte kept");
	lv_folio_put(f);
	check_ok(m, "split linked");
	is(write_pat(mm, addr + 9 * PAGE, 3 * PAGE, 2), 0, "write across split pages");
	is(bad_pat(mm, addr + 9 * PAGE, 3 * PAGE, 2), 0, "and read them back");
	is(lv_split_folio(f), -EINVAL, "a split page is small: -EINVAL");

	/* Isolated (as reclaim or migration would): the pages go on the caller's list. */
	f = fault_huge(mm, addr + HSIZE, 3);
	ok(folio_isolate_lru(f), "isolate the second huge page");
	lv_folio_put(f); /* the isolation's reference is now the one we hold */
	INIT_LIST_HEAD(&list);
	is(split_folio_to_list(f, &list), 0, "split it onto a list");
	n = 0;
	bad = 0;
	while (!list_empty(&list)) {
		g = list_first_entry(&list, struct lv_folio, lru);
		list_del(&g->lru);
		n++;
		bad += g != f + n || folio_test_lru(g) || folio_ref_count(g) != 2 ||
		       !folio_test(g, PG_lru_claimed);
		folio_putback_lru(g);
	}
	is(n, HNR - 1, "511 pages on the list");
	is(bad, 0, "in order, isolated, with the entry's and the list's reference");
	is(folio_ref_count(f), 2, "the head keeps its entry's and the isolation's");
	folio_putback_lru(f);
	lv_lru_add_drain(m);
	is(nstat(m, LV_NR_INACTIVE_ANON), HNR, "put back: 512 inactive pages");
	is(pages_split(mm, addr + HSIZE, f, HNR, 0), HNR, "each page mapped, order 0");
	is(bad_pat(mm, addr + HSIZE, HSIZE, 3), 0, "every byte kept");
	is(nstat(m, LV_THP_SPLIT_PAGE), 2, "thp_split_page 2");

	/* Unevictable (mlocked, culled by the add): the pages are counted there, not linked. */
	addr = map_huge(mm, 1, LV_MADV_HUGEPAGE);
	f = fault_huge(mm, addr, 4);
	is(lv_folio_isolate_lru(f), 0, "isolate a third huge page");
	is(lv_folio_set_state(f, LV_PG_MLOCKED, true), 0, "mark it mlocked");
	is(lv_folio_putback_lru(f), 0, "put it back");
	is(lv_memcg_stat(cg, LV_NR_UNEVICTABLE), HNR, "mlocked: 512 unevictable pages");
	is(lv_split_folio(f), 0, "split it");
	bad = 0;
	for (unsigned long i = 0; i < HNR; i++)
		bad += !folio_test_lru(f + i) || !folio_test_unevictable(f + i) ||
		       !folio_test_mlocked(f + i) || (i && f[i].mlock_count) ||
		       (i && f[i].lru.next != LIST_POISON1);
	is(bad, 0, "each page: PG_lru, unevictable, mlocked, mlock_count 0, linked nowhere");
	is(lv_memcg_stat(cg, LV_NR_UNEVICTABLE), HNR, "still 512 unevictable pages");
	is(bad_pat(mm, addr, HSIZE, 4), 0, "every byte kept");
	lv_folio_put(f);
	check_ok(m, "split unevictable");
	finish_mm(m, mm, cg, "split anon");
}

static void test_split_file(void)
{
	struct lv_config cfg = thp_config(1);
	size_t size = 3 * FNR * PAGE;
	struct lv_machine *m;
	struct lv_memcg *cg;
	struct lv_file *file, *hole;
	struct lv_folio *f, *g;
	unsigned char *buf = malloc(size);
	struct list_head list;
	unsigned long bad = 0, n;
	int fd = temp_file(size, 5);

	cfg.file_folio_order = FORDER;
	m = new_machine(&cfg);
	cg = new_memcg(m, NULL, "cg");
	file = lv_file_open(m, fd, size);
	is(lv_file_read(file, cg, buf, size, 0), (long)size, "read a file of 3 large folios");
	f = file_folio(file, 0);
	ok(f && folio_nr_pages(f) == (long)FNR, "cached as folios of %lu pages", FNR);
	is(lv_split_folio(f), 0, "split the first");
	for (unsigned long i = 0; i < FNR; i++) {
		g = file_folio(file, i);
		bad += g != f + i || folio_order(g) != 0 || g->index != i ||
		       folio_file_mapping(g) != file || folio_ref_count(g) != 2 + (g == f) ||
		       !folio_test_lru(g) || !folio_test_referenced(g) ||
		       !folio_test(g, PG_uptodate);
		lv_folio_put(g);
	}
	is(bad, 0, "each slot holds its own page: referenced (read once), uptodate, on the LRU");
	is(lv_file_cached_pages(file), 3 * FNR, "cached pages unchanged");
	is(nstat(m, LV_NR_FILE_PAGES), 3 * FNR, "nr_file_pages unchanged");
	is(nstat(m, LV_NR_INACTIVE_FILE), 3 * FNR, "inactive file pages unchanged");
	is(lv_memcg_usage(cg), 3 * FNR, "charge unchanged");
	is(nstat(m, LV_THP_SPLIT_PAGE), 1, "thp_split_page 1");
	lv_folio_put(f);
	check_ok(m, "page cache split");

	/* Isolated, onto a list. */
	f = file_folio(file, FNR);
	ok(folio_isolate_lru(f), "isolate the second folio");
	lv_folio_put(f);
	INIT_LIST_HEAD(&list);
	is(split_folio_to_list(f, &list), 0, "split it onto a list");
	for (n = 0; !list_empty(&list); n++) {
		g = list_first_entry(&list, struct lv_folio, lru);
		list_del(&g->lru);
		bad += g != f + n + 1 || folio_ref_count(g) != 2 || folio_test_lru(g);
		folio_putback_lru(g);
	}
	folio_putback_lru(f);
	lv_lru_add_drain(m);
	is(n, FNR - 1, "63 pages on the list");
	is(bad, 0, "in order, each with the cache's and the list's reference, off the LRU");
	is(nstat(m, LV_NR_INACTIVE_FILE), 3 * FNR, "all back on the inactive list");
	memset(buf, 0, size);
	is(lv_file_read(file, cg, buf, size, 0), (long)size, "read it all again");
	is(bad_bytes(buf, size, 0, size, 5), 0, "every byte kept");
	check_ok(m, "page cache split onto a list");
	lv_file_close(file);
	close(fd);

	/* A hole folio of a sparse file, read in part: its unread pages read as zeros too. */
	hole = lv_file_open(m, -1, FNR * PAGE);
	is(lv_file_read(hole, cg, buf, 10, 3 * PAGE), 10, "read 10 bytes of a hole");
	f = file_folio(hole, 0);
	ok(f && folio_test(f, PG_hole), "a hole folio");
	is(lv_split_folio(f), 0, "split it");
	ok(!folio_test(f, PG_hole), "no longer a hole");
	lv_folio_put(f);
	memset(buf, 0xa5, FNR * PAGE);
	is(lv_file_read(hole, cg, buf, FNR * PAGE, 0), (long)(FNR * PAGE), "read all of it");
	is(bad_bytes(buf, FNR * PAGE, 0, 0, 0), 0, "every page reads as zeros");
	check_ok(m, "hole split");
	lv_file_close(hole);
	free(buf);
	is(lv_memcg_remove(cg), 0, "memcg removable");
	finish(m, "split file");
}

static void test_split_refused(void)
{
	struct lv_config cfg = thp_config(1);
	struct lv_machine *m;
	struct lv_memcg *cg;
	struct lv_mm *mm;
	struct lv_folio *f, *small, *loose;
	struct lv_file *file;
	uint64_t addr, small_addr;
	char buf[16];

	cfg.file_folio_order = FORDER;
	m = new_machine(&cfg);
	cg = new_memcg(m, NULL, "cg");
	mm = new_mm(m, cg, 0);
	addr = map_huge(mm, 1, LV_MADV_HUGEPAGE);
	is(lv_split_folio(NULL), -EINVAL, "NULL: -EINVAL");
	small_addr = map_or_bail(mm, PAGE);
	write_pat(mm, small_addr, PAGE, 1);
	small = folio_at(mm, small_addr);
	is(lv_split_folio(small), -EINVAL, "a small anon folio: -EINVAL");
	lv_folio_put(small);
	file = lv_file_open(m, -1, PAGE);
	lv_file_read(file, cg, buf, 1, 0);
	small = file_folio(file, 0);
	is(lv_split_folio(small), -EINVAL, "a one-page page cache folio: -EINVAL");
	lv_folio_put(small);
	lv_file_close(file);

	f = fault_huge(mm, addr, 2);
	lv_folio_get(f); /* someone else's reference */
	is(lv_split_folio(f), -EBUSY, "an extra reference: -EBUSY");
	is(folio_order(f), HPAGE_PMD_ORDER, "still order 9");
	is(folio_ref_count(f), HNR + 2, "its count unchanged");
	is(order_at(mm, addr + 100 * PAGE), HPAGE_PMD_ORDER, "its entries unchanged");
	is(nstat(m, LV_THP_SPLIT_PAGE_FAILED), 1, "thp_split_page_failed 1");
	is(nstat(m, LV_THP_SPLIT_PAGE), 0, "thp_split_page 0");
	lv_folio_put(f);
	check_ok(m, "refused: extra reference");
	is(lv_folio_isolate_lru(f), 0, "isolate it through the public call");
	is(lv_split_folio(f), -EBUSY, "isolated with lv_folio_isolate_lru(): -EBUSY");
	is(lv_folio_putback_lru(f), 0, "put it back");
	lv_folio_put(f);
	is(order_at(mm, addr), HPAGE_PMD_ORDER, "still huge");
	is(bad_pat(mm, addr, HSIZE, 2), 0, "bytes intact");

	loose = alloc_or_bail(m, 0, HPAGE_PMD_ORDER, cg, LV_FOLIO_ANON);
	lv_folio_get(loose); /* someone else's reference */
	is(lv_split_folio(loose), -EBUSY, "a large folio with no owner, held twice: -EBUSY");
	is(folio_order(loose), HPAGE_PMD_ORDER, "unchanged");
	lv_folio_put(loose);
	is(nstat(m, LV_THP_SPLIT_PAGE_FAILED), 3, "thp_split_page_failed 3");
	check_ok(m, "refused");
	{
		uint64_t usage = lv_memcg_usage(cg), free = nstat(m, LV_NR_FREE);

		is(lv_folio_add_lru(loose), 0, "the unowned folio on the LRU");
		lv_lru_add_drain(m);
		is(lv_split_folio(loose), 0, "a large folio with no owner, held once: split");
		is(folio_order(loose), 0, "the caller keeps its first page");
		is(lv_memcg_usage(cg), usage - (HNR - 1), "the other pages uncharged");
		is(nstat(m, LV_NR_FREE), free + HNR - 1, "and freed");
		ok(lv_folio_test(loose, LV_PG_LRU), "the first page still on its LRU list");
		check_ok(m, "unowned split");
		lv_folio_put(loose);
	}
	finish_mm(m, mm, cg, "split refused");
}

/* ---- the users of split ------------------------------------------------------------------- */

static void test_partial_ops(void)
{
	struct lv_config cfg = thp_config(1);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *cg = new_memcg(m, NULL, "cg");
	struct lv_mm *mm = new_mm(m, cg, 0);
	uint64_t addr = map_huge(mm, 6, LV_MADV_HUGEPAGE), b;
	uint64_t splits = 0;
	struct lv_folio *f;

	for (unsigned int i = 0; i < 6; i++)
		lv_folio_put(fault_huge(mm, addr + i * HSIZE, i));
	is(lv_mm_rss(mm), 6 * HNR, "six huge pages");

	/* munmap of the first 100 pages of block 0. */
	is(lv_munmap(mm, addr, 100 * PAGE), 0, "munmap 100 pages of a huge page");
	is(nstat(m, LV_THP_SPLIT_PAGE), ++splits, "it was split");
	is(lv_mm_rss(mm), 6 * HNR - 100, "rss lost 100 pages");
	is(lv_memcg_usage(cg), 6 * HNR - 100, "100 pages uncharged");
	is(bad_pat(mm, addr + 100 * PAGE, HSIZE - 100 * PAGE, 0), 0, "the rest keeps its bytes");
	is(order_at(mm, addr + 100 * PAGE), 0, "and is small pages");
	check_ok(m, "partial munmap");

	/* DONTNEED of 50 pages in the middle of block 1. */
	b = addr + HSIZE;
	is(lv_madvise(mm, b + 200 * PAGE, 50 * PAGE, LV_MADV_DONTNEED), 0, "DONTNEED 50 pages");
	is(nstat(m, LV_THP_SPLIT_PAGE), ++splits, "split");
	is(bad_pat(mm, b + 200 * PAGE, 50 * PAGE, -1), 0, "they read as zeros");
	is(bad_pat(mm, b, 200 * PAGE, 1), 0, "the pages before keep their bytes");
	is(bad_pat(mm, b + 250 * PAGE, HSIZE - 250 * PAGE, 1), 0, "and those after");
	is(lv_mm_rss(mm), 6 * HNR - 150, "rss lost 50 more");
	check_ok(m, "partial DONTNEED");

	/* DONTNEED and munmap of whole huge pages: no split. */
	is(lv_madvise(mm, addr + 2 * HSIZE, HSIZE, LV_MADV_DONTNEED), 0, "DONTNEED block 2");
	is(nstat(m, LV_THP_SPLIT_PAGE), splits, "a whole huge page is not split");
	is(lv_mm_rss(mm), 5 * HNR - 150, "its 512 pages left");
	is(bad_pat(mm, addr + 2 * HSIZE, HSIZE, -1), 0, "it reads as zeros");

	/* FREE of part of block 3, then of all of block 4. */
	b = addr + 3 * HSIZE;
	is(lv_madvise(mm, b + 10 * PAGE, 20 * PAGE, LV_MADV_FREE), 0, "FREE 20 pages");
	is(nstat(m, LV_THP_SPLIT_PAGE), ++splits, "split");
	lv_lru_add_drain(m);
	is(nstat(m, LV_PGLAZYFREE), 20, "20 pages lazily freed");
	is(lv_madvise(mm, addr + 4 * HSIZE, HSIZE, LV_MADV_FREE), 0, "FREE all of block 4");
	is(nstat(m, LV_THP_SPLIT_PAGE), splits, "a whole huge page is not split");
	is(nstat(m, LV_PGLAZYFREE), 20 + HNR, "its 512 pages lazily freed at once");
	is(order_at(mm, addr + 4 * HSIZE), HPAGE_PMD_ORDER, "still huge");
	check_ok(m, "FREE");

	/* COLD: the whole of block 5 deactivates as one folio; part of it splits. */
	f = folio_at(mm, addr + 5 * HSIZE);
	lv_folio_activate(f);
	lv_folio_put(f);
	is(lv_madvise(mm, addr + 5 * HSIZE, HSIZE, LV_MADV_COLD), 0, "COLD all of block 5");
	is(nstat(m, LV_PGDEACTIVATE), HNR, "512 pages deactivated");
	is(nstat(m, LV_THP_SPLIT_PAGE), splits, "not split");
	f = folio_at(mm, addr + 5 * HSIZE);
	lv_folio_activate(f);
	lv_folio_put(f);
	is(lv_madvise(mm, addr + 5 * HSIZE + 500 * PAGE, 12 * PAGE, LV_MADV_COLD), 0,
	   "COLD its last 12 pages");
	is(nstat(m, LV_THP_SPLIT_PAGE), ++splits, "split");
	lv_lru_add_drain(m);
	is(nstat(m, LV_PGDEACTIVATE), HNR + 12, "12 more pages deactivated");
	is(lv_memcg_stat(cg, LV_NR_ACTIVE_ANON), HNR - 12, "the other 500 stay active");

	/* munmap of a whole huge page, and of a range ending inside one. */
	is(lv_munmap(mm, addr + 4 * HSIZE, HSIZE + 10 * PAGE), 0,
	   "munmap block 4 and 10 pages of block 5");
	is(nstat(m, LV_THP_SPLIT_PAGE), splits, "nothing more to split");
	is(lv_mm_rss(mm), 6 * HNR - 100 - 50 - HNR - HNR - 10, "rss");
	is(bad_pat(mm, addr + 5 * HSIZE + 10 * PAGE, HSIZE - 10 * PAGE, 5), 0,
	   "block 5's other pages keep their bytes");
	check_ok(m, "partial operations");
	finish_mm(m, mm, cg, "partial operations");
}

static void test_truncate(void)
{
	struct lv_config cfg = thp_config(1);
	size_t size = 4 * FNR * PAGE;
	unsigned char *buf = malloc(size);
	struct lv_machine *m;
	struct lv_file *file;
	struct lv_folio *f;
	uint64_t cut = FNR * PAGE + 10 * PAGE + 5;
	int fd = temp_file(size, 3);

	cfg.file_folio_order = FORDER;
	m = new_machine(&cfg);
	file = lv_file_open(m, fd, size);
	lv_file_read(file, NULL, buf, size, 0);
	is(lv_file_cached_pages(file), 4 * FNR, "4 folios cached");
	is(lv_file_truncate(file, cut), 0, "truncate into the second folio");
	is(nstat(m, LV_THP_SPLIT_PAGE), 1, "it was split");
	is(lv_file_cached_pages(file), FNR + 10, "its 10 pages below the cut stay cached");
	is(nstat(m, LV_NR_FILE_PAGES), FNR + 10, "nr_file_pages agrees");
	is(lru_pages(m, 0), FNR + 10, "so do the LRU lists");
	is(lv_file_read(file, NULL, buf, size, 0), (long)cut, "read up to the new size");
	is(bad_bytes(buf, cut, 0, cut, 3), 0, "the bytes are the file's, zeros past the cut");
	is(lv_file_cached_pages(file), FNR + 11, "the page holding the end was read again");
	check_ok(m, "truncated into a folio");

	/* A reader holds the folio: it cannot be split, and all of it leaves. */
	is(lv_file_truncate(file, FNR * PAGE), 0, "truncate to the first folio's end");
	is(nstat(m, LV_THP_SPLIT_PAGE), 1, "on a boundary: nothing to split");
	f = file_folio(file, 0);
	is(lv_file_truncate(file, 5 * PAGE), 0, "truncate into it while we hold it");
	is(nstat(m, LV_THP_SPLIT_PAGE_FAILED), 1, "the split failed");
	is(lv_file_cached_pages(file), 0, "the whole folio left the cache");
	ok(!folio_file_mapping(f), "it belongs to no file");
	lv_folio_put(f);
	is(lv_file_read(file, NULL, buf, size, 0), (long)(5 * PAGE), "read the 5 pages again");
	is(bad_bytes(buf, 5 * PAGE, 0, 5 * PAGE, 3), 0, "they are the file's");
	check_ok(m, "truncated");
	lv_file_close(file);
	close(fd);
	free(buf);
	finish(m, "truncate");
}

/* Reclaim splits a clean lazyfree huge page before it frees its pages; a written one stays. */
static void test_reclaim(void)
{
	struct lv_config cfg = thp_config(1);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *cg = new_memcg(m, NULL, "cg");
	struct lv_mm *mm = new_mm(m, cg, 0);
	uint64_t addr = map_huge(mm, 2, LV_MADV_HUGEPAGE);

	lv_folio_put(fault_huge(mm, addr, 1));
	lv_folio_put(fault_huge(mm, addr + HSIZE, 2));
	is(lv_madvise(mm, addr, 2 * HSIZE, LV_MADV_FREE), 0, "FREE both huge pages");
	is(nstat(m, LV_NR_INACTIVE_FILE), 2 * HNR, "both on the inactive file list");
	is(write_pat(mm, addr + HSIZE + 7, 1, 2), 0, "write one byte of the second");
	is(lv_reclaim_node(m, 0, 4 * HNR), HNR, "reclaim frees the clean one's 512 pages");
	is(nstat(m, LV_THP_SPLIT_PAGE), 1, "split it first, only it");
	is(lv_mm_rss(mm), HNR, "the written one is still mapped");
	is(order_at(mm, addr + HSIZE), HPAGE_PMD_ORDER, "whole");
	is(bad_pat(mm, addr, HSIZE, -1), 0, "the freed one reads as zeros");
	is(bad_pat(mm, addr + HSIZE, HSIZE, 2), 0, "the written one keeps its bytes");
	is(nstat(m, LV_NR_ACTIVE_ANON), HNR, "and went back to the active anon list");
	is(lv_memcg_usage(cg), HNR, "usage 512");
	finish_mm(m, mm, cg, "reclaim");
}

static void test_migrate(void)
{
	struct lv_config cfg = thp_config(2);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *cg = new_memcg(m, NULL, "cg");
	struct lv_mm *mm = new_mm(m, cg, 0);
	uint64_t addr = map_huge(mm, 2, LV_MADV_HUGEPAGE), addrs[HNR];
	int nodes[HNR], status[HNR];
	long failed;

	lv_folio_put(fault_huge(mm, addr, 1));
	lv_folio_put(fault_huge(mm, addr + HSIZE, 2));
	addrs[0] = addr + 7 * PAGE;
	nodes[0] = 1;
	is(lv_move_pages(mm, 1, addrs, nodes, status), 0, "move one page of a huge page");
	is(status[0], 1, "it is on node 1");
	for (unsigned long i = 0; i < HNR; i++)
		addrs[i] = addr + i * PAGE;
	lv_move_pages(mm, HNR, addrs, NULL, status);
	failed = 0;
	for (unsigned long i = 0; i < HNR; i++)
		failed += status[i] != 1;
	is(failed, 0, "the whole huge page moved with it");
	is(order_at(mm, addr), HPAGE_PMD_ORDER, "still huge");
	is(lv_node_stat(m, 1, LV_PGMIGRATE_SUCCESS), HNR, "pgmigrate_success 512");
	is(bad_pat(mm, addr, HSIZE, 1), 0, "its bytes moved");
	check_ok(m, "moved a huge page");
	failed = lv_migrate_pages(mm, 3, 1);
	is(failed, 0, "migrate the mm to node 1: nothing failed");
	is(lv_node_stat(m, 1, LV_PGMIGRATE_SUCCESS), 2 * HNR, "the other huge page moved once");
	is(lv_node_stat(m, 0, LV_NR_INACTIVE_ANON), 0, "nothing left on node 0");
	is(lv_node_stat(m, 1, LV_NR_INACTIVE_ANON), 2 * HNR, "both on node 1");
	is(bad_pat(mm, addr + HSIZE, HSIZE, 2), 0, "bytes intact");
	is(lv_memcg_usage(cg), 2 * HNR, "usage unchanged");
	finish_mm(m, mm, cg, "migrate");
}

/* ---- lv_check ---------------------------------------------------------------------------- */

static int check_quiet(struct lv_machine *m, char **report)
{
	size_t len = 0;
	FILE *f = open_memstream(report, &len);
	int rc = lv_check(m, f);

	fclose(f);
	return rc;
}

static void test_check(void)
{
	struct lv_config cfg = thp_config(1);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_mm *mm = new_mm(m, NULL, 0);
	uint64_t addr = map_huge(mm, 1, LV_MADV_HUGEPAGE);
	struct lv_folio *f = fault_huge(mm, addr, 1);
	char *report = NULL;

	is(check_quiet(m, &report), 0, "a huge page mapped by 512 entries: lv_check passes");
	free(report);
	__atomic_fetch_sub(&f->_refcount, 2, __ATOMIC_RELAXED); /* fewer than its entries */
	is(check_quiet(m, &report), -EUCLEAN, "fewer references than entries: caught");
	ok(strstr(report, "fewer references than entries") != NULL, "and described");
	free(report);
	__atomic_fetch_add(&f->_refcount, 2, __ATOMIC_RELAXED);
	f[7]._refcount = 1; /* a tail frame that looks like a folio's */
	is(check_quiet(m, &report), -EUCLEAN, "a referenced frame inside a large folio: caught");
	ok(strstr(report, "of large folio") != NULL, "and described");
	free(report);
	f[7]._refcount = 0;
	is(check_quiet(m, &report), 0, "restored: lv_check passes");
	free(report);
	lv_folio_put(f);
	lv_mm_destroy(mm);
	finish(m, "check");
}

/* ---- the cost of a huge fault ------------------------------------------------------------- */

static uint64_t lru_acquired(struct lv_machine *m)
{
	struct lv_lock_stat s;
	uint64_t n;

	lv_lock_stats(m, LV_LOCK_CLASS_LRUVEC, &s);
	n = s.acquired;
	lv_lock_stats(m, LV_LOCK_CLASS_NODE, &s);
	return n + s.acquired;
}

static void test_fault_cost(void)
{
	struct lv_config cfg = thp_config(1);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_mm *mm = new_mm(m, NULL, 0);
	const unsigned int blocks = 4;
	uint64_t small = map_huge(mm, blocks, 0), huge = map_huge(mm, blocks, LV_MADV_HUGEPAGE);
	uint64_t a0, a1, a2;
	double t0, t1, t2, t3 = 0;

	a0 = lru_acquired(m);
	t0 = now();
	for (uint64_t off = 0; off < blocks * HSIZE; off += PAGE)
		lv_mm_memset(mm, small + off, 1, 1);
	lv_lru_add_drain(m);
	a1 = lru_acquired(m);
	t1 = now();
	for (uint64_t off = 0; off < blocks * HSIZE; off += HSIZE)
		lv_mm_memset(mm, huge + off, 1, 1);
	a2 = lru_acquired(m);
	t2 = now();
	/* The bare zeroing, of frames of the same node: a huge page's, allocated unzeroed. */
	for (unsigned int i = 0; i < blocks; i++) {
		struct lv_folio *f = alloc_or_bail(m, 0, HPAGE_PMD_ORDER, NULL, 0);
		double z = now();

		memset(lv_folio_data(f), (int)i, HSIZE);
		__asm__ __volatile__("" ::"r"(lv_folio_data(f)) : "memory");
		t3 += now() - z;
		lv_folio_put(f);
	}
	is(lv_mm_rss(mm), 2 * blocks * HNR, "%u blocks faulted each way", blocks);
	ok(a2 - a1 > 0 && (a1 - a0) >= 10 * (a2 - a1),
	   "LRU lock acquisitions per MiB: small pages %.2f, huge pages %.2f (at least 10x fewer)",
	   (double)(a1 - a0) / (blocks * 2.0), (double)(a2 - a1) / (blocks * 2.0));
	diag("2 MiB fault %.1f us, bare zeroing of 2 MiB %.1f us, 512 small faults %.1f us "
	     "(timings only reported)",
	     (t2 - t1) * 1e6 / blocks, t3 * 1e6 / blocks, (t1 - t0) * 1e6 / blocks);
	lv_mm_destroy(mm);
	finish(m, "fault cost");
}

/* ---- races, made to happen inside the split's frozen window -------------------------------- */

#ifdef LV_DEBUG
/*
 * The hook hands the frozen folio to a racer thread and waits until the racer says it is
 * done (or, for a racer that must wait for the split's own lock, until it waits for it).
 */
static struct racer {
	pthread_t thread;
	int go, done, fired;
	struct lv_folio *frozen;
	struct lv_lock *wait_on; /* done once a waiter sleeps on this lock */
	void (*fn)(struct racer *);
	struct lv_machine *m;
	struct lv_mm *mm;
	struct lv_file *file;
	struct lv_memcg *memcg;
	uint64_t addr;
	long result;
	int status[3];
} racer;

static void *racer_thread(void *arg)
{
	struct racer *r = arg;

	while (!__atomic_load_n(&r->go, __ATOMIC_ACQUIRE))
		sched_yield();
	r->fn(r);
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void frozen_hook(struct lv_folio *folio)
{
	struct racer *r = &racer;

	if (r->fired++)
		return;
	r->frozen = folio;
	is(folio_ref_count(folio), 0, "hook: the folio is frozen");
	__atomic_store_n(&r->go, 1, __ATOMIC_RELEASE);
	if (r->wait_on) {
		/* A futex lock word of 2 means locked with a sleeping waiter. */
		while (__atomic_load_n(&r->wait_on->futex, __ATOMIC_ACQUIRE) != 2)
			sched_yield();
		return;
	}
	while (!__atomic_load_n(&r->done, __ATOMIC_ACQUIRE))
		sched_yield();
}

static void race_start(void (*fn)(struct racer *))
{
	racer.go = racer.done = racer.fired = 0;
	racer.fn = fn;
	if (pthread_create(&racer.thread, NULL, racer_thread, &racer))
		BAIL_OUT("pthread_create failed");
	split_frozen_hook = frozen_hook;
}

static void race_end(void)
{
	split_frozen_hook = NULL;
	if (!racer.fired)
		__atomic_store_n(&racer.go, 1, __ATOMIC_RELEASE);
	pthread_join(racer.thread, NULL);
	is(racer.fired, 1, "the hook ran once, inside the split");
}

static void reclaim_racer(struct racer *r)
{
	r->result = (long)lv_reclaim_node(r->m, 0, HNR);
}

/* Reclaim scans the frozen lazyfree huge page and passes over it; afterwards it frees it. */
static void test_race_reclaim(void)
{
	struct lv_config cfg = thp_config(1);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_mm *mm = new_mm(m, NULL, 0);
	uint64_t addr = map_huge(mm, 1, LV_MADV_HUGEPAGE), scanned;
	struct lv_folio *f = fault_huge(mm, addr, 1);

	lv_madvise(mm, addr, HSIZE, LV_MADV_FREE);
	scanned = nstat(m, LV_PGSCAN);
	racer = (struct racer){ .m = m };
	race_start(reclaim_racer);
	is(lv_split_folio(f), 0, "split with reclaim running in the frozen window");
	race_end();
	is(racer.result, 0, "reclaim could take nothing while the folio was frozen");
	ok(nstat(m, LV_PGSCAN) >= scanned + HNR, "though it scanned it");
	lv_folio_put(f);
	check_ok(m, "split racing reclaim");
	is(lv_reclaim_node(m, 0, HNR), HNR, "after the split reclaim frees all 512 pages");
	is(lv_mm_rss(mm), 0, "unmapped");
	is(bad_pat(mm, addr, HSIZE, -1), 0, "reads as zeros");
	lv_mm_destroy(mm);
	finish(m, "race reclaim");
}

static void remove_racer(struct racer *r)
{
	r->result = lv_memcg_remove(r->memcg);
}

/* A memcg removal reparents the frozen head; the split follows it to the parent. */
static void test_race_remove(void)
{
	struct lv_config cfg = thp_config(1);
	size_t size = FNR * PAGE;
	unsigned char *buf = malloc(size);
	struct lv_machine *m;
	struct lv_memcg *p, *c;
	struct lv_file *file;
	struct lv_folio *f;
	unsigned long bad = 0;
	int fd = temp_file(size, 4);

	cfg.file_folio_order = FORDER;
	m = new_machine(&cfg);
	p = new_memcg(m, NULL, "p");
	c = new_memcg(m, p, "c");
	file = lv_file_open(m, fd, size);
	lv_file_read(file, c, buf, size, 0);
	f = file_folio(file, 0);
	racer = (struct racer){ .m = m, .memcg = c };
	race_start(remove_racer);
	is(lv_split_folio(f), 0, "split with the folio's memcg removed in the frozen window");
	race_end();
	is(racer.result, 0, "the removal succeeded (it reparented the frozen head)");
	for (unsigned long i = 0; i < FNR; i++)
		bad += lv_folio_memcg(f + i) != p;
	is(bad, 0, "every page is bound to the parent");
	is(lv_memcg_stat(p, LV_NR_INACTIVE_FILE), FNR, "counted on the parent's list");
	is(lv_memcg_usage(p), FNR, "charged to the parent");
	is(lv_file_read(file, p, buf, size, 0), (long)size, "read it all");
	is(bad_bytes(buf, size, 0, size, 4), 0, "every byte kept");
	lv_folio_put(f);
	check_ok(m, "split racing removal");
	lv_file_close(file);
	close(fd);
	free(buf);
	is(lv_memcg_remove(p), 0, "parent removable");
	finish(m, "race remove");
}

static void move_racer(struct racer *r)
{
	uint64_t addrs[3] = { r->addr + PAGE, r->addr + 200 * PAGE, r->addr + 511 * PAGE };
	int nodes[3] = { 1, 1, 1 };

	r->result = lv_move_pages(r->mm, 3, addrs, nodes, r->status);
}

/* lv_move_pages waits for the split's page_table_lock, then moves the pages it finds. */
static void test_race_move_pages(void)
{
	struct lv_config cfg = thp_config(2);
	struct lv_machine *m;
	struct lv_mm *mm;
	struct lv_folio *f;
	uint64_t addr;

	cfg.lock_backend = LV_BACKEND_FUTEX; /* the hook watches its lock word */
	m = new_machine(&cfg);
	mm = new_mm(m, NULL, 0);
	addr = map_huge(mm, 1, LV_MADV_HUGEPAGE);
	f = fault_huge(mm, addr, 6);
	/* Pages other than the head, which our reference would keep from migrating. */
	racer = (struct racer){ .m = m, .mm = mm, .addr = addr, .wait_on = &mm->page_table_lock };
	race_start(move_racer);
	is(lv_split_folio(f), 0, "split while lv_move_pages waits for the page table lock");
	race_end();
	is(racer.result, 0, "lv_move_pages returned 0");
	ok(racer.status[0] == 1 && racer.status[1] == 1 && racer.status[2] == 1,
	   "it moved the three split pages to node 1 (%d %d %d)", racer.status[0], racer.status[1],
	   racer.status[2]);
	is(lv_node_stat(m, 1, LV_NR_INACTIVE_ANON), 3, "three pages on node 1");
	is(lv_node_stat(m, 0, LV_NR_INACTIVE_ANON), HNR - 3, "the rest on node 0");
	is(bad_pat(mm, addr, HSIZE, 6), 0, "every byte kept");
	lv_folio_put(f);
	check_ok(m, "split racing lv_move_pages");
	lv_mm_destroy(mm);
	finish(m, "race move_pages");
}

static void file_migrate_racer(struct racer *r)
{
	r->result = lv_file_migrate_pages(r->file, 1, 1);
}

/* Page cache migration finds the frozen folio busy and passes over it. */
static void test_race_file_migrate(void)
{
	struct lv_config cfg = thp_config(2);
	size_t size = FNR * PAGE;
	unsigned char *buf = malloc(size);
	struct lv_machine *m;
	struct lv_file *file;
	struct lv_folio *f;
	int fd = temp_file(size, 8);

	cfg.file_folio_order = FORDER;
	m = new_machine(&cfg);
	file = lv_file_open(m, fd, size);
	lv_file_read(file, NULL, buf, size, 0);
	f = file_folio(file, 0);
	if (folio_nid(f) != 0) {
		/* The page cache allocates on the CPU slot's node: move it home first. */
		lv_folio_put(f);
		lv_file_migrate_pages(file, 2, 0);
		f = file_folio(file, 0);
	}
	racer = (struct racer){ .m = m, .file = file };
	race_start(file_migrate_racer);
	is(lv_split_folio(f), 0, "split with the file's migration in the frozen window");
	race_end();
	is(racer.result, 0, "the migration reports no failure");
	is(lv_node_stat(m, 1, LV_NR_FILE_PAGES), 0, "and moved nothing: the folio was frozen");
	lv_folio_put(f);
	is(lv_file_migrate_pages(file, 1, 1), 0, "migrate again after the split");
	is(lv_node_stat(m, 1, LV_NR_FILE_PAGES), FNR, "all 64 pages moved");
	is(lv_file_read(file, NULL, buf, size, 0), (long)size, "read it all");
	is(bad_bytes(buf, size, 0, size, 8), 0, "every byte kept");
	check_ok(m, "split racing page cache migration");
	lv_file_close(file);
	close(fd);
	free(buf);
	finish(m, "race file migrate");
}
#endif

int main(void)
{
	test_madvise_flags();
	test_huge_fault();
	test_modes();
	test_fallback();
	test_defrag_compacts();
	test_split_anon();
	test_split_file();
	test_split_refused();
	test_partial_ops();
	test_truncate();
	test_reclaim();
	test_migrate();
	test_check();
	test_fault_cost();
#ifdef LV_DEBUG
	test_race_reclaim();
	test_race_remove();
	test_race_move_pages();
	test_race_file_migrate();
#endif
	return done_testing();
}
