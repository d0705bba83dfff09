// SPDX-License-Identifier: LGPL-2.1-or-later
/* Swap devices (swapfile.c): lv_swap_on() validation and errors (an allocation failing at each
 * step, nothing kept), lv_swap_info(), allocation until full, clusters coming back when their
 * slots are freed, per-CPU clusters (two CPU slots take different clusters, and one takes the
 * other's when nothing else is left), priorities and turns between equal ones, use counts
 * through duplicate/free/prepare/put, the memcg swap charge and swap_max over a hierarchy,
 * reparenting of the records at a memcg's removal, pins against swapoff, the I/O of a real
 * file and of an in-memory area with injected and real errors, swapoff of an empty device and
 * its upfront refusal, lock statistics, memcg disabled, allocations and frees racing from two
 * threads, and the report of slots left at teardown. Internal API (swap.h), plus wrapped host
 * allocators (see the Makefile). */
#include "internal.h"
#include "swap.h"

#include "lvtest.h"
#include "lvtest_internal.h"

#include <fcntl.h>
#include <sys/mman.h>

#define PAGE	   LV_PAGE_SIZE
#define CLUSTER_SZ (SWAPFILE_CLUSTER * PAGE)
#define NO_ENTRY   0ul

/* ---- wrapped allocators: a failure at the Nth call, and what a failed call kept -------------- */

void *__real_calloc(size_t n, size_t size);
void *__real_aligned_alloc(size_t align, size_t size);
void *__real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
void __real_free(void *p);
int __real_munmap(void *addr, size_t len);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_aligned_alloc(size_t align, size_t size);
void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
void __wrap_free(void *p);
int __wrap_munmap(void *addr, size_t len);

static __thread int fail_countdown; /* N > 0: this thread's Nth allocation from now fails */
static __thread bool tracking;	    /* record what this thread allocates */
static pthread_mutex_t tracked_lock = PTHREAD_MUTEX_INITIALIZER;
static void *tracked[64]; /* tracked_lock: allocations made while tracking, not freed yet */

static bool fail_now(void)
{
	return fail_countdown > 0 && --fail_countdown == 0;
}

static void track(void *p)
{
	if (!tracking || !p)
		return;
	pthread_mutex_lock(&tracked_lock);
	for (int i = 0; i < 64; i++)
		if (!tracked[i]) {
			tracked[i] = p;
			break;
		}
	pthread_mutex_unlock(&tracked_lock);
}

static void untrack(void *p)
{
	pthread_mutex_lock(&tracked_lock);
	for (int i = 0; i < 64; i++)
		if (tracked[i] == p)
			tracked[i] = NULL;
	pthread_mutex_unlock(&tracked_lock);
}

static int nr_tracked(void)
{
	int n = 0;

	pthread_mutex_lock(&tracked_lock);
	for (int i = 0; i < 64; i++)
		n += tracked[i] != NULL;
	pthread_mutex_unlock(&tracked_lock);
	return n;
}

void *__wrap_calloc(size_t n, size_t size)
{
	void *p;

	if (fail_now()) {
		errno = ENOMEM;
		return NULL;
	}
	p = __real_calloc(n, size);
	track(p);
	return p;
}

void *__wrap_aligned_alloc(size_t align, size_t size)
{
	void *p;

	if (fail_now()) {
		errno = ENOMEM;
		return NULL;
	}
	p = __real_aligned_alloc(align, size);
	track(p);
	return p;
}

void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *p;

	if (fail_now()) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	p = __real_mmap(addr, len, prot, flags, fd, off);
	if (p != MAP_FAILED)
		track(p);
	return p;
}

void __wrap_free(void *p)
{
	if (p)
		untrack(p);
	__real_free(p);
}

int __wrap_munmap(void *addr, size_t len)
{
	untrack(addr);
	return __real_munmap(addr, len);
}

/* ---- helpers --------------------------------------------------------------------------------- */

static struct lv_config swap_config(void)
{
	struct lv_config cfg = small_config();

	return cfg;
}

static int swapon_or_bail(struct lv_machine *m, int fd, size_t size, int prio)
{
	int id = lv_swap_on(m, fd, size, prio);

	if (id < 0)
		BAIL_OUT("lv_swap_on(%d, %zu, %d): %s", fd, size, prio, strerror(-id));
	return id;
}

static size_t used_slots(struct lv_machine *m, int id)
{
	struct lv_swap_info info;

	return lv_swap_info(m, id, &info) ? (size_t)-1 : info.used;
}

/* alloc_n - @n slots for @f into @e (stopping at the first failure). Return: how many. */
static unsigned long alloc_n(struct lv_folio *f, swp_entry_t *e, unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++) {
		e[i] = folio_alloc_swap(f);
		if (!e[i].val)
			break;
	}
	return i;
}

static void put_n(const swp_entry_t *e, unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		put_swap_folio(e[i]);
}

static unsigned long cluster_of(swp_entry_t e)
{
	return swp_offset(e) / SWAPFILE_CLUSTER;
}

/* pin_to - pin the calling thread to @cpu. Return: false if it cannot run there. */
static bool pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return !pthread_setaffinity_np(pthread_self(), sizeof(set), &set) && sched_getcpu() == cpu;
}

/*
 * two_cpus - two allowed CPUs of different parity (the slots of a two-slot machine), or false.
 * @allowed receives the affinity to restore.
 */
static bool two_cpus(int *self, int *other, cpu_set_t *allowed)
{
	*self = *other = -1;
	if (sched_getaffinity(0, sizeof(*allowed), allowed))
		BAIL_OUT("sched_getaffinity: %s", strerror(errno));
	for (int c = 0; c < CPU_SETSIZE && *other < 0; c++)
		if (CPU_ISSET(c, allowed)) {
			if (*self < 0)
				*self = c;
			else if (c % 2 != *self % 2)
				*other = c;
		}
	return *other >= 0;
}

struct remote_alloc {
	int cpu;
	struct lv_folio *folio;
	unsigned long n;
	swp_entry_t e[4];
	bool pinned;
};

static void *remote_alloc_thread(void *p)
{
	struct remote_alloc *ra = p;

	ra->pinned = pin_to(ra->cpu);
	if (ra->pinned)
		alloc_n(ra->folio, ra->e, ra->n);
	return NULL;
}

/* remote_alloc - @n slots for @f allocated by a thread running on @cpu. */
static void remote_alloc(struct remote_alloc *ra, int cpu, struct lv_folio *f, unsigned long n)
{
	pthread_t t;

	*ra = (struct remote_alloc){ .cpu = cpu, .folio = f, .n = n };
	if (pthread_create(&t, NULL, remote_alloc_thread, ra))
		BAIL_OUT("pthread_create");
	pthread_join(t, NULL);
	if (!ra->pinned)
		BAIL_OUT("cannot run on CPU %d", cpu);
}

/* ---- swapon and lv_swap_info ----------------------------------------------------------------- */

static void test_swapon_errors(void)
{
	struct lv_config cfg = swap_config(), meta_cfg = swap_config();
	struct lv_machine *m = new_machine(&cfg), *meta, *m2;
	struct lv_swap_info info;
	char path[] = "/tmp/lv-swap-XXXXXX";
	int ids[LV_MAX_SWAPFILES], rdonly, fds[2], id;
	long nr;

	meta_cfg.metadata_only = true;
	meta = new_machine(&meta_cfg);
	is(lv_swap_on(NULL, -1, CLUSTER_SZ, 0), -EINVAL, "NULL machine -> -EINVAL");
	is(lv_swap_on(meta, -1, CLUSTER_SZ, 0), -EINVAL, "metadata-only machine -> -EINVAL");
	is(lv_swap_on(m, -2, CLUSTER_SZ, 0), -EINVAL, "fd -2 -> -EINVAL");
	is(lv_swap_on(m, -1, CLUSTER_SZ - 1, 0), -EINVAL, "below one cluster -> -EINVAL");
	is(lv_swap_on(m, -1, 0, 0), -EINVAL, "size 0 -> -EINVAL");
	rdonly = mkstemp(path);
	if (rdonly < 0)
		BAIL_OUT("mkstemp: %s", strerror(errno));
	close(rdonly);
	rdonly = open(path, O_RDONLY);
	unlink(path);
	is(lv_swap_on(m, rdonly, CLUSTER_SZ, 0), -EINVAL, "a file open read-only -> -EINVAL");
	close(rdonly);
	if (pipe(fds))
		BAIL_OUT("pipe");
	is(lv_swap_on(m, fds[0], CLUSTER_SZ, 0), -EINVAL, "a pipe -> -EINVAL");
	close(fds[0]);
	close(fds[1]);
	is(lv_swap_on(m, 1000, CLUSTER_SZ, 0), -EINVAL, "a closed fd -> -EINVAL");
	is(get_nr_swap_pages(m), 0, "nothing was kept: no free slot");

	is(lv_swap_info(m, 0, &info), -EINVAL, "info of no device -> -EINVAL");
	is(lv_swap_info(m, -1, &info), -EINVAL, "info of id -1 -> -EINVAL");
	is(lv_swap_info(m, LV_MAX_SWAPFILES, &info), -EINVAL, "info of id MAX -> -EINVAL");
	is(lv_swap_off(m, 0), -EINVAL, "swapoff of no device -> -EINVAL");
	is(lv_swap_off(m, LV_MAX_SWAPFILES), -EINVAL, "swapoff of id MAX -> -EINVAL");
	is(lv_swap_off(NULL, 0), -EINVAL, "swapoff NULL machine -> -EINVAL");

	id = swapon_or_bail(m, -1, 3 * CLUSTER_SZ + PAGE + 100, 7);
	is(lv_swap_info(m, id, NULL), -EINVAL, "info NULL -> -EINVAL");
	is(lv_swap_info(m, id, &info), 0, "info of a device");
	is(info.slots, 3 * SWAPFILE_CLUSTER - 1, "rounded down to clusters, offset 0 unused");
	is(info.used, 0, "nothing used");
	is(info.prio, 7, "its priority");
	ok(info.in_memory, "in memory");
	is(info.write_errors + info.read_errors, 0, "no errors");
	is(get_nr_swap_pages(m), 3 * SWAPFILE_CLUSTER - 1, "nr_swap_pages counts its slots");
	is(lv_swap_info(meta, id, &info), -EINVAL, "another machine does not see it");
	is(lv_swap_off(meta, id), -EINVAL, "nor turn it off");
	is(lv_swap_off(m, id), 0, "swapoff of the empty device");
	is(lv_swap_info(m, id, &info), -EINVAL, "gone after swapoff");
	is(lv_swap_off(m, id), -EINVAL, "a second swapoff -> -EINVAL");
	is(get_nr_swap_pages(m), 0, "no free slots left");

	/* The device limit: types are process-wide. */
	for (int i = 0; i < LV_MAX_SWAPFILES; i++)
		ids[i] = lv_swap_on(m, -1, CLUSTER_SZ, i);
	nr = 0;
	for (int i = 0; i < LV_MAX_SWAPFILES; i++)
		nr += ids[i] >= 0;
	is(nr, LV_MAX_SWAPFILES, "%d devices on", LV_MAX_SWAPFILES);
	is(lv_swap_on(m, -1, CLUSTER_SZ, 0), -EBUSY, "one more -> -EBUSY");
	m2 = new_machine(&cfg);
	is(lv_swap_on(m2, -1, CLUSTER_SZ, 0), -EBUSY, "on any machine of the process");
	finish(m2, "a second machine");
	is(get_nr_swap_pages(m), LV_MAX_SWAPFILES * (SWAPFILE_CLUSTER - 1), "all counted");
	check_ok(m, "32 devices");
	nr = 0;
	for (int i = 0; i < LV_MAX_SWAPFILES; i++)
		nr += ids[i] >= 0 && lv_swap_off(m, ids[i]) == 0;
	is(nr, LV_MAX_SWAPFILES, "all turned off");
	id = lv_swap_on(m, -1, CLUSTER_SZ, 0);
	ok(id >= 0, "a type is free again");
	lv_swap_off(m, id);
	finish(meta, "metadata-only machine");
	finish(m, "swapon errors");
}

static void test_swapon_nomem(void)
{
	struct lv_config cfg = swap_config();
	struct lv_machine *m = new_machine(&cfg);
	int id = -ENOMEM, n, failures = 0, leaks = 0, wrong = 0;

	for (n = 1; n < 64 && id < 0; n++) {
		tracking = true;
		fail_countdown = n;
		id = lv_swap_on(m, -1, 4 * CLUSTER_SZ, 0);
		fail_countdown = 0;
		tracking = false;
		if (id >= 0)
			break;
		failures++;
		wrong += id != -ENOMEM;
		rcu_barrier_lv(); /* the swap cache tree of a failed swapon is freed by RCU */
		leaks += nr_tracked() != 0;
		wrong += get_nr_swap_pages(m) != 0;
	}
	ok(failures >= 6, "an allocation failed at each of %d steps", failures);
	is(wrong, 0, "each failure returned -ENOMEM and left no free slot");
	is(leaks, 0, "each failure kept no allocation");
	ok(id >= 0, "then it succeeded");
	is(get_nr_swap_pages(m), 4 * SWAPFILE_CLUSTER - 1, "with its slots counted once");
	check_ok(m, "after failed swapons");
	is(lv_swap_off(m, id), 0, "swapoff");
	rcu_barrier_lv();
	finish(m, "swapon -ENOMEM");
}

/* ---- allocation ------------------------------------------------------------------------------ */

static void test_alloc_until_full(void)
{
	struct lv_config cfg = swap_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *root = lv_memcg_root(m);
	struct lv_folio *f = alloc_or_bail(m, 0, 0, NULL, 0);
	static swp_entry_t e[SWAPFILE_CLUSTER];
	unsigned long n, bad = 0, seen_zero = 0;
	unsigned char seen[SWAPFILE_CLUSTER] = { 0 };
	int id;

	ok(!folio_alloc_swap(f).val, "no device: no slot");
	id = swapon_or_bail(m, -1, CLUSTER_SZ, 0);
	n = alloc_n(f, e, SWAPFILE_CLUSTER);
	is(n, SWAPFILE_CLUSTER - 1, "511 slots, then none");
	for (unsigned long i = 0; i < n; i++) {
		if (swp_type(e[i]) != (unsigned int)id || !swp_offset(e[i]) ||
		    swp_offset(e[i]) >= SWAPFILE_CLUSTER || seen[swp_offset(e[i])]++)
			bad++;
		if (swap_map_value(e[i]) != SWAP_HAS_CACHE)
			bad++;
	}
	seen_zero = seen[0];
	is(bad, 0, "distinct offsets 1..511 of the device, each SWAP_HAS_CACHE");
	is(seen_zero, 0, "offset 0 never handed out");
	is(used_slots(m, id), SWAPFILE_CLUSTER - 1, "info: all used");
	is(get_nr_swap_pages(m), 0, "nr_swap_pages 0");
	is(lv_memcg_swap_usage(root), SWAPFILE_CLUSTER - 1, "root usage: slots in use");
	is(nstat(m, LV_NR_SWAP), SWAPFILE_CLUSTER - 1, "node LV_NR_SWAP");
	is(lv_memcg_stat(root, LV_NR_SWAP), SWAPFILE_CLUSTER - 1, "root LV_NR_SWAP");
	check_ok(m, "full device");
	put_n(e, n);
	is(used_slots(m, id), 0, "all freed");
	is(get_nr_swap_pages(m), SWAPFILE_CLUSTER - 1, "nr_swap_pages back");
	is(swap_map_value(e[0]), 0, "a freed slot's byte is 0");
	n = alloc_n(f, e, SWAPFILE_CLUSTER);
	is(n, SWAPFILE_CLUSTER - 1, "all of them can be had again");
	put_n(e, n);
	check_ok(m, "emptied device");
	is(lv_swap_off(m, id), 0, "swapoff");
	lv_folio_put(f);
	finish(m, "alloc until full");
}

static void test_clusters_return(void)
{
	struct lv_config cfg = swap_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_folio *f = alloc_or_bail(m, 0, 0, NULL, 0);
	static swp_entry_t e[3 * SWAPFILE_CLUSTER];
	unsigned long n, in1 = 0, mixed = 0;
	swp_entry_t x;
	int id = swapon_or_bail(m, -1, 3 * CLUSTER_SZ, 0);

	/* One CPU slot: clusters 0 and 1 filled in order, then cluster 2 taken for one slot. */
	n = alloc_n(f, e, 2 * SWAPFILE_CLUSTER);
	is(n, 2 * SWAPFILE_CLUSTER, "1024 slots");
	for (unsigned long i = 0; i < n; i++)
		mixed += cluster_of(e[i]) != (i < SWAPFILE_CLUSTER - 1 ? 0 : i < n - 1 ? 1 : 2);
	is(mixed, 0, "cluster 0 first, then cluster 1, then cluster 2");
	/* Empty cluster 1 (full, so on no list): it goes to the free list. */
	put_n(e + SWAPFILE_CLUSTER - 1, SWAPFILE_CLUSTER);
	check_ok(m, "cluster 1 emptied");
	/* Empty cluster 2, which this CPU slot owns: it stays the slot's. */
	put_swap_folio(e[n - 1]);
	check_ok(m, "the owned cluster emptied");
	x = folio_alloc_swap(f);
	is(cluster_of(x), 2, "the next slot comes from the CPU slot's cluster");
	e[0] = x;
	n = 1 + alloc_n(f, e + 1, SWAPFILE_CLUSTER - 1);
	is(n, SWAPFILE_CLUSTER, "cluster 2 filled");
	for (unsigned long i = 0; i < n; i++)
		in1 += cluster_of(e[i]) == 1;
	is(in1, 0, "all of it from cluster 2");
	x = folio_alloc_swap(f);
	is(cluster_of(x), 1, "then the emptied cluster 1 is taken from the free list");
	put_swap_folio(x);
	put_n(e, n);
	/* Cluster 0 is still full: free it too (offsets 1..511 are what is left). */
	for (unsigned long off = 1; off < SWAPFILE_CLUSTER; off++)
		put_swap_folio(swp_entry((unsigned int)id, off));
	is(used_slots(m, id), 0, "all freed");
	check_ok(m, "clusters returned");
	is(lv_swap_off(m, id), 0, "swapoff");
	lv_folio_put(f);
	finish(m, "clusters return");
}

static void test_percpu_clusters(void)
{
	struct lv_config cfg = swap_config();
	struct remote_alloc ra;
	struct lv_machine *m;
	struct lv_folio *f;
	swp_entry_t a, b;
	cpu_set_t allowed;
	int self, other, id;

	if (!two_cpus(&self, &other, &allowed)) {
		skip("per-CPU clusters: needs two CPUs of different parity");
		return;
	}
	if (!pin_to(self))
		BAIL_OUT("cannot pin to CPU %d", self);
	cfg.nr_cpu_slots = 2;
	m = new_machine(&cfg);
	f = alloc_or_bail(m, 0, 0, NULL, 0);
	id = swapon_or_bail(m, -1, 2 * CLUSTER_SZ, 0);
	a = folio_alloc_swap(f);
	remote_alloc(&ra, other, f, 2);
	b = ra.e[0];
	ok(a.val && b.val && ra.e[1].val, "both CPU slots got slots");
	isnt(cluster_of(a), cluster_of(b), "from different clusters");
	is(cluster_of(ra.e[1]), cluster_of(b), "each CPU slot keeps to its cluster");
	is(swp_offset(ra.e[1]), swp_offset(b) + 1, "taking the next offset");
	check_ok(m, "two CPU slots' clusters");
	put_swap_folio(a);
	put_n(ra.e, 2);
	is(lv_swap_off(m, id), 0, "swapoff");

	/* One cluster, owned by this CPU slot: the other CPU slot takes it over. */
	id = swapon_or_bail(m, -1, CLUSTER_SZ, 0);
	a = folio_alloc_swap(f);
	remote_alloc(&ra, other, f, 1);
	ok(a.val && ra.e[0].val, "the other CPU slot still gets a slot");
	is(cluster_of(ra.e[0]), cluster_of(a), "from the first slot's cluster");
	check_ok(m, "a cluster taken over");
	b = folio_alloc_swap(f);
	ok(b.val, "and the first CPU slot then takes it back");
	put_swap_folio(a);
	put_swap_folio(b);
	put_swap_folio(ra.e[0]);
	check_ok(m, "one cluster, two CPU slots");
	is(lv_swap_off(m, id), 0, "swapoff");
	lv_folio_put(f);
	finish(m, "per-CPU clusters");
	pthread_setaffinity_np(pthread_self(), sizeof(allowed), &allowed);
}

static void test_priorities(void)
{
	struct lv_config cfg = swap_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_folio *f = alloc_or_bail(m, 0, 0, NULL, 0);
	static swp_entry_t e[3 * SWAPFILE_CLUSTER];
	int hi = swapon_or_bail(m, -1, CLUSTER_SZ, 10);
	int lo1 = swapon_or_bail(m, -1, CLUSTER_SZ, 5);
	int lo2 = swapon_or_bail(m, -1, CLUSTER_SZ, 5);
	unsigned long n, not_hi = 0, same = 0, on1 = 0, on2 = 0;

	n = alloc_n(f, e, SWAPFILE_CLUSTER - 1);
	for (unsigned long i = 0; i < n; i++)
		not_hi += swp_type(e[i]) != (unsigned int)hi;
	is(not_hi, 0, "the highest priority device is filled first");
	n += alloc_n(f, e + n, 20);
	for (unsigned long i = SWAPFILE_CLUSTER - 1; i < n; i++) {
		on1 += swp_type(e[i]) == (unsigned int)lo1;
		on2 += swp_type(e[i]) == (unsigned int)lo2;
		same += i > SWAPFILE_CLUSTER - 1 && swp_type(e[i]) == swp_type(e[i - 1]);
	}
	is(on1 + on2, 20, "then the two of equal priority");
	is(same, 0, "taking turns");
	is(on1, 10, "half each");
	n += alloc_n(f, e + n, 3 * SWAPFILE_CLUSTER - n);
	is(n, 3 * (SWAPFILE_CLUSTER - 1), "all slots of all devices, then none");
	is(used_slots(m, lo1) + used_slots(m, lo2), 2 * (SWAPFILE_CLUSTER - 1), "both full");
	check_ok(m, "three full devices");
	put_n(e, n);
	is(get_nr_swap_pages(m), 3 * (SWAPFILE_CLUSTER - 1), "all free again");
	is(lv_swap_off(m, lo1), 0, "swapoff lo1");
	is(get_nr_swap_pages(m), 2 * (SWAPFILE_CLUSTER - 1), "its slots are not counted");
	e[0] = folio_alloc_swap(f);
	is(swp_type(e[0]), hi, "allocation goes on");
	put_swap_folio(e[0]);
	is(lv_swap_off(m, hi), 0, "swapoff hi");
	is(lv_swap_off(m, lo2), 0, "swapoff lo2");
	lv_folio_put(f);
	finish(m, "priorities");
}

/* ---- use counts ------------------------------------------------------------------------------ */

static void test_swap_map(void)
{
	struct lv_config cfg = swap_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_folio *f = alloc_or_bail(m, 0, 0, NULL, 0);
	int id = swapon_or_bail(m, -1, CLUSTER_SZ, 0);
	swp_entry_t e = folio_alloc_swap(f), bad = swp_entry((unsigned int)id, SWAPFILE_CLUSTER);

	is(swap_map_value(e), SWAP_HAS_CACHE, "allocated: SWAP_HAS_CACHE");
	is(swp_swapcount(e), 0, "no page table user");
	is(swapcache_prepare(e), -EEXIST, "prepare: the cache has it -> -EEXIST");
	swap_duplicate(e);
	is(swap_map_value(e), SWAP_HAS_CACHE | 1, "duplicate: one user");
	is(swp_swapcount(e), 1, "swapcount 1");
	put_swap_folio(e);
	is(swap_map_value(e), 1, "the cache let go: the user keeps it");
	is(used_slots(m, id), 1, "still in use");
	is(swapcache_prepare(e), 0, "prepare claims it for the cache");
	is(swap_map_value(e), SWAP_HAS_CACHE | 1, "SWAP_HAS_CACHE again");
	is(swapcache_prepare(e), -EEXIST, "a second prepare -> -EEXIST");
	swap_free(e);
	is(swap_map_value(e), SWAP_HAS_CACHE, "the user went");
	is(used_slots(m, id), 1, "still in use (the cache)");
	put_swap_folio(e);
	is(swap_map_value(e), 0, "freed");
	is(used_slots(m, id), 0, "nothing in use");
	is(swapcache_prepare(e), -ENOENT, "prepare of a free slot -> -ENOENT");
	is(swapcache_prepare(bad), -ENOENT, "prepare past the device -> -ENOENT");
	is(swap_map_value(bad), 0, "no byte past the device");
	is(swap_map_value(swp_entry(LV_MAX_SWAPFILES - 1, 1)), 0, "nor on a type not in use");

	/* Freed through the user's side last. */
	e = folio_alloc_swap(f);
	swap_duplicate(e);
	put_swap_folio(e);
	swap_free(e);
	is(swap_map_value(e), 0, "freed by the last user");
	is(used_slots(m, id), 0, "nothing in use");
	ok(get_swap_device(m, swp_entry((unsigned int)id, 0)) == NULL, "no pin on offset 0");
	ok(get_swap_device(m, bad) == NULL, "no pin past the device");
	ok(get_swap_device(m, swp_entry(LV_MAX_SWAPFILES - 1, 1)) == NULL,
	   "no pin on a type not in use");
	ok(swap_address_space(e) != NULL, "the device has a swap cache tree");
	check_ok(m, "use counts");
	is(lv_swap_off(m, id), 0, "swapoff");
	lv_folio_put(f);
	finish(m, "use counts");
}

/* ---- memcg swap accounting ------------------------------------------------------------------- */

static void test_charge(void)
{
	struct lv_config cfg = swap_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *root = lv_memcg_root(m), *p = new_memcg(m, NULL, "p");
	struct lv_memcg *c = new_memcg(m, p, "c"), *c2 = new_memcg(m, p, "c2");
	struct lv_folio *fc = alloc_or_bail(m, 0, 0, c, 0), *fc2 = alloc_or_bail(m, 0, 0, c2, 0);
	struct lv_folio *froot = alloc_or_bail(m, 0, 0, NULL, 0);
	int id = swapon_or_bail(m, -1, CLUSTER_SZ, 0);
	swp_entry_t e[8], r;
	unsigned long n;

	is(lv_memcg_set_swappiness(NULL, 10), -EINVAL, "swappiness of NULL -> -EINVAL");
	is(lv_memcg_set_swappiness(c, 201), -EINVAL, "swappiness 201 -> -EINVAL");
	is(mem_cgroup_swappiness(m, c), 60, "c uses the machine's swappiness");
	is(lv_memcg_set_swappiness(root, 30), 0, "the root's sets the machine's");
	is(mem_cgroup_swappiness(m, NULL), 30, "the machine's is 30");
	is(mem_cgroup_swappiness(m, c), 30, "and c follows it");
	is(lv_memcg_set_swappiness(c, 100), 0, "c: its own");
	is(mem_cgroup_swappiness(m, c), 100, "c uses its own");
	is(mem_cgroup_swappiness(m, p), 30, "p still the machine's");
	is(lv_memcg_set_swap_max(root, 1), -EINVAL, "no swap limit on the root");
	is(lv_memcg_set_swap_max(NULL, 1), -EINVAL, "nor on NULL");
	is(lv_memcg_set_swap_max(p, 3), 0, "p: swap.max 3");
	is(mem_cgroup_get_nr_swap_pages(c), 3, "c may take 3 slots");
	n = alloc_n(fc, e, 8);
	is(n, 3, "c gets 3 slots, then none");
	is(lv_memcg_swap_usage(c), 3, "c usage 3");
	is(lv_memcg_swap_usage(p), 3, "p usage 3 (hierarchical)");
	is(lv_memcg_stat(c, LV_NR_SWAP), 3, "c LV_NR_SWAP");
	is(lv_memcg_stat(p, LV_NR_SWAP), 3, "p LV_NR_SWAP");
	is(mem_cgroup_get_nr_swap_pages(c), 0, "c may take none");
	is(mem_cgroup_get_nr_swap_pages(c2), 0, "nor may its sibling");
	ok(!folio_alloc_swap(fc2).val, "the sibling is refused at the parent's limit");
	is(lv_memcg_swap_usage(c2), 0, "and nothing was left charged");
	is(lv_memcg_swap_usage(p), 3, "p still 3");
	r = folio_alloc_swap(froot);
	ok(r.val, "the root's pages are not limited");
	is(lv_memcg_swap_usage(root), 4, "root usage: every slot in use");
	is(nstat(m, LV_NR_SWAP), 4, "node LV_NR_SWAP");
	is(used_slots(m, id), 4, "info: 4 used");
	put_swap_folio(e[0]);
	is(lv_memcg_swap_usage(c), 2, "a free uncharges c");
	is(lv_memcg_swap_usage(p), 2, "and p");
	is(mem_cgroup_get_nr_swap_pages(c2), 1, "c2 may take one now");
	e[0] = folio_alloc_swap(fc2);
	ok(e[0].val, "c2 gets it");
	is(lv_memcg_swap_usage(c2), 1, "c2 usage 1");
	is(lv_memcg_swap_usage(p), 3, "p 3");
	check_ok(m, "charged slots");
	is(lv_memcg_set_swap_max(p, SIZE_MAX), 0, "p: no limit");
	is(lv_memcg_set_swap_max(c, 0), 0, "c: swap.max 0");
	ok(!folio_alloc_swap(fc).val, "c keeps its pages out of swap");
	is(mem_cgroup_get_nr_swap_pages(c), 0, "c may take none");
	is(mem_cgroup_get_nr_swap_pages(c2), SWAPFILE_CLUSTER - 1 - 4, "c2: the free slots");
	is(mem_cgroup_get_nr_swap_pages(NULL), SWAPFILE_CLUSTER - 1 - 4, "NULL: the free slots");
	/* A charge that finds no room on any device is undone. */
	{
		static swp_entry_t rest[SWAPFILE_CLUSTER];
		unsigned long k = alloc_n(fc2, rest, SWAPFILE_CLUSTER);

		is(k, SWAPFILE_CLUSTER - 1 - 4, "c2 fills the device");
		is(lv_memcg_swap_usage(c2), k + 1, "c2 charged for each");
		ok(!folio_alloc_swap(fc2).val, "the device is full");
		is(lv_memcg_swap_usage(c2), k + 1, "the failed allocation left no charge");
		is(lv_memcg_swap_usage(p), k + 3, "nor on the parent");
		put_n(rest, k);
	}
	put_n(e, n);
	put_swap_folio(r);
	is(lv_memcg_swap_usage(p), 0, "all uncharged");
	is(lv_memcg_swap_usage(root), 0, "root usage 0");
	check_ok(m, "uncharged");
	is(lv_swap_off(m, id), 0, "swapoff");
	lv_folio_put(fc);
	lv_folio_put(fc2);
	lv_folio_put(froot);
	is(lv_memcg_remove(c), 0, "remove c");
	is(lv_memcg_remove(c2), 0, "remove c2");
	is(lv_memcg_remove(p), 0, "remove p");
	finish(m, "swap charge");
}

static struct lv_machine *hook_machine;
static swp_entry_t hook_entry;
static struct lv_memcg *hook_seen;

static void lookup_while_dying(struct lv_memcg *memcg, int err)
{
	(void)memcg;
	if (!err)
		hook_seen = lookup_swap_cgroup(hook_machine, hook_entry);
}

static void test_reparent(void)
{
	struct lv_config cfg = swap_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *p = new_memcg(m, NULL, "p"), *c = new_memcg(m, p, "c");
	struct lv_memcg *g = new_memcg(m, c, "g"), *got;
	struct lv_folio *f = alloc_or_bail(m, 0, 0, g, 0);
	int id = swapon_or_bail(m, -1, CLUSTER_SZ, 0);
	swp_entry_t e[2], free_e = swp_entry((unsigned int)id, 100);

	is(alloc_n(f, e, 2), 2, "g: two slots");
	got = lookup_swap_cgroup(m, e[0]);
	ok(got == g, "the slot is g's");
	css_put(got);
	got = lookup_swap_cgroup(m, free_e);
	ok(got == lv_memcg_root(m), "a free slot: the root");
	css_put(got);
	lv_folio_put(f); /* its pages go; its swap stays charged */
	is(lv_memcg_usage(g), 0, "g has no pages");
	is(lv_memcg_swap_usage(g), 2, "g: 2 slots");

	/* While g's removal runs (dying), a lookup already answers its parent. */
	hook_machine = m;
	hook_entry = e[0];
	memcg_remove_hook = lookup_while_dying;
	is(lv_memcg_remove(g), 0, "remove g");
	memcg_remove_hook = NULL;
	ok(hook_seen == c, "a dying memcg's slot: its parent");
	if (hook_seen)
		css_put(hook_seen);
	got = lookup_swap_cgroup(m, e[0]);
	ok(got == c, "after the removal: recharged to c");
	css_put(got);
	is(lv_memcg_swap_usage(c), 2, "c's usage already counted them");
	is(lv_memcg_swap_usage(p), 2, "p too");
	check_ok(m, "reparented records");
	is(lv_memcg_remove(c), 0, "remove c");
	got = lookup_swap_cgroup(m, e[1]);
	ok(got == p, "two levels up");
	css_put(got);
	is(lv_memcg_swap_usage(p), 2, "p keeps the count");
	put_swap_folio(e[0]);
	is(lv_memcg_swap_usage(p), 1, "a free uncharges the new owner");
	put_swap_folio(e[1]);
	is(lv_memcg_swap_usage(p), 0, "all uncharged");
	check_ok(m, "reparented slots freed");
	is(lv_swap_off(m, id), 0, "swapoff");
	is(lv_memcg_remove(p), 0, "remove p");
	finish(m, "reparent");
}

static void test_memcg_disabled(void)
{
	struct lv_config cfg = swap_config();
	struct lv_machine *m;
	struct lv_folio *f;
	swp_entry_t e[4];
	int id;

	cfg.memcg_disabled = true;
	m = new_machine(&cfg);
	f = alloc_or_bail(m, 0, 0, NULL, 0);
	id = swapon_or_bail(m, -1, CLUSTER_SZ, 0);
	is(alloc_n(f, e, 4), 4, "slots without memcg");
	ok(lookup_swap_cgroup(m, e[0]) == NULL, "no memcg to look up");
	is(nstat(m, LV_NR_SWAP), 4, "node LV_NR_SWAP");
	is(mem_cgroup_get_nr_swap_pages(NULL), SWAPFILE_CLUSTER - 1 - 4, "free slots");
	check_ok(m, "memcg disabled");
	put_n(e, 4);
	is(lv_swap_off(m, id), 0, "swapoff");
	lv_folio_put(f);
	finish(m, "memcg disabled");
}

/* ---- I/O ------------------------------------------------------------------------------------- */

static int fail_write, fail_read;

static int io_hook(swp_entry_t e, bool write)
{
	(void)e;
	return write ? fail_write : fail_read;
}

static void fill(unsigned char *buf, unsigned int seed)
{
	for (size_t i = 0; i < PAGE; i++)
		buf[i] = pat(i, seed);
}

/* io_round - write and read back one slot of device @id; the device's errors after. */
static void io_round(struct lv_machine *m, int id, const char *what)
{
	struct lv_memcg *memcg = new_memcg(m, NULL, "io");
	struct lruvec *lruvec = mem_cgroup_lruvec(memcg, m->nodes[0]);
	struct lv_folio *f = alloc_or_bail(m, 0, 0, memcg, 0);
	static unsigned char out[PAGE], in[PAGE];
	struct lv_swap_info info;
	swp_entry_t e = folio_alloc_swap(f), e2 = folio_alloc_swap(f);

	fill(out, 1);
	is(swap_writepage(e, out, lruvec), 0, "%s: write", what);
	is(swap_readpage(e, in, lruvec), 0, "%s: read", what);
	ok(!memcmp(in, out, PAGE), "%s: the same bytes", what);
	fill(out, 2);
	is(swap_writepage(e2, out, NULL), 0, "%s: write a neighbour", what);
	is(swap_readpage(e, in, NULL), 0, "%s: read the first again", what);
	fill(out, 1);
	ok(!memcmp(in, out, PAGE), "%s: its bytes untouched", what);
	is(lv_memcg_stat(memcg, LV_PSWPOUT), 1, "%s: pswpout counted", what);
	is(lv_memcg_stat(memcg, LV_PSWPIN), 1, "%s: pswpin counted", what);

	swap_io_hook = io_hook;
	fail_write = 1;
	is(swap_writepage(e, out, lruvec), -EIO, "%s: injected write error -> -EIO", what);
	fail_write = 0;
	fail_read = 1;
	is(swap_readpage(e, in, lruvec), -EIO, "%s: injected read error -> -EIO", what);
	fail_read = 0;
	swap_io_hook = NULL;
	is(lv_memcg_stat(memcg, LV_SWAP_WRITE_ERROR), 1, "%s: swap_write_error", what);
	is(lv_memcg_stat(memcg, LV_SWAP_READ_ERROR), 1, "%s: swap_read_error", what);
	is(lv_memcg_stat(memcg, LV_PSWPOUT), 1, "%s: a failed write is no pswpout", what);
	is(lv_swap_info(m, id, &info), 0, "%s: info", what);
	is(info.write_errors, 1, "%s: info counts the write error", what);
	is(info.read_errors, 1, "%s: and the read error", what);
	is(swap_readpage(e, in, lruvec), 0, "%s: the data survived the errors", what);
	ok(!memcmp(in, out, PAGE), "%s: same bytes", what);
	put_swap_folio(e);
	put_swap_folio(e2);
	lv_folio_put(f);
	is(lv_memcg_remove(memcg), 0, "%s: memcg removed", what);
}

static void test_io(void)
{
	struct lv_config cfg = swap_config();
	struct lv_machine *m = new_machine(&cfg);
	char path[] = "/tmp/lv-swap-XXXXXX";
	static unsigned char buf[PAGE], want[PAGE];
	struct lv_folio *f = alloc_or_bail(m, 0, 0, NULL, 0);
	struct lv_swap_info info;
	int fd = mkstemp(path), id;
	swp_entry_t e;

	if (fd < 0)
		BAIL_OUT("mkstemp: %s", strerror(errno));
	unlink(path);
	if (ftruncate(fd, 2 * CLUSTER_SZ))
		BAIL_OUT("ftruncate");
	id = swapon_or_bail(m, fd, 2 * CLUSTER_SZ, 0);
	is(lv_swap_info(m, id, &info), 0, "file device: info");
	ok(!info.in_memory, "not in memory");
	io_round(m, id, "file");
	e = folio_alloc_swap(f);
	fill(want, 9);
	is(swap_writepage(e, want, NULL), 0, "file: write");
	is(pread(fd, buf, PAGE, (off_t)(swp_offset(e) * PAGE)), (ssize_t)PAGE, "the file has it");
	ok(!memcmp(buf, want, PAGE), "at offset * 4096");
	put_swap_folio(e);
	is(lv_swap_off(m, id), 0, "file device: swapoff");

	/* The file is not extended: a read past its end fails. */
	if (ftruncate(fd, 0))
		BAIL_OUT("ftruncate");
	id = swapon_or_bail(m, fd, CLUSTER_SZ, 0);
	e = folio_alloc_swap(f);
	is(swap_readpage(e, buf, NULL), -EIO, "a read past the end of the file -> -EIO");
	is(lv_swap_info(m, id, &info), 0, "info");
	is(info.read_errors, 1, "counted");
	put_swap_folio(e);
	is(lv_swap_off(m, id), 0, "swapoff");
	close(fd);

	id = swapon_or_bail(m, -1, 2 * CLUSTER_SZ, 0);
	io_round(m, id, "memory");
	is(lv_swap_off(m, id), 0, "in-memory device: swapoff");
	lv_folio_put(f);
	finish(m, "I/O");
}

/* resident_kib - this process's resident memory. */
static long resident_kib(void)
{
	long pages = -1, rss = -1;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f)
		return -1;
	if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
		rss = -1;
	fclose(f);
	return rss < 0 ? -1 : rss * (sysconf(_SC_PAGESIZE) / 1024);
}

static void test_lazy_area(void)
{
	struct lv_config cfg = swap_config();
	struct lv_machine *m = new_machine(&cfg);
	long before = resident_kib(), after;
	int id = swapon_or_bail(m, -1, 256 * MiB, 0);

	after = resident_kib();
	if (before < 0 || after < 0)
		skip("no /proc/self/statm");
	else
		ok(after - before < 8 * 1024, "a 256 MiB in-memory device costs %ld KiB",
		   after - before);
	is(lv_swap_off(m, id), 0, "swapoff");
	finish(m, "lazy area");
}

/* ---- swapoff, pins --------------------------------------------------------------------------- */

static void test_swapoff_nomem(void)
{
	struct lv_config cfg = swap_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_folio *f = alloc_or_bail(m, 0, 0, NULL, 0);
	static swp_entry_t e[16 * SWAPFILE_CLUSTER];
	struct lv_swap_info info;
	unsigned long n, want = SMALL_PAGES + 512;
	int id = swapon_or_bail(m, -1, 16 * CLUSTER_SZ, 0);

	n = alloc_n(f, e, want);
	is(n, want, "more slots used than the node has pages");
	is(lv_swap_off(m, id), -ENOMEM, "swapoff: they cannot fit -> -ENOMEM");
	is(lv_swap_info(m, id, &info), 0, "the device stays on");
	is(info.used, n, "with its slots");
	is(get_nr_swap_pages(m), 16 * SWAPFILE_CLUSTER - 1 - n, "free slots counted again");
	e[n] = folio_alloc_swap(f);
	ok(e[n].val, "and it still gives slots");
	check_ok(m, "refused swapoff");
	put_n(e, n + 1);
	is(lv_swap_off(m, id), 0, "emptied: swapoff");
	is(get_nr_swap_pages(m), 0, "no free slots");
	lv_folio_put(f);
	finish(m, "swapoff -ENOMEM");
}

struct swapoff_arg {
	struct lv_machine *m;
	int id, rc;
	int *order; /* the pin's put stores 1 before it puts */
	int seen;   /* what *order was when swapoff returned */
};

static void *swapoff_thread(void *p)
{
	struct swapoff_arg *a = p;

	a->rc = lv_swap_off(a->m, a->id);
	a->seen = __atomic_load_n(a->order, __ATOMIC_ACQUIRE);
	return NULL;
}

static void test_pin(void)
{
	struct lv_config cfg = swap_config();
	struct lv_machine *m = new_machine(&cfg);
	int id = swapon_or_bail(m, -1, CLUSTER_SZ, 0), order = 0;
	swp_entry_t e = swp_entry((unsigned int)id, 5);
	struct swap_info_struct *si = get_swap_device(m, e), *again;
	struct swapoff_arg a = { m, id, -1, &order, -1 };
	pthread_t t;

	ok(si != NULL, "a pin on a free slot of a device that is on");
	again = get_swap_device(m, e);
	ok(again == si, "pins nest");
	put_swap_device(again);
	if (pthread_create(&t, NULL, swapoff_thread, &a))
		BAIL_OUT("pthread_create");
	/* Once swapoff has begun its end, new pins fail; it then waits for ours. */
	while ((again = get_swap_device(m, e))) {
		put_swap_device(again);
		sched_yield();
	}
	ok(true, "pins fail once swapoff ends the device");
	usleep(20000); /* a swapoff that did not wait would be done by now */
	__atomic_store_n(&order, 1, __ATOMIC_RELEASE);
	put_swap_device(si);
	pthread_join(t, NULL);
	is(a.rc, 0, "swapoff succeeded");
	is(a.seen, 1, "after the pin was put");
	finish(m, "pins");
}

/* ---- lock statistics ------------------------------------------------------------------------- */

static void test_lock_stats(void)
{
	struct lv_config cfg = swap_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_folio *f = alloc_or_bail(m, 0, 0, NULL, 0);
	int id = swapon_or_bail(m, -1, 2 * CLUSTER_SZ, 0);
	struct lv_lock_stat s0, s1, s2;
	swp_entry_t e[8];

	lv_lock_stats(m, LV_LOCK_CLASS_SWAP, &s0);
	is_str(lv_lock_class_name(LV_LOCK_CLASS_SWAP), "swap", "the class is named swap");
	put_n(e, alloc_n(f, e, 8));
	lv_lock_stats(m, LV_LOCK_CLASS_SWAP, &s1);
	ok(s1.acquired >= s0.acquired + 16, "allocations and frees take swap locks (%llu)",
	   (unsigned long long)(s1.acquired - s0.acquired));
	is(lv_swap_off(m, id), 0, "swapoff");
	lv_lock_stats(m, LV_LOCK_CLASS_SWAP, &s2);
	ok(s2.acquired >= s1.acquired, "a device turned off keeps its counts in the total");
	lv_lock_stats_reset(m);
	lv_lock_stats(m, LV_LOCK_CLASS_SWAP, &s2);
	is(s2.acquired, 0, "reset clears them");
	lv_folio_put(f);
	finish(m, "lock stats");
}

/* ---- two threads ----------------------------------------------------------------------------- */

#define POOL 700

struct pool {
	pthread_mutex_t lock;
	swp_entry_t e[POOL];
	unsigned int nr;
	pthread_barrier_t start;
};

struct churn_arg {
	struct pool *pool;
	struct lv_folio *folio;
	int cpu;
	unsigned long allocs, fails;
};

static void *churn_thread(void *p)
{
	struct churn_arg *a = p;
	unsigned int seed = (unsigned int)a->cpu * 7919 + 1;

	if (a->cpu >= 0)
		pin_to(a->cpu);
	pthread_barrier_wait(&a->pool->start);
	for (int i = 0; i < 20000; i++) {
		struct pool *pool = a->pool;
		swp_entry_t e = { 0 };

		if (rand_r(&seed) % 2) {
			e = folio_alloc_swap(a->folio);
			if (!e.val) {
				a->fails++;
				continue;
			}
			a->allocs++;
			pthread_mutex_lock(&pool->lock);
			if (pool->nr < POOL) {
				pool->e[pool->nr++] = e;
				e.val = 0;
			}
			pthread_mutex_unlock(&pool->lock);
		} else {
			pthread_mutex_lock(&pool->lock);
			if (pool->nr) {
				unsigned int k = (unsigned int)rand_r(&seed) % pool->nr;

				e = pool->e[k];
				pool->e[k] = pool->e[--pool->nr];
			}
			pthread_mutex_unlock(&pool->lock);
		}
		if (e.val) /* frees from either thread, whichever allocated it */
			put_swap_folio(e);
	}
	return NULL;
}

static void test_threads(void)
{
	struct lv_config cfg = swap_config();
	struct pool pool = { .nr = 0 };
	struct churn_arg a[2];
	struct lv_machine *m;
	struct lv_folio *f;
	pthread_t t[2];
	cpu_set_t allowed;
	int self, other, id;
	bool two = two_cpus(&self, &other, &allowed);

	cfg.nr_cpu_slots = 2;
	m = new_machine(&cfg);
	f = alloc_or_bail(m, 0, 0, NULL, 0);
	id = swapon_or_bail(m, -1, 2 * CLUSTER_SZ, 0); /* 1023 slots for up to 700 + 2 */
	pthread_mutex_init(&pool.lock, NULL);
	pthread_barrier_init(&pool.start, NULL, 2);
	for (int i = 0; i < 2; i++) {
		a[i] = (struct churn_arg){ &pool, f, two ? (i ? other : self) : -1, 0, 0 };
		if (pthread_create(&t[i], NULL, churn_thread, &a[i]))
			BAIL_OUT("pthread_create");
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	ok(a[0].allocs && a[1].allocs, "both threads allocated (%lu, %lu)", a[0].allocs,
	   a[1].allocs);
	is(a[0].fails + a[1].fails, 0, "never short of a slot");
	is(used_slots(m, id), pool.nr, "the slots in use are the pool's");
	check_ok(m, "after the churn");
	put_n(pool.e, pool.nr);
	is(used_slots(m, id), 0, "all freed");
	check_ok(m, "emptied after the churn");
	is(lv_swap_off(m, id), 0, "swapoff");
	lv_folio_put(f);
	pthread_barrier_destroy(&pool.start);
	pthread_mutex_destroy(&pool.lock);
	finish(m, "two threads");
}

/* ---- teardown with slots in use -------------------------------------------------------------- */

static void leave_slot(void)
{
	struct lv_config cfg = swap_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_folio *f = alloc_or_bail(m, 0, 0, NULL, 0);

	swapon_or_bail(m, -1, CLUSTER_SZ, 0);
	if (!folio_alloc_swap(f).val)
		_exit(12);
	lv_folio_put(f);
	lv_machine_destroy(m);
	_exit(0);
}

static void test_teardown_report(void)
{
	static struct child_run run;

	run_in_child(leave_slot, &run);
	ok(WIFEXITED(run.status) && WEXITSTATUS(run.status) == 0,
	   "teardown with a slot in use ends");
	ok(strstr(run.out, "1 slots in use on swap device") != NULL, "and reports it");
	if (!strstr(run.out, "slots in use"))
		diag("child output:\n%s", run.out);
}

int main(void)
{
	test_teardown_report();
	test_swapon_errors();
	test_swapon_nomem();
	test_alloc_until_full();
	test_clusters_return();
	test_percpu_clusters();
	test_priorities();
	test_swap_map();
	test_charge();
	test_reparent();
	test_memcg_disabled();
	test_io();
	test_lazy_area();
	test_swapoff_nomem();
	test_pin();
	test_lock_stats();
	test_threads();
	return done_testing();
}
