/* Block contents for the tests and the trace replayer. Fill patterns: every
 * byte of a block depends on the block's seed and the byte's offset, so a
 * block written by two owners, or moved without its contents, is detected
 * on verification. And uniform contents: calloc's zeros, a memset. */
#ifndef COREALLOC_PATTERN_H
#define COREALLOC_PATTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PATTERN_OK SIZE_MAX

void pattern_fill(void *block, size_t size, uint64_t seed);
/* Offset of the first byte that differs from the pattern, or PATTERN_OK. */
size_t pattern_mismatch(const void *block, size_t size, uint64_t seed);
/* Whether every byte of the block is value. */
bool block_filled_with(const void *block, size_t size, unsigned char value);

#ifdef __cplusplus
}
#endif

#endif
