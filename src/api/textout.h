/* Text written without allocating, as malloc's own reports must be: into
 * a buffer (snprintf-like, counting past its end) or to a file descriptor
 * through a small buffer; and the file names those reports go to. */
#ifndef COREALLOC_TEXTOUT_H
#define COREALLOC_TEXTOUT_H

#include <stdbool.h>
#include <stddef.h>

struct sink {
    char *buf;
    size_t size, len;
    bool to_fd; /* else to the buffer */
    int fd;
    int error;
    size_t pending;
    char chunk[4096];
};

/* Every line put fits this; longer ones are cut, never the text. */
#define SINK_LINE_MAX 512

void sink_append(struct sink *s, const char *text, size_t n);
__attribute__((format(printf, 2, 3))) void sink_put(struct sink *s, const char *fmt, ...);
/* Writes what is buffered for a file descriptor; s->error is then the
 * errno of the first failed write, or 0. */
void sink_flush(struct sink *s);

/* pattern with every "%p" replaced by the process id, so each process of
 * a program that forks or runs others writes a file of its own. False
 * when the name does not fit. */
bool path_with_pid(const char *pattern, char *out, size_t size);

#endif
