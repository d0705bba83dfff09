// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * lvbench - benchmark CLI of the lruvec library: subcommand dispatch, options, usage.
 *
 *   lvbench WORKLOAD [OPTIONS]            one lock design
 *   lvbench compare WORKLOAD [OPTIONS]    node and lruvec designs alternately, side by side
 *   lvbench scale WORKLOAD [OPTIONS]      cost per op and memory per memcg by container count
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
const char *const lvb_backend_names[] = { [LV_BACKEND_FUTEX] = "futex",
					  [LV_BACKEND_MUTEX] = "mutex",
					  [LV_BACKEND_SPIN] = "spin",
					  [LV_BACKEND_ADAPTIVE] = "adaptive",
					  NULL };
const char *const lvb_disable_names[] = { [LV_DISABLE_SWEEP] = "sweep",
					  [LV_DISABLE_RCU] = "rcu",
					  [LV_DISABLE_RCU_EXPEDITED] = "rcu-expedited",
					  NULL };
const char *const lvb_scan_cost_names[] = {
	[LV_COST_LOCKED] = "locked", [LV_COST_VMSTAT] = "vmstat", NULL
};
const char *const lvb_on_off_names[] = { "off", "on", NULL };
const char *const lvb_batch_policy_names[] = { [LV_BATCH_ARRIVAL] = "arrival",
					       [LV_BATCH_SORTED] = "sorted",
					       [LV_BATCH_PER_LRUVEC] = "per-lruvec",
					       NULL };
const char *const lvb_by_names[] = { [LVB_BY_LOCK] = "lock",
				     [LVB_BY_DISABLE] = "disable",
				     [LVB_BY_COST] = "cost",
				     [LVB_BY_BATCH] = "batch",
				     [LVB_BY_BATCH_LARGE] = "batch-large",
				     [LVB_BY_FOLIO_ORDER] = "folio-order",
				     [LVB_BY_LOCK_SITES] = "lock-sites",
				     [LVB_BY_BATCH_POLICY] = "batch-policy",
				     NULL };

static const struct lvb_workload *const workloads[] = {
	&lvb_churn, &lvb_readtwice, &lvb_readonce, &lvb_aim9,	     &lvb_numa,	  &lvb_compact,
	&lvb_swap,  &lvb_reparent,  &lvb_usemem,   &lvb_page_fault2, &lvb_replay,
};

#define NR_WORKLOADS (sizeof(workloads) / sizeof(workloads[0]))

#define COMMON(field) offsetof(struct lvb_common, field)

/*
 * The columns of compare --by: the older behaviour first, as the baseline the percentages are
 * relative to. A new --by value is an entry here, its enum lvb_by constant and its name in
 * lvb_by_names[] (the option it sets must be an unsigned int that starts LVB_UNSET).
 */
const struct lvb_by_kind lvb_by_kinds[LVB_NR_BY] = {
	[LVB_BY_LOCK] = { "lock",
			  "lock",
			  COMMON(lock),
			  "lru_lock",
			  "design",
			  0,
			  2,
			  { LV_LOCK_NODE, LV_LOCK_LRUVEC },
			  { "node", "lruvec" },
			  { "node lru_lock (Linux <= 5.10)", "lruvec lru_lock (Linux 5.11+)" } },
	[LVB_BY_DISABLE] = { "disable",
			     "disable",
			     COMMON(disable),
			     "lru_cache_disable",
			     "mode",
			     LVB_WL_DISABLE,
			     2,
			     { LV_DISABLE_RCU, LV_DISABLE_SWEEP },
			     { "rcu", "sweep" },
			     { "rcu (Linux 5.18)", "sweep (Linux 5.17)" } },
	[LVB_BY_COST] = { "cost",
			  "scan-cost",
			  COMMON(scan_cost),
			  "scan cost",
			  "setting",
			  0,
			  2,
			  { LV_COST_LOCKED, LV_COST_VMSTAT },
			  { "locked", "vmstat" },
			  { "scan cost under the LRU lock (Linux <= 7.1)",
			    "scan cost in vmstat counters (2026)" } },
	[LVB_BY_BATCH] = { "batch",
			   "batch",
			   COMMON(batch),
			   "per-CPU batches",
			   "setting",
			   0,
			   2,
			   { 15, 31 },
			   { "batch-15", "batch-31" },
			   { "batches of 15 (Linux <= 6.8)", "batches of 31 (Linux 6.9+)" } },
	[LVB_BY_BATCH_LARGE] = { "batch-large",
				 "batch-large",
				 COMMON(batch_large),
				 "large folios in batches",
				 "setting",
				 0,
				 2,
				 { 1, 0 },
				 { "large-on", "large-off" },
				 { "large folios batched (Linux <= 6.16)",
				   "large folios never batched (Linux 6.17+)" } },
	[LVB_BY_FOLIO_ORDER] = { "folio-order",
				 "folio-order",
				 COMMON(folio_order),
				 "page cache folios",
				 "setting",
				 LVB_WL_BY_FOLIO_ORDER,
				 3,
				 { 0, 2, 4 },
				 { "order-0", "order-2", "order-4" },
				 { "folios of 1 page", "folios of 4 pages",
				   "folios of 16 pages" } },
	[LVB_BY_LOCK_SITES] = { "lock-sites",
				"lock-sites",
				COMMON(lock_sites),
				"contention by call site",
				"setting",
				0,
				2,
				{ 0, 1 },
				{ "sites-off", "sites-on" },
				{ "no call-site table", "contention recorded by call site" } },
	[LVB_BY_BATCH_POLICY] = { "batch-policy",
				  "batch-policy",
				  COMMON(batch_policy),
				  "batch policy",
				  "policy",
				  0,
				  3,
				  { LV_BATCH_ARRIVAL, LV_BATCH_SORTED, LV_BATCH_PER_LRUVEC },
				  { "arrival", "sorted", "per-lruvec" },
				  { "batches in arrival order (Linux)",
				    "each batch sorted by lruvec", "batches per lruvec" } },
};

static const struct lvb_opt common_opts[] = {
	{ "containers", LVB_OPT_UINT, COMMON(containers), 1, LVB_MAX_CONTAINERS, NULL, "N",
	  "memory cgroups, 1..65534 (the library's 65535 memcg ids,\n"
	  "the root's included); thread t runs in container t % N\n"
	  "(churn, readtwice, readonce: with fewer threads than\n"
	  "containers, each thread serves several in turn)",
	  "16" },
	{ "threads", LVB_OPT_UINT, COMMON(threads), 1, LVB_MAX_THREADS, NULL, "N",
	  "benchmark threads, 1..65535", "32" },
	{ "duration", LVB_OPT_DOUBLE, COMMON(duration), 0.1, 86400, NULL, "SEC",
	  "length of one round in seconds, fractions allowed", "5" },
	{ "rounds", LVB_OPT_UINT, COMMON(rounds), 1, 1000, NULL, "N",
	  "rounds per design, each on a fresh machine", "1; compare: 3" },
	{ "lock", LVB_OPT_CHOICE, COMMON(lock), 0, 0, lvb_lock_names, "DESIGN",
	  "lruvec (per-lruvec lru_lock, Linux 5.11+) or node (per-node\n"
	  "lru_lock, Linux <= 5.10); compare runs both",
	  "lruvec" },
	{ "backend", LVB_OPT_CHOICE, COMMON(backend), 0, 0, lvb_backend_names, "KIND",
	  "lock implementation: futex, mutex, spin or adaptive (futex\n"
	  "with a spin before the sleep while spinning pays)",
	  "futex" },
	{ "disable", LVB_OPT_CHOICE, COMMON(disable), 0, 0, lvb_disable_names, "MODE",
	  "how lv_lru_cache_disable waits for adders: sweep (lock and\n"
	  "drain every CPU slot, as v5.17), rcu (a normal RCU grace\n"
	  "period first: the Linux 5.18 regression) or rcu-expedited\n"
	  "(liburcu's grace period only, as the 5.19 fix); compare\n"
	  "--by disable runs rcu and sweep",
	  "sweep" },
	{ "batch", LVB_OPT_UINT, COMMON(batch), 1, LV_MAX_BATCH, NULL, "N",
	  "folios per per-CPU batch and per lv_folios_put() release,\n"
	  "1..31 (15 as in Linux 5.x); compare --by batch runs 15, 31",
	  "31" },
	{ "batch-large", LVB_OPT_CHOICE, COMMON(batch_large), 0, 0, lvb_on_off_names, "on|off",
	  "on: large folios wait in the per-CPU batches like small\n"
	  "ones (Linux <= 6.16); off: they go to their LRU list at\n"
	  "once, under its lock (6.17+); compare --by batch-large\n"
	  "runs both",
	  "off" },
	{ "batch-policy", LVB_OPT_CHOICE, COMMON(batch_policy), 0, 0, lvb_batch_policy_names,
	  "POLICY",
	  "how a CPU slot's batches group folios: arrival (as Linux),\n"
	  "sorted (by lruvec before each flush) or per-lruvec (a few\n"
	  "small batches per slot, one lruvec each); compare --by\n"
	  "batch-policy runs all three",
	  "arrival" },
	{ "scan-cost", LVB_OPT_CHOICE, COMMON(scan_cost), 0, 0, lvb_scan_cost_names, "MODE",
	  "how reclaim's scan costs are counted: locked (under the\n"
	  "LRU locks, Linux <= 7.1) or vmstat (per-CPU counters,\n"
	  "folded in under a cost lock); compare --by cost runs both",
	  "locked" },
	{ "lock-sites", LVB_OPT_CHOICE, COMMON(lock_sites), 0, 0, lvb_on_off_names, "on|off",
	  "record lock contention by call site (the perf lock\n"
	  "contention table); off: the class table only; compare\n"
	  "--by lock-sites runs both, to show what recording costs",
	  "on" },
	{ "folio-order", LVB_OPT_UINT, COMMON(folio_order), 0, LV_MAX_FILE_FOLIO_ORDER, NULL, "N",
	  "page cache folios of 2^N pages, 0..6, like large-folio\n"
	  "readahead",
	  "0" },
	{ "nodes", LVB_OPT_UINT, COMMON(nodes), 1, LV_MAX_NODES, NULL, "N",
	  "NUMA nodes, 1..64; thread t allocates on node t % N", "1" },
	{ "memory", LVB_OPT_MIB, COMMON(memory_mib), 4, 65536, NULL, "SIZE",
	  "memory per node, 4M..64G; a bare number is MiB", "256 MiB" },
	{ "seed", LVB_OPT_U64, COMMON(seed), 0, 0, NULL, "N",
	  "seed of the per-thread random streams", "1" },
	{ "json", LVB_OPT_FLAG, COMMON(json), 0, 0, NULL, NULL,
	  "print JSON instead of tables: one object per design, one per line", NULL },
	{ "help", LVB_OPT_FLAG, COMMON(help), 0, 0, NULL, NULL, "print this help and exit", NULL },
	{ 0 }
};

/* Parsed always, so that using them without compare gets a precise message. */
static const struct lvb_opt compare_opts[] = {
	{ "sweep", LVB_OPT_LIST, COMMON(sweep), 1, LVB_MAX_CONTAINERS, NULL, "N,N,...",
	  "run the comparison once per container count and print one\n"
	  "row per count; increasing, at most 32 counts of 1..65534\n"
	  "(e.g. 1,2,4,8,16,32); not with --containers",
	  NULL },
	{ "plot", LVB_OPT_STRING, COMMON(plot), 0, 0, NULL, "FILE.svg",
	  "with --sweep: draw the rate per design against the container\n"
	  "count with gnuplot (Debian: gnuplot-nox)",
	  NULL },
	{ "by", LVB_OPT_CHOICE, COMMON(by), 0, 0, lvb_by_names, "WHAT",
	  "what the columns are: lock (node vs lruvec lru_lock),\n"
	  "disable (rcu vs sweep lru_cache_disable), cost (locked vs\n"
	  "vmstat --scan-cost), batch (--batch 15 vs 31), batch-large\n"
	  "(--batch-large on vs off), folio-order (--folio-order 0\n"
	  "vs 2 vs 4: readtwice, readonce), lock-sites (--lock-sites\n"
	  "off vs on) or batch-policy (arrival vs sorted vs per-lruvec)",
	  "lock; numa: disable" },
	{ 0 }
};

/*
 * lvbench scale's own option: the same field as compare's --sweep, with scale's help and
 * default. The shared options it sets differently are scale_defaults[].
 */
#define SCALE_SWEEP                                                                                \
	{                                                                                          \
		4,                                                                                 \
		{                                                                                  \
			10, 100, 1000, 10000                                                       \
		}                                                                                  \
	}
#define SCALE_ROUNDS 3
static const struct lvb_opt scale_opts[] = {
	{ "sweep", LVB_OPT_LIST, COMMON(sweep), 1, LVB_MAX_CONTAINERS, NULL, "N,N,...",
	  "the container counts, increasing, at most 32 of 1..65534", "10,100,1000,10000" },
	{ 0 }
};

static const struct lvb_default scale_defaults[] = {
	{ "containers", "--sweep gives the counts", true },
	{ "threads",
	  "2 x online CPUs, the same at every count (readtwice:\n"
	  "at most the first count x --readers)",
	  false },
	{ "rounds", "3, the counts taking turns round by round", false },
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
		.batch = LVB_UNSET,
		.scan_cost = LVB_UNSET,
		.batch_large = LVB_UNSET,
		.lock_sites = LVB_UNSET,
		.batch_policy = LVB_UNSET,
		.folio_order = LVB_UNSET,
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
	if (c->batch == LVB_UNSET)
		c->batch = LV_MAX_BATCH;
}

/* ---- usage ----------------------------------------------------------------------------------- */

#define HELP_COLUMN 21 /* where the text of an option starts */
#define HELP_WIDTH  92 /* the last column a default may extend the text's last line to */

static const struct lvb_default *find_in(const struct lvb_default *d, const char *name)
{
	for (; d && d->name; d++)
		if (!strcmp(d->name, name))
			return d;
	return NULL;
}

static const struct lvb_default *find_default(const struct lvb_workload *wl, const char *name)
{
	return find_in(wl ? wl->shared_defaults : NULL, name);
}

/* Continuation lines of an option's text line up under its first line. */
static void print_lines(FILE *out, const char *text)
{
	for (const char *nl; (nl = strchr(text, '\n')); text = nl + 1)
		fprintf(out, "%.*s\n%*s", (int)(nl - text), text, HELP_COLUMN, "");
	fputs(text, out);
}

/*
 * print_opts - one entry per option of @opts: its name, its text, and its default (in @over,
 * else in @wl, for the shared options) or why it does not apply to @wl.
 */
static void print_opts(FILE *out, const struct lvb_opt *opts, const struct lvb_workload *wl,
		       const struct lvb_default *over)
{
	for (const struct lvb_opt *o = opts; o && o->name; o++) {
		const struct lvb_default *mine = find_in(over, o->name);
		const struct lvb_default *d = mine ? mine : find_default(wl, o->name);
		const char *help = o->help, *def = d ? d->text : o->def;
		char head[40], note[160] = "";
		size_t last;

		snprintf(head, sizeof(head), "--%s%s%s", o->name, o->metavar ? " " : "",
			 o->metavar ? o->metavar : "");
		if (d && d->not_applicable)
			snprintf(note, sizeof(note), "not for %s: %s", mine ? "scale" : wl->name,
				 def);
		else if (def)
			snprintf(note, sizeof(note), "default: %s", def);
		fprintf(out, "  %-18s ", head);
		print_lines(out, help);
		last = strrchr(help, '\n') ? strlen(strrchr(help, '\n') + 1) : strlen(help);
		if (!*note) {
			fputc('\n', out);
		} else if (!strchr(note, '\n') &&
			   HELP_COLUMN + last + strlen(note) + 3 <= HELP_WIDTH) {
			fprintf(out, " (%s)\n", note);
		} else {
			fprintf(out, "\n%*s(", HELP_COLUMN, "");
			print_lines(out, note);
			fprintf(out, ")\n");
		}
	}
}

static void print_workloads(FILE *out)
{
	int width = 0;

	for (size_t i = 0; i < NR_WORKLOADS; i++)
		if ((int)strlen(workloads[i]->name) > width)
			width = (int)strlen(workloads[i]->name);
	fprintf(out, "Workloads:\n");
	for (size_t i = 0; i < NR_WORKLOADS; i++)
		fprintf(out, "  %-*s  %s\n", width, workloads[i]->name, workloads[i]->summary);
}

/* The workloads that do all of @features, for messages: "readtwice, readonce". */
static const char *workloads_with(unsigned int features, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = 0;
	for (size_t i = 0; i < NR_WORKLOADS && len < size; i++)
		if ((workloads[i]->features & features) == features)
			len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? ", " : "",
						workloads[i]->name);
	return buf;
}

static const char sizes_help[] =
	"Sizes (--memory, --limit, --file-size): digits, optionally followed by K, M, G, T or P\n"
	"(or k, m, g, t, p), optionally followed by iB: powers of 1024, as truncate(1) reads\n"
	"them (4096, 512K, 512M, 1G, 1GiB). Decimal units (KB, MB, ...) and fractions are\n"
	"refused. A bare number is in the option's unit: MiB for --memory and --limit, bytes for\n"
	"--file-size. A size in MiB must be a whole number of MiB: 1000K is refused, not\n"
	"rounded.\n";

static const char output_help[] =
	"Output: a table of ops/s per thread as mmtests compare prints it (Min, Max, Amean,\n"
	"Hmean, Stddev, CoeffVar, BHmean-50/95/99 over the ops/s of every thread of every\n"
	"round), the lock table in the columns of perf lock report plus the contended fraction\n"
	"(contended/acquired) per lock class, the ten call sites with the most lock wait in the\n"
	"columns of perf lock contention (type: the lock class; caller: the kernel function the\n"
	"path stands for), the batches row (lock holds per batch flush, folios per hold), vmstat\n"
	"counters and the thread-to-CPU ratio\n"
	"(threads / online CPUs). With --json: one JSON object per design, one object per line\n"
	"(node first with compare --by lock), with the keys workload, lock, backend, threads,\n"
	"containers, nodes, memory_mib_per_node, cpus, threads_per_cpu, duration_s, rounds,\n"
	"batch, batch_large, scan_cost, record_lock_sites, batch_policy, seed, elapsed_s, ops,\n"
	"ops_per_sec"
	"(all threads), round_ops_per_sec, ops_per_sec_per_thread {n, min, max, amean, hmean,\n"
	"stddev, coeffvar, bhmean50, bhmean95, bhmean99}, locks [{name, acquired, contended,\n"
	"contended_fraction, wait_total_ns, wait_avg_ns, wait_max_ns, wait_min_ns}],\n"
	"lock_sites [{caller, type, contended, wait_total_ns, wait_max_ns, wait_avg_ns}] (every\n"
	"call site, most wait first; empty with --lock-sites off), vmstat, drain_all {calls,\n"
	"sweeps}, batches {flushes, holds, folios, holds_per_flush, folios_per_hold}, counters,\n"
	"vm_rss_kib, vm_hwm_kib and check (\"ok\" or \"failed\": failed when\n"
	"a thread got an answer it did not expect or a check at the end failed; the row\n"
	"\"checks\" of the tables). Every round also runs lv_check() on the populated and on the "
	"emptied\n"
	"machine. A progress line is shown on stderr when it is a terminal.\n"
	"Workloads with their own unit (readtwice: MB/s per reader) print it instead of ops/s,\n"
	"and workloads add or replace JSON keys (each workload's help lists them).\n"
	"Exit status: 0 success, 1 the run failed (library error or invariant violation,\n"
	"described on stderr), 2 bad usage.\n";

/* The short help: one screen. Everything else is in lvbench help WORKLOAD. */
static void usage_main(FILE *out)
{
	fprintf(out,
		"Usage: lvbench WORKLOAD [OPTIONS]           run one lock design\n"
		"       lvbench compare WORKLOAD [OPTIONS]   both designs, side by side\n"
		"       lvbench scale WORKLOAD [OPTIONS]     cost per op, memory per memcg, by "
		"count\n"
		"       lvbench help [WORKLOAD | compare | scale]  what it models, options, "
		"output\n"
		"Benchmarks lruvec (Linux's memcg-aware page LRU): per-lruvec vs per-node "
		"lru_lock.\n\n");
	print_workloads(out);
	fprintf(out,
		"\nCommon options (defaults differ; sizes are powers of 1024, a bare --memory "
		"MiB):\n"
		"  --containers N  memory cgroups, 1..65534  --duration SEC  seconds per round\n"
		"  --threads N     threads (churn, scale)    --rounds N      rounds per design\n"
		"  --lock DESIGN   lruvec or node            --memory SIZE   per node: 1G, 512M\n"
		"  --nodes N       NUMA nodes                --json          JSON, one line "
		"each\n");
}

/* compare --by lock, every workload's default but numa's and page_fault2's. */
static const char compare_lock_help[] =
	"--by lock (the default of every workload but numa and page_fault2) runs the node (A,\n"
	"the baseline) and lruvec (B) designs alternately, ABAB..., --rounds rounds each\n"
	"(default 3; readtwice/readonce: 5; aim9: 2), every round on a fresh machine in this\n"
	"process, then prints them side by side. The percentage next to a value is relative to\n"
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
	"the sweep object. --disable does not apply then, nor does --sweep.\n";

/* compare --by cost, batch, batch-large, folio-order, lock-sites, batch-policy: one setting per
 * column. */
static const char compare_knob_help[] =
	"--by cost, batch, batch-large, folio-order, lock-sites and batch-policy compare one\n"
	"setting of the library instead, in the --lock design (default lruvec), the older "
	"behaviour first as\n"
	"the baseline, alternately (ABAB..., ABCABC... with three columns), --rounds rounds\n"
	"each:\n"
	"  cost         locked vs vmstat: reclaim's scan costs added under the LRU locks\n"
	"               (Linux <= 7.1) or counted per CPU and folded in under a cost lock\n"
	"  batch        batch-15 vs batch-31: folios per per-CPU batch (Linux <= 6.8, 6.9+)\n"
	"  batch-large  large-on vs large-off: large folios wait in the per-CPU batches\n"
	"               (Linux <= 6.16) or go to their list at once (6.17+)\n"
	"  folio-order  order-0 vs order-2 vs order-4: page cache folios of 1, 4, 16 pages\n"
	"               (readtwice, readonce)\n"
	"  lock-sites   sites-off vs sites-on: what recording contention by call site costs\n"
	"  batch-policy arrival vs sorted vs per-lruvec: batches flushed in arrival order,\n"
	"               sorted by lruvec first, or kept per lruvec (row batches: folios/hold)\n"
	"The option a --by value sets (--scan-cost, --batch, --batch-large, --folio-order,\n"
	"--lock-sites, --batch-policy) does not apply then. The tables name the columns so, and so "
	"does the\n"
	"key \"column\" of each JSON object (one per column, in this order); --sweep prints a\n"
	"row per container count with every column.\n";

/* The text of the comparison the workload makes by default comes first. */
static void usage_compare(FILE *out, const struct lvb_workload *wl)
{
	bool disable_first = wl && wl->compare_by == LVB_BY_DISABLE;

	fprintf(out, "Usage: lvbench compare %s [OPTIONS]\n\n", wl ? wl->name : "WORKLOAD");
	/* A default that is a setting (below the other two) is named first. */
	if (wl && wl->compare_by != LVB_BY_LOCK && wl->compare_by != LVB_BY_DISABLE) {
		const struct lvb_by_kind *k = &lvb_by_kinds[wl->compare_by];

		fprintf(out, "--by %s (%s's default): ", k->name, wl->name);
		for (unsigned int i = 0; i < k->nr; i++)
			fprintf(out, "%s%s", i ? " vs " : "", k->column[i]);
		fprintf(out, " %s, as described below.\n", k->what);
	}
	fprintf(out, "%s%s%s\n", disable_first ? compare_disable_help : compare_lock_help,
		disable_first ? compare_lock_help : compare_disable_help, compare_knob_help);
	if (wl) {
		fprintf(out, "%s\n", wl->help);
		if (wl->opts) {
			fprintf(out, "\nOptions of %s:\n", wl->name);
			print_opts(out, wl->opts, wl, NULL);
		}
	} else {
		print_workloads(out);
		fprintf(out, "'lvbench help compare WORKLOAD' adds the workload's own help.\n");
	}
	fprintf(out, "\nOptions of compare:\n");
	print_opts(out, compare_opts, wl, NULL);
	fprintf(out,
		"\nOptions of every workload (--lock only with --by disable: --by lock runs "
		"both designs)%s%s:\n",
		wl ? ", defaults in " : "", wl ? wl->name : "");
	print_opts(out, common_opts, wl, NULL);
	fprintf(out, "\n%s\n%s", sizes_help, output_help);
}

/* lvbench help scale [WORKLOAD], lvbench scale [WORKLOAD] --help. */
static void usage_scale(FILE *out, const struct lvb_workload *wl)
{
	char buf[128];

	fprintf(out, "Usage: lvbench scale %s [--sweep N,N,...] [OPTIONS]\n\n%s\n",
		wl ? wl->name : "WORKLOAD", lvb_scale_help);
	if (wl && wl->opts) {
		fprintf(out, "\nOptions of %s:\n", wl->name);
		print_opts(out, wl->opts, wl, NULL);
	} else if (!wl) {
		fprintf(out, "\nWorkloads: %s ('lvbench help scale WORKLOAD' adds its options).\n",
			workloads_with(LVB_WL_SCALE, buf, sizeof(buf)));
	}
	fprintf(out, "\nOptions of scale:\n");
	print_opts(out, scale_opts, wl, scale_defaults);
	fprintf(out, "\nOptions of every workload, defaults in scale%s%s:\n", wl ? " " : "",
		wl ? wl->name : "");
	print_opts(out, common_opts, wl, scale_defaults);
	fprintf(out, "\n%s", sizes_help);
}

/* lvbench help WORKLOAD, lvbench WORKLOAD --help: the long form. */
static void usage_workload(FILE *out, const struct lvb_workload *wl)
{
	fprintf(out, "Usage: lvbench %s [OPTIONS]\n       lvbench compare %s [OPTIONS]\n\n%s\n",
		wl->name, wl->name, wl->help);
	if (wl->opts) {
		fprintf(out, "\nOptions of %s:\n", wl->name);
		print_opts(out, wl->opts, wl, NULL);
	}
	fprintf(out, "\nOptions of every workload, defaults in %s:\n", wl->name);
	print_opts(out, common_opts, wl, NULL);
	fprintf(out, "\nOptions of compare (lvbench help compare):\n");
	print_opts(out, compare_opts, wl, NULL);
	fprintf(out, "\n%s\n%s", sizes_help, output_help);
}

/* ---- parsing --------------------------------------------------------------------------------- */

/* Where a usage error sends the reader: the workload's help once the workload is known. */
static const char *usage_hint = "lvbench --help";
static char usage_hint_buf[64];

static void set_usage_hint(const char *fmt, const char *name)
{
	snprintf(usage_hint_buf, sizeof(usage_hint_buf), fmt, name);
	usage_hint = usage_hint_buf;
}

int lvb_usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "lvbench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s'.\n", usage_hint);
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

/*
 * parse_size - "1G", "512M", "4096": digits and an optional suffix K, M, G, T or P (either
 * case), optionally followed by "iB", powers of 1024 as in truncate(1). A bare number is
 * multiplied by @unit. *@suffixed tells whether a suffix was given.
 * Return: 0, -EINVAL (not a size), -EDOM (a decimal unit such as KB: truncate(1) reads it as
 * powers of 1000, so it is refused rather than guessed) or -ERANGE.
 */
static int parse_size(const char *s, uint64_t unit, uint64_t *v, bool *suffixed)
{
	static const char suffixes[] = "KMGTP";
	const char *sfx;
	uint64_t n, mult = 1;
	char *end;

	*suffixed = false;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno)
		return -errno;
	if (*end) {
		sfx = strchr(suffixes, *end >= 'a' ? *end - 'a' + 'A' : *end);
		if (!sfx)
			return -EINVAL;
		end++;
		if (*end == 'i' && end[1] == 'B')
			end += 2;
		else if (*end == 'B' && !end[1])
			return -EDOM;
		if (*end)
			return -EINVAL;
		for (const char *q = suffixes; q <= sfx; q++)
			mult *= 1024;
		*suffixed = true;
	} else {
		mult = unit;
	}
	if (n > UINT64_MAX / mult)
		return -ERANGE;
	*v = n * mult;
	return 0;
}

/* A size for messages: "64 GiB", "4 KiB", or bytes when it is not a whole number of KiB. */
static const char *size_str(uint64_t bytes, char *buf, size_t size)
{
	static const char *const units[] = { "bytes", "KiB", "MiB", "GiB", "TiB", "PiB" };
	unsigned int u = 0;

	if (!bytes) {
		snprintf(buf, size, "0");
		return buf;
	}
	while (u + 1 < sizeof(units) / sizeof(units[0]) && bytes && !(bytes % 1024)) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, size, "%llu %s", (unsigned long long)bytes, units[u]);
	return buf;
}

/* set_size - an LVB_OPT_SIZE (bytes) or LVB_OPT_MIB (whole MiB) option from @arg. */
static int set_size(const struct lvb_opt *o, char *p, const char *arg)
{
	uint64_t unit = o->kind == LVB_OPT_MIB ? 1ull << 20 : 1, bytes;
	char lo[32], hi[32];
	bool suffixed;
	int err;

	err = parse_size(arg, unit, &bytes, &suffixed);
	if (err == -EINVAL)
		return lvb_usage_error("--%s: '%s' is not a size (digits, optionally followed by "
				       "K, M, G, T or P: powers of 1024)",
				       o->name, arg);
	if (err == -EDOM)
		return lvb_usage_error("--%s: '%s': decimal units are not accepted; use K, M, G, "
				       "T or P (powers of 1024), or KiB, MiB, ...",
				       o->name, arg);
	if (!err && bytes % unit)
		return lvb_usage_error("--%s: %s is not a whole number of MiB (%.3f MiB); sizes "
				       "in MiB are not rounded",
				       o->name, arg, (double)bytes / (double)unit);
	size_str((uint64_t)o->min * unit, lo, sizeof(lo));
	size_str((uint64_t)o->max * unit, hi, sizeof(hi));
	if (err || (double)(bytes / unit) < o->min || (double)(bytes / unit) > o->max)
		return lvb_usage_error("--%s: %s%s is out of range (%s..%s)", o->name, arg,
				       !suffixed && unit > 1 ? " MiB" : "", lo, hi);
	if (o->kind == LVB_OPT_MIB)
		*(unsigned int *)p = (unsigned int)(bytes / unit);
	else
		*(uint64_t *)p = bytes;
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
	case LVB_OPT_MIB:
		return set_size(o, p, arg);
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
	bool positional_seen = false;

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
			if (!wl || !wl->positional || positional_seen)
				return lvb_usage_error("unexpected argument '%s'", arg);
			positional_seen = true;
			o = find_opt(wl->opts, wl->positional, strlen(wl->positional));
			if (set_value(o, params, arg))
				return -1;
			continue;
		}
		name = arg + 2;
		eq = strchr(name, '=');
		len = eq ? (size_t)(eq - name) : strlen(name);
		o = find_opt(common_opts, name, len);
		if (!o && common->scale)
			o = find_opt(scale_opts, name, len);
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

/*
 * check_by - before the workload's defaults fill them in: the options @wl does not honour, the
 * --by values it has no columns for, and the option compare's columns set themselves.
 */
static int check_by(const struct lvb_common *c, const struct lvb_workload *wl)
{
	const struct lvb_by_kind *k = &lvb_by_kinds[c->by];
	const struct lvb_default *d;
	char buf[128];

	if (!(wl->features & LVB_WL_DISABLE) &&
	    (c->disable != LVB_UNSET || (c->compare && c->by == LVB_BY_DISABLE)))
		return lvb_usage_error(
			"options '--disable' and '--by disable' apply to numa only (%s never "
			"calls lv_lru_cache_disable)",
			wl->name);
	if (!(wl->features & LVB_WL_FOLIO_ORDER) && c->folio_order != LVB_UNSET) {
		d = find_default(wl, "folio-order");
		return lvb_usage_error("option '--folio-order' does not apply to %s (%s)", wl->name,
				       d ? d->text : "it has no page cache");
	}
	if (!c->compare)
		return 0;
	if ((wl->features & k->needs) != k->needs)
		return lvb_usage_error("compare --by %s applies to %s only", k->name,
				       workloads_with(k->needs, buf, sizeof(buf)));
	if (*(const unsigned int *)((const char *)c + k->off) != LVB_UNSET) {
		size_t len = 0;

		for (unsigned int i = 0; i < k->nr && len < sizeof(buf); i++)
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s",
						!i		? ""
						: i + 1 < k->nr ? ", "
								: " and ",
						k->column[i]);
		return lvb_usage_error("compare --by %s: option '--%s' does not apply (compare "
				       "runs %s)",
				       k->name, k->option, buf);
	}
	return 0;
}

/* After the workload's and the generic defaults: the combinations that make no sense. */
static int check_opts(const struct lvb_common *c)
{
	if (!c->compare && !c->scale && c->sweep.n)
		return lvb_usage_error("option '--sweep' applies to compare and scale only "
				       "(lvbench compare|scale WORKLOAD --sweep ...)");
	if (!c->compare && c->plot)
		return lvb_usage_error("option '--plot' applies to compare only");
	if (c->plot && !c->sweep.n)
		return lvb_usage_error(
			"option '--plot' needs --sweep (the container counts to plot)");
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

/* The columns to run: with compare, one per value of the --by knob; else the one chosen. */
static unsigned int variants(const struct lvb_common *c, struct lvb_variant *v)
{
	const struct lvb_by_kind *k = &lvb_by_kinds[c->by];

	if (!c->compare) {
		enum lv_lock_design design =
			c->lock == LVB_UNSET ? LV_LOCK_LRUVEC : (enum lv_lock_design)c->lock;

		v[0] = (struct lvb_variant){ (enum lvb_by)c->by, LVB_UNSET,
					     c->by == LVB_BY_DISABLE ? lvb_disable_names[c->disable]
								     : lvb_lock_names[design] };
		return 1;
	}
	for (unsigned int i = 0; i < k->nr; i++)
		v[i] = (struct lvb_variant){ (enum lvb_by)c->by, k->value[i], k->column[i] };
	return k->nr;
}

static int scale_unsupported(const struct lvb_workload *wl)
{
	char buf[128];

	lvb_usage_error("scale: %s is not supported (scale runs %s: they keep the same threads "
			"at every container count)",
			wl->name, workloads_with(LVB_WL_SCALE, buf, sizeof(buf)));
	return LVB_EXIT_USAGE;
}

static bool is_help(const char *arg)
{
	return !strcmp(arg, "--help") || !strcmp(arg, "-h") || !strcmp(arg, "help");
}

/*
 * help_topic - lvbench help [TOPIC...]: nothing (the short help), a workload, compare, or
 * compare and a workload. Return: an exit status.
 */
static int help_topic(int argc, char **argv)
{
	const struct lvb_workload *wl = NULL;
	bool compare = false, scale = false;
	int i = 0;

	if (i < argc && !strcmp(argv[i], "compare")) {
		compare = true;
		i++;
	} else if (i < argc && !strcmp(argv[i], "scale")) {
		scale = true;
		i++;
	}
	if (i < argc) {
		wl = find_workload(argv[i]);
		if (!wl) {
			lvb_usage_error("help: unknown workload '%s' (churn, readtwice, readonce, "
					"aim9, numa, compact, swap, reparent, usemem, page_fault2, "
					"replay; or compare, scale)",
					argv[i]);
			return LVB_EXIT_USAGE;
		}
		i++;
	}
	if (i < argc) {
		lvb_usage_error("help: unexpected argument '%s'", argv[i]);
		return LVB_EXIT_USAGE;
	}
	if (scale && wl && !(wl->features & LVB_WL_SCALE))
		return scale_unsupported(wl);
	if (compare)
		usage_compare(stdout, wl);
	else if (scale)
		usage_scale(stdout, wl);
	else if (wl)
		usage_workload(stdout, wl);
	else
		usage_main(stdout);
	return LVB_EXIT_OK;
}

int main(int argc, char **argv)
{
	const struct lvb_workload *wl;
	struct lvb_common common;
	struct lvb_variant v[LVB_MAX_VARIANTS];
	bool compare = false, scale = false, containers_given;
	unsigned int nr_variants;
	void *params = NULL;
	int first, ret;

	if (argc < 2) {
		usage_main(stderr);
		return LVB_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "help"))
		return help_topic(argc - 2, argv + 2);
	if (is_help(argv[1])) {
		usage_main(stdout);
		return LVB_EXIT_OK;
	}
	first = 1;
	if (!strcmp(argv[1], "compare") || !strcmp(argv[1], "scale")) {
		compare = !strcmp(argv[1], "compare");
		scale = !compare;
		first = 2;
		set_usage_hint("lvbench help %s", argv[1]);
		if (argc < 3 || argv[2][0] == '-' || !strcmp(argv[2], "help")) {
			if (argc >= 3 && is_help(argv[2])) {
				if (compare)
					usage_compare(stdout, NULL);
				else
					usage_scale(stdout, NULL);
				return LVB_EXIT_OK;
			}
			lvb_usage_error("%s: missing workload", argv[1]);
			return LVB_EXIT_USAGE;
		}
	}
	wl = find_workload(argv[first]);
	if (!wl) {
		if (first == 2)
			lvb_usage_error("%s: unknown workload '%s'", argv[1], argv[first]);
		else if (argv[first][0] == '-')
			lvb_usage_error("unknown option '%s' (a workload, compare or scale comes "
					"first)",
					argv[first]);
		else
			lvb_usage_error("unknown subcommand or workload '%s'", argv[first]);
		return LVB_EXIT_USAGE;
	}
	if (scale && !(wl->features & LVB_WL_SCALE))
		return scale_unsupported(wl);
	set_usage_hint(compare ? "lvbench help compare %s"
		       : scale ? "lvbench help scale %s"
			       : "lvbench help %s",
		       wl->name);

	common_defaults(&common);
	common.scale = scale;
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
		else if (scale)
			usage_scale(stdout, wl);
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
	if (scale && !common.sweep.n)
		common.sweep = (struct lvb_list)SCALE_SWEEP;
	if (scale && common.rounds == LVB_UNSET)
		common.rounds = SCALE_ROUNDS;
	containers_given = common.containers != LVB_UNSET;
	if (check_by(&common, wl) || (wl->prepare && wl->prepare(&common, params)) ||
	    check_opts(&common)) {
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
	/* A workload's prepare hook may have chosen its own (readtwice does). */
	if (scale && common.threads == LVB_UNSET)
		common.threads = 2 * lvb_online_cpus() < LVB_MAX_THREADS ? 2 * lvb_online_cpus()
									 : LVB_MAX_THREADS;
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

	nr_variants = variants(&common, v);
	if (scale)
		ret = lvb_scale(wl, &common, params, v);
	else
		ret = lvb_bench(wl, &common, params, v, nr_variants);
	free(params);
	return ret;
}
