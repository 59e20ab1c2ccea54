#define _GNU_SOURCE
#include "replay_run.h"

#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/cpu_relax.h"
#include "../common/pattern.h"
#include "arena.h"
#include "replay_check.h"

enum { OBJECT_PENDING, OBJECT_LIVE, OBJECT_RELEASED };

#define PAGE_BYTES 4096
#define SPINS_BEFORE_YIELD 64

struct stream_cursor {
    struct replay_instance *instance;
    const struct event_stream *stream;
    uint32_t thread;
    uint64_t next;
};

struct worker {
    pthread_t thread;
    struct stream_cursor *cursors;
    uint32_t cursor_count;
    const struct replay_options *options;
    pthread_barrier_t *start;
    struct timespec started, finished;
};

static atomic_bool replay_failed;
static pthread_mutex_t error_lock = PTHREAD_MUTEX_INITIALIZER;
static char first_error[512];

static void report_failure(const struct stream_cursor *cursor, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

static void report_failure(const struct stream_cursor *cursor, const char *format, ...)
{
    pthread_mutex_lock(&error_lock);
    if (!atomic_load(&replay_failed)) {
        const struct replay_event *e = &cursor->stream->events[cursor->next];
        int n = snprintf(first_error, sizeof first_error, "%s (copy %u), thread %u, event %llu (%s of %llu bytes): ",
                         cursor->instance->trace->path, cursor->instance->number, cursor->thread,
                         (unsigned long long)cursor->next, trace_kind_name(e->kind),
                         (unsigned long long)e->size);
        va_list args;
        va_start(args, format);
        if (n >= 0 && (size_t)n < sizeof first_error)
            vsnprintf(first_error + n, sizeof first_error - (size_t)n, format, args);
        va_end(args);
        atomic_store(&replay_failed, true);
    }
    pthread_mutex_unlock(&error_lock);
}

void replay_prepare(struct replay_instance *instance, const struct loaded_trace *trace, uint32_t number)
{
    instance->trace = trace;
    instance->number = number;
    instance->objects = arena_alloc((trace->object_count + 1) * sizeof(struct replay_object));
}

static uint64_t pattern_seed(const struct replay_instance *instance, uint32_t object)
{
    return ((uint64_t)instance->number << 32 | object) ^ 0x5bd1e9955bd1e995ull;
}

/* Whether every object this event needs has been allocated already. */
static bool event_ready(const struct replay_instance *instance, const struct replay_event *e)
{
    uint32_t needed = trace_kind_class(e->kind) == TRACE_CLASS_FREE ? e->object : e->old_object;
    return needed == NO_OBJECT ||
           atomic_load_explicit(&instance->objects[needed].state, memory_order_acquire) == OBJECT_LIVE;
}

/* Every aligned form replays as posix_memalign, which all the allocators we
 * compare replace; valloc and pvalloc keep their page rounding. */
static void *allocate(const struct replay_event *e)
{
    switch (trace_kind_class(e->kind)) {
    case TRACE_CLASS_ALIGNED: {
        uint64_t alignment = (uint64_t)1 << e->alignment_log2;
        uint64_t size = e->size;
        if (alignment < sizeof(void *))
            alignment = sizeof(void *);
        if (e->kind == TRACE_PVALLOC)
            size = (size + alignment - 1) & ~(alignment - 1);
        void *block = NULL;
        return posix_memalign(&block, alignment, size) == 0 ? block : NULL;
    }
    default:
        return e->kind == TRACE_CALLOC ? calloc(1, e->size) : malloc(e->size);
    }
}

static void touch_pages(void *block, uint64_t size)
{
    for (uint64_t offset = 0; offset < size; offset += PAGE_BYTES)
        ((volatile unsigned char *)block)[offset] = 1;
}

static bool check_released(const struct stream_cursor *cursor, uint32_t id, const struct replay_object *object)
{
    size_t bad = pattern_mismatch(object->block, object->size, pattern_seed(cursor->instance, id));
    if (bad != PATTERN_OK) {
        report_failure(cursor, "object %u (%llu bytes at %p) was modified while live, at byte %llu",
                       id, (unsigned long long)object->size, object->block, (unsigned long long)bad);
        return false;
    }
    check_live_remove((uintptr_t)object->block);
    return true;
}

static bool check_acquired(const struct stream_cursor *cursor, const struct replay_event *e, void *block)
{
    uint64_t alignment = check_required_alignment(e->size, trace_kind_class(e->kind) == TRACE_CLASS_ALIGNED
                                                               ? e->alignment_log2 : 0);
    if ((uintptr_t)block % alignment != 0) {
        report_failure(cursor, "block %p is not aligned to %llu", block, (unsigned long long)alignment);
        return false;
    }
    if (e->kind == TRACE_CALLOC && !block_filled_with(block, e->size, 0)) {
        report_failure(cursor, "calloc returned memory that is not zero");
        return false;
    }
    uintptr_t other;
    if (!check_live_insert((uintptr_t)block, e->size, &other)) {
        report_failure(cursor, "block %p overlaps the live block at %p", block, (void *)other);
        return false;
    }
    return true;
}

static bool run_allocation(const struct stream_cursor *cursor, const struct replay_event *e, bool check)
{
    struct replay_object *object = &cursor->instance->objects[e->object];
    void *block = allocate(e);
    if (block == NULL) {
        report_failure(cursor, "the allocator returned NULL");
        return false;
    }
    if (check) {
        if (!check_acquired(cursor, e, block))
            return false;
        pattern_fill(block, e->size, pattern_seed(cursor->instance, e->object));
    } else {
        touch_pages(block, e->size);
    }
    object->block = block;
    object->size = e->size;
    atomic_store_explicit(&object->state, OBJECT_LIVE, memory_order_release);
    return true;
}

static bool run_free(const struct stream_cursor *cursor, const struct replay_event *e, bool check)
{
    struct replay_object *object = &cursor->instance->objects[e->object];
    if (check && object->block != NULL && !check_released(cursor, e->object, object))
        return false;
    free(object->block);
    atomic_store_explicit(&object->state, OBJECT_RELEASED, memory_order_relaxed);
    return true;
}

static bool run_realloc(const struct stream_cursor *cursor, const struct replay_event *e, bool check)
{
    struct replay_instance *instance = cursor->instance;
    struct replay_object *old = e->old_object == NO_OBJECT ? NULL : &instance->objects[e->old_object];
    struct replay_object *object = &instance->objects[e->object];
    void *old_block = old != NULL ? old->block : NULL;
    uint64_t kept = old != NULL ? (old->size < e->size ? old->size : e->size) : 0;
    if (check && old_block != NULL && !check_released(cursor, e->old_object, old))
        return false;
    void *block = realloc(old_block, e->size);
    if (block == NULL && e->size != 0) {
        report_failure(cursor, "realloc returned NULL");
        return false;
    }
    if (old != NULL)
        atomic_store_explicit(&old->state, OBJECT_RELEASED, memory_order_relaxed);
    if (block != NULL && check) {
        size_t bad = pattern_mismatch(block, kept, pattern_seed(instance, e->old_object));
        if (bad != PATTERN_OK) {
            report_failure(cursor, "realloc did not preserve the contents (byte %llu differs)",
                           (unsigned long long)bad);
            return false;
        }
        struct replay_event as_malloc = *e;
        as_malloc.kind = TRACE_MALLOC;
        if (!check_acquired(cursor, &as_malloc, block))
            return false;
        pattern_fill(block, e->size, pattern_seed(instance, e->object));
    } else if (block != NULL) {
        touch_pages(block, e->size);
    }
    object->block = block;
    object->size = e->size;
    atomic_store_explicit(&object->state, OBJECT_LIVE, memory_order_release);
    return true;
}

static bool run_event(const struct stream_cursor *cursor, const struct replay_event *e, bool check)
{
    switch (trace_kind_class(e->kind)) {
    case TRACE_CLASS_FREE:
        return run_free(cursor, e, check);
    case TRACE_CLASS_REALLOC:
        return run_realloc(cursor, e, check);
    default:
        return run_allocation(cursor, e, check);
    }
}

/* Runs each stream as far as it can go; a stream blocked on another
 * thread's allocation yields to this worker's other streams. Replaying in
 * recorded order is always possible, so some stream always progresses. */
static void *worker_main(void *arg)
{
    struct worker *worker = arg;
    bool check = worker->options->check;
    uint32_t unfinished = worker->cursor_count;
    unsigned idle_rounds = 0;
    pthread_barrier_wait(worker->start);
    clock_gettime(CLOCK_MONOTONIC, &worker->started);
    while (unfinished > 0 && !atomic_load_explicit(&replay_failed, memory_order_relaxed)) {
        bool progressed = false;
        for (uint32_t c = 0; c < worker->cursor_count; c++) {
            struct stream_cursor *cursor = &worker->cursors[c];
            uint64_t count = cursor->stream->count;
            if (cursor->next == count)
                continue;
            while (cursor->next < count) {
                const struct replay_event *e = &cursor->stream->events[cursor->next];
                if (!event_ready(cursor->instance, e))
                    break;
                if (!run_event(cursor, e, check))
                    return NULL;
                cursor->next++;
                progressed = true;
            }
            if (cursor->next == count)
                unfinished--;
        }
        if (progressed) {
            idle_rounds = 0;
        } else if (++idle_rounds < SPINS_BEFORE_YIELD) {
            cpu_relax();
        } else {
            sched_yield();
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &worker->finished);
    return NULL;
}

static double seconds_between(struct timespec a, struct timespec b)
{
    return (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
}

/* Objects still live at the end must still hold their pattern. */
static void verify_survivors(struct replay_instance *instance)
{
    const struct loaded_trace *trace = instance->trace;
    for (uint32_t id = 0; id < trace->object_count && !atomic_load(&replay_failed); id++) {
        struct replay_object *object = &instance->objects[id];
        if (atomic_load(&object->state) != OBJECT_LIVE || object->block == NULL)
            continue;
        size_t bad = pattern_mismatch(object->block, object->size, pattern_seed(instance, id));
        if (bad != PATTERN_OK) {
            snprintf(first_error, sizeof first_error,
                     "%s (copy %u): object %u, live at the end, was modified at byte %llu",
                     trace->path, instance->number, id, (unsigned long long)bad);
            atomic_store(&replay_failed, true);
        }
    }
}

void replay_run(struct replay_instance *instances, uint32_t instance_count,
                const struct replay_options *options, struct replay_result *result)
{
    uint32_t stream_total = 0;
    for (uint32_t i = 0; i < instance_count; i++)
        stream_total += instances[i].trace->stream_count;
    uint32_t worker_count = options->workers == 0 || options->workers > stream_total
                                ? stream_total : options->workers;
    memset(result, 0, sizeof *result);
    if (worker_count == 0)
        return;

    struct worker *workers = arena_alloc(worker_count * sizeof *workers);
    for (uint32_t w = 0; w < worker_count; w++)
        workers[w].cursors = arena_alloc((stream_total / worker_count + 1) * sizeof(struct stream_cursor));
    uint32_t dealt = 0;
    for (uint32_t i = 0; i < instance_count; i++) {
        for (uint32_t t = 0; t < instances[i].trace->stream_count; t++, dealt++) {
            struct worker *worker = &workers[dealt % worker_count];
            worker->cursors[worker->cursor_count++] = (struct stream_cursor){
                &instances[i], &instances[i].trace->streams[t], t, 0
            };
            result->events += instances[i].trace->streams[t].count;
        }
    }

    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, worker_count);
    for (uint32_t w = 0; w < worker_count; w++) {
        workers[w].options = options;
        workers[w].start = &start;
        if (pthread_create(&workers[w].thread, NULL, worker_main, &workers[w]) != 0) {
            fprintf(stderr, "corealloc-replay: cannot create replay thread %u\n", w);
            exit(3);
        }
    }
    for (uint32_t w = 0; w < worker_count; w++)
        pthread_join(workers[w].thread, NULL);
    pthread_barrier_destroy(&start);

    if (options->check) {
        for (uint32_t i = 0; i < instance_count; i++)
            verify_survivors(&instances[i]);
    }
    result->failed = atomic_load(&replay_failed);
    snprintf(result->error, sizeof result->error, "%s", first_error);
    struct timespec first_start = workers[0].started, last_end = workers[0].finished;
    for (uint32_t w = 1; w < worker_count; w++) {
        if (seconds_between(workers[w].started, first_start) > 0)
            first_start = workers[w].started;
        if (seconds_between(last_end, workers[w].finished) > 0)
            last_end = workers[w].finished;
    }
    result->seconds = seconds_between(first_start, last_end);
}
