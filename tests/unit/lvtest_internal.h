/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lvtest_internal.h - helpers for the unit tests that look inside the library (they include
 * internal.h first).
 */
#ifndef LV_TEST_INTERNAL_H
#define LV_TEST_INTERNAL_H

#include "internal.h"

/*
 * memcg_pending - whether @memcg is removed but not freed yet: on the machine's list of removed
 * memcgs, which its free takes it off. @memcg is compared, never dereferenced.
 */
static inline bool memcg_pending(struct lv_machine *m, const struct lv_memcg *memcg)
{
	struct list_head *pos;
	bool found = false;

	lv_lock_acquire(&m->memcg_mutex);
	list_for_each (pos, &m->dying_memcgs)
		found |= list_entry(pos, struct lv_memcg, dying_list) == memcg;
	lv_lock_release(&m->memcg_mutex);
	return found;
}

#endif /* LV_TEST_INTERNAL_H */
