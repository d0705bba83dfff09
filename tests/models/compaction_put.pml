/*
 * compaction_put.pml -- compaction's migrate scanner against the release path: the
 * reference before the pin, and the final put outside the lruvec lock.
 *
 * WHAT IS MODELLED
 *   One folio on one lruvec's list (the node design, or a scanner that already
 *   holds the lock of the folio's own lruvec: the worst case, where a put under
 *   the lock takes the very lock its thread holds).  The folio has
 *     pg_lru    atomic PG_lru flag (the isolation pin, docs/protocol.md §3.2)
 *     refcount  starts at 1: the owner's reference (its page table entry or page
 *               cache slot)
 *     inlist    linked on the lruvec's list
 *     isolated  on a scanner's private list
 *     frees     how many times it was handed back to the allocator
 *   Processes:
 *     owner     drops its reference, or keeps it (nondeterministically).
 *     scanner   isolate_migratepages_block() for this folio (src/compaction.c,
 *               isolate_folio()): it may already hold the lock (the folio
 *               before it in the same 32 PFNs was isolated); folio_try_get;
 *               re-check PG_lru; a rejection (pinned, unevictable, another
 *               memcg) may come at any point after the reference; PG_lru
 *               test-and-clear; lock if not held; a re-check under the lock
 *               may fail (set PG_lru back); unlink, isolate, unlock.  Then
 *               either the folio turns out freed under us (the owner let go:
 *               freeze from 1 to 0, free it) or it goes back (lock, link, set
 *               PG_lru, unlock, put).  isolate_fail_put: unlock, then put.
 *   Whoever drops the last reference runs the release path (folios_put_refs()):
 *   if PG_lru is set, lock, unlink, clear PG_lru, unlock; then free.
 *
 * WHAT THE ASSERTIONS MEAN
 *   spin_lock         no thread waits for a lock it holds itself: the
 *                     self-deadlock of a final put under the lruvec lock
 *                     (hazard 4 of docs/protocol.md §9.1; pan would also
 *                     report it as an invalid end state).
 *   free_folio        a folio is freed at most once, and never while linked
 *                     or isolated (hazards 2 and 4).
 *   list_del/add      list operations under the lock, on a live folio.
 *   folio_test_clear_lru  at most one pin winner.
 *   end state         all locks free; freed exactly once iff the count is zero;
 *                     otherwise linked iff PG_lru.
 *
 * SWITCHES (spin -DNAME -a compaction_put.pml)
 *   NSCAN=2          two scanners (kcompactd and a direct compaction).
 *   V1_ORDER         the August 2019 first version (isolate_folio_v1()): lock,
 *                    test PG_lru under the lock, then the reference, and a
 *                    rejected folio's put under the lock.  Must FAIL: the owner
 *                    lets go meanwhile and the scanner's put is the final one.
 *                    compaction_put_bug.pml is this file with V1_ORDER defined.
 *   PIN_BEFORE_REF   the pin (PG_lru test-and-clear) before the reference.  Must
 *                    FAIL: the owner's final put sees PG_lru clear and frees the
 *                    folio while it is still linked (hazard 2).
 *   PUT_UNDER_LOCK   the real order, but isolate_fail_put keeps the lock across
 *                    its put.  Must FAIL as V1_ORDER does.
 *
 * Promela's interleaving semantics is sequentially consistent; each atomic
 * block stands for one atomic RMW in C.
 */

#ifndef NSCAN
#define NSCAN 1
#endif

byte owner    = 0;      /* the lruvec lock: 0 free, else _pid + 1 of the holder */
bit  pg_lru   = 1;
byte refcount = 1;
bit  inlist   = 1;
byte isolated = 0;
byte frees    = 0;
byte pins     = 0;

inline spin_lock()
{
	assert(owner != _pid + 1);      /* waiting for a lock we hold: self-deadlock */
	atomic { owner == 0 -> owner = _pid + 1 }
}

inline spin_unlock()
{
	assert(owner == _pid + 1);
	owner = 0
}

inline list_del()
{
	assert(frees == 0 && owner == _pid + 1 && inlist);
	inlist = 0
}

inline list_add()
{
	assert(frees == 0 && owner == _pid + 1 && !inlist);
	inlist = 1
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
		assert(pins <= 1)
	}
}

/* The pin owner gives PG_lru back (under the lock). */
inline folio_set_lru()
{
	atomic {
		assert(frees == 0 && pins == 1 && !pg_lru);
		pg_lru = 1;
		pins--
	}
}

inline free_folio()
{
	assert(frees == 0 && !inlist && isolated == 0);
	frees++
}

/* folios_put_refs() for one folio: the last reference unlinks (if PG_lru) and frees. */
inline folio_put(last)
{
	atomic { assert(refcount > 0); refcount--; last = (refcount == 0) };
	if
	:: last ->
		if
		:: pg_lru ->
			spin_lock();
			list_del();
			pg_lru = 0;             /* folio_clear_lru_flags(): count frozen */
			spin_unlock()
		:: else -> skip
		fi;
		free_folio()
	:: else -> skip
	fi
}

proctype owner_put()
{
	bit last;

	if
	:: folio_put(last)
	:: skip                         /* the owner keeps the folio */
	fi
}

#ifndef V1_ORDER
proctype scanner()
{
	bit ok, won, last, held;

	/* The lock of the folio before it in the same 32 PFNs, or none. */
	if
	:: spin_lock(); held = 1
	:: skip
	fi;
#ifdef PIN_BEFORE_REF
	folio_test_clear_lru(won);
	if
	:: !won -> goto out
	:: else -> skip
	fi;
	folio_try_get(ok);
	if
	:: !ok -> pins--; goto out      /* being freed: it walks away, PG_lru left clear */
	:: else -> skip
	fi;
#else
	folio_try_get(ok);
	if
	:: !ok -> goto out              /* being freed */
	:: else -> skip
	fi;
	if
	:: !pg_lru -> goto fail_put     /* the re-check with the reference held */
	:: pg_lru -> skip
	:: goto fail_put                /* pinned, unevictable, another memcg's */
	fi;
	folio_test_clear_lru(won);
	if
	:: !won -> goto fail_put        /* another actor owns its LRU position */
	:: else -> skip
	fi;
#endif
	if
	:: !held -> spin_lock(); held = 1
	:: else -> skip
	fi;
	if
	:: folio_set_lru(); goto fail_put   /* it changed: the pin goes back */
	:: skip
	fi;
	list_del();
	isolated++;
	spin_unlock();
	held = 0;

	/* compact_migrate(): freed under us, or put back (compact_putback()). */
	if
	:: atomic { refcount == 1 -> refcount = 0 };
		isolated--;
		pins--;                 /* the pin ends with the folio */
		free_folio()
	:: true ->
		spin_lock();
		list_add();
		isolated--;
		folio_set_lru();
		spin_unlock();
		folio_put(last)
	fi;
	goto out;

fail_put:
#ifndef PUT_UNDER_LOCK
	if
	:: held -> spin_unlock(); held = 0
	:: else -> skip
	fi;
#endif
	folio_put(last);
out:
	if
	:: held -> spin_unlock()
	:: else -> skip
	fi
}
#else
/* isolate_folio_v1(): lock by the folio's memcg, PG_lru under the lock, then the reference. */
proctype scanner()
{
	bit ok, won, last;

	spin_lock();
	if
	:: !pg_lru -> goto out
	:: else -> skip
	fi;
	folio_try_get(ok);
	if
	:: !ok -> goto out
	:: else -> skip
	fi;
	if
	:: skip                         /* accepted, if it wins the pin */
	:: goto reject                  /* pinned, unevictable, another memcg's */
	fi;
	folio_test_clear_lru(won);
	if
	:: !won -> goto reject
	:: else -> skip
	fi;
	list_del();
	isolated++;
	spin_unlock();
	if
	:: atomic { refcount == 1 -> refcount = 0 };
		isolated--;
		pins--;
		free_folio()
	:: true ->
		spin_lock();
		list_add();
		isolated--;
		folio_set_lru();
		spin_unlock();
		folio_put(last)
	fi;
	goto done;
reject:
	folio_put(last);                /* under the lruvec lock */
out:
	spin_unlock();
done:
	skip
}
#endif

init {
	byte i;

	atomic {
		i = 0;
		do
		:: i < NSCAN -> run scanner(); i++
		:: else -> break
		od;
		run owner_put()
	}
	_nr_pr == 1;

	assert(owner == 0 && pins == 0 && isolated == 0);
	if
	:: refcount == 0 -> assert(frees == 1 && !inlist)
	:: else -> assert(frees == 0 && pg_lru == inlist)
	fi
}
