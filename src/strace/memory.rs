//! Guest memory as the tracer reads it: pointer arguments are followed
//! through `process_vm_readv`, never dereferenced.
//!
//! I1: guest memory is read only through `read_prefix`, guest_mem's
//!     `process_vm_readv` reader (its G1) on our own pid (the guest lives
//!     in our address space; I2 for the exception). A bad guest pointer
//!     makes the kernel return `EFAULT`, never a host fault, and the
//!     argument prints as its hex address instead.
//! I2: whose memory is read is this thread's choice (`with_memory_of`):
//!     hotlift's own process by default (the guest lives in it), a traced
//!     child for `hotlift compare`'s native syscall trace, so both sides
//!     are rendered by the same code.

use nix::unistd::Pid;

thread_local! {
    /// The process whose memory `read_prefix` reads; 0 = this one (I2).
    static MEMORY_OF: std::cell::Cell<i32> = const { std::cell::Cell::new(0) };
}

/// Run `f` with guest memory read from process `pid` (I2): for rendering
/// the syscalls of a ptrace-stopped child.
pub fn with_memory_of<R>(pid: Pid, f: impl FnOnce() -> R) -> R {
    let old = MEMORY_OF.with(|m| m.replace(pid.as_raw()));
    let r = f();
    MEMORY_OF.with(|m| m.set(old));
    r
}

/// Reads up to `len` bytes at guest address `addr`, returning the readable
/// prefix (empty if `addr` itself is unmapped): guest_mem's reader, of the
/// process I2 names.
pub(super) fn read_prefix(addr: u64, len: usize) -> Vec<u8> {
    crate::guest_mem::read_prefix(MEMORY_OF.with(|m| m.get()), addr, len)
}

pub(super) fn read_exact(addr: u64, len: usize) -> Option<Vec<u8>> {
    let bytes = read_prefix(addr, len);
    (bytes.len() == len).then_some(bytes)
}

/// `n` little-endian words at `addr`; `None` for NULL (which the kernel
/// treats as "no struct") or unreadable memory.
pub(super) fn read_u64s(addr: u64, n: usize) -> Option<Vec<u64>> {
    let bytes = (addr != 0).then(|| read_exact(addr, n * 8)).flatten()?;
    Some(
        bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect(),
    )
}
