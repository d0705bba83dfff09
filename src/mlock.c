// SPDX-License-Identifier: LGPL-2.1-or-later
/* mlock: the mlock batch, mlock_count, munlock and the unevictable list. (Being written.) */
#include "internal.h"

int lv_mlock(struct lv_mm *mm, uint64_t addr, size_t len)
{
	(void)mm, (void)addr, (void)len;
	return -ENOSYS;
}

int lv_munlock(struct lv_mm *mm, uint64_t addr, size_t len)
{
	(void)mm, (void)addr, (void)len;
	return -ENOSYS;
}

int lv_mlockall(struct lv_mm *mm, unsigned int flags)
{
	(void)mm, (void)flags;
	return -ENOSYS;
}

int lv_munlockall(struct lv_mm *mm)
{
	(void)mm;
	return -ENOSYS;
}
