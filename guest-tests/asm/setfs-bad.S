/* setfs-bad: arch_prctl(ARCH_SET_FS/ARCH_SET_GS) with an address outside
 * the user address space fails with -EPERM and leaves the base unchanged.
 *
 * A translator that keeps the guest's FS/GS itself must apply the kernel's
 * checks rather than accept any value (a hotlift regression).
 * Checked: two non-canonical/kernel addresses for FS and GS (both above
 * TASK_SIZE with 4- and 5-level paging) return -EPERM (-1); after a valid
 * ARCH_SET_FS, a failing one keeps the old base (ARCH_GET_FS and an fs:
 * load agree); an unknown arch_prctl code returns -EINVAL (-22).
 */
#include "rt.h"

#define ARCH_SET_GS 0x1001
#define ARCH_SET_FS 0x1002
#define ARCH_GET_FS 0x1003
#define ARCH_GET_GS 0x1004

.macro ARCH code, addr
    mov edi, \code
    mov rsi, \addr
    mov eax, 158
    syscall
.endm

TEST_START
    ARCH ARCH_SET_FS, 0x8000000000000000
    SHOW("ARCH_SET_FS 0x8000000000000000", rax)
    CHECK(rax, -1)
    ARCH ARCH_SET_FS, 0xfffffffffffff000
    SHOW("ARCH_SET_FS 0xfffffffffffff000", rax)
    CHECK(rax, -1)
    ARCH ARCH_SET_GS, 0x8000000000000000
    SHOW("ARCH_SET_GS 0x8000000000000000", rax)
    CHECK(rax, -1)
    ARCH ARCH_SET_GS, 0xfffffffffffff000
    SHOW("ARCH_SET_GS 0xfffffffffffff000", rax)
    CHECK(rax, -1)

    lea rbx, [rip + tls]
    ARCH ARCH_SET_FS, rbx
    CHECK(rax, 0)
    ARCH ARCH_SET_FS, 0x8000000000000000
    CHECK(rax, -1)
    mov qword ptr [rip + got], 0
    lea rbx, [rip + got]
    ARCH ARCH_GET_FS, rbx
    CHECK(rax, 0)
    mov rax, [rip + got]
    lea rbx, [rip + tls]
    CHECKR(rax, rbx)
    mov rax, fs:[0]
    SHOW("fs:[0] after a failed ARCH_SET_FS", rax)
    CHECK(rax, 0x5eed5eed5eed5eed)
    mov qword ptr [rip + got], 1
    lea rbx, [rip + got]
    ARCH ARCH_GET_GS, rbx
    CHECK(rax, 0)
    SHOW("GS base after failed ARCH_SET_GS", qword ptr [rip + got])
    CHECK(qword ptr [rip + got], 0)

    ARCH 0x1fff, 0
    SHOW("arch_prctl(0x1fff)", rax)
    CHECK(rax, -22)
    TEST_PASS

.data
.balign 16
tls: .quad 0x5eed5eed5eed5eed
got: .quad 0
