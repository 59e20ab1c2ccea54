#include "memory.h"

#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "probe.h"
#include "rng.h"

const char *huge_page_flag(const void *addr)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    REQUIRE(f != NULL);
    static char flag[3];
    char line[512];
    bool inside = false;
    flag[0] = '\0';
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            inside = (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
        } else if (inside && !strncmp(line, "VmFlags:", 8)) {
            strcpy(flag, strstr(line, " hg") ? "hg" : strstr(line, " nh") ? "nh" : "");
            break;
        }
    }
    fclose(f);
    return flag;
}

const char *unadvised_huge_page_flag(void)
{
    char mode[64] = "";
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (f) {
        if (!fgets(mode, sizeof mode, f))
            mode[0] = '\0';
        fclose(f);
    }
    return strstr(mode, "[madvise]") || strstr(mode, "[never]") ? "" : "nh";
}

/* Reads a small /proc file into buf, NUL-terminated, with no allocation:
 * a reading must not be traffic that keeps the allocator's purger busy. */
static void read_proc(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY);
    REQUIRE_MSG(fd >= 0, "%s", path);
    ssize_t got = read(fd, buf, size - 1);
    close(fd);
    REQUIRE_MSG(got > 0, "%s", path);
    buf[got] = '\0';
}

size_t rss_bytes(void)
{
    char statm[256];
    read_proc("/proc/self/statm", statm, sizeof statm);
    unsigned long size = 0, resident = 0;
    REQUIRE(sscanf(statm, "%lu %lu", &size, &resident) == 2);
    return resident * (size_t)sysconf(_SC_PAGESIZE);
}

long long stats_number_in(const char *object, const char *key)
{
    REQUIRE(corealloc_active());
    size_t (*snprint)(char *, size_t, int) =
        (size_t (*)(char *, size_t, int))corealloc_symbol("corealloc_stats_snprint");
    static char buf[65536];
    snprint(buf, sizeof buf, 1);
    const char *at = object ? strstr(buf, object) : buf;
    REQUIRE_MSG(at, "no %s in the statistics", object);
    char pattern[128];
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    at = strstr(at, pattern);
    if (!at)
        fprintf(stderr, "statistics: %s\n", buf);
    REQUIRE_MSG(at, "no %s in the statistics", key);
    at += strlen(pattern);
    if (!strncmp(at, "true", 4))
        return 1;
    if (!strncmp(at, "false", 5))
        return 0;
    return strtoll(at, NULL, 10);
}

long long stats_number(const char *key)
{
    return stats_number_in(NULL, key);
}

void skip_without_cpu_caches(void)
{
    if (!corealloc_active() || stats_number("caches") <= 0) {
        puts("no per-CPU caches here: nothing to check");
        exit(77);
    }
}

void skip_without_zones(void)
{
    if (!corealloc_active() || !stats_number("zones")) {
        puts("zones off: nothing to check");
        exit(77);
    }
}

long long class_transfers(size_t size, const char *direction)
{
    char cls[32];
    snprintf(cls, sizeof cls, "{\"size\":%zu,", size);
    return stats_number_in(cls, direction);
}

unsigned thread_count(void)
{
    static char status[8192];
    read_proc("/proc/self/status", status, sizeof status);
    const char *at = strstr(status, "\nThreads:");
    REQUIRE(at != NULL);
    return (unsigned)strtoul(at + strlen("\nThreads:"), NULL, 10);
}

size_t wait_rss_at_most(size_t limit, unsigned timeout_ms)
{
    size_t rss = rss_bytes();
    for (unsigned waited = 0; rss > limit && waited < timeout_ms; waited += 10) {
        nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
        rss = rss_bytes();
    }
    return rss;
}

struct worker {
    pthread_t thread;
    size_t bytes;
    bool small, large;
    void **blocks;
    size_t count, capacity;
    struct worker *victim; /* whose blocks this thread frees */
    pthread_barrier_t *barrier;
    size_t *rss_at_peak;
};

static void keep(struct worker *w, void *p)
{
    if (w->count == w->capacity) {
        w->capacity = w->capacity ? 2 * w->capacity : 1024;
        w->blocks = realloc(w->blocks, w->capacity * sizeof *w->blocks);
        REQUIRE(w->blocks != NULL);
    }
    w->blocks[w->count++] = p;
}

static void *work(void *arg)
{
    struct worker *w = arg;
    struct rng rng = rng_seeded((uintptr_t)w);
    size_t small_bytes = w->large ? w->bytes / 2 : w->bytes, done = 0;
    if (!w->small)
        small_bytes = 0;
    while (done < w->bytes) {
        size_t size = done < small_bytes ? 16 + rng_below(&rng, 1009)
                                         : ((size_t)64 << 10) + rng_below(&rng, 960 << 10);
        char *p = malloc(size);
        REQUIRE(p != NULL);
        memset(p, 0x5a, size);
        keep(w, p);
        done += size;
    }
    pthread_barrier_wait(w->barrier);
    pthread_barrier_wait(w->barrier); /* the main thread measures in between */
    for (size_t i = 0; i < w->victim->count; i++)
        free(w->victim->blocks[i]);
    return NULL;
}

void allocate_then_free(const size_t *sizes, unsigned count, unsigned per_size)
{
    void *blocks[count][per_size]; /* on the stack: no allocation of our own */
    for (unsigned s = 0; s < count; s++)
        for (unsigned i = 0; i < per_size; i++)
            REQUIRE((blocks[s][i] = malloc(sizes[s])) != NULL);
    for (unsigned s = 0; s < count; s++)
        for (unsigned i = 0; i < per_size; i++)
            free(blocks[s][i]);
}

size_t churn_through(size_t total, unsigned threads, bool small, bool large)
{
    struct worker *workers = calloc(threads, sizeof *workers);
    REQUIRE(workers != NULL);
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, threads + 1);
    for (unsigned i = 0; i < threads; i++) {
        workers[i] = (struct worker){.bytes = total / threads, .small = small, .large = large,
                                     .victim = &workers[(i + 1) % threads], .barrier = &barrier};
        REQUIRE(pthread_create(&workers[i].thread, NULL, work, &workers[i]) == 0);
    }
    pthread_barrier_wait(&barrier);
    size_t peak = rss_bytes();
    pthread_barrier_wait(&barrier);
    for (unsigned i = 0; i < threads; i++)
        pthread_join(workers[i].thread, NULL);
    for (unsigned i = 0; i < threads; i++)
        free(workers[i].blocks);
    free(workers);
    pthread_barrier_destroy(&barrier);
    return peak;
}

static sigjmp_buf fault_jump;

static void on_fault(int sig)
{
    (void)sig;
    siglongjmp(fault_jump, 1);
}

bool memory_write_faults(volatile unsigned char *at)
{
    struct sigaction fault = {.sa_handler = on_fault}, old_segv, old_bus;
    sigaction(SIGSEGV, &fault, &old_segv);
    sigaction(SIGBUS, &fault, &old_bus);
    bool faulted = sigsetjmp(fault_jump, 1) != 0;
    if (!faulted)
        *at = 1;
    sigaction(SIGSEGV, &old_segv, NULL);
    sigaction(SIGBUS, &old_bus, NULL);
    return faulted;
}
