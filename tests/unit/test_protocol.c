// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The two lock protocols of cfg.protocol, by construction: folio_lruvec_lock_hook stops a
 * lookup between its read of the folio's binding and its lock, and there the test removes the
 * folio's memcg, which reparents the folio (a final put: the release path, refcount zero,
 * PG_lru set, exactly what the kernel's v1 raced). The real protocol's re-check sends the lock
 * to the parent and counts one retry; LV_PROTOCOL_V1 takes the stale lock, and the debug check
 * lruvec_memcg_debug() aborts at once (in a child of fork()). Without a race, v1 does what the
 * real protocol does, memcg enabled or not. A binding that changes at every attempt makes the
 * retry loop report itself (check C6) instead of spinning for ever.
 */
#include "lvtest_internal.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>

#include "lvtest.h"

static struct lv_folio *target;
static struct lv_memcg *victim, *flip[2];
static int hook_calls;

/* Reparent the target under the lookup: its memcg goes while the lookup holds no lock. */
static void remove_under_lookup(struct lv_folio *folio)
{
	if (folio != target)
		return;
	target = NULL; /* the removal locks folios too */
	hook_calls++;
	if (lv_memcg_remove(victim) != 0)
		_exit(12);
}

/* Rebind the target at every attempt: no lookup can ever match (test-only write). */
static void flip_binding(struct lv_folio *folio)
{
	if (folio != target)
		return;
	hook_calls++;
	__atomic_store_n(&folio->objcg, flip[hook_calls & 1]->nodeinfo[0].objcg, __ATOMIC_RELEASE);
}

static struct lv_config config(enum lv_protocol protocol, bool memcg_disabled)
{
	struct lv_config cfg = small_config();

	cfg.protocol = protocol;
	cfg.memcg_disabled = memcg_disabled;
	cfg.no_kcompactd = true;
	return cfg;
}

/* on_lru - a folio of @memcg on the inactive file list, with the caller's reference. */
static struct lv_folio *on_lru(struct lv_machine *m, struct lv_memcg *memcg)
{
	struct lv_folio *f = alloc_or_bail(m, 0, 0, memcg, 0);

	if (lv_folio_add_lru(f))
		BAIL_OUT("lv_folio_add_lru");
	lv_lru_add_drain_all(m);
	return f;
}

/* race_scene - a final put whose lookup is overtaken by the removal of the folio's memcg. */
static struct lv_machine *race_scene(enum lv_protocol protocol)
{
	struct lv_config cfg = config(protocol, false);
	struct lv_machine *m = new_machine(&cfg);

	victim = lv_memcg_create(m, NULL, "victim");
	if (!victim)
		BAIL_OUT("lv_memcg_create");
	target = on_lru(m, victim);
	hook_calls = 0;
	folio_lruvec_lock_hook = remove_under_lookup;
	lv_folio_put(target);
	folio_lruvec_lock_hook = NULL;
	return m;
}

static void child_v1_race(void)
{
	race_scene(LV_PROTOCOL_V1);
	printf("v1 put returned\n");
	fflush(stdout);
}

static void child_flip(void)
{
	struct lv_config cfg = config(LV_PROTOCOL_PIN, false);
	struct lv_machine *m = new_machine(&cfg);

	flip[0] = lv_memcg_create(m, NULL, "a");
	flip[1] = lv_memcg_create(m, NULL, "b");
	target = on_lru(m, flip[0]);
	hook_calls = 0;
	folio_lruvec_lock_hook = flip_binding;
	lv_folio_activate(target);
	lv_lru_add_drain(m);
	printf("flip returned after %d lookups\n", hook_calls);
	fflush(stdout);
}

/* in_child - @fn in a child (run_in_child()); the status is shown unless it was an abort. */
static void in_child(void (*fn)(void), struct child_run *o)
{
	run_in_child(fn, o);
	if (!WIFSIGNALED(o->status) || WTERMSIG(o->status) != SIGABRT)
		diag("child status %#x, output: %s", o->status, o->out);
}

/* life - a folio's whole life without a race: both protocols, memcg enabled or disabled. */
static void life(enum lv_protocol protocol, bool memcg_disabled, const char *what)
{
	struct lv_config cfg = config(protocol, memcg_disabled);
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *a = memcg_disabled ? NULL : new_memcg(m, NULL, "a");
	struct lv_memcg *b = memcg_disabled ? NULL : new_memcg(m, NULL, "b");
	struct lv_folio *f = on_lru(m, a);
	struct lv_folio *g = on_lru(m, b);

	lv_folio_activate(f);
	lv_folio_mark_accessed(g);
	lv_lru_add_drain_all(m);
	is(lv_folio_isolate_lru(f), 0, "%s: isolated", what);
	is(lv_folio_putback_lru(f), 0, "%s: put back", what);
	if (!memcg_disabled) {
		is(lv_folio_move_memcg(g, a), 0, "%s: charge moved", what);
		lv_folio_put(f);
		is(lv_memcg_remove(b), 0, "%s: emptied memcg removed", what);
		lv_folio_put(g);
		is(lv_memcg_remove(a), 0, "%s: memcg removed", what);
	} else {
		lv_folio_put(f);
		lv_folio_put(g);
	}
	is(nstat(m, LV_LOCK_RETRIES), 0, "%s: no lookup had to be retried", what);
	finish(m, what);
}

static struct child_run o;

int main(void)
{
	struct lv_machine *m;

	plan(41);

	m = race_scene(LV_PROTOCOL_PIN);
	is(hook_calls, 1, "pin: the removal ran between the final put's lookup and lock");
	is(nstat(m, LV_LOCK_RETRIES), 1, "pin: the re-check saw the new binding and retried once");
	is(nstat(m, LV_NR_INACTIVE_FILE), 0, "pin: the folio was unlinked from the parent's list");
	finish(m, "pin, removal under the lookup");

	in_child(child_v1_race, &o);
	ok(WIFSIGNALED(o.status) && WTERMSIG(o.status) == SIGABRT,
	   "v1: the same race aborts the debug build");
	ok(strstr(o.out, "lruvec: BUG at src/memcontrol.c") &&
		   strstr(o.out, "folio_matches_lruvec(folio, lruvec)"),
	   "... in lruvec_memcg_debug(): the lock taken is not the folio's lruvec's");
	ok(!strstr(o.out, "v1 put returned"), "... before the put went on with the wrong lock");

	in_child(child_flip, &o);
	ok(WIFSIGNALED(o.status) && WTERMSIG(o.status) == SIGABRT,
	   "a binding that changes at every attempt: the retry loop reports itself");
	ok(strstr(o.out, "src/memcontrol.c") && strstr(o.out, "++retries =="),
	   "... as the liveness check (C6)");

	life(LV_PROTOCOL_PIN, false, "pin");
	life(LV_PROTOCOL_V1, false, "v1 without a race");
	life(LV_PROTOCOL_PIN, true, "pin, memcg disabled");
	life(LV_PROTOCOL_V1, true, "v1, memcg disabled");
	return exit_status();
}
