/* deep-calls: deep and wide call chains.
 *
 * A 200,000-deep recursion (each frame pushes a return address and one
 * register: 3.2 MB of stack), naive recursive Fibonacci (many short calls
 * and returns, every return to one of two sites), mutual recursion, and a
 * chain of 64 distinct functions. Return addresses must stay guest
 * addresses throughout and every return must land where it should. With
 * an argument (the count form): 2,000 deep, fib(12), is_odd(101) and 50.
 */
#include "rt.h"

TEST_START
    SAVE_ARGC
    PICK(rdi, 200000, 2000)
    call down
    SHOWD("sum of 1..n by recursion", rax)
    PICK(rdx, 20000100000, 2001000)
    CHECKR(rax, rdx)

    PICK(rdi, 25, 12)
    call fib
    SHOWD("fib(n)", rax)
    PICK(rdx, 75025, 144)
    CHECKR(rax, rdx)

    PICK(rdi, 10001, 101)
    call is_odd
    SHOWD("is_odd(odd n) by mutual recursion", rax)
    CHECK(rax, 1)
    PICK(rdi, 5000, 50)
    call is_odd
    CHECK(rax, 0)

    xor eax, eax
    call chain0
    SHOWD("64-function chain", rax)
    CHECK(rax, 64 * 65 / 2)
    TEST_PASS

/* rax = rdi + (rdi-1) + ... + 1 */
down:
    test rdi, rdi
    jnz 1f
    xor eax, eax
    ret
1:  push rdi
    dec rdi
    call down
    pop rdi
    add rax, rdi
    ret

fib:
    cmp rdi, 2
    jae 1f
    mov rax, rdi
    ret
1:  push rbx
    push rdi
    dec rdi
    call fib
    mov rbx, rax
    pop rdi
    sub rdi, 2
    call fib
    add rax, rbx
    pop rbx
    ret

is_odd:
    test rdi, rdi
    jnz 1f
    xor eax, eax
    ret
1:  dec rdi
    jmp is_even_call
is_even_call:
    call is_even
    ret
is_even:
    test rdi, rdi
    jnz 1f
    mov eax, 1
    ret
1:  dec rdi
    call is_odd
    ret

/* chain<i>: add i+1, call chain<i+1> (names built with altmacro's %expr) */
.altmacro
.macro CHAIN i, next
chain\i:
    add rax, \i + 1
    .if \i < 63
    call chain\next
    .endif
    ret
.endm
.set i, 0
.rept 64
    CHAIN %i, %(i + 1)
    .set i, i + 1
.endr
.noaltmacro
