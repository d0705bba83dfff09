// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The page cache: files, their index → folio trees, the read path, truncation, eviction.
 *
 * Theory of operation.
 *
 * Each file (struct lv_file, the kernel's address_space) maps page indexes to folios in a
 * radix tree of 64-way nodes, like the kernel's xarray: a slot holds nothing, a folio, or a
 * shadow entry (an evicted folio's workingset record, tagged by its low bit). Lookups are
 * lock-free under RCU; every change to the tree happens under the file's mapping lock (the
 * kernel's i_pages lock), which ranks above the LRU locks: the page cache is never changed
 * with an lruvec lock held, and no lruvec lock is taken under the mapping lock. Nodes are
 * freed with call_rcu(). A radix tree was chosen over liburcu's cds_lfht because a hash table
 * needs a node allocation and an RCU free per page, where the tree's nodes serve 64 pages and
 * are reused as pages come and go.
 *
 * The tree holds one reference on each folio. A reader takes a speculative reference
 * (try-get, then re-check the slot) and drops it after copying. A miss allocates a folio
 * charged to the reader's memcg, inserts it locked (PG_locked) under the mapping lock, adds
 * it to the LRU and fills it from the file with pread(); concurrent readers of that index
 * find the locked folio and wait. A failed fill marks PG_error, wakes the waiters (they
 * return -EIO) and removes the folio again. A large folio over a hole of a sparse file is
 * published at once and zeroed a page at a time by its readers (folio_zero_pages()).
 *
 * Readahead (cfg.readahead_pages) turns a sequential reader's miss into a run: the pages from
 * the missing one up to the window's end, the first page cached already or the end of the
 * file are allocated, inserted under one hold of the mapping lock, added to the LRU and
 * filled one after another, and only then published (folio_end_fill()). Besides the lock
 * holds it saves, this lets the fills' stores of a whole run drain together: the locked
 * instruction that publishes a fill waits for every store before it, and paid once per page
 * it cost a reader as much as the zeroing itself. A page read ahead carries PG_readahead until
 * its first read, which marks it accessed as a missing read would have (ra_first_read()).
 *
 * The bytes of the file are those of @fd below the smallest size the file has had since it was
 * opened (fill_limit), zeros after them, as a file that ftruncate(2) shrank and grew again
 * reads: a fill reads nothing of @fd past that limit, and a truncation drops every cached
 * page holding a byte at or past the new size (the one holding the new end included, rather
 * than zeroing its tail under readers that may still copy it), so no byte of @fd past the
 * limit is ever cached. A large folio holding the new end is split first (huge_memory.c), so
 * that its pages before the end stay cached; one that cannot be split goes whole.
 *
 * Eviction (remove_mapping(), called by reclaim on an isolated folio) freezes the reference
 * count from exactly 2 (the tree's and the isolation's) to 0 under the mapping lock, so a
 * reader that holds a reference makes it fail, and replaces the folio with a shadow entry.
 *
 * Shadow entries keep tree nodes alive after their folios are gone. A node holding only
 * shadows is put on the shadow list of the lruvec its last folio left (the kernel's
 * memcg-aware shadow_nodes list_lru: one list per memcg and node), so that one tenant's
 * evictions never wait on another tenant's lock. When a reclaim pass over an lruvec finds
 * its list longer than an eighth of its pages (the kernel's limit; at least 64 nodes), the
 * oldest are freed with their shadows, so the page cache's own memory stays bounded however
 * much of a huge sparse file is read. A removed memcg's lists move to its parent's, which
 * are then shrunk (memcontrol.c), as the kernel reparents its list_lru; a node's binding
 * (shadow_lruvec) is therefore read under RCU and re-checked under the list's lock, like a
 * folio's lruvec.
 */
#include "internal.h"
#include "mm_inline.h"
#include "swap.h"

#include <limits.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

/* How long a reader waits for another's fill before it sleeps (fill_done_soon()). */
#define FILL_SPIN_NS  (20 * 1000)
#define FILL_YIELD_NS (1000 * 1000)

#define XA_CHUNK_SHIFT 6
#define XA_CHUNK_SIZE  (1u << XA_CHUNK_SHIFT)
#define XA_CHUNK_MASK  (XA_CHUNK_SIZE - 1)
#define MAX_FILE_BYTES (1ull << 52)
#define BITS_PER_LONG  (8 * (int)sizeof(long))

#define SHADOW_NODES_MIN 64 /* an lruvec's shadow list is not shrunk below this */

_Static_assert((1 << LV_MAX_FILE_FOLIO_ORDER) <= BITS_PER_LONG,
	       "a hole folio keeps one bit per page in a word");

struct xa_node {
	struct xa_node *parent;	 /* mapping lock; in the machine's xa_cache, the next node */
	unsigned char shift;	 /* constant: index bits below this node */
	unsigned char offset;	 /* constant: slot in the parent */
	unsigned char count;	 /* mapping lock: used slots */
	unsigned char nr_values; /* mapping lock: slots holding shadow entries */
	/* Written under the mapping lock and shadow_lruvec->shadow_lock; read under either. */
	bool on_shadow_list;
	struct lv_file *mapping;       /* constant */
	struct lv_machine *machine;    /* constant: its cache, for the free after a grace period */
	struct list_head private_list; /* shadow_lruvec->shadow_lock */
	/*
	 * The lruvec whose shadow list holds us (or last held us): set under the mapping lock and
	 * that lruvec's shadow lock; changed by reparenting under the shadow locks only.
	 */
	struct lruvec *shadow_lruvec;
	struct rcu_head rcu;
	void *slots[XA_CHUNK_SIZE]; /* written under the mapping lock, read under RCU */
};

struct lv_file {
	struct lv_machine *machine; /* constant */
	struct list_head files;	    /* machine->memcg_mutex: the machine's open files */
	int fd;			    /* constant; -1 for a sparse file */
	uint64_t size;		    /* mapping lock for writes; read racily */
	/*
	 * Mapping lock: bytes of @fd below it may be read, the smallest size the file has had
	 * since it was opened. Bytes past it read as zeros, as after ftruncate(2).
	 */
	uint64_t fill_limit;
	bool swap_space;       /* constant: a swap device's cache (swap_space_create()) */
	struct xa_node *root;  /* mapping lock for writes; RCU for reads */
	unsigned long nrpages; /* mapping lock; read racily */
	struct i_mmap i_mmap;  /* its own lock: the address spaces mapping the file */
	struct rcu_head rcu;
	/*
	 * The mapping lock. Reclaim finds a file through folio->mapping under RCU and locks it;
	 * lv_file_close() frees the file after a grace period, so the lock stays valid.
	 */
	struct lv_lock lock ____cacheline_aligned;
};

static bool xa_is_value(const void *entry)
{
	return (uintptr_t)entry & 1;
}

/* ---- the tree ------------------------------------------------------------------------------- */

/*
 * xa_load_slot - the entry at @index, and in *@slotp its slot (NULL if there is none), so that
 * a caller can re-check the entry without walking again (the kernel's xas_reload()): a leaf
 * stays in place while it holds anything, and is freed only after a grace period.
 * Context: RCU read-side critical section.
 */
static void *xa_load_slot(struct lv_file *file, unsigned long index, void ***slotp)
{
	struct xa_node *node = rcu_dereference_lv(file->root);

	*slotp = NULL;
	if (!node || (index >> node->shift) >= XA_CHUNK_SIZE)
		return NULL;
	for (;;) {
		void **slot = &node->slots[(index >> node->shift) & XA_CHUNK_MASK];
		void *entry = rcu_dereference_lv(*slot);

		if (!node->shift) {
			*slotp = slot;
			return entry;
		}
		if (!entry)
			return NULL;
		node = entry;
	}
}

/*
 * The machine's cache of freed tree nodes (struct xa_node_cache): at most XA_CACHE_MAX, about
 * 300 KiB. Under ASan none is kept, so that a node used after its grace period is caught.
 */
#ifdef LV_ASAN
#define XA_CACHE_MAX 0
#else
#define XA_CACHE_MAX 512
#endif

static struct xa_node *xa_node_alloc(struct lv_file *file, struct xa_node *parent,
				     unsigned int shift, unsigned int offset)
{
	struct xa_node_cache *cache = &file->machine->xa_cache;
	struct xa_node *node = NULL;

	if (READ_ONCE(cache->count)) {
		pthread_mutex_lock(&cache->lock);
		node = cache->free;
		if (node) {
			cache->free = node->parent;
			WRITE_ONCE(cache->count, cache->count - 1);
		}
		pthread_mutex_unlock(&cache->lock);
	}
	if (node)
		memset(node, 0, sizeof(*node));
	else if (!(node = calloc(1, sizeof(*node))))
		return NULL;
	node->machine = file->machine;
	node->parent = parent;
	node->shift = (unsigned char)shift;
	node->offset = (unsigned char)offset;
	node->mapping = file;
	INIT_LIST_HEAD(&node->private_list);
	return node;
}

static void xa_node_rcu_free(struct rcu_head *head)
{
	struct xa_node *node = container_of(head, struct xa_node, rcu);
	struct xa_node_cache *cache;

	rcu_free_begin();
	/* lv_machine_destroy() waits for every callback before the machine goes. */
	cache = &node->machine->xa_cache;
	pthread_mutex_lock(&cache->lock);
	if (cache->count < XA_CACHE_MAX) {
		node->parent = cache->free;
		cache->free = node;
		WRITE_ONCE(cache->count, cache->count + 1);
		node = NULL;
	}
	pthread_mutex_unlock(&cache->lock);
	free(node);
	rcu_free_end();
}

/* xa_cache_destroy - free the cached nodes. Context: machine teardown, after every callback. */
void xa_cache_destroy(struct lv_machine *m)
{
	struct xa_node *node = m->xa_cache.free;

	while (node) {
		struct xa_node *next = node->parent;

		free(node);
		node = next;
	}
	m->xa_cache.free = NULL;
	m->xa_cache.count = 0;
	pthread_mutex_destroy(&m->xa_cache.lock);
}

/*
 * shadow_lock_node - lock the shadow list @node is bound to, following a concurrent
 * reparenting (lock, re-check, as folio_lruvec_lock()). Return: that lruvec, locked.
 * Context: RCU read side (a reparented-from memcg is freed after a grace period).
 */
static struct lruvec *shadow_lock_node(struct xa_node *node)
{
	for (;;) {
		struct lruvec *lruvec = READ_ONCE(node->shadow_lruvec);

		/* The list_lru the kernel's workingset_update_node() deletes the node from. */
		lv_lock_acquire_at(&lruvec->shadow_lock, "list_lru_del");
		if (READ_ONCE(node->shadow_lruvec) == lruvec)
			return lruvec;
		lv_lock_release(&lruvec->shadow_lock);
	}
}

/*
 * shadow_lock_live - lock the shadow list of @lruvec, or of its closest ancestor whose memcg
 * is not being removed: a list that reparenting has already emptied must not take new nodes.
 * The remover sets ->dying before it locks the list to move it, so one seen clear under the
 * lock is moved later. Return: the lruvec locked.
 * Context: RCU read side (a memcg pins its parent).
 */
static struct lruvec *shadow_lock_live(struct lruvec *lruvec)
{
	for (;;) {
		struct lv_memcg *memcg = lruvec->memcg;

		lv_lock_acquire_at(&lruvec->shadow_lock, "list_lru_add");
		/* The root is never removed, so a dying memcg has a parent. */
		if (!memcg || !__atomic_load_n(&memcg->dying, __ATOMIC_SEQ_CST))
			return lruvec;
		lv_lock_release(&lruvec->shadow_lock);
		lruvec = mem_cgroup_lruvec(memcg->parent, lruvec->pgdat);
	}
}

/*
 * shadow_list_set - put @node on the shadow list of the lruvec @leaving is charged to (the
 * folio whose removal left only shadows), or take it off its list.
 */
static void shadow_list_set(struct xa_node *node, bool want, struct lv_folio *leaving)
{
	struct lruvec *lruvec;

	lockdep_assert_held(&node->mapping->lock);
	if (want == node->on_shadow_list)
		return; /* only transitions take a list's lock: about once per 64 changes */
	VM_BUG_ON_M(node->mapping->machine, want && !leaving);
	/* RCU: @leaving is still charged, but its charge may be moving to another memcg. */
	rcu_read_lock();
	if (want) {
		lruvec = shadow_lock_live(mem_cgroup_lruvec(folio_memcg(leaving), leaving->pgdat));
		WRITE_ONCE(node->shadow_lruvec, lruvec);
		list_add_tail(&node->private_list, &lruvec->shadow_nodes);
		WRITE_ONCE(lruvec->nr_shadow_nodes, lruvec->nr_shadow_nodes + 1);
	} else {
		lruvec = shadow_lock_node(node);
		list_del(&node->private_list);
		WRITE_ONCE(lruvec->nr_shadow_nodes, lruvec->nr_shadow_nodes - 1);
	}
	node->on_shadow_list = want;
	lv_lock_release(&lruvec->shadow_lock);
	rcu_read_unlock();
}

/* shadow_track - keep @node on a shadow list exactly while it holds only shadows. */
static void shadow_track(struct xa_node *node, struct lv_folio *leaving)
{
	shadow_list_set(node, node->count && node->count == node->nr_values, leaving);
}

/* xa_delete_node - unlink an empty node, and every ancestor it leaves empty. */
static void xa_delete_node(struct lv_file *file, struct xa_node *node)
{
	lockdep_assert_held(&file->lock);
	while (node && !node->count) {
		struct xa_node *parent = node->parent;

		shadow_list_set(node, false, NULL);
		if (parent) {
			rcu_assign_pointer_lv(parent->slots[node->offset], NULL);
			parent->count--;
		} else {
			rcu_assign_pointer_lv(file->root, NULL);
		}
		call_rcu_lv(&node->rcu, xa_node_rcu_free);
		node = parent;
	}
}

/*
 * xa_store_range - set the @nr slots of @leaf from @index on (one folio's, all in this leaf)
 * to @entry and keep the counts, the shadow list and the tree's shape right. @leaving: the
 * folio these slots held, whose lruvec's shadow list takes the leaf if only shadows remain
 * (NULL when no folio leaves).
 */
static void xa_store_range(struct lv_file *file, struct xa_node *leaf, unsigned long index,
			   unsigned long nr, void *entry, struct lv_folio *leaving)
{
	int count = leaf->count, values = leaf->nr_values;

	lockdep_assert_held(&file->lock);
	for (unsigned long i = 0; i < nr; i++) {
		void **slot = &leaf->slots[(index + i) & XA_CHUNK_MASK];
		void *old = *slot;

		rcu_assign_pointer_lv(*slot, entry);
		count += (entry != NULL) - (old != NULL);
		values += xa_is_value(entry) - xa_is_value(old);
	}
	leaf->count = (unsigned char)count;
	leaf->nr_values = (unsigned char)values;
	if (!leaf->count)
		xa_delete_node(file, leaf);
	else
		shadow_track(leaf, leaving);
}

/* xa_find_leaf - the leaf for @index, created (with its ancestors) if @create. */
static struct xa_node *xa_find_leaf(struct lv_file *file, unsigned long index, bool create)
{
	struct xa_node *node = file->root;

	lockdep_assert_held(&file->lock);
	if (!node) {
		unsigned int shift = 0;

		if (!create)
			return NULL;
		/* Tall enough for @index at once: an empty node would never be deleted. */
		while ((index >> shift) >= XA_CHUNK_SIZE)
			shift += XA_CHUNK_SHIFT;
		node = xa_node_alloc(file, NULL, shift, 0);
		if (!node)
			return NULL;
		rcu_assign_pointer_lv(file->root, node);
	}
	/* Grow upward until the root covers @index; the old root becomes slot 0. */
	while ((index >> node->shift) >= XA_CHUNK_SIZE) {
		struct xa_node *top;

		if (!create)
			return NULL;
		top = xa_node_alloc(file, NULL, node->shift + XA_CHUNK_SHIFT, 0);
		if (!top)
			return NULL;
		top->slots[0] = node;
		top->count = 1;
		node->parent = top;
		rcu_assign_pointer_lv(file->root, top);
		node = top;
	}
	while (node->shift) {
		unsigned int offset = (index >> node->shift) & XA_CHUNK_MASK;
		struct xa_node *child = node->slots[offset];

		if (!child) {
			if (!create)
				return NULL;
			child = xa_node_alloc(file, node, node->shift - XA_CHUNK_SHIFT, offset);
			if (!child) {
				xa_delete_node(file, node); /* if we just made it, it is empty */
				return NULL;
			}
			rcu_assign_pointer_lv(node->slots[offset], child);
			node->count++;
		}
		node = child;
	}
	return node;
}

/* ---- filling and waiting -------------------------------------------------------------------- */

static struct fill_waitq *fill_waitq(struct lv_folio *folio)
{
	return &folio_machine(folio)->fill_wait[((uintptr_t)folio >> 6) % 64];
}

/*
 * fill_done_soon - wait for @folio's fill without sleeping, for as long as a fill normally
 * takes: spin FILL_SPIN_NS (zeroing a 64-page folio took 10-20 µs), then yield up to
 * FILL_YIELD_NS (the filler was preempted: our CPU goes to it or to another thread, and we
 * stay on the run queue). A sleep would cost more than its futex calls: with more threads
 * than CPUs, the wakeup may land the waiter on the busier CPU, where it gets a third of a
 * CPU for tens of milliseconds while its partner runs alone — enough for the second reader
 * of a readtwice container to fall a quarter of the memory behind and start to refault
 * (docs/design.md, decision 41). Return: true if the fill ended (PG_locked clear, read with
 * acquire).
 */
static bool fill_done_soon(struct lv_folio *folio)
{
	uint64_t start = now_ns(), waited = 0;

	while (folio_test(folio, PG_locked)) {
		if (waited >= FILL_SPIN_NS + FILL_YIELD_NS)
			return false;
		if (waited < FILL_SPIN_NS) {
			for (int i = 0; i < 32; i++)
				cpu_relax();
		} else {
			sched_yield();
		}
		waited = now_ns() - start;
	}
	return true;
}

/*
 * Waiting for a fill. After fill_done_soon(), a waiter announces itself with PG_waiters
 * before it re-checks PG_locked; the filler clears PG_locked and reads PG_waiters in one
 * atomic operation on the same word, so either the waiter sees the fill done or the filler
 * sees the waiter and wakes it under the queue's mutex (which the waiter holds until it
 * sleeps). Fills nobody sleeps on touch no mutex at all.
 */
static void folio_wait_fill(struct lv_folio *folio)
{
	struct fill_waitq *q = fill_waitq(folio);

	if (fill_done_soon(folio))
		return;
	pthread_mutex_lock(&q->lock);
	folio_set(folio, PG_waiters);
	while (folio_test(folio, PG_locked))
		pthread_cond_wait(&q->cond, &q->lock);
	pthread_mutex_unlock(&q->lock);
}

void folio_wait_locked(struct lv_folio *folio)
{
	folio_wait_fill(folio);
}

void folio_unlock(struct lv_folio *folio)
{
	unsigned long old =
		__atomic_fetch_and(&folio->flags, ~(1ul << PG_locked), __ATOMIC_SEQ_CST);

	if (old & (1ul << PG_waiters)) {
		struct fill_waitq *q = fill_waitq(folio);

		pthread_mutex_lock(&q->lock);
		pthread_cond_broadcast(&q->cond);
		pthread_mutex_unlock(&q->lock);
	}
}

/* folio_end_fill - publish the outcome (PG_uptodate or PG_error), then wake any waiter. */
static void folio_end_fill(struct lv_folio *folio, bool ok)
{
	unsigned long old;

	/*
	 * We own the fill: PG_locked is set and the outcome bits are clear, so one exclusive-or
	 * sets the outcome and clears PG_locked together (one locked instruction, which after the
	 * fill's stores is the expensive part).
	 */
	old = __atomic_fetch_xor(&folio->flags,
				 (1ul << PG_locked) | (1ul << (ok ? PG_uptodate : PG_error)),
				 __ATOMIC_SEQ_CST);
	if (old & (1ul << PG_waiters)) {
		struct fill_waitq *q = fill_waitq(folio);

		pthread_mutex_lock(&q->lock);
		pthread_cond_broadcast(&q->cond);
		pthread_mutex_unlock(&q->lock);
	}
}

/*
 * folio_fill - read @folio's bytes from the file: those of @fd below @limit (the file's
 * fill_limit when the folio was inserted), zeros after them and after @fd's own end.
 * Return: 0 or -EIO.
 */
static int folio_fill(struct lv_file *file, struct lv_folio *folio, uint64_t limit)
{
	size_t len = LV_PAGE_SIZE << folio_order(folio), want = 0;
	char *data = lv_folio_data(folio);
	uint64_t pos = (uint64_t)folio->index * LV_PAGE_SIZE;
	size_t done = 0;

	if (!data)
		return 0; /* metadata only: nothing to fill */
	if (file->fd < 0 && folio_order(folio) > 0) {
		/* A hole: each page is zeroed when it is first read (folio_zero_pages()). */
		folio[1].hole.zeroed = 0;
		folio[1].hole.zeroing = 0;
		folio_set(folio, PG_hole);
		return 0;
	}
	if (file->fd >= 0 && pos < limit)
		want = limit - pos < len ? (size_t)(limit - pos) : len;
	while (done < want) {
		ssize_t n = pread(file->fd, data + done, want - done, (off_t)(pos + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -EIO;
		if (n == 0)
			break; /* @fd is shorter than the limit: the rest reads as zeros */
		done += (size_t)n;
	}
	memset(data + done, 0, len - done);
	return 0;
}

/*
 * Zeroing holes lazily. A hole folio (PG_hole) is published uptodate with its frames still
 * holding whatever their last user left, and each page is zeroed by the first reader that
 * needs it, just before it copies the page out: the zeroes are then still in that CPU's
 * cache, where zeroing all 2^order pages at fill time would have pushed the first of them
 * out before they were read (docs/design.md, decision 43). A reader claims page i by setting bit i
 * of hole.zeroing; the claimant zeroes the page and publishes bit i of hole.zeroed with release;
 * everyone else reads hole.zeroed with acquire before touching the page, waiting for a claimant
 * without sleeping (it is zeroing 4 KiB).
 */

/* folio_zero_pages - make pages @first..@last of hole folio @folio read as zeros. */
static void folio_zero_pages(struct lv_folio *folio, unsigned int first, unsigned int last)
{
	unsigned long want = (~0ul >> (BITS_PER_LONG - 1 - last)) & (~0ul << first);
	unsigned long *zeroed = &folio[1].hole.zeroed;
	char *data = lv_folio_data(folio);

	if ((__atomic_load_n(zeroed, __ATOMIC_ACQUIRE) & want) == want)
		return;
	for (unsigned int i = first; i <= last; i++) {
		unsigned long bit = 1ul << i;

		if (__atomic_load_n(zeroed, __ATOMIC_ACQUIRE) & bit)
			continue;
		if (!(__atomic_fetch_or(&folio[1].hole.zeroing, bit, __ATOMIC_ACQUIRE) & bit)) {
			memset(data + (size_t)i * LV_PAGE_SIZE, 0, LV_PAGE_SIZE);
			__atomic_fetch_or(zeroed, bit, __ATOMIC_RELEASE);
			continue;
		}
		for (int spins = 0; !(__atomic_load_n(zeroed, __ATOMIC_ACQUIRE) & bit); spins++) {
			if (spins < 64)
				cpu_relax();
			else
				sched_yield(); /* the claimant was preempted */
		}
	}
}

/*
 * folio_zero_holes - zero every page of @folio not yet zeroed, if it is a hole folio; after
 * that it reads as an ordinary folio (migration copies it, a split may clear PG_hole).
 * Context: the caller holds a reference, or the mapping lock of the file caching @folio.
 */
void folio_zero_holes(struct lv_folio *folio)
{
	if (folio_test(folio, PG_hole))
		folio_zero_pages(folio, 0, (unsigned int)folio_nr_pages(folio) - 1);
}

/* page_cache_delete - drop @folio from @file if it is still there. Return: true if it was. */
static bool page_cache_delete(struct lv_file *file, struct lv_folio *folio, void *shadow)
{
	long nr = folio_nr_pages(folio);
	struct xa_node *leaf;

	lockdep_assert_held(&file->lock);
	if (READ_ONCE(folio->mapping) != file)
		return false;
	leaf = xa_find_leaf(file, folio->index, false);
	if (!leaf || leaf->slots[folio->index & XA_CHUNK_MASK] != folio)
		return false;
	/* A large folio fills nr aligned slots of one leaf; each keeps the shadow. */
	xa_store_range(file, leaf, folio->index, (unsigned long)nr, shadow, folio);
	WRITE_ONCE(file->nrpages, file->nrpages - (unsigned long)nr);
	__atomic_fetch_sub(&folio->pgdat->nr_file_pages, (unsigned long)nr, __ATOMIC_RELAXED);
	folio_set(folio, PG_dropped);
	WRITE_ONCE(folio->mapping, NULL);
	return true;
}

/*
 * page_cache_alloc - a folio for the pages around @index: 2^@order pages aligned to their
 * size when a block is free without reclaim, else one page (which may reclaim).
 */
static struct lv_folio *page_cache_alloc(struct lv_file *file, struct lv_memcg *memcg,
					 unsigned long index, unsigned int order, int *err)
{
	uint64_t end = (READ_ONCE(file->size) + LV_PAGE_SIZE - 1) / LV_PAGE_SIZE;
	struct lv_machine *m = file->machine;
	int nid = (int)(this_cpu_index(m) % m->cfg.nr_nodes);
	struct lv_folio *folio = NULL;

	/* No folio reaches past the end of the file (the kernel's page_cache_ra_order()). */
	while (order && (index & ~((1ul << order) - 1)) + (1ul << order) > end)
		order--;
	if (order)
		folio = folio_alloc(m, nid, order, memcg, FOLIO_ALLOC_NORETRY);
	if (!folio)
		folio = folio_alloc(m, nid, 0, memcg, 0);
	if (!folio)
		*err = -errno;
	return folio;
}

/*
 * block_has_folio - whether a folio already caches a page of the aligned 2^@order block
 * around @index in the leaf whose slots are @slots: a large folio would not fit there.
 * Context: RCU read-side critical section (a racy peek: the insert re-checks under the lock).
 */
static bool block_has_folio(void **slots, unsigned long index, unsigned int order)
{
	unsigned long start = index & XA_CHUNK_MASK & ~((1ul << order) - 1);

	for (unsigned long i = start; i < start + (1ul << order); i++) {
		void *entry = rcu_dereference_lv(slots[i]);

		if (entry && !xa_is_value(entry))
			return true;
	}
	return false;
}

/*
 * ra_window - how many pages a miss at @index reads: up to @max from @index on, short of the
 * end of the file and of the first page cached already; 1 unless the reader looks sequential
 * (@index is 0 or the page before it is cached: the kernel's context readahead, which needs no
 * per-reader state). A racy peek: the insertion re-checks every slot under the lock.
 */
static unsigned int ra_window(struct lv_file *file, unsigned long index, unsigned int max)
{
	uint64_t end = (READ_ONCE(file->size) + LV_PAGE_SIZE - 1) / LV_PAGE_SIZE;
	unsigned int n = 1;
	void **slot = NULL;
	void *entry;

	rcu_read_lock();
	entry = index ? xa_load_slot(file, index - 1, &slot) : NULL;
	if (index && (!entry || xa_is_value(entry)))
		max = 1;
	xa_load_slot(file, index, &slot);
	for (; n < max && index + n < end; n++) {
		unsigned long i = index + n;

		/* Within a leaf, the next slot is the next page; a new leaf needs a walk. */
		if (slot && (i & XA_CHUNK_MASK))
			slot++;
		else
			xa_load_slot(file, i, &slot);
		entry = slot ? rcu_dereference_lv(*slot) : NULL;
		if (entry && !xa_is_value(entry))
			break;
	}
	rcu_read_unlock();
	return n;
}

/*
 * ra_alloc - the pages after @run[0] (a missing page @index) that its reader reads ahead, in
 * @run[1..]: allocated and charged to @memcg in bulk, or, where that falls short (a memcg near
 * its limit, a node near its min watermark), one at a time with one reclaim pass at most each
 * (the kernel reads ahead with __GFP_NORETRY), stopping at the first that fails. Return: the
 * length of the run, @run[0] included.
 */
static unsigned int ra_alloc(struct lv_file *file, struct lv_memcg *memcg, unsigned long index,
			     unsigned int max, struct lv_folio **run)
{
	struct lv_machine *m = file->machine;
	int nid = (int)(this_cpu_index(m) % m->cfg.nr_nodes);
	unsigned int n = ra_window(file, index, max), j, bulk;

	bulk = n > 1 ? folios_alloc_bulk(m, nid, memcg, n - 1, run + 1) : 0;
	for (j = 1; j < n; j++) {
		struct lv_folio *folio =
			j <= bulk ? run[j] : folio_alloc(m, nid, 0, memcg, FOLIO_ALLOC_NORETRY);

		if (!folio)
			break;
		folio->mapping = file;
		folio->index = index + j;
		/* One locked instruction for both: the folio is not yet visible to anyone. */
		__atomic_fetch_or(&folio->flags, (1ul << PG_locked) | (1ul << PG_readahead),
				  __ATOMIC_RELEASE);
		run[j] = folio;
	}
	return j;
}

/* ra_drop - free the folios of @run[@from..@to) that were never inserted. */
static void ra_drop(struct lv_folio **run, unsigned int from, unsigned int to)
{
	for (unsigned int j = from; j < to; j++) {
		WRITE_ONCE(run[j]->mapping, NULL);
		lv_folio_put(run[j]);
	}
}

/*
 * ra_first_read - the first read of a page read ahead: clear PG_readahead and mark the folio
 * accessed as lv_folio_mark_accessed() would at a first access (PG_referenced), in one atomic
 * operation, unless its refault activated it: the read that causes a refault does not mark the
 * folio it activated (lv_file_read()), and for a page read ahead that read is its first.
 * Return: true if this was that first read and nothing more is to be marked; false if the folio
 * carries no PG_readahead (another read came first, or it was never read ahead) or was
 * referenced already, so that lv_folio_mark_accessed() decides.
 */
static bool ra_first_read(struct lv_folio *folio)
{
	const unsigned long ra = 1ul << PG_readahead, ref = 1ul << PG_referenced;
	unsigned long old = __atomic_load_n(&folio->flags, __ATOMIC_RELAXED), new;
	bool marked;

	do {
		if (!(old & ra))
			return false;
		/* Referenced already (by no read: a fault, say): the access is a second one. */
		marked = !(old & ref) || (old & (1ul << PG_active));
		new = (old & ~ra) | (marked && !(old & (1ul << PG_active)) ? ref : 0);
	} while (!__atomic_compare_exchange_n(&folio->flags, &old, new, true, __ATOMIC_RELEASE,
					      __ATOMIC_RELAXED));
	return marked;
}

/*
 * filemap_fill_failed - the fill of @folio (inserted by us, still PG_locked) failed: publish
 * PG_error and take it out of the page cache again. The caller still holds its own reference.
 */
static void filemap_fill_failed(struct lv_file *file, struct lv_folio *folio)
{
	folio_end_fill(folio, false);
	lv_lock_acquire_at(&file->lock, "filemap_remove_folio");
	if (page_cache_delete(file, folio, NULL)) {
		lv_lock_release(&file->lock);
		lv_folio_put(folio); /* the page cache's reference */
	} else {
		lv_lock_release(&file->lock);
	}
}

/*
 * filemap_get_folio - the uptodate folio holding page @index, with a reference, creating and
 * filling a folio of up to 2^@order pages on a miss, charged to @guard's memcg (*@activated:
 * it refaulted and was activated); a miss of an order-0 page reads up to @ra pages ahead
 * (readahead, above). Return: the folio, or NULL with *@err set (0 beyond the end of the
 * file).
 * Context: inside @guard, which it pins before it waits or allocates (either may block).
 */
static struct lv_folio *filemap_get_folio(struct lv_file *file, struct memcg_guard *guard,
					  unsigned long index, unsigned int order, unsigned int ra,
					  int *err, bool *activated)
{
	struct lv_folio *run[LV_MAX_READAHEAD], *counted = NULL;
	void *shadows[LV_MAX_READAHEAD];
	long pgpgin = 0, ahead = 0, refaults = 0;
	unsigned int nrun = 1, inserted;
	uint64_t failed = 0; /* bit j: the fill of run[j] */
	struct lv_folio *folio;
	unsigned long start, nr, node_pages;
	void *shadow = NULL;
	struct xa_node *leaf;
	bool taken = false;
	uint64_t limit;

	for (;;) {
		void **slot;

		rcu_read_lock();
		folio = xa_load_slot(file, index, &slot);
		if (!folio || xa_is_value(folio)) {
			/* Charging a large folio we could not insert might reclaim for nothing. */
			if (order && slot &&
			    block_has_folio(slot - (index & XA_CHUNK_MASK), index, order))
				order = 0;
			rcu_read_unlock();
			break;
		}
		if (!folio_try_get(folio)) {
			rcu_read_unlock();
			continue; /* being evicted: the slot will hold a shadow shortly */
		}
		if (rcu_dereference_lv(*slot) != folio) {
			rcu_read_unlock();
			lv_folio_put(folio); /* evicted and reused under us */
			continue;
		}
		rcu_read_unlock();
		if (folio_test(folio, PG_locked)) {
			if (!memcg_guard_pin(guard)) {
				lv_folio_put(folio);
				*err = -ENOENT;
				return NULL;
			}
			folio_wait_fill(folio);
		}
		if (!folio_test(folio, PG_uptodate) && folio_test(folio, PG_readahead)) {
			/*
			 * Read ahead for another reader, and its fill failed: the error was not
			 * ours to report. Its filler takes it out of the page cache right after
			 * publishing the error (filemap_fill_failed()); then we read it ourselves.
			 * It may be preempted in between: after a while, give it the CPU.
			 */
			for (int spins = 0; READ_ONCE(folio->mapping) == file; spins++) {
				if (spins < 64)
					cpu_relax();
				else
					sched_yield();
			}
			lv_folio_put(folio);
			continue;
		}
		if (!folio_test(folio, PG_uptodate)) {
			lv_folio_put(folio);
			*err = -EIO;
			return NULL;
		}
		return folio;
	}

	/* Miss: allocate first, so that reclaim never runs under the mapping lock. */
	if (!memcg_guard_pin(guard)) {
		*err = -ENOENT;
		return NULL;
	}
	folio = page_cache_alloc(file, guard->memcg, index, order, err);
	if (!folio)
		return NULL;
	nr = (unsigned long)folio_nr_pages(folio);
	start = index & ~(nr - 1);
	folio->mapping = file;
	folio->index = start;
	folio_set(folio, PG_locked);
	run[0] = folio;
	if (nr == 1 && ra > 1)
		nrun = ra_alloc(file, guard->memcg, index, ra, run);

	lv_lock_acquire_at(&file->lock, "__filemap_add_folio");
	if ((uint64_t)index * LV_PAGE_SIZE >= file->size) {
		lv_lock_release(&file->lock);
		ra_drop(run, 0, nrun);
		*err = 0; /* truncated meanwhile */
		return NULL;
	}
	if ((uint64_t)(start + nr - 1) * LV_PAGE_SIZE >= file->size) {
		/* Truncated into the folio meanwhile: cache our page alone. */
		lv_lock_release(&file->lock);
		ra_drop(run, 0, nrun);
		return filemap_get_folio(file, guard, index, 0, 0, err, activated);
	}
	/* Truncated into the run meanwhile: only what is left of the file is read ahead. */
	inserted = nrun;
	while ((uint64_t)(index + inserted - 1) * LV_PAGE_SIZE >= file->size)
		inserted--;
	leaf = xa_find_leaf(file, start, true);
	/* Every slot the folio would cover must be free of folios; the shadow at @index wins. */
	for (unsigned long i = 0; leaf && i < nr; i++) {
		void *old = leaf->slots[(start + i) & XA_CHUNK_MASK];

		if (old && !xa_is_value(old))
			taken = true;
		else if (old && (!shadow || start + i == index))
			shadow = old;
	}
	if (!leaf || taken) {
		/* Out of memory for a tree node, or another reader inserted first. */
		bool ours_taken = leaf && leaf->slots[index & XA_CHUNK_MASK] &&
				  !xa_is_value(leaf->slots[index & XA_CHUNK_MASK]);

		lv_lock_release(&file->lock);
		ra_drop(run, 0, nrun);
		if (!leaf) {
			*err = -ENOMEM;
			return NULL;
		}
		/* Our page is cached: find it. Only a neighbour is: cache our page alone. */
		return filemap_get_folio(file, guard, index, ours_taken ? order : 0, 0, err,
					 activated);
	}
	folio_get(folio); /* the page cache's reference */
	xa_store_range(file, leaf, start, nr, folio, NULL);
	/* The pages read ahead, up to the first slot taken or a tree node we cannot have. */
	for (unsigned int j = 1; j < inserted; j++) {
		unsigned long i = index + j;
		void *old;

		if (!(i & XA_CHUNK_MASK))
			leaf = xa_find_leaf(file, i, true);
		old = leaf ? leaf->slots[i & XA_CHUNK_MASK] : NULL;
		if (!leaf || (old && !xa_is_value(old))) {
			inserted = j;
			break;
		}
		shadows[j] = old;
		folio_get(run[j]);
		xa_store_range(file, leaf, i, 1, run[j], NULL);
	}
	WRITE_ONCE(file->nrpages, file->nrpages + nr + inserted - 1);
	/* The run's pages may come from another node than the first's (the slot's may change). */
	node_pages = nr;
	for (unsigned int j = 1; j < inserted; j++) {
		if (run[j]->pgdat == folio->pgdat)
			node_pages++;
		else
			__atomic_fetch_add(&run[j]->pgdat->nr_file_pages, 1, __ATOMIC_RELAXED);
	}
	__atomic_fetch_add(&folio->pgdat->nr_file_pages, node_pages, __ATOMIC_RELAXED);
	/*
	 * Sampled with the insertion: a truncation below it either came first (we see its
	 * limit) or comes later and drops this folio.
	 */
	limit = file->fill_limit;
	lv_lock_release(&file->lock);
	ra_drop(run, inserted, nrun);

	if (shadow)
		*activated = workingset_refault(folio, shadow, false);
	/* The run shares one memcg: one count per node, not one atomic per folio. */
	for (unsigned int j = 1; j < inserted; j++) {
		if (!shadows[j])
			continue;
		workingset_refault(run[j], shadows[j], true);
		if (run[j]->pgdat == folio->pgdat)
			refaults++;
		else
			folio_count_event(run[j], EV_WORKINGSET_REFAULT, 1);
	}
	if (refaults)
		folio_count_event(folio, EV_WORKINGSET_REFAULT, refaults);
	for (unsigned int j = 0; j < inserted; j++)
		folio_add_lru(run[j]);
	/* Every fill first, then every publication: the run's stores drain together. */
	for (unsigned int j = 0; j < inserted; j++)
		if (folio_fill(file, run[j], limit))
			failed |= 1ull << j;
	/*
	 * On the LRU, the folios may have been reparented to an ancestor meanwhile (the fill does
	 * not hold its removal back): the binding is looked up under RCU. A run's folios share
	 * one memcg, so those on one node share its lruvec and one count.
	 */
	for (unsigned int j = 0; j < inserted; j++) {
		if (failed & (1ull << j))
			continue;
		if (!counted)
			counted = run[j];
		if (run[j]->pgdat == counted->pgdat) {
			pgpgin += j ? 1 : (long)nr;
			ahead += j > 0;
		} else {
			folio_count_event(run[j], EV_PGPGIN, 1);
			folio_count_event(run[j], EV_FILE_RA, 1);
		}
	}
	if (counted)
		folio_count_event(counted, EV_PGPGIN, pgpgin);
	if (ahead)
		folio_count_event(counted, EV_FILE_RA, ahead);
	for (unsigned int j = 0; j < inserted; j++) {
		if (failed & (1ull << j))
			filemap_fill_failed(file, run[j]);
		else
			folio_end_fill(run[j], true);
		if (j)
			lv_folio_put(run[j]); /* ours: the page cache keeps its own */
	}
	if (failed & 1) {
		lv_folio_put(folio);
		*err = -EIO;
		return NULL;
	}
	return folio;
}

/* ---- the public file API -------------------------------------------------------------------- */

struct lv_file *lv_file_open(struct lv_machine *m, int fd, uint64_t size)
{
	struct lv_file *file;

	/* A metadata-only machine has no frames to hold a real file's bytes. */
	if (!m || fd < -1 || size == 0 || size > MAX_FILE_BYTES ||
	    (fd >= 0 && m->cfg.metadata_only)) {
		errno = EINVAL;
		return NULL;
	}
	file = aligned_alloc(64, sizeof(*file));
	if (!file) {
		errno = ENOMEM;
		return NULL;
	}
	memset(file, 0, sizeof(*file));
	file->machine = m;
	file->fd = fd;
	file->size = size;
	file->fill_limit = size;
	lv_lock_init(&file->lock, m->cfg.lock_backend, LV_LOCK_CLASS_MAPPING, m->lock_sites);
	lv_lock_init(&file->i_mmap.lock, m->cfg.lock_backend, LV_LOCK_CLASS_MM, m->lock_sites);
	INIT_LIST_HEAD(&file->i_mmap.list);
	lv_lock_acquire(&m->memcg_mutex);
	list_add_tail(&file->files, &m->files);
	lv_lock_release(&m->memcg_mutex);
	return file;
}

long lv_file_read(struct lv_file *file, struct lv_memcg *memcg, void *buf, size_t len, uint64_t off)
{
	struct memcg_guard guard;
	long ret = 0;
	uint64_t size;
	size_t done = 0;

	if (!file || (!buf && len))
		return -EINVAL;
	/*
	 * A read-side section from here, cheap for reads that hit: only a wait or a miss pins the
	 * memcg with a reference (filemap_get_folio()).
	 */
	memcg_guard_enter(&guard, memcg);
	if (memcg && memcg->machine != file->machine) {
		ret = -EINVAL;
		goto out;
	}
	size = READ_ONCE(file->size);
	if (off >= size)
		goto out;
	if (len > size - off)
		len = (size_t)(size - off);
	if (len > LONG_MAX)
		len = LONG_MAX;
	while (done < len) {
		uint64_t pos = off + done;
		bool activated = false;
		struct lv_folio *folio;
		size_t in_folio, n;
		void *data;
		int err = 0;

		folio = filemap_get_folio(file, &guard, (unsigned long)(pos / LV_PAGE_SIZE),
					  file->machine->cfg.file_folio_order,
					  file->machine->cfg.readahead_pages, &err, &activated);
		if (!folio) {
			if (!done)
				ret = err;
			break;
		}
		/* Copy up to the end of the folio at once. */
		in_folio = (size_t)(pos - (uint64_t)folio->index * LV_PAGE_SIZE);
		n = (LV_PAGE_SIZE << folio_order(folio)) - in_folio;
		if (n > len - done)
			n = len - done;
		/*
		 * A sequential reader touches a large folio once per pass, not once per page: count
		 * the read that starts in its first page (the kernel compares with the previous
		 * read position instead; we keep no per-reader state). A refault activated on the
		 * way in is not accessed again by the read that caused it: marked referenced, it
		 * would rotate on the active list instead of aging (in the kernel, PG_referenced
		 * on an active folio does not save it from deactivation). Marked before the copy,
		 * as the kernel's filemap_read() marks: after it, the marking's locked instruction
		 * would wait for the copy's stores to drain.
		 */
		if (in_folio < LV_PAGE_SIZE && !activated && !ra_first_read(folio))
			lv_folio_mark_accessed(folio);
		data = lv_folio_data(folio);
		if (folio_test(folio, PG_hole))
			folio_zero_pages(folio, (unsigned int)(in_folio / LV_PAGE_SIZE),
					 (unsigned int)((in_folio + n - 1) / LV_PAGE_SIZE));
		if (data)
			memcpy((char *)buf + done, (char *)data + in_folio, n);
		else
			memset((char *)buf + done, 0, n);
		lv_folio_put(folio);
		done += n;
	}
	if (done)
		ret = (long)done;
out:
	memcg_guard_exit(&guard);
	return ret;
}

/**
 * filemap_fault - the uptodate page cache folio holding page @index of @file, for a fault of a
 * mapping of it: read in on a miss as lv_file_read() reads it (charged to @memcg), with the
 * page zeroed if it lies in a hole folio.
 * Return: the folio with a reference, or NULL with *@err: -EFAULT past the end of the file,
 * -ENOMEM, -EIO, or -ENOENT (@memcg is being removed).
 * Context: no lock held; may block (allocation, reclaim, the fill's read, another's fill).
 */
struct lv_folio *filemap_fault(struct lv_file *file, struct lv_memcg *memcg, unsigned long index,
			       int *err)
{
	struct memcg_guard guard;
	struct lv_folio *folio;
	bool activated = false;

	*err = 0;
	memcg_guard_enter(&guard, memcg);
	folio = filemap_get_folio(file, &guard, index, file->machine->cfg.file_folio_order, 0, err,
				  &activated);
	memcg_guard_exit(&guard);
	if (!folio) {
		if (!*err)
			*err = -EFAULT; /* past the end */
		return NULL;
	}
	if (folio_test(folio, PG_hole))
		folio_zero_pages(folio, (unsigned int)(index - folio->index),
				 (unsigned int)(index - folio->index));
	return folio;
}

/* filemap_peek - the folio or shadow entry at @index (no reference), for lv_check(). */
void *filemap_peek(struct lv_file *file, unsigned long index)
{
	void **slot;
	void *entry;

	rcu_read_lock();
	entry = xa_load_slot(file, index, &slot);
	rcu_read_unlock();
	return entry;
}

struct i_mmap *file_i_mmap(struct lv_file *file)
{
	return &file->i_mmap;
}

uint64_t file_size(const struct lv_file *file)
{
	return READ_ONCE(file->size);
}

/*
 * file_mapped - whether any address space maps @file, read without the i_mmap lock (truncation
 * holds the mapping lock, which ranks below it). A Dekker pair with lv_mmap_file(), which
 * counts its mapper, then fences, before any fault of the region reads the size or the page
 * cache: our caller stored the size (or dropped folios) before this fence, so either we see
 * the mapper, or its faults see the new size and the dropped folios gone.
 */
static bool file_mapped(struct lv_file *file)
{
	smp_mb();
	return READ_ONCE(file->i_mmap.nr) != 0;
}

/*
 * truncate_leaf - under the mapping lock, clear the entries at or after @start in the first
 * leaf that has any, collecting up to a leaf's worth of folios in @batch.
 * Return: the index to continue from, or 0 when no entry at or after @start is left.
 */
static unsigned long truncate_leaf(struct lv_file *file, struct xa_node *node, unsigned long start,
				   struct lv_folio **batch, unsigned int *nr)
{
	unsigned long span = 1ul << node->shift;

	for (unsigned int off = (unsigned int)((start >> node->shift) & XA_CHUNK_MASK);
	     off < XA_CHUNK_SIZE; off++) {
		unsigned long base = (start & ~((span << XA_CHUNK_SHIFT) - 1)) + off * span;
		unsigned long from = base > start ? base : start;
		void *entry = node->slots[off];

		if (!entry)
			continue;
		if (node->shift) {
			unsigned long next = truncate_leaf(file, entry, from, batch, nr);

			if (next)
				return next;
			continue;
		}
		for (unsigned int i = off; i < XA_CHUNK_SIZE; i++) {
			void *e = node->slots[i];

			if (!e)
				continue;
			if (!xa_is_value(e)) {
				batch[(*nr)++] = e;
				page_cache_delete(file, e, NULL);
			} else {
				xa_store_range(file, node, base + (i - off), 1, NULL, NULL);
			}
		}
		/* The leaf may be gone now; continue after it. */
		return (base | XA_CHUNK_MASK) + 1;
	}
	return 0;
}

/*
 * truncate_split - split the large folio holding page @start and some before it, if there is
 * one, dropping its pages from @start on: the pages before stay cached. If it cannot be split
 * (a reader holds it), the loop of lv_file_truncate() drops all of it.
 * Context: @file's mapping lock held.
 */
static void truncate_split(struct lv_file *file, unsigned long start)
{
	struct xa_node *leaf = xa_find_leaf(file, start, false);
	struct lv_folio *folio;

	if (!leaf)
		return;
	folio = leaf->slots[start & XA_CHUNK_MASK];
	if (folio && !xa_is_value(folio) && folio_test_large(folio) && folio->index < start)
		split_folio_locked(folio, NULL, 0, start);
}

int lv_file_truncate(struct lv_file *file, uint64_t size)
{
	/* The page holding the new end goes too: its bytes past the end must read as zeros. */
	unsigned long start = (unsigned long)(size / LV_PAGE_SIZE);
	unsigned long end_index = start;
	bool dropped = false;

	if (!file || size > MAX_FILE_BYTES)
		return -EINVAL;
	lv_lock_acquire_at(&file->lock, "truncate_inode_pages_range");
	WRITE_ONCE(file->size, size);
	if (size < file->fill_limit)
		file->fill_limit = size;
	/*
	 * Unmap first (the mappers' page tables rank below us): a fault that maps a page after
	 * this pass sees the new size under its page_table_lock, which this pass took after the
	 * store, and fails. File pages are unmapped from the start of the large folio holding the
	 * new end, if one does, so that its split is not held back by entries before the end;
	 * private copies only from the end, as the kernel's truncate_pagecache() unmaps even COWed
	 * pages.
	 */
	if (file_mapped(file)) {
		struct lv_folio *folio;
		void **slot;

		rcu_read_lock();
		folio = xa_load_slot(file, start, &slot);
		if (folio && !xa_is_value(folio) && folio->index < start)
			end_index = folio->index; /* stable: we hold the mapping lock */
		rcu_read_unlock();
		lv_lock_release(&file->lock);
		unmap_mapping_range(file, end_index, start);
		lv_lock_acquire(&file->lock);
	}
	truncate_split(file, start);
	for (;;) {
		struct lv_folio *batch[XA_CHUNK_SIZE];
		unsigned int nr = 0;
		unsigned long next = 0;

		/* Emptied nodes are freed by call_rcu() while we still walk them. */
		rcu_read_lock();
		if (file->root && (start >> file->root->shift) < XA_CHUNK_SIZE)
			next = truncate_leaf(file, file->root, start, batch, &nr);
		rcu_read_unlock();
		lv_lock_release(&file->lock);
		/* The tree's references: final puts unlink from the LRU and free. */
		lv_folios_put(batch, nr);
		dropped |= nr > 0;
		if (!next)
			break;
		start = next;
		lv_lock_acquire_at(&file->lock, "truncate_inode_pages_range");
	}
	/*
	 * Folios still queued in CPU batches hold a reference each: flush them, so that dropped
	 * pages are freed (and uncharged) now rather than whenever those batches fill up. Only
	 * dropped folios: the others' tenants keep their batches and their locks.
	 */
	/*
	 * A large folio whose split failed went whole, pages before the end too, and a fault may
	 * have mapped one of those meanwhile: a second pass unmaps what left the page cache.
	 */
	if (dropped && file_mapped(file))
		unmap_mapping_range(file, end_index, ULONG_MAX);
	if (dropped)
		lru_add_drain_dropped(file->machine);
	return 0;
}

/* close_all_files - close what the caller left open at machine teardown, reporting it. */
void close_all_files(struct lv_machine *m)
{
	for (;;) {
		struct lv_file *file = NULL;

		struct list_head *pos;

		/* Swap caches are the devices' (swap_exit()). */
		lv_lock_acquire(&m->memcg_mutex);
		list_for_each (pos, &m->files)
			if (!list_entry(pos, struct lv_file, files)->swap_space) {
				file = list_entry(pos, struct lv_file, files);
				break;
			}
		lv_lock_release(&m->memcg_mutex);
		if (!file)
			return;
		fprintf(stderr,
			"lruvec: machine destroyed with a file still open (%lu pages cached)\n",
			READ_ONCE(file->nrpages));
		lv_file_close(file);
	}
}

/*
 * for_each_file_i_mmap_lock - call @fn on the i_mmap lock of every open file (statistics: they
 * count in the mm class, whose order they share). Context: m->memcg_mutex held.
 */
void for_each_file_i_mmap_lock(struct lv_machine *m, void (*fn)(struct lv_lock *, void *),
			       void *arg)
{
	struct list_head *pos;

	lockdep_assert_held(&m->memcg_mutex);
	list_for_each (pos, &m->files)
		fn(&list_entry(pos, struct lv_file, files)->i_mmap.lock, arg);
}

/*
 * for_each_file_lock - call @fn on the mapping lock of every open file (statistics).
 * Context: m->memcg_mutex held, which also covers the retired totals a closed file adds to.
 */
void for_each_file_lock(struct lv_machine *m, void (*fn)(struct lv_lock *, void *), void *arg)
{
	struct list_head *pos;

	lockdep_assert_held(&m->memcg_mutex);
	list_for_each (pos, &m->files)
		fn(&list_entry(pos, struct lv_file, files)->lock, arg);
}

unsigned long lv_file_cached_pages(const struct lv_file *file)
{
	return READ_ONCE(file->nrpages);
}

static void file_rcu_free(struct rcu_head *head)
{
	struct lv_file *file = container_of(head, struct lv_file, rcu);

	rcu_free_begin();
	lv_lock_destroy(&file->lock);
	lv_lock_destroy(&file->i_mmap.lock);
	free(file);
	rcu_free_end();
}

void lv_file_close(struct lv_file *file)
{
	struct lv_machine *m;

	if (!file)
		return;
	m = file->machine;
	lv_file_truncate(file, 0);
	/* Mappings left are the caller's bug: they fail every access from now on. */
	unmap_mapping_detach(file);
	lv_lock_acquire(&m->memcg_mutex);
	list_del(&file->files);
	lv_lock_stat_add(&m->retired_lock_stats[LV_LOCK_CLASS_MAPPING], &file->lock);
	lv_lock_stat_add(&m->retired_lock_stats[LV_LOCK_CLASS_MM], &file->i_mmap.lock);
	lv_lock_release(&m->memcg_mutex);
	/* Reclaim may still be about to lock us through a folio it isolated before. */
	call_rcu_lv(&file->rcu, file_rcu_free);
}

/* ---- migration ----------------------------------------------------------------------------- */

struct lv_machine *file_machine(const struct lv_file *file)
{
	return file->machine;
}

/*
 * xa_gather - collect referenced folios of @node's subtree at indexes >= *@start into
 * @batch[0..), counting up; a folio that left its slot while we took a reference goes to
 * @batch[max - 1 - *@stale] (growing down), to be put once out of the RCU section: the put may
 * be the last, and freeing takes page list and zone locks.
 */
static unsigned int xa_gather(struct xa_node *node, unsigned long base, unsigned long *start,
			      struct lv_folio **batch, unsigned int nr, unsigned int *stale,
			      unsigned int max)
{
	unsigned long first = *start > base ? (*start - base) >> node->shift : 0;

	for (unsigned long i = first; i < XA_CHUNK_SIZE && nr + *stale < max; i++) {
		unsigned long at = base + (i << node->shift);
		void *entry = rcu_dereference_lv(node->slots[i]);

		if (!entry || (!node->shift && xa_is_value(entry)))
			continue;
		if (node->shift) {
			nr = xa_gather(entry, at, start, batch, nr, stale, max);
			continue;
		}
		*start = at + 1;
		/* Re-check after the try-get: the frame may have been freed and reused. */
		if (!folio_try_get(entry))
			continue;
		if (rcu_dereference_lv(node->slots[i]) != entry) {
			batch[max - 1 - (*stale)++] = entry;
			continue;
		}
		batch[nr++] = entry;
		/* Referenced and still here: its index is stable. Skip its other slots. */
		*start = ((struct lv_folio *)entry)->index + (unsigned long)folio_nr_pages(entry);
		i = (*start - 1 - base) >> node->shift;
	}
	return nr;
}

/**
 * filemap_get_folios - up to @max folios of @file at indexes from *@start on, each with a
 * reference; *@start moves past the last one. Return: how many (0: none left).
 * Context: no lock held (RCU inside).
 */
unsigned int filemap_get_folios(struct lv_file *file, unsigned long *start, struct lv_folio **batch,
				unsigned int max)
{
	unsigned int nr, stale;

	do { /* a batch of nothing but raced folios is not the end: *start moved past them */
		struct xa_node *root;

		nr = stale = 0;
		rcu_read_lock();
		root = rcu_dereference_lv(file->root);
		if (root && (*start >> root->shift) < XA_CHUNK_SIZE)
			nr = xa_gather(root, 0, start, batch, 0, &stale, max);
		rcu_read_unlock();
		lv_folios_put(batch + max - stale, stale);
	} while (!nr && stale);
	return nr;
}

/**
 * filemap_folio_replace - the page cache half of migration: if @old is still cached, not
 * being filled, and exactly @expected references exist, freeze them, copy @old into @new and
 * put @new in @old's slot.
 * Return: 0 (@old's count is zero; @new holds the page cache's reference plus the caller's),
 * -EAGAIN (a reader holds a reference: retry), -EBUSY (truncated, evicted or being filled).
 * Context: the caller owns @old's isolation; no lock held.
 */
int filemap_folio_replace(struct lv_folio *old, struct lv_folio *new, int expected)
{
	struct lv_file *file;
	struct xa_node *leaf;
	int err = -EBUSY;

	/*
	 * Uptodate data never changes once a hole folio is zeroed whole: copy it before freezing
	 * (see folio_copy_data()). The copy is an ordinary folio, not a hole.
	 */
	/* Mapped by page tables: skipped (their entries' references would fail the freeze). */
	if (!folio_test(old, PG_uptodate) || folio_test(old, PG_locked) || folio_test_mapped(old))
		return -EBUSY;
	folio_zero_holes(old);
	folio_copy_data(new, old);
	rcu_read_lock();
	file = folio_file_mapping(old);
	if (!file)
		goto out;
	lv_lock_acquire_at(&file->lock, "__folio_migrate_mapping");
	leaf = folio_file_mapping(old) == file ? xa_find_leaf(file, old->index, false) : NULL;
	if (!leaf || leaf->slots[old->index & XA_CHUNK_MASK] != old ||
	    !folio_test(old, PG_uptodate) || folio_test(old, PG_locked)) {
		err = -EBUSY;
	} else if (!folio_ref_freeze(old, expected)) {
		err = -EAGAIN;
	} else {
		unsigned long nr = (unsigned long)folio_nr_pages(old);

		folio_migrate_copy(new, old);
		folio_get(new); /* the page cache's */
		/* Folio for folio: the counts and the shadow list stay as they are. */
		xa_store_range(file, leaf, new->index, nr, new, NULL);
		__atomic_fetch_sub(&old->pgdat->nr_file_pages, nr, __ATOMIC_RELAXED);
		__atomic_fetch_add(&new->pgdat->nr_file_pages, nr, __ATOMIC_RELAXED);
		err = 0;
	}
	lv_lock_release(&file->lock);
out:
	rcu_read_unlock();
	return err;
}

/* ---- splitting (huge_memory.c) ------------------------------------------------------------- */

/**
 * filemap_lock_owner - lock the file caching @folio, for a split.
 * Return: the file, its mapping lock held, if @folio is still in its slots; else NULL.
 * Context: RCU read-side critical section (keeps a file being closed valid to lock); the
 * caller holds a reference on @folio.
 */
struct lv_file *filemap_lock_owner_at(struct lv_folio *folio, const char *site)
{
	struct lv_file *file = folio_file_mapping(folio);
	struct xa_node *leaf;

	if (!file)
		return NULL;
	lv_lock_acquire_at(&file->lock, site);
	leaf = folio_file_mapping(folio) == file ? xa_find_leaf(file, folio->index, false) : NULL;
	if (leaf && leaf->slots[folio->index & XA_CHUNK_MASK] == folio)
		return file;
	lv_lock_release(&file->lock);
	return NULL;
}

void filemap_unlock_owner(struct lv_file *file)
{
	lv_lock_release(&file->lock);
}

/**
 * filemap_split_store - point the slots of large @folio, being split, at its pages: the frame
 * of each page is already an order-0 folio whose index is its slot's. Readers that find one
 * fail to try-get it until the split unfreezes it, and look again. The slots' counts stay.
 * Context: @file's mapping lock held; @folio's count is frozen.
 */
void filemap_split_store(struct lv_file *file, struct lv_folio *folio)
{
	unsigned long nr = (unsigned long)folio_nr_pages(folio);
	struct xa_node *leaf = xa_find_leaf(file, folio->index, false);

	lockdep_assert_held(&file->lock);
	VM_BUG_ON_FOLIO(!leaf || leaf->slots[folio->index & XA_CHUNK_MASK] != folio, folio);
	for (unsigned long i = 1; i < nr; i++)
		rcu_assign_pointer_lv(leaf->slots[(folio->index + i) & XA_CHUNK_MASK], folio + i);
}

/*
 * filemap_split_drop - take @page, a page of a split folio past a truncation, out of @file: no
 * shadow (truncated pages leave none). Its count stays frozen: the split frees it.
 * Context: @file's mapping lock held; no LRU lock (the slot's leaf may join a shadow list).
 */
void filemap_split_drop(struct lv_file *file, struct lv_folio *page)
{
	bool dropped = page_cache_delete(file, page, NULL);

	VM_BUG_ON_FOLIO(!dropped, page);
}

/* ---- eviction ------------------------------------------------------------------------------ */

/**
 * remove_mapping - evict an isolated, clean page cache folio, leaving a shadow entry.
 * Return: true if the folio left the page cache; its reference count is then zero and the
 * caller frees it. false if it is in use (a reader holds it), being filled, or was truncated.
 * Context: the caller owns the folio's isolation reference and holds no lock.
 */
bool remove_mapping(struct lv_folio *folio)
{
	struct lv_file *file;
	bool removed = false;

	/* RCU keeps a file being closed (our folio truncated meanwhile) valid to lock. */
	rcu_read_lock();
	file = folio_file_mapping(folio);
	if (!file)
		goto out;
	lv_lock_acquire_at(&file->lock, "__remove_mapping");
	if (READ_ONCE(folio->mapping) == file && !folio_test(folio, PG_locked) &&
	    folio_ref_freeze(folio, 2 /* the page cache's and the isolation's */)) {
		removed = page_cache_delete(file, folio, workingset_eviction(folio));
		VM_BUG_ON_FOLIO(!removed, folio);
	}
	lv_lock_release(&file->lock);
out:
	rcu_read_unlock();
	return removed;
}

/*
 * shadow_nodes_shrink - free the oldest shadow-only nodes on @lruvec's list while it holds more
 * than an eighth of the pages on @lruvec's lists (the kernel's count_shadow_nodes() limit for a
 * memcg; a node's own lruvec, with memcg disabled, may keep an eighth of the node), and more
 * than SHADOW_NODES_MIN: the kernel's shrinker scans an excess shifted right by the reclaim
 * priority, so it leaves a short list alone, and a tenant whose pages were all just evicted
 * keeps the shadows that tell its refaults apart.
 * At most @budget nodes are freed. Return: how many were.
 * Context: no lock held. Mapping locks are only tried: we hold the shadow lock, which ranks
 * below them.
 */
unsigned long shadow_nodes_shrink(struct lruvec *lruvec, unsigned long budget)
{
	unsigned long limit = 0, freed = 0;

	if (lruvec->memcg) {
		for (int l = 0; l < NR_LRU_LISTS; l++)
			limit += READ_ONCE(lruvec->lru_size[l]);
	} else {
		limit = lruvec->pgdat->nr_pages;
	}
	limit /= 8;
	if (limit < SHADOW_NODES_MIN)
		limit = SHADOW_NODES_MIN;
	for (; budget > 0 && READ_ONCE(lruvec->nr_shadow_nodes) > limit; budget--) {
		struct xa_node *node;
		struct lv_file *file;

		lv_lock_acquire(&lruvec->shadow_lock);
		if (list_empty(&lruvec->shadow_nodes)) {
			lv_lock_release(&lruvec->shadow_lock);
			break;
		}
		node = list_first_entry(&lruvec->shadow_nodes, struct xa_node, private_list);
		file = node->mapping;
		if (!lv_lock_trylock_inverted(&file->lock)) {
			/* Busy: look at it again later. */
			list_del(&node->private_list);
			list_add_tail(&node->private_list, &lruvec->shadow_nodes);
			lv_lock_release(&lruvec->shadow_lock);
			continue;
		}
		list_del(&node->private_list);
		node->on_shadow_list = false; /* we hold its mapping lock too */
		WRITE_ONCE(lruvec->nr_shadow_nodes, lruvec->nr_shadow_nodes - 1);
		/* Counted under the lock that a removal's move takes before it retires events. */
		lruvec_count_event_atomic(lruvec, EV_WORKINGSET_NODERECLAIM, 1);
		lv_lock_release(&lruvec->shadow_lock);

		/* Under the mapping lock the node can only still hold shadows. */
		VM_BUG_ON_M(file->machine, node->count != node->nr_values);
		for (unsigned int i = 0; i < XA_CHUNK_SIZE; i++)
			rcu_assign_pointer_lv(node->slots[i], NULL);
		node->count = 0;
		node->nr_values = 0;
		xa_delete_node(file, node);
		lv_lock_release(&file->lock);
		freed++;
	}
	return freed;
}

/*
 * check_shadow_list - lv_check()'s look at @lruvec's shadow list: as long as its count, every
 * node bound to it, marked listed and holding only shadows, and no list kept for a memcg being
 * removed. Context: quiescent (no other thread uses the machine).
 */
void check_shadow_list(struct lruvec *lruvec, void (*fail)(void *, const char *, const void *),
		       void *arg)
{
	unsigned long nr = 0;
	struct list_head *pos;

	lv_lock_acquire(&lruvec->shadow_lock);
	list_for_each (pos, &lruvec->shadow_nodes) {
		struct xa_node *node = list_entry(pos, struct xa_node, private_list);

		if (++nr > lruvec->nr_shadow_nodes)
			break; /* a cycle, or a count too low: reported below */
		if (node->shadow_lruvec != lruvec || !node->on_shadow_list)
			fail(arg, "shadow node listed on the wrong lruvec or not marked listed",
			     node);
		if (!node->count || node->count != node->nr_values)
			fail(arg, "shadow node listed while it holds folios or nothing", node);
	}
	if (nr != lruvec->nr_shadow_nodes)
		fail(arg, "shadow list length differs from its count", lruvec);
	if (nr && lruvec->memcg && __atomic_load_n(&lruvec->memcg->dying, __ATOMIC_RELAXED))
		fail(arg, "shadow nodes listed for a memcg being removed", lruvec);
	lv_lock_release(&lruvec->shadow_lock);
}

/*
 * shadow_nodes_reparent - move every node on @from's shadow list to @to's (the kernel's
 * memcg_reparent_list_lrus()): @from's memcg is being removed, and no node may stay bound to
 * an lruvec that will be freed. Nodes keep their age order behind @to's own.
 * Context: memcg_mutex held; @from's memcg is marked dying (no node is added to it any more).
 */
void shadow_nodes_reparent(struct lruvec *from, struct lruvec *to)
{
	struct list_head *pos;

	VM_BUG_ON_M(from->pgdat->machine,
		    from->pgdat != to->pgdat || to->memcg != from->memcg->parent);
	lv_lock_acquire(&from->shadow_lock);
	lv_lock_acquire_nested(&to->shadow_lock);
	list_for_each (pos, &from->shadow_nodes)
		WRITE_ONCE(list_entry(pos, struct xa_node, private_list)->shadow_lruvec, to);
	list_splice_tail_init(&from->shadow_nodes, &to->shadow_nodes);
	WRITE_ONCE(to->nr_shadow_nodes, to->nr_shadow_nodes + from->nr_shadow_nodes);
	WRITE_ONCE(from->nr_shadow_nodes, 0);
	lv_lock_release(&to->shadow_lock);
	lv_lock_release(&from->shadow_lock);
}

/* ---- swap cache trees ---------------------------------------------------------------------- */

/*
 * A swap device's cache is a tree like a file's, indexed by slot offset, with the same
 * lock-free lookup, shadow entries and shadow-node lists. Its folios are anon: their ->mapping
 * is their mm (or NULL), never the tree, so the tree's own entries and counts say what it
 * holds, and the folio's slot is in pgdat->swap_slot[] (swap_state.c).
 */
struct lv_file *swap_space_create(struct lv_machine *m)
{
	struct lv_file *space = lv_file_open(m, -1, MAX_FILE_BYTES);

	if (space)
		space->swap_space = true; /* read only by close_all_files(), at teardown */
	return space;
}

void swap_space_destroy(struct lv_file *space)
{
	if (!space)
		return;
	VM_BUG_ON_M(space->machine, READ_ONCE(space->nrpages) != 0);
	lv_file_close(space); /* drops the shadows */
}

struct lv_lock *mapping_lock(struct lv_file *space)
{
	return &space->lock;
}

void *swap_cache_load(struct lv_file *space, unsigned long index, void ***slotp)
{
	return xa_load_slot(space, index, slotp);
}

int swap_cache_insert(struct lv_file *space, unsigned long index, struct lv_folio *folio,
		      void **shadowp)
{
	struct xa_node *leaf;
	void *old;

	lockdep_assert_held(&space->lock);
	*shadowp = NULL;
	leaf = xa_find_leaf(space, index, true);
	if (!leaf)
		return -ENOMEM;
	old = leaf->slots[index & XA_CHUNK_MASK];
	if (old && !xa_is_value(old))
		return -EEXIST;
	*shadowp = old;
	xa_store_range(space, leaf, index, 1, folio, NULL);
	WRITE_ONCE(space->nrpages, space->nrpages + 1);
	return 0;
}

bool swap_cache_erase(struct lv_file *space, unsigned long index, struct lv_folio *folio,
		      void *shadow)
{
	struct xa_node *leaf;

	lockdep_assert_held(&space->lock);
	leaf = xa_find_leaf(space, index, false);
	if (!leaf || leaf->slots[index & XA_CHUNK_MASK] != folio)
		return false;
	xa_store_range(space, leaf, index, 1, shadow, folio);
	WRITE_ONCE(space->nrpages, space->nrpages - 1);
	return true;
}

void swap_cache_clear_shadow(struct lv_file *space, unsigned long index)
{
	struct xa_node *leaf;
	void *old;

	lockdep_assert_held(&space->lock);
	leaf = xa_find_leaf(space, index, false);
	old = leaf ? leaf->slots[index & XA_CHUNK_MASK] : NULL;
	if (old && xa_is_value(old))
		xa_store_range(space, leaf, index, 1, NULL, NULL);
}
