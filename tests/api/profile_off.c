/* With profiling off (the default), corealloc_profile_dump refuses with
 * ENOTSUP and writes nothing, no profile appears at exit, and the front end
 * is the one the options chose (per-CPU where the kernel has rseq). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "corealloc.h"
#include "probe.h"

int main(void)
{
    /* The header's functions, resolved in the preloaded library. */
    __typeof__(corealloc_profile_dump) *dump =
        (__typeof__(corealloc_profile_dump) *)corealloc_symbol("corealloc_profile_dump");
    __typeof__(corealloc_frontend) *frontend =
        (__typeof__(corealloc_frontend) *)corealloc_symbol("corealloc_frontend");
    __typeof__(corealloc_stats_snprint) *stats =
        (__typeof__(corealloc_stats_snprint) *)corealloc_symbol("corealloc_stats_snprint");
    char dir[] = "/tmp/corealloc-profile-off-XXXXXX";
    REQUIRE(mkdtemp(dir));
    char path[sizeof dir + 16];
    strcpy(path, dir);
    strcat(path, "/p.heap");
    errno = 0;
    CHECK_EQ(dump(path), -1);
    CHECK_EQ(errno, ENOTSUP);
    CHECK(access(path, F_OK) != 0);
    /* The per-CPU front end, unless the kernel has no rseq. */
    static char report[65536];
    stats(report, sizeof report, 1);
    CHECK_MSG(!strcmp(frontend(), "rseq") || strstr(report, "\"rseq_source\":\"unavailable\""),
              "front end %s", frontend());
    rmdir(dir);
    return check_status();
}
