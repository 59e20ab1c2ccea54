// Every allocation entry point a program can call on corealloc, called
// one way: the C and POSIX functions, glibc's, the prefixed API of
// corealloc.h (only when corealloc is loaded) and the C++ operators, each
// with the ways its blocks may be freed or resized. For the tests that
// drive them all (the fuzzer, fault injection). C++ (library
// corealloc_test_entry_points): the operators need it.
#ifndef COREALLOC_TEST_ENTRY_POINTS_H
#define COREALLOC_TEST_ENTRY_POINTS_H

#include <cstddef>
#include <cstdint>

namespace entry {

// Who may free or resize a block: the function that made it decides.
enum class Family {
    Malloc,          // malloc, calloc, realloc, reallocarray: free, free_sized, realloc
    AlignedAlloc,    // aligned_alloc: free, free_aligned_sized, realloc
    Memalign,        // posix_memalign, memalign, valloc, pvalloc: free, realloc
    New,             // operator new (plain, nothrow): delete, sized delete
    NewArray,        // operator new[]
    NewAligned,      // operator new (align_val_t)
    NewArrayAligned, // operator new[] (align_val_t)
};

// How a call says it failed.
enum class Failure {
    Errno,    // NULL, with errno
    Returned, // posix_memalign: the error is the return value
    Thrown,   // operator new: std::bad_alloc
    Null,     // nothrow new: NULL (errno unspecified)
};

struct Result {
    void *ptr;           // NULL when the call failed
    int error;           // Errno: errno; Returned: the value; Thrown: ENOMEM; Null: 0
    std::size_t size;    // bytes the program may use (calloc: count * size; pvalloc: whole pages)
    std::size_t align;   // alignment the block must have
    bool zeroed;         // calloc: every byte must read 0
};

struct Allocator {
    const char *name;
    Family family;
    Failure failure;
    bool takes_alignment;
    // size, and alignment when takes_alignment (any value: a bad one is
    // the test's to ask for). Sizes are split into count * size where the
    // call takes two.
    Result (*call)(std::size_t size, std::size_t alignment);
};

struct Releaser {
    const char *name;
    Family family;
    // The block's size and alignment as it was asked for (sized forms).
    void (*call)(void *ptr, std::size_t size, std::size_t alignment);
};

// realloc-like: takes a block of the Malloc, AlignedAlloc or Memalign
// family, returns one of the Malloc family (or fails, leaving it alone).
struct Resizer {
    const char *name;
    Result (*call)(void *ptr, std::size_t size);
};

// The entry points this process has (the prefixed API and free_sized,
// free_aligned_sized and cfree only where exported).
const Allocator *allocators(std::size_t *count);
const Releaser *releasers(std::size_t *count);
const Resizer *resizers(std::size_t *count);
// The n-th (modulo their number) releaser of a family.
const Releaser &releaser_for(Family family, std::uint64_t n);

// Whether the block a call returned is what it promised: alignment,
// malloc_usable_size (and corealloc_usable_size, corealloc_object_start
// and corealloc_object_size of its last byte, when corealloc is loaded)
// covering the size, zeroes for calloc. Failures are reported as checks
// naming `what`; returns whether all held.
bool block_keeps_promises(const Result &r, const char *what);
// Whether a failed call failed as its entry point must when memory cannot
// be had: NULL with ENOMEM, ENOMEM returned, std::bad_alloc or NULL.
bool failed_for_memory(const Result &r, Failure failure);

} // namespace entry

#endif
