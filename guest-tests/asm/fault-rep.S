/* fault-rep: a rep stosb that runs into an unmapped page kills the process
 * with SIGSEGV after storing up to the page end.
 *
 * Maps two pages, unmaps the second, and stores 200 bytes from 96 bytes
 * before the hole: 96 iterations complete, the 97th faults. With an
 * argument the stores start at the hole, so the first iteration faults.
 * A single-step count includes exactly the completed iterations, so this
 * pins how hotlift counts a rep instruction that faults part way.
 * Expected: signal:SIGSEGV. */
#include "rt.h"

TEST_START
    SAVE_ARGC
    mov eax, 9                  /* mmap(0, 8192, RW, PRIVATE|ANONYMOUS) */
    xor edi, edi
    mov esi, 8192
    mov edx, 3
    mov r10d, 0x22
    mov r8, -1
    xor r9d, r9d
    syscall
    mov rbx, rax
    mov eax, 11                 /* munmap the second page */
    lea rdi, [rbx + 4096]
    mov esi, 4096
    syscall
    CHECK(rax, 0)
    PICK(rdx, 4000, 4096)
    lea rdi, [rbx + rdx]
    mov ecx, 200
    mov al, 0x5a
    SAY("about to rep stosb into the unmapped page")
    rep stosb
    FAIL("rep stosb into an unmapped page returned")
