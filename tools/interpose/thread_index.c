#include "thread_index.h"

#include <stdatomic.h>

struct thread_number {
    uint32_t generation; /* 0: never numbered */
    uint32_t index;
};

static atomic_uint_least32_t generation = 1;
static atomic_uint_least32_t issued;
static __attribute__((tls_model("initial-exec"))) __thread struct thread_number mine;

uint32_t thread_index_current(void)
{
    uint32_t current = atomic_load_explicit(&generation, memory_order_relaxed);
    if (mine.generation != current) {
        mine.index = atomic_fetch_add_explicit(&issued, 1, memory_order_relaxed);
        mine.generation = current;
    }
    return mine.index;
}

uint32_t thread_index_count(void)
{
    return atomic_load_explicit(&issued, memory_order_relaxed);
}

void thread_index_restart(void)
{
    atomic_store(&issued, 0);
    atomic_fetch_add(&generation, 1);
}
