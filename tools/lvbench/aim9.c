// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * aim9 - AIM9's page_test and brk_test in containers, as Alex Shi ran them for the first
 * version of the per-memcg lru_lock series (the runs and the published table:
 * docs/benchmarks.md, aim9). Written from the description of the tests; no AIM9 code is used.
 *
 * Theory of operation.
 *
 * A container is a memcg with one "aim9 process": one thread with an address space of its own
 * (struct lv_mm) charging that memcg. The thread runs --iterations iterations, each on a fresh
 * address space (AIM9's singleuser is started anew for every mmtests iteration), and each
 * iteration runs calls of the test back to back until --duration seconds have passed, checking
 * the clock after every call as AIM9 does. One call of page_test is
 *
 *   oldbrk = sbrk(0); sbrk(+1 MiB)                    grow the heap, nothing touched
 *   100 x { sbrk(-64 KiB);                            unmap the 16 pages touched last round:
 *                                                     released in batches, uncharged, off the LRU
 *           16 x { sbrk(+4 KiB); touch the new page } the first store faults the page in:
 *                                                     allocate, charge, zero, lru_add batch
 *   brk(oldbrk)                                       unmap the last 16 pages
 *
 * and counts 1700 operations (the 100 x 17 sbrk calls); brk_test does 1000 rounds and touches
 * nothing (17000 operations of pure heap bookkeeping: the control that keeps off the LRU). The
 * value of an iteration is AIM9's Operation Rate: calls x operations per call / elapsed seconds.
 *
 * The run of all iterations is one step of the harness, so that a thread started late still
 * does every iteration; the harness window is --iterations x --duration, and a thread that is
 * done before the window closes sleeps. Each iteration's rate becomes one sample of the result,
 * container by container, in groups of --iterations: report.c computes the mmtests statistics
 * of each group (one container's iterations in one round) and averages each statistic over the
 * groups, which is how Alex Shi's table averaged mmtests' rows over 24 containers.
 *
 * Page faults and releases per second per thread (the fault path's speed) are counted apart:
 * page_test faults 1600 pages per call and releases as many.
 */
#define _GNU_SOURCE
#include "lvbench.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define AIM9_HEAP_GROW	  (1 << 20)	      /* sbrk(1024 * 1024) at the start of a call */
#define AIM9_SHRINK	  (16 * LV_PAGE_SIZE) /* sbrk(-4096 * 16) per round */
#define AIM9_PAGES_ROUND  16		      /* sbrk(+4096) per round */
#define AIM9_TOUCH_STRIDE 128		      /* one byte written every 128 bytes */

enum aim9_test { AIM9_PAGE_TEST, AIM9_BRK_TEST };

static const char *const aim9_test_names[] = {
	[AIM9_PAGE_TEST] = "page_test", [AIM9_BRK_TEST] = "brk_test", NULL
};

/* AIM9's registration: the argument (rounds per call) and the operations counted per call. */
static const struct {
	unsigned int rounds, ops_per_call;
	bool touch;
} aim9_tests[] = {
	[AIM9_PAGE_TEST] = { 100, 1700, true },
	[AIM9_BRK_TEST] = { 1000, 17000, false },
};

enum aim9_touch { AIM9_TOUCH_PAGE, AIM9_TOUCH_STORES };

static const char *const aim9_touch_names[] = {
	[AIM9_TOUCH_PAGE] = "page", [AIM9_TOUCH_STORES] = "stores", NULL
};

struct aim9_params {
	unsigned int test;	 /* enum aim9_test */
	unsigned int iterations; /* per container and round */
	unsigned int touch;	 /* enum aim9_touch, or LVB_UNSET until prepared */
};

#define AIM9(field) offsetof(struct aim9_params, field)

static const struct lvb_opt aim9_opts[] = {
	{ "test", LVB_OPT_CHOICE, AIM9(test), 0, 0, aim9_test_names, "TEST",
	  "page_test or brk_test", "page_test" },
	{ "iterations", LVB_OPT_UINT, AIM9(iterations), 1, 1000, NULL, "N",
	  "iterations per container and round, --duration seconds\n"
	  "each, 1..1000",
	  "12, as mmtests' aim9-bench" },
	{ "touch", LVB_OPT_CHOICE, AIM9(touch), 0, 0, aim9_touch_names, "HOW",
	  "how page_test touches a new page: page (one lv_mm_memset\n"
	  "of the 4 KiB) or stores (32 one-byte lv_mm_write calls, one\n"
	  "every 128 bytes, as AIM9 writes it)",
	  "page" },
	{ 0 }
};

static void aim9_defaults(void *params)
{
	struct aim9_params *p = params;

	*p = (struct aim9_params){ .test = AIM9_PAGE_TEST, .iterations = 12, .touch = LVB_UNSET };
}

/*
 * Defaults: one container per CPU as Alex Shi ran it; 12 iterations of 2 s (about 25 s), and for
 * compare 2 alternating rounds of 12 iterations of 1.25 s per design (about a minute).
 */
#define AIM9_MEMORY_MIB	      256 /* the generic default, enough for 2032 containers */
#define AIM9_DURATION	      2.0
#define AIM9_COMPARE_DURATION 1.25
#define AIM9_COMPARE_ROUNDS   2

static int aim9_prepare(struct lvb_common *opt, void *params)
{
	struct aim9_params *p = params;
	unsigned int need;

	if (p->touch != LVB_UNSET && !aim9_tests[p->test].touch)
		return lvb_usage_error("aim9: option '--touch' does not apply to %s (it touches no "
				       "page)",
				       aim9_test_names[p->test]);
	if (p->touch == LVB_UNSET)
		p->touch = AIM9_TOUCH_PAGE;
	if (opt->threads != LVB_UNSET)
		return lvb_usage_error("aim9: option '--threads' does not apply (one aim9 thread "
				       "per container: use --containers)");
	if (opt->containers == LVB_UNSET)
		opt->containers = lvb_online_cpus() < LVB_MAX_CONTAINERS ? lvb_online_cpus()
									 : LVB_MAX_CONTAINERS;
	if (opt->duration == 0)
		opt->duration = opt->compare ? AIM9_COMPARE_DURATION : AIM9_DURATION;
	if (opt->rounds == LVB_UNSET)
		opt->rounds = opt->compare ? AIM9_COMPARE_ROUNDS : 1;
	/*
	 * A page_test call holds 16 touched pages at most (each shrink releases the last
	 * round's), and a preempted thread keeps them: every container may hold them at once.
	 * With their page tables, 128 KiB each, and 2 MiB for the watermarks and the batches.
	 * The default memory grows with the containers (on the first node, which gets a
	 * thread more than the others when they do not divide evenly).
	 */
	need = (opt->containers + opt->nodes - 1) / opt->nodes / 8 + 2;
	if (opt->memory_mib == LVB_UNSET) {
		if (need > AIM9_MEMORY_MIB)
			opt->memory_mib = (need + 15) / 16 * 16;
		return 0;
	}
	if (opt->memory_mib < need)
		return lvb_usage_error("--memory: %u MiB per node is too little for %u "
				       "container%s on %u node%s (at least %u MiB: 128 KiB per "
				       "container and 2 MiB)",
				       opt->memory_mib, opt->containers,
				       lvb_plural(opt->containers), opt->nodes,
				       lvb_plural(opt->nodes), need);
	return 0;
}

/* A round is every container's --iterations iterations of --duration seconds each. */
static double aim9_round_seconds(const struct lvb_common *opt, const void *params)
{
	const struct aim9_params *p = params;

	return p->iterations * opt->duration;
}

static unsigned int aim9_nr_threads(const struct lvb_common *opt, const void *params)
{
	(void)params;
	return opt->containers;
}

/* ---- the aim9 threads ------------------------------------------------------------------------ */

enum aim9_counter {
	AIM9_CALLS,  /* calls of the test, all iterations */
	AIM9_FAULTS, /* pages faulted in (each released again within its call) */
	AIM9_RUN_US, /* thread time inside iterations, microseconds */
	AIM9_NR_COUNTERS
};

static const char *const aim9_counter_names[AIM9_NR_COUNTERS] = {
	[AIM9_CALLS] = "calls",
	[AIM9_FAULTS] = "page_faults",
	[AIM9_RUN_US] = "run_us",
};

struct aim9_thread {
	const struct aim9_params *p;
	struct lvb_common const *opt;
	struct lv_memcg *memcg;
	int nid;
	struct lv_mm *mm;	/* the current iteration's address space */
	double *rates;		/* [iterations]: ops/s of each iteration */
	unsigned int done;	/* iterations finished */
	double start, end;	/* of this thread's iterations */
} __attribute__((aligned(64))); /* written by its thread all the time: no false sharing */

static double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Write one byte every 128 bytes of the page at @addr; the first store faults it in. */
static int aim9_touch(struct aim9_thread *at, uint64_t addr)
{
	static const char byte = 1;
	int err;

	if (at->p->touch == AIM9_TOUCH_PAGE)
		return lv_mm_memset(at->mm, addr, byte, LV_PAGE_SIZE);
	for (unsigned int off = 0; off < LV_PAGE_SIZE; off += AIM9_TOUCH_STRIDE)
		if ((err = lv_mm_write(at->mm, addr + off, &byte, 1)))
			return err;
	return 0;
}

/* One call of the test (see the top of the file). Return: 0, or -1 after lvb_worker_error(). */
static int aim9_call(struct lvb_worker *w, struct aim9_thread *at)
{
	unsigned int rounds = aim9_tests[at->p->test].rounds;
	bool touch = aim9_tests[at->p->test].touch;
	struct lv_mm *mm = at->mm;
	uint64_t oldbrk, page;
	int err;

	if ((err = lv_mm_brk(mm, 0, &oldbrk)) || (err = lv_mm_brk(mm, AIM9_HEAP_GROW, NULL))) {
		lvb_worker_error(w, "lv_mm_brk (grow)", -err);
		return -1;
	}
	for (unsigned int r = 0; r < rounds; r++) {
		if ((err = lv_mm_brk(mm, -(int64_t)AIM9_SHRINK, NULL))) {
			lvb_worker_error(w, "lv_mm_brk (shrink)", -err);
			return -1;
		}
		for (unsigned int i = 0; i < AIM9_PAGES_ROUND; i++) {
			if ((err = lv_mm_brk(mm, LV_PAGE_SIZE, &page))) {
				lvb_worker_error(w, "lv_mm_brk (+4 KiB)", -err);
				return -1;
			}
			if (!touch)
				continue;
			if ((err = aim9_touch(at, page))) {
				lvb_worker_error(w,
						 at->p->touch == AIM9_TOUCH_PAGE ? "lv_mm_memset"
										 : "lv_mm_write",
						 -err);
				return -1;
			}
			w->counters[AIM9_FAULTS]++;
		}
	}
	/* brk(oldbrk): back from the end of the last page grown (1 MiB above it). */
	if ((err = lv_mm_brk(mm, (int64_t)oldbrk - (int64_t)(page + LV_PAGE_SIZE), NULL))) {
		lvb_worker_error(w, "lv_mm_brk (brk(oldbrk))", -err);
		return -1;
	}
	w->ops += aim9_tests[at->p->test].ops_per_call;
	w->counters[AIM9_CALLS]++;
	return 0;
}

/* One iteration: a fresh address space, calls back to back for --duration seconds. */
static int aim9_iteration(struct lvb_worker *w, struct aim9_thread *at)
{
	unsigned int ops_per_call = aim9_tests[at->p->test].ops_per_call;
	uint64_t calls = 0;
	double t0, t;
	int ret = 0;

	at->mm = lv_mm_create(w->env->m, at->memcg, at->nid);
	if (!at->mm) {
		lvb_worker_error(w, "lv_mm_create", errno);
		return -1;
	}
	t0 = now_sec();
	do {
		ret = aim9_call(w, at);
		if (ret)
			break;
		calls++;
		t = now_sec();
	} while (t - t0 < at->opt->duration);
	if (!ret) {
		at->rates[at->done++] = (double)calls * ops_per_call / (t - t0);
		w->counters[AIM9_RUN_US] += (uint64_t)((t - t0) * 1e6);
	}
	lv_mm_destroy(at->mm);
	at->mm = NULL;
	return ret;
}

static void aim9_step(struct lvb_worker *w)
{
	struct aim9_thread *at = w->priv;
	struct timespec pause = { 0, 1000000 };

	if (at->done < at->p->iterations && !w->nr_errors) {
		at->start = now_sec();
		while (at->done < at->p->iterations)
			if (aim9_iteration(w, at))
				break;
		at->end = now_sec();
		return;
	}
	/* Done: wait for the others (and the end of the window) without taking a CPU. */
	nanosleep(&pause, NULL);
}

static void aim9_release(struct lvb_worker *w)
{
	struct aim9_thread *at = w->priv;

	lv_mm_destroy(at->mm); /* only after a failed iteration */
	at->mm = NULL;
}

static const struct lvb_thread_ops aim9_thread_ops = {
	.step = aim9_step,
	.release = aim9_release,
	.counter_names = aim9_counter_names,
	.nr_counters = AIM9_NR_COUNTERS,
};

static int aim9_run(const struct lvb_common *opt, const void *params, enum lv_lock_design design,
		    struct lvb_result *res)
{
	const struct aim9_params *p = params;
	unsigned int n = opt->threads, iters = p->iterations;
	struct lvb_worker *workers = NULL;
	struct aim9_thread *threads = NULL;
	struct lvb_common window = *opt;
	double start = 0, end = 0;
	double *rates = NULL;
	struct lvb_env env;
	int err;

	/* The harness's window covers every iteration; each thread times its own. */
	window.duration = opt->duration * iters;
	err = lvb_env_create(&env, &window, design, LVB_ENV_DATA);
	if (err)
		return err;
	err = -ENOMEM;
	workers = lvb_zalloc(n * sizeof(*workers));
	threads = lvb_zalloc(n * sizeof(*threads));
	rates = calloc((size_t)n * iters, sizeof(*rates));
	if (!workers || !threads || !rates)
		goto out;
	for (unsigned int t = 0; t < n; t++) {
		threads[t] = (struct aim9_thread){
			.p = p,
			.opt = opt,
			.memcg = env.memcgs[t % env.nr_memcgs],
			.nid = (int)(t % opt->nodes),
			.rates = &rates[(size_t)t * iters],
		};
		workers[t].priv = &threads[t];
	}
	err = lvb_run_threads(&env, workers, &aim9_thread_ops, res);
	if (err)
		goto out;
	for (unsigned int t = 0; t < n; t++) {
		if (threads[t].start > 0 && (!start || threads[t].start < start))
			start = threads[t].start;
		if (threads[t].end > end)
			end = threads[t].end;
	}
	/* Wall time of the iterations, not the harness's window, which they overrun a little. */
	if (start > 0 && end > start)
		res->elapsed = end - start;
	res->samples = rates;
	res->nr_samples = (size_t)n * iters;
	res->sample_group = iters;
	res->label = aim9_test_names[p->test];
	rates = NULL;
out:
	free(rates);
	free(threads);
	free(workers);
	res->failures += lvb_env_destroy(&env);
	return err;
}

/* ---- output ---------------------------------------------------------------------------------- */

/* Pages faulted (and released) per second of thread time; NAN for brk_test. */
static double pages_per_sec(const struct aim9_params *p, const struct lvb_series *s)
{
	double us = (double)s->counters[AIM9_RUN_US];

	if (!aim9_tests[p->test].touch)
		return NAN;
	return us > 0 ? (double)s->counters[AIM9_FAULTS] / (us * 1e-6) : 0;
}

/*
 * Alex Shi's published table for v1 of the series: each row averaged over 24 containers,
 * 5.3-rc4 vs 5.3-rc4 with the series applied (docs/benchmarks.md, aim9).
 */
static const struct {
	const char *label;
	double v[2][2]; /* [test][vanilla, patched] */
	bool lower_better;
} published[] = {
	{ "Min", { { 33644.2, 35349.7 }, { 91800.8, 96817.6 } }, false },
	{ "Max", { { 34729.6, 36128.3 }, { 96647.7, 98960.3 } }, false },
	{ "Hmean", { { 34355.4, 35810.9 }, { 95470.0, 97769.6 } }, false },
	{ "Stddev", { { 319.757, 223.324 }, { 1253.52, 596.593 } }, true },
	{ "CoeffVar", { { 0.93125, 0.623333 }, { 1.31375, 0.609583 } }, true },
	{ "BHmean-50", { { 34579.2, 35977.1 }, { 96141.4, 98194.0 } }, false },
	{ "BHmean-95", { { 34421.7, 35853.6 }, { 95818.5, 97857.2 } }, false },
	{ "BHmean-99", { { 34421.7, 35853.6 }, { 95818.5, 97857.2 } }, false },
};

static void aim9_print_extra(FILE *out, const struct lvb_common *opt, const void *params,
			     const struct lvb_series *s, unsigned int n,
			     const struct lvb_ceiling *c)
{
	const struct aim9_params *p = params;
	const char *test = aim9_test_names[p->test];
	unsigned int t = p->test;

	(void)c;
	fprintf(out,
		"\naim9 %s: %u container%s, one aim9 thread each, %u iteration%s of %g s per "
		"container and round;\n",
		test, opt->containers, lvb_plural(opt->containers), p->iterations,
		lvb_plural(p->iterations), opt->duration);
	fprintf(out,
		"per call: sbrk(+1 MiB), %u x { sbrk(-64 KiB), 16 x { sbrk(+4 KiB)%s } }, "
		"brk(oldbrk) = %u ops\n",
		aim9_tests[t].rounds,
		!aim9_tests[t].touch	      ? ""
		: p->touch == AIM9_TOUCH_PAGE ? ", lv_mm_memset of the page"
					      : ", 32 one-byte lv_mm_write",
		aim9_tests[t].ops_per_call);
	if (aim9_tests[t].touch)
		for (unsigned int d = 0; d < n; d++)
			fprintf(out,
				"%s %s: %.0f pages faulted and released per second per thread\n",
				s[d].column ? s[d].column : lvb_lock_names[s[d].design],
				lvb_by_kinds[opt->by].noun, pages_per_sec(p, &s[d]));

	/* The published numbers compare the lock designs. */
	if (n != 2 || s[0].design == s[1].design)
		return;
	fprintf(out,
		"\nPublished aim9 %s (Alex Shi, v1, 2019-08): each row averaged over 24 "
		"containers, "
		"24 CPUs,\n5.3-rc4 (node lru_lock) vs 5.3-rc4 + per-memcg lru_lock, 12 iterations "
		"of "
		"180 s\n",
		test);
	fprintf(out, "%-20s %14s %25s\n", "", "5.3-rc4", "+lru_lock");
	for (size_t i = 0; i < sizeof(published) / sizeof(published[0]); i++)
		lvb_print_row(out, published[i].label, test, published[i].v[t], 2,
			      published[i].lower_better);
	fprintf(out, "The published numbers come from a 24-CPU machine running real kernels: "
		     "compare the\npercentages, not absolute ops/s.\n");
}

static void aim9_json_extra(FILE *out, bool *first, const struct lvb_common *opt,
			    const void *params, const struct lvb_series *s,
			    const struct lvb_ceiling *c)
{
	const struct aim9_params *p = params;
	size_t groups = s->sample_group ? s->nr_samples / s->sample_group : 0;

	(void)opt;
	(void)c;
	lvb_json_str(out, first, "test", aim9_test_names[p->test]);
	lvb_json_u64(out, first, "iterations", p->iterations);
	lvb_json_u64(out, first, "ops_per_call", aim9_tests[p->test].ops_per_call);
	lvb_json_str(out, first, "touch",
		     aim9_tests[p->test].touch ? aim9_touch_names[p->touch] : "none");
	lvb_json_double(out, first, "pages_per_sec", pages_per_sec(p, s));
	/* Every iteration's rate: one array per container and round, rounds one after another. */
	lvb_json_key(out, first, "iteration_ops_per_sec");
	fputc('[', out);
	for (size_t g = 0; g < groups; g++) {
		fputs(g ? ",[" : "[", out);
		for (size_t i = 0; i < s->sample_group; i++)
			fprintf(out, "%s%.3f", i ? "," : "", s->samples[g * s->sample_group + i]);
		fputc(']', out);
	}
	fputc(']', out);
}

static const struct lvb_default aim9_shared_defaults[] = {
	{ "containers", "online CPUs", false },
	{ "threads", "one aim9 thread per container: use --containers", true },
	{ "duration", "2 s per iteration, 12 x 2 s: about 25 s; compare: 1.25", false },
	{ "rounds", "1; compare: 2, about a minute per design", false },
	{ "memory", "256 MiB, more with over 2032 containers per node", false },
	{ "disable", "it never calls lv_lru_cache_disable", true },
	{ "by", "lock (--by disable applies to numa only)", false },
	{ "folio-order", "it has no page cache", true },
	{ 0 }
};

const struct lvb_workload lvb_aim9 = {
	.name = "aim9",
	.summary = "AIM9 page_test / brk_test in containers (Alex Shi's v1 case)",
	.help = "aim9: AIM9's page_test or brk_test in containers, as Alex Shi ran them for v1 of\n"
		"the per-memcg lru_lock series: C containers (memcgs), each with one aim9 thread\n"
		"and its own address space (lv_mm) charging it; container c's thread on node\n"
		"c % N.\n"
		"A page_test call is oldbrk = sbrk(0); sbrk(+1 MiB); 100 x { sbrk(-64 KiB);\n"
		"16 x { sbrk(+4 KiB); touch the new page } }; brk(oldbrk): 1700 ops (the sbrk\n"
		"calls in the rounds), 1600 page faults (allocate, charge, zero, lru_add batch)\n"
		"and 1600 pages released by the shrinks (batched: one lruvec lock hold per\n"
		"batch). The touch writes the page with one lv_mm_memset of 4 KiB by default\n"
		"(--touch page: one fault and one page-table lock round trip, the cheapest\n"
		"faithful choice, since a fault zeroes the page anyway); --touch stores makes\n"
		"the 32 one-byte stores of AIM9 as 32 lv_mm_write calls. brk_test is the same\n"
		"with 1000 rounds and no touch (17000 ops, no page ever allocated): the control.\n"
		"Both grow the heap by 1 MiB first, so that the first shrink has pages to cut.\n"
		"Each container runs --iterations iterations, each on a fresh address space,\n"
		"calling the test back to back for --duration seconds; an iteration's value is\n"
		"AIM9's Operation Rate = calls x ops per call / elapsed seconds.\n"
		"Output: per container, the mmtests rows (Min, Max, Hmean, Stddev, CoeffVar,\n"
		"BHmean-50/95/99) over its iterations, each row averaged over the containers\n"
		"(and rounds), as Alex Shi's table; the lock tables; pages faulted and released\n"
		"per second per thread; with compare, the published table.\n"
		"JSON adds test, iterations, ops_per_call, touch, pages_per_sec (null for\n"
		"brk_test) and iteration_ops_per_sec (one array per container and round);\n"
		"ops_per_sec is the object {n, min, max, amean, hmean, stddev, coeffvar,\n"
		"bhmean50, bhmean95, bhmean99} averaged over containers (in place of\n"
		"ops_per_sec_per_thread), ops_per_sec_total the ops of all containers per second.\n"
		"Published numbers, set beside compare's: Alex Shi's v1 (2019-08), 24 containers\n"
		"on 24 CPUs, 12 iterations of 180 s, 5.3-rc4 (node lru_lock) vs the series:\n"
		"Hmean page_test 34355.4 vs 35810.9 ops/s (+4.24%), brk_test 95470.0 vs 97769.6\n"
		"(+2.41%), and the other rows. They come from a real kernel on a 24-CPU machine:\n"
		"compare the percentages, not ops/s. The runs, their sources and the current\n"
		"tables: docs/benchmarks.md, aim9.",
	.shared_defaults = aim9_shared_defaults,
	.opts = aim9_opts,
	.params_size = sizeof(struct aim9_params),
	.defaults = aim9_defaults,
	.prepare = aim9_prepare,
	.nr_threads = aim9_nr_threads,
	.run = aim9_run,
	.print_extra = aim9_print_extra,
	.json_extra = aim9_json_extra,
	.round_seconds = aim9_round_seconds,
};
