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
 *
 * The lock watchdog (debug builds). A deadlock in a stress run shows as a process that stops
 * making progress and is killed by a timeout with no word of which lock, held by whom, taken
 * where. While the watchdog is armed (lock_watchdog_start()), every thread keeps a record of
 * the locks it holds — the lock, its class, when it was taken and the call stack that took it
 * — and of the lock it waits for, since when and from where. A watchdog thread
 * reads every record a few times per bound; a lock held or waited for longer than the bound is
 * reported with its holder's and its waiters' records, and the process exits with
 * LOCK_WATCHDOG_EXIT: a deadlocked process still ends, and says why. A thread about to wait
 * for a lock it holds itself is reported at once, by that thread, before lockdep-lite would
 * only name the class.
 *
 * Each record is written by its own thread only, and read racily by the watchdog: each entry
 * is a little seqcount-protected block of atomic fields, so a reader either gets one
 * acquisition's values or notices the entry changed under it (it was being rewritten, so it
 * is not stuck). Only acquisitions are recorded while armed; a release always drops its
 * entry, armed or not, so a record lists exactly the recorded locks still held, and a lock
 * taken under one arming is still watched after the watchdog is stopped and started again.
 * Disarmed, the cost is one load and a predictable branch per acquisition (the armed flag)
 * and per release (the thread's count of recorded locks, zero unless it took some while
 * armed); release builds compile the watchdog out. Armed, the call stack is the cost: glibc's
 * backtrace() reads the unwind tables, about a microsecond for a dozen frames, which halved a
 * torture run's operations; where the build keeps frame pointers (checked once at arming),
 * the stack is read by following them instead, within the thread's stack, in a few
 * nanoseconds.
 *
 * Spinning (the adaptive backend). A futex sleep and wakeup costs tens of microseconds on a
 * virtual machine, where an idle CPU halts and is woken by an interrupt, and the holders of the
 * LRU, mapping and zone locks let go within a few: a lone reader and its kswapd on two CPUs
 * spent a fifth of the reader's time asleep on locks the other had already released. The
 * kernel's waiters spin, and its mutexes spin while the owner runs. We cannot see whether the
 * holder runs, so a contender spins for a budget the lock learns: a spin that took the lock
 * grows it (by a quarter, plus twice the wait seen, at most SPIN_NS_MAX), one that ended in a
 * sleep halves it, and below SPIN_NS_MIN it is 0, so that a lock whose holders are preempted
 * (threads outnumbering cores) soon costs no spinning at all; at 0, every SPIN_PROBE_EVERY-th
 * contention spins briefly to learn whether spinning pays again. One contender spins at a time
 * (@spinner), and none while others sleep: a second spinner would wait behind the first, burning
 * a CPU a sleeper's holder may need. The budget is written by the holder only, as the statistics
 * are. Historical note: a fixed 64-iteration spin cost lvbench churn a fifth of its throughput,
 * because its holders are preempted and every contention paid the spin.
 *
 * Contention by call site. `perf lock contention` names, for each contended acquisition, the
 * function that asked for the lock; so does lv_lock_sites(). The site is a static string
 * passed down to lv_lock_acquire_at() — the caller's __func__, or the kernel function it stands
 * for — so the uncontended path pays only for passing one more argument. A contended one, which
 * has just slept or spun, adds its wait to the site's entry in its machine's table: a fixed
 * open-addressing hash keyed by (string pointer, class), whose entries are claimed once with a
 * compare-and-swap and never given back, and whose counters are atomic (several threads record
 * at once, none of them holding anything in common). An entry being claimed is passed over,
 * so one site may own two entries: the reader merges entries by (name, class), the names
 * compared as strings (one name may also come from two translation units). A full table
 * counts in one catch-all entry per class, so the sites' counts always add up to the class's.
 */
#define _GNU_SOURCE
#include "fault.h"
#include "lock.h"

#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

void lv_lock_init(struct lv_lock *l, enum lv_lock_backend backend, enum lv_lock_class cls,
		  struct lock_site_table *sites)
{
	*l = (struct lv_lock){ .backend = (uint8_t)backend, .cls = (uint8_t)cls, .sites = sites };
	if (backend == LV_BACKEND_MUTEX)
		pthread_mutex_init(&l->mutex, NULL);
}

void lv_lock_destroy(struct lv_lock *l)
{
	if (l->backend == LV_BACKEND_MUTEX)
		pthread_mutex_destroy(&l->mutex);
}

/* ---- contention by call site ("Theory of operation" above) ------------------------------- */

#define LOCK_SITES 512 /* a power of two, several times the library's (site, class) pairs */

enum { SITE_FREE, SITE_CLAIMING, SITE_READY };

/*
 * struct lock_site - one (name, class) pair. @name and @cls are written once, by the thread
 * that claims the entry, before its release store of SITE_READY; the counters are atomic.
 */
struct lock_site {
	unsigned int state;			  /* atomic: SITE_FREE, SITE_CLAIMING, SITE_READY */
	unsigned int cls;			  /* constant once ready */
	const char *name;			  /* constant once ready */
	uint64_t contended, wait_total, wait_max; /* atomic */
};

struct lock_site_table {
	struct lock_site site[LOCK_SITES];
	struct lock_site other[LV_NR_LOCK_CLASSES]; /* a full table's overflow: "(other)" */
};

struct lock_site_table *lock_sites_create(void)
{
	struct lock_site_table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	for (int cls = 0; cls < LV_NR_LOCK_CLASSES; cls++)
		t->other[cls] =
			(struct lock_site){ SITE_READY, (unsigned int)cls, "(other)", 0, 0, 0 };
	return t;
}

void lock_sites_destroy(struct lock_site_table *t)
{
	free(t);
}

static struct lock_site *lock_site_find(struct lock_site_table *t, const char *name,
					unsigned int cls)
{
	uint64_t h = ((uint64_t)(uintptr_t)name ^ cls) * 0x9e3779b97f4a7c15ull;
	unsigned int i = (unsigned int)(h >> 40);

	for (unsigned int probe = 0; probe < LOCK_SITES; probe++, i++) {
		struct lock_site *e = &t->site[i % LOCK_SITES];
		unsigned int state = __atomic_load_n(&e->state, __ATOMIC_ACQUIRE);

		if (state == SITE_FREE) {
			if (!__atomic_compare_exchange_n(&e->state, &state, SITE_CLAIMING, false,
							 __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE))
				continue; /* taken meanwhile, maybe by us under another thread */
			e->name = name;
			e->cls = cls;
			__atomic_store_n(&e->state, SITE_READY, __ATOMIC_RELEASE);
			return e;
		}
		if (state == SITE_READY && e->name == name && e->cls == cls)
			return e;
	}
	return &t->other[cls];
}

/* lock_site_record - a wait of @wait ns for a lock of @cls, asked for by @name. */
static __attribute__((noinline)) void lock_site_record(struct lock_site_table *t, const char *name,
						       unsigned int cls, uint64_t wait)
{
	struct lock_site *e = lock_site_find(t, name ? name : "?", cls);
	uint64_t max = __atomic_load_n(&e->wait_max, __ATOMIC_RELAXED);

	__atomic_fetch_add(&e->contended, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&e->wait_total, wait, __ATOMIC_RELAXED);
	while (wait > max && !__atomic_compare_exchange_n(&e->wait_max, &max, wait, true,
							  __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

static int site_cmp_key(const void *a, const void *b)
{
	const struct lv_lock_site_stat *x = a, *y = b;
	int c = strcmp(x->caller, y->caller);

	return c ? c : (int)x->cls - (int)y->cls;
}

static int site_cmp_wait(const void *a, const void *b)
{
	const struct lv_lock_site_stat *x = a, *y = b;

	if (x->wait_total_ns != y->wait_total_ns)
		return x->wait_total_ns < y->wait_total_ns ? 1 : -1;
	if (x->contended != y->contended)
		return x->contended < y->contended ? 1 : -1;
	return site_cmp_key(a, b);
}

static void site_copy(struct lv_lock_site_stat *out, const struct lock_site *e)
{
	*out = (struct lv_lock_site_stat){
		.caller = e->name,
		.cls = (enum lv_lock_class)e->cls,
		.contended = __atomic_load_n(&e->contended, __ATOMIC_RELAXED),
		.wait_total_ns = __atomic_load_n(&e->wait_total, __ATOMIC_RELAXED),
		.wait_max_ns = __atomic_load_n(&e->wait_max, __ATOMIC_RELAXED),
	};
}

size_t lock_sites_read(struct lock_site_table *t, struct lv_lock_site_stat *out, size_t max)
{
	struct lv_lock_site_stat *all = malloc((LOCK_SITES + LV_NR_LOCK_CLASSES) * sizeof(*all));
	size_t n = 0, merged = 0;

	if (!all)
		return 0;
	for (unsigned int i = 0; i < LOCK_SITES + LV_NR_LOCK_CLASSES; i++) {
		const struct lock_site *e =
			i < LOCK_SITES ? &t->site[i] : &t->other[i - LOCK_SITES];

		if (__atomic_load_n(&e->state, __ATOMIC_ACQUIRE) != SITE_READY ||
		    !__atomic_load_n(&e->contended, __ATOMIC_RELAXED))
			continue;
		site_copy(&all[n++], e);
	}
	qsort(all, n, sizeof(*all), site_cmp_key);
	for (size_t i = 0; i < n; i++) {
		struct lv_lock_site_stat *last = merged ? &all[merged - 1] : NULL;

		if (last && !site_cmp_key(last, &all[i])) {
			last->contended += all[i].contended;
			last->wait_total_ns += all[i].wait_total_ns;
			if (all[i].wait_max_ns > last->wait_max_ns)
				last->wait_max_ns = all[i].wait_max_ns;
		} else {
			all[merged++] = all[i];
		}
	}
	qsort(all, merged, sizeof(*all), site_cmp_wait);
	if (out && max)
		memcpy(out, all, (merged < max ? merged : max) * sizeof(*all));
	free(all);
	return merged;
}

/*
 * lock_sites_clear - zero every count. Claimed entries stay claimed: a thread may be about to
 * count in one it found, and an entry given back could be claimed for another site meanwhile.
 */
void lock_sites_clear(struct lock_site_table *t)
{
	for (unsigned int i = 0; i < LOCK_SITES + LV_NR_LOCK_CLASSES; i++) {
		struct lock_site *e = i < LOCK_SITES ? &t->site[i] : &t->other[i - LOCK_SITES];

		__atomic_store_n(&e->contended, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&e->wait_total, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&e->wait_max, 0, __ATOMIC_RELAXED);
	}
}

#ifdef LV_DEBUG
/* ---- the lock watchdog ("Theory of operation" above) ------------------------------------- */

#define WD_FRAMES 16 /* call stack kept per entry */
#define WD_HELD	  16 /* locks one thread can hold at once and have watched */

/*
 * struct wd_entry - a lock one thread holds or waits for. Written by that thread only, with
 * @seq odd while it rewrites the entry; read by others with wd_entry_read().
 */
struct wd_entry {
	unsigned int seq;	    /* atomic: even when the entry is stable */
	const struct lv_lock *lock; /* atomic: NULL when the entry is free */
	int cls;		    /* atomic: the lock's class (the lock is not read to report) */
	uint64_t since;		    /* atomic: when it was taken, or when the wait began */
	int nr_frames;		    /* atomic */
	void *frames[WD_FRAMES];    /* atomic: the call stack that took it or waits for it */
};

/*
 * struct wd_thread - one thread's record. Claimed at the thread's first acquisition while the
 * watchdog is armed, handed back at thread exit (wd_key's destructor) for another thread to
 * claim, never freed: the watchdog may read any record at any time.
 */
struct wd_thread {
	struct wd_thread *next;	       /* constant once on wd_threads */
	int in_use;		       /* atomic: claimed by a live thread */
	int tid;		       /* atomic: the thread that claimed it */
	unsigned int untracked;	       /* atomic: acquisitions not recorded, held[] was full */
	struct wd_entry held[WD_HELD]; /* the owner writes; anyone reads */
	struct wd_entry wait;	       /* the owner writes; anyone reads */
};

static struct wd_thread *wd_threads;	   /* atomic: push only; every record ever claimed */
static __thread struct wd_thread *wd_self; /* this thread's record, or NULL */
static __thread unsigned int wd_nr;	   /* entries of held[] in use: this thread's */
static __thread uintptr_t wd_stack_lo, wd_stack_hi; /* this thread's stack, for wd_stack() */
static bool wd_frame_pointers; /* atomic: set at arming, the walk of wd_stack() can be trusted */
static int wd_armed;	       /* atomic: lock_watchdog_start() .. _stop() */
static uint64_t wd_bound;      /* atomic: set before arming */
static void (*wd_report)(const char *msg); /* atomic: set before arming */
static int wd_reporting;		   /* atomic: a report was begun, the process ends */
static pthread_key_t wd_key;		   /* its destructor hands a record back */
static pthread_once_t wd_key_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t wd_mutex = PTHREAD_MUTEX_INITIALIZER; /* start, stop, the thread's nap */
static pthread_cond_t wd_cond;				     /* wd_mutex: stop wakes the watchdog */
static pthread_t wd_thread;				     /* wd_mutex */
static bool wd_running, wd_stopping;			     /* wd_mutex */

static inline bool wd_is_armed(void)
{
	return __atomic_load_n(&wd_armed, __ATOMIC_RELAXED);
}

/*
 * wd_entry_write - record @l (NULL: free the entry). A reader that sees any new field through
 * its acquire load also sees the odd @seq stored before it, so it cannot take a mix of two
 * acquisitions for one.
 */
static void wd_entry_write(struct wd_entry *e, const struct lv_lock *l, uint64_t since,
			   void *const *frames, int nr)
{
	unsigned int seq = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);

	__atomic_store_n(&e->seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&e->lock, l, __ATOMIC_RELEASE);
	if (l) {
		__atomic_store_n(&e->cls, (int)l->cls, __ATOMIC_RELEASE);
		__atomic_store_n(&e->since, since, __ATOMIC_RELEASE);
		for (int i = 0; i < nr; i++)
			__atomic_store_n(&e->frames[i], frames[i], __ATOMIC_RELEASE);
		__atomic_store_n(&e->nr_frames, nr, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&e->seq, seq + 2, __ATOMIC_RELEASE);
}

/* wd_entry_read - copy @e into @out. Return: false if it changed meanwhile (not stuck, then). */
static bool wd_entry_read(const struct wd_entry *e, struct wd_entry *out)
{
	unsigned int seq = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
	int nr;

	if (seq & 1)
		return false;
	out->lock = __atomic_load_n(&e->lock, __ATOMIC_ACQUIRE);
	out->cls = __atomic_load_n(&e->cls, __ATOMIC_ACQUIRE);
	out->since = __atomic_load_n(&e->since, __ATOMIC_ACQUIRE);
	nr = __atomic_load_n(&e->nr_frames, __ATOMIC_ACQUIRE);
	out->nr_frames = nr < 0 ? 0 : nr > WD_FRAMES ? WD_FRAMES : nr;
	for (int i = 0; i < out->nr_frames; i++)
		out->frames[i] = __atomic_load_n(&e->frames[i], __ATOMIC_ACQUIRE);
	return __atomic_load_n(&e->seq, __ATOMIC_RELAXED) == seq;
}

/* wd_entry_live - a stable copy of @e, if it describes a lock. */
static bool wd_entry_live(const struct wd_entry *e, struct wd_entry *out)
{
	for (int tries = 0; tries < 8; tries++)
		if (wd_entry_read(e, out))
			return out->lock;
	return false;
}

/* wd_record_free - empty @t and hand it back (its thread exits, or does not exist). */
static void wd_record_free(struct wd_thread *t)
{
	for (int i = 0; i < WD_HELD; i++)
		if (__atomic_load_n(&t->held[i].lock, __ATOMIC_RELAXED))
			wd_entry_write(&t->held[i], NULL, 0, NULL, 0);
	wd_entry_write(&t->wait, NULL, 0, NULL, 0);
	__atomic_store_n(&t->tid, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&t->untracked, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&t->in_use, 0, __ATOMIC_RELEASE);
}

/* The thread exits (a thread that exits holding a lock takes the lock's entry with it). */
static void wd_thread_exit(void *arg)
{
	wd_self = NULL;
	wd_nr = 0;
	wd_record_free(arg);
}

/*
 * In a child of fork() only the forking thread exists: the other records describe threads
 * that are not there, and the watchdog thread is not there either (the child arms its own).
 */
static void wd_atfork_child(void)
{
	for (struct wd_thread *t = wd_threads; t; t = t->next)
		if (t != wd_self && t->in_use)
			wd_record_free(t);
	if (wd_self)
		wd_self->tid = gettid();
	pthread_mutex_init(&wd_mutex, NULL);
	wd_running = false;
	wd_stopping = false;
	wd_armed = 0;
	wd_reporting = 0;
}

static void wd_key_create(void)
{
	pthread_condattr_t attr;

	pthread_key_create(&wd_key, wd_thread_exit);
	pthread_atfork(NULL, NULL, wd_atfork_child);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&wd_cond, &attr);
	pthread_condattr_destroy(&attr);
}

/* wd_self_get - this thread's record, claimed on first use. NULL if none can be had. */
static struct wd_thread *wd_self_get(void)
{
	struct wd_thread *t = wd_self;

	if (likely(t))
		return t;
	for (t = __atomic_load_n(&wd_threads, __ATOMIC_ACQUIRE); t; t = t->next) {
		int free_rec = 0;

		if (__atomic_compare_exchange_n(&t->in_use, &free_rec, 1, false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			goto claimed;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL; /* this thread goes unwatched */
	t->in_use = 1;
	t->next = __atomic_load_n(&wd_threads, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&wd_threads, &t->next, t, true, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED))
		;
claimed:
	__atomic_store_n(&t->tid, gettid(), __ATOMIC_RELAXED);
	{
		pthread_attr_t attr;
		void *lo;
		size_t size;

		if (!pthread_getattr_np(pthread_self(), &attr)) {
			if (!pthread_attr_getstack(&attr, &lo, &size)) {
				wd_stack_lo = (uintptr_t)lo;
				wd_stack_hi = (uintptr_t)lo + size;
			}
			pthread_attr_destroy(&attr);
		}
	}
	wd_self = t;
	pthread_setspecific(wd_key, t);
	return t;
}

/*
 * wd_stack - the call stack of our caller's caller (the lock function's caller first), at most
 * WD_FRAMES return addresses; with @walk, by following frame pointers: each frame holds the
 * caller's frame pointer and the return address, and the walk stops at a pointer outside this
 * thread's stack or one that does not go up it (the C library's thread start keeps none).
 */
static __attribute__((noinline)) int wd_stack(void **frames, bool walk)
{
	void *buf[WD_FRAMES + 2];
	int n = 0;

	if (!walk || !wd_stack_hi) {
		n = backtrace(buf, WD_FRAMES + 2) - 2;
		for (int i = 0; i < n; i++)
			frames[i] = buf[i + 2];
		return n > 0 ? n : 0;
	}
	for (uintptr_t *fp = __builtin_frame_address(0), depth = 0; n < WD_FRAMES; depth++) {
		uintptr_t *next;

		if ((uintptr_t)fp < wd_stack_lo || (uintptr_t)(fp + 2) > wd_stack_hi ||
		    ((uintptr_t)fp & 7))
			break;
		if (depth >= 1) /* our own return address is into the watchdog */
			frames[n++] = (void *)fp[1];
		next = (uintptr_t *)fp[0];
		if (next <= fp)
			break;
		fp = next;
	}
	return n;
}

/*
 * wd_probe_fp - whether wd_stack()'s walk agrees with backtrace(): the functions of this file
 * keep frame pointers if the build does (one variant builds the library and the tests).
 */
static __attribute__((noinline)) bool wd_probe_leaf(void)
{
	void *walk[WD_FRAMES], *unwound[WD_FRAMES];
	int n, m;

	n = wd_stack(walk, true);
	m = backtrace(unwound, WD_FRAMES);
	if (n < 2 || m < 3)
		return false;
	/* unwound[0] is in us; the walk, like wd_stack()'s callers, starts in our caller. */
	return walk[0] == unwound[1] && walk[1] == unwound[2];
}

static __attribute__((noinline)) bool wd_probe_mid(void)
{
	bool ok = wd_probe_leaf();

	__asm__ __volatile__("" ::: "memory"); /* a call, not a jump */
	return ok;
}

static __attribute__((noinline)) bool wd_probe_fp(void)
{
	bool ok = wd_probe_mid();

	__asm__ __volatile__("" ::: "memory");
	return ok;
}

/* ---- reports: only the thread that won wd_reporting writes wd_text ---- */

static char wd_text[1 << 16];
static size_t wd_len;

static __attribute__((format(printf, 1, 2))) void wd_printf(const char *fmt, ...)
{
	va_list ap;
	int n;

	if (wd_len >= sizeof(wd_text) - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(wd_text + wd_len, sizeof(wd_text) - wd_len, fmt, ap);
	va_end(ap);
	if (n > 0)
		wd_len += (size_t)n;
	if (wd_len > sizeof(wd_text) - 1)
		wd_len = sizeof(wd_text) - 1; /* truncated */
}

/*
 * wd_print_stack - one frame per line: the address, the symbol if the object exports one, and
 * the object with the offset that `addr2line -f -e OBJECT OFFSET` turns into a function and
 * line (a program's own functions are not exported unless it is linked with -rdynamic).
 */
static void wd_print_stack(void *const *frames, int nr)
{
	for (int i = 0; i < nr; i++) {
		uintptr_t pc = (uintptr_t)frames[i];
		Dl_info info;

		if (!dladdr(frames[i], &info) || !info.dli_fname) {
			wd_printf("      #%-2d %#lx\n", i, (unsigned long)pc);
			continue;
		}
		const char *obj = strrchr(info.dli_fname, '/');

		obj = obj ? obj + 1 : info.dli_fname;
		if (info.dli_sname && info.dli_saddr)
			wd_printf("      #%-2d %#lx %s+%#lx (%s+%#lx)\n", i, (unsigned long)pc,
				  info.dli_sname, (unsigned long)(pc - (uintptr_t)info.dli_saddr),
				  obj, (unsigned long)(pc - (uintptr_t)info.dli_fbase));
		else
			wd_printf("      #%-2d %#lx (%s+%#lx)\n", i, (unsigned long)pc, obj,
				  (unsigned long)(pc - (uintptr_t)info.dli_fbase));
	}
}

static double wd_seconds(uint64_t since, uint64_t now)
{
	return since < now ? (double)(now - since) / 1e9 : 0;
}

static void wd_print_entry(const char *what, const struct wd_entry *e, uint64_t now)
{
	wd_printf("    %s %s lock %p for %.3f s, at:\n", what, lv_lock_class_name(e->cls),
		  (const void *)e->lock, wd_seconds(e->since, now));
	wd_print_stack(e->frames, e->nr_frames);
}

/* wd_print_thread - what @t holds and waits for, each with its stack; @skip is not repeated. */
static void wd_print_thread(struct wd_thread *t, const struct lv_lock *skip, uint64_t now)
{
	struct wd_entry e;
	unsigned int untracked = __atomic_load_n(&t->untracked, __ATOMIC_RELAXED);

	for (int i = 0; i < WD_HELD; i++)
		if (wd_entry_live(&t->held[i], &e) && e.lock != skip)
			wd_print_entry("holds", &e, now);
	if (wd_entry_live(&t->wait, &e) && e.lock != skip)
		wd_print_entry("waits for", &e, now);
	if (untracked)
		wd_printf("    (%u of its acquisitions were not recorded)\n", untracked);
}

/*
 * wd_describe - everything the records say about lock @l: who holds it since when and from
 * where, who waits for it, and what each of them holds besides; then every watched thread's
 * locks, in one line each, for the cycles of a deadlock between several threads.
 */
static void wd_describe(const struct lv_lock *l, uint64_t now)
{
	bool holder = false;
	struct wd_thread *t;
	struct wd_entry e;

	for (t = __atomic_load_n(&wd_threads, __ATOMIC_ACQUIRE); t; t = t->next) {
		int tid = __atomic_load_n(&t->tid, __ATOMIC_RELAXED);

		for (int i = 0; i < WD_HELD; i++) {
			if (!wd_entry_live(&t->held[i], &e) || e.lock != l)
				continue;
			wd_printf("  holder: thread %d, holding it for %.3f s, took it at:\n", tid,
				  wd_seconds(e.since, now));
			wd_print_stack(e.frames, e.nr_frames);
			wd_print_thread(t, l, now);
			holder = true;
		}
	}
	if (!holder)
		wd_printf("  holder: thread %d, which took it before the watchdog was armed, or "
			  "without a record\n",
			  __atomic_load_n(&l->owner, __ATOMIC_RELAXED));
	for (t = __atomic_load_n(&wd_threads, __ATOMIC_ACQUIRE); t; t = t->next) {
		if (!wd_entry_live(&t->wait, &e) || e.lock != l)
			continue;
		wd_printf("  waiter: thread %d, waiting for %.3f s, at:\n",
			  __atomic_load_n(&t->tid, __ATOMIC_RELAXED), wd_seconds(e.since, now));
		wd_print_stack(e.frames, e.nr_frames);
		wd_print_thread(t, l, now);
	}
	wd_printf("  every watched thread's locks:\n");
	for (t = __atomic_load_n(&wd_threads, __ATOMIC_ACQUIRE); t; t = t->next) {
		bool any = false;

		for (int i = 0; i <= WD_HELD; i++) {
			bool waiting = i == WD_HELD;

			if (!wd_entry_live(waiting ? &t->wait : &t->held[i], &e))
				continue;
			if (!any)
				wd_printf("    thread %d:",
					  __atomic_load_n(&t->tid, __ATOMIC_RELAXED));
			wd_printf(" %s %s %p (%.3f s)", waiting ? "waits for" : "holds",
				  lv_lock_class_name(e.cls), (const void *)e.lock,
				  wd_seconds(e.since, now));
			any = true;
		}
		if (any)
			wd_printf("\n");
	}
}

/* wd_begin_report - claim the one report; a thread that loses never returns (the winner ends
 * the process). */
static void wd_begin_report(void)
{
	int zero = 0;

	if (!__atomic_compare_exchange_n(&wd_reporting, &zero, 1, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED))
		for (;;)
			pause();
	wd_len = 0;
	wd_text[0] = '\0';
}

static __attribute__((noreturn)) void wd_end_report(void)
{
	void (*report)(const char *) = __atomic_load_n(&wd_report, __ATOMIC_ACQUIRE);

	if (report) {
		report(wd_text);
	} else {
		for (size_t done = 0; done < wd_len;) {
			ssize_t n = write(STDERR_FILENO, wd_text + done, wd_len - done);

			if (n <= 0)
				break;
			done += (size_t)n;
		}
	}
	_exit(LOCK_WATCHDOG_EXIT);
}

/* wd_self_deadlock - this thread, whose record @t says it holds @l, is about to wait for it. */
static __attribute__((noreturn)) void wd_self_deadlock(struct wd_thread *t, const struct lv_lock *l)
{
	uint64_t now = now_ns();
	void *frames[WD_FRAMES];
	int nr = backtrace(frames, WD_FRAMES);

	wd_begin_report();
	wd_printf("lruvec: lock watchdog: self-deadlock: thread %d takes %s lock %p, which it "
		  "holds\n",
		  __atomic_load_n(&t->tid, __ATOMIC_RELAXED), lv_lock_class_name(l->cls),
		  (const void *)l);
	wd_describe(l, now);
	wd_printf("  and takes it again at:\n");
	wd_print_stack(frames, nr);
	wd_end_report();
}

/* wd_check_self - before @l is taken: a thread that holds it already would wait forever. */
static void wd_check_self(const struct lv_lock *l)
{
	struct wd_thread *t = wd_self;

	if (!wd_nr)
		return;
	for (int i = 0; i < WD_HELD; i++)
		if (__atomic_load_n(&t->held[i].lock, __ATOMIC_RELAXED) == l)
			wd_self_deadlock(t, l);
}

/* wd_acquired - @l is taken: record it with the stack that took it. */
static __attribute__((noinline)) void wd_acquired(const struct lv_lock *l)
{
	struct wd_thread *t = wd_self_get();
	void *frames[WD_FRAMES];

	if (!t)
		return;
	for (int i = 0; i < WD_HELD; i++) {
		if (__atomic_load_n(&t->held[i].lock, __ATOMIC_RELAXED))
			continue;
		wd_entry_write(
			&t->held[i], l, now_ns(), frames,
			wd_stack(frames, __atomic_load_n(&wd_frame_pointers, __ATOMIC_RELAXED)));
		wd_nr++;
		return;
	}
	__atomic_fetch_add(&t->untracked, 1, __ATOMIC_RELAXED);
}

/* wd_released - @l is released by a thread that has recorded locks: drop its entry. */
static void wd_released(const struct lv_lock *l)
{
	struct wd_thread *t = wd_self;

	for (int i = 0; i < WD_HELD; i++) {
		if (__atomic_load_n(&t->held[i].lock, __ATOMIC_RELAXED) == l) {
			wd_entry_write(&t->held[i], NULL, 0, NULL, 0);
			wd_nr--;
			return;
		}
	}
}

/* wd_wait_begin - about to wait for @l since @since. Return: whether it was recorded. */
static __attribute__((noinline)) bool wd_wait_begin(const struct lv_lock *l, uint64_t since)
{
	struct wd_thread *t = wd_self_get();
	void *frames[WD_FRAMES];

	if (!t)
		return false;
	wd_entry_write(&t->wait, l, since, frames,
		       wd_stack(frames, __atomic_load_n(&wd_frame_pointers, __ATOMIC_RELAXED)));
	return true;
}

static void wd_wait_end(void)
{
	wd_entry_write(&wd_self->wait, NULL, 0, NULL, 0);
}

/* wd_fire - @e of a thread's record is past the bound: report it and end the process. */
static __attribute__((noreturn)) void wd_fire(const struct wd_entry *e, bool waited, uint64_t now)
{
	wd_begin_report();
	wd_printf("lruvec: lock watchdog: %s lock %p %s %.3f s, longer than the bound of "
		  "%.3f s\n",
		  lv_lock_class_name(e->cls), (const void *)e->lock,
		  waited ? "waited for" : "held for", wd_seconds(e->since, now),
		  (double)__atomic_load_n(&wd_bound, __ATOMIC_RELAXED) / 1e9);
	wd_describe(e->lock, now);
	wd_end_report();
}

static void wd_scan(void)
{
	uint64_t bound = __atomic_load_n(&wd_bound, __ATOMIC_RELAXED), now = now_ns();
	struct wd_entry e;

	if (!wd_is_armed())
		return;
	for (struct wd_thread *t = __atomic_load_n(&wd_threads, __ATOMIC_ACQUIRE); t; t = t->next) {
		for (int i = 0; i <= WD_HELD; i++) {
			bool waiting = i == WD_HELD;

			if (wd_entry_live(waiting ? &t->wait : &t->held[i], &e) && e.since < now &&
			    now - e.since > bound)
				wd_fire(&e, waiting, now);
		}
	}
}

/* The watchdog thread: a scan every quarter of the bound (at most 100 ms apart). */
static void *wd_main(void *arg)
{
	uint64_t period = __atomic_load_n(&wd_bound, __ATOMIC_RELAXED) / 4;

	(void)arg;
	if (period > 100 * 1000 * 1000)
		period = 100 * 1000 * 1000;
	if (period < 1000 * 1000)
		period = 1000 * 1000;
	pthread_mutex_lock(&wd_mutex);
	while (!wd_stopping) {
		struct timespec ts;
		uint64_t t;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		t = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + period;
		ts.tv_sec = (time_t)(t / 1000000000u);
		ts.tv_nsec = (long)(t % 1000000000u);
		pthread_cond_timedwait(&wd_cond, &wd_mutex, &ts);
		if (wd_stopping)
			break;
		pthread_mutex_unlock(&wd_mutex);
		wd_scan();
		pthread_mutex_lock(&wd_mutex);
	}
	pthread_mutex_unlock(&wd_mutex);
	return NULL;
}

int lock_watchdog_start(uint64_t bound_ns, void (*report)(const char *msg))
{
	void *warm[4];
	int err;

	if (!bound_ns)
		return -EINVAL;
	pthread_once(&wd_key_once, wd_key_create);
	/* The first backtrace() loads the unwinder: here, not in a thread holding a lock. */
	backtrace(warm, 4);
	pthread_mutex_lock(&wd_mutex);
	if (wd_running) {
		pthread_mutex_unlock(&wd_mutex);
		return -EBUSY;
	}
	if (!wd_stack_hi && wd_self_get() == NULL) {
		pthread_mutex_unlock(&wd_mutex);
		return -ENOMEM; /* no record for this thread: it could not probe its stack */
	}
	__atomic_store_n(&wd_frame_pointers, wd_probe_fp(), __ATOMIC_RELAXED);
	__atomic_store_n(&wd_bound, bound_ns, __ATOMIC_RELAXED);
	__atomic_store_n(&wd_report, report, __ATOMIC_RELEASE);
	wd_stopping = false;
	err = pthread_create(&wd_thread, NULL, wd_main, NULL);
	if (err) {
		pthread_mutex_unlock(&wd_mutex);
		return -err;
	}
	wd_running = true;
	__atomic_store_n(&wd_armed, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&wd_mutex);
	return 0;
}

void lock_watchdog_stop(void)
{
	pthread_t thread;

	pthread_mutex_lock(&wd_mutex);
	if (!wd_running) {
		pthread_mutex_unlock(&wd_mutex);
		return;
	}
	__atomic_store_n(&wd_armed, 0, __ATOMIC_RELAXED);
	wd_running = false;
	wd_stopping = true;
	thread = wd_thread;
	pthread_cond_signal(&wd_cond);
	pthread_mutex_unlock(&wd_mutex);
	pthread_join(thread, NULL);
}

/*
 * wd_dump_self - before an abort of lockdep-lite: this thread's watched locks with the stacks
 * that took them, on stderr (lockdep-lite itself names only their classes).
 */
static void wd_dump_self(void)
{
	int zero = 0;

	if (!wd_nr || !__atomic_compare_exchange_n(&wd_reporting, &zero, 1, false, __ATOMIC_ACQ_REL,
						   __ATOMIC_RELAXED))
		return;
	wd_len = 0;
	wd_printf("lruvec: lock watchdog: thread %d holds:\n", wd_self->tid);
	wd_print_thread(wd_self, NULL, now_ns());
	fputs(wd_text, stderr);
}

__thread unsigned int lv_held[LV_NR_LOCK_CLASSES];

/*
 * lockdep_tid - this thread's id for lock ownership, asked of the kernel once per thread:
 * gettid() is a system call, too dear for every acquisition of a debug build (it cost a
 * one-thread fuzzer input more than the library's own work). After fork() the child's thread
 * keeps its parent's id, which still names one thread in the child.
 */
static __thread pid_t lockdep_tid_cached;

static pid_t lockdep_tid(void)
{
	if (!lockdep_tid_cached)
		lockdep_tid_cached = gettid();
	return lockdep_tid_cached;
}

/*
 * Rank of each class in the lock order (docs/locking.md): a lock may only be taken while every
 * held lock has a strictly lower rank. Equal ranks forbid holding two locks of one class, and
 * lruvec and node locks share a rank: never two LRU locks at once.
 */
static const int lock_rank[LV_NR_LOCK_CLASSES] = {
	[LV_LOCK_CLASS_DRAIN] = 0,  [LV_LOCK_CLASS_MM] = 1,	 [LV_LOCK_CLASS_SLOT] = 2,
	[LV_LOCK_CLASS_MEMCG] = 3,  [LV_LOCK_CLASS_MAPPING] = 4, [LV_LOCK_CLASS_SHADOW] = 5,
	[LV_LOCK_CLASS_LRUVEC] = 6, [LV_LOCK_CLASS_NODE] = 6,	 [LV_LOCK_CLASS_PCP] = 7,
	[LV_LOCK_CLASS_ZONE] = 8,   [LV_LOCK_CLASS_SWAP] = 5,	 [LV_LOCK_CLASS_COST] = 9,
};

static __attribute__((noreturn)) void lockdep_bug(const char *what, int cls)
{
	fprintf(stderr, "lruvec: lockdep: %s (acquiring %s while holding:", what,
		lv_lock_class_name(cls));
	for (int c = 0; c < LV_NR_LOCK_CLASSES; c++)
		if (lv_held[c])
			fprintf(stderr, " %s x%u", lv_lock_class_name(c), lv_held[c]);
	fprintf(stderr, ")\n");
	wd_dump_self();
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
	if (__atomic_load_n(&l->owner, __ATOMIC_RELAXED) != lockdep_tid()) {
		fprintf(stderr, "lruvec: lockdep: %s lock %p not held by this thread\n",
			lv_lock_class_name(l->cls), (const void *)l);
		wd_dump_self();
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
		wd_dump_self();
		abort();
	}
}

/*
 * The watchdog's hooks on the lock paths: each costs a load and a branch while the watchdog
 * is disarmed. A wait recorded stays recorded until it ends, even if the watchdog is disarmed
 * meanwhile.
 */
#define watchdog_check_self(l)                                                                     \
	do {                                                                                       \
		if (unlikely(wd_is_armed()))                                                       \
			wd_check_self(l);                                                          \
	} while (0)
#define watchdog_acquired(l)                                                                       \
	do {                                                                                       \
		if (unlikely(wd_is_armed()))                                                       \
			wd_acquired(l);                                                            \
	} while (0)
#define watchdog_released(l)                                                                       \
	do {                                                                                       \
		if (unlikely(wd_nr))                                                               \
			wd_released(l);                                                            \
	} while (0)
#define watchdog_wait_begin(l, t0) (unlikely(wd_is_armed()) && wd_wait_begin((l), (t0)))
#define watchdog_wait_end()	   wd_wait_end()
#else
#define watchdog_check_self(l)	   ((void)(l))
#define watchdog_acquired(l)	   ((void)(l))
#define watchdog_released(l)	   ((void)(l))
#define watchdog_wait_begin(l, t0) ((void)(l), (void)(t0), false)
#define watchdog_wait_end()	   ((void)0)

int lock_watchdog_start(uint64_t bound_ns, void (*report)(const char *msg))
{
	(void)bound_ns;
	(void)report;
	return -ENOSYS;
}

void lock_watchdog_stop(void)
{
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

/* futex_sleep_lock - Drepper's mutex 3 wait: mark the lock "with waiters" and sleep. */
static void futex_sleep_lock(struct lv_lock *l)
{
	while (__atomic_exchange_n(&l->futex, 2, __ATOMIC_ACQUIRE) != 0)
		futex_wait(&l->futex, 2);
}

/* spin_until - spin for @l until @deadline (ns); true if we took it. */
static bool spin_until(struct lv_lock *l, uint64_t deadline)
{
	for (unsigned int i = 1;; i++) {
		uint32_t zero = 0;

		if (__atomic_load_n(&l->futex, __ATOMIC_RELAXED) == 0 &&
		    __atomic_compare_exchange_n(&l->futex, &zero, 1, false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return true;
		if (i % 16 == 0 && now_ns() >= deadline)
			return false;
		cpu_relax();
	}
}

/*
 * adaptive_wait - the adaptive backend's contended acquisition, begun at @t0 ("Spinning"
 * above). Every update of the budget happens once we hold the lock.
 */
static void adaptive_wait(struct lv_lock *l, uint64_t t0)
{
	uint32_t budget = READ_ONCE(l->spin_ns);
	bool probe = !budget && READ_ONCE(l->spin_probe) >= SPIN_PROBE_EVERY;
	uint32_t spin = probe ? SPIN_NS_PROBE : budget;
	bool spun = false;

	if (spin && __atomic_load_n(&l->futex, __ATOMIC_RELAXED) != 2 &&
	    !__atomic_exchange_n(&l->spinner, 1, __ATOMIC_ACQUIRE)) {
		bool got = spin_until(l, t0 + spin);

		__atomic_store_n(&l->spinner, 0, __ATOMIC_RELEASE);
		if (got) {
			uint64_t grown = (uint64_t)spin + spin / 4 + 2 * (now_ns() - t0);

			WRITE_ONCE(l->spin_ns,
				   (uint32_t)(grown < SPIN_NS_MAX ? grown : SPIN_NS_MAX));
			WRITE_ONCE(l->spin_probe, 0);
			return;
		}
		spun = true;
	}
	futex_sleep_lock(l);
	if (spun) {
		spin /= 2;
		WRITE_ONCE(l->spin_ns, spin < SPIN_NS_MIN ? 0 : spin);
		WRITE_ONCE(l->spin_probe, 0);
	} else if (!spin && l->spin_probe < SPIN_PROBE_EVERY) {
		WRITE_ONCE(l->spin_probe, (uint8_t)(l->spin_probe + 1));
	}
}

static void lock_wait(struct lv_lock *l, uint64_t t0)
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
		futex_sleep_lock(l);
		return;
	case LV_BACKEND_ADAPTIVE:
		adaptive_wait(l, t0);
	}
}

static void lock_acquire(struct lv_lock *l, unsigned int nested, const char *site)
{
	watchdog_check_self(l);
#ifdef LV_DEBUG
	lockdep_acquire(l, nested);
#else
	(void)nested;
#endif
	if (likely(lock_try(l))) {
		WRITE_ONCE(l->acquired, l->acquired + 1);
	} else {
		uint64_t t0 = now_ns(), wait;
		bool watched = watchdog_wait_begin(l, t0);

		lock_wait(l, t0);
		if (watched)
			watchdog_wait_end();
		wait = now_ns() - t0;
		WRITE_ONCE(l->acquired, l->acquired + 1);
		WRITE_ONCE(l->contended, l->contended + 1);
		WRITE_ONCE(l->wait_total, l->wait_total + wait);
		if (wait > l->wait_max)
			WRITE_ONCE(l->wait_max, wait);
		if (wait < l->wait_min || l->wait_min == 0)
			WRITE_ONCE(l->wait_min, wait ? wait : 1);
		if (l->sites)
			lock_site_record(l->sites, site, l->cls, wait);
	}
#ifdef LV_DEBUG
	__atomic_store_n(&l->owner, lockdep_tid(), __ATOMIC_RELAXED);
	lv_held[l->cls]++;
#endif
	watchdog_acquired(l);
}

void lv_lock_acquire_at(struct lv_lock *l, const char *site)
{
	lock_acquire(l, 0, site);
}

void lv_lock_acquire_nested_at(struct lv_lock *l, const char *site)
{
	lock_acquire(l, 1, site);
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
	__atomic_store_n(&l->owner, lockdep_tid(), __ATOMIC_RELAXED);
	lv_held[l->cls]++;
#endif
	watchdog_acquired(l);
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
	watchdog_released(l);
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
