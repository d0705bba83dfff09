// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fault.c - the counter behind fault injection (fault.h): which site is the Nth, and what a
 * failed call leaves in errno. Debug builds only.
 */
#include "fault.h"

#ifdef LV_DEBUG

int fault_armed;

static pthread_mutex_t fault_mutex = PTHREAD_MUTEX_INITIALIZER;
static unsigned long fault_count;	/* fault_mutex: sites reached since fault_inject_start() */
static unsigned long fault_nth;		/* fault_mutex: the one that fails; 0: none */
static struct fault_site *fault_failed; /* fault_mutex: the one that failed */

static const int fault_errno[FAULT_NR_KINDS] = {
	[FAULT_ALLOC] = ENOMEM,	 [FAULT_MMAP] = ENOMEM, [FAULT_FRAME] = ENOMEM,
	[FAULT_CHARGE] = ENOMEM, [FAULT_IO] = EIO,	[FAULT_THREAD] = EAGAIN,
};

bool fault_hit(struct fault_site *site)
{
	bool fail;

	pthread_mutex_lock(&fault_mutex);
	site->hits++;
	fail = ++fault_count == fault_nth;
	if (fail)
		fault_failed = site;
	pthread_mutex_unlock(&fault_mutex);
	if (fail)
		errno = fault_errno[site->kind];
	return fail;
}

void fault_inject_start(unsigned long nth)
{
	pthread_mutex_lock(&fault_mutex);
	for (struct fault_site *s = __start_lv_fault_sites; s < __stop_lv_fault_sites; s++)
		s->hits = 0;
	fault_count = 0;
	fault_nth = nth;
	fault_failed = NULL;
	pthread_mutex_unlock(&fault_mutex);
	__atomic_store_n(&fault_armed, 1, __ATOMIC_SEQ_CST);
}

unsigned long fault_inject_stop(void)
{
	unsigned long n;

	__atomic_store_n(&fault_armed, 0, __ATOMIC_SEQ_CST);
	pthread_mutex_lock(&fault_mutex);
	n = fault_count;
	pthread_mutex_unlock(&fault_mutex);
	return n;
}

const struct fault_site *fault_injected(void)
{
	const struct fault_site *s;

	pthread_mutex_lock(&fault_mutex);
	s = fault_failed;
	pthread_mutex_unlock(&fault_mutex);
	return s;
}

const char *fault_kind_name(enum fault_kind kind)
{
	static const char *const names[FAULT_NR_KINDS] = {
		[FAULT_ALLOC] = "alloc",   [FAULT_MMAP] = "mmap", [FAULT_FRAME] = "frame",
		[FAULT_CHARGE] = "charge", [FAULT_IO] = "io",	  [FAULT_THREAD] = "thread",
	};

	return (unsigned int)kind < FAULT_NR_KINDS ? names[kind] : "?";
}

#endif /* LV_DEBUG */
