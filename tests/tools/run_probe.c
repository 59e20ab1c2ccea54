/* Stands in for libcorealloc.so in the test of 'corealloc run': once
 * preloaded, it reports the COREALLOC_* variables it was given. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

__attribute__((constructor)) static void report_environment(void)
{
    fprintf(stderr, "run_probe loaded\n");
    for (char **entry = environ; *entry != NULL; entry++) {
        if (strncmp(*entry, "COREALLOC_", 10) == 0 && strncmp(*entry, "COREALLOC_TOOL_PID=", 19) != 0)
            fprintf(stderr, "run_probe env %s\n", *entry);
    }
}
