/* The C and glibc allocation functions the interposer exports. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "interpose_core.h"
#include "next_alloc.h"

INTERPOSER_EXPORT void *malloc(size_t size)
{
    return observed_malloc(TRACE_MALLOC, size);
}

INTERPOSER_EXPORT void *calloc(size_t count, size_t size)
{
    return observed_calloc(count, size);
}

INTERPOSER_EXPORT void *realloc(void *old, size_t size)
{
    return observed_realloc(TRACE_REALLOC, old, size);
}

INTERPOSER_EXPORT void *reallocarray(void *old, size_t count, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(count, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return observed_realloc(TRACE_REALLOCARRAY, old, total);
}

INTERPOSER_EXPORT void free(void *ptr)
{
    observed_free(TRACE_FREE, ptr);
}

INTERPOSER_EXPORT int posix_memalign(void **out, size_t alignment, size_t size)
{
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0)
        return EINVAL;
    int saved_errno = errno;
    void *ptr = observed_aligned(TRACE_POSIX_MEMALIGN, alignment, size);
    int error = ptr == NULL ? errno : 0;
    errno = saved_errno;
    if (ptr != NULL)
        *out = ptr;
    return error;
}

INTERPOSER_EXPORT void *aligned_alloc(size_t alignment, size_t size)
{
    return observed_aligned(TRACE_ALIGNED_ALLOC, alignment, size);
}

INTERPOSER_EXPORT void *memalign(size_t alignment, size_t size)
{
    return observed_aligned(TRACE_MEMALIGN, alignment, size);
}

INTERPOSER_EXPORT void *valloc(size_t size)
{
    return observed_aligned(TRACE_VALLOC, (size_t)sysconf(_SC_PAGESIZE), size);
}

INTERPOSER_EXPORT void *pvalloc(size_t size)
{
    return observed_aligned(TRACE_PVALLOC, (size_t)sysconf(_SC_PAGESIZE), size);
}

INTERPOSER_EXPORT size_t malloc_usable_size(void *ptr)
{
    if (ptr != NULL && bootstrap_owns(ptr))
        return bootstrap_size(ptr);
    return next_alloc_get()->malloc_usable_size(ptr);
}
