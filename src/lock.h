/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lv_lock: the one lock type of the library, with three run-time backends and lock_stat-style
 * statistics, plus "lockdep-lite" ordering checks in debug builds.
 *
 * Statistics cost nothing on the uncontended path but one counter increment: every lock first
 * tries the lock; only when that fails is the wait timed. All statistics fields are written by
 * the holder while it holds the lock, so they need no atomic read-modify-write; they are
 * stored with relaxed atomic stores so that the statistics readers (which do not take the lock)
 * are data-race free.
 */
#ifndef LV_LOCK_H
#define LV_LOCK_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "lruvec.h"

#define ____cacheline_aligned __attribute__((aligned(64)))
#define likely(x)	      __builtin_expect(!!(x), 1)
#define unlikely(x)	      __builtin_expect(!!(x), 0)

#define READ_ONCE(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define smp_load_acquire(p)	__atomic_load_n((p), __ATOMIC_ACQUIRE)
#define smp_store_release(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#ifdef LV_TSAN
/* gcc refuses fences under ThreadSanitizer; a locked RMW is the same full barrier on x86. */
#define smp_mb()                                                                                   \
	do {                                                                                       \
		int __fence = 0;                                                                   \
		__atomic_fetch_add(&__fence, 0, __ATOMIC_SEQ_CST);                                 \
	} while (0)
#else
#define smp_mb() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#endif

struct lock_site_table;

/*
 * struct lv_lock - a lock and its statistics. Keep it on its own cache line (the users align
 * it): the LKP false-sharing regression of the 5.11 series came from a hot lock sharing a line
 * (docs/protocol.md §8.3).
 */
struct lv_lock {
	union {
		uint32_t futex; /* 0 free, 1 locked, 2 locked with waiters (Drepper's mutex 3) */
		uint32_t spin;	/* 0 free, 1 locked */
		pthread_mutex_t mutex;
	};
	uint8_t backend; /* enum lv_lock_backend: set at init, never changed */
	uint8_t cls;	 /* enum lv_lock_class: set at init, never changed */
	/*
	 * The adaptive backend's spin (lock.c, "Spinning"). @spinner: atomic, 1 while a
	 * contender spins. @spin_probe and @spin_ns: written by the holder only (relaxed
	 * stores), read racily by contenders: how many contentions slept since the last probe
	 * while @spin_ns was 0, and how long a contender spins before it sleeps, in ns.
	 */
	uint8_t spinner;
	uint8_t spin_probe;
	uint32_t spin_ns;
	/* Set at init, never changed: the machine's call-site table, NULL to record no sites. */
	struct lock_site_table *sites;
	/* Statistics: written by the holder only (relaxed stores), read racily. */
	uint64_t acquired;
	uint64_t contended;
	uint64_t wait_total;
	uint64_t wait_max;
	uint64_t wait_min;
#ifdef LV_DEBUG
	int owner; /* tid of the holder, 0 when free: for lockdep_assert_held() */
#endif
};

/* now_ns - CLOCK_MONOTONIC in nanoseconds: lock waits, disable latencies. */
static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* cpu_relax - tell the CPU we are spinning (and let an SMT sibling run). */
static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

/*
 * lv_lock_init - @sites is the machine's call-site table (lock_sites_create()), or NULL: the
 * lock's contentions are then counted in its statistics only.
 */
void lv_lock_init(struct lv_lock *l, enum lv_lock_backend backend, enum lv_lock_class cls,
		  struct lock_site_table *sites);
void lv_lock_destroy(struct lv_lock *l);
/*
 * lv_lock_acquire_at - take @l; a contended acquisition is recorded in the call-site table
 * under @site, a static string naming the kernel function the caller stands for (perf lock
 * contention's "caller"). lv_lock_acquire() names the calling function itself; a wrapper that
 * locks on its callers' behalf takes their name the same way (folio_lruvec_lock() is a macro
 * around folio_lruvec_lock_at()), so that call sites need not name themselves.
 */
void lv_lock_acquire_at(struct lv_lock *l, const char *site);
#define lv_lock_acquire(l) lv_lock_acquire_at((l), __func__)
void lv_lock_release(struct lv_lock *l);
/*
 * lv_lock_acquire_nested - take @l while holding exactly one other lock of its class, the one
 * that orders them (spin_lock_nested): a child's shadow list, then its parent's.
 */
void lv_lock_acquire_nested_at(struct lv_lock *l, const char *site);
#define lv_lock_acquire_nested(l) lv_lock_acquire_nested_at((l), __func__)
/* lv_lock_trylock - take @l if it is free; the caller keeps the lock order (checked). */
bool lv_lock_trylock(struct lv_lock *l);
/* lv_lock_trylock_inverted - the same against the lock order: never waits, so never deadlocks. */
bool lv_lock_trylock_inverted(struct lv_lock *l);

/*
 * lv_lock_is_contended - whether a thread is waiting for @l, as spin_is_contended(): a hint for
 * a long holder (compaction's scanner) to let go. One relaxed load. Only the futex and
 * adaptive backends record waiters (state 2, which may outlast them by one hold); the others
 * answer false.
 */
static inline bool lv_lock_is_contended(const struct lv_lock *l)
{
	return (l->backend == LV_BACKEND_FUTEX || l->backend == LV_BACKEND_ADAPTIVE) &&
	       __atomic_load_n(&l->futex, __ATOMIC_RELAXED) == 2;
}

/*
 * The adaptive backend's bounds (lock.c, "Spinning"), in ns: a spin that fails halves the
 * budget, and one below SPIN_NS_MIN is 0; one that succeeds grows it, up to SPIN_NS_MAX; at 0,
 * every SPIN_PROBE_EVERY-th contention spins for SPIN_NS_PROBE to see whether spinning pays
 * again.
 */
#define SPIN_NS_MIN	 500u
#define SPIN_NS_MAX	 16000u
#define SPIN_NS_PROBE	 800u
#define SPIN_PROBE_EVERY 32u

/* lv_lock_stat_add - add @l's statistics into @sum (racy read). */
void lv_lock_stat_add(struct lv_lock_stat *sum, const struct lv_lock *l);
void lv_lock_stat_merge(struct lv_lock_stat *sum, const struct lv_lock_stat *s);
void lv_lock_stat_clear(struct lv_lock *l);

/*
 * The call-site table (lock.c, "Contention by call site"): one per machine, fixed size,
 * lock-free. lock_sites_read() copies every site with a contention into @out (up to @max),
 * merged by (name, class) and sorted by total wait, most first, and returns how many there
 * are; lock_sites_clear() zeroes the counts.
 */
struct lock_site_table *lock_sites_create(void);
void lock_sites_destroy(struct lock_site_table *t);
size_t lock_sites_read(struct lock_site_table *t, struct lv_lock_site_stat *out, size_t max);
void lock_sites_clear(struct lock_site_table *t);

/*
 * The lock watchdog (lock.c, "Theory of operation"): while armed, every thread records the
 * locks it holds and the one it waits for, each with when and the call stack, and a thread
 * of its own reports any lock held or waited for longer than @bound_ns — its class and
 * address, the holder's thread id and stack, each waiter's — through @report (NULL: to
 * stderr), then ends the process with _exit(LOCK_WATCHDOG_EXIT), so that a deadlocked run
 * still ends and says why. A thread about to take a lock it already holds is reported at
 * once, by itself. Debug builds only; disarmed, each acquisition and release pays a load and
 * a branch.
 */
#define LOCK_WATCHDOG_EXIT 3
/**
 * lock_watchdog_start - arm the watchdog.
 * @bound_ns: the longest hold or wait that is not reported, in nanoseconds (> 0).
 * @report:   called once with the whole report (a NUL-terminated text), by the watchdog
 *            thread or by a thread about to deadlock on itself; it must not take library
 *            locks. NULL writes the report to stderr.
 * Return: 0; -EINVAL (@bound_ns 0), -EBUSY (armed already), -ENOSYS (release build), -ENOMEM
 * (no record for the calling thread), or a negative errno from pthread_create().
 * Context: any thread; takes no library lock. Locks taken before arming are not watched.
 */
int lock_watchdog_start(uint64_t bound_ns, void (*report)(const char *msg));
/**
 * lock_watchdog_stop - disarm the watchdog and join its thread; nothing if it is not armed.
 * Context: any thread but the watchdog's own report function; takes no library lock; may
 * block (the join).
 */
void lock_watchdog_stop(void);

#ifdef LV_DEBUG
/*
 * Lockdep-lite: per-thread counts of held locks per class. The ordering rules (docs/locking.md)
 * are checked before every acquisition; lockdep_assert_held() checks the owner. This is check
 * C1 of docs/protocol.md §9.2.
 */
extern __thread unsigned int lv_held[LV_NR_LOCK_CLASSES];
void lockdep_assert_held(const struct lv_lock *l);
void lockdep_assert_no_lru_lock(void);
/* lockdep_assert_class_not_held - abort if this thread holds a lock of @cls while it does @what. */
void lockdep_assert_class_not_held(enum lv_lock_class cls, const char *what);
#else
static inline void lockdep_assert_held(const struct lv_lock *l)
{
	(void)l;
}
static inline void lockdep_assert_no_lru_lock(void)
{
}
static inline void lockdep_assert_class_not_held(enum lv_lock_class cls, const char *what)
{
	(void)cls;
	(void)what;
}
#endif

#endif /* LV_LOCK_H */
