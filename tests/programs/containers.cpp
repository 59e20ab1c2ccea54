// Standard containers across threads: each worker builds maps, vectors,
// strings and shared_ptrs and hands shared objects to the others through a
// queue, so objects are destroyed on threads other than their creators'.
// The output is a deterministic digest of the results.
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <queue>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "hash.h"
#include "rng.h"

namespace {

constexpr int kThreads = 6;
constexpr int kRounds = 300;

struct Record {
    std::string name;
    std::vector<std::uint64_t> values;
    std::map<std::string, std::shared_ptr<std::string>> tags;
};

class Mailbox {
public:
    void put(std::shared_ptr<Record> record)
    {
        std::lock_guard<std::mutex> guard(lock_);
        queue_.push(std::move(record));
        ready_.notify_one();
    }
    std::shared_ptr<Record> take()
    {
        std::unique_lock<std::mutex> guard(lock_);
        ready_.wait(guard, [this] { return !queue_.empty(); });
        auto record = std::move(queue_.front());
        queue_.pop();
        return record;
    }

private:
    std::mutex lock_;
    std::condition_variable ready_;
    std::queue<std::shared_ptr<Record>> queue_;
};

std::shared_ptr<Record> make_record(int thread, int round)
{
    auto record = std::make_shared<Record>();
    struct rng rng = rng_seeded(static_cast<std::uint64_t>(thread) * 100003 + round);
    record->name = "record-" + std::to_string(thread) + "-" + std::to_string(round);
    record->values.resize(rng_below(&rng, 2000) + 1);
    for (auto &v : record->values)
        v = rng_next(&rng);
    std::uint64_t last = record->values.back();
    for (int t = 0; t < 20; t++)
        record->tags["tag" + std::to_string((last + t) % 37)] =
            std::make_shared<std::string>(static_cast<std::size_t>(last % 300), 'a' + t % 26);
    return record;
}

std::uint64_t digest(const Record &record)
{
    std::uint64_t h = record.name.size();
    for (auto v : record.values)
        h = hash64(h ^ v);
    for (const auto &[key, value] : record.tags)
        h = hash64(h ^ key.size() ^ (value->size() << 16));
    return h;
}

} // namespace

int main()
{
    std::vector<Mailbox> boxes(kThreads);
    std::vector<std::uint64_t> results(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; t++) {
        threads.emplace_back([t, &boxes, &results] {
            std::unordered_map<std::string, std::uint64_t> seen;
            std::uint64_t acc = 0;
            for (int round = 0; round < kRounds; round++) {
                boxes[(t + 1) % kThreads].put(make_record(t, round));
                auto received = boxes[t].take();
                std::uint64_t d = digest(*received);
                seen[received->name] = d;
                acc += d;
                received->values.clear();
                received->values.shrink_to_fit();
            }
            results[t] = acc ^ seen.size();
        });
    }
    for (auto &thread : threads)
        thread.join();
    for (int t = 0; t < kThreads; t++)
        std::printf("thread %d: %016llx\n", t, static_cast<unsigned long long>(results[t]));
    return 0;
}
