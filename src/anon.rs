//! Anonymous memory that hotlift owns for the process's lifetime (lookup
//! table, block table, rings, counters): one place that calls `mmap`;
//! tables whose empty state is zero memory ([`zeroed_slice`]); and the
//! monitor's growing tables, kept out of a forked child
//! ([`UnforkedVec`]); and the malloc settings that let a thread's arena
//! grow in one step ([`reserve_arena`]).
//!
//! R1: address space is held back from the guest for hotlift's own later
//!     mappings ([`reserve_address_space`]): a `PROT_NONE`,
//!     `MAP_NORESERVE` range, hotlift's, so the guest cannot map over it
//!     (syscall/mem I1) and its `mmap`s fail with `ENOMEM` once the rest
//!     is taken. When one of hotlift's own mappings or allocations fails
//!     with `ENOMEM` ([`fresh`], [`Allocator`]), a step of the reserve is
//!     given back and it is tried again, until the reserve is gone; the
//!     guest's `mmap` the kernel places there fails ([`in_reserve`]). A
//!     guest that mapped the whole address space and then forked left the
//!     child no room for its monitor's tables (a panic) and the parent
//!     none to copy its code memory or grow its heap (an abort). Each step
//!     is a kernel mapping of its own, so a step given back also makes
//!     room under `vm.max_map_count` (a guest that split its memory into
//!     65,000 mappings left hotlift none to copy code memory at a fork).
//!     Not held when `RLIMIT_AS` is finite: it would count against it.
//! R2: a forked child never frees system heap memory its parent had
//!     allocated (the `brk` heap below where it stood at the fork, above
//!     where it stood when `tune_malloc` ran): `free` writes malloc's
//!     headers beside the chunk and in its bins, pages the child shares
//!     copy-on-write with its parent, each a page copied and a TLB
//!     shoot-down. What the child leaves is its parent's memory, shared
//!     until the parent writes it, and the free chunks below the fork's
//!     break the child's malloc hands out: at most the parent's heap at
//!     the fork. Measured (python, 200 forks, Intel Xeon model 167):
//!     a child's page faults in `free` 11 -> 5, ~30 us a fork.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

/// R1: what is held, and the step given back at a time (64 steps).
const RESERVE: u64 = 32 << 30;
const STEP: u64 = 512 << 20;

/// R1: the reserve's base, and the bytes of it still held (its low end:
/// steps go back from the top, so what is given back is one range).
static RESERVE_BASE: AtomicU64 = AtomicU64::new(0);
static RESERVE_LEFT: AtomicU64 = AtomicU64::new(0);

/// R1: hold [`RESERVE`] bytes of address space for hotlift, once, at start.
pub fn reserve_address_space() {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: r is a valid out pointer.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut r) } != 0 || r.rlim_cur != libc::RLIM_INFINITY
    {
        return;
    }
    // Far below the top-down mmap area, where the kernel puts the guest's
    // stack, a static-PIE guest, hotlift's start-up mappings and the code
    // memory that must lie within 2 GiB of the guest (a reserve there left
    // a static-PIE guest no room for it), below hotlift's own program (at
    // 0x55…), and above AddressSanitizer's shadow, which ends at
    // 0x10007fff8000 (a reserve at 16 TiB failed its start-up).
    for hint in [2u64 << 44, 3 << 44, 4 << 44] {
        if !crate::arena::reserve_at(hint as usize, RESERVE as usize) {
            continue;
        }
        // One kernel mapping a step (every other one readable, so that
        // neighbours do not merge): a step given back frees a mapping of
        // the process's `vm.max_map_count` as well as address space.
        for k in (1..RESERVE / STEP).step_by(2) {
            // SAFETY: a step of the reserve just made, never touched.
            unsafe {
                libc::mprotect(
                    (hint + k * STEP) as *mut libc::c_void,
                    STEP as usize,
                    libc::PROT_READ,
                )
            };
        }
        RESERVE_BASE.store(hint, Ordering::Relaxed);
        RESERVE_LEFT.store(RESERVE, Ordering::Release);
        return;
    }
}

/// R1: `f` until it succeeds or fails for another reason than `ENOMEM`,
/// giving back a step of the reserve before each retry, while one is
/// left (an operation that needs address space or a new kernel mapping
/// of its own when the guest has taken them all).
pub fn retry_enomem<T>(mut f: impl FnMut() -> std::io::Result<T>) -> std::io::Result<T> {
    loop {
        match f() {
            Err(e) if e.raw_os_error() == Some(libc::ENOMEM) && release_reserve() => {}
            r => return r,
        }
    }
}

/// R1: give back one step of the reserve; false when none is left.
pub fn release_reserve() -> bool {
    let mut left = RESERVE_LEFT.load(Ordering::Acquire);
    loop {
        if left == 0 {
            return false;
        }
        let step = left.min(STEP);
        match RESERVE_LEFT.compare_exchange(left, left - step, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => {
                let at = RESERVE_BASE.load(Ordering::Relaxed) + left - step;
                // SAFETY: part of the reserve, which nothing uses.
                unsafe { libc::munmap(at as *mut libc::c_void, step as usize) };
                return true;
            }
            Err(now) => left = now,
        }
    }
}

/// R1: does [at, at + len) meet the range of the reserve (held or given
/// back)? The guest's mappings never go there.
pub fn in_reserve(at: u64, len: u64) -> bool {
    let base = RESERVE_BASE.load(Ordering::Relaxed);
    base != 0 && at < base + RESERVE && base < at.saturating_add(len)
}

/// Out of address space even with the reserve given back (R1): hotlift
/// cannot go on without `what`, so it says so and ends with status 125
/// (was a panic on the monitor's thread).
pub fn no_room_for(what: &str, e: std::io::Error) -> ! {
    crate::host::say!(
        "hotlift: cannot map {what}: {e} (the guest has taken the address space, hotlift's reserve too)"
    );
    // SAFETY: _exit has no preconditions.
    unsafe { libc::_exit(crate::status::EXIT_HOTLIFT_FAILED) }
}

/// The global allocator: the system's, given more address space from the
/// reserve when it runs out (R1).
#[derive(Debug)]
pub struct Allocator;

/// R2: the `brk` heap's range whose chunks a forked child leaves (both 0
/// but in a forked child).
static INHERITED_FROM: AtomicU64 = AtomicU64::new(0);
static INHERITED_TO: AtomicU64 = AtomicU64::new(0);

/// R2: where the `brk` heap stood at start (`tune_malloc`).
static HEAP_FLOOR: AtomicU64 = AtomicU64::new(0);

/// R2: in a forked child, its one thread alone: the parent's chunks, from
/// here on, are left.
pub fn forked() {
    // SAFETY: sbrk(0) only reads the break.
    let top = unsafe { libc::sbrk(0) } as u64;
    let floor = HEAP_FLOOR.load(Ordering::Relaxed);
    if floor != 0 && top > floor {
        leave(floor, top);
    }
}

/// R2: chunks in [from, to) are left from now on.
fn leave(from: u64, to: u64) {
    INHERITED_FROM.store(from, Ordering::Relaxed);
    INHERITED_TO.store(to, Ordering::Relaxed);
}

/// R2: is `p` a chunk the parent allocated?
#[inline]
fn inherited(p: *mut u8) -> bool {
    let p = p as u64;
    p < INHERITED_TO.load(Ordering::Relaxed) && p >= INHERITED_FROM.load(Ordering::Relaxed)
}

/// `alloc` until it gives memory or the reserve is gone (R1).
#[inline]
fn or_release(alloc: impl Fn() -> *mut u8) -> *mut u8 {
    let mut p = alloc();
    while p.is_null() && release_reserve() {
        p = alloc();
    }
    p
}

// SAFETY: the system allocator's contract, passed through, or the
// monitor's heap's (arena.rs), chosen by the thread's flag for new memory
// and by the address for memory given back; a failed `alloc` or `realloc`
// changes nothing, so trying again is sound.
unsafe impl GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if crate::arena::on() {
            if let Some(p) = crate::arena::alloc(layout, false) {
                return p;
            }
        }
        or_release(|| unsafe { System.alloc(layout) })
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if crate::arena::on() {
            if let Some(p) = crate::arena::alloc(layout, true) {
                return p;
            }
        }
        or_release(|| unsafe { System.alloc_zeroed(layout) })
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        match crate::arena::owns(ptr) {
            // SAFETY: the monitor's heap's (arena.rs), as the caller says.
            Some(true) => {
                if let Some(p) = unsafe { crate::arena::realloc(ptr, layout, new_size) } {
                    return p;
                }
            }
            None if !crate::arena::on() && !inherited(ptr) => {
                return or_release(|| unsafe { System.realloc(ptr, layout, new_size) });
            }
            // A dead ancestor's (arena.rs A2; never expected), system
            // memory the monitor grows (moved into its heap, A1), or a
            // chunk the parent allocated (moved, left where it was: R2).
            _ => {}
        }
        // SAFETY: a layout of the same alignment, `new_size` (non-zero, as
        // the caller promises) bytes.
        let new =
            unsafe { self.alloc(Layout::from_size_align_unchecked(new_size, layout.align())) };
        if !new.is_null() {
            // SAFETY: both live, `min` of their sizes; the old freed once.
            unsafe {
                std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
        }
        new
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        match crate::arena::owns(ptr) {
            // R2: the parent's, left.
            None if inherited(ptr) => {}
            None => unsafe { System.dealloc(ptr, layout) },
            // SAFETY: the monitor's heap's, as the caller says.
            Some(true) => unsafe { crate::arena::free(ptr, layout) },
            // A dead ancestor's (arena.rs A2): gone with it.
            Some(false) => {}
        }
    }
}

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
    loop {
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
        if p != libc::MAP_FAILED {
            return Ok(p as *mut u8);
        }
        let e = std::io::Error::last_os_error();
        // R1: out of address space: take a step of the reserve.
        if e.raw_os_error() != Some(libc::ENOMEM) || !release_reserve() {
            return Err(e);
        }
    }
}

/// As [`map`], for memory a forked child never uses (a guest thread's
/// ring, the monitor's tables: the child has a monitor and rings of its
/// own, dispatch/fork.rs F3): `MADV_DONTFORK` keeps it out of the child,
/// so a `fork` neither copies its page tables nor makes the parent's next
/// write to each of its pages a copy-on-write fault.
pub fn map_unforked(len: usize, extra: libc::c_int) -> std::io::Result<*mut u8> {
    // R1: the advice splits the mapping from a neighbour it merged with,
    // which takes a kernel mapping the guest may have left none of.
    retry_enomem(|| {
        let p = map(len, extra)?;
        // SAFETY: advice on the mapping just made.
        if unsafe { libc::madvise(p as *mut libc::c_void, len, libc::MADV_DONTFORK) } != 0 {
            let e = std::io::Error::last_os_error();
            // SAFETY: ours, unused yet.
            unsafe { libc::munmap(p as *mut libc::c_void, len) };
            // madvise says EAGAIN where the split needed a kernel mapping
            // past `vm.max_map_count` (the kernel's madvise turns ENOMEM into
            // EAGAIN): a step of the reserve makes one.
            if e.raw_os_error() == Some(libc::EAGAIN) {
                return Err(std::io::Error::from_raw_os_error(libc::ENOMEM));
            }
            return Err(e);
        }
        Ok(p)
    })
}

/// R1: before hotlift starts a thread (a guest thread's host thread, a
/// forked child's monitor), whose stack, guard page and signal stack the
/// standard library maps (and panics in the new thread if it cannot):
/// when the guest's own mappings, `guest_spans`, come near
/// `vm.max_map_count`, give back a few steps of the reserve first, each
/// a kernel mapping.
pub fn room_for_thread(guest_spans: usize) {
    if guest_spans + 4096 > max_map_count() {
        // A thread's stacks, and a ring split in six (monitor/ring.rs).
        for _ in 0..12 {
            release_reserve();
        }
    }
}

/// `vm.max_map_count`, read once: a fork reads it before, so that no
/// forked child reads the file again (python's: 50 µs a fork).
pub fn max_map_count() -> usize {
    static MAX: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *MAX.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/vm/max_map_count")
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(65530)
    })
}

/// Make the pages of `[p, p + len)` now, writable, rather than at their
/// first touches (a read of an untouched page maps the zero page, and the
/// write after it faults again, with a TLB shoot-down of every other CPU
/// running the process). A kernel without `MADV_POPULATE_WRITE` (before
/// 5.14) refuses, and the pages come on first touch as before.
///
/// # Safety
/// `[p, p + len)` must lie inside one mapping of this process;
/// populating changes no contents.
pub unsafe fn populate_write(p: *mut u8, len: usize) {
    // SAFETY: the caller's range; advice only.
    unsafe { libc::madvise(p as *mut libc::c_void, len, libc::MADV_POPULATE_WRITE) };
}

/// `n` all-zero `T`s in a mapping of their own: fresh pages the kernel
/// makes only where they are touched (a fork copies them as any memory).
/// Tables whose empty state is zero take this (the monitor's:
/// [`UnforkedVec::zeroed`]) instead of being written empty: on the AMD
/// EPYC VM every page written costs its fault and its zeroing
/// (docs/FACTS.md), and the indirect-branch table, the write-protection
/// table and the call tree's cache, written entry by entry, cost 0.65,
/// 0.6 and about 0.05 ms of every process. Not the allocator's zeroed
/// memory: once a freed mapping has raised malloc's mmap threshold, a
/// table of a quarter of a megabyte came from the heap and `calloc`
/// wrote every byte of it (66 page faults of a `/bin/true`).
///
/// # Safety
/// An all-zero `T` must be a valid value.
pub unsafe fn zeroed_slice<T>(n: usize) -> Zeroed<T> {
    // Dropping the table drops no `T`.
    const { assert!(!std::mem::needs_drop::<T>()) };
    let len = (n * std::mem::size_of::<T>()).max(1);
    let ptr = map(len, libc::MAP_NORESERVE)
        .unwrap_or_else(|e| panic!("cannot map a table of {len} bytes: {e}"));
    Zeroed {
        ptr: ptr as *mut T,
        n,
    }
}

/// A table of [`zeroed_slice`], unmapped when dropped.
#[derive(Debug)]
pub struct Zeroed<T> {
    ptr: *mut T,
    n: usize,
}

// SAFETY: it owns its `T`s as a `Box<[T]>` would.
unsafe impl<T: Send> Send for Zeroed<T> {}
// SAFETY: as above; shared access gives only `&T`.
unsafe impl<T: Sync> Sync for Zeroed<T> {}

impl<T> std::ops::Deref for Zeroed<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `n` initialised (all-zero, valid by the maker's promise)
        // `T`s at `ptr`, owned by `self`.
        unsafe { std::slice::from_raw_parts(self.ptr, self.n) }
    }
}

impl<T> Drop for Zeroed<T> {
    fn drop(&mut self) {
        let len = (self.n * std::mem::size_of::<T>()).max(1);
        // SAFETY: the mapping `zeroed_slice` made, used by nothing after
        // its owner; its `T`s need no drop (`zeroed_slice` checks).
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, len) };
    }
}

/// A vector of at most `cap` elements in memory a forked child does not
/// get ([`map_unforked`], `MAP_NORESERVE`: only the pages in use take
/// memory, and it never moves). For the monitor's growing tables: a
/// `fork` left each page of a `Vec` of them shared with the child, and the
/// parent's monitor took a copy-on-write fault (and a TLB shoot-down of the
/// guest's core) at its next write to each, about 270 a fork in a python
/// fork loop; a reallocation also copied the whole table into fresh pages.
pub struct UnforkedVec<T: Copy> {
    ptr: *mut T,
    len: usize,
    cap: usize,
}

// SAFETY: owned memory, used through `&`/`&mut` like a `Vec`'s.
unsafe impl<T: Copy + Send> Send for UnforkedVec<T> {}

impl<T: Copy> UnforkedVec<T> {
    /// An empty vector with room for `cap` elements (the mapping is
    /// reserved, not touched). Ends hotlift if the address space has no
    /// room for it ([`no_room_for`]), as the monitor's word tables do.
    pub fn with_capacity(cap: usize) -> UnforkedVec<T> {
        let bytes = cap * std::mem::size_of::<T>();
        if bytes == 0 {
            return UnforkedVec {
                ptr: std::ptr::NonNull::dangling().as_ptr(),
                len: 0,
                cap,
            };
        }
        let p = map_unforked(bytes, libc::MAP_NORESERVE)
            .unwrap_or_else(|e| no_room_for(&format!("a {bytes}-byte table of the monitor"), e));
        UnforkedVec {
            ptr: p as *mut T,
            len: 0,
            cap,
        }
    }

    /// `n` all-zero elements (fresh mapped memory is zero).
    ///
    /// # Safety
    /// An all-zero `T` must be a valid value.
    pub unsafe fn zeroed(n: usize) -> UnforkedVec<T> {
        let mut v = UnforkedVec::with_capacity(n);
        v.len = n;
        v
    }

    /// Make the elements' pages now ([`populate_write`]), for a table
    /// that is read before it is written at random places.
    pub fn populate(&self) {
        let bytes = self.len * std::mem::size_of::<T>();
        if bytes != 0 {
            // SAFETY: the first `len` elements lie inside the mapping.
            unsafe { populate_write(self.ptr as *mut u8, bytes) };
        }
    }

    /// Append `x`; false (and nothing appended) when the vector is full.
    pub fn push(&mut self, x: T) -> bool {
        if self.len == self.cap {
            return false;
        }
        // SAFETY: `len < cap`: inside the mapping.
        unsafe { self.ptr.add(self.len).write(x) };
        self.len += 1;
        true
    }
}

impl<T: Copy> std::ops::Deref for UnforkedVec<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: the first `len` elements are initialised.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl<T: Copy> std::ops::DerefMut for UnforkedVec<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as above, and `&mut self` is unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl<T: Copy> Drop for UnforkedVec<T> {
    fn drop(&mut self) {
        let bytes = self.cap * std::mem::size_of::<T>();
        if bytes != 0 {
            // SAFETY: the mapping made in `with_capacity`, no longer used.
            unsafe { libc::munmap(self.ptr as *mut libc::c_void, bytes) };
        }
    }
}

impl<T: Copy + std::fmt::Debug> std::fmt::Debug for UnforkedVec<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "UnforkedVec({} of {})", self.len, self.cap)
    }
}

/// Grow the calling thread's malloc arena by `bytes` at once. glibc grows
/// a thread's arena (not the main one) exactly as far as each allocation
/// needs, an `mprotect` a step: ~700 of them in the monitor of a python
/// start-up. A chunk of `bytes` taken and given back leaves the arena
/// that large (its pages come on first touch as before); [`tune_malloc`]
/// keeps it from being trimmed or served by `mmap`.
pub fn reserve_arena(bytes: usize) {
    // SAFETY: a plain allocation, freed at once (seen, or the compiler
    // drops the pair).
    unsafe { libc::free(std::hint::black_box(libc::malloc(bytes))) };
}

/// Process-wide malloc settings for [`reserve_arena`]: chunks up to 32 MiB
/// come from the arenas (glibc's own threshold climbs there anyway after
/// the first large free) and free memory at an arena's top is kept up to
/// 64 MiB. Call once, before any other thread exists.
pub fn tune_malloc() {
    // SAFETY: mallopt only changes malloc's parameters; sbrk(0) only
    // reads the break.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 64 << 20);
        HEAP_FLOOR.store(libc::sbrk(0) as u64, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// R2: a forked child's free of a chunk its parent allocated leaves
    /// it (malloc hands it out again otherwise: its thread cache's next
    /// allocation of that size), and so does a resize of it (copied).
    /// (The test's threads allocate from arenas of their own, not the
    /// `brk` heap `forked` takes the range of: the range is the chunk's.)
    #[test]
    fn a_forked_child_leaves_its_parents_chunks() {
        let l = Layout::from_size_align(200, 8).unwrap();
        // SAFETY: a live allocation of layout `l`.
        let p = unsafe { Allocator.alloc(l) };
        assert!(!p.is_null());
        let reused = |leave_it: bool| -> bool {
            // SAFETY: fork; the child frees, allocates and exits at once.
            match unsafe { libc::fork() } {
                0 => unsafe {
                    if leave_it {
                        leave(p as u64, p as u64 + 1);
                    }
                    // Resized first: a chunk left is copied, not grown in
                    // place or freed.
                    let r = Allocator.realloc(p, l, 400);
                    let moved = r != p;
                    if !moved {
                        libc::_exit(2);
                    }
                    let l2 = Layout::from_size_align(400, 8).unwrap();
                    Allocator.dealloc(r, l2);
                    Allocator.dealloc(p, l);
                    let q = Allocator.alloc(l);
                    libc::_exit(i32::from(q == p))
                },
                pid => {
                    let mut st = 0;
                    // SAFETY: our child.
                    assert_eq!(unsafe { libc::waitpid(pid, &mut st, 0) }, pid);
                    assert!(libc::WIFEXITED(st));
                    let code = libc::WEXITSTATUS(st);
                    assert_ne!(code, 2, "a resize moved no chunk");
                    code == 1
                }
            }
        };
        assert!(!reused(true), "left (R2)");
        // SAFETY: allocated above, not freed in this process.
        unsafe { Allocator.dealloc(p, l) };
    }

    #[test]
    fn an_unforked_vec_fills_to_its_capacity() {
        let mut v: UnforkedVec<u64> = UnforkedVec::with_capacity(3);
        assert!(v.push(7) && v.push(8) && v.push(9));
        assert!(!v.push(10), "full");
        v[1] += 1;
        assert_eq!(&v[..], &[7, 9, 9]);
        // SAFETY: all-zero u32s are valid.
        let z: UnforkedVec<u32> = unsafe { UnforkedVec::zeroed(5000) };
        assert!(z.iter().all(|&x| x == 0) && z.len() == 5000);
        let mut e: UnforkedVec<u8> = UnforkedVec::with_capacity(0);
        assert!(e.is_empty() && !e.push(1));
    }
}
