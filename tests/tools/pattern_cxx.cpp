// C++ allocations: 6 scalar news of a 40-byte object, 2 array news of 10
// ints, 1 aligned new of a 128-aligned type; all deleted.
#include <new>

struct Forty {
    char bytes[40];
};

struct alignas(128) Wide {
    char bytes[128];
};

int main()
{
    Forty *scalars[6];
    for (auto &s : scalars)
        s = new Forty();
    int *arrays[2] = { new int[10](), new int[10]() };
    Wide *wide = new Wide();
    for (auto *s : scalars)
        delete s;
    for (auto *a : arrays)
        delete[] a;
    delete wide;
    return 0;
}
