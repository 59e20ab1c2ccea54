#include "stats.h"

#include <stdarg.h>
#include <stdio.h>

#include "alloc.h"
#include "central.h"
#include "frontend.h"
#include "rseq.h"
#include "large.h"
#include "options.h"
#include "os.h"
#include "purger.h"
#include "superblock.h"
#include "zone.h"

static size_t mapped, mapped_peak, held, held_peak;
static uint64_t purged_total, invalid_frees;

void stats_raise_peak(size_t *peak, size_t now)
{
    size_t seen = __atomic_load_n(peak, __ATOMIC_RELAXED);
    while (now > seen &&
           !__atomic_compare_exchange_n(peak, &seen, now, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

void stats_add_mapped(size_t bytes)
{
    stats_raise_peak(&mapped_peak, __atomic_add_fetch(&mapped, bytes, __ATOMIC_RELAXED));
}

void stats_add_held(ptrdiff_t bytes)
{
    size_t now = __atomic_add_fetch(&held, (size_t)bytes, __ATOMIC_RELAXED);
    if (bytes > 0)
        stats_raise_peak(&held_peak, now);
}

void stats_add_purged(size_t bytes) { __atomic_add_fetch(&purged_total, bytes, __ATOMIC_RELAXED); }
void stats_count_invalid_free(void) { __atomic_add_fetch(&invalid_frees, 1, __ATOMIC_RELAXED); }
uint64_t stats_invalid_frees(void) { return __atomic_load_n(&invalid_frees, __ATOMIC_RELAXED); }
size_t stats_mapped(void) { return __atomic_load_n(&mapped, __ATOMIC_RELAXED); }

void stats_totals(struct stats_totals *t)
{
    *t = (struct stats_totals){0};
    for (unsigned c = 0; c < SC_COUNT; c++) {
        struct central_class_stats cs;
        central_class_stats(c, &cs);
        t->small_out_bytes += cs.blocks_out * sc_info[c].size;
        t->central_bytes += cs.batches_central * sc_info[c].batch * sc_info[c].size;
        t->superblocks += cs.superblocks;
    }
    t->cached_bytes = frontend_bytes_held(&t->caches);
    struct large_stats ls;
    large_stats(&ls);
    t->large_in_use = ls.bytes_in_use;
    t->large_spans = ls.spans_in_use;
    t->large_free_resident = ls.bytes_free_resident;
    size_t parked = t->cached_bytes + t->central_bytes;
    t->in_use = (t->small_out_bytes > parked ? t->small_out_bytes - parked : 0) + t->large_in_use;
    t->mapped = stats_mapped();
    t->mapped_peak = __atomic_load_n(&mapped_peak, __ATOMIC_RELAXED);
    footprint_stats(&t->footprint);
    t->metadata = t->footprint.metadata;
    t->retained_empty = sb_bytes_retained();
    t->purged_total = __atomic_load_n(&purged_total, __ATOMIC_RELAXED);
    t->held = __atomic_load_n(&held, __ATOMIC_RELAXED);
    t->held_peak = __atomic_load_n(&held_peak, __ATOMIC_RELAXED);
}

/* An snprintf that appends and keeps counting past the end. */
struct out {
    char *buf;
    size_t size, len;
};

__attribute__((format(printf, 2, 3))) static void put(struct out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->buf + (o->len < o->size ? o->len : o->size),
                      o->len < o->size ? o->size - o->len : 0, fmt, ap);
    va_end(ap);
    if (n > 0)
        o->len += (size_t)n;
}

static const char *rseq_source_name(void)
{
    switch (rseq_source()) {
    case RSEQ_SOURCE_GLIBC: return "glibc's area";
    case RSEQ_SOURCE_OWN: return "own area";
    default: return "unavailable";
    }
}

static void report_text(struct out *o, const struct stats_totals *t)
{
    put(o, "corealloc statistics\n");
    put(o, "  frontend              %s\n", alloc_frontend_name());
    put(o, "  rseq                  %s, ids from %s, %llu critical sections restarted\n",
        rseq_source_name(), rseq_uses_mm_cid() ? "mm_cid" : "cpu_id",
        (unsigned long long)rseq_abort_count());
    put(o, "  zones                 %s\n", zone_active() ? "address-space zones" : "page map only");
    put(o, "  in use                %zu bytes\n", t->in_use);
    put(o, "  held                  %zu bytes (peak %zu): in use plus caches and central batches\n",
        t->held, t->held_peak);
    put(o, "  mapped                %zu bytes (peak %zu)\n", t->mapped, t->mapped_peak);
    put(o, "  rss                   %zu bytes (peak %zu)\n", os_rss_current(), os_rss_peak());
    put(o, "  cached                %zu bytes in %u caches, %zu bytes in central batches\n",
        t->cached_bytes, t->caches, t->central_bytes);
    put(o, "  retained empty        %zu bytes\n", t->retained_empty);
    put(o, "  large                 %zu bytes in %zu blocks, %zu bytes free not yet purged\n",
        t->large_in_use, t->large_spans, t->large_free_resident);
    const struct footprint_stats *f = &t->footprint;
    put(o, "  resident (estimate)   %zu bytes (peak %zu), %zu bytes freed lazily (MADV_FREE)\n",
        f->resident, f->resident_peak, f->lazy);
    put(o, "  returned to OS        %zu bytes (cumulative), purge delay %ld ms, purger %s\n",
        t->purged_total, opt.purge_delay_ms, purger_running() ? "running" : "not running");
    put(o, "  limit                 %zu bytes (0 none), purge at once past %zu\n", f->limit, f->pressure);
    put(o, "  container             cgroup v%d, memory.max %zu, memory.high %zu, %u CPUs allowed, quota %u\n",
        f->container.cgroup_version, f->container.memory_max, f->container.memory_high,
        f->container.cpus_allowed, f->container.cpu_quota);
    put(o, "  metadata              %zu bytes\n", t->metadata);
    put(o, "  invalid frees         %llu\n", (unsigned long long)stats_invalid_frees());
    uint64_t empty[256], full[256];
    unsigned ids = frontend_misses(empty, full, 256);
    for (unsigned id = 0; id < ids; id++)
        if (empty[id] || full[id])
            put(o, "  cpu cache %-3u         %llu misses empty (refills), %llu misses full (spills)\n", id,
                (unsigned long long)empty[id], (unsigned long long)full[id]);
    put(o, "  class    size  superblocks   blocks out   central   refills    spills\n");
    for (unsigned c = 0; c < SC_COUNT; c++) {
        struct central_class_stats cs;
        central_class_stats(c, &cs);
        if (!cs.superblocks && !cs.refills)
            continue;
        put(o, "  %5u %7u %12llu %12llu %9llu %9llu %9llu\n", c, sc_info[c].size,
            (unsigned long long)cs.superblocks, (unsigned long long)cs.blocks_out,
            (unsigned long long)cs.batches_central, (unsigned long long)cs.refills,
            (unsigned long long)cs.spills);
    }
}

static void report_json(struct out *o, const struct stats_totals *t)
{
    put(o, "{\"frontend\":\"%s\",\"zones\":%s,\"in_use_bytes\":%zu,\"mapped_bytes\":%zu,"
           "\"peak_mapped_bytes\":%zu,\"held_bytes\":%zu,\"peak_held_bytes\":%zu,\"rss_bytes\":%zu,\"rss_peak_bytes\":%zu,\"cached_bytes\":%zu,"
           "\"caches\":%u,\"central_bytes\":%zu,\"retained_empty_bytes\":%zu,\"large_bytes\":%zu,\"large_blocks\":%zu,"
           "\"large_free_unpurged_bytes\":%zu,\"purged_bytes\":%zu,\"metadata_bytes\":%zu,"
           "\"resident_bytes\":%zu,\"peak_resident_bytes\":%zu,\"lazy_bytes\":%zu,\"limit_bytes\":%zu,"
           "\"pressure_bytes\":%zu,\"purge_delay_ms\":%ld,\"purger_running\":%s,\"cgroup_version\":%d,"
           "\"cgroup_memory_max\":%zu,\"cgroup_memory_high\":%zu,\"cpus_allowed\":%u,\"cpu_quota\":%u,"
           "\"invalid_frees\":%llu,\"rseq_source\":\"%s\",\"rseq_id\":\"%s\",\"rseq_aborts\":%llu,"
           "\"cpu_caches\":[",
        alloc_frontend_name(), zone_active() ? "true" : "false", t->in_use, t->mapped, t->mapped_peak,
        t->held, t->held_peak,
        os_rss_current(), os_rss_peak(), t->cached_bytes, t->caches, t->central_bytes, t->retained_empty,
        t->large_in_use, t->large_spans, t->large_free_resident, t->purged_total, t->metadata,
        t->footprint.resident, t->footprint.resident_peak, t->footprint.lazy, t->footprint.limit,
        t->footprint.pressure, opt.purge_delay_ms, purger_running() ? "true" : "false",
        t->footprint.container.cgroup_version, t->footprint.container.memory_max,
        t->footprint.container.memory_high, t->footprint.container.cpus_allowed,
        t->footprint.container.cpu_quota,
        (unsigned long long)stats_invalid_frees(), rseq_source_name(),
        rseq_uses_mm_cid() ? "mm_cid" : "cpu_id", (unsigned long long)rseq_abort_count());
    uint64_t empty[256], full[256];
    unsigned ids = frontend_misses(empty, full, 256);
    const char *sep = "";
    for (unsigned id = 0; id < ids; id++, sep = ",")
        put(o, "%s{\"id\":%u,\"misses_empty\":%llu,\"misses_full\":%llu}", sep, id,
            (unsigned long long)empty[id], (unsigned long long)full[id]);
    put(o, "],\"classes\":[");
    sep = "";
    for (unsigned c = 0; c < SC_COUNT; c++) {
        struct central_class_stats cs;
        central_class_stats(c, &cs);
        if (!cs.superblocks && !cs.refills)
            continue;
        put(o, "%s{\"size\":%u,\"superblocks\":%llu,\"blocks_out\":%llu,\"central_batches\":%llu,"
               "\"refills\":%llu,\"spills\":%llu}",
            sep, sc_info[c].size, (unsigned long long)cs.superblocks,
            (unsigned long long)cs.blocks_out, (unsigned long long)cs.batches_central,
            (unsigned long long)cs.refills, (unsigned long long)cs.spills);
        sep = ",";
    }
    put(o, "]}\n");
}

size_t stats_snprint(char *buf, size_t size, bool json)
{
    struct out o = {buf, size, 0};
    struct stats_totals t;
    stats_totals(&t);
    if (json)
        report_json(&o, &t);
    else
        report_text(&o, &t);
    if (size)
        buf[o.len < size ? o.len : size - 1] = '\0';
    return o.len;
}

void stats_exit_report(void)
{
    if (opt.stats == STATS_OFF)
        return;
    static char buf[32768];
    size_t len = stats_snprint(buf, sizeof buf, opt.stats == STATS_JSON);
    if (len >= sizeof buf)
        len = sizeof buf - 1;
    int fd = 2;
    if (opt.stats_file)
        fd = os_create_file(opt.stats_file);
    if (fd < 0)
        return;
    os_write_all(fd, buf, len);
    if (fd != 2)
        os_close(fd);
}

__attribute__((destructor)) static void report_at_exit(void)
{
    if (__atomic_load_n(&opt.stats, __ATOMIC_RELAXED) != STATS_OFF)
        stats_exit_report();
}
