// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Swap, end to end through the public API: every byte written to an address space reads back
 * the same after it was swapped out and in, under memcg limits and swap limits; MADV_PAGEOUT;
 * swapoff bringing everything back, or refusing with -ENOMEM and losing nothing; several
 * devices by priority, a real file among them; injected I/O errors at every I/O site (the
 * swap-out write, the faulting page's read, a readahead read, swapoff's reads); a page swapped
 * out while charged to a memcg that is then removed; anon refaults and readahead counters;
 * swappiness 0; and swap racing reclaim, compaction, migration, huge page splits, memcg
 * removal, swapoff and itself. Where the library and lruvec.h disagree the assertion is a
 * TODO that names the disagreement.
 *
 * The checker (struct digest) knows what every page of an address space must hold: its
 * content is regenerated from (seed, page, half, generation), so a page that comes back from
 * swap with another page's data, a stale generation or zeros is told apart from the right one.
 *
 * Internal headers are used for what no public call can do: the debug hook swap_io_hook
 * (swap.h) fails chosen reads and writes, and the page table is read (mm_types.h) to learn
 * which swap entry an address holds, so that a failure can be aimed at one page, and to find
 * the folio behind an address (for a charge move or a split). Debug builds only, as every
 * unit test is.
 */
#include "internal.h"
#include "mm_types.h"
#include "swap.h"

#include "lvtest.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef LV_DEBUG
#error "test_swap needs a debug build (swap_io_hook)"
#endif

#define PAGE  LV_PAGE_SIZE
#define HALF  (PAGE / 2)
#define WORDS (HALF / 8)
#define HNR   512ul	   /* pages of a huge page */
#define HSIZE (HNR * PAGE) /* 2 MiB: also one swap cluster */

/* ---- the digest checker ------------------------------------------------------------------- */

/*
 * struct digest - what every page of [@base, @base + @nr pages) of @mm must hold. Each half
 * page has a generation: 0 (never written: zeros) or the value of @clock when it was last
 * written. Owned by one thread at a time.
 */
struct digest {
	struct lv_mm *mm;
	uint64_t base;
	size_t nr;
	uint32_t seed;
	uint32_t clock;
	uint32_t *gen; /* gen[2 * page + half] */
	unsigned int reported;
};

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

/* half_tag - the first word of a half page: who it belongs to, readable in a diagnostic. */
static uint64_t half_tag(const struct digest *d, size_t page, unsigned int half, uint32_t gen)
{
	return (uint64_t)(d->seed & 0xffff) << 48 | (uint64_t)page << 33 | (uint64_t)half << 32 |
	       gen;
}

static void half_fill(const struct digest *d, size_t page, unsigned int half, uint32_t gen,
		      uint64_t *w)
{
	uint64_t s = mix64(((uint64_t)d->seed << 32 | gen) ^ mix64(page * 2 + half));

	if (!gen) {
		memset(w, 0, HALF);
		return;
	}
	w[0] = half_tag(d, page, half, gen);
	for (size_t i = 1; i < WORDS; i++)
		w[i] = mix64(s + i);
}

static void dg_init(struct digest *d, struct lv_mm *mm, uint64_t base, size_t nr, uint32_t seed)
{
	*d = (struct digest){ .mm = mm, .base = base, .nr = nr, .seed = seed };
	d->gen = calloc(2 * nr, sizeof(*d->gen));
	if (!d->gen)
		BAIL_OUT("out of memory");
}

static void dg_free(struct digest *d)
{
	free(d->gen);
	d->gen = NULL;
}

static uint64_t dg_addr(const struct digest *d, size_t page)
{
	return d->base + page * PAGE;
}

/*
 * dg_write_part - write a new generation over half @half of @page (both halves for 2). A
 * write of one page either faults it in and writes, or fails before writing any byte, so
 * the generations change only on success. Return: lv_mm_write()'s result.
 */
static int dg_write_part(struct digest *d, size_t page, unsigned int half)
{
	uint64_t w[2 * WORDS];
	uint32_t gen = ++d->clock;
	unsigned int h0 = half == 2 ? 0 : half, h1 = half == 2 ? 1 : half;
	int rc;

	for (unsigned int h = h0; h <= h1; h++)
		half_fill(d, page, h, gen, w + (h - h0) * WORDS);
	rc = lv_mm_write(d->mm, dg_addr(d, page) + h0 * HALF, w, (h1 - h0 + 1) * HALF);
	if (!rc)
		for (unsigned int h = h0; h <= h1; h++)
			d->gen[2 * page + h] = gen;
	return rc;
}

static int dg_write(struct digest *d, size_t page)
{
	return dg_write_part(d, page, 2);
}

/* dg_write_all - write every page once, as one assertion. Return: whether all succeeded. */
static bool dg_write_all(struct digest *d, const char *what)
{
	size_t failed = 0;
	int first = 0;

	for (size_t p = 0; p < d->nr; p++) {
		int rc = dg_write(d, p);

		if (rc && !failed++)
			first = rc;
	}
	ok(!failed, "%s: %zu pages written", what, d->nr);
	if (failed)
		diag("%s: %zu writes failed, the first with %d", what, failed, first);
	return !failed;
}

/*
 * dg_read - read @page and compare it with what it must hold. Return: 0 (equal), 1 (it
 * differs: described, for the first few), or the read's error.
 */
static int dg_read(struct digest *d, size_t page)
{
	uint64_t got[2 * WORDS], want[WORDS];
	int rc = lv_mm_read(d->mm, dg_addr(d, page), got, PAGE);

	if (rc)
		return rc;
	for (unsigned int h = 0; h < 2; h++) {
		half_fill(d, page, h, d->gen[2 * page + h], want);
		if (memcmp(got + h * WORDS, want, HALF)) {
			if (d->reported++ < 4)
				diag("page %zu half %u: want tag %#llx, got first word %#llx", page,
				     h, (unsigned long long)want[0],
				     (unsigned long long)got[h * WORDS]);
			return 1;
		}
	}
	return 0;
}

/* dg_bad - pages of [@from, @from + @n) that read wrong or fail to read (described). */
static size_t dg_bad_range(struct digest *d, size_t from, size_t n)
{
	size_t bad = 0;

	for (size_t p = from; p < from + n && p < d->nr; p++) {
		int rc = dg_read(d, p);

		if (rc < 0 && d->reported++ < 4)
			diag("page %zu: lv_mm_read = %d", p, rc);
		bad += rc != 0;
	}
	return bad;
}

static size_t dg_bad(struct digest *d)
{
	return dg_bad_range(d, 0, d->nr);
}

/* ---- page tables, devices, statistics ------------------------------------------------------ */

enum pte_kind { PTE_NONE, PTE_FOLIO, PTE_SWAP };

/*
 * pte_peek - what the page table of @mm holds at @addr: nothing, a folio (*@folio gets it with
 * a reference, if @folio is not NULL) or a swap entry (*@entry).
 */
static enum pte_kind pte_peek(struct lv_mm *mm, uint64_t addr, struct lv_folio **folio,
			      swp_entry_t *entry)
{
	uint64_t vpn = addr / PAGE;
	enum pte_kind kind = PTE_NONE;
	struct vm_area *vma;

	lv_lock_acquire(&mm->page_table_lock);
	vma = find_vma(mm, vpn);
	if (vma) {
		struct lv_folio *pte = *vma_pte(vma, vpn);

		if (pte_is_swap(pte)) {
			kind = PTE_SWAP;
			if (entry)
				*entry = pte_to_swp_entry(pte);
		} else if (pte) {
			kind = PTE_FOLIO;
			if (folio) {
				folio_get(pte);
				*folio = pte;
			}
		}
	}
	lv_lock_release(&mm->page_table_lock);
	return kind;
}

/* entry_at - the swap entry at @addr, or val 0 if the page is not swapped out. */
static swp_entry_t entry_at(struct lv_mm *mm, uint64_t addr)
{
	swp_entry_t e = { 0 };

	if (pte_peek(mm, addr, NULL, &e) != PTE_SWAP)
		e.val = 0;
	return e;
}

/* kinds - how many pages of @d hold @kind. */
static size_t kinds(struct digest *d, size_t from, size_t n, enum pte_kind kind)
{
	size_t c = 0;

	for (size_t p = from; p < from + n; p++)
		c += pte_peek(d->mm, dg_addr(d, p), NULL, NULL) == kind;
	return c;
}

/* memcg_at - the memcg the folio at @addr is charged to (NULL if none is mapped there). */
static struct lv_memcg *memcg_at(struct lv_mm *mm, uint64_t addr)
{
	struct lv_folio *f = NULL;
	struct lv_memcg *memcg = NULL;

	if (pte_peek(mm, addr, &f, NULL) == PTE_FOLIO) {
		memcg = lv_folio_memcg(f);
		lv_folio_put(f);
	}
	return memcg;
}

static int swapon_or_bail(struct lv_machine *m, int fd, size_t bytes, int prio)
{
	int id = lv_swap_on(m, fd, bytes, prio);

	if (id < 0)
		BAIL_OUT("lv_swap_on(fd %d, %zu bytes, prio %d) = %d", fd, bytes, prio, id);
	return id;
}

/* dev - lv_swap_info() of @id; slots SIZE_MAX if it fails. */
static struct lv_swap_info dev(struct lv_machine *m, int id)
{
	struct lv_swap_info info;

	memset(&info, 0, sizeof(info));
	if (lv_swap_info(m, id, &info))
		info.slots = info.used = SIZE_MAX;
	return info;
}

/* tot - a statistic summed over every node. */
static uint64_t tot(struct lv_machine *m, enum lv_stat_item item)
{
	uint64_t sum = 0;

	for (unsigned int nid = 0; nid < lv_machine_config(m)->nr_nodes; nid++)
		sum += lv_node_stat(m, (int)nid, item);
	return sum;
}

static int pageout(struct digest *d, size_t from, size_t n)
{
	return lv_madvise(d->mm, dg_addr(d, from), n * PAGE, LV_MADV_PAGEOUT);
}

/*
 * The I/O hook: counts every device read and write and fails those chosen: every write, every
 * read, or the reads of one entry. Configured only while no I/O runs.
 */
static struct {
	int fail_writes, fail_reads;
	unsigned long fail_entry; /* reads of this entry fail (0: none) */
	unsigned long reads, writes, failed;
} io;

static int io_hook(swp_entry_t e, bool write)
{
	int fail;

	if (write) {
		__atomic_fetch_add(&io.writes, 1, __ATOMIC_RELAXED);
		fail = __atomic_load_n(&io.fail_writes, __ATOMIC_RELAXED);
	} else {
		__atomic_fetch_add(&io.reads, 1, __ATOMIC_RELAXED);
		fail = __atomic_load_n(&io.fail_reads, __ATOMIC_RELAXED) ||
		       e.val == __atomic_load_n(&io.fail_entry, __ATOMIC_RELAXED);
	}
	if (fail)
		__atomic_fetch_add(&io.failed, 1, __ATOMIC_RELAXED);
	return fail;
}

static void io_clear(void)
{
	__atomic_store_n(&io.fail_writes, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&io.fail_reads, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&io.fail_entry, 0, __ATOMIC_RELAXED);
}

static unsigned long io_count(unsigned long *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

/* swap_config - small_config() with @node_mib MiB per node. */
static struct lv_config swap_config(size_t node_mib)
{
	struct lv_config cfg = small_config();

	cfg.node_mem_bytes = node_mib * MiB;
	return cfg;
}

/* ---- the API's edges ----------------------------------------------------------------------- */

static void test_api(void)
{
	struct lv_config cfg = swap_config(16);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *root = lv_memcg_root(m);
	struct lv_memcg *cg = new_memcg(m, NULL, "cg");
	int ids[LV_MAX_SWAPFILES], id;
	struct lv_swap_info info;
	bool all = true;

	cfg.page_cluster = 6;
	is_str(lv_config_invalid(&cfg), "page_cluster", "page_cluster 6 is refused");
	cfg.page_cluster = 3;
	cfg.swappiness = 201;
	is_str(lv_config_invalid(&cfg), "swappiness", "swappiness 201 is refused");
	is_str(lv_stat_name(LV_PSWPIN), "pswpin", "pswpin is named");
	is_str(lv_stat_name(LV_SWAP_READ_ERROR), "swap_read_error", "swap_read_error is named");
	is_str(lv_lock_class_name(LV_LOCK_CLASS_SWAP), "swap", "the swap lock class is named");

	is(lv_swap_on(NULL, -1, HSIZE, 0), -EINVAL, "swapon: NULL machine");
	is(lv_swap_on(m, -2, HSIZE, 0), -EINVAL, "swapon: fd -2");
	is(lv_swap_on(m, -1, HSIZE - PAGE, 0), -EINVAL, "swapon: less than one cluster");
	is(lv_swap_info(m, 0, &info), -EINVAL, "info: no device yet");
	is(lv_swap_off(m, 0), -EINVAL, "swapoff: no device yet");
	is(lv_swap_off(m, -1), -EINVAL, "swapoff: id -1");
	is(lv_swap_off(m, LV_MAX_SWAPFILES), -EINVAL, "swapoff: id past the last");

	id = swapon_or_bail(m, -1, HSIZE + HSIZE / 2, 7);
	ok(id >= 0 && id < LV_MAX_SWAPFILES, "swapon: an id in range (%d)", id);
	is(lv_swap_info(m, id, NULL), -EINVAL, "info: NULL info");
	info = dev(m, id);
	ok(info.slots >= HNR - 1 && info.slots <= HNR,
	   "3 MiB round down to one cluster: %zu usable slots", info.slots);
	is(info.used, 0, "nothing used");
	is(info.prio, 7, "its priority");
	ok(info.in_memory, "in memory");
	is(info.read_errors + info.write_errors, 0, "no errors");
	is(lv_memcg_swap_usage(root), 0, "root swap usage 0");
	is(tot(m, LV_NR_SWAP), 0, "nr_swap 0");
	is(lv_swap_off(m, id), 0, "swapoff of an unused device");
	is(lv_swap_info(m, id, &info), -EINVAL, "info: the device is gone");
	is(lv_swap_off(m, id), -EINVAL, "swapoff twice");

	for (int i = 0; i < LV_MAX_SWAPFILES; i++) {
		ids[i] = lv_swap_on(m, -1, HSIZE, i);
		all &= ids[i] >= 0;
	}
	ok(all, "%d devices can be on at once", LV_MAX_SWAPFILES);
	is(lv_swap_on(m, -1, HSIZE, 0), -EBUSY, "one more: -EBUSY");
	all = true;
	for (int i = 0; i < LV_MAX_SWAPFILES; i++)
		all &= ids[i] < 0 || lv_swap_off(m, ids[i]) == 0;
	ok(all, "each is turned off");

	is(lv_memcg_set_swap_max(root, 5), -EINVAL, "swap.max of the root: -EINVAL");
	is(lv_memcg_set_swap_max(NULL, 5), -EINVAL, "swap.max of NULL: -EINVAL");
	is(lv_memcg_set_swap_max(cg, 5), 0, "swap.max of a memcg");
	is(lv_memcg_set_swappiness(cg, 201), -EINVAL, "swappiness 201: -EINVAL");
	is(lv_memcg_set_swappiness(cg, 200), 0, "swappiness 200");
	is(lv_memcg_remove(cg), 0, "memcg removed");
	finish(m, "api");

	lv_config_init(&cfg);
	cfg.node_mem_bytes = 4 * MiB;
	cfg.metadata_only = true;
	cfg.no_kswapd = cfg.no_kcompactd = true;
	m = new_machine(&cfg);
	is(lv_swap_on(m, -1, HSIZE, 0), -EINVAL, "swapon on a metadata-only machine: -EINVAL");
	finish(m, "api metadata-only");
}

/* ---- 1: a tenant three times its limit ----------------------------------------------------- */

static void test_roundtrip(void)
{
	struct lv_config cfg = swap_config(16);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *cg = new_memcg(m, NULL, "tenant");
	struct lv_mm *mm = new_mm(m, cg, 0);
	const size_t L = 512, N = 3 * L;
	int id = swapon_or_bail(m, -1, 16 * MiB, 0);
	uint64_t out0 = tot(m, LV_PSWPOUT), pin0 = tot(m, LV_PSWPIN), in0;
	unsigned long reads0 = io_count(&io.reads);
	size_t maxuse = 0, failed = 0, bad;
	struct lv_swap_info info;
	struct digest d;

	lv_memcg_set_max(cg, L);
	dg_init(&d, mm, map_or_bail(mm, N * PAGE), N, 1);
	for (size_t p = 0; p < N; p++) {
		size_t use;

		failed += dg_write(&d, p) != 0;
		use = lv_memcg_usage(cg);
		maxuse = use > maxuse ? use : maxuse;
	}
	is(failed, 0, "roundtrip: %zu pages written under a limit of %zu", N, L);
	ok(maxuse <= L, "roundtrip: usage never above the limit (at most %zu)", maxuse);
	ok(lv_mm_rss(mm) <= L, "roundtrip: rss %zu within the limit", lv_mm_rss(mm));
	ok(tot(m, LV_PSWPOUT) - out0 >= N - L, "roundtrip: at least %zu pages swapped out (%llu)",
	   N - L, (unsigned long long)(tot(m, LV_PSWPOUT) - out0));
	ok(lv_mm_rss(mm) + lv_memcg_swap_usage(cg) >= N,
	   "roundtrip: every page is mapped or swapped (rss %zu, swap %zu)", lv_mm_rss(mm),
	   lv_memcg_swap_usage(cg));
	is(lv_memcg_stat(cg, LV_NR_SWAP), lv_memcg_swap_usage(cg), "roundtrip: nr_swap = usage");
	ok(lv_memcg_stat(cg, LV_PGSTEAL_ANON) >= N - L &&
		   lv_memcg_stat(cg, LV_PGSCAN_ANON) >= lv_memcg_stat(cg, LV_PGSTEAL_ANON),
	   "roundtrip: limit reclaim counts pgscan_anon >= pgsteal_anon >= %zu (%llu)", N - L,
	   (unsigned long long)lv_memcg_stat(cg, LV_PGSTEAL_ANON));
	is(lv_memcg_swap_usage(lv_memcg_root(m)), dev(m, id).used,
	   "roundtrip: the root's swap usage is the device's");
	is(kinds(&d, 0, N, PTE_SWAP) + kinds(&d, 0, N, PTE_FOLIO), N,
	   "roundtrip: every page table entry is a folio or a swap entry");
	check_ok(m, "roundtrip: written");

	in0 = tot(m, LV_PSWPIN);
	is(dg_bad(&d), 0, "roundtrip: every page reads back as written");
	ok(tot(m, LV_PSWPIN) - in0 >= N - L, "roundtrip: at least %zu pages swapped in (%llu)",
	   N - L, (unsigned long long)(tot(m, LV_PSWPIN) - in0));
	is(tot(m, LV_PSWPIN) - pin0, io_count(&io.reads) - reads0,
	   "roundtrip: every device read went through the I/O site and counted in pswpin");
	ok(lv_memcg_usage(cg) <= L, "roundtrip: usage %zu within the limit after reading",
	   lv_memcg_usage(cg));

	/* A new generation everywhere: a page swapped in and rewritten must not come back old. */
	failed = 0;
	for (size_t p = 0; p < N; p++)
		failed += dg_write(&d, (p * 7) % N) != 0;
	is(failed, 0, "roundtrip: a second generation written");
	bad = dg_bad(&d);
	is(bad, 0, "roundtrip: the second generation reads back (no stale slot)");
	check_ok(m, "roundtrip: rewritten");

	is(lv_munmap(mm, d.base, N * PAGE), 0, "roundtrip: unmapped");
	lv_lru_add_drain_all(m);
	is(lv_memcg_swap_usage(cg), 0, "roundtrip: swap usage 0 after munmap");
	is(dev(m, id).used, 0, "roundtrip: no slot in use after munmap");
	is(lv_memcg_usage(cg), 0, "roundtrip: usage 0 after munmap");
	is(tot(m, LV_NR_SWAPCACHE), 0, "roundtrip: the swap cache is empty");
	is(lv_swap_off(m, id), 0, "roundtrip: swapoff");
	is(lv_swap_info(m, id, &info), -EINVAL, "roundtrip: the device is gone");
	dg_free(&d);
	finish_mm(m, mm, cg, "roundtrip");
}

/* ---- 2: MADV_PAGEOUT ------------------------------------------------------------------------ */

static void test_pageout(void)
{
	struct lv_config cfg = swap_config(16);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *cg = new_memcg(m, NULL, "cg");
	struct lv_mm *mm = new_mm(m, cg, 0);
	const size_t N = 256;
	int id = swapon_or_bail(m, -1, 8 * MiB, 0);
	struct digest d, lz, lk;
	uint64_t out0, in0;
	struct lv_folio *f = NULL;
	size_t zeros = 0;

	dg_init(&d, mm, map_or_bail(mm, N * PAGE), N, 2);
	dg_write_all(&d, "pageout");
	lv_lru_add_drain_all(m);
	is(lv_mm_rss(mm), N, "pageout: %zu pages mapped", N);

	out0 = tot(m, LV_PSWPOUT);
	is(pageout(&d, 0, N / 2), 0, "pageout: MADV_PAGEOUT of the first half");
	is(lv_mm_rss(mm), N / 2, "pageout: rss dropped by half");
	is(lv_memcg_swap_usage(cg), N / 2, "pageout: swap usage rose by half");
	is(lv_memcg_usage(cg), N / 2, "pageout: usage dropped by half");
	is(tot(m, LV_PSWPOUT) - out0, N / 2, "pageout: pswpout counts them");
	is(dev(m, id).used, N / 2, "pageout: the device holds them");
	is(kinds(&d, 0, N / 2, PTE_SWAP), N / 2, "pageout: their entries are swap entries");
	is(kinds(&d, N / 2, N / 2, PTE_FOLIO), N / 2, "pageout: the rest are mapped");
	is(tot(m, LV_NR_SWAPCACHE), 0, "pageout: written pages left the swap cache");
	check_ok(m, "pageout: half out");

	in0 = tot(m, LV_PSWPIN);
	is(dg_bad(&d), 0, "pageout: every page reads back");
	is(tot(m, LV_PSWPIN) - in0, N / 2, "pageout: each swapped page read once");
	is(lv_mm_rss(mm), N, "pageout: all mapped again");

	is(pageout(&d, 0, N), 0, "pageout: MADV_PAGEOUT of everything");
	is(lv_mm_rss(mm), 0, "pageout: nothing mapped");
	is(lv_memcg_swap_usage(cg), N, "pageout: all in swap");
	is(lv_madvise(mm, d.base, N / 4 * PAGE, LV_MADV_DONTNEED), 0,
	   "pageout: DONTNEED of a swapped quarter");
	for (size_t p = 0; p < N / 4; p++)
		d.gen[2 * p] = d.gen[2 * p + 1] = 0;
	is(lv_memcg_swap_usage(cg), N - N / 4, "pageout: DONTNEED freed their slots");
	is(dg_bad(&d), 0, "pageout: the quarter reads zeros, the rest its data");

	/* Lazily freed pages are dropped, not swapped. */
	dg_init(&lz, mm, map_or_bail(mm, 64 * PAGE), 64, 3);
	dg_write_all(&lz, "pageout lazyfree");
	is(lv_madvise(mm, lz.base, 64 * PAGE, LV_MADV_FREE), 0, "pageout: MADV_FREE");
	lv_lru_add_drain_all(m);
	out0 = tot(m, LV_PSWPOUT);
	is(pageout(&lz, 0, 64), 0, "pageout: PAGEOUT of lazily freed pages");
	is(tot(m, LV_PSWPOUT) - out0, 0, "pageout: none written to swap");
	is(kinds(&lz, 0, 64, PTE_FOLIO), 0, "pageout: all dropped");
	for (size_t p = 0; p < 64; p++)
		zeros += bad_pat(mm, dg_addr(&lz, p), PAGE, -1) == 0;
	is(zeros, 64, "pageout: they read as zeros");

	/* Locked pages stay. */
	dg_init(&lk, mm, map_or_bail(mm, 32 * PAGE), 32, 4);
	dg_write_all(&lk, "pageout mlock");
	is(lv_mlock(mm, lk.base, 32 * PAGE), 0, "pageout: mlock");
	lv_lru_add_drain_all(m);
	out0 = tot(m, LV_PSWPOUT);
	pageout(&lk, 0, 32);
	is(tot(m, LV_PSWPOUT) - out0, 0, "pageout: no mlocked page written");
	is(kinds(&lk, 0, 32, PTE_FOLIO), 32, "pageout: mlocked pages stay mapped");
	is(dg_bad(&lk), 0, "pageout: and intact");

	/* A swapped-in page is dirty once written: the next pageout writes it again. */
	is(dg_write(&d, N - 1), 0, "pageout: rewrite a page");
	if (pte_peek(mm, dg_addr(&d, N - 1), &f, NULL) == PTE_FOLIO) {
		ok(lv_folio_test(f, LV_PG_DIRTY), "pageout: the rewritten page is dirty");
		lv_folio_put(f);
	} else {
		ok(0, "pageout: the rewritten page is mapped");
	}
	lv_lru_add_drain_all(m);
	out0 = tot(m, LV_PSWPOUT);
	pageout(&d, N - 1, 1);
	is(tot(m, LV_PSWPOUT) - out0, 1, "pageout: a rewritten page is written out again");
	is(dg_bad(&d), 0, "pageout: its new generation reads back");
	check_ok(m, "pageout");

	lv_munmap(mm, d.base, N * PAGE);
	lv_munmap(mm, lz.base, 64 * PAGE);
	lv_munmap(mm, lk.base, 32 * PAGE);
	lv_lru_add_drain_all(m);
	is(lv_memcg_swap_usage(cg), 0, "pageout: unmapped: swap usage 0");
	is(lv_swap_off(m, id), 0, "pageout: swapoff");
	dg_free(&d);
	dg_free(&lz);
	dg_free(&lk);
	finish_mm(m, mm, cg, "pageout");
}

/*
 * Huge pages: PAGEOUT splits them and swaps every page; a block whose every entry is a swap
 * entry must swap its pages in when written, not fault a fresh huge page over them.
 */
static void test_pageout_thp(void)
{
	struct lv_config cfg = swap_config(32);
	struct lv_machine *m;
	struct lv_memcg *cg;
	struct lv_mm *mm;
	const size_t N = 4 * HNR;
	uint64_t addr, split0, alloc0;
	struct lv_folio *f = NULL;
	struct digest d;
	int id;

	cfg.thp = LV_THP_ALWAYS;
	m = new_machine(&cfg);
	cg = new_memcg(m, NULL, "cg");
	mm = new_mm(m, cg, 0);
	id = swapon_or_bail(m, -1, 16 * MiB, 0);
	addr = map_or_bail(mm, N * PAGE + HSIZE);
	dg_init(&d, mm, (addr + HSIZE - 1) & ~(HSIZE - 1), N, 5);
	alloc0 = tot(m, LV_THP_FAULT_ALLOC);
	dg_write_all(&d, "thp");
	is(tot(m, LV_THP_FAULT_ALLOC) - alloc0, N / HNR, "thp: %zu huge faults", N / HNR);
	if (pte_peek(mm, d.base, &f, NULL) == PTE_FOLIO) {
		is(lv_folio_nr_pages(f), HNR, "thp: the first block is one huge folio");
		lv_folio_put(f);
	}
	split0 = tot(m, LV_THP_SPLIT_PAGE);
	is(pageout(&d, 0, N), 0, "thp: PAGEOUT of the huge pages");
	is(lv_mm_rss(mm), 0, "thp: nothing mapped");
	is(kinds(&d, 0, N, PTE_SWAP), N, "thp: every page swapped");
	ok(tot(m, LV_THP_SPLIT_PAGE) - split0 >= N / HNR, "thp: they were split first");
	check_ok(m, "thp: swapped");

	alloc0 = tot(m, LV_THP_FAULT_ALLOC);
	is(dg_write_part(&d, HNR, 0), 0, "thp: half a page written into a swapped block");
	is(tot(m, LV_THP_FAULT_ALLOC) - alloc0, 0, "thp: no huge page faulted over swap entries");
	is(dg_bad(&d), 0, "thp: every page of every block reads back");
	is(lv_memcg_usage(cg), N, "thp: usage %zu", N);
	check_ok(m, "thp");
	lv_munmap(mm, d.base, N * PAGE);
	lv_lru_add_drain_all(m);
	is(lv_memcg_swap_usage(cg), 0, "thp: swap usage 0");
	is(lv_swap_off(m, id), 0, "thp: swapoff");
	dg_free(&d);
	finish_mm(m, mm, cg, "thp");
}

/* ---- 3: swap limits -------------------------------------------------------------------------- */

/* fill_until - write pages of @d in order until one fails; *@rc its error. Return: written. */
static size_t fill_until(struct digest *d, int *rc)
{
	size_t p;

	*rc = 0;
	for (p = 0; p < d->nr; p++)
		if ((*rc = dg_write(d, p)))
			break;
	return p;
}

static void test_swap_limit(void)
{
	struct lv_config cfg = swap_config(16);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *cg = new_memcg(m, NULL, "cg");
	struct lv_memcg *p, *a, *b;
	struct lv_mm *mm = new_mm(m, cg, 0), *ma, *mb;
	const size_t L = 256, S = 128;
	int id = swapon_or_bail(m, -1, 16 * MiB, 0), rc;
	size_t written, enomem = 0, bad = 0, wa, wb, sp;
	uint64_t out0;
	struct digest d, da, db;

	lv_memcg_set_max(cg, L);
	lv_memcg_set_swap_max(cg, S);
	dg_init(&d, mm, map_or_bail(mm, 4 * (L + S) * PAGE), 4 * (L + S), 6);
	written = fill_until(&d, &rc);
	is(rc, -ENOMEM, "limit: a write beyond limit + swap.max fails with -ENOMEM");
	ok(written <= L + S, "limit: at most limit + swap.max pages held (%zu)", written);
	ok(written >= L + S / 2, "limit: the swap was used (%zu pages written)", written);
	ok(lv_memcg_usage(cg) <= L, "limit: usage %zu within %zu", lv_memcg_usage(cg), L);
	ok(lv_memcg_swap_usage(cg) <= S, "limit: swap usage %zu within %zu",
	   lv_memcg_swap_usage(cg), S);
	check_ok(m, "limit: at both limits");
	for (size_t q = 0; q < written; q++) {
		rc = dg_read(&d, q);
		enomem += rc == -ENOMEM;
		bad += rc != 0 && rc != -ENOMEM;
	}
	is(bad, 0, "limit: at both limits every read is right or fails with -ENOMEM (%zu did)",
	   enomem);
	check_ok(m, "limit: after the reads");
	lv_memcg_set_swap_max(cg, SIZE_MAX);
	is(dg_bad_range(&d, 0, written), 0, "limit: swap.max lifted: every written page is intact");
	ok(lv_memcg_usage(cg) <= L, "limit: usage within the limit");
	lv_munmap(mm, d.base, d.nr * PAGE);
	lv_lru_add_drain_all(m);
	is(lv_memcg_swap_usage(cg), 0, "limit: unmapped: swap usage 0");
	is(dev(m, id).used, 0, "limit: unmapped: no slot used");
	is(lv_memcg_usage(cg), 0, "limit: unmapped: usage 0");
	dg_free(&d);

	/* swap.max 0 keeps a memcg out of swap altogether. */
	lv_memcg_set_swap_max(cg, 0);
	dg_init(&d, mm, map_or_bail(mm, 2 * L * PAGE), 2 * L, 7);
	out0 = tot(m, LV_PSWPOUT);
	written = fill_until(&d, &rc);
	is(rc, -ENOMEM, "limit 0: a write beyond the memory limit fails");
	ok(written <= L, "limit 0: no more than the memory limit held (%zu)", written);
	is(tot(m, LV_PSWPOUT) - out0, 0, "limit 0: nothing swapped out");
	is(lv_memcg_swap_usage(cg), 0, "limit 0: swap usage 0");
	is(dg_bad_range(&d, 0, written), 0, "limit 0: the pages held are intact");
	lv_munmap(mm, d.base, d.nr * PAGE);
	dg_free(&d);
	check_ok(m, "limit 0");
	lv_mm_destroy(mm);
	lv_lru_add_drain_all(m);
	is(lv_memcg_remove(cg), 0, "limit: memcg removed");

	/* A parent's swap.max bounds its children together. */
	p = new_memcg(m, NULL, "p");
	a = new_memcg(m, p, "a");
	b = new_memcg(m, p, "b");
	lv_memcg_set_swap_max(p, S);
	lv_memcg_set_max(a, L / 2);
	lv_memcg_set_max(b, L / 2);
	ma = new_mm(m, a, 0);
	mb = new_mm(m, b, 0);
	dg_init(&da, ma, map_or_bail(ma, 2 * L * PAGE), 2 * L, 8);
	dg_init(&db, mb, map_or_bail(mb, 2 * L * PAGE), 2 * L, 9);
	wa = fill_until(&da, &rc);
	is(rc, -ENOMEM, "hierarchy: a stops with -ENOMEM");
	wb = fill_until(&db, &rc);
	is(rc, -ENOMEM, "hierarchy: b stops with -ENOMEM");
	sp = lv_memcg_swap_usage(p);
	ok(sp <= S, "hierarchy: the parent's swap usage %zu within its swap.max %zu", sp, S);
	is(lv_memcg_swap_usage(a) + lv_memcg_swap_usage(b), sp,
	   "hierarchy: the children's swap usage adds up to the parent's");
	ok(wa + wb <= L + S, "hierarchy: %zu + %zu pages held, at most %zu", wa, wb, L + S);
	lv_memcg_set_swap_max(p, 0);
	is(lv_memcg_swap_usage(p), sp, "hierarchy: lowering swap.max swaps nothing in");
	is(dg_write(&da, wa), -ENOMEM, "hierarchy: swap.max 0: a's next write fails");
	is(lv_memcg_swap_usage(p), sp, "hierarchy: and swaps nothing out");
	lv_memcg_set_swap_max(p, SIZE_MAX);
	is(dg_bad_range(&da, 0, wa) + dg_bad_range(&db, 0, wb), 0,
	   "hierarchy: swap.max lifted: every page of both intact");
	check_ok(m, "hierarchy");
	lv_mm_destroy(ma);
	lv_mm_destroy(mb);
	lv_lru_add_drain_all(m);
	is(lv_memcg_swap_usage(p), 0, "hierarchy: destroyed: swap usage 0");
	is(dev(m, id).used, 0, "hierarchy: destroyed: no slot used");
	is(lv_memcg_remove(a) | lv_memcg_remove(b) | lv_memcg_remove(p), 0,
	   "hierarchy: memcgs removed");
	is(lv_swap_off(m, id), 0, "limit: swapoff");
	dg_free(&da);
	dg_free(&db);
	finish(m, "limit");
}

/* ---- 4: swapoff ------------------------------------------------------------------------------ */

static void test_swapoff(void)
{
	struct lv_config cfg = swap_config(16);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *cg = new_memcg(m, NULL, "cg");
	struct lv_mm *mm = new_mm(m, cg, 0);
	const size_t L = 512, N = 3 * L;
	int id = swapon_or_bail(m, -1, 16 * MiB, 0);
	struct lv_swap_info info;
	size_t swapped;
	struct digest d;

	lv_memcg_set_max(cg, L);
	dg_init(&d, mm, map_or_bail(mm, N * PAGE), N, 10);
	dg_write_all(&d, "swapoff");
	swapped = kinds(&d, 0, N, PTE_SWAP);
	ok(swapped >= N - L, "swapoff: %zu pages swapped", swapped);
	is(lv_swap_off(m, id), -ENOMEM, "swapoff: the memcg cannot hold them: -ENOMEM");
	ok(lv_swap_info(m, id, &info) == 0, "swapoff: the device is still on");
	ok(lv_memcg_usage(cg) <= L, "swapoff: usage %zu within the limit", lv_memcg_usage(cg));
	check_ok(m, "swapoff: refused");
	is(dg_bad(&d), 0, "swapoff: refused: every page intact");
	ok(kinds(&d, 0, N, PTE_SWAP) > 0, "swapoff: refused: the device is still used");

	lv_memcg_set_max(cg, SIZE_MAX);
	is(lv_swap_off(m, id), 0, "swapoff: limit lifted: swapoff");
	is(lv_swap_info(m, id, &info), -EINVAL, "swapoff: the device is gone");
	is(lv_mm_rss(mm), N, "swapoff: everything mapped again");
	is(kinds(&d, 0, N, PTE_SWAP), 0, "swapoff: no swap entry left");
	is(lv_memcg_swap_usage(cg), 0, "swapoff: swap usage 0");
	is(lv_memcg_usage(cg), N, "swapoff: every page charged to the memcg again");
	is(tot(m, LV_NR_SWAPCACHE), 0, "swapoff: the swap cache is empty");
	is(dg_bad(&d), 0, "swapoff: every page intact");
	check_ok(m, "swapoff");
	dg_free(&d);
	finish_mm(m, mm, cg, "swapoff");

	/* A machine too small for what was swapped out. */
	cfg = swap_config(8);
	m = new_machine(&cfg);
	mm = new_mm(m, NULL, 0);
	id = swapon_or_bail(m, -1, 16 * MiB, 0);
	dg_init(&d, mm, map_or_bail(mm, 3 * 2048 / 2 * PAGE), 3 * 2048 / 2, 11);
	dg_write_all(&d, "swapoff small");
	swapped = kinds(&d, 0, d.nr, PTE_SWAP);
	ok(swapped >= d.nr - 2048, "swapoff small: %zu pages swapped", swapped);
	is(lv_swap_off(m, id), -ENOMEM, "swapoff small: memory cannot hold them: -ENOMEM");
	ok(lv_swap_info(m, id, &info) == 0, "swapoff small: the device is still on");
	is(dg_bad(&d), 0, "swapoff small: refused: every page intact");
	check_ok(m, "swapoff small: refused");
	is(lv_munmap(mm, dg_addr(&d, 1024), (d.nr - 1024) * PAGE), 0,
	   "swapoff small: unmap all but 4 MiB");
	is(lv_swap_off(m, id), 0, "swapoff small: now it fits");
	is(kinds(&d, 0, 1024, PTE_FOLIO), 1024, "swapoff small: all mapped");
	is(dg_bad_range(&d, 0, 1024), 0, "swapoff small: intact");
	dg_free(&d);
	lv_mm_destroy(mm);
	finish(m, "swapoff small");
}

/* ---- 5: devices and priorities --------------------------------------------------------------- */

/* file_device - an unlinked temporary file of @size bytes (sparse). */
static int file_device(size_t size)
{
	const char *dir = getenv("TMPDIR");
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/lvswap-XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkstemp(path);
	if (fd < 0)
		BAIL_OUT("mkstemp %s: %s", path, strerror(errno));
	unlink(path);
	if (ftruncate(fd, (off_t)size))
		BAIL_OUT("ftruncate: %s", strerror(errno));
	return fd;
}

/* file_written - whether @fd holds any nonzero byte (swap wrote to it). */
static bool file_written(int fd, size_t size)
{
	static unsigned char buf[1 << 16];

	for (size_t off = 0; off < size; off += sizeof(buf)) {
		ssize_t n = pread(fd, buf, sizeof(buf), (off_t)off);

		for (ssize_t i = 0; i < n; i++)
			if (buf[i])
				return true;
	}
	return false;
}

static void test_devices(void)
{
	struct lv_config cfg = swap_config(16);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *cg = new_memcg(m, NULL, "cg");
	struct lv_mm *mm = new_mm(m, cg, 0);
	const size_t N = 1024;
	int fd = file_device(4 * MiB);
	int hi = swapon_or_bail(m, -1, 2 * MiB, 10);
	int lo = swapon_or_bail(m, fd, 4 * MiB, 5);
	struct lv_swap_info ih = dev(m, hi), il = dev(m, lo), i2;
	size_t u0, u1;
	int eq;
	struct digest d;

	ok(ih.in_memory && !il.in_memory, "devices: one in memory, one a file");
	is(ih.prio, 10, "devices: priorities reported");
	ok(il.slots >= 2 * HNR - 1 && il.slots <= 2 * HNR, "devices: the file has %zu slots",
	   il.slots);
	dg_init(&d, mm, map_or_bail(mm, N * PAGE), N, 12);
	dg_write_all(&d, "devices");
	lv_lru_add_drain_all(m);

	pageout(&d, 0, 256);
	is(dev(m, hi).used, 256, "devices: the higher priority device is used first");
	is(dev(m, lo).used, 0, "devices: the lower one not yet");
	pageout(&d, 256, 512);
	is(dev(m, hi).used, ih.slots, "devices: the higher one filled up (%zu)", ih.slots);
	is(dev(m, lo).used, 768 - ih.slots, "devices: then the lower one took the rest");
	ok(file_written(fd, 4 * MiB), "devices: the file holds written pages");
	is(dg_bad(&d), 0, "devices: every page reads back from both");
	check_ok(m, "devices: two priorities");

	pageout(&d, 0, N);
	is(lv_swap_off(m, hi), 0, "devices: swapoff of the higher one");
	is(dev(m, hi).slots, SIZE_MAX, "devices: gone");
	is(kinds(&d, 0, N, PTE_FOLIO), ih.slots, "devices: its pages mapped again");
	eq = swapon_or_bail(m, -1, 4 * MiB, 5);
	u0 = dev(m, lo).used;
	i2 = dev(m, eq);
	is(i2.used, 0, "devices: an equal priority device, unused yet");
	pageout(&d, 0, N);
	u1 = dev(m, lo).used;
	ok(u1 > u0 && dev(m, eq).used > 0,
	   "devices: equal priorities take turns (file +%zu, memory %zu)", u1 - u0,
	   dev(m, eq).used);
	is(dg_bad(&d), 0, "devices: every page reads back");
	is(lv_swap_off(m, lo), 0, "devices: swapoff of the file");
	is(lv_swap_off(m, eq), 0, "devices: swapoff of the other");
	is(kinds(&d, 0, N, PTE_SWAP), 0, "devices: no swap entry left");
	is(dg_bad(&d), 0, "devices: every page intact after both swapoffs");
	is(lv_memcg_usage(cg), N, "devices: all charged to the memcg");
	dg_free(&d);
	close(fd);
	finish_mm(m, mm, cg, "devices");
}

/* ---- 6: injected I/O errors ------------------------------------------------------------------ */

static void test_write_error(void)
{
	struct lv_config cfg = swap_config(16);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *cg = new_memcg(m, NULL, "cg");
	struct lv_mm *mm = new_mm(m, cg, 0);
	const size_t N = 64, L = 128;
	int id = swapon_or_bail(m, -1, 4 * MiB, 0), rc;
	uint64_t err0, out0, dev0;
	struct lv_folio *f = NULL;
	size_t written, dirty = 0;
	struct digest d, e;

	dg_init(&d, mm, map_or_bail(mm, N * PAGE), N, 13);
	dg_write_all(&d, "write error");
	lv_lru_add_drain_all(m);
	err0 = tot(m, LV_SWAP_WRITE_ERROR);
	out0 = tot(m, LV_PSWPOUT);
	dev0 = dev(m, id).write_errors;
	__atomic_store_n(&io.fail_writes, 1, __ATOMIC_RELAXED);
	is(pageout(&d, 0, N), 0, "write error: PAGEOUT with every write failing");
	io_clear();
	is(lv_mm_rss(mm), N, "write error: every page still mapped");
	is(kinds(&d, 0, N, PTE_FOLIO), N, "write error: every entry still a folio");
	for (size_t p = 0; p < N; p++)
		if (pte_peek(mm, dg_addr(&d, p), &f, NULL) == PTE_FOLIO) {
			dirty += lv_folio_test(f, LV_PG_DIRTY);
			lv_folio_put(f);
		}
	is(dirty, N, "write error: every page still dirty");
	ok(tot(m, LV_SWAP_WRITE_ERROR) - err0 >= 1, "write error: counted (%llu)",
	   (unsigned long long)(tot(m, LV_SWAP_WRITE_ERROR) - err0));
	is(dev(m, id).write_errors - dev0, tot(m, LV_SWAP_WRITE_ERROR) - err0,
	   "write error: the device counts the same");
	is(tot(m, LV_PSWPOUT) - out0, 0, "write error: no pswpout");
	is(dg_bad(&d), 0, "write error: every page intact");
	check_ok(m, "write error");
	lv_lru_add_drain_all(m);
	is(pageout(&d, 0, N), 0, "write error: cleared: PAGEOUT again");
	is(lv_mm_rss(mm), 0, "write error: cleared: swapped out this time");
	is(tot(m, LV_PSWPOUT) - out0, N, "write error: cleared: %zu written", N);
	is(dg_bad(&d), 0, "write error: cleared: every page reads back");

	/* Limit reclaim meets the failing writes: the fault fails, nothing is lost. */
	lv_memcg_set_max(cg, L);
	dg_init(&e, mm, map_or_bail(mm, 2 * L * PAGE), 2 * L, 14);
	err0 = tot(m, LV_SWAP_WRITE_ERROR);
	__atomic_store_n(&io.fail_writes, 1, __ATOMIC_RELAXED);
	written = fill_until(&e, &rc);
	io_clear();
	is(rc, -ENOMEM, "write error: at the limit the fault fails with -ENOMEM");
	ok(written <= L, "write error: no more than the limit held (%zu)", written);
	ok(tot(m, LV_SWAP_WRITE_ERROR) > err0, "write error: limit reclaim's writes failed");
	ok(lv_memcg_usage(cg) <= L, "write error: usage within the limit");
	check_ok(m, "write error: limit");
	is(dg_bad_range(&e, 0, written), 0, "write error: every page held is intact");
	rc = 0;
	for (size_t p = written; p < e.nr; p++)
		rc |= dg_write(&e, p);
	is(rc, 0, "write error: cleared: the rest can be written");
	is(dg_bad(&e) + dg_bad(&d), 0, "write error: cleared: everything intact");
	lv_munmap(mm, d.base, N * PAGE);
	lv_munmap(mm, e.base, e.nr * PAGE);
	lv_lru_add_drain_all(m);
	is(dev(m, id).used, 0, "write error: unmapped: no slot used");
	is(lv_swap_off(m, id), 0, "write error: swapoff");
	dg_free(&d);
	dg_free(&e);
	finish_mm(m, mm, cg, "write error");
}

/* fail_reads_of - fail every read of the entry that page @p of @d is swapped to. */
static swp_entry_t fail_reads_of(struct digest *d, size_t p)
{
	swp_entry_t e = entry_at(d->mm, dg_addr(d, p));

	if (!e.val)
		diag("page %zu is not swapped out: no read can be failed", p);
	__atomic_store_n(&io.fail_entry, e.val, __ATOMIC_RELAXED);
	return e;
}

static void test_read_error(void)
{
	struct lv_config cfg = swap_config(16);
	struct lv_machine *m;
	struct lv_memcg *cg;
	struct lv_mm *mm;
	const size_t N = 32;
	unsigned char byte = 0x5a, buf[8];
	uint64_t err0, dev0;
	size_t p = 5, q = SIZE_MAX, by_slot[N], warm = 0, bad = 0;
	uint64_t ra0;
	swp_entry_t e, es[N];
	int id, rc;
	struct digest d;

	/* The faulting page's own read, with no readahead. */
	cfg.page_cluster = 0;
	m = new_machine(&cfg);
	cg = new_memcg(m, NULL, "cg");
	mm = new_mm(m, cg, 0);
	id = swapon_or_bail(m, -1, 4 * MiB, 0);
	dg_init(&d, mm, map_or_bail(mm, N * PAGE), N, 15);
	dg_write_all(&d, "read error");
	lv_lru_add_drain_all(m);
	pageout(&d, 0, N);
	is(kinds(&d, 0, N, PTE_SWAP), N, "read error: all swapped out");
	e = fail_reads_of(&d, p);
	err0 = tot(m, LV_SWAP_READ_ERROR);
	dev0 = dev(m, id).read_errors;
	is(lv_mm_read(mm, dg_addr(&d, p), buf, sizeof(buf)), -EIO,
	   "read error: the read gets -EIO");
	ok(tot(m, LV_SWAP_READ_ERROR) - err0 >= 1, "read error: counted");
	is(dev(m, id).read_errors - dev0, tot(m, LV_SWAP_READ_ERROR) - err0,
	   "read error: the device counts the same");
	is(entry_at(mm, dg_addr(&d, p)).val, e.val, "read error: the swap entry is kept");
	is(lv_mm_write(mm, dg_addr(&d, p) + 100, &byte, 1), -EIO,
	   "read error: a write into the page gets -EIO too");
	is(entry_at(mm, dg_addr(&d, p)).val, e.val, "read error: the entry is still kept");
	is(dg_bad_range(&d, 0, p) + dg_bad_range(&d, p + 1, N - p - 1), 0,
	   "read error: every other page reads back");
	is(lv_mm_rss(mm), N - 1, "read error: all others mapped");
	check_ok(m, "read error: pending");
	io_clear();
	is(dg_read(&d, p), 0, "read error: cleared: the page reads back, the byte never written");
	check_ok(m, "read error");
	lv_munmap(mm, d.base, N * PAGE);
	lv_lru_add_drain_all(m);
	is(dev(m, id).used, 0, "read error: unmapped: no slot used");
	is(lv_swap_off(m, id), 0, "read error: swapoff");
	dg_free(&d);
	finish_mm(m, mm, cg, "read error");

	/*
	 * A readahead read: the access that started it succeeds. The window grows only while
	 * faults walk the slots and hit what was read ahead, so the pages are first read in slot
	 * order up to an aligned block of 8 slots; its first slot's fault then reads the block,
	 * and the read of its second slot is the one that fails.
	 */
	cfg.page_cluster = 3;
	m = new_machine(&cfg);
	cg = new_memcg(m, NULL, "cg");
	mm = new_mm(m, cg, 0);
	id = swapon_or_bail(m, -1, 4 * MiB, 0);
	dg_init(&d, mm, map_or_bail(mm, N * PAGE), N, 16);
	dg_write_all(&d, "readahead error");
	lv_lru_add_drain_all(m);
	pageout(&d, 0, N);
	for (size_t i = 0; i < N; i++)
		es[i] = entry_at(mm, dg_addr(&d, i));
	/* by_slot[k]: the page whose slot is the k-th lowest (pages on one device, in order) */
	for (size_t k = 0; k < N; k++) {
		by_slot[k] = SIZE_MAX;
		for (size_t i = 0; i < N; i++)
			if (es[i].val && (k == 0 ? true : es[i].val > es[by_slot[k - 1]].val) &&
			    (by_slot[k] == SIZE_MAX || es[i].val < es[by_slot[k]].val))
				by_slot[k] = i;
	}
	for (size_t k = 0; k + 1 < N && q == SIZE_MAX; k++)
		if (by_slot[k] != SIZE_MAX && by_slot[k + 1] != SIZE_MAX && k >= 8 &&
		    swp_offset(es[by_slot[k]]) % 8 == 0 &&
		    es[by_slot[k + 1]].val == es[by_slot[k]].val + 1) {
			warm = k;
			p = by_slot[k];
			q = by_slot[k + 1];
		}
	ok(q != SIZE_MAX, "readahead error: an aligned block of slots after a warm-up run");
	if (q == SIZE_MAX) {
		warm = 0;
		q = p == 0;
	}
	ra0 = tot(m, LV_SWAP_RA);
	for (size_t k = 0; k < warm; k++)
		bad += dg_read(&d, by_slot[k]) != 0;
	is(bad, 0, "readahead error: %zu pages read in slot order", warm);
	ok(tot(m, LV_SWAP_RA) > ra0, "readahead error: they were read ahead");
	e = fail_reads_of(&d, q);
	dev0 = dev(m, id).read_errors;
	is(dg_read(&d, p), 0, "readahead error: page %zu reads back", p);
	ok(dev(m, id).read_errors > dev0, "readahead error: the read of page %zu failed", q);
	is(entry_at(mm, dg_addr(&d, q)).val, e.val, "readahead error: its entry is kept");
	is(lv_mm_read(mm, dg_addr(&d, q), buf, sizeof(buf)), -EIO,
	   "readahead error: its own access gets -EIO");
	io_clear();
	is(dg_bad(&d), 0, "readahead error: cleared: every page reads back");
	check_ok(m, "readahead error");

	/* swapoff's reads: -EIO, the device stays, only that page stays on it. */
	lv_lru_add_drain_all(m);
	pageout(&d, 0, N);
	e = fail_reads_of(&d, p);
	is(lv_swap_off(m, id), -EIO, "swapoff error: swapoff gets -EIO");
	ok(dev(m, id).slots != SIZE_MAX, "swapoff error: the device is still on");
	is(entry_at(mm, dg_addr(&d, p)).val, e.val, "swapoff error: the page stays swapped");
	is(lv_mm_read(mm, dg_addr(&d, p), buf, sizeof(buf)), -EIO,
	   "swapoff error: its access gets -EIO");
	is(dg_bad_range(&d, 0, p) + dg_bad_range(&d, p + 1, N - p - 1), 0,
	   "swapoff error: every other page reads back");
	check_ok(m, "swapoff error: pending");
	io_clear();
	rc = lv_swap_off(m, id);
	is(rc, 0, "swapoff error: cleared: swapoff");
	is(lv_mm_rss(mm), N, "swapoff error: everything mapped");
	is(dg_bad(&d), 0, "swapoff error: every page intact");
	dg_free(&d);
	finish_mm(m, mm, cg, "readahead error");
}

/* ---- 7: a removed memcg's swapped-out pages ------------------------------------------------ */

/* move_page - move the charge of the page at @addr to @to. Return: the move's result. */
static int move_page(struct lv_mm *mm, uint64_t addr, struct lv_memcg *to)
{
	struct lv_folio *f = NULL;
	int rc = -ENOENT;

	if (pte_peek(mm, addr, &f, NULL) == PTE_FOLIO) {
		rc = lv_folio_move_memcg(f, to);
		lv_folio_put(f);
	}
	return rc;
}

static void test_removed_memcg(void)
{
	struct lv_config cfg = swap_config(16);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *a = new_memcg(m, NULL, "a"), *c = new_memcg(m, a, "c"), *p, *c2, *got;
	struct lv_mm *mm = new_mm(m, a, 0);
	const size_t N = 8;
	int id = swapon_or_bail(m, -1, 4 * MiB, 0);
	struct digest d;

	/* The child's page, faulted back in after the child is gone: the parent pays. */
	dg_init(&d, mm, map_or_bail(mm, N * PAGE), N, 17);
	dg_write_all(&d, "removed");
	lv_lru_add_drain_all(m);
	is(move_page(mm, d.base, c), 0, "removed: a page's charge moved to the child");
	lv_lru_add_drain_all(m);
	is(lv_memcg_usage(c), 1, "removed: the child holds it");
	pageout(&d, 0, 1);
	is(lv_memcg_swap_usage(c), 1, "removed: swapped out, charged to the child's swap");
	is(lv_memcg_stat(c, LV_NR_SWAP), 1, "removed: the child's nr_swap");
	is(lv_memcg_usage(c), 0, "removed: the child holds no memory");
	is(lv_memcg_swap_usage(a), 1, "removed: the parent counts it hierarchically");
	is(lv_memcg_remove(c), 0, "removed: the child is removed");
	is(lv_memcg_swap_usage(a), 1, "removed: the slot is the parent's now");
	is(lv_memcg_stat(a, LV_NR_SWAP), 1, "removed: the parent's nr_swap");
	is(lv_memcg_usage(a), N - 1, "removed: usage before the fault");
	is(dg_read(&d, 0), 0, "removed: the page reads back");
	is(lv_memcg_usage(a), N, "removed: the swap-in charged the parent");
	ok(memcg_at(mm, d.base) == a, "removed: the folio is the parent's");
	check_ok(m, "removed");
	lv_munmap(mm, d.base, N * PAGE);
	lv_lru_add_drain_all(m);
	is(lv_memcg_swap_usage(a), 0, "removed: unmapped: swap usage 0");
	dg_free(&d);
	finish_mm(m, mm, a, "removed");

	/*
	 * Siblings: the mm's memcg a and c under p. swapoff charges a page of the removed c to
	 * its closest live ancestor, p.
	 */
	m = new_machine(&cfg);
	p = new_memcg(m, NULL, "p");
	a = new_memcg(m, p, "a");
	c = new_memcg(m, p, "c");
	c2 = new_memcg(m, p, "c2");
	mm = new_mm(m, a, 0);
	id = swapon_or_bail(m, -1, 4 * MiB, 0);
	dg_init(&d, mm, map_or_bail(mm, N * PAGE), N, 18);
	dg_write_all(&d, "removed sibling");
	lv_lru_add_drain_all(m);
	is(move_page(mm, dg_addr(&d, 0), c) | move_page(mm, dg_addr(&d, 1), c) |
		   move_page(mm, dg_addr(&d, 4), c2),
	   0, "removed sibling: three pages moved to the siblings");
	lv_lru_add_drain_all(m);
	pageout(&d, 0, N);
	is(lv_memcg_swap_usage(c), 2, "removed sibling: c's swap");
	is(lv_memcg_swap_usage(c2), 1, "removed sibling: c2's swap");
	is(lv_memcg_swap_usage(a), N - 3, "removed sibling: a's swap");
	is(lv_memcg_swap_usage(p), N, "removed sibling: p counts all");
	is(lv_memcg_remove(c), 0, "removed sibling: c removed");
	is(lv_memcg_remove(c2), 0, "removed sibling: c2 removed");
	is(lv_memcg_swap_usage(p), N, "removed sibling: p still counts all");
	is(lv_memcg_swap_usage(a), N - 3, "removed sibling: a's unchanged");

	/*
	 * A fault on c2's page: lruvec.h says the faulting mm's memcg (a) is charged, the issue
	 * says the parent (p); either keeps the books straight.
	 */
	is(dg_read(&d, 4), 0, "removed sibling: c2's page reads back");
	got = memcg_at(mm, dg_addr(&d, 4));
	ok(got == a || got == p, "removed sibling: charged to %s",
	   got == a   ? "a (the mm's)"
	   : got == p ? "p (c2's parent)"
		      : "neither a nor p");
	diag("removed sibling: a swap-in of a removed memcg's page was charged to %s",
	     got == a ? "the faulting mm's memcg" : "the removed memcg's parent");
	check_ok(m, "removed sibling: faulted");

	is(lv_swap_off(m, id), 0, "removed sibling: swapoff");
	ok(memcg_at(mm, dg_addr(&d, 0)) == p && memcg_at(mm, dg_addr(&d, 1)) == p,
	   "removed sibling: swapoff charged c's pages to p");
	ok(memcg_at(mm, dg_addr(&d, 2)) == a && memcg_at(mm, dg_addr(&d, 7)) == a,
	   "removed sibling: and a's pages to a");
	is(lv_memcg_usage(p), N, "removed sibling: p's usage counts all");
	is(lv_memcg_usage(a), N - 2 - (got != a), "removed sibling: a's usage");
	is(lv_memcg_swap_usage(p), 0, "removed sibling: no swap left");
	is(dg_bad(&d), 0, "removed sibling: every page intact");
	check_ok(m, "removed sibling");
	lv_mm_destroy(mm);
	lv_lru_add_drain_all(m);
	is(lv_memcg_usage(p), 0, "removed sibling: destroyed: p's usage 0");
	is(lv_memcg_remove(a) | lv_memcg_remove(p), 0, "removed sibling: memcgs removed");
	dg_free(&d);
	finish(m, "removed sibling");
}

/* ---- 9: refaults and readahead --------------------------------------------------------------- */

static void refault_case(unsigned int cluster)
{
	struct lv_config cfg = swap_config(16);
	struct lv_machine *m;
	struct lv_memcg *cg;
	struct lv_mm *mm;
	struct lv_file *file;
	const size_t N = 64, FILE_PAGES = 1024;
	static char buf[16 * PAGE];
	uint64_t in0, ra0, hit0, ref0, act0;
	int id;
	struct digest d;

	cfg.page_cluster = cluster;
	m = new_machine(&cfg);
	cg = new_memcg(m, NULL, "cg");
	mm = new_mm(m, cg, 0);
	id = swapon_or_bail(m, -1, 4 * MiB, 0);
	/* A page cache workingset much larger than what is swapped out. */
	file = lv_file_open(m, -1, FILE_PAGES * PAGE);
	if (!file)
		BAIL_OUT("lv_file_open: %s", strerror(errno));
	for (int pass = 0; pass < 2; pass++)
		for (size_t off = 0; off < FILE_PAGES * PAGE; off += sizeof(buf))
			lv_file_read(file, cg, buf, sizeof(buf), off);
	dg_init(&d, mm, map_or_bail(mm, N * PAGE), N, 19);
	dg_write_all(&d, "refault");
	lv_lru_add_drain_all(m);
	pageout(&d, 0, N);
	in0 = tot(m, LV_PSWPIN);
	ra0 = tot(m, LV_SWAP_RA);
	hit0 = tot(m, LV_SWAP_RA_HIT);
	ref0 = tot(m, LV_WORKINGSET_REFAULT_ANON);
	act0 = tot(m, LV_WORKINGSET_ACTIVATE_ANON);
	is(dg_bad(&d), 0, "refault %u: every page reads back", cluster);
	is(tot(m, LV_PSWPIN) - in0, N, "refault %u: each page read once", cluster);
	is(tot(m, LV_WORKINGSET_REFAULT_ANON) - ref0, N,
	   "refault %u: every swap-in found its shadow", cluster);
	ok(tot(m, LV_WORKINGSET_ACTIVATE_ANON) - act0 >= 1,
	   "refault %u: refaults soon after the eviction are activated (%llu)", cluster,
	   (unsigned long long)(tot(m, LV_WORKINGSET_ACTIVATE_ANON) - act0));
	if (cluster) {
		ok(tot(m, LV_SWAP_RA) - ra0 >= N / 2, "refault %u: pages read ahead (%llu)",
		   cluster, (unsigned long long)(tot(m, LV_SWAP_RA) - ra0));
		ok(tot(m, LV_SWAP_RA_HIT) - hit0 >= N / 2 &&
			   tot(m, LV_SWAP_RA_HIT) - hit0 <= tot(m, LV_SWAP_RA) - ra0,
		   "refault %u: faults found them (%llu)", cluster,
		   (unsigned long long)(tot(m, LV_SWAP_RA_HIT) - hit0));
	} else {
		is(tot(m, LV_SWAP_RA) - ra0, 0, "refault 0: no readahead");
		is(tot(m, LV_SWAP_RA_HIT) - hit0, 0, "refault 0: no readahead hit");
	}
	check_ok(m, "refault");
	lv_file_close(file);
	lv_munmap(mm, d.base, N * PAGE);
	lv_lru_add_drain_all(m);
	is(dev(m, id).used, 0, "refault %u: unmapped: no slot used", cluster);
	is(lv_swap_off(m, id), 0, "refault %u: swapoff", cluster);
	dg_free(&d);
	finish_mm(m, mm, cg, "refault");
}

static void test_refault(void)
{
	refault_case(3);
	refault_case(0);
}

/* ---- 10: swappiness 0 ------------------------------------------------------------------------ */

static void swappiness_case(bool machine_wide)
{
	struct lv_config cfg = swap_config(16);
	const char *what = machine_wide ? "cfg.swappiness 0" : "memcg swappiness 0";
	struct lv_machine *m;
	struct lv_memcg *cg;
	struct lv_mm *mm;
	struct lv_file *file;
	const size_t L = 1024, A = 256, FILE_PAGES = 4096, B = 2048;
	static char buf[16 * PAGE];
	uint64_t out0, steal0;
	long short_reads = 0;
	struct digest d, e;
	int id;

	if (machine_wide)
		cfg.swappiness = 0;
	m = new_machine(&cfg);
	cg = new_memcg(m, NULL, "cg");
	if (!machine_wide)
		lv_memcg_set_swappiness(cg, 0);
	lv_memcg_set_max(cg, L);
	mm = new_mm(m, cg, 0);
	id = swapon_or_bail(m, -1, 16 * MiB, 0);
	dg_init(&d, mm, map_or_bail(mm, A * PAGE), A, 20);
	dg_write_all(&d, what);
	lv_lru_add_drain_all(m);
	file = lv_file_open(m, -1, FILE_PAGES * PAGE);
	if (!file)
		BAIL_OUT("lv_file_open: %s", strerror(errno));
	out0 = tot(m, LV_PSWPOUT);
	steal0 = lv_memcg_stat(cg, LV_PGSTEAL);
	for (size_t off = 0; off < FILE_PAGES * PAGE; off += sizeof(buf))
		short_reads += lv_file_read(file, cg, buf, sizeof(buf), off) != (long)sizeof(buf);
	is(short_reads, 0, "%s: the file read through a limit of %zu pages", what, L);
	ok(lv_memcg_stat(cg, LV_PGSTEAL) - steal0 >= FILE_PAGES - L, "%s: page cache reclaimed",
	   what);
	is(tot(m, LV_PSWPOUT) - out0, 0, "%s: no anon page swapped while the file lists are big",
	   what);
	is(lv_mm_rss(mm), A, "%s: every anon page still mapped", what);
	is(lv_memcg_stat(cg, LV_PGSTEAL_ANON), 0, "%s: pgsteal_anon 0", what);
	lv_file_close(file);

	/*
	 * Limit reclaim with swappiness 0 never swaps (lruvec.h, the kernel's rule: a memcg's
	 * way to opt out of swap), even with no page cache left: the tenant's writes fail at
	 * its limit, and nothing it wrote before is lost.
	 */
	dg_init(&e, mm, map_or_bail(mm, B * PAGE), B, 21);
	{
		int err = 0;
		size_t n = 0;

		for (; n < B && !(err = lv_mm_memset(mm, e.base + n * PAGE, 0x5a, PAGE)); n++)
			;
		is(err, -ENOMEM, "%s: with no page cache left, a write at the limit fails", what);
		ok(n < B, "%s: after %zu of %zu pages", what, n, B);
		lv_madvise(mm, e.base, B * PAGE, LV_MADV_DONTNEED);
	}
	is(tot(m, LV_PSWPOUT) - out0, 0, "%s: and nothing was swapped", what);
	is(dg_bad(&d), 0, "%s: every page reads back", what);
	check_ok(m, what);
	lv_munmap(mm, d.base, A * PAGE);
	lv_munmap(mm, e.base, B * PAGE);
	lv_lru_add_drain_all(m);
	is(lv_swap_off(m, id), 0, "%s: swapoff", what);
	dg_free(&d);
	dg_free(&e);
	finish_mm(m, mm, cg, what);
}

static void test_swappiness(void)
{
	struct lv_config cfg = swap_config(8);
	struct lv_machine *m;
	struct lv_mm *mm;
	struct digest d;
	uint64_t out0;
	int id;

	swappiness_case(true);
	swappiness_case(false);

	/*
	 * Global reclaim with no page cache at all: swappiness 0 still swaps (lruvec.h), as the
	 * kernel's global reclaim does when the file pages are tiny (file_is_tiny).
	 */
	cfg.swappiness = 0;
	m = new_machine(&cfg);
	mm = new_mm(m, NULL, 0);
	id = swapon_or_bail(m, -1, 16 * MiB, 0);
	out0 = tot(m, LV_PSWPOUT);
	dg_init(&d, mm, map_or_bail(mm, 3072 * PAGE), 3072, 24);
	dg_write_all(&d, "global swappiness 0");
	ok(tot(m, LV_PSWPOUT) - out0 >= 1024,
	   "global swappiness 0: with no page cache, node reclaim swaps (%llu)",
	   (unsigned long long)(tot(m, LV_PSWPOUT) - out0));
	is(dg_bad(&d), 0, "global swappiness 0: every page reads back");
	lv_mm_destroy(mm);
	is(lv_swap_off(m, id), 0, "global swappiness 0: swapoff");
	dg_free(&d);
	finish(m, "global swappiness 0");
}

/* ---- other machine shapes ----------------------------------------------------------------- */

static void test_shapes(void)
{
	static const struct {
		const char *name;
		bool memcg_disabled;
		enum lv_lock_design design;
		unsigned int slots;
	} shapes[] = {
		{ "node lock", false, LV_LOCK_NODE, 1 },
		{ "memcg disabled", true, LV_LOCK_LRUVEC, 1 },
		{ "two slots", false, LV_LOCK_LRUVEC, 2 },
	};

	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		struct lv_config cfg = swap_config(8);
		const char *name = shapes[i].name;
		struct lv_machine *m;
		struct lv_mm *mm;
		struct digest d;
		int id;

		cfg.memcg_disabled = shapes[i].memcg_disabled;
		cfg.lock_design = shapes[i].design;
		cfg.nr_cpu_slots = shapes[i].slots;
		m = new_machine(&cfg);
		mm = new_mm(m, NULL, 0);
		id = swapon_or_bail(m, -1, 16 * MiB, 0);
		dg_init(&d, mm, map_or_bail(mm, 3072 * PAGE), 3072, 22);
		dg_write_all(&d, name);
		ok(kinds(&d, 0, d.nr, PTE_SWAP) >= 1024, "%s: node reclaim swapped", name);
		is(dg_bad(&d), 0, "%s: every page reads back", name);
		check_ok(m, name);
		lv_munmap(mm, d.base, d.nr * PAGE);
		lv_lru_add_drain_all(m);
		is(dev(m, id).used, 0, "%s: unmapped: no slot used", name);
		is(lv_swap_off(m, id), 0, "%s: swapoff", name);
		lv_mm_destroy(mm);
		dg_free(&d);
		finish(m, name);
	}
}

/* ---- 8: races -------------------------------------------------------------------------------- */

/*
 * Two tenants write, read and page out their own address spaces while other threads reclaim,
 * compact, migrate between two nodes, split huge pages, and create, charge and remove sibling
 * memcgs (with pages of their own and pages moved from the tenants, swapped out while theirs).
 * A round has two phases, each ended by a barrier of every thread: in the first, each tenant
 * on its turn drops one huge block and faults a fresh huge page there (THP always), so that
 * the second phase starts with a huge folio for the splitter and reclaim to split; in the
 * second, every thread does its round's step at once. The counts are fixed.
 */
#define RT_PAGES  2048
#define RT_LIMIT  1024
#define RT_ROUNDS 30
#define RT_OPS	  48
#define RT_RACERS 5

struct rt;

struct rt_tenant {
	struct rt *s;
	struct digest d;
	struct lv_memcg *cg;
	uint64_t rng;
	unsigned long ops, bad, enomem, errors;
};

struct rt {
	struct lv_machine *m;
	struct lv_memcg *parent;
	struct lv_file *file;
	struct rt_tenant t[2];
	pthread_barrier_t round;
	unsigned long reclaimed, compactions, not_migrated, splits, split_busy, removed,
		remove_busy, moved, sib_pages;
	struct lv_memcg *leftover[RT_ROUNDS];
	unsigned int nr_leftover;
};

static uint64_t rng_next(uint64_t *s)
{
	*s += 0x9e3779b97f4a7c15ull;
	return mix64(*s);
}

static void rt_verify(struct rt_tenant *t, size_t p)
{
	int rc = dg_read(&t->d, p);

	if (rc == -ENOMEM)
		t->enomem++;
	else if (rc < 0)
		t->errors++;
	else
		t->bad += rc;
}

/* rt_huge_refault - drop huge block @b of @t and write one page in it: a huge fault. */
static void rt_huge_refault(struct rt_tenant *t, size_t b)
{
	size_t first = b * HNR;
	int rc;

	if (lv_madvise(t->d.mm, dg_addr(&t->d, first), HSIZE, LV_MADV_DONTNEED)) {
		t->errors++;
		return;
	}
	memset(&t->d.gen[2 * first], 0, 2 * HNR * sizeof(*t->d.gen));
	rc = dg_write(&t->d, first + b);
	if (rc == -ENOMEM)
		t->enomem++;
	else if (rc)
		t->errors++;
}

static void *rt_tenant_thread(void *arg)
{
	struct rt_tenant *t = arg;
	struct rt *s = t->s;
	int me = t == &s->t[1];

	for (int r = 0; r < RT_ROUNDS; r++) {
		if ((r & 1) == me)
			rt_huge_refault(t, (size_t)(r >> 1) % (t->d.nr / HNR));
		pthread_barrier_wait(&s->round);
		for (int k = 0; k < RT_OPS; k++) {
			uint64_t x = rng_next(&t->rng);
			size_t p = (size_t)(x >> 16) % t->d.nr;
			int rc = 0;

			switch (x & 7) {
			case 0 ... 2:
				rc = dg_write(&t->d, p);
				break;
			case 3:
				rc = dg_write_part(&t->d, p, (x >> 8) & 1);
				break;
			case 4 ... 5:
				rt_verify(t, p);
				break;
			case 6:
				rc = pageout(&t->d, p, p + 32 < t->d.nr ? 32 : t->d.nr - p);
				break;
			default:
				/* a run of neighbours: readahead hits and misses */
				for (size_t i = p; i < p + 8 && i < t->d.nr; i++)
					rt_verify(t, i);
			}
			if (rc == -ENOMEM)
				t->enomem++;
			else if (rc)
				t->errors++;
			t->ops++;
		}
		/* digests checked during the run, racers still going */
		if (r % 10 == 9)
			for (size_t p = 0; p < t->d.nr; p += 3)
				rt_verify(t, p);
		pthread_barrier_wait(&s->round);
	}
	return NULL;
}

static void *rt_reclaim_thread(void *arg)
{
	struct rt *s = arg;

	for (int r = 0; r < RT_ROUNDS; r++) {
		pthread_barrier_wait(&s->round); /* the tenants' huge faults */
		s->reclaimed += lv_memcg_reclaim(s->t[r & 1].cg, 128);
		s->reclaimed += lv_reclaim_node(s->m, r & 1, 128);
		pthread_barrier_wait(&s->round);
	}
	return NULL;
}

static void *rt_compact_thread(void *arg)
{
	struct rt *s = arg;

	for (int r = 0; r < RT_ROUNDS; r++) {
		pthread_barrier_wait(&s->round); /* the tenants' huge faults */
		s->compactions += lv_compact_node(s->m, (r >> 1) & 1, r % 3 ? 9 : -1) >= 0;
		pthread_barrier_wait(&s->round);
	}
	return NULL;
}

static void *rt_migrate_thread(void *arg)
{
	struct rt *s = arg;

	for (int r = 0; r < RT_ROUNDS; r++) {
		pthread_barrier_wait(&s->round); /* the tenants' huge faults */
		int to = (r >> 1) & 1;
		long left = lv_migrate_pages(s->t[r & 1].d.mm, 1ull << (1 - to), to);

		if (left > 0)
			s->not_migrated += (unsigned long)left;
		pthread_barrier_wait(&s->round);
	}
	return NULL;
}

static void *rt_split_thread(void *arg)
{
	struct rt *s = arg;

	for (int r = 0; r < RT_ROUNDS; r++) {
		pthread_barrier_wait(&s->round); /* the tenants' huge faults */
		struct digest *d = &s->t[r & 1].d;

		for (size_t p = 0; p < d->nr; p += 64) {
			struct lv_folio *f = NULL;

			if (pte_peek(d->mm, dg_addr(d, p), &f, NULL) != PTE_FOLIO)
				continue;
			if (lv_folio_nr_pages(f) > 1) {
				int rc = lv_split_folio(f);

				s->splits += rc == 0;
				s->split_busy += rc == -EBUSY;
			}
			lv_folio_put(f);
		}
		pthread_barrier_wait(&s->round);
	}
	return NULL;
}

static void *rt_remove_thread(void *arg)
{
	struct rt *s = arg;
	static char buf[16 * PAGE];
	uint64_t rng = 99;

	for (int r = 0; r < RT_ROUNDS; r++) {
		pthread_barrier_wait(&s->round); /* the tenants' huge faults */
		struct lv_memcg *sib = lv_memcg_create(s->m, s->parent, "sibling");
		struct rt_tenant *t = &s->t[r & 1];
		struct lv_folio *own[8];
		unsigned int nr_own = 0;
		int rc = -EBUSY;

		if (!sib)
			BAIL_OUT("lv_memcg_create: %s", strerror(errno));
		for (int i = 0; i < 8; i++) {
			struct lv_folio *f = lv_folio_alloc(s->m, i & 1, 0, sib, LV_FOLIO_ANON);

			if (f && !lv_folio_add_lru(f))
				own[nr_own++] = f;
			else if (f)
				lv_folio_put(f);
		}
		lv_file_read(s->file, sib, buf, sizeof(buf), (uint64_t)(r % 16) * sizeof(buf));
		for (int i = 0; i < 4; i++) {
			size_t p = (size_t)rng_next(&rng) % t->d.nr;

			if (move_page(t->d.mm, dg_addr(&t->d, p), sib) == 0) {
				s->moved++;
				pageout(&t->d, p, 1);
			}
		}
		s->sib_pages += lv_memcg_usage(sib) + lv_memcg_swap_usage(sib);
		for (int tries = 0; tries < 3 && rc == -EBUSY; tries++)
			rc = lv_memcg_remove(sib);
		if (rc == 0)
			s->removed++;
		else
			s->leftover[s->nr_leftover++] = sib;
		s->remove_busy += rc == -EBUSY;
		for (unsigned int i = 0; i < nr_own; i++)
			lv_folio_put(own[i]);
		pthread_barrier_wait(&s->round);
	}
	return NULL;
}

static void test_races(void)
{
	struct lv_config cfg = swap_config(32);
	struct rt *s = calloc(1, sizeof(*s));
	void *(*racers[RT_RACERS])(void *) = { rt_reclaim_thread, rt_compact_thread,
					       rt_migrate_thread, rt_split_thread,
					       rt_remove_thread };
	pthread_t th[2 + RT_RACERS];
	unsigned long bad = 0, errors = 0, enomem = 0, ops = 0;
	uint64_t out0, in0, split0, thp0;
	int id;

	if (!s)
		BAIL_OUT("out of memory");
	cfg.nr_nodes = 2;
	cfg.nr_cpu_slots = 2;
	cfg.thp = LV_THP_ALWAYS;
	s->m = new_machine(&cfg);
	id = swapon_or_bail(s->m, -1, 64 * MiB, 0);
	s->parent = new_memcg(s->m, NULL, "tenants");
	s->file = lv_file_open(s->m, -1, 256 * PAGE * 16);
	if (!s->file)
		BAIL_OUT("lv_file_open: %s", strerror(errno));
	for (int i = 0; i < 2; i++) {
		struct rt_tenant *t = &s->t[i];
		struct lv_mm *mm;
		uint64_t addr;

		t->s = s;
		t->cg = new_memcg(s->m, s->parent, i ? "t1" : "t0");
		lv_memcg_set_max(t->cg, RT_LIMIT);
		mm = new_mm(s->m, t->cg, i);
		addr = map_or_bail(mm, RT_PAGES * PAGE + HSIZE);
		dg_init(&t->d, mm, (addr + HSIZE - 1) & ~(HSIZE - 1), RT_PAGES, 100 + (uint32_t)i);
		t->rng = 1000 + (uint64_t)i;
		dg_write_all(&t->d, "races: initial");
	}
	out0 = tot(s->m, LV_PSWPOUT);
	in0 = tot(s->m, LV_PSWPIN);
	split0 = tot(s->m, LV_THP_SPLIT_PAGE);
	thp0 = tot(s->m, LV_THP_FAULT_ALLOC);
	pthread_barrier_init(&s->round, NULL, 2 + RT_RACERS);
	for (int i = 0; i < 2; i++)
		if (pthread_create(&th[i], NULL, rt_tenant_thread, &s->t[i]))
			BAIL_OUT("pthread_create failed");
	for (int i = 0; i < RT_RACERS; i++)
		if (pthread_create(&th[2 + i], NULL, racers[i], s))
			BAIL_OUT("pthread_create failed");
	for (int i = 0; i < 2 + RT_RACERS; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&s->round);
	for (int i = 0; i < 2; i++) {
		bad += s->t[i].bad;
		errors += s->t[i].errors;
		enomem += s->t[i].enomem;
		ops += s->t[i].ops;
	}
	diag("races: %lu tenant ops (%lu -ENOMEM), pswpout %llu, pswpin %llu, reclaimed %lu, "
	     "%lu compactions, %lu pages not migrated, %lu splits (%lu busy), %lu pages moved, "
	     "%lu removals (%lu busy), huge faults %llu, huge splits %llu",
	     ops, enomem, (unsigned long long)(tot(s->m, LV_PSWPOUT) - out0),
	     (unsigned long long)(tot(s->m, LV_PSWPIN) - in0), s->reclaimed, s->compactions,
	     s->not_migrated, s->splits, s->split_busy, s->moved, s->removed, s->remove_busy,
	     (unsigned long long)(tot(s->m, LV_THP_FAULT_ALLOC) - thp0),
	     (unsigned long long)(tot(s->m, LV_THP_SPLIT_PAGE) - split0));
	is(bad, 0, "races: no read ever saw a wrong page");
	is(errors, 0, "races: no access failed but for -ENOMEM");
	ok(tot(s->m, LV_PSWPOUT) - out0 > 0 && tot(s->m, LV_PSWPIN) - in0 > 0,
	   "races: pages went out and came back");
	ok(s->moved > 0 && s->removed > 0, "races: sibling memcgs held tenants' pages and went");
	ok(s->compactions == RT_ROUNDS, "races: every compaction ran");
	ok(tot(s->m, LV_THP_FAULT_ALLOC) - thp0 > 0 && tot(s->m, LV_THP_SPLIT_PAGE) - split0 > 0,
	   "races: huge pages were faulted and split under the racers");
	for (int i = 0; i < 2; i++) {
		s->t[i].d.reported = 0;
		is(dg_bad(&s->t[i].d), 0, "races: tenant %d: every page holds its last write", i);
		ok(lv_memcg_usage(s->t[i].cg) <= RT_LIMIT, "races: tenant %d: usage within limit",
		   i);
	}
	for (unsigned int i = 0; i < s->nr_leftover; i++)
		is(lv_memcg_remove(s->leftover[i]), 0, "races: a busy sibling removed afterwards");
	check_ok(s->m, "races");
	for (int i = 0; i < 2; i++) {
		lv_mm_destroy(s->t[i].d.mm);
		dg_free(&s->t[i].d);
	}
	lv_file_close(s->file);
	lv_lru_add_drain_all(s->m);
	is(lv_memcg_swap_usage(s->parent), 0, "races: destroyed: no swap charged");
	is(dev(s->m, id).used, 0, "races: destroyed: no slot used");
	is(lv_memcg_usage(s->parent), 0, "races: destroyed: no memory charged");
	is(lv_swap_off(s->m, id), 0, "races: swapoff");
	for (int i = 0; i < 2; i++)
		lv_memcg_remove(s->t[i].cg);
	is(lv_memcg_remove(s->parent), 0, "races: memcgs removed");
	finish(s->m, "races");
	free(s);
}

/*
 * One address space, three threads, a barrier per round: one pages everything out, one reads
 * (or rewrites) every page, one turns a new device on and the old one off, so that swap-ins
 * race swap-outs of the same pages and swapoff races both.
 */
#define PAIR_PAGES  128
#define PAIR_ROUNDS 40

struct pair {
	struct lv_machine *m;
	struct digest d;
	pthread_barrier_t b;
	unsigned long bad, errors, swapoffs, swapoff_errors;
	int id;
};

static void *pair_pageout(void *arg)
{
	struct pair *s = arg;

	for (int r = 0; r < PAIR_ROUNDS; r++) {
		pthread_barrier_wait(&s->b);
		pageout(&s->d, 0, PAIR_PAGES);
		pthread_barrier_wait(&s->b);
	}
	return NULL;
}

static void *pair_user(void *arg)
{
	struct pair *s = arg;

	for (int r = 0; r < PAIR_ROUNDS; r++) {
		pthread_barrier_wait(&s->b);
		for (size_t p = 0; p < PAIR_PAGES; p++) {
			int rc = (r & 1) && (p & 1) ? dg_write_part(&s->d, p, p & 2 ? 1 : 0)
						    : dg_read(&s->d, p);

			s->bad += rc == 1;
			s->errors += rc < 0;
		}
		pthread_barrier_wait(&s->b);
	}
	return NULL;
}

static void *pair_swapoff(void *arg)
{
	struct pair *s = arg;

	for (int r = 0; r < PAIR_ROUNDS; r++) {
		pthread_barrier_wait(&s->b);
		if (r % 4 == 3) {
			int next = lv_swap_on(s->m, -1, 2 * MiB, r);

			if (next < 0) {
				s->swapoff_errors++;
			} else {
				s->swapoff_errors += lv_swap_off(s->m, s->id) != 0;
				s->id = next;
				s->swapoffs++;
			}
		}
		pthread_barrier_wait(&s->b);
	}
	return NULL;
}

static void test_same_pages(void)
{
	struct lv_config cfg = swap_config(16);
	struct pair s = { 0 };
	pthread_t th[3];
	struct lv_mm *mm;
	uint64_t out0, in0;

	cfg.nr_cpu_slots = 2;
	s.m = new_machine(&cfg);
	mm = new_mm(s.m, NULL, 0);
	s.id = swapon_or_bail(s.m, -1, 2 * MiB, 0);
	dg_init(&s.d, mm, map_or_bail(mm, PAIR_PAGES * PAGE), PAIR_PAGES, 23);
	dg_write_all(&s.d, "same pages");
	lv_lru_add_drain_all(s.m);
	out0 = tot(s.m, LV_PSWPOUT);
	in0 = tot(s.m, LV_PSWPIN);
	pthread_barrier_init(&s.b, NULL, 3);
	if (pthread_create(&th[0], NULL, pair_pageout, &s) ||
	    pthread_create(&th[1], NULL, pair_user, &s) ||
	    pthread_create(&th[2], NULL, pair_swapoff, &s))
		BAIL_OUT("pthread_create failed");
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&s.b);
	diag("same pages: pswpout %llu, pswpin %llu, %lu swapoffs",
	     (unsigned long long)(tot(s.m, LV_PSWPOUT) - out0),
	     (unsigned long long)(tot(s.m, LV_PSWPIN) - in0), s.swapoffs);
	is(s.bad, 0, "same pages: no read saw a wrong page");
	is(s.errors, 0, "same pages: no access failed");
	is(s.swapoff_errors, 0, "same pages: every swapon and swapoff succeeded");
	is(s.swapoffs, PAIR_ROUNDS / 4, "same pages: %d swapoffs", PAIR_ROUNDS / 4);
	ok(tot(s.m, LV_PSWPIN) - in0 >= PAIR_PAGES, "same pages: pages came back from swap");
	is(dg_bad(&s.d), 0, "same pages: every page holds its last write");
	check_ok(s.m, "same pages");
	is(lv_swap_off(s.m, s.id), 0, "same pages: swapoff");
	is(lv_mm_rss(mm), PAIR_PAGES, "same pages: all mapped");
	is(dg_bad(&s.d), 0, "same pages: intact after swapoff");
	lv_mm_destroy(mm);
	dg_free(&s.d);
	finish(s.m, "same pages");
}

/*
 * swapoff racing swap-out: a pager keeps faulting a range back in and paging it out while
 * swapoff turns the device it swaps to off (a new one on first). A swap-out that took its slot
 * before swapoff stopped the device's allocations and unmaps the page after swapoff's walk
 * passed it must still be brought back. Only the scheduler makes the two overlap at that
 * point, so the race is kept going for a bounded number of swapoffs, in a child (a debug
 * build aborts at the first slot swapoff leaves behind).
 */
#define SO_PAGES    256
#define SO_SWAPOFFS 300

struct so_race {
	struct lv_machine *m;
	struct digest d;
	int stop;
	unsigned long pageouts; /* atomic: the pager is about to page out for the n-th time */
	unsigned long bad, errors;
};

static void *so_pager(void *arg)
{
	struct so_race *s = arg;

	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		for (size_t p = 0; p < SO_PAGES; p++) {
			int rc = p & 1 ? dg_read(&s->d, p) : dg_write(&s->d, p);

			s->bad += rc == 1;
			s->errors += rc < 0;
		}
		__atomic_fetch_add(&s->pageouts, 1, __ATOMIC_RELEASE);
		pageout(&s->d, 0, SO_PAGES);
	}
	return NULL;
}

static void swapoff_race_child(void)
{
	struct lv_config cfg = swap_config(16);
	struct so_race s = { 0 };
	unsigned long failed = 0;
	pthread_t th;
	struct lv_mm *mm;
	int id;

	cfg.nr_cpu_slots = 2;
	s.m = new_machine(&cfg);
	mm = new_mm(s.m, NULL, 0);
	id = lv_swap_on(s.m, -1, 2 * MiB, 0);
	dg_init(&s.d, mm, map_or_bail(mm, SO_PAGES * PAGE), SO_PAGES, 25);
	for (size_t p = 0; p < SO_PAGES; p++)
		failed += dg_write(&s.d, p) != 0;
	if (pthread_create(&th, NULL, so_pager, &s))
		_exit(12);
	for (int i = 1; i <= SO_SWAPOFFS; i++) {
		unsigned long seen = __atomic_load_n(&s.pageouts, __ATOMIC_ACQUIRE);
		int next;

		/* Each swapoff starts while a pageout is under way (or just behind). */
		while (__atomic_load_n(&s.pageouts, __ATOMIC_ACQUIRE) == seen)
			sched_yield();
		next = lv_swap_on(s.m, -1, 2 * MiB, i);

		failed += next < 0 || lv_swap_off(s.m, id) != 0;
		id = next;
	}
	__atomic_store_n(&s.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	failed += lv_swap_off(s.m, id) != 0;
	printf("swapoff race: %d swapoffs, %lu pageouts, %lu failed, %lu bad, %lu errors, "
	       "%zu bad pages\n",
	       SO_SWAPOFFS, s.pageouts, failed, s.bad, s.errors, dg_bad(&s.d));
	fflush(stdout);
	_exit(failed || s.bad || s.errors || dg_bad(&s.d) || lv_mm_rss(mm) != SO_PAGES ? 1 : 0);
}

static void test_swapoff_race(void)
{
	static struct child_run o;

	run_in_child(swapoff_race_child, &o);
	ok(WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0,
	   "swapoff race: every swapoff brought every page back (%.1f s)", o.seconds);
	if (!WIFEXITED(o.status) || WEXITSTATUS(o.status))
		diag("swapoff race: the child %s %d:\n%s",
		     WIFEXITED(o.status) ? "exited with" : "died of signal",
		     WIFEXITED(o.status) ? WEXITSTATUS(o.status) : WTERMSIG(o.status), o.out);
	else
		diag("%s", o.out);
}

int main(void)
{
	swap_io_hook = io_hook;
	/* First: it forks, and a process that has run threads cannot fork under TSan. */
	test_swapoff_race();
	test_api();
	test_roundtrip();
	test_pageout();
	test_pageout_thp();
	test_swap_limit();
	test_swapoff();
	test_devices();
	test_write_error();
	test_read_error();
	test_removed_memcg();
	test_refault();
	test_swappiness();
	test_shapes();
	test_races();
	test_same_pages();
	swap_io_hook = NULL;
	return done_testing();
}
