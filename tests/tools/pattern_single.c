/* A single-threaded program with a known allocation pattern; test_hist.py
 * and test_trace.py assert the exact counts this produces. It prints
 * nothing, so stdio allocates no buffer. */
#include <stdlib.h>

int main(void)
{
    /* Two 1000-byte objects live to the end. */
    void *keep[2] = { malloc(1000), malloc(1000) };

    /* Ten 100-byte objects, each freed at once: lifetime 0. */
    for (int i = 0; i < 10; i++)
        free(malloc(100));

    /* Five 32-byte callocs freed together: lifetimes 4, 3, 2, 1, 0. */
    void *zeroed[5];
    for (int i = 0; i < 5; i++)
        zeroed[i] = calloc(4, 8);
    for (int i = 0; i < 5; i++)
        free(zeroed[i]);

    /* Three 200-byte blocks aligned to 64. */
    for (int i = 0; i < 3; i++) {
        void *aligned;
        if (posix_memalign(&aligned, 64, 200) != 0)
            return 1;
        free(aligned);
    }

    /* One object through a realloc chain: 16 -> 24 -> 48 -> 200 -> 100. */
    char *grown = realloc(NULL, 16);
    grown = realloc(grown, 24);
    grown = realloc(grown, 48);
    grown = realloc(grown, 200);
    grown = realloc(grown, 100);
    free(grown);

    return keep[0] == NULL || keep[1] == NULL;
}
