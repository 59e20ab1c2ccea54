/* Process-wide counters and the statistics report (text or JSON). */
#ifndef COREALLOC_STATS_H
#define COREALLOC_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "footprint.h"

/* Lifts *peak to now if now is higher (concurrent callers welcome). */
void stats_raise_peak(size_t *peak, size_t now);
void stats_add_mapped(size_t bytes);
void stats_add_purged(size_t bytes);
/* Bytes of blocks handed out of superblocks and large blocks in use (what the
 * program holds plus what caches hold); negative deltas release. */
void stats_add_held(ptrdiff_t bytes);
void stats_count_invalid_free(void);
uint64_t stats_invalid_frees(void);
size_t stats_mapped(void);

struct stats_totals {
    size_t in_use;          /* bytes the program holds (small blocks by class size) */
    size_t small_out_bytes; /* small blocks outside superblocks, caches included */
    size_t cached_bytes;    /* of which in caches */
    size_t central_bytes;   /* of which parked in central batches */
    unsigned caches;
    size_t superblocks;
    size_t large_in_use, large_spans, large_free_resident;
    size_t mapped, mapped_peak, metadata, retained_empty, purged_total;
    size_t held, held_peak;
    struct footprint_stats footprint; /* resident estimate, lazy bytes, limits */
};
void stats_totals(struct stats_totals *t);

/* Like snprintf: returns the full length. Never allocates. */
size_t stats_snprint(char *buf, size_t size, bool json);
/* The COREALLOC_STATS report at exit, when asked for. */
void stats_exit_report(void);

#endif
