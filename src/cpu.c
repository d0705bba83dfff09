// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * CPU slots: the userspace stand-in for per-CPU data.
 *
 * A slot is indexed by sched_getcpu(), which glibc 2.35+ answers from the rseq area in about
 * 2 ns. The kernel protects per-CPU batches by disabling preemption; we cannot, so every slot
 * has a lock (PREEMPT_RT's local_lock model; docs/protocol.md §5.1, §10). A thread that is
 * migrated after reading its CPU simply uses the slot of the CPU it was on: it holds that
 * slot's lock, so nothing is lost, and only locality suffers. For the same reason a request
 * that finds its slot held may take any free one (this_cpu_slot_lock()).
 */
#include "internal.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

unsigned int this_cpu_index(const struct lv_machine *m)
{
	int cpu = sched_getcpu();

	return cpu < 0 ? 0 : (unsigned int)cpu % m->nr_slots;
}

struct cpu_slot *this_cpu_slot(struct lv_machine *m)
{
	return &m->slots[this_cpu_index(m)];
}

/*
 * this_cpu_slot_lock - lock a CPU slot for queueing a request: this CPU's, or, when its lock is
 * held (by a thread preempted on this CPU, most likely, since the kernel's local_lock would
 * have kept it running), the first free one of the others; only if every slot is busy, wait
 * for this CPU's. Any slot is correct: drains and the cache disable visit them all.
 * Return: the locked slot.
 */
struct cpu_slot *this_cpu_slot_lock_at(struct lv_machine *m, const char *site)
{
	unsigned int here = this_cpu_index(m);
	struct cpu_slot *slot = &m->slots[here];

	if (lv_lock_trylock(&slot->lock))
		return slot;
	for (unsigned int i = 1; i < m->nr_slots; i++) {
		struct cpu_slot *other = &m->slots[(here + i) % m->nr_slots];

		if (lv_lock_trylock(&other->lock))
			return other;
	}
	lv_lock_acquire_at(&slot->lock, site);
	return slot;
}

int cpu_slots_init(struct lv_machine *m)
{
	m->slots = aligned_alloc(64, m->nr_slots * sizeof(*m->slots));
	if (!m->slots)
		return -ENOMEM;
	memset(m->slots, 0, m->nr_slots * sizeof(*m->slots));
	if (m->cfg.batch_policy == LV_BATCH_PER_LRUVEC) {
		/* 7 kinds x 4 batches x 272 bytes: about 7.5 KiB per slot, only in this policy. */
		struct lruvec_batch(*lvb)[LV_LRUVEC_BATCHES] =
			calloc((size_t)m->nr_slots * NR_BATCH_KINDS, sizeof(*lvb));

		if (!lvb) {
			free(m->slots);
			m->slots = NULL;
			return -ENOMEM;
		}
		for (unsigned int s = 0; s < m->nr_slots; s++)
			m->slots[s].lvb = lvb + (size_t)s * NR_BATCH_KINDS;
	}
	for (unsigned int s = 0; s < m->nr_slots; s++)
		lv_lock_init(&m->slots[s].lock, m->cfg.lock_backend, LV_LOCK_CLASS_SLOT,
			     m->lock_sites);
	return 0;
}

void cpu_slots_exit(struct lv_machine *m)
{
	if (!m->slots)
		return;
	for (unsigned int s = 0; s < m->nr_slots; s++)
		lv_lock_destroy(&m->slots[s].lock);
	free(m->slots[0].lvb); /* one array for every slot */
	free(m->slots);
	m->slots = NULL;
}
