/* rdtsc: the time-stamp counter only moves forward.
 *
 * Reads the TSC 100,000 times in a loop (rdtsc, and rdtscp when CPUID
 * says it exists) and checks that it never goes backwards and does advance;
 * checks that the upper halves of rax/rdx are zero. No value is printed.
 * With an argument (the count form): 1,000 reads.
 */
#include "rt.h"

TEST_START
    SAVE_ARGC
    mov rax, -1
    mov rdx, -1
    rdtsc
    mov rbx, rax
    or rbx, rdx
    shr rbx, 32
    CHECK(rbx, 0)
    SAY("rdtsc zero-extends eax and edx")
    shl rdx, 32
    or rax, rdx
    mov r12, rax                    /* first reading */
    mov r13, rax                    /* previous reading */
    xor r14d, r14d                  /* backwards steps */
    PICK(rcx, 100000, 1000)
1:  mov r15, rcx
    rdtsc
    shl rdx, 32
    or rax, rdx
    cmp rax, r13
    jae 2f
    inc r14
2:  mov r13, rax
    mov rcx, r15
    loop 1b
    SHOWD("rdtsc readings that went backwards", r14)
    CHECK(r14, 0)
    cmp r13, r12
    ja 3f
    FAIL("TSC did not advance over the reads")
3:  SAY("TSC advanced")

    IF_MISSING(0x80000001, 0, edx, 27, no_rdtscp)
    xor r14d, r14d
    mov ecx, 1000
4:  mov r15, rcx
    rdtscp                          /* ecx = TSC_AUX (cpu id): not printed */
    shl rdx, 32
    or rax, rdx
    cmp rax, r13
    jae 5f
    inc r14
5:  mov r13, rax
    mov rcx, r15
    loop 4b
    SHOWD("rdtscp readings that went backwards", r14)
    CHECK(r14, 0)
    TEST_PASS
no_rdtscp:
    SAY("rdtscp: skipped, not on this CPU")
    TEST_PASS
