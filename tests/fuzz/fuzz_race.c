// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fuzz_race - two threads driven by one byte string, a barrier per step: in each step both
 * threads run the call the input gives each, at the same time, so that sequences of racing
 * calls are explored as fuzz_ops explores sequences of calls. Each thread owns its folios and
 * its address space (the API's contract: a reference held, handles alive); the LRU lists, the
 * batches, the memcgs, the file and the machine-wide calls are shared, so the two meet on
 * every lock, batch and counter. The same checks as fuzz_ops hold per thread: a second add is
 * refused whatever the other thread's reclaim or drain is doing, putback succeeds exactly for
 * the folios the thread isolated, a sparse file reads as zeros, written bytes read back. At
 * the end of an input each thread releases what it made and the machine must be empty.
 *
 * The machine and the two threads live across inputs (no thread creation per input). Which
 * interleaving a step gets is the scheduler's: the input decides what races, not how; a
 * crash therefore replays as the same race, though not always in the same order.
 */
#define _GNU_SOURCE
#include "lruvec.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NR_THREADS 2
#define NR_FOLIOS  8
#define NR_MEMCGS  2
#define MM_PAGES   64
#define FILE_SIZE  (1ul << 20)

struct owned {
	struct lv_folio *folio;
	bool added, isolated;
};

struct cmd {
	unsigned int op, a, b, c;
};

struct worker {
	pthread_t thread;
	struct owned folios[NR_FOLIOS];
	struct lv_mm *mm;
	uint64_t base;
	struct cmd cmd;
};

static struct lv_machine *m;
static struct lv_memcg *memcgs[NR_MEMCGS + 1]; /* [0]: the root */
static struct lv_file *file;		       /* opened and closed by each input */
static struct worker workers[NR_THREADS];
static pthread_barrier_t step_start, step_end;
static bool input_end; /* set before step_start: release everything, and report */

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "fuzz_race: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

static unsigned char mm_byte(uint64_t addr)
{
	return (unsigned char)(addr * 2654435761u >> 13) | 1;
}

static void drop(struct owned *o)
{
	lv_folio_put(o->folio);
	if (o->isolated)
		lv_folio_put(o->folio);
	*o = (struct owned){ 0 };
}

static void folio_op(struct owned *o, const struct cmd *c)
{
	int err;

	if (!o->folio) {
		o->folio = lv_folio_alloc(m, 0, c->a >> 6 & 1 ? 2 : 0, memcgs[c->b % 3],
					  c->a & LV_FOLIO_ANON);
		if (!o->folio && errno != ENOMEM && errno != ENOENT)
			fail("lv_folio_alloc: errno %d", errno);
		return;
	}
	switch (c->op % 10) {
	case 0:
		err = lv_folio_add_lru(o->folio);
		if (err != (o->added || o->isolated ? -EINVAL : 0))
			fail("add returned %d (added %d, isolated %d)", err, o->added, o->isolated);
		o->added |= !err;
		break;
	case 1:
		err = lv_folio_isolate_lru(o->folio);
		if (!err && !o->added)
			fail("isolated a folio that was never added");
		if (err && err != -EBUSY && err != -EINVAL)
			fail("isolate returned %d", err);
		if (!err) {
			o->added = false;
			o->isolated = true;
		}
		break;
	case 2:
		err = lv_folio_putback_lru(o->folio);
		if (err != (o->isolated ? 0 : -EINVAL))
			fail("putback returned %d (isolated %d)", err, o->isolated);
		if (!err) {
			o->added = true;
			o->isolated = false;
		}
		break;
	case 3:
		lv_folio_mark_accessed(o->folio);
		lv_folio_activate(o->folio);
		break;
	case 4:
		lv_folio_deactivate(o->folio);
		lv_folio_rotate_reclaimable(o->folio);
		break;
	case 5:
		lv_folio_mark_lazyfree(o->folio);
		break;
	case 6: {
		struct lv_memcg *to = memcgs[c->c % 3];

		err = lv_folio_move_memcg(o->folio, to);
		if (err && err != -EBUSY && err != -ENOMEM && err != -EOPNOTSUPP)
			fail("move_memcg returned %d", err);
		break;
	}
	default:
		drop(o);
		break;
	}
}

static void mm_op(struct worker *w, const struct cmd *c)
{
	uint64_t addr;
	unsigned char got[64];
	int err;

	if (!w->mm) {
		w->mm = lv_mm_create(m, memcgs[c->a % 3], 0);
		if (!w->mm)
			fail("lv_mm_create: errno %d", errno);
		if (lv_mmap(w->mm, MM_PAGES * LV_PAGE_SIZE, &w->base))
			fail("lv_mmap failed");
		return;
	}
	addr = w->base + (c->b % MM_PAGES) * LV_PAGE_SIZE;
	switch (c->op % 5) {
	case 0:
		err = lv_mm_memset(w->mm, addr, mm_byte(addr), LV_PAGE_SIZE);
		if (err && err != -ENOMEM)
			fail("lv_mm_memset returned %d", err);
		break;
	case 1:
		err = lv_mm_read(w->mm, addr, got, sizeof(got));
		if (err && err != -ENOMEM)
			fail("lv_mm_read returned %d", err);
		for (size_t k = 0; !err && k < sizeof(got); k++)
			if (got[k] && got[k] != mm_byte(addr))
				fail("page %#llx reads %#x", (unsigned long long)addr, got[k]);
		break;
	case 2: {
		static const int advice[] = { LV_MADV_COLD, LV_MADV_FREE, LV_MADV_DONTNEED };

		lv_madvise(w->mm, addr, (1 + c->c % 8) * LV_PAGE_SIZE, advice[c->c % 3]);
		break;
	}
	case 3:
		err = (c->c & 1) ? lv_mlock(w->mm, addr, 4 * LV_PAGE_SIZE)
				 : lv_munlock(w->mm, addr, 4 * LV_PAGE_SIZE);
		if (err && err != -ENOMEM)
			fail("lv_m(un)lock returned %d", err);
		break;
	default:
		lv_mm_destroy(w->mm);
		w->mm = NULL;
		break;
	}
}

static void shared_op(const struct cmd *c)
{
	static char buf[8192];
	long n;

	switch (c->op % 8) {
	case 0:
		lv_lru_add_drain(m);
		break;
	case 1:
		lv_lru_add_drain_all(m);
		break;
	case 2:
		lv_lru_cache_disable(m);
		lv_lru_add_drain(m);
		lv_lru_cache_enable(m);
		break;
	case 3:
		lv_reclaim_node(m, 0, 1 + c->a);
		break;
	case 4:
		lv_memcg_reclaim(memcgs[1 + c->a % 2], 1 + c->b);
		break;
	case 5:
		if (lv_compact_node(m, 0, (int)(c->a % 4)) < 0)
			fail("lv_compact_node failed");
		break;
	case 6:
		n = lv_file_read(file, memcgs[c->a % 3], buf, 1 + c->b * 32, (uint64_t)c->c * 4096);
		if (n < 0 && n != -ENOMEM)
			fail("lv_file_read returned %ld", n);
		for (long k = 0; k < n; k++)
			if (buf[k])
				fail("the sparse file reads %#x", buf[k] & 0xff);
		break;
	default:
		lv_memcg_set_max(memcgs[1 + c->a % 2], (c->b & 1) ? SIZE_MAX : 16 + c->c);
		break;
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	for (;;) {
		pthread_barrier_wait(&step_start);
		if (input_end) {
			for (int i = 0; i < NR_FOLIOS; i++)
				if (w->folios[i].folio)
					drop(&w->folios[i]);
			if (w->mm)
				lv_mm_destroy(w->mm);
			w->mm = NULL;
		} else if (w->cmd.op < 128) {
			folio_op(&w->folios[w->cmd.a % NR_FOLIOS], &w->cmd);
		} else if (w->cmd.op < 192) {
			mm_op(w, &w->cmd);
		} else {
			shared_op(&w->cmd);
		}
		pthread_barrier_wait(&step_end);
	}
	return NULL;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct lv_config cfg;

	(void)argc;
	(void)argv;
	lv_config_init(&cfg);
	cfg.nr_nodes = 1;
	cfg.node_mem_bytes = 4ul << 20;
	cfg.nr_cpu_slots = 2;
	cfg.no_kswapd = true;
	cfg.no_kcompactd = true;
	cfg.batch_size = 7;
	m = lv_machine_create(&cfg);
	if (!m)
		fail("lv_machine_create failed");
	memcgs[0] = lv_memcg_root(m);
	for (int i = 1; i <= NR_MEMCGS; i++)
		if (!(memcgs[i] = lv_memcg_create(m, memcgs[0], "race")))
			fail("lv_memcg_create failed");
	pthread_barrier_init(&step_start, NULL, NR_THREADS + 1);
	pthread_barrier_init(&step_end, NULL, NR_THREADS + 1);
	for (int t = 0; t < NR_THREADS; t++)
		if (pthread_create(&workers[t].thread, NULL, worker_main, &workers[t]))
			fail("pthread_create failed");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t pos = 0;

	file = lv_file_open(m, -1, FILE_SIZE);
	if (!file)
		fail("lv_file_open failed");
	for (int i = 1; i <= NR_MEMCGS; i++)
		lv_memcg_set_max(memcgs[i], SIZE_MAX);
	while (pos + 4 * NR_THREADS <= size) {
		for (int t = 0; t < NR_THREADS; t++, pos += 4)
			workers[t].cmd = (struct cmd){ data[pos], data[pos + 1], data[pos + 2],
						       data[pos + 3] };
		pthread_barrier_wait(&step_start);
		pthread_barrier_wait(&step_end);
	}
	input_end = true;
	pthread_barrier_wait(&step_start);
	pthread_barrier_wait(&step_end);
	input_end = false;

	lv_file_close(file);
	lv_lru_add_drain_all(m);
	if (lv_check(m, stderr) || lv_bug_count(m))
		fail("lv_check failed at the end");
	for (int i = 1; i <= NR_MEMCGS; i++)
		if (lv_memcg_usage(memcgs[i]))
			fail("memcg %d: %zu pages still charged", i, lv_memcg_usage(memcgs[i]));
	if (lv_node_stat(m, 0, LV_NR_CHARGED) || lv_node_stat(m, 0, LV_NR_ISOLATED))
		fail("%llu pages not free at the end",
		     (unsigned long long)lv_node_stat(m, 0, LV_NR_CHARGED));
	return 0;
}

#ifdef LV_FUZZ_REPLAY
/* Replay: each file named on the command line is one input, one TAP test. */
int main(int argc, char **argv)
{
	LLVMFuzzerInitialize(&argc, &argv);
	printf("1..%d\n", argc - 1);
	for (int i = 1; i < argc; i++) {
		static uint8_t buf[1 << 16];
		FILE *f = fopen(argv[i], "rb");
		size_t n;

		if (!f) {
			printf("not ok %d - %s: cannot open\n", i, argv[i]);
			continue;
		}
		n = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		LLVMFuzzerTestOneInput(buf, n);
		printf("ok %d - %s (%zu bytes)\n", i, argv[i], n);
		fflush(stdout);
	}
	return 0; /* the workers wait on the barrier; exit() ends them */
}
#endif
