// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * churn - every LRU operation of the library, from many threads in many containers.
 *
 * Not one of the published workloads (docs/benchmarks.md describes those): it is the library's
 * own stress mix, and it is meant to make the difference between the two lock designs visible.
 * Each thread owns a working set of folio slots and visits them in a cycle. An empty slot gets a
 * new folio (allocated on the thread's node, charged to the thread's container, added to the
 * LRU); a full one gets one operation drawn at random:
 *
 *   40%  touched twice (lv_folio_mark_accessed x2: referenced, then activated)
 *   15%  deactivated (lv_folio_deactivate; an inactive folio is touched twice instead)
 *   15%  isolated and put back (lv_folio_isolate_lru + lv_folio_putback_lru)
 *   10%  moved to another container (lv_folio_move_memcg; touched with one container)
 *   20%  released: queued for the next lv_folios_put() of --batch folios, its slot emptied
 *
 * With C containers and T threads, thread t serves the containers t, t + T, t + 2T, ... when
 * they outnumber the threads, charging each new folio to the next of them in turn, so that
 * every container is in use at any count with the same threads (lvbench scale); when the
 * threads outnumber the containers, thread t is in container t % C.
 *
 * Every LRU call is one op (an allocation and its add together are one; a failed allocation is
 * none). Isolations and moves that fail for expected reasons — a lost pin (-EBUSY), a full
 * memcg (-ENOMEM) — still count, and are counted apart as well. Half of the folios are
 * anonymous, half page cache, so both halves of the LRU are used. In the node design every
 * lruvec of a node shares one lock, so the containers' traffic meets there; in the lruvec
 * design it meets only where it really overlaps (moves between containers, the shared per-CPU
 * batch slots).
 */
#include "lvbench.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

struct churn_params {
	unsigned int working_set; /* folio slots per thread */
	unsigned int limit_mib;	  /* per container; 0: no limit */
};

static const struct lvb_opt churn_opts[] = {
	{ "working-set", LVB_OPT_UINT, offsetof(struct churn_params, working_set), 1, 1u << 20,
	  NULL, "N", "folios each thread cycles through, 1..1048576", "256" },
	{ "limit", LVB_OPT_MIB, offsetof(struct churn_params, limit_mib), 0, 1u << 20, NULL, "SIZE",
	  "memory limit of each container, up to 1T; a bare number is\n"
	  "MiB; 0: none",
	  "0" },
	{ 0 }
};

static void churn_defaults(void *params)
{
	struct churn_params *p = params;

	p->working_set = 256;
	p->limit_mib = 0;
}

/* Operation mix, in percent of the visits of an occupied slot; the rest is release. */
enum {
	MIX_TOUCH = 40,
	MIX_DEACTIVATE = 15,
	MIX_ISOLATE = 15,
	MIX_MOVE = 10,
};

enum churn_counter {
	CHURN_ALLOC_ENOMEM,
	CHURN_ISOLATE_EBUSY,
	CHURN_MOVE_EBUSY,
	CHURN_MOVE_ENOMEM,
	CHURN_NR_COUNTERS
};

static const char *const churn_counter_names[CHURN_NR_COUNTERS] = {
	[CHURN_ALLOC_ENOMEM] = "alloc_enomem",
	[CHURN_ISOLATE_EBUSY] = "isolate_ebusy",
	[CHURN_MOVE_EBUSY] = "move_ebusy",
	[CHURN_MOVE_ENOMEM] = "move_enomem",
};

struct churn_thread {
	struct lv_folio **ws; /* the working set; NULL: an empty slot */
	unsigned int ws_size;
	unsigned int cycle; /* slots in use: fewer than ws_size under memory pressure */
	unsigned int next;  /* the slot visited next */
	bool pressure;	    /* an allocation failed during this pass over the cycle */
	struct lv_folio *rel[LV_MAX_BATCH]; /* released, waiting for lv_folios_put() */
	unsigned int nr_rel, rel_batch;
	/* The containers served: first, first + stride, ...; next charges the next new folio. */
	unsigned int memcg_first, memcg_stride, memcg_next;
	int nid;
	uint64_t rng;
} __attribute__((aligned(64))); /* written by its thread on every step: no false sharing */

/* xorshift64*: per-thread, so threads never share a cache line for randomness. */
static uint32_t churn_rand(struct churn_thread *ct)
{
	ct->rng ^= ct->rng >> 12;
	ct->rng ^= ct->rng << 25;
	ct->rng ^= ct->rng >> 27;
	return (uint32_t)((ct->rng * 0x2545f4914f6cdd1dull) >> 32);
}

/* splitmix64, to turn (seed, thread) into well-spread non-zero xorshift states. */
static uint64_t churn_seed(uint64_t seed, unsigned int thread)
{
	uint64_t z = seed + (thread + 1) * 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return z ? z : 1;
}

static void churn_flush(struct lvb_worker *w, struct churn_thread *ct)
{
	if (!ct->nr_rel)
		return;
	lv_folios_put(ct->rel, ct->nr_rel);
	w->ops += ct->nr_rel;
	ct->nr_rel = 0;
}

static void churn_release(struct lvb_worker *w, struct churn_thread *ct, unsigned int i)
{
	ct->rel[ct->nr_rel++] = ct->ws[i];
	ct->ws[i] = NULL;
	if (ct->nr_rel == ct->rel_batch)
		churn_flush(w, ct);
}

/*
 * Out of memory (our container's limit or the node): the working set does not fit. Shrink the
 * cycle by a batch and release the folios of the slots cut off, as a process under memory
 * pressure gives memory back, and go on. Releasing folios but keeping the cycle would not do:
 * with a cyclic visit order the freed slots would be refilled before any occupied slot is
 * visited again, and the thread would do nothing but allocate and release.
 */
static void churn_relieve(struct lvb_worker *w, struct churn_thread *ct)
{
	unsigned int freed = ct->nr_rel, old = ct->cycle;

	ct->pressure = true;
	churn_flush(w, ct);
	ct->cycle = old > ct->rel_batch ? old - ct->rel_batch : 1;
	for (unsigned int i = ct->cycle; i < old; i++) {
		if (ct->ws[i]) {
			churn_release(w, ct, i);
			freed++;
		}
	}
	churn_flush(w, ct);
	if (ct->next >= ct->cycle)
		ct->next = 0;
	/* Others hold the memory: let them run rather than spin on the allocator. */
	if (!freed)
		sched_yield();
}

/* A pass over the cycle without a failed allocation: try a larger working set again. */
static void churn_wrap(struct churn_thread *ct)
{
	ct->next = 0;
	if (!ct->pressure && ct->cycle < ct->ws_size)
		ct->cycle = ct->cycle + ct->rel_batch < ct->ws_size ? ct->cycle + ct->rel_batch
								    : ct->ws_size;
	ct->pressure = false;
}

static void churn_fill(struct lvb_worker *w, struct churn_thread *ct, unsigned int i)
{
	unsigned int flags = (churn_rand(ct) & 1) ? LV_FOLIO_ANON : 0;
	struct lv_memcg *memcg = w->env->memcgs[ct->memcg_next];
	struct lv_folio *folio;
	int err;

	ct->memcg_next += ct->memcg_stride;
	if (ct->memcg_next >= w->env->nr_memcgs)
		ct->memcg_next = ct->memcg_first;
	folio = lv_folio_alloc(w->env->m, ct->nid, 0, memcg, flags);
	if (!folio) {
		if (errno == ENOMEM) {
			w->counters[CHURN_ALLOC_ENOMEM]++;
			churn_relieve(w, ct);
		} else {
			lvb_worker_error(w, "lv_folio_alloc", errno);
		}
		return;
	}
	err = lv_folio_add_lru(folio);
	w->ops++;
	if (err) {
		lvb_worker_error(w, "lv_folio_add_lru", -err);
		lv_folio_put(folio);
		return;
	}
	ct->ws[i] = folio;
}

static void churn_touch(struct lvb_worker *w, struct lv_folio *folio)
{
	lv_folio_mark_accessed(folio);
	lv_folio_mark_accessed(folio);
	w->ops += 2;
}

static void churn_isolate(struct lvb_worker *w, struct lv_folio *folio)
{
	int err = lv_folio_isolate_lru(folio);

	w->ops++;
	if (err == -EBUSY) {
		w->counters[CHURN_ISOLATE_EBUSY]++; /* still in a batch, or pinned by a mover */
		return;
	}
	if (err) {
		lvb_worker_error(w, "lv_folio_isolate_lru", -err);
		return;
	}
	err = lv_folio_putback_lru(folio);
	w->ops++;
	if (err)
		lvb_worker_error(w, "lv_folio_putback_lru", -err);
}

static void churn_move(struct lvb_worker *w, struct churn_thread *ct, struct lv_folio *folio)
{
	struct lvb_env *env = w->env;
	unsigned int k = churn_rand(ct) % env->nr_memcgs;
	int err;

	/* Always a real move: the folio may already sit in another container than ours. */
	if (env->memcgs[k] == lv_folio_memcg(folio))
		k = (k + 1) % env->nr_memcgs;
	err = lv_folio_move_memcg(folio, env->memcgs[k]);
	w->ops++;
	if (err == -EBUSY)
		w->counters[CHURN_MOVE_EBUSY]++;
	else if (err == -ENOMEM)
		w->counters[CHURN_MOVE_ENOMEM]++;
	else if (err)
		lvb_worker_error(w, "lv_folio_move_memcg", -err);
}

static void churn_step(struct lvb_worker *w)
{
	struct churn_thread *ct = w->priv;
	unsigned int i = ct->next, r;
	struct lv_folio *folio = ct->ws[i];

	if (++ct->next >= ct->cycle)
		churn_wrap(ct);
	if (!folio) {
		churn_fill(w, ct, i);
		return;
	}
	r = churn_rand(ct) % 100;
	if (r < MIX_TOUCH) {
		churn_touch(w, folio);
	} else if ((r -= MIX_TOUCH) < MIX_DEACTIVATE) {
		if (lv_folio_test(folio, LV_PG_ACTIVE)) {
			lv_folio_deactivate(folio);
			w->ops++;
		} else {
			churn_touch(w, folio);
		}
	} else if ((r -= MIX_DEACTIVATE) < MIX_ISOLATE) {
		churn_isolate(w, folio);
	} else if ((r -= MIX_ISOLATE) < MIX_MOVE) {
		if (w->env->nr_memcgs > 1)
			churn_move(w, ct, folio);
		else
			churn_touch(w, folio);
	} else {
		churn_release(w, ct, i);
	}
}

static void churn_release_all(struct lvb_worker *w)
{
	struct churn_thread *ct = w->priv;
	unsigned int n = 0;

	churn_flush(w, ct);
	for (unsigned int i = 0; i < ct->ws_size; i++)
		if (ct->ws[i])
			ct->ws[n++] = ct->ws[i];
	lv_folios_put(ct->ws, n);
	memset(ct->ws, 0, ct->ws_size * sizeof(*ct->ws));
}

static const struct lvb_thread_ops churn_thread_ops = {
	.step = churn_step,
	.release = churn_release_all,
	.counter_names = churn_counter_names,
	.nr_counters = CHURN_NR_COUNTERS,
};

static int churn_run(const struct lvb_common *opt, const void *params, enum lv_lock_design design,
		     struct lvb_result *res)
{
	const struct churn_params *p = params;
	struct lvb_worker *workers = NULL;
	struct churn_thread *threads = NULL;
	unsigned int n = opt->threads, nr_ready = 0, stride;
	struct lvb_env env;
	int err;

	err = lvb_env_create(&env, opt, design, 0);
	if (err)
		return err;
	stride = n < env.nr_memcgs ? n : env.nr_memcgs;
	if (p->limit_mib)
		for (unsigned int c = 0; c < env.nr_memcgs; c++)
			lv_memcg_set_max(env.memcgs[c],
					 ((size_t)p->limit_mib << 20) / LV_PAGE_SIZE);

	err = -ENOMEM;
	workers = lvb_zalloc(n * sizeof(*workers));
	threads = lvb_zalloc(n * sizeof(*threads));
	if (!workers || !threads)
		goto out;
	for (; nr_ready < n; nr_ready++) {
		unsigned int t = nr_ready;
		struct churn_thread *ct = &threads[t];

		ct->ws = calloc(p->working_set, sizeof(*ct->ws));
		if (!ct->ws)
			goto out;
		ct->ws_size = p->working_set;
		ct->cycle = p->working_set;
		ct->rel_batch = opt->batch;
		ct->memcg_first = ct->memcg_next = t % stride;
		ct->memcg_stride = stride;
		ct->nid = (int)(t % opt->nodes);
		ct->rng = churn_seed(opt->seed, t);
		workers[t].priv = ct;
	}
	err = lvb_run_threads(&env, workers, &churn_thread_ops, res);
out:
	for (unsigned int t = 0; t < nr_ready; t++)
		free(threads[t].ws);
	free(threads);
	free(workers);
	res->failures += lvb_env_destroy(&env);
	return err;
}

static void churn_json_extra(FILE *out, bool *first, const struct lvb_common *opt,
			     const void *params, const struct lvb_series *s,
			     const struct lvb_ceiling *c)
{
	const struct churn_params *p = params;

	(void)opt;
	(void)s;
	(void)c;
	lvb_json_u64(out, first, "working_set", p->working_set);
	lvb_json_u64(out, first, "limit_mib", p->limit_mib);
}

static void churn_describe(FILE *out, const struct lvb_common *opt, const void *params)
{
	const struct churn_params *p = params;

	fprintf(out, "churn: %u thread%s, working sets of %u folios, ", opt->threads,
		lvb_plural(opt->threads), p->working_set);
	if (p->limit_mib)
		fprintf(out, "memcg limit %u MiB each\n", p->limit_mib);
	else
		fprintf(out, "no memcg limit\n");
}

static const struct lvb_default churn_shared_defaults[] = {
	{ "disable", "it never calls lv_lru_cache_disable", true },
	{ "by", "lock (--by disable applies to numa only)", false },
	{ "folio-order", "it has no page cache", true },
	{ 0 }
};

const struct lvb_workload lvb_churn = {
	.name = "churn",
	.summary = "containers x threads churning folios through every LRU operation",
	.help = "churn: C containers (memcgs) x T threads, thread t in container t % C and on\n"
		"node t % N; with more containers than threads, thread t serves containers t,\n"
		"t+T, t+2T, ..., charging each new folio to the next of them in turn, so every\n"
		"container is in use. Each thread cycles through a working set of folio slots: an\n"
		"empty slot gets a new folio (allocated, charged to the thread's container, added\n"
		"to the LRU; half anonymous, half page cache); an occupied one is touched twice\n"
		"(40%), deactivated (15%), isolated and put back (15%), moved to another\n"
		"container (10%) or released in batches of --batch (20%). One op = one library\n"
		"call. An allocation failure (memcg limit, node full) shrinks the thread's cycle\n"
		"by a batch, releasing those folios; each pass without a failure grows it back\n"
		"by a batch, up to --working-set.\n"
		"Frames hold no data (metadata only), so --memory only bounds the folio count.\n"
		"This is the library's own stress mix, not a published workload: use it for lock\n"
		"contention and correctness, not to reproduce published numbers (there are none;\n"
		"its current tables: docs/benchmarks.md, churn).\n"
		"Every container is created and removed in every round, outside the timed part.\n"
		"Output: the generic tables (ops/s per thread); counters alloc_enomem,\n"
		"isolate_ebusy, move_ebusy and move_enomem: failures the mix expects and counts.\n"
		"JSON adds working_set and limit_mib.",
	.opts = churn_opts,
	.params_size = sizeof(struct churn_params),
	.defaults = churn_defaults,
	.run = churn_run,
	.describe = churn_describe,
	.json_extra = churn_json_extra,
	.shared_defaults = churn_shared_defaults,
	.features = LVB_WL_SCALE,
};
