/* corealloc-replay: the replayer behind 'corealloc trace replay' and
 * 'corealloc trace info'. Runs one pass per process (so each allocator and
 * each pass starts from a fresh heap) and prints JSON on stdout.
 * Exit status: 0 success, 1 a correctness check failed, 2 a trace is
 * unreadable, 3 usage or system error, 4 the allocator is not in use. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocator_check.h"
#include "arena.h"
#include "replay_run.h"
#include "rss.h"
#include "trace_reader.h"

struct arguments {
    bool check;
    bool info;
    uint32_t workers;
    uint32_t copies;
    const char *allocator_path;
    const char **traces;
    uint32_t trace_count;
};

static void usage(void)
{
    fprintf(stderr, "usage: corealloc-replay [--check] [--info] [--threads N] [--copies K]\n"
                    "                        [--allocator-path PATH] TRACE...\n");
    exit(3);
}

static uint32_t parse_count(const char *text, const char *option)
{
    char *end;
    unsigned long value = strtoul(text, &end, 10);
    if (*text == '\0' || *end != '\0' || value == 0 || value > 100000) {
        fprintf(stderr, "corealloc-replay: %s needs a positive number, not '%s'\n", option, text);
        exit(3);
    }
    return (uint32_t)value;
}

static void parse_arguments(int argc, char **argv, struct arguments *args)
{
    *args = (struct arguments){ .copies = 1 };
    args->traces = arena_alloc((size_t)argc * sizeof(char *));
    for (int i = 1; i < argc; i++) {
        bool has_value = i + 1 < argc;
        if (strcmp(argv[i], "--check") == 0)
            args->check = true;
        else if (strcmp(argv[i], "--info") == 0)
            args->info = true;
        else if (strcmp(argv[i], "--threads") == 0 && has_value)
            args->workers = parse_count(argv[++i], "--threads");
        else if (strcmp(argv[i], "--copies") == 0 && has_value)
            args->copies = parse_count(argv[++i], "--copies");
        else if (strcmp(argv[i], "--allocator-path") == 0 && has_value)
            args->allocator_path = argv[++i];
        else if (argv[i][0] == '-')
            usage();
        else
            args->traces[args->trace_count++] = argv[i];
    }
    if (args->trace_count == 0)
        usage();
}

static void print_json_string(const char *s)
{
    putchar('"');
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

static void print_trace_info(const struct loaded_trace *trace)
{
    printf("{\"file\": ");
    print_json_string(trace->path);
    printf(", \"pid\": %llu, \"forked_child\": %s, \"ended_by\": \"%s\", \"command\": ",
           (unsigned long long)trace->pid, trace->flags & TRACE_FLAG_FORKED_CHILD ? "true" : "false",
           trace->end_reason == TRACE_END_EXEC ? "exec" : "exit");
    print_json_string(trace->command);
    printf(", \"threads\": %u, \"events\": %llu, \"objects\": %llu, \"peak_live_bytes\": %llu, "
           "\"peak_live_objects\": %llu, \"live_objects_at_end\": %llu, \"calls\": {",
           trace->stream_count, (unsigned long long)trace->event_count,
           (unsigned long long)trace->object_count, (unsigned long long)trace->peak_live_bytes,
           (unsigned long long)trace->peak_live_objects, (unsigned long long)trace->live_objects_at_end);
    const char *separator = "";
    for (unsigned k = 1; k < TRACE_KIND_COUNT; k++) {
        if (trace->kind_counts[k] == 0)
            continue;
        printf("%s\"%s\": %llu", separator, trace_kind_name(k), (unsigned long long)trace->kind_counts[k]);
        separator = ", ";
    }
    printf("}, \"events_per_thread\": [");
    for (uint32_t t = 0; t < trace->stream_count; t++)
        printf("%s%llu", t == 0 ? "" : ", ", (unsigned long long)trace->streams[t].count);
    printf("]}");
}

int main(int argc, char **argv)
{
    struct arguments args;
    parse_arguments(argc, argv, &args);

    char why[1024];
    if (args.allocator_path != NULL && !allocator_is_loaded(args.allocator_path, why, sizeof why)) {
        fprintf(stderr, "corealloc-replay: allocator %s is not in use: %s\n", args.allocator_path, why);
        return 4;
    }

    struct loaded_trace *traces = arena_alloc(args.trace_count * sizeof *traces);
    for (uint32_t i = 0; i < args.trace_count; i++) {
        char error[512];
        if (!trace_load(args.traces[i], &traces[i], error, sizeof error)) {
            fprintf(stderr, "corealloc-replay: %s: %s\n", args.traces[i], error);
            return 2;
        }
    }

    if (args.info) {
        printf("[");
        for (uint32_t i = 0; i < args.trace_count; i++) {
            printf(i == 0 ? "" : ", ");
            print_trace_info(&traces[i]);
        }
        printf("]\n");
        return 0;
    }

    uint32_t instance_count = args.trace_count * args.copies;
    struct replay_instance *instances = arena_alloc(instance_count * sizeof *instances);
    uint64_t peak_live_bytes = 0;
    for (uint32_t copy = 0; copy < args.copies; copy++) {
        for (uint32_t i = 0; i < args.trace_count; i++) {
            replay_prepare(&instances[copy * args.trace_count + i], &traces[i], copy);
            peak_live_bytes += traces[i].peak_live_bytes;
        }
    }

    struct replay_options options = { args.check, args.workers };
    struct replay_result result;
    struct rss_sample before, after;
    bool peak_reset = rss_reset_peak();
    bool rss_known = rss_read(&before);
    replay_run(instances, instance_count, &options, &result);
    rss_known = rss_known && rss_read(&after) && peak_reset;

    char malloc_origin[4096];
    allocator_malloc_origin(malloc_origin, sizeof malloc_origin);
    uint64_t workers = 0;
    for (uint32_t i = 0; i < instance_count; i++)
        workers += instances[i].trace->stream_count;
    if (args.workers != 0 && args.workers < workers)
        workers = args.workers;

    printf("{\"mode\": \"%s\", \"malloc_from\": ", args.check ? "check" : "timed");
    print_json_string(malloc_origin);
    printf(", \"traces\": [");
    for (uint32_t i = 0; i < args.trace_count; i++) {
        printf(i == 0 ? "" : ", ");
        print_trace_info(&traces[i]);
    }
    printf("], \"copies\": %u, \"threads\": %llu, \"events\": %llu, \"seconds\": %.9f, "
           "\"events_per_second\": %.1f, \"peak_live_bytes\": %llu",
           args.copies, (unsigned long long)workers, (unsigned long long)result.events, result.seconds,
           result.seconds > 0 ? (double)result.events / result.seconds : 0.0,
           (unsigned long long)peak_live_bytes);
    if (rss_known && after.peak_bytes > before.current_bytes) {
        uint64_t used = after.peak_bytes - before.current_bytes;
        printf(", \"baseline_rss_bytes\": %llu, \"peak_rss_bytes\": %llu, \"replay_rss_bytes\": %llu, "
               "\"utilisation\": %.4f",
               (unsigned long long)before.current_bytes, (unsigned long long)after.peak_bytes,
               (unsigned long long)used, (double)peak_live_bytes / (double)used);
    } else {
        printf(", \"baseline_rss_bytes\": null, \"peak_rss_bytes\": null, \"replay_rss_bytes\": null, "
               "\"utilisation\": null");
    }
    printf(", \"check\": \"%s\", \"error\": ", !args.check ? "skipped" : result.failed ? "failed" : "passed");
    print_json_string(result.failed ? result.error : "");
    printf("}\n");
    return result.failed ? 1 : 0;
}
