/* Container limits: cgroup memory and CPU limits and the CPU affinity mask,
 * read without allocating (this runs inside the first malloc). */
#ifndef COREALLOC_CONTAINER_H
#define COREALLOC_CONTAINER_H

#include <stddef.h>

/* The limits a container (cgroup) or the affinity mask puts on this process,
 * read once at start-up. Linux only; no allocation. */
struct container_limits {
    size_t memory_max;      /* bytes; 0 when unlimited */
    size_t memory_high;     /* bytes (throttling threshold); 0 when unlimited */
    unsigned cpus_allowed;  /* CPUs in the affinity mask (at least 1) */
    unsigned cpu_quota;     /* CPUs' worth of cgroup CPU bandwidth (ceil(quota/period)); 0 when unlimited */
    int cgroup_version;     /* 2, 1 (memory controller v1 only), or 0 when none found */
};
/* cgroup_root: where the cgroup v2 hierarchy is mounted, or NULL to find it in
 * /proc/self/mountinfo. */
void container_read(const char *cgroup_root, struct container_limits *out);

#endif
