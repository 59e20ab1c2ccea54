#include "raw_io.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

bool raw_write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        p += n;
        len -= (size_t)n;
    }
    return true;
}

void raw_error_list(const char *first, ...)
{
    char buf[1024];
    struct raw_text text = { buf, sizeof buf, 0 };
    va_list args;
    va_start(args, first);
    for (const char *s = first; s != NULL; s = va_arg(args, const char *))
        raw_text_str(&text, s);
    va_end(args);
    raw_text_str(&text, "\n");
    raw_write_all(STDERR_FILENO, buf, text.len);
}

void raw_text_str(struct raw_text *text, const char *s)
{
    size_t n = strlen(s);
    if (n > text->cap - 1 - text->len)
        n = text->cap - 1 - text->len;
    memcpy(text->buf + text->len, s, n);
    text->len += n;
    text->buf[text->len] = '\0';
}

void raw_text_u64(struct raw_text *text, uint64_t value)
{
    char digits[24];
    char *p = digits + sizeof digits - 1;
    *p = '\0';
    do {
        *--p = (char)('0' + value % 10);
        value /= 10;
    } while (value != 0);
    raw_text_str(text, p);
}
