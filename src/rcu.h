/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Thin shim over liburcu. The flavour is "bp" (bulletproof): a library cannot require the
 * application to register its threads, and bp registers lazily on the first read-side lock
 * (about 1 ns per lock/unlock pair). Publication and dereference use __atomic release/acquire
 * rather than liburcu's volatile accesses, which is correct everywhere and lets
 * ThreadSanitizer see the ordering (peers-and-style §5.1).
 *
 * Every RCU free callback is named *_rcu_free so that one suppression line covers the
 * reader-load vs free() pairs whose ordering TSan cannot see (tests/tsan.supp).
 */
#ifndef LV_RCU_H
#define LV_RCU_H

/*
 * Inline the read-side fast paths (this library is LGPL, like liburcu) except under ASan:
 * liburcu's reader registry is laid out with less alignment than its type declares, which
 * UBSan would report on every inlined read_lock.
 */
#ifndef LV_ASAN
#define _LGPL_SOURCE
#endif
#include <urcu-bp.h>

#define rcu_dereference_lv(p)	    __atomic_load_n(&(p), __ATOMIC_ACQUIRE)
#define rcu_assign_pointer_lv(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELEASE)

#endif /* LV_RCU_H */
