//! Guest memory syscalls: `brk` emulated, `mmap`/`munmap`/`mprotect`/
//! `mremap` passed through after checking they do not touch hotlift's own
//! mappings, and tracked so translated code stays valid.
//!
//! I1: a request that would change a page hotlift owns fails with -ENOMEM
//!     and changes nothing.
//! I2: any change to guest memory holding translated code flushes those
//!     translations, before the kernel sees the request (so the pages carry
//!     the guest's own protection again, dispatch/smc.rs I1).
//! I3: a guest mapping without `MAP_FIXED`/`MAP_FIXED_NOREPLACE` goes where
//!     the kernel would put it in a process of its own: at its hint if that
//!     is free, else in the highest free gap below the guest's mmap ceiling
//!     (guest_mem I3), placed there with `MAP_FIXED_NOREPLACE`; only if that
//!     fails (hotlift mapped there meanwhile) does the kernel choose.
//!     Placeholders (guest_mem I4) count as free there: the guest's
//!     mapping replaces them.
//! I4: the image log follows the guest's images (images.rs I4, I5): an
//!     executable file mapping is recorded after the kernel made it, and
//!     an image's end before the kernel unmaps, replaces or moves its code.
//! I5: a request is made with `MAP_FIXED`/`MREMAP_FIXED` only over pages
//!     that are the guest's or placeholders, never over a hole: a hole is
//!     first claimed with a `MAP_FIXED_NOREPLACE` placeholder ([`claim`]), so
//!     a mapping another hotlift thread made meanwhile is never replaced.
//! I7: `RLIMIT_AS` and `RLIMIT_DATA` the guest set (limits.rs I2) are
//!     checked here as the kernel checks them (`may_expand_vm`): a
//!     mapping, a growing `mremap` or `brk` that would take the guest's
//!     own mappings past them fails with -ENOMEM (`brk`: the old break),
//!     counting writable mappings as data.
//! I8: W^X: no guest page is executable in the kernel's eyes (translated
//!     code runs from the code cache): `mmap` and `mprotect` pass the
//!     guest's protection without `PROT_EXEC` (with `PROT_READ` where it
//!     asked for execute; loader::host_prot) and guest_mem keeps what the
//!     guest asked for. The vDSO and its data, which hotlift calls too,
//!     keep their protection: the guest's `mprotect` and `munmap` there
//!     are recorded only (the guest's view loses the pages; a fetch from
//!     them faults as natively), and `mremap` of them stops the run with a
//!     message (syscall/mod.rs).
//! I6: what the guest unmaps, or moves or shrinks away from, becomes a
//!     placeholder (guest_mem I4) when `keep_released` is on: `munmap` and
//!     a shrinking `mremap` replace the pages in one step; a growing
//!     `mremap` moves the pages with `MREMAP_DONTUNMAP` and replaces the
//!     range left behind in one step too ([`move_holding`]). Only a move
//!     the kernel places itself (no gap found, `MREMAP_FIXED`, or
//!     `DONTUNMAP` refused) leaves a hole for an instant before it is held
//!     (a hotlift mapping made then keeps its place; the guest sees it as
//!     taken).
#![allow(unsafe_code)]

pub mod cut;
pub use cut::file_written;
mod gaps;
pub mod lock;

pub use gaps::hold_guest_area;
use gaps::{highest_gap_below, holes, mapped_gap_below};

use crate::dispatch::process::Locked;
use crate::dispatch::{prot_from, Vm};
use crate::guest_mem::{page_up, Brk, GuestMem, PAGE};
use crate::host::syscall6;
use crate::loader::Prot;

const ENOMEM: i64 = -(libc::ENOMEM as i64);
const EINVAL: i64 = -(libc::EINVAL as i64);

/// Does [start, end) touch a mapping that is neither the guest's nor a
/// placeholder?
fn touches_host(l: &Locked, start: u64, end: u64) -> bool {
    touches_host_in(&l.mem, &l.brk, start, end)
}

fn touches_host_in(mem: &GuestMem, brk: &Brk, start: u64, end: u64) -> bool {
    if mem.claimable(start, end) {
        return false;
    }
    if start < brk.limit && end > brk.start {
        return true;
    }
    let Ok(maps) = crate::host::read_proc("/proc/self/maps") else {
        return true;
    };
    maps.lines()
        .filter_map(crate::host::maps_range)
        .any(|(a, b)| {
            let (s, e) = (a.max(start), b.min(end));
            s < e && !mem.claimable(s, e)
        })
}

/// Map a placeholder (guest_mem I4) over [start, end): over anything with
/// `replace` (the caller knows the pages are the guest's or placeholders,
/// I5), else only where nothing is mapped. Whether it was made.
fn map_placeholder(start: u64, end: u64, replace: bool) -> bool {
    let fixed = if replace {
        libc::MAP_FIXED
    } else {
        libc::MAP_FIXED_NOREPLACE
    };
    let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | fixed;
    let a = [
        start,
        end - start,
        libc::PROT_NONE as u64,
        flags as u64,
        u64::MAX,
        0,
    ];
    // SAFETY: with `replace`, the pages are the guest's or placeholders
    // (the caller's I5); else MAP_FIXED_NOREPLACE replaces nothing.
    unsafe { syscall6(libc::SYS_mmap as u64, a) == start as i64 }
}

/// I5: make every page of [start, end) the guest's or a placeholder, by
/// holding the holes in it; false if a page is hotlift's (nothing else
/// changes then but holes held on the way, which stay placeholders).
///
/// The answer is what the bookkeeping says once the holes are held, not
/// what `/proc/self/maps` said: another hotlift thread (the monitor's
/// allocator) may map into a hole between two reads of it, and a range
/// with no holes left is not free for that. (Trusting the earlier read
/// put a guest's `mmap` over the monitor's fresh edge cache: the guest
/// died of SIGSEGV or the monitor read its data as counts, about 1 run
/// in 1,000 of a dynamic guest under load.)
fn claim(l: &mut Locked, start: u64, end: u64) -> bool {
    claim_in(&mut l.mem, &l.brk, start, end, || ())
}

/// [`claim`], with `meanwhile` run after `/proc/self/maps` was first read
/// (where another thread's mapping may land: the tests map there).
fn claim_in(mem: &mut GuestMem, brk: &Brk, start: u64, end: u64, meanwhile: impl FnOnce()) -> bool {
    if mem.claimable(start, end) {
        return true;
    }
    if touches_host_in(mem, brk, start, end) {
        return false;
    }
    meanwhile();
    for (s, e) in holes(start, end) {
        if !map_placeholder(s, e, false) {
            return false;
        }
        mem.hold(s, e);
    }
    mem.claimable(start, end)
}

/// I6: the kernel unmapped [start, end) for the guest (it moved or
/// shrank a mapping): hold the holes it left.
fn keep_released(l: &mut Locked, start: u64, end: u64) {
    if !l.mem.keep_released {
        return;
    }
    for (s, e) in holes(start, end) {
        if map_placeholder(s, e, false) {
            l.mem.hold(s, e);
        }
    }
}

/// I6 (a guest mapping over placeholders failed, and the kernel may have
/// removed them first): hold their pages again, or forget the ones hotlift
/// took meanwhile.
fn restore_held(l: &mut Locked, start: u64, end: u64) {
    let held: Vec<(u64, u64)> = l.mem.held(start, end).collect();
    for (hs, he) in held {
        for (s, e) in holes(hs, he) {
            if !map_placeholder(s, e, false) {
                l.mem.release(s, e);
            }
        }
    }
}

/// I7: may the guest's memory grow by `grow` bytes (`data`: writable)?
fn within_limits(vm: &Vm, l: &Locked, grow: u64, data: bool) -> bool {
    let limits = vm.proc.limits.lock().unwrap_or_else(|e| e.into_inner());
    let (space, data_max) = (limits.address_space(), limits.data().filter(|_| data));
    if space.is_none() && data_max.is_none() {
        return true;
    }
    let (total, writable) = l.mem.footprint(vm.ctx.reg(crate::contract::Reg::Rsp));
    space.is_none_or(|m| total.saturating_add(grow) <= m)
        && data_max.is_none_or(|m| writable.saturating_add(grow) <= m)
}

pub fn brk(vm: &mut Vm, want: u64) -> i64 {
    let proc = vm.proc.clone();
    let mut guard = proc.lock();
    let l = &mut *guard;
    let b = &mut l.brk;
    if want < b.start || want > b.limit {
        return b.cur as i64;
    }
    let need = page_up(want);
    if need > b.mapped {
        let (cur, grow) = (b.cur, need - b.mapped);
        if !within_limits(vm, l, grow, true) {
            return cur as i64;
        }
    }
    let b = &mut l.brk;
    let rw = libc::PROT_READ | libc::PROT_WRITE;
    if need > b.mapped {
        // SAFETY: [mapped, need) lies inside hotlift's brk reservation.
        let p = unsafe {
            libc::mmap(
                b.mapped as *mut libc::c_void,
                (need - b.mapped) as usize,
                rw,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return b.cur as i64;
        }
        let mapped = b.mapped;
        l.mem.insert(
            mapped,
            need,
            Prot {
                r: true,
                w: true,
                x: false,
            },
        );
        lock::new_guest_memory(mapped, need - mapped);
    } else if need < b.mapped {
        let mapped = b.mapped;
        vm.code_changed(l, need, mapped);
        let b = &mut l.brk;
        // Shrinking gives the pages back, so growing again reads zeros.
        // SAFETY: [need, mapped) lies inside the reservation.
        unsafe {
            libc::mmap(
                need as *mut libc::c_void,
                (b.mapped - need) as usize,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED | libc::MAP_NORESERVE,
                -1,
                0,
            );
        }
        let mapped = b.mapped;
        l.mem.remove(need, mapped);
    }
    let b = &mut l.brk;
    b.mapped = need;
    b.cur = want;
    want as i64
}

pub fn mmap(vm: &mut Vm, a: [u64; 6]) -> i64 {
    let proc = vm.proc.clone();
    let mut guard = proc.lock();
    let l = &mut *guard;
    let (addr, len, flags) = (a[0], a[1], a[3] as i32);
    // What the guest gets (control.rs C5); the kernel gets host_prot (I8).
    let prot = super::control::guest_prot(a[2]);
    let end = addr.saturating_add(page_up(len));
    let fixed = flags & libc::MAP_FIXED != 0;
    let noreplace = !fixed && flags & libc::MAP_FIXED_NOREPLACE != 0;
    // I7: what a fixed mapping replaces of the guest's does not grow it.
    let replaced: u64 = if fixed {
        l.mem.owned(addr, end).map(|(s, e)| e - s).sum()
    } else {
        0
    };
    let data = prot & libc::PROT_WRITE as u64 != 0 && flags & libc::MAP_SHARED == 0;
    if !within_limits(vm, l, page_up(len).saturating_sub(replaced), data) {
        return ENOMEM;
    }
    let mut b = a;
    if (fixed || noreplace) && len != 0 {
        if noreplace && l.mem.owns_any(addr, end) || !claim(l, addr, end) {
            // The guest's own page, or hotlift's: the kernel says EEXIST
            // for MAP_FIXED_NOREPLACE; MAP_FIXED must not replace
            // hotlift's (I1).
            if fixed {
                return ENOMEM;
            }
        } else if noreplace && l.mem.held_all(addr, end) {
            // Free for the guest: replace the placeholders (I5).
            b[3] = ((flags & !libc::MAP_FIXED_NOREPLACE) | libc::MAP_FIXED) as u64;
        }
    }
    if fixed {
        vm.code_changed(l, addr, end);
        gone(vm, addr, end);
    }
    // I8.
    b[2] = crate::loader::host_prot(a[2] as i32) as u64;
    let placed = if fixed || noreplace {
        None
    } else {
        place_top_down(l, b)
    };
    // SAFETY: I1 and I5 checked; a non-fixed mapping never replaces
    // anything.
    let r = placed.unwrap_or_else(|| unsafe { syscall6(libc::SYS_mmap as u64, b) });
    if r < 0 {
        if b[3] as i32 & libc::MAP_FIXED != 0 {
            restore_held(l, addr, end);
        }
        return r;
    }
    if placed.is_none() && crate::anon::in_reserve(r as u64, page_up(len)) {
        // anon.rs R1: the kernel placed it in address space hotlift gave
        // back from its reserve for its own use: as if none were left.
        // SAFETY: the mapping just made, the guest's for no one yet.
        unsafe { libc::munmap(r as *mut libc::c_void, page_up(len) as usize) };
        return ENOMEM;
    }
    l.mem
        .insert(r as u64, r as u64 + page_up(len), prot_from(prot));
    lock::new_guest_memory(r as u64, page_up(len));
    if flags & libc::MAP_SHARED != 0 && flags & libc::MAP_ANONYMOUS == 0 {
        // dispatch/smc.rs I7: a view of a file another view may share.
        if let Some((dev, ino)) = file_identity(a[4] as i32) {
            let end = r as u64 + page_up(len);
            l.mem.add_view(r as u64, end, dev, ino, a[5]);
            twins_changed(vm, l, r as u64, end);
        }
    }
    if prot & libc::PROT_EXEC as u64 != 0 && flags & libc::MAP_ANONYMOUS == 0 {
        let blocks = vm.proc.prof.blocks.seq();
        let (fd, offset) = (a[4] as i32, a[5]);
        if flags & libc::MAP_SHARED == 0 {
            cut::code_mapped(fd);
        }
        vm.proc
            .prof
            .images()
            .mapped_file(fd, offset, r as u64, page_up(len), blocks);
        if let Some(p) = &vm.proc.paths {
            p.resolve(&vm.proc.prof.images());
        }
        vm.proc.read_files_ahead();
    }
    r
}

/// I3: the guest's mapping `a` (without MAP_FIXED) at its hint if free,
/// else in the highest free gap below the guest's mmap ceiling; `None` when
/// the request is one the kernel places specially, or no gap was found,
/// and the kernel should choose.
fn place_top_down(l: &mut Locked, a: [u64; 6]) -> Option<i64> {
    let (hint, len, flags) = (a[0] & !(PAGE - 1), page_up(a[1]), a[3] as i32);
    let ceiling = l.mem.mmap_ceiling?;
    if len == 0 || len > ceiling || flags & (libc::MAP_32BIT | libc::MAP_HUGETLB) != 0 {
        return None;
    }
    let at_hint = (hint >= crate::loader::MMAP_MIN_ADDR && hint.checked_add(len).is_some())
        .then_some(hint)
        .filter(|&h| is_free(l, h, h + len));
    let at = match at_hint {
        Some(h) => h,
        None => highest_gap_below(l, ceiling, len)?,
    };
    // A placeholder over every hole first (I5): if hotlift mapped there
    // since /proc/self/maps was read, look again once.
    let at = if claim(l, at, at + len) {
        at
    } else {
        let at = mapped_gap_below(l, ceiling, len)?;
        claim(l, at, at + len).then_some(at)?
    };
    let mut b = a;
    b[0] = at;
    b[3] = ((flags & !libc::MAP_FIXED_NOREPLACE) | libc::MAP_FIXED) as u64;
    // SAFETY: every page of the range is a placeholder (claimed above and
    // free of guest memory, I5).
    let r = unsafe { syscall6(libc::SYS_mmap as u64, b) };
    if r < 0 {
        restore_held(l, at, at + len);
    }
    Some(r)
}

/// Is [start, end) free for a guest mapping: no page the guest's, none
/// hotlift's but placeholders (as natively: nothing mapped there)?
fn is_free(l: &Locked, start: u64, end: u64) -> bool {
    !l.mem.owns_any(start, end) && !touches_host(l, start, end)
}

/// I3 for a growing `mremap(MREMAP_MAYMOVE)` of guest memory: in place
/// when the pages above are free, else moved into the highest free gap
/// below the guest's mmap ceiling, as the kernel grows or moves it below
/// its `mmap_base`; without this the kernel would move it next to
/// whatever hotlift mapped last (a different place in every run).
/// `None`: the kernel should decide.
fn move_top_down(l: &mut Locked, a: [u64; 6]) -> Option<i64> {
    let (old, old_len, new_len) = (a[0], page_up(a[1]), page_up(a[2]));
    let ceiling = l.mem.mmap_ceiling?;
    let grow_end = old.checked_add(new_len)?;
    if grow_end <= ceiling && is_free(l, old + old_len, grow_end) {
        // Placeholders above give way for the kernel's in-place growth
        // (held again if it fails).
        let held: Vec<(u64, u64)> = l.mem.held(old + old_len, grow_end).collect();
        for &(s, e) in &held {
            // SAFETY: hotlift's own placeholder.
            unsafe { syscall6(libc::SYS_munmap as u64, [s, e - s, 0, 0, 0, 0]) };
            l.mem.release(s, e);
        }
        let mut b = a;
        b[3] = 0;
        // SAFETY: without MREMAP_MAYMOVE the kernel fails rather than
        // replace anything.
        let r = unsafe { syscall6(libc::SYS_mremap as u64, b) };
        if r >= 0 {
            return Some(r);
        }
        for (s, e) in held {
            if map_placeholder(s, e, false) {
                l.mem.hold(s, e);
            }
        }
    }
    let at = highest_gap_below(l, ceiling, new_len)?;
    if !claim(l, at, at + new_len) {
        return None;
    }
    if l.mem.keep_released {
        if let Some(r) = move_holding(l, old, old_len, new_len, at) {
            return Some(r);
        }
        if !l.mem.held_all(at, at + new_len) {
            return None;
        }
    }
    let mut b = a;
    b[3] = (libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED) as u64;
    b[4] = at;
    // SAFETY: every page at `at` is a placeholder (claimed, I5).
    let r = unsafe { syscall6(libc::SYS_mremap as u64, b) };
    if r < 0 {
        restore_held(l, at, at + new_len);
    }
    Some(r)
}

/// I6 for a growing move into `[at, at + new_len)`, all placeholders: the
/// pages move with `MREMAP_DONTUNMAP`, so their old range stays mapped and
/// no other hotlift thread's mapping can land there; it then becomes a
/// placeholder in one step (`MAP_FIXED` over it), and the moved mapping
/// grows in place over the placeholders above it. `None` when the kernel
/// refuses the move (a mapping `DONTUNMAP` does not support): the guest's
/// mapping is where it was, and the destination's placeholders are held
/// again where they could be.
fn move_holding(l: &mut Locked, old: u64, old_len: u64, new_len: u64, at: u64) -> Option<i64> {
    let prot = l.mem.find(old).map(|(_, r)| r.prot);
    let flags = libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED | libc::MREMAP_DONTUNMAP;
    // SAFETY: the source is the guest's (the caller checked), every page
    // of the destination a placeholder (claimed, I5).
    let r = unsafe {
        syscall6(
            libc::SYS_mremap as u64,
            [old, old_len, old_len, flags as u64, at, 0],
        )
    };
    if r < 0 {
        // The kernel may have unmapped the destination before it failed.
        restore_held(l, at, at + new_len);
        return None;
    }
    // The old range, empty now: a placeholder, or a hole if that fails.
    if map_placeholder(old, old + old_len, true) {
        l.mem.hold(old, old + old_len);
    } else {
        // SAFETY: the pages the kernel left behind, no longer the guest's.
        unsafe { syscall6(libc::SYS_munmap as u64, [old, old_len, 0, 0, 0, 0]) };
    }
    let tail = (at + old_len, at + new_len);
    // SAFETY: hotlift's own placeholders, making room for the growth.
    unsafe {
        syscall6(
            libc::SYS_munmap as u64,
            [tail.0, tail.1 - tail.0, 0, 0, 0, 0],
        )
    };
    l.mem.release(tail.0, tail.1);
    // SAFETY: without MREMAP_MAYMOVE the kernel fails rather than replace
    // anything.
    let r = unsafe { syscall6(libc::SYS_mremap as u64, [at, old_len, new_len, 0, 0, 0]) };
    if r >= 0 {
        return Some(r);
    }
    // hotlift mapped into the tail in that instant: hold what is still a
    // hole, and let the kernel move the mapping on from `at`.
    keep_released(l, tail.0, tail.1);
    let flags = libc::MREMAP_MAYMOVE as u64;
    // SAFETY: the guest's mapping, now at `at`; the kernel chooses.
    let r = unsafe { syscall6(libc::SYS_mremap as u64, [at, old_len, new_len, flags, 0, 0]) };
    if r >= 0 {
        keep_released(l, at, at + old_len);
        return Some(r);
    }
    // No room at all: the mapping goes back where the guest left it.
    let back = (libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED) as u64;
    // SAFETY: `old` holds only our placeholder (or is a hole).
    let moved = unsafe {
        syscall6(
            libc::SYS_mremap as u64,
            [at, old_len, old_len, back, old, 0],
        )
    };
    if moved >= 0 {
        if let Some(prot) = prot {
            l.mem.insert(old, old + old_len, prot);
        }
        keep_released(l, at, at + old_len);
    }
    Some(r)
}

/// Guest memory `[start, end)` is about to go (I4).
fn gone(vm: &mut Vm, start: u64, end: u64) {
    let blocks = vm.proc.prof.blocks.seq();
    vm.proc.prof.images().unmapped(start, end, blocks);
}

pub fn munmap(vm: &mut Vm, a: [u64; 6]) -> i64 {
    let (addr, len) = (a[0], page_up(a[1]));
    if addr % PAGE != 0 || len == 0 || addr.checked_add(len).is_none() {
        return EINVAL;
    }
    let end = addr + len;
    let proc = vm.proc.clone();
    let mut guard = proc.lock();
    let l = &mut *guard;
    if touches_host(l, addr, end) {
        return ENOMEM;
    }
    vm.code_changed(l, addr, end);
    gone(vm, addr, end);
    if !l.mem.keep_released {
        // Only the guest's pages and placeholders, piece by piece: a hole
        // in the range may be hotlift's by now (see `claim`).
        let mut pieces: Vec<(u64, u64, bool)> = l
            .mem
            .owned(addr, end)
            .chain(l.mem.held(addr, end))
            .flat_map(|(s, e)| crate::guest_mem::split_shared(s, e))
            .collect();
        pieces.sort_unstable();
        for (s, e, shared) in pieces {
            if shared {
                // I8: the vDSO stays hotlift's.
                l.mem.remove(s, e);
                continue;
            }
            // SAFETY: the guest's own pages or hotlift's placeholders (I1).
            let r = unsafe { syscall6(libc::SYS_munmap as u64, [s, e - s, 0, 0, 0, 0]) };
            if r != 0 {
                return r;
            }
            l.mem.remove(s, e);
            l.mem.release(s, e);
        }
        return 0;
    }
    // I6: the guest's pages become placeholders in one step; holes stay
    // holes (as natively, unmapping them changes nothing).
    let owned: Vec<(u64, u64, bool)> = l
        .mem
        .owned(addr, end)
        .flat_map(|(s, e)| crate::guest_mem::split_shared(s, e))
        .collect();
    for (s, e, shared) in owned {
        if shared {
            // I8: the vDSO stays hotlift's.
            l.mem.remove(s, e);
            continue;
        }
        if !map_placeholder(s, e, true) {
            // SAFETY: the guest's own pages (I1).
            let r = unsafe { syscall6(libc::SYS_munmap as u64, [s, e - s, 0, 0, 0, 0]) };
            if r != 0 {
                return r;
            }
            l.mem.remove(s, e);
            continue;
        }
        l.mem.hold(s, e);
    }
    0
}

pub fn mprotect(vm: &mut Vm, a: [u64; 6]) -> i64 {
    let proc = vm.proc.clone();
    let mut guard = proc.lock();
    let l = &mut *guard;
    let (addr, len) = (a[0], page_up(a[1]));
    if addr % PAGE != 0 {
        return EINVAL;
    }
    if len != 0 && !l.mem.owns_all(addr, addr.saturating_add(len)) {
        return ENOMEM;
    }
    vm.code_changed(l, addr, addr + len);
    // I8: the vDSO is hotlift's too; elsewhere never executable.
    let mut b = a;
    b[2] = crate::loader::host_prot(a[2] as i32) as u64;
    let r = if crate::guest_mem::shared_with_host(addr, addr + len) {
        if a[2] & !((libc::PROT_READ | libc::PROT_WRITE | libc::PROT_EXEC) as u64) != 0 {
            EINVAL
        } else {
            0
        }
    } else {
        // SAFETY: every page in the range is the guest's (I1).
        unsafe { syscall6(libc::SYS_mprotect as u64, b) }
    };
    if r == 0 {
        let prot = super::control::guest_prot(a[2]);
        l.mem.protect(addr, addr + len, prot_from(prot));
        if l.mem.has_views() {
            // dispatch/smc.rs I7: a view made writable (or executable)
            // is the same memory as its twins.
            l.mem.note_exec(addr, addr + len);
            twins_changed(vm, l, addr, addr + len);
        }
    }
    r
}

/// The device and inode of the regular file (or memfd) `fd` opens.
pub(crate) fn file_identity(fd: i32) -> Option<(u64, u64)> {
    // SAFETY: fstat fills a stat buffer we own.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above; a bad descriptor is an error.
    if unsafe { libc::fstat(fd, &mut st) } != 0 || st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return None;
    }
    Some((st.st_dev, st.st_ino))
}

/// dispatch/smc.rs I7: the pages of other mappings that are the same
/// memory as [start, end) lose their translations (a new writable view
/// of code, or one made writable).
fn twins_changed(vm: &mut Vm, l: &mut Locked, start: u64, end: u64) {
    for (s, e) in l.mem.twins(start, end) {
        vm.code_changed(l, s, e);
    }
}

pub fn mremap(vm: &mut Vm, a: [u64; 6]) -> i64 {
    let proc = vm.proc.clone();
    let mut guard = proc.lock();
    let l = &mut *guard;
    let (old, old_len, new_len, flags, new_addr) =
        (a[0], page_up(a[1]), page_up(a[2]), a[3] as i32, a[4]);
    if old_len != 0 && !l.mem.owns_all(old, old.saturating_add(old_len)) {
        return ENOMEM;
    }
    let writable = l.mem.find(old).is_some_and(|(_, r)| r.prot.w);
    if new_len > old_len && !within_limits(vm, l, new_len - old_len, writable) {
        return ENOMEM;
    }
    let new_end = new_addr.saturating_add(new_len);
    if flags & libc::MREMAP_FIXED != 0 && !claim(l, new_addr, new_end) {
        return ENOMEM;
    }
    let prot = l.mem.find(old).map(|(_, r)| r.prot).unwrap_or(Prot {
        r: true,
        w: true,
        x: false,
    });
    let moving = flags & libc::MREMAP_MAYMOVE != 0;
    // An in-place grow must not run into hotlift's memory either.
    if !moving && new_len > old_len && touches_host(l, old + old_len, old + new_len) {
        return ENOMEM;
    }
    // Only the old range changes: the kernel grows in place only into
    // free pages and moves otherwise, so [old + old_len, old + new_len)
    // may be someone else's code (malloc's chunks lie just below a
    // library's text), which a grow leaves alone.
    vm.code_changed(l, old, old + old_len);
    gone(vm, old, old + old_len);
    if flags & libc::MREMAP_FIXED != 0 {
        vm.code_changed(l, new_addr, new_end);
        gone(vm, new_addr, new_end);
    }
    let plain = flags & (libc::MREMAP_FIXED | libc::MREMAP_DONTUNMAP) == 0 && old_len != 0;
    if plain && new_len != 0 && new_len < old_len && old % PAGE == 0 && l.mem.keep_released {
        // A shrink: its tail becomes a placeholder in one step (I6).
        let (s, e) = (old + new_len, old + old_len);
        if map_placeholder(s, e, true) {
            l.mem.hold(s, e);
            return old as i64;
        }
    }
    let placed = if plain && moving && new_len > old_len {
        move_top_down(l, a)
    } else {
        None
    };
    // SAFETY: the source is the guest's; a fixed destination was claimed
    // (I5); an in-place grow was checked (I1).
    let r = placed.unwrap_or_else(|| unsafe { syscall6(libc::SYS_mremap as u64, a) });
    if r < 0 {
        if flags & libc::MREMAP_FIXED != 0 {
            restore_held(l, new_addr, new_end);
        }
        return r;
    }
    let r_end = r as u64 + new_len;
    if flags & libc::MREMAP_DONTUNMAP == 0 {
        l.mem.remove(old, old + old_len);
        // What the kernel unmapped: the old range outside the new one.
        if (r as u64) != old {
            keep_released(l, old, old + old_len);
        } else if new_len < old_len {
            keep_released(l, r_end, old + old_len);
        }
    }
    l.mem.insert(r as u64, r_end, prot);
    r
}

#[cfg(test)]
mod tests;
