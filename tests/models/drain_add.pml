/*
 * drain_add.pml -- per-CPU lru_add batches versus lv_lru_cache_disable() and
 * lv_lru_add_drain_all(): no folio is lost or left hidden in a batch.
 *
 * WHAT IS MODELLED
 *   NSLOT per-CPU slots (src/cpu.c: PREEMPT_RT's local_lock model), each
 *   with a slot lock and an lru_add batch of capacity CAP.  Folios are
 *   identified by small numbers; onlru[f] says folio f has been moved onto
 *   an LRU list (the lruvec lock and lists are abstracted away:
 *   lruvec_lock.pml covers them).  Processes:
 *     adder      the add path (kernel folio_add_lru()): pick ANY slot
 *                (the thread may migrate between sched_getcpu() and taking
 *                the slot lock), take the slot lock, append the folio, flush the batch
 *                (folio_batch_move_lru(fbatch, lru_add)) if the cache is
 *                disabled (disable_count != 0) or the batch is full, unlock.
 *     disabler   lv_lru_cache_disable() in "sweep" mode: publish
 *                disable_count++, then for every slot: slot lock, flush,
 *                slot unlock.  In userspace the slot lock replaces the
 *                kernel's synchronize_rcu_expedited(): an adder that read
 *                disable_count == 0 did so inside its slot critical
 *                section, and the sweep of that slot waits for it.
 *     drainer x2 adds its own folio, then lv_lru_add_drain_all() with the
 *                kernel's generation protocol (docs/protocol.md §5.4):
 *                  (A) smp_mb()                 -- implicit, see below
 *                  (B) this_gen = gen
 *                      lock drain mutex
 *                  (C) if this_gen != gen: a drain that started after our
 *                      (B) covers our folio -> skip
 *                  (D) gen++ (then smp_mb())
 *                      for every slot that needs a drain (racy peek of the
 *                      batch count): slot lock, flush, slot unlock
 *                      unlock drain mutex
 *     scoper     (with -DSCOPE, which leaves out the plain adder to keep the
 *                search small) adds its own folio, then reclaim's scoped drain
 *                (lru_add_drain_scope()): the same protocol on its scope's
 *                own gate (scope_mutex[sc], scope_gen[sc]), and for every
 *                slot whose count it peeks non-zero: slot lock, take the
 *                scope's folios out of the batch, keep the others in order,
 *                put the taken ones on the LRU, then lower the count, slot
 *                unlock.  Scope 0 is folios 1 and 3, scope 1 folio 4; folio
 *                2 is in neither: folio 1, a drainer's, is in scope 0, so a
 *                drain_all() may meet the scoped drain moving it.
 *                -DTWO_SCOPES adds a second scoper, of scope 1, with
 *                batches of 3, and leaves out drainer 1 and the disabler:
 *                two scoped drains compacting one batch beside a drain_all().
 *                With -DSAME_SCOPE too, the second scoper drains scope 0 (its
 *                folio is 1): two drains of one scope, coalescing at (C).
 *   Promela interleaves statements under sequential consistency, so the
 *   smp_mb() of (A) and (D) are implicit; the model checks the protocol
 *   logic (ordering of steps, coalescing), not the C11/LKMM barriers.
 *
 * WHAT THE ASSERTIONS MEAN (I5: docs/protocol.md §9.2; hazard 10: §9.1)
 *   adder (under the slot lock)  once the disabler has finished, a batch
 *                    is empty whenever its slot lock is released (I5: adds
 *                    flush immediately while the cache is disabled).
 *   disabler (on return)  every add that completed (released its slot
 *                    lock) before lv_lru_cache_disable() returned has its
 *                    folio on the LRU, and no unlocked slot holds folios.
 *   drainer (on return)   its own folio, added before the call, is on the
 *                    LRU -- coalescing through the generation counter never
 *                    loses a caller's folio, and a scoped drain moving it
 *                    never hides it from the peek.
 *   scoper (on return)    its own folio is on the LRU.
 *   init (end state)      no folio is lost (each added folio is on the LRU
 *                    or in exactly one batch) and, since the cache was
 *                    disabled and never re-enabled, all are on the LRU.
 *   pan also reports deadlocks (invalid end states).
 *
 * PER-LRUVEC BATCHES (-DPER_LRUVEC; cfg.batch_policy LV_BATCH_PER_LRUVEC)
 *   Each slot has NB = 2 batches, each keyed by the lruvec of its folios
 *   (folio f belongs to lruvec f % 2).  An add goes to the batch keyed by
 *   its folio's lruvec, or else to either batch (an empty one, or the least
 *   recently used, which is flushed first: the model lets it be either) and
 *   keys it.  Every flush of a slot -- the disabler's sweep, drain_all()'s,
 *   the scoped drain's -- visits both of its batches, and the racy peek
 *   looks at both counts.  The same assertions must hold.  The plain adder
 *   is left out to keep the search small (the drainers' folios, of lruvecs
 *   1 and 0, are the adds).  With -DTWO_SCOPES too it checks the scoped
 *   drains on both batches (about 20 s, so not in run-models.sh's list).
 *   BUG_FORGET_BATCH  (with PER_LRUVEC) a flush of a slot forgets its second
 *                   batch: a folio queued there stays hidden.
 *                   drain_add_lruvec_bug.pml is this file with both defined.
 *
 * SEEDED BUGS (spin -DNAME -a drain_add.pml; all must FAIL)
 *   BUG_LATE_INC    the disabler increments disable_count AFTER its sweep:
 *                   an add that slips in behind the sweep stays in its
 *                   batch.  drain_add_bug.pml is this file with it defined.
 *   BUG_GEN_LATE    lv_lru_add_drain_all() bumps gen after its sweep
 *                   instead of before it (step D moved): a caller that
 *                   samples gen after the sweep passed its slot skips at (C)
 *                   and returns with its folio still batched.
 *   BUG_EARLY_SAMPLE  a drainer samples gen (B) before its own add is
 *                   complete -- under sequential consistency this is what a
 *                   missing smp_mb() at (A) allows: a concurrent drain sweeps
 *                   before our add, bumps gen, and we skip at (C).
 *   BUG_RACY_SWEEP  lv_lru_cache_disable() flushes without taking the slot
 *                   lock: an append racing with the flush is lost.
 *   BUG_SCOPE_COUNT_EARLY  (with SCOPE) the scoped drain lowers the batch
 *                   count before the folios it took out are on the LRU: a
 *                   drain_all() peeks the slot empty meanwhile and returns
 *                   with the drainer's folio in transit.
 *   BUG_SHARED_GATE  (with TWO_SCOPES) every scope's drains share one gate:
 *                   a sweep of scope 0 "covers" a drain of scope 1 at (C)
 *                   and that drain returns with its folio queued.
 *   BUG_SCOPE_GEN_LATE  (with TWO_SCOPES and SAME_SCOPE) a scoped drain
 *                   bumps its gate's gen after its sweep: the other drain of
 *                   the scope, skipping at (C), returns with its folio queued.
 *   BUG_SCOPE_LOOK  (with TWO_SCOPES) a scoped drain decides whether to lock
 *                   a slot by looking for its folios without the slot lock:
 *                   the other scope's drain, compacting the batch, moves our
 *                   folio past the look.
 *
 * MAPPING TO C
 *   slot_lock[s]   the per-slot lock of struct cpu_batch (slot lock)
 *   cnt/batch      the slot's lru_add folio_batch (PER_LRUVEC: its NB
 *                  lruvec_batches, key[] their keys)
 *   flush(s)       folio_batch_move_lru(fbatch, lru_add)
 *   lru_add(f)     the add path (folio_add_lru() ->
 *                  __folio_batch_add_and_move())
 *   disable_count  lru_disable_count; disabler = lv_lru_cache_disable()
 *   gen, drain_mutex, drain_all()  lru_drain_gen, the static mutex and
 *                  lv_lru_add_drain_all()
 *   scope_gen[sc], scope_mutex[sc], scoper  a memcg's (or node's)
 *                  drain_gate and lru_add_drain_scope() (drain_slot_scope())
 */

#ifdef TWO_SCOPES
#define SCOPE
#endif
#define NSLOT 2
#if defined(TWO_SCOPES) && defined(SAME_SCOPE)
#define CAP   3
#define NF    4         /* 2: the drainer; 1, 3: the scopers (folio 0 unused) */
#elif defined(TWO_SCOPES)
#define CAP   3
#define NF    5         /* 2: the drainer; 3, 4: the scopers (folios 0, 1 unused) */
#elif defined(SCOPE)
#define CAP   2
#define NF    4         /* 1, 2: the drainers; 3: the scoper (folio 0 unused) */
#else
#define CAP   2
#define NF    3         /* folio 0: plain adder; 1, 2: the drainers */
#endif
#ifdef PER_LRUVEC
#define NB 2                    /* batches per slot */
#else
#define NB 1
#endif
#ifdef BUG_FORGET_BATCH
#define FLUSHED_NB 1            /* a slot's flush forgets its second batch */
#else
#define FLUSHED_NB NB
#endif
#define NQ         (NSLOT * NB) /* batch q belongs to slot q / NB */
#define LRUVEC(f)  ((f) % 2)
#define SLOT_EMPTY(s) (cnt[(s) * NB] == 0 && cnt[(s) * NB + NB - 1] == 0)
#define IN_SCOPE(sc, f) ((sc) == 0 && ((f) == 1 || (f) == 3) || (sc) == 1 && (f) == 4)

bit  slot_lock[NSLOT];
byte cnt[NQ];
byte batch[NQ * CAP];           /* batch[q * CAP + i] */
byte key[NQ];                   /* PER_LRUVEC: the lruvec batch q holds, if cnt[q] */
bit  onlru[NF];
bit  added[NF];                 /* add completed (slot lock released) */
byte disable_count;
bit  disabled_done;             /* lv_lru_cache_disable() has returned */
byte gen;                       /* lru_drain_gen */
bit  drain_mutex;
byte scope_gen[2];              /* each scope's drain_gate */
bit  scope_mutex[2];
byte mine[2 * CAP];             /* mine[sc * CAP + i]: folios a scoper took out */

inline lock(m)   { atomic { m == 0 -> m = 1 } }
inline unlock(m) { m = 0 }

/* folio_batch_move_lru(fbatch, lru_add) of batch q: the caller holds its slot lock. */
inline flush(q, i)
{
	i = 0;
	do
	:: i < cnt[q] -> onlru[batch[(q) * CAP + i]] = 1; i++
	:: else -> break
	od;
	cnt[q] = 0
}

/* lru_add_drain_slot(): every batch of slot s; the caller holds its lock. */
inline flush_slot(s, b, i)
{
	b = 0;
	do
	:: b < FLUSHED_NB -> flush(s * NB + b, i); b++
	:: else -> break
	od
}

/* the add path: folio_add_lru() -> __folio_batch_add_and_move() */
inline lru_add(f, s, q, i)
{
	if                              /* sched_getcpu(), then maybe migrate */
	:: s = 0
	:: s = 1
	fi;
	lock(slot_lock[s]);
#ifdef PER_LRUVEC
	if                              /* lruvec_batch_get() */
	:: cnt[s * NB] != 0 && key[s * NB] == LRUVEC(f) -> q = s * NB
	:: cnt[s * NB + 1] != 0 && key[s * NB + 1] == LRUVEC(f) -> q = s * NB + 1
	:: else ->
		if
		:: q = s * NB
		:: q = s * NB + 1
		fi;
		if
		:: cnt[q] != 0 -> flush(q, i)   /* the least recently used one */
		:: else -> skip
		fi;
		key[q] = LRUVEC(f)
	fi;
#else
	q = s;
#endif
	batch[q * CAP + cnt[q]] = f;
	cnt[q]++;
	if
	:: disable_count != 0 || cnt[q] == CAP -> flush(q, i)
	:: else -> skip
	fi;
	assert(!disabled_done || SLOT_EMPTY(s));
	atomic { unlock(slot_lock[s]); added[f] = 1 }
}

proctype adder(byte f)
{
	byte s, q, i;

	lru_add(f, s, q, i)
}

/* lv_lru_cache_disable(), sweep mode */
proctype disabler()
{
	byte s, b, i;

#ifndef BUG_LATE_INC
	disable_count++;
#endif
	s = 0;
	do
	:: s < NSLOT ->
#ifndef BUG_RACY_SWEEP
		lock(slot_lock[s]);
		flush_slot(s, b, i);
		unlock(slot_lock[s]);
#else
		flush_slot(s, b, i);    /* no slot lock: races with appends */
#endif
		s++
	:: else -> break
	od;
#ifdef BUG_LATE_INC
	disable_count++;
#endif
	atomic {
		disabled_done = 1;
		i = 0;
		do
		:: i < NF -> assert(!added[i] || onlru[i]); i++
		:: else -> break
		od;
		s = 0;
		do
		:: s < NSLOT -> assert(slot_lock[s] || SLOT_EMPTY(s)); s++
		:: else -> break
		od
	}
}

/* lv_lru_add_drain_all() */
inline drain_all(this_gen, s, b, i)
{
	/* (A) smp_mb(): implicit under sequential consistency */
#ifndef BUG_EARLY_SAMPLE
	this_gen = gen;                         /* (B) */
#endif
	lock(drain_mutex);
	if
	:: this_gen != gen -> skip              /* (C) covered by a newer drain */
	:: else ->
#ifndef BUG_GEN_LATE
		gen++;                          /* (D) */
#endif
		s = 0;
		do
		:: s < NSLOT ->
			if
			:: !SLOT_EMPTY(s) ->    /* cpu_needs_drain(): racy peek */
				lock(slot_lock[s]);
				flush_slot(s, b, i);
				unlock(slot_lock[s])
			:: else -> skip
			fi;
			s++
		:: else -> break
		od;
#ifdef BUG_GEN_LATE
		gen++;
#endif
	fi;
	unlock(drain_mutex)
}

proctype drainer(byte f)
{
	byte s, q, b, i, this_gen;

#ifdef BUG_EARLY_SAMPLE
	this_gen = gen;                 /* (B) hoisted above our own add */
#endif
	lru_add(f, s, q, i);
	drain_all(this_gen, s, b, i);
	assert(onlru[f])                /* our own folio is not left behind */
}

#ifdef SCOPE
/* drain_slot_scope() on batch q: the caller holds its slot lock */
inline scope_flush(sc, q, i, k, m)
{
	k = 0;
	m = 0;
	i = 0;
	do
	:: i < cnt[q] ->
		if
		:: IN_SCOPE(sc, batch[(q) * CAP + i]) -> mine[sc * CAP + m] = batch[(q) * CAP + i]; m++
		:: else -> batch[(q) * CAP + k] = batch[(q) * CAP + i]; k++
		fi;
		i++
	:: else -> break
	od;
#ifdef BUG_SCOPE_COUNT_EARLY
	cnt[q] = k;
#endif
	i = 0;
	do
	:: i < m -> onlru[mine[sc * CAP + i]] = 1; i++
	:: else -> break
	od;
	cnt[q] = k
}

#ifdef BUG_SHARED_GATE
#define GATE(sc) 0
#else
#define GATE(sc) (sc)
#endif

/* lru_add_drain_scope() of scope @sc */
proctype scoper(byte f; byte sc)
{
	byte s, q, b, i, k, m, this_gen;
	bit found;

	lru_add(f, s, q, i);
	this_gen = scope_gen[GATE(sc)];                 /* (B) */
	lock(scope_mutex[GATE(sc)]);
	if
	:: this_gen != scope_gen[GATE(sc)] -> skip      /* (C) */
	:: else ->
#ifndef BUG_SCOPE_GEN_LATE
		scope_gen[GATE(sc)]++;                  /* (D) */
#endif
		s = 0;
		do
		:: s < NSLOT ->
#ifdef BUG_SCOPE_LOOK
			found = 0;              /* a look without the slot lock */
			q = s * NB;
			do
			:: q < s * NB + NB ->
				i = 0;
				do
				:: i < cnt[q] && !found ->
					found = IN_SCOPE(sc, batch[q * CAP + i]); i++
				:: else -> break
				od;
				q++
			:: else -> break
			od;
#else
			found = !SLOT_EMPTY(s); /* cpu_needs_drain(): racy peek */
#endif
			if
			:: found ->
				lock(slot_lock[s]);
				b = 0;
				do
				:: b < FLUSHED_NB -> scope_flush(sc, s * NB + b, i, k, m); b++
				:: else -> break
				od;
				unlock(slot_lock[s])
			:: else -> skip
			fi;
			s++
		:: else -> break
		od;
#ifdef BUG_SCOPE_GEN_LATE
		scope_gen[GATE(sc)]++
#endif
	fi;
	unlock(scope_mutex[GATE(sc)]);
	assert(onlru[f])
}
#endif

init {
	byte f, s, i, n;

	atomic {
#if !defined(SCOPE) && !defined(PER_LRUVEC)
		run adder(0);           /* with SCOPE the scoper is the plain adder */
#endif
#ifndef TWO_SCOPES
		run drainer(1);
		run disabler();
#endif
		run drainer(2);
#ifdef SCOPE
		run scoper(3, 0);
#endif
#if defined(TWO_SCOPES) && defined(SAME_SCOPE)
		run scoper(1, 0)
#elif defined(TWO_SCOPES)
		run scoper(4, 1)
#endif
	}
	_nr_pr == 1;

#if defined(TWO_SCOPES) && !defined(SAME_SCOPE)
	f = 2;                          /* folios 0 and 1 are never added */
#elif defined(SCOPE) || defined(PER_LRUVEC)
	f = 1;                          /* folio 0 is never added */
#else
	f = 0;
#endif
	do
	:: f < NF ->
		n = 0;
		s = 0;                  /* every batch q */
		do
		:: s < NQ ->
			i = 0;
			do
			:: i < cnt[s] -> n = n + (batch[s * CAP + i] == f); i++
			:: else -> break
			od;
			s++
		:: else -> break
		od;
		assert(onlru[f] || n == 1);     /* no folio lost */
#ifndef TWO_SCOPES
		assert(onlru[f]);               /* cache disabled: none hidden */
#endif
		f++
	:: else -> break
	od
}
