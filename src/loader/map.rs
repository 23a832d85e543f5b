//! The loader's seam to the OS: maps the program ([`load`]) and the guest
//! stack ([`build_stack`]), and reads the host values the auxv passes on
//! (`/proc/self/auxv`, `getuid`, `getrandom`). The only file of the loader that
//! uses `unsafe`.
//!
//! Invariants:
//! - I1: every mapping made here ends up either described by the returned
//!   `LoadedImage`/`InitialStack` or unmapped again before an error is
//!   returned (the [`Mapping`] guard unmaps on drop unless kept).
//! - I2: `MAP_FIXED` is only used inside a reservation made by the same call,
//!   so it never replaces memory hotlift did not just create. `ET_EXEC`
//!   regions use `MAP_FIXED_NOREPLACE` instead; `EEXIST` (or, on kernels
//!   without it, a different address) is `LoadError::OverlapsHost`.
//! - I3: guest memory is written only while mapped read-write by this file;
//!   final protections are applied last, with `mprotect`.
//! - I4: a segment's file bytes come from the file: the whole pages among
//!   them are mapped from it (`MAP_PRIVATE | MAP_FIXED` over the fresh
//!   read-write region, so only the pages the guest touches are read, and
//!   from the page cache), the rest is copied (a page a segment shares
//!   with a neighbour, or starts or ends inside of); with no file at hand
//!   ([`load`] of bytes alone, tests) everything is copied. Either way the
//!   guest sees the same bytes: the file's bytes before a segment's first
//!   byte in its first page (not claimed by an earlier segment) too, as a
//!   file mapping would show them; everything past `p_filesz` is zero
//!   (bss, including the tail of the last file page).
//! - I5: for a static PIE, the whole span (plus alignment slack) is reserved
//!   `PROT_NONE` at an address the kernel picks, segments are mapped into it
//!   with `MAP_FIXED`, and the leftover gaps (alignment slack and holes between
//!   segments) are then unmapped, as the kernel does since Linux 5.x. So the
//!   image's `regions` are exactly what is mapped.
//! - I6: position-independent images keep the order the kernel gives them
//!   relative to the vDSO and to what the guest maps later (glibc's
//!   `_dl_find_object` sorts the loaded objects by address at start-up, and
//!   the sort runs more instructions when they come in another order). The
//!   kernel maps a static PIE (or ld.so run as a program), and the
//!   interpreter of a dynamic program, top-down from the top of the mmap
//!   area before the vDSO, so they lie above it and above every library
//!   mapped later. hotlift's vDSO sits among its own libraries at the top
//!   of its mmap area, so such an image ([`Role::Interpreter`], or a
//!   program without an interpreter) goes just above the highest mapping
//!   below hotlift's stack, when it fits below [`stack_growth_floor`]; else
//!   anywhere. A dynamically linked PIE program ([`Role::Program`]) lies
//!   below everything the guest maps later, as natively (the kernel puts it
//!   at `ELF_ET_DYN_BASE`, 0x555555554000 without randomisation, far below
//!   the mmap area; glibc's `_dl_find_dso_for_object`, behind `dladdr`,
//!   walks the link maps comparing addresses, two instructions fewer per
//!   map that lies above the address). hotlift itself is at
//!   `ELF_ET_DYN_BASE`, so the program goes at the bottom of a top-down
//!   reservation of its image, `brk_room` for its brk and `mmap_room`
//!   above that: the room is given back, and the code cache and the
//!   guest's own mmap area (guest_mem I3) take it, above the program and
//!   within rel32 reach of both it and its libraries.
//! - I7: the whole file pages of a writable segment (up to
//!   [`POPULATE_MAX`]) are mapped with `MAP_POPULATE`, which makes each a
//!   private copy at once: the guest writes most of them (python's 1.3 MB
//!   of data, 271 of its 318 pages in a start-up), and a write to a page
//!   first mapped from the file by a read is a copy-on-write fault whose
//!   TLB flush interrupts every other core running the process (the
//!   monitor's): 12 ms of a 120 ms python start-up. What the guest sees
//!   is the same bytes, mapped from the same file.

#![allow(unsafe_code)]

use std::ffi::c_void;
use std::num::NonZeroUsize;
use std::ptr::NonNull;

use nix::errno::Errno;
use nix::sys::mman::{mmap_anonymous, mprotect, munmap, MapFlags, ProtFlags};

use super::plan::page_regions;
use super::stack::{
    check_request, layout_stack, parse_auxv, HostAux, AT_RSEQ_ALIGN, AT_RSEQ_FEATURE_SIZE,
};
use super::{
    page_up, ElfKind, InitialStack, Interp, LoadError, LoadPlan, LoadedImage, Prot, Region, Role,
    StackRequest, PAGE_SIZE,
};
use crate::types::GuestAddr;

/// Maps every `PT_LOAD` of `bytes` as `plan` describes, with its protections,
/// where `role` says (I6).
///
/// # Panics
/// If `plan` is not what [`super::plan()`] returns for `bytes`, apart from
/// `stack_exec`, `build_id` and `interp`, which `load` does not use: the
/// mapping code relies on the plan's invariants (`mod.rs` I2), so `load`
/// re-derives them.
pub fn load(bytes: &[u8], plan: &LoadPlan, role: Role) -> Result<LoadedImage, LoadError> {
    load_from(bytes, None, plan, role)
}

/// [`load`] of a file's bytes, mapping their whole pages from the file (I4).
pub fn load_file(
    bytes: &super::script::FileBytes,
    plan: &LoadPlan,
    role: Role,
) -> Result<LoadedImage, LoadError> {
    load_from(bytes, bytes.file(), plan, role)
}

fn load_from(
    bytes: &[u8],
    file: Option<&std::fs::File>,
    plan: &LoadPlan,
    role: Role,
) -> Result<LoadedImage, LoadError> {
    let fresh = super::plan(bytes).map(|fresh| LoadPlan {
        stack_exec: plan.stack_exec,
        build_id: plan.build_id.clone(),
        interp: plan.interp.clone(),
        ..fresh
    });
    match fresh {
        Ok(fresh) if fresh == *plan => {}
        other => panic!("load: the plan does not describe these bytes (they give {other:?})"),
    }
    let (lo, hi) = plan.span;
    let regions = page_regions(plan);

    // Exec: one guard per region. Pie: one guard for the reservation,
    // which covers the regions mapped into it.
    let (bias, guards) = match plan.kind {
        ElfKind::Exec => {
            let mut guards = Vec::with_capacity(regions.len());
            for &(start, end, _) in &regions {
                guards.push(Mapping::fixed_noreplace(start, end - start)?);
            }
            (0, guards)
        }
        ElfKind::Pie => {
            let slack = plan.align - PAGE_SIZE;
            let len = (hi - lo).saturating_add(slack);
            let reservation = match role {
                // I6: the room after the image is part of the reservation
                // (so nothing else lands there) and given back below.
                Role::Program {
                    brk_room,
                    mmap_room,
                } if plan.interp.is_some() => {
                    Mapping::reserve(len.saturating_add(brk_room).saturating_add(mmap_room))?
                }
                _ => match Mapping::reserve_above_host(len) {
                    Some(high) => high,
                    None => Mapping::reserve(len)?,
                },
            };
            let base = reservation.addr.next_multiple_of(plan.align);
            let bias = base.wrapping_sub(lo);
            for &(start, end, _) in &regions {
                // SAFETY: (I2) [start+bias, end+bias) lies inside
                // [base, base + hi - lo), which lies inside the reservation.
                unsafe { map_fixed_rw(start.wrapping_add(bias), end - start)? };
            }
            (bias, vec![reservation])
        }
    };

    copy_segments(bytes, file, plan, bias)?;
    let mut mapped = Vec::with_capacity(regions.len());
    for &(start, end, prot) in &regions {
        let (start, end) = (start.wrapping_add(bias), end.wrapping_add(bias));
        // SAFETY: the region was mapped by this call (I2) and nothing else
        // refers to it.
        unsafe { protect(start, end - start, prot)? };
        mapped.push(Region {
            start: GuestAddr(start),
            end: GuestAddr(end),
            prot,
        });
    }

    for guard in guards {
        let reservation = guard.keep();
        if plan.kind == ElfKind::Pie {
            // I5: give back the parts of the reservation no region uses.
            for (start, end) in unused_parts(reservation, &mapped) {
                // SAFETY: an unused part of our own reservation.
                unsafe { unmap(start, end - start) };
            }
        }
    }

    let last_end = plan
        .segments
        .iter()
        .filter(|s| s.memsz > 0)
        .map(|s| s.vaddr + s.memsz)
        .max()
        .unwrap_or(hi);
    Ok(LoadedImage {
        bias,
        entry: GuestAddr(plan.entry.wrapping_add(bias)),
        phdr: GuestAddr(plan.phdr_vaddr.wrapping_add(bias)),
        phent: u64::from(plan.phentsize),
        phnum: u64::from(plan.phnum),
        lo: GuestAddr(lo.wrapping_add(bias)),
        hi: GuestAddr(hi.wrapping_add(bias)),
        brk_start: GuestAddr(page_up(last_end).unwrap_or(hi).wrapping_add(bias)),
        regions: mapped,
    })
}

/// Reads and plans the program interpreter a `PT_INTERP` names (`path`; a
/// relative one is opened from the working directory, as the kernel does).
/// Every problem is [`LoadError::Interp`] around its cause: a missing file,
/// an unreadable one, anything [`super::plan()`] refuses, or an interpreter
/// that names an interpreter itself.
pub fn read_interp(path: &[u8]) -> Result<Interp, LoadError> {
    use std::os::unix::ffi::OsStrExt;
    let wrap = |error| LoadError::Interp {
        path: String::from_utf8_lossy(path).into_owned(),
        error: Box::new(error),
    };
    let path = std::path::PathBuf::from(std::ffi::OsStr::from_bytes(path));
    let refused = || std::io::Error::from_raw_os_error(libc::EACCES);
    let bytes =
        super::script::map_program(&path, refused).map_err(|e| wrap(LoadError::Unreadable(e)))?;
    let plan = super::plan(&bytes).map_err(wrap)?;
    if let Some(own) = &plan.interp {
        let own = String::from_utf8_lossy(own).into_owned();
        return Err(wrap(LoadError::InterpHasInterp(own)));
    }
    Ok(Interp { path, bytes, plan })
}

/// The parts of the reservation `(addr, len)` that no region covers, given
/// regions that are ascending, disjoint and inside it.
pub(crate) fn unused_parts((addr, len): (u64, u64), regions: &[Region]) -> Vec<(u64, u64)> {
    let mut gaps = Vec::new();
    let mut cursor = addr;
    let bounds = regions.iter().map(|r| (r.start.0, r.end.0));
    for (start, end) in bounds.chain([(addr + len, addr + len)]) {
        if start > cursor {
            gaps.push((cursor, start));
        }
        cursor = end;
    }
    gaps
}

/// Puts each segment's file bytes into the read-write mapped image (I3,
/// I4): its whole pages mapped from `file` when there is one, the rest
/// copied from `bytes`.
fn copy_segments(
    bytes: &[u8],
    file: Option<&std::fs::File>,
    plan: &LoadPlan,
    bias: u64,
) -> Result<(), LoadError> {
    let mut prev_end = 0u64;
    for s in plan.segments.iter().filter(|s| s.memsz > 0) {
        // Start at the page boundary, or where the previous segment ends if it
        // ends inside this page; only as far back as the file allows.
        let start = (s.vaddr & !(PAGE_SIZE - 1)).max(prev_end).min(s.vaddr);
        let lead = (s.vaddr - start).min(s.offset);
        prev_end = s.vaddr + s.memsz;
        if s.filesz == 0 {
            continue;
        }
        // The guest range [from, to) holds the file range [off, off + to -
        // from); in bounds: checked by `plan` (mod.rs I2), and `lead <=
        // offset`.
        let (from, to, off) = (s.vaddr - lead, s.vaddr + s.filesz, s.offset - lead);
        // Its whole pages, which no other segment shares (the previous one
        // ends at or before `from`, the next starts at or after `to`), when
        // file and memory agree on the offset within a page.
        let (first, last) = (page_up(from).unwrap_or(to), to & !(PAGE_SIZE - 1));
        let whole = match file {
            Some(f) if first < last && (from - off) % PAGE_SIZE == 0 => {
                // SAFETY: [first, last) + bias lies in the segment's pages,
                // which `load` mapped read-write in this call (I2, I3);
                // nothing refers into them yet.
                unsafe {
                    map_file_fixed(
                        f,
                        first.wrapping_add(bias),
                        last - first,
                        off + (first - from),
                        s.prot.w && last - first <= POPULATE_MAX,
                    )?
                };
                Some((first, last))
            }
            _ => None,
        };
        let copy = |a: u64, b: u64| {
            if a >= b {
                return;
            }
            let src = &bytes[(off + (a - from)) as usize..(off + (b - from)) as usize];
            // SAFETY: [a, b) + bias lies in the segment's pages, mapped
            // read-write by `load` in this call (I3); `src` is a live slice
            // of the file image, which cannot overlap a fresh anonymous
            // mapping.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    src.as_ptr(),
                    a.wrapping_add(bias) as *mut u8,
                    src.len(),
                )
            };
        };
        match whole {
            Some((first, last)) => {
                copy(from, first);
                copy(last, to);
            }
            None => copy(from, to),
        }
    }
    Ok(())
}

/// The largest writable segment whose pages are made private at once
/// (I7).
const POPULATE_MAX: u64 = 4 << 20;

/// Maps `len` bytes of `file` from `offset` over `[addr, addr + len)`,
/// private and read-write (I4), each page copied now if `populate` (I7).
///
/// # Safety
/// The range must be the loader's own, mapped in this call, with nothing
/// referring into it.
unsafe fn map_file_fixed(
    file: &std::fs::File,
    addr: u64,
    len: u64,
    offset: u64,
    populate: bool,
) -> Result<(), LoadError> {
    use std::os::fd::AsRawFd;
    let failed = |errno| LoadError::MapFailed { len, errno };
    let off = libc::off_t::try_from(offset).map_err(|_| failed(Errno::EINVAL))?;
    // SAFETY: MAP_FIXED over the caller's own range (I2).
    let p = unsafe {
        libc::mmap(
            addr as *mut c_void,
            len as usize,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_FIXED | if populate { libc::MAP_POPULATE } else { 0 },
            file.as_raw_fd(),
            off,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(failed(Errno::last()));
    }
    Ok(())
}

/// Maps the guest stack and writes the initial process stack into it (layout
/// in `stack.rs`).
pub fn build_stack(
    image: &LoadedImage,
    plan: &LoadPlan,
    req: &StackRequest,
) -> Result<InitialStack, LoadError> {
    let size = page_up(req.stack_size)
        .filter(|&s| s > 0 && s <= super::TASK_SIZE / 2)
        .ok_or(LoadError::BadStackSize(req.stack_size))?;
    check_request(req, size)?;
    let random = random_bytes()?;
    let host = host_aux();

    let prot = Prot {
        r: true,
        w: true,
        x: plan.stack_exec,
    };
    // Room to grow into below the stack, a guard page at least: held
    // `PROT_NONE`, so that nothing else lands there.
    let room = page_up(req.stack_room).map_or(size, |r| r.max(size)) + PAGE_SIZE;
    let stack = Mapping::reserve(room)?;
    let (start, top) = (stack.addr + room - size, stack.addr + room);
    // SAFETY: [start, top) lies in `stack`, reserved just now and
    // referred to by nothing else.
    unsafe {
        mmap_anonymous(
            Some(nonzero(start, size)?),
            nonzero(size, size)?,
            prot_flags(prot),
            // As growsdown.rs G1 maps what it grows (no MAP_STACK, which
            // newer kernels mark no-huge-page): the pieces merge into one
            // mapping, as the kernel's grown stack is one.
            MapFlags::MAP_PRIVATE | MapFlags::MAP_FIXED | MapFlags::MAP_GROWSDOWN,
        )
    }
    .map_err(|errno| LoadError::MapFailed { len: size, errno })?;
    let img = layout_stack(top, image, req, &host, random);
    // SAFETY: [img.sp, top) lies inside the read-write part of `stack`
    // (`check_request` bounded the image by a quarter of `size`).
    unsafe {
        std::ptr::copy_nonoverlapping(img.bytes.as_ptr(), img.sp as *mut u8, img.bytes.len())
    };
    let low = stack.addr;
    stack.keep();
    Ok(InitialStack {
        sp: GuestAddr(img.sp),
        region: Region {
            start: GuestAddr(start),
            end: GuestAddr(top),
            prot,
        },
        room: (low, start),
        auxv: img.auxv,
    })
}

/// An anonymous private mapping owned by the loader until [`Mapping::keep`];
/// unmapped on drop (I1).
#[derive(Debug)]
struct Mapping {
    addr: u64,
    len: u64,
}

impl Mapping {
    /// Anywhere the kernel likes.
    fn anonymous(len: u64, prot: ProtFlags, flags: MapFlags) -> Result<Mapping, LoadError> {
        let failed = |errno| LoadError::MapFailed { len, errno };
        let size = nonzero(len, len)?;
        // SAFETY: no address hint and no MAP_FIXED: the kernel picks fresh
        // address space, so no existing memory is affected.
        let ptr = unsafe { mmap_anonymous(None, size, prot, MapFlags::MAP_PRIVATE | flags) }
            .map_err(failed)?;
        Ok(Mapping {
            addr: ptr.as_ptr() as u64,
            len,
        })
    }

    /// A `PROT_NONE` reservation of `len` bytes anywhere (I5).
    fn reserve(len: u64) -> Result<Mapping, LoadError> {
        Mapping::anonymous(len, ProtFlags::PROT_NONE, MapFlags::MAP_NORESERVE)
    }

    /// A `PROT_NONE` reservation of `len` bytes just above the highest
    /// mapping below hotlift's stack, if it ends below the stack's growth
    /// floor (I6).
    fn reserve_above_host(len: u64) -> Option<Mapping> {
        let maps = crate::host::read_proc("/proc/self/maps").ok()?;
        let floor = stack_growth_floor()?;
        let hint = highest_end_below(&maps, floor)?;
        if hint.checked_add(len)? > floor {
            return None;
        }
        let flags = MapFlags::MAP_PRIVATE | MapFlags::MAP_NORESERVE | MapFlags::MAP_FIXED_NOREPLACE;
        // SAFETY: MAP_FIXED_NOREPLACE never replaces an existing mapping.
        let ptr = unsafe {
            mmap_anonymous(
                Some(nonzero(hint, len).ok()?),
                nonzero(len, len).ok()?,
                ProtFlags::PROT_NONE,
                flags,
            )
        }
        .ok()?;
        let got = Mapping {
            addr: ptr.as_ptr() as u64,
            len,
        };
        (got.addr == hint).then_some(got)
    }

    /// Read-write pages at exactly `addr`, failing with `OverlapsHost` if
    /// anything is mapped there (I2).
    fn fixed_noreplace(addr: u64, len: u64) -> Result<Mapping, LoadError> {
        let overlaps = LoadError::OverlapsHost {
            lo: addr,
            hi: addr.saturating_add(len),
        };
        let hint = nonzero(addr, len)?;
        let size = nonzero(len, len)?;
        let flags = MapFlags::MAP_PRIVATE | MapFlags::MAP_FIXED_NOREPLACE;
        // SAFETY: MAP_FIXED_NOREPLACE never replaces an existing mapping.
        match unsafe { mmap_anonymous(Some(hint), size, rw(), flags) } {
            Ok(ptr) if ptr.as_ptr() as u64 == addr => Ok(Mapping { addr, len }),
            Ok(ptr) => {
                // A kernel without MAP_FIXED_NOREPLACE took it as a hint.
                drop(Mapping {
                    addr: ptr.as_ptr() as u64,
                    len,
                });
                Err(overlaps)
            }
            Err(Errno::EEXIST) => Err(overlaps),
            Err(errno) => Err(LoadError::MapFailed { len, errno }),
        }
    }

    /// Gives up ownership: the pages stay mapped. Returns `(addr, len)`.
    fn keep(self) -> (u64, u64) {
        let kept = (self.addr, self.len);
        std::mem::forget(self);
        kept
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `self` owns exactly these pages (I1); nothing refers to them
        // once the loader gives up on them.
        unsafe { unmap(self.addr, self.len) };
    }
}

/// Read-write pages at `addr`, replacing whatever is there.
///
/// # Safety
/// `[addr, addr + len)` must lie inside a reservation owned by the caller (I2).
unsafe fn map_fixed_rw(addr: u64, len: u64) -> Result<(), LoadError> {
    let failed = |errno| LoadError::MapFailed { len, errno };
    let (hint, size) = (nonzero(addr, len)?, nonzero(len, len)?);
    // SAFETY: the caller guarantees the range is its own reservation.
    unsafe {
        mmap_anonymous(
            Some(hint),
            size,
            rw(),
            MapFlags::MAP_PRIVATE | MapFlags::MAP_FIXED,
        )
    }
    .map_err(failed)?;
    Ok(())
}

/// Sets the protections of pages the loader mapped.
///
/// # Safety
/// `[addr, addr + len)` must be mapped by the loader, with no Rust references
/// into it that the new protections would invalidate.
unsafe fn protect(addr: u64, len: u64, prot: Prot) -> Result<(), LoadError> {
    let failed = |errno| LoadError::ProtectFailed { prot, len, errno };
    let ptr = NonNull::new(addr as *mut c_void).ok_or(failed(Errno::EINVAL))?;
    // SAFETY: the caller guarantees the range is ours and unreferenced.
    unsafe { mprotect(ptr, len as usize, prot_flags(prot)) }.map_err(failed)
}

/// Unmaps pages the loader mapped. Errors are impossible for a page-aligned
/// range of our own and are ignored.
///
/// # Safety
/// `[addr, addr + len)` must be owned by the loader and unreferenced.
unsafe fn unmap(addr: u64, len: u64) {
    if let (Some(ptr), true) = (NonNull::new(addr as *mut c_void), len > 0) {
        // SAFETY: the caller guarantees the range is ours and unreferenced.
        let _ = unsafe { munmap(ptr, len as usize) };
    }
}

/// The lowest address hotlift's own stack may grow down to (its `[stack]`
/// mapping's end less `RLIMIT_STACK`), less 1 MiB for the kernel's
/// stack guard gap and 16 MiB of margin: what hotlift places near a guest
/// image must end below it. None without `/proc` or when the stack is
/// unlimited (the kernel then lays out mmaps bottom-up).
pub fn stack_growth_floor() -> Option<u64> {
    let maps = crate::host::read_proc("/proc/self/maps").ok()?;
    let (_, stack_end) = maps
        .lines()
        .filter(|l| l.ends_with("[stack]"))
        .find_map(crate::host::maps_range)?;
    let limit = rlimit_stack()?.max(8 << 20);
    stack_end.checked_sub(limit + (1 << 20) + (16 << 20))
}

/// The soft `RLIMIT_STACK`, None when unlimited.
fn rlimit_stack() -> Option<u64> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `r` is a valid out pointer.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_STACK, &mut r) } == 0;
    (ok && r.rlim_cur != libc::RLIM_INFINITY).then_some(r.rlim_cur)
}

/// The highest end of a mapping in `maps` (`/proc/self/maps` text) that
/// lies wholly below `limit`.
pub(crate) fn highest_end_below(maps: &str, limit: u64) -> Option<u64> {
    maps.lines()
        .filter_map(crate::host::maps_range)
        .filter(|&(_, end)| end <= limit)
        .map(|(_, end)| end)
        .max()
}

/// `x` as an mmap address or length; a zero or oversized one fails the
/// mapping of `len` bytes with `EINVAL`, as mmap itself would.
fn nonzero(x: u64, len: u64) -> Result<NonZeroUsize, LoadError> {
    usize::try_from(x)
        .ok()
        .and_then(NonZeroUsize::new)
        .ok_or(LoadError::MapFailed {
            len,
            errno: Errno::EINVAL,
        })
}

fn rw() -> ProtFlags {
    ProtFlags::PROT_READ | ProtFlags::PROT_WRITE
}

fn prot_flags(p: Prot) -> ProtFlags {
    let mut flags = ProtFlags::PROT_NONE;
    if p.r {
        flags |= ProtFlags::PROT_READ;
    }
    if p.w {
        flags |= ProtFlags::PROT_WRITE;
    }
    if p.x {
        flags |= ProtFlags::PROT_EXEC;
    }
    flags
}

/// 16 fresh random bytes for `AT_RANDOM`.
fn random_bytes() -> Result<[u8; 16], LoadError> {
    let mut buf = [0u8; 16];
    let mut filled = 0;
    while filled < buf.len() {
        let rest = &mut buf[filled..];
        // SAFETY: `rest` is a live, writable buffer of `rest.len()` bytes.
        let n = unsafe { libc::getrandom(rest.as_mut_ptr().cast(), rest.len(), 0) };
        match Errno::result(n) {
            Ok(n) => filled += n as usize,
            Err(Errno::EINTR) => {}
            Err(errno) => return Err(LoadError::RandomFailed(errno)),
        }
    }
    Ok(buf)
}

/// hotlift's own values for the auxv entries that describe the host: what
/// the kernel gave hotlift, read from `/proc/self/auxv`. glibc's `getauxval`
/// is only the fallback (no `/proc`): on x86-64 it answers `AT_HWCAP` with
/// glibc's own rewritten value (`HWCAP_X86_64`, 2), not the kernel's CPUID
/// bits.
fn host_aux() -> HostAux {
    let saved = std::fs::read("/proc/self/auxv")
        .map(|b| parse_auxv(&b))
        .unwrap_or_default();
    let aux = |key: u64| match saved.iter().find(|&&(k, _)| k == key) {
        Some(&(_, value)) => value,
        // SAFETY: getauxval only reads the auxiliary vector saved at startup.
        None if saved.is_empty() => unsafe { libc::getauxval(key) },
        None => 0,
    };
    // SAFETY: the get*id calls have no preconditions and cannot fail.
    let (uid, euid, gid, egid) = unsafe {
        (
            libc::getuid(),
            libc::geteuid(),
            libc::getgid(),
            libc::getegid(),
        )
    };
    HostAux {
        sysinfo_ehdr: aux(libc::AT_SYSINFO_EHDR),
        minsigstksz: aux(libc::AT_MINSIGSTKSZ),
        hwcap: aux(libc::AT_HWCAP),
        hwcap2: aux(libc::AT_HWCAP2),
        clktck: aux(libc::AT_CLKTCK),
        secure: aux(libc::AT_SECURE),
        rseq: saved
            .iter()
            .any(|&(k, _)| k == AT_RSEQ_FEATURE_SIZE)
            .then(|| (aux(AT_RSEQ_FEATURE_SIZE), aux(AT_RSEQ_ALIGN))),
        uid: uid.into(),
        euid: euid.into(),
        gid: gid.into(),
        egid: egid.into(),
    }
}

/// Test-only doors into this file's `unsafe`, so the tests in
/// `map_tests.rs` need none.
#[cfg(test)]
pub(crate) mod test_support {
    use super::*;

    /// Unmaps `[addr, addr + len)`, which the calling test got from the
    /// loader and no longer uses.
    pub(crate) fn unmap_for_test(addr: u64, len: u64) {
        // SAFETY: the test owns the range and holds no references into it.
        unsafe { unmap(addr, len) };
    }

    /// Maps one read-write page at exactly `addr`, or fails if anything is
    /// there; unmapped when dropped.
    pub(crate) fn block_page(addr: u64) -> Result<impl Drop, LoadError> {
        Mapping::fixed_noreplace(addr, PAGE_SIZE)
    }

    /// Runs the loaded guest natively in a forked child, as the kernel would
    /// start it (`rsp = sp`, `rdx = 0`, jump to `entry`), with its standard
    /// output captured. Returns how it ended and what it printed.
    pub(crate) fn run_natively(sp: u64, entry: u64) -> (nix::sys::wait::WaitStatus, String) {
        use nix::unistd::{fork, ForkResult};
        use std::io::Read;
        use std::os::fd::AsRawFd;

        let (mut reader, writer) = std::io::pipe().unwrap();
        let out_fd = writer.as_raw_fd();
        // SAFETY: the child only calls the async-signal-safe dup2 and then
        // jumps into the guest, never returning to Rust code.
        match unsafe { fork() }.unwrap() {
            ForkResult::Child => {
                // SAFETY: `out_fd` is open in the child (inherited) and 1 is
                // a valid target descriptor.
                unsafe { libc::dup2(out_fd, 1) };
                // SAFETY: `sp` is the guest's initial stack and `entry` its
                // entry point, both mapped by the loader before the fork; the
                // guest takes over the child and ends it with exit_group.
                unsafe {
                    std::arch::asm!(
                        "mov rsp, rsi",
                        "xor edx, edx",
                        "jmp rax",
                        in("rsi") sp,
                        in("rax") entry,
                        options(noreturn)
                    )
                }
            }
            ForkResult::Parent { child } => {
                drop(writer);
                let mut out = String::new();
                reader.read_to_string(&mut out).unwrap();
                (nix::sys::wait::waitpid(child, None).unwrap(), out)
            }
        }
    }
}
