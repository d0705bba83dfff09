/*
 * lruvec_lock_v1bug.pml -- seeded bug: Alex Shi's v1 protocol.
 *
 * Same model as lruvec_lock.pml with V1BUG defined: the batch mover
 * (folio_batch_move_lru) looks up and locks the lruvec with no PG_lru pin
 * (no folio_test_clear_lru) and no re-check of the memcg binding after
 * locking.  spin must find an assertion violation: a charge move
 * (lv_folio_move_memcg) completes between the lookup and the lock, so the
 * batch mover holds the old lruvec lock while the folio is linked on the
 * new lruvec.  See lruvec_lock.pml for the full description.
 */
#define V1BUG 1
#include "lruvec_lock.pml"
