#include "core/sizeclass.h"

#include "arch/prefetch.h"
#include "platform/debug.h"
#include "platform/options.h"
#include "platform/os.h"

#include <string.h>

struct sizeclass_info sc_info[SC_COUNT];
uint64_t sc_start_mult[SC_COUNT];
uint8_t sc_lut[SC_LUT_MAX + 1];
uint8_t sc_lut_granule[SMALL_MAX / 16];

static unsigned clamp(unsigned v, unsigned lo, unsigned hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* Classes 9 to 32 are eight a doubling from 128 bytes to 1 KiB; from there
 * each doubling has nine, the first 1/64 past its power of two. */
#define SC_FIRST_HEADED 33u
static size_t class_size(unsigned cls)
{
    if (cls == 0)
        return SC_MIN_SIZE;
    if (cls <= 8)
        return 16u * cls;
    if (cls < SC_FIRST_HEADED) {
        unsigned doubling = (cls - 9) / 8, step = (cls - 9) % 8;
        size_t base = (size_t)128 << doubling;
        return base + (step + 1) * (base / 8);
    }
    unsigned doubling = (cls - SC_FIRST_HEADED) / 9, step = (cls - SC_FIRST_HEADED) % 9;
    size_t base = (size_t)1024 << doubling;
    return step == 0 ? base + base / 64 : base + step * (base / 8);
}
_Static_assert(SC_FIRST_HEADED + 5 * 9 == SC_COUNT, "five doublings of nine classes from 1 KiB to SMALL_MAX");

void sizeclass_init(void)
{
    for (unsigned c = 0; c < SC_COUNT; c++) {
        struct sizeclass_info *sc = &sc_info[c];
        sc->size = (uint32_t)class_size(c);
        /* Secure mode keeps a superblock's last page as a guard. */
        sc->blocks = (uint32_t)((SB_SIZE - (opt.secure ? OS_PAGE_SIZE : 0)) / sc->size);
        sc->recip = (((uint64_t)1 << SC_RECIP_SHIFT) + sc->size - 1) / sc->size;
        sc_start_mult[c] = UINT64_MAX / sc->size + 1 + !(sc->size & (sc->size - 1));
        sc->start_step = (uint32_t)(sc_start_mult[c] * sc->size);
        /* A per-thread cache may hold up to 256 KiB of a class (at least
         * 8, at most 256 objects; its capacity grows to that with demand). */
        sc->limit = (uint16_t)clamp((unsigned)((256u << 10) / sc->size), 8, 256);
    }
    CA_ASSERT(sc_info[SC_LINE_SHARING - 1].size < ARCH_CACHE_LINE && sc_info[SC_LINE_SHARING].size >= ARCH_CACHE_LINE);
    sizeclass_set_batch_max(SC_BATCH_THREAD);
    /* Each class takes the sizes above the one before it. */
    size_t below = 0;
    for (unsigned c = 0; c < SC_COUNT; c++) {
        size_t size = sc_info[c].size;
        if (below < SC_LUT_MAX)
            memset(&sc_lut[below + 1], (int)c, (size < SC_LUT_MAX ? size : SC_LUT_MAX) - below);
        if (size > SC_LUT_MAX)
            memset(&sc_lut_granule[below / 16], (int)c, (size - below) / 16);
        below = size;
    }
}

unsigned sizeclass_batch_at_most(unsigned cls, unsigned most)
{
    /* A quarter of what a per-thread cache may hold, 2 to most objects:
     * at most 64 KiB a batch. */
    return clamp(sc_info[cls].limit / 4u, 2, most < SC_BATCH_MAX ? most : SC_BATCH_MAX);
}

void sizeclass_set_batch_max(unsigned most)
{
    for (unsigned c = 0; c < SC_COUNT; c++)
        sc_info[c].batch = (uint16_t)sizeclass_batch_at_most(c, most);
}
