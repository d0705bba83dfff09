// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Run-time bug reports and lv_check(), the quiescent-point invariant checker: invariants
 * I1–I5 of docs/protocol.md §9.2, plus the accounting of memcgs, page cache and frames.
 *
 * lv_check() first waits for kswapd and drains every slot, then walks every list of every
 * lruvec under its lock, marking each folio it meets in a per-node bitmap, and finally walks
 * every node's memmap frame by frame. The two walks cross-check each other: a folio is linked
 * iff it is PG_lru and evictable, on the list its flags select, of the lruvec its node and
 * memcg select; the unevictable, isolated, charged and mlocked (NR_MLOCK) counts rebuilt from
 * the memmap equal the counters; an mlocked folio on an LRU is on the unevictable list, and
 * only such a folio has a nonzero mlock_count; and free frames plus allocated frames are
 * exactly the node's frames. Each lruvec's list of shadow-only page cache nodes is as long as
 * its count and holds only nodes bound to it. The other frames of a large folio must be
 * nobody's; a large anon folio may be mapped by many entries, each of which holds a
 * reference (check_mms()). kcompactd is held off for the whole check, and no compaction
 * may hold pages isolated. The swap devices' slot and cluster counts, lists, per-CPU clusters,
 * free slot counts and memcg swap usage are checked by check_swap() (swapfile.c).
 */
/* lv_check()'s scratch memory is no fault site: a checker that cannot allocate reports it. */
#define LV_NO_FAULT_SITES
#include "internal.h"
#include "mm_inline.h"
#include "swap.h"

#include <string.h>

void lv_bug(struct lv_machine *m, const char *cond, const char *file, int line)
{
	uint64_t n = __atomic_add_fetch(&m->bug_count, 1, __ATOMIC_RELAXED);

	if (n <= 10)
		fprintf(stderr, "lruvec: BUG at %s:%d: %s\n", file, line, cond);
#ifdef LV_DEBUG
	abort();
#endif
}

uint64_t lv_bug_count(struct lv_machine *m)
{
	return __atomic_load_n(&m->bug_count, __ATOMIC_RELAXED);
}

struct check {
	struct lv_machine *m;
	FILE *out;
	unsigned long errors;
	struct lruvec **lruvecs; /* every lruvec, sorted by address */
	size_t nr, cap;
	unsigned long *unevictable; /* per lruvec, rebuilt from the memmap */
	long *isolated;		    /* per lruvec */
	long *charged;		    /* per lruvec: pages of folios bound to it */
	long *mlocked;		    /* per lruvec: pages of PG_mlocked folios bound to it */
	unsigned char **seen;	    /* per node: bitmap of linked frames */
};

#define check_fail(c, ...)                                                                         \
	do {                                                                                       \
		if ((c)->errors++ < 50) {                                                          \
			fprintf((c)->out, "lv_check: ");                                           \
			fprintf((c)->out, __VA_ARGS__);                                            \
			fputc('\n', (c)->out);                                                     \
		}                                                                                  \
	} while (0)

static void check_mm_fail(void *arg, const char *what, const void *p)
{
	check_fail((struct check *)arg, "%s (%p)", what, p);
}

static void collect_lruvec(struct lruvec *lruvec, void *arg)
{
	struct check *c = arg;

	if (c->nr == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 64;
		struct lruvec **p = realloc(c->lruvecs, cap * sizeof(*p));

		if (!p) {
			check_fail(c, "out of memory collecting lruvecs");
			return;
		}
		c->lruvecs = p;
		c->cap = cap;
	}
	c->lruvecs[c->nr++] = lruvec;
}

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;

	return x < y ? -1 : x > y;
}

static long lruvec_index(struct check *c, struct lruvec *lruvec)
{
	struct lruvec **p = bsearch(&lruvec, c->lruvecs, c->nr, sizeof(*p), cmp_ptr);

	return p ? p - c->lruvecs : -1;
}

static void mark_seen(struct check *c, struct lv_folio *f)
{
	unsigned long pfn = (unsigned long)(f - f->pgdat->memmap);

	c->seen[f->pgdat->node_id][pfn / 8] |= (unsigned char)(1u << (pfn % 8));
}

static bool was_seen(struct check *c, struct lv_folio *f)
{
	unsigned long pfn = (unsigned long)(f - f->pgdat->memmap);

	return c->seen[f->pgdat->node_id][pfn / 8] & (1u << (pfn % 8));
}

/* I1, I3, I4 from the lists' side. */
static void check_lists(struct check *c, struct lruvec *lruvec)
{
	lv_lock_acquire(lruvec->lru_lock);
	for (int l = 0; l < LRU_UNEVICTABLE; l++) {
		unsigned long pages = 0, steps = 0, limit = lruvec->pgdat->nr_pages + 1;
		struct list_head *pos;

		list_for_each (pos, &lruvec->lists[l]) {
			struct lv_folio *f = list_entry(pos, struct lv_folio, lru);

			if (++steps > limit) {
				check_fail(c, "node %d memcg '%s' list %d: cycle",
					   lruvec->pgdat->node_id,
					   lruvec->memcg ? lruvec->memcg->name : "-", l);
				break;
			}
			if (!folio_test(f, PG_head)) {
				check_fail(c, "freed frame %p linked on list %d", (void *)f, l);
				continue;
			}
			if (was_seen(c, f))
				check_fail(c, "folio %p linked twice", (void *)f);
			mark_seen(c, f);
			pages += (unsigned long)folio_nr_pages(f);
			if (folio_ref_count(f) < 1)
				check_fail(c, "folio %p linked with refcount %d", (void *)f,
					   folio_ref_count(f));
			if (!folio_test_lru(f))
				check_fail(c, "folio %p linked without PG_lru", (void *)f);
			if (folio_test_active(f) && folio_test_unevictable(f))
				check_fail(c, "folio %p active and unevictable", (void *)f);
			else if ((int)folio_lru_list(f) != l)
				check_fail(c, "folio %p on list %d, its flags select %d", (void *)f,
					   l, folio_lru_list(f));
			if (!folio_matches_lruvec(f, lruvec))
				check_fail(c, "folio %p linked on a foreign lruvec", (void *)f);
		}
		if (pages != lruvec->lru_size[l])
			check_fail(c, "node %d memcg '%s' list %d: %lu pages linked, size %lu",
				   lruvec->pgdat->node_id,
				   lruvec->memcg ? lruvec->memcg->name : "-", l, pages,
				   lruvec->lru_size[l]);
	}
	lv_lock_release(lruvec->lru_lock);
}

/* I2, I3, I4 from the memmap's side; page accounting of every node. */
static void check_memmap(struct check *c, struct pglist_data *pgdat)
{
	unsigned long free = 0, allocated = 0, file_pages = 0;
	long isolated;

	for (unsigned long pfn = 0; pfn < pgdat->nr_pages;) {
		struct lv_folio *f = &pgdat->memmap[pfn];
		unsigned long nr = 1ul << folio_order(f);

		if (folio_test(f, PG_buddy) || folio_test(f, PG_pcp)) {
			free += nr;
			if (was_seen(c, f))
				check_fail(c, "free frame %lu of node %d is linked", pfn,
					   pgdat->node_id);
		} else if (folio_test(f, PG_head)) {
			struct lruvec *lruvec = mem_cgroup_lruvec(folio_memcg(f), pgdat);
			long i = lruvec_index(c, lruvec);

			allocated += nr;
			if (folio_file_mapping(f))
				file_pages += nr;
			if (i < 0) {
				check_fail(c, "folio %p bound to an unknown lruvec", (void *)f);
			} else {
				c->charged[i] += (long)nr;
				if (folio_test_isolated(f))
					c->isolated[i] += (long)nr;
				if (folio_test_lru(f) && folio_test_unevictable(f))
					c->unevictable[i] += nr;
				if (folio_test_mlocked(f))
					c->mlocked[i] += (long)nr;
			}
			/* The batches are drained: every mlock has reached the unevictable list. */
			if (folio_test_lru(f) && folio_test_mlocked(f) &&
			    !folio_test_unevictable(f))
				check_fail(c, "mlocked folio %p on an evictable list", (void *)f);
			if (f->mlock_count && folio_test_lru(f) &&
			    !(folio_test_unevictable(f) && folio_test_mlocked(f)))
				check_fail(
					c,
					"folio %p: mlock_count %u but not mlocked and unevictable",
					(void *)f, f->mlock_count);
			if (folio_test(f, PG_lru_claimed) != folio_test_lru(f))
				check_fail(c,
					   "folio %p: PG_lru %d but claimed by the LRU %d after "
					   "draining",
					   (void *)f, folio_test_lru(f),
					   folio_test(f, PG_lru_claimed));
			if (folio_test_lru(f) && !folio_test_unevictable(f) && !was_seen(c, f))
				check_fail(c, "PG_lru folio %p on no list", (void *)f);
			if (!folio_test_lru(f) && was_seen(c, f))
				check_fail(c, "folio %p linked without PG_lru", (void *)f);
			if (folio_test_unevictable(f) && was_seen(c, f))
				check_fail(c, "unevictable folio %p is linked", (void *)f);
			if (folio_ref_count(f) < 1)
				check_fail(c, "allocated folio %p with refcount %d", (void *)f,
					   folio_ref_count(f));
			if (mem_cgroup_disabled(c->m) != (f->objcg == NULL))
				check_fail(c, "folio %p memcg binding %p is wrong", (void *)f,
					   (void *)f->objcg);
			/*
			 * The other frames of a large folio are nobody's: a split that left one
			 * half made (a reference, a flag of a folio, a link) shows here.
			 */
			for (unsigned long j = 1; j < nr; j++) {
				struct lv_folio *t = f + j;
				const unsigned long own = (1ul << PG_head) | (1ul << PG_lru) |
							  (1ul << PG_buddy) | (1ul << PG_pcp);

				if (folio_ref_count(t) || (READ_ONCE(t->flags) & own) ||
				    was_seen(c, t))
					check_fail(c,
						   "frame %lu of large folio %p is in use "
						   "(refcount %d, flags %#lx)",
						   j, (void *)f, folio_ref_count(t),
						   READ_ONCE(t->flags));
			}
		} else {
			check_fail(c, "frame %lu of node %d is neither free nor a folio", pfn,
				   pgdat->node_id);
			nr = 1;
		}
		pfn += nr;
	}
	if (file_pages != pgdat->nr_file_pages)
		check_fail(c, "node %d: %lu folios in files, counter says %lu", pgdat->node_id,
			   file_pages, pgdat->nr_file_pages);
	if ((isolated = __atomic_load_n(&pgdat->nr_compact_isolated, __ATOMIC_RELAXED)))
		check_fail(c, "node %d: compaction holds %ld pages isolated at a quiescent point",
			   pgdat->node_id, isolated);
	if (free + allocated != pgdat->nr_pages)
		check_fail(c, "node %d: %lu free + %lu allocated != %lu frames", pgdat->node_id,
			   free, allocated, pgdat->nr_pages);
	if (free != node_free_pages(pgdat))
		check_fail(c, "node %d: %lu free frames, counters say %lu", pgdat->node_id, free,
			   node_free_pages(pgdat));
}

/* Usage of @memcg's subtree, rebuilt from the memmap (c->charged), checked level by level. */
static long check_memcg_usage(struct check *c, struct lv_memcg *memcg)
{
	struct list_head *pos;
	long pages = 0;

	for (unsigned int nid = 0; nid < c->m->cfg.nr_nodes; nid++) {
		long i = lruvec_index(c, &memcg->nodeinfo[nid]);

		if (i >= 0)
			pages += c->charged[i];
	}
	list_for_each (pos, &memcg->children)
		pages += check_memcg_usage(c, list_entry(pos, struct lv_memcg, sibling));
	if (memcg->parent && pages != memcg->usage)
		check_fail(c, "memcg '%s': usage %ld, pages charged %ld", memcg->name, memcg->usage,
			   pages);
	return pages;
}

/*
 * A removed memcg's lruvec holds no scan cost and no pending count: the reparenting handed
 * them to the parent, and every later delta went to the first live ancestor (the 7.1 rule,
 * lruvec_live_lock(); vmscan.c, "Scan cost"). Called for removed memcgs not freed yet only.
 */
static void check_dead_costs(struct lruvec *lruvec, void *arg)
{
	struct check *c = arg;
	unsigned long pending = 0;

	if (!lruvec->memcg || !__atomic_load_n(&lruvec->memcg->offline, __ATOMIC_ACQUIRE))
		return;
	for (int s = 0; s < COST_STRIPES; s++)
		pending += __atomic_load_n(&lruvec->cost_pending[s].pending[0], __ATOMIC_RELAXED) +
			   __atomic_load_n(&lruvec->cost_pending[s].pending[1], __ATOMIC_RELAXED);
	if (READ_ONCE(lruvec->anon_cost) || READ_ONCE(lruvec->file_cost) || pending)
		check_fail(c,
			   "node %d removed memcg '%s': scan costs %lu anon, %lu file, %lu pending",
			   lruvec->pgdat->node_id, lruvec->memcg->name,
			   READ_ONCE(lruvec->anon_cost), READ_ONCE(lruvec->file_cost), pending);
}

/* Each lruvec's size level and each node's view of them, recounted (vmscan.c, "Many memcgs"). */
static void check_size_levels(struct check *c)
{
	for (unsigned int nid = 0; nid < c->m->cfg.nr_nodes; nid++) {
		struct pglist_data *pgdat = c->m->nodes[nid];
		long nr[DEF_PRIORITY + 2] = { 0 };

		for (size_t i = 0; i < c->nr; i++) {
			struct lruvec *lruvec = c->lruvecs[i];
			int level = 0;

			if (lruvec->pgdat != pgdat)
				continue;
			for (int l = 0; l < LRU_UNEVICTABLE; l++)
				if (lru_size_order(lruvec->lru_size[l]) + 1 > level)
					level = lru_size_order(lruvec->lru_size[l]) + 1;
			/* A level falls only when reclaim looks: at least the lists' own. */
			if (level > lruvec->size_level)
				check_fail(c, "node %d memcg '%s': size level %d, recorded %d", nid,
					   lruvec->memcg ? lruvec->memcg->name : "-", level,
					   lruvec->size_level);
			level = lruvec->size_level;
			nr[level]++;
			for (int l = 1; lruvec->memcg && l <= DEF_PRIORITY + 1; l++) {
				unsigned int bit = memcg_level_bit(lruvec->memcg->id);
				bool set =
					memcg_level_map(pgdat, l)[bit / 64] & (1ul << (bit % 64));
				unsigned int w = bit / 64;

				if (set &&
				    !(memcg_level_summary(pgdat, l)[w / 64] & (1ul << (w % 64))))
					check_fail(
						c,
						"node %d memcg '%s': map %d word %u unsummarised",
						nid, lruvec->memcg->name, l, w);
				if (set != (l <= level))
					check_fail(c,
						   "node %d memcg '%s': size level %d, map %d %s",
						   nid, lruvec->memcg->name, level, l,
						   set ? "set" : "clear");
			}
		}
		for (int l = 1; l <= DEF_PRIORITY + 1; l++)
			if (nr[l] != nr_lruvecs_at_level(pgdat, l))
				check_fail(c, "node %d: %ld lruvecs of size level %d, counted %ld",
					   nid, nr[l], l, nr_lruvecs_at_level(pgdat, l));
	}
}

int lv_check(struct lv_machine *m, FILE *report)
{
	struct check c = { .m = m, .out = report ? report : stderr };
	unsigned int nr_nodes = m->cfg.nr_nodes;

	/*
	 * The caller stopped its threads; ours may still be finishing a compaction or reclaim
	 * pass. kcompactd first: it also wakes on its own (proactive compaction), so its passes
	 * are held off until we are done; kswapd is woken only by allocations.
	 */
	kcompactd_quiesce(m);
	kswapd_quiesce(m);
	for (unsigned int s = 0; s < m->nr_slots; s++) {
		struct cpu_slot *slot = &m->slots[s];

		drain_slot(slot);
		/* Quiescent: nobody refills the batches, so the unlocked look is exact (I5). */
		for (int kind = 0; kind < NR_BATCH_KINDS; kind++) {
			struct folio_batch *fb;
			unsigned int i;

			for_each_slot_batch(slot, kind, i, fb) if (READ_ONCE(fb->nr)) check_fail(
				&c, "slot %u batch %d.%u not empty after draining", s, kind, i);
		}
	}

	/* Live memcgs only: a removed one may be freed once the walk drops the tree mutex. */
	for_each_lruvec(m, false, collect_lruvec, &c);
	qsort(c.lruvecs, c.nr, sizeof(*c.lruvecs), cmp_ptr);
	c.unevictable = calloc(c.nr + 1, sizeof(*c.unevictable));
	c.isolated = calloc(c.nr + 1, sizeof(*c.isolated));
	c.charged = calloc(c.nr + 1, sizeof(*c.charged));
	c.mlocked = calloc(c.nr + 1, sizeof(*c.mlocked));
	c.seen = calloc(nr_nodes, sizeof(*c.seen));
	if (!c.unevictable || !c.isolated || !c.charged || !c.mlocked || !c.seen) {
		check_fail(&c, "out of memory");
		goto out;
	}
	for (unsigned int nid = 0; nid < nr_nodes; nid++) {
		c.seen[nid] = calloc(m->nodes[nid]->nr_pages / 8 + 1, 1);
		if (!c.seen[nid]) {
			check_fail(&c, "out of memory");
			goto out;
		}
	}

	for (size_t i = 0; i < c.nr; i++)
		check_lists(&c, c.lruvecs[i]);
	check_mms(m, check_mm_fail, &c);
	for (unsigned int nid = 0; nid < nr_nodes; nid++)
		check_memmap(&c, m->nodes[nid]);
	check_swap(m, check_mm_fail, &c);
	for (size_t i = 0; i < c.nr; i++) {
		struct lruvec *lruvec = c.lruvecs[i];

		check_shadow_list(lruvec, check_mm_fail, &c);
		if (lruvec->lru_size[LRU_UNEVICTABLE] != c.unevictable[i])
			check_fail(&c, "node %d memcg '%s': unevictable size %lu, folios %lu",
				   lruvec->pgdat->node_id,
				   lruvec->memcg ? lruvec->memcg->name : "-",
				   lruvec->lru_size[LRU_UNEVICTABLE], c.unevictable[i]);
		if (lruvec_nr_mlock(lruvec) != c.mlocked[i])
			check_fail(&c, "node %d memcg '%s': nr_mlock %ld, mlocked pages %ld",
				   lruvec->pgdat->node_id,
				   lruvec->memcg ? lruvec->memcg->name : "-",
				   lruvec_nr_mlock(lruvec), c.mlocked[i]);
		if (lruvec_nr_isolated(lruvec) != c.isolated[i])
			check_fail(&c, "node %d memcg '%s': isolated count %ld, folios %ld",
				   lruvec->pgdat->node_id,
				   lruvec->memcg ? lruvec->memcg->name : "-",
				   lruvec_nr_isolated(lruvec), c.isolated[i]);
	}
	check_size_levels(&c);
	if (m->root) {
		lv_lock_acquire(&m->memcg_mutex);
		check_memcg_usage(&c, m->root);
		/* The mutex keeps removed memcgs from being freed (memcg_rcu_free() takes it). */
		for_each_lruvec_locked(m, true, check_dead_costs, &c);
		lv_lock_release(&m->memcg_mutex);
	}
out:
	if (c.seen)
		for (unsigned int nid = 0; nid < nr_nodes; nid++)
			free(c.seen[nid]);
	free(c.seen);
	free(c.unevictable);
	free(c.isolated);
	free(c.charged);
	free(c.mlocked);
	free(c.lruvecs);
	kcompactd_resume(m);
	if (c.errors > 50)
		fprintf(c.out, "lv_check: ... %lu violations in all\n", c.errors);
	return c.errors ? -EUCLEAN : 0;
}
