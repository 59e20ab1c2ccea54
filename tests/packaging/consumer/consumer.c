/* A program using corealloc as an outside project would, through the
 * installed (or added) header and library: its malloc must be corealloc's,
 * and the library's version the header's. Prints "corealloc VERSION". */
#include <corealloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
    char *p = malloc(100);
    /* Only corealloc knows where the block holding an interior pointer starts. */
    if (!p || corealloc_object_start(p + 10) != p) {
        fprintf(stderr, "consumer: malloc is not corealloc's\n");
        return 1;
    }
    free(p);
    if (strcmp(corealloc_version(), COREALLOC_VERSION_STRING) != 0) {
        fprintf(stderr, "consumer: library %s, header %s\n", corealloc_version(),
                COREALLOC_VERSION_STRING);
        return 1;
    }
    printf("corealloc %s\n", corealloc_version());
    return 0;
}
