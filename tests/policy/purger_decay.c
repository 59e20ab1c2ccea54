/* Memory goes back to the OS on the purge delay while the program sleeps
 * (COREALLOC_PURGE_DELAY_MS), never with -1, at once with 0, and in a
 * forked child too.
 *
 *   decay idle <delay_ms>       RSS back near the baseline within 2 delays;
 *                               then, nothing left to purge, the purge
 *                               thread sleeps without waking, and a block
 *                               freed meanwhile wakes it and goes back too
 *   decay never                 (delay -1) RSS stays up, no thread started
 *   decay immediate             (delay 0) freed blocks gone at once, small
 *                               ones too (nothing parked centrally, and the
 *                               free pages of superblocks still in use)
 *   decay fork <delay_ms>       the child, idle, purges what it inherited
 *   decay metadata <delay_ms>   the allocator's own memory goes back too:
 *                               most of what the burst of frees added
 *                               (nodes of the batches parked centrally)
 *   decay start-size            a process holding a few blocks, or a block
 *                               in each of 30 classes, starts no purge
 *                               thread; one holding over 4 MiB does
 *   decay start-age <delay_ms>  one holding a few blocks starts it at its
 *                               first refill from the central layer once it has
 *                               lived a quarter of the delay
 *   decay busy <delay_ms>       a CPU cache that serves every call from its
 *                               stacks (no slow path, so no miss counted) for
 *                               three delays is not drained as if idle
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "clock.h"
#include "memory.h"
#include "pinning.h"
#include "probe.h"

#define WORKLOAD (256 * MIB)
#define SLACK (16 * MIB) /* metadata and caches that stay: far below what is freed */

static void sleep_ms(unsigned ms)
{
    nanosleep(&(struct timespec){.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000}, NULL);
}

/* Allocates and frees the workload; returns the baseline RSS before it. */
static size_t allocate_and_free(bool small)
{
    size_t baseline = rss_bytes();
    size_t peak = churn_through(WORKLOAD, 4, small, true);
    printf("baseline %zu MiB, peak %zu MiB, right after freeing %zu MiB\n", baseline / MIB,
           peak / MIB, rss_bytes() / MIB);
    REQUIRE(peak >= baseline + WORKLOAD * 3 / 4);
    return baseline;
}

/* The thread named name, or 0. */
static pid_t thread_named(const char *name)
{
    DIR *d = opendir("/proc/self/task");
    REQUIRE(d != NULL);
    pid_t found = 0;
    for (struct dirent *e; !found && (e = readdir(d));) {
        char path[300], comm[64] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f && fgets(comm, sizeof comm, f) && strncmp(comm, name, strlen(name)) == 0)
            found = (pid_t)atoi(e->d_name);
        if (f)
            fclose(f);
    }
    closedir(d);
    return found;
}

/* The voluntary context switches of a thread of ours (one per sleep), read
 * without allocating: a reading is no traffic. */
static unsigned long switches_of(pid_t tid)
{
    char path[64], status[4096];
    snprintf(path, sizeof path, "/proc/self/task/%d/status", (int)tid);
    int fd = open(path, O_RDONLY);
    REQUIRE(fd >= 0);
    ssize_t got = read(fd, status, sizeof status - 1);
    close(fd);
    REQUIRE(got > 0);
    status[got] = '\0';
    const char *at = strstr(status, "\nvoluntary_ctxt_switches:");
    REQUIRE(at != NULL);
    return strtoul(at + strlen("\nvoluntary_ctxt_switches:"), NULL, 10);
}

/* Whether tid makes no voluntary switch for quiet_ms, within timeout_ms. */
static bool goes_quiet(pid_t tid, unsigned quiet_ms, unsigned timeout_ms)
{
    unsigned long last = switches_of(tid);
    for (unsigned waited = 0, quiet = 0; waited < timeout_ms; waited += 50) {
        sleep_ms(50);
        unsigned long now = switches_of(tid);
        quiet = now == last ? quiet + 50 : 0;
        last = now;
        if (quiet >= quiet_ms)
            return true;
    }
    return false;
}

static void idle(unsigned delay_ms)
{
    enum { KEPT = 8 << 20 }; /* a block freed while the purger sleeps */
    unsigned char *kept = malloc(KEPT);
    REQUIRE(kept != NULL);
    memset(kept, 1, KEPT);
    size_t baseline = allocate_and_free(true);
    /* Twice the delay, plus room for a slow machine. */
    size_t rss = wait_rss_at_most(baseline + SLACK, 2 * delay_ms + 1000);
    printf("after sleeping: %zu MiB\n", rss / MIB);
    CHECK(rss <= baseline + SLACK);

    /* Nothing is left: the thread sleeps, no longer waking a few times a
     * delay, through three delays. */
    pid_t purger = thread_named("corealloc-purge");
    REQUIRE_MSG(purger != 0, "no purge thread");
    CHECK(stats_number("purger_running"));
    CHECK_MSG(goes_quiet(purger, 3 * delay_ms, 6 * delay_ms + 2000), "the purge thread keeps waking with nothing to purge");
    /* A free wakes it, and what it freed goes back. */
    unsigned long before = switches_of(purger);
    free(kept);
    for (unsigned waited = 0; stats_number("large_free_unpurged_bytes") && waited < 2 * delay_ms + 1000; waited += 10)
        sleep_ms(10);
    CHECK_MSG(switches_of(purger) > before, "a free did not wake the purge thread");
    CHECK_EQ(stats_number("large_free_unpurged_bytes"), 0);
}

static void metadata(unsigned delay_ms)
{
    size_t before = stats_number("metadata_bytes");
    allocate_and_free(true);
    size_t grown = stats_number("metadata_bytes");
    /* The page map's share stays counted: it reports what it mapped. */
    size_t target = before + (grown - before) / 2, after = grown;
    for (unsigned waited = 0; after > target && waited < 2 * delay_ms + 1000; waited += 50) {
        sleep_ms(50);
        after = stats_number("metadata_bytes");
    }
    printf("metadata: %zu KiB before, %zu KiB after the frees, %zu KiB after sleeping\n", before >> 10,
           grown >> 10, after >> 10);
    REQUIRE(grown >= before + MIB); /* the frees parked batches: else nothing is tested */
    CHECK(after <= target);
}

static void never(void)
{
    size_t baseline = allocate_and_free(true);
    sleep_ms(1500);
    size_t rss = rss_bytes();
    printf("after sleeping: %zu MiB\n", rss / MIB);
    /* The retained budget (32 MiB by default) is still resident. */
    CHECK(rss >= baseline + 24 * MIB);
    CHECK(stats_number("purger_running") == 0);
    CHECK_EQ(thread_count(), 1);
}

static void immediate(void)
{
    for (int small = 0; small <= 1; small++) {
        size_t baseline = allocate_and_free(small);
        size_t rss = rss_bytes();
        printf("no sleep: %zu MiB\n", rss / MIB);
        CHECK(rss <= baseline + SLACK);
    }
    CHECK_EQ(thread_count(), 1);
}

enum { FEW = 64 };

/* A few small blocks (and a slow path in their class): too little for a thread. */
static void hold_a_few(void **blocks, size_t size)
{
    for (int i = 0; i < FEW; i++)
        REQUIRE((blocks[i] = malloc(size)) != NULL);
    CHECK_MSG(thread_named("corealloc-purge") == 0, "a purge thread for a few blocks");
    CHECK(stats_number("purger_running") == 0);
}

static void start_by_size(void)
{
    void *few[FEW];
    hold_a_few(few, 48);
    /* A block of every size up to 1 KiB: some 30 classes, each with a
     * superblock of its own (8 MiB counted resident), 124 KiB held. */
    enum { SIZES = 1024 / 16 };
    void *one_each[SIZES];
    for (int i = 0; i < SIZES; i++)
        REQUIRE((one_each[i] = malloc((size_t)(i + 1) * 16)) != NULL);
    CHECK_MSG(thread_named("corealloc-purge") == 0, "a purge thread for a block in each of 30 classes");
    CHECK(stats_number("purger_running") == 0);
    enum { BLOCKS = 6 * 1024 }; /* 6 MiB of 1 KiB blocks */
    void **held = malloc(BLOCKS * sizeof *held);
    REQUIRE(held != NULL);
    for (int i = 0; i < BLOCKS; i++)
        REQUIRE((held[i] = malloc(1024)) != NULL);
    CHECK_MSG(thread_named("corealloc-purge") != 0, "no purge thread for 6 MiB held");
    CHECK(stats_number("purger_running"));
    for (int i = 0; i < BLOCKS; i++)
        free(held[i]);
    free(held);
    for (int i = 0; i < FEW; i++)
        free(few[i]);
    for (int i = 0; i < SIZES; i++)
        free(one_each[i]);
}

static void start_by_age(unsigned delay_ms)
{
    void *few[FEW], *later[FEW];
    hold_a_few(few, 48);
    sleep_ms(delay_ms / 4 + 50);
    for (int i = 0; i < FEW; i++) /* a class not used before: a slow path */
        REQUIRE((later[i] = malloc(3000)) != NULL);
    CHECK_MSG(thread_named("corealloc-purge") != 0, "no purge thread a quarter of the delay on");
    CHECK(stats_number("purger_running"));
    for (int i = 0; i < FEW; i++) {
        free(few[i]);
        free(later[i]);
    }
}

/* The refills of one CPU's cache so far. */
static long long cpu_refills(int cpu)
{
    char cache[32];
    snprintf(cache, sizeof cache, "{\"id\":%d,", cpu);
    return stats_number_in(cache, "misses_empty");
}

static void busy(unsigned delay_ms)
{
    if (strcmp((const char *)((const char *(*)(void))corealloc_symbol("corealloc_frontend"))(), "rseq") != 0) {
        puts("no per-CPU caches: nothing to check");
        return;
    }
    int cpu = sched_getcpu();
    REQUIRE(pin_to_cpu(cpu));
    /* Over 4 MiB held starts the purge thread. */
    enum { BLOCKS = 6 * 1024, SET = 48 };
    void **held = malloc(BLOCKS * sizeof *held), *set[SET];
    REQUIRE(held != NULL);
    for (int i = 0; i < BLOCKS; i++)
        REQUIRE((held[i] = malloc(1024)) != NULL);
    for (int i = 0; i < BLOCKS; i++)
        free(held[i]);
    free(held);
    REQUIRE_MSG(thread_named("corealloc-purge") != 0, "no purge thread");
    /* A set of blocks of a class the stack holds whole (one batch): after
     * the first round, every call is a hit. */
    for (int round = 0; round < 4; round++) {
        for (int i = 0; i < SET; i++)
            REQUIRE((set[i] = malloc(64)) != NULL);
        for (int i = SET - 1; i >= 0; i--)
            free(set[i]);
    }
    long long before = cpu_refills(cpu);
    uint64_t rounds = 0;
    uint64_t start_ms = monotonic_ms();
    do {
        for (int i = 0; i < SET; i++)
            set[i] = malloc(64);
        for (int i = SET - 1; i >= 0; i--)
            free(set[i]);
        rounds++;
    } while (monotonic_ms() - start_ms < 3 * (uint64_t)delay_ms);
    long long after = cpu_refills(cpu);
    printf("%llu rounds of hits over three delays; refills of CPU %d's cache meanwhile: %lld\n",
           (unsigned long long)rounds, cpu, after - before);
    CHECK_MSG(after == before, "a cache busy with hits was drained as if idle");
}

static void forked(unsigned delay_ms)
{
    size_t baseline = rss_bytes();
    churn_through(WORKLOAD, 4, true, true);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        size_t inherited = rss_bytes();
        size_t rss = wait_rss_at_most(baseline + SLACK, 2 * delay_ms + 1000);
        printf("child: inherited %zu MiB, after sleeping %zu MiB (baseline %zu MiB)\n", inherited / MIB,
               rss / MIB, baseline / MIB);
        CHECK(inherited >= baseline + 2 * SLACK); /* the fork came before the purge */
        CHECK(rss <= baseline + SLACK); /* the child's own purger ran */
        _exit(check_status());
    }
    int status;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(int argc, char **argv)
{
    if (!corealloc_active()) {
        puts("corealloc is not loaded: nothing to check");
        return 0;
    }
    if (argc >= 3 && !strcmp(argv[1], "idle"))
        idle((unsigned)atoi(argv[2]));
    else if (argc >= 3 && !strcmp(argv[1], "metadata"))
        metadata((unsigned)atoi(argv[2]));
    else if (argc >= 2 && !strcmp(argv[1], "never"))
        never();
    else if (argc >= 2 && !strcmp(argv[1], "immediate"))
        immediate();
    else if (argc >= 3 && !strcmp(argv[1], "fork"))
        forked((unsigned)atoi(argv[2]));
    else if (argc >= 2 && !strcmp(argv[1], "start-size"))
        start_by_size();
    else if (argc >= 3 && !strcmp(argv[1], "start-age"))
        start_by_age((unsigned)atoi(argv[2]));
    else if (argc >= 3 && !strcmp(argv[1], "busy"))
        busy((unsigned)atoi(argv[2]));
    else {
        fprintf(stderr, "usage: decay idle|fork|metadata|start-age|busy <delay_ms> | never | immediate | start-size\n");
        return 2;
    }
    return check_status();
}
