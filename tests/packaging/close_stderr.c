/* Allocates, then closes its standard error before exiting, as ls does
 * (coreutils' close_stdout): a report the allocator writes to stderr at
 * exit is lost. */
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
    void *volatile block = malloc(1000); /* volatile: the pair is not optimised away */
    free(block);
    close(2);
    return 0;
}
