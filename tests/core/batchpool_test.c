/* Batch nodes (src/core/batchpool.c): every node handed out is distinct
 * until put back; nodes come from aligned chunks, of which only the pages
 * of the nodes handed out so far are resident (the first node does not
 * make a whole chunk resident); those pages go back to the OS once all the
 * chunk's nodes are empty again (all but the header's page), never while
 * one is in use (with "partly"), and nodes come from the same chunks
 * again; a release with nothing put back since the last one does nothing;
 * threads getting and putting at once never share a node. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "core/batchpool.h"
#include "platform/os.h"
#include "threads.h"

#define NODES 1000
#define THREADS 4
#define ROUNDS 20000

static struct batch *nodes[NODES];

static uintptr_t chunk_of(const struct batch *b)
{
    return (uintptr_t)b & ~(uintptr_t)(BATCHPOOL_CHUNK_BYTES - 1);
}

static void get_all(void)
{
    for (int i = 0; i < NODES; i++) {
        nodes[i] = batchpool_get();
        REQUIRE(nodes[i] != NULL);
        nodes[i]->count = (uint32_t)i; /* a node in use holds its own data */
        nodes[i]->objects[SC_BATCH_MAX - 1] = &nodes[i];
    }
    for (int i = 0; i < NODES; i++)
        CHECK_MSG(nodes[i]->count == (uint32_t)i && nodes[i]->objects[SC_BATCH_MAX - 1] == &nodes[i],
                  "node %d shared with another", i);
}

static void put_all(void)
{
    for (int i = 0; i < NODES; i++)
        batchpool_put(nodes[i]);
}

static void *churn(void *arg)
{
    uintptr_t id = thread_number(arg);
    struct batch *held[16] = {0};
    for (int r = 0; r < ROUNDS; r++) {
        int slot = r % 16;
        if (held[slot]) {
            CHECK_MSG(held[slot]->objects[0] == (void *)id, "node %p changed hands", (void *)held[slot]);
            batchpool_put(held[slot]);
        }
        held[slot] = batchpool_get();
        REQUIRE(held[slot] != NULL);
        held[slot]->objects[0] = (void *)id;
    }
    for (int slot = 0; slot < 16; slot++)
        batchpool_put(held[slot]);
    return NULL;
}

static size_t chunks, resident, purgeable;

/* NODES nodes, in as few chunks as hold them, resident as far as they go. */
static void get_first_nodes(void)
{
    CHECK_EQ(batchpool_bytes_resident(), 0);
    CHECK_EQ(batchpool_release(), 0);
    struct batch *first = batchpool_get();
    REQUIRE(first != NULL);
    size_t first_resident = batchpool_bytes_resident();
    CHECK_MSG(first_resident >= OS_PAGE_SIZE && first_resident < BATCHPOOL_CHUNK_BYTES / 2,
              "the first node made %zu bytes of a %zu-byte chunk resident", first_resident, BATCHPOOL_CHUNK_BYTES);
    batchpool_put(first);
    get_all();
    resident = batchpool_bytes_resident();
    chunks = 0;
    for (int i = 0; i < NODES; i++) {
        bool seen = false;
        for (int k = 0; k < i && !seen; k++)
            seen = chunk_of(nodes[k]) == chunk_of(nodes[i]);
        chunks += !seen;
    }
    size_t needed = NODES * sizeof(struct batch);
    CHECK_MSG(resident >= needed && resident <= chunks * BATCHPOOL_CHUNK_BYTES &&
                  (chunks - 1) * BATCHPOOL_CHUNK_BYTES < needed + BATCHPOOL_CHUNK_BYTES,
              "%zu bytes resident in %zu chunks for %d nodes", resident, chunks, NODES);
    purgeable = resident - chunks * OS_PAGE_SIZE; /* all but the headers' pages can go */
    CHECK_EQ(batchpool_release(), 0); /* nothing put back since the last release */
}

/* Gets NODES nodes again: from the chunks they came from before, which are
 * resident again, and from no new one. */
static void get_all_again(void)
{
    uintptr_t old_chunks[NODES];
    for (int i = 0; i < NODES; i++)
        old_chunks[i] = chunk_of(nodes[i]);
    get_all();
    CHECK_EQ(batchpool_bytes_resident(), resident);
    int strangers = 0;
    for (int i = 0; i < NODES; i++) {
        bool known = false;
        for (int k = 0; k < NODES && !known; k++)
            known = chunk_of(nodes[i]) == old_chunks[k];
        strangers += !known;
    }
    CHECK_MSG(strangers == 0, "%d nodes from chunks not seen before", strangers);
}

static void test_release_all(void)
{
    put_all();
    CHECK_EQ(batchpool_release(), purgeable);
    CHECK_EQ(batchpool_bytes_resident(), chunks * OS_PAGE_SIZE);
    CHECK_EQ(batchpool_release(), 0);
    get_all_again();
    put_all();

    run_threads(THREADS, churn);
    /* The threads needed far fewer nodes than the chunks hold: no new
     * chunk, and every node is back, so every chunk goes again. */
    CHECK_EQ(batchpool_bytes_resident(), resident);
    CHECK_EQ(batchpool_release(), purgeable);
    CHECK_EQ(batchpool_bytes_resident(), chunks * OS_PAGE_SIZE);
}

/* A node in use keeps its chunk, and only its chunk, resident; once it is
 * back, a release takes that chunk too. */
static void test_release_partly(void)
{
    struct batch *kept = nodes[NODES / 2];
    for (int i = 0; i < NODES; i++)
        if (nodes[i] != kept)
            batchpool_put(nodes[i]);
    size_t first_release = batchpool_release();
    CHECK_MSG(first_release < purgeable, "a release with a node in use took all %zu bytes", first_release);
    CHECK_EQ(batchpool_bytes_resident(), resident - first_release);
    CHECK_MSG(kept->count == NODES / 2 && kept->objects[SC_BATCH_MAX - 1] == &nodes[NODES / 2],
              "a node in use lost its contents to a release");
    batchpool_put(kept);
    CHECK_EQ(first_release + batchpool_release(), purgeable);
    CHECK_EQ(batchpool_bytes_resident(), chunks * OS_PAGE_SIZE);
    get_all_again();
}

/* batchpool_test [partly] */
int main(int argc, char **argv)
{
    batchpool_init();
    get_first_nodes();
    if (argc > 1 && !strcmp(argv[1], "partly"))
        test_release_partly();
    else
        test_release_all();
    return check_status();
}
