/* Live objects of the observed program, keyed by address. Sharded open
 * addressing in mmap'd memory, so it never calls the allocator it observes. */
#ifndef COREALLOC_POINTER_TABLE_H
#define COREALLOC_POINTER_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pointer_record {
    uintptr_t address;
    uint64_t size;
    uint64_t tag;            /* the observer's number for the object */
    uint32_t thread;         /* index of the allocating thread */
    uint32_t realloc_count;  /* reallocs that led to this object */
};

/* Returns false when memory for the table cannot be mapped. */
bool pointer_table_insert(const struct pointer_record *record);
/* Removes the record for address into *out; false when it is not there. */
bool pointer_table_remove(uintptr_t address, struct pointer_record *out);

/* fork() support: hold every shard lock across the fork. */
void pointer_table_lock_all(void);
void pointer_table_unlock_all(void);

#endif
