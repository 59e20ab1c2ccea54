#include "api/secure.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/block_mark.h"
#include "core/sizeclass.h"
#include "platform/debug.h"
#include "platform/diag.h"
#include "platform/os.h"

_Static_assert(SECURE_TRAILER_BYTES == sizeof(uint64_t), "the trailer is one word");

static uint64_t secret;

void secure_init(void)
{
    secret = os_random_seed();
}

/* Seals a size to its block: a program that overwrites the trailer does
 * not know what to write. */
static uint32_t seal(uintptr_t p, uint32_t size)
{
    uint64_t x = (p ^ secret) + size * 0x9E3779B97F4A7C15ull;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    return (uint32_t)(x >> 32);
}

/* The canary byte of a block: never the fill, so a canary never passes for
 * a free block's contents. */
static unsigned char canary(uintptr_t p)
{
    unsigned char c = (unsigned char)(seal(p, 0) | 1);
    return c == BLOCK_FREE_FILL ? (unsigned char)(c ^ 2) : c;
}

static uint64_t *trailer(const void *p, size_t capacity)
{
    return (uint64_t *)((char *)p + capacity - SECURE_TRAILER_BYTES);
}

/* Whether [from, from + n) holds byte b only. */
static bool all_bytes(const unsigned char *from, size_t n, unsigned char b)
{
    for (size_t i = 0; i < n; i++)
        if (from[i] != b)
            return false;
    return true;
}

/* The trailer holds the canary's length (under a page for large blocks,
 * whose capacity is the request rounded up to pages), so one word serves
 * blocks of any size. */
void secure_seal(void *p, size_t capacity, size_t size)
{
    size_t room = capacity - SECURE_TRAILER_BYTES, slack = room - size;
    CA_ASSERT(size <= room && slack <= UINT32_MAX);
    memset((char *)p + size, canary((uintptr_t)p), slack);
    *trailer(p, capacity) = (uint64_t)slack | (uint64_t)seal((uintptr_t)p, (uint32_t)slack) << 32;
}

/* The size sealed in p's trailer, or SIZE_MAX when the seal is broken. */
static size_t unsealed_size(const void *p, size_t capacity)
{
    uint64_t t = *trailer(p, capacity);
    uint32_t slack = (uint32_t)t;
    size_t room = capacity - SECURE_TRAILER_BYTES;
    bool intact = (uint32_t)(t >> 32) == seal((uintptr_t)p, slack) && slack <= room;
    return intact ? room - slack : SIZE_MAX;
}

size_t secure_requested_size(const void *p, size_t capacity)
{
    size_t size = unsealed_size(p, capacity);
    return size != SIZE_MAX ? size : capacity - SECURE_TRAILER_BYTES;
}

void secure_check_seal(const void *p, size_t capacity, const char *call)
{
    size_t size = unsealed_size(p, capacity);
    if (size == SIZE_MAX)
        diag_heap_corruption(call, p, "written past its size: its trailer was overwritten");
    else if (!all_bytes((const unsigned char *)p + size, capacity - SECURE_TRAILER_BYTES - size,
                        canary((uintptr_t)p)))
        diag_heap_corruption(call, p, "written past its size: its canary was overwritten");
}

void secure_handing_out(void *p, unsigned cls, size_t size)
{
    if (!all_bytes((unsigned char *)p + sizeof(uintptr_t), sc_info[cls].size - sizeof(uintptr_t), BLOCK_FREE_FILL))
        diag_heap_corruption("malloc", p, "written after it was freed");
    secure_seal(p, sc_info[cls].size, size);
}

void secure_taking_back(void *p, unsigned cls, const char *call)
{
    secure_check_seal(p, sc_info[cls].size, call);
    block_fill_free(p, sc_info[cls].size);
}
