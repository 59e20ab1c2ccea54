#include "core/sizeclass.h"

#include "arch/prefetch.h"
#include "platform/debug.h"
#include "platform/options.h"
#include "platform/os.h"

struct sizeclass_info sc_info[SC_COUNT];
uint64_t sc_start_mult[SC_COUNT];
uint8_t sc_lut[SC_LUT_MAX + 1];

static unsigned clamp(unsigned v, unsigned lo, unsigned hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static size_t class_size(unsigned cls)
{
    if (cls == 0)
        return SC_MIN_SIZE;
    if (cls <= 8)
        return 16u * cls;
    unsigned doubling = (cls - 9) / 8, step = (cls - 9) % 8;
    size_t base = (size_t)128 << doubling;
    return base + (step + 1) * (base / 8);
}

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
    unsigned cls = 0;
    for (size_t n = 0; n <= SC_LUT_MAX; n++) {
        while (class_size(cls) < n)
            cls++;
        sc_lut[n] = (uint8_t)cls;
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
