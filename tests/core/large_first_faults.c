/* The first large block of a process makes few pages of metadata resident:
 * the page map's new branch faults once a page (its slots read as they are
 * written), and the first span of the large area looks for no neighbour
 * outside it (there is none; the map's pages there would fault for
 * nothing). Counted as page faults around the first malloc of a large
 * block, which itself touches none of the block's own pages. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#include "check.h"
#include "probe.h"

/* Before both changes, 10: the map's root and node slots read and then
 * written (two faults each), two map pages read past the area's edges. */
#define MOST_FAULTS 7

static long minor_faults(void)
{
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_minflt;
}

void *volatile sink;

int main(void)
{
    if (!corealloc_active()) {
        puts("corealloc is not loaded: nothing to check");
        return 0;
    }
    sink = malloc(16); /* start-up done */
    long faults = minor_faults();
    void *block = malloc(64 << 10);
    faults = minor_faults() - faults;
    REQUIRE(block != NULL);
    sink = block;
    printf("the first large block: %ld page faults\n", faults);
    CHECK_MSG(faults <= MOST_FAULTS, "the first large block cost %ld page faults (at most %d expected)", faults,
              MOST_FAULTS);
    free(block);
    return check_status();
}
