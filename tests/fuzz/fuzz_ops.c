// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fuzz_ops - the public API driven by a byte string, one thread, with what the caller knows
 * checked after every call and lv_check() after every sixteenth and at the end.
 *
 * The torture test races the operations; this explores their sequences, coverage-guided
 * (libFuzzer), including the error returns a random order reaches: adding a folio twice,
 * putting back what was never isolated, moving a folio off the LRU, removing a memcg that
 * still has folios off the LRU, charges over a limit, truncating under cached pages, unmapping
 * ranges that are partly holes. Every call respects the API's contract (references held,
 * handles alive); everything else is the library's to answer, and the harness knows enough to
 * say what the answer must be where the header promises one:
 *
 *   - a folio the harness added and never isolated is refused by a second add (-EINVAL);
 *   - putback succeeds exactly for the folios the harness isolated;
 *   - a memcg with no children, no mm and no folio of the harness off the LRU is removed (0):
 *     nothing else is in transit, since there is one thread and no kswapd;
 *   - bytes written to an mm read back, and a sparse file reads as zeros.
 *
 * At the end every handle is released and the machine must be empty (lv_check()).
 *
 * Built two ways: with -fsanitize=fuzzer for `make fuzz`, and with LV_FUZZ_REPLAY as a TAP
 * program that replays the inputs named on its command line (the corpus kept in
 * tests/fuzz/corpus, run by `make check`).
 */
#define _GNU_SOURCE
#include "lruvec.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NR_FOLIOS 16
#define NR_MEMCGS 6
#define NR_FILES  3
#define NR_MMS	  2
#define MM_PAGES  64 /* each mm maps one region of this many pages */
#define FILE_SIZE (2ul << 20)
#define REAL_SIZE (256ul << 10) /* file 0 is a real file of this many bytes (a memfd) */

struct input {
	const uint8_t *p;
	size_t left;
};

static unsigned int take(struct input *in)
{
	if (!in->left)
		return 0;
	in->left--;
	return *in->p++;
}

struct owned {
	struct lv_folio *folio; /* NULL: free slot */
	bool added;		/* lv_folio_add_lru() succeeded, and not isolated since */
	bool isolated;		/* lv_folio_isolate_lru() succeeded, not put back */
};

struct state {
	struct lv_machine *m;
	unsigned int nr_nodes;
	struct owned folios[NR_FOLIOS];
	struct lv_memcg *memcgs[NR_MEMCGS]; /* [0]: the root */
	struct lv_file *files[NR_FILES];
	int real_fd; /* behind files[0]; -1 if memfd_create() is not available */
	struct lv_mm *mms[NR_MMS];
	uint64_t mm_base[NR_MMS];
	struct lv_memcg *mm_memcg[NR_MMS];
	unsigned int disabled; /* lv_lru_cache_disable() depth */
};

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "fuzz_ops: ");
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

static struct lv_memcg *pick_memcg(struct state *s, struct input *in)
{
	struct lv_memcg *mg = s->memcgs[take(in) % NR_MEMCGS];

	return mg ? mg : s->memcgs[0];
}

static bool memcg_has_children(struct state *s, struct lv_memcg *mg)
{
	for (int i = 1; i < NR_MEMCGS; i++)
		if (s->memcgs[i] && lv_memcg_parent(s->memcgs[i]) == mg)
			return true;
	return false;
}

/* A folio of ours off the LRU and charged to @mg makes its removal wait, then fail. */
static bool memcg_holds_off_lru(struct state *s, struct lv_memcg *mg)
{
	for (int i = 0; i < NR_FOLIOS; i++)
		if (s->folios[i].folio && !s->folios[i].added &&
		    lv_folio_memcg(s->folios[i].folio) == mg)
			return true;
	return false;
}

static void drop_folio(struct owned *o)
{
	lv_folio_put(o->folio); /* an isolated folio's isolation reference goes with it */
	if (o->isolated)
		lv_folio_put(o->folio);
	*o = (struct owned){ 0 };
}

/* drop_folios - release every folio we hold in one lv_folios_put() (isolation refs too). */
static void drop_folios(struct state *s)
{
	struct lv_folio *batch[2 * NR_FOLIOS];
	size_t n = 0;

	for (int i = 0; i < NR_FOLIOS; i++) {
		struct owned *o = &s->folios[i];

		if (!o->folio)
			continue;
		batch[n++] = o->folio;
		if (o->isolated)
			batch[n++] = o->folio;
		*o = (struct owned){ 0 };
	}
	lv_folios_put(batch, n);
}

static void op_folio(struct state *s, struct input *in, unsigned int op)
{
	struct owned *o = &s->folios[take(in) % NR_FOLIOS];
	int err;

	if (!o->folio) {
		unsigned int flags = take(in), order = flags >> 5 & 3;
		struct lv_memcg *mg = pick_memcg(s, in);

		o->folio = lv_folio_alloc(s->m, (int)(flags % s->nr_nodes), order, mg,
					  flags & LV_FOLIO_ANON);
		return;
	}
	switch (op % 12) {
	case 0:
		/* Refused exactly when it is already the LRU's, or isolated. */
		err = lv_folio_add_lru(o->folio);
		if (err != (o->added || o->isolated ? -EINVAL : 0))
			fail("add returned %d (added %d, isolated %d)", err, o->added, o->isolated);
		o->added |= !err;
		break;
	case 1:
		err = lv_folio_isolate_lru(o->folio);
		if (!err && !o->added)
			fail("isolated a folio that was never added");
		if (!err) {
			o->added = false;
			o->isolated = true;
			if (!lv_folio_test(o->folio, LV_PG_ISOLATED) ||
			    lv_folio_test(o->folio, LV_PG_LRU))
				fail("isolated folio: PG_isolated %d PG_lru %d",
				     lv_folio_test(o->folio, LV_PG_ISOLATED),
				     lv_folio_test(o->folio, LV_PG_LRU));
		}
		break;
	case 2:
		err = lv_folio_putback_lru(o->folio);
		if (err != (o->isolated ? 0 : -EINVAL))
			fail("putback returned %d (isolated: %d)", err, o->isolated);
		if (!err)
			*o = (struct owned){ .folio = o->folio, .added = true };
		break;
	case 3:
		lv_folio_mark_accessed(o->folio);
		break;
	case 4:
		lv_folio_activate(o->folio);
		break;
	case 5:
		lv_folio_deactivate(o->folio);
		lv_deactivate_file_folio(o->folio);
		break;
	case 6:
		lv_folio_mark_lazyfree(o->folio);
		lv_folio_rotate_reclaimable(o->folio);
		break;
	case 7: {
		struct lv_memcg *to = pick_memcg(s, in), *from = lv_folio_memcg(o->folio);

		err = lv_folio_move_memcg(o->folio, to);
		if (!err && lv_folio_memcg(o->folio) != to)
			fail("moved, but charged to another memcg");
		if (err && lv_folio_memcg(o->folio) != from)
			fail("move failed (%d), but the charge moved", err);
		break;
	}
	case 8:
		err = lv_folio_set_state(o->folio, LV_PG_MLOCKED, take(in) & 1);
		if (err && err != -EBUSY)
			fail("set_state(MLOCKED) returned %d", err);
		lv_folio_set_state(o->folio, (take(in) & 1) ? LV_PG_DIRTY : LV_PG_WRITEBACK,
				   take(in) & 1);
		break;
	case 9:
		/* A reference taken and dropped changes nothing: the count must come back. */
		err = lv_folio_ref_count(o->folio);
		lv_folio_get(o->folio);
		if (!lv_folio_try_get(o->folio))
			fail("try_get failed on a folio we hold");
		lv_folio_put(o->folio);
		lv_folio_put(o->folio);
		if (lv_folio_ref_count(o->folio) != err)
			fail("reference count %d, was %d", lv_folio_ref_count(o->folio), err);
		break;
	case 10:
		drop_folios(s);
		break;
	default:
		drop_folio(o);
		break;
	}
}

static void op_memcg(struct state *s, struct input *in)
{
	int i = 1 + (int)(take(in) % (NR_MEMCGS - 1));
	struct lv_memcg *mg = s->memcgs[i];
	unsigned int what = take(in);

	if (!mg) {
		s->memcgs[i] = lv_memcg_create(s->m, pick_memcg(s, in), "f");
		return;
	}
	if (what & 1) {
		lv_memcg_set_max(mg, (what & 2) ? SIZE_MAX : 8 + take(in) * 4);
		return;
	}
	for (int k = 0; k < NR_MMS; k++)
		if (s->mms[k] && s->mm_memcg[k] == mg)
			return; /* -EBUSY by contract; not worth a call */
	if (memcg_has_children(s, mg) || memcg_holds_off_lru(s, mg))
		return; /* would wait ~100 ms, then -EBUSY */
	if (lv_memcg_remove(mg))
		fail("removing a memcg with nothing off the LRU failed");
	s->memcgs[i] = NULL;
}

static unsigned char real_byte(uint64_t pos)
{
	return (unsigned char)(pos * 2654435761u >> 11);
}

/* real_file - a memfd holding real_byte() at every offset, or -1. */
static int real_file(void)
{
	static unsigned char data[REAL_SIZE];
	int fd = memfd_create("fuzz_ops", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	for (size_t k = 0; k < REAL_SIZE; k++)
		data[k] = real_byte(k);
	if (pwrite(fd, data, REAL_SIZE, 0) != (ssize_t)REAL_SIZE) {
		close(fd);
		return -1;
	}
	return fd;
}

static void op_file(struct state *s, struct input *in)
{
	int i = (int)(take(in) % NR_FILES);
	unsigned int what = take(in);
	struct lv_file *f = s->files[i];
	static char buf[3 * 4096];

	if (!f) {
		bool real = i == 0 && s->real_fd >= 0;

		s->files[i] =
			lv_file_open(s->m, real ? s->real_fd : -1, real ? REAL_SIZE : FILE_SIZE);
		if (!s->files[i])
			fail("lv_file_open failed");
		return;
	}
	switch (what % 5) {
	case 0:
	case 1: {
		uint64_t off = (uint64_t)take(in) * 8192 + take(in) * 16;
		size_t len = 1 + take(in) * 48;
		long n;

		memset(buf, 0xa5, sizeof(buf));
		n = lv_file_read(f, pick_memcg(s, in), buf, len, off);
		if (n < 0 && n != -ENOMEM)
			fail("lv_file_read returned %ld", n);
		for (long k = 0; k < n; k++) {
			uint64_t pos = off + (uint64_t)k;
			unsigned char want = i == 0 && s->real_fd >= 0 ? real_byte(pos) : 0;

			if ((unsigned char)buf[k] != want)
				fail("file %d reads %#x at %llu, not %#x", i, buf[k] & 0xff,
				     (unsigned long long)pos, want);
		}
		break;
	}
	case 2:
		/* The real file only shrinks: grown back, its cache refills from the same bytes. */
		if (lv_file_truncate(f, (uint64_t)take(in) * (i == 0 ? 1024 : 8192)))
			fail("lv_file_truncate failed");
		break;
	case 3:
		if (s->nr_nodes > 1 &&
		    lv_file_migrate_pages(f, ~0ull, (int)(take(in) % s->nr_nodes)) < 0)
			fail("lv_file_migrate_pages failed");
		break;
	default:
		lv_file_close(f);
		s->files[i] = NULL;
		break;
	}
}

static unsigned char mm_byte(uint64_t addr)
{
	return (unsigned char)(addr * 2654435761u >> 13) | 1;
}

static void op_mm(struct state *s, struct input *in)
{
	int i = (int)(take(in) % NR_MMS);
	struct lv_mm *mm = s->mms[i];
	unsigned int what = take(in);
	uint64_t page = take(in) % MM_PAGES, addr;

	if (!mm) {
		struct lv_memcg *mg = pick_memcg(s, in);

		mm = lv_mm_create(s->m, mg, (int)(what % s->nr_nodes));
		if (!mm)
			return; /* the memcg is being removed: cannot happen with one thread */
		if (lv_mmap(mm, MM_PAGES * LV_PAGE_SIZE, &s->mm_base[i]))
			fail("lv_mmap failed");
		s->mms[i] = mm;
		s->mm_memcg[i] = mg;
		return;
	}
	addr = s->mm_base[i] + page * LV_PAGE_SIZE;
	switch (what % 9) {
	case 0:
	case 1: {
		unsigned char b = mm_byte(addr);
		int err = lv_mm_memset(mm, addr, b, LV_PAGE_SIZE);

		if (err && err != -ENOMEM && err != -EFAULT)
			fail("lv_mm_memset returned %d", err);
		break;
	}
	case 2: {
		unsigned char got[64];

		/* Each page holds zeros or its own byte (or was unmapped: zeros, or -EFAULT). */
		if (lv_mm_read(mm, addr, got, sizeof(got)))
			break;
		for (size_t k = 0; k < sizeof(got); k++)
			if (got[k] && got[k] != mm_byte(addr))
				fail("mm page at %#llx reads %#x", (unsigned long long)addr,
				     got[k]);
		break;
	}
	case 3: {
		static const int advice[] = { LV_MADV_DONTNEED, LV_MADV_FREE, LV_MADV_COLD };

		lv_madvise(mm, addr, (1 + take(in) % 8) * LV_PAGE_SIZE, advice[take(in) % 3]);
		break;
	}
	case 4:
		if (s->nr_nodes > 1) {
			int node = (int)(take(in) % s->nr_nodes), status;

			if (lv_move_pages(mm, 1, &addr, &node, &status))
				fail("lv_move_pages refused a good node");
			if (lv_migrate_pages(mm, ~0ull, (int)(take(in) % s->nr_nodes)) < 0)
				fail("lv_migrate_pages refused a good node");
		}
		break;
	case 5: {
		size_t len = (1 + take(in) % 4) * LV_PAGE_SIZE;

		/* A hole punched in the region: later accesses there fail with -EFAULT. */
		lv_munmap(mm, addr, len);
		break;
	}
	case 6: {
		/* The heap grows and shrinks; its pages hold zeros or their own byte too. */
		int64_t delta = ((int64_t)(take(in) % 9) - 4) * (int64_t)LV_PAGE_SIZE;
		uint64_t old_brk;
		int err = lv_mm_brk(mm, delta, &old_brk);

		if (err && err != -ENOMEM && err != -EINVAL)
			fail("lv_mm_brk returned %d", err);
		if (!err && delta > 0 && lv_mm_memset(mm, old_brk, mm_byte(old_brk), 64) == -EFAULT)
			fail("the grown heap at %#llx faults", (unsigned long long)old_brk);
		break;
	}
	case 7:
		if (lv_mm_set_node(mm, (int)(take(in) % s->nr_nodes)))
			fail("lv_mm_set_node refused a good node");
		break;
	default:
		lv_mm_destroy(mm);
		s->mms[i] = NULL;
		break;
	}
}

static void op_machine(struct state *s, struct input *in)
{
	unsigned int what = take(in);

	switch (what % 6) {
	case 0:
		lv_lru_add_drain(s->m);
		break;
	case 1:
		lv_lru_add_drain_all(s->m);
		break;
	case 2:
		if (s->disabled < 3) {
			lv_lru_cache_disable(s->m);
			s->disabled++;
		}
		break;
	case 3:
		if (s->disabled) {
			lv_lru_cache_enable(s->m);
			s->disabled--;
		}
		break;
	case 4:
		lv_reclaim_node(s->m, (int)(take(in) % s->nr_nodes), 1 + take(in));
		break;
	default:
		if (s->memcgs[0]) /* NULL with memcg disabled */
			lv_memcg_reclaim(pick_memcg(s, in), 1 + take(in));
		break;
	}
}

static void check(struct state *s, const char *when)
{
	if (lv_check(s->m, stderr))
		fail("lv_check failed %s", when);
	if (lv_bug_count(s->m))
		fail("the library reported an internal bug %s", when);
}

static void teardown(struct state *s)
{
	for (int i = 0; i < NR_FOLIOS; i++)
		if (s->folios[i].folio)
			drop_folio(&s->folios[i]);
	for (int i = 0; i < NR_FILES; i++)
		if (s->files[i])
			lv_file_close(s->files[i]);
	for (int i = 0; i < NR_MMS; i++)
		if (s->mms[i])
			lv_mm_destroy(s->mms[i]);
	while (s->disabled--)
		lv_lru_cache_enable(s->m);
	lv_lru_add_drain_all(s->m);
	check(s, "after every handle was released");
	/* Children first: a memcg with nothing left must go. */
	for (int pass = 0; pass < NR_MEMCGS; pass++)
		for (int i = 1; i < NR_MEMCGS; i++)
			if (s->memcgs[i] && !memcg_has_children(s, s->memcgs[i])) {
				if (lv_memcg_remove(s->memcgs[i]))
					fail("removing an empty memcg at the end failed");
				s->memcgs[i] = NULL;
			}
	/* The root's usage counts every allocated page (no root with memcg disabled). */
	if (s->memcgs[0] && lv_memcg_usage(s->memcgs[0]))
		fail("%zu pages still allocated at the end", lv_memcg_usage(s->memcgs[0]));
	for (unsigned int nid = 0; nid < s->nr_nodes; nid++)
		if (lv_node_stat(s->m, (int)nid, LV_NR_ISOLATED))
			fail("node %u: pages still isolated at the end", nid);
	check(s, "at the end");
	lv_machine_destroy(s->m);
	if (s->real_fd >= 0)
		close(s->real_fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	struct state s = { 0 };
	struct lv_config cfg;
	unsigned int setup = take(&in);

	lv_config_init(&cfg);
	cfg.nr_nodes = 1 + (setup & 1);
	cfg.node_mem_bytes = 4ul << 20;
	cfg.nr_cpu_slots = 2;
	cfg.no_kswapd = true;
	cfg.lock_design = (setup & 2) ? LV_LOCK_NODE : LV_LOCK_LRUVEC;
	cfg.memcg_disabled = (setup & 0x1c) == 0x1c;
	cfg.batch_size = (setup & 0x20) ? 1 : 15;
	cfg.file_folio_order = (setup & 0x40) ? 2 : 0;
	s.m = lv_machine_create(&cfg);
	if (!s.m)
		fail("lv_machine_create failed");
	s.nr_nodes = cfg.nr_nodes;
	s.real_fd = real_file();
	s.memcgs[0] = lv_memcg_root(s.m);

	for (unsigned int step = 1; in.left; step++) {
		unsigned int op = take(&in);

		if (op < 128)
			op_folio(&s, &in, op);
		else if (op < 160)
			op_memcg(&s, &in);
		else if (op < 200)
			op_file(&s, &in);
		else if (op < 240)
			op_mm(&s, &in);
		else
			op_machine(&s, &in);
		if (step % 16 == 0)
			check(&s, "during the run");
	}
	teardown(&s);
	return 0;
}

#ifdef LV_FUZZ_REPLAY
/* Replay: each file named on the command line is one input, one TAP test. */
int main(int argc, char **argv)
{
	printf("1..%d\n", argc - 1);
	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		static uint8_t buf[1 << 16];
		size_t n;

		if (!f) {
			printf("not ok %d - %s: cannot open\n", i, argv[i]);
			continue;
		}
		n = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		/* A failure aborts the program: prove reports the test missing and the status. */
		LLVMFuzzerTestOneInput(buf, n);
		printf("ok %d - %s (%zu bytes)\n", i, argv[i], n);
		fflush(stdout);
	}
	return 0;
}
#endif
