#include "api/profile_table.h"

#include <string.h>

#include "core/meta.h"
#include "platform/lock.h"

struct site {
    struct site *next;
    uint64_t hash;
    struct profile_site totals;
    void *pcs[]; /* totals.depth of them */
};

struct live {
    struct live *next;
    uintptr_t addr;
    size_t size;
    double weight;
    struct site *site;
};

/* Chained hash tables whose bucket arrays double as they fill. */
struct table {
    void **buckets;
    size_t mask, count;
};

static lock_t table_lock = LOCK_INIT;
static struct table sites, lives;

#define FIRST_BUCKETS 1024

void profile_table_init(void)
{
    lock_register_for_fork(&table_lock, LOCK_RANK_PROFILE);
}

static uint64_t mix(uint64_t h) /* splitmix64's finaliser */
{
    h ^= h >> 30;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 27;
    h *= 0x94d049bb133111ebULL;
    return h ^ (h >> 31);
}

static uint64_t stack_hash(void *const *pcs, unsigned depth)
{
    uint64_t h = depth;
    for (unsigned i = 0; i < depth; i++)
        h = mix(h ^ (uint64_t)(uintptr_t)pcs[i]);
    return h;
}

/* Every entry starts with its next pointer: link and bucket of an entry
 * are the same for both tables. */
static size_t bucket_of(const struct table *t, uint64_t hash) { return (size_t)hash & t->mask; }

/* Doubles t's buckets (or makes its first ones) when it holds as many
 * entries as buckets; hash_of gives an entry's hash. Table lock held. */
static bool make_room(struct table *t, uint64_t (*hash_of)(void *entry))
{
    size_t have = t->buckets ? t->mask + 1 : 0;
    if (t->count < have)
        return true;
    size_t want = have ? 2 * have : FIRST_BUCKETS;
    void **buckets = meta_alloc(want * sizeof *buckets);
    if (!buckets)
        return have != 0; /* a full table still works, only slower */
    for (size_t b = 0; b < have; b++)
        for (void **e = t->buckets[b], **next; e; e = next) {
            next = *e;
            size_t nb = (size_t)hash_of(e) & (want - 1);
            *e = buckets[nb];
            buckets[nb] = e;
        }
    if (have)
        meta_free(t->buckets, have * sizeof *buckets);
    t->buckets = buckets;
    t->mask = want - 1;
    return true;
}

static uint64_t site_hash(void *entry) { return ((struct site *)entry)->hash; }
static uint64_t live_hash(void *entry) { return mix(((struct live *)entry)->addr); }

static size_t site_bytes(unsigned depth) { return sizeof(struct site) + depth * sizeof(void *); }

static struct site *find_site(void *const *pcs, unsigned depth)
{
    uint64_t hash = stack_hash(pcs, depth);
    if (!make_room(&sites, site_hash))
        return NULL;
    struct site **bucket = (struct site **)&sites.buckets[bucket_of(&sites, hash)];
    for (struct site *s = *bucket; s; s = s->next)
        if (s->hash == hash && s->totals.depth == depth && !memcmp(s->pcs, pcs, depth * sizeof *pcs))
            return s;
    struct site *s = meta_alloc(site_bytes(depth));
    if (!s)
        return NULL;
    s->hash = hash;
    s->totals.depth = depth;
    memcpy(s->pcs, pcs, depth * sizeof *pcs);
    s->totals.pcs = s->pcs;
    s->next = *bucket;
    *bucket = s;
    sites.count++;
    return s;
}

void profile_table_add(uintptr_t addr, size_t size, double weight, void *const *pcs, unsigned depth)
{
    lock_acquire(&table_lock);
    struct site *s = find_site(pcs, depth);
    struct live *l = s && make_room(&lives, live_hash) ? meta_alloc(sizeof *l) : NULL;
    if (s) {
        s->totals.alloc_samples++;
        s->totals.alloc_count += weight;
        s->totals.alloc_bytes += weight * (double)size;
    }
    if (l) {
        *l = (struct live){.addr = addr, .size = size, .weight = weight, .site = s};
        s->totals.live_samples++;
        s->totals.live_count += weight;
        s->totals.live_bytes += weight * (double)size;
        struct live **bucket = (struct live **)&lives.buckets[bucket_of(&lives, live_hash(l))];
        l->next = *bucket;
        *bucket = l;
        lives.count++;
    }
    lock_release(&table_lock);
}

bool profile_table_remove(uintptr_t addr)
{
    lock_acquire(&table_lock);
    struct live *l = NULL;
    if (lives.buckets) {
        struct live **link = (struct live **)&lives.buckets[(size_t)mix(addr) & lives.mask];
        while (*link && (*link)->addr != addr)
            link = &(*link)->next;
        l = *link;
        if (l) {
            *link = l->next;
            lives.count--;
            struct profile_site *t = &l->site->totals;
            /* The last live sample leaves exact zeros, not rounding residue. */
            if (--t->live_samples == 0) {
                t->live_count = t->live_bytes = 0;
            } else {
                t->live_count -= l->weight;
                t->live_bytes -= l->weight * (double)l->size;
            }
        }
    }
    lock_release(&table_lock);
    if (l)
        meta_free(l, sizeof *l);
    return l != NULL;
}

void profile_table_visit(void (*visit)(const struct profile_site *site, void *ctx), void *ctx)
{
    lock_acquire(&table_lock);
    for (size_t b = 0; sites.buckets && b <= sites.mask; b++)
        for (struct site *s = sites.buckets[b]; s; s = s->next)
            visit(&s->totals, ctx);
    lock_release(&table_lock);
}
