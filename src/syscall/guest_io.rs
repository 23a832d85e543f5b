//! Guest memory as syscall emulations read and write it: through
//! `process_vm_readv`/`writev` on hotlift's own process
//! (`guest_mem::copy`), so a bad guest address fails with EFAULT instead
//! of faulting in hotlift. Writes go only to the guest's own memory
//! (reach.rs R1): a hostile pointer (a `sigaltstack`, a
//! `set_tid_address`, an old-action pointer) aimed at hotlift's memory
//! fails as unmapped memory would.
#![allow(unsafe_code)]

use crate::dispatch::Vm;
use crate::guest_mem::{copy, read_bytes};

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
    super::reach::bytes(vm, addr, bytes.len() as u64).is_none()
        && copy(addr, bytes.as_ptr() as *mut u8, bytes.len(), true)
}

/// [`guest_write_bytes`] for several (address, bytes) pieces, written
/// in one system call once all are seen to be guest memory.
pub(crate) fn guest_write_pieces(vm: &Vm, pieces: &[(u64, &[u8])]) -> bool {
    pieces
        .iter()
        .all(|&(addr, b)| super::reach::bytes(vm, addr, b.len() as u64).is_none())
        && crate::guest_mem::copy_pieces(
            &pieces
                .iter()
                .map(|&(addr, b)| (addr, b.as_ptr() as *mut u8, b.len()))
                .collect::<Vec<_>>(),
            true,
        )
}

/// The guest C string at `addr` (at most `max` bytes before its NUL), if
/// readable.
pub(crate) fn guest_cstr(addr: u64, max: usize) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut at = addr;
    while out.len() < max {
        let chunk = (4096 - (at % 4096)) as usize;
        let bytes = read_bytes(at, chunk)?;
        if let Some(n) = bytes.iter().position(|&b| b == 0) {
            out.extend_from_slice(&bytes[..n]);
            return (out.len() <= max).then_some(out);
        }
        out.extend_from_slice(&bytes);
        at += chunk as u64;
    }
    None
}

/// The guest's 64-bit words at `addr` up to (not including) the first
/// zero, at most `max` of them, if readable.
pub(crate) fn guest_words_until_zero(addr: u64, max: usize) -> Option<Vec<u64>> {
    let mut out = Vec::new();
    let mut at = addr;
    loop {
        let chunk = (4096 - (at % 4096)) as usize;
        let bytes = read_bytes(at, chunk.max(8))?;
        for w in bytes.chunks_exact(8) {
            let v = u64::from_le_bytes(w.try_into().expect("8 bytes"));
            if v == 0 {
                return Some(out);
            }
            if out.len() == max {
                return None;
            }
            out.push(v);
        }
        at += bytes.len() as u64 - (bytes.len() % 8) as u64;
    }
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
