//! The monitor thread's heap: memory a `fork` does not copy.
//!
//! A fork copies the page table entries of every private page the process
//! has, and afterwards each first write to such a page in parent or child
//! is a copy-on-write fault, its TLB shoot-down an interrupt to the other
//! core running the process. The monitor's malloc arena (13.8 MB in a
//! python fork loop) was the largest part of what a fork copied, and the
//! parent's monitor took ~36 copy-on-write faults a fork in it, writing its
//! tables' vectors and maps each round; yet a forked child never uses that
//! state (its monitor starts anew, dispatch/fork.rs F3). glibc's arenas
//! cannot be left out of a fork (the child's malloc walks every arena and
//! gives the dead monitor's to the next new thread), so the monitor thread
//! allocates from a heap of its own ([`talc`] over a `MADV_DONTFORK`
//! slice), routed by the global allocator (anon.rs).
//!
//! A1: a thread allocates here only while its flag is set ([`Scope`]): the
//!     monitor thread, but for what it hands to others a child reads (its
//!     second tier's rounds: the superblock log a forked child adopts,
//!     superblock/mod.rs `Published`), which it allocates from the system
//!     heap. Growing memory from the system heap while the flag is set
//!     moves it here.
//! A2: every process uses its own slice of one zone of address space,
//!     reserved (`PROT_NONE`, `MAP_NORESERVE`) in the first process and
//!     inherited as such by its children; only a process's own slice is
//!     readable, writable and `MADV_DONTFORK`. In a forked child the
//!     parent's slice is gone; it is reserved again at once (the child has
//!     one thread then: nothing else can be mapped there), so an address
//!     in the zone is always hotlift's: in the process's slice it is this
//!     heap's, elsewhere it is a dead ancestor's, never read, and freeing
//!     it does nothing.
//! A3: anything that fails (no zone, no slice left, a full slice) falls
//!     back to the system heap: the allocator never fails for this.
//! A4: the lock is a spin lock a forked child resets (a thread of the
//!     parent may have held it at the fork; the child has that thread no
//!     more).
#![allow(unsafe_code)]

use std::alloc::Layout;
use std::cell::{Cell, UnsafeCell};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use talc::{ErrOnOom, Span, Talc};

/// The zone (A2): this many slices of [`SLICE`] bytes.
const SLICES: usize = 64;
const SLICE: usize = 256 << 20;

std::thread_local! {
    /// A1: this thread allocates here.
    static ON: Cell<bool> = const { Cell::new(false) };
}

struct Heap {
    lock: AtomicBool,
    talc: UnsafeCell<Option<Talc<ErrOnOom>>>,
    /// The zone's base (0: none, A3).
    zone: AtomicUsize,
    /// This process's slice: its index + 1 (0: none yet).
    slice: AtomicUsize,
    /// The next slice a process may take (inherited: a child takes the
    /// one after its parent's).
    next: AtomicUsize,
}

// SAFETY: `talc` is only touched under `lock` (A4).
unsafe impl Sync for Heap {}

static HEAP: Heap = Heap {
    lock: AtomicBool::new(false),
    talc: UnsafeCell::new(None),
    zone: AtomicUsize::new(0),
    slice: AtomicUsize::new(0),
    next: AtomicUsize::new(0),
};

/// Allocate here on this thread until the guard goes (A1); `on` false
/// suspends it for the guard's life instead.
#[derive(Debug)]
pub struct Scope(bool);

impl Scope {
    pub fn set(on: bool) -> Scope {
        Scope(ON.with(|c| c.replace(on)))
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        ON.with(|c| c.set(self.0));
    }
}

/// Reserve the zone (A2), in the first process, before any fork.
/// Nothing when the address space is limited (`RLIMIT_AS`): a reserve
/// would count against the limit (anon.rs R1); the monitor then uses the
/// system heap.
pub fn reserve_zone() {
    if HEAP.zone.load(Ordering::Acquire) != 0 {
        return;
    }
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut rl) } != 0
        || rl.rlim_cur != libc::RLIM_INFINITY
    {
        return;
    }
    // Beside hotlift's reserve (anon.rs R1), far from the top-down mmap
    // area where the code memory must lie within 2 GiB of the guest (a
    // zone the kernel placed there left a guest loaded at the top no room
    // for it) and above AddressSanitizer's shadow.
    for hint in [
        (2usize << 44) + (64 << 30),
        (3 << 44) + (64 << 30),
        (4 << 44) + (64 << 30),
    ] {
        if reserve_at(hint, SLICES * SLICE) {
            HEAP.zone.store(hint, Ordering::Release);
            return;
        }
    }
}

/// Hold `[at, at + len)` (`PROT_NONE`, `MAP_NORESERVE`) if nothing is
/// mapped there: true when it is held at exactly `at`.
pub fn reserve_at(at: usize, len: usize) -> bool {
    // SAFETY: a new PROT_NONE mapping; FIXED_NOREPLACE replaces nothing.
    let p = unsafe {
        libc::mmap(
            at as *mut libc::c_void,
            len,
            libc::PROT_NONE,
            libc::MAP_PRIVATE
                | libc::MAP_ANONYMOUS
                | libc::MAP_NORESERVE
                | libc::MAP_FIXED_NOREPLACE,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return false;
    }
    if p as usize != at {
        // An old kernel that took the flag for a hint.
        // SAFETY: the mapping just made.
        unsafe { libc::munmap(p, len) };
        return false;
    }
    true
}

/// Is `p` in the zone, and in this process's slice (A2)?
#[inline]
fn place(p: *mut u8) -> Option<bool> {
    let zone = HEAP.zone.load(Ordering::Relaxed);
    let a = p as usize;
    if zone == 0 || a < zone || a >= zone + SLICES * SLICE {
        return None;
    }
    let k = HEAP.slice.load(Ordering::Relaxed);
    Some(k != 0 && (a - zone) / SLICE == k - 1)
}

/// Is this thread allocating here (A1)?
#[inline]
pub fn on() -> bool {
    ON.with(|c| c.get())
}

/// Does `p` belong to this heap (true) or a dead ancestor's (false), or
/// to the system heap (None)?
#[inline]
pub fn owns(p: *mut u8) -> Option<bool> {
    place(p)
}

fn with<T>(f: impl FnOnce(&mut Talc<ErrOnOom>) -> T) -> Option<T> {
    while HEAP
        .lock
        .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        std::thread::yield_now();
    }
    // SAFETY: under the lock (A4).
    let talc = unsafe { &mut *HEAP.talc.get() };
    if talc.is_none() {
        *talc = open_slice();
    }
    let r = talc.as_mut().map(f);
    HEAP.lock.store(false, Ordering::Release);
    r
}

/// This process's slice, made usable and claimed (A2); None (A3).
fn open_slice() -> Option<Talc<ErrOnOom>> {
    let zone = HEAP.zone.load(Ordering::Acquire);
    let k = HEAP.next.load(Ordering::Relaxed);
    if zone == 0 || k >= SLICES {
        return None;
    }
    let base = (zone + k * SLICE) as *mut libc::c_void;
    // SAFETY: a slice of the zone this process reserved or inherited.
    unsafe {
        if libc::mprotect(base, SLICE, libc::PROT_READ | libc::PROT_WRITE) != 0
            || libc::madvise(base, SLICE, libc::MADV_DONTFORK) != 0
        {
            return None;
        }
    }
    HEAP.next.store(k + 1, Ordering::Relaxed);
    HEAP.slice.store(k + 1, Ordering::Release);
    let mut talc = Talc::new(ErrOnOom);
    let b = base as *mut u8;
    // SAFETY: the slice is ours alone, readable and writable.
    unsafe { talc.claim(Span::new(b, b.add(SLICE))) }.ok()?;
    Some(talc)
}

/// Allocate `layout` here; None (A3).
pub fn alloc(layout: Layout, zeroed: bool) -> Option<*mut u8> {
    if layout.size() == 0 {
        return None;
    }
    // SAFETY: a non-zero size.
    let p = with(|t| unsafe { t.malloc(layout) }.ok())??.as_ptr();
    if zeroed {
        // SAFETY: `layout.size()` bytes just allocated.
        unsafe { std::ptr::write_bytes(p, 0, layout.size()) };
    }
    Some(p)
}

/// Free `p`, this heap's (a dead ancestor's is left, A2).
///
/// # Safety
/// `p` was allocated here with `layout`.
pub unsafe fn free(p: *mut u8, layout: Layout) {
    if owns(p) != Some(true) {
        return;
    }
    if let Some(p) = NonNull::new(p) {
        // SAFETY: the caller's promise.
        with(|t| unsafe { t.free(p, layout) });
    }
}

/// Resize `p` (this heap's) to `new_size`; None: it stays as it is.
///
/// # Safety
/// `p` was allocated here with `layout`.
pub unsafe fn realloc(p: *mut u8, layout: Layout, new_size: usize) -> Option<*mut u8> {
    if owns(p) != Some(true) {
        return None;
    }
    let p = NonNull::new(p)?;
    with(|t| {
        if new_size <= layout.size() {
            // SAFETY: the caller's promise; shrinking in place.
            unsafe { t.shrink(p, layout, new_size.max(1)) };
            Some(p.as_ptr())
        } else {
            // SAFETY: the caller's promise.
            unsafe { t.grow(p, layout, new_size) }
                .ok()
                .map(|n| n.as_ptr())
        }
    })?
}

/// In a forked child, its one thread alone (A2, A4): the parent's slice is
/// gone; reserve it again, and start with no heap (a slice of its own at
/// its first allocation here).
pub fn forked() {
    HEAP.lock.store(false, Ordering::Relaxed);
    // SAFETY: one thread; nothing references the parent's heap state.
    unsafe { *HEAP.talc.get() = None };
    let zone = HEAP.zone.load(Ordering::Relaxed);
    let k = HEAP.slice.swap(0, Ordering::Relaxed);
    if zone != 0 && k != 0 {
        // The parent's slice, unmapped in this process (DONTFORK), held
        // again before anything else can be mapped there. Not held (an
        // old kernel, no address space): whatever the kernel maps there
        // later counts as a dead ancestor's, whose frees do nothing
        // (anon.rs copies it on a resize): a leak at worst.
        reserve_at(zone + (k - 1) * SLICE, SLICE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Memory comes from this process's slice, keeps what is written
    /// through resizes, and goes back; after a fork the slice is a dead
    /// ancestor's (freeing there does nothing) and new memory comes from
    /// the next slice. (One test: the heap is the process's.)
    #[test]
    fn slices_serve_resize_free_and_die_at_a_fork() {
        reserve_zone();
        if HEAP.zone.load(Ordering::Acquire) == 0 {
            return; // RLIMIT_AS set for the tests: nothing to check (A3)
        }
        let small = Layout::from_size_align(24, 8).unwrap();
        let a = alloc(small, true).expect("an allocation");
        assert_eq!(owns(a), Some(true));
        // SAFETY: 24 zeroed bytes just allocated.
        assert!(unsafe { std::slice::from_raw_parts(a, 24) }
            .iter()
            .all(|&b| b == 0));
        // SAFETY: as above.
        unsafe { std::ptr::write_bytes(a, 0x5a, 24) };
        // SAFETY: `a` is this heap's, allocated with `small`.
        let b = unsafe { realloc(a, small, 100_000) }.expect("grown");
        // SAFETY: the first 24 bytes moved with it.
        assert!(unsafe { std::slice::from_raw_parts(b, 24) }
            .iter()
            .all(|&x| x == 0x5a));
        let big = Layout::from_size_align(100_000, 8).unwrap();
        // SAFETY: `b` is this heap's, now `big`.
        let c = unsafe { realloc(b, big, 16) }.expect("shrunk in place");
        assert_eq!(c, b);
        assert_eq!(owns(std::ptr::null_mut::<u8>().wrapping_add(4096)), None);
        let first = HEAP.slice.load(Ordering::Acquire);
        forked();
        assert_eq!(owns(c), Some(false), "the parent's slice is dead");
        // SAFETY: a dead ancestor's: nothing is done.
        unsafe { free(c, Layout::from_size_align(16, 8).unwrap()) };
        let d = alloc(small, false).expect("the next slice");
        assert_eq!(owns(d), Some(true));
        assert_eq!(HEAP.slice.load(Ordering::Acquire), first + 1);
        // SAFETY: `d` is this heap's.
        unsafe { free(d, small) };
    }
}
