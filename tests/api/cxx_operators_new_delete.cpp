// Every C++ operator new/delete form: results, alignment, std::bad_alloc on
// failure, nothrow forms returning nullptr, and the new_handler protocol.
#include "check.h"
#include "probe.h"

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <new>

namespace {

// Keeps the compiler from eliding or folding an allocation.
void escape(void *p)
{
    asm volatile("" : : "g"(p) : "memory");
}

void check_block(void *p, std::size_t size, std::size_t alignment)
{
    REQUIRE(p != nullptr);
    escape(p);
    CHECK_EQ(reinterpret_cast<std::uintptr_t>(p) % alignment, 0);
    if (corealloc_active())
        CHECK(probe_object_start(p) == p);
    std::memset(p, 0x6B, size);
}

void test_plain_forms()
{
    for (std::size_t size = 0; size < (std::size_t(4) << 20); size = size * 2 + 1) {
        void *p = ::operator new(size);
        check_block(p, size, MALLOC_ALIGNMENT_OF(size));
        ::operator delete(p);
        p = ::operator new(size);
        check_block(p, size, MALLOC_ALIGNMENT_OF(size));
        ::operator delete(p, size);
        p = ::operator new[](size);
        check_block(p, size, MALLOC_ALIGNMENT_OF(size));
        ::operator delete[](p);
        p = ::operator new[](size);
        check_block(p, size, MALLOC_ALIGNMENT_OF(size));
        ::operator delete[](p, size);
        p = ::operator new(size, std::nothrow);
        check_block(p, size, MALLOC_ALIGNMENT_OF(size));
        ::operator delete(p, std::nothrow);
        p = ::operator new[](size, std::nothrow);
        check_block(p, size, MALLOC_ALIGNMENT_OF(size));
        ::operator delete[](p, std::nothrow);
    }
}

void test_aligned_forms()
{
    for (std::size_t align = 16; align <= (std::size_t(1) << 20); align *= 4) {
        std::align_val_t al{align};
        for (std::size_t size : {std::size_t(1), align, 3 * align + 5}) {
            void *p = ::operator new(size, al);
            check_block(p, size, align);
            ::operator delete(p, al);
            p = ::operator new(size, al);
            check_block(p, size, align);
            ::operator delete(p, size, al);
            p = ::operator new[](size, al);
            check_block(p, size, align);
            ::operator delete[](p, al);
            p = ::operator new[](size, al);
            check_block(p, size, align);
            ::operator delete[](p, size, al);
            p = ::operator new(size, al, std::nothrow);
            check_block(p, size, align);
            ::operator delete(p, al, std::nothrow);
            p = ::operator new[](size, al, std::nothrow);
            check_block(p, size, align);
            ::operator delete[](p, al, std::nothrow);
        }
    }
}

struct alignas(256) Overaligned {
    unsigned char bytes[300];
};

void test_expressions()
{
    auto *one = new Overaligned;
    check_block(one, sizeof *one, 256);
    delete one;
    auto *many = new Overaligned[7];
    check_block(many, 7 * sizeof *many, 256);
    delete[] many;
    auto *ints = new int[1000]();
    escape(ints);
    CHECK_EQ(ints[999], 0);
    delete[] ints;
}

// Sizes no allocator can satisfy.
volatile std::size_t impossible = SIZE_MAX - 4096;

// Whether allocate() throws std::bad_alloc.
template <typename Allocate> bool throws_bad_alloc(Allocate allocate)
{
    try {
        escape(allocate());
    } catch (const std::bad_alloc &) {
        return true;
    }
    return false;
}

void test_failure()
{
    CHECK(throws_bad_alloc([] { return ::operator new(impossible); }));
    CHECK(throws_bad_alloc([] { return ::operator new[](impossible, std::align_val_t{64}); }));
    CHECK(::operator new(impossible, std::nothrow) == nullptr);
    CHECK(::operator new[](impossible, std::nothrow) == nullptr);
    CHECK(::operator new(impossible, std::align_val_t{4096}, std::nothrow) == nullptr);
}

int handler_calls;

void handler_then_give_up()
{
    if (++handler_calls == 3)
        std::set_new_handler(nullptr); // the next failure throws
}

// A new_handler is called on every failed attempt until it uninstalls
// itself; then new throws and nothrow new returns nullptr.
void test_new_handler()
{
    std::set_new_handler(handler_then_give_up);
    CHECK(throws_bad_alloc([] { return ::operator new(impossible); }));
    CHECK_EQ(handler_calls, 3);

    handler_calls = 0;
    std::set_new_handler(handler_then_give_up);
    CHECK(::operator new(impossible, std::nothrow) == nullptr);
    CHECK_EQ(handler_calls, 3);

    handler_calls = 0;
    std::set_new_handler(handler_then_give_up);
    CHECK(::operator new(impossible, std::align_val_t{128}, std::nothrow) == nullptr);
    CHECK_EQ(handler_calls, 3);
    std::set_new_handler(nullptr);
}

// new and malloc share one heap: a block from new is known to malloc's
// introspection (under corealloc: its usable size matches).
void test_new_is_corealloc()
{
    if (!corealloc_active())
        return;
    void *p = ::operator new(100);
    CHECK(probe_object_size(p) >= 100);
    ::operator delete(p);
    void *q = ::operator new(100, std::align_val_t{4096});
    CHECK(probe_object_start(static_cast<char *>(q) + 50) == q);
    ::operator delete(q, std::align_val_t{4096});
}

} // namespace

int main()
{
    test_plain_forms();
    test_aligned_forms();
    test_expressions();
    test_failure();
    test_new_handler();
    test_new_is_corealloc();
    return check_status();
}
