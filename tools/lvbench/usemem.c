// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * usemem - Usama Arif's shape for the scan cost off the LRU lock (July 2026): `usemem -n 16`
 * in one memcg whose memory.max is well below what the writers touch, a swap device behind
 * it, and `perf lock contention` over the run.
 *
 * Threads (16 by default) each own an address space (--region, 8 MiB by default) in the one
 * container, whose limit is a quarter of the regions together (--limit), with an in-memory
 * swap device that holds them all. Per op a thread writes one 8-byte word into each of the
 * next 64 pages of its region, going round it, as usemem writes its memory over and over:
 * every write past the limit makes limit reclaim swap anon pages out, and every page written
 * again after its swap-out is a swap-in fault. So reclaim runs all the time, from every
 * thread at once, against one memcg's lruvec: its isolation, putback and cost noting
 * (lru_note_cost(), which in LV_COST_LOCKED mode takes the memcg's and then the root's LRU
 * lock) queue on the same two locks.
 *
 * Throughput is MB/s of pages written per thread (64 pages of 4 KiB per op). Beside the
 * tables: the total LRU lock wait, and the wait at the sites the cost mode changes
 * (lru_note_cost, shrink_inactive_list, shrink_active_list), per column, as the upstream
 * report gives them (4.23 s -> 1.66 s total, shrink_node 689 -> 27 ms on 176 cores).
 *
 * Departures: usemem forks processes and the kernel reclaims per 32 pages of a fault; here
 * threads write through lv_mm_write(), whose faults charge and reclaim the same way. A write
 * that finds the memcg still over its limit after reclaim (-ENOMEM, the kernel's OOM kill)
 * is counted and the thread moves on.
 */
#define _GNU_SOURCE
#include "lvbench.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define BURST 64 /* pages written per op */

struct usemem_params {
	unsigned int region_mib; /* per thread */
	unsigned int limit_mib;	 /* LVB_UNSET: a quarter of the regions */
};

#define UP(field) offsetof(struct usemem_params, field)

static const struct lvb_opt usemem_opts[] = {
	{ "region", LVB_OPT_MIB, UP(region_mib), 1, 1u << 14, NULL, "SIZE",
	  "each thread's address space, written round and round", "8M" },
	{ "limit", LVB_OPT_MIB, UP(limit_mib), 4, 1u << 20, NULL, "SIZE",
	  "the container's memory limit", "a quarter of the regions, at least 4M" },
	{ 0 }
};

enum { UC_OOM, UC_SWAPIN, NR_UC };
static const char *const usemem_counter_names[NR_UC] = { "writes refused (OOM)", "swap-in faults" };

struct usemem_thread {
	struct lv_mm *mm;
	uint64_t base;
	size_t pages, cursor;
};

static void usemem_defaults(void *params)
{
	struct usemem_params *p = params;

	*p = (struct usemem_params){ .region_mib = 8, .limit_mib = LVB_UNSET };
}

static size_t touched_mib(const struct lvb_common *opt, const struct usemem_params *p)
{
	return (size_t)opt->threads * p->region_mib;
}

/* The device holds every region, in whole 2 MiB clusters, with a margin. */
static size_t swap_bytes(const struct lvb_common *opt, const struct usemem_params *p)
{
	return ((touched_mib(opt, p) + 8 + 1) & ~(size_t)1) << 20;
}

static int usemem_prepare(struct lvb_common *opt, void *params)
{
	struct usemem_params *p = params;

	if (opt->containers != LVB_UNSET && opt->containers != 1)
		return lvb_usage_error("usemem: --containers must be 1 (one memcg for all)");
	if (opt->sweep.n)
		return lvb_usage_error("usemem: option '--sweep' does not apply");
	if (opt->nodes != 1)
		return lvb_usage_error("usemem: --nodes must be 1");
	opt->containers = 1;
	if (opt->threads == LVB_UNSET)
		opt->threads = 16;
	if (opt->duration == 0)
		opt->duration = 3;
	if (opt->memory_mib == LVB_UNSET)
		opt->memory_mib = 128;
	if (p->limit_mib == LVB_UNSET) {
		size_t q = touched_mib(opt, p) / 4;

		p->limit_mib = q < 4 ? 4 : (unsigned int)q;
	}
	if (p->limit_mib + 16 > opt->memory_mib)
		return lvb_usage_error("usemem: --limit %u MiB leaves the node (--memory %u MiB) "
				       "less than 16 MiB for everything else",
				       p->limit_mib, opt->memory_mib);
	return 0;
}

static void usemem_step(struct lvb_worker *w)
{
	struct usemem_thread *t = w->priv;
	uint64_t word = w->ops;

	for (unsigned int i = 0; i < BURST; i++) {
		uint64_t addr = t->base + (uint64_t)t->cursor * LV_PAGE_SIZE;
		int err = lv_mm_write(t->mm, addr, &word, sizeof(word));

		if (++t->cursor == t->pages)
			t->cursor = 0;
		if (err == -ENOMEM)
			w->counters[UC_OOM]++;
		else if (err)
			lvb_worker_error(w, "lv_mm_write", -err);
	}
	w->amount += (uint64_t)BURST * LV_PAGE_SIZE;
	w->ops++;
}

static void record_round(const struct lvb_common *opt, const struct lvb_result *res);

static const struct lvb_thread_ops usemem_thread_ops = {
	.step = usemem_step,
	.counter_names = usemem_counter_names,
	.nr_counters = NR_UC,
};

static int usemem_run(const struct lvb_common *opt, const void *params, enum lv_lock_design design,
		      struct lvb_result *res)
{
	const struct usemem_params *p = params;
	unsigned int n = opt->threads, nr_ready = 0;
	struct usemem_thread *threads = NULL;
	struct lvb_worker *workers = NULL;
	uint64_t pswpin0;
	struct lvb_env env;
	int err, id = -1;

	err = lvb_env_create(&env, opt, design, LVB_ENV_DATA);
	if (err)
		return err;
	err = -ENOMEM;
	workers = lvb_zalloc(n * sizeof(*workers));
	threads = lvb_zalloc(n * sizeof(*threads));
	if (!workers || !threads)
		goto out;
	lv_memcg_set_max(env.memcgs[0], ((size_t)p->limit_mib << 20) / LV_PAGE_SIZE);
	id = lv_swap_on(env.m, -1, swap_bytes(opt, p), 0);
	if (id < 0) {
		err = id;
		fprintf(stderr, "lvbench: usemem: lv_swap_on(%zu MiB): %s\n",
			swap_bytes(opt, p) >> 20, strerror(-err));
		goto out;
	}
	for (; nr_ready < n; nr_ready++) {
		struct usemem_thread *t = &threads[nr_ready];

		t->pages = ((size_t)p->region_mib << 20) / LV_PAGE_SIZE;
		t->mm = lv_mm_create(env.m, env.memcgs[0], 0);
		if (!t->mm) {
			err = -errno;
			goto out;
		}
		err = lv_mmap(t->mm, t->pages * LV_PAGE_SIZE, &t->base);
		if (err) {
			nr_ready++;
			goto out;
		}
		workers[nr_ready].priv = t;
	}
	pswpin0 = lv_node_stat(env.m, 0, LV_PSWPIN);
	err = lvb_run_threads(&env, workers, &usemem_thread_ops, res);
	/* The swap-ins of the run as one more counter, in the first thread's. */
	if (!err && res->nr_counters == NR_UC)
		res->counters[UC_SWAPIN] = lv_node_stat(env.m, 0, LV_PSWPIN) - pswpin0;
	if (!err)
		record_round(opt, res);
out:
	for (unsigned int t = 0; t < nr_ready; t++)
		lv_mm_destroy(threads[t].mm);
	if (id >= 0) {
		int off = lv_swap_off(env.m, id);

		if (off) {
			fprintf(stderr, "lvbench: usemem: lv_swap_off: %s\n", strerror(-off));
			res->failures++;
		}
	}
	res->failures += lvb_env_destroy(&env);
	free(threads);
	free(workers);
	return err;
}

/* ---- the headline: LRU lock wait per round, in total and at the sites the cost mode changes - */

enum { W_TOTAL, W_COST_SITES, W_NOTE, W_INACTIVE, W_ACTIVE, NR_W };
static const char *const wait_names[NR_W] = { "total", "lru_note_cost + shrink_*", "lru_note_cost",
					      "shrink_inactive_list", "shrink_active_list" };

/*
 * One round's LRU lock wait in ms, by what it counts. The series add their rounds up; the
 * headline quotes each column's median round, so it keeps every round here, by column: the
 * value of the --by knob the round ran with (the rounds run one after the other).
 */
struct usemem_round {
	unsigned int key;
	double ms[NR_W];
};
static struct usemem_round *rounds_seen;
static size_t nr_rounds_seen;

static bool lru_class(enum lv_lock_class cls)
{
	return cls == LV_LOCK_CLASS_LRUVEC || cls == LV_LOCK_CLASS_NODE;
}

static bool cost_site(const char *caller)
{
	return !strcmp(caller, "lru_note_cost") || !strncmp(caller, "shrink_", 7);
}

/* The column of @opt's rounds: @d's value of the --by knob with compare, else the knob's. */
static unsigned int column_key(const struct lvb_common *opt, int d)
{
	const struct lvb_by_kind *k = &lvb_by_kinds[opt->by];

	if (d >= 0 && opt->compare)
		return k->value[d];
	return *(const unsigned int *)((const char *)opt + k->off);
}

static void record_round(const struct lvb_common *opt, const struct lvb_result *res)
{
	struct usemem_round r = { .key = column_key(opt, -1) };
	struct usemem_round *grown;

	r.ms[W_TOTAL] = (double)(res->locks[LV_LOCK_CLASS_LRUVEC].wait_total_ns +
				 res->locks[LV_LOCK_CLASS_NODE].wait_total_ns) /
			1e6;
	for (size_t i = 0; i < res->nr_sites; i++) {
		const struct lv_lock_site_stat *st = &res->sites[i];
		double ms = (double)st->wait_total_ns / 1e6;

		if (!lru_class(st->cls))
			continue;
		if (cost_site(st->caller))
			r.ms[W_COST_SITES] += ms;
		for (int w = W_NOTE; w < NR_W; w++)
			if (!strcmp(st->caller, wait_names[w]))
				r.ms[w] += ms;
	}
	grown = realloc(rounds_seen, (nr_rounds_seen + 1) * sizeof(*rounds_seen));
	if (!grown)
		return; /* the headline then quotes the rounds it has */
	rounds_seen = grown;
	rounds_seen[nr_rounds_seen++] = r;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median over the rounds of column @key of wait @w; @nr: how many rounds it had. */
static double median_ms(unsigned int key, int w, unsigned int *nr)
{
	double *v = malloc((nr_rounds_seen + 1) * sizeof(*v)), m = 0;
	size_t n = 0;

	if (!v) {
		*nr = 0;
		return 0;
	}
	for (size_t i = 0; i < nr_rounds_seen; i++)
		if (rounds_seen[i].key == key)
			v[n++] = rounds_seen[i].ms[w];
	qsort(v, n, sizeof(*v), cmp_double);
	if (n)
		m = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	free(v);
	*nr = (unsigned int)n;
	return m;
}

static double ratio(double v, double base)
{
	return base > 0 ? v / base : 0;
}

static void usemem_print_extra(FILE *out, const struct lvb_common *opt, const void *params,
			       const struct lvb_series *s, unsigned int n,
			       const struct lvb_ceiling *c)
{
	double v[LVB_MAX_VARIANTS][NR_W];
	unsigned int nr = 0;

	(void)params;
	(void)c;
	for (unsigned int d = 0; d < n; d++)
		for (int w = 0; w < NR_W; w++)
			v[d][w] = median_ms(column_key(opt, (int)d), w, &nr);
	fprintf(out, "\nLRU lock wait (ms, the median of %u round%s; lruvec and node classes)\n",
		nr, lvb_plural(nr));
	fprintf(out, "%-26s", "");
	for (unsigned int d = 0; d < n; d++)
		fprintf(out, " %12s", s[d].column);
	for (unsigned int d = 1; d < n; d++) {
		char ratio_name[64];

		snprintf(ratio_name, sizeof(ratio_name), "%s/%s", s[d].column, s[0].column);
		fprintf(out, " %13s", ratio_name);
	}
	fputc('\n', out);
	for (int w = 0; w < NR_W; w++) {
		fprintf(out, "%-26s", wait_names[w]);
		for (unsigned int d = 0; d < n; d++)
			fprintf(out, " %12.1f", v[d][w]);
		for (unsigned int d = 1; d < n; d++)
			fprintf(out, " %12.2fx", ratio(v[d][w], v[0][w]));
		fputc('\n', out);
	}
	fprintf(out, "Usama Arif's run (176 cores, usemem -n 16, memory.max=512M, 30 s): total "
		     "4.23 s -> 1.66 s\n(0.39x); shrink_node 689 -> 27 ms (0.04x).");
	if (opt->compare && opt->by == LVB_BY_COST && n == 2)
		fprintf(out, " Targets: total <= 0.6x (%s), the cost\nsites <= 0.2x (%s).",
			ratio(v[1][W_TOTAL], v[0][W_TOTAL]) <= 0.6 ? "met" : "not met",
			ratio(v[1][W_COST_SITES], v[0][W_COST_SITES]) <= 0.2 ? "met" : "not met");
	fputc('\n', out);
}

static void usemem_json_extra(FILE *out, bool *first, const struct lvb_common *opt,
			      const void *params, const struct lvb_series *s,
			      const struct lvb_ceiling *c)
{
	static const char *const keys[NR_W] = { "lru_wait_ms", "cost_sites_wait_ms",
						"lru_note_cost_wait_ms",
						"shrink_inactive_list_wait_ms",
						"shrink_active_list_wait_ms" };
	const struct usemem_params *p = params;
	unsigned int key = column_key(opt, -1), nr;
	bool f = true;

	(void)s;
	(void)c;
	lvb_json_u64(out, first, "region_mib", p->region_mib);
	lvb_json_u64(out, first, "limit_mib", p->limit_mib);
	lvb_json_u64(out, first, "swap_mib", swap_bytes(opt, p) >> 20);
	/* Medians over the rounds, as the headline quotes them. */
	for (int w = 0; w < NR_W; w++)
		lvb_json_double(out, first, keys[w], median_ms(key, w, &nr));
	lvb_json_key(out, first, "round_lru_wait_ms");
	fputc('[', out);
	for (size_t i = 0; i < nr_rounds_seen; i++)
		if (rounds_seen[i].key == key) {
			fprintf(out, "%s%.3f", f ? "" : ",", rounds_seen[i].ms[W_TOTAL]);
			f = false;
		}
	fputc(']', out);
}

static void usemem_describe(FILE *out, const struct lvb_common *opt, const void *params)
{
	const struct usemem_params *p = params;

	fprintf(out, "usemem: %u threads x %u MiB in one memcg limited to %u MiB, swapping\n",
		opt->threads, p->region_mib, p->limit_mib);
}

static const struct lvb_default usemem_shared_defaults[] = { { "containers",
							       "one memcg for every thread", true },
							     { "threads", "16", false },
							     { "memory", "128M", false },
							     { "nodes", "one node", true },
							     { "duration", "3", false },
							     { "sweep", "one memcg", true },
							     { 0 } };

static const struct lvb_rate usemem_rate = {
	.unit = "MB/s",
	.per = "thread",
	.scale = 1e-6,
	.json_prefix = "mb_per_s",
};

const struct lvb_workload lvb_usemem = {
	.name = "usemem",
	.summary = "usemem -n 16 in one memcg at a quarter of its size, swapping",
	.help = "usemem: Usama Arif's shape for the scan cost off the LRU lock (2026). He ran\n"
		"usemem -n 16 in one memcg with memory.max=512M on 176 cores and read 30 s of\n"
		"perf lock contention. Here: --threads writers (16), each with an address space\n"
		"of --region (8M), all in one memcg limited to a quarter of the regions together\n"
		"(--limit), with an in-memory swap device that holds them. Per op a thread\n"
		"writes one 8-byte word into each of the next 64 pages of its region, going\n"
		"round it, so limit reclaim swaps anon out and every page written again is a\n"
		"swap-in fault, from every thread at once. The defaults fit 2 CPUs: a round\n"
		"takes 3 s. --scan-cost picks how reclaim notes its costs (cfg.scan_cost);\n"
		"compare usemem runs --by cost (locked vs vmstat) by default.\n"
		"Throughput: MB/s of pages written per thread. After the tables: the LRU lock\n"
		"wait per round (the median of the rounds) in total, at lru_note_cost and at the\n"
		"shrink_* sites, per column and as a ratio, beside the upstream report (4.23 s\n"
		"-> 1.66 s total; shrink_node 689 -> 27 ms). JSON adds region_mib, limit_mib,\n"
		"swap_mib, those medians (lru_wait_ms, cost_sites_wait_ms, ...) and\n"
		"round_lru_wait_ms. Its tables are in docs/benchmarks.md, usemem.",
	.opts = usemem_opts,
	.shared_defaults = usemem_shared_defaults,
	.params_size = sizeof(struct usemem_params),
	.defaults = usemem_defaults,
	.prepare = usemem_prepare,
	.rate = &usemem_rate,
	.run = usemem_run,
	.print_extra = usemem_print_extra,
	.describe = usemem_describe,
	.json_extra = usemem_json_extra,
	.compare_by = LVB_BY_COST,
	.default_nodes = 1,
};
