/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Thin shim over liburcu. The flavour is "bp" (bulletproof): a library cannot require the
 * application to register its threads, and bp registers lazily on the first read-side lock
 * (about 1 ns per lock/unlock pair). Publication and dereference use __atomic release/acquire
 * rather than liburcu's volatile accesses, which is correct everywhere and lets
 * ThreadSanitizer see the ordering (docs/testing.md, "ThreadSanitizer and liburcu").
 *
 * Every RCU free callback is named *_rcu_free and is bracketed by rcu_free_begin()/_end().
 */
#ifndef LV_RCU_H
#define LV_RCU_H

/*
 * Inline the read-side fast paths (this library is LGPL, like liburcu) except under the
 * sanitizers. Under ASan, liburcu's reader registry is laid out with less alignment than its
 * type declares, which UBSan would report on every inlined read_lock. Under TSan, liburcu-bp
 * gives an exited thread's reader slot to the next thread that registers, ordered by a mutex
 * inside the uninstrumented library: inlined, the new owner's first read of the slot looks
 * like a race with the old owner's last write (kswapd registering after a worker exited is
 * such a pair). Called in the library, those accesses are not instrumented.
 */
#if !defined(LV_ASAN) && !defined(LV_TSAN)
#define _LGPL_SOURCE
#endif
#include <urcu-bp.h>

#ifdef LV_TSAN
/*
 * ThreadSanitizer cannot see that a grace period orders every earlier read-side section (and
 * the call_rcu() itself) before an RCU callback: the ordering lives in uninstrumented
 * liburcu. Make it visible: each read-side unlock and each call_rcu_lv() releases one sync
 * object; each *_rcu_free callback acquires it before freeing and releases it when done, which
 * rcu_barrier_lv() acquires. Only TSan builds do this.
 */
#include <sanitizer/tsan_interface.h>
extern char lv_rcu_tsan_sync;
static inline void lv_tsan_rcu_read_unlock(void)
{
	__tsan_release(&lv_rcu_tsan_sync);
	urcu_bp_read_unlock();
}
#undef rcu_read_unlock
#define rcu_read_unlock()     lv_tsan_rcu_read_unlock()
#define rcu_free_begin()      __tsan_acquire(&lv_rcu_tsan_sync)
#define rcu_free_end()	      __tsan_release(&lv_rcu_tsan_sync)
#define call_rcu_lv(head, fn) (__tsan_release(&lv_rcu_tsan_sync), call_rcu((head), (fn)))
#define rcu_barrier_lv()      (rcu_barrier(), __tsan_acquire(&lv_rcu_tsan_sync))
#else
#define rcu_free_begin()      ((void)0)
#define rcu_free_end()	      ((void)0)
#define call_rcu_lv(head, fn) call_rcu((head), (fn))
#define rcu_barrier_lv()      rcu_barrier()
#endif

#define rcu_dereference_lv(p)	    __atomic_load_n(&(p), __ATOMIC_ACQUIRE)
#define rcu_assign_pointer_lv(p, v) __atomic_store_n(&(p), (v), __ATOMIC_RELEASE)

#endif /* LV_RCU_H */
