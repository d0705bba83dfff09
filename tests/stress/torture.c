// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Torture test: more threads than cores race every LRU operation on shared folios across
 * memory cgroups, then the machine is checked at two quiescent points.
 *
 * Shared folios live in a table; the table holds one reference per entry. A thread that
 * wants to operate on an entry takes a speculative reference (try-get, then re-check that the
 * entry still holds the same folio) exactly as the kernel's lockless page-cache lookup does,
 * so try-get races with the final put and with frame reuse. Operations: allocate + add, mark
 * accessed, activate, deactivate, deactivate_file, lazyfree, rotate, isolate/putback, move
 * between memcgs, batched release, local drain, drain_all, lru_cache_disable/enable storms,
 * memcg creation/removal racing with moves out of the removed memcg (RCU-protected stale
 * lookups), page cache reads (a sparse file larger than memory, a real file whose bytes are
 * checked, a file whose fills fail), truncation, and explicit reclaim on top of kswapd,
 * direct and memcg limit reclaim. Usage: torture [--seed N] [--duration S] [--threads T] [--lock lruvec|node|nomemcg]
 * [--backend futex|mutex|spin] [--disable sweep|rcu] [--batch B] [--containers C] [--slots S]
 * Prints TAP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lruvec.h"

#define TABLE_SIZE     2048
#define MAX_CONTAINERS 64

static struct {
	unsigned long seed;
	double duration;
	int threads;
	int containers;
	unsigned int slots;
	unsigned int batch;
	const char *lock;
	enum lv_lock_backend backend;
	enum lv_disable_mode disable;
} opt = { 1, 3.0, 8, 6, 0, 31, "lruvec", LV_BACKEND_FUTEX, LV_DISABLE_SWEEP };

static struct lv_machine *machine;
static struct lv_memcg *containers[MAX_CONTAINERS];
static int nr_containers;
static struct lv_folio *_Atomic table[TABLE_SIZE];
static atomic_bool stop;
static atomic_ulong total_ops, move_ok, move_busy, move_nomem, isolate_ok, alloc_fail;
static atomic_ulong memcgs_removed;
static struct lv_memcg *leftover;
static int nr_nodes = 2;
static atomic_ulong bytes_read, read_enomem;

/* Page cache files: sparse (bigger than memory), real (checked bytes), failing, truncated. */
#define SPARSE_BYTES (64ul << 20)
#define REAL_BYTES (8ul << 20)
static struct lv_file *sparse_file, *real_file, *bad_file, *trunc_file;
static int real_fd = -1, bad_fd = -1;

static unsigned char real_byte(uint64_t pos)
{
	return (unsigned char)(pos * 2654435761u >> 13);
}
static int tests_run, tests_failed;

static void ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ok(int cond, const char *fmt, ...)
{
	va_list ap;

	tests_run++;
	if (!cond)
		tests_failed++;
	printf("%sok %d - ", cond ? "" : "not ", tests_run);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* xorshift64*: per-thread, seeded from the run seed so a failure can be replayed. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

/* get_entry - a speculative reference on the folio at @i, or NULL. */
static struct lv_folio *get_entry(unsigned int i)
{
	for (;;) {
		struct lv_folio *f = atomic_load(&table[i]);

		if (!f)
			return NULL;
		if (!lv_folio_try_get(f))
			continue; /* being freed: the entry is being cleared, look again */
		if (atomic_load(&table[i]) == f)
			return f;
		lv_folio_put(f); /* the frame was released (maybe reused) under us */
	}
}

static struct lv_memcg *pick_memcg(uint64_t *s)
{
	return nr_containers ? containers[rnd(s) % (unsigned)nr_containers] : NULL;
}

static void op_alloc(uint64_t *s, struct lv_memcg *memcg)
{
	unsigned int order = rnd(s) % 8 == 0 ? (unsigned int)(rnd(s) % 4) : 0;
	unsigned int flags =
		(rnd(s) & 1 ? LV_FOLIO_ANON : 0) | (rnd(s) % 16 == 0 ? LV_FOLIO_ZERO : 0);
	struct lv_folio *f =
		lv_folio_alloc(machine, (int)(rnd(s) % (unsigned)nr_nodes), order, memcg, flags);
	struct lv_folio *expected = NULL;

	if (!f) {
		if (errno != ENOMEM && errno != ENOENT) {
			fprintf(stderr, "# alloc: unexpected errno %d\n", errno);
			abort();
		}
		atomic_fetch_add(&alloc_fail, 1);
		return;
	}
	if (rnd(s) % 32 == 0)
		lv_folio_set_state(f, LV_PG_MLOCKED, true);
	if (lv_folio_add_lru(f) != 0)
		abort();
	if (!atomic_compare_exchange_strong(&table[rnd(s) % TABLE_SIZE], &expected, f))
		lv_folio_put(f);
}

static void op_release(uint64_t *s)
{
	struct lv_folio *batch[16];
	unsigned int n = 0, want = 1 + (unsigned int)(rnd(s) % 4);

	for (unsigned int k = 0; k < want; k++) {
		struct lv_folio *f = atomic_exchange(&table[rnd(s) % TABLE_SIZE], NULL);

		if (f)
			batch[n++] = f;
	}
	lv_folios_put(batch, n);
}

static void op_on_folio(uint64_t *s, struct lv_folio *f)
{
	switch (rnd(s) % 12) {
	case 0:
	case 1:
		lv_folio_mark_accessed(f);
		break;
	case 2:
		lv_folio_activate(f);
		break;
	case 3:
		lv_folio_deactivate(f);
		break;
	case 4:
		lv_folio_set_state(f, LV_PG_DIRTY, rnd(s) & 1);
		lv_deactivate_file_folio(f);
		break;
	case 5:
		lv_folio_mark_lazyfree(f);
		break;
	case 6:
		lv_folio_set_state(f, LV_PG_DIRTY, false);
		lv_folio_rotate_reclaimable(f);
		break;
	case 7:
		if (lv_folio_isolate_lru(f) == 0) {
			atomic_fetch_add(&isolate_ok, 1);
			if (!lv_folio_test(f, LV_PG_ISOLATED) || lv_folio_test(f, LV_PG_LRU))
				abort();
			if (rnd(s) % 8 == 0) {
				/* Abandon it: the table's reference (if still there) and ours go.
				 */
				for (unsigned int i = 0; i < TABLE_SIZE; i++) {
					struct lv_folio *expected = f;

					if (atomic_load_explicit(&table[i], memory_order_relaxed) ==
						    f &&
					    atomic_compare_exchange_strong(&table[i], &expected,
									   NULL)) {
						lv_folio_put(f);
						break;
					}
				}
				lv_folio_put(f); /* the isolation reference */
				break;
			}
			if (lv_folio_putback_lru(f) != 0)
				abort();
		}
		break;
	case 8:
	case 9: {
		struct lv_memcg *to = pick_memcg(s);
		int err;

		if (!to)
			break;
		err = lv_folio_move_memcg(f, to);
		if (err == 0)
			atomic_fetch_add(&move_ok, 1);
		else if (err == -EBUSY)
			atomic_fetch_add(&move_busy, 1);
		else if (err == -ENOMEM)
			atomic_fetch_add(&move_nomem, 1);
		else
			abort();
		break;
	}
	case 10:
		lv_folio_set_state(f, LV_PG_MAPPED, rnd(s) & 1);
		/* A shared folio is queued, on a list, pinned or isolated: adding it is a bug. */
		if (lv_folio_add_lru(f) != -EINVAL) {
			fprintf(stderr, "# double add accepted\n");
			abort();
		}
		break;
	default:
		lv_folio_mark_accessed(f);
		lv_folio_mark_accessed(f);
	}
}

static void op_read(uint64_t *s, struct lv_memcg *memcg)
{
	static const uint64_t sizes[] = { SPARSE_BYTES, REAL_BYTES, 1 << 20, 4 << 20 };
	unsigned int which = (unsigned int)(rnd(s) % 4);
	struct lv_file *files[] = { sparse_file, real_file, bad_file, trunc_file };
	unsigned char buf[3 * 4096];
	uint64_t off = rnd(s) % sizes[which];
	size_t len = 1 + rnd(s) % sizeof(buf);
	long n;

	if (rnd(s) & 1)
		off &= ~4095ul; /* mostly page-aligned, like dd bs=4k */
	n = lv_file_read(files[which], memcg, buf, len, off);
	if (n == -ENOMEM) {
		atomic_fetch_add(&read_enomem, 1);
		return;
	}
	if (which == 2) {
		if (n != -EIO) {
			fprintf(stderr, "# read of a failing file returned %ld\n", n);
			abort();
		}
		return;
	}
	/*
	 * A read may come up short when a later page cannot be charged (like read(2) after
	 * progress), never empty inside the file.
	 */
	if (n < 0 || (size_t)n > len || (which != 3 && n == 0)) {
		fprintf(stderr, "# read(%u, %lu, %zu) returned %ld\n", which, (unsigned long)off, len, n);
		abort();
	}
	for (long i = 0; i < n; i++) {
		unsigned char want = which == 1 ? real_byte(off + (uint64_t)i) : 0;

		if (buf[i] != want) {
			fprintf(stderr, "# file %u byte %lu is %u, not %u\n", which,
				(unsigned long)(off + (uint64_t)i), buf[i], want);
			abort();
		}
	}
	atomic_fetch_add(&bytes_read, (unsigned long)n);
}

static void *worker(void *arg)
{
	uint64_t s = opt.seed * 0x9e3779b97f4a7c15ull + (uintptr_t)arg + 1;
	unsigned long ops = 0;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		unsigned int r = (unsigned int)(rnd(&s) % 1000);

		if (r < 200) {
			op_alloc(&s, pick_memcg(&s));
		} else if (r < 320) {
			op_release(&s);
		} else if (r < 600) {
			op_read(&s, pick_memcg(&s));
		} else if (r < 603) {
			lv_file_truncate(trunc_file, rnd(&s) % (4 << 20));
			lv_file_truncate(trunc_file, 4 << 20);
		} else if (r < 605) {
			if (r & 1)
				lv_reclaim_node(machine, (int)(rnd(&s) % (unsigned)nr_nodes), 64);
			else if (nr_containers)
				lv_memcg_reclaim(pick_memcg(&s), 64);
		} else if (r < 990) {
			struct lv_folio *f = get_entry((unsigned int)(rnd(&s) % TABLE_SIZE));

			if (f) {
				op_on_folio(&s, f);
				lv_folio_put(f);
			}
		} else if (r < 995) {
			lv_lru_add_drain(machine);
		} else if (r < 998) {
			lv_lru_add_drain_all(machine);
		} else if (opt.disable == LV_DISABLE_SWEEP || r == 999) {
			/* rcu mode costs a grace period (ms): keep that storm lighter. */
			lv_lru_cache_disable(machine);
			op_alloc(&s, pick_memcg(&s));
			lv_lru_cache_enable(machine);
		}
		ops++;
	}
	atomic_fetch_add(&total_ops, ops);
	return NULL;
}

/*
 * A memcg that lives briefly: folios are charged to it and put in the shared table, other
 * threads move them out, and it is removed once empty. Lookups that read the stale binding
 * race with the removal and are saved by RCU and the re-check.
 */
static void *memcg_churner(void *arg)
{
	uint64_t s = opt.seed * 31 + (uintptr_t)arg;

	while (!atomic_load(&stop)) {
		struct lv_memcg *parent = pick_memcg(&s);
		struct lv_memcg *tmp = lv_memcg_create(machine, parent, "tmp");
		struct lv_folio *mine[8];
		int n = 0, err;

		if (!tmp)
			abort();
		for (int k = 0; k < 8; k++) {
			struct lv_folio *f = lv_folio_alloc(machine, k % nr_nodes, 0, tmp, 0);

			if (!f)
				continue;
			if (lv_folio_add_lru(f))
				abort();
			mine[n++] = f;
		}
		lv_lru_add_drain(machine);
		/* Move our folios out while others may be touching them, then share them. */
		for (int k = 0; k < n; k++) {
			struct lv_folio *expected = NULL;

			while (lv_folio_move_memcg(mine[k], pick_memcg(&s)) && !atomic_load(&stop))
				lv_lru_add_drain(machine);
			if (!atomic_compare_exchange_strong(&table[rnd(&s) % TABLE_SIZE], &expected,
							    mine[k]))
				lv_folio_put(mine[k]);
		}
		while ((err = lv_memcg_remove(tmp)) == -EBUSY && !atomic_load(&stop))
			usleep(100);
		if (err == -EBUSY) {
			leftover = tmp; /* still charged: removed after the final release */
			break;
		}
		if (err)
			abort();
		atomic_fetch_add(&memcgs_removed, 1);
	}
	return NULL;
}

static int parse_args(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "seed", required_argument, 0, 's' },
		{ "duration", required_argument, 0, 'd' },
		{ "threads", required_argument, 0, 't' },
		{ "lock", required_argument, 0, 'l' },
		{ "backend", required_argument, 0, 'b' },
		{ "disable", required_argument, 0, 'D' },
		{ "batch", required_argument, 0, 'B' },
		{ "containers", required_argument, 0, 'c' },
		{ "slots", required_argument, 0, 'S' },
		{ 0, 0, 0, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 's':
			opt.seed = strtoul(optarg, NULL, 0);
			break;
		case 'd':
			opt.duration = atof(optarg);
			break;
		case 't':
			opt.threads = atoi(optarg);
			break;
		case 'l':
			opt.lock = optarg;
			break;
		case 'B':
			opt.batch = (unsigned int)atoi(optarg);
			break;
		case 'c':
			opt.containers = atoi(optarg);
			break;
		case 'S':
			opt.slots = (unsigned int)atoi(optarg);
			break;
		case 'b':
			if (!strcmp(optarg, "futex"))
				opt.backend = LV_BACKEND_FUTEX;
			else if (!strcmp(optarg, "mutex"))
				opt.backend = LV_BACKEND_MUTEX;
			else if (!strcmp(optarg, "spin"))
				opt.backend = LV_BACKEND_SPIN;
			else
				return -1;
			break;
		case 'D':
			if (!strcmp(optarg, "sweep"))
				opt.disable = LV_DISABLE_SWEEP;
			else if (!strcmp(optarg, "rcu"))
				opt.disable = LV_DISABLE_RCU;
			else
				return -1;
			break;
		default:
			return -1;
		}
	}
	if (opt.threads < 1 || opt.threads > 256 || opt.containers < 0 ||
	    opt.containers > MAX_CONTAINERS - 1 || opt.duration < 0 ||
	    (strcmp(opt.lock, "lruvec") && strcmp(opt.lock, "node") && strcmp(opt.lock, "nomemcg")))
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct lv_config cfg;
	pthread_t *tids, churner;
	struct timespec ts;
	bool memcg = true;
	char *report;
	size_t report_len;
	FILE *rf;
	int err;

	if (parse_args(argc, argv)) {
		fprintf(stderr, "usage: torture [--seed N] [--duration S] [--threads T] "
				"[--lock lruvec|node|nomemcg] [--backend futex|mutex|spin] "
				"[--disable sweep|rcu] [--batch B] [--containers C] [--slots S]\n");
		return 2;
	}
	lv_config_init(&cfg);
	cfg.nr_nodes = (unsigned int)nr_nodes;
	cfg.node_mem_bytes = 16ul << 20;
	cfg.nr_cpu_slots = opt.slots;
	cfg.lock_backend = opt.backend;
	cfg.batch_size = opt.batch;
	cfg.disable_mode = opt.disable;
	if (!strcmp(opt.lock, "node"))
		cfg.lock_design = LV_LOCK_NODE;
	if (!strcmp(opt.lock, "nomemcg")) {
		cfg.memcg_disabled = true;
		memcg = false;
	}
	printf("1..8\n# seed=%lu duration=%.1fs threads=%d lock=%s containers=%d batch=%u "
	       "disable=%s\n",
	       opt.seed, opt.duration, opt.threads, opt.lock, memcg ? opt.containers : 0, opt.batch,
	       opt.disable == LV_DISABLE_RCU ? "rcu" : "sweep");
	machine = lv_machine_create(&cfg);
	if (!machine) {
		printf("Bail out! lv_machine_create: %s\n", strerror(errno));
		return 1;
	}
	if (memcg) {
		/* A small hierarchy: every third container nests under the previous one. */
		for (int i = 0; i < opt.containers; i++) {
			struct lv_memcg *parent = i % 3 == 2 ? containers[i - 1] : NULL;
			char name[16];

			snprintf(name, sizeof(name), "c%d", i);
			containers[i] = lv_memcg_create(machine, parent, name);
			if (!containers[i])
				abort();
		}
		nr_containers = opt.containers;
		if (nr_containers > 1)
			lv_memcg_set_max(containers[1], 256); /* one tenant at its limit */
	}

	{
		char path[] = "/tmp/lruvec-torture-XXXXXX";
		unsigned char *data = malloc(REAL_BYTES);

		real_fd = mkstemp(path);
		if (real_fd < 0 || !data)
			abort();
		unlink(path);
		for (uint64_t p = 0; p < REAL_BYTES; p++)
			data[p] = real_byte(p);
		if (write(real_fd, data, REAL_BYTES) != (ssize_t)REAL_BYTES)
			abort();
		free(data);
		bad_fd = open("/", O_RDONLY | O_DIRECTORY); /* pread fails with EISDIR */
		sparse_file = lv_file_open(machine, -1, SPARSE_BYTES);
		real_file = lv_file_open(machine, real_fd, REAL_BYTES);
		bad_file = lv_file_open(machine, bad_fd, 1 << 20);
		trunc_file = lv_file_open(machine, -1, 4 << 20);
		if (bad_fd < 0 || !sparse_file || !real_file || !bad_file || !trunc_file)
			abort();
	}

	tids = calloc((size_t)opt.threads, sizeof(*tids));
	for (int i = 0; i < opt.threads; i++)
		pthread_create(&tids[i], NULL, worker, (void *)(uintptr_t)i);
	if (memcg)
		pthread_create(&churner, NULL, memcg_churner, (void *)(uintptr_t)opt.threads);
	ts.tv_sec = (time_t)opt.duration;
	ts.tv_nsec = (long)((opt.duration - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
	atomic_store(&stop, true);
	for (int i = 0; i < opt.threads; i++)
		pthread_join(tids[i], NULL);
	if (memcg)
		pthread_join(churner, NULL);
	free(tids);

	ok(atomic_load(&total_ops) > 0,
	   "%lu operations; %lu moves (%lu busy, %lu over limit), "
	   "%lu isolations, %lu failed allocations, %lu memcgs removed, %lu MiB read, "
	   "%lu pages reclaimed",
	   atomic_load(&total_ops), atomic_load(&move_ok), atomic_load(&move_busy),
	   atomic_load(&move_nomem), atomic_load(&isolate_ok), atomic_load(&alloc_fail),
	   atomic_load(&memcgs_removed), atomic_load(&bytes_read) >> 20,
	   (unsigned long)(lv_node_stat(machine, 0, LV_PGSTEAL) +
			   lv_node_stat(machine, 1, LV_PGSTEAL)));

	lv_lru_add_drain_all(machine);
	rf = open_memstream(&report, &report_len);
	err = lv_check(machine, rf);
	fclose(rf);
	ok(err == 0, "lv_check with %lu pages in use",
	   (unsigned long)(lv_node_stat(machine, 0, LV_NR_CHARGED) +
			   lv_node_stat(machine, 1, LV_NR_CHARGED)));
	if (err)
		printf("%s", report);
	free(report);

	ok(!memcg || nr_containers < 2 ||
		   lv_memcg_usage(containers[1]) <= lv_memcg_max(containers[1]),
	   "limited memcg within its limit");

	for (unsigned int i = 0; i < TABLE_SIZE; i++) {
		struct lv_folio *f = atomic_exchange(&table[i], NULL);

		if (f)
			lv_folio_put(f);
	}
	lv_file_close(sparse_file);
	lv_file_close(real_file);
	lv_file_close(bad_file);
	lv_file_close(trunc_file);
	close(real_fd);
	close(bad_fd);
	lv_lru_add_drain_all(machine);
	rf = open_memstream(&report, &report_len);
	err = lv_check(machine, rf);
	fclose(rf);
	ok(err == 0, "lv_check after releasing everything");
	if (err)
		printf("%s", report);
	free(report);

	{
		bool all_free = true;

		for (int nid = 0; nid < nr_nodes; nid++) {
			uint64_t free_pages = lv_node_stat(machine, nid, LV_NR_FREE);

			if (free_pages != cfg.node_mem_bytes / LV_PAGE_SIZE) {
				all_free = false;
				printf("# node %d: %lu of %lu pages free\n", nid,
				       (unsigned long)free_pages,
				       (unsigned long)(cfg.node_mem_bytes / LV_PAGE_SIZE));
			}
		}
		ok(all_free, "every page returned to the allocator");
	}
	{
		bool zero = true, removed = !leftover || lv_memcg_remove(leftover) == 0;

		for (int i = nr_containers - 1; i >= 0; i--) {
			if (lv_memcg_usage(containers[i]) != 0) {
				zero = false;
				printf("# memcg c%d still charged %zu pages\n", i,
				       lv_memcg_usage(containers[i]));
			}
			if (lv_memcg_remove(containers[i]) != 0)
				removed = false;
		}
		ok(zero, "every memcg uncharged");
		ok(removed, "every memcg removed");
	}
	ok(lv_bug_count(machine) == 0, "no run-time invariant violations (%lu)",
	   (unsigned long)lv_bug_count(machine));
	rf = open_memstream(&report, &report_len);
	lv_lock_stats_print(machine, rf);
	fclose(rf);
	for (char *line = strtok(report, "\n"); line; line = strtok(NULL, "\n"))
		printf("# %s\n", line);
	free(report);
	lv_machine_destroy(machine);
	return tests_failed ? 1 : 0;
}
