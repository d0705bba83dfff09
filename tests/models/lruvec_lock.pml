/*
 * lruvec_lock.pml -- pin + lock + re-check protocol of the per-memcg LRU lock
 * versus charge moving and the final put.
 *
 * WHAT IS MODELLED
 *   Two memcgs (0 and 1) on one node, hence two lruvecs, each with its own
 *   lru_lock.  One folio with
 *     pg_lru    atomic PG_lru flag (the isolation pin, docs/protocol.md §3.2)
 *     refcount  starts at 1 = the owner's reference
 *     memcg     the folio's memcg binding (folio_memcg())
 *     inlist    which lruvec's list the folio is linked on, or NONE
 *     freed     set when the folio has been handed back to the allocator
 *   Processes (one instance each unless NBATCH/NMOVE say otherwise):
 *     batch_mover   folio_batch_move_lru() with the activate move_fn:
 *                   folio_try_get, folio_test_clear_lru (skip if lost),
 *                   folio_lruvec_lock, lruvec_del_folio + lruvec_add_folio,
 *                   folio_set_lru, lruvec_unlock, folio_put.
 *     charge_mover  lv_folio_move_memcg(): folio_try_get, win the pin or give
 *                   up (-EBUSY), folio_lruvec_lock + unlink + lruvec_unlock,
 *                   rebind memcg while holding the OLD lruvec's lock, then
 *                   putback: folio_lruvec_lock + link + folio_set_lru +
 *                   lruvec_unlock, folio_put.
 *     releaser      drops (or, nondeterministically, keeps) the owner's
 *                   reference.  Whoever drops the LAST reference runs the
 *                   release path (__folio_put -> page_cache_release): if
 *                   PG_lru is set, folio_lruvec_lock, unlink, clear PG_lru,
 *                   lruvec_unlock; then free.
 *   folio_lruvec_lock() is the reparenting-series form (docs/protocol.md
 *   §3.4): racy read of memcg, lock that lruvec, re-check memcg, unlock and
 *   retry on mismatch.  Every writer of `memcg` holds the lock of the lruvec
 *   the binding currently points to, which is what makes the re-check sound.
 *
 * WHAT THE ASSERTIONS MEAN (C3, I3, I4: docs/protocol.md §9.2; hazards: §9.1)
 *   list_del/list_add   every list operation is done while holding the lock
 *                       of the lruvec the folio is actually linked on (del)
 *                       or bound to (add), and never on a freed folio.
 *   folio_test_clear_lru  at most one pin winner at any time (C3).
 *   release_folio       a folio is never freed while still linked (I4,
 *                       hazard 2 "reference before pin").
 *   init (end state)    all locks free, no pin outstanding; if freed then
 *                       unlinked with refcount 0; otherwise
 *                       PG_lru <=> linked, and linked on lruvec(memcg) (I3).
 *   pan also reports any deadlock as an invalid end state.
 *
 * SWITCHES (spin -DNAME -a lruvec_lock.pml)
 *   V1BUG       Alex Shi's v1 protocol: the batch mover neither pins
 *               (no folio_test_clear_lru, it only tests PG_lru under the
 *               lock) nor re-checks the binding after locking.  Must FAIL:
 *               the mover locks the old memcg's lruvec while the folio has
 *               been moved to the other one (lookup-then-lock race, hazard 1).
 *               lruvec_lock_v1bug.pml is this file with V1BUG defined.
 *   NO_TRYGET   the charge mover clears PG_lru without holding a reference.
 *               Must FAIL: the final put sees PG_lru clear and frees a folio
 *               that is still linked (hazard 2).
 *   NO_RECHECK  drop only the re-check, keep the pin.  VERIFIES: with charge
 *               moving as the only rebinding path, the pin alone keeps the
 *               binding stable (mainline 5.11..6.12 had no re-check; pan
 *               reports the retry branch of folio_lruvec_lock as unreached).
 *   REPARENT    replace the charge mover by reparenting (memcg 0 = child,
 *               1 = parent; docs/protocol.md §4.15): take the child's then
 *               the parent's lruvec lock, splice the folio if it is linked
 *               on the child, rebind it, unlock.  No pin is involved, so the
 *               re-check is what keeps folio_lruvec_lock correct: REPARENT
 *               verifies, REPARENT + NO_RECHECK must FAIL.
 *   REPARENT_LINKED  reparenting as built (memcontrol.c,
 *               lruvec_reparent_batch): under the child's then the parent's
 *               lock, a folio linked on the child is unlinked, rebound and
 *               linked on the parent, whoever holds its pin; an unlinked
 *               (isolated) folio keeps its binding.  A charge mover runs too
 *               (a move into the dying child fails at its charge in C, before
 *               it isolates, so here its target is always the parent).
 *               VERIFIES (also with 2 batch and 2 charge movers);
 *               + NO_RECHECK must FAIL.  The kernel's REPARENT, which also
 *               rebinds isolated folios, must FAIL beside a charge mover
 *               (-DREPARENT -DNMOVE=1): the mover's binding changes under it,
 *               which is why ours leaves unlinked folios alone.
 *   REPARENT_UNEVICTABLE  the unevictable walk as built (memcontrol.c,
 *               lruvec_reparent_unevictable): the folio is counted on its
 *               lruvec but linked nowhere, so the reparenter cannot see
 *               membership; it reads PG_lru and the binding racily (the
 *               memmap walk), takes both locks and moves the folio only if
 *               PG_lru is still set and it is still bound to the child (set
 *               only under the lock once counted; cleared by a pin owner who
 *               then takes that lock).  `inlist` stands for "counted on".
 *               Implies REPARENT_LINKED's charge mover.  VERIFIES;
 *               + NO_CONFIRM (trust the racy read) must FAIL.
 *
 * MAPPING TO C
 *   spin_lock/lruvec_unlock  the lruvec's lru_lock (owner[] records which
 *                            process holds it so list ops can assert it)
 *   folio_try_get            atomic inc-not-zero of the refcount
 *   folio_test_clear_lru     atomic test-and-clear of PG_lru
 *   folio_set_lru            atomic set of PG_lru (done under the lruvec lock)
 *   folio_lruvec_lock        lookup / lock / re-check / retry
 *   folio_put                atomic dec-and-test, release path on zero
 * Promela's interleaving semantics is sequentially consistent; each atomic
 * block stands for one atomic RMW in C.
 */

#ifdef REPARENT_UNEVICTABLE
#define REPARENT_LINKED
#endif
#ifndef NBATCH
#define NBATCH 1
#endif
#ifndef NMOVE
#ifdef REPARENT
#define NMOVE 0         /* charge moving and the kernel's reparenting never coexisted */
#else
#define NMOVE 1
#endif
#endif

#define NLV  2          /* lruvecs: one per memcg */
#define NONE 2          /* inlist value: not linked anywhere */

byte owner[NLV];        /* 0 = unlocked, else _pid + 1 of the holder */
bit  pg_lru   = 1;      /* folio starts on lruvec 0's list, PG_lru set */
byte refcount = 1;      /* the owner's reference */
byte memcg    = 0;
byte inlist   = 0;
bit  freed    = 0;
byte pins     = 0;      /* current winners of folio_test_clear_lru */

inline spin_lock(lv)
{
	atomic { owner[lv] == 0 -> owner[lv] = _pid + 1 }
}

inline lruvec_unlock(lv)
{
	assert(owner[lv] == _pid + 1);
	owner[lv] = 0
}

/* folio_lruvec_lock(): returns with the lock of lruvec `lv` held. */
inline folio_lruvec_lock(lv)
{
	do
	:: lv = memcg;              /* folio_lruvec(): racy, may be stale */
	   spin_lock(lv);
#if defined(V1BUG) || defined(NO_RECHECK)
	   break                    /* trust the stale lookup */
#else
	   if
	   :: memcg == lv -> break  /* binding frozen while we hold lv */
	   :: else -> lruvec_unlock(lv)   /* moved under us: retry */
	   fi
#endif
	od
}

/* lruvec_del_folio(): must hold the lock of the list it is linked on. */
inline list_del(lv)
{
	assert(!freed);
	assert(owner[lv] == _pid + 1 && inlist == lv);
	inlist = NONE
}

/* lruvec_add_folio(): must hold the lock of lruvec(folio_memcg()). */
inline list_add(lv)
{
	assert(!freed);
	assert(owner[lv] == _pid + 1 && inlist == NONE && memcg == lv);
	inlist = lv
}

inline folio_try_get(ok)
{
	atomic {
		if
		:: refcount > 0 -> refcount++; ok = 1
		:: else -> ok = 0
		fi
	}
}

inline folio_test_clear_lru(won)
{
	atomic {
		if
		:: pg_lru -> pg_lru = 0; pins++; won = 1
		:: else -> won = 0
		fi;
		assert(!won || pins == 1)   /* no two pin winners at once */
	}
}

/* Only the pin winner calls this; it hands the pin back. */
inline folio_set_lru()
{
	atomic {
		assert(!freed && pins == 1 && pg_lru == 0);
		pg_lru = 1;
		pins--
	}
}

/* __folio_put(): refcount is 0, nobody can take a new reference. */
inline release_folio(lv)
{
	if
	:: pg_lru ->
		folio_lruvec_lock(lv);
		list_del(lv);
		pg_lru = 0;             /* __folio_clear_lru_flags() */
		lruvec_unlock(lv)
	:: else -> skip
	fi;
	assert(inlist == NONE);     /* never free a linked folio */
	freed = 1
}

inline folio_put(lv, last)
{
	atomic { assert(refcount > 0); refcount--; last = (refcount == 0) };
	if
	:: last -> release_folio(lv)
	:: else -> skip
	fi
}

/* folio_batch_move_lru(fbatch, lru_activate) for a single folio. */
proctype batch_mover()
{
	byte lv;
	bit ok, won, last;

	folio_try_get(ok);
	if
	:: !ok -> goto done
	:: else -> skip
	fi;
#ifndef V1BUG
	folio_test_clear_lru(won);
	if
	:: !won -> goto put         /* someone else owns the LRU position */
	:: else -> skip
	fi;
	folio_lruvec_lock(lv);
	list_del(lv);               /* lru_activate(): del + add on the */
	list_add(lv);               /* active list of the same lruvec   */
	folio_set_lru();
	lruvec_unlock(lv);
#else
	/* v1: lookup and lock, no pin, no re-check; PG_lru only tested. */
	folio_lruvec_lock(lv);
	if
	:: pg_lru -> list_del(lv); list_add(lv)
	:: else -> skip
	fi;
	lruvec_unlock(lv);
#endif
put:
	folio_put(lv, last);
done:
	skip
}

/* lv_folio_move_memcg(): move the folio's charge to the other memcg. */
proctype charge_mover()
{
	byte lv, old;
	bit ok, won, last;

#ifndef NO_TRYGET
	folio_try_get(ok);
	if
	:: !ok -> goto done          /* being freed */
	:: else -> skip
	fi;
#endif
	folio_test_clear_lru(won);
	if
	:: !won -> goto put          /* -EBUSY: not on the LRU / pinned */
	:: else -> skip
	fi;

	/* isolate */
	folio_lruvec_lock(lv);
	list_del(lv);
	lruvec_unlock(lv);

	/* rebind under the lock of the lruvec the binding points to now */
	old = memcg;                 /* stable: we hold the pin */
	spin_lock(old);
	assert(memcg == old);
#ifdef REPARENT_LINKED
	memcg = 1;                   /* always to the parent (see REPARENT_LINKED) */
#else
	memcg = 1 - old;
#endif
	lruvec_unlock(old);

	/* putback onto the new lruvec */
	folio_lruvec_lock(lv);
	list_add(lv);
	folio_set_lru();
	lruvec_unlock(lv);
put:
#ifndef NO_TRYGET
	folio_put(lv, last);
#endif
done:
	skip
}

#ifdef REPARENT
/*
 * Memcg offline: move everything of child memcg 0 to parent memcg 1 while
 * holding both lruvec locks (child -> parent order).  Pinned (isolated)
 * folios are not linked; only their binding follows the parent.
 */
proctype reparenter()
{
	spin_lock(0);
	spin_lock(1);
	if
	:: memcg == 0 ->
		if
		:: inlist == 0 -> inlist = 1   /* list_splice_tail_init() */
		:: else -> skip
		fi;
		memcg = 1
	:: else -> skip
	fi;
	lruvec_unlock(1);
	lruvec_unlock(0)
}
#endif

#ifdef REPARENT_LINKED
/*
 * lruvec_reparent_batch() for one folio: child memcg 0, parent memcg 1.  No
 * pin and no reference: a linked folio's pin owner or freer locks next and
 * re-checks.
 */
proctype reparenter()
{
#ifdef REPARENT_UNEVICTABLE
	bit cand;

	/* unevictable_of() on the memmap walk: two racy loads, no lock. */
	cand = pg_lru;
	cand = cand && memcg == 0;
	if
	:: !cand -> goto out
	:: else -> skip
	fi;
#endif
	spin_lock(0);
	spin_lock(1);
	if
#if defined(REPARENT_UNEVICTABLE) && defined(NO_CONFIRM)
	:: true ->                   /* trust the candidate */
#elif defined(REPARENT_UNEVICTABLE)
	:: pg_lru && memcg == 0 ->   /* unevictable_of() again, now exact */
#else
	:: inlist == 0 ->
#endif
		list_del(0);
		memcg = 1;                   /* under the old lruvec's lock */
		list_add(1)
	:: else -> skip              /* unlinked: its owner's binding stays */
	fi;
	lruvec_unlock(1);
	lruvec_unlock(0);
#ifdef REPARENT_UNEVICTABLE
out:
	skip
#endif
}
#endif

/* The owner drops its reference (or keeps it: then the folio survives). */
proctype releaser()
{
	byte lv;
	bit last;

	if
	:: folio_put(lv, last)
	:: skip
	fi
}

init {
	byte i;

	atomic {
		i = 0;
		do :: i < NBATCH -> run batch_mover(); i++
		   :: else -> break
		od;
		i = 0;
		do :: i < NMOVE -> run charge_mover(); i++
		   :: else -> break
		od;
#if defined(REPARENT) || defined(REPARENT_LINKED)
		run reparenter();
#endif
		run releaser()
	}
	_nr_pr == 1;                /* everybody else has terminated */

	assert(owner[0] == 0 && owner[1] == 0 && pins == 0);
	if
	:: freed -> assert(inlist == NONE && refcount == 0)
	:: else ->
		assert(refcount > 0);
		assert(pg_lru == (inlist != NONE));
		assert(inlist == NONE || inlist == memcg)
	fi
}
