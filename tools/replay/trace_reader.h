/* Reads and validates a trace file, and turns it into one event stream per
 * recorded thread with objects numbered densely (0, 1, 2, ...). */
#ifndef COREALLOC_TRACE_READER_H
#define COREALLOC_TRACE_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/trace_format.h"

#define NO_OBJECT UINT32_MAX

struct replay_event {
    uint64_t size;
    uint32_t object;     /* created by an allocation, or released by a free */
    uint32_t old_object; /* released by a realloc, or NO_OBJECT */
    uint8_t kind;
    uint8_t alignment_log2;
};

struct event_stream {
    struct replay_event *events;
    uint64_t count;
};

struct loaded_trace {
    const char *path;
    uint64_t pid;
    uint32_t flags;
    uint32_t end_reason;
    char command[512]; /* the recorded command line, arguments space-separated */
    uint32_t stream_count;
    struct event_stream *streams;
    uint64_t event_count;
    uint64_t object_count;
    uint64_t kind_counts[TRACE_KIND_COUNT];
    /* Requested bytes, replaying the events in their recorded order. */
    uint64_t peak_live_bytes;
    uint64_t peak_live_objects;
    uint64_t live_objects_at_end;
};

/* On failure returns false and writes a message naming the byte offset. */
bool trace_load(const char *path, struct loaded_trace *out, char *error, size_t error_cap);

#endif
