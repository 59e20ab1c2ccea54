/* A memory limit (COREALLOC_LIMIT_BYTES, or a cgroup's memory.max with
 * COREALLOC_CGROUP_LIMIT=1) makes allocation fail with ENOMEM, losing
 * nothing, instead of growing past it; freeing makes room again.
 *
 *   limit bytes <MiB>      the limit comes from the environment
 *   limit cgroup <MiB>     builds a fake cgroup v2 tree whose memory.max is
 *                          the limit, and runs itself again on it
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "fake_cgroup.h"
#include "memory.h"
#include "pattern.h"
#include "probe.h"

#define BLOCK (1 * MIB)
#define MAX_BLOCKS 4096

static void fill(unsigned char *p, size_t n, unsigned char v) { memset(p, v, n); }

static void check_limit(size_t limit)
{
    static unsigned char *blocks[MAX_BLOCKS];
    unsigned n = 0;
    errno = 0;
    while (n < MAX_BLOCKS && (blocks[n] = malloc(BLOCK)))
        fill(blocks[n], BLOCK, (unsigned char)n), n++;
    printf("%u blocks of 1 MiB under a %zu MiB limit\n", n, limit / MIB);
    CHECK(n < MAX_BLOCKS);
    CHECK(errno == ENOMEM);
    CHECK(n >= limit / BLOCK / 2 && n <= limit / BLOCK);

    /* Small blocks stop too, and every failure leaves the rest intact. */
    void *small = NULL, *next;
    unsigned smalls = 0;
    errno = 0;
    while (smalls < 10000000 && (next = malloc(100))) {
        *(void **)next = small;
        small = next;
        smalls++;
    }
    CHECK(smalls < 10000000);
    CHECK(errno == ENOMEM);
    errno = 0;
    CHECK(calloc(1, 8 * BLOCK) == NULL && errno == ENOMEM);
    errno = 0;
    CHECK(realloc(blocks[0], 64 * BLOCK) == NULL && errno == ENOMEM);
    for (unsigned i = 0; i < n; i++)
        CHECK(block_filled_with(blocks[i], BLOCK, (unsigned char)i));
    while (small) {
        next = *(void **)small;
        free(small);
        small = next;
    }

    /* Room again once half is freed. */
    for (unsigned i = 0; i < n; i += 2)
        free(blocks[i]);
    unsigned again = 0;
    for (unsigned i = 0; i < n; i += 2)
        again += (blocks[i] = malloc(BLOCK)) != NULL;
    printf("%u of %u freed blocks allocated again\n", again, (n + 1) / 2);
    CHECK(again >= n / 2 - 2);
    for (unsigned i = 0; i < n; i++)
        free(blocks[i]);
    CHECK_EQ(stats_number("limit_bytes"), limit);
}

static int run_in_fake_cgroup(const char *self, unsigned mib)
{
    char cgroup[PATH_MAX], root[] = "/tmp/corealloc-cgroup.XXXXXX", leaf[PATH_MAX], max[32];
    if (!cgroup_own_path(cgroup, sizeof cgroup)) {
        puts("no cgroup v2 path in /proc/self/cgroup: skipped");
        return 77;
    }
    REQUIRE(mkdtemp(root) != NULL);
    cgroup_make_dirs(root, cgroup, leaf);
    snprintf(max, sizeof max, "%zu\n", (size_t)mib * MIB);
    cgroup_write_file(leaf, "memory.max", max);
    char command[4096];
    snprintf(command, sizeof command,
             "COREALLOC_CGROUP_ROOT='%s' COREALLOC_CGROUP_LIMIT=1 '%s' from-cgroup %u", root, self, mib);
    int rc = system(command);
    cgroup_remove_tree(root);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : 1;
}

int main(int argc, char **argv)
{
    if (!corealloc_active()) {
        puts("corealloc is not loaded: nothing to check");
        return 0;
    }
    if (argc < 3) {
        fprintf(stderr, "usage: limit bytes|cgroup|from-cgroup <MiB>\n");
        return 2;
    }
    size_t limit = (size_t)atoi(argv[2]) * MIB;
    if (!strcmp(argv[1], "cgroup"))
        return run_in_fake_cgroup(argv[0], (unsigned)atoi(argv[2]));
    if (!strcmp(argv[1], "from-cgroup"))
        CHECK_EQ(stats_number("cgroup_memory_max"), limit);
    check_limit(limit);
    return check_status();
}
