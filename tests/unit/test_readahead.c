// SPDX-License-Identifier: LGPL-2.1-or-later
/* Readahead (lv_config.readahead_pages): which pages a miss reads (the window, its end at the
 * file's end and at a page cached already, sequential readers only), their charges and LRU
 * order, how their first reads mark them, a fill that fails inside a run (and a reader asleep
 * on that page, which reads it itself), a memcg at its limit in the middle of one, and a
 * truncation while a run's fills are in flight. */
#include "internal.h" /* filemap_peek(), the LRU lists: is the run on them in index order? */

#include "lvtest.h"

#include <pthread.h>
#include <unistd.h>

#define PAGE LV_PAGE_SIZE
#define RA   8

/*
 * The library's pread(2) is wrapped (-Wl,--wrap=pread, see the Makefile): preads of hold_fd
 * (at hold_off, or at any offset if it is -1) wait for hold_go, then a read of fail_fd at
 * fail_off fails once with EIO.
 */
static int fail_fd = -1;    /* set while no reader runs */
static off_t fail_off;	    /* set while no reader runs */
static int fail_armed;	    /* atomic: the one failure is still to come */
static int hold_fd = -1;    /* set while no reader runs */
static off_t hold_off = -1; /* set while no reader runs */
static int hold_inside;	    /* atomic: a pread of hold_fd is waiting */
static int hold_go;	    /* atomic */

ssize_t __real_pread(int fd, void *buf, size_t count, off_t offset);
ssize_t __wrap_pread(int fd, void *buf, size_t count, off_t offset);

ssize_t __wrap_pread(int fd, void *buf, size_t count, off_t offset)
{
	if (fd == hold_fd && (hold_off < 0 || offset == hold_off)) {
		__atomic_store_n(&hold_inside, 1, __ATOMIC_RELEASE);
		while (!__atomic_load_n(&hold_go, __ATOMIC_ACQUIRE))
			usleep(100);
	}
	if (fd == fail_fd && offset == fail_off &&
	    __atomic_exchange_n(&fail_armed, 0, __ATOMIC_ACQ_REL)) {
		errno = EIO;
		return -1;
	}
	return __real_pread(fd, buf, count, offset);
}

static struct lv_config ra_config(unsigned int ra)
{
	struct lv_config cfg = small_config();

	cfg.readahead_pages = ra;
	return cfg;
}

static long rd1(struct lv_file *f, struct lv_memcg *memcg, unsigned long page)
{
	unsigned char buf[PAGE];

	return lv_file_read(f, memcg, buf, PAGE, (uint64_t)page * PAGE);
}

/* cached - is page @index of @f a folio in the page cache (not a hole, not a shadow)? */
static bool cached(struct lv_file *f, unsigned long index)
{
	void *e = filemap_peek(f, index);

	return e && !((uintptr_t)e & 1);
}

static unsigned long cached_range(struct lv_file *f, unsigned long from, unsigned long to)
{
	unsigned long n = 0;

	for (unsigned long i = from; i < to; i++)
		n += cached(f, i);
	return n;
}

/* ---- the window ---------------------------------------------------------------------------- */

static void test_window(void)
{
	struct lv_config cfg = ra_config(RA);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *a = new_memcg(m, NULL, "a");
	struct lv_file *f = lv_file_open(m, -1, 64 * PAGE), *g = lv_file_open(m, -1, 10 * PAGE);
	struct lv_folio *run[RA];
	bool ordered = true;

	if (!f || !g)
		BAIL_OUT("window: lv_file_open failed");
	is(rd1(f, a, 0), PAGE, "window: read page 0");
	is(lv_file_cached_pages(f), RA, "window: a miss at page 0 caches %d pages", RA);
	is(cached_range(f, 0, RA), RA, "window: ... pages 0..%d", RA - 1);
	is(lv_memcg_usage(a), RA, "window: all %d charged to the reader's memcg", RA);
	is(lv_memcg_stat(a, LV_PGPGIN), RA, "window: pgpgin counts every page filled");
	is(lv_memcg_stat(a, LV_FILE_RA), RA - 1, "window: file_ra counts the %d read ahead",
	   RA - 1);
	for (unsigned long i = 1; i < RA; i++)
		rd1(f, a, i);
	is(lv_file_cached_pages(f), RA, "window: reads of pages 1..%d hit", RA - 1);
	is(rd1(f, a, RA), PAGE, "window: read page %d (page %d cached: sequential)", RA, RA - 1);
	is(lv_file_cached_pages(f), 2 * RA, "window: ... reads the next window");

	is(rd1(f, a, 40), PAGE, "window: read page 40 (page 39 not cached)");
	ok(cached(f, 40) && !cached(f, 41), "window: a reader that jumped reads one page");
	is(lv_memcg_stat(a, LV_FILE_RA), 2 * (RA - 1), "window: ... none of it ahead");
	is(rd1(f, a, 41), PAGE, "window: read page 41 (page 40 cached)");
	is(cached_range(f, 41, 41 + RA), RA, "window: ... reads ahead from 41");

	/* A page cached already ends the window. */
	is(rd1(f, a, 2 * RA + 4), PAGE, "window: read page %d alone", 2 * RA + 4);
	is(rd1(f, a, 2 * RA), PAGE, "window: read page %d", 2 * RA);
	is(cached_range(f, 2 * RA, 2 * RA + 4), 4, "window: pages %d..%d read ahead", 2 * RA,
	   2 * RA + 3);
	ok(!cached(f, 2 * RA + 5), "window: ... and nothing past the cached page %d", 2 * RA + 4);

	/* The end of the file ends it too. */
	is(rd1(g, a, 0), PAGE, "window: small file: read page 0");
	is(rd1(g, a, RA), PAGE, "window: small file: read page %d", RA);
	is(lv_file_cached_pages(g), 10, "window: small file: the window stops at its end");
	is(rd1(g, a, 10), 0, "window: small file: a read at the end reads nothing");

	/* The run joins the inactive list in index order, oldest first. */
	lv_lru_add_drain_all(m);
	for (unsigned long i = 0; i < RA; i++)
		run[i] = filemap_peek(f, i);
	{
		struct lruvec *lruvec = folio_lruvec(run[0]);
		struct list_head *head = &lruvec->lists[LRU_INACTIVE_FILE];
		struct list_head *pos = head->prev;

		for (unsigned long i = 0; i < RA && ordered; i++, pos = pos->prev)
			ordered = pos != head && list_entry(pos, struct lv_folio, lru) == run[i];
	}
	ok(ordered, "window: the run's folios are at the tail of the inactive list in index order");
	check_ok(m, "window");
	lv_file_close(f);
	lv_file_close(g);
	lv_lru_add_drain_all(m);
	is(lv_memcg_remove(a), 0, "window: memcg removed");
	finish(m, "window");
}

/* A machine without readahead, and faults, read one page per miss. */
static void test_off(void)
{
	for (unsigned int ra = 0; ra <= 1; ra++) {
		struct lv_config cfg = ra_config(ra);
		struct lv_machine *m = new_machine(&cfg);
		struct lv_file *f = lv_file_open(m, -1, 64 * PAGE);

		if (!f)
			BAIL_OUT("off: lv_file_open failed");
		rd1(f, NULL, 0);
		rd1(f, NULL, 1);
		is(lv_file_cached_pages(f), 2, "off: readahead_pages %u: one page per miss", ra);
		lv_file_close(f);
		finish(m, "off");
	}
	{
		struct lv_config cfg = ra_config(LV_MAX_READAHEAD + 1);

		ok(!lv_machine_create(&cfg) && errno == EINVAL,
		   "off: readahead_pages above %d: EINVAL", LV_MAX_READAHEAD);
		is_str(lv_config_invalid(&cfg), "readahead_pages", "off: ... names the field");
	}
	{
		struct lv_config cfg = ra_config(RA);
		struct lv_machine *m = new_machine(&cfg);
		struct lv_mm *mm = new_mm(m, NULL, 0);
		struct lv_file *f = lv_file_open(m, -1, 64 * PAGE);
		unsigned char page[PAGE];
		uint64_t addr;

		if (!f || lv_mmap_file(mm, f, 0, 64 * PAGE, LV_MAP_PRIVATE, &addr))
			BAIL_OUT("off: mapping failed");
		is(lv_mm_read(mm, addr, page, PAGE), 0, "off: a fault of page 0");
		is(lv_file_cached_pages(f), 1, "off: ... caches one page: faults never read ahead");
		is(lv_munmap(mm, addr, 64 * PAGE), 0, "off: unmapped");
		lv_mm_destroy(mm);
		lv_file_close(f);
		finish(m, "off");
	}
}

/* ---- first reads ----------------------------------------------------------------------------- */

static void test_first_read(void)
{
	struct lv_config cfg = ra_config(RA);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *a = new_memcg(m, NULL, "a");
	struct lv_file *f = lv_file_open(m, -1, 64 * PAGE);
	unsigned long referenced = 0;

	if (!f)
		BAIL_OUT("first read: lv_file_open failed");
	rd1(f, a, 0);
	lv_lru_add_drain_all(m);
	is(lv_memcg_stat(a, LV_NR_INACTIVE_FILE), RA, "first read: the run is inactive");
	for (unsigned long i = 1; i < RA; i++)
		referenced += folio_test_referenced(filemap_peek(f, i));
	is(referenced, 0, "first read: pages read ahead are not marked accessed before a read");
	for (unsigned long i = 1; i < RA; i++)
		rd1(f, a, i);
	lv_lru_add_drain_all(m);
	is(lv_memcg_stat(a, LV_NR_ACTIVE_FILE), 0, "first read: one read each activates nothing");
	referenced = 0;
	for (unsigned long i = 0; i < RA; i++)
		referenced += folio_test_referenced(filemap_peek(f, i));
	is(referenced, RA, "first read: ... and marks each accessed, as a missing read does");
	for (unsigned long i = 0; i < RA; i++)
		rd1(f, a, i);
	lv_lru_add_drain_all(m);
	is(lv_memcg_stat(a, LV_NR_ACTIVE_FILE), RA, "first read: the second reads activate all %d",
	   RA);
	is(lv_memcg_stat(a, LV_PGACTIVATE), RA, "first read: pgactivate %d", RA);
	check_ok(m, "first read");
	lv_file_close(f);
	lv_lru_add_drain_all(m);
	is(lv_memcg_remove(a), 0, "first read: memcg removed");
	finish(m, "first read");
}

/*
 * A refault activated on the way in is not marked by the read that caused it; for a page read
 * ahead, that read is its first. File h (64 pages read twice) makes the workingset; pages 0..RA-1
 * of f and 128 more read once fill the inactive list, whose tail (f's first pages) reclaim
 * evicts; f's pages then refault within the workingset's size, and are activated.
 */
static void test_refault(void)
{
	struct lv_config cfg = ra_config(RA);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *a = new_memcg(m, NULL, "a");
	struct lv_file *f = lv_file_open(m, -1, 512 * PAGE), *h = lv_file_open(m, -1, 64 * PAGE);
	unsigned long referenced = 0, rec;
	unsigned char *buf = malloc(128 * PAGE);

	if (!f || !h || !buf)
		BAIL_OUT("refault: setup failed");
	lv_file_read(h, a, buf, 64 * PAGE, 0);
	lv_file_read(h, a, buf, 64 * PAGE, 0);
	lv_file_read(f, a, buf, RA * PAGE, 0);
	lv_file_read(f, a, buf, 128 * PAGE, 100 * PAGE);
	lv_lru_add_drain_all(m);
	is(lv_memcg_stat(a, LV_NR_ACTIVE_FILE), 64, "refault: h is the workingset");
	rec = lv_memcg_reclaim(a, RA);
	ok(rec >= RA && rec <= 64, "refault: %lu pages reclaimed", rec);
	is(cached_range(f, 0, RA), 0, "refault: f's first %d pages were among them", RA);
	is(lv_memcg_stat(a, LV_NR_ACTIVE_FILE), 64, "refault: the workingset was not aged");
	is(rd1(f, a, 0), PAGE, "refault: page 0 read again");
	is(cached_range(f, 0, RA), RA, "refault: ... with the pages after it read ahead");
	is(lv_memcg_stat(a, LV_WORKINGSET_REFAULT), RA, "refault: every page of the run refaulted");
	is(lv_memcg_stat(a, LV_WORKINGSET_ACTIVATE), RA, "refault: ... and was activated");
	for (unsigned long i = 1; i < RA; i++)
		rd1(f, a, i);
	for (unsigned long i = 0; i < RA; i++)
		referenced += folio_test_referenced(filemap_peek(f, i));
	is(referenced, 0, "refault: the miss and the first reads after it mark none of them");
	for (unsigned long i = 0; i < RA; i++)
		rd1(f, a, i);
	referenced = 0;
	for (unsigned long i = 0; i < RA; i++)
		referenced += folio_test_referenced(filemap_peek(f, i));
	is(referenced, RA, "refault: later reads mark them as any read does");
	check_ok(m, "refault");
	lv_file_close(f);
	lv_file_close(h);
	lv_lru_add_drain_all(m);
	is(lv_memcg_remove(a), 0, "refault: memcg removed");
	free(buf);
	finish(m, "refault");
}

/* ---- failures and races ---------------------------------------------------------------------- */

/* A machine reading ahead RA pages, memcg "a", and a real file of @pages pages of pat(@seed). */
struct real_file {
	struct lv_machine *m;
	struct lv_memcg *memcg;
	struct lv_file *f;
	size_t len;
	int fd, seed;
	uint64_t free0; /* free frames once the file is open */
};

static void real_open(struct real_file *r, size_t pages, int seed, const char *what)
{
	struct lv_config cfg = ra_config(RA);

	r->m = new_machine(&cfg);
	r->memcg = new_memcg(r->m, NULL, "a");
	r->len = pages * PAGE;
	r->seed = seed;
	r->fd = temp_file(r->len, (unsigned int)seed);
	r->f = lv_file_open(r->m, r->fd, r->len);
	if (!r->f)
		BAIL_OUT("%s: lv_file_open failed", what);
	r->free0 = nstat(r->m, LV_NR_FREE);
}

/* real_close - the machine consistent, and once the file is closed every frame free again. */
static void real_close(struct real_file *r, const char *what)
{
	hold_fd = fail_fd = -1;
	hold_off = -1;
	check_ok(r->m, what);
	lv_file_close(r->f);
	lv_lru_add_drain_all(r->m);
	is(nstat(r->m, LV_NR_FREE), r->free0, "%s: every frame is free again", what);
	is(lv_memcg_remove(r->memcg), 0, "%s: memcg removed", what);
	close(r->fd);
	finish(r->m, what);
}

/* The fill of page 3 of a run fails: the read of page 0 succeeds, page 3 is read again later. */
static void test_fill_fails(void)
{
	struct real_file r;
	unsigned char *buf;

	real_open(&r, 16, 3, "fill fails");
	buf = malloc(r.len);
	if (!buf)
		BAIL_OUT("fill fails: malloc failed");
	fail_fd = r.fd;
	fail_off = 3 * PAGE;
	__atomic_store_n(&fail_armed, 1, __ATOMIC_RELEASE);
	is(lv_file_read(r.f, r.memcg, buf, PAGE, 0), PAGE,
	   "fill fails: the read of page 0 succeeds");
	ok(!__atomic_load_n(&fail_armed, __ATOMIC_ACQUIRE), "fill fails: page 3's fill failed");
	ok(!bad_bytes(buf, PAGE, 0, r.len, 3), "fill fails: page 0 reads right");
	is(lv_file_cached_pages(r.f), RA - 1, "fill fails: the failed page left the page cache");
	ok(!cached(r.f, 3) && cached(r.f, 2) && cached(r.f, 4), "fill fails: ... only that page");
	lv_lru_add_drain_all(r.m);
	is(lv_memcg_usage(r.memcg), RA - 1, "fill fails: ... and was freed and uncharged");
	memset(buf, 0, r.len);
	is(lv_file_read(r.f, r.memcg, buf, r.len, 0), (long)r.len,
	   "fill fails: the whole file reads");
	ok(!bad_bytes(buf, r.len, 0, r.len, 3),
	   "fill fails: ... every byte right, page 3 included");
	is(lv_file_cached_pages(r.f), 16, "fill fails: all 16 pages cached");
	free(buf);
	real_close(&r, "fill fails");
}

/*
 * A memcg whose limit is smaller than the window: a run's later pages may not be had without
 * reclaiming its own earlier ones, so the run stops short, and a sequential reader keeps its
 * usage at the limit with every byte right.
 */
static void test_limit(void)
{
	long over = 0, bad = 0, fails = 0;
	unsigned char buf[PAGE];
	struct real_file r;

	real_open(&r, 64, 5, "limit");
	is(lv_memcg_set_max(r.memcg, 4), 0, "limit: memcg limit 4 pages");
	is(rd1(r.f, r.memcg, 0), PAGE, "limit: read page 0");
	ok(lv_file_cached_pages(r.f) >= 1 && lv_memcg_usage(r.memcg) <= 4,
	   "limit: the run stopped within the limit (%lu cached, %lu charged)",
	   (unsigned long)lv_file_cached_pages(r.f), (unsigned long)lv_memcg_usage(r.memcg));
	for (unsigned long i = 0; i < 64; i++) {
		long n = lv_file_read(r.f, r.memcg, buf, PAGE, (uint64_t)i * PAGE);

		fails += n != PAGE;
		bad += n == PAGE && bad_bytes(buf, PAGE, i * PAGE, r.len, 5);
		over += lv_memcg_usage(r.memcg) > 4;
	}
	is(fails, 0, "limit: 64 sequential reads all succeed");
	is(bad, 0, "limit: ... every byte right");
	is(over, 0, "limit: ... and the usage never passes the limit");
	ok(lv_memcg_stat(r.memcg, LV_PGPGIN) >= 64, "limit: every page was read in");
	real_close(&r, "limit");
}

struct reader_arg {
	struct real_file *r;
	unsigned long page;
	unsigned char buf[PAGE];
	long ret;
};

static void *reader(void *p)
{
	struct reader_arg *a = p;

	a->ret = lv_file_read(a->r->f, a->r->memcg, a->buf, PAGE, (uint64_t)a->page * PAGE);
	return NULL;
}

/* start_held - start @a's read with the preads of @r's file at @off (-1: any) held. */
static void start_held(pthread_t *th, struct reader_arg *a, off_t off, const char *what)
{
	hold_fd = a->r->fd;
	hold_off = off;
	__atomic_store_n(&hold_go, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&hold_inside, 0, __ATOMIC_RELEASE);
	if (pthread_create(th, NULL, reader, a))
		BAIL_OUT("%s: pthread_create failed", what);
	while (!__atomic_load_n(&hold_inside, __ATOMIC_ACQUIRE))
		usleep(100);
}

/*
 * A reader asleep on a page another's run reads ahead, whose fill then fails: the error is not
 * the waiter's, which reads the page itself. Reader a's run (pages 0..RA-1) has page 1's fill
 * held in pread; reader b reads page 1 and sleeps on it (PG_waiters); then page 1's pread fails.
 */
static void test_waiter_retries(void)
{
	struct real_file r;
	struct reader_arg a = { .r = &r, .page = 0 }, b = { .r = &r, .page = 1 };
	struct lv_folio *page1;
	pthread_t ta, tb;

	real_open(&r, 16, 9, "waiter retries");
	fail_fd = r.fd;
	fail_off = PAGE;
	__atomic_store_n(&fail_armed, 1, __ATOMIC_RELEASE);
	start_held(&ta, &a, PAGE, "waiter retries");
	page1 = filemap_peek(r.f, 1);
	if (pthread_create(&tb, NULL, reader, &b))
		BAIL_OUT("waiter retries: pthread_create failed");
	while (!folio_test(page1, PG_waiters))
		usleep(100);
	__atomic_store_n(&hold_go, 1, __ATOMIC_RELEASE);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	ok(!__atomic_load_n(&fail_armed, __ATOMIC_ACQUIRE), "waiter retries: page 1's fill failed");
	is(a.ret, PAGE, "waiter retries: the run's reader gets page 0");
	is(b.ret, PAGE, "waiter retries: the waiter on page 1 reads it itself");
	ok(!bad_bytes(b.buf, PAGE, PAGE, r.len, 9), "waiter retries: ... its bytes right");
	real_close(&r, "waiter retries");
}

/*
 * A truncation while a run's fills are in flight: page 0's fill is held in pread, so every
 * page of the run is inserted and none is published when the file is cut to 3 pages. The
 * reader still gets page 0; the pages cut off leave the page cache and their charges.
 */
static void test_truncate_race(void)
{
	struct real_file r;
	struct reader_arg a = { .r = &r, .page = 0 };
	pthread_t th;

	real_open(&r, 16, 7, "truncate race");
	start_held(&th, &a, -1, "truncate race");
	is(lv_file_cached_pages(r.f), RA, "truncate race: the run is inserted, its fills held");
	is(lv_file_truncate(r.f, 3 * PAGE), 0, "truncate race: cut to 3 pages meanwhile");
	__atomic_store_n(&hold_go, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	is(a.ret, PAGE, "truncate race: the reader gets page 0");
	ok(!bad_bytes(a.buf, PAGE, 0, r.len, 7), "truncate race: ... its bytes right");
	ok(lv_file_cached_pages(r.f) <= 3, "truncate race: nothing past the new end stays cached");
	lv_lru_add_drain_all(r.m);
	ok(lv_memcg_usage(r.memcg) <= 3, "truncate race: ... or charged (%lu)",
	   (unsigned long)lv_memcg_usage(r.memcg));
	real_close(&r, "truncate race");
}

int main(void)
{
	test_window();
	test_off();
	test_first_read();
	test_refault();
	test_fill_fails();
	test_limit();
	test_truncate_race();
	test_waiter_retries();
	return done_testing();
}
