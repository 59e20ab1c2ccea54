/* The OS layer (src/platform/os.c): mappings placed and aligned as asked,
 * reservations inaccessible until committed, purged pages reading zero and
 * no longer resident, pages moved without copying; small files read and
 * terminated, writes completed or failed with their errno, errno kept
 * intact throughout; the machine's facts (page size, CPUs, RSS, clock). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check.h"
#include "memory.h"
#include "pattern.h"
#include "platform/os.h"

#define KIB ((size_t)1 << 10)
#define ERRNO_MARK 4242 /* no call may change errno */

static bool under_emulator;

/* Whether the process may read p: write(2) from an inaccessible address
 * fails with EFAULT instead of faulting the caller. Keeps errno. */
static bool readable(const void *p)
{
    static int pipe_fds[2] = {-1, -1};
    int saved = errno;
    if (pipe_fds[0] < 0)
        REQUIRE(pipe(pipe_fds) == 0);
    bool ok = write(pipe_fds[1], p, 1) == 1;
    char byte;
    REQUIRE(ok ? read(pipe_fds[0], &byte, 1) == 1 : errno == EFAULT);
    errno = saved;
    return ok;
}

/* Whether the kernel would let us store at p (a read from a pipe into it
 * fails with EFAULT otherwise). */
static bool writable(void *p)
{
    static int pipe_fds[2] = {-1, -1};
    int saved = errno;
    if (pipe_fds[0] < 0)
        REQUIRE(pipe(pipe_fds) == 0);
    unsigned char byte = *(volatile unsigned char *)p;
    REQUIRE(write(pipe_fds[1], &byte, 1) == 1);
    bool ok = read(pipe_fds[0], p, 1) == 1;
    if (!ok) {
        REQUIRE(errno == EFAULT);
        REQUIRE(read(pipe_fds[0], &byte, 1) == 1); /* drain */
    }
    errno = saved;
    return ok;
}

/* Pages of [p, p + size) the kernel has resident. */
static size_t resident_pages(void *p, size_t size)
{
    size_t pages = size / os_page_size();
    unsigned char vec[pages];
    REQUIRE(mincore(p, size, vec) == 0);
    size_t resident = 0;
    for (size_t i = 0; i < pages; i++)
        resident += vec[i] & 1;
    return resident;
}

static void test_map(void)
{
    errno = ERRNO_MARK;
    unsigned char *p = os_map(MIB, 0);
    REQUIRE(p != NULL);
    CHECK_EQ((uintptr_t)p % OS_PAGE_SIZE, 0);
    CHECK(block_filled_with(p, MIB, 0));
    memset(p, 0x5a, MIB);
    CHECK(block_filled_with(p, MIB, 0x5a));
    /* With a hint: exactly there when free, NULL when taken. */
    uintptr_t hint = (uintptr_t)p;
    os_unmap(p, MIB);
    CHECK(!readable(p));
    unsigned char *again = os_map(MIB, hint);
    CHECK_MSG((uintptr_t)again == hint, "os_map at a free %#lx gave %p", (unsigned long)hint,
              (void *)again);
    CHECK(os_map(MIB, hint) == NULL);
    if (again)
        os_unmap(again, MIB);
    for (size_t align = 64 * KIB; align <= 4 * MIB; align <<= 3) {
        unsigned char *a = os_map_aligned(3 * align / 2, align);
        REQUIRE_MSG(a != NULL, "os_map_aligned(%zu)", align);
        CHECK_MSG((uintptr_t)a % align == 0, "%p not aligned to %zu", (void *)a, align);
        memset(a, 1, 3 * align / 2);
        os_unmap(a, 3 * align / 2);
    }
    CHECK_EQ(errno, ERRNO_MARK);
}

static void test_reserve_and_commit(void)
{
    errno = ERRNO_MARK;
    unsigned char *r = os_reserve_aligned(4 * MIB, 2 * MIB);
    REQUIRE(r != NULL);
    CHECK_EQ((uintptr_t)r % (2 * MIB), 0);
    /* Reserved: no resident page, reads as zeros, takes no store. */
    CHECK_EQ(resident_pages(r, 4 * MIB), 0);
    CHECK(readable(r) && readable(r + 4 * MIB - 1));
    CHECK(block_filled_with(r, 4 * MIB, 0));
    CHECK(!writable(r) && !writable(r + 4 * MIB - 1));
    CHECK(os_commit(r + MIB, 64 * KIB));
    CHECK(writable(r + MIB));
    CHECK(block_filled_with(r + MIB, 64 * KIB, 0));
    memset(r + MIB, 7, 64 * KIB);
    CHECK(!writable(r + MIB - 1));          /* just before the committed range */
    CHECK(!writable(r + MIB + 64 * KIB)); /* just after it */
    os_unmap(r, 4 * MIB);
    unsigned char *plain = os_reserve(MIB, 0);
    REQUIRE(plain != NULL);
    CHECK(readable(plain) && !writable(plain));
    os_unmap(plain, MIB);
    CHECK_EQ(errno, ERRNO_MARK);
}

static void test_purge(void)
{
    size_t size = MIB;
    unsigned char *p = os_map(size, 0);
    REQUIRE(p != NULL);
    memset(p, 0xab, size);
    CHECK_EQ(resident_pages(p, size), size / os_page_size());
    errno = ERRNO_MARK;
    CHECK(os_purge(p, size / 2, OS_PURGE_DONTNEED));
    CHECK_EQ(errno, ERRNO_MARK);
    CHECK_EQ(resident_pages(p, size / 2), 0);
    CHECK(block_filled_with(p, size / 2, 0));
    CHECK(block_filled_with(p + size / 2, size / 2, 0xab)); /* the rest untouched */
    /* Lazily freed pages keep their contents until the kernel takes them,
     * then read as zero; either way a page is whole, and writable again. */
    CHECK(os_purge(p + size / 2, size / 2, OS_PURGE_FREE));
    for (size_t page = size / 2; page < size; page += os_page_size())
        CHECK_MSG(block_filled_with(p + page, os_page_size(), 0xab) ||
                      block_filled_with(p + page, os_page_size(), 0),
                  "page at offset %zu after MADV_FREE", page);
    memset(p + size / 2, 1, size / 2);
    CHECK(block_filled_with(p + size / 2, size / 2, 1));
    os_unmap(p, size);
}

static void test_move_pages(void)
{
    size_t size = 256 * KIB;
    unsigned char *area = os_map(2 * size, 0);
    REQUIRE(area != NULL);
    unsigned char *from = area, *to = area + size;
    for (size_t i = 0; i < size; i++)
        from[i] = (unsigned char)(i * 7 + 1);
    errno = ERRNO_MARK;
    bool moved = os_move_pages(from, to, size);
    CHECK_EQ(errno, ERRNO_MARK);
    if (!moved && under_emulator) {
        puts("the emulator refuses mremap(MREMAP_DONTUNMAP): moves not checked");
        os_unmap(area, 2 * size);
        return;
    }
    CHECK(moved);
    bool same = true;
    for (size_t i = 0; i < size; i++)
        same &= to[i] == (unsigned char)(i * 7 + 1);
    CHECK_MSG(same, "the moved pages lost their contents");
    CHECK_MSG(block_filled_with(from, size, 0), "the source of a move must read as zero");
    os_unmap(area, 2 * size);
}

/* A file in /tmp holding text; returns its path (static). */
static const char *temp_file(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/corealloc-os-test-XXXXXX");
    int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    REQUIRE(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
    close(fd);
    return path;
}

static void test_read_small_file(void)
{
    const char *path = temp_file("0-3,8\nsecond line\n");
    char buf[64];
    errno = ERRNO_MARK;
    CHECK_EQ(os_read_small_file(path, buf, sizeof buf), 18);
    CHECK(!strcmp(buf, "0-3,8\nsecond line\n"));
    char small[5];
    CHECK_EQ(os_read_small_file(path, small, sizeof small), 4); /* size - 1, terminated */
    CHECK(!strcmp(small, "0-3,"));
    unlink(path);
    memset(buf, 'x', sizeof buf);
    CHECK_EQ(os_read_small_file(path, buf, sizeof buf), 0);
    CHECK_EQ(buf[0], '\0');
    CHECK_EQ(errno, ERRNO_MARK);
    CHECK(os_read_small_file("/proc/self/statm", buf, sizeof buf) > 0);
}

static void test_write_all(void)
{
    /* More than a pipe holds at once and more than one write may take. */
    size_t size = 3 * MIB + 5;
    unsigned char *data = os_map(size, 0);
    REQUIRE(data != NULL);
    for (size_t i = 0; i < size; i++)
        data[i] = (unsigned char)(i % 251);
    const char *path = temp_file("");
    errno = ERRNO_MARK;
    int fd = os_create_file(path);
    REQUIRE(fd >= 0);
    CHECK_EQ(os_write_all(fd, (const char *)data, size), 0);
    os_close(fd);
    unsigned char *back = os_map(size, 0);
    REQUIRE(back != NULL);
    fd = open(path, O_RDONLY);
    REQUIRE(fd >= 0);
    size_t got = 0;
    for (ssize_t n; got < size && (n = read(fd, back + got, size - got)) > 0;)
        got += (size_t)n;
    close(fd);
    CHECK_EQ(got, size);
    CHECK(memcmp(data, back, size) == 0);
    /* Created again: truncated. */
    fd = os_create_file(path);
    REQUIRE(fd >= 0);
    CHECK_EQ(os_write_all(fd, "x", 1), 0);
    os_close(fd);
    char text[8];
    CHECK_EQ(os_read_small_file(path, text, sizeof text), 1);
    unlink(path);
    /* Failures come back as errno values; errno itself is left alone. */
    errno = ERRNO_MARK;
    CHECK_EQ(os_write_all(-1, "x", 1), EBADF);
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    close(fds[0]);
    signal(SIGPIPE, SIG_IGN);
    CHECK_EQ(os_write_all(fds[1], "x", 1), EPIPE);
    close(fds[1]);
    CHECK_EQ(os_create_file("/nonexistent/corealloc/report"), -1);
    CHECK_EQ(errno, ERRNO_MARK);
    os_unmap(data, size);
    os_unmap(back, size);
}

static void test_machine(void)
{
    CHECK_EQ(os_page_size(), (size_t)sysconf(_SC_PAGESIZE));
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    CHECK_MSG(os_cpu_count() >= 1 && os_cpu_count() >= (unsigned)online,
              "os_cpu_count %u, %ld CPUs online", os_cpu_count(), online);
    /* Touching 16 MiB raises the resident set by most of it. */
    size_t before = os_rss_current(), size = 16 * MIB;
    unsigned char *p = os_map(size, 0);
    REQUIRE(p != NULL);
    memset(p, 1, size);
    size_t touched = os_rss_current();
    CHECK_MSG(touched >= before + size / 2, "RSS %zu KiB -> %zu KiB after touching %zu KiB",
              before / KIB, touched / KIB, size / KIB);
    /* The kernel's RSS counters are approximate per CPU (batches of
     * pages per CPU, more on a busy machine): slack, but far less than a
     * wrong unit would be off by. */
    CHECK_MSG(os_rss_peak() + size / 4 >= touched, "peak RSS %zu KiB below the current %zu KiB",
              os_rss_peak() / KIB, touched / KIB);
    os_unmap(p, size);
    uint64_t t0 = os_monotonic_ns();
    os_sleep_ns(2000000);
    uint64_t slept = os_monotonic_ns() - t0;
    CHECK_MSG(slept >= 2000000, "os_sleep_ns(2 ms) returned after %llu ns", (unsigned long long)slept);
}

static void test_valgrind_detection(void)
{
    const char *preload = getenv("LD_PRELOAD");
    CHECK(!os_under_valgrind() || (preload && strstr(preload, "vgpreload_core")));
    setenv("LD_PRELOAD", "/usr/libexec/valgrind/vgpreload_core-amd64-linux.so", 1);
    CHECK(os_under_valgrind());
    setenv("LD_PRELOAD", "/usr/lib/libcorealloc.so", 1);
    CHECK(!os_under_valgrind());
    if (preload)
        setenv("LD_PRELOAD", preload, 1);
    else
        unsetenv("LD_PRELOAD");
}

static void test_huge_page_advice(void)
{
    if (under_emulator || access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) != 0) {
        puts("no transparent huge pages to advise here: advice not checked");
        return;
    }
    size_t size = 4 * MIB;
    os_set_huge_pages_default(true);
    void *hg = os_map(size, 0);
    os_set_huge_pages_default(false);
    void *nh = os_map(size, 0);
    REQUIRE(hg && nh);
    CHECK_MSG(!strcmp(huge_page_flag(hg), "hg"), "default on: %s", huge_page_flag(hg));
    CHECK_MSG(!strcmp(huge_page_flag(nh), unadvised_huge_page_flag()), "default off: %s", huge_page_flag(nh));
    os_advise_huge_pages(nh, size, true);
    CHECK_MSG(!strcmp(huge_page_flag(nh), "hg"), "advised on: %s", huge_page_flag(nh));
    os_unmap(hg, size);
    os_unmap(nh, size);
}

int main(void)
{
    under_emulator = getenv("UNIT_UNDER_EMULATOR") != NULL;
    test_map();
    test_reserve_and_commit();
    test_purge();
    test_move_pages();
    test_read_small_file();
    test_write_all();
    test_machine();
    test_valgrind_detection();
    test_huge_page_advice();
    return check_status();
}
