// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * swap - the swapping load: tenants whose address spaces are larger than their memory limits,
 * so that every round trip of a page through the swap device is reclaim, a swap-out, a fault
 * and a swap-in, with page cache readers beside them.
 *
 * Not one of the published workloads. Containers are the tenants, one thread each, each with
 * an address space (--region, 1.5 x its --limit by default) in a memcg of its own; one or two
 * page cache readers run beside them, each in a memcg of its own too. Huge pages are on for
 * every region (cfg.thp always) and kcompactd runs, proactively as well, so the tenants' first
 * touches map huge pages that reclaim must split before it can swap them out. Before the timed
 * part every tenant writes every page of its region once, so the device holds the overflow
 * and its slots have been written once (the in-memory device maps its area lazily). Then, per
 * op of a tenant (64 page accesses, one 8-byte word per page):
 *
 *   a quarter of the ops read 64 consecutive pages at a cursor that goes round the region
 *   and check each word, a quarter write them, and half write 64 pages chosen at random.
 *
 * A written word is a hash of (tenant, page, generation), the generation counting the
 * page's writes, so a read that does not find the last word written finds swapped data lost
 * or misplaced: the run stops there with a message naming the page. A page cache reader reads
 * a sparse file of its own in 4 KiB lv_file_read()s under its memcg's limit.
 *
 * Throughput is faults per second per tenant: the accesses that found their page not present
 * (a swap entry in its page table entry). Every page was written before the timed part, so
 * every such fault is a swap-in fault: one that read its page from the device (pswpin minus
 * the pages read ahead, swap_ra), or that found it read ahead in the swap cache (swap_ra_hit);
 * counted per tenant from its memcg's counters.
 *
 * The ceiling: after the engine's round, as many threads as there are tenants do the same
 * number of page transfers as the round's pswpout and pswpin, as bare 4 KiB copies between a
 * region of the size of the tenants' limits (a page out of it to the next slot of the
 * thread's share of a device-sized area, a slot at random back into a page at random), both
 * faulted in before the clock starts, with no cache management at all. With --swap-file the
 * copies are pwrite(2)s and pread(2)s of a file of the device's size instead. The ratio of
 * the engine's swap traffic to it says what the cache management leaves of the bare copying.
 */
#define _GNU_SOURCE
#include "lvbench.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BURST	      64   /* page accesses per op */
#define READ_SIZE     4096 /* a page cache reader's read */
#define CEIL_SLICES   5	   /* timed parts of each round's ceiling: its spread */
#define SWAP_CLUSTER  (2ull << 20)
#define PROACTIVENESS 20 /* the kernel's default vm.compaction_proactiveness */

struct swap_params {
	unsigned int limit_mib;	       /* each tenant's memcg limit; LVB_UNSET: sized */
	unsigned int region_mib;       /* each tenant's address space; LVB_UNSET: 1.5 x limit */
	unsigned int readers;	       /* page cache readers; LVB_UNSET: 1, 2 from 4 tenants */
	unsigned int reader_limit_mib; /* each reader's memcg limit; LVB_UNSET: memory / 16 */
	unsigned int swap_mib;	       /* LVB_UNSET: twice the overflow, plus a margin */
	const char *swap_file;	       /* NULL: the in-memory device */
};

#define SP(field) offsetof(struct swap_params, field)

static const struct lvb_opt swap_opts[] = {
	{ "limit", LVB_OPT_MIB, SP(limit_mib), 4, 1u << 20, NULL, "SIZE",
	  "memory limit of each tenant's container; a bare number is MiB",
	  "memory / 2 / tenants, at least 4M" },
	{ "region", LVB_OPT_MIB, SP(region_mib), 1, 1u << 16, NULL, "SIZE",
	  "each tenant's address space; a bare number is MiB", "--limit x 1.5" },
	{ "readers", LVB_OPT_UINT, SP(readers), 0, 16, NULL, "N",
	  "page cache readers beside the tenants, 0..16", "1; from 4 tenants on: 2" },
	{ "file-limit", LVB_OPT_MIB, SP(reader_limit_mib), 1, 1u << 20, NULL, "SIZE",
	  "memory limit of each page cache reader's container", "memory / 16, at least 4M" },
	{ "swap-size", LVB_OPT_MIB, SP(swap_mib), 2, 1u << 20, NULL, "SIZE",
	  "the swap device, in whole 2 MiB clusters (rounded down)", "the tenants' regions + 8M" },
	{ "swap-file", LVB_OPT_STRING, SP(swap_file), 0, 0, NULL, "PATH",
	  "swap to this file: created (or truncated), sized, and\n"
	  "removed after each round; a regular file only",
	  "an in-memory device" },
	{ 0 }
};

static void swap_defaults(void *params)
{
	struct swap_params *p = params;

	*p = (struct swap_params){ .limit_mib = LVB_UNSET,
				   .region_mib = LVB_UNSET,
				   .readers = LVB_UNSET,
				   .reader_limit_mib = LVB_UNSET,
				   .swap_mib = LVB_UNSET };
}

static uint64_t overflow_mib(const struct lvb_common *opt, const struct swap_params *p)
{
	return p->region_mib > p->limit_mib
		       ? (uint64_t)opt->containers * (p->region_mib - p->limit_mib)
		       : 0;
}

/* A swap file must be a regular file (it is truncated and removed) in a writable directory. */
static int check_swap_file(const char *path)
{
	char *copy = strdup(path);
	struct stat st;
	int err = 0;

	if (!copy)
		return lvb_usage_error("--swap-file: out of memory");
	if (!stat(path, &st) && !S_ISREG(st.st_mode))
		err = lvb_usage_error("--swap-file: '%s' exists and is not a regular file", path);
	else if (access(dirname(copy), W_OK | X_OK))
		err = lvb_usage_error("--swap-file: cannot create files beside '%s': %s", path,
				      strerror(errno));
	free(copy);
	return err;
}

static int swap_prepare(struct lvb_common *opt, void *params)
{
	struct swap_params *p = params;
	uint64_t need;

	if (opt->threads != LVB_UNSET)
		return lvb_usage_error("swap: option '--threads' does not apply (one thread per "
				       "tenant and per reader)");
	if (opt->sweep.n)
		return lvb_usage_error("swap: option '--sweep' does not apply");
	if (opt->nodes != 1)
		return lvb_usage_error("swap: --nodes must be 1");
	if (opt->containers == LVB_UNSET)
		opt->containers = 1;
	if (opt->memory_mib == LVB_UNSET)
		opt->memory_mib = 512;
	if (opt->duration == 0)
		opt->duration = opt->compare ? 5.0 : 3.0;
	if (opt->rounds == LVB_UNSET)
		opt->rounds = opt->compare ? 3 : 1;
	if (p->readers == LVB_UNSET)
		p->readers = opt->containers >= 4 ? 2 : 1;
	if (p->limit_mib == LVB_UNSET) {
		p->limit_mib = opt->memory_mib / 2 / opt->containers;
		if (p->limit_mib < 4)
			p->limit_mib = 4;
	}
	if (p->region_mib == LVB_UNSET)
		p->region_mib = p->limit_mib + p->limit_mib / 2;
	if (p->reader_limit_mib == LVB_UNSET) {
		p->reader_limit_mib = opt->memory_mib / 16;
		if (p->reader_limit_mib < 4)
			p->reader_limit_mib = 4;
	}
	if (p->swap_mib == LVB_UNSET) {
		/*
		 * A fault frees its slot, so the slots in use are the overflow and the pages read
		 * ahead: twice the overflow never fills, and only the slots written use memory.
		 */
		uint64_t mib = 2 * overflow_mib(opt, p) + 8;

		if (mib > 1u << 20)
			return lvb_usage_error("swap: the overflow needs more than 1 TiB of swap");
		p->swap_mib = (unsigned int)((mib + 1) / 2 * 2);
	}
	if ((uint64_t)opt->containers + p->readers > LVB_MAX_CONTAINERS)
		return lvb_usage_error("swap: %u tenants and %u readers are more than %u "
				       "containers",
				       opt->containers, p->readers, LVB_MAX_CONTAINERS);
	opt->threads = opt->containers + p->readers;
	/* What the containers may keep must fit, or the run measures global reclaim instead. */
	need = (uint64_t)opt->containers * p->limit_mib +
	       (uint64_t)p->readers * p->reader_limit_mib;
	if (need > opt->memory_mib * 9ull / 10)
		return lvb_usage_error("swap: the containers' limits add up to %llu MiB of %u MiB: "
				       "lower --limit or --file-limit, or raise --memory",
				       (unsigned long long)need, opt->memory_mib);
	/* Every page swapped out needs a slot; the cluster of each CPU slot may sit half used. */
	if (p->swap_mib / 2 * 2 < overflow_mib(opt, p) + 2)
		return lvb_usage_error("swap: --swap-size %u MiB cannot hold the tenants' overflow "
				       "(%llu MiB beyond their limits, and a cluster)",
				       p->swap_mib, (unsigned long long)overflow_mib(opt, p));
	if (p->swap_file && check_swap_file(p->swap_file))
		return -1;
	return 0;
}

/* ---- the tenants and readers ----------------------------------------------------------------- */

enum swap_counter {
	SC_SWEEP_READS,	  /* pages a sweep read and checked */
	SC_SWEEP_WRITES,  /* pages a sweep wrote */
	SC_RANDOM_WRITES, /* pages written at random */
	SC_ACCESS_ENOMEM, /* a tenant's access found no memory (or no swap) even after reclaim */
	SC_FILE_READS,	  /* a reader's 4 KiB reads */
	SC_READ_ENOMEM,	  /* a reader's lv_file_read() found no memory even after reclaim */
	SC_SETUP_PSWPOUT, /* pages swapped out while the regions were first written */
	SC_SETUP_THP,	  /* huge pages faulted in then */
	SC_NR_COUNTERS
};

static const char *const swap_counter_names[SC_NR_COUNTERS] = {
	[SC_SWEEP_READS] = "sweep_reads",     [SC_SWEEP_WRITES] = "sweep_writes",
	[SC_RANDOM_WRITES] = "random_writes", [SC_ACCESS_ENOMEM] = "access_enomem",
	[SC_FILE_READS] = "file_reads",	      [SC_READ_ENOMEM] = "read_enomem",
	[SC_SETUP_PSWPOUT] = "setup_pswpout", [SC_SETUP_THP] = "setup_thp_fault_alloc",
};

_Static_assert(SC_NR_COUNTERS <= LVB_MAX_COUNTERS, "too many counters");

/* One tenant's or reader's state: set up by the main thread, then used by its own thread only. */
struct swap_thread {
	bool reader;
	unsigned int tenant; /* its index, for messages and the words */
	const char *design;
	/* tenant */
	struct lv_mm *mm;
	uint64_t base, pages, cursor;
	uint32_t *gen; /* [pages]: writes that succeeded; written by this thread only */
	uint64_t salt;
	/* reader */
	struct lv_file *file;
	struct lv_memcg *memcg;
	uint64_t size, off;
	char *buf;
	uint64_t rng;
} __attribute__((aligned(64)));

static uint64_t sw_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* The word of generation @gen of @page; generation 0 is a page never written: zeros. */
static uint64_t word(const struct swap_thread *st, uint64_t page, uint32_t gen)
{
	return gen ? mix64(st->salt ^ mix64(page * 0x100000001b3ull + gen)) | 1 : 0;
}

/* Each page's word at its own offset, so a page put back at the wrong address shows. */
static uint64_t word_addr(const struct swap_thread *st, uint64_t page)
{
	return st->base + page * LV_PAGE_SIZE + (page % (LV_PAGE_SIZE / 8)) * 8;
}

/* The swap file of the round running, removed even when a check ends the process. */
static const char *volatile swap_file_open;

/*
 * A wrong word is data lost by swap (or by whatever moved the page): nothing measured after
 * it means anything, and the state is best seen as it is, so the process ends here.
 */
static __attribute__((noreturn)) void data_lost(const struct swap_thread *st, uint64_t page,
						uint64_t got)
{
	fprintf(stderr,
		"lvbench: swap: %s design, tenant %u: page %llu (address 0x%llx) holds "
		"0x%016llx, expected 0x%016llx (its write number %u): data lost or misplaced by "
		"swap-out, swap-in or migration; the run is aborted\n",
		st->design, st->tenant, (unsigned long long)page,
		(unsigned long long)word_addr(st, page), (unsigned long long)got,
		(unsigned long long)word(st, page, st->gen[page]), st->gen[page]);
	fflush(NULL);
	if (swap_file_open)
		unlink(swap_file_open);
	_exit(LVB_EXIT_FAIL);
}

static void write_page(struct lvb_worker *w, struct swap_thread *st, uint64_t page,
		       enum swap_counter what)
{
	uint64_t v = word(st, page, st->gen[page] + 1);
	int err = lv_mm_write(st->mm, word_addr(st, page), &v, sizeof(v));

	if (!err) {
		st->gen[page]++;
		w->counters[what]++;
		w->ops++;
	} else if (err == -ENOMEM) {
		w->counters[SC_ACCESS_ENOMEM]++;
	} else {
		lvb_worker_error(w, "lv_mm_write", -err);
	}
}

static void read_page(struct lvb_worker *w, struct swap_thread *st, uint64_t page)
{
	uint64_t v = 0;
	int err = lv_mm_read(st->mm, word_addr(st, page), &v, sizeof(v));

	if (!err) {
		if (v != word(st, page, st->gen[page]))
			data_lost(st, page, v);
		w->counters[SC_SWEEP_READS]++;
		w->ops++;
	} else if (err == -ENOMEM) {
		w->counters[SC_ACCESS_ENOMEM]++;
	} else {
		lvb_worker_error(w, "lv_mm_read", -err);
	}
}

static void tenant_step(struct lvb_worker *w, struct swap_thread *st)
{
	unsigned int kind = (unsigned int)(sw_rand(&st->rng) >> 62); /* 0 read, 1 write, 2-3 */

	for (unsigned int i = 0; i < BURST; i++) {
		uint64_t page;

		if (kind >= 2) {
			write_page(w, st, sw_rand(&st->rng) % st->pages, SC_RANDOM_WRITES);
			continue;
		}
		page = st->cursor;
		st->cursor = st->cursor + 1 == st->pages ? 0 : st->cursor + 1;
		if (kind == 0)
			read_page(w, st, page);
		else
			write_page(w, st, page, SC_SWEEP_WRITES);
	}
}

static void reader_step(struct lvb_worker *w, struct swap_thread *st)
{
	long n = lv_file_read(st->file, st->memcg, st->buf, READ_SIZE, st->off);

	if (n > 0) {
		w->counters[SC_FILE_READS]++;
		st->off += (uint64_t)n;
	} else if (n == -ENOMEM) {
		w->counters[SC_READ_ENOMEM]++;
	} else {
		lvb_worker_error(w, "lv_file_read", (int)-n);
		st->off += READ_SIZE;
	}
	if (st->off >= st->size)
		st->off = 0;
}

static void swap_step(struct lvb_worker *w)
{
	struct swap_thread *st = w->priv;

	if (st->reader)
		reader_step(w, st);
	else
		tenant_step(w, st);
}

static const struct lvb_thread_ops swap_thread_ops = {
	.step = swap_step,
	.counter_names = swap_counter_names,
	.nr_counters = SC_NR_COUNTERS,
};

/* The faults of a tenant so far: see the comment at the top. */
static uint64_t memcg_faults(struct lv_memcg *memcg)
{
	uint64_t in = lv_memcg_stat(memcg, LV_PSWPIN), ra = lv_memcg_stat(memcg, LV_SWAP_RA);

	return (in > ra ? in - ra : 0) + lv_memcg_stat(memcg, LV_SWAP_RA_HIT);
}

static uint64_t node_stat(struct lv_machine *m, enum lv_stat_item item)
{
	return lv_node_stat(m, 0, item);
}

/* setup_tenant - an mm in @memcg under its limit, and every page of its region written once. */
static int setup_tenant(struct lvb_env *env, struct lvb_worker *w, struct swap_thread *st,
			const struct swap_params *p, struct lv_memcg *memcg)
{
	int err;

	lv_memcg_set_max(memcg, ((size_t)p->limit_mib << 20) / LV_PAGE_SIZE);
	st->mm = lv_mm_create(env->m, memcg, 0);
	if (!st->mm)
		return -errno;
	st->pages = ((uint64_t)p->region_mib << 20) / LV_PAGE_SIZE;
	st->gen = calloc(st->pages, sizeof(*st->gen));
	if (!st->gen)
		return -ENOMEM;
	err = lv_mmap(st->mm, st->pages * LV_PAGE_SIZE, &st->base);
	for (uint64_t page = 0; !err && page < st->pages; page++) {
		uint64_t v = word(st, page, 1);

		err = lv_mm_write(st->mm, word_addr(st, page), &v, sizeof(v));
		if (!err)
			st->gen[page] = 1;
		else if (err == -ENOMEM)
			w->counters[SC_ACCESS_ENOMEM]++;
		if (err == -ENOMEM)
			err = 0; /* that page stays unwritten: it reads as zeros */
	}
	if (err)
		fprintf(stderr, "lvbench: swap: tenant %u: writing its region: %s\n", st->tenant,
			strerror(-err));
	return err;
}

/* ---- the device ------------------------------------------------------------------------------ */

/* open_swap_file - create or truncate @path and give it @size bytes of blocks. */
static int open_swap_file(const char *path, uint64_t size)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	struct stat st;
	int err;

	if (fd < 0) {
		err = -errno;
		fprintf(stderr, "lvbench: swap: --swap-file %s: %s\n", path, strerror(errno));
		return err;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "lvbench: swap: --swap-file %s: not a regular file\n", path);
		close(fd);
		return -EINVAL;
	}
	/* Allocated up front, as swapon(8) wants a file without holes; sparse if unsupported. */
	err = posix_fallocate(fd, 0, (off_t)size);
	if (err && (err != EOPNOTSUPP && err != EINVAL)) {
		fprintf(stderr, "lvbench: swap: --swap-file %s: allocating %llu MiB: %s\n", path,
			(unsigned long long)(size >> 20), strerror(err));
		close(fd);
		unlink(path);
		return -err;
	}
	if (err && ftruncate(fd, (off_t)size)) {
		err = -errno;
		close(fd);
		unlink(path);
		return err;
	}
	return fd;
}

static uint64_t swap_bytes(const struct swap_params *p)
{
	return (uint64_t)p->swap_mib / 2 * SWAP_CLUSTER;
}

/* ---- the ceiling ----------------------------------------------------------------------------- */

/*
 * The ceiling of each design, over its rounds: every timed slice (for the spread), each round's
 * ceiling and swap traffic, and the totals. A workload's results are per round; these are kept
 * here, as lvbench runs one configuration per process.
 */
struct ceiling_acc {
	double pages, seconds;
	double *slice_rate;
	unsigned int nr_slices;
	double *round_ceiling, *round_traffic; /* pages/s */
	unsigned int nr_rounds;
	bool failed;
};

static struct ceiling_acc ceiling_of[2]; /* by enum lv_lock_design; main thread only */

/*
 * What the ceiling's threads share: set before they start and read-only then, but for @t
 * (written by thread 0 alone, read after the join) and @error (atomic).
 */
struct ceil_shared {
	pthread_barrier_t barrier;
	char *pages;		/* nr threads x limit */
	char *dev;		/* the device-sized area, or NULL with a file */
	int fd;			/* the file, or -1 */
	uint64_t page_count;	/* per thread */
	uint64_t slot_count;	/* per thread: its share of the device */
	uint64_t out[2], in[2]; /* per thread and slice: transfers (the last slice gets the rest) */
	double t[CEIL_SLICES + 1];
	unsigned int nr_threads;
	int error;
};

struct ceil_arg {
	struct ceil_shared *sh;
	unsigned int id;
	uint64_t rng;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void ceil_io(struct ceil_shared *sh, bool out, char *page, uint64_t slot)
{
	off_t off = (off_t)(slot * LV_PAGE_SIZE);
	ssize_t n;

	if (sh->dev) {
		if (out)
			memcpy(sh->dev + off, page, LV_PAGE_SIZE);
		else
			memcpy(page, sh->dev + off, LV_PAGE_SIZE);
		return;
	}
	n = out ? pwrite(sh->fd, page, LV_PAGE_SIZE, off) : pread(sh->fd, page, LV_PAGE_SIZE, off);
	if (n != LV_PAGE_SIZE)
		__atomic_store_n(&sh->error, n < 0 ? errno : EIO, __ATOMIC_RELAXED);
}

static void *ceil_main(void *arg)
{
	struct ceil_arg *a = arg;
	struct ceil_shared *sh = a->sh;
	char *pages = sh->pages + a->id * sh->page_count * LV_PAGE_SIZE;
	uint64_t first = (uint64_t)a->id * sh->slot_count, next = 0;

	for (unsigned int s = 0; s < CEIL_SLICES; s++) {
		bool last = s + 1 == CEIL_SLICES;
		uint64_t nout = sh->out[last], nin = sh->in[last], n = nout + nin, acc = 0;

		pthread_barrier_wait(&sh->barrier);
		if (a->id == 0)
			sh->t[s] = now_s();
		/* The two kinds interleaved evenly, as reclaim and faults interleave. */
		for (uint64_t i = 0; i < n; i++) {
			char *page = pages + sw_rand(&a->rng) % sh->page_count * LV_PAGE_SIZE;

			acc += nout;
			if (acc >= n) {
				acc -= n;
				ceil_io(sh, true, page, first + next);
				next = next + 1 == sh->slot_count ? 0 : next + 1;
			} else {
				ceil_io(sh, false, page, first + sw_rand(&a->rng) % sh->slot_count);
			}
		}
		__asm__ __volatile__("" : : "r"(pages) : "memory");
	}
	pthread_barrier_wait(&sh->barrier);
	if (a->id == 0)
		sh->t[CEIL_SLICES] = now_s();
	return NULL;
}

/* A region faulted in, on huge pages if @huge (as the machine's frames are). */
static char *ceil_map(size_t bytes, bool huge)
{
	char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (huge)
		madvise(p, bytes, MADV_HUGEPAGE);
	memset(p, 0x5a, bytes);
	return p;
}

/*
 * measure_ceiling - @nout page copies out and @nin back, on @threads threads, timed in
 * CEIL_SLICES slices, into @acc. Return: 0 or -errno.
 */
static int measure_ceiling(const struct lvb_common *opt, const struct swap_params *p,
			   unsigned int threads, uint64_t nout, uint64_t nin,
			   struct ceiling_acc *acc)
{
	struct ceil_shared sh = { .fd = -1, .nr_threads = threads };
	size_t pages_bytes = (size_t)threads * ((size_t)p->limit_mib << 20);
	uint64_t dev_bytes = swap_bytes(p);
	struct ceil_arg *args = calloc(threads, sizeof(*args));
	pthread_t *tids = calloc(threads, sizeof(*tids));
	double *rates, *round, *traffic;
	unsigned int created = 0;
	int err = 0;

	sh.page_count = ((uint64_t)p->limit_mib << 20) / LV_PAGE_SIZE;
	sh.slot_count = dev_bytes / LV_PAGE_SIZE / threads;
	sh.out[0] = nout / threads / CEIL_SLICES;
	sh.in[0] = nin / threads / CEIL_SLICES;
	sh.out[1] = nout / threads - sh.out[0] * (CEIL_SLICES - 1);
	sh.in[1] = nin / threads - sh.in[0] * (CEIL_SLICES - 1);
	rates = realloc(acc->slice_rate, (acc->nr_slices + CEIL_SLICES) * sizeof(*rates));
	if (rates)
		acc->slice_rate = rates;
	round = realloc(acc->round_ceiling, (acc->nr_rounds + 1) * sizeof(*round));
	if (round)
		acc->round_ceiling = round;
	traffic = realloc(acc->round_traffic, (acc->nr_rounds + 1) * sizeof(*traffic));
	if (traffic)
		acc->round_traffic = traffic;
	sh.pages = ceil_map(pages_bytes, true);
	if (!args || !tids || !rates || !round || !traffic || !sh.pages || !sh.slot_count) {
		err = -ENOMEM;
	} else if (p->swap_file) {
		sh.fd = open_swap_file(p->swap_file, dev_bytes);
		if (sh.fd < 0)
			err = sh.fd;
		/*
		 * Written once, a page at a time as swap-out writes: larger writes would give
		 * the host's page cache large folios, on which a 4 KiB pwrite or pread costs
		 * more than twice as much (ext4 on Linux 6.x), and the ceiling would fall below
		 * the engine.
		 */
		for (uint64_t off = 0; !err && off < dev_bytes; off += LV_PAGE_SIZE)
			if (pwrite(sh.fd, sh.pages + off % pages_bytes, LV_PAGE_SIZE, (off_t)off) !=
			    LV_PAGE_SIZE)
				err = -EIO;
	} else {
		sh.dev = ceil_map(dev_bytes, false);
		if (!sh.dev)
			err = -ENOMEM;
	}
	if (!err)
		err = -pthread_barrier_init(&sh.barrier, NULL, threads);
	for (; !err && created < threads; created++) {
		args[created] =
			(struct ceil_arg){ &sh, created,
					   opt->seed * 0x9e3779b97f4a7c15ull + created + 7 };
		err = -pthread_create(&tids[created], NULL, ceil_main, &args[created]);
		if (err && created) {
			/* The threads started wait for the others at the barrier for ever. */
			fprintf(stderr, "lvbench: swap: ceiling: cannot create thread %u: %s\n",
				created, strerror(-err));
			fflush(NULL);
			_exit(LVB_EXIT_FAIL);
		}
	}
	for (unsigned int t = 0; t < created; t++)
		pthread_join(tids[t], NULL);
	if (created)
		pthread_barrier_destroy(&sh.barrier);
	if (!err && sh.error)
		err = -sh.error;
	if (!err) {
		for (unsigned int s = 0; s < CEIL_SLICES; s++) {
			bool last = s + 1 == CEIL_SLICES;
			double n = (double)(sh.out[last] + sh.in[last]) * threads;

			if (n > 0 && sh.t[s + 1] > sh.t[s])
				acc->slice_rate[acc->nr_slices++] = n / (sh.t[s + 1] - sh.t[s]);
		}
		acc->pages += (double)(nout / threads + nin / threads) * threads;
		acc->seconds += sh.t[CEIL_SLICES] - sh.t[0];
		acc->round_ceiling[acc->nr_rounds] = (double)(nout / threads + nin / threads) *
						     threads / (sh.t[CEIL_SLICES] - sh.t[0]);
	}
	if (sh.pages)
		munmap(sh.pages, pages_bytes);
	if (sh.dev)
		munmap(sh.dev, dev_bytes);
	if (sh.fd >= 0) {
		close(sh.fd);
		unlink(p->swap_file);
	}
	free(args);
	free(tids);
	return err;
}

/* ---- one round ------------------------------------------------------------------------------- */

/*
 * finish_swap - turn the device off once every mm is gone: nothing may be left on it, nor
 * charged to any container's swap. Return: the failures found (each described).
 */
static unsigned int finish_swap(struct lvb_env *env, int id)
{
	unsigned int failures = 0;
	int err = lv_swap_off(env->m, id);

	if (err) {
		fprintf(stderr, "lvbench: swap: %s design: lv_swap_off with no mm left: %s\n",
			lvb_lock_names[env->design], strerror(-err));
		return 1;
	}
	for (unsigned int c = 0; c < env->nr_memcgs; c++) {
		size_t left = lv_memcg_swap_usage(env->memcgs[c]);

		if (left) {
			fprintf(stderr,
				"lvbench: swap: %s design: memcg c%u still has %zu swap slots "
				"charged after swapoff\n",
				lvb_lock_names[env->design], c, left);
			failures++;
		}
	}
	return failures;
}

static int swap_run(const struct lvb_common *opt, const void *params, enum lv_lock_design design,
		    struct lvb_result *res)
{
	const struct swap_params *p = params;
	unsigned int tenants = opt->containers, n = opt->threads, nr_ready = 0;
	struct swap_thread *threads = NULL;
	struct lvb_worker *workers = NULL;
	uint64_t *faults0 = NULL, pswpout0, thp0;
	struct lvb_common o = *opt; /* the readers' containers too */
	struct lvb_env env;
	int err, id = -1, fd = -1;

	o.containers = n;
	err = lvb_env_create(&env, &o, design,
			     LVB_ENV_DATA | LVB_ENV_THP_ALWAYS | LVB_ENV_PROACTIVE(PROACTIVENESS));
	if (err)
		return err;
	err = -ENOMEM;
	workers = lvb_zalloc(n * sizeof(*workers));
	threads = lvb_zalloc(n * sizeof(*threads));
	faults0 = calloc(tenants, sizeof(*faults0));
	if (!workers || !threads || !faults0)
		goto out;
	if (p->swap_file) {
		fd = open_swap_file(p->swap_file, swap_bytes(p));
		if (fd < 0) {
			err = fd;
			goto out;
		}
		swap_file_open = p->swap_file;
	}
	id = lv_swap_on(env.m, fd, swap_bytes(p), 0);
	if (id < 0) {
		err = id;
		fprintf(stderr, "lvbench: swap: lv_swap_on(%s, %u MiB): %s\n",
			p->swap_file ? p->swap_file : "in memory", p->swap_mib, strerror(-err));
		goto out;
	}
	pswpout0 = node_stat(env.m, LV_PSWPOUT);
	thp0 = node_stat(env.m, LV_THP_FAULT_ALLOC);
	for (; nr_ready < n; nr_ready++) {
		unsigned int t = nr_ready;
		struct swap_thread *st = &threads[t];

		st->tenant = t;
		st->design = lvb_lock_names[design];
		st->rng = opt->seed * 0x9e3779b97f4a7c15ull + t + 1;
		st->salt = mix64(opt->seed ^ ((uint64_t)t << 32));
		st->memcg = env.memcgs[t];
		workers[t].priv = st;
		if (t < tenants) {
			err = setup_tenant(&env, &workers[t], st, p, env.memcgs[t]);
			if (err) {
				nr_ready++;
				goto out;
			}
			continue;
		}
		st->reader = true;
		lv_memcg_set_max(env.memcgs[t], ((size_t)p->reader_limit_mib << 20) / LV_PAGE_SIZE);
		st->size = 64ull << 30;
		st->file = lv_file_open(env.m, -1, st->size);
		st->buf = aligned_alloc(LV_PAGE_SIZE, READ_SIZE);
		if (!st->file || !st->buf) {
			err = st->file ? -ENOMEM : -errno;
			nr_ready++;
			goto out;
		}
	}
	workers[0].counters[SC_SETUP_PSWPOUT] = node_stat(env.m, LV_PSWPOUT) - pswpout0;
	workers[0].counters[SC_SETUP_THP] = node_stat(env.m, LV_THP_FAULT_ALLOC) - thp0;
	for (unsigned int t = 0; t < tenants; t++)
		faults0[t] = memcg_faults(env.memcgs[t]);
	err = lvb_run_threads(&env, workers, &swap_thread_ops, res);
	if (!err) {
		/* A tenant's amount is its faults; a reader faults nothing in. */
		res->samples = calloc(tenants, sizeof(*res->samples));
		for (unsigned int t = 0; t < n; t++) {
			uint64_t f = t < tenants ? memcg_faults(env.memcgs[t]) - faults0[t] : 0;

			res->thread_amount[t] = f;
			if (t < tenants && res->samples && res->elapsed > 0)
				res->samples[res->nr_samples++] = (double)f / res->elapsed;
		}
		if (!res->samples)
			err = -ENOMEM;
	}
out:
	for (unsigned int t = 0; t < nr_ready; t++) {
		lv_mm_destroy(threads[t].mm);
		free(threads[t].gen);
		if (threads[t].file)
			lv_file_close(threads[t].file);
		free(threads[t].buf);
	}
	if (id >= 0)
		res->failures += finish_swap(&env, id);
	res->failures += lvb_env_destroy(&env);
	if (fd >= 0) {
		close(fd);
		unlink(p->swap_file);
		swap_file_open = NULL;
	}
	free(faults0);
	free(threads);
	free(workers);
	/* After the machine is gone, so that the ceiling's memory never adds to the engine's. */
	if (!err) {
		uint64_t nout = res->vmstat[LV_PSWPOUT], nin = res->vmstat[LV_PSWPIN];
		struct ceiling_acc *acc = &ceiling_of[design];

		if (nout + nin >= tenants) {
			err = measure_ceiling(opt, p, tenants, nout, nin, acc);
			if (!err)
				acc->round_traffic[acc->nr_rounds++] =
					(double)(nout + nin) / res->elapsed;
			if (err) {
				fprintf(stderr, "lvbench: swap: ceiling: %s\n", strerror(-err));
				acc->failed = true;
				err = 0;
				res->failures++;
			}
		}
	}
	return err;
}

/* ---- output ---------------------------------------------------------------------------------- */

static double swap_traffic(const struct lvb_series *s)
{
	return s->elapsed > 0 ? (double)(s->vmstat[LV_PSWPIN] + s->vmstat[LV_PSWPOUT]) / s->elapsed
			      : 0;
}

static double ceiling_rate(const struct lvb_series *s)
{
	const struct ceiling_acc *a = &ceiling_of[s->design];

	return a->seconds > 0 ? a->pages / a->seconds : 0;
}

static void ceiling_spread(const struct lvb_series *s, struct lvb_stats *st)
{
	const struct ceiling_acc *a = &ceiling_of[s->design];

	if (lvb_stats_compute(a->slice_rate, a->nr_slices, st))
		memset(st, 0, sizeof(*st));
}

static double per_s(const struct lvb_series *s, uint64_t v)
{
	return s->elapsed > 0 ? (double)v / s->elapsed : 0;
}

/*
 * end_hwm_kib - VmHWM now, after every round and ceiling, and at least what the rounds read: the
 * kernel's peak follows RSS counters that are approximate, so a later reading can be a little
 * lower than an earlier one.
 */
static uint64_t end_hwm_kib(const struct lvb_series *s, unsigned int n)
{
	uint64_t rss, hwm;

	lvb_proc_memory(&rss, &hwm);
	for (unsigned int d = 0; d < n; d++)
		if (s[d].vm_hwm_kib > hwm)
			hwm = s[d].vm_hwm_kib;
	return hwm;
}

/* The budget VmHWM is held to: the machine's memory and the in-memory device. */
static uint64_t hwm_budget_mib(const struct lvb_common *opt, const struct swap_params *p)
{
	return (uint64_t)opt->memory_mib * opt->nodes + (p->swap_file ? 0 : swap_bytes(p) >> 20);
}

static const enum lv_stat_item swap_items[] = {
	LV_PSWPIN,
	LV_PSWPOUT,
	LV_SWAP_RA,
	LV_SWAP_RA_HIT,
	LV_WORKINGSET_REFAULT_ANON,
	LV_WORKINGSET_ACTIVATE_ANON,
	LV_WORKINGSET_REFAULT,
	LV_PGSCAN_ANON,
	LV_PGSTEAL_ANON,
	LV_THP_FAULT_ALLOC,
	LV_THP_SPLIT_PAGE,
	LV_COMPACT_DAEMON_WAKE,
	LV_PGMIGRATE_SUCCESS,
	LV_SWAP_WRITE_ERROR,
	LV_SWAP_READ_ERROR,
};

static void row(FILE *out, const char *label, const struct lvb_series *s, unsigned int n,
		double (*f)(const struct lvb_series *), const char *fmt)
{
	fprintf(out, "%-28s", label);
	for (unsigned int d = 0; d < n; d++)
		fprintf(out, fmt, f(&s[d]));
	fputc('\n', out);
}

static double faults_per_s(const struct lvb_series *s)
{
	return lvb_series_rate(s);
}

static double accesses_per_s(const struct lvb_series *s)
{
	return per_s(s, s->ops);
}

/* The readers' MB/s: what the CPU time the tenants leave buys the page cache beside them. */
static double file_mb_per_s(const struct lvb_series *s)
{
	return per_s(s, s->counters[SC_FILE_READS]) * READ_SIZE * 1e-6;
}

static double ceiling_ratio(const struct lvb_series *s)
{
	return ceiling_rate(s) > 0 ? 100 * swap_traffic(s) / ceiling_rate(s) : 0;
}

static double lru_fraction(const struct lvb_series *s)
{
	struct lv_lock_stat l = {
		.acquired = s->locks[LV_LOCK_CLASS_LRUVEC].acquired +
			    s->locks[LV_LOCK_CLASS_NODE].acquired,
		.contended = s->locks[LV_LOCK_CLASS_LRUVEC].contended +
			     s->locks[LV_LOCK_CLASS_NODE].contended,
	};

	return lvb_contended_fraction(&l);
}

static const char *times(char *buf, size_t size, double a, double b)
{
	if (b > 0)
		snprintf(buf, size, "%.2fx", a / b);
	else
		snprintf(buf, size, "%s", a > 0 ? "inf" : "n/a");
	return buf;
}

static void swap_print_extra(FILE *out, const struct lvb_common *opt, const void *params,
			     const struct lvb_series *s, unsigned int n,
			     const struct lvb_ceiling *c)
{
	const struct swap_params *p = params;
	uint64_t hwm, budget = hwm_budget_mib(opt, p);
	char r1[32], r2[32], r3[32];

	(void)c;
	fprintf(out,
		"\nswap: %u tenant%s (memcg limit %u MiB, address space %u MiB each), %u page "
		"cache\nreader%s (memcg limit %u MiB each), %s swap of %u MiB, THP always, "
		"kcompactd\n(proactiveness %u), %u MiB. Faults: accesses that found a swap entry "
		"(pswpin -\nswap_ra + swap_ra_hit); accesses: pages read or written.\n\n",
		opt->containers, lvb_plural(opt->containers), p->limit_mib, p->region_mib,
		p->readers, lvb_plural(p->readers), p->reader_limit_mib,
		p->swap_file ? "file" : "in-memory", (unsigned int)(swap_bytes(p) >> 20),
		PROACTIVENESS, opt->memory_mib);
	fprintf(out, "%-28s", "");
	for (unsigned int d = 0; d < n; d++)
		fprintf(out, " %14s", s[d].column);
	fputc('\n', out);
	row(out, "faults/s (all tenants)", s, n, faults_per_s, " %14.0f");
	row(out, "accesses/s (all tenants)", s, n, accesses_per_s, " %14.0f");
	row(out, "readers' MB/s", s, n, file_mb_per_s, " %14.1f");
	for (size_t i = 0; i < sizeof(swap_items) / sizeof(swap_items[0]); i++) {
		fprintf(out, "%-28s", lv_stat_name(swap_items[i]));
		for (unsigned int d = 0; d < n; d++)
			fprintf(out, " %14llu", (unsigned long long)s[d].vmstat[swap_items[i]]);
		fputc('\n', out);
	}
	row(out, "swap traffic (pages/s)", s, n, swap_traffic, " %14.0f");
	row(out, "ceiling (pages/s)", s, n, ceiling_rate, " %14.0f");
	row(out, "traffic/ceiling (%)", s, n, ceiling_ratio, " %13.1f%%");
	fputc('\n', out);
	for (unsigned int d = 0; d < n; d++) {
		const struct ceiling_acc *a = &ceiling_of[s[d].design];
		struct lvb_stats st;

		if (!a->nr_slices) {
			fprintf(out, "%s: swap traffic: %.0f pages/s, no ceiling (%s)\n",
				s[d].column, swap_traffic(&s[d]),
				a->failed ? "it failed" : "nothing was swapped");
			continue;
		}
		ceiling_spread(&s[d], &st);
		fprintf(out,
			"%s: swap traffic: %.0f pages/s, ceiling %.0f pages/s, ratio %.2f\n"
			"%*s  ceiling spread over %zu slices of %u round%s: %.0f..%.0f pages/s "
			"(CoeffVar %.2f%%)\n",
			s[d].column, swap_traffic(&s[d]), ceiling_rate(&s[d]),
			ceiling_rate(&s[d]) > 0 ? swap_traffic(&s[d]) / ceiling_rate(&s[d]) : 0,
			(int)strlen(s[d].column), "", st.n, s[d].rounds, lvb_plural(s[d].rounds),
			st.min, st.max, st.coeffvar);
		fprintf(out, "%*s  traffic/ceiling per round:", (int)strlen(s[d].column), "");
		for (unsigned int r = 0; r < a->nr_rounds; r++)
			fprintf(out, " %.2f (%.0f/%.0f)", a->round_traffic[r] / a->round_ceiling[r],
				a->round_traffic[r], a->round_ceiling[r]);
		fputc('\n', out);
	}
	fprintf(out,
		"ceiling: a thread per tenant, the round's pages out and in as bare 4 KiB %s, no "
		"cache management\n",
		p->swap_file ? "pwrite/pread of\na file of the device's size"
			     : "memcpy between\npages and a device-sized area");
	if (n == 2)
		fprintf(out,
			"%s/%s: faults/s %s, readers' MB/s %s; %s/%s: LRU lock contended/acquired "
			"%s\n",
			s[1].column, s[0].column,
			times(r1, sizeof(r1), lvb_series_rate(&s[1]), lvb_series_rate(&s[0])),
			times(r3, sizeof(r3), file_mb_per_s(&s[1]), file_mb_per_s(&s[0])),
			s[0].column, s[1].column,
			times(r2, sizeof(r2), lru_fraction(&s[0]), lru_fraction(&s[1])));
	hwm = end_hwm_kib(s, n);
	fprintf(out,
		"VmHWM %llu MiB = %.1f%% of memory + in-memory swap (%llu MiB; goal: at most "
		"110%%)\n",
		(unsigned long long)(hwm >> 10),
		budget ? 100.0 * (double)hwm / 1024 / (double)budget : 0,
		(unsigned long long)budget);
}

static void swap_json_extra(FILE *out, bool *first, const struct lvb_common *opt,
			    const void *params, const struct lvb_series *s,
			    const struct lvb_ceiling *c)
{
	const struct swap_params *p = params;
	const struct ceiling_acc *a = &ceiling_of[s->design];
	uint64_t hwm, budget = hwm_budget_mib(opt, p);
	struct lvb_stats st;

	(void)c;
	lvb_json_u64(out, first, "tenants", opt->containers);
	lvb_json_u64(out, first, "readers", p->readers);
	lvb_json_u64(out, first, "limit_mib", p->limit_mib);
	lvb_json_u64(out, first, "region_mib", p->region_mib);
	lvb_json_u64(out, first, "reader_limit_mib", p->reader_limit_mib);
	lvb_json_u64(out, first, "swap_mib", swap_bytes(p) >> 20);
	lvb_json_str(out, first, "swap_device", p->swap_file ? "file" : "memory");
	lvb_json_u64(out, first, "proactiveness", PROACTIVENESS);
	lvb_json_double(out, first, "accesses_per_s", accesses_per_s(s));
	lvb_json_double(out, first, "file_mb_per_s", file_mb_per_s(s));
	for (size_t i = 0; i < sizeof(swap_items) / sizeof(swap_items[0]); i++)
		lvb_json_u64(out, first, lv_stat_name(swap_items[i]), s->vmstat[swap_items[i]]);
	lvb_json_double(out, first, "swap_traffic_pages_per_s", swap_traffic(s));
	if (a->nr_slices) {
		ceiling_spread(s, &st);
		lvb_json_double(out, first, "swap_ceiling_pages_per_s", ceiling_rate(s));
		lvb_json_double(out, first, "swap_ceiling_ratio",
				ceiling_rate(s) > 0 ? swap_traffic(s) / ceiling_rate(s) : 0);
		lvb_json_u64(out, first, "swap_ceiling_slices", st.n);
		lvb_json_double(out, first, "swap_ceiling_min", st.min);
		lvb_json_double(out, first, "swap_ceiling_max", st.max);
		lvb_json_double(out, first, "swap_ceiling_coeffvar", st.coeffvar);
		lvb_json_key(out, first, "swap_ceiling_round_pages_per_s");
		for (unsigned int r = 0; r < a->nr_rounds; r++)
			fprintf(out, "%s%.3f", r ? "," : "[", a->round_ceiling[r]);
		fputs(a->nr_rounds ? "]" : "[]", out);
		lvb_json_key(out, first, "swap_traffic_round_pages_per_s");
		for (unsigned int r = 0; r < a->nr_rounds; r++)
			fprintf(out, "%s%.3f", r ? "," : "[", a->round_traffic[r]);
		fputs(a->nr_rounds ? "]" : "[]", out);
	}
	hwm = end_hwm_kib(s, 1);
	lvb_json_u64(out, first, "hwm_budget_mib", budget);
	lvb_json_u64(out, first, "vm_hwm_end_kib", hwm);
	lvb_json_double(out, first, "vm_hwm_budget_pct",
			budget ? 100.0 * (double)hwm / 1024 / (double)budget : 0);
}

static void swap_describe(FILE *out, const struct lvb_common *opt, const void *params)
{
	const struct swap_params *p = params;

	fprintf(out, "swap: %u tenants, %u readers, %u MiB\n", opt->containers, p->readers,
		opt->memory_mib);
}

static const struct lvb_default swap_shared_defaults[] = {
	{ "containers", "1; they are the tenants", false },
	{ "threads", "one per tenant and per reader", true },
	{ "memory", "512M", false },
	{ "nodes", "one node", true },
	{ "duration", "3 (compare: 5)", false },
	{ "rounds", "1 (compare: 3)", false },
	{ "disable", "it never calls lv_lru_cache_disable", true },
	{ "sweep", "the sizes follow the tenant count", true },
	{ "folio-order", "it runs with page cache folios of one page", true },
	{ 0 }
};

static const struct lvb_rate swap_rate = {
	.unit = "faults/s",
	.per = "tenant",
	.scale = 1,
	.json_prefix = "faults_per_s",
	.thread_noun = "thread",
};

const struct lvb_workload lvb_swap = {
	.name = "swap",
	.summary = "tenants 1.5x their memcg limits, swapping, beside page cache readers",
	.help = "swap: C tenants (containers), one thread each, each with an address space\n"
		"(--region, 1.5 x its --limit) in a memcg of its own, and --readers page cache\n"
		"readers, each in a memcg of its own, reading a sparse file in 4 KiB reads. Huge\n"
		"pages are on (cfg.thp always) and kcompactd runs. Every tenant writes its whole\n"
		"region once before the timed part; then, per op of 64 page accesses (one 8-byte\n"
		"word per page), a quarter of the ops read and check 64 consecutive pages at a\n"
		"cursor going round the region, a quarter write them, and half write 64 pages at\n"
		"random. A word is a hash of (tenant, page, write number): a read that does not\n"
		"find the last word written ends the run with exit status 1, naming the page.\n"
		"Swap is an in-memory device (--swap-size) or --swap-file.\n"
		"Throughput: faults/s per tenant, a fault being an access that found a swap entry\n"
		"(pswpin - swap_ra + swap_ra_hit of its memcg). Also shown: accesses/s, the\n"
		"readers' MB/s, the swap, workingset and reclaim counters, and the ceiling: after\n"
		"each round, a thread per tenant does the round's pswpout and pswpin again as\n"
		"bare 4 KiB copies between pages and a device-sized area (--swap-file: pwrite\n"
		"and pread of such a file), both faulted in first, timed in 5 slices; the swap\n"
		"traffic, pswpin + pswpout per second, is shown as a share of it, over all\n"
		"rounds and per round. VmHWM is set against memory + the in-memory device.\n"
		"Not a published workload: its tables are in docs/benchmarks.md, swap.\n"
		"JSON adds the settings, accesses_per_s, file_mb_per_s (the readers'), the\n"
		"counters, swap_traffic_pages_per_s, swap_ceiling_pages_per_s,\n"
		"swap_ceiling_ratio, swap_ceiling_slices, _min, _max, _coeffvar,\n"
		"swap_ceiling_round_pages_per_s, swap_traffic_round_pages_per_s, hwm_budget_mib,\n"
		"vm_hwm_end_kib (after every round and ceiling) and vm_hwm_budget_pct.",
	.opts = swap_opts,
	.shared_defaults = swap_shared_defaults,
	.params_size = sizeof(struct swap_params),
	.defaults = swap_defaults,
	.prepare = swap_prepare,
	.rate = &swap_rate,
	.run = swap_run,
	.print_extra = swap_print_extra,
	.describe = swap_describe,
	.json_extra = swap_json_extra,
	.default_nodes = 1,
};
