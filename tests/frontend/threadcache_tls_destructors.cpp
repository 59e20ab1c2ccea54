// Allocation from thread-exit code: a pthread_key_create destructor and a
// C++ thread_local object's destructor both allocate and free, as late as
// the second round of key destructors, after the allocator may already
// have flushed the thread's cache. Blocks they leave behind are checked
// and freed by the main thread.
#include "check.h"
#include "pattern.h"
#include "probe.h"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <pthread.h>
#include <string>
#include <vector>

namespace {

constexpr int kThreads = 32;
constexpr std::size_t kLeftSize = 3000;

pthread_key_t key;
std::atomic<int> key_rounds{0};
std::atomic<int> local_destructors{0};

std::mutex left_lock;
std::vector<std::pair<void *, std::uint64_t>> left_behind; // freed by main

void leave_block(std::uint64_t seed)
{
    void *p = std::malloc(kLeftSize);
    REQUIRE(p != nullptr);
    pattern_fill(p, kLeftSize, seed);
    std::lock_guard<std::mutex> guard(left_lock);
    left_behind.emplace_back(p, seed);
}

// Allocates a spread of sizes, verifies and frees them.
void churn(std::uint64_t seed)
{
    void *blocks[40];
    for (std::size_t i = 0; i < 40; i++) {
        blocks[i] = std::malloc(8 << (i % 14));
        REQUIRE(blocks[i] != nullptr);
        if (corealloc_active())
            CHECK(probe_object_start(blocks[i]) == blocks[i]);
        pattern_fill(blocks[i], 8 << (i % 14), seed + i);
    }
    for (std::size_t i = 0; i < 40; i++) {
        CHECK_EQ(pattern_mismatch(blocks[i], 8 << (i % 14), seed + i), PATTERN_OK);
        std::free(blocks[i]);
    }
}

void key_destructor(void *value)
{
    auto *round = static_cast<std::uintptr_t *>(value);
    std::uintptr_t n = ++*round;
    key_rounds++;
    churn(n * 1000);
    leave_block(0xAB00 + n);
    if (n == 1) {
        // ask for a second round: set the key again from its destructor
        pthread_setspecific(key, round);
    } else {
        std::free(round);
    }
}

struct LocalState {
    std::vector<std::string> strings;
    LocalState()
    {
        for (int i = 0; i < 100; i++)
            strings.push_back(std::string(static_cast<std::size_t>(i) * 7, 'x'));
    }
    ~LocalState()
    {
        local_destructors++;
        std::vector<std::string> copy(strings.begin(), strings.end());
        strings.clear();
        strings.shrink_to_fit();
        churn(77777);
        leave_block(0xCD00);
        CHECK_EQ(copy.size(), 100);
    }
};

thread_local LocalState local_state;

void *thread_main(void *)
{
    auto *round = static_cast<std::uintptr_t *>(std::malloc(sizeof(std::uintptr_t)));
    REQUIRE(round != nullptr);
    *round = 0;
    pthread_setspecific(key, round);
    CHECK_EQ(local_state.strings.size(), 100); // constructs the thread_local
    churn(5);
    return nullptr;
}

} // namespace

int main()
{
    REQUIRE(pthread_key_create(&key, key_destructor) == 0);
    pthread_t tids[kThreads];
    for (auto &t : tids)
        REQUIRE(pthread_create(&t, nullptr, thread_main, nullptr) == 0);
    for (auto &t : tids)
        pthread_join(t, nullptr);

    CHECK_EQ(key_rounds.load(), 2 * kThreads);
    CHECK_EQ(local_destructors.load(), kThreads);
    CHECK_EQ(left_behind.size(), 3 * kThreads);
    for (auto &[p, seed] : left_behind) {
        CHECK_EQ(pattern_mismatch(p, kLeftSize, seed), PATTERN_OK);
        std::free(p);
    }
    left_behind.clear();
    return check_status();
}
