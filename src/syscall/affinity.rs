//! The guest's CPU affinity. hotlift pins the guest thread to one core and
//! the monitor to another; the guest must still see the mask it inherited
//! (e.g. `nproc`), and a mask it sets itself.
//!
//! I1: `sched_getaffinity` of the guest's own thread answers from the mask
//!     recorded before pinning (or the guest's last successful
//!     `sched_setaffinity`), with the kernel's length rules; other threads
//!     pass through.

use super::{guest_write_bytes, syscall6, EFAULT, EINVAL};
use crate::dispatch::Vm;
use crate::guest_mem::read_bytes;

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

fn is_self(vm: &Vm, pid: u64) -> bool {
    let pid = pid as i32;
    pid == 0
        || pid == vm.entry.tid.load(std::sync::atomic::Ordering::Relaxed)
        || pid == crate::guest_mem::own_pid()
}

pub fn get(vm: &mut Vm, a: [u64; 6]) -> i64 {
    let (pid, len, buf) = (a[0], a[1], a[2]);
    let affinity = vm.proc.affinity.lock().unwrap_or_else(|e| e.into_inner());
    if !is_self(vm, pid) || affinity.mask.is_empty() {
        // SAFETY: the kernel writes at most `len` bytes to the guest buffer.
        return unsafe { syscall6(libc::SYS_sched_getaffinity as u64, a) };
    }
    let n = affinity.mask.len() as u64;
    if len < n || len % 8 != 0 {
        return EINVAL;
    }
    if guest_write_bytes(vm, buf, &affinity.mask) {
        n as i64
    } else {
        EFAULT
    }
}

pub fn set(vm: &mut Vm, a: [u64; 6]) -> i64 {
    // SAFETY: the kernel reads the guest's mask; it only changes where this
    // (guest) thread may run.
    let r = unsafe { syscall6(libc::SYS_sched_setaffinity as u64, a) };
    if r == 0 && is_self(vm, a[0]) {
        let mut affinity = vm.proc.affinity.lock().unwrap_or_else(|e| e.into_inner());
        let n = affinity.mask.len().min(a[1] as usize);
        if let Some(bytes) = read_bytes(a[2], n) {
            affinity.mask[..n].copy_from_slice(&bytes);
            affinity.mask[n..].fill(0);
        }
    }
    r
}
