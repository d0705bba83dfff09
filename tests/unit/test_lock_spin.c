// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The adaptive lock backend (lock.c, "Spinning"), each path made by construction: the test
 * holds the lock, a thread asks for it, and the test lets go only once the lock's state says
 * the thread spins (@spinner) or sleeps (futex state 2). A spin that takes the lock grows the
 * budget; a spin that ends in a sleep halves it, down to 0; at 0 the contentions are counted
 * and the next after SPIN_PROBE_EVERY of them spins again; a second contender sleeps while one
 * spins; the statistics count every contention whichever way it waited.
 */
#include "internal.h"

#include "lvtest.h"

#include <pthread.h>
#include <sched.h>

static struct lv_lock lock ____cacheline_aligned;

static void *take_and_release(void *arg)
{
	(void)arg;
	lv_lock_acquire(&lock);
	lv_lock_release(&lock);
	return NULL;
}

static uint32_t futex_state(void)
{
	return __atomic_load_n(&lock.futex, __ATOMIC_RELAXED);
}

static bool spinning(void)
{
	return __atomic_load_n(&lock.spinner, __ATOMIC_RELAXED) != 0;
}

/*
 * contend - hold the lock while @n threads ask for it, and let go once @ready() says they are
 * where the test wants them; a bound of 10 s turns a wrong path into a failure, not a hang.
 */
static bool contend(int n, bool (*ready)(void))
{
	pthread_t t[2];
	uint64_t end;
	bool seen = false;

	lv_lock_acquire(&lock);
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, take_and_release, NULL))
			BAIL_OUT("pthread_create failed");
	end = now_ns() + 10ull * 1000000000u;
	while (!(seen = ready()) && now_ns() < end)
		sched_yield();
	lv_lock_release(&lock);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return seen;
}

static bool sleeping(void)
{
	return futex_state() == 2;
}

static bool spinning_and_sleeping(void)
{
	return spinning() && sleeping();
}

static void reset(uint32_t spin_ns)
{
	lv_lock_destroy(&lock);
	lv_lock_init(&lock, LV_BACKEND_ADAPTIVE, LV_LOCK_CLASS_LRUVEC, NULL);
	lock.spin_ns = spin_ns;
}

static void test_spin_takes_it(void)
{
	/* A budget of seconds: the spinner is still spinning whenever the test lets go. */
	reset(UINT32_MAX / 2);
	ok(contend(1, spinning), "a contender with a budget spins");
	is(lock.contended, 1, "the spin is a contention");
	is(lock.spin_ns, SPIN_NS_MAX, "a spin that took the lock grows the budget, to the bound");
	is(futex_state(), 0, "released, nobody marked as sleeping");
	ok(!spinning(), "the spinner let go of the spin flag");
}

static void test_sleep_shrinks(void)
{
	/* The test lets go only once the contender sleeps, so its spin of 2 µs failed. */
	reset(2 * SPIN_NS_MIN);
	ok(contend(1, sleeping), "a hold longer than the spin: it ends in a sleep");
	is(lock.spin_ns, SPIN_NS_MIN, "a spin that ended in a sleep halves the budget");
	ok(contend(1, sleeping), "again");
	is(lock.spin_ns, 0, "below SPIN_NS_MIN the budget is 0");
	is(lock.spin_probe, 0, "the spins reset the probe count");
	is(lock.contended, 2, "both waits counted");
}

static void test_probe(void)
{
	reset(0);
	for (unsigned int i = 0; i < SPIN_PROBE_EVERY; i++)
		if (!contend(1, sleeping))
			break;
	is(lock.spin_probe, SPIN_PROBE_EVERY, "with no budget, every contention sleeps at once");
	/* Only a spin resets the count: the probe's spin shows as the count going back to 0. */
	ok(contend(1, sleeping), "the next contention probes, then sleeps");
	is(lock.spin_probe, 0, "the probe spun: the count starts again");
	is(lock.spin_ns, 0, "a probe that ended in a sleep leaves no budget");
	ok(contend(1, sleeping), "and the one after sleeps at once");
	is(lock.spin_probe, 1, "counted towards the next probe");
	is(lock.contended, SPIN_PROBE_EVERY + 2, "every contention counted");
}

static void test_one_spinner(void)
{
	reset(UINT32_MAX / 2);
	ok(contend(2, spinning_and_sleeping), "of two contenders, one spins and one sleeps");
	is(lock.contended, 2, "both counted");
	is(futex_state(), 0, "released");
}

int main(void)
{
	test_spin_takes_it();
	test_sleep_shrinks();
	test_probe();
	test_one_spinner();
	lv_lock_destroy(&lock);
	return done_testing();
}
