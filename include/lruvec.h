/* SPDX-License-Identifier: LGPL-2.1-or-later */
/**
 * DOC: lruvec — the Linux kernel's memcg-aware page LRU as a userspace library
 *
 * One machine (&struct lv_machine) owns NUMA nodes with real page frames, a tree of memory
 * cgroups, one LRU vector ("lruvec") per (memcg, node) with the five LRU lists, per-CPU folio
 * batches and lock statistics. The locking is the kernel's since Linux 5.11: one lock per
 * lruvec, a folio's lruvec found by lookup, lock and re-check, and PG_lru used as the isolation
 * pin. The Linux <= 5.10 design (one lock per node) is selectable at run time so both can be
 * compared in one binary.
 *
 * Lifecycle: lv_machine_create() → lv_memcg_create() → lv_folio_alloc() → LRU operations →
 * lv_folio_put() → lv_memcg_remove() → lv_machine_destroy(). Every folio must be released and
 * every memcg other than the root removed before the machine is destroyed; a machine destroyed
 * with folios still allocated reports them and frees the memory anyway.
 *
 * Threading: every function is thread-safe unless its comment says otherwise. No function may
 * be called from a signal handler. Threads need no registration (RCU is liburcu's "bp"
 * flavour). lv_check() requires a quiescent machine.
 *
 * Errors: functions return 0 or a negative errno, or NULL with errno set. Bad input from the
 * caller (a value out of range, an object of another machine, a folio in the wrong state) is
 * reported, never aborts, and never loses a page. A NULL handle is bad input only where a
 * function lists EINVAL for it (the creating, removing, reading and migrating calls); the
 * per-folio calls, the drains and the statistics take valid handles, as the kernel's do.
 *
 * Caveats:
 *  - A folio handle is valid while the caller holds a reference on it. Using a folio after the
 *    last reference was dropped is undefined, as in the kernel.
 *  - A memcg handle is valid until lv_memcg_remove() succeeds on it. Removal of a memcg that
 *    another thread still charges into may fail with -EBUSY or make that charge fail with
 *    -ENOENT; it never corrupts state.
 *  - fork() without exec() is not supported while a machine exists.
 */
#ifndef LRUVEC_H
#define LRUVEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The library's version: the shared library is liblruvec.so.MAJOR.MINOR with the soname
 * liblruvec.so.MAJOR. MINOR grows when functions or enum values are added; MAJOR when an
 * existing function, structure or value changes meaning.
 */
#define LV_VERSION_MAJOR 1
#define LV_VERSION_MINOR 0

struct lv_machine;
struct lv_memcg;
struct lv_folio;

/** enum lv_lock_design - which lock serialises an lruvec's lists. */
enum lv_lock_design {
	LV_LOCK_LRUVEC = 0, /* one lock per (memcg, node) lruvec: Linux 5.11+ */
	LV_LOCK_NODE = 1,   /* all lruvecs of a node share the node's lock: Linux <= 5.10 */
};

/** enum lv_lock_backend - how every lock of a machine is implemented. */
enum lv_lock_backend {
	LV_BACKEND_FUTEX = 0, /* barging futex lock: flat under oversubscription (default) */
	LV_BACKEND_MUTEX = 1, /* pthread_mutex_t */
	LV_BACKEND_SPIN = 2,  /* test-and-test-and-set, yields after 100 spins */
};

/** enum lv_disable_mode - how lv_lru_cache_disable() waits for in-flight adders. */
enum lv_disable_mode {
	LV_DISABLE_SWEEP = 0, /* raise the count, then lock and drain every CPU slot (default) */
	/*
	 * Raise, wait for a normal RCU grace period, drain: the Linux 5.18 regression. The wait
	 * is liburcu's synchronize_rcu() (which covers the adders' read-side sections) followed
	 * by a normal grace period of the host kernel (membarrier(MEMBARRIER_CMD_GLOBAL), i.e.
	 * its synchronize_rcu()), which adds nothing to correctness but gives the wait the
	 * milliseconds a kernel grace period takes (quiescent states are reported at scheduler
	 * ticks); where the host refuses membarrier, a sleep of one 4 ms tick stands in.
	 */
	LV_DISABLE_RCU = 1,
	/*
	 * Raise, liburcu's synchronize_rcu() alone, drain: like the 5.19 fix
	 * (synchronize_rcu_expedited()), the wait ends as soon as no adder is inside its
	 * read-side section — liburcu forces that with membarrier's expedited IPIs.
	 */
	LV_DISABLE_RCU_EXPEDITED = 2,
};

/**
 * struct lv_config - machine configuration. Start from lv_config_init().
 * @nr_nodes:       NUMA nodes, 1..64.
 * @node_mem_bytes: memory per node, a multiple of 4 KiB, at least 4 MiB, at most 64 GiB.
 * @nr_cpu_slots:   per-CPU batch slots, 1..4096; 0 means get_nprocs_conf().
 * @lock_design:    see &enum lv_lock_design.
 * @memcg_disabled: like booting with cgroup_disable=memory: one lruvec per node, no charging.
 * @lock_backend:   see &enum lv_lock_backend.
 * @batch_size:     folios per per-CPU batch, 1..31 (31 as in Linux 6.9+, 15 before).
 * @disable_mode:   see &enum lv_disable_mode.
 * @metadata_only:  no data frames: lv_folio_data() returns NULL (pure LRU experiments).
 * @no_kswapd:      do not start a kswapd thread per node (reclaim is then direct only).
 * @file_folio_order: page cache folios of 2^order pages (0..6), like the kernel's large-folio
 *                  readahead; a miss falls back to one page when no such block is free.
 */
struct lv_config {
	unsigned int nr_nodes;
	size_t node_mem_bytes;
	unsigned int nr_cpu_slots;
	enum lv_lock_design lock_design;
	bool memcg_disabled;
	enum lv_lock_backend lock_backend;
	unsigned int batch_size;
	enum lv_disable_mode disable_mode;
	bool metadata_only;
	bool no_kswapd;
	unsigned int file_folio_order;
};

#define LV_PAGE_SIZE 4096UL
#define LV_MAX_ORDER 9 /* largest folio: 2^9 pages = 2 MiB */
#define LV_MAX_NODES 64
#define LV_MAX_BATCH 31
#define LV_MAX_FILE_FOLIO_ORDER 6

/**
 * lv_config_init - fill @cfg with the defaults: 1 node of 256 MiB, get_nprocs_conf() slots,
 * per-lruvec locking, memcg enabled, futex locks, batches of 31, sweep-mode disable, real
 * data frames.
 * Context: any.
 */
void lv_config_init(struct lv_config *cfg);

/**
 * lv_machine_create - build a machine from @cfg (NULL means the defaults).
 * Return: the machine, or NULL with errno EINVAL (a field out of range) or ENOMEM. Nothing is
 * leaked on failure.
 * Context: may block; allocates.
 */
struct lv_machine *lv_machine_create(const struct lv_config *cfg);

/**
 * lv_machine_destroy - drain all batches, free every memcg and the memory of @m.
 * Files still open are reported on stderr and closed; folios still allocated are reported on
 * stderr (caller bugs both) and freed with the machine.
 * Context: no other thread may use @m; may block (waits for RCU callbacks).
 */
void lv_machine_destroy(struct lv_machine *m);

/** lv_machine_config - the configuration @m was created with (defaults filled in). */
const struct lv_config *lv_machine_config(const struct lv_machine *m);

/* ---- Memory cgroups ---------------------------------------------------------------------- */

/**
 * lv_memcg_root - the root memory cgroup of @m, or NULL when memcg is disabled.
 * Context: any. The root lives as long as the machine.
 */
struct lv_memcg *lv_memcg_root(struct lv_machine *m);

/**
 * lv_memcg_create - create a child of @parent (NULL means the root) with no limit.
 * @name: a label for reports, copied (at most 63 bytes used); may be NULL.
 * Return: the memcg, or NULL with errno EINVAL (memcg disabled, or @parent being removed),
 * ENOSPC (65535 memcgs exist, the kernel's limit of memcg ids) or ENOMEM.
 * Context: may block; takes the machine's memcg tree mutex.
 */
struct lv_memcg *lv_memcg_create(struct lv_machine *m, struct lv_memcg *parent, const char *name);

/**
 * lv_memcg_remove - remove a memcg without children or address spaces, like rmdir(2) of a
 * cgroup. Its folios move to its parent (the kernel's LRU reparenting): every folio on its
 * LRU lists, after its folios are flushed from every CPU's batches (other memcgs' stay
 * queued), goes to the tail of the same list of the
 * parent, in its order (so the parent's reclaim takes a removed tenant's page cache first),
 * and is charged to the parent from then on; the parent's usage does not change, since it
 * already counted them, and no limit is checked. Its page cache stays cached. Folios in
 * transit (isolated by reclaim or a migration, being charged or filled) are waited for, up to
 * about 100 ms. From the moment the removal starts, charges to the memcg fail (-ENOENT from
 * lv_file_read(), lv_folio_move_memcg(), ENOENT from lv_folio_alloc()) and so do
 * lv_memcg_create() and lv_mm_create() under it (EINVAL); if the removal fails, they work
 * again once it has returned. Its memory is freed after an RCU grace period, so threads still
 * looking it up under RCU are safe; its lock statistics and event counters are folded into
 * the machine's totals first (reparented pages count as LV_PGMOVED). A folio's memcg
 * (lv_folio_memcg()) therefore changes when its memcg is removed. Once this returns 0,
 * @memcg must not be passed to any function again (like a closed file descriptor): stop the
 * threads that use it first, or let them stop at their first -ENOENT during the removal.
 * Return: 0; -EBUSY if it has children or address spaces (like tasks in a cgroup), if another
 * thread is removing it, or if a folio charged to it stays off the LRU (isolated with
 * lv_folio_isolate_lru(), or allocated and never added, by the caller): the memcg is then
 * usable again and the folios already moved (unevictable ones included) stay with the
 * parent; -EINVAL for the root or NULL.
 * Context: may block (sleeps while waiting); takes the memcg tree mutex, its own drain mutex
 * and slot locks, its lruvec locks and then its parent's (nested), and its shadow locks and
 * then its parent's (nested). The caller holds no library lock.
 */
int lv_memcg_remove(struct lv_memcg *memcg);

/**
 * lv_memcg_set_max - set the hard limit of @memcg in pages (SIZE_MAX: no limit). Lowering it
 * below the current usage is allowed and reclaims nothing by itself: the next charges reclaim
 * from @memcg's subtree (and fail with -ENOMEM if that frees too little) until usage is back
 * under the limit.
 * Return: 0, or -EINVAL for the root.
 * Context: any; lock-free.
 */
int lv_memcg_set_max(struct lv_memcg *memcg, size_t pages);

/** lv_memcg_usage - pages currently charged to @memcg and its descendants. Context: any. */
size_t lv_memcg_usage(const struct lv_memcg *memcg);

/** lv_memcg_max - the limit of @memcg in pages. Context: any. */
size_t lv_memcg_max(const struct lv_memcg *memcg);

/** lv_memcg_parent - the parent of @memcg, NULL for the root. Context: any. */
struct lv_memcg *lv_memcg_parent(const struct lv_memcg *memcg);

/** lv_memcg_name - the label given at creation ("root" for the root). Context: any. */
const char *lv_memcg_name(const struct lv_memcg *memcg);

/* ---- Folios: allocation and references --------------------------------------------------- */

/** Allocation flags for lv_folio_alloc(). */
#define LV_FOLIO_ANON 0x1u /* swap-backed (anon lists); otherwise page cache (file lists) */
#define LV_FOLIO_ZERO 0x2u /* zero the data */

/**
 * lv_folio_alloc - allocate a folio of 2^@order pages on node @nid and charge it to @memcg.
 * @memcg: the cgroup to charge; NULL means the root. Ignored when memcg is disabled.
 * @flags: LV_FOLIO_* bits.
 * A charge over a limit first reclaims from the memcg at its limit (memcg limit reclaim), an
 * allocation below the node's min watermark or failing reclaims from the node (direct
 * reclaim), and one below the low watermark wakes the node's kswapd. When a reclaim pass
 * frees nothing, the folios of that memcg (and its descendants) or of that node that any
 * CPU's batches hold are flushed once, and only those (queued folios are on no list reclaim
 * can scan, and with a small limit or node they may be all there is); then reclaim tries
 * again. A charge of more pages than the limit itself fails at once.
 * Return: the folio with one reference held by the caller, not on any LRU; or NULL with errno
 * EINVAL (bad node, order or flags), ENOENT (@memcg is being removed), ENOMEM (after reclaim,
 * the node still has no free block of that order, or the charge still exceeds a limit).
 * Context: may block (reclaim; the drain mutex of the memcg at its limit or of the node);
 * takes zone, page-list, slot, LRU and mapping locks. The caller holds no library lock.
 */
struct lv_folio *lv_folio_alloc(struct lv_machine *m, int nid, unsigned int order,
				struct lv_memcg *memcg, unsigned int flags);

/** lv_folio_get - take another reference. The caller must already hold one. */
void lv_folio_get(struct lv_folio *folio);

/**
 * lv_folio_try_get - take a reference unless the count is zero (the folio is being freed).
 * Return: true if a reference was taken.
 */
bool lv_folio_try_get(struct lv_folio *folio);

/**
 * lv_folio_put - drop a reference. The last one unlinks the folio from its LRU list (under the
 * lruvec lock), then uncharges and frees it after the unlock.
 * Context: takes an lruvec lock if the folio is on an LRU, and the page allocator's locks.
 * Callers hold no library lock; inside the library, unmapping releases folios under an mm's
 * page_table_lock, which ranks above all of these.
 */
void lv_folio_put(struct lv_folio *folio);

/**
 * lv_folios_put - drop one reference on each of @nr folios. Consecutive folios of the same
 * lruvec share one lock hold; frees and uncharges happen after the unlock, batched.
 */
void lv_folios_put(struct lv_folio **folios, size_t nr);

/** lv_folio_ref_count - the current reference count (racy unless the caller excludes others). */
int lv_folio_ref_count(const struct lv_folio *folio);
/** lv_folio_nid - the node the folio's frames belong to. */
int lv_folio_nid(const struct lv_folio *folio);
/** lv_folio_nr_pages - 2^order. */
unsigned int lv_folio_nr_pages(const struct lv_folio *folio);
/** lv_folio_data - the folio's data (nr_pages * 4 KiB), or NULL in metadata-only mode. */
void *lv_folio_data(struct lv_folio *folio);
/**
 * lv_folio_memcg - the memcg the folio is charged to (NULL with memcg disabled). The answer
 * can change at once if another thread moves the folio; stable while the caller has it isolated.
 */
struct lv_memcg *lv_folio_memcg(const struct lv_folio *folio);

/** Folio flag bits, for lv_folio_test(). */
enum lv_folio_flag {
	LV_PG_LRU,	   /* on an LRU list; clear while an actor holds the pin */
	LV_PG_ACTIVE,	   /* on (or headed for) an active list */
	LV_PG_REFERENCED,  /* second-chance bit of lv_folio_mark_accessed() */
	LV_PG_WORKINGSET,  /* was part of the workingset */
	LV_PG_UNEVICTABLE, /* accounted on the unevictable list */
	LV_PG_MLOCKED,	   /* mapped by an mlocked region */
	LV_PG_SWAPBACKED,  /* anon: selects the anon lists */
	LV_PG_DIRTY,	   /* data not yet written back */
	LV_PG_WRITEBACK,   /* under writeback */
	LV_PG_RECLAIM,	   /* rotate to the tail when writeback ends */
	LV_PG_MAPPED,	   /* mapped by a process (deactivate_file skips it) */
	LV_PG_ISOLATED,	   /* isolated by lv_folio_isolate_lru(), awaiting putback */
	LV_NR_FOLIO_FLAGS
};

/** lv_folio_test - test one flag (an atomic read). */
bool lv_folio_test(const struct lv_folio *folio, enum lv_folio_flag flag);

/**
 * lv_folio_set_state - set or clear one of the caller-owned state flags: LV_PG_DIRTY,
 * LV_PG_WRITEBACK, LV_PG_MAPPED, or LV_PG_MLOCKED (the last makes the folio unevictable when
 * it is next added to an LRU, so it may only change while the folio is off the LRU and not
 * queued). The LRU-owned flags are refused.
 * Return: 0; -EINVAL for any other flag; -EBUSY for LV_PG_MLOCKED on a folio on an LRU.
 */
int lv_folio_set_state(struct lv_folio *folio, enum lv_folio_flag flag, bool on);

/* ---- LRU operations ---------------------------------------------------------------------- */

/**
 * lv_folio_add_lru - queue a folio for addition to an LRU list. The list (anon/file, active or
 * not, unevictable) is decided when the per-CPU batch is drained.
 * Return: 0; -EINVAL if the folio is already on an LRU or already queued for addition.
 * Context: takes a CPU slot lock; may take lruvec locks (batch full or cache disabled).
 */
int lv_folio_add_lru(struct lv_folio *folio);

/**
 * lv_folio_mark_accessed - the kernel's second-chance state machine: inactive,unreferenced →
 * inactive,referenced → active (through the activate batch, or directly if still in this
 * CPU's lru_add batch) → active,referenced. Lock-free unless it activates.
 */
void lv_folio_mark_accessed(struct lv_folio *folio);

/** lv_folio_activate - queue the folio for the active list (no-op unless on an LRU). */
void lv_folio_activate(struct lv_folio *folio);

/** lv_folio_deactivate - queue an active folio for the inactive list (as MADV_COLD). */
void lv_folio_deactivate(struct lv_folio *folio);

/**
 * lv_deactivate_file_folio - queue a file folio whose invalidation failed: dirty or under
 * writeback → head of the inactive list with PG_reclaim; clean → tail; mapped → untouched.
 * No-op for an anon (swap-backed) folio, an unevictable one, or one not on an LRU.
 */
void lv_deactivate_file_folio(struct lv_folio *folio);

/**
 * lv_folio_mark_lazyfree - MADV_FREE: queue an anon folio to lose PG_swapbacked and move to the
 * inactive file list.
 */
void lv_folio_mark_lazyfree(struct lv_folio *folio);

/**
 * lv_folio_rotate_reclaimable - writeback ended on a PG_reclaim folio: queue it for the tail
 * of its inactive list.
 */
void lv_folio_rotate_reclaimable(struct lv_folio *folio);

/**
 * lv_folio_isolate_lru - take the folio off its LRU list, winning the PG_lru pin.
 * The caller must hold a reference; on success the isolation holds one more, released by
 * lv_folio_putback_lru() (or by lv_folio_put() if the caller abandons it).
 * Return: 0; -EBUSY if the folio is not on an LRU (in a batch, isolated by another actor,
 * never added).
 * Context: takes the folio's lruvec lock.
 */
int lv_folio_isolate_lru(struct lv_folio *folio);

/**
 * lv_folio_putback_lru - return a folio isolated by lv_folio_isolate_lru() to the LRU (through
 * the lru_add batch) and drop the isolation reference.
 * Return: 0; -EINVAL if the folio was not isolated by lv_folio_isolate_lru().
 */
int lv_folio_putback_lru(struct lv_folio *folio);

/**
 * lv_folio_move_memcg - move an on-LRU folio and its charge to @to (cgroup v1 charge moving):
 * isolate, charge @to up to the common ancestor, rebind under the old lruvec's lock, uncharge
 * the old memcg, put back.
 * Return: 0 (also when already in @to); -EBUSY if the folio is not on an LRU or the pin is
 * lost to another actor; -ENOMEM if @to or an ancestor below the common ancestor is at its
 * limit; -EINVAL with memcg disabled or @to NULL; -ENOENT if @to is being removed. On every
 * error nothing has changed.
 * Context: the caller holds a reference. Takes lruvec locks one at a time and a CPU slot lock.
 */
int lv_folio_move_memcg(struct lv_folio *folio, struct lv_memcg *to);

/**
 * lv_lru_add_drain - drain the calling CPU slot's batches. Best effort: a request queued while
 * this slot's lock was held (by a thread preempted on this CPU, most likely) went to another
 * slot, and so did the requests of a thread the scheduler has since moved; only
 * lv_lru_add_drain_all() covers those.
 * Context: takes its slot lock.
 */
void lv_lru_add_drain(struct lv_machine *m);

/**
 * lv_lru_add_drain_all - drain every CPU slot. Concurrent callers coalesce: a caller whose
 * request is covered by a sweep that started after it was made returns without sweeping.
 * Every folio whose lv_folio_add_lru() returned before this call is on an LRU when it returns.
 * Context: may block; takes the drain mutex, then slot locks.
 */
void lv_lru_add_drain_all(struct lv_machine *m);

/**
 * lv_lru_cache_disable - stop batching: until the matching lv_lru_cache_enable(), every add
 * or move request is applied at once, and all batches are empty when this returns. Nests.
 * Context: may block (the rcu modes wait for an RCU grace period).
 */
void lv_lru_cache_disable(struct lv_machine *m);

/** lv_lru_cache_enable - undo one lv_lru_cache_disable(). */
void lv_lru_cache_enable(struct lv_machine *m);

/*
 * struct lv_latency - a latency histogram with log-linear buckets: 8 per power of two, so a
 * percentile is exact to 12.5 %. Bucket i < 8 holds i ns; above, bucket 8 * (e - 2) + k holds
 * [2^e + k * 2^(e-3), 2^e + (k + 1) * 2^(e-3)).
 */
#define LV_LATENCY_BUCKETS 304
struct lv_latency {
	uint64_t count; /* the sum of the buckets */
	uint64_t total_ns;
	uint64_t max_ns;
	uint64_t buckets[LV_LATENCY_BUCKETS];
};

/**
 * lv_lru_cache_disable_latency - the latencies of every lv_lru_cache_disable() of @m so far
 * (including those made inside migration calls). Racy while threads run.
 */
void lv_lru_cache_disable_latency(struct lv_machine *m, struct lv_latency *out);

/**
 * lv_latency_percentile - the latency below which @pct percent (0..100; less counts as 0, more
 * as 100) of the samples lie: the upper bound of the bucket holding that rank (the maximum
 * for 100). 0 with no samples.
 */
uint64_t lv_latency_percentile(const struct lv_latency *lat, double pct);

/* ---- Page cache ------------------------------------------------------------------------- */

struct lv_file;

/**
 * lv_file_open - a page cache mapping over @fd (read with pread(2)) of @size bytes, or over
 * a sparse file of @size bytes whose holes read as zeros when @fd is -1. @size, not the real
 * file's size, bounds reads: bytes past the end of a shorter file read as zeros, and a longer
 * file's bytes past @size are never read. The descriptor stays the caller's: it must remain
 * open until lv_file_close(), which does not close it.
 * Return: the file, or NULL with errno EINVAL (@size is 0 or above 2^52, @fd < -1, or a real
 * @fd on a metadata-only machine, which has no frames for its bytes) or ENOMEM.
 * Context: may block.
 */
struct lv_file *lv_file_open(struct lv_machine *m, int fd, uint64_t size);

/**
 * lv_file_read - copy up to @len bytes at @off into @buf through the page cache, charging
 * newly cached pages to @memcg (NULL: the root). Each page read is marked accessed: the second
 * access to a cached page activates it. A page being filled by another reader is waited for
 * (awake for up to about a millisecond, then asleep). Pages evicted earlier leave shadow
 * entries; a refault within the workingset size is activated at once (and that read does not
 * also mark it accessed).
 * Return: bytes read (0 at or beyond the end; fewer than @len if an error stopped the read
 * after some bytes), or -EIO (reading @fd failed: every reader waiting for that page gets
 * -EIO and the page is dropped), -ENOMEM (the charge or the allocation failed after
 * reclaim), -ENOENT (@memcg is being removed and a page had to be charged), -EINVAL.
 * Context: may block (fill, reclaim and its drain mutex, as in lv_folio_alloc()); takes the
 * mapping lock, slot and lruvec locks.
 */
long lv_file_read(struct lv_file *file, struct lv_memcg *memcg, void *buf, size_t len,
		  uint64_t off);

/**
 * lv_file_truncate - shrink (or grow) the file to @size bytes; cached pages beyond it are
 * dropped from the page cache and freed once their last reader lets go (the call flushes the
 * dropped folios out of every CPU's batches, whose references would otherwise keep them; the
 * other folios queued there, other tenants' among them, stay queued).
 * Return: 0 or -EINVAL.
 * Context: may block (the mapping lock, then the drain mutex of dropped folios, drop_drain,
 * not lv_lru_add_drain_all()'s); takes slot and lruvec locks.
 */
int lv_file_truncate(struct lv_file *file, uint64_t size);

/** lv_file_cached_pages - pages of @file currently in the page cache (racy). */
unsigned long lv_file_cached_pages(const struct lv_file *file);

/**
 * lv_file_close - drop every cached page of @file and free it. No read may be in progress
 * or follow.
 * Context: may block, as lv_file_truncate() (which it calls, with size 0); takes the memcg tree
 * mutex. The descriptor is freed after an RCU grace period.
 */
void lv_file_close(struct lv_file *file);

/* ---- Anonymous memory (memory.c) -------------------------------------------------------- */

/*
 * A struct lv_mm is a process's address space: anonymous regions (a brk heap and mmap-like
 * regions) whose pages are faulted in on first write, charged to the mm's memcg and added to
 * the anon LRU lists, and released in batches when unmapped. Addresses are virtual: 64-bit
 * numbers private to the mm, page aligned where the function says so. Data moves in and out
 * only through lv_mm_write()/lv_mm_read()/lv_mm_memset(), so that migration can move a page
 * under a process without it noticing.
 *
 * Threading: every function may be called by several threads on one mm at once; an mm's page
 * tables are protected by its page_table_lock (lock class "mm"). lv_mm_destroy() must not
 * race with any other call on the same mm.
 */
struct lv_mm;

/** madvise() advice understood by lv_madvise(). */
enum lv_madvise {
	LV_MADV_DONTNEED = 4, /* unmap: the next read sees zeros, the next write faults anew */
	LV_MADV_FREE = 8,     /* lazyfree: reclaim may drop clean pages; a write cancels */
	LV_MADV_COLD = 20,    /* deactivate: the pages move to the inactive anon list */
};

/**
 * lv_mm_create - an empty address space charging @memcg (NULL: the root), faulting pages in on
 * node @nid (its preferred node, changed by lv_mm_set_node()). Until lv_mm_destroy(), @memcg
 * cannot be removed (-EBUSY), as a cgroup with tasks cannot.
 * Return: the mm, or NULL with errno EINVAL (bad node, @memcg of another machine or being
 * removed) or ENOMEM.
 * Context: may block; allocates.
 */
struct lv_mm *lv_mm_create(struct lv_machine *m, struct lv_memcg *memcg, int nid);

/**
 * lv_mm_destroy - unmap every region, releasing its pages in batches, and free @mm (after an
 * RCU grace period, since reclaim and migration may be about to lock it through a folio).
 * Context: no other call on @mm may run or follow; may block.
 */
void lv_mm_destroy(struct lv_mm *mm);

/**
 * lv_mm_set_node - where later faults allocate (set_mempolicy(MPOL_PREFERRED)).
 * Return: 0, or -EINVAL for a bad node. Pages already present stay where they are.
 */
int lv_mm_set_node(struct lv_mm *mm, int nid);

/**
 * lv_mm_brk - sbrk(): move the end of the heap by @delta bytes (rounded to whole pages away
 * from zero) and store the previous end in *@old_brk (may be NULL). Growing maps nothing yet;
 * shrinking unmaps the pages beyond the new end, releasing them through the batched release
 * path (one lruvec lock hold per batch), as munmap does.
 * Return: 0; -EINVAL if the heap would shrink below its start; -ENOMEM if it would exceed
 * 64 GiB or its page table cannot grow (nothing changed).
 * Context: takes the mm's page_table_lock; the release takes LRU, pcp and zone locks after it.
 */
int lv_mm_brk(struct lv_mm *mm, int64_t delta, uint64_t *old_brk);

/**
 * lv_mmap - map a new anonymous region of @len bytes (rounded up to pages) and store its start
 * in *@addr. Return: 0, -EINVAL (@len 0 or above 64 GiB), -ENOMEM.
 */
int lv_mmap(struct lv_mm *mm, size_t len, uint64_t *addr);

/**
 * lv_munmap - unmap [@addr, @addr + @len) from the regions it covers, releasing the pages;
 * a region cut in the middle keeps both sides (split as the kernel splits a VMA), a region
 * emptied is removed. Ranges with nothing mapped are ignored, as munmap(2) does.
 * The pages leave the mapping at once; a page faulted in so recently that its CPU's lru_add
 * batch still holds it stays charged until that batch drains (lv_lru_add_drain_all()).
 * Return: 0, -EINVAL (@addr not page aligned, @len 0, the range wraps past 2^64, or it
 * overlaps the heap, which only lv_mm_brk() shrinks), -ENOMEM (no memory to split).
 */
int lv_munmap(struct lv_mm *mm, uint64_t addr, size_t len);

/**
 * lv_mm_write - copy @len bytes from @buf to @addr, faulting in missing pages: allocate on
 * the preferred node, charge the mm's memcg (limit
 * reclaim first, then -ENOMEM), zero, map, and add to the anon LRU through the lru_add batch.
 * A write to a lazyfree page cancels its lazy free. Faults allocate on the preferred node
 * only (reclaiming there if needed), as MPOL_BIND would.
 * Return: 0; -EFAULT if some byte is outside every region (nothing written beyond the first
 * such page); -ENOMEM if a fault could not be charged or allocated (the pages before it hold
 * the data; nothing is leaked).
 * Context: may block (reclaim, as in lv_folio_alloc()); takes the page_table_lock around
 * each page, and no lock while a fault allocates.
 */
int lv_mm_write(struct lv_mm *mm, uint64_t addr, const void *buf, size_t len);

/** lv_mm_memset - like lv_mm_write() with every byte @c. */
int lv_mm_memset(struct lv_mm *mm, uint64_t addr, int c, size_t len);

/**
 * lv_mm_read - copy @len bytes at @addr to @buf. Pages never written (or dropped by
 * LV_MADV_DONTNEED or by reclaim of a lazyfree page) read as zeros and are not faulted in.
 * Return: 0 or -EFAULT (some byte outside every region).
 */
int lv_mm_read(struct lv_mm *mm, uint64_t addr, void *buf, size_t len);

/**
 * lv_madvise - apply @advice (&enum lv_madvise) to the pages present in [@addr, @addr + @len):
 * LV_MADV_COLD queues them for deactivation, LV_MADV_FREE cleans them and queues them for
 * the lazyfree move to the inactive file list (reclaim may then free them; a later write
 * keeps them), LV_MADV_DONTNEED unmaps them.
 * Return: 0, -EINVAL (bad advice, @addr not page aligned, the range wraps past 2^64),
 * -ENOMEM (part of the range is outside every region: the rest is still advised, as
 * madvise(2) does).
 */
int lv_madvise(struct lv_mm *mm, uint64_t addr, size_t len, int advice);

/** lv_mm_rss - pages currently mapped in @mm (racy). */
size_t lv_mm_rss(const struct lv_mm *mm);

/* ---- NUMA migration (migrate.c) ---------------------------------------------------------- */

/**
 * lv_migrate_pages - migrate_pages(2): move every page of @mm that sits on a node in
 * @from_nodes (bit n = node n) to @to_node. Disables the LRU cache for the call
 * (lv_lru_cache_disable()), isolates each folio, allocates on @to_node, copies the data,
 * rebinds the page table entry to the copy (the charge moves with it: usage is unchanged),
 * puts the copy back on the LRU, frees the original and re-enables the cache. A page that
 * cannot be isolated or is in use stays where it was, intact and on its LRU.
 * Return: the number of pages not moved (0 = all), or -EINVAL (bad @to_node).
 * Context: may block; takes the drain mutex, slot, mm, LRU, pcp and zone locks.
 */
long lv_migrate_pages(struct lv_mm *mm, uint64_t from_nodes, int to_node);

/**
 * lv_move_pages - move_pages(2): for each of @count page addresses, move the page to
 * @nodes[i] and store in @status[i] the node it is on afterwards, or -EFAULT (outside every
 * region), -ENOENT (not present), -EBUSY (isolated or in use by another actor), -ENOMEM
 * (@nodes[i] has no free page). With @nodes NULL, only report where each page is (no cache
 * disable, as the kernel's do_pages_stat()). A nonzero @count with @nodes also disables the
 * LRU cache around the whole call, even when no page moves (as do_pages_move()).
 * Return: 0, or -EINVAL (a bad node in @nodes: nothing moved).
 */
int lv_move_pages(struct lv_mm *mm, size_t count, const uint64_t *addrs, const int *nodes,
		  int *status);

/**
 * lv_file_migrate_pages - move the page cache folios of @file that sit on nodes in
 * @from_nodes to @to_node, as migrating a mapped file's pages does: the copy replaces the
 * original in the file's tree under the mapping lock, and a folio a reader is using or
 * filling stays. Return: folios not moved, or -EINVAL.
 */
long lv_file_migrate_pages(struct lv_file *file, uint64_t from_nodes, int to_node);

/* ---- Reclaim ----------------------------------------------------------------------------- */

/**
 * lv_reclaim_node - reclaim up to @nr pages from node @nid as kswapd would (all memcgs, fair
 * scan targets). At the first three scan priorities an lruvec whose lock is held is passed
 * over (counted in LV_RECLAIM_SKIP_BUSY); after that reclaim waits for it.
 * Return: pages reclaimed.
 * Context: may block (mapping and LRU locks; at its first three priorities it does not wait to
 * isolate from an lruvec whose lock is held, but putting folios back always waits); no
 * library lock held.
 */
unsigned long lv_reclaim_node(struct lv_machine *m, int nid, unsigned long nr);

/**
 * lv_memcg_reclaim - reclaim up to @nr pages charged to @memcg and its descendants, as limit
 * reclaim does at charge time. Return: pages reclaimed.
 */
unsigned long lv_memcg_reclaim(struct lv_memcg *memcg, unsigned long nr);

/* ---- Statistics -------------------------------------------------------------------------- */

/** enum lv_lock_class - lock classes for the statistics. */
enum lv_lock_class {
	LV_LOCK_CLASS_LRUVEC, /* per-(memcg, node) lru_lock */
	LV_LOCK_CLASS_NODE,   /* per-node lru_lock (node design, or memcg disabled) */
	LV_LOCK_CLASS_ZONE,   /* buddy allocator */
	LV_LOCK_CLASS_SLOT,   /* per-CPU batch slot */
	LV_LOCK_CLASS_PCP,    /* per-CPU page list */
	LV_LOCK_CLASS_DRAIN,  /* drain mutexes: lru_add_drain_all's, truncation's, each node's and
				 memcg's */
	LV_LOCK_CLASS_MEMCG,  /* memcg tree mutex */
	LV_LOCK_CLASS_MAPPING, /* page cache mapping (the kernel's i_pages lock) */
	LV_LOCK_CLASS_SHADOW,  /* an lruvec's list of page cache nodes holding only shadows */
	LV_LOCK_CLASS_MM,      /* an address space's page tables (the kernel's page_table_lock) */
	LV_NR_LOCK_CLASSES
};

/** struct lv_lock_stat - the columns of `perf lock report`. Times in nanoseconds. */
struct lv_lock_stat {
	uint64_t acquired;
	uint64_t contended;
	uint64_t wait_total_ns;
	uint64_t wait_max_ns;
	uint64_t wait_min_ns; /* 0 if never contended */
};

/** lv_lock_class_name - "lruvec", "node", ... */
const char *lv_lock_class_name(enum lv_lock_class cls);

/**
 * lv_lock_stats - sum the statistics of every lock of class @cls (including those of removed
 * memcgs). Racy while threads run; exact at a quiescent point.
 */
void lv_lock_stats(struct lv_machine *m, enum lv_lock_class cls, struct lv_lock_stat *out);

/** lv_lock_stats_reset - zero every lock's statistics. Context: quiescent machine. */
void lv_lock_stats_reset(struct lv_machine *m);

/**
 * lv_lock_stats_print - print one row per lock class that was used, in the columns of
 * `perf lock report`: Name, acquired, contended, avg wait, total wait, max wait, min wait (ns).
 */
void lv_lock_stats_print(struct lv_machine *m, FILE *out);

/** enum lv_stat_item - vmstat-like counters, per node and per memcg. */
enum lv_stat_item {
	LV_NR_INACTIVE_ANON, /* list sizes, in pages */
	LV_NR_ACTIVE_ANON,
	LV_NR_INACTIVE_FILE,
	LV_NR_ACTIVE_FILE,
	LV_NR_UNEVICTABLE,
	LV_NR_ISOLATED, /* isolated by lv_folio_isolate_lru() and not yet put back */
	LV_NR_CHARGED,	/* pages charged (memcg: own + descendants; node: allocated) */
	LV_NR_FREE,	/* node only: free pages */
	LV_WMARK_MIN,	/* node only: watermarks */
	LV_WMARK_LOW,
	LV_WMARK_HIGH,
	LV_PGACTIVATE, /* events */
	LV_PGDEACTIVATE,
	LV_PGLAZYFREE,
	LV_PGROTATED,
	LV_PGMOVED,	 /* pages whose charge moved out of this memcg (lv_folio_move_memcg) */
	LV_LOCK_RETRIES, /* folio_lruvec_lock re-check failures */
	LV_PGSCAN,	       /* pages scanned on inactive lists by reclaim */
	LV_PGSTEAL,	       /* pages reclaimed */
	LV_PGREFILL,	       /* pages scanned on active lists */
	LV_WORKINGSET_REFAULT, /* page cache misses that found a shadow entry */
	LV_WORKINGSET_ACTIVATE, /* refaults close enough to be activated */
	LV_WORKINGSET_NODERECLAIM, /* page cache nodes of shadow entries freed */
	LV_ALLOCSTALL,	       /* allocations or charges that entered direct reclaim */
	LV_NR_FILE_PAGES,      /* node only: pages in the page cache */
	LV_PGMIGRATE_SUCCESS,  /* pages migrated (counted on the destination) */
	LV_PGMIGRATE_FAIL,     /* pages that could not be migrated (counted on the source) */
	LV_RECLAIM_SKIP_BUSY,  /* lruvecs global reclaim passed over: lock held */
	LV_WORKINGSET_NODES,   /* a count, not an event: shadow-only page cache nodes listed */
	LV_RECLAIM_DRAIN,      /* reclaim passes that freed nothing, so the memcg's (or node's)
				  folios were flushed from every CPU's batches */
	LV_PAGEOUTRUN,	       /* node only: kswapd passes (the kernel's pageoutrun) */
	LV_PGPGIN,	       /* pages read into the page cache (page cache misses) */
	LV_NR_STAT_ITEMS
};

/** lv_stat_name - "nr_inactive_anon", "pgactivate", ... */
const char *lv_stat_name(enum lv_stat_item item);

/**
 * lv_node_stat - a counter of node @nid summed over all its lruvecs (including those of
 * removed memcgs). Return: the value, or 0 for a bad node or item.
 * Context: takes the memcg tree mutex; racy while threads run.
 */
uint64_t lv_node_stat(struct lv_machine *m, int nid, enum lv_stat_item item);

/**
 * lv_memcg_stat - a counter of @memcg's own lruvecs over all nodes (list sizes and events are
 * not hierarchical; LV_NR_CHARGED is). Node-only items return 0.
 */
uint64_t lv_memcg_stat(struct lv_memcg *memcg, enum lv_stat_item item);

/**
 * lv_drain_all_stats - how often lv_lru_add_drain_all() was called and how many of those calls
 * swept the slots themselves (the rest were covered by a concurrent sweep).
 */
void lv_drain_all_stats(struct lv_machine *m, uint64_t *calls, uint64_t *sweeps);

/**
 * lv_check - verify the invariants at a quiescent point (no other thread using @m): list
 * lengths equal size counters per lruvec and node; every PG_lru folio is on exactly the list
 * of exactly the lruvec its flags, node and memcg select; no active and unevictable folio;
 * unevictable folios counted but not linked; no free frame reachable from a list; batches
 * empty (after draining them); memcg usage equals the pages charged to it and its
 * descendants; free + allocated = total pages on every node.
 * @report: where to describe each violation (NULL: stderr).
 * Return: 0 if all hold, -EUCLEAN otherwise. Waits for kswapd to finish its pass and drains
 * all batches first.
 * Context: no other thread of the caller's using @m; may block.
 */
int lv_check(struct lv_machine *m, FILE *report);

/**
 * lv_bug_count - how many internal invariant violations were detected at run time. Debug
 * builds abort at the first one instead.
 */
uint64_t lv_bug_count(struct lv_machine *m);

#ifdef __cplusplus
}
#endif
#endif /* LRUVEC_H */
