/* The address space a program sees (issue 13, D4).
 *
 * limit: the program lowers RLIMIT_AS at run time to its VmSize plus 1
 * GiB, then allocates small blocks until malloc returns NULL, frees them,
 * and does the same with large blocks. Each time: errno is ENOMEM, what was
 * allocated fits the headroom and fills more than half of it, allocation
 * works again once the blocks are freed, and under corealloc the program's
 * own mmap of a few MiB succeeds then too (glibc keeps its heap's address
 * space). Blocks allocated before the limit keep their contents
 * throughout. (glibc passes; a malloc that reserves its address space up
 * front fails every large allocation, and one that ignores the limit
 * allocates past it.)
 *
 * startup: a program that mallocs once has a modest VmSize: at most
 * STARTUP_EXTRA more than the same program on glibc (the program runs
 * itself again without LD_PRELOAD to learn glibc's figure).
 *
 * startup_limited: started under a limit, even of 64 GiB, it maps no tile
 * of a class it has not used (128 MiB less VmSize than without).
 *
 * tight_limit: started under a limit of a few hundred MiB, a program that
 * allocates blocks of every small size, 96 MiB of large ones and maps
 * 16 MiB of its own runs as it does on glibc.
 *
 * Usage: api_alloc_address_limit limit|startup|startup_limited|tight_limit
 */
#include "check.h"
#include "pattern.h"
#include "probe.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define MIB ((size_t)1 << 20)
#define HEADROOM ((size_t)1 << 30)
/* The fast entries of 2 TiB of zone rows (128 MiB), every class's first
 * tile (156), a front end's slabs (288). */
#define STARTUP_EXTRA (608 * MIB)
#define WITNESSES 64

/* VmSize from /proc/self/status, in bytes (stdio before any limit). */
static size_t vm_size(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    REQUIRE(f);
    char line[256];
    size_t kib = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmSize: %zu kB", &kib) == 1)
            break;
    fclose(f);
    REQUIRE_MSG(kib, "VmSize in /proc/self/status");
    return kib << 10;
}

static void *witness[WITNESSES];
static size_t witness_size(size_t i) { return i % 2 ? 40 + i * 97 : 64 * 1024 + i * 40000; }

static void check_witnesses(const char *when)
{
    for (size_t i = 0; i < WITNESSES; i++)
        CHECK_MSG(pattern_mismatch(witness[i], witness_size(i), i) == PATTERN_OK, "witness %zu changed %s", i,
                  when);
}

/* The program's own mapping of a few MiB, written and given back. */
static void check_own_mmap(const char *when)
{
    size_t size = 8 * MIB;
    char *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK_MSG(m != MAP_FAILED, "the program's mmap of 8 MiB %s: %s", when, strerror(errno));
    if (m != MAP_FAILED) {
        memset(m, 1, size);
        munmap(m, size);
    }
}

/* Allocates blocks of size_of(n) bytes until malloc returns NULL, each
 * linked to the one before through its first word; frees them all. */
static void fill_and_free(const char *what, size_t (*size_of)(size_t))
{
    void *last = NULL;
    size_t total = 0, count = 0;
    for (;;) {
        size_t size = size_of(count);
        errno = 0;
        void **p = malloc(size);
        if (!p) {
            CHECK_MSG(errno == ENOMEM, "%s: malloc(%zu) failed with errno %d, not ENOMEM", what, size, errno);
            break;
        }
        *p = last;
        last = p;
        total += size;
        count++;
        REQUIRE_MSG(total <= 4 * HEADROOM, "%s: %zu MiB allocated under a limit of 1 GiB more", what,
                    total / MIB);
    }
    printf("%s: %zu blocks, %zu MiB allocated with %zu MiB of headroom\n", what, count, total / MIB,
           HEADROOM / MIB);
    CHECK_MSG(total <= HEADROOM, "%s: %zu MiB allocated past the limit", what, total / MIB);
    CHECK_MSG(total > HEADROOM / 2, "%s: only %zu MiB allocated under the limit", what, total / MIB);
    while (last) {
        void *next = *(void **)last;
        free(last);
        last = next;
    }
    if (corealloc_active()) /* glibc keeps its heap's address space */
        check_own_mmap(what);
    void *small = malloc(100), *large = malloc(4 * MIB);
    CHECK_MSG(small && large, "%s: allocation after the blocks were freed", what);
    free(small);
    free(large);
    check_witnesses(what);
}

static size_t small_size(size_t n) { return 16 + (n * 2654435761u) % 4000; }
static size_t large_size(size_t n) { return 40 * 1024 + (n * 2654435761u) % (3 * MIB); }

static int limit(void)
{
    for (size_t i = 0; i < WITNESSES; i++) {
        witness[i] = malloc(witness_size(i));
        REQUIRE(witness[i]);
        pattern_fill(witness[i], witness_size(i), i);
    }
    struct rlimit rl;
    REQUIRE(getrlimit(RLIMIT_AS, &rl) == 0);
    size_t before = vm_size();
    rl.rlim_cur = before + HEADROOM;
    REQUIRE_MSG(rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= rl.rlim_cur, "hard limit %zu",
                (size_t)rl.rlim_max);
    REQUIRE(setrlimit(RLIMIT_AS, &rl) == 0);
    printf("VmSize %zu MiB before the limit\n", before / MIB);
    fill_and_free("small blocks", small_size);
    fill_and_free("large blocks", large_size);
    fill_and_free("small blocks again", small_size);
    return check_status();
}

/* Runs this program again as `self mode`, on glibc or preloaded as now,
 * under an address-space limit (0: none), and returns what it prints
 * (parsed as a number) after requiring that it exits 0. */
static size_t run_self(const char *self, const char *mode, bool on_glibc, size_t limit)
{
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 1);
        if (on_glibc)
            unsetenv("LD_PRELOAD");
        if (limit) {
            struct rlimit rl;
            if (getrlimit(RLIMIT_AS, &rl) != 0)
                _exit(126);
            rl.rlim_cur = limit;
            if (setrlimit(RLIMIT_AS, &rl) != 0)
                _exit(126);
        }
        execl("/proc/self/exe", self, mode, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    char text[64] = {0};
    ssize_t got = read(fds[0], text, sizeof text - 1);
    close(fds[0]);
    int status;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    REQUIRE_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0 && got > 0, "%s %s under a limit of %zu MiB: status %#x",
                self, mode, limit / MIB, status);
    return strtoull(text, NULL, 10);
}

static int startup(const char *self)
{
    size_t ours = vm_size(), glibc = run_self(self, "vmsize", true, 0);
    printf("VmSize after one malloc: %zu MiB; on glibc %zu MiB\n", ours / MIB, glibc / MIB);
    CHECK_MSG(ours <= glibc + STARTUP_EXTRA, "VmSize %zu MiB, glibc's %zu MiB", ours / MIB, glibc / MIB);
    return check_status();
}

/* Under a limit, even a generous one, start-up maps no tile of a class the
 * program has not used: the 156 MiB of first tiles mapped at once without
 * a limit would count against it. */
static int startup_limited(const char *self)
{
    size_t ours = vm_size(), limited = run_self(self, "vmsize", false, (size_t)64 << 30);
    printf("VmSize after one malloc: %zu MiB; under a 64 GiB limit %zu MiB\n", ours / MIB, limited / MIB);
    CHECK_MSG(limited + 128 * MIB <= ours, "VmSize %zu MiB under a limit, %zu MiB without", limited / MIB, ours / MIB);
    return check_status();
}

/* What a small program does under a tight limit: blocks of every small
 * size, 96 MiB of large ones, and a mapping of its own. */
static int tight_work(void)
{
    enum { LARGE = 96 };
    void *small[512], *large[LARGE];
    size_t n = 0;
    for (size_t size = 8; size <= 32 * 1024; size += size < 1024 ? 8 * (size / 64 + 1) : size / 8)
        for (int i = 0; i < 4 && n < sizeof small / sizeof small[0]; i++) {
            small[n] = malloc(size);
            if (!small[n])
                return 1;
            memset(small[n++], 1, size);
        }
    for (int i = 0; i < LARGE; i++) {
        large[i] = malloc(MIB);
        if (!large[i])
            return 2;
        memset(large[i], 1, MIB);
    }
    void *own = mmap(NULL, 16 * MIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (own == MAP_FAILED)
        return 3;
    munmap(own, 16 * MIB);
    for (int i = 0; i < LARGE; i++)
        free(large[i]);
    while (n)
        free(small[--n]);
    return printf("%zu\n", vm_size()) > 0 ? 0 : 4;
}

/* Under `ulimit -v` a few hundred MiB (a Python that ran so on glibc
 * failed at start-up with the zones' 128 MiB of fast entries and a tile
 * per class), corealloc leaves the zones off and the program runs as on
 * glibc. The limit allows for the per-CPU slabs (16 MiB a CPU and 32), but
 * stays below the 1 GiB from which the zones are on (on a machine whose
 * slabs do not fit, the per-thread front end takes over). */
static int tight_limit(const char *self)
{
    long cpus = sysconf(_SC_NPROCESSORS_CONF);
    size_t limit = 300 * MIB + (size_t)(cpus > 0 ? cpus + 2 : 3) * 16 * MIB;
    if (limit > 1023 * MIB)
        limit = 1023 * MIB;
    size_t glibc = run_self(self, "tight_work", true, limit), ours = run_self(self, "tight_work", false, limit);
    printf("under a %zu MiB limit: VmSize %zu MiB at the end, %zu MiB on glibc\n", limit / MIB, ours / MIB, glibc / MIB);
    return check_status();
}

int main(int argc, char **argv)
{
    void *once = malloc(100);
    REQUIRE(once);
    int status = 2;
    if (argc == 2 && !strcmp(argv[1], "limit"))
        status = limit();
    else if (argc == 2 && !strcmp(argv[1], "startup"))
        status = startup(argv[0]);
    else if (argc == 2 && !strcmp(argv[1], "startup_limited"))
        status = startup_limited(argv[0]);
    else if (argc == 2 && !strcmp(argv[1], "tight_limit"))
        status = tight_limit(argv[0]);
    else if (argc == 2 && !strcmp(argv[1], "tight_work"))
        status = tight_work();
    else if (argc == 2 && !strcmp(argv[1], "vmsize"))
        status = printf("%zu\n", vm_size()) > 0 ? 0 : 1;
    else
        fprintf(stderr, "usage: %s limit|startup|startup_limited|tight_limit\n", argv[0]);
    free(once);
    return status;
}
