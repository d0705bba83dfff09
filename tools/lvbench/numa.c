// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * numa - stress-ng's numa stressor on the library, and the lru_cache_disable() regression of
 * Linux 5.18 (the published runs: docs/benchmarks.md, numa; the protocol of
 * lru_cache_disable(): docs/protocol.md §5.5). Written from the stressor's description; no
 * stress-ng or kernel code is used.
 *
 * Theory of operation.
 *
 * An instance is one thread with an address space of its own (struct lv_mm, a process) that
 * maps a 4 MiB anonymous region (1024 pages) and then does bogo ops until the run ends. One
 * bogo op is the stressor's loop mapped onto library calls:
 *
 *   lv_mm_set_node(current node)              set_mempolicy(MPOL_PREFERRED)
 *   memset 0xff                               the first op faults all 1024 pages in
 *   lv_mm_set_node(random node, or invalid)   the random set_mempolicy variant
 *   2 x { status query of all pages; memset }  mbind(MPOL_MF_STRICT): a page-table check only
 *   lv_migrate_pages(all nodes -> next node)  migrate_pages: one disable/enable pair
 *   16 x { lv_move_pages(1024 pages); memset } move_pages, destinations round-robin over the
 *                                             nodes: one disable/enable pair each
 *   lv_move_pages(1024 pages)                 MPOL_MF_MOVE_ALL
 *   lv_move_pages(0 pages)                    nr_pages 0: still disables and enables
 *   lv_move_pages(1 page)                     flags 0
 *   lv_move_pages(an unmapped address)        -EFAULT in the status, after the disable
 *   lv_move_pages(a bad node) + an explicit
 *   lv_lru_cache_disable()/enable() pair      the kernel disables before it checks the node;
 *                                             the library refuses bad nodes first
 *   status query of all pages                 move_pages with nodes NULL: no disable
 *
 * That is 22 lru_cache_disable()/enable() pairs and 19 memsets of 4 MiB per bogo op. The
 * memsets are the user work; each lv_move_pages() checks every page's node under the mm's
 * page_table_lock and migrates those not yet on their destination (isolate under the lruvec
 * lock, copy, remap, put back on the LRU). Destinations come from a cursor that walks the
 * nodes round-robin, one page after the other, and carries on from call to call; the current
 * node advances by one per op. With two nodes (the default) migrate_pages moves half of the
 * pages each op and the first of the 16 move_pages moves the other half; later calls find
 * every page in place (1024 is a multiple of 2), so each op migrates about 1024 pages. With a
 * node count that does not divide 1024 the pattern shifts at every call and most pages move
 * every time (about 17,800 migrations per op with 3 nodes). On a single node nothing moves
 * and only the disables, drains and page-table walks remain, which is what Michael Larabel's
 * one-node machine measured.
 *
 * The invalid mbind, migrate_pages and move_pages calls that the kernel refuses before
 * reaching the LRU (bad pid, flags, lengths), getcpu() and the get_mempolicy() queries have
 * no counterpart: they touch nothing the library models.
 *
 * The disable mode of the machine is the point: in sweep mode lv_lru_cache_disable() locks
 * and drains every CPU slot (5.17's drain on every CPU), in rcu mode it first waits for a
 * normal RCU grace period (Linux 5.18's synchronize_rcu(): liburcu's, then the host kernel's,
 * milliseconds each time), in rcu-expedited mode for liburcu's alone (like the 5.19 fix,
 * short unless a reader was preempted in its read-side section). `lvbench compare numa`
 * runs rcu and sweep alternately.
 *
 * Rates follow stress-ng: bogo ops/s (real time) = the bogo ops of all instances divided by
 * the mean wall time per instance, from the start of its first op to the end of its last.
 * An op in progress when the run's time is up is finished and counted, as stress-ng does.
 * Every lv_lru_cache_disable() of the run is timed by the library, including those made
 * inside migration calls; its p50, p99 and max are reported beside the rate.
 */
#define _GNU_SOURCE
#include "lvbench.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NUMA_REGION	  (4ul << 20)		       /* the stressor's buffer */
#define NUMA_PAGES	  (NUMA_REGION / LV_PAGE_SIZE) /* 1024 */
#define NUMA_MOVES	  16			       /* move_pages + memset rounds per op */
#define NUMA_DISABLES_OP  22			       /* disable/enable pairs per op */
#define NUMA_MEMSETS_OP	  19			       /* 4 MiB memsets per op */
#define NUMA_CHECK_STRIDE 64 /* one page in 64 is read back after each op */

/* Published stress-ng NUMA results, bogo ops/s (docs/benchmarks.md, numa). */
#define PUB_V517     412.88 /* lru_cache_disable = lru_add_drain_all on every CPU */
#define PUB_V518     49.33  /* synchronize_rcu() */
#define PUB_V518_FIX 468.81 /* synchronize_rcu_expedited() */

struct numa_params {
	unsigned int instances; /* LVB_UNSET: one per online CPU */
};

static const struct lvb_opt numa_opts[] = {
	{ "instances", LVB_OPT_UINT, offsetof(struct numa_params, instances), 1, LVB_MAX_THREADS,
	  NULL, "N",
	  "stressor instances, each one thread with its own address\n"
	  "space, 1..65535",
	  "one per online CPU, as stress-ng --numa 0" },
	{ 0 }
};

static void numa_defaults(void *params)
{
	struct numa_params *p = params;

	p->instances = LVB_UNSET;
}

#define NUMA_NODE_MAX_MIB 65536 /* the library's largest node, 64 GiB */

/*
 * numa_memory_mib - memory per node for @instances regions: after migrate_pages every region
 * may sit on one node, and a migration needs free pages there; a quarter more plus 32 MiB
 * covers the watermarks, in 16 MiB steps. Past the largest node, the largest node: the
 * regions then fit only spread over the nodes, and migrations to a full node fail (counted).
 */
static unsigned int numa_memory_mib(unsigned int instances)
{
	uint64_t mib = (uint64_t)instances * 4 * 5 / 4 + 32;

	mib = (mib + 15) / 16 * 16;
	return mib < NUMA_NODE_MAX_MIB ? (unsigned int)mib : NUMA_NODE_MAX_MIB;
}

static int numa_prepare(struct lvb_common *opt, void *params)
{
	struct numa_params *p = params;
	uint64_t need, have;

	if (opt->threads != LVB_UNSET)
		return lvb_usage_error("numa: option '--threads' does not apply (one thread per "
				       "instance: use --instances)");
	if (p->instances == LVB_UNSET) {
		p->instances = lvb_online_cpus();
		if (p->instances > LVB_MAX_THREADS)
			p->instances = LVB_MAX_THREADS;
	}
	/* stress-ng's instances are processes of one cgroup. */
	if (opt->containers == LVB_UNSET)
		opt->containers = 1;
	if (opt->memory_mib == LVB_UNSET)
		opt->memory_mib = numa_memory_mib(p->instances);
	/* The regions must fit at all; a full node only makes migrations fail (counted). */
	need = (uint64_t)p->instances * (NUMA_REGION >> 20) + 16ull * opt->nodes;
	have = (uint64_t)opt->nodes * opt->memory_mib;
	if (need > have)
		return lvb_usage_error(
			"--memory, --instances: %u instances x %lu MiB and 16 MiB per node do not "
			"fit in %u node%s x %u MiB (at least %llu MiB per node, at most %u: more "
			"--nodes or fewer --instances)",
			p->instances, NUMA_REGION >> 20, opt->nodes, lvb_plural(opt->nodes),
			opt->memory_mib, (unsigned long long)((need + opt->nodes - 1) / opt->nodes),
			NUMA_NODE_MAX_MIB);
	return 0;
}

static unsigned int numa_nr_threads(const struct lvb_common *opt, const void *params)
{
	const struct numa_params *p = params;

	(void)opt;
	return p->instances;
}

/* ---- one instance ---------------------------------------------------------------------------- */

enum numa_counter {
	NUMA_DISABLE_PAIRS,   /* lru_cache_disable()/enable() pairs, inside calls or explicit */
	NUMA_MIGRATE_UNMOVED, /* pages lv_migrate_pages() left where they were */
	NUMA_MOVE_ENOMEM,     /* lv_move_pages() statuses: the destination was full */
	NUMA_MOVE_EBUSY,      /* ... the page was in use */
	NUMA_NR_COUNTERS
};

static const char *const numa_counter_names[NUMA_NR_COUNTERS] = {
	[NUMA_DISABLE_PAIRS] = "disable_pairs",
	[NUMA_MIGRATE_UNMOVED] = "migrate_unmoved",
	[NUMA_MOVE_ENOMEM] = "move_enomem",
	[NUMA_MOVE_EBUSY] = "move_ebusy",
};

struct numa_thread {
	struct lv_mm *mm;
	unsigned int nr_nodes;
	unsigned int node;   /* the current node: advances by one per op */
	unsigned int cursor; /* the round robin of move_pages destinations */
	int last_fill;	     /* the value of the last memset of an op */
	uint64_t rng;
	double start, end; /* CLOCK_MONOTONIC: first op started, last op ended */
	uint64_t addrs[NUMA_PAGES];
	int dest[NUMA_PAGES];
	int status[NUMA_PAGES];
} __attribute__((aligned(64))); /* written by its thread on every step: no false sharing */

static double numa_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* splitmix64: per-instance random streams from (seed, instance). */
static uint64_t numa_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void numa_memset(struct lvb_worker *w, struct numa_thread *nt, int c)
{
	int err = lv_mm_memset(nt->mm, nt->addrs[0], c, NUMA_REGION);

	if (err)
		lvb_worker_error(w, "lv_mm_memset", -err);
	nt->last_fill = c;
}

static void numa_set_node(struct lvb_worker *w, struct numa_thread *nt, int nid)
{
	bool valid = nid >= 0 && (unsigned int)nid < nt->nr_nodes;
	int err = lv_mm_set_node(nt->mm, nid);

	if (err != (valid ? 0 : -EINVAL))
		lvb_worker_error(w, "lv_mm_set_node", err ? -err : EINVAL);
}

/* The next @n destinations of the round robin over the nodes. */
static void numa_fill_dest(struct numa_thread *nt, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		nt->dest[i] = (int)nt->cursor;
		nt->cursor = (nt->cursor + 1) % nt->nr_nodes;
	}
}

/* A status query of every page (nodes NULL): no disable; every page must be present. */
static void numa_query(struct lvb_worker *w, struct numa_thread *nt)
{
	int err = lv_move_pages(nt->mm, NUMA_PAGES, nt->addrs, NULL, nt->status);

	if (err) {
		lvb_worker_error(w, "lv_move_pages (query)", -err);
		return;
	}
	for (size_t i = 0; i < NUMA_PAGES; i++) {
		if (nt->status[i] < 0 || (unsigned int)nt->status[i] >= nt->nr_nodes) {
			lvb_worker_error(w, "lv_move_pages (query): a page not present",
					 nt->status[i] < 0 ? -nt->status[i] : EINVAL);
			return;
		}
	}
}

/* Move the first @n pages to the next @n destinations: one disable/enable pair. */
static void numa_move(struct lvb_worker *w, struct numa_thread *nt, size_t n)
{
	int err;

	numa_fill_dest(nt, n);
	err = lv_move_pages(nt->mm, n, nt->addrs, nt->dest, nt->status);
	if (err) {
		lvb_worker_error(w, "lv_move_pages", -err);
		return;
	}
	w->counters[NUMA_DISABLE_PAIRS]++;
	for (size_t i = 0; i < n; i++) {
		int st = nt->status[i];

		if (st == nt->dest[i])
			continue;
		if (st == -ENOMEM)
			w->counters[NUMA_MOVE_ENOMEM]++;
		else if (st == -EBUSY)
			w->counters[NUMA_MOVE_EBUSY]++;
		else
			lvb_worker_error(w, "lv_move_pages: a page not on its destination",
					 st < 0 ? -st : EINVAL);
	}
}

static void numa_migrate(struct lvb_worker *w, struct numa_thread *nt)
{
	long left;

	nt->node = (nt->node + 1) % nt->nr_nodes;
	/* Every bit set, as the stressor passes its whole node mask as the old nodes. */
	left = lv_migrate_pages(nt->mm, ~0ull, (int)nt->node);
	if (left < 0) {
		lvb_worker_error(w, "lv_migrate_pages", (int)-left);
		return;
	}
	w->counters[NUMA_DISABLE_PAIRS]++;
	w->counters[NUMA_MIGRATE_UNMOVED] += (uint64_t)left;
}

/* The move_pages edge cases that still reach lru_cache_disable() in the kernel. */
static void numa_edge_cases(struct lvb_worker *w, struct numa_thread *nt)
{
	struct lv_machine *m = w->env->m;
	uint64_t unmapped = 0; /* page 0 lies below every region */
	int bad_node = (int)nt->nr_nodes, err;

	numa_move(w, nt, NUMA_PAGES); /* MPOL_MF_MOVE_ALL */
	numa_move(w, nt, 0);	      /* nr_pages 0 */
	numa_move(w, nt, 1);	      /* flags 0: one page */

	numa_fill_dest(nt, 1);
	err = lv_move_pages(nt->mm, 1, &unmapped, nt->dest, nt->status);
	if (err)
		lvb_worker_error(w, "lv_move_pages (unmapped address)", -err);
	else if (nt->status[0] != -EFAULT)
		lvb_worker_error(w, "lv_move_pages (unmapped address): status", EINVAL);
	else
		w->counters[NUMA_DISABLE_PAIRS]++;

	err = lv_move_pages(nt->mm, 1, nt->addrs, &bad_node, nt->status);
	if (err != -EINVAL)
		lvb_worker_error(w, "lv_move_pages (bad node)", err ? -err : EINVAL);
	lv_lru_cache_disable(m);
	lv_lru_cache_enable(m);
	w->counters[NUMA_DISABLE_PAIRS]++;
}

/* Migration must carry the data: read back one byte of some pages. */
static void numa_verify(struct lvb_worker *w, struct numa_thread *nt)
{
	for (size_t i = 0; i < NUMA_PAGES; i += NUMA_CHECK_STRIDE) {
		unsigned char b;
		int err = lv_mm_read(nt->mm, nt->addrs[i] + LV_PAGE_SIZE - 1, &b, 1);

		if (err) {
			lvb_worker_error(w, "lv_mm_read", -err);
			return;
		}
		if (b != (unsigned char)nt->last_fill) {
			lvb_worker_error(w, "lv_mm_read: data lost in migration", EIO);
			return;
		}
	}
}

static void numa_step(struct lvb_worker *w)
{
	struct numa_thread *nt = w->priv;

	if (!w->ops)
		nt->start = numa_now();

	numa_set_node(w, nt, (int)nt->node);
	numa_memset(w, nt, 0xff);
	numa_set_node(w, nt, (int)(numa_rand(&nt->rng) % (nt->nr_nodes + 1)));

	numa_query(w, nt);
	numa_memset(w, nt, 0xaa);
	numa_query(w, nt);
	numa_memset(w, nt, 0x5c);

	numa_migrate(w, nt);
	for (int j = 0; j < NUMA_MOVES; j++) {
		numa_move(w, nt, NUMA_PAGES);
		numa_memset(w, nt, j);
	}
	numa_edge_cases(w, nt);
	numa_query(w, nt);
	numa_verify(w, nt);

	w->ops++;
	w->amount++;
	nt->end = numa_now();
}

static const struct lvb_thread_ops numa_thread_ops = {
	.step = numa_step,
	.counter_names = numa_counter_names,
	.nr_counters = NUMA_NR_COUNTERS,
};

/*
 * stress-ng's real time: the mean wall time per instance. An instance that never completed an
 * op (a run too short for it to be scheduled) has none and does not count.
 */
static void numa_wall_time(const struct numa_thread *threads, unsigned int n,
			   struct lvb_result *res)
{
	double sum = 0;
	unsigned int k = 0;

	for (unsigned int t = 0; t < n; t++) {
		if (threads[t].end > threads[t].start) {
			sum += threads[t].end - threads[t].start;
			k++;
		}
	}
	if (k)
		res->elapsed = sum / k;
}

static int numa_run(const struct lvb_common *opt, const void *params, enum lv_lock_design design,
		    struct lvb_result *res)
{
	unsigned int n = opt->threads, nr_ready = 0;
	struct numa_thread *threads = NULL;
	struct lvb_worker *workers = NULL;
	struct lvb_env env;
	int err;

	(void)params;
	/* Real frames: the memsets and the migration copies are the user work. No reclaim. */
	err = lvb_env_create(&env, opt, design, LVB_ENV_DATA | LVB_ENV_NO_KSWAPD);
	if (err)
		return err;

	err = -ENOMEM;
	workers = lvb_zalloc(n * sizeof(*workers));
	threads = lvb_zalloc(n * sizeof(*threads));
	if (!workers || !threads)
		goto out;
	for (; nr_ready < n; nr_ready++) {
		unsigned int t = nr_ready;
		struct numa_thread *nt = &threads[t];
		uint64_t base;

		nt->nr_nodes = opt->nodes;
		nt->node = t % opt->nodes;
		nt->cursor = nt->node;
		nt->rng = opt->seed ^ ((uint64_t)(t + 1) << 32);
		nt->mm = lv_mm_create(env.m, env.memcgs[t % env.nr_memcgs], (int)nt->node);
		if (!nt->mm) {
			err = -errno;
			fprintf(stderr, "lvbench: numa: lv_mm_create: %s\n", strerror(errno));
			goto out;
		}
		err = lv_mmap(nt->mm, NUMA_REGION, &base);
		if (err) {
			fprintf(stderr, "lvbench: numa: lv_mmap: %s\n", strerror(-err));
			lv_mm_destroy(nt->mm);
			goto out;
		}
		for (size_t i = 0; i < NUMA_PAGES; i++)
			nt->addrs[i] = base + i * LV_PAGE_SIZE;
		workers[t].priv = nt;
	}
	err = lvb_run_threads(&env, workers, &numa_thread_ops, res);
	if (!err)
		numa_wall_time(threads, n, res);
out:
	/* Every page is released before the machine is checked empty. */
	for (unsigned int t = 0; t < nr_ready; t++)
		lv_mm_destroy(threads[t].mm);
	free(threads);
	free(workers);
	res->failures += lvb_env_destroy(&env);
	return err;
}

/* ---- output ---------------------------------------------------------------------------------- */

static double numa_us(uint64_t ns)
{
	return (double)ns * 1e-3;
}

static void numa_summary_line(FILE *out, const struct numa_params *p, const struct lvb_common *opt,
			      const struct lvb_series *s)
{
	const struct lv_latency *lat = &s->disable_latency;

	fprintf(out,
		"numa: instances=%u nodes=%u disable=%s lock=%s bogo_ops_per_sec=%.2f "
		"disable_p50_us=%.1f disable_p99_us=%.1f disable_max_us=%.1f\n",
		p->instances, opt->nodes, lvb_disable_names[s->disable], lvb_lock_names[s->design],
		lvb_series_rate(s), numa_us(lv_latency_percentile(lat, 50)),
		numa_us(lv_latency_percentile(lat, 99)), numa_us(lat->max_ns));
}

static void numa_row(FILE *out, const char *label, const struct lvb_series *s, unsigned int n,
		     double (*value)(const struct lvb_series *), const char *fmt)
{
	fprintf(out, "%-34s", label);
	for (unsigned int d = 0; d < n; d++)
		fprintf(out, fmt, value(&s[d]));
	fputc('\n', out);
}

static double v_rate(const struct lvb_series *s)
{
	return lvb_series_rate(s);
}

static double v_ops(const struct lvb_series *s)
{
	return (double)s->ops;
}

static double v_calls(const struct lvb_series *s)
{
	return (double)s->disable_latency.count;
}

static double v_calls_op(const struct lvb_series *s)
{
	return s->ops ? (double)s->disable_latency.count / (double)s->ops : 0;
}

static double v_p50(const struct lvb_series *s)
{
	return numa_us(lv_latency_percentile(&s->disable_latency, 50));
}

static double v_p99(const struct lvb_series *s)
{
	return numa_us(lv_latency_percentile(&s->disable_latency, 99));
}

static double v_max(const struct lvb_series *s)
{
	return numa_us(s->disable_latency.max_ns);
}

static double v_mean(const struct lvb_series *s)
{
	const struct lv_latency *lat = &s->disable_latency;

	return lat->count ? numa_us(lat->total_ns) / (double)lat->count : 0;
}

static double v_wait_op(const struct lvb_series *s)
{
	return s->ops ? (double)s->disable_latency.total_ns * 1e-6 / (double)s->ops : 0;
}

static double v_migrated(const struct lvb_series *s)
{
	return (double)s->vmstat[LV_PGMIGRATE_SUCCESS];
}

static double v_migrate_fail(const struct lvb_series *s)
{
	return (double)s->vmstat[LV_PGMIGRATE_FAIL];
}

static const struct lvb_series *find_mode(const struct lvb_series *s, unsigned int n,
					  enum lv_disable_mode mode)
{
	const struct lvb_series *found = NULL;

	for (unsigned int d = 0; d < n; d++) {
		if (s[d].disable != mode)
			continue;
		if (found)
			return NULL; /* two columns of one mode: a lock comparison */
		found = &s[d];
	}
	return found;
}

static const char *mode_label(enum lv_disable_mode mode)
{
	switch (mode) {
	case LV_DISABLE_RCU:
		return "rcu (as v5.18)";
	case LV_DISABLE_RCU_EXPEDITED:
		return "rcu-expedited (as the 5.19 fix)";
	default:
		return "sweep (as v5.17's drain on every CPU)";
	}
}

static void numa_published(FILE *out, const struct lvb_series *s, unsigned int n)
{
	const struct lvb_series *rcu = find_mode(s, n, LV_DISABLE_RCU);
	const struct lvb_series *sweep = find_mode(s, n, LV_DISABLE_SWEEP);

	fprintf(out,
		"\nPublished stress-ng 0.14 NUMA results, bogo ops/s (Michael Larabel, Ryzen 9 "
		"5950X,\n16 cores / 32 threads, one NUMA node, 2022-05):\n");
	fprintf(out, "  %-58s %9.2f\n", "v5.17 (lru_add_drain_all on every CPU)", PUB_V517);
	fprintf(out, "  %-58s %9.2f\n", "v5.18 (synchronize_rcu: the regression)", PUB_V518);
	fprintf(out, "  %-58s %9.2f\n", "v5.18 + synchronize_rcu_expedited (31733463372e)",
		PUB_V518_FIX);
	fprintf(out, "  published ratio v5.17/v5.18 = %.2f/%.2f = %.1fx; fixed/v5.18 = %.1fx\n",
		PUB_V517, PUB_V518, PUB_V517 / PUB_V518, PUB_V518_FIX / PUB_V518);
	for (unsigned int d = 0; d < n; d++) {
		char label[64];

		/* Both columns of compare --by lock share a mode: name the design too. */
		snprintf(label, sizeof(label), "this run, %s: %s", lvb_lock_names[s[d].design],
			 mode_label(s[d].disable));
		fprintf(out, "  %-58s %9.2f\n", label, lvb_series_rate(&s[d]));
	}
	if (rcu && sweep)
		fprintf(out, "  measured ratio sweep/rcu = %.2f/%.2f = %.1fx\n",
			lvb_series_rate(sweep), lvb_series_rate(rcu),
			lvb_series_rate(rcu) > 0 ? lvb_series_rate(sweep) / lvb_series_rate(rcu)
						 : 0);
	fprintf(out, "The published numbers come from a 32-thread machine running real kernels: "
		     "compare the ratio,\nnot absolute bogo ops/s.\n");
}

static void numa_print_extra(FILE *out, const struct lvb_common *opt, const void *params,
			     const struct lvb_series *s, unsigned int n,
			     const struct lvb_ceiling *c)
{
	const struct numa_params *p = params;

	(void)c;
	fprintf(out,
		"\nnuma: %u instance%s (threads) on %u CPU%s, %u container%s, %u node%s x %u MiB, "
		"a 4 MiB region\n(1024 pages) each; per bogo op %d lru_cache_disable/enable pairs "
		"and %d memsets of 4 MiB.\n",
		p->instances, lvb_plural(p->instances), lvb_online_cpus(),
		lvb_plural(lvb_online_cpus()), opt->containers, lvb_plural(opt->containers),
		opt->nodes, lvb_plural(opt->nodes), opt->memory_mib, NUMA_DISABLES_OP,
		NUMA_MEMSETS_OP);
	fprintf(out, "Bogo ops/s (real time) = bogo ops of all instances / mean wall time per "
		     "instance.\n\n");
	fprintf(out, "%-34s", "");
	for (unsigned int d = 0; d < n; d++)
		fprintf(out, " %14s", s[d].column ? s[d].column : lvb_disable_names[s[d].disable]);
	fputc('\n', out);
	numa_row(out, "bogo ops/s (real time)", s, n, v_rate, " %14.2f");
	numa_row(out, "bogo ops", s, n, v_ops, " %14.0f");
	numa_row(out, "lru_cache_disable calls", s, n, v_calls, " %14.0f");
	numa_row(out, "  per bogo op", s, n, v_calls_op, " %14.2f");
	numa_row(out, "  latency p50 (us)", s, n, v_p50, " %14.1f");
	numa_row(out, "  latency p99 (us)", s, n, v_p99, " %14.1f");
	numa_row(out, "  latency max (us)", s, n, v_max, " %14.1f");
	numa_row(out, "  latency mean (us)", s, n, v_mean, " %14.1f");
	numa_row(out, "  time in disable per op (ms)", s, n, v_wait_op, " %14.2f");
	numa_row(out, "pgmigrate_success", s, n, v_migrated, " %14.0f");
	numa_row(out, "pgmigrate_fail", s, n, v_migrate_fail, " %14.0f");
	numa_published(out, s, n);
	fputc('\n', out);
	for (unsigned int d = 0; d < n; d++)
		numa_summary_line(out, p, opt, &s[d]);
}

static void numa_json_extra(FILE *out, bool *first, const struct lvb_common *opt,
			    const void *params, const struct lvb_series *s,
			    const struct lvb_ceiling *c)
{
	const struct numa_params *p = params;
	const struct lv_latency *lat = &s->disable_latency;
	bool f = true;

	(void)opt;
	(void)c;
	lvb_json_str(out, first, "disable", lvb_disable_names[s->disable]);
	lvb_json_u64(out, first, "instances", p->instances);
	lvb_json_u64(out, first, "region_pages", NUMA_PAGES);
	lvb_json_double(out, first, "bogo_ops_per_sec", lvb_series_rate(s));
	lvb_json_key(out, first, "disable_latency_ns");
	fputc('{', out);
	lvb_json_u64(out, &f, "calls", lat->count);
	lvb_json_u64(out, &f, "p50", lv_latency_percentile(lat, 50));
	lvb_json_u64(out, &f, "p99", lv_latency_percentile(lat, 99));
	lvb_json_u64(out, &f, "max", lat->max_ns);
	lvb_json_u64(out, &f, "mean", lat->count ? lat->total_ns / lat->count : 0);
	fputc('}', out);
	lvb_json_u64(out, first, "pgmigrate_success", s->vmstat[LV_PGMIGRATE_SUCCESS]);
	lvb_json_u64(out, first, "pgmigrate_fail", s->vmstat[LV_PGMIGRATE_FAIL]);
	lvb_json_key(out, first, "published_bogo_ops_per_sec");
	f = true;
	fputc('{', out);
	lvb_json_double(out, &f, "v5.17", PUB_V517);
	lvb_json_double(out, &f, "v5.18", PUB_V518);
	lvb_json_double(out, &f, "v5.18_expedited", PUB_V518_FIX);
	fputc('}', out);
}

static const struct lvb_rate numa_rate = {
	.unit = "bogo ops/s",
	.per = "instance",
	.scale = 1,
	.json_prefix = "bogo_ops_per_sec",
};

static const struct lvb_default numa_shared_defaults[] = {
	{ "containers", "1: stress-ng's instances share a cgroup", false },
	{ "threads", "one thread per instance: use --instances", true },
	{ "memory",
	  "room for every region on one node: instances x 5 MiB\n"
	  "+ 32 MiB, in 16 MiB steps; at most 64G",
	  false },
	{ "nodes",
	  "2, so that pages really move; with 1 nothing moves, as on\n"
	  "the published one-node machine",
	  false },
	{ "by", "disable", false },
	{ "folio-order", "it has no page cache", true },
	{ 0 }
};

const struct lvb_workload lvb_numa = {
	.name = "numa",
	.summary = "stress-ng numa: lru_cache_disable in every migration (the 5.18 regression)",
	.help = "numa: stress-ng's numa stressor: --instances instances (threads), each with an\n"
		"address space of its own holding a 4 MiB region (1024 pages), instance i in\n"
		"container i % C and starting on node i % N. One bogo op: set the preferred node,\n"
		"memset the region (the first op faults it in), a random policy change; two\n"
		"page-table checks of all pages (mbind MPOL_MF_STRICT), each followed by a\n"
		"memset; lv_migrate_pages of every page to the next node; 16 x { lv_move_pages of\n"
		"all 1024 pages, destinations round-robin over the nodes, then a memset };\n"
		"move_pages' edge cases that still disable the cache (all pages again, 0 pages, 1\n"
		"page, an unmapped address, and an explicit disable/enable pair for a bad node,\n"
		"which the library refuses before disabling); a status query. That is 22\n"
		"lru_cache_disable/enable pairs and 19 memsets of 4 MiB per op.\n"
		"--disable selects how lv_lru_cache_disable waits: sweep (lock and drain every\n"
		"CPU slot, the cost of fixed kernels), rcu (synchronize_rcu first, Linux 5.18's\n"
		"regression) or rcu-expedited (liburcu's grace period only, as the 5.19 fix).\n"
		"compare numa runs rcu and sweep (--by disable is numa's default; --by lock\n"
		"compares the lock designs instead, in the --disable mode). No kswapd: anonymous\n"
		"pages, no swap.\n"
		"Output: bogo ops/s (real time) = bogo ops of all instances / mean wall time per\n"
		"instance (an op in progress at the end is finished and counted, as stress-ng\n"
		"does), per instance in the mmtests rows; the latency of every\n"
		"lru_cache_disable of the run (p50, p99, max, mean; including those inside\n"
		"migration calls), pages migrated, the lock tables, the published results\n"
		"(412.88 bogo ops/s on v5.17, 49.33 on v5.18, 468.81 with\n"
		"synchronize_rcu_expedited: 8.4x) beside the measured sweep/rcu ratio, and one\n"
		"line per mode\n"
		"  numa: instances=N nodes=N disable=MODE lock=DESIGN bogo_ops_per_sec=X\n"
		"  disable_p50_us=X disable_p99_us=X disable_max_us=X\n"
		"JSON adds disable, instances, region_pages, bogo_ops_per_sec, disable_latency_ns\n"
		"{calls, p50, p99, max, mean}, bogo_ops_per_sec_instance_mean,\n"
		"bogo_ops_per_sec_instance {stats}, bogo_ops_per_sec_total and\n"
		"bogo_ops_per_sec_round_total (in place of the generic ops_per_sec_per_thread and\n"
		"round_ops_per_sec), pgmigrate_success, pgmigrate_fail and\n"
		"published_bogo_ops_per_sec; counters has disable_pairs, migrate_unmoved,\n"
		"move_enomem and move_ebusy.\n"
		"Published numbers, printed beside every run: Michael Larabel's stress-ng 0.14\n"
		"NUMA results (Ryzen 9 5950X, 16 cores / 32 threads, one NUMA node, 2022-05):\n"
		"412.88 bogo ops/s on v5.17, 49.33 on v5.18, 468.81 on v5.18 with\n"
		"synchronize_rcu_expedited (v5.17/v5.18 = 8.4x). They come from real kernels on a\n"
		"32-thread machine: compare the ratio sweep/rcu, not bogo ops/s. The runs, their\n"
		"sources and the current tables: docs/benchmarks.md, numa.",
	.opts = numa_opts,
	.shared_defaults = numa_shared_defaults,
	.params_size = sizeof(struct numa_params),
	.defaults = numa_defaults,
	.prepare = numa_prepare,
	.nr_threads = numa_nr_threads,
	.rate = &numa_rate,
	.run = numa_run,
	.print_extra = numa_print_extra,
	.json_extra = numa_json_extra,
	.compare_by = LVB_BY_DISABLE,
	.features = LVB_WL_DISABLE,
	.default_nodes = 2,
};
