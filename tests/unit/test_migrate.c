// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * NUMA migration (migrate.c): lv_migrate_pages (every page moves, data byte-exact, the charge
 * moves with it, per-node counts and pgmigrate events, the from_nodes mask, a memcg at its
 * limit), lv_move_pages statuses (node, -EFAULT, -ENOENT, -EBUSY, -ENOMEM, -EINVAL) and its
 * LRU cache disable, lazyfree and active pages keeping their state, page cache migration of a
 * real and a sparse file (with concurrent readers), migration racing writers and readers of
 * the same address space, lv_lru_cache_disable() nesting, and other machine shapes.
 *
 * A page "isolated or in use by another actor" cannot be produced through the public API (no
 * function hands out an anon folio), so the busy test takes the folio with the internal
 * anon_folio_get() and then uses the public lv_folio_isolate_lru()/_putback_lru(): the only
 * use of src/ headers here, as in test_check.c.
 */
#include "internal.h"

#include "lvtest.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#define PAGE LV_PAGE_SIZE

static uint64_t nst(struct lv_machine *m, int nid, enum lv_stat_item item)
{
	return lv_node_stat(m, nid, item);
}

/* node_of - where the page at @addr is (lv_move_pages without nodes), or its error. */
static int node_of(struct lv_mm *mm, uint64_t addr)
{
	int status = INT_MIN;
	int rc = lv_move_pages(mm, 1, &addr, NULL, &status);

	return rc ? rc : status;
}

/* pages_on - how many of the @nr pages from @addr lv_move_pages reports on node @nid. */
static size_t pages_on(struct lv_mm *mm, uint64_t addr, size_t nr, int nid)
{
	uint64_t *addrs = calloc(nr, sizeof(*addrs));
	int *status = calloc(nr, sizeof(*status));
	size_t n = 0;

	if (!addrs || !status)
		BAIL_OUT("out of memory");
	for (size_t i = 0; i < nr; i++) {
		addrs[i] = addr + i * PAGE;
		status[i] = INT_MIN;
	}
	if (lv_move_pages(mm, nr, addrs, NULL, status) == 0)
		for (size_t i = 0; i < nr; i++)
			n += status[i] == nid;
	free(addrs);
	free(status);
	return n;
}

static uint64_t disables(struct lv_machine *m)
{
	struct lv_latency lat;

	lv_lru_cache_disable_latency(m, &lat);
	return lat.count;
}

static struct lv_machine *two_nodes(unsigned int nodes, unsigned int slots)
{
	struct lv_config cfg = small_config();

	cfg.nr_nodes = nodes;
	cfg.nr_cpu_slots = slots;
	return new_machine(&cfg);
}

/* ---- lv_migrate_pages ---------------------------------------------------------------------- */

static void test_migrate_pages(void)
{
	struct lv_machine *m = two_nodes(2, 1);
	struct lv_memcg *a = new_memcg(m, NULL, "a");
	struct lv_mm *mm = new_mm(m, a, 0);
	uint64_t r, succ, fail, d;
	int err;

	r = map_or_bail(mm, 100 * PAGE);
	is(write_pat(mm, r, 100 * PAGE, 1), 0, "migrate: 100 pages written on node 0");
	lv_lru_add_drain_all(m);
	is(pages_on(mm, r, 100, 0), 100, "migrate: lv_move_pages reports node 0 for all 100");
	is(nst(m, 0, LV_NR_CHARGED), 100, "migrate: node 0 has 100 pages allocated");
	is(nst(m, 1, LV_NR_CHARGED), 0, "migrate: node 1 none");
	is(lv_memcg_set_max(a, 100), 0, "migrate: the memcg is exactly at its limit");

	succ = nst(m, 1, LV_PGMIGRATE_SUCCESS);
	fail = nst(m, 0, LV_PGMIGRATE_FAIL);
	d = disables(m);
	is(lv_migrate_pages(mm, 1ull << 0, 1), 0, "migrate: node 0 -> 1 returns 0 (all moved)");
	is(disables(m) - d, 1, "migrate: the LRU cache was disabled once for the call");
	is(pages_on(mm, r, 100, 1), 100, "migrate: all 100 pages now on node 1");
	is(bad_pat(mm, r, 100 * PAGE, 1), 0, "migrate: contents byte-exact");
	is(lv_memcg_usage(a), 100, "migrate: memcg usage unchanged (at its limit: no new charge)");
	is(nst(m, 0, LV_NR_CHARGED), 0, "migrate: node 0 has nothing allocated");
	is(nst(m, 1, LV_NR_CHARGED), 100, "migrate: node 1 has the 100 pages");
	is(nst(m, 1, LV_NR_INACTIVE_ANON), 100,
	   "migrate: the copies are on node 1's inactive anon list (no drain needed)");
	is(nst(m, 0, LV_NR_INACTIVE_ANON) + nst(m, 0, LV_NR_ACTIVE_ANON), 0,
	   "migrate: node 0's anon lists are empty");
	is(nst(m, 1, LV_PGMIGRATE_SUCCESS) - succ, 100, "migrate: pgmigrate_success 100 on node 1");
	is(lv_memcg_stat(a, LV_PGMIGRATE_SUCCESS), 100, "migrate: ... and on the memcg");
	is(nst(m, 0, LV_PGMIGRATE_FAIL) - fail, 0, "migrate: pgmigrate_fail 0");
	is(lv_mm_rss(mm), 100, "migrate: rss unchanged");

	succ = nst(m, 1, LV_PGMIGRATE_SUCCESS) + nst(m, 0, LV_PGMIGRATE_SUCCESS);
	is(lv_migrate_pages(mm, 1ull << 0, 1), 0, "migrate: again: nothing on node 0 -> 0");
	is(lv_migrate_pages(mm, 1ull << 1, 1), 0, "migrate: from node 1 to node 1 -> 0");
	is(lv_migrate_pages(mm, 0, 0), 0, "migrate: an empty from_nodes mask -> 0");
	is(nst(m, 1, LV_PGMIGRATE_SUCCESS) + nst(m, 0, LV_PGMIGRATE_SUCCESS), succ,
	   "migrate: ... none of them moved anything");
	is(pages_on(mm, r, 100, 1), 100, "migrate: ... the pages stayed on node 1");

	is(lv_migrate_pages(mm, ~0ull, 2), -EINVAL, "migrate: to node 2 of 2 -> -EINVAL");
	is(lv_migrate_pages(mm, ~0ull, -1), -EINVAL, "migrate: to node -1 -> -EINVAL");
	is(lv_migrate_pages(mm, ~0ull, LV_MAX_NODES), -EINVAL, "migrate: to node 64 -> -EINVAL");
	is(lv_migrate_pages(NULL, ~0ull, 0), -EINVAL, "migrate: NULL mm -> -EINVAL");
	is(pages_on(mm, r, 100, 1), 100, "migrate: ... nothing moved");

	/* Written after the move: the copy is the page now. */
	is(write_pat(mm, r + 10 * PAGE, 5 * PAGE, 2), 0, "migrate: write 5 migrated pages");
	is(bad_pat(mm, r + 10 * PAGE, 5 * PAGE, 2), 0, "migrate: ... read back");
	is(lv_memcg_usage(a), 100, "migrate: ... no new fault");
	is(lv_migrate_pages(mm, ~0ull, 0), 0, "migrate: everything back to node 0 -> 0");
	is(pages_on(mm, r, 100, 0), 100, "migrate: all on node 0 again");
	is(bad_pat(mm, r, 10 * PAGE, 1) + bad_pat(mm, r + 10 * PAGE, 5 * PAGE, 2) +
		   bad_pat(mm, r + 15 * PAGE, 85 * PAGE, 1),
	   0, "migrate: both generations byte-exact after the round trip");
	is(nst(m, 0, LV_PGMIGRATE_SUCCESS), 100, "migrate: pgmigrate_success 100 on node 0");
	is(lv_memcg_set_max(a, SIZE_MAX), 0, "migrate: limit lifted");

	/* Active pages stay active, lazily freed pages stay lazy (and reclaimable). */
	for (uint64_t p = 0; p < 10; p++) {
		struct lv_folio *f = anon_folio_get(mm, r / PAGE + p, &err);

		if (!f)
			BAIL_OUT("anon_folio_get: %d", err);
		lv_folio_activate(f);
		lv_folio_put(f);
	}
	lv_lru_add_drain_all(m);
	is(nst(m, 0, LV_NR_ACTIVE_ANON), 10, "state: 10 pages activated on node 0");
	is(lv_madvise(mm, r + 90 * PAGE, 10 * PAGE, LV_MADV_FREE), 0, "state: MADV_FREE 10 others");
	lv_lru_add_drain_all(m);
	is(nst(m, 0, LV_NR_INACTIVE_FILE), 10, "state: they are on node 0's inactive file list");
	is(lv_migrate_pages(mm, 1ull << 0, 1), 0, "state: migrate everything to node 1");
	lv_lru_add_drain_all(m);
	is(nst(m, 1, LV_NR_ACTIVE_ANON), 10, "state: the active pages are active on node 1");
	is(nst(m, 1, LV_NR_INACTIVE_ANON), 80, "state: 80 inactive anon on node 1");
	is(nst(m, 1, LV_NR_INACTIVE_FILE), 10, "state: the lazyfree pages are lazyfree on node 1");
	is(lv_reclaim_node(m, 0, 100), 0, "state: nothing left to reclaim on node 0");
	is(lv_reclaim_node(m, 1, 100), 10, "state: node 1 reclaim frees the 10 lazyfree copies");
	is(bad_pat(mm, r + 90 * PAGE, 10 * PAGE, -1), 0, "state: ... they read zeros");
	is(lv_mm_rss(mm), 90, "state: rss 90");
	is(lv_memcg_usage(a), 90, "state: usage 90");

	check_ok(m, "migrate");
	is(lv_munmap(mm, r, 50 * PAGE), 0, "migrate: unmap half of the migrated pages");
	lv_lru_add_drain_all(m);
	is(lv_memcg_usage(a), 40, "migrate: the copies are uncharged when released");
	finish_mm(m, mm, a, "migrate");
}

/* ---- the from_nodes mask --------------------------------------------------------------------- */

static void test_mask(void)
{
	struct lv_machine *m = two_nodes(3, 1);
	struct lv_mm *mm = new_mm(m, NULL, 0);
	uint64_t r = map_or_bail(mm, 30 * PAGE);

	for (int n = 0; n < 3; n++) {
		lv_mm_set_node(mm, n);
		if (write_pat(mm, r + (uint64_t)n * 10 * PAGE, 10 * PAGE, (unsigned)n))
			BAIL_OUT("mask: write failed");
	}
	is(pages_on(mm, r, 10, 0) + pages_on(mm, r + 10 * PAGE, 10, 1) +
		   pages_on(mm, r + 20 * PAGE, 10, 2),
	   30, "mask: 10 pages on each of 3 nodes");
	is(lv_migrate_pages(mm, 1ull << 0, 2), 0, "mask: migrate node 0 -> node 2");
	is(pages_on(mm, r, 10, 2), 10, "mask: node 0's pages went to node 2");
	is(pages_on(mm, r + 10 * PAGE, 10, 1), 10, "mask: node 1's pages were left alone");
	is(pages_on(mm, r + 20 * PAGE, 10, 2), 10, "mask: node 2's pages stayed");
	is(nst(m, 0, LV_NR_CHARGED), 0, "mask: node 0 empty");
	is(nst(m, 1, LV_NR_CHARGED), 10, "mask: node 1 has 10");
	is(nst(m, 2, LV_NR_CHARGED), 20, "mask: node 2 has 20");
	is(nst(m, 2, LV_PGMIGRATE_SUCCESS), 10, "mask: pgmigrate_success 10 on node 2");
	is(lv_migrate_pages(mm, (1ull << 1) | (1ull << 2), 0), 0, "mask: nodes 1 and 2 -> node 0");
	is(pages_on(mm, r, 30, 0), 30, "mask: all 30 on node 0");
	is(lv_migrate_pages(mm, 1ull << 63, 1), 0, "mask: a bit for a node that does not exist");
	is(pages_on(mm, r, 30, 0), 30, "mask: ... moved nothing");
	for (int n = 0; n < 3; n++)
		is(bad_pat(mm, r + (uint64_t)n * 10 * PAGE, 10 * PAGE, n), 0,
		   "mask: data of the pages first on node %d exact", n);
	check_ok(m, "mask");
	lv_mm_destroy(mm);
	finish(m, "mask");
}

/* ---- lv_move_pages -------------------------------------------------------------------------- */

static void test_move_pages(void)
{
	struct lv_machine *m = two_nodes(2, 1);
	struct lv_memcg *a = new_memcg(m, NULL, "a");
	struct lv_mm *mm = new_mm(m, a, 0);
	uint64_t r = map_or_bail(mm, 8 * PAGE), r2, succ, fail, d, inact;
	uint64_t addrs[10];
	int nodes[10], status[10];
	int expect[8];

	is(write_pat(mm, r, 6 * PAGE, 1), 0, "move_pages: 6 of 8 pages written");
	lv_lru_add_drain_all(m);
	addrs[0] = r, nodes[0] = 1, expect[0] = 1;			/* moves */
	addrs[1] = r + PAGE, nodes[1] = 0, expect[1] = 0;		/* already there */
	addrs[2] = r + 6 * PAGE, nodes[2] = 1, expect[2] = -ENOENT;	/* never faulted */
	addrs[3] = r - PAGE, nodes[3] = 1, expect[3] = -EFAULT;		/* the guard below */
	addrs[4] = r + 2 * PAGE + 123, nodes[4] = 1, expect[4] = 1;	/* unaligned address */
	addrs[5] = r + 3 * PAGE, nodes[5] = 1, expect[5] = 1;		/* moves */
	addrs[6] = 0, nodes[6] = 1, expect[6] = -EFAULT;		/* nothing there */
	addrs[7] = r + 8 * PAGE + 5, nodes[7] = 0, expect[7] = -EFAULT; /* the guard above */
	for (int i = 0; i < 8; i++)
		status[i] = INT_MIN;
	succ = nst(m, 1, LV_PGMIGRATE_SUCCESS);
	fail = nst(m, 0, LV_PGMIGRATE_FAIL) + nst(m, 1, LV_PGMIGRATE_FAIL);
	is(lv_move_pages(mm, 8, addrs, nodes, status), 0, "move_pages: returns 0");
	for (int i = 0; i < 8; i++)
		is(status[i], expect[i], "move_pages: status[%d] = %d", i, expect[i]);
	is(nst(m, 1, LV_PGMIGRATE_SUCCESS) - succ, 3, "move_pages: pgmigrate_success 3");
	is(nst(m, 0, LV_PGMIGRATE_FAIL) + nst(m, 1, LV_PGMIGRATE_FAIL), fail,
	   "move_pages: absent pages are not migration failures");
	is(node_of(mm, r) + node_of(mm, r + 2 * PAGE) + node_of(mm, r + 3 * PAGE), 3,
	   "move_pages: pages 0, 2, 3 are on node 1");
	is(node_of(mm, r + PAGE) + node_of(mm, r + 4 * PAGE) + node_of(mm, r + 5 * PAGE), 0,
	   "move_pages: pages 1, 4, 5 are on node 0");
	is(node_of(mm, r + 6 * PAGE), -ENOENT, "move_pages: query of an absent page -> -ENOENT");
	is(node_of(mm, r + 8 * PAGE), -EFAULT, "move_pages: query outside -> -EFAULT");
	is(lv_mm_rss(mm), 6, "move_pages: the absent page was not faulted in");
	is(bad_pat(mm, r, 6 * PAGE, 1), 0, "move_pages: data byte-exact");
	is(nst(m, 0, LV_NR_CHARGED), 3, "move_pages: node 0 has 3 pages");
	is(nst(m, 1, LV_NR_CHARGED), 3, "move_pages: node 1 has 3 pages");
	is(lv_memcg_usage(a), 6, "move_pages: usage unchanged");

	/* The same page twice: the moves apply in order. */
	addrs[0] = addrs[1] = r + 4 * PAGE;
	nodes[0] = 1, nodes[1] = 0;
	is(lv_move_pages(mm, 2, addrs, nodes, status), 0, "move_pages: page 4 to 1, then to 0");
	is(status[0], 1, "move_pages: first to node 1");
	is(status[1], 0, "move_pages: then back to node 0");
	is(bad_pat(mm, r + 4 * PAGE, PAGE, 1), 0, "move_pages: ... data exact");

	/* A bad node anywhere: nothing moves. */
	addrs[0] = r + 4 * PAGE, nodes[0] = 1;
	addrs[1] = r + 5 * PAGE, nodes[1] = 2;
	succ = nst(m, 1, LV_PGMIGRATE_SUCCESS);
	is(lv_move_pages(mm, 2, addrs, nodes, status), -EINVAL, "move_pages: node 2 -> -EINVAL");
	nodes[1] = -1;
	is(lv_move_pages(mm, 2, addrs, nodes, status), -EINVAL, "move_pages: node -1 -> -EINVAL");
	is(node_of(mm, r + 4 * PAGE), 0, "move_pages: ... the valid request was not applied");
	is(nst(m, 1, LV_PGMIGRATE_SUCCESS), succ, "move_pages: ... nothing migrated");
	is(lv_move_pages(mm, 0, addrs, nodes, status), 0, "move_pages: count 0 with nodes -> 0");
	is(lv_move_pages(mm, 0, NULL, NULL, NULL), 0, "move_pages: count 0, all NULL -> 0");
	is(lv_move_pages(mm, 1, addrs, nodes, NULL), -EINVAL, "move_pages: NULL status -> -EINVAL");
	is(lv_move_pages(mm, 1, NULL, nodes, status), -EINVAL, "move_pages: NULL addrs -> -EINVAL");
	is(lv_move_pages(NULL, 1, addrs, nodes, status), -EINVAL, "move_pages: NULL mm -> -EINVAL");

	/*
	 * With nodes, the LRU cache is disabled around the call even if nothing moves: pages
	 * queued in the lru_add batch reach their list. Without nodes it is a pure query.
	 */
	r2 = map_or_bail(mm, 10 * PAGE);
	inact = nst(m, 0, LV_NR_INACTIVE_ANON);
	is(write_pat(mm, r2, 5 * PAGE, 3), 0, "disable: 5 new pages (queued in the batch)");
	is(nst(m, 0, LV_NR_INACTIVE_ANON), inact, "disable: not yet on a list");
	d = disables(m);
	addrs[0] = r2;
	is(lv_move_pages(mm, 1, addrs, NULL, status), 0, "disable: a query");
	is(status[0], 0, "disable: ... node 0");
	is(disables(m), d, "disable: a query does not disable the cache");
	is(nst(m, 0, LV_NR_INACTIVE_ANON), inact, "disable: ... and drains nothing");
	nodes[0] = 0;
	is(lv_move_pages(mm, 1, addrs, nodes, status), 0, "disable: a move to where it is");
	is(status[0], 0, "disable: ... status 0");
	is(disables(m) - d, 1, "disable: the cache was disabled for the call");
	is(nst(m, 0, LV_NR_INACTIVE_ANON), inact + 5, "disable: ... which drained the batch");

	check_ok(m, "move_pages");
	lv_mm_destroy(mm);
	lv_lru_add_drain_all(m);
	is(lv_memcg_remove(a), 0, "move_pages: memcg removed");
	finish(m, "move_pages");
}

/* ---- busy pages ------------------------------------------------------------------------------ */

static void test_busy(void)
{
	struct lv_machine *m = two_nodes(2, 1);
	struct lv_memcg *a = new_memcg(m, NULL, "a");
	struct lv_mm *mm = new_mm(m, a, 0);
	uint64_t r = map_or_bail(mm, 10 * PAGE), fail, a3, a5;
	struct lv_folio *f;
	int nodes[1] = { 1 }, status[1], err = 0;

	is(write_pat(mm, r, 10 * PAGE, 1), 0, "busy: 10 pages on node 0");
	lv_lru_add_drain_all(m);
	a3 = r + 3 * PAGE;
	a5 = r + 5 * PAGE;

	/* Isolated by another actor: the pin cannot be won. */
	f = anon_folio_get(mm, a3 / PAGE, &err);
	if (!f)
		BAIL_OUT("anon_folio_get: %d", err);
	is(lv_folio_isolate_lru(f), 0, "busy: another actor isolates page 3");
	is(nst(m, 0, LV_NR_ISOLATED), 1, "busy: nr_isolated 1");
	fail = nst(m, 0, LV_PGMIGRATE_FAIL);
	status[0] = INT_MIN;
	is(lv_move_pages(mm, 1, &a3, nodes, status), 0, "busy: move page 3 to node 1");
	is(status[0], -EBUSY, "busy: status -EBUSY");
	is(nst(m, 0, LV_PGMIGRATE_FAIL) - fail, 1, "busy: pgmigrate_fail 1 on node 0");
	is(node_of(mm, a3), 0, "busy: the page is still on node 0");
	is(bad_pat(mm, a3, PAGE, 1), 0, "busy: ... with its data");
	ok(lv_folio_test(f, LV_PG_ISOLATED) && !lv_folio_test(f, LV_PG_LRU),
	   "busy: ... still isolated by its owner");
	is(nst(m, 0, LV_NR_ISOLATED), 1, "busy: nr_isolated still 1");
	is(lv_migrate_pages(mm, 1ull << 0, 1), 1, "busy: migrate_pages leaves exactly 1 page");
	is(pages_on(mm, r, 10, 1), 9, "busy: ... the other 9 moved");
	is(node_of(mm, a3), 0, "busy: ... page 3 did not");
	is(write_pat(mm, a3, PAGE, 2), 0, "busy: the isolated page can still be written");
	is(bad_pat(mm, a3, PAGE, 2), 0, "busy: ... and read");
	is(lv_folio_putback_lru(f), 0, "busy: the owner puts it back");
	lv_folio_put(f);
	is(nst(m, 0, LV_NR_ISOLATED), 0, "busy: nr_isolated 0");
	is(lv_move_pages(mm, 1, &a3, nodes, status), 0, "busy: retry the move");
	is(status[0], 1, "busy: now it moves (status 1)");
	is(bad_pat(mm, a3, PAGE, 2), 0, "busy: ... data exact");

	/* In use: another actor holds a reference, so the count cannot be frozen. */
	f = anon_folio_get(mm, a5 / PAGE, &err);
	if (!f)
		BAIL_OUT("anon_folio_get: %d", err);
	fail = nst(m, 1, LV_PGMIGRATE_FAIL);
	nodes[0] = 0;
	is(lv_move_pages(mm, 1, &a5, nodes, status), 0, "in use: move page 5 to node 0");
	is(status[0], -EBUSY, "in use: status -EBUSY");
	is(nst(m, 1, LV_PGMIGRATE_FAIL) - fail, 1, "in use: pgmigrate_fail 1 on node 1");
	is(lv_folio_nid(f), 1, "in use: the folio is still on node 1");
	ok(lv_folio_test(f, LV_PG_LRU), "in use: ... back on its LRU");
	is(lv_folio_ref_count(f), 2, "in use: ... with exactly the mapping's and our references");
	is(nst(m, 0, LV_NR_ISOLATED) + nst(m, 1, LV_NR_ISOLATED), 0, "in use: nothing isolated");
	is(node_of(mm, a5), 1, "in use: the mm still maps it on node 1");
	is(bad_pat(mm, a5, PAGE, 1), 0, "in use: data intact");
	ok(!memcmp(lv_folio_data(f), (unsigned char[]){ pat(a5, 1), pat(a5 + 1, 1) }, 2),
	   "in use: the holder's folio is the mapped page");
	lv_folio_put(f);
	is(lv_move_pages(mm, 1, &a5, nodes, status), 0, "in use: retry after the holder let go");
	is(status[0], 0, "in use: now it moves (status 0)");
	is(bad_pat(mm, a5, PAGE, 1), 0, "in use: data exact");
	finish_mm(m, mm, a, "busy");
}

/* ---- target node full ---------------------------------------------------------------------- */

static void test_enomem(void)
{
	struct lv_machine *m = two_nodes(2, 1);
	struct lv_memcg *a = new_memcg(m, NULL, "a"), *b = new_memcg(m, NULL, "b");
	struct lv_mm *mm = new_mm(m, a, 0), *filler = new_mm(m, b, 1);
	uint64_t r = map_or_bail(mm, 10 * PAGE), rf = map_or_bail(filler, SMALL_PAGES * PAGE);
	uint64_t fail, usage_b, n = 0;
	int nodes[1] = { 1 }, status[1], err = 0;

	is(write_pat(mm, r, 10 * PAGE, 1), 0, "enomem: 10 pages on node 0");
	while (nst(m, 1, LV_NR_FREE) > 0 && n < SMALL_PAGES &&
	       !(err = lv_mm_memset(filler, rf + n * PAGE, 0x42, 1)))
		n++;
	lv_lru_add_drain_all(m);
	is(nst(m, 1, LV_NR_FREE), 0, "enomem: node 1 filled by another memcg's anon pages (%llu)",
	   (unsigned long long)n);
	usage_b = lv_memcg_usage(b);
	fail = nst(m, 0, LV_PGMIGRATE_FAIL);
	status[0] = INT_MIN;
	is(lv_move_pages(mm, 1, &r, nodes, status), 0, "enomem: move a page to the full node");
	is(status[0], -ENOMEM, "enomem: status -ENOMEM");
	is(nst(m, 0, LV_PGMIGRATE_FAIL) - fail, 1, "enomem: pgmigrate_fail 1 on node 0");
	is(node_of(mm, r), 0, "enomem: the page stayed on node 0");
	is(bad_pat(mm, r, PAGE, 1), 0, "enomem: ... with its data");
	is(lv_migrate_pages(mm, 1ull << 0, 1), 10, "enomem: migrate_pages moves none of 10");
	is(pages_on(mm, r, 10, 0), 10, "enomem: all 10 on node 0");
	is(bad_pat(mm, r, 10 * PAGE, 1), 0, "enomem: all data intact");
	is(nst(m, 0, LV_NR_INACTIVE_ANON), 10, "enomem: all 10 back on node 0's LRU");
	is(nst(m, 0, LV_NR_ISOLATED), 0, "enomem: nothing left isolated");
	is(lv_memcg_usage(a), 10, "enomem: a's usage unchanged");
	is(lv_memcg_usage(b), usage_b, "enomem: b's usage unchanged (nothing reclaimed from it)");
	is(nst(m, 0, LV_NR_CHARGED), 10, "enomem: node 0 still has exactly 10 allocated");

	is(lv_munmap(filler, rf, 4 * PAGE), 0, "enomem: free 4 pages on node 1");
	lv_lru_add_drain_all(m);
	is(nst(m, 1, LV_NR_FREE), 4, "enomem: node 1 has 4 free pages");
	is(lv_migrate_pages(mm, 1ull << 0, 1), 6, "enomem: now 4 move and 6 do not");
	is(pages_on(mm, r, 10, 1), 4, "enomem: 4 pages on node 1");
	is(nst(m, 1, LV_NR_FREE), 0, "enomem: node 1 full again");
	is(bad_pat(mm, r, 10 * PAGE, 1), 0, "enomem: all data intact");
	is(lv_memcg_usage(a), 10, "enomem: usage unchanged");
	check_ok(m, "enomem");
	lv_mm_destroy(mm);
	lv_mm_destroy(filler);
	lv_lru_add_drain_all(m);
	is(lv_memcg_remove(a), 0, "enomem: a removed");
	is(lv_memcg_remove(b), 0, "enomem: b removed");
	finish(m, "enomem");
}

/* ---- LRU cache disable nesting ------------------------------------------------------------- */

static void test_disable_nesting(void)
{
	struct lv_machine *m = two_nodes(2, 1);
	struct lv_mm *mm = new_mm(m, NULL, 0);
	uint64_t r = map_or_bail(mm, 40 * PAGE), inact;

	is(write_pat(mm, r, 10 * PAGE, 1), 0, "nesting: 10 pages");
	lv_lru_add_drain_all(m);
	lv_lru_cache_disable(m);
	is(lv_migrate_pages(mm, 1ull << 0, 1), 0, "nesting: migrate inside a caller's disable");
	inact = nst(m, 0, LV_NR_INACTIVE_ANON);
	is(write_pat(mm, r + 10 * PAGE, 3 * PAGE, 2), 0, "nesting: fault 3 pages after it");
	is(nst(m, 0, LV_NR_INACTIVE_ANON), inact + 3,
	   "nesting: still disabled: the new pages are on the list at once");
	lv_mm_set_node(mm, 1);
	is(lv_migrate_pages(mm, 1ull << 1, 0), 0, "nesting: migrate back, still nested");
	is(pages_on(mm, r, 13, 0), 13, "nesting: all 13 on node 0");
	lv_lru_cache_enable(m);
	inact = nst(m, 1, LV_NR_INACTIVE_ANON);
	is(write_pat(mm, r + 13 * PAGE, 3 * PAGE, 3), 0, "nesting: enabled: fault 3 on node 1");
	is(nst(m, 1, LV_NR_INACTIVE_ANON), inact, "nesting: enabled: they wait in the batch");
	lv_lru_add_drain_all(m);
	is(nst(m, 1, LV_NR_INACTIVE_ANON), inact + 3, "nesting: a drain adds them");
	is(bad_pat(mm, r, 10 * PAGE, 1) + bad_pat(mm, r + 10 * PAGE, 3 * PAGE, 2) +
		   bad_pat(mm, r + 13 * PAGE, 3 * PAGE, 3),
	   0, "nesting: data exact");
	check_ok(m, "nesting");
	lv_mm_destroy(mm);
	finish(m, "nesting");
}

/* ---- page cache ----------------------------------------------------------------------------- */

/* file_bad - read [@off, @off + @len) of @f: bytes unlike the file (-1: the read failed). */
static long file_bad(struct lv_file *f, struct lv_memcg *memcg, uint64_t off, size_t len,
		     uint64_t real)
{
	unsigned char *buf = malloc(len);
	long n, bad = 0;

	if (!buf)
		BAIL_OUT("out of memory");
	n = lv_file_read(f, memcg, buf, len, off);
	if (n != (long)len) {
		free(buf);
		return -1;
	}
	bad = (long)bad_bytes(buf, len, off, real, 7);
	free(buf);
	return bad;
}

#define REAL_BYTES (64 * PAGE + 123)

static void test_file_migrate(void)
{
	struct lv_machine *m = two_nodes(2, 1); /* one slot: reads cache on node 0 */
	struct lv_memcg *a = new_memcg(m, NULL, "a");
	int fd = temp_file(REAL_BYTES, 7);
	struct lv_file *f = lv_file_open(m, fd, REAL_BYTES), *s = lv_file_open(m, -1, 32 * PAGE);
	uint64_t succ;
	unsigned long rec;

	if (!f || !s)
		BAIL_OUT("file migrate: open failed");
	is(file_bad(f, a, 0, REAL_BYTES, REAL_BYTES), 0, "file: read the real file (65 pages)");
	is(file_bad(f, a, 0, 16 * PAGE, REAL_BYTES), 0, "file: read its first 16 pages again");
	is(file_bad(s, a, 0, 32 * PAGE, 0), 0, "file: read the sparse file (32 pages of zeros)");
	lv_lru_add_drain_all(m);
	is(nst(m, 0, LV_NR_FILE_PAGES), 97, "file: node 0 caches 97 pages");
	is(nst(m, 1, LV_NR_FILE_PAGES), 0, "file: node 1 none");
	is(nst(m, 0, LV_NR_ACTIVE_FILE), 16, "file: 16 active");
	is(lv_memcg_usage(a), 97, "file: usage 97");

	succ = nst(m, 1, LV_PGMIGRATE_SUCCESS);
	is(lv_file_migrate_pages(f, 1ull << 0, 1), 0, "file: migrate the real file to node 1 -> 0");
	is(nst(m, 0, LV_NR_FILE_PAGES), 32, "file: node 0 keeps the sparse file's 32");
	is(nst(m, 1, LV_NR_FILE_PAGES), 65, "file: node 1 has the real file's 65");
	is(nst(m, 1, LV_NR_CHARGED), 65, "file: node 1 has 65 pages allocated");
	is(nst(m, 0, LV_NR_CHARGED), 32, "file: node 0 has 32");
	is(nst(m, 1, LV_PGMIGRATE_SUCCESS) - succ, 65, "file: pgmigrate_success 65 on node 1");
	is(lv_memcg_usage(a), 97, "file: usage unchanged");
	is(lv_file_cached_pages(f), 65, "file: still 65 pages cached");
	is(nst(m, 1, LV_NR_ACTIVE_FILE), 16, "file: the active pages are active on node 1");
	is(nst(m, 1, LV_NR_INACTIVE_FILE), 49, "file: the others inactive on node 1");
	is(nst(m, 0, LV_NR_ACTIVE_FILE), 0, "file: nothing active left on node 0");
	is(file_bad(f, a, 0, REAL_BYTES, REAL_BYTES), 0, "file: lv_file_read is byte-exact");
	is(file_bad(f, a, 4000, 3 * PAGE, REAL_BYTES), 0, "file: ... unaligned over 4 pages too");
	is(lv_memcg_usage(a), 97, "file: ... served from the copies (no new charge)");
	is(nst(m, 1, LV_NR_FILE_PAGES), 65, "file: ... and no page cached twice");

	is(lv_file_migrate_pages(s, 1ull << 0, 1), 0, "file: migrate the sparse file -> 0");
	is(nst(m, 0, LV_NR_FILE_PAGES), 0, "file: node 0 caches nothing");
	is(nst(m, 1, LV_NR_FILE_PAGES), 97, "file: node 1 caches 97");
	is(file_bad(s, a, 0, 32 * PAGE, 0), 0, "file: the sparse file still reads zeros");
	is(lv_file_migrate_pages(f, 1ull << 0, 0), 0, "file: from node 0 (empty) -> 0");
	is(nst(m, 1, LV_NR_FILE_PAGES), 97, "file: ... nothing moved");
	is(lv_file_migrate_pages(f, ~0ull, 2), -EINVAL, "file: to node 2 of 2 -> -EINVAL");
	is(lv_file_migrate_pages(f, ~0ull, -1), -EINVAL, "file: to node -1 -> -EINVAL");
	is(lv_file_migrate_pages(NULL, ~0ull, 0), -EINVAL, "file: NULL file -> -EINVAL");

	/* The copies are ordinary page cache: reclaim evicts them; a reread fills again. */
	rec = lv_memcg_reclaim(a, 1000);
	ok(rec > 0, "file: reclaim evicts migrated pages (%lu)", rec);
	is(nst(m, 1, LV_NR_FILE_PAGES), lv_file_cached_pages(f) + lv_file_cached_pages(s),
	   "file: LV_NR_FILE_PAGES agrees with the files");
	is(lv_memcg_usage(a), 97 - rec, "file: the evicted copies were uncharged");
	is(file_bad(f, a, 0, REAL_BYTES, REAL_BYTES), 0, "file: a reread after eviction is exact");
	check_ok(m, "file migrate");
	lv_file_close(f);
	lv_file_close(s);
	close(fd);
	lv_lru_add_drain_all(m);
	is(nst(m, 0, LV_NR_FILE_PAGES) + nst(m, 1, LV_NR_FILE_PAGES), 0, "file: closed: no cache");
	is(lv_memcg_usage(a), 0, "file: closed: usage 0");
	is(lv_memcg_remove(a), 0, "file: memcg removed");
	finish(m, "file migrate");
}

#define FILE_READERS 3
#define FILE_PAGES   96

struct file_reader {
	struct lv_file *file;
	struct lv_memcg *memcg;
	int id, *stop;
	pthread_barrier_t *leave;
	unsigned long reads, failed, bad;
};

static void *file_reader_thread(void *p)
{
	struct file_reader *r = p;
	uint32_t seed = 99u + (unsigned int)r->id;
	const uint64_t real = FILE_PAGES * PAGE - 77;

	while (!__atomic_load_n(r->stop, __ATOMIC_ACQUIRE)) {
		uint64_t off;
		size_t len;
		long b;

		seed = seed * 1103515245 + 12345;
		off = (seed >> 4) % real;
		seed = seed * 1103515245 + 12345;
		len = 1 + (seed >> 4) % (3 * PAGE);
		if (off + len > real)
			len = real - off;
		b = file_bad(r->file, r->memcg, off, len, real);
		if (b < 0)
			r->failed++;
		else
			r->bad += (unsigned long)b;
		r->reads++;
	}
	pthread_barrier_wait(r->leave);
	return NULL;
}

/* truncator_thread - read a sparse file whole, truncate it to 0, grow it back, again. */
struct truncator {
	struct lv_file *file;
	struct lv_memcg *memcg;
	int *stop;
	pthread_barrier_t *leave;
	unsigned long rounds, failed, bad;
};

static void *truncator_thread(void *p)
{
	struct truncator *t = p;

	while (!__atomic_load_n(t->stop, __ATOMIC_ACQUIRE)) {
		long b = file_bad(t->file, t->memcg, 0, 64 * PAGE, 0);

		if (b < 0)
			t->failed++;
		else
			t->bad += (unsigned long)b;
		t->failed += lv_file_truncate(t->file, (t->rounds % 3) * 20 * PAGE) != 0;
		t->failed += lv_file_truncate(t->file, 64 * PAGE) != 0;
		t->rounds++;
	}
	pthread_barrier_wait(t->leave);
	return NULL;
}

static void test_file_migrate_readers(void)
{
	struct lv_machine *m = two_nodes(2, 1);
	struct lv_memcg *a = new_memcg(m, NULL, "a");
	const uint64_t real = FILE_PAGES * PAGE - 77;
	int fd = temp_file(real, 7), stop = 0;
	struct lv_file *f = lv_file_open(m, fd, real);
	struct file_reader rd[FILE_READERS];
	struct lv_file *g = lv_file_open(m, -1, 64 * PAGE);
	struct truncator tr = { .file = g, .memcg = a, .stop = &stop };
	pthread_t th[FILE_READERS], tt;
	pthread_barrier_t leave;
	unsigned long reads = 0, failed = 0, bad = 0, rounds = 0;
	long left, not_moved = 0;
	uint64_t succ0;
	double end;

	if (!f || !g)
		BAIL_OUT("file readers: open failed");
	is(file_bad(f, a, 0, real, real), 0, "readers: the file is cached (%d pages)", FILE_PAGES);
	succ0 = nst(m, 0, LV_PGMIGRATE_SUCCESS) + nst(m, 1, LV_PGMIGRATE_SUCCESS);
	pthread_barrier_init(&leave, NULL, FILE_READERS + 1);
	tr.leave = &leave;
	for (int i = 0; i < FILE_READERS; i++) {
		rd[i] = (struct file_reader){
			.file = f, .memcg = a, .id = i, .stop = &stop, .leave = &leave
		};
		if (pthread_create(&th[i], NULL, file_reader_thread, &rd[i]))
			BAIL_OUT("pthread_create failed");
	}
	if (pthread_create(&tt, NULL, truncator_thread, &tr))
		BAIL_OUT("pthread_create failed");
	for (end = now() + 1.0; now() < end || rounds < 10; rounds++) {
		left = lv_file_migrate_pages(f, ~0ull, (int)(rounds % 2));
		if (left < 0)
			BAIL_OUT("lv_file_migrate_pages: %ld", left);
		not_moved += left;
		/* The file being truncated: its folios may leave the cache under the walk. */
		if (lv_file_migrate_pages(g, ~0ull, (int)((rounds + 1) % 2)) < 0)
			BAIL_OUT("lv_file_migrate_pages(truncated file) failed");
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < FILE_READERS; i++) {
		pthread_join(th[i], NULL);
		reads += rd[i].reads;
		failed += rd[i].failed;
		bad += rd[i].bad;
	}
	pthread_join(tt, NULL);
	pthread_barrier_destroy(&leave);
	diag("readers: the truncator made %lu rounds", tr.rounds);
	ok(tr.rounds > 0, "truncate: the truncating thread ran");
	is(tr.failed, 0, "truncate: its reads and truncations all succeeded");
	is(tr.bad, 0, "truncate: ... and it read zeros only");
	is(nst(m, 0, LV_NR_FILE_PAGES) + nst(m, 1, LV_NR_FILE_PAGES),
	   lv_file_cached_pages(f) + lv_file_cached_pages(g),
	   "truncate: LV_NR_FILE_PAGES agrees with the files' caches");
	is(lv_memcg_usage(a), lv_file_cached_pages(f) + lv_file_cached_pages(g),
	   "truncate: usage is exactly the cached pages (nothing leaked)");
	diag("readers: %lu migration rounds, %ld folios left busy, %lu reads", rounds, not_moved,
	     reads);
	ok(reads > 100, "readers: the readers ran (%lu reads)", reads);
	is(failed, 0, "readers: every read during migration succeeded");
	is(bad, 0, "readers: every byte read during migration was right");
	ok(nst(m, 0, LV_PGMIGRATE_SUCCESS) + nst(m, 1, LV_PGMIGRATE_SUCCESS) - succ0 >=
		   (uint64_t)rounds * FILE_PAGES / 2,
	   "readers: most folios moved in each round");
	is(lv_file_cached_pages(f), FILE_PAGES, "readers: still one folio per page");
	lv_file_close(g);
	lv_lru_add_drain_all(m);
	is(lv_memcg_usage(a), FILE_PAGES, "readers: usage unchanged");
	is(lv_file_migrate_pages(f, ~0ull, 1), 0, "readers: quiet: everything moves to node 1");
	is(nst(m, 1, LV_NR_FILE_PAGES), FILE_PAGES, "readers: node 1 caches the whole file");
	is(nst(m, 0, LV_NR_FILE_PAGES), 0, "readers: node 0 nothing");
	is(file_bad(f, a, 0, real, real), 0, "readers: the file is byte-exact at the end");
	check_ok(m, "file readers");
	lv_file_close(f);
	close(fd);
	lv_lru_add_drain_all(m);
	is(lv_memcg_remove(a), 0, "readers: memcg removed");
	finish(m, "file readers");
}

/* ---- migration racing users of the same address space ------------------------------------- */

#define RACE_PAGES 192
#define WRITERS	   2

struct race {
	struct lv_machine *m;
	struct lv_memcg *memcg;
	struct lv_mm *mm;
	uint64_t r;
	int stop;
	pthread_barrier_t leave;
	unsigned int version[RACE_PAGES]; /* each page's last version, written by its owner */
};

struct racer {
	struct race *s;
	int id;
	pthread_t th;
	unsigned long ops, bad, errors;
	long not_moved;
};

/* A page of version v: every 8-byte word is (page << 32 | v). */
static void fill_version(uint64_t *words, unsigned int page, unsigned int v)
{
	for (size_t i = 0; i < PAGE / 8; i++)
		words[i] = (uint64_t)page << 32 | v;
}

/* check_page - 0 if @words is a whole version of @page (and at least @min_v), else 1. */
static int check_page(const uint64_t *words, unsigned int page, unsigned int min_v)
{
	for (size_t i = 1; i < PAGE / 8; i++)
		if (words[i] != words[0])
			return 1;
	return (words[0] >> 32) != page || (unsigned int)words[0] < min_v;
}

static void *writer_thread(void *p)
{
	struct racer *w = p;
	struct race *s = w->s;
	uint64_t words[PAGE / 8];
	uint32_t seed = 4242u + (unsigned int)w->id;

	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		unsigned int page, v;

		seed = seed * 1103515245 + 12345;
		page = (seed >> 8) % (RACE_PAGES / WRITERS) * WRITERS + (unsigned int)w->id;
		v = s->version[page] + 1;
		fill_version(words, page, v);
		if (lv_mm_write(s->mm, s->r + (uint64_t)page * PAGE, words, PAGE)) {
			w->errors++;
			continue;
		}
		__atomic_store_n(&s->version[page], v, __ATOMIC_RELEASE);
		if (lv_mm_read(s->mm, s->r + (uint64_t)page * PAGE, words, PAGE))
			w->errors++;
		else
			w->bad += check_page(words, page, v) || (unsigned int)words[0] != v;
		w->ops++;
	}
	pthread_barrier_wait(&s->leave);
	return NULL;
}

static void *reader_thread(void *p)
{
	struct racer *w = p;
	struct race *s = w->s;
	uint64_t words[PAGE / 8];
	uint32_t seed = 777u;

	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		unsigned int page, v;

		seed = seed * 1103515245 + 12345;
		page = (seed >> 8) % RACE_PAGES;
		v = __atomic_load_n(&s->version[page], __ATOMIC_ACQUIRE);
		if (lv_mm_read(s->mm, s->r + (uint64_t)page * PAGE, words, PAGE))
			w->errors++;
		else
			w->bad += check_page(words, page, v);
		if (!(w->ops % 64))
			lv_madvise(s->mm, s->r + (uint64_t)(page & ~15u) * PAGE, 16 * PAGE,
				   LV_MADV_COLD);
		w->ops++;
	}
	pthread_barrier_wait(&s->leave);
	return NULL;
}

/* churn_thread - map, fault, drop and unmap a region of its own while migration walks it. */
static void *churn_thread(void *p)
{
	struct racer *w = p;
	struct race *s = w->s;

	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		uint64_t r = 0;

		if (lv_mmap(s->mm, 16 * PAGE, &r)) {
			w->errors++;
			continue;
		}
		lv_mm_set_node(s->mm, (int)(w->ops % 2));
		w->errors += write_pat(s->mm, r, 16 * PAGE, (unsigned int)w->ops) != 0;
		w->bad += bad_pat(s->mm, r, 16 * PAGE, (int)w->ops) != 0;
		w->errors += lv_madvise(s->mm, r, 8 * PAGE, LV_MADV_DONTNEED) != 0;
		w->bad += bad_pat(s->mm, r, 8 * PAGE, -1) != 0;
		w->bad += bad_pat(s->mm, r + 8 * PAGE, 8 * PAGE, (int)w->ops) != 0;
		/* Lazy free and reclaim, racing the migrator for the same folios. */
		w->errors += lv_madvise(s->mm, r + 8 * PAGE, 8 * PAGE, LV_MADV_FREE) != 0;
		lv_lru_add_drain(s->m);
		lv_memcg_reclaim(s->memcg, 8);
		for (int i = 8; i < 16; i++)
			w->bad += zero_or_pat(s->mm, r + (uint64_t)i * PAGE, (int)w->ops);
		w->errors += lv_munmap(s->mm, r, 16 * PAGE) != 0;
		w->ops++;
	}
	pthread_barrier_wait(&s->leave);
	return NULL;
}

static void *migrator_thread(void *p)
{
	struct racer *w = p;
	struct race *s = w->s;
	uint32_t seed = 31337u;

	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		uint64_t addrs[8];
		int nodes[8], status[8];
		long left;

		seed = seed * 1103515245 + 12345;
		if (w->ops % 3 == 0) {
			/* Sometimes inside a caller's own disable: the calls must nest. */
			bool nest = (seed >> 12) & 1;

			if (nest)
				lv_lru_cache_disable(s->m);
			left = lv_migrate_pages(s->mm, 1ull << (w->ops % 2),
						(int)((w->ops + 1) % 2));
			if (nest)
				lv_lru_cache_enable(s->m);
			if (left < 0)
				w->errors++;
			else
				w->not_moved += left;
		} else {
			for (int i = 0; i < 8; i++) {
				seed = seed * 1103515245 + 12345;
				addrs[i] = s->r + (uint64_t)((seed >> 8) % RACE_PAGES) * PAGE;
				nodes[i] = (int)(seed >> 20) % 2;
			}
			if (lv_move_pages(s->mm, 8, addrs, nodes, status))
				w->errors++;
			for (int i = 0; i < 8; i++)
				w->bad += status[i] != nodes[i] && status[i] != -EBUSY;
		}
		w->ops++;
	}
	pthread_barrier_wait(&s->leave);
	return NULL;
}

static void test_race(void)
{
	struct lv_machine *m = two_nodes(2, 4);
	struct lv_memcg *a = new_memcg(m, NULL, "a");
	struct race *s = calloc(1, sizeof(*s));
	void *(*fns[])(void *) = { writer_thread, writer_thread, reader_thread, churn_thread,
				   migrator_thread };
	enum { NR = 5 };
	struct racer w[NR];
	uint64_t words[PAGE / 8], succ0;
	unsigned long bad = 0, errors = 0, wrong = 0;
	double end;

	if (!s)
		BAIL_OUT("out of memory");
	s->m = m;
	s->memcg = a;
	s->mm = new_mm(m, a, 0);
	s->r = map_or_bail(s->mm, RACE_PAGES * PAGE);
	for (unsigned int p = 0; p < RACE_PAGES; p++) {
		fill_version(words, p, 0);
		if (lv_mm_write(s->mm, s->r + (uint64_t)p * PAGE, words, PAGE))
			BAIL_OUT("race: initial write failed");
	}
	succ0 = nst(m, 0, LV_PGMIGRATE_SUCCESS) + nst(m, 1, LV_PGMIGRATE_SUCCESS);
	pthread_barrier_init(&s->leave, NULL, NR);
	for (int i = 0; i < NR; i++) {
		w[i] = (struct racer){ .s = s, .id = i < WRITERS ? i : 0 };
		if (pthread_create(&w[i].th, NULL, fns[i], &w[i]))
			BAIL_OUT("pthread_create failed");
	}
	for (end = now() + 1.5; now() < end;) {
		struct timespec ts = { 0, 20 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
	__atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < NR; i++) {
		pthread_join(w[i].th, NULL);
		bad += w[i].bad;
		errors += w[i].errors;
	}
	pthread_barrier_destroy(&s->leave);
	diag("race: writes %lu + %lu, reads %lu, churn %lu, migration calls %lu (%ld pages busy)",
	     w[0].ops, w[1].ops, w[2].ops, w[3].ops, w[4].ops, w[4].not_moved);
	ok(w[0].ops && w[1].ops && w[2].ops && w[3].ops && w[4].ops > 10,
	   "race: every thread made progress");
	is(errors, 0, "race: no call failed");
	is(bad, 0, "race: no torn, stale or foreign page was ever read");
	ok(nst(m, 0, LV_PGMIGRATE_SUCCESS) + nst(m, 1, LV_PGMIGRATE_SUCCESS) - succ0 >= RACE_PAGES,
	   "race: pages did migrate under the users");
	for (unsigned int p = 0; p < RACE_PAGES; p++) {
		if (lv_mm_read(s->mm, s->r + (uint64_t)p * PAGE, words, PAGE))
			wrong++;
		else
			wrong += check_page(words, p, s->version[p]) ||
				 (unsigned int)words[0] != s->version[p];
	}
	is(wrong, 0, "race: every page holds its last write, byte-exact");
	is(lv_mm_rss(s->mm), RACE_PAGES, "race: rss %d", RACE_PAGES);
	lv_lru_add_drain_all(m);
	is(lv_memcg_usage(a), RACE_PAGES, "race: usage %d (the churn's pages all released)",
	   RACE_PAGES);
	is(lv_migrate_pages(s->mm, ~0ull, 1), 0, "race: quiet: everything moves to node 1");
	is(pages_on(s->mm, s->r, RACE_PAGES, 1), RACE_PAGES, "race: all on node 1");
	finish_mm(m, s->mm, a, "race");
	free(s);
}

/* ---- other machine shapes ---------------------------------------------------------------- */

static void test_shapes(void)
{
	static const struct {
		const char *name;
		bool metadata_only, memcg_disabled;
		enum lv_lock_design design;
		enum lv_disable_mode mode;
	} shapes[] = {
		{ "node lock", false, false, LV_LOCK_NODE, LV_DISABLE_SWEEP },
		{ "memcg disabled", false, true, LV_LOCK_LRUVEC, LV_DISABLE_SWEEP },
		{ "metadata only", true, false, LV_LOCK_LRUVEC, LV_DISABLE_SWEEP },
		{ "rcu disable", false, false, LV_LOCK_LRUVEC, LV_DISABLE_RCU },
	};

	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		struct lv_config cfg = small_config();
		const char *name = shapes[i].name;
		struct lv_machine *m;
		struct lv_mm *mm;
		uint64_t r;

		cfg.nr_nodes = 2;
		cfg.nr_cpu_slots = 2;
		cfg.metadata_only = shapes[i].metadata_only;
		cfg.memcg_disabled = shapes[i].memcg_disabled;
		cfg.lock_design = shapes[i].design;
		cfg.disable_mode = shapes[i].mode;
		m = new_machine(&cfg);
		mm = new_mm(m, NULL, 0);
		r = map_or_bail(mm, 64 * PAGE);
		is(write_pat(mm, r, 64 * PAGE, 1), 0, "%s: 64 pages on node 0", name);
		is(lv_migrate_pages(mm, 1ull << 0, 1), 0, "%s: migrate to node 1 -> 0", name);
		is(pages_on(mm, r, 64, 1), 64, "%s: all on node 1", name);
		is(nst(m, 1, LV_NR_CHARGED), 64, "%s: node 1 has 64 allocated", name);
		is(nst(m, 0, LV_NR_CHARGED), 0, "%s: node 0 none", name);
		is(nst(m, 1, LV_PGMIGRATE_SUCCESS), 64, "%s: pgmigrate_success 64", name);
		is(nst(m, 1, LV_NR_INACTIVE_ANON), 64, "%s: on node 1's anon list", name);
		if (cfg.metadata_only)
			is(bad_pat(mm, r, 64 * PAGE, -1), 0, "%s: reads zeros (no frames)", name);
		else
			is(bad_pat(mm, r, 64 * PAGE, 1), 0, "%s: data byte-exact", name);
		check_ok(m, name);
		lv_mm_destroy(mm);
		finish(m, name);
	}
	is_str(lv_stat_name(LV_PGMIGRATE_SUCCESS), "pgmigrate_success", "stat name: success");
	is_str(lv_stat_name(LV_PGMIGRATE_FAIL), "pgmigrate_fail", "stat name: fail");
}

int main(void)
{
	test_migrate_pages();
	test_mask();
	test_move_pages();
	test_busy();
	test_enomem();
	test_disable_nesting();
	test_file_migrate();
	test_file_migrate_readers();
	test_race();
	test_shapes();
	return done_testing();
}
