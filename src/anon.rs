//! Anonymous memory that hotlift owns for the process's lifetime (lookup
//! table, block table, rings, counters): one place that calls `mmap`.
#![allow(unsafe_code)]

/// Map `len` bytes of zeroed, read-write, private anonymous memory, with
/// `extra` flags (e.g. `MAP_32BIT`, `MAP_NORESERVE`). Never unmapped, but
/// for the monitor's slot table, which its owner unmaps (tables/slots.rs).
pub fn map(len: usize, extra: libc::c_int) -> std::io::Result<*mut u8> {
    // SAFETY: a fresh anonymous mapping at an address the kernel picks.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | extra,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    Ok(p as *mut u8)
}
