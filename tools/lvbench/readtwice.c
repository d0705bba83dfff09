// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * readtwice and readonce - vm-scalability's case-lru-file-readtwice and case-lru-file-readonce
 * in containers, as Alex Shi ran readtwice for the per-lruvec lru_lock series (the published
 * runs and their numbers: docs/benchmarks.md, readtwice).
 *
 * A container is a memcg. In readtwice, its readers (2 by default: "two dd started together on
 * the same file") read one sparse file of the container sequentially in 4 KiB lv_file_read()s;
 * the second reader finds the pages the first one just brought in, so they are activated, and
 * since the file dwarfs memory, reclaim runs all the time. In readonce each reader has a file of
 * its own, read once: insertion and reclaim without activations. The run is time-bound like
 * the original (dd under timeout); a reader that reaches the end of its file starts over, which
 * only happens with a small --file or --file-size.
 *
 * A thread is one reader, or with --threads fewer than the readers, thread t serves readers t,
 * t + T, t + 2T, ... (reader r being reader r % --readers of container r / --readers) in turns
 * of RT_TURN_READS reads each, so that any number of containers is read by the same threads
 * (lvbench scale). The two readers of a container sit on neighbouring threads and reach it in
 * the same turn, so the second still finds the first one's pages, as the two dd do.
 *
 * Throughput is bytes read per reader over the duration, in MB/s (10^6 bytes, as dd prints it);
 * the headline is their arithmetic mean, as Alex Shi and Daniel Jordan reported it.
 *
 * The ceiling is the same threads doing only the memory work a read costs without any cache
 * management: zero a 4 KiB frame on first touch (as filling a hole does), copy it out. The
 * readers of a shared file walk one ring of frames per container, and whoever reaches a frame
 * first zeroes it (readtwice's second reader finds the page filled); a reader of its own file
 * walks a ring of its own. A ring is as large as the memory the engine's frames for those
 * readers cycle through, so the zeroing misses the cache exactly when the engine's does.
 */
#define _GNU_SOURCE
#include "lvbench.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct rt_params {
	unsigned int readers;	/* per container; LVB_UNSET: the workload's default */
	unsigned int threads;	/* --threads, each serving readers in turn; LVB_UNSET: one each */
	unsigned int limit_mib; /* memory.max of each container in MiB; 0: none */
	uint64_t file_size;	/* of each sparse file in bytes; 0: the default */
	const char *file;	/* a real file read instead of sparse ones */
	bool no_kswapd;
	bool once;		/* --once: --passes 1 */
	unsigned int passes;	/* each reader reads its file this often, then idles; 0: read on */
	bool shared;		/* readtwice: the readers of a container share its file */
	bool pin;		/* each container's readers on one CPU: pin_cpu[container] */
	unsigned int readahead; /* cfg.readahead_pages; LVB_UNSET: RT_READAHEAD */
	/* Filled in by rt_prepare(). */
	uint64_t real_size;	      /* of --file */
	int pin_cpu[LVB_MAX_THREADS]; /* with --pin, read once (lvb_pin_cpus()) */
};

#define RT(field) offsetof(struct rt_params, field)

static const struct lvb_opt rt_opts[] = {
	{ "readers", LVB_OPT_UINT, RT(readers), 1, 64, NULL, "N",
	  "readers per container, 1..64 (readtwice: sharing the\n"
	  "container's file; readonce: each with a file of its own)",
	  "readtwice 2, readonce 1" },
	{ "limit", LVB_OPT_MIB, RT(limit_mib), 0, 1u << 20, NULL, "SIZE",
	  "memory limit of each container, up to 1T; a bare number is\n"
	  "MiB; 0: none, so reclaim is global, as in Alex Shi's runs",
	  "0" },
	{ "file-size", LVB_OPT_SIZE, RT(file_size), LV_PAGE_SIZE, (double)(1ull << 52), NULL,
	  "SIZE", "size of each sparse file, 4K..4P; a bare number is bytes",
	  "64G, or 16 x all nodes' memory if larger" },
	{ "file", LVB_OPT_STRING, RT(file), 0, 0, NULL, "PATH",
	  "read this real file (open(2) O_RDONLY, read with pread(2))\n"
	  "instead of sparse files: every container opens it on its own",
	  "sparse files" },
	{ "once", LVB_OPT_FLAG, RT(once), 0, 0, NULL, NULL,
	  "each reader reads its file once, as one dd does, then idles\n"
	  "until the round ends (for event counts per MB, as\n"
	  "scripts/fidelity.sh sets them beside the kernel's; the\n"
	  "rate then means nothing)",
	  "read on, from the start" },
	{ "passes", LVB_OPT_UINT, RT(passes), 1, 1000, NULL, "N",
	  "each reader reads its file N times in sequence, as N dd run\n"
	  "one after another, then idles until the round ends (for\n"
	  "event counts, as --once; the second pass of a file larger\n"
	  "than its limit refaults)",
	  "read on, from the start" },
	{ "no-kswapd", LVB_OPT_FLAG, RT(no_kswapd), 0, 0, NULL, NULL,
	  "no kswapd threads: readers reclaim directly", "kswapd on" },
	{ "readahead", LVB_OPT_UINT, RT(readahead), 0, LV_MAX_READAHEAD, NULL, "PAGES",
	  "pages a sequential reader's miss reads ahead, 0..64, as the\n"
	  "kernel's read_ahead_kb / 4 (at order 0 only; 0 or 1: none)",
	  "32, as read_ahead_kb 128" },
	{ "pin", LVB_OPT_FLAG, RT(pin), 0, 0, NULL, NULL,
	  "run each container's readers on one CPU: container c on the\n"
	  "c-th CPU this process may use, round-robin (the ceiling's\n"
	  "threads alike)",
	  "wherever the scheduler puts them" },
	{ 0 }
};

static void readtwice_defaults(void *params)
{
	struct rt_params *p = params;

	*p = (struct rt_params){ .readers = LVB_UNSET, .shared = true, .readahead = LVB_UNSET };
}

static void readonce_defaults(void *params)
{
	struct rt_params *p = params;

	*p = (struct rt_params){ .readers = LVB_UNSET, .shared = false, .readahead = LVB_UNSET };
}

static const char *rt_name(const struct rt_params *p)
{
	return p->shared ? "readtwice" : "readonce";
}

static uint64_t machine_bytes(const struct lvb_common *opt)
{
	return (uint64_t)opt->nodes * opt->memory_mib << 20;
}

/*
 * Defaults sized for the machine: one container per CPU as Alex Shi ran it; for compare (what
 * `make bench` runs) twice that, so that containers outnumber CPUs and the node design's shared
 * lock has someone to contend with even on 2 CPUs, with rounds sized to about a minute there.
 */
#define RT_COMPARE_DURATION 5.0
#define RT_COMPARE_ROUNDS   5
/* The kernel's default readahead window: read_ahead_kb 128. */
#define RT_READAHEAD 32

/*
 * A thread serving several readers reads this many 4 KiB pages of one before it turns to the
 * next (a whole folio if larger): 128 KiB, the kernel's default readahead window, and about
 * one per-CPU batch of 31 folios, so that a batch holds one lruvec's folios, as it does with
 * one reader per thread, and the cost measured is that of the memcg count, not of batches
 * that mix lruvecs; yet each container's turn comes round often.
 */
#define RT_TURN_READS 32u

static unsigned int rt_turn_reads(const struct lvb_common *opt)
{
	unsigned int folio = 1u << opt->folio_order;

	return folio > RT_TURN_READS ? folio : RT_TURN_READS;
}

static int rt_prepare(struct lvb_common *opt, void *params)
{
	struct rt_params *p = params;
	unsigned int cpus = lvb_online_cpus(), max_containers, min_containers;

	if (p->readers == LVB_UNSET)
		p->readers = p->shared ? 2 : 1;
	if (opt->containers == LVB_UNSET) {
		opt->containers = opt->compare ? 2 * cpus : cpus;
		if (opt->containers > LVB_MAX_THREADS / p->readers)
			opt->containers = LVB_MAX_THREADS / p->readers;
	}
	if (opt->memory_mib == LVB_UNSET)
		opt->memory_mib = 2048;
	if (opt->duration == 0)
		opt->duration = opt->compare ? RT_COMPARE_DURATION : 5.0;
	if (opt->rounds == LVB_UNSET)
		opt->rounds = opt->compare ? RT_COMPARE_ROUNDS : 1;
	if (opt->folio_order == LVB_UNSET)
		opt->folio_order = 0;
	if (p->readahead == LVB_UNSET)
		p->readahead = RT_READAHEAD;
	if (p->once) {
		if (p->passes > 1)
			return lvb_usage_error("--once, --passes: --once is --passes 1, not %u",
					       p->passes);
		p->passes = 1;
	}

	max_containers = opt->containers;
	for (unsigned int i = 0; i < opt->sweep.n; i++)
		if (opt->sweep.v[i] > max_containers)
			max_containers = opt->sweep.v[i];
	min_containers = opt->sweep.n ? opt->sweep.v[0] : opt->containers;
	/* scale: the same threads at every count, none of them idle at the first. */
	if (opt->scale && opt->threads == LVB_UNSET)
		opt->threads = 2 * cpus < min_containers * p->readers ? 2 * cpus
								      : min_containers * p->readers;
	p->threads = opt->threads;
	if (p->threads == LVB_UNSET && (uint64_t)max_containers * p->readers > LVB_MAX_THREADS)
		return lvb_usage_error(
			"--containers, --readers: %u containers x %u readers is more than %u "
			"threads (--threads N serves them with N threads)",
			max_containers, p->readers, LVB_MAX_THREADS);
	if (p->threads != LVB_UNSET && p->threads > (uint64_t)min_containers * p->readers)
		return lvb_usage_error("--threads: %u threads for %u container%s x %u reader%s: "
				       "a thread would have no reader to serve",
				       p->threads, min_containers, lvb_plural(min_containers),
				       p->readers, lvb_plural(p->readers));
	if (p->threads != LVB_UNSET && (p->pin || p->passes))
		return lvb_usage_error("--threads%s, %s: %s one reader per thread; a thread "
				       "here serves several readers in turn",
				       opt->scale ? " (scale)" : "", p->pin ? "--pin" : "--passes",
				       p->pin ? "--pin places" : "--passes and --once count");

	if (p->pin) {
		int err = lvb_pin_cpus(p->pin_cpu, max_containers);

		if (err)
			return lvb_usage_error("--pin: cannot read this process's CPU affinity: %s",
					       strerror(-err));
	}

	if (p->file) {
		struct stat st;
		int fd;

		if (p->file_size)
			return lvb_usage_error(
				"--file-size: does not apply with --file (the file's "
				"size is used)");
		/* Not blocking: a FIFO named by mistake is refused below, not waited on. */
		fd = open(p->file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			return lvb_usage_error("--file: cannot open '%s': %s", p->file,
					       strerror(errno));
		if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0) {
			close(fd);
			return lvb_usage_error("--file: '%s' is not a non-empty regular file",
					       p->file);
		}
		close(fd);
		p->real_size = (uint64_t)st.st_size;
	} else if (!p->file_size) {
		/* vm-scalability uses 256 x MemAvailable (capped at 4 TiB); 16 x keeps it sparse.
		 */
		p->file_size = 64ull << 30;
		if (p->file_size < 16 * machine_bytes(opt))
			p->file_size = 16 * machine_bytes(opt);
	}
	return 0;
}

static unsigned int rt_nr_threads(const struct lvb_common *opt, const void *params)
{
	const struct rt_params *p = params;

	return p->threads != LVB_UNSET ? p->threads : opt->containers * p->readers;
}

/* ---- the readers ----------------------------------------------------------------------------- */

static const char *const rt_counter_names[LVB_READ_NR_COUNTERS] = {
	[LVB_READ_ENOMEM] = "read_enomem",
	[LVB_READ_WRAPS] = "wraps",
};

struct rt_file {
	struct lv_file *file;
	int fd; /* -1: sparse */
	uint64_t size;
};

void lvb_reader_step(struct lvb_worker *w, struct lvb_reader *rt)
{
	long n = lv_file_read(rt->file, rt->memcg, rt->buf, LVB_READ_SIZE, rt->off);

	if (n > 0) {
		w->ops++;
		w->amount += (uint64_t)n;
		rt->off += (uint64_t)n;
		if (rt->off < rt->size)
			return;
	} else if (n == -ENOMEM) {
		/* Everyone else holds the memory: let them run, then try the same page again. */
		w->counters[LVB_READ_ENOMEM]++;
		sched_yield();
		return;
	} else if (n < 0) {
		lvb_worker_error(w, "lv_file_read", (int)-n);
		/* Skip the page rather than spin on it; the run is reported as failed. */
		rt->off += LVB_READ_SIZE;
		if (rt->off < rt->size)
			return;
	}
	rt->off = 0;
	w->counters[LVB_READ_WRAPS]++;
}

/*
 * struct rt_thread - one thread's readers, every --threads'th one, read a turn at a time.
 * Owner thread only.
 */
struct rt_thread {
	struct lvb_reader *readers; /* [nr], sharing one buffer */
	unsigned int nr, cur;
	unsigned int left; /* reads left in readers[cur]'s turn */
	unsigned int turn; /* reads per turn */
	char *buf;
} __attribute__((aligned(64)));

static void rt_step(struct lvb_worker *w)
{
	struct rt_thread *rt = w->priv;

	lvb_reader_step(w, &rt->readers[rt->cur]);
	if (rt->nr > 1 && !--rt->left) {
		rt->left = rt->turn;
		rt->cur = rt->cur + 1 < rt->nr ? rt->cur + 1 : 0;
	}
}

/* rt_pin - with --pin, thread @t runs on its container's CPU; containers share CPUs round-robin. */
static void rt_pin(const struct rt_params *p, struct lvb_worker *w, unsigned int t)
{
	w->pin = p->pin;
	w->cpu = p->pin ? p->pin_cpu[t / p->readers] : -1;
}

/* rt_nr_files - one file (and ceiling ring) per container when shared, else one per reader. */
static unsigned int rt_nr_files(const struct lvb_common *opt, const struct rt_params *p)
{
	return p->shared ? opt->containers : opt->containers * p->readers;
}

/* --passes: a reader that read its file often enough leaves the CPU to those that did not. */
static void rt_step_passes(struct lvb_worker *w)
{
	struct rt_thread *rt = w->priv;

	if (w->counters[LVB_READ_WRAPS] >= rt->readers->passes) {
		sched_yield();
		return;
	}
	lvb_reader_step(w, rt->readers);
}

static const struct lvb_thread_ops rt_thread_ops = {
	.step = rt_step,
	.counter_names = rt_counter_names,
	.nr_counters = LVB_READ_NR_COUNTERS,
	.name = "reader",
};

static const struct lvb_thread_ops rt_passes_thread_ops = {
	.step = rt_step_passes,
	.counter_names = rt_counter_names,
	.nr_counters = LVB_READ_NR_COUNTERS,
	.name = "reader",
};

static void rt_close_files(struct rt_file *files, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		if (files[i].file)
			lv_file_close(files[i].file);
		if (files[i].fd >= 0)
			close(files[i].fd);
	}
	free(files);
}

static struct rt_file *rt_open_files(struct lvb_env *env, const struct rt_params *p, unsigned int n,
				     int *err)
{
	struct rt_file *files = calloc(n, sizeof(*files));

	if (!files) {
		*err = -ENOMEM;
		return NULL;
	}
	for (unsigned int i = 0; i < n; i++)
		files[i].fd = -1;
	for (unsigned int i = 0; i < n; i++) {
		struct rt_file *f = &files[i];

		f->size = p->file ? p->real_size : p->file_size;
		if (p->file) {
			/* Never blocks on a FIFO swapped in since rt_prepare() looked. */
			f->fd = open(p->file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
			if (f->fd < 0) {
				*err = -errno;
				fprintf(stderr, "lvbench: %s: %s\n", p->file, strerror(errno));
				goto fail;
			}
		}
		f->file = lv_file_open(env->m, f->fd, f->size);
		if (!f->file) {
			*err = -errno;
			fprintf(stderr, "lvbench: lv_file_open: %s\n", strerror(errno));
			goto fail;
		}
	}
	return files;
fail:
	rt_close_files(files, n);
	return NULL;
}

static int rt_run(const struct lvb_common *opt, const void *params, enum lv_lock_design design,
		  struct lvb_result *res)
{
	const struct rt_params *p = params;
	unsigned int n = opt->threads, nr_files = rt_nr_files(opt, p);
	unsigned int nr_readers = opt->containers * p->readers;
	unsigned int flags = LVB_ENV_DATA | (p->no_kswapd ? LVB_ENV_NO_KSWAPD : 0) |
			     LVB_ENV_FOLIO_ORDER(opt->folio_order) |
			     LVB_ENV_READAHEAD(p->readahead);
	struct lvb_worker *workers = NULL;
	struct rt_thread *threads = NULL;
	struct rt_file *files = NULL;
	struct lvb_env env;
	int err;

	err = lvb_env_create(&env, opt, design, flags);
	if (err)
		return err;
	if (p->limit_mib)
		for (unsigned int c = 0; c < env.nr_memcgs; c++)
			lv_memcg_set_max(env.memcgs[c],
					 ((size_t)p->limit_mib << 20) / LV_PAGE_SIZE);
	files = rt_open_files(&env, p, nr_files, &err);
	if (!files)
		goto out;

	err = -ENOMEM;
	workers = lvb_zalloc(n * sizeof(*workers));
	threads = lvb_zalloc(n * sizeof(*threads));
	if (!workers || !threads)
		goto out;
	for (unsigned int t = 0; t < n; t++) {
		struct rt_thread *rt = &threads[t];

		rt->nr = (nr_readers - t + n - 1) / n;
		rt->turn = rt->left = rt_turn_reads(opt);
		rt->buf = aligned_alloc(LV_PAGE_SIZE, LVB_READ_SIZE);
		rt->readers = lvb_zalloc(rt->nr * sizeof(*rt->readers));
		if (!rt->buf || !rt->readers)
			goto out;
		for (unsigned int k = 0; k < rt->nr; k++) {
			unsigned int r = t + k * n, c = r / p->readers;
			struct rt_file *f = &files[p->shared ? c : r];
			struct lvb_reader *rd = &rt->readers[k];

			rd->buf = rt->buf;
			rd->file = f->file;
			rd->size = f->size;
			rd->memcg = env.memcgs[c];
			rd->passes = p->passes;
		}
		workers[t].priv = rt;
		rt_pin(p, &workers[t], t);
	}
	err = lvb_run_threads(&env, workers, p->passes ? &rt_passes_thread_ops : &rt_thread_ops,
			      res);
out:
	for (unsigned int t = 0; threads && t < n; t++) {
		free(threads[t].buf);
		free(threads[t].readers);
	}
	free(threads);
	free(workers);
	/* Every page must be out of the page cache before the machine is checked empty. */
	if (files)
		rt_close_files(files, nr_files);
	res->failures += lvb_env_destroy(&env);
	return err;
}

/* ---- the ceiling ----------------------------------------------------------------------------- */

/*
 * A ring is as large as the memory its readers' page cache cycles through in the engine: the
 * container's share of the machine, or its limit if that is smaller, split among readers of
 * their own files. So the ceiling makes the same memory traffic as the engine on any cache
 * size: it misses the CPU caches exactly when the engine's frames do, whether the L3 holds
 * 32 MiB or 480 MiB. Historical note: rings of a fixed total size were abandoned because a
 * large L3 held part of them where it held none of the engine's frames. All rings together
 * take at most half the configured memory, so the ceiling never sets the VmHWM reported.
 */
#define CEIL_RING_MIN (64ul << 10)

static size_t ceil_ring_bytes(const struct lvb_common *opt, const struct rt_params *p)
{
	uint64_t share = machine_bytes(opt) / opt->containers;
	uint64_t ring, cap = machine_bytes(opt) / 2 / rt_nr_files(opt, p);

	if (p->limit_mib && ((uint64_t)p->limit_mib << 20) < share)
		share = (uint64_t)p->limit_mib << 20;
	ring = p->shared ? share : share / p->readers;
	if (ring > cap)
		ring = cap;
	ring = ring / LVB_READ_SIZE * LVB_READ_SIZE;
	return ring < CEIL_RING_MIN ? CEIL_RING_MIN : (size_t)ring;
}

/*
 * A ring of frames read by the readers of one file. @touched counts the frames ever claimed:
 * a reader at frame number pos >= touched claims frames up to pos with a compare-and-swap
 * and zeroes the frame, as the engine's first reader claims a page and its partner only
 * copies it; a reader that loses the claim copies. Each frame is zeroed once, whatever the
 * readers' interleaving: two readers in step on two CPUs that both tested and then zeroed
 * would zero a part of the frames twice, and the ceiling could fall below the engine.
 */
struct ceil_ring {
	char *mem;
	uint64_t frames;  /* constant */
	uint64_t touched; /* relaxed atomics, only raised: the only sharing between its readers */
} __attribute__((aligned(64)));

struct ceil_thread {
	struct ceil_ring *ring;
	uint64_t pos;	 /* frames this reader has read */
	uint64_t zeroed; /* frames it claimed and zeroed */
	char *buf;
} __attribute__((aligned(64)));

static void ceil_step(struct lvb_worker *w)
{
	struct ceil_thread *ct = w->priv;
	char *frame = ct->ring->mem + ct->pos % ct->ring->frames * LVB_READ_SIZE;
	uint64_t touched = __atomic_load_n(&ct->ring->touched, __ATOMIC_RELAXED);

	if (ct->pos >= touched &&
	    __atomic_compare_exchange_n(&ct->ring->touched, &touched, ct->pos + 1, false,
					__ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
		memset(frame, 0, LVB_READ_SIZE);
		ct->zeroed++;
	}
	/* Without this, the compiler may turn the copy of zeros into a second memset. */
	__asm__ __volatile__("" : : "r"(frame) : "memory");
	memcpy(ct->buf, frame, LVB_READ_SIZE);
	__asm__ __volatile__("" : : "r"(ct->buf) : "memory");
	ct->pos++;
	w->ops++;
	w->amount += LVB_READ_SIZE;
}

static const struct lvb_thread_ops ceil_thread_ops = {
	.step = ceil_step,
	.name = "ceiling",
};

/*
 * ceil_ring_alloc - a ring in the same kind of memory as the machine's frames (2 MiB aligned,
 * transparent huge pages where allowed; see arena_map() in the library), faulted in.
 */
static char *ceil_ring_alloc(size_t bytes)
{
	const size_t huge = 2ul << 20;
	char *ring = aligned_alloc(huge, (bytes + huge - 1) / huge * huge);

	if (!ring)
		return NULL;
	madvise(ring, bytes, MADV_HUGEPAGE);
	memset(ring, 0, bytes);
	return ring;
}

static int rt_ceiling(const struct lvb_common *opt, const void *params, struct lvb_ceiling *c)
{
	const struct rt_params *p = params;
	unsigned int n = opt->threads, nr_rings = rt_nr_files(opt, p), nr_ready = 0;
	struct lvb_env env = { .opt = opt, .design = LV_LOCK_LRUVEC, .label = "ceiling" };
	struct lvb_result res = { 0 };
	struct ceil_thread *threads;
	struct lvb_worker *workers;
	size_t ring = ceil_ring_bytes(opt, p);
	double bytes = 0, zeroed = 0, reached = 0;
	struct ceil_ring *rings;
	int err = -ENOMEM;

	/* Its threads follow one reader each: with fewer (--threads), there is no ceiling. */
	if (n < opt->containers * p->readers)
		return 0;
	workers = lvb_zalloc(n * sizeof(*workers));
	threads = lvb_zalloc(n * sizeof(*threads));
	rings = lvb_zalloc(nr_rings * sizeof(*rings));
	if (!workers || !threads || !rings)
		goto out;
	/*
	 * Faulted in before the clock starts: the ceiling is the steady state, where the engine
	 * too recycles frames it touched before, and the kernel's page faults would only add
	 * noise.
	 */
	for (unsigned int r = 0; r < nr_rings; r++) {
		rings[r].frames = ring / LVB_READ_SIZE;
		if (!(rings[r].mem = ceil_ring_alloc(ring)))
			goto out;
	}
	for (; nr_ready < n; nr_ready++) {
		struct ceil_thread *ct = &threads[nr_ready];

		ct->ring = &rings[p->shared ? nr_ready / p->readers : nr_ready];
		ct->buf = aligned_alloc(LV_PAGE_SIZE, LVB_READ_SIZE);
		if (!ct->buf)
			goto out;
		workers[nr_ready].priv = ct;
		rt_pin(p, &workers[nr_ready], nr_ready);
	}
	err = lvb_run_threads(&env, workers, &ceil_thread_ops, &res);
	/* Each failure is described already: a pinned thread that ran elsewhere, say. */
	if (!err && res.failures)
		err = -ECANCELED;
	if (!err) {
		for (unsigned int t = 0; t < n; t++) {
			bytes += (double)res.thread_amount[t];
			zeroed += (double)threads[t].zeroed;
		}
		for (unsigned int r = 0; r < nr_rings; r++)
			reached += (double)rings[r].touched;
		*c = (struct lvb_ceiling){
			.valid = res.elapsed > 0,
			.threads = n,
			.total = res.elapsed > 0 ? bytes * 1e-6 / res.elapsed : 0,
			.zeroes_per_frame = reached > 0 ? zeroed / reached : 0,
			.what = p->shared && p->readers > 1
					? "per 4 KiB step, memcpy a frame of the container's ring "
					  "out; the first reader to reach it memsets it first"
					: "per 4 KiB step, memset a frame of a private ring and "
					  "memcpy it out",
		};
	}
	lvb_result_free(&res);
out:
	for (unsigned int t = 0; t < nr_ready; t++)
		free(threads[t].buf);
	for (unsigned int r = 0; rings && r < nr_rings; r++)
		free(rings[r].mem);
	free(rings);
	free(threads);
	free(workers);
	return err;
}

/* ---- output ---------------------------------------------------------------------------------- */

static double series_mean(const struct lvb_series *s)
{
	double sum = 0;

	for (size_t i = 0; i < s->nr_samples; i++)
		sum += s->samples[i];
	return s->nr_samples ? sum / (double)s->nr_samples : 0;
}

static void print_summary_line(FILE *out, const char *name, const struct lvb_common *opt,
			       const struct rt_params *p, const struct lvb_series *s,
			       const char *tag, const char *column)
{
	/* The same line as scripts/kernel-readtwice.sh prints for the host kernel. */
	fprintf(out,
		"%s: containers=%u readers=%u mean_mb_per_s_reader=%.1f total_mb_per_s=%.1f%s%s%s%s"
		"\n",
		name, opt->containers, opt->containers * p->readers, series_mean(s),
		lvb_series_rate(s), tag ? " lock=" : "", tag ? tag : "", column ? " column=" : "",
		column ? column : "");
}

/* rt_describe - the workload's own settings, one line (also the header of a sweep). */
static void rt_describe(FILE *out, const struct lvb_common *opt, const void *params)
{
	const struct rt_params *p = params;

	fprintf(out, "%s: %u reader%s per container, %s ", rt_name(p), p->readers,
		lvb_plural(p->readers), p->shared ? "each container reading" : "each reading");
	if (p->file)
		fprintf(out, "%s (%.1f MiB);\n", p->file, (double)p->real_size / (1 << 20));
	else
		fprintf(out, "a sparse file of %.1f GiB;\n", (double)p->file_size / (1 << 30));
	if (p->limit_mib)
		fprintf(out, "memcg limit %u MiB each, ", p->limit_mib);
	else
		fprintf(out, "no memcg limit, ");
	fprintf(out, "kswapd %s, %u-byte reads, ", p->no_kswapd ? "off" : "on", LVB_READ_SIZE);
	if (opt->compare && opt->by == LVB_BY_FOLIO_ORDER)
		fprintf(out, "folios of 2^N pages by column");
	else
		fprintf(out, "folios of %u page%s", 1u << opt->folio_order,
			opt->folio_order ? "s" : "");
	fprintf(out, "%s", p->pin ? ", each container's readers pinned to one CPU (--pin)" : "");
	if (p->threads != LVB_UNSET)
		fprintf(out, ";\n%u thread%s serving the readers in turns of %u reads",
			opt->threads, lvb_plural(opt->threads), rt_turn_reads(opt));
	fputc('\n', out);
}

static void rt_print_extra(FILE *out, const struct lvb_common *opt, const void *params,
			   const struct lvb_series *s, unsigned int n, const struct lvb_ceiling *c)
{
	const struct rt_params *p = params;
	uint64_t hwm = 0, rss = 0, mib = (uint64_t)opt->nodes * opt->memory_mib;

	(void)c;
	for (unsigned int d = 0; d < n; d++) {
		hwm = s[d].vm_hwm_kib > hwm ? s[d].vm_hwm_kib : hwm;
		rss = s[d].vm_rss_kib > rss ? s[d].vm_rss_kib : rss;
	}
	fprintf(out, "\n%u container%s, %u reader thread%s on %u CPU%s\n", opt->containers,
		lvb_plural(opt->containers), opt->threads, lvb_plural(opt->threads),
		lvb_online_cpus(), lvb_plural(lvb_online_cpus()));
	rt_describe(out, opt, params);
	if (p->pin) {
		fprintf(out, "Pinned (--pin): the readers of container 0, 1, ... on CPU");
		for (unsigned int i = 0; i < opt->containers; i++)
			fprintf(out, " %d", p->pin_cpu[i]);
		fputc('\n', out);
	}
	fprintf(out,
		"Memory: configured %llu MiB (%u node%s x %u MiB); lvbench VmHWM %.1f MiB (%.1f%% "
		"of configured), VmRSS %.1f MiB at the end of a run\n",
		(unsigned long long)mib, opt->nodes, lvb_plural(opt->nodes), opt->memory_mib,
		(double)hwm / 1024, mib ? 100.0 * (double)hwm / 1024 / (double)mib : 0,
		(double)rss / 1024);

	if (n == 2 && p->shared && opt->by == LVB_BY_LOCK) {
		double node = series_mean(&s[0]), lru = series_mean(&s[1]);

		fprintf(out,
			"\nPublished readtwice results: mean MB/s per dd, one container per CPU, "
			"2 dd each, 300 s runs\n");
		fprintf(out, "%-38s %5s %10s %9s %9s %7s\n", "", "CPUs", "containers", "node",
			"lruvec", "ratio");
		fprintf(out, "%-38s %5u %10u %9.1f %9.1f %6.2fx\n", "  Alex Shi, v4 (2019-11)", 32,
			32, 123.0, 144.0, 144.0 / 123.0);
		fprintf(out, "%-38s %5u %10u %9.1f %9.1f %6.2fx\n",
			"  Daniel Jordan, v18 review (2020-09)", 40, 40, 220.5, 356.9,
			356.9 / 220.5);
		fprintf(out, "%-38s %5u %10u %9.1f %9.1f %6.2fx\n", "  this run", lvb_online_cpus(),
			opt->containers, node, lru, node > 0 ? lru / node : 0);
		fprintf(out, "The published numbers come from 32- and 40-CPU machines running real "
			     "kernels: absolute MB/s\nare not comparable, compare the ratio.\n");
	}
	fputc('\n', out);
	for (unsigned int d = 0; d < n; d++)
		print_summary_line(out, rt_name(p), opt, p, &s[d],
				   n > 1 ? lvb_lock_names[s[d].design] : NULL,
				   n > 1 && opt->by != LVB_BY_LOCK ? s[d].column : NULL);
}

static void rt_json_extra(FILE *out, bool *first, const struct lvb_common *opt, const void *params,
			  const struct lvb_series *s, const struct lvb_ceiling *c)
{
	const struct rt_params *p = params;

	(void)s;
	lvb_json_u64(out, first, "readers", opt->containers * p->readers);
	lvb_json_u64(out, first, "readers_per_container", p->readers);
	lvb_json_u64(out, first, "turn_reads", rt_turn_reads(opt));
	lvb_json_str(out, first, "file", p->file ? p->file : "sparse");
	lvb_json_u64(out, first, "file_size", p->file ? p->real_size : p->file_size);
	lvb_json_u64(out, first, "limit_mib", p->limit_mib);
	lvb_json_u64(out, first, "memory_mib", (uint64_t)opt->nodes * opt->memory_mib);
	lvb_json_key(out, first, "kswapd");
	fputs(p->no_kswapd ? "false" : "true", out);
	lvb_json_key(out, first, "once");
	fputs(p->passes == 1 ? "true" : "false", out);
	lvb_json_u64(out, first, "passes", p->passes);
	lvb_json_u64(out, first, "readahead", p->readahead);
	/* The CPU of each container's readers, or null: wherever the scheduler put them. */
	lvb_json_key(out, first, "pin_cpus");
	if (!p->pin)
		fputs("null", out);
	for (unsigned int i = 0; p->pin && i < opt->containers; i++)
		fprintf(out, "%s%d%s", i ? ", " : "[", p->pin_cpu[i],
			i + 1 == opt->containers ? "]" : "");
	if (c && c->valid) {
		lvb_json_double(out, first, "ceiling_zeroes_per_frame", c->zeroes_per_frame);
		lvb_json_u64(out, first, "ceiling_ring_bytes", ceil_ring_bytes(opt, p));
	}
}

static const struct lvb_rate rt_rate = {
	.unit = "MB/s",
	.per = "reader",
	.scale = 1e-6,
	.json_prefix = "mb_per_s",
};

#define RT_HELP_COMMON                                                                             \
	"Each read is lv_file_read() of 4096 bytes at the reader's offset, sequentially, as\n"     \
	"dd bs=4k does; a miss allocates a page, charges it to the container, zeroes it\n"         \
	"(sparse) or fills it with pread(2) (--file) and adds it to the LRU, with the pages\n"     \
	"after it up to the readahead window (--readahead) when the reader is sequential; a\n"     \
	"hit marks it accessed. Memory runs out after the first GiBs: kswapd and direct\n"         \
	"reclaim (and the container's limit with --limit) evict from the LRU, leaving shadow\n"    \
	"entries.\n"                                                                               \
	"The run is time-bound, like dd under timeout; a reader at the end of its file starts\n"   \
	"over. Threads are --containers x --readers (at most 65535), one per reader; or fewer\n"   \
	"with --threads N: thread t serves readers t, t+N, t+2N, ... (reader r is reader\n"        \
	"r % --readers of container r / --readers, so a container's readers sit on neighbouring\n" \
	"threads and reach it together) in turns of 32 reads each (128 KiB, the kernel's\n"        \
	"readahead window and about one per-CPU batch; a whole folio if larger). Then there is\n"  \
	"no ceiling, no --pin nor --passes, and the rates per reader are per thread.\n"            \
	"Output: MB/s per reader (MB = 10^6 bytes, like dd) in the mmtests rows, the total,\n"     \
	"the ceiling (the same threads doing only the memory work of 4 KiB reads: memset\n"        \
	"a frame on first touch, memcpy it out; no cache management) and each design's\n"          \
	"share of it, the lock tables, reclaim and workingset counters, the process's\n"           \
	"VmHWM next to the configured memory, and the line\n"                                      \
	"  NAME: containers=C readers=N mean_mb_per_s_reader=X total_mb_per_s=Y\n"                 \
	"(N: all readers, C x --readers; with compare, one per design, ending\n"                   \
	"lock=DESIGN), which scripts/kernel-readtwice.sh prints for the host kernel.\n"            \
	"JSON adds mb_per_s_reader_mean, mb_per_s_reader {stats}, mb_per_s_total,\n"               \
	"mb_per_s_round_total, ceiling_mb_per_s (the mean of its runs, one before each round),\n"  \
	"ceiling_fraction, ceiling_rounds, ceiling_min, ceiling_max, ceiling_coeffvar (its\n"      \
	"spread over the rounds, in percent), ceiling_zeroes_per_frame\n"                          \
	"(1: each frame of the ceiling zeroed once), ceiling_ring_bytes (each ring of the\n"       \
	"ceiling: a container's share of memory or its limit, per reader of its own file; at\n"    \
	"most half the memory in all), readers, readers_per_container, turn_reads (reads per\n"    \
	"turn), file, file_size (bytes), limit_mib, memory_mib (all nodes), kswapd, once and\n"    \
	"passes (--passes; 0: read on), readahead, pin_cpus (null without --pin), vm_hwm_kib,\n"   \
	"vm_rss_kib; vmstat has pgscan, pgsteal, workingset_refault, workingset_activate and\n"    \
	"the other events.\n"

static const struct lvb_default rt_shared_defaults[] = {
	{ "containers", "online CPUs; compare: 2 x online CPUs", false },
	{ "threads", "--containers x --readers, one per reader", false },
	{ "duration", "5; compare: 5 s x 5 rounds per design, about a minute on 2 CPUs", false },
	{ "rounds", "1; compare: 5", false },
	{ "memory", "2048 MiB, one node", false },
	{ "disable", "it never calls lv_lru_cache_disable", true },
	{ "by", "lock (--by disable applies to numa only)", false },
	{ "folio-order", "0: one page per folio, as the 2019-2020 kernels", false },
	{ 0 }
};

const struct lvb_workload lvb_readtwice = {
	.name = "readtwice",
	.summary = "vm-scalability lru-file-readtwice in containers (Alex Shi's case)",
	.help = "readtwice: vm-scalability's case-lru-file-readtwice as Alex Shi ran it for the\n"
		"per-lruvec lru_lock: C containers (memcgs), each with one sparse file far larger\n"
		"than memory, read by --readers readers (2: the two dd started together) in step,\n"
		"so the second read of every page activates it.\n" RT_HELP_COMMON
		"Published numbers, set beside compare's: mean MB/s per dd, one container per\n"
		"CPU, 2 dd each, 300 s runs, node vs per-lruvec lru_lock: Alex Shi's v4 (2019-11,\n"
		"32 CPUs) 123.0 vs 144.0 (1.17x); Daniel Jordan's review of v18 (2020-09, 40\n"
		"CPUs) 220.5 vs 356.9 (1.62x). They come from real kernels on larger machines:\n"
		"compare the ratio, not MB/s. The runs, their sources and the current tables:\n"
		"docs/benchmarks.md, readtwice.",
	.opts = rt_opts,
	.shared_defaults = rt_shared_defaults,
	.params_size = sizeof(struct rt_params),
	.defaults = readtwice_defaults,
	.prepare = rt_prepare,
	.nr_threads = rt_nr_threads,
	.rate = &rt_rate,
	.run = rt_run,
	.ceiling = rt_ceiling,
	.print_extra = rt_print_extra,
	.describe = rt_describe,
	.json_extra = rt_json_extra,
	.features = LVB_WL_FOLIO_ORDER | LVB_WL_BY_FOLIO_ORDER | LVB_WL_SCALE,
};

const struct lvb_workload lvb_readonce = {
	.name = "readonce",
	.summary = "vm-scalability lru-file-readonce in containers (one reader per file)",
	.help = "readonce: vm-scalability's case-lru-file-readonce in containers: C containers\n"
		"(memcgs) with --readers readers each (default 1), every reader with a sparse\n"
		"file of its own, read once: LRU insertion and reclaim, no "
		"activations.\n" RT_HELP_COMMON
		"Published numbers: none for readonce in containers; it is the control of\n"
		"readtwice without activations (docs/benchmarks.md, readtwice).",
	.opts = rt_opts,
	.shared_defaults = rt_shared_defaults,
	.params_size = sizeof(struct rt_params),
	.defaults = readonce_defaults,
	.prepare = rt_prepare,
	.nr_threads = rt_nr_threads,
	.rate = &rt_rate,
	.run = rt_run,
	.ceiling = rt_ceiling,
	.print_extra = rt_print_extra,
	.describe = rt_describe,
	.json_extra = rt_json_extra,
	.features = LVB_WL_FOLIO_ORDER | LVB_WL_BY_FOLIO_ORDER,
};
