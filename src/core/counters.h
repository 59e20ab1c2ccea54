/* Process-wide leaf counters of the core: bytes mapped, purged and held,
 * with their peaks. Updated on slow paths only; the report (api/report.c)
 * reads them. */
#ifndef COREALLOC_COUNTERS_H
#define COREALLOC_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

/* Lifts *peak to now if now is higher (concurrent callers welcome). */
void counters_raise_peak(size_t *peak, size_t now);
/* Negative deltas: address space given back. */
void counters_add_mapped(ptrdiff_t bytes);
void counters_add_purged(size_t bytes);
/* Bytes of blocks handed out of superblocks and large blocks in use (what the
 * program holds plus what caches hold); negative deltas release. */
void counters_add_held(ptrdiff_t bytes);
/* held alone, one load (for decisions on slow paths). */
size_t counters_held_bytes(void);

struct counters {
    size_t mapped, mapped_peak;
    size_t held, held_peak;
    uint64_t purged_total;
};
void counters_read(struct counters *out);

#endif
