/* The critical sections of this architecture: pop, push and their batch
 * forms on a per-CPU slab (arch/slab.h), each reading the CPU id inside the
 * section and committing with one store. Where no sections are written,
 * the generic ones always miss and the front end uses per-thread caches.
 * Each variant defines ARCH_HAS_RSEQ_SECTIONS (0 or 1) and
 * ARCH_RSEQ_SIGNATURE (the abort signature for our own registration). */
#ifndef COREALLOC_ARCH_SECTIONS_H
#define COREALLOC_ARCH_SECTIONS_H

#if defined(__x86_64__) && defined(__linux__)
#include "arch/x86_64/rseq_sections.h"
#else
#include "arch/generic/rseq_sections.h"
#endif

#endif
