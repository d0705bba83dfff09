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
 * Handles. A program holds five kinds: the machine, memcgs, folios, page cache files and
 * address spaces (mms). Each section below starts with what its handle is and how long it
 * lives. Lifecycle: lv_machine_create() → lv_memcg_create() → lv_folio_alloc(),
 * lv_file_open(), lv_mm_create() → LRU operations, reads and writes → lv_folio_put(),
 * lv_file_close(), lv_mm_destroy() → lv_memcg_remove() → lv_machine_destroy().
 * docs/locking.md ("Handle lifetimes") has a table per handle: for each call, what it may race
 * with, what must happen before it, and who frees what.
 *
 * Threading. Every function is thread-safe unless its Context: line says otherwise. Threads
 * need no registration (the library's RCU is liburcu's "bp" flavour). No function may be called
 * from a signal handler. A call that waits for an RCU grace period (lv_lru_cache_disable() in
 * the rcu modes, and the migration calls, which disable the cache) must not be made inside a
 * read-side section of the application's own liburcu-bp.
 *
 * Context: lines. Each names the library locks the call takes (lock classes as in
 * &enum lv_lock_class; any of them can make the call wait, since a contended lock sleeps in the
 * kernel), says whether it enters RCU read-side sections, and ends with one of:
 *  - "lock-free": takes no lock and never waits;
 *  - "does not block": waits at most for the locks it names, each held briefly by its holder;
 *  - "may block": can sleep, or wait for other threads' work longer than a lock hold
 *    (reclaim, a page fill, a drain, an RCU grace period).
 * No call returns with a library lock held, so a caller never holds one.
 *
 * Errors. Functions return 0 or a negative errno, or NULL with errno set. Bad input from the
 * caller (a value out of range, an object of another machine, a folio in the wrong state) is
 * reported, never aborts, and never loses a page. A NULL handle is bad input only where a
 * function lists EINVAL for it (the creating, removing, reading and migrating calls); the
 * per-folio calls, the drains and the statistics take valid handles, as the kernel's do.
 *
 * Caveats:
 *  - fork() without exec() is not supported while a machine exists.
 *  - Debug builds (-DLV_DEBUG) abort at the first internal invariant violation; release
 *    builds count it (lv_bug_count()) and go on.
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
#define LV_VERSION_MAJOR 4
#define LV_VERSION_MINOR 0

struct lv_machine;
struct lv_memcg;
struct lv_folio;
struct lv_file;
struct lv_mm;

/* ==== The machine ======================================================================== */

/*
 * A machine is the whole simulated computer: its nodes' memory, its CPU slots, its memcg tree,
 * and the kswapd threads. Every other handle belongs to one machine and is invalid after
 * lv_machine_destroy(). The configuration is fixed at creation.
 */

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
	/* the futex lock, whose contenders spin first for as long as spinning has paid lately */
	LV_BACKEND_ADAPTIVE = 3,
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

/** enum lv_thp_mode - when anonymous faults get transparent huge pages (sysfs "enabled"). */
enum lv_thp_mode {
	LV_THP_MADVISE = 0, /* only in regions given LV_MADV_HUGEPAGE (the default) */
	LV_THP_ALWAYS = 1,  /* in every region not given LV_MADV_NOHUGEPAGE */
	LV_THP_NEVER = 2,   /* never */
};

/** enum lv_thp_defrag - whether a huge page fault compacts when no 2 MiB block is free. */
enum lv_thp_defrag {
	LV_THP_DEFRAG_MADVISE = 0, /* direct compaction in LV_MADV_HUGEPAGE regions only */
	LV_THP_DEFRAG_ALWAYS = 1,  /* direct compaction for every huge page fault */
	LV_THP_DEFRAG_DEFER = 2,   /* never compact in the fault: wake kcompactd and fall back */
	LV_THP_DEFRAG_NEVER = 3,   /* never compact for a fault; fall back at once */
};

/**
 * enum lv_protocol - how a folio's lruvec is found and locked.
 *
 * LV_PROTOCOL_V1 is broken on purpose: it exists so that the tests can show that they catch
 * the first per-memcg lock design, never for use. A folio rebound to another memcg between
 * the lookup and the lock (a charge move, a removal's reparenting) leaves the thread holding
 * the wrong lruvec's lock: debug builds abort there (the check the kernel calls
 * lruvec_memcg_debug()), release builds count it (lv_bug_count()) and go on with lists that
 * may be corrupted and a memcg that may be freed under the lock.
 */
enum lv_protocol {
	LV_PROTOCOL_PIN = 0, /* lookup, lock, re-check; PG_lru test-and-clear as the pin */
	/*
	 * The August 2019 first version: lock the lruvec of the folio's memcg as read once, with
	 * no re-check, and let compaction test PG_lru and take its reference under that lock.
	 * With memcg disabled its lookup is the real one (a folio's lruvec is its node's, which
	 * no binding change can alter); compaction's order stays v1's.
	 */
	LV_PROTOCOL_V1 = 1,
};

/**
 * enum lv_scan_cost - how reclaim's scan-balance costs (lru_note_cost()) are accounted.
 *
 * Reclaim weighs the anon and file lists by what scanning each has cost lately (rotations,
 * refaults, I/O). LV_COST_LOCKED adds every cost under the LRU lock of the lruvec and of each
 * ancestor in turn, as Linux 5.8-7.1 do. LV_COST_VMSTAT makes the producers count into per-CPU
 * counters and has the consumer fold them into the lruvec under a per-lruvec cost lock, off
 * the LRU lock (the mm change of July 2026).
 */
enum lv_scan_cost {
	LV_COST_LOCKED = 0,
	LV_COST_VMSTAT = 1,
};

/**
 * enum lv_batch_policy - how a CPU slot's batches group folios for their flush.
 *
 * A flush takes an lruvec lock for each run of consecutive folios whose lruvecs use different
 * locks, so a batch that mixes the folios of many memcgs takes up to one lock hold per folio.
 * LV_BATCH_ARRIVAL moves a batch in the order its folios came, as Linux does.
 * LV_BATCH_SORTED orders the batch by lruvec (node, then memcg) just before it is moved,
 * with a stable sort in place: the folios of one lruvec keep their arrival order (their LRU
 * order), and the flush needs a few words of stack more. LV_BATCH_PER_LRUVEC gives each slot
 * LV_LRUVEC_BATCHES batches of each kind (of cfg.batch_size folios; about 7.5 KiB more per
 * slot), each holding the folios of one lruvec (in the node design, of one node's lock): a
 * batch that fills is flushed alone, and a folio of an lruvec with no batch flushes the least
 * recently used one. Drains flush every batch of a slot.
 * The grouping is a hint in both: the lruvec a folio is sorted or queued by may change until
 * its lock is held, and the flush relocks by the folio's lruvec as always.
 */
enum lv_batch_policy {
	LV_BATCH_ARRIVAL = 0,
	LV_BATCH_SORTED = 1,
	LV_BATCH_PER_LRUVEC = 2,
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
 * @thp:            see &enum lv_thp_mode.
 * @thp_defrag:     see &enum lv_thp_defrag.
 * @compaction_proactiveness: 0..100, as the vm.compaction_proactiveness sysctl: every 500 ms
 *                  kcompactd compacts a node on its own if the node's fragmentation score
 *                  (the percentage of its free pages in blocks smaller than 2^LV_MAX_ORDER) is
 *                  above a low mark + 10 (at most 100), until it is down to the low mark,
 *                  100 - this value (at least 5), unless the node lacks the free memory for
 *                  such a block (0 turns proactive compaction off).
 * @compact_unevictable_allowed: compaction may move unevictable (mlocked) folios, as the
 *                  vm.compact_unevictable_allowed sysctl.
 * @no_kcompactd:   do not start a kcompactd thread per node (compaction is then direct only).
 * @protocol:       see &enum lv_protocol.
 * @swappiness:     0..200, as the vm.swappiness sysctl: the weight of anon against file pages
 *                  when reclaim balances its scan (the root memcg's and every memcg's unless
 *                  lv_memcg_set_swappiness() sets its own); with 0, limit reclaim never
 *                  swaps and global reclaim swaps only lruvecs with no file pages.
 * @page_cluster:   0..5, as the vm.page-cluster sysctl: swap-in reads up to 2^page_cluster
 *                  slots around the one that faulted (the aligned block holding it).
 * @charge_moving:  lv_folio_move_memcg() works (cgroup v1 charge moving, Linux <= 6.12); false
 *                  refuses it with -EOPNOTSUPP, as Linux 6.13+ do.
 * @scan_cost:      see &enum lv_scan_cost.
 * @batch_large:    large folios wait in the per-CPU batches like small ones, until a full batch
 *                  or a drain; false (the default) flushes a batch as soon as a large folio
 *                  joins it, so the folio is on its list when the call returns: the rule Linux
 *                  6.17 names folio_may_be_lru_cached() (and its swap.c and mlock batches kept
 *                  before). True measures what leaving them queued would do.
 * @no_lock_sites:  do not record lock contention by call site (lv_lock_sites()); the cost of
 *                  recording can then be measured against a run without it.
 * @batch_policy:   see &enum lv_batch_policy.
 * @readahead_pages: 0..LV_MAX_READAHEAD. A read (lv_file_read()) that misses a page with
 *                  its predecessor cached (a sequential reader; or page 0) caches up to this
 *                  many pages from it in one pass, as the kernel's readahead window does
 *                  (read_ahead_kb 128: 32 pages): allocated, charged, inserted under one hold
 *                  of the mapping lock, added to the LRU and filled together. It stops at the
 *                  first page cached already, the end of the file, or the first page that
 *                  cannot be had without more than one reclaim pass. A page read ahead is
 *                  marked accessed by its first read, unless its refault activated it.
 *                  0 or 1: each miss caches the page it needs. Only order-0 folios
 *                  (@file_folio_order 0) are read ahead; faults never are.
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
	enum lv_thp_mode thp;
	enum lv_thp_defrag thp_defrag;
	unsigned int compaction_proactiveness;
	bool compact_unevictable_allowed;
	bool no_kcompactd;
	enum lv_protocol protocol;
	unsigned int swappiness;
	unsigned int page_cluster;
	bool charge_moving;
	enum lv_scan_cost scan_cost;
	bool batch_large;
	bool no_lock_sites;
	enum lv_batch_policy batch_policy;
	unsigned int readahead_pages;
};

#define LV_PAGE_SIZE		4096UL
#define LV_MAX_ORDER		9 /* largest folio: 2^9 pages = 2 MiB */
#define LV_MAX_NODES		64
#define LV_MAX_BATCH		31
#define LV_MAX_FILE_FOLIO_ORDER 6
/* The largest lv_config.readahead_pages: 256 KiB. */
#define LV_MAX_READAHEAD  64
#define LV_LRUVEC_BATCHES 4 /* LV_BATCH_PER_LRUVEC: batches of each kind per slot */

/**
 * lv_config_init - fill a configuration with the defaults.
 * @cfg: the configuration to fill.
 *
 * The defaults: 1 node of 256 MiB, get_nprocs_conf() slots, per-lruvec locking, memcg enabled,
 * futex locks, batches of 31 in arrival order, sweep-mode disable, real data frames, a kswapd and a
 * kcompactd per node, page cache folios of one page, huge pages and their defrag in
 * LV_MADV_HUGEPAGE regions only, proactiveness 20, unevictable folios compactable, and the real
 * protocol.
 *
 * Return: nothing.
 * Context: any thread; lock-free.
 */
void lv_config_init(struct lv_config *cfg);

/**
 * lv_config_invalid - which field of a configuration lv_machine_create() would refuse.
 * @cfg: the configuration.
 *
 * Return: NULL if @cfg is valid, else the name of the first field out of range (as spelled
 * in &struct lv_config, e.g. "batch_size"), or "cfg" for @cfg NULL.
 * Context: any thread; lock-free.
 */
const char *lv_config_invalid(const struct lv_config *cfg);

/**
 * lv_machine_create - build a machine.
 * @cfg: its configuration (copied); NULL means the defaults of lv_config_init().
 *
 * Maps each node's memory and touches every page of it (so that no later measurement pays for
 * first touches), creates the root memcg and starts a kswapd and a kcompactd thread per node
 * (unless @cfg->no_kswapd, @cfg->no_kcompactd; a thread that cannot be started is left out,
 * and that node's reclaim or compaction is then direct only).
 *
 * Return: the machine, or NULL with errno EINVAL (a field of @cfg out of range, which
 * lv_config_invalid() names; debug builds also print it to stderr) or ENOMEM.
 * Nothing is leaked on failure.
 * Context: may block (maps and touches the nodes' memory, starts threads); takes no lock.
 */
struct lv_machine *lv_machine_create(const struct lv_config *cfg);

/**
 * lv_machine_destroy - stop and free a machine and everything in it.
 * @m: the machine; NULL is ignored.
 *
 * Stops the kswapd threads; closes the files and destroys the address spaces still open
 * (reporting each on stderr: caller bugs); drains every CPU slot; reports on stderr the folios
 * still allocated (the caller's, never released); waits for every pending RCU callback; then
 * frees the memcgs (removed or not), the nodes' memory and @m. Every handle of @m is invalid
 * from the moment this is called.
 *
 * Return: nothing.
 * Context: no other thread may use @m or any handle of it during or after the call; may block
 * (joins kswapd, waits for RCU callbacks).
 */
void lv_machine_destroy(struct lv_machine *m);

/**
 * lv_machine_config - the configuration a machine was created with.
 * @m: the machine.
 *
 * Return: @m's configuration, defaults filled in (@nr_cpu_slots is the real count); valid and
 * constant until lv_machine_destroy().
 * Context: any thread; lock-free.
 */
const struct lv_config *lv_machine_config(const struct lv_machine *m);

/* ==== Memory cgroups ===================================================================== */

/*
 * A memcg handle names one memory cgroup: a node of the machine's tree with a hard limit,
 * hierarchical page counters and one lruvec per node. The root exists as long as the machine;
 * every other memcg exists from lv_memcg_create() until lv_memcg_remove() returns 0 on it.
 * Calls that other threads make with a memcg while it is being removed are safe; what a caller
 * may and may not do around a removal is stated exactly in lv_memcg_remove().
 */

/**
 * lv_memcg_root - the root memory cgroup.
 * @m: the machine.
 *
 * Return: the root of @m, or NULL when memcg is disabled. The root lives as long as @m and can
 * be neither removed nor limited.
 * Context: any thread; lock-free.
 */
struct lv_memcg *lv_memcg_root(struct lv_machine *m);

/**
 * lv_memcg_create - create a memory cgroup, like mkdir(2) in a cgroup tree.
 * @m:      the machine.
 * @parent: its parent; NULL means the root.
 * @name:   a label for reports, copied (at most 63 bytes are kept); NULL means "".
 *
 * The new memcg has no limit (lv_memcg_set_max() sets one), charges nothing yet, and holds its
 * parent: the parent cannot be removed while it exists.
 *
 * Return: the memcg, or NULL with errno EINVAL (@m NULL, memcg disabled, @parent of another
 * machine, or @parent being removed or removed), ENOSPC (65535 memcgs exist, the kernel's limit
 * of memcg ids) or ENOMEM.
 * Context: does not block; allocates; takes the memcg tree mutex; RCU read-side, then a
 * reference on @parent for the call.
 */
struct lv_memcg *lv_memcg_create(struct lv_machine *m, struct lv_memcg *parent, const char *name);

/**
 * lv_memcg_remove - remove a memory cgroup, like rmdir(2) of a cgroup.
 * @memcg: the memcg to remove.
 *
 * Semantics. @memcg must have no children and no address spaces (lv_mm_create()), as a cgroup
 * must have no children and no tasks. From the moment the removal starts, nothing new is
 * charged to @memcg: lv_folio_alloc() fails with ENOENT, lv_file_read() with -ENOENT when it
 * has to charge a page, lv_folio_move_memcg() to it with -ENOENT, and lv_memcg_create() and
 * lv_mm_create() under it with EINVAL. Its folios move to its parent (the kernel's LRU
 * reparenting, as Linux 7.1 does it): folios are charged through a per-node obj_cgroup of
 * their memcg, and the removal re-points those at the parent one node at a time. First its
 * requests queued in any CPU's batches are applied (other memcgs' stay queued); then its lists
 * go, in their order, to the tail of the same lists of the parent, so the parent's reclaim
 * takes a removed tenant's page cache first; its unevictable folios go to the parent's
 * unevictable count. Every folio charged to @memcg, wherever it is — on a list, queued,
 * isolated by reclaim, a migration or the caller, or being charged or filled — is charged to
 * the parent from then on, without being waited for: one isolated meanwhile goes to the
 * parent's lists when it is put back. The parent's usage does not change (it already counted
 * them), no limit is checked, and the pages on the lists count as LV_PGMOVED of @memcg. Its page
 * cache stays cached; its shadow entries stay in the files, but a refault of one is no longer
 * activated (the memcg that evicted it is gone), and the tree nodes holding them move to the
 * parent's shadow lists. A folio's memcg (lv_folio_memcg()) therefore changes when its memcg is
 * removed. Its event counts and lock statistics stay in the machine's totals (lv_node_stat(),
 * lv_lock_stats()).
 *
 * Concurrent calls. Calls that other threads make with @memcg while the removal runs are safe:
 * each returns its normal result or fails as listed above for a memcg being removed, and the
 * read-only calls (lv_memcg_usage(), lv_memcg_max(), lv_memcg_stat(), lv_memcg_name(),
 * lv_memcg_parent(), lv_memcg_set_max()) return values the memcg had during the call. Each call
 * protects @memcg from its entry on (an RCU read-side section, or a reference before it
 * blocks), and the memory is freed only after every call that entered before this function
 * returned has finished with it. A call does not learn of the removal from a return value:
 * calls that charge nothing never see -ENOENT.
 *
 * The caller's rule. Once this has returned 0, @memcg must not be passed to any function
 * again, like a closed file descriptor, and the string lv_memcg_name() returned must not be
 * read. A call that starts just after the return cannot be told from one that started just
 * before it, so the caller must order every thread's last use of @memcg before the return:
 * stop the threads that use it (or have them stop using it, and wait until they have) before
 * or while calling this. A call already running when the removal starts or returns, such as
 * a read that blocks in a page fill, needs no such care.
 *
 * Return: 0 once @memcg is removed. On an error nothing is removed and @memcg stays usable (and
 * works again for charges once this has returned): -EINVAL for the root or NULL; -EBUSY if it
 * has children or address spaces, or if another thread is removing it.
 * Context: may block (flushes CPU batches, waits for locks); takes
 * the memcg tree mutex (twice), its own drain mutex and then slot locks, for each node its
 * lruvec lock and then its parent's (nested, the one place two LRU locks are held; never two
 * nodes' at once), pcp and zone locks for references it drops, and, under the tree mutex, its
 * shadow locks and then its parent's (nested); shrinking the parent's shadow lists afterwards takes
 * shadow locks and tries mapping locks; RCU read-side until it owns the removal.
 */
int lv_memcg_remove(struct lv_memcg *memcg);

/**
 * lv_memcg_set_max - set the hard limit of a memcg.
 * @memcg: the memcg (not the root).
 * @pages: the limit in pages; SIZE_MAX (or anything above LONG_MAX) means none.
 *
 * Lowering the limit below the current usage is allowed and reclaims nothing by itself: the
 * next charges reclaim from @memcg's subtree (and fail with -ENOMEM if that frees too little)
 * until usage is back under the limit. A charge running meanwhile sees the old or the new
 * limit. A limit counts @memcg's own pages and its descendants'.
 *
 * Return: 0, or -EINVAL for the root or NULL.
 * Context: any thread; lock-free (one atomic store); RCU read-side.
 */
int lv_memcg_set_max(struct lv_memcg *memcg, size_t pages);

/**
 * lv_memcg_usage - the pages charged to a memcg.
 * @memcg: the memcg.
 *
 * Counts @memcg's own pages and its descendants', including folios queued in CPU batches and
 * isolated ones. The root is not counted as the others are (as in the kernel): for it, the
 * pages allocated on all nodes.
 *
 * Return: the usage in pages, racy while other threads charge.
 * Context: any thread; lock-free; RCU read-side.
 */
size_t lv_memcg_usage(const struct lv_memcg *memcg);

/**
 * lv_memcg_max - the hard limit of a memcg.
 * @memcg: the memcg.
 *
 * Return: the limit in pages, SIZE_MAX for none (always for the root).
 * Context: any thread; lock-free; RCU read-side.
 */
size_t lv_memcg_max(const struct lv_memcg *memcg);

/**
 * lv_memcg_parent - the parent of a memcg.
 * @memcg: the memcg.
 *
 * Return: the parent, NULL for the root. The parent cannot be removed before @memcg is, so
 * the result is a valid handle for as long as @memcg is.
 * Context: any thread; lock-free; RCU read-side.
 */
struct lv_memcg *lv_memcg_parent(const struct lv_memcg *memcg);

/**
 * lv_memcg_name - the label given at creation.
 * @memcg: the memcg.
 *
 * Return: the label ("root" for the root), a string stored in @memcg: valid, and constant, for
 * as long as the handle is (until lv_memcg_remove() returns 0 on it).
 * Context: any thread; lock-free; RCU read-side.
 */
const char *lv_memcg_name(const struct lv_memcg *memcg);

/* ==== Folios: allocation, references, state ============================================== */

/*
 * A folio handle names 2^order contiguous page frames of one node, with a reference count. A
 * handle is valid while the caller holds a reference on it (lv_folio_alloc() returns one,
 * lv_folio_get() takes another); the last lv_folio_put() frees it, and using it afterwards is
 * undefined, as in the kernel. A folio is charged to one memcg from allocation to free. The LRU
 * lists hold no reference: they only know of a folio between lv_folio_add_lru() and its free
 * (or lv_folio_isolate_lru()).
 */

/** Allocation flags for lv_folio_alloc(). */
#define LV_FOLIO_ANON 0x1u /* swap-backed (anon lists); otherwise page cache (file lists) */
#define LV_FOLIO_ZERO 0x2u /* zero the data */

/**
 * lv_folio_alloc - allocate a folio and charge it to a memcg.
 * @m:     the machine.
 * @nid:   the node whose frames it uses.
 * @order: 2^@order pages, 0..LV_MAX_ORDER.
 * @memcg: the memcg to charge; NULL means the root. Ignored when memcg is disabled.
 * @flags: LV_FOLIO_* bits.
 *
 * A charge over a limit first reclaims from the memcg at its limit (memcg limit reclaim); an
 * allocation below the node's min watermark, or one that finds no free block, reclaims from
 * the node (direct reclaim); one that takes the node below its low watermark wakes the node's
 * kswapd. When a reclaim pass frees nothing, the folios of that memcg (and its descendants) or
 * of that node that any CPU's batches hold are flushed once, and only those (queued folios are
 * on no list reclaim can scan, and with a small limit or node they may be all there is); then
 * reclaim tries again. A charge of more pages than the limit itself fails at once.
 *
 * Return: the folio with one reference held by the caller, not on any LRU; or NULL with errno
 * EINVAL (@m NULL, bad node, order or flags, or @memcg of another machine), ENOENT (@memcg is
 * being removed), ENOMEM (after reclaim, the node still has no free block of that order, or
 * the charge still exceeds a limit).
 * Context: may block (reclaim, a drain, waiting on the drain mutex of the memcg at its limit
 * or of the node); takes zone, pcp, slot, lruvec, mapping, mm and shadow locks one at a time
 * (reclaim), and the drain mutex of the scope it flushes; RCU read-side, and a reference on
 * @memcg while it charges.
 */
struct lv_folio *lv_folio_alloc(struct lv_machine *m, int nid, unsigned int order,
				struct lv_memcg *memcg, unsigned int flags);

/**
 * lv_folio_get - take another reference on a folio.
 * @folio: a folio the caller holds a reference on.
 *
 * Return: nothing.
 * Context: any thread; lock-free.
 */
void lv_folio_get(struct lv_folio *folio);

/**
 * lv_folio_try_get - take a reference unless the folio is being freed.
 * @folio: a folio handle the caller may hold no reference on (found, say, in a structure of
 *         its own that races the folio's release).
 *
 * A folio's descriptor stays addressable as long as the machine exists, so this is safe on a
 * folio whose last reference is gone: it fails while the count is zero. It can succeed on the
 * same frame allocated again for someone else; check the result is still the folio meant.
 *
 * Return: true if a reference was taken.
 * Context: any thread; lock-free.
 */
bool lv_folio_try_get(struct lv_folio *folio);

/**
 * lv_folio_put - drop a reference on a folio.
 * @folio: a folio the caller holds a reference on.
 *
 * The last reference unlinks the folio from its LRU list (under its lruvec lock), then, after
 * the unlock, uncharges and frees it.
 *
 * Return: nothing.
 * Context: does not block; the last reference takes the folio's lruvec lock (if it is on an
 * LRU; RCU read-side for the lookup) and then the page allocator's pcp or zone lock.
 */
void lv_folio_put(struct lv_folio *folio);

/**
 * lv_folios_put - drop one reference on each of an array of folios.
 * @folios: the folios; the caller holds a reference on each (a folio may appear more than once,
 *          once per reference).
 * @nr:     how many.
 *
 * As lv_folio_put() for each, batched: consecutive folios whose lruvecs share a lock share one
 * hold of it, and frees and uncharges happen after each unlock, a batch at a time.
 *
 * Return: nothing.
 * Context: does not block; takes lruvec locks one at a time (RCU read-side for the lookups),
 * and pcp and zone locks after each unlock.
 */
void lv_folios_put(struct lv_folio **folios, size_t nr);

/**
 * lv_folio_ref_count - a folio's reference count.
 * @folio: a folio the caller holds a reference on.
 *
 * Return: the count (the LRU holds none; each CPU batch entry and each isolation holds one);
 * racy unless the caller excludes every other holder.
 * Context: any thread; lock-free.
 */
int lv_folio_ref_count(const struct lv_folio *folio);

/**
 * lv_folio_nid - the node of a folio.
 * @folio: a folio the caller holds a reference on.
 *
 * Return: the node its frames belong to (constant).
 * Context: any thread; lock-free.
 */
int lv_folio_nid(const struct lv_folio *folio);

/**
 * lv_folio_nr_pages - the size of a folio.
 * @folio: a folio the caller holds a reference on.
 *
 * Return: its pages, 2^order (constant).
 * Context: any thread; lock-free.
 */
unsigned int lv_folio_nr_pages(const struct lv_folio *folio);

/**
 * lv_folio_data - a folio's data.
 * @folio: a folio the caller holds a reference on.
 *
 * Return: nr_pages * 4 KiB of memory, valid while the reference is held, or NULL on a
 * metadata-only machine.
 * Context: any thread; lock-free.
 */
void *lv_folio_data(struct lv_folio *folio);

/**
 * lv_folio_memcg - the memcg a folio is charged to.
 * @folio: a folio the caller holds a reference on.
 *
 * The answer can change at once: lv_folio_move_memcg() moves the charge, and the removal of
 * the memcg moves it to the parent. It is stable while the caller has the folio isolated
 * (lv_folio_isolate_lru()) or has never added it to an LRU. The memcg it names may be removed
 * at any time: use it as a handle only if the caller's own synchronization keeps it from being
 * removed.
 *
 * Return: the memcg, or NULL with memcg disabled.
 * Context: any thread; lock-free.
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

/**
 * lv_folio_test - test one flag of a folio.
 * @folio: a folio the caller holds a reference on.
 * @flag:  the flag.
 *
 * Return: whether @flag is set (an atomic read, racy while others move the folio); false for
 * a value outside &enum lv_folio_flag.
 * Context: any thread; lock-free.
 */
bool lv_folio_test(const struct lv_folio *folio, enum lv_folio_flag flag);

/**
 * lv_folio_set_state - set or clear one of the caller-owned state flags.
 * @folio: a folio the caller holds a reference on.
 * @flag:  LV_PG_DIRTY, LV_PG_WRITEBACK, LV_PG_MAPPED or LV_PG_MLOCKED.
 * @on:    set (true) or clear (false).
 *
 * LV_PG_MLOCKED decides evictability when the folio is next added to an LRU (an mlocked folio
 * is counted as unevictable and linked nowhere), so it may only change while the folio is not
 * claimed by the LRU: never added, or isolated with lv_folio_isolate_lru() and not yet put
 * back. Its changes count in LV_NR_MLOCK and unevictable_pgs_mlocked or _munlocked (_stranded
 * for an isolated folio).
 * The LRU-owned flags are refused.
 *
 * Return: 0; -EINVAL for any other flag; -EBUSY for LV_PG_MLOCKED on a folio claimed by the LRU
 * (queued for addition, on a list, or pinned by an actor that will put it back).
 * Context: any thread; lock-free.
 */
int lv_folio_set_state(struct lv_folio *folio, enum lv_folio_flag flag, bool on);

/* ==== LRU operations on folios ============================================================ */

/*
 * The kernel's LRU requests. Each takes a reference for the CPU batch it queues the folio in;
 * the request is applied, under the folio's lruvec lock, when that batch is flushed (it is
 * full, a drain runs, or the LRU cache is disabled), and only if the folio is still in a state
 * the request accepts then. A request on a folio in the wrong state is a silent no-op, as in
 * the kernel. Every call here needs a folio the caller holds a reference on.
 */

/**
 * lv_folio_add_lru - put a folio on an LRU list, through this CPU's lru_add batch.
 * @folio: a folio the caller holds a reference on, claimed by no LRU.
 *
 * The list (anon or file by PG_swapbacked, active or not by PG_active, unevictable if
 * PG_mlocked) is decided when the batch is flushed. A small folio is queued and is on its list
 * after the next flush of its slot's batch: when the batch is full, at a drain
 * (lv_lru_add_drain(), lv_lru_add_drain_all()), or at once while the cache is disabled. A large
 * folio (order > 0) is not left queued: the batch is flushed at once, so it is on its list
 * (with whatever the batch held before it) when this returns, as the kernel adds large folios;
 * with cfg.batch_large it is queued like a small one.
 *
 * Return: 0; -EINVAL if the folio is already claimed by the LRU (on a list, queued for
 * addition, or pinned by an actor that will put it back) or is isolated by
 * lv_folio_isolate_lru() (return it with lv_folio_putback_lru()).
 * Context: does not block; takes a CPU slot lock (this CPU's, or any free one if it is held)
 * and, when the batch is flushed, lruvec locks one at a time and, for folios whose batch
 * reference was the last, pcp and zone locks; RCU read-side.
 */
int lv_folio_add_lru(struct lv_folio *folio);

/**
 * lv_folio_mark_accessed - record an access: the kernel's second-chance state machine.
 * @folio: a folio the caller holds a reference on.
 *
 * Inactive, unreferenced → inactive, referenced → active (through the activate batch, or
 * directly if the folio is still in this CPU's lru_add batch), with PG_referenced cleared →
 * active, referenced. An unevictable folio only gains PG_referenced. Activation advances the
 * workingset clock of the folio's lruvec (see lv_file_read()).
 *
 * Return: nothing.
 * Context: lock-free unless it activates; then does not block: takes a CPU slot lock (only
 * tried, for a folio not yet on an LRU) and, if the batch is flushed, lruvec locks; RCU
 * read-side.
 */
void lv_folio_mark_accessed(struct lv_folio *folio);

/**
 * lv_folio_activate - queue a folio for the active list.
 * @folio: a folio the caller holds a reference on.
 *
 * No-op for a folio that is active, unevictable or not on an LRU. Applied if the folio is still
 * inactive and evictable when the batch is flushed (LV_PGACTIVATE counts it).
 *
 * Return: nothing.
 * Context: does not block; takes a CPU slot lock and, if the batch is flushed, lruvec locks,
 * and pcp and zone locks for batch references that were the last; RCU read-side.
 */
void lv_folio_activate(struct lv_folio *folio);

/**
 * lv_folio_deactivate - queue an active folio for the inactive list, as MADV_COLD does.
 * @folio: a folio the caller holds a reference on.
 *
 * No-op for a folio that is inactive, unevictable or not on an LRU. When applied, the folio
 * goes to the head of its inactive list without PG_referenced (LV_PGDEACTIVATE counts it).
 *
 * Return: nothing.
 * Context: as lv_folio_activate().
 */
void lv_folio_deactivate(struct lv_folio *folio);

/**
 * lv_deactivate_file_folio - queue a file folio whose invalidation failed.
 * @folio: a folio the caller holds a reference on.
 *
 * No-op for an anon (swap-backed) folio, an unevictable one, or one not on an LRU. When
 * applied: a mapped folio (LV_PG_MAPPED) is left where it is; a dirty one or one under
 * writeback goes to the head of the inactive file list with PG_reclaim, so that
 * lv_folio_rotate_reclaimable() moves it to the tail once written; a clean one goes to the tail
 * (LV_PGROTATED). An active folio that moves counts as LV_PGDEACTIVATE.
 *
 * Return: nothing.
 * Context: as lv_folio_activate().
 */
void lv_deactivate_file_folio(struct lv_folio *folio);

/**
 * lv_folio_mark_lazyfree - MADV_FREE: queue an anon folio for the lazyfree move.
 * @folio: a folio the caller holds a reference on.
 *
 * No-op for a file folio, an unevictable one, or one not on an LRU. When applied, the folio
 * loses PG_swapbacked, PG_active and PG_referenced and goes to the head of the inactive file
 * list (LV_PGLAZYFREE). Reclaim frees it there if it is clean (for a page of an mm: not written
 * since lv_madvise(LV_MADV_FREE)) and nobody but its mapping holds a reference.
 *
 * Return: nothing.
 * Context: as lv_folio_activate().
 */
void lv_folio_mark_lazyfree(struct lv_folio *folio);

/**
 * lv_folio_rotate_reclaimable - queue a folio for the tail of its inactive list.
 * @folio: a folio the caller holds a reference on.
 *
 * What the kernel does when writeback ends on a folio with PG_reclaim: the caller ends the
 * writeback (lv_folio_set_state(LV_PG_WRITEBACK, false)) and calls this; neither PG_reclaim nor
 * PG_writeback is looked at or cleared here. No-op for a dirty or unevictable folio or one not
 * on an LRU. When applied, the folio loses PG_active and goes to the tail of its inactive list
 * (LV_PGROTATED).
 *
 * Return: nothing.
 * Context: as lv_folio_activate().
 */
void lv_folio_rotate_reclaimable(struct lv_folio *folio);

/**
 * lv_folio_isolate_lru - take a folio off its LRU list for the caller.
 * @folio: a folio the caller holds a reference on.
 *
 * Wins the PG_lru pin and unlinks the folio; it is counted in LV_NR_ISOLATED. On success the
 * isolation holds one more reference, released by lv_folio_putback_lru() (or, if the caller
 * abandons the folio, by its final lv_folio_put(), which frees it off the LRU). While isolated,
 * the folio cannot be moved to another memcg (lv_folio_move_memcg()); a removal of its memcg
 * does not wait for it: the folio follows its obj_cgroup to the parent, and goes to the
 * parent's lists when it is put back.
 *
 * Return: 0; -EBUSY if the folio is not on an LRU list (queued in a batch, isolated by another
 * actor or by the caller, or never added).
 * Context: does not block; takes the folio's lruvec lock; RCU read-side.
 */
int lv_folio_isolate_lru(struct lv_folio *folio);

/**
 * lv_folio_putback_lru - return an isolated folio to the LRU.
 * @folio: a folio isolated by lv_folio_isolate_lru().
 *
 * The folio goes back through this CPU's lru_add batch (so on its list at the next flush, as
 * lv_folio_add_lru()), and the isolation's reference is dropped.
 *
 * Return: 0; -EINVAL if the folio was not isolated by lv_folio_isolate_lru().
 * Context: does not block; takes a slot lock, lruvec locks if the batch is flushed, and pcp and
 * zone locks if a dropped reference was the last; RCU read-side.
 */
int lv_folio_putback_lru(struct lv_folio *folio);

/**
 * lv_folio_move_memcg - move a folio and its charge to another memcg (cgroup v1 charge moving).
 * @folio: a folio the caller holds a reference on, on an LRU list.
 * @to:    the memcg to move it to.
 *
 * Charges @to and its ancestors below the common ancestor, isolates the folio, rebinds it under
 * its old lruvec's lock (LV_PGMOVED counts it there), uncharges the old branch and puts the
 * folio back. No reclaim is tried.
 *
 * This is cgroup v1's charge moving as Linux <= 6.12 had it, kept so that the comparisons with
 * those kernels stay possible; Linux 6.13 removed it, and a machine created with
 * &struct lv_config.charge_moving false refuses it as that kernel does.
 *
 * Return: 0 (also when it is already in @to); -EOPNOTSUPP if the machine's charge_moving is
 * false (checked first); -EBUSY if the folio is not on an LRU list, the
 * pin is lost to another actor, or its memcg changed meanwhile; -ENOMEM if @to or an ancestor
 * below the common ancestor would exceed its limit; -EINVAL with memcg disabled, @to NULL or of
 * another machine; -ENOENT if @to is being removed. On every error nothing has changed.
 * Context: does not block; takes the folio's lruvec lock (twice), then a slot lock and, if the
 * putback flushes the batch, lruvec locks, and pcp and zone locks for a last reference; RCU
 * read-side, then references on both memcgs for the call.
 */
int lv_folio_move_memcg(struct lv_folio *folio, struct lv_memcg *to);

/* ==== Per-CPU batches ===================================================================== */

/*
 * Each CPU slot of a machine holds six folio batches: lru_add, move_tail, deactivate_file,
 * deactivate, lazyfree and activate, flushed in that order. A request goes to the slot of the
 * CPU the caller runs on, or to any free slot when that one's lock is held. These calls drain
 * batches, disable batching for a while (as migration needs), and report how long that took.
 */

/**
 * lv_lru_add_drain - flush the calling CPU slot's batches.
 * @m: the machine.
 *
 * Best effort: a request queued while this slot's lock was held (by a thread preempted on this
 * CPU, most likely) went to another slot, and so did the requests of a thread the scheduler has
 * since moved; only lv_lru_add_drain_all() covers those.
 *
 * Return: nothing.
 * Context: does not block; takes the slot lock, lruvec locks one at a time, and pcp and zone
 * locks for batch references that were the last; RCU read-side.
 */
void lv_lru_add_drain(struct lv_machine *m);

/**
 * lv_lru_add_drain_all - flush every CPU slot's batches.
 * @m: the machine.
 *
 * Every folio whose lv_folio_add_lru() (or other request) returned before this call began is
 * flushed when it returns. Concurrent callers coalesce: a caller whose request is covered by
 * a sweep that started after it was made returns without sweeping (lv_drain_all_stats()).
 *
 * Return: nothing.
 * Context: may block (waits for a concurrent sweep); takes the machine's drain mutex, then slot
 * locks one at a time, lruvec locks, and pcp and zone locks; RCU read-side.
 */
void lv_lru_add_drain_all(struct lv_machine *m);

/**
 * lv_lru_cache_disable - stop batching until the matching lv_lru_cache_enable().
 * @m: the machine.
 *
 * Every batch is empty when this returns, and from then on every add or move request is
 * applied at once. Calls nest: batching resumes when every disable has been matched by an
 * enable. The time each call takes is recorded (lv_lru_cache_disable_latency()). How it waits
 * for adders already running is &lv_config.disable_mode.
 *
 * Return: nothing.
 * Context: may block (the rcu modes wait for an RCU grace period: not inside the caller's own
 * liburcu read-side section); takes slot locks one at a time, lruvec, pcp and zone locks, and,
 * in the rcu modes, the machine's drain mutex first.
 */
void lv_lru_cache_disable(struct lv_machine *m);

/**
 * lv_lru_cache_enable - undo one lv_lru_cache_disable().
 * @m: the machine.
 *
 * An enable without a matching disable is ignored.
 *
 * Return: nothing.
 * Context: any thread; lock-free.
 */
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
 * lv_lru_cache_disable_latency - the latencies of lv_lru_cache_disable() so far.
 * @m:   the machine.
 * @out: where to store the histogram of every call on @m, including those the migration calls
 *       made.
 *
 * Return: nothing; *@out is racy while threads disable the cache (@count is the sum of the
 * buckets read).
 * Context: any thread; lock-free.
 */
void lv_lru_cache_disable_latency(struct lv_machine *m, struct lv_latency *out);

/**
 * lv_latency_percentile - a percentile of a latency histogram.
 * @lat: the histogram.
 * @pct: the percentile, 0..100 (less counts as 0, more as 100).
 *
 * Return: the latency below which @pct percent of the samples lie: the upper bound of the
 * bucket holding that rank, at most the maximum (the maximum itself for 100); 0 with no
 * samples.
 * Context: any thread; lock-free (reads only @lat).
 */
uint64_t lv_latency_percentile(const struct lv_latency *lat, double pct);

/**
 * lv_drain_all_stats - how lv_lru_add_drain_all() calls coalesced.
 * @m:      the machine.
 * @calls:  where to store how many calls were made (may be NULL).
 * @sweeps: where to store how many of them swept the slots themselves (may be NULL); the rest
 *          were covered by a concurrent sweep.
 *
 * Return: nothing; the values are racy while threads drain.
 * Context: any thread; lock-free.
 */
void lv_drain_all_stats(struct lv_machine *m, uint64_t *calls, uint64_t *sweeps);

/**
 * struct lv_batch_stat - what the flushes of the per-CPU batches cost in lruvec lock holds.
 * @flushes: batch flushes that moved at least one folio (lru_add, the LRU moves, mlock).
 * @holds:   lruvec lock acquisitions those flushes made: one per run of folios under one lock.
 * @folios:  folios they moved (those whose pin was lost to someone else are not counted).
 *
 * @folios / @holds is the folios per lock hold, and @holds / @flushes the holds per flush,
 * that &enum lv_batch_policy trades.
 */
struct lv_batch_stat {
	uint64_t flushes;
	uint64_t holds;
	uint64_t folios;
};

/**
 * lv_batch_stats - the flush counts of every CPU slot's batches, summed.
 * @m:   the machine.
 * @out: where to store them (since lv_machine_create() or lv_lock_stats_reset()).
 *
 * Return: nothing; the values are racy while threads queue or drain.
 * Context: any thread; lock-free.
 */
void lv_batch_stats(struct lv_machine *m, struct lv_batch_stat *out);

/* ==== Page cache ========================================================================== */

/*
 * A file handle is a page cache mapping (the kernel's address_space) over a file descriptor or
 * a sparse file, from lv_file_open() to lv_file_close(). Its pages are charged to the memcg of
 * the reader that missed them, sit on that memcg's file lists, and are evicted by reclaim,
 * leaving shadow entries that tell refaults of the workingset apart.
 */

/**
 * lv_file_open - a page cache mapping over a file.
 * @m:    the machine.
 * @fd:   the file to read with pread(2), or -1 for a sparse file that reads as zeros.
 * @size: the size of the mapping in bytes, 1..2^52.
 *
 * @size, not the real file's size, is the file's size. The file's bytes are those of @fd below
 * the smallest size the file has had since it was opened (@size, or a smaller one set by
 * lv_file_truncate()), and zeros everywhere else: past the end of a shorter @fd, and past
 * that smallest size, as a file shrunk and grown again by ftruncate(2) reads. No byte of @fd at
 * or past that size is ever read. Bytes are read when their page is filled: a change to @fd is
 * seen only by pages filled after it. The descriptor stays the caller's: it must remain open
 * until lv_file_close(), which does not close it.
 *
 * Return: the file, or NULL with errno EINVAL (@m NULL, @size 0 or above 2^52, @fd < -1, or a
 * real @fd on a metadata-only machine, which has no frames for its bytes) or ENOMEM.
 * Context: does not block; allocates; takes the memcg tree mutex.
 */
struct lv_file *lv_file_open(struct lv_machine *m, int fd, uint64_t size);

/**
 * lv_file_read - read through the page cache.
 * @file:  the file.
 * @memcg: the memcg to charge newly cached pages to; NULL means the root.
 * @buf:   where to copy the bytes.
 * @len:   how many bytes to read at most.
 * @off:   the offset in the file.
 *
 * Pages found in the cache are copied; a page being filled by another reader is waited for
 * (awake for up to about a millisecond, then asleep); a missing page is allocated (as
 * lv_folio_alloc(), up to 2^&lv_config.file_folio_order pages around it, never past the end of
 * the file), charged to @memcg, added to the LRU, filled and counted in LV_PGPGIN. Each page
 * read is marked accessed (lv_folio_mark_accessed()): the second access to a cached page
 * activates it (for a large folio, a read that starts in its first page counts).
 *
 * Readahead. With &lv_config.readahead_pages above 1 and order-0 folios, a miss whose previous
 * page is cached (or of page 0) also caches the pages after it, up to that many in all, short
 * of the end of the file and of the first page cached already, charged to @memcg like the one
 * asked for; the pages after the first are allocated with one reclaim pass at most each, and
 * the run ends at the first that cannot be had (an error there is not the read's). A page read
 * ahead counts in LV_PGPGIN and LV_FILE_RA when it is filled, and is marked accessed by its
 * first read. A failed fill of a page read ahead drops that page only: a read that reaches it
 * later, or was waiting for it, reads it again, and only a failure of that read is the read's
 * error.
 *
 * Refaults. A miss on a page evicted earlier finds its shadow entry (LV_WORKINGSET_REFAULT).
 * Its refault distance is how far the workingset clock of the memcg that evicted it, on that
 * node, has moved since the eviction: one per page evicted from or activated in that memcg or
 * its descendants on that node (reclaim putting a folio back on an active list counts as an
 * activation), counting the page's own eviction. The workingset size is the
 * number of pages on that memcg's active file list on that node when the refault happens. A
 * refault whose distance is at most the workingset size is activated at once
 * (LV_WORKINGSET_ACTIVATE), and that read does not also mark it accessed; one further away, or
 * one whose evicting memcg has been removed since, starts on the inactive list.
 *
 * Return: the bytes read (0 at or beyond the end; fewer than @len at the end, or if an error
 * stopped the read after some bytes), or -EIO (reading @fd failed: every reader waiting for
 * that page gets -EIO and the page is dropped), -ENOMEM (the charge or the allocation failed
 * after reclaim), -ENOENT (@memcg is being removed and a page had to be charged), -EINVAL
 * (@file NULL, @buf NULL with @len > 0, or @memcg of another machine).
 * Context: may block (a fill and its pread(2), another reader's fill, reclaim and drains as in
 * lv_folio_alloc()); takes the mapping lock, slot and lruvec locks, and a fill's wait queue;
 * RCU read-side from its entry, traded for a reference on @memcg before it waits or misses.
 */
long lv_file_read(struct lv_file *file, struct lv_memcg *memcg, void *buf, size_t len,
		  uint64_t off);

/**
 * lv_file_truncate - set the size of a file, like ftruncate(2).
 * @file: the file.
 * @size: the new size in bytes, at most 2^52.
 *
 * Shrinking drops from the page cache every page that holds a byte at or past @size (the page
 * holding the new end included: it is filled again on its next read, with zeros past @size),
 * uncharges them, and frees each once its last reader lets go; the dropped folios still queued
 * in CPU batches are flushed out of them, so that their memory is freed now (other folios
 * queued there, other tenants' among them, stay queued). Growing drops nothing and reads zeros
 * past the smallest size the file has had (lv_file_open()). A read running meanwhile returns
 * bytes of the old or the new size. Shrinking a mapped file (lv_mmap_file()) first unmaps, in
 * every mm, the pages it drops and the private copies of pages at or past @size; a fault
 * there running meanwhile fails with -EFAULT, as one that starts afterwards does.
 *
 * Return: 0, or -EINVAL (@file NULL, @size above 2^52).
 * Context: may block (waits for the drain mutex of dropped folios); takes the mapping lock,
 * and, with it released, the file's i_mmap lock, then each mapper's page_table_lock, then
 * lruvec, pcp and zone locks for the copies; then the mapping lock again, then (after it)
 * lruvec, pcp and zone locks, then the machine's drain mutex of dropped folios (not
 * lv_lru_add_drain_all()'s) and slot locks one at a time; RCU read-side.
 */
int lv_file_truncate(struct lv_file *file, uint64_t size);

/**
 * lv_file_cached_pages - how much of a file is in the page cache.
 * @file: the file.
 *
 * Return: the pages of @file in the page cache (racy while others read or reclaim).
 * Context: any thread; lock-free.
 */
unsigned long lv_file_cached_pages(const struct lv_file *file);

/**
 * lv_file_close - drop a file's page cache and free it.
 * @file: the file; NULL is ignored.
 *
 * Truncates @file to 0 (lv_file_truncate()) and frees it after an RCU grace period (reclaim
 * or migration may still be about to lock it through a folio). The descriptor is not closed.
 * Its mappings should be gone first (lv_munmap(), lv_mm_destroy()): a region still mapping it
 * is reported on stderr, loses its pages (the truncation) and fails every later access with
 * -EFAULT; lv_munmap() still removes it.
 *
 * Return: nothing.
 * Context: no other call on @file may run or follow; may block, as lv_file_truncate(); takes
 * the i_mmap lock and then page_table_locks (regions left), then the memcg tree mutex.
 */
void lv_file_close(struct lv_file *file);

/**
 * lv_file_migrate_pages - move a file's page cache to another node.
 * @file:       the file.
 * @from_nodes: the nodes to move from (bit n = node n).
 * @to_node:    the node to move to.
 *
 * As migrating a mapped file's pages does: the LRU cache is disabled for the call; each folio
 * of @file on a node in @from_nodes (other than @to_node) is isolated, copied to a new folio on
 * @to_node charged to the same memcg (usage does not change), and the copy replaces the
 * original in the file under the mapping lock; the copy goes on the LRU and the original is
 * freed. A folio a reader is using or filling, or that is isolated by someone else, stays where
 * it is, intact and on its LRU. LV_PGMIGRATE_SUCCESS and LV_PGMIGRATE_FAIL count pages.
 *
 * Return: the folios not moved (0: all), or -EINVAL (@file NULL, bad @to_node).
 * Context: may block (lv_lru_cache_disable(); allocation on @to_node may reclaim there); takes
 * the locks of lv_lru_cache_disable(), then per folio the lruvec lock, the allocator's (as
 * lv_folio_alloc()), the mapping lock, and slot and lruvec locks for the putback; RCU
 * read-side.
 */
long lv_file_migrate_pages(struct lv_file *file, uint64_t from_nodes, int to_node);

/* ==== Anonymous memory =================================================================== */

/*
 * An mm handle is a process's address space, from lv_mm_create() to lv_mm_destroy():
 * anonymous regions (a brk heap and mmap-like regions) whose pages are faulted in on first
 * write, charged to the mm's memcg and added to the anon LRU lists, and released in batches
 * when unmapped. Addresses are virtual: 64-bit numbers private to the mm, page aligned where
 * the function says so. Data moves in and out only through lv_mm_write(), lv_mm_read() and
 * lv_mm_memset(), so that migration can move a page under a process without it noticing. Every
 * function may be called by several threads on one mm at once; an mm's page tables are
 * protected by its page_table_lock (lock class "mm").
 */

/** madvise() advice understood by lv_madvise(). */
enum lv_madvise {
	LV_MADV_DONTNEED = 4,	 /* unmap: the next read sees zeros, the next write faults anew */
	LV_MADV_FREE = 8,	 /* lazyfree: reclaim may drop clean pages; a write cancels */
	LV_MADV_COLD = 20,	 /* deactivate: the pages move to the inactive anon list */
	LV_MADV_HUGEPAGE = 14,	 /* the region may fault in huge pages (cfg.thp madvise) */
	LV_MADV_NOHUGEPAGE = 15, /* the region never faults in huge pages */
	LV_MADV_PAGEOUT = 21,	 /* reclaim now: anon pages are swapped out (lazyfree ones freed);
				    counted in pswpout, not in pgscan or pgsteal, as in the kernel */
};

/**
 * lv_mm_create - an empty address space.
 * @m:     the machine.
 * @memcg: the memcg its pages are charged to; NULL means the root (ignored with memcg
 *         disabled).
 * @nid:   its preferred node: where faults allocate (lv_mm_set_node() changes it).
 *
 * Until lv_mm_destroy(), @memcg cannot be removed (-EBUSY), as a cgroup with tasks cannot.
 *
 * Return: the mm, or NULL with errno EINVAL (@m NULL, bad node, @memcg of another machine or
 * being removed) or ENOMEM.
 * Context: does not block; allocates; takes the memcg tree mutex; RCU read-side, then a
 * reference on @memcg for the call.
 */
struct lv_mm *lv_mm_create(struct lv_machine *m, struct lv_memcg *memcg, int nid);

/**
 * lv_mm_destroy - unmap everything and free an address space.
 * @mm: the mm; NULL is ignored.
 *
 * Releases every page as lv_munmap() does (pages still in a CPU's lru_add batch stay charged
 * until that batch drains), and frees @mm after an RCU grace period (reclaim and migration may
 * be about to lock it through a folio). Its memcg can be removed once this returns.
 *
 * Return: nothing.
 * Context: no other call on @mm may run or follow; does not block; takes the page_table_lock,
 * then lruvec, pcp and zone locks, then the memcg tree mutex.
 */
void lv_mm_destroy(struct lv_mm *mm);

/**
 * lv_mm_set_node - set where later faults allocate, as set_mempolicy(MPOL_PREFERRED).
 * @mm:  the mm.
 * @nid: the node.
 *
 * Pages already present stay where they are.
 *
 * Return: 0, or -EINVAL for a bad node.
 * Context: any thread; lock-free.
 */
int lv_mm_set_node(struct lv_mm *mm, int nid);

/**
 * lv_mm_brk - sbrk(): move the end of the heap.
 * @mm:      the mm.
 * @delta:   bytes to move it by, rounded to whole pages away from zero; 0 only reads it.
 * @old_brk: where to store the end before the call, whatever the result (may be NULL).
 *
 * Growing maps nothing yet; shrinking unmaps the pages beyond the new end, releasing them as
 * lv_munmap() does.
 *
 * Return: 0; -EINVAL if the heap would shrink below its start; -ENOMEM if it would exceed
 * 64 GiB or its page table cannot grow (nothing changed).
 * Context: does not block; allocates with no lock held; takes the page_table_lock, then
 * (after it, or under it if faults outgrew the release buffer) lruvec, pcp and zone locks.
 */
int lv_mm_brk(struct lv_mm *mm, int64_t delta, uint64_t *old_brk);

/**
 * lv_mmap - map a new anonymous region.
 * @mm:   the mm.
 * @len:  its size in bytes, rounded up to whole pages.
 * @addr: where to store its first address (page aligned).
 *
 * The region is placed above every earlier one, with an unmapped page between neighbours; its
 * pages are faulted in by the first write to each.
 *
 * Return: 0, -EINVAL (@len 0 or above 64 GiB, @addr NULL) or -ENOMEM.
 * Context: does not block; allocates with no lock held; takes the page_table_lock.
 */
int lv_mmap(struct lv_mm *mm, size_t len, uint64_t *addr);

/** Flags for lv_mmap_flags() and lv_mmap_file(). */
#define LV_MAP_LOCKED  0x2000u /* as MAP_LOCKED: the region is mlocked (lv_mlock()) */
#define LV_MAP_SHARED  0x0001u /* as MAP_SHARED: not built, lv_mmap_file() refuses it */
#define LV_MAP_PRIVATE 0x0002u /* as MAP_PRIVATE: writes go to private copies (lv_mmap_file()) */

/**
 * lv_mmap_flags - lv_mmap() with mmap(2) flags.
 * @mm:    the mm.
 * @len:   as lv_mmap().
 * @flags: LV_MAP_* bits.
 * @addr:  as lv_mmap().
 *
 * With LV_MAP_LOCKED the region is created locked: every page it faults in is mlocked, as
 * after lv_mlock() of the whole region.
 *
 * Return: as lv_mmap(); -EINVAL also for an unknown flag.
 * Context: as lv_mmap().
 */
int lv_mmap_flags(struct lv_mm *mm, size_t len, unsigned int flags, uint64_t *addr);

/**
 * lv_mmap_file - map part of a file privately, as mmap(2) with MAP_PRIVATE.
 * @mm:     the mm.
 * @file:   the file (lv_file_open()), of @mm's machine, not closed.
 * @offset: the first byte of the file mapped, page aligned.
 * @len:    the region's size in bytes, rounded up to whole pages; it may reach past the end of
 *          the file, whose size is looked at by each fault.
 * @flags:  LV_MAP_PRIVATE (required: LV_MAP_SHARED is not built), optionally LV_MAP_LOCKED.
 * @addr:   where to store the region's first address (page aligned).
 *
 * Lifecycle. The region is placed like lv_mmap()'s and lives until lv_munmap() (of any part),
 * or lv_mm_destroy(); lv_madvise(), lv_mlock() and lv_munmap() treat it as any region. Its
 * pages are faulted in by lv_mm_read(), lv_mm_write() and lv_mm_memset():
 * - a read of a missing page maps the file's page cache folio read-only, reading it in
 *   through the page cache on a miss as lv_file_read() does, charged to @mm's memcg; the
 *   folio counts the mapping (LV_PG_MAPPED while any page table maps it), and the entry holds
 *   a reference, dropped when it is unmapped;
 * - a write to a page not yet written (missing, or mapped read-only) is the copy-on-write
 *   fault: a new anonymous page, charged to @mm's memcg, gets the file page's bytes and the
 *   write, and is added to the anon LRU through the lru_add batch (folio_add_lru_vma();
 *   mlocked in a locked region); the file never sees it.
 * Reclaim may evict a mapped page cache folio that was not accessed since it last looked:
 * it is unmapped from every mm first, and the next access faults it in again; a locked
 * region keeps its file pages mapped (they are not mlocked: only private copies are).
 * lv_file_truncate() unmaps the pages at and past the new end, private copies included, and
 * an access there then fails with -EFAULT (SIGBUS), as an access past the end of the file
 * does. The file must outlive its mappings: lv_file_close() with a mapping left is reported
 * on stderr, and every later access to the region fails with -EFAULT. Private copies swap,
 * migrate and take advice like any anon page; page cache pages are not migrated while mapped
 * (lv_file_migrate_pages() and compaction skip them, lv_move_pages() reports -EBUSY,
 * lv_migrate_pages() moves only the copies) and take no advice (LV_MADV_* skip them).
 *
 * Threading. Thread-safe, as every call on an mm but lv_mm_destroy(). Faults of several mms
 * on one file, and reads, truncation, reclaim and mappings of it, may run at once; a memcg
 * whose page cache other memcgs' mms map can be removed meanwhile (lv_memcg_remove(): the
 * folios stay mapped, charged to its parent).
 *
 * Errors. Return: 0; -EINVAL (@mm, @file or @addr NULL, @file of another machine, @len 0 or
 * above 64 GiB, @offset not page aligned or the range past 2^64 bytes, LV_MAP_PRIVATE missing,
 * LV_MAP_SHARED or an unknown flag given), -ENOMEM (no host memory for the region). A fault
 * returns -EFAULT past the end of the file or after it was closed, or the errors of
 * lv_file_read() (-EIO, -ENOMEM, -ENOENT) and of lv_mm_write().
 * Context: does not block; allocates with no lock held; takes the file's i_mmap lock (class
 * "mm"), then the page_table_lock nested under it. A fault takes the page_table_lock; with
 * it released, those of lv_file_read() (it may block and reclaim); under it again, the
 * lru_add batch's slot lock, then lruvec locks when the batch is full.
 */
int lv_mmap_file(struct lv_mm *mm, struct lv_file *file, uint64_t offset, size_t len,
		 unsigned int flags, uint64_t *addr);

/**
 * lv_munmap - unmap a range, as munmap(2).
 * @mm:   the mm.
 * @addr: its first address, page aligned.
 * @len:  its length in bytes, rounded up to whole pages as munmap(2) does: [@addr, @addr +
 *        @len) unmaps every page it touches.
 *
 * Unmaps the range from the regions it covers and releases the pages: a region cut in the
 * middle keeps both sides (split as the kernel splits a VMA), a region emptied is removed.
 * Parts of the range with nothing mapped are ignored, as munmap(2) does. A huge page the
 * range covers in part is split first (lv_split_folio()). The pages leave the mapping at
 * once; a page faulted in so recently that its CPU's lru_add batch still holds it stays
 * charged until that batch drains (lv_lru_add_drain_all()). In a file mapping
 * (lv_mmap_file()) private copies are released, and page cache pages stay in the file's
 * cache, one mapping fewer; the mm leaves the file's mappers with its last region of it.
 *
 * Return: 0, -EINVAL (@addr not page aligned, @len 0, the range wraps past 2^64, or it
 * overlaps the heap, which only lv_mm_brk() shrinks), -ENOMEM (no memory to split a region).
 * Context: does not block; allocates with no lock held; takes the page_table_lock, then (after
 * it, or under it if faults outgrew the release buffer or a huge page is split) lruvec, pcp
 * and zone locks.
 */
int lv_munmap(struct lv_mm *mm, uint64_t addr, size_t len);

/**
 * lv_mm_write - copy bytes into an address space, faulting in missing pages.
 * @mm:   the mm.
 * @addr: the first address (any alignment).
 * @buf:  the bytes.
 * @len:  how many.
 *
 * A missing page is allocated on the preferred node only (reclaiming there if needed, as
 * MPOL_BIND would), charged to the mm's memcg (limit reclaim first), zeroed unless the write
 * covers all of it, mapped, and added to the anon LRU through the lru_add batch. Where huge
 * pages are allowed (&enum lv_thp_mode), a fault whose aligned 2 MiB block lies inside its
 * region with no page mapped maps a zeroed huge page (an order-9 folio) over the whole block
 * instead, added to the LRU at once, or a single page if none can be had (thp_fault_fallback).
 * A write to a lazyfree page cancels its lazy free. A swapped-out page is swapped in first
 * (see "Swap"). Pages are written in address order, each under the page_table_lock, so a
 * failure leaves the bytes before it written, as write(2) leaves a partial write.
 *
 * Return: 0; -EFAULT if a byte is outside every region (or @mm is NULL, or the range wraps
 * past 2^64): the bytes before the first such byte are written, none from it on; -ENOMEM if
 * a fault could not be charged or allocated: the bytes before that page are written, and
 * nothing is leaked; -EIO if a swapped-out page could not be read back: the same, and the
 * page stays on its swap device.
 * Context: may block (a fault's reclaim, as in lv_folio_alloc(); a swap-in's read); takes the
 * page_table_lock around each page and no lock while a fault allocates; a fault adds under it (slot
 * lock, lruvec locks if the batch is flushed).
 */
int lv_mm_write(struct lv_mm *mm, uint64_t addr, const void *buf, size_t len);

/**
 * lv_mm_memset - like lv_mm_write() with every byte @c.
 * @mm:   the mm.
 * @addr: the first address (any alignment).
 * @c:    the byte value (converted to unsigned char).
 * @len:  how many bytes.
 *
 * Return: as lv_mm_write().
 * Context: as lv_mm_write().
 */
int lv_mm_memset(struct lv_mm *mm, uint64_t addr, int c, size_t len);

/**
 * lv_mm_read - copy bytes out of an address space.
 * @mm:   the mm.
 * @addr: the first address (any alignment).
 * @buf:  where to copy them.
 * @len:  how many.
 *
 * Pages never written (or dropped by LV_MADV_DONTNEED, or by reclaim of a lazyfree page) read
 * as zeros and are not faulted in. A swapped-out page is swapped in (see "Swap").
 *
 * Return: 0; -EFAULT if a byte is outside every region (or @mm is NULL, or the range wraps
 * past 2^64): @buf then holds the bytes before the first such byte; -ENOMEM or -EIO if a
 * swapped-out page could not be swapped in (charged, allocated, or read): @buf holds the
 * bytes before that page, which stays on its swap device.
 * Context: does not block unless a page is swapped out (a swap-in allocates, may reclaim, and
 * reads the device); takes the page_table_lock around each page.
 */
int lv_mm_read(struct lv_mm *mm, uint64_t addr, void *buf, size_t len);

/**
 * lv_madvise - advise on the pages present in a range, as madvise(2).
 * @mm:     the mm.
 * @addr:   the first address, page aligned.
 * @len:    the length in bytes, rounded up to whole pages; 0 advises nothing.
 * @advice: &enum lv_madvise.
 *
 * LV_MADV_COLD queues the present pages for deactivation (lv_folio_deactivate()); LV_MADV_FREE
 * cleans them and queues them for the lazyfree move to the inactive file list
 * (lv_folio_mark_lazyfree(): reclaim may then free them; a later write keeps them);
 * LV_MADV_DONTNEED unmaps them, as lv_munmap() releases pages, but keeps the regions. The
 * first two drain this CPU's batches first (lv_lru_add_drain()), so that pages just faulted in
 * here can be advised. A huge page the range covers whole is advised as one folio; one it
 * covers in part is split first (lv_split_folio()), and left alone by LV_MADV_COLD and
 * LV_MADV_FREE if it cannot be split. LV_MADV_HUGEPAGE and LV_MADV_NOHUGEPAGE only set the
 * regions' flags (splitting a region the range cuts, as madvise(2)): later faults there may,
 * or may not, map huge pages (&enum lv_thp_mode); pages present stay as they are.
 *
 * Return: 0, -EINVAL (bad advice, @addr not page aligned, the range wraps past 2^64), -ENOMEM
 * (part of the range is outside every region: the rest is still advised, as madvise(2) does;
 * or no memory to split a region).
 * Context: does not block; takes a slot lock and lruvec locks (the local drain), then the
 * page_table_lock, and under it slot locks (the requests), lruvec, pcp and zone locks (a
 * split) or, after it, lruvec, pcp and zone locks (the release); RCU read-side. The huge page
 * advice allocates with no lock held and takes only the page_table_lock.
 */
int lv_madvise(struct lv_mm *mm, uint64_t addr, size_t len, int advice);

/**
 * lv_mlock - lock the pages of a range in memory, as mlock(2).
 * @mm:   the mm.
 * @addr: the first address; rounded down to its page, as mlock(2) does (no -EINVAL for an
 *        unaligned address).
 * @len:  the length in bytes; the range covers every page it touches. 0 does nothing.
 *
 * The regions covering the range become locked (split where the range cuts them; the heap is
 * one region, and locking any of it locks all of it); their present pages are mlocked
 * (PG_mlocked and LV_NR_MLOCK at once, the move to the unevictable list through the per-CPU
 * mlock batch, which this call drains on its own CPU slot) and later faults in them mlock
 * their pages. A large folio is mlocked only if the range holds all of it. Locking a locked
 * region again changes nothing. Reclaim never evicts an mlocked page.
 *
 * Return: 0; -EINVAL (@mm NULL, or the range wraps past 2^64); -ENOMEM (part of the range is
 * not mapped: the mapped part is locked nonetheless, as mlock(2) leaves it, or a region could
 * not be split: nothing changed).
 * Context: does not block; allocates with no lock held; takes the slot lock and lruvec locks
 * (the local drains), then the page_table_lock, and under it lruvec locks and the slot lock
 * (the mlock batch).
 */
int lv_mlock(struct lv_mm *mm, uint64_t addr, size_t len);

/**
 * lv_munlock - unlock a range, as munlock(2).
 * @mm:   the mm.
 * @addr: as lv_mlock().
 * @len:  as lv_mlock().
 *
 * The regions covering the range stop being locked; each present page of a region that was
 * locked loses PG_mlocked (a large folio if any part of it is in the range) and returns to an
 * evictable list, inactive: at once if this call's drain finds its pin free, else when whoever
 * holds the pin puts it back. Unlocking an unlocked region changes nothing.
 *
 * Return: as lv_mlock().
 * Context: as lv_mlock(); the pages that a concurrent pin owner left on the unevictable list
 * are rescued afterwards with no page_table_lock held (lruvec locks).
 */
int lv_munlock(struct lv_mm *mm, uint64_t addr, size_t len);

/** Flags for lv_mlockall(). */
#define LV_MCL_CURRENT 1u /* lock every region mapped now */
#define LV_MCL_FUTURE  2u /* lock every region mapped later (lv_mmap(), the heap's growth) */

/**
 * lv_mlockall - lock every region, as mlockall(2).
 * @mm:    the mm.
 * @flags: LV_MCL_CURRENT and/or LV_MCL_FUTURE. LV_MCL_FUTURE alone leaves the regions mapped
 *         now as they are; the heap becomes locked when it next grows.
 *
 * Return: 0, or -EINVAL (@mm NULL, @flags 0 or unknown bits).
 * Context: as lv_mlock().
 */
int lv_mlockall(struct lv_mm *mm, unsigned int flags);

/**
 * lv_munlockall - unlock every region and cancel LV_MCL_FUTURE, as munlockall(2).
 * @mm: the mm.
 *
 * Return: 0, or -EINVAL (@mm NULL).
 * Context: as lv_munlock().
 */
int lv_munlockall(struct lv_mm *mm);

/**
 * lv_split_folio - split a large folio into order-0 folios, as split_huge_page().
 * @folio: a large folio the caller holds exactly one reference on, besides those of its
 *         owner: a page cache file caching it (one reference), or an address space mapping
 *         it (one per page mapped). This CPU's batches are drained first, so a reference of
 *         its own LRU batch does not count.
 *
 * Every page becomes a folio of its own, on the same LRU list as the head and right after it
 * (or counted as unevictable with it), keeping its data, its flags, its owner (file index or
 * mapped address) and its charge; the caller's reference stays on the first page. A page of a
 * partly unmapped anon folio that nothing maps is freed, and so are all pages but the first
 * of a folio no file caches and no address space maps (from lv_folio_alloc(): nobody else can
 * hold them). Counted as thp_split_page, or as thp_split_page_failed when refused.
 *
 * Return: 0; -EINVAL (@folio NULL or not large); -EBUSY (nothing changed: someone else holds
 * a reference, or the folio is isolated by lv_folio_isolate_lru() or being filled).
 * Context: does not block; takes a slot lock (the drain), then the owner's lock (mapping or
 * page_table_lock), then the lruvec lock, then pcp and zone locks (freed pages).
 */
int lv_split_folio(struct lv_folio *folio);

/**
 * lv_mm_rss - how much of an address space is mapped.
 * @mm: the mm.
 *
 * Return: the pages currently mapped in @mm (racy while others fault or unmap).
 * Context: any thread; lock-free.
 */
size_t lv_mm_rss(const struct lv_mm *mm);

/**
 * lv_migrate_pages - migrate_pages(2): move an address space's pages to another node.
 * @mm:         the mm.
 * @from_nodes: the nodes to move from (bit n = node n).
 * @to_node:    the node to move to.
 *
 * Disables the LRU cache for the call (lv_lru_cache_disable()); isolates each page of @mm on a
 * node in @from_nodes (other than @to_node), allocates a copy on @to_node, copies the data and
 * switches the page table entry to the copy under the page_table_lock (the charge moves with
 * it: usage is unchanged), puts the copy on the LRU and frees the original; then re-enables
 * the cache. A page that cannot be isolated, is in use, or finds no free page on @to_node stays
 * where it was, intact and on its LRU.
 *
 * Return: the pages not moved (0 = all), or -EINVAL (@mm NULL, bad @to_node).
 * Context: may block (lv_lru_cache_disable(); allocation on @to_node may reclaim there); takes
 * the locks of lv_lru_cache_disable(), then the page_table_lock to gather pages, and per page
 * the lruvec lock, the allocator's (as lv_folio_alloc()), the page_table_lock again, and slot
 * and lruvec locks for the putback; RCU read-side.
 */
long lv_migrate_pages(struct lv_mm *mm, uint64_t from_nodes, int to_node);

/**
 * lv_move_pages - move_pages(2): move or locate single pages.
 * @mm:     the mm.
 * @count:  how many pages.
 * @addrs:  an address in each page (any alignment).
 * @nodes:  the node to move each page to, or NULL to only report where each page is.
 * @status: where to store, for each page, the node it is on afterwards, or -EFAULT (outside
 *          every region), -ENOENT (not present), -EBUSY (isolated or in use by another actor,
 *          or a page cache page a file mapping maps: lv_mmap_file()), -ENOMEM (@nodes[i] has
 *          no free page).
 *
 * With @nodes, the LRU cache is disabled around the whole call, even when no page moves, as
 * the kernel's do_pages_move() does; each page moves as in lv_migrate_pages(). With @nodes
 * NULL nothing is disabled or moved, as its do_pages_stat().
 *
 * Return: 0, or -EINVAL (@mm NULL, @addrs or @status NULL with @count > 0, or a bad node in
 * @nodes: nothing moved).
 * Context: with @nodes, as lv_migrate_pages(); without, does not block and takes the
 * page_table_lock per page.
 */
int lv_move_pages(struct lv_mm *mm, size_t count, const uint64_t *addrs, const int *nodes,
		  int *status);

/* ==== Reclaim ============================================================================= */

/*
 * Reclaim frees clean, unreferenced page cache (leaving shadow entries) and lazily freed anon
 * pages not written since LV_MADV_FREE, from the tails of the inactive file lists, and, when a
 * swap device has room for the memcg's pages (see "Swap"), swaps out anon pages not accessed
 * since it last looked, from the tails of the inactive anon lists; it ages the active lists as
 * the kernel does, and splits its scan between anon and file by swappiness and cost. A page
 * cache folio that file mappings map (lv_mmap_file()) is activated if any of them accessed it
 * since reclaim last looked, and otherwise unmapped from every mm, then evicted; a locked
 * region's entries stay, and so does the folio.
 * These calls run it on demand; allocations and charges run it by themselves, and kswapd in
 * the background.
 */

/**
 * lv_reclaim_node - reclaim from one node, as kswapd does.
 * @m:   the machine.
 * @nid: the node.
 * @nr:  the pages to reclaim.
 *
 * Scans every memcg's lruvec on @nid in proportion to its size, raising the pressure one
 * priority at a time, until at least @nr pages (at least 32) were reclaimed or every priority
 * was tried; it can overshoot by part of an isolation batch. At the first three priorities an
 * lruvec whose lock is held is passed over (LV_RECLAIM_SKIP_BUSY); after that reclaim waits for
 * it.
 *
 * Return: the pages reclaimed; 0 for @m NULL, a bad node or @nr 0.
 * Context: may block; takes slot (only tried), lruvec (only tried at the first three
 * priorities; putting folios back always waits), mapping, mm, shadow, pcp and zone locks, one
 * at a time; RCU read-side, and a reference on every memcg it visits.
 */
unsigned long lv_reclaim_node(struct lv_machine *m, int nid, unsigned long nr);

/**
 * lv_memcg_reclaim - reclaim from a memcg's subtree, as limit reclaim does at charge time.
 * @memcg: the memcg; its descendants are reclaimed from too.
 * @nr:    the pages to reclaim.
 *
 * As lv_reclaim_node(), over every node, but only from @memcg's subtree, and it always waits
 * for lruvec locks. It also works on a memcg being removed.
 *
 * Return: the pages reclaimed; 0 for @memcg NULL or @nr 0.
 * Context: may block; takes slot (only tried), lruvec, mapping, mm, shadow, pcp and zone
 * locks, one at a time; RCU read-side, and a reference on every memcg it visits.
 */
unsigned long lv_memcg_reclaim(struct lv_memcg *memcg, unsigned long nr);

/* ==== Compaction ========================================================================== */

/*
 * Compaction moves movable folios out of partly used blocks so that large blocks become free:
 * a migrate scanner walks a node's frames upward from its start, isolating LRU folios as the
 * kernel's isolate_migratepages_block() does, and a free scanner walks down from its end,
 * taking free frames as targets. kcompactd, one thread per node, compacts when a large
 * allocation fails or falls back, and proactively (cfg.compaction_proactiveness).
 */

/**
 * lv_compact_node - compact one node, as writing to /proc/sys/vm/compact_memory (order -1) or
 * a direct compaction for an allocation of 2^@order pages.
 * @m:     the machine.
 * @nid:   the node.
 * @order: stop as soon as a free block of this order exists (0..LV_MAX_ORDER); -1 compacts
 *         the whole node.
 *
 * Movable folios are those on an LRU that only their owner holds (an address space's page
 * table entries, or the page cache): a folio the caller or anyone else holds a reference on
 * is pinned and stays, as does an unevictable one unless cfg.compact_unevictable_allowed.
 * A moved folio keeps its data, owner, charge and flags; its copy goes to the LRU through the
 * calling CPU's lru_add batch, which the pass flushes at its end. Counted in
 * compact_migrate_scanned, compact_free_scanned, compact_isolated, pgmigrate_success and
 * pgmigrate_fail, and for @order >= 0 in compact_success or compact_fail; a free block of
 * @order that exists already makes it return 1 at once, counting nothing.
 *
 * Return: 1 if a free block of @order exists at the end (for -1: always 0 after a full pass),
 * 0 if the scanners met without making one; -EINVAL (@m NULL, bad node, @order out of range).
 * Context: may block (waits for lruvec, zone and owner locks; throttles while too many folios
 * are isolated); takes lruvec, zone, pcp, mapping and page_table locks, then slot and lruvec
 * locks (putting the copies on their lists), one at a time; RCU read-side.
 */
int lv_compact_node(struct lv_machine *m, int nid, int order);

/**
 * lv_compact_memcg - compact every node, isolating only folios charged to one memcg's subtree.
 * @memcg: the memcg.
 * @order: as lv_compact_node().
 *
 * The free frames it moves them into are any of the node's.
 *
 * Return: as lv_compact_node() for the last node; -EINVAL (@memcg NULL, @order out of range),
 * -ENOENT (@memcg's removal has returned).
 * Context: as lv_compact_node(); a reference on @memcg for the call.
 */
int lv_compact_memcg(struct lv_memcg *memcg, int order);

/**
 * lv_fragmentation_index - the kernel's fragmentation index of a node for an order.
 * @m:     the machine.
 * @nid:   the node.
 * @order: 0..LV_MAX_ORDER.
 *
 * Counts the buddy allocator's free blocks (frames cached in per-CPU lists, which cannot serve
 * a large allocation, are left out).
 *
 * Return: -1000 if a free block of @order exists; 0 if no block is free at all; otherwise
 * 0..1000, where values towards 0 mean an allocation would fail for lack of memory and towards
 * 1000 for fragmentation (as /sys/kernel/debug/extfrag/extfrag_index, times 1000; the kernel's
 * formula, which goes below 0 when little memory is free in few blocks, clamped at 0);
 * -EINVAL for a bad argument.
 * Context: does not block; takes the zone lock.
 */
int lv_fragmentation_index(struct lv_machine *m, int nid, int order);

/* ==== Swap ================================================================================ */

/*
 * Swap devices take anonymous pages that reclaim evicts: a cold anon folio gets a slot, enters
 * the swap cache (indexed by slot, looked up lock-free like the page cache), has its page
 * table entry replaced by a swap entry under the mm's page_table_lock, is written to the
 * device and freed. A later access to the page reads it back (with its neighbours, up to
 * &struct lv_config.page_cluster, when read-ahead has been paying off), charges it to the
 * memcg its slot was charged to (the closest live ancestor if that memcg was removed; the
 * faulting mm's if none) and maps it, freeing the slot. Slots come from 512-slot clusters, each CPU
 * slot allocating from a cluster of its own. Swap used by a memcg is counted against its swap
 * limit, hierarchically like memory. With no device, or a memcg at its swap limit, anon pages
 * stay in memory and a charge that cannot reclaim enough fails with -ENOMEM.
 */

#define LV_MAX_SWAPFILES 32 /* devices on at once */

/**
 * lv_swap_on - add a swap device, like swapon(2).
 * @m:    the machine (not metadata-only: swapped pages carry data).
 * @fd:   a file or block device open for reading and writing, used with pread(2)/pwrite(2)
 *        at offsets below @size (the caller keeps it open until lv_swap_off() returns; the
 *        file is not extended), or -1 for an in-memory area of @size bytes, mapped lazily
 *        (only slots written use memory).
 * @size: bytes of swap, rounded down to whole 2 MiB clusters; at least one cluster.
 * @prio: devices of higher priority are filled first; equal priorities take turns.
 *
 * Return: the device's id (0..LV_MAX_SWAPFILES-1, for lv_swap_off() and lv_swap_info()),
 * -EINVAL (@m NULL or metadata-only, @fd < -1, @fd not a file or block device open for
 * reading and writing, @size below one cluster), -EBUSY (LV_MAX_SWAPFILES devices are on, on
 * all the process's machines together), or -ENOMEM. Nothing is kept on failure.
 * Context: any thread; may block (allocates the slot map and the in-memory area).
 */
int lv_swap_on(struct lv_machine *m, int fd, size_t size, int prio);

/**
 * lv_swap_off - remove a swap device, like swapoff(2).
 * @m:  the machine.
 * @id: a device lv_swap_on() returned.
 *
 * No new slot is taken from the device; every page swapped out to it is read back, charged
 * to the memcg it was swapped out from (or its closest live ancestor, if that memcg was
 * removed) and mapped again; then the device is freed. If memory cannot hold the pages (the
 * free and reclaimable pages are fewer, or an allocation or charge fails on the way), the
 * call fails, the device stays on and usable, and no data is lost: the pages read back so far
 * stay in memory.
 *
 * Return: 0, -EINVAL (no such device), -ENOMEM (see above) or -EIO (a read failed: that page
 * stays on the device, nothing else is lost).
 * Context: any thread; may block (reads the device, reclaims, waits for faults in flight).
 */
int lv_swap_off(struct lv_machine *m, int id);

/** struct lv_swap_info - one swap device, as lv_swap_info() reports it. */
struct lv_swap_info {
	size_t slots;	       /* usable slots (4 KiB each) */
	size_t used;	       /* slots in use: by page table entries or the swap cache */
	int prio;	       /* its priority */
	bool in_memory;	       /* fd -1 */
	uint64_t write_errors; /* writes that failed */
	uint64_t read_errors;  /* reads that failed */
};

/**
 * lv_swap_info - describe a swap device.
 * @m:    the machine.
 * @id:   a device lv_swap_on() returned.
 * @info: filled in.
 *
 * Return: 0, or -EINVAL (no such device, @info NULL). Racy while threads swap.
 * Context: any thread; takes the device's lock.
 */
int lv_swap_info(struct lv_machine *m, int id, struct lv_swap_info *info);

/**
 * lv_memcg_set_swap_max - set the swap limit of a memcg, like memory.swap.max.
 * @memcg: the memcg (not the root).
 * @pages: the limit in slots; SIZE_MAX (or anything above LONG_MAX) means none (the default);
 *         0 keeps the memcg's pages out of swap.
 *
 * A limit counts @memcg's own slots and its descendants'. Lowering it below the usage swaps
 * nothing in: reclaim stops swapping the subtree's pages out until the usage is back under it.
 *
 * Return: 0, or -EINVAL for the root or NULL.
 * Context: any thread; lock-free (one atomic store); RCU read-side.
 */
int lv_memcg_set_swap_max(struct lv_memcg *memcg, size_t pages);

/**
 * lv_memcg_swap_usage - the swap slots charged to a memcg.
 * @memcg: the memcg.
 *
 * Counts @memcg's own slots and its descendants'; for the root, the slots in use on all
 * devices.
 *
 * Return: the usage in slots, racy while other threads swap.
 * Context: any thread; lock-free; RCU read-side.
 */
size_t lv_memcg_swap_usage(const struct lv_memcg *memcg);

/**
 * lv_memcg_set_swappiness - set a memcg's own swappiness (memory.swappiness of cgroup v1).
 * @memcg:      the memcg; the root sets the machine's (cfg.swappiness).
 * @swappiness: 0..200.
 *
 * Limit reclaim of @memcg's subtree balances anon against file with @memcg's value (0: it
 * never swaps, as a cgroup's way to opt out of swap); global reclaim uses each lruvec's own
 * memcg's value (0: it swaps only a memcg whose file lists are empty).
 *
 * Return: 0, or -EINVAL (@swappiness above 200, @memcg NULL).
 * Context: any thread; lock-free (one atomic store); RCU read-side.
 */
int lv_memcg_set_swappiness(struct lv_memcg *memcg, unsigned int swappiness);

/* ==== Statistics ========================================================================== */

/*
 * vmstat-like counters per node and per memcg, lock statistics per lock class in the columns
 * of `perf lock report`, and the invariant checker. Statistics read while threads run are racy
 * but never torn; a removed memcg's counts and lock statistics stay in the machine's totals.
 */

/** enum lv_lock_class - lock classes for the statistics. */
enum lv_lock_class {
	LV_LOCK_CLASS_LRUVEC,  /* per-(memcg, node) lru_lock */
	LV_LOCK_CLASS_NODE,    /* per-node lru_lock (node design, or memcg disabled) */
	LV_LOCK_CLASS_ZONE,    /* buddy allocator */
	LV_LOCK_CLASS_SLOT,    /* per-CPU batch slot */
	LV_LOCK_CLASS_PCP,     /* per-CPU page list */
	LV_LOCK_CLASS_DRAIN,   /* drain mutexes: lru_add_drain_all's, truncation's, each node's and
				  memcg's */
	LV_LOCK_CLASS_MEMCG,   /* memcg tree mutex */
	LV_LOCK_CLASS_MAPPING, /* page cache mapping (the kernel's i_pages lock) */
	LV_LOCK_CLASS_SHADOW,  /* an lruvec's list of page cache nodes holding only shadows */
	LV_LOCK_CLASS_MM,      /* an address space's page tables (the kernel's page_table_lock) */
	LV_LOCK_CLASS_SWAP, /* a swap device's lock and its clusters' locks (swap_info, ci->lock) */
	LV_LOCK_CLASS_COST, /* an lruvec's scan-cost lock (LV_COST_VMSTAT's fold) */
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

/**
 * lv_lock_class_name - the name of a lock class.
 * @cls: the class.
 *
 * Return: "lruvec", "node", "zone", "slot", "pcp", "drain", "memcg", "mapping", "shadow", "mm",
 * "swap" or "cost"; "?" for a value outside &enum lv_lock_class.
 * Context: any thread; lock-free.
 */
const char *lv_lock_class_name(enum lv_lock_class cls);

/**
 * lv_lock_stats - the statistics of a lock class.
 * @m:   the machine.
 * @cls: the class.
 * @out: where to store the sums over every lock of @cls, including those of removed memcgs,
 *       closed files and destroyed mms (all zero for a value outside &enum lv_lock_class).
 *
 * Racy while threads run, exact at a quiescent point; a total never shrinks between two
 * readings (until lv_lock_stats_reset()). The statistics calls themselves take the memcg tree
 * mutex: summing the lruvec, shadow, mapping, mm or drain class takes it once, and so does
 * lv_node_stat() for items kept in lruvecs; those acquisitions are counted in the memcg class
 * like any other. Reading the memcg class itself takes no lock, so it never counts itself.
 *
 * Return: nothing.
 * Context: does not block; takes the memcg tree mutex for the listed classes (above).
 */
void lv_lock_stats(struct lv_machine *m, enum lv_lock_class cls, struct lv_lock_stat *out);

/**
 * lv_lock_stats_reset - zero every lock's statistics.
 * @m: the machine.
 *
 * Every class reads zero afterwards, the memcg class included (this call's own hold of the
 * memcg tree mutex is not counted), and so do the call sites of lv_lock_sites() and the
 * batch flush counts of lv_batch_stats().
 *
 * Return: nothing.
 * Context: a quiescent machine (no other thread using @m); takes the memcg tree mutex.
 */
void lv_lock_stats_reset(struct lv_machine *m);

/**
 * lv_lock_stats_print - print the lock statistics, one row per class that was used.
 * @m:   the machine.
 * @out: the stream.
 *
 * The columns of `perf lock report`: Name, acquired, contended, avg wait, total wait, max wait,
 * min wait (ns). Every class is read before anything is printed, the memcg class first, so
 * the memcg row counts none of this call's own acquisitions.
 *
 * Return: nothing.
 * Context: may block (writes to @out); takes the memcg tree mutex once per listed class.
 */
void lv_lock_stats_print(struct lv_machine *m, FILE *out);

/**
 * struct lv_lock_site_stat - lock contention at one call site, in the columns of
 * `perf lock contention`. Times in nanoseconds.
 * @caller:        the kernel function the contended acquisition stands for
 *                 ("folio_batch_move_lru", "shrink_inactive_list", "rmqueue", ...; the list is
 *                 in docs/locking.md); a static string that lives as long as the library.
 * @cls:           the class of the lock it waited for.
 * @contended:     contended acquisitions (uncontended ones are not recorded).
 * @wait_total_ns: their total wait.
 * @wait_max_ns:   the longest of them.
 */
struct lv_lock_site_stat {
	const char *caller;
	enum lv_lock_class cls;
	uint64_t contended, wait_total_ns, wait_max_ns;
};

/**
 * lv_lock_sites - lock contention by call site.
 * @m:   the machine.
 * @out: where to store the sites, most total wait first; may be NULL if @max is 0.
 * @max: the room in @out.
 *
 * Every (caller, class) pair with a contention since the machine was created or since
 * lv_lock_stats_reset(), those of removed memcgs', closed files' and destroyed mms' locks
 * included. At a quiescent point the contended counts of a class's sites add up to the
 * class's in lv_lock_stats(). With cfg.no_lock_sites nothing is recorded (the class
 * statistics still are).
 *
 * Return: the number of sites, which may exceed @max (only @max are stored); 0 if none was
 * recorded, or if the call could not allocate its scratch space (a few kilobytes).
 * Context: any thread; takes no library lock; racy while threads run, never torn.
 */
size_t lv_lock_sites(struct lv_machine *m, struct lv_lock_site_stat *out, size_t max);

/**
 * enum lv_stat_item - vmstat-like counters. Unless marked "node only", an item is kept per
 * lruvec: lv_node_stat() sums a node's lruvecs (removed memcgs' included), lv_memcg_stat() a
 * memcg's own lruvecs over all nodes (not its descendants'). List sizes and counts are in
 * pages; events count pages unless they say otherwise.
 */
enum lv_stat_item {
	LV_NR_INACTIVE_ANON, /* list sizes, in pages */
	LV_NR_ACTIVE_ANON,
	LV_NR_INACTIVE_FILE,
	LV_NR_ACTIVE_FILE,
	LV_NR_UNEVICTABLE,
	LV_NR_ISOLATED, /* isolated by lv_folio_isolate_lru() and not yet put back */
	LV_NR_CHARGED,	/* pages charged (memcg: own + descendants, lv_memcg_usage(); node:
			   allocated) */
	LV_NR_FREE,	/* node only: free pages */
	LV_WMARK_MIN,	/* node only: watermarks */
	LV_WMARK_LOW,
	LV_WMARK_HIGH,
	LV_PGACTIVATE, /* events */
	LV_PGDEACTIVATE,
	LV_PGLAZYFREE,
	LV_PGROTATED,
	LV_PGMOVED,	 /* pages whose charge moved out of this memcg (lv_folio_move_memcg, and
			    a removal's reparenting) */
	LV_LOCK_RETRIES, /* folio_lruvec_lock re-check failures (a count of retries) */
	LV_PGSCAN,	 /* pages scanned on inactive lists by reclaim */
	LV_PGSTEAL,	 /* pages reclaimed */
	LV_PGREFILL,	 /* pages scanned on active lists */
	LV_WORKINGSET_REFAULT,	   /* page cache misses that found a shadow entry */
	LV_WORKINGSET_ACTIVATE,	   /* refaults close enough to be activated (lv_file_read()) */
	LV_WORKINGSET_NODERECLAIM, /* page cache nodes of shadow entries freed (a count of
				      nodes) */
	LV_ALLOCSTALL,	      /* allocations or charges that entered direct reclaim (a count) */
	LV_NR_FILE_PAGES,     /* node only: pages in the page cache */
	LV_PGMIGRATE_SUCCESS, /* pages migrated (counted on the destination) */
	LV_PGMIGRATE_FAIL,    /* pages that could not be migrated (counted on the source) */
	LV_RECLAIM_SKIP_BUSY, /* lruvecs global reclaim passed over: lock held (a count) */
	LV_WORKINGSET_NODES,  /* a count, not an event: shadow-only page cache nodes listed */
	LV_RECLAIM_DRAIN,     /* reclaim passes that freed nothing, so the memcg's (or node's)
				 folios were flushed from every CPU's batches (a count) */
	LV_PAGEOUTRUN,	      /* node only: kswapd passes (the kernel's pageoutrun; a count) */
	LV_PGPGIN,	      /* pages read into the page cache by misses (lv_file_read()),
				 counted for the memcg they are charged to when the fill ends */
	LV_NR_MLOCK,	      /* pages mlocked (PG_mlocked): a count */
	LV_UNEVICTABLE_PGS_MLOCKED,   /* pages that became mlocked */
	LV_UNEVICTABLE_PGS_MUNLOCKED, /* pages that stopped being mlocked, on an LRU list */
	LV_UNEVICTABLE_PGS_CULLED,    /* pages moved to the unevictable list */
	LV_UNEVICTABLE_PGS_SCANNED,   /* pages check_move_unevictable_folios() looked at */
	LV_UNEVICTABLE_PGS_RESCUED,   /* pages moved from the unevictable list to another */
	LV_UNEVICTABLE_PGS_STRANDED,  /* pages munlocked while isolated (not moved) */
	LV_THP_FAULT_ALLOC,	      /* huge page faults that got a huge page (a count) */
	LV_THP_FAULT_FALLBACK,	      /* huge page faults that fell back to small pages */
	LV_THP_SPLIT_PAGE,	      /* large folios split (a count) */
	LV_THP_SPLIT_PAGE_FAILED,     /* splits refused: extra references (a count) */
	LV_COMPACT_STALL,	      /* node only: direct compactions (a count) */
	LV_COMPACT_SUCCESS,	      /* node only: compactions that made the block asked for */
	LV_COMPACT_FAIL,	      /* node only: compactions whose scanners met without it */
	LV_COMPACT_ISOLATED,	      /* node only: pages isolated by the migrate scanner */
	LV_COMPACT_MIGRATE_SCANNED,   /* node only: frames the migrate scanner looked at */
	LV_COMPACT_FREE_SCANNED,      /* node only: frames the free scanner looked at */
	LV_COMPACT_DAEMON_WAKE,	      /* node only: kcompactd wakeups that compacted */
	LV_PSWPIN,		      /* pages read from swap devices */
	LV_PSWPOUT,		      /* pages written to swap devices */
	LV_NR_SWAPCACHE,	      /* node only, a count: pages in the swap cache */
	LV_NR_SWAP,		      /* a count: swap slots charged (memcg: own + descendants,
					 lv_memcg_swap_usage(); node 0: slots in use on all
					 devices, the other nodes 0) */
	LV_SWAP_RA,		      /* pages read ahead by swap-in */
	LV_SWAP_RA_HIT,		      /* faults that found a read-ahead page in the swap cache */
	LV_WORKINGSET_REFAULT_ANON,   /* swap-ins that found a shadow entry */
	LV_WORKINGSET_ACTIVATE_ANON,  /* anon refaults close enough to be activated */
	LV_PGSCAN_ANON,		      /* pages scanned on the inactive anon list (in pgscan too) */
	LV_PGSTEAL_ANON,	      /* anon pages reclaimed (in pgsteal too) */
	LV_SWAP_WRITE_ERROR,	      /* swap-out writes that failed (the folio stayed mapped) */
	LV_SWAP_READ_ERROR, /* swap-in reads that failed (a fault's: -EIO; read-ahead's) */
	LV_FILE_RA,	    /* pages lv_file_read() read ahead of a miss (cfg.readahead_pages),
			       counted when their fill ends; in LV_PGPGIN too */
	LV_NR_STAT_ITEMS
};

/**
 * lv_stat_name - the name of a statistics item.
 * @item: the item.
 *
 * Return: its vmstat-style name ("nr_inactive_anon", "pgactivate", ..., "file_ra");
 * "?" for a value outside &enum lv_stat_item.
 * Context: any thread; lock-free.
 */
const char *lv_stat_name(enum lv_stat_item item);

/**
 * lv_node_stat - a counter of one node.
 * @m:    the machine.
 * @nid:  the node.
 * @item: the item.
 *
 * Return: the value summed over the node's lruvecs, including those of removed memcgs (see
 * &enum lv_stat_item); 0 for a bad node or item. Racy while threads run.
 * Context: does not block; takes the memcg tree mutex for the items kept in lruvecs (the
 * node-only ones are lock-free).
 */
uint64_t lv_node_stat(struct lv_machine *m, int nid, enum lv_stat_item item);

/**
 * lv_memcg_stat - a counter of one memcg.
 * @memcg: the memcg.
 * @item:  the item.
 *
 * List sizes and events count @memcg's own lruvecs over all nodes, not its descendants';
 * LV_NR_CHARGED is hierarchical (lv_memcg_usage()).
 *
 * Return: the value; 0 for the node-only items and a bad item. Racy while threads run.
 * Context: any thread; lock-free; RCU read-side.
 */
uint64_t lv_memcg_stat(struct lv_memcg *memcg, enum lv_stat_item item);

/**
 * lv_check - verify the invariants at a quiescent point.
 * @m:      the machine.
 * @report: where to describe each violation (NULL: stderr).
 *
 * First waits for kswapd to finish its pass and drains every slot. Then checks: list lengths
 * equal size counters per lruvec and node; every PG_lru folio is on exactly the list of exactly
 * the lruvec its flags, node and memcg select; no folio is both active and unevictable;
 * unevictable folios are counted but not linked; no free frame is reachable from a list; every
 * batch is empty; every memcg's usage equals the pages charged to it and its descendants; the
 * page tables and shadow lists are consistent; free + allocated = total pages on every node.
 *
 * Return: 0 if all hold, -EUCLEAN otherwise.
 * Context: no other thread of the caller's may use @m; may block (waits for kswapd); takes
 * slot, lruvec, shadow and memcg tree locks.
 */
int lv_check(struct lv_machine *m, FILE *report);

/**
 * lv_bug_count - internal invariant violations detected at run time.
 * @m: the machine.
 *
 * Return: how many were detected (release builds; debug builds abort at the first one).
 * Context: any thread; lock-free.
 */
uint64_t lv_bug_count(struct lv_machine *m);

#ifdef __cplusplus
}
#endif
#endif /* LRUVEC_H */
