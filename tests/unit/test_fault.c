// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Fault injection (src/fault.h): one deterministic, one-thread workload that reaches every
 * kind of site the library has (host allocations and mappings, frames, charges, pread and
 * pwrite of a file and of a swap device, thread creation) is run once to count the sites it
 * reaches, then once for every N up to that count with the Nth site failing. Each run checks
 * that every call returns its result or an error its header documents, that no byte written
 * before is lost (a call that failed once succeeds when repeated, and reads back what was
 * written), and that the machine ends empty: lv_check() passes, every page is free, nothing
 * is charged, no internal bug was counted, and (outside AddressSanitizer, whose LSan checks
 * the same at exit under `make asan`) the host heap in use is what it was before the run.
 * The sites and how often the counting run reached each are printed as diagnostics.
 */
#define LV_NO_FAULT_SITES /* the test's own allocations are not the library's sites */
#include "lvtest.h"
#include "lvtest_internal.h"

#include <sys/mman.h>

#define PAGES	 16
#define FILE_LEN (16ul << 10)
#define SWAP_LEN (2ul << 20)
#define FMAP_LEN (4 * LV_PAGE_SIZE)
#define SEED	 7

static int real_fd, swap_fd;
static unsigned long run_n;	 /* the failing site of this run; 0: none */
static unsigned long violations; /* calls that broke their contract, over every run */
static unsigned long lost;	 /* pages whose bytes did not read back */
static unsigned long unclean;	 /* runs that left the machine not empty or failing lv_check */
static unsigned long run_sites;	 /* the sites the last run reached */

static void violation(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void violation(const char *fmt, ...)
{
	const struct fault_site *s = fault_injected();
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (violations++ < 20)
		diag("run %lu (failed %s at %s:%d): %s", run_n, s ? fault_kind_name(s->kind) : "-",
		     s ? s->file : "-", s ? s->line : 0, msg);
}

#define expect(cond, ...)                                                                          \
	do {                                                                                       \
		if (!(cond))                                                                       \
			violation(__VA_ARGS__);                                                    \
	} while (0)

static struct lv_config base_config(void)
{
	struct lv_config cfg;

	lv_config_init(&cfg);
	cfg.nr_nodes = 1;
	cfg.node_mem_bytes = 4ul << 20;
	cfg.nr_cpu_slots = 1;
	cfg.no_kswapd = true;
	cfg.no_kcompactd = true;
	/* Reads ahead: every allocation, charge, tree node and fill of a run fails in turn. */
	cfg.readahead_pages = 4;
	return cfg;
}

/*
 * read_page - page @p of the region at @base must hold pat() if @written, else zeros. A read
 * may fail once (the one injected fault: a swap-in's allocation, charge or read) with an
 * error lv_mm_read() documents; the second must succeed.
 */
static void read_page(struct lv_mm *mm, uint64_t base, int p, bool written, const char *when)
{
	uint64_t addr = base + (uint64_t)p * LV_PAGE_SIZE;
	long bad = written ? bad_pat(mm, addr, LV_PAGE_SIZE, SEED) : -2;

	if (!written) {
		unsigned char buf[LV_PAGE_SIZE];
		int rc = lv_mm_read(mm, addr, buf, sizeof(buf));

		if (rc) {
			expect(rc == -ENOMEM || rc == -EIO, "%s: lv_mm_read = %d", when, rc);
			rc = lv_mm_read(mm, addr, buf, sizeof(buf));
		}
		expect(rc == 0, "%s: lv_mm_read failed twice (%d)", when, rc);
		for (size_t k = 0; !rc && k < sizeof(buf); k++)
			if (buf[k]) {
				lost++;
				diag("run %lu: %s: page %d not zero", run_n, when, p);
				break;
			}
		return;
	}
	if (bad < 0)
		bad = bad_pat(mm, addr, LV_PAGE_SIZE, SEED);
	if (bad) {
		lost++;
		diag("run %lu: %s: page %d: %ld bytes wrong", run_n, when, p, bad);
	}
}

static void anon_work(struct lv_machine *m, struct lv_mm *mm, int ids[2])
{
	bool written[PAGES] = { 0 };
	uint64_t base, heap;
	int err;

	err = lv_mmap(mm, PAGES * LV_PAGE_SIZE, &base);
	expect(err == 0 || err == -ENOMEM, "lv_mmap = %d", err);
	if (err)
		return;
	for (int p = 0; p < PAGES; p++) {
		err = write_pat(mm, base + (uint64_t)p * LV_PAGE_SIZE, LV_PAGE_SIZE, SEED);
		expect(err == 0 || err == -ENOMEM, "lv_mm_write = %d", err);
		written[p] = !err;
	}
	ids[0] = lv_swap_on(m, swap_fd, SWAP_LEN, 1);
	expect(ids[0] >= 0 || ids[0] == -ENOMEM, "lv_swap_on(file) = %d", ids[0]);
	ids[1] = lv_swap_on(m, -1, SWAP_LEN, 0);
	expect(ids[1] >= 0 || ids[1] == -ENOMEM, "lv_swap_on(memory) = %d", ids[1]);
	err = lv_madvise(mm, base, PAGES * LV_PAGE_SIZE, LV_MADV_PAGEOUT);
	expect(err == 0 || err == -ENOMEM, "lv_madvise(PAGEOUT) = %d", err);
	for (int p = 0; p < PAGES; p++)
		read_page(mm, base, p, written[p], "swapped in");

	err = lv_mlock(mm, base, PAGES * LV_PAGE_SIZE);
	expect(err == 0 || err == -ENOMEM, "lv_mlock = %d", err);
	err = lv_munlock(mm, base, PAGES * LV_PAGE_SIZE);
	expect(err == 0 || err == -ENOMEM, "lv_munlock = %d", err);
	/* A hole in the middle splits the region (a new one is allocated). */
	err = lv_munmap(mm, base + 8 * LV_PAGE_SIZE, 2 * LV_PAGE_SIZE);
	expect(err == 0 || err == -ENOMEM, "lv_munmap = %d", err);
	if (!err)
		for (int p = 8; p < 10; p++)
			written[p] = false;
	err = lv_mm_brk(mm, 4 * LV_PAGE_SIZE, &heap);
	expect(err == 0 || err == -ENOMEM, "lv_mm_brk = %d", err);
	if (!err) {
		err = lv_mm_memset(mm, heap, 0x5a, 4 * LV_PAGE_SIZE);
		expect(err == 0 || err == -ENOMEM, "lv_mm_memset(heap) = %d", err);
	}
	err = lv_madvise(mm, base, PAGES * LV_PAGE_SIZE, LV_MADV_PAGEOUT);
	expect(err == 0 || err == -ENOMEM, "lv_madvise(PAGEOUT) = %d", err);

	/* Swapoff reads every page back; failed, the device stays on and loses nothing. */
	for (int k = 0; k < 2; k++) {
		if (ids[k] < 0)
			continue;
		err = lv_swap_off(m, ids[k]);
		expect(err == 0 || err == -ENOMEM || err == -EIO, "lv_swap_off = %d", err);
		if (err)
			err = lv_swap_off(m, ids[k]);
		expect(err == 0, "lv_swap_off failed twice (%d)", err);
		if (!err)
			ids[k] = -1;
	}
	for (int p = 0; p < PAGES; p++)
		if (p < 8 || p >= 10)
			read_page(mm, base, p, written[p], "after swapoff");
}

static void file_work(struct lv_machine *m, struct lv_memcg *memcg, struct lv_mm *mm)
{
	static unsigned char buf[FILE_LEN];
	struct lv_file *f = lv_file_open(m, real_fd, FILE_LEN);
	uint64_t addr;
	long n;
	int err;

	expect(f || errno == ENOMEM, "lv_file_open: errno %d", errno);
	if (!f)
		return;
	n = lv_file_read(f, memcg, buf, FILE_LEN, 0);
	expect(n == (long)FILE_LEN || n == -EIO || n == -ENOMEM || (n >= 0 && n < (long)FILE_LEN),
	       "lv_file_read = %ld", n);
	if (n != (long)FILE_LEN)
		n = lv_file_read(f, memcg, buf, FILE_LEN, 0);
	expect(n == (long)FILE_LEN, "lv_file_read repeated = %ld", n);
	if (n > 0 && bad_bytes(buf, (size_t)n, 0, FILE_LEN, SEED)) {
		lost++;
		diag("run %lu: the file read back wrong", run_n);
	}
	if (mm) {
		err = lv_mmap_file(mm, f, 0, FMAP_LEN, LV_MAP_PRIVATE, &addr);
		expect(err == 0 || err == -ENOMEM, "lv_mmap_file = %d", err);
		if (!err) {
			unsigned char page[LV_PAGE_SIZE];

			err = lv_mm_read(mm, addr + LV_PAGE_SIZE, page, sizeof(page));
			expect(err == 0 || err == -ENOMEM || err == -EIO, "file fault = %d", err);
			if (err)
				err = lv_mm_read(mm, addr + LV_PAGE_SIZE, page, sizeof(page));
			expect(err == 0, "file fault repeated = %d", err);
			if (!err && bad_bytes(page, sizeof(page), LV_PAGE_SIZE, FILE_LEN, SEED)) {
				lost++;
				diag("run %lu: the file mapping read back wrong", run_n);
			}
			err = lv_munmap(mm, addr, FMAP_LEN);
			expect(err == 0, "lv_munmap(file) = %d", err);
		}
	}
	expect(lv_file_truncate(f, 8192) == 0, "lv_file_truncate failed");
	lv_file_close(f);
}

static void folio_work(struct lv_machine *m, struct lv_memcg *memcg)
{
	struct lv_folio *f = lv_folio_alloc(m, 0, LV_MAX_ORDER, memcg, LV_FOLIO_ANON);
	struct lv_lock_site_stat sites[4];
	int err;

	expect(f || errno == ENOMEM, "lv_folio_alloc(huge): errno %d", errno);
	if (f) {
		expect(lv_folio_add_lru(f) == 0, "lv_folio_add_lru failed");
		err = lv_split_folio(f);
		expect(err == 0, "lv_split_folio = %d", err);
		lv_folio_put(f);
	}
	expect(lv_compact_node(m, 0, -1) == 0, "lv_compact_node failed");
	lv_reclaim_node(m, 0, 8);   /* frees what it can; a failed snapshot frees nothing */
	lv_lock_sites(m, sites, 4); /* 0 if its scratch space cannot be had, as documented */
}

/*
 * threads_work - the sites of thread creation, last: a run whose fault came earlier skips
 * them (the count after the failed site does not matter), so that only the counting run
 * and the runs failing one of them pay for the threads' start, stop and grace periods.
 */
static void threads_work(void)
{
	struct lv_config cfg = base_config();
	struct lv_machine *m;
	int err;

	if (fault_injected())
		return;
	/* A kswapd or kcompactd that cannot be started is left out. */
	cfg.no_kswapd = cfg.no_kcompactd = false;
	m = lv_machine_create(&cfg);
	expect(m || errno == ENOMEM, "lv_machine_create(threads): errno %d", errno);
	if (m)
		lv_machine_destroy(m);
	err = lock_watchdog_start(1000000000, NULL);
	expect(err == 0 || err == -EAGAIN || err == -ENOMEM, "lock_watchdog_start = %d", err);
	if (!err)
		lock_watchdog_stop();
}

/*
 * policy_work - a machine with per-lruvec batches, whose batch sets are one more host
 * allocation of lv_machine_create() (the other policies have none).
 */
static void policy_work(void)
{
	struct lv_config cfg = base_config();
	struct lv_machine *m;

	cfg.batch_policy = LV_BATCH_PER_LRUVEC;
	m = lv_machine_create(&cfg);
	expect(m || errno == ENOMEM, "lv_machine_create(per-lruvec): errno %d", errno);
	if (m)
		lv_machine_destroy(m);
}

/* workload - everything one run does; its checks count in the globals. */
static void workload(void)
{
	struct lv_config cfg = base_config();
	struct lv_machine *m;
	struct lv_memcg *memcg, *owner;
	struct lv_mm *mm;
	int ids[2] = { -1, -1 };

	m = lv_machine_create(&cfg);
	expect(m || errno == ENOMEM, "lv_machine_create: errno %d", errno);
	if (!m) {
		run_sites = fault_inject_stop();
		return;
	}
	memcg = lv_memcg_create(m, lv_memcg_root(m), "t");
	expect(memcg || errno == ENOMEM, "lv_memcg_create: errno %d", errno);
	owner = memcg ? memcg : lv_memcg_root(m);
	mm = lv_mm_create(m, owner, 0);
	expect(mm || errno == ENOMEM, "lv_mm_create: errno %d", errno);
	/*
	 * Tree nodes freed by one step go back to the machine's node cache in an RCU callback,
	 * and whether the next step's node allocations find them there (no site) or reach the
	 * host allocator (a site) would depend on when the callbacks ran: wait for them after
	 * every step, so that each run reaches the same sites in the same order.
	 */
	if (mm)
		anon_work(m, mm, ids);
	rcu_barrier_lv();
	file_work(m, owner, mm);
	rcu_barrier_lv();
	folio_work(m, owner);
	rcu_barrier_lv();
	if (mm)
		lv_mm_destroy(mm);
	for (int k = 0; k < 2; k++)
		if (ids[k] >= 0)
			expect(lv_swap_off(m, ids[k]) == 0,
			       "lv_swap_off of an empty device failed");
	lv_lru_add_drain_all(m);
	if (memcg)
		expect(lv_memcg_remove(memcg) == 0, "lv_memcg_remove failed");
	rcu_barrier_lv();
	policy_work();
	threads_work();
	rcu_barrier_lv();
	/*
	 * Limit reclaim pins its subtree in a snapshot, which allocates (global reclaim does not).
	 * Last, so that what it evicts cannot move the sites of the steps after it.
	 */
	lv_memcg_reclaim(lv_memcg_root(m), 4);
	run_sites = fault_inject_stop(); /* the checks below are not the workload's */

	if (lv_check(m, NULL) || lv_node_stat(m, 0, LV_NR_CHARGED) ||
	    lv_memcg_usage(lv_memcg_root(m)) || lv_bug_count(m)) {
		unclean++;
		diag("run %lu: not empty at the end: %llu pages charged, lv_check %s", run_n,
		     (unsigned long long)lv_node_stat(m, 0, LV_NR_CHARGED),
		     lv_check(m, NULL) ? "fails" : "passes");
	}
	lv_machine_destroy(m);
}

int main(void)
{
	const char *env = getenv("LV_FAULT_RUN");
	unsigned long only = env ? strtoul(env, NULL, 0) : 0;
	unsigned long total, reached = 0, nr_sites = 0, missed = 0;
	static unsigned long hits[4096], warm[4096];
	struct fault_site *s;

	plan(6);
	real_fd = temp_file(FILE_LEN, SEED);
	swap_fd = temp_file(SWAP_LEN, 1);

	/*
	 * A first run makes what is made once per process (the calling thread's watchdog
	 * record): that site is reached here only, and never failed.
	 */
	fault_inject_start(0);
	workload();
	for (s = __start_lv_fault_sites; s < __stop_lv_fault_sites; s++, nr_sites++)
		if (nr_sites < sizeof(warm) / sizeof(warm[0]))
			warm[nr_sites] = s->hits;
	nr_sites = 0;

	fault_inject_start(0);
	workload();
	total = run_sites;
	for (s = __start_lv_fault_sites; s < __stop_lv_fault_sites; s++, nr_sites++) {
		if (nr_sites < sizeof(hits) / sizeof(hits[0]))
			hits[nr_sites] = s->hits;
		reached += s->hits > 0 || (nr_sites < 4096 && warm[nr_sites]);
	}
	diag("%lu sites linked, %lu reached, %lu reached in all by one run", nr_sites, reached,
	     total);
	if (violations || lost || unclean)
		diag("the run without a fault: %lu violations, %lu pages lost, %lu unclean",
		     violations, lost, unclean);
	ok(total > 0 && !violations && !lost && !unclean,
	   "the workload runs clean with no fault injected");

	for (run_n = 1; run_n <= total; run_n++) {
		if (only && run_n != only)
			continue;
		fault_inject_start(run_n);
		workload();
		if (!fault_injected()) {
			missed++;
			diag("run %lu: the site failed was never reached", run_n);
		}
	}

	/* The table: every site, its kind, how often the first run and a later one reach it. */
	diag("kind    first  runs  site");
	for (s = __start_lv_fault_sites, nr_sites = 0; s < __stop_lv_fault_sites; s++, nr_sites++)
		diag("%-6s %5lu %5lu  %s:%d %s", fault_kind_name(s->kind),
		     nr_sites < 4096 ? warm[nr_sites] : 0, nr_sites < 4096 ? hits[nr_sites] : 0,
		     s->file, s->line, s->func);
	ok(reached == nr_sites, "every one of the %lu sites is reached (%lu are)", nr_sites,
	   reached);
	ok(!missed, "each of the %lu runs failed its site", total);
	is(violations, 0, "every failure returned an error its header documents");
	is(lost, 0, "no byte written before a failure was lost");
	is(unclean, 0, "every run ended with lv_check() passing and every page free");
	close(real_fd);
	close(swap_fd);
	return done_testing();
}
