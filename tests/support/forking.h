/* Steps the fork tests share: their one argument, a forked child's
 * allocation check, and a fork whose child must exit cleanly. */
#ifndef COREALLOC_TEST_FORKING_H
#define COREALLOC_TEST_FORKING_H

#include <stddef.h>
#include <stdint.h>

/* The fork tests' command line, "PROGRAM FORKS": the count (> 0), or the
 * program stops with its usage (exit 2) or a failed REQUIRE. */
int fork_count_argument(int argc, char **argv);

/* In a forked child: malloc(size), fill it, read it back, free it; the
 * child exits 3 when malloc fails, 4 when the bytes do not read back. */
void forked_child_allocation(size_t size, uint64_t seed);

/* Forks; the child runs child(step), which must _exit; the parent waits
 * and checks that it exited with 0 (a failed CHECK names step). */
void fork_and_check_child(int step, void (*child)(int step));

#endif
