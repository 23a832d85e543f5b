/* smc-pages: a store into one page of code changes what runs there, and
 * only there: code on other pages keeps running, and its jumps into the
 * changed page reach the new code.
 *
 * An RWX mapping of three pages: f (page 0) calls g (page 1) directly and
 * h (page 2) through a pointer; each returns a constant plus what it
 * calls. The loop runs f hot (its jumps linked, superblocks built), then
 * rewrites g's constant, then h's, then f's own, many times, checking the
 * sum each round against what the code says now. A translator that kept a
 * jump from f into the old g, or old h, or a superblock of the old code,
 * gets a different sum. Argument: calls of f between two rewrites.
 */
#include "common.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static unsigned char *p;

/* mov eax, imm32 ; ret */
static void put_ret(unsigned char *at, uint32_t v) {
    at[0] = 0xb8;
    memcpy(at + 1, &v, 4);
    at[5] = 0xc3;
}

/* f: push rbx; call g; mov ebx, eax; mov rax, [rip+ptr]; call rax;
 *    add eax, ebx; add eax, imm32; pop rbx; ret */
static void put_f(uint32_t k) {
    unsigned char *f = p;
    int i = 0;
    f[i++] = 0x53;                                   /* push rbx */
    f[i++] = 0xe8;                                   /* call rel32 g */
    int32_t rel = (int32_t)((p + 4096) - (f + i + 4));
    memcpy(f + i, &rel, 4);
    i += 4;
    f[i++] = 0x89; f[i++] = 0xc3;                    /* mov ebx, eax */
    f[i++] = 0x48; f[i++] = 0x8b; f[i++] = 0x05;     /* mov rax, [rip+d] */
    int32_t d = (int32_t)((p + 3000) - (f + i + 4));
    memcpy(f + i, &d, 4);
    i += 4;
    f[i++] = 0xff; f[i++] = 0xd0;                    /* call rax */
    f[i++] = 0x01; f[i++] = 0xd8;                    /* add eax, ebx */
    f[i++] = 0x05;                                   /* add eax, imm32 */
    memcpy(f + i, &k, 4);
    i += 4;
    f[i++] = 0x5b;                                   /* pop rbx */
    f[i++] = 0xc3;                                   /* ret */
}

int main(int argc, char **argv) {
    /* Calls of f between two rewrites (enough for superblocks by default). */
    int calls = argc > 1 ? atoi(argv[1]) : 20000;
    p = mmap(0, 3 * 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(p != MAP_FAILED);
    uint64_t hp = (uint64_t)(p + 2 * 4096);
    memcpy(p + 3000, &hp, 8);
    uint32_t kf = 1, kg = 10, kh = 100;
    put_f(kf);
    put_ret(p + 4096, kg);
    put_ret(p + 2 * 4096, kh);
    int (*f)(void) = (int (*)(void))p;
    uint64_t total = 0;
    for (int round = 0; round < 30; round++) {
        for (int k = 0; k < calls; k++) {
            int got = f();
            CHECK(got == (int)(kf + kg + kh));
            total += (uint64_t)got;
        }
        switch (round % 3) {
        case 0: kg += 7; put_ret(p + 4096, kg); break;
        case 1: kh += 11; put_ret(p + 2 * 4096, kh); break;
        default: kf += 13; put_f(kf); break;
        }
    }
    printf("smc-pages: %d %d %d total %llu\n", (int)kf, (int)kg, (int)kh,
           (unsigned long long)total);
    return 0;
}
