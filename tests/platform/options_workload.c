/* Allocates a little and exits normally, so options are read and an exit
 * report is written. */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    void *volatile p = malloc(100);
    free(p);
    return 0;
}
