// Linked with libcorealloc.a: C++ operator new/delete are corealloc's too,
// and standard containers run on it.
#include "check.h"

#include <corealloc.h>

#include <map>
#include <memory>
#include <new>
#include <string>
#include <vector>

namespace {

void check_ours(const void *p)
{
    REQUIRE(p != nullptr);
    CHECK(corealloc_object_start(p) == p);
}

} // namespace

int main()
{
    void *raw = ::operator new(100);
    check_ours(raw);
    ::operator delete(raw, 100);
    void *aligned = ::operator new(100, std::align_val_t{4096});
    check_ours(aligned);
    ::operator delete(aligned, std::align_val_t{4096});

    auto owned = std::make_unique<std::string>(200, 'q');
    check_ours(owned->data());
    std::vector<int> numbers(5000, 3);
    check_ours(numbers.data());
    std::map<int, std::string> map;
    for (int i = 0; i < 2000; i++)
        map[i] = std::string(static_cast<std::size_t>(i % 100), 'm');
    CHECK_EQ(map.size(), 2000);
    CHECK_EQ(map[1999].size(), 99);
    return check_status();
}
