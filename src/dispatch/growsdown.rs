//! Mappings the guest made with `MAP_GROWSDOWN`: the kernel grows them
//! down to a faulting address below (`expand_downwards`), but under
//! hotlift the pages below are its placeholders (guest_mem I4), so the
//! fault finds a `PROT_NONE` mapping instead of a hole and the guest would
//! die of SIGSEGV where natively its mapping grows.
//!
//! G1: a SIGSEGV at an address whose page and every page up to a guest
//!     mapping above are placeholders, where that mapping is `MAP_GROWSDOWN`
//!     (the kernel's `gd` flag in `/proc/self/smaps`), grows the guest's
//!     mapping down to the page, as the kernel would: its own protection,
//!     `RLIMIT_STACK` on the grown size, no accessible guest mapping of
//!     another kind within the kernel's guard gap below, not under
//!     `mmap_min_addr`. The faulting instruction then runs again. Anything
//!     else is a fault as before.
//! G2: a syscall's buffer that begins in such placeholders grows the
//!     mapping the same way before the kernel sees it (guest_access.rs):
//!     the kernel's own access to a user buffer grows a stack mapping as
//!     the guest's fault does (`read()` there got EFAULT).
//! G3: the guest's initial stack is such a mapping, with placeholders
//!     below it up to its hard `RLIMIT_STACK` (at most 256 MiB; dispatch/
//!     start.rs), so that it grows as far as a soft limit the program
//!     raises while it runs (gcc's cc1 raises its own to 64 MiB), and no
//!     further than one it lowers. It grows 16 pages a fault where the 15
//!     below the faulting one fit as well (its mapping is the whole soft
//!     limit at start, not the kernel's 132 KiB, so its size never was
//!     the kernel's; its resident pages are); other mappings a page, as
//!     the kernel's. The mapping G1 grew or read last is remembered with
//!     its end (until the guest's memory shrinks or its region changes),
//!     so that a fault reads `smaps` once, not once a page.

use super::process::Locked;
use super::Vm;
use crate::guest_mem::{page_down, PAGE};
use crate::host::syscall6;

/// The kernel's `stack_guard_gap` (its default, 256 pages; a boot option
/// changes it, which hotlift does not read).
const GUARD_GAP: u64 = 256 * PAGE;
/// G3: what a fault grows at least, where it may.
const STEP: u64 = 16 * PAGE;

impl Vm {
    /// G1 for the SIGSEGV at `addr`: whether the guest's mapping grew.
    pub(super) fn grow_down(&mut self, addr: u64) -> bool {
        let proc = self.proc.clone();
        let mut l = proc.lock();
        grow_locked(&mut l, addr)
    }
}

/// G1 with the translation lock held as `l`: whether the guest's mapping
/// grew down to `addr`. Also for G2.
pub(super) fn grow_locked(l: &mut Locked, addr: u64) -> bool {
    let page = page_down(addr);
    // Nothing grows into the kernel's half (a fault at NULL[-1], in the
    // last page of the address space: `page + PAGE` wrapped to 0).
    if page >= crate::loader::TASK_SIZE {
        return false;
    }
    // The guest's own page (a fault a handler takes: the JVM's polling
    // page), or not below a guest mapping across placeholders alone,
    // is decided from guest_mem before anything is read.
    if l.mem.owns_any(page, page + PAGE) {
        return false;
    }
    let Some((start, region)) = l.mem.regions().find(|&(s, _)| s > page) else {
        return false;
    };
    let Some(vma_end) = vma_end_of(start, region.end) else {
        return false;
    };
    let stack_max = crate::limits::kernel_get(libc::RLIMIT_STACK).map_or(u64::MAX, |l| l.cur);
    // The kernel's checks for growing down to `low`: placeholders all the
    // way, the limit, `mmap_min_addr`, and its guard gap (an accessible
    // guest mapping just below that does not grow down itself).
    let fits = |l: &Locked, low: u64| {
        l.mem.held_all(low, start)
            && low >= min_addr()
            && vma_end - low <= stack_max
            && !l
                .mem
                .regions()
                .filter(|&(s, r)| s < low && r.end > low.saturating_sub(GUARD_GAP))
                .any(|(s, r)| (r.prot.r || r.prot.w || r.prot.x) && growsdown_vma_end(s).is_none())
    };
    if !fits(l, page) {
        return false;
    }
    // G3: the initial stack a step of 64 KiB where it fits (touched page
    // by page, one fault in 16), else the page, as the kernel.
    let main = l.mem.stack.is_some_and(|(_, top, _)| top == vma_end);
    let page = Some(page.saturating_sub(STEP - PAGE))
        .filter(|&low| main && low < page && fits(l, low))
        .unwrap_or(page);
    let prot = region.prot.host_bits();
    let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED | libc::MAP_GROWSDOWN;
    let a = [page, start - page, prot as u64, flags as u64, u64::MAX, 0];
    // SAFETY: every page of [page, start) is a placeholder (checked
    // above, under the lock that guards guest memory).
    if unsafe { syscall6(libc::SYS_mmap as u64, a) } != page as i64 {
        return false;
    }
    l.mem.insert(page, start, region.prot);
    if let Some((_, grown)) = l.mem.find(page) {
        *last() = Some((page, grown.end, vma_end, crate::guest_mem::shrinks()));
    }
    true
}

/// G3: the `MAP_GROWSDOWN` mapping G1 grew or read last: (its start, the
/// end of the guest region from there, its end, `guest_mem::shrinks`).
fn last() -> std::sync::MutexGuard<'static, Option<(u64, u64, u64, u64)>> {
    static LAST: std::sync::Mutex<Option<(u64, u64, u64, u64)>> = std::sync::Mutex::new(None);
    LAST.lock().unwrap_or_else(|e| e.into_inner())
}

/// The end of the `MAP_GROWSDOWN` mapping that starts at `start`, whose
/// guest region ends at `region_end`: remembered (G3), else read.
fn vma_end_of(start: u64, region_end: u64) -> Option<u64> {
    let shrinks = crate::guest_mem::shrinks();
    let mut last = last();
    if let Some((s, r, end, g)) = *last {
        if (s, r, g) == (start, region_end, shrinks) {
            return Some(end);
        }
    }
    let end = growsdown_vma_end(start)?;
    *last = Some((start, region_end, end, shrinks));
    Some(end)
}

/// The end of the `MAP_GROWSDOWN` mapping that starts at `start`, from
/// `/proc/self/smaps`; None if no mapping starts there or it does not grow
/// down.
fn growsdown_vma_end(start: u64) -> Option<u64> {
    let smaps = crate::host::read_proc("/proc/self/smaps").ok()?;
    let mut current = None;
    for line in smaps.lines() {
        if let Some((s, e)) = crate::host::maps_range(line) {
            current = (s == start).then_some(e);
        } else if let (Some(e), Some(flags)) = (current, line.strip_prefix("VmFlags:")) {
            return flags.split_whitespace().any(|f| f == "gd").then_some(e);
        }
    }
    None
}

/// `vm.mmap_min_addr`: the kernel grows nothing below it.
fn min_addr() -> u64 {
    static MIN: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *MIN.get_or_init(|| {
        crate::host::read_proc("/proc/sys/vm/mmap_min_addr")
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(65536)
    })
}
