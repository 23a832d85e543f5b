/* recursion: 100,000-deep recursion with moderate frames (~200 bytes each,
 * 20+ MB of stack in total is too much for the 8 MiB default, so frames are
 * kept near 64 bytes), Ackermann's function (deep and irregular), and
 * mutual recursion through function pointers. The compiler must not turn
 * the recursions into loops: the frames are made observable. "count":
 * 1,000 deep, smaller arguments.
 */
#include "common.h"

static volatile int sink;

__attribute__((noinline)) static long deep(long n, long acc) {
    volatile long local[4] = {n, acc, n ^ acc, n + 1};
    if (n == 0)
        return acc;
    long r = deep(n - 1, acc + local[0] % 7);
    sink = (int)local[2];
    return r + (local[3] & 1);
}

__attribute__((noinline)) static unsigned long ack(unsigned long m, unsigned long n) {
    if (m == 0)
        return n + 1;
    if (n == 0)
        return ack(m - 1, 1);
    return ack(m - 1, ack(m, n - 1));
}

typedef long (*step_fn)(long, int);
static long even_step(long n, int k);
static long odd_step(long n, int k);
static step_fn steps[2] = {even_step, odd_step};
__attribute__((noinline)) static long even_step(long n, int k) {
    return n == 0 ? k : steps[(n - 1) & 1](n - 1, k + 2);
}
__attribute__((noinline)) static long odd_step(long n, int k) {
    return n == 0 ? -k : steps[(n - 1) & 1](n - 1, k + 1);
}

int main(int argc, char **argv) {
    int count = count_mode(argc, argv);
    long depth = count ? 1000 : 100000;
    long r = deep(depth, 0);
    printf("deep(%ld) = %ld\n", depth, r);
    unsigned long a = ack(2, count ? 30 : 300);
    printf("ack(2, %d) = %lu\n", count ? 30 : 300, a);
    CHECK(a == (count ? 63 : 603));
    unsigned long b = ack(3, bench_mode(argc, argv) ? 11 : count ? 2 : 5);
    printf("ack(3, n) = %lu\n", b);
    long m = even_step(count ? 600 : 60000, 0);
    printf("mutual recursion through pointers: %ld\n", m);
    CHECK(m == (count ? 900 : 90000));
    puts("ok");
    return 0;
}
