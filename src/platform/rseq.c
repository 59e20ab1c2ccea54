/* Restartable sequences, the kernel side (see rseq.h and DESIGN.md, layer 2).
 *
 * This file runs inside malloc: it never calls malloc and never uses stdio.
 *
 * Area. glibc >= 2.35 registers an rseq area for every thread and exports
 * __rseq_offset / __rseq_size / __rseq_flags; the area is at thread pointer
 * + __rseq_offset. We reference those symbols weakly (no dlsym), so the
 * library also links against libcs without them. When __rseq_size is 0
 * (GLIBC_TUNABLES=glibc.pthread.rseq=0, other libcs, or glibc's own
 * registration failed) we register our own 32-byte area per thread, an
 * initial-exec TLS variable, at the same offset from the thread pointer in
 * every thread.
 *
 * Id. Sections read cpu_id inside the section, at area + 4. cpu_id_start
 * is never used (Linux 6.19 stopped rewriting it). The concurrency id
 * (mm_cid) would give a process confined to few CPUs compact ids, but
 * choosing between the two costs the fast paths a load each: the purger's
 * draining of idle CPUs' caches bounds what many CPU ids hold instead. 
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "platform/rseq.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "platform/os.h"

#ifndef AT_RSEQ_FEATURE_SIZE
#define AT_RSEQ_FEATURE_SIZE 27
#endif
#ifndef MEMBARRIER_CMD_FLAG_CPU
#define MEMBARRIER_CMD_FLAG_CPU (1 << 0)
#endif

#define CA_RSEQ_ORIG_SIZE 32u
#define CA_RSEQ_CPU_ID_UNINITIALIZED ((uint32_t)-1)
#define CA_RSEQ_CPU_ID_REGISTRATION_FAILED ((uint32_t)-2)

/* The kernel's struct rseq (uapi linux/rseq.h), original 32 bytes. Our own
 * copy: the installed uapi header may predate node_id/mm_cid, and including
 * <sys/rseq.h> would declare __rseq_* without the weak attribute. */
struct ca_rseq_area {
    uint32_t cpu_id_start;
    uint32_t cpu_id;
    uint64_t rseq_cs;
    uint32_t flags;
    uint32_t node_id;
    uint32_t mm_cid;
    uint32_t padding;
} __attribute__((aligned(32)));

_Static_assert(sizeof(struct ca_rseq_area) == 32, "struct rseq is 32 bytes");
_Static_assert(offsetof(struct ca_rseq_area, cpu_id) == RSEQ_AREA_CPU_ID, "cpu_id");
_Static_assert(offsetof(struct ca_rseq_area, rseq_cs) == RSEQ_AREA_RSEQ_CS, "rseq_cs");

/* glibc's exports, weak: null addresses when the libc has none. */
extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));
extern const unsigned int __rseq_flags __attribute__((weak));

/* Our own area, used only when glibc registered none. 32 bytes of
 * initial-exec TLS (the library may be dlopen'ed: keep static TLS tiny).
 * cpu_id doubles as the "registered in this thread" flag: the kernel writes
 * a real CPU number on registration. */
static __thread struct ca_rseq_area ca_own_area
    __attribute__((tls_model("initial-exec"))) = {
        .cpu_id_start = 0,
        .cpu_id = CA_RSEQ_CPU_ID_UNINITIALIZED,
};

/* Never registered: sections that must miss read its ids. */
static __thread struct ca_rseq_area ca_idle_area __attribute__((tls_model("initial-exec"))) = {
    .cpu_id = CA_RSEQ_CPU_ID_UNINITIALIZED,
};

/* Never registered either: its id is the one each thread sets for itself
 * (that of a slab of its own), -1 until then. */
static __thread struct ca_rseq_area ca_thread_area __attribute__((tls_model("initial-exec"))) = {
    .cpu_id = CA_RSEQ_CPU_ID_UNINITIALIZED,
};

/* Where the area is, as an offset from the thread pointer. */
static struct {
    long area_off;
} rseq_layout;
uint64_t rseq_aborts __attribute__((aligned(64)));
struct rseq_id_reader rseq_id_reader;

static struct {
    enum rseq_source source;
    bool membarrier;
    bool initialized;
} ca_rseq __attribute__((aligned(64)));

static inline uintptr_t ca_thread_pointer(void)
{
    return (uintptr_t)__builtin_thread_pointer();
}

static inline struct ca_rseq_area *ca_area(void)
{
    return (struct ca_rseq_area *)(ca_thread_pointer() + (uintptr_t)rseq_layout.area_off);
}

static long ca_sys_rseq(struct ca_rseq_area *area, uint32_t len, int flags, uint32_t sig)
{
    return syscall(SYS_rseq, area, len, flags, sig);
}

static long ca_sys_membarrier(int cmd, unsigned flags, int cpu)
{
    return syscall(SYS_membarrier, cmd, flags, cpu);
}

static uint32_t ca_signature;

static bool ca_register_own(void)
{
    struct ca_rseq_area *a = &ca_own_area;
    if (a->cpu_id != CA_RSEQ_CPU_ID_UNINITIALIZED)
        return (int32_t)a->cpu_id >= 0;
    int saved = errno;
    long r = ca_sys_rseq(a, CA_RSEQ_ORIG_SIZE, 0, ca_signature);
    errno = saved;
    if (r != 0) {
        a->cpu_id = CA_RSEQ_CPU_ID_REGISTRATION_FAILED;
        return false;
    }
    return (int32_t)__atomic_load_n(&a->cpu_id, __ATOMIC_RELAXED) >= 0;
}

enum rseq_source rseq_init(uint32_t signature, bool use_membarrier)
{
    if (ca_rseq.initialized)
        return ca_rseq.source;

    rseq_id_reader.id_count = os_cpu_count();
    ca_signature = signature;

    enum rseq_source src = RSEQ_SOURCE_NONE;
    unsigned glibc_size = &__rseq_size ? __rseq_size : 0;
    if (glibc_size != 0 && &__rseq_offset) {
        /* glibc registered (or tried to): its area must hold a CPU number. */
        rseq_layout.area_off = (long)__rseq_offset;
        if ((int32_t)__atomic_load_n(&ca_area()->cpu_id, __ATOMIC_RELAXED) >= 0)
            src = RSEQ_SOURCE_GLIBC;
    } else {
        rseq_layout.area_off = (long)((uintptr_t)&ca_own_area - ca_thread_pointer());
        if (ca_register_own())
            src = RSEQ_SOURCE_OWN;
    }

    bool mb = false, try_mb = use_membarrier && src != RSEQ_SOURCE_NONE;
    if (try_mb) {
        int saved = errno;
        long q = ca_sys_membarrier(MEMBARRIER_CMD_QUERY, 0, 0);
        if (q > 0 && (q & MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ) &&
            ca_sys_membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ, 0, 0) == 0)
            mb = true;
        errno = saved;
    }

    ca_rseq.membarrier = mb;
    ca_rseq.source = src;
    if (src != RSEQ_SOURCE_NONE) {
        __atomic_store_n(&rseq_id_reader.area_off, rseq_layout.area_off, __ATOMIC_RELEASE);
    }
    __atomic_store_n(&ca_rseq.initialized, true, __ATOMIC_RELEASE);
    return src;
}

long rseq_area_offset(void)
{
    return rseq_layout.area_off;
}

long rseq_idle_area_offset(void)
{
    return (long)((uintptr_t)&ca_idle_area - ca_thread_pointer());
}

long rseq_thread_area_offset(void)
{
    return (long)((uintptr_t)&ca_thread_area - ca_thread_pointer());
}

void rseq_thread_area_set_id(int id)
{
    __atomic_store_n(&ca_thread_area.cpu_id, id < 0 ? CA_RSEQ_CPU_ID_UNINITIALIZED : (uint32_t)id,
                     __ATOMIC_RELAXED);
}

enum rseq_source rseq_source(void)
{
    return ca_rseq.source;
}

bool rseq_thread_ready(void)
{
    switch (ca_rseq.source) {
    case RSEQ_SOURCE_GLIBC:
        return (int32_t)__atomic_load_n(&ca_area()->cpu_id, __ATOMIC_RELAXED) >= 0;
    case RSEQ_SOURCE_OWN:
        return ca_register_own();
    default:
        return false;
    }
}

unsigned rseq_current_id_slow(void)
{
    if (ca_rseq.source != RSEQ_SOURCE_NONE && rseq_thread_ready()) {
        uint32_t id = __atomic_load_n(
            (uint32_t *)(ca_thread_pointer() + (uintptr_t)rseq_layout.area_off + RSEQ_AREA_CPU_ID), __ATOMIC_RELAXED);
        if (id < rseq_id_reader.id_count)
            return id;
    }
    int cpu = sched_getcpu();
    return cpu >= 0 && rseq_id_reader.id_count && (unsigned)cpu < rseq_id_reader.id_count ? (unsigned)cpu : 0;
}

uint64_t rseq_abort_count(void)
{
    return __atomic_load_n(&rseq_aborts, __ATOMIC_RELAXED);
}

/* ---- fence ------------------------------------------------------------- */

/* Without membarrier (cpu_id ids only): run the calling thread on the CPU.
 * Whatever ran there before has been switched out since, and a thread
 * switched out inside a section aborts it when it next returns to user
 * space; the context switch orders its earlier stores before ours. */
#define CA_MASK_WORDS 64 /* 4096 CPUs */
static bool ca_visit_cpu(unsigned cpu)
{
    unsigned long mask[CA_MASK_WORDS] = {0};
    const unsigned bits = 8 * sizeof(unsigned long);
    if (cpu >= CA_MASK_WORDS * bits)
        return false;
    mask[cpu / bits] = 1ul << (cpu % bits);
    /* EINVAL: the CPU is offline or outside our cpuset, so no thread of the
     * process can be running a section there. */
    if (sched_setaffinity(0, sizeof mask, (cpu_set_t *)mask) != 0)
        return false;
    /* sched_setaffinity returns on an allowed CPU; check anyway. */
    for (int tries = 0; tries < 1000; tries++) {
        int now = sched_getcpu();
        if (now < 0 || (unsigned)now == cpu)
            break;
        sched_yield();
    }
    return true;
}

void rseq_fence(int id)
{
    if (ca_rseq.source == RSEQ_SOURCE_NONE)
        return;
    int saved = errno;
    if (ca_rseq.membarrier) {
        long r;
        if (id < 0)
            r = ca_sys_membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, 0, 0);
        else
            r = ca_sys_membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ,
                                  MEMBARRIER_CMD_FLAG_CPU, id);
        if (r == 0) {
            errno = saved;
            return;
        }
        /* Fall through to the fallback (e.g. a CPU id the kernel rejects). */
    }
    unsigned long orig[CA_MASK_WORDS];
    bool have_orig = sched_getaffinity(0, sizeof orig, (cpu_set_t *)orig) == 0;
    if (id >= 0) {
        ca_visit_cpu((unsigned)id);
    } else {
        for (unsigned c = 0; c < rseq_id_reader.id_count; c++)
            ca_visit_cpu(c);
    }
    if (have_orig)
        sched_setaffinity(0, sizeof orig, (cpu_set_t *)orig);
    errno = saved;
}

