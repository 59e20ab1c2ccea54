/* Linux implementation of the platform layer. */
#include "platform/os.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "platform/ascii.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif

static bool huge_pages_default;
static bool advise_new_mappings = true; /* whether the default needs saying (os_set_huge_pages_default) */
static bool address_space_short;

void os_advise_huge_pages(void *addr, size_t size, bool allow)
{
    int saved = errno;
    madvise(addr, size, allow ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    errno = saved;
}

/* Whether the system puts huge pages under mappings not advised either way
 * ("always", or unknown). */
static bool huge_pages_unadvised(void)
{
    char mode[64];
    os_read_small_file("/sys/kernel/mm/transparent_hugepage/enabled", mode, sizeof mode);
    return !strstr(mode, "[madvise]") && !strstr(mode, "[never]");
}

/* Huge pages come to a mapping only when advised for, unless the system is
 * set to "always": then only is the advice against them needed, and without
 * it a mapping costs one system call, not two. (A system switched to
 * "always" later gives the mappings made from then on huge pages.) */
void os_set_huge_pages_default(bool allow)
{
    huge_pages_default = allow;
    advise_new_mappings = allow || huge_pages_unadvised();
}

/* Anonymous private memory with the given protection and the default huge
 * page advice; with a non-zero hint exactly there or not at all. */
static void *map_anonymous(size_t size, uintptr_t hint, int prot)
{
    int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | (hint ? MAP_FIXED_NOREPLACE : 0);
    int saved = errno;
    void *p = mmap((void *)hint, size, prot, flags, -1, 0);
    if (p == MAP_FAILED && errno == ENOMEM && !address_space_short && os_address_space_limit() != SIZE_MAX)
        __atomic_store_n(&address_space_short, true, __ATOMIC_RELAXED);
    errno = saved;
    if (p == MAP_FAILED)
        return NULL;
    if (hint && (uintptr_t)p != hint) { /* kernels before 4.17 treat it as a hint */
        munmap(p, size);
        return NULL;
    }
    /* With the system set to "always", a sparse superblock would otherwise
     * cost a 2 MiB page. */
    if (advise_new_mappings)
        os_advise_huge_pages(p, size, huge_pages_default);
    return p;
}

/* As map_anonymous, aligned to `align`: over-map, then trim both ends. */
static void *map_anonymous_aligned(size_t size, size_t align, int prot)
{
    if (align <= OS_PAGE_SIZE)
        return map_anonymous(size, 0, prot);
    if (size + align < size)
        return NULL;
    char *raw = map_anonymous(size + align, 0, prot);
    if (!raw)
        return NULL;
    uintptr_t start = ((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1);
    size_t head = start - (uintptr_t)raw, tail = align - head;
    if (head)
        munmap(raw, head);
    if (tail)
        munmap((char *)start + size, tail);
    return (void *)start;
}

bool os_address_space_short(void) { return __atomic_load_n(&address_space_short, __ATOMIC_RELAXED); }

size_t os_address_space_limit(void)
{
    struct rlimit limit;
    int saved = errno;
    bool limited = getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < SIZE_MAX;
    errno = saved;
    return limited ? (size_t)limit.rlim_cur : SIZE_MAX;
}

void *os_map(size_t size, uintptr_t hint) { return map_anonymous(size, hint, PROT_READ | PROT_WRITE); }
void *os_map_aligned(size_t size, size_t align)
{
    return map_anonymous_aligned(size, align, PROT_READ | PROT_WRITE);
}
/* Not in core dumps until committed: a reservation is terabytes of zeros. */
static void *undumped(void *p, size_t size)
{
    if (p) {
        int saved = errno;
        madvise(p, size, MADV_DONTDUMP);
        errno = saved;
    }
    return p;
}

void *os_reserve(size_t size, uintptr_t hint) { return undumped(map_anonymous(size, hint, PROT_READ), size); }
void *os_reserve_aligned(size_t size, size_t align)
{
    return undumped(map_anonymous_aligned(size, align, PROT_READ), size);
}

bool os_commit(void *addr, size_t size)
{
    int saved = errno;
    int rc = mprotect(addr, size, PROT_READ | PROT_WRITE);
    if (rc == 0)
        madvise(addr, size, MADV_DODUMP);
    errno = saved;
    return rc == 0;
}

bool os_guard(void *addr, size_t size)
{
    int saved = errno;
    bool ok = mprotect(addr, size, PROT_NONE) == 0;
    errno = saved;
    return ok;
}

void os_unmap(void *addr, size_t size)
{
    int saved = errno;
    munmap(addr, size);
    errno = saved;
}

bool os_purge(void *addr, size_t size, enum os_purge_kind kind)
{
    int saved = errno;
    if (kind == OS_PURGE_UNMAP) {
        bool ok = munmap(addr, size) == 0;
        errno = saved;
        return ok;
    }
    int advice = kind == OS_PURGE_FREE ? MADV_FREE : MADV_DONTNEED;
    int rc = madvise(addr, size, advice);
    if (rc != 0 && kind == OS_PURGE_FREE)
        rc = madvise(addr, size, MADV_DONTNEED);
    errno = saved;
    return rc == 0;
}

bool os_move_pages(void *from, void *to, size_t size)
{
    int saved = errno;
    void *p = mremap(from, size, size, MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP, to);
    errno = saved;
    return p == to;
}

bool os_under_valgrind(void)
{
    /* valgrind preloads its own core into every client it runs. */
    const char *preload = getenv("LD_PRELOAD");
    return preload && strstr(preload, "/vgpreload_core");
}

size_t os_page_size(void)
{
    long v = sysconf(_SC_PAGESIZE);
    return v > 0 ? (size_t)v : OS_PAGE_SIZE;
}

/* Possible CPUs ("0-63" or "0,2-5"): the highest listed id plus one. Parsed
 * by hand: glibc's get_nprocs_conf may allocate, and we run inside malloc. */
unsigned os_cpu_count(void)
{
    char buf[256];
    unsigned highest = 0;
    if (!os_read_small_file("/sys/devices/system/cpu/possible", buf, sizeof buf))
        return 1;
    for (const char *p = buf; *p;) {
        uint64_t v;
        if (!ascii_decimal(&p, &v))
            p++;
        else if (v > highest && v < UINT_MAX)
            highest = (unsigned)v;
    }
    return highest + 1;
}

size_t os_read_small_file(const char *path, char *buf, size_t size)
{
    int saved = errno;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    size_t got = 0;
    if (fd >= 0) {
        while (got + 1 < size) {
            ssize_t n = read(fd, buf + got, size - 1 - got);
            if (n <= 0)
                break;
            got += (size_t)n;
        }
        close(fd);
    }
    buf[got] = '\0';
    errno = saved;
    return got;
}

size_t os_rss_current(void)
{
    char buf[128];
    if (!os_read_small_file("/proc/self/statm", buf, sizeof buf))
        return 0;
    const char *p = buf;
    uint64_t size, resident;
    if (!ascii_decimal(&p, &size) || *p++ != ' ' || !ascii_decimal(&p, &resident))
        return 0;
    return (size_t)resident * os_page_size();
}

size_t os_rss_peak(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return 0;
    return (size_t)ru.ru_maxrss * 1024;
}

uint64_t os_monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t os_random_seed(void)
{
    uint64_t seed;
    int saved = errno;
    ssize_t got = getrandom(&seed, sizeof seed, GRND_NONBLOCK);
    errno = saved;
    if (got == (ssize_t)sizeof seed)
        return seed;
    return os_monotonic_ns() ^ (uintptr_t)&seed ^ ((uint64_t)(uintptr_t)os_random_seed << 17);
}

void os_sleep_ns(uint64_t ns)
{
    struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000u), .tv_nsec = (long)(ns % 1000000000u)};
    int saved = errno;
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
    errno = saved;
}

void os_futex_wait(uint32_t *word, uint32_t expected)
{
    int saved = errno;
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
    errno = saved;
}

void os_futex_wake(uint32_t *word, int count)
{
    int saved = errno;
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, count, NULL, NULL, 0);
    errno = saved;
}

unsigned long os_process_id(void) { return (unsigned long)getpid(); }

int os_write_all(int fd, const char *buf, size_t len)
{
    int saved = errno, failure = 0;
    while (len) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            failure = n < 0 ? errno : EIO;
            break;
        }
        buf += n;
        len -= (size_t)n;
    }
    errno = saved;
    return failure;
}

void os_abort(void)
{
    abort();
}

int os_copy_file(const char *path, int fd)
{
    int saved = errno;
    int in = open(path, O_RDONLY | O_CLOEXEC);
    int failure = in < 0 ? errno : 0;
    char buf[4096];
    while (!failure) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n < 0)
            failure = errno;
        if (n <= 0)
            break;
        failure = os_write_all(fd, buf, (size_t)n);
    }
    if (in >= 0)
        close(in);
    errno = saved;
    return failure;
}

static uintptr_t parse_hex(const char **text)
{
    uintptr_t v = 0;
    for (;; (*text)++) {
        char c = **text;
        unsigned digit = c >= '0' && c <= '9' ? (unsigned)(c - '0')
                       : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10) : 16;
        if (digit == 16)
            return v;
        v = v << 4 | digit;
    }
}

bool os_mapping_of(uintptr_t addr, uintptr_t *start, uintptr_t *end)
{
    int saved = errno;
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    bool found = false;
    /* Lines are read whole: a line starts at the buffer's start, and what
     * is left of a cut line moves there before the next read. */
    char buf[4096];
    size_t have = 0;
    while (fd >= 0 && !found) {
        ssize_t n = read(fd, buf + have, sizeof buf - 1 - have);
        if (n <= 0)
            break;
        have += (size_t)n;
        buf[have] = '\0';
        char *line = buf;
        for (char *nl; !found && (nl = strchr(line, '\n')); line = nl + 1) {
            const char *p = line;
            uintptr_t lo = parse_hex(&p);
            p++; /* '-' */
            uintptr_t hi = parse_hex(&p);
            if (addr >= lo && addr < hi) {
                *start = lo;
                *end = hi;
                found = true;
            }
        }
        have -= (size_t)(line - buf);
        memmove(buf, line, have);
        if (have == sizeof buf - 1)
            have = 0; /* no line is this long: drop it */
    }
    if (fd >= 0)
        close(fd);
    errno = saved;
    return found;
}

int os_create_file(const char *path)
{
    int saved = errno;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    errno = saved;
    return fd;
}

void os_close(int fd)
{
    int saved = errno;
    close(fd);
    errno = saved;
}
