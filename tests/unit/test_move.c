// SPDX-License-Identifier: LGPL-2.1-or-later
/* Charge moving: lv_folio_move_memcg success, no-op, every error (with nothing changed),
 * hierarchical moves, and events surviving the source's removal. */
#include "lvtest.h"

#define S(item) nstat(m, (item))

static struct lv_machine *move_machine(enum lv_lock_design design, unsigned int nodes)
{
	struct lv_config cfg = small_config();

	cfg.metadata_only = true;
	cfg.lock_design = design;
	cfg.nr_nodes = nodes;
	return new_machine(&cfg);
}

static void test_move_success(enum lv_lock_design design)
{
	const char *d = design == LV_LOCK_NODE ? "node lock" : "lruvec lock";
	struct lv_machine *m = move_machine(design, 2);
	struct lv_memcg *a = lv_memcg_create(m, NULL, "a");
	struct lv_memcg *b = lv_memcg_create(m, NULL, "b");
	struct lv_folio *f = alloc_or_bail(m, 1, 2, a, 0);
	struct lv_folio *u = alloc_or_bail(m, 0, 0, a, LV_FOLIO_ANON);
	struct lv_folio *other = alloc_or_bail(m, 1, 0, a, 0);
	size_t root_usage;

	lv_folio_set_state(u, LV_PG_MLOCKED, true);
	lv_folio_add_lru(f);
	lv_folio_add_lru(u);
	lv_folio_add_lru(other);
	lv_lru_add_drain(m);
	lv_folio_activate(f);
	lv_lru_add_drain(m);
	root_usage = lv_memcg_usage(lv_memcg_root(m));
	is(lv_memcg_stat(a, LV_NR_ACTIVE_FILE), 4, "%s: setup: f active in a", d);

	is(lv_folio_move_memcg(f, b), 0, "%s: move f a -> b", d);
	ok(lv_folio_memcg(f) == b, "%s: f's memcg is b", d);
	is(lv_memcg_usage(a), 2, "%s: a's usage drops by 4", d);
	is(lv_memcg_usage(b), 4, "%s: b's usage rises by 4", d);
	is(lv_memcg_usage(lv_memcg_root(m)), root_usage, "%s: root usage unchanged", d);
	is(lv_folio_ref_count(f), 1 + !lv_folio_test(f, LV_PG_LRU),
	   "%s: no reference leaked (queued or linked)", d);
	lv_lru_add_drain(m);
	ok(lv_folio_test(f, LV_PG_LRU), "%s: f on an LRU after the drain", d);
	ok(lv_folio_test(f, LV_PG_ACTIVE), "%s: f kept PG_active", d);
	is(lv_memcg_stat(b, LV_NR_ACTIVE_FILE), 4, "%s: f on b's active file list", d);
	is(lv_memcg_stat(a, LV_NR_ACTIVE_FILE), 0, "%s: off a's list", d);
	is(lv_node_stat(m, 1, LV_NR_ACTIVE_FILE), 4, "%s: still on node 1", d);
	is(lv_memcg_stat(a, LV_PGMOVED), 4, "%s: pgmoved counted on the source", d);
	is(lv_memcg_stat(b, LV_PGMOVED), 0, "%s: not on the destination", d);
	is(lv_node_stat(m, 1, LV_PGMOVED), 4, "%s: node 1 pgmoved 4", d);
	is(lv_folio_ref_count(f), 1, "%s: refcount back to 1", d);

	is(lv_folio_move_memcg(u, b), 0, "%s: move the unevictable folio", d);
	lv_lru_add_drain(m);
	is(lv_memcg_stat(b, LV_NR_UNEVICTABLE), 1, "%s: counted unevictable in b", d);
	is(lv_memcg_stat(a, LV_NR_UNEVICTABLE), 0, "%s: not in a", d);
	ok(lv_folio_test(u, LV_PG_UNEVICTABLE) && !lv_folio_test(u, LV_PG_ACTIVE),
	   "%s: still unevictable", d);

	/* Back again to the root. */
	is(lv_folio_move_memcg(f, lv_memcg_root(m)), 0, "%s: move f b -> root", d);
	is(lv_memcg_usage(b), 1, "%s: b keeps only u", d);
	lv_lru_add_drain(m);
	is(lv_memcg_stat(lv_memcg_root(m), LV_NR_ACTIVE_FILE), 4, "%s: f on the root's list", d);
	check_ok(m, d);
	lv_folio_put(f);
	lv_folio_put(u);
	lv_folio_put(other);
	is(lv_memcg_remove(a), 0, "%s: remove a", d);
	is(lv_memcg_remove(b), 0, "%s: remove b", d);
	finish(m, d);
}

static void test_move_noop_and_errors(void)
{
	struct lv_machine *m = move_machine(LV_LOCK_LRUVEC, 1);
	struct lv_memcg *a = lv_memcg_create(m, NULL, "a");
	struct lv_memcg *b = lv_memcg_create(m, NULL, "b");
	struct lv_folio *f = alloc_or_bail(m, 0, 0, a, 0);
	struct lv_folio *n = alloc_or_bail(m, 0, 0, a, 0);
	struct lv_folio *big = alloc_or_bail(m, 0, 3, a, LV_FOLIO_ANON);

	lv_folio_add_lru(f);
	lv_folio_add_lru(big);
	lv_lru_add_drain(m);
	lv_folio_activate(big);
	lv_lru_add_drain(m);

	/* Same memcg: nothing happens at all, not even a trip through a batch. */
	is(lv_folio_move_memcg(f, a), 0, "move to its own memcg -> 0");
	ok(lv_folio_test(f, LV_PG_LRU), "same memcg: still on the LRU (no drain needed)");
	is(lv_folio_ref_count(f), 1, "same memcg: no reference taken");
	is(lv_memcg_usage(a), 10, "same memcg: usage unchanged");
	is(lv_memcg_stat(a, LV_PGMOVED), 0, "same memcg: no pgmoved");
	ok(lv_folio_memcg(f) == a, "same memcg: binding unchanged");

	/* Not on an LRU. */
	is(lv_folio_move_memcg(n, b), -EBUSY, "never-added folio -> -EBUSY");
	lv_folio_add_lru(n);
	is(lv_folio_move_memcg(n, b), -EBUSY, "queued folio -> -EBUSY");
	lv_lru_add_drain(m);
	is(lv_folio_isolate_lru(n), 0, "isolate n");
	is(lv_folio_move_memcg(n, b), -EBUSY, "isolated folio -> -EBUSY");
	ok(lv_folio_memcg(n) == a, "refused moves left n in a");
	is(lv_memcg_usage(b), 0, "refused moves charged nothing to b");
	is(lv_folio_putback_lru(n), 0, "putback n");
	lv_lru_add_drain(m);

	/* Bad destinations. */
	is(lv_folio_move_memcg(f, NULL), -EINVAL, "to NULL -> -EINVAL");
	ok(lv_folio_test(f, LV_PG_LRU) && lv_folio_memcg(f) == a, "NULL: nothing changed");

	/* Destination full. */
	is(lv_memcg_set_max(b, 7), 0, "b limited to 7 pages");
	is(lv_folio_move_memcg(big, b), -ENOMEM, "8 pages into b (limit 7) -> -ENOMEM");
	ok(lv_folio_memcg(big) == a, "ENOMEM: binding unchanged");
	is(lv_memcg_usage(a), 10, "ENOMEM: a's charge unchanged");
	is(lv_memcg_usage(b), 0, "ENOMEM: b's charge unchanged");
	is(lv_memcg_stat(a, LV_PGMOVED), 0, "ENOMEM: no pgmoved");
	ok(lv_folio_test(big, LV_PG_LRU),
	   "ENOMEM (large folio): still on the LRU when the call returns");
	lv_lru_add_drain(m);
	ok(lv_folio_test(big, LV_PG_LRU) && lv_folio_test(big, LV_PG_ACTIVE),
	   "ENOMEM: on a's active list");
	is(lv_memcg_stat(a, LV_NR_ACTIVE_ANON), 8, "ENOMEM: a's active anon still 8");
	is(lv_memcg_stat(b, LV_NR_ACTIVE_ANON), 0, "ENOMEM: nothing on b's lists");
	is(lv_folio_ref_count(big), 1, "ENOMEM: no reference leaked");
	/* An order-0 folio whose move fails must not be left in a batch, off its list. */
	is(lv_memcg_set_max(b, 0), 0, "b limited to 0 pages");
	lv_folio_activate(n);
	lv_lru_add_drain(m);
	is(lv_memcg_stat(a, LV_NR_ACTIVE_FILE), 1, "n active in a");
	is(lv_folio_move_memcg(n, b), -ENOMEM, "1 page into b (limit 0) -> -ENOMEM");
	ok(lv_folio_memcg(n) == a, "ENOMEM (order 0): binding unchanged");
	is(lv_memcg_usage(b), 0, "ENOMEM (order 0): b not charged");
	ok(lv_folio_test(n, LV_PG_LRU), "ENOMEM (order 0): still on the LRU when the call returns");
	is(lv_memcg_stat(a, LV_NR_ACTIVE_FILE), 1,
	   "ENOMEM (order 0): still counted on a's list without a drain");
	is(lv_folio_isolate_lru(n), 0, "ENOMEM (order 0): still isolatable right away");
	if (lv_folio_test(n, LV_PG_ISOLATED))
		lv_folio_putback_lru(n);
	lv_lru_add_drain(m);
	ok(lv_folio_test(n, LV_PG_ACTIVE) && lv_folio_test(n, LV_PG_LRU),
	   "ENOMEM (order 0): active on the LRU after a drain");
	is(lv_memcg_set_max(b, 7), 0, "b limited to 7 pages again");
	is(lv_folio_move_memcg(f, b), 0, "a 1-page folio still fits b");
	is(lv_memcg_usage(b), 1, "b usage 1");
	check_ok(m, "move errors");
	lv_folio_put(f);
	lv_folio_put(n);
	lv_folio_put(big);
	is(lv_memcg_remove(a), 0, "remove a");
	is(lv_memcg_remove(b), 0, "remove b");
	finish(m, "move errors machine");
}

static void test_move_disabled(void)
{
	struct lv_config cfg = small_config(), ocfg = small_config();
	struct lv_machine *m, *other;
	struct lv_memcg *foreign;
	struct lv_folio *f;

	cfg.memcg_disabled = true;
	m = new_machine(&cfg);
	other = new_machine(&ocfg);
	foreign = lv_memcg_create(other, NULL, "foreign");
	f = alloc_or_bail(m, 0, 0, NULL, 0);
	lv_folio_add_lru(f);
	lv_lru_add_drain_all(m);
	is(lv_folio_move_memcg(f, NULL), -EINVAL, "memcg disabled, to NULL -> -EINVAL");
	is(lv_folio_move_memcg(f, foreign), -EINVAL, "memcg disabled, to a memcg -> -EINVAL");
	ok(lv_folio_test(f, LV_PG_LRU) && lv_folio_memcg(f) == NULL,
	   "memcg disabled: nothing changed");
	is(lv_memcg_usage(foreign), 0, "the other machine's memcg was not charged");
	lv_folio_put(f);
	finish(m, "move disabled machine");
	is(lv_memcg_remove(foreign), 0, "remove foreign");
	finish(other, "other machine");
}

/* Linux 6.13+: charge_moving = false refuses every move, before looking at anything else. */
static void test_move_not_supported(void)
{
	struct lv_config cfg = small_config();
	struct lv_memcg *a, *b;
	struct lv_machine *m;
	struct lv_folio *f;

	lv_config_init(&cfg);
	ok(cfg.charge_moving, "charge moving is on by default (5.x)");
	cfg = small_config();
	cfg.charge_moving = false;
	m = new_machine(&cfg);
	a = lv_memcg_create(m, NULL, "a");
	b = lv_memcg_create(m, NULL, "b");
	f = alloc_or_bail(m, 0, 0, a, 0);
	lv_folio_add_lru(f);
	lv_lru_add_drain_all(m);
	is(lv_folio_move_memcg(f, b), -EOPNOTSUPP, "charge_moving false: move -> -EOPNOTSUPP");
	is(lv_folio_move_memcg(f, NULL), -EOPNOTSUPP, "charge_moving false: checked first");
	ok(lv_folio_memcg(f) == a && lv_folio_test(f, LV_PG_LRU), "the folio stayed where it was");
	is(lv_memcg_usage(a), 1, "a keeps the charge");
	is(lv_memcg_usage(b), 0, "b was not charged");
	lv_folio_put(f);
	is(lv_memcg_remove(a), 0, "remove a");
	is(lv_memcg_remove(b), 0, "remove b");
	finish(m, "charge moving off");
}

static void test_move_hierarchy(void)
{
	struct lv_machine *m = move_machine(LV_LOCK_LRUVEC, 1);
	struct lv_memcg *p = lv_memcg_create(m, NULL, "p");
	struct lv_memcg *c1 = lv_memcg_create(m, p, "c1");
	struct lv_memcg *c2 = lv_memcg_create(m, p, "c2");
	struct lv_memcg *q = lv_memcg_create(m, NULL, "q");
	struct lv_memcg *qc = lv_memcg_create(m, q, "qc");
	struct lv_folio *f = alloc_or_bail(m, 0, 1, c1, 0);
	struct lv_folio *g = alloc_or_bail(m, 0, 0, c2, LV_FOLIO_ANON);

	lv_folio_add_lru(f);
	lv_folio_add_lru(g);
	lv_lru_add_drain(m);
	is(lv_memcg_usage(p), 3, "p usage 3");
	is(lv_memcg_set_max(p, 3), 0, "p limited at its usage");

	is(lv_folio_move_memcg(f, c2), 0, "sibling move under a full parent works");
	is(lv_memcg_usage(c1), 0, "c1 usage 0");
	is(lv_memcg_usage(c2), 3, "c2 usage 3");
	is(lv_memcg_usage(p), 3, "p (common ancestor) keeps the charge");
	lv_lru_add_drain(m);
	is(lv_memcg_stat(c2, LV_NR_INACTIVE_FILE), 2, "f on c2's list");

	is(lv_folio_move_memcg(f, p), 0, "child -> parent");
	is(lv_memcg_usage(c2), 1, "c2 usage drops");
	is(lv_memcg_usage(p), 3, "p usage unchanged");
	ok(lv_folio_memcg(f) == p, "f bound to p");
	lv_lru_add_drain(m);
	is(lv_memcg_stat(p, LV_NR_INACTIVE_FILE), 2, "f on p's own list");
	is(lv_memcg_stat(c2, LV_NR_INACTIVE_FILE), 0, "off c2's list");

	is(lv_folio_move_memcg(f, c1), 0, "parent -> child");
	is(lv_memcg_usage(c1), 2, "c1 usage rises");
	is(lv_memcg_usage(p), 3, "p usage unchanged");
	lv_lru_add_drain(m);
	is(lv_memcg_stat(c1, LV_NR_INACTIVE_FILE), 2, "f on c1's list");

	is(lv_memcg_set_max(c2, 1), 0, "c2 limited to its usage");
	is(lv_folio_move_memcg(f, c2), -ENOMEM, "into a full sibling -> -ENOMEM");
	is(lv_memcg_usage(c1), 2, "c1 keeps the charge");
	is(lv_memcg_usage(c2), 1, "c2 unchanged");
	lv_lru_add_drain(m);

	/* Across subtrees: an ancestor of @to below the common ancestor is full. */
	is(lv_memcg_set_max(q, 1), 0, "q limited to 1 page");
	is(lv_folio_move_memcg(f, qc), -ENOMEM, "into qc whose parent q is too small -> -ENOMEM");
	is(lv_memcg_usage(q), 0, "q not charged");
	is(lv_memcg_usage(qc), 0, "qc not charged (backed out)");
	lv_lru_add_drain(m);
	is(lv_folio_move_memcg(g, qc), 0, "a 1-page folio fits q");
	is(lv_memcg_usage(q), 1, "q usage 1");
	is(lv_memcg_usage(p), 2, "p released g's page");
	lv_lru_add_drain(m);
	is(lv_memcg_stat(qc, LV_NR_INACTIVE_ANON), 1, "g on qc's list");
	check_ok(m, "hierarchical moves");
	lv_folio_put(f);
	lv_folio_put(g);
	is(lv_memcg_remove(qc), 0, "remove qc");
	is(lv_memcg_remove(q), 0, "remove q");
	is(lv_memcg_remove(c1), 0, "remove c1");
	is(lv_memcg_remove(c2), 0, "remove c2");
	is(lv_memcg_remove(p), 0, "remove p");
	finish(m, "hierarchy move machine");
}

static void test_events_survive_removal(void)
{
	struct lv_machine *m = move_machine(LV_LOCK_LRUVEC, 1);
	struct lv_memcg *src = lv_memcg_create(m, NULL, "src");
	struct lv_memcg *dst = lv_memcg_create(m, NULL, "dst");
	struct lv_folio *f = alloc_or_bail(m, 0, 2, src, 0);
	struct lv_folio *g = alloc_or_bail(m, 0, 0, src, LV_FOLIO_ANON);

	lv_folio_add_lru(f);
	lv_folio_add_lru(g);
	lv_lru_add_drain(m);
	lv_folio_activate(g);
	lv_lru_add_drain(m);
	is(lv_folio_move_memcg(f, dst), 0, "move f (4 pages) src -> dst");
	is(lv_folio_move_memcg(g, dst), 0, "move g (1 page) src -> dst");
	lv_lru_add_drain(m);
	is(S(LV_PGMOVED), 5, "node pgmoved 5");
	is(S(LV_PGACTIVATE), 1, "node pgactivate 1");
	is(lv_memcg_usage(src), 0, "src is empty");
	is(lv_memcg_remove(src), 0, "remove the empty source");
	is(S(LV_PGMOVED), 5, "after removal, node pgmoved still includes src's events");
	is(S(LV_PGACTIVATE), 1, "and its pgactivate");
	is(lv_memcg_stat(dst, LV_NR_ACTIVE_ANON), 1, "g lives on in dst");
	check_ok(m, "after removing the source");
	lv_folio_put(f);
	lv_folio_put(g);
	is(lv_memcg_remove(dst), 0, "remove dst");
	is(S(LV_PGMOVED), 5, "totals survive every removal");
	finish(m, "removal machine");
}

/* A request queued before the move is applied to the folio in its new lruvec. */
static void test_move_with_queued_requests(void)
{
	struct lv_machine *m = move_machine(LV_LOCK_LRUVEC, 1);
	struct lv_memcg *a = lv_memcg_create(m, NULL, "a");
	struct lv_memcg *b = lv_memcg_create(m, NULL, "b");
	struct lv_folio *f = alloc_or_bail(m, 0, 0, a, 0);
	struct lv_folio *g = alloc_or_bail(m, 0, 0, a, LV_FOLIO_ANON);

	lv_folio_add_lru(f);
	lv_folio_add_lru(g);
	lv_lru_add_drain(m);
	lv_folio_activate(f);	   /* queued for a's lruvec */
	lv_folio_mark_lazyfree(g); /* queued */
	is(lv_folio_move_memcg(f, b), 0, "move f with an activate queued");
	is(lv_folio_move_memcg(g, b), 0, "move g with a lazyfree queued");
	lv_lru_add_drain(m);
	ok(lv_folio_test(f, LV_PG_ACTIVE) && lv_folio_test(f, LV_PG_LRU),
	   "f activated after the move");
	is(lv_memcg_stat(b, LV_NR_ACTIVE_FILE), 1, "f on b's active list");
	is(lv_memcg_stat(b, LV_PGACTIVATE), 1, "pgactivate counted in b, where f now lives");
	is(lv_memcg_stat(a, LV_PGACTIVATE), 0, "not in a");
	ok(!lv_folio_test(g, LV_PG_SWAPBACKED), "g lazyfreed after the move");
	is(lv_memcg_stat(b, LV_NR_INACTIVE_FILE), 1, "g on b's inactive file list");
	is(lv_memcg_stat(a, LV_NR_INACTIVE_FILE) + lv_memcg_stat(a, LV_NR_ACTIVE_FILE) +
		   lv_memcg_stat(a, LV_NR_INACTIVE_ANON),
	   0, "a's lists are empty");
	is(lv_memcg_stat(a, LV_PGMOVED), 2, "two pages moved out of a");
	is(lv_folio_ref_count(f) + lv_folio_ref_count(g), 2, "all batch references dropped");
	check_ok(m, "move with queued requests");
	lv_folio_put(f);
	lv_folio_put(g);
	is(lv_memcg_remove(a), 0, "remove a");
	is(lv_memcg_remove(b), 0, "remove b");
	finish(m, "queued-request move machine");
}

int main(void)
{
	test_move_success(LV_LOCK_LRUVEC);
	test_move_success(LV_LOCK_NODE);
	test_move_noop_and_errors();
	test_move_disabled();
	test_move_not_supported();
	test_move_hierarchy();
	test_events_survive_removal();
	test_move_with_queued_requests();
	return done_testing();
}
