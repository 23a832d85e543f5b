//! The address space around the guest's mappings: its holes and the
//! guest's mmap ceiling as `/proc/self/maps` shows them, the guest's
//! top-down area held at start, and the top-down search for a gap
//! (guest_mem I3, I4).

use super::map_placeholder;
use crate::dispatch::process::Locked;
use crate::guest_mem::GuestMem;

/// The unmapped parts of [start, end), from `/proc/self/maps`.
pub(super) fn holes(start: u64, end: u64) -> Vec<(u64, u64)> {
    let Ok(maps) = crate::host::read_proc("/proc/self/maps") else {
        return Vec::new();
    };
    holes_in(&maps, start, end)
}

/// The unmapped parts of [start, end) by `maps` (`/proc/self/maps` text).
fn holes_in(maps: &str, start: u64, end: u64) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut at = start;
    for (a, b) in map_ranges(maps) {
        if b <= at {
            continue;
        }
        if a >= end {
            break;
        }
        if a > at {
            out.push((at, a));
        }
        at = b;
    }
    if at < end {
        out.push((at, end));
    }
    out
}

/// The top of the guest's own mmap area (guest_mem I3), by `maps`
/// (`/proc/self/maps` text) once hotlift has made its start-up mappings:
/// the lowest start of a mapping within 4 TiB below `stack_bottom` (the
/// guest stack's lowest page) and at or above `above`. The kernel put
/// the guest's stack and hotlift's start-up mappings (ring, tables,
/// thread stacks) top-down there, one after the other; hotlift's own
/// program, heap and a non-PIE guest lie far below, and a dynamically
/// linked program, its brk and the code cache below `above` (loader
/// map.rs I6).
fn mmap_ceiling(maps: &str, stack_bottom: u64, above: u64) -> Option<u64> {
    let floor = stack_bottom.saturating_sub(4 << 40).max(above);
    map_ranges(maps)
        .map(|(start, _)| start)
        .filter(|&start| start >= floor && start <= stack_bottom)
        .min()
}

/// Address space below the ceiling held for the guest's own mappings
/// (guest_mem I4): as much as a process could map top-down before it ran
/// into anything else of its own in practice; a placeholder costs one
/// kernel VMA whatever its size.
const GUEST_AREA: u64 = 1 << 40;

/// guest_mem I3 and I4: set the guest's mmap ceiling ([`mmap_ceiling`]
/// from `stack_bottom` and `floor`), hold its top-down mmap area (the
/// holes in the `GUEST_AREA` below the ceiling, above `floor`) and keep
/// what the guest releases from now on; nothing held when address space
/// is limited (`RLIMIT_AS`), where placeholders would count against the
/// guest.
pub fn hold_guest_area(mem: &mut GuestMem, stack_bottom: u64, floor: u64) {
    // One read for the ceiling and the holes below it: nothing is mapped
    // in between.
    let maps = crate::host::read_proc("/proc/self/maps").unwrap_or_default();
    mem.mmap_ceiling = mmap_ceiling(&maps, stack_bottom, floor);
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: r is a valid out pointer.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut r) } != 0 || r.rlim_cur != libc::RLIM_INFINITY
    {
        return;
    }
    mem.keep_released = true;
    let Some(ceiling) = mem.mmap_ceiling else {
        return;
    };
    let lo = ceiling
        .saturating_sub(GUEST_AREA)
        .max(floor)
        .max(crate::loader::MMAP_MIN_ADDR);
    for (s, e) in holes_in(&maps, lo, ceiling) {
        if map_placeholder(s, e, false) {
            mem.hold(s, e);
        }
    }
}

/// `(start, end)` of every line of `/proc/self/maps` text, ascending.
fn map_ranges(maps: &str) -> impl DoubleEndedIterator<Item = (u64, u64)> + '_ {
    maps.lines().filter_map(crate::host::maps_range)
}

/// The start of a `len`-byte range in the highest gap of this process's
/// address space that ends at or below `ceiling` (the kernel's top-down
/// search, without its randomisation); placeholders count as free. While
/// the guest's area is held, from the placeholders alone (guest_mem I4:
/// each read of `/proc/self/maps`, 150-200 lines, cost 50-100 µs, and a
/// python start-up made ~150 mmaps).
pub(super) fn highest_gap_below(l: &Locked, ceiling: u64, len: u64) -> Option<u64> {
    if l.mem.keep_released {
        if let Some(at) = l.mem.highest_held_gap(ceiling, len) {
            return Some(at);
        }
    }
    mapped_gap_below(l, ceiling, len)
}

/// [`highest_gap_below`] from `/proc/self/maps`.
pub(super) fn mapped_gap_below(l: &Locked, ceiling: u64, len: u64) -> Option<u64> {
    let maps = crate::host::read_proc("/proc/self/maps").ok()?;
    // What is mapped and not a placeholder, highest first.
    let mut taken: Vec<(u64, u64)> = Vec::new();
    for (start, end) in map_ranges(&maps).rev() {
        let mut top = end;
        let held: Vec<(u64, u64)> = l.mem.held(start, end).collect();
        for (hs, he) in held.into_iter().rev() {
            if he < top {
                taken.push((he, top));
            }
            top = hs;
        }
        if start < top {
            taken.push((start, top));
        }
    }
    let mut top = ceiling;
    for (start, end) in taken {
        if start >= top {
            continue;
        }
        if end < top && top - end >= len {
            return Some(top - len);
        }
        top = top.min(start);
    }
    (top >= crate::loader::MMAP_MIN_ADDR + len).then(|| top - len)
}
