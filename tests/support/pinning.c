#define _GNU_SOURCE
#include "pinning.h"

#include <sched.h>

bool pin_to_cpu(int cpu)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return sched_setaffinity(0, sizeof one, &one) == 0;
}

bool pin_to_this_cpu(void)
{
    int cpu = sched_getcpu();
    return pin_to_cpu(cpu < 0 ? 0 : cpu);
}
