//! Anonymous memory that hotlift owns for the process's lifetime (lookup
//! table, block table, rings, counters): one place that calls `mmap`; and
//! tables whose empty state is zero memory ([`zeroed_slice`]).
#![allow(unsafe_code)]

/// Map `len` bytes of zeroed, read-write, private anonymous memory, with
/// `extra` flags (e.g. `MAP_32BIT`, `MAP_NORESERVE`). Never unmapped, but
/// for the monitor's word tables, which their owner unmaps
/// (monitor/tables/words.rs).
pub fn map(len: usize, extra: libc::c_int) -> std::io::Result<*mut u8> {
    fresh(len, libc::MAP_PRIVATE | extra)
}

/// As [`map`], but shared (`MAP_SHARED`): a new object a second mapping
/// (`mremap` with an old size of 0) can alias, as code memory's chunks
/// copied after a fork are (cache/sharing.rs); unmapped by its owner.
pub fn map_shared(len: usize) -> std::io::Result<*mut u8> {
    fresh(len, libc::MAP_SHARED)
}

fn fresh(len: usize, flags: libc::c_int) -> std::io::Result<*mut u8> {
    // SAFETY: a fresh anonymous mapping at an address the kernel picks.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_ANONYMOUS | flags,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    Ok(p as *mut u8)
}

/// As [`map`], for memory a forked child never uses (a guest thread's
/// ring, the monitor's tables: the child has a monitor and rings of its
/// own, dispatch/fork.rs F3): `MADV_DONTFORK` keeps it out of the child,
/// so a `fork` neither copies its page tables nor makes the parent's next
/// write to each of its pages a copy-on-write fault.
pub fn map_unforked(len: usize, extra: libc::c_int) -> std::io::Result<*mut u8> {
    let p = map(len, extra)?;
    // SAFETY: advice on the mapping just made.
    if unsafe { libc::madvise(p as *mut libc::c_void, len, libc::MADV_DONTFORK) } != 0 {
        let e = std::io::Error::last_os_error();
        // SAFETY: ours, unused yet.
        unsafe { libc::munmap(p as *mut libc::c_void, len) };
        return Err(e);
    }
    Ok(p)
}

/// `n` all-zero `T`s from the allocator's zeroed memory: a large table
/// gets fresh pages the kernel maps only where they are touched. Tables
/// whose empty state is zero take this instead of being written empty: on
/// the AMD EPYC VM every page written costs its fault and its zeroing
/// (docs/FACTS.md), and the indirect-branch table, the write-protection
/// table and the call tree's cache, written entry by entry, cost 0.65,
/// 0.6 and about 0.05 ms of every process.
///
/// # Safety
/// An all-zero `T` must be a valid value.
pub unsafe fn zeroed_slice<T>(n: usize) -> Box<[T]> {
    // SAFETY: the caller vouches for all-zero `T`s.
    unsafe { Box::<[T]>::new_zeroed_slice(n).assume_init() }
}
