/* What the heap profiler knows: every sampled block still live, and per
 * call stack what its samples stand for (allocated so far, live now).
 * Kept in metadata memory under one lock; never calls malloc. */
#ifndef COREALLOC_PROFILE_TABLE_H
#define COREALLOC_PROFILE_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROFILE_MAX_FRAMES 64

/* Per call stack: samples, and the allocations and bytes they stand for
 * (estimates: each sample weighs 1/its probability). */
struct profile_site {
    uint64_t alloc_samples, live_samples;
    double alloc_count, alloc_bytes, live_count, live_bytes;
    unsigned depth;
    void *const *pcs;
};

void profile_table_init(void);
/* Records the sampled block at addr (size bytes, standing for weight
 * allocations) allocated from the stack pcs[0..depth). */
void profile_table_add(uintptr_t addr, size_t size, double weight, void *const *pcs, unsigned depth);
/* Forgets the sampled block at addr; false when addr is none. */
bool profile_table_remove(uintptr_t addr);
/* Calls visit for every call stack ever sampled, under the table's lock
 * (visit must not allocate or record). */
void profile_table_visit(void (*visit)(const struct profile_site *site, void *ctx), void *ctx);

#endif
