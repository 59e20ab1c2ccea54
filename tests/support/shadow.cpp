// The shadow model of shadow.h: live blocks as address ranges in an
// ordered map, its nodes from a pool over mmap'd chunks.
#include "shadow.h"

#include "check.h"
#include "pattern.h"

#include <atomic>
#include <initializer_list>
#include <malloc.h>
#include <map>
#include <memory_resource>
#include <mutex>
#include <sys/mman.h>

namespace shadow {
namespace {

// Chunks of pages from mmap, handed out in order and never given back:
// the pool above recycles what the map frees.
class MappedChunks : public std::pmr::memory_resource {
    static constexpr std::size_t CHUNK = std::size_t(1) << 20;
    char *next_ = nullptr, *end_ = nullptr;

    void *do_allocate(std::size_t bytes, std::size_t alignment) override
    {
        std::uintptr_t at = (reinterpret_cast<std::uintptr_t>(next_) + alignment - 1) & ~(alignment - 1);
        if (!next_ || at + bytes > reinterpret_cast<std::uintptr_t>(end_)) {
            std::size_t size = bytes + alignment > CHUNK ? bytes + alignment : CHUNK;
            void *chunk = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            REQUIRE_MSG(chunk != MAP_FAILED, "shadow model: mmap of %zu bytes failed", size);
            next_ = static_cast<char *>(chunk);
            end_ = next_ + size;
            at = (reinterpret_cast<std::uintptr_t>(next_) + alignment - 1) & ~(alignment - 1);
        }
        next_ = reinterpret_cast<char *>(at + bytes);
        return reinterpret_cast<void *>(at);
    }
    void do_deallocate(void *, std::size_t, std::size_t) override {}
    bool do_is_equal(const std::pmr::memory_resource &other) const noexcept override { return this == &other; }
};

// Live ranges [start, end) by start.
struct Ranges {
    std::mutex lock;
    MappedChunks chunks;
    std::pmr::unsynchronized_pool_resource pool{&chunks};
    std::pmr::map<std::uintptr_t, std::uintptr_t> live{&pool};
};

Ranges &ranges()
{
    static Ranges r;
    return r;
}

std::atomic<std::uint64_t> next_seed{1};

// Records [p, p + bytes) unless a live range overlaps it.
bool enter(const void *p, std::size_t bytes, const char *what)
{
    std::uintptr_t start = reinterpret_cast<std::uintptr_t>(p), end = start + (bytes ? bytes : 1);
    Ranges &r = ranges();
    std::lock_guard<std::mutex> hold(r.lock);
    auto after = r.live.lower_bound(start);
    // The live range that overlaps, if any: the one at or after start, or
    // the one before it.
    auto other = after != r.live.end() && after->first < end ? after : r.live.end();
    if (other == r.live.end() && after != r.live.begin() && std::prev(after)->second > start)
        other = std::prev(after);
    bool alone = other == r.live.end();
    CHECK_MSG(alone, "%s: %p (%zu bytes) handed out while the live block at %#lx (%zu bytes) %s", what, p, bytes,
              alone ? 0ul : static_cast<unsigned long>(other->first),
              alone ? std::size_t(0) : static_cast<std::size_t>(other->second - other->first),
              alone ? "" : other->first == start ? "starts there too" : "overlaps it");
    if (alone)
        r.live.emplace_hint(after, start, end);
    return alone;
}

void leave(const void *p)
{
    Ranges &r = ranges();
    std::lock_guard<std::mutex> hold(r.lock);
    REQUIRE_MSG(r.live.erase(reinterpret_cast<std::uintptr_t>(p)) == 1, "shadow model: %p was not live", p);
}

// A block's range: every byte it may use.
std::size_t extent(const Block &b)
{
    std::size_t usable = malloc_usable_size(b.ptr);
    return usable > b.size ? usable : b.size;
}

// Whether the first `bytes` of the block still hold its pattern.
bool prefix_intact(const unsigned char *p, std::size_t bytes, std::uint64_t seed, const char *what)
{
    std::size_t bad = pattern_mismatch(p, bytes, seed);
    CHECK_MSG(bad == PATTERN_OK, "%s: %p: byte %zu of %zu changed while the block was live", what,
              static_cast<const void *>(p), bad, bytes);
    return bad == PATTERN_OK;
}

} // namespace

void refill(Block &b)
{
    b.seed = next_seed.fetch_add(1, std::memory_order_relaxed);
    pattern_fill(b.ptr, b.size, b.seed);
}

bool claim(Block &b, const entry::Result &r, entry::Family family, std::size_t alignment, const char *what)
{
    b = Block{static_cast<unsigned char *>(r.ptr), r.size, alignment, family, 0};
    bool promises = entry::block_keeps_promises(r, what);
    if (!enter(b.ptr, extent(b), what)) {
        b.ptr = nullptr; // another block's: not ours to free
        return false;
    }
    refill(b);
    return promises;
}

bool intact(const Block &b, const char *what) { return prefix_intact(b.ptr, b.size, b.seed, what); }

bool release(Block &b, const entry::Releaser &how)
{
    bool ok = intact(b, how.name);
    leave(b.ptr);
    how.call(b.ptr, b.size, b.alignment);
    b.ptr = nullptr;
    return ok;
}

entry::Result resize(Block &b, const entry::Resizer &how, std::size_t size, bool *ok)
{
    *ok = intact(b, how.name);
    leave(b.ptr);
    entry::Result r = how.call(b.ptr, size);
    if (r.ptr) {
        std::size_t kept = b.size < r.size ? b.size : r.size;
        *ok = prefix_intact(static_cast<unsigned char *>(r.ptr), kept, b.seed, how.name) && *ok;
        *ok = claim(b, r, entry::Family::Malloc, 0, how.name) && *ok;
    } else if (r.size == 0) {
        b.ptr = nullptr;
    } else if (enter(b.ptr, extent(b), how.name)) {
        *ok = intact(b, how.name) && *ok;
    } else {
        *ok = false;
        b.ptr = nullptr; // another block's now: not ours to free
    }
    return r;
}

std::size_t live_blocks()
{
    Ranges &r = ranges();
    std::lock_guard<std::mutex> hold(r.lock);
    return r.live.size();
}

bool every_entry_point_works(const char *when)
{
    std::size_t count;
    const entry::Allocator *all = entry::allocators(&count);
    bool ok = true;
    for (std::size_t i = 0; i < count; i++)
        for (std::size_t size : {std::size_t(24), std::size_t(5000), std::size_t(300000)}) {
            entry::Result r = all[i].call(size, 64);
            CHECK_MSG(r.ptr, "%s(%zu) failed %s: error %d", all[i].name, size, when, r.error);
            Block b;
            if (r.ptr && claim(b, r, all[i].family, 64, all[i].name))
                ok = release(b, entry::releaser_for(b.family, i)) && ok;
            else
                ok = false;
        }
    return ok;
}

} // namespace shadow
