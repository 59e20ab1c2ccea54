#include "api/report.h"

#include <stdio.h>

#include "api/alloc.h"
#include "api/textout.h"
#include "core/central.h"
#include "core/counters.h"
#include "core/footprint.h"
#include "core/large.h"
#include "core/superblock.h"
#include "core/zone.h"
#include "frontend/frontend.h"
#include "platform/diag.h"
#include "platform/options.h"
#include "platform/os.h"
#include "platform/rseq.h"
#include "policy/purger.h"

static const char *rseq_source_name(void)
{
    switch (rseq_source()) {
    case RSEQ_SOURCE_GLIBC: return "glibc's area";
    case RSEQ_SOURCE_OWN: return "own area";
    default: return "unavailable";
    }
}

void report_collect(struct report *r)
{
    *r = (struct report){0};
    size_t small_out = 0;
    for (unsigned c = 0; c < SC_COUNT; c++) {
        struct central_class_stats cs;
        central_class_stats(c, &cs);
        small_out += cs.blocks_out * sc_info[c].size;
        r->central_bytes += cs.batches_central * sc_info[c].batch * sc_info[c].size;
    }
    unsigned caches;
    r->cached_bytes = frontend_bytes_held(&caches);
    r->caches = caches;
    struct large_stats ls;
    large_stats(&ls);
    r->large_bytes = ls.bytes_in_use;
    r->large_blocks = ls.spans_in_use;
    r->large_free_unpurged_bytes = ls.bytes_free_resident;
    size_t parked = r->cached_bytes + r->central_bytes;
    r->in_use_bytes = (small_out > parked ? small_out - parked : 0) + r->large_bytes;

    struct counters c;
    counters_read(&c);
    r->mapped_bytes = c.mapped;
    r->peak_mapped_bytes = c.mapped_peak;
    r->held_bytes = c.held;
    r->peak_held_bytes = c.held_peak;
    r->purged_bytes = c.purged_total;
    r->retained_empty_bytes = sb_bytes_retained();

    struct footprint_stats f;
    footprint_stats(&f);
    r->metadata_bytes = f.metadata;
    r->resident_bytes = f.resident;
    r->peak_resident_bytes = f.resident_peak;
    r->lazy_bytes = f.lazy;
    r->limit_bytes = f.limit;
    r->pressure_bytes = f.pressure;
    r->cgroup_version = f.container.cgroup_version;
    r->cgroup_memory_max = f.container.memory_max;
    r->cgroup_memory_high = f.container.memory_high;
    r->cpus_allowed = f.container.cpus_allowed;
    r->cpu_quota = f.container.cpu_quota;

    r->frontend = alloc_frontend_name();
    r->rseq_source = rseq_source_name();
    r->rseq_aborts = rseq_abort_count();
    r->zones = zone_active();
    r->rss_bytes = os_rss_current();
    r->rss_peak_bytes = os_rss_peak();
    r->purge_delay_ms = opt.purge_delay_ms;
    r->purger_running = purger_running();
    r->invalid_frees = diag_invalid_pointer_count();
    r->heap_corruptions = diag_heap_corruption_count();
}

/* A statistic's value as text and as JSON. */
#define FORMAT_BYTES(v) "%zu", (size_t)(v)
#define FORMAT_COUNT(v) "%llu", (unsigned long long)(v)
#define FORMAT_INT(v) "%ld", (long)(v)
#define FORMAT_FLAG(v) "%s", (v) ? "true" : "false"
#define FORMAT_TEXT(v) "%s", (v)
#define JSON_BYTES FORMAT_BYTES
#define JSON_COUNT FORMAT_COUNT
#define JSON_INT FORMAT_INT
#define JSON_FLAG FORMAT_FLAG
#define JSON_TEXT(v) "\"%s\"", (v) /* our own strings: nothing to escape */

static void put_text_stat(struct sink *s, const char *key, const char *value, const char *meaning)
{
    sink_put(s, "  %-26s %-20s %s\n", key, value, meaning);
}

static void put_json_stat(struct sink *s, const char *key, const char *value)
{
    sink_put(s, ",\"%s\":%s", key, value);
}

static void write_text(struct sink *s, const struct report *r)
{
    char value[128];
    sink_put(s, "corealloc statistics (schema %d)\n", REPORT_SCHEMA);
#define TEXT_STAT(key, kind, meaning)                        \
    snprintf(value, sizeof value, FORMAT_##kind(r->key)); \
    put_text_stat(s, #key, value, meaning);
    COREALLOC_STAT_TABLE(TEXT_STAT)
#undef TEXT_STAT
    for (unsigned id = 0, ids = frontend_id_count(); id < ids; id++) {
        uint64_t empty, full;
        frontend_id_misses(id, &empty, &full);
        if (empty || full)
            sink_put(s, "  cpu cache %-5u  %llu misses empty (refills), %llu misses full (spills)\n", id,
                (unsigned long long)empty, (unsigned long long)full);
    }
    sink_put(s, "  class    size  superblocks   blocks out   central   refills    spills\n");
    for (unsigned c = 0; c < SC_COUNT; c++) {
        struct central_class_stats cs;
        central_class_stats(c, &cs);
        if (!cs.superblocks && !cs.refills)
            continue;
        sink_put(s, "  %5u %7u %12llu %12llu %9llu %9llu %9llu\n", c, sc_info[c].size,
            (unsigned long long)cs.superblocks, (unsigned long long)cs.blocks_out,
            (unsigned long long)cs.batches_central, (unsigned long long)cs.refills,
            (unsigned long long)cs.spills);
    }
}

static void write_json(struct sink *s, const struct report *r)
{
    char value[128];
    sink_put(s, "{\"schema\":%d", REPORT_SCHEMA);
#define JSON_STAT(key, kind, meaning)                      \
    snprintf(value, sizeof value, JSON_##kind(r->key)); \
    put_json_stat(s, #key, value);
    COREALLOC_STAT_TABLE(JSON_STAT)
#undef JSON_STAT
    sink_put(s, ",\"cpu_caches\":[");
    const char *sep = "";
    for (unsigned id = 0, ids = frontend_id_count(); id < ids; id++, sep = ",") {
        uint64_t empty, full;
        frontend_id_misses(id, &empty, &full);
        sink_put(s, "%s{\"id\":%u,\"misses_empty\":%llu,\"misses_full\":%llu}", sep, id,
            (unsigned long long)empty, (unsigned long long)full);
    }
    sink_put(s, "],\"classes\":[");
    sep = "";
    for (unsigned c = 0; c < SC_COUNT; c++) {
        struct central_class_stats cs;
        central_class_stats(c, &cs);
        if (!cs.superblocks && !cs.refills)
            continue;
        sink_put(s, "%s{\"size\":%u,\"superblocks\":%llu,\"blocks_out\":%llu,\"central_batches\":%llu,"
               "\"refills\":%llu,\"spills\":%llu}",
            sep, sc_info[c].size, (unsigned long long)cs.superblocks,
            (unsigned long long)cs.blocks_out, (unsigned long long)cs.batches_central,
            (unsigned long long)cs.refills, (unsigned long long)cs.spills);
        sep = ",";
    }
    sink_put(s, "]}\n");
}

static void write_report(struct sink *s, bool json)
{
    struct report r;
    report_collect(&r);
    if (json)
        write_json(s, &r);
    else
        write_text(s, &r);
}

size_t report_snprint(char *buf, size_t size, bool json)
{
    struct sink s = {.buf = buf, .size = size};
    write_report(&s, json);
    if (size)
        buf[s.len < size ? s.len : size - 1] = '\0';
    return s.len;
}

int report_write(int fd, bool json)
{
    struct sink s = {.to_fd = true, .fd = fd};
    write_report(&s, json);
    sink_flush(&s);
    return s.error;
}

void report_at_exit(void)
{
    if (opt.stats == STATS_OFF)
        return;
    char path[4096];
    if (opt.stats_file && !path_with_pid(opt.stats_file, path, sizeof path))
        return;
    int fd = opt.stats_file ? os_create_file(path) : 2;
    if (fd < 0)
        return;
    report_write(fd, opt.stats == STATS_JSON);
    if (fd != 2)
        os_close(fd);
}

__attribute__((destructor)) static void report_when_exiting(void)
{
    if (__atomic_load_n(&opt.stats, __ATOMIC_RELAXED) != STATS_OFF)
        report_at_exit();
}
