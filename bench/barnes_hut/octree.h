/* The Barnes-Hut octree: one heap node per cell, built by inserting bodies
 * one at a time; each node keeps the mass and centre of mass of its cell so
 * that far-away cells act as a single body. */
#ifndef BARNES_HUT_OCTREE_H
#define BARNES_HUT_OCTREE_H

#include <stdint.h>

struct body {
    double position[3];
    double velocity[3];
    double acceleration[3];
    double mass;
};

struct octree_node {
    double center[3];
    double half_width;
    double mass;
    double mass_center[3];
    long count; /* bodies in this cell */
    long body;  /* the body of a leaf, or -1 for an inner or empty cell */
    struct octree_node *child[8];
};

/* An empty cell; `allocations` counts nodes for the leak check. */
struct octree_node *octree_new_cell(const double center[3], double half_width, uint64_t *allocations);

void octree_insert(struct octree_node *node, const struct body *bodies, long index, uint64_t *allocations);

/* Makes `parent` the combined cell of its children (used for the levels
 * above the per-thread subtrees). */
void octree_adopt_children(struct octree_node *parent);

/* Adds the acceleration on body `index` from every body in `node`'s cell,
 * opening cells seen at an angle wider than `theta`. */
void octree_accumulate(const struct octree_node *node, const struct body *bodies, long index, double theta,
                       double acceleration[3]);

/* Frees the subtree; returns how many nodes it freed. */
uint64_t octree_free(struct octree_node *node);

#endif
