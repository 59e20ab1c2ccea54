/* The options (src/platform/options.c), read by options_init from the
 * environment: the table's defaults; sizes with K/M/G (and B/iB) suffixes,
 * milliseconds, booleans, choices and strings; a value that does not parse
 * is reported and the default kept; misspelt COREALLOC_ names are reported
 * with the option they most likely meant; COREALLOC_OPTIONS sets options
 * from NAME=VALUE pairs, never over an option's own variable, and prints
 * them all on "help". */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "check.h"
#include "platform/options.h"

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)
#define GIB ((size_t)1 << 30)

extern char **environ;

/* Clears every COREALLOC_ variable, so each case starts from the defaults. */
static void clear_environment(void)
{
    for (;;) {
        char **env = environ;
        while (*env && strncmp(*env, "COREALLOC_", 10) != 0)
            env++;
        if (!*env)
            return;
        char name[128];
        size_t len = strcspn(*env, "=");
        REQUIRE(len < sizeof name);
        memcpy(name, *env, len);
        name[len] = '\0';
        unsetenv(name);
    }
}

/* options_init with the environment cleared and then set to name=value
 * pairs (a NULL-terminated list); returns what it wrote to stderr. */
static const char *init_with(const char *name, ...)
{
    clear_environment();
    va_list ap;
    va_start(ap, name);
    for (const char *n = name; n; n = va_arg(ap, const char *))
        setenv(n, va_arg(ap, const char *), 1);
    va_end(ap);
    capture_stderr_begin();
    options_init();
    return capture_stderr_end();
}

static void test_defaults(void)
{
    const char *said = init_with(NULL);
    CHECK_MSG(!*said, "defaults: said %s", said);
    CHECK_EQ(opt.stats, STATS_OFF);
    CHECK(opt.stats_file == NULL);
    CHECK(!opt.abort_on_error);
    CHECK(opt.zones);
    CHECK_EQ(opt.frontend, FRONTEND_AUTO);
    CHECK_EQ(opt.retain_bytes, 32 * MIB);
    CHECK_EQ(opt.purge, PURGE_DONTNEED);
    CHECK_EQ(opt.huge_threshold, 16 * MIB);
    CHECK_EQ(opt.purge_delay_ms, 1000);
    CHECK_EQ(opt.limit_bytes, 0);
    CHECK(!opt.cgroup_limit);
    CHECK_EQ(opt.thp, THP_NEVER);
    CHECK(!opt.tight);
    CHECK_EQ(opt.thread_caches_bytes, 64 * MIB);
    CHECK_EQ(opt.cpu_cache_bytes, 8 * MIB);
}

static void test_sizes(void)
{
    static const struct {
        const char *text;
        size_t bytes;
    } good[] = {
        {"4096", 4096}, {"64K", 64 * KIB}, {"64k", 64 * KIB}, {"3m", 3 * MIB}, {"2G", 2 * GIB},
        {"5MiB", 5 * MIB}, {"5MB", 5 * MIB}, {"7B", 7}, {"0", 0},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        const char *said = init_with("COREALLOC_RETAIN_BYTES", good[i].text, NULL);
        CHECK_MSG(opt.retain_bytes == good[i].bytes && !*said, "RETAIN_BYTES=%s: %zu, said %s",
                  good[i].text, opt.retain_bytes, said);
    }
    static const char *const bad[] = {"12X", "-5", "", "abc", "1KB2", "99999999999G", "4 K",
                                       "99999999999999999999", "+5"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *said = init_with("COREALLOC_RETAIN_BYTES", bad[i], NULL);
        char want[64];
        snprintf(want, sizeof want, "ignoring COREALLOC_RETAIN_BYTES=%s;", bad[i]);
        CHECK_MSG(opt.retain_bytes == 32 * MIB, "RETAIN_BYTES=%s changed the default to %zu", bad[i],
                  opt.retain_bytes);
        CHECK_MSG(strstr(said, want), "RETAIN_BYTES=%s: said %s", bad[i], said);
    }
}

static void test_other_kinds(void)
{
    init_with("COREALLOC_PURGE_DELAY_MS", "-1", "COREALLOC_TIGHT", "yes", "COREALLOC_ZONES", "off",
              "COREALLOC_FRONTEND", "THREAD", "COREALLOC_STATS", "json", "COREALLOC_STATS_FILE",
              "/tmp/report.json", NULL);
    CHECK_EQ(opt.purge_delay_ms, -1);
    CHECK(opt.tight);
    CHECK(!opt.zones);
    CHECK_EQ(opt.frontend, FRONTEND_THREAD);
    CHECK_EQ(opt.stats, STATS_JSON);
    CHECK(opt.stats_file && !strcmp(opt.stats_file, "/tmp/report.json"));
    const char *said = init_with("COREALLOC_PURGE_DELAY_MS", "-2", "COREALLOC_ZONES", "maybe",
                                 "COREALLOC_THP", "sometimes", NULL);
    CHECK_EQ(opt.purge_delay_ms, 1000);
    CHECK(opt.zones);
    CHECK_EQ(opt.thp, THP_NEVER);
    CHECK_MSG(strstr(said, "ignoring COREALLOC_PURGE_DELAY_MS=-2") &&
                  strstr(said, "ignoring COREALLOC_ZONES=maybe") &&
                  strstr(said, "ignoring COREALLOC_THP=sometimes"),
              "said %s", said);
    /* Every call starts from the defaults again. */
    said = init_with(NULL);
    CHECK(!opt.tight && opt.stats == STATS_OFF && opt.stats_file == NULL && !*said);
}

static void test_unknown_names(void)
{
    const char *said = init_with("COREALLOC_RETAIN_BYTE", "1M", NULL);
    CHECK_MSG(strstr(said, "COREALLOC_RETAIN_BYTE is not an option") &&
                  strstr(said, "did you mean COREALLOC_RETAIN_BYTES?"),
              "said %s", said);
    CHECK_EQ(opt.retain_bytes, 32 * MIB);
    said = init_with("COREALLOC_XYZZY_QUUX", "1", NULL);
    CHECK_MSG(strstr(said, "COREALLOC_XYZZY_QUUX is not an option") && !strstr(said, "did you mean"),
              "said %s", said);
    /* Variables that are no options but known (the tool's, the tests') pass quietly. */
    said = init_with("COREALLOC_HIST_DIR", "/tmp", "COREALLOC_PYTHON", "python3", NULL);
    CHECK_MSG(!*said, "said %s", said);
}

static void test_options_variable(void)
{
    const char *said = init_with("COREALLOC_OPTIONS", "RETAIN_BYTES=8M,tight=1,COREALLOC_THP=always", NULL);
    CHECK_MSG(!*said, "said %s", said);
    CHECK_EQ(opt.retain_bytes, 8 * MIB);
    CHECK(opt.tight);
    CHECK_EQ(opt.thp, THP_ALWAYS);
    /* An option's own variable wins over the list. */
    init_with("COREALLOC_TIGHT", "0", "COREALLOC_OPTIONS", "TIGHT=1,PURGE_DELAY_MS=250", NULL);
    CHECK(!opt.tight);
    CHECK_EQ(opt.purge_delay_ms, 250);
    said = init_with("COREALLOC_OPTIONS", "PURGE_DELAY_MS=soon,bogus,STATS_FILE=/tmp/x,RETAN_BYTES=1M", NULL);
    CHECK_EQ(opt.purge_delay_ms, 1000);
    CHECK(opt.stats_file == NULL);
    CHECK_MSG(strstr(said, "ignoring COREALLOC_PURGE_DELAY_MS=soon") &&
                  strstr(said, "COREALLOC_OPTIONS: ignoring 'bogus'") &&
                  strstr(said, "COREALLOC_OPTIONS cannot set STATS_FILE") &&
                  strstr(said, "did you mean COREALLOC_RETAIN_BYTES?"),
              "said %s", said);
    said = init_with("COREALLOC_OPTIONS", "help,RETAIN_BYTES=8M", NULL);
    CHECK_MSG(strstr(said, "corealloc options:") && strstr(said, "COREALLOC_RETAIN_BYTES=8M\n") &&
                  strstr(said, "  default: 32M\n") && strstr(said, "COREALLOC_CPU_CACHE_BYTES=8M\n") &&
                  strstr(said, "  choices: auto|rseq|thread\n"),
              "help said %s", said);
}

int main(void)
{
    test_defaults();
    test_sizes();
    test_other_kinds();
    test_unknown_names();
    test_options_variable();
    return check_status();
}
