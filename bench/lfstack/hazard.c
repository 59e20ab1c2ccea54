#include "hazard.h"

#include <stdlib.h>

#include "bench_report.h"

void hazard_domain_init(struct hazard_domain *domain, size_t threads)
{
    domain->record_count = threads;
    domain->scan_threshold = 2 * threads + 16;
    domain->records = bench_alloc_lines(threads, sizeof *domain->records);
    for (size_t i = 0; i < threads; i++)
        domain->records[i].retired =
            bench_check_alloc(malloc(domain->scan_threshold * sizeof(void *)), "retire list");
}

void hazard_protect(struct hazard_record *record, void *node)
{
    /* Sequentially consistent: the store must be visible before the caller
     * re-reads the stack top, or a concurrent scan could miss it. */
    atomic_store(&record->published, node);
}

void hazard_clear(struct hazard_record *record)
{
    atomic_store_explicit(&record->published, NULL, memory_order_release);
}

static int compare_pointers(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;
    return (x > y) - (x < y);
}

static void scan(struct hazard_domain *domain, struct hazard_record *record)
{
    void *published[domain->record_count];
    for (size_t i = 0; i < domain->record_count; i++)
        published[i] = atomic_load(&domain->records[i].published);
    qsort(published, domain->record_count, sizeof published[0], compare_pointers);
    size_t kept = 0;
    for (size_t i = 0; i < record->retired_count; i++) {
        void *node = record->retired[i];
        if (bsearch(&node, published, domain->record_count, sizeof published[0], compare_pointers) != NULL) {
            record->retired[kept++] = node;
        } else {
            free(node);
            record->freed++;
        }
    }
    record->retired_count = kept;
}

void hazard_retire(struct hazard_domain *domain, struct hazard_record *record, void *node)
{
    record->retired[record->retired_count++] = node;
    if (record->retired_count == domain->scan_threshold)
        scan(domain, record);
}

uint64_t hazard_domain_freed(const struct hazard_domain *domain)
{
    uint64_t freed = 0;
    for (size_t i = 0; i < domain->record_count; i++)
        freed += domain->records[i].freed;
    return freed;
}

uint64_t hazard_domain_destroy(struct hazard_domain *domain)
{
    uint64_t leftover = 0;
    for (size_t i = 0; i < domain->record_count; i++) {
        struct hazard_record *record = &domain->records[i];
        for (size_t j = 0; j < record->retired_count; j++)
            free(record->retired[j]);
        leftover += record->retired_count;
        free(record->retired);
    }
    free(domain->records);
    return leftover;
}
