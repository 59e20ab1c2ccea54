/* The unwind rules (src/platform/cfi.c) walked by stacktrace_by_rules give
 * glibc's backtrace() stack: frames with and without a frame pointer as
 * the frame address's base, recursion, frames inside the C library (qsort
 * calling back), a thread's stack; a signal frame makes the walk give up
 * (stacktrace_unwind then unwinds as backtrace() does); code without
 * tables ends the walk at its frame, as it ends backtrace()'s. */
#include <execinfo.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "platform/stacktrace.h"
#include "threads.h"

#define MAX 64

/* The stack by the rules, and backtrace()'s. */
struct stacks {
    void *rules[MAX], *unwound[MAX];
    unsigned nrules, nunwound;
};

/* Inlined: its stack starts in its caller, as the rules' does. */
__attribute__((always_inline)) static inline unsigned by_backtrace(void **pcs, unsigned max)
{
    int n = backtrace(pcs, (int)max);
    return n > 0 ? (unsigned)n : 0;
}

/* Both from the same frame: their first return addresses are two calls in
 * this function, the rest the same frames. */
__attribute__((noinline)) static void take(struct stacks *s, unsigned max)
{
    s->nrules = stacktrace_by_rules(s->rules, max);
    s->nunwound = by_backtrace(s->unwound, max);
    __asm__ volatile("" ::: "memory");
}

static void check_same(const struct stacks *s, const char *what, unsigned at_least)
{
    CHECK_MSG(s->nrules == s->nunwound, "%s: %u frames by the rules, %u by backtrace()", what, s->nrules,
              s->nunwound);
    CHECK_MSG(s->nrules >= at_least, "%s: only %u frames", what, s->nrules);
    unsigned n = s->nrules < s->nunwound ? s->nrules : s->nunwound;
    for (unsigned i = 1; i < n; i++)
        CHECK_MSG(s->rules[i] == s->unwound[i], "%s: frame %u: %p by the rules, %p by backtrace()", what, i,
                  s->rules[i], s->unwound[i]);
}

static unsigned descend(unsigned depth, struct stacks *s, unsigned max);

/* A frame whose frame address is an offset from the frame pointer: a
 * variable-length array moves the stack pointer by a run-time amount. */
__attribute__((noinline)) static unsigned descend_sized(unsigned depth, struct stacks *s, unsigned max)
{
    volatile char room[depth % 7 + 1];
    room[0] = (char)depth;
    return descend(depth, s, max) + room[0];
}

/* depth frames whose frame address is an offset from the stack pointer
 * (optimised code keeps no frame pointer), with one of descend_sized's
 * after every third. */
__attribute__((noinline)) static unsigned descend(unsigned depth, struct stacks *s, unsigned max)
{
    if (depth == 0) {
        take(s, max);
        return 0;
    }
    unsigned r = depth % 3 ? descend(depth - 1, s, max) : descend_sized(depth - 1, s, max);
    __asm__ volatile("" : "+r"(r));
    return r + 1;
}

static struct stacks in_qsort;

static int compare_taking(const void *a, const void *b)
{
    static unsigned calls;
    if (calls++ == 5)
        take(&in_qsort, MAX);
    return *(const int *)a - *(const int *)b;
}

static void *on_thread(void *arg)
{
    (void)arg;
    struct stacks s;
    descend(12, &s, MAX);
    check_same(&s, "thread", 12);
    return NULL;
}

static struct stacks in_handler;
static void *handler_unwound[MAX], *handler_backtrace[MAX];
static unsigned handler_nunwound, handler_nbacktrace;

__attribute__((noinline)) static void on_signal(int sig)
{
    (void)sig;
    in_handler.nrules = stacktrace_by_rules(in_handler.rules, MAX);
    handler_nunwound = stacktrace_unwind(handler_unwound, MAX);
    handler_nbacktrace = by_backtrace(handler_backtrace, MAX);
    __asm__ volatile("" ::: "memory");
}

/* Code without unwind tables calling fn(arg): the assembler writes none
 * for it, as for a JIT's code. */
void no_tables_call(void (*fn)(void *), void *arg);
void no_tables_call_end(void);
#if defined(__x86_64__)
__asm__(".text\n"
        ".globl no_tables_call\n.hidden no_tables_call\n.type no_tables_call, @function\n"
        "no_tables_call:\n"
        "  push %rbx\n"
        "  mov %rdi, %rax\n"
        "  mov %rsi, %rdi\n"
        "  call *%rax\n"
        "  pop %rbx\n"
        "  ret\n"
        ".globl no_tables_call_end\n.hidden no_tables_call_end\n"
        "no_tables_call_end:\n");
#else
__asm__(".text\n"
        ".globl no_tables_call\n.hidden no_tables_call\n.type no_tables_call, %function\n"
        "no_tables_call:\n"
        "  stp x29, x30, [sp, -16]!\n"
        "  mov x29, sp\n"
        "  mov x2, x0\n"
        "  mov x0, x1\n"
        "  blr x2\n"
        "  ldp x29, x30, [sp], 16\n"
        "  ret\n"
        ".globl no_tables_call_end\n.hidden no_tables_call_end\n"
        "no_tables_call_end:\n");
#endif

static void called_without_tables(void *arg) { descend(3, arg, MAX); }

int main(void)
{
    stacktrace_init();
    struct stacks s;
    for (unsigned depth = 0; depth <= 40; depth += 5) {
        descend(depth, &s, MAX);
        check_same(&s, "recursion", depth + 3);
    }
    descend(80, &s, MAX); /* deeper than MAX: both cut at MAX */
    CHECK_EQ(s.nrules, MAX);
    check_same(&s, "cut", MAX);
    descend(20, &s, 5);
    CHECK_EQ(s.nrules, 5);
    check_same(&s, "cut short", 5);

    int values[64];
    for (unsigned i = 0; i < 64; i++)
        values[i] = (int)((i * 37) % 64);
    qsort(values, 64, sizeof *values, compare_taking);
    check_same(&in_qsort, "called back from qsort", 4);

    run_threads(4, on_thread);

    signal(SIGUSR1, on_signal);
    raise(SIGUSR1);
    CHECK_MSG(in_handler.nrules == 0, "the walk went through a signal frame: %u frames", in_handler.nrules);
    /* stacktrace_unwind's stack has its own frame more, first */
    CHECK_EQ(handler_nunwound, handler_nbacktrace + 1);
    CHECK(handler_nbacktrace > 3);
    for (unsigned i = 1; i + 1 < handler_nunwound && i < handler_nbacktrace; i++)
        CHECK_MSG(handler_unwound[i + 1] == handler_backtrace[i], "signal: frame %u differs", i);

    no_tables_call(called_without_tables, &s);
    check_same(&s, "below code without tables", 5);
    REQUIRE(s.nrules > 0);
    uintptr_t last = (uintptr_t)s.rules[s.nrules - 1];
    CHECK_MSG(last > (uintptr_t)no_tables_call && last < (uintptr_t)no_tables_call_end,
              "the walk did not end in the code without tables");
    return check_status();
}
