// SPDX-License-Identifier: LGPL-2.1-or-later
/* Folio allocation and references: lv_folio_alloc on every node and order, real and zeroed
 * data, every EINVAL, exhaustion (ENOMEM) without losing pages, get/try_get/put, accessors,
 * node statistics and watermarks, and one zone lock hold for a batch of large frees. */
#include "lvtest.h"

#include <pthread.h>
#include <sched.h>

#define NODES 2

static void test_orders_and_nodes(void)
{
	struct lv_config cfg = small_config();
	struct lv_folio *f[NODES][LV_MAX_ORDER + 1];
	struct lv_machine *m;
	uint64_t free0[NODES];
	int bad_data = 0, bad_zero = 0, overlap = 0;

	cfg.nr_nodes = NODES;
	m = new_machine(&cfg);
	for (int nid = 0; nid < NODES; nid++) {
		free0[nid] = lv_node_stat(m, nid, LV_NR_FREE);
		is(free0[nid], SMALL_PAGES, "node %d starts with all %lu pages free", nid,
		   SMALL_PAGES);
	}
	for (int nid = 0; nid < NODES; nid++) {
		uint64_t used = 0;

		for (unsigned int order = 0; order <= LV_MAX_ORDER; order++) {
			unsigned int flags = order % 2 ? LV_FOLIO_ANON : 0;
			struct lv_folio *x = lv_folio_alloc(m, nid, order, NULL, flags);

			f[nid][order] = x;
			ok(x != NULL, "alloc node %d order %u", nid, order);
			if (!x)
				BAIL_OUT("cannot continue without the folio");
			used += 1ul << order;
			is(lv_folio_nid(x), nid, "node %d order %u: lv_folio_nid", nid, order);
			is(lv_folio_nr_pages(x), 1u << order, "node %d order %u: nr_pages", nid,
			   order);
			is(lv_folio_ref_count(x), 1, "node %d order %u: one reference", nid, order);
			ok(!lv_folio_test(x, LV_PG_LRU) && !lv_folio_test(x, LV_PG_ACTIVE),
			   "node %d order %u: not on any LRU", nid, order);
			is(lv_folio_test(x, LV_PG_SWAPBACKED), order % 2,
			   "node %d order %u: swapbacked iff LV_FOLIO_ANON", nid, order);
			ok(lv_folio_memcg(x) == lv_memcg_root(m),
			   "node %d order %u: charged to root", nid, order);
			is(lv_node_stat(m, nid, LV_NR_FREE), free0[nid] - used,
			   "node %d order %u: free pages drop by %u", nid, order, 1u << order);
			is(lv_node_stat(m, nid, LV_NR_CHARGED), used,
			   "node %d order %u: node charged = pages allocated", nid, order);
		}
		is(lv_node_stat(m, 1 - nid, LV_NR_CHARGED),
		   nid ? (1u << (LV_MAX_ORDER + 1)) - 1 : 0,
		   "node %d allocations leave node %d alone", nid, 1 - nid);
	}
	is(lv_memcg_usage(lv_memcg_root(m)), 2 * ((1u << (LV_MAX_ORDER + 1)) - 1),
	   "root usage counts every allocated page");

	/* Real frames: the whole range is writable and folios do not overlap. */
	for (int nid = 0; nid < NODES; nid++)
		for (unsigned int order = 0; order <= LV_MAX_ORDER; order++) {
			unsigned char *d = lv_folio_data(f[nid][order]);
			size_t len = LV_PAGE_SIZE << order;

			memset(d, 0xa0 + (int)order, len);
		}
	for (int nid = 0; nid < NODES; nid++)
		for (unsigned int order = 0; order <= LV_MAX_ORDER; order++) {
			unsigned char *d = lv_folio_data(f[nid][order]);
			size_t len = LV_PAGE_SIZE << order;

			for (size_t i = 0; i < len; i += 509)
				if (d[i] != 0xa0 + order)
					bad_data++;
			if (d[len - 1] != 0xa0 + order)
				bad_data++;
			for (int n2 = 0; n2 < NODES; n2++)
				for (unsigned int o2 = 0; o2 <= LV_MAX_ORDER; o2++) {
					unsigned char *e = lv_folio_data(f[n2][o2]);

					if ((n2 != nid || o2 != order) && e < d + len &&
					    d < e + (LV_PAGE_SIZE << o2))
						overlap++;
				}
		}
	is(bad_data, 0, "every folio's data holds what was written (no overlap, real frames)");
	is(overlap, 0, "no two folios share a frame");

	/* Free them (dirty), then allocate zeroed: the frames come back zero. */
	for (int nid = 0; nid < NODES; nid++)
		for (unsigned int order = 0; order <= LV_MAX_ORDER; order++)
			lv_folio_put(f[nid][order]);
	for (int nid = 0; nid < NODES; nid++)
		is(lv_node_stat(m, nid, LV_NR_FREE), free0[nid], "node %d: all pages back", nid);
	for (int nid = 0; nid < NODES; nid++)
		for (unsigned int order = 0; order <= LV_MAX_ORDER; order++) {
			struct lv_folio *x = alloc_or_bail(m, nid, order, NULL, LV_FOLIO_ZERO);
			unsigned char *d = lv_folio_data(x);

			for (size_t i = 0; i < LV_PAGE_SIZE << order; i++)
				if (d[i]) {
					bad_zero++;
					break;
				}
			f[nid][order] = x;
		}
	is(bad_zero, 0, "LV_FOLIO_ZERO folios read all zero after dirty frames were freed");
	for (int nid = 0; nid < NODES; nid++)
		for (unsigned int order = 0; order <= LV_MAX_ORDER; order++)
			lv_folio_put(f[nid][order]);
	/* Reuse of a just-freed order-0 frame, dirtied: must be zeroed. */
	{
		struct lv_folio *x = alloc_or_bail(m, 0, 0, NULL, 0);
		unsigned char *d = lv_folio_data(x), *e;
		size_t nz = 0;

		memset(d, 0xff, LV_PAGE_SIZE);
		lv_folio_put(x);
		x = alloc_or_bail(m, 0, 0, NULL, LV_FOLIO_ZERO);
		e = lv_folio_data(x);
		for (size_t i = 0; i < LV_PAGE_SIZE; i++)
			nz += e[i] != 0;
		is(nz, 0, "zeroed re-allocation of a dirty frame (%s frame)",
		   e == d ? "same" : "other");
		lv_folio_put(x);
	}
	finish(m, "orders machine");
}

static void test_einval(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m;
	struct lv_folio *f;

	cfg.nr_nodes = NODES;
	m = new_machine(&cfg);
#define BAD(call, what)                                                                            \
	do {                                                                                       \
		errno = 0;                                                                         \
		f = (call);                                                                        \
		ok(f == NULL && errno == EINVAL, "%s -> NULL, EINVAL", what);                      \
		if (f)                                                                             \
			lv_folio_put(f);                                                           \
	} while (0)
	BAD(lv_folio_alloc(m, -1, 0, NULL, 0), "nid -1");
	BAD(lv_folio_alloc(m, NODES, 0, NULL, 0), "nid == nr_nodes");
	BAD(lv_folio_alloc(m, 1000, 0, NULL, 0), "nid 1000");
	BAD(lv_folio_alloc(m, 0, LV_MAX_ORDER + 1, NULL, 0), "order 10");
	BAD(lv_folio_alloc(m, 0, 64, NULL, 0), "order 64");
	BAD(lv_folio_alloc(m, 0, 0, NULL, 0x4), "flags 0x4");
	BAD(lv_folio_alloc(m, 0, 0, NULL, LV_FOLIO_ANON | 0x80000000u), "flags with a high bit");
#undef BAD
	is(lv_node_stat(m, 0, LV_NR_FREE), SMALL_PAGES, "failed allocations take no page (node 0)");
	is(lv_node_stat(m, 1, LV_NR_FREE), SMALL_PAGES, "failed allocations take no page (node 1)");
	is(lv_memcg_usage(lv_memcg_root(m)), 0, "failed allocations charge nothing");
	finish(m, "einval machine");
}

/* Exhaust a node with order-0 and order-9 folios, charged to a memcg. */
static void test_exhaust(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m;
	struct lv_memcg *mg;
	struct lv_folio **fs;
	size_t n = 0, nr_pages = 4 * MiB / LV_PAGE_SIZE;
	uint64_t free0;
	int err;

	cfg.node_mem_bytes = 4 * MiB;
	cfg.metadata_only = true;
	m = new_machine(&cfg);
	mg = lv_memcg_create(m, NULL, "hog");
	ok(mg != NULL, "exhaust: memcg");
	fs = calloc(nr_pages + 1, sizeof(*fs));
	free0 = lv_node_stat(m, 0, LV_NR_FREE);
	is(free0, nr_pages, "exhaust: 1024 free pages");

	/* Half of it as one order-9 folio, the rest page by page. */
	fs[n] = lv_folio_alloc(m, 0, LV_MAX_ORDER, mg, 0);
	ok(fs[n] != NULL, "exhaust: one order-9 folio");
	if (fs[n])
		n++;
	for (;;) {
		struct lv_folio *f = lv_folio_alloc(m, 0, 0, mg, LV_FOLIO_ANON);

		if (!f) {
			err = errno;
			break;
		}
		if (n == nr_pages + 1)
			BAIL_OUT("more folios than pages");
		fs[n++] = f;
	}
	is(err, ENOMEM, "exhausted node: lv_folio_alloc fails with ENOMEM");
	is(n - 1, nr_pages - 512, "every remaining free page was allocatable as order 0");
	is(lv_node_stat(m, 0, LV_NR_FREE), 0, "exhausted node: LV_NR_FREE is 0");
	is(lv_node_stat(m, 0, LV_NR_CHARGED), nr_pages, "exhausted node: LV_NR_CHARGED is all");
	is(lv_memcg_usage(mg), nr_pages, "the failed allocation's charge was backed out");
	errno = 0;
	ok(lv_folio_alloc(m, 0, LV_MAX_ORDER, mg, 0) == NULL && errno == ENOMEM,
	   "exhausted node: order 9 fails with ENOMEM");
	errno = 0;
	ok(lv_folio_alloc(m, 0, 3, NULL, 0) == NULL && errno == ENOMEM,
	   "exhausted node: order 3 fails with ENOMEM (root)");
	is(lv_memcg_usage(mg), nr_pages, "memcg usage unchanged by the failures");

	/* Put some on the LRU before freeing, to free through both paths. */
	for (size_t i = 0; i < n; i += 3)
		lv_folio_add_lru(fs[i]);
	lv_folios_put(fs, n);
	/* The batch still holds the queued ones: draining drops the last references. */
	lv_lru_add_drain_all(m);
	is(lv_node_stat(m, 0, LV_NR_FREE), free0,
	   "after freeing everything LV_NR_FREE is back to 1024");
	is(lv_node_stat(m, 0, LV_NR_CHARGED), 0, "nothing charged on the node");
	is(lv_memcg_usage(mg), 0, "memcg usage back to 0");
	is(lv_memcg_usage(lv_memcg_root(m)), 0, "root usage back to 0");

	/* And it can all be allocated again. */
	n = 0;
	while (n < nr_pages && (fs[n] = lv_folio_alloc(m, 0, 0, NULL, 0)) != NULL)
		n++;
	is(n, nr_pages, "all 1024 pages allocatable again (no page lost)");
	lv_folios_put(fs, n);
	free(fs);
	is(lv_memcg_remove(mg), 0, "exhaust: memcg removed");
	finish(m, "exhaust machine");
}

/*
 * A node whose free pages sit in another CPU slot's page cache is not out of memory: every
 * page LV_NR_FREE reports must be allocatable from any CPU. Needs two CPUs to pin to.
 */
static void test_exhaust_across_cpus(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m;
	struct lv_folio **fs, *f;
	size_t n = 0, nr_pages = 4 * MiB / LV_PAGE_SIZE;
	cpu_set_t orig, set;
	uint64_t free_before;

	if (sched_getaffinity(0, sizeof(orig), &orig) || CPU_COUNT(&orig) < 2) {
		skip("needs two CPUs");
		return;
	}
	int cpus[2], k = 0;

	for (int c = 0; c < CPU_SETSIZE && k < 2; c++)
		if (CPU_ISSET(c, &orig))
			cpus[k++] = c;
	cfg.node_mem_bytes = 4 * MiB;
	cfg.metadata_only = true;
	cfg.nr_cpu_slots = 0; /* real per-CPU slots */
	m = new_machine(&cfg);
	if (cpus[0] % lv_machine_config(m)->nr_cpu_slots ==
	    cpus[1] % lv_machine_config(m)->nr_cpu_slots) {
		skip("the two CPUs share a slot");
		lv_machine_destroy(m);
		return;
	}
	CPU_ZERO(&set);
	CPU_SET(cpus[0], &set);
	sched_setaffinity(0, sizeof(set), &set);
	f = alloc_or_bail(m, 0, 0, NULL, 0); /* fills CPU A's page cache */
	lv_folio_put(f);
	CPU_ZERO(&set);
	CPU_SET(cpus[1], &set);
	sched_setaffinity(0, sizeof(set), &set);
	free_before = lv_node_stat(m, 0, LV_NR_FREE);
	fs = calloc(nr_pages, sizeof(*fs));
	while (n < nr_pages && (f = lv_folio_alloc(m, 0, 0, NULL, 0)) != NULL)
		fs[n++] = f;
	sched_setaffinity(0, sizeof(orig), &orig);
	is(n, free_before, "from another CPU, all %llu free pages are allocatable",
	   (unsigned long long)free_before);
	if (n < free_before)
		diag("allocated %zu, LV_NR_FREE still reports %llu", n,
		     (unsigned long long)lv_node_stat(m, 0, LV_NR_FREE));
	lv_folios_put(fs, n);
	free(fs);
	is(lv_node_stat(m, 0, LV_NR_FREE), nr_pages, "cross-CPU: every page back");
	finish(m, "cross-CPU machine");
}

static void test_refcounts(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_folio *f = alloc_or_bail(m, 0, 2, NULL, 0);

	is(lv_folio_ref_count(f), 1, "new folio: refcount 1");
	lv_folio_get(f);
	is(lv_folio_ref_count(f), 2, "after get: 2");
	ok(lv_folio_try_get(f), "try_get on a live folio succeeds");
	is(lv_folio_ref_count(f), 3, "after try_get: 3");
	lv_folio_put(f);
	is(lv_folio_ref_count(f), 2, "after put: 2");
	lv_folio_put(f);
	is(lv_folio_ref_count(f), 1, "after put: 1");
	is(lv_node_stat(m, 0, LV_NR_FREE), SMALL_PAGES - 4, "still allocated while referenced");
	lv_folio_put(f);
	is(lv_node_stat(m, 0, LV_NR_FREE), SMALL_PAGES, "last put frees the 4 pages");

	/* lv_folios_put drops exactly one reference per entry, duplicates included. */
	f = alloc_or_bail(m, 0, 0, NULL, 0);
	lv_folio_get(f);
	lv_folio_get(f);
	{
		struct lv_folio *arr[2] = { f, f };

		lv_folios_put(arr, 2);
	}
	is(lv_folio_ref_count(f), 1, "lv_folios_put of the same folio twice drops two references");
	lv_folios_put(&f, 1);
	is(lv_node_stat(m, 0, LV_NR_FREE), SMALL_PAGES,
	   "lv_folios_put frees on the last reference");
	lv_folios_put(NULL, 0);
	ok(1, "lv_folios_put of an empty array is harmless");
	finish(m, "refcount machine");
}

static void test_node_stats(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m;
	struct lv_folio *fs[40];
	uint64_t total = 0;

	cfg.nr_nodes = NODES;
	m = new_machine(&cfg);
	for (int nid = 0; nid < NODES; nid++) {
		uint64_t mn = lv_node_stat(m, nid, LV_WMARK_MIN),
			 lo = lv_node_stat(m, nid, LV_WMARK_LOW),
			 hi = lv_node_stat(m, nid, LV_WMARK_HIGH);

		ok(mn > 0 && mn < lo && lo < hi,
		   "node %d: 0 < wmark min %llu < low %llu < high %llu", nid,
		   (unsigned long long)mn, (unsigned long long)lo, (unsigned long long)hi);
		ok(hi < SMALL_PAGES, "node %d: high watermark below the node size", nid);
	}
	for (int i = 0; i < 40; i++) {
		fs[i] = alloc_or_bail(m, i % NODES, (unsigned int)i % 4, NULL, 0);
		total += 1u << (i % 4);
	}
	for (int nid = 0; nid < NODES; nid++)
		is(lv_node_stat(m, nid, LV_NR_FREE) + lv_node_stat(m, nid, LV_NR_CHARGED),
		   SMALL_PAGES, "node %d: free + charged = node pages", nid);
	is(lv_node_stat(m, 0, LV_NR_CHARGED) + lv_node_stat(m, 1, LV_NR_CHARGED), total,
	   "charged over both nodes = pages allocated");
	is(lv_memcg_usage(lv_memcg_root(m)), total, "root usage = pages allocated");
	is(lv_memcg_stat(lv_memcg_root(m), LV_NR_CHARGED), total,
	   "root LV_NR_CHARGED = pages allocated");
	is(lv_node_stat(m, 0, LV_NR_STAT_ITEMS), 0, "bad item -> 0");
	is(lv_node_stat(m, 0, (enum lv_stat_item) - 1), 0, "negative item -> 0");
	is(lv_node_stat(m, -1, LV_NR_FREE), 0, "bad node -> 0");
	is(lv_node_stat(m, NODES, LV_NR_FREE), 0, "node == nr_nodes -> 0");
	check_ok(m, "node stats with folios allocated");
	lv_folios_put(fs, 40);
	finish(m, "node stats machine");
}

static uint64_t zone_acquired(struct lv_machine *m)
{
	struct lv_lock_stat s;

	lv_lock_stats(m, LV_LOCK_CLASS_ZONE, &s);
	return s.acquired;
}

/*
 * A batch of frees keeps the zone lock across consecutive large blocks of one node (as the
 * kernel's bulk free does), and gives it up for an order-0 frame (which goes to a page list,
 * whose lock ranks above it) or another node's zone.
 */
static void test_batched_free(void)
{
	struct lv_config cfg = small_config();
	struct lv_folio *f[8];
	struct lv_machine *m;
	uint64_t free0, free1;

	cfg.nr_nodes = NODES;
	m = new_machine(&cfg);
	free0 = lv_node_stat(m, 0, LV_NR_FREE);
	free1 = lv_node_stat(m, 1, LV_NR_FREE);
	for (int i = 0; i < 8; i++)
		f[i] = alloc_or_bail(m, 0, 3, NULL, 0);
	lv_lock_stats_reset(m);
	lv_folios_put(f, 8);
	is(zone_acquired(m), 1, "batched free: 8 order-3 folios, one zone lock acquisition");
	is(lv_node_stat(m, 0, LV_NR_FREE), free0, "batched free: all pages back");

	f[0] = alloc_or_bail(m, 0, 3, NULL, 0);
	f[1] = alloc_or_bail(m, 0, 2, NULL, 0);
	f[2] = alloc_or_bail(m, 0, 0, NULL, 0);
	f[3] = alloc_or_bail(m, 0, 3, NULL, 0);
	f[4] = alloc_or_bail(m, 1, 3, NULL, 0);
	f[5] = alloc_or_bail(m, 1, 1, NULL, 0);
	lv_lock_stats_reset(m);
	lv_folios_put(f, 6);
	is(zone_acquired(m), 3,
	   "batched free: large, large, order 0, large, other node's large, large: 3 holds");
	is(lv_node_stat(m, 0, LV_NR_FREE), free0, "batched free: node 0 pages back");
	is(lv_node_stat(m, 1, LV_NR_FREE), free1, "batched free: node 1 pages back");
	finish(m, "batched free");
}

int main(void)
{
	test_orders_and_nodes();
	test_einval();
	test_exhaust();
	test_exhaust_across_cpus();
	test_refcounts();
	test_node_stats();
	test_batched_free();
	return done_testing();
}
