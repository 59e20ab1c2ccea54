/* The stacks and lanes of batch nodes (src/core/batch.h). Threads put
 * nodes on two lanes and take them back (lanes shared the way threads on
 * one CPU share theirs, and crossed the way a thread that moves crosses
 * them), chains going through one shared stack. Every node stays in
 * exactly one place: held by a thread, on a lane, or in a chain on the
 * shared stack; a lane holds singles only and a chain at most `send`
 * nodes; each stack's depth (from its tag) is the nodes a walk finds. */
#include <stdint.h>

#include "check.h"
#include "core/batch.h"
#include "threads.h"

#define NODES 4000
#define THREADS 4
#define ROUNDS 200000
#define MOST 32u
#define SEND 16u

static struct batch nodes[NODES];
static struct stack lanes[2], shared;
static struct batch *held[THREADS][NODES];
static unsigned held_count[THREADS];
static unsigned places[NODES];

static void *churn(void *arg)
{
    unsigned t = thread_number(arg) - 1;
    uint64_t seed = t + 1;
    for (int r = 0; r < ROUNDS; r++) {
        seed = seed * 6364136223846793005u + 1442695040888963407u;
        struct stack *lane = &lanes[(seed >> 40) & 1];
        if (held_count[t] && (seed >> 41) & 1) {
            struct batch *b = held[t][--held_count[t]];
            CHECK_MSG(b->count == t, "node %p changed hands", (void *)b);
            lane_put(lane, &shared, b, MOST, SEND);
        } else {
            struct batch *b = lane_take(lane, &shared);
            if (b) {
                CHECK_MSG(b->nodes == 1 && !b->rest, "a taken node still heads a chain");
                b->count = t;
                held[t][held_count[t]++] = b;
            }
        }
    }
    return NULL;
}

/* Counts the nodes on st, and checks its entries' shape. */
static uint32_t walk(struct stack *st, bool chains)
{
    uint32_t found = 0;
    for (struct batch *entry = stack_peek(st); entry; entry = entry->next) {
        uint32_t in_entry = 0;
        for (struct batch *b = entry->rest; b; b = b->next) {
            places[b - nodes]++;
            in_entry++;
        }
        places[entry - nodes]++;
        in_entry++;
        CHECK_MSG(entry->nodes == in_entry, "an entry says %u nodes, holds %u", entry->nodes, in_entry);
        CHECK_MSG(chains ? in_entry <= SEND : in_entry == 1, "an entry of %u nodes on a %s", in_entry,
                  chains ? "shared stack" : "lane");
        found += in_entry;
    }
    return found;
}

int main(void)
{
    for (unsigned i = 0; i < NODES; i++) {
        held[i % THREADS][held_count[i % THREADS]++] = &nodes[i];
        nodes[i].count = i % THREADS;
    }
    run_threads(THREADS, churn);
    for (unsigned t = 0; t < THREADS; t++)
        for (unsigned i = 0; i < held_count[t]; i++)
            places[held[t][i] - nodes]++;
    for (unsigned l = 0; l < 2; l++) {
        uint32_t found = walk(&lanes[l], false);
        CHECK_EQ(found, stack_depth(&lanes[l]));
        CHECK_MSG(found <= MOST, "lane %u holds %u nodes", l, found);
    }
    CHECK_EQ(walk(&shared, true), stack_depth(&shared));
    CHECK_MSG(stack_depth(&shared) > 0, "no chain went through the shared stack");
    unsigned misplaced = 0;
    for (unsigned i = 0; i < NODES; i++)
        misplaced += places[i] != 1;
    CHECK_MSG(misplaced == 0, "%u nodes lost or in two places", misplaced);

    /* Everything taken back: the stacks are empty and their depth is 0. */
    unsigned taken = 0;
    for (struct batch *b; (b = lane_take(&lanes[0], &shared)) || (b = lane_take(&lanes[1], &shared));)
        taken++;
    CHECK_EQ(taken + held_count[0] + held_count[1] + held_count[2] + held_count[3], NODES);
    CHECK_EQ(stack_depth(&lanes[0]) + stack_depth(&lanes[1]) + stack_depth(&shared), 0);
    return check_status();
}
