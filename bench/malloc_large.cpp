// malloc-large (the standard large-buffer workload, written from its
// description): -n (20) live buffers of -m..-M MiB (5..25), one of them
// replaced at random -r (2000) times. Each new buffer is made the way C++
// code makes one, std::make_unique<char[]>(n): value-initialised, so every
// byte is zeroed by the program, which is where an allocator that hands
// back fresh or purged pages (or moves them with mremap) saves or costs
// time. One thread. Reports replacements per second and the seconds.
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

extern "C" {
#include "bench_args.h"
#include "bench_clock.h"
#include "bench_report.h"
#include "rng.h"
}

namespace {

struct buffer {
    std::unique_ptr<char[]> bytes;
    std::size_t size = 0;
};

// A buffer carries its number at both ends, written after the zero-fill
// was checked there; a replacement checks them before it lets go.
void fill(buffer &slot, std::size_t size, long number)
{
    slot.bytes = std::make_unique<char[]>(size);
    slot.size = size;
    if (slot.bytes[0] != 0 || slot.bytes[size / 2] != 0 || slot.bytes[size - 1] != 0)
        bench_check_failed("malloc-large: a new buffer of %zu bytes was not zero-filled", size);
    std::memcpy(&slot.bytes[0], &number, sizeof number);
    std::memcpy(&slot.bytes[size - sizeof number], &number, sizeof number);
}

void check(const buffer &slot, long number)
{
    long head, tail;
    std::memcpy(&head, &slot.bytes[0], sizeof head);
    std::memcpy(&tail, &slot.bytes[slot.size - sizeof tail], sizeof tail);
    if (head != number || tail != number)
        bench_check_failed("malloc-large: buffer %ld was overwritten while live", number);
}

} // namespace

int main(int argc, char **argv)
{
    long count = 20, replacements = 2000, min_mib = 5, max_mib = 25, seed = 1;
    const bench_option options[] = {
        BENCH_LONG('n', "live-buffers", &count, 1, 100000),
        BENCH_LONG('r', "replacements", &replacements, 0, 1L << 40),
        BENCH_LONG('m', "min-MiB", &min_mib, 1, 1L << 20),
        BENCH_LONG('M', "max-MiB", &max_mib, 1, 1L << 20),
        BENCH_SEED('s', &seed),
        BENCH_OPTIONS_END,
    };
    const bench_command command = { "malloc-large", options, nullptr, 0, 0 };
    bench_parse_command(&command, argc, argv);
    if (max_mib < min_mib)
        bench_usage(&command);

    struct rng rng = rng_seeded(static_cast<uint64_t>(seed));
    auto random_size = [&] {
        std::size_t low = static_cast<std::size_t>(min_mib) << 20, high = static_cast<std::size_t>(max_mib) << 20;
        return low + static_cast<std::size_t>(rng_below(&rng, high - low + 1));
    };
    double start = bench_now_seconds();
    std::vector<buffer> buffers(static_cast<std::size_t>(count));
    std::vector<long> numbers(buffers.size());
    for (std::size_t i = 0; i < buffers.size(); i++) {
        numbers[i] = static_cast<long>(i);
        fill(buffers[i], random_size(), numbers[i]);
    }
    for (long r = 0; r < replacements; r++) {
        std::size_t victim = static_cast<std::size_t>(rng_below(&rng, buffers.size()));
        check(buffers[victim], numbers[victim]);
        numbers[victim] = count + r;
        fill(buffers[victim], random_size(), numbers[victim]);
    }
    for (std::size_t i = 0; i < buffers.size(); i++)
        check(buffers[i], numbers[i]);
    buffers.clear();
    double elapsed = bench_now_seconds() - start;
    bench_result("malloc-large", "buffers=%ld replacements=%ld min_mib=%ld max_mib=%ld seconds=%.6f "
                 "replacements_per_sec=%.1f",
                 count, replacements, min_mib, max_mib, elapsed, static_cast<double>(replacements) / elapsed);
    return 0;
}
