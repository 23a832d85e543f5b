//! hotlift's own reach into the kernel, below every layer that makes
//! system calls: the raw `syscall` instruction (guest syscalls passed
//! through with their exact result, no libc errno translation) and a
//! thread's CPU affinity mask. A leaf.
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

/// The affinity mask as the kernel reports it: its byte length is the
/// kernel's return value.
#[derive(Debug, Clone, Default)]
pub struct Affinity {
    pub mask: Vec<u8>,
}

impl Affinity {
    /// Read the calling thread's mask (call before pinning it).
    pub fn current() -> Affinity {
        let mut buf = vec![0u8; 1024];
        // SAFETY: the kernel writes at most buf.len() bytes into our buffer.
        let r = unsafe {
            syscall6(
                libc::SYS_sched_getaffinity as u64,
                [0, buf.len() as u64, buf.as_mut_ptr() as u64, 0, 0, 0],
            )
        };
        buf.truncate(r.max(0) as usize);
        Affinity { mask: buf }
    }

    /// Let the calling thread run where this mask allows (nothing when
    /// it is empty): a forked child's thread before its monitor pins it
    /// anew, and a thread about to `execve`, whose new program inherits
    /// the mask (not the one core hotlift pinned the thread to).
    pub fn apply_to_current(&self) {
        if self.mask.is_empty() {
            return;
        }
        // SAFETY: the kernel reads `mask.len()` bytes of our own buffer.
        unsafe {
            syscall6(
                libc::SYS_sched_setaffinity as u64,
                [
                    0,
                    self.mask.len() as u64,
                    self.mask.as_ptr() as u64,
                    0,
                    0,
                    0,
                ],
            )
        };
    }
}
