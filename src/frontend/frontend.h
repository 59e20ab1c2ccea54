/* The front end the allocation paths go through: its fast paths (in
 * fastpath.h), the slow paths behind them, and what the purger, the
 * report and fork need of the caches. */
#ifndef COREALLOC_FRONTEND_H
#define COREALLOC_FRONTEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frontend/fastpath.h"

/* Chooses and starts the front end (start-up, no allocation); zones must
 * be set up before. */
void frontend_init(void);
const char *frontend_name(void);
/* Empties what caches can be emptied from here into the central layer. */
void frontend_drain(void);
/* Empties the cache of one id (< frontend_id_count()) into the central layer. */
size_t frontend_drain_id(unsigned id);
/* Bytes held in caches (approximate) and how many caches there are. */
size_t frontend_bytes_held(unsigned *caches);
/* In a forked child: forget the caches of threads that do not exist there,
 * and restart those whose drain the fork cut short. */
void frontend_fork_child(void);
/* Ids of per-CPU caches (0 for front ends without them). */
unsigned frontend_id_count(void);
/* Slow-path entries of one id's cache so far: from an empty stack (refills)
 * and a full one (spills). */
void frontend_id_misses(unsigned id, uint64_t *empty, uint64_t *full);
/* A value that changes whenever one id's cache is used, hits included
 * (which count nothing: its misses and where its stacks' tops are), so
 * that a cache serving every call from its stacks is not taken for idle. */
uint64_t frontend_id_activity(unsigned id);

/* The slow paths behind the fast ones: an object of cls for the program
 * (NULL when out of memory), and p (a block of cls, checked and marked
 * free) taken back when its stack is full or stopped. *refilled tells
 * whether the allocation reached the central layer: per-thread caches serve
 * every allocation here, and most from the thread's own stack. */
void *frontend_alloc_slow(unsigned cls, bool *refilled);
void frontend_free_slow(void *p, unsigned cls);
/* p (checked and marked free) when the fast path found it freed on a CPU
 * that does not cut its superblock (FRONTEND_PUSH_LOCAL). */
void frontend_free_foreign(void *p, unsigned cls);
/* A free of p (claimed to be of cls) that the fast check could not vouch
 * for (the free mark is there, or the superblock needs a closer look):
 * true when p is a block the program holds; otherwise reported (`call`
 * names the API function) and false. Then p, checked and marked free
 * (core/block_mark.h), is taken back. */
bool frontend_verify_free(void *p, unsigned cls, const char *call);
void frontend_take_back(void *p, unsigned cls);

#endif
