// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * compact - what compaction costs the other tenants: readers in some containers while the
 * others fragment the node and fault in transparent huge pages that need compaction.
 *
 * Not one of the published workloads: it is the place where the first per-memcg lock broke
 * (kcompactd's migrate scanner, docs/protocol.md §4.13, §7.1), measured. Containers are
 * memcgs; the first --thp-tenants of them are THP tenants, the others readers, one thread
 * each. Before the timed part every THP tenant faults in a region of small pages and drops
 * three quarters of them at random, so that every 2 MiB block of the node holds some movable
 * page. Then:
 *
 *   a reader reads a sparse file of its own in 4 KiB lv_file_read()s under a memcg limit, so
 *   its page cache (folios of 2^--folio-order pages) is reclaimed and refilled all the time;
 *
 *   a THP tenant, per op, faults in one huge page in a fresh LV_MADV_HUGEPAGE region (direct
 *   compaction when no 2 MiB block is free: the default defrag setting), keeping its
 *   --hugepages newest and unmapping the oldest, then touches 64 random pages of its
 *   small-page region and drops 64 others, so the blocks freed keep being broken up.
 *
 * kcompactd runs on the node (woken by the faults that fall back, and proactively), so in the
 * node design its scanner takes the one LRU lock every reader's batches need; in the lruvec
 * design it takes only the lock of the tenant whose folios it moves. Throughput is the
 * readers' MB/s; the THP fault success rate and the compaction counters show how hard
 * compaction worked.
 *
 * After the rounds, three measurements of the mechanisms themselves (once, in the lruvec
 * design, on an idle machine): the migrate scanner's rate over a node full of small LRU
 * folios (isolate and put back, no migration), the cost of a 2 MiB fault against the bare
 * zeroing of 2 MiB, and the LRU lock acquisitions per MiB of huge against small pages.
 */
#define _GNU_SOURCE
#include "lvbench.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

/*
 * The one internal entry point lvbench uses (src/compaction.c): a migrate scanner pass that
 * puts every isolated batch straight back. lvbench links the library's own archive.
 */
unsigned long compact_scan_putback(struct lv_machine *m, int nid);

#define HPAGE	    (2ul << 20)
#define READ_SIZE   4096u
#define FRAG_TOUCH  64 /* pages a THP tenant touches, and drops, per op */
#define MICRO_ROUND 7  /* rounds of each mechanism measurement: the median is quoted */

struct compact_params {
	unsigned int thp_tenants; /* LVB_UNSET: a quarter of the containers, at least 1 */
	unsigned int limit_mib;	  /* each reader's memcg limit; LVB_UNSET: sized from memory */
	unsigned int hugepages;	  /* huge pages each THP tenant keeps */
	unsigned int frag_mib;	  /* each THP tenant's small-page region; LVB_UNSET: sized */
	unsigned int proactiveness;
	bool no_micro;
};

#define CP(field) offsetof(struct compact_params, field)

static const struct lvb_opt compact_opts[] = {
	{ "thp-tenants", LVB_OPT_UINT, CP(thp_tenants), 1, LVB_MAX_CONTAINERS, NULL, "N",
	  "containers that fragment memory and fault in huge pages\n"
	  "(the first N); the others read",
	  "a quarter of --containers, at least 1" },
	{ "limit", LVB_OPT_MIB, CP(limit_mib), 1, 1u << 20, NULL, "SIZE",
	  "memory limit of each reader's container; a bare number is MiB",
	  "memory x 5/8 / readers, at least 4M" },
	{ "hugepages", LVB_OPT_UINT, CP(hugepages), 1, 4096, NULL, "N",
	  "huge pages each THP tenant keeps mapped, 1..4096", "memory / 64M, at most 8" },
	{ "frag", LVB_OPT_MIB, CP(frag_mib), 1, 1u << 20, NULL, "SIZE",
	  "each THP tenant's region of small pages, a quarter of it\n"
	  "kept faulted in; a bare number is MiB",
	  "memory x 3/4 / THP tenants" },
	{ "proactiveness", LVB_OPT_UINT, CP(proactiveness), 0, 100, NULL, "N",
	  "cfg.compaction_proactiveness, 0..100", "20" },
	{ "no-micro", LVB_OPT_FLAG, CP(no_micro), 0, 0, NULL, NULL,
	  "skip the scanner and fault measurements after the rounds", "they run" },
	{ 0 }
};

static void compact_defaults(void *params)
{
	struct compact_params *p = params;

	*p = (struct compact_params){ .thp_tenants = LVB_UNSET,
				      .limit_mib = LVB_UNSET,
				      .hugepages = LVB_UNSET,
				      .frag_mib = LVB_UNSET,
				      .proactiveness = 20 };
}

static unsigned int nr_readers(const struct lvb_common *opt, const struct compact_params *p)
{
	return opt->containers - p->thp_tenants;
}

static int compact_prepare(struct lvb_common *opt, void *params)
{
	struct compact_params *p = params;
	uint64_t need;

	if (opt->folio_order == LVB_UNSET)
		opt->folio_order = 1;
	if (opt->threads != LVB_UNSET)
		return lvb_usage_error("compact: option '--threads' does not apply (one thread "
				       "per container)");
	if (opt->sweep.n)
		return lvb_usage_error("compact: option '--sweep' does not apply");
	if (opt->containers == LVB_UNSET)
		opt->containers = 8;
	if (opt->containers < 2)
		return lvb_usage_error("compact: --containers must be at least 2 (a reader and a "
				       "THP tenant)");
	if (p->thp_tenants == LVB_UNSET)
		p->thp_tenants = opt->containers / 4 ? opt->containers / 4 : 1;
	if (p->thp_tenants >= opt->containers)
		return lvb_usage_error("--thp-tenants: %u leaves no reader among %u containers",
				       p->thp_tenants, opt->containers);
	if (opt->memory_mib == LVB_UNSET)
		opt->memory_mib = 512;
	if (opt->nodes != 1)
		return lvb_usage_error("compact: --nodes must be 1 (compaction is per node)");
	if (opt->duration == 0)
		opt->duration = opt->compare ? 5.0 : 3.0;
	if (opt->rounds == LVB_UNSET)
		opt->rounds = opt->compare ? 3 : 1;
	opt->threads = opt->containers;
	if (p->hugepages == LVB_UNSET) {
		p->hugepages = opt->memory_mib / 64;
		p->hugepages = p->hugepages > 8 ? 8 : p->hugepages ? p->hugepages : 1;
	}
	if (p->limit_mib == LVB_UNSET) {
		p->limit_mib = opt->memory_mib * 5 / 8 / nr_readers(opt, p);
		if (p->limit_mib < 4)
			p->limit_mib = 4;
	}
	if (p->frag_mib == LVB_UNSET) {
		p->frag_mib = opt->memory_mib * 3 / 4 / p->thp_tenants;
		if (!p->frag_mib)
			p->frag_mib = 1;
	}
	/* What the tenants keep must fit, or the run only measures reclaim. */
	need = (uint64_t)nr_readers(opt, p) * p->limit_mib +
	       (uint64_t)p->thp_tenants * (p->frag_mib / 4 + 2ull * (p->hugepages + 1));
	if (need > opt->memory_mib * 9ull / 10)
		return lvb_usage_error("compact: the tenants would keep %llu MiB of %u MiB: lower "
				       "--limit, --frag or --hugepages, or raise --memory",
				       (unsigned long long)need, opt->memory_mib);
	return 0;
}

/* ---- the tenants ----------------------------------------------------------------------------- */

enum compact_counter {
	CC_READ_ENOMEM,	 /* a reader's lv_file_read() found no memory even after reclaim */
	CC_FAULT_ENOMEM, /* a THP tenant's write found no memory at all */
	CC_NR_COUNTERS
};

static const char *const compact_counter_names[CC_NR_COUNTERS] = {
	[CC_READ_ENOMEM] = "read_enomem",
	[CC_FAULT_ENOMEM] = "fault_enomem",
};

struct compact_thread {
	bool thp; /* a THP tenant; otherwise a reader */
	/* reader */
	struct lv_file *file;
	uint64_t size, off;
	struct lv_memcg *memcg;
	char *buf;
	/* THP tenant */
	struct lv_mm *mm;
	uint64_t frag, frag_pages; /* the small-page region */
	uint64_t *huge;		   /* ring of mapped huge regions (4 MiB each) */
	unsigned int nr_huge, next_huge, max_huge;
	uint64_t rng;
} __attribute__((aligned(64)));

static uint64_t cp_rand(struct compact_thread *ct)
{
	ct->rng ^= ct->rng >> 12;
	ct->rng ^= ct->rng << 25;
	ct->rng ^= ct->rng >> 27;
	return ct->rng * 0x2545f4914f6cdd1dull;
}

static void reader_step(struct lvb_worker *w, struct compact_thread *ct)
{
	long n = lv_file_read(ct->file, ct->memcg, ct->buf, READ_SIZE, ct->off);

	if (n > 0) {
		w->ops++;
		w->amount += (uint64_t)n;
		ct->off += (uint64_t)n;
	} else if (n == -ENOMEM) {
		w->counters[CC_READ_ENOMEM]++;
	} else {
		lvb_worker_error(w, "lv_file_read", (int)-n);
		ct->off += READ_SIZE;
	}
	if (ct->off >= ct->size)
		ct->off = 0;
}

/* fault_huge - map a 4 MiB LV_MADV_HUGEPAGE region and write its aligned 2 MiB once. */
static void fault_huge(struct lvb_worker *w, struct compact_thread *ct)
{
	uint64_t addr, aligned;
	int err;

	if (ct->nr_huge == ct->max_huge) {
		err = lv_munmap(ct->mm, ct->huge[ct->next_huge], 2 * HPAGE);
		if (err)
			lvb_worker_error(w, "lv_munmap", -err);
		ct->nr_huge--;
	}
	err = lv_mmap(ct->mm, 2 * HPAGE, &addr);
	if (!err)
		err = lv_madvise(ct->mm, addr, 2 * HPAGE, LV_MADV_HUGEPAGE);
	if (err) {
		lvb_worker_error(w, "lv_mmap/lv_madvise", -err);
		return;
	}
	ct->huge[ct->next_huge] = addr;
	ct->next_huge = (ct->next_huge + 1) % ct->max_huge;
	ct->nr_huge++;
	aligned = (addr + HPAGE - 1) & ~(HPAGE - 1);
	err = lv_mm_memset(ct->mm, aligned, 1, 1);
	if (err == -ENOMEM)
		w->counters[CC_FAULT_ENOMEM]++;
	else if (err)
		lvb_worker_error(w, "lv_mm_memset", -err);
	w->ops++;
}

static void fragment(struct lvb_worker *w, struct compact_thread *ct)
{
	for (unsigned int i = 0; i < FRAG_TOUCH; i++) {
		uint64_t in = ct->frag + cp_rand(ct) % ct->frag_pages * LV_PAGE_SIZE;
		uint64_t out = ct->frag + cp_rand(ct) % ct->frag_pages * LV_PAGE_SIZE;
		int err = lv_mm_memset(ct->mm, in, 2, 1);

		if (err == -ENOMEM)
			w->counters[CC_FAULT_ENOMEM]++;
		else if (err)
			lvb_worker_error(w, "lv_mm_memset", -err);
		err = lv_madvise(ct->mm, out, LV_PAGE_SIZE, LV_MADV_DONTNEED);
		if (err)
			lvb_worker_error(w, "lv_madvise", -err);
	}
}

static void compact_step(struct lvb_worker *w)
{
	struct compact_thread *ct = w->priv;

	if (!ct->thp) {
		reader_step(w, ct);
		return;
	}
	fault_huge(w, ct);
	fragment(w, ct);
}

/* The readers' MB/s are the samples: a THP tenant reads nothing. */
static void compact_samples(const struct lvb_worker *workers, const struct compact_thread *threads,
			    unsigned int n, struct lvb_result *res)
{
	res->samples = calloc(n, sizeof(*res->samples));
	if (!res->samples)
		return;
	for (unsigned int t = 0; t < n; t++)
		if (!threads[t].thp && res->elapsed > 0)
			res->samples[res->nr_samples++] =
				(double)workers[t].amount * 1e-6 / res->elapsed;
}

static const struct lvb_thread_ops compact_thread_ops = {
	.step = compact_step,
	.counter_names = compact_counter_names,
	.nr_counters = CC_NR_COUNTERS,
};

/*
 * setup_thp_tenant - fault in the small-page region, then drop three quarters of it at
 * random: what is left sits in nearly every 2 MiB block the region used.
 */
static int setup_thp_tenant(struct lvb_env *env, struct compact_thread *ct,
			    const struct compact_params *p, struct lv_memcg *memcg)
{
	int err;

	ct->thp = true;
	ct->mm = lv_mm_create(env->m, memcg, 0);
	if (!ct->mm)
		return -errno;
	ct->frag_pages = ((uint64_t)p->frag_mib << 20) / LV_PAGE_SIZE;
	ct->max_huge = p->hugepages;
	ct->huge = calloc(ct->max_huge, sizeof(*ct->huge));
	if (!ct->huge)
		return -ENOMEM;
	err = lv_mmap(ct->mm, ct->frag_pages * LV_PAGE_SIZE, &ct->frag);
	if (!err)
		err = lv_madvise(ct->mm, ct->frag, ct->frag_pages * LV_PAGE_SIZE,
				 LV_MADV_NOHUGEPAGE);
	for (uint64_t i = 0; !err && i < ct->frag_pages; i++)
		err = lv_mm_memset(ct->mm, ct->frag + i * LV_PAGE_SIZE, 3, 1);
	for (uint64_t i = 0; !err && i < ct->frag_pages; i++)
		if (cp_rand(ct) % 4)
			err = lv_madvise(ct->mm, ct->frag + i * LV_PAGE_SIZE, LV_PAGE_SIZE,
					 LV_MADV_DONTNEED);
	if (err)
		fprintf(stderr, "lvbench: compact: fragmenting the node: %s\n", strerror(-err));
	return err;
}

static int compact_run(const struct lvb_common *opt, const void *params, enum lv_lock_design design,
		       struct lvb_result *res)
{
	const struct compact_params *p = params;
	unsigned int n = opt->containers, nr_ready = 0;
	struct compact_thread *threads = NULL;
	struct lvb_worker *workers = NULL;
	struct lvb_env env;
	int err;

	err = lvb_env_create(&env, opt, design,
			     LVB_ENV_DATA | LVB_ENV_FOLIO_ORDER(opt->folio_order) |
				     LVB_ENV_PROACTIVE(p->proactiveness));
	if (err)
		return err;
	err = -ENOMEM;
	workers = lvb_zalloc(n * sizeof(*workers));
	threads = lvb_zalloc(n * sizeof(*threads));
	if (!workers || !threads)
		goto out;
	for (; nr_ready < n; nr_ready++) {
		unsigned int t = nr_ready;
		struct compact_thread *ct = &threads[t];

		ct->rng = opt->seed * 0x9e3779b97f4a7c15ull + t + 1;
		ct->memcg = env.memcgs[t];
		workers[t].priv = ct;
		if (t < p->thp_tenants) {
			err = setup_thp_tenant(&env, ct, p, env.memcgs[t]);
			if (err) {
				nr_ready++;
				goto out;
			}
			continue;
		}
		lv_memcg_set_max(env.memcgs[t], ((size_t)p->limit_mib << 20) / LV_PAGE_SIZE);
		ct->size = 64ull << 30;
		ct->file = lv_file_open(env.m, -1, ct->size);
		ct->buf = aligned_alloc(LV_PAGE_SIZE, READ_SIZE);
		if (!ct->file || !ct->buf) {
			err = ct->file ? -ENOMEM : -errno;
			nr_ready++;
			goto out;
		}
	}
	err = lvb_run_threads(&env, workers, &compact_thread_ops, res);
	if (!err)
		compact_samples(workers, threads, n, res);
out:
	for (unsigned int t = 0; t < nr_ready; t++) {
		lv_mm_destroy(threads[t].mm);
		free(threads[t].huge);
		if (threads[t].file)
			lv_file_close(threads[t].file);
		free(threads[t].buf);
	}
	free(threads);
	free(workers);
	res->failures += lvb_env_destroy(&env);
	return err;
}

/* ---- the mechanisms, measured once ----------------------------------------------------------- */

struct compact_micro {
	bool done, valid;
	double scan_pfns_per_s;	     /* migrate scanner, isolate and put back */
	unsigned long scan_frames;   /* node size */
	double fault_ns, zero_ns;    /* per 2 MiB: a huge page fault, a bare memset */
	double acq_huge, acq_small;  /* LRU lock acquisitions per MiB faulted */
	unsigned int huge_per_round; /* huge pages per timed round */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static struct lv_machine *micro_machine(const struct lvb_common *opt, bool data)
{
	struct lv_config cfg;

	lv_config_init(&cfg);
	cfg.node_mem_bytes = (size_t)opt->memory_mib << 20;
	cfg.metadata_only = !data;
	cfg.no_kswapd = true;
	cfg.no_kcompactd = true;
	cfg.lock_backend = (enum lv_lock_backend)opt->backend;
	return lv_machine_create(&cfg);
}

/* micro_scan - fill the node with small LRU folios and time whole scanner passes. */
static int micro_scan(const struct lvb_common *opt, struct compact_micro *mc)
{
	struct lv_machine *m = micro_machine(opt, false);
	unsigned long nr = 0, max, pfns = 0;
	struct lv_folio **folios;
	double rate[MICRO_ROUND];
	int err = 0;

	if (!m)
		return -errno;
	max = lv_node_stat(m, 0, LV_NR_FREE) * 9 / 10;
	folios = calloc(max, sizeof(*folios));
	if (!folios) {
		lv_machine_destroy(m);
		return -ENOMEM;
	}
	for (; nr < max; nr++) {
		folios[nr] = lv_folio_alloc(m, 0, 0, NULL, nr % 2 ? LV_FOLIO_ANON : 0);
		if (!folios[nr] || lv_folio_add_lru(folios[nr])) {
			err = -ENOMEM;
			break;
		}
	}
	lv_lru_add_drain_all(m);
	for (unsigned int r = 0; !err && r < MICRO_ROUND; r++) {
		double t0 = now_s();

		pfns = compact_scan_putback(m, 0);
		rate[r] = (double)pfns / (now_s() - t0);
	}
	if (!err) {
		mc->scan_pfns_per_s = lvb_median(rate, MICRO_ROUND);
		mc->scan_frames = pfns;
	}
	lv_folios_put(folios, nr);
	free(folios);
	lv_machine_destroy(m);
	return err;
}

/* lru_acquired - acquisitions of either LRU lock class since the last reset. */
static uint64_t lru_acquired(struct lv_machine *m)
{
	struct lv_lock_stat a, b;

	lv_lock_stats(m, LV_LOCK_CLASS_LRUVEC, &a);
	lv_lock_stats(m, LV_LOCK_CLASS_NODE, &b);
	return a.acquired + b.acquired;
}

/*
 * fault_round - fault in @bytes of a fresh region (huge or small pages), one write per page
 * that faults; Return: seconds taken, or a negative errno. *@acq: LRU lock acquisitions.
 */
static double fault_round(struct lv_mm *mm, struct lv_machine *m, size_t bytes, bool huge,
			  uint64_t *acq)
{
	size_t step = huge ? HPAGE : LV_PAGE_SIZE;
	uint64_t addr, base;
	double t0, t;
	int err;

	err = lv_mmap(mm, bytes + HPAGE, &addr);
	if (!err)
		err = lv_madvise(mm, addr, bytes + HPAGE,
				 huge ? LV_MADV_HUGEPAGE : LV_MADV_NOHUGEPAGE);
	if (err)
		return err;
	base = (addr + HPAGE - 1) & ~(HPAGE - 1);
	lv_lock_stats_reset(m);
	t0 = now_s();
	for (size_t off = 0; !err && off < bytes; off += step)
		err = lv_mm_memset(mm, base + off, 1, 1);
	lv_lru_add_drain(m); /* the small pages' last batch, counted as theirs */
	t = now_s() - t0;
	*acq = lru_acquired(m);
	lv_munmap(mm, addr, bytes + HPAGE);
	lv_lru_add_drain_all(m);
	return err ? err : t;
}

/* micro_fault - a 2 MiB fault against a bare 2 MiB memset over as much memory. */
static int micro_fault(const struct lvb_common *opt, struct compact_micro *mc)
{
	size_t bytes = ((size_t)opt->memory_mib << 20) / 4 / HPAGE * HPAGE;
	double fault[MICRO_ROUND], zero[MICRO_ROUND], acq_huge[MICRO_ROUND], acq_small[MICRO_ROUND];
	struct lv_machine *m;
	struct lv_mm *mm;
	char *buf;
	int err = 0;

	if (bytes < HPAGE)
		return -EINVAL;
	if (bytes > (64ul << 20))
		bytes = 64ul << 20;
	m = micro_machine(opt, true);
	if (!m)
		return -errno;
	mm = lv_mm_create(m, NULL, 0);
	buf = aligned_alloc(HPAGE, bytes);
	if (!mm || !buf) {
		err = -ENOMEM;
		goto out;
	}
	/* The same kind of memory as the machine's frames: huge-page backed, faulted in. */
	madvise(buf, bytes, MADV_HUGEPAGE);
	memset(buf, 0, bytes);
	for (unsigned int r = 0; !err && r < MICRO_ROUND; r++) {
		uint64_t a_huge, a_small;
		double th = fault_round(mm, m, bytes, true, &a_huge), ts, tz;

		ts = th < 0 ? th : fault_round(mm, m, bytes, false, &a_small);
		if (th < 0 || ts < 0) {
			err = (int)(th < 0 ? th : ts);
			break;
		}
		tz = now_s();
		for (size_t off = 0; off < bytes; off += HPAGE) {
			memset(buf + off, (int)r, HPAGE);
			__asm__ __volatile__("" : : "r"(buf + off) : "memory");
		}
		tz = now_s() - tz;
		fault[r] = th * 1e9 / (double)(bytes / HPAGE);
		zero[r] = tz * 1e9 / (double)(bytes / HPAGE);
		acq_huge[r] = (double)a_huge / (double)(bytes >> 20);
		acq_small[r] = (double)a_small / (double)(bytes >> 20);
	}
	if (!err) {
		mc->fault_ns = lvb_median(fault, MICRO_ROUND);
		mc->zero_ns = lvb_median(zero, MICRO_ROUND);
		mc->acq_huge = lvb_median(acq_huge, MICRO_ROUND);
		mc->acq_small = lvb_median(acq_small, MICRO_ROUND);
		mc->huge_per_round = (unsigned int)(bytes / HPAGE);
	}
out:
	free(buf);
	lv_mm_destroy(mm);
	lv_machine_destroy(m);
	return err;
}

static const struct compact_micro *compact_micro(const struct lvb_common *opt,
						 const struct compact_params *p)
{
	static struct compact_micro mc;
	int err;

	if (mc.done || p->no_micro)
		return &mc;
	mc.done = true;
	lvb_progress_label("compact: scanner and fault measurements");
	err = micro_scan(opt, &mc);
	if (!err)
		err = micro_fault(opt, &mc);
	if (err)
		fprintf(stderr, "lvbench: compact: measuring the mechanisms: %s\n", strerror(-err));
	mc.valid = !err;
	return &mc;
}

/* ---- output ---------------------------------------------------------------------------------- */

static double thp_success(const struct lvb_series *s)
{
	uint64_t ok = s->vmstat[LV_THP_FAULT_ALLOC], fb = s->vmstat[LV_THP_FAULT_FALLBACK];

	return ok + fb ? 100.0 * (double)ok / (double)(ok + fb) : 0;
}

static const enum lv_stat_item compact_items[] = {
	LV_THP_FAULT_ALLOC,	LV_THP_FAULT_FALLBACK,	    LV_THP_SPLIT_PAGE,
	LV_COMPACT_STALL,	LV_COMPACT_SUCCESS,	    LV_COMPACT_FAIL,
	LV_COMPACT_ISOLATED,	LV_COMPACT_MIGRATE_SCANNED, LV_COMPACT_FREE_SCANNED,
	LV_COMPACT_DAEMON_WAKE, LV_PGMIGRATE_SUCCESS,	    LV_PGMIGRATE_FAIL,
};

static void compact_print_extra(FILE *out, const struct lvb_common *opt, const void *params,
				const struct lvb_series *s, unsigned int n,
				const struct lvb_ceiling *c)
{
	const struct compact_params *p = params;
	const struct compact_micro *mc = compact_micro(opt, p);

	(void)c;
	fprintf(out,
		"\ncompact: %u reader%s (memcg limit %u MiB each, page cache folios of %u "
		"pages), %u THP tenant%s\n(%u huge pages kept, %u MiB of small pages a quarter "
		"faulted in), %u MiB, proactiveness %u.\n\n",
		nr_readers(opt, p), lvb_plural(nr_readers(opt, p)), p->limit_mib,
		1u << opt->folio_order, p->thp_tenants, lvb_plural(p->thp_tenants), p->hugepages,
		p->frag_mib, opt->memory_mib, p->proactiveness);
	fprintf(out, "%-28s", "");
	for (unsigned int d = 0; d < n; d++)
		fprintf(out, " %14s", s[d].column);
	fprintf(out, "\n%-28s", "THP faults: huge (%)");
	for (unsigned int d = 0; d < n; d++)
		fprintf(out, " %13.1f%%", thp_success(&s[d]));
	fputc('\n', out);
	for (size_t i = 0; i < sizeof(compact_items) / sizeof(compact_items[0]); i++) {
		fprintf(out, "%-28s", lv_stat_name(compact_items[i]));
		for (unsigned int d = 0; d < n; d++)
			fprintf(out, " %14llu", (unsigned long long)s[d].vmstat[compact_items[i]]);
		fputc('\n', out);
	}
	if (n == 2 && lvb_series_rate(&s[0]) > 0)
		fprintf(out, "%s/%s: readers' MB/s %.2fx\n", s[1].column, s[0].column,
			lvb_series_rate(&s[1]) / lvb_series_rate(&s[0]));
	if (!mc->valid)
		return;
	fprintf(out,
		"\nMigrate scanner: %.1f M PFNs/s (one thread, %lu frames of small LRU folios, "
		"isolate and put back)\n",
		mc->scan_pfns_per_s * 1e-6, mc->scan_frames);
	fprintf(out,
		"2 MiB fault: %.1f us = %.2fx a bare memset of 2 MiB (%.1f us; medians of %d "
		"rounds of %u)\n",
		mc->fault_ns * 1e-3, mc->zero_ns > 0 ? mc->fault_ns / mc->zero_ns : 0,
		mc->zero_ns * 1e-3, MICRO_ROUND, mc->huge_per_round);
	fprintf(out, "LRU lock acquisitions per MiB: %.2f huge, %.2f small (%.1fx fewer)\n",
		mc->acq_huge, mc->acq_small, mc->acq_huge > 0 ? mc->acq_small / mc->acq_huge : 0);
}

static void compact_json_extra(FILE *out, bool *first, const struct lvb_common *opt,
			       const void *params, const struct lvb_series *s,
			       const struct lvb_ceiling *c)
{
	const struct compact_params *p = params;
	const struct compact_micro *mc = compact_micro(opt, p);

	(void)c;
	lvb_json_u64(out, first, "readers", nr_readers(opt, p));
	lvb_json_u64(out, first, "thp_tenants", p->thp_tenants);
	lvb_json_u64(out, first, "limit_mib", p->limit_mib);
	lvb_json_u64(out, first, "hugepages", p->hugepages);
	lvb_json_u64(out, first, "frag_mib", p->frag_mib);
	lvb_json_u64(out, first, "proactiveness", p->proactiveness);
	lvb_json_double(out, first, "thp_fault_success_pct", thp_success(s));
	for (size_t i = 0; i < sizeof(compact_items) / sizeof(compact_items[0]); i++)
		lvb_json_u64(out, first, lv_stat_name(compact_items[i]),
			     s->vmstat[compact_items[i]]);
	if (!mc->valid)
		return;
	lvb_json_double(out, first, "scan_pfns_per_s", mc->scan_pfns_per_s);
	lvb_json_double(out, first, "thp_fault_ns", mc->fault_ns);
	lvb_json_double(out, first, "zero_2m_ns", mc->zero_ns);
	lvb_json_double(out, first, "thp_fault_over_zero",
			mc->zero_ns > 0 ? mc->fault_ns / mc->zero_ns : 0);
	lvb_json_double(out, first, "lru_acquired_per_mib_huge", mc->acq_huge);
	lvb_json_double(out, first, "lru_acquired_per_mib_small", mc->acq_small);
}

static void compact_describe(FILE *out, const struct lvb_common *opt, const void *params)
{
	const struct compact_params *p = params;

	fprintf(out, "compact: %u readers, %u THP tenants, %u MiB\n", nr_readers(opt, p),
		p->thp_tenants, opt->memory_mib);
}

static const struct lvb_default compact_shared_defaults[] = {
	{ "containers", "8", false },
	{ "threads", "one per container", true },
	{ "memory", "512M", false },
	{ "nodes", "compaction is per node: 1", true },
	{ "duration", "3 (compare: 5)", false },
	{ "rounds", "1 (compare: 3)", false },
	{ "disable", "it never calls lv_lru_cache_disable", true },
	{ "sweep", "the roles are fixed per container", true },
	{ "folio-order", "1", false },
	{ 0 }
};

static const struct lvb_rate compact_rate = {
	.unit = "MB/s",
	.per = "reader",
	.scale = 1e-6,
	.json_prefix = "mb_per_s",
};

const struct lvb_workload lvb_compact = {
	.name = "compact",
	.summary = "readers beside tenants whose huge page faults need compaction",
	.help = "compact: C containers, one thread each. The first --thp-tenants fragment the\n"
		"node (a region of small pages, three quarters dropped at random) and, per op,\n"
		"fault in one huge page in a fresh LV_MADV_HUGEPAGE region, keeping the newest\n"
		"--hugepages, then touch 64 random small pages and drop 64 others; the rest read\n"
		"a sparse file of their own in 4 KiB reads under a memcg limit. kcompactd and\n"
		"direct compaction move the tenants' folios while the readers' batches need the\n"
		"LRU lock: in the node design one lock for all, in the lruvec design one each.\n"
		"Throughput: the readers' MB/s. Also shown: the share of THP faults that got a\n"
		"huge page, the compaction and migration counters, and, measured once after the\n"
		"rounds on an idle machine, the migrate scanner's PFNs/s over a node of small LRU\n"
		"folios, a 2 MiB fault against a bare 2 MiB memset, and the LRU lock\n"
		"acquisitions per MiB of huge and small pages (--no-micro skips them).\n"
		"Not a published workload: its tables are in docs/benchmarks.md, compact.\n"
		"JSON adds the settings, thp_fault_success_pct, the counters, scan_pfns_per_s,\n"
		"thp_fault_ns, zero_2m_ns, thp_fault_over_zero and lru_acquired_per_mib_huge,\n"
		"_small.",
	.opts = compact_opts,
	.shared_defaults = compact_shared_defaults,
	.params_size = sizeof(struct compact_params),
	.defaults = compact_defaults,
	.prepare = compact_prepare,
	.rate = &compact_rate,
	.run = compact_run,
	.print_extra = compact_print_extra,
	.describe = compact_describe,
	.json_extra = compact_json_extra,
	.default_nodes = 1,
	.features = LVB_WL_FOLIO_ORDER,
};
