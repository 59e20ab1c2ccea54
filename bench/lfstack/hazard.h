/* Hazard pointers (Michael's scheme) for lfstack: a thread publishes the
 * node it is about to dereference; a popped node is retired rather than
 * freed, and a retired node is freed only once no thread publishes it.
 * Each thread owns one record, so publishing never contends. */
#ifndef LFSTACK_HAZARD_H
#define LFSTACK_HAZARD_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "bench_layout.h"

struct hazard_record {
    _Alignas(BENCH_CACHE_LINE) _Atomic(void *) published;
    void **retired;
    size_t retired_count;
    uint64_t freed; /* retired nodes this thread has freed */
};

struct hazard_domain {
    struct hazard_record *records;
    size_t record_count;
    /* Scanning only when this many nodes are retired keeps the amortised
     * cost per retire constant: more than half of them are always free. */
    size_t scan_threshold;
};

void hazard_domain_init(struct hazard_domain *domain, size_t threads);

/* Publishes `node`; the caller must re-check that it is still reachable. */
void hazard_protect(struct hazard_record *record, void *node);
void hazard_clear(struct hazard_record *record);

/* Hands a node no longer reachable from the stack to deferred freeing. */
void hazard_retire(struct hazard_domain *domain, struct hazard_record *record, void *node);

/* After all threads have stopped: retired nodes freed by scans so far. */
uint64_t hazard_domain_freed(const struct hazard_domain *domain);

/* After all threads have stopped: frees every node still retired and
 * returns how many there were. */
uint64_t hazard_domain_destroy(struct hazard_domain *domain);

#endif
