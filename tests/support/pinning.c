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

bool first_two_cpus(int cpus[2])
{
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0)
        return false;
    int found = 0;
    for (int c = 0; c < CPU_SETSIZE && found < 2; c++)
        if (CPU_ISSET(c, &allowed))
            cpus[found++] = c;
    return found == 2;
}

bool pin_to_this_cpu(void)
{
    int cpu = sched_getcpu();
    return pin_to_cpu(cpu < 0 ? 0 : cpu);
}
