// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Lock backends and statistics.
 *
 * Theory of operation. Threads outnumber cores on the machines this runs on, and a userspace
 * lock holder can be preempted (the kernel disables preemption under a spinlock; we cannot).
 * FIFO spinlocks hand the lock to a waiter that may not be running and collapse by orders of
 * magnitude, so the default backend is a barging futex lock (Drepper, "Futexes Are Tricky",
 * mutex 3): a waiter sleeps in the kernel and whoever runs first takes the lock.
 *
 * Every acquisition starts with a trylock. Success is the uncontended case and costs one
 * counter update. Failure is a contention: the wait is timed with CLOCK_MONOTONIC around the
 * blocking acquisition, and the holder (now us) records it. Because only the holder writes the
 * statistics, these are the `perf lock report` numbers without a single extra atomic RMW.
 */
#define _GNU_SOURCE
#include "lock.h"

#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void futex_wait(uint32_t *uaddr, uint32_t val)
{
	syscall(SYS_futex, uaddr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake(uint32_t *uaddr, int nr)
{
	syscall(SYS_futex, uaddr, FUTEX_WAKE_PRIVATE, nr, NULL, NULL, 0);
}

void lv_lock_init(struct lv_lock *l, enum lv_lock_backend backend, enum lv_lock_class cls)
{
	*l = (struct lv_lock){ .backend = (uint8_t)backend, .cls = (uint8_t)cls };
	if (backend == LV_BACKEND_MUTEX)
		pthread_mutex_init(&l->mutex, NULL);
}

void lv_lock_destroy(struct lv_lock *l)
{
	if (l->backend == LV_BACKEND_MUTEX)
		pthread_mutex_destroy(&l->mutex);
}

#ifdef LV_DEBUG
__thread unsigned int lv_held[LV_NR_LOCK_CLASSES];

/*
 * Rank of each class in the lock order (docs/locking.md): a lock may only be taken while every
 * held lock has a strictly lower rank. Equal ranks forbid holding two locks of one class, and
 * lruvec and node locks share a rank: never two LRU locks at once.
 */
static const int lock_rank[LV_NR_LOCK_CLASSES] = {
	[LV_LOCK_CLASS_DRAIN] = 0,  [LV_LOCK_CLASS_MM] = 1,	 [LV_LOCK_CLASS_SLOT] = 2,
	[LV_LOCK_CLASS_MEMCG] = 3,  [LV_LOCK_CLASS_MAPPING] = 4, [LV_LOCK_CLASS_SHADOW] = 5,
	[LV_LOCK_CLASS_LRUVEC] = 6, [LV_LOCK_CLASS_NODE] = 6,	 [LV_LOCK_CLASS_PCP] = 7,
	[LV_LOCK_CLASS_ZONE] = 8,
};

static __attribute__((noreturn)) void lockdep_bug(const char *what, int cls)
{
	fprintf(stderr, "lruvec: lockdep: %s (acquiring %s while holding:", what,
		lv_lock_class_name(cls));
	for (int c = 0; c < LV_NR_LOCK_CLASSES; c++)
		if (lv_held[c])
			fprintf(stderr, " %s x%u", lv_lock_class_name(c), lv_held[c]);
	fprintf(stderr, ")\n");
	abort();
}

/* lockdep_acquire - check the order for @l, with @nested locks of its class allowed held. */
static void lockdep_acquire(const struct lv_lock *l, unsigned int nested)
{
	int cls = l->cls;

	if (lv_held[cls] != nested)
		lockdep_bug(nested ? "nested acquisition without its outer lock"
				   : "lock order violation",
			    cls);
	for (int c = 0; c < LV_NR_LOCK_CLASSES; c++)
		if (c != cls && lv_held[c] && lock_rank[c] >= lock_rank[cls])
			lockdep_bug("lock order violation", cls);
	/* The page allocator is never entered under an LRU lock: a free there could recurse. */
	if ((cls == LV_LOCK_CLASS_PCP || cls == LV_LOCK_CLASS_ZONE) &&
	    (lv_held[LV_LOCK_CLASS_LRUVEC] || lv_held[LV_LOCK_CLASS_NODE]))
		lockdep_bug("page allocator under an LRU lock", cls);
}

void lockdep_assert_held(const struct lv_lock *l)
{
	if (__atomic_load_n(&l->owner, __ATOMIC_RELAXED) != gettid()) {
		fprintf(stderr, "lruvec: lockdep: %s lock %p not held by this thread\n",
			lv_lock_class_name(l->cls), (const void *)l);
		abort();
	}
}

void lockdep_assert_no_lru_lock(void)
{
	if (lv_held[LV_LOCK_CLASS_LRUVEC] || lv_held[LV_LOCK_CLASS_NODE])
		lockdep_bug("final put or free under an LRU lock", LV_LOCK_CLASS_PCP);
}

void lockdep_assert_class_not_held(enum lv_lock_class cls, const char *what)
{
	if (lv_held[cls]) {
		fprintf(stderr, "lruvec: lockdep: %s with a %s lock held\n", what,
			lv_lock_class_name(cls));
		abort();
	}
}
#endif

static bool lock_try(struct lv_lock *l)
{
	uint32_t zero = 0;

	switch (l->backend) {
	case LV_BACKEND_MUTEX:
		return pthread_mutex_trylock(&l->mutex) == 0;
	case LV_BACKEND_SPIN:
		return __atomic_load_n(&l->spin, __ATOMIC_RELAXED) == 0 &&
		       __atomic_exchange_n(&l->spin, 1, __ATOMIC_ACQUIRE) == 0;
	default:
		return __atomic_compare_exchange_n(&l->futex, &zero, 1, false, __ATOMIC_ACQUIRE,
						   __ATOMIC_RELAXED);
	}
}

static void lock_wait(struct lv_lock *l)
{
	switch (l->backend) {
	case LV_BACKEND_MUTEX:
		pthread_mutex_lock(&l->mutex);
		return;
	case LV_BACKEND_SPIN:
		for (unsigned int spins = 0;; spins++) {
			if (lock_try(l))
				return;
			if (spins >= 100) {
				sched_yield();
				spins = 0;
			} else {
				cpu_relax();
			}
		}
	default:
		/*
		 * No spinning: with threads outnumbering cores the holder is often preempted, and
		 * spinning then only burns the time slice it needs (measured: lvbench churn lost
		 * a fifth of its throughput with 64 spins; a lone reader gained 7 %). Mark the
		 * lock "with waiters" so that the holder's unlock wakes someone, and sleep.
		 */
		while (__atomic_exchange_n(&l->futex, 2, __ATOMIC_ACQUIRE) != 0)
			futex_wait(&l->futex, 2);
	}
}

static void lock_acquire(struct lv_lock *l, unsigned int nested)
{
#ifdef LV_DEBUG
	lockdep_acquire(l, nested);
#else
	(void)nested;
#endif
	if (likely(lock_try(l))) {
		WRITE_ONCE(l->acquired, l->acquired + 1);
	} else {
		uint64_t t0 = now_ns(), wait;

		lock_wait(l);
		wait = now_ns() - t0;
		WRITE_ONCE(l->acquired, l->acquired + 1);
		WRITE_ONCE(l->contended, l->contended + 1);
		WRITE_ONCE(l->wait_total, l->wait_total + wait);
		if (wait > l->wait_max)
			WRITE_ONCE(l->wait_max, wait);
		if (wait < l->wait_min || l->wait_min == 0)
			WRITE_ONCE(l->wait_min, wait ? wait : 1);
	}
#ifdef LV_DEBUG
	__atomic_store_n(&l->owner, gettid(), __ATOMIC_RELAXED);
	lv_held[l->cls]++;
#endif
}

void lv_lock_acquire(struct lv_lock *l)
{
	lock_acquire(l, 0);
}

void lv_lock_acquire_nested(struct lv_lock *l)
{
	lock_acquire(l, 1);
}

/*
 * lv_lock_trylock_inverted - take @l only if it is free, against the lock order: safe because
 * it never waits (the shadow-node shrinker holds the shadow list lock and tries a mapping), so
 * it is exempt from the order check. Counted like an uncontended acquisition; a failure is not
 * counted at all (the caller did not wait).
 */
bool lv_lock_trylock_inverted(struct lv_lock *l)
{
	if (!lock_try(l))
		return false;
	WRITE_ONCE(l->acquired, l->acquired + 1);
#ifdef LV_DEBUG
	__atomic_store_n(&l->owner, gettid(), __ATOMIC_RELAXED);
	lv_held[l->cls]++;
#endif
	return true;
}

/* lv_lock_trylock - lv_lock_trylock_inverted() for a caller that keeps the lock order: checked. */
bool lv_lock_trylock(struct lv_lock *l)
{
#ifdef LV_DEBUG
	lockdep_acquire(l, 0);
#endif
	return lv_lock_trylock_inverted(l);
}

void lv_lock_release(struct lv_lock *l)
{
#ifdef LV_DEBUG
	lockdep_assert_held(l);
	__atomic_store_n(&l->owner, 0, __ATOMIC_RELAXED);
	lv_held[l->cls]--;
#endif
	switch (l->backend) {
	case LV_BACKEND_MUTEX:
		pthread_mutex_unlock(&l->mutex);
		return;
	case LV_BACKEND_SPIN:
		__atomic_store_n(&l->spin, 0, __ATOMIC_RELEASE);
		return;
	default:
		if (__atomic_fetch_sub(&l->futex, 1, __ATOMIC_RELEASE) != 1) {
			__atomic_store_n(&l->futex, 0, __ATOMIC_RELEASE);
			futex_wake(&l->futex, 1);
		}
	}
}

void lv_lock_stat_merge(struct lv_lock_stat *sum, const struct lv_lock_stat *s)
{
	sum->acquired += s->acquired;
	sum->contended += s->contended;
	sum->wait_total_ns += s->wait_total_ns;
	if (s->wait_max_ns > sum->wait_max_ns)
		sum->wait_max_ns = s->wait_max_ns;
	if (s->wait_min_ns && (!sum->wait_min_ns || s->wait_min_ns < sum->wait_min_ns))
		sum->wait_min_ns = s->wait_min_ns;
}

void lv_lock_stat_add(struct lv_lock_stat *sum, const struct lv_lock *l)
{
	struct lv_lock_stat s = {
		.acquired = READ_ONCE(l->acquired),
		.contended = READ_ONCE(l->contended),
		.wait_total_ns = READ_ONCE(l->wait_total),
		.wait_max_ns = READ_ONCE(l->wait_max),
		.wait_min_ns = READ_ONCE(l->wait_min),
	};

	lv_lock_stat_merge(sum, &s);
}

void lv_lock_stat_clear(struct lv_lock *l)
{
	WRITE_ONCE(l->acquired, 0);
	WRITE_ONCE(l->contended, 0);
	WRITE_ONCE(l->wait_total, 0);
	WRITE_ONCE(l->wait_max, 0);
	WRITE_ONCE(l->wait_min, 0);
}
