// SPDX-License-Identifier: LGPL-2.1-or-later
/* Large page cache folios (lv_config.file_folio_order): one miss caches an aligned block of
 * pages, reads anywhere in it see the file's bytes, counters count pages, truncation in the
 * middle of a folio, eviction and refault, the fallback to single pages (and the mixed blocks
 * it leaves), access marking once per pass, migration, and concurrent readers. */
#include "internal.h" /* struct lv_folio: stale hole words in the second frame */

#include "lvtest.h"

#include <limits.h>
#include <pthread.h>
#include <unistd.h>

#define PAGE  LV_PAGE_SIZE
#define ORDER 4
#define NR    (1u << ORDER)

static struct lv_config large_config(unsigned int nodes)
{
	struct lv_config cfg = small_config();

	cfg.nr_nodes = nodes;
	cfg.file_folio_order = ORDER;
	return cfg;
}

static void test_config(void)
{
	struct lv_config cfg = small_config();

	cfg.file_folio_order = LV_MAX_FILE_FOLIO_ORDER + 1;
	errno = 0;
	ok(!lv_machine_create(&cfg) && errno == EINVAL, "file_folio_order above %d: EINVAL",
	   LV_MAX_FILE_FOLIO_ORDER);
}

/* One 4 KiB read caches a whole aligned folio; every byte of it reads back exactly. */
static void test_bytes_and_counts(void)
{
	struct lv_config cfg = large_config(1);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *cg = lv_memcg_create(m, NULL, "cg");
	size_t size = 3 * NR * PAGE + 5000; /* the last folio runs past the end of the file */
	int fd = temp_file(size, 0);
	struct lv_file *f = lv_file_open(m, fd, size);
	unsigned char *buf = malloc(size + PAGE);
	size_t bad = 0;

	is(lv_file_read(f, cg, buf, PAGE, 5 * PAGE), (long)PAGE, "read one page inside folio 0");
	is(lv_file_cached_pages(f), NR, "one read cached %u pages", NR);
	is(nstat(m, LV_NR_FILE_PAGES), NR, "nr_file_pages counts pages");
	is(lv_memcg_usage(cg), NR, "the memcg is charged for %u pages", NR);
	is(bad_bytes(buf, PAGE, 5 * PAGE, size, 0), 0, "its bytes are the file's");

	/* Reads at every alignment, some crossing folio boundaries. */
	for (uint64_t off = 0; off < size; off += 3000) {
		long n = lv_file_read(f, cg, buf, 7000, off);

		if (n < 0) {
			bad++;
			break;
		}
		bad += bad_bytes(buf, (size_t)n, off, size, 0);
	}
	is(bad, 0, "reads at 3000-byte steps, 7000 bytes each, cross folios exactly");
	is(lv_file_read(f, cg, buf, size + PAGE, 0), (long)size, "one read of the whole file");
	is(bad_bytes(buf, size, 0, size, 0), 0, "whole-file read exact");
	is(lv_file_cached_pages(f), 3 * NR + 2, "no folio reaches past the end of the file");
	is(lv_memcg_usage(cg), 3 * NR + 2, "charged per page");
	check_ok(m, "large folios cached");

	/* Truncate in the middle of the second folio: the straddling folio leaves the cache. */
	ok(lv_file_truncate(f, NR * PAGE + 3 * PAGE + 10) == 0, "truncate into folio 1");
	is(lv_file_read(f, cg, buf, PAGE, NR * PAGE + 4 * PAGE), 0, "nothing beyond the size");
	is(lv_file_read(f, cg, buf, 100, NR * PAGE + 3 * PAGE), 10, "a short read at the end");
	is(bad_bytes(buf, 10, NR * PAGE + 3 * PAGE, size, 0), 0, "the last bytes are the file's");
	ok(lv_file_cached_pages(f) <= 2 * NR, "folios beyond the size are gone (%lu pages)",
	   lv_file_cached_pages(f));
	is(lv_file_read(f, cg, buf, PAGE, NR * PAGE), (long)PAGE,
	   "read the folio cut by truncation");
	ok(lv_file_cached_pages(f) <= NR + 4, "the refill stops at the new end (%lu pages)",
	   lv_file_cached_pages(f));
	check_ok(m, "after truncating mid-folio");
	lv_file_close(f);
	is(lv_memcg_usage(cg), 0, "close uncharges every page");
	close(fd);
	free(buf);
	ok(lv_memcg_remove(cg) == 0, "memcg removable");
	finish(m, "bytes and counts");
}

/* Small files get small folios; a large folio's charge reclaims once at most at a limit. */
static void test_small_files_and_limits(void)
{
	struct lv_config cfg = large_config(1);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *cg = lv_memcg_create(m, NULL, "cg");
	struct lv_file *files[20];
	char buf[PAGE];

	for (int i = 0; i < 20; i++) {
		files[i] = lv_file_open(m, -1, PAGE + 100);
		lv_file_read(files[i], cg, buf, 1, 0);
	}
	is(lv_memcg_usage(cg), 40, "20 files of 2 pages are charged 2 pages each");
	for (int i = 0; i < 20; i++)
		lv_file_close(files[i]);
	is(lv_memcg_usage(cg), 0, "closing them uncharges everything");

	/* At the limit, a large charge falls back to one page after one reclaim pass at most. */
	lv_memcg_set_max(cg, NR / 2);
	files[0] = lv_file_open(m, -1, 64 * NR * PAGE);
	for (uint64_t p = 0; p < NR / 2; p++)
		lv_file_read(files[0], cg, buf, PAGE, p * NR * PAGE);
	is(lv_memcg_usage(cg), NR / 2, "%u misses under a %u-page limit cached a page each", NR / 2,
	   NR / 2);
	ok(lv_memcg_stat(cg, LV_ALLOCSTALL) <= NR / 2,
	   "one limit reclaim pass per miss at most (%llu stalls)",
	   (unsigned long long)lv_memcg_stat(cg, LV_ALLOCSTALL));
	lv_file_close(files[0]);
	ok(lv_memcg_remove(cg) == 0, "memcg removable");
	finish(m, "small files and limits");
}

/* A sequential pass touches each folio once: only a second pass activates. */
static void test_accessed_once_per_pass(void)
{
	struct lv_config cfg = large_config(1);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_file *f = lv_file_open(m, -1, 8 * NR * PAGE);
	char buf[PAGE];

	for (int pass = 0; pass < 2; pass++) {
		for (uint64_t off = 0; off < 8 * NR * PAGE; off += PAGE)
			lv_file_read(f, NULL, buf, PAGE, off);
		lv_lru_add_drain_all(m);
		if (pass == 0)
			is(nstat(m, LV_NR_ACTIVE_FILE), 0, "one sequential pass activates nothing");
		else
			is(nstat(m, LV_NR_ACTIVE_FILE), 8 * NR, "the second pass activates all %u",
			   8 * NR);
	}
	lv_file_close(f);
	finish(m, "accessed once per pass");
}

/* Eviction of a large folio leaves shadows in all its slots; a refault there activates. */
static void test_evict_refault(void)
{
	struct lv_config cfg = large_config(1);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *cg = lv_memcg_create(m, NULL, "cg");
	struct lv_file *f = lv_file_open(m, -1, 64 * NR * PAGE);
	char buf[PAGE];
	unsigned long reclaimed;

	for (uint64_t off = 0; off < 4 * NR * PAGE; off += PAGE)
		lv_file_read(f, cg, buf, PAGE, off);
	lv_lru_add_drain_all(m);
	reclaimed = lv_memcg_reclaim(cg, 4 * NR);
	ok(reclaimed >= NR && reclaimed % NR == 0, "reclaim frees whole folios (%lu pages)",
	   reclaimed);
	is(lv_memcg_usage(cg), 4 * NR - reclaimed, "usage drops by the pages freed");
	is(lv_file_cached_pages(f), 4 * NR - reclaimed, "the cache shrinks by them");
	is(lv_memcg_stat(cg, LV_PGSTEAL), reclaimed, "pgsteal counts the pages freed");
	ok(lv_memcg_stat(cg, LV_PGSCAN) >= reclaimed && lv_memcg_stat(cg, LV_PGSCAN) % NR == 0,
	   "pgscan counts pages too, whole folios of them (%llu)",
	   (unsigned long long)lv_memcg_stat(cg, LV_PGSCAN));
	/* Reading the middle of an evicted folio finds a shadow: a quick refault activates it. */
	lv_file_read(f, cg, buf, PAGE, 7 * PAGE);
	ok(lv_memcg_stat(cg, LV_WORKINGSET_REFAULT) >= NR, "the refault is counted per page");
	check_ok(m, "evict and refault");
	lv_file_close(f);
	ok(lv_memcg_remove(cg) == 0, "memcg removable");
	finish(m, "evict and refault");
}

/*
 * A memcg too small for a large folio still reads: misses fall back to single pages, and a
 * block partly cached in single pages keeps taking single pages when the limit rises.
 */
static void test_fallback_and_mixed(void)
{
	struct lv_config cfg = large_config(1);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *cg = lv_memcg_create(m, NULL, "small");
	size_t size = 4 * NR * PAGE;
	int fd = temp_file(size, 0);
	struct lv_file *f = lv_file_open(m, fd, size);
	unsigned char buf[PAGE];
	uint64_t stalls;
	size_t bad = 0;

	lv_memcg_set_max(cg, NR / 2);
	is(lv_file_read(f, cg, buf, PAGE, 2 * PAGE), (long)PAGE, "a read under a tiny limit works");
	is(lv_file_cached_pages(f), 1, "it cached a single page");
	is(bad_bytes(buf, PAGE, 2 * PAGE, size, 0), 0, "with the right bytes");
	/* Room for one more page: a neighbour in the block is read as a page, without reclaim. */
	lv_memcg_set_max(cg, 2);
	stalls = lv_memcg_stat(cg, LV_ALLOCSTALL);
	is(lv_file_read(f, cg, buf, PAGE, 3 * PAGE), (long)PAGE, "a neighbour in the block reads");
	is(lv_memcg_stat(cg, LV_ALLOCSTALL), stalls, "... without reclaim (no large folio tried)");
	is(lv_file_cached_pages(f), 2, "... and both pages stay cached");
	lv_memcg_set_max(cg, SIZE_MAX);
	for (uint64_t p = 0; p < NR; p++) {
		lv_file_read(f, cg, buf, PAGE, p * PAGE);
		bad += bad_bytes(buf, PAGE, p * PAGE, size, 0);
	}
	is(bad, 0, "the rest of the mixed block reads exactly");
	is(lv_file_cached_pages(f), NR, "the block is cached in single pages, each once");
	is(lv_memcg_usage(cg), NR, "and charged once");
	lv_file_read(f, cg, buf, PAGE, NR * PAGE);
	is(lv_file_cached_pages(f), 2 * NR, "the next block is one large folio again");
	check_ok(m, "mixed block");
	lv_file_close(f);
	close(fd);
	ok(lv_memcg_remove(cg) == 0, "memcg removable");
	finish(m, "fallback and mixed");
}

static void test_migrate(void)
{
	struct lv_config cfg = large_config(2);
	struct lv_machine *m = new_machine(&cfg);
	size_t size = 6 * NR * PAGE;
	int fd = temp_file(size, 0);
	struct lv_file *f = lv_file_open(m, fd, size);
	unsigned char *buf = malloc(size);
	uint64_t before =
		lv_node_stat(m, 0, LV_NR_FILE_PAGES) + lv_node_stat(m, 1, LV_NR_FILE_PAGES);

	is(before, 0, "nothing cached yet");
	lv_file_read(f, NULL, buf, size, 0);
	is(lv_file_migrate_pages(f, 3, 1), 0, "every large folio migrates to node 1");
	is(lv_node_stat(m, 1, LV_NR_FILE_PAGES), 6 * NR, "node 1 holds all %u pages", 6 * NR);
	is(lv_node_stat(m, 0, LV_NR_FILE_PAGES), 0, "node 0 holds none");
	is(lv_node_stat(m, 1, LV_PGMIGRATE_SUCCESS), 6 * NR, "pgmigrate_success counts pages");
	memset(buf, 0, size);
	is(lv_file_read(f, NULL, buf, size, 0), (long)size, "read back after migration");
	is(bad_bytes(buf, size, 0, size, 0), 0, "every byte survived the copy");
	check_ok(m, "after migrating large folios");
	lv_file_close(f);
	close(fd);
	free(buf);
	finish(m, "migrate large folios");
}

/*
 * dirty_frames - fill and free most of every node's frames with a non-zero byte, so that the
 * folios of a later hole read hold stale bytes until the page cache zeroes them, and leave
 * every second frame claiming all its pages zeroed, as a hole folio freed before may have.
 */
static void dirty_frames(struct lv_machine *m, int nodes, unsigned int order)
{
	unsigned int nr = (unsigned int)(SMALL_PAGES >> order) * 3 / 4;
	struct lv_folio **folios = malloc(nr * sizeof(*folios));

	for (int nid = 0; nid < nodes; nid++) {
		for (unsigned int i = 0; i < nr; i++) {
			folios[i] = alloc_or_bail(m, nid, order, NULL, 0);
			memset(lv_folio_data(folios[i]), 0xa5, PAGE << order);
			folios[i][1].hole.zeroed = folios[i][1].hole.zeroing = ~0ul;
		}
		lv_folios_put(folios, nr);
	}
	free(folios);
}

/*
 * Holes of a sparse file in large folios are zeroed a page at a time when first read: on
 * frames full of stale bytes, every read at every alignment sees zeros, including pages a
 * migration copied before anyone had read them.
 */
static void test_holes(void)
{
	struct lv_config cfg = large_config(2);
	struct lv_machine *m = new_machine(&cfg);
	size_t size = SMALL_NODE / 2;
	struct lv_file *f;
	unsigned char *buf = malloc(size);
	size_t bad = 0;
	long n;

	dirty_frames(m, 2, ORDER);
	f = lv_file_open(m, -1, size);
	memset(buf, 0x5a, size);
	is(lv_file_read(f, NULL, buf, PAGE, 3 * PAGE), (long)PAGE, "one page of a hole folio");
	is(bad_bytes(buf, PAGE, 3 * PAGE, 0, 0), 0, "... reads as zeros on a stale frame");
	is(lv_file_cached_pages(f), NR, "... and cached the whole folio");
	is(lv_file_migrate_pages(f, 1, 1), 0, "the partly read hole folio migrates to node 1");
	is(lv_node_stat(m, 1, LV_NR_FILE_PAGES), NR, "... all %u pages of it", NR);
	memset(buf, 0x5a, size);
	is(lv_file_read(f, NULL, buf, NR * PAGE, 0), (long)(NR * PAGE), "read it all back");
	is(bad_bytes(buf, NR * PAGE, 0, 0, 0), 0, "pages nobody read before the copy are zeros");

	for (uint64_t off = NR * PAGE; off < size; off += 7001) {
		memset(buf, 0x5a, 9000);
		n = lv_file_read(f, NULL, buf, 9000, off);
		if (n <= 0) {
			bad++;
			break;
		}
		bad += bad_bytes(buf, (size_t)n, off, 0, 0);
	}
	is(bad, 0, "reads at every alignment across hole folios: all zeros");
	memset(buf, 0x5a, size);
	is(lv_file_read(f, NULL, buf, size, 0), (long)size, "one read of the whole file");
	is(bad_bytes(buf, size, 0, 0, 0), 0, "... all zeros");
	check_ok(m, "holes");
	lv_file_close(f);
	free(buf);
	finish(m, "holes");

	/* The largest order: a folio's pages fill the whole word of bits. */
	cfg.file_folio_order = LV_MAX_FILE_FOLIO_ORDER;
	cfg.nr_nodes = 1;
	m = new_machine(&cfg);
	dirty_frames(m, 1, LV_MAX_FILE_FOLIO_ORDER);
	f = lv_file_open(m, -1, size);
	buf = malloc(PAGE << LV_MAX_FILE_FOLIO_ORDER);
	n = (long)(PAGE << LV_MAX_FILE_FOLIO_ORDER);
	memset(buf, 0x5a, (size_t)n);
	is(lv_file_read(f, NULL, buf, PAGE, (uint64_t)n - PAGE), (long)PAGE,
	   "order %d: the last page of a hole folio", LV_MAX_FILE_FOLIO_ORDER);
	is(bad_bytes(buf, PAGE, (uint64_t)n - PAGE, 0, 0), 0, "... reads as zeros");
	is(lv_file_read(f, NULL, buf, (size_t)n, 0), n, "order %d: the whole folio",
	   LV_MAX_FILE_FOLIO_ORDER);
	is(bad_bytes(buf, (size_t)n, 0, 0, 0), 0, "... reads as zeros");
	is(lv_file_cached_pages(f), 1ul << LV_MAX_FILE_FOLIO_ORDER, "... cached as one folio");
	check_ok(m, "holes, largest order");
	lv_file_close(f);
	free(buf);
	finish(m, "holes, largest order");
}

struct reader {
	struct lv_file *file;
	uint64_t size, real, seed; /* real: bytes of file data, zeros after (0: all a hole) */
	size_t bad;
	long errors;
};

static void *reader(void *p)
{
	struct reader *r = p;
	unsigned char buf[2 * PAGE];

	for (int i = 0; i < 20000; i++) {
		uint64_t off;
		long n;

		r->seed = r->seed * 6364136223846793005ull + 1442695040888963407ull;
		off = (r->seed >> 20) % r->size;
		n = lv_file_read(r->file, NULL, buf, sizeof(buf), off);
		if (n < 0)
			r->errors++;
		else
			r->bad += bad_bytes(buf, (size_t)n, off, r->real, 0);
	}
	return NULL;
}

/*
 * Readers racing on a file larger than memory: direct reclaim evicts large folios under them.
 * Over a sparse file on stale frames, they also race to zero the same hole pages (a reader
 * that copies a page another is still zeroing is a data race ThreadSanitizer reports).
 */
static void test_concurrent(bool sparse)
{
	const char *what = sparse ? "concurrent hole readers" : "concurrent readers";
	struct lv_config cfg = large_config(1);
	struct lv_machine *m = new_machine(&cfg);
	size_t size = 2 * SMALL_NODE;
	int fd = sparse ? -1 : temp_file(size, 0);
	struct lv_file *f;
	struct reader r[4];
	pthread_t t[4];
	size_t bad = 0;
	long errors = 0;

	if (sparse)
		dirty_frames(m, 1, ORDER);
	f = lv_file_open(m, fd, size);
	for (int i = 0; i < 4; i++) {
		/* Hole readers go in pairs over the same offsets: they collide on claims. */
		r[i] = (struct reader){ .file = f,
					.size = size,
					.real = sparse ? 0 : size,
					.seed = sparse ? (uint64_t)i / 2 + 1 : (uint64_t)i + 1 };
		pthread_create(&t[i], NULL, reader, &r[i]);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		bad += r[i].bad;
		errors += r[i].errors;
	}
	is(errors, 0, "%s: no read failed while reclaim evicted large folios", what);
	is(bad, 0, "%s: every byte read was the file's", what);
	ok(nstat(m, LV_PGSTEAL) > 0, "%s: reclaim ran (%lu pages)", what,
	   (unsigned long)nstat(m, LV_PGSTEAL));
	check_ok(m, what);
	lv_file_close(f);
	if (fd >= 0)
		close(fd);
	finish(m, what);
}

int main(void)
{
	test_config();
	test_bytes_and_counts();
	test_small_files_and_limits();
	test_accessed_once_per_pass();
	test_evict_refault();
	test_fallback_and_mixed();
	test_migrate();
	test_holes();
	test_concurrent(false);
	test_concurrent(true);
	return done_testing();
}
