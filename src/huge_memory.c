// SPDX-License-Identifier: LGPL-2.1-or-later
/* Transparent huge pages: huge anonymous faults and splitting large folios. (Being written.) */
#include "internal.h"

int split_folio_to_list(struct lv_folio *folio, struct list_head *list)
{
	(void)list;
	return folio_test_large(folio) ? -EBUSY : -EINVAL;
}

int lv_split_folio(struct lv_folio *folio)
{
	return split_folio(folio);
}
