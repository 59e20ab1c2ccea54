// The OS refusing memory (tests/support/os_fault.h: corealloc's mmap,
// mprotect, mremap and madvise calls refused with ENOMEM): every entry
// point fails as it must (NULL and ENOMEM, ENOMEM returned by
// posix_memalign, std::bad_alloc from operator new, NULL from the nothrow
// forms, the new_handler called first), no block already allocated is lost
// or changed (tests/support/shadow.h), and allocation works again once the
// OS gives memory again. The refusals come at every call, at calls of one
// kind, at every n-th call from the start of a process (its start-up
// included: a child process per case), and where the refused call is a
// purge (whose pages keep their contents) or a move of pages (mremap).
// The random sequences under refusals are the fuzzer's (alloc_fuzz
// --os-faults).
//
// usage: alloc_os_faults              every case
//        alloc_os_faults --start-up   (a child: its start-up was under OS_FAULT_EVERY)
#include "check.h"
#include "entry_points.h"
#include "memory.h"
#include "os_fault.h"
#include "pattern.h"
#include "probe.h"
#include "shadow.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <malloc.h>
#include <new>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace {

using shadow::Block;
using std::size_t;

// Blocks allocated before any refusal and kept to the end: checked after
// every case.
constexpr unsigned POPULATION = 300;
Block population[POPULATION];

void populate()
{
    size_t count;
    const entry::Allocator *all = entry::allocators(&count);
    for (unsigned i = 0; i < POPULATION; i++) {
        size_t size = (size_t(1) << (i % 19)) + i; // 1 byte to 256 KiB
        entry::Result r = all[i % count].call(size, 32);
        REQUIRE(r.ptr && shadow::claim(population[i], r, all[i % count].family, 32, all[i % count].name));
    }
}

void population_intact(const char *when)
{
    for (const Block &b : population)
        shadow::intact(b, when);
}

// Blocks a case allocates, until it releases them all: more than the
// memory corealloc can have ready when the OS stops giving it (the
// superblocks a zone commits at once, the shared pool, free spans).
constexpr unsigned HELD_MAX = 16384;
Block held[HELD_MAX];
unsigned held_count;

void release_held()
{
    for (unsigned i = 0; i < held_count; i++)
        shadow::release(held[i], entry::releaser_for(held[i].family, i));
    held_count = 0;
}

unsigned long refused_so_far(enum os_call kind)
{
    struct os_fault_counts c;
    os_fault_counts(&c);
    return c.refused[kind];
}

unsigned long refused_in_all()
{
    unsigned long n = 0;
    for (unsigned k = 0; k < OS_CALL_KINDS; k++)
        n += refused_so_far(static_cast<os_call>(k));
    return n;
}

// More than corealloc has mapped: a block it can only have from the OS.
size_t beyond_mapped() { return static_cast<size_t>(stats_number("mapped_bytes")) + MIB; }

// With every call of corealloc's to the OS refused, allocations of size by
// a succeed while memory corealloc already has lasts, then fail as a must
// for no memory; once the OS gives memory again, the call succeeds (for
// `then` bytes). Every block is kept (in held), so the memory at hand is
// used up once for all entry points. Returns the successes.
unsigned refused_then_recovered(const entry::Allocator &a, size_t size, size_t then)
{
    const size_t align = 64;
    unsigned before = held_count;
    entry::Result r{};
    os_fault_every(1, OS_CALL_ALL);
    while (held_count < HELD_MAX) {
        r = a.call(size, align);
        if (!r.ptr)
            break;
        shadow::claim(held[held_count++], r, a.family, align, a.name);
    }
    os_fault_off();
    CHECK_MSG(held_count < HELD_MAX, "%s(%zu): %u successes with the OS refusing all memory", a.name, size,
              HELD_MAX - before);
    CHECK_MSG(entry::failed_for_memory(r, a.failure), "%s(%zu) with the OS refusing memory: %p, error %d (%s)",
              a.name, size, r.ptr, r.error, std::strerror(r.error));
    for (unsigned i = before; i < held_count; i++)
        shadow::intact(held[i], "while the OS refused memory");
    unsigned successes = held_count - before;
    r = a.call(then, align);
    CHECK_MSG(r.ptr, "%s(%zu) once the OS gives memory again: error %d", a.name, then, r.error);
    if (r.ptr && held_count < HELD_MAX)
        shadow::claim(held[held_count++], r, a.family, align, a.name);
    return successes;
}

void every_allocator_refused()
{
    size_t count;
    const entry::Allocator *all = entry::allocators(&count);
    for (size_t i = 0; i < count; i++) {
        // A size class of its own (mostly), so some blocks come from
        // memory at hand first; and a large block that cannot.
        size_t small = 1536 + i * 1152;
        unsigned at_hand = refused_then_recovered(all[i], small, small);
        CHECK_EQ(refused_then_recovered(all[i], beyond_mapped(), MIB), 0);
        std::printf("  %-30s refused after %u blocks of %zu bytes from memory at hand\n", all[i].name, at_hand,
                    small);
        population_intact("after refusals");
    }
    release_held();
}

// Growing a block (small, then large) beyond what corealloc has, with the
// OS refusing memory: ENOMEM, the block as it was; once the OS gives
// memory, the resize succeeds.
void every_resizer_refused()
{
    size_t count, allocators;
    const entry::Resizer *all = entry::resizers(&count);
    const entry::Allocator &malloc_call = entry::allocators(&allocators)[0];
    for (size_t i = 0; i < count; i++)
        for (size_t start : {size_t(100), 2 * MIB}) {
            Block b;
            entry::Result r = malloc_call.call(start, 0);
            REQUIRE(r.ptr && shadow::claim(b, r, entry::Family::Malloc, 0, "malloc"));
            bool ok;
            size_t size = beyond_mapped();
            os_fault_every(1, OS_CALL_ALL);
            r = shadow::resize(b, all[i], size, &ok);
            os_fault_off();
            CHECK_MSG(ok && !r.ptr && r.error == ENOMEM, "%s of %zu bytes to %zu with the OS refusing memory: %p, error %d",
                      all[i].name, start, size, r.ptr, r.error);
            r = shadow::resize(b, all[i], 2 * start, &ok);
            CHECK_MSG(ok && r.ptr, "%s of %zu bytes to %zu once the OS gives memory again: error %d", all[i].name,
                      start, 2 * start, r.error);
            if (b.ptr)
                shadow::release(b, entry::releaser_for(b.family, i));
            population_intact("after refused resizes");
        }
}

// operator new with a new_handler: when the OS refuses, the handler runs,
// and when it makes memory available (here: the OS gives again), the
// allocation succeeds; the nothrow forms call it too.
int handler_calls;
void give_memory_again()
{
    handler_calls++;
    os_fault_off();
}

void new_handler_called()
{
    std::new_handler old = std::set_new_handler(give_memory_again);
    size_t count;
    const entry::Allocator *all = entry::allocators(&count);
    for (size_t i = 0; i < count; i++) {
        if (all[i].failure != entry::Failure::Thrown && all[i].failure != entry::Failure::Null)
            continue;
        handler_calls = 0;
        size_t size = 2 * MIB + i * 4096;
        entry::Result r{};
        os_fault_every(1, OS_CALL_ALL);
        while (!handler_calls && held_count < HELD_MAX) {
            r = all[i].call(size, 64);
            if (r.ptr)
                shadow::claim(held[held_count++], r, all[i].family, 64, all[i].name);
        }
        os_fault_off();
        CHECK_MSG(r.ptr && handler_calls == 1, "%s(%zu) with a new_handler that gives memory: %p after %d calls",
                  all[i].name, size, r.ptr, handler_calls);
        std::printf("  %-30s new_handler called after %u blocks from memory at hand\n", all[i].name,
                    held_count - 1);
        release_held();
        population_intact("after the new_handler");
    }
    std::set_new_handler(old);
}

// A purge the OS refuses leaves the pages as they were: memory handed out
// afterwards must not be taken for fresh, and calloc must still zero it.
// Through the three ways free spans are purged: a huge block freed, a
// trim, and (with COREALLOC_PURGE_DELAY_MS=0) any large block freed.
void calloc_after_refused_purge()
{
    struct Case {
        const char *how;
        size_t size;
        bool trim;
    } cases[] = {{"free of a huge block", 24 * MIB, false},
                 {"malloc_trim", 3 * MIB, true},
                 {"free of a large block", 300 << 10, false}};
    for (const Case &c : cases) {
        unsigned long refused = refused_so_far(OS_CALL_MADVISE);
        auto *p = static_cast<unsigned char *>(malloc(c.size));
        REQUIRE(p);
        std::memset(p, 0xA5, c.size);
        os_fault_every(1, OS_CALL_BIT(OS_CALL_MADVISE));
        free(p);
        if (c.trim)
            malloc_trim(0);
        os_fault_off();
        void *q = calloc(1, c.size);
        REQUIRE(q);
        bool zeroed = block_filled_with(q, c.size, 0);
        CHECK_MSG(zeroed, "calloc(1, %zu) after a %s whose purge the OS refused: not all zeros", c.size, c.how);
        std::printf("  %-30s purges refused %lu, calloc %s\n", c.how, refused_so_far(OS_CALL_MADVISE) - refused,
                    zeroed ? "zeroed" : "NOT ZEROED");
        free(q);
        population_intact("after a refused purge");
    }
}

// Growing a huge block moves its pages with mremap; refused, realloc
// copies instead.
void realloc_with_mremap_refused()
{
    Block b, barrier;
    entry::Result r = entry::Result{malloc(20 * MIB), 0, 20 * MIB, 16, false};
    REQUIRE(r.ptr && shadow::claim(b, r, entry::Family::Malloc, 0, "malloc"));
    // A neighbour in use, so that the block cannot grow in place.
    r = entry::Result{malloc(20 * MIB), 0, 20 * MIB, 16, false};
    REQUIRE(r.ptr && shadow::claim(barrier, r, entry::Family::Malloc, 0, "malloc"));
    size_t count;
    const entry::Resizer &realloc_call = entry::resizers(&count)[0];
    unsigned long refused = refused_so_far(OS_CALL_MREMAP);
    os_fault_every(1, OS_CALL_BIT(OS_CALL_MREMAP));
    bool ok;
    r = shadow::resize(b, realloc_call, 48 * MIB, &ok);
    os_fault_off();
    unsigned long refusals = refused_so_far(OS_CALL_MREMAP) - refused;
    CHECK_MSG(ok && r.ptr && refusals > 0, "realloc of a huge block with mremap refused (%lu times): %p, error %d",
              refusals, r.ptr, r.error);
    std::printf("  %-30s mremap refused %lu, realloc %s\n", "realloc of a huge block", refusals,
                r.ptr ? "copied" : "failed");
    shadow::release(b, entry::releaser_for(b.family, 0));
    shadow::release(barrier, entry::releaser_for(barrier.family, 0));
    population_intact("after a refused mremap");
}

// ---- refusals from the start of a process ----

// In the child: its start-up ran with every n-th OS call refused
// (OS_FAULT_EVERY), and so does a round of every entry point: each call
// succeeds or fails for want of memory. Then the OS gives memory again:
// the blocks of the round keep their promises and their contents, and
// every entry point works. The nothrow operator new forms must return
// NULL even where the C++ runtime could not allocate its emergency pool
// for exceptions at start-up (every call refused); the throwing forms stay
// out of the round, as the runtime ends the process when it cannot
// allocate a bad_alloc (libstdc++'s std::terminate).
int start_up_child()
{
    size_t count;
    const entry::Allocator *all = entry::allocators(&count);
    struct Kept {
        entry::Result r;
        const entry::Allocator *from;
    } kept[64];
    size_t round = 0, refusals = 0, kept_count = 0;
    for (size_t i = 0; i < count; i++)
        for (size_t size : {size_t(24), size_t(5000), size_t(300000)}) {
            if (all[i].failure == entry::Failure::Thrown)
                continue;
            round++;
            entry::Result r = all[i].call(size, 64);
            if (r.ptr && kept_count < std::size(kept))
                kept[kept_count++] = Kept{r, &all[i]};
            refusals += !r.ptr;
            CHECK_MSG(r.ptr || entry::failed_for_memory(r, all[i].failure), "%s(%zu): error %d (%s)", all[i].name,
                      size, r.error, std::strerror(r.error));
        }
    unsigned long os_refusals = refused_in_all();
    os_fault_off();
    corealloc_active(); // now that its malloc can succeed
    for (size_t k = 0; k < kept_count; k++)
        shadow::claim(held[held_count++], kept[k].r, kept[k].from->family, 64, kept[k].from->name);
    shadow::every_entry_point_works("once the OS gives memory again");
    for (unsigned i = 0; i < held_count; i++)
        shadow::intact(held[i], "kept through the refusals");
    release_held();
    auto frontend = reinterpret_cast<const char *(*)()>(corealloc_symbol("corealloc_frontend"));
    std::printf("  OS_FAULT_EVERY=%-4s %3lu calls refused; %2zu of %zu allocations failed; front end %s, zones %s\n",
                std::getenv("OS_FAULT_EVERY"), os_refusals, refusals, round, frontend(),
                stats_number("zones") ? "on" : "off");
    std::fflush(stdout);
    return check_status();
}

void start_up_refused(const char *every)
{
    char variable[64];
    std::snprintf(variable, sizeof variable, "OS_FAULT_EVERY=%s", every);
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = static_cast<char **>(calloc(n + 2, sizeof *env));
    REQUIRE(env);
    std::memcpy(env, environ, n * sizeof *env);
    env[n] = variable;
    char self[] = "/proc/self/exe", flag[] = "--start-up";
    char *argv[] = {self, flag, nullptr};
    pid_t pid;
    REQUIRE(posix_spawn(&pid, self, nullptr, nullptr, argv, env) == 0);
    int status;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "start-up with OS_FAULT_EVERY=%s: status %#x", every,
              status);
    free(env);
}

} // namespace

int main(int argc, char **argv)
{
    if (argc == 2 && !std::strcmp(argv[1], "--start-up"))
        return start_up_child();
    REQUIRE_MSG(argc == 1, "usage: %s", argv[0]);
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    if (!corealloc_active()) { // found before any refusal: its malloc must succeed
        std::printf("skipped: corealloc is not loaded, and only its calls to the OS are refused\n");
        return 77;
    }

    populate();
    std::printf("new_handler:\n");
    new_handler_called();
    std::printf("every OS call refused, each entry point:\n");
    every_allocator_refused();
    every_resizer_refused();
    std::printf("purges and moves refused:\n");
    calloc_after_refused_purge();
    realloc_with_mremap_refused();
    std::printf("every n-th call refused from start-up:\n");
    static const char *const every[] = {"1", "2", "3", "4", "5", "7", "1:1", "1:2", "1:8", "2:8"};
    for (const char *e : every)
        start_up_refused(e);

    struct os_fault_counts c;
    os_fault_counts(&c);
    std::printf("OS calls of corealloc's in this process:");
    for (unsigned k = 0; k < OS_CALL_KINDS; k++)
        std::printf(" %s %lu (refused %lu)", os_call_name(static_cast<os_call>(k)), c.calls[k], c.refused[k]);
    std::printf("\n");
    for (unsigned i = 0; i < POPULATION; i++)
        shadow::release(population[i], entry::releaser_for(population[i].family, i));
    CHECK_EQ(shadow::live_blocks(), 0);
    return check_status();
}
