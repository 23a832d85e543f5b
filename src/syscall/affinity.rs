//! The guest's CPU affinity. hotlift pins the guest thread to one core and
//! the monitor to another; the guest must still see the mask it inherited
//! (e.g. `nproc`), and a mask it sets itself.
//!
//! I1: `sched_getaffinity` of the guest's own thread answers from the mask
//!     recorded before pinning (or the guest's last successful
//!     `sched_setaffinity`), with the kernel's length rules; other threads
//!     pass through.

use super::{guest_write_bytes, EFAULT, EINVAL};
use crate::dispatch::Vm;
use crate::guest_mem::read_bytes;
use crate::host::syscall6;

fn is_self(vm: &Vm, pid: u64) -> bool {
    let pid = pid as i32;
    pid == 0
        || pid == vm.entry.tid.load(std::sync::atomic::Ordering::Relaxed)
        || pid == crate::guest_mem::own_pid()
}

pub fn get(vm: &mut Vm, a: [u64; 6]) -> i64 {
    let (pid, len, buf) = (a[0], a[1], a[2]);
    // A copy: the lock is a leaf (fork.rs F1), not held while guest memory
    // is written (which may take the translation lock).
    let mask = vm
        .proc
        .affinity
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .mask
        .clone();
    if !is_self(vm, pid) || mask.is_empty() {
        // SAFETY: the kernel writes at most `len` bytes to the guest buffer.
        return unsafe { syscall6(libc::SYS_sched_getaffinity as u64, a) };
    }
    let n = mask.len() as u64;
    if len < n || len % 8 != 0 {
        return EINVAL;
    }
    if guest_write_bytes(vm, buf, &mask) {
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
