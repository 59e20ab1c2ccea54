/* A C program under corealloc does not load the C++ runtime: the operators
 * reference it weakly, so libstdc++'s pages (over a megabyte resident) are
 * only mapped in programs that use C++ anyway. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "probe.h"

int main(void)
{
    free(malloc(100));
    if (!corealloc_active()) {
        puts("corealloc is not loaded: nothing to check");
        return 0;
    }
    FILE *maps = fopen("/proc/self/maps", "r");
    REQUIRE(maps != NULL);
    char line[4096];
    while (fgets(line, sizeof line, maps)) {
        if (strstr(line, "libstdc++"))
            printf("mapped: %s", line);
        CHECK(strstr(line, "libstdc++") == NULL);
    }
    fclose(maps);
    return check_status();
}
