/* barnes-hut (seed 001's real-application shape): an N-body simulation that
 * rebuilds its octree from the heap every step. The cube is cut into 8^k
 * top cells (8^k >= T); each thread builds the subtrees of its cells, one
 * thread joins them under the top levels, all threads compute forces, and
 * each subtree is freed by a different thread than the one that built it,
 * as in a parallel program that hands work around. Checks that the tree
 * holds every body and all its mass, and that every node allocated was
 * freed. Reports body-steps per second. */
#include "bench_args.h"
#include "bench_clock.h"
#include "bench_gate.h"
#include "bench_layout.h"
#include "bench_report.h"
#include "rng.h"
#include "bench_threads.h"
#include "octree.h"

#include <math.h>
#include <stdlib.h>

#define THETA 0.5
#define TIME_STEP 1e-4

struct worker {
    _Alignas(BENCH_CACHE_LINE) pthread_t thread;
    long index;
    uint64_t allocations;
    uint64_t frees;
};

static struct bench_gate gate;
static pthread_barrier_t phase_done;
static long thread_count = 1;
static long body_count = 10000;
static long steps = 10;
static struct body *bodies;

/* The top cells: level `top_levels` of the octree, 8^top_levels of them. */
static int top_levels;
static long top_cells;
static long *bodies_by_cell; /* body indices grouped by top cell */
static long *cell_start;     /* top cell c holds bodies_by_cell[cell_start[c] .. cell_start[c+1]) */
static struct octree_node **cell_roots;
static struct octree_node **upper_nodes; /* the levels above the top cells */
static long upper_node_count;
static struct octree_node *root;

static long cell_of(const double position[3])
{
    long per_axis = 1L << top_levels, cell = 0;
    for (int axis = 2; axis >= 0; axis--) {
        long coordinate = (long)(position[axis] * (double)per_axis);
        coordinate = coordinate < 0 ? 0 : (coordinate >= per_axis ? per_axis - 1 : coordinate);
        cell = cell * per_axis + coordinate;
    }
    return cell;
}

static void group_bodies_by_cell(void)
{
    for (long c = 0; c <= top_cells; c++)
        cell_start[c] = 0;
    for (long i = 0; i < body_count; i++)
        cell_start[cell_of(bodies[i].position) + 1]++;
    for (long c = 0; c < top_cells; c++)
        cell_start[c + 1] += cell_start[c];
    long *next = bench_check_alloc(malloc((size_t)top_cells * sizeof *next), "cell cursors");
    for (long c = 0; c < top_cells; c++)
        next[c] = cell_start[c];
    for (long i = 0; i < body_count; i++)
        bodies_by_cell[next[cell_of(bodies[i].position)]++] = i;
    free(next);
}

static void build_cell(long cell, uint64_t *allocations)
{
    cell_roots[cell] = NULL;
    if (cell_start[cell] == cell_start[cell + 1])
        return;
    long per_axis = 1L << top_levels, coordinates[3] = { cell % per_axis, (cell / per_axis) % per_axis,
                                                       cell / (per_axis * per_axis) };
    double width = 1.0 / (double)per_axis, center[3];
    for (int axis = 0; axis < 3; axis++)
        center[axis] = ((double)coordinates[axis] + 0.5) * width;
    struct octree_node *node = octree_new_cell(center, width / 2, allocations);
    for (long k = cell_start[cell]; k < cell_start[cell + 1]; k++)
        octree_insert(node, bodies, bodies_by_cell[k], allocations);
    cell_roots[cell] = node;
}

/* Builds the node of cell (x, y, z) at `level` above the top cells. */
static struct octree_node *build_upper(int level, long x, long y, long z, uint64_t *allocations)
{
    if (level == top_levels) {
        long per_axis = 1L << top_levels;
        return cell_roots[(z * per_axis + y) * per_axis + x];
    }
    double width = 1.0 / (double)(1L << level);
    double center[3] = { ((double)x + 0.5) * width, ((double)y + 0.5) * width, ((double)z + 0.5) * width };
    struct octree_node *node = octree_new_cell(center, width / 2, allocations);
    for (int octant = 0; octant < 8; octant++)
        node->child[octant] = build_upper(level + 1, 2 * x + (octant & 1), 2 * y + (octant >> 1 & 1),
                                          2 * z + (octant >> 2 & 1), allocations);
    octree_adopt_children(node);
    upper_nodes[upper_node_count++] = node;
    return node;
}

static void check_tree(void)
{
    double total_mass = 0.0;
    for (long i = 0; i < body_count; i++)
        total_mass += bodies[i].mass;
    if (root == NULL || root->count != body_count)
        bench_check_failed("barnes-hut: the tree holds %ld of %ld bodies", root ? root->count : 0, body_count);
    if (fabs(root->mass - total_mass) > 1e-9 * total_mass)
        bench_check_failed("barnes-hut: the tree's mass %g differs from the bodies' %g", root->mass, total_mass);
}

static void advance(long i)
{
    struct body *body = &bodies[i];
    for (int axis = 0; axis < 3; axis++) {
        body->velocity[axis] += body->acceleration[axis] * TIME_STEP;
        /* Periodic box: a body leaving one face re-enters at the other. */
        double position = body->position[axis] + body->velocity[axis] * TIME_STEP;
        body->position[axis] = position - floor(position);
    }
}

static void *worker_body(void *arg)
{
    struct worker *self = arg;
    long me = self->index;
    bench_gate_pass(&gate);
    for (long step = 0; step < steps; step++) {
        if (me == 0)
            group_bodies_by_cell();
        pthread_barrier_wait(&phase_done);
        for (long c = me; c < top_cells; c += thread_count)
            build_cell(c, &self->allocations);
        pthread_barrier_wait(&phase_done);
        if (me == 0) {
            upper_node_count = 0;
            root = build_upper(0, 0, 0, 0, &self->allocations);
            check_tree();
        }
        pthread_barrier_wait(&phase_done);
        for (long i = me; i < body_count; i += thread_count) {
            double *acceleration = bodies[i].acceleration;
            acceleration[0] = acceleration[1] = acceleration[2] = 0.0;
            octree_accumulate(root, bodies, i, THETA, acceleration);
        }
        pthread_barrier_wait(&phase_done);
        for (long i = me; i < body_count; i += thread_count)
            advance(i);
        /* Free the cells the next thread built. */
        for (long c = (me + 1) % thread_count; c < top_cells; c += thread_count)
            self->frees += octree_free(cell_roots[c]);
        if (me == 0) {
            for (long n = 0; n < upper_node_count; n++)
                free(upper_nodes[n]);
            self->frees += (uint64_t)upper_node_count;
        }
        pthread_barrier_wait(&phase_done);
    }
    return NULL;
}

static void place_bodies(long seed)
{
    struct rng rng = rng_seeded((uint64_t)seed);
    for (long i = 0; i < body_count; i++) {
        struct body *body = &bodies[i];
        for (int axis = 0; axis < 3; axis++) {
            body->position[axis] = (double)rng_below(&rng, 1u << 30) / (double)(1u << 30);
            body->velocity[axis] = ((double)rng_below(&rng, 2001) - 1000.0) * 1e-4;
            body->acceleration[axis] = 0.0;
        }
        body->mass = 1.0 / (double)body_count;
    }
}

int main(int argc, char **argv)
{
    long seed = 1;
    const struct bench_option options[] = {
        BENCH_THREADS(&thread_count),
        BENCH_LONG('b', "bodies", &body_count, 1, 100000000),
        BENCH_LONG('s', "steps", &steps, 1, 1000000),
        BENCH_SEED('S', &seed),
        BENCH_OPTIONS_END,
    };
    const struct bench_command command = { "barnes-hut", options, NULL, 0, 0 };
    bench_parse_command(&command, argc, argv);

    for (top_levels = 0, top_cells = 1; top_cells < thread_count; top_levels++)
        top_cells *= 8;
    bodies = bench_check_alloc(malloc((size_t)body_count * sizeof *bodies), "bodies");
    bodies_by_cell = bench_check_alloc(malloc((size_t)body_count * sizeof *bodies_by_cell), "body order");
    cell_start = bench_check_alloc(malloc((size_t)(top_cells + 1) * sizeof *cell_start), "cell starts");
    cell_roots = bench_check_alloc(malloc((size_t)top_cells * sizeof *cell_roots), "cell roots");
    /* Fewer than top_cells / 7 + 1 nodes sit above the top cells. */
    upper_nodes = bench_check_alloc(malloc((size_t)(top_cells / 7 + 1) * sizeof *upper_nodes), "upper nodes");
    place_bodies(seed);

    struct worker *workers = bench_alloc_lines((size_t)thread_count, sizeof *workers);
    bench_gate_init(&gate, (int)thread_count);
    pthread_barrier_init(&phase_done, NULL, (unsigned)thread_count);
    for (long t = 0; t < thread_count; t++) {
        workers[t].index = t;
        workers[t].thread = bench_thread_start(worker_body, &workers[t]);
    }
    double start = bench_gate_open_when_ready(&gate);
    uint64_t allocations = 0, frees = 0;
    for (long t = 0; t < thread_count; t++) {
        bench_thread_join(workers[t].thread);
        allocations += workers[t].allocations;
        frees += workers[t].frees;
    }
    double elapsed = bench_now_seconds() - start;
    pthread_barrier_destroy(&phase_done);
    if (allocations != frees)
        bench_check_failed("barnes-hut: %llu tree nodes allocated but %llu freed", (unsigned long long)allocations,
                           (unsigned long long)frees);
    free(workers);
    free(upper_nodes);
    free(cell_roots);
    free(cell_start);
    free(bodies_by_cell);
    free(bodies);
    bench_result("barnes-hut", "threads=%ld bodies=%ld steps=%ld seconds=%.6f nodes=%llu body_steps_per_sec=%.1f",
                 thread_count, body_count, steps, elapsed, (unsigned long long)allocations,
                 (double)(body_count * steps) / elapsed);
    return 0;
}
