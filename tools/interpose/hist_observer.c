/* corealloc hist: counts what the program asks of its allocator and writes
 * the totals, one file per process, for the corealloc command to render. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "observer.h"
#include "process_output.h"
#include "raw_io.h"

#define HIST_FORMAT_VERSION 1
/* Bucket 0 holds the value 0; bucket b >= 1 holds [2^(b-1), 2^b). */
#define LOG_BUCKETS 65

enum size_group { GROUP_MALLOC, GROUP_CALLOC, GROUP_REALLOC, GROUP_ALIGNED, GROUP_COUNT };
static const char *const group_names[GROUP_COUNT] = { "malloc", "calloc", "realloc", "aligned" };

/* Growth of a realloc as new/old size: (1,1.25] (1.25,1.5] (1.5,2] (2,4] (4,inf). */
#define GROWTH_RATIO_BUCKETS 5
static const char *const growth_ratio_names[GROWTH_RATIO_BUCKETS] = {
    "1-1.25", "1.25-1.5", "1.5-2", "2-4", ">4"
};

/* Counters of one thread, written only by it; summed when the report is
 * written. Relaxed atomics make the reads from the reporting thread legal. */
struct thread_stats {
    struct thread_stats *next_in_list;
    uint64_t os_tid;
    uint64_t calls[TRACE_KIND_COUNT];
    uint64_t sizes[GROUP_COUNT][LOG_BUCKETS];
    uint64_t frees;
    uint64_t remote_frees;    /* of an object another thread allocated */
    uint64_t inherited_frees; /* of an object allocated before fork() */
    uint64_t lifetimes[LOG_BUCKETS];
    uint64_t realloc_from_null, realloc_grow, realloc_shrink, realloc_same, realloc_moved;
    uint64_t realloc_of_remote;
    uint64_t growth_ratios[GROWTH_RATIO_BUCKETS];
    uint64_t growth_deltas[LOG_BUCKETS];
    uint64_t realloc_chains[LOG_BUCKETS]; /* reallocs per object, at its free */
};

static struct {
    pthread_once_t once;
    bool enabled;
    bool follow_children;
    const char *output_dir;
    pid_t pid;
    _Atomic(struct thread_stats *) all_threads;
    atomic_uint_least64_t allocations; /* the clock for object lifetimes */
    bool forked;                       /* this process is a fork() child */
    uint64_t fork_allocations;         /* the clock when this process forked */
    bool reported;                     /* by _exit: the destructor must not repeat it */
    char exec_report_path[4096];       /* removed again if the exec fails */
    atomic_int_least64_t live_bytes, live_objects;
    atomic_int_least64_t peak_bytes, peak_objects;
} hist = { .once = PTHREAD_ONCE_INIT };

static __attribute__((tls_model("initial-exec"))) __thread struct thread_stats *my_stats;

static void bump(uint64_t *counter, uint64_t amount)
{
    __atomic_store_n(counter, __atomic_load_n(counter, __ATOMIC_RELAXED) + amount, __ATOMIC_RELAXED);
}

static uint64_t read_counter(const uint64_t *counter)
{
    return __atomic_load_n(counter, __ATOMIC_RELAXED);
}

static unsigned log_bucket(uint64_t value)
{
    return value == 0 ? 0 : 64 - (unsigned)__builtin_clzll(value);
}

static void init_hist(void)
{
    hist.output_dir = getenv("COREALLOC_HIST_DIR");
    hist.pid = getpid();
    const char *children = getenv("COREALLOC_HIST_CHILDREN");
    hist.follow_children = children == NULL || strcmp(children, "0") != 0;
    if (hist.output_dir == NULL)
        raw_error("corealloc hist interposer: COREALLOC_HIST_DIR is not set; "
                  "run the program with 'corealloc hist'");
    hist.enabled = hist.output_dir != NULL && (hist.follow_children || process_is_root());
}

bool observer_enabled(void)
{
    pthread_once(&hist.once, init_hist);
    return hist.enabled;
}

static struct thread_stats *stats_of_this_thread(void)
{
    if (my_stats != NULL)
        return my_stats;
    struct thread_stats *stats = mmap(NULL, sizeof *stats, PROT_READ | PROT_WRITE,
                                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (stats == MAP_FAILED) {
        raw_error("corealloc hist interposer: cannot map per-thread counters; aborting");
        abort();
    }
    stats->os_tid = (uint64_t)gettid();
    stats->next_in_list = atomic_load(&hist.all_threads);
    while (!atomic_compare_exchange_weak(&hist.all_threads, &stats->next_in_list, stats))
        ;
    my_stats = stats;
    return stats;
}

static void raise_peak(atomic_int_least64_t *peak, int64_t value)
{
    int64_t seen = atomic_load_explicit(peak, memory_order_relaxed);
    while (value > seen &&
           !atomic_compare_exchange_weak_explicit(peak, &seen, value, memory_order_relaxed,
                                                  memory_order_relaxed))
        ;
}

static void count_live(int64_t bytes, int64_t objects)
{
    int64_t live_bytes = atomic_fetch_add_explicit(&hist.live_bytes, bytes, memory_order_relaxed) + bytes;
    int64_t live_objects = atomic_fetch_add_explicit(&hist.live_objects, objects, memory_order_relaxed) + objects;
    if (bytes > 0)
        raise_peak(&hist.peak_bytes, live_bytes);
    if (objects > 0)
        raise_peak(&hist.peak_objects, live_objects);
}

static enum size_group group_of(enum trace_kind kind)
{
    switch (trace_kind_class(kind)) {
    case TRACE_CLASS_ALIGNED: return GROUP_ALIGNED;
    case TRACE_CLASS_REALLOC: return GROUP_REALLOC;
    default: return kind == TRACE_CALLOC ? GROUP_CALLOC : GROUP_MALLOC;
    }
}

uint64_t observer_alloc(enum trace_kind kind, size_t size, size_t alignment, uint32_t thread)
{
    (void)alignment;
    (void)thread;
    struct thread_stats *stats = stats_of_this_thread();
    bump(&stats->calls[kind], 1);
    bump(&stats->sizes[group_of(kind)][log_bucket(size)], 1);
    count_live((int64_t)size, 1);
    return atomic_fetch_add_explicit(&hist.allocations, 1, memory_order_relaxed);
}

static unsigned growth_ratio_bucket(uint64_t old_size, uint64_t new_size)
{
    if (new_size * 4 <= old_size * 5)
        return 0;
    if (new_size * 2 <= old_size * 3)
        return 1;
    if (new_size <= old_size * 2)
        return 2;
    if (new_size <= old_size * 4)
        return 3;
    return 4;
}

static bool inherited(const struct pointer_record *object)
{
    return hist.forked && object->tag < hist.fork_allocations;
}

uint64_t observer_realloc(enum trace_kind kind, const struct pointer_record *old,
                          bool moved, size_t size, uint32_t thread)
{
    struct thread_stats *stats = stats_of_this_thread();
    bump(&stats->calls[kind], 1);
    bump(&stats->sizes[GROUP_REALLOC][log_bucket(size)], 1);
    if (old == NULL) {
        bump(&stats->realloc_from_null, 1);
        count_live((int64_t)size, 1);
        return atomic_fetch_add_explicit(&hist.allocations, 1, memory_order_relaxed);
    }
    count_live((int64_t)size - (int64_t)old->size, 0);
    if (moved)
        bump(&stats->realloc_moved, 1);
    if (old->thread != thread && !inherited(old))
        bump(&stats->realloc_of_remote, 1);
    if (size > old->size) {
        bump(&stats->realloc_grow, 1);
        if (old->size > 0)
            bump(&stats->growth_ratios[growth_ratio_bucket(old->size, size)], 1);
        bump(&stats->growth_deltas[log_bucket(size - old->size)], 1);
    } else if (size < old->size) {
        bump(&stats->realloc_shrink, 1);
    } else {
        bump(&stats->realloc_same, 1);
    }
    return old->tag; /* a realloc continues the object's life */
}

void observer_free(enum trace_kind kind, const struct pointer_record *object, uint32_t thread)
{
    struct thread_stats *stats = stats_of_this_thread();
    bump(&stats->calls[kind], 1);
    bump(&stats->frees, 1);
    count_live(-(int64_t)object->size, -1);
    if (inherited(object)) {
        bump(&stats->inherited_frees, 1);
        return;
    }
    if (object->thread != thread)
        bump(&stats->remote_frees, 1);
    uint64_t now = atomic_load_explicit(&hist.allocations, memory_order_relaxed);
    bump(&stats->lifetimes[log_bucket(now - object->tag - 1)], 1);
    if (object->realloc_count > 0)
        bump(&stats->realloc_chains[log_bucket(object->realloc_count)], 1);
}

/* ---- the report file ---- */

struct report {
    int fd;
    char buf[4096];
    struct raw_text text;
};

static void report_flush(struct report *report)
{
    raw_write_all(report->fd, report->buf, report->text.len);
    report->text.len = 0;
}

static void report_line(struct report *report, const char *key, const char *label, uint64_t value)
{
    if (report->text.len > sizeof report->buf - 256)
        report_flush(report);
    raw_text_str(&report->text, key);
    if (label != NULL) {
        raw_text_str(&report->text, " ");
        raw_text_str(&report->text, label);
    }
    raw_text_str(&report->text, " ");
    raw_text_u64(&report->text, value);
    raw_text_str(&report->text, "\n");
}

static void report_buckets(struct report *report, const char *key, const char *label,
                           const uint64_t *buckets)
{
    char name[64];
    for (unsigned b = 0; b < LOG_BUCKETS; b++) {
        if (buckets[b] == 0)
            continue;
        struct raw_text text = { name, sizeof name, 0 };
        if (label != NULL) {
            raw_text_str(&text, label);
            raw_text_str(&text, " ");
        }
        raw_text_u64(&text, b);
        report_line(report, key, name, buckets[b]);
    }
}

static void report_cmdline(struct report *report)
{
    char cmdline[2048];
    size_t len = process_read_cmdline(cmdline, sizeof cmdline - 1);
    for (size_t i = 0; i < len; i++) {
        if (cmdline[i] == '\0' || cmdline[i] == '\n')
            cmdline[i] = ' ';
    }
    cmdline[len] = '\0';
    raw_text_str(&report->text, "cmdline ");
    raw_text_str(&report->text, cmdline);
    raw_text_str(&report->text, "\n");
}

static void report_thread(struct report *report, uint64_t tid, const char *what, uint64_t value)
{
    char label[64];
    struct raw_text text = { label, sizeof label, 0 };
    raw_text_u64(&text, tid);
    raw_text_str(&text, " ");
    raw_text_str(&text, what);
    report_line(report, "thread", label, value);
}

/* Sums every thread's counters into *total (mmap'd: the report is written
 * while the program may still be allocating), reports each thread that
 * allocated, and returns how many did. */
static uint64_t sum_threads(struct thread_stats *total, struct report *report)
{
    const size_t first = offsetof(struct thread_stats, calls) / sizeof(uint64_t);
    const size_t words = sizeof *total / sizeof(uint64_t);
    uint64_t *sum = (uint64_t *)total;
    uint64_t allocating_threads = 0;
    for (struct thread_stats *t = atomic_load(&hist.all_threads); t != NULL; t = t->next_in_list) {
        const uint64_t *word = (const uint64_t *)t;
        for (size_t w = first; w < words; w++)
            sum[w] += read_counter(&word[w]);
        uint64_t allocations = 0;
        for (unsigned k = 1; k < TRACE_KIND_COUNT; k++) {
            if (trace_kind_class(k) != TRACE_CLASS_FREE)
                allocations += read_counter(&t->calls[k]);
        }
        uint64_t frees = read_counter(&t->frees);
        if (allocations == 0 && frees == 0)
            continue;
        allocating_threads += allocations > 0;
        report_thread(report, t->os_tid, "allocations", allocations);
        report_thread(report, t->os_tid, "frees", frees);
        report_thread(report, t->os_tid, "remote_frees", read_counter(&t->remote_frees));
    }
    return allocating_threads;
}

static void write_report(const char *reason, char *path, size_t path_cap)
{
    char base[4096];
    struct raw_text base_text = { base, sizeof base, 0 };
    raw_text_str(&base_text, hist.output_dir);
    raw_text_str(&base_text, "/hist");
    struct report *report = mmap(NULL, sizeof *report + sizeof(struct thread_stats),
                                 PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (report == MAP_FAILED)
        return;
    report->fd = process_create_output(base, false, path, path_cap);
    if (report->fd < 0) {
        raw_error("corealloc hist interposer: cannot create a report in ", hist.output_dir);
        munmap(report, sizeof *report + sizeof(struct thread_stats));
        return;
    }
    report->text = (struct raw_text){ report->buf, sizeof report->buf, 0 };
    struct thread_stats *total = (struct thread_stats *)(report + 1);

    report_line(report, "corealloc-hist", NULL, HIST_FORMAT_VERSION);
    report_line(report, "pid", NULL, (uint64_t)getpid());
    report_line(report, "ppid", NULL, (uint64_t)getppid());
    report_line(report, "root", NULL, process_is_root());
    report_line(report, "forked", NULL, hist.forked);
    raw_text_str(&report->text, "end ");
    raw_text_str(&report->text, reason);
    raw_text_str(&report->text, "\n");
    report_cmdline(report);
    report_line(report, "threads_allocating", NULL, sum_threads(total, report));
    for (unsigned k = 1; k < TRACE_KIND_COUNT; k++) {
        if (total->calls[k] != 0)
            report_line(report, "calls", trace_kind_name(k), total->calls[k]);
    }
    for (unsigned g = 0; g < GROUP_COUNT; g++)
        report_buckets(report, "size", group_names[g], total->sizes[g]);
    report_line(report, "frees", NULL, total->frees);
    report_line(report, "remote_frees", NULL, total->remote_frees);
    report_line(report, "inherited_frees", NULL, total->inherited_frees);
    report_buckets(report, "lifetime", NULL, total->lifetimes);
    report_line(report, "allocations", NULL, atomic_load(&hist.allocations) - hist.fork_allocations);
    report_line(report, "live_bytes_at_end", NULL, (uint64_t)atomic_load(&hist.live_bytes));
    report_line(report, "live_objects_at_end", NULL, (uint64_t)atomic_load(&hist.live_objects));
    report_line(report, "peak_live_bytes", NULL, (uint64_t)atomic_load(&hist.peak_bytes));
    report_line(report, "peak_live_objects", NULL, (uint64_t)atomic_load(&hist.peak_objects));
    report_line(report, "realloc", "from_null", total->realloc_from_null);
    report_line(report, "realloc", "grow", total->realloc_grow);
    report_line(report, "realloc", "shrink", total->realloc_shrink);
    report_line(report, "realloc", "same", total->realloc_same);
    report_line(report, "realloc", "moved", total->realloc_moved);
    report_line(report, "realloc", "of_remote", total->realloc_of_remote);
    for (unsigned r = 0; r < GROWTH_RATIO_BUCKETS; r++)
        report_line(report, "growth_ratio", growth_ratio_names[r], total->growth_ratios[r]);
    report_buckets(report, "growth_delta", NULL, total->growth_deltas);
    report_buckets(report, "realloc_chain", NULL, total->realloc_chains);
    report_flush(report);
    close(report->fd);
    hist.reported = true;
    munmap(report, sizeof *report + sizeof(struct thread_stats));
}

static bool reports_here(void)
{
    return observer_enabled() && getpid() == hist.pid;
}

__attribute__((destructor)) static void hist_at_exit(void)
{
    char path[4096];
    if (reports_here() && !hist.reported)
        write_report("exit", path, sizeof path);
}

void observer_image_ending(bool by_exec)
{
    hist.exec_report_path[0] = '\0';
    if (reports_here())
        write_report(by_exec ? "exec" : "exit", hist.exec_report_path, sizeof hist.exec_report_path);
}

/* The process lives on, and will report again at exit. */
void observer_exec_failed(void)
{
    if (hist.exec_report_path[0] != '\0') {
        unlink(hist.exec_report_path);
        hist.reported = false;
    }
}

void observer_fork_prepare(void)
{
}

void observer_fork_parent(void)
{
}

/* The child reports on itself only: counts restart, but live objects (and the
 * table that holds them) are inherited, so live totals carry on. */
void observer_fork_child(void)
{
    hist.pid = getpid();
    hist.reported = false;
    hist.enabled = hist.enabled && hist.follow_children;
    for (struct thread_stats *t = atomic_load(&hist.all_threads); t != NULL; t = t->next_in_list) {
        uint64_t tid = t == my_stats ? (uint64_t)gettid() : t->os_tid;
        struct thread_stats *next = t->next_in_list;
        memset(t, 0, sizeof *t);
        t->next_in_list = next;
        t->os_tid = tid;
    }
    hist.forked = true;
    hist.fork_allocations = atomic_load(&hist.allocations);
    atomic_store(&hist.peak_bytes, atomic_load(&hist.live_bytes));
    atomic_store(&hist.peak_objects, atomic_load(&hist.live_objects));
}
