/* malloc_usable_size, free_sized, free_aligned_sized, and corealloc's
 * interior-pointer queries (object start and size of every byte). */
#include "check.h"
#include "probe.h"

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

typedef void (*free_sized_fn)(void *, size_t);
typedef void (*free_aligned_sized_fn)(void *, size_t, size_t);

static unsigned char global_array[4096];

static void test_usable_writable(void)
{
    CHECK_EQ(malloc_usable_size(NULL), 0);
    for (size_t size = 1; size < ((size_t)64 << 20); size = size * 3 / 2 + 1) {
        unsigned char *p = malloc(size);
        REQUIRE(p != NULL);
        size_t usable = malloc_usable_size(p);
        CHECK(usable >= size);
        memset(p, 0x3C, usable);
        CHECK_EQ(p[usable - 1], 0x3C);
        free(p);
    }
}

static void test_free_sized(void)
{
    free_sized_fn free_sized = (free_sized_fn)corealloc_symbol("free_sized");
    free_aligned_sized_fn free_aligned_sized =
        (free_aligned_sized_fn)corealloc_symbol("free_aligned_sized");
    if (!free_sized || !free_aligned_sized)
        return; /* glibc before 2.43 has neither; corealloc must have both */
    for (size_t size = 1; size < ((size_t)8 << 20); size = size * 2 + 3) {
        void *p = malloc(size);
        REQUIRE(p != NULL);
        memset(p, 1, size);
        free_sized(p, size);
        for (size_t align = 16; align <= 65536; align *= 16) {
            size_t rounded = (size + align - 1) / align * align;
            void *q = aligned_alloc(align, rounded);
            REQUIRE(q != NULL);
            memset(q, 2, rounded);
            free_aligned_sized(q, align, rounded);
        }
    }
    free_sized(NULL, 10);
    free_aligned_sized(NULL, 64, 64);
}

/* Every byte of a live block maps back to its start and usable size. */
static void check_interior(unsigned char *p, size_t step)
{
    size_t usable = malloc_usable_size(p);
    CHECK_EQ(probe_object_size(p), usable);
    for (size_t k = 0; k < usable; k += step) {
        if (probe_object_start(p + k) != p || probe_object_size(p + k) != usable) {
            CHECK_EQ((uintptr_t)probe_object_start(p + k), (uintptr_t)p);
            CHECK_EQ(probe_object_size(p + k), usable);
            return;
        }
    }
    CHECK(probe_object_start(p + usable - 1) == p);
}

static void test_interior_pointers(void)
{
    enum { N = 64 };
    unsigned char *blocks[N];
    size_t size = 1;
    for (int i = 0; i < N; i++, size = size * 5 / 4 + 7) {
        blocks[i] = malloc(size); /* up to ~10 MiB, neighbours live */
        REQUIRE(blocks[i] != NULL);
    }
    for (int i = 0; i < N; i++) {
        size_t usable = malloc_usable_size(blocks[i]);
        /* every byte up to 1 MiB; beyond that every 64th byte and the end */
        check_interior(blocks[i], usable <= ((size_t)1 << 20) ? 1 : 64);
    }
    unsigned char *huge = malloc((size_t)200 << 20);
    REQUIRE(huge != NULL);
    check_interior(huge, 4093);
    unsigned char *aligned = memalign(4096, 3000);
    REQUIRE(aligned != NULL);
    check_interior(aligned, 1);
    free(aligned);
    free(huge);
    for (int i = 0; i < N; i++)
        free(blocks[i]);
}

static void test_foreign_pointers(void)
{
    unsigned char stack_array[256];
    void *volatile stack_ptr = stack_array;
    CHECK(probe_object_start(stack_ptr) == NULL);
    CHECK_EQ(probe_object_size(stack_ptr), 0);
    CHECK(probe_object_start(global_array + 100) == NULL);
    CHECK_EQ(probe_object_size(global_array), 0);
    CHECK(probe_object_start(NULL) == NULL);
    CHECK_EQ(probe_object_size(NULL), 0);
    CHECK(probe_object_start((void *)test_foreign_pointers) == NULL);
    unsigned char *page =
        mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(page != MAP_FAILED);
    for (size_t k = 0; k < (1 << 16); k += 4096) {
        CHECK(probe_object_start(page + k) == NULL);
        CHECK_EQ(probe_object_size(page + k), 0);
    }
    munmap(page, 1 << 16);
}

int main(void)
{
    test_usable_writable();
    test_free_sized();
    if (corealloc_active()) {
        test_interior_pointers();
        test_foreign_pointers();
    }
    return check_status();
}
