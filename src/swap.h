/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Swap: entries, devices (swapfile.c) and the swap cache (swap_state.c), as the kernel's
 * include/linux/swap.h and mm/swap.h split them.
 *
 * A swap entry names one slot: (device type, offset). Offset 0 of every device is never
 * handed out, so that the value 0 means "no entry". A page table entry holds either a folio
 * pointer or a swap entry tagged in its low bit (folio descriptors are 64-byte aligned).
 *
 * Slot use counts (swap_map, one byte per slot). Anon pages are private to one mm (there is
 * no fork), so a slot has at most one page table user; SWAP_HAS_CACHE says the swap cache
 * holds (or is about to hold) a folio for it. A slot is free when its byte is 0; freeing it
 * uncharges its memcg's swap and, on a file device, nothing else (the data is just stale).
 */
#ifndef LV_SWAP_H
#define LV_SWAP_H

#include "internal.h"

typedef struct {
	unsigned long val;
} swp_entry_t;

#define SWP_TYPE_SHIFT		 58
#define SWP_OFFSET_MASK		 ((1ul << SWP_TYPE_SHIFT) - 1)
#define SWAP_HAS_CACHE		 0x40 /* swap_map: the swap cache holds a folio for the slot */
#define SWAP_COUNT_MASK		 0x3f /* swap_map: page table entries holding the slot (0 or 1) */
#define SWAPFILE_CLUSTER	 512  /* slots per cluster: one huge page */
#define SWAP_ADDRESS_SPACE_SHIFT 14   /* slots per swap cache tree: 64 MiB, as the kernel's */
#define SWAP_ADDRESS_SPACE_PAGES (1ul << SWAP_ADDRESS_SPACE_SHIFT)

_Static_assert(LV_MAX_SWAPFILES <= (1 << (63 - SWP_TYPE_SHIFT)), "type must fit an entry");

static inline swp_entry_t swp_entry(unsigned int type, unsigned long offset)
{
	return (swp_entry_t){ ((unsigned long)type << SWP_TYPE_SHIFT) |
			      (offset & SWP_OFFSET_MASK) };
}
static inline unsigned int swp_type(swp_entry_t e)
{
	return (unsigned int)(e.val >> SWP_TYPE_SHIFT);
}
static inline unsigned long swp_offset(swp_entry_t e)
{
	return e.val & SWP_OFFSET_MASK;
}

/* Page table entries: a folio pointer, NULL, or a swap entry tagged with bit 0. */
static inline bool pte_is_swap(const struct lv_folio *pte)
{
	return (uintptr_t)pte & 1;
}
static inline bool pte_present(const struct lv_folio *pte)
{
	return pte && !pte_is_swap(pte);
}
static inline swp_entry_t pte_to_swp_entry(const struct lv_folio *pte)
{
	return (swp_entry_t){ (uintptr_t)pte >> 1 };
}
static inline struct lv_folio *swp_entry_to_pte(swp_entry_t e)
{
	return (struct lv_folio *)((e.val << 1) | 1);
}

/* ---- swapfile.c: devices, slots, I/O --------------------------------------------------------- */

struct swap_info_struct;

/*
 * get_swap_device - pin the device of @e against lv_swap_off() freeing it (the kernel's
 * percpu_ref): NULL if @e names no device that is on. put_swap_device() drops the pin.
 * Context: any; lock-free.
 */
struct swap_info_struct *get_swap_device(struct lv_machine *m, swp_entry_t e);
void put_swap_device(struct swap_info_struct *si);

/*
 * folio_alloc_swap - a slot for the order-0 @folio, from the highest-priority device with
 * room, through this CPU slot's cluster: its swap_map is SWAP_HAS_CACHE, and the slot is
 * charged to @folio's memcg (recorded with the slot). Return: the entry, or val 0 (no device,
 * all full, or the memcg's swap limit reached).
 * Context: the caller owns @folio (isolated, locked); takes the device and cluster locks.
 */
swp_entry_t folio_alloc_swap(struct lv_folio *folio);
/*
 * swap_duplicate - a page table entry now holds @e (count 0 → 1). swap_free - it no longer
 * does (1 → 0; the slot is freed if the cache does not hold it either).
 */
void swap_duplicate(swp_entry_t e);
void swap_free(swp_entry_t e);
/*
 * swapcache_prepare - claim @e for the swap cache (set SWAP_HAS_CACHE) before a swap-in adds
 * a folio for it. Return: 0, -EEXIST (the cache has or is getting one), -ENOENT (the slot is
 * free: the page table entry that named it is gone).
 */
int swapcache_prepare(swp_entry_t e);
/* put_swap_folio - the swap cache let go of @e (clear SWAP_HAS_CACHE; free if unused). */
void put_swap_folio(swp_entry_t e);
/* swp_swapcount - page table users of @e (SWAP_COUNT_MASK part); swap_map_value - the byte. */
int swp_swapcount(swp_entry_t e);
unsigned char swap_map_value(swp_entry_t e);
/*
 * swap_writepage / swap_readpage - one page of data to or from slot @e.
 * Return: 0 or -EIO (counted on the device and in @lruvec's statistics).
 * Context: the caller pins the device and owns the slot; no lock held (may block).
 */
int swap_writepage(swp_entry_t e, const void *data, struct lruvec *lruvec);
int swap_readpage(swp_entry_t e, void *data, struct lruvec *lruvec);
/*
 * swap_address_space - the swap cache tree holding @e: each device has one per 64 MiB of
 * slots (valid while the device is pinned).
 */
struct lv_file *swap_address_space(swp_entry_t e);
/*
 * lookup_swap_cgroup - the memcg slot @e is charged to, or its closest ancestor alive (a
 * removed memcg's slots are recharged to its parent), or NULL with memcg disabled. A
 * reference is taken (css_get); the caller puts it.
 */
struct lv_memcg *lookup_swap_cgroup(struct lv_machine *m, swp_entry_t e);
/* swap_type_max - the offsets of device @type are below this; 0 if it is not on. */
unsigned long swap_type_max(struct lv_machine *m, unsigned int type);
/* get_nr_swap_pages - free slots on all devices that are on (racy). */
long get_nr_swap_pages(struct lv_machine *m);
/*
 * mem_cgroup_get_nr_swap_pages - the slots @memcg's pages may still take: the free slots,
 * or less if @memcg or an ancestor is close to its swap limit. 0: reclaim skips anon.
 */
long mem_cgroup_get_nr_swap_pages(struct lv_memcg *memcg);
/* mem_cgroup_swappiness - the swappiness reclaim uses for @memcg (NULL: the machine's). */
unsigned int mem_cgroup_swappiness(struct lv_machine *m, struct lv_memcg *memcg);
/*
 * swap_reparent - re-record every slot charged to @from as charged to @to (a removal): the
 * counts already include them, being hierarchical.
 * Context: memcg tree mutex held, by lv_memcg_remove().
 */
void swap_reparent(struct lv_machine *m, struct lv_memcg *from, struct lv_memcg *to);
/*
 * swap_space_create / swap_space_destroy - a device's swap cache tree (filemap.c: the page
 * cache's radix tree, lock class mapping). Destroy drops its shadow entries; it must hold no
 * folio (swap_cache_clear() first).
 */
struct lv_file *swap_space_create(struct lv_machine *m);
void swap_space_destroy(struct lv_file *space);
/*
 * swap_cache_clear - free every folio in device @type's swap cache that no page table entry
 * needs (read-ahead folios, and folios reclaim left there): for swapoff after try_to_unuse(),
 * and for teardown. Context: the device takes no new slots; no lock held.
 */
void swap_cache_clear(struct lv_machine *m, unsigned int type);
/*
 * The tree operations behind the swap cache (filemap.c). swap_cache_load: the entry (folio,
 * shadow or NULL) at @index and its slot, under RCU. The others need mapping_lock(@space):
 * swap_cache_insert: 0, -EEXIST (a folio is there) or -ENOMEM, *@shadowp the shadow it
 * replaced; swap_cache_erase: replace @folio at @index by @shadow (NULL: nothing), false if
 * it is not there; swap_cache_clear_shadow: drop a shadow entry at @index, if any.
 */
struct lv_lock *mapping_lock(struct lv_file *space);
void *swap_cache_load(struct lv_file *space, unsigned long index, void ***slotp);
int swap_cache_insert(struct lv_file *space, unsigned long index, struct lv_folio *folio,
		      void **shadowp);
bool swap_cache_erase(struct lv_file *space, unsigned long index, struct lv_folio *folio,
		      void *shadow);
void swap_cache_clear_shadow(struct lv_file *space, unsigned long index);
/* swap_exit - turn every device off at machine teardown (nothing maps them any more). */
void swap_exit(struct lv_machine *m);
/* swap_inuse_pages - slots in use on @m's devices (racy). Context: any; lock-free. */
long swap_inuse_pages(struct lv_machine *m);
/*
 * for_each_swap_lock - call @fn on every lock of @m's devices (statistics). Context:
 * m->memcg_mutex held, which also covers the retired totals a device turned off adds to.
 */
void for_each_swap_lock(struct lv_machine *m, void (*fn)(struct lv_lock *, void *), void *arg);
/*
 * check_swap - lv_check()'s look at the devices: slot counts, cluster lists, per-CPU clusters,
 * free slot counts and memcg swap usage against the slots' records; @bad reports a violation.
 * Context: a quiescent machine; takes m->memcg_mutex, then each device's lock.
 */
void check_swap(struct lv_machine *m, void (*bad)(void *, const char *, const void *), void *arg);
#ifdef LV_DEBUG
/*
 * Tests: called before every device read (@write false) and write; a nonzero return fails
 * that I/O with -EIO. Set and cleared by a test while no I/O runs.
 */
extern int (*swap_io_hook)(swp_entry_t e, bool write);
#endif

/* ---- swap_state.c: the swap cache, swap-out and swap-in ---------------------------------------
 */

/* folio_swap_entry - the slot of a swap cache folio (PG_swapcache), from a side table. */
swp_entry_t folio_swap_entry(const struct lv_folio *folio);
/*
 * swap_out_folio - reclaim's anon path for an isolated order-0 swap-backed folio that
 * reclaim decided to evict: slot, swap cache, unmap, write, free. Return: true if it was
 * freed (count zero: the caller frees it); false if it stays (*@activate: it should go to
 * the active list). @pageout counts pages written.
 * Context: no lock held; may block (I/O).
 */
bool swap_out_folio(struct lv_folio *folio, bool *activate, unsigned long *pageout);
/*
 * do_swap_page - the fault on the swap entry @e at page @vpn of @mm: find or read the folio,
 * charge it, map it. Return: 0 (retry the access), -ENOMEM or -EIO.
 * Context: no lock held; may block.
 */
int do_swap_page(struct lv_mm *mm, uint64_t vpn, swp_entry_t e);
/*
 * free_swap_and_cache - a page table entry holding @e is being zapped: drop its use, and
 * free the swap cache folio if nothing else uses it.
 * Context: may be called under the page_table_lock (takes only mapping and device locks).
 */
void free_swap_and_cache(struct lv_machine *m, swp_entry_t e);
/*
 * try_to_unuse - swap every page on device @type back in (swapoff). Return: 0, -ENOMEM, -EIO.
 * Context: the device takes no new slots; no lock held; may block.
 */
int try_to_unuse(struct lv_machine *m, unsigned int type);

#endif /* LV_SWAP_H */
