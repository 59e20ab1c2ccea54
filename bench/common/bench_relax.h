/* The pause a spinning thread takes between polls: it tells the core we are
 * spinning, which is kinder to a hyperthread sibling. */
#ifndef BENCH_RELAX_H
#define BENCH_RELAX_H

static inline void bench_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

#endif
