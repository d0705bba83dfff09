// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Rounds and the side-by-side table.
 *
 * Designs alternate round by round (ABAB..., node first) rather than running all rounds of one
 * design and then all of the other: slow drifts of the machine (thermal state, a noisy
 * neighbour on a shared host) then hit both designs alike instead of biasing one. Each round
 * gets a fresh machine, so no round inherits another's memory layout or statistics.
 *
 * The table has the layout of mmtests compare: one row per statistic, one column per design,
 * each value followed by its percentage relative to the first (baseline) column.
 */
#include "lvbench.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void lvb_result_free(struct lvb_result *res)
{
	free(res->thread_ops);
	res->thread_ops = NULL;
}

int lvb_series_add(struct lvb_series *s, const struct lvb_result *res)
{
	double *samples, *rates;
	uint64_t ops = 0;

	samples = realloc(s->samples, (s->nr_samples + res->nr_threads) * sizeof(*samples));
	if (!samples)
		return -ENOMEM;
	s->samples = samples;
	rates = realloc(s->round_rate, (s->rounds + 1) * sizeof(*rates));
	if (!rates)
		return -ENOMEM;
	s->round_rate = rates;

	for (unsigned int t = 0; t < res->nr_threads; t++) {
		ops += res->thread_ops[t];
		s->samples[s->nr_samples++] =
			res->elapsed > 0 ? (double)res->thread_ops[t] / res->elapsed : 0;
	}
	s->round_rate[s->rounds++] = res->elapsed > 0 ? (double)ops / res->elapsed : 0;
	s->design = res->design;
	s->ops += ops;
	s->elapsed += res->elapsed;
	for (int cls = 0; cls < LV_NR_LOCK_CLASSES; cls++) {
		struct lv_lock_stat *sum = &s->locks[cls];
		const struct lv_lock_stat *l = &res->locks[cls];

		sum->acquired += l->acquired;
		sum->contended += l->contended;
		sum->wait_total_ns += l->wait_total_ns;
		if (l->wait_max_ns > sum->wait_max_ns)
			sum->wait_max_ns = l->wait_max_ns;
		if (l->wait_min_ns && (!sum->wait_min_ns || l->wait_min_ns < sum->wait_min_ns))
			sum->wait_min_ns = l->wait_min_ns;
	}
	for (int item = 0; item < LV_NR_STAT_ITEMS; item++)
		s->vmstat[item] += res->vmstat[item];
	s->drain_calls += res->drain_calls;
	s->drain_sweeps += res->drain_sweeps;
	s->nr_counters = res->nr_counters;
	for (unsigned int c = 0; c < res->nr_counters; c++) {
		s->counter_names[c] = res->counter_names[c];
		s->counters[c] += res->counters[c];
	}
	s->failures += res->failures;
	return 0;
}

void lvb_series_free(struct lvb_series *s)
{
	free(s->samples);
	free(s->round_rate);
	memset(s, 0, sizeof(*s));
}

/* ---- the tables ------------------------------------------------------------------------------ */

/* The baseline compares with itself: exactly 0, never a rounded "-0.00%". */
static double pct_higher_better(double base, double v)
{
	return base && v != base ? v * 100 / base - 100 : 0;
}

/* mmtests prints a drop in variance as a gain. */
static double pct_lower_better(double base, double v)
{
	return base && v != base ? 100 - v * 100 / base : 0;
}

static void print_row(FILE *out, const char *stat, const char *wl, const double *v, unsigned int n,
		      bool lower_better)
{
	fprintf(out, "%-10s %-8s", stat, wl);
	for (unsigned int d = 0; d < n; d++) {
		fprintf(out, " %14.2f", v[d]);
		if (n > 1)
			fprintf(out, " (%7.2f%%)",
				lower_better ? pct_lower_better(v[0], v[d])
					     : pct_higher_better(v[0], v[d]));
	}
	fputc('\n', out);
}

static void print_header(FILE *out, const struct lvb_workload *wl, const struct lvb_common *opt,
			 const struct lvb_series *s, unsigned int n)
{
	unsigned int cpus = lvb_online_cpus();

	if (n > 1)
		fprintf(out,
			"lvbench compare %s: node vs lruvec lru_lock, ABAB order, %u round%s "
			"of %g s per design\n",
			wl->name, opt->rounds, opt->rounds > 1 ? "s" : "", opt->duration);
	else
		fprintf(out, "lvbench %s: %s lru_lock, %u round%s of %g s\n", wl->name,
			lvb_lock_names[s[0].design], opt->rounds, opt->rounds > 1 ? "s" : "",
			opt->duration);
	fprintf(out,
		"%u containers, %u threads on %u online CPUs (thread-to-core ratio %.2f),\n"
		"%u node%s x %u MiB, %s locks, batch %u, seed %llu\n\n",
		opt->containers, opt->threads, cpus, (double)opt->threads / cpus, opt->nodes,
		opt->nodes > 1 ? "s" : "", opt->memory_mib, lvb_backend_names[opt->backend],
		opt->batch, (unsigned long long)opt->seed);
}

/* The rows of mmtests compare, in its order. */
static const struct {
	const char *label;
	size_t off;
	bool lower_better;
} rows[] = {
	{ "Min", offsetof(struct lvb_stats, min), false },
	{ "Max", offsetof(struct lvb_stats, max), false },
	{ "Hmean", offsetof(struct lvb_stats, hmean), false },
	{ "Stddev", offsetof(struct lvb_stats, stddev), true },
	{ "CoeffVar", offsetof(struct lvb_stats, coeffvar), true },
	{ "BHmean-50", offsetof(struct lvb_stats, bhmean50), false },
	{ "BHmean-95", offsetof(struct lvb_stats, bhmean95), false },
	{ "BHmean-99", offsetof(struct lvb_stats, bhmean99), false },
};

static int print_stats_table(FILE *out, const char *wl, const struct lvb_series *s, unsigned int n)
{
	struct lvb_stats st[2];
	double v[2];

	for (unsigned int d = 0; d < n; d++)
		if (lvb_stats_compute(s[d].samples, s[d].nr_samples, &st[d]))
			return -ENOMEM;

	fprintf(out, "ops/s per thread (%zu samples per design: threads x rounds)\n", st[0].n);
	fprintf(out, "%-19s", "");
	for (unsigned int d = 0; d < n; d++)
		fprintf(out, d ? " %25s" : " %14s", lvb_lock_names[s[d].design]);
	fputc('\n', out);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		for (unsigned int d = 0; d < n; d++)
			v[d] = *(const double *)((const char *)&st[d] + rows[i].off);
		print_row(out, rows[i].label, wl, v, n, rows[i].lower_better);
	}
	for (unsigned int d = 0; d < n; d++)
		v[d] = s[d].elapsed > 0 ? (double)s[d].ops / s[d].elapsed : 0;
	print_row(out, "Total", wl, v, n, false);
	fprintf(out, "(Total: ops/s of all threads together)\n");
	for (unsigned int d = 0; d < n; d++) {
		fprintf(out, "Total per round (%s):", lvb_lock_names[s[d].design]);
		for (unsigned int r = 0; r < s[d].rounds; r++)
			fprintf(out, " %.0f", s[d].round_rate[r]);
		fputc('\n', out);
	}
	return 0;
}

/* The LRU lock is the node's in one design and the lruvec's in the other: add both classes. */
static struct lv_lock_stat lru_lock_stat(const struct lvb_series *s)
{
	const struct lv_lock_stat *a = &s->locks[LV_LOCK_CLASS_LRUVEC];
	const struct lv_lock_stat *b = &s->locks[LV_LOCK_CLASS_NODE];

	return (struct lv_lock_stat){
		.acquired = a->acquired + b->acquired,
		.contended = a->contended + b->contended,
		.wait_total_ns = a->wait_total_ns + b->wait_total_ns,
	};
}

static double per_op(double v, const struct lvb_series *s)
{
	return s->ops ? v / (double)s->ops : 0;
}

/* One row of a small side-by-side table; @fmt formats one value in 15 columns. */
static void table_row(FILE *out, const char *label, const double *v, unsigned int n,
		      const char *fmt)
{
	fprintf(out, "%-28s", label);
	for (unsigned int d = 0; d < n; d++)
		fprintf(out, fmt, v[d]);
	fputc('\n', out);
}

static void table_head(FILE *out, const char *title, const struct lvb_series *s, unsigned int n)
{
	fprintf(out, "\n%-28s", title);
	for (unsigned int d = 0; d < n; d++)
		fprintf(out, " %14s", lvb_lock_names[s[d].design]);
	fputc('\n', out);
}

static const char *ratio(char *buf, size_t size, double a, double b)
{
	if (b > 0)
		snprintf(buf, size, "%.2fx", a / b);
	else
		snprintf(buf, size, "%s", a > 0 ? "inf" : "n/a");
	return buf;
}

/*
 * The designs acquire the LRU lock a different number of times (the node design's batches
 * relock only when the lock changes, so one hold covers folios of many memcgs), so contention
 * is also shown per op, which both designs count alike.
 */
static void print_contention(FILE *out, const struct lvb_series *s, unsigned int n)
{
	double acq[2], con[2], frac[2], con_op[2], wait[2], wait_op[2];
	char r1[32], r2[32];

	for (unsigned int d = 0; d < n; d++) {
		struct lv_lock_stat l = lru_lock_stat(&s[d]);

		acq[d] = (double)l.acquired;
		con[d] = (double)l.contended;
		frac[d] = 100 * lvb_contended_fraction(&l);
		con_op[d] = per_op(1e6 * (double)l.contended, &s[d]);
		wait[d] = (double)l.wait_total_ns * 1e-6;
		wait_op[d] = per_op((double)l.wait_total_ns, &s[d]);
	}
	table_head(out, "LRU lock (lruvec + node)", s, n);
	table_row(out, "acquired", acq, n, " %14.0f");
	table_row(out, "contended", con, n, " %14.0f");
	table_row(out, "contended/acquired", frac, n, " %13.3f%%");
	table_row(out, "contended per 1M ops", con_op, n, " %14.2f");
	table_row(out, "total wait (ms)", wait, n, " %14.1f");
	table_row(out, "wait per op (ns)", wait_op, n, " %14.2f");
	if (n == 2)
		fprintf(out, "%s/%s: contended/acquired %s, wait per op %s\n",
			lvb_lock_names[s[0].design], lvb_lock_names[s[1].design],
			ratio(r1, sizeof(r1), frac[0], frac[1]),
			ratio(r2, sizeof(r2), wait_op[0], wait_op[1]));
}

static void print_counters(FILE *out, const struct lvb_series *s, unsigned int n)
{
	static const enum lv_stat_item items[] = { LV_PGACTIVATE, LV_PGDEACTIVATE, LV_PGROTATED,
						   LV_PGMOVED, LV_LOCK_RETRIES };
	double v[2];

	table_head(out, "Counters (all rounds)", s, n);
	for (size_t i = 0; i < sizeof(items) / sizeof(items[0]); i++) {
		for (unsigned int d = 0; d < n; d++)
			v[d] = (double)s[d].vmstat[items[i]];
		table_row(out, lv_stat_name(items[i]), v, n, " %14.0f");
	}
	for (unsigned int c = 0; c < s[0].nr_counters; c++) {
		for (unsigned int d = 0; d < n; d++)
			v[d] = (double)s[d].counters[c];
		table_row(out, s[0].counter_names[c], v, n, " %14.0f");
	}
	for (unsigned int d = 0; d < n; d++)
		v[d] = (double)s[d].ops;
	table_row(out, "ops", v, n, " %14.0f");
	fprintf(out, "%-28s", "lv_check");
	for (unsigned int d = 0; d < n; d++)
		fprintf(out, " %14s", s[d].failures ? "FAILED" : "ok");
	fputc('\n', out);
}

static int print_human(FILE *out, const struct lvb_workload *wl, const struct lvb_common *opt,
		       const struct lvb_series *s, unsigned int n)
{
	print_header(out, wl, opt, s, n);
	if (print_stats_table(out, wl->name, s, n))
		return -ENOMEM;
	for (unsigned int d = 0; d < n; d++) {
		fprintf(out,
			"\nLock statistics, %s design (perf lock report columns, %u round%s)\n",
			lvb_lock_names[s[d].design], s[d].rounds, s[d].rounds > 1 ? "s" : "");
		lvb_print_locks(out, &s[d]);
	}
	print_contention(out, s, n);
	print_counters(out, s, n);
	return 0;
}

/**
 * lvb_bench - run @opt->rounds rounds of each of @designs (at most 2), alternating, and print
 * the result.
 * Return: an exit status.
 */
int lvb_bench(const struct lvb_workload *wl, const struct lvb_common *opt, const void *params,
	      const enum lv_lock_design *designs, unsigned int nr_designs)
{
	struct lvb_series series[2] = { 0 };
	unsigned int total = opt->rounds * nr_designs, done = 0, failures = 0;
	int ret = LVB_EXIT_OK;

	for (unsigned int r = 0; r < opt->rounds; r++) {
		for (unsigned int d = 0; d < nr_designs; d++) {
			struct lvb_result res = { 0 };
			int err;

			lvb_progress_label("%s, %s design, run %u/%u", wl->name,
					   lvb_lock_names[designs[d]], ++done, total);
			err = wl->run(opt, params, designs[d], &res);
			if (!err)
				err = lvb_series_add(&series[d], &res);
			lvb_result_free(&res);
			if (err) {
				fprintf(stderr, "lvbench: %s, %s design: %s\n", wl->name,
					lvb_lock_names[designs[d]], strerror(-err));
				ret = LVB_EXIT_FAIL;
				goto out;
			}
		}
	}

	if (opt->json) {
		for (unsigned int d = 0; d < nr_designs; d++)
			lvb_print_json(stdout, wl->name, opt, &series[d]);
	} else if (print_human(stdout, wl, opt, series, nr_designs)) {
		ret = LVB_EXIT_FAIL;
	}
	for (unsigned int d = 0; d < nr_designs; d++)
		failures += series[d].failures;
	if (failures) {
		fprintf(stderr, "lvbench: %u failure%s (see above): the run is not valid\n",
			failures, failures > 1 ? "s" : "");
		ret = LVB_EXIT_FAIL;
	}
out:
	fflush(stdout);
	for (unsigned int d = 0; d < nr_designs; d++)
		lvb_series_free(&series[d]);
	return ret;
}
