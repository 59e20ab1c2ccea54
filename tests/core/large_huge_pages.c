/* COREALLOC_THP: which of corealloc's mappings may use transparent huge
 * pages, read from the VmFlags of /proc/self/smaps ("hg": MADV_HUGEPAGE,
 * "nh": MADV_NOHUGEPAGE, none where the system gives huge pages to advised
 * mappings only and no advice is needed). Small blocks never get them
 * unless "always"; huge blocks (from COREALLOC_HUGE_THRESHOLD) get them
 * with "large", and lose them when freed so the range can serve small
 * spans.
 *
 *   huge_pages never|large|always
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "memory.h"
#include "probe.h"

int main(int argc, char **argv)
{
    if (!corealloc_active()) {
        puts("corealloc is not loaded: nothing to check");
        return 0;
    }
    REQUIRE(argc == 2);
    const char *policy = argv[1];
    bool always = !strcmp(policy, "always"), large = !strcmp(policy, "large");
    void *small = malloc(64);
    void *huge = malloc(64 * MIB);
    REQUIRE(small && huge);
    printf("%s: small block %s, huge block %s\n", policy, huge_page_flag(small), huge_page_flag(huge));
    const char *off = unadvised_huge_page_flag();
    CHECK(!strcmp(huge_page_flag(small), always ? "hg" : off));
    CHECK(!strcmp(huge_page_flag(huge), always || large ? "hg" : off));
    free(huge);
    printf("%s: freed huge block %s\n", policy, huge_page_flag(huge));
    CHECK(!strcmp(huge_page_flag(huge), always ? "hg" : large ? "nh" : off));
    free(small);
    return check_status();
}
