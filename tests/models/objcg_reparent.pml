/*
 * objcg_reparent.pml -- the relock protocol (lookup + lock + re-check) against
 * obj_cgroup-style reparenting of one node.
 *
 * WHAT IS MODELLED
 *   One node, two memcgs: 0 = the dying child, 1 = its parent, hence two
 *   lruvecs with a lock each.  NF folios, all charged through the child's
 *   per-node obj_cgroup: a folio's binding is folio_memcg(folio) =
 *   objcg_memcg, read through the objcg, so one store rebinds every folio of
 *   it at once.  Each folio is linked on lruvec 0 at the start and counted in
 *   nr[0].
 *   Processes:
 *     mover (NMOVER of them)  picks a folio, locks its lruvec with
 *                   folio_lruvec_lock() (racy lookup of objcg_memcg, lock,
 *                   re-check, unlock and retry on a mismatch), then moves it
 *                   on its list (lruvec_del_folio + lruvec_add_folio: an
 *                   activation or a rotation) and unlocks.
 *     reparenter    memcg removal's reparenting of this node: takes the
 *                   child's then the parent's lruvec lock, splices every
 *                   folio linked on the child onto the parent (counts move
 *                   with them), re-points the objcg at the parent, unlocks
 *                   both.  The objcg pointer changes only under BOTH locks.
 *   Folios are referenced by their owner throughout: the release path and
 *   the PG_lru pin are lruvec_lock.pml's subject, not this model's.
 *
 * WHAT THE ASSERTIONS MEAN
 *   list_del/list_add   whoever touches a folio's list holds the lock of the
 *                       lruvec the folio is linked on, and that lruvec is
 *                       the one of the folio's binding (lruvec_memcg(lruvec)
 *                       == folio_memcg(folio)); counts never go negative.
 *   end state           all locks free; every folio linked on the lruvec of
 *                       its binding (the parent's, once reparented), and
 *                       nr[] equals the folios linked on each.
 *
 * SWITCHES (spin -DNAME -a objcg_reparent.pml)
 *   NO_RECHECK  the movers trust the lookup: must FAIL (a mover holds the
 *               child's lock while the folio it moves sits on the parent's
 *               list).  objcg_reparent_bug.pml is this file with it defined.
 *   NMOVER, NF  movers (default 2) and folios (default 2).
 */

#ifndef NMOVER
#define NMOVER 2
#endif
#ifndef NF
#define NF 2
#endif

#define NLV  2          /* lruvecs of the node: the child's (0), the parent's (1) */
#define NONE 2          /* inlist value: linked nowhere (a mover between del and add) */

byte owner[NLV];        /* 0 = unlocked, else _pid + 1 of the holder */
byte objcg_memcg = 0;   /* the objcg's memcg: every folio's binding */
byte inlist[NF];        /* the lruvec each folio is linked on */
byte nr[NLV];           /* folios counted on each lruvec */
bit  reparented = 0;

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
	:: lv = objcg_memcg;        /* folio_lruvec(): racy, may be stale */
	   spin_lock(lv);
#ifdef NO_RECHECK
	   break
#else
	   if
	   :: objcg_memcg == lv -> break     /* the binding is frozen while we hold lv */
	   :: else -> lruvec_unlock(lv)      /* reparented under us: retry */
	   fi
#endif
	od
}

inline list_del(f, lv)
{
	assert(owner[lv] == _pid + 1 && inlist[f] == lv && objcg_memcg == lv);
	assert(nr[lv] > 0);
	inlist[f] = NONE;
	nr[lv]--
}

inline list_add(f, lv)
{
	assert(owner[lv] == _pid + 1 && inlist[f] == NONE && objcg_memcg == lv);
	inlist[f] = lv;
	nr[lv]++
}

proctype mover()
{
	byte f, lv;

	if
	:: f = 0
	:: f = NF - 1
	fi;
	folio_lruvec_lock(lv);
	list_del(f, lv);
	list_add(f, lv);
	lruvec_unlock(lv)
}

proctype reparenter()
{
	byte f;

	spin_lock(0);
	spin_lock(1);
	f = 0;
	do
	:: f < NF ->
		if
		:: inlist[f] == 0 -> inlist[f] = 1; nr[0]--; nr[1]++
		:: else -> skip
		fi;
		f++
	:: else -> break
	od;
	objcg_memcg = 1;
	reparented = 1;
	lruvec_unlock(1);
	lruvec_unlock(0)
}

init
{
	byte f;

	atomic {
		nr[0] = NF;   /* every folio linked on the child's lruvec (inlist[] = 0) */
		f = 0;
		do
		:: f < NMOVER -> run mover(); f++
		:: else -> break
		od;
		run reparenter()
	}
	/* the end state: everything has run */
	(_nr_pr == 1);
	assert(owner[0] == 0 && owner[1] == 0 && reparented);
	assert(nr[0] == 0 && nr[1] == NF);
	f = 0;
	do
	:: f < NF -> assert(inlist[f] == objcg_memcg); f++
	:: else -> break
	od
}
