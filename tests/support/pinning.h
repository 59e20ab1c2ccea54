/* Pinning the calling thread to one CPU, for the tests whose subject is
 * the cache of the CPU they run on. */
#ifndef COREALLOC_TEST_PINNING_H
#define COREALLOC_TEST_PINNING_H

#include <stdbool.h>

/* Runs the calling thread on cpu alone; false when it may not (a cpuset,
 * say, forbids it). */
bool pin_to_cpu(int cpu);
/* The same on the CPU the thread runs on now (0 when that is not known). */
bool pin_to_this_cpu(void);
/* The first two CPUs this process may run on; false when it may run on
 * fewer (cpus[0] is still set when there is one). */
bool first_two_cpus(int cpus[2]);

#endif
