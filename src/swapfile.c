// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Swap devices: slot allocation, use counts, I/O, memcg swap accounting, swapon and swapoff.
 *
 * Theory of operation.
 *
 * Types. A swap entry names a device by type and nothing else, and most of the entry-only
 * calls of swap.h (swap_free(), put_swap_folio(), ...) have no machine at hand. So device
 * types are handed out process-wide: swap_table[type] finds a device from an entry alone, and
 * m->swap_info[type] holds the same pointer for the machine that owns it (NULL for the
 * others), which is what a call with a machine (get_swap_device(), allocation) looks at. At
 * most LV_MAX_SWAPFILES devices are on at once in the whole process.
 *
 * Slots and clusters. Device offsets are grouped in clusters of SWAPFILE_CLUSTER slots; offset
 * 0 is never handed out (it is counted as used in cluster 0, so that cluster is never free).
 * A slot's byte in swap_map is its use count (SWAP_HAS_CACHE | page table users). Every
 * change of a byte is an atomic compare-and-swap; the changes from and to 0 (allocation and
 * free) happen only under the slot's cluster lock, so that a slot the allocator sees free
 * cannot be being freed, and the cluster's count of used slots, its memcg records and the
 * device's inuse_pages change in the same critical section. The other changes (a page table
 * user comes or goes while the cache holds the slot, swapcache_prepare()) are lock-free.
 *
 * Cluster lists. A cluster is on the device's free list (no slot used), on its nonfull list,
 * on no list (full), or owned by an allocator (CLUSTER_OWNED: off every list, named by one CPU
 * slot's cache or held by the one thread that took it from there). The lists and the state
 * change under the device lock only; counts change under the cluster lock only. The lock
 * checker forbids two swap-class locks at once, so the two never nest: a free that empties a
 * cluster, or makes a full one nonfull, drops the cluster lock and then calls
 * cluster_relist(), which re-reads the count under the device lock and puts the cluster on
 * the list its count selects at that moment, unless an allocator owns it. Every change of
 * a count across a mark that selects a list (empty, full) is followed by a relist, so the
 * last relist, after the last crossing, leaves the cluster where its count says, whatever
 * the order; an owner's release relists too. Only owners allocate, except the last-resort
 * scan (swap_alloc_scan()), which relists what it fills.
 *
 * Per-CPU clusters. Each CPU slot has, per device, a "next" offset in a cluster it owns. An
 * allocation takes the value with an atomic exchange (leaving 0), so the cluster is then its
 * own: it allocates the next free slot under the cluster lock, and exchanges the following
 * offset back in (releasing whatever another thread of the same CPU slot installed
 * meanwhile), or releases the cluster if it is full. With no cluster, it takes one from the
 * nonfull list, else from the free list (device lock), else takes another CPU slot's, else
 * scans every cluster for a free slot (one privately held by another allocator included).
 *
 * Free slots. si->avail counts the device's free slots not reserved by an allocation in
 * flight, with SWAP_AVAIL_WRITEOK in a high bit. An allocation first reserves a slot there (a
 * compare-and-swap that fails without WRITEOK), a free adds one back; each change made while
 * WRITEOK is set is repeated on m->nr_swap_pages. Swapoff clears the bit with one atomic AND,
 * which returns exactly the slots it must take off m->nr_swap_pages; a failed swapoff sets it
 * again with one OR, which returns what to add back. No allocation starts after the AND.
 *
 * Pins and teardown. get_swap_device() reads m->swap_info[type] under RCU and counts itself
 * in si->users, then checks si->on (a Dekker pair with swapoff, both seq_cst). The entry-only
 * calls run in RCU read-side sections. The end of swapoff clears ->on, waits for a grace
 * period and for the users to go, unlists the device (under memcg_mutex, where its lock
 * statistics are retired in the same hold, so lv_lock_stats() counts them once), waits for
 * another grace period, and frees it.
 *
 * Memcg records. swap_cgroup[offset] is the id of the memcg the slot is charged to (the
 * kernel's swap_cgroup). A memcg's removal rewrites its records to its parent's id
 * (swap_reparent(), compare-and-swap) before it unpublishes its id, so a record never names an
 * unpublished id for longer than that window: a reader that resolves an id to NULL reloads
 * the record, which must have changed. A free clears the record with a compare-and-swap from
 * the id it resolved, so it uncharges exactly the chain that charge was counted on.
 */
#include "internal.h"
#include "swap.h"

#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef LV_DEBUG
int (*swap_io_hook)(swp_entry_t e, bool write);
#endif

#define SWAP_AVAIL_WRITEOK (1l << 62)
#define SWAP_AVAIL_MASK	   (SWAP_AVAIL_WRITEOK - 1)

enum cluster_state {
	CLUSTER_FREE,	 /* on si->free_clusters: no slot used */
	CLUSTER_NONFULL, /* on si->nonfull_clusters */
	CLUSTER_FULL,	 /* on no list: every slot used (or was, until the relist after a free) */
	CLUSTER_OWNED,	 /* on no list: a CPU slot's cache, or the allocator that took it, has it */
};

/* struct swap_cluster_info - SWAPFILE_CLUSTER slots (the kernel's swap_cluster_info). */
struct swap_cluster_info {
	/*
	 * Class swap. Held for the transitions of its slots' swap_map bytes from and to 0, with
	 * their memcg records, and for @count.
	 */
	struct lv_lock lock;
	unsigned int count;    /* lock for writes (atomic stores); read by the device lock holder */
	unsigned char state;   /* device lock (enum cluster_state) */
	struct list_head list; /* device lock: on si->free_clusters or si->nonfull_clusters */
} ____cacheline_aligned;

/* struct percpu_cluster - one CPU slot's cluster on one device. */
struct percpu_cluster {
	/*
	 * Atomic exchange only: the offset its next allocation starts at, in a cluster this CPU
	 * slot owns; 0 for none. Whoever exchanges a nonzero value out owns that cluster.
	 */
	unsigned long next;
} ____cacheline_aligned;

struct swap_info_struct {
	struct lv_machine *machine;		/* constant */
	unsigned int type;			/* constant */
	int prio;				/* constant */
	int fd;					/* constant; -1: the in-memory @area */
	char *area;				/* constant: mapped lazily, for fd -1 */
	unsigned long max;			/* constant: slots, offset 0 included */
	unsigned long nr_clusters;		/* constant */
	unsigned char *swap_map;		/* atomic bytes; see the top */
	unsigned short *swap_cgroup;		/* atomic; cluster lock, or swap_reparent() */
	struct swap_cluster_info *cluster_info; /* constant array of nr_clusters */
	struct percpu_cluster *percpu_cluster;	/* constant array of machine->nr_slots */
	/*
	 * constant: the swap cache, one tree per SWAP_ADDRESS_SPACE_PAGES slots, as the kernel
	 * splits it into 64 MiB address spaces: one tree lock for a whole device was the most
	 * contended lock of `lvbench compare swap` in the lruvec design.
	 */
	struct lv_file **spaces;
	unsigned long nr_spaces;
	int on;					   /* atomic (seq_cst): pins may be taken */
	long users;				   /* atomic (seq_cst): get_swap_device() pins */
	long avail;				   /* atomic: free unreserved slots | WRITEOK */
	long inuse_pages;			   /* atomic; changed under a cluster lock */
	uint64_t write_errors, read_errors;	   /* atomic */
	struct lv_lock lock ____cacheline_aligned; /* class swap: the cluster lists and states */
	struct list_head free_clusters;		   /* lock */
	struct list_head nonfull_clusters;	   /* lock */
};

/*
 * Process-wide, by type: written (release) only by the machine that reserved the type in
 * swap_type_used[], under its swap_mutex; read under RCU (acquire).
 */
static struct swap_info_struct *swap_table[LV_MAX_SWAPFILES];
static bool swap_type_used[LV_MAX_SWAPFILES]; /* swap_type_mutex */
static pthread_mutex_t swap_type_mutex = PTHREAD_MUTEX_INITIALIZER;

static inline struct swap_cluster_info *offset_cluster(struct swap_info_struct *si,
						       unsigned long offset)
{
	return &si->cluster_info[offset / SWAPFILE_CLUSTER];
}

/* swap_entry_info - the device of @e, or NULL. Context: RCU read side, or a pin. */
static struct swap_info_struct *swap_entry_info(swp_entry_t e)
{
	unsigned int type = swp_type(e);
	struct swap_info_struct *si;

	if (type >= LV_MAX_SWAPFILES)
		return NULL;
	si = rcu_dereference_lv(swap_table[type]);
	if (!si || !swp_offset(e) || swp_offset(e) >= si->max)
		return NULL;
	return si;
}

/*
 * swap_entry_info_bug - swap_entry_info() for a call whose caller holds @e: a bad entry is
 * the caller's bug (reported on stderr; there is no machine to count it on).
 */
static struct swap_info_struct *swap_entry_info_bug(swp_entry_t e, const char *what)
{
	struct swap_info_struct *si = swap_entry_info(e);

	if (unlikely(!si)) {
		fprintf(stderr, "lruvec: BUG: %s of bad swap entry %#lx\n", what, e.val);
#ifdef LV_DEBUG
		abort();
#endif
	}
	return si;
}

/* ---- free slot counts ------------------------------------------------------------------------ */

/* avail_add - @nr slots more (or fewer) free and unreserved on @si, and on the machine's count. */
static void avail_add(struct swap_info_struct *si, long nr)
{
	long old = __atomic_fetch_add(&si->avail, nr, __ATOMIC_RELAXED);

	if (old & SWAP_AVAIL_WRITEOK)
		__atomic_fetch_add(&si->machine->nr_swap_pages, nr, __ATOMIC_RELAXED);
}

/* swap_reserve - take one free slot of @si for an allocation; false if not writeok or full. */
static bool swap_reserve(struct swap_info_struct *si)
{
	long v = __atomic_load_n(&si->avail, __ATOMIC_RELAXED);

	do {
		if (!(v & SWAP_AVAIL_WRITEOK) || !(v & SWAP_AVAIL_MASK))
			return false;
	} while (!__atomic_compare_exchange_n(&si->avail, &v, v - 1, true, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	__atomic_fetch_sub(&si->machine->nr_swap_pages, 1, __ATOMIC_RELAXED);
	return true;
}

/* swap_writeok_clear / _set - stop or restart allocations, and fix the machine's count. */
static void swap_writeok_clear(struct swap_info_struct *si)
{
	long old = __atomic_fetch_and(&si->avail, ~SWAP_AVAIL_WRITEOK, __ATOMIC_SEQ_CST);

	if (old & SWAP_AVAIL_WRITEOK)
		__atomic_fetch_sub(&si->machine->nr_swap_pages, old & SWAP_AVAIL_MASK,
				   __ATOMIC_RELAXED);
}

static void swap_writeok_set(struct swap_info_struct *si)
{
	long old = __atomic_fetch_or(&si->avail, SWAP_AVAIL_WRITEOK, __ATOMIC_SEQ_CST);

	if (!(old & SWAP_AVAIL_WRITEOK))
		__atomic_fetch_add(&si->machine->nr_swap_pages, old & SWAP_AVAIL_MASK,
				   __ATOMIC_RELAXED);
}

/* ---- memcg swap charges ---------------------------------------------------------------------- */

static void swap_uncharge_upto(struct lv_memcg *memcg, struct lv_memcg *stop)
{
	for (struct lv_memcg *c = memcg; c && c != stop && c->parent; c = c->parent)
		__atomic_fetch_sub(&c->swap_usage, 1, __ATOMIC_RELAXED);
}

/*
 * swap_try_charge - one slot on @memcg and each ancestor below the root, none going over its
 * swap_max. Return: false (nothing charged) if one would.
 * Context: the caller's folio is charged to @memcg, which keeps the chain alive.
 */
static bool swap_try_charge(struct lv_memcg *memcg)
{
	for (struct lv_memcg *c = memcg; c && c->parent; c = c->parent) {
		long usage = __atomic_load_n(&c->swap_usage, __ATOMIC_RELAXED);

		do {
			if (usage + 1 > __atomic_load_n(&c->swap_max, __ATOMIC_RELAXED)) {
				swap_uncharge_upto(memcg, c);
				return false;
			}
		} while (!__atomic_compare_exchange_n(&c->swap_usage, &usage, usage + 1, true,
						      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	}
	return true;
}

/*
 * record_resolve - the memcg an id read from a record names. NULL for id 0 (memcg disabled,
 * or nothing recorded) and for an id a removal just unpublished (the record has changed then;
 * the caller reloads it).
 * Context: RCU read side.
 */
static struct lv_memcg *record_resolve(struct lv_machine *m, unsigned short id)
{
	return id ? mem_cgroup_from_id(m, id) : NULL;
}

/*
 * swap_record_clear - clear the memcg record of @offset and uncharge the chain it named.
 * Context: @si's cluster lock of @offset held (the slot's byte just became 0).
 */
static void swap_record_clear(struct swap_info_struct *si, unsigned long offset)
{
	unsigned short *rec = &si->swap_cgroup[offset];
	struct lv_memcg *memcg;
	unsigned short id;

	lockdep_assert_held(&offset_cluster(si, offset)->lock);
	rcu_read_lock();
	for (;;) {
		id = __atomic_load_n(rec, __ATOMIC_ACQUIRE);
		memcg = record_resolve(si->machine, id);
		if (id && !memcg) {
			/* A removal unpublished it after rewriting the record: look again. */
			if (__atomic_load_n(rec, __ATOMIC_ACQUIRE) != id)
				continue;
			lv_bug(si->machine, "swap record names an unpublished memcg id", __FILE__,
			       __LINE__);
		}
		if (__atomic_compare_exchange_n(rec, &id, 0, false, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED))
			break;
	}
	swap_uncharge_upto(memcg, NULL);
	rcu_read_unlock();
}

/* ---- clusters -------------------------------------------------------------------------------- */

/*
 * cluster_relist - put @ci on the list its count selects now, unless an allocator owns it.
 * Context: @si's device lock held.
 */
static void cluster_relist(struct swap_info_struct *si, struct swap_cluster_info *ci)
{
	unsigned int count = __atomic_load_n(&ci->count, __ATOMIC_RELAXED);
	unsigned char target;

	lockdep_assert_held(&si->lock);
	if (ci->state == CLUSTER_OWNED)
		return;
	target = !count ? CLUSTER_FREE : count < SWAPFILE_CLUSTER ? CLUSTER_NONFULL : CLUSTER_FULL;
	if (target == ci->state)
		return;
	if (ci->state != CLUSTER_FULL)
		list_del(&ci->list);
	if (target == CLUSTER_FREE)
		list_add_tail(&ci->list, &si->free_clusters);
	else if (target == CLUSTER_NONFULL)
		list_add_tail(&ci->list, &si->nonfull_clusters);
	ci->state = target;
}

/*
 * cluster_release - an owner lets go of cluster @idx (full, or displaced from its CPU slot's
 * cache, or dropped by swapoff). Context: no swap lock held; takes the device lock.
 */
static void cluster_release(struct swap_info_struct *si, unsigned long idx)
{
	struct swap_cluster_info *ci = &si->cluster_info[idx];

	lv_lock_acquire(&si->lock);
	VM_BUG_ON_M(si->machine, ci->state != CLUSTER_OWNED);
	ci->state = CLUSTER_FULL; /* on no list: the relist starts from there */
	cluster_relist(si, ci);
	lv_lock_release(&si->lock);
}

/* cluster_relist_unlocked - cluster_relist() for a caller holding no swap lock. */
static void cluster_relist_unlocked(struct swap_info_struct *si, struct swap_cluster_info *ci)
{
	lv_lock_acquire(&si->lock);
	cluster_relist(si, ci);
	lv_lock_release(&si->lock);
}

/*
 * cluster_take - own a cluster from the nonfull list, else from the free list.
 * Return: its index, or -1 if both are empty. Context: no swap lock held; takes the device lock.
 */
static long cluster_take(struct swap_info_struct *si)
{
	struct swap_cluster_info *ci = NULL;

	lv_lock_acquire(&si->lock);
	if (!list_empty(&si->nonfull_clusters))
		ci = list_entry(si->nonfull_clusters.next, struct swap_cluster_info, list);
	else if (!list_empty(&si->free_clusters))
		ci = list_entry(si->free_clusters.next, struct swap_cluster_info, list);
	if (ci) {
		list_del(&ci->list);
		ci->state = CLUSTER_OWNED;
	}
	lv_lock_release(&si->lock);
	return ci ? ci - si->cluster_info : -1;
}

/*
 * cluster_alloc_slot - the first free slot of cluster @idx from @start on (wrapping), set to
 * SWAP_HAS_CACHE and recorded as @memcg_id's. *@count: the cluster's count after it.
 * Return: its offset, or 0 if the cluster is full.
 * Context: no swap lock held; takes the cluster lock. A caller that does not own the cluster
 * relists it if the count crossed a mark (swap_alloc_scan()).
 */
static unsigned long cluster_alloc_slot(struct swap_info_struct *si, unsigned long idx,
					unsigned long start, unsigned short memcg_id,
					unsigned int *count)
{
	struct swap_cluster_info *ci = &si->cluster_info[idx];
	unsigned long base = idx * SWAPFILE_CLUSTER, end = base + SWAPFILE_CLUSTER, off = 0;

	if (start < base || start >= end)
		start = base;
	lv_lock_acquire(&ci->lock);
	if (ci->count < SWAPFILE_CLUSTER) {
		for (unsigned long i = 0; i < SWAPFILE_CLUSTER; i++) {
			unsigned long o =
				start + i < end ? start + i : start + i - SWAPFILE_CLUSTER;

			if (o && !__atomic_load_n(&si->swap_map[o], __ATOMIC_RELAXED)) {
				off = o;
				break;
			}
		}
	}
	if (off) {
		__atomic_store_n(&si->swap_cgroup[off], memcg_id, __ATOMIC_RELAXED);
		__atomic_store_n(&si->swap_map[off], (unsigned char)SWAP_HAS_CACHE,
				 __ATOMIC_RELEASE);
		__atomic_store_n(&ci->count, ci->count + 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&si->inuse_pages, 1, __ATOMIC_RELAXED);
	}
	*count = ci->count;
	lv_lock_release(&ci->lock);
	return off;
}

/*
 * swap_alloc_scan - the last resort: every cluster, in order, owned or not. An allocation in
 * a cluster it does not own changes the count of a cluster that may be on a list, so it
 * relists the cluster when it became full (or stopped being empty), as a free does when the
 * count crosses those marks the other way. Return: the offset, or 0.
 * Context: a slot reserved on @si; no swap lock held.
 */
static unsigned long swap_alloc_scan(struct swap_info_struct *si, unsigned short memcg_id)
{
	/* The reservation promises a free slot; others may take the one we would find first. */
	for (int pass = 0; pass < 3; pass++) {
		for (unsigned long idx = 0; idx < si->nr_clusters; idx++) {
			struct swap_cluster_info *ci = &si->cluster_info[idx];
			unsigned int count;
			unsigned long off;

			if (__atomic_load_n(&ci->count, __ATOMIC_RELAXED) >= SWAPFILE_CLUSTER)
				continue;
			off = cluster_alloc_slot(si, idx, 0, memcg_id, &count);
			if (!off)
				continue;
			if (count == SWAPFILE_CLUSTER || count == 1)
				cluster_relist_unlocked(si, ci);
			return off;
		}
	}
	return 0;
}

/*
 * swap_alloc_slot - a slot of @si for CPU slot @cpu, through its cluster cache: see "Per-CPU
 * clusters" at the top. Return: the offset, or 0 (no cluster with room could be had).
 * Context: a slot reserved on @si (swap_reserve()); no swap lock held; RCU read side.
 */
static unsigned long swap_alloc_slot(struct swap_info_struct *si, unsigned int cpu,
				     unsigned short memcg_id)
{
	struct percpu_cluster *pcp = &si->percpu_cluster[cpu];
	unsigned long next = __atomic_exchange_n(&pcp->next, 0, __ATOMIC_ACQ_REL), off = 0;
	unsigned long idx = 0;
	unsigned int count = 0;

	if (next) {
		idx = next / SWAPFILE_CLUSTER;
		off = cluster_alloc_slot(si, idx, next, memcg_id, &count);
		if (!off) /* filled by swap_alloc_scan() meanwhile */
			cluster_release(si, idx);
	}
	if (!off) {
		long taken = cluster_take(si);

		next = 0;
		/* Nothing on the lists: another CPU slot's cluster may have room. */
		for (unsigned int i = 1; taken < 0 && i < si->machine->nr_slots; i++) {
			struct percpu_cluster *other =
				&si->percpu_cluster[(cpu + i) % si->machine->nr_slots];

			next = __atomic_exchange_n(&other->next, 0, __ATOMIC_ACQ_REL);
			if (next)
				taken = (long)(next / SWAPFILE_CLUSTER);
		}
		if (taken < 0)
			return swap_alloc_scan(si, memcg_id);
		idx = (unsigned long)taken;
		off = cluster_alloc_slot(si, idx, next, memcg_id, &count);
		if (!off) {
			cluster_release(si, idx);
			return swap_alloc_scan(si, memcg_id);
		}
	}
	if (count == SWAPFILE_CLUSTER) {
		cluster_release(si, idx);
	} else {
		unsigned long n = off + 1;

		/* Wrap to the cluster's start, which for cluster 0 is offset 1 (0 means none). */
		if (n == (idx + 1) * SWAPFILE_CLUSTER)
			n = idx ? idx * SWAPFILE_CLUSTER : 1;
		n = __atomic_exchange_n(&pcp->next, n, __ATOMIC_ACQ_REL);
		if (n) /* another thread of this CPU slot installed one meanwhile */
			cluster_release(si, n / SWAPFILE_CLUSTER);
	}
	return off;
}

/* swap_drop_percpu - release every CPU slot's cluster of @si. Context: no swap lock held. */
static void swap_drop_percpu(struct swap_info_struct *si)
{
	for (unsigned int cpu = 0; cpu < si->machine->nr_slots; cpu++) {
		unsigned long n =
			__atomic_exchange_n(&si->percpu_cluster[cpu].next, 0, __ATOMIC_ACQ_REL);

		if (n)
			cluster_release(si, n / SWAPFILE_CLUSTER);
	}
}

/* ---- allocation ------------------------------------------------------------------------------ */

/*
 * swap_record_fixup - the folio's memcg, read before a removal re-pointed its obj_cgroup,
 * may be removed by now, and its removal's swap_reparent() may have walked the records before
 * ours was written. A Dekker pair decides: we wrote the record, then read ->dying; the remover
 * set ->dying, then walks. If we see it dying, we rewrite the record ourselves, to the first
 * ancestor that is not (the one its folio belongs to now); otherwise its walk sees the record.
 * Context: RCU read side (since before @memcg was read from the folio).
 */
static void swap_record_fixup(struct lv_machine *m, swp_entry_t entry, struct lv_memcg *memcg)
{
	struct swap_info_struct *si = rcu_dereference_lv(m->swap_info[swp_type(entry)]);
	unsigned short *rec = &si->swap_cgroup[swp_offset(entry)], id = (unsigned short)memcg->id;
	struct lv_memcg *live = memcg;

	smp_mb();
	while (live->parent && __atomic_load_n(&live->dying, __ATOMIC_SEQ_CST))
		live = live->parent;
	if (live != memcg)
		__atomic_compare_exchange_n(rec, &id, (unsigned short)live->id, false,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

swp_entry_t folio_alloc_swap(struct lv_folio *folio)
{
	struct lv_machine *m = folio_machine(folio);
	struct swap_info_struct *cand[LV_MAX_SWAPFILES];
	struct lv_memcg *memcg;
	swp_entry_t entry = { 0 };
	unsigned int nr = 0, cpu;
	unsigned long rotor;

	VM_BUG_ON_FOLIO(folio_test_large(folio), folio);
	if (folio_test_large(folio))
		return entry;
	/* The read-side section keeps the memcg read readable until its record is final. */
	rcu_read_lock();
	memcg = folio_memcg(folio);
	if (!swap_try_charge(memcg)) {
		rcu_read_unlock();
		return entry;
	}
	cpu = this_cpu_index(m);
	rotor = __atomic_fetch_add(&m->swap_rotor, 1, __ATOMIC_RELAXED);
	/* Devices with room, by priority (highest first), then by type. */
	for (unsigned int type = 0; type < LV_MAX_SWAPFILES; type++) {
		struct swap_info_struct *si = rcu_dereference_lv(m->swap_info[type]);
		long v = si ? __atomic_load_n(&si->avail, __ATOMIC_RELAXED) : 0;
		unsigned int i;

		if (!(v & SWAP_AVAIL_WRITEOK) || !(v & SWAP_AVAIL_MASK))
			continue;
		for (i = nr++; i && cand[i - 1]->prio < si->prio; i--)
			cand[i] = cand[i - 1];
		cand[i] = si;
	}
	/* Equal priorities take turns: each group is tried from a rotating start. */
	for (unsigned int g = 0, end; g < nr && !entry.val; g = end) {
		unsigned int k;

		for (end = g + 1; end < nr && cand[end]->prio == cand[g]->prio; end++)
			;
		k = end - g;
		for (unsigned int j = 0; j < k && !entry.val; j++) {
			struct swap_info_struct *si = cand[g + (rotor + j) % k];
			unsigned long off;

			if (!swap_reserve(si))
				continue;
			off = swap_alloc_slot(si, cpu, memcg ? (unsigned short)memcg->id : 0);
			if (off)
				entry = swp_entry(si->type, off);
			else
				avail_add(si, 1);
		}
	}
	if (!entry.val)
		swap_uncharge_upto(memcg, NULL);
	else if (memcg)
		swap_record_fixup(m, entry, memcg);
	rcu_read_unlock();
	return entry;
}

/* ---- use counts ------------------------------------------------------------------------------ */

/*
 * swap_slot_free - the byte of @offset just became 0: clear its record, uncharge, count.
 * Return: whether the cluster must be relisted (it became empty, or stopped being full).
 * Context: the cluster lock of @offset held.
 */
static bool swap_slot_free(struct swap_info_struct *si, unsigned long offset)
{
	struct swap_cluster_info *ci = offset_cluster(si, offset);
	unsigned int count = ci->count;

	lockdep_assert_held(&ci->lock);
	swap_record_clear(si, offset);
	__atomic_fetch_sub(&si->inuse_pages, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&ci->count, count - 1, __ATOMIC_RELAXED);
	avail_add(si, 1);
	return count == 1 || count == SWAPFILE_CLUSTER;
}

/*
 * swap_map_drop - take @drop (1: a page table user, or SWAP_HAS_CACHE) off @e's byte; free
 * the slot if nothing is left. Lock-free unless the byte reaches 0.
 */
static void swap_map_drop(swp_entry_t e, unsigned char drop, const char *what)
{
	struct swap_info_struct *si;
	struct swap_cluster_info *ci;
	unsigned char *p, v, nv;
	bool relist = false;

	rcu_read_lock();
	si = swap_entry_info_bug(e, what);
	if (!si)
		goto out;
	p = &si->swap_map[swp_offset(e)];
	v = __atomic_load_n(p, __ATOMIC_RELAXED);
	do {
		VM_BUG_ON_M(si->machine, drop == 1 ? !(v & SWAP_COUNT_MASK) : !(v & drop));
		nv = (unsigned char)(v - drop);
		if (!nv)
			goto locked;
	} while (!__atomic_compare_exchange_n(p, &v, nv, true, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
	goto out;
locked:
	/* Only here, under the cluster lock, may a byte become 0 (or leave 0). */
	ci = offset_cluster(si, swp_offset(e));
	lv_lock_acquire(&ci->lock);
	v = __atomic_load_n(p, __ATOMIC_RELAXED);
	do {
		VM_BUG_ON_M(si->machine, drop == 1 ? !(v & SWAP_COUNT_MASK) : !(v & drop));
		nv = (unsigned char)(v - drop);
	} while (
		!__atomic_compare_exchange_n(p, &v, nv, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
	if (!nv)
		relist = swap_slot_free(si, swp_offset(e));
	lv_lock_release(&ci->lock);
	if (relist)
		cluster_relist_unlocked(si, ci);
out:
	rcu_read_unlock();
}

void swap_duplicate(swp_entry_t e)
{
	struct swap_info_struct *si;
	unsigned char *p, v;

	rcu_read_lock();
	si = swap_entry_info_bug(e, "swap_duplicate");
	if (si) {
		p = &si->swap_map[swp_offset(e)];
		v = __atomic_load_n(p, __ATOMIC_RELAXED);
		do {
			VM_BUG_ON_M(si->machine, !v || (v & SWAP_COUNT_MASK) == SWAP_COUNT_MASK);
		} while (!__atomic_compare_exchange_n(p, &v, (unsigned char)(v + 1), true,
						      __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
	}
	rcu_read_unlock();
}

void swap_free(swp_entry_t e)
{
	swap_map_drop(e, 1, "swap_free");
}

void put_swap_folio(swp_entry_t e)
{
	swap_map_drop(e, SWAP_HAS_CACHE, "put_swap_folio");
}

int swapcache_prepare(swp_entry_t e)
{
	struct swap_info_struct *si;
	unsigned char *p, v;
	int err = 0;

	rcu_read_lock();
	si = swap_entry_info(e);
	if (!si) {
		err = -ENOENT;
		goto out;
	}
	p = &si->swap_map[swp_offset(e)];
	v = __atomic_load_n(p, __ATOMIC_ACQUIRE);
	do {
		if (!v) {
			err = -ENOENT;
			break;
		}
		if (v & SWAP_HAS_CACHE) {
			err = -EEXIST;
			break;
		}
	} while (!__atomic_compare_exchange_n(p, &v, (unsigned char)(v | SWAP_HAS_CACHE), true,
					      __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
out:
	rcu_read_unlock();
	return err;
}

unsigned char swap_map_value(swp_entry_t e)
{
	struct swap_info_struct *si;
	unsigned char v = 0;

	rcu_read_lock();
	si = swap_entry_info(e);
	if (si)
		v = __atomic_load_n(&si->swap_map[swp_offset(e)], __ATOMIC_ACQUIRE);
	rcu_read_unlock();
	return v;
}

int swp_swapcount(swp_entry_t e)
{
	return swap_map_value(e) & SWAP_COUNT_MASK;
}

/* ---- pins ------------------------------------------------------------------------------------ */

struct swap_info_struct *get_swap_device(struct lv_machine *m, swp_entry_t e)
{
	unsigned int type = swp_type(e);
	struct swap_info_struct *si = NULL;

	if (type >= LV_MAX_SWAPFILES)
		return NULL;
	rcu_read_lock();
	si = rcu_dereference_lv(m->swap_info[type]);
	if (si && (!swp_offset(e) || swp_offset(e) >= si->max))
		si = NULL;
	if (si) {
		/* Dekker pair with swap_device_free(): users, then on; it clears on, then waits. */
		__atomic_fetch_add(&si->users, 1, __ATOMIC_SEQ_CST);
		if (!__atomic_load_n(&si->on, __ATOMIC_SEQ_CST)) {
			__atomic_fetch_sub(&si->users, 1, __ATOMIC_RELEASE);
			si = NULL;
		}
	}
	rcu_read_unlock();
	return si;
}

void put_swap_device(struct swap_info_struct *si)
{
	if (si)
		__atomic_fetch_sub(&si->users, 1, __ATOMIC_RELEASE);
}

struct lv_file *swap_address_space(swp_entry_t e)
{
	struct swap_info_struct *si;
	struct lv_file *space;

	rcu_read_lock();
	si = swap_entry_info(e);
	space = si ? si->spaces[swp_offset(e) >> SWAP_ADDRESS_SPACE_SHIFT] : NULL;
	rcu_read_unlock();
	return space;
}

/* ---- I/O ------------------------------------------------------------------------------------- */

/*
 * swap_rw - one page of slot @offset, by pread/pwrite (all of it: short transfers and EINTR
 * are retried) or by a copy to or from the in-memory area. Return: 0 or -EIO.
 */
static int swap_rw(struct swap_info_struct *si, swp_entry_t e, void *buf, bool write)
{
	off_t pos = (off_t)(swp_offset(e) * LV_PAGE_SIZE);
	size_t done = 0;

#ifdef LV_DEBUG
	if (swap_io_hook && swap_io_hook(e, write))
		return -EIO;
#endif
	if (si->fd < 0) {
		char *slot = si->area + (size_t)pos;

		if (write)
			memcpy(slot, buf, LV_PAGE_SIZE);
		else
			memcpy(buf, slot, LV_PAGE_SIZE);
		return 0;
	}
	while (done < LV_PAGE_SIZE) {
		ssize_t n = write ? pwrite(si->fd, (char *)buf + done, LV_PAGE_SIZE - done,
					   pos + (off_t)done)
				  : pread(si->fd, (char *)buf + done, LV_PAGE_SIZE - done,
					  pos + (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) /* an error, or the end of the file: nothing more will come */
			return -EIO;
		done += (size_t)n;
	}
	return 0;
}

int swap_writepage(swp_entry_t e, const void *data, struct lruvec *lruvec)
{
	struct swap_info_struct *si = swap_entry_info_bug(e, "swap_writepage");
	int err = si ? swap_rw(si, e, (void *)data, true) : -EIO;

	if (err && si)
		__atomic_fetch_add(&si->write_errors, 1, __ATOMIC_RELAXED);
	if (lruvec)
		lruvec_count_event_atomic(lruvec, err ? EV_SWAP_WRITE_ERROR : EV_PSWPOUT, 1);
	return err;
}

int swap_readpage(swp_entry_t e, void *data, struct lruvec *lruvec)
{
	struct swap_info_struct *si = swap_entry_info_bug(e, "swap_readpage");
	int err = si ? swap_rw(si, e, data, false) : -EIO;

	if (err && si)
		__atomic_fetch_add(&si->read_errors, 1, __ATOMIC_RELAXED);
	if (lruvec)
		lruvec_count_event_atomic(lruvec, err ? EV_SWAP_READ_ERROR : EV_PSWPIN, 1);
	return err;
}

/* ---- memcg ----------------------------------------------------------------------------------- */

struct lv_memcg *lookup_swap_cgroup(struct lv_machine *m, swp_entry_t e)
{
	struct swap_info_struct *si;
	struct lv_memcg *memcg = NULL;

	if (mem_cgroup_disabled(m))
		return NULL;
	rcu_read_lock();
	si = swp_type(e) < LV_MAX_SWAPFILES ? rcu_dereference_lv(m->swap_info[swp_type(e)]) : NULL;
	if (si && swp_offset(e) && swp_offset(e) < si->max) {
		unsigned short *rec = &si->swap_cgroup[swp_offset(e)];

		for (;;) {
			unsigned short id = __atomic_load_n(rec, __ATOMIC_ACQUIRE);

			memcg = record_resolve(m, id);
			/* Unpublished by a removal that has rewritten the record: reload it. */
			if (!id || memcg || __atomic_load_n(rec, __ATOMIC_ACQUIRE) == id)
				break;
		}
	}
	if (!memcg)
		memcg = m->root;
	/* A memcg being removed takes no new charges: its closest live ancestor does. */
	while (memcg->parent &&
	       (__atomic_load_n(&memcg->dying, __ATOMIC_SEQ_CST) || !css_tryget(memcg)))
		memcg = memcg->parent;
	if (!memcg->parent)
		css_get(memcg);
	rcu_read_unlock();
	return memcg;
}

long get_nr_swap_pages(struct lv_machine *m)
{
	return __atomic_load_n(&m->nr_swap_pages, __ATOMIC_RELAXED);
}

/* swap_free_slots_all - free slots on every writeok device of the process (no machine named). */
static long swap_free_slots_all(void)
{
	long nr = 0;

	rcu_read_lock();
	for (unsigned int type = 0; type < LV_MAX_SWAPFILES; type++) {
		struct swap_info_struct *si = rcu_dereference_lv(swap_table[type]);
		long v = si ? __atomic_load_n(&si->avail, __ATOMIC_RELAXED) : 0;

		if (v & SWAP_AVAIL_WRITEOK)
			nr += v & SWAP_AVAIL_MASK;
	}
	rcu_read_unlock();
	return nr;
}

/*
 * A NULL memcg (memcg disabled) names no machine: the free slots of every device of the
 * process are the answer then, which callers with a machine at hand get exactly from
 * get_nr_swap_pages().
 */
long mem_cgroup_get_nr_swap_pages(struct lv_memcg *memcg)
{
	long nr;

	if (!memcg)
		return swap_free_slots_all();
	nr = get_nr_swap_pages(memcg->machine);
	for (struct lv_memcg *c = memcg; c->parent && nr > 0; c = c->parent) {
		long room = __atomic_load_n(&c->swap_max, __ATOMIC_RELAXED) -
			    __atomic_load_n(&c->swap_usage, __ATOMIC_RELAXED);

		if (room < nr)
			nr = room;
	}
	return nr > 0 ? nr : 0;
}

unsigned int mem_cgroup_swappiness(struct lv_machine *m, struct lv_memcg *memcg)
{
	int s = memcg ? __atomic_load_n(&memcg->swappiness, __ATOMIC_RELAXED) : -1;

	return s >= 0 ? (unsigned int)s : __atomic_load_n(&m->swappiness, __ATOMIC_RELAXED);
}

void swap_reparent(struct lv_machine *m, struct lv_memcg *from, struct lv_memcg *to)
{
	unsigned short old = (unsigned short)from->id, new = (unsigned short)to->id;

	lockdep_assert_held(&m->memcg_mutex);
	/*
	 * A slot is charged before its record names @from and uncharged after the record is
	 * cleared: with no swap charged to @from (which has no children left), none does.
	 */
	if (!__atomic_load_n(&from->swap_usage, __ATOMIC_SEQ_CST))
		return;
	for (unsigned int type = 0; type < LV_MAX_SWAPFILES; type++) {
		struct swap_info_struct *si = rcu_dereference_lv(m->swap_info[type]);

		if (!si)
			continue;
		for (unsigned long off = 1; off < si->max; off++) {
			unsigned short *rec = &si->swap_cgroup[off], id = old;

			if (__atomic_load_n(rec, __ATOMIC_RELAXED) == old)
				__atomic_compare_exchange_n(rec, &id, new, false, __ATOMIC_RELEASE,
							    __ATOMIC_RELAXED);
		}
	}
}

/* ---- devices --------------------------------------------------------------------------------- */

/* swap_info_free - free what swap_info_alloc() made (parts may be missing). */
static void swap_info_free(struct swap_info_struct *si)
{
	for (unsigned long i = 0; si->spaces && i < si->nr_spaces; i++)
		swap_space_destroy(si->spaces[i]);
	free(si->spaces);
	if (si->area)
		munmap(si->area, si->max * LV_PAGE_SIZE);
	if (si->cluster_info) {
		for (unsigned long i = 0; i < si->nr_clusters; i++)
			lv_lock_destroy(&si->cluster_info[i].lock);
		free(si->cluster_info);
	}
	free(si->percpu_cluster);
	free(si->swap_cgroup);
	free(si->swap_map);
	lv_lock_destroy(&si->lock);
	free(si);
}

/*
 * swap_info_alloc - a device of @max slots (whole clusters) on @fd, not yet published, with
 * every allocation it needs made. Return: the device, or NULL (nothing kept).
 * Context: may block.
 */
static struct swap_info_struct *swap_info_alloc(struct lv_machine *m, unsigned int type, int fd,
						unsigned long max, int prio)
{
	struct swap_info_struct *si = aligned_alloc(64, sizeof(*si));
	size_t ci_size, pcp_size = m->nr_slots * sizeof(struct percpu_cluster);

	if (!si)
		return NULL;
	memset(si, 0, sizeof(*si));
	si->machine = m;
	si->type = type;
	si->prio = prio;
	si->fd = fd;
	si->max = max;
	si->nr_clusters = max / SWAPFILE_CLUSTER;
	lv_lock_init(&si->lock, m->cfg.lock_backend, LV_LOCK_CLASS_SWAP, m->lock_sites);
	INIT_LIST_HEAD(&si->free_clusters);
	INIT_LIST_HEAD(&si->nonfull_clusters);
	if (si->nr_clusters > SIZE_MAX / sizeof(struct swap_cluster_info))
		goto fail;
	ci_size = si->nr_clusters * sizeof(struct swap_cluster_info);
	si->swap_map = calloc(max, 1);
	si->swap_cgroup = calloc(max, sizeof(*si->swap_cgroup));
	si->percpu_cluster = aligned_alloc(64, pcp_size);
	if (!si->swap_map || !si->swap_cgroup || !si->percpu_cluster)
		goto fail;
	memset(si->percpu_cluster, 0, pcp_size);
	si->cluster_info = aligned_alloc(64, ci_size);
	if (!si->cluster_info)
		goto fail;
	memset(si->cluster_info, 0, ci_size);
	for (unsigned long i = 0; i < si->nr_clusters; i++) {
		struct swap_cluster_info *ci = &si->cluster_info[i];

		lv_lock_init(&ci->lock, m->cfg.lock_backend, LV_LOCK_CLASS_SWAP, m->lock_sites);
		/* Offset 0 is never handed out: counted used, cluster 0 is never free. */
		ci->count = i ? 0 : 1;
		ci->state = i ? CLUSTER_FREE : CLUSTER_NONFULL;
		list_add_tail(&ci->list, i ? &si->free_clusters : &si->nonfull_clusters);
	}
	if (fd < 0) {
		void *area = mmap(NULL, max * LV_PAGE_SIZE, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		if (area == MAP_FAILED)
			goto fail;
		si->area = area;
	}
	si->nr_spaces = (max + SWAP_ADDRESS_SPACE_PAGES - 1) >> SWAP_ADDRESS_SPACE_SHIFT;
	si->spaces = calloc(si->nr_spaces, sizeof(*si->spaces));
	if (!si->spaces)
		goto fail;
	for (unsigned long i = 0; i < si->nr_spaces; i++)
		if (!(si->spaces[i] = swap_space_create(m)))
			goto fail;
	si->avail = (long)(max - 1); /* writeok only once published */
	si->on = 1;
	return si;
fail:
	swap_info_free(si);
	return NULL;
}

static int swap_type_reserve(void)
{
	int type = -EBUSY;

	pthread_mutex_lock(&swap_type_mutex);
	for (int t = 0; t < LV_MAX_SWAPFILES; t++)
		if (!swap_type_used[t]) {
			swap_type_used[t] = true;
			type = t;
			break;
		}
	pthread_mutex_unlock(&swap_type_mutex);
	return type;
}

static void swap_type_release(unsigned int type)
{
	pthread_mutex_lock(&swap_type_mutex);
	swap_type_used[type] = false;
	pthread_mutex_unlock(&swap_type_mutex);
}

/* swap_valid_fd - @fd is a regular file or a block device open for reading and writing. */
static bool swap_valid_fd(int fd)
{
	struct stat st;
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0 || (flags & O_ACCMODE) != O_RDWR || fstat(fd, &st))
		return false;
	return S_ISREG(st.st_mode) || S_ISBLK(st.st_mode);
}

int lv_swap_on(struct lv_machine *m, int fd, size_t size, int prio)
{
	unsigned long max = size / LV_PAGE_SIZE / SWAPFILE_CLUSTER * SWAPFILE_CLUSTER;
	struct swap_info_struct *si;
	int type;

	if (!m || m->cfg.metadata_only || fd < -1 || !max)
		return -EINVAL;
	if (fd >= 0 && !swap_valid_fd(fd))
		return -EINVAL;
	pthread_mutex_lock(&m->swap_mutex);
	type = swap_type_reserve();
	if (type < 0)
		goto out;
	si = swap_info_alloc(m, (unsigned int)type, fd, max, prio);
	if (!si) {
		swap_type_release((unsigned int)type);
		type = -ENOMEM;
		goto out;
	}
	rcu_assign_pointer_lv(swap_table[type], si);
	rcu_assign_pointer_lv(m->swap_info[type], si);
	swap_writeok_set(si);
out:
	pthread_mutex_unlock(&m->swap_mutex);
	return type;
}

/*
 * swap_retire_lock_stats - add the device's locks to the machine's retired totals.
 * Context: m->memcg_mutex held, in the same hold that unlists the device.
 */
static void swap_retire_lock_stats(struct lv_machine *m, struct swap_info_struct *si)
{
	lockdep_assert_held(&m->memcg_mutex);
	lv_lock_stat_add(&m->retired_lock_stats[LV_LOCK_CLASS_SWAP], &si->lock);
	for (unsigned long i = 0; i < si->nr_clusters; i++)
		lv_lock_stat_add(&m->retired_lock_stats[LV_LOCK_CLASS_SWAP],
				 &si->cluster_info[i].lock);
}

/*
 * swap_device_free - the end of swapoff and of teardown: no pin can be taken any more, the
 * device is unlisted and freed ("Pins and teardown" at the top).
 * Context: m->swap_mutex held; no allocation from the device can start; may block.
 */
static void swap_device_free(struct lv_machine *m, struct swap_info_struct *si)
{
	unsigned int type = si->type;

	__atomic_store_n(&si->on, 0, __ATOMIC_SEQ_CST);
	synchronize_rcu();
	for (unsigned int spins = 0; __atomic_load_n(&si->users, __ATOMIC_ACQUIRE); spins++)
		spins < 100 ? sched_yield() : usleep(100);
	lv_lock_acquire(&m->memcg_mutex);
	swap_retire_lock_stats(m, si);
	rcu_assign_pointer_lv(m->swap_info[type], NULL);
	lv_lock_release(&m->memcg_mutex);
	rcu_assign_pointer_lv(swap_table[type], NULL);
	synchronize_rcu();
	rcu_free_begin();
	swap_info_free(si);
	rcu_free_end();
	swap_type_release(type);
}

/* swap_unused - whether no slot of @si is in use (every byte 0). */
static bool swap_unused(struct swap_info_struct *si)
{
	if (__atomic_load_n(&si->inuse_pages, __ATOMIC_ACQUIRE))
		return false;
	for (unsigned long off = 0; off < si->max; off++)
		if (__atomic_load_n(&si->swap_map[off], __ATOMIC_ACQUIRE))
			return false;
	return true;
}

/* swapoff_fits - whether memory could take the device's pages back: free and page cache. */
static bool swapoff_fits(struct lv_machine *m, struct swap_info_struct *si)
{
	uint64_t room = 0;

	for (unsigned int nid = 0; nid < m->cfg.nr_nodes; nid++)
		room += lv_node_stat(m, (int)nid, LV_NR_FREE) +
			lv_node_stat(m, (int)nid, LV_NR_INACTIVE_FILE) +
			lv_node_stat(m, (int)nid, LV_NR_ACTIVE_FILE);
	return (uint64_t)__atomic_load_n(&si->inuse_pages, __ATOMIC_RELAXED) <= room;
}

int lv_swap_off(struct lv_machine *m, int id)
{
	struct swap_info_struct *si;
	int err = 0;

	if (!m || id < 0 || id >= LV_MAX_SWAPFILES)
		return -EINVAL;
	pthread_mutex_lock(&m->swap_mutex);
	si = m->swap_info[id];
	if (!si) {
		err = -EINVAL;
		goto out;
	}
	swap_writeok_clear(si);
	/*
	 * folio_alloc_swap() reserves a slot and marks it in one RCU read-side section: after a
	 * grace period every reservation made before writeok was cleared is marked, and the walks
	 * below see it.
	 */
	synchronize_rcu();
	swap_drop_percpu(si);
	if (!swapoff_fits(m, si))
		err = -ENOMEM;
	/*
	 * A swap-out or a read-ahead that took its slot before writeok was cleared may still be
	 * in flight: its page table entry or its cache folio appears when it ends. Walk again
	 * until no slot is left, as the kernel's swapoff loops on inuse_pages.
	 */
	while (!err) {
		err = try_to_unuse(m, (unsigned int)id);
		if (err)
			break;
		swap_cache_clear(m, (unsigned int)id);
		if (swap_unused(si))
			break;
		usleep(100);
	}
	if (err) {
		swap_writeok_set(si);
		goto out;
	}
	swap_device_free(m, si);
out:
	pthread_mutex_unlock(&m->swap_mutex);
	return err;
}

void swap_exit(struct lv_machine *m)
{
	pthread_mutex_lock(&m->swap_mutex);
	for (unsigned int type = 0; type < LV_MAX_SWAPFILES; type++) {
		struct swap_info_struct *si = m->swap_info[type];
		long inuse;

		if (!si)
			continue;
		swap_writeok_clear(si);
		swap_drop_percpu(si);
		swap_cache_clear(m, type);
		inuse = __atomic_load_n(&si->inuse_pages, __ATOMIC_RELAXED);
		if (inuse)
			fprintf(stderr,
				"lruvec: machine destroyed with %ld slots in use on swap device "
				"%u\n",
				inuse, type);
		swap_device_free(m, si);
	}
	pthread_mutex_unlock(&m->swap_mutex);
}

int lv_swap_info(struct lv_machine *m, int id, struct lv_swap_info *info)
{
	struct swap_info_struct *si;
	int err = -EINVAL;

	if (!m || !info || id < 0 || id >= LV_MAX_SWAPFILES)
		return -EINVAL;
	rcu_read_lock();
	si = rcu_dereference_lv(m->swap_info[id]);
	if (si && __atomic_load_n(&si->on, __ATOMIC_SEQ_CST)) {
		lv_lock_acquire(&si->lock);
		*info = (struct lv_swap_info){
			.slots = si->max - 1,
			.used = (size_t)__atomic_load_n(&si->inuse_pages, __ATOMIC_RELAXED),
			.prio = si->prio,
			.in_memory = si->fd < 0,
			.write_errors = __atomic_load_n(&si->write_errors, __ATOMIC_RELAXED),
			.read_errors = __atomic_load_n(&si->read_errors, __ATOMIC_RELAXED),
		};
		lv_lock_release(&si->lock);
		err = 0;
	}
	rcu_read_unlock();
	return err;
}

long swap_inuse_pages(struct lv_machine *m)
{
	long nr = 0;

	rcu_read_lock();
	for (unsigned int type = 0; type < LV_MAX_SWAPFILES; type++) {
		struct swap_info_struct *si = rcu_dereference_lv(m->swap_info[type]);

		if (si)
			nr += __atomic_load_n(&si->inuse_pages, __ATOMIC_RELAXED);
	}
	rcu_read_unlock();
	return nr;
}

void for_each_swap_lock(struct lv_machine *m, void (*fn)(struct lv_lock *, void *), void *arg)
{
	lockdep_assert_held(&m->memcg_mutex);
	for (unsigned int type = 0; type < LV_MAX_SWAPFILES; type++) {
		struct swap_info_struct *si = rcu_dereference_lv(m->swap_info[type]);

		if (!si)
			continue;
		fn(&si->lock, arg);
		for (unsigned long i = 0; i < si->nr_clusters; i++)
			fn(&si->cluster_info[i].lock, arg);
	}
}

/* ---- memcg interface ------------------------------------------------------------------------- */

int lv_memcg_set_swap_max(struct lv_memcg *memcg, size_t pages)
{
	return memcg_set_limit(memcg, true, pages);
}

size_t lv_memcg_swap_usage(const struct lv_memcg *memcg)
{
	size_t used;

	if (!memcg)
		return 0;
	rcu_read_lock();
	memcg_handle_hook_call(memcg);
	/* The root is not counted: every slot in use is charged to it or below. */
	if (memcg->parent)
		used = (size_t)__atomic_load_n(&memcg->swap_usage, __ATOMIC_RELAXED);
	else
		used = (size_t)swap_inuse_pages(memcg->machine);
	rcu_read_unlock();
	return used;
}

int lv_memcg_set_swappiness(struct lv_memcg *memcg, unsigned int swappiness)
{
	if (swappiness > 200 || !memcg)
		return -EINVAL;
	rcu_read_lock();
	memcg_handle_hook_call(memcg);
	if (!memcg->parent)
		__atomic_store_n(&memcg->machine->swappiness, swappiness, __ATOMIC_RELAXED);
	else
		__atomic_store_n(&memcg->swappiness, (int)swappiness, __ATOMIC_RELAXED);
	rcu_read_unlock();
	return 0;
}

/* ---- lv_check() ------------------------------------------------------------------------------ */

#define swap_bad(bad, arg, si, ...)                                                                \
	do {                                                                                       \
		char msg_[160];                                                                    \
                                                                                                   \
		snprintf(msg_, sizeof(msg_), __VA_ARGS__);                                         \
		(bad)((arg), msg_, (si));                                                          \
	} while (0)

/*
 * lv_check()'s count of the slots recorded per memcg: one entry per memcg of the tree, sorted
 * by id. Sized by the tree rather than by the id space (65535 ids): the check runs after every
 * few calls in the fuzzer, and half a megabyte zeroed per check was most of its time.
 */
struct swap_charged {
	struct swap_charged_id {
		unsigned int id;
		long slots;
	} * ids;
	size_t nr;
};

static size_t memcg_tree_size(struct lv_memcg *memcg)
{
	size_t n = 1;
	struct list_head *pos;

	list_for_each (pos, &memcg->children)
		n += memcg_tree_size(list_entry(pos, struct lv_memcg, sibling));
	return n;
}

static void memcg_tree_ids(struct lv_memcg *memcg, struct swap_charged *c)
{
	struct list_head *pos;

	c->ids[c->nr++] = (struct swap_charged_id){ .id = memcg->id };
	list_for_each (pos, &memcg->children)
		memcg_tree_ids(list_entry(pos, struct lv_memcg, sibling), c);
}

static int cmp_charged_id(const void *a, const void *b)
{
	unsigned int x = ((const struct swap_charged_id *)a)->id;
	unsigned int y = ((const struct swap_charged_id *)b)->id;

	return (x > y) - (x < y);
}

/* charged_slot - the count of memcg @id, or NULL if @id is not in the tree (removed). */
static long *charged_slot(struct swap_charged *c, unsigned int id)
{
	struct swap_charged_id key = { .id = id }, *e;

	e = bsearch(&key, c->ids, c->nr, sizeof(*c->ids), cmp_charged_id);
	return e ? &e->slots : NULL;
}

/*
 * check_swap_device - one device's counts, lists and per-CPU clusters; @charged (NULL with
 * memcg disabled) counts the slots recorded for each memcg of the tree.
 * Context: m->memcg_mutex held; takes the device lock.
 */
static void check_swap_device(struct lv_machine *m, struct swap_info_struct *si,
			      struct swap_charged *charged,
			      void (*bad)(void *, const char *, const void *), void *arg)
{
	unsigned long inuse = 0, owned = 0, named = 0;
	long avail = __atomic_load_n(&si->avail, __ATOMIC_RELAXED);
	struct list_head *pos;

	lv_lock_acquire(&si->lock); /* the states and lists (quiescent: the counts are still) */
	for (unsigned long i = 0; i < si->nr_clusters; i++) {
		struct swap_cluster_info *ci = &si->cluster_info[i];
		unsigned int used = i ? 0 : 1;

		for (unsigned long off = i * SWAPFILE_CLUSTER; off < (i + 1) * SWAPFILE_CLUSTER;
		     off++) {
			unsigned char v = __atomic_load_n(&si->swap_map[off], __ATOMIC_RELAXED);
			unsigned short id =
				__atomic_load_n(&si->swap_cgroup[off], __ATOMIC_RELAXED);
			long *n;

			if (!off && v)
				swap_bad(bad, arg, si, "swap device %u: offset 0 in use (%#x)",
					 si->type, v);
			if (!v && id)
				swap_bad(bad, arg, si,
					 "swap device %u: free slot %lu records memcg %u", si->type,
					 off, id);
			if (!v)
				continue;
			used++;
			inuse++;
			if (!mem_cgroup_disabled(m) && !mem_cgroup_from_id(m, id))
				swap_bad(bad, arg, si,
					 "swap device %u: slot %lu charged to unknown memcg %u",
					 si->type, off, id);
			else if (charged && (n = charged_slot(charged, id)))
				(*n)++;
		}
		if (used != __atomic_load_n(&ci->count, __ATOMIC_RELAXED))
			swap_bad(bad, arg, si,
				 "swap device %u: cluster %lu has %u slots used, count %u",
				 si->type, i, used, ci->count);
		if (ci->state == CLUSTER_OWNED)
			owned++;
		else if (ci->state == CLUSTER_FULL && used != SWAPFILE_CLUSTER)
			swap_bad(bad, arg, si,
				 "swap device %u: cluster %lu full with %u slots used", si->type, i,
				 used);
	}
	list_for_each (pos, &si->free_clusters) {
		struct swap_cluster_info *ci = list_entry(pos, struct swap_cluster_info, list);

		if (ci->state != CLUSTER_FREE || ci->count)
			swap_bad(bad, arg, si,
				 "swap device %u: cluster %ld on the free list (%u used)", si->type,
				 (long)(ci - si->cluster_info), ci->count);
	}
	list_for_each (pos, &si->nonfull_clusters) {
		struct swap_cluster_info *ci = list_entry(pos, struct swap_cluster_info, list);

		if (ci->state != CLUSTER_NONFULL || !ci->count || ci->count >= SWAPFILE_CLUSTER)
			swap_bad(bad, arg, si,
				 "swap device %u: cluster %ld on the nonfull list (%u used)",
				 si->type, (long)(ci - si->cluster_info), ci->count);
	}
	/* Quiescent: every owned cluster is in exactly one CPU slot's cache. */
	for (unsigned int cpu = 0; cpu < m->nr_slots; cpu++) {
		unsigned long n = __atomic_load_n(&si->percpu_cluster[cpu].next, __ATOMIC_RELAXED);

		if (!n)
			continue;
		named++;
		if (n >= si->max || si->cluster_info[n / SWAPFILE_CLUSTER].state != CLUSTER_OWNED)
			swap_bad(bad, arg, si,
				 "swap device %u: CPU slot %u caches offset %lu, not "
				 "in a cluster it owns",
				 si->type, cpu, n);
		for (unsigned int other = 0; other < cpu; other++)
			if (__atomic_load_n(&si->percpu_cluster[other].next, __ATOMIC_RELAXED) /
					    SWAPFILE_CLUSTER ==
				    n / SWAPFILE_CLUSTER &&
			    __atomic_load_n(&si->percpu_cluster[other].next, __ATOMIC_RELAXED))
				swap_bad(bad, arg, si,
					 "swap device %u: CPU slots %u and %u cache one cluster",
					 si->type, other, cpu);
	}
	lv_lock_release(&si->lock);
	if (owned != named)
		swap_bad(bad, arg, si,
			 "swap device %u: %lu clusters owned, %lu cached by CPU slots", si->type,
			 owned, named);
	if (inuse != (unsigned long)__atomic_load_n(&si->inuse_pages, __ATOMIC_RELAXED))
		swap_bad(bad, arg, si, "swap device %u: %lu slots used, inuse_pages %ld", si->type,
			 inuse, si->inuse_pages);
	if ((unsigned long)(avail & SWAP_AVAIL_MASK) != si->max - 1 - inuse)
		swap_bad(bad, arg, si, "swap device %u: %ld free slots counted, %lu free", si->type,
			 avail & SWAP_AVAIL_MASK, si->max - 1 - inuse);
	if (!(avail & SWAP_AVAIL_WRITEOK))
		swap_bad(bad, arg, si, "swap device %u: on but not writeok", si->type);
}

/* check_swap_usage - @memcg's subtree's slots, from the records, against its swap_usage. */
static long check_swap_usage(struct lv_memcg *memcg, struct swap_charged *charged,
			     void (*bad)(void *, const char *, const void *), void *arg)
{
	long slots = *charged_slot(charged, memcg->id);
	struct list_head *pos;

	list_for_each (pos, &memcg->children)
		slots += check_swap_usage(list_entry(pos, struct lv_memcg, sibling), charged, bad,
					  arg);
	if (memcg->parent && slots != __atomic_load_n(&memcg->swap_usage, __ATOMIC_RELAXED))
		swap_bad(bad, arg, memcg, "memcg '%s': swap usage %ld, slots charged %ld",
			 memcg->name, memcg->swap_usage, slots);
	return slots;
}

void check_swap(struct lv_machine *m, void (*bad)(void *, const char *, const void *), void *arg)
{
	struct swap_charged tree = { 0 }, *charged = NULL;
	long free_slots = 0;

	lv_lock_acquire(&m->memcg_mutex);
	if (!mem_cgroup_disabled(m)) {
		/* lv_check()'s scratch: "(calloc)" is no fault site (fault.h). */
		tree.ids = (calloc)(memcg_tree_size(m->root), sizeof(*tree.ids));
		if (!tree.ids) {
			lv_lock_release(&m->memcg_mutex);
			bad(arg, "swap check: out of memory", NULL);
			return;
		}
		memcg_tree_ids(m->root, &tree);
		qsort(tree.ids, tree.nr, sizeof(*tree.ids), cmp_charged_id);
		charged = &tree;
	}
	for (unsigned int type = 0; type < LV_MAX_SWAPFILES; type++) {
		struct swap_info_struct *si = rcu_dereference_lv(m->swap_info[type]);

		if (!si)
			continue;
		if (rcu_dereference_lv(swap_table[type]) != si)
			swap_bad(bad, arg, si, "swap device %u: not in the process's table", type);
		if (__atomic_load_n(&si->users, __ATOMIC_RELAXED))
			swap_bad(bad, arg, si, "swap device %u: pinned at a quiescent point", type);
		check_swap_device(m, si, charged, bad, arg);
		free_slots += __atomic_load_n(&si->avail, __ATOMIC_RELAXED) & SWAP_AVAIL_MASK;
	}
	if (free_slots != get_nr_swap_pages(m))
		swap_bad(bad, arg, m, "nr_swap_pages %ld, free slots %ld", get_nr_swap_pages(m),
			 free_slots);
	if (charged)
		check_swap_usage(m->root, charged, bad, arg);
	lv_lock_release(&m->memcg_mutex);
	free(tree.ids);
}

unsigned long swap_type_max(struct lv_machine *m, unsigned int type)
{
	struct swap_info_struct *si;
	unsigned long max = 0;

	if (type >= LV_MAX_SWAPFILES)
		return 0;
	rcu_read_lock();
	si = rcu_dereference_lv(m->swap_info[type]);
	if (si)
		max = si->max;
	rcu_read_unlock();
	return max;
}
