// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Statistics and output formats: the rows of mmtests compare, the lock table of
 * `perf lock report`, the call-site table of `perf lock contention`, and JSON.
 *
 * The statistics follow mmtests compare as the published runs used it (docs/benchmarks.md
 * defines each row), so that numbers can be put next to published ones: samples sorted best
 * first (descending: ops/s are higher-is-better), harmonic mean rather than arithmetic, sample
 * standard deviation (divisor n - 1), and BHmean-N as the harmonic mean of the best
 * max(1, int(n * N / 100)) samples.
 */
#include "lvbench.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- statistics ------------------------------------------------------------------------------ */

static int cmp_desc(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x < y) - (x > y);
}

/* lvb_median - the median of the @n values at @v (sorted in place, best first); 0 if none. */
double lvb_median(double *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_desc);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A thread that never ran makes the harmonic mean collapse to 0, as 1/0 would. */
static double hmean(const double *x, size_t n)
{
	double inv = 0;

	for (size_t i = 0; i < n; i++) {
		if (x[i] <= 0)
			return 0;
		inv += 1 / x[i];
	}
	return n ? (double)n / inv : 0;
}

/* @sorted is best first; integer arithmetic gives mmtests' int(n * pct / 100) exactly. */
static double bhmean(const double *sorted, size_t n, size_t pct)
{
	size_t k = n * pct / 100;

	return hmean(sorted, k ? k : 1);
}

int lvb_stats_compute(const double *x, size_t n, struct lvb_stats *st)
{
	double *s, sum = 0, sq = 0;

	memset(st, 0, sizeof(*st));
	st->n = n;
	if (!n)
		return 0;
	s = malloc(n * sizeof(*s));
	if (!s)
		return -ENOMEM;
	memcpy(s, x, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_desc);
	st->max = s[0];
	st->min = s[n - 1];
	for (size_t i = 0; i < n; i++)
		sum += s[i];
	st->amean = sum / (double)n;
	for (size_t i = 0; i < n; i++)
		sq += (s[i] - st->amean) * (s[i] - st->amean);
	st->stddev = n > 1 ? sqrt(sq / (double)(n - 1)) : 0;
	st->coeffvar = st->amean ? 100 * st->stddev / st->amean : 0;
	st->hmean = hmean(s, n);
	st->bhmean50 = bhmean(s, n, 50);
	st->bhmean95 = bhmean(s, n, 95);
	st->bhmean99 = bhmean(s, n, 99);
	free(s);
	return 0;
}

/**
 * lvb_series_stats - the statistics of @s's samples: of all of them together, or, when they
 * come in groups (s->sample_group: one container's iterations in one round), each statistic
 * computed per group and then averaged over the groups, as Alex Shi averaged mmtests' rows over
 * containers in his aim9 table (docs/benchmarks.md, aim9). st->n is the number of samples.
 * Return: 0 or -ENOMEM.
 */
int lvb_series_stats(const struct lvb_series *s, struct lvb_stats *st)
{
	size_t g = s->sample_group, groups = g ? s->nr_samples / g : 0;
	struct lvb_stats one;

	if (!groups)
		return lvb_stats_compute(s->samples, s->nr_samples, st);
	memset(st, 0, sizeof(*st));
	for (size_t i = 0; i < groups; i++) {
		if (lvb_stats_compute(s->samples + i * g, g, &one))
			return -ENOMEM;
		st->min += one.min / (double)groups;
		st->max += one.max / (double)groups;
		st->amean += one.amean / (double)groups;
		st->hmean += one.hmean / (double)groups;
		st->stddev += one.stddev / (double)groups;
		st->coeffvar += one.coeffvar / (double)groups;
		st->bhmean50 += one.bhmean50 / (double)groups;
		st->bhmean95 += one.bhmean95 / (double)groups;
		st->bhmean99 += one.bhmean99 / (double)groups;
	}
	st->n = groups * g;
	return 0;
}

double lvb_contended_fraction(const struct lv_lock_stat *s)
{
	return s->acquired ? (double)s->contended / (double)s->acquired : 0;
}

/* ---- the lock table -------------------------------------------------------------------------- */

static uint64_t avg_wait(const struct lv_lock_stat *s)
{
	return s->contended ? s->wait_total_ns / s->contended : 0;
}

/**
 * lvb_print_locks - the lock classes @s used, most acquired first as `perf lock report` sorts,
 * in its columns, plus the contended fraction.
 */
void lvb_print_locks(FILE *out, const struct lvb_series *s)
{
	int order[LV_NR_LOCK_CLASSES], n = 0;

	for (int cls = 0; cls < LV_NR_LOCK_CLASSES; cls++)
		if (s->locks[cls].acquired)
			order[n++] = cls;
	for (int i = 1; i < n; i++)
		for (int j = i;
		     j > 0 && s->locks[order[j]].acquired > s->locks[order[j - 1]].acquired; j--) {
			int t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
		}

	fprintf(out, "%20s %12s %12s %15s %17s %15s %15s %10s\n", "Name", "acquired", "contended",
		"avg wait (ns)", "total wait (ns)", "max wait (ns)", "min wait (ns)", "contended%");
	for (int i = 0; i < n; i++) {
		const struct lv_lock_stat *l = &s->locks[order[i]];

		fprintf(out, "%20s %12llu %12llu %15llu %17llu %15llu %15llu %9.3f%%\n",
			lv_lock_class_name((enum lv_lock_class)order[i]),
			(unsigned long long)l->acquired, (unsigned long long)l->contended,
			(unsigned long long)avg_wait(l), (unsigned long long)l->wait_total_ns,
			(unsigned long long)l->wait_max_ns, (unsigned long long)l->wait_min_ns,
			100 * lvb_contended_fraction(l));
	}
	/* What the batch policy changes: how many lock holds each flush of a batch took. */
	if (s->batch.flushes)
		fprintf(out,
			"%20s %12llu flushes, %.2f lock holds per flush, %.2f folios per hold\n",
			"batches", (unsigned long long)s->batch.flushes,
			(double)s->batch.holds / (double)s->batch.flushes,
			s->batch.holds ? (double)s->batch.folios / (double)s->batch.holds : 0.0);
}

/* ---- the call-site table ------------------------------------------------------------------- */

static int site_cmp_key(const void *a, const void *b)
{
	const struct lv_lock_site_stat *x = a, *y = b;
	int c = strcmp(x->caller, y->caller);

	return c ? c : (int)x->cls - (int)y->cls;
}

/* Most total wait first, as `perf lock contention` sorts by default. */
static int site_cmp_wait(const void *a, const void *b)
{
	const struct lv_lock_site_stat *x = a, *y = b;

	if (x->wait_total_ns != y->wait_total_ns)
		return x->wait_total_ns < y->wait_total_ns ? 1 : -1;
	if (x->contended != y->contended)
		return x->contended < y->contended ? 1 : -1;
	return site_cmp_key(a, b);
}

/**
 * lvb_sites_merge - add @nr_add sites into the array *@sites of *@nr, summing those with the
 * same caller and class (one round's site is the next round's), most wait first.
 * Return: 0 or -ENOMEM (*@sites unchanged).
 */
int lvb_sites_merge(struct lv_lock_site_stat **sites, size_t *nr,
		    const struct lv_lock_site_stat *add, size_t nr_add)
{
	struct lv_lock_site_stat *all;
	size_t n = *nr, merged = 0;

	if (!nr_add)
		return 0;
	all = malloc((n + nr_add) * sizeof(*all));
	if (!all)
		return -ENOMEM;
	if (n)
		memcpy(all, *sites, n * sizeof(*all));
	memcpy(all + n, add, nr_add * sizeof(*all));
	n += nr_add;
	qsort(all, n, sizeof(*all), site_cmp_key);
	for (size_t i = 0; i < n; i++) {
		struct lv_lock_site_stat *last = merged ? &all[merged - 1] : NULL;

		if (last && !site_cmp_key(last, &all[i])) {
			last->contended += all[i].contended;
			last->wait_total_ns += all[i].wait_total_ns;
			if (all[i].wait_max_ns > last->wait_max_ns)
				last->wait_max_ns = all[i].wait_max_ns;
		} else {
			all[merged++] = all[i];
		}
	}
	qsort(all, merged, sizeof(*all), site_cmp_wait);
	free(*sites);
	*sites = all;
	*nr = merged;
	return 0;
}

/* fmt_time - @ns as perf lock contention prints times: "126.32 ms", "92.41 us", "640 ns". */
static const char *fmt_time(char *buf, size_t len, uint64_t ns)
{
	if (ns >= 1000000000ull)
		snprintf(buf, len, "%.2f s", (double)ns / 1e9);
	else if (ns >= 1000000ull)
		snprintf(buf, len, "%.2f ms", (double)ns / 1e6);
	else if (ns >= 1000ull)
		snprintf(buf, len, "%.2f us", (double)ns / 1e3);
	else
		snprintf(buf, len, "%llu ns", (unsigned long long)ns);
	return buf;
}

static uint64_t site_avg_wait(const struct lv_lock_site_stat *st)
{
	return st->contended ? st->wait_total_ns / st->contended : 0;
}

/**
 * lvb_print_sites - the LVB_TOP_SITES call sites of @s with the most total wait, in the columns
 * of `perf lock contention` (its "type" is the lock class here), or a line saying there were
 * none.
 */
void lvb_print_sites(FILE *out, const struct lvb_series *s)
{
	size_t n = s->nr_sites < LVB_TOP_SITES ? s->nr_sites : LVB_TOP_SITES;
	char total[32], max[32], avg[32];

	if (s->no_sites) {
		fprintf(out, "  (not recorded: --lock-sites off)\n");
		return;
	}
	if (!n) {
		fprintf(out, "  (no contended acquisition recorded)\n");
		return;
	}
	fprintf(out, "%12s %12s %12s %12s %10s   %s\n", "contended", "total wait", "max wait",
		"avg wait", "type", "caller");
	for (size_t i = 0; i < n; i++) {
		const struct lv_lock_site_stat *st = &s->sites[i];

		fprintf(out, "%12llu %12s %12s %12s %10s   %s\n", (unsigned long long)st->contended,
			fmt_time(total, sizeof(total), st->wait_total_ns),
			fmt_time(max, sizeof(max), st->wait_max_ns),
			fmt_time(avg, sizeof(avg), site_avg_wait(st)), lv_lock_class_name(st->cls),
			st->caller);
	}
}

/* ---- JSON ------------------------------------------------------------------------------------ */

static void json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

/* JSON has no NaN or infinity. */
static void json_number(FILE *out, double v)
{
	if (isfinite(v))
		fprintf(out, "%.3f", v);
	else
		fputs("null", out);
}

void lvb_json_key(FILE *out, bool *first, const char *key)
{
	if (!*first)
		fputc(',', out);
	*first = false;
	json_string(out, key);
	fputc(':', out);
}

void lvb_json_u64(FILE *out, bool *first, const char *key, uint64_t v)
{
	lvb_json_key(out, first, key);
	fprintf(out, "%llu", (unsigned long long)v);
}

void lvb_json_double(FILE *out, bool *first, const char *key, double v)
{
	lvb_json_key(out, first, key);
	json_number(out, v);
}

void lvb_json_str(FILE *out, bool *first, const char *key, const char *v)
{
	lvb_json_key(out, first, key);
	json_string(out, v);
}

static void json_stats(FILE *out, const struct lvb_stats *st)
{
	bool first = true;

	fputc('{', out);
	lvb_json_u64(out, &first, "n", st->n);
	lvb_json_double(out, &first, "min", st->min);
	lvb_json_double(out, &first, "max", st->max);
	lvb_json_double(out, &first, "amean", st->amean);
	lvb_json_double(out, &first, "hmean", st->hmean);
	lvb_json_double(out, &first, "stddev", st->stddev);
	lvb_json_double(out, &first, "coeffvar", st->coeffvar);
	lvb_json_double(out, &first, "bhmean50", st->bhmean50);
	lvb_json_double(out, &first, "bhmean95", st->bhmean95);
	lvb_json_double(out, &first, "bhmean99", st->bhmean99);
	fputc('}', out);
}

static void json_locks(FILE *out, const struct lvb_series *s)
{
	/* Every class, used or not, so that consumers can index by name in both designs. */
	fputc('[', out);
	for (int cls = 0; cls < LV_NR_LOCK_CLASSES; cls++) {
		const struct lv_lock_stat *l = &s->locks[cls];
		bool first = true;

		fputs(cls ? ",{" : "{", out);
		lvb_json_str(out, &first, "name", lv_lock_class_name((enum lv_lock_class)cls));
		lvb_json_u64(out, &first, "acquired", l->acquired);
		lvb_json_u64(out, &first, "contended", l->contended);
		lvb_json_key(out, &first, "contended_fraction");
		fprintf(out, "%.6f", lvb_contended_fraction(l));
		lvb_json_u64(out, &first, "wait_total_ns", l->wait_total_ns);
		lvb_json_u64(out, &first, "wait_avg_ns", avg_wait(l));
		lvb_json_u64(out, &first, "wait_max_ns", l->wait_max_ns);
		lvb_json_u64(out, &first, "wait_min_ns", l->wait_min_ns);
		fputc('}', out);
	}
	fputc(']', out);
}

/* Every site, most wait first: "caller", "type" (the class), the counts and waits. */
static void json_sites(FILE *out, const struct lvb_series *s)
{
	fputc('[', out);
	for (size_t i = 0; i < s->nr_sites; i++) {
		const struct lv_lock_site_stat *st = &s->sites[i];
		bool first = true;

		fputs(i ? ",{" : "{", out);
		lvb_json_str(out, &first, "caller", st->caller);
		lvb_json_str(out, &first, "type", lv_lock_class_name(st->cls));
		lvb_json_u64(out, &first, "contended", st->contended);
		lvb_json_u64(out, &first, "wait_total_ns", st->wait_total_ns);
		lvb_json_u64(out, &first, "wait_max_ns", st->wait_max_ns);
		lvb_json_u64(out, &first, "wait_avg_ns", site_avg_wait(st));
		fputc('}', out);
	}
	fputc(']', out);
}

static const enum lv_stat_item json_vmstat_items[] = {
	LV_PGACTIVATE,
	LV_PGDEACTIVATE,
	LV_PGLAZYFREE,
	LV_PGROTATED,
	LV_PGMOVED,
	LV_LOCK_RETRIES,
	LV_PGSCAN,
	LV_PGSTEAL,
	LV_PGREFILL,
	LV_WORKINGSET_REFAULT,
	LV_WORKINGSET_ACTIVATE,
	LV_WORKINGSET_NODERECLAIM,
	LV_ALLOCSTALL,
	LV_RECLAIM_SKIP_BUSY,
	LV_RECLAIM_DRAIN,
	LV_PGPGIN,
	LV_FILE_RA,
};

/* json_rounds - the per-round totals of @s as a JSON array. */
static void json_rounds(FILE *out, const struct lvb_series *s)
{
	fputc('[', out);
	for (unsigned int r = 0; r < s->rounds; r++) {
		if (r)
			fputc(',', out);
		json_number(out, s->round_rate[r]);
	}
	fputc(']', out);
}

/* <prefix>_<per>_mean, <prefix>_total, ceiling_<prefix>: "mb_per_s_reader_mean", ... */
static void json_rate(FILE *out, bool *first, const struct lvb_rate *rate,
		      const struct lvb_stats *st, const struct lvb_series *s,
		      const struct lvb_ceiling *c)
{
	char key[96];

	snprintf(key, sizeof(key), "%s_%s_mean", rate->json_prefix, rate->per);
	lvb_json_double(out, first, key, st->amean);
	snprintf(key, sizeof(key), "%s_%s", rate->json_prefix, rate->per);
	lvb_json_key(out, first, key);
	json_stats(out, st);
	snprintf(key, sizeof(key), "%s_total", rate->json_prefix);
	lvb_json_double(out, first, key, lvb_series_rate(s));
	snprintf(key, sizeof(key), "%s_round_total", rate->json_prefix);
	lvb_json_key(out, first, key);
	json_rounds(out, s);
	if (c && c->valid) {
		snprintf(key, sizeof(key), "ceiling_%s", rate->json_prefix);
		lvb_json_double(out, first, key, c->total);
		lvb_json_double(out, first, "ceiling_fraction",
				c->total > 0 ? lvb_series_rate(s) / c->total : 0);
		lvb_json_u64(out, first, "ceiling_rounds", c->rounds);
		lvb_json_double(out, first, "ceiling_min", c->min);
		lvb_json_double(out, first, "ceiling_max", c->max);
		lvb_json_double(out, first, "ceiling_coeffvar", c->coeffvar);
	}
}

/** lvb_print_json - @s as one JSON object on one line. */
void lvb_print_json(FILE *out, const struct lvb_workload *wl, const struct lvb_common *opt,
		    const void *params, const struct lvb_series *s, const struct lvb_ceiling *ceil)
{
	unsigned int cpus = lvb_online_cpus();
	struct lvb_stats st;
	bool first = true, f;

	lvb_series_stats(s, &st);
	fputc('{', out);
	lvb_json_str(out, &first, "workload", wl->name);
	lvb_json_str(out, &first, "lock", lvb_lock_names[s->design]);
	lvb_json_str(out, &first, "column", s->column ? s->column : lvb_lock_names[s->design]);
	lvb_json_str(out, &first, "backend", lvb_backend_names[opt->backend]);
	lvb_json_u64(out, &first, "threads", opt->threads);
	lvb_json_u64(out, &first, "containers", opt->containers);
	lvb_json_u64(out, &first, "nodes", opt->nodes);
	lvb_json_u64(out, &first, "memory_mib_per_node", opt->memory_mib);
	lvb_json_u64(out, &first, "cpus", cpus);
	lvb_json_double(out, &first, "threads_per_cpu", (double)opt->threads / cpus);
	lvb_json_double(out, &first, "duration_s", opt->duration);
	lvb_json_u64(out, &first, "rounds", s->rounds);
	lvb_json_u64(out, &first, "batch", opt->batch);
	/* The library's settings of this column; unset ones are the library's defaults. */
	lvb_json_key(out, &first, "batch_large");
	fputs(opt->batch_large == 1 ? "true" : "false", out);
	lvb_json_str(
		out, &first, "scan_cost",
		lvb_scan_cost_names[opt->scan_cost == LVB_UNSET ? LV_COST_LOCKED : opt->scan_cost]);
	lvb_json_key(out, &first, "record_lock_sites");
	fputs(opt->lock_sites == 0 ? "false" : "true", out);
	lvb_json_str(out, &first, "batch_policy",
		     lvb_batch_policy_names[opt->batch_policy == LVB_UNSET ? LV_BATCH_ARRIVAL
									   : opt->batch_policy]);
	if (wl->features & LVB_WL_FOLIO_ORDER)
		lvb_json_u64(out, &first, "folio_order",
			     opt->folio_order == LVB_UNSET ? 0 : opt->folio_order);
	lvb_json_u64(out, &first, "seed", opt->seed);
	lvb_json_double(out, &first, "elapsed_s", s->elapsed);
	lvb_json_u64(out, &first, "ops", s->ops);
	if (s->sample_group) {
		/* Statistics averaged over groups (aim9): ops_per_sec is their object. */
		lvb_json_key(out, &first, "ops_per_sec");
		json_stats(out, &st);
		lvb_json_double(out, &first, "ops_per_sec_total",
				s->elapsed > 0 ? (double)s->ops / s->elapsed : 0);
	} else {
		lvb_json_double(out, &first, "ops_per_sec",
				s->elapsed > 0 ? (double)s->ops / s->elapsed : 0);
	}
	if (wl->rate) {
		json_rate(out, &first, wl->rate, &st, s, ceil);
	} else {
		lvb_json_key(out, &first, "round_ops_per_sec");
		json_rounds(out, s);
		if (!s->sample_group) {
			lvb_json_key(out, &first, "ops_per_sec_per_thread");
			json_stats(out, &st);
		}
	}
	lvb_json_key(out, &first, "locks");
	json_locks(out, s);
	lvb_json_key(out, &first, "lock_sites");
	json_sites(out, s);

	lvb_json_key(out, &first, "vmstat");
	fputc('{', out);
	f = true;
	for (size_t i = 0; i < sizeof(json_vmstat_items) / sizeof(json_vmstat_items[0]); i++)
		lvb_json_u64(out, &f, lv_stat_name(json_vmstat_items[i]),
			     s->vmstat[json_vmstat_items[i]]);
	fputc('}', out);
	lvb_json_key(out, &first, "lru_pages");
	fputc('{', out);
	f = true;
	for (int lru = 0; lru < LVB_NR_LRU; lru++)
		lvb_json_u64(out, &f, lv_stat_name((enum lv_stat_item)lru), s->lru[lru]);
	fputc('}', out);
	lvb_json_key(out, &first, "drain_all");
	fputc('{', out);
	f = true;
	lvb_json_u64(out, &f, "calls", s->drain_calls);
	lvb_json_u64(out, &f, "sweeps", s->drain_sweeps);
	fputc('}', out);
	lvb_json_key(out, &first, "batches");
	fputc('{', out);
	f = true;
	lvb_json_u64(out, &f, "flushes", s->batch.flushes);
	lvb_json_u64(out, &f, "holds", s->batch.holds);
	lvb_json_u64(out, &f, "folios", s->batch.folios);
	lvb_json_double(out, &f, "holds_per_flush",
			s->batch.flushes ? (double)s->batch.holds / (double)s->batch.flushes : 0);
	lvb_json_double(out, &f, "folios_per_hold",
			s->batch.holds ? (double)s->batch.folios / (double)s->batch.holds : 0);
	fputc('}', out);
	lvb_json_key(out, &first, "counters");
	fputc('{', out);
	f = true;
	for (unsigned int c = 0; c < s->nr_counters; c++)
		lvb_json_u64(out, &f, s->counter_names[c], s->counters[c]);
	fputc('}', out);
	lvb_json_u64(out, &first, "vm_rss_kib", s->vm_rss_kib);
	lvb_json_u64(out, &first, "vm_hwm_kib", s->vm_hwm_kib);
	if (wl->json_extra)
		wl->json_extra(out, &first, opt, params, s, ceil);
	lvb_json_str(out, &first, "check", s->failures ? "failed" : "ok");
	fputs("}\n", out);
}
