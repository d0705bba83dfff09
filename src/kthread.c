// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Per-node daemons: the request protocol and the thread lifecycle that kswapd (vmscan.c) and
 * kcompactd (compaction.c) share.
 *
 * Theory of operation.
 *
 * A node daemon is one thread per node that sleeps on its condition variable until it is asked
 * for a pass. Allocators ask from their fast path (kswapd at every take below the low
 * watermark, kcompactd at every failed allocation of order > 0), so asking is lock-free while
 * the daemon is awake or asked already, and takes the daemon's mutex only to signal a sleeper.
 *
 * Two atomic flags carry the request. wake is the request itself: an asker sets it with an
 * xchg (node_daemon_wake()), the daemon clears it with an xchg at the start of a pass
 * (node_daemon_begin()). busy says that a pass runs: the daemon sets it before it consumes
 * wake and clears it with a seq_cst store when the pass ends (node_daemon_end()), before it
 * reads wake again under its mutex (node_daemon_requested()). The two form a Dekker pair: an
 * asker that sees busy set leaves its request for the end of the running pass, which then runs
 * another, and no request is lost (tests/models/kswapd_wake.pml; node_daemon_wake() says why).
 *
 * The owner decides the rest: what a pass does, what the asker publishes before its request
 * (kcompactd's order), and how the thread sleeps (kswapd until asked or stopped; kcompactd
 * also until its proactive timer fires, and not while a quiesce holds it off). The owner's
 * thread takes the mutex, waits, calls node_daemon_begin() under it, unlocks, runs the pass and
 * calls node_daemon_end().
 *
 * Lifecycle: the owner allocates and publishes an array of nr_nodes elements, each embedding a
 * struct node_daemon, and node_daemons_start() starts a thread per node; a node whose thread
 * cannot be created runs without it (its pgdat is NULL, and requests to it are dropped).
 * node_daemons_stop() sets stop under each mutex, signals, joins and frees the array.
 *
 * Lock order: nothing else is locked under a daemon's mutex, and no pass holds it, so a thread
 * may wake a daemon whatever locks it holds.
 */
#include "internal.h"

#include <pthread.h>

/**
 * node_daemon_wake - ask @d for a pass, after the caller changed what the pass looks at (took
 * pages, raised an order). Lock-free if the daemon is awake or asked already.
 *
 * No request is lost (tests/models/kswapd_wake.pml). Our request is the store of wake, made
 * with an xchg before busy is read; at the end of a pass the daemon clears busy with a seq_cst
 * store before it reads wake under its mutex. Of the two reads one sees the other side's
 * store: we see busy clear and signal under the mutex, or the daemon sees the request and runs
 * another pass. The pass that consumes a request sees what was done before it: the daemon
 * clears wake with an xchg at the start of a pass and then fences (node_daemon_begin()). A
 * caller whose xchg set wake is read by that xchg (every write to wake is an RMW, so it reads
 * from a release sequence holding every request). A caller that returned on finding wake set
 * made no write; its fence and the daemon's are then ordered, ours first (else our look would
 * have seen the daemon's clear), so the daemon's later reads (kswapd's of free memory) see the
 * caller's writes. The daemon's fence after the xchg is needed for that: without it, on arm64,
 * the free count's load could pass the xchg's store. A caller that found busy set must still
 * leave its request: returning without one would let an allocation just after a pass's last
 * look at free memory leave kswapd asleep below the low mark (the model's BUG_LOST_WAKEUP).
 * Context: any; takes @d's mutex only when the daemon is asleep.
 */
void node_daemon_wake(struct node_daemon *d)
{
	smp_mb(); /* the caller's writes before our look at wake */
	if (!d->pgdat || __atomic_load_n(&d->wake, __ATOMIC_RELAXED))
		return; /* asked already: only the first request of a pass writes the line */
	if (__atomic_exchange_n(&d->wake, 1, __ATOMIC_SEQ_CST) ||
	    __atomic_load_n(&d->busy, __ATOMIC_SEQ_CST))
		return; /* a running pass sees the request when it ends */
	pthread_mutex_lock(&d->lock);
	pthread_cond_signal(&d->wait);
	pthread_mutex_unlock(&d->lock);
}

/**
 * node_daemon_requested - whether a request waits for @d's next pass.
 * The load is seq_cst: it is the daemon's half of the Dekker pair with node_daemon_wake(),
 * ordered after node_daemon_end()'s clear of busy.
 * Context: @d's thread, with @d's mutex held.
 */
bool node_daemon_requested(struct node_daemon *d)
{
	return __atomic_load_n(&d->wake, __ATOMIC_SEQ_CST);
}

/**
 * node_daemon_begin - start a pass of @d: mark it busy, then consume its request.
 *
 * Consuming the request first means that a request made while the pass runs asks for another
 * (wake is set again after our xchg). busy is set before wake is cleared (the xchg is a
 * release), so a reader that loads wake and then busy with acquire loads never sees both clear
 * while a pass starts (kswapd_quiesce()). The fence after the xchg pairs with
 * node_daemon_wake()'s: see there.
 * Return: whether a request was pending (kcompactd also starts passes of its own).
 * Context: @d's thread, with @d's mutex held.
 */
bool node_daemon_begin(struct node_daemon *d)
{
	bool woken;

	__atomic_store_n(&d->busy, 1, __ATOMIC_RELAXED);
	woken = __atomic_exchange_n(&d->wake, 0, __ATOMIC_SEQ_CST);
	smp_mb();
	return woken;
}

/**
 * node_daemon_end - end a pass of @d. The seq_cst store of busy is the daemon's store of the
 * Dekker pair: from here an asker signals, and the daemon looks at wake before it sleeps.
 * Context: @d's thread, without @d's mutex (it takes it next to look for a request).
 */
void node_daemon_end(struct node_daemon *d)
{
	__atomic_store_n(&d->busy, 0, __ATOMIC_SEQ_CST);
}

static struct node_daemon *node_daemon_of(void *daemons, size_t size, size_t offset,
					  unsigned int nid)
{
	return (struct node_daemon *)((char *)daemons + nid * size + offset);
}

/**
 * node_daemons_start - start a thread running @fn for each node's daemon in @daemons, an
 * array of cfg.nr_nodes elements of @size bytes with their struct node_daemon at @offset,
 * zeroed and published (m->kswapd, m->kcompactd) by the caller. @fn gets the node's struct
 * node_daemon. Each thread is named @name and its node (kswapd0, as the kernel's), so that
 * perf and top tell them apart. A node whose thread cannot be created runs without the daemon: its
 * pgdat is NULL, so its requests are dropped and node_daemons_stop() passes it over. Return: 0;
 * -ENOMEM if @daemons is NULL (the caller's allocation failed). Context: machine creation, before
 * any other thread uses @m; may block.
 */
int node_daemons_start(struct lv_machine *m, void *daemons, size_t size, size_t offset,
		       void *(*fn)(void *), const char *name)
{
	if (!daemons)
		return -ENOMEM;
	for (unsigned int nid = 0; nid < m->cfg.nr_nodes; nid++) {
		struct node_daemon *d = node_daemon_of(daemons, size, offset, nid);

		d->pgdat = m->nodes[nid];
		pthread_mutex_init(&d->lock, NULL);
		pthread_cond_init(&d->wait, NULL);
		if (pthread_create(&d->thread, NULL, fn, d)) {
			/* Run the machine without the missing threads' help. */
			pthread_cond_destroy(&d->wait);
			pthread_mutex_destroy(&d->lock);
			d->pgdat = NULL;
		} else {
			char comm[16];

			snprintf(comm, sizeof(comm), "%s%u", name, nid);
			pthread_setname_np(d->thread, comm); /* only a label: failing is harmless */
		}
	}
	return 0;
}

/**
 * node_daemons_stop - stop and join the threads node_daemons_start() started for @daemons
 * (laid out as there), then free the array. The caller clears its pointer to it. A pass in
 * progress sees stop at its next look (kswapd's balance loop, kcompactd's scanners).
 * Context: machine teardown, nobody left to ask the daemons for a pass; may block. @daemons
 * may be NULL.
 */
void node_daemons_stop(struct lv_machine *m, void *daemons, size_t size, size_t offset)
{
	if (!daemons)
		return;
	for (unsigned int nid = 0; nid < m->cfg.nr_nodes; nid++) {
		struct node_daemon *d = node_daemon_of(daemons, size, offset, nid);

		if (!d->pgdat)
			continue;
		pthread_mutex_lock(&d->lock);
		__atomic_store_n(&d->stop, true, __ATOMIC_RELAXED);
		pthread_cond_signal(&d->wait);
		pthread_mutex_unlock(&d->lock);
		pthread_join(d->thread, NULL);
		pthread_cond_destroy(&d->wait);
		pthread_mutex_destroy(&d->lock);
	}
	free(daemons);
}
