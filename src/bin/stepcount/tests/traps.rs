//! SIGTRAP under stepcount: programs that trap, block, ignore or handle it,
//! each also run natively, ended exactly as the CPU and kernel end them.

use super::*;

/// Count `body` under stepcount and check that it ends as it does
/// natively (None without gcc).
fn count_and_compare(name: &str, body: &str) -> Option<Outcome> {
    use std::os::unix::process::ExitStatusExt;
    if !gcc_available() {
        return None;
    }
    let scratch = Scratch::new(name);
    let exe = build_in(&scratch.0, name, body);
    let native = Command::new(&exe).status().expect("run natively");
    let native_end = match (native.code(), native.signal()) {
        (Some(code), _) => End::Exited(code as u8),
        (None, Some(signal)) => End::Killed(signal),
        _ => unreachable!("{native:?}"),
    };
    let got = trace_with_limit(&exe, u64::MAX);
    assert_eq!(got.end, native_end, "{name}: under stepcount vs natively");
    Some(got)
}

const INSTALL_TRAP_HANDLER: &str = "    lea rsi, [rip + act]
    mov edi, 5
    xor edx, edx
    mov r10d, 8
    mov eax, 13
    syscall";

/// A SIGTRAP handler that counts its calls (inc, ret), with SIGTRAP in its
/// own sa_mask as glibc's signal() sets it, and its restorer (mov, syscall).
const TRAP_HANDLER_DATA: &str = "handler:
    inc dword ptr [rip + hits]
    ret
restorer:
    mov eax, 15
    syscall
.data
act: .quad handler, 0x04000000, restorer, 0x10   # SA_RESTORER; mask {SIGTRAP}
hits: .long 0
set: .quad 0x10
pend: .quad 0
";

#[test]
fn sigtrap_handler_survives_repeated_traps() {
    // Single-stepping forces a SIGTRAP at every step; with SIGTRAP blocked
    // (inside its own handler) that would reset the handler (G1).
    // 6 install + 2 x (int3 + 2 handler + 2 restorer) + 6 tkill + 4
    // + mov edi + EXIT tail (2) = 6 + 10 + 10 + 3 = 29; exits with 3 calls.
    let body = format!(
        "{INSTALL_TRAP_HANDLER}
    int3
    int3
{}
    mov edi, dword ptr [rip + hits]
    mov eax, 231
    syscall
{TRAP_HANDLER_DATA}",
        send_self(SYS_TKILL, SIGTRAP)
    );
    assert_outcome(count_and_compare("trap-twice", &body), 29, End::Exited(3));
}

#[test]
fn blocked_sigtrap_stays_pending_until_unblocked() {
    // install (6), block (6), tkill (6: held), rt_sigpending (4),
    // unblock (6) then the handler (2 + 2), then 8 to exit with
    // hits * 16 + pending bit = 17: 6 + 6 + 6 + 4 + 6 + 4 + 8 = 40.
    let body = format!(
        "{INSTALL_TRAP_HANDLER}
    xor edi, edi
    lea rsi, [rip + set]
    xor edx, edx
    mov r10d, 8
    mov eax, 14
    syscall
{}
    lea rdi, [rip + pend]
    mov esi, 8
    mov eax, 127
    syscall
    mov edi, 1
    lea rsi, [rip + set]
    xor edx, edx
    mov r10d, 8
    mov eax, 14
    syscall
    mov edi, dword ptr [rip + hits]
    shl edi, 4
    mov rax, qword ptr [rip + pend]
    shr eax, 4
    and eax, 1
    or edi, eax
    mov eax, 231
    syscall
{TRAP_HANDLER_DATA}",
        send_self(SYS_TKILL, SIGTRAP)
    );
    assert_outcome(
        count_and_compare("trap-pending", &body),
        40,
        End::Exited(17),
    );
}

#[test]
fn int3_while_sigtrap_is_blocked_kills() {
    // Natively the forced SIGTRAP of int3 ignores the block and the
    // handler: 6 install + 6 block + int3 (retires) = 13.
    let body = format!(
        "{INSTALL_TRAP_HANDLER}
    xor edi, edi
    lea rsi, [rip + set]
    xor edx, edx
    mov r10d, 8
    mov eax, 14
    syscall
    int3
    EXIT(0)
{TRAP_HANDLER_DATA}"
    );
    assert_outcome(
        count_and_compare("trap-blocked-int3", &body),
        13,
        End::Killed(SIGTRAP),
    );
}

#[test]
fn ignored_sigtrap_is_ignored_and_reads_back_as_ignored() {
    // SIG_IGN (6), tkill (6) and kill (6) themselves: both dropped;
    // read the action back (6), exit with its handler (3): 27, status 1.
    let body = format!(
        "    lea rsi, [rip + ign]
    mov edi, 5
    xor edx, edx
    mov r10d, 8
    mov eax, 13
    syscall
{}
{}
    mov edi, 5
    xor esi, esi
    lea rdx, [rip + old]
    mov r10d, 8
    mov eax, 13
    syscall
    mov rdi, qword ptr [rip + old]
    mov eax, 231
    syscall
.data
ign: .quad 1, 0, 0, 0
old: .quad 7, 7, 7, 7
",
        send_self(SYS_TKILL, SIGTRAP),
        send_self(SYS_KILL, SIGTRAP)
    );
    assert_outcome(count_and_compare("trap-ign", &body), 27, End::Exited(1));
}

#[test]
fn blocked_sigtrap_reads_back_as_blocked() {
    // Block every signal (6), read the mask back (6), exit with its
    // SIGTRAP bit (5): 17, status 1.
    let body = "    xor edi, edi
    lea rsi, [rip + all]
    xor edx, edx
    mov r10d, 8
    mov eax, 14
    syscall
    xor edi, edi
    xor esi, esi
    lea rdx, [rip + cur]
    mov r10d, 8
    mov eax, 14
    syscall
    mov rdi, qword ptr [rip + cur]
    shr edi, 4
    and edi, 1
    mov eax, 231
    syscall
.data
all: .quad -1
cur: .quad 0
";
    assert_outcome(count_and_compare("trap-mask", body), 17, End::Exited(1));
}

#[test]
fn signal_frame_shows_sigtrap_blocked() {
    // Block SIGTRAP (6), install a SIGUSR1 handler (6), tkill SIGUSR1 (6);
    // the handler exits with the SIGTRAP bit of the frame's uc_sigmask (5):
    // 23, status 1.
    let body = format!(
        "    xor edi, edi
    lea rsi, [rip + set]
    xor edx, edx
    mov r10d, 8
    mov eax, 14
    syscall
    lea rsi, [rip + usr1]
    mov edi, 10
    xor edx, edx
    mov r10d, 8
    mov eax, 13
    syscall
{}
    ud2
usr1_handler:
    mov rdi, qword ptr [rdx + 296]   # uc_sigmask
    shr edi, 4
    and edi, 1
    mov eax, 231
    syscall
.data
usr1: .quad usr1_handler, 0x04000004, 0, 0
set: .quad 0x10
",
        send_self(SYS_TKILL, libc::SIGUSR1)
    );
    assert_outcome(
        count_and_compare("trap-frame-mask", &body),
        23,
        End::Exited(1),
    );
}
