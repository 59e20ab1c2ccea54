/* The C++ operators new and delete, exported so that programs whose
 * underlying allocator replaces them (tcmalloc, jemalloc) are still observed.
 * They allocate through the underlying malloc family, which every such
 * allocator pairs correctly with its own delete. */
#include <stddef.h>

#include "interpose_core.h"
#include "next_alloc.h"

/* A failed throwing new defers to the next operator new, which runs the
 * new-handler and throws std::bad_alloc: that cannot be done from C. */
static void *new_or_throw(void *ptr, const char *next_name, size_t size)
{
    if (ptr != NULL)
        return ptr;
    void *(*next_new)(size_t) = (void *(*)(size_t))next_symbol(next_name);
    return next_new != NULL ? next_new(size) : NULL;
}

static void *aligned_new_or_throw(void *ptr, const char *next_name, size_t size, size_t alignment)
{
    if (ptr != NULL)
        return ptr;
    void *(*next_new)(size_t, size_t) = (void *(*)(size_t, size_t))next_symbol(next_name);
    return next_new != NULL ? next_new(size, alignment) : NULL;
}

/* operator new(size_t) and new[](size_t) */
INTERPOSER_EXPORT void *_Znwm(size_t size)
{
    return new_or_throw(observed_malloc(TRACE_NEW, size), "_Znwm", size);
}

INTERPOSER_EXPORT void *_Znam(size_t size)
{
    return new_or_throw(observed_malloc(TRACE_NEW_ARRAY, size), "_Znam", size);
}

/* operator new(size_t, const std::nothrow_t &) and the array form */
INTERPOSER_EXPORT void *_ZnwmRKSt9nothrow_t(size_t size, const void *nothrow)
{
    (void)nothrow;
    return observed_malloc(TRACE_NEW, size);
}

INTERPOSER_EXPORT void *_ZnamRKSt9nothrow_t(size_t size, const void *nothrow)
{
    (void)nothrow;
    return observed_malloc(TRACE_NEW_ARRAY, size);
}

/* operator new(size_t, std::align_val_t) and the array form */
INTERPOSER_EXPORT void *_ZnwmSt11align_val_t(size_t size, size_t alignment)
{
    return aligned_new_or_throw(observed_aligned(TRACE_NEW_ALIGNED, alignment, size),
                                "_ZnwmSt11align_val_t", size, alignment);
}

INTERPOSER_EXPORT void *_ZnamSt11align_val_t(size_t size, size_t alignment)
{
    return aligned_new_or_throw(observed_aligned(TRACE_NEW_ARRAY_ALIGNED, alignment, size),
                                "_ZnamSt11align_val_t", size, alignment);
}

/* operator new(size_t, std::align_val_t, const std::nothrow_t &) and array */
INTERPOSER_EXPORT void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t size, size_t alignment,
                                                          const void *nothrow)
{
    (void)nothrow;
    return observed_aligned(TRACE_NEW_ALIGNED, alignment, size);
}

INTERPOSER_EXPORT void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t size, size_t alignment,
                                                          const void *nothrow)
{
    (void)nothrow;
    return observed_aligned(TRACE_NEW_ARRAY_ALIGNED, alignment, size);
}

/* Every operator delete form: plain, sized, aligned, sized+aligned, nothrow. */
INTERPOSER_EXPORT void _ZdlPv(void *ptr) { observed_free(TRACE_DELETE, ptr); }
INTERPOSER_EXPORT void _ZdaPv(void *ptr) { observed_free(TRACE_DELETE_ARRAY, ptr); }

INTERPOSER_EXPORT void _ZdlPvm(void *ptr, size_t size)
{
    (void)size;
    observed_free(TRACE_DELETE, ptr);
}

INTERPOSER_EXPORT void _ZdaPvm(void *ptr, size_t size)
{
    (void)size;
    observed_free(TRACE_DELETE_ARRAY, ptr);
}

INTERPOSER_EXPORT void _ZdlPvSt11align_val_t(void *ptr, size_t alignment)
{
    (void)alignment;
    observed_free(TRACE_DELETE, ptr);
}

INTERPOSER_EXPORT void _ZdaPvSt11align_val_t(void *ptr, size_t alignment)
{
    (void)alignment;
    observed_free(TRACE_DELETE_ARRAY, ptr);
}

INTERPOSER_EXPORT void _ZdlPvmSt11align_val_t(void *ptr, size_t size, size_t alignment)
{
    (void)size;
    (void)alignment;
    observed_free(TRACE_DELETE, ptr);
}

INTERPOSER_EXPORT void _ZdaPvmSt11align_val_t(void *ptr, size_t size, size_t alignment)
{
    (void)size;
    (void)alignment;
    observed_free(TRACE_DELETE_ARRAY, ptr);
}

INTERPOSER_EXPORT void _ZdlPvRKSt9nothrow_t(void *ptr, const void *nothrow)
{
    (void)nothrow;
    observed_free(TRACE_DELETE, ptr);
}

INTERPOSER_EXPORT void _ZdaPvRKSt9nothrow_t(void *ptr, const void *nothrow)
{
    (void)nothrow;
    observed_free(TRACE_DELETE_ARRAY, ptr);
}

INTERPOSER_EXPORT void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *ptr, size_t alignment,
                                                          const void *nothrow)
{
    (void)alignment;
    (void)nothrow;
    observed_free(TRACE_DELETE, ptr);
}

INTERPOSER_EXPORT void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *ptr, size_t alignment,
                                                          const void *nothrow)
{
    (void)alignment;
    (void)nothrow;
    observed_free(TRACE_DELETE_ARRAY, ptr);
}
