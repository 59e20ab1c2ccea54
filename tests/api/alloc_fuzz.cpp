// A fuzzer of the whole allocation API: random sequences over every entry
// point (tests/support/entry_points.h: malloc, calloc, realloc,
// reallocarray, aligned_alloc, posix_memalign, memalign, valloc, pvalloc,
// the prefixed API, every operator new, and every free, sized free and
// operator delete that fits the block) from several threads, with blocks
// handed between threads through shared slots so that most frees are
// cross-thread, checked against a shadow model (tests/support/shadow.h):
// contents kept, alignment, usable size, no overlap with and no duplicate
// of a live block, realloc keeping the prefix, calloc's zeroes, NULL and
// ENOMEM (or EINVAL, or std::bad_alloc) for impossible requests.
//
// usage: alloc_fuzz [--seed N] [--ms N] [--generations N] [--threads N] [--ops N]
//                   [--os-faults every|random]
//
// A run is a series of generations until --ms have passed (or exactly
// --generations of them, however long they take): in each, every
// lane runs --ops operations on a thread of its own (a new thread each
// generation: lanes keep their blocks, threads exit with theirs in their
// caches), drawn from a generator seeded by (seed, lane, generation); then
// the main thread checks every block. The seed is printed first and again
// on failure (with the generations to run to get there), which stops the
// run at the first failed check; --seed repeats the run's choices (exactly
// with --threads 1 and no --os-faults; with more threads their interleaving
// varies, and with refusals what succeeds may).
//
// --os-faults (tests/support/os_fault.h): during each generation the OS
// refuses some of corealloc's mmap, mprotect, mremap and madvise calls
// (every: every n-th call of one kind, or of all, n and kind changing with
// the generation; random: calls drawn from the seed), so allocations may
// fail, but only with the entry point's error for no memory; between
// generations the OS gives memory again, and every entry point must work.
#include "check.h"
#include "entry_points.h"
#include "hash.h"
#include "os_fault.h"
#include "probe.h"
#include "rng.h"
#include "shadow.h"
#include "threads.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <malloc.h>
#include <mutex>
#include <unistd.h>

namespace {

using shadow::Block;
using std::size_t;

enum class Faults { None, Every, Random };

struct Settings {
    std::uint64_t seed;
    unsigned ms = 2000, generations = 0, threads = 4, ops = 2000;
    Faults faults = Faults::None;
} settings;

constexpr unsigned LANES_MAX = 16, PRIVATE_SLOTS = 192, SHARED_SLOTS = 64, BURST_MAX = 160;

Block lanes[LANES_MAX][PRIVATE_SLOTS];
struct Shared {
    std::mutex lock;
    Block block;
} shared[SHARED_SLOTS];

std::atomic<bool> failed{false};
std::atomic<unsigned long> operations{0};
std::atomic<unsigned long> refusals_met{0}; // allocations that failed for a refused OS call
unsigned generation;
bool faults_on; // during a generation with faults

// Records a failed check: the run stops.
bool note(bool ok)
{
    if (!ok)
        failed.store(true, std::memory_order_relaxed);
    return ok;
}

const char *faults_option()
{
    return settings.faults == Faults::Every    ? " --os-faults every"
           : settings.faults == Faults::Random ? " --os-faults random"
                                               : "";
}

// "alloc_fuzz: FAILED ...": with the command that runs the same choices up
// to the generation that failed. write(2): it may run in a signal handler.
void report_failure(const char *why)
{
    char line[256];
    int n = std::snprintf(line, sizeof line,
                          "alloc_fuzz: FAILED%s in generation %u; reproduce: alloc_fuzz --seed %llu --generations %u "
                          "--threads %u --ops %u%s\n",
                          why, generation, static_cast<unsigned long long>(settings.seed), generation + 1,
                          settings.threads, settings.ops, faults_option());
    if (n > 0 && write(2, line, static_cast<size_t>(n) < sizeof line ? n : sizeof line - 1) < 0)
        return;
}

// A crash is a failure too: its report names the seed, and the exit
// status says which signal (128 + it, as a shell does). Exiting rather than
// dying of the signal lets a test that expects the failure (a broken build,
// whose debug assertions may abort first) judge it by the report alone.
void on_fatal_signal(int sig)
{
    char why[64];
    std::snprintf(why, sizeof why, " (%s)", strsignal(sig));
    report_failure(why);
    _exit(128 + sig);
}

// ---- what the operations ask for ----

// Mostly small sizes, then large ones, powers of two and their
// neighbours, and now and then a huge block (moved by mremap on realloc).
size_t random_size(struct rng *rng)
{
    auto between = [rng](size_t lo, size_t hi) { return lo + rng_below(rng, hi - lo + 1); };
    unsigned r = static_cast<unsigned>(rng_below(rng, 2000));
    if (r < 100)
        return between(0, 16);
    if (r < 1000)
        return between(17, 256);
    if (r < 1500)
        return between(257, 4096);
    if (r < 1760)
        return between(4097, 32784);
    if (r < 1880)
        return (size_t(1) << between(3, 22)) + between(0, 2) - 1;
    if (r < 1970)
        return between(32769, 256 << 10);
    if (r < 1999)
        return between((256 << 10) + 1, 2 << 20);
    return between(16 << 20, 20 << 20);
}

size_t random_alignment(struct rng *rng, const entry::Allocator &a)
{
    unsigned shift = rng_below(rng, 8) ? static_cast<unsigned>(rng_below(rng, 13)) : 13 + rng_below(rng, 8);
    if (a.failure == entry::Failure::Returned && shift < 3)
        shift = 3; // posix_memalign: a multiple of sizeof(void *)
    return size_t(1) << shift;
}

// A value the compiler cannot see, so it neither warns about nor folds
// the impossible requests made with it.
size_t opaque(size_t v)
{
    asm("" : "+r"(v));
    return v;
}

// Requests no allocator can satisfy.
const size_t impossible_sizes[] = {
    SIZE_MAX, SIZE_MAX - 1, SIZE_MAX - 4095, SIZE_MAX / 2 + 1, size_t(PTRDIFF_MAX) + 1, size_t(1) << 62,
};

// ---- the operations of a lane ----

struct Lane {
    struct rng rng;
    Block *slots;

    Block &any_slot() { return slots[rng_below(&rng, PRIVATE_SLOTS)]; }
    std::uint64_t pick(std::uint64_t n) { return rng_below(&rng, n); }

    const entry::Allocator &any_allocator()
    {
        size_t n;
        const entry::Allocator *all = entry::allocators(&n);
        return all[pick(n)];
    }

    // A failed allocation: right only when memory could not be had, and
    // only while the OS refuses some of it.
    static bool allocation_failed(const char *name, entry::Failure failure, const entry::Result &r, size_t size,
                                  size_t align)
    {
        bool right = faults_on && entry::failed_for_memory(r, failure);
        CHECK_MSG(right, "%s(%zu, alignment %zu) failed: error %d (%s)%s", name, size, align, r.error,
                  std::strerror(r.error), faults_on ? "" : " while the OS gives memory");
        if (right)
            refusals_met.fetch_add(1, std::memory_order_relaxed);
        return right;
    }

    bool allocate_into(Block &b, const entry::Allocator &a, size_t size)
    {
        size_t align = a.takes_alignment ? random_alignment(&rng, a) : 0;
        entry::Result r = a.call(size, align);
        if (!r.ptr)
            return allocation_failed(a.name, a.failure, r, size, align);
        return shadow::claim(b, r, a.family, align, a.name);
    }

    bool allocate()
    {
        Block &b = any_slot();
        if (b.ptr)
            return release(b);
        return allocate_into(b, any_allocator(), random_size(&rng));
    }

    bool release(Block &b) { return shadow::release(b, entry::releaser_for(b.family, pick(1000))); }

    bool free_one()
    {
        Block &b = any_slot();
        return b.ptr ? release(b) : true;
    }

    const entry::Resizer &any_resizer()
    {
        size_t n;
        const entry::Resizer *all = entry::resizers(&n);
        return all[pick(n)];
    }

    static bool resizable(const Block &b)
    {
        return b.ptr && (b.family == entry::Family::Malloc || b.family == entry::Family::AlignedAlloc ||
                         b.family == entry::Family::Memalign);
    }

    bool resize()
    {
        Block &b = any_slot();
        if (!resizable(b))
            return true;
        size_t size;
        switch (pick(256)) {
        case 0: size = (16 << 20) + pick(4 << 20); break; // huge: its pages move (mremap)
        case 1: case 2: size = 0; break;
        default:
            switch (pick(4)) {
            case 0: size = b.size + pick(64); break;
            case 1: size = b.size - pick(b.size / 2 + 1); break;
            case 2: size = 2 * b.size + 1; break;
            default: size = random_size(&rng); break;
            }
        }
        const entry::Resizer &how = any_resizer();
        bool ok;
        entry::Result r = shadow::resize(b, how, size, &ok);
        if (!r.ptr && r.size)
            ok = allocation_failed(how.name, entry::Failure::Errno, r, r.size, 0) && ok;
        return ok;
    }

    // Swaps a private slot with a shared one: blocks travel between lanes.
    bool hand_over()
    {
        Shared &s = shared[pick(SHARED_SLOTS)];
        Block &b = any_slot();
        std::lock_guard<std::mutex> hold(s.lock);
        std::swap(b, s.block);
        return true;
    }

    bool check()
    {
        Block &b = any_slot();
        if (!b.ptr)
            return true;
        bool ok = shadow::intact(b, "check");
        size_t usable = malloc_usable_size(b.ptr);
        CHECK_MSG(usable >= b.size, "%p: malloc_usable_size %zu < size %zu", static_cast<void *>(b.ptr), usable,
                  b.size);
        ok = ok && usable >= b.size;
        if (corealloc_active() && b.size) {
            const unsigned char *inside = b.ptr + pick(b.size);
            bool found = probe_object_start(inside) == b.ptr;
            CHECK_MSG(found, "corealloc_object_start(%p) is %p, not the block %p", static_cast<const void *>(inside),
                      probe_object_start(inside), static_cast<void *>(b.ptr));
            ok = ok && found;
        }
        return ok;
    }

    bool rewrite()
    {
        Block &b = any_slot();
        if (!b.ptr)
            return true;
        if (!shadow::intact(b, "rewrite"))
            return false;
        shadow::refill(b);
        return true;
    }

    // Many blocks of one size at once, freed in a random order: caches
    // fill, spill and empty, superblocks fill and empty.
    bool burst()
    {
        Block blocks[BURST_MAX];
        const entry::Allocator &a = any_allocator();
        size_t size = random_size(&rng) % (64 << 10), count = 2 + pick(BURST_MAX - 1);
        bool ok = true;
        for (size_t i = 0; i < count && ok; i++)
            ok = allocate_into(blocks[i], a, size);
        for (size_t left = count; left > 0; left--) {
            size_t i = pick(left);
            if (blocks[i].ptr)
                ok = release(blocks[i]) && ok;
            std::swap(blocks[i], blocks[left - 1]);
        }
        return ok;
    }

    // Requests that must fail, and fail with the right error.
    bool impossible()
    {
        size_t huge = impossible_sizes[pick(std::size(impossible_sizes))];
        switch (pick(5)) {
        case 0: { // any entry point, an impossible size
            const entry::Allocator &a = any_allocator();
            if (!corealloc_active() && a.failure != entry::Failure::Errno && a.failure != entry::Failure::Returned)
                return true; // libstdc++ 12's aligned new wraps sizes near SIZE_MAX round
            size_t align = a.takes_alignment ? random_alignment(&rng, a) : 0;
            entry::Result r = a.call(huge, align);
            return refused(a.name, huge, r, entry::failed_for_memory(r, a.failure), "for want of memory");
        }
        case 1: { // calloc's count * size overflowing
            size_t count = opaque(SIZE_MAX / 2 + 1 + pick(1000));
            errno = 0;
            void *p = calloc(count, 2 + pick(30));
            return refused("calloc (count overflowing)", count, with_errno(p), !p && errno == ENOMEM, "with ENOMEM");
        }
        case 2: { // resizing a live block to an impossible size: it stays
            Block &b = any_slot();
            if (!resizable(b))
                return true;
            bool ok;
            const entry::Resizer &how = any_resizer();
            entry::Result r = shadow::resize(b, how, huge, &ok);
            return refused(how.name, huge, r, !r.ptr && r.error == ENOMEM, "with ENOMEM") && ok;
        }
        case 3: { // reallocarray's count * size overflowing: the block stays
            Block &b = any_slot();
            if (!resizable(b))
                return true;
            shadow::Block before = b;
            size_t count = opaque(SIZE_MAX / 4 + 1);
            errno = 0;
            void *p = reallocarray(b.ptr, count, 5 + pick(100));
            return refused("reallocarray (count overflowing)", count, with_errno(p), !p && errno == ENOMEM,
                           "with ENOMEM") &&
                   shadow::intact(before, "reallocarray (count overflowing)");
        }
        default: { // alignments that are no alignment
            static const size_t not_powers[] = {3, 24, 48, 100};
            void *p = &p;
            // posix_memalign: 4 is a power of two but less than sizeof(void *)
            size_t bad = opaque(pick(2) ? 4 : not_powers[pick(std::size(not_powers))]);
            int error = posix_memalign(&p, bad, 64);
            bool ok = refused("posix_memalign (alignment)", bad, entry::Result{error ? nullptr : p, error, 0, 1, false},
                              error == EINVAL && p == &p, "with EINVAL");
            if (!corealloc_active())
                return ok; // glibc before 2.38 rounds aligned_alloc's alignment up
            bad = opaque(not_powers[pick(std::size(not_powers))]);
            errno = 0;
            p = aligned_alloc(bad, 64);
            return refused("aligned_alloc (alignment)", bad, with_errno(p), !p && errno == EINVAL, "with EINVAL") && ok;
        }
        }
    }

    static entry::Result with_errno(void *p) { return entry::Result{p, p ? 0 : errno, 0, 1, false}; }

    // An impossible request's result: right when `right`; a block handed
    // out anyway is a failure, and freed.
    bool refused(const char *call, size_t arg, const entry::Result &r, bool right, const char *how)
    {
        CHECK_MSG(right, "%s(%zu) = %p, error %d (%s): must fail %s", call, arg, r.ptr, r.error,
                  std::strerror(r.error), how);
        if (r.ptr)
            free(r.ptr);
        return right;
    }

    bool trim()
    {
        if (pick(2) && corealloc_active()) {
            auto trim_all = reinterpret_cast<size_t (*)()>(corealloc_symbol("corealloc_trim"));
            trim_all();
        } else {
            malloc_trim(0);
        }
        return true;
    }

    // One operation, drawn by weight (in percent).
    bool step()
    {
        struct Operation {
            unsigned weight;
            bool (Lane::*run)();
        };
        static constexpr Operation operations[] = {
            {28, &Lane::allocate}, {22, &Lane::free_one}, {14, &Lane::resize}, {12, &Lane::hand_over},
            {10, &Lane::check},    {5, &Lane::rewrite},   {4, &Lane::burst},   {4, &Lane::impossible},
            {1, &Lane::trim},
        };
        static_assert([] {
            unsigned sum = 0;
            for (const Operation &o : operations)
                sum += o.weight;
            return sum == 100;
        }(), "weights in percent");
        unsigned r = static_cast<unsigned>(pick(100));
        const Operation *o = operations;
        for (; r >= o->weight; o++)
            r -= o->weight;
        return (this->*o->run)();
    }
};

void *run_lane(void *arg)
{
    unsigned index = thread_number(arg) - 1;
    Lane lane{rng_seeded(hash64(settings.seed ^ hash64((std::uint64_t(generation) << 8) | index))),
              lanes[index]};
    unsigned done = 0;
    while (done < settings.ops && !failed.load(std::memory_order_relaxed)) {
        note(lane.step());
        done++;
    }
    operations.fetch_add(done, std::memory_order_relaxed);
    return nullptr;
}

// ---- between generations ----

template <typename F> void each_block(F f)
{
    for (unsigned l = 0; l < settings.threads; l++)
        for (Block &b : lanes[l])
            if (b.ptr)
                f(b);
    for (Shared &s : shared)
        if (s.block.ptr)
            f(s.block);
}

void start_faults(std::uint64_t g)
{
    static const unsigned masks[] = {OS_CALL_BIT(OS_CALL_MMAP), OS_CALL_BIT(OS_CALL_MPROTECT),
                                     OS_CALL_BIT(OS_CALL_MREMAP), OS_CALL_BIT(OS_CALL_MADVISE), OS_CALL_ALL};
    static const unsigned long every[] = {1, 2, 3, 5, 8, 13, 64};
    if (settings.faults == Faults::Every) {
        std::uint64_t pair = g + settings.seed % 35; // the 35 pairs in turn, from one the seed picks
        os_fault_every(every[pair % std::size(every)], masks[pair % std::size(masks)]);
    } else {
        struct rng rng = rng_seeded(hash64(settings.seed + g));
        static const unsigned odds[] = {2, 4, 16, 64};
        os_fault_random(rng_next(&rng), odds[rng_below(&rng, std::size(odds))],
                        1 + static_cast<unsigned>(rng_below(&rng, OS_CALL_ALL)));
    }
    faults_on = true;
}

void stop_faults()
{
    os_fault_off();
    faults_on = false;
}

void parse(int argc, char **argv)
{
    bool seeded = false;
    for (int i = 1; i < argc; i++) {
        auto value = [&](const char *name) {
            REQUIRE_MSG(i + 1 < argc, "%s needs a value", name);
            return argv[++i];
        };
        if (!std::strcmp(argv[i], "--seed")) {
            settings.seed = std::strtoull(value("--seed"), nullptr, 0);
            seeded = true;
        } else if (!std::strcmp(argv[i], "--ms")) {
            settings.ms = static_cast<unsigned>(std::strtoul(value("--ms"), nullptr, 0));
        } else if (!std::strcmp(argv[i], "--generations")) {
            settings.generations = static_cast<unsigned>(std::strtoul(value("--generations"), nullptr, 0));
        } else if (!std::strcmp(argv[i], "--threads")) {
            settings.threads = static_cast<unsigned>(std::strtoul(value("--threads"), nullptr, 0));
        } else if (!std::strcmp(argv[i], "--ops")) {
            settings.ops = static_cast<unsigned>(std::strtoul(value("--ops"), nullptr, 0));
        } else if (!std::strcmp(argv[i], "--os-faults")) {
            const char *how = value("--os-faults");
            settings.faults = !std::strcmp(how, "every") ? Faults::Every : Faults::Random;
            REQUIRE_MSG(!std::strcmp(how, "every") || !std::strcmp(how, "random"), "--os-faults every|random");
        } else {
            std::fprintf(stderr,
                         "usage: %s [--seed N] [--ms N] [--generations N] [--threads N] [--ops N] "
                         "[--os-faults every|random]\n",
                         argv[0]);
            std::exit(2);
        }
    }
    REQUIRE_MSG(settings.threads >= 1 && settings.threads <= LANES_MAX, "--threads 1 to %u", LANES_MAX);
    if (!seeded)
        settings.seed = hash64(static_cast<std::uint64_t>(
                                   std::chrono::steady_clock::now().time_since_epoch().count()) ^
                               static_cast<std::uint64_t>(getpid()));
}

} // namespace

int main(int argc, char **argv)
{
    parse(argc, argv);
    std::printf("alloc_fuzz: seed %llu, on %s (--seed %llu --threads %u --ops %u%s repeats this run)\n",
                static_cast<unsigned long long>(settings.seed),
                corealloc_active() ? "corealloc" : "the C library's malloc", static_cast<unsigned long long>(settings.seed),
                settings.threads, settings.ops, faults_option());
    std::fflush(stdout);
    for (int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL})
        std::signal(sig, on_fatal_signal);

    // The lanes' threads once without faults first: pthread_create
    // allocates (its TLS vector), and a refusal there is glibc's EAGAIN, not
    // something the lanes test; later generations reuse the cached stacks.
    if (settings.faults != Faults::None)
        run_threads(settings.threads, [](void *) -> void * { return nullptr; });
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(settings.ms);
    for (generation = 0;; generation++) {
        if (settings.faults != Faults::None)
            start_faults(generation);
        run_threads(settings.threads, run_lane);
        stop_faults();
        each_block([](Block &b) { note(shadow::intact(b, "between generations")); });
        if (settings.faults != Faults::None && !failed.load())
            note(shadow::every_entry_point_works("once the OS gives memory again"));
        bool done = settings.generations ? generation + 1 == settings.generations
                                         : std::chrono::steady_clock::now() >= deadline;
        if (failed.load() || done)
            break;
    }
    each_block([](Block &b) {
        if (!failed.load())
            note(shadow::release(b, entry::releaser_for(b.family, 0)));
    });
    if (!failed.load())
        CHECK_MSG(shadow::live_blocks() == 0, "%zu blocks left in the shadow model", shadow::live_blocks());

    struct os_fault_counts counts;
    os_fault_counts(&counts);
    std::printf("alloc_fuzz: %u generations, %lu operations; OS calls of corealloc's", generation + 1,
                operations.load());
    for (unsigned k = 0; k < OS_CALL_KINDS; k++)
        std::printf(" %s %lu (refused %lu)", os_call_name(static_cast<os_call>(k)), counts.calls[k],
                    counts.refused[k]);
    std::printf("; allocations failing for them %lu\n", refusals_met.load());
    std::fflush(stdout);
    int status = check_status();
    if (status || failed.load()) {
        report_failure("");
        return 1;
    }
    return 0;
}
