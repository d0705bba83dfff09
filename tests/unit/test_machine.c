// SPDX-License-Identifier: LGPL-2.1-or-later
/* Machine lifecycle: lv_config_init, lv_machine_create (valid and invalid), lv_machine_config,
 * metadata-only machines, several machines at once, destroy with leaked folios. */
#include "lvtest.h"

#include <string.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <unistd.h>

static void test_defaults(void)
{
	struct lv_config cfg;

	memset(&cfg, 0xa5, sizeof(cfg));
	lv_config_init(&cfg);
	is(cfg.nr_nodes, 1, "default nr_nodes is 1");
	is(cfg.node_mem_bytes, 256 * MiB, "default node_mem_bytes is 256 MiB");
	is(cfg.nr_cpu_slots, 0, "default nr_cpu_slots is 0 (get_nprocs_conf)");
	is(cfg.lock_design, LV_LOCK_LRUVEC, "default lock_design is per-lruvec");
	ok(!cfg.memcg_disabled, "default memcg enabled");
	is(cfg.lock_backend, LV_BACKEND_FUTEX, "default backend futex");
	is(cfg.batch_size, LV_MAX_BATCH, "default batch_size 31");
	is(cfg.disable_mode, LV_DISABLE_SWEEP, "default disable mode sweep");
	ok(!cfg.metadata_only, "default has real data frames");
}

static void test_create_null(void)
{
	struct lv_machine *m = lv_machine_create(NULL);
	const struct lv_config *c;

	ok(m != NULL, "lv_machine_create(NULL) builds a default machine");
	if (!m)
		return;
	c = lv_machine_config(m);
	is(c->nr_nodes, 1, "NULL config: 1 node");
	is(c->node_mem_bytes, 256 * MiB, "NULL config: 256 MiB");
	is(c->nr_cpu_slots, get_nprocs_conf(),
	   "NULL config: nr_cpu_slots filled with get_nprocs_conf()");
	is(c->batch_size, LV_MAX_BATCH, "NULL config: batch 31");
	ok(!c->metadata_only && !c->memcg_disabled, "NULL config: data frames and memcg");
	is(lv_node_stat(m, 0, LV_NR_FREE), (256 * MiB) / LV_PAGE_SIZE,
	   "NULL config: all 65536 pages free");
	ok(lv_memcg_root(m) != NULL, "NULL config: root memcg exists");
	finish(m, "default machine");
}

struct bad_case {
	const char *name;
	void (*mutate)(struct lv_config *c);
};

static void nodes0(struct lv_config *c)
{
	c->nr_nodes = 0;
}
static void nodes65(struct lv_config *c)
{
	c->nr_nodes = 65;
}
static void mem_unaligned(struct lv_config *c)
{
	c->node_mem_bytes = 16 * MiB + 1;
}
static void mem_unaligned2(struct lv_config *c)
{
	c->node_mem_bytes = 16 * MiB + 2048;
}
static void mem_small(struct lv_config *c)
{
	c->node_mem_bytes = 4 * MiB - LV_PAGE_SIZE;
}
static void mem_zero(struct lv_config *c)
{
	c->node_mem_bytes = 0;
}
static void mem_huge(struct lv_config *c)
{
	c->node_mem_bytes = (64ul << 30) + LV_PAGE_SIZE;
}
static void batch0(struct lv_config *c)
{
	c->batch_size = 0;
}
static void batch32(struct lv_config *c)
{
	c->batch_size = 32;
}
static void design2(struct lv_config *c)
{
	c->lock_design = (enum lv_lock_design)2;
}
static void design_neg(struct lv_config *c)
{
	c->lock_design = (enum lv_lock_design) - 1;
}
static void backend4(struct lv_config *c)
{
	c->lock_backend = (enum lv_lock_backend)4;
}
static void backend_neg(struct lv_config *c)
{
	c->lock_backend = (enum lv_lock_backend) - 1;
}
static void mode3(struct lv_config *c)
{
	c->disable_mode = (enum lv_disable_mode)3;
}
static void mode_neg(struct lv_config *c)
{
	c->disable_mode = (enum lv_disable_mode) - 1;
}
static void slots4097(struct lv_config *c)
{
	c->nr_cpu_slots = 4097;
}

static void order7(struct lv_config *c)
{
	c->file_folio_order = LV_MAX_FILE_FOLIO_ORDER + 1;
}
static void thp3(struct lv_config *c)
{
	c->thp = (enum lv_thp_mode)3;
}
static void defrag4(struct lv_config *c)
{
	c->thp_defrag = (enum lv_thp_defrag)4;
}
static void proactive101(struct lv_config *c)
{
	c->compaction_proactiveness = 101;
}
static void protocol2(struct lv_config *c)
{
	c->protocol = (enum lv_protocol)2;
}

static void test_invalid(void)
{
	static const struct bad_case cases[] = {
		{ "nr_nodes 0", nodes0 },
		{ "nr_nodes 65", nodes65 },
		{ "node_mem_bytes not a multiple of 4096 (+1)", mem_unaligned },
		{ "node_mem_bytes not a multiple of 4096 (+2048)", mem_unaligned2 },
		{ "node_mem_bytes below 4 MiB", mem_small },
		{ "node_mem_bytes 0", mem_zero },
		{ "node_mem_bytes above 64 GiB", mem_huge },
		{ "batch_size 0", batch0 },
		{ "batch_size 32", batch32 },
		{ "lock_design 2", design2 },
		{ "lock_design -1", design_neg },
		{ "lock_backend 4", backend4 },
		{ "lock_backend -1", backend_neg },
		{ "disable_mode 3", mode3 },
		{ "disable_mode -1", mode_neg },
		{ "nr_cpu_slots 4097", slots4097 },
		{ "file_folio_order 7", order7 },
		{ "thp 3", thp3 },
		{ "thp_defrag 4", defrag4 },
		{ "compaction_proactiveness 101", proactive101 },
		{ "protocol 2", protocol2 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct lv_config cfg = small_config();
		struct lv_machine *m;

		char field[64];

		cases[i].mutate(&cfg);
		/* Each case's name starts with the field it breaks: lv_config_invalid() names it.
		 */
		snprintf(field, sizeof(field), "%.*s", (int)strcspn(cases[i].name, " "),
			 cases[i].name);
		is_str(lv_config_invalid(&cfg), field, "lv_config_invalid names %s", field);
		errno = 0;
		m = lv_machine_create(&cfg);
		ok(m == NULL && errno == EINVAL, "invalid %s -> NULL, EINVAL", cases[i].name);
		if (m) {
			diag("machine created despite %s", cases[i].name);
			lv_machine_destroy(m);
		}
	}
}

/* The boundaries themselves are valid. */
static void test_boundaries(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m;

	ok(lv_config_invalid(&cfg) == NULL, "lv_config_invalid: a valid configuration -> NULL");
	is_str(lv_config_invalid(NULL), "cfg", "lv_config_invalid(NULL) -> \"cfg\"");

	cfg.node_mem_bytes = 4 * MiB;
	cfg.batch_size = 1;
	m = lv_machine_create(&cfg);
	ok(m != NULL, "4 MiB node and batch_size 1 are valid");
	if (m) {
		is(lv_node_stat(m, 0, LV_NR_FREE), 1024, "4 MiB node has 1024 free pages");
		finish(m, "4 MiB machine");
	}

	cfg = small_config();
	cfg.nr_nodes = LV_MAX_NODES;
	cfg.node_mem_bytes = 4 * MiB;
	cfg.metadata_only = true;
	cfg.batch_size = LV_MAX_BATCH;
	cfg.nr_cpu_slots = 4096;
	m = lv_machine_create(&cfg);
	ok(m != NULL, "64 nodes, 4096 slots and batch_size 31 are valid");
	if (m) {
		struct lv_folio *f = lv_folio_alloc(m, 63, 0, NULL, 0);

		ok(f && lv_folio_nid(f) == 63, "allocation on node 63 of 64");
		if (f)
			lv_folio_put(f);
		is(lv_node_stat(m, 63, LV_NR_FREE), 1024, "node 63 has all its pages back");
		is(lv_machine_config(m)->nr_cpu_slots, 4096, "4096 slots kept");
		finish(m, "64-node machine");
	}

	/* The last backend: the out-of-range table starts one past it. */
	cfg = small_config();
	cfg.lock_backend = LV_BACKEND_ADAPTIVE;
	m = lv_machine_create(&cfg);
	ok(m != NULL, "lock_backend LV_BACKEND_ADAPTIVE is valid");
	if (m) {
		is(lv_machine_config(m)->lock_backend, LV_BACKEND_ADAPTIVE,
		   "the adaptive backend kept");
		finish(m, "adaptive machine");
	}
}

static void test_config_reflects(void)
{
	struct lv_config cfg;
	struct lv_machine *m;
	const struct lv_config *c;

	lv_config_init(&cfg);
	cfg.nr_nodes = 2;
	cfg.node_mem_bytes = 8 * MiB;
	cfg.nr_cpu_slots = 3;
	cfg.lock_design = LV_LOCK_NODE;
	cfg.memcg_disabled = false;
	cfg.lock_backend = LV_BACKEND_MUTEX;
	cfg.batch_size = 7;
	cfg.disable_mode = LV_DISABLE_RCU;
	cfg.metadata_only = true;
	m = new_machine(&cfg);
	/* The machine keeps its own copy. */
	cfg.nr_nodes = 5;
	cfg.batch_size = 9;
	c = lv_machine_config(m);
	is(c->nr_nodes, 2, "config: nr_nodes");
	is(c->node_mem_bytes, 8 * MiB, "config: node_mem_bytes");
	is(c->nr_cpu_slots, 3, "config: nr_cpu_slots");
	is(c->lock_design, LV_LOCK_NODE, "config: lock_design");
	ok(!c->memcg_disabled, "config: memcg_disabled");
	is(c->lock_backend, LV_BACKEND_MUTEX, "config: lock_backend");
	is(c->batch_size, 7, "config: batch_size (not changed by editing the caller's copy)");
	is(c->disable_mode, LV_DISABLE_RCU, "config: disable_mode");
	ok(c->metadata_only, "config: metadata_only");
	is(lv_node_stat(m, 1, LV_NR_FREE), 2048, "node 1 of an 8 MiB machine has 2048 pages");
	is(lv_node_stat(m, 2, LV_NR_FREE), 0, "lv_node_stat on a node that does not exist is 0");
	finish(m, "reflect machine");

	cfg = small_config();
	cfg.nr_cpu_slots = 0;
	cfg.memcg_disabled = true;
	cfg.lock_backend = LV_BACKEND_SPIN;
	m = new_machine(&cfg);
	c = lv_machine_config(m);
	is(c->nr_cpu_slots, get_nprocs_conf(), "nr_cpu_slots 0 becomes get_nprocs_conf()");
	ok(c->memcg_disabled, "config: memcg_disabled kept");
	is(c->lock_backend, LV_BACKEND_SPIN, "config: spin backend kept");
	finish(m, "nprocs machine");
}

static void test_metadata_only(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m;
	struct lv_folio *f;

	cfg.metadata_only = true;
	m = new_machine(&cfg);
	f = alloc_or_bail(m, 0, 3, NULL, LV_FOLIO_ZERO);
	ok(lv_folio_data(f) == NULL, "metadata_only: lv_folio_data is NULL");
	is(lv_folio_nr_pages(f), 8, "metadata_only: folio still has 8 pages");
	lv_folio_put(f);
	finish(m, "metadata machine");

	cfg.metadata_only = false;
	m = new_machine(&cfg);
	f = alloc_or_bail(m, 0, 0, NULL, 0);
	ok(lv_folio_data(f) != NULL, "real frames: lv_folio_data is not NULL");
	lv_folio_put(f);
	finish(m, "data machine");
}

static void test_independent(void)
{
	struct lv_config ca = small_config(), cb = small_config();
	struct lv_machine *a, *b;
	struct lv_folio *fa, *fb;
	struct lv_memcg *mg;
	uint64_t free_b;

	cb.memcg_disabled = true;
	cb.node_mem_bytes = 8 * MiB;
	a = new_machine(&ca);
	b = new_machine(&cb);
	ok(a != b, "two machines are distinct");
	free_b = lv_node_stat(b, 0, LV_NR_FREE);
	is(free_b, 2048, "machine b has its own size");

	mg = lv_memcg_create(a, NULL, "a-child");
	ok(mg != NULL, "memcg in machine a");
	ok(lv_memcg_root(b) == NULL, "machine b (memcg disabled) has no root");
	fa = alloc_or_bail(a, 0, 2, mg, 0);
	is(lv_folio_add_lru(fa), 0, "add in machine a");
	lv_lru_add_drain_all(a);
	is(lv_node_stat(a, 0, LV_NR_INACTIVE_FILE), 4,
	   "machine a: 4 pages on its inactive file list");
	is(lv_node_stat(b, 0, LV_NR_INACTIVE_FILE), 0, "machine b: its lists untouched");
	is(lv_node_stat(b, 0, LV_NR_FREE), free_b, "machine b: free pages untouched");
	is(lv_memcg_usage(mg), 4, "machine a: child charged");

	fb = alloc_or_bail(b, 0, 0, NULL, LV_FOLIO_ANON);
	ok(lv_folio_memcg(fb) == NULL, "machine b: folio not charged");
	ok(lv_folio_data(fa) != lv_folio_data(fb), "machines have distinct frames");
	is(lv_node_stat(a, 0, LV_NR_FREE), SMALL_PAGES - 4,
	   "machine a: unaffected by b's allocation");

	lv_folio_put(fa);
	is(lv_memcg_remove(mg), 0, "remove a's memcg");
	finish(a, "machine a");

	/* b still works after a is gone. */
	is(lv_folio_add_lru(fb), 0, "machine b usable after a is destroyed");
	lv_lru_add_drain_all(b);
	is(lv_node_stat(b, 0, LV_NR_INACTIVE_ANON), 1, "machine b: anon folio on its list");
	lv_folio_put(fb);
	finish(b, "machine b");
}

/* Destroying a machine with folios still allocated reports them on stderr and frees them
 * (ASan would catch a leak or a use after free). */
static void test_destroy_leaked(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_memcg *mg = lv_memcg_create(m, NULL, "leaky");
	char buf[512] = "";
	FILE *tmp = tmpfile();
	int saved;
	ssize_t n;

	ok(mg != NULL, "leak scenario: memcg created");
	alloc_or_bail(m, 0, 0, mg, 0);
	lv_folio_add_lru(alloc_or_bail(m, 0, 1, NULL, LV_FOLIO_ANON));
	lv_folio_add_lru(alloc_or_bail(m, 0, 0, mg, 0)); /* left in a batch */
	if (!tmp)
		BAIL_OUT("tmpfile: %s", strerror(errno));
	fflush(stderr);
	saved = dup(2);
	dup2(fileno(tmp), 2);
	lv_machine_destroy(m);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(tmp);
	n = (ssize_t)fread(buf, 1, sizeof(buf) - 1, tmp);
	fclose(tmp);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	ok(n > 0, "destroy with 3 folios allocated reports them on stderr");
	ok(strstr(buf, "3") != NULL, "the report mentions the 3 folios");
	diag("report: %s", buf);
}

/* Destroy drains the batches first: a folio released while still queued is not a leak. */
static void test_destroy_drains(void)
{
	struct lv_config cfg = small_config();
	struct lv_machine *m = new_machine(&cfg);
	struct lv_folio *f = alloc_or_bail(m, 0, 0, NULL, 0);
	struct lv_folio *g = alloc_or_bail(m, 0, 0, NULL, 0);
	FILE *tmp = tmpfile();
	int saved;
	long size;

	lv_folio_add_lru(g);
	lv_lru_add_drain(m);
	lv_folio_activate(g); /* a queued request holding a reference */
	lv_folio_put(g);
	lv_folio_add_lru(f);
	lv_folio_put(f); /* the lru_add batch holds the last reference */
	ok(lv_node_stat(m, 0, LV_NR_CHARGED) == 2, "two released folios still held by batches");
	if (!tmp)
		BAIL_OUT("tmpfile: %s", strerror(errno));
	fflush(stderr);
	saved = dup(2);
	dup2(fileno(tmp), 2);
	lv_machine_destroy(m);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	fseek(tmp, 0, SEEK_END);
	size = ftell(tmp);
	fclose(tmp);
	is(size, 0, "destroy drains the batches: no leak reported for queued, released folios");
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif

/* Out of address space: NULL with ENOMEM, and the process can still build machines after. */
static void test_create_enomem(void)
{
#ifdef UNDER_SANITIZER
	skip("address-space limits do not mix with sanitizers");
	skip("address-space limits do not mix with sanitizers");
#else
	struct lv_config cfg = small_config();
	struct rlimit old, lim;
	unsigned long vm_pages = 0;
	struct lv_machine *m;
	FILE *statm = fopen("/proc/self/statm", "r");
	int err;

	if (!statm || fscanf(statm, "%lu", &vm_pages) != 1 || getrlimit(RLIMIT_AS, &old)) {
		skip("no /proc/self/statm or getrlimit");
		skip("no /proc/self/statm or getrlimit");
		if (statm)
			fclose(statm);
		return;
	}
	fclose(statm);
	cfg.node_mem_bytes = 1024 * MiB; /* needs 1 GiB of address space for the frames */
	lim = old;
	lim.rlim_cur = vm_pages * (rlim_t)sysconf(_SC_PAGESIZE) + 128 * MiB;
	if (old.rlim_cur != RLIM_INFINITY && old.rlim_cur < lim.rlim_cur)
		lim.rlim_cur = old.rlim_cur;
	setrlimit(RLIMIT_AS, &lim);
	errno = 0;
	m = lv_machine_create(&cfg);
	err = errno;
	setrlimit(RLIMIT_AS, &old);
	ok(m == NULL && err == ENOMEM, "no address space for the frames -> NULL, ENOMEM (errno %d)",
	   err);
	if (m)
		lv_machine_destroy(m);
	cfg.node_mem_bytes = 4 * MiB;
	m = lv_machine_create(&cfg);
	ok(m != NULL, "machines can be built again after the failure");
	if (m)
		lv_machine_destroy(m);
#endif
}

int main(void)
{
	test_defaults();
	test_create_null();
	test_invalid();
	test_boundaries();
	test_config_reflects();
	test_metadata_only();
	test_independent();
	test_destroy_leaked();
	test_destroy_drains();
	test_create_enomem();
	return done_testing();
}
