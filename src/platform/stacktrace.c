#include "platform/stacktrace.h"

#include <execinfo.h>
#include <stdint.h>

#include "platform/os.h"

/* Frames unwound before the frame-pointer chain takes over: the allocator's
 * own (from the capture up to the exported function) and the program's
 * first, so the chain can be checked against the unwinder. */
#define UNWOUND_FRAMES 8
/* How far up the stack the join is looked for: past the allocator's own
 * frames, which are small. */
#define SCAN_WORDS 4096

/* The thread's stack mapping, found once per stack (coroutines and
 * signal stacks move a thread to another). */
static __thread uintptr_t stack_low, stack_high;

void stacktrace_init(void)
{
    void *pc;
    backtrace(&pc, 1);
}

/* Not inlined: every stack starts with the same frame for it, which the
 * profiler's comparison of the two methods counts on. */
__attribute__((noinline)) unsigned stacktrace_unwind(void **pcs, unsigned max)
{
    int n = backtrace(pcs, (int)max);
    return n > 0 ? (unsigned)n : 0;
}

static bool inside_stack(uintptr_t sp)
{
    if (sp >= stack_low && sp < stack_high)
        return true;
    return os_mapping_of(sp, &stack_low, &stack_high);
}

/* A frame pointer worth following from a record at `from`: above it,
 * inside the stack, aligned. Every load the walk makes is then of mapped
 * memory, whatever the stack holds. */
static bool plausible(uintptr_t fp, uintptr_t from)
{
    return fp > from && fp % sizeof(uintptr_t) == 0 && fp <= stack_high - 2 * sizeof(uintptr_t);
}

unsigned stacktrace_frame_pointers(void **pcs, unsigned max)
{
    unsigned n = stacktrace_unwind(pcs, max <= UNWOUND_FRAMES ? max : UNWOUND_FRAMES + 1);
    if (n <= UNWOUND_FRAMES)
        return n; /* the unwinder reached the end of the stack (or of pcs) */
    n = UNWOUND_FRAMES;
    uintptr_t *sp = __builtin_frame_address(0);
    if (!inside_stack((uintptr_t)sp))
        return 0;
    /* The allocator's frames keep no frame pointers, so the chain is
     * joined where the last unwound frame's call left its return address:
     * the callee that kept a frame pointer pushed the caller's beside it.
     * pcs itself (on this stack too) holds the same address: skipped. The
     * live frames above also hold stale words (uninitialised arrays and
     * spill slots keep what earlier, deeper calls left there, the same
     * return addresses and frame records among them): a candidate counts
     * only when its record leads to the frame the unwinder found next. */
    void *join = pcs[UNWOUND_FRAMES - 1], *next = pcs[UNWOUND_FRAMES];
    /* Recursion puts the same return address in several frames: the join
     * is its occurrence of that rank, counting from the innermost. */
    unsigned rank = 0;
    for (unsigned i = 0; i < UNWOUND_FRAMES; i++)
        rank += pcs[i] == join;
    uintptr_t *end = (uintptr_t *)stack_high - 1, fp = 0;
    for (uintptr_t *slot = sp + 1; slot < end && slot < sp + SCAN_WORDS && !fp; slot++)
        if ((void *)*slot == join && (slot < (uintptr_t *)pcs || slot >= (uintptr_t *)(pcs + max)) &&
            plausible(slot[-1], (uintptr_t)slot) && (void *)((const uintptr_t *)slot[-1])[1] == next &&
            --rank == 0)
            fp = slot[-1];
    if (!fp)
        return 0;
    /* Each record is {caller's frame pointer, return address}. */
    while (n < max) {
        const uintptr_t *record = (const uintptr_t *)fp;
        pcs[n++] = (void *)record[1];
        if (!plausible(record[0], fp))
            break;
        fp = record[0];
    }
    return n;
}
