/* Size classes: every request maps to the smallest class that holds it,
 * classes are at most 12.5% apart and 16-byte aligned (but for the 8-byte
 * class, for requests of up to 8 bytes), the reciprocal division is exact
 * inside a superblock, and the start key tells the starts of the first n
 * blocks from every other offset, for every class and n. */
#include "api/alloc.h"
#include "api/init.h"
#include "core/sizeclass.h"
#include "check.h"

int main(void)
{
    init_ensure();
    CHECK_MSG(sc_info[SC_COUNT - 1].size == SMALL_MAX, "largest class %u", sc_info[SC_COUNT - 1].size);
    for (unsigned c = 0; c < SC_COUNT; c++) {
        unsigned size = sc_info[c].size;
        CHECK_MSG(c == 0 ? size == SC_MIN_SIZE : size % SC_ALIGN == 0, "class %u size %u", c, size);
        if (c > 0) {
            unsigned prev = sc_info[c - 1].size;
            CHECK_MSG(size > prev, "class %u not increasing", c);
            CHECK_MSG(prev <= 128 || (size - prev) * 8 <= prev, "class %u: %u -> %u is over 12.5%%", c, prev, size);
        }
        CHECK_MSG(sc_info[c].blocks == SB_SIZE / size, "class %u blocks", c);
        CHECK_MSG(sc_info[c].batch >= 2 && sc_info[c].batch * 2 <= sc_info[c].limit, "class %u batch", c);
        for (uintptr_t off = 0; off < SB_SIZE; off += SC_MIN_SIZE) {
            CHECK_MSG(sc_block_index(c, off) == off / size, "class %u offset %lu", c, (unsigned long)off);
        }
        CHECK_MSG(sc_block_index(c, SB_SIZE - 1) == (SB_SIZE - 1) / size, "class %u last byte", c);
        unsigned counts[] = {0, 1, sc_info[c].blocks / 2, sc_info[c].blocks};
        for (unsigned k = 0; k < sizeof counts / sizeof counts[0]; k++) {
            uint64_t bound = (uint64_t)counts[k] * sc_info[c].start_step;
            unsigned wrong = 0;
            for (uintptr_t off = 0; off < SB_SIZE; off++)
                wrong += (sc_start_key(c, off) < bound) != (off % size == 0 && off / size < counts[k]);
            CHECK_MSG(wrong == 0, "class %u, %u blocks: %u offsets misjudged", c, counts[k], wrong);
        }
    }
    for (size_t n = 0; n <= SMALL_MAX; n++) {
        unsigned c = sc_of(n);
        REQUIRE_MSG(c < SC_COUNT, "size %zu", n);
        CHECK_MSG(sc_info[c].size >= n, "size %zu in class %u of %u", n, c, sc_info[c].size);
        CHECK_MSG(c == 0 || sc_info[c - 1].size < n, "size %zu not in the smallest class %u", n, c);
    }
    /* Every power of two up to SMALL_MAX is a class (aligned allocation relies on it). */
    for (size_t p = SC_MIN_SIZE; p <= SMALL_MAX; p <<= 1)
        CHECK_MSG(sc_info[sc_of(p)].size == p, "power of two %zu", p);
    /* From 1 KiB, a power of two and a header of up to 1/64 of it (sqlite's
     * 4096 + 8) waste at most that 1/64, not the next 12.5% step. */
    for (size_t p = 1024; p < SMALL_MAX; p <<= 1)
        CHECK_MSG(sc_info[sc_of(p + 8)].size == p + p / 64 && sc_info[sc_of(p + p / 64 + 1)].size == p + p / 8,
                  "the classes just above %zu: %u, then %u", p, sc_info[sc_of(p + 8)].size,
                  sc_info[sc_of(p + p / 64 + 1)].size);
    return check_status();
}
