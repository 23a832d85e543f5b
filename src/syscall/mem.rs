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
//! I4: the image log follows the guest's images (images.rs I4, I5): an
//!     executable file mapping is recorded after the kernel made it, and
//!     an image's end before the kernel unmaps, replaces or moves its code.
#![allow(unsafe_code)]

use super::raw::syscall6;
use crate::dispatch::process::Locked;
use crate::dispatch::{prot_from, Vm};
use crate::guest_mem::{page_up, PAGE};
use crate::loader::Prot;

const ENOMEM: i64 = -(libc::ENOMEM as i64);
const EINVAL: i64 = -(libc::EINVAL as i64);

/// Does [start, end) touch a mapping that is not the guest's?
fn touches_host(l: &Locked, start: u64, end: u64) -> bool {
    if l.mem.owns_all(start, end) {
        return false;
    }
    if start < l.brk.limit && end > l.brk.start {
        return true;
    }
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
        return true;
    };
    maps.lines().any(|line| {
        let range = line.split_whitespace().next().unwrap_or("");
        let (a, b) = range.split_once('-').unwrap_or(("0", "0"));
        let (a, b) = (
            u64::from_str_radix(a, 16).unwrap_or(0),
            u64::from_str_radix(b, 16).unwrap_or(0),
        );
        let (s, e) = (a.max(start), b.min(end));
        s < e && !l.mem.owns_all(s, e)
    })
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
    let (addr, len, prot, flags) = (a[0], a[1], a[2], a[3] as i32);
    let fixed = flags & (libc::MAP_FIXED | libc::MAP_FIXED_NOREPLACE) != 0;
    if fixed
        && flags & libc::MAP_FIXED != 0
        && len != 0
        && touches_host(l, addr, addr.saturating_add(page_up(len)))
    {
        return ENOMEM;
    }
    if fixed {
        vm.code_changed(l, addr, addr.saturating_add(page_up(len)));
        gone(vm, addr, addr.saturating_add(page_up(len)));
    }
    let placed = if fixed { None } else { place_top_down(l, a) };
    // SAFETY: I1 checked; a non-fixed mapping never replaces anything.
    let r = placed.unwrap_or_else(|| unsafe { syscall6(libc::SYS_mmap as u64, a) });
    if r >= 0 {
        l.mem
            .insert(r as u64, r as u64 + page_up(len), prot_from(prot));
        if prot & libc::PROT_EXEC as u64 != 0 && flags & libc::MAP_ANONYMOUS == 0 {
            let blocks = vm.proc.prof.blocks.len();
            let (fd, offset) = (a[4] as i32, a[5]);
            vm.proc
                .prof
                .images()
                .mapped_file(fd, offset, r as u64, page_up(len), blocks);
            if let Some(p) = &vm.proc.paths {
                p.resolve(&vm.proc.prof.images());
            }
        }
    }
    r
}

/// I3: the guest's mapping `a` (without MAP_FIXED) at its hint if free,
/// else in the highest free gap below the guest's mmap ceiling; `None` when
/// neither worked out (or the request is one the kernel places specially),
/// and the kernel should choose.
fn place_top_down(l: &Locked, a: [u64; 6]) -> Option<i64> {
    let (hint, len, flags) = (a[0] & !(PAGE - 1), page_up(a[1]), a[3] as i32);
    let ceiling = l.mem.mmap_ceiling?;
    if len == 0 || len > ceiling || flags & (libc::MAP_32BIT | libc::MAP_HUGETLB) != 0 {
        return None;
    }
    let at_hint = (hint >= crate::loader::MMAP_MIN_ADDR).then_some(hint);
    let below = || highest_gap_below(ceiling, len);
    for at in at_hint.into_iter().chain(std::iter::from_fn(below).take(1)) {
        let mut b = a;
        b[0] = at;
        b[3] = (flags | libc::MAP_FIXED_NOREPLACE) as u64;
        // SAFETY: MAP_FIXED_NOREPLACE never replaces an existing mapping.
        let r = unsafe { syscall6(libc::SYS_mmap as u64, b) };
        if r == at as i64 {
            return Some(r);
        }
        if r >= 0 {
            // A kernel without MAP_FIXED_NOREPLACE took it as a hint.
            // SAFETY: the mapping was made just now by this call.
            unsafe { syscall6(libc::SYS_munmap as u64, [r as u64, len, 0, 0, 0, 0]) };
            return None;
        }
        if r != -(libc::EEXIST as i64) {
            // Not about placement (EBADF, EACCES, ENOMEM …): the kernel's
            // own answer to the request as made is the guest's.
            return None;
        }
    }
    None
}

/// I3 for a growing `mremap(MREMAP_MAYMOVE)` of guest memory: in place
/// when the pages above are free and not hotlift's, else moved into the
/// highest free gap below the guest's mmap ceiling, as the kernel grows or
/// moves it below its `mmap_base`; without this the kernel would move it
/// next to whatever hotlift mapped last (a different place in every run).
/// `None`: the kernel should decide.
fn move_top_down(l: &Locked, a: [u64; 6]) -> Option<i64> {
    let (old, old_len, new_len) = (a[0], page_up(a[1]), page_up(a[2]));
    let ceiling = l.mem.mmap_ceiling?;
    let grow_end = old.checked_add(new_len)?;
    if grow_end <= ceiling && !touches_host(l, old + old_len, grow_end) {
        let mut b = a;
        b[3] = 0;
        // SAFETY: the grown range is free of hotlift's mappings; without
        // MREMAP_MAYMOVE the kernel fails rather than replace anything.
        let r = unsafe { syscall6(libc::SYS_mremap as u64, b) };
        if r >= 0 {
            return Some(r);
        }
    }
    let at = highest_gap_below(ceiling, new_len)?;
    let mut b = a;
    b[3] = (libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED) as u64;
    b[4] = at;
    // SAFETY: `at` starts a free gap of `new_len` bytes (nothing replaced).
    Some(unsafe { syscall6(libc::SYS_mremap as u64, b) })
}

/// The top of the guest's own mmap area (guest_mem I3) once hotlift has
/// made its start-up mappings: the lowest start of a mapping within 4 TiB
/// below `stack_bottom` (the guest stack's lowest page) and at or above
/// `above`. The kernel put the guest's stack and hotlift's start-up
/// mappings (ring, tables, thread stacks) top-down there, one after the
/// other; hotlift's own program, heap and a non-PIE guest lie far below,
/// and a dynamically linked program, its brk and the code cache below
/// `above` (loader map.rs I6).
pub fn mmap_ceiling(stack_bottom: u64, above: u64) -> Option<u64> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    let floor = stack_bottom.saturating_sub(4 << 40).max(above);
    map_ranges(&maps)
        .map(|(start, _)| start)
        .filter(|&start| start >= floor && start <= stack_bottom)
        .min()
}

/// `(start, end)` of every line of `/proc/self/maps` text, ascending.
fn map_ranges(maps: &str) -> impl DoubleEndedIterator<Item = (u64, u64)> + '_ {
    maps.lines().filter_map(|l| {
        let (a, b) = l.split_whitespace().next()?.split_once('-')?;
        Some((
            u64::from_str_radix(a, 16).ok()?,
            u64::from_str_radix(b, 16).ok()?,
        ))
    })
}

/// The start of a `len`-byte range in the highest gap of this process's
/// address space that ends at or below `ceiling` (the kernel's top-down
/// search, without its randomisation).
fn highest_gap_below(ceiling: u64, len: u64) -> Option<u64> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    let mut top = ceiling;
    for (start, end) in map_ranges(&maps).rev() {
        if start >= top {
            continue;
        }
        if end < top && top - end >= len {
            return Some(top - len);
        }
        top = start;
    }
    (top >= crate::loader::MMAP_MIN_ADDR + len).then(|| top - len)
}

/// Guest memory `[start, end)` is about to go (I4).
fn gone(vm: &mut Vm, start: u64, end: u64) {
    let blocks = vm.proc.prof.blocks.len();
    vm.proc.prof.images().unmapped(start, end, blocks);
}

pub fn munmap(vm: &mut Vm, a: [u64; 6]) -> i64 {
    let (addr, len) = (a[0], page_up(a[1]));
    if addr % PAGE != 0 || len == 0 {
        return EINVAL;
    }
    let proc = vm.proc.clone();
    let mut guard = proc.lock();
    let l = &mut *guard;
    if touches_host(l, addr, addr.saturating_add(len)) {
        return ENOMEM;
    }
    vm.code_changed(l, addr, addr + len);
    gone(vm, addr, addr + len);
    // SAFETY: only guest pages or unmapped pages are in the range (I1).
    let r = unsafe { syscall6(libc::SYS_munmap as u64, a) };
    if r == 0 {
        l.mem.remove(addr, addr + len);
    }
    r
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
    // SAFETY: every page in the range is the guest's (I1).
    let r = unsafe { syscall6(libc::SYS_mprotect as u64, a) };
    if r == 0 {
        l.mem.protect(addr, addr + len, prot_from(a[2]));
    }
    r
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
    if flags & libc::MREMAP_FIXED != 0
        && touches_host(l, new_addr, new_addr.saturating_add(new_len))
    {
        return ENOMEM;
    }
    let prot = l.mem.find(old).map(|(_, r)| r.prot).unwrap_or(Prot {
        r: true,
        w: true,
        x: false,
    });
    // An in-place grow must not run into hotlift's memory either.
    if flags & libc::MREMAP_MAYMOVE == 0
        && new_len > old_len
        && touches_host(l, old + old_len, old + new_len)
    {
        return ENOMEM;
    }
    vm.code_changed(l, old, old + old_len.max(new_len));
    gone(vm, old, old + old_len.max(new_len));
    if flags & libc::MREMAP_FIXED != 0 {
        vm.code_changed(l, new_addr, new_addr.saturating_add(new_len));
        gone(vm, new_addr, new_addr.saturating_add(new_len));
    }
    let placed = if flags & (libc::MREMAP_FIXED | libc::MREMAP_DONTUNMAP) == 0
        && flags & libc::MREMAP_MAYMOVE != 0
        && new_len > old_len
        && old_len != 0
    {
        move_top_down(l, a)
    } else {
        None
    };
    // SAFETY: source is the guest's; destinations were checked (I1).
    let r = placed.unwrap_or_else(|| unsafe { syscall6(libc::SYS_mremap as u64, a) });
    if r >= 0 {
        if flags & libc::MREMAP_DONTUNMAP == 0 {
            l.mem.remove(old, old + old_len);
        }
        l.mem.insert(r as u64, r as u64 + new_len, prot);
    }
    r
}
