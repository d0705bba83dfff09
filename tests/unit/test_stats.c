// SPDX-License-Identifier: LGPL-2.1-or-later
/* Statistics: class and item names, lock statistics per class and design, reset, the
 * perf-lock-style report, the three lock backends, lv_bug_count and lv_check's report. */
#include "lvtest.h"

#include <unistd.h>

static uint64_t acquired(struct lv_machine *m, enum lv_lock_class cls)
{
	struct lv_lock_stat s;

	lv_lock_stats(m, cls, &s);
	return s.acquired;
}

static void test_names(void)
{
	static const char *const classes[LV_NR_LOCK_CLASSES] = {
		[LV_LOCK_CLASS_LRUVEC] = "lruvec", [LV_LOCK_CLASS_NODE] = "node",
		[LV_LOCK_CLASS_ZONE] = "zone",	   [LV_LOCK_CLASS_SLOT] = "slot",
		[LV_LOCK_CLASS_PCP] = "pcp",	   [LV_LOCK_CLASS_DRAIN] = "drain",
		[LV_LOCK_CLASS_MEMCG] = "memcg",   [LV_LOCK_CLASS_MAPPING] = "mapping",
		[LV_LOCK_CLASS_SHADOW] = "shadow", [LV_LOCK_CLASS_MM] = "mm",
		[LV_LOCK_CLASS_SWAP] = "swap",	   [LV_LOCK_CLASS_COST] = "cost",
	};
	/* The kernel's vmstat names where the kernel has the counter. */
	static const char *const kernel_names[LV_NR_STAT_ITEMS] = {
		[LV_NR_INACTIVE_ANON] = "nr_inactive_anon",
		[LV_NR_ACTIVE_ANON] = "nr_active_anon",
		[LV_NR_INACTIVE_FILE] = "nr_inactive_file",
		[LV_NR_ACTIVE_FILE] = "nr_active_file",
		[LV_NR_UNEVICTABLE] = "nr_unevictable",
		[LV_NR_FREE] = "nr_free_pages",
		[LV_PGACTIVATE] = "pgactivate",
		[LV_PGDEACTIVATE] = "pgdeactivate",
		[LV_PGLAZYFREE] = "pglazyfree",
		[LV_PGROTATED] = "pgrotated",
		[LV_PGSCAN] = "pgscan",
		[LV_PGSTEAL] = "pgsteal",
		[LV_PGREFILL] = "pgrefill",
		[LV_WORKINGSET_REFAULT] = "workingset_refault",
		[LV_WORKINGSET_ACTIVATE] = "workingset_activate",
		[LV_WORKINGSET_NODERECLAIM] = "workingset_nodereclaim",
		[LV_ALLOCSTALL] = "allocstall",
		[LV_NR_FILE_PAGES] = "nr_file_pages",
		[LV_PGMIGRATE_SUCCESS] = "pgmigrate_success",
		[LV_PGMIGRATE_FAIL] = "pgmigrate_fail",
		[LV_WORKINGSET_NODES] = "workingset_nodes",
		[LV_PAGEOUTRUN] = "pageoutrun",
		[LV_PGPGIN] = "pgpgin",
	};

	for (int c = 0; c < LV_NR_LOCK_CLASSES; c++)
		is_str(lv_lock_class_name(c), classes[c], "lock class %d is named '%s'", c,
		       classes[c]);
	is_str(lv_lock_class_name(LV_NR_LOCK_CLASSES), "?", "lock class out of range -> '?'");
	is_str(lv_lock_class_name((enum lv_lock_class) - 1), "?", "lock class -1 -> '?'");
	is_str(lv_lock_class_name((enum lv_lock_class)1000), "?", "lock class 1000 -> '?'");

	for (int i = 0; i < LV_NR_STAT_ITEMS; i++) {
		const char *n = lv_stat_name(i);
		int dup = 0;

		ok(n && n[0] && strcmp(n, "?") != 0, "stat item %d has a name (%s)", i,
		   n ? n : "NULL");
		if (kernel_names[i])
			is_str(n, kernel_names[i], "stat item %d is the kernel's '%s'", i,
			       kernel_names[i]);
		for (int j = 0; j < i && n; j++)
			dup += lv_stat_name(j) && strcmp(lv_stat_name(j), n) == 0;
		is(dup, 0, "stat item %d's name is unique", i);
	}
	is_str(lv_stat_name(LV_NR_STAT_ITEMS), "?", "stat item out of range -> '?'");
	is_str(lv_stat_name((enum lv_stat_item) - 1), "?", "stat item -1 -> '?'");
}

/* A short sequence touching every lock class. */
static void exercise(struct lv_machine *m, struct lv_memcg *mg)
{
	struct lv_folio *f = alloc_or_bail(m, 0, 0, mg, 0);
	struct lv_folio *g = alloc_or_bail(m, 0, 2, mg, LV_FOLIO_ANON);

	lv_folio_add_lru(f);
	lv_folio_add_lru(g);
	lv_lru_add_drain_all(m);
	lv_folio_mark_accessed(f);
	lv_folio_mark_accessed(f);
	lv_folio_deactivate(g);
	lv_lru_add_drain(m);
	if (lv_folio_isolate_lru(g) == 0)
		lv_folio_putback_lru(g);
	lv_lru_add_drain_all(m);
	lv_folio_put(f);
	lv_folio_put(g);
}

static void test_lock_stats_designs(void)
{
	struct lv_config cfg;
	struct lv_machine *m;
	struct lv_memcg *mg;
	struct lv_lock_stat s;
	uint64_t before, after;

	/* Per-lruvec locks. */
	cfg = small_config();
	m = new_machine(&cfg);
	mg = lv_memcg_create(m, NULL, "stats");
	lv_lock_stats_reset(m);
	exercise(m, mg);
	before = acquired(m, LV_LOCK_CLASS_LRUVEC);
	ok(before > 0, "lruvec design: lruvec locks acquired (%llu)", (unsigned long long)before);
	is(acquired(m, LV_LOCK_CLASS_NODE), 0, "lruvec design: node locks unused");
	ok(acquired(m, LV_LOCK_CLASS_ZONE) > 0, "zone lock acquired by allocations");
	ok(acquired(m, LV_LOCK_CLASS_PCP) > 0, "pcp lock acquired by order-0 allocations");
	ok(acquired(m, LV_LOCK_CLASS_SLOT) > 0, "slot lock acquired by adds");
	ok(acquired(m, LV_LOCK_CLASS_DRAIN) > 0, "drain mutex acquired by drain_all");
	ok(acquired(m, LV_LOCK_CLASS_MEMCG) > 0, "memcg mutex acquired");
	exercise(m, mg);
	after = acquired(m, LV_LOCK_CLASS_LRUVEC);
	ok(after > before, "lruvec acquisitions grow with more operations (%llu -> %llu)",
	   (unsigned long long)before, (unsigned long long)after);
	lv_lock_stats(m, LV_LOCK_CLASS_LRUVEC, &s);
	is(s.contended, 0, "single thread: never contended");
	is(s.wait_min_ns, 0, "never contended: wait_min 0");
	is(s.wait_total_ns, 0, "never contended: no wait");
	/* Statistics of removed memcgs are kept. */
	is(lv_memcg_remove(mg), 0, "remove the memcg");
	ok(acquired(m, LV_LOCK_CLASS_LRUVEC) >= after,
	   "lruvec stats include the removed memcg's locks");
	finish(m, "lruvec-design machine");

	/* Node locks (Linux <= 5.10). */
	cfg = small_config();
	cfg.lock_design = LV_LOCK_NODE;
	m = new_machine(&cfg);
	mg = lv_memcg_create(m, NULL, "stats");
	lv_lock_stats_reset(m);
	exercise(m, mg);
	exercise(m, NULL);
	before = acquired(m, LV_LOCK_CLASS_NODE);
	ok(before > 0, "node design: node locks acquired (%llu)", (unsigned long long)before);
	is(acquired(m, LV_LOCK_CLASS_LRUVEC), 0, "node design: per-lruvec locks unused");
	exercise(m, mg);
	ok(acquired(m, LV_LOCK_CLASS_NODE) > before, "node acquisitions grow");
	is(lv_memcg_remove(mg), 0, "remove the memcg");
	finish(m, "node-design machine");

	/* memcg disabled: the node's own lruvec, under the node lock. */
	cfg = small_config();
	cfg.memcg_disabled = true;
	m = new_machine(&cfg);
	lv_lock_stats_reset(m);
	exercise(m, NULL);
	ok(acquired(m, LV_LOCK_CLASS_NODE) > 0, "memcg disabled: node locks acquired");
	is(acquired(m, LV_LOCK_CLASS_LRUVEC), 0, "memcg disabled: no lruvec-class lock");
	finish(m, "memcg-disabled machine");
}

static void test_reset(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *mg = lv_memcg_create(m, NULL, "r");
	struct lv_memcg *gone = lv_memcg_create(m, NULL, "gone");

	exercise(m, mg);
	exercise(m, gone);
	is(lv_memcg_remove(gone), 0, "remove a used memcg (its stats are retired)");
	ok(acquired(m, LV_LOCK_CLASS_LRUVEC) > 0, "before reset: lruvec stats nonzero");
	lv_lock_stats_reset(m);
	for (int c = 0; c < LV_NR_LOCK_CLASSES; c++) {
		struct lv_lock_stat s;

		if (c == LV_LOCK_CLASS_MEMCG)
			continue;
		lv_lock_stats(m, c, &s);
		ok(s.acquired == 0 && s.contended == 0 && s.wait_total_ns == 0 &&
			   s.wait_max_ns == 0 && s.wait_min_ns == 0,
		   "after reset: class %s zeroed (incl. removed memcgs)", lv_lock_class_name(c));
	}
	/* Reading statistics takes the memcg mutex itself (at most once per class). */
	ok(acquired(m, LV_LOCK_CLASS_MEMCG) <= LV_NR_LOCK_CLASSES + 1,
	   "after reset: memcg mutex only counts the statistics readers (%llu)",
	   (unsigned long long)acquired(m, LV_LOCK_CLASS_MEMCG));
	exercise(m, mg);
	ok(acquired(m, LV_LOCK_CLASS_LRUVEC) > 0, "counting resumes after reset");
	is(lv_memcg_remove(mg), 0, "remove r");
	finish(m, "reset machine");
}

/*
 * The memcg class and the statistics calls: a reset zeroes it too; reading it takes no lock;
 * reading a class kept in listed objects (lruvec, shadow, mapping, mm, drain) takes the memcg
 * tree mutex once, and so does lv_node_stat() for an item kept in lruvecs; the printed row
 * leaves out the print's own acquisitions. No memcg is removed here: a removed memcg's free
 * takes the mutex from an RCU callback, at a time of its own.
 */
static void test_memcg_class(void)
{
	static const enum lv_lock_class listed[] = {
		LV_LOCK_CLASS_LRUVEC, LV_LOCK_CLASS_SHADOW, LV_LOCK_CLASS_MAPPING, LV_LOCK_CLASS_MM,
		LV_LOCK_CLASS_DRAIN,  LV_LOCK_CLASS_SWAP,   LV_LOCK_CLASS_COST,
	};
	static const enum lv_lock_class fixed[] = {
		LV_LOCK_CLASS_NODE,
		LV_LOCK_CLASS_ZONE,
		LV_LOCK_CLASS_SLOT,
		LV_LOCK_CLASS_PCP,
	};
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *mg = new_memcg(m, NULL, "mc");
	struct lv_mm *mm = new_mm(m, mg, 0);
	struct lv_file *f = lv_file_open(m, -1, 4 * LV_PAGE_SIZE);
	char buf[64], *out = NULL;
	bool memcg_row = false;
	size_t len = 0;
	FILE *stream;

	if (!f)
		BAIL_OUT("memcg class: open");
	exercise(m, mg);
	lv_file_read(f, mg, buf, sizeof(buf), 0);
	ok(acquired(m, LV_LOCK_CLASS_MEMCG) > 0, "memcg class: used before the reset");
	lv_lock_stats_reset(m);
	is(acquired(m, LV_LOCK_CLASS_MEMCG), 0, "memcg class: zero after a reset");
	is(acquired(m, LV_LOCK_CLASS_MEMCG), 0, "memcg class: reading it takes no lock");
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		acquired(m, fixed[i]);
	is(acquired(m, LV_LOCK_CLASS_MEMCG), 0, "memcg class: nor does reading a fixed class");
	for (size_t i = 0; i < sizeof(listed) / sizeof(listed[0]); i++) {
		acquired(m, listed[i]);
		is(acquired(m, LV_LOCK_CLASS_MEMCG), i + 1,
		   "memcg class: reading the %s class takes the memcg mutex once",
		   lv_lock_class_name(listed[i]));
	}
	lv_node_stat(m, 0, LV_NR_INACTIVE_FILE);
	is(acquired(m, LV_LOCK_CLASS_MEMCG), 8,
	   "memcg class: lv_node_stat of a list takes it once");
	lv_node_stat(m, 0, LV_NR_FREE);
	is(acquired(m, LV_LOCK_CLASS_MEMCG), 8, "memcg class: ... of a node-only item not at all");

	lv_lock_stats_reset(m);
	stream = open_memstream(&out, &len);
	lv_lock_stats_print(m, stream);
	fclose(stream);
	for (char *line = out, *nl; line && *line; line = nl ? nl + 1 : NULL) {
		char name[64];

		nl = strchr(line, '\n');
		memcg_row |= sscanf(line, "%63s", name) == 1 && !strcmp(name, "memcg");
	}
	ok(!memcg_row, "memcg class: after a reset, the print's own acquisitions are not printed");
	is(acquired(m, LV_LOCK_CLASS_MEMCG), 7,
	   "memcg class: ... though it took the mutex 7 times");
	free(out);
	lv_file_close(f);
	lv_mm_destroy(mm);
	lv_lru_add_drain_all(m);
	is(lv_memcg_remove(mg), 0, "memcg class: memcg removed");
	finish(m, "memcg class");
}

static void test_print(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *mg = lv_memcg_create(m, NULL, "p");
	char *buf = NULL, *line, *save = NULL;
	size_t len = 0;
	FILE *f;
	int rows = 0, lruvec_row = 0, node_row = 0, zone_row = 0, header = 0;
	uint64_t lru_acq;

	lv_lock_stats_reset(m);
	exercise(m, mg);
	lru_acq = acquired(m, LV_LOCK_CLASS_LRUVEC);
	f = open_memstream(&buf, &len);
	lv_lock_stats_print(m, f);
	fclose(f);
	ok(len > 0, "lv_lock_stats_print writes a report");
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[64];
		unsigned long long acq, cont, avg, tot, max, min;

		if (!header) {
			header = strstr(line, "Name") && strstr(line, "acquired") &&
				 strstr(line, "contended") && strstr(line, "avg wait") &&
				 strstr(line, "total wait") && strstr(line, "max wait") &&
				 strstr(line, "min wait");
			ok(header, "first line is the perf lock report header");
			if (!header)
				diag("header: %s", line);
			continue;
		}
		rows++;
		if (sscanf(line, "%63s %llu %llu %llu %llu %llu %llu", name, &acq, &cont, &avg,
			   &tot, &max, &min) != 7) {
			ok(0, "row parses as name + 6 numbers: %s", line);
			continue;
		}
		ok(acq > 0, "row '%s' is a used class", name);
		if (!strcmp(name, "lruvec")) {
			lruvec_row++;
			is(acq, lru_acq, "lruvec row shows the acquired count of lv_lock_stats");
			is(cont, 0, "lruvec row: no contention");
		}
		node_row += !strcmp(name, "node");
		zone_row += !strcmp(name, "zone");
	}
	is(lruvec_row, 1, "one lruvec row");
	is(zone_row, 1, "one zone row");
	is(node_row, 0, "no row for the unused node class");
	ok(rows >= 4 && rows <= LV_NR_LOCK_CLASSES, "one row per used class (%d)", rows);
	free(buf);
	is(lv_memcg_remove(mg), 0, "remove p");
	finish(m, "print machine");
}

/* Every backend runs the sequence, single-threaded and with two threads contending. */
struct contend_arg {
	struct lv_machine *m;
	struct lv_memcg *mg;
	pthread_barrier_t *leave; /* exit together: see test_threads.c (liburcu-bp slot reuse) */
};

static void *contend(void *p)
{
	struct contend_arg *a = p;

	for (int i = 0; i < 200; i++)
		exercise(a->m, a->mg);
	pthread_barrier_wait(a->leave);
	return NULL;
}

static void test_backends(void)
{
	static const struct {
		enum lv_lock_backend b;
		const char *name;
	} backends[] = { { LV_BACKEND_FUTEX, "futex" },
			 { LV_BACKEND_MUTEX, "mutex" },
			 { LV_BACKEND_SPIN, "spin" },
			 { LV_BACKEND_ADAPTIVE, "adaptive" } };

	for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++) {
		struct lv_config cfg = small_config();
		struct lv_machine *m;
		struct lv_memcg *a, *b;
		struct lv_folio *f;
		struct lv_lock_stat s;
		pthread_t t[2];
		struct contend_arg arg;
		const char *n = backends[i].name;

		cfg.lock_backend = backends[i].b;
		cfg.batch_size = 4;
		m = new_machine(&cfg);
		a = lv_memcg_create(m, NULL, "a");
		b = lv_memcg_create(m, a, "b");
		f = alloc_or_bail(m, 0, 0, a, 0);
		is(lv_folio_add_lru(f), 0, "%s: add", n);
		lv_lru_add_drain_all(m);
		lv_folio_activate(f);
		lv_lru_add_drain(m);
		ok(lv_folio_test(f, LV_PG_ACTIVE), "%s: activate", n);
		is(lv_folio_move_memcg(f, b), 0, "%s: move", n);
		lv_lru_cache_disable(m);
		is(lv_folio_isolate_lru(f), 0, "%s: isolate", n);
		is(lv_folio_putback_lru(f), 0, "%s: putback", n);
		lv_lru_cache_enable(m);
		is(lv_memcg_stat(b, LV_NR_ACTIVE_FILE), 1, "%s: on b's active list", n);
		exercise(m, b);
		ok(acquired(m, LV_LOCK_CLASS_LRUVEC) > 0, "%s: lruvec locks counted", n);
		check_ok(m, n);

		pthread_barrier_t leave;

		pthread_barrier_init(&leave, NULL, 2);
		arg = (struct contend_arg){ m, b, &leave };
		for (int k = 0; k < 2; k++)
			pthread_create(&t[k], NULL, contend, &arg);
		for (int k = 0; k < 2; k++)
			pthread_join(t[k], NULL);
		pthread_barrier_destroy(&leave);
		for (int c = 0; c < LV_NR_LOCK_CLASSES; c++) {
			lv_lock_stats(m, c, &s);
			ok(s.contended <= s.acquired &&
				   (s.contended
					    ? s.wait_min_ns > 0 && s.wait_min_ns <= s.wait_max_ns &&
						      s.wait_max_ns <= s.wait_total_ns
					    : s.wait_min_ns == 0 && s.wait_total_ns == 0),
			   "%s: %s stats consistent (acq %llu, cont %llu, min %llu, max %llu, "
			   "total %llu)",
			   n, lv_lock_class_name(c), (unsigned long long)s.acquired,
			   (unsigned long long)s.contended, (unsigned long long)s.wait_min_ns,
			   (unsigned long long)s.wait_max_ns, (unsigned long long)s.wait_total_ns);
		}
		lv_folio_put(f);
		is(lv_memcg_remove(b), 0, "%s: remove b", n);
		is(lv_memcg_remove(a), 0, "%s: remove a", n);
		finish(m, n);
	}
}

static void test_check_report(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_folio *f = alloc_or_bail(m, 0, 0, NULL, 0);
	FILE *tmp = tmpfile();
	int saved, rc;
	long size;

	is(lv_bug_count(m), 0, "lv_bug_count is 0 on a new machine");
	lv_folio_add_lru(f); /* still queued: lv_check drains first */
	{
		char *buf = NULL;
		size_t len = 0;
		FILE *r = open_memstream(&buf, &len);

		is(lv_check(m, r), 0, "lv_check on a healthy machine with a queued folio -> 0");
		fclose(r);
		is(len, 0, "and writes nothing to its report");
		free(buf);
	}
	ok(lv_folio_test(f, LV_PG_LRU), "lv_check drained the batch");
	/* NULL report: stderr, which must stay silent too. */
	fflush(stderr);
	saved = dup(2);
	dup2(fileno(tmp), 2);
	rc = lv_check(m, NULL);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	fseek(tmp, 0, SEEK_END);
	size = ftell(tmp);
	fclose(tmp);
	is(rc, 0, "lv_check(m, NULL) -> 0");
	is(size, 0, "lv_check(m, NULL) writes nothing to stderr");
	is(lv_bug_count(m), 0, "lv_bug_count still 0");
	lv_folio_put(f);
	finish(m, "check machine");
}

/*
 * The locks of files and mms go away with them, and their statistics then move to the retired
 * totals. A reading sums the live ones and the retired ones in one hold of the memcg mutex: a
 * lock retired between two holds would be counted twice in that reading, and the next reading
 * would be smaller. Read while another thread opens, reads and closes files, and creates,
 * faults and destroys mms.
 */
struct retire_arg {
	struct lv_machine *m;
	int ready, stop;
	unsigned long cycles; /* written by the churner only */
};

static void *retire_churn(void *p)
{
	struct retire_arg *a = p;
	char buf[LV_PAGE_SIZE];

	__atomic_store_n(&a->ready, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&a->stop, __ATOMIC_ACQUIRE)) {
		struct lv_file *f = lv_file_open(a->m, -1, 1 << 20);
		struct lv_mm *mm = lv_mm_create(a->m, NULL, 0);
		uint64_t addr;

		if (!f || !mm)
			BAIL_OUT("retire: lv_file_open or lv_mm_create failed: %s",
				 strerror(errno));
		if (lv_file_read(f, NULL, buf, sizeof(buf), 0) != (long)sizeof(buf))
			BAIL_OUT("retire: lv_file_read of a hole failed");
		lv_file_close(f);
		if (lv_mmap(mm, LV_PAGE_SIZE, &addr) || lv_mm_memset(mm, addr, 1, LV_PAGE_SIZE))
			BAIL_OUT("retire: lv_mmap or lv_mm_memset failed");
		lv_mm_destroy(mm);
		__atomic_store_n(&a->cycles, a->cycles + 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void test_retired_sum(void)
{
	static const enum lv_lock_class classes[] = { LV_LOCK_CLASS_MAPPING, LV_LOCK_CLASS_MM };
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	struct retire_arg a = { .m = m };
	uint64_t last[2] = { 0 }, backwards[2] = { 0 }, readings = 0;
	struct timespec t0, t;
	long ms;
	pthread_t th;

	start_ready(&th, retire_churn, &a, &a.ready);
	/* At least 300 ms and 1000 cycles and readings; at most 10 s on a very slow machine. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 2; i++) {
			uint64_t now = acquired(m, classes[i]);

			backwards[i] += now < last[i];
			last[i] = now;
		}
		readings++;
		clock_gettime(CLOCK_MONOTONIC, &t);
		ms = (t.tv_sec - t0.tv_sec) * 1000l + (t.tv_nsec - t0.tv_nsec) / 1000000l;
	} while (ms < 10000 && (ms < 300 || readings < 1000 ||
				__atomic_load_n(&a.cycles, __ATOMIC_RELAXED) < 1000));
	__atomic_store_n(&a.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	ok(a.cycles > 100 && readings > 100,
	   "retire: %lu files and mms came and went, %llu readings", a.cycles,
	   (unsigned long long)readings);
	for (int i = 0; i < 2; i++) {
		is(backwards[i], 0, "retire: the %s total never shrank between two readings",
		   lv_lock_class_name(classes[i]));
		ok(acquired(m, classes[i]) >= a.cycles,
		   "retire: the acquisitions of every closed %s are still counted",
		   classes[i] == LV_LOCK_CLASS_MM ? "mm" : "file");
	}
	finish(m, "retire machine");
}

int main(void)
{
	test_names();
	test_lock_stats_designs();
	test_reset();
	test_memcg_class();
	test_print();
	test_backends();
	test_check_report();
	/* Last: its thread exits while the main thread stays registered with liburcu-bp. */
	test_retired_sum();
	return done_testing();
}
