#include "replay_check.h"

#include <pthread.h>

#include "../common/rng.h"
#include "arena.h"

uint64_t check_required_alignment(uint64_t size, unsigned requested_log2)
{
    if (requested_log2 > 0)
        return (uint64_t)1 << requested_log2;
    uint64_t lowest_bit = size & (~size + 1); /* an object of this size needs no more */
    return size == 0 || lowest_bit > 16 ? (size == 0 ? 1 : 16) : lowest_bit;
}

/* A treap ordered by start address. */
struct live_node {
    uintptr_t start;
    uintptr_t end;
    uint64_t priority;
    struct live_node *left, *right;
};

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct live_node *live_root;
static struct live_node *spare_nodes;
static struct rng priorities;
static bool priorities_seeded;

/* Random treap priorities keep the tree balanced whatever the address order.
 * Live lock held. */
static uint64_t next_priority(void)
{
    if (!priorities_seeded) {
        priorities = rng_seeded(0);
        priorities_seeded = true;
    }
    return rng_next(&priorities);
}

/* Splits tree into nodes with start < key (left) and the rest (right). */
static void split(struct live_node *tree, uintptr_t key, struct live_node **left, struct live_node **right)
{
    if (tree == NULL) {
        *left = *right = NULL;
    } else if (tree->start < key) {
        split(tree->right, key, &tree->right, right);
        *left = tree;
    } else {
        split(tree->left, key, left, &tree->left);
        *right = tree;
    }
}

static struct live_node *merge(struct live_node *left, struct live_node *right)
{
    if (left == NULL)
        return right;
    if (right == NULL)
        return left;
    if (left->priority > right->priority) {
        left->right = merge(left->right, right);
        return left;
    }
    right->left = merge(left, right->left);
    return right;
}

static const struct live_node *last_at_or_before(uintptr_t key)
{
    const struct live_node *best = NULL;
    for (const struct live_node *n = live_root; n != NULL;)
        n = n->start <= key ? (best = n, n->right) : n->left;
    return best;
}

static const struct live_node *first_after(uintptr_t key)
{
    const struct live_node *best = NULL;
    for (const struct live_node *n = live_root; n != NULL;)
        n = n->start > key ? (best = n, n->left) : n->right;
    return best;
}

bool check_live_insert(uintptr_t start, uint64_t size, uintptr_t *other)
{
    uintptr_t end = start + (size == 0 ? 1 : size); /* even empty blocks are distinct */
    pthread_mutex_lock(&live_lock);
    const struct live_node *before = last_at_or_before(start);
    const struct live_node *after = first_after(start);
    bool overlaps = (before != NULL && before->end > start) || (after != NULL && after->start < end);
    if (overlaps) {
        *other = before != NULL && before->end > start ? before->start : after->start;
    } else {
        struct live_node *node = spare_nodes;
        if (node != NULL)
            spare_nodes = node->right;
        else
            node = arena_alloc(sizeof *node);
        *node = (struct live_node){ start, end, next_priority(), NULL, NULL };
        struct live_node *left, *right;
        split(live_root, start, &left, &right);
        live_root = merge(merge(left, node), right);
    }
    pthread_mutex_unlock(&live_lock);
    return !overlaps;
}

void check_live_remove(uintptr_t start)
{
    pthread_mutex_lock(&live_lock);
    struct live_node *left, *middle, *right;
    split(live_root, start, &left, &middle);
    split(middle, start + 1, &middle, &right);
    if (middle != NULL) {
        middle->right = spare_nodes;
        spare_nodes = middle;
    }
    live_root = merge(left, right);
    pthread_mutex_unlock(&live_lock);
}
