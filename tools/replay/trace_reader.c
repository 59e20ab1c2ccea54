#include "trace_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arena.h"

/* An event as decoded from the file, before objects are numbered. */
struct raw_event {
    uint64_t seq;
    uint64_t size;
    uint64_t referenced_seq; /* object a free or realloc refers to; 0: none */
    uint64_t offset;         /* in the file, for error messages */
    uint32_t thread;
    uint32_t alignment;
    uint8_t kind;
};

struct reader {
    const unsigned char *data;
    uint64_t size;
    char *error;
    size_t error_cap;
};

static bool fail(struct reader *reader, uint64_t offset, const char *format, ...)
{
    int n = snprintf(reader->error, reader->error_cap, "byte offset %llu: ",
                     (unsigned long long)offset);
    va_list args;
    va_start(args, format);
    if (n >= 0 && (size_t)n < reader->error_cap)
        vsnprintf(reader->error + n, reader->error_cap - (size_t)n, format, args);
    va_end(args);
    return false;
}

static bool read_varint(const unsigned char **at, const unsigned char *end, uint64_t *out)
{
    uint64_t value = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (*at >= end)
            return false;
        unsigned char byte = *(*at)++;
        value |= (uint64_t)(byte & 0x7f) << shift;
        if ((byte & 0x80) == 0) {
            *out = value;
            return true;
        }
    }
    return false;
}

static bool read_header(struct reader *reader, struct loaded_trace *out, uint64_t *body)
{
    struct trace_file_header header;
    if (reader->size < sizeof header)
        return fail(reader, reader->size, "truncated: the file is shorter than a trace header (%zu bytes)",
                    sizeof header);
    memcpy(&header, reader->data, sizeof header);
    if (memcmp(header.magic, TRACE_MAGIC, TRACE_MAGIC_LEN) != 0)
        return fail(reader, 0, "not a corealloc trace (bad magic)");
    if (header.version != TRACE_VERSION)
        return fail(reader, 8, "trace format version %u; this replayer reads version %u",
                    header.version, TRACE_VERSION);
    if (header.header_len != sizeof header + header.cmdline_len || header.header_len > reader->size)
        return fail(reader, 10, "corrupt header (header length %u, command line length %u)",
                    header.header_len, header.cmdline_len);
    out->pid = header.pid;
    out->flags = header.flags;
    size_t len = header.cmdline_len < sizeof out->command - 1 ? header.cmdline_len : sizeof out->command - 1;
    memcpy(out->command, reader->data + sizeof header, len);
    for (size_t i = 0; i < len; i++) {
        if (out->command[i] == '\0')
            out->command[i] = ' ';
    }
    while (len > 0 && out->command[len - 1] == ' ')
        len--;
    out->command[len] = '\0';
    *body = header.header_len;
    return true;
}

/* First pass: chunk structure, checksums, the end chunk, events per thread. */
static bool scan_chunks(struct reader *reader, uint64_t body, struct loaded_trace *out,
                        uint64_t **events_per_thread)
{
    uint32_t max_thread = 0;
    uint64_t total = 0;
    bool ended = false;
    uint64_t offset = body;
    for (int pass = 0; pass < 2; pass++) {
        offset = body;
        ended = false;
        while (offset < reader->size) {
            struct trace_chunk_header chunk;
            if (ended)
                return fail(reader, offset, "data after the end chunk");
            if (reader->size - offset < sizeof chunk)
                return fail(reader, offset, "truncated: chunk header cut short (%llu of %zu bytes)",
                            (unsigned long long)(reader->size - offset), sizeof chunk);
            memcpy(&chunk, reader->data + offset, sizeof chunk);
            if (chunk.magic != TRACE_CHUNK_EVENTS && chunk.magic != TRACE_CHUNK_END)
                return fail(reader, offset, "corrupt: unknown chunk type 0x%08x", chunk.magic);
            uint64_t payload = offset + sizeof chunk;
            if (chunk.payload_len > reader->size - payload)
                return fail(reader, offset, "truncated: chunk of %u bytes, only %llu remain",
                            chunk.payload_len, (unsigned long long)(reader->size - payload));
            if (trace_fnv1a(reader->data + payload, chunk.payload_len) != chunk.payload_fnv1a)
                return fail(reader, offset, "corrupt: chunk checksum mismatch");
            if (chunk.magic == TRACE_CHUNK_END) {
                struct trace_end_payload end;
                if (chunk.payload_len != sizeof end)
                    return fail(reader, offset, "corrupt: end chunk of %u bytes", chunk.payload_len);
                memcpy(&end, reader->data + payload, sizeof end);
                if (pass == 0 && end.total_events != total)
                    return fail(reader, offset, "corrupt: end chunk counts %llu events, chunks hold %llu",
                                (unsigned long long)end.total_events, (unsigned long long)total);
                out->end_reason = end.reason;
                ended = true;
            } else if (pass == 0) {
                if (chunk.thread > max_thread)
                    max_thread = chunk.thread;
                total += chunk.event_count;
            } else {
                (*events_per_thread)[chunk.thread] += chunk.event_count;
            }
            offset = payload + chunk.payload_len;
        }
        if (!ended)
            return fail(reader, reader->size,
                        "truncated: the trace has no end chunk (was the program killed, or did it call _exit?)");
        if (pass == 0) {
            out->stream_count = total == 0 ? 0 : max_thread + 1;
            out->event_count = total;
            *events_per_thread = arena_alloc((out->stream_count + 1) * sizeof(uint64_t));
        }
    }
    return true;
}

static uint8_t log2_ceil(uint64_t alignment)
{
    uint8_t log2 = 0;
    while (((uint64_t)1 << log2) < alignment && log2 < 63)
        log2++;
    return log2;
}

/* Second pass: decode every event. */
static bool decode_events(struct reader *reader, uint64_t body, struct raw_event *raw,
                          uint64_t *min_seq, uint64_t *max_seq, uint64_t *thread_last_seq)
{
    uint64_t n = 0;
    uint64_t offset = body;
    *min_seq = UINT64_MAX;
    *max_seq = 0;
    while (offset < reader->size) {
        struct trace_chunk_header chunk;
        memcpy(&chunk, reader->data + offset, sizeof chunk);
        const unsigned char *at = reader->data + offset + sizeof chunk;
        const unsigned char *end = at + chunk.payload_len;
        if (chunk.magic == TRACE_CHUNK_EVENTS) {
            uint64_t seq = 0;
            for (uint32_t i = 0; i < chunk.event_count; i++) {
                struct raw_event *e = &raw[n++];
                e->offset = (uint64_t)(at - reader->data);
                e->thread = chunk.thread;
                if (at >= end)
                    return fail(reader, e->offset, "corrupt: chunk ends after %u of %u events", i,
                                chunk.event_count);
                e->kind = *at++;
                enum trace_kind_class class = trace_kind_class(e->kind);
                if (class == TRACE_CLASS_INVALID)
                    return fail(reader, e->offset, "corrupt: unknown event kind %u", e->kind);
                uint64_t delta, operand = 0, alignment = 0;
                bool ok = read_varint(&at, end, &delta);
                e->size = 0;
                switch (class) {
                case TRACE_CLASS_ALIGNED:
                    ok = ok && read_varint(&at, end, &e->size) && read_varint(&at, end, &alignment);
                    break;
                case TRACE_CLASS_REALLOC:
                    ok = ok && read_varint(&at, end, &operand) && read_varint(&at, end, &e->size);
                    break;
                case TRACE_CLASS_FREE:
                    ok = ok && read_varint(&at, end, &operand);
                    break;
                default:
                    ok = ok && read_varint(&at, end, &e->size);
                    break;
                }
                if (!ok)
                    return fail(reader, e->offset, "corrupt: bad number in a %s event", trace_kind_name(e->kind));
                if (i > 0 && delta == 0)
                    return fail(reader, e->offset, "corrupt: sequence number does not increase");
                seq = i == 0 ? delta : seq + delta;
                if (seq <= thread_last_seq[chunk.thread])
                    return fail(reader, e->offset, "corrupt: thread %u goes back in time", chunk.thread);
                thread_last_seq[chunk.thread] = seq;
                if (operand > seq)
                    return fail(reader, e->offset, "corrupt: %s refers to an object from before the trace",
                                trace_kind_name(e->kind));
                e->seq = seq;
                e->referenced_seq = operand == 0 ? 0 : seq - operand;
                if (class == TRACE_CLASS_FREE && operand == 0)
                    return fail(reader, e->offset, "corrupt: free of no object");
                e->alignment = log2_ceil(alignment);
                if (e->kind == TRACE_VALLOC || e->kind == TRACE_PVALLOC)
                    e->alignment = log2_ceil(alignment == 0 ? 4096 : alignment);
                if (seq < *min_seq)
                    *min_seq = seq;
                if (seq > *max_seq)
                    *max_seq = seq;
            }
            if (at != end)
                return fail(reader, (uint64_t)(at - reader->data), "corrupt: %llu stray bytes after the chunk's events",
                            (unsigned long long)(end - at));
        }
        offset += sizeof chunk + chunk.payload_len;
    }
    return true;
}

/* Third pass: in recorded (sequence) order, number the objects, check each
 * free and realloc refers to a live object, and track live bytes. */
static bool order_events(struct reader *reader, struct raw_event *raw, uint64_t count,
                         uint64_t min_seq, uint64_t max_seq, struct loaded_trace *out,
                         uint32_t *object_of_event)
{
    uint64_t range = count == 0 ? 0 : max_seq - min_seq + 1;
    if (range > 2 * count + 1024)
        return fail(reader, raw[0].offset, "corrupt: sequence numbers span %llu for %llu events",
                    (unsigned long long)range, (unsigned long long)count);
    uint64_t *event_at_seq = arena_alloc((range + 1) * sizeof(uint64_t));
    uint32_t *object_at_seq = arena_alloc((range + 1) * sizeof(uint32_t));
    uint64_t *object_size = arena_alloc((count + 1) * sizeof(uint64_t));
    for (uint64_t i = 0; i < count; i++) {
        uint64_t slot = raw[i].seq - min_seq;
        if (event_at_seq[slot] != 0)
            return fail(reader, raw[i].offset, "corrupt: sequence number %llu appears twice",
                        (unsigned long long)raw[i].seq);
        event_at_seq[slot] = i + 1;
    }
    uint64_t live_bytes = 0, live_objects = 0;
    uint32_t next_object = 0;
    for (uint64_t slot = 0; slot < range; slot++) {
        if (event_at_seq[slot] == 0)
            continue;
        uint64_t i = event_at_seq[slot] - 1;
        struct raw_event *e = &raw[i];
        object_at_seq[slot] = NO_OBJECT;
        if (e->referenced_seq != 0) {
            uint32_t object = e->referenced_seq < min_seq ? NO_OBJECT : object_at_seq[e->referenced_seq - min_seq];
            if (object == NO_OBJECT)
                return fail(reader, e->offset, "corrupt: %s of an object that was never allocated",
                            trace_kind_name(e->kind));
            if (object_size[object] == UINT64_MAX)
                return fail(reader, e->offset, "corrupt: %s of an object already freed",
                            trace_kind_name(e->kind));
            live_bytes -= object_size[object];
            live_objects--;
            object_size[object] = UINT64_MAX;
            object_of_event[2 * i + 1] = object;
        } else {
            object_of_event[2 * i + 1] = NO_OBJECT;
        }
        out->kind_counts[e->kind]++;
        if (trace_kind_class(e->kind) == TRACE_CLASS_FREE) {
            object_of_event[2 * i] = object_of_event[2 * i + 1];
            object_of_event[2 * i + 1] = NO_OBJECT;
            continue;
        }
        if (next_object == NO_OBJECT)
            return fail(reader, e->offset, "too many objects for one replay");
        object_size[next_object] = e->size;
        object_at_seq[slot] = next_object;
        object_of_event[2 * i] = next_object++;
        live_bytes += e->size;
        live_objects++;
        if (live_bytes > out->peak_live_bytes)
            out->peak_live_bytes = live_bytes;
        if (live_objects > out->peak_live_objects)
            out->peak_live_objects = live_objects;
    }
    out->object_count = next_object;
    out->live_objects_at_end = live_objects;
    return true;
}

static void build_streams(const struct raw_event *raw, uint64_t count, const uint32_t *object_of_event,
                          const uint64_t *events_per_thread, struct loaded_trace *out)
{
    out->streams = arena_alloc((out->stream_count + 1) * sizeof *out->streams);
    for (uint32_t t = 0; t < out->stream_count; t++)
        out->streams[t].events = arena_alloc((events_per_thread[t] + 1) * sizeof(struct replay_event));
    for (uint64_t i = 0; i < count; i++) {
        struct event_stream *stream = &out->streams[raw[i].thread];
        stream->events[stream->count++] = (struct replay_event){
            .size = raw[i].size,
            .object = object_of_event[2 * i],
            .old_object = object_of_event[2 * i + 1],
            .kind = raw[i].kind,
            .alignment_log2 = (uint8_t)raw[i].alignment,
        };
    }
}

bool trace_load(const char *path, struct loaded_trace *out, char *error, size_t error_cap)
{
    memset(out, 0, sizeof *out);
    out->path = path;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(error, error_cap, "cannot open: %s", strerror(errno));
        return false;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(error, error_cap, "not a regular file");
        close(fd);
        return false;
    }
    struct reader reader = { NULL, (uint64_t)st.st_size, error, error_cap };
    if (st.st_size > 0) {
        void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) {
            snprintf(error, error_cap, "cannot map: %s", strerror(errno));
            close(fd);
            return false;
        }
        reader.data = map;
    }
    close(fd);

    uint64_t body = 0, *events_per_thread = NULL, min_seq = 0, max_seq = 0;
    bool ok = read_header(&reader, out, &body) &&
              scan_chunks(&reader, body, out, &events_per_thread);
    if (ok) {
        struct raw_event *raw = arena_alloc((out->event_count + 1) * sizeof *raw);
        uint64_t *thread_last_seq = arena_alloc((out->stream_count + 1) * sizeof(uint64_t));
        uint32_t *object_of_event = arena_alloc((out->event_count + 1) * 2 * sizeof(uint32_t));
        ok = decode_events(&reader, body, raw, &min_seq, &max_seq, thread_last_seq) &&
             order_events(&reader, raw, out->event_count, min_seq, max_seq, out, object_of_event);
        if (ok)
            build_streams(raw, out->event_count, object_of_event, events_per_thread, out);
    }
    if (reader.data != NULL)
        munmap((void *)reader.data, reader.size);
    return ok;
}
