#include "api/profile.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>

#include "api/profile_dump.h"
#include "api/profile_sampler.h"
#include "api/profile_table.h"
#include "platform/options.h"
#include "platform/stacktrace.h"

bool profile_on;

/* auto: samples take their stack both ways until frame pointers have
 * given the unwinder's stack CALIBRATION_SAMPLES times, and are used from
 * then on; one stack they get wrong, and the unwinder is used for good. A
 * chain that cannot be joined to the unwound frames is no verdict: such a
 * sample is unwound whatever the method. */
#define CALIBRATION_SAMPLES 8
enum { METHOD_CALIBRATING, METHOD_FP, METHOD_UNWIND };
static int method = METHOD_CALIBRATING;
static unsigned calibrated;

/* Set while the thread is inside the profiler: its own allocations (the
 * unwinder's) are not sampled, and a dump signal waits until it is out. */
static __thread bool busy;
static volatile sig_atomic_t dump_pending;

static const char *method_name(void)
{
    return __atomic_load_n(&method, __ATOMIC_RELAXED) == METHOD_FP ? "fp" : "unwind";
}

static void dump_numbered(void)
{
    busy = true;
    profile_dump_next(opt.profile_prefix, opt.profile_rate, method_name());
    busy = false;
}

/* Leaving the profiler: a dump the signal asked for meanwhile is due. */
static void leave(void)
{
    busy = false;
    if (__builtin_expect(dump_pending, 0)) {
        dump_pending = 0;
        dump_numbered();
    }
}

static void on_signal(int sig)
{
    (void)sig;
    int saved = errno;
    if (busy)
        dump_pending = 1; /* this thread holds the table: dump on the way out */
    else
        dump_numbered();
    errno = saved;
}

__attribute__((destructor)) static void dump_at_exit(void)
{
    if (__atomic_load_n(&profile_on, __ATOMIC_RELAXED) && !busy)
        dump_numbered();
}

void profile_init(void)
{
    profile_table_init();
}

void profile_start(void)
{
    if (!opt.profile)
        return;
    sampler_set_rate(opt.profile_rate);
    if (opt.profile_stack != PROFILE_STACK_AUTO)
        method = opt.profile_stack == PROFILE_STACK_FP ? METHOD_FP : METHOD_UNWIND;
    stacktrace_init();
    if (opt.profile_signal != PROFILE_SIGNAL_NONE) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sa.sa_flags = SA_RESTART;
        sigaction(opt.profile_signal == PROFILE_SIGNAL_USR1 ? SIGUSR1 : SIGUSR2, &sa, NULL);
    }
    __atomic_store_n(&profile_on, true, __ATOMIC_RELEASE);
}

bool profile_take(size_t size)
{
    return !busy && sampler_take(size);
}

#if PROFILE_IN_FAST_PATH
bool profile_sample_point(size_t size)
{
    if (__atomic_load_n(&profile_on, __ATOMIC_ACQUIRE) && !busy)
        return sampler_passed(size);
    if (opt.profile)
        sampler_uncount(size);
    else
        sampler_park();
    return false;
}
#endif

/* Frames the chain may miss at the outer end: the C library's start-up
 * (__libc_start_main and _start, start_thread and clone3) keeps no frame
 * pointers. */
#define START_FRAMES 2

/* Whether the frame-pointer stack fp[0..nf) is the unwound one, u[0..nu),
 * but for the start-up frames (or cut, both having filled their arrays). */
static bool same_stack(void *const *fp, unsigned nf, void *const *u, unsigned nu, bool cut)
{
    return nf <= nu && (cut || nu - nf <= START_FRAMES) && !memcmp(fp, u, nf * sizeof *fp);
}

static unsigned capture(void **pcs)
{
    int m = __atomic_load_n(&method, __ATOMIC_RELAXED);
    if (m == METHOD_UNWIND)
        return stacktrace_unwind(pcs, PROFILE_MAX_FRAMES);
    unsigned n = stacktrace_frame_pointers(pcs, PROFILE_MAX_FRAMES);
    if (m == METHOD_FP && n)
        return n;
    void *unwound[PROFILE_MAX_FRAMES];
    unsigned u = stacktrace_unwind(unwound, PROFILE_MAX_FRAMES);
    if (m == METHOD_CALIBRATING) {
        /* The frame-pointer stack starts with one frame more (its own
         * call of the unwinder) and a different return into capture():
         * the two agree from the return into capture()'s caller on. */
        bool cut = n == PROFILE_MAX_FRAMES;
        if (!n) {
            /* the chain could not be joined: no verdict */
        } else if (n < 3 || u < 2 || !same_stack(pcs + 3, n - 3, unwound + 2, u - 2, cut))
            __atomic_store_n(&method, METHOD_UNWIND, __ATOMIC_RELAXED);
        else if (__atomic_add_fetch(&calibrated, 1, __ATOMIC_RELAXED) == CALIBRATION_SAMPLES)
            __atomic_compare_exchange_n(&method, &m, METHOD_FP, false, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED);
    }
    memcpy(pcs, unwound, u * sizeof *pcs);
    return u;
}

void profile_record(void *p, size_t size)
{
    busy = true;
    void *pcs[PROFILE_MAX_FRAMES];
    unsigned depth = capture(pcs);
    profile_table_add((uintptr_t)p, size, sampler_weight(size), pcs, depth);
    leave();
}

void profile_forget_sampled(void *p)
{
    busy = true;
    profile_table_remove((uintptr_t)p);
    leave();
}

void profile_unsampled(void (*fn)(void))
{
    bool outermost = !busy;
    busy = true;
    fn();
    if (outermost)
        leave();
}

void profile_resized(void *old, void *new_block, size_t size)
{
    if (!profile_on)
        return;
    profile_forget_sampled(old);
    if (profile_take(size))
        profile_record(new_block, size);
}

int profile_dump_api(const char *path)
{
    if (!profile_on) {
        errno = ENOTSUP;
        return -1;
    }
    busy = true;
    int failure = path ? profile_dump_file(path, opt.profile_rate, method_name())
                       : profile_dump_next(opt.profile_prefix, opt.profile_rate, method_name());
    leave();
    if (failure) {
        errno = failure;
        return -1;
    }
    return 0;
}
