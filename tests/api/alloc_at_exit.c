/* Allocation from atexit handlers and a destructor function, after main
 * has returned (and, with COREALLOC_STATS=1, around the exit report).
 * A handler that finds a problem ends the process with status 3. */
#include "pattern.h"
#include "probe.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *kept_for_exit[16];

static void churn_or_die(uint64_t seed)
{
    for (size_t i = 0; i < 60; i++) {
        size_t size = (size_t)1 << (i % 22); /* up to 2 MiB */
        void *p = malloc(size);
        if (!p || (corealloc_active() && probe_object_start(p) != p))
            _exit(3);
        pattern_fill(p, size, seed + i);
        p = realloc(p, size + 100);
        if (!p || pattern_mismatch(p, size, seed + i) != PATTERN_OK)
            _exit(3);
        free(p);
    }
}

static void free_kept(void)
{
    for (size_t i = 0; i < 16; i++) {
        if (pattern_mismatch(kept_for_exit[i], 1000 * (i + 1), i) != PATTERN_OK)
            _exit(3);
        free(kept_for_exit[i]);
    }
    churn_or_die(100);
}

static void late_handler(void)
{
    churn_or_die(200);
    char *s = strdup("allocated in an atexit handler");
    if (!s)
        _exit(3);
    free(s);
}

__attribute__((destructor)) static void destructor_function(void)
{
    churn_or_die(300);
}

int main(void)
{
    corealloc_active(); /* verifies malloc is corealloc's when preloaded */
    for (size_t i = 0; i < 16; i++) {
        kept_for_exit[i] = malloc(1000 * (i + 1));
        if (!kept_for_exit[i])
            return 1;
        pattern_fill(kept_for_exit[i], 1000 * (i + 1), i);
    }
    /* handlers run in reverse order: late_handler first, then free_kept */
    if (atexit(free_kept) != 0 || atexit(late_handler) != 0)
        return 1;
    return 0;
}
