/* stderr capture (capture.h): fd 2 is pointed at an unlinked temporary file
 * and back. */
#include "capture.h"

#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"

static int saved_stderr = -1, capture_file = -1;

void capture_stderr_begin(void)
{
    char path[] = "/tmp/corealloc-stderr-XXXXXX";
    capture_file = mkstemp(path);
    REQUIRE(capture_file >= 0);
    unlink(path);
    fflush(stderr);
    saved_stderr = dup(2);
    REQUIRE(saved_stderr >= 0);
    REQUIRE(dup2(capture_file, 2) == 2);
}

const char *capture_stderr_end(void)
{
    static char text[65536];
    fflush(stderr);
    REQUIRE(dup2(saved_stderr, 2) == 2);
    close(saved_stderr);
    ssize_t n = pread(capture_file, text, sizeof text - 1, 0);
    REQUIRE(n >= 0);
    text[n] = '\0';
    close(capture_file);
    return text;
}

bool capture_reported(const char *log, const void *p, const char *what)
{
    char address[32];
    snprintf(address, sizeof address, "%p", p);
    return strstr(log, address) && strstr(log, what) && strstr(log, "corealloc: error:");
}

void check_overflow_by_one_reported(void *filled, size_t size)
{
    capture_stderr_begin();
    free(filled);
    const char *clean = capture_stderr_end();
    CHECK_MSG(clean[0] == 0, "size %zu: a free within bounds reported: %s", size, clean);

    unsigned char *p = malloc(size);
    REQUIRE(p != NULL);
    ((volatile unsigned char *)p)[size] ^= 0x40; /* one byte past */
    capture_stderr_begin();
    free(p);
    const char *log = capture_stderr_end();
    CHECK_MSG(capture_reported(log, p, "written past its size"), "size %zu: a one-byte overflow went unseen: %s", size,
              log);
}
