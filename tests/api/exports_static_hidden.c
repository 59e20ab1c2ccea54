/* A program whose own globals have the names of corealloc internals links
 * against libcorealloc.a: the archive exports only the public API. */
#include <stdio.h>
#include <stdlib.h>

#include "corealloc.h"

int opt = 1;
int os_abort(void) { return 2; }
void *sb_of(void *p) { return p; }
int central_init = 4;

int main(void)
{
    char *p = calloc(1, 64);
    if (!p || corealloc_object_start(p + 10) != p) {
        fprintf(stderr, "malloc did not come from corealloc\n");
        return 1;
    }
    int sum = opt + os_abort() + (sb_of(p) == p) + central_init;
    free(p);
    if (sum != 8)
        return 1;
    puts("ok");
    return 0;
}
