// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * lock-designs - one multi-threaded page cache workload on both of the library's LRU lock
 * designs, and what each design's LRU lock went through.
 *
 *   lock-designs
 *
 * The kernel keeps its page LRU lists per (memory cgroup, NUMA node): one "lruvec" each. Up to
 * Linux 5.10 every lruvec of a node was protected by one lock of the node; since Linux 5.11
 * each lruvec has a lock of its own (docs/protocol.md §3). The library implements both, chosen
 * when a machine is created (struct lv_config.lock_design): LV_LOCK_NODE and LV_LOCK_LRUVEC.
 *
 * This program runs the same workload on a machine of each design: a few tenants (memcgs), each
 * with a memory limit and a sparse file of its own (a file of holes, read as zeros, so no disk
 * is involved) several times larger than the limit, and more reader threads than the computer
 * has CPUs, thread t reading the file of tenant t % NR_TENANTS from start to end in 4 KiB
 * reads, twice. A read that misses allocates a page, charges it to the tenant and adds it to
 * the LRU; a read that hits marks the page accessed, which may activate it; a tenant at its
 * limit reclaims its own pages. All three take the tenant's LRU lock. In the node design the
 * tenants' threads meet on the node's one lock; in the lruvec design they only meet their own
 * tenant's threads.
 *
 * For each design it prints the time the threads took and the statistics of the LRU lock
 * (lv_lock_stats(): acquisitions, how many of them found the lock held, and the time spent
 * waiting), for both lock classes: the node's lock (LV_LOCK_CLASS_NODE), used by the node
 * design, and the lruvecs' locks (LV_LOCK_CLASS_LRUVEC), used by the lruvec design. It exits
 * with 0 when every call succeeded and every byte read was zero, 1 otherwise. Contention
 * depends on the computer and its load: the numbers vary from run to run.
 */
#define _GNU_SOURCE
#include <lruvec.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <time.h>

#define NR_TENANTS  4
#define FILE_BYTES  (64ull << 20) /* each tenant's sparse file */
#define LIMIT_PAGES 1024	  /* each tenant's limit: 4 MiB, a sixteenth of its file */
#define NR_PASSES   2
#define MAX_THREADS 64

struct tenant {
	struct lv_memcg *memcg;
	struct lv_file *file;
};

/* The readers wait at the gate until every one of them exists, then start together. */
struct gate {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool open;   /* protected by lock */
	bool cancel; /* protected by lock: a thread could not be created, do nothing */
};

/* One reader thread: err and failed are written by the thread and read after pthread_join(). */
struct reader {
	pthread_t thread;
	struct tenant *tenant;
	struct gate *gate;
	int err;	    /* 0, or the errno of the call that failed */
	const char *failed; /* the name of that call */
};

/* A reader thread: read the tenant's file NR_PASSES times and check that it is all zeros. */
static void *reader_fn(void *arg)
{
	struct reader *r = arg;
	static const char zeros[LV_PAGE_SIZE];
	char buf[LV_PAGE_SIZE];
	bool cancel;

	pthread_mutex_lock(&r->gate->lock);
	while (!r->gate->open)
		pthread_cond_wait(&r->gate->cond, &r->gate->lock);
	cancel = r->gate->cancel;
	pthread_mutex_unlock(&r->gate->lock);
	if (cancel)
		return NULL;

	for (int pass = 0; pass < NR_PASSES; pass++) {
		for (uint64_t off = 0; off < FILE_BYTES; off += sizeof(buf)) {
			long n = lv_file_read(r->tenant->file, r->tenant->memcg, buf, sizeof(buf),
					      off);

			if (n < 0) {
				r->err = (int)-n;
				r->failed = "lv_file_read";
				return NULL;
			}
			if (n != sizeof(buf) || memcmp(buf, zeros, sizeof(buf))) {
				r->err = EIO;
				r->failed = "lv_file_read (short read or data not zero)";
				return NULL;
			}
		}
	}
	return NULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One row of the table; the design and its time are shown on its first row only. */
static void print_stat(const char *design, double seconds, enum lv_lock_class cls,
		       const struct lv_lock_stat *st)
{
	char secs[16] = "";

	if (design[0])
		snprintf(secs, sizeof(secs), "%.3f", seconds);
	printf("%-8s %8s  %-8s %12" PRIu64 " %12" PRIu64 " %12.3f\n", design, secs,
	       lv_lock_class_name(cls), st->acquired, st->contended, st->wait_total_ns / 1e6);
}

/* Tear down what run_design() set up: files first, then the (then empty) memcgs. */
static int teardown(struct lv_machine *m, struct tenant *tenants)
{
	int ret = 0;

	for (int i = 0; i < NR_TENANTS; i++) {
		if (tenants[i].file)
			lv_file_close(tenants[i].file);
		if (tenants[i].memcg) {
			int err = lv_memcg_remove(tenants[i].memcg);

			if (err) {
				fprintf(stderr, "lock-designs: lv_memcg_remove: %s\n",
					strerror(-err));
				ret = -1;
			}
		}
	}
	lv_machine_destroy(m);
	return ret;
}

/* Run the workload with @nr_threads readers on a fresh machine of @design. Return: 0 or -1. */
static int run_design(enum lv_lock_design design, const char *name, int nr_threads)
{
	struct tenant tenants[NR_TENANTS] = { 0 };
	struct reader readers[MAX_THREADS] = { 0 };
	struct lv_lock_stat node, lruvec;
	struct gate gate = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, false };
	struct lv_config cfg;
	struct lv_machine *m;
	int started = 0, ret = 0, err;
	double t0, seconds;

	/* One node of 64 MiB: every tenant's limit fits, so only the limits cause reclaim. */
	lv_config_init(&cfg);
	cfg.node_mem_bytes = 64 << 20;
	cfg.lock_design = design;
	m = lv_machine_create(&cfg);
	if (!m) {
		fprintf(stderr, "lock-designs: lv_machine_create: %s\n", strerror(errno));
		return -1;
	}
	for (int i = 0; i < NR_TENANTS; i++) {
		tenants[i].memcg = lv_memcg_create(m, NULL, "tenant");
		if (!tenants[i].memcg) {
			fprintf(stderr, "lock-designs: lv_memcg_create: %s\n", strerror(errno));
			teardown(m, tenants);
			return -1;
		}
		err = lv_memcg_set_max(tenants[i].memcg, LIMIT_PAGES);
		if (err) {
			fprintf(stderr, "lock-designs: lv_memcg_set_max: %s\n", strerror(-err));
			teardown(m, tenants);
			return -1;
		}
		/* fd -1: a sparse file, whose holes read as zeros. */
		tenants[i].file = lv_file_open(m, -1, FILE_BYTES);
		if (!tenants[i].file) {
			fprintf(stderr, "lock-designs: lv_file_open: %s\n", strerror(errno));
			teardown(m, tenants);
			return -1;
		}
	}

	for (; started < nr_threads; started++) {
		struct reader *r = &readers[started];

		r->tenant = &tenants[started % NR_TENANTS];
		r->gate = &gate;
		err = pthread_create(&r->thread, NULL, reader_fn, r);
		if (err) {
			fprintf(stderr, "lock-designs: pthread_create: %s\n", strerror(err));
			ret = -1;
			break;
		}
	}
	/* Count only the workload: the setup above took locks too. */
	lv_lock_stats_reset(m);
	t0 = now();
	pthread_mutex_lock(&gate.lock);
	gate.open = true;
	gate.cancel = ret < 0;
	pthread_cond_broadcast(&gate.cond);
	pthread_mutex_unlock(&gate.lock);
	for (int i = 0; i < started; i++) {
		err = pthread_join(readers[i].thread, NULL);
		if (err) {
			fprintf(stderr, "lock-designs: pthread_join: %s\n", strerror(err));
			ret = -1;
		}
		if (readers[i].err) {
			fprintf(stderr, "lock-designs: %s: %s\n", readers[i].failed,
				strerror(readers[i].err));
			ret = -1;
		}
	}
	seconds = now() - t0;

	lv_lock_stats(m, LV_LOCK_CLASS_NODE, &node);
	lv_lock_stats(m, LV_LOCK_CLASS_LRUVEC, &lruvec);
	if (!ret) {
		print_stat(name, seconds, LV_LOCK_CLASS_NODE, &node);
		print_stat("", seconds, LV_LOCK_CLASS_LRUVEC, &lruvec);
	}
	/* The library's own consistency check, at a quiescent point: every reader is done. */
	if (lv_check(m, stderr)) {
		fprintf(stderr, "lock-designs: lv_check found inconsistencies\n");
		ret = -1;
	}
	if (teardown(m, tenants))
		ret = -1;
	return ret;
}

int main(int argc, char **argv)
{
	/* More threads than CPUs, as in a busy container host; at least two per tenant. */
	int nr_threads = 2 * get_nprocs();
	int status = 0;

	(void)argv;
	if (argc != 1) {
		fprintf(stderr, "usage: lock-designs\n");
		return 2;
	}
	if (nr_threads < 2 * NR_TENANTS)
		nr_threads = 2 * NR_TENANTS;
	if (nr_threads > MAX_THREADS)
		nr_threads = MAX_THREADS;

	printf("%d tenants, %d reader threads on %d CPUs, %d passes over a %llu MiB file each\n",
	       NR_TENANTS, nr_threads, get_nprocs(), NR_PASSES, FILE_BYTES >> 20);
	printf("%-8s %8s  %-8s %12s %12s %12s\n", "design", "seconds", "lock", "acquired",
	       "contended", "wait ms");
	if (run_design(LV_LOCK_NODE, "node", nr_threads))
		status = 1;
	if (run_design(LV_LOCK_LRUVEC, "lruvec", nr_threads))
		status = 1;
	return status;
}
