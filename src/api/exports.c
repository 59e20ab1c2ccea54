/* The exported C surface: corealloc.h's prefixed API, and the standard,
 * POSIX and glibc names as aliases of it (aliases keep one definition and
 * let a static link replace libc's malloc whole). */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "api/alloc.h"
#include "api/cxx_new.h"
#include "api/init.h"
#include "api/profile.h"
#include "api/report.h"
#include "corealloc.h"
#include "platform/os.h"

#define EXPORT __attribute__((visibility("default")))
#define ALIAS(target) EXPORT COREALLOC_NOTHROW __attribute__((alias(#target)))

static bool power_of_two(size_t v) { return v && !(v & (v - 1)); }

/* The fast paths start a cache line: each then spans the fewest lines and
 * fetch windows, whatever code elsewhere moves them by (mmicro at one
 * thread, all fast-path hits, ran 1.05-1.07x slower with malloc and free
 * shifted by 32 bytes by an unrelated change). */
#define HOT_ENTRY __attribute__((aligned(64)))

HOT_ENTRY EXPORT void *corealloc_malloc(size_t size) { return alloc_malloc(size); }
HOT_ENTRY EXPORT void corealloc_free(void *ptr) { alloc_free(ptr); }
EXPORT void *corealloc_calloc(size_t count, size_t size) { return alloc_calloc(count, size); }
EXPORT void *corealloc_realloc(void *ptr, size_t size) { return alloc_realloc(ptr, size); }

/* operator new past a miss of the fast path: malloc's slow path, then the
 * C++ side's new_handler loop. Not inlined, so the fast path saves nothing
 * for it. */
__attribute__((noinline)) static void *cxx_new_slow(size_t size)
{
    void *p = alloc_malloc_slow(size);
    return p ? p : alloc_cxx_new_failed(size);
}

/* operator new and new[] (aliases below): a block of size bytes, never
 * NULL (the handler loop throws, or the process ends, when none can be had). */
HOT_ENTRY static void *cxx_new(size_t size)
{
#if PROFILE_IN_FAST_PATH
    if (__builtin_expect(sampler_count(size), 0)) {
        void *p = alloc_malloc_sample_point(size);
        return p ? p : alloc_cxx_new_failed(size);
    }
#endif
    return alloc_malloc_unsampled(size, cxx_new_slow);
}

HOT_ENTRY EXPORT void corealloc_free_sized(void *ptr, size_t size)
{
    (void)size; /* the address already says the size; checking it costs more than it saves */
    alloc_free(ptr);
}

EXPORT void corealloc_free_aligned_sized(void *ptr, size_t alignment, size_t size)
{
    (void)alignment;
    (void)size;
    alloc_free(ptr);
}

EXPORT void *corealloc_aligned_alloc(size_t alignment, size_t size)
{
    if (!power_of_two(alignment)) {
        errno = EINVAL;
        return NULL;
    }
    return alloc_aligned(alignment, size);
}

EXPORT int corealloc_posix_memalign(void **out, size_t alignment, size_t size)
{
    if (!power_of_two(alignment) || alignment % sizeof(void *))
        return EINVAL;
    int saved = errno;
    void *p = alloc_aligned(alignment, size);
    if (!p)
        return ENOMEM; /* errno too, as glibc sets it */
    errno = saved;
    *out = p;
    return 0;
}

EXPORT void *corealloc_memalign(size_t alignment, size_t size)
{
    /* glibc accepts any alignment here up to half the address space and
     * rounds it up to a power of two; one that large is then ENOMEM. */
    if (alignment > SIZE_MAX / 2 + 1) {
        errno = EINVAL;
        return NULL;
    }
    size_t a = 1;
    while (a < alignment)
        a <<= 1;
    return alloc_aligned(a, size);
}

EXPORT void *corealloc_valloc(size_t size)
{
    return alloc_aligned(os_page_size(), size);
}

EXPORT void *corealloc_pvalloc(size_t size)
{
    size_t page = os_page_size();
    size_t rounded = (size + page - 1) & ~(page - 1);
    if (rounded < size) {
        errno = ENOMEM;
        return NULL;
    }
    return alloc_aligned(page, rounded ? rounded : page);
}

EXPORT void *corealloc_reallocarray(void *ptr, size_t count, size_t size)
{
    size_t total;
    if (__builtin_mul_overflow(count, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return alloc_realloc(ptr, total);
}

EXPORT size_t corealloc_usable_size(const void *ptr) { return alloc_usable_size(ptr); }
EXPORT void *corealloc_object_start(const void *ptr) { return alloc_object_start(ptr); }
EXPORT size_t corealloc_object_size(const void *ptr) { return alloc_object_size(ptr); }
EXPORT size_t corealloc_trim(void) { return alloc_trim(); }
EXPORT const char *corealloc_version(void) { return COREALLOC_VERSION_STRING; }
EXPORT const char *corealloc_frontend(void)
{
    init_ensure();
    return alloc_frontend_name();
}

EXPORT size_t corealloc_stats_snprint(char *buf, size_t size, int json)
{
    init_ensure();
    return report_snprint(buf, size, json != 0);
}

EXPORT int corealloc_stats_write(int fd, int json)
{
    init_ensure();
    int failure = report_write(fd, json != 0);
    if (failure) {
        errno = failure;
        return -1;
    }
    return 0;
}

EXPORT int corealloc_profile_dump(const char *path)
{
    init_ensure();
    return profile_dump_api(path);
}

/* The standard names. */
void *malloc(size_t) ALIAS(corealloc_malloc);
void free(void *) ALIAS(corealloc_free);
void cfree(void *) ALIAS(corealloc_free);
void *calloc(size_t, size_t) ALIAS(corealloc_calloc);
void *realloc(void *, size_t) ALIAS(corealloc_realloc);
void *reallocarray(void *, size_t, size_t) ALIAS(corealloc_reallocarray);
void *aligned_alloc(size_t, size_t) ALIAS(corealloc_aligned_alloc);
int posix_memalign(void **, size_t, size_t) ALIAS(corealloc_posix_memalign);
void *memalign(size_t, size_t) ALIAS(corealloc_memalign);
void *valloc(size_t) ALIAS(corealloc_valloc);
void *pvalloc(size_t) ALIAS(corealloc_pvalloc);
size_t malloc_usable_size(void *) ALIAS(corealloc_usable_size);
void free_sized(void *, size_t) ALIAS(corealloc_free_sized);
void free_aligned_sized(void *, size_t, size_t) ALIAS(corealloc_free_aligned_sized);

/* The hot C++ operators by their Itanium ABI names, as aliases (which only
 * a definition in the same object can have, so they are here and not in
 * cxx_operators.cpp with the rest): operator new and new[] are
 * cxx_new, plain and sized delete and delete[] are free and
 * free_sized, each without a jump in between. 'm' is size_t's mangling as
 * unsigned long. */
_Static_assert(_Generic((size_t)0, unsigned long: 1, default: 0), "size_t mangles as unsigned long");
#define CXX_ALIAS(target) EXPORT __attribute__((alias(#target)))
void *_Znwm(size_t) CXX_ALIAS(cxx_new);
void *_Znam(size_t) CXX_ALIAS(cxx_new);
void _ZdlPv(void *) ALIAS(corealloc_free);
void _ZdaPv(void *) ALIAS(corealloc_free);
void _ZdlPvm(void *, size_t) ALIAS(corealloc_free_sized);
void _ZdaPvm(void *, size_t) ALIAS(corealloc_free_sized);

/* glibc's internal names, which some programs and libraries call directly. */
void *__libc_malloc(size_t) ALIAS(corealloc_malloc);
void __libc_free(void *) ALIAS(corealloc_free);
void *__libc_calloc(size_t, size_t) ALIAS(corealloc_calloc);
void *__libc_realloc(void *, size_t) ALIAS(corealloc_realloc);
void *__libc_memalign(size_t, size_t) ALIAS(corealloc_memalign);
void *__libc_valloc(size_t) ALIAS(corealloc_valloc);
void *__libc_pvalloc(size_t) ALIAS(corealloc_pvalloc);
int __posix_memalign(void **, size_t, size_t) ALIAS(corealloc_posix_memalign);
