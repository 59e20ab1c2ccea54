/* glibc's introspection interface: mallinfo2, mallinfo, malloc_stats,
 * malloc_info, malloc_trim and mallopt. */
#include "check.h"
#include "probe.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#pragma GCC diagnostic ignored "-Wdeprecated-declarations" /* mallinfo */

/* uordblks (bytes in use) follows allocations and frees. */
static void test_mallinfo2(void)
{
    enum { N = 200, SIZE = 10000 };
    void *blocks[N];
    struct mallinfo2 before = mallinfo2();
    for (int i = 0; i < N; i++) {
        blocks[i] = malloc(SIZE);
        REQUIRE(blocks[i] != NULL);
        memset(blocks[i], 1, SIZE);
    }
    struct mallinfo2 during = mallinfo2();
    size_t allocated = (size_t)N * SIZE;
    CHECK(during.uordblks >= before.uordblks + allocated);
    CHECK(during.uordblks <= before.uordblks + allocated + allocated / 4 + (1 << 20));
    CHECK(during.arena + during.hblkhd >= during.uordblks);
    for (int i = 0; i < N; i++)
        free(blocks[i]);
    struct mallinfo2 after = mallinfo2();
    CHECK(after.uordblks + allocated <= during.uordblks + (1 << 20));

    void *huge = malloc(64 << 20);
    REQUIRE(huge != NULL);
    struct mallinfo2 with_huge = mallinfo2();
    /* glibc counts mapped blocks in hblkhd only; either convention is fine */
    CHECK(with_huge.uordblks + with_huge.hblkhd >= after.uordblks + (64 << 20));
    CHECK(with_huge.arena + with_huge.hblkhd >= with_huge.uordblks);
    free(huge);

    struct mallinfo legacy = mallinfo();
    CHECK(legacy.uordblks > 0);
}

/* Runs fn with stderr (fd 2) redirected to a temporary file; returns the
 * text written, in buf. */
static size_t capture_stderr(void (*fn)(void), char *buf, size_t size)
{
    FILE *tmp = tmpfile();
    REQUIRE(tmp != NULL);
    int saved = dup(2);
    REQUIRE(saved >= 0);
    REQUIRE(dup2(fileno(tmp), 2) == 2);
    fn();
    REQUIRE(dup2(saved, 2) == 2);
    close(saved);
    rewind(tmp);
    size_t n = fread(buf, 1, size - 1, tmp);
    buf[n] = '\0';
    fclose(tmp);
    return n;
}

static void run_malloc_stats(void)
{
    malloc_stats();
}

static void test_malloc_stats(void)
{
    static char text[1 << 16];
    CHECK(capture_stderr(run_malloc_stats, text, sizeof text) > 0);
}

static void test_malloc_info(void)
{
    FILE *tmp = tmpfile();
    REQUIRE(tmp != NULL);
    CHECK_EQ(malloc_info(0, tmp), 0);
    long len = ftell(tmp);
    CHECK(len > 0);
    static char xml[1 << 20];
    rewind(tmp);
    size_t n = fread(xml, 1, sizeof xml - 1, tmp);
    xml[n] = '\0';
    fclose(tmp);
    CHECK_EQ(n, (size_t)len);
    CHECK(strncmp(xml, "<malloc", 7) == 0);
    /* well-formed: ends with the matching close tag of the root element */
    const char *end = xml + n;
    while (end > xml && (end[-1] == '\n' || end[-1] == ' '))
        end--;
    CHECK(end - xml > 9 && strncmp(end - 9, "</malloc>", 9) == 0);
    FILE *devnull = fopen("/dev/null", "w");
    REQUIRE(devnull != NULL);
    CHECK(malloc_info(1, devnull) != 0); /* options must be 0 */
    fclose(devnull);
}

static void test_malloc_trim(void)
{
    enum { N = 512 };
    void *blocks[N];
    for (int i = 0; i < N; i++) {
        blocks[i] = malloc(64 << 10);
        REQUIRE(blocks[i] != NULL);
        memset(blocks[i], 7, 64 << 10);
    }
    for (int i = 0; i < N; i += 2)
        free(blocks[i]);
    int r = malloc_trim(0);
    CHECK(r == 0 || r == 1);
    for (int i = 1; i < N; i += 2) {
        const unsigned char *p = blocks[i];
        CHECK_EQ(p[0], 7);
        CHECK_EQ(p[(64 << 10) - 1], 7);
        free(blocks[i]);
    }
    r = malloc_trim(0);
    CHECK(r == 0 || r == 1);
    /* the heap works after trimming */
    for (int i = 0; i < N; i++) {
        blocks[i] = calloc(1, (size_t)(i + 1) * 100);
        REQUIRE(blocks[i] != NULL);
        CHECK_EQ(((unsigned char *)blocks[i])[i * 100], 0);
    }
    for (int i = 0; i < N; i++)
        free(blocks[i]);
}

static void test_mallopt(void)
{
    CHECK_EQ(mallopt(M_TRIM_THRESHOLD, 1 << 20), 1);
    CHECK_EQ(mallopt(M_MMAP_THRESHOLD, 1 << 20), 1);
    CHECK_EQ(mallopt(12345, 1), 0);
    /* glibc's other parameters are accepted as glibc accepts them, so a
     * program that checks the result goes on (issue 13). */
    static const int accepted[] = {M_TOP_PAD, M_MMAP_MAX, M_CHECK_ACTION, M_PERTURB, M_ARENA_TEST, M_ARENA_MAX};
    for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++)
        CHECK_MSG(mallopt(accepted[i], 2) == 1, "mallopt(%d, 2)", accepted[i]);
    CHECK_EQ(mallopt(M_MXFAST, 64), 1);
    CHECK_EQ(mallopt(M_MXFAST, 1000), 0);
    void *p = malloc(2 << 20);
    REQUIRE(p != NULL);
    free(p);
}

int main(void)
{
    test_mallinfo2();
    test_malloc_stats();
    test_malloc_info();
    test_malloc_trim();
    test_mallopt();
    return check_status();
}
