#include "api/textout.h"

#include <stdarg.h>
#include <stdio.h>

#include "platform/os.h"

void sink_flush(struct sink *s)
{
    if (s->pending && !s->error)
        s->error = os_write_all(s->fd, s->chunk, s->pending);
    s->pending = 0;
}

void sink_append(struct sink *s, const char *text, size_t n)
{
    if (!s->to_fd) {
        if (s->len < s->size) {
            size_t room = s->size - s->len;
            __builtin_memcpy(s->buf + s->len, text, n < room ? n : room);
        }
        s->len += n;
        return;
    }
    while (n) {
        size_t room = sizeof s->chunk - s->pending, take = n < room ? n : room;
        __builtin_memcpy(s->chunk + s->pending, text, take);
        s->pending += take;
        text += take;
        n -= take;
        if (s->pending == sizeof s->chunk)
            sink_flush(s);
    }
}

void sink_put(struct sink *s, const char *fmt, ...)
{
    char line[SINK_LINE_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n > 0)
        sink_append(s, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

bool path_with_pid(const char *pattern, char *out, size_t size)
{
    char pid[24];
    int pid_len = snprintf(pid, sizeof pid, "%lu", os_process_id());
    size_t len = 0;
    for (const char *in = pattern; *in; in++) {
        const char *piece = in;
        size_t n = 1;
        if (in[0] == '%' && in[1] == 'p') {
            piece = pid;
            n = (size_t)pid_len;
            in++;
        }
        if (len + n >= size)
            return false;
        __builtin_memcpy(out + len, piece, n);
        len += n;
    }
    out[len] = '\0';
    return true;
}
