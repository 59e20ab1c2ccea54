/* corealloc: a per-CPU memory allocator for Linux.
 *
 * The standard malloc family is exported under its usual names when the
 * library is preloaded or linked. This header adds the prefixed API (usable
 * beside another malloc), interior-pointer queries, trimming and statistics.
 */
#ifndef COREALLOC_H
#define COREALLOC_H

#include <stddef.h>

/* The version of this header; corealloc_version() gives the library's.
 * CMakeLists.txt reads the project's version from these three lines. */
#define COREALLOC_VERSION_MAJOR 0
#define COREALLOC_VERSION_MINOR 1
#define COREALLOC_VERSION_PATCH 0
/* One number for comparisons: 0.1.0 is 100, 1.2.3 is 10203. */
#define COREALLOC_VERSION \
    (COREALLOC_VERSION_MAJOR * 10000 + COREALLOC_VERSION_MINOR * 100 + COREALLOC_VERSION_PATCH)
#define COREALLOC_STRINGIFY_(x) #x
#define COREALLOC_STRINGIFY(x) COREALLOC_STRINGIFY_(x)
/* "0.1.0" */
#define COREALLOC_VERSION_STRING                                                   \
    COREALLOC_STRINGIFY(COREALLOC_VERSION_MAJOR) "." COREALLOC_STRINGIFY(           \
        COREALLOC_VERSION_MINOR) "." COREALLOC_STRINGIFY(COREALLOC_VERSION_PATCH)

/* None of these throws: C++ code calls them with no unwinding around the
 * call (the nothrow and aligned forms of operator delete jump to
 * corealloc_free). */
#define COREALLOC_NOTHROW __attribute__((nothrow))

#ifdef __cplusplus
extern "C" {
#endif

void *corealloc_malloc(size_t size) COREALLOC_NOTHROW;
void *corealloc_calloc(size_t count, size_t size) COREALLOC_NOTHROW;
void *corealloc_realloc(void *ptr, size_t size) COREALLOC_NOTHROW;
void corealloc_free(void *ptr) COREALLOC_NOTHROW;
void corealloc_free_sized(void *ptr, size_t size) COREALLOC_NOTHROW;
void *corealloc_aligned_alloc(size_t alignment, size_t size) COREALLOC_NOTHROW;
int corealloc_posix_memalign(void **out, size_t alignment, size_t size) COREALLOC_NOTHROW;
void corealloc_free_aligned_sized(void *ptr, size_t alignment, size_t size) COREALLOC_NOTHROW;
void *corealloc_memalign(size_t alignment, size_t size) COREALLOC_NOTHROW;
void *corealloc_valloc(size_t size) COREALLOC_NOTHROW;
void *corealloc_pvalloc(size_t size) COREALLOC_NOTHROW;
void *corealloc_reallocarray(void *ptr, size_t count, size_t size) COREALLOC_NOTHROW;
size_t corealloc_usable_size(const void *ptr) COREALLOC_NOTHROW;

/* For any pointer into a live block allocated by corealloc (including
 * interior pointers): the block's first byte and its usable size.
 * For any other pointer: NULL and 0. Constant time. */
void *corealloc_object_start(const void *ptr) COREALLOC_NOTHROW;
size_t corealloc_object_size(const void *ptr) COREALLOC_NOTHROW;

/* Returns every free byte that can be returned to the operating system,
 * including the contents of all caches. Returns the bytes released. */
size_t corealloc_trim(void) COREALLOC_NOTHROW;

/* Statistics report, as text (json == 0) or as one JSON object (json != 0).
 * Writes at most size bytes including the terminating NUL; returns the
 * length the full report needs, like snprintf. Never allocates. */
size_t corealloc_stats_snprint(char *buf, size_t size, int json) COREALLOC_NOTHROW;
/* Writes the report to a file descriptor. Returns 0, or -1 with errno. */
int corealloc_stats_write(int fd, int json) COREALLOC_NOTHROW;

/* Writes a heap profile of the process now (COREALLOC_PROFILE=1 only): to
 * path, or with path NULL to the next of COREALLOC_PROFILE_PREFIX.<pid>.<n>.heap.
 * `corealloc prof --dump FILE [--base OLDER]` turns it into a pprof profile
 * and a flame graph (the live heap, everything allocated, or the growth
 * since OLDER). Returns 0, or -1 with errno (ENOTSUP when not profiling). */
int corealloc_profile_dump(const char *path) COREALLOC_NOTHROW;

/* The library's version, as COREALLOC_VERSION_STRING: a program can
 * compare the library it runs on with the header it was built against. */
const char *corealloc_version(void) COREALLOC_NOTHROW;

/* Name of the active front end: "rseq", "per-thread", or an ablation name. */
const char *corealloc_frontend(void) COREALLOC_NOTHROW;

#ifdef __cplusplus
}
#endif

#endif /* COREALLOC_H */
