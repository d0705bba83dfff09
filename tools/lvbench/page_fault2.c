// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * page_fault2 - will-it-scale's page_fault2 as LKP runs it (the runs and the published numbers:
 * docs/benchmarks.md, page_fault2). Written from the description of the test; no will-it-scale
 * code is used.
 *
 * Theory of operation.
 *
 * Each thread is one will-it-scale task: an address space of its own (struct lv_mm) in the one
 * container, and a sparse file of its own (struct lv_file, --file-size, 128 MiB as the test's
 * MEMSIZE). It maps the file privately (lv_mmap_file(LV_MAP_PRIVATE)), writes one byte to
 * every page, each write a copy-on-write fault that looks the page cache page up (read in
 * before the window opens, as after will-it-scale's warm-up) and copies it into a new anon
 * folio added to the
 * LRU through folio_add_lru_vma(), then unmaps the whole mapping, which frees the copies in
 * batches, and repeats. An operation is a fault, as will-it-scale counts them.
 *
 * A step of the harness writes PF2_STEP_PAGES pages, so that the threads stop soon after the
 * window closes; the mapping lives across steps, and the step that writes its last page
 * unmaps it. The machine has no data frames unless --data is given: the test writes one
 * byte a page, and the LRU work per fault is the same without the bytes.
 */
#define _GNU_SOURCE
#include "lvbench.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PF2_STEP_PAGES 256u /* pages written per harness step: 1 MiB */

struct pf2_params {
	uint64_t file_size; /* bytes per thread's file and mapping */
	bool data;	    /* real data frames: copies of 4 KiB per fault */
};

#define PF2(field) offsetof(struct pf2_params, field)

static const struct lvb_opt pf2_opts[] = {
	{ "file-size", LVB_OPT_SIZE, PF2(file_size), 4096, (double)(1ull << 36), NULL, "SIZE",
	  "each thread's file and mapping, 4K..64G", "128M, as will-it-scale's MEMSIZE" },
	{ "data", LVB_OPT_FLAG, PF2(data), 0, 0, NULL, NULL,
	  "give the machine data frames: each fault copies 4 KiB", "off: descriptors only" },
	{ 0 }
};

static void pf2_defaults(void *params)
{
	*(struct pf2_params *)params = (struct pf2_params){ .file_size = 128ull << 20 };
}

#define PF2_DURATION	     2.0
#define PF2_COMPARE_DURATION 1.0
#define PF2_COMPARE_ROUNDS   3
#define PF2_SLACK_MIB	     64 /* watermarks, batches, page tables' neighbours */

static int pf2_prepare(struct lvb_common *opt, void *params)
{
	struct pf2_params *p = params;
	uint64_t need;

	p->file_size = (p->file_size + LV_PAGE_SIZE - 1) & ~(uint64_t)(LV_PAGE_SIZE - 1);
	if (opt->containers == LVB_UNSET)
		opt->containers = 1;
	/* As LKP: compare at 4 tasks per CPU (LKP's 104 threads were one per CPU). */
	if (opt->threads == LVB_UNSET)
		opt->threads = lvb_online_cpus() * (opt->compare ? 4 : 1);
	if (opt->duration == 0)
		opt->duration = opt->compare ? PF2_COMPARE_DURATION : PF2_DURATION;
	if (opt->rounds == LVB_UNSET)
		opt->rounds = opt->compare ? PF2_COMPARE_ROUNDS : 1;
	/*
	 * Every thread may hold its whole mapping's copies and its file's page cache at once:
	 * twice the file per thread, on the node of its threads (the first gets the most).
	 */
	need = ((opt->threads + opt->nodes - 1) / opt->nodes) * 2 * (p->file_size >> 20) +
	       PF2_SLACK_MIB;
	if (opt->memory_mib == LVB_UNSET) {
		if (need > 65536)
			return lvb_usage_error("page_fault2: %u threads of %llu MiB need %llu MiB "
					       "per node, above the 64 GiB --memory allows",
					       opt->threads,
					       (unsigned long long)(p->file_size >> 20),
					       (unsigned long long)need);
		opt->memory_mib = (unsigned int)((need + 63) / 64 * 64);
		return 0;
	}
	if (opt->memory_mib < need)
		return lvb_usage_error("--memory: %u MiB per node is too little for %u thread%s of "
				       "%llu MiB (at least %llu MiB: twice the file per thread, "
				       "and %u MiB)",
				       opt->memory_mib, opt->threads, lvb_plural(opt->threads),
				       (unsigned long long)(p->file_size >> 20),
				       (unsigned long long)need, PF2_SLACK_MIB);
	return 0;
}

/* ---- the threads ----------------------------------------------------------------------------- */

enum pf2_counter {
	PF2_MAPS, /* lv_mmap_file + lv_munmap pairs completed */
	PF2_NR_COUNTERS
};

static const char *const pf2_counter_names[PF2_NR_COUNTERS] = {
	[PF2_MAPS] = "iterations",
};

struct pf2_thread {
	const struct pf2_params *p;
	struct lv_mm *mm;
	struct lv_file *file;
	uint64_t addr;	/* the mapping, when @mapped */
	uint64_t next;	/* the next page to write */
	uint64_t pages; /* of the mapping */
	bool mapped;
} __attribute__((aligned(64)));

static void pf2_step(struct lvb_worker *w)
{
	struct pf2_thread *pt = w->priv;
	static const char byte = 1;
	uint64_t end;
	int err;

	if (w->nr_errors)
		return;
	if (!pt->mapped) {
		err = lv_mmap_file(pt->mm, pt->file, 0, (size_t)pt->p->file_size, LV_MAP_PRIVATE,
				   &pt->addr);
		if (err) {
			lvb_worker_error(w, "lv_mmap_file", -err);
			return;
		}
		pt->mapped = true;
		pt->next = 0;
	}
	end = pt->next + PF2_STEP_PAGES < pt->pages ? pt->next + PF2_STEP_PAGES : pt->pages;
	for (; pt->next < end; pt->next++) {
		err = lv_mm_write(pt->mm, pt->addr + pt->next * LV_PAGE_SIZE, &byte, 1);
		if (err) {
			lvb_worker_error(w, "lv_mm_write (COW fault)", -err);
			return;
		}
		w->ops++;
	}
	if (pt->next < pt->pages)
		return;
	err = lv_munmap(pt->mm, pt->addr, (size_t)pt->p->file_size);
	if (err) {
		lvb_worker_error(w, "lv_munmap", -err);
		return;
	}
	pt->mapped = false;
	w->counters[PF2_MAPS]++;
}

static void pf2_release(struct lvb_worker *w)
{
	struct pf2_thread *pt = w->priv;

	lv_mm_destroy(pt->mm);
	lv_file_close(pt->file);
	pt->mm = NULL;
	pt->file = NULL;
}

static const struct lvb_thread_ops pf2_thread_ops = {
	.step = pf2_step,
	.release = pf2_release,
	.counter_names = pf2_counter_names,
	.nr_counters = PF2_NR_COUNTERS,
};

/*
 * pf2_warm - read @file into the page cache, charged to @memcg, before the window opens:
 * will-it-scale reports the iterations after its warm-up, when the file is cached and each
 * fault only copies. Return: 0 or -errno.
 */
static int pf2_warm(struct lv_file *file, struct lv_memcg *memcg, uint64_t size)
{
	static __thread char buf[1 << 16];

	for (uint64_t off = 0; off < size; off += sizeof(buf)) {
		long n = lv_file_read(file, memcg, buf, sizeof(buf), off);

		if (n < 0)
			return (int)n;
	}
	return 0;
}

static int pf2_run(const struct lvb_common *opt, const void *params, enum lv_lock_design design,
		   struct lvb_result *res)
{
	const struct pf2_params *p = params;
	unsigned int n = opt->threads;
	struct lvb_worker *workers = NULL;
	struct pf2_thread *threads = NULL;
	struct lvb_env env;
	int err;

	err = lvb_env_create(&env, opt, design, p->data ? LVB_ENV_DATA : 0);
	if (err)
		return err;
	err = -ENOMEM;
	workers = lvb_zalloc(n * sizeof(*workers));
	threads = lvb_zalloc(n * sizeof(*threads));
	if (!workers || !threads)
		goto out;
	for (unsigned int t = 0; t < n; t++) {
		threads[t] = (struct pf2_thread){
			.p = p,
			.pages = p->file_size / LV_PAGE_SIZE,
			.mm = lv_mm_create(env.m, env.memcgs[t % env.nr_memcgs],
					   (int)(t % opt->nodes)),
			.file = lv_file_open(env.m, -1, p->file_size),
		};
		workers[t].priv = &threads[t];
		if (!threads[t].mm || !threads[t].file ||
		    (err = pf2_warm(threads[t].file, env.memcgs[t % env.nr_memcgs],
				    p->file_size))) {
			err = err ? err : -errno;
			n = t + 1; /* release what was made */
			goto out;
		}
	}
	err = lvb_run_threads(&env, workers, &pf2_thread_ops, res);
	n = 0; /* the threads released their own */
out:
	for (unsigned int t = 0; t < n && threads && workers; t++)
		pf2_release(&workers[t]);
	free(threads);
	free(workers);
	res->failures += lvb_env_destroy(&env);
	return err;
}

/* ---- output ---------------------------------------------------------------------------------- */

/* LKP's report on the PAGEVEC 15 -> 31 change (2024), 104 threads. */
#define PF2_PUB_15 8839851.0
#define PF2_PUB_31 9949112.0

/* pf2_round_median - the median of @s's per-round totals (faults/s of all threads). */
static double pf2_round_median(const struct lvb_series *s)
{
	double v[64];
	unsigned int n = s->rounds < 64 ? s->rounds : 64;

	memcpy(v, s->round_rate, n * sizeof(*v));
	return lvb_median(v, n);
}

static void pf2_print_extra(FILE *out, const struct lvb_common *opt, const void *params,
			    const struct lvb_series *s, unsigned int n, const struct lvb_ceiling *c)
{
	const struct pf2_params *p = params;
	char batch[32] = "";

	(void)c;
	if (!opt->compare || opt->by != LVB_BY_BATCH)
		snprintf(batch, sizeof(batch), "; batch %u", opt->batch);
	fprintf(out,
		"\npage_fault2: %u thread%s, each mapping its own %llu MiB sparse file privately, "
		"writing\none byte per page (a COW fault each), unmapping, repeating%s; %s.\n",
		opt->threads, lvb_plural(opt->threads), (unsigned long long)(p->file_size >> 20),
		batch,
		p->data ? "data frames: 4 KiB copied per fault" : "descriptors only (no --data)");
	for (unsigned int d = 0; d < n; d++)
		fprintf(out, "%s: %.0f faults/s in all, median round %.0f, %llu iterations\n",
			s[d].column ? s[d].column : lvb_lock_names[s[d].design],
			lvb_series_rate(&s[d]), pf2_round_median(&s[d]),
			(unsigned long long)s[d].counters[PF2_MAPS]);
	if (!opt->compare)
		return;
	/* The rounds alternate (ABAB): a round's neighbours ran in the same conditions. */
	for (unsigned int d = 1; d < n; d++) {
		double base = pf2_round_median(&s[0]);

		fprintf(out, "%s/%s, median rounds: %.3fx\n",
			s[d].column ? s[d].column : lvb_lock_names[s[d].design],
			s[0].column ? s[0].column : lvb_lock_names[s[0].design],
			base > 0 ? pf2_round_median(&s[d]) / base : 0);
	}
	fprintf(out,
		"\nPublished (LKP, 2024, 104 threads): batch 15 -> 31 (PAGEVEC_SIZE, Linux 6.9): "
		"%.0f -> %.0f\nops (+%.1f%%), ~45%% of cycles in folio_lruvec_lock_irqsave under "
		"folio_add_lru_vma. Compare\nthe ratio, not the ops.\n",
		PF2_PUB_15, PF2_PUB_31, (PF2_PUB_31 / PF2_PUB_15 - 1) * 100);
}

static void pf2_json_extra(FILE *out, bool *first, const struct lvb_common *opt, const void *params,
			   const struct lvb_series *s, const struct lvb_ceiling *c)
{
	const struct pf2_params *p = params;

	(void)opt;
	(void)c;
	lvb_json_u64(out, first, "file_size", p->file_size);
	lvb_json_u64(out, first, "data", p->data);
	lvb_json_u64(out, first, "iterations", s->counters[PF2_MAPS]);
	lvb_json_double(out, first, "faults_per_s_median_round", pf2_round_median(s));
}

static const struct lvb_default pf2_shared_defaults[] = {
	{ "containers", "1: every task in one memcg", false },
	{ "threads", "online CPUs; compare: 4 x online CPUs", false },
	{ "duration", "2 s; compare: 1 s", false },
	{ "rounds", "1; compare: 3", false },
	{ "memory", "twice the file per thread, and 64 MiB", false },
	{ "disable", "it never calls lv_lru_cache_disable", true },
	{ "by", "batch (15 vs 31, as LKP's report)", false },
	{ 0 }
};

const struct lvb_workload lvb_page_fault2 = {
	.name = "page_fault2",
	.summary = "will-it-scale page_fault2: COW faults of private file mappings (LKP)",
	.help = "page_fault2: will-it-scale's page_fault2 as LKP runs it. Each thread is a task\n"
		"with its own address space and its own sparse file (--file-size, 128 MiB as\n"
		"will-it-scale's MEMSIZE); in a loop it maps the file privately\n"
		"(lv_mmap_file(LV_MAP_PRIVATE)), writes one byte to every page (each write a\n"
		"copy-on-write fault: the page cache page, read in before the run starts, is\n"
		"copied into a new anon page added to the LRU through folio_add_lru_vma) and\n"
		"unmaps the mapping (the copies are freed in batches). An operation is a fault.\n"
		"LKP ran 104 tasks on a 104-CPU machine, in tmpfs; compare runs 4 tasks per\n"
		"online CPU here by default, so that the lru_add batches are contended as on\n"
		"the large machine. The machine keeps descriptors only unless --data is given.\n"
		"Output: faults/s per thread (mmtests rows) and in all, the lock tables and the\n"
		"iterations (mappings written whole and unmapped).\n"
		"JSON adds file_size, data, iterations and faults_per_s_median_round.\n"
		"Published numbers, set beside compare's: LKP (2024, 104 threads), the per-CPU\n"
		"batch grown from 15 to 31 folios (PAGEVEC_SIZE, Linux 6.9): 8,839,851 ->\n"
		"9,949,112 ops (+12.5%), about 45% of cycles in folio_lruvec_lock_irqsave under\n"
		"folio_add_lru_vma. Run it twice with --batch 15 and --batch 31, or compare with\n"
		"--by batch. The tables: docs/benchmarks.md, page_fault2.",
	.shared_defaults = pf2_shared_defaults,
	.opts = pf2_opts,
	.params_size = sizeof(struct pf2_params),
	.defaults = pf2_defaults,
	.prepare = pf2_prepare,
	.run = pf2_run,
	.print_extra = pf2_print_extra,
	.json_extra = pf2_json_extra,
	.compare_by = LVB_BY_BATCH,
};
