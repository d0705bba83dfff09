// SPDX-License-Identifier: LGPL-2.1-or-later
/* Machine lifecycle: configuration, creation and teardown. */
#include "internal.h"
#include "swap.h"

#include <string.h>
#include <sys/sysinfo.h>

void lv_config_init(struct lv_config *cfg)
{
	*cfg = (struct lv_config){
		.nr_nodes = 1,
		.node_mem_bytes = 256ul << 20,
		.nr_cpu_slots = 0,
		.lock_design = LV_LOCK_LRUVEC,
		.memcg_disabled = false,
		.lock_backend = LV_BACKEND_FUTEX,
		.batch_size = LV_MAX_BATCH,
		.disable_mode = LV_DISABLE_SWEEP,
		.metadata_only = false,
		.thp = LV_THP_MADVISE,
		.thp_defrag = LV_THP_DEFRAG_MADVISE,
		.compaction_proactiveness = 20,
		.compact_unevictable_allowed = true,
		.protocol = LV_PROTOCOL_PIN,
		.swappiness = 60,
		.page_cluster = 3,
		.charge_moving = true,
		.scan_cost = LV_COST_LOCKED,
		.batch_large = false,
		.batch_policy = LV_BATCH_ARRIVAL,
	};
}

const char *lv_config_invalid(const struct lv_config *c)
{
	if (!c)
		return "cfg";
	if (c->nr_nodes < 1 || c->nr_nodes > LV_MAX_NODES)
		return "nr_nodes";
	if (c->node_mem_bytes % LV_PAGE_SIZE || c->node_mem_bytes < (4ul << 20) ||
	    c->node_mem_bytes > (64ul << 30))
		return "node_mem_bytes";
	if (c->nr_cpu_slots > 4096)
		return "nr_cpu_slots";
	if (c->lock_design != LV_LOCK_LRUVEC && c->lock_design != LV_LOCK_NODE)
		return "lock_design";
	if (c->lock_backend != LV_BACKEND_FUTEX && c->lock_backend != LV_BACKEND_MUTEX &&
	    c->lock_backend != LV_BACKEND_SPIN && c->lock_backend != LV_BACKEND_ADAPTIVE)
		return "lock_backend";
	if (c->batch_size < 1 || c->batch_size > LV_MAX_BATCH)
		return "batch_size";
	if (c->disable_mode != LV_DISABLE_SWEEP && c->disable_mode != LV_DISABLE_RCU &&
	    c->disable_mode != LV_DISABLE_RCU_EXPEDITED)
		return "disable_mode";
	if (c->file_folio_order > LV_MAX_FILE_FOLIO_ORDER)
		return "file_folio_order";
	if (c->thp != LV_THP_MADVISE && c->thp != LV_THP_ALWAYS && c->thp != LV_THP_NEVER)
		return "thp";
	if (c->thp_defrag != LV_THP_DEFRAG_MADVISE && c->thp_defrag != LV_THP_DEFRAG_ALWAYS &&
	    c->thp_defrag != LV_THP_DEFRAG_DEFER && c->thp_defrag != LV_THP_DEFRAG_NEVER)
		return "thp_defrag";
	if (c->compaction_proactiveness > 100)
		return "compaction_proactiveness";
	if (c->protocol != LV_PROTOCOL_PIN && c->protocol != LV_PROTOCOL_V1)
		return "protocol";
	if (c->swappiness > 200)
		return "swappiness";
	if (c->page_cluster > 5)
		return "page_cluster";
	if (c->scan_cost != LV_COST_LOCKED && c->scan_cost != LV_COST_VMSTAT)
		return "scan_cost";
	if (c->batch_policy != LV_BATCH_ARRIVAL && c->batch_policy != LV_BATCH_SORTED &&
	    c->batch_policy != LV_BATCH_PER_LRUVEC)
		return "batch_policy";
	if (c->readahead_pages > LV_MAX_READAHEAD)
		return "readahead_pages";
	return NULL;
}

static void machine_free(struct lv_machine *m)
{
	kcompactd_stop(m);
	kswapd_stop(m);
	mem_cgroup_exit(m);
	pcp_exit(m);
	for (unsigned int nid = 0; m->nodes && nid < m->cfg.nr_nodes; nid++)
		node_exit(m, (int)nid);
	cpu_slots_exit(m);
	lv_lock_destroy(&m->memcg_mutex);
	lv_lock_destroy(&m->drain.mutex);
	lv_lock_destroy(&m->drop_drain.mutex);
	for (int i = 0; i < 64; i++) {
		pthread_mutex_destroy(&m->fill_wait[i].lock);
		pthread_cond_destroy(&m->fill_wait[i].cond);
	}
	xa_cache_destroy(m);
	free(m->nodes);
	lock_sites_destroy(m->lock_sites);
	free(m);
}

struct lv_machine *lv_machine_create(const struct lv_config *cfg)
{
	struct lv_config defaults;
	struct lv_machine *m;
	const char *bad;

	if (!cfg) {
		lv_config_init(&defaults);
		cfg = &defaults;
	}
	if ((bad = lv_config_invalid(cfg))) {
#ifdef LV_DEBUG
		fprintf(stderr, "lruvec: lv_machine_create: cfg.%s is out of range\n", bad);
#endif
		errno = EINVAL;
		return NULL;
	}
	m = aligned_alloc(64, sizeof(*m));
	if (!m)
		goto nomem;
	memset(m, 0, sizeof(*m));
	m->cfg = *cfg;
	m->nr_slots = cfg->nr_cpu_slots ? cfg->nr_cpu_slots : (unsigned int)get_nprocs_conf();
	if (m->nr_slots == 0)
		m->nr_slots = 1;
	m->cfg.nr_cpu_slots = m->nr_slots;
	/* Before the first lock: every lock keeps the table's address from its init. */
	if (!cfg->no_lock_sites && !(m->lock_sites = lock_sites_create())) {
		free(m);
		goto nomem;
	}
	lv_lock_init(&m->memcg_mutex, cfg->lock_backend, LV_LOCK_CLASS_MEMCG, m->lock_sites);
	drain_gate_init(m, &m->drain);
	drain_gate_init(m, &m->drop_drain);
	INIT_LIST_HEAD(&m->files);
	INIT_LIST_HEAD(&m->mms);
	INIT_LIST_HEAD(&m->dying_memcgs);
	pthread_mutex_init(&m->swap_mutex, NULL);
	m->swappiness = cfg->swappiness;
	for (int i = 0; i < 64; i++) {
		pthread_mutex_init(&m->fill_wait[i].lock, NULL);
		pthread_cond_init(&m->fill_wait[i].cond, NULL);
	}
	pthread_mutex_init(&m->xa_cache.lock, NULL);
	m->nodes = calloc(cfg->nr_nodes, sizeof(*m->nodes));
	if (!m->nodes || cpu_slots_init(m))
		goto fail;
	for (unsigned int nid = 0; nid < cfg->nr_nodes; nid++)
		if (node_init(m, (int)nid))
			goto fail;
	if (pcp_init(m) || mem_cgroup_init(m) || kswapd_start(m) || kcompactd_start(m))
		goto fail;
	return m;
fail:
	machine_free(m);
nomem:
	errno = ENOMEM;
	return NULL;
}

static unsigned long count_allocated(struct lv_machine *m)
{
	unsigned long nr = 0;

	for (unsigned int nid = 0; nid < m->cfg.nr_nodes; nid++) {
		struct pglist_data *pgdat = m->nodes[nid];

		for (unsigned long pfn = 0; pfn < pgdat->nr_pages; pfn++)
			if (folio_test(&pgdat->memmap[pfn], PG_head))
				nr++;
	}
	return nr;
}

void lv_machine_destroy(struct lv_machine *m)
{
	unsigned long leaked;

	if (!m)
		return;
	kcompactd_stop(m);
	kswapd_stop(m);
	close_all_files(m);
	destroy_all_mms(m);
	swap_exit(m);
	for (unsigned int s = 0; s < m->nr_slots; s++)
		drain_slot(&m->slots[s]);
	leaked = count_allocated(m);
	if (leaked)
		fprintf(stderr, "lruvec: machine destroyed with %lu folios still allocated\n",
			leaked);
	/*
	 * memcg_rcu_free() reads the machine: wait for every pending callback, including the
	 * parent frees that a child's callback queues while we wait.
	 */
	do
		rcu_barrier_lv();
	while (__atomic_load_n(&m->memcgs_freeing, __ATOMIC_ACQUIRE));
	machine_free(m);
}

const struct lv_config *lv_machine_config(const struct lv_machine *m)
{
	return &m->cfg;
}
