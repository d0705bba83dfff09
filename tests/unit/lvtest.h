/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lvtest.h - small helpers shared by the unit tests: machine setup, the lv_check() assertion
 * and teardown that proves every page came back. Public API only.
 */
#ifndef LV_TEST_H
#define LV_TEST_H

#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lruvec.h"
#include "tap.h"

#define MiB	    (1ul << 20)
#define SMALL_NODE  (16 * MiB)
#define SMALL_PAGES (SMALL_NODE / LV_PAGE_SIZE)

/*
 * small_config - one 16 MiB node and ONE cpu slot: every thread uses the same batches, so
 * "is it still in the batch?" is deterministic even if the scheduler migrates the test.
 */
static inline struct lv_config small_config(void)
{
	struct lv_config cfg;

	lv_config_init(&cfg);
	cfg.node_mem_bytes = SMALL_NODE;
	cfg.nr_cpu_slots = 1;
	/* No background reclaim: a test that fills a node must not see kswapd isolate folios. */
	cfg.no_kswapd = true;
	return cfg;
}

static inline struct lv_machine *new_machine(const struct lv_config *cfg)
{
	struct lv_machine *m = lv_machine_create(cfg);

	if (!m)
		BAIL_OUT("lv_machine_create failed: %s", strerror(errno));
	return m;
}

/* alloc_or_bail - an allocation a scenario depends on (not the one under test). */
static inline struct lv_folio *alloc_or_bail(struct lv_machine *m, int nid, unsigned int order,
					     struct lv_memcg *memcg, unsigned int flags)
{
	struct lv_folio *f = lv_folio_alloc(m, nid, order, memcg, flags);

	if (!f)
		BAIL_OUT("lv_folio_alloc(nid %d, order %u, flags %#x) failed: %s", nid, order,
			 flags, strerror(errno));
	return f;
}

static inline uint64_t nstat(struct lv_machine *m, enum lv_stat_item item)
{
	return lv_node_stat(m, 0, item);
}

/* check_ok - assert lv_check() passes and writes nothing; show its report otherwise. */
static inline int check_ok(struct lv_machine *m, const char *what)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc;

	if (!f)
		BAIL_OUT("open_memstream: %s", strerror(errno));
	rc = lv_check(m, f);
	fclose(f);
	ok(rc == 0 && len == 0, "%s: lv_check passes", what);
	if (rc != 0 || len != 0)
		diag("lv_check returned %d, report:\n%s", rc, buf ? buf : "");
	free(buf);
	return rc;
}

/*
 * finish - the end of every scenario: invariants hold, no page is still allocated on any
 * node, no internal bug was counted; then destroy the machine.
 */
static inline void finish(struct lv_machine *m, const char *what)
{
	unsigned int nr_nodes = lv_machine_config(m)->nr_nodes;
	uint64_t charged = 0;

	check_ok(m, what);
	for (unsigned int nid = 0; nid < nr_nodes; nid++)
		charged += lv_node_stat(m, (int)nid, LV_NR_CHARGED);
	is(charged, 0, "%s: every folio was released", what);
	is(lv_bug_count(m), 0, "%s: no internal bug detected", what);
	lv_machine_destroy(m);
}

#endif /* LV_TEST_H */
