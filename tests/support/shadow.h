// A shadow model of the blocks a test holds: what each must contain, and
// where every live one lies, so a block handed out while another still
// covers any of its bytes (a duplicate, an overlap) is caught the moment
// it is claimed, and a block whose contents changed while it was live is
// caught when it is checked, resized or freed. Blocks hold fill patterns
// (pattern.h) of a seed of their own. Thread-safe; the model's own memory
// comes from mmap, never from the allocator under test. Every failed check
// is reported (check.h) and makes the call return false.
#ifndef COREALLOC_TEST_SHADOW_H
#define COREALLOC_TEST_SHADOW_H

#include "entry_points.h"

#include <cstddef>
#include <cstdint>

namespace shadow {

struct Block {
    unsigned char *ptr = nullptr; // NULL: no block
    std::size_t size = 0;         // bytes asked for and patterned
    std::size_t alignment = 0;    // as asked (for the sized and aligned releasers)
    entry::Family family = entry::Family::Malloc;
    std::uint64_t seed = 0;       // of its pattern
};

// The block r returned (r.ptr not NULL), made by an entry point of family
// with alignment asked: its promises kept (entry::block_keeps_promises),
// no live block overlapping it, recorded and filled with a fresh pattern.
bool claim(Block &b, const entry::Result &r, entry::Family family, std::size_t alignment, const char *what);
// Its contents are those last filled.
bool intact(const Block &b, const char *what);
// A fresh pattern.
void refill(Block &b);
// Checked intact, forgotten and freed by how (of the block's family);
// b becomes empty.
bool release(Block &b, const entry::Releaser &how);
// Checked intact and resized by how: on success the kept prefix must be
// unchanged, and the block is claimed anew (Malloc family, refilled); a
// resize to 0 bytes (r.size: reallocarray's product) that returns NULL
// freed it (b becomes empty); any other
// NULL leaves it as it was, still recorded (and checked intact). Returns
// the call's result; *ok says whether every check held.
entry::Result resize(Block &b, const entry::Resizer &how, std::size_t size, bool *ok);
// Blocks recorded now.
std::size_t live_blocks();
// Every entry point (entry::allocators) called for a small, a medium and a
// large block, each claimed, then released by a releaser of its family:
// all must succeed, as they must whenever the OS gives memory. `when`
// names the occasion in reports.
bool every_entry_point_works(const char *when);

} // namespace shadow

#endif
