/* Batch nodes (src/core/batchpool.c): every node handed out is distinct
 * until put back; nodes come from aligned chunks whose pages go back to
 * the OS once all their nodes are empty again (all but the header's page),
 * never while one is in use (with "partly"), and are refilled from the
 * same chunks; a release with nothing put back since the last one does
 * nothing; threads getting and putting at once never share a node. */
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

/* The chunk a node lies in, given the chunk size. */
static uintptr_t chunk_of(const struct batch *b, size_t chunk_bytes)
{
    return (uintptr_t)b & ~(uintptr_t)(chunk_bytes - 1);
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

static size_t chunk_bytes, chunks, resident, page_kept;

/* The chunk size, from the first node's mapping; then NODES nodes, in as
 * few chunks as hold them. */
static void get_first_nodes(void)
{
    CHECK_EQ(batchpool_bytes_resident(), 0);
    CHECK_EQ(batchpool_release(), 0);
    struct batch *first = batchpool_get();
    REQUIRE(first != NULL);
    chunk_bytes = batchpool_bytes_resident();
    REQUIRE_MSG(chunk_bytes > OS_PAGE_SIZE && (chunk_bytes & (chunk_bytes - 1)) == 0,
                "a chunk of %zu bytes", chunk_bytes);
    page_kept = chunk_bytes - OS_PAGE_SIZE; /* all but the header's page can go */
    batchpool_put(first);
    get_all();
    resident = batchpool_bytes_resident();
    chunks = resident / chunk_bytes;
    CHECK_MSG(resident % chunk_bytes == 0 && chunks * chunk_bytes >= NODES * sizeof(struct batch) &&
                  (chunks - 1) * chunk_bytes < NODES * sizeof(struct batch) + chunk_bytes,
              "%zu bytes resident for %d nodes", resident, NODES);
    CHECK_EQ(batchpool_release(), 0); /* nothing put back since the last release */
}

/* Gets NODES nodes again: from the chunks they came from before, which are
 * resident again, and from no new one. */
static void get_all_again(void)
{
    uintptr_t old_chunks[NODES];
    for (int i = 0; i < NODES; i++)
        old_chunks[i] = chunk_of(nodes[i], chunk_bytes);
    get_all();
    CHECK_EQ(batchpool_bytes_resident(), resident);
    int strangers = 0;
    for (int i = 0; i < NODES; i++) {
        bool known = false;
        for (int k = 0; k < NODES && !known; k++)
            known = chunk_of(nodes[i], chunk_bytes) == old_chunks[k];
        strangers += !known;
    }
    CHECK_MSG(strangers == 0, "%d nodes from chunks not seen before", strangers);
}

static void test_release_all(void)
{
    put_all();
    CHECK_EQ(batchpool_release(), chunks * page_kept);
    CHECK_EQ(batchpool_bytes_resident(), chunks * OS_PAGE_SIZE);
    CHECK_EQ(batchpool_release(), 0);
    get_all_again();
    put_all();

    run_threads(THREADS, churn);
    /* The threads needed far fewer nodes than the chunks hold: no new
     * chunk, and every node is back, so every chunk goes again. */
    CHECK_EQ(batchpool_bytes_resident(), resident);
    CHECK_EQ(batchpool_release(), chunks * page_kept);
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
    CHECK_EQ(batchpool_release(), (chunks - 1) * page_kept);
    CHECK_EQ(batchpool_bytes_resident(), resident - (chunks - 1) * page_kept);
    CHECK_MSG(kept->count == NODES / 2 && kept->objects[SC_BATCH_MAX - 1] == &nodes[NODES / 2],
              "a node in use lost its contents to a release");
    batchpool_put(kept);
    CHECK_EQ(batchpool_release(), page_kept);
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
