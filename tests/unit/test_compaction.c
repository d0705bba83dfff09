// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Compaction (compaction.c): a fragmented node of anon, page cache and held folios compacts
 * into a free order-9 block and, fully, moves every movable folio out of the low pageblocks,
 * with every byte kept and the counters right, in both lock designs and with memcg disabled;
 * the migrate scanner's races made to happen by construction with its test hook (a charge
 * move before and after the pin, a memcg removal between the lookup and the lock, an owner
 * letting go while the scanner holds its reference, accepted and rejected); pinned and
 * unevictable folios per compact_unevictable_allowed; lv_compact_memcg()'s filter; large
 * page cache folios, and the fallback when no block of their order can be had; the first
 * version's order self-deadlocking (in a child); kcompactd woken by a failed allocation,
 * FOLIO_ALLOC_LIGHT and FOLIO_ALLOC_COMPACT in the allocator, proactive compaction;
 * compact_scan_putback(); too_many_isolated(); a second node; the fragmentation index; bad
 * input.
 *
 * Two layouts. fragment() fills node 0 with anon pages, page cache and held folios and
 * unmaps every other anon page: free memory everywhere, in no block larger than a page.
 * layout_low() fills every pageblock but the lowest with folios the test holds, so that the
 * folios a race test looks at come from block 0, below the free scanner's start, and opens
 * the upper half of the top block as the only place they can move to; it relies on the
 * buddy allocator handing out the highest free block first, and checks that it did.
 *
 * Internal headers: the scanner's hook, the allocator's flags, compact_scan_putback(),
 * too_many_isolated(), the buddy allocator's counts, frame numbers, and the lookups of the
 * folio backing a page (to tell whether it moved) exist only inside the library.
 */
#include "internal.h"

#include "lvtest.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>

#define PAGE	  LV_PAGE_SIZE
#define BLOCK	  (1ul << LV_MAX_ORDER)
#define NR_BLOCKS (SMALL_PAGES / BLOCK)

static uint64_t nst(struct lv_machine *m, int nid, enum lv_stat_item item)
{
	return lv_node_stat(m, nid, item);
}

static unsigned long pfn_of(const struct lv_folio *f)
{
	return (unsigned long)(f - f->pgdat->memmap);
}

/* free_small - free pages of node @nid outside free blocks of LV_MAX_ORDER (buddy only). */
static unsigned long free_small(struct lv_machine *m, int nid)
{
	struct contig_page_info info;

	fill_contig_page_info(m->nodes[nid], LV_MAX_ORDER, &info);
	return info.free_pages - (info.free_blocks_suitable << LV_MAX_ORDER);
}

static unsigned long free_blocks(struct lv_machine *m, int nid)
{
	struct contig_page_info info;

	fill_contig_page_info(m->nodes[nid], LV_MAX_ORDER, &info);
	return info.free_blocks_suitable;
}

/* file_folio - the page cache folio holding page @index of @file (no reference kept). */
static struct lv_folio *file_folio(struct lv_file *file, unsigned long index)
{
	struct lv_folio *f = NULL;
	unsigned long start = index;

	if (filemap_get_folios(file, &start, &f, 1) != 1)
		return NULL;
	lv_folio_put(f);
	return f->index <= index && index < f->index + (unsigned long)folio_nr_pages(f) ? f : NULL;
}

/* anon_folio - the folio mapped at @addr of @mm (no reference kept), or NULL. */
static struct lv_folio *anon_folio(struct lv_mm *mm, uint64_t addr)
{
	int err;
	struct lv_folio *f = anon_folio_get(mm, addr / PAGE, &err);

	if (f)
		lv_folio_put(f);
	return f;
}

/* file_bad - bytes of [@off, @off + @len) of @f unlike temp_file(seed 7); -1 if the read failed. */
static long file_bad(struct lv_file *f, struct lv_memcg *memcg, uint64_t off, size_t len,
		     uint64_t real)
{
	unsigned char *buf = malloc(len);
	long bad;

	if (!buf)
		BAIL_OUT("out of memory");
	if (lv_file_read(f, memcg, buf, len, off) != (long)len) {
		free(buf);
		return -1;
	}
	bad = (long)bad_bytes(buf, len, off, real, 7);
	free(buf);
	return bad;
}

/* fill_data / data_bad - a pattern in a held folio's frame, and the bytes unlike it. */
static void fill_data(struct lv_folio *f, unsigned int seed)
{
	unsigned char *d = lv_folio_data(f);

	for (size_t i = 0; d && i < PAGE; i++)
		d[i] = pat(i, seed);
}

static size_t data_bad(struct lv_folio *f, unsigned int seed)
{
	unsigned char *d = lv_folio_data(f);
	size_t bad = 0;

	for (size_t i = 0; d && i < PAGE; i++)
		bad += d[i] != pat(i, seed);
	return bad;
}

/* ---- bad input and the fragmentation index ----------------------------------------------------
 */

static void test_bad_input(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);

	is(lv_compact_node(NULL, 0, 9), -EINVAL, "bad input: NULL machine");
	is(lv_compact_node(m, 1, 9), -EINVAL, "bad input: node 1 of 1");
	is(lv_compact_node(m, -1, 9), -EINVAL, "bad input: node -1");
	is(lv_compact_node(m, 0, -2), -EINVAL, "bad input: order -2");
	is(lv_compact_node(m, 0, LV_MAX_ORDER + 1), -EINVAL, "bad input: order LV_MAX_ORDER + 1");
	is(lv_compact_memcg(NULL, 0), -EINVAL, "bad input: lv_compact_memcg(NULL)");
	is(lv_compact_memcg(lv_memcg_root(m), 10), -EINVAL, "bad input: lv_compact_memcg order 10");
	is(lv_compact_memcg(lv_memcg_root(m), -2), -EINVAL, "bad input: lv_compact_memcg order -2");
	is(lv_fragmentation_index(NULL, 0, 0), -EINVAL, "bad input: fragmentation index, NULL");
	is(lv_fragmentation_index(m, 1, 0), -EINVAL, "bad input: fragmentation index, node 1");
	is(lv_fragmentation_index(m, 0, -1), -EINVAL, "bad input: fragmentation index, order -1");
	is(lv_fragmentation_index(m, 0, 10), -EINVAL, "bad input: fragmentation index, order 10");
	is(nst(m, 0, LV_COMPACT_MIGRATE_SCANNED) + nst(m, 0, LV_COMPACT_FREE_SCANNED) +
		   nst(m, 0, LV_COMPACT_SUCCESS) + nst(m, 0, LV_COMPACT_FAIL),
	   0, "bad input: nothing scanned or counted");
	/* A free block of the order exists: nothing to do, nothing counted. */
	is(lv_compact_node(m, 0, 9), 1, "fresh node: a free order-9 block exists: 1");
	is(lv_compact_node(m, 0, 0), 1, "fresh node: order 0: 1");
	is(nst(m, 0, LV_COMPACT_SUCCESS) + nst(m, 0, LV_COMPACT_MIGRATE_SCANNED), 0,
	   "fresh node: no pass ran");
	is(lv_compact_node(m, 0, -1), 0, "fresh node: a full pass returns 0");
	is(nst(m, 0, LV_COMPACT_SUCCESS) + nst(m, 0, LV_COMPACT_FAIL), 0,
	   "fresh node: a full pass counts neither success nor fail");
	is(nst(m, 0, LV_COMPACT_ISOLATED), 0, "fresh node: nothing isolated");
	is(lv_compact_memcg(lv_memcg_root(m), -1), 0, "fresh node: lv_compact_memcg(root, -1) 0");
	finish(m, "bad input");
}

static void test_fragmentation_index(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_folio *fs[SMALL_PAGES];
	unsigned int n = 0;

	is(lv_fragmentation_index(m, 0, 9), -1000, "fragindex: a fresh node has order-9 blocks");
	is(lv_fragmentation_index(m, 0, 0), -1000, "fragindex: ... and order-0 ones");
	/* Every frame allocated: no free block at all. */
	while (n < SMALL_PAGES && (fs[n] = lv_folio_alloc(m, 0, 0, NULL, 0)))
		n++;
	is(n, SMALL_PAGES, "fragindex: all %lu frames allocated", SMALL_PAGES);
	is(lv_fragmentation_index(m, 0, 9), 0, "fragindex: no free block: 0");
	/* Every other frame free again: plenty of memory, none of it in large blocks. */
	for (unsigned int i = 0; i < n; i += 2)
		lv_folio_put(fs[i]);
	lv_compact_node(m, 0, 9); /* drains the per-CPU lists; nothing here can move */
	{
		int idx = lv_fragmentation_index(m, 0, 9);

		ok(idx > 900 && idx <= 1000,
		   "fragindex: every other frame free: %d (fragmentation)", idx);
	}
	is(nst(m, 0, LV_COMPACT_FAIL), 1, "fragindex: the pass over held folios failed");
	is(nst(m, 0, LV_COMPACT_ISOLATED), 0, "fragindex: ... isolating nothing (held: pinned)");
	for (unsigned int i = 1; i < n; i += 2)
		lv_folio_put(fs[i]);
	finish(m, "fragmentation index");
}

/* ---- a fragmented node ------------------------------------------------------------------------
 */

#define FRAG_CHUNKS	56
#define FRAG_CHUNK_ANON 64 /* anon pages written per chunk */
#define FRAG_CHUNK_FILE 4  /* page cache pages read per chunk */
#define FRAG_NR_PINNED	7  /* held folios, all in the first chunk: one pageblock */
#define FRAG_ANON	(FRAG_CHUNKS * FRAG_CHUNK_ANON)
#define FRAG_FILE_PAGES (FRAG_CHUNKS * FRAG_CHUNK_FILE)
#define FRAG_FILE_BYTES (FRAG_FILE_PAGES * PAGE - 100)

struct frag {
	struct lv_machine *m;
	struct lv_memcg *memcg; /* NULL with memcg disabled */
	struct lv_mm *mm;
	struct lv_file *file;
	int fd;
	uint64_t addr;
	struct lv_folio *pinned[FRAG_NR_PINNED]; /* allocated, on the LRU, held by the test */
};

/*
 * fragment - interleave anon pages, page cache and held folios over almost all of node 0, then
 * unmap every other anon page: about half the node free, in single frames.
 */
static void fragment(struct frag *fr, struct lv_machine *m)
{
	bool memcg = !lv_machine_config(m)->memcg_disabled;

	fr->m = m;
	fr->memcg = memcg ? new_memcg(m, NULL, "frag") : NULL;
	fr->mm = new_mm(m, fr->memcg, 0);
	fr->addr = map_or_bail(fr->mm, FRAG_ANON * PAGE);
	fr->fd = temp_file(FRAG_FILE_BYTES, 7);
	fr->file = lv_file_open(m, fr->fd, FRAG_FILE_BYTES);
	if (!fr->file)
		BAIL_OUT("fragment: lv_file_open failed");
	for (unsigned int c = 0; c < FRAG_CHUNKS; c++) {
		uint64_t a = fr->addr + (uint64_t)c * FRAG_CHUNK_ANON * PAGE;

		if (write_pat(fr->mm, a, FRAG_CHUNK_ANON * PAGE, 3))
			BAIL_OUT("fragment: write failed");
		if (file_bad(fr->file, fr->memcg, (uint64_t)c * FRAG_CHUNK_FILE * PAGE,
			     FRAG_CHUNK_FILE * PAGE - (c == FRAG_CHUNKS - 1 ? 100 : 0),
			     FRAG_FILE_BYTES))
			BAIL_OUT("fragment: read failed");
		for (unsigned int i = 0; c == 0 && i < FRAG_NR_PINNED; i++) {
			struct lv_folio *f = alloc_or_bail(m, 0, 0, fr->memcg, 0);

			fill_data(f, i);
			lv_folio_add_lru(f);
			fr->pinned[i] = f;
		}
	}
	for (unsigned int i = 1; i < FRAG_ANON; i += 2)
		if (lv_madvise(fr->mm, fr->addr + (uint64_t)i * PAGE, PAGE, LV_MADV_DONTNEED))
			BAIL_OUT("fragment: DONTNEED failed");
	lv_lru_add_drain_all(m);
}

/* frag_bad - bytes of the scenario unlike what it wrote; 0 when all is intact. */
static long frag_bad(struct frag *fr)
{
	long bad = 0;

	for (unsigned int i = 0; i < FRAG_ANON; i += 2)
		bad += bad_pat(fr->mm, fr->addr + (uint64_t)i * PAGE, PAGE, 3);
	bad += file_bad(fr->file, fr->memcg, 0, FRAG_FILE_BYTES, FRAG_FILE_BYTES);
	for (unsigned int c = 0; c < FRAG_NR_PINNED; c++)
		bad += (long)data_bad(fr->pinned[c], c);
	return bad;
}

static void frag_release(struct frag *fr, const char *what)
{
	for (unsigned int c = 0; c < FRAG_NR_PINNED; c++)
		lv_folio_put(fr->pinned[c]);
	lv_mm_destroy(fr->mm);
	lv_file_close(fr->file);
	close(fr->fd);
	lv_lru_add_drain_all(fr->m);
	if (fr->memcg)
		is(lv_memcg_remove(fr->memcg), 0, "%s: memcg removed", what);
	finish(fr->m, what);
}

/* is_movable - a folio compaction may move: an LRU folio with an owner. */
static bool is_movable(struct lv_folio *f)
{
	return folio_test(f, PG_head) && folio_test_lru(f) &&
	       (folio_anon_mm(f) || folio_file_mapping(f));
}

/*
 * lowest_movable_block - the lowest pageblock of node 0 holding a movable folio; *@held_below
 * counts the blocks below it that are not wholly free (a held folio is in each, or it fails).
 */
static unsigned long lowest_movable_block(struct lv_machine *m, unsigned long *not_free_below)
{
	struct pglist_data *pgdat = m->nodes[0];
	unsigned long b;

	*not_free_below = 0;
	for (b = 0; b < pgdat->nr_pages / BLOCK; b++) {
		bool movable = false, free = false;

		for (unsigned long pfn = b * BLOCK; pfn < (b + 1) * BLOCK; pfn++)
			movable |= is_movable(&pgdat->memmap[pfn]);
		if (movable)
			break;
		free = folio_test(&pgdat->memmap[b * BLOCK], PG_buddy) &&
		       folio_order(&pgdat->memmap[b * BLOCK]) == LV_MAX_ORDER;
		*not_free_below += !free;
	}
	return b;
}

static void test_fragmented(enum lv_lock_design design, bool memcg_disabled)
{
	const char *d = memcg_disabled		 ? "memcg disabled"
			: design == LV_LOCK_NODE ? "node lock"
						 : "lruvec lock";
	struct lv_config cfg = small_config();
	uint64_t usage, files, rss, succ, fail, isolated, migrated, mscan, fscan;
	unsigned long below, not_free;
	struct frag fr;

	cfg.lock_design = design;
	cfg.memcg_disabled = memcg_disabled;
	fragment(&fr, new_machine(&cfg));
	isnt(lv_fragmentation_index(fr.m, 0, 9), -1000, "%s: fragmented: no free order-9 block", d);
	ok(nst(fr.m, 0, LV_NR_FREE) > 1500, "%s: fragmented: %llu pages free", d,
	   (unsigned long long)nst(fr.m, 0, LV_NR_FREE));
	is(frag_bad(&fr), 0, "%s: fragmented: data written", d);
	check_ok(fr.m, "fragmented");
	usage = fr.memcg ? lv_memcg_usage(fr.memcg) : 0;
	files = nst(fr.m, 0, LV_NR_FILE_PAGES);
	rss = lv_mm_rss(fr.mm);

	is(lv_compact_node(fr.m, 0, 9), 1, "%s: compaction for order 9 returns 1", d);
	is(lv_fragmentation_index(fr.m, 0, 9), -1000, "%s: ... and a free order-9 block exists", d);
	succ = nst(fr.m, 0, LV_COMPACT_SUCCESS);
	fail = nst(fr.m, 0, LV_COMPACT_FAIL);
	isolated = nst(fr.m, 0, LV_COMPACT_ISOLATED);
	migrated = nst(fr.m, 0, LV_PGMIGRATE_SUCCESS);
	mscan = nst(fr.m, 0, LV_COMPACT_MIGRATE_SCANNED);
	fscan = nst(fr.m, 0, LV_COMPACT_FREE_SCANNED);
	is(succ, 1, "%s: compact_success 1", d);
	is(fail, 0, "%s: compact_fail 0", d);
	is(nst(fr.m, 0, LV_COMPACT_STALL), 0, "%s: no stall (not an allocation)", d);
	ok(migrated > 0, "%s: pgmigrate_success %llu", d, (unsigned long long)migrated);
	ok(isolated >= migrated, "%s: compact_isolated %llu >= migrated", d,
	   (unsigned long long)isolated);
	ok(mscan >= BLOCK && mscan <= SMALL_PAGES, "%s: compact_migrate_scanned %llu", d,
	   (unsigned long long)mscan);
	ok(fscan >= BLOCK && fscan % BLOCK == 0 && mscan + fscan <= SMALL_PAGES + BLOCK,
	   "%s: compact_free_scanned %llu, in pageblocks, never past the migrate scanner", d,
	   (unsigned long long)fscan);
	is(nst(fr.m, 0, LV_PGMIGRATE_FAIL), 0, "%s: pgmigrate_fail 0", d);
	is(frag_bad(&fr), 0, "%s: every byte kept", d);
	if (fr.memcg)
		is(lv_memcg_usage(fr.memcg), usage, "%s: usage unchanged", d);
	is(nst(fr.m, 0, LV_NR_FILE_PAGES), files, "%s: page cache unchanged", d);
	is(lv_mm_rss(fr.mm), rss, "%s: rss unchanged", d);
	for (unsigned int c = 0; c < FRAG_NR_PINNED; c++)
		if (lv_folio_ref_count(fr.pinned[c]) != 1 ||
		    !lv_folio_test(fr.pinned[c], LV_PG_LRU))
			fail++;
	is(fail, 0, "%s: the held folios are where they were, on their LRU, one reference", d);
	check_ok(fr.m, "compacted for order 9");

	/* A full pass moves every movable folio out of the pageblocks below where it ends. */
	is(lv_compact_node(fr.m, 0, -1), 0, "%s: a full pass returns 0", d);
	is(nst(fr.m, 0, LV_COMPACT_SUCCESS), succ, "%s: ... and counts no success", d);
	is(nst(fr.m, 0, LV_COMPACT_FAIL), 0, "%s: ... and no fail", d);
	below = lowest_movable_block(fr.m, &not_free);
	ok(below >= 2, "%s: no movable folio below pageblock %lu", d, below);
	ok(not_free <= 1, "%s: blocks below it are free but %lu (the held folios')", d, not_free);
	/* The block the scanners met in, the free scanner's last, the held folios' block. */
	ok(free_small(fr.m, 0) <= 3 * BLOCK, "%s: %lu free pages left outside free order-9 blocks",
	   d, free_small(fr.m, 0));
	ok(free_blocks(fr.m, 0) >= 2, "%s: %lu free order-9 blocks", d, free_blocks(fr.m, 0));
	is(frag_bad(&fr), 0, "%s: every byte kept after the full pass", d);
	check_ok(fr.m, "full pass");
	frag_release(&fr, d);
}

/* ---- a node laid out for the race tests --------------------------------------------------------
 */

struct layout {
	struct lv_machine *m;
	/* [0]: the top block's lower half, [1] its upper half, [2..7]: the blocks between */
	struct lv_folio *fill[2 + NR_BLOCKS - 2];
};

/*
 * layout_low - fill every pageblock of node 0 but block 0 with folios the test holds (on no
 * LRU: compaction never looks at them), so that what is allocated next comes from block 0.
 */
static void layout_low(struct layout *l, struct lv_machine *m)
{
	unsigned long lowest = SMALL_PAGES;

	l->m = m;
	l->fill[0] = alloc_or_bail(m, 0, LV_MAX_ORDER - 1, NULL, 0);
	l->fill[1] = alloc_or_bail(m, 0, LV_MAX_ORDER - 1, NULL, 0);
	for (unsigned int i = 2; i < NR_BLOCKS; i++)
		l->fill[i] = alloc_or_bail(m, 0, LV_MAX_ORDER, NULL, 0);
	for (unsigned int i = 0; i < NR_BLOCKS; i++)
		if (pfn_of(l->fill[i]) < lowest)
			lowest = pfn_of(l->fill[i]);
	if (lowest != BLOCK || pfn_of(l->fill[1]) != SMALL_PAGES - BLOCK / 2)
		BAIL_OUT("layout: the allocator did not hand out the highest blocks first");
}

/* layout_open_top - free the top block's upper half: the one place a folio can move to. */
static void layout_open_top(struct layout *l)
{
	lv_folio_put(l->fill[1]);
	l->fill[1] = NULL;
}

static void layout_release(struct layout *l)
{
	for (unsigned int i = 0; i < NR_BLOCKS; i++)
		if (l->fill[i])
			lv_folio_put(l->fill[i]);
}

/* in_block0 / moved_up - where a folio is: where it was made, or where it can move to. */
static bool in_block0(const struct lv_folio *f)
{
	return f && pfn_of(f) < BLOCK;
}

static bool moved_up(const struct lv_folio *f)
{
	return f && pfn_of(f) >= SMALL_PAGES - BLOCK / 2;
}

/* ---- the test hook ------------------------------------------------------------------------------
 */

enum hook_action { ACT_MOVE, ACT_REMOVE, ACT_PUT, ACT_DONTNEED };

static struct hook_state {
	struct lv_folio *target; /* the folio to act on */
	enum compact_hook_step step;
	enum hook_action action;
	struct lv_memcg *memcg; /* ACT_MOVE: to; ACT_REMOVE: the one removed */
	struct lv_mm *mm;	/* ACT_DONTNEED */
	uint64_t addr;
	int fired, rc;
	int steps[4]; /* how often each step was reached for the target */
} hs;

static void hook(struct lv_folio *folio, enum compact_hook_step step)
{
	if (folio != hs.target)
		return;
	hs.steps[step]++;
	if (step != hs.step || hs.fired)
		return;
	hs.fired = 1;
	switch (hs.action) {
	case ACT_MOVE:
		hs.rc = lv_folio_move_memcg(folio, hs.memcg);
		break;
	case ACT_REMOVE:
		hs.rc = lv_memcg_remove(hs.memcg);
		break;
	case ACT_PUT:
		lv_folio_put(
			folio); /* the owner lets go: the scanner's reference may be the last */
		break;
	case ACT_DONTNEED:
		hs.rc = lv_madvise(hs.mm, hs.addr, PAGE, LV_MADV_DONTNEED);
		break;
	}
}

static void hook_arm(struct lv_folio *target, enum compact_hook_step step, enum hook_action act)
{
	hs = (struct hook_state){ .target = target, .step = step, .action = act, .rc = INT_MIN };
	compact_isolate_hook = hook;
}

static void hook_disarm(void)
{
	compact_isolate_hook = NULL;
}

#define RACE_PAGES 8

/* struct race - a machine whose block 0 holds a file's pages charged to a, the top open. */
struct race {
	struct lv_machine *m;
	struct lv_memcg *a, *b;
	struct layout l;
	struct lv_file *file;
	int fd;
};

static void race_setup(struct race *r, enum lv_lock_design design, bool unevictable_allowed)
{
	struct lv_config cfg = small_config();

	cfg.lock_design = design;
	cfg.compact_unevictable_allowed = unevictable_allowed;
	r->m = new_machine(&cfg);
	r->a = new_memcg(r->m, NULL, "a");
	r->b = new_memcg(r->m, NULL, "b");
	layout_low(&r->l, r->m);
	r->fd = temp_file(RACE_PAGES * PAGE, 7);
	r->file = lv_file_open(r->m, r->fd, RACE_PAGES * PAGE);
	if (!r->file || file_bad(r->file, r->a, 0, RACE_PAGES * PAGE, RACE_PAGES * PAGE))
		BAIL_OUT("race: the file could not be read");
	lv_lru_add_drain(r->m);
	for (unsigned long i = 0; i < RACE_PAGES; i++)
		if (!in_block0(file_folio(r->file, i)))
			BAIL_OUT("race: page %lu is not in block 0", i);
	layout_open_top(&r->l);
}

static void race_finish(struct race *r, const char *what)
{
	lv_file_close(r->file);
	close(r->fd);
	layout_release(&r->l);
	lv_lru_add_drain_all(r->m);
	if (r->a)
		is(lv_memcg_remove(r->a), 0, "%s: a removed", what);
	is(lv_memcg_remove(r->b), 0, "%s: b removed", what);
	finish(r->m, what);
}

/*
 * test_memcg_races - the migrate scanner against the two ways a folio's memcg changes, each
 * made to happen at one step of the scanner: a charge move just before its pin (the move
 * wins, the scanner passes the folio over), just after (the move fails with -EBUSY), and a
 * removal reparenting the folio between the scanner's lookup and its lock (the re-check sends
 * it to the parent's lruvec). Never does the scanner isolate a folio whose memcg is changing.
 */
static void test_memcg_races(enum lv_lock_design design)
{
	const char *d = design == LV_LOCK_NODE ? "node lock" : "lruvec lock";
	struct lv_folio *f, *g;
	uint64_t retries;
	struct race r;

	/* 1. A charge move just before the pin. */
	race_setup(&r, design, true);
	f = file_folio(r.file, 0);
	hook_arm(f, COMPACT_HOOK_CHECKED, ACT_MOVE);
	hs.memcg = r.b;
	lv_compact_node(r.m, 0, -1);
	hook_disarm();
	is(hs.fired, 1, "%s: move before the pin: the hook ran", d);
	is(hs.rc, 0, "%s: move before the pin: the move succeeds", d);
	is(hs.steps[COMPACT_HOOK_PINNED], 0, "%s: ... the scanner passed the folio over", d);
	ok(file_folio(r.file, 0) == f && in_block0(f), "%s: ... leaving it where it was", d);
	ok(lv_folio_memcg(f) == r.b, "%s: ... bound to b", d);
	ok(moved_up(file_folio(r.file, 1)), "%s: ... while the other pages moved", d);
	lv_lru_add_drain(r.m);
	is(lv_memcg_usage(r.b), 1, "%s: move before the pin: b is charged the page", d);
	is(file_bad(r.file, r.a, 0, RACE_PAGES * PAGE, RACE_PAGES * PAGE), 0, "%s: data intact", d);
	check_ok(r.m, "move before the pin");
	race_finish(&r, "move before the pin");

	/* 2. A charge move just after the pin. */
	race_setup(&r, design, true);
	f = file_folio(r.file, 0);
	hook_arm(f, COMPACT_HOOK_PINNED, ACT_MOVE);
	hs.memcg = r.b;
	lv_compact_node(r.m, 0, -1);
	hook_disarm();
	is(hs.fired, 1, "%s: move after the pin: the hook ran", d);
	is(hs.rc, -EBUSY, "%s: move after the pin: the move fails with -EBUSY", d);
	g = file_folio(r.file, 0);
	ok(moved_up(g), "%s: ... and the scanner moved the page", d);
	ok(g && lv_folio_memcg(g) == r.a, "%s: ... keeping it in a", d);
	is(lv_memcg_usage(r.a), RACE_PAGES, "%s: move after the pin: a keeps its charge", d);
	is(lv_memcg_usage(r.b), 0, "%s: ... b has none", d);
	is(file_bad(r.file, r.a, 0, RACE_PAGES * PAGE, RACE_PAGES * PAGE), 0, "%s: data intact", d);
	check_ok(r.m, "move after the pin");
	race_finish(&r, "move after the pin");

	/* 3. A removal between the scanner's lookup and its lock. */
	race_setup(&r, design, true);
	f = file_folio(r.file, 0);
	retries = nst(r.m, 0, LV_LOCK_RETRIES);
	hook_arm(f, COMPACT_HOOK_LOCK, ACT_REMOVE);
	hs.memcg = r.a;
	lv_compact_node(r.m, 0, -1);
	hook_disarm();
	is(hs.fired, 1, "%s: removal before the lock: the hook ran", d);
	is(hs.rc, 0, "%s: removal before the lock: the removal succeeds", d);
	is(hs.steps[COMPACT_HOOK_LOCK], 2, "%s: ... the scanner looked the folio up twice", d);
	is(nst(r.m, 0, LV_LOCK_RETRIES) - retries, 1, "%s: ... after one failed re-check", d);
	g = file_folio(r.file, 0);
	ok(moved_up(g), "%s: ... and moved it from the parent's lruvec", d);
	ok(g && lv_folio_memcg(g) == lv_memcg_root(r.m), "%s: ... bound to the parent", d);
	is(file_bad(r.file, NULL, 0, RACE_PAGES * PAGE, RACE_PAGES * PAGE), 0, "%s: data intact",
	   d);
	check_ok(r.m, "removal before the lock");
	r.a = NULL;
	race_finish(&r, "removal before the lock");
}

/*
 * test_freed_while_held - the owner lets go of a folio while the scanner holds its reference:
 * the scanner's reference is then the last, and the folio is freed exactly once, by
 * compaction (it isolated the folio and finds nobody else holds it), or by the release path
 * (it rejected the folio: an unevictable one with compact_unevictable_allowed off, whose
 * final put comes after the scanner unlocked). Held folios, an anon page unmapped meanwhile.
 */
static void test_freed_while_held(void)
{
	for (int k = 0; k < 3; k++) {
		const char *d = k == 0	 ? "held folio, isolated"
				: k == 1 ? "held unevictable folio, rejected"
					 : "anon page, unmapped";
		struct lv_folio *f, *other;
		struct lv_mm *mm = NULL;
		uint64_t charged, addr = 0;
		struct race r;

		race_setup(&r, LV_LOCK_LRUVEC, k != 1);
		if (k < 2) {
			f = alloc_or_bail(r.m, 0, 0, r.b, 0);
			if (k == 1)
				lv_folio_set_state(f, LV_PG_MLOCKED, true);
			lv_folio_add_lru(f);
		} else {
			mm = new_mm(r.m, r.b, 0);
			addr = map_or_bail(mm, PAGE);
			write_pat(mm, addr, PAGE, 5);
			f = anon_folio(mm, addr);
		}
		lv_lru_add_drain(r.m);
		ok(in_block0(f) && lv_folio_test(f, LV_PG_LRU), "%s: in block 0, on its LRU", d);
		is(nst(r.m, 0, LV_NR_UNEVICTABLE), k == 1, "%s: unevictable count %d", d, k == 1);
		charged = nst(r.m, 0, LV_NR_CHARGED);
		/*
		 * The owner's put comes with the lock of the folio before held (the scanner took
		 * the file's pages first), so that a put of the scanner's under it would show;
		 * an unmap takes the mm's lock, so it comes after the checks, with no lock held.
		 */
		hook_arm(f, k < 2 ? COMPACT_HOOK_GOT : COMPACT_HOOK_CHECKED,
			 k < 2 ? ACT_PUT : ACT_DONTNEED);
		hs.mm = mm;
		hs.addr = addr;
		lv_compact_node(r.m, 0, -1);
		hook_disarm();
		is(hs.fired, 1, "%s: the owner let go while the scanner held the folio", d);
		if (k == 2)
			is(hs.rc, 0, "%s: ... unmapped", d);
		is(hs.steps[COMPACT_HOOK_PINNED], k == 1 ? 0 : 1,
		   k == 1 ? "%s: the scanner rejected it" : "%s: the scanner isolated it", d);
		ok(!folio_test(f, PG_head), "%s: its frame is free", d);
		is(nst(r.m, 0, LV_NR_CHARGED), charged - 1, "%s: one page less allocated", d);
		is(lv_memcg_usage(r.b), 0, "%s: b uncharged once", d);
		is(nst(r.m, 0, LV_NR_UNEVICTABLE), 0, "%s: unevictable count 0", d);
		other = file_folio(r.file, 1);
		ok(moved_up(other), "%s: the other folios moved", d);
		check_ok(r.m, d);
		is(lv_bug_count(r.m), 0, "%s: no bug", d);
		if (mm) {
			is(bad_pat(mm, addr, PAGE, -1), 0, "%s: the page reads as zeros", d);
			lv_mm_destroy(mm);
		}
		race_finish(&r, d);
	}
}

/*
 * test_unevictable_and_pinned - an mlocked anon page moves only with
 * compact_unevictable_allowed, staying mlocked and unevictable; a page someone holds a
 * reference on (pinned) never moves, and moves once they let go.
 */
static void test_unevictable_and_pinned(void)
{
	for (int allowed = 0; allowed < 2; allowed++) {
		const char *d = allowed ? "unevictable allowed" : "unevictable not allowed";
		struct lv_mm *mm;
		struct lv_folio *f, *p, *g;
		uint64_t addr;
		struct race r;
		int err;

		race_setup(&r, LV_LOCK_LRUVEC, allowed);
		mm = new_mm(r.m, r.b, 0);
		addr = map_or_bail(mm, 3 * PAGE);
		write_pat(mm, addr, 3 * PAGE, 5);
		lv_lru_add_drain(r.m);
		/* Page 0 mlocked, the only way there is before mlock(2) runs: isolated. */
		f = anon_folio(mm, addr);
		lv_folio_get(f);
		is(lv_folio_isolate_lru(f), 0, "%s: isolate page 0", d);
		is(lv_folio_set_state(f, LV_PG_MLOCKED, true), 0, "%s: mlock it", d);
		is(lv_folio_putback_lru(f), 0, "%s: put it back", d);
		lv_folio_put(f);
		lv_lru_add_drain(r.m);
		is(nst(r.m, 0, LV_NR_UNEVICTABLE), 1, "%s: page 0 unevictable", d);
		/* Page 1 pinned: the test holds a reference. */
		p = anon_folio_get(mm, addr / PAGE + 1, &err);
		lv_compact_node(r.m, 0, -1);
		g = anon_folio(mm, addr);
		if (allowed) {
			ok(moved_up(g) && g != f, "%s: the unevictable page moved", d);
			ok(g && lv_folio_test(g, LV_PG_MLOCKED) &&
				   lv_folio_test(g, LV_PG_UNEVICTABLE),
			   "%s: ... still mlocked and unevictable", d);
		} else {
			ok(g == f && in_block0(g), "%s: the unevictable page stayed", d);
		}
		is(nst(r.m, 0, LV_NR_UNEVICTABLE), 1, "%s: unevictable count 1", d);
		ok(anon_folio(mm, addr + PAGE) == p && in_block0(p), "%s: the pinned page stayed",
		   d);
		ok(moved_up(anon_folio(mm, addr + 2 * PAGE)), "%s: the third page moved", d);
		is(bad_pat(mm, addr, 3 * PAGE, 5), 0, "%s: data intact", d);
		check_ok(r.m, d);
		lv_folio_put(p);
		lv_compact_node(r.m, 0, -1);
		ok(moved_up(anon_folio(mm, addr + PAGE)), "%s: let go of, the pinned page moves",
		   d);
		is(bad_pat(mm, addr, 3 * PAGE, 5), 0, "%s: data intact", d);
		check_ok(r.m, d);
		lv_mm_destroy(mm);
		race_finish(&r, d);
	}
}

/* test_memcg_filter - lv_compact_memcg() isolates only folios charged to its subtree. */
static void test_memcg_filter(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *a = new_memcg(m, NULL, "a"), *b = new_memcg(m, NULL, "b");
	struct lv_memcg *child = new_memcg(m, a, "a/child");
	int fd = temp_file(RACE_PAGES * PAGE, 7);
	struct lv_file *fa = lv_file_open(m, fd, RACE_PAGES * PAGE);
	struct lv_file *fb = lv_file_open(m, fd, RACE_PAGES * PAGE);
	struct lv_folio *b_folio[RACE_PAGES];
	unsigned int moved_a = 0, moved_b = 0;
	struct layout l;

	if (!fa || !fb)
		BAIL_OUT("filter: lv_file_open failed");
	layout_low(&l, m);
	/* Interleaved: a's child's pages and b's side by side in block 0. */
	for (unsigned long i = 0; i < RACE_PAGES; i++)
		if (file_bad(fa, child, i * PAGE, PAGE, RACE_PAGES * PAGE) ||
		    file_bad(fb, b, i * PAGE, PAGE, RACE_PAGES * PAGE))
			BAIL_OUT("filter: read failed");
	lv_lru_add_drain(m);
	for (unsigned long i = 0; i < RACE_PAGES; i++) {
		b_folio[i] = file_folio(fb, i);
		if (!in_block0(file_folio(fa, i)) || !in_block0(b_folio[i]))
			BAIL_OUT("filter: page %lu not in block 0", i);
	}
	layout_open_top(&l);
	is(lv_compact_memcg(a, -1), 0, "filter: lv_compact_memcg(a, -1) returns 0");
	for (unsigned long i = 0; i < RACE_PAGES; i++) {
		moved_a += moved_up(file_folio(fa, i));
		moved_b += file_folio(fb, i) != b_folio[i];
	}
	is(moved_a, RACE_PAGES, "filter: every page of a's subtree moved");
	is(moved_b, 0, "filter: none of b's");
	is(nst(m, 0, LV_COMPACT_ISOLATED), RACE_PAGES, "filter: only a's were isolated");
	is(file_bad(fa, child, 0, RACE_PAGES * PAGE, RACE_PAGES * PAGE), 0, "filter: a intact");
	is(file_bad(fb, b, 0, RACE_PAGES * PAGE, RACE_PAGES * PAGE), 0, "filter: b intact");
	is(lv_compact_memcg(b, -1), 0, "filter: lv_compact_memcg(b, -1) returns 0");
	for (unsigned long i = 0; i < RACE_PAGES; i++)
		moved_b += file_folio(fb, i) != b_folio[i];
	is(moved_b, RACE_PAGES, "filter: then b's moved");
	check_ok(m, "memcg filter");
	lv_file_close(fa);
	lv_file_close(fb);
	close(fd);
	layout_release(&l);
	lv_lru_add_drain_all(m);
	is(lv_memcg_remove(child), 0, "filter: child removed");
	is(lv_memcg_remove(a), 0, "filter: a removed");
	is(lv_memcg_remove(b), 0, "filter: b removed");
	finish(m, "memcg filter");
}

/*
 * test_large_folios - page cache folios of 4 pages move into blocks of their order, split
 * from the larger free block at the top. With only single free frames at the top, one cannot
 * have a target of its order: it is split and its pages move one by one.
 */
static void test_large_folios(void)
{
	for (int holes = 0; holes < 2; holes++) {
		const char *d = holes ? "large folios, single free frames" : "large folios";
		struct lv_config cfg = small_config();
		struct lv_folio *small[BLOCK / 2];
		struct lv_machine *m;
		struct lv_memcg *a;
		struct lv_file *file;
		struct layout l;
		unsigned int moved = 0;
		uint64_t succ, fail;
		int fd;

		cfg.file_folio_order = 2;
		m = new_machine(&cfg);
		a = new_memcg(m, NULL, "a");
		layout_low(&l, m);
		if (holes) {
			/* The top's upper half as single frames, every other one freed below. */
			lv_folio_put(l.fill[1]);
			l.fill[1] = NULL;
			for (unsigned int i = 0; i < BLOCK / 2; i++)
				small[i] = alloc_or_bail(m, 0, 0, NULL, 0);
		}
		fd = temp_file(RACE_PAGES * 4 * PAGE, 7);
		file = lv_file_open(m, fd, RACE_PAGES * 4 * PAGE);
		if (!file || file_bad(file, a, 0, RACE_PAGES * 4 * PAGE, RACE_PAGES * 4 * PAGE))
			BAIL_OUT("%s: read failed", d);
		lv_lru_add_drain(m);
		for (unsigned long i = 0; i < RACE_PAGES * 4; i += 4) {
			struct lv_folio *f = file_folio(file, i);

			if (!f || lv_folio_nr_pages(f) != 4 || !in_block0(f))
				BAIL_OUT("%s: page %lu not in a 4-page folio in block 0", d, i);
		}
		if (holes) {
			for (unsigned int i = 0; i < BLOCK / 2; i += 2)
				lv_folio_put(small[i]);
		} else {
			layout_open_top(&l);
		}
		succ = nst(m, 0, LV_PGMIGRATE_SUCCESS);
		fail = nst(m, 0, LV_PGMIGRATE_FAIL);
		lv_compact_node(m, 0, -1);
		for (unsigned long i = 0; i < RACE_PAGES * 4; i++) {
			struct lv_folio *f = file_folio(file, i);

			moved += f && pfn_of(f) >= SMALL_PAGES - BLOCK / 2;
		}
		if (!holes) {
			is(moved, RACE_PAGES * 4, "%s: every page moved", d);
			is(nst(m, 0, LV_PGMIGRATE_SUCCESS) - succ, RACE_PAGES * 4,
			   "%s: pgmigrate_success %u", d, RACE_PAGES * 4);
		} else {
			/* No target of their order: each folio is split, and its pages move. */
			is(moved, RACE_PAGES * 4, "%s: every page moved, its folio split", d);
			ok(nst(m, 0, LV_THP_SPLIT_PAGE) >= RACE_PAGES, "%s: thp_split_page counted",
			   d);
			is(nst(m, 0, LV_PGMIGRATE_SUCCESS) - succ + nst(m, 0, LV_PGMIGRATE_FAIL) -
				   fail,
			   RACE_PAGES * 4, "%s: each page counted, in success or fail", d);
		}
		is(file_bad(file, a, 0, RACE_PAGES * 4 * PAGE, RACE_PAGES * 4 * PAGE), 0,
		   "%s: data intact", d);
		is(lv_memcg_usage(a), RACE_PAGES * 4, "%s: usage unchanged", d);
		check_ok(m, d);
		lv_file_close(file);
		close(fd);
		if (holes)
			for (unsigned int i = 1; i < BLOCK / 2; i += 2)
				lv_folio_put(small[i]);
		layout_release(&l);
		lv_lru_add_drain_all(m);
		is(lv_memcg_remove(a), 0, "%s: a removed", d);
		finish(m, d);
	}
}

/* ---- who compacts: the allocator and kcompactd --------------------------------------------------
 */

/* wait_for - poll @cond for up to 20 s (sanitizers on two shared cores are slow). */
#define wait_for(cond)                                                                             \
	({                                                                                         \
		double __end = now() + 20;                                                         \
		while (!(cond) && now() < __end)                                                   \
			usleep(2000);                                                              \
		(cond);                                                                            \
	})

#define ANON_FRAG (SMALL_PAGES - BLOCK / 2) /* anon pages written: every pageblock gets some */

/* anon_fragment - fragment() with anon memory only: reclaim can free none of it. */
static void anon_fragment(struct frag *fr, struct lv_machine *m)
{
	fr->m = m;
	fr->memcg = new_memcg(m, NULL, "frag");
	fr->mm = new_mm(m, fr->memcg, 0);
	fr->addr = map_or_bail(fr->mm, ANON_FRAG * PAGE);
	if (write_pat(fr->mm, fr->addr, ANON_FRAG * PAGE, 3))
		BAIL_OUT("anon fragment: write failed");
	for (unsigned int i = 1; i < ANON_FRAG; i += 2)
		lv_madvise(fr->mm, fr->addr + (uint64_t)i * PAGE, PAGE, LV_MADV_DONTNEED);
	lv_lru_add_drain_all(m);
}

static long anon_bad(struct frag *fr)
{
	long bad = 0;

	for (unsigned int i = 0; i < ANON_FRAG; i += 2)
		bad += bad_pat(fr->mm, fr->addr + (uint64_t)i * PAGE, PAGE, 3);
	return bad;
}

static void anon_release(struct frag *fr, const char *what)
{
	lv_mm_destroy(fr->mm);
	lv_lru_add_drain_all(fr->m);
	is(lv_memcg_remove(fr->memcg), 0, "%s: memcg removed", what);
	finish(fr->m, what);
}

/*
 * test_allocator - an order-9 allocation with FOLIO_ALLOC_COMPACT on a fragmented node
 * compacts directly (compact_stall) and gets its block; one with FOLIO_ALLOC_LIGHT fails at
 * once without reclaim or compaction; so does a plain one after reclaim finds nothing to
 * free; and with compaction deferred after a failure, the next attempts skip it.
 */
static void test_allocator(void)
{
	struct lv_config cfg = small_config();
	struct lv_folio *f;
	uint64_t stalls;
	struct frag fr;

	anon_fragment(&fr, new_machine(&cfg));
	isnt(lv_fragmentation_index(fr.m, 0, 9), -1000, "allocator: fragmented");
	stalls = nst(fr.m, 0, LV_ALLOCSTALL);
	f = folio_alloc(fr.m, 0, 9, NULL, FOLIO_ALLOC_LIGHT);
	ok(!f, "allocator: FOLIO_ALLOC_LIGHT fails on a fragmented node");
	is(nst(fr.m, 0, LV_COMPACT_STALL), 0, "allocator: ... without compacting");
	is(nst(fr.m, 0, LV_ALLOCSTALL), stalls, "allocator: ... or reclaiming");
	f = lv_folio_alloc(fr.m, 0, 9, NULL, 0);
	ok(!f && errno == ENOMEM,
	   "allocator: a plain order-9 allocation fails (nothing to reclaim)");
	is(nst(fr.m, 0, LV_COMPACT_STALL), 0, "allocator: ... without compacting");
	f = folio_alloc(fr.m, 0, 9, NULL, FOLIO_ALLOC_COMPACT);
	ok(f != NULL, "allocator: FOLIO_ALLOC_COMPACT gets an order-9 folio");
	is(nst(fr.m, 0, LV_COMPACT_STALL), 1, "allocator: ... after one direct compaction");
	is(nst(fr.m, 0, LV_COMPACT_SUCCESS), 1, "allocator: ... which succeeded");
	is(anon_bad(&fr), 0, "allocator: data intact");
	if (f)
		lv_folio_put(f);
	check_ok(fr.m, "allocator");
	anon_release(&fr, "allocator");
}

/*
 * test_kcompactd - kcompactd makes the block a failed order-9 allocation (or a light one)
 * asked for, and proactive compaction makes them on an idle fragmented node. Waits for the
 * counters with a bound, never for a guessed time.
 */
static void test_kcompactd(void)
{
	for (int k = 0; k < 3; k++) {
		const char *d = k == 0	 ? "kcompactd, failed allocation"
				: k == 1 ? "kcompactd, light allocation"
					 : "proactive compaction";
		struct lv_config cfg = small_config();
		struct lv_folio *f;
		struct frag fr;

		cfg.no_kcompactd = false;
		cfg.compaction_proactiveness = k == 2 ? 100 : 0;
		anon_fragment(&fr, new_machine(&cfg));
		if (k < 2) {
			isnt(lv_fragmentation_index(fr.m, 0, 9), -1000, "%s: fragmented", d);
			is(nst(fr.m, 0, LV_COMPACT_DAEMON_WAKE), 0, "%s: kcompactd idle", d);
			f = k == 0 ? lv_folio_alloc(fr.m, 0, 9, NULL, 0)
				   : folio_alloc(fr.m, 0, 9, NULL, FOLIO_ALLOC_LIGHT);
			ok(!f, "%s: the order-9 allocation fails", d);
		}
		ok(wait_for(nst(fr.m, 0, LV_COMPACT_DAEMON_WAKE) >= 1), "%s: kcompactd woke", d);
		ok(wait_for(lv_fragmentation_index(fr.m, 0, 9) == -1000),
		   "%s: ... and made a free order-9 block", d);
		is(nst(fr.m, 0, LV_COMPACT_STALL), 0, "%s: no direct compaction", d);
		check_ok(fr.m, d); /* holds kcompactd off while it looks */
		if (k < 2)
			ok(nst(fr.m, 0, LV_COMPACT_SUCCESS) >= 1, "%s: counted a success", d);
		f = lv_folio_alloc(fr.m, 0, 9, NULL, 0);
		ok(f != NULL, "%s: the allocation succeeds now", d);
		if (f)
			lv_folio_put(f);
		is(anon_bad(&fr), 0, "%s: data intact", d);
		anon_release(&fr, d);
	}
}

/* ---- the scanner alone, the isolation limit, a second node ------------------------------------
 */

static void test_scan_putback(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m;
	struct lv_folio **fs = calloc(SMALL_PAGES, sizeof(*fs));
	unsigned long n = 0, bad = 0, scanned;
	double t0, t1;

	cfg.metadata_only = true;
	m = new_machine(&cfg);
	if (!fs)
		BAIL_OUT("out of memory");
	while (n < SMALL_PAGES - 256 &&
	       (fs[n] = lv_folio_alloc(m, 0, 0, NULL, n % 2 ? LV_FOLIO_ANON : 0)))
		lv_folio_add_lru(fs[n++]);
	lv_lru_add_drain(m);
	t0 = now();
	scanned = compact_scan_putback(m, 0);
	t1 = now();
	is(scanned, SMALL_PAGES, "scan putback: every PFN scanned");
	is(nst(m, 0, LV_COMPACT_ISOLATED), n, "scan putback: every LRU folio isolated (%lu)", n);
	for (unsigned long i = 0; i < n; i++)
		bad += !lv_folio_test(fs[i], LV_PG_LRU) || lv_folio_ref_count(fs[i]) != 1;
	is(bad, 0, "scan putback: every folio back on its LRU with its one reference");
	is(nst(m, 0, LV_NR_INACTIVE_FILE) + nst(m, 0, LV_NR_INACTIVE_ANON), n,
	   "scan putback: list sizes unchanged");
	diag("scan putback: %.1f M PFNs/s (debug build)", (double)scanned / (t1 - t0) / 1e6);
	check_ok(m, "scan putback");
	lv_folios_put(fs, n);
	free(fs);
	finish(m, "scan putback");
}

static void test_too_many_isolated(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	struct pglist_data *pgdat = m->nodes[0];
	struct lv_folio *fs[64];

	for (int i = 0; i < 64; i++) {
		fs[i] = alloc_or_bail(m, 0, 0, NULL, 0);
		lv_folio_add_lru(fs[i]);
	}
	lv_lru_add_drain(m);
	ok(!too_many_isolated(pgdat), "too many isolated: none isolated");
	__atomic_store_n(&pgdat->nr_compact_isolated, 32, __ATOMIC_RELAXED);
	ok(!too_many_isolated(pgdat), "too many isolated: 32 of 64 LRU pages is not too many");
	__atomic_store_n(&pgdat->nr_compact_isolated, 33, __ATOMIC_RELAXED);
	ok(too_many_isolated(pgdat), "too many isolated: 33 is");
	__atomic_store_n(&pgdat->nr_compact_isolated, 0, __ATOMIC_RELAXED);
	lv_folios_put(fs, 64);
	finish(m, "too many isolated");
}

/* test_second_node - compacting node 1 moves node 1's folios within node 1 only. */
static void test_second_node(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m;
	struct lv_memcg *a;
	struct lv_mm *mm;
	uint64_t addr;

	cfg.nr_nodes = 2;
	m = new_machine(&cfg);
	a = new_memcg(m, NULL, "a");
	mm = new_mm(m, a, 1);
	addr = map_or_bail(mm, ANON_FRAG * PAGE);
	write_pat(mm, addr, ANON_FRAG * PAGE, 3);
	for (unsigned int i = 1; i < ANON_FRAG; i += 2)
		lv_madvise(mm, addr + (uint64_t)i * PAGE, PAGE, LV_MADV_DONTNEED);
	lv_lru_add_drain_all(m);
	isnt(lv_fragmentation_index(m, 1, 9), -1000, "second node: node 1 fragmented");
	is(lv_compact_node(m, 1, 9), 1, "second node: compacting node 1 for order 9 returns 1");
	is(lv_fragmentation_index(m, 1, 9), -1000, "second node: ... a free block on node 1");
	ok(nst(m, 1, LV_PGMIGRATE_SUCCESS) > 0, "second node: pages moved on node 1");
	is(nst(m, 0, LV_NR_CHARGED), 0, "second node: none to node 0");
	is(nst(m, 0, LV_COMPACT_MIGRATE_SCANNED) + nst(m, 0, LV_COMPACT_SUCCESS), 0,
	   "second node: node 0 not scanned");
	is(nst(m, 1, LV_COMPACT_SUCCESS), 1, "second node: success counted on node 1");
	for (unsigned int i = 0, bad = 0; i < ANON_FRAG; i += 2) {
		bad += bad_pat(mm, addr + (uint64_t)i * PAGE, PAGE, 3) != 0;
		if (i + 2 >= ANON_FRAG)
			is(bad, 0, "second node: data intact");
	}
	finish_mm(m, mm, a, "second node");
}

/* ---- the first version's order -----------------------------------------------------------------
 */

/*
 * test_v1_self_deadlock - with LV_PROTOCOL_V1 the scanner drops a rejected folio's reference
 * under the lruvec lock: when the owner let go meanwhile, that is the final put, whose release
 * path takes the same lock. Run in a child (before any thread exists here): debug builds stop
 * it at the second LRU lock (lockdep-lite), others hang until the alarm. The real order frees
 * the same folio (test_freed_while_held).
 */
static void v1_child(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m;
	struct lv_folio *f;

	alarm(20);
	cfg.protocol = LV_PROTOCOL_V1;
	cfg.compact_unevictable_allowed = false;
	m = lv_machine_create(&cfg);
	if (!m)
		_exit(2);
	f = lv_folio_alloc(m, 0, 0, NULL, 0);
	lv_folio_set_state(f, LV_PG_MLOCKED, true);
	lv_folio_add_lru(f);
	lv_lru_add_drain(m);
	hook_arm(f, COMPACT_HOOK_GOT, ACT_PUT);
	lv_compact_node(m, 0, -1);
	_exit(0); /* not reached with the v1 order */
}

static void test_v1_self_deadlock(void)
{
	static struct child_run o;
	int status;

	run_in_child(v1_child, &o);
	status = o.status;
	ok(WIFSIGNALED(status) && (WTERMSIG(status) == SIGABRT || WTERMSIG(status) == SIGALRM),
	   "v1: the final put under the lruvec lock does not return (signal %d)",
	   WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	ok(WTERMSIG(status) != SIGABRT || strstr(o.out, "lockdep"),
	   "v1: ... lockdep-lite names it: %s", strtok(o.out, "\n") ? o.out : "(nothing)");
}

int main(void)
{
	test_v1_self_deadlock();
	test_bad_input();
	test_fragmentation_index();
	test_fragmented(LV_LOCK_LRUVEC, false);
	test_fragmented(LV_LOCK_NODE, false);
	test_fragmented(LV_LOCK_LRUVEC, true);
	test_memcg_races(LV_LOCK_LRUVEC);
	test_memcg_races(LV_LOCK_NODE);
	test_freed_while_held();
	test_unevictable_and_pinned();
	test_memcg_filter();
	test_large_folios();
	test_allocator();
	test_kcompactd();
	test_scan_putback();
	test_too_many_isolated();
	test_second_node();
	return done_testing();
}
