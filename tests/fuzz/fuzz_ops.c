// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fuzz_ops - the whole public API driven by a byte string, one thread, with what the caller
 * knows checked after every call and lv_check() after every sixteenth and at the end.
 *
 * The torture test races the operations; this explores their sequences, coverage-guided
 * (libFuzzer), including the error returns a random order reaches: adding a folio twice,
 * putting back what was never isolated, moving a folio off the LRU, removing a memcg that
 * still has folios on its lists (reparenting), charges over a limit, truncating under cached
 * and mapped pages, unmapping ranges that are partly holes, splitting huge pages, mlocking,
 * swapping out and in, compacting, turning swap devices on and off. Every call respects the
 * API's contract (references held, handles alive); everything else is the library's to
 * answer, and the harness knows enough to say what the answer must be where the header
 * promises one:
 *
 *   - a folio the harness added and never isolated is refused by a second add (-EINVAL);
 *   - putback succeeds exactly for the folios the harness isolated;
 *   - a folio has the node, size and charge it was allocated with, and keeps the bytes the
 *     harness wrote into it (through splits too);
 *   - a memcg with no children, no mm and no folio of the harness off the LRU is removed (0):
 *     nothing else is in transit, since there is one thread and no kswapd;
 *   - bytes written to an mm read back (through swap, migration, compaction and splits), a
 *     sparse file reads as zeros and a private file mapping as the file or the mm's writes;
 *   - setters read back, and refuse exactly the values the header says they refuse.
 *
 * Speed: one machine per configuration lives across inputs (made at its first input), and
 * each input ends by releasing every handle it made, after which the machine must be empty:
 * lv_check() passes, every page of every node is free, no memcg, file or mm is left, and the
 * machine's one swap device holds no slot (any other is off). So nothing of one input reaches
 * the next, and an input replays alone as it ran in a run. No input creates a thread (no
 * kswapd, no kcompactd), and only one that turns a swap device off waits for grace periods.
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

#define NR_FOLIOS  16
#define NR_MEMCGS  6
#define NR_FILES   3
#define NR_MMS	   2
#define NR_SWAPS   2
#define MM_PAGES   1024 /* each mm maps one anon region of this many pages (4 MiB: THP fits) */
#define FMAP_PAGES 16	/* and may map this much of a file privately */
#define FILE_SIZE  (2ul << 20)
#define REAL_SIZE  (256ul << 10) /* file 0 is a real file of this many bytes (a memfd) */
#define SWAP_SIZE  (2ul << 20)	 /* one cluster */
#define NR_SETUPS  16		 /* configurations: the bits of the input's first byte */

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
	uint64_t tag;		/* the first 8 bytes of its data, as the harness wrote them */
};

struct state {
	struct lv_machine *m;
	unsigned int nr_nodes;
	bool memcg_disabled;
	struct owned folios[NR_FOLIOS];
	struct lv_memcg *memcgs[NR_MEMCGS]; /* [0]: the root (NULL with memcg disabled) */
	struct lv_file *files[NR_FILES];
	uint64_t file_min[NR_FILES]; /* the smallest size it has had: zeros past it */
	struct lv_mm *mms[NR_MMS];
	uint64_t mm_base[NR_MMS];
	struct lv_memcg *mm_memcg[NR_MMS];
	int fmap_file[NR_MMS]; /* the file mapped at fmap_base, or -1 */
	uint64_t fmap_base[NR_MMS], fmap_off[NR_MMS];
	unsigned int setup;    /* the machine's configuration (machines[]) */
	int swap_id[NR_SWAPS]; /* -1: off; [1] is the machine's own, on between inputs */
	unsigned int disabled; /* lv_lru_cache_disable() depth */
	uint64_t next_tag;
	struct lv_batch_stat batch_seen; /* lv_batch_stats() last read in this input, or zeros */
};

/* Host resources every machine shares: each is used by one input at a time. */
static int real_fd = -1; /* behind files[0]; -1 if memfd_create() is not available */
static int swap_fd = -1; /* behind swap device 1; -1: that one is in memory too */
static FILE *devnull;	 /* where lv_lock_stats_print() writes */
static struct lv_machine *machines[NR_SETUPS];
/*
 * Each machine keeps swap device 1 (on swap_fd) on between inputs: turning a device off waits
 * for grace periods, which took half of a run's time when every input that swapped paid for
 * it. An input may still turn it off and on; the reset turns it on again if it is off.
 */
static int machine_swap[NR_SETUPS];

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

/* ---- folios --------------------------------------------------------------------------------- */

static void check_tag(const struct owned *o)
{
	uint64_t tag;

	memcpy(&tag, lv_folio_data(o->folio), sizeof(tag));
	if (tag != o->tag)
		fail("folio data %#llx, written %#llx", (unsigned long long)tag,
		     (unsigned long long)o->tag);
}

static void drop_folio(struct owned *o)
{
	check_tag(o);
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
		check_tag(o);
		batch[n++] = o->folio;
		if (o->isolated)
			batch[n++] = o->folio;
		*o = (struct owned){ 0 };
	}
	lv_folios_put(batch, n);
}

static void new_folio(struct state *s, struct owned *o, struct input *in)
{
	unsigned int flags = take(in), order = flags >> 5 & 3;
	int nid = (int)(flags % s->nr_nodes);
	struct lv_memcg *mg = pick_memcg(s, in);
	unsigned char *data;

	if (order == 3 && (flags & 0x80)) {
		order = LV_MAX_ORDER; /* a huge page, for lv_split_folio(); zeroing it is slow */
		flags &= ~LV_FOLIO_ZERO;
	}
	o->folio = lv_folio_alloc(s->m, nid, order, mg, flags & (LV_FOLIO_ANON | LV_FOLIO_ZERO));
	if (!o->folio) {
		if (errno != ENOMEM)
			fail("lv_folio_alloc failed with errno %d", errno);
		return;
	}
	if (lv_folio_nid(o->folio) != nid || lv_folio_nr_pages(o->folio) != 1ul << order ||
	    lv_folio_ref_count(o->folio) != 1)
		fail("new folio: node %d pages %u refs %d, asked node %d order %u",
		     lv_folio_nid(o->folio), lv_folio_nr_pages(o->folio),
		     lv_folio_ref_count(o->folio), nid, order);
	if (lv_folio_memcg(o->folio) != (s->memcg_disabled ? NULL : mg))
		fail("new folio charged to another memcg");
	data = lv_folio_data(o->folio);
	if (flags & LV_FOLIO_ZERO)
		for (size_t k = 0; k < LV_PAGE_SIZE << order; k += 997)
			if (data[k])
				fail("LV_FOLIO_ZERO folio holds %#x at %zu", data[k], k);
	o->tag = ++s->next_tag * 0x9e3779b97f4a7c15ull;
	memcpy(data, &o->tag, sizeof(o->tag));
}

static void op_folio(struct state *s, struct input *in, unsigned int op)
{
	struct owned *o = &s->folios[take(in) % NR_FOLIOS];
	int err;

	if (!o->folio) {
		new_folio(s, o, in);
		return;
	}
	switch (op % 14) {
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
		if (!err) {
			o->added = true;
			o->isolated = false;
		}
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
		/* Refused exactly while the LRU claims the folio. */
		err = lv_folio_set_state(o->folio, LV_PG_MLOCKED, take(in) & 1);
		if (err != (o->added ? -EBUSY : 0))
			fail("set_state(MLOCKED) returned %d (added %d isolated %d)", err, o->added,
			     o->isolated);
		lv_folio_set_state(o->folio, (take(in) & 1) ? LV_PG_DIRTY : LV_PG_WRITEBACK,
				   take(in) & 1);
		if (lv_folio_set_state(o->folio, LV_PG_ACTIVE, true) != -EINVAL)
			fail("set_state accepted an LRU-owned flag");
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
	case 10: {
		/* Only an isolated folio is refused for a reason of ours; another CPU slot's batch
		 * may hold a reference of its own (-EBUSY) if the thread moved. */
		unsigned int nr = lv_folio_nr_pages(o->folio);

		err = lv_split_folio(o->folio);
		if (nr == 1 ? err != -EINVAL : (o->isolated ? err != -EBUSY : err && err != -EBUSY))
			fail("split of %u pages (isolated %d) returned %d", nr, o->isolated, err);
		if (!err && lv_folio_nr_pages(o->folio) != 1)
			fail("split folio has %u pages", lv_folio_nr_pages(o->folio));
		check_tag(o);
		break;
	}
	case 11:
		drop_folios(s);
		break;
	default:
		drop_folio(o);
		break;
	}
}

/* ---- memcgs --------------------------------------------------------------------------------- */

static void op_memcg(struct state *s, struct input *in)
{
	int i = 1 + (int)(take(in) % (NR_MEMCGS - 1));
	struct lv_memcg *mg = s->memcgs[i];
	unsigned int what = take(in);

	if (s->memcg_disabled) {
		errno = 0;
		if (lv_memcg_create(s->m, NULL, "f") || errno != EINVAL)
			fail("lv_memcg_create with memcg disabled: errno %d", errno);
		return;
	}
	if (!mg) {
		struct lv_memcg *parent = pick_memcg(s, in);

		mg = lv_memcg_create(s->m, parent, "f");
		if (!mg && errno != ENOSPC)
			fail("lv_memcg_create failed with errno %d", errno);
		if (mg && (lv_memcg_parent(mg) != parent || strcmp(lv_memcg_name(mg), "f") ||
			   lv_memcg_usage(mg) || lv_memcg_swap_usage(mg)))
			fail("new memcg: wrong parent, name or usage");
		s->memcgs[i] = mg;
		return;
	}
	switch (what % 6) {
	case 0: {
		size_t max = (what & 8) ? SIZE_MAX : 8 + take(in) * 4;

		if (lv_memcg_set_max(mg, max) || lv_memcg_max(mg) != max)
			fail("lv_memcg_set_max(%zu) reads back %zu", max, lv_memcg_max(mg));
		if (lv_memcg_set_max(s->memcgs[0], 1) != -EINVAL)
			fail("the root's limit was set");
		return;
	}
	case 1:
		if (lv_memcg_set_swap_max(mg, (what & 8) ? SIZE_MAX : take(in) * 4))
			fail("lv_memcg_set_swap_max failed");
		return;
	case 2: {
		unsigned int v = take(in);

		if (lv_memcg_set_swappiness(mg, v) != (v > 200 ? -EINVAL : 0))
			fail("lv_memcg_set_swappiness(%u) = %d", v, lv_memcg_set_swappiness(mg, v));
		return;
	}
	case 3:
		if (lv_compact_memcg(mg, (int)(take(in) % (LV_MAX_ORDER + 2)) - 1) < 0)
			fail("lv_compact_memcg failed");
		if (lv_memcg_stat(mg, LV_NR_CHARGED) != lv_memcg_usage(mg))
			fail("memcg nr_charged is not its usage");
		return;
	default:
		break;
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

/* ---- files ---------------------------------------------------------------------------------- */

static unsigned char real_byte(uint64_t pos)
{
	return (unsigned char)(pos * 2654435761u >> 11);
}

/* real_byte() at every offset of file 0: what reads of it are compared with. */
static unsigned char real_data[REAL_SIZE];

/* real_file - a memfd holding real_byte() at every offset, or -1. */
static int real_file(void)
{
	int fd = memfd_create("fuzz_ops", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	for (size_t k = 0; k < REAL_SIZE; k++)
		real_data[k] = real_byte(k);
	if (pwrite(fd, real_data, REAL_SIZE, 0) != (ssize_t)REAL_SIZE) {
		close(fd);
		return -1;
	}
	return fd;
}

static bool is_real(int file)
{
	return file == 0 && real_fd >= 0;
}

/* file_byte - what byte @pos of file @i reads as, if it reads at all. */
static unsigned char file_byte(struct state *s, int i, uint64_t pos)
{
	return is_real(i) && pos < s->file_min[i] ? real_byte(pos) : 0;
}

/*
 * file_mismatch - the first of @n bytes read at @off of file @i that is not file_byte(), or
 * -1: compared a run at a time (file data below the smallest size, zeros above it).
 */
static long file_mismatch(struct state *s, int i, const unsigned char *buf, uint64_t off, long n)
{
	static const unsigned char zeros[3 * 4096];
	uint64_t data_end = is_real(i) ? s->file_min[i] : 0;
	long k = 0;

	while (k < n) {
		uint64_t pos = off + (uint64_t)k;
		bool data = pos < data_end;
		long run = n - k;

		if (data && (uint64_t)run > data_end - pos)
			run = (long)(data_end - pos);
		if (!data && run > (long)sizeof(zeros))
			run = sizeof(zeros);
		if (memcmp(buf + k, data ? real_data + pos : zeros, (size_t)run))
			for (long j = k; j < k + run; j++)
				if (buf[j] != file_byte(s, i, off + (uint64_t)j))
					return j;
		k += run;
	}
	return -1;
}

static void unmap_file(struct state *s, int file)
{
	for (int k = 0; k < NR_MMS; k++)
		if (s->mms[k] && s->fmap_file[k] == file) {
			if (lv_munmap(s->mms[k], s->fmap_base[k], FMAP_PAGES * LV_PAGE_SIZE))
				fail("lv_munmap of a file mapping failed");
			s->fmap_file[k] = -1;
		}
}

static void op_file(struct state *s, struct input *in)
{
	int i = (int)(take(in) % NR_FILES);
	unsigned int what = take(in);
	struct lv_file *f = s->files[i];
	static char buf[3 * 4096];

	if (!f) {
		s->files[i] = lv_file_open(s->m, is_real(i) ? real_fd : -1,
					   is_real(i) ? REAL_SIZE : FILE_SIZE);
		if (!s->files[i])
			fail("lv_file_open failed");
		s->file_min[i] = is_real(i) ? REAL_SIZE : FILE_SIZE;
		if (lv_file_cached_pages(s->files[i]))
			fail("a new file has cached pages");
		return;
	}
	switch (what % 5) {
	case 0:
	case 1: {
		uint64_t off = (uint64_t)take(in) * 8192 + take(in) * 16;
		size_t len = 1 + take(in) * 48;
		long n, k;

		memset(buf, 0xa5, sizeof(buf));
		n = lv_file_read(f, pick_memcg(s, in), buf, len, off);
		if (n < 0 && n != -ENOMEM)
			fail("lv_file_read returned %ld", n);
		if ((k = file_mismatch(s, i, (unsigned char *)buf, off, n)) >= 0)
			fail("file %d reads %#x at %llu, not %#x", i, buf[k] & 0xff,
			     (unsigned long long)(off + (uint64_t)k),
			     file_byte(s, i, off + (uint64_t)k));
		if (lv_file_cached_pages(f) > (is_real(i) ? REAL_SIZE : FILE_SIZE) / LV_PAGE_SIZE)
			fail("file %d caches %lu pages", i, lv_file_cached_pages(f));
		break;
	}
	case 2: {
		/* Grown back, a file reads zeros past the smallest size it has had. */
		uint64_t size = (uint64_t)take(in) * (i == 0 ? 1024 : 8192);

		if (lv_file_truncate(f, size))
			fail("lv_file_truncate failed");
		if (size < s->file_min[i])
			s->file_min[i] = size;
		if (lv_file_truncate(f, 1ull << 53) != -EINVAL)
			fail("lv_file_truncate accepted a size above 2^52");
		break;
	}
	case 3:
		if (s->nr_nodes > 1 &&
		    lv_file_migrate_pages(f, ~0ull, (int)(take(in) % s->nr_nodes)) < 0)
			fail("lv_file_migrate_pages failed");
		break;
	default:
		/* The file outlives its mappings: they go first. */
		unmap_file(s, i);
		lv_file_close(f);
		s->files[i] = NULL;
		break;
	}
}

/* ---- address spaces ------------------------------------------------------------------------- */

static unsigned char mm_byte(uint64_t addr)
{
	return (unsigned char)(addr * 2654435761u >> 13) | 1;
}

static void new_mm(struct state *s, int i, struct input *in, unsigned int what)
{
	struct lv_memcg *mg = pick_memcg(s, in);
	struct lv_mm *mm = lv_mm_create(s->m, mg, (int)(what % s->nr_nodes));
	int err;

	if (!mm)
		fail("lv_mm_create failed with errno %d", errno);
	err = (what & 0x10)
		      ? lv_mmap_flags(mm, MM_PAGES * LV_PAGE_SIZE, LV_MAP_LOCKED, &s->mm_base[i])
		      : lv_mmap(mm, MM_PAGES * LV_PAGE_SIZE, &s->mm_base[i]);
	if (err)
		fail("lv_mmap failed: %d", err);
	if (lv_mmap_flags(mm, LV_PAGE_SIZE, 0x80000000u, &(uint64_t){ 0 }) != -EINVAL)
		fail("lv_mmap_flags accepted an unknown flag");
	s->mms[i] = mm;
	s->mm_memcg[i] = mg;
	s->fmap_file[i] = -1;
}

/* check_page - 64 bytes at @addr of mm @i hold zeros or the page's own byte, or its file's. */
static void check_page(struct state *s, int i, uint64_t addr, bool in_file)
{
	unsigned char got[64];
	uint64_t page = addr & ~(LV_PAGE_SIZE - 1);
	int err = lv_mm_read(s->mms[i], addr, got, sizeof(got));

	if (err) {
		/* Holes fault; so does a file past its end; a swap-in or a fill may find no
		 * memory. */
		if (err != -EFAULT && err != -ENOMEM && !(in_file && err == -ENOENT))
			fail("lv_mm_read returned %d", err);
		return;
	}
	for (size_t k = 0; k < sizeof(got); k++) {
		unsigned char want =
			in_file ? file_byte(s, s->fmap_file[i],
					    s->fmap_off[i] + addr - s->fmap_base[i] + k)
				: 0;

		if (got[k] != want && got[k] != mm_byte(page) && got[k])
			fail("mm %d at %#llx reads %#x", i, (unsigned long long)(addr + k), got[k]);
	}
}

static void op_mm(struct state *s, struct input *in)
{
	int i = (int)(take(in) % NR_MMS);
	struct lv_mm *mm = s->mms[i];
	unsigned int what = take(in);
	uint64_t page = (take(in) | take(in) << 8) % MM_PAGES, addr;
	bool in_file = false;

	if (!mm) {
		new_mm(s, i, in, what);
		return;
	}
	addr = s->mm_base[i] + page * LV_PAGE_SIZE;
	if ((what & 0x80) && s->fmap_file[i] >= 0) {
		addr = s->fmap_base[i] + page % FMAP_PAGES * LV_PAGE_SIZE;
		in_file = true;
	}
	switch (what % 16) {
	case 0:
	case 1: {
		unsigned char b = mm_byte(addr);
		int err = (what & 0x40) ? lv_mm_memset(mm, addr, b, LV_PAGE_SIZE) : ({
			static unsigned char pagebuf[LV_PAGE_SIZE];

			memset(pagebuf, b, sizeof(pagebuf));
			lv_mm_write(mm, addr, pagebuf, sizeof(pagebuf));
		});

		if (err && err != -ENOMEM && err != -EFAULT && !(in_file && err == -ENOENT))
			fail("lv_mm_write returned %d", err);
		break;
	}
	case 2:
		check_page(s, i, addr, in_file);
		break;
	case 3: {
		static const int advice[] = {
			LV_MADV_DONTNEED, LV_MADV_FREE,	    LV_MADV_COLD,
			LV_MADV_PAGEOUT,  LV_MADV_HUGEPAGE, LV_MADV_NOHUGEPAGE
		};
		int err = lv_madvise(mm, addr, (1 + take(in) % 8) * LV_PAGE_SIZE,
				     advice[take(in) % 6]);

		if (err && err != -ENOMEM)
			fail("lv_madvise returned %d", err);
		if (lv_madvise(mm, addr, LV_PAGE_SIZE, 12345) != -EINVAL)
			fail("lv_madvise accepted bad advice");
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
		if (lv_munmap(mm, addr, len) && !in_file)
			fail("lv_munmap failed");
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
	case 8:
	case 9: {
		size_t len = (1 + take(in) % 64) * LV_PAGE_SIZE;
		int err = (what % 16 == 8) ? lv_mlock(mm, addr, len) : lv_munlock(mm, addr, len);

		if (err && err != -ENOMEM)
			fail("lv_m(un)lock returned %d", err);
		break;
	}
	case 10:
		if (lv_mlockall(mm, 1 + take(in) % 3) || lv_mlockall(mm, 0) != -EINVAL)
			fail("lv_mlockall");
		break;
	case 11:
		if (lv_munlockall(mm))
			fail("lv_munlockall failed");
		break;
	case 12: {
		int file = (int)(take(in) % NR_FILES);
		uint64_t off = (uint64_t)(take(in) % 64) * LV_PAGE_SIZE;

		if (s->fmap_file[i] >= 0 || !s->files[file])
			break;
		if (lv_mmap_file(mm, s->files[file], off, FMAP_PAGES * LV_PAGE_SIZE,
				 LV_MAP_PRIVATE | ((what & 0x10) ? LV_MAP_LOCKED : 0),
				 &s->fmap_base[i]))
			fail("lv_mmap_file failed");
		if (lv_mmap_file(mm, s->files[file], off, LV_PAGE_SIZE, LV_MAP_SHARED,
				 &(uint64_t){ 0 }) != -EINVAL)
			fail("lv_mmap_file accepted LV_MAP_SHARED");
		s->fmap_file[i] = file;
		s->fmap_off[i] = off;
		break;
	}
	case 13:
		if (lv_mm_rss(mm) > s->nr_nodes * (4ul << 20) / LV_PAGE_SIZE)
			fail("mm rss %zu", lv_mm_rss(mm));
		break;
	default:
		lv_mm_destroy(mm);
		s->mms[i] = NULL;
		break;
	}
}

/* ---- the machine: drains, reclaim, compaction, swap, statistics ------------------------------ */

static void op_swap(struct state *s, struct input *in)
{
	int k = (int)(take(in) % NR_SWAPS);
	struct lv_swap_info info;

	if (s->swap_id[k] < 0) {
		int fd = k == 1 ? swap_fd : -1, id = lv_swap_on(s->m, fd, SWAP_SIZE, (int)take(in));

		if (id < 0)
			fail("lv_swap_on failed: %d", id);
		if (lv_swap_info(s->m, id, &info) || info.slots == 0 || info.used ||
		    info.in_memory != (fd < 0))
			fail("a new swap device: slots %zu used %zu", info.slots, info.used);
		s->swap_id[k] = id;
		return;
	}
	if (take(in) & 1) {
		if (lv_swap_info(s->m, s->swap_id[k], &info) || info.used > info.slots)
			fail("swap device %d: %zu of %zu slots used", k, info.used, info.slots);
		return;
	}
	switch (lv_swap_off(s->m, s->swap_id[k])) {
	case 0:
		s->swap_id[k] = -1;
		break;
	case -ENOMEM:
		break; /* memory cannot hold its pages: it stays on */
	default:
		fail("lv_swap_off failed");
	}
}

/*
 * check_batch_stats - lv_batch_stats() counts only flushes that moved a folio, so each has a
 * lock hold and each hold a folio; the counts only grow until lv_lock_stats_reset().
 */
static void check_batch_stats(struct state *s)
{
	struct lv_batch_stat st;

	lv_batch_stats(s->m, &st);
	if (st.flushes > st.holds || st.holds > st.folios)
		fail("lv_batch_stats: %llu flushes, %llu holds, %llu folios",
		     (unsigned long long)st.flushes, (unsigned long long)st.holds,
		     (unsigned long long)st.folios);
	if (st.flushes < s->batch_seen.flushes || st.holds < s->batch_seen.holds ||
	    st.folios < s->batch_seen.folios)
		fail("lv_batch_stats went back: %llu flushes after %llu",
		     (unsigned long long)st.flushes, (unsigned long long)s->batch_seen.flushes);
	s->batch_seen = st;
}

static void op_stats(struct state *s, struct input *in)
{
	unsigned int what = take(in);
	int nid = (int)(take(in) % s->nr_nodes);

	switch (what % 6) {
	case 0: {
		enum lv_stat_item item = (enum lv_stat_item)(take(in) % LV_NR_STAT_ITEMS);

		if (!lv_stat_name(item))
			fail("stat %d has no name", item);
		lv_node_stat(s->m, nid, item);
		if (s->memcgs[0])
			lv_memcg_stat(pick_memcg(s, in), item);
		break;
	}
	case 1: {
		enum lv_lock_class cls = (enum lv_lock_class)(take(in) % LV_NR_LOCK_CLASSES);
		struct lv_lock_stat st;
		struct lv_lock_site_stat sites[4];
		size_t n;

		if (!lv_lock_class_name(cls))
			fail("lock class %d has no name", cls);
		check_batch_stats(s);
		lv_lock_stats(s->m, cls, &st);
		n = lv_lock_sites(s->m, sites, 4);
		/* Most total wait first, every one named and contended. */
		for (size_t k = 0; k < n && k < 4; k++)
			if (!sites[k].caller || !sites[k].contended ||
			    (k && sites[k].wait_total_ns > sites[k - 1].wait_total_ns))
				fail("lv_lock_sites: site %zu of %zu out of order", k, n);
		break;
	}
	case 2: {
		struct lv_latency lat;
		uint64_t calls, sweeps;

		lv_lru_cache_disable_latency(s->m, &lat);
		if (lat.count && lv_latency_percentile(&lat, 100) > lat.max_ns)
			fail("latency percentile above the maximum");
		lv_drain_all_stats(s->m, &calls, &sweeps);
		break;
	}
	case 3: {
		int order = (int)(take(in) % (LV_MAX_ORDER + 1)), idx;

		idx = lv_fragmentation_index(s->m, nid, order);
		if (idx < -1000 || idx > 1000 || lv_fragmentation_index(s->m, nid, 99) != -EINVAL)
			fail("fragmentation index %d", idx);
		break;
	}
	case 4: {
		struct lv_config cfg = *lv_machine_config(s->m);

		if (cfg.nr_nodes != s->nr_nodes || lv_config_invalid(&cfg))
			fail("lv_machine_config reads back another configuration");
		cfg.batch_size = LV_MAX_BATCH + 1 + take(in);
		if (!lv_config_invalid(&cfg))
			fail("lv_config_invalid accepted batch_size %u", cfg.batch_size);
		break;
	}
	default:
		if (take(in) & 1) {
			struct lv_batch_stat bs;

			lv_lock_stats_reset(s->m);
			/* One thread, no background threads: nothing flushes in between. */
			lv_batch_stats(s->m, &bs);
			if (bs.flushes || bs.holds || bs.folios)
				fail("lv_batch_stats: %llu flushes after lv_lock_stats_reset",
				     (unsigned long long)bs.flushes);
			s->batch_seen = bs;
		} else
			lv_lock_stats_print(s->m, devnull);
		break;
	}
}

static void op_machine(struct state *s, struct input *in)
{
	unsigned int what = take(in);
	int nid = (int)(take(in) % s->nr_nodes), r;

	switch (what % 9) {
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
		lv_reclaim_node(s->m, nid, 1 + take(in));
		break;
	case 5:
		if (s->memcgs[0]) /* NULL with memcg disabled */
			lv_memcg_reclaim(pick_memcg(s, in), 1 + take(in));
		break;
	case 6: {
		int order = (int)(take(in) % (LV_MAX_ORDER + 2)) - 1;

		r = lv_compact_node(s->m, nid, order);
		if (r < 0 || r > 1 || (order < 0 && r))
			fail("lv_compact_node(%d) returned %d", order, r);
		if (lv_compact_node(s->m, nid, LV_MAX_ORDER + 1) != -EINVAL)
			fail("lv_compact_node accepted a bad order");
		break;
	}
	case 7:
		op_swap(s, in);
		break;
	default:
		op_stats(s, in);
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

/*
 * reset - release every handle the input made and prove the machine empty: the next input
 * finds it as lv_machine_create() made it.
 */
static void reset(struct state *s)
{
	for (int i = 0; i < NR_FOLIOS; i++)
		if (s->folios[i].folio)
			drop_folio(&s->folios[i]);
	for (int i = 0; i < NR_MMS; i++)
		if (s->mms[i])
			lv_mm_destroy(s->mms[i]);
	for (int i = 0; i < NR_FILES; i++)
		if (s->files[i])
			lv_file_close(s->files[i]);
	while (s->disabled) {
		lv_lru_cache_enable(s->m);
		s->disabled--;
	}
	lv_lru_add_drain_all(s->m);
	if (s->swap_id[0] >= 0 && lv_swap_off(s->m, s->swap_id[0]))
		fail("swap device 0 could not be turned off with nothing mapped");
	if (s->swap_id[1] < 0) {
		machine_swap[s->setup] = lv_swap_on(s->m, swap_fd, SWAP_SIZE, 0);
		if (machine_swap[s->setup] < 0)
			fail("swap device 1 could not be turned on again");
	} else {
		struct lv_swap_info info;

		if (lv_swap_info(s->m, s->swap_id[1], &info) || info.used)
			fail("swap device 1: %zu slots used with nothing mapped", info.used);
		machine_swap[s->setup] = s->swap_id[1]; /* the input may have made it anew */
	}
	/* Children first: a memcg with nothing left must go. */
	for (int pass = 0; pass < NR_MEMCGS; pass++)
		for (int i = 1; i < NR_MEMCGS; i++)
			if (s->memcgs[i] && !memcg_has_children(s, s->memcgs[i])) {
				if (lv_memcg_remove(s->memcgs[i]))
					fail("removing an empty memcg at the end failed");
				s->memcgs[i] = NULL;
			}
	if (s->memcgs[0] && (lv_memcg_usage(s->memcgs[0]) || lv_memcg_swap_usage(s->memcgs[0])))
		fail("%zu pages, %zu swap slots still charged at the end",
		     lv_memcg_usage(s->memcgs[0]), lv_memcg_swap_usage(s->memcgs[0]));
	for (unsigned int nid = 0; nid < s->nr_nodes; nid++) {
		if (lv_node_stat(s->m, (int)nid, LV_NR_ISOLATED))
			fail("node %u: pages still isolated at the end", nid);
		if (lv_node_stat(s->m, (int)nid, LV_NR_CHARGED))
			fail("node %u: %llu pages not free at the end", nid,
			     (unsigned long long)lv_node_stat(s->m, (int)nid, LV_NR_CHARGED));
	}
	check(s, "at the end");
}

/* machine - the machine of configuration @setup, made at its first input. */
static struct lv_machine *machine(unsigned int setup)
{
	struct lv_config cfg;

	if (machines[setup])
		return machines[setup];
	lv_config_init(&cfg);
	cfg.nr_nodes = 1 + (setup & 1);
	cfg.node_mem_bytes = 4ul << 20;
	cfg.nr_cpu_slots = 2;
	cfg.no_kswapd = true;
	cfg.no_kcompactd = true;
	cfg.lock_design = (setup & 2) ? LV_LOCK_NODE : LV_LOCK_LRUVEC;
	cfg.memcg_disabled = setup & 4;
	cfg.batch_size = (setup & 8) ? 1 : 15;
	/* Half of each other choice caches large folios: 16 machines, one device each, leave
	 * room for the inputs' own under LV_MAX_SWAPFILES. */
	cfg.file_folio_order = __builtin_parity(setup) ? 2 : 0;
	machines[setup] = lv_machine_create(&cfg);
	if (!machines[setup])
		fail("lv_machine_create failed");
	machine_swap[setup] = lv_swap_on(machines[setup], swap_fd, SWAP_SIZE, 0);
	if (machine_swap[setup] < 0)
		fail("lv_swap_on of the machine's device failed: %d", machine_swap[setup]);
	return machines[setup];
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	real_fd = real_file();
	swap_fd = memfd_create("fuzz_ops_swap", MFD_CLOEXEC);
	if (swap_fd >= 0 && ftruncate(swap_fd, SWAP_SIZE)) {
		close(swap_fd);
		swap_fd = -1;
	}
	devnull = fopen("/dev/null", "w");
	if (!devnull)
		fail("cannot open /dev/null");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	struct state s = { 0 };
	unsigned int setup = take(&in) % NR_SETUPS;

	s.m = machine(setup);
	s.nr_nodes = lv_machine_config(s.m)->nr_nodes;
	s.memcg_disabled = lv_machine_config(s.m)->memcg_disabled;
	s.memcgs[0] = lv_memcg_root(s.m);
	s.setup = setup;
	s.swap_id[0] = -1;
	s.swap_id[1] = machine_swap[setup];

	for (unsigned int step = 1; in.left; step++) {
		unsigned int op = take(&in);

		if (op < 112)
			op_folio(&s, &in, op);
		else if (op < 136)
			op_memcg(&s, &in);
		else if (op < 168)
			op_file(&s, &in);
		else if (op < 224)
			op_mm(&s, &in);
		else
			op_machine(&s, &in);
		if (step % 16 == 0)
			check(&s, "during the run");
	}
	reset(&s);
	return 0;
}

#ifdef LV_FUZZ_REPLAY
/* Replay: each file named on the command line is one input, one TAP test. */
int main(int argc, char **argv)
{
	LLVMFuzzerInitialize(&argc, &argv);
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
	for (int k = 0; k < NR_SETUPS; k++)
		if (machines[k])
			lv_machine_destroy(machines[k]);
	return 0;
}
#endif
