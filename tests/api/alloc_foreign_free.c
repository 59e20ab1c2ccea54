/* free() of a pointer corealloc did not hand out: a stack address, a
 * global, an interior pointer of a live block (small, large, huge), an
 * mmap'd page; or of a block freed already (small, large, huge: reported
 * as a double free). The library must report it once on stderr
 * ("corealloc: error: ..." with the address as %p), keep running with an
 * intact heap that never hands out the foreign memory, and abort instead
 * when COREALLOC_ABORT_ON_ERROR=1. With realloc_ before MODE, the bad call
 * is realloc to three quarters of the block's size (a small block's resize
 * in place), with realloc0_ realloc to 0 bytes (a free): reported as
 * realloc's, it returns NULL, neither resizing nor copying from the block.
 *
 * Usage: api_alloc_foreign_free [realloc_|realloc0_]MODE report|abort
 * The program re-executes itself as the child that makes the bad call and
 * checks the child's output and exit status.
 */
#include "check.h"
#include "pattern.h"
#include "probe.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define REGION 8192 /* bytes of foreign memory watched for corruption */

static unsigned char global_region[REGION];

/* ---- child: one bad free, then a heap that must still work ---- */

static int overlaps(const void *p, size_t size, const unsigned char *region)
{
    const unsigned char *b = p;
    return b < region + REGION && b + size > region;
}

/* Returns 0 when the heap works and never hands out the foreign region. */
static int stress_after(const unsigned char *region)
{
    enum { LIVE = 256 };
    void *blocks[LIVE] = {0};
    size_t sizes[LIVE] = {0};
    for (uint64_t n = 0; n < 20000; n++) {
        size_t i = n % LIVE;
        if (blocks[i]) {
            if (pattern_mismatch(blocks[i], sizes[i], n - LIVE) != PATTERN_OK)
                return 1;
            free(blocks[i]);
        }
        sizes[i] = 1 + (size_t)((n * 2654435761u) % (n % 16 == 0 ? 300000 : 2000));
        blocks[i] = malloc(sizes[i]);
        if (!blocks[i] || overlaps(blocks[i], sizes[i], region))
            return 1;
        pattern_fill(blocks[i], sizes[i], n);
    }
    for (size_t i = 0; i < LIVE; i++)
        free(blocks[i]);
    return 0;
}

/* The bad call's function, and MODE past its prefix. */
static const char *call_of(const char **mode)
{
    if (strncmp(*mode, "realloc0_", 9) == 0) {
        *mode += 9;
        return "realloc0";
    }
    if (strncmp(*mode, "realloc_", 8) == 0) {
        *mode += 8;
        return "realloc";
    }
    return "free";
}

static int child(const char *mode)
{
    corealloc_active(); /* verifies malloc is corealloc's when preloaded */
    const char *call = call_of(&mode);
    size_t bad_size = 256; /* of the block bad points into, for realloc */
    unsigned char stack_region[REGION];
    unsigned char *live = NULL; /* block whose interior is freed */
    size_t live_size = 0;
    unsigned char *region; /* foreign memory that must stay intact */
    unsigned char *bad;

    if (strcmp(mode, "stack") == 0) {
        region = stack_region;
        bad = region + 64;
    } else if (strcmp(mode, "global") == 0) {
        region = global_region;
        bad = region + 64;
    } else if (strcmp(mode, "mmap") == 0) {
        region = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (region == MAP_FAILED)
            return 2;
        bad = region;
    } else if (strncmp(mode, "double_", 7) == 0) {
        size_t size = strcmp(mode, "double_small") == 0   ? 256
                      : strcmp(mode, "double_large") == 0 ? 200000
                      : strcmp(mode, "double_huge") == 0  ? (size_t)64 << 20
                                                          : 0;
        if (!size)
            return 2;
        bad = malloc(size);
        if (!bad)
            return 2;
        free(bad);
        bad_size = size;
        region = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (region == MAP_FAILED)
            return 2;
    } else {
        live_size = strcmp(mode, "interior_small") == 0   ? 256
                    : strcmp(mode, "interior_large") == 0 ? 200000
                    : strcmp(mode, "interior_huge") == 0  ? (size_t)64 << 20
                                                          : 0;
        if (!live_size)
            return 2;
        live = malloc(live_size);
        if (!live)
            return 2;
        pattern_fill(live, live_size, 99);
        region = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (region == MAP_FAILED)
            return 2;
        bad = live + (live_size > 4096 ? 4096 : 16);
        bad_size = live_size;
    }
    pattern_fill(region, REGION, 7);
    printf("%p\n", (void *)bad);
    fflush(stdout);

    if (strcmp(call, "free") == 0) {
        free(bad);
    } else {
        errno = 0;
        if (realloc(bad, strcmp(call, "realloc") == 0 ? bad_size / 4 * 3 : 0) != NULL)
            return 13; /* obeyed */
        if (strcmp(call, "realloc") == 0 && errno != EINVAL)
            return 14;
    }

    if (pattern_mismatch(region, REGION, 7) != PATTERN_OK)
        return 10; /* the foreign memory was written */
    if (live) {
        if (pattern_mismatch(live, live_size, 99) != PATTERN_OK)
            return 11; /* the live block was damaged */
        free(live);
    }
    return stress_after(region) ? 12 : 0;
}

/* ---- parent: run the child and judge its output ---- */

static size_t read_all(int fd, char *buf, size_t size)
{
    size_t n = 0;
    ssize_t r;
    while (n < size - 1 && (r = read(fd, buf + n, size - 1 - n)) > 0)
        n += (size_t)r;
    buf[n] = '\0';
    return n;
}

static int parent(const char *self, const char *mode, int abort_mode)
{
    int out[2], err[2];
    REQUIRE(pipe(out) == 0 && pipe(err) == 0);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        dup2(out[1], 1);
        dup2(err[1], 2);
        close(out[0]);
        close(err[0]);
        if (abort_mode)
            setenv("COREALLOC_ABORT_ON_ERROR", "1", 1);
        else
            unsetenv("COREALLOC_ABORT_ON_ERROR");
        execl(self, self, mode, "child", (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    close(err[1]);
    static char address[256], errors[1 << 16];
    read_all(out[0], address, sizeof address);
    size_t errlen = read_all(err[0], errors, sizeof errors);
    int status;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    char *nl = strchr(address, '\n');
    REQUIRE(nl != NULL);
    *nl = '\0';

    printf("child stderr: %s", errors);
    if (abort_mode) {
        CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
    } else {
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            dprintf(2, "child status %#x (exit %d, signal %d)\n", status,
                    WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                    WIFSIGNALED(status) ? WTERMSIG(status) : 0);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        /* exactly one line */
        CHECK(errlen > 0 && errors[errlen - 1] == '\n' && strchr(errors, '\n') == errors + errlen - 1);
    }
    CHECK(strncmp(errors, "corealloc: error:", 17) == 0);
    char *first_end = strchr(errors, '\n');
    if (first_end)
        *first_end = '\0';
    if (!strstr(errors, address))
        dprintf(2, "address %s not in the report\n", address);
    CHECK(strstr(errors, address) != NULL);
    const char *call = call_of(&mode);
    char reported[32];
    snprintf(reported, sizeof reported, ": %s(): ", strcmp(call, "free") == 0 ? "free" : "realloc");
    CHECK_MSG(strstr(errors, reported) != NULL, "not reported as %s's: %s", call, errors);
    if (strncmp(mode, "double_", 7) == 0)
        CHECK_MSG(strstr(errors, "double free") != NULL, "a double free reported as: %s", errors);
    return check_status();
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[2], "child") == 0)
        return child(argv[1]);
    if (argc != 3 || (strcmp(argv[2], "report") != 0 && strcmp(argv[2], "abort") != 0)) {
        fprintf(stderr, "usage: %s [realloc_|realloc0_]stack|global|mmap|interior_small|interior_large|"
                        "interior_huge|double_small|double_large|double_huge report|abort\n", argv[0]);
        return 2;
    }
    return parent("/proc/self/exe", argv[1], strcmp(argv[2], "abort") == 0);
}
