#include "options.h"

#include <stdio.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>

#include "os.h"

struct options opt = {
    .stats = STATS_OFF,
    .stats_file = NULL,
    .abort_on_error = false,
    .zones = true,
    .frontend = FRONTEND_AUTO,
    .rseq_mm_cid = true,
    .retain_bytes = (size_t)32 << 20,
    .purge = PURGE_DONTNEED,
    .huge_threshold = (size_t)16 << 20,
    .purge_delay_ms = 1000,
    .limit_bytes = 0,
    .cgroup_limit = false,
    .cgroup_root = NULL,
    .thp = THP_NEVER,
    .tight = false,
    .thread_caches_bytes = (size_t)64 << 20,
    .cpu_cache_bytes = (size_t)1 << 20,
};

enum kind { KIND_BOOL, KIND_SIZE, KIND_MILLISECONDS, KIND_CHOICE, KIND_STRING };

struct option_spec {
    const char *name; /* after the COREALLOC_ prefix */
    enum kind kind;
    void *target;
    const char *const *choices; /* KIND_CHOICE: names of values 0, 1, ... */
    const char *meaning;
};

static const char *const stats_choices[] = {"0", "1", "json", NULL};
static const char *const frontend_choices[] = {"auto", "rseq", "thread", NULL};
static const char *const purge_choices[] = {"dontneed", "free", NULL};
static const char *const thp_choices[] = {"never", "large", "always", NULL};

static const struct option_spec table[] = {
    {"STATS", KIND_CHOICE, &opt.stats, stats_choices,
     "report at exit: 0 none, 1 text, json one JSON object"},
    {"STATS_FILE", KIND_STRING, &opt.stats_file, NULL, "write the exit report here instead of stderr"},
    {"ABORT_ON_ERROR", KIND_BOOL, &opt.abort_on_error, NULL,
     "abort on an invalid free() instead of reporting it and going on"},
    {"ZONES", KIND_BOOL, &opt.zones, NULL,
     "reserve size-class zones; 0 forces the page-map fallback"},
    {"FRONTEND", KIND_CHOICE, &opt.frontend, frontend_choices,
     "caches: auto (per-CPU rseq when the kernel allows), rseq, thread"},
    {"RSEQ_MM_CID", KIND_BOOL, &opt.rseq_mm_cid, NULL,
     "index per-CPU caches by concurrency id (mm_cid) where the kernel has it"},
    {"RETAIN_BYTES", KIND_SIZE, &opt.retain_bytes, NULL,
     "empty superblock bytes kept for reuse before returning memory to the OS"},
    {"PURGE", KIND_CHOICE, &opt.purge, purge_choices,
     "how memory goes back: dontneed (RSS drops at once) or free (MADV_FREE, lazy)"},
    {"HUGE_THRESHOLD", KIND_SIZE, &opt.huge_threshold, NULL,
     "blocks this large are returned to the OS when freed and moved by mremap on realloc"},
    {"PURGE_DELAY_MS", KIND_MILLISECONDS, &opt.purge_delay_ms, NULL,
     "free memory unused this long goes back to the OS, even while idle; 0 at once, -1 never"},
    {"LIMIT_BYTES", KIND_SIZE, &opt.limit_bytes, NULL,
     "allocations that would take resident memory past this fail with ENOMEM; 0 no limit"},
    {"CGROUP_LIMIT", KIND_BOOL, &opt.cgroup_limit, NULL,
     "treat the cgroup's memory.max as LIMIT_BYTES: fail with ENOMEM instead of being killed"},
    {"CGROUP_ROOT", KIND_STRING, &opt.cgroup_root, NULL,
     "where the cgroup v2 hierarchy is mounted (default: found in /proc/self/mountinfo)"},
    {"THP", KIND_CHOICE, &opt.thp, thp_choices,
     "transparent huge pages: never, large (huge blocks only), always"},
    {"TIGHT", KIND_BOOL, &opt.tight, NULL,
     "lowest address first and no new superblock while a partial one exists (smaller, slower)"},
    {"THREAD_CACHES_BYTES", KIND_SIZE, &opt.thread_caches_bytes, NULL,
     "per-thread front end: what all threads' caches may hold together"},
    {"CPU_CACHE_BYTES", KIND_SIZE, &opt.cpu_cache_bytes, NULL,
     "per-CPU front end: how far one CPU's cache may grow past a batch per class"},
};

/* Accepts a decimal number with an optional K, M or G suffix (binary). */
static bool parse_size(const char *s, size_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s)
        return false;
    switch (*end) {
    case 'k': case 'K': v <<= 10; end++; break;
    case 'm': case 'M': v <<= 20; end++; break;
    case 'g': case 'G': v <<= 30; end++; break;
    default: break;
    }
    if (*end && strcmp(end, "B") != 0 && strcmp(end, "iB") != 0)
        return false;
    *out = (size_t)v;
    return true;
}

/* A whole number of milliseconds, or -1 for never. */
static bool parse_milliseconds(const char *s, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < -1)
        return false;
    *out = v;
    return true;
}

static bool parse_bool(const char *s, bool *out)
{
    if (!strcmp(s, "1") || !strcasecmp(s, "true") || !strcasecmp(s, "yes") || !strcasecmp(s, "on"))
        *out = true;
    else if (!strcmp(s, "0") || !strcasecmp(s, "false") || !strcasecmp(s, "no") || !strcasecmp(s, "off"))
        *out = false;
    else
        return false;
    return true;
}

static bool parse_choice(const char *s, const char *const *choices, int *out)
{
    for (int i = 0; choices[i]; i++)
        if (!strcasecmp(s, choices[i])) {
            *out = i;
            return true;
        }
    return false;
}

static void warn_bad_value(const struct option_spec *o, const char *value)
{
    char line[512];
    int n = snprintf(line, sizeof line, "corealloc: warning: ignoring COREALLOC_%s=%s; it means: %s\n",
                     o->name, value, o->meaning);
    if (n > 0)
        os_write_all(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

void options_init(void)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const struct option_spec *o = &table[i];
        char var[64] = "COREALLOC_";
        strncat(var, o->name, sizeof var - strlen(var) - 1);
        const char *value = getenv(var);
        if (!value)
            continue;
        bool ok = false;
        switch (o->kind) {
        case KIND_BOOL: ok = parse_bool(value, o->target); break;
        case KIND_SIZE: ok = parse_size(value, o->target); break;
        case KIND_MILLISECONDS: ok = parse_milliseconds(value, o->target); break;
        case KIND_STRING: *(const char **)o->target = value; ok = true; break;
        case KIND_CHOICE: {
            int v;
            ok = parse_choice(value, o->choices, &v);
            if (ok)
                *(int *)o->target = v;
            break;
        }
        }
        if (!ok)
            warn_bad_value(o, value);
    }
}
