// cxx-churn: what ordinary C++ does to an allocator. A std::map from
// std::string keys to std::string values (keys of 6..40 characters, so both
// short strings kept inline and heap-allocated ones, values of 0..200) is
// churned by -n operations over at most -k keys: half insert or overwrite,
// a quarter erase, a quarter look up and append to the value; every -c
// operations the map is copied and the copy destroyed. Map nodes and string
// buffers are many small new/delete calls of mixed sizes. At the end every
// value is checked against what its key implies and a checksum is printed.
// Reports operations per second.
#include <cstdint>
#include <map>
#include <string>

extern "C" {
#include "bench_args.h"
#include "bench_clock.h"
#include "bench_report.h"
#include "rng.h"
}

namespace {

std::string key_for(uint64_t number)
{
    std::string key = "key-" + std::to_string(number);
    key.append(number % 37, static_cast<char>('a' + number % 26));
    return key;
}

// A value is a run of one character derived from the key, so it can be
// checked without a second copy of the map.
char value_char(const std::string &key)
{
    return static_cast<char>('A' + key.size() % 26);
}

} // namespace

int main(int argc, char **argv)
{
    long operations = 1000000, keys = 20000, copy_every = 100000, seed = 1;
    const bench_option options[] = {
        BENCH_LONG('n', "operations", &operations, 1, 1L << 40),
        BENCH_LONG('k', "distinct-keys", &keys, 1, 1L << 30),
        BENCH_LONG('c', "copy-every", &copy_every, 1, 1L << 40),
        BENCH_SEED('s', &seed),
        BENCH_OPTIONS_END,
    };
    const bench_command command = { "cxx-churn", options, nullptr, 0, 0 };
    bench_parse_command(&command, argc, argv);

    struct rng rng = rng_seeded(static_cast<uint64_t>(seed));
    std::map<std::string, std::string> map;
    uint64_t copied = 0;
    double start = bench_now_seconds();
    for (long op = 0; op < operations; op++) {
        std::string key = key_for(rng_below(&rng, static_cast<uint64_t>(keys)));
        uint64_t kind = rng_below(&rng, 4);
        if (kind < 2) {
            map[key] = std::string(rng_below(&rng, 201), value_char(key));
        } else if (kind == 2) {
            map.erase(key);
        } else if (auto found = map.find(key); found != map.end()) {
            found->second.push_back(value_char(key));
        }
        if ((op + 1) % copy_every == 0) {
            std::map<std::string, std::string> copy = map;
            copied += copy.size();
        }
    }
    uint64_t checksum = copied;
    for (const auto &[key, value] : map) {
        if (value.find_first_not_of(value_char(key)) != std::string::npos)
            bench_check_failed("cxx-churn: the value of %s was overwritten", key.c_str());
        checksum = checksum * 31 + key.size() * 7 + value.size();
    }
    double elapsed = bench_now_seconds() - start;
    bench_result("cxx-churn", "operations=%ld keys=%ld final_size=%zu checksum=%llu seconds=%.6f ops_per_sec=%.1f",
                 operations, keys, map.size(), static_cast<unsigned long long>(checksum), elapsed,
                 static_cast<double>(operations) / elapsed);
    return 0;
}
