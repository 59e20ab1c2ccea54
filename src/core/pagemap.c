#include "core/pagemap.h"

#include "platform/lock.h"
#include "platform/os.h"

/* 48-bit addresses, 4 KiB pages: 36 bits of page number in three levels. */
#define LEVEL_BITS 12
#define LEVEL_SIZE ((size_t)1 << LEVEL_BITS)
#define LEVEL_MASK (LEVEL_SIZE - 1)
#define ADDRESS_BITS 48

struct leaf { uintptr_t entry[LEVEL_SIZE]; };
struct node { struct leaf *leaf[LEVEL_SIZE]; };

/* The first node and leaf the map needs, in place: a process whose large
 * spans fit one leaf's 16 MiB maps none of its own (a mapping costs more
 * than the faults of the few pages it touches). Defined first: gcc puts
 * later definitions at lower addresses, so the root and the small
 * variables stay on the page of the previous file's, which start-up
 * touches anyway, and these tables come after them. */
static struct leaf first_leaf;
static struct node first_node;
static struct node *root[LEVEL_SIZE];
static lock_t grow_lock = LOCK_INIT;
static size_t bytes_mapped;
static bool first_node_taken, first_leaf_taken;

void pagemap_init(void)
{
    lock_register_for_fork(&grow_lock, LOCK_RANK_PAGEMAP);
}

uintptr_t pagemap_get(uintptr_t addr)
{
    if (addr >> ADDRESS_BITS)
        return 0;
    uintptr_t page = addr >> OS_PAGE_SHIFT;
    struct node *n = __atomic_load_n(&root[page >> (2 * LEVEL_BITS)], __ATOMIC_ACQUIRE);
    if (!n)
        return 0;
    struct leaf *l = __atomic_load_n(&n->leaf[(page >> LEVEL_BITS) & LEVEL_MASK], __ATOMIC_ACQUIRE);
    if (!l)
        return 0;
    return __atomic_load_n(&l->entry[page & LEVEL_MASK], __ATOMIC_ACQUIRE);
}

/* Only writers grow the map, and they read a slot as they would write it:
 * a compare-and-swap of NULL for NULL (a locked write, even when it fails).
 * A slot on a page never touched then costs one page fault, where a load
 * would map the zero page and the store after it copy it: two. The first
 * growth of each level takes its table in place (spare), later ones map
 * their own. */
_Static_assert(sizeof(struct node) == sizeof(struct leaf), "one table size for both levels");
static void *grow(void **slot, void *spare, bool *spare_taken)
{
    void *p = NULL;
    if (!__atomic_compare_exchange_n(slot, &p, NULL, false, __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE))
        return p;
    lock_acquire(&grow_lock);
    p = *slot;
    if (!p) {
        if (!*spare_taken) {
            *spare_taken = true;
            p = spare;
        } else if ((p = os_map(sizeof(struct leaf), 0))) {
            bytes_mapped += sizeof(struct leaf);
        }
        if (p)
            __atomic_store_n(slot, p, __ATOMIC_RELEASE);
    }
    lock_release(&grow_lock);
    return p;
}

static struct leaf *leaf_for(uintptr_t page)
{
    struct node *n = grow((void **)&root[page >> (2 * LEVEL_BITS)], &first_node, &first_node_taken);
    if (!n)
        return NULL;
    return grow((void **)&n->leaf[(page >> LEVEL_BITS) & LEVEL_MASK], &first_leaf, &first_leaf_taken);
}

bool pagemap_set_range(uintptr_t addr, size_t size, uintptr_t value)
{
    if ((addr + size) >> ADDRESS_BITS)
        return false;
    uintptr_t page = addr >> OS_PAGE_SHIFT;
    uintptr_t end = (addr + size + OS_PAGE_SIZE - 1) >> OS_PAGE_SHIFT;
    while (page < end) {
        struct leaf *l = leaf_for(page);
        if (!l)
            return false;
        uintptr_t stop = (page | LEVEL_MASK) + 1;
        if (stop > end)
            stop = end;
        for (; page < stop; page++)
            __atomic_store_n(&l->entry[page & LEVEL_MASK], value, __ATOMIC_RELEASE);
    }
    return true;
}

bool pagemap_set(uintptr_t addr, uintptr_t value)
{
    return pagemap_set_range(addr, 1, value);
}

/* Entries held by one page of a leaf. */
#define ENTRIES_PER_PAGE (OS_PAGE_SIZE / sizeof(uintptr_t))

void pagemap_forget_range(uintptr_t addr, size_t size)
{
    if ((addr + size) >> ADDRESS_BITS)
        return;
    /* Whole leaf pages inside the range only: their neighbours' entries may
     * still be read. */
    uintptr_t page = ((addr >> OS_PAGE_SHIFT) + ENTRIES_PER_PAGE - 1) & ~(uintptr_t)(ENTRIES_PER_PAGE - 1);
    uintptr_t end = ((addr + size) >> OS_PAGE_SHIFT) & ~(uintptr_t)(ENTRIES_PER_PAGE - 1);
    while (page < end) {
        uintptr_t stop = (page | LEVEL_MASK) + 1;
        if (stop > end)
            stop = end;
        struct node *n = __atomic_load_n(&root[page >> (2 * LEVEL_BITS)], __ATOMIC_ACQUIRE);
        struct leaf *l = n ? __atomic_load_n(&n->leaf[(page >> LEVEL_BITS) & LEVEL_MASK], __ATOMIC_ACQUIRE) : NULL;
        if (l)
            os_purge(&l->entry[page & LEVEL_MASK], (stop - page) * sizeof(uintptr_t), OS_PURGE_DONTNEED);
        page = stop;
    }
}

size_t pagemap_bytes_mapped(void)
{
    return __atomic_load_n(&bytes_mapped, __ATOMIC_RELAXED);
}
