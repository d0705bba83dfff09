// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The machinery every workload shares: one machine with its containers, a set of threads that
 * start together and stop together, and the checks that turn each round into a correctness
 * smoke test as well.
 *
 * Statistics are taken at a quiescent point: the threads finish their current step when the
 * duration is over and wait there, still holding their folios. Lock statistics and vmstat
 * are read then, so the teardown (releasing every folio, draining, removing memcgs) never
 * pollutes the numbers, and lv_check() runs on a populated machine, where it has the most to
 * verify. A second lv_check() after the teardown checks the empty machine.
 *
 * An env without a machine (a ceiling run) uses the same threads and the same timing, so that
 * the ceiling and the workload differ only in what a step does.
 */
#define _GNU_SOURCE
#include "lvbench.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

unsigned int lvb_online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (unsigned int)n : 1;
}

/**
 * lvb_pin_cpus - where --pin puts groups (containers) 0..@n-1: group i on the i-th, round-robin,
 * of the CPUs this process may run on, so that `taskset` narrows what --pin spreads over. The
 * mask is read once, at whatever size the kernel's CPU numbers need.
 * Return: 0, or -errno if the affinity mask cannot be read (cpus untouched).
 */
int lvb_pin_cpus(int *cpus, unsigned int n)
{
	for (int nr = CPU_SETSIZE;; nr *= 2) {
		size_t size = CPU_ALLOC_SIZE(nr);
		cpu_set_t *set = CPU_ALLOC(nr);
		int *allowed, count, err = 0;

		if (!set)
			return -ENOMEM;
		if (sched_getaffinity(0, size, set)) {
			err = -errno;
			CPU_FREE(set);
			/* EINVAL: the kernel's mask is larger than ours. */
			if (err == -EINVAL && nr < (1 << 20))
				continue;
			return err;
		}
		count = CPU_COUNT_S(size, set);
		allowed = count ? calloc((size_t)count, sizeof(*allowed)) : NULL;
		if (!allowed) {
			CPU_FREE(set);
			return count ? -ENOMEM : -EINVAL;
		}
		for (int cpu = 0, i = 0; cpu < nr && i < count; cpu++)
			if (CPU_ISSET_S(cpu, size, set))
				allowed[i++] = cpu;
		for (unsigned int i = 0; i < n; i++)
			cpus[i] = allowed[i % (unsigned int)count];
		free(allowed);
		CPU_FREE(set);
		return 0;
	}
}

void lvb_proc_memory(uint64_t *rss_kib, uint64_t *hwm_kib)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];

	*rss_kib = *hwm_kib = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "VmRSS:", 6))
			sscanf(line + 6, "%" SCNu64, rss_kib);
		else if (!strncmp(line, "VmHWM:", 6))
			sscanf(line + 6, "%" SCNu64, hwm_kib);
	}
	fclose(f);
}

static double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_until(double t)
{
	struct timespec ts = { .tv_sec = (time_t)t };

	ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
	if (ts.tv_nsec >= 1000000000L)
		ts.tv_nsec = 999999999L;
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* ---- progress -------------------------------------------------------------------------------- */

static char progress_label[96];

void lvb_progress_label(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(progress_label, sizeof(progress_label), fmt, ap);
	va_end(ap);
}

/* Redirected output is parsed by scripts: only a person at a terminal wants the ticker. */
static bool progress_wanted(void)
{
	return isatty(STDERR_FILENO);
}

static void progress_show(double done, double total)
{
	fprintf(stderr, "\rlvbench: %s: %.1f/%g s \033[K", progress_label, done, total);
	fflush(stderr);
}

static void progress_clear(void)
{
	fprintf(stderr, "\r\033[K");
	fflush(stderr);
}

/* lvb_zalloc - zeroed memory on cache-line boundaries (per-thread state must not share lines). */
void *lvb_zalloc(size_t bytes)
{
	size_t size = (bytes + 63) / 64 * 64;
	void *p = aligned_alloc(64, size ? size : 64);

	if (p)
		memset(p, 0, size ? size : 64);
	return p;
}

/* ---- machine and containers ------------------------------------------------------------------ */

void lvb_env_config(const struct lvb_common *opt, enum lv_lock_design design, unsigned int flags,
		    struct lv_config *cfg)
{
	lv_config_init(cfg);
	cfg->nr_nodes = opt->nodes;
	cfg->node_mem_bytes = (size_t)opt->memory_mib << 20;
	cfg->lock_design = design;
	cfg->lock_backend = (enum lv_lock_backend)opt->backend;
	cfg->batch_size = opt->batch;
	cfg->disable_mode =
		opt->disable == LVB_UNSET ? LV_DISABLE_SWEEP : (enum lv_disable_mode)opt->disable;
	/*
	 * Where only the LRU is measured, untouched data frames would only cost address space;
	 * the page cache needs them (a read copies the data out).
	 */
	cfg->metadata_only = !(flags & LVB_ENV_DATA);
	cfg->no_kswapd = flags & LVB_ENV_NO_KSWAPD;
	cfg->file_folio_order = (flags >> 8) & 0xf;
	cfg->readahead_pages = (flags >> 24) & 0x7f;
	if (opt->scan_cost != LVB_UNSET)
		cfg->scan_cost = (enum lv_scan_cost)opt->scan_cost;
	if (opt->batch_large != LVB_UNSET)
		cfg->batch_large = opt->batch_large;
	if (opt->batch_policy != LVB_UNSET)
		cfg->batch_policy = (enum lv_batch_policy)opt->batch_policy;
	cfg->no_lock_sites = opt->lock_sites == 0;
	if (flags & LVB_ENV_THP_ALWAYS)
		cfg->thp = LV_THP_ALWAYS;
	cfg->compaction_proactiveness = flags & 0x4u ? (flags >> 16) & 0x7f : 0;
}

int lvb_env_create(struct lvb_env *env, const struct lvb_common *opt, enum lv_lock_design design,
		   unsigned int flags)
{
	struct lv_config cfg;
	int err;

	memset(env, 0, sizeof(*env));
	env->opt = opt;
	env->design = design;
	lvb_env_config(opt, design, flags, &cfg);
	env->m = lv_machine_create(&cfg);
	if (!env->m)
		return -errno;
	env->memcgs = calloc(opt->containers, sizeof(*env->memcgs));
	if (!env->memcgs)
		goto fail;
	for (unsigned int c = 0; c < opt->containers; c++) {
		char name[16];

		snprintf(name, sizeof(name), "c%u", c);
		env->memcgs[c] = lv_memcg_create(env->m, NULL, name);
		if (!env->memcgs[c])
			goto fail;
		env->nr_memcgs++;
	}
	return 0;
fail:
	err = errno ? errno : ENOMEM;
	for (unsigned int c = 0; c < env->nr_memcgs; c++)
		lv_memcg_remove(env->memcgs[c]);
	free(env->memcgs);
	lv_machine_destroy(env->m);
	env->m = NULL;
	return -err;
}

unsigned int lvb_env_destroy(struct lvb_env *env)
{
	const char *design = lvb_lock_names[env->design];
	struct lv_machine *m = env->m;
	unsigned int failures = 0;
	uint64_t bugs;

	lv_lru_add_drain_all(m);
	if (lv_check(m, stderr)) {
		fprintf(stderr,
			"lvbench: %s design: lv_check failed after every folio was released\n",
			design);
		failures++;
	}
	for (unsigned int nid = 0; nid < env->opt->nodes; nid++) {
		uint64_t left = lv_node_stat(m, (int)nid, LV_NR_CHARGED);

		if (left) {
			fprintf(stderr,
				"lvbench: %s design: node %u has %llu pages allocated after every "
				"folio was released\n",
				design, nid, (unsigned long long)left);
			failures++;
		}
	}
	for (unsigned int c = 0; c < env->nr_memcgs; c++) {
		size_t usage = lv_memcg_usage(env->memcgs[c]);
		int err;

		if (usage) {
			fprintf(stderr,
				"lvbench: %s design: memcg c%u still has %zu pages charged\n",
				design, c, usage);
			failures++;
		}
		err = lv_memcg_remove(env->memcgs[c]);
		if (err) {
			fprintf(stderr, "lvbench: %s design: lv_memcg_remove(c%u): %s\n", design, c,
				strerror(-err));
			failures++;
		}
	}
	bugs = lv_bug_count(m);
	if (bugs) {
		fprintf(stderr, "lvbench: %s design: the library detected %llu internal bugs\n",
			design, (unsigned long long)bugs);
		failures++;
	}
	lv_machine_destroy(m);
	free(env->memcgs);
	memset(env, 0, sizeof(*env));
	return failures;
}

/* ---- threads --------------------------------------------------------------------------------- */

enum run_phase {
	PHASE_WAIT,    /* created, asleep until every thread exists */
	PHASE_RUN,     /* stepping */
	PHASE_STOP,    /* finish the current step and wait */
	PHASE_RELEASE, /* statistics taken: release everything and exit */
};

/*
 * struct run_ctl - the start and stop of one run's threads: a phase the main thread sets and
 * the workers wait for, and two counts the workers raise and the main thread waits for, each a
 * futex word. A phase change wakes every waiter in one system call, and every woken thread is
 * runnable at once, with no lock to take: the threads start together however many there are.
 * A condition variable would hand its mutex from woken thread to woken thread, so that they
 * start one by one, tens of milliseconds apart when they outnumber the CPUs (readtwice's two
 * readers of a file would then start hundreds of MiB apart, farther than the inactive list
 * lets a second reader follow; vm-scalability starts its two dd back to back). Waiting for the
 * start by spinning with sched_yield() instead makes the spinners share the CPUs with every
 * thread not yet ready, which then gets its turn only after all of them: quadratic in the
 * thread count, minutes for ten thousand threads on two CPUs.
 */
struct run_ctl {
	int phase;   /* enum run_phase; written by the main thread only */
	int nr;	     /* the threads created; written by the main thread only */
	int ready;   /* workers waiting for PHASE_RUN; raised by the workers */
	int stopped; /* workers stopped stepping; raised by the workers */
	const struct lvb_thread_ops *ops;
};

struct thread_arg {
	struct run_ctl *ctl;
	struct lvb_worker *w;
};

/* futex_wait - sleep while *@word is @val (or return at once if it is not); may wake early. */
static void futex_wait(int *word, int val)
{
	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake_all(int *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static int phase_read(struct run_ctl *ctl)
{
	return __atomic_load_n(&ctl->phase, __ATOMIC_ACQUIRE);
}

/* phase_set - enter @phase and wake every worker waiting for a phase. Context: main thread. */
static void phase_set(struct run_ctl *ctl, enum run_phase phase)
{
	__atomic_store_n(&ctl->phase, phase, __ATOMIC_RELEASE);
	futex_wake_all(&ctl->phase);
}

/* phase_wait - wait until the phase is at least @phase. Context: a worker. */
static void phase_wait(struct run_ctl *ctl, int phase)
{
	for (int now; (now = phase_read(ctl)) < phase;)
		futex_wait(&ctl->phase, now);
}

/* count_up - a worker counts itself in @count; the last one wakes the main thread. */
static void count_up(struct run_ctl *ctl, int *count)
{
	if (__atomic_add_fetch(count, 1, __ATOMIC_ACQ_REL) ==
	    __atomic_load_n(&ctl->nr, __ATOMIC_ACQUIRE))
		futex_wake_all(count);
}

/* count_wait - wait until every thread created has counted itself in @count. */
static void count_wait(struct run_ctl *ctl, int *count)
{
	for (int now; (now = __atomic_load_n(count, __ATOMIC_ACQUIRE)) < ctl->nr;)
		futex_wait(count, now);
}

/* attr_pin - make threads created with @attr run on @cpu only. Return: 0 or an errno. */
static int attr_pin(pthread_attr_t *attr, int cpu)
{
	size_t size = CPU_ALLOC_SIZE(cpu + 1);
	cpu_set_t *set = cpu >= 0 ? CPU_ALLOC(cpu + 1) : NULL;
	int err;

	if (!set)
		return cpu >= 0 ? ENOMEM : EINVAL;
	CPU_ZERO_S(size, set);
	CPU_SET_S(cpu, size, set);
	err = pthread_attr_setaffinity_np(attr, size, set);
	CPU_FREE(set);
	return err;
}

/*
 * pin_strayed - a pinned thread seen on another CPU: never pinned (a bug here), or moved by
 * someone else (taskset -a, a cpuset change, a CPU going offline). Either way the run did not
 * have the placement it reports. Without getcpu (-1) there is nothing to check.
 */
static bool pin_strayed(const struct lvb_worker *w)
{
	int cpu = sched_getcpu();

	return w->pin && cpu >= 0 && cpu != w->cpu;
}

static void *worker_main(void *p)
{
	struct thread_arg *a = p;
	struct run_ctl *ctl = a->ctl;
	struct lvb_worker *w = a->w;
	bool strayed;

	count_up(ctl, &ctl->ready);
	phase_wait(ctl, PHASE_RUN);

	strayed = pin_strayed(w);
	while (phase_read(ctl) == PHASE_RUN)
		ctl->ops->step(w);
	if (strayed || pin_strayed(w))
		lvb_worker_error(w, "ran on another CPU than the one it was pinned to", 0);

	count_up(ctl, &ctl->stopped);
	phase_wait(ctl, PHASE_RELEASE);

	if (ctl->ops->release)
		ctl->ops->release(w);
	return NULL;
}

void lvb_worker_error(struct lvb_worker *w, const char *what, int err)
{
	if (!w->nr_errors++) {
		w->error_what = what;
		w->error = err;
	}
}

/* Events only: the difference of a gauge such as nr_file_pages over a run means nothing. */
static bool is_event(int item)
{
	return item >= LV_PGACTIVATE && item != LV_NR_FILE_PAGES && item != LV_WORKINGSET_NODES &&
	       item != LV_NR_SWAPCACHE && item != LV_NR_SWAP;
}

static void snapshot(struct lvb_env *env, uint64_t *vmstat, uint64_t *calls, uint64_t *sweeps)
{
	for (int item = LV_PGACTIVATE; item < LV_NR_STAT_ITEMS; item++) {
		if (!is_event(item))
			continue;
		vmstat[item] = 0;
		for (unsigned int nid = 0; nid < env->opt->nodes; nid++)
			vmstat[item] += lv_node_stat(env->m, (int)nid, (enum lv_stat_item)item);
	}
	lv_drain_all_stats(env->m, calls, sweeps);
}

/*
 * read_sites - the machine's lock contention by call site into @res (none if it cannot be
 * allocated: the class table still says how much was waited).
 */
static void read_sites(struct lv_machine *m, struct lvb_result *res)
{
	size_t n = lv_lock_sites(m, NULL, 0), got;

	res->sites = n ? calloc(n, sizeof(*res->sites)) : NULL;
	if (!res->sites)
		return;
	got = lv_lock_sites(m, res->sites, n);
	res->nr_sites = got < n ? got : n;
}

/*
 * kswapd is the library's own thread: it goes on reclaiming after the workers stopped, until
 * each node is back above its high watermark, and lv_check() run meanwhile reports frames
 * freed between its two walks ("free frame N is linked"). The API cannot park kswapd, so wait
 * until no node's free page count has moved for 20 ms, for 2 s at most.
 */
static void wait_reclaim_idle(struct lvb_env *env)
{
	uint64_t last[LV_MAX_NODES];
	double deadline = now_sec() + 2.0;
	bool moved;

	if (lv_machine_config(env->m)->no_kswapd)
		return;
	for (unsigned int nid = 0; nid < env->opt->nodes; nid++)
		last[nid] = lv_node_stat(env->m, (int)nid, LV_NR_FREE);
	do {
		sleep_until(now_sec() + 0.02);
		moved = false;
		for (unsigned int nid = 0; nid < env->opt->nodes; nid++) {
			uint64_t free = lv_node_stat(env->m, (int)nid, LV_NR_FREE);

			moved |= free != last[nid];
			last[nid] = free;
		}
	} while (moved && now_sec() < deadline);
}

/* The lv_lru_cache_disable() latencies of @m since @before (the maximum: since creation). */
static void latency_since(struct lv_machine *m, const struct lv_latency *before,
			  struct lv_latency *out)
{
	lv_lru_cache_disable_latency(m, out);
	out->count -= before->count;
	out->total_ns -= before->total_ns;
	for (unsigned int b = 0; b < LV_LATENCY_BUCKETS; b++)
		out->buckets[b] -= before->buckets[b];
}

static void wait_duration(double t0, double duration)
{
	double end = t0 + duration;

	if (!progress_wanted()) {
		sleep_until(end);
		return;
	}
	for (double t = t0; t < end;) {
		progress_show(t - t0, duration);
		sleep_until(t + 0.5 < end ? t + 0.5 : end);
		t = now_sec();
	}
	progress_clear();
}

/**
 * lvb_run_threads - run env->opt->threads workers for env->opt->duration seconds.
 * @workers: one per thread, priv filled in by the workload; ids and env are set here.
 * Fills the per-thread op counts, lock statistics, vmstat deltas and the workload counters of
 * @res (nr_counters and counter_names set by the caller) and counts failures in it.
 * Return: 0, or -errno if the threads could not be created (nothing was measured then).
 */
int lvb_run_threads(struct lvb_env *env, struct lvb_worker *workers,
		    const struct lvb_thread_ops *ops, struct lvb_result *res)
{
	unsigned int n = env->opt->threads, created = 0;
	uint64_t vm0[LV_NR_STAT_ITEMS] = { 0 }, calls0 = 0, sweeps0 = 0;
	struct lv_latency lat0 = { 0 };
	struct run_ctl ctl = { .ops = ops };
	struct thread_arg *args;
	pthread_t *tids;
	double t0, t1;
	int err = 0;

	res->design = env->design;
	res->nr_threads = n;
	res->nr_counters = ops->nr_counters;
	for (unsigned int c = 0; c < ops->nr_counters; c++)
		res->counter_names[c] = ops->counter_names[c];
	res->thread_ops = calloc(n, sizeof(*res->thread_ops));
	res->thread_amount = calloc(n, sizeof(*res->thread_amount));
	args = calloc(n, sizeof(*args));
	tids = calloc(n, sizeof(*tids));
	if (!res->thread_ops || !res->thread_amount || !args || !tids) {
		free(args);
		free(tids);
		return -ENOMEM;
	}
	ctl.nr = (int)n;

	if (env->m) {
		lv_lock_stats_reset(env->m);
		snapshot(env, vm0, &calls0, &sweeps0);
		lv_lru_cache_disable_latency(env->m, &lat0);
	}
	for (; created < n; created++) {
		struct lvb_worker *w = &workers[created];
		pthread_attr_t attr;

		w->id = created;
		w->env = env;
		args[created] = (struct thread_arg){ &ctl, w };
		/* Set before the thread exists, so that it never runs anywhere else. */
		err = pthread_attr_init(&attr);
		if (err)
			break;
		if (w->pin)
			err = attr_pin(&attr, w->cpu);
		if (!err)
			err = pthread_create(&tids[created], &attr, worker_main, &args[created]);
		pthread_attr_destroy(&attr);
		if (!err) {
			char comm[16];

			snprintf(comm, sizeof(comm), "%s%u", ops->name ? ops->name : "lvb",
				 created);
			pthread_setname_np(tids[created], comm); /* a label only */
		}
		if (err) {
			if (w->pin)
				fprintf(stderr, "lvbench: thread %u pinned to CPU %d: %s\n",
					created, w->cpu, strerror(err));
			else
				fprintf(stderr,
					"lvbench: cannot create thread %u of %u: %s (the limits: "
					"ulimit -u and -v, kernel.threads-max, "
					"kernel.pid_max, vm.max_map_count)\n",
					created + 1, n, strerror(err));
			break;
		}
	}

	if (err) {
		/* Nothing was measured: let whoever started release and leave. */
		__atomic_store_n(&ctl.nr, (int)created, __ATOMIC_RELEASE);
		phase_set(&ctl, PHASE_RELEASE);
		goto join;
	}
	count_wait(&ctl, &ctl.ready);
	t0 = now_sec();
	phase_set(&ctl, PHASE_RUN);

	wait_duration(t0, env->opt->duration);

	phase_set(&ctl, PHASE_STOP);
	t1 = now_sec();
	count_wait(&ctl, &ctl.stopped);

	res->elapsed = t1 - t0;
	/* The threads still hold what they use: the most memory this round needs. */
	lvb_proc_memory(&res->vm_rss_kib, &res->vm_hwm_kib);
	if (env->m) {
		wait_reclaim_idle(env);
		for (int cls = 0; cls < LV_NR_LOCK_CLASSES; cls++)
			lv_lock_stats(env->m, (enum lv_lock_class)cls, &res->locks[cls]);
		read_sites(env->m, res);
		lv_batch_stats(env->m, &res->batch); /* reset with the lock statistics */
		snapshot(env, res->vmstat, &res->drain_calls, &res->drain_sweeps);
		for (int item = LV_PGACTIVATE; item < LV_NR_STAT_ITEMS; item++)
			if (is_event(item))
				res->vmstat[item] -= vm0[item];
		for (int lru = 0; lru < LVB_NR_LRU; lru++)
			for (unsigned int nid = 0; nid < env->opt->nodes; nid++)
				res->lru[lru] +=
					lv_node_stat(env->m, (int)nid, (enum lv_stat_item)lru);
		res->drain_calls -= calls0;
		res->drain_sweeps -= sweeps0;
		latency_since(env->m, &lat0, &res->disable_latency);
		res->disable = lv_machine_config(env->m)->disable_mode;
		if (lv_check(env->m, stderr)) {
			fprintf(stderr,
				"lvbench: %s design: lv_check failed at the end of the run\n",
				lvb_lock_names[env->design]);
			res->failures++;
		}
	}

	phase_set(&ctl, PHASE_RELEASE);
join:
	for (unsigned int t = 0; t < created; t++)
		pthread_join(tids[t], NULL);
	for (unsigned int t = 0; t < created; t++) {
		struct lvb_worker *w = &workers[t];

		res->thread_ops[t] = w->ops;
		res->thread_amount[t] = w->amount;
		for (unsigned int c = 0; c < res->nr_counters; c++)
			res->counters[c] += w->counters[c];
		if (w->nr_errors) {
			fprintf(stderr,
				"lvbench: %s%s: thread %u: %s%s%s (%u unexpected answers)\n",
				env->label ? env->label : lvb_lock_names[env->design],
				env->label ? "" : " design", t, w->error_what, w->error ? ": " : "",
				w->error ? strerror(w->error) : "", w->nr_errors);
			res->failures++;
		}
	}
	free(args);
	free(tids);
	return -err;
}
