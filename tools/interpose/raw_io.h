/* Output that never calls malloc: the interposer's own I/O must not recurse
 * into the allocator it observes. */
#ifndef COREALLOC_RAW_IO_H
#define COREALLOC_RAW_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

bool raw_write_all(int fd, const void *data, size_t len);

/* Writes the NULL-terminated list of strings and a newline to stderr. */
void raw_error_list(const char *first, ...);
#define raw_error(...) raw_error_list(__VA_ARGS__, (const char *)NULL)

/* Appends text to a fixed buffer, keeping it NUL-terminated and truncating. */
struct raw_text {
    char *buf;
    size_t cap;
    size_t len;
};
void raw_text_str(struct raw_text *text, const char *s);
void raw_text_u64(struct raw_text *text, uint64_t value);

#endif
