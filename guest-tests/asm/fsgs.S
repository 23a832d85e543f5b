/* fsgs: the FS and GS segment bases (TLS registers).
 *
 * The guest owns FS and GS. Sets them with arch_prctl and reads through
 * fs:/gs: prefixed loads, stores, read-modify-writes and index
 * addressing; checks that lea ignores the segment; reads them back with
 * arch_prctl(ARCH_GET_FS/GS); and, when AT_HWCAP2 says FSGSBASE is enabled,
 * uses rdfsbase/wrfsbase/rdgsbase/wrgsbase and cross-checks both paths.
 * No address is printed.
 */
#include "rt.h"

#define ARCH_SET_GS 0x1001
#define ARCH_SET_FS 0x1002
#define ARCH_GET_FS 0x1003
#define ARCH_GET_GS 0x1004

TEST_START
    /* find AT_HWCAP2 (26) in the auxiliary vector above argv/envp */
    mov rax, [rsp]                  /* argc */
    lea rbx, [rsp + 8 + rax * 8 + 8]    /* envp */
1:  cmp qword ptr [rbx], 0
    lea rbx, [rbx + 8]
    jne 1b
    xor r15d, r15d                  /* hwcap2 */
2:  mov rax, [rbx]
    test rax, rax
    jz 4f
    cmp rax, 26
    jne 3f
    mov r15, [rbx + 8]
3:  add rbx, 16
    jmp 2b
4:
    /* initial FS/GS of a static program that has not set them */
    mov edi, ARCH_GET_FS
    lea rsi, [rip + got]
    mov eax, 158
    syscall
    CHECK(rax, 0)
    SHOW("initial FS base", qword ptr [rip + got])

    /* arch_prctl(ARCH_SET_FS, tls) and fs: accesses */
    mov edi, ARCH_SET_FS
    lea rsi, [rip + tls]
    mov eax, 158
    syscall
    CHECK(rax, 0)
    mov rax, fs:[8]
    SHOW("fs:[8]", rax)
    CHECK(rax, 0x2222222222222222)
    mov rax, qword ptr fs:0         /* moffs-style absolute form */
    CHECK(rax, 0x1111111111111111)
    mov ecx, 2
    mov rax, fs:[rcx * 8 + 8]
    CHECK(rax, 0x4444444444444444)
    mov qword ptr fs:[16], 0x33
    CHECK(qword ptr [rip + tls + 16], 0x33)
    add dword ptr fs:[16], 0x10
    lock inc qword ptr fs:[16]
    CHECK(qword ptr [rip + tls + 16], 0x44)
    movzx eax, byte ptr fs:[31]
    CHECK(rax, 0x44)
    cmp qword ptr fs:[0], 0
    SHOWF("cmp fs:[0], 0", F_ZF)
    CHECKF(F_ZF, 0)
    .byte 0x64                      /* lea rax, fs:[8]: the prefix is ignored */
    lea rax, [8]
    SHOW("lea rax, fs:[8] ignores the base", rax)
    CHECK(rax, 8)
    movdqu xmm0, fs:[0]
    movq rax, xmm0
    CHECK(rax, 0x1111111111111111)
    SAY("fs-relative loads, stores, RMW, SSE")
    mov edi, ARCH_GET_FS
    lea rsi, [rip + got]
    mov eax, 158
    syscall
    mov rax, [rip + got]
    lea rbx, [rip + tls]
    CHECKR(rax, rbx)
    SAY("ARCH_GET_FS returns what was set")

    /* GS */
    mov edi, ARCH_SET_GS
    lea rsi, [rip + tls + 8]
    mov eax, 158
    syscall
    CHECK(rax, 0)
    mov rax, gs:[0]
    CHECK(rax, 0x2222222222222222)
    mov rax, fs:[0]
    CHECK(rax, 0x1111111111111111)
    SAY("gs and fs independent")
    mov edi, ARCH_GET_GS
    lea rsi, [rip + got]
    mov eax, 158
    syscall
    mov rax, [rip + got]
    lea rbx, [rip + tls + 8]
    CHECKR(rax, rbx)

    /* FSGSBASE instructions */
    mov rax, r15
    and eax, 2
    SHOW("AT_HWCAP2 & 2 (FSGSBASE)", rax)
    test r15, 2
    jz no_fsgsbase
    rdfsbase rax
    lea rbx, [rip + tls]
    CHECKR(rax, rbx)
    rdgsbase rax
    lea rbx, [rip + tls + 8]
    CHECKR(rax, rbx)
    lea rax, [rip + tls + 24]
    wrfsbase rax
    mov rax, fs:[0]
    CHECK(rax, 0x4444444444444444)
    mov edi, ARCH_GET_FS
    lea rsi, [rip + got]
    mov eax, 158
    syscall
    mov rax, [rip + got]
    lea rbx, [rip + tls + 24]
    CHECKR(rax, rbx)
    xor eax, eax
    wrgsbase rax
    rdgsbase rbx
    CHECK(rbx, 0)
    mov eax, 39                     /* a syscall keeps the bases */
    syscall
    rdfsbase rax
    lea rbx, [rip + tls + 24]
    CHECKR(rax, rbx)
    SAY("rdfsbase/wrfsbase/rdgsbase/wrgsbase agree with arch_prctl")
    TEST_PASS
no_fsgsbase:
    SAY("FSGSBASE instructions: skipped, not enabled")
    TEST_PASS

.data
.balign 16
tls: .quad 0x1111111111111111, 0x2222222222222222, 0x3333333333333333, 0x4444444444444444
got: .quad 0
