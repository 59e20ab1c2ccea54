/* The per-CPU front end under the conditions that break such designs:
 * oversubscription (preemption inside critical sections all the time), CPU
 * migration, caches drained from another thread, hundreds of threads. Every
 * block is tagged while held, so a block handed to two holders at once is
 * caught, and per-class counts must balance when all is freed.
 *
 *   cpucache_stress MODE [threads] [seconds] [small]
 *   MODE: stress | migrate | trim | bounded
 *   small: blocks of 16 to 48 bytes, whose frees on another CPU than the
 *   one that cut them take the foreign path (frontend/cpucache.c)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "corealloc.h"
#include "pinning.h"
#include "rng.h"

#define HELD 64
/* Classes that nothing else in the process uses meanwhile (glibc keeps
 * thread DTVs of a few hundred bytes across pthread_join, for example). */
static size_t min_size = 2100, max_size = 6000;
#define EXCHANGE 1024

static const char *mode;
static int nthreads = 64;
static double seconds = 2.0;
static atomic_bool stop;
static atomic_ulong allocated, freed;
static _Atomic(void *) exchange[EXCHANGE]; /* blocks in flight between threads */
static pthread_barrier_t bounded_barrier;

struct tag {
    uintptr_t owner; /* holder id while held; anything else while free */
    uintptr_t size;
};

static uintptr_t owner_tag(unsigned id) { return 0x5eed000000000000ull | id; }

static void *take(unsigned id, size_t size)
{
    struct tag *t = malloc(size);
    REQUIRE_MSG(t, "malloc(%zu) failed", size);
    uintptr_t before = __atomic_exchange_n(&t->owner, owner_tag(id), __ATOMIC_ACQ_REL);
    REQUIRE_MSG((before >> 48) != 0x5eed, "block %p handed to thread %u while held by thread %lu",
                (void *)t, id, (unsigned long)(before & 0xffff));
    t->size = size;
    memset(t + 1, (int)id, size - sizeof *t);
    atomic_fetch_add_explicit(&allocated, 1, memory_order_relaxed);
    return t;
}

static void give(unsigned id, void *p, bool check_owner)
{
    struct tag *t = p;
    const unsigned char *body = (const unsigned char *)(t + 1);
    unsigned char fill = body[0];
    REQUIRE_MSG(!check_owner || t->owner == owner_tag(id), "block %p changed hands while held by %u",
                p, id);
    for (size_t i = 0; i < t->size - sizeof *t; i += 61)
        REQUIRE_MSG(body[i] == fill, "block %p corrupted at byte %zu", p, i);
    /* Atomic, or the compiler drops it as a dead store before free(). */
    __atomic_store_n(&t->owner, 0, __ATOMIC_RELEASE);
    free(p);
    atomic_fetch_add_explicit(&freed, 1, memory_order_relaxed);
}

static void *worker(void *arg)
{
    unsigned id = (unsigned)(uintptr_t)arg;
    struct rng rng = rng_seeded(id);
    void *held[HELD] = {0};
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned long ops = 0;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        uint64_t r = rng_next(&rng);
        unsigned slot = (unsigned)(r % HELD);
        if (held[slot]) {
            /* Half the time the block goes to another thread to free. */
            if ((r >> 20) & 1) {
                void *prev = atomic_exchange(&exchange[(r >> 24) % EXCHANGE], held[slot]);
                if (prev)
                    give(id, prev, false);
            } else {
                give(id, held[slot], true);
            }
            held[slot] = NULL;
        } else {
            held[slot] = take(id, min_size + (r >> 40) % (max_size - min_size));
            ((struct tag *)held[slot])->owner = owner_tag(id);
        }
        if (!strcmp(mode, "migrate") && ncpu > 1 && (++ops & 1023) == 0)
            pin_to_cpu((int)((r >> 8) % (unsigned)ncpu)); /* best effort: a cpuset may forbid it */
        if (!strcmp(mode, "bounded") && ++ops == 20000)
            break;
    }
    for (int i = 0; i < HELD; i++)
        if (held[i])
            give(id, held[i], true);
    if (!strcmp(mode, "bounded"))
        pthread_barrier_wait(&bounded_barrier); /* stay alive while main looks */
    return NULL;
}

static void *trimmer(void *arg)
{
    (void)arg;
    unsigned long trims = 0;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        corealloc_trim();
        trims++;
    }
    return (void *)trims;
}

/* Reads a number that follows `"key":` in the JSON report, or -1. */
static long long json_number(const char *json, const char *key)
{
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    const char *at = strstr(json, pattern);
    return at ? strtoll(at + strlen(pattern), NULL, 10) : -1;
}

/* Blocks outside their superblocks for the classes min_size..max_size. */
static long long blocks_out_in_test_classes(const char *json)
{
    long long total = 0;
    for (const char *p = strstr(json, "\"classes\":["); p && (p = strstr(p, "{\"size\":")); p++) {
        long size = strtol(p + 8, NULL, 10);
        if (size >= (long)min_size && size <= (long)(max_size * 9 / 8 + 16))
            total += json_number(p, "blocks_out");
    }
    return total;
}

static char report[65536];
#define EXTRA_SECONDS 30.0

static const char *stats_json(void)
{
    corealloc_stats_snprint(report, sizeof report, 1);
    return report;
}

int main(int argc, char **argv)
{
    REQUIRE_MSG(argc >= 2, "usage: cpucache_stress stress|migrate|trim|bounded [threads] [seconds] [small]");
    mode = argv[1];
    if (argc > 2)
        nthreads = atoi(argv[2]);
    if (argc > 3)
        seconds = atof(argv[3]);
    if (argc > 4) {
        REQUIRE_MSG(!strcmp(argv[4], "small"), "unknown size range %s", argv[4]);
        min_size = 16;
        max_size = 48;
    }
    bool rseq = !strcmp(corealloc_frontend(), "rseq");
    printf("front end: %s\n", corealloc_frontend());
    fflush(stdout);
    pthread_t *threads = calloc((size_t)nthreads + 1, sizeof *threads); /* before the baseline */
    corealloc_trim();
    long long out_before = blocks_out_in_test_classes(stats_json());
    long long aborts_before = json_number(report, "rseq_aborts");

    if (!strcmp(mode, "bounded"))
        pthread_barrier_init(&bounded_barrier, NULL, (unsigned)nthreads + 1);
    for (int i = 0; i < nthreads; i++) {
        int error = pthread_create(&threads[i], NULL, worker, (void *)(uintptr_t)(i + 1));
        REQUIRE_MSG(error == 0, "pthread_create: %s", strerror(error));
    }
    pthread_t trim_thread;
    if (!strcmp(mode, "trim"))
        pthread_create(&trim_thread, NULL, trimmer, NULL);
    if (!strcmp(mode, "bounded")) {
        /* All threads alive, all done allocating: the caches are whatever
         * the front end keeps for them. */
        for (;;) {
            unsigned long a = atomic_load(&allocated);
            if (a >= (unsigned long)nthreads * 10000)
                break;
            usleep(10000);
        }
        usleep(100000);
        stats_json();
        long long caches = json_number(report, "caches");
        long long cached = json_number(report, "cached_bytes");
        long cpus = sysconf(_SC_NPROCESSORS_CONF);
        printf("%d threads: %lld caches holding %lld bytes (%ld CPUs)\n", nthreads, caches, cached, cpus);
        CHECK_MSG(!rseq || caches <= cpus,
                  "%lld caches for %ld CPUs: caches must be bounded by CPUs, not threads", caches, cpus);
        CHECK_MSG(rseq || caches >= nthreads,
                  "per-thread front end reports %lld caches for %d live threads", caches, nthreads);
        atomic_store(&stop, true);
        pthread_barrier_wait(&bounded_barrier);
    } else {
        /* The run lasts its seconds; a stress run with more threads than
         * CPUs goes on (up to EXTRA_SECONDS more) until a preemption has
         * landed inside a critical section, which a loaded machine may
         * take a while to show. */
        bool wants_abort = rseq && !strcmp(mode, "stress") && nthreads > 2 * sysconf(_SC_NPROCESSORS_ONLN);
        const struct timespec tick = {0, 100 * 1000 * 1000};
        for (double waited = 0; waited < seconds + EXTRA_SECONDS; waited += 0.1) {
            if (waited >= seconds && (!wants_abort || json_number(stats_json(), "rseq_aborts") > aborts_before))
                break;
            nanosleep(&tick, NULL);
        }
        atomic_store(&stop, true);
    }
    for (int i = 0; i < nthreads; i++)
        pthread_join(threads[i], NULL);
    if (!strcmp(mode, "trim")) {
        void *trims;
        pthread_join(trim_thread, &trims);
        printf("trims during the run: %lu\n", (unsigned long)(uintptr_t)trims);
        CHECK_MSG(trims, "the trimming thread never completed a trim");
    }
    for (int i = 0; i < EXCHANGE; i++)
        if (exchange[i])
            give(0, exchange[i], false);

    corealloc_trim();
    long long out_after = blocks_out_in_test_classes(stats_json());
    long long aborts = json_number(report, "rseq_aborts") - aborts_before;
    printf("allocated %lu freed %lu, blocks out %lld -> %lld, rseq aborts %lld\n",
           atomic_load(&allocated), atomic_load(&freed), out_before, out_after, aborts);
    CHECK_MSG(atomic_load(&allocated) == atomic_load(&freed), "allocated and freed differ");
    CHECK_MSG(out_after == out_before,
              "blocks lost or invented: %lld outside their superblocks, %lld before", out_after,
              out_before);
    CHECK_MSG(!rseq || strcmp(mode, "stress") || nthreads <= 2 * sysconf(_SC_NPROCESSORS_ONLN) ||
                  aborts > 0,
              "no critical section was ever restarted with %d threads", nthreads);
    free(threads);
    return check_status();
}
