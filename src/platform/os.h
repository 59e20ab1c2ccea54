/* Platform layer: the only code that asks the kernel for memory or facts
 * about the machine. Everything returns failure instead of crashing. */
#ifndef COREALLOC_OS_H
#define COREALLOC_OS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OS_PAGE_SHIFT 12
#define OS_PAGE_SIZE ((size_t)1 << OS_PAGE_SHIFT)

/* How pages go back: MADV_DONTNEED, MADV_FREE, or unmapped (the address
 * space too; the range must be mapped again before it is used). */
enum os_purge_kind { OS_PURGE_DONTNEED, OS_PURGE_FREE, OS_PURGE_UNMAP };

/* Anonymous read-write memory that is charged only when touched. With a
 * non-zero hint the mapping is placed exactly there or not at all. */
void *os_map(size_t size, uintptr_t hint);
/* True from the first mapping refused for want of address space under a
 * limit (RLIMIT_AS, which a program may lower at any time) on: address
 * space then goes back as memory is freed. */
bool os_address_space_short(void);
/* The address-space limit the process runs under now (RLIMIT_AS), in
 * bytes; SIZE_MAX without one. */
size_t os_address_space_limit(void);
/* Below this a limit is tight: what the allocator maps ahead of use (tens
 * to hundreds of MiB of address space, untouched) would take most of it. */
#define OS_ADDRESS_SPACE_TIGHT ((size_t)1 << 30)
/* As os_map, aligned to `align` (a power of two >= page size). */
void *os_map_aligned(size_t size, size_t align);
void os_unmap(void *addr, size_t size);
/* Address space only: readable (as zeros) but not writable, uncharged and
 * skipped by core dumps until parts of it are committed. Readable, so the
 * free path may look at any address inside a reservation without knowing
 * whether it was ever committed. */
void *os_reserve(size_t size, uintptr_t hint);
void *os_reserve_aligned(size_t size, size_t align);
/* Makes reserved pages writable and dumped (they are still charged only
 * when touched). */
bool os_commit(void *addr, size_t size);
/* Makes committed pages a guard: any access faults (secure mode puts one
 * after every superblock and large block). Returns false on failure. */
bool os_guard(void *addr, size_t size);
/* Gives the pages back; the range stays mapped and reads as zero (or as the
 * old contents until reused, for OS_PURGE_FREE), or is unmapped for
 * OS_PURGE_UNMAP. Returns false on failure. */
bool os_purge(void *addr, size_t size, enum os_purge_kind kind);
/* Moves the pages of [from, from+size) to `to` (inside our own mapping)
 * without copying; `from` stays mapped and reads as zero. */
bool os_move_pages(void *from, void *to, size_t size);

/* Whether transparent huge pages may back a range (a hint: the kernel's own
 * policy still decides). */
void os_advise_huge_pages(void *addr, size_t size, bool allow);
/* What every new mapping gets from now on, until advised otherwise. */
void os_set_huge_pages_default(bool allow);
void os_sleep_ns(uint64_t ns);
/* Sleeps while *word holds expected (or until woken, or a signal); wakes up
 * to count sleepers of word. Process-private words only. */
void os_futex_wait(uint32_t *word, uint32_t expected);
void os_futex_wake(uint32_t *word, int count);
/* 64 unpredictable bits from the kernel (getrandom), or, where it has none
 * to give, the clock mixed with addresses. Never allocates. */
uint64_t os_random_seed(void);

/* valgrind keeps shadow state for every mapped byte (and placing the zones
 * may take a terabyte reservation for a moment), so zones stay off under
 * it. */
bool os_under_valgrind(void);
size_t os_page_size(void);
unsigned os_cpu_count(void);
/* Reads up to size-1 bytes of a small /proc or /sys file into buf and
 * terminates it; returns the length (0 when unreadable). No stdio: it may
 * allocate, and this runs inside malloc. */
size_t os_read_small_file(const char *path, char *buf, size_t size);
/* Copies a file of any length (/proc/self/maps) to fd, without stdio.
 * Returns 0, or the errno of the failure. */
int os_copy_file(const char *path, int fd);
/* The mapping of the process that holds addr (from /proc/self/maps): its
 * bounds in *start and *end. False when no mapping holds it. */
bool os_mapping_of(uintptr_t addr, uintptr_t *start, uintptr_t *end);
/* Resident set size of the process, current and peak, in bytes. */
size_t os_rss_current(void);
size_t os_rss_peak(void);
uint64_t os_monotonic_ns(void);
unsigned long os_process_id(void);
/* write(2) until done. Returns 0, or the errno of the failure (errno itself
 * is left alone: diagnostics must not disturb the caller's). */
int os_write_all(int fd, const char *buf, size_t len);
/* Creates or truncates a file for a report; -1 on failure. */
int os_create_file(const char *path);
void os_close(int fd);
void os_abort(void) __attribute__((noreturn));

#endif
