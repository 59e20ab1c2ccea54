/* The central layer of a size class: batches of free objects move between
 * caches and superblocks here. Returning a batch never waits for a lock
 * (it is parked in its CPU's lane, Treiber stacks with an ABA tag); taking
 * one from superblocks does, under the class lock. */
#ifndef COREALLOC_CENTRAL_H
#define COREALLOC_CENTRAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform/os.h"

void central_init(void);
/* Most batches of a class one call below moves: a cache whose stack holds
 * many batches moves several at once, so a class that streams through it
 * pays one call (and one cut or return under the lock) per few batches. */
#define CENTRAL_MOVE_BATCHES 4u
/* Fills out[0..n) with up to n free objects of cls; returns how many (0 only
 * when out of memory). With n a multiple of the class batch, up to n/batch
 * parked batches (CENTRAL_MOVE_BATCHES at most), or n objects cut from
 * superblocks when none is parked.
 * Callers hand out[got - 1] out first and stack the rest, the last on top:
 * the batch parked last goes out first, and blocks cut from superblocks are
 * listed highest address first, so they go out lowest first. */
unsigned central_alloc(unsigned cls, void **out, unsigned n);
/* Takes back n objects of cls. Non-blocking when n is a multiple of the
 * class batch (parked a batch each, objs[n - 1] in the batch parked last,
 * or sent back to the superblocks when the class lock is free). */
void central_free(unsigned cls, void *const *objs, unsigned n);
/* The same for objects freed on a CPU that does not cut their superblock:
 * parked on the lane of the CPU that cuts the superblock of sample (one of
 * them), which takes them first; their neighbours are in use there. */
void central_free_home(unsigned cls, void *const *objs, unsigned n, const void *sample);
/* Purges the class's empty superblocks emptied before older_than_ns, after
 * returning up to batches_back of its central batches to their superblocks
 * (CENTRAL_ALL_BATCHES: all). Returns bytes released. */
#define CENTRAL_ALL_BATCHES UINT32_MAX
size_t central_trim_class(unsigned cls, uint32_t batches_back, uint64_t older_than_ns,
                          enum os_purge_kind kind);
/* Purges the pages of the class's partly used superblocks whose blocks are
 * all free. A scan of every such superblock: for classes that have not
 * needed them for a while. */
size_t central_purge_holes(unsigned cls);
/* Every class drained, every empty superblock and every free page of a
 * partly used one purged (MADV_DONTNEED). */
size_t central_trim(void);
/* Whether a batch parked in the class's lanes holds p. Racy (the stacks
 * change under the walk), so a best guess, for telling double frees. */
bool central_holds(unsigned cls, const void *p);
/* The class's traffic so far, for the purger to judge what is unused. */
struct central_traffic {
    uint64_t activity; /* batch transfers: unchanged means no traffic */
    uint64_t blocks_cut;  /* blocks refills had to take from superblocks */
    uint64_t blocks_free; /* free in the class's superblocks now (approximate) */
    uint64_t returns;     /* blocks given back to superblocks */
    uint32_t parked;   /* batches parked now (approximate) */
};
void central_traffic(unsigned cls, struct central_traffic *out);

struct central_class_stats {
    uint64_t superblocks;      /* superblocks currently formatted for the class */
    uint64_t blocks_out;       /* blocks outside superblocks: caches, central, user */
    uint64_t batches_central;  /* batches parked in the lanes */
    uint64_t refills, spills;  /* batch transfers in each direction */
};
void central_class_stats(unsigned cls, struct central_class_stats *out);

#endif
