// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Rounds and the side-by-side table.
 *
 * Designs alternate round by round (ABAB..., node first) rather than running all rounds of one
 * design and then all of the other: slow drifts of the machine (thermal state, a noisy
 * neighbour on a shared host) then hit both designs alike instead of biasing one. Each round
 * gets a fresh machine, so no round inherits another's memory layout or statistics.
 * With another --by the columns are the values of one knob instead (--by disable: rcu first, as
 * the baseline, then sweep; --by folio-order: three orders), in one lock design: a column is a
 * &struct lvb_variant, which sets its knob in a copy of the options its rounds run with.
 *
 * The table has the layout of mmtests compare: one row per statistic, one column per design,
 * each value followed by its percentage relative to the first (baseline) column.
 *
 * A workload with a ceiling has it measured before each round, with the same threads and
 * duration, so each design can be shown as a share of what the machine does without the
 * library, and the ceiling's spread over the rounds shows how much the machine moved. A sweep
 * repeats all of it per container count and condenses each count to one row (and one point per
 * design in the plot).
 */
#include "lvbench.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

enum lv_lock_design lvb_variant_apply(const struct lvb_variant *v, const struct lvb_common *base,
				      struct lvb_common *o)
{
	*o = *base;
	if (v->value != LVB_UNSET)
		*lvb_knob(o, lvb_by_kinds[v->by].off) = v->value;
	if (o->lock == LVB_UNSET)
		o->lock = LV_LOCK_LRUVEC;
	return (enum lv_lock_design)o->lock;
}

/* What a column is, in the singular: "design", "mode", "setting". */
static const char *column_noun(const struct lvb_common *opt)
{
	return lvb_by_kinds[opt->by].noun;
}

/* "node vs lruvec", "order-0 vs order-2 vs order-4" */
static void print_columns(FILE *out, const struct lvb_series *s, unsigned int n)
{
	for (unsigned int d = 0; d < n; d++)
		fprintf(out, "%s%s", d ? " vs " : "", s[d].column);
}

/* The order of the rounds: "ABAB", "ABCABC". */
static const char *round_order(unsigned int n, char *buf)
{
	for (unsigned int i = 0; i < 2 * n; i++)
		buf[i] = (char)('A' + i % n);
	buf[2 * n] = 0;
	return buf;
}

void lvb_result_free(struct lvb_result *res)
{
	free(res->thread_ops);
	free(res->thread_amount);
	free(res->samples);
	free(res->sites);
	res->sites = NULL;
	res->nr_sites = 0;
	res->thread_ops = NULL;
	res->thread_amount = NULL;
	res->samples = NULL;
}

/* The amount of thread @t in the unit of the workload's rate (ops without one). */
static double thread_units(const struct lvb_workload *wl, const struct lvb_result *res,
			   unsigned int t)
{
	if (!wl->rate)
		return (double)res->thread_ops[t];
	return (double)res->thread_amount[t] * wl->rate->scale;
}

int lvb_series_add(struct lvb_series *s, const struct lvb_workload *wl,
		   const struct lvb_result *res)
{
	double *samples, *rates, units = 0;
	uint64_t ops = 0;

	if (lvb_sites_merge(&s->sites, &s->nr_sites, res->sites, res->nr_sites))
		return -ENOMEM;
	/* The workload's own samples (res->samples) replace the per-thread rates. */
	samples = realloc(s->samples,
			  (s->nr_samples + res->nr_threads + res->nr_samples) * sizeof(*samples));
	if (!samples)
		return -ENOMEM;
	s->samples = samples;
	rates = realloc(s->round_rate, (s->rounds + 1) * sizeof(*rates));
	if (!rates)
		return -ENOMEM;
	s->round_rate = rates;
	rates = realloc(s->round_ops, (s->rounds + 1) * sizeof(*rates));
	if (!rates)
		return -ENOMEM;
	s->round_ops = rates;

	for (unsigned int t = 0; t < res->nr_threads; t++) {
		double u = thread_units(wl, res, t);

		ops += res->thread_ops[t];
		units += u;
		if (!res->samples)
			s->samples[s->nr_samples++] = res->elapsed > 0 ? u / res->elapsed : 0;
	}
	if (res->samples) {
		memcpy(s->samples + s->nr_samples, res->samples,
		       res->nr_samples * sizeof(*res->samples));
		s->nr_samples += res->nr_samples;
	}
	s->sample_group = res->sample_group;
	s->label = res->label;
	s->round_ops[s->rounds] = res->elapsed > 0 ? (double)ops / res->elapsed : 0;
	s->round_rate[s->rounds++] = res->elapsed > 0 ? units / res->elapsed : 0;
	s->design = res->design;
	s->disable = res->disable;
	s->disable_latency.count += res->disable_latency.count;
	s->disable_latency.total_ns += res->disable_latency.total_ns;
	if (res->disable_latency.max_ns > s->disable_latency.max_ns)
		s->disable_latency.max_ns = res->disable_latency.max_ns;
	for (unsigned int b = 0; b < LV_LATENCY_BUCKETS; b++)
		s->disable_latency.buckets[b] += res->disable_latency.buckets[b];
	s->ops += ops;
	s->units += units;
	s->elapsed += res->elapsed;
	if (res->vm_rss_kib > s->vm_rss_kib)
		s->vm_rss_kib = res->vm_rss_kib;
	if (res->vm_hwm_kib > s->vm_hwm_kib)
		s->vm_hwm_kib = res->vm_hwm_kib;
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
	memcpy(s->lru, res->lru, sizeof(s->lru));
	s->drain_calls += res->drain_calls;
	s->drain_sweeps += res->drain_sweeps;
	s->batch.flushes += res->batch.flushes;
	s->batch.holds += res->batch.holds;
	s->batch.folios += res->batch.folios;
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
	free(s->round_ops);
	free(s->sites);
	memset(s, 0, sizeof(*s));
}

double lvb_series_rate(const struct lvb_series *s)
{
	return s->elapsed > 0 ? s->units / s->elapsed : 0;
}

static const char *rate_unit(const struct lvb_workload *wl)
{
	return wl->rate ? wl->rate->unit : "ops/s";
}

static const char *rate_per(const struct lvb_workload *wl)
{
	return wl->rate ? wl->rate->per : "thread";
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
	/* A workload name longer than 8 columns shifts every row alike. */
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

void lvb_print_row(FILE *out, const char *stat, const char *name, const double *v, unsigned int n,
		   bool lower_better)
{
	print_row(out, stat, name, v, n, lower_better);
}

/* round_seconds - how long one round of @wl lasts (aim9: its iterations of --duration each). */
static double round_seconds(const struct lvb_workload *wl, const struct lvb_common *opt,
			    const void *params)
{
	return wl->round_seconds ? wl->round_seconds(opt, params) : opt->duration;
}

/* The batch size of the settings line: "31", or "15/31" when the columns differ in it. */
static const char *batch_str(const struct lvb_common *opt, unsigned int n, char *buf)
{
	const struct lvb_by_kind *k = &lvb_by_kinds[LVB_BY_BATCH];

	if (n > 1 && opt->by == LVB_BY_BATCH)
		snprintf(buf, 16, "%u/%u", k->value[0], k->value[1]);
	else
		snprintf(buf, 16, "%u", opt->batch);
	return buf;
}

/* The library settings given on the command line that the columns do not set. */
static const char *knobs_str(const struct lvb_common *opt, unsigned int n, char *buf, size_t size)
{
	bool by = n > 1;
	size_t len = 0;

	buf[0] = 0;
	if (opt->scan_cost != LVB_UNSET && !(by && opt->by == LVB_BY_COST))
		len += (size_t)snprintf(buf + len, size - len, ", scan cost %s",
					lvb_scan_cost_names[opt->scan_cost]);
	if (opt->batch_large != LVB_UNSET && !(by && opt->by == LVB_BY_BATCH_LARGE) && len < size)
		len += (size_t)snprintf(buf + len, size - len, ", batch-large %s",
					lvb_on_off_names[opt->batch_large]);
	if (opt->folio_order != LVB_UNSET && !(by && opt->by == LVB_BY_FOLIO_ORDER) && len < size)
		len += (size_t)snprintf(buf + len, size - len, ", folio order %u",
					opt->folio_order);
	if (opt->batch_policy != LVB_UNSET && !(by && opt->by == LVB_BY_BATCH_POLICY) && len < size)
		len += (size_t)snprintf(buf + len, size - len, ", batch policy %s",
					lvb_batch_policy_names[opt->batch_policy]);
	if (opt->lock_sites == 0 && !(by && opt->by == LVB_BY_LOCK_SITES) && len < size)
		snprintf(buf + len, size - len, ", no call-site table");
	return buf;
}

static void print_header(FILE *out, const struct lvb_workload *wl, const struct lvb_common *opt,
			 const void *params, const struct lvb_series *s, unsigned int n)
{
	char batch[16], knobs[96];
	unsigned int cpus = lvb_online_cpus();
	double secs = round_seconds(wl, opt, params);

	char order[2 * LVB_MAX_VARIANTS + 1];

	if (opt->by == LVB_BY_LOCK && n > 1) {
		fprintf(out,
			"lvbench compare %s: node vs lruvec lru_lock, ABAB order, %u round%s "
			"of %g s per design\n",
			wl->name, opt->rounds, lvb_plural(opt->rounds), secs);
	} else if (n > 1) {
		fprintf(out, "lvbench compare %s: ", wl->name);
		print_columns(out, s, n);
		fprintf(out, " %s, %s lru_lock, %s order, %u round%s of %g s per %s\n",
			lvb_by_kinds[opt->by].what, lvb_lock_names[s[0].design],
			round_order(n, order), opt->rounds, lvb_plural(opt->rounds), secs,
			column_noun(opt));
	} else if (opt->by == LVB_BY_DISABLE) {
		fprintf(out, "lvbench %s: %s lru_cache_disable, %s lru_lock, %u round%s of %g s\n",
			wl->name, lvb_disable_names[s[0].disable], lvb_lock_names[s[0].design],
			opt->rounds, lvb_plural(opt->rounds), secs);
	} else {
		fprintf(out, "lvbench %s: %s lru_lock, %u round%s of %g s\n", wl->name,
			lvb_lock_names[s[0].design], opt->rounds, lvb_plural(opt->rounds), secs);
	}
	fprintf(out,
		"%u container%s, %u %s%s on %u online CPU%s (thread-to-CPU ratio %.2f),\n"
		"%u node%s x %u MiB, %s locks, batch %s, seed %llu%s\n\n",
		opt->containers, lvb_plural(opt->containers), opt->threads,
		wl->rate && wl->rate->thread_noun ? wl->rate->thread_noun : rate_per(wl),
		lvb_plural(opt->threads), cpus, lvb_plural(cpus), (double)opt->threads / cpus,
		opt->nodes, lvb_plural(opt->nodes), opt->memory_mib,
		lvb_backend_names[opt->backend], batch_str(opt, n, batch),
		(unsigned long long)opt->seed, knobs_str(opt, n, knobs, sizeof(knobs)));
}

/* The rows of mmtests compare, in its order. */
static const struct {
	const char *label;
	size_t off;
	bool lower_better;
} rows[] = {
	{ "Min", offsetof(struct lvb_stats, min), false },
	{ "Max", offsetof(struct lvb_stats, max), false },
	{ "Amean", offsetof(struct lvb_stats, amean), false },
	{ "Hmean", offsetof(struct lvb_stats, hmean), false },
	{ "Stddev", offsetof(struct lvb_stats, stddev), true },
	{ "CoeffVar", offsetof(struct lvb_stats, coeffvar), true },
	{ "BHmean-50", offsetof(struct lvb_stats, bhmean50), false },
	{ "BHmean-95", offsetof(struct lvb_stats, bhmean95), false },
	{ "BHmean-99", offsetof(struct lvb_stats, bhmean99), false },
};

static int print_stats_table(FILE *out, const struct lvb_workload *wl, const struct lvb_series *s,
			     unsigned int n)
{
	const char *name = s[0].label ? s[0].label : wl->name;
	size_t name_len = strlen(name) > 8 ? strlen(name) : 8;
	struct lvb_stats st[LVB_MAX_VARIANTS];
	double v[LVB_MAX_VARIANTS];

	for (unsigned int d = 0; d < n; d++)
		if (lvb_series_stats(&s[d], &st[d]))
			return -ENOMEM;

	if (s[0].sample_group)
		fprintf(out,
			"%s per %s: the statistics of the %u iterations of each %s in each round, "
			"averaged over those %zu (%ss x rounds)\n",
			rate_unit(wl), rate_per(wl), s[0].sample_group, rate_per(wl),
			s[0].nr_samples / s[0].sample_group, rate_per(wl));
	else
		fprintf(out, "%s per %s (%zu samples per design: %ss x rounds)\n", rate_unit(wl),
			rate_per(wl), st[0].n, rate_per(wl));
	fprintf(out, "%-*s", (int)(11 + name_len), "");
	for (unsigned int d = 0; d < n; d++)
		fprintf(out, d ? " %25s" : " %14s", s[d].column);
	fputc('\n', out);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		for (unsigned int d = 0; d < n; d++)
			v[d] = *(const double *)((const char *)&st[d] + rows[i].off);
		print_row(out, rows[i].label, name, v, n, rows[i].lower_better);
	}
	for (unsigned int d = 0; d < n; d++)
		v[d] = lvb_series_rate(&s[d]);
	print_row(out, "Total", name, v, n, false);
	fprintf(out, "(Total: %s of all %ss together)\n", rate_unit(wl), rate_per(wl));
	for (unsigned int d = 0; d < n; d++) {
		fprintf(out, "Total per round (%s):", s[d].column);
		for (unsigned int r = 0; r < s[d].rounds; r++)
			fprintf(out, wl->rate ? " %.1f" : " %.0f", s[d].round_rate[r]);
		fputc('\n', out);
	}
	return 0;
}

/* The LRU lock is the node's in one design and the lruvec's in the other: add both classes. */
struct lv_lock_stat lvb_lru_lock(const struct lvb_series *s)
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
		fprintf(out, " %14s", s[d].column);
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
static void print_contention(FILE *out, const struct lvb_workload *wl, const struct lvb_series *s,
			     unsigned int n)
{
	double wait_unit[LVB_MAX_VARIANTS];
	char label[40];

	double acq[LVB_MAX_VARIANTS], con[LVB_MAX_VARIANTS], frac[LVB_MAX_VARIANTS];
	double con_op[LVB_MAX_VARIANTS], wait[LVB_MAX_VARIANTS], wait_op[LVB_MAX_VARIANTS];
	char r1[32], r2[32];

	for (unsigned int d = 0; d < n; d++) {
		struct lv_lock_stat l = lvb_lru_lock(&s[d]);

		acq[d] = (double)l.acquired;
		con[d] = (double)l.contended;
		frac[d] = 100 * lvb_contended_fraction(&l);
		con_op[d] = per_op(1e6 * (double)l.contended, &s[d]);
		wait[d] = (double)l.wait_total_ns * 1e-6;
		wait_op[d] = per_op((double)l.wait_total_ns, &s[d]);
		wait_unit[d] = s[d].units > 0 ? (double)l.wait_total_ns / s[d].units : 0;
	}
	table_head(out, "LRU lock (lruvec + node)", s, n);
	table_row(out, "acquired", acq, n, " %14.0f");
	table_row(out, "contended", con, n, " %14.0f");
	table_row(out, "contended/acquired", frac, n, " %13.3f%%");
	table_row(out, "contended per 1M ops", con_op, n, " %14.2f");
	table_row(out, "total wait (ms)", wait, n, " %14.1f");
	table_row(out, "wait per op (ns)", wait_op, n, " %14.2f");
	/* Per unit of work (MB read): what the lock costs the workload's own measure. */
	if (wl->rate) {
		snprintf(label, sizeof(label), "wait per %.*s (ns)",
			 (int)strcspn(wl->rate->unit, "/"), wl->rate->unit);
		table_row(out, label, wait_unit, n, " %14.1f");
	}
	for (unsigned int d = 1; d < n; d++)
		fprintf(out, "%s/%s: contended/acquired %s, wait per op %s\n", s[0].column,
			s[d].column, ratio(r1, sizeof(r1), frac[0], frac[d]),
			ratio(r2, sizeof(r2), wait_op[0], wait_op[d]));
}

static void print_counters(FILE *out, const struct lvb_series *s, unsigned int n)
{
	static const enum lv_stat_item items[] = { LV_PGACTIVATE, LV_PGDEACTIVATE, LV_PGROTATED,
						   LV_PGMOVED, LV_LOCK_RETRIES };
	/* Reclaim and workingset: shown once some design has them (churn never reclaims). */
	static const enum lv_stat_item reclaim_items[] = {
		LV_PGSCAN,
		LV_PGSTEAL,
		LV_PGREFILL,
		LV_WORKINGSET_REFAULT,
		LV_WORKINGSET_ACTIVATE,
		LV_WORKINGSET_NODERECLAIM,
		LV_ALLOCSTALL,
		LV_RECLAIM_SKIP_BUSY,
		LV_RECLAIM_DRAIN,
	};
	double v[LVB_MAX_VARIANTS];

	table_head(out, "Counters (all rounds)", s, n);
	for (size_t i = 0; i < sizeof(items) / sizeof(items[0]); i++) {
		for (unsigned int d = 0; d < n; d++)
			v[d] = (double)s[d].vmstat[items[i]];
		table_row(out, lv_stat_name(items[i]), v, n, " %14.0f");
	}
	for (size_t i = 0; i < sizeof(reclaim_items) / sizeof(reclaim_items[0]); i++) {
		bool any = false;

		for (unsigned int d = 0; d < n; d++) {
			v[d] = (double)s[d].vmstat[reclaim_items[i]];
			any |= v[d] > 0;
		}
		if (any)
			table_row(out, lv_stat_name(reclaim_items[i]), v, n, " %14.0f");
	}
	for (unsigned int c = 0; c < s[0].nr_counters; c++) {
		for (unsigned int d = 0; d < n; d++)
			v[d] = (double)s[d].counters[c];
		table_row(out, s[0].counter_names[c], v, n, " %14.0f");
	}
	for (unsigned int d = 0; d < n; d++)
		v[d] = (double)s[d].ops;
	table_row(out, "ops", v, n, " %14.0f");
	/* Not only lv_check(): a thread's unexpected answer fails the run as well. */
	fprintf(out, "%-28s", "checks (answers, lv_check)");
	for (unsigned int d = 0; d < n; d++)
		fprintf(out, " %14s", s[d].failures ? "FAILED" : "ok");
	fputc('\n', out);
}

/* The ceiling, and each design's total as a share of it. */
static void print_ceiling(FILE *out, const struct lvb_workload *wl, const struct lvb_series *s,
			  unsigned int n, const struct lvb_ceiling *c)
{
	if (!c->valid)
		return;
	fprintf(out,
		"\nCeiling: the same %u %ss doing only the memory work, without the library:\n"
		"%s\n",
		c->threads, rate_per(wl), c->what);
	fprintf(out, "%-28s %14.1f %s (%.1f per %s)\n", "ceiling", c->total, rate_unit(wl),
		c->threads ? c->total / c->threads : 0, rate_per(wl));
	if (c->rounds > 1)
		fprintf(out, "%-28s %14s %.1f..%.1f %s over %u rounds (coeffvar %.1f%%)\n",
			"ceiling spread", "", c->min, c->max, rate_unit(wl), c->rounds,
			c->coeffvar);
	for (unsigned int d = 0; d < n; d++) {
		double rate = lvb_series_rate(&s[d]);

		fprintf(out, "%-28s %14.1f %s = %5.1f%% of the ceiling\n", s[d].column, rate,
			rate_unit(wl), c->total > 0 ? 100 * rate / c->total : 0);
	}
}

static int print_human(FILE *out, const struct lvb_workload *wl, const struct lvb_common *opt,
		       const void *params, const struct lvb_series *s, unsigned int n,
		       const struct lvb_ceiling *c)
{
	print_header(out, wl, opt, params, s, n);
	if (print_stats_table(out, wl, s, n))
		return -ENOMEM;
	print_ceiling(out, wl, s, n, c);
	for (unsigned int d = 0; d < n; d++) {
		fprintf(out, "\nLock statistics, %s %s (perf lock report columns, %u round%s)\n",
			s[d].column, column_noun(opt), s[d].rounds, lvb_plural(s[d].rounds));
		lvb_print_locks(out, &s[d]);
	}
	for (unsigned int d = 0; d < n; d++) {
		fprintf(out,
			"\nLock contention by call site, %s %s (perf lock contention columns, ",
			s[d].column, column_noun(opt));
		fprintf(out, "top %zu of %zu)\n",
			s[d].nr_sites < LVB_TOP_SITES ? s[d].nr_sites : (size_t)LVB_TOP_SITES,
			s[d].nr_sites);
		lvb_print_sites(out, &s[d]);
	}
	print_contention(out, wl, s, n);
	print_counters(out, s, n);
	if (wl->print_extra)
		wl->print_extra(out, opt, params, s, n, c);
	return 0;
}

/* ceiling_add - fold one round's ceiling @one into @c (zeroed before the first round). */
static void ceiling_add(struct lvb_ceiling *c, const struct lvb_ceiling *one)
{
	unsigned int n = c->rounds + 1;
	double mean, var;

	if (!one->valid)
		return;
	if (!c->rounds) {
		*c = *one;
		c->min = c->max = one->total;
		c->sum = c->sumsq = 0;
	}
	c->min = one->total < c->min ? one->total : c->min;
	c->max = one->total > c->max ? one->total : c->max;
	c->zeroes_per_frame = (c->zeroes_per_frame * c->rounds + one->zeroes_per_frame) / n;
	c->sum += one->total;
	c->sumsq += one->total * one->total;
	c->rounds = n;
	mean = c->sum / n;
	var = n > 1 ? (c->sumsq - n * mean * mean) / (n - 1) : 0;
	c->total = mean;
	c->coeffvar = mean > 0 && var > 0 ? 100 * sqrt(var) / mean : 0;
}

/*
 * run_rounds - @opt->rounds rounds of each of @variants, alternating, added to @series, each
 * round after a run of the ceiling (if the workload has one and @ceiling is not NULL), so that
 * a design and its ceiling are seconds apart and the ceiling's spread shows how much the
 * machine moved. A variant's knob
 * reaches the machine through a copy of @opt (lvb_variant_apply()).
 * Return: 0, or -1 after describing the error.
 */
static int run_rounds(const struct lvb_workload *wl, const struct lvb_common *opt,
		      const void *params, const struct lvb_variant *variants,
		      unsigned int nr_designs, struct lvb_series *series,
		      struct lvb_ceiling *ceiling)
{
	unsigned int total = opt->rounds * nr_designs, done = 0;
	const char *noun = column_noun(opt);
	int err;

	if (ceiling)
		memset(ceiling, 0, sizeof(*ceiling));
	for (unsigned int r = 0; r < opt->rounds; r++) {
		if (ceiling && wl->ceiling) {
			struct lvb_ceiling one = { 0 };

			lvb_progress_label("%s, %u container%s, ceiling %u/%u", wl->name,
					   opt->containers, lvb_plural(opt->containers), r + 1,
					   opt->rounds);
			err = wl->ceiling(opt, params, &one);
			if (err) {
				fprintf(stderr, "lvbench: %s, ceiling: %s\n", wl->name,
					strerror(-err));
				return -1;
			}
			ceiling_add(ceiling, &one);
		}
		for (unsigned int d = 0; d < nr_designs; d++) {
			struct lvb_result res = { 0 };
			struct lvb_common o;
			enum lv_lock_design design = lvb_variant_apply(&variants[d], opt, &o);

			lvb_progress_label("%s, %u container%s, %s %s, run %u/%u", wl->name,
					   opt->containers, lvb_plural(opt->containers),
					   variants[d].name, noun, ++done, total);
			err = wl->run(&o, params, design, &res);
			if (!err)
				err = lvb_series_add(&series[d], wl, &res);
			series[d].column = variants[d].name;
			series[d].no_sites = o.lock_sites == 0;
			lvb_result_free(&res);
			if (err) {
				fprintf(stderr, "lvbench: %s, %s %s: %s\n", wl->name,
					variants[d].name, noun, strerror(-err));
				return -1;
			}
		}
	}
	return 0;
}

/* One JSON object per column, each with the options its rounds ran with. */
static void print_json_columns(const struct lvb_workload *wl, const struct lvb_common *opt,
			       const void *params, const struct lvb_variant *variants,
			       const struct lvb_series *series, unsigned int n,
			       const struct lvb_ceiling *ceiling)
{
	for (unsigned int d = 0; d < n; d++) {
		struct lvb_common o;

		lvb_variant_apply(&variants[d], opt, &o);
		lvb_print_json(stdout, wl, &o, params, &series[d], ceiling);
	}
}

static unsigned int count_failures(const struct lvb_series *s, unsigned int n)
{
	unsigned int failures = 0;

	for (unsigned int d = 0; d < n; d++)
		failures += s[d].failures;
	return failures;
}

/* ---- sweep ----------------------------------------------------------------------------------- */

struct sweep_point {
	unsigned int containers, threads;
	double mean[LVB_MAX_VARIANTS]; /* arithmetic mean rate per thread, per column */
	double ceiling_per;	       /* per thread; 0 without a ceiling */
};

static double sample_mean(const struct lvb_series *s)
{
	double sum = 0;

	for (size_t i = 0; i < s->nr_samples; i++)
		sum += s->samples[i];
	return s->nr_samples ? sum / (double)s->nr_samples : 0;
}

/*
 * The sweep's columns: each column's mean, the ratio of each to the first, the contended
 * fraction of each, the ceiling and each column's share of it. A label longer than the
 * 12 columns of a value widens its column.
 */
struct sweep_cols {
	unsigned int n;
	char ratio[LVB_MAX_VARIANTS][40], cont[LVB_MAX_VARIANTS][40], pct[LVB_MAX_VARIANTS][40];
	int w_mean[LVB_MAX_VARIANTS], w_ratio[LVB_MAX_VARIANTS], w_cont[LVB_MAX_VARIANTS];
	int w_pct[LVB_MAX_VARIANTS];
};

static int width(const char *label, int min)
{
	int len = (int)strlen(label);

	return len > min ? len : min;
}

static void sweep_cols_init(struct sweep_cols *c, const struct lvb_by_kind *k)
{
	c->n = k->nr;
	for (unsigned int d = 0; d < k->nr; d++) {
		snprintf(c->ratio[d], sizeof(c->ratio[d]), "%s/%s", k->column[d], k->column[0]);
		snprintf(c->cont[d], sizeof(c->cont[d]), "%s cont", k->column[d]);
		snprintf(c->pct[d], sizeof(c->pct[d]), "%s%%", k->column[d]);
		c->w_mean[d] = width(k->column[d], 12);
		c->w_ratio[d] = width(c->ratio[d], 12);
		c->w_cont[d] = width(c->cont[d], 12);
		c->w_pct[d] = width(c->pct[d], 9);
	}
}

static void sweep_header(FILE *out, const struct lvb_workload *wl, const struct lvb_common *opt,
			 const void *params, const struct sweep_cols *c)
{
	const struct lvb_by_kind *k = &lvb_by_kinds[opt->by];
	char per_plural[32], order[2 * LVB_MAX_VARIANTS + 1], batch[16], knobs[96];

	snprintf(per_plural, sizeof(per_plural), "%ss", rate_per(wl));
	fprintf(out, "lvbench compare %s --sweep: ", wl->name);
	for (unsigned int d = 0; d < k->nr; d++)
		fprintf(out, "%s%s", d ? " vs " : "", k->column[d]);
	fprintf(out, " %s, ", k->what);
	if (opt->by != LVB_BY_LOCK)
		fprintf(out, "%s lru_lock, ",
			lvb_lock_names[opt->lock == LVB_UNSET ? LV_LOCK_LRUVEC : opt->lock]);
	fprintf(out, "%s order, %u round%s of %g s per %s and container count\n",
		round_order(k->nr, order), opt->rounds, lvb_plural(opt->rounds),
		round_seconds(wl, opt, params), k->noun);
	fprintf(out, "%u online CPU%s, %u node%s x %u MiB, %s locks, batch %s%s\n",
		lvb_online_cpus(), lvb_plural(lvb_online_cpus()), opt->nodes,
		lvb_plural(opt->nodes), opt->memory_mib, lvb_backend_names[opt->backend],
		batch_str(opt, k->nr, batch), knobs_str(opt, k->nr, knobs, sizeof(knobs)));
	if (wl->describe)
		wl->describe(out, opt, params);
	fprintf(out, "%s per %s: arithmetic mean over the %ss of all rounds;\n", rate_unit(wl),
		rate_per(wl), rate_per(wl));
	fprintf(out, "cont: contended/acquired of the LRU lock; ceiling: per %s\n\n", rate_per(wl));
	fprintf(out, "%10s %8s", "containers", per_plural);
	for (unsigned int d = 0; d < c->n; d++)
		fprintf(out, " %*s", c->w_mean[d], k->column[d]);
	for (unsigned int d = 1; d < c->n; d++)
		fprintf(out, " %*s", c->w_ratio[d], c->ratio[d]);
	for (unsigned int d = 0; d < c->n; d++)
		fprintf(out, " %*s", c->w_cont[d], c->cont[d]);
	fprintf(out, " %12s", "ceiling");
	for (unsigned int d = 0; d < c->n; d++)
		fprintf(out, " %*s", c->w_pct[d], c->pct[d]);
	fputc('\n', out);
}

static void sweep_row(FILE *out, const struct sweep_point *p, const struct lvb_series *s,
		      const struct sweep_cols *c)
{
	char r[32];

	fprintf(out, "%10u %8u", p->containers, p->threads);
	for (unsigned int d = 0; d < c->n; d++)
		fprintf(out, " %*.1f", c->w_mean[d], p->mean[d]);
	for (unsigned int d = 1; d < c->n; d++) {
		if (p->mean[0] > 0)
			snprintf(r, sizeof(r), "%.2fx", p->mean[d] / p->mean[0]);
		else
			snprintf(r, sizeof(r), "n/a");
		fprintf(out, " %*s", c->w_ratio[d], r);
	}
	for (unsigned int d = 0; d < c->n; d++) {
		struct lv_lock_stat l = lvb_lru_lock(&s[d]);

		fprintf(out, " %*.3f%%", c->w_cont[d] - 1, 100 * lvb_contended_fraction(&l));
	}
	if (p->ceiling_per > 0) {
		fprintf(out, " %12.1f", p->ceiling_per);
		for (unsigned int d = 0; d < c->n; d++)
			fprintf(out, " %*.1f%%", c->w_pct[d] - 1,
				100 * p->mean[d] / p->ceiling_per);
	} else {
		fprintf(out, " %12s", "-");
		for (unsigned int d = 0; d < c->n; d++)
			fprintf(out, " %*s", c->w_pct[d], "-");
	}
	fputc('\n', out);
	fflush(out);
}

/* Single quotes inside a gnuplot single-quoted string are doubled. */
static void gnuplot_string(FILE *gp, const char *s)
{
	fputc('\'', gp);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', gp);
		fputc(*s, gp);
	}
	fputc('\'', gp);
}

/* A title for the enhanced terminal: '_' would start a subscript. */
static void gnuplot_title(FILE *gp, const char *s)
{
	fputc('\'', gp);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', gp);
		else if (*s == '_' || *s == '^')
			fputc('\\', gp);
		fputc(*s, gp);
	}
	fputc('\'', gp);
}

static int sweep_plot(const struct lvb_workload *wl, const struct lvb_common *opt,
		      const void *params, const struct sweep_point *pts, unsigned int n)
{
	static const int point_types[LVB_MAX_VARIANTS] = { 7, 5, 9, 13 };
	const struct lvb_by_kind *k = &lvb_by_kinds[opt->by];
	unsigned int lo = pts[0].containers, hi = pts[0].containers;
	bool ceiling = false;
	int status;
	FILE *gp;

	for (unsigned int i = 0; i < n; i++) {
		lo = pts[i].containers < lo ? pts[i].containers : lo;
		hi = pts[i].containers > hi ? pts[i].containers : hi;
		ceiling |= pts[i].ceiling_per > 0;
	}
	fflush(NULL);
	gp = popen("gnuplot", "w");
	if (!gp) {
		fprintf(stderr, "lvbench: --plot: cannot run gnuplot: %s\n", strerror(errno));
		return -1;
	}
	/* Inline data: no temporary file to name, clean up or race on. */
	fprintf(gp, "$data << EOD\n");
	for (unsigned int i = 0; i < n; i++) {
		fprintf(gp, "%u", pts[i].containers);
		for (unsigned int d = 0; d < k->nr; d++)
			fprintf(gp, " %.6g", pts[i].mean[d]);
		fprintf(gp, " %.6g\n", pts[i].ceiling_per);
	}
	fprintf(gp, "EOD\n");
	fprintf(gp, "set terminal svg size 900,560 dynamic enhanced background rgb 'white' "
		    "font 'sans,12'\nset output ");
	gnuplot_string(gp, opt->plot);
	fprintf(gp,
		"\nset title 'lvbench compare %s: %s per %s (mean), %u round%s of %g s, "
		"%u MiB x %u node%s, %u CPU%s'\n",
		wl->name, rate_unit(wl), rate_per(wl), opt->rounds, lvb_plural(opt->rounds),
		round_seconds(wl, opt, params), opt->memory_mib, opt->nodes, lvb_plural(opt->nodes),
		lvb_online_cpus(), lvb_plural(lvb_online_cpus()));
	fprintf(gp, "set xlabel 'containers (memory cgroups)'\nset ylabel '%s per %s'\n",
		rate_unit(wl), rate_per(wl));
	fprintf(gp, "set logscale x 2\nset xrange [%g:%g]\nset xtics (", lo / 1.4, hi * 1.4);
	for (unsigned int i = 0; i < n; i++)
		fprintf(gp, "%s%u", i ? ", " : "", pts[i].containers);
	fprintf(gp, ")\nset yrange [0:*]\nset grid\nset key below\n");
	/* The ceiling is many times the designs' rates: its own axis keeps them readable. */
	if (ceiling)
		fprintf(gp,
			"set y2range [0:*]\nset y2tics\nset ytics nomirror\n"
			"set y2label 'ceiling, %s per %s'\n",
			rate_unit(wl), rate_per(wl));
	fprintf(gp, "plot ");
	for (unsigned int d = 0; d < k->nr; d++) {
		fprintf(gp, "%s$data using 1:%u with linespoints lw 2 pt %d title ",
			d ? ", \\\n     " : "", d + 2, point_types[d]);
		gnuplot_title(gp, k->legend[d] ? k->legend[d] : k->column[d]);
	}
	if (ceiling)
		fprintf(gp,
			", \\\n     $data using 1:%u axes x1y2 with linespoints dt 2 pt 1 "
			"title 'ceiling: memory work only (right axis)'",
			k->nr + 2);
	fprintf(gp, "\n");
	status = pclose(gp);
	if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "lvbench: --plot: gnuplot failed (see above); %s not written\n",
			opt->plot);
		return -1;
	}
	return 0;
}

/* sweep_opts - @sw's options at count @i: that many containers, the workload's threads. */
static void sweep_opts(const struct lvb_sweep *sw, unsigned int i, struct lvb_common *o)
{
	*o = *sw->opt;
	o->containers = sw->opt->sweep.v[i];
	o->sweep.n = 0;
	if (sw->wl->nr_threads)
		o->threads = sw->wl->nr_threads(o, sw->params);
}

/**
 * lvb_sweep_run - @sw->variants at each container count of @sw->opt->sweep, each count's
 * rounds handed to @sw->ops: count after count, each row printed as soon as its rounds are
 * done; or, with @ops->interleave, one round of every count in turn, --rounds times, so that
 * a slow minute of the machine hits every count alike, and the rows at the end.
 * Return: an exit status.
 */
int lvb_sweep_run(struct lvb_sweep *sw)
{
	const struct lvb_sweep_ops *ops = sw->ops;
	const struct lvb_common *opt = sw->opt;
	unsigned int n = opt->sweep.n, nv = sw->nr_variants, failures = 0;
	unsigned int passes = ops->interleave ? opt->rounds : 1;
	struct lvb_series *series = calloc((size_t)n * nv, sizeof(*series));
	struct lvb_ceiling *ceilings = calloc(n, sizeof(*ceilings));
	int ret = LVB_EXIT_OK;

	if (!series || !ceilings) {
		perror("lvbench");
		ret = LVB_EXIT_FAIL;
		goto out;
	}
	if (!opt->json && ops->header)
		ops->header(sw);
	for (unsigned int p = 0; p < passes && !ret; p++) {
		for (unsigned int i = 0; i < n && !ret; i++) {
			struct lvb_series *s = &series[i * nv];
			struct lvb_common o;

			sweep_opts(sw, i, &o);
			if (ops->interleave)
				o.rounds = 1;
			if ((!p && ops->start && ops->start(sw, i, &o)) ||
			    run_rounds(sw->wl, &o, sw->params, sw->variants, nv, s,
				       !p && ops->ceiling ? &ceilings[i] : NULL)) {
				ret = LVB_EXIT_FAIL;
			} else if (!ops->interleave) {
				ops->row(sw, i, &o, s, &ceilings[i]);
				failures += count_failures(s, nv);
			}
		}
	}
	for (unsigned int i = 0; ops->interleave && !ret && i < n; i++) {
		struct lvb_common o;

		sweep_opts(sw, i, &o);
		ops->row(sw, i, &o, &series[i * nv], &ceilings[i]);
		failures += count_failures(&series[i * nv], nv);
	}
	if (!ret && ops->end && ops->end(sw))
		ret = LVB_EXIT_FAIL;
	if (failures) {
		fprintf(stderr, "lvbench: %u failure%s (see above): the run is not valid\n",
			failures, lvb_plural(failures));
		ret = LVB_EXIT_FAIL;
	}
out:
	for (size_t k = 0; series && k < (size_t)n * nv; k++)
		lvb_series_free(&series[k]);
	free(series);
	free(ceilings);
	fflush(stdout);
	return ret;
}

/* compare's sweep: one point per count (the plot's), the columns of its rows. */
struct compare_sweep {
	struct sweep_point pts[LVB_MAX_LIST];
	struct sweep_cols cols;
};

static void compare_sweep_header(struct lvb_sweep *sw)
{
	struct compare_sweep *cs = sw->priv;

	sweep_header(stdout, sw->wl, sw->opt, sw->params, &cs->cols);
}

static void compare_sweep_row(struct lvb_sweep *sw, unsigned int i, const struct lvb_common *o,
			      const struct lvb_series *s, const struct lvb_ceiling *c)
{
	struct compare_sweep *cs = sw->priv;
	struct sweep_point *p = &cs->pts[i];

	*p = (struct sweep_point){ .containers = o->containers, .threads = o->threads };
	for (unsigned int d = 0; d < sw->nr_variants; d++)
		p->mean[d] = sample_mean(&s[d]);
	if (c->valid && c->threads)
		p->ceiling_per = c->total / c->threads;
	if (o->json)
		print_json_columns(sw->wl, o, sw->params, sw->variants, s, sw->nr_variants, c);
	else
		sweep_row(stdout, p, s, &cs->cols);
}

static int compare_sweep_end(struct lvb_sweep *sw)
{
	struct compare_sweep *cs = sw->priv;

	if (!sw->opt->plot)
		return 0;
	if (sweep_plot(sw->wl, sw->opt, sw->params, cs->pts, sw->opt->sweep.n))
		return -1;
	if (!sw->opt->json)
		printf("\nPlot written to %s\n", sw->opt->plot);
	return 0;
}

static int sweep(const struct lvb_workload *wl, const struct lvb_common *opt, const void *params,
		 const struct lvb_variant *designs, unsigned int nr_designs)
{
	static const struct lvb_sweep_ops ops = {
		.ceiling = true,
		.header = compare_sweep_header,
		.row = compare_sweep_row,
		.end = compare_sweep_end,
	};
	struct compare_sweep cs = { 0 };
	struct lvb_sweep sw = { wl, opt, params, designs, nr_designs, &ops, &cs };

	sweep_cols_init(&cs.cols, &lvb_by_kinds[opt->by]);
	return lvb_sweep_run(&sw);
}

/**
 * lvb_bench - run @opt->rounds rounds of each of @designs (at most LVB_MAX_VARIANTS columns:
 * lock designs, disable modes or the values of another --by knob), alternating, and print the
 * result; with opt->sweep, once per container count.
 * Return: an exit status.
 */
int lvb_bench(const struct lvb_workload *wl, const struct lvb_common *opt, const void *params,
	      const struct lvb_variant *designs, unsigned int nr_designs)
{
	struct lvb_series series[LVB_MAX_VARIANTS] = { 0 };
	struct lvb_ceiling ceiling;
	unsigned int failures;
	int ret = LVB_EXIT_OK;

	if (opt->sweep.n)
		return sweep(wl, opt, params, designs, nr_designs);
	if (run_rounds(wl, opt, params, designs, nr_designs, series, &ceiling)) {
		ret = LVB_EXIT_FAIL;
		goto out;
	}
	if (opt->json)
		print_json_columns(wl, opt, params, designs, series, nr_designs, &ceiling);
	else if (print_human(stdout, wl, opt, params, series, nr_designs, &ceiling))
		ret = LVB_EXIT_FAIL;
	failures = count_failures(series, nr_designs);
	if (failures) {
		fprintf(stderr, "lvbench: %u failure%s (see above): the run is not valid\n",
			failures, lvb_plural(failures));
		ret = LVB_EXIT_FAIL;
	}
out:
	fflush(stdout);
	for (unsigned int d = 0; d < nr_designs; d++)
		lvb_series_free(&series[d]);
	return ret;
}
