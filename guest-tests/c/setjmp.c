/* setjmp: non-local jumps.
 *
 * longjmp out of deep recursion (restoring rsp across thousands of frames),
 * repeated setjmp/longjmp in a loop, the value 0 turning into 1, local
 * variables declared volatile surviving, nested jump buffers, and
 * sigsetjmp/siglongjmp with and without saving the signal mask (the mask is
 * not changed, so no handler is needed). glibc mangles the saved rsp/rip
 * with a per-process guard in the TCB (fs:0x30): the translator must keep
 * FS-relative loads exact for this to work.
 */
#include <setjmp.h>
#include <signal.h>
#include "common.h"

static jmp_buf top;
static int depth_reached;

static void dive(int depth, int target) {
    volatile char pad[64];
    pad[0] = (char)depth;
    if (depth > target)
        return;
    if (depth == target) {
        depth_reached = depth + pad[0] - (char)depth;
        longjmp(top, depth);
    }
    dive(depth + 1, target);
    pad[1] = 0;     /* not reached */
}

static jmp_buf inner, outer;
static int order[8], norder;

static void level2(void) {
    order[norder++] = 2;
    longjmp(inner, 7);
}
static void level1(void) {
    order[norder++] = 1;
    if (setjmp(inner) == 0)
        level2();
    order[norder++] = 3;
    longjmp(outer, 9);
}

int main(void) {
    int v = setjmp(top);
    if (v == 0) {
        dive(0, 10000);
        CHECK(!"dive returned");
    }
    printf("longjmp from depth %d returned %d\n", depth_reached, v);
    CHECK(v == 10000);

    volatile int count = 0;
    volatile long sum = 0;
    jmp_buf loop;
    int r = setjmp(loop);
    sum += r;
    if (count < 1000) {
        count++;
        longjmp(loop, count);
    }
    printf("1000 longjmps in a loop: sum of values %ld\n", sum);
    CHECK(sum == 500500);

    jmp_buf zero;
    r = setjmp(zero);
    if (r == 0)
        longjmp(zero, 0);
    printf("longjmp(buf, 0) makes setjmp return %d\n", r);
    CHECK(r == 1);

    r = setjmp(outer);
    if (r == 0)
        level1();
    printf("nested buffers: order %d %d %d, outer value %d\n", order[0], order[1], order[2], r);
    CHECK(norder == 3 && order[0] == 1 && order[1] == 2 && order[2] == 3 && r == 9);

    sigjmp_buf sj;
    for (volatile int save = 0; save <= 1; save++) {
        volatile int tries = 0;
        r = sigsetjmp(sj, save);
        if (tries++ < 3)
            siglongjmp(sj, 5 + save);
        printf("sigsetjmp(save=%d): value %d after %d tries\n", save, r, tries);
        CHECK(r == 5 + save && tries == 4);
    }
    sigset_t cur;
    sigprocmask(SIG_BLOCK, NULL, &cur);
    printf("SIGUSR1 blocked after siglongjmp: %d\n", sigismember(&cur, SIGUSR1));
    puts("ok");
    return 0;
}
