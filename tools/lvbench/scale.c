// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * scale - what the number of memcgs costs: per op, and in the library's memory.
 *
 * lvbench scale WORKLOAD --sweep N,N,... runs churn or readtwice at each container count with
 * the same threads and the same memory, every container in use (the workloads spread their
 * threads over the containers in turn when the containers outnumber them: churn.c,
 * readtwice.c), and sets the cost of an op at each count beside the first count's. The counts
 * take turns round by round (compare.c's sweep, interleaved), each round on a fresh machine,
 * so that a slow minute of a shared machine hits every count alike; the cost quoted is the
 * median over the rounds.
 *
 * The memory is measured, not computed from the sizes of structures lvbench cannot see: the
 * heap glibc holds for the process (mallinfo2(): uordblks in the arenas plus hblkhd mapped)
 * before and after creating a count's memcgs, divided by the count. The memcgs are created on
 * a fresh machine of the run's configuration made for the measurement alone, without kswapd
 * and kcompactd threads (a thread starting up allocates, in the middle of the measurement)
 * and with the least memory per node (a memcg's size depends on neither). What it measures is
 * everything the library allocates for a memcg (the memcg, its lruvec per node with their
 * locks and statistics, the obj_cgroups) and the allocator's overhead on each allocation.
 * Machines with SPLIT_NODES nodes and SPLIT_SLOTS CPU slots more split that into a fixed
 * part, a part per node and a part per CPU slot, the terms of the budget.
 */
#include "lvbench.h"

#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

/* The budget per memcg: 8 KiB + 2 KiB per node + 256 bytes per CPU slot. */
#define BUDGET_FIXED 8192.0
#define BUDGET_NODE  2048.0
#define BUDGET_SLOT  256.0

#define SPLIT_MEMCGS 1000u /* memcgs on each machine that splits the memory per memcg */
/*
 * How many nodes and CPU slots the splitting machines add: enough that the allocator's
 * alignment of a memcg (up to 64 bytes either way) is a byte or two per slot, not a term.
 */
#define SPLIT_NODES    4u
#define SPLIT_SLOTS    64u
#define MEASURE_MEMORY (4ul << 20) /* per node of a measuring machine: the least allowed */
#define MAX_CPU_SLOTS  4096u	   /* lv_config's */

/* struct memcg_heap - the library's heap per memcg on one machine, and the machine's shape. */
struct memcg_heap {
	double bytes;
	unsigned int nodes, slots;
};

/* struct scale_sweep - the state of one scale sweep: each count's memory, its cost per op. */
struct scale_sweep {
	struct memcg_heap heap[LVB_MAX_LIST];
	double ns_per_op[LVB_MAX_LIST];	  /* the median over the rounds */
	double fixed, per_node, per_slot; /* the split of a memcg's heap */
	struct memcg_heap split_base;	  /* the machines the split comes from */
	struct memcg_heap split_node, split_slot;
	enum lv_lock_design design;
};

static size_t heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

/*
 * measure_heap - the heap that @n memcgs take, per memcg, on a fresh machine configured as
 * @opt's but with @nodes nodes and @slots CPU slots (0: the machine's default count), made and
 * destroyed for the measurement.
 * Return: 0, or -errno after saying why.
 */
static int measure_heap(const struct lvb_common *opt, enum lv_lock_design design,
			unsigned int nodes, unsigned int slots, unsigned int n,
			struct memcg_heap *h)
{
	struct lv_memcg **memcgs = calloc(n, sizeof(*memcgs));
	struct lv_machine *m = NULL;
	unsigned int made = 0;
	size_t before, after;
	struct lv_config cfg;
	int err = 0;

	lvb_env_config(opt, design, 0, &cfg);
	cfg.nr_nodes = nodes;
	cfg.nr_cpu_slots = slots;
	cfg.node_mem_bytes = MEASURE_MEMORY;
	cfg.no_kswapd = true;
	cfg.no_kcompactd = true;
	if (memcgs)
		m = lv_machine_create(&cfg);
	if (!m) {
		err = -errno;
		fprintf(stderr, "lvbench: scale: a machine to measure memcgs on: %s\n",
			strerror(errno));
		free(memcgs);
		return err;
	}
	before = heap_in_use();
	for (; made < n; made++) {
		char name[16];

		snprintf(name, sizeof(name), "c%u", made);
		memcgs[made] = lv_memcg_create(m, NULL, name);
		if (!memcgs[made]) {
			err = -errno;
			fprintf(stderr, "lvbench: scale: memcg %u of %u, to measure: %s\n",
				made + 1, n, strerror(errno));
			break;
		}
	}
	after = heap_in_use();
	*h = (struct memcg_heap){ .bytes = ((double)after - (double)before) / n,
				  .nodes = nodes,
				  .slots = lv_machine_config(m)->nr_cpu_slots };
	for (unsigned int c = 0; c < made; c++)
		lv_memcg_remove(memcgs[c]);
	lv_machine_destroy(m);
	free(memcgs);
	return err;
}

/* other - @n + @more, or @n - @more if that is above @max. */
static unsigned int other(unsigned int n, unsigned int more, unsigned int max)
{
	return n + more <= max ? n + more : n - more;
}

/*
 * measure_split - a memcg's heap as fixed + per node x nodes + per slot x slots, from machines
 * of @opt's nodes and slots, of SPLIT_NODES nodes more and of SPLIT_SLOTS CPU slots more
 * (fewer where more are not allowed). Return: 0, or -1 after saying why.
 */
static int measure_split(struct scale_sweep *ss, const struct lvb_common *opt)
{
	struct memcg_heap *base = &ss->split_base, node, slot;

	if (measure_heap(opt, ss->design, opt->nodes, 0, SPLIT_MEMCGS, base) ||
	    measure_heap(opt, ss->design, other(opt->nodes, SPLIT_NODES, LV_MAX_NODES), base->slots,
			 SPLIT_MEMCGS, &node) ||
	    measure_heap(opt, ss->design, opt->nodes,
			 other(base->slots, SPLIT_SLOTS, MAX_CPU_SLOTS), SPLIT_MEMCGS, &slot))
		return -1;
	ss->split_node = node;
	ss->split_slot = slot;
	ss->per_node = (node.bytes - base->bytes) / ((double)node.nodes - base->nodes);
	ss->per_slot = (slot.bytes - base->bytes) / ((double)slot.slots - base->slots);
	ss->fixed = base->bytes - ss->per_node * base->nodes - ss->per_slot * base->slots;
	return 0;
}

static double budget(const struct memcg_heap *h)
{
	return BUDGET_FIXED + BUDGET_NODE * h->nodes + BUDGET_SLOT * h->slots;
}

/*
 * ns_per_op - threads / ops per second of all threads in each round of @s into @rounds, and
 * their median; @sorted has room for as many (a round without ops has none).
 */
static double ns_per_op(const struct lvb_series *s, unsigned int threads, double *rounds,
			double *sorted)
{
	size_t n = 0;

	for (unsigned int r = 0; r < s->rounds; r++) {
		rounds[r] = s->round_ops[r] > 0 ? threads * 1e9 / s->round_ops[r] : 0;
		if (rounds[r] > 0)
			sorted[n++] = rounds[r];
	}
	return lvb_median(sorted, n);
}

static void scale_header(struct lvb_sweep *sw)
{
	const struct scale_sweep *ss = sw->priv;
	const struct lvb_common *opt = sw->opt;
	const struct memcg_heap *b = &ss->split_base;
	unsigned int cpus = lvb_online_cpus();

	printf("lvbench scale %s: %s lru_lock, %u round%s of %g s per count, the counts taking "
	       "turns\n",
	       sw->wl->name, lvb_lock_names[ss->design], opt->rounds, lvb_plural(opt->rounds),
	       opt->duration);
	printf("%u online CPU%s, %u CPU slot%s, %u node%s x %u MiB, %s locks, batch %u\n", cpus,
	       lvb_plural(cpus), b->slots, lvb_plural(b->slots), opt->nodes, lvb_plural(opt->nodes),
	       opt->memory_mib, lvb_backend_names[opt->backend], opt->batch);
	if (sw->wl->describe)
		sw->wl->describe(stdout, opt, sw->params);
	printf("ns/op: threads / ops per second of all threads, the median of the rounds (an op: "
	       "%s);\n"
	       "x first: ns/op over the first count's; cont: contended/acquired of the LRU lock;\n"
	       "memcg: the library's heap per memcg (mallinfo2() around creating them); budget: "
	       "8 KiB +\n"
	       "2 KiB x %u node%s + 256 B x %u CPU slot%s. A memcg's heap splits into %.0f B "
	       "fixed,\n"
	       "%.0f B per node and %.1f B per CPU slot (%u memcgs on machines of %u and %u "
	       "nodes,\n"
	       "%u and %u CPU slots)\n\n",
	       sw->wl->rate ? "a 4 KiB read" : "a library call", opt->nodes, lvb_plural(opt->nodes),
	       b->slots, lvb_plural(b->slots), ss->fixed, ss->per_node, ss->per_slot, SPLIT_MEMCGS,
	       opt->nodes, ss->split_node.nodes, b->slots, ss->split_slot.slots);
	printf("%10s %8s %14s %9s %8s %8s %9s %9s %4s\n", "containers", "threads", "ops/s", "ns/op",
	       "x first", "cont", "memcg B", "budget B", "met");
	fflush(stdout);
}

/* The memory of count @i, measured before its first round. */
static int scale_start(struct lvb_sweep *sw, unsigned int i, const struct lvb_common *o)
{
	struct scale_sweep *ss = sw->priv;

	lvb_progress_label("%s, %u container%s, memory per memcg", sw->wl->name, o->containers,
			   lvb_plural(o->containers));
	return measure_heap(o, ss->design, o->nodes, 0, o->containers, &ss->heap[i]) ? -1 : 0;
}

static void scale_json(const struct lvb_sweep *sw, unsigned int i, const struct lvb_common *o,
		       const struct lvb_series *s, const struct lvb_ceiling *c,
		       const double *rounds)
{
	const struct scale_sweep *ss = sw->priv;
	const struct memcg_heap *h = &ss->heap[i];
	struct lv_lock_stat lock = lvb_lru_lock(s);
	bool first = true;

	putchar('{');
	lvb_json_str(stdout, &first, "workload", sw->wl->name);
	lvb_json_str(stdout, &first, "lock", lvb_lock_names[ss->design]);
	lvb_json_u64(stdout, &first, "containers", o->containers);
	lvb_json_u64(stdout, &first, "threads", o->threads);
	lvb_json_u64(stdout, &first, "nodes", o->nodes);
	lvb_json_u64(stdout, &first, "memory_mib_per_node", o->memory_mib);
	lvb_json_u64(stdout, &first, "cpus", lvb_online_cpus());
	lvb_json_double(stdout, &first, "threads_per_cpu", (double)o->threads / lvb_online_cpus());
	lvb_json_u64(stdout, &first, "cpu_slots", h->slots);
	lvb_json_double(stdout, &first, "duration_s", o->duration);
	lvb_json_u64(stdout, &first, "rounds", s->rounds);
	lvb_json_double(stdout, &first, "elapsed_s", s->elapsed);
	lvb_json_u64(stdout, &first, "ops", s->ops);
	lvb_json_double(stdout, &first, "ops_per_sec",
			s->elapsed > 0 ? (double)s->ops / s->elapsed : 0);
	lvb_json_double(stdout, &first, "ns_per_op", ss->ns_per_op[i]);
	lvb_json_key(stdout, &first, "ns_per_op_rounds");
	for (unsigned int r = 0; r < s->rounds; r++)
		printf("%s%.3f", r ? "," : "[", rounds[r]);
	fputs(s->rounds ? "]" : "[]", stdout);
	lvb_json_double(stdout, &first, "ns_per_op_ratio",
			ss->ns_per_op[0] > 0 ? ss->ns_per_op[i] / ss->ns_per_op[0] : 0);
	lvb_json_u64(stdout, &first, "lru_lock_acquired", lock.acquired);
	lvb_json_u64(stdout, &first, "lru_lock_contended", lock.contended);
	lvb_json_double(stdout, &first, "lru_lock_contended_fraction",
			lvb_contended_fraction(&lock));
	lvb_json_double(stdout, &first, "lru_lock_wait_per_op_ns",
			s->ops ? (double)lock.wait_total_ns / (double)s->ops : 0);
	lvb_json_double(stdout, &first, "memcg_bytes", h->bytes);
	lvb_json_double(stdout, &first, "memcg_budget_bytes", budget(h));
	lvb_json_key(stdout, &first, "memcg_budget_met");
	fputs(h->bytes <= budget(h) ? "true" : "false", stdout);
	lvb_json_double(stdout, &first, "memcg_fixed_bytes", ss->fixed);
	lvb_json_double(stdout, &first, "memcg_node_bytes", ss->per_node);
	lvb_json_double(stdout, &first, "memcg_slot_bytes", ss->per_slot);
	lvb_json_u64(stdout, &first, "vm_hwm_kib", s->vm_hwm_kib);
	if (sw->wl->json_extra)
		sw->wl->json_extra(stdout, &first, o, sw->params, s, c);
	lvb_json_str(stdout, &first, "check", s->failures ? "failed" : "ok");
	fputs("}\n", stdout);
}

static void scale_row(struct lvb_sweep *sw, unsigned int i, const struct lvb_common *o,
		      const struct lvb_series *s, const struct lvb_ceiling *c)
{
	struct scale_sweep *ss = sw->priv;
	const struct memcg_heap *h = &ss->heap[i];
	double *rounds = calloc(2 * (s->rounds ? s->rounds : 1), sizeof(*rounds));
	struct lv_lock_stat lock = lvb_lru_lock(s);
	char ratio[16] = "n/a";

	if (!rounds) {
		perror("lvbench");
		return;
	}
	ss->ns_per_op[i] = ns_per_op(s, o->threads, rounds, rounds + s->rounds);
	if (o->json) {
		scale_json(sw, i, o, s, c, rounds);
	} else {
		if (ss->ns_per_op[0] > 0)
			snprintf(ratio, sizeof(ratio), "%.2fx",
				 ss->ns_per_op[i] / ss->ns_per_op[0]);
		printf("%10u %8u %14.0f %9.1f %8s %7.3f%% %9.0f %9.0f %4s\n", o->containers,
		       o->threads, s->elapsed > 0 ? (double)s->ops / s->elapsed : 0,
		       ss->ns_per_op[i], ratio, 100 * lvb_contended_fraction(&lock), h->bytes,
		       budget(h), h->bytes <= budget(h) ? "yes" : "no");
	}
	free(rounds);
}

/**
 * lvb_scale - lvbench scale: @variant's design at every count of @opt->sweep, the counts
 * taking turns round by round, one row (or JSON object) per count.
 * Return: an exit status.
 */
int lvb_scale(const struct lvb_workload *wl, const struct lvb_common *opt, const void *params,
	      const struct lvb_variant *variant)
{
	static const struct lvb_sweep_ops ops = {
		.interleave = true,
		.header = scale_header,
		.start = scale_start,
		.row = scale_row,
	};
	struct scale_sweep ss = { 0 };
	struct lvb_sweep sw = { wl, opt, params, variant, 1, &ops, &ss };
	struct lvb_common o;

	ss.design = lvb_variant_apply(variant, opt, &o);
	lvb_progress_label("%s, memory per memcg, per node and per CPU slot", wl->name);
	if (measure_split(&ss, opt))
		return LVB_EXIT_FAIL;
	return lvb_sweep_run(&sw);
}

const char lvb_scale_help[] =
	"scale: what the number of memcgs costs. At each container count of --sweep the\n"
	"workload (churn or readtwice) runs with the same --threads and the same --memory, so\n"
	"each container's share shrinks as the count grows, and every container is in use:\n"
	"with more containers than threads, thread t serves containers t, t+T, t+2T, ... in\n"
	"turn (churn: each new folio is charged to the next of them; readtwice: their readers\n"
	"in turns of 32 reads, see lvbench help readtwice). The counts take turns round by\n"
	"round, --rounds times, each round on a fresh machine. Per count:\n"
	"  ns/op     threads / ops per second of all threads, what an op costs a thread: the\n"
	"            median of the rounds; an op is a library call (churn), a 4 KiB read\n"
	"            (readtwice)\n"
	"  x first   ns/op over the first count's\n"
	"  cont      contended/acquired of the LRU lock\n"
	"  memcg B   the library's heap per memcg: mallinfo2()'s uordblks + hblkhd before and\n"
	"            after creating the count's memcgs, over the count, on a fresh machine of\n"
	"            the run's configuration made for the measurement (no kswapd or kcompactd\n"
	"            thread, 4 MiB per node: a memcg's size depends on neither)\n"
	"  budget B  8 KiB + 2 KiB x nodes + 256 B x CPU slots; met: memcg B within it\n"
	"The header splits a memcg's heap into a fixed part, a part per node and one per CPU\n"
	"slot, measured with 1000 memcgs on machines of 4 nodes and of 64 CPU slots more.\n"
	"The goals, measured and not asserted: ns/op at 10,000 memcgs at most 1.1x that at 10,\n"
	"memcg B within the budget; the current table: docs/benchmarks.md, scale.\n"
	"JSON (--json): one object per count, one per line, with the keys workload, lock,\n"
	"containers, threads, nodes, memory_mib_per_node, cpus, threads_per_cpu, cpu_slots,\n"
	"duration_s, rounds, elapsed_s, ops, ops_per_sec (all threads, all rounds), ns_per_op,\n"
	"ns_per_op_rounds (one per round), ns_per_op_ratio (over the first count's),\n"
	"lru_lock_acquired, lru_lock_contended, lru_lock_contended_fraction,\n"
	"lru_lock_wait_per_op_ns, memcg_bytes, memcg_budget_bytes, memcg_budget_met,\n"
	"memcg_fixed_bytes, memcg_node_bytes, memcg_slot_bytes, vm_hwm_kib,\n"
	"the workload's own keys (churn: working_set, limit_mib; readtwice: readers,\n"
	"readers_per_container, turn_reads, file, file_size, ...) and check (\"ok\" or\n"
	"\"failed\").\n"
	"Exit status: 0 success, 1 a run failed (described on stderr), 2 bad usage.";
