// Every C++ operator new/delete form, on corealloc. new loops through the
// new_handler and throws std::bad_alloc when there is none; nothrow forms
// return nullptr instead.
//
// The C++ runtime these need is the program's own: it is referenced weakly
// and not linked, so a C program does not load libstdc++ (over a megabyte of
// resident pages) for operators it never calls. A program that calls
// operator new has the runtime loaded already.
#include <cstddef>
#include <new>

#include "corealloc.h"
#include "api/cxx_new.h"
extern "C" {
#include "platform/diag.h"
}

#define EXPORT __attribute__((visibility("default")))
#define WEAK __attribute__((weak))

namespace std {
WEAK new_handler get_new_handler() noexcept;
[[noreturn]] WEAK void __throw_bad_alloc();
} // namespace std
// What the compiler emits for try/catch, made weak the same way.
asm(".weak __cxa_begin_catch\n.weak __cxa_end_catch\n.weak __gxx_personality_v0\n.weak _Unwind_Resume\n"
    ".weak _ZSt9terminatev");

namespace {

// alignment 0: plain new, which needs no more than malloc gives. An explicit
// alignment, even a small one, may exceed it (blocks of up to 8 bytes are
// only 8-aligned).
void *attempt(std::size_t size, std::size_t alignment)
{
    return alignment ? corealloc_aligned_alloc(alignment, size) : corealloc_malloc(size);
}

std::new_handler current_handler()
{
    return std::get_new_handler ? std::get_new_handler() : nullptr;
}

// After an attempt failed: the new_handler, and another attempt, until one
// succeeds or there is no handler.
void *allocate_after_failure(std::size_t size, std::size_t alignment)
{
    for (;;) {
        std::new_handler handler = current_handler();
        if (!handler) {
            if (!std::__throw_bad_alloc)
                diag_fatal("operator new: out of memory, and no C++ runtime loaded to throw std::bad_alloc");
            std::__throw_bad_alloc();
        }
        handler();
        if (void *p = attempt(size, alignment))
            return p;
    }
}

void *allocate(std::size_t size, std::size_t alignment)
{
    if (void *p = attempt(size, alignment))
        return p;
    return allocate_after_failure(size, alignment);
}

// No exception of ours: out of memory, the C++ runtime may have no memory
// to throw one either, and then it ends the process (std::terminate) where
// nullptr was due. Only a new_handler's own exception is caught.
void *allocate_nothrow(std::size_t size, std::size_t alignment) noexcept
{
    for (;;) {
        if (void *p = attempt(size, alignment))
            return p;
        std::new_handler handler = current_handler();
        if (!handler)
            return nullptr;
        try {
            handler();
        } catch (...) {
            return nullptr;
        }
    }
}

} // namespace

using std::align_val_t;
using std::nothrow_t;
using std::size_t;

extern "C" void *alloc_cxx_new_failed(size_t n) { return allocate_after_failure(n, 0); }

// operator new(size_t), new[](size_t), and plain and sized delete and
// delete[] are aliases in api/exports.c.
EXPORT void *operator new(size_t n, const nothrow_t &) noexcept { return allocate_nothrow(n, 0); }
EXPORT void *operator new[](size_t n, const nothrow_t &) noexcept { return allocate_nothrow(n, 0); }
EXPORT void *operator new(size_t n, align_val_t a) { return allocate(n, size_t(a)); }
EXPORT void *operator new[](size_t n, align_val_t a) { return allocate(n, size_t(a)); }
EXPORT void *operator new(size_t n, align_val_t a, const nothrow_t &) noexcept
{
    return allocate_nothrow(n, size_t(a));
}
EXPORT void *operator new[](size_t n, align_val_t a, const nothrow_t &) noexcept
{
    return allocate_nothrow(n, size_t(a));
}

EXPORT void operator delete(void *p, const nothrow_t &) noexcept { corealloc_free(p); }
EXPORT void operator delete[](void *p, const nothrow_t &) noexcept { corealloc_free(p); }
EXPORT void operator delete(void *p, align_val_t) noexcept { corealloc_free(p); }
EXPORT void operator delete[](void *p, align_val_t) noexcept { corealloc_free(p); }
EXPORT void operator delete(void *p, align_val_t, const nothrow_t &) noexcept { corealloc_free(p); }
EXPORT void operator delete[](void *p, align_val_t, const nothrow_t &) noexcept { corealloc_free(p); }
EXPORT void operator delete(void *p, size_t n, align_val_t) noexcept { corealloc_free_sized(p, n); }
EXPORT void operator delete[](void *p, size_t n, align_val_t) noexcept { corealloc_free_sized(p, n); }
