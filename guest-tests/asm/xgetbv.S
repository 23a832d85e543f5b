/* xgetbv: XCR0, the OS-enabled state components.
 *
 * XCR0 is fixed by the kernel for every process on the machine, so the
 * translated program must read the same value. Checks that x87, SSE and
 * AVX state are enabled, that the AVX-512 bits (opmask, ZMM_Hi256,
 * Hi16_ZMM) are all on or all off, and that CPUID leaf 0xD.0 EAX reports a
 * superset of XCR0's low half.
 */
#include "rt.h"

TEST_START
    IF_MISSING(1, 0, ecx, 27, no_osxsave)
    mov rax, -1
    mov rdx, -1
    xor ecx, ecx
    xgetbv
    mov rbx, rax
    or rbx, rdx
    shr rbx, 32
    CHECK(rbx, 0)
    shl rdx, 32
    or rax, rdx
    mov r12, rax
    SHOW("XCR0", r12)
    mov rax, r12
    and eax, 7
    SHOW("x87|SSE|AVX", rax)
    CHECK(rax, 7)
    mov rax, r12
    and eax, 0xe0
    SHOW("opmask|ZMM_Hi256|Hi16_ZMM", rax)
    cmp eax, 0
    je 1f
    CHECK(rax, 0xe0)
1:  mov eax, 0xd
    xor ecx, ecx
    cpuid
    mov ebx, r12d
    and ebx, eax
    CHECKR(rbx, r12)                /* low half only: XCR0 < 2^32 here */
    SAY("XCR0 is a subset of CPUID 0xD.0 EAX")
    TEST_PASS
no_osxsave:
    SAY("xgetbv: skipped, OSXSAVE not set")
    TEST_PASS
