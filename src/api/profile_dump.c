#include "api/profile_dump.h"

#include <errno.h>
#include <stdio.h>

#include "api/profile_table.h"
#include "api/textout.h"
#include "platform/os.h"

static void put_site(const struct profile_site *site, void *ctx)
{
    struct sink *s = ctx;
    sink_put(s, "site %llu %.0f %.0f %llu %.0f %.0f %u", (unsigned long long)site->alloc_samples,
             site->alloc_count, site->alloc_bytes, (unsigned long long)site->live_samples,
             site->live_count, site->live_bytes, site->depth);
    for (unsigned i = 0; i < site->depth; i++)
        sink_put(s, " %lx", (unsigned long)(uintptr_t)site->pcs[i]);
    sink_append(s, "\n", 1);
}

int profile_dump_file(const char *path, size_t rate, const char *stacks)
{
    int fd = os_create_file(path);
    if (fd < 0)
        return EIO; /* os_create_file leaves errno as it was */
    struct sink s = {.to_fd = true, .fd = fd};
    sink_put(&s, "corealloc heap profile 1\npid %lu\nrate %zu\nstacks %s\ntime_ns %llu\n",
             os_process_id(), rate, stacks, (unsigned long long)os_monotonic_ns());
    profile_table_visit(put_site, &s);
    sink_put(&s, "maps\n");
    sink_flush(&s);
    int failure = s.error ? s.error : os_copy_file("/proc/self/maps", fd);
    os_close(fd);
    return failure;
}

int profile_dump_next(const char *prefix, size_t rate, const char *stacks)
{
    /* Numbered per process: a forked child starts again at 1. */
    static unsigned long owner, count;
    unsigned long pid = os_process_id();
    if (__atomic_exchange_n(&owner, pid, __ATOMIC_RELAXED) != pid)
        __atomic_store_n(&count, 0, __ATOMIC_RELAXED);
    unsigned long n = __atomic_add_fetch(&count, 1, __ATOMIC_RELAXED);
    char pattern[4096], path[4096];
    if (snprintf(pattern, sizeof pattern, "%s.%%p.%lu.heap", prefix, n) >= (int)sizeof pattern ||
        !path_with_pid(pattern, path, sizeof path))
        return ENAMETOOLONG;
    return profile_dump_file(path, rate, stacks);
}
