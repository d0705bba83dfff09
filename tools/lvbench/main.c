// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * lvbench - benchmark CLI of the lruvec library: subcommand dispatch, options, usage.
 *
 *   lvbench WORKLOAD [OPTIONS]            one lock design
 *   lvbench compare WORKLOAD [OPTIONS]    node and lruvec designs alternately, side by side
 *
 * Options are long options only ("--name value" or "--name=value"), described by tables so
 * that a workload adds its own without touching this file, and so that every error can name
 * the option it is about. Bad usage exits with 2, a failed run with 1.
 */
#include "lvbench.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *const lvb_lock_names[] = { [LV_LOCK_LRUVEC] = "lruvec", [LV_LOCK_NODE] = "node", NULL };
const char *const lvb_backend_names[] = {
	[LV_BACKEND_FUTEX] = "futex", [LV_BACKEND_MUTEX] = "mutex", [LV_BACKEND_SPIN] = "spin", NULL
};
const char *const lvb_disable_names[] = { [LV_DISABLE_SWEEP] = "sweep",
					  [LV_DISABLE_RCU] = "rcu",
					  [LV_DISABLE_RCU_EXPEDITED] = "rcu-expedited",
					  NULL };
const char *const lvb_by_names[] = { [LVB_BY_LOCK] = "lock", [LVB_BY_DISABLE] = "disable", NULL };

static const struct lvb_workload *const workloads[] = { &lvb_churn, &lvb_readtwice, &lvb_readonce,
							&lvb_aim9, &lvb_numa };

#define NR_WORKLOADS (sizeof(workloads) / sizeof(workloads[0]))

#define COMMON(field) offsetof(struct lvb_common, field)

static const struct lvb_opt common_opts[] = {
	{ "containers", LVB_OPT_UINT, COMMON(containers), 1, 1024, NULL, "N",
	  "memory cgroups; thread t runs in container t % N (default 16;\n"
	  "readtwice/readonce/aim9/numa: see their help)" },
	{ "threads", LVB_OPT_UINT, COMMON(threads), 1, 1024, NULL, "N",
	  "benchmark threads (default 32; not for readtwice/readonce/aim9/numa)" },
	{ "duration", LVB_OPT_DOUBLE, COMMON(duration), 0.1, 86400, NULL, "SEC",
	  "length of one round in seconds, fractions allowed (default 5;\n"
	  "aim9: of one iteration, see its help)" },
	{ "rounds", LVB_OPT_UINT, COMMON(rounds), 1, 1000, NULL, "N",
	  "rounds per design, each on a fresh machine (default 1; compare: 3,\n"
	  "compare readtwice/readonce: 5, compare aim9: 2)" },
	{ "lock", LVB_OPT_CHOICE, COMMON(lock), 0, 0, lvb_lock_names, "DESIGN",
	  "lruvec (per-lruvec lru_lock, Linux 5.11+; default) or\n"
	  "node (per-node lru_lock, Linux <= 5.10); compare runs both" },
	{ "backend", LVB_OPT_CHOICE, COMMON(backend), 0, 0, lvb_backend_names, "KIND",
	  "lock implementation: futex (default), mutex or spin" },
	{ "disable", LVB_OPT_CHOICE, COMMON(disable), 0, 0, lvb_disable_names, "MODE",
	  "how lv_lru_cache_disable waits for adders: sweep (lock and\n"
	  "drain every CPU slot, as v5.17; default), rcu (a normal RCU\n"
	  "grace period first: the Linux 5.18 regression) or\n"
	  "rcu-expedited (liburcu's grace period only, as the 5.19 fix);\n"
	  "compare --by disable runs rcu and sweep" },
	{ "batch", LVB_OPT_UINT, COMMON(batch), 1, LV_MAX_BATCH, NULL, "N",
	  "folios per per-CPU batch and per lv_folios_put() release (default 31;\n"
	  "15 as in Linux 5.x)" },
	{ "nodes", LVB_OPT_UINT, COMMON(nodes), 1, LV_MAX_NODES, NULL, "N",
	  "NUMA nodes; thread t allocates on node t % N (default 1;\n"
	  "numa: 2)" },
	{ "memory", LVB_OPT_UINT, COMMON(memory_mib), 4, 65536, NULL, "MIB",
	  "memory per node in MiB (default 256; readtwice/readonce: 2048;\n"
	  "numa: sized to its instances, see its help)" },
	{ "seed", LVB_OPT_U64, COMMON(seed), 0, 0, NULL, "N",
	  "seed of the per-thread random streams (default 1)" },
	{ "json", LVB_OPT_FLAG, COMMON(json), 0, 0, NULL, NULL,
	  "print JSON instead of tables: one object per design, one per line" },
	{ "help", LVB_OPT_FLAG, COMMON(help), 0, 0, NULL, NULL, "print this help and exit" },
	{ 0 }
};

/* Parsed always, so that using them without compare gets a precise message. */
static const struct lvb_opt compare_opts[] = {
	{ "sweep", LVB_OPT_LIST, COMMON(sweep), 1, 1024, NULL, "N,N,...",
	  "run the comparison once per container count and print one\n"
	  "row per count; increasing (e.g. 1,2,4,8,16,32); not with\n"
	  "--containers" },
	{ "plot", LVB_OPT_STRING, COMMON(plot), 0, 0, NULL, "FILE.svg",
	  "with --sweep: draw the rate per design against the container\n"
	  "count with gnuplot (Debian: gnuplot-nox)" },
	{ "by", LVB_OPT_CHOICE, COMMON(by), 0, 0, lvb_by_names, "WHAT",
	  "what the two columns are: lock (node vs lruvec lru_lock; the\n"
	  "default) or disable (rcu vs sweep lru_cache_disable; numa's\n"
	  "default)" },
	{ 0 }
};

/* Options a workload did not set in its prepare hook get these. */
static void common_defaults(struct lvb_common *c)
{
	*c = (struct lvb_common){
		.containers = LVB_UNSET,
		.threads = LVB_UNSET,
		.duration = 0,
		.rounds = LVB_UNSET,
		.lock = LVB_UNSET,
		.backend = LV_BACKEND_FUTEX,
		.batch = LV_MAX_BATCH,
		.nodes = 1,
		.memory_mib = LVB_UNSET,
		.seed = 1,
		.disable = LVB_UNSET,
		.by = LVB_UNSET,
	};
}

static void common_fill(struct lvb_common *c)
{
	if (c->containers == LVB_UNSET)
		c->containers = 16;
	if (c->threads == LVB_UNSET)
		c->threads = 32;
	if (c->duration == 0)
		c->duration = 5.0;
	if (c->memory_mib == LVB_UNSET)
		c->memory_mib = 256;
	if (c->rounds == LVB_UNSET)
		c->rounds = c->compare ? 3 : 1;
	if (c->disable == LVB_UNSET)
		c->disable = LV_DISABLE_SWEEP;
}

/* ---- usage ----------------------------------------------------------------------------------- */

static void print_opts(FILE *out, const struct lvb_opt *opts)
{
	for (const struct lvb_opt *o = opts; o && o->name; o++) {
		char head[40];
		const char *help = o->help;

		snprintf(head, sizeof(head), "--%s%s%s", o->name, o->metavar ? " " : "",
			 o->metavar ? o->metavar : "");
		/* Continuation lines of the help text line up under its first line. */
		fprintf(out, "  %-18s ", head);
		for (const char *nl; (nl = strchr(help, '\n')); help = nl + 1)
			fprintf(out, "%.*s\n  %-18s ", (int)(nl - help), help, "");
		fprintf(out, "%s\n", help);
	}
}

static void print_workloads(FILE *out)
{
	fprintf(out, "Workloads:\n");
	for (size_t i = 0; i < NR_WORKLOADS; i++)
		fprintf(out, "  %-18s %s\n", workloads[i]->name, workloads[i]->summary);
}

static const char output_help[] =
	"Output: a table of ops/s per thread as mmtests compare prints it (Min, Max, Amean,\n"
	"Hmean, Stddev, CoeffVar, BHmean-50/95/99 over the ops/s of every thread of every\n"
	"round), the lock table in the columns of perf lock report plus the contended fraction\n"
	"(contended/acquired) per lock class, vmstat counters and the thread-to-CPU ratio\n"
	"(threads / online CPUs). With --json: one JSON object per design, one object per line\n"
	"(node first with compare --by lock), with the keys workload, lock, backend, threads,\n"
	"containers, nodes, cpus, threads_per_cpu, duration_s, rounds, batch, seed, ops,\n"
	"ops_per_sec (all threads), round_ops_per_sec, ops_per_sec_per_thread {n, min, max,\n"
	"hmean, stddev, amean, coeffvar, bhmean50, bhmean95, bhmean99}, locks [{name, acquired,\n"
	"contended, contended_fraction, wait_total_ns, wait_avg_ns, wait_max_ns, wait_min_ns}],\n"
	"vmstat, drain_all, counters and check (\"ok\" or \"failed\": failed when a thread got an\n"
	"answer it did not expect or a check at the end failed; the row \"checks\" of the\n"
	"tables). Every round also runs lv_check() on the populated and on the emptied machine.\n"
	"A progress line is shown on stderr when it is a terminal.\n"
	"Workloads with their own unit (readtwice: MB/s per reader) print it instead of ops/s,\n"
	"and workloads add or replace JSON keys (see the workload's help).\n"
	"Exit status: 0 success, 1 the run failed (library error or invariant violation,\n"
	"described on stderr), 2 bad usage.\n";

static void usage_main(FILE *out)
{
	fprintf(out,
		"Usage: lvbench WORKLOAD [OPTIONS]           run one lock design\n"
		"       lvbench compare WORKLOAD [OPTIONS]   run the node and lruvec designs\n"
		"                                            alternately and compare them\n"
		"       lvbench [compare] [WORKLOAD] --help\n\n"
		"Benchmarks the lruvec library: Linux's memcg-aware page LRU with the per-lruvec\n"
		"lru_lock of Linux 5.11 against the per-node lru_lock of Linux <= 5.10.\n\n");
	print_workloads(out);
	fprintf(out, "\nOptions of every workload:\n");
	print_opts(out, common_opts);
	fprintf(out, "\n%s", output_help);
}

/* compare --by lock, every workload's default but numa's. */
static const char compare_lock_help[] =
	"--by lock (the default of every workload but numa) runs the node (A, the baseline) and\n"
	"lruvec (B) designs alternately, ABAB..., --rounds rounds each (default 3;\n"
	"readtwice/readonce: 5; aim9: 2), every round on a fresh machine in this process,\n"
	"then prints them side by side. The percentage next to a value is relative to\n"
	"the node design as in mmtests compare: new*100/base - 100 for Min, Max, Amean, Hmean,\n"
	"BHmean-N and Total (higher is better), 100 - new*100/base for Stddev and CoeffVar (so\n"
	"less variance is positive).\n"
	"With --json: two lines, the node object, then the lruvec object (with --sweep: two\n"
	"lines per container count).\n"
	"--sweep prints one compact row per container count instead of the full tables: the\n"
	"mean rate per thread of each design, their ratio, the contended fraction of the LRU\n"
	"lock of each design and, where the workload has one, the ceiling.\n";

/* compare --by disable, numa's default and numa's only. */
static const char compare_disable_help[] =
	"--by disable (numa's default) compares the two lru_cache_disable modes rather than\n"
	"the two designs, in the --lock design (default lruvec): rcu (A, the baseline:\n"
	"synchronize_rcu first, the Linux 5.18 regression) and sweep (B: lock and drain every\n"
	"CPU slot, the cost of fixed kernels), alternately, --rounds rounds each, with the\n"
	"percentages of mmtests compare relative to rcu; --json then gives the rcu object, then\n"
	"the sweep object. --disable does not apply then, and --sweep only applies to --by lock.\n";

/* The text of the comparison the workload makes by default comes first. */
static void usage_compare(FILE *out, const struct lvb_workload *wl)
{
	bool disable_first = wl && wl->compare_by == LVB_BY_DISABLE;

	fprintf(out, "Usage: lvbench compare %s [OPTIONS]\n\n%s%s\n", wl ? wl->name : "WORKLOAD",
		disable_first ? compare_disable_help : compare_lock_help,
		disable_first ? compare_lock_help : compare_disable_help);
	if (wl) {
		fprintf(out, "%s\n", wl->help);
		if (wl->opts) {
			fprintf(out, "\nOptions of %s:\n", wl->name);
			print_opts(out, wl->opts);
		}
	} else {
		print_workloads(out);
	}
	fprintf(out, "\nOptions of compare:\n");
	print_opts(out, compare_opts);
	fprintf(out, "\nOptions of every workload (--lock only with --by disable: --by lock runs "
		     "both designs):\n");
	print_opts(out, common_opts);
	fprintf(out, "\n%s", output_help);
}

static void usage_workload(FILE *out, const struct lvb_workload *wl)
{
	fprintf(out, "Usage: lvbench %s [OPTIONS]\n       lvbench compare %s [OPTIONS]\n\n%s\n",
		wl->name, wl->name, wl->help);
	if (wl->opts) {
		fprintf(out, "\nOptions of %s:\n", wl->name);
		print_opts(out, wl->opts);
	}
	fprintf(out, "\nOptions of every workload:\n");
	print_opts(out, common_opts);
	fprintf(out, "\n%s", output_help);
}

/* ---- parsing --------------------------------------------------------------------------------- */

int lvb_usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "lvbench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'lvbench --help'.\n");
	return -1;
}

static const struct lvb_opt *find_opt(const struct lvb_opt *opts, const char *name, size_t len)
{
	for (const struct lvb_opt *o = opts; o && o->name; o++)
		if (strlen(o->name) == len && !strncmp(o->name, name, len))
			return o;
	return NULL;
}

/* Only plain decimal digits: strtoull would accept "-1", " 7" and "0x10". */
static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 10);
	if (*end)
		return -EINVAL;
	return errno ? -errno : 0;
}

/* "8G", "512M", "4096": bytes, with the suffixes of truncate(1) (powers of 1024). */
static int parse_size(const char *s, uint64_t *v)
{
	static const char suffixes[] = "KMGTP";
	const char *p = s, *sfx;
	uint64_t n;
	char *end;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	errno = 0;
	n = strtoull(p, &end, 10);
	if (errno)
		return -errno;
	if (*end) {
		sfx = strchr(suffixes, *end >= 'a' ? *end - 'a' + 'A' : *end);
		if (!sfx || !*sfx)
			return -EINVAL;
		end++;
		if (*end == 'i' && end[1] == 'B')
			end += 2;
		if (*end)
			return -EINVAL;
		for (const char *q = suffixes; q <= sfx; q++) {
			if (n > UINT64_MAX / 1024)
				return -ERANGE;
			n *= 1024;
		}
	}
	*v = n;
	return 0;
}

/* "1,2,4": each element within [o->min, o->max]; no empty elements. */
static int parse_list(const struct lvb_opt *o, const char *arg, struct lvb_list *list)
{
	const char *p = arg;

	list->n = 0;
	for (;;) {
		char num[24];
		size_t len = strcspn(p, ",");
		uint64_t u;

		if (!len || len >= sizeof(num))
			return lvb_usage_error(
				"--%s: '%s' is not a comma-separated list of integers", o->name,
				arg);
		memcpy(num, p, len);
		num[len] = 0;
		if (parse_u64(num, &u))
			return lvb_usage_error("--%s: '%s' is not a non-negative integer", o->name,
					       num);
		if ((double)u < o->min || (double)u > o->max)
			return lvb_usage_error("--%s: %s is out of range (%.0f..%.0f)", o->name,
					       num, o->min, o->max);
		if (list->n == LVB_MAX_LIST)
			return lvb_usage_error("--%s: more than %d values", o->name, LVB_MAX_LIST);
		list->v[list->n++] = (unsigned int)u;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

static const char *choices_list(const char *const *choices, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = 0;
	for (unsigned int i = 0; choices[i] && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? "|" : "", choices[i]);
	return buf;
}

static int set_value(const struct lvb_opt *o, void *base, const char *arg)
{
	char *p = (char *)base + o->off;
	char list[128];
	uint64_t u;
	double d;
	char *end;
	int err;

	switch (o->kind) {
	case LVB_OPT_FLAG:
		*(bool *)p = true;
		return 0;
	case LVB_OPT_CHOICE:
		for (unsigned int i = 0; o->choices[i]; i++) {
			if (!strcmp(arg, o->choices[i])) {
				*(unsigned int *)p = i;
				return 0;
			}
		}
		return lvb_usage_error("--%s: unknown value '%s' (%s)", o->name, arg,
				       choices_list(o->choices, list, sizeof(list)));
	case LVB_OPT_U64:
	case LVB_OPT_UINT:
		err = parse_u64(arg, &u);
		if (err == -EINVAL)
			return lvb_usage_error("--%s: '%s' is not a non-negative integer", o->name,
					       arg);
		if (o->kind == LVB_OPT_U64) {
			if (err)
				return lvb_usage_error("--%s: %s is out of range", o->name, arg);
			*(uint64_t *)p = u;
			return 0;
		}
		if (err || (double)u < o->min || (double)u > o->max)
			return lvb_usage_error("--%s: %s is out of range (%.0f..%.0f)", o->name,
					       arg, o->min, o->max);
		*(unsigned int *)p = (unsigned int)u;
		return 0;
	case LVB_OPT_SIZE:
		err = parse_size(arg, &u);
		if (err == -EINVAL)
			return lvb_usage_error(
				"--%s: '%s' is not a size (digits, then K, M, G or T)", o->name,
				arg);
		if (err || (double)u < o->min || (o->max && (double)u > o->max))
			return o->max ? lvb_usage_error(
						"--%s: %s is out of range (%.0f..%.0f bytes)",
						o->name, arg, o->min, o->max)
				      : lvb_usage_error("--%s: %s is out of range (at least %.0f "
							"bytes)",
							o->name, arg, o->min);
		*(uint64_t *)p = u;
		return 0;
	case LVB_OPT_STRING:
		if (!*arg)
			return lvb_usage_error("--%s: the value is empty", o->name);
		*(const char **)p = arg;
		return 0;
	case LVB_OPT_LIST:
		return parse_list(o, arg, (struct lvb_list *)p);
	case LVB_OPT_DOUBLE:
		errno = 0;
		d = strtod(arg, &end);
		if (end == arg || *end || !isfinite(d) ||
		    ((*arg < '0' || *arg > '9') && *arg != '.'))
			return lvb_usage_error("--%s: '%s' is not a number", o->name, arg);
		if (errno || d < o->min || d > o->max)
			return lvb_usage_error("--%s: %s is out of range (%g..%g)", o->name, arg,
					       o->min, o->max);
		*(double *)p = d;
		return 0;
	}
	return lvb_usage_error("--%s: internal error: bad option kind", o->name);
}

/*
 * parse_opts - parse argv[0..argc) into @common and the workload's @params.
 * Return: 0, or -1 after describing the error.
 */
static int parse_opts(int argc, char **argv, struct lvb_common *common,
		      const struct lvb_workload *wl, void *params)
{
	for (int i = 0; i < argc; i++) {
		const char *arg = argv[i], *name, *eq, *val = NULL;
		const struct lvb_opt *o;
		void *base = common;
		size_t len;

		if (!strcmp(arg, "-h")) {
			common->help = true;
			continue;
		}
		if (strncmp(arg, "--", 2) || !arg[2]) {
			if (arg[0] == '-')
				return lvb_usage_error("unknown option '%s'", arg);
			return lvb_usage_error("unexpected argument '%s'", arg);
		}
		name = arg + 2;
		eq = strchr(name, '=');
		len = eq ? (size_t)(eq - name) : strlen(name);
		o = find_opt(common_opts, name, len);
		if (!o)
			o = find_opt(compare_opts, name, len);
		if (!o && wl) {
			o = find_opt(wl->opts, name, len);
			base = params;
		}
		if (!o)
			return lvb_usage_error("unknown option '--%.*s'", (int)len, name);
		if (o->kind == LVB_OPT_FLAG) {
			if (eq)
				return lvb_usage_error("option '--%s' takes no value", o->name);
		} else if (eq) {
			val = eq + 1;
		} else if (i + 1 < argc) {
			val = argv[++i];
		} else {
			return lvb_usage_error("option '--%s' needs a value (%s)", o->name,
					       o->metavar);
		}
		if (set_value(o, base, val))
			return -1;
	}
	return 0;
}

static const struct lvb_workload *find_workload(const char *name)
{
	for (size_t i = 0; i < NR_WORKLOADS; i++)
		if (!strcmp(workloads[i]->name, name))
			return workloads[i];
	return NULL;
}

/* Look for gnuplot before a sweep that may take minutes, not after it. */
static bool have_program(const char *name)
{
	const char *path = getenv("PATH");
	char buf[4096];

	if (!path || !*path)
		path = "/usr/bin:/bin";
	for (const char *p = path; *p;) {
		size_t len = strcspn(p, ":");

		if (len && len + strlen(name) + 2 <= sizeof(buf)) {
			snprintf(buf, sizeof(buf), "%.*s/%s", (int)len, p, name);
			if (!access(buf, X_OK))
				return true;
		}
		p += len;
		if (*p)
			p++;
	}
	return false;
}

/* After the workload's and the generic defaults: the combinations that make no sense. */
static int check_opts(const struct lvb_common *c)
{
	if (!c->compare && c->sweep.n)
		return lvb_usage_error("option '--sweep' applies to compare only "
				       "(lvbench compare WORKLOAD --sweep ...)");
	if (!c->compare && c->plot)
		return lvb_usage_error("option '--plot' applies to compare only");
	if (c->plot && !c->sweep.n)
		return lvb_usage_error(
			"option '--plot' needs --sweep (the container counts to plot)");
	if (c->compare && c->by == LVB_BY_LOCK && c->lock != LVB_UNSET)
		return lvb_usage_error(
			"compare: option '--lock' does not apply (compare runs both designs)");
	if (c->compare && c->by == LVB_BY_DISABLE && c->disable != LVB_UNSET)
		return lvb_usage_error("compare --by disable: option '--disable' does not apply "
				       "(compare runs both modes)");
	if (c->by == LVB_BY_DISABLE && c->sweep.n)
		return lvb_usage_error("option '--sweep' applies to compare --by lock only");
	for (unsigned int i = 1; i < c->sweep.n; i++)
		if (c->sweep.v[i] <= c->sweep.v[i - 1])
			return lvb_usage_error("--sweep: the container counts must increase "
					       "(%u after %u)",
					       c->sweep.v[i], c->sweep.v[i - 1]);
	if (c->plot)
		for (const char *s = c->plot; *s; s++)
			if ((unsigned char)*s < ' ' || *s == 0x7f)
				return lvb_usage_error("--plot: the file name holds a control "
						       "character");
	return 0;
}

/*
 * plot_writable - can the SVG be written? Asked before a sweep that may take minutes. A file
 * this call creates (exclusively, so never someone else's, nor through a symlink) is removed
 * again; an existing one is opened for writing, not truncated.
 */
static bool plot_writable(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);

	if (fd >= 0) {
		close(fd);
		unlink(path);
		return true;
	}
	if (errno == EEXIST) {
		fd = open(path, O_WRONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd >= 0) {
			close(fd);
			return true;
		}
		/* A dangling symlink: gnuplot creates its target, or says why it cannot. */
		if (errno == ENOENT)
			return true;
	}
	fprintf(stderr, "lvbench: --plot: cannot write '%s': %s\n", path, strerror(errno));
	return false;
}

/* The columns to run: with compare both designs or both disable modes, else the one chosen. */
static unsigned int variants(const struct lvb_common *c, struct lvb_variant *v)
{
	enum lv_lock_design design =
		c->lock == LVB_UNSET ? LV_LOCK_LRUVEC : (enum lv_lock_design)c->lock;
	enum lv_disable_mode mode = (enum lv_disable_mode)c->disable;

	if (!c->compare) {
		v[0] = (struct lvb_variant){ design, mode,
					     c->by == LVB_BY_DISABLE ? lvb_disable_names[mode]
								     : lvb_lock_names[design] };
		return 1;
	}
	if (c->by == LVB_BY_DISABLE) {
		/* The regression first, as the baseline: the ratio is sweep/rcu. */
		v[0] = (struct lvb_variant){ design, LV_DISABLE_RCU, "rcu" };
		v[1] = (struct lvb_variant){ design, LV_DISABLE_SWEEP, "sweep" };
	} else {
		v[0] = (struct lvb_variant){ LV_LOCK_NODE, mode, "node" };
		v[1] = (struct lvb_variant){ LV_LOCK_LRUVEC, mode, "lruvec" };
	}
	return 2;
}

static bool is_help(const char *arg)
{
	return !strcmp(arg, "--help") || !strcmp(arg, "-h") || !strcmp(arg, "help");
}

int main(int argc, char **argv)
{
	const struct lvb_workload *wl;
	struct lvb_common common;
	struct lvb_variant v[2];
	bool compare = false, containers_given;
	void *params = NULL;
	int first, ret;

	if (argc < 2) {
		usage_main(stderr);
		return LVB_EXIT_USAGE;
	}
	if (is_help(argv[1])) {
		usage_main(stdout);
		return LVB_EXIT_OK;
	}
	first = 1;
	if (!strcmp(argv[1], "compare")) {
		compare = true;
		first = 2;
		if (argc < 3 || argv[2][0] == '-') {
			if (argc >= 3 && is_help(argv[2])) {
				usage_compare(stdout, NULL);
				return LVB_EXIT_OK;
			}
			lvb_usage_error("compare: missing workload (see 'lvbench compare --help')");
			return LVB_EXIT_USAGE;
		}
	}
	wl = find_workload(argv[first]);
	if (!wl) {
		if (compare)
			lvb_usage_error("compare: unknown workload '%s'", argv[first]);
		else if (argv[first][0] == '-')
			lvb_usage_error("unknown option '%s' (a workload or compare comes first)",
					argv[first]);
		else
			lvb_usage_error("unknown subcommand or workload '%s'", argv[first]);
		return LVB_EXIT_USAGE;
	}

	common_defaults(&common);
	if (wl->default_nodes)
		common.nodes = wl->default_nodes;
	params = calloc(1, wl->params_size ? wl->params_size : 1);
	if (!params) {
		perror("lvbench");
		return LVB_EXIT_FAIL;
	}
	if (wl->defaults)
		wl->defaults(params);
	if (parse_opts(argc - first - 1, argv + first + 1, &common, wl, params)) {
		free(params);
		return LVB_EXIT_USAGE;
	}
	if (common.help) {
		if (compare)
			usage_compare(stdout, wl);
		else
			usage_workload(stdout, wl);
		free(params);
		return LVB_EXIT_OK;
	}
	common.compare = compare;
	if (!compare && common.by != LVB_UNSET) {
		lvb_usage_error(
			"option '--by' applies to compare only (lvbench compare %s --by ...)",
			wl->name);
		free(params);
		return LVB_EXIT_USAGE;
	}
	if (common.by == LVB_UNSET)
		common.by = wl->compare_by;
	containers_given = common.containers != LVB_UNSET;
	if ((wl->prepare && wl->prepare(&common, params)) || check_opts(&common)) {
		free(params);
		return LVB_EXIT_USAGE;
	}
	if (wl->compare_by != LVB_BY_DISABLE &&
	    (common.disable != LVB_UNSET || common.by == LVB_BY_DISABLE)) {
		lvb_usage_error(
			"options '--disable' and '--by disable' apply to numa only (%s never "
			"calls lv_lru_cache_disable)",
			wl->name);
		free(params);
		return LVB_EXIT_USAGE;
	}
	if (common.sweep.n && containers_given) {
		lvb_usage_error(
			"option '--containers' does not apply with --sweep (the sweep gives "
			"the container counts)");
		free(params);
		return LVB_EXIT_USAGE;
	}
	common_fill(&common);
	if (wl->nr_threads)
		common.threads = wl->nr_threads(&common, params);
	if (common.plot && !have_program("gnuplot")) {
		fprintf(stderr,
			"lvbench: --plot: gnuplot is not installed (Debian: apt-get install "
			"gnuplot-nox)\n");
		free(params);
		return LVB_EXIT_FAIL;
	}
	if (common.plot && !plot_writable(common.plot)) {
		free(params);
		return LVB_EXIT_FAIL;
	}

	ret = lvb_bench(wl, &common, params, v, variants(&common, v));
	free(params);
	return ret;
}
