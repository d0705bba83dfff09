// SPDX-License-Identifier: LGPL-2.1-or-later
/* Memory cgroups: root, create/tree/name, limits and hierarchical charging, usage, removal
 * and its errors, reparenting, per-memcg statistics, memcg disabled. Where reparenting puts
 * folios on the parent's list needs the internal headers: no public call shows list order. */
#include "internal.h"

#include "lvtest.h"
#include "lvtest_internal.h" /* memcg_pending() */

static void test_root(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *root = lv_memcg_root(m);
	struct lv_folio *f, *g;

	ok(root != NULL, "root exists");
	ok(lv_memcg_root(m) == root, "lv_memcg_root is stable");
	ok(lv_memcg_parent(root) == NULL, "root has no parent");
	is_str(lv_memcg_name(root), "root", "root is named 'root'");
	is(lv_memcg_max(root), SIZE_MAX, "root has no limit");
	is(lv_memcg_set_max(root, 10), -EINVAL, "set_max on the root -> -EINVAL");
	is(lv_memcg_max(root), SIZE_MAX, "root limit unchanged");
	is(lv_memcg_remove(root), -EINVAL, "remove the root -> -EINVAL");
	is(lv_memcg_usage(root), 0, "root usage 0 on an empty machine");
	f = alloc_or_bail(m, 0, 4, NULL, 0);
	ok(lv_folio_memcg(f) == root, "NULL memcg charges the root");
	is(lv_memcg_usage(root), 16, "root usage counts the folio");
	g = alloc_or_bail(m, 0, 1, root, 0);
	ok(lv_folio_memcg(g) == root, "explicit root charge");
	is(lv_memcg_usage(root), 18, "root usage 18");
	is(lv_memcg_stat(root, LV_NR_CHARGED), 18, "root LV_NR_CHARGED 18");
	lv_folio_put(f);
	is(lv_memcg_usage(root), 2, "root usage after a put");
	lv_folio_put(g);
	is(lv_memcg_remove(root), -EINVAL, "remove the empty root -> still -EINVAL");
	finish(m, "root machine");
}

static void test_disabled(void)
{
	struct lv_config cfg = small_config(), ocfg = small_config();
	struct lv_machine *m, *other;
	struct lv_memcg *foreign;
	struct lv_folio *f, *g;

	cfg.memcg_disabled = true;
	m = new_machine(&cfg);
	other = new_machine(&ocfg);
	foreign = lv_memcg_create(other, NULL, "foreign");
	ok(lv_memcg_root(m) == NULL, "memcg disabled: root is NULL");
	errno = 0;
	ok(lv_memcg_create(m, NULL, "x") == NULL && errno == EINVAL,
	   "memcg disabled: lv_memcg_create -> NULL, EINVAL");
	f = alloc_or_bail(m, 0, 2, NULL, LV_FOLIO_ANON);
	ok(lv_folio_memcg(f) == NULL, "memcg disabled: folio not charged (memcg NULL)");
	g = lv_folio_alloc(m, 0, 0, foreign, 0);
	ok(g != NULL && lv_folio_memcg(g) == NULL, "memcg disabled: @memcg is ignored");
	is(lv_memcg_usage(foreign), 0, "the ignored memcg was not charged");
	is(lv_node_stat(m, 0, LV_NR_CHARGED), 5, "the node still counts allocated pages");
	lv_folio_add_lru(f);
	if (g)
		lv_folio_add_lru(g);
	lv_lru_add_drain_all(m);
	is(lv_node_stat(m, 0, LV_NR_INACTIVE_ANON), 4, "memcg disabled: LRU works (anon)");
	is(lv_node_stat(m, 0, LV_NR_INACTIVE_FILE), 1, "memcg disabled: LRU works (file)");
	check_ok(m, "disabled with folios on the LRU");
	lv_folio_put(f);
	if (g)
		lv_folio_put(g);
	finish(m, "disabled machine");
	is(lv_memcg_remove(foreign), 0, "foreign memcg removed");
	finish(other, "other machine");
}

static void test_tree(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *root = lv_memcg_root(m), *a, *b, *c, *anon, *lng;
	char name[128], longname[101];
	const char *n;

	strcpy(name, "alpha");
	a = lv_memcg_create(m, NULL, name);
	ok(a != NULL, "create a child of the root (parent NULL)");
	strcpy(name, "XXXXX");
	is_str(lv_memcg_name(a), "alpha", "the name was copied");
	ok(lv_memcg_parent(a) == root, "parent NULL means the root");
	is(lv_memcg_max(a), SIZE_MAX, "a new memcg has no limit");
	is(lv_memcg_usage(a), 0, "a new memcg has no usage");
	b = lv_memcg_create(m, a, "beta");
	ok(b && lv_memcg_parent(b) == a, "child of a has parent a");
	c = lv_memcg_create(m, root, "gamma");
	ok(c && lv_memcg_parent(c) == root, "explicit root parent");
	ok(a != b && b != c && a != c, "distinct handles");
	anon = lv_memcg_create(m, b, NULL);
	ok(anon != NULL, "NULL name is allowed");
	n = anon ? lv_memcg_name(anon) : "";
	ok(n == NULL || n[0] == '\0', "a NULL name gives an empty label");
	memset(longname, 'n', 100);
	longname[100] = '\0';
	lng = lv_memcg_create(m, NULL, longname);
	ok(lng != NULL, "long name is allowed");
	n = lng ? lv_memcg_name(lng) : "";
	is(strlen(n), 63, "at most 63 bytes of the name are used");
	ok(strncmp(n, longname, 63) == 0, "the kept part is the name's prefix");

	is(lv_memcg_remove(anon), 0, "remove leaf (NULL name)");
	is(lv_memcg_remove(lng), 0, "remove leaf (long name)");
	is(lv_memcg_remove(b), 0, "remove b");
	is(lv_memcg_remove(a), 0, "remove a after its child");
	is(lv_memcg_remove(c), 0, "remove c");
	finish(m, "tree machine");
}

static void test_limits(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *a = lv_memcg_create(m, NULL, "limited");
	struct lv_folio *f8, *f2, *f1, *x;

	is(lv_memcg_set_max(a, 10), 0, "set_max 10");
	is(lv_memcg_max(a), 10, "max is 10");
	errno = 0;
	ok(lv_folio_alloc(m, 0, 4, a, 0) == NULL && errno == ENOMEM,
	   "16 pages over a limit of 10 -> ENOMEM");
	is(lv_memcg_usage(a), 0, "failed charge leaves usage 0");
	f8 = lv_folio_alloc(m, 0, 3, a, 0);
	ok(f8 != NULL, "8 pages under the limit");
	f2 = lv_folio_alloc(m, 0, 1, a, 0);
	ok(f2 != NULL, "2 more: exactly at the limit succeeds");
	is(lv_memcg_usage(a), 10, "usage 10 = limit");
	errno = 0;
	x = lv_folio_alloc(m, 0, 0, a, 0);
	ok(x == NULL && errno == ENOMEM, "one page beyond the limit -> NULL, ENOMEM");
	if (x)
		lv_folio_put(x);
	is(lv_memcg_usage(a), 10, "usage unchanged by the failure");
	is(lv_node_stat(m, 0, LV_NR_CHARGED), 10, "the node allocated nothing for the failure");
	lv_folio_put(f2);
	is(lv_memcg_usage(a), 8, "freeing uncharges");
	f1 = lv_folio_alloc(m, 0, 0, a, 0);
	ok(f1 != NULL, "room again after a free");

	/* Lowering below usage is allowed; new charges fail until usage falls. */
	is(lv_memcg_set_max(a, 5), 0, "set_max below usage is allowed");
	is(lv_memcg_usage(a), 9, "usage not touched by lowering the limit");
	errno = 0;
	x = lv_folio_alloc(m, 0, 0, a, 0);
	ok(x == NULL && errno == ENOMEM, "over the lowered limit -> ENOMEM");
	if (x)
		lv_folio_put(x);
	lv_folio_put(f8);
	is(lv_memcg_usage(a), 1, "usage 1 after freeing 8");
	x = lv_folio_alloc(m, 0, 2, a, 0);
	ok(x != NULL, "1 + 4 = 5 pages fits the lowered limit exactly");
	lv_folio_put(x);

	is(lv_memcg_set_max(a, 0), 0, "set_max 0");
	errno = 0;
	x = lv_folio_alloc(m, 0, 0, a, 0);
	ok(x == NULL && errno == ENOMEM, "limit 0: every charge fails");
	if (x)
		lv_folio_put(x);
	is(lv_memcg_set_max(a, SIZE_MAX), 0, "set_max SIZE_MAX");
	is(lv_memcg_max(a), SIZE_MAX, "SIZE_MAX reads back as no limit");
	x = lv_folio_alloc(m, 0, LV_MAX_ORDER, a, 0);
	ok(x != NULL, "unlimited again: 512 pages");
	if (x)
		lv_folio_put(x);
	lv_folio_put(f1);
	is(lv_memcg_usage(a), 0, "all uncharged");
	is(lv_memcg_remove(a), 0, "remove limited");
	finish(m, "limits machine");
}

static void test_hierarchy(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *p = lv_memcg_create(m, NULL, "p");
	struct lv_memcg *c1 = lv_memcg_create(m, p, "c1");
	struct lv_memcg *c2 = lv_memcg_create(m, p, "c2");
	struct lv_memcg *gc = lv_memcg_create(m, c1, "gc");
	struct lv_folio *fp, *f1, *fg, *f2, *x;

	ok(p && c1 && c2 && gc, "tree p/{c1/gc, c2}");
	fp = alloc_or_bail(m, 0, 0, p, 0);
	f1 = alloc_or_bail(m, 0, 1, c1, 0);
	fg = alloc_or_bail(m, 0, 2, gc, 0);
	f2 = alloc_or_bail(m, 0, 3, c2, 0);
	is(lv_memcg_usage(gc), 4, "gc usage: own 4");
	is(lv_memcg_usage(c1), 6, "c1 usage: own 2 + gc 4");
	is(lv_memcg_usage(c2), 8, "c2 usage: own 8");
	is(lv_memcg_usage(p), 15, "p usage: 1 + 6 + 8");
	is(lv_memcg_stat(p, LV_NR_CHARGED), 15, "LV_NR_CHARGED is hierarchical");
	is(lv_memcg_usage(lv_memcg_root(m)), 15, "root usage: everything");

	/* The parent's limit restricts the children. */
	is(lv_memcg_set_max(p, 16), 0, "p limited to 16");
	errno = 0;
	x = lv_folio_alloc(m, 0, 1, gc, 0);
	ok(x == NULL && errno == ENOMEM, "grandchild charge over p's limit -> ENOMEM");
	if (x)
		lv_folio_put(x);
	is(lv_memcg_usage(gc), 4, "gc usage backed out after the ancestor refused");
	is(lv_memcg_usage(c1), 6, "c1 usage backed out");
	is(lv_memcg_usage(p), 15, "p usage unchanged");
	x = lv_folio_alloc(m, 0, 0, c2, 0);
	ok(x != NULL, "the last page under p's limit fits (sibling)");
	is(lv_memcg_usage(p), 16, "p at its limit");
	errno = 0;
	ok(lv_folio_alloc(m, 0, 0, c1, 0) == NULL && errno == ENOMEM,
	   "c1 (no own limit) is full through p");
	ok(lv_folio_alloc(m, 0, 0, p, 0) == NULL, "p itself is full");
	lv_folio_put(x);
	/* A child's own limit below the parent's. */
	is(lv_memcg_set_max(c2, 8), 0, "c2 limited to its usage");
	ok(lv_folio_alloc(m, 0, 0, c2, 0) == NULL, "c2 full at its own limit while p has room");
	x = lv_folio_alloc(m, 0, 0, c1, 0);
	ok(x != NULL, "c1 can still use p's room");
	lv_folio_put(x);

	lv_folio_put(fg);
	is(lv_memcg_usage(c1), 2, "uncharge climbs the tree (c1)");
	is(lv_memcg_usage(p), 11, "uncharge climbs the tree (p)");
	lv_folio_put(fp);
	lv_folio_put(f1);
	lv_folio_put(f2);
	is(lv_memcg_usage(p), 0, "p empty");
	is(lv_memcg_remove(gc), 0, "remove gc");
	is(lv_memcg_remove(c1), 0, "remove c1");
	is(lv_memcg_remove(c2), 0, "remove c2");
	is(lv_memcg_remove(p), 0, "remove p");
	finish(m, "hierarchy machine");
}

static void test_remove(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *p = lv_memcg_create(m, NULL, "p");
	struct lv_memcg *c = lv_memcg_create(m, p, "c");
	struct lv_memcg *k;
	struct lv_folio *f, *g;

	is(lv_memcg_remove(p), -EBUSY, "remove with a child -> -EBUSY");
	k = lv_memcg_create(m, p, "k");
	ok(k != NULL, "p still accepts children after the refused removal");
	is(lv_memcg_remove(k), 0, "remove k");

	/*
	 * A charged folio the caller holds off the LRU does not hold the removal up: it is
	 * charged through c's obj_cgroup, which now points at p, and joins p's lists when added.
	 */
	f = alloc_or_bail(m, 0, 0, c, 0);
	is(lv_memcg_remove(c), 0, "remove with a charged folio (not on the LRU) -> 0");
	ok(lv_folio_memcg(f) == p, "the folio off the LRU is p's now");
	is(lv_memcg_usage(p), 1, "p still counts its page");
	c = new_memcg(m, p, "c2");
	g = alloc_or_bail(m, 0, 0, c, LV_FOLIO_ANON);
	lv_folio_add_lru(g);
	lv_lru_add_drain_all(m);
	lv_folio_activate(g);
	lv_lru_add_drain_all(m);
	lv_folio_deactivate(g);
	is(lv_folio_add_lru(f), 0, "add the folio to the LRU (queued)");
	is(lv_memcg_stat(c, LV_NR_ACTIVE_ANON), 1,
	   "g on c's active anon list, deactivation queued");
	is(lv_memcg_stat(c, LV_NR_INACTIVE_FILE), 0, "f not on a list yet");
	is(lv_memcg_usage(p), 2, "p counts c's 2 pages");
	is(lv_memcg_remove(c), 0, "remove with LRU folios -> 0 (reparented)");
	lv_lru_add_drain_all(m); /* f is p's, queued: the removal's drain of c2 left it */
	ok(lv_folio_memcg(f) == p && lv_folio_memcg(g) == p, "both folios now belong to p");
	is(lv_memcg_usage(p), 2, "p's usage is unchanged: the charge moved with the folios");
	is(lv_memcg_stat(p, LV_NR_INACTIVE_FILE), 1, "f on p's inactive file list");
	is(lv_memcg_stat(p, LV_NR_INACTIVE_ANON), 1, "g on p's inactive anon list (deactivated)");
	is(nstat(m, LV_PGMOVED), 1, "pgmoved counts the reparented page on c2's lists");
	check_ok(m, "after reparenting");
	lv_folio_put(g);
	lv_folio_put(f);
	is(lv_memcg_usage(p), 0, "the last puts uncharged p");
	is(lv_memcg_remove(p), 0, "remove p now that it is empty -> 0");
	is(lv_memcg_usage(lv_memcg_root(m)), 0, "nothing charged");
	finish(m, "remove machine");
}

/*
 * Reparenting keeps the folios' order and puts them behind the parent's own: the removed
 * tenant's are reclaimed first. Isolated folios stay with the child and fail the removal;
 * what was moved stays moved. A parent at its limit takes the folios without reclaim.
 */
static void test_reparent(enum lv_lock_design design)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m;
	struct lv_memcg *p, *c;
	struct lv_folio *own[4], *moved[8], *mlocked[3];
	const char *d = design == LV_LOCK_NODE ? "node" : "lruvec";
	int in_order = 0;

	cfg.lock_design = design;
	m = new_machine(&cfg);
	p = new_memcg(m, NULL, "p");
	c = new_memcg(m, p, "c");
	for (int i = 0; i < 4; i++) {
		own[i] = alloc_or_bail(m, 0, 0, p, 0);
		lv_folio_add_lru(own[i]);
	}
	for (int i = 0; i < 8; i++) {
		moved[i] = alloc_or_bail(m, 0, i & 1, c, 0);
		lv_folio_add_lru(moved[i]);
	}
	/* Unevictable (mlocked): counted on c, linked nowhere, found through the memmap. */
	for (int i = 0; i < 3; i++) {
		mlocked[i] = alloc_or_bail(m, 0, (unsigned int)i, c, 0);
		if (lv_folio_set_state(mlocked[i], LV_PG_MLOCKED, true))
			BAIL_OUT("mlock failed");
		lv_folio_add_lru(mlocked[i]);
	}
	lv_lru_add_drain_all(m);
	is(lv_memcg_stat(c, LV_NR_UNEVICTABLE), 1 + 2 + 4, "%s: c counts 7 unevictable pages", d);
	is(lv_folio_isolate_lru(moved[3]), 0, "%s: the caller isolates one of c's folios", d);
	lv_memcg_set_max(p, lv_memcg_usage(p));
	/* No wait for the isolated folio: it is charged through c's obj_cgroup, re-pointed. */
	is(lv_memcg_remove(c), 0, "%s: remove with an isolated folio -> 0, p at its limit", d);
	ok(lv_folio_memcg(moved[3]) == p, "%s: the isolated folio is p's now", d);
	is(lv_memcg_stat(p, LV_NR_ISOLATED), 2, "%s: p counts its 2 isolated pages", d);
	ok(lv_folio_memcg(mlocked[0]) == p && lv_folio_memcg(mlocked[2]) == p,
	   "%s: the unevictable folios moved to p", d);
	is(lv_memcg_stat(p, LV_NR_UNEVICTABLE), 7, "%s: p counts their 7 pages", d);
	is(lv_memcg_stat(p, LV_NR_MLOCK), 7, "%s: and their NR_MLOCK", d);
	ok(lv_folio_memcg(moved[0]) == p && lv_folio_memcg(moved[7]) == p,
	   "%s: the others moved to p", d);
	is(lv_memcg_stat(p, LV_NR_INACTIVE_FILE), 4 + 10, "%s: p's list holds 4 + 10 pages", d);
	is(lv_memcg_usage(p), 4 + 12 + 7, "%s: p's usage is its own 4 + c's 12 + 7 pages", d);
	is(nstat(m, LV_ALLOCSTALL), 0, "%s: reparenting reclaimed nothing", d);
	check_ok(m, "reparent: removed with a folio isolated");
	is(lv_folio_putback_lru(moved[3]), 0, "%s: put back", d);
	lv_lru_add_drain_all(m);
	is(lv_memcg_stat(p, LV_NR_ISOLATED), 0, "%s: the putback went to p", d);
	is(lv_memcg_stat(p, LV_NR_INACTIVE_FILE), 4 + 12, "%s: on p's list", d);
	check_ok(m, "reparent: put back");

	/* From p's tail: c's folios oldest first, then p's own, then the one put back. */
	{
		struct lv_folio *want[12] = { moved[0], moved[1], moved[2], moved[4],
					      moved[5], moved[6], moved[7], own[0],
					      own[1],	own[2],	  own[3],   moved[3] };
		struct list_head *head = &p->nodeinfo[0].lists[LRU_INACTIVE_FILE];
		struct list_head *pos = head->prev;

		for (int i = 0; i < 12 && pos != head; i++, pos = pos->prev)
			in_order += list_entry(pos, struct lv_folio, lru) == want[i];
		is(in_order, 12, "%s: p's list from the tail: c's folios in their order, then p's",
		   d);
	}
	/* Munlocked, a moved unevictable folio joins p's evictable list. */
	is(lv_folio_isolate_lru(mlocked[1]), 0, "%s: isolate a moved mlocked folio", d);
	is(lv_folio_set_state(mlocked[1], LV_PG_MLOCKED, false), 0, "%s: munlock it", d);
	is(lv_folio_putback_lru(mlocked[1]), 0, "%s: put it back", d);
	lv_lru_add_drain_all(m);
	is(lv_memcg_stat(p, LV_NR_UNEVICTABLE), 1 + 4, "%s: p counts 5 unevictable pages", d);
	is(lv_memcg_stat(p, LV_NR_INACTIVE_FILE), 4 + 12 + 2, "%s: and 2 more evictable", d);
	check_ok(m, "reparent: munlocked after the move");
	for (int i = 0; i < 8; i++)
		lv_folio_put(moved[i]);
	for (int i = 0; i < 4; i++)
		lv_folio_put(own[i]);
	for (int i = 0; i < 3; i++)
		lv_folio_put(mlocked[i]);
	lv_lru_add_drain_all(m);
	is(lv_memcg_usage(p), 0, "%s: all uncharged from p", d);
	is(lv_memcg_remove(p), 0, "%s: p removed", d);
	finish(m, "reparent");
}

/*
 * Folios in transit when a removal starts: one isolated by another thread and put back 20 ms
 * later, one charged before the removal and queued for the LRU 10 ms into it (its batch is
 * then drained by nobody but the remover). The removal waits for both. While it waits, the
 * memcg refuses charges (-ENOENT), children and a second removal (-EBUSY).
 */
struct transit {
	struct lv_machine *m;
	struct lv_memcg *c;
	struct lv_folio *isolated, *late;
	int ready;
	int saw_enoent, second_remove, child_refused;
};

static void *transit_thread(void *arg)
{
	struct transit *t = arg;
	struct timespec ms = { 0, 1000000 };

	if (lv_folio_isolate_lru(t->isolated))
		return NULL;
	__atomic_store_n(&t->ready, 1, __ATOMIC_RELEASE);
	/* The remover has marked c dying once a charge to it fails. */
	for (int i = 0; i < 2000 && !t->saw_enoent; i++) {
		struct lv_folio *f = lv_folio_alloc(t->m, 0, 0, t->c, 0);

		if (f)
			lv_folio_put(f);
		else
			t->saw_enoent = errno == ENOENT;
		nanosleep(&ms, NULL);
	}
	t->second_remove = lv_memcg_remove(t->c);
	t->child_refused = lv_memcg_create(t->m, t->c, "late child") == NULL && errno == EINVAL;
	for (int i = 0; i < 10; i++)
		nanosleep(&ms, NULL);
	lv_folio_add_lru(t->late);
	for (int i = 0; i < 10; i++)
		nanosleep(&ms, NULL);
	lv_folio_putback_lru(t->isolated);
	return NULL;
}

static void test_remove_transit(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *p = lv_memcg_create(m, NULL, "p"), *c = lv_memcg_create(m, p, "c");
	struct transit t = { .m = m, .c = c };
	struct lv_folio *u, *u2;
	pthread_t th;

	t.isolated = alloc_or_bail(m, 0, 0, c, 0);
	lv_folio_add_lru(t.isolated);
	lv_lru_add_drain_all(m);
	t.late = alloc_or_bail(m, 0, 2, c, 0);
	/* At its limit: a charge during the removal must fail with ENOENT, not reclaim first. */
	lv_memcg_set_max(c, 1 + 4);
	start_ready(&th, transit_thread, &t, &t.ready);
	is(lv_memcg_remove(c), 0, "transit: removal waits for an isolated and a late-queued folio");
	pthread_join(th, NULL);
	ok(t.saw_enoent, "transit: a charge over the limit during the removal fails with ENOENT");
	is(t.second_remove, -EBUSY, "transit: a second removal meanwhile -> -EBUSY");
	ok(t.child_refused, "transit: no child is created meanwhile");
	ok(lv_folio_memcg(t.isolated) == p, "transit: the isolated folio went to p when put back");
	ok(lv_folio_memcg(t.late) == p, "transit: so did the late one");
	is(lv_memcg_usage(p), 1 + 4, "transit: p is charged both folios");
	check_ok(m, "transit");
	lv_folio_put(t.isolated);
	lv_folio_put(t.late);

	/*
	 * An isolated unevictable folio is not waited for: its obj_cgroup takes it to p, whose
	 * unevictable count it joins when put back; a counted one moves with c's count.
	 */
	c = lv_memcg_create(m, p, "c2");
	u = alloc_or_bail(m, 0, 0, c, 0);
	u2 = alloc_or_bail(m, 0, 1, c, 0);
	is(lv_folio_set_state(u, LV_PG_MLOCKED, true), 0, "unevictable: mlock the folio");
	is(lv_folio_set_state(u2, LV_PG_MLOCKED, true), 0, "unevictable: and a second one");
	lv_folio_add_lru(u);
	lv_folio_add_lru(u2);
	lv_lru_add_drain_all(m);
	is(lv_memcg_stat(c, LV_NR_UNEVICTABLE), 1 + 2, "unevictable: on c's unevictable list");
	is(lv_folio_isolate_lru(u), 0, "unevictable: isolate one");
	is(lv_memcg_remove(c), 0, "unevictable: remove while the caller holds it -> 0");
	ok(lv_folio_memcg(u) == p, "unevictable: the isolated one is p's");
	ok(lv_folio_memcg(u2) == p, "unevictable: the counted one went to p");
	is(lv_memcg_stat(p, LV_NR_UNEVICTABLE), 2, "unevictable: p counts the counted one");
	is(lv_memcg_stat(p, LV_NR_MLOCK), 3, "unevictable: p's NR_MLOCK has both");
	check_ok(m, "transit: one unevictable folio isolated, one moved");
	is(lv_folio_putback_lru(u), 0, "unevictable: put it back");
	lv_lru_add_drain_all(m);
	is(lv_memcg_stat(p, LV_NR_UNEVICTABLE), 1 + 2,
	   "unevictable: counted on p's unevictable list");
	check_ok(m, "transit: unevictable moved");
	lv_folio_put(u);
	lv_folio_put(u2);
	lv_lru_add_drain_all(m);
	is(lv_memcg_usage(p), 0, "unevictable: p empty once it is freed");
	finish(m, "transit");
}

/*
 * A removal racing mlock changes and frees of the memcg's folios: another thread isolates a
 * folio, flips its mlock, puts it back (so it changes between the unevictable count and a
 * list, under the removal's feet) or frees it, for 30 ms. The removal waits for the folios it
 * holds, moves every other one to the parent, and the counts stay right (lv_check).
 */
#define FLIP_FOLIOS 96

struct flipper {
	struct lv_folio *folios[FLIP_FOLIOS];
	int ready, flips, frees;
};

static void *flip_thread(void *arg)
{
	struct flipper *f = arg;
	uint64_t end = 0;
	uint32_t seed = 7;

	for (int n = 0;; n++) {
		struct timespec ts;
		uint64_t t;
		struct lv_folio *folio;
		unsigned int i;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		t = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
		if (!end)
			end = t + 30 * 1000000ull;
		if (t > end)
			break;
		if (n == 16)
			__atomic_store_n(&f->ready, 1, __ATOMIC_RELEASE);
		seed = seed * 1103515245 + 12345;
		i = (seed >> 8) % FLIP_FOLIOS;
		if (!(folio = f->folios[i]))
			continue;
		if ((seed >> 20) % 256 == 0) {
			f->folios[i] = NULL;
			lv_folio_put(folio); /* the last reference: unlinked or uncounted, freed */
			f->frees++;
		} else if (!lv_folio_isolate_lru(folio)) {
			lv_folio_set_state(folio, LV_PG_MLOCKED,
					   !lv_folio_test(folio, LV_PG_MLOCKED));
			lv_folio_putback_lru(folio);
			f->flips++;
		}
	}
	__atomic_store_n(&f->ready, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_reparent_unevictable_race(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m;
	struct lv_memcg *p, *c;
	struct flipper f = { 0 };
	unsigned long pages = 0, elsewhere = 0;
	pthread_t th;

	cfg.nr_cpu_slots = 4;
	m = new_machine(&cfg);
	p = new_memcg(m, NULL, "p");
	c = new_memcg(m, p, "c");
	for (int i = 0; i < FLIP_FOLIOS; i++) {
		f.folios[i] = alloc_or_bail(m, 0, (unsigned int)i % 3, c, 0);
		if (i % 2 && lv_folio_set_state(f.folios[i], LV_PG_MLOCKED, true))
			BAIL_OUT("mlock failed");
		lv_folio_add_lru(f.folios[i]);
	}
	lv_lru_add_drain_all(m);
	start_ready(&th, flip_thread, &f, &f.ready);
	is(lv_memcg_remove(c), 0, "flip race: the removal waits out the flips and succeeds");
	pthread_join(th, NULL);
	diag("flip race: %d mlock flips and %d frees during the removal", f.flips, f.frees);
	ok(f.flips > 0, "flip race: folios changed evictability meanwhile");
	lv_lru_add_drain_all(m); /* the flips after the removal sit in CPU batches */
	for (int i = 0; i < FLIP_FOLIOS; i++) {
		if (!f.folios[i])
			continue;
		pages += lv_folio_nr_pages(f.folios[i]);
		elsewhere += lv_folio_memcg(f.folios[i]) != p;
	}
	is(elsewhere, 0, "flip race: every folio left is bound to p");
	is(lv_memcg_usage(p), pages, "flip race: p is charged exactly the folios left");
	is(lv_memcg_stat(p, LV_NR_UNEVICTABLE) + lv_memcg_stat(p, LV_NR_INACTIVE_FILE) +
		   lv_memcg_stat(p, LV_NR_ACTIVE_FILE),
	   pages, "flip race: and counts them on its lists");
	check_ok(m, "flip race");
	for (int i = 0; i < FLIP_FOLIOS; i++)
		if (f.folios[i])
			lv_folio_put(f.folios[i]);
	lv_lru_add_drain_all(m);
	is(lv_memcg_usage(p), 0, "flip race: p empty after the frees");
	finish(m, "flip race");
}

static void test_memcg_stats(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m;
	struct lv_memcg *p, *c;
	struct lv_folio *fs[6];

	cfg.nr_nodes = 2;
	m = new_machine(&cfg);
	p = lv_memcg_create(m, NULL, "p");
	c = lv_memcg_create(m, p, "c");
	fs[0] = alloc_or_bail(m, 0, 0, c, 0);		  /* file, node 0 */
	fs[1] = alloc_or_bail(m, 1, 1, c, 0);		  /* file, node 1 */
	fs[2] = alloc_or_bail(m, 0, 2, c, LV_FOLIO_ANON); /* anon, node 0 */
	fs[3] = alloc_or_bail(m, 1, 0, p, LV_FOLIO_ANON); /* anon in the parent */
	fs[4] = alloc_or_bail(m, 0, 0, c, 0);		  /* mlocked: unevictable */
	fs[5] = alloc_or_bail(m, 1, 3, c, 0);		  /* isolated later */
	is(lv_folio_set_state(fs[4], LV_PG_MLOCKED, true), 0, "mlock one folio");
	for (int i = 0; i < 6; i++)
		lv_folio_add_lru(fs[i]);
	lv_lru_add_drain_all(m);
	is(lv_folio_isolate_lru(fs[5]), 0, "isolate the order-3 folio");

	is(lv_memcg_stat(c, LV_NR_INACTIVE_FILE), 3,
	   "c inactive file: 1 + 2 pages over both nodes");
	is(lv_memcg_stat(c, LV_NR_INACTIVE_ANON), 4, "c inactive anon: 4");
	is(lv_memcg_stat(c, LV_NR_UNEVICTABLE), 1, "c unevictable: 1");
	is(lv_memcg_stat(c, LV_NR_ISOLATED), 8, "c isolated: 8");
	is(lv_memcg_stat(c, LV_NR_ACTIVE_FILE), 0, "c active file: 0");
	is(lv_memcg_stat(p, LV_NR_INACTIVE_FILE), 0, "list sizes are not hierarchical (p file)");
	is(lv_memcg_stat(p, LV_NR_INACTIVE_ANON), 1, "p inactive anon: its own folio only");
	is(lv_memcg_stat(p, LV_NR_ISOLATED), 0, "isolated not hierarchical");
	is(lv_memcg_stat(c, LV_NR_CHARGED), 16, "c charged: 1+2+4+1+8");
	is(lv_memcg_stat(p, LV_NR_CHARGED), 17, "p charged is hierarchical: 16 + 1");
	is(lv_memcg_stat(c, LV_NR_FREE), 0, "node-only item LV_NR_FREE -> 0");
	is(lv_memcg_stat(c, LV_WMARK_MIN), 0, "node-only item LV_WMARK_MIN -> 0");
	is(lv_memcg_stat(c, LV_WMARK_LOW), 0, "node-only item LV_WMARK_LOW -> 0");
	is(lv_memcg_stat(c, LV_WMARK_HIGH), 0, "node-only item LV_WMARK_HIGH -> 0");
	is(lv_memcg_stat(c, LV_NR_STAT_ITEMS), 0, "bad item -> 0");
	is(lv_node_stat(m, 0, LV_NR_INACTIVE_ANON), 4, "node 0 anon sums the memcgs");
	is(lv_node_stat(m, 1, LV_NR_INACTIVE_ANON), 1, "node 1 anon sums the memcgs");

	lv_folio_activate(fs[0]);
	lv_folio_activate(fs[3]);
	lv_lru_add_drain_all(m);
	is(lv_memcg_stat(c, LV_PGACTIVATE), 1, "c pgactivate: its own event");
	is(lv_memcg_stat(p, LV_PGACTIVATE), 1, "p pgactivate: its own event only");
	is(lv_memcg_stat(c, LV_NR_ACTIVE_FILE), 1, "c active file 1");
	is(lv_memcg_stat(p, LV_NR_ACTIVE_ANON), 1, "p active anon 1");
	is(lv_node_stat(m, 0, LV_PGACTIVATE) + lv_node_stat(m, 1, LV_PGACTIVATE), 2,
	   "node events sum the memcgs");
	is(lv_memcg_stat(lv_memcg_root(m), LV_PGACTIVATE), 0, "root's own lruvecs saw nothing");
	check_ok(m, "memcg stats with folios everywhere");

	is(lv_folio_putback_lru(fs[5]), 0, "putback");
	lv_folios_put(fs, 6);
	lv_lru_add_drain_all(m);
	is(lv_memcg_stat(c, LV_NR_INACTIVE_FILE) + lv_memcg_stat(c, LV_NR_INACTIVE_ANON) +
		   lv_memcg_stat(c, LV_NR_UNEVICTABLE) + lv_memcg_stat(c, LV_NR_ACTIVE_FILE),
	   0, "c lists empty after release");
	is(lv_memcg_stat(c, LV_PGACTIVATE), 1, "events survive the folios");
	is(lv_memcg_remove(c), 0, "remove c");
	is(lv_memcg_remove(p), 0, "remove p");
	finish(m, "memcg stats machine");
}

/* wait_memcg_frees - wait for every removed memcg's free (RCU callbacks) to have run. */
static void wait_memcg_frees(struct lv_machine *m)
{
	do
		rcu_barrier_lv();
	while (__atomic_load_n(&m->memcgs_freeing, __ATOMIC_ACQUIRE));
}

/*
 * The 7.1 fix's rule: a delta collected for an lruvec and folded after its memcg was removed
 * goes to the first live ancestor. Here the delta is a reclaim cost noted for c by a reclaimer
 * that still holds its reference on c (as reclaim's memcg walk does) after c's removal; the
 * costs c had when it was removed went to p with its lists.
 */
static void test_cost_after_reparent(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *p = new_memcg(m, NULL, "p"), *c = new_memcg(m, p, "c");
	struct lruvec *pl = &p->nodeinfo[0], *cl = &c->nodeinfo[0];
	struct lv_folio *f[64];
	unsigned long before;

	/* Enough pages on the lists that a few pages of cost do not decay. */
	for (int i = 0; i < 64; i++) {
		f[i] = alloc_or_bail(m, 0, 0, i < 32 ? p : c, 0);
		lv_folio_add_lru(f[i]);
	}
	lv_lru_add_drain_all(m);
	lru_note_cost(cl, true, 3);
	is((long)READ_ONCE(cl->file_cost), 3, "cost: noted on c while it lives");
	is((long)READ_ONCE(pl->file_cost), 3, "cost: and on its parent");
	css_get(c); /* the reclaimer's reference */
	is(lv_memcg_remove(c), 0, "cost: remove c");
	is((long)READ_ONCE(pl->file_cost), 6, "cost: c's costs went to p with its lists");
	before = READ_ONCE(pl->file_cost);
	lru_note_cost(cl, true, 2); /* the reclaimer folds its delta late */
	is((long)READ_ONCE(cl->file_cost), 0, "cost: nothing folded into the reparented lruvec");
	is((long)(READ_ONCE(pl->file_cost) - before), 2, "cost: the first live ancestor has it");
	css_put(c);
	check_ok(m, "cost after reparent");
	lv_folios_put(f, 64);
	lv_lru_add_drain_all(m);
	finish(m, "cost after reparent");
}

/*
 * The 7.1 series' evidence, as a test: tenants created and removed in a loop, each leaving page
 * cache behind, do not pile up as dying memcgs. Each removal re-points its obj_cgroup at the
 * root's, which lists it until its last folio goes; the memcg itself is freed at once.
 */
#define CHURN_MEMCGS 300

static unsigned long root_objcgs(struct lv_machine *m)
{
	struct lruvec *lruvec = &lv_memcg_root(m)->nodeinfo[0];
	struct list_head *pos;
	unsigned long n = 0;

	lv_lock_acquire(lruvec->lru_lock);
	list_for_each (pos, &lruvec->objcg_list)
		n++;
	lv_lock_release(lruvec->lru_lock);
	return n;
}

static void test_dying_memcgs_do_not_pile_up(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_file *file = lv_file_open(m, -1, CHURN_MEMCGS * LV_PAGE_SIZE);
	unsigned long pending = 0, objcgs;
	struct lv_folio *sample;
	char page[LV_PAGE_SIZE];
	int bad = 0;

	if (!file)
		BAIL_OUT("dying memcgs: file");
	for (int i = 0; i < CHURN_MEMCGS; i++) {
		struct lv_memcg *c = new_memcg(m, NULL, "tenant");

		bad += lv_file_read(file, c, page, sizeof(page), (uint64_t)i * LV_PAGE_SIZE) !=
		       (long)sizeof(page);
		bad += lv_memcg_remove(c) != 0;
	}
	is(bad, 0, "dying memcgs: %d tenants each cached a page and were removed", CHURN_MEMCGS);
	wait_memcg_frees(m);
	lv_lock_acquire(&m->memcg_mutex);
	for (struct list_head *pos = m->dying_memcgs.next; pos != &m->dying_memcgs; pos = pos->next)
		pending++;
	lv_lock_release(&m->memcg_mutex);
	is(pending, 0, "dying memcgs: none is left waiting for its page cache");
	objcgs = root_objcgs(m);
	is(objcgs, CHURN_MEMCGS + 1, "dying memcgs: their obj_cgroups live on, listed on the root");
	{
		unsigned long start = 7;

		ok(filemap_get_folios(file, &start, &sample, 1) == 1 &&
			   lv_folio_memcg(sample) == lv_memcg_root(m),
		   "dying memcgs: the cached pages are the root's");
		lv_folio_put(sample);
	}
	check_ok(m, "dying memcgs");
	is(lv_file_truncate(file, 0), 0, "dying memcgs: truncate the cache");
	lv_lru_add_drain_all(m);
	wait_memcg_frees(m);
	is(root_objcgs(m), 1, "dying memcgs: the last folio freed each obj_cgroup");
	lv_file_close(file);
	finish(m, "dying memcgs");
}

/*
 * A removed memcg keeps counting until it is freed: a thread that looked one of its lruvecs up
 * before the removal (here: holding a reference, as a charge in flight does) may still count
 * an event or take its lock. Node totals and lock statistics must include those, before and
 * after the free (folding the counts at removal would drop them).
 */
#ifdef LV_DEBUG
/*
 * A removal between an isolator's lookup and its lock, by construction: the isolator (this
 * thread) has won the PG_lru pin and read c's lruvec when folio_lruvec_lock_hook stops it; a
 * second thread removes c, which re-points c's obj_cgroup and splices the lists under c's and
 * p's locks without waiting for the pinned folio; the hook returns once node 0 is reparented.
 * The isolator's re-check must then fail on c's lock and find the folio on p's list.
 */
static struct {
	struct lv_memcg *victim;
	struct lv_folio *target;
	int armed, reparented, result; /* atomics */
	pthread_t remover;
} rl;

static void *rl_remove(void *arg)
{
	(void)arg;
	__atomic_store_n(&rl.result, lv_memcg_remove(rl.victim), __ATOMIC_RELEASE);
	return NULL;
}

static void rl_node_hook(struct lv_memcg *memcg, unsigned int nid)
{
	if (memcg == rl.victim && nid == 0)
		__atomic_store_n(&rl.reparented, 1, __ATOMIC_RELEASE);
}

static void rl_lock_hook(struct lv_folio *folio)
{
	if (folio != rl.target || !__atomic_exchange_n(&rl.armed, 0, __ATOMIC_ACQ_REL))
		return;
	if (pthread_create(&rl.remover, NULL, rl_remove, NULL))
		BAIL_OUT("remover thread");
	while (!__atomic_load_n(&rl.reparented, __ATOMIC_ACQUIRE))
		usleep(100);
}

static void test_remove_under_isolation(enum lv_lock_design design)
{
	struct lv_config cfg = small_config();
	const char *d = design == LV_LOCK_NODE ? "node" : "lruvec";
	struct lv_memcg *p, *c;
	struct lv_machine *m;
	struct lv_folio *f, *g;
	uint64_t retries;

	cfg.lock_design = design;
	m = new_machine(&cfg);
	p = new_memcg(m, NULL, "p");
	c = new_memcg(m, p, "c");
	f = alloc_or_bail(m, 0, 0, c, 0);
	g = alloc_or_bail(m, 0, 0, c, LV_FOLIO_ANON);
	lv_folio_add_lru(f);
	lv_folio_add_lru(g);
	lv_lru_add_drain_all(m);
	retries = nstat(m, LV_LOCK_RETRIES);
	rl = (typeof(rl)){ .victim = c, .target = f, .armed = 1, .result = 1 };
	reparent_node_hook = rl_node_hook;
	folio_lruvec_lock_hook = rl_lock_hook;
	is(lv_folio_isolate_lru(f), 0, "%s: isolation across a removal succeeds", d);
	folio_lruvec_lock_hook = NULL;
	pthread_join(rl.remover, NULL);
	reparent_node_hook = NULL;
	is(rl.result, 0, "%s: the removal did not wait for the pinned folio", d);
	ok(lv_folio_memcg(f) == p && lv_folio_memcg(g) == p, "%s: both folios are p's", d);
	if (design == LV_LOCK_LRUVEC)
		ok(nstat(m, LV_LOCK_RETRIES) > retries, "%s: the isolator's re-check failed once",
		   d);
	is(lv_memcg_stat(p, LV_NR_ISOLATED), 1, "%s: p counts the isolated page", d);
	is(lv_memcg_stat(p, LV_NR_INACTIVE_FILE), 0, "%s: it left p's list", d);
	is(lv_memcg_stat(p, LV_NR_INACTIVE_ANON), 1, "%s: the other one is on p's list", d);
	is(lv_memcg_usage(p), 2, "%s: p is charged both pages, once", d);
	check_ok(m, "remove under isolation");
	is(lv_folio_putback_lru(f), 0, "%s: put back", d);
	lv_lru_add_drain_all(m);
	is(lv_memcg_stat(p, LV_NR_INACTIVE_FILE), 1, "%s: on p's list", d);
	lv_folio_put(f);
	lv_folio_put(g);
	lv_lru_add_drain_all(m);
	is(lv_memcg_usage(p), 0, "%s: p empty after the frees", d);
	check_ok(m, "remove under isolation: freed");
	finish(m, "remove under isolation");
}
#endif

static void test_stats_after_remove(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *c = lv_memcg_create(m, NULL, "c");
	struct lv_lock_stat before, after, dbefore, dafter;
	struct lruvec *lruvec = &c->nodeinfo[0];
	uint64_t stalls = lv_node_stat(m, 0, LV_ALLOCSTALL);

	lruvec_count_event_atomic(lruvec, EV_ALLOCSTALL, 2);
	ok(css_tryget(c), "pin c as a charge in flight would");
	is(lv_memcg_remove(c), 0, "remove c while pinned");
	is(lv_node_stat(m, 0, LV_ALLOCSTALL), stalls + 2, "its events still count after removal");
	check_ok(m, "a removed memcg not freed yet");
	lv_lock_stats(m, LV_LOCK_CLASS_LRUVEC, &before);
	lv_lock_stats(m, LV_LOCK_CLASS_DRAIN, &dbefore);
	lruvec_count_event_atomic(lruvec, EV_ALLOCSTALL, 3);
	lv_lock_acquire(&lruvec->own_lock);
	lv_lock_release(&lruvec->own_lock);
	lv_lock_acquire(&c->drain.mutex); /* a scoped drain of c in flight */
	lv_lock_release(&c->drain.mutex);
	lv_lock_stats(m, LV_LOCK_CLASS_DRAIN, &dafter);
	is(dafter.acquired, dbefore.acquired + 1, "its drain mutex counts after removal");
	is(lv_node_stat(m, 0, LV_ALLOCSTALL), stalls + 5, "an event counted after removal counts");
	lv_lock_stats(m, LV_LOCK_CLASS_LRUVEC, &after);
	is(after.acquired, before.acquired + 1, "a lock taken after removal counts");
	css_put(c);
	wait_memcg_frees(m);
	is(lv_node_stat(m, 0, LV_ALLOCSTALL), stalls + 5, "every event survives the free");
	lv_lock_stats(m, LV_LOCK_CLASS_LRUVEC, &before);
	/* Plus one: the release of c's obj_cgroup takes p's lruvec lock to unlist it. */
	is(before.acquired, after.acquired + 1, "and every lock acquisition");
	lv_lock_stats(m, LV_LOCK_CLASS_DRAIN, &dbefore);
	is(dbefore.acquired, dafter.acquired, "its drain mutex's too");
	finish(m, "stats after remove");
}

#ifdef LV_DEBUG
/* ---- calls racing a removal ------------------------------------------------------------ */

/* Every public call that takes a memcg handle, as the racing tests drive them. */
enum handle_op {
	OP_USAGE,
	OP_MAX,
	OP_STAT,
	OP_NAME,
	OP_PARENT,
	OP_SET_MAX,
	OP_CREATE,
	OP_MM_CREATE,
	OP_MOVE,
	OP_READ,
	OP_REMOVE,
	OP_RECLAIM,
	OP_ALLOC,
	NR_HANDLE_OPS
};

static const char *const op_names[NR_HANDLE_OPS] = {
	"lv_memcg_usage",      "lv_memcg_max",	   "lv_memcg_stat",   "lv_memcg_name",
	"lv_memcg_parent",     "lv_memcg_set_max", "lv_memcg_create", "lv_mm_create",
	"lv_folio_move_memcg", "lv_file_read",	   "lv_memcg_remove", "lv_memcg_reclaim",
	"lv_folio_alloc",
};

struct handle_call {
	struct lv_machine *m;
	struct lv_memcg *victim;
	struct lv_folio *folio; /* OP_MOVE: a folio of the root, on its LRU */
	struct lv_file *file;	/* OP_READ: a sparse file whose first page is not cached */
	enum handle_op op;
	long result;
	const void *ptr;
	int err;
};

static void handle_call_run(struct handle_call *c)
{
	char buf[64];

	errno = 0;
	switch (c->op) {
	case OP_USAGE:
		c->result = (long)lv_memcg_usage(c->victim);
		break;
	case OP_MAX:
		c->result = (long)lv_memcg_max(c->victim);
		break;
	case OP_STAT:
		c->result = (long)lv_memcg_stat(c->victim, LV_PGPGIN);
		break;
	case OP_NAME:
		c->ptr = lv_memcg_name(c->victim);
		break;
	case OP_PARENT:
		c->ptr = lv_memcg_parent(c->victim);
		break;
	case OP_SET_MAX:
		c->result = lv_memcg_set_max(c->victim, 2000);
		break;
	case OP_CREATE:
		c->ptr = lv_memcg_create(c->m, c->victim, "child");
		break;
	case OP_MM_CREATE:
		c->ptr = lv_mm_create(c->m, c->victim, 0);
		break;
	case OP_MOVE:
		c->result = lv_folio_move_memcg(c->folio, c->victim);
		break;
	case OP_READ:
		c->result = lv_file_read(c->file, c->victim, buf, sizeof(buf), 0);
		break;
	case OP_REMOVE:
		c->result = lv_memcg_remove(c->victim);
		break;
	case OP_RECLAIM:
		c->result = (long)lv_memcg_reclaim(c->victim, 8);
		break;
	case OP_ALLOC:
		c->ptr = lv_folio_alloc(c->m, 0, 0, c->victim, 0);
		break;
	case NR_HANDLE_OPS:
		break;
	}
	c->err = errno;
}

/* The stall: the first call on the victim stops inside its protection until released. */
static struct {
	const struct lv_memcg *victim;
	int armed, inside, go; /* atomics */
} stall;

static void stall_hook(const struct lv_memcg *memcg)
{
	if (memcg != stall.victim || !__atomic_exchange_n(&stall.armed, 0, __ATOMIC_ACQ_REL))
		return;
	__atomic_store_n(&stall.inside, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&stall.go, __ATOMIC_ACQUIRE))
		usleep(100);
}

static void *handle_call_thread(void *arg)
{
	handle_call_run(arg);
	return NULL;
}

/*
 * A call that entered with the memcg stops inside its protection (the debug hook) while the
 * memcg is removed: the removal returns 0, the memcg is not freed while the call is inside
 * (100 ms is many grace periods), and the call, released, returns its normal result or the
 * error for a memcg being removed; the memcg is freed once it is done. Without the read-side
 * section or reference the free would come within a few grace periods.
 */
static void test_remove_stalled_call(enum handle_op op)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *root = lv_memcg_root(m), *victim = new_memcg(m, NULL, "victim");
	struct lv_file *warm = lv_file_open(m, -1, 8 * LV_PAGE_SIZE);
	struct lv_file *cold = lv_file_open(m, -1, LV_PAGE_SIZE);
	struct handle_call c = { .m = m, .victim = victim, .op = op, .file = cold };
	const char *what = op_names[op], *name = lv_memcg_name(victim);
	char buf[8 * LV_PAGE_SIZE];
	bool pending = true;
	pthread_t th;

	if (!warm || !cold)
		BAIL_OUT("stalled call: files");
	lv_memcg_set_max(victim, 1000);
	is(lv_file_read(warm, victim, buf, sizeof(buf), 0), (long)sizeof(buf),
	   "%s: the victim caches 8 pages", what);
	c.folio = alloc_or_bail(m, 0, 0, NULL, 0);
	lv_folio_add_lru(c.folio);
	lv_lru_add_drain_all(m);

	stall.victim = victim;
	__atomic_store_n(&stall.inside, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&stall.go, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&stall.armed, 1, __ATOMIC_RELEASE);
	memcg_handle_hook = stall_hook;
	start_ready(&th, handle_call_thread, &c, &stall.inside);
	is(lv_memcg_remove(victim), 0, "%s: removed while a call is inside", what);
	for (int i = 0; i < 100 && pending; i++) {
		usleep(1000);
		pending = memcg_pending(m, victim);
	}
	ok(pending, "%s: not freed while the call is inside", what);
	__atomic_store_n(&stall.go, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	memcg_handle_hook = NULL;

	switch (op) {
	case OP_USAGE:
		is(c.result, 0, "%s: the usage it had (everything moved to the parent)", what);
		break;
	case OP_MAX:
		is(c.result, 1000, "%s: the limit it had", what);
		break;
	case OP_STAT:
		is(c.result, 8, "%s: its pgpgin", what);
		break;
	case OP_NAME:
		ok(c.ptr == name, "%s: its name", what);
		break;
	case OP_PARENT:
		ok(c.ptr == root, "%s: its parent", what);
		break;
	case OP_SET_MAX:
		is(c.result, 0, "%s: 0", what);
		break;
	case OP_CREATE:
	case OP_MM_CREATE:
		ok(c.ptr == NULL && c.err == EINVAL, "%s: NULL, EINVAL (a memcg being removed)",
		   what);
		break;
	case OP_MOVE:
		is(c.result, -ENOENT, "%s: -ENOENT", what);
		break;
	case OP_READ:
		is(c.result, -ENOENT, "%s: -ENOENT (a page had to be charged)", what);
		break;
	case OP_REMOVE:
		is(c.result, -EBUSY, "%s: the second removal -> -EBUSY", what);
		break;
	case OP_RECLAIM:
		is(c.result, 0, "%s: nothing to reclaim (its pages moved to the parent)", what);
		break;
	case OP_ALLOC:
		ok(c.ptr == NULL && c.err == ENOENT, "%s: NULL, ENOENT (a memcg being removed)",
		   what);
		break;
	case NR_HANDLE_OPS:
		break;
	}
	wait_memcg_frees(m);
	ok(!memcg_pending(m, victim), "%s: freed once the call finished", what);
	ok(lv_folio_memcg(c.folio) == root, "%s: the root's folio stayed with the root", what);
	lv_folio_put(c.folio);
	lv_file_close(warm);
	lv_file_close(cold);
	finish(m, what);
}

/*
 * Threads calling the read-only functions in a loop while the memcg is removed, stopped (by
 * the debug hook in the removal) just before its last steps, so that no call starts after it
 * returns: every value is one the memcg had.
 */
#define RACERS	    2
#define RACE_ROUNDS 100

struct racer {
	pthread_t th;
	struct lv_memcg *victim, *root;
	const char *name;
	int stop, ready; /* atomics */
	unsigned long calls, during, bad;
};

static struct racer racers[RACERS];

static void *racer_thread(void *arg)
{
	struct racer *r = arg;

	__atomic_store_n(&r->ready, 1, __ATOMIC_RELEASE);
	for (unsigned long i = 0; !__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE); i++) {
		bool dying = __atomic_load_n(&r->victim->dying, __ATOMIC_RELAXED);
		size_t v;

		switch (i % 6) {
		case 0:
			r->bad += lv_memcg_usage(r->victim) > 8;
			break;
		case 1:
			v = lv_memcg_max(r->victim);
			r->bad += v != 1000 && v != 2000;
			break;
		case 2:
			r->bad += lv_memcg_stat(r->victim, LV_PGPGIN) != 8;
			break;
		case 3:
			r->bad += lv_memcg_name(r->victim) != r->name ||
				  strcmp(lv_memcg_name(r->victim), "victim") != 0;
			break;
		case 4:
			r->bad += lv_memcg_parent(r->victim) != r->root;
			break;
		default:
			r->bad += lv_memcg_set_max(r->victim, i % 12 == 5 ? 2000 : 1000) != 0;
			break;
		}
		r->calls++;
		r->during += dying;
	}
	return NULL;
}

static int racers_stopped;

static void stop_racers(struct lv_memcg *memcg, int err)
{
	(void)memcg;
	(void)err;
	for (int i = 0; i < RACERS; i++)
		__atomic_store_n(&racers[i].stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < RACERS; i++)
		pthread_join(racers[i].th, NULL);
	racers_stopped++;
}

static void test_remove_racing_reads(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	unsigned long calls = 0, during = 0, bad = 0, removed = 0, freed = 0;
	char buf[8 * LV_PAGE_SIZE];

	memcg_remove_hook = stop_racers;
	for (int round = 0; round < RACE_ROUNDS; round++) {
		struct lv_memcg *victim = new_memcg(m, NULL, "victim");
		struct lv_file *f = lv_file_open(m, -1, sizeof(buf));

		if (!f || lv_file_read(f, victim, buf, sizeof(buf), 0) != (long)sizeof(buf))
			BAIL_OUT("racing reads: setup");
		lv_memcg_set_max(victim, 1000);
		for (int i = 0; i < RACERS; i++) {
			racers[i] = (struct racer){ .victim = victim,
						    .root = lv_memcg_root(m),
						    .name = lv_memcg_name(victim) };
			start_ready(&racers[i].th, racer_thread, &racers[i], &racers[i].ready);
		}
		removed += lv_memcg_remove(victim) == 0;
		for (int i = 0; i < RACERS; i++) {
			calls += racers[i].calls;
			during += racers[i].during;
			bad += racers[i].bad;
		}
		lv_file_close(f);
		wait_memcg_frees(m);
		freed += !memcg_pending(m, victim);
	}
	memcg_remove_hook = NULL;
	is(removed, RACE_ROUNDS, "racing reads: every removal succeeded");
	is(racers_stopped, RACE_ROUNDS, "racing reads: the racers ran until each removal's end");
	is(freed, RACE_ROUNDS, "racing reads: every removed memcg was freed");
	ok(during > 0, "racing reads: %lu of %lu calls ran while a removal did", during, calls);
	is(bad, 0, "racing reads: every value was one the memcg had");
	finish(m, "racing reads");
}
#endif

/* A memcg of another machine is bad input: reported, nothing charged. */
static void test_foreign(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg), *o = new_machine(&cfg);
	struct lv_memcg *om = lv_memcg_create(o, NULL, "other");
	struct lv_folio *f;

	errno = 0;
	f = lv_folio_alloc(m, 0, 0, om, 0);
	ok(f == NULL && errno == EINVAL, "allocating into another machine's memcg -> NULL, EINVAL");
	if (f)
		lv_folio_put(f);
	is(lv_memcg_usage(om), 0, "the foreign memcg was not charged");
	errno = 0;
	ok(lv_memcg_create(m, om, "x") == NULL && errno == EINVAL,
	   "a child of another machine's memcg -> NULL, EINVAL");
	f = alloc_or_bail(m, 0, 0, NULL, 0);
	lv_folio_add_lru(f);
	lv_lru_add_drain_all(m);
	is(lv_folio_move_memcg(f, om), -EINVAL, "moving into another machine's memcg -> -EINVAL");
	ok(lv_folio_memcg(f) == lv_memcg_root(m), "binding unchanged");
	lv_folio_put(f);
	is(lv_memcg_remove(om), 0, "remove other");
	finish(o, "other machine");
	finish(m, "foreign machine");
}

int main(void)
{
	test_root();
	test_disabled();
	test_tree();
	test_limits();
	test_hierarchy();
	test_remove();
	test_reparent(LV_LOCK_LRUVEC);
	test_reparent(LV_LOCK_NODE);
	test_remove_transit();
	test_reparent_unevictable_race();
#ifdef LV_DEBUG
	test_remove_under_isolation(LV_LOCK_LRUVEC);
	test_remove_under_isolation(LV_LOCK_NODE);
#endif
	test_cost_after_reparent();
	test_dying_memcgs_do_not_pile_up();
	test_memcg_stats();
	test_stats_after_remove();
#ifdef LV_DEBUG
	for (enum handle_op op = 0; op < NR_HANDLE_OPS; op++)
		test_remove_stalled_call(op);
	test_remove_racing_reads();
#endif
	test_foreign();
	return done_testing();
}
