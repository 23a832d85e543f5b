//! The raw `syscall` instruction, for passing guest syscalls through with
//! their exact result (no libc errno translation).
#![allow(unsafe_code)]

/// Issue syscall `nr` with six arguments; returns the kernel's raw result
/// (`-errno` on failure).
///
/// # Safety
/// The arguments are passed to the kernel unchanged: pointers in them must
/// be what the guest would pass, and the call must not disturb hotlift's
/// own state (the caller's allowlist decides that).
pub unsafe fn syscall6(nr: u64, a: [u64; 6]) -> i64 {
    let ret: i64;
    // SAFETY: upheld by the caller; rcx and r11 are clobbered by `syscall`.
    unsafe {
        std::arch::asm!(
            "syscall",
            inlateout("rax") nr as i64 => ret,
            in("rdi") a[0], in("rsi") a[1], in("rdx") a[2],
            in("r10") a[3], in("r8") a[4], in("r9") a[5],
            lateout("rcx") _, lateout("r11") _,
            options(nostack),
        );
    }
    ret
}
