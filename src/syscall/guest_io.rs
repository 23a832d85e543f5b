//! Guest memory as syscall emulations read and write it: through
//! `process_vm_readv`/`writev` on hotlift's own process
//! (`guest_mem::copy`), so a bad guest address fails with EFAULT instead
//! of faulting in hotlift. Writes go only to the guest's own memory
//! (reach.rs R1): a hostile pointer (a `sigaltstack`, a
//! `set_tid_address`, an old-action pointer) aimed at hotlift's memory
//! fails as unmapped memory would.
#![allow(unsafe_code)]

use crate::dispatch::Vm;
use crate::guest_mem::copy;

/// Store `v` at guest `addr`; false if any of it is not writable guest
/// memory.
pub(super) fn guest_write<T: Copy>(vm: &Vm, addr: u64, v: &T) -> bool {
    // SAFETY: a T is readable as its bytes.
    let bytes =
        unsafe { std::slice::from_raw_parts(v as *const T as *const u8, std::mem::size_of::<T>()) };
    guest_write_bytes(vm, addr, bytes)
}

/// Copy `bytes` into guest memory at `addr`; false if any of it is not
/// writable guest memory (R1: hotlift's is not; the caller does not hold
/// the translation lock).
pub(crate) fn guest_write_bytes(vm: &Vm, addr: u64, bytes: &[u8]) -> bool {
    vm.write_guest(addr, bytes)
}

pub(super) fn guest_read<T: Copy + Default>(addr: u64) -> Option<T> {
    let mut v = T::default();
    copy(
        addr,
        &mut v as *mut T as *mut u8,
        std::mem::size_of::<T>(),
        false,
    )
    .then_some(v)
}
