// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Scan cost (cfg.scan_cost, vmscan.c "Scan cost"): the configuration; both modes note the same
 * costs; LV_COST_VMSTAT's notings take no lock; its costs reach every ancestor at the fold;
 * the deferred-delta rule across a removal (a noting that chose a memcg's lruvec before the
 * removal and adds after it, or a noting on a dying memcg, or counts pending at the removal,
 * all end in the parent; and in both modes a lock taken for a delta is re-checked, so that
 * nothing is added to a reparented lruvec); and the two modes split a deterministic reclaim
 * workload between anon and file alike.
 */
#include "lvtest_internal.h"
#include "lvtest.h"

#include <math.h>

#define PAGE	 LV_PAGE_SIZE
#define NR_FILL	 400 /* pages on a memcg's lists: costs below 100 are never halved */
#define ANON	 false
#define FILE_LRU true

static const char *mode_name(enum lv_scan_cost mode)
{
	return mode == LV_COST_VMSTAT ? "vmstat" : "locked";
}

static struct lv_config cost_config(enum lv_scan_cost mode)
{
	struct lv_config cfg = small_config();

	cfg.scan_cost = mode;
	cfg.metadata_only = true;
	return cfg;
}

static struct lruvec *lruvec_of(struct lv_machine *m, struct lv_memcg *memcg)
{
	return mem_cgroup_lruvec(memcg, m->nodes[0]);
}

/* fill - put @nr new folios charged to @memcg on its lists; they stay until unfill(). */
static struct lv_folio **fill(struct lv_machine *m, struct lv_memcg *memcg, unsigned int nr)
{
	struct lv_folio **folios = calloc(nr, sizeof(*folios));

	if (!folios)
		BAIL_OUT("calloc");
	for (unsigned int i = 0; i < nr; i++) {
		folios[i] = alloc_or_bail(m, 0, 0, memcg, 0);
		if (lv_folio_add_lru(folios[i]))
			BAIL_OUT("lv_folio_add_lru");
	}
	lv_lru_add_drain_all(m);
	return folios;
}

static void unfill(struct lv_folio **folios, unsigned int nr)
{
	lv_folios_put(folios, nr);
	free(folios);
}

static void costs(struct lruvec *lruvec, unsigned long *anon, unsigned long *file)
{
	lruvec_scan_costs(lruvec, anon, file);
}

/* ---- configuration -------------------------------------------------------------------------- */

static void test_config(void)
{
	struct lv_config cfg;
	struct lv_machine *m;

	lv_config_init(&cfg);
	is(cfg.scan_cost, LV_COST_LOCKED, "the default is LV_COST_LOCKED");
	cfg.scan_cost = 2;
	is_str(lv_config_invalid(&cfg), "scan_cost", "scan_cost 2 is refused");
	cfg.scan_cost = (enum lv_scan_cost) - 1;
	is_str(lv_config_invalid(&cfg), "scan_cost", "scan_cost -1 is refused");
	errno = 0;
	ok(!lv_machine_create(&cfg) && errno == EINVAL, "... and lv_machine_create says EINVAL");
	cfg = cost_config(LV_COST_VMSTAT);
	ok(!lv_config_invalid(&cfg), "LV_COST_VMSTAT is valid");
	m = new_machine(&cfg);
	is(lv_machine_config(m)->scan_cost, LV_COST_VMSTAT, "the machine keeps it");
	is_str(lv_lock_class_name(LV_LOCK_CLASS_COST), "cost", "the cost lock class is named");
	lv_machine_destroy(m);
}

/* ---- both modes note the same costs ------------------------------------------------------- */

static void test_same_costs(enum lv_scan_cost mode)
{
	struct lv_config cfg = cost_config(mode);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *c = lv_memcg_create(m, NULL, "c");
	struct lv_folio **folios = fill(m, c, NR_FILL);
	struct lruvec *lruvec = lruvec_of(m, c);
	unsigned long anon, file;

	lru_note_cost(lruvec, ANON, 7);
	lru_note_cost(lruvec, FILE_LRU, 13);
	lru_note_cost(lruvec, ANON, 20);
	costs(lruvec, &anon, &file);
	ok(anon == 27 && file == 13, "%s: costs below a quarter of the lists add up (%lu, %lu)",
	   mode_name(mode), anon, file);
	/* Over NR_FILL / 4: one noting (LOCKED) or one fold (VMSTAT) halves both sides. */
	lru_note_cost(lruvec, FILE_LRU, 80);
	costs(lruvec, &anon, &file);
	ok(anon == 13 && file == 46, "%s: over a quarter of the lists, both halve (%lu, %lu)",
	   mode_name(mode), anon, file);
	/* The root's lruvec has no pages of its own: every noting or fold halves there. */
	costs(lruvec_of(m, lv_memcg_root(m)), &anon, &file);
	ok(anon + file > 0, "%s: the root has its descendant's costs (%lu, %lu)", mode_name(mode),
	   anon, file);
	unfill(folios, NR_FILL);
	is(lv_memcg_remove(c), 0, "%s: removed", mode_name(mode));
	lv_machine_destroy(m);
}

/* ---- LV_COST_VMSTAT's notings take no lock ------------------------------------------------ */

static uint64_t acquired(const struct lv_lock *l)
{
	return __atomic_load_n(&l->acquired, __ATOMIC_RELAXED);
}

static void test_no_lock(enum lv_scan_cost mode)
{
	struct lv_config cfg = cost_config(mode);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *p = lv_memcg_create(m, NULL, "p");
	struct lv_memcg *c = lv_memcg_create(m, p, "c");
	struct lruvec *lc = lruvec_of(m, c), *lp = lruvec_of(m, p), *lr = lruvec_of(m, m->root);
	uint64_t lru0 = acquired(lc->lru_lock) + acquired(lp->lru_lock) + acquired(lr->lru_lock);
	uint64_t cost0 =
		acquired(&lc->cost_lock) + acquired(&lp->cost_lock) + acquired(&lr->cost_lock);
	uint64_t lru1, cost1;
	unsigned long anon, file;

	for (int i = 0; i < 100; i++)
		lru_note_cost(lc, i & 1, 1);
	lru1 = acquired(lc->lru_lock) + acquired(lp->lru_lock) + acquired(lr->lru_lock);
	cost1 = acquired(&lc->cost_lock) + acquired(&lp->cost_lock) + acquired(&lr->cost_lock);
	if (mode == LV_COST_VMSTAT) {
		is(lru1 - lru0, 0, "vmstat: 100 notings take no LRU lock");
		is(cost1 - cost0, 0, "vmstat: ... nor a cost lock");
		costs(lc, &anon, &file);
		is(acquired(&lc->cost_lock) + acquired(&lp->cost_lock) + acquired(&lr->cost_lock) -
			   cost1,
		   3, "vmstat: the fold takes each level's cost lock once");
		is(acquired(lc->lru_lock) + acquired(lp->lru_lock) + acquired(lr->lru_lock) - lru1,
		   0, "vmstat: ... and no LRU lock");
	} else {
		is(lru1 - lru0, 300, "locked: 100 notings take 3 levels' LRU locks each");
		is(cost1 - cost0, 0, "locked: ... and no cost lock");
	}
	is(lv_memcg_remove(c), 0, "%s: c removed", mode_name(mode));
	is(lv_memcg_remove(p), 0, "%s: p removed", mode_name(mode));
	lv_machine_destroy(m);
}

/* ---- the deferred-delta rule --------------------------------------------------------------- */

static struct lruvec *remove_at; /* atomic: the hook fires once, at this lruvec */
static struct lv_memcg *remove_memcg;
static int remove_err = 1;

/* Between choosing the live lruvec and using it: the removal of its memcg runs there. */
static void remove_hook(struct lruvec *lruvec)
{
	struct lruvec *expected = lruvec;

	if (!__atomic_compare_exchange_n(&remove_at, &expected, NULL, false, __ATOMIC_SEQ_CST,
					 __ATOMIC_SEQ_CST))
		return;
	remove_err = lv_memcg_remove(remove_memcg);
}

static void arm_remove(struct lruvec *at, struct lv_memcg *memcg)
{
	remove_memcg = memcg;
	remove_err = 1;
	__atomic_store_n(&remove_at, at, __ATOMIC_SEQ_CST);
	lruvec_live_hook = remove_hook;
}

static void disarm_remove(void)
{
	lruvec_live_hook = NULL;
	__atomic_store_n(&remove_at, NULL, __ATOMIC_SEQ_CST);
}

enum rule_case {
	RULE_RACE,    /* the removal runs between the noting's choice and its add */
	RULE_DYING,   /* the noting comes after the removal (a reference keeps the memcg) */
	RULE_PENDING, /* counts noted before the removal, not folded yet */
};

static void test_rule(enum rule_case which)
{
	static const char *const what[] = { "removed between choice and add",
					    "noted on a removed memcg", "pending at the removal" };
	struct lv_config cfg = cost_config(LV_COST_VMSTAT);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *p = lv_memcg_create(m, NULL, "p");
	struct lv_memcg *c = lv_memcg_create(m, p, "c");
	struct lv_folio **folios = fill(m, p, NR_FILL);
	struct lruvec *lc = lruvec_of(m, c), *lp = lruvec_of(m, p);
	unsigned long anon, file, stranded;

	css_get(c); /* the noting's caller keeps the memcg readable, as reclaim does */
	if (which == RULE_RACE) {
		arm_remove(lc, c);
		lru_note_cost(lc, ANON, 21);
		disarm_remove();
		is(remove_err, 0, "%s: the removal ran in the hook", what[which]);
	} else if (which == RULE_DYING) {
		is(lv_memcg_remove(c), 0, "%s: removed first", what[which]);
		lru_note_cost(lc, ANON, 21);
	} else {
		lru_note_cost(lc, ANON, 21);
		is(lv_memcg_remove(c), 0, "%s: removed after the noting", what[which]);
	}
	costs(lp, &anon, &file);
	is(anon, 21, "%s: the parent has the delta", what[which]);
	stranded = 0;
	for (int s = 0; s < COST_STRIPES; s++)
		stranded += __atomic_load_n(&lc->cost_pending[s].pending[0], __ATOMIC_RELAXED);
	is(stranded, 0, "%s: nothing stays pending in the removed lruvec", what[which]);
	check_ok(m, what[which]); /* c is removed, not freed: lv_check() looks at it too */
	css_put(c);
	unfill(folios, NR_FILL);
	is(lv_memcg_remove(p), 0, "%s: p removed", what[which]);
	lv_machine_destroy(m);
}

/*
 * test_recheck - the lock a delta is added under is re-checked: the removal runs after the
 * choice of the live lruvec and before its lock (LOCKED: a noting's LRU lock; VMSTAT: the
 * fold's cost lock), and reparents the lruvec, handing its costs to the parent. The delta must
 * reach the parent and not the reparented lruvec, where no reader would ever see it again.
 */
static void test_recheck(enum lv_scan_cost mode)
{
	struct lv_config cfg = cost_config(mode);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *p = lv_memcg_create(m, NULL, "p");
	struct lv_memcg *c = lv_memcg_create(m, p, "c");
	struct lv_folio **folios = fill(m, p, NR_FILL);
	struct lruvec *lc = lruvec_of(m, c), *lp = lruvec_of(m, p);
	unsigned long anon, file;

	css_get(c);
	if (mode == LV_COST_VMSTAT)
		lru_note_cost(lc, ANON, 21); /* pending; the fold below is what races */
	arm_remove(lc, c);
	if (mode == LV_COST_VMSTAT)
		costs(lc, &anon, &file);
	else
		lru_note_cost(lc, ANON, 21);
	disarm_remove();
	is(remove_err, 0, "%s: removed between the choice and the lock", mode_name(mode));
	is(READ_ONCE(lc->anon_cost), 0, "%s: nothing added to the reparented lruvec",
	   mode_name(mode));
	costs(lp, &anon, &file);
	is(anon, 21, "%s: the parent has the delta", mode_name(mode));
	check_ok(m, mode_name(mode)); /* c is removed, not freed: lv_check() looks at it too */
	css_put(c);
	unfill(folios, NR_FILL);
	is(lv_memcg_remove(p), 0, "%s: p removed", mode_name(mode));
	lv_machine_destroy(m);
}

/* ---- the same balance on a deterministic workload ------------------------------------------ */

struct split {
	uint64_t scan, scan_anon;
};

/*
 * run_workload - one thread, one memcg limited to 4 MiB, a swap device: an anon region of
 * 3 MiB written over and over, beside a page cache file of 3 MiB read over and over. Reclaim
 * swaps anon out and evicts file pages; the refaults of each side are its costs, so the split
 * of the scan follows which side refaults more, and @anon_pages shifts it.
 */
static struct split run_workload(enum lv_scan_cost mode, unsigned int anon_pages,
				 unsigned int file_pages)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m;
	struct lv_memcg *c;
	struct lv_mm *mm;
	struct lv_file *f;
	unsigned char buf[PAGE];
	uint64_t addr;
	struct split sp;

	cfg.scan_cost = mode;
	cfg.node_mem_bytes = 32 * MiB;
	m = new_machine(&cfg);
	if (lv_swap_on(m, -1, 16 * MiB, 0) < 0)
		BAIL_OUT("lv_swap_on");
	c = lv_memcg_create(m, NULL, "c");
	lv_memcg_set_max(c, 4 * MiB / PAGE);
	mm = lv_mm_create(m, c, 0);
	f = lv_file_open(m, -1, (uint64_t)file_pages * PAGE);
	if (!mm || !f || lv_mmap(mm, (size_t)anon_pages * PAGE, &addr))
		BAIL_OUT("setup");
	memset(buf, 0x5a, sizeof(buf));
	for (int pass = 0; pass < 6; pass++) {
		for (unsigned int i = 0; i < anon_pages || i < file_pages; i++) {
			if (i < anon_pages && lv_mm_write(mm, addr + (uint64_t)i * PAGE, buf, 8))
				BAIL_OUT("lv_mm_write");
			if (i < file_pages &&
			    lv_file_read(f, c, buf, PAGE, (uint64_t)i * PAGE) != (long)PAGE)
				BAIL_OUT("lv_file_read");
		}
	}
	sp.scan = lv_memcg_stat(c, LV_PGSCAN);
	sp.scan_anon = lv_memcg_stat(c, LV_PGSCAN_ANON);
	lv_file_close(f);
	lv_mm_destroy(mm);
	lv_lru_add_drain_all(m);
	if (lv_memcg_remove(c))
		BAIL_OUT("lv_memcg_remove");
	lv_machine_destroy(m);
	return sp;
}

static double anon_share(struct split sp)
{
	return sp.scan ? (double)sp.scan_anon / (double)sp.scan : 0;
}

static void test_balance(void)
{
	static const unsigned int shapes[][2] = { { 768, 768 }, { 1024, 384 }, { 640, 896 } };

	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		struct split l = run_workload(LV_COST_LOCKED, shapes[i][0], shapes[i][1]);
		struct split v = run_workload(LV_COST_VMSTAT, shapes[i][0], shapes[i][1]);
		double dl = anon_share(l), dv = anon_share(v);

		diag("anon %u, file %u pages: locked scanned %llu (anon %.3f), vmstat %llu "
		     "(anon %.3f)",
		     shapes[i][0], shapes[i][1], (unsigned long long)l.scan, dl,
		     (unsigned long long)v.scan, dv);
		ok(l.scan > 1000 && v.scan > 1000, "shape %zu: reclaim ran in both modes", i);
		ok(dl > 0.02 && dl < 0.98, "shape %zu: locked splits the scan (anon %.3f)", i, dl);
		/*
		 * Alike within what a sum halved once at the fold instead of at each noting
		 * shifts: without the fold (no costs at all) the first two shapes are off by
		 * 0.03-0.04 in share and 13-18 % in anon pages scanned.
		 */
		ok(fabs(dl - dv) <= 0.015, "shape %zu: vmstat splits it alike (%.3f vs %.3f)", i,
		   dv, dl);
		ok(fabs((double)v.scan_anon - (double)l.scan_anon) <= 0.05 * (double)l.scan_anon,
		   "shape %zu: ... and scans as many anon pages, within 5 %% (%llu vs %llu)", i,
		   (unsigned long long)v.scan_anon, (unsigned long long)l.scan_anon);
	}
}

int main(void)
{
	test_config();
	test_same_costs(LV_COST_LOCKED);
	test_same_costs(LV_COST_VMSTAT);
	test_no_lock(LV_COST_LOCKED);
	test_no_lock(LV_COST_VMSTAT);
	test_rule(RULE_RACE);
	test_rule(RULE_DYING);
	test_rule(RULE_PENDING);
	test_recheck(LV_COST_LOCKED);
	test_recheck(LV_COST_VMSTAT);
	test_balance();
	return done_testing();
}
