#include "platform/stacktrace.h"

#include <execinfo.h>
#include <pthread.h>
#include <stdint.h>

#include "platform/cfi.h"
#include "platform/os.h"

/* Frames unwound before the frame-pointer chain takes over: the allocator's
 * own (from the capture up to the exported function) and the program's
 * first, so the chain can be checked against the unwinder. */
#define UNWOUND_FRAMES 8
/* How far up the stack the join is looked for: past the allocator's own
 * frames, which are small. */
#define SCAN_WORDS 4096

/* The bounds of the thread's stack, found once per stack (coroutines and
 * signal stacks move a thread to another). */
static __thread uintptr_t stack_low, stack_high;

void stacktrace_init(void)
{
    void *pc;
    backtrace(&pc, 1);
    cfi_init();
}

static __thread bool thread_stack_asked;

/* Whether sp lies in a stack whose bounds are known, learning them: the
 * thread's own stack from the C library, once per thread (it allocates,
 * and asks the kernel for the thread's CPUs: a few microseconds, where
 * reading /proc/self/maps takes tens with many threads), else the mapping
 * around sp (a coroutine's stack, a signal stack). */
static bool inside_stack(uintptr_t sp)
{
    if (sp >= stack_low && sp < stack_high)
        return true;
    pthread_attr_t attr;
    if (!thread_stack_asked && pthread_getattr_np(pthread_self(), &attr) == 0) {
        void *low;
        size_t size;
        if (pthread_attr_getstack(&attr, &low, &size) == 0) {
            stack_low = (uintptr_t)low;
            stack_high = stack_low + size;
        }
        pthread_attr_destroy(&attr);
    }
    thread_stack_asked = true;
    if (sp >= stack_low && sp < stack_high)
        return true;
    return os_mapping_of(sp, &stack_low, &stack_high);
}

#if CFI_RULES
/* The registers a walk starts from, read together with the address of the
 * code reading them, where the function's own rule applies. */
#if defined(__x86_64__)
#define HERE(pc, sp, fp)                                                                           \
    __asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"                         \
                     : "=&r"(pc), "=&r"(sp), "=&r"(fp))
#else
#define HERE(pc, sp, fp)                                                                           \
    __asm__ volatile("adr %0, .\n\tmov %1, sp\n\tmov %2, x29" : "=&r"(pc), "=&r"(sp), "=&r"(fp))
#endif

/* A saved register's slot, inside the part of the stack the walk has
 * passed (from its own frame to the top of the mapping): a load there
 * cannot fault, whatever the rules say. */
static bool readable(uintptr_t at, uintptr_t low)
{
    return at >= low && at % sizeof(uintptr_t) == 0 && at <= stack_high - sizeof(uintptr_t);
}

__attribute__((noinline)) unsigned stacktrace_by_rules(void **pcs, unsigned max)
{
    uintptr_t pc, sp, fp;
    HERE(pc, sp, fp);
    if (!inside_stack(sp))
        return 0;
    uintptr_t low = sp;
    bool fp_known = true;
    unsigned n = 0;
    /* Frame 0 is this function's own, at pc itself; every caller's at its
     * return address less one (inside the call). */
    for (uintptr_t at = pc; n < max; at = (uintptr_t)pcs[n - 1] - 1) {
        struct cfi_rule rule;
        cfi_rule_at(at, &rule);
        if (rule.kind == CFI_OUTERMOST)
            return n;
        if (rule.kind == CFI_UNKNOWN || (rule.cfa_base == CFI_BASE_FP && !fp_known))
            return 0;
        uintptr_t cfa = (rule.cfa_base == CFI_BASE_SP ? sp : fp) + (uintptr_t)(intptr_t)rule.cfa_offset;
        uintptr_t ra_at = cfa + (uintptr_t)(intptr_t)rule.ra_offset, fp_at = cfa + (uintptr_t)(intptr_t)rule.fp_offset;
        if (cfa <= sp || !readable(ra_at, low) || (rule.fp == CFI_AT && !readable(fp_at, low)))
            return 0;
        uintptr_t ra = *(const uintptr_t *)ra_at;
        if (rule.fp == CFI_AT)
            fp = *(const uintptr_t *)fp_at;
        fp_known = rule.fp != CFI_LOST && (fp_known || rule.fp == CFI_AT);
        sp = cfa;
        if (!ra)
            return n; /* backtrace() drops a null return address too */
        pcs[n++] = (void *)ra;
    }
    return n;
}
#endif

/* Not inlined: every stack starts with the same frame for it, which the
 * profiler's comparison of the two methods counts on. */
__attribute__((noinline)) unsigned stacktrace_unwind(void **pcs, unsigned max)
{
#if CFI_RULES
    unsigned n = stacktrace_by_rules(pcs, max);
    if (n)
        return n;
#endif
    int u = backtrace(pcs, (int)max);
    return u > 0 ? (unsigned)u : 0;
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
