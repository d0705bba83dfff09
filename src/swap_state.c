// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The swap cache, swap-out and swap-in. (Placeholder.)
 */
#include "internal.h"
#include "mm_types.h"
#include "swap.h"

swp_entry_t folio_swap_entry(const struct lv_folio *folio)
{
	return (swp_entry_t){ folio->pgdat->swap_slot[folio - folio->pgdat->memmap] };
}

bool swap_out_folio(struct lv_folio *folio, bool *activate, unsigned long *pageout)
{
	(void)folio;
	(void)pageout;
	*activate = false;
	return false;
}

int do_swap_page(struct lv_mm *mm, uint64_t vpn, swp_entry_t e)
{
	(void)mm;
	(void)vpn;
	(void)e;
	return -EIO;
}

void free_swap_and_cache(struct lv_machine *m, swp_entry_t e)
{
	(void)m;
	swap_free(e);
}

int try_to_unuse(struct lv_machine *m, unsigned int type)
{
	(void)m;
	(void)type;
	return 0;
}

void swap_cache_clear(struct lv_machine *m, unsigned int type)
{
	(void)m;
	(void)type;
}
