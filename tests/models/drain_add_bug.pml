/*
 * drain_add_bug.pml -- seeded bug for drain_add.pml.
 *
 * Same model with BUG_LATE_INC defined: lv_lru_cache_disable() increments
 * disable_count only AFTER sweeping the slots.  An adder that takes a slot
 * lock after the sweep passed that slot still reads disable_count == 0,
 * leaves its folio in the lru_add batch, and the disable returns with a
 * folio hidden in a per-CPU batch.  spin must find an assertion violation.
 * See drain_add.pml for the full description.
 */
#define BUG_LATE_INC 1
#include "drain_add.pml"
