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
 * direct and memcg limit reclaim; a thread takes a node below its low watermark in bursts,
 * and in one burst of four until it is dry (kswapd's wakeups, the node-scope reclaim drain). A
 * quarter of the operations use shared address spaces (faults, brk, mmap/munmap with splits,
 * private mappings of the sparse and the truncated file,
 * self-checking writes and reads, madvise COLD, FREE, DONTNEED and PAGEOUT with lazyfree reclaim,
 * migrate_pages, move_pages, page cache migration, nested lru_cache_disable storms) while a
 * thread destroys and recreates some of them: see "Anonymous memory" below. The LRU users
 * that broke the first per-memcg lock race all of it: direct compaction of nodes and of memcg
 * subtrees (orders -1, 4 and 9) with kcompactd compacting proactively, huge page faults in
 * regions with and without LV_MADV_HUGEPAGE and their splits (partial munmap and DONTNEED of
 * a huge region, lv_split_folio() of the table's large folios), and mlock, munlock,
 * mlockall, munlockall and locked mappings on the shared address spaces: see "Compaction,
 * huge pages and mlock" below. An opener thread makes the first of each of these happen from
 * a state set up for it, at the start of the run: see "The opener" below. Swap is on in every
 * run: one or two in-memory devices, address spaces that outgrow their memcgs' limits,
 * LV_MADV_PAGEOUT and reads that swap pages back in, swap limit changes, and a second device
 * turned off and on again, with the first swap-out, swap-in, read-ahead and swapoff made to
 * happen: see "Swap" below. Every run must take each of the racing paths: see "Required paths"
 * below.
 *
 * The lock watchdog (src/lock.c, the one internal piece used here) is armed for the whole run:
 * a lock held or waited for longer than --watchdog seconds (10 by default, far above any
 * legitimate hold even under TSan on two cores) is reported with its holder's and waiters'
 * call stacks, and the run ends with exit status 3, so that a deadlock fails the run with a
 * diagnosis instead of hanging it.
 *
 * Usage: torture [--seed N] [--duration S] [--threads T] [--lock lruvec|node|nomemcg]
 *                [--backend futex|mutex|spin|adaptive] [--disable sweep|rcu|rcu-expedited]
 *                [--batch B] [--containers C] [--slots S] [--folio-order N] [--wait S]
 *                [--protocol pin|v1] [--thp always|madvise|never]
 *                [--thp-defrag always|madvise|defer|never] [--watchdog S]
 *                [--swappiness 0..200] [--page-cluster 1..5] [--batch-large]
 *                [--scan-cost locked|vmstat] [--batch-policy arrival|sorted|per-lruvec]
 *                [--readahead PAGES]
 * Prints TAP. The run lasts --duration seconds, and longer if a path it requires has not run
 * by then (see "Required paths" below), up to --wait seconds more (60 by default).
 * --protocol v1 selects the broken first version (LV_PROTOCOL_V1): such a run is expected to
 * fail (tests/stress/torture-v1.sh).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lruvec.h"
/* The lock watchdog only: everything else goes through the public API. */
#include "lock.h"

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
	unsigned int folio_order; /* page cache folios of 2^order pages */
	double wait;		  /* longest extension of the run for a path yet to run */
	enum lv_protocol protocol;
	enum lv_thp_mode thp;
	enum lv_thp_defrag thp_defrag;
	double watchdog; /* the watchdog's bound in seconds; 0: not armed */
	unsigned int swappiness;
	unsigned int page_cluster; /* at least 1: swap-in reads ahead */
	bool batch_large;	   /* cfg.batch_large: large folios wait in the batches too */
	enum lv_scan_cost scan_cost;
	enum lv_batch_policy batch_policy; /* cfg.batch_policy */
	unsigned int readahead;		   /* cfg.readahead_pages */
} opt = {
	.seed = 1,
	.duration = 3.0,
	.threads = 8,
	.containers = 6,
	.batch = 31,
	.lock = "lruvec",
	.backend = LV_BACKEND_FUTEX,
	.disable = LV_DISABLE_SWEEP,
	.wait = 60.0,
	.protocol = LV_PROTOCOL_PIN,
	.thp = LV_THP_MADVISE,
	.thp_defrag = LV_THP_DEFRAG_MADVISE,
	.watchdog = 10.0,
	.swappiness = 60,
	.page_cluster = 3,
};

static struct lv_machine *machine;
static struct lv_memcg *containers[MAX_CONTAINERS];
static int nr_containers;
static struct lv_folio *_Atomic table[TABLE_SIZE];
static atomic_bool stop;
static atomic_ulong total_ops, move_ok, move_busy, move_nomem, isolate_ok, alloc_fail;
static atomic_ulong memcgs_removed;
static atomic_ulong truncations;	/* truncates that dropped cached pages (their drain ran) */
static atomic_ulong sparse_last;	/* offset of a recent read of the sparse file */
static atomic_ulong shadow_nodes_moved; /* listed on memcgs just before their removal */
static atomic_ulong charged_at_removal; /* pages the removals had to reparent */
static atomic_ulong unevictable_at_removal; /* ... of which mlocked */
static atomic_ulong totals_backwards;	    /* machine totals seen to shrink (see totals_check()) */
/*
 * A tenant whose limit is below a CPU batch, read through by every thread at times: its
 * charges can find all its pages queued in other CPUs' batches, and must drain them
 * (reclaim_drain) rather than fail. Set up once, written by no one after; removed at the end.
 */
#define TINY_PAGES 2
static struct lv_memcg *tiny;
static int nr_nodes = 2;
#define NODE_PAGES ((16ul << 20) / LV_PAGE_SIZE) /* of each node */
static atomic_ulong bytes_read, read_enomem;

/* Page cache files: sparse (bigger than memory), real (checked bytes), failing, truncated. */
#define SPARSE_BYTES (64ul << 20)
#define REAL_BYTES   (8ul << 20)
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

/* count_move - count what lv_folio_move_memcg() returned; anything unexpected is a bug. */
static void count_move(int err)
{
	if (err == 0)
		atomic_fetch_add(&move_ok, 1);
	else if (err == -EBUSY)
		atomic_fetch_add(&move_busy, 1);
	else if (err == -ENOMEM)
		atomic_fetch_add(&move_nomem, 1);
	else
		abort();
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
		/*
		 * Half the large folios are offered to the tiny tenant, whose whole limit is
		 * smaller: the charge must be refused, leaving the folio where it is while the
		 * others use it, however full the tenant is. The rest meet a limit when the
		 * tenant they go to happens to be full.
		 */
		bool never_fits = tiny && lv_folio_nr_pages(f) > TINY_PAGES && rnd(s) & 1;
		struct lv_memcg *to = never_fits ? tiny : pick_memcg(s);
		int err;

		if (!to)
			break;
		err = lv_folio_move_memcg(f, to);
		if (never_fits && err != -ENOMEM && err != -EBUSY) {
			fprintf(stderr, "# a move over the tiny tenant's limit returned %d\n", err);
			abort();
		}
		count_move(err);
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

	if (which == 0) {
		/*
		 * Readers of the sparse file often follow another's last read closely, as
		 * readtwice's pairs do: they meet on folios being zeroed page by page.
		 */
		if (rnd(s) & 1)
			off = (atomic_load(&sparse_last) + rnd(s) % (8 * 4096)) % SPARSE_BYTES;
		else
			atomic_store(&sparse_last, off);
	}
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
		fprintf(stderr, "# read(%u, %lu, %zu) returned %ld\n", which, (unsigned long)off,
			len, n);
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

/*
 * ---- Anonymous memory ------------------------------------------------------------------------
 *
 * NR_MMS shared address spaces, each used by every worker at once. Every 64-byte line written
 * holds a self-checking record (struct line): its own address, the address space's incarnation,
 * the writer, a generation and a checksum over the rest. A read line must be all zeros or a
 * valid record for exactly that address and incarnation, so any byte-level corruption (a torn
 * or misplaced migration copy, a stale frame, a page of another address space) is detected.
 *
 * Each address space has:
 *  - an arena of arena_pages pages, cut into one run of own_pages pages per worker: only the
 *    owner writes, frees (MADV_FREE), zaps (MADV_DONTNEED) or strictly verifies its run, and it
 *    keeps a model of every line (struct page_model), so a read must match it exactly, except
 *    for the lazyfree alternative: the lines not written since the last MADV_FREE may read as
 *    zeros instead, all of them together (reclaim took the page) — never other bytes, never
 *    part of them. A page on swap keeps its model: the access that cannot swap it back in
 *    fails and changes nothing. Anyone may read the arena (weak check: a valid record by the
 *    page's owner, or zeros), deactivate it, page it out or migrate it; nobody else may write
 *    or unmap it;
 *  - the brk heap and SCRATCH_SLOTS mmap regions (slot = address | pages, swapped atomically)
 *    that every worker writes, reads (weak check), madvises, grows, shrinks, unmaps in the
 *    middle and replaces; addresses of lv_mmap() are never reused within an address space, so
 *    a stale slot only gives -EFAULT. A quarter of the regions mapped are private mappings
 *    (lv_mmap_file()) of the sparse file or of the file being truncated, which nobody writes:
 *    a page not written reads the file's zeros; a write copies it (COW), and truncation
 *    unmaps the pages and copies past the end, which then read as -EFAULT, and as zeros once
 *    the file has grown back.
 * The last NR_CHURN_MMS address spaces are destroyed and recreated (new incarnation, memcg and
 * node) by mm_churner() while the others run; a pthread rwlock (workers read, the churner
 * writes) keeps lv_mm_destroy() from racing with other calls on the same address space, which
 * the API forbids. Migration (lv_migrate_pages, lv_move_pages, lv_file_migrate_pages) and nested
 * lv_lru_cache_disable() storms race with all of it.
 */
#define NR_MMS	      4
#define NR_CHURN_MMS  2
#define ARENA_TARGET  512 /* pages in an arena, shared out among the workers */
#define SCRATCH_SLOTS 4
#define SCRATCH_PAGES 16 /* largest scratch region */
#define HEAP_PAGES    32 /* writes stay below heap + HEAP_PAGES */
#define LINE_BYTES    64
#define PAGE_LINES    (LV_PAGE_SIZE / LINE_BYTES)
#define LINE_MAGIC    0x4c565243u
#define MOVE_MAX      16

struct line {
	uint64_t addr;	 /* the address this record was written to */
	uint32_t mm_id;	 /* incarnation of the address space */
	uint32_t gen;	 /* writer's generation, never 0 */
	uint32_t writer; /* worker index */
	uint32_t magic;
	uint64_t fill[4]; /* derived from all of the above */
	uint64_t sum;	  /* over the first 56 bytes */
};
_Static_assert(sizeof(struct line) == LINE_BYTES, "a record is one line");

static struct mm_slot {
	pthread_rwlock_t lock; /* read: any call on mm; write: lv_mm_destroy + lv_mm_create */
	struct lv_mm *mm;
	int index;				 /* in mms[]; -1: the opener's private one */
	uint32_t id;				 /* incarnation, unique in the run */
	uint64_t arena;				 /* arena_pages pages */
	uint64_t heap;				 /* start of the brk heap */
	bool churn;				 /* destroyed and recreated by mm_churner() */
	bool roam;				 /* preferred node changes during the run */
	_Atomic uint64_t scratch[SCRATCH_SLOTS]; /* address | pages, or 0 */
	/* mlock windows running on it (op_mlock()), and how many began or ended: see there */
	atomic_uint lock_windows, lock_gen;
} mms[NR_MMS];
static unsigned int own_pages, arena_pages;
static atomic_uint next_mm_id;

enum { PRESENT_NO, PRESENT_YES, PRESENT_MAYBE };

/* page_model - what the owner knows about one page of its run. */
struct page_model {
	uint32_t gen[PAGE_LINES]; /* generation of each line; 0: zeros */
	uint64_t mask;		  /* lines that may, all together, read as zeros instead */
	bool freeable;		  /* MADV_FREE since the last write: reclaim may still drop it */
	uint8_t present;	  /* PRESENT_* */
};

/* struct wstate - a worker's anonymous memory state (read by main after the join). */
struct wstate {
	unsigned int id;
	uint32_t gen;
	uint32_t incarnation[NR_MMS]; /* the mm_slot id the models below describe */
	struct page_model *pm;	      /* [NR_MMS][own_pages] */
};
static struct wstate *wstates;

static atomic_ulong anon_faults, anon_writes, anon_nomem, anon_lines, lazyfree_zero;
static atomic_ulong lazyfree_advised, mm_churns, mm_splits, brk_ops, mmap_ops, munmap_ops;
static atomic_ulong file_maps; /* scratch regions that are private mappings of a file */
static atomic_ulong mp_ok, mp_busy, mp_nomem, mp_noent, mp_fault, mig_calls, mig_left;
static atomic_ulong fmig_calls, fmig_left, storms;
/*
 * Swap (see "Swap" below): LV_MADV_PAGEOUT calls that returned 0 and the pages they covered;
 * reads that met a swapped-out page whose swap-in could not be charged or allocated (-ENOMEM,
 * as a fault that cannot be charged fails; a read of a page that is not there faults nothing).
 */
static atomic_ulong pageout_calls, pageout_pages, swapin_nomem;

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t line_sum(const struct line *l)
{
	uint64_t w[7], h = 0x6c72757665632d31ull;

	memcpy(w, l, sizeof(w));
	for (int i = 0; i < 7; i++)
		h = mix64(h ^ w[i]);
	return h;
}

static void line_make(struct line *l, uint64_t addr, uint32_t mm_id, uint32_t writer, uint32_t gen)
{
	uint64_t h = mix64(addr ^ ((uint64_t)mm_id << 40) ^ ((uint64_t)writer << 20) ^
			   ((uint64_t)gen * 0x9e3779b97f4a7c15ull));

	l->addr = addr;
	l->mm_id = mm_id;
	l->gen = gen;
	l->writer = writer;
	l->magic = LINE_MAGIC;
	for (int k = 0; k < 4; k++)
		l->fill[k] = h = mix64(h + (uint64_t)k);
	l->sum = line_sum(l);
}

/* line_check - 0: all zeros; 1: a valid record for @addr in incarnation @mm_id; -1: neither. */
static int line_check(const struct line *l, uint64_t addr, uint32_t mm_id)
{
	static const struct line zero;
	struct line want;

	if (!memcmp(l, &zero, sizeof(zero)))
		return 0;
	if (l->magic != LINE_MAGIC || l->addr != addr || l->mm_id != mm_id || !l->gen)
		return -1;
	line_make(&want, addr, mm_id, l->writer, l->gen);
	return memcmp(l, &want, sizeof(want)) ? -1 : 1;
}

static void anon_fail(const struct mm_slot *ms, uint64_t addr, const void *bytes, const char *fmt,
		      ...) __attribute__((format(printf, 4, 5), noreturn));
static void anon_fail(const struct mm_slot *ms, uint64_t addr, const void *bytes, const char *fmt,
		      ...)
{
	va_list ap;

	fprintf(stderr, "# anon: mm %d (incarnation %u), address %#lx: ", ms->index, ms->id,
		(unsigned long)addr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (bytes) {
		const unsigned char *b = bytes;

		fprintf(stderr, "# line:");
		for (int i = 0; i < LINE_BYTES; i++)
			fprintf(stderr, "%s%02x", i % 16 ? " " : "\n#   ", b[i]);
		fputc('\n', stderr);
	}
	abort();
}

static uint64_t page_addr(uint64_t addr, unsigned int page)
{
	return addr + (uint64_t)page * LV_PAGE_SIZE;
}

static atomic_ulong madvise_locked;

/* lock_mark - where @ms's mlock windows stand, before an madvise. */
static unsigned int lock_mark(struct mm_slot *ms)
{
	return atomic_load(&ms->lock_windows) ? 0 : atomic_load(&ms->lock_gen) << 1 | 1;
}

/*
 * locked_refusal - madvise(2) refuses DONTNEED, FREE and COLD on a locked region (-EINVAL).
 * Regions of the shared address spaces are locked only inside an mlock window (op_mlock()),
 * so an -EINVAL is accepted from a call that overlapped one: a window was open before it
 * (@mark 0) or after it, or one began or ended meanwhile.
 */
static bool locked_refusal(struct mm_slot *ms, unsigned int mark, int err)
{
	if (err != -EINVAL || (mark && !atomic_load(&ms->lock_windows) &&
			       (atomic_load(&ms->lock_gen) << 1 | 1) == mark))
		return false;
	atomic_fetch_add(&madvise_locked, 1);
	return true;
}

/* mm_setup - a new incarnation of slot @k: address space, arena, heap start, no scratch. */
static void mm_setup(unsigned int k, struct lv_memcg *memcg, int nid)
{
	struct mm_slot *ms = &mms[k];

	ms->mm = lv_mm_create(machine, memcg, nid);
	if (!ms->mm) {
		fprintf(stderr, "# lv_mm_create: %s\n", strerror(errno));
		abort();
	}
	ms->id = atomic_fetch_add(&next_mm_id, 1) + 1;
	if (lv_mmap(ms->mm, (size_t)arena_pages * LV_PAGE_SIZE - 100, &ms->arena) ||
	    lv_mm_brk(ms->mm, 0, &ms->heap))
		abort();
	for (int i = 0; i < SCRATCH_SLOTS; i++)
		atomic_store(&ms->scratch[i], 0);
}

/* own_sync - start the models of slot @k afresh if it was recreated since we last looked. */
static void own_sync(struct wstate *w, unsigned int k)
{
	if (w->incarnation[k] == mms[k].id)
		return;
	memset(&w->pm[k * own_pages], 0, own_pages * sizeof(*w->pm));
	w->incarnation[k] = mms[k].id;
}

static uint64_t own_addr(const struct wstate *w, unsigned int k, unsigned int i)
{
	return page_addr(mms[k].arena, w->id * own_pages + i);
}

/*
 * own_verify - read page @i of our run in slot @k and match it against its model, then narrow
 * the model to what was seen. Return: false if the read could not swap the page back in
 * (-ENOMEM: nothing was read, the model stands).
 */
static bool own_verify(struct wstate *w, unsigned int k, unsigned int i)
{
	struct mm_slot *ms = &mms[k];
	struct page_model *pm = &w->pm[k * own_pages + i];
	uint64_t addr = own_addr(w, k, i);
	struct line buf[PAGE_LINES];
	uint32_t seen[PAGE_LINES];
	bool any = false, mask_exact = true, mask_zero = true;
	int err = lv_mm_read(ms->mm, addr, buf, sizeof(buf));

	if (err == -ENOMEM) {
		atomic_fetch_add(&swapin_nomem, 1);
		return false;
	}
	if (err)
		anon_fail(ms, addr, NULL, "read of an arena page returned %d", err);
	for (unsigned int l = 0; l < PAGE_LINES; l++) {
		uint64_t la = addr + l * LINE_BYTES;
		int c = line_check(&buf[l], la, ms->id);
		uint32_t got = 0;

		if (c < 0)
			anon_fail(ms, la, &buf[l], "corrupt line (expected generation %u)",
				  pm->gen[l]);
		if (c > 0) {
			if (buf[l].writer != w->id)
				anon_fail(ms, la, &buf[l], "written by worker %u, owner is %u",
					  buf[l].writer, w->id);
			got = buf[l].gen;
			any = true;
		}
		seen[l] = got;
		if (pm->mask >> l & 1) {
			mask_exact &= got == pm->gen[l];
			mask_zero &= got == 0;
		} else if (got != pm->gen[l]) {
			anon_fail(ms, la, &buf[l], "line holds generation %u, expected %u", got,
				  pm->gen[l]);
		}
	}
	if (!mask_exact && !mask_zero) {
		fprintf(stderr, "# generations read (expected):");
		for (unsigned int l = 0; l < PAGE_LINES; l++)
			fprintf(stderr, "%s %u (%u)", l % 8 ? "" : "\n#  ", seen[l], pm->gen[l]);
		fprintf(stderr, "\n# the model: freeable %d, present %u\n", pm->freeable,
			pm->present);
		anon_fail(ms, addr, NULL,
			  "lazily freed page neither intact nor zero (lines %#llx may be zero)",
			  (unsigned long long)pm->mask);
	}
	if (!mask_exact) {
		/* Reclaim dropped it: the lines not written since MADV_FREE are zeros for good. */
		atomic_fetch_add(&lazyfree_zero, 1);
		for (unsigned int l = 0; l < PAGE_LINES; l++)
			if (pm->mask >> l & 1)
				pm->gen[l] = 0;
		pm->mask = 0;
	} else if (!pm->freeable) {
		pm->mask = 0; /* written since MADV_FREE and intact: reclaim keeps it */
	}
	/* A present page was faulted in by a write, which stored at least one record. */
	if (!any) {
		pm->present = PRESENT_NO;
		pm->freeable = false;
		pm->mask = 0;
	} else {
		pm->present = pm->freeable ? PRESENT_MAYBE : PRESENT_YES;
	}
	atomic_fetch_add(&anon_lines, PAGE_LINES);
	return true;
}

/* own_narrow - own_verify() of @n pages from @first. Return: false if one could not be read. */
static bool own_narrow(struct wstate *w, unsigned int k, unsigned int first, unsigned int n)
{
	for (unsigned int j = 0; j < n; j++)
		if (!own_verify(w, k, first + j))
			return false;
	return true;
}

/* own_write - write lines of page @i of our run (all of them if @full) with a new generation. */
static void own_write(struct wstate *w, uint64_t *s, unsigned int k, unsigned int i, bool full)
{
	struct mm_slot *ms = &mms[k];
	struct page_model *pm = &w->pm[k * own_pages + i];
	unsigned int first = full ? 0 : (unsigned int)(rnd(s) % PAGE_LINES);
	unsigned int n = full ? PAGE_LINES : 1 + (unsigned int)(rnd(s) % (PAGE_LINES - first));
	uint64_t addr = own_addr(w, k, i) + first * LINE_BYTES;
	uint64_t bits = n == 64 ? ~0ull : ((1ull << n) - 1) << first;
	struct line buf[PAGE_LINES];
	uint32_t gen = ++w->gen;
	int err;

	for (unsigned int l = 0; l < n; l++)
		line_make(&buf[l], addr + l * LINE_BYTES, ms->id, w->id, gen);
	err = lv_mm_write(ms->mm, addr, buf, n * LINE_BYTES);
	if (err == -ENOMEM) {
		/*
		 * Only a fault can fail, before it writes anything: a page that was not there
		 * (never written, zapped, or a lazyfree page that reclaim dropped), or one on
		 * swap, which keeps what it held. Either way the model stands.
		 */
		atomic_fetch_add(&anon_nomem, 1);
		return;
	}
	if (err)
		anon_fail(ms, addr, NULL, "write to the arena returned %d", err);
	if (pm->present == PRESENT_NO)
		atomic_fetch_add(&anon_faults, 1);
	atomic_fetch_add(&anon_writes, 1);
	for (unsigned int l = first; l < first + n; l++)
		pm->gen[l] = gen;
	/* Written, so dirty: reclaim keeps the page, so only lines not written since may still be
	 * 0. */
	pm->mask &= ~bits;
	pm->freeable = false;
	pm->present = PRESENT_YES;
}

/* own_move - move_pages on our own pages; without @move, check presence against the model. */
static void own_move(struct wstate *w, uint64_t *s, unsigned int k, unsigned int first,
		     unsigned int n, bool move)
{
	struct mm_slot *ms = &mms[k];
	uint64_t addrs[MOVE_MAX];
	int nodes[MOVE_MAX], status[MOVE_MAX];
	int err;

	for (unsigned int j = 0; j < n; j++) {
		addrs[j] = own_addr(w, k, first + j) + rnd(s) % LV_PAGE_SIZE;
		nodes[j] = (int)(rnd(s) % (unsigned)nr_nodes);
	}
	err = lv_move_pages(ms->mm, n, addrs, move ? nodes : NULL, status);
	if (err)
		anon_fail(ms, addrs[0], NULL, "move_pages returned %d", err);
	for (unsigned int j = 0; j < n; j++) {
		const struct page_model *pm = &w->pm[k * own_pages + first + j];
		int st = status[j];
		bool bad;

		/*
		 * -ENOENT: not there, or on swap (a page that holds records may be either).
		 * With --thp always a page never written may be there too, zeroed: the arena
		 * holds an aligned 2 MiB block, and another owner's fault mapped a huge page
		 * over all of it.
		 */
		if (st == -ENOENT)
			bad = false;
		else if (st >= 0)
			bad = (pm->present == PRESENT_NO && opt.thp != LV_THP_ALWAYS) ||
			      st >= nr_nodes || (move && st != nodes[j]);
		else
			bad = !move || (st != -EBUSY && st != -ENOMEM);
		if (bad)
			anon_fail(ms, addrs[j], NULL,
				  "move_pages status %d (target %d, present %d)", st,
				  move ? nodes[j] : -1, pm->present);
		if (move)
			atomic_fetch_add(st >= 0	 ? &mp_ok
					 : st == -EBUSY	 ? &mp_busy
					 : st == -ENOMEM ? &mp_nomem
							 : &mp_noent,
					 1);
	}
}

/* op_own - an operation of the owner on a run of its own pages in slot @k. */
static void op_own(struct wstate *w, uint64_t *s, unsigned int k)
{
	struct mm_slot *ms = &mms[k];
	unsigned int first = (unsigned int)(rnd(s) % own_pages);
	unsigned int left = own_pages - first;
	unsigned int n = 1 + (unsigned int)(rnd(s) % (left < 4 ? left : 4));
	uint64_t addr = own_addr(w, k, first);
	unsigned int mark;
	int err;

	own_sync(w, k);
	switch (rnd(s) % 22) {
	case 0 ... 8:
		for (unsigned int j = 0; j < n; j++)
			own_write(w, s, k, first + j, rnd(s) & 1);
		break;
	case 9 ... 12:
		for (unsigned int j = 0; j < n; j++)
			own_verify(w, k, first + j);
		break;
	case 13 ... 14:
		/*
		 * Narrow every model first: after this call a page is intact or zero. Not if a
		 * page on swap cannot be read back: its model may still allow lines to be zero
		 * apart from the rest.
		 */
		if (!own_narrow(w, k, first, n))
			break;
		mark = lock_mark(ms);
		err = lv_madvise(ms->mm, addr, n * LV_PAGE_SIZE, LV_MADV_FREE);
		/* Refused (locked): the model of a freed page allows the intact one too. */
		if (err && !locked_refusal(ms, mark, err))
			anon_fail(ms, addr, NULL, "MADV_FREE of the arena returned %d", err);
		for (unsigned int j = 0; j < n; j++) {
			struct page_model *pm = &w->pm[k * own_pages + first + j];

			if (pm->present == PRESENT_NO)
				continue;
			pm->mask = ~0ull;
			pm->freeable = true;
			pm->present = PRESENT_MAYBE;
		}
		atomic_fetch_add(&lazyfree_advised, n);
		break;
	case 15:
		/* Narrowed too: refused in part, it leaves each page intact or zero. */
		if (!own_narrow(w, k, first, n))
			break;
		mark = lock_mark(ms);
		err = lv_madvise(ms->mm, addr, n * LV_PAGE_SIZE, LV_MADV_DONTNEED);
		if (!err) {
			memset(&w->pm[k * own_pages + first], 0, n * sizeof(*w->pm));
			break;
		}
		if (!locked_refusal(ms, mark, err))
			anon_fail(ms, addr, NULL, "MADV_DONTNEED of the arena returned %d", err);
		/* Refused at a locked part: each page is either intact or all zeros. */
		for (unsigned int j = 0; j < n; j++) {
			struct page_model *pm = &w->pm[k * own_pages + first + j];

			if (pm->present == PRESENT_NO)
				continue;
			pm->mask = ~0ull;
			pm->freeable = false;
			pm->present = PRESENT_MAYBE;
		}
		break;
	case 16:
		mark = lock_mark(ms);
		err = lv_madvise(ms->mm, addr, n * LV_PAGE_SIZE, LV_MADV_COLD);
		if (err && !locked_refusal(ms, mark, err))
			anon_fail(ms, addr, NULL, "MADV_COLD of the arena returned %d", err);
		break;
	case 17:
		own_move(w, s, k, first, n, false);
		break;
	case 18 ... 19:
		/*
		 * Out to swap (a lazyfree page is freed instead, which its model allows); half
		 * the time read back at once, swapped in from the device or the swap cache.
		 */
		mark = lock_mark(ms);
		err = lv_madvise(ms->mm, addr, n * LV_PAGE_SIZE, LV_MADV_PAGEOUT);
		if (err && !locked_refusal(ms, mark, err))
			anon_fail(ms, addr, NULL, "MADV_PAGEOUT of the arena returned %d", err);
		if (!err) {
			atomic_fetch_add(&pageout_calls, 1);
			atomic_fetch_add(&pageout_pages, n);
		}
		if (rnd(s) & 1)
			for (unsigned int j = 0; j < n; j++)
				own_verify(w, k, first + j);
		break;
	default:
		if (opt.disable == LV_DISABLE_RCU && rnd(s) % 4)
			break; /* every move costs a grace period in rcu mode */
		own_move(w, s, k, first, n, true);
		for (unsigned int j = 0; j < n; j++)
			own_verify(w, k, first + j);
	}
}

/* scratch_get - the address and size of scratch slot @i, or false if it is empty. */
static bool scratch_get(struct mm_slot *ms, unsigned int i, uint64_t *addr, unsigned int *pages)
{
	uint64_t v = atomic_load(&ms->scratch[i]);

	*addr = v & ~(LV_PAGE_SIZE - 1);
	*pages = (unsigned int)(v & (LV_PAGE_SIZE - 1));
	return v != 0;
}

/*
 * pick_shared - a region anyone may write: the heap or a scratch region (@arena: or the arena,
 * for reads and COLD). Return: false if the slot picked is empty.
 */
static bool pick_shared(struct mm_slot *ms, uint64_t *s, bool arena, uint64_t *addr,
			unsigned int *pages, bool *is_arena)
{
	unsigned int r = (unsigned int)(rnd(s) % (arena ? 5 : 4));

	*is_arena = false;
	if (r == 0) {
		*addr = ms->heap;
		*pages = HEAP_PAGES;
		return true;
	}
	if (r == 4) {
		*is_arena = true;
		*addr = ms->arena;
		*pages = arena_pages;
		return true;
	}
	return scratch_get(ms, (unsigned int)(rnd(s) % SCRATCH_SLOTS), addr, pages);
}

/* weak_write - records at random lines of the heap or a scratch region (maybe gone). */
static void weak_write(struct wstate *w, uint64_t *s, struct mm_slot *ms)
{
	struct line buf[32];
	uint64_t addr;
	unsigned int pages, n = 1 + (unsigned int)(rnd(s) % 32);
	uint32_t gen = ++w->gen;
	bool is_arena;
	int err;

	if (!pick_shared(ms, s, false, &addr, &pages, &is_arena))
		return;
	addr += rnd(s) % (pages * PAGE_LINES) * LINE_BYTES;
	for (unsigned int l = 0; l < n; l++)
		line_make(&buf[l], addr + l * LINE_BYTES, ms->id, w->id, gen);
	err = lv_mm_write(ms->mm, addr, buf, n * LINE_BYTES);
	if (err && err != -EFAULT && err != -ENOMEM)
		anon_fail(ms, addr, NULL, "write returned %d", err);
	if (!err)
		atomic_fetch_add(&anon_writes, 1);
	else if (err == -ENOMEM)
		atomic_fetch_add(&anon_nomem, 1);
}

/* weak_check - every line zeros or a valid record; an arena line written by its owner. */
static void weak_check(struct mm_slot *ms, uint64_t addr, const struct line *buf, unsigned int n,
		       bool is_arena)
{
	for (unsigned int l = 0; l < n; l++) {
		uint64_t la = addr + l * LINE_BYTES;
		int c = line_check(&buf[l], la, ms->id);

		if (c < 0)
			anon_fail(ms, la, &buf[l], "corrupt line");
		if (c > 0 && is_arena &&
		    buf[l].writer != (unsigned int)((la - ms->arena) / LV_PAGE_SIZE / own_pages))
			anon_fail(ms, la, &buf[l], "arena line written by worker %u, not its owner",
				  buf[l].writer);
	}
	atomic_fetch_add(&anon_lines, n);
}

static void weak_read(uint64_t *s, struct mm_slot *ms)
{
	struct line buf[3 * PAGE_LINES];
	uint64_t addr;
	unsigned int pages, first, n;
	bool is_arena;
	int err;

	if (!pick_shared(ms, s, true, &addr, &pages, &is_arena))
		return;
	first = (unsigned int)(rnd(s) % (pages * PAGE_LINES));
	n = 1 + (unsigned int)(rnd(s) % (3 * PAGE_LINES));
	if (is_arena && n > pages * PAGE_LINES - first)
		n = pages * PAGE_LINES - first; /* the arena is always mapped: no -EFAULT */
	addr += first * LINE_BYTES;
	err = lv_mm_read(ms->mm, addr, buf, n * LINE_BYTES);
	if (err == -EFAULT && !is_arena)
		return;
	if (err == -ENOMEM) {
		atomic_fetch_add(&swapin_nomem, 1);
		return;
	}
	if (err)
		anon_fail(ms, addr, NULL, "read returned %d", err);
	weak_check(ms, addr, buf, n, is_arena);
}

/*
 * op_madvise_shared - any advice on the heap or scratch, COLD or PAGEOUT on the arena, and bad
 * calls; half the ranges paged out are read back at once (swap-ins).
 */
static void op_madvise_shared(uint64_t *s, struct mm_slot *ms)
{
	static const int advice[] = { LV_MADV_FREE, LV_MADV_DONTNEED, LV_MADV_COLD,
				      LV_MADV_PAGEOUT };
	uint64_t addr;
	unsigned int pages, first, n, mark;
	bool is_arena;
	int adv, err;

	if (rnd(s) % 16 == 0) {
		/* Bad advice, unaligned address: -EINVAL, nothing changes. */
		if (lv_madvise(ms->mm, ms->arena, LV_PAGE_SIZE, 3) != -EINVAL ||
		    lv_madvise(ms->mm, ms->arena + 8, LV_PAGE_SIZE, LV_MADV_DONTNEED) != -EINVAL)
			anon_fail(ms, ms->arena, NULL, "bad madvise accepted");
		return;
	}
	if (!pick_shared(ms, s, true, &addr, &pages, &is_arena))
		return;
	first = (unsigned int)(rnd(s) % pages);
	n = 1 + (unsigned int)(rnd(s) % (pages - first));
	adv = is_arena ? advice[2 + rnd(s) % 2] : advice[rnd(s) % 4];
	mark = lock_mark(ms);
	err = lv_madvise(ms->mm, page_addr(addr, first), n * LV_PAGE_SIZE, adv);
	/* -ENOMEM: part of the range is unmapped (heap shrunk, region cut meanwhile). */
	if (err && (err != -ENOMEM || is_arena) && !locked_refusal(ms, mark, err))
		anon_fail(ms, page_addr(addr, first), NULL, "madvise(%d) returned %d", adv, err);
	if (adv == LV_MADV_FREE)
		atomic_fetch_add(&lazyfree_advised, n);
	if (adv == LV_MADV_PAGEOUT && !err) {
		atomic_fetch_add(&pageout_calls, 1);
		atomic_fetch_add(&pageout_pages, n);
	}
	if (adv == LV_MADV_PAGEOUT && rnd(s) & 1) {
		struct line buf[PAGE_LINES];

		/* The first pages again, through a fault on their swap entries. */
		for (unsigned int p = first; p < first + n && p < first + 4; p++) {
			err = lv_mm_read(ms->mm, page_addr(addr, p), buf, sizeof(buf));
			if (err == -ENOMEM) {
				atomic_fetch_add(&swapin_nomem, 1);
				continue;
			}
			if (err == -EFAULT && !is_arena)
				break;
			if (err)
				anon_fail(ms, page_addr(addr, p), NULL,
					  "read after MADV_PAGEOUT returned %d", err);
			weak_check(ms, page_addr(addr, p), buf, PAGE_LINES, is_arena);
		}
	}
}

static void op_brk(uint64_t *s, struct mm_slot *ms)
{
	uint64_t cur, old;
	int64_t delta;
	int err;

	if (rnd(s) % 16 == 0) {
		if (lv_mm_brk(ms->mm, -(int64_t)(1 << 30), NULL) != -EINVAL ||
		    lv_mm_brk(ms->mm, (int64_t)65 << 30, NULL) != -ENOMEM)
			anon_fail(ms, ms->heap, NULL, "impossible brk accepted");
		return;
	}
	if (lv_mm_brk(ms->mm, 0, &cur))
		abort();
	if (cur < ms->heap)
		anon_fail(ms, cur, NULL, "brk below the heap start");
	/* Up to 8 pages, rounded away from zero; shrink beyond HEAP_PAGES (racily) */
	delta = (int64_t)(1 + rnd(s) % (8 * LV_PAGE_SIZE));
	if (cur - ms->heap + (uint64_t)delta > HEAP_PAGES * LV_PAGE_SIZE || rnd(s) % 3 == 0)
		delta = -delta;
	err = lv_mm_brk(ms->mm, delta, &old);
	/* -EINVAL: the heap is smaller than the cut (maybe shrunk by another thread meanwhile). */
	if (err && !(err == -EINVAL && delta < 0))
		anon_fail(ms, ms->heap, NULL, "brk(%ld) returned %d", (long)delta, err);
	if (old < ms->heap || (old & (LV_PAGE_SIZE - 1)))
		anon_fail(ms, old, NULL, "bad previous brk");
	atomic_fetch_add(&brk_ops, 1);
}

static void op_mmap(uint64_t *s, struct mm_slot *ms)
{
	unsigned int i = (unsigned int)(rnd(s) % SCRATCH_SLOTS), pages, np;
	uint64_t addr, naddr, old = atomic_load(&ms->scratch[i]);
	int err = 0;

	scratch_get(ms, i, &addr, &pages);
	switch (old ? rnd(s) % 8 : 0) {
	case 0:
	case 1:
		/* Map a new region (not a whole number of pages) and swap it in. */
		np = 1 + (unsigned int)(rnd(s) % SCRATCH_PAGES);
		if (rnd(s) % 4 == 0) {
			/*
			 * A private mapping of a sparse file, which nobody writes: a page not
			 * written here reads the file's zeros, as an anon page does. Readers,
			 * reclaim and truncation (of trunc_file) work on the file meanwhile.
			 */
			struct lv_file *f = rnd(s) & 1 ? sparse_file : trunc_file;
			uint64_t fpages =
				(f == sparse_file ? SPARSE_BYTES : 4 << 20) / LV_PAGE_SIZE;

			err = lv_mmap_file(ms->mm, f, rnd(s) % (fpages - np) * LV_PAGE_SIZE,
					   np * LV_PAGE_SIZE - rnd(s) % LV_PAGE_SIZE,
					   LV_MAP_PRIVATE, &naddr);
			if (!err)
				atomic_fetch_add(&file_maps, 1);
		} else {
			err = lv_mmap(ms->mm, np * LV_PAGE_SIZE - rnd(s) % LV_PAGE_SIZE, &naddr);
		}
		if (err == -ENOMEM)
			return;
		if (err || (naddr & (LV_PAGE_SIZE - 1)) || naddr <= ms->arena)
			anon_fail(ms, naddr, NULL, "lv_mmap returned %d", err);
		atomic_fetch_add(&mmap_ops, 1);
		if (!atomic_compare_exchange_strong(&ms->scratch[i], &old, naddr | np))
			old = naddr | np; /* lost the slot: unmap ours */
		if (old) {
			err = lv_munmap(ms->mm, old & ~(LV_PAGE_SIZE - 1),
					(old & (LV_PAGE_SIZE - 1)) * LV_PAGE_SIZE);
			atomic_fetch_add(&munmap_ops, 1);
		}
		break;
	case 2:
	case 3:
	case 4: {
		/* A hole in the middle: the region is split in two. */
		unsigned int a, b;

		if (pages < 3)
			return;
		a = 1 + (unsigned int)(rnd(s) % (pages - 2));
		b = a + 1 + (unsigned int)(rnd(s) % (pages - 1 - a));
		err = lv_munmap(ms->mm, page_addr(addr, a), (size_t)(b - a) * LV_PAGE_SIZE);
		atomic_fetch_add(&mm_splits, 1);
		break;
	}
	case 5:
		if (atomic_compare_exchange_strong(&ms->scratch[i], &old, 0)) {
			err = lv_munmap(ms->mm, addr, (size_t)pages * LV_PAGE_SIZE);
			atomic_fetch_add(&munmap_ops, 1);
		}
		break;
	case 6:
		/* From inside one region across its neighbours (a range over several regions). */
		err = lv_munmap(ms->mm, page_addr(addr, (unsigned int)(rnd(s) % pages)),
				(1 + rnd(s) % (3 * SCRATCH_PAGES)) * LV_PAGE_SIZE);
		atomic_fetch_add(&munmap_ops, 1);
		break;
	default:
		/* The heap moves only by brk; unaligned or empty ranges are refused. */
		err = lv_munmap(ms->mm, ms->heap, LV_PAGE_SIZE);
		if ((err != -EINVAL && err != 0) || /* 0: the heap is empty */
		    lv_munmap(ms->mm, addr + 1, LV_PAGE_SIZE) != -EINVAL ||
		    lv_munmap(ms->mm, addr, 0) != -EINVAL)
			anon_fail(ms, addr, NULL, "bad munmap accepted");
		err = 0;
	}
	if (err)
		anon_fail(ms, addr, NULL, "lv_munmap returned %d", err);
}

/* op_move_pages - move_pages over the arena, scratch, heap and never-mapped addresses. */
static void op_move_pages(uint64_t *s, struct mm_slot *ms)
{
	uint64_t addrs[MOVE_MAX];
	int nodes[MOVE_MAX], status[MOVE_MAX];
	unsigned int n = 1 + (unsigned int)(rnd(s) % MOVE_MAX);
	uint64_t arena_end = page_addr(ms->arena, arena_pages);
	bool move = rnd(s) % 3 != 0;
	int err;

	for (unsigned int j = 0; j < n; j++) {
		uint64_t addr;
		unsigned int pages;
		bool is_arena;

		switch (rnd(s) % 8) {
		case 0:
			/* Never mapped: page 0, the guard page after the arena, the top. */
			addr = (uint64_t[]){ 0, arena_end, UINT64_MAX }[rnd(s) % 3];
			break;
		default:
			if (!pick_shared(ms, s, true, &addr, &pages, &is_arena))
				addr = arena_end;
			else
				addr += rnd(s) % ((uint64_t)pages * LV_PAGE_SIZE);
		}
		addrs[j] = addr;
		nodes[j] = (int)(rnd(s) % (unsigned)nr_nodes);
	}
	if (move && rnd(s) % 32 == 0) {
		/* One bad node: -EINVAL, nothing moved. */
		nodes[rnd(s) % n] = rnd(s) & 1 ? -1 : nr_nodes;
		err = lv_move_pages(ms->mm, n, addrs, nodes, status);
		if (err != -EINVAL)
			anon_fail(ms, addrs[0], NULL, "move_pages to a bad node returned %d", err);
		return;
	}
	err = lv_move_pages(ms->mm, n, addrs, move ? nodes : NULL, status);
	if (err)
		anon_fail(ms, addrs[0], NULL, "move_pages returned %d", err);
	for (unsigned int j = 0; j < n; j++) {
		int st = status[j];
		bool in_arena = addrs[j] >= ms->arena && addrs[j] < arena_end;
		bool never = addrs[j] < ms->heap ||
			     (addrs[j] >= arena_end && addrs[j] < arena_end + LV_PAGE_SIZE) ||
			     addrs[j] == UINT64_MAX;

		if ((never && st != -EFAULT) || (in_arena && st == -EFAULT) ||
		    (st >= 0 && (st >= nr_nodes || (move && st != nodes[j]))) ||
		    (st < 0 && st != -EFAULT && st != -ENOENT &&
		     (!move || (st != -EBUSY && st != -ENOMEM))))
			anon_fail(ms, addrs[j], NULL, "move_pages status %d (target %d)", st,
				  move ? nodes[j] : -1);
		if (!move)
			continue;
		atomic_fetch_add(st >= 0	 ? &mp_ok
				 : st == -EBUSY	 ? &mp_busy
				 : st == -ENOMEM ? &mp_nomem
				 : st == -ENOENT ? &mp_noent
						 : &mp_fault,
				 1);
	}
}

static uint64_t pick_nodes(uint64_t *s)
{
	switch (rnd(s) % 4) {
	case 0:
		return ~0ull; /* nodes that do not exist are ignored */
	case 1:
		return 1;
	case 2:
		return 2;
	default:
		return 3;
	}
}

static void op_migrate(uint64_t *s, struct mm_slot *ms)
{
	int to = (int)(rnd(s) % (unsigned)nr_nodes);
	long left;

	if (rnd(s) % 32 == 0) {
		if (lv_migrate_pages(ms->mm, 3, nr_nodes) != -EINVAL ||
		    lv_migrate_pages(ms->mm, 3, -1) != -EINVAL)
			anon_fail(ms, 0, NULL, "migrate_pages to a bad node accepted");
		return;
	}
	left = lv_migrate_pages(ms->mm, pick_nodes(s), to);
	if (left < 0)
		anon_fail(ms, 0, NULL, "migrate_pages returned %ld", left);
	atomic_fetch_add(&mig_calls, 1);
	atomic_fetch_add(&mig_left, (unsigned long)left);
}

static void op_file_migrate(uint64_t *s)
{
	/* Mostly the byte-checked real file; the big sparse one rarely (it may fill memory). */
	struct lv_file *files[] = { real_file, real_file, trunc_file, bad_file, sparse_file };
	unsigned int which = (unsigned int)(rnd(s) % (rnd(s) % 8 ? 4 : 5));
	long left;

	if (rnd(s) % 32 == 0) {
		if (lv_file_migrate_pages(real_file, 3, nr_nodes) != -EINVAL)
			abort();
		return;
	}
	left = lv_file_migrate_pages(files[which], pick_nodes(s),
				     (int)(rnd(s) % (unsigned)nr_nodes));
	if (left < 0) {
		fprintf(stderr, "# lv_file_migrate_pages returned %ld\n", left);
		abort();
	}
	atomic_fetch_add(&fmig_calls, 1);
	atomic_fetch_add(&fmig_left, (unsigned long)left);
}

/*
 * ---- Compaction, huge pages and mlock -------------------------------------------------------
 *
 * The three LRU users that broke the first per-memcg lock, written against the public API; the
 * result of every call is checked.
 *  - A compactor thread compacts a node, then a memcg subtree, then a random node or subtree,
 *    at orders -1, 4 and 9, while kcompactd (cfg.no_kcompactd false) compacts proactively
 *    (proactiveness 90) and when an allocation of order > 0 fails or falls back (the
 *    presser's order-4 bursts, huge faults: with --thp-defrag defer every huge fault that
 *    finds no free block wakes it instead of compacting).
 *  - op_huge() maps a private region holding an aligned 2 MiB range in a shared address
 *    space, advises it (or not: cfg.thp always needs no advice), writes records on a few
 *    pages (the first write faults a huge page where one can be had, compacting for it),
 *    cuts it by munmap and DONTNEED (a huge folio is split at the cut), checks every record
 *    after each step and unmaps it; at most MAX_HUGE_ACTIVE at a time, so that they do not
 *    take the nodes' memory from the rest. op_split() splits large folios of the table
 *    (refused while another thread holds a speculative reference) and large folios a worker
 *    allocated for itself, which nobody else can reach and which must split.
 *  - op_mlock() opens an mlock window on a shared address space: mlockall (now, or now and
 *    later) or an mlock of a shared range (twice), a few ordinary operations meanwhile, then
 *    munlockall or munlocks in two parts; or a private locked mapping (LV_MAP_LOCKED) written,
 *    partly unlocked and unmapped; or calls that must be refused. Every window undoes its own
 *    locking, so regions are locked only while a window is open; an madvise that overlapped
 *    one may be refused as madvise(2) refuses locked regions (locked_refusal()).
 * The memcg churner also locks its short-lived address space and compacts its memcg's subtree
 * before the removal. All of it races memcg removal, charge moves, reclaim and the rest. The
 * first of each of these paths is made to happen by the opener (see "The opener" below).
 */
#define HUGE_PAGES	512 /* a 2 MiB folio */
#define HUGE_BYTES	((uint64_t)HUGE_PAGES * LV_PAGE_SIZE)
#define HUGE_MARKS	8 /* pages of a huge range that get a record: one per stripe of 64 */
#define MAX_HUGE_ACTIVE 2

static atomic_ulong compact_calls, compact_made, compact_memcg_calls;
static atomic_ulong huge_regions, huge_cuts, huge_nomem, split_ok, split_busy, split_private;
static atomic_ulong mlock_ok, munlock_ok, mlockall_ok, locked_maps, mlock_windows;
static atomic_int huge_active;
static atomic_bool opened; /* the opener is done with what needs memory: the presser may start */
static atomic_bool swap_opened; /* the swapper's first swapoff succeeded: see "Swap" below */

/*
 * private_mmap - a region of @len bytes (mapped with @flags) that no other thread cuts:
 * op_mmap() unmaps ranges reaching up to 3 * SCRATCH_PAGES pages past a scratch region, into
 * whatever was mapped above it, so the region is mapped behind a hole at least that long.
 * Return: as lv_mmap_flags().
 */
static int private_mmap(struct mm_slot *ms, uint64_t len, unsigned int flags, uint64_t *addr)
{
	const uint64_t hole = 4 * SCRATCH_PAGES * LV_PAGE_SIZE;
	uint64_t base;
	int err = lv_mmap_flags(ms->mm, hole + len, flags, &base);

	if (err)
		return err;
	err = lv_munmap(ms->mm, base, hole);
	if (err)
		anon_fail(ms, base, NULL, "munmap of the head of a region returned %d", err);
	*addr = base + hole;
	return 0;
}

/* mlock_checked - @err of an mlock call that should return 0 or @also (0: nothing else). */
static bool mlock_checked(struct mm_slot *ms, uint64_t addr, const char *call, int err, int also)
{
	if (err && err != also)
		anon_fail(ms, addr, NULL, "%s returned %d", call, err);
	return err == 0;
}

/*
 * huge_check - the records of a huge range: page marks[j] holds generation gens[j] (0: never
 * written, or zapped) unless it lies in [@hole, @hole_end), which must be unmapped. A page on
 * swap that cannot be swapped back in for want of memory is not checked.
 */
static void huge_check(struct mm_slot *ms, uint64_t huge, const unsigned int *marks,
		       const uint32_t *gens, uint64_t hole, uint64_t hole_end)
{
	for (unsigned int j = 0; j < HUGE_MARKS; j++) {
		uint64_t la = page_addr(huge, marks[j]);
		struct line l;
		int err = lv_mm_read(ms->mm, la, &l, sizeof(l)), c;

		if (la >= hole && la < hole_end) {
			if (err != -EFAULT)
				anon_fail(ms, la, NULL, "read in an unmapped cut returned %d", err);
			continue;
		}
		if (err == -ENOMEM) {
			atomic_fetch_add(&swapin_nomem, 1);
			continue;
		}
		if (err)
			anon_fail(ms, la, NULL, "read of a huge range returned %d", err);
		c = line_check(&l, la, ms->id);
		if (c < 0 || (gens[j] ? c == 0 || l.gen != gens[j] : c != 0))
			anon_fail(ms, la, &l, "huge range line holds generation %u, expected %u",
				  c > 0 ? l.gen : 0, gens[j]);
	}
}

/*
 * huge_write - a record of a new generation (from *@gen) on each marked page of a huge range;
 * the first write faults the huge page if one can be had. A page whose fault failed keeps what
 * it held: nothing if it was not there, its last record if it was on swap.
 */
static void huge_write(struct mm_slot *ms, uint64_t huge, const unsigned int *marks, uint32_t *gens,
		       uint32_t writer, uint32_t *gen)
{
	for (unsigned int j = 0; j < HUGE_MARKS; j++) {
		uint64_t la = page_addr(huge, marks[j]);
		uint32_t was = gens[j];
		struct line l;
		int err;

		gens[j] = ++*gen;
		line_make(&l, la, ms->id, writer, gens[j]);
		err = lv_mm_write(ms->mm, la, &l, sizeof(l));
		if (err == -ENOMEM) {
			gens[j] = was;
			atomic_fetch_add(&huge_nomem, 1);
		} else if (err) {
			anon_fail(ms, la, NULL, "write to a huge range returned %d", err);
		}
	}
}

static void op_huge(struct wstate *w, uint64_t *s, struct mm_slot *ms)
{
	unsigned int marks[HUGE_MARKS], cut, cut_pages, zap, zap_pages, mark;
	uint32_t gens[HUGE_MARKS] = { 0 };
	bool locked = rnd(s) % 4 == 0;
	uint64_t addr, huge, hole, hole_end;
	int advice = 0, err;

	if (atomic_fetch_add(&huge_active, 1) >= MAX_HUGE_ACTIVE)
		goto out;
	/* Twice the size: an aligned 2 MiB range lies inside, wherever the region starts. */
	err = private_mmap(ms, 2 * HUGE_BYTES, locked ? LV_MAP_LOCKED : 0, &addr);
	if (err == -ENOMEM)
		goto out;
	if (err)
		anon_fail(ms, 0, NULL, "mmap of a huge region returned %d", err);
	huge = (addr + HUGE_BYTES - 1) & ~(HUGE_BYTES - 1);
	if (opt.thp == LV_THP_MADVISE || rnd(s) % 2)
		advice = LV_MADV_HUGEPAGE;
	else if (rnd(s) % 4 == 0)
		advice = LV_MADV_NOHUGEPAGE;
	if (advice) {
		err = lv_madvise(ms->mm, huge, HUGE_BYTES, advice);
		if (err)
			anon_fail(ms, huge, NULL, "madvise(%d) of a huge range returned %d", advice,
				  err);
	}
	for (unsigned int j = 0; j < HUGE_MARKS; j++)
		marks[j] = j * (HUGE_PAGES / HUGE_MARKS) + (unsigned int)(rnd(s) % 64);
	huge_write(ms, huge, marks, gens, w->id, &w->gen);
	huge_check(ms, huge, marks, gens, 0, 0);
	if (rnd(s) & 1) {
		/*
		 * Out to swap, which takes single pages: a huge folio is split first. Read back
		 * by the check. Refused in a locked region, as madvise(2) refuses it.
		 */
		mark = lock_mark(ms);
		err = lv_madvise(ms->mm, huge, HUGE_BYTES, LV_MADV_PAGEOUT);
		if (err && !(err == -EINVAL && locked) && !locked_refusal(ms, mark, err))
			anon_fail(ms, huge, NULL, "MADV_PAGEOUT of a huge range returned %d", err);
		if (!err) {
			atomic_fetch_add(&pageout_calls, 1);
			atomic_fetch_add(&pageout_pages, HUGE_PAGES);
		}
		huge_check(ms, huge, marks, gens, 0, 0);
	}
	/* A hole inside the range: a huge folio there is split, the rest keeps its data. */
	cut = 1 + (unsigned int)(rnd(s) % (HUGE_PAGES - 2));
	cut_pages = 1 + (unsigned int)(rnd(s) % (HUGE_PAGES - 1 - cut));
	hole = page_addr(huge, cut);
	hole_end = page_addr(hole, cut_pages);
	err = lv_munmap(ms->mm, hole, (size_t)cut_pages * LV_PAGE_SIZE);
	if (err)
		anon_fail(ms, hole, NULL, "munmap inside a huge range returned %d", err);
	atomic_fetch_add(&huge_cuts, 1);
	huge_check(ms, huge, marks, gens, hole, hole_end);
	/*
	 * Zap a part below the hole (DONTNEED splits too). A locked region may refuse it: ours,
	 * or any region while an mlockall window is open.
	 */
	zap = (unsigned int)(rnd(s) % cut);
	zap_pages = 1 + (unsigned int)(rnd(s) % (cut - zap));
	mark = lock_mark(ms);
	err = lv_madvise(ms->mm, page_addr(huge, zap), (size_t)zap_pages * LV_PAGE_SIZE,
			 LV_MADV_DONTNEED);
	if (err && !(err == -EINVAL && locked) && !locked_refusal(ms, mark, err))
		anon_fail(ms, page_addr(huge, zap), NULL, "DONTNEED in a huge range returned %d",
			  err);
	if (!err)
		for (unsigned int j = 0; j < HUGE_MARKS; j++)
			if (marks[j] >= zap && marks[j] < zap + zap_pages)
				gens[j] = 0;
	huge_check(ms, huge, marks, gens, hole, hole_end);
	if (locked) {
		err = lv_munlock(ms->mm, huge, HUGE_BYTES);
		/* -ENOMEM: the hole. */
		if (mlock_checked(ms, huge, "munlock of a huge range", err, -ENOMEM))
			atomic_fetch_add(&munlock_ok, 1);
	}
	err = lv_munmap(ms->mm, addr, 2 * HUGE_BYTES);
	if (err)
		anon_fail(ms, addr, NULL, "munmap of a huge region returned %d", err);
	atomic_fetch_add(&huge_regions, 1);
out:
	atomic_fetch_sub(&huge_active, 1);
}

/*
 * split_private_checked - split @f, a large folio that only its caller has seen (never on a
 * list, never in the table): nothing can refuse it, and it keeps its first page only, which
 * the caller still holds.
 */
static void split_private_checked(struct lv_folio *f)
{
	unsigned int pages = lv_folio_nr_pages(f);
	int err = lv_split_folio(f);

	if (err || lv_folio_nr_pages(f) != 1) {
		fprintf(stderr,
			"# lv_split_folio of a private folio of %u pages returned %d (%u left)\n",
			pages, err, lv_folio_nr_pages(f));
		abort();
	}
}

/*
 * op_split - split a large folio of the table, holding the table's reference alone; or, one
 * time in four, a large folio allocated here that nobody else can reach.
 */
static void op_split(uint64_t *s)
{
	unsigned int i = (unsigned int)(rnd(s) % TABLE_SIZE);
	struct lv_folio *f, *expected = NULL;
	int err;

	if (rnd(s) % 4 == 0) {
		unsigned int order = 1 + (unsigned int)(rnd(s) % 4);

		f = lv_folio_alloc(machine, (int)(rnd(s) % (unsigned)nr_nodes), order,
				   pick_memcg(s), rnd(s) & 1 ? LV_FOLIO_ANON : 0);
		if (f) {
			split_private_checked(f);
			atomic_fetch_add(&split_private, 1);
			lv_folio_put(f);
		} else if (errno == ENOMEM || errno == ENOENT) {
			atomic_fetch_add(&alloc_fail, 1);
		} else {
			fprintf(stderr, "# alloc for a split: unexpected errno %d\n", errno);
			abort();
		}
		return;
	}
	f = atomic_exchange(&table[i], NULL);
	if (!f)
		return;
	if (lv_folio_nr_pages(f) > 1) {
		/* -EBUSY: another thread's speculative reference (get_entry()). */
		err = lv_split_folio(f);
		if (err == 0 && lv_folio_nr_pages(f) == 1) {
			atomic_fetch_add(&split_ok, 1);
		} else if (err == -EBUSY) {
			atomic_fetch_add(&split_busy, 1);
		} else {
			fprintf(stderr, "# lv_split_folio returned %d (%u pages left)\n", err,
				lv_folio_nr_pages(f));
			abort();
		}
	}
	if (!atomic_compare_exchange_strong(&table[i], &expected, f))
		lv_folio_put(f);
}

/* locked_map - a private locked mapping: written (its faults mlock), half unlocked, unmapped. */
static void locked_map(struct wstate *w, uint64_t *s, struct mm_slot *ms)
{
	unsigned int n = 1 + (unsigned int)(rnd(s) % SCRATCH_PAGES);
	struct line l[4];
	uint64_t addr;
	uint32_t gen = ++w->gen;
	int err = private_mmap(ms, n * LV_PAGE_SIZE, LV_MAP_LOCKED, &addr);

	if (err == -ENOMEM)
		return;
	if (err)
		anon_fail(ms, 0, NULL, "lv_mmap_flags(LV_MAP_LOCKED) returned %d", err);
	atomic_fetch_add(&locked_maps, 1);
	for (unsigned int p = 0; p < n; p++) {
		line_make(&l[0], page_addr(addr, p), ms->id, w->id, gen);
		err = lv_mm_write(ms->mm, page_addr(addr, p), &l[0], sizeof(l[0]));
		if (err && err != -ENOMEM)
			anon_fail(ms, page_addr(addr, p), NULL, "write returned %d", err);
	}
	err = lv_munlock(ms->mm, addr, (n + 1) / 2 * LV_PAGE_SIZE);
	if (mlock_checked(ms, addr, "munlock of a locked mapping", err, 0))
		atomic_fetch_add(&munlock_ok, 1);
	for (unsigned int p = 0; p < n; p++) {
		err = lv_mm_read(ms->mm, page_addr(addr, p), &l[1], sizeof(l[1]));
		/* On swap: unlocked above, or by another window's munlockall meanwhile. */
		if (err == -ENOMEM) {
			atomic_fetch_add(&swapin_nomem, 1);
			continue;
		}
		if (err || line_check(&l[1], page_addr(addr, p), ms->id) < 0 ||
		    (l[1].magic == LINE_MAGIC && l[1].gen != gen))
			anon_fail(ms, page_addr(addr, p), &l[1], "locked mapping read %d", err);
	}
	err = lv_munmap(ms->mm, addr, n * LV_PAGE_SIZE);
	if (err)
		anon_fail(ms, addr, NULL, "munmap of a locked mapping returned %d", err);
}

/* op_mlock - one mlock window on shared address space @k (see above). */
static void op_mlock(struct wstate *w, uint64_t *s, unsigned int k)
{
	struct mm_slot *ms = &mms[k];
	uint64_t addr;
	unsigned int pages, first, n;
	bool is_arena;
	int err;

	atomic_fetch_add(&ms->lock_windows, 1);
	atomic_fetch_add(&ms->lock_gen, 1);
	atomic_fetch_add(&mlock_windows, 1);
	switch (rnd(s) % 4) {
	case 0: {
		unsigned int flags = LV_MCL_CURRENT | (rnd(s) & 1 ? LV_MCL_FUTURE : 0);

		err = lv_mlockall(ms->mm, flags);
		if (mlock_checked(ms, 0, "mlockall", err, 0))
			atomic_fetch_add(&mlockall_ok, 1);
		op_own(w, s, k);
		weak_write(w, s, ms);
		if (rnd(s) & 1)
			op_mmap(s, ms); /* with LV_MCL_FUTURE: mapped locked */
		err = lv_munlockall(ms->mm);
		mlock_checked(ms, 0, "munlockall", err, 0);
		break;
	}
	case 1:
		if (!pick_shared(ms, s, true, &addr, &pages, &is_arena))
			break;
		first = (unsigned int)(rnd(s) % pages);
		n = 1 + (unsigned int)(rnd(s) % (pages - first));
		addr = page_addr(addr, first);
		/* -ENOMEM: part of the range was unmapped meanwhile (never the arena). */
		for (int again = 0; again < 2; again++) {
			err = lv_mlock(ms->mm, addr, (size_t)n * LV_PAGE_SIZE);
			if (mlock_checked(ms, addr, "mlock", err, is_arena ? 0 : -ENOMEM))
				atomic_fetch_add(&mlock_ok, 1);
		}
		weak_read(s, ms);
		op_own(w, s, k);
		err = lv_munlock(ms->mm, addr, (size_t)(n / 2) * LV_PAGE_SIZE);
		if (n / 2 && mlock_checked(ms, addr, "munlock", err, is_arena ? 0 : -ENOMEM))
			atomic_fetch_add(&munlock_ok, 1);
		err = lv_munlock(ms->mm, addr, (size_t)n * LV_PAGE_SIZE);
		if (mlock_checked(ms, addr, "munlock", err, is_arena ? 0 : -ENOMEM))
			atomic_fetch_add(&munlock_ok, 1);
		break;
	case 2:
		locked_map(w, s, ms);
		break;
	default:
		/* Refused, nothing changed: a range that wraps, page 0 (never mapped), bad flags.
		 */
		mlock_checked(ms, 0, "mlock of a wrapping range",
			      lv_mlock(ms->mm, UINT64_MAX - LV_PAGE_SIZE + 1, 2 * LV_PAGE_SIZE),
			      -EINVAL);
		mlock_checked(ms, 0, "mlock of page 0", lv_mlock(ms->mm, 0, LV_PAGE_SIZE), -ENOMEM);
		mlock_checked(ms, 0, "munlock of page 0", lv_munlock(ms->mm, 0, LV_PAGE_SIZE),
			      -ENOMEM);
		mlock_checked(ms, 0, "mlockall(0)", lv_mlockall(ms->mm, 0), -EINVAL);
		mlock_checked(ms, 0, "mlockall(8)", lv_mlockall(ms->mm, 8), -EINVAL);
	}
	atomic_fetch_add(&ms->lock_gen, 1);
	atomic_fetch_sub(&ms->lock_windows, 1);
}

/*
 * compactor - direct compaction of nodes and memcg subtrees, at every order kind: a node
 * first, then (with memcg) a memcg subtree, then either at random.
 */
static void *compactor(void *arg)
{
	static const int orders[] = { -1, 4, LV_MAX_ORDER };
	uint64_t s = opt.seed * 53 + (uintptr_t)arg;

	for (unsigned long round = 0; !atomic_load(&stop); round++) {
		int order = orders[rnd(&s) % 3], err;
		bool by_memcg = round == 1 || (round > 1 && rnd(&s) % 3 == 0);
		struct lv_memcg *memcg = by_memcg ? pick_memcg(&s) : NULL;
		struct timespec pause = { 0, (long)(2 + rnd(&s) % 8) * 1000 * 1000 };

		err = memcg ? lv_compact_memcg(memcg, order)
			    : lv_compact_node(machine, (int)(rnd(&s) % (unsigned)nr_nodes), order);
		if (err != 0 && err != 1) {
			fprintf(stderr, "# compaction (order %d%s) returned %d\n", order,
				memcg ? ", memcg" : "", err);
			abort();
		}
		atomic_fetch_add(memcg ? &compact_memcg_calls : &compact_calls, 1);
		atomic_fetch_add(&compact_made, (unsigned long)err);
		nanosleep(&pause, NULL);
	}
	return NULL;
}

/*
 * op_mm - one operation on shared address space @k (held for reading). Migration calls each
 * disable the LRU cache; in rcu mode that costs a grace period, so they are rarer there.
 */
static void op_mm(struct wstate *w, uint64_t *s, unsigned int k)
{
	struct mm_slot *ms = &mms[k];
	unsigned int r = (unsigned int)(rnd(s) % 1000);
	bool cheap = opt.disable == LV_DISABLE_RCU && rnd(s) % 4;

	if (r < 350) {
		op_own(w, s, k);
	} else if (r < 520) {
		weak_write(w, s, ms);
	} else if (r < 680) {
		weak_read(s, ms);
	} else if (r < 730) {
		op_madvise_shared(s, ms);
	} else if (r < 780) {
		op_brk(s, ms);
	} else if (r < 840) {
		op_mmap(s, ms);
	} else if (r < 900 && !cheap) {
		op_move_pages(s, ms);
	} else if (r < 915 && !cheap) {
		op_migrate(s, ms);
	} else if (r < 916 && !cheap) {
		op_file_migrate(s);
	} else if (r < 960) {
		if (ms->roam && lv_mm_set_node(ms->mm, (int)(rnd(s) % (unsigned)nr_nodes)))
			abort();
		if (lv_mm_set_node(ms->mm, nr_nodes) != -EINVAL)
			abort();
	} else if (r < 975 && !cheap) {
		/* A nested disable storm: faults, adds and a migration with batching off. */
		int depth = 1 + (int)(rnd(s) % 3);

		for (int d = 0; d < depth; d++)
			lv_lru_cache_disable(machine);
		op_own(w, s, k);
		weak_write(w, s, ms);
		op_alloc(s, pick_memcg(s));
		if (rnd(s) & 1)
			op_move_pages(s, ms);
		for (int d = 0; d < depth; d++)
			lv_lru_cache_enable(machine);
		atomic_fetch_add(&storms, 1);
	} else if (r < 982) {
		op_huge(w, s, ms);
	} else if (r < 988) {
		op_mlock(w, s, k);
	} else {
		weak_read(s, ms);
	}
}

/* mm_op - take slot @k for reading and run one operation on it. */
static void mm_op(struct wstate *w, uint64_t *s)
{
	unsigned int k = (unsigned int)(rnd(s) % NR_MMS);

	pthread_rwlock_rdlock(&mms[k].lock);
	op_mm(w, s, k);
	pthread_rwlock_unlock(&mms[k].lock);
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Set up before the threads start; unlimited, so a drain for its charges is a node's drain. */
static struct lv_memcg *presser;
static atomic_ulong press_bursts, press_dry;
static _Atomic double press_first; /* seconds the first burst took */

static uint64_t node_stat_sum(enum lv_stat_item item)
{
	uint64_t sum = 0;

	for (int nid = 0; nid < nr_nodes; nid++)
		sum += lv_node_stat(machine, nid, item);
	return sum;
}

/* node_drains - reclaim drains of a node's folios (without memcg, no limit ever drains). */
static uint64_t node_drains(void)
{
	return presser ? lv_memcg_stat(presser, LV_RECLAIM_DRAIN) : node_stat_sum(LV_RECLAIM_DRAIN);
}

/*
 * node_presser - take a node's free memory below its low watermark in one burst, so that the
 * crossing allocation asks kswapd for a pass while every other path runs (the readers alone
 * may never take a node that low, under TSan in particular); one burst in four goes on until
 * the node is dry: once its reclaimable page cache is gone, a reclaim pass frees nothing and
 * the allocation flushes the node's folios from every CPU's batches (the node-scope drain,
 * docs/protocol.md §5.4) before it fails. Well above the high watermark it takes 16 pages at
 * a time (a burst costs a few hundred allocations, not thousands: a slow run gets its drain
 * early), then single pages, so the allocations that cross the watermarks and find the node
 * dry are single pages, the kind every other allocator makes. The burst's folios are on no
 * list and are freed together; meanwhile the other threads meet -ENOMEM on that node, as
 * they do at their limits.
 *
 * The first burst is a dry one, and it keeps what it took until a node-scope drain has been
 * counted: an allocation can fail without draining (other threads' frees kept the slots'
 * page lists from being empty, or each reclaim pass found a page that another allocator took
 * first), but the presser only ever takes more, so the node's reclaimable memory runs out and
 * one of its passes frees nothing. A run thus sees the drain however slowly it runs, while the
 * workers race it; later dry bursts stop at their first failure. The first burst waits for
 * the opener, whose faults need memory (see "The opener" below).
 */
static void *node_presser(void *arg)
{
	static struct lv_folio *held[NODE_PAGES];
	uint64_t s = opt.seed * 131 + (uintptr_t)arg;
	const struct timespec pause = { 0, 10 * 1000 * 1000 }, retry = { 0, 1000 * 1000 };
	double start;

	while ((!atomic_load(&opened) || !atomic_load(&swap_opened)) && !atomic_load(&stop))
		nanosleep(&retry, NULL);
	start = now_seconds();
	for (unsigned long burst = 0; !atomic_load(&stop); burst++) {
		int nid = (int)(rnd(&s) % (unsigned)nr_nodes);
		bool dry = burst % 4 == 0;
		bool hold = dry && node_drains() == 0;
		uint64_t low = lv_node_stat(machine, nid, LV_WMARK_LOW);
		uint64_t bulk = lv_node_stat(machine, nid, LV_WMARK_HIGH) + 64;
		unsigned int order = 4;
		size_t n = 0;

		while (n < NODE_PAGES && !atomic_load(&stop)) {
			struct lv_folio *f;

			if (!dry && lv_node_stat(machine, nid, LV_NR_FREE) < low)
				break;
			if (order && lv_node_stat(machine, nid, LV_NR_FREE) < bulk)
				order = 0;
			f = lv_folio_alloc(machine, nid, order, presser, 0);
			if (!f && order && errno == ENOMEM) {
				order = 0; /* no free block that large: single pages from here on */
				continue;
			}
			if (f) {
				held[n++] = f;
				continue;
			}
			if (errno != ENOMEM) {
				fprintf(stderr, "# presser: unexpected errno %d\n", errno);
				abort();
			}
			if (hold && node_drains() == 0) {
				/* Others free meanwhile; what they free, we take next. */
				nanosleep(&retry, NULL);
				continue;
			}
			atomic_fetch_add(&press_dry, 1);
			break;
		}
		lv_folios_put(held, n);
		if (burst == 0)
			atomic_store(&press_first, now_seconds() - start);
		atomic_fetch_add(&press_bursts, 1);
		nanosleep(&pause, NULL);
	}
	return NULL;
}

/*
 * mm_churner - destroy and recreate the churnable address spaces (new incarnation, memcg and
 * preferred node) while the workers use the others — and these, between two churns.
 */
static void *mm_churner(void *arg)
{
	uint64_t s = opt.seed * 77 + (uintptr_t)arg;

	while (!atomic_load(&stop)) {
		unsigned int k = NR_MMS - NR_CHURN_MMS + (unsigned int)(rnd(&s) % NR_CHURN_MMS);

		usleep(2000 + (useconds_t)(rnd(&s) % 20000));
		pthread_rwlock_wrlock(&mms[k].lock);
		lv_mm_destroy(mms[k].mm);
		mm_setup(k, pick_memcg(&s), (int)(rnd(&s) % (unsigned)nr_nodes));
		pthread_rwlock_unlock(&mms[k].lock);
		atomic_fetch_add(&mm_churns, 1);
	}
	return NULL;
}

/*
 * ---- The opener ------------------------------------------------------------------------------
 *
 * Some of the paths above take their branch only in a particular state of the machine: a huge
 * page fault needs a free 2 MiB block on its node; kcompactd compacts only a node with the free
 * memory for the block it is asked for and no such block free; the migrate scanner isolates
 * only folios that nobody but their owner holds; a split of a table folio is refused while
 * another thread holds a speculative reference on it. The first of each is made to happen, in
 * every run, from a state set up for it:
 *  - before any thread starts, prepare_kcompactd() maps an address space on node FRAG_NID,
 *    faults in most of the node and zaps 15 pages of every 16: the node is mostly free, in
 *    pieces, with movable pages spread over it. An order-9 allocation that succeeds even so is
 *    split at once (lv_split_folio() of a folio nobody else has seen keeps its first page and
 *    frees the rest, so that block is free no more), until one fails: that failure wakes
 *    kcompactd on a node with the free memory for the block and none free, so it compacts
 *    (compact_daemon_wake, which prepare_kcompactd() waits for); its pass goes on while the
 *    threads start. It also takes an order-9 folio on node 0, for the opener to split;
 *  - the opener thread, started first, while every other thread races it except the presser,
 *    which waits for it (taking nodes dry is what would starve it): it maps a private 2 MiB
 *    range on node 0 with LV_MADV_HUGEPAGE and writes records on it, which faults a huge page
 *    (an rss of HUGE_PAGES says so; a fault that fell back is zapped, and node 0 is compacted
 *    for a block before the next try); it splits the order-9 folio, which must succeed and keep
 *    one page; it compacts node FRAG_NID whole while the fragmenting address space still maps
 *    its pages (isolated by its scanner, or by kcompactd's), then destroys that address space
 *    under kcompactd's pass; it mlocks the huge range twice and munlocks it in two parts until
 *    pages were counted as mlocked and as munlocked (a munlock that finds a page isolated
 *    leaves it stranded instead), then mlockall and munlockall; it migrates the range to node
 *    FRAG_NID (the huge page moves whole, or is split when no block is free there), cuts a hole
 *    in it and zaps a part below the hole (splits, if it is still huge), checking every record
 *    after each step; and destroys its address space.
 * With --thp never the fault is a small page's and is not retried.
 */
#define FRAG_NID 1

static struct lv_mm *frag_mm;	      /* prepare_kcompactd()'s, destroyed by the opener */
static struct lv_folio *private_huge; /* an order-9 folio only the opener sees */
static atomic_ulong opener_tries;     /* huge page faults it made until one mapped a huge page */
static struct mm_slot opener_ms = { .index = -1 };

/*
 * prepare_kcompactd - the fragmented node and the kcompactd wakeup (see above), and the
 * opener's order-9 folio. Called before any other thread of the test starts.
 * Return: false if kcompactd did not compact within --wait seconds (the required path then
 * says so).
 */
static bool prepare_kcompactd(void)
{
	const struct timespec poll = { 0, 1000 * 1000 };
	uint64_t free = lv_node_stat(machine, FRAG_NID, LV_NR_FREE);
	uint64_t high = lv_node_stat(machine, FRAG_NID, LV_WMARK_HIGH);
	uint64_t wakes = lv_node_stat(machine, FRAG_NID, LV_COMPACT_DAEMON_WAKE);
	uint64_t pages = free - 2 * high, addr;
	struct lv_folio *held[NODE_PAGES >> LV_MAX_ORDER];
	unsigned int n = 0;
	double deadline;
	int err;

	frag_mm = lv_mm_create(machine, NULL, FRAG_NID);
	if (!frag_mm || lv_mmap(frag_mm, pages * LV_PAGE_SIZE, &addr))
		abort();
	err = lv_mm_memset(frag_mm, addr, 0x6b, pages * LV_PAGE_SIZE);
	if (err) {
		fprintf(stderr, "# faulting in the fragmenting address space returned %d\n", err);
		abort();
	}
	for (uint64_t p = 0; p + 1 < pages; p += 16) {
		uint64_t zap = pages - p - 1 < 15 ? pages - p - 1 : 15;

		if (lv_madvise(frag_mm, page_addr(addr, (unsigned int)p + 1), zap * LV_PAGE_SIZE,
			       LV_MADV_DONTNEED))
			abort();
	}
	lv_lru_add_drain_all(machine);
	for (;;) {
		struct lv_folio *f = lv_folio_alloc(machine, FRAG_NID, LV_MAX_ORDER, NULL, 0);

		if (!f)
			break;
		if (n == sizeof(held) / sizeof(held[0]))
			abort(); /* more free blocks than the node has */
		split_private_checked(f);
		held[n++] = f;
	}
	if (errno != ENOMEM)
		abort();
	deadline = now_seconds() + (opt.wait > 1 ? opt.wait : 1);
	while (lv_node_stat(machine, FRAG_NID, LV_COMPACT_DAEMON_WAKE) == wakes &&
	       now_seconds() < deadline)
		nanosleep(&poll, NULL);
	lv_folios_put(held, n);
	private_huge = lv_folio_alloc(machine, 0, LV_MAX_ORDER, NULL, 0);
	if (!private_huge)
		abort(); /* node 0 is empty */
	return lv_node_stat(machine, FRAG_NID, LV_COMPACT_DAEMON_WAKE) != wakes;
}

/* opener_fault_huge - the opener's huge page fault at @huge, retried until it maps one. */
static void opener_fault_huge(struct mm_slot *ms, uint64_t huge, const unsigned int *marks,
			      uint32_t *gens, uint32_t *gen)
{
	const struct timespec retry = { 0, 1000 * 1000 };
	int err;

	for (;;) {
		atomic_fetch_add(&opener_tries, 1);
		huge_write(ms, huge, marks, gens, (uint32_t)opt.threads, gen);
		if (opt.thp == LV_THP_NEVER || lv_mm_rss(ms->mm) >= HUGE_PAGES ||
		    atomic_load(&stop))
			return;
		err = lv_madvise(ms->mm, huge, HUGE_BYTES, LV_MADV_DONTNEED);
		if (err)
			anon_fail(ms, huge, NULL, "DONTNEED of a fallen back range returned %d",
				  err);
		memset(gens, 0, HUGE_MARKS * sizeof(*gens));
		err = lv_compact_node(machine, 0, LV_MAX_ORDER);
		if (err != 0 && err != 1) {
			fprintf(stderr, "# compaction of node 0 for a huge page returned %d\n",
				err);
			abort();
		}
		atomic_fetch_add(&compact_calls, 1);
		atomic_fetch_add(&compact_made, (unsigned long)err);
		nanosleep(&retry, NULL);
	}
}

/* opener_mlock - lock and unlock the huge range until pages were mlocked and munlocked. */
static void opener_mlock(struct mm_slot *ms, uint64_t huge, const unsigned int *marks,
			 uint32_t *gens, uint32_t *gen)
{
	const struct timespec retry = { 0, 1000 * 1000 };

	for (;;) {
		/* Pages to lock: a fault may have failed for want of memory. */
		if (!lv_mm_rss(ms->mm))
			huge_write(ms, huge, marks, gens, (uint32_t)opt.threads, gen);
		for (int again = 0; again < 2; again++)
			if (mlock_checked(ms, huge, "the opener's mlock",
					  lv_mlock(ms->mm, huge, HUGE_BYTES), 0))
				atomic_fetch_add(&mlock_ok, 1);
		if (mlock_checked(ms, huge, "the opener's munlock",
				  lv_munlock(ms->mm, huge, HUGE_BYTES / 2), 0))
			atomic_fetch_add(&munlock_ok, 1);
		if (mlock_checked(ms, huge, "the opener's munlock",
				  lv_munlock(ms->mm, huge, HUGE_BYTES), 0))
			atomic_fetch_add(&munlock_ok, 1);
		if ((node_stat_sum(LV_UNEVICTABLE_PGS_MLOCKED) &&
		     node_stat_sum(LV_UNEVICTABLE_PGS_MUNLOCKED)) ||
		    atomic_load(&stop))
			break;
		nanosleep(&retry, NULL);
	}
	if (mlock_checked(ms, 0, "the opener's mlockall",
			  lv_mlockall(ms->mm, LV_MCL_CURRENT | LV_MCL_FUTURE), 0))
		atomic_fetch_add(&mlockall_ok, 1);
	mlock_checked(ms, 0, "the opener's munlockall", lv_munlockall(ms->mm), 0);
}

static void *opener(void *arg)
{
	struct mm_slot *ms = &opener_ms;
	uint64_t s = opt.seed * 97 + (uintptr_t)arg, addr, huge, hole, hole_end;
	unsigned int marks[HUGE_MARKS], cut, cut_pages, zap, zap_pages;
	uint32_t gens[HUGE_MARKS] = { 0 }, gen = 0;
	long left;
	int err;

	ms->mm = lv_mm_create(machine, nr_containers ? containers[0] : NULL, 0);
	if (!ms->mm)
		abort();
	ms->id = atomic_fetch_add(&next_mm_id, 1) + 1;
	/* Twice the size: an aligned 2 MiB range lies inside. */
	err = lv_mmap(ms->mm, 2 * HUGE_BYTES, &addr);
	if (err)
		anon_fail(ms, 0, NULL, "mmap of the opener's region returned %d", err);
	huge = (addr + HUGE_BYTES - 1) & ~(HUGE_BYTES - 1);
	err = lv_madvise(ms->mm, huge, HUGE_BYTES, LV_MADV_HUGEPAGE);
	if (err)
		anon_fail(ms, huge, NULL, "MADV_HUGEPAGE of the opener's range returned %d", err);
	for (unsigned int j = 0; j < HUGE_MARKS; j++)
		marks[j] = j * (HUGE_PAGES / HUGE_MARKS) + (unsigned int)(rnd(&s) % 64);
	opener_fault_huge(ms, huge, marks, gens, &gen);
	huge_check(ms, huge, marks, gens, 0, 0);

	split_private_checked(private_huge);
	atomic_fetch_add(&split_private, 1);
	lv_folio_put(private_huge);
	private_huge = NULL;

	err = lv_compact_node(machine, FRAG_NID, -1);
	if (err) {
		fprintf(stderr, "# compaction of the fragmented node returned %d\n", err);
		abort();
	}
	atomic_fetch_add(&compact_calls, 1);
	lv_mm_destroy(frag_mm);
	frag_mm = NULL;

	opener_mlock(ms, huge, marks, gens, &gen);
	huge_check(ms, huge, marks, gens, 0, 0);
	atomic_store(&opened, true);

	left = lv_migrate_pages(ms->mm, 1ull << 0, FRAG_NID);
	if (left < 0)
		anon_fail(ms, huge, NULL, "migrate_pages of the opener's range returned %ld", left);
	atomic_fetch_add(&mig_calls, 1);
	atomic_fetch_add(&mig_left, (unsigned long)left);
	huge_check(ms, huge, marks, gens, 0, 0);
	cut = 1 + (unsigned int)(rnd(&s) % (HUGE_PAGES - 2));
	cut_pages = 1 + (unsigned int)(rnd(&s) % (HUGE_PAGES - 1 - cut));
	hole = page_addr(huge, cut);
	hole_end = page_addr(hole, cut_pages);
	err = lv_munmap(ms->mm, hole, (size_t)cut_pages * LV_PAGE_SIZE);
	if (err)
		anon_fail(ms, hole, NULL, "munmap inside the opener's range returned %d", err);
	atomic_fetch_add(&huge_cuts, 1);
	huge_check(ms, huge, marks, gens, hole, hole_end);
	zap = (unsigned int)(rnd(&s) % cut);
	zap_pages = 1 + (unsigned int)(rnd(&s) % (cut - zap));
	err = lv_madvise(ms->mm, page_addr(huge, zap), (size_t)zap_pages * LV_PAGE_SIZE,
			 LV_MADV_DONTNEED);
	if (err)
		anon_fail(ms, huge, NULL, "DONTNEED in the opener's range returned %d", err);
	for (unsigned int j = 0; j < HUGE_MARKS; j++)
		if (marks[j] >= zap && marks[j] < zap + zap_pages)
			gens[j] = 0;
	huge_check(ms, huge, marks, gens, hole, hole_end);
	lv_mm_destroy(ms->mm);
	ms->mm = NULL;
	return NULL;
}

/*
 * ---- Swap ------------------------------------------------------------------------------------
 *
 * Every run swaps, in every configuration. Two in-memory devices: the first (SWAP1_BYTES at
 * SWAP1_PRIO) is on all run long and has room for every page the address spaces hold; the
 * second (SWAP2_BYTES, two clusters, so that it fills up) is on from the start in two seeds of
 * three, above or below the first's priority, and the swapper thread turns it off and on again
 * (at a priority above, equal to or below the first's). Anonymous memory outgrows its memcgs:
 * the two shared address spaces that live all run long are in c3 and c1, whose limits are
 * below what their arenas, heaps and scratch regions hold, so the limit reclaim of their own
 * faults swaps their pages out while their owners write and check them; without memcg the
 * presser's dry bursts make each node's reclaim swap from the node's lists. Workers page out
 * ranges of the arenas, heaps, scratch and huge regions (LV_MADV_PAGEOUT; a huge page is split
 * to be swapped) and read them back at once or later (swap-ins, read-ahead and its hits), and
 * every other read, write, madvise, migration, munmap and mm destroy may meet a page on swap:
 * the records and the owners' models hold across it, and an access whose page cannot be
 * swapped back in fails with -ENOMEM and changes nothing. The memcg churner's short-lived
 * address space is paged out before its destroy half the time. The swapper changes memcgs'
 * swap limits (0, a few slots, more, none) and swappiness, pages out and reads back a range of
 * its own whose every line it checks, turns the second device off (-ENOMEM when memory cannot
 * hold its pages: counted, the device stays on) and on again, and makes calls that must be
 * refused.
 *
 * The first of each swap path is made to happen. Before any thread starts, prepare_swap()
 * writes SWAP_PAGES pages into the swapper's address space (in a memcg no limit touches), pages
 * them out until swap-outs are counted, and reads them back one by one from the first until
 * swap-ins and read-ahead are counted (cfg.page_cluster is at least 1, so a fault also reads
 * the slots around its own, which the range paged out in address order fills), checking every
 * line: the machine swaps before the first worker runs. The swapper, started with the opener,
 * then puts the second device above the first (turning it off first if it was on lower), pages
 * its range out until the device holds pages, and turns it off, retrying until a swapoff
 * succeeds; its range is checked after. Until then nobody limits swap, and the presser, whose
 * dry nodes would fail the swapoff's allocations, waits. At the end, with every thread gone,
 * the swap limits are lifted (the final reads swap pages in, limit reclaim swapping others
 * out), swap accounting is checked at rest, and once everything is released both devices must
 * turn off with nothing left charged.
 */
#define SWAP1_BYTES (32ul << 20)
#define SWAP1_PRIO  0
#define SWAP2_BYTES (2 * HUGE_BYTES) /* two clusters of 512 slots */
#define SWAP_PAGES  64		     /* the swapper's range */
#define SWAP_WRITER 0xffffu	     /* the writer field of the swapper's records */

static int swap1_id = -1;
/* -1 while off. Set by main before the threads start, then by the swapper only. */
static int swap2_id = -1, swap2_prio;
static struct lv_memcg *swap_memcg; /* the swapper's address space's memcg, never limited */
static struct mm_slot swap_ms = { .index = -2 };
static uint64_t swap_base;			 /* the swapper's range */
static uint32_t swap_gens[SWAP_PAGES], swap_gen; /* what each of its pages holds; 0: zeros */
static atomic_ulong swapoff_ok, swapoff_nomem, swapoff_pages, swapon_ok, swap_max_sets;
static atomic_ulong swappiness_sets, swap_checks;

/* swap_fill - records of generation @gen on every line of page @p of the swapper's range. */
static int swap_fill(unsigned int p, uint32_t gen)
{
	struct line buf[PAGE_LINES];
	uint64_t addr = page_addr(swap_base, p);

	for (unsigned int l = 0; l < PAGE_LINES; l++)
		line_make(&buf[l], addr + l * LINE_BYTES, swap_ms.id, SWAP_WRITER, gen);
	return lv_mm_write(swap_ms.mm, addr, buf, sizeof(buf));
}

/* swap_rewrite - page @p of the swapper's range gets a new generation (unless on swap, and
 * memory cannot take it back: then it keeps the old one). */
static void swap_rewrite(unsigned int p)
{
	uint32_t gen = ++swap_gen;
	int err = swap_fill(p, gen);

	if (err == -ENOMEM) {
		atomic_fetch_add(&anon_nomem, 1);
		return;
	}
	if (err)
		anon_fail(&swap_ms, page_addr(swap_base, p), NULL,
			  "write to the swapper's range returned %d", err);
	swap_gens[p] = gen;
}

/*
 * swap_verify - page @p of the swapper's range holds generation swap_gens[p] on every line.
 * Return: false if it is on swap and could not be swapped back in (-ENOMEM).
 */
static bool swap_verify(unsigned int p)
{
	struct line buf[PAGE_LINES];
	uint64_t addr = page_addr(swap_base, p);
	int err = lv_mm_read(swap_ms.mm, addr, buf, sizeof(buf));

	if (err == -ENOMEM) {
		atomic_fetch_add(&swapin_nomem, 1);
		return false;
	}
	if (err)
		anon_fail(&swap_ms, addr, NULL, "read of the swapper's range returned %d", err);
	for (unsigned int l = 0; l < PAGE_LINES; l++) {
		uint64_t la = addr + l * LINE_BYTES;
		int c = line_check(&buf[l], la, swap_ms.id);

		if (c != 1 || buf[l].gen != swap_gens[p] || buf[l].writer != SWAP_WRITER)
			anon_fail(&swap_ms, la, &buf[l],
				  "the swapper's line holds generation %u, expected %u",
				  c > 0 ? buf[l].gen : 0, swap_gens[p]);
	}
	atomic_fetch_add(&anon_lines, PAGE_LINES);
	return true;
}

/*
 * swap_verify_all - every page of the swapper's range, each retried while it cannot be swapped
 * back in, until @deadline. Return: false if one still could not be then.
 */
static bool swap_verify_all(double deadline)
{
	const struct timespec retry = { 0, 1000 * 1000 };

	for (unsigned int p = 0; p < SWAP_PAGES; p++) {
		while (!swap_verify(p)) {
			if (now_seconds() > deadline)
				return false;
			nanosleep(&retry, NULL);
		}
	}
	return true;
}

/* swap_pageout - LV_MADV_PAGEOUT of @n pages of the swapper's range from page @first. */
static void swap_pageout(unsigned int first, unsigned int n)
{
	int err = lv_madvise(swap_ms.mm, page_addr(swap_base, first), n * LV_PAGE_SIZE,
			     LV_MADV_PAGEOUT);

	if (err)
		anon_fail(&swap_ms, page_addr(swap_base, first), NULL,
			  "MADV_PAGEOUT of the swapper's range returned %d", err);
	atomic_fetch_add(&pageout_calls, 1);
	atomic_fetch_add(&pageout_pages, n);
}

/*
 * prepare_swap - the swapper's range, swapped out and back in before any other thread of the
 * test starts (see above). Return: false if the swap-outs, swap-ins and read-ahead were not
 * all counted within --wait seconds (the required paths then say which).
 */
static bool prepare_swap(void)
{
	const struct timespec retry = { 0, 1000 * 1000 };
	double deadline = now_seconds() + (opt.wait > 1 ? opt.wait : 1);
	/* kswapd may have swapped already (prepare_kcompactd() filled a node): count from here. */
	uint64_t out = node_stat_sum(LV_PSWPOUT), in = node_stat_sum(LV_PSWPIN);
	uint64_t ahead = node_stat_sum(LV_SWAP_RA) + node_stat_sum(LV_SWAP_RA_HIT);
	bool done = false;

	swap_ms.mm = lv_mm_create(machine, swap_memcg, 0);
	if (!swap_ms.mm)
		abort();
	swap_ms.id = atomic_fetch_add(&next_mm_id, 1) + 1;
	if (lv_mmap(swap_ms.mm, SWAP_PAGES * LV_PAGE_SIZE, &swap_base))
		abort();
	for (unsigned int p = 0; p < SWAP_PAGES; p++) {
		int err = swap_fill(p, ++swap_gen);

		if (err)
			anon_fail(&swap_ms, page_addr(swap_base, p), NULL,
				  "write to the swapper's range returned %d", err);
		swap_gens[p] = swap_gen;
	}
	/* Paged out from the lists: no CPU's batch may hold them, kswapd may isolate some. */
	for (;;) {
		lv_lru_add_drain_all(machine);
		swap_pageout(0, SWAP_PAGES);
		if (node_stat_sum(LV_PSWPOUT) > out || now_seconds() > deadline)
			break;
		nanosleep(&retry, NULL);
	}
	while (now_seconds() < deadline) {
		/* From the first page: faults that walk the slots read the next ones ahead. */
		if (!swap_verify_all(deadline))
			break;
		done = node_stat_sum(LV_PSWPOUT) > out && node_stat_sum(LV_PSWPIN) > in &&
		       node_stat_sum(LV_SWAP_RA) + node_stat_sum(LV_SWAP_RA_HIT) > ahead;
		if (done)
			break;
		lv_lru_add_drain_all(machine);
		swap_pageout(0, SWAP_PAGES);
	}
	printf("# swapping before the threads start: %lu pages out, %lu in, %lu read ahead, %lu "
	       "read-ahead hits\n",
	       (unsigned long)node_stat_sum(LV_PSWPOUT), (unsigned long)node_stat_sum(LV_PSWPIN),
	       (unsigned long)node_stat_sum(LV_SWAP_RA),
	       (unsigned long)node_stat_sum(LV_SWAP_RA_HIT));
	return done;
}

/* swap2_on - turn the second device on at @prio. */
static void swap2_on(int prio)
{
	int id = lv_swap_on(machine, -1, SWAP2_BYTES, prio);

	if (id < 0 || id >= LV_MAX_SWAPFILES || id == swap1_id) {
		fprintf(stderr, "# lv_swap_on of the second device returned %d\n", id);
		abort();
	}
	swap2_id = id;
	swap2_prio = prio;
	atomic_fetch_add(&swapon_ok, 1);
}

/*
 * swap2_off - turn the second device off. Return: false if memory could not hold its pages
 * (-ENOMEM: it stays on, and nothing is lost).
 */
static bool swap2_off(void)
{
	struct lv_swap_info info;
	int err;

	if (lv_swap_info(machine, swap2_id, &info))
		abort();
	err = lv_swap_off(machine, swap2_id);
	if (err == -ENOMEM) {
		atomic_fetch_add(&swapoff_nomem, 1);
		return false;
	}
	if (err || lv_swap_info(machine, swap2_id, &info) != -EINVAL) {
		fprintf(stderr, "# lv_swap_off of the second device returned %d%s\n", err,
			err ? "" : ", and the device is still there");
		abort();
	}
	atomic_fetch_add(&swapoff_ok, 1);
	atomic_fetch_add(&swapoff_pages, info.used);
	swap2_id = -1;
	return true;
}

/* swap_open - the swapper's first swapoff, of a device holding pages (see above). */
static void swap_open(void)
{
	const struct timespec retry = { 0, 1000 * 1000 };
	struct lv_swap_info info;

	if (swap2_id >= 0 && swap2_prio <= SWAP1_PRIO)
		while (!swap2_off() && !atomic_load(&stop))
			nanosleep(&retry, NULL);
	if (swap2_id < 0 && !atomic_load(&stop))
		swap2_on(SWAP1_PRIO + 1);
	/* Its pages, and some of the workers': the device is filled first. */
	while (swap2_id >= 0 && !atomic_load(&stop)) {
		lv_lru_add_drain_all(machine);
		swap_pageout(0, SWAP_PAGES);
		if (lv_swap_info(machine, swap2_id, &info))
			abort();
		if (info.used)
			break;
		nanosleep(&retry, NULL);
	}
	while (swap2_id >= 0 && !swap2_off() && !atomic_load(&stop))
		nanosleep(&retry, NULL);
	/* Back in memory (or swapped out again by the workers' reclaim since). */
	if (swap2_id < 0)
		swap_verify_all(now_seconds() + 10);
	atomic_store(&swap_opened, true);
}

/* swap_limit - a new swap limit for a memcg: none at all, a few slots, more, or no limit. */
static void swap_limit(uint64_t *s)
{
	struct lv_memcg *memcg = pick_memcg(s);
	size_t pages;

	if (!memcg)
		return;
	switch (rnd(s) % 4) {
	case 0:
		pages = 0;
		break;
	case 1:
		pages = 1 + rnd(s) % 32;
		break;
	case 2:
		pages = 256 + rnd(s) % 1024;
		break;
	default:
		pages = SIZE_MAX;
	}
	if (lv_memcg_set_swap_max(memcg, pages))
		abort();
	atomic_fetch_add(&swap_max_sets, 1);
}

/* swap_info_check - what lv_swap_info() says of a device that is on. */
static void swap_info_check(int id, size_t bytes, int prio)
{
	struct lv_swap_info info;
	int err = lv_swap_info(machine, id, &info);

	if (err || !info.slots || info.slots > bytes / LV_PAGE_SIZE || info.used > info.slots ||
	    info.prio != prio || !info.in_memory || info.write_errors || info.read_errors) {
		fprintf(stderr,
			"# lv_swap_info(%d) returned %d: %zu slots (%zu bytes), %zu used, priority "
			"%d (%d), in memory %d, %lu write and %lu read errors\n",
			id, err, info.slots, bytes, info.used, info.prio, prio, info.in_memory,
			(unsigned long)info.write_errors, (unsigned long)info.read_errors);
		abort();
	}
	atomic_fetch_add(&swap_checks, 1);
}

/* swap_refused - calls that must be refused, changing nothing. */
static void swap_refused(uint64_t *s)
{
	struct lv_memcg *memcg = pick_memcg(s);
	struct lv_swap_info info;

	if (lv_swap_on(machine, -1, HUGE_BYTES - LV_PAGE_SIZE, 0) != -EINVAL ||
	    lv_swap_on(machine, -2, SWAP2_BYTES, 0) != -EINVAL ||
	    lv_swap_on(NULL, -1, 0, 0) != -EINVAL || lv_swap_off(machine, -1) != -EINVAL ||
	    lv_swap_off(machine, LV_MAX_SWAPFILES) != -EINVAL ||
	    lv_swap_info(machine, swap1_id, NULL) != -EINVAL ||
	    lv_swap_info(machine, LV_MAX_SWAPFILES, &info) != -EINVAL ||
	    lv_memcg_set_swap_max(NULL, 0) != -EINVAL ||
	    (memcg && lv_memcg_set_swap_max(lv_memcg_root(machine), 0) != -EINVAL) ||
	    (memcg && lv_memcg_set_swappiness(memcg, 201) != -EINVAL)) {
		fprintf(stderr, "# a bad swap call was accepted\n");
		abort();
	}
	atomic_fetch_add(&swap_checks, 1);
}

/*
 * swapper - the first swapoff (swap_open()), then swap limits and swappiness, the swapper's
 * range paged out, read back and rewritten, the second device turned off and on again (at
 * most every 20 ms), the devices described, and refused calls.
 */
static void *swapper(void *arg)
{
	uint64_t s = opt.seed * 211 + (uintptr_t)arg;
	double last_cycle = 0;

	swap_open();
	while (!atomic_load(&stop)) {
		struct timespec pause = { 0, (long)(1 + rnd(&s) % 4) * 1000 * 1000 };
		unsigned int r = (unsigned int)(rnd(&s) % 16);

		nanosleep(&pause, NULL);
		if (r < 4) {
			swap_limit(&s);
		} else if (r < 5) {
			struct lv_memcg *memcg = pick_memcg(&s);

			if (memcg && lv_memcg_set_swappiness(memcg, (unsigned int)(rnd(&s) % 201)))
				abort();
			atomic_fetch_add(&swappiness_sets, memcg != NULL);
		} else if (r < 7) {
			if (now_seconds() - last_cycle < 0.02)
				continue;
			last_cycle = now_seconds();
			/* Off (maybe refused), then on again at once or at a later turn. */
			if (swap2_id >= 0 && (!swap2_off() || rnd(&s) & 1))
				continue;
			swap2_on(SWAP1_PRIO - 1 + (int)(rnd(&s) % 3));
		} else if (r < 14) {
			unsigned int first = (unsigned int)(rnd(&s) % SWAP_PAGES);
			unsigned int left = SWAP_PAGES - first;
			unsigned int n = 1 + (unsigned int)(rnd(&s) % (left < 16 ? left : 16));

			swap_pageout(first, n);
			for (unsigned int p = first; p < first + n; p++) {
				if (rnd(&s) % 3 == 0)
					swap_rewrite(p);
				else if (rnd(&s) & 1)
					swap_verify(p);
			}
		} else if (r < 15) {
			swap_info_check(swap1_id, SWAP1_BYTES, SWAP1_PRIO);
			if (swap2_id >= 0)
				swap_info_check(swap2_id, SWAP2_BYTES, swap2_prio);
		} else {
			swap_refused(&s);
		}
	}
	return NULL;
}

/* swap_slots_used - the slots in use on the devices that are on. */
static size_t swap_slots_used(void)
{
	struct lv_swap_info info;
	size_t used = 0;

	for (int id = 0; id < LV_MAX_SWAPFILES; id++)
		if (!lv_swap_info(machine, id, &info))
			used += info.used;
	return used;
}

/*
 * swap_accounting - with no thread of the test left: the root's swap usage is the devices'
 * slots in use, a memcg's is at most its parent's, and the top-level memcgs' together at most
 * the root's. A reading that a kswapd pass races is taken again, for up to a second.
 * Return: true if they hold; *@used: the slots in use; @why: what did not hold, otherwise.
 */
static bool swap_accounting(size_t *used, char *why, size_t len)
{
	const struct timespec retry = { 0, 1000 * 1000 };
	struct lv_memcg *root = lv_memcg_root(machine);
	struct lv_memcg *others[] = { tiny, presser, swap_memcg };

	for (int tries = 0; tries < 1000; tries++, nanosleep(&retry, NULL)) {
		size_t in_use = swap_slots_used(), top = 0;
		size_t root_usage = lv_memcg_swap_usage(root);
		bool good = !root || root_usage == in_use;

		snprintf(why, len, "the root's swap usage is %zu slots, the devices use %zu",
			 root_usage, in_use);
		for (int i = 0; root && i < nr_containers; i++) {
			struct lv_memcg *parent = lv_memcg_parent(containers[i]);
			size_t u = lv_memcg_swap_usage(containers[i]);

			if (parent == root) {
				top += u;
			} else if (u > lv_memcg_swap_usage(parent)) {
				good = false;
				snprintf(why, len, "c%d's swap usage %zu is above its parent's %zu",
					 i, u, lv_memcg_swap_usage(parent));
			}
		}
		for (size_t i = 0; root && i < sizeof(others) / sizeof(others[0]); i++)
			if (others[i])
				top += lv_memcg_swap_usage(others[i]);
		if (top > root_usage) {
			good = false;
			snprintf(why, len, "the top-level memcgs use %zu slots, the root %zu", top,
				 root_usage);
		}
		*used = in_use;
		if (good && swap_slots_used() == in_use)
			return true;
	}
	return false;
}

/* mm_present - the pages of @nr @ranges of @ms (address, pages) that move_pages() finds. */
static size_t mm_present(struct mm_slot *ms, uint64_t (*ranges)[2], unsigned int nr)
{
	size_t present = 0;

	for (unsigned int r = 0; r < nr; r++) {
		for (uint64_t p = 0; p < ranges[r][1]; p++) {
			uint64_t addr = page_addr(ranges[r][0], (unsigned int)p);
			int st;

			if (lv_move_pages(ms->mm, 1, &addr, NULL, &st))
				abort();
			if (st >= 0)
				present++;
			else if (st != -ENOENT && !(st == -EFAULT && r >= 2))
				anon_fail(ms, addr, NULL, "final move_pages status %d", st);
		}
	}
	return present;
}

/*
 * mm_verify_all - at the end, with no worker left: every owner's run matches its model
 * exactly (up to lazyfree zeros), every other line is zeros or a valid record, the swapper's
 * range holds what it wrote last, and the pages move_pages() reports present add up to the
 * address space's rss. A page on swap is read back in, the read retried while memory cannot
 * take it (for 10 s at most in all). Presence is counted in a pass of its own after the reads,
 * and again if the rss moved meanwhile (a kswapd pass swapping out).
 * Return: pages checked; 0 if a check failed.
 */
static unsigned long mm_verify_all(void)
{
	const struct timespec retry = { 0, 1000 * 1000 };
	static struct line buf[PAGE_LINES];
	double deadline = now_seconds() + 10;
	unsigned long checked = 0;

	for (unsigned int k = 0; k < NR_MMS; k++) {
		struct mm_slot *ms = &mms[k];
		uint64_t ranges[2 + SCRATCH_SLOTS][2], brk;
		unsigned int nr = 0;
		size_t present, rss;

		for (int t = 0; t < opt.threads; t++) {
			own_sync(&wstates[t], k);
			for (unsigned int i = 0; i < own_pages; i++) {
				while (!own_verify(&wstates[t], k, i)) {
					if (now_seconds() > deadline)
						goto nomem;
					nanosleep(&retry, NULL);
				}
			}
		}
		if (lv_mm_brk(ms->mm, 0, &brk))
			abort();
		ranges[nr][0] = ms->arena;
		ranges[nr++][1] = arena_pages;
		ranges[nr][0] = ms->heap;
		ranges[nr++][1] = (brk - ms->heap) / LV_PAGE_SIZE;
		for (unsigned int i = 0; i < SCRATCH_SLOTS; i++) {
			unsigned int pages;

			if (scratch_get(ms, i, &ranges[nr][0], &pages))
				ranges[nr++][1] = pages;
		}
		for (unsigned int r = 0; r < nr; r++) {
			for (uint64_t p = 0; p < ranges[r][1]; p++) {
				uint64_t addr = page_addr(ranges[r][0], (unsigned int)p);
				int err;

				while ((err = lv_mm_read(ms->mm, addr, buf, sizeof(buf))) ==
					       -ENOMEM &&
				       now_seconds() < deadline)
					nanosleep(&retry, NULL);
				if (err == -EFAULT && r >= 2)
					continue; /* a hole cut in a scratch region */
				if (err == -ENOMEM)
					goto nomem;
				if (err)
					anon_fail(ms, addr, NULL, "final read returned %d", err);
				weak_check(ms, addr, buf, PAGE_LINES, r == 0);
				checked++;
			}
		}
		for (int tries = 0;; tries++) {
			rss = lv_mm_rss(ms->mm);
			present = mm_present(ms, ranges, nr);
			if (lv_mm_rss(ms->mm) == rss)
				break;
			if (tries == 100) {
				fprintf(stderr, "# mm %u: rss changing all along\n", k);
				return 0;
			}
			nanosleep(&retry, NULL);
		}
		if (present != rss) {
			fprintf(stderr, "# mm %u: %zu pages present, rss %zu\n", k, present, rss);
			return 0;
		}
		continue;
	nomem:
		fprintf(stderr, "# mm %u: a page on swap could not be swapped back in for 10 s\n",
			k);
		return 0;
	}
	if (!swap_verify_all(deadline)) {
		fprintf(stderr, "# the swapper's range could not be swapped back in for 10 s\n");
		return 0;
	}
	return checked + SWAP_PAGES;
}

static void *worker(void *arg)
{
	uint64_t s = opt.seed * 0x9e3779b97f4a7c15ull + (uintptr_t)arg + 1;
	struct wstate *w = &wstates[(uintptr_t)arg];
	unsigned long ops = 0;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		unsigned int r = (unsigned int)(rnd(&s) % 1000);

		if (rnd(&s) % 4 == 0) {
			mm_op(w, &s); /* a quarter of the operations use the address spaces */
		} else if (r < 200) {
			op_alloc(&s, pick_memcg(&s));
		} else if (r < 320) {
			op_release(&s);
		} else if (r < 600) {
			op_read(&s, tiny && rnd(&s) % 4 == 0 ? tiny : pick_memcg(&s));
		} else if (r < 603) {
			unsigned long cached = lv_file_cached_pages(trunc_file);

			lv_file_truncate(trunc_file, rnd(&s) % (4 << 20));
			if (lv_file_cached_pages(trunc_file) < cached)
				atomic_fetch_add(&truncations, 1);
			lv_file_truncate(trunc_file, 4 << 20);
		} else if (r < 605) {
			if (r & 1)
				lv_reclaim_node(machine, (int)(rnd(&s) % (unsigned)nr_nodes), 64);
			else if (nr_containers)
				lv_memcg_reclaim(pick_memcg(&s), 64);
		} else if (r < 986) {
			struct lv_folio *f = get_entry((unsigned int)(rnd(&s) % TABLE_SIZE));

			if (f) {
				op_on_folio(&s, f);
				lv_folio_put(f);
			}
		} else if (r < 990) {
			op_split(&s);
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
 * totals_check - event and lock totals only grow. A removed memcg's counts move into the
 * retired totals when its RCU callback frees it, on another thread, while workers keep
 * counting; a closed file's and a destroyed mm's lock statistics move there at once. A count
 * taken twice or dropped in that hand-over would show as a total that shrinks between two
 * looks. Called by the churner only (its own last values).
 */
static const enum lv_lock_class totals_classes[] = { LV_LOCK_CLASS_LRUVEC, LV_LOCK_CLASS_MAPPING,
						     LV_LOCK_CLASS_MM };
#define NR_TOTALS (1 + sizeof(totals_classes) / sizeof(totals_classes[0]))

static void totals_check(uint64_t last[NR_TOTALS])
{
	uint64_t now[NR_TOTALS] = { 0 };

	for (int nid = 0; nid < nr_nodes; nid++)
		now[0] += lv_node_stat(machine, nid, LV_PGMOVED);
	for (size_t i = 1; i < NR_TOTALS; i++) {
		struct lv_lock_stat st;

		lv_lock_stats(machine, totals_classes[i - 1], &st);
		now[i] = st.acquired;
	}
	for (size_t i = 0; i < NR_TOTALS; i++) {
		if (now[i] < last[i])
			atomic_fetch_add(&totals_backwards, 1);
		last[i] = now[i];
	}
}

/* stats_reader - read the totals all run long, while others close files, destroy mms and
 * remove memcgs: the readings a hand-over bug needs to show. */
static atomic_ulong totals_readings;

static void *stats_reader(void *arg)
{
	uint64_t last[NR_TOTALS] = { 0 };

	(void)arg;
	while (!atomic_load(&stop)) {
		totals_check(last);
		atomic_fetch_add(&totals_readings, 1);
		sched_yield(); /* a reader among the workers, not a hog of the memcg mutex */
	}
	return NULL;
}

/*
 * churn_witness - an mlocked folio charged to @tmp that no other thread sees before @tmp is
 * removed: whatever they do to the memcg's other folios, the removal has a charged,
 * unevictable folio to find through the memmap and reparent.
 * Return: the folio, with the churner's reference; NULL only if the run stops first.
 */
static struct lv_folio *churn_witness(struct lv_memcg *tmp)
{
	const struct timespec retry = { 0, 1000 * 1000 };

	for (int nid = 0; !atomic_load(&stop); nid = (nid + 1) % nr_nodes) {
		struct lv_folio *f = lv_folio_alloc(machine, nid, 0, tmp, 0);

		if (!f) {
			if (errno != ENOMEM)
				abort();
			nanosleep(&retry, NULL); /* the presser may hold one node dry for a while */
			continue;
		}
		lv_folio_set_state(f, LV_PG_MLOCKED, true);
		if (lv_folio_add_lru(f))
			abort();
		return f;
	}
	return NULL;
}

/*
 * memcg_churner - a memcg that lives briefly: folios and page cache are charged to it, its
 * folios are put in the shared table, and it is removed. Every other time, starting with the
 * second, it is emptied first (folios moved out, page cache evicted); otherwise the removal
 * reparents whatever is still charged to it (a witness folio at least, see churn_witness())
 * while other threads isolate, activate, move and free those folios. Lookups that read the
 * stale binding race with the removal and are saved by RCU and the re-check.
 */
/*
 * struct removal_racer - a thread that, while a memcg is being removed, keeps activating and
 * deactivating folios still charged to it and drains its CPU's batches: every drain pins each
 * folio, looks up its lruvec and waits for a lock that the removal's reparenting may hold
 * while it rebinds that very folio. The real protocol's re-check retries then; the first
 * version's lookup takes the stale lock, which its debug check reports. Made to happen at
 * every other removal rather than left to the workers' chance meetings with those folios.
 */
struct removal_racer {
	struct lv_folio *folios[8]; /* the churner's references */
	int n;
	atomic_bool done;
};
static atomic_ulong removal_races; /* drains made while a removal ran */

static void *removal_racer(void *arg)
{
	struct removal_racer *r = arg;

	while (!atomic_load(&r->done)) {
		for (int k = 0; k < r->n; k++) {
			if (k & 1)
				lv_folio_activate(r->folios[k]);
			else
				lv_folio_deactivate(r->folios[k]);
		}
		lv_lru_add_drain(machine);
		atomic_fetch_add(&removal_races, 1);
		sched_yield(); /* a racer, not a hog of the locks the removal needs */
	}
	return NULL;
}

static void *memcg_churner(void *arg)
{
	uint64_t s = opt.seed * 31 + (uintptr_t)arg;
	uint64_t last_totals[NR_TOTALS] = { 0 };

	for (unsigned long round = 0; !atomic_load(&stop); round++) {
		struct lv_memcg *parent = pick_memcg(&s);
		struct lv_memcg *tmp = lv_memcg_create(machine, parent, "tmp");
		struct lv_folio *mine[8], *witness = NULL, *expected = NULL;
		struct removal_racer racer = { .n = 0 };
		pthread_t racer_tid;
		bool empty_first = round & 1;
		int n = 0, err;

		if (!tmp)
			abort();
		for (int k = 0; k < 8; k++) {
			struct lv_folio *f = lv_folio_alloc(machine, k % nr_nodes, 0, tmp, 0);

			if (!f)
				continue;
			/* Mlocked: counted on no list, its count follows its obj_cgroup. */
			if (rnd(&s) % 4 == 0)
				lv_folio_set_state(f, LV_PG_MLOCKED, true);
			if (lv_folio_add_lru(f))
				abort();
			mine[n++] = f;
		}
		if (!empty_first)
			witness = churn_witness(tmp);
		{
			/* An address space charged to it, faulted in, migrated, destroyed. */
			struct lv_mm *mm =
				lv_mm_create(machine, tmp, (int)(rnd(&s) % (unsigned)nr_nodes));
			bool locked = rnd(&s) & 1;
			uint64_t addr;

			if (!mm || lv_mmap(mm, 8 * LV_PAGE_SIZE, &addr))
				abort();
			/* Locked (now and later) half the time: its pages are mlocked as they
			 * fault. */
			if (locked) {
				if (lv_mlockall(mm, LV_MCL_CURRENT | LV_MCL_FUTURE))
					abort();
				atomic_fetch_add(&mlockall_ok, 1);
			}
			err = lv_mm_memset(mm, addr, 0x5a, (1 + rnd(&s) % 8) * LV_PAGE_SIZE);
			if (err && err != -ENOMEM)
				abort();
			if (rnd(&s) & 1 &&
			    lv_migrate_pages(mm, 3, (int)(rnd(&s) % (unsigned)nr_nodes)) < 0)
				abort();
			/*
			 * Swapped out (charged to its swap) half the time, so that the destroy
			 * frees swap entries, maybe while a swapoff walks the mm.
			 */
			if (rnd(&s) & 1) {
				err = lv_madvise(mm, addr, 8 * LV_PAGE_SIZE, LV_MADV_PAGEOUT);
				if (err && !(locked && err == -EINVAL))
					abort();
				if (!err)
					atomic_fetch_add(&pageout_calls, 1);
			}
			lv_mm_destroy(mm);
		}
		{
			/*
			 * Page cache charged to it: reparented by the removal, or evicted before
			 * it, when the shadow-only tree nodes it leaves move to the parent's
			 * lists; readers and truncation work on the same files meanwhile.
			 */
			struct lv_file *f = rnd(&s) & 1 ? sparse_file : trunc_file;
			uint64_t size = f == sparse_file ? SPARSE_BYTES : 4 << 20;
			uint64_t off = rnd(&s) % (size / (256 * 4096)) * 256 * 4096;
			unsigned char buf[4096];

			for (int k = 0; k < 256; k++)
				if (lv_file_read(f, tmp, buf, sizeof(buf),
						 off + (uint64_t)k * 4096) < 0)
					break;
			if (empty_first) {
				lv_lru_add_drain(machine);
				lv_memcg_reclaim(tmp, 512);
			}
		}
		{
			/* A file of its own, read and closed: its mapping lock retires meanwhile.
			 */
			struct lv_file *f = lv_file_open(machine, -1, 1 << 20);
			unsigned char buf[4096];

			if (!f)
				abort();
			for (int k = 0; k < 4; k++)
				if (lv_file_read(f, tmp, buf, sizeof(buf), (uint64_t)k * 4096) < 0)
					break;
			lv_file_close(f);
		}
		lv_lru_add_drain(machine);
		/* Move our folios out while others may be touching them (or not), share them. */
		for (int k = 0; k < n; k++) {
			while (empty_first && !atomic_load(&stop)) {
				/* -EBUSY: still queued in a batch, maybe another slot's. */
				err = lv_folio_move_memcg(mine[k], pick_memcg(&s));
				if (!err) {
					atomic_fetch_add(&move_ok, 1);
					break;
				}
				if (err != -EBUSY && err != -ENOMEM)
					abort();
				lv_lru_add_drain(machine);
			}
			if (!empty_first) {
				/* Still charged to tmp: the removal racer's, with a reference. */
				lv_folio_get(mine[k]);
				racer.folios[racer.n++] = mine[k];
			}
			expected = NULL;
			if (!atomic_compare_exchange_strong(&table[rnd(&s) % TABLE_SIZE], &expected,
							    mine[k]))
				lv_folio_put(mine[k]);
		}
		/* The witness may sit in another slot's batch (this one's lock was busy). */
		while (witness && !lv_folio_test(witness, LV_PG_LRU) && !atomic_load(&stop))
			lv_lru_add_drain_all(machine);
		if (rnd(&s) % 4 == 0) {
			/* Compaction of its subtree, while the others move and free its folios. */
			err = lv_compact_memcg(tmp, rnd(&s) & 1 ? -1 : LV_MAX_ORDER);
			if (err != 0 && err != 1)
				abort();
			atomic_fetch_add(&compact_memcg_calls, 1);
		}
		atomic_fetch_add(&shadow_nodes_moved, lv_memcg_stat(tmp, LV_WORKINGSET_NODES));
		atomic_fetch_add(&charged_at_removal, lv_memcg_usage(tmp));
		atomic_fetch_add(&unevictable_at_removal, lv_memcg_stat(tmp, LV_NR_UNEVICTABLE));
		if (racer.n)
			pthread_create(&racer_tid, NULL, removal_racer, &racer);
		/*
		 * The removal waits for no folio in transit (isolated by a worker, queued in a
		 * batch, being migrated or compacted, held by the racer) and tmp has no child, no
		 * address space and no other remover: nothing may make it fail.
		 */
		err = lv_memcg_remove(tmp);
		if (racer.n) {
			atomic_store(&racer.done, true);
			pthread_join(racer_tid, NULL);
			lv_folios_put(racer.folios, (size_t)racer.n);
		}
		/* Reparented: the others may use the witness from here on. */
		expected = NULL;
		if (witness && !atomic_compare_exchange_strong(&table[rnd(&s) % TABLE_SIZE],
							       &expected, witness))
			lv_folio_put(witness);
		if (err) {
			fprintf(stderr, "torture: lv_memcg_remove: %s with folios in transit\n",
				strerror(-err));
			abort();
		}
		atomic_fetch_add(&memcgs_removed, 1);
		totals_check(last_totals);
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
		{ "folio-order", required_argument, 0, 'F' },
		{ "wait", required_argument, 0, 'w' },
		{ "protocol", required_argument, 0, 'P' },
		{ "thp", required_argument, 0, 'T' },
		{ "thp-defrag", required_argument, 0, 'G' },
		{ "watchdog", required_argument, 0, 'W' },
		{ "swappiness", required_argument, 0, 'R' },
		{ "page-cluster", required_argument, 0, 'C' },
		{ "batch-large", no_argument, 0, 'L' },
		{ "scan-cost", required_argument, 0, 'K' },
		{ "batch-policy", required_argument, 0, 'Y' },
		{ "readahead", required_argument, 0, 'A' },
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
		case 'F':
			opt.folio_order = (unsigned int)atoi(optarg);
			break;
		case 'w':
			opt.wait = atof(optarg);
			break;
		case 'W':
			opt.watchdog = atof(optarg);
			break;
		case 'R':
			opt.swappiness = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'C':
			opt.page_cluster = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'L':
			opt.batch_large = true;
			break;
		case 'K':
			if (!strcmp(optarg, "locked"))
				opt.scan_cost = LV_COST_LOCKED;
			else if (!strcmp(optarg, "vmstat"))
				opt.scan_cost = LV_COST_VMSTAT;
			else
				return -1;
			break;
		case 'A':
			opt.readahead = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 'Y':
			if (!strcmp(optarg, "arrival"))
				opt.batch_policy = LV_BATCH_ARRIVAL;
			else if (!strcmp(optarg, "sorted"))
				opt.batch_policy = LV_BATCH_SORTED;
			else if (!strcmp(optarg, "per-lruvec"))
				opt.batch_policy = LV_BATCH_PER_LRUVEC;
			else
				return -1;
			break;
		case 'P':
			if (!strcmp(optarg, "pin"))
				opt.protocol = LV_PROTOCOL_PIN;
			else if (!strcmp(optarg, "v1"))
				opt.protocol = LV_PROTOCOL_V1;
			else
				return -1;
			break;
		case 'T':
			if (!strcmp(optarg, "always"))
				opt.thp = LV_THP_ALWAYS;
			else if (!strcmp(optarg, "madvise"))
				opt.thp = LV_THP_MADVISE;
			else if (!strcmp(optarg, "never"))
				opt.thp = LV_THP_NEVER;
			else
				return -1;
			break;
		case 'G':
			if (!strcmp(optarg, "always"))
				opt.thp_defrag = LV_THP_DEFRAG_ALWAYS;
			else if (!strcmp(optarg, "madvise"))
				opt.thp_defrag = LV_THP_DEFRAG_MADVISE;
			else if (!strcmp(optarg, "defer"))
				opt.thp_defrag = LV_THP_DEFRAG_DEFER;
			else if (!strcmp(optarg, "never"))
				opt.thp_defrag = LV_THP_DEFRAG_NEVER;
			else
				return -1;
			break;
		case 'b':
			if (!strcmp(optarg, "futex"))
				opt.backend = LV_BACKEND_FUTEX;
			else if (!strcmp(optarg, "mutex"))
				opt.backend = LV_BACKEND_MUTEX;
			else if (!strcmp(optarg, "spin"))
				opt.backend = LV_BACKEND_SPIN;
			else if (!strcmp(optarg, "adaptive"))
				opt.backend = LV_BACKEND_ADAPTIVE;
			else
				return -1;
			break;
		case 'D':
			if (!strcmp(optarg, "sweep"))
				opt.disable = LV_DISABLE_SWEEP;
			else if (!strcmp(optarg, "rcu"))
				opt.disable = LV_DISABLE_RCU;
			else if (!strcmp(optarg, "rcu-expedited"))
				opt.disable = LV_DISABLE_RCU_EXPEDITED;
			else
				return -1;
			break;
		default:
			return -1;
		}
	}
	if (opt.threads < 1 || opt.threads > 256 || opt.containers < 0 ||
	    opt.containers > MAX_CONTAINERS - 1 || opt.duration < 0 || opt.wait < 0 ||
	    opt.watchdog < 0 || opt.watchdog > 3600 || opt.swappiness > 200 ||
	    opt.page_cluster < 1 || opt.page_cluster > 5 ||
	    (strcmp(opt.lock, "lruvec") && strcmp(opt.lock, "node") && strcmp(opt.lock, "nomemcg")))
		return -1;
	return 0;
}

/* mm_init_all - the shared address spaces and the workers' models of their runs. */
static void mm_init_all(void)
{
	pthread_rwlockattr_t attr;

	own_pages = ARENA_TARGET / (unsigned int)opt.threads;
	if (own_pages < 2)
		own_pages = 2;
	arena_pages = own_pages * (unsigned int)opt.threads;
	wstates = calloc((size_t)opt.threads, sizeof(*wstates));
	if (!wstates)
		abort();
	for (int t = 0; t < opt.threads; t++) {
		wstates[t].id = (unsigned int)t;
		wstates[t].pm = calloc(NR_MMS * own_pages, sizeof(*wstates[t].pm));
		if (!wstates[t].pm)
			abort();
	}
	pthread_rwlockattr_init(&attr);
	/* The churner must not starve behind a stream of readers. */
	pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	for (unsigned int k = 0; k < NR_MMS; k++) {
		/*
		 * c3 and c1, both limited below what these two address spaces come to hold (see
		 * "Swap" above), then c0 and c4 for the churned ones: c2 is c1's child, it would
		 * share the limit.
		 */
		static const int pick[NR_MMS] = { 3, 1, 0, 4 };
		struct lv_memcg *memcg = nr_containers ? containers[pick[k] % nr_containers] : NULL;

		pthread_rwlock_init(&mms[k].lock, &attr);
		mms[k].index = (int)k;
		mms[k].churn = k >= NR_MMS - NR_CHURN_MMS;
		mms[k].roam = k >= 2; /* faults land on both nodes */
		mm_setup(k, memcg, (int)(k % (unsigned)nr_nodes));
	}
	pthread_rwlockattr_destroy(&attr);
}

static void mm_destroy_all(void)
{
	for (unsigned int k = 0; k < NR_MMS; k++) {
		lv_mm_destroy(mms[k].mm);
		mms[k].mm = NULL;
		pthread_rwlock_destroy(&mms[k].lock);
	}
	lv_mm_destroy(swap_ms.mm);
	swap_ms.mm = NULL;
	for (int t = 0; t < opt.threads; t++)
		free(wstates[t].pm);
	free(wstates);
}

/*
 * ---- Required paths --------------------------------------------------------------------------
 *
 * Each racing path must run in every run: a change that made one of them fail early (or stop
 * being chosen) would otherwise leave the test green while racing less. No requirement rests
 * on the run being long enough for the machine's speed. Some paths a thread takes on its own,
 * while the others race it: the presser's first burst holds a node dry until a node-scope
 * drain is counted, and on its way takes the node below low, which asks kswapd for the pass
 * that is counted; the churner removes every other memcg, starting with its first, with a
 * private mlocked folio still charged to it (reparenting, unevictable reparenting), and moves
 * the folios of the rest out with moves it retries until they succeed (memcg move); a large
 * folio offered to the tiny tenant is always over its limit (move over a limit); the compactor
 * compacts a node first and a memcg subtree next (direct and memcg compaction); the opener
 * (see there) takes the first huge page fault, splits a huge folio with lv_split_folio(),
 * mlocks and munlocks pages, calls mlockall, and has the migrate scanner isolate pages on a
 * node where kcompactd was made to compact; before any thread starts, prepare_swap() pages a
 * range out (MADV_PAGEOUT, swap-outs) and reads it back (swap-ins, read-ahead), and the swapper
 * retries its first swapoff until it succeeds, then changes swap limits (see "Swap"). The
 * others are operations that every worker keeps
 * choosing with a fixed probability, each taking its path whenever the machine lets it
 * (memory to fault in, a folio on a list to isolate, cached pages to truncate, a tenant's
 * folios all queued in batches). For all of them, the mutators are stopped only once every
 * path has run: a slow or loaded machine gets a longer run rather than a missing path, up to
 * --wait seconds more, after which the paths still missing are named. File migrations are not
 * required: each waits for an lru_cache_disable(), and in rcu mode they are chosen rarely.
 */
/* What a path needs to be required: memcg, or huge pages allowed (--thp other than never). */
enum {
	NEED_MEMCG = 1,
	NEED_THP = 2,
};

struct required_path {
	const char *name;
	unsigned long count;
	unsigned int needs;
};

#define MAX_REQUIRED_PATHS 48

/*
 * required_paths - how often each required path has run so far, in @p; safe while the
 * threads run. Return: the number of paths.
 */
static size_t required_paths(struct required_path p[MAX_REQUIRED_PATHS])
{
	const struct required_path paths[] = {
		{ "isolation", atomic_load(&isolate_ok), 0 },
		{ "page cache read", atomic_load(&bytes_read), 0 },
		{ "reclaim", (unsigned long)node_stat_sum(LV_PGSTEAL), 0 },
		{ "kswapd pass", (unsigned long)node_stat_sum(LV_PAGEOUTRUN), 0 },
		{ "node-scope reclaim drain", (unsigned long)node_drains(), 0 },
		{ "truncation dropping pages", atomic_load(&truncations), 0 },
		{ "anon fault", atomic_load(&anon_faults), 0 },
		{ "lazyfree", atomic_load(&lazyfree_advised), 0 },
		{ "brk", atomic_load(&brk_ops), 0 },
		{ "mmap", atomic_load(&mmap_ops), 0 },
		{ "private file mapping", atomic_load(&file_maps), 0 },
		{ "munmap", atomic_load(&munmap_ops), 0 },
		{ "region split", atomic_load(&mm_splits), 0 },
		{ "mm churn", atomic_load(&mm_churns), 0 },
		{ "disable storm", atomic_load(&storms), 0 },
		{ "move_pages", atomic_load(&mp_ok), 0 },
		{ "migrate_pages", atomic_load(&mig_calls), 0 },
		{ "page migration", (unsigned long)node_stat_sum(LV_PGMIGRATE_SUCCESS), 0 },
		{ "memcg move", atomic_load(&move_ok), NEED_MEMCG },
		{ "move over a limit", atomic_load(&move_nomem), NEED_MEMCG },
		{ "memcg removal", atomic_load(&memcgs_removed), NEED_MEMCG },
		{ "reparenting", atomic_load(&charged_at_removal), NEED_MEMCG },
		{ "unevictable reparenting", atomic_load(&unevictable_at_removal), NEED_MEMCG },
		/* Only a batch larger than the tiny limit can hold all of its pages. */
		{ "reclaim drain",
		  tiny && opt.batch > TINY_PAGES ? lv_memcg_stat(tiny, LV_RECLAIM_DRAIN) : 1,
		  NEED_MEMCG },
		{ "huge region cut", atomic_load(&huge_cuts), 0 },
		{ "mlock window", atomic_load(&mlock_windows), 0 },
		{ "locked mapping", atomic_load(&locked_maps), 0 },
		{ "direct compaction", atomic_load(&compact_calls), 0 },
		{ "memcg compaction", atomic_load(&compact_memcg_calls), NEED_MEMCG },
		{ "compaction isolation", (unsigned long)node_stat_sum(LV_COMPACT_ISOLATED), 0 },
		{ "kcompactd", (unsigned long)node_stat_sum(LV_COMPACT_DAEMON_WAKE), 0 },
		{ "huge page fault", (unsigned long)node_stat_sum(LV_THP_FAULT_ALLOC), NEED_THP },
		{ "huge page split", (unsigned long)node_stat_sum(LV_THP_SPLIT_PAGE), 0 },
		{ "lv_split_folio", atomic_load(&split_ok) + atomic_load(&split_private), 0 },
		{ "mlock", atomic_load(&mlock_ok), 0 },
		{ "munlock", atomic_load(&munlock_ok), 0 },
		{ "mlockall", atomic_load(&mlockall_ok), 0 },
		{ "pages mlocked", (unsigned long)node_stat_sum(LV_UNEVICTABLE_PGS_MLOCKED), 0 },
		{ "pages munlocked", (unsigned long)node_stat_sum(LV_UNEVICTABLE_PGS_MUNLOCKED),
		  0 },
		{ "swap-out", (unsigned long)node_stat_sum(LV_PSWPOUT), 0 },
		{ "swap-in", (unsigned long)node_stat_sum(LV_PSWPIN), 0 },
		{ "swap read-ahead or its hit",
		  (unsigned long)(node_stat_sum(LV_SWAP_RA) + node_stat_sum(LV_SWAP_RA_HIT)), 0 },
		{ "MADV_PAGEOUT", atomic_load(&pageout_calls), 0 },
		{ "swapoff", atomic_load(&swapoff_ok), 0 },
		{ "swap limit change", atomic_load(&swap_max_sets), NEED_MEMCG },
	};

	_Static_assert(sizeof(paths) / sizeof(paths[0]) <= MAX_REQUIRED_PATHS, "too many paths");
	memcpy(p, paths, sizeof(paths));
	return sizeof(paths) / sizeof(paths[0]);
}

/* have_needs - what this run has of what paths may need. */
static unsigned int have_needs(bool memcg)
{
	return (memcg ? NEED_MEMCG : 0) | (opt.thp != LV_THP_NEVER ? NEED_THP : 0);
}

/*
 * paths_list - the names of the required paths that have not run yet, in @buf (with
 * @required false: the names of the paths other than memcg's not required in this
 * configuration).
 */
static bool paths_list(bool memcg, bool required, char *buf, size_t len)
{
	struct required_path p[MAX_REQUIRED_PATHS];
	size_t nr = required_paths(p), used = 0;
	unsigned int have = have_needs(memcg);

	buf[0] = '\0';
	for (size_t i = 0; i < nr; i++) {
		bool needed = (p[i].needs & have) == p[i].needs;

		if (required ? needed && !p[i].count : !needed && !(p[i].needs & NEED_MEMCG))
			if (used < len)
				used += (size_t)snprintf(buf + used, len - used, " %s", p[i].name);
	}
	return buf[0] != '\0';
}

static bool missing_paths(bool memcg, char *buf, size_t len)
{
	return paths_list(memcg, true, buf, len);
}

/*
 * wait_for_paths - let the mutators run on, past the run's duration, until every required
 * path has run or @limit more seconds have passed; the paths still to run when the wait
 * begins are named on a "# waiting for" line. Return: the seconds waited.
 */
static double wait_for_paths(bool memcg, double limit)
{
	const struct timespec poll = { 0, 20 * 1000 * 1000 };
	double start = now_seconds(), waited = 0;
	char missing[512];

	if (limit > 0 && missing_paths(memcg, missing, sizeof(missing))) {
		printf("# waiting for:%s\n", missing);
		fflush(stdout);
	}
	while (missing_paths(memcg, missing, sizeof(missing)) && waited < limit) {
		nanosleep(&poll, NULL);
		waited = now_seconds() - start;
	}
	return waited;
}

/*
 * watchdog_report - the lock watchdog found a lock held or waited for past its bound, or a
 * thread about to wait for a lock it holds: the report goes to stderr (the script keeps it in
 * the run's log), and the watchdog ends the process with LOCK_WATCHDOG_EXIT.
 */
static void watchdog_report(const char *msg)
{
	fputs(msg, stderr);
	fflush(stderr);
	printf("Bail out! lock watchdog (bound %.1f s): %.*s\n", opt.watchdog,
	       (int)strcspn(msg, "\n"), msg);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct lv_config cfg;
	pthread_t *tids, churner, mm_churn, reader, press, compact, open_tid, swap_tid;
	unsigned long checked;
	uint64_t migrated;
	struct timespec ts;
	bool memcg = true;
	char missing[512] = "", unneeded[512] = "";
	size_t limited[MAX_CONTAINERS][2] = { { 0 } }; /* usage and limit at the stop */
	double extra = 0;
	char *report;
	size_t report_len;
	FILE *rf;
	int err;

	if (parse_args(argc, argv)) {
		fprintf(stderr,
			"usage: torture [--seed N] [--duration S] [--threads T] "
			"[--lock lruvec|node|nomemcg] [--backend futex|mutex|spin|adaptive] "
			"[--disable sweep|rcu|rcu-expedited] [--batch B] [--containers C] "
			"[--slots S] [--folio-order N] [--wait S] [--protocol pin|v1] "
			"[--thp always|madvise|never] "
			"[--thp-defrag always|madvise|defer|never] [--watchdog S] "
			"[--swappiness 0..200] [--page-cluster 1..5] [--batch-large] "
			"[--scan-cost locked|vmstat] "
			"[--batch-policy arrival|sorted|per-lruvec] [--readahead PAGES]\n");
		return 2;
	}
	/* Before the machine: its kswapd and kcompactd threads' locks are watched too. */
	if (opt.watchdog > 0) {
		err = lock_watchdog_start((uint64_t)(opt.watchdog * 1e9), watchdog_report);
		if (err) {
			printf("Bail out! lock_watchdog_start: %s\n", strerror(-err));
			return 1;
		}
	}
	lv_config_init(&cfg);
	cfg.nr_nodes = (unsigned int)nr_nodes;
	cfg.node_mem_bytes = NODE_PAGES * LV_PAGE_SIZE;
	cfg.nr_cpu_slots = opt.slots;
	cfg.lock_backend = opt.backend;
	cfg.batch_size = opt.batch;
	cfg.file_folio_order = opt.folio_order;
	cfg.disable_mode = opt.disable;
	cfg.protocol = opt.protocol;
	cfg.thp = opt.thp;
	cfg.thp_defrag = opt.thp_defrag;
	cfg.no_kcompactd = false;
	cfg.compaction_proactiveness = 90; /* kcompactd compacts on its own at once */
	cfg.swappiness = opt.swappiness;
	cfg.page_cluster = opt.page_cluster;
	cfg.batch_large = opt.batch_large;
	cfg.scan_cost = opt.scan_cost;
	cfg.batch_policy = opt.batch_policy;
	cfg.readahead_pages = opt.readahead;
	if (!strcmp(opt.lock, "node"))
		cfg.lock_design = LV_LOCK_NODE;
	if (!strcmp(opt.lock, "nomemcg")) {
		cfg.memcg_disabled = true;
		memcg = false;
	}
	/* The second device from the start in two seeds of three: above the first, or below. */
	swap2_prio = opt.seed % 3 == 1 ? SWAP1_PRIO + 1 : SWAP1_PRIO - 1;
	printf("1..15\n# seed=%lu duration=%.1fs threads=%d lock=%s containers=%d batch=%u "
	       "disable=%s folio_order=%u protocol=%s thp=%s thp_defrag=%s watchdog=%.1fs "
	       "swappiness=%u page_cluster=%u swap=%luMiB@%d",
	       opt.seed, opt.duration, opt.threads, opt.lock, memcg ? opt.containers : 0, opt.batch,
	       opt.disable == LV_DISABLE_SWEEP ? "sweep"
	       : opt.disable == LV_DISABLE_RCU ? "rcu"
					       : "rcu-expedited",
	       opt.folio_order, opt.protocol == LV_PROTOCOL_V1 ? "v1" : "pin",
	       opt.thp == LV_THP_ALWAYS	 ? "always"
	       : opt.thp == LV_THP_NEVER ? "never"
					 : "madvise",
	       opt.thp_defrag == LV_THP_DEFRAG_ALWAYS  ? "always"
	       : opt.thp_defrag == LV_THP_DEFRAG_DEFER ? "defer"
	       : opt.thp_defrag == LV_THP_DEFRAG_NEVER ? "never"
						       : "madvise",
	       opt.watchdog, opt.swappiness, opt.page_cluster, SWAP1_BYTES >> 20, SWAP1_PRIO);
	if (opt.seed % 3)
		printf(",%luMiB@%d", SWAP2_BYTES >> 20, swap2_prio);
	putchar('\n');
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
		if (nr_containers > 3)
			lv_memcg_set_max(containers[3], 384); /* and one swapping (see "Swap") */
		tiny = lv_memcg_create(machine, NULL, "tiny");
		if (!tiny)
			abort();
		lv_memcg_set_max(tiny, TINY_PAGES);
		presser = lv_memcg_create(machine, NULL, "presser");
		swap_memcg = lv_memcg_create(machine, NULL, "swapper");
		if (!presser || !swap_memcg)
			abort();
	}
	swap1_id = lv_swap_on(machine, -1, SWAP1_BYTES, SWAP1_PRIO);
	if (swap1_id < 0) {
		printf("Bail out! lv_swap_on: %s\n", strerror(-swap1_id));
		return 1;
	}
	if (opt.seed % 3)
		swap2_on(swap2_prio);

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

	mm_init_all();
	if (!prepare_kcompactd())
		printf("# kcompactd did not compact the fragmented node within %.1f s\n",
		       opt.wait > 1 ? opt.wait : 1);
	if (!prepare_swap())
		printf("# swapping: swap-outs, swap-ins and read-ahead not all seen within %.1f "
		       "s\n",
		       opt.wait > 1 ? opt.wait : 1);
	fflush(stdout);
	pthread_create(&open_tid, NULL, opener, (void *)(uintptr_t)(opt.threads + 4));
	pthread_create(&swap_tid, NULL, swapper, (void *)(uintptr_t)(opt.threads + 5));
	tids = calloc((size_t)opt.threads, sizeof(*tids));
	for (int i = 0; i < opt.threads; i++)
		pthread_create(&tids[i], NULL, worker, (void *)(uintptr_t)i);
	if (memcg)
		pthread_create(&churner, NULL, memcg_churner, (void *)(uintptr_t)opt.threads);
	pthread_create(&mm_churn, NULL, mm_churner, (void *)(uintptr_t)(opt.threads + 1));
	pthread_create(&reader, NULL, stats_reader, NULL);
	pthread_create(&press, NULL, node_presser, (void *)(uintptr_t)(opt.threads + 2));
	pthread_create(&compact, NULL, compactor, (void *)(uintptr_t)(opt.threads + 3));
	ts.tv_sec = (time_t)opt.duration;
	ts.tv_nsec = (long)((opt.duration - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
	/* A run shorter than a second is a smoke test: it neither waits for nor requires them. */
	if (opt.duration >= 1)
		extra = wait_for_paths(memcg, opt.wait);
	atomic_store(&stop, true);
	for (int i = 0; i < opt.threads; i++)
		pthread_join(tids[i], NULL);
	if (memcg)
		pthread_join(churner, NULL);
	pthread_join(mm_churn, NULL);
	pthread_join(reader, NULL);
	pthread_join(press, NULL);
	pthread_join(compact, NULL);
	pthread_join(open_tid, NULL);
	pthread_join(swap_tid, NULL);
	free(tids);
	for (int i = 0; i < nr_containers; i++) {
		limited[i][0] = lv_memcg_usage(containers[i]);
		limited[i][1] = lv_memcg_max(containers[i]);
	}
	/*
	 * The final reads swap pages in, which a memcg full of folios that the table holds
	 * could not charge: lift the limits.
	 */
	for (int i = 0; i < nr_containers; i++) {
		lv_memcg_set_max(containers[i], SIZE_MAX);
		lv_memcg_set_swap_max(containers[i], SIZE_MAX);
	}

	migrated = node_stat_sum(LV_PGMIGRATE_SUCCESS);
	ok(atomic_load(&total_ops) > 0,
	   "%lu operations in %.1f s; %lu moves (%lu busy, %lu over limit), "
	   "%lu isolations, %lu failed allocations, %lu memcgs removed (%lu pages, %lu of them "
	   "unevictable, and %lu shadow nodes moved to parents), %lu MiB read, "
	   "%lu pages reclaimed (%lu busy lruvecs passed over, %lu kswapd passes, %lu bursts "
	   "taking a node below low, %lu running it dry, %lu node-scope drains, the first burst "
	   "taking %.2f s); anon: %lu faults, "
	   "%lu writes (%lu could not fault), "
	   "%lu lazyfree pages (%lu read back as zeros), %lu brk, %lu mmap (%lu of a file), "
	   "%lu munmap, "
	   "%lu splits, %lu mm churns, %lu disable storms; migration: %lu pages migrated, "
	   "%lu failed, move_pages %lu ok %lu busy %lu no memory %lu absent %lu bad address, "
	   "%lu migrate_pages (%lu left), %lu file migrations (%lu left); compaction: %lu of "
	   "nodes, %lu of memcgs, %lu made the block, %lu pages isolated, %lu kcompactd runs, "
	   "%lu stalls; huge pages: %lu regions cut and unmapped (%lu writes could not fault), "
	   "%lu faults (%lu fell back; the opener's took %lu tries), %lu splits (%lu refused), "
	   "%lu lv_split_folio of table folios (%lu busy) and %lu of private ones; mlock: "
	   "%lu windows, %lu mlock, %lu munlock, %lu mlockall, %lu locked mappings, %lu pages "
	   "mlocked, %lu munlocked, %lu madvise refused on locked regions; swap: %lu pages out, "
	   "%lu in (%lu read ahead, %lu read-ahead hits, %lu refaults), %lu anon pages "
	   "reclaimed, %lu MADV_PAGEOUT (%lu pages), %lu reads that could not swap in, "
	   "%lu swapoffs (%lu pages in use before, %lu refused), %lu swapons, %lu swap limit "
	   "and %lu swappiness changes, %lu device checks; %lu drains racing "
	   "removals, %lu lookups retried",
	   atomic_load(&total_ops), opt.duration + extra, atomic_load(&move_ok),
	   atomic_load(&move_busy), atomic_load(&move_nomem), atomic_load(&isolate_ok),
	   atomic_load(&alloc_fail), atomic_load(&memcgs_removed), atomic_load(&charged_at_removal),
	   atomic_load(&unevictable_at_removal), atomic_load(&shadow_nodes_moved),
	   atomic_load(&bytes_read) >> 20, (unsigned long)node_stat_sum(LV_PGSTEAL),
	   (unsigned long)node_stat_sum(LV_RECLAIM_SKIP_BUSY),
	   (unsigned long)node_stat_sum(LV_PAGEOUTRUN), atomic_load(&press_bursts),
	   atomic_load(&press_dry), (unsigned long)node_drains(), atomic_load(&press_first),
	   atomic_load(&anon_faults), atomic_load(&anon_writes), atomic_load(&anon_nomem),
	   atomic_load(&lazyfree_advised), atomic_load(&lazyfree_zero), atomic_load(&brk_ops),
	   atomic_load(&mmap_ops), atomic_load(&file_maps), atomic_load(&munmap_ops),
	   atomic_load(&mm_splits), atomic_load(&mm_churns), atomic_load(&storms),
	   (unsigned long)migrated, (unsigned long)node_stat_sum(LV_PGMIGRATE_FAIL),
	   atomic_load(&mp_ok), atomic_load(&mp_busy), atomic_load(&mp_nomem),
	   atomic_load(&mp_noent), atomic_load(&mp_fault), atomic_load(&mig_calls),
	   atomic_load(&mig_left), atomic_load(&fmig_calls), atomic_load(&fmig_left),
	   atomic_load(&compact_calls), atomic_load(&compact_memcg_calls),
	   atomic_load(&compact_made), (unsigned long)node_stat_sum(LV_COMPACT_ISOLATED),
	   (unsigned long)node_stat_sum(LV_COMPACT_DAEMON_WAKE),
	   (unsigned long)node_stat_sum(LV_COMPACT_STALL), atomic_load(&huge_regions),
	   atomic_load(&huge_nomem), (unsigned long)node_stat_sum(LV_THP_FAULT_ALLOC),
	   (unsigned long)node_stat_sum(LV_THP_FAULT_FALLBACK), atomic_load(&opener_tries),
	   (unsigned long)node_stat_sum(LV_THP_SPLIT_PAGE),
	   (unsigned long)node_stat_sum(LV_THP_SPLIT_PAGE_FAILED), atomic_load(&split_ok),
	   atomic_load(&split_busy), atomic_load(&split_private), atomic_load(&mlock_windows),
	   atomic_load(&mlock_ok), atomic_load(&munlock_ok), atomic_load(&mlockall_ok),
	   atomic_load(&locked_maps), (unsigned long)node_stat_sum(LV_UNEVICTABLE_PGS_MLOCKED),
	   (unsigned long)node_stat_sum(LV_UNEVICTABLE_PGS_MUNLOCKED), atomic_load(&madvise_locked),
	   (unsigned long)node_stat_sum(LV_PSWPOUT), (unsigned long)node_stat_sum(LV_PSWPIN),
	   (unsigned long)node_stat_sum(LV_SWAP_RA), (unsigned long)node_stat_sum(LV_SWAP_RA_HIT),
	   (unsigned long)node_stat_sum(LV_WORKINGSET_REFAULT_ANON),
	   (unsigned long)node_stat_sum(LV_PGSTEAL_ANON), atomic_load(&pageout_calls),
	   atomic_load(&pageout_pages), atomic_load(&swapin_nomem), atomic_load(&swapoff_ok),
	   atomic_load(&swapoff_pages), atomic_load(&swapoff_nomem), atomic_load(&swapon_ok),
	   atomic_load(&swap_max_sets), atomic_load(&swappiness_sets), atomic_load(&swap_checks),
	   atomic_load(&removal_races), (unsigned long)node_stat_sum(LV_LOCK_RETRIES));

	lv_lru_add_drain_all(machine);
	rf = open_memstream(&report, &report_len);
	err = lv_check(machine, rf);
	fclose(rf);
	ok(err == 0, "lv_check with %lu pages in use", (unsigned long)node_stat_sum(LV_NR_CHARGED));
	if (err)
		printf("%s", report);
	free(report);
	/* lv_check() waited for kswapd's pass: the slots stay as they are until the reads. */
	{
		size_t used = 0;
		char why[160];
		bool good = swap_accounting(&used, why, sizeof(why));

		ok(good,
		   "swap accounting at rest: %zu slots in use, charged to the memcgs that hold "
		   "them%s%s",
		   used, good ? "" : ": ", good ? "" : why);
	}

	checked = mm_verify_all();
	ok(checked > 0, "address spaces intact: %lu pages verified, rss matches", checked);
	/* A required path: a very short run may not migrate any. */
	ok(migrated > 0 || opt.duration < 1, "pages migrated during the run (%lu)",
	   (unsigned long)migrated);
	/* Every reader starts at page 0 some time, and a miss there is sequential. */
	ok(!opt.readahead || node_stat_sum(LV_FILE_RA) > 0, "pages read ahead (%lu)",
	   (unsigned long)node_stat_sum(LV_FILE_RA));

	if (paths_list(memcg, false, unneeded, sizeof(unneeded)))
		printf("# not required with --thp never:%s\n", unneeded);
	if (missing_paths(memcg, missing, sizeof(missing)) && opt.duration >= 1)
		ok(0,
		   "every racing path ran; never:%s, though the run went on %.1f s past its %.1f s",
		   missing, extra, opt.duration);
	else if (extra > 0)
		ok(1, "every racing path ran, the last of them %.1f s past the run's %.1f s", extra,
		   opt.duration);
	else
		ok(1, "every racing path ran");
	ok(atomic_load(&totals_backwards) == 0,
	   "event and lock totals (lruvec, mapping, mm) never shrank in %lu readings across %lu "
	   "removals and frees, file closes and mm destroys (%lu times)",
	   atomic_load(&totals_readings), atomic_load(&memcgs_removed),
	   atomic_load(&totals_backwards));

	ok(!memcg || nr_containers < 4 ||
		   (limited[1][0] <= limited[1][1] && limited[3][0] <= limited[3][1]),
	   "limited memcgs within their limits when the run stopped (c1: %zu of %zu pages, c3: "
	   "%zu of %zu)",
	   limited[1][0], limited[1][1], limited[3][0], limited[3][1]);
	ok(!tiny || lv_memcg_usage(tiny) <= TINY_PAGES,
	   "tenant limited to %d pages within it (%llu reclaim passes flushed its folios from "
	   "every CPU's batches)",
	   TINY_PAGES, tiny ? (unsigned long long)lv_memcg_stat(tiny, LV_RECLAIM_DRAIN) : 0);

	for (unsigned int i = 0; i < TABLE_SIZE; i++) {
		struct lv_folio *f = atomic_exchange(&table[i], NULL);

		if (f)
			lv_folio_put(f);
	}
	mm_destroy_all();
	lv_file_close(sparse_file);
	lv_file_close(real_file);
	lv_file_close(bad_file);
	lv_file_close(trunc_file);
	close(real_fd);
	close(bad_fd);
	{
		/*
		 * Nothing maps a swap entry now: a slot still in use holds a swap cache folio
		 * that nothing needs, which swapoff frees.
		 */
		size_t used = swap_slots_used();
		bool off = lv_swap_off(machine, swap1_id) == 0 &&
			   (swap2_id < 0 || lv_swap_off(machine, swap2_id) == 0) &&
			   swap_slots_used() == 0;
		struct lv_memcg *root = lv_memcg_root(machine);

		ok(off && (!root || lv_memcg_swap_usage(root) == 0),
		   "every swap device turned off (%zu slots were in use, by the swap cache), no "
		   "swap charged (%zu)",
		   used, root ? lv_memcg_swap_usage(root) : 0);
	}
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
		bool zero = (!tiny || lv_memcg_usage(tiny) == 0) &&
			    (!swap_memcg || (lv_memcg_usage(swap_memcg) == 0 &&
					     lv_memcg_swap_usage(swap_memcg) == 0));
		bool removed = (!tiny || lv_memcg_remove(tiny) == 0) &&
			       (!presser || lv_memcg_remove(presser) == 0) &&
			       (!swap_memcg || lv_memcg_remove(swap_memcg) == 0);

		for (int i = nr_containers - 1; i >= 0; i--) {
			if (lv_memcg_usage(containers[i]) != 0 ||
			    lv_memcg_swap_usage(containers[i]) != 0) {
				zero = false;
				printf("# memcg c%d still charged %zu pages and %zu swap slots\n",
				       i, lv_memcg_usage(containers[i]),
				       lv_memcg_swap_usage(containers[i]));
			}
			if (lv_memcg_remove(containers[i]) != 0)
				removed = false;
		}
		ok(zero, "every memcg uncharged, of memory and swap");
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
	lock_watchdog_stop();
	return tests_failed ? 1 : 0;
}
