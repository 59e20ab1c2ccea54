/* The interposed memory calls of os_fault.h. The real calls go straight to
 * the kernel (syscall(2)): looking the C library's up would need dlsym,
 * which may allocate, inside the allocator. */
#define _GNU_SOURCE
#include "os_fault.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hash.h"

#define EXPORT __attribute__((visibility("default")))

enum mode { MODE_OFF, MODE_EVERY, MODE_RANDOM };

/* A refusal rule, swapped whole: a call sees one rule or the next. */
struct rule {
    enum mode mode;
    unsigned mask;
    unsigned long every; /* MODE_EVERY */
    unsigned odds;       /* MODE_RANDOM */
    uint64_t seed;
    atomic_ulong sequence; /* calls the rule has judged */
};

#define RULE_SLOTS 64
static struct rule rules[RULE_SLOTS];
static _Atomic(struct rule *) current;
static atomic_uint next_rule;
static atomic_ulong calls[OS_CALL_KINDS], refused[OS_CALL_KINDS];
static pthread_once_t environment_once = PTHREAD_ONCE_INIT;

/* Rules take turns in a ring of slots, so a call still judging by an old
 * rule (a background thread's) does not see it rewritten under it unless
 * RULE_SLOTS rules were installed meanwhile. */
static void install(enum mode mode, unsigned mask, unsigned long every, unsigned odds, uint64_t seed)
{
    struct rule *r = &rules[atomic_fetch_add(&next_rule, 1) % RULE_SLOTS];
    r->mode = mode;
    r->mask = mask;
    r->every = every;
    r->odds = odds;
    r->seed = seed;
    atomic_store(&r->sequence, 0);
    atomic_store(&current, r);
}

static void read_environment(void)
{
    const char *every = getenv("OS_FAULT_EVERY");
    if (!every || !*every)
        return;
    char *end;
    unsigned long n = strtoul(every, &end, 10);
    unsigned mask = *end == ':' ? (unsigned)strtoul(end + 1, NULL, 0) : OS_CALL_ALL;
    if (n)
        install(MODE_EVERY, mask, n, 0, 0);
}

EXPORT void os_fault_every(unsigned long n, unsigned mask)
{
    pthread_once(&environment_once, read_environment);
    install(n ? MODE_EVERY : MODE_OFF, mask, n, 0, 0);
}

EXPORT void os_fault_random(uint64_t seed, unsigned odds, unsigned mask)
{
    pthread_once(&environment_once, read_environment);
    install(odds ? MODE_RANDOM : MODE_OFF, mask, 0, odds, seed);
}

EXPORT void os_fault_off(void)
{
    pthread_once(&environment_once, read_environment);
    install(MODE_OFF, 0, 0, 0, 0);
}

EXPORT void os_fault_counts(struct os_fault_counts *out)
{
    for (unsigned k = 0; k < OS_CALL_KINDS; k++) {
        out->calls[k] = atomic_load(&calls[k]);
        out->refused[k] = atomic_load(&refused[k]);
    }
}

EXPORT const char *os_call_name(enum os_call kind)
{
    static const char *const names[OS_CALL_KINDS] = {"mmap", "mprotect", "mremap", "madvise"};
    return kind < OS_CALL_KINDS ? names[kind] : "?";
}

/* Whether the code that called lies in corealloc's shared library (or a
 * test build of it: all are named libcorealloc*). */
static bool from_corealloc(const void *caller)
{
    Dl_info info;
    return dladdr(caller, &info) && info.dli_fname && strstr(info.dli_fname, "/libcorealloc");
}

/* Counts a call of corealloc's and says whether to refuse it (errno set). */
static bool refuse(enum os_call kind, const void *caller)
{
    pthread_once(&environment_once, read_environment);
    if (!from_corealloc(caller))
        return false;
    atomic_fetch_add(&calls[kind], 1);
    struct rule *r = atomic_load(&current);
    if (!r || r->mode == MODE_OFF || !(r->mask & OS_CALL_BIT(kind)))
        return false;
    unsigned long n = atomic_fetch_add(&r->sequence, 1) + 1;
    bool no = r->mode == MODE_EVERY ? n % r->every == 0 : hash64(r->seed ^ hash64(n)) % r->odds == 0;
    if (no) {
        atomic_fetch_add(&refused[kind], 1);
        errno = ENOMEM;
    }
    return no;
}

#define CALLER __builtin_extract_return_addr(__builtin_return_address(0))

EXPORT void *mmap(void *addr, size_t length, int prot, int flags, int fd, off_t offset)
{
    if (refuse(OS_CALL_MMAP, CALLER))
        return MAP_FAILED;
    return (void *)syscall(SYS_mmap, addr, length, prot, flags, fd, offset);
}

EXPORT int mprotect(void *addr, size_t length, int prot)
{
    if (refuse(OS_CALL_MPROTECT, CALLER))
        return -1;
    return (int)syscall(SYS_mprotect, addr, length, prot);
}

EXPORT void *mremap(void *old_address, size_t old_size, size_t new_size, int flags, ...)
{
    void *new_address = NULL;
    if (flags & MREMAP_FIXED) {
        va_list ap;
        va_start(ap, flags);
        new_address = va_arg(ap, void *);
        va_end(ap);
    }
    if (refuse(OS_CALL_MREMAP, CALLER))
        return MAP_FAILED;
    return (void *)syscall(SYS_mremap, old_address, old_size, new_size, flags, new_address);
}

EXPORT int madvise(void *addr, size_t length, int advice)
{
    if (refuse(OS_CALL_MADVISE, CALLER))
        return -1;
    return (int)syscall(SYS_madvise, addr, length, advice);
}
