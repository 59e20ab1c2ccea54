/* Block contents (see pattern.h). Patterns are 8-byte words hashed from
 * (seed, word index); a partial last word uses its leading bytes. */
#include "pattern.h"

#include <string.h>

#include "hash.h"

static uint64_t pattern_word(uint64_t seed, uint64_t index)
{
    return hash64(seed * 0x9E3779B97F4A7C15u + index);
}

void pattern_fill(void *block, size_t size, uint64_t seed)
{
    unsigned char *p = block;
    size_t words = size / 8;
    for (size_t i = 0; i < words; i++) {
        uint64_t w = pattern_word(seed, i);
        memcpy(p + 8 * i, &w, 8);
    }
    uint64_t last = pattern_word(seed, words);
    memcpy(p + 8 * words, &last, size % 8);
}

size_t pattern_mismatch(const void *block, size_t size, uint64_t seed)
{
    const unsigned char *p = block;
    size_t words = size / 8;
    for (size_t i = 0; i < words; i++) {
        uint64_t w = pattern_word(seed, i);
        if (memcmp(p + 8 * i, &w, 8) != 0)
            for (size_t k = 0;; k++)
                if (p[8 * i + k] != ((const unsigned char *)&w)[k])
                    return 8 * i + k;
    }
    uint64_t last = pattern_word(seed, words);
    for (size_t k = 0; k < size % 8; k++)
        if (p[8 * words + k] != ((const unsigned char *)&last)[k])
            return 8 * words + k;
    return PATTERN_OK;
}

bool block_filled_with(const void *block, size_t size, unsigned char value)
{
    const unsigned char *p = block;
    for (size_t i = 0; i < size; i++)
        if (p[i] != value)
            return false;
    return true;
}
