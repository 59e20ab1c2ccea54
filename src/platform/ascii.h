/* Reading numbers and names in ASCII, without the C library's locale
 * tables: strtoul and strncasecmp read tables in glibc's read-only data
 * that a small process otherwise never touches, and the option parser and
 * the CPU count run in every process (each table's fault maps a 64 KiB
 * window of it). */
#ifndef COREALLOC_ASCII_H
#define COREALLOC_ASCII_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A decimal number at *p (saturating at UINT64_MAX), moving *p past it;
 * false when there are no digits. */
static inline bool ascii_decimal(const char **p, uint64_t *out)
{
    const char *s = *p;
    if (*s < '0' || *s > '9')
        return false;
    uint64_t value = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        unsigned digit = (unsigned)(*s - '0');
        value = value > (UINT64_MAX - digit) / 10 ? UINT64_MAX : value * 10 + digit;
    }
    *p = s;
    *out = value;
    return true;
}

static inline char ascii_lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static inline bool ascii_same_ignoring_case(const char *a, const char *b, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (ascii_lower(a[i]) != ascii_lower(b[i]))
            return false;
    return true;
}

#endif
