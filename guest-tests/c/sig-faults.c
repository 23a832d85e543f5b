/* sig-faults: synchronous signals to guest handlers, with the exact state
 * of the faulting instruction.
 *
 * A null load (SIGSEGV, SEGV_MAPERR, si_addr 0, RIP at the load) left with
 * siglongjmp, and one from a page unmapped inside a mapping (SEGV_MAPERR); a store into a read-only page that the handler makes
 * writable and returns, so the store runs again; an integer division by
 * zero (SIGFPE, FPE_INTDIV, si_addr and RIP at it: hotlift's si_addr
 * was the code cache's) that the handler steps over, setting RAX in
 * the ucontext; ud2 (SIGILL, ILL_ILLOPN, si_addr at it) stepped over;
 * int3 (SIGTRAP, RIP past it); a `call` whose return-address push runs
 * into a guard page (a stack overflow), handled on the alternate stack,
 * which must see RSP and RIP as they were before the call. The handlers
 * check the interrupted RIP and registers against what the program put
 * there.
 */
#include "common.h"
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

extern char load_at[], div_at[], ud2_at[], int3_after[], call_at[];

static sigjmp_buf jb;
static volatile int segv_code, segv_rip_ok, segv_rbx_ok;
static volatile void *segv_addr;

static void h_segv_jump(int sig, siginfo_t *si, void *ucv) {
    (void)sig;
    ucontext_t *uc = ucv;
    segv_code = si->si_code;
    segv_addr = si->si_addr;
    segv_rip_ok = uc->uc_mcontext.gregs[REG_RIP] == (greg_t)load_at;
    segv_rbx_ok = uc->uc_mcontext.gregs[REG_RBX] == 0x1234;
    siglongjmp(jb, 1);
}

static char *page;
static volatile int fixes;
static void h_segv_fix(int sig, siginfo_t *si, void *uc) {
    (void)sig; (void)uc;
    CHECK((char *)si->si_addr == page + 8);
    fixes++;
    CHECK(mprotect(page, 4096, PROT_READ | PROT_WRITE) == 0);
}

static volatile int fpe_code, fpe_rip_ok;
static void h_fpe(int sig, siginfo_t *si, void *ucv) {
    (void)sig;
    ucontext_t *uc = ucv;
    fpe_code = si->si_code;
    fpe_rip_ok = uc->uc_mcontext.gregs[REG_RIP] == (greg_t)div_at && si->si_addr == (void *)div_at;
    uc->uc_mcontext.gregs[REG_RIP] += 2; /* idiv ecx: f7 f9 */
    uc->uc_mcontext.gregs[REG_RAX] = 7;
}

static volatile int ill_code, ill_addr_ok;
static void h_ill(int sig, siginfo_t *si, void *ucv) {
    (void)sig;
    ucontext_t *uc = ucv;
    ill_code = si->si_code;
    ill_addr_ok = si->si_addr == (void *)ud2_at && uc->uc_mcontext.gregs[REG_RIP] == (greg_t)ud2_at;
    uc->uc_mcontext.gregs[REG_RIP] += 2;
}

static volatile int traps, trap_rip_ok;
static void h_trap(int sig, siginfo_t *si, void *ucv) {
    (void)sig; (void)si;
    ucontext_t *uc = ucv;
    traps++;
    trap_rip_ok = uc->uc_mcontext.gregs[REG_RIP] == (greg_t)int3_after;
}

static char *guard_top;
static volatile int so_rip_ok, so_rsp_ok, so_addr_ok, so_on_alt;
static char altstack[65536];
static void h_overflow(int sig, siginfo_t *si, void *ucv) {
    (void)sig;
    ucontext_t *uc = ucv;
    char here;
    so_on_alt = &here >= altstack && &here < altstack + sizeof altstack;
    so_rip_ok = uc->uc_mcontext.gregs[REG_RIP] == (greg_t)call_at;
    so_rsp_ok = uc->uc_mcontext.gregs[REG_RSP] == (greg_t)guard_top;
    so_addr_ok = (char *)si->si_addr == guard_top - 8;
    siglongjmp(jb, 2);
}

static void on_flags(int sig, void (*fn)(int, siginfo_t *, void *), int flags) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = fn;
    sa.sa_flags = SA_SIGINFO | flags;
    CHECK(sigaction(sig, &sa, NULL) == 0);
}

static void on(int sig, void (*fn)(int, siginfo_t *, void *)) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = fn;
    sa.sa_flags = SA_SIGINFO;
    CHECK(sigaction(sig, &sa, NULL) == 0);
}

int main(void) {
    on(SIGSEGV, h_segv_jump);
    if (sigsetjmp(jb, 1) == 0) {
        __asm__ volatile("mov $0x1234, %%ebx\n\t"
                         "xor %%eax, %%eax\n"
                         "load_at:\n\t"
                         "mov (%%rax), %%eax"
                         ::: "rax", "rbx", "memory");
        puts("not reached");
    }
    printf("null load: SEGV_MAPERR %d, si_addr 0 %d, rip %d, rbx %d\n", segv_code == SEGV_MAPERR,
           segv_addr == NULL, segv_rip_ok, segv_rbx_ok);

    /* A load from a page unmapped in the middle of a mapping: nothing is
     * mapped there (SEGV_MAPERR), whatever a translator keeps there. */
    char *three = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(three != MAP_FAILED && munmap(three + 4096, 4096) == 0);
    if (sigsetjmp(jb, 1) == 0) {
        (void)*(volatile char *)(three + 4096);
        puts("not reached");
    }
    printf("load from an unmapped hole: SEGV_MAPERR %d, si_addr %d\n", segv_code == SEGV_MAPERR,
           segv_addr == three + 4096);

    on(SIGSEGV, h_segv_fix);
    page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(page != MAP_FAILED);
    ((volatile char *)page)[8] = 42;
    printf("store into a read-only page: %d after %d fix\n", page[8], fixes);

    on(SIGFPE, h_fpe);
    int q;
    __asm__ volatile("mov $100, %%eax\n\t"
                     "cltd\n\t"
                     "xor %%ecx, %%ecx\n"
                     "div_at:\n\t"
                     "idiv %%ecx"
                     : "=a"(q) :: "rcx", "rdx");
    printf("division by zero: FPE_INTDIV %d, rip %d, result from the handler %d\n",
           fpe_code == FPE_INTDIV, fpe_rip_ok, q);

    on(SIGILL, h_ill);
    __asm__ volatile("ud2_at:\n\tud2" ::: "memory");
    printf("ud2: ILL_ILLOPN %d, address %d\n", ill_code == ILL_ILLOPN, ill_addr_ok);

    on(SIGTRAP, h_trap);
    __asm__ volatile("int3\nint3_after:" ::: "memory");
    printf("int3: %d trap, rip past it %d\n", traps, trap_rip_ok);

    stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack, .ss_flags = 0};
    CHECK(sigaltstack(&ss, NULL) == 0);
    on_flags(SIGSEGV, h_overflow, SA_ONSTACK);
    char *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED && mprotect(m, 4096, PROT_NONE) == 0);
    guard_top = m + 4096;
    if (sigsetjmp(jb, 1) == 0) {
        __asm__ volatile("mov %%rsp, %%r12\n\t"
                         "mov %0, %%rsp\n"
                         "call_at:\n\t"
                         "call 1f\n"
                         "1:\n\t"
                         "mov %%r12, %%rsp"
                         :: "r"(guard_top) : "r12", "memory");
        puts("not reached");
    }
    printf("stack overflow in a call: on the alternate stack %d, rip %d, rsp %d, address %d\n",
           so_on_alt, so_rip_ok, so_rsp_ok, so_addr_ok);
    return 0;
}
