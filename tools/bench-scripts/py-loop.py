# Pure-Python loops: integer arithmetic, branches, list indexing and calls
# (no imports). Deterministic output: a few checksums.

def collatz_total(limit):
    total = 0
    longest = (0, 0)
    for start in range(1, limit):
        n = start
        steps = 0
        while n != 1:
            if n & 1:
                n = 3 * n + 1
            else:
                n >>= 1
            steps += 1
        total += steps
        if steps > longest[0]:
            longest = (steps, start)
    return total, longest


def sieve(n):
    flags = [True] * (n + 1)
    flags[0] = flags[1] = False
    i = 2
    while i * i <= n:
        if flags[i]:
            for j in range(i * i, n + 1, i):
                flags[j] = False
        i += 1
    return sum(1 for f in flags if f)


def lcg_mix(rounds):
    x = 12345
    acc = 0
    for i in range(rounds):
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        acc ^= (x >> (i % 7)) + i
    return acc


print("collatz", *collatz_total(80000))
print("primes", sieve(600000))
print("lcg", lcg_mix(500000))
