/* fork-paths: forked children run code their parent never runs, which
 * hotlift's parent makes before its next fork from what the earlier
 * children reported (dispatch/forkpath.rs). Each child runs the same
 * child-only functions, then a stub the parent rewrites before every
 * fork (mov eax, ROUND; ret), then functions the parent runs only after
 * the last child: a block made from the stub's old bytes, or one the
 * parent made and then ran differently, would show in a child's status
 * or in the parent's sums.
 *
 *   rounds 0-4: rewrite the stub, fork, the child runs child_path() and
 *               the stub and exits with a status from both, the parent
 *               prints it;
 *   round 5:    the parent runs child_path() itself, and the stub.
 * With an argument (the single-step count form) the loops are short.
 */
#include "common.h"
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static unsigned loops = 200;

static __attribute__((noinline)) unsigned mix(unsigned x, unsigned k) {
    for (unsigned i = 0; i < loops; i++) {
        if ((x ^ i) & (1u << (k % 7)))
            x = x * (2 * k + 3) + i;
        else
            x ^= x >> (k % 5 + 1);
    }
    return x;
}

static __attribute__((noinline)) unsigned child_path(unsigned seed) {
    unsigned x = seed;
    for (unsigned k = 0; k < 12; k++) {
        switch ((x + k) % 4) {
        case 0:
            x = mix(x, k);
            break;
        case 1:
            x = mix(x ^ 0x9e3779b9u, k + 1) + 7;
            break;
        case 2:
            x = ~mix(x, k + 2);
            break;
        default:
            x += k * 31;
        }
    }
    return x;
}

int main(int argc, char **argv) {
    if (argc > 1)
        loops = 8;
    unsigned char *stub = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(stub != MAP_FAILED);
    int (*fn)(void) = (int (*)(void))(void *)stub;
    for (int round = 0; round < 6; round++) {
        int value = 10 + round;
        stub[0] = 0xb8; /* mov eax, imm32 */
        memcpy(stub + 1, &value, 4);
        stub[5] = 0xc3; /* ret */
        __builtin___clear_cache((char *)stub, (char *)stub + 6);
        if (round == 5) {
            printf("parent: path %08x, stub %d\n", child_path(1u), fn());
            break;
        }
        fflush(stdout);
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) {
            unsigned x = child_path(1u);
            _exit((int)((x & 0x3f) + (unsigned)fn() * 2) & 0xff);
        }
        int status;
        CHECK(waitpid(pid, &status, 0) == pid);
        CHECK(WIFEXITED(status));
        printf("round %d: child exit %d\n", round, WEXITSTATUS(status));
    }
    return 0;
}
