/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lvbench - declarations shared by the benchmark CLI's files.
 *
 * A workload (churn.c, readtwice.c, aim9.c, numa.c, compact.c, swap.c) is a &struct
 * lvb_workload: a name, its own options, and a run function that builds one machine for one lock
 * design, runs it and fills a &struct lvb_result. harness.c gives workloads the machine, the
 * containers and the threads; compare.c runs rounds of one or both designs (and sweeps over
 * container counts); scale.c makes a sweep of the cost per op and the memory per memcg;
 * report.c turns results into statistics, tables and JSON. Nothing here knows
 * about a particular workload: what differs (the unit of throughput, a ceiling, extra output) is
 * a hook of &struct lvb_workload.
 */
#ifndef LVBENCH_H
#define LVBENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lruvec.h"

#define LVB_EXIT_OK    0
#define LVB_EXIT_FAIL  1 /* the run failed: library error, lv_check violation, leak */
#define LVB_EXIT_USAGE 2 /* bad command line */

/* ---- options (main.c) ------------------------------------------------------------------------ */

enum lvb_opt_kind {
	LVB_OPT_FLAG,	/* bool, no value */
	LVB_OPT_UINT,	/* unsigned int within [min, max] */
	LVB_OPT_U64,	/* any uint64_t */
	LVB_OPT_DOUBLE, /* finite double within [min, max] */
	LVB_OPT_CHOICE, /* unsigned int: index into choices */
	LVB_OPT_SIZE,	/* uint64_t bytes within [min, max]; a bare number is bytes */
	LVB_OPT_MIB,	/* unsigned int MiB within [min, max]; a bare number is MiB */
	LVB_OPT_STRING, /* const char *, pointing into argv */
	LVB_OPT_LIST,	/* struct lvb_list: comma-separated unsigned ints within [min, max] */
};

#define LVB_MAX_LIST 32

/*
 * The library gives memcgs 16-bit ids, 65535 of them with the root's, so at most 65534
 * containers can exist beside the root. Threads have no limit in the library: lvbench allows
 * one per id (aim9 runs one thread per container); the system's limits (ulimit -u,
 * kernel.threads-max, vm.max_map_count for the stacks) usually bind first.
 */
#define LVB_MAX_CONTAINERS 65534u
#define LVB_MAX_THREADS	   65535u

struct lvb_list {
	unsigned int n;
	unsigned int v[LVB_MAX_LIST];
};

/**
 * struct lvb_opt - one long option. The value lives at @off in the struct the table belongs
 * to (&struct lvb_common for the shared table, the workload's params for its own).
 *
 * Sizes (LVB_OPT_SIZE, LVB_OPT_MIB) are digits with an optional K, M, G, T or P suffix,
 * powers of 1024 as truncate(1) reads them, the suffix optionally followed by "iB"; @min and
 * @max are in the option's unit (bytes, MiB). A suffixed MiB value that is not a whole number
 * of MiB is refused rather than rounded.
 */
struct lvb_opt {
	const char *name; /* without the leading "--" */
	enum lvb_opt_kind kind;
	size_t off;
	double min, max;
	const char *const *choices; /* NULL-terminated */
	const char *metavar;
	const char *help;
	const char *def; /* the default as the help shows it; NULL: the help says it */
};

/**
 * struct lvb_default - what a workload's long help says about a shared option: its default
 * in that workload, or why the option does not apply there.
 */
struct lvb_default {
	const char *name; /* a shared option, without the leading "--" */
	const char *text;
	bool not_applicable;
};

#define LVB_UNSET (~0u) /* an option that was not given and has a mode-dependent default */

/**
 * struct lvb_common - the options every workload shares. Fields that start LVB_UNSET (or 0 for
 * the duration) get the workload's defaults in its prepare hook, then the generic ones.
 */
struct lvb_common {
	unsigned int containers;
	unsigned int threads;
	double duration; /* seconds per round */
	unsigned int rounds;
	unsigned int lock;	   /* index into lvb_lock_names, or LVB_UNSET */
	unsigned int backend;	   /* index into lvb_backend_names */
	unsigned int disable;	   /* index into lvb_disable_names, or LVB_UNSET */
	unsigned int batch;	   /* LVB_UNSET: LV_MAX_BATCH */
	unsigned int scan_cost;	   /* index into lvb_scan_cost_names, or LVB_UNSET */
	unsigned int batch_large;  /* index into lvb_on_off_names, or LVB_UNSET */
	unsigned int lock_sites;   /* index into lvb_on_off_names, or LVB_UNSET (on) */
	unsigned int batch_policy; /* enum lv_batch_policy, or LVB_UNSET (arrival) */
	unsigned int folio_order;  /* page cache folios of 2^N pages; LVB_UNSET: the workload's */
	unsigned int nodes;
	unsigned int memory_mib; /* per node */
	uint64_t seed;
	bool json;
	bool help;
	/* compare and scale only */
	struct lvb_list sweep; /* container counts; n == 0: no sweep */
	const char *plot;      /* SVG file for the sweep, or NULL */
	bool compare;	       /* set by main: lvbench compare */
	bool scale;	       /* set by main: lvbench scale */
	unsigned int by;       /* enum lvb_by: what compare compares (and names the columns) */
};

/* lvb_knob - the unsigned int field of @opt at @off (an &struct lvb_by_kind's). */
static inline unsigned int *lvb_knob(struct lvb_common *opt, size_t off)
{
	return (unsigned int *)((char *)opt + off);
}

extern const char *const lvb_lock_names[];	/* "lruvec", "node": enum lv_lock_design order */
extern const char *const lvb_backend_names[];	/* "futex", "mutex", "spin" */
extern const char *const lvb_disable_names[];	/* "sweep", "rcu": enum lv_disable_mode order */
extern const char *const lvb_scan_cost_names[]; /* "locked", "vmstat": enum lv_scan_cost order */
extern const char *const lvb_on_off_names[];	/* "off", "on": false, true */
extern const char *const lvb_by_names[];	/* the --by values: enum lvb_by order */
/* "arrival", "sorted", "per-lruvec": enum lv_batch_policy order */
extern const char *const lvb_batch_policy_names[];

/**
 * enum lvb_by - what the columns of compare are: one knob of &struct lvb_common, set to a
 * different value in each column (&struct lvb_by_kind, lvb_by_kinds[]).
 */
enum lvb_by {
	LVB_BY_LOCK = 0,	 /* node vs lruvec lru_lock, in the --disable mode */
	LVB_BY_DISABLE = 1,	 /* rcu vs sweep lru_cache_disable, in the --lock design */
	LVB_BY_COST = 2,	 /* locked vs vmstat scan cost, in the --lock design */
	LVB_BY_BATCH = 3,	 /* batches of 15 vs 31 folios */
	LVB_BY_BATCH_LARGE = 4,	 /* large folios in the batches (<= 6.16) vs never (6.17) */
	LVB_BY_FOLIO_ORDER = 5,	 /* page cache folios of 1, 4, 16 pages */
	LVB_BY_LOCK_SITES = 6,	 /* contention by call site off vs on: what recording costs */
	LVB_BY_BATCH_POLICY = 7, /* batches in arrival order, sorted by lruvec, per lruvec */
	LVB_NR_BY
};

#define LVB_MAX_VARIANTS 4 /* columns of compare */

/* What a workload does, for the options and --by values that only some workloads honour. */
#define LVB_WL_DISABLE	   0x1u /* it calls lv_lru_cache_disable: --disable, --by disable */
#define LVB_WL_FOLIO_ORDER 0x2u /* its page cache honours --folio-order */
/* Its rounds and reports follow a column's folio order: compare --by folio-order applies. */
#define LVB_WL_BY_FOLIO_ORDER 0x4u
/* It keeps --threads at any --containers, every container active: lvbench scale applies. */
#define LVB_WL_SCALE 0x8u

/**
 * struct lvb_by_kind - one --by value: the &struct lvb_common field its columns set (an
 * unsigned int, LVB_UNSET when the option was not given), and each column's value and name.
 * Adding a --by value is one entry in lvb_by_kinds[] (main.c) and its enum lvb_by constant.
 */
struct lvb_by_kind {
	const char *name;   /* the --by value */
	const char *option; /* the common option the columns set, without "--" */
	size_t off;	    /* of that option's field in &struct lvb_common */
	const char *what;   /* the header: "<col> vs <col> <what>" */
	const char *noun;   /* a column is one "<noun>": design, mode, setting */
	unsigned int needs; /* LVB_WL_* the workload must have; 0: every workload */
	unsigned int nr;    /* columns, 2..LVB_MAX_VARIANTS */
	unsigned int value[LVB_MAX_VARIANTS];
	const char *column[LVB_MAX_VARIANTS]; /* the column names, also JSON's "column" */
	const char *legend[LVB_MAX_VARIANTS]; /* the sweep plot's; NULL: the column name */
};

extern const struct lvb_by_kind lvb_by_kinds[LVB_NR_BY];

/**
 * struct lvb_variant - one column of compare: the knob of --by @by set to @value in a copy of
 * the command line's options (lvb_variant_apply()), and the column's name.
 */
struct lvb_variant {
	enum lvb_by by;
	unsigned int value; /* LVB_UNSET: the command line's (a run without compare) */
	const char *name;   /* "node", "lruvec", "rcu", "sweep", "batch-15", ... */
};

/* lvb_variant_apply - @base with @v's knob set, the lock design resolved, into @o. */
enum lv_lock_design lvb_variant_apply(const struct lvb_variant *v, const struct lvb_common *base,
				      struct lvb_common *o);

/* ---- results --------------------------------------------------------------------------------- */

#define LVB_MAX_COUNTERS 12
#define LVB_NR_LRU	 (LV_NR_UNEVICTABLE + 1) /* the lists, LV_NR_INACTIVE_ANON first */

/** struct lvb_result - what one round of one design produced. */
struct lvb_result {
	enum lv_lock_design design;
	enum lv_disable_mode disable;
	/* Every lv_lru_cache_disable() during the run (max: since the machine was created). */
	struct lv_latency disable_latency;
	unsigned int nr_threads;
	double elapsed;		 /* seconds between the start and the stop of the threads */
	uint64_t *thread_ops;	 /* [nr_threads], owned by the result */
	uint64_t *thread_amount; /* [nr_threads]: the workload's &struct lvb_rate amount */
	struct lv_lock_stat locks[LV_NR_LOCK_CLASSES];
	struct lv_lock_site_stat *sites; /* [nr_sites], most wait first; owned by the result */
	size_t nr_sites;
	uint64_t vmstat[LV_NR_STAT_ITEMS]; /* events during the run, summed over nodes */
	uint64_t lru[LVB_NR_LRU];	   /* list sizes in pages at the quiescent point */
	uint64_t drain_calls, drain_sweeps;
	struct lv_batch_stat batch; /* the batch flushes of the run (lv_batch_stats()) */
	/* Workload-specific event counts (failed allocations, lost pins, ...). */
	unsigned int nr_counters;
	const char *counter_names[LVB_MAX_COUNTERS];
	uint64_t counters[LVB_MAX_COUNTERS];
	unsigned int failures; /* each one already described on stderr */
	/* /proc/self/status at the quiescent point, KiB (0 if unreadable) */
	uint64_t vm_rss_kib, vm_hwm_kib;
	/*
	 * Optional: the workload's own samples (aim9: the ops/s of every iteration of every
	 * container), used instead of the per-thread rates; malloc'ed, freed with the result.
	 * With @sample_group, they come in groups of that many (one container's iterations), and
	 * the statistics are computed per group and averaged over the groups (lvb_series_stats).
	 */
	double *samples;
	size_t nr_samples;
	unsigned int sample_group;
	const char *label; /* the name in the rows of the table; NULL: the workload's */
};

void lvb_result_free(struct lvb_result *res);

/**
 * struct lvb_series - every round of one design, merged: the samples are the rates (ops/s, or
 * the workload's unit) of every thread of every round.
 */
struct lvb_series {
	enum lv_lock_design design;
	enum lv_disable_mode disable;
	const char *column;		   /* the column's name: &struct lvb_variant name */
	struct lv_latency disable_latency; /* merged over the rounds */
	unsigned int rounds;
	double *samples; /* per-thread rate */
	size_t nr_samples;
	double *round_rate; /* [rounds]: total rate of each round */
	double *round_ops;  /* [rounds]: ops of all threads per second in each round */
	uint64_t ops;
	double units; /* the workload's amount in its unit (MB), or ops */
	double elapsed;
	struct lv_lock_stat locks[LV_NR_LOCK_CLASSES];
	/* Merged over the rounds by (caller, class), most wait first; owned by the series. */
	struct lv_lock_site_stat *sites;
	size_t nr_sites;
	bool no_sites; /* the column ran with --lock-sites off: nothing was recorded */
	uint64_t vmstat[LV_NR_STAT_ITEMS];
	uint64_t lru[LVB_NR_LRU]; /* the last round's */
	uint64_t drain_calls, drain_sweeps;
	struct lv_batch_stat batch; /* summed over the rounds */
	unsigned int nr_counters;
	const char *counter_names[LVB_MAX_COUNTERS];
	uint64_t counters[LVB_MAX_COUNTERS];
	unsigned int failures;
	uint64_t vm_rss_kib, vm_hwm_kib; /* the largest of the rounds */
	unsigned int sample_group;	 /* see &struct lvb_result; 0: one pool of samples */
	const char *label;
};

struct lvb_workload;

int lvb_series_add(struct lvb_series *s, const struct lvb_workload *wl,
		   const struct lvb_result *res);
void lvb_series_free(struct lvb_series *s);
double lvb_series_rate(const struct lvb_series *s); /* all threads, per second */

/* ---- workloads ------------------------------------------------------------------------------- */

/**
 * struct lvb_rate - how a workload measures throughput when it is not library calls per
 * second: each thread adds to lvb_worker.amount (bytes, say), and a sample is
 * amount * @scale / elapsed in @unit per @per.
 */
struct lvb_rate {
	const char *unit;	 /* "MB/s" */
	const char *per;	 /* "reader" */
	double scale;		 /* units per amount: 1e-6 MB per byte */
	const char *json_prefix; /* "mb_per_s": keys <prefix>_<per>_mean, <prefix>_total */
	const char *thread_noun; /* what the header calls the threads when not all are @per;
				    NULL: @per */
};

/**
 * struct lvb_ceiling - the same threads doing only the memory work of the workload, without the
 * library: what the machine could do at best. @total in the unit of the workload's rate.
 */
struct lvb_ceiling {
	bool valid;
	unsigned int threads;
	double total;		 /* the mean of the rounds' totals */
	const char *what;	 /* one line: what a ceiling thread does */
	double zeroes_per_frame; /* readtwice, readonce: memsets per frame reached (1: each once) */
	/* The ceiling runs once per round, before the round's designs: its spread over them. */
	unsigned int rounds;
	double min, max, coeffvar; /* of the rounds' totals; coeffvar in percent */
	double sum, sumsq;	   /* of the rounds' totals, for the mean and coeffvar */
};

struct lvb_workload {
	const char *name;
	const char *summary; /* one line for the command list */
	/* The long help: what it models and how it deviates from the original, the output, the
	 * published numbers it is set beside. */
	const char *help;
	const struct lvb_opt *opts; /* its own options, ended by a zero entry; may be NULL */
	const char *positional;	    /* the option of @opts a bare argument sets; NULL: none */
	/* The shared options whose default differs here or that do not apply; ended by {0}. */
	const struct lvb_default *shared_defaults;
	size_t params_size;
	void (*defaults)(void *params);
	/*
	 * Optional: fill the common options still unset with this workload's defaults (they
	 * may depend on opt->compare) and check the options. Return 0, or -1 after
	 * lvb_usage_error().
	 */
	int (*prepare)(struct lvb_common *opt, void *params);
	/* Optional: the length of one round in seconds, when it is not opt->duration. */
	double (*round_seconds)(const struct lvb_common *opt, const void *params);
	/* Optional: the thread count @opt implies (a sweep changes opt->containers). */
	unsigned int (*nr_threads)(const struct lvb_common *opt, const void *params);
	const struct lvb_rate *rate; /* NULL: ops/s per thread */
	/* Run one round of @design into @res (zeroed by the caller). Return 0 or -errno. */
	int (*run)(const struct lvb_common *opt, const void *params, enum lv_lock_design design,
		   struct lvb_result *res);
	/* Optional: measure the ceiling for @opt (same threads, same duration). 0 or -errno. */
	int (*ceiling)(const struct lvb_common *opt, const void *params, struct lvb_ceiling *c);
	/* Optional: human output after the tables (summary lines, published numbers). */
	void (*print_extra)(FILE *out, const struct lvb_common *opt, const void *params,
			    const struct lvb_series *s, unsigned int n,
			    const struct lvb_ceiling *c);
	/* Optional: the workload's own settings in one line (the header of a sweep). */
	void (*describe)(FILE *out, const struct lvb_common *opt, const void *params);
	/* Optional: more keys of the JSON object of one design (with lvb_json_*()). */
	void (*json_extra)(FILE *out, bool *first, const struct lvb_common *opt, const void *params,
			   const struct lvb_series *s, const struct lvb_ceiling *c);
	enum lvb_by compare_by;	    /* compare's default --by, and what names a column */
	unsigned int features;	    /* LVB_WL_*: what the workload does */
	unsigned int default_nodes; /* the default of --nodes; 0: 1 */
};

extern const struct lvb_workload lvb_churn;
extern const struct lvb_workload lvb_readtwice;
extern const struct lvb_workload lvb_readonce;
extern const struct lvb_workload lvb_numa;
extern const struct lvb_workload lvb_aim9;
extern const struct lvb_workload lvb_compact;
extern const struct lvb_workload lvb_swap;
extern const struct lvb_workload lvb_reparent;
extern const struct lvb_workload lvb_usemem;
extern const struct lvb_workload lvb_page_fault2;
extern const struct lvb_workload lvb_replay;

/* Print "lvbench: <message>" and where to find the help on stderr. Return: -1. */
int lvb_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- harness (harness.c) --------------------------------------------------------------------- */

/**
 * struct lvb_env - one machine of one design with opt->containers memcgs "c0", "c1", ...
 * An env whose @m is NULL has no machine: lvb_run_threads() then only times the threads
 * (a ceiling run).
 */
struct lvb_env {
	const struct lvb_common *opt;
	enum lv_lock_design design;
	const char *label; /* what messages name the run by; NULL: the design */
	struct lv_machine *m;
	struct lv_memcg **memcgs;
	unsigned int nr_memcgs;
};

#define LVB_ENV_DATA		   0x1u /* real data frames (the default is metadata only) */
#define LVB_ENV_NO_KSWAPD	   0x2u /* no kswapd threads: reclaim is direct only */
#define LVB_ENV_THP_ALWAYS	   0x8u /* huge pages in every region (cfg.thp LV_THP_ALWAYS) */
#define LVB_ENV_FOLIO_ORDER(order) ((unsigned int)(order) << 8)	 /* page cache folio order */
#define LVB_ENV_READAHEAD(pages)   ((unsigned int)(pages) << 24) /* cfg.readahead_pages */
/*
 * Proactive compaction at @p (cfg.compaction_proactiveness). Without it kcompactd wakes only
 * for failed large allocations, as before Linux 5.9: the published workloads predate it.
 */
#define LVB_ENV_PROACTIVE(p) (0x4u | ((unsigned int)(p) << 16))

/* lvb_zalloc - zeroed, cache-line aligned memory (per-thread state), freed with free(). */
void *lvb_zalloc(size_t bytes);
int lvb_env_create(struct lvb_env *env, const struct lvb_common *opt, enum lv_lock_design design,
		   unsigned int flags);
/* lvb_env_config - the machine configuration lvb_env_create() makes from @opt and @flags. */
void lvb_env_config(const struct lvb_common *opt, enum lv_lock_design design, unsigned int flags,
		    struct lv_config *cfg);
/* Drain, verify the machine is empty and consistent, remove the memcgs, destroy. */
unsigned int lvb_env_destroy(struct lvb_env *env);

/** struct lvb_worker - one benchmark thread; only its own thread writes it during the run. */
struct lvb_worker {
	unsigned int id;
	struct lvb_env *env;
	void *priv; /* the workload's per-thread state */
	/* Set by the workload before lvb_run_threads(), constant during the run. */
	bool pin; /* the thread runs only on CPU @cpu (lvb_pin_cpus()) */
	int cpu;
	uint64_t ops;
	uint64_t amount; /* see &struct lvb_rate; unused without one */
	uint64_t counters[LVB_MAX_COUNTERS];
	const char *error_what; /* the first unexpected library answer */
	int error;
	unsigned int nr_errors;
} __attribute__((aligned(64)));

struct lvb_thread_ops {
	/* One unit of work, called until the run stops. Adds to w->ops. */
	void (*step)(struct lvb_worker *w);
	/* Release everything the thread holds; runs after the statistics were taken. NULL: nothing
	 * is held between steps. */
	void (*release)(struct lvb_worker *w);
	/* Names of the workload's own counters (w->counters[]), copied into the result. */
	const char *const *counter_names;
	unsigned int nr_counters;
	/* The threads' name, numbered (reader0, ceiling1: perf report --sort comm); NULL: "lvb". */
	const char *name;
};

/* lvb_worker_error - record an unexpected answer: @what, and @err (an errno, or 0 for none). */
void lvb_worker_error(struct lvb_worker *w, const char *what, int err);

int lvb_run_threads(struct lvb_env *env, struct lvb_worker *workers,
		    const struct lvb_thread_ops *ops, struct lvb_result *res);

/* ---- a page cache reader (readtwice.c) ------------------------------------------------------ */

#define LVB_READ_SIZE 4096u /* dd bs=4k */

/* The reader's counters: the first two of a workload that runs lvb_reader_step(). */
enum lvb_read_counter {
	LVB_READ_ENOMEM, /* lv_file_read() found no memory even after reclaim */
	LVB_READ_WRAPS,	 /* a reader reached the end of its file and started over */
	LVB_READ_NR_COUNTERS
};

/** struct lvb_reader - one sequential reader of a file, in 4 KiB reads charged to @memcg. */
struct lvb_reader {
	struct lv_file *file;
	uint64_t size, off;
	struct lv_memcg *memcg;
	char *buf;		/* LVB_READ_SIZE bytes, page-aligned */
	unsigned int passes;	/* readtwice --passes: wraps before it idles; 0: never */
} __attribute__((aligned(64))); /* written by its thread on every step: no false sharing */

/*
 * lvb_reader_step - one lv_file_read() of @r at its offset, counted in @w (ops, amount in
 * bytes); the offset wraps at the end of the file. -ENOMEM yields and retries the same page.
 */
void lvb_reader_step(struct lvb_worker *w, struct lvb_reader *r);

/* The progress line (stderr, terminals only) names the current round. */
void lvb_progress_label(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

unsigned int lvb_online_cpus(void);
int lvb_pin_cpus(int *cpus, unsigned int n);

/* VmRSS and VmHWM of this process in KiB (0 when /proc is not readable). */
void lvb_proc_memory(uint64_t *rss_kib, uint64_t *hwm_kib);

/* ---- rounds (compare.c) ---------------------------------------------------------------------- */

int lvb_bench(const struct lvb_workload *wl, const struct lvb_common *opt, const void *params,
	      const struct lvb_variant *variants, unsigned int nr_variants);
/* One row of the mmtests table: @stat @name, then each value with its percentage (n > 1). */
void lvb_print_row(FILE *out, const char *stat, const char *name, const double *v, unsigned int n,
		   bool lower_better);
/* The LRU lock of @s: the lruvec and node classes added (one of them is always zero). */
struct lv_lock_stat lvb_lru_lock(const struct lvb_series *s);

struct lvb_sweep;

/**
 * struct lvb_sweep_ops - what a sweep makes of its container counts: compare's columns
 * (compare.c), or scale's cost per op and memory per memcg (scale.c).
 */
struct lvb_sweep_ops {
	bool ceiling;	 /* measure the workload's ceiling at each count, before its rounds */
	bool interleave; /* one round of every count in turn, --rounds times; rows at the end */
	/* Optional: the table's header, before the first count (not with --json). */
	void (*header)(struct lvb_sweep *sw);
	/* Optional: before the first round of count @i (options @o); 0, or -1 after saying why. */
	int (*start)(struct lvb_sweep *sw, unsigned int i, const struct lvb_common *o);
	/* Every round of count @i is done: its row, or its JSON objects with --json. */
	void (*row)(struct lvb_sweep *sw, unsigned int i, const struct lvb_common *o,
		    const struct lvb_series *s, const struct lvb_ceiling *c);
	/* Optional: after the last row; 0, or -1 after saying why. */
	int (*end)(struct lvb_sweep *sw);
};

/**
 * struct lvb_sweep - one sweep over @opt->sweep's container counts: @opt with each count as
 * --containers (and the workload's thread count for it), @variants run at every count.
 */
struct lvb_sweep {
	const struct lvb_workload *wl;
	const struct lvb_common *opt;
	const void *params;
	const struct lvb_variant *variants;
	unsigned int nr_variants;
	const struct lvb_sweep_ops *ops;
	void *priv; /* the ops' own state */
};

int lvb_sweep_run(struct lvb_sweep *sw);

/* ---- scale (scale.c) ------------------------------------------------------------------------- */

extern const char lvb_scale_help[]; /* the long help's description, output and JSON keys */
int lvb_scale(const struct lvb_workload *wl, const struct lvb_common *opt, const void *params,
	      const struct lvb_variant *variant);

/* "s" after a count of @n things unless it is one: "%u round%s", n, lvb_plural(n). */
static inline const char *lvb_plural(unsigned long long n)
{
	return n == 1 ? "" : "s";
}

/* ---- statistics and output (report.c) -------------------------------------------------------- */

/** struct lvb_stats - the rows of mmtests compare; higher is better but for the spread. */
struct lvb_stats {
	size_t n;
	double min, max, amean, hmean, stddev, coeffvar;
	double bhmean50, bhmean95, bhmean99;
};

int lvb_stats_compute(const double *x, size_t n, struct lvb_stats *st);
double lvb_median(double *v, size_t n); /* sorts @v in place; 0 if @n is 0 */
int lvb_series_stats(const struct lvb_series *s, struct lvb_stats *st);
double lvb_contended_fraction(const struct lv_lock_stat *s);
void lvb_print_locks(FILE *out, const struct lvb_series *s);
int lvb_sites_merge(struct lv_lock_site_stat **sites, size_t *nr,
		    const struct lv_lock_site_stat *add, size_t nr_add);
#define LVB_TOP_SITES 10 /* the rows of the human call-site table */
void lvb_print_sites(FILE *out, const struct lvb_series *s);
void lvb_print_json(FILE *out, const struct lvb_workload *wl, const struct lvb_common *opt,
		    const void *params, const struct lvb_series *s, const struct lvb_ceiling *ceil);
void lvb_json_u64(FILE *out, bool *first, const char *key, uint64_t v);
void lvb_json_double(FILE *out, bool *first, const char *key, double v);
void lvb_json_str(FILE *out, bool *first, const char *key, const char *v);
void lvb_json_key(FILE *out, bool *first, const char *key);

#endif /* LVBENCH_H */
