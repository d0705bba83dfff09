/*
 * compaction_put_bug.pml -- seeded bug: the first version's isolation order.
 *
 * compaction_put.pml with V1_ORDER defined: the scanner locks the lruvec
 * first, tests PG_lru under the lock, only then takes its reference, and drops
 * a rejected folio's reference while still holding the lock, as Alex Shi's
 * August 2019 v1 did (src/compaction.c, isolate_folio_v1()).  spin must find
 * the owner letting go in between, so that the scanner's put is the final one
 * and its release path waits for the lock the scanner holds: the kcompactd
 * self-deadlock of docs/protocol.md §7.1.
 * See compaction_put.pml for the full description.
 */
#define V1_ORDER 1
#include "compaction_put.pml"
