/* Runs loaded traces: every recorded thread's events in order, a free or
 * realloc waiting until the object it refers to has been allocated (by
 * whichever replay thread allocates it). */
#ifndef COREALLOC_REPLAY_RUN_H
#define COREALLOC_REPLAY_RUN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "trace_reader.h"

struct replay_object {
    void *block;
    uint64_t size;
    atomic_uint state; /* OBJECT_PENDING, OBJECT_LIVE, OBJECT_RELEASED */
};

/* One replay of one trace; several may run at once. */
struct replay_instance {
    const struct loaded_trace *trace;
    struct replay_object *objects;
    uint32_t number;
};

struct replay_options {
    bool check;       /* fill, verify, alignment and overlap checks */
    uint32_t workers; /* threads; recorded threads are dealt out round-robin */
};

struct replay_result {
    double seconds;
    uint64_t events;
    bool failed;
    char error[512];
};

void replay_prepare(struct replay_instance *instance, const struct loaded_trace *trace, uint32_t number);
void replay_run(struct replay_instance *instances, uint32_t instance_count,
                const struct replay_options *options, struct replay_result *result);

#endif
