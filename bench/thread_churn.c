/* thread-churn: a program that creates threads and lets them exit, over
 * and over (seed 003's worry: memory stranded in the pools of exited
 * threads). N threads in total, at most C alive at once, each a real
 * pthread_create / exit / join, not a pool. Every thread
 *   - frees the blocks a thread before it left on the shelf (so some blocks
 *     outlive the thread that allocated them and are freed by another),
 *   - allocates K blocks of 16..4096 bytes and one large block, kept for its
 *     whole life, and churns through I malloc/free pairs of 16..4096 bytes,
 *   - frees everything except H of its kept blocks, which it leaves on the
 *     shelf for a later thread, and exits.
 * After each tenth of the threads the main thread waits until every thread
 * started so far has exited and been joined, then reads RSS. A flat profile
 * (growth_ratio = RSS after the last tenth / RSS after the first, about
 * 1.0) means exited threads leave nothing behind; the process's peak RSS
 * (getrusage) is reported beside it. */
#include "bench_args.h"
#include "bench_clock.h"
#include "bench_layout.h"
#include "bench_report.h"
#include "rng.h"
#include "bench_rss.h"
#include "bench_tag.h"
#include "bench_threads.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SMALL_MIN 16
#define SMALL_MAX 4096
#define CHURN_RING 8
#define DECILES 10

struct kept {
    void *block;
    size_t size;
};

/* Blocks one thread leaves for a later one to free. */
struct parcel {
    struct parcel *next;
    long count;
    struct kept items[];
};

struct worker {
    _Alignas(BENCH_CACHE_LINE) pthread_t thread;
    long slot;
    long index;
};

static long kept_blocks = 100;
static long large_bytes = 256 * 1024;
static long churn_pairs = 200;
static long handed_over = 8;
static long seed = 1;

static pthread_mutex_t shelf_lock = PTHREAD_MUTEX_INITIALIZER;
static struct parcel *shelf;

/* Slots of threads that have finished their work, waiting to be joined. */
static pthread_mutex_t done_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_changed = PTHREAD_COND_INITIALIZER;
static long *done_slots;
static long done_count;

static struct kept allocate_tagged(struct rng *rng, size_t size)
{
    void *block = bench_check_alloc(malloc(size), "thread-churn block");
    memset(block, 0x5a, size);
    bench_tag_write(block, size, rng_next(rng));
    return (struct kept){ block, size };
}

static void free_tagged(struct kept kept, const char *what)
{
    if (!bench_tag_intact(kept.block, kept.size))
        bench_check_failed("thread-churn: a %zu-byte %s block at %p was overwritten", kept.size, what, kept.block);
    free(kept.block);
}

static size_t small_size(struct rng *rng)
{
    return SMALL_MIN + (size_t)rng_below(rng, SMALL_MAX - SMALL_MIN + 1);
}

static void free_parcel(struct parcel *parcel)
{
    for (long i = 0; i < parcel->count; i++)
        free_tagged(parcel->items[i], "handed-over");
    free(parcel);
}

static void *worker_body(void *arg)
{
    struct worker *self = arg;
    struct rng rng = rng_seeded((uint64_t)seed * 1000003u + (uint64_t)self->index);

    pthread_mutex_lock(&shelf_lock);
    struct parcel *inherited = shelf;
    if (inherited != NULL)
        shelf = inherited->next;
    pthread_mutex_unlock(&shelf_lock);
    if (inherited != NULL)
        free_parcel(inherited);

    size_t table_entries = kept_blocks > 0 ? (size_t)kept_blocks : 1;  /* malloc(0) may be NULL */
    struct kept *kept = bench_check_alloc(malloc(table_entries * sizeof *kept), "kept-block table");
    for (long i = 0; i < kept_blocks; i++)
        kept[i] = allocate_tagged(&rng, small_size(&rng));
    struct kept large = { NULL, 0 };
    if (large_bytes > 0)
        large = allocate_tagged(&rng, (size_t)large_bytes);

    struct kept ring[CHURN_RING] = { { NULL, 0 } };
    for (long i = 0; i < churn_pairs; i++) {
        struct kept *slot = &ring[i % CHURN_RING];
        if (slot->block != NULL)
            free_tagged(*slot, "churned");
        *slot = allocate_tagged(&rng, small_size(&rng));
    }
    for (int i = 0; i < CHURN_RING; i++)
        if (ring[i].block != NULL)
            free_tagged(ring[i], "churned");

    long leave = handed_over < kept_blocks ? handed_over : kept_blocks;
    struct parcel *parcel = NULL;
    if (leave > 0) {
        parcel = bench_check_alloc(malloc(sizeof *parcel + (size_t)leave * sizeof parcel->items[0]), "parcel");
        parcel->count = leave;
        memcpy(parcel->items, kept + (kept_blocks - leave), (size_t)leave * sizeof *kept);
    }
    for (long i = 0; i < kept_blocks - leave; i++)
        free_tagged(kept[i], "kept");
    free(kept);
    if (large.block != NULL)
        free_tagged(large, "large");
    if (parcel != NULL) {
        pthread_mutex_lock(&shelf_lock);
        parcel->next = shelf;
        shelf = parcel;
        pthread_mutex_unlock(&shelf_lock);
    }

    pthread_mutex_lock(&done_lock);
    done_slots[done_count++] = self->slot;
    pthread_cond_signal(&done_changed);
    pthread_mutex_unlock(&done_lock);
    return NULL;
}

/* Waits for a thread to finish, joins it (so its exit, with the allocator's
 * thread-exit work, is complete) and returns its slot. */
static long join_one(struct worker *workers)
{
    pthread_mutex_lock(&done_lock);
    while (done_count == 0)
        pthread_cond_wait(&done_changed, &done_lock);
    long slot = done_slots[--done_count];
    pthread_mutex_unlock(&done_lock);
    bench_thread_join(workers[slot].thread);
    return slot;
}

int main(int argc, char **argv)
{
    long total = 10000, concurrent = 16;
    const struct bench_option options[] = {
        BENCH_LONG('n', "threads", &total, DECILES, 100000000),
        BENCH_LONG('c', "concurrent", &concurrent, 1, 4096),
        BENCH_LONG('k', "kept-blocks", &kept_blocks, 0, 1000000),
        BENCH_LONG('l', "large-bytes", &large_bytes, 0, 1L << 30),
        BENCH_LONG('i', "churn-pairs", &churn_pairs, 0, 1L << 30),
        BENCH_LONG('h', "handed-over", &handed_over, 0, 1000000),
        BENCH_SEED('s', &seed),
        BENCH_OPTIONS_END,
    };
    const struct bench_command command = { "thread-churn", options, NULL, 0, 0 };
    bench_parse_command(&command, argc, argv);

    struct worker *workers = bench_alloc_lines((size_t)concurrent, sizeof *workers);
    done_slots = bench_check_alloc(malloc((size_t)concurrent * sizeof *done_slots), "slot table");
    long *free_slots = bench_check_alloc(malloc((size_t)concurrent * sizeof *free_slots), "slot table");
    long free_count = 0, alive = 0;
    for (long slot = concurrent - 1; slot >= 0; slot--)
        free_slots[free_count++] = slot;
    size_t deciles[DECILES];
    int decile = 0;

    size_t baseline = bench_rss_bytes();
    double start = bench_now_seconds();
    for (long created = 0; created < total;) {
        long slot;
        if (free_count > 0) {
            slot = free_slots[--free_count];
            alive++;
        } else {
            slot = join_one(workers);  /* one left, one comes: as many alive */
        }
        workers[slot].slot = slot;
        workers[slot].index = created;
        workers[slot].thread = bench_thread_start(worker_body, &workers[slot]);
        created++;
        if (created == total * (decile + 1) / DECILES) {
            for (; alive > 0; alive--)
                free_slots[free_count++] = join_one(workers);
            deciles[decile++] = bench_rss_bytes();
        }
    }
    double elapsed = bench_now_seconds() - start;
    if (decile != DECILES)
        bench_check_failed("thread-churn: %d RSS samples instead of %d", decile, DECILES);
    /* The kernel's high-water mark can trail a fresh statm reading by a page or two. */
    size_t peak = bench_peak_rss_bytes();
    for (int d = 0; d < DECILES; d++)
        peak = deciles[d] > peak ? deciles[d] : peak;
    while (shelf != NULL) {
        struct parcel *next = shelf->next;
        free_parcel(shelf);
        shelf = next;
    }

    char profile[DECILES * 16] = "";
    for (int d = 0; d < DECILES; d++)
        snprintf(profile + strlen(profile), sizeof profile - strlen(profile), "%s%.1f", d ? "," : "",
                 bench_mib(deciles[d]));
    bench_result("thread-churn",
                 "threads=%ld concurrent=%ld kept_blocks=%ld large_bytes=%ld churn_pairs=%ld handed_over=%ld "
                 "seconds=%.3f threads_per_sec=%.0f baseline_mib=%.2f rss_first_decile_mib=%.2f "
                 "rss_last_decile_mib=%.2f peak_mib=%.2f growth_mib=%.2f growth_ratio=%.3f deciles_mib=%s",
                 total, concurrent, kept_blocks, large_bytes, churn_pairs, handed_over, elapsed,
                 (double)total / elapsed, bench_mib(baseline), bench_mib(deciles[0]), bench_mib(deciles[DECILES - 1]),
                 bench_mib(peak), bench_mib_delta(deciles[DECILES - 1], deciles[0]),
                 (double)deciles[DECILES - 1] / (double)deciles[0], profile);
    free(free_slots);
    free(done_slots);
    free(workers);
    return 0;
}
