/* A C++ program whose hot function has a mangled name (tests/export.rs). */
#include <cstdio>
#include <map>
#include <vector>
namespace work {
__attribute__((noinline)) long sum(const std::vector<long> &v) {
    long s = 0;
    for (int r = 0; r < 2000; r++)
        for (long x : v)
            s += x ^ r;
    return s;
}
}
int main() {
    std::map<int, long> m;
    std::vector<long> v;
    for (int i = 0; i < 1000; i++) {
        m[i % 97] += i;
        v.push_back(i);
    }
    std::printf("%ld %zu\n", work::sum(v), m.size());
    return 0;
}
