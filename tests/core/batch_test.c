/* The stacks and lanes of batch nodes (src/core/batch.h). Threads put
 * nodes on two lanes and take them back (lanes shared the way threads on
 * one CPU share theirs, and crossed the way a thread that moves crosses
 * them), taking a chain from the other lane when theirs is dry. Every node
 * stays in exactly one place: held by a thread, a single on a lane, or in
 * a chain on a lane; a lane holds at most MOST singles, a chain at most
 * SEND nodes; each stack's depth (from its tag) is the nodes a walk finds.
 * Then the order a lane gives nodes in. */
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
static struct stack singles[2], chains[2];
static uint8_t last_found[2];
static struct batch *held[THREADS][NODES];
static unsigned held_count[THREADS];
static unsigned places[NODES];
static unsigned steals;

static void *churn(void *arg)
{
    unsigned t = thread_number(arg) - 1;
    uint64_t seed = t + 1;
    for (int r = 0; r < ROUNDS; r++) {
        seed = seed * 6364136223846793005u + 1442695040888963407u;
        unsigned me = (seed >> 40) & 1;
        struct lane lane = { &singles[me], &chains[me], &last_found[me] };
        if (held_count[t] && (seed >> 41) & 1) {
            struct batch *b = held[t][--held_count[t]];
            CHECK_MSG(b->count == t, "node %p changed hands", (void *)b);
            lane_put(lane, b, MOST, SEND);
        } else {
            struct batch *b = lane_take(lane);
            if (!b) {
                b = lane_steal(lane, me, 2, sizeof chains[0]);
                if (b)
                    __atomic_fetch_add(&steals, 1, __ATOMIC_RELAXED);
            }
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
        CHECK_MSG(chains ? in_entry <= SEND : in_entry == 1, "an entry of %u nodes on a stack of %s", in_entry,
                  chains ? "chains" : "singles");
        found += in_entry;
    }
    return found;
}

/* One thread, lane 0 the caller's, lane 1 another CPU's (the nodes are all
 * back in the test's hands by now): a lane gives its own nodes first, the
 * newest first, chains included; dry, it takes the other lane's newest
 * chain, whose other nodes are then its own singles, and never its own. */
static void check_own_first(void)
{
    struct lane own = { &singles[0], &chains[0], &last_found[0] }, other = { &singles[1], &chains[1], &last_found[1] };
    for (unsigned i = 0; i < 2 * SEND; i++)
        lane_put(other, &nodes[i], SEND - 1, SEND);
    for (unsigned i = 2 * SEND; i < 4 * SEND; i++)
        lane_put(own, &nodes[i], SEND - 1, SEND);
    CHECK_EQ(stack_depth(own.chains), 2 * SEND);
    for (unsigned i = 4 * SEND; i-- > 2 * SEND;)
        CHECK_MSG(lane_take(own) == &nodes[i], "the lane's own node %u not taken in turn", i);
    CHECK_MSG(lane_take(own) == NULL, "a dry lane gave a node");
    CHECK_MSG(lane_steal(own, 0, 2, sizeof chains[0]) == &nodes[2 * SEND - 1],
              "the other lane's newest chain not taken");
    CHECK_EQ(stack_depth(own.singles), SEND - 1);
    CHECK_EQ(stack_depth(other.chains), SEND);
    CHECK_MSG(lane_steal(own, 0, 1, sizeof chains[0]) == NULL, "a lane took from itself");
    while (lane_take(own) || lane_take(other))
        ;
}

/* Four lanes, lane 0 taking from the others: it looks first where it found
 * a chain last, then round from itself, and never at itself. */
static void check_last_found(void)
{
    static struct stack four_singles[4], four_chains[4];
    static uint8_t four_found[4];
    struct lane lanes[4];
    for (unsigned l = 0; l < 4; l++)
        lanes[l] = (struct lane){ &four_singles[l], &four_chains[l], &four_found[l] };
    unsigned next = 0;
    for (unsigned l = 2; l < 4; l++)
        for (unsigned i = 0; i < 2 * SEND; i++)
            lane_put(lanes[l], &nodes[next++], SEND - 1, SEND);
    CHECK_MSG(lane_steal(lanes[0], 0, 4, sizeof four_chains[0]) == &nodes[2 * SEND - 1],
              "the chain of the next lane round with one not taken");
    CHECK_EQ(four_found[0], 2);
    for (unsigned i = 0; i < 2 * SEND; i++)
        lane_put(lanes[1], &nodes[next++], SEND - 1, SEND);
    CHECK_MSG(lane_steal(lanes[0], 0, 4, sizeof four_chains[0]) == &nodes[SEND - 1],
              "the lane a chain was last found in not looked at first");
    CHECK_MSG(lane_steal(lanes[0], 0, 4, sizeof four_chains[0]) == &nodes[6 * SEND - 1],
              "the next lane round not looked at when the last one is dry");
    CHECK_EQ(four_found[0], 1);
    CHECK_EQ(stack_depth(&four_chains[0]), 0);
    for (unsigned l = 0; l < 4; l++)
        while (lane_take(lanes[l]) || lane_steal(lanes[l], l, 4, sizeof four_chains[0]))
            ;
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
        uint32_t found = walk(&singles[l], false);
        CHECK_EQ(found, stack_depth(&singles[l]));
        CHECK_MSG(found <= MOST, "lane %u holds %u single nodes", l, found);
        CHECK_EQ(walk(&chains[l], true), stack_depth(&chains[l]));
    }
    CHECK_MSG(steals > 0, "no lane took a chain from the other");
    unsigned misplaced = 0;
    for (unsigned i = 0; i < NODES; i++)
        misplaced += places[i] != 1;
    CHECK_MSG(misplaced == 0, "%u nodes lost or in two places", misplaced);

    /* Everything taken back: the stacks are empty and their depth is 0. */
    unsigned taken = 0;
    struct lane first = { &singles[0], &chains[0], &last_found[0] };
    for (struct batch *b; (b = lane_take(first)) || (b = lane_steal(first, 0, 2, sizeof chains[0])) ||
                          (b = stack_pop(&singles[1]));)
        taken++;
    CHECK_EQ(taken + held_count[0] + held_count[1] + held_count[2] + held_count[3], NODES);
    CHECK_EQ(stack_depth(&singles[0]) + stack_depth(&singles[1]) + stack_depth(&chains[0]) + stack_depth(&chains[1]), 0);
    check_own_first();
    check_last_found();
    return check_status();
}
