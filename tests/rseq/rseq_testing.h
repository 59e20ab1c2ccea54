/* Test-only entry points of src/rseq.c, compiled in only with
 * -DCOREALLOC_TESTING (the tests' own build of rseq.c; the library has none). */
#ifndef COREALLOC_RSEQ_TESTING_H
#define COREALLOC_RSEQ_TESTING_H

/* Call before rseq_init: behave as if membarrier(2) were unavailable, so
 * rseq_fence() takes its sched_setaffinity fallback and rseq_init() keeps
 * cpu_id ids even when mm_cid is preferred. */
void rseq_testing_disable_membarrier(void);

#endif
