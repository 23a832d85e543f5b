/* syscalls: raw system calls and the syscall instruction's register rules.
 *
 * write (counts, zero length, bad fd), getpid/getppid/gettid consistency
 * (no pid is printed), uname sysname and machine, clock_gettime(MONOTONIC)
 * never going backwards, nanosleep, pipe2 round trip, brk growth, mmap/
 * munmap, reading stdin to EOF, the signal mask inherited at exec, and
 * unknown syscall numbers failing with exactly -ENOSYS (335 is not used: it
 * became uretprobe in Linux 6.11 and raises SIGILL), and the number being
 * taken from eax only. After syscall, rcx
 * holds the address of the next instruction, r11 the flags, and every other
 * register is preserved.
 */
#include "rt.h"

#define SYS(n) mov eax, n; syscall
#define HELLO_LEN 17

TEST_START
    /* write returns the count; zero-length write returns 0; bad fd EBADF */
    mov edi, 1
    lea rsi, [rip + hello]
    mov edx, HELLO_LEN
    SYS(1)
    SHOWD("write returned", rax)
    CHECK(rax, HELLO_LEN)
    mov edi, 1
    lea rsi, [rip + hello]
    xor edx, edx
    SYS(1)
    CHECK(rax, 0)
    mov edi, -1
    lea rsi, [rip + hello]
    mov edx, 1
    SYS(1)
    SHOW("write(-1) returned", rax)
    CHECK(rax, -9)

    /* rcx, r11 and the preserved registers around syscall */
    mov rbx, 0x1111
    mov rbp, 0x2222
    mov r8, 0x8888
    mov r9, 0x9999
    mov r10, 0xaaaa
    mov r12, 0xcccc
    mov r13, 0xdddd
    mov r14, 0xeeee
    mov r15, 0xffff
    mov rdi, 0x7777
    mov rsi, 0x6666
    mov rdx, 0x5555
    mov eax, 39                     /* getpid */
    SETF(F_CF | F_SF | F_OF)
    syscall
after_syscall:
    SHOWF("flags after syscall", F_ARITH)
    CHECKF(F_ARITH, F_CF | F_SF | F_OF)
    CHECK(rcx, offset after_syscall)
    SAY("rcx = address after syscall")
    mov rax, r11
    and eax, 0xcd5
    SHOW("r11 & 0xcd5 (saved flags)", rax)
    CHECK(rax, 0x881)
    CHECK(rbx, 0x1111)
    CHECK(rbp, 0x2222)
    CHECK(r8, 0x8888)
    CHECK(r9, 0x9999)
    CHECK(r10, 0xaaaa)
    CHECK(r12, 0xcccc)
    CHECK(r13, 0xdddd)
    CHECK(r14, 0xeeee)
    CHECK(r15, 0xffff)
    CHECK(rdi, 0x7777)
    CHECK(rsi, 0x6666)
    CHECK(rdx, 0x5555)
    SAY("all other registers preserved")

    /* pids: consistent, never printed */
    SYS(39)
    mov r12, rax
    SYS(39)
    CHECKR(rax, r12)
    SYS(186)                        /* gettid == getpid in a one-thread process */
    CHECKR(rax, r12)
    SYS(110)                        /* getppid */
    cmp rax, r12
    jne 1f
    FAIL("getppid == getpid")
1:  cmp rax, 0
    jg 2f
    FAIL("getppid <= 0")
2:  SAY("getpid stable, gettid == getpid, getppid differs")
    SYS(102)                        /* getuid */
    mov r12, rax
    SYS(107)                        /* geteuid */
    CHECKR(rax, r12)
    SAY("getuid == geteuid")

    /* uname */
    lea rdi, [rip + utsname]
    SYS(63)
    CHECK(rax, 0)
    lea rdi, [rip + utsname]
    call rt_putsln
    lea rdi, [rip + utsname + 65 * 4]
    call rt_putsln

    /* clock_gettime(CLOCK_MONOTONIC): never backwards over 1000 calls */
    mov edi, 1
    lea rsi, [rip + ts0]
    SYS(228)
    CHECK(rax, 0)
    xor r13d, r13d
    mov r12d, 1000
3:  mov edi, 1
    lea rsi, [rip + ts1]
    SYS(228)
    /* ts1 - ts0 as one number (seconds, then nanoseconds below 10^9 as the
       borrow): negative when time went backwards. Branch-free, so the
       instruction count does not depend on where the seconds tick over. */
    mov rax, [rip + ts1 + 8]
    sub rax, [rip + ts0 + 8]
    mov rax, [rip + ts1]
    sbb rax, [rip + ts0]
    shr rax, 63
    add r13, rax
    mov rax, [rip + ts1]
    mov [rip + ts0], rax
    mov rax, [rip + ts1 + 8]
    mov [rip + ts0 + 8], rax
    dec r12d
    jnz 3b
    SHOWD("clock_gettime went backwards", r13)
    CHECK(r13, 0)

    /* nanosleep 1 ms */
    lea rdi, [rip + one_ms]
    xor esi, esi
    SYS(35)
    CHECK(rax, 0)
    SAY("nanosleep 1 ms")

    /* pipe2 round trip */
    lea rdi, [rip + fds]
    xor esi, esi
    SYS(293)
    CHECK(rax, 0)
    mov edi, [rip + fds + 4]
    lea rsi, [rip + hello]
    mov edx, 5
    SYS(1)
    CHECK(rax, 5)
    mov edi, [rip + fds]
    lea rsi, [rip + buf]
    mov edx, 64
    SYS(0)
    SHOWD("read from pipe", rax)
    CHECK(rax, 5)
    mov eax, [rip + buf]
    CHECK(rax, 0x6c6c6568)          /* "hell" */
    mov edi, [rip + fds]
    SYS(3)
    mov edi, [rip + fds + 4]
    SYS(3)
    CHECK(rax, 0)

    /* read stdin (the manifest feeds inputs/short.txt), echo it, then EOF */
    xor edi, edi
    lea rsi, [rip + buf]
    mov edx, 64
    SYS(0)
    SHOWD("read(0, buf, 64)", rax)
    CHECK(rax, 18)
    mov edi, 1
    lea rsi, [rip + buf]
    mov edx, 18
    SYS(1)
    xor edi, edi
    lea rsi, [rip + buf]
    mov edx, 64
    SYS(0)
    SHOWD("read at EOF", rax)
    CHECK(rax, 0)

    /* brk */
    xor edi, edi
    SYS(12)
    mov r12, rax
    lea rdi, [rax + 65536]
    SYS(12)
    lea rbx, [r12 + 65536]
    CHECKR(rax, rbx)
    mov qword ptr [r12 + 65536 - 8], 42
    CHECK(qword ptr [r12 + 65536 - 8], 42)
    SAY("brk grows by 64 KiB and the memory is usable")

    /* mmap / munmap */
    xor edi, edi
    mov esi, 1 << 20
    mov edx, 3
    mov r10d, 0x22
    mov r8, -1
    xor r9d, r9d
    SYS(9)
    mov r12, rax
    mov rax, r12
    and eax, 0xfff
    CHECK(rax, 0)
    mov qword ptr [r12 + (1 << 20) - 8], 7
    CHECK(qword ptr [r12], 0)
    mov rdi, r12
    mov esi, 1 << 20
    SYS(11)
    CHECK(rax, 0)
    SAY("mmap 1 MiB anonymous, zero-filled, munmap")

    /* the signal mask at exec (rt_sigprocmask(SIG_BLOCK, NULL, &old, 8)) */
    xor edi, edi
    xor esi, esi
    lea rdx, [rip + sigmask]
    mov r10d, 8
    SYS(14)
    CHECK(rax, 0)
    SHOW("blocked signals at start", qword ptr [rip + sigmask])

    /* unknown syscall numbers: exactly -ENOSYS */
    SYS(1000)
    SHOW("syscall 1000", rax)
    CHECK(rax, -38)
    SYS(0x3fffffff)
    CHECK(rax, -38)
    /* Linux (5.x and later) takes the number from eax as an int: the upper
       half of rax is ignored, so this is write(1, "(", 1) */
    mov rax, 0x100000001
    mov edi, 1
    lea rsi, [rip + paren]
    mov edx, 1
    syscall
    SAY(") <- written by syscall rax=0x100000001")
    SHOW("syscall 0x100000001 returned", rax)
    CHECK(rax, 1)
    TEST_PASS

.section .rodata
hello: .ascii "hello from write\n"     /* HELLO_LEN bytes */
one_ms: .quad 0, 1000000
paren: .ascii "("

.bss
.balign 16
utsname: .skip 65 * 6
ts0: .skip 16
ts1: .skip 16
fds: .skip 8
buf: .skip 64
sigmask: .skip 8
