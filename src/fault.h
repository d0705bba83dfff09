/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fault.h - fault injection at every place the library can fail, in debug builds.
 *
 * A site is one call that can fail: a host allocation (malloc, calloc, realloc, aligned_alloc,
 * mmap), a frame allocation, a charge, a pread or pwrite of a file or swap device, a thread
 * creation. Each site is a static struct fault_site placed in the section "lv_fault_sites",
 * so that the list of every site the program links is known before any is reached
 * (fault_sites_begin/end), as the kernel finds its jump labels. The host calls of the library
 * are redirected here by the macros below: every call the library makes is a site without
 * a line of its own. The frame and charge sites are marked in the allocator and the page
 * counter with fault_inject().
 *
 * Disarmed (always, except in tests/unit/test_fault.c), a site costs one relaxed load and a
 * predicted branch; release builds have no sites at all. Armed, every site reached is counted,
 * and the Nth reached (counting from the arming) fails once, as the call would fail: NULL or
 * MAP_FAILED with errno ENOMEM, -1 with errno EIO, EAGAIN from pthread_create, -ENOMEM from a
 * charge. One thread at a time is expected to run while armed, so that N names one site.
 *
 * A file whose host calls are not sites (lv_check()'s scratch memory: a checker that cannot
 * allocate reports a failure, it has no error path) defines LV_NO_FAULT_SITES before
 * including internal.h.
 */
#ifndef LV_FAULT_H
#define LV_FAULT_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

enum fault_kind {
	FAULT_ALLOC,  /* malloc, calloc, realloc, aligned_alloc: NULL, ENOMEM */
	FAULT_MMAP,   /* mmap: MAP_FAILED, ENOMEM */
	FAULT_FRAME,  /* a block of frames from the buddy allocator: none */
	FAULT_CHARGE, /* a memcg charge: over the limit (-ENOMEM) */
	FAULT_IO,     /* pread, pwrite: -1, EIO */
	FAULT_THREAD, /* pthread_create: EAGAIN */
	FAULT_NR_KINDS
};

struct fault_site {
	const char *file;     /* constant */
	const char *func;     /* constant */
	int line;	      /* constant */
	enum fault_kind kind; /* constant */
	unsigned long hits;   /* fault_mutex (fault.c): times reached while armed */
};

#ifdef LV_DEBUG

extern int fault_armed; /* atomic: 0, or 1 while a test counts and fails sites */

bool fault_hit(struct fault_site *site);

/* fault_inject - a site of @kind here: true if it must fail now (errno is set). */
#define fault_inject(kind)                                                                         \
	({                                                                                         \
		static struct fault_site __fault_site                                              \
			__attribute__((section("lv_fault_sites"), used,                            \
				       aligned(8))) = { __FILE__, __func__, __LINE__, (kind), 0 }; \
		__builtin_expect(__atomic_load_n(&fault_armed, __ATOMIC_RELAXED), 0) &&            \
			fault_hit(&__fault_site);                                                  \
	})

/* The sites' list, in link order; the test's table. */
extern struct fault_site __start_lv_fault_sites[], __stop_lv_fault_sites[];

/*
 * fault_inject_start - count every site reached from now on and fail the @nth (1-based; 0
 * fails none). Clears every site's hits.
 */
void fault_inject_start(unsigned long nth);

/* fault_inject_stop - disarm. Return: the sites reached since fault_inject_start(). */
unsigned long fault_inject_stop(void);

/* fault_injected - the site failed since fault_inject_start(), or NULL. */
const struct fault_site *fault_injected(void);

const char *fault_kind_name(enum fault_kind kind);

#ifndef LV_NO_FAULT_SITES
#define malloc(...)	    (fault_inject(FAULT_ALLOC) ? NULL : malloc(__VA_ARGS__))
#define calloc(...)	    (fault_inject(FAULT_ALLOC) ? NULL : calloc(__VA_ARGS__))
#define realloc(...)	    (fault_inject(FAULT_ALLOC) ? NULL : realloc(__VA_ARGS__))
#define aligned_alloc(...)  (fault_inject(FAULT_ALLOC) ? NULL : aligned_alloc(__VA_ARGS__))
#define mmap(...)	    (fault_inject(FAULT_MMAP) ? MAP_FAILED : mmap(__VA_ARGS__))
#define pread(...)	    (fault_inject(FAULT_IO) ? (ssize_t)-1 : pread(__VA_ARGS__))
#define pwrite(...)	    (fault_inject(FAULT_IO) ? (ssize_t)-1 : pwrite(__VA_ARGS__))
#define pthread_create(...) (fault_inject(FAULT_THREAD) ? EAGAIN : pthread_create(__VA_ARGS__))
#endif

#else /* !LV_DEBUG */

#define fault_inject(kind) false

#endif /* LV_DEBUG */

#endif /* LV_FAULT_H */
