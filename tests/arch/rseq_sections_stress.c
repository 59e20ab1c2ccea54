/* Stress tests of the rseq critical sections (src/arch/<arch>/rseq_sections.h)
 * and the kernel side they rely on (src/platform/rseq.c), on a shared array
 * of per-CPU slabs, with every cached object a unique tagged token.
 *
 *   rseq_sections_stress [--mode stress|migrate|signals|drain|fork|bench|none]
 *                        [--threads N] [--ms DURATION] [--no-membarrier]
 *                        [--expect-none] [--expect-aborts]
 *   EXPECT_RSEQ_SOURCE=glibc|own|none  asserts what rseq_init found.
 *
 * A token popped by a thread is claimed with an atomic exchange of its owner
 * field, which must have been 0: an object handed out twice fails at once.
 * At the end every token is counted exactly once over the threads' bags and
 * the slabs (none lost, none duplicated). Exit status 0 on success, 1 on any
 * detected corruption (the broken-commit build must exit 1), 2 on a usage or
 * environment error.
 */
#define _GNU_SOURCE
#include "arch/sections.h"
#include "check.h"
#include "clock.h"
#include "pinning.h"
#include "platform/rseq.h"
#include "rng.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define NCLS 3
#define CAP 64 /* slots per stack */
#define BAG0 24 /* tokens each thread starts with */
#define TAG_MAGIC 0x9e3779b97f4a7c15ull
#define SIG_OWNER 0x40000000u

enum mode { M_STRESS, M_MIGRATE, M_SIGNALS, M_DRAIN, M_FORK, M_BENCH, M_NONE };

struct token {
    _Atomic unsigned owner; /* 0 while cached, else the holder's id */
    unsigned idx;
    uint64_t tag;
} __attribute__((aligned(16)));

struct worker {
    pthread_t thread;
    unsigned me;
    struct token **bag;
    unsigned n;
    struct rng rng;
    uint64_t pops, pushes, misses, fulls, migrations, sigs;
} __attribute__((aligned(64)));

static enum mode mode = M_STRESS;
static unsigned nthreads = 64;
static unsigned duration_ms = 2000;
static struct token *tokens;
static unsigned ntokens, bagcap;
/* The sections read it by name: not static. */
struct slab_layout stress_layout;
#define slabs stress_layout.slabs
static unsigned nids;
static struct worker *workers;
static atomic_bool stop;
static unsigned ncpus_allowed;
static int cpus_allowed[1024];
static atomic_ulong drains, drained_tokens, sig_handled;

static void usage_error(const char *what)
{
    fprintf(stderr, "rseq_sections_stress: %s\n", what);
    exit(2);
}

static inline struct cache_hdr *hdr(unsigned id, unsigned cls)
{
    return (struct cache_hdr *)(slabs + ((uintptr_t)id << SLAB_SHIFT)) + cls;
}

static inline uint32_t *begin_of(unsigned id, unsigned cls)
{
    return &((struct cache_base *)(slabs + ((uintptr_t)id << SLAB_SHIFT)) + SLAB_HEADER_SLOTS + cls)->begin;
}

static inline void **slots(unsigned id)
{
    return (void **)(slabs + ((uintptr_t)id << SLAB_SHIFT));
}

/* Each class's stack. */
static unsigned stack_base(unsigned cls) { return 2 * SLAB_HEADER_SLOTS + CAP * cls; }

/* The four sections: push and pop, and the slow paths' batches. */
static struct token *pop_one(unsigned cls)
{
    void *p;
    ARCH_SLAB_POP(p, stress_layout, cls, empty);
    return p;
empty:
    return NULL;
}

static bool push_one(unsigned cls, struct token *t)
{
    ARCH_SLAB_PUSH(t, stress_layout, cls, full);
    return true;
full:
    return false;
}

static unsigned pop_batch(unsigned cls, struct token **out, unsigned n)
{
    return arch_slab_pop_batch(&stress_layout, cls, (void **)out, n);
}

static unsigned push_batch(unsigned cls, struct token *const *in, unsigned n)
{
    return arch_slab_push_batch(&stress_layout, cls, (void *const *)in, n);
}

static void check_token(const void *p, const char *where)
{
    uintptr_t a = (uintptr_t)p, lo = (uintptr_t)tokens;
    REQUIRE_MSG(a >= lo && a < lo + (uintptr_t)ntokens * sizeof(struct token) &&
                    (a - lo) % sizeof(struct token) == 0,
                "%s: %p is not a token", where, p);
    const struct token *t = p;
    REQUIRE_MSG(t->tag == (t->idx * TAG_MAGIC ^ TAG_MAGIC) && (uintptr_t)(t - tokens) == t->idx,
                "%s: token %u has a bad tag", where, t->idx);
}

static inline void claim(struct token *t, unsigned me, const char *where)
{
    check_token(t, where);
    unsigned prev = atomic_exchange_explicit(&t->owner, me, memory_order_acq_rel);
    REQUIRE_MSG(prev == 0, "%s: token %u handed to %#x while held by %#x", where, t->idx, me, prev);
}

static inline void release(struct token *t)
{
    atomic_store_explicit(&t->owner, 0, memory_order_release);
}

/* ---- signal handler that itself pops and pushes ------------------------ */

static __thread struct {
    struct token *stash[16];
    unsigned n, me, calls;
    bool active;
} sigctx;

static void on_signal(int sig)
{
    (void)sig;
    int saved = errno;
    if (!sigctx.active) {
        errno = saved;
        return;
    }
    unsigned cls = sigctx.calls++ % NCLS;
    unsigned me = sigctx.me | SIG_OWNER;
    if (sigctx.n) {
        struct token *t = sigctx.stash[sigctx.n - 1];
        release(t);
        if (push_one(cls, t))
            sigctx.n--;
        else
            claim(t, me, "signal re-claim");
    }
    if (sigctx.n < 16) {
        struct token *t = pop_one(cls);
        if (t) {
            claim(t, me, "signal pop");
            for (int i = 0; i < 20; i++)
                __asm__ __volatile__("pause");
            release(t);
            if (!push_one((cls + 1) % NCLS, t)) {
                claim(t, me, "signal keep");
                sigctx.stash[sigctx.n++] = t;
            }
        }
    }
    atomic_fetch_add_explicit(&sig_handled, 1, memory_order_relaxed);
    errno = saved;
}

/* ---- workers ----------------------------------------------------------- */

static void bag_take(struct worker *w, unsigned j, struct token **out)
{
    *out = w->bag[j];
    w->bag[j] = w->bag[--w->n];
}

static void one_op(struct worker *w)
{
    uint64_t r = rng_next(&w->rng);
    unsigned cls = (unsigned)(r % NCLS);
    unsigned op = (unsigned)(r >> 8) & 7;
    unsigned cnt = 1 + (unsigned)((r >> 16) % 16);
    if (op < 3 && w->n == 0)
        op = 3;
    if (op >= 3 && op < 6 && w->n + 1 > bagcap)
        op = 0;

    if (op < 3) { /* push one */
        struct token *t;
        bag_take(w, (unsigned)((r >> 24) % w->n), &t);
        release(t);
        if (push_one(cls, t)) {
            w->pushes++;
        } else {
            claim(t, w->me, "push failed, re-claim");
            w->bag[w->n++] = t;
            w->fulls++;
        }
    } else if (op < 6) { /* pop one */
        struct token *t = pop_one(cls);
        if (t) {
            claim(t, w->me, "pop");
            w->bag[w->n++] = t;
            w->pops++;
        } else {
            w->misses++;
        }
    } else if (op == 6) { /* pop batch */
        struct token *out[16];
        if (cnt > bagcap - w->n)
            cnt = bagcap - w->n;
        unsigned k = pop_batch(cls, out, cnt);
        REQUIRE_MSG(k <= cnt, "pop_batch returned %u > %u", k, cnt);
        for (unsigned i = 0; i < k; i++) {
            claim(out[i], w->me, "pop_batch");
            w->bag[w->n++] = out[i];
        }
        w->pops += k;
        if (k == 0)
            w->misses++;
    } else { /* push batch */
        struct token *in[16] = {0};
        if (cnt > w->n)
            cnt = w->n;
        for (unsigned i = 0; i < cnt; i++) {
            bag_take(w, (unsigned)rng_below(&w->rng, w->n), &in[i]);
            release(in[i]);
        }
        unsigned k = push_batch(cls, in, cnt);
        REQUIRE_MSG(k <= cnt, "push_batch returned %u > %u", k, cnt);
        for (unsigned i = k; i < cnt; i++) {
            claim(in[i], w->me, "push_batch rest, re-claim");
            w->bag[w->n++] = in[i];
        }
        w->pushes += k;
        if (k < cnt)
            w->fulls++;
    }
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    REQUIRE_MSG(rseq_thread_ready(), "thread %u: rseq_thread_ready failed", w->me);
    timer_t timer;
    bool have_timer = false;
    if (mode == M_SIGNALS) {
        sigctx.me = w->me;
        sigctx.active = true;
        /* A high-resolution timer per thread: signals land anywhere,
         * including inside sections, whenever the thread runs. */
        struct sigevent sev;
        memset(&sev, 0, sizeof sev);
        sev.sigev_notify = SIGEV_THREAD_ID;
        sev.sigev_signo = SIGUSR2;
        sev._sigev_un._tid = (pid_t)syscall(SYS_gettid); /* sigev_notify_thread_id */
        if (timer_create(CLOCK_MONOTONIC, &sev, &timer) == 0) {
            long ns = 200000 + (long)rng_below(&w->rng, 100000);
            struct itimerspec its = {{0, ns}, {0, ns}};
            have_timer = timer_settime(timer, 0, &its, NULL) == 0;
        }
    }
    uint64_t iter = 0;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        for (int i = 0; i < 64; i++)
            one_op(w);
        unsigned id = rseq_current_id();
        REQUIRE_MSG(id < nids, "rseq_current_id %u >= id count %u", id, nids);
        if (mode == M_MIGRATE && ncpus_allowed > 1) {
            pin_to_cpu(cpus_allowed[rng_below(&w->rng, ncpus_allowed)]);
            w->migrations++;
        }
        iter++;
    }
    if (mode == M_SIGNALS) {
        if (have_timer)
            timer_delete(timer);
        sigset_t set;
        sigemptyset(&set);
        sigaddset(&set, SIGUSR1);
        sigaddset(&set, SIGUSR2);
        sigaddset(&set, SIGPROF);
        pthread_sigmask(SIG_BLOCK, &set, NULL);
        sigctx.active = false;
        for (unsigned i = 0; i < sigctx.n; i++) {
            struct token *t = sigctx.stash[i];
            REQUIRE_MSG(atomic_exchange(&t->owner, w->me) == (w->me | SIG_OWNER),
                        "stashed token %u has a foreign owner", t->idx);
            w->bag[w->n++] = t;
        }
        w->sigs = sigctx.calls;
        sigctx.n = 0;
    }
    return NULL;
}

/* ---- drainer ------------------------------------------------------------ */

static void *drainer_main(void *arg)
{
    struct worker *w = arg; /* a worker of its own, for the bag */
    REQUIRE_MSG(rseq_thread_ready(), "drainer: rseq_thread_ready failed");
    unsigned round = 0;
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        unsigned id = round % nids, cls = (round / nids) % NCLS;
        round++;
        struct cache_hdr *h = hdr(id, cls);
        uint32_t begin = __atomic_load_n(begin_of(id, cls), __ATOMIC_RELAXED);
        uint32_t end = __atomic_load_n(&h->end, __ATOMIC_RELAXED);
        /* Close the class: pushes fail (end 0), pops miss (begin 0xFFFF). */
        __atomic_store_n(&h->end, 0, __ATOMIC_RELEASE);
        __atomic_store_n(begin_of(id, cls), SLAB_STOPPED_BEGIN, __ATOMIC_RELEASE);
        rseq_fence((int)id);
        uint32_t top = __atomic_load_n(&h->top, __ATOMIC_ACQUIRE);
        REQUIRE_MSG(top >= begin && top <= end, "drain: id %u cls %u top %u outside [%u, %u]", id, cls, top,
                    begin, end);
        void **s = slots(id);
        for (unsigned i = begin; i < top; i++) {
            claim(s[i], w->me, "drain");
            w->bag[w->n++] = s[i];
        }
        REQUIRE_MSG(w->n <= bagcap, "drainer bag overflow");
        atomic_fetch_add(&drained_tokens, (unsigned long)(top - begin));
        /* A section still running would now commit over our top: the fence
         * guarantees none is. Any later section sees the closed bounds. */
        for (int spin = 0; spin < 200; spin++)
            __asm__ __volatile__("pause");
        REQUIRE_MSG(__atomic_load_n(&h->top, __ATOMIC_ACQUIRE) == top,
                    "drain: the top of id %u cls %u moved after the fence", id, cls);
        __atomic_store_n(&h->top, begin, __ATOMIC_RELEASE);
        /* A section may have read the old top before the bounds: none may
         * run with it once they are restored. */
        rseq_fence((int)id);
        __atomic_store_n(&h->end, end, __ATOMIC_RELEASE);
        __atomic_store_n(begin_of(id, cls), begin, __ATOMIC_RELEASE);
        atomic_fetch_add(&drains, 1);
        /* Give the tokens back through ordinary pushes. */
        for (int i = 0; i < 32 && w->n; i++)
            one_op(w);
        while (w->n > (unsigned)BAG0) {
            struct token *t;
            bag_take(w, w->n - 1, &t);
            release(t);
            if (!push_one((unsigned)rng_below(&w->rng, NCLS), t)) {
                claim(t, w->me, "drainer re-claim");
                w->bag[w->n++] = t;
                break;
            }
        }
    }
    return NULL;
}

/* ---- signal sources ----------------------------------------------------- */

static void *signaler_main(void *arg)
{
    (void)arg;
    struct rng r = rng_seeded(0);
    while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
        for (int i = 0; i < 8; i++)
            pthread_kill(workers[rng_below(&r, nthreads)].thread, SIGUSR1);
        usleep(50);
    }
    return NULL;
}

/* ---- setup and accounting ----------------------------------------------- */

static void setup(void)
{
    nids = rseq_id_count();
    if (nids == 0 || nids > 4096)
        usage_error("implausible rseq_id_count");
    size_t slab_bytes = (size_t)nids << SLAB_SHIFT;
    void *m = mmap(NULL, slab_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        usage_error("mmap slabs");
    slabs = (uintptr_t)m;
    unsigned prefill = CAP / 2; /* in each stack */
    ntokens = nthreads * BAG0 + nids * NCLS * prefill + BAG0;
    bagcap = ntokens;
    tokens = aligned_alloc(64, ((size_t)ntokens * sizeof *tokens + 63) & ~(size_t)63);
    if (!tokens)
        usage_error("alloc tokens");
    for (unsigned i = 0; i < ntokens; i++) {
        atomic_init(&tokens[i].owner, 0);
        tokens[i].idx = i;
        tokens[i].tag = i * TAG_MAGIC ^ TAG_MAGIC;
    }
    unsigned next = 0;
    for (unsigned id = 0; id < nids; id++) {
        for (unsigned c = 0; c < NCLS; c++) {
            struct cache_hdr *h = hdr(id, c);
            *begin_of(id, c) = h->top = stack_base(c);
            h->end = stack_base(c) + CAP;
            for (unsigned i = 0; i < prefill; i++)
                slots(id)[h->top++] = &tokens[next++];
        }
    }
    unsigned nw = nthreads + 1; /* +1: the drainer's */
    workers = aligned_alloc(64, nw * sizeof *workers);
    if (!workers)
        usage_error("alloc workers");
    memset(workers, 0, nw * sizeof *workers);
    for (unsigned t = 0; t < nw; t++) {
        struct worker *w = &workers[t];
        w->me = t + 1;
        w->rng = rng_seeded(t + 1);
        w->bag = malloc(bagcap * sizeof *w->bag);
        if (!w->bag)
            usage_error("alloc bag");
        for (unsigned i = 0; i < BAG0 && next < ntokens; i++) {
            atomic_store(&tokens[next].owner, w->me);
            w->bag[w->n++] = &tokens[next++];
        }
    }
    if (next != ntokens)
        usage_error("token distribution");
}

static void account(void)
{
    unsigned *seen = calloc(ntokens, sizeof *seen);
    if (!seen)
        usage_error("alloc seen");
    for (unsigned t = 0; t <= nthreads; t++) {
        struct worker *w = &workers[t];
        for (unsigned i = 0; i < w->n; i++) {
            struct token *k = w->bag[i];
            check_token(k, "final bag");
            REQUIRE_MSG(atomic_load(&k->owner) == w->me, "final: token %u in bag of %u owned by %#x",
                        k->idx, w->me, atomic_load(&k->owner));
            seen[k->idx]++;
        }
    }
    for (unsigned id = 0; id < nids; id++) {
        for (unsigned c = 0; c < NCLS; c++) {
            struct cache_hdr *h = hdr(id, c);
            unsigned a = stack_base(c);
            REQUIRE_MSG(*begin_of(id, c) == a && h->top >= a && h->end == a + CAP && h->top <= h->end,
                        "final: header id %u cls %u is {%u..%u < %u}", id, c, *begin_of(id, c), h->top, h->end);
            for (unsigned i = a; i < h->top; i++) {
                struct token *k = slots(id)[i];
                check_token(k, "final slab");
                REQUIRE_MSG(atomic_load(&k->owner) == 0, "final: cached token %u owned by %#x", k->idx,
                            atomic_load(&k->owner));
                seen[k->idx]++;
            }
        }
    }
    for (unsigned i = 0; i < ntokens; i++)
        REQUIRE_MSG(seen[i] == 1, "final: token %u seen %u times (%s)", i, seen[i],
                    seen[i] ? "duplicated" : "lost");
    free(seen);
}

/* In a child forked under load: the slabs hold only committed states (no
 * section spans a fork), so each slot in [begin, top) is a distinct token;
 * then pop everything through the sections, single-threaded. */
static void fork_child_check(void)
{
    REQUIRE_MSG(rseq_thread_ready(), "fork child: rseq_thread_ready");
    unsigned *seen = calloc(ntokens, sizeof *seen);
    for (unsigned id = 0; id < nids; id++)
        for (unsigned c = 0; c < NCLS; c++) {
            struct cache_hdr *h = hdr(id, c);
            for (unsigned i = stack_base(c); i < h->top; i++) {
                struct token *k = slots(id)[i];
                check_token(k, "fork child");
                REQUIRE_MSG(seen[k->idx]++ == 0, "fork child: token %u cached twice", k->idx);
            }
        }
    for (unsigned c = 0; c < NCLS; c++) {
        struct token *p;
        while ((p = pop_one(c)) != NULL)
            check_token(p, "fork child pop");
        struct token *batch[16];
        for (unsigned k; (k = pop_batch(c, batch, 16)) != 0;)
            while (k)
                check_token(batch[--k], "fork child pop_batch");
    }
    _exit(0);
}

static void bench(void)
{
    if (!rseq_thread_ready())
        usage_error("bench: no rseq");
    pin_to_cpu(sched_getcpu()); /* a push and the pops that follow on one slab */
    const unsigned n = 20000000;
    void *p = &tokens[0];
    for (int pass = 0; pass < 2; pass++) {
        uint64_t t0 = monotonic_ns();
        for (unsigned i = 0; i < n; i++) {
            REQUIRE_MSG(push_one(0, p), "bench push");
            struct token *moved;
            REQUIRE_MSG(pop_batch(0, &moved, 1) == 1 && push_batch(0, &moved, 1) == 1, "bench move");
            p = pop_one(0);
            __asm__ __volatile__("" : "+r"(p));
        }
        uint64_t t1 = monotonic_ns();
        struct token *batch[16];
        for (int i = 0; i < 16; i++)
            batch[i] = &tokens[i];
        const unsigned nb = n / 8;
        for (unsigned i = 0; i < nb; i++) {
            for (int j = 0; j < 16; j++)
                REQUIRE_MSG(push_one(1, batch[j]), "bench push");
            REQUIRE_MSG(pop_batch(1, batch, 16) == 16, "bench pop_batch");
        }
        uint64_t t2 = monotonic_ns();
        printf("bench pass %d: push, move, pop %.2f ns; 16 pushes + pop_batch(16) %.2f ns "
               "(%.2f ns/object), aborts %llu\n",
               pass, (double)(t1 - t0) / n, (double)(t2 - t1) / nb,
               (double)(t2 - t1) / nb / 16, (unsigned long long)rseq_abort_count());
    }
}

static const char *source_name(enum rseq_source s)
{
    return s == RSEQ_SOURCE_GLIBC ? "glibc" : s == RSEQ_SOURCE_OWN ? "own" : "none";
}

int main(int argc, char **argv)
{
    bool use_membarrier = true, expect_none = false, expect_aborts = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--mode") && i + 1 < argc) {
            const char *m = argv[++i];
            mode = !strcmp(m, "stress")    ? M_STRESS
                   : !strcmp(m, "migrate") ? M_MIGRATE
                   : !strcmp(m, "signals") ? M_SIGNALS
                   : !strcmp(m, "drain")   ? M_DRAIN
                   : !strcmp(m, "fork")    ? M_FORK
                   : !strcmp(m, "bench")   ? M_BENCH
                   : !strcmp(m, "none")    ? M_NONE
                                           : (usage_error("unknown mode"), M_STRESS);
        } else if (!strcmp(a, "--threads") && i + 1 < argc) {
            nthreads = (unsigned)atoi(argv[++i]);
        } else if (!strcmp(a, "--ms") && i + 1 < argc) {
            duration_ms = (unsigned)atoi(argv[++i]);
        } else if (!strcmp(a, "--no-membarrier")) {
            use_membarrier = false;
        } else if (!strcmp(a, "--expect-none")) {
            expect_none = true;
        } else if (!strcmp(a, "--expect-aborts")) {
            expect_aborts = true;
        } else {
            usage_error("usage: see the comment at the top of rseq_sections_stress.c");
        }
    }
    if (nthreads == 0 || nthreads > 4096)
        usage_error("bad --threads");

    enum rseq_source src = rseq_init(ARCH_RSEQ_SIGNATURE, use_membarrier);
    REQUIRE_MSG(rseq_init(ARCH_RSEQ_SIGNATURE, use_membarrier) == src && rseq_source() == src,
                "rseq_init is not idempotent");
    const char *want = getenv("EXPECT_RSEQ_SOURCE");
    printf("rseq source %s, id count %u\n", source_name(src), rseq_id_count());
    REQUIRE_MSG(!want || !strcmp(want, source_name(src)), "rseq source is %s, expected %s",
                source_name(src), want);
    if (expect_none || mode == M_NONE) {
        REQUIRE_MSG(src == RSEQ_SOURCE_NONE, "expected RSEQ_SOURCE_NONE, got %s", source_name(src));
        REQUIRE_MSG(!rseq_thread_ready(), "no rseq, but thread ready");
        rseq_fence(0); /* must be a harmless no-op */
        printf("rseq_init returned RSEQ_SOURCE_NONE: OK\n");
        return 0;
    }
    REQUIRE_MSG(src != RSEQ_SOURCE_NONE, "rseq unavailable");
    REQUIRE_MSG(rseq_thread_ready(), "main thread: rseq_thread_ready");
    stress_layout.area_off = rseq_area_offset();

    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        for (int c = 0; c < CPU_SETSIZE && ncpus_allowed < 1024; c++)
            if (CPU_ISSET(c, &set))
                cpus_allowed[ncpus_allowed++] = c;

    setup();
    if (mode == M_BENCH) {
        bench();
        return 0;
    }

    if (mode == M_SIGNALS) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sa.sa_flags = SA_RESTART;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGUSR1, &sa, NULL);
        sigaction(SIGUSR2, &sa, NULL);
        sigaction(SIGPROF, &sa, NULL);
    }
    uint64_t aborts0 = rseq_abort_count();
    uint64_t t0 = monotonic_ns();
    for (unsigned t = 0; t < nthreads; t++)
        if (pthread_create(&workers[t].thread, NULL, worker_main, &workers[t]))
            usage_error("pthread_create");
    pthread_t extra;
    bool have_extra = false;
    if (mode == M_DRAIN)
        have_extra = !pthread_create(&extra, NULL, drainer_main, &workers[nthreads]);
    if (mode == M_SIGNALS) {
        have_extra = !pthread_create(&extra, NULL, signaler_main, NULL);
        struct itimerval it = {{0, 1000}, {0, 1000}};
        setitimer(ITIMER_PROF, &it, NULL);
    }
    unsigned forks = 0;
    if (mode == M_FORK) {
        while (monotonic_ns() - t0 < (uint64_t)duration_ms * 1000000ull) {
            pid_t pid = fork();
            if (pid == 0)
                fork_child_check();
            if (pid < 0)
                usage_error("fork");
            int st;
            REQUIRE_MSG(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
                        "fork child failed (status %#x)", st);
            forks++;
            usleep(20000);
        }
    } else {
        usleep(duration_ms * 1000u);
    }
    if (mode == M_SIGNALS) {
        struct itimerval it = {{0, 0}, {0, 0}};
        setitimer(ITIMER_PROF, &it, NULL);
    }
    atomic_store(&stop, true);
    if (have_extra) /* first: the signaler must not signal joined threads */
        pthread_join(extra, NULL);
    for (unsigned t = 0; t < nthreads; t++)
        pthread_join(workers[t].thread, NULL);
    if (mode == M_SIGNALS) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = SIG_IGN;
        sigaction(SIGPROF, &sa, NULL);
    }
    uint64_t t1 = monotonic_ns();

    account();

    uint64_t pops = 0, pushes = 0, misses = 0, fulls = 0, migr = 0, sigs = 0;
    for (unsigned t = 0; t <= nthreads; t++) {
        pops += workers[t].pops;
        pushes += workers[t].pushes;
        misses += workers[t].misses;
        fulls += workers[t].fulls;
        migr += workers[t].migrations;
        sigs += workers[t].sigs;
    }
    uint64_t aborts = rseq_abort_count() - aborts0;
    printf("%u threads, %.2f s: %llu tokens, pops %llu, pushes %llu, misses %llu, fulls %llu, "
           "aborts %llu, migrations %llu, signals handled %lu, drains %lu (%lu tokens), "
           "forks %u: OK\n",
           nthreads, (double)(t1 - t0) / 1e9, (unsigned long long)ntokens,
           (unsigned long long)pops, (unsigned long long)pushes, (unsigned long long)misses,
           (unsigned long long)fulls, (unsigned long long)aborts, (unsigned long long)migr,
           (unsigned long)atomic_load(&sig_handled), (unsigned long)atomic_load(&drains),
           (unsigned long)atomic_load(&drained_tokens), forks);
    (void)sigs;
    REQUIRE_MSG(pops > 0 && pushes > 0, "no work done");
    REQUIRE_MSG(!expect_aborts || aborts > 0, "no critical section was ever aborted");
    REQUIRE_MSG(mode != M_SIGNALS || atomic_load(&sig_handled) > 0, "no signal was handled");
    REQUIRE_MSG(mode != M_DRAIN || atomic_load(&drains) > 0, "no drain happened");
    return 0;
}
