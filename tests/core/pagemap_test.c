/* The page map: ranges set and read back, neighbours untouched, addresses
 * outside 48 bits rejected, and a new branch of the map faulting once per
 * page it needs. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "api/alloc.h"
#include "api/init.h"
#include "platform/os.h"
#include "core/pagemap.h"
#include "check.h"

static long minor_faults(void)
{
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_minflt;
}

int main(void)
{
    init_ensure();
    uintptr_t base = (uintptr_t)0x7e0000000000ull - 3 * OS_PAGE_SIZE; /* crosses a leaf boundary */
    size_t size = 5000 * OS_PAGE_SIZE;
    CHECK_MSG(pagemap_get(base) == 0, "fresh map reads zero");
    REQUIRE_MSG(pagemap_set_range(base, size, 0x1230), "set range");
    for (uintptr_t a = base; a < base + size; a += OS_PAGE_SIZE / 2)
        CHECK_MSG(pagemap_get(a) == 0x1230, "page %#lx", (unsigned long)a);
    CHECK_MSG(pagemap_get(base - 1) == 0, "page before");
    CHECK_MSG(pagemap_get(base + size) == 0, "page after");
    CHECK_MSG(pagemap_set(base + OS_PAGE_SIZE, 0x4561), "set one");
    CHECK_MSG(pagemap_get(base + OS_PAGE_SIZE + 17) == 0x4561, "one page changed");
    CHECK_MSG(pagemap_get(base + 2 * OS_PAGE_SIZE) == 0x1230, "its neighbour did not");
    CHECK_MSG(pagemap_get((uintptr_t)1 << 50) == 0, "beyond 48 bits reads zero");
    CHECK_MSG(!pagemap_set_range((uintptr_t)1 << 50, OS_PAGE_SIZE, 1), "beyond 48 bits refused");
    CHECK_MSG(pagemap_bytes_mapped() > 0, "map memory accounted");

    /* The next root slot (its page resident now) has no node yet: setting
     * an entry there maps a node and a leaf, and writes one page of each.
     * Read before written, a fresh page faults twice (the zero page, then
     * its copy). */
    uintptr_t fresh = base + ((uintptr_t)1 << 36);
    long faults = minor_faults();
    REQUIRE_MSG(pagemap_set(fresh, 0x7891), "set in a new branch");
    faults = minor_faults() - faults;
    CHECK_MSG(pagemap_get(fresh) == 0x7891, "new branch reads back");
    if (getenv("UNIT_UNDER_EMULATOR")) /* qemu-user performs guest accesses its own way */
        printf("a new node and leaf: %ld page faults (not checked under an emulator)\n", faults);
    else
        CHECK_MSG(faults <= 2, "a new node and leaf cost %ld page faults (one each expected)", faults);
    return check_status();
}
