// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * replay - the host kernel's LRU events of a real program, recorded by
 * scripts/record-lru-trace.sh, replayed through lruvec (the format and how to record one's own
 * trace: docs/fidelity.md).
 *
 * Theory of operation.
 *
 * A trace is a header and fixed-size records, each one event of one folio on one CPU in one
 * memcg: inserted on an LRU list, activated, put back after an isolation (the kernel traces a
 * putback as another insertion of a folio already on the LRU), or freed. The recorder names
 * folios by slots, small integers it reuses once a folio is freed, so that the replay finds a
 * folio in a flat table instead of hashing pfns.
 *
 * The whole file is read and checked before any machine is built: a trace that is truncated
 * or corrupt is refused with the offset of the first bad byte and the reason. Each traced CPU
 * that has events becomes one thread, which applies that CPU's events in the trace's order; when
 * the trace has more such CPUs than this machine has CPU slots, CPUs share threads round-robin
 * (their events merged in the trace's order), and the run says so. Each traced memcg is a
 * container. A thread that reaches the end of its events starts over, so a round lasts
 * --duration like every workload's; folios the trace never frees stay in the table across the
 * passes, and inserting one again is replayed as a putback.
 *
 * The table holds one reference on each live folio. Threads race on slots as the kernel's CPUs
 * race on folios: an insertion publishes its folio with a compare-and-swap (losing means
 * another CPU's insertion of the same slot won, and the loser's folio is put), a free takes the
 * folio out with an exchange and drops the table's reference, and every other event takes a
 * reference of its own with lv_folio_try_get() first, since a free on another thread may drop
 * the table's at any time. An event whose folio is not there (a CPU ran ahead of the one that
 * inserts it) is counted and skipped.
 */
#define _GNU_SOURCE
#include "lvbench.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define RP_MAGIC       "LVTRACE"
#define RP_VERSION     1u
#define RP_HEADER_SIZE 32u
#define RP_RECORD_SIZE 16u
#define RP_MAX_SLOTS   (1u << 26)
#define RP_STEP_EVENTS 256u /* events per harness step */
#define RP_SLACK_MIB   64u  /* watermarks and batches beside the trace's folios */

/* Event types, as the recorder writes them. */
enum rp_type {
	RP_INSERT = 1,	 /* mm_lru_insertion of a folio not on the LRU: lv_folio_add_lru() */
	RP_ACTIVATE = 2, /* mm_lru_activate: lv_folio_activate() */
	RP_PUTBACK = 3,	 /* another mm_lru_insertion: lv_folio_isolate_lru(), _putback_lru() */
	RP_FREE = 4,	 /* mm_page_free of a traced folio: the table's lv_folio_put() */
};

/* The info byte of a record. */
#define RP_INFO_ORDER  0x0fu /* order of an insertion */
#define RP_INFO_ANON   0x10u /* anon: the anon lists */
#define RP_INFO_ACTIVE 0x20u /* inserted on an active list */
#define RP_INFO_KNOWN  (RP_INFO_ORDER | RP_INFO_ANON | RP_INFO_ACTIVE)

/* One event as a thread replays it: what a record says but the CPU and the pid. */
struct rp_event {
	uint32_t slot;
	uint16_t memcg;
	uint8_t type, info;
};

struct rp_params {
	const char *file; /* --trace, or the bare argument */
	/* Filled in by rp_prepare(): the trace, read and checked. */
	uint32_t nr_cpus, nr_memcgs, nr_slots;
	uint64_t nr_events;
	uint64_t pages;		 /* the largest insertion of each slot, summed */
	unsigned int nr_active;	 /* traced CPUs with events */
	uint32_t *cpu_events;	 /* [nr_cpus] */
	unsigned char *raw;	 /* the file, until rp_split() */
	struct rp_event *events; /* [nr_events], grouped by thread */
	uint64_t *thread_first;	 /* [threads + 1]: thread t's events start at [t] */
};

#define RP(field) offsetof(struct rp_params, field)

static const struct lvb_opt rp_opts[] = {
	{ "trace", LVB_OPT_STRING, RP(file), 0, 0, NULL, "FILE",
	  "the trace to replay (also the bare argument: lvbench replay\n"
	  "FILE); gzip-compressed traces must be decompressed first",
	  NULL },
	{ 0 }
};

static void rp_defaults(void *params)
{
	*(struct rp_params *)params = (struct rp_params){ 0 };
}

static uint16_t get16(const unsigned char *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)get16(p) | (uint32_t)get16(p + 2) << 16;
}

static uint64_t get64(const unsigned char *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

/* rp_bad - refuse the trace: "FILE: offset N: reason". Return: -1. */
static int rp_bad(const struct rp_params *p, uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int rp_bad(const struct rp_params *p, uint64_t offset, const char *fmt, ...)
{
	char why[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return lvb_usage_error("replay: %s: offset %" PRIu64 ": %s", p->file, offset, why);
}

/* rp_read - the whole of @p->file into *@buf (malloc'ed), its size in *@size. 0 or -1. */
static int rp_read(const struct rp_params *p, unsigned char **buf, uint64_t *size)
{
	FILE *f = fopen(p->file, "rb");
	size_t cap = 1 << 20, n = 0, got;
	unsigned char *b = NULL, *nb;

	if (!f)
		return lvb_usage_error("replay: cannot open '%s': %s", p->file, strerror(errno));
	do {
		if (n == cap || !b) {
			cap = b ? cap * 2 : cap;
			nb = realloc(b, cap);
			if (!nb) {
				free(b);
				fclose(f);
				return lvb_usage_error("replay: %s: out of memory", p->file);
			}
			b = nb;
		}
		got = fread(b + n, 1, cap - n, f);
		n += got;
	} while (got);
	if (ferror(f)) {
		int err = errno;

		free(b);
		fclose(f);
		return lvb_usage_error("replay: cannot read '%s': %s", p->file, strerror(err));
	}
	fclose(f);
	*buf = b;
	*size = n;
	return 0;
}

/* rp_check_header - the header's fields, each refused at its own offset. 0 or -1. */
static int rp_check_header(struct rp_params *p, const unsigned char *b, uint64_t size)
{
	uint64_t want;

	if (size >= 2 && b[0] == 0x1f && b[1] == 0x8b)
		return rp_bad(p, 0, "gzip-compressed; decompress it first (gzip -dc)");
	if (size < RP_HEADER_SIZE)
		return rp_bad(p, size, "truncated header (%" PRIu64 " of %u bytes)", size,
			      RP_HEADER_SIZE);
	if (memcmp(b, RP_MAGIC, sizeof(RP_MAGIC)))
		return rp_bad(p, 0, "not an LRU trace (no \"%s\" magic)", RP_MAGIC);
	if (get32(b + 8) != RP_VERSION)
		return rp_bad(p, 8, "version %" PRIu32 ", this lvbench reads version %u",
			      get32(b + 8), RP_VERSION);
	p->nr_cpus = get32(b + 12);
	p->nr_memcgs = get32(b + 16);
	p->nr_slots = get32(b + 20);
	p->nr_events = get64(b + 24);
	if (!p->nr_cpus || p->nr_cpus > 65535)
		return rp_bad(p, 12, "%" PRIu32 " CPUs (1..65535)", p->nr_cpus);
	if (!p->nr_memcgs || p->nr_memcgs > LVB_MAX_CONTAINERS)
		return rp_bad(p, 16, "%" PRIu32 " memcgs (1..%u)", p->nr_memcgs,
			      LVB_MAX_CONTAINERS);
	if (!p->nr_slots || p->nr_slots > RP_MAX_SLOTS)
		return rp_bad(p, 20, "%" PRIu32 " folio slots (1..%u)", p->nr_slots, RP_MAX_SLOTS);
	if (!p->nr_events)
		return rp_bad(p, 24, "no events");
	want = RP_HEADER_SIZE + p->nr_events * RP_RECORD_SIZE;
	if (p->nr_events > (UINT64_MAX - RP_HEADER_SIZE) / RP_RECORD_SIZE || size < want) {
		uint64_t whole = (size - RP_HEADER_SIZE) / RP_RECORD_SIZE;

		return rp_bad(p, RP_HEADER_SIZE + whole * RP_RECORD_SIZE,
			      "truncated: record %" PRIu64 " of %" PRIu64 " has %" PRIu64
			      " of %u bytes",
			      whole, p->nr_events, (size - RP_HEADER_SIZE) % RP_RECORD_SIZE,
			      RP_RECORD_SIZE);
	}
	if (size > want)
		return rp_bad(p, want, "%" PRIu64 " bytes after the last of %" PRIu64 " records",
			      size - want, p->nr_events);
	return 0;
}

/* rp_check_record - record @i at @r. 0 or -1. */
static int rp_check_record(const struct rp_params *p, const unsigned char *r, uint64_t i)
{
	uint64_t off = RP_HEADER_SIZE + i * RP_RECORD_SIZE;

	if (r[0] < RP_INSERT || r[0] > RP_FREE)
		return rp_bad(p, off, "record %" PRIu64 ": unknown event type %u", i, r[0]);
	if (r[1] & ~RP_INFO_KNOWN)
		return rp_bad(p, off + 1, "record %" PRIu64 ": unknown info bits 0x%02x", i,
			      r[1] & ~RP_INFO_KNOWN);
	if ((r[1] & RP_INFO_ORDER) > LV_MAX_ORDER)
		return rp_bad(p, off + 1, "record %" PRIu64 ": order %u above %u", i,
			      r[1] & RP_INFO_ORDER, LV_MAX_ORDER);
	if (get16(r + 2) >= p->nr_cpus)
		return rp_bad(p, off + 2, "record %" PRIu64 ": CPU %u of a %" PRIu32 "-CPU trace",
			      i, get16(r + 2), p->nr_cpus);
	if (get16(r + 4) >= p->nr_memcgs)
		return rp_bad(p, off + 4, "record %" PRIu64 ": memcg %u of %" PRIu32, i,
			      get16(r + 4), p->nr_memcgs);
	if (get16(r + 6))
		return rp_bad(p, off + 6, "record %" PRIu64 ": reserved field is %u, not 0", i,
			      get16(r + 6));
	if (get32(r + 12) >= p->nr_slots)
		return rp_bad(p, off + 12, "record %" PRIu64 ": slot %" PRIu32 " of %" PRIu32, i,
			      get32(r + 12), p->nr_slots);
	return 0;
}

/*
 * rp_load - read and check the whole trace, keeping it in @p->raw; count the pages of its
 * folios and the CPUs that have events. 0 or -1.
 */
static int rp_load(struct rp_params *p)
{
	unsigned char *order_seen;
	uint64_t size = 0;

	if (rp_read(p, &p->raw, &size))
		return -1;
	if (rp_check_header(p, p->raw, size))
		return -1;
	for (uint64_t i = 0; i < p->nr_events; i++)
		if (rp_check_record(p, p->raw + RP_HEADER_SIZE + i * RP_RECORD_SIZE, i))
			return -1;
	p->cpu_events = calloc(p->nr_cpus, sizeof(*p->cpu_events));
	order_seen = calloc(p->nr_slots, 1); /* order + 1 of the slot's largest insertion */
	if (!p->cpu_events || !order_seen) {
		free(order_seen);
		return lvb_usage_error("replay: %s: out of memory", p->file);
	}
	for (uint64_t i = 0; i < p->nr_events; i++) {
		const unsigned char *r = p->raw + RP_HEADER_SIZE + i * RP_RECORD_SIZE;
		unsigned int order = r[1] & RP_INFO_ORDER, seen = order_seen[get32(r + 12)];

		if (!p->cpu_events[get16(r + 2)]++)
			p->nr_active++;
		if (r[0] == RP_INSERT && order + 1 > seen) {
			p->pages += (1ull << order) - (seen ? 1ull << (seen - 1) : 0);
			order_seen[get32(r + 12)] = (unsigned char)(order + 1);
		}
	}
	free(order_seen);
	return 0;
}

/*
 * rp_split - the events of the trace in @p->raw by thread, @threads of them: the n-th traced
 * CPU that has events on thread n % @threads, its events in the trace's order. 0 or -1.
 */
static int rp_split(struct rp_params *p, unsigned int threads)
{
	uint32_t *thread_of = calloc(p->nr_cpus, sizeof(*thread_of));
	uint64_t *next = calloc(threads, sizeof(*next));
	unsigned int rank = 0;

	p->events = malloc(p->nr_events * sizeof(*p->events));
	p->thread_first = calloc(threads + 1, sizeof(*p->thread_first));
	if (!thread_of || !next || !p->events || !p->thread_first) {
		free(next);
		free(thread_of);
		return lvb_usage_error("replay: %s: out of memory", p->file);
	}
	for (uint32_t c = 0; c < p->nr_cpus; c++)
		if (p->cpu_events[c]) {
			thread_of[c] = rank++ % threads;
			p->thread_first[thread_of[c] + 1] += p->cpu_events[c];
		}
	for (unsigned int t = 0; t < threads; t++) {
		p->thread_first[t + 1] += p->thread_first[t];
		next[t] = p->thread_first[t];
	}
	for (uint64_t i = 0; i < p->nr_events; i++) {
		const unsigned char *r = p->raw + RP_HEADER_SIZE + i * RP_RECORD_SIZE;

		p->events[next[thread_of[get16(r + 2)]]++] = (struct rp_event){
			.slot = get32(r + 12),
			.memcg = get16(r + 4),
			.type = r[0],
			.info = r[1],
		};
	}
	free(next);
	free(thread_of);
	free(p->raw);
	p->raw = NULL;
	return 0;
}

static int rp_prepare(struct lvb_common *opt, void *params)
{
	struct rp_params *p = params;
	unsigned int slots = lvb_online_cpus();
	uint64_t need;

	if (!p->file)
		return lvb_usage_error("replay: no trace (lvbench replay FILE)");
	if (opt->nodes != 1)
		return lvb_usage_error("replay: option '--nodes' does not apply (the trace's "
				       "folios are on one node)");
	if (rp_load(p))
		return -1;
	if (opt->threads == LVB_UNSET)
		opt->threads = p->nr_active < slots ? p->nr_active : slots;
	else if (opt->threads > p->nr_active)
		return lvb_usage_error("replay: --threads %u: the trace has events on %u CPU%s "
				       "only",
				       opt->threads, p->nr_active, lvb_plural(p->nr_active));
	if (rp_split(p, opt->threads))
		return -1;
	if (p->nr_active > opt->threads)
		fprintf(stderr,
			"lvbench: replay: the trace has events on %u CPUs, replayed on %u "
			"thread%s: CPUs mapped round-robin (the n-th such CPU on thread n %% %u)\n",
			p->nr_active, opt->threads, lvb_plural(opt->threads), opt->threads);
	if (opt->containers == LVB_UNSET)
		opt->containers = p->nr_memcgs;
	if (opt->duration == 0)
		opt->duration = opt->compare ? 1.0 : 2.0;
	if (opt->rounds == LVB_UNSET)
		opt->rounds = opt->compare ? 3 : 1;
	/* Every slot's largest folio may be live at once, and held by the table. */
	need = (p->pages * LV_PAGE_SIZE >> 20) + RP_SLACK_MIB;
	if (need > 65536)
		return lvb_usage_error("replay: %s: the trace's folios need %" PRIu64 " MiB, above "
				       "the 64 GiB --memory allows",
				       p->file, need);
	if (opt->memory_mib == LVB_UNSET)
		opt->memory_mib = (unsigned int)((need + 63) / 64 * 64);
	else if (opt->memory_mib < need)
		return lvb_usage_error("--memory: %u MiB is too little for the trace's folios "
				       "(at least %" PRIu64 " MiB with %u MiB of slack)",
				       opt->memory_mib, need, RP_SLACK_MIB);
	return 0;
}

/* ---- the threads ----------------------------------------------------------------------------- */

enum rp_counter {
	RP_MISSED, /* events whose folio was not in the table (its CPU ran ahead) */
	RP_BUSY,   /* putbacks whose isolation failed: the folio was in a batch */
	RP_ENOMEM, /* insertions whose allocation failed */
	RP_PASSES, /* a thread replayed all its events and started over */
	RP_NR_COUNTERS
};

static const char *const rp_counter_names[RP_NR_COUNTERS] = {
	[RP_MISSED] = "folio not there",
	[RP_BUSY] = "putback of queued",
	[RP_ENOMEM] = "insert without memory",
	[RP_PASSES] = "passes over the trace",
};

struct rp_table {
	struct lv_folio **slot; /* [nr_slots]: atomic; a reference each */
	uint32_t nr_slots;
};

struct rp_thread {
	const struct rp_event *ev, *end, *pos;
	struct rp_table *table;
} __attribute__((aligned(64)));

static struct lv_folio *rp_get(struct lv_folio **slot)
{
	struct lv_folio *f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);

	return f && lv_folio_try_get(f) ? f : NULL;
}

static void rp_putback(struct lvb_worker *w, struct lv_folio **slot)
{
	struct lv_folio *f = rp_get(slot);

	if (!f) {
		w->counters[RP_MISSED]++;
		return;
	}
	/* Isolators drain this CPU's batches first, as the kernel's do, then try once more. */
	if (lv_folio_isolate_lru(f)) {
		lv_lru_add_drain(w->env->m);
		if (lv_folio_isolate_lru(f)) {
			w->counters[RP_BUSY]++;
			lv_folio_put(f);
			return;
		}
	}
	if (lv_folio_putback_lru(f))
		lvb_worker_error(w, "lv_folio_putback_lru", EINVAL);
	lv_folio_put(f);
}

static void rp_insert(struct lvb_worker *w, const struct rp_event *e, struct lv_folio **slot)
{
	struct lv_folio *f, *none = NULL;

	if (__atomic_load_n(slot, __ATOMIC_ACQUIRE)) {
		rp_putback(w, slot);
		return;
	}
	f = lv_folio_alloc(w->env->m, 0, e->info & RP_INFO_ORDER,
			   w->env->memcgs[e->memcg % w->env->nr_memcgs],
			   e->info & RP_INFO_ANON ? LV_FOLIO_ANON : 0);
	if (!f) {
		if (errno == ENOMEM)
			w->counters[RP_ENOMEM]++;
		else
			lvb_worker_error(w, "lv_folio_alloc", errno);
		return;
	}
	if (lv_folio_add_lru(f)) {
		lvb_worker_error(w, "lv_folio_add_lru", EINVAL);
		lv_folio_put(f);
		return;
	}
	/* The kernel inserts a refaulting workingset folio on the active list. */
	if (e->info & RP_INFO_ACTIVE) {
		lv_folio_mark_accessed(f);
		lv_folio_mark_accessed(f);
	}
	if (!__atomic_compare_exchange_n(slot, &none, f, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		lv_folio_put(f);
}

/*
 * rp_activate - the activation the kernel traced. It traces one only when it moves a folio that
 * is on a list; here the folio may still wait in this CPU's lru_add batch, where only
 * lv_folio_mark_accessed() reaches it (twice: the second access activates).
 */
static void rp_activate(struct lv_folio *f)
{
	if (lv_folio_test(f, LV_PG_LRU)) {
		lv_folio_activate(f);
		return;
	}
	lv_folio_mark_accessed(f);
	lv_folio_mark_accessed(f);
}

static void rp_step(struct lvb_worker *w)
{
	struct rp_thread *rt = w->priv;
	struct lv_folio **table = rt->table->slot, *f;

	if (w->nr_errors)
		return;
	for (unsigned int n = 0; n < RP_STEP_EVENTS; n++) {
		const struct rp_event *e = rt->pos;

		switch (e->type) {
		case RP_INSERT:
			rp_insert(w, e, &table[e->slot]);
			break;
		case RP_ACTIVATE:
			f = rp_get(&table[e->slot]);
			if (f) {
				rp_activate(f);
				lv_folio_put(f);
			} else {
				w->counters[RP_MISSED]++;
			}
			break;
		case RP_PUTBACK:
			rp_putback(w, &table[e->slot]);
			break;
		case RP_FREE:
			f = __atomic_exchange_n(&table[e->slot], NULL, __ATOMIC_ACQ_REL);
			if (f)
				lv_folio_put(f);
			else
				w->counters[RP_MISSED]++;
			break;
		}
		if (++rt->pos == rt->end) {
			rt->pos = rt->ev;
			w->counters[RP_PASSES]++;
		}
	}
	w->ops += RP_STEP_EVENTS;
	w->amount += RP_STEP_EVENTS;
}

/* Each thread puts its share of the table: slots i with i % threads == id. */
static void rp_release(struct lvb_worker *w)
{
	struct rp_thread *rt = w->priv;
	unsigned int n = w->env->opt->threads;

	for (uint32_t i = w->id; i < rt->table->nr_slots; i += n) {
		struct lv_folio *f =
			__atomic_exchange_n(&rt->table->slot[i], NULL, __ATOMIC_ACQ_REL);

		if (f)
			lv_folio_put(f);
	}
}

static const struct lvb_thread_ops rp_thread_ops = {
	.step = rp_step,
	.release = rp_release,
	.counter_names = rp_counter_names,
	.nr_counters = RP_NR_COUNTERS,
};

static int rp_run(const struct lvb_common *opt, const void *params, enum lv_lock_design design,
		  struct lvb_result *res)
{
	const struct rp_params *p = params;
	unsigned int n = opt->threads;
	struct rp_table table = { .nr_slots = p->nr_slots };
	struct lvb_worker *workers;
	struct rp_thread *threads;
	struct lvb_env env;
	int err;

	err = lvb_env_create(&env, opt, design, 0);
	if (err)
		return err;
	err = -ENOMEM;
	workers = lvb_zalloc(n * sizeof(*workers));
	threads = lvb_zalloc(n * sizeof(*threads));
	table.slot = calloc(p->nr_slots, sizeof(*table.slot));
	if (workers && threads && table.slot) {
		for (unsigned int t = 0; t < n; t++) {
			threads[t] = (struct rp_thread){
				.ev = p->events + p->thread_first[t],
				.end = p->events + p->thread_first[t + 1],
				.pos = p->events + p->thread_first[t],
				.table = &table,
			};
			workers[t].priv = &threads[t];
		}
		err = lvb_run_threads(&env, workers, &rp_thread_ops, res);
	}
	free(table.slot);
	free(threads);
	free(workers);
	res->failures += lvb_env_destroy(&env);
	return err;
}

/* ---- output ---------------------------------------------------------------------------------- */

static void rp_describe(FILE *out, const struct lvb_common *opt, const void *params)
{
	const struct rp_params *p = params;

	fprintf(out,
		"replay: %s: %" PRIu64 " events of %" PRIu32 " folio slots (%" PRIu64
		" MiB at most), %u traced CPU%s on %u thread%s, %" PRIu32 " memcg%s\n",
		p->file, p->nr_events, p->nr_slots, p->pages * LV_PAGE_SIZE >> 20, p->nr_active,
		lvb_plural(p->nr_active), opt->threads, lvb_plural(opt->threads), p->nr_memcgs,
		lvb_plural(p->nr_memcgs));
}

static void rp_print_extra(FILE *out, const struct lvb_common *opt, const void *params,
			   const struct lvb_series *s, unsigned int n, const struct lvb_ceiling *c)
{
	(void)c;
	fputc('\n', out);
	rp_describe(out, opt, params);
	for (unsigned int d = 0; d < n; d++)
		fprintf(out,
			"%s: %.0f events/s per thread; %" PRIu64 " passes, %" PRIu64
			" events whose folio was not there, %" PRIu64
			" putbacks of queued folios\n",
			s[d].column ? s[d].column : lvb_lock_names[s[d].design],
			lvb_series_rate(&s[d]) / opt->threads, s[d].counters[RP_PASSES],
			s[d].counters[RP_MISSED], s[d].counters[RP_BUSY]);
}

static void rp_json_extra(FILE *out, bool *first, const struct lvb_common *opt, const void *params,
			  const struct lvb_series *s, const struct lvb_ceiling *c)
{
	const struct rp_params *p = params;

	(void)opt;
	(void)c;
	lvb_json_str(out, first, "trace", p->file);
	lvb_json_u64(out, first, "trace_events", p->nr_events);
	lvb_json_u64(out, first, "trace_cpus", p->nr_active);
	lvb_json_u64(out, first, "trace_memcgs", p->nr_memcgs);
	lvb_json_u64(out, first, "trace_slots", p->nr_slots);
	lvb_json_u64(out, first, "passes", s->counters[RP_PASSES]);
	lvb_json_u64(out, first, "missed", s->counters[RP_MISSED]);
	lvb_json_u64(out, first, "putback_busy", s->counters[RP_BUSY]);
	lvb_json_u64(out, first, "insert_enomem", s->counters[RP_ENOMEM]);
}

static const struct lvb_rate rp_rate = {
	.unit = "events/s",
	.per = "thread",
	.scale = 1,
	.json_prefix = "events_per_s",
};

static const struct lvb_default rp_shared_defaults[] = {
	{ "containers", "the trace's memcgs (memcg i in container i % N)", false },
	{ "threads", "the trace's CPUs with events, at most the online CPUs", false },
	{ "duration", "2 s; compare: 1 s", false },
	{ "rounds", "1; compare: 3", false },
	{ "memory", "the trace's folios, and 64 MiB", false },
	{ "nodes", "the trace's folios are on one node", true },
	{ "folio-order", "the trace gives each folio's order", true },
	{ "disable", "it never calls lv_lru_cache_disable", true },
	{ 0 }
};

const struct lvb_workload lvb_replay = {
	.name = "replay",
	.summary = "replay a host kernel LRU trace (scripts/record-lru-trace.sh)",
	.help = "replay: a trace of the host kernel's LRU events, recorded from a real program\n"
		"by scripts/record-lru-trace.sh, replayed through lruvec: each traced CPU a\n"
		"thread applying its events in the trace's order (CPUs share threads\n"
		"round-robin when the trace has more than this machine, and the run says so),\n"
		"each traced memcg a container. Insertion: lv_folio_alloc() of the traced order\n"
		"and lv_folio_add_lru(); activation: lv_folio_activate(); putback (another\n"
		"insertion of a folio on the LRU): lv_folio_isolate_lru() and\n"
		"lv_folio_putback_lru(); free: the last lv_folio_put(). A thread that reaches the\n"
		"end of its events starts over. A truncated or corrupt trace is refused with the\n"
		"offset of the first bad byte and the reason (exit 2). The machine keeps\n"
		"descriptors only. Output: events/s per thread (mmtests rows), the lock tables,\n"
		"passes and the events skipped because their folio was not there yet (a CPU ran\n"
		"ahead of the one that inserts it). JSON adds trace, trace_events, trace_cpus,\n"
		"trace_memcgs, trace_slots, passes, missed, putback_busy and insert_enomem.\n"
		"Traces of a build of lruvec with make -j2 and of readtwice with dd are in\n"
		"tests/data/ (gzip-compressed); the format and how to record one's own:\n"
		"docs/fidelity.md.",
	.shared_defaults = rp_shared_defaults,
	.opts = rp_opts,
	.positional = "trace",
	.params_size = sizeof(struct rp_params),
	.defaults = rp_defaults,
	.prepare = rp_prepare,
	.rate = &rp_rate,
	.run = rp_run,
	.print_extra = rp_print_extra,
	.describe = rp_describe,
	.json_extra = rp_json_extra,
	.compare_by = LVB_BY_LOCK,
};
