// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Swap devices: slot allocation, use counts, I/O, memcg swap accounting, swapon and swapoff.
 * (Placeholder: no device can be turned on yet.)
 */
#include "internal.h"
#include "swap.h"
#include <limits.h>

#ifdef LV_DEBUG
int (*swap_io_hook)(swp_entry_t e, bool write);
#endif

struct swap_info_struct *get_swap_device(struct lv_machine *m, swp_entry_t e)
{
	(void)m;
	(void)e;
	return NULL;
}

void put_swap_device(struct swap_info_struct *si)
{
	(void)si;
}

swp_entry_t folio_alloc_swap(struct lv_folio *folio)
{
	(void)folio;
	return (swp_entry_t){ 0 };
}

void swap_duplicate(swp_entry_t e)
{
	(void)e;
}

void swap_free(swp_entry_t e)
{
	(void)e;
}

int swapcache_prepare(swp_entry_t e)
{
	(void)e;
	return -ENOENT;
}

void put_swap_folio(swp_entry_t e)
{
	(void)e;
}

int swp_swapcount(swp_entry_t e)
{
	(void)e;
	return 0;
}

unsigned char swap_map_value(swp_entry_t e)
{
	(void)e;
	return 0;
}

int swap_writepage(swp_entry_t e, const void *data, struct lruvec *lruvec)
{
	(void)e;
	(void)data;
	(void)lruvec;
	return -EIO;
}

int swap_readpage(swp_entry_t e, void *data, struct lruvec *lruvec)
{
	(void)e;
	(void)data;
	(void)lruvec;
	return -EIO;
}

struct lv_file *swap_address_space(swp_entry_t e)
{
	(void)e;
	return NULL;
}

struct lv_memcg *lookup_swap_cgroup(struct lv_machine *m, swp_entry_t e)
{
	(void)m;
	(void)e;
	return NULL;
}

long get_nr_swap_pages(struct lv_machine *m)
{
	return __atomic_load_n(&m->nr_swap_pages, __ATOMIC_RELAXED);
}

long mem_cgroup_get_nr_swap_pages(struct lv_memcg *memcg)
{
	return memcg ? get_nr_swap_pages(memcg->machine) : 0;
}

unsigned int mem_cgroup_swappiness(struct lv_machine *m, struct lv_memcg *memcg)
{
	int s = memcg ? __atomic_load_n(&memcg->swappiness, __ATOMIC_RELAXED) : -1;

	return s >= 0 ? (unsigned int)s : __atomic_load_n(&m->swappiness, __ATOMIC_RELAXED);
}

void swap_reparent(struct lv_machine *m, struct lv_memcg *from, struct lv_memcg *to)
{
	(void)m;
	(void)from;
	(void)to;
}

void swap_exit(struct lv_machine *m)
{
	(void)m;
}

int lv_swap_on(struct lv_machine *m, int fd, size_t size, int prio)
{
	(void)m;
	(void)fd;
	(void)size;
	(void)prio;
	return -EINVAL;
}

int lv_swap_off(struct lv_machine *m, int id)
{
	(void)m;
	(void)id;
	return -EINVAL;
}

int lv_swap_info(struct lv_machine *m, int id, struct lv_swap_info *info)
{
	(void)m;
	(void)id;
	(void)info;
	return -EINVAL;
}

int lv_memcg_set_swap_max(struct lv_memcg *memcg, size_t pages)
{
	if (!memcg || !memcg->parent)
		return -EINVAL;
	__atomic_store_n(&memcg->swap_max, pages > LONG_MAX ? LONG_MAX : (long)pages,
			 __ATOMIC_RELAXED);
	return 0;
}

size_t lv_memcg_swap_usage(const struct lv_memcg *memcg)
{
	return memcg ? (size_t)__atomic_load_n(&memcg->swap_usage, __ATOMIC_RELAXED) : 0;
}

int lv_memcg_set_swappiness(struct lv_memcg *memcg, unsigned int swappiness)
{
	if (swappiness > 200)
		return -EINVAL;
	if (!memcg || !memcg->parent)
		__atomic_store_n(&memcg->machine->swappiness, swappiness, __ATOMIC_RELAXED);
	else
		__atomic_store_n(&memcg->swappiness, (int)swappiness, __ATOMIC_RELAXED);
	return 0;
}

unsigned long swap_type_max(struct lv_machine *m, unsigned int type)
{
	(void)m;
	(void)type;
	return 0;
}
