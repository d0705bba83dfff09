/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Internal structures shared by src/. Every shared field says what protects it; the complete
 * synchronization table is docs/locking.md. Names are the kernel's (mm/), unprefixed.
 */
#ifndef LV_INTERNAL_H
#define LV_INTERNAL_H

#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "fault.h"
#include "list.h"
#include "lock.h"
#include "lruvec.h"
#include "rcu.h"

/* ---- Folio flags --------------------------------------------------------------------------- */

/*
 * The public flags (enum lv_folio_flag) keep their numbers; the allocator's own bits follow.
 * All flag updates are atomic bit operations on folio->flags, except that an exclusive owner
 * (refcount frozen at zero, or a frame being allocated or freed) may write the word directly.
 */
enum pageflags {
	PG_lru = LV_PG_LRU,
	PG_active = LV_PG_ACTIVE,
	PG_referenced = LV_PG_REFERENCED,
	PG_workingset = LV_PG_WORKINGSET,
	PG_unevictable = LV_PG_UNEVICTABLE,
	PG_mlocked = LV_PG_MLOCKED,
	PG_swapbacked = LV_PG_SWAPBACKED,
	PG_dirty = LV_PG_DIRTY,
	PG_writeback = LV_PG_WRITEBACK,
	PG_reclaim = LV_PG_RECLAIM,
	PG_mapped = LV_PG_MAPPED,
	PG_isolated = LV_PG_ISOLATED,
	PG_head = LV_NR_FOLIO_FLAGS, /* first frame of an allocated folio */
	PG_buddy,		     /* first frame of a free block in the buddy allocator */
	PG_pcp,			     /* free frame on a per-CPU page list */
	/*
	 * PG_lru_claimed: the folio belongs to the LRU — queued for lru_add, on a list, or pinned
	 * by an actor that will put it back. Set by adding, cleared only when the folio leaves
	 * the LRU for its caller (lv_folio_isolate_lru) or is freed. It turns a second add into
	 * -EINVAL whatever transient state the folio is in.
	 */
	PG_lru_claimed,
	PG_locked,	     /* page cache: being filled; readers wait (the folio lock, reduced) */
	PG_uptodate,	     /* page cache: data valid */
	PG_error,	     /* page cache: the fill failed; waiters return -EIO */
	PG_waiters,	     /* page cache: someone sleeps until PG_locked clears */
	PG_hole,	     /* page cache: a hole, each page zeroed on first read (filemap.c) */
	PG_readahead,	     /* page cache: read ahead of its reader, not read yet (filemap.c) */
	PG_dropped,	     /* page cache: deleted from its file (lru_add_drain_dropped()); set
			      * under the mapping lock, cleared by the next allocation */
	PG_swapcache,	     /* swap cache: in a device's swap cache tree, its slot in the node's
			      * swap_slot[] (swap_state.c); set and cleared under that tree's lock */
	PG_ORDER_SHIFT = 56, /* bits 56..59: order of the folio or free block */
};
#define PG_ORDER_MASK (0xful << PG_ORDER_SHIFT)

/*
 * struct lv_folio - the descriptor of one 4 KiB frame; a folio is its first frame (PG_head).
 * At most 64 bytes, like struct page (static assertion in page_alloc.c).
 */
struct lv_folio {
	unsigned long flags;	  /* atomic bitops; order in PG_ORDER_MASK (set while exclusive) */
	int _refcount;		  /* atomic; the LRU lists hold no reference */
	unsigned int mlock_count; /* unevictable folios: lruvec lock */
	/*
	 * On an LRU list: the lruvec lock (and only while PG_lru is set, or by the pin owner, or
	 * by reparenting, which moves linked folios whoever holds their pin).
	 * Free: the zone lock (buddy) or the slot's pcp lock. Isolated: the isolating owner.
	 */
	union {
		struct list_head lru;
		/*
		 * In the second frame of a folio whose head has PG_hole: pages zeroed, pages
		 * claimed by a zeroing reader (bit i: page i). Cleared by the filler before the
		 * fill ends; then only atomic ORs, by readers holding a folio reference.
		 */
		struct {
			unsigned long zeroed;
			unsigned long zeroing;
		} hole;
	};
	/*
	 * The charge: the obj_cgroup of the charged memcg on the folio's node (NULL with memcg
	 * disabled), holding one of its references. Written by the owner of the PG_lru pin while
	 * it holds the lock of the folio's current lruvec (a charge move), before the folio is
	 * visible, or by migration on an original it isolated and froze (its charge moved to
	 * the copy). Reparenting never writes it: it re-points the obj_cgroup (memcontrol.c).
	 * Read under RCU, under that lock, or by the folio's exclusive owner.
	 */
	struct obj_cgroup *objcg;
	/*
	 * The owner: the page cache file (struct lv_file) holding the folio, or the address space
	 * (struct lv_mm, tagged with FOLIO_MAPPING_ANON) mapping it; NULL when nobody does. Set
	 * before the folio is published in its owner (an anon folio: under page_table_lock, just
	 * before its entry); cleared, or switched to a migration's copy,
	 * under the owner's lock (the file's mapping lock, the mm's page_table_lock). Readers
	 * that lock the owner find it under RCU: owners are freed after a grace period.
	 */
	void *mapping;
	/* Page index in the file, or virtual page number in the mm: set with mapping, before the
	 * folio is published (or moved to a migration copy under the owner's lock); constant
	 * while owned. */
	unsigned long index;
	struct pglist_data *pgdat; /* node of the frame: constant */
};

static inline bool folio_test(const struct lv_folio *f, int bit)
{
	return (__atomic_load_n(&f->flags, __ATOMIC_ACQUIRE) >> bit) & 1;
}
static inline void folio_set(struct lv_folio *f, int bit)
{
	__atomic_fetch_or(&f->flags, 1ul << bit, __ATOMIC_RELEASE);
}
static inline void folio_clear(struct lv_folio *f, int bit)
{
	__atomic_fetch_and(&f->flags, ~(1ul << bit), __ATOMIC_RELEASE);
}
static inline bool folio_test_clear(struct lv_folio *f, int bit)
{
	return (__atomic_fetch_and(&f->flags, ~(1ul << bit), __ATOMIC_ACQ_REL) >> bit) & 1;
}

#define FOLIO_FLAG_FNS(name, bit)                                                                  \
	static inline bool folio_test_##name(const struct lv_folio *f)                             \
	{                                                                                          \
		return folio_test(f, bit);                                                         \
	}                                                                                          \
	static inline void folio_set_##name(struct lv_folio *f)                                    \
	{                                                                                          \
		folio_set(f, bit);                                                                 \
	}                                                                                          \
	static inline void folio_clear_##name(struct lv_folio *f)                                  \
	{                                                                                          \
		folio_clear(f, bit);                                                               \
	}                                                                                          \
	static inline bool folio_test_clear_##name(struct lv_folio *f)                             \
	{                                                                                          \
		return folio_test_clear(f, bit);                                                   \
	}

FOLIO_FLAG_FNS(lru, PG_lru)
FOLIO_FLAG_FNS(active, PG_active)
FOLIO_FLAG_FNS(referenced, PG_referenced)
FOLIO_FLAG_FNS(workingset, PG_workingset)
FOLIO_FLAG_FNS(unevictable, PG_unevictable)
FOLIO_FLAG_FNS(mlocked, PG_mlocked)
FOLIO_FLAG_FNS(swapbacked, PG_swapbacked)
FOLIO_FLAG_FNS(dirty, PG_dirty)
FOLIO_FLAG_FNS(writeback, PG_writeback)
FOLIO_FLAG_FNS(reclaim, PG_reclaim)
FOLIO_FLAG_FNS(mapped, PG_mapped)
FOLIO_FLAG_FNS(isolated, PG_isolated)

static inline unsigned int folio_order(const struct lv_folio *f)
{
	return (unsigned int)((READ_ONCE(f->flags) & PG_ORDER_MASK) >> PG_ORDER_SHIFT);
}
static inline long folio_nr_pages(const struct lv_folio *f)
{
	return 1l << folio_order(f);
}
static inline bool folio_test_large(const struct lv_folio *f)
{
	return folio_order(f) > 0;
}
static inline bool folio_is_file_lru(const struct lv_folio *f)
{
	return !folio_test_swapbacked(f);
}
#define FOLIO_MAPPING_ANON 1ul

/* folio_file_mapping - the page cache file holding the folio, or NULL (anon or unowned). */
static inline struct lv_file *folio_file_mapping(const struct lv_folio *f)
{
	uintptr_t v = (uintptr_t)__atomic_load_n(&f->mapping, __ATOMIC_RELAXED);

	return v & FOLIO_MAPPING_ANON ? NULL : (struct lv_file *)v;
}
/* folio_anon_mm - the address space mapping the folio, or NULL (page cache or unmapped). */
static inline struct lv_mm *folio_anon_mm(const struct lv_folio *f)
{
	uintptr_t v = (uintptr_t)__atomic_load_n(&f->mapping, __ATOMIC_RELAXED);

	return v & FOLIO_MAPPING_ANON ? (struct lv_mm *)(v & ~FOLIO_MAPPING_ANON) : NULL;
}
static inline void *anon_mapping(struct lv_mm *mm)
{
	return (void *)((uintptr_t)mm | FOLIO_MAPPING_ANON);
}

/*
 * The mapcount of a page cache folio: how many page table entries map it (lv_mmap_file()), in
 * bits 32..55 of its flags, which no flag uses (the descriptor has no room for a field of its
 * own), with PG_mapped set exactly while it is nonzero: both change in one compare-and-swap,
 * by the holder of the page_table_lock of the entry that changes. A mapped folio can be
 * neither split nor migrated (each entry holds a reference), so the count never has to be
 * copied or divided; it is zero whenever the frame is allocated or freed.
 */
#define PG_MAPCOUNT_SHIFT 32
#define PG_MAPCOUNT_MASK  (0xfffffful << PG_MAPCOUNT_SHIFT)
_Static_assert(PG_swapcache < PG_MAPCOUNT_SHIFT, "folio flags overlap the mapcount");

static inline long folio_file_mapcount(const struct lv_folio *f)
{
	return (long)((__atomic_load_n(&f->flags, __ATOMIC_RELAXED) & PG_MAPCOUNT_MASK) >>
		      PG_MAPCOUNT_SHIFT);
}

/* folio_file_map_add - add @nr (negative: remove) entries to @f's mapcount and PG_mapped. */
static inline void folio_file_map_add(struct lv_folio *f, long nr)
{
	unsigned long old = __atomic_load_n(&f->flags, __ATOMIC_RELAXED), new;

	do {
		long count = (long)((old & PG_MAPCOUNT_MASK) >> PG_MAPCOUNT_SHIFT) + nr;

		new = (old & ~(PG_MAPCOUNT_MASK | (1ul << PG_mapped))) |
		      ((unsigned long)count << PG_MAPCOUNT_SHIFT) | (count ? 1ul << PG_mapped : 0);
	} while (!__atomic_compare_exchange_n(&f->flags, &old, new, false, __ATOMIC_ACQ_REL,
					      __ATOMIC_RELAXED));
}

/* Reclaim may not evict it: mlocked (unevictable mappings come with the page cache). */
static inline bool folio_evictable(const struct lv_folio *f)
{
	return !folio_test_mlocked(f);
}

static inline int folio_ref_count(const struct lv_folio *f)
{
	return __atomic_load_n(&f->_refcount, __ATOMIC_RELAXED);
}
static inline void folio_get(struct lv_folio *f)
{
	__atomic_fetch_add(&f->_refcount, 1, __ATOMIC_RELAXED);
}
/* folio_try_get - take a reference unless the folio is being freed (count zero). */
static inline bool folio_try_get(struct lv_folio *f)
{
	int c = __atomic_load_n(&f->_refcount, __ATOMIC_RELAXED);

	do {
		if (c <= 0)
			return false;
	} while (!__atomic_compare_exchange_n(&f->_refcount, &c, c + 1, true, __ATOMIC_ACQUIRE,
					      __ATOMIC_RELAXED));
	return true;
}
/*
 * folio_ref_freeze - take the count from exactly @expected to zero: nobody else holds it, and
 * every later try-get fails until the frame is allocated again. The caller owns the folio.
 */
static inline bool folio_ref_freeze(struct lv_folio *f, int expected)
{
	return __atomic_compare_exchange_n(&f->_refcount, &expected, 0, false, __ATOMIC_ACQUIRE,
					   __ATOMIC_RELAXED);
}
/* folio_put_testzero - drop a reference; true if it was the last (the caller frees). */
static inline bool folio_put_testzero(struct lv_folio *f)
{
	return __atomic_sub_fetch(&f->_refcount, 1, __ATOMIC_ACQ_REL) == 0;
}

/* ---- LRU lists ------------------------------------------------------------------------------ */

enum lru_list {
	LRU_INACTIVE_ANON = 0,
	LRU_ACTIVE_ANON = 1,
	LRU_INACTIVE_FILE = 2,
	LRU_ACTIVE_FILE = 3,
	LRU_UNEVICTABLE = 4,
	NR_LRU_LISTS
};
#define LRU_ACTIVE 1
#define LRU_FILE   2

/* Event counters kept per lruvec under its lock; node and memcg values are sums. */
enum lru_event {
	EV_PGACTIVATE,
	EV_PGDEACTIVATE,
	EV_PGLAZYFREE,
	EV_PGROTATED,
	EV_PGMOVED,
	EV_LOCK_RETRIES,
	EV_PGSCAN,
	EV_PGREFILL,
	/* Counted without the lock, with atomic adds: */
	EV_PGSTEAL,
	EV_WORKINGSET_REFAULT,
	EV_WORKINGSET_ACTIVATE,
	EV_WORKINGSET_NODERECLAIM,
	EV_ALLOCSTALL,
	EV_PGMIGRATE_SUCCESS,
	EV_PGMIGRATE_FAIL,
	EV_RECLAIM_SKIP_BUSY,
	EV_RECLAIM_DRAIN,
	EV_PAGEOUTRUN,
	EV_PGPGIN,
	EV_NR_MLOCK, /* a count (pages with PG_mlocked), not an event: may go down */
	EV_UNEVICTABLE_PGS_MLOCKED,
	EV_UNEVICTABLE_PGS_MUNLOCKED,
	EV_UNEVICTABLE_PGS_CULLED,
	EV_UNEVICTABLE_PGS_SCANNED,
	EV_UNEVICTABLE_PGS_RESCUED,
	EV_UNEVICTABLE_PGS_STRANDED,
	EV_THP_FAULT_ALLOC,
	EV_THP_FAULT_FALLBACK,
	EV_THP_SPLIT_PAGE,
	EV_THP_SPLIT_PAGE_FAILED,
	EV_PSWPIN,
	EV_PSWPOUT,
	EV_SWAP_RA,
	EV_SWAP_RA_HIT,
	EV_WORKINGSET_REFAULT_ANON,
	EV_WORKINGSET_ACTIVATE_ANON,
	EV_PGSCAN_ANON,
	EV_PGSTEAL_ANON,
	EV_SWAP_WRITE_ERROR,
	EV_SWAP_READ_ERROR,
	EV_FILE_RA,
	NR_LRU_EVENTS
};

/* Compaction's counters: per node only, as the kernel's are global (atomic adds). */
enum compact_event {
	CE_COMPACT_STALL,
	CE_COMPACT_SUCCESS,
	CE_COMPACT_FAIL,
	CE_COMPACT_ISOLATED,
	CE_COMPACT_MIGRATE_SCANNED,
	CE_COMPACT_FREE_SCANNED,
	CE_COMPACT_DAEMON_WAKE,
	NR_COMPACT_EVENTS
};

/* Stripes of an lruvec's pending scan costs: 4 lines (256 bytes) per lruvec, whatever nr_slots. */
#define COST_STRIPES 4

/*
 * struct lruvec - the LRU lists of one (memcg, node), or of a node when memcg is disabled.
 * The list heads come first and the lock sits on a cache line of its own after them (the
 * LKP false-sharing regression, docs/protocol.md §8.3).
 */
struct lruvec {
	struct list_head lists[NR_LRU_LISTS]; /* *lru_lock */
	unsigned long lru_size[NR_LRU_LISTS]; /* *lru_lock; in pages */
	uint64_t events[EV_PGSTEAL];	      /* *lru_lock (read racily) */
	/*
	 * LV_COST_LOCKED: *lru_lock; LV_COST_VMSTAT: cost_lock (vmscan.c, "Scan cost"). Stored
	 * with WRITE_ONCE; get_scan_count() reads them racily.
	 */
	unsigned long anon_cost, file_cost;
	struct lv_lock *lru_lock;  /* constant: &own_lock, or the node's lock */
	struct lv_memcg *memcg;	   /* constant; NULL for a node's own lruvec */
	struct pglist_data *pgdat; /* constant */
	struct obj_cgroup *objcg;  /* constant: the memcg's own for this node; NULL for a node's */
	/*
	 * *lru_lock: the obj_cgroups that point at this lruvec's memcg: its own, and those of
	 * removed descendants, which reparenting spliced here (memcontrol.c).
	 */
	struct list_head objcg_list;
	int nr_objcgs; /* *lru_lock for writes (atomic stores); read racily: objcg_list's length */
	/*
	 * *lru_lock (atomic stores; read racily by reclaim): at least 1 + the highest
	 * lru_size_order() of the evictable lists, 0 when they are empty and reclaim has seen it:
	 * reclaim finds something to scan here at priority size_level - 1 and below, unless the
	 * lists shrank since it last looked (vmscan.c, "Many memcgs").
	 */
	unsigned char size_level;
	/*
	 * Written with atomics by threads that do not hold the lock (the workingset clock moves
	 * with every activation and eviction, in every ancestor): a line of their own, so that
	 * they do not bounce the lines the lock holder works on.
	 */
	/* atomic: lv_folio_isolate_lru() pages; with memcg, the obj_cgroups count them instead */
	long nr_isolated ____cacheline_aligned;
	unsigned long nonresident_age; /* atomic: workingset clock */
	/* atomic: EV_WORKINGSET_ACTIVATE when a reclaim call that aged us on news of it ended */
	uint64_t refaults;
	unsigned long reclaim_id; /* atomic: the last reclaim call that aged us on that news */
	uint64_t events_atomic[NR_LRU_EVENTS - EV_PGSTEAL]; /* atomic */
	struct lv_lock own_lock ____cacheline_aligned;	    /* used with LV_LOCK_LRUVEC */
	/*
	 * LV_COST_VMSTAT: costs noted here and not folded yet, [0] anon, [1] file, one line per
	 * stripe of CPU slots (this_cpu_index() % COST_STRIPES). Atomic: producers add, the
	 * fold exchanges them with zero (vmscan.c, "Scan cost").
	 */
	struct cost_stripe {
		unsigned long pending[2];
	} ____cacheline_aligned cost_pending[COST_STRIPES];
	struct lv_lock cost_lock ____cacheline_aligned; /* class cost: the fold (a leaf lock) */
	/*
	 * Page cache tree nodes left holding only the shadows of folios evicted from here (the
	 * kernel's memcg-aware shadow_nodes list_lru): one tenant's evictions and shrinking
	 * never take another tenant's lock (filemap.c).
	 */
	struct lv_lock shadow_lock ____cacheline_aligned;
	struct list_head shadow_nodes; /* shadow_lock: oldest first */
	unsigned long nr_shadow_nodes; /* shadow_lock; read racily */
} ____cacheline_aligned;

/* ---- Nodes and the page allocator ---------------------------------------------------------- */

/*
 * struct drain_gate - one drain scope's coalescing (swap.c, "Draining"): the machine's for
 * lv_lru_add_drain_all(), its drop_drain for truncation's drain of dropped folios, a node's
 * and a memcg's for reclaim's scoped drains, so that
 * concurrent drains of one scope make one sweep and never wait on another scope's.
 */
struct drain_gate {
	struct lv_lock mutex ____cacheline_aligned; /* class drain: held for a sweep */
	unsigned long gen;			    /* atomic: sweeps begun */
};

enum { WMARK_MIN, WMARK_LOW, WMARK_HIGH, NR_WMARK };

/* struct zone - one zone per node: the buddy allocator. */
struct zone {
	struct lv_lock lock ____cacheline_aligned;
	struct list_head free_area[LV_MAX_ORDER + 1]; /* lock */
	unsigned long nr_free_area[LV_MAX_ORDER + 1]; /* lock for writes; read racily */
	unsigned long free_pages;		      /* lock for writes; read racily */
	unsigned long watermark[NR_WMARK];	      /* constant */
};

#define DEF_PRIORITY  12	 /* reclaim scans a list's size >> priority, from here down to 0 */
#define MEMCG_MAX_IDS (1u << 16) /* ids fit the 16 bits a shadow entry has for them */
#define LEVEL_STRIPES 16	 /* lines of a node's size level counts (struct pglist_data) */

struct pglist_data {
	int node_id;		    /* constant */
	struct lv_machine *machine; /* constant */
	unsigned long nr_pages;	    /* constant */
	struct lv_folio *memmap;    /* constant array of nr_pages descriptors */
	char *frames;		    /* constant: data arena, NULL if metadata only */
	struct zone zone;
	struct lv_lock lru_lock ____cacheline_aligned; /* the node's LRU lock (class node) */
	struct drain_gate drain;		       /* reclaim's drains of this node */
	struct lruvec __lruvec;			       /* used when memcg is disabled */
	uint64_t retired_events[NR_LRU_EVENTS]; /* memcg tree mutex: removed memcgs' counts */
	unsigned long nr_file_pages;		/* atomic: folios in page cache files */
	unsigned long nr_swapcache;		/* atomic: pages in the swap cache */
	/*
	 * swap_slot[pfn]: the swap entry of a swap cache folio (PG_swapcache), the kernel's
	 * folio->swap, kept beside the memmap because a descriptor has no room left. Written
	 * by the folio's owner before the folio enters the swap cache, read by holders of a
	 * reference on a folio with PG_swapcache, or under the tree's lock.
	 */
	unsigned long *swap_slot;
	uint64_t compact_events[NR_COMPACT_EVENTS]; /* atomic */
	/*
	 * Reclaim's view of the node (vmscan.c, "Many memcgs"), kept by lruvec_size_level_update()
	 * under the LRU lock of the lruvec that changed, and read racily. level_stripes[s].nr[l]:
	 * the node's lruvecs of size level l > 0 (struct lruvec's size_level) counted by threads
	 * of CPU slots s, s + LEVEL_STRIPES, ...: their sum over the stripes is the count
	 * (atomic). memcg_levels: DEF_PRIORITY + 1 bitmaps of MEMCG_MAX_IDS bits
	 * (memcg_level_map()), bit memcg_level_bit(id) of map l set when memcg id's lruvec on
	 * this node has size level l or more, each with a summary (memcg_level_summary()) that
	 * has bit w set while word w of the map is not zero (atomic). reclaim_pos (atomic): the bit
	 * of the maps global reclaim looks at next, moved on by every reclaimer of the node, the
	 * kernel's shared reclaim cookie.
	 */
	struct level_stripe {
		long nr[DEF_PRIORITY + 2];
	} ____cacheline_aligned level_stripes[LEVEL_STRIPES];
	unsigned long *memcg_levels;
	unsigned int reclaim_pos;
	/* Compaction (compaction.c). */
	long nr_compact_isolated; /* atomic: pages compaction's migrate scanners hold isolated */
	/*
	 * Deferral after failed compactions, the kernel's per-zone heuristic: atomic (relaxed),
	 * updated racily by every compactor of the node, as the kernel's are.
	 */
	unsigned int compact_considered;  /* attempts since the last failure */
	unsigned int compact_defer_shift; /* skip up to 2^shift attempts after a failure */
	int compact_order_failed;	  /* orders from here on are deferred */
};

#define MEMCG_LEVEL_WORDS   (MEMCG_MAX_IDS / 64)
#define MEMCG_LEVEL_SUMMARY (MEMCG_LEVEL_WORDS / 64)
#define MEMCG_LEVEL_STRIDE  (MEMCG_LEVEL_WORDS + MEMCG_LEVEL_SUMMARY)

/* memcg_level_map - @pgdat's bitmap of the memcgs whose lruvec has size level @level or more. */
static inline unsigned long *memcg_level_map(struct pglist_data *pgdat, unsigned int level)
{
	return pgdat->memcg_levels + (size_t)(level - 1) * MEMCG_LEVEL_STRIDE;
}

/* memcg_level_summary - which words of memcg_level_map(@pgdat, @level) are not zero. */
static inline unsigned long *memcg_level_summary(struct pglist_data *pgdat, unsigned int level)
{
	return memcg_level_map(pgdat, level) + MEMCG_LEVEL_WORDS;
}

/*
 * memcg_level_bit - memcg @id's bit in a size level map. Ids 128 apart share a cache line of
 * the map (512 bits), neighbouring ids do not: tenants created one after another, busy on
 * different CPUs, would otherwise bounce one line with every change of level.
 */
static inline unsigned int memcg_level_bit(unsigned int id)
{
	return id % 128 * 512 + id / 128;
}

/* memcg_level_id - the memcg id of bit @bit of a size level map: memcg_level_bit()'s inverse. */
static inline unsigned int memcg_level_id(unsigned int bit)
{
	return bit % 512 * 128 + bit / 512;
}

static inline void count_compact_event(struct pglist_data *pgdat, enum compact_event ev, long nr)
{
	__atomic_fetch_add(&pgdat->compact_events[ev], (uint64_t)nr, __ATOMIC_RELAXED);
}

/* struct per_cpu_pages - order-0 free frames cached for one (slot, node). */
struct per_cpu_pages {
	struct lv_lock lock ____cacheline_aligned;
	struct list_head list; /* lock */
	int count;	       /* lock; read racily */
};

/* ---- CPU slots and batches ------------------------------------------------------------------- */

struct folio_batch {
	unsigned int nr; /* slot lock; read racily by cpu_needs_drain() */
	struct lv_folio *folios[LV_MAX_BATCH];
};

/*
 * Batches in the kernel's drain order (lru_add_drain_cpu), and the mlock batch (mlock.c), which
 * drains last, as the kernel's mlock_drain_local() follows lru_add_drain_cpu(). Each entry of
 * the mlock batch is a folio pointer tagged in its low bits with the operation (MLOCK_LRU,
 * MLOCK_NEW, or none for munlock); mlock_entry_folio() strips the tag.
 */
enum fbatch_op {
	FB_LRU_ADD,
	FB_MOVE_TAIL,
	FB_DEACTIVATE_FILE,
	FB_DEACTIVATE,
	FB_LAZYFREE,
	FB_ACTIVATE,
	NR_FBATCHES, /* the LRU batches above; the mlock batch follows */
	FB_MLOCK = NR_FBATCHES,
	NR_BATCH_KINDS
};

/*
 * struct lruvec_batch - LV_BATCH_PER_LRUVEC: one of a slot's small batches of one kind, holding
 * folios that share an lruvec lock. @key is the lock of the folios' lruvec when they were
 * queued (so the node design keeps one batch per node, not per memcg): it is only compared,
 * never dereferenced, so a batch keyed by the lock of an lruvec since freed (a removed memcg's)
 * is harmless: folios of a new lruvec at that address would join it, and the flush relocks by
 * each folio's real lruvec. An empty batch is free, whatever its key.
 */
struct lruvec_batch {
	const struct lv_lock *key; /* slot lock */
	unsigned long used;    /* slot lock: the slot's clock at the last add, for the LRU choice */
	struct folio_batch fb; /* slot lock (nr read racily by cpu_needs_drain()) */
};

struct cpu_slot {
	struct lv_lock lock;
	/* lock: the batches of LV_BATCH_ARRIVAL and LV_BATCH_SORTED, one per kind */
	struct folio_batch fbatch[NR_BATCH_KINDS];
	/* constant pointer, lock for the contents: LV_BATCH_PER_LRUVEC's batches, else NULL */
	struct lruvec_batch (*lvb)[LV_LRUVEC_BATCHES];
	unsigned long clock;	   /* lock: adds to @lvb, for the LRU choice */
	struct lv_batch_stat stat; /* lock; read racily by lv_batch_stats() */
} ____cacheline_aligned;

/*
 * slot_batch - @slot's batch @i of @kind, in the order drains visit them; NULL after the last.
 * Context: @slot's lock held, or a racy peek at the count (cpu_needs_drain()).
 */
static inline struct folio_batch *slot_batch(struct cpu_slot *slot, int kind, unsigned int i)
{
	if (!slot->lvb)
		return i ? NULL : &slot->fbatch[kind];
	return i < LV_LRUVEC_BATCHES ? &slot->lvb[kind][i].fb : NULL;
}

#define for_each_slot_batch(slot, kind, i, fb)                                                     \
	for ((i) = 0; ((fb) = slot_batch((slot), (kind), (i))); (i)++)

/* ---- Memory cgroups -------------------------------------------------------------------------- */

/*
 * struct obj_cgroup - what a folio is charged through: one per memcg per node (the 7.1
 * kernel's per-node objcg). Removing a memcg re-points its obj_cgroups at the parent, one node
 * at a time, instead of rebinding each folio (memcontrol.c, "Reparenting"). The counts a
 * folio carries off the lists live here, so that they follow it through a reparenting
 * without being moved: an lruvec's NR_MLOCK and nr_isolated are the sums over its objcg_list.
 */
struct obj_cgroup {
	/*
	 * The memcg charged. Written under the lru_locks of @nid of both the old memcg and the
	 * new one (reparenting); read under RCU, or under the lru_lock of @nid of the memcg read
	 * (which then cannot change until unlock).
	 */
	struct lv_memcg *memcg;
	struct list_head list; /* on objcg_list of @memcg's lruvec of @nid: its lru_lock */
	unsigned int nid;      /* constant */
	struct rcu_head rcu;   /* the release */
	/*
	 * Written by every allocation and free of a folio bound here: a line of their own, so
	 * that they do not bounce the line every lookup reads @memcg from.
	 */
	long refcnt ____cacheline_aligned; /* atomic: one per bound folio, one of its memcg's */
	long nr_isolated; /* atomic: pages of bound folios isolated by lv_folio_isolate_lru() */
	long nr_mlock;	  /* atomic: pages of bound folios with PG_mlocked */
} ____cacheline_aligned;

struct lv_memcg {
	struct lv_machine *machine; /* constant */
	struct lv_memcg *parent;    /* constant; NULL for the root */
	struct list_head sibling;   /* memcg tree mutex; RCU for reclaim's walk */
	struct list_head children;  /* memcg tree mutex; RCU for reclaim's walk */
	long usage;		    /* atomic page counter: own + descendants (not for root) */
	long max;		    /* atomic (relaxed): limit in pages, LONG_MAX = none */
	long swap_usage;	    /* atomic page counter: swap slots, own + descendants */
	long swap_max;		    /* atomic (relaxed): swap limit in slots, LONG_MAX = none */
	int swappiness;		    /* atomic (relaxed): 0..200, or -1: the machine's */
	int dying;		    /* atomic: set by lv_memcg_remove(), cleared if it fails */
	int offline;		    /* atomic: reparented; nothing is charged to it any more */
	long refcnt;		    /* atomic: the tree's reference + reclaim walkers' (css_get) */
	unsigned int nr_mms;	    /* memcg tree mutex: address spaces charging here (tasks) */
	unsigned int id;	    /* constant: index in machine->memcg_ids, for shadow entries */
	char name[64];		    /* constant */
	struct rcu_head rcu;	    /* the free */
	struct rcu_head rcu_put;    /* dropping the tree's reference after removal */
	/* memcg tree mutex: on machine->dying_memcgs from removal until the free (statistics) */
	struct list_head dying_list;
	struct drain_gate drain;  /* drains of its subtree: limit reclaim and removal */
	struct lruvec nodeinfo[]; /* one per node, constant count */
};

/* ---- The machine ----------------------------------------------------------------------------- */

struct lv_machine {
	struct lv_config cfg;	    /* constant */
	unsigned int nr_slots;	    /* constant */
	struct pglist_data **nodes; /* constant array of cfg.nr_nodes */
	struct lv_memcg *root;	    /* constant; NULL when memcg is disabled */
	struct cpu_slot *slots;	    /* constant array of nr_slots */
	struct per_cpu_pages *pcp;  /* constant array of nr_slots * nr_nodes */

	struct lv_lock memcg_mutex ____cacheline_aligned; /* cgroup_mutex */
	struct list_head files;	       /* memcg_mutex: open page cache files (for statistics) */
	struct list_head mms;	       /* memcg_mutex: live address spaces (statistics, lv_check) */
	struct list_head dying_memcgs; /* memcg_mutex: removed memcgs not freed yet */
	struct lv_lock_stat retired_lock_stats[LV_NR_LOCK_CLASSES]; /* memcg_mutex */
	/* Constant: every lock's call-site table (lock.c), NULL with cfg.no_lock_sites. */
	struct lock_site_table *lock_sites;

	struct drain_gate drain;	    /* lv_lru_add_drain_all(): lru_drain_gen, its mutex */
	struct drain_gate drop_drain;	    /* lru_add_drain_dropped(): truncation's drains */
	uint64_t drain_calls, drain_sweeps; /* atomic */
	int lru_disable_count;		    /* atomic */
	struct lv_latency disable_latency;  /* atomic adds: lv_lru_cache_disable() timings */

	/* memcg id → memcg for shadow entries: written under memcg_mutex, read under RCU. */
	struct lv_memcg **memcg_ids;
	unsigned int next_memcg_id; /* memcg_mutex */
	long memcgs_freeing;	    /* atomic: memcg frees queued with call_rcu and not run yet */

	/*
	 * Page cache tree nodes freed after a grace period, kept for reuse (filemap.c,
	 * xa_node_alloc()): the kernel's radix_tree_node slab. Through malloc, a reader's arena
	 * grew and shrank by a node at a time (an mprotect(2) each) as the RCU thread freed them.
	 */
	struct xa_node_cache {
		pthread_mutex_t lock;
		void *free;	    /* lock: a stack of nodes, linked through their first word */
		unsigned int count; /* lock for writes; read racily */
	} xa_cache;

	/* Page-fill waiters, hashed by folio (the kernel's folio_waitqueue). */
	struct fill_waitq {
		pthread_mutex_t lock;
		pthread_cond_t cond;
	} fill_wait[64];

	struct kswapd *kswapd;	     /* constant array of nr_nodes, NULL without kswapd */
	struct kcompactd *kcompactd; /* constant array of nr_nodes, NULL without kcompactd */
	size_t reclaim_rotor;	     /* atomic: where the next reclaimer starts its memcg walk */

	/* Swap (swapfile.c): the devices by type, published with RCU under swap_mutex. */
	struct swap_info_struct *swap_info[LV_MAX_SWAPFILES];
	pthread_mutex_t swap_mutex; /* lv_swap_on() and lv_swap_off(): one at a time */
	long nr_swap_pages;	    /* atomic: free slots on devices that are on */
	unsigned long swap_rotor;   /* atomic: equal-priority devices take turns */
	unsigned int swappiness;    /* atomic (relaxed): the root's and the default */
	/* Swap read-ahead's window (swap_state.c): relaxed atomics, racy as the kernel's. */
	unsigned int swapin_readahead_hits; /* read-ahead pages faulted since the last window */
	unsigned int swapin_last_ra;	    /* the last window, in pages */
	unsigned long swapin_prev_offset;   /* the slot of the last fault that read */

	uint64_t bug_count; /* atomic */
};

/* ---- Cross-file internal API ----------------------------------------------------------------- */

static inline struct lv_machine *folio_machine(const struct lv_folio *f)
{
	return f->pgdat->machine;
}
static inline int folio_nid(const struct lv_folio *f)
{
	return f->pgdat->node_id;
}
/* node_valid - @nid names one of @m's nodes. */
static inline bool node_valid(const struct lv_machine *m, int nid)
{
	return nid >= 0 && (unsigned int)nid < m->cfg.nr_nodes;
}

static inline bool mem_cgroup_disabled(const struct lv_machine *m)
{
	return m->cfg.memcg_disabled;
}

static inline struct obj_cgroup *folio_objcg(const struct lv_folio *folio)
{
	return __atomic_load_n(&folio->objcg, __ATOMIC_ACQUIRE);
}

/*
 * folio_memcg - the memcg @folio is charged to right now (NULL with memcg disabled).
 * Context: RCU read side (the memcg may be removed and freed after it), or the lru_lock of
 * the returned memcg's lruvec on the folio's node, or a reference on the memcg; a removal may
 * re-point the folio at the parent at any time otherwise.
 */
static inline struct lv_memcg *folio_memcg(const struct lv_folio *folio)
{
	struct obj_cgroup *objcg = folio_objcg(folio);

	return objcg ? __atomic_load_n(&objcg->memcg, __ATOMIC_ACQUIRE) : NULL;
}

/*
 * folio_matches_lruvec - does @folio belong to @lruvec (same node and memcg)? Stable only while
 * the caller holds @lruvec's lock and the answer is yes: a removal re-points any folio's
 * obj_cgroup, isolated or not, under the locks of its old and new lruvec.
 */
static inline bool folio_matches_lruvec(const struct lv_folio *folio, const struct lruvec *lruvec)
{
	return folio->pgdat == lruvec->pgdat && folio_memcg(folio) == lruvec->memcg;
}

/* debug.c: VM_BUG_ON — abort in debug builds, count in release builds. */
void lv_bug(struct lv_machine *m, const char *cond, const char *file, int line);
#define VM_BUG_ON_M(m, cond)                                                                       \
	do {                                                                                       \
		if (unlikely(cond))                                                                \
			lv_bug((m), #cond, __FILE__, __LINE__);                                    \
	} while (0)
#define VM_BUG_ON_FOLIO(cond, folio) VM_BUG_ON_M(folio_machine(folio), cond)

static inline void lruvec_count_event_atomic(struct lruvec *lruvec, enum lru_event ev, long nr)
{
	__atomic_fetch_add(&lruvec->events_atomic[ev - EV_PGSTEAL], (uint64_t)nr, __ATOMIC_RELAXED);
}

/* lruvec_event - read one event counter, wherever it lives (racy). */
static inline uint64_t lruvec_event(const struct lruvec *lruvec, enum lru_event ev)
{
	return ev < EV_PGSTEAL ? READ_ONCE(lruvec->events[ev])
			       : READ_ONCE(lruvec->events_atomic[ev - EV_PGSTEAL]);
}

/* parent_lruvec - the same node's lruvec of the parent memcg, NULL at the top. */
static inline struct lruvec *parent_lruvec(struct lruvec *lruvec)
{
	struct lv_memcg *memcg = lruvec->memcg;

	if (!memcg || !memcg->parent)
		return NULL;
	return &memcg->parent->nodeinfo[lruvec->pgdat->node_id];
}

/* cpu.c */
struct cpu_slot *this_cpu_slot(struct lv_machine *m);
/* this_cpu_slot_lock() records a contention under its caller's name (lv_lock_acquire_at()). */
struct cpu_slot *this_cpu_slot_lock_at(struct lv_machine *m, const char *site);
#define this_cpu_slot_lock(m) this_cpu_slot_lock_at((m), __func__)
unsigned int this_cpu_index(const struct lv_machine *m);

/* page_alloc.c */
int node_init(struct lv_machine *m, int nid);
void node_exit(struct lv_machine *m, int nid);
int pcp_init(struct lv_machine *m);
void pcp_exit(struct lv_machine *m);
void free_folios(struct lv_folio **folios, unsigned int nr);
#define FOLIO_ALLOC_NORETRY 0x100u /* internal lv_folio_alloc() flag: one reclaim pass at most */
/* Internal, order > 0 only: compact directly when no block is free (a THP fault's defrag). */
#define FOLIO_ALLOC_COMPACT 0x200u
/* Internal: no direct reclaim or compaction; on failure wake kcompactd and give up (a light
 * huge page allocation, the kernel's GFP_TRANSHUGE_LIGHT). */
#define FOLIO_ALLOC_LIGHT 0x400u
struct lv_folio *folio_alloc(struct lv_machine *m, int nid, unsigned int order,
			     struct lv_memcg *memcg, unsigned int flags);
unsigned int folios_alloc_bulk(struct lv_machine *m, int nid, struct lv_memcg *memcg,
			       unsigned int nr, struct lv_folio **folios);
struct lv_folio *folio_alloc_charged(struct pglist_data *pgdat, unsigned int order,
				     struct lv_memcg *memcg, unsigned int flags);
unsigned long node_free_pages(struct pglist_data *pgdat);
void lruvec_init(struct lruvec *lruvec, struct pglist_data *pgdat, struct lv_memcg *memcg);
bool drain_all_pages(struct pglist_data *pgdat);
void drain_local_pages(struct pglist_data *pgdat);
/* Compaction's free frames: free blocks taken out of the buddy allocator (page_alloc.c). */
unsigned long isolate_freepages_block(struct pglist_data *pgdat, unsigned long start,
				      unsigned long end, struct list_head *lists);
struct lv_folio *take_isolated_free(struct list_head *lists, unsigned int order);
void release_isolated_free(struct pglist_data *pgdat, struct list_head *lists);
struct lv_folio *prep_migration_target(struct lv_folio *f, unsigned int order,
				       struct lv_memcg *memcg);
void return_migration_target(struct lv_folio *new, struct list_head *lists);
bool free_block_exists(struct pglist_data *pgdat, unsigned int order);
/* struct contig_page_info - the buddy allocator's free blocks as seen for one order. */
struct contig_page_info {
	unsigned long free_pages;	    /* pages in free blocks */
	unsigned long free_blocks_total;    /* free blocks of any order */
	unsigned long free_blocks_suitable; /* free blocks of the order, counting larger ones */
};
void fill_contig_page_info(struct pglist_data *pgdat, unsigned int order,
			   struct contig_page_info *info);

/* memcontrol.c */
int mem_cgroup_init(struct lv_machine *m);
void mem_cgroup_exit(struct lv_machine *m);
struct lruvec *mem_cgroup_lruvec(struct lv_memcg *memcg, struct pglist_data *pgdat);
struct lruvec *folio_lruvec(struct lv_folio *folio);
/*
 * folio_lruvec_lock() and folio_lruvec_relock() record a contention under their caller's
 * name; the _at forms take the name of the kernel function the caller stands for.
 */
struct lruvec *folio_lruvec_lock_at(struct lv_folio *folio, const char *site);
struct lruvec *folio_lruvec_relock_at(struct lv_folio *folio, struct lruvec *locked,
				      const char *site);
#define folio_lruvec_lock(folio)	   folio_lruvec_lock_at((folio), __func__)
#define folio_lruvec_relock(folio, locked) folio_lruvec_relock_at((folio), (locked), __func__)
void lruvec_unlock(struct lruvec *lruvec);
int mem_cgroup_charge(struct lv_machine *m, struct lv_memcg *memcg, long nr, bool noretry);
/*
 * The charge binding (memcontrol.c, "Obj_cgroups"). folio_bind_memcg() binds a folio nobody
 * else can see to @memcg's obj_cgroup of its node (NULL: none), taking a reference on it;
 * folio_unbind() drops it without uncharging (the charge went elsewhere, or there was none);
 * folio_uncharge_unbind() uncharges @nr_pages from the memcg it points at and drops
 * @nr_folios references (free_folios() batches folios of one obj_cgroup).
 */
void folio_bind_memcg(struct lv_folio *folio, struct lv_memcg *memcg);
void folio_unbind(struct lv_folio *folio);
void objcg_uncharge_put(struct obj_cgroup *objcg, long nr_pages, long nr_folios);
/* folio_count_event - count @ev on @folio's lruvec (inside a read-side section of its own). */
void folio_count_event(struct lv_folio *folio, enum lru_event ev, long nr);
/* get_mem_cgroup_from_folio - @folio's memcg with a reference (css_put()), NULL if none. */
struct lv_memcg *get_mem_cgroup_from_folio(struct lv_folio *folio);
/*
 * folio_mlock_count, folio_isolated_count - add @nr to the NR_MLOCK or nr_isolated count that
 * @folio carries (its obj_cgroup's; its node lruvec's with memcg disabled). Context: the
 * folio's binding is stable for the caller (its lruvec lock, its pin, or its exclusive owner).
 */
void folio_mlock_count(struct lv_folio *folio, long nr);
void folio_isolated_count(struct lv_folio *folio, long nr);
/* lruvec_nr_mlock, lruvec_nr_isolated - those counts of @lruvec. Context: takes its lock. */
long lruvec_nr_mlock(struct lruvec *lruvec);
long lruvec_nr_isolated(struct lruvec *lruvec);
/*
 * lruvec_live - @lruvec, or, if its memcg was removed (or is being removed) meanwhile, the
 * lruvec of the same node of its first ancestor that is not: where a delta collected for
 * @lruvec belongs now (the 7.1 fix for deferred updates across a reparent). The one
 * implementation of that rule. Context: the caller holds a reference on @lruvec's memcg (which
 * pins its ancestors) or is in an RCU read-side section, which then covers the answer's use.
 */
struct lruvec *lruvec_live(struct lruvec *lruvec);
/*
 * lruvec_live_lock - lock lruvec_live(@lruvec), re-checked under the lock: its LRU lock, or
 * with @cost its cost lock (LV_COST_VMSTAT's). A reparenting takes both after it sets dying,
 * so what the caller adds under the lock is handed on by it.
 * Return: the lruvec locked. Context: as lruvec_live(); no LRU lock held (@cost: no cost lock).
 */
struct lruvec *lruvec_live_lock_at(struct lruvec *lruvec, bool cost, const char *site);
#define lruvec_live_lock(lruvec) lruvec_live_lock_at((lruvec), false, __func__)
#ifdef LV_DEBUG
/*
 * Tests: called by lruvec_live() with its answer, before the caller adds to it or locks it.
 * Set and cleared by a test while no reclaim or refault runs.
 */
extern void (*lruvec_live_hook)(struct lruvec *lruvec);
#endif

void css_get(struct lv_memcg *memcg);
bool css_tryget(struct lv_memcg *memcg);
void css_put(struct lv_memcg *memcg);
struct lv_memcg **mem_cgroup_snapshot(struct lv_memcg *top, size_t *nr);
void mem_cgroup_snapshot_put(struct lv_memcg **memcgs, size_t nr);
long nr_lruvecs_at_level(struct pglist_data *pgdat, int level);
struct lv_memcg *mem_cgroup_reclaim_next(struct pglist_data *pgdat, unsigned int level,
					 unsigned int *left);
struct lv_memcg *mem_cgroup_from_id(struct lv_machine *m, unsigned int id);
void mem_cgroup_uncharge(struct lv_memcg *memcg, long nr);
int memcg_set_limit(struct lv_memcg *memcg, bool swap, size_t pages);
/*
 * struct memcg_guard - keeps a memcg handle a caller passed in alive for the length of one
 * public call against a concurrent lv_memcg_remove() (memcontrol.c, "Handles"): an RCU
 * read-side section from before the call's first read of the memcg, traded for a reference
 * (memcg_guard_pin()) before the call blocks. Lives on the caller's stack.
 */
struct memcg_guard {
	struct lv_memcg *memcg; /* NULL: the root */
	bool pinned;		/* holds a reference (none for the root), not the read lock */
};
void memcg_guard_enter(struct memcg_guard *g, struct lv_memcg *memcg);
bool memcg_guard_pin(struct memcg_guard *g);
void memcg_guard_exit(struct memcg_guard *g);
#ifdef LV_DEBUG
/*
 * Tests: called by a removal after it reparented node @nid (no lock held). Set and cleared by
 * a test while no removal runs.
 */
extern void (*reparent_node_hook)(struct lv_memcg *memcg, unsigned int nid);
/*
 * Tests: called by every public call that takes a memcg handle, inside the protection it
 * holds (read-side section or reference) and before it reads the memcg; and by a removal
 * after it reparented (@err: its outcome so far), before its last steps. Set and cleared by
 * a test while no such call runs.
 */
extern void (*memcg_handle_hook)(const struct lv_memcg *memcg);
extern void (*memcg_remove_hook)(struct lv_memcg *memcg, int err);
/*
 * Tests: called by folio_lruvec_lock() (both protocols) between its read of the folio's
 * binding and its lock, inside its RCU read-side section (no grace period may be waited for).
 * Set and cleared by a test while no other thread locks folios.
 */
extern void (*folio_lruvec_lock_hook)(struct lv_folio *folio);
#define memcg_handle_hook_call(memcg)                                                              \
	do {                                                                                       \
		if (memcg_handle_hook)                                                             \
			memcg_handle_hook(memcg);                                                  \
	} while (0)
#else
#define memcg_handle_hook_call(memcg) ((void)(memcg))
#endif
/*
 * for_each_lruvec - call @fn on every lruvec of the machine, under the memcg tree mutex: the
 * live tree's, then, if @dying, those of removed memcgs not freed yet (empty, but their
 * counts still count). Those are freed as soon as the mutex is dropped: only statistics,
 * which are done with them by then, ask for them.
 */
void for_each_lruvec(struct lv_machine *m, bool dying, void (*fn)(struct lruvec *, void *),
		     void *arg);
/*
 * for_each_lruvec_locked - the same with the memcg tree mutex held by the caller, who can then
 * add the retired counts in the same hold: a memcg freed in between is counted once.
 */
void for_each_lruvec_locked(struct lv_machine *m, bool dying, void (*fn)(struct lruvec *, void *),
			    void *arg);

/* swap.c */
void folios_put_refs(struct lv_folio **folios, unsigned int nr);
void folio_add_lru(struct lv_folio *folio);
void folio_putback_lru(struct lv_folio *folio);
void drain_slot(struct cpu_slot *slot);
void folio_batch_add_and_move(struct lv_folio *folio, struct lv_folio *entry, int kind);
void lru_add_drain_try(struct lv_machine *m);
void lru_add_drain_scope(struct lv_machine *m, struct lv_memcg *memcg, int nid);
void lru_add_drain_dropped(struct lv_machine *m);
void drain_gate_init(struct lv_machine *m, struct drain_gate *gate);
bool lru_cache_disabled(struct lv_machine *m);

/*
 * folio_may_be_lru_cached - may @folio wait in a per-CPU batch (swap.c's, mlock.c's)? A small
 * one may; a large one only with cfg.batch_large: by default a batch is flushed as soon as a
 * large folio joins it, so the folio reaches its list in the caller's own lock hold.
 */
static inline bool folio_may_be_lru_cached(struct lv_machine *m, struct lv_folio *folio)
{
	return !folio_test_large(folio) || m->cfg.batch_large;
}

/* kthread.c */
/*
 * struct node_daemon - the part of a per-node daemon (kswapd, kcompactd) that the request
 * protocol and the thread lifecycle need; each owner embeds one per node (kthread.c).
 */
struct node_daemon {
	struct pglist_data *pgdat; /* constant; NULL if the thread could not be started */
	pthread_t thread;	   /* constant once started; joined by node_daemons_stop() */
	pthread_mutex_t lock;	   /* guards the sleep: the daemon waits on wait under it */
	pthread_cond_t wait;	   /* lock: signalled on a request, stop, and by the owner */
	int wake;  /* atomic; set by node_daemon_wake() (xchg), consumed under lock (xchg) */
	int busy;  /* atomic; set under lock as a pass starts, cleared seq_cst when it ends:
		    * node_daemon_wake() then leaves its request for the pass's end */
	bool stop; /* written under lock; read with atomic loads anywhere */
};
void node_daemon_wake(struct node_daemon *d);
bool node_daemon_requested(struct node_daemon *d);
bool node_daemon_begin(struct node_daemon *d);
void node_daemon_end(struct node_daemon *d);
int node_daemons_start(struct lv_machine *m, void *daemons, size_t size, size_t offset,
		       void *(*fn)(void *), const char *name);
void node_daemons_stop(struct lv_machine *m, void *daemons, size_t size, size_t offset);

/* vmscan.c */
bool folio_isolate_lru(struct lv_folio *folio);
void check_move_unevictable_folios(struct lv_folio **folios, unsigned int nr);
unsigned long try_to_free_pages(struct lv_machine *m, struct lv_memcg *target, int nid,
				unsigned long nr);
void lru_note_cost(struct lruvec *lruvec, bool file, unsigned long cost);
void lruvec_scan_costs(struct lruvec *lruvec, unsigned long *anon, unsigned long *file);
void lru_note_cost_reparent(struct lruvec *child, struct lruvec *parent);
unsigned long reclaim_pages(struct list_head *list);
int kswapd_start(struct lv_machine *m);
void kswapd_stop(struct lv_machine *m);
void kswapd_quiesce(struct lv_machine *m);
void wakeup_kswapd(struct pglist_data *pgdat);

/* filemap.c */
/*
 * The folio lock, PG_locked: a page cache folio holds it while it is filled, a swap cache
 * folio while it is swapped out or read in. folio_trylock() takes it if free; folio_unlock()
 * drops it and wakes folio_wait_locked()'s sleepers (the fill waitqueues); folio_lock() waits.
 */
static inline bool folio_trylock(struct lv_folio *f)
{
	return !((__atomic_fetch_or(&f->flags, 1ul << PG_locked, __ATOMIC_ACQUIRE) >> PG_locked) &
		 1);
}
void folio_wait_locked(struct lv_folio *folio);
void folio_unlock(struct lv_folio *folio);
static inline void folio_lock(struct lv_folio *f)
{
	while (!folio_trylock(f))
		folio_wait_locked(f);
}
int filemap_folio_replace(struct lv_folio *old, struct lv_folio *new, int expected);
struct lv_file *filemap_lock_owner_at(struct lv_folio *folio, const char *site);
#define filemap_lock_owner(folio) filemap_lock_owner_at((folio), __func__)
void filemap_unlock_owner(struct lv_file *file);
void folio_zero_holes(struct lv_folio *folio);
void filemap_split_store(struct lv_file *file, struct lv_folio *folio);
void filemap_split_drop(struct lv_file *file, struct lv_folio *page);
unsigned int filemap_get_folios(struct lv_file *file, unsigned long *start, struct lv_folio **batch,
				unsigned int max);
struct lv_machine *file_machine(const struct lv_file *file);
bool remove_mapping(struct lv_folio *folio);
/*
 * struct i_mmap - a file's mappers: one &struct file_rmap per address space with a region
 * mapping the file (mm_types.h). Its lock is of the mm class and ranks above every
 * page_table_lock: those are taken under it with lv_lock_acquire_nested(), as the kernel takes
 * PTE locks under i_mmap_rwsem, and it is never taken with a page_table_lock or any other
 * library lock held (docs/locking.md).
 */
struct i_mmap {
	struct lv_lock lock;
	struct list_head list; /* lock */
	unsigned long nr;      /* lock for writes, read racily: entries on the list */
};
struct i_mmap *file_i_mmap(struct lv_file *file);
uint64_t file_size(const struct lv_file *file);
struct lv_folio *filemap_fault(struct lv_file *file, struct lv_memcg *memcg, unsigned long index,
			       int *err);
void *filemap_peek(struct lv_file *file, unsigned long index);
void for_each_file_lock(struct lv_machine *m, void (*fn)(struct lv_lock *, void *), void *arg);
void for_each_file_i_mmap_lock(struct lv_machine *m, void (*fn)(struct lv_lock *, void *),
			       void *arg);
void close_all_files(struct lv_machine *m);
void xa_cache_destroy(struct lv_machine *m);
#define SHADOW_SHRINK_BATCH 256 /* shadow nodes one reclaim pass may free per lruvec */
unsigned long shadow_nodes_shrink(struct lruvec *lruvec, unsigned long budget);
void shadow_nodes_reparent(struct lruvec *from, struct lruvec *to);
void check_shadow_list(struct lruvec *lruvec, void (*fail)(void *, const char *, const void *),
		       void *arg);

/* memory.c */
bool try_to_unmap_lazyfree(struct lv_folio *folio);
bool try_to_unmap_file(struct lv_folio *folio);
void unmap_mapping_range(struct lv_file *file, unsigned long from, unsigned long cow_from);
void unmap_mapping_detach(struct lv_file *file);
#ifdef LV_DEBUG
/*
 * Tests: called by try_to_unmap_file() after its walk, with no lock held, before reclaim
 * tries to evict the folio (a fault may map it again here). Set and cleared by a test while
 * no reclaim runs.
 */
extern void (*file_unmap_hook)(struct lv_folio *folio);
/*
 * Tests: called by a fault of a file mapping with no lock held, holding a reference on the
 * page cache folio it looked up (and, for a write, the filled private copy), before it takes
 * the page_table_lock again to install the entry (reclaim or truncation may run here).
 */
extern void (*file_fault_hook)(struct lv_mm *mm, struct lv_folio *cache);
#endif
void for_each_mm_lock(struct lv_machine *m, void (*fn)(struct lv_lock *, void *), void *arg);
void destroy_all_mms(struct lv_machine *m);
struct lv_machine *mm_machine(const struct lv_mm *mm);
struct lv_folio *anon_folio_get(struct lv_mm *mm, uint64_t vpn, int *err);
int anon_folio_replace(struct lv_folio *old, struct lv_folio *new, int expected);
long mm_migrate_walk(struct lv_mm *mm, uint64_t from_nodes, int to_node);
void check_mms(struct lv_machine *m, void (*bad)(void *, const char *, const void *), void *arg);

/* migrate.c */
int migrate_folio_to(struct lv_folio *folio, int nid);
int folio_owner_refs(const struct lv_folio *folio);
int migrate_folio_into(struct lv_folio *folio, struct lv_folio *new, int expected);
void folio_migrate_copy(struct lv_folio *new, struct lv_folio *old);
void folio_copy_data(struct lv_folio *new, struct lv_folio *old);

/* workingset.c */
void *workingset_eviction(struct lv_folio *folio);
bool workingset_refault(struct lv_folio *folio, void *shadow, bool counted);
void workingset_age_nonresident(struct lruvec *lruvec, long nr);
void workingset_activation(struct lv_folio *folio);

/* compaction.c */
int kcompactd_start(struct lv_machine *m);
void kcompactd_stop(struct lv_machine *m);
void kcompactd_quiesce(struct lv_machine *m);
void kcompactd_resume(struct lv_machine *m);
void wakeup_kcompactd(struct pglist_data *pgdat, unsigned int order);
bool try_to_compact_node(struct pglist_data *pgdat, unsigned int order, bool async);
bool compaction_suitable(struct pglist_data *pgdat, unsigned int order);
bool too_many_isolated(struct pglist_data *pgdat);
/*
 * compact_scan_putback - one migrate-scanner pass over node @nid that isolates every LRU folio
 * it can (pinned ones too: nothing is migrated) and puts each batch straight back: the
 * scanner's own cost, for lvbench. Return: the PFNs scanned.
 * Context: no library lock held; takes lruvec locks (one at a time) and slot locks.
 */
unsigned long compact_scan_putback(struct lv_machine *m, int nid);
/* Where the migrate scanner calls compact_isolate_hook (debug builds), for tests that race it. */
enum compact_hook_step {
	/*
	 * The scanner took its reference, and may hold the lruvec lock of the folio before (with
	 * LV_PROTOCOL_V1: this folio's): the hook may take no lock, only drop a reference that
	 * is not the last.
	 */
	COMPACT_HOOK_GOT,
	COMPACT_HOOK_CHECKED, /* it re-checked the folio, about to pin it; no LRU lock held */
	COMPACT_HOOK_PINNED,  /* it won the PG_lru pin; no LRU lock held */
	/* it looked the lruvec up and is about to lock it: RCU read-side, no LRU lock held */
	COMPACT_HOOK_LOCK,
};
#ifdef LV_DEBUG
/* Tests: called by the migrate scanner at each step. Set and cleared while no scanner runs. */
extern void (*compact_isolate_hook)(struct lv_folio *folio, enum compact_hook_step step);
#endif

/* huge_memory.c */
/*
 * split_folio_to_list - split a large folio the caller holds a reference on. With @list NULL
 * the folio may be on an LRU list or queued, and every new folio is linked next to the head;
 * with @list, the caller has isolated the folio and each new folio, isolated with a
 * reference, is appended to @list. Return: 0, -EINVAL (not large), -EBUSY (other references).
 */
int split_folio_to_list(struct lv_folio *folio, struct list_head *list);
static inline int split_folio(struct lv_folio *folio)
{
	return split_folio_to_list(folio, NULL);
}
/*
 * split_folio_locked - split_folio_to_list() for a caller that holds the owner's lock (the mm's
 * page_table_lock, the file's mapping lock) and @extra references besides the owner's (0: the
 * owner's alone keep it). Pages at file index @end and beyond leave the page cache and are
 * freed (truncation; ULONG_MAX keeps them), as are anon pages no entry maps any more.
 */
int split_folio_locked(struct lv_folio *folio, struct list_head *list, int extra,
		       unsigned long end);
#ifdef LV_DEBUG
/*
 * Tests: called by a split once the folio's count is frozen, before the lruvec lock, with the
 * owner's lock held. Set and cleared by a test while no split runs.
 */
extern void (*split_frozen_hook)(struct lv_folio *folio);
#endif

/* mlock.c */
struct vm_area;
#define MLOCK_LRU  0x1ul /* mlock a folio already on (or queued for) an LRU */
#define MLOCK_NEW  0x2ul /* mlock a new folio, not on any LRU yet */
#define MLOCK_MASK 0x3ul
/* folio_test_set_mlocked - set PG_mlocked; whether it was set already. */
static inline bool folio_test_set_mlocked(struct lv_folio *f)
{
	unsigned long old = __atomic_fetch_or(&f->flags, 1ul << PG_mlocked, __ATOMIC_ACQ_REL);

	return (old >> PG_mlocked) & 1;
}
static inline struct lv_folio *mlock_entry_folio(const struct lv_folio *entry)
{
	return (struct lv_folio *)((uintptr_t)entry & ~MLOCK_MASK);
}
void mlock_folio(struct lv_folio *folio);
void mlock_new_folio(struct lv_folio *folio);
void munlock_folio(struct lv_folio *folio);
void folio_add_lru_vma(struct lv_folio *folio, struct vm_area *vma);
struct lruvec *mlock_folio_batch_entry(struct lv_folio *entry, struct lruvec *lruvec);
void mlock_migrate_folio(struct lv_folio *new, struct lv_folio *old);
void mlock_vma_range(struct lv_mm *mm, struct vm_area *vma, uint64_t start, uint64_t end,
		     bool lock);

/* mm_init.c / cpu.c */
int cpu_slots_init(struct lv_machine *m);
void cpu_slots_exit(struct lv_machine *m);

#endif /* LV_INTERNAL_H */
