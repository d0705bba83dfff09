// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The lock watchdog (src/lock.c): a lock held or waited for past the bound is reported with
 * its class and address, the holder's thread id and acquisition stack and each waiter's, and
 * the process ends with LOCK_WATCHDOG_EXIT; a thread about to take a lock it holds is
 * reported at once; nothing under the bound is reported.
 *
 * Every case runs in a child of fork(), since a report ends the process: the child's stdout
 * and stderr go to a pipe, and the parent checks the child's exit status and what it wrote.
 * The scenes are built so that what must be in a report is in place before the watchdog can
 * look: a hold to be reported with its waiter is taken, and the waiter is seen waiting (the
 * futex word says so), while the watchdog is armed with a bound of an hour; then it is
 * re-armed with a short one, which watches the same entries. The child prints the values the
 * parent looks for (thread ids, return addresses inside the functions that took the locks)
 * before the report can start.
 */
#include "internal.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lvtest.h"

#define HOUR_NS (3600ull * 1000000000ull)
#define MS_NS	(1000ull * 1000ull)

static struct lv_lock lock_a, lock_b;
static int ready;

/* A report goes to the child's stdout, as a torture run's would go to its log. */
static void report_stdout(const char *msg)
{
	fputs(msg, stdout);
	fflush(stdout);
}

/*
 * take - take @l from a frame of its own, and say where: the return address is inside the
 * caller, so it must appear in the stack recorded for this acquisition.
 */
static __attribute__((noinline)) uintptr_t take(struct lv_lock *l)
{
	lv_lock_acquire(l);
	__asm__ __volatile__("" ::: "memory"); /* no tail call: keep our frame */
	return (uintptr_t)__builtin_return_address(0);
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts))
		;
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

/* holder - take lock_a, tell the test, keep it for @arg milliseconds. */
static void *holder(void *arg)
{
	uintptr_t where = take(&lock_a);

	say("holder tid=%d at=%#lx\n", gettid(), (unsigned long)where);
	__atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
	sleep_ms((unsigned int)(uintptr_t)arg);
	lv_lock_release(&lock_a);
	return NULL;
}

static void *waiter(void *arg)
{
	uintptr_t where;

	(void)arg;
	say("waiter tid=%d\n", gettid());
	where = take(&lock_a);
	say("waiter got it at=%#lx\n", (unsigned long)where);
	lv_lock_release(&lock_a);
	return NULL;
}

static void wait_ready(void)
{
	while (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
		sleep_ms(1);
	__atomic_store_n(&ready, 0, __ATOMIC_RELAXED);
}

/* wait_waiter - until someone sleeps on lock_a (futex backend: the word is 2). */
static void wait_waiter(void)
{
	while (__atomic_load_n(&lock_a.futex, __ATOMIC_ACQUIRE) != 2)
		sleep_ms(1);
}

static void arm(uint64_t bound)
{
	int err = lock_watchdog_start(bound, report_stdout);

	if (err) {
		say("lock_watchdog_start: %d\n", err);
		_exit(10);
	}
}

/* A lock held past the bound, nobody waiting. */
static void scene_held(void)
{
	pthread_t t;

	arm(200 * MS_NS);
	pthread_create(&t, NULL, holder, (void *)(uintptr_t)60000);
	pthread_join(t, NULL); /* the report ends the process first */
}

/* A hold past the bound with a waiter, both in place before the short bound is armed. */
static void scene_waiter(void)
{
	pthread_t h, w;

	arm(HOUR_NS);
	pthread_create(&h, NULL, holder, (void *)(uintptr_t)60000);
	wait_ready();
	pthread_create(&w, NULL, waiter, NULL);
	wait_waiter();
	lock_watchdog_stop();
	sleep_ms(300); /* the hold is now older than the bound below */
	arm(200 * MS_NS);
	pthread_join(h, NULL);
}

/* A thread takes a lock it holds: reported at once, long before the hour. */
static void scene_self(void)
{
	uintptr_t first, second;

	arm(HOUR_NS);
	first = take(&lock_a);
	say("self tid=%d at=%#lx\n", gettid(), (unsigned long)first);
	second = take(&lock_a);
	say("not reached %#lx\n", (unsigned long)second);
}

/* lockdep-lite catches a second lock of one class; the dump adds the first one's stack. */
static void scene_lockdep(void)
{
	uintptr_t first;

	arm(HOUR_NS);
	first = take(&lock_a);
	say("lockdep tid=%d at=%#lx\n", gettid(), (unsigned long)first);
	take(&lock_b);
}

/*
 * Under the bound: holds and waits far shorter than it; a lock taken and released while the
 * watchdog was stopped and started again; a lock taken before arming and held past the bound
 * (not watched). Nothing is reported, and the child exits 0.
 */
static void scene_quiet(void)
{
	pthread_t h, w;

	arm(2000 * MS_NS);
	for (int round = 0; round < 5; round++) {
		pthread_create(&h, NULL, holder, (void *)(uintptr_t)20);
		wait_ready();
		pthread_create(&w, NULL, waiter, NULL);
		pthread_join(h, NULL);
		pthread_join(w, NULL);
	}
	take(&lock_a);
	lock_watchdog_stop();
	lv_lock_release(&lock_a); /* released while disarmed: its entry goes all the same */
	take(&lock_b);		  /* taken while disarmed: never watched */
	arm(100 * MS_NS);
	sleep_ms(500);
	lv_lock_release(&lock_b);
	lock_watchdog_stop();
	say("quiet\n");
	exit(0);
}

static void (*current_scene)(void);

/* scene_main - the child's side: fresh locks, then the scene. */
static void scene_main(void)
{
	lv_lock_init(&lock_a, LV_BACKEND_FUTEX, LV_LOCK_CLASS_LRUVEC, NULL);
	lv_lock_init(&lock_b, LV_BACKEND_FUTEX, LV_LOCK_CLASS_LRUVEC, NULL);
	current_scene();
}

/* run - @scene in a child (run_in_child()); its output, exit status and run time. */
static void run(void (*scene)(void), struct child_run *o)
{
	current_scene = scene;
	run_in_child(scene_main, o);
}

/* field - the number after "@key" in the child's output, or 0. */
static unsigned long field(const char *out, const char *key)
{
	const char *p = strstr(out, key);

	return p ? strtoul(p + strlen(key), NULL, 0) : 0;
}

static bool has(const char *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool has(const char *out, const char *fmt, ...)
{
	char want[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(want, sizeof(want), fmt, ap);
	va_end(ap);
	return strstr(out, want) != NULL;
}

/* section - the report from its line that starts with @start (NULL if absent). */
static const char *section(const char *out, const char *start)
{
	return strstr(out, start);
}

static bool exited(const struct child_run *o, int code)
{
	return WIFEXITED(o->status) && WEXITSTATUS(o->status) == code;
}

static void show(const struct child_run *o)
{
	diag("child status %#x after %.2f s; its output:", o->status, o->seconds);
	for (const char *p = o->out; *p;) {
		size_t n = strcspn(p, "\n");

		diag("  %.*s", (int)n, p);
		p += n + (p[n] == '\n');
	}
}

static struct child_run o;

int main(void)
{
	const char *rep, *hold, *wait;
	unsigned long tid, at, wtid;

	plan(25);

	/* Bad calls. */
	is(lock_watchdog_start(0, NULL), -EINVAL, "a bound of 0 is refused");
	is(lock_watchdog_start(HOUR_NS, NULL), 0, "armed");
	is(lock_watchdog_start(HOUR_NS, NULL), -EBUSY, "armed twice: -EBUSY");
	lock_watchdog_stop();
	lock_watchdog_stop();
	ok(1, "stopped twice: the second stop does nothing");

	run(scene_held, &o);
	tid = field(o.out, "holder tid=");
	at = field(o.out, "holder tid=") ? field(strstr(o.out, "holder tid="), " at=") : 0;
	rep = section(o.out, "lruvec: lock watchdog:");
	ok(exited(&o, LOCK_WATCHDOG_EXIT), "held past the bound: the process exits %d",
	   LOCK_WATCHDOG_EXIT);
	ok(o.seconds < 10, "within a few scans of the bound (%.2f s)", o.seconds);
	ok(rep && has(rep, "lruvec lock %p held for", (void *)&lock_a),
	   "the report names the lock's class and address, and that it is held");
	ok(rep && tid && has(rep, "holder: thread %lu,", tid), "... the holder's thread id");
	hold = rep ? section(rep, "holder:") : NULL;
	ok(hold && at && has(hold, "%#lx", at), "... and the holder's acquisition stack");
	ok(rep && !section(rep, "waiter:"), "... and no waiter");
	if (!exited(&o, LOCK_WATCHDOG_EXIT) || !hold)
		show(&o);

	run(scene_waiter, &o);
	tid = field(o.out, "holder tid=");
	at = tid ? field(strstr(o.out, "holder tid="), " at=") : 0;
	wtid = field(o.out, "waiter tid=");
	rep = section(o.out, "lruvec: lock watchdog:");
	hold = rep ? section(rep, "holder:") : NULL;
	wait = rep ? section(rep, "waiter:") : NULL;
	ok(exited(&o, LOCK_WATCHDOG_EXIT), "held with a waiter: the process exits %d",
	   LOCK_WATCHDOG_EXIT);
	ok(hold && tid && has(hold, "holder: thread %lu,", tid) && at && has(hold, "%#lx", at),
	   "the holder is named with its stack (recorded under the first arming)");
	ok(wait && wtid && has(wait, "waiter: thread %lu, waiting for", wtid),
	   "the waiter is named, with how long it waits");
	ok(wait && has(wait, "#1 "), "... and its stack");
	ok(rep && has(rep, "thread %lu: waits for lruvec %p", wtid, (void *)&lock_a),
	   "every watched thread's locks are listed");
	if (!wait || getenv("WATCHDOG_SHOW"))
		show(&o);

	run(scene_self, &o);
	tid = field(o.out, "self tid=");
	at = tid ? field(strstr(o.out, "self tid="), " at=") : 0;
	rep = section(o.out, "lruvec: lock watchdog: self-deadlock:");
	ok(exited(&o, LOCK_WATCHDOG_EXIT), "self-deadlock: the process exits %d",
	   LOCK_WATCHDOG_EXIT);
	ok(o.seconds < 10, "at once, not after the hour's bound (%.2f s)", o.seconds);
	ok(rep && has(rep, "thread %lu takes lruvec lock %p, which it holds", tid, (void *)&lock_a),
	   "the report says who takes which lock it holds");
	ok(rep && at && has(rep, "%#lx", at), "... with the stack that took it first");
	ok(rep && section(rep, "and takes it again at:"), "... and the stack taking it again");
	ok(!strstr(o.out, "not reached"), "the second acquisition never returned");
	if (!rep)
		show(&o);

	run(scene_lockdep, &o);
	tid = field(o.out, "lockdep tid=");
	at = tid ? field(strstr(o.out, "lockdep tid="), " at=") : 0;
	rep = section(o.out, "lruvec: lock watchdog: thread");
	ok(WIFSIGNALED(o.status) && WTERMSIG(o.status) == SIGABRT,
	   "two locks of one class: lockdep-lite aborts");
	ok(rep && has(rep, "thread %lu holds:", tid) &&
		   has(rep, "holds lruvec lock %p", (void *)&lock_a) && at && has(rep, "%#lx", at),
	   "... and the watchdog adds the lock held, with its stack");
	if (!rep)
		show(&o);

	run(scene_quiet, &o);
	ok(exited(&o, 0) && strstr(o.out, "quiet\n"), "under the bound: the child ends normally");
	ok(!strstr(o.out, "lock watchdog"), "... with no report");
	if (!exited(&o, 0))
		show(&o);
	return exit_status();
}
