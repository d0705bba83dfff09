// SPDX-License-Identifier: LGPL-2.1-or-later
/* Compaction: the migrate and free scanners, kcompactd. (Being written.) */
#include "internal.h"

int kcompactd_start(struct lv_machine *m)
{
	(void)m;
	return 0;
}

void kcompactd_stop(struct lv_machine *m)
{
	(void)m;
}

int lv_compact_node(struct lv_machine *m, int nid, int order)
{
	if (!m || !node_valid(m, nid) || order < -1 || order > LV_MAX_ORDER)
		return -EINVAL;
	return -ENOSYS;
}

int lv_compact_memcg(struct lv_memcg *memcg, int order)
{
	if (!memcg || order < -1 || order > LV_MAX_ORDER)
		return -EINVAL;
	return -ENOSYS;
}

int lv_fragmentation_index(struct lv_machine *m, int nid, int order)
{
	if (!m || !node_valid(m, nid) || order < 0 || order > LV_MAX_ORDER)
		return -EINVAL;
	return -ENOSYS;
}

unsigned long compact_scan_putback(struct lv_machine *m, int nid)
{
	(void)m, (void)nid;
	return 0;
}
