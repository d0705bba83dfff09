/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lvbench - declarations shared by the benchmark CLI's files.
 *
 * A workload (churn.c, later readtwice, aim9, numa) is a &struct lvb_workload: a name, its own
 * options, and a run function that builds one machine for one lock design, runs it and fills a
 * &struct lvb_result. harness.c gives workloads the machine, the containers and the threads;
 * compare.c runs rounds of one or both designs; report.c turns results into statistics, tables
 * and JSON. Nothing here knows about a particular workload.
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
};

/**
 * struct lvb_opt - one long option. The value lives at @off in the struct the table belongs
 * to (&struct lvb_common for the shared table, the workload's params for its own).
 */
struct lvb_opt {
	const char *name; /* without the leading "--" */
	enum lvb_opt_kind kind;
	size_t off;
	double min, max;
	const char *const *choices; /* NULL-terminated */
	const char *metavar;
	const char *help;
};

#define LVB_UNSET (~0u) /* an option that was not given and has a mode-dependent default */

/** struct lvb_common - the options every workload shares. */
struct lvb_common {
	unsigned int containers;
	unsigned int threads;
	double duration; /* seconds per round */
	unsigned int rounds;
	unsigned int lock;    /* index into lvb_lock_names, or LVB_UNSET */
	unsigned int backend; /* index into lvb_backend_names */
	unsigned int batch;
	unsigned int nodes;
	unsigned int memory_mib; /* per node */
	uint64_t seed;
	bool json;
	bool help;
};

extern const char *const lvb_lock_names[];    /* "lruvec", "node": enum lv_lock_design order */
extern const char *const lvb_backend_names[]; /* "futex", "mutex", "spin" */

/* ---- results --------------------------------------------------------------------------------- */

#define LVB_MAX_COUNTERS 8

/** struct lvb_result - what one round of one design produced. */
struct lvb_result {
	enum lv_lock_design design;
	unsigned int nr_threads;
	double elapsed;	      /* seconds between the start and the stop of the threads */
	uint64_t *thread_ops; /* [nr_threads], owned by the result */
	struct lv_lock_stat locks[LV_NR_LOCK_CLASSES];
	uint64_t vmstat[LV_NR_STAT_ITEMS]; /* events during the run, summed over nodes */
	uint64_t drain_calls, drain_sweeps;
	/* Workload-specific event counts (failed allocations, lost pins, ...). */
	unsigned int nr_counters;
	const char *counter_names[LVB_MAX_COUNTERS];
	uint64_t counters[LVB_MAX_COUNTERS];
	unsigned int failures; /* each one already described on stderr */
};

void lvb_result_free(struct lvb_result *res);

/**
 * struct lvb_series - every round of one design, merged: the samples are the ops/s of every
 * thread of every round.
 */
struct lvb_series {
	enum lv_lock_design design;
	unsigned int rounds;
	double *samples; /* per-thread ops/s */
	size_t nr_samples;
	double *round_rate; /* [rounds]: total ops/s of each round */
	uint64_t ops;
	double elapsed;
	struct lv_lock_stat locks[LV_NR_LOCK_CLASSES];
	uint64_t vmstat[LV_NR_STAT_ITEMS];
	uint64_t drain_calls, drain_sweeps;
	unsigned int nr_counters;
	const char *counter_names[LVB_MAX_COUNTERS];
	uint64_t counters[LVB_MAX_COUNTERS];
	unsigned int failures;
};

int lvb_series_add(struct lvb_series *s, const struct lvb_result *res);
void lvb_series_free(struct lvb_series *s);

/* ---- workloads ------------------------------------------------------------------------------- */

struct lvb_workload {
	const char *name;
	const char *summary; /* one line for the command list */
	const char *help;    /* what one thread does, and how this deviates from benchmarks.md */
	const struct lvb_opt *opts; /* its own options, ended by a zero entry; may be NULL */
	size_t params_size;
	void (*defaults)(void *params);
	/* Run one round of @design into @res (zeroed by the caller). Return 0 or -errno. */
	int (*run)(const struct lvb_common *opt, const void *params, enum lv_lock_design design,
		   struct lvb_result *res);
};

extern const struct lvb_workload lvb_churn;

/* ---- harness (harness.c) --------------------------------------------------------------------- */

/** struct lvb_env - one machine of one design with opt->containers memcgs "c0", "c1", ... */
struct lvb_env {
	const struct lvb_common *opt;
	enum lv_lock_design design;
	struct lv_machine *m;
	struct lv_memcg **memcgs;
	unsigned int nr_memcgs;
};

int lvb_env_create(struct lvb_env *env, const struct lvb_common *opt, enum lv_lock_design design);
/* Drain, verify the machine is empty and consistent, remove the memcgs, destroy. */
unsigned int lvb_env_destroy(struct lvb_env *env);

/** struct lvb_worker - one benchmark thread; only its own thread writes it during the run. */
struct lvb_worker {
	unsigned int id;
	struct lvb_env *env;
	void *priv; /* the workload's per-thread state */
	uint64_t ops;
	uint64_t counters[LVB_MAX_COUNTERS];
	const char *error_what; /* the first unexpected library answer */
	int error;
	unsigned int nr_errors;
} __attribute__((aligned(64)));

struct lvb_thread_ops {
	/* One unit of work, called until the run stops. Adds to w->ops. */
	void (*step)(struct lvb_worker *w);
	/* Release everything the thread holds; runs after the statistics were taken. */
	void (*release)(struct lvb_worker *w);
};

void lvb_worker_error(struct lvb_worker *w, const char *what, int err);

int lvb_run_threads(struct lvb_env *env, struct lvb_worker *workers,
		    const struct lvb_thread_ops *ops, struct lvb_result *res);

/* The progress line (stderr, terminals only) names the current round. */
void lvb_progress_label(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

unsigned int lvb_online_cpus(void);

/* ---- rounds (compare.c) ---------------------------------------------------------------------- */

int lvb_bench(const struct lvb_workload *wl, const struct lvb_common *opt, const void *params,
	      const enum lv_lock_design *designs, unsigned int nr_designs);

/* ---- statistics and output (report.c) -------------------------------------------------------- */

/** struct lvb_stats - the mmtests compare rows (benchmarks.md §2.4), higher is better. */
struct lvb_stats {
	size_t n;
	double min, max, amean, hmean, stddev, coeffvar;
	double bhmean50, bhmean95, bhmean99;
};

int lvb_stats_compute(const double *x, size_t n, struct lvb_stats *st);
double lvb_contended_fraction(const struct lv_lock_stat *s);
void lvb_print_locks(FILE *out, const struct lvb_series *s);
void lvb_print_json(FILE *out, const char *workload, const struct lvb_common *opt,
		    const struct lvb_series *s);

#endif /* LVBENCH_H */
