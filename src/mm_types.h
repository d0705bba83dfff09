/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Address spaces and their regions (the kernel's mm_types.h): shared by memory.c, which owns
 * them, and the files that walk their page tables (mlock.c, huge_memory.c).
 */
#ifndef LV_MM_TYPES_H
#define LV_MM_TYPES_H

#include "internal.h"

#define PAGE_SHIFT    12
#define MAX_MAP_PAGES (16ull << 20) /* 64 GiB: the largest region or heap */

/* Region flags (vm_area.vm_flags), the kernel's names and meanings. */
#define VM_LOCKED     0x1ul /* mlocked: faults mlock their pages; reclaim never evicts them */
#define VM_HUGEPAGE   0x2ul /* LV_MADV_HUGEPAGE */
#define VM_NOHUGEPAGE 0x4ul /* LV_MADV_NOHUGEPAGE */
#define VM_FILE_GONE  0x8ul /* a file mapping whose file was closed: every access is -EFAULT */

/*
 * struct file_rmap - one address space in a file's list of mappers (the kernel's i_mmap tree,
 * reduced to one entry per (file, mm)): the reverse map of the file's mapped pages.
 */
struct file_rmap {
	struct list_head list; /* file's i_mmap.lock: in its i_mmap.list */
	struct lv_mm *mm;      /* constant; the entry leaves the list before the mm is freed */
	struct lv_file *file;  /* constant */
	unsigned long nr_vmas; /* mm->page_table_lock: regions of mm mapping the file */
};

/* struct vm_area - a region of virtual pages [start, end), all under mm->page_table_lock. */
struct vm_area {
	struct list_head list;	/* in mm->vmas, sorted by start */
	uint64_t start, end;	/* virtual page numbers */
	uint64_t base;		/* constant: the page pte[0] maps (start only grows) */
	size_t capacity;	/* entries allocated in pte */
	unsigned long vm_flags; /* VM_* */
	/*
	 * A private file mapping (lv_mmap_file()): the file, the file page pte[0] maps (page vpn
	 * maps file page pgoff + vpn - base) and the mm's entry in the file's mappers; all NULL
	 * or 0 for anonymous memory. Constant while the region lives, except that
	 * lv_file_close() clears file and rmap (under the i_mmap lock and page_table_lock).
	 */
	struct lv_file *file;
	uint64_t pgoff;
	struct file_rmap *rmap;
	/*
	 * pte[vpn - base]: the folio mapped there, or NULL. Each present entry holds one
	 * reference on its folio; the 2^order entries of a large folio all point at its head.
	 */
	struct lv_folio **pte;
};

struct lv_mm {
	struct lv_machine *machine; /* constant */
	struct lv_memcg *memcg;	    /* constant, pinned (nr_mms); NULL with memcg disabled */
	int nid;		    /* atomic (relaxed): preferred node for faults */
	long rss;		    /* page_table_lock for writes; read racily */
	struct vm_area *heap;	 /* constant until lv_mm_destroy(): the brk region, maybe empty */
	struct vm_area *cache;	 /* page_table_lock: last region found */
	uint64_t mmap_next;	 /* page_table_lock: where the next lv_mmap() goes */
	unsigned long def_flags; /* page_table_lock: VM_* given to new regions (LV_MCL_FUTURE) */
	struct list_head vmas;	 /* page_table_lock */
	struct list_head mms;	 /* machine->memcg_mutex: the machine's address spaces */
	unsigned int pins;	 /* machine->memcg_mutex: swapoff's walkers (mm_next_pinned()) */
	struct rcu_head rcu;
	struct lv_lock page_table_lock ____cacheline_aligned;
};

static inline struct lv_folio **vma_pte(struct vm_area *vma, uint64_t vpn)
{
	return &vma->pte[vpn - vma->base];
}

/* vma_file_index - the file page that page @vpn of file mapping @vma maps. */
static inline unsigned long vma_file_index(const struct vm_area *vma, uint64_t vpn)
{
	return (unsigned long)(vma->pgoff + (vpn - vma->base));
}

/*
 * pte_is_file - whether present entry @pte maps a page cache folio rather than an anon one: an
 * anon folio mapped by a page table is owned by its mm (FOLIO_MAPPING_ANON), a page cache
 * folio by its file, which it stays in while any entry maps it (truncation unmaps first).
 */
static inline bool pte_is_file(const struct lv_folio *pte)
{
	return !((uintptr_t)__atomic_load_n(&pte->mapping, __ATOMIC_RELAXED) & FOLIO_MAPPING_ANON);
}

/* memory.c */
struct vm_area *find_vma(struct lv_mm *mm, uint64_t vpn);
struct lv_mm *mm_lock_folio(struct lv_folio *folio, struct lv_folio ***ptep);
/*
 * mm_next_pinned - the address space after @prev (NULL: the first) in the machine's list,
 * pinned against lv_mm_destroy() freeing it; @prev's pin is dropped. NULL at the end.
 * mm_unpin - drop a pin early. Context: no lock held (takes the memcg tree mutex).
 */
struct lv_mm *mm_next_pinned(struct lv_machine *m, struct lv_mm *prev);
void mm_unpin(struct lv_mm *mm);
/*
 * vma_apply_fn - called by mm_vma_modify_flags() for each region part [@start, @end) of the
 * range, after its flags changed, with the page_table_lock held.
 */
typedef void (*vma_apply_fn)(struct lv_mm *mm, struct vm_area *vma, uint64_t start, uint64_t end,
			     void *arg);
long mm_vma_modify_flags(struct lv_mm *mm, uint64_t start, uint64_t end, unsigned long set,
			 unsigned long clear, vma_apply_fn fn, void *arg);

/* huge_memory.c */
#define HPAGE_PMD_ORDER 9 /* a huge page: 2 MiB, the kernel's PMD size on x86-64 */
#define HPAGE_PMD_NR	(1ul << HPAGE_PMD_ORDER)
#define THP_NO_FAULT	UINT64_MAX /* thp_fault_suitable(): no huge page here */
uint64_t thp_fault_suitable(struct lv_mm *mm, struct vm_area *vma, uint64_t vpn);
struct lv_folio *thp_fault_alloc(struct lv_mm *mm, unsigned long vm_flags);
bool thp_fault_map(struct lv_mm *mm, struct lv_folio *folio, uint64_t haddr);
long folio_mapcount_mm(struct lv_mm *mm, struct lv_folio *folio);

#endif /* LV_MM_TYPES_H */
