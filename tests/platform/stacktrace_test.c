/* Call stacks (src/platform/stacktrace.c): in code that keeps frame
 * pointers (this file is built with them) the frame-pointer walk gives the
 * unwinder's stack, recursion included, but for the C library's start-up
 * frames; cut at the caller's bound; on a thread's stack too. Prints what
 * each method costs per stack, at two depths: the measurement behind the
 * profiler's choice. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "platform/os.h"
#include "platform/stacktrace.h"
#include "threads.h"

#define MAX 64
/* __libc_start_main and _start, or start_thread and clone3 */
#define START_FRAMES 2

struct stacks {
    void *fp[MAX], *unwound[MAX];
    unsigned nfp, nunwound;
};

/* Both from the same frame; the frame-pointer stack has one frame more at
 * its top (its own call of the unwinder) and a different return into this
 * function. */
__attribute__((noinline)) static void take_both(struct stacks *s, unsigned max)
{
    s->nfp = stacktrace_frame_pointers(s->fp, max);
    s->nunwound = stacktrace_unwind(s->unwound, max);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static unsigned recurse(unsigned depth, struct stacks *s, unsigned max)
{
    if (depth == 0) {
        take_both(s, max);
        return 0;
    }
    unsigned r = recurse(depth - 1, s, max);
    __asm__ volatile("" : "+r"(r));
    return r + 1;
}

static void check_agree(const struct stacks *s, unsigned depth)
{
    REQUIRE_MSG(s->nfp > 3 && s->nunwound > 2, "depth %u: %u and %u frames", depth, s->nfp,
                s->nunwound);
    unsigned fp = s->nfp - 3, unwound = s->nunwound - 2; /* from the return into recurse */
    CHECK_MSG(fp <= unwound && unwound - fp <= START_FRAMES, "depth %u: %u frames by pointers, %u unwound",
              depth, fp, unwound);
    CHECK_MSG(!memcmp(s->fp + 3, s->unwound + 2, (fp < unwound ? fp : unwound) * sizeof(void *)),
              "depth %u: the stacks differ", depth);
    CHECK_MSG(unwound >= depth, "depth %u: only %u frames", depth, unwound);
}

static double ns_per_stack(unsigned (*take)(void **, unsigned), unsigned depth, unsigned rounds);

static unsigned timed_depth;
static unsigned (*timed_take)(void **, unsigned);
static unsigned timed_rounds;

__attribute__((noinline)) static unsigned timed_recurse(unsigned depth)
{
    if (depth == 0) {
        void *pcs[MAX];
        unsigned n = 0;
        for (unsigned i = 0; i < timed_rounds; i++)
            n += timed_take(pcs, MAX);
        return n;
    }
    unsigned r = timed_recurse(depth - 1);
    __asm__ volatile("" : "+r"(r));
    return r;
}

static double ns_per_stack(unsigned (*take)(void **, unsigned), unsigned depth, unsigned rounds)
{
    timed_take = take;
    timed_depth = depth;
    timed_rounds = rounds;
    uint64_t start = os_monotonic_ns();
    unsigned frames = timed_recurse(depth);
    CHECK(frames > 0);
    return (double)(os_monotonic_ns() - start) / rounds;
}

static void *on_thread(void *arg)
{
    (void)arg;
    struct stacks s;
    recurse(10, &s, MAX);
    check_agree(&s, 10);
    return NULL;
}

int main(void)
{
    stacktrace_init();
    struct stacks s;
    for (unsigned depth = 0; depth <= 40; depth += 10) {
        recurse(depth, &s, MAX);
        check_agree(&s, depth);
    }
    recurse(80, &s, MAX); /* deeper than MAX: both cut at MAX */
    CHECK_EQ(s.nfp, MAX);
    CHECK_EQ(s.nunwound, MAX);
    CHECK(!memcmp(s.fp + 3, s.unwound + 2, (MAX - 3) * sizeof(void *)));
    recurse(20, &s, 5); /* a bound inside the unwound frames */
    CHECK_EQ(s.nfp, 5);
    run_threads(4, on_thread);

    for (unsigned depth = 10; depth <= 50; depth += 40)
        printf("depth %2u: frame pointers %6.0f ns, unwound %6.0f ns per stack\n", depth,
               ns_per_stack(stacktrace_frame_pointers, depth, 2000),
               ns_per_stack(stacktrace_unwind, depth, 2000));
    return check_status();
}
