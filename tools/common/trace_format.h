/* The corealloc binary trace format, shared by the recorder and the replayer.
 * docs/trace-format.md is the prose specification; keep the two in step. */
#ifndef COREALLOC_TRACE_FORMAT_H
#define COREALLOC_TRACE_FORMAT_H

#include <stdint.h>

#define TRACE_MAGIC "CAtrace\0"
#define TRACE_MAGIC_LEN 8
#define TRACE_VERSION 1

/* Fixed part of the file header; the command line (NUL-separated arguments)
 * follows it, and header_len covers both. All integers are little-endian. */
struct trace_file_header {
    char magic[TRACE_MAGIC_LEN];
    uint16_t version;
    uint16_t header_len;
    uint32_t flags;
    uint64_t pid;
    uint64_t ppid;
    uint64_t start_unix_ns;
    uint32_t page_size;
    uint32_t cmdline_len;
};

/* Set when the process was created by fork() from a traced process. */
#define TRACE_FLAG_FORKED_CHILD 1u

#define TRACE_CHUNK_EVENTS 0x4b4e4843u /* "CHNK" */
#define TRACE_CHUNK_END 0x444e4554u    /* "TEND" */

struct trace_chunk_header {
    uint32_t magic;
    uint32_t thread;
    uint32_t event_count;
    uint32_t payload_len;
    uint32_t payload_fnv1a;
};

/* Payload of the end chunk: proves the trace was not cut short. */
struct trace_end_payload {
    uint64_t total_events;
    uint32_t thread_count;
    uint32_t reason;
};

enum trace_end_reason { TRACE_END_EXIT = 0, TRACE_END_EXEC = 1 };

/* One byte per event names the call; the operands that follow depend on its
 * class (see trace_kind_class). */
enum trace_kind {
    TRACE_MALLOC = 1,
    TRACE_CALLOC,
    TRACE_NEW,
    TRACE_NEW_ARRAY,
    TRACE_POSIX_MEMALIGN,
    TRACE_ALIGNED_ALLOC,
    TRACE_MEMALIGN,
    TRACE_VALLOC,
    TRACE_PVALLOC,
    TRACE_NEW_ALIGNED,
    TRACE_NEW_ARRAY_ALIGNED,
    TRACE_REALLOC,
    TRACE_REALLOCARRAY,
    TRACE_FREE,
    TRACE_DELETE,
    TRACE_DELETE_ARRAY,
    TRACE_KIND_COUNT
};

enum trace_kind_class {
    TRACE_CLASS_INVALID,
    TRACE_CLASS_ALLOC,   /* seq delta, size */
    TRACE_CLASS_ALIGNED, /* seq delta, size, alignment */
    TRACE_CLASS_REALLOC, /* seq delta, age of the old object (0: none), size */
    TRACE_CLASS_FREE,    /* seq delta, age of the freed object */
};

static inline enum trace_kind_class trace_kind_class(unsigned kind)
{
    switch (kind) {
    case TRACE_MALLOC: case TRACE_CALLOC: case TRACE_NEW: case TRACE_NEW_ARRAY:
        return TRACE_CLASS_ALLOC;
    case TRACE_POSIX_MEMALIGN: case TRACE_ALIGNED_ALLOC: case TRACE_MEMALIGN:
    case TRACE_VALLOC: case TRACE_PVALLOC: case TRACE_NEW_ALIGNED:
    case TRACE_NEW_ARRAY_ALIGNED:
        return TRACE_CLASS_ALIGNED;
    case TRACE_REALLOC: case TRACE_REALLOCARRAY:
        return TRACE_CLASS_REALLOC;
    case TRACE_FREE: case TRACE_DELETE: case TRACE_DELETE_ARRAY:
        return TRACE_CLASS_FREE;
    default:
        return TRACE_CLASS_INVALID;
    }
}

static inline const char *trace_kind_name(unsigned kind)
{
    static const char *const names[TRACE_KIND_COUNT] = {
        [TRACE_MALLOC] = "malloc", [TRACE_CALLOC] = "calloc",
        [TRACE_NEW] = "new", [TRACE_NEW_ARRAY] = "new[]",
        [TRACE_POSIX_MEMALIGN] = "posix_memalign",
        [TRACE_ALIGNED_ALLOC] = "aligned_alloc", [TRACE_MEMALIGN] = "memalign",
        [TRACE_VALLOC] = "valloc", [TRACE_PVALLOC] = "pvalloc",
        [TRACE_NEW_ALIGNED] = "new_aligned",
        [TRACE_NEW_ARRAY_ALIGNED] = "new[]_aligned",
        [TRACE_REALLOC] = "realloc", [TRACE_REALLOCARRAY] = "reallocarray",
        [TRACE_FREE] = "free", [TRACE_DELETE] = "delete",
        [TRACE_DELETE_ARRAY] = "delete[]",
    };
    return kind > 0 && kind < TRACE_KIND_COUNT ? names[kind] : "invalid";
}

/* 32-bit FNV-1a: cheap enough to checksum every chunk while recording. */
static inline uint32_t trace_fnv1a(const unsigned char *data, uint64_t len)
{
    uint32_t hash = 2166136261u;
    for (uint64_t i = 0; i < len; i++) {
        hash ^= data[i];
        hash *= 16777619u;
    }
    return hash;
}

#define TRACE_VARINT_MAX_BYTES 10

/* Unsigned LEB128. */
static inline unsigned char *trace_put_varint(unsigned char *out, uint64_t value)
{
    while (value >= 0x80) {
        *out++ = (unsigned char)(value | 0x80);
        value >>= 7;
    }
    *out++ = (unsigned char)value;
    return out;
}

#endif
