/* crashalloc: a deliberately broken allocator for the driver's self-test.
 * It forwards to glibc's malloc and aborts after CRASHALLOC_AFTER (default
 * 1000) allocations, so the driver can show that a crashing allocator is
 * recorded as a failure and the suite goes on. Never used for measurement. */
#include <stdatomic.h>
#include <stdlib.h>

/* glibc's own entry points, exported for exactly this kind of wrapper. */
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *block, size_t size);
extern void __libc_free(void *block);

static atomic_long allocations;

static void count_allocation(void)
{
    static long limit;
    if (limit == 0) {
        /* getenv does not allocate, so it is safe inside malloc. */
        const char *text = getenv("CRASHALLOC_AFTER");
        long parsed = text ? atol(text) : 0;
        limit = parsed > 0 ? parsed : 1000;
    }
    if (atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed) >= limit)
        abort();
}

void *malloc(size_t size)
{
    count_allocation();
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size)
{
    count_allocation();
    return __libc_calloc(count, size);
}

void *realloc(void *block, size_t size)
{
    count_allocation();
    return __libc_realloc(block, size);
}

void free(void *block)
{
    __libc_free(block);
}
