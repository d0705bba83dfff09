// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tenant-cache - a multi-tenant read cache over a real file, built on the lruvec library.
 *
 *   tenant-cache [FILE]
 *
 * A "machine" of the library is a simulated computer: memory made of 4 KiB page frames and the
 * Linux kernel's page LRU managing them. On it this program creates three tenants, each a
 * memory cgroup (memcg) with its own limit on how many pages it may hold:
 *
 *   roomy   no limit
 *   half    half the file's pages
 *   tight   an eighth of the file's pages (far below the file's size)
 *
 * Each tenant opens the file through the library's page cache (lv_file_open()), as a container
 * with its own copy of the file would, and the tenants take turns reading it from start to end,
 * three passes each. Every read goes through lv_file_read(): a page already cached is a hit; a
 * page not cached is a miss, read from FILE with pread(2) into a frame charged to the tenant.
 * When a tenant is at its limit, the library reclaims that tenant's own least recently used
 * pages (memcg limit reclaim), never another tenant's. The roomy tenant is served from memory
 * after its first pass. The other two miss on every page of every pass: reading a file in a
 * cycle larger than the cache evicts each page just before it is needed again, the classic
 * weakness of LRU, so a limit of half the file buys no more hits than one of an eighth.
 *
 * Every byte the library returns is compared with what pread(2) reads from the file itself, and
 * after every read each tenant's usage is compared with its limit. The program prints, per
 * tenant, the pages read, the hits and misses, its usage and its limit. It exits with 0 when
 * every byte matched and no tenant's usage ever exceeded its limit, 1 otherwise, and 2 on a
 * usage error.
 *
 * FILE defaults to the C library's own shared object, found at run time with dladdr(3), so that
 * the program has a real file of a few MiB to read on any glibc system.
 */
#define _GNU_SOURCE
#include <lruvec.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NR_PASSES  3
#define CHUNK_SIZE (64 * 1024) /* bytes per lv_file_read(): 16 pages */

struct tenant {
	const char *name;
	unsigned int limit_divisor; /* limit = file pages / divisor; 0: no limit */
	struct lv_memcg *memcg;
	struct lv_file *file; /* this tenant's page cache over the file */
	uint64_t pages_read;  /* pages touched by its reads (a page once per read) */
	size_t peak_usage;    /* the highest usage seen after a read, in pages */
	bool over_limit;      /* usage was once above the limit */
};

static struct tenant tenants[] = {
	{ .name = "roomy", .limit_divisor = 0 },
	{ .name = "half", .limit_divisor = 2 },
	{ .name = "tight", .limit_divisor = 8 },
};
#define NR_TENANTS (sizeof(tenants) / sizeof(tenants[0]))

/* The C library's file: dladdr() names the object that defines a function we call. */
static const char *libc_path(void)
{
	Dl_info info;

	if (!dladdr((void *)&fopen, &info) || !info.dli_fname || info.dli_fname[0] != '/')
		return NULL;
	return info.dli_fname;
}

/*
 * Read [off, off + len) of the tenant's file through the page cache into @buf and check every
 * byte against pread(2) of the real file into @ref. Return: 0 if all matched, 1 on a mismatch,
 * -1 on an error (already reported).
 */
static int read_and_verify(struct tenant *t, int fd, uint64_t off, size_t len, char *buf, char *ref)
{
	size_t done = 0;

	/* A read may return fewer bytes than asked for; ask again for the rest. */
	while (done < len) {
		long n = lv_file_read(t->file, t->memcg, buf + done, len - done, off + done);

		if (n < 0) {
			fprintf(stderr, "tenant-cache: lv_file_read (%s, offset %" PRIu64 "): %s\n",
				t->name, off + done, strerror((int)-n));
			return -1;
		}
		if (n == 0) {
			fprintf(stderr,
				"tenant-cache: lv_file_read (%s): end of file at %" PRIu64 "\n",
				t->name, off + done);
			return -1;
		}
		done += (size_t)n;
	}
	t->pages_read += (len + LV_PAGE_SIZE - 1) / LV_PAGE_SIZE;

	for (done = 0; done < len;) {
		ssize_t n = pread(fd, ref + done, len - done, (off_t)(off + done));

		if (n < 0) {
			perror("tenant-cache: pread");
			return -1;
		}
		if (n == 0) {
			fprintf(stderr, "tenant-cache: the file shrank while being read\n");
			return -1;
		}
		done += (size_t)n;
	}
	if (memcmp(buf, ref, len)) {
		size_t i = 0;

		while (buf[i] == ref[i])
			i++;
		fprintf(stderr, "tenant-cache: %s: byte %" PRIu64 " differs from the file\n",
			t->name, off + i);
		return 1;
	}
	return 0;
}

/* Create the tenants' memcgs, set their limits and open their page caches of the file. */
static int setup_tenants(struct lv_machine *m, int fd, uint64_t size)
{
	size_t file_pages = (size + LV_PAGE_SIZE - 1) / LV_PAGE_SIZE;

	for (size_t i = 0; i < NR_TENANTS; i++) {
		struct tenant *t = &tenants[i];

		/* A child of the root cgroup; the library copies the name. */
		t->memcg = lv_memcg_create(m, NULL, t->name);
		if (!t->memcg) {
			fprintf(stderr, "tenant-cache: lv_memcg_create: %s\n", strerror(errno));
			return -1;
		}
		if (t->limit_divisor) {
			/* A limit of at least 32 pages, so that one 16-page read always fits. */
			size_t limit = file_pages / t->limit_divisor;
			int err = lv_memcg_set_max(t->memcg, limit < 32 ? 32 : limit);

			if (err) {
				fprintf(stderr, "tenant-cache: lv_memcg_set_max: %s\n",
					strerror(-err));
				return -1;
			}
		}
		/* The library reads the file with pread(2) on @fd; the descriptor stays ours. */
		t->file = lv_file_open(m, fd, size);
		if (!t->file) {
			fprintf(stderr, "tenant-cache: lv_file_open: %s\n", strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* Close the page caches and remove the memcgs (a memcg can only go once it is empty). */
static int teardown_tenants(void)
{
	int ret = 0;

	for (size_t i = 0; i < NR_TENANTS; i++) {
		struct tenant *t = &tenants[i];

		if (t->file)
			lv_file_close(t->file);
		t->file = NULL;
		if (t->memcg) {
			int err = lv_memcg_remove(t->memcg);

			if (err) {
				fprintf(stderr, "tenant-cache: lv_memcg_remove (%s): %s\n", t->name,
					strerror(-err));
				ret = -1;
			}
		}
		t->memcg = NULL;
	}
	return ret;
}

/* The tenants read the whole file in turns, one chunk each, NR_PASSES times over. */
static int run(int fd, uint64_t size, char *buf, char *ref)
{
	int status = 0;

	for (int pass = 0; pass < NR_PASSES; pass++) {
		for (uint64_t off = 0; off < size; off += CHUNK_SIZE) {
			size_t len = size - off < CHUNK_SIZE ? (size_t)(size - off) : CHUNK_SIZE;

			for (size_t i = 0; i < NR_TENANTS; i++) {
				struct tenant *t = &tenants[i];
				int ret = read_and_verify(t, fd, off, len, buf, ref);
				size_t usage = lv_memcg_usage(t->memcg);

				if (ret < 0)
					return -1;
				if (ret > 0)
					status = 1;
				if (usage > t->peak_usage)
					t->peak_usage = usage;
				if (usage > lv_memcg_max(t->memcg))
					t->over_limit = true;
			}
		}
	}
	return status;
}

static void report(void)
{
	printf("%-8s %10s %10s %10s %10s %10s %10s\n", "tenant", "read", "hits", "misses", "usage",
	       "peak", "limit");
	for (size_t i = 0; i < NR_TENANTS; i++) {
		struct tenant *t = &tenants[i];
		/* LV_PGPGIN: pages this memcg's reads brought into the page cache, i.e. misses. */
		uint64_t misses = lv_memcg_stat(t->memcg, LV_PGPGIN);
		size_t max = lv_memcg_max(t->memcg);
		char limit[32];

		if (max == SIZE_MAX)
			snprintf(limit, sizeof(limit), "none");
		else
			snprintf(limit, sizeof(limit), "%zu", max);
		printf("%-8s %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10zu %10zu %10s%s\n",
		       t->name, t->pages_read, t->pages_read - misses, misses,
		       lv_memcg_usage(t->memcg), t->peak_usage, limit,
		       t->over_limit ? "  OVER THE LIMIT" : "");
	}
	printf("(pages of 4 KiB; usage after the last read, peak the highest after any read)\n");
}

int main(int argc, char **argv)
{
	struct lv_config cfg;
	struct lv_machine *m;
	const char *path;
	char *buf = NULL, *ref = NULL;
	struct stat st;
	int fd, status = 1;

	if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
		fprintf(stderr, "usage: tenant-cache [FILE]  (default: the C library's file)\n");
		return 2;
	}
	path = argc == 2 ? argv[1] : libc_path();
	if (!path) {
		fprintf(stderr, "tenant-cache: cannot find the C library's file (a static "
				"build?); name a file to read\n");
		return 1;
	}
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "tenant-cache: %s: %s\n", path, strerror(errno));
		return 1;
	}
	if (fstat(fd, &st) < 0) {
		fprintf(stderr, "tenant-cache: %s: %s\n", path, strerror(errno));
		close(fd);
		return 1;
	}
	if (!S_ISREG(st.st_mode) || st.st_size == 0) {
		fprintf(stderr, "tenant-cache: %s: not a regular file with data\n", path);
		close(fd);
		return 1;
	}

	/*
	 * One node with room for every tenant's share plus slack, between 16 and 256 MiB: a file
	 * larger than that makes the node itself short of memory, and reclaim then also runs for
	 * the node (kswapd, direct reclaim), which the limits never exceed either.
	 */
	lv_config_init(&cfg);
	cfg.node_mem_bytes = (2 * (size_t)st.st_size + (16 << 20)) & ~(size_t)(LV_PAGE_SIZE - 1);
	if (cfg.node_mem_bytes > (256 << 20))
		cfg.node_mem_bytes = 256 << 20;
	m = lv_machine_create(&cfg);
	if (!m) {
		fprintf(stderr, "tenant-cache: lv_machine_create: %s\n", strerror(errno));
		close(fd);
		return 1;
	}

	buf = malloc(CHUNK_SIZE);
	ref = malloc(CHUNK_SIZE);
	if (!buf || !ref) {
		fprintf(stderr, "tenant-cache: out of memory\n");
		goto out;
	}
	if (setup_tenants(m, fd, (uint64_t)st.st_size))
		goto out;

	printf("%s: %" PRIu64 " bytes (%" PRIu64 " pages), %d passes per tenant\n", path,
	       (uint64_t)st.st_size, ((uint64_t)st.st_size + LV_PAGE_SIZE - 1) / LV_PAGE_SIZE,
	       NR_PASSES);
	status = run(fd, (uint64_t)st.st_size, buf, ref);
	if (status < 0) {
		status = 1;
		goto out;
	}
	report();
	for (size_t i = 0; i < NR_TENANTS; i++)
		if (tenants[i].over_limit)
			status = 1;

	/* The library's own consistency check of its lists and counters. */
	if (lv_check(m, stderr)) {
		fprintf(stderr, "tenant-cache: lv_check found inconsistencies\n");
		status = 1;
	}
	printf("%s\n", status ? "FAILED" : "every byte matched, no limit exceeded");
out:
	if (teardown_tenants())
		status = 1;
	lv_machine_destroy(m);
	free(buf);
	free(ref);
	close(fd);
	return status;
}
