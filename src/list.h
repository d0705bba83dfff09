/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Doubly linked circular lists with the kernel's names and semantics. */
#ifndef LV_LIST_H
#define LV_LIST_H

#include <stdbool.h>
#include <stddef.h>

struct list_head {
	struct list_head *next, *prev;
};

#define container_of(ptr, type, member)	     ((type *)((char *)(ptr)-offsetof(type, member)))
#define list_entry(ptr, type, member)	     container_of(ptr, type, member)
#define list_first_entry(head, type, member) list_entry((head)->next, type, member)
#define list_last_entry(head, type, member)  list_entry((head)->prev, type, member)
/*
 * No list_for_each_entry: computing an entry from the head sentinel is undefined behaviour
 * that UBSan reports; iterate the links and convert inside the loop.
 */
#define list_for_each(pos, head) for (pos = (head)->next; pos != (head); pos = pos->next)
/* list_for_each_safe - the same, allowing @pos to be deleted: @n holds its successor. */
#define list_for_each_safe(pos, n, head)                                                           \
	for (pos = (head)->next, n = pos->next; pos != (head); pos = n, n = pos->next)

static inline void INIT_LIST_HEAD(struct list_head *h)
{
	h->next = h;
	h->prev = h;
}

static inline void list_insert(struct list_head *n, struct list_head *prev, struct list_head *next)
{
	next->prev = n;
	n->next = next;
	n->prev = prev;
	prev->next = n;
}

static inline void list_add(struct list_head *n, struct list_head *head)
{
	list_insert(n, head, head->next);
}

static inline void list_add_tail(struct list_head *n, struct list_head *head)
{
	list_insert(n, head->prev, head);
}

/* list_splice_tail_init - move every entry of @list to the end of @head; @list ends empty. */
static inline void list_splice_tail_init(struct list_head *list, struct list_head *head)
{
	if (list->next == list)
		return;
	list->next->prev = head->prev;
	head->prev->next = list->next;
	list->prev->next = head;
	head->prev = list->prev;
	INIT_LIST_HEAD(list);
}

/* Poison the links so that a use after unlinking faults instead of corrupting a list. */
#define LIST_POISON1 ((struct list_head *)0x100)
#define LIST_POISON2 ((struct list_head *)0x122)

static inline void list_del(struct list_head *e)
{
	e->next->prev = e->prev;
	e->prev->next = e->next;
	e->next = LIST_POISON1;
	e->prev = LIST_POISON2;
}

/*
 * RCU variants: writers still serialize on their own lock; readers may walk ->next under RCU
 * while an entry is added or removed. A removed entry keeps its ->next, so a reader standing
 * on it finds its way back to the list; its memory must outlive a grace period.
 */
static inline void list_add_tail_rcu(struct list_head *n, struct list_head *head)
{
	n->next = head;
	n->prev = head->prev;
	__atomic_store_n(&head->prev->next, n, __ATOMIC_RELEASE);
	head->prev = n;
}

static inline void list_del_rcu(struct list_head *e)
{
	e->next->prev = e->prev;
	__atomic_store_n(&e->prev->next, e->next, __ATOMIC_RELEASE);
	e->prev = LIST_POISON2;
}

#define list_next_rcu(pos) __atomic_load_n(&(pos)->next, __ATOMIC_ACQUIRE)
#define list_for_each_rcu(pos, head)                                                               \
	for (pos = list_next_rcu(head); pos != (head); pos = list_next_rcu(pos))

static inline bool list_empty(const struct list_head *h)
{
	return h->next == h;
}

#endif /* LV_LIST_H */
