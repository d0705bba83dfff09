/*
 * kswapd_wake.pml -- wakeup_kswapd() against kswapd's end of pass: no allocation that takes
 * free memory below the low watermark is left without a kswapd pass after it.
 *
 * WHAT IS MODELLED
 *   One node's free page count (free), its low and high watermarks, and the two flags of
 *   struct kswapd in src/vmscan.c: wake (a request for a pass) and busy (a pass is running
 *   or lingering).  The mutex and condition variable are modelled by a lock bit, a sleeping
 *   flag and a pending signal.  Processes:
 *     alloc x NALLOC  the allocator (rmqueue()): take a page (free--; a failed
 *                     allocation is a no-op), then, with free below low, wakeup_kswapd():
 *                       if wake: return (asked already)
 *                       old = xchg(wake, 1); if old: return
 *                       if busy: return (the running kswapd sees wake when its pass ends)
 *                       lock; signal; unlock
 *     kswapd          lock; wait until wake; busy = 1; wake = 0; unlock; then the pass:
 *                     reclaim one page at a time until free >= high, then linger, whose
 *                     last look at free decides (>= low: the pass ends; below: reclaim
 *                     again); busy = 0; back to the wait.
 *   Promela interleaves under sequential consistency: the xchg and the seq_cst store of
 *   busy = 0 followed by the seq_cst load of wake are the Dekker pair the C code relies on.
 *
 *   -DBUG_WAKE_FIRST looks at free memory before taking the page: the allocation that takes
 *   the zone below low asks no one.
 *
 *   -DBUG_LOST_WAKEUP makes wakeup_kswapd() return if wake or busy is set, and otherwise
 *   lock, set wake, signal, unlock.  An allocation that finds kswapd busy just after its
 *   linger's last look is then lost: kswapd sleeps with free below low.
 *
 * WHAT IS LEFT OUT
 *   Sequential consistency only: the C11 argument (the fences in node_daemon_wake() and after
 *   the daemon's consuming xchg) is in the comment on node_daemon_wake() (src/kthread.c). One take per allocation:
 *   rmqueue() asks after each take, also those after direct reclaim or a retry.
 *   kswapd always finds something to reclaim here: the fruitless pass's backoff only delays
 *   a pass while busy is set, which the model's requests already allow.
 *
 * WHAT THE ASSERTION MEANS
 *   Once every allocator has finished and kswapd sleeps with no signal pending, nothing can
 *   change any more: free must then be at least low.
 */

#ifndef NALLOC
#define NALLOC 2
#endif
#ifndef NPAGES
#define NPAGES 2 /* allocations per allocator */
#endif
#define LOW  2
#define HIGH 3

byte free = HIGH;
bit wake, busy;
bit locked, sleeping, signalled;
byte done;

inline lock()
{
	atomic { !locked -> locked = 1 }
}

inline unlock()
{
	locked = 0
}

inline wakeup_kswapd()
{
#ifdef BUG_LOST_WAKEUP
	if
	:: wake || busy -> skip
	:: else ->
		lock();
		wake = 1;
		if
		:: sleeping -> signalled = 1
		:: else -> skip
		fi;
		unlock()
	fi
#else
	if
	:: wake -> skip
	:: else ->
		atomic { old = wake; wake = 1 };
		if
		:: old -> skip
		:: else ->
			if
			:: busy -> skip
			:: else ->
				lock();
				if
				:: sleeping -> signalled = 1
				:: else -> skip
				fi;
				unlock()
			fi
		fi
	fi
#endif
}

active [NALLOC] proctype alloc()
{
	byte n = 0;
	bit old;

	do
	:: n < NPAGES ->
#ifdef BUG_WAKE_FIRST
		if
		:: free < LOW -> wakeup_kswapd()
		:: else -> skip
		fi;
#endif
		atomic {
			if
			:: free > 0 -> free--
			:: else -> skip /* the real one reclaims directly; out of this model */
			fi
		};
#ifndef BUG_WAKE_FIRST
		if
		:: free < LOW -> wakeup_kswapd()
		:: else -> skip
		fi;
#endif
		n++
	:: else -> break
	od;
	done++
}

active proctype kswapd()
{
	byte f;

	do
	:: lock();
		do
		:: wake -> break
		:: else ->
			atomic { sleeping = 1; unlock() };
end_sleep:		atomic { signalled -> signalled = 0; sleeping = 0 };
			lock()
		od;
		busy = 1;
		wake = 0;
		unlock();
		do
		:: f = free;
			if
			:: f >= HIGH ->
				f = free; /* the linger's last look, any time later */
				if
				:: f >= LOW -> break
				:: else -> skip
				fi
			:: else -> atomic { free++ }
			fi
		od;
		busy = 0
	od
}

active proctype check()
{
end_check:
	atomic {
		(done == NALLOC && sleeping && !signalled) ->
			assert(free >= LOW)
	}
}
