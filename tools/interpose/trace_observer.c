/* corealloc trace record: every call becomes a compact event in a per-thread
 * buffer; full buffers are written to the trace file as checksummed chunks,
 * so a long run streams to disk instead of accumulating in memory. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "../common/cpu_relax.h"
#include "observer.h"
#include "process_output.h"
#include "raw_io.h"
#include "thread_index.h"

#define BUFFER_BYTES (64 * 1024)
#define EVENT_MAX_BYTES (1 + 3 * TRACE_VARINT_MAX_BYTES)

struct thread_buffer {
    struct thread_buffer *next_in_list;
    atomic_flag lock;  /* taken by the owner per event, by others to flush */
    atomic_bool owned; /* free buffers are reused by new threads */
    uint32_t thread;
    uint32_t event_count;
    uint32_t len;
    uint64_t last_seq;
    unsigned char data[BUFFER_BYTES];
};

static struct {
    pthread_once_t once;
    atomic_bool recording;
    const char *base_path;
    bool follow_children;
    pid_t pid; /* of the process that owns fd */
    int fd;
    pthread_mutex_t file_lock;
    off_t end_offset;              /* where the end chunk went before an exec */
    uint64_t flushed_events;       /* under file_lock */
    atomic_uint_least64_t last_seq; /* sequence numbers (and object ids) start at 1 */
    uint64_t first_seq;            /* objects numbered below were not recorded here */
    _Atomic(struct thread_buffer *) buffers;
    pthread_key_t thread_exit_key;
} trace = {
    .once = PTHREAD_ONCE_INIT,
    .fd = -1,
    .file_lock = PTHREAD_MUTEX_INITIALIZER,
    .first_seq = 1,
};

static __attribute__((tls_model("initial-exec"))) __thread struct thread_buffer *my_buffer;

static void lock_buffer(struct thread_buffer *buffer)
{
    while (atomic_flag_test_and_set_explicit(&buffer->lock, memory_order_acquire))
        cpu_relax();
}

static void unlock_buffer(struct thread_buffer *buffer)
{
    atomic_flag_clear_explicit(&buffer->lock, memory_order_release);
}

static void write_chunk(uint32_t magic, uint32_t thread, uint32_t event_count,
                        const void *payload, uint32_t payload_len)
{
    struct trace_chunk_header header = {
        magic, thread, event_count, payload_len, trace_fnv1a(payload, payload_len)
    };
    struct iovec parts[2] = { { &header, sizeof header }, { (void *)payload, payload_len } };
    size_t total = sizeof header + payload_len;
    ssize_t written = writev(trace.fd, parts, 2);
    if (written >= 0 && (size_t)written < total) {
        /* rare short write: finish it piecewise */
        size_t done = (size_t)written;
        if (done < sizeof header)
            raw_write_all(trace.fd, (char *)&header + done, sizeof header - done);
        size_t payload_done = done > sizeof header ? done - sizeof header : 0;
        raw_write_all(trace.fd, (const char *)payload + payload_done, payload_len - payload_done);
    }
}

static void flush_locked(struct thread_buffer *buffer)
{
    if (buffer->event_count == 0)
        return;
    pthread_mutex_lock(&trace.file_lock);
    write_chunk(TRACE_CHUNK_EVENTS, buffer->thread, buffer->event_count, buffer->data, buffer->len);
    trace.flushed_events += buffer->event_count;
    pthread_mutex_unlock(&trace.file_lock);
    buffer->event_count = 0;
    buffer->len = 0;
}

static void release_buffer_at_thread_exit(void *arg)
{
    struct thread_buffer *buffer = arg;
    lock_buffer(buffer);
    flush_locked(buffer);
    unlock_buffer(buffer);
    my_buffer = NULL;
    atomic_store(&buffer->owned, false);
}

static struct thread_buffer *buffer_of_this_thread(uint32_t thread)
{
    struct thread_buffer *buffer = my_buffer;
    if (buffer != NULL)
        return buffer;
    for (buffer = atomic_load(&trace.buffers); buffer != NULL; buffer = buffer->next_in_list) {
        bool free_buffer = false;
        if (atomic_compare_exchange_strong(&buffer->owned, &free_buffer, true))
            break;
    }
    if (buffer == NULL) {
        buffer = mmap(NULL, sizeof *buffer, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (buffer == MAP_FAILED) {
            raw_error("corealloc trace interposer: cannot map a thread buffer; aborting");
            abort();
        }
        atomic_store(&buffer->owned, true);
        buffer->next_in_list = atomic_load(&trace.buffers);
        while (!atomic_compare_exchange_weak(&trace.buffers, &buffer->next_in_list, buffer))
            ;
    }
    buffer->thread = thread;
    my_buffer = buffer;
    pthread_setspecific(trace.thread_exit_key, buffer);
    return buffer;
}

static bool start_trace_file(bool try_base_path, uint32_t flags)
{
    char path[4096];
    trace.fd = process_create_output(trace.base_path, try_base_path, path, sizeof path);
    if (trace.fd < 0) {
        raw_error("corealloc trace interposer: cannot create a trace file for ", trace.base_path);
        return false;
    }
    struct {
        struct trace_file_header fixed;
        char cmdline[4096];
    } header;
    memset(&header, 0, sizeof header);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    memcpy(header.fixed.magic, TRACE_MAGIC, TRACE_MAGIC_LEN);
    header.fixed.version = TRACE_VERSION;
    header.fixed.flags = flags;
    header.fixed.pid = (uint64_t)getpid();
    header.fixed.ppid = (uint64_t)getppid();
    header.fixed.start_unix_ns = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
    header.fixed.page_size = (uint32_t)sysconf(_SC_PAGESIZE);
    header.fixed.cmdline_len = (uint32_t)process_read_cmdline(header.cmdline, sizeof header.cmdline);
    header.fixed.header_len = (uint16_t)(sizeof header.fixed + header.fixed.cmdline_len);
    raw_write_all(trace.fd, &header, header.fixed.header_len);
    trace.pid = getpid();
    trace.flushed_events = 0;
    atomic_store(&trace.recording, true);
    return true;
}

static void init_trace(void)
{
    trace.base_path = getenv("COREALLOC_TRACE_FILE");
    if (trace.base_path == NULL) {
        raw_error("corealloc trace interposer: COREALLOC_TRACE_FILE is not set; "
                  "run the program with 'corealloc trace record'");
        return;
    }
    const char *children = getenv("COREALLOC_TRACE_CHILDREN");
    trace.follow_children = children == NULL || strcmp(children, "0") != 0;
    pthread_key_create(&trace.thread_exit_key, release_buffer_at_thread_exit);
    bool root = process_is_root();
    if (root || trace.follow_children)
        start_trace_file(root, 0);
}

bool observer_enabled(void)
{
    pthread_once(&trace.once, init_trace);
    return atomic_load_explicit(&trace.recording, memory_order_relaxed);
}

/* Appends one event and returns its sequence number (0: not recorded).
 * object is the id of the object a realloc or free refers to. */
static uint64_t append_event(uint32_t thread, enum trace_kind kind, uint64_t size,
                             uint64_t alignment, uint64_t object)
{
    struct thread_buffer *buffer = buffer_of_this_thread(thread);
    uint64_t seq = 0;
    lock_buffer(buffer);
    if (atomic_load_explicit(&trace.recording, memory_order_relaxed)) {
        seq = atomic_fetch_add_explicit(&trace.last_seq, 1, memory_order_relaxed) + 1;
        unsigned char *out = buffer->data + buffer->len;
        *out++ = (unsigned char)kind;
        out = trace_put_varint(out, buffer->event_count == 0 ? seq : seq - buffer->last_seq);
        switch (trace_kind_class(kind)) {
        case TRACE_CLASS_ALIGNED:
            out = trace_put_varint(out, size);
            out = trace_put_varint(out, alignment);
            break;
        case TRACE_CLASS_REALLOC:
            out = trace_put_varint(out, object != 0 ? seq - object : 0);
            out = trace_put_varint(out, size);
            break;
        case TRACE_CLASS_FREE:
            out = trace_put_varint(out, seq - object);
            break;
        default:
            out = trace_put_varint(out, size);
            break;
        }
        buffer->len = (uint32_t)(out - buffer->data);
        buffer->event_count++;
        buffer->last_seq = seq;
        if (buffer->len > BUFFER_BYTES - EVENT_MAX_BYTES)
            flush_locked(buffer);
    }
    unlock_buffer(buffer);
    return seq;
}

/* Objects allocated before this trace began (in the parent of a fork), or
 * while it was not recording, have no event to refer to. */
static bool recorded_here(const struct pointer_record *object)
{
    return object != NULL && object->tag >= trace.first_seq;
}

uint64_t observer_alloc(enum trace_kind kind, size_t size, size_t alignment, uint32_t thread)
{
    return append_event(thread, kind, size, alignment, 0);
}

uint64_t observer_realloc(enum trace_kind kind, const struct pointer_record *old,
                          bool moved, size_t size, uint32_t thread)
{
    (void)moved;
    return append_event(thread, kind, size, 0, recorded_here(old) ? old->tag : 0);
}

/* realloc(p, 0) that frees p is recorded as a free. */
void observer_free(enum trace_kind kind, const struct pointer_record *object, uint32_t thread)
{
    if (recorded_here(object))
        append_event(thread, trace_kind_class(kind) == TRACE_CLASS_FREE ? kind : TRACE_FREE, 0, 0,
                     object->tag);
}

/* Flushes every thread's buffer and writes the end chunk. Threads that still
 * allocate afterwards (detached ones, at exit) are no longer recorded. */
static void finish_trace(uint32_t reason)
{
    if (!atomic_load(&trace.recording) || getpid() != trace.pid)
        return;
    atomic_store(&trace.recording, false);
    for (struct thread_buffer *b = atomic_load(&trace.buffers); b != NULL; b = b->next_in_list) {
        lock_buffer(b);
        flush_locked(b);
        unlock_buffer(b);
    }
    pthread_mutex_lock(&trace.file_lock);
    struct trace_end_payload end = { trace.flushed_events, thread_index_count(), reason };
    trace.end_offset = lseek(trace.fd, 0, SEEK_CUR);
    write_chunk(TRACE_CHUNK_END, 0, 0, &end, sizeof end);
    pthread_mutex_unlock(&trace.file_lock);
}

__attribute__((destructor)) static void trace_at_exit(void)
{
    finish_trace(TRACE_END_EXIT);
}

void observer_image_ending(bool by_exec)
{
    trace.end_offset = -1;
    finish_trace(by_exec ? TRACE_END_EXEC : TRACE_END_EXIT);
}

/* The exec did not happen: take the end chunk back and keep recording. */
void observer_exec_failed(void)
{
    if (trace.end_offset < 0 || getpid() != trace.pid)
        return;
    if (ftruncate(trace.fd, trace.end_offset) == 0 &&
        lseek(trace.fd, trace.end_offset, SEEK_SET) == trace.end_offset)
        atomic_store(&trace.recording, true);
}

void observer_fork_prepare(void)
{
    pthread_mutex_lock(&trace.file_lock);
    for (struct thread_buffer *b = atomic_load(&trace.buffers); b != NULL; b = b->next_in_list)
        lock_buffer(b);
}

void observer_fork_parent(void)
{
    for (struct thread_buffer *b = atomic_load(&trace.buffers); b != NULL; b = b->next_in_list)
        unlock_buffer(b);
    pthread_mutex_unlock(&trace.file_lock);
}

/* The parent's unflushed events are the parent's to write: the child drops
 * them and starts a trace of its own (or none), numbering threads afresh. */
void observer_fork_child(void)
{
    for (struct thread_buffer *b = atomic_load(&trace.buffers); b != NULL; b = b->next_in_list) {
        b->event_count = 0;
        b->len = 0;
        if (b != my_buffer)
            atomic_store(&b->owned, false);
        unlock_buffer(b);
    }
    if (my_buffer != NULL)
        my_buffer->thread = thread_index_current();
    pthread_mutex_unlock(&trace.file_lock);
    if (!atomic_load(&trace.recording))
        return;
    close(trace.fd);
    trace.first_seq = atomic_load(&trace.last_seq) + 1;
    atomic_store(&trace.recording, false);
    if (trace.follow_children)
        start_trace_file(false, TRACE_FLAG_FORKED_CHILD);
}
