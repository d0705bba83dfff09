/*
 * objcg_reparent_bug.pml -- seeded bug: the relock protocol without the re-check.
 *
 * Same model as objcg_reparent.pml with NO_RECHECK defined: a mover locks the
 * lruvec its racy lookup of the folio's objcg named and trusts it.  spin must
 * find an assertion violation: the reparenter re-points the objcg and splices
 * the folio onto the parent between the lookup and the lock, so the mover
 * holds the child's lock while the folio is linked on the parent's list.
 * See objcg_reparent.pml for the full description.
 */
#define NO_RECHECK 1
#include "objcg_reparent.pml"
