/*
 * drain_add_lruvec_bug.pml -- seeded bug for drain_add.pml with per-lruvec
 * batches (cfg.batch_policy LV_BATCH_PER_LRUVEC).
 *
 * Same model with PER_LRUVEC and BUG_FORGET_BATCH defined: each slot keeps
 * two batches keyed by lruvec, and a flush of a slot (the disabler's sweep,
 * lv_lru_add_drain_all()'s, the scoped drain's) visits only the first.  A
 * folio queued in the second stays hidden after lv_lru_cache_disable() or
 * lv_lru_add_drain_all() returns.  spin must find an assertion violation.
 * See drain_add.pml for the full description.
 */
#define PER_LRUVEC 1
#define BUG_FORGET_BATCH 1
#include "drain_add.pml"
