#include "diag.h"

#include <stdio.h>

#include "options.h"
#include "os.h"
#include "stats.h"

void diag_invalid_pointer(const char *call, const void *ptr, const char *why)
{
    stats_count_invalid_free();
    char line[256];
    int n = snprintf(line, sizeof line, "corealloc: error: %s(): invalid pointer %p (%s)%s\n", call,
                     ptr, why, opt.abort_on_error ? "; aborting" : "; ignored");
    if (n > 0)
        os_write_all(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    if (opt.abort_on_error)
        os_abort();
}
