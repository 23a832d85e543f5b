/* getfs-rwx: arch_prctl(ARCH_GET_FS/GS) writing into a page that also holds
 * the running code.
 *
 * Linked with -Wl,-N (see the Makefile): text and data share one RWX
 * segment, so the result word lies on the same page as the code making the
 * syscall (checked below). A translator that write-protects pages holding
 * translated code must still let the kernel (or its own emulation of
 * arch_prctl) write there, and return 0 (a hotlift regression).
 * The bases are set to known values first; the word is written repeatedly
 * from a loop whose code is on the same page.
 */
#include "rt.h"

#define ARCH_SET_GS 0x1001
#define ARCH_SET_FS 0x1002
#define ARCH_GET_FS 0x1003
#define ARCH_GET_GS 0x1004

TEST_START
    lea rax, [rip + var]
    lea rbx, [rip + _start]
    shr rax, 12
    shr rbx, 12
    CHECKR(rax, rbx)
    SAY("result word is on the code page")

    mov edi, ARCH_GET_FS            /* never set: 0 in a static program */
    lea rsi, [rip + var]
    mov eax, 158
    syscall
    SHOWD("ARCH_GET_FS into the code page", rax)
    CHECK(rax, 0)
    SHOW("initial FS base", qword ptr [rip + var])
    CHECK(qword ptr [rip + var], 0)

    mov edi, ARCH_SET_FS
    mov rsi, 0x123456789000
    mov eax, 158
    syscall
    CHECK(rax, 0)
    mov edi, ARCH_SET_GS
    mov rsi, 0x0abcdef01000
    mov eax, 158
    syscall
    CHECK(rax, 0)

    mov r12d, 10
1:  mov qword ptr [rip + var], -1
    mov edi, ARCH_GET_FS
    lea rsi, [rip + var]
    mov eax, 158
    syscall
    CHECK(rax, 0)
    CHECK(qword ptr [rip + var], 0x123456789000)
    mov edi, ARCH_GET_GS
    lea rsi, [rip + var]
    mov eax, 158
    syscall
    CHECK(rax, 0)
    CHECK(qword ptr [rip + var], 0x0abcdef01000)
    dec r12d
    jnz 1b
    SAY("ARCH_GET_FS and ARCH_GET_GS into the code page, 10 times each")
    mov edi, ARCH_GET_FS
    lea rsi, [rip + var]
    mov eax, 158
    syscall
    SHOW("FS base", qword ptr [rip + var])
    mov edi, ARCH_GET_GS
    lea rsi, [rip + var]
    mov eax, 158
    syscall
    SHOW("GS base", qword ptr [rip + var])
    TEST_PASS

.data
var: .quad 0
