// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * reparent - what removing a memcg full of page cache costs the tenants still running.
 *
 * Not a published workload: it measures the claim of obj_cgroup reparenting (docs/design.md,
 * decisions 102-109), that a removal re-points a few obj_cgroups and splices lists node by
 * node, so it neither walks the folios nor waits for the ones in transit, and holds no lock
 * another tenant's LRU traffic needs for more than a splice.
 *
 * Before the timed part, one extra memcg (the victim) is filled with --pages pages of page
 * cache, read from a sparse file of its own, and --isolated more folios are charged to it
 * and added to the LRU. Then --containers containers of --readers readers each read a sparse
 * file of their own container sequentially, as readtwice's readers do, under a memcg limit
 * (--limit), so their reclaim stays inside their container and the victim's cache stays
 * where it is. One more thread, the remover, sleeps through the round and splits it in
 * quarters: at the half it isolates the victim's --isolated folios, removes the victim with
 * them isolated, times that, and puts them back (to the parent's lists now). Each reader
 * notes its bytes read at the first, second and third quarter mark, so the second quarter
 * (the victim present) and the third (the removal and what follows it) compare the same
 * readers over equal times in one run.
 */
#define _GNU_SOURCE
#include "lvbench.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RP_FILL_CHUNK (1u << 20) /* the victim's cache is read in 1 MiB lv_file_read()s */

struct rp_params {
	unsigned int readers;	/* per container */
	unsigned int limit_mib; /* memory.max of each reader container */
	uint64_t pages;		/* the victim's page cache */
	unsigned int isolated;	/* the victim's folios isolated across the removal */
};

#define RP(field) offsetof(struct rp_params, field)

static const struct lvb_opt rp_opts[] = {
	{ "readers", LVB_OPT_UINT, RP(readers), 1, 64, NULL, "N",
	  "readers per container, 1..64, sharing the container's file", "2" },
	{ "limit", LVB_OPT_MIB, RP(limit_mib), 4, 1u << 20, NULL, "SIZE",
	  "memory limit of each reader container, 4M..1T; a bare\n"
	  "number is MiB",
	  "64 MiB" },
	{ "pages", LVB_OPT_U64, RP(pages), 0, 0, NULL, "N",
	  "pages of page cache in the memcg removed, 1..16777216", "1048576 (4 GiB)" },
	{ "isolated", LVB_OPT_UINT, RP(isolated), 0, 65536, NULL, "N",
	  "of its folios isolated while it is removed, 0..65536", "1024" },
	{ 0 }
};

static void rp_defaults(void *params)
{
	struct rp_params *p = params;

	*p = (struct rp_params){
		.readers = 2, .limit_mib = 64, .pages = 1u << 20, .isolated = 1024
	};
}

/* The reader containers' memory, the victim's and room for the allocator's watermarks. */
static uint64_t rp_memory_mib(const struct lvb_common *opt, const struct rp_params *p)
{
	return (p->pages * LV_PAGE_SIZE >> 20) + (uint64_t)opt->containers * p->limit_mib +
	       (p->isolated * LV_PAGE_SIZE >> 20) + 256;
}

static int rp_prepare(struct lvb_common *opt, void *params)
{
	struct rp_params *p = params;
	uint64_t need;

	if (opt->threads != LVB_UNSET)
		return lvb_usage_error("reparent: option '--threads' does not apply (threads are "
				       "--containers x --readers, and the remover)");
	if (p->pages < 1 || p->pages > (1u << 24))
		return lvb_usage_error("--pages: %llu is out of range (1..16777216)",
				       (unsigned long long)p->pages);
	if (opt->containers == LVB_UNSET)
		opt->containers = 4;
	if ((uint64_t)opt->containers * p->readers + 1 > LVB_MAX_THREADS)
		return lvb_usage_error("--containers, --readers: %u x %u readers and the remover "
				       "are more than %u threads",
				       opt->containers, p->readers, LVB_MAX_THREADS);
	if (opt->nodes != 1)
		return lvb_usage_error("reparent: option '--nodes' does not apply (one node)");
	need = rp_memory_mib(opt, p);
	if (opt->memory_mib == LVB_UNSET) {
		if (need > 65536)
			return lvb_usage_error(
				"--pages, --containers, --limit: they need %llu MiB, "
				"more than a node's 64 GiB",
				(unsigned long long)need);
		opt->memory_mib = (unsigned int)need;
	} else if (opt->memory_mib < need) {
		return lvb_usage_error("--memory: %u MiB is less than the %llu MiB the victim's "
				       "pages and the containers' limits need (without global "
				       "reclaim)",
				       opt->memory_mib, (unsigned long long)need);
	}
	if (opt->duration == 0)
		opt->duration = 4.0;
	if (opt->rounds == LVB_UNSET)
		opt->rounds = opt->compare ? 3 : 1;
	return 0;
}

static unsigned int rp_nr_threads(const struct lvb_common *opt, const void *params)
{
	const struct rp_params *p = params;

	return opt->containers * p->readers + 1;
}

enum rp_counter {
	/* The readers' (lvb_reader_step()) come first. */
	RP_BEFORE_BYTES = LVB_READ_NR_COUNTERS, /* read in the second quarter */
	RP_BEFORE_US,				/* its length, summed over the readers */
	RP_AFTER_BYTES,				/* read in the third quarter */
	RP_AFTER_US,
	RP_REMOVALS,   /* the remover's: lv_memcg_remove() calls */
	RP_REMOVE_NS,  /* their time */
	RP_REPARENTED, /* pages charged to the victim when it was removed */
	RP_ISOLATED,   /* folios it had isolated then */
	RP_NR_COUNTERS
};

static const char *const rp_counter_names[RP_NR_COUNTERS] = {
	[LVB_READ_ENOMEM] = "read_enomem",  [LVB_READ_WRAPS] = "wraps",
	[RP_BEFORE_BYTES] = "before_bytes", [RP_BEFORE_US] = "before_us",
	[RP_AFTER_BYTES] = "after_bytes",   [RP_AFTER_US] = "after_us",
	[RP_REMOVALS] = "removals",	    [RP_REMOVE_NS] = "remove_ns",
	[RP_REPARENTED] = "reparented",	    [RP_ISOLATED] = "isolated_at_removal",
};

/* The quarter marks: 1 at a quarter of the round, 2 at the removal, 3 at three quarters. */
struct rp_ctl {
	unsigned int phase; /* written by the remover only; read by every reader */
} __attribute__((aligned(64)));

struct rp_reader {
	struct lvb_reader r;
	struct rp_ctl *ctl;
	unsigned int seen; /* the last phase this reader noted */
	uint64_t bytes[4];
	double at[4];
} __attribute__((aligned(64)));

struct rp_remover {
	struct rp_ctl *ctl;
	struct lv_memcg *victim;
	struct lv_folio **folios; /* the victim's folios to isolate at the removal */
	bool *skipped;		  /* [nr_folios]: not isolated, so not put back */
	unsigned int nr_folios;
	double duration, start;
	bool removed;
};

/* Each thread is a reader or the remover. */
struct rp_thread {
	bool remover;
	union {
		struct rp_reader reader;
		struct rp_remover rm;
	};
} __attribute__((aligned(64)));

static double rp_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void reader_step(struct lvb_worker *w, struct rp_reader *rr)
{
	unsigned int phase = __atomic_load_n(&rr->ctl->phase, __ATOMIC_ACQUIRE);

	if (phase != rr->seen) {
		double now = rp_now();

		while (rr->seen < phase) {
			rr->seen++;
			rr->bytes[rr->seen] = w->amount;
			rr->at[rr->seen] = now;
		}
		if (rr->seen == 3) {
			w->counters[RP_BEFORE_BYTES] += rr->bytes[2] - rr->bytes[1];
			w->counters[RP_BEFORE_US] += (uint64_t)((rr->at[2] - rr->at[1]) * 1e6);
			w->counters[RP_AFTER_BYTES] += rr->bytes[3] - rr->bytes[2];
			w->counters[RP_AFTER_US] += (uint64_t)((rr->at[3] - rr->at[2]) * 1e6);
		}
	}
	lvb_reader_step(w, &rr->r);
}

/* remove_victim - isolate the victim's folios, remove it with them isolated, put them back. */
static void remove_victim(struct lvb_worker *w, struct rp_remover *rm)
{
	unsigned int nr_isolated = 0;
	size_t charged;
	double t0;
	int err;

	for (unsigned int i = 0; i < rm->nr_folios; i++) {
		err = lv_folio_isolate_lru(rm->folios[i]);
		if (err) {
			/* -EBUSY: reclaim or a batch holds it; counted as not isolated. */
			if (err != -EBUSY)
				lvb_worker_error(w, "lv_folio_isolate_lru", -err);
			rm->skipped[i] = true; /* not isolated: not put back */
			continue;
		}
		nr_isolated++;
	}
	charged = lv_memcg_usage(rm->victim);
	__atomic_store_n(&rm->ctl->phase, 2, __ATOMIC_RELEASE);
	t0 = rp_now();
	err = lv_memcg_remove(rm->victim);
	w->counters[RP_REMOVE_NS] += (uint64_t)((rp_now() - t0) * 1e9);
	w->counters[RP_REMOVALS]++;
	if (err) {
		lvb_worker_error(w, "lv_memcg_remove", -err);
	} else {
		rm->removed = true;
		w->counters[RP_REPARENTED] += charged;
		w->counters[RP_ISOLATED] += nr_isolated;
	}
	for (unsigned int i = 0; i < rm->nr_folios; i++) {
		if (rm->skipped[i])
			continue;
		err = lv_folio_putback_lru(rm->folios[i]);
		if (err)
			lvb_worker_error(w, "lv_folio_putback_lru", -err);
	}
}

static void remover_step(struct lvb_worker *w, struct rp_remover *rm)
{
	const struct timespec nap = { 0, 200 * 1000 };
	unsigned int phase = __atomic_load_n(&rm->ctl->phase, __ATOMIC_RELAXED);
	double now = rp_now(), t;

	if (rm->start == 0)
		rm->start = now;
	t = (now - rm->start) / rm->duration;
	if (phase == 0 && t >= 0.25)
		__atomic_store_n(&rm->ctl->phase, 1, __ATOMIC_RELEASE);
	else if (phase == 1 && t >= 0.5)
		remove_victim(w, rm);
	else if (phase == 2 && t >= 0.75)
		__atomic_store_n(&rm->ctl->phase, 3, __ATOMIC_RELEASE);
	else
		nanosleep(&nap, NULL);
}

static void rp_step(struct lvb_worker *w)
{
	struct rp_thread *rt = w->priv;

	if (rt->remover)
		remover_step(w, &rt->rm);
	else
		reader_step(w, &rt->reader);
}

static const struct lvb_thread_ops rp_thread_ops = {
	.step = rp_step,
	.counter_names = rp_counter_names,
	.nr_counters = RP_NR_COUNTERS,
};

/* fill_victim - read the victim's file once, so that its pages stay cached and charged to it. */
static int fill_victim(struct lv_file *file, struct lv_memcg *victim, uint64_t size)
{
	char *buf = aligned_alloc(LV_PAGE_SIZE, RP_FILL_CHUNK);
	uint64_t off = 0;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	while (off < size) {
		long n = lv_file_read(file, victim, buf, RP_FILL_CHUNK, off);

		if (n <= 0) {
			err = n ? (int)n : -EIO;
			fprintf(stderr, "lvbench: reparent: filling the victim's page cache: %s\n",
				strerror(-err));
			break;
		}
		off += (uint64_t)n;
	}
	free(buf);
	return err;
}

/* The victim's extra folios, added to the LRU and flushed there so that they can be isolated. */
static int alloc_victim_folios(struct lv_machine *m, struct lv_memcg *victim,
			       struct lv_folio **folios, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		int err;

		folios[i] = lv_folio_alloc(m, 0, 0, victim, 0);
		if (!folios[i]) {
			err = -errno;
			fprintf(stderr, "lvbench: reparent: lv_folio_alloc: %s\n", strerror(errno));
			return err;
		}
		err = lv_folio_add_lru(folios[i]);
		if (err) {
			lv_folio_put(folios[i]);
			folios[i] = NULL;
			return err;
		}
	}
	lv_lru_add_drain_all(m);
	return 0;
}

static void put_folios(struct lv_folio **folios, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		if (folios[i])
			lv_folio_put(folios[i]);
}

static int rp_run(const struct lvb_common *opt, const void *params, enum lv_lock_design design,
		  struct lvb_result *res)
{
	const struct rp_params *p = params;
	unsigned int n = opt->threads, nr_readers = n - 1, nr_ready = 0;
	uint64_t file_size = 16ull * p->limit_mib << 20;
	struct lv_file **files = NULL, *victim_file = NULL;
	struct lv_folio **folios = NULL;
	bool *skipped = NULL;
	struct lvb_worker *workers = NULL;
	struct rp_thread *threads = NULL;
	struct lv_memcg *victim = NULL;
	struct rp_ctl *ctl = NULL;
	struct lvb_env env;
	int err;

	err = lvb_env_create(&env, opt, design, LVB_ENV_DATA);
	if (err)
		return err;
	for (unsigned int c = 0; c < env.nr_memcgs; c++)
		lv_memcg_set_max(env.memcgs[c], ((size_t)p->limit_mib << 20) / LV_PAGE_SIZE);

	err = -ENOMEM;
	files = calloc(opt->containers, sizeof(*files));
	folios = calloc(p->isolated ? p->isolated : 1, sizeof(*folios));
	skipped = calloc(p->isolated ? p->isolated : 1, sizeof(*skipped));
	workers = lvb_zalloc(n * sizeof(*workers));
	threads = lvb_zalloc(n * sizeof(*threads));
	ctl = lvb_zalloc(sizeof(*ctl));
	if (!files || !folios || !skipped || !workers || !threads || !ctl)
		goto out;
	victim = lv_memcg_create(env.m, NULL, "victim");
	victim_file = victim ? lv_file_open(env.m, -1, p->pages * LV_PAGE_SIZE) : NULL;
	if (!victim || !victim_file) {
		err = -errno;
		fprintf(stderr, "lvbench: reparent: the victim: %s\n", strerror(errno));
		goto out;
	}
	err = fill_victim(victim_file, victim, p->pages * LV_PAGE_SIZE);
	if (!err)
		err = alloc_victim_folios(env.m, victim, folios, p->isolated);
	if (err)
		goto out;
	for (unsigned int c = 0; c < opt->containers; c++) {
		files[c] = lv_file_open(env.m, -1, file_size);
		if (!files[c]) {
			err = -errno;
			fprintf(stderr, "lvbench: lv_file_open: %s\n", strerror(errno));
			goto out;
		}
	}
	for (; nr_ready < nr_readers; nr_ready++) {
		struct rp_reader *rr = &threads[nr_ready].reader;
		unsigned int c = nr_ready / p->readers;

		rr->r.buf = aligned_alloc(LV_PAGE_SIZE, LVB_READ_SIZE);
		if (!rr->r.buf) {
			err = -ENOMEM;
			goto out;
		}
		rr->r.file = files[c];
		rr->r.size = file_size;
		rr->r.memcg = env.memcgs[c];
		rr->ctl = ctl;
		workers[nr_ready].priv = &threads[nr_ready];
	}
	threads[nr_readers].remover = true;
	threads[nr_readers].rm = (struct rp_remover){ .ctl = ctl,
						      .victim = victim,
						      .folios = folios,
						      .skipped = skipped,
						      .nr_folios = p->isolated,
						      .duration = opt->duration };
	workers[nr_readers].priv = &threads[nr_readers];

	err = lvb_run_threads(&env, workers, &rp_thread_ops, res);
	if (!err && !threads[nr_readers].rm.removed) {
		fprintf(stderr,
			"lvbench: reparent: the round ended before the victim was removed\n");
		res->failures++;
	}
	if (!err) {
		/* The readers' MB/s are the samples: the remover reads nothing. */
		res->samples = calloc(nr_readers, sizeof(*res->samples));
		if (!res->samples)
			err = -ENOMEM;
		for (unsigned int t = 0; res->samples && t < nr_readers; t++)
			if (res->elapsed > 0)
				res->samples[res->nr_samples++] =
					(double)workers[t].amount * 1e-6 / res->elapsed;
	}
out:
	for (unsigned int t = 0; t < nr_ready; t++)
		free(threads[t].reader.r.buf);
	if (folios)
		put_folios(folios, p->isolated);
	if (victim && !(threads && threads[nr_readers].rm.removed)) {
		int e = lv_memcg_remove(victim);

		if (e)
			fprintf(stderr, "lvbench: reparent: lv_memcg_remove: %s\n", strerror(-e));
	}
	/* The reparented cache is freed with its file, before the machine is checked empty. */
	if (victim_file)
		lv_file_close(victim_file);
	for (unsigned int c = 0; files && c < opt->containers; c++)
		if (files[c])
			lv_file_close(files[c]);
	free(files);
	free(folios);
	free(skipped);
	free(threads);
	free(workers);
	free(ctl);
	res->failures += lvb_env_destroy(&env);
	return err;
}

/* The figures of the removal, from a series' counters (summed over its rounds). */
struct rp_figures {
	double remove_us, pages, isolated, before, after, ratio;
};

static struct rp_figures rp_figures(const struct lvb_series *s)
{
	const uint64_t *k = s->counters;
	double removals = k[RP_REMOVALS] ? (double)k[RP_REMOVALS] : 1;
	struct rp_figures f = {
		.remove_us = (double)k[RP_REMOVE_NS] / removals / 1e3,
		.pages = (double)k[RP_REPARENTED] / removals,
		.isolated = (double)k[RP_ISOLATED] / removals,
		/* Bytes per microsecond are MB/s. */
		.before =
			k[RP_BEFORE_US] ? (double)k[RP_BEFORE_BYTES] / (double)k[RP_BEFORE_US] : 0,
		.after = k[RP_AFTER_US] ? (double)k[RP_AFTER_BYTES] / (double)k[RP_AFTER_US] : 0,
	};

	f.ratio = f.before > 0 ? f.after / f.before : 0;
	return f;
}

static void rp_print_extra(FILE *out, const struct lvb_common *opt, const void *params,
			   const struct lvb_series *s, unsigned int n, const struct lvb_ceiling *c)
{
	(void)opt;
	(void)params;
	(void)c;
	fprintf(out, "\nThe removal (means over the rounds)   ");
	for (unsigned int d = 0; d < n; d++)
		fprintf(out, "%14s", s[d].column);
	fprintf(out, "\n");
#define ROW(label, fmt, expr)                                                                      \
	do {                                                                                       \
		fprintf(out, "%-38s", label);                                                      \
		for (unsigned int d = 0; d < n; d++) {                                             \
			struct rp_figures f = rp_figures(&s[d]);                                   \
			fprintf(out, fmt, expr);                                                   \
		}                                                                                  \
		fprintf(out, "\n");                                                                \
	} while (0)
	ROW("pages reparented", "%14.0f", f.pages);
	ROW("folios isolated during it", "%14.0f", f.isolated);
	ROW("lv_memcg_remove (us)", "%14.1f", f.remove_us);
	ROW("MB/s per reader, quarter before", "%14.1f", f.before);
	ROW("MB/s per reader, quarter after", "%14.1f", f.after);
	ROW("after/before", "%13.3fx", f.ratio);
#undef ROW
}

static void rp_json_extra(FILE *out, bool *first, const struct lvb_common *opt, const void *params,
			  const struct lvb_series *s, const struct lvb_ceiling *c)
{
	const struct rp_params *p = params;
	struct rp_figures f = rp_figures(s);

	(void)opt;
	(void)c;
	lvb_json_u64(out, first, "readers", s->nr_samples / (s->rounds ? s->rounds : 1));
	lvb_json_u64(out, first, "readers_per_container", p->readers);
	lvb_json_u64(out, first, "limit_mib", p->limit_mib);
	lvb_json_u64(out, first, "pages", p->pages);
	lvb_json_double(out, first, "pages_reparented", f.pages);
	lvb_json_double(out, first, "isolated_at_removal", f.isolated);
	lvb_json_double(out, first, "remove_us", f.remove_us);
	lvb_json_double(out, first, "mb_per_s_reader_before", f.before);
	lvb_json_double(out, first, "mb_per_s_reader_after", f.after);
	lvb_json_double(out, first, "after_before_ratio", f.ratio);
}

static void rp_describe(FILE *out, const struct lvb_common *opt, const void *params)
{
	const struct rp_params *p = params;

	fprintf(out,
		"reparent: %u readers per container (limit %u MiB each); a memcg of %llu cached "
		"pages removed at the half of each round with %u folios isolated\n",
		p->readers, p->limit_mib, (unsigned long long)p->pages, p->isolated);
	(void)opt;
}

static const struct lvb_rate rp_rate = {
	.unit = "MB/s",
	.per = "reader",
	.scale = 1e-6,
	.json_prefix = "mb_per_s",
	.thread_noun = "threads (the readers and the remover)",
};

static const struct lvb_default rp_shared_defaults[] = {
	{ "containers", "4 reader containers (the victim is one more)", false },
	{ "threads", "threads are --containers x --readers, and the remover", true },
	{ "duration", "4 s (the removal at 2 s)", false },
	{ "rounds", "1; compare: 3", false },
	{ "memory", "the victim's pages + containers x --limit + 256 MiB", false },
	{ "nodes", "one node", true },
	{ "disable", "it never calls lv_lru_cache_disable", true },
	{ "by", "lock (--by disable applies to numa only)", false },
	{ "folio-order", "one page per folio", true },
	{ 0 }
};

const struct lvb_workload lvb_reparent = {
	.name = "reparent",
	.summary = "remove a memcg full of page cache while other tenants read",
	.help = "reparent: removing a memcg that holds --pages pages of page cache (1 M: 4 GiB)\n"
		"and has --isolated of its folios isolated, while C containers x --readers\n"
		"readers read files of their own under --limit, as readtwice's readers do. The\n"
		"removal runs at the half of each round from a thread of its own; each reader\n"
		"notes its bytes at the quarter marks, so the second quarter (the victim still\n"
		"there) and the third (the removal and after) are the same readers over equal\n"
		"times. lv_memcg_remove() re-points the victim's obj_cgroups at the root and\n"
		"splices its lists under the victim's and the root's LRU locks of the node: it\n"
		"walks no folio and waits for none of the isolated ones, which go to the root's\n"
		"lists when put back.\n"
		"Not a published workload: the kernel's objcg reparenting (Linux 7.1) made\n"
		"removal independent of the folios in transit; this measures that here.\n"
		"Output: the generic tables (MB/s per reader), then pages reparented, folios\n"
		"isolated during the removal, its time, and the readers' MB/s in the quarter\n"
		"before and after it, with their ratio. JSON adds readers,\n"
		"readers_per_container, limit_mib, pages, pages_reparented,\n"
		"isolated_at_removal, remove_us, mb_per_s_reader_before, mb_per_s_reader_after\n"
		"and after_before_ratio (docs/benchmarks.md, reparent).",
	.opts = rp_opts,
	.shared_defaults = rp_shared_defaults,
	.params_size = sizeof(struct rp_params),
	.defaults = rp_defaults,
	.prepare = rp_prepare,
	.nr_threads = rp_nr_threads,
	.rate = &rp_rate,
	.run = rp_run,
	.print_extra = rp_print_extra,
	.describe = rp_describe,
	.json_extra = rp_json_extra,
};
