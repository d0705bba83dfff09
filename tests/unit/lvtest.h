/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lvtest.h - small helpers shared by the unit tests: machine setup, the lv_check() assertion
 * and teardown that proves every page came back. Public API only.
 */
#ifndef LV_TEST_H
#define LV_TEST_H

#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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
	/*
	 * No background reclaim or compaction: a test that fills a node must not see kswapd or
	 * kcompactd isolate, move or take references on its folios.
	 */
	cfg.no_kswapd = true;
	cfg.no_kcompactd = true;
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

/*
 * finish_mm - the end of a scenario with one address space @mm charged to @memcg: destroying
 * it uncharges everything, after which the memcg can be removed and finish() holds.
 */
static inline void finish_mm(struct lv_machine *m, struct lv_mm *mm, struct lv_memcg *memcg,
			     const char *what)
{
	check_ok(m, what);
	lv_mm_destroy(mm);
	lv_lru_add_drain_all(m);
	is(lv_memcg_usage(memcg), 0, "%s: destroyed: usage 0", what);
	is(lv_memcg_remove(memcg), 0, "%s: memcg removed", what);
	finish(m, what);
}

/* ---- data patterns, files, address spaces ------------------------------------------------- */

static inline double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* struct child_run - what a function run in a child of fork() printed and how it ended. */
struct child_run {
	int status;	   /* as waitpid() reports it */
	double seconds;	   /* from the fork to the child's end */
	char out[1 << 16]; /* its stdout and stderr, NUL-terminated (the first 64 KiB) */
};

/*
 * run_in_child - run @fn in a child of fork() with its stdout and stderr captured: for the
 * paths that end a process (an abort, a watchdog report, a deadlock). A child still running
 * after 30 s is killed (SIGKILL). Call it before the test starts threads of its own.
 */
static inline void run_in_child(void (*fn)(void), struct child_run *o)
{
	double start = now();
	size_t len = 0;
	int fds[2];
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	if (pipe(fds))
		BAIL_OUT("pipe");
	pid = fork();
	if (pid < 0)
		BAIL_OUT("fork");
	if (pid == 0) {
		close(fds[0]);
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		close(fds[1]);
		fn();
		_exit(11); /* @fn should have ended the process */
	}
	close(fds[1]);
	for (;;) {
		struct pollfd p = { fds[0], POLLIN, 0 };
		ssize_t n;

		if (now() - start > 30) {
			kill(pid, SIGKILL);
			break;
		}
		if (poll(&p, 1, 100) <= 0)
			continue;
		n = read(fds[0], o->out + len, sizeof(o->out) - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	o->out[len] = '\0';
	close(fds[0]);
	waitpid(pid, &o->status, 0);
	o->seconds = now() - start;
}

/* pat - the byte at @addr (a virtual address or file offset) in generation @seed: it differs
 * between neighbouring bytes, pages and generations. */
static inline unsigned char pat(uint64_t addr, unsigned int seed)
{
	return (unsigned char)(addr * 131 + (addr >> 12) * 17 + (addr >> 9) + seed * 29 + 1);
}

/* temp_file - an unlinked temporary file of @size bytes of pat(offset, @seed). */
static inline int temp_file(size_t size, unsigned int seed)
{
	const char *dir = getenv("TMPDIR");
	unsigned char *buf = malloc(size ? size : 1);
	char path[PATH_MAX];
	size_t done = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/lvtest-XXXXXX", dir && *dir ? dir : "/tmp");
	fd = mkstemp(path);
	if (fd < 0 || !buf)
		BAIL_OUT("temporary file %s: %s", path, strerror(errno));
	unlink(path);
	for (size_t i = 0; i < size; i++)
		buf[i] = pat(i, seed);
	while (done < size) {
		ssize_t n = write(fd, buf + done, size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			BAIL_OUT("write %s: %s", path, strerror(errno));
		done += (size_t)n;
	}
	free(buf);
	return fd;
}

/* bad_bytes - bytes of @buf[0..@n) unlike a temp_file(@seed) at @off: pat() below @real, 0 after.
 */
static inline size_t bad_bytes(const unsigned char *buf, size_t n, uint64_t off, uint64_t real,
			       unsigned int seed)
{
	size_t bad = 0;

	for (size_t i = 0; i < n; i++)
		bad += buf[i] != (off + i < real ? pat(off + i, seed) : 0);
	return bad;
}

static inline struct lv_memcg *new_memcg(struct lv_machine *m, struct lv_memcg *parent,
					 const char *name)
{
	struct lv_memcg *memcg = lv_memcg_create(m, parent, name);

	if (!memcg)
		BAIL_OUT("lv_memcg_create(%s): %s", name, strerror(errno));
	return memcg;
}

static inline struct lv_mm *new_mm(struct lv_machine *m, struct lv_memcg *memcg, int nid)
{
	struct lv_mm *mm = lv_mm_create(m, memcg, nid);

	if (!mm)
		BAIL_OUT("lv_mm_create(nid %d): %s", nid, strerror(errno));
	return mm;
}

static inline uint64_t map_or_bail(struct lv_mm *mm, size_t len)
{
	uint64_t addr = 0;
	int err = lv_mmap(mm, len, &addr);

	if (err)
		BAIL_OUT("lv_mmap(%zu): %d", len, err);
	return addr;
}

/* write_pat - write pat(@seed) over [@addr, @addr + @len). Return: lv_mm_write's result. */
static inline int write_pat(struct lv_mm *mm, uint64_t addr, size_t len, unsigned int seed)
{
	unsigned char *buf = malloc(len ? len : 1);
	int rc;

	if (!buf)
		BAIL_OUT("out of memory");
	for (size_t i = 0; i < len; i++)
		buf[i] = pat(addr + i, seed);
	rc = lv_mm_write(mm, addr, buf, len);
	free(buf);
	return rc;
}

/*
 * bad_pat - bytes of [@addr, @addr + @len) of @mm unlike pat(@seed); with @seed < 0, bytes that
 * are not zero. Return: that count, or -1 if the read itself failed.
 */
static inline long bad_pat(struct lv_mm *mm, uint64_t addr, size_t len, int seed)
{
	unsigned char *buf = malloc(len ? len : 1);
	long bad = 0;
	int rc;

	if (!buf)
		BAIL_OUT("out of memory");
	memset(buf, 0xa5, len);
	rc = lv_mm_read(mm, addr, buf, len);
	if (rc) {
		diag("lv_mm_read(%#llx, %zu) = %d", (unsigned long long)addr, len, rc);
		free(buf);
		return -1;
	}
	for (size_t i = 0; i < len; i++)
		bad += buf[i] != (seed < 0 ? 0 : pat(addr + i, (unsigned int)seed));
	free(buf);
	return bad;
}

/* zero_or_pat - read page @addr once: 0 if it is all zeros or all pat(@seed), else 1. */
static inline long zero_or_pat(struct lv_mm *mm, uint64_t addr, int seed)
{
	unsigned char buf[LV_PAGE_SIZE];
	bool zero = true, same = true;

	if (lv_mm_read(mm, addr, buf, LV_PAGE_SIZE))
		return 1;
	for (size_t i = 0; i < LV_PAGE_SIZE; i++) {
		zero &= buf[i] == 0;
		same &= buf[i] == pat(addr + i, (unsigned int)seed);
	}
	return !(zero || same);
}

/* start_ready - run @fn(@arg) in a new thread and wait until it sets *@ready (release). */
static inline void start_ready(pthread_t *th, void *(*fn)(void *), void *arg, int *ready)
{
	if (pthread_create(th, NULL, fn, arg))
		BAIL_OUT("pthread_create failed");
	while (!__atomic_load_n(ready, __ATOMIC_ACQUIRE))
		sched_yield();
}

#endif /* LV_TEST_H */
