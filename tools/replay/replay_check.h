/* Correctness checks made during a checking replay: every block is filled
 * with a pattern unique to its object (common/pattern.h) and verified when
 * it is released; addresses are checked for alignment and against every
 * other live block. */
#ifndef COREALLOC_REPLAY_CHECK_H
#define COREALLOC_REPLAY_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>


/* The alignment malloc(size) must have: the fundamental 16, or less when no
 * object of that size can need 16 (the largest power of two dividing it). */
uint64_t check_required_alignment(uint64_t size, unsigned requested_log2);

/* The live blocks of all replay threads, behind one lock. Each insert
 * returns false and sets *other to the overlapping block's start. */
bool check_live_insert(uintptr_t start, uint64_t size, uintptr_t *other);
void check_live_remove(uintptr_t start);

#endif
