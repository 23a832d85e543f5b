/* threads-jit: worker threads compute in tight loops while the main
 * thread generates code at run time, calls it, rewrites it in place and
 * unmaps it, over and over: every change to translated code drops the
 * translations while the workers run (hotlift stops them first). All
 * printed values are deterministic. */
#include "common.h"

#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>

enum { NWORKERS = 3, ROUNDS = 50 };

static volatile int stop, started;
static uint64_t results[NWORKERS];

static uint64_t step(uint64_t h, uint64_t i) {
    h ^= i;
    return h * 1099511628211ull;
}

static void *worker(void *p) {
    int id = (int)(uintptr_t)p;
    uint64_t h = 1469598103934665603ull + (uint64_t)id, n = 0;
    __atomic_add_fetch(&started, 1, __ATOMIC_SEQ_CST);
    do {
        for (int i = 0; i < 1000; i++)
            h = step(h, (uint64_t)i + n);
        n++;
    } while (!stop);
    /* How long it ran differs from run to run: report that it did. */
    results[id] = n > 0 && h != 0 ? 1 : 0;
    return NULL;
}

/* mov eax, imm32; ret */
static void emit_const(unsigned char *code, uint32_t v) {
    code[0] = 0xb8;
    memcpy(code + 1, &v, 4);
    code[5] = 0xc3;
}

int main(void) {
    pthread_t t[NWORKERS];
    for (int i = 0; i < NWORKERS; i++)
        CHECK(pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i) == 0);
    while (started < NWORKERS)
        sched_yield();
    uint64_t sum = 0;
    for (int r = 0; r < ROUNDS; r++) {
        unsigned char *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        CHECK(code != MAP_FAILED);
        uint32_t (*f)(void) = (uint32_t(*)(void))code;
        emit_const(code, (uint32_t)r);
        sum += f();
        /* Rewrite the code in place (a store into translated code). */
        emit_const(code, (uint32_t)(r * 3));
        sum += f();
        CHECK(munmap(code, 4096) == 0);
    }
    stop = 1;
    for (int i = 0; i < NWORKERS; i++)
        CHECK(pthread_join(t[i], NULL) == 0);
    printf("sum %llu (expect %d)\n", (unsigned long long)sum, 4 * (ROUNDS - 1) * ROUNDS / 2);
    for (int i = 0; i < NWORKERS; i++)
        printf("worker %d ran: %llu\n", i, (unsigned long long)results[i]);
    CHECK(sum == 4ull * (ROUNDS - 1) * ROUNDS / 2);
    puts("ok");
    return 0;
}
