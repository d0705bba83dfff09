// SPDX-License-Identifier: LGPL-2.1-or-later
/* The page cache: lv_file_open/read/truncate/close errors, holes of sparse files, the exact
 * bytes of a real file, concurrent readers of one page (with fills quick enough to be waited
 * for awake, and slow enough that the waiters must sleep), failing fills, truncation and
 * close, charging and activation of cached pages, and memory bounded by direct reclaim when a
 * file is much larger than the machine. */
#include "internal.h" /* PG_waiters, filemap_get_folios: did the slow fills' waiters sleep? */

#include "lvtest.h"
#include "lvtest_internal.h" /* memcg_pending() */

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#define PAGE	 LV_PAGE_SIZE
#define MAX_FILE (1ull << 52)

static bool all_bytes(const unsigned char *buf, size_t n, unsigned char v)
{
	for (size_t i = 0; i < n; i++)
		if (buf[i] != v)
			return false;
	return true;
}

static long rd(struct lv_file *f, struct lv_memcg *memcg, void *buf, size_t len, uint64_t off)
{
	return lv_file_read(f, memcg, buf, len, off);
}

/*
 * The library's pread(2) is wrapped (-Wl,--wrap=pread, see the Makefile) so that a fill can
 * be made slower than the time a waiter spends awake (fill_done_soon() in filemap.c, about a
 * millisecond): its waiters then sleep on the fill queue and must be woken. The wrapper also
 * records how far the library asked to read a watched descriptor, and can hold a fill of one
 * until the test lets it go.
 */
static int fill_delay_us;	 /* set while no reader runs */
static int slowed_preads;	 /* calls that fill_delay_us slowed down */
static int watch_fd = -1;	 /* set while no reader runs */
static uint64_t watch_end;	 /* atomic: the highest offset + count asked of watch_fd */
static int hold_fd = -1;	 /* set while no reader runs: preads of it wait for hold_go */
static int hold_inside, hold_go; /* atomics */

ssize_t __real_pread(int fd, void *buf, size_t count, off_t offset);
ssize_t __wrap_pread(int fd, void *buf, size_t count, off_t offset);

ssize_t __wrap_pread(int fd, void *buf, size_t count, off_t offset)
{
	int us = __atomic_load_n(&fill_delay_us, __ATOMIC_RELAXED);
	uint64_t end = (uint64_t)offset + count, seen;

	if (fd == watch_fd) {
		seen = __atomic_load_n(&watch_end, __ATOMIC_RELAXED);
		while (end > seen &&
		       !__atomic_compare_exchange_n(&watch_end, &seen, end, true, __ATOMIC_RELAXED,
						    __ATOMIC_RELAXED))
			;
	}
	if (fd == hold_fd) {
		__atomic_store_n(&hold_inside, 1, __ATOMIC_RELEASE);
		while (!__atomic_load_n(&hold_go, __ATOMIC_ACQUIRE))
			usleep(100);
	}

	if (us) {
		struct timespec ts = { us / 1000000, (long)(us % 1000000) * 1000 };

		__atomic_fetch_add(&slowed_preads, 1, __ATOMIC_RELAXED);
		nanosleep(&ts, NULL);
	}
	return __real_pread(fd, buf, count, offset);
}

/* ---- errors ---------------------------------------------------------------------------- */

static void test_errors(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg), *other = new_machine(&cfg);
	struct lv_memcg *foreign = lv_memcg_create(other, NULL, "foreign");
	unsigned char buf[16];
	struct lv_file *f;

	errno = 0;
	ok(!lv_file_open(m, -1, 0) && errno == EINVAL, "open: size 0 -> NULL, EINVAL");
	errno = 0;
	ok(!lv_file_open(m, -1, MAX_FILE + 1) && errno == EINVAL,
	   "open: size 2^52 + 1 -> NULL, EINVAL");
	errno = 0;
	ok(!lv_file_open(m, -1, UINT64_MAX) && errno == EINVAL, "open: size 2^64 - 1 -> EINVAL");
	errno = 0;
	ok(!lv_file_open(m, -2, PAGE) && errno == EINVAL, "open: fd -2 -> NULL, EINVAL");
	errno = 0;
	ok(!lv_file_open(m, INT_MIN, PAGE) && errno == EINVAL, "open: fd INT_MIN -> NULL, EINVAL");
	errno = 0;
	ok(!lv_file_open(NULL, -1, PAGE) && errno == EINVAL, "open: NULL machine -> NULL, EINVAL");

	f = lv_file_open(m, -1, MAX_FILE);
	ok(f != NULL, "open: size exactly 2^52 is accepted");
	if (!f)
		BAIL_OUT("lv_file_open(2^52): %s", strerror(errno));
	memset(buf, 0x5a, sizeof(buf));
	is(rd(f, NULL, buf, sizeof(buf), MAX_FILE - 8), 8, "the last 8 bytes of a 2^52-byte file");
	ok(all_bytes(buf, 8, 0) && all_bytes(buf + 8, 8, 0x5a),
	   "... are zeros; nothing more written");
	is(rd(f, NULL, buf, 1, MAX_FILE), 0, "read at 2^52 -> 0");
	is(lv_file_cached_pages(f), 1, "one page cached at index 2^40 - 1");
	is(rd(NULL, NULL, buf, 1, 0), -EINVAL, "read: NULL file -> -EINVAL");
	is(rd(f, NULL, NULL, 1, 0), -EINVAL, "read: NULL buffer -> -EINVAL");
	is(rd(f, NULL, NULL, 0, 0), 0, "read: NULL buffer of length 0 -> 0");
	is(rd(f, foreign, buf, 1, 0), -EINVAL, "read: a memcg of another machine -> -EINVAL");
	is(lv_memcg_usage(foreign), 0, "... charged nothing there");
	is(lv_file_cached_pages(f), 1, "... and cached nothing");
	is(lv_file_truncate(NULL, 0), -EINVAL, "truncate: NULL file -> -EINVAL");
	is(lv_file_truncate(f, MAX_FILE + 1), -EINVAL, "truncate: above 2^52 -> -EINVAL");
	is(rd(f, NULL, buf, 1, MAX_FILE - 1), 1, "... the size did not change");
	lv_file_close(f);
	lv_file_close(NULL);
	ok(1, "lv_file_close(NULL) is a no-op");
	is(nstat(m, LV_NR_FILE_PAGES), 0, "closed: no page cache left");
	finish(m, "errors");
	is(lv_memcg_remove(foreign), 0, "errors: foreign memcg removed");
	finish(other, "errors (other machine)");

	/* A metadata-only machine has no frames: a real file's bytes cannot be cached. */
	cfg.metadata_only = true;
	m = new_machine(&cfg);
	errno = 0;
	ok(!lv_file_open(m, 0, PAGE) && errno == EINVAL, "metadata only: real fd -> EINVAL");
	f = lv_file_open(m, -1, PAGE);
	ok(f && rd(f, NULL, buf, sizeof(buf), 0) == sizeof(buf) && all_bytes(buf, sizeof(buf), 0),
	   "metadata only: a sparse file reads zeros");
	/* Left open on purpose: destroy closes it (ASan builds check that nothing leaks). */
	lv_machine_destroy(m);
}

/* ---- holes ----------------------------------------------------------------------------- */

static void test_holes(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *a = lv_memcg_create(m, NULL, "a");
	const uint64_t size = 5 * PAGE + 100;
	unsigned char buf[4 * PAGE];
	struct lv_file *f = lv_file_open(m, -1, size);

	if (!f || !a)
		BAIL_OUT("holes: setup failed");
	memset(buf, 0xaa, sizeof(buf));
	is(rd(f, a, buf, PAGE, 0), PAGE, "holes: an aligned page reads in full");
	ok(all_bytes(buf, PAGE, 0), "holes: ... as zeros");
	memset(buf, 0xaa, sizeof(buf));
	is(rd(f, a, buf, 5000, 1000), 5000, "holes: unaligned read over two pages");
	ok(all_bytes(buf, 5000, 0) && all_bytes(buf + 5000, sizeof(buf) - 5000, 0xaa),
	   "holes: ... zeros, and not a byte more");
	memset(buf, 0xaa, sizeof(buf));
	is(rd(f, a, buf, 2 * PAGE + 2, PAGE - 1), 2 * PAGE + 2, "holes: read over four pages");
	ok(all_bytes(buf, 2 * PAGE + 2, 0) && buf[2 * PAGE + 2] == 0xaa, "holes: ... zeros");
	is(rd(f, a, buf, 10, size), 0, "holes: read at EOF -> 0");
	is(rd(f, a, buf, 10, size + 1), 0, "holes: read past EOF -> 0");
	is(rd(f, a, buf, 10, UINT64_MAX), 0, "holes: read at 2^64 - 1 -> 0");
	memset(buf, 0xaa, sizeof(buf));
	is(rd(f, a, buf, 100, size - 10), 10, "holes: a read crossing EOF is short");
	ok(all_bytes(buf, 10, 0) && all_bytes(buf + 10, 100, 0xaa), "holes: ... 10 zeros only");
	memset(buf, 0xaa, sizeof(buf));
	is(rd(f, a, buf, sizeof(buf), 2 * PAGE + 7), size - 2 * PAGE - 7,
	   "holes: a long unaligned read to EOF");
	ok(all_bytes(buf, size - 2 * PAGE - 7, 0), "holes: ... zeros");
	is(lv_file_cached_pages(f), 6, "holes: each of the 6 pages cached once");
	is(nstat(m, LV_NR_FILE_PAGES), 6, "holes: LV_NR_FILE_PAGES 6");
	is(lv_memcg_usage(a), 6, "holes: the reader's memcg is charged 6 pages");
	lv_file_close(f);
	is(nstat(m, LV_NR_FILE_PAGES), 0, "holes: closed: LV_NR_FILE_PAGES 0");
	lv_lru_add_drain_all(m);
	is(lv_memcg_usage(a), 0, "holes: closed: usage 0");
	is(lv_memcg_remove(a), 0, "holes: memcg removed");
	finish(m, "holes");
}

/* ---- a real file ----------------------------------------------------------------------- */

static void test_real_file(void)
{
	static const size_t chunks[] = { 1, 7, 511, 4096, 4097, 10000, 3 * 4096 + 5 };
	static const uint64_t starts[] = { 0, 1, 777, 4095, 4096 };
	const uint64_t real = 13 * PAGE + 1234, longer = real + 3 * PAGE + 5;
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	unsigned char *buf = malloc(8 * PAGE);
	size_t bad = 0, wrong_len = 0;
	int fd = temp_file(real, 0);
	uint32_t seed = 12345;
	struct lv_file *f;
	long n;

	f = lv_file_open(m, fd, real);
	if (!f || !buf)
		BAIL_OUT("real file: setup failed");
	for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
		for (size_t s = 0; s < sizeof(starts) / sizeof(starts[0]); s++) {
			for (uint64_t off = starts[s];; off += (uint64_t)n) {
				uint64_t want = off >= real ? 0 : real - off;

				if (want > chunks[c])
					want = chunks[c];
				n = rd(f, NULL, buf, chunks[c], off);
				if (n != (long)want) {
					if (!wrong_len++)
						diag("read(%zu at %llu) = %ld, expected %llu",
						     chunks[c], (unsigned long long)off, n,
						     (unsigned long long)want);
					break;
				}
				if (!n)
					break;
				bad += bad_bytes(buf, (size_t)n, off, real, 0);
			}
		}
	}
	is(wrong_len, 0, "real file: sequential reads return min(len, size - off)");
	is(bad, 0, "real file: every byte of every chunk size and alignment matches");
	is(lv_file_cached_pages(f), 14, "real file: 14 pages cached, each once");
	for (int i = 0; i < 2000; i++) {
		uint64_t off, want;
		size_t len;

		seed = seed * 1103515245 + 12345;
		off = (seed >> 4) % (real + PAGE);
		seed = seed * 1103515245 + 12345;
		len = 1 + (seed >> 4) % (4 * PAGE);
		want = off >= real ? 0 : real - off < len ? real - off : len;
		n = rd(f, NULL, buf, len, off);
		if (n != (long)want)
			wrong_len++;
		else
			bad += bad_bytes(buf, (size_t)n, off, real, 0);
	}
	is(wrong_len, 0, "real file: 2000 random reads have the right lengths");
	is(bad, 0, "real file: ... and the right bytes");
	lv_file_close(f);

	/* Opened larger than it is: zeros after the real end. */
	f = lv_file_open(m, fd, longer);
	if (!f)
		BAIL_OUT("real file: reopen failed");
	memset(buf, 0xaa, 8 * PAGE);
	n = rd(f, NULL, buf, 2 * PAGE, real - 100);
	is(n, 2 * PAGE, "short file: a read over the real end is not short");
	is(bad_bytes(buf, 2 * PAGE, real - 100, real, 0), 0, "short file: ... data, then zeros");
	memset(buf, 0xaa, 8 * PAGE);
	n = rd(f, NULL, buf, 4 * PAGE, real + 2 * PAGE);
	is(n, longer - real - 2 * PAGE, "short file: a read to the given size");
	ok(n > 0 && all_bytes(buf, (size_t)n, 0), "short file: ... reads zeros");
	memset(buf, 0xaa, 8 * PAGE);
	n = rd(f, NULL, buf, 8 * PAGE, 9 * PAGE + 3);
	is(n, longer - 9 * PAGE - 3, "short file: one read from page 9 to the end");
	is(bad_bytes(buf, (size_t)(longer - 9 * PAGE - 3), 9 * PAGE + 3, real, 0), 0,
	   "short file: ... every byte right");
	is(lv_file_cached_pages(f), 8, "short file: pages 9..16 cached");
	lv_file_close(f);
	close(fd);
	free(buf);
	finish(m, "real file");
}

/* ---- concurrent readers ---------------------------------------------------------------- */

#define READERS 8
#define ROUNDS	16

struct reader_arg {
	struct lv_file *file;
	struct lv_memcg *memcg;
	pthread_barrier_t *start, *leave;
	uint64_t real; /* bytes of real data in the file */
	long results[ROUNDS];
	size_t bad;
};

/* same_page_reader - in round r, read page r at once with every other reader. */
static void *same_page_reader(void *p)
{
	struct reader_arg *a = p;
	unsigned char buf[PAGE];

	for (int r = 0; r < ROUNDS; r++) {
		pthread_barrier_wait(a->start);
		a->results[r] = lv_file_read(a->file, a->memcg, buf, PAGE, (uint64_t)r * PAGE);
		if (a->results[r] > 0)
			a->bad += bad_bytes(buf, (size_t)a->results[r], (uint64_t)r * PAGE, a->real,
					    0);
	}
	/* liburcu-bp reuses an exited thread's reader slot: let all register before any exits. */
	pthread_barrier_wait(a->leave);
	return NULL;
}

/* run_readers - READERS threads, ROUNDS rounds; Return: how many reads returned @expect. */
static int run_readers(struct lv_file *f, struct lv_memcg *memcg, uint64_t real, long expect,
		       size_t *bad)
{
	struct reader_arg args[READERS];
	pthread_barrier_t start, leave;
	pthread_t th[READERS];
	int good = 0, shown = 0;

	pthread_barrier_init(&start, NULL, READERS);
	pthread_barrier_init(&leave, NULL, READERS);
	*bad = 0;
	for (int i = 0; i < READERS; i++) {
		args[i] = (struct reader_arg){
			.file = f, .memcg = memcg, .start = &start, .leave = &leave, .real = real
		};
		if (pthread_create(&th[i], NULL, same_page_reader, &args[i]))
			BAIL_OUT("pthread_create failed");
	}
	for (int i = 0; i < READERS; i++) {
		pthread_join(th[i], NULL);
		*bad += args[i].bad;
		for (int r = 0; r < ROUNDS; r++) {
			if (args[i].results[r] == expect)
				good++;
			else if (shown++ < 5)
				diag("reader %d round %d: %ld, expected %ld", i, r,
				     args[i].results[r], expect);
		}
	}
	pthread_barrier_destroy(&start);
	pthread_barrier_destroy(&leave);
	return good;
}

static void test_concurrent_readers(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *a = lv_memcg_create(m, NULL, "a");
	const uint64_t real = ROUNDS * PAGE + 333;
	int fd = temp_file(real, 0);
	struct lv_file *f = lv_file_open(m, fd, real);
	size_t bad;

	if (!f || !a)
		BAIL_OUT("concurrent readers: setup failed");
	is(run_readers(f, a, real, PAGE, &bad), READERS * ROUNDS,
	   "concurrent readers: %d readers x %d pages: every read returns the page", READERS,
	   ROUNDS);
	is(bad, 0, "concurrent readers: every reader got the right bytes");
	is(lv_file_cached_pages(f), ROUNDS, "concurrent readers: exactly one folio per page");
	is(nstat(m, LV_NR_FILE_PAGES), ROUNDS, "concurrent readers: LV_NR_FILE_PAGES agrees");
	is(lv_memcg_usage(a), ROUNDS, "concurrent readers: memcg charged exactly 1 page per page");
	lv_lru_add_drain_all(m);
	is(lv_memcg_stat(a, LV_NR_INACTIVE_FILE) + lv_memcg_stat(a, LV_NR_ACTIVE_FILE), ROUNDS,
	   "concurrent readers: one folio per page on the LRU");
	check_ok(m, "concurrent readers");
	lv_file_close(f);
	close(fd);
	lv_lru_add_drain_all(m);
	is(lv_memcg_remove(a), 0, "concurrent readers: memcg removed");
	finish(m, "concurrent readers");
}

/* Fills of 20 ms: every other reader of the page outlasts its awake wait and sleeps. */
static void test_slow_fills(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *a = lv_memcg_create(m, NULL, "a");
	const uint64_t real = ROUNDS * PAGE;
	int fd = temp_file(real, 0), dir = open("/", O_RDONLY | O_DIRECTORY);
	struct lv_file *f = lv_file_open(m, fd, real), *d = lv_file_open(m, dir, real);
	size_t bad;

	if (!f || !d || !a || dir < 0)
		BAIL_OUT("slow fills: setup failed");
	alarm(120); /* a lost wakeup hangs: make it a failure */
	fill_delay_us = 20000;
	is(run_readers(f, a, real, PAGE, &bad), READERS * ROUNDS,
	   "slow fills: %d readers x %d pages, each filled in 20 ms: every read returns the page",
	   READERS, ROUNDS);
	is(bad, 0, "slow fills: every reader got the right bytes");
	is(lv_file_cached_pages(f), ROUNDS, "slow fills: exactly one folio per page");
	is(slowed_preads, ROUNDS, "slow fills: every fill went through the slowed pread");
	{
		struct lv_folio *batch[ROUNDS];
		unsigned long start = 0;
		unsigned int nr = filemap_get_folios(f, &start, batch, ROUNDS), slept = 0;

		for (unsigned int i = 0; i < nr; i++) {
			slept += folio_test(batch[i], PG_waiters);
			lv_folio_put(batch[i]);
		}
		is(slept, ROUNDS, "slow fills: on every page, some reader slept (PG_waiters)");
	}
	is(run_readers(d, a, 0, -EIO, &bad), READERS * ROUNDS,
	   "slow fills: when the slow fill fails, every sleeping reader gets -EIO");
	is(lv_file_cached_pages(d), 0, "slow fills: nothing of the failing file cached");
	fill_delay_us = 0;
	alarm(0);
	check_ok(m, "slow fills");
	lv_file_close(f);
	lv_file_close(d);
	close(fd);
	close(dir);
	lv_lru_add_drain_all(m);
	is(lv_memcg_usage(a), 0, "slow fills: memcg usage 0 after close");
	is(lv_memcg_remove(a), 0, "slow fills: memcg removed");
	finish(m, "slow fills");
}

/* ---- failing fills --------------------------------------------------------------------- */

static void test_fill_errors(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *a = lv_memcg_create(m, NULL, "a");
	uint64_t free0 = nstat(m, LV_NR_FREE);
	int fd = open("/", O_RDONLY | O_DIRECTORY);
	unsigned char buf[2 * PAGE];
	struct lv_file *f;
	size_t bad;

	if (fd < 0 || !a)
		BAIL_OUT("fill errors: open(\"/\"): %s", strerror(errno));
	f = lv_file_open(m, fd, 64 * PAGE);
	if (!f)
		BAIL_OUT("fill errors: lv_file_open failed");
	is(rd(f, a, buf, 100, 0), -EIO, "fill errors: pread fails (EISDIR) -> -EIO");
	is(lv_file_cached_pages(f), 0, "fill errors: the failed page is not cached");
	is(rd(f, a, buf, sizeof(buf), PAGE - 1), -EIO,
	   "fill errors: a read over two pages -> -EIO");
	is(rd(f, a, buf, 100, 0), -EIO, "fill errors: a retry fails again (nothing sticky)");
	is(run_readers(f, a, 0, -EIO, &bad), READERS * ROUNDS,
	   "fill errors: %d concurrent readers of one page all get -EIO", READERS);
	is(lv_file_cached_pages(f), 0, "fill errors: nothing left cached");
	is(nstat(m, LV_NR_FILE_PAGES), 0, "fill errors: LV_NR_FILE_PAGES 0");
	lv_lru_add_drain_all(m);
	is(nstat(m, LV_NR_FREE), free0, "fill errors: every frame is free again");
	is(lv_memcg_usage(a), 0, "fill errors: memcg usage 0");
	is(lv_memcg_stat(a, LV_NR_INACTIVE_FILE) + lv_memcg_stat(a, LV_NR_ACTIVE_FILE), 0,
	   "fill errors: no folio left on the LRU");
	check_ok(m, "fill errors");
	lv_file_close(f);
	close(fd);
	is(lv_memcg_remove(a), 0, "fill errors: memcg removed");
	finish(m, "fill errors");
}

/* ---- truncation and close -------------------------------------------------------------- */

static uint64_t file_lru_pages(struct lv_memcg *memcg)
{
	return lv_memcg_stat(memcg, LV_NR_INACTIVE_FILE) + lv_memcg_stat(memcg, LV_NR_ACTIVE_FILE);
}

static void test_truncate(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *a = lv_memcg_create(m, NULL, "a"), *b = lv_memcg_create(m, NULL, "b");
	unsigned char *buf = malloc(64 * PAGE);
	const uint64_t real = 20 * PAGE + 50;
	struct lv_file *f, *g;
	bool removed;
	size_t usage;
	int fd;

	f = lv_file_open(m, -1, 64 * PAGE);
	if (!f || !a || !b || !buf)
		BAIL_OUT("truncate: setup failed");
	is(rd(f, a, buf, 64 * PAGE, 0), 64 * PAGE, "truncate: read 64 pages");
	lv_lru_add_drain_all(m);
	is(lv_file_cached_pages(f), 64, "truncate: 64 cached");
	is(lv_memcg_usage(a), 64, "truncate: 64 charged");

	is(lv_file_truncate(f, 10 * PAGE + 100), 0, "truncate: to 10 pages + 100 bytes -> 0");
	is(lv_file_cached_pages(f), 10, "truncate: pages 10..63 dropped, the partial page too");
	is(nstat(m, LV_NR_FILE_PAGES), 10, "truncate: LV_NR_FILE_PAGES 10");
	is(lv_memcg_usage(a), 10, "truncate: dropped pages uncharged at once");
	is(file_lru_pages(a), 10, "truncate: dropped pages left the LRU");
	is(rd(f, a, buf, PAGE, 11 * PAGE), 0, "truncate: read beyond the new size -> 0");
	is(rd(f, a, buf, PAGE, 10 * PAGE + 100), 0, "truncate: read at the new size -> 0");
	is(lv_file_cached_pages(f), 10, "truncate: reads beyond the end cache nothing");
	is(rd(f, a, buf, PAGE, 10 * PAGE), 100, "truncate: a read over the new end is short");
	is(lv_file_cached_pages(f), 11, "truncate: ... and fills the partial page again");

	is(lv_file_truncate(f, 64 * PAGE), 0, "truncate: grow back to 64 pages");
	memset(buf, 0xaa, 3 * PAGE);
	is(rd(f, a, buf, 3 * PAGE, 10 * PAGE), 3 * PAGE, "truncate: grown: read pages 10..12");
	ok(all_bytes(buf, 3 * PAGE, 0), "truncate: grown: a sparse file reads zeros");
	is(rd(f, a, buf, PAGE, 40 * PAGE), PAGE, "truncate: grown: read page 40");
	is(lv_file_cached_pages(f), 14, "truncate: grown: 14 pages cached");
	lv_lru_add_drain_all(m);

	/* Pages still queued in the CPU's lru_add batch when the truncation comes. */
	usage = lv_memcg_usage(a);
	is(rd(f, a, buf, 5 * PAGE, 20 * PAGE), 5 * PAGE, "truncate: read pages 20..24 (queued)");
	is(lv_memcg_usage(a), usage + 5, "truncate: 5 more charged");
	is(lv_file_truncate(f, 20 * PAGE), 0, "truncate: to 20 pages (drops 20..24 and 40)");
	is(lv_file_cached_pages(f), 13, "truncate: the queued pages left the page cache");
	is(nstat(m, LV_NR_FILE_PAGES), 13, "truncate: LV_NR_FILE_PAGES 13");
	is(lv_memcg_usage(a), usage - 1, "truncate: ... and were freed (no drain needed)");
	lv_lru_add_drain_all(m);
	is(lv_memcg_usage(a), usage - 1, "truncate: after a drain they are freed");

	is(lv_file_truncate(f, 0), 0, "truncate: to 0");
	is(lv_file_cached_pages(f), 0, "truncate: to 0: nothing cached");
	is(lv_memcg_usage(a), 0, "truncate: to 0: nothing charged");
	is(rd(f, a, buf, PAGE, 0), 0, "truncate: to 0: read -> 0");
	skip("truncation of a page an ongoing reader holds: no API holds a page cache folio");
	check_ok(m, "truncate");

	/* A real file: growing back reads zeros past the size it was cut to (ftruncate(2)). */
	fd = temp_file(real, 0);
	g = lv_file_open(m, fd, real);
	if (!g)
		BAIL_OUT("truncate: open real file failed");
	is(rd(g, a, buf, real, 0), real, "truncate real: read all");
	is(lv_file_truncate(g, 5 * PAGE + 1), 0, "truncate real: to 5 pages + 1");
	is(lv_file_cached_pages(g), 5, "truncate real: 5 pages cached");
	is(rd(g, a, buf, PAGE, 5 * PAGE), 1, "truncate real: one byte left in page 5");
	is(lv_file_truncate(g, real), 0, "truncate real: grow back");
	memset(buf, 0xaa, 64 * PAGE);
	is(rd(g, a, buf, 64 * PAGE, 0), real, "truncate real: read all again");
	is(bad_bytes(buf, real, 0, 5 * PAGE + 1, 0), 0,
	   "truncate real: the file's bytes up to 5 pages + 1, zeros after");
	lv_file_close(g);
	close(fd);

	/* Close drops everything; the reader's memcg can then be removed. */
	is(rd(f, b, buf, PAGE, 0), 0, "close: size 0 still");
	is(lv_file_truncate(f, 8 * PAGE), 0, "close: grow to 8 pages");
	is(rd(f, b, buf, 8 * PAGE, 0), 8 * PAGE, "close: 8 pages read through b (queued)");
	is(lv_memcg_usage(b), 8, "close: b charged 8");
	lv_file_close(f);
	is(nstat(m, LV_NR_FILE_PAGES), 0, "close: LV_NR_FILE_PAGES 0");
	is(lv_memcg_usage(b), 0, "close: b's pages are uncharged (no drain needed)");
	removed = lv_memcg_remove(b) == 0;
	ok(removed, "close: b can be removed at once");
	if (!removed) {
		lv_lru_add_drain_all(m);
		is(lv_memcg_usage(b), 0, "close: after a drain b's usage is 0");
		is(lv_memcg_remove(b), 0, "close: after a drain b is removed");
	}
	is(lv_memcg_usage(a), 0, "close: a's usage is 0");
	is(lv_memcg_remove(a), 0, "close: a removed");
	free(buf);
	finish(m, "truncate");
}

/* ---- bytes past the size ------------------------------------------------------------------ */

/* watch - count what the library asks of @fd from now on. */
static void watch(int fd)
{
	watch_fd = fd;
	__atomic_store_n(&watch_end, 0, __ATOMIC_RELAXED);
}

/*
 * read_check - read all of @f (@size bytes) and count the bytes unlike a temp_file(0)
 * below @data and zeros from there on.
 */
static size_t read_check(struct lv_file *f, unsigned char *buf, uint64_t size, uint64_t data)
{
	memset(buf, 0xaa, size);
	if (rd(f, NULL, buf, size, 0) != (long)size)
		return size;
	return bad_bytes(buf, size, 0, data, 0);
}

/*
 * A file is its descriptor's bytes below the smallest size it has had since it was opened,
 * zeros after them, as ftruncate(2) leaves a file shrunk and grown again; no byte of the
 * descriptor at or past that size is even asked for. Real files longer than the size, sizes
 * that are not page multiples, large folios, and shrinking then growing.
 */
static void test_size_limit(unsigned int order)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m;
	const uint64_t real = 32 * PAGE, size = 5 * PAGE + 100, cut = 3 * PAGE + 5;
	unsigned char *buf = malloc(real);
	int fd = temp_file(real, 0);
	struct lv_file *f;

	cfg.file_folio_order = order;
	m = new_machine(&cfg);
	if (!buf)
		BAIL_OUT("size limit: out of memory");

	/* Opened shorter than the descriptor, at a size inside a page. */
	watch(fd);
	f = lv_file_open(m, fd, size);
	if (!f)
		BAIL_OUT("size limit: open");
	is(read_check(f, buf, size, size), 0, "order %u: opened at 5 pages + 100: the bytes",
	   order);
	ok(watch_end > 0 && watch_end <= size,
	   "order %u: ... and nothing past the size asked of the descriptor (asked up to %llu)",
	   order, (unsigned long long)watch_end);
	is(lv_file_truncate(f, 12 * PAGE), 0, "order %u: grown to 12 pages", order);
	is(read_check(f, buf, 12 * PAGE, size), 0,
	   "order %u: grown: zeros past the size it was opened with", order);
	ok(watch_end <= size, "order %u: grown: still nothing past it asked (%llu)", order,
	   (unsigned long long)watch_end);
	lv_file_close(f);

	/* Opened at the descriptor's size, cached whole, cut inside a page, grown again. */
	f = lv_file_open(m, fd, real);
	if (!f)
		BAIL_OUT("size limit: reopen");
	is(read_check(f, buf, real, real), 0, "order %u: 32 pages cached", order);
	is(lv_file_truncate(f, cut), 0, "order %u: cut to 3 pages + 5", order);
	is(rd(f, NULL, buf, real, 0), (long)cut, "order %u: cut: reads end at the cut", order);
	watch(fd);
	is(lv_file_truncate(f, real), 0, "order %u: grown back to 32 pages", order);
	is(read_check(f, buf, real, cut), 0,
	   "order %u: grown back: the bytes up to the cut, zeros after it", order);
	ok(watch_end <= cut, "order %u: ... nothing past the cut asked of the descriptor (%llu)",
	   order, (unsigned long long)watch_end);
	is(lv_file_truncate(f, 8 * PAGE), 0, "order %u: cut at a page boundary", order);
	is(lv_file_truncate(f, 2 * PAGE), 0, "order %u: and below the first cut", order);
	is(lv_file_truncate(f, real), 0, "order %u: grown back again", order);
	is(read_check(f, buf, real, 2 * PAGE), 0, "order %u: zeros past the smallest size", order);
	watch_fd = -1;
	check_ok(m, "size limit");
	lv_file_close(f);
	close(fd);
	free(buf);
	finish(m, "size limit");
}

#ifdef LV_DEBUG
struct held_read {
	struct lv_file *file;
	struct lv_memcg *memcg;
	unsigned char buf[2 * PAGE];
	long result;
};

static void *held_reader(void *arg)
{
	struct held_read *r = arg;

	r->result = rd(r->file, r->memcg, r->buf, sizeof(r->buf), 0);
	return NULL;
}

/*
 * A read through a memcg blocks in its first page's fill while the memcg is removed: the
 * removal moves the page being filled to the parent and returns 0, but the memcg is not freed
 * while the read runs; the read returns that page (its second page would be a charge to a
 * memcg being removed: -ENOENT ends the read there), and the memcg is freed once it returns.
 */
static void test_remove_during_read(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *victim = new_memcg(m, NULL, "victim");
	int fd = temp_file(2 * PAGE, 0);
	struct held_read r = { .file = lv_file_open(m, fd, 2 * PAGE), .memcg = victim };
	bool pending = true;
	pthread_t th;

	if (!r.file)
		BAIL_OUT("remove during read: open");
	hold_fd = fd;
	__atomic_store_n(&hold_go, 0, __ATOMIC_RELAXED);
	start_ready(&th, held_reader, &r, &hold_inside);
	is(lv_memcg_remove(victim), 0, "remove during read: removed while a fill is held");
	for (int i = 0; i < 100 && pending; i++) {
		usleep(1000);
		pending = memcg_pending(m, victim);
	}
	ok(pending, "remove during read: not freed while the read runs");
	__atomic_store_n(&hold_go, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	hold_fd = -1;
	is(r.result, PAGE, "remove during read: the read returns the page it was filling");
	is(bad_bytes(r.buf, PAGE, 0, 2 * PAGE, 0), 0, "remove during read: its bytes");
	is(lv_memcg_stat(lv_memcg_root(m), LV_PGPGIN), 1,
	   "remove during read: the fill counted for the parent, which holds the page now");
	is(lv_file_cached_pages(r.file), 1, "remove during read: the page stays cached");
	for (int i = 0; i < 2000 && memcg_pending(m, victim); i++)
		usleep(1000);
	ok(!memcg_pending(m, victim), "remove during read: freed once the read returned");
	lv_file_close(r.file);
	close(fd);
	finish(m, "remove during read");
}
#endif

/* ---- the workingset size --------------------------------------------------------------- */

/*
 * evict - evict page @index of @f exactly as reclaim does (isolate, then remove_mapping(),
 * which leaves a shadow entry): one page and nothing else moves the workingset clock.
 */
static void evict(struct lv_file *f, unsigned long index)
{
	unsigned long start = index;
	struct lv_folio *folio;

	if (filemap_get_folios(f, &start, &folio, 1) != 1 || folio->index != index)
		BAIL_OUT("evict: page %lu is not cached", index);
	if (lv_folio_isolate_lru(folio))
		BAIL_OUT("evict: page %lu is not on an LRU", index);
	lv_folio_put(folio); /* the lookup's: the cache and the isolation hold it now */
	if (!remove_mapping(folio))
		BAIL_OUT("evict: page %lu is in use", index);
	free_folios(&folio, 1);
}

/*
 * A refault is activated when its distance (pages evicted or activated in the evicting memcg
 * on that node since the eviction, the page's own included) is at most the workingset size
 * (the pages on that memcg's active file list there): with 4 active pages, a page followed by
 * 3 more evictions refaults at distance 4 and is activated; one followed by 4 refaults at 5
 * and is not.
 */
static void test_workingset_size(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	unsigned char buf[8 * PAGE];

	for (unsigned long after = 3; after <= 4; after++) {
		struct lv_memcg *a = new_memcg(m, NULL, "ws");
		struct lv_file *hot = lv_file_open(m, -1, 4 * PAGE),
			       *s = lv_file_open(m, -1, 8 * PAGE);
		uint64_t act;

		if (!hot || !s)
			BAIL_OUT("workingset size: open");
		rd(hot, a, buf, 4 * PAGE, 0);
		rd(hot, a, buf, 4 * PAGE, 0);
		rd(s, a, buf, 8 * PAGE, 0);
		lv_lru_add_drain_all(m);
		is(lv_memcg_stat(a, LV_NR_ACTIVE_FILE), 4, "workingset size: 4 active pages");
		for (unsigned long i = 0; i <= after; i++)
			evict(s, i);
		act = lv_memcg_stat(a, LV_WORKINGSET_ACTIVATE);
		is(rd(s, a, buf, PAGE, 0), PAGE, "workingset size: page 0 refaults after %lu more",
		   after);
		is(lv_memcg_stat(a, LV_WORKINGSET_ACTIVATE) - act, after + 1 <= 4,
		   "workingset size: distance %lu against 4 active pages: %s", after + 1,
		   after + 1 <= 4 ? "activated" : "not activated");
		lv_file_close(hot);
		lv_file_close(s);
		lv_lru_add_drain_all(m);
		is(lv_memcg_remove(a), 0, "workingset size: memcg removed");
	}
	finish(m, "workingset size");
}

/* ---- charging and activation ----------------------------------------------------------- */

static void test_charge_activate(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *a = lv_memcg_create(m, NULL, "a"), *b = lv_memcg_create(m, NULL, "b");
	unsigned char buf[32 * PAGE];
	struct lv_file *f = lv_file_open(m, -1, 64 * PAGE), *g = lv_file_open(m, -1, 4 * PAGE);
	uint64_t act;

	if (!f || !g || !a || !b)
		BAIL_OUT("charge: setup failed");
	is(rd(f, a, buf, 32 * PAGE, 0), 32 * PAGE, "charge: a reads pages 0..31");
	is(rd(f, b, buf, 32 * PAGE, 32 * PAGE), 32 * PAGE, "charge: b reads pages 32..63");
	is(lv_memcg_usage(a), 32, "charge: a is charged its 32 pages");
	is(lv_memcg_usage(b), 32, "charge: b is charged its 32 pages");
	is(lv_memcg_stat(a, LV_PGPGIN), 32, "charge: a's reads filled 32 pages (pgpgin)");
	is(lv_memcg_stat(b, LV_PGPGIN), 32, "charge: b's reads filled 32 pages (pgpgin)");
	lv_lru_add_drain_all(m);
	is(lv_memcg_stat(a, LV_NR_INACTIVE_FILE), 32, "charge: a's inactive file list holds 32");
	is(lv_memcg_stat(b, LV_NR_INACTIVE_FILE), 32, "charge: b's inactive file list holds 32");
	is(lv_memcg_stat(a, LV_NR_ACTIVE_FILE) + lv_memcg_stat(b, LV_NR_ACTIVE_FILE), 0,
	   "charge: one access activates nothing");

	act = lv_memcg_stat(a, LV_PGACTIVATE);
	is(rd(f, b, buf, 8 * PAGE, 0), 8 * PAGE, "charge: b reads a's pages 0..7");
	is(lv_memcg_usage(b), 32, "charge: a cached page read by b charges b nothing");
	is(lv_memcg_usage(a), 32, "charge: ... and stays charged to a");
	is(lv_memcg_stat(b, LV_PGPGIN), 32, "charge: hits in the page cache fill nothing");
	lv_lru_add_drain_all(m);
	is(lv_memcg_stat(a, LV_NR_ACTIVE_FILE), 8, "readtwice: the second access activated 8");
	is(lv_memcg_stat(a, LV_NR_INACTIVE_FILE), 24, "readtwice: 24 stay inactive");
	is(lv_memcg_stat(a, LV_PGACTIVATE) - act, 8, "readtwice: pgactivate counted 8 on a");
	is(lv_memcg_stat(b, LV_NR_ACTIVE_FILE), 0, "readtwice: nothing moved to b's lists");
	is(rd(f, a, buf, 8 * PAGE, 0), 8 * PAGE, "readtwice: third access");
	is(rd(f, a, buf, 8 * PAGE, 0), 8 * PAGE, "readtwice: fourth access");
	lv_lru_add_drain_all(m);
	is(lv_memcg_stat(a, LV_NR_ACTIVE_FILE), 8, "readtwice: further accesses keep them active");
	is(lv_memcg_stat(a, LV_PGACTIVATE) - act, 8, "readtwice: ... without activating again");

	/* Both accesses while the folios are still in the CPU's lru_add batch. */
	is(rd(f, b, buf, 4 * PAGE, 40 * PAGE), 4 * PAGE, "readtwice: b reads pages 40..43");
	is(rd(g, b, buf, 4 * PAGE, 0), 4 * PAGE, "readtwice queued: b reads g's 4 pages");
	is(rd(g, b, buf, 4 * PAGE, 0), 4 * PAGE, "readtwice queued: ... twice before a drain");
	lv_lru_add_drain_all(m);
	is(lv_memcg_stat(b, LV_NR_ACTIVE_FILE), 8, "readtwice: b has 4 + 4 active pages");
	is(lv_memcg_stat(b, LV_NR_INACTIVE_FILE), 28, "readtwice: b has 28 inactive");
	is(lv_memcg_usage(b), 36, "charge: b charged 32 + 4");
	is(lv_memcg_stat(b, LV_PGPGIN), 36, "charge: b filled 32 + 4 pages (pgpgin)");
	is(nstat(m, LV_PGPGIN), 68, "charge: the node's pgpgin is the sum of its memcgs'");
	check_ok(m, "charge");
	lv_file_close(f);
	lv_file_close(g);
	lv_lru_add_drain_all(m);
	is(lv_memcg_remove(a), 0, "charge: a removed");
	is(lv_memcg_remove(b), 0, "charge: b removed");
	finish(m, "charge");
}

/* ---- bounded memory -------------------------------------------------------------------- */

static void test_bounded(void)
{
	struct lv_config cfg = small_config(); /* kswapd off: direct reclaim must make room */
	struct lv_machine *m;
	const size_t chunk = 64 * 1024;
	unsigned char *buf = malloc(chunk);
	uint64_t nr_pages, size, max_file = 0, fp;
	size_t failed = 0, nonzero = 0, mismatch = 0;
	struct lv_file *f;

	cfg.node_mem_bytes = 8 * MiB;
	m = new_machine(&cfg);
	nr_pages = cfg.node_mem_bytes / PAGE;
	size = 8 * cfg.node_mem_bytes;
	f = lv_file_open(m, -1, size);
	if (!f || !buf)
		BAIL_OUT("bounded: setup failed");
	for (uint64_t off = 0; off < size; off += chunk) {
		long n;

		memset(buf, 0xaa, chunk);
		n = rd(f, NULL, buf, chunk, off);
		if (n != (long)chunk) {
			if (!failed++)
				diag("bounded: read at %llu: %ld", (unsigned long long)off, n);
			continue;
		}
		nonzero += !all_bytes(buf, chunk, 0);
		fp = nstat(m, LV_NR_FILE_PAGES);
		if (fp > max_file)
			max_file = fp;
		mismatch += fp != lv_file_cached_pages(f);
	}
	is(failed, 0, "bounded: every read of a file 8x the machine succeeds");
	is(nonzero, 0, "bounded: ... and reads zeros");
	ok(max_file <= nr_pages,
	   "bounded: LV_NR_FILE_PAGES never above the node's %llu pages (max %llu)",
	   (unsigned long long)nr_pages, (unsigned long long)max_file);
	ok(max_file >= nr_pages / 2, "bounded: the page cache did fill most of the node");
	is(mismatch, 0, "bounded: LV_NR_FILE_PAGES equals the file's cached pages");
	ok(nstat(m, LV_PGSTEAL) >= size / PAGE - nr_pages,
	   "bounded: at least size - memory pages were reclaimed (pgsteal %llu)",
	   (unsigned long long)nstat(m, LV_PGSTEAL));
	ok(nstat(m, LV_ALLOCSTALL) > 0, "bounded: allocations entered direct reclaim");
	ok(nstat(m, LV_PGSCAN) >= nstat(m, LV_PGSTEAL), "bounded: pgscan >= pgsteal");
	lv_file_close(f);
	lv_lru_add_drain_all(m);
	is(nstat(m, LV_NR_FILE_PAGES), 0, "bounded: closed: no page cache");
	is(nstat(m, LV_NR_FREE), nr_pages, "bounded: closed: every page is free");
	free(buf);
	finish(m, "bounded");
}

int main(void)
{
	test_errors();
	test_holes();
	test_real_file();
	test_concurrent_readers();
	test_slow_fills();
	test_fill_errors();
	test_truncate();
	test_size_limit(0);
	test_size_limit(2);
	test_size_limit(LV_MAX_FILE_FOLIO_ORDER);
#ifdef LV_DEBUG
	test_remove_during_read();
#endif
	test_charge_activate();
	test_workingset_size();
	test_bounded();
	return done_testing();
}
