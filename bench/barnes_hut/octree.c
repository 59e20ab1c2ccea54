#include "octree.h"

#include <math.h>
#include <stdlib.h>

#include "bench_report.h"

/* Below this depth coincident bodies are merged into one leaf rather than
 * split forever. */
#define MAX_DEPTH 40
#define SOFTENING_SQUARED 1e-6

struct octree_node *octree_new_cell(const double center[3], double half_width, uint64_t *allocations)
{
    struct octree_node *node = bench_check_alloc(malloc(sizeof *node), "octree node");
    for (int axis = 0; axis < 3; axis++) {
        node->center[axis] = center[axis];
        node->mass_center[axis] = 0.0;
    }
    node->half_width = half_width;
    node->mass = 0.0;
    node->count = 0;
    node->body = -1;
    for (int i = 0; i < 8; i++)
        node->child[i] = NULL;
    (*allocations)++;
    return node;
}

static void add_mass(struct octree_node *node, const double position[3], double mass, long count)
{
    double total = node->mass + mass;
    for (int axis = 0; axis < 3; axis++)
        node->mass_center[axis] = (node->mass_center[axis] * node->mass + position[axis] * mass) / total;
    node->mass = total;
    node->count += count;
}

static int octant_of(const struct octree_node *node, const double position[3])
{
    return (position[0] >= node->center[0]) | (position[1] >= node->center[1]) << 1 |
           (position[2] >= node->center[2]) << 2;
}

static struct octree_node *child_for(struct octree_node *node, const double position[3], uint64_t *allocations)
{
    int octant = octant_of(node, position);
    if (node->child[octant] == NULL) {
        double quarter = node->half_width / 2;
        double center[3];
        for (int axis = 0; axis < 3; axis++)
            center[axis] = node->center[axis] + ((octant >> axis) & 1 ? quarter : -quarter);
        node->child[octant] = octree_new_cell(center, quarter, allocations);
    }
    return node->child[octant];
}

static void insert_at_depth(struct octree_node *node, const struct body *bodies, long index, int depth,
                            uint64_t *allocations)
{
    const struct body *body = &bodies[index];
    if (node->count == 0) {
        node->body = index;
        add_mass(node, body->position, body->mass, 1);
        return;
    }
    if (node->body >= 0) {
        if (depth >= MAX_DEPTH) {
            add_mass(node, body->position, body->mass, 1);
            return;
        }
        /* Split the leaf: its body moves down a level. Its mass is already
         * counted here, so only the child gains it. */
        long resident = node->body;
        node->body = -1;
        insert_at_depth(child_for(node, bodies[resident].position, allocations), bodies, resident, depth + 1,
                        allocations);
    }
    add_mass(node, body->position, body->mass, 1);
    insert_at_depth(child_for(node, body->position, allocations), bodies, index, depth + 1, allocations);
}

void octree_insert(struct octree_node *node, const struct body *bodies, long index, uint64_t *allocations)
{
    insert_at_depth(node, bodies, index, 0, allocations);
}

void octree_adopt_children(struct octree_node *parent)
{
    for (int i = 0; i < 8; i++) {
        const struct octree_node *child = parent->child[i];
        if (child != NULL && child->count > 0)
            add_mass(parent, child->mass_center, child->mass, child->count);
    }
}

static void attract(const double from[3], double mass, const double to[3], double acceleration[3])
{
    double delta[3], distance_squared = SOFTENING_SQUARED;
    for (int axis = 0; axis < 3; axis++) {
        delta[axis] = from[axis] - to[axis];
        distance_squared += delta[axis] * delta[axis];
    }
    double scale = mass / (distance_squared * sqrt(distance_squared));
    for (int axis = 0; axis < 3; axis++)
        acceleration[axis] += delta[axis] * scale;
}

void octree_accumulate(const struct octree_node *node, const struct body *bodies, long index, double theta,
                       double acceleration[3])
{
    if (node == NULL || node->count == 0 || node->body == index)
        return;
    const double *position = bodies[index].position;
    if (node->body >= 0) {
        attract(node->mass_center, node->mass, position, acceleration);
        return;
    }
    double distance_squared = 0.0;
    for (int axis = 0; axis < 3; axis++) {
        double d = node->mass_center[axis] - position[axis];
        distance_squared += d * d;
    }
    double width = 2 * node->half_width;
    if (width * width < theta * theta * distance_squared) {
        attract(node->mass_center, node->mass, position, acceleration);
        return;
    }
    for (int i = 0; i < 8; i++)
        octree_accumulate(node->child[i], bodies, index, theta, acceleration);
}

uint64_t octree_free(struct octree_node *node)
{
    if (node == NULL)
        return 0;
    uint64_t freed = 1;
    for (int i = 0; i < 8; i++)
        freed += octree_free(node->child[i]);
    free(node);
    return freed;
}
