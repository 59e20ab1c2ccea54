/* Resident accounting (src/core/footprint.c): charges add up and are
 * refused, with nothing counted, past COREALLOC_LIMIT_BYTES, the
 * allocator's own metadata counting towards it; recharges are never
 * refused; memory is under pressure past 7/8 of the nearest limit; the
 * peak and the lazily freed bytes are kept apart. From a fake cgroup tree:
 * memory.max is a limit only with COREALLOC_CGROUP_LIMIT, while
 * memory.high and memory.max always bring pressure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/footprint.h"
#include "core/meta.h"
#include "fake_cgroup.h"
#include "platform/options.h"

#define MIB ((size_t)1 << 20)

static struct footprint_stats stats(void)
{
    struct footprint_stats st;
    footprint_stats(&st);
    return st;
}

/* footprint_init with a byte limit and the cgroup tree read from root. */
static void init_with(size_t limit_bytes, bool cgroup_limit, const char *cgroup_root)
{
    opt.limit_bytes = limit_bytes;
    opt.cgroup_limit = cgroup_limit;
    opt.cgroup_root = cgroup_root;
    footprint_init();
}

static void test_limit(void)
{
    init_with(8 * MIB, false, "/nonexistent/corealloc-cgroup"); /* no container limits */
    struct footprint_stats st = stats();
    CHECK_EQ(st.limit, 8 * MIB);
    CHECK_EQ(st.pressure, 7 * MIB);
    CHECK_EQ(st.metadata, 0);
    CHECK(footprint_limited());

    CHECK(footprint_charge(6 * MIB));
    CHECK_EQ(stats().resident, 6 * MIB);
    CHECK_MSG(!footprint_charge(3 * MIB), "9 MiB charged under an 8 MiB limit");
    CHECK_EQ(stats().resident, 6 * MIB); /* a refused charge counts nothing */
    CHECK(!footprint_under_pressure());
    CHECK(footprint_charge(2 * MIB)); /* exactly at the limit */
    CHECK(!footprint_charge(1));
    CHECK(footprint_under_pressure());
    CHECK_EQ(stats().resident_peak, 8 * MIB);

    /* Pages coming back are counted, past the limit too. */
    footprint_recharge(1 * MIB);
    CHECK_EQ(stats().resident, 9 * MIB);
    CHECK_EQ(stats().resident_peak, 9 * MIB);
    footprint_uncharge(4 * MIB);
    CHECK_EQ(stats().resident, 5 * MIB);
    CHECK_EQ(stats().resident_peak, 9 * MIB);
    CHECK(!footprint_under_pressure());

    /* Metadata is resident too: 1 MiB of it leaves room for 2 MiB, not 3. */
    REQUIRE(meta_alloc(64) != NULL);
    CHECK_EQ(stats().metadata, meta_bytes_mapped());
    CHECK(!footprint_charge(3 * MIB - meta_bytes_mapped() + 1));
    CHECK(footprint_charge(3 * MIB - meta_bytes_mapped()));
    footprint_uncharge(8 * MIB - meta_bytes_mapped());
    CHECK_EQ(stats().resident, 0);

    footprint_add_lazy(3 * MIB);
    CHECK_EQ(stats().lazy, 3 * MIB);
    CHECK_EQ(stats().resident, 0);
    footprint_add_lazy(-(ptrdiff_t)(3 * MIB));
    CHECK_EQ(stats().lazy, 0);
}

static void test_purge_at_once(void)
{
    init_with(8 * MIB, false, "/nonexistent/corealloc-cgroup");
    opt.purge_delay_ms = 1000;
    CHECK(!footprint_purge_at_once());
    opt.purge_delay_ms = 0;
    CHECK(footprint_purge_at_once());
    opt.purge_delay_ms = 1000;
    CHECK(footprint_charge(7 * MIB + 1 - meta_bytes_mapped()));
    CHECK(footprint_purge_at_once()); /* past 7/8 of the limit */
    footprint_uncharge(7 * MIB + 1 - meta_bytes_mapped());
}

static void test_no_limit(void)
{
    init_with(0, false, "/nonexistent/corealloc-cgroup");
    CHECK(!footprint_limited());
    CHECK_EQ(stats().pressure, 0);
    CHECK(footprint_charge((size_t)1 << 50));
    CHECK(!footprint_under_pressure());
    footprint_uncharge((size_t)1 << 50);
}

static void test_cgroup(void)
{
    char cgroup[PATH_MAX], root[] = "/tmp/corealloc-footprint.XXXXXX", leaf[PATH_MAX];
    if (!cgroup_own_path(cgroup, sizeof cgroup)) {
        puts("no cgroup v2 path in /proc/self/cgroup: cgroup limits not checked");
        return;
    }
    REQUIRE(mkdtemp(root) != NULL);
    cgroup_make_dirs(root, cgroup, leaf);
    cgroup_write_file(leaf, "memory.max", "67108864\n"); /* 64 MiB */
    cgroup_write_file(leaf, "memory.high", "33554432\n"); /* 32 MiB */
    init_with(0, false, root);
    struct footprint_stats st = stats();
    CHECK_EQ(st.container.memory_max, 64 * MIB);
    CHECK_EQ(st.limit, 0);             /* memory.max is no limit of ours without the option */
    CHECK_EQ(st.pressure, 28 * MIB); /* 7/8 of memory.high, the nearer */
    init_with(0, true, root);
    CHECK_EQ(stats().limit, 64 * MIB);
    CHECK_EQ(stats().pressure, 28 * MIB);
    init_with(16 * MIB, true, root); /* the smaller of the two limits */
    CHECK_EQ(stats().limit, 16 * MIB);
    CHECK_EQ(stats().pressure, 14 * MIB);
    cgroup_remove_tree(root);
}

int main(void)
{
    options_init();
    test_limit();
    test_purge_at_once();
    test_no_limit();
    test_cgroup();
    return check_status();
}
