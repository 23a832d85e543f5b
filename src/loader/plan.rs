//! [`plan()`]: parse and validate an ELF file into a [`LoadPlan`], touching no
//! memory but the input.
//!
//! Invariants:
//! - I1: never panics, whatever the input: every offset and size read from the
//!   file is checked (checked arithmetic, `get`) before it is used, and goblin
//!   only parses slices already known to be long enough.
//! - I2: allocation and work are bounded by the input: the program header
//!   table is bounds-checked against the file (and is at most 64 KiB, the
//!   kernel's limit) before goblin allocates it; the build id is copied from
//!   the file; at most [`MAX_SCANNED`] bytes of the first `PT_DYNAMIC` and of
//!   each of the first [`MAX_NOTE_SEGMENTS`] `PT_NOTE`s are looked at.
//! - I3: checks run in a fixed order and the first failure is reported:
//!   identity (magic, class, data, machine, type), the program header table,
//!   the first `PT_INTERP` (its path, as the kernel reads it) or, without
//!   one, `DT_NEEDED` in the first `PT_DYNAMIC` (shared libraries nobody
//!   would load), each `PT_LOAD` in file order, then whole-image checks
//!   (overlap, order, address range, entry).
//! - I4: a plan returned satisfies the loader's I2 (see `mod.rs`).
//! - I5: two segments may share a page (after page rounding) as long as their
//!   byte ranges do not overlap; [`page_regions`] gives the shared page the
//!   union of their protections.
//!
//! The kernel is lenient where hotlift is not: it maps segments past the end
//! of the file (SIGBUS on access) and lets overlapping segments overwrite each
//! other. Those files are rejected here.

use goblin::container::Endian;
use goblin::elf::dynamic::{DT_NEEDED, DT_NULL};
use goblin::elf::header::{
    EI_CLASS, EI_DATA, ELFCLASS32, ELFCLASS64, ELFDATA2LSB, ELFDATA2MSB, ELFMAG, EM_X86_64, ET_DYN,
    ET_EXEC, SELFMAG,
};
use goblin::elf::note::NT_GNU_BUILD_ID;
use goblin::elf::program_header::{
    PF_X, PT_DYNAMIC, PT_GNU_STACK, PT_INTERP, PT_LOAD, PT_NOTE, PT_PHDR,
};
use goblin::elf64::header::{Header, SIZEOF_EHDR};
use goblin::elf64::program_header::{ProgramHeader, SIZEOF_PHDR};

use super::{
    page_down, page_up, ElfKind, LoadError, LoadPlan, Prot, Segment, MMAP_MIN_ADDR, PAGE_SIZE,
    TASK_SIZE,
};

/// The kernel refuses program header tables larger than this
/// (`load_elf_phdrs`): 1170 entries. Kernels before mid-2025 also capped the
/// table at a page (73 entries); hotlift follows the newer rule.
const MAX_PHDR_TABLE: usize = 65536;

/// How much of a `PT_DYNAMIC` or `PT_NOTE` is searched (I2). Real ones are a
/// few hundred bytes.
const MAX_SCANNED: usize = 65536;

/// How many `PT_NOTE`s are searched for the build id (I2).
const MAX_NOTE_SEGMENTS: usize = 16;

/// The longest `PT_INTERP` the kernel reads (`PATH_MAX`, NUL included).
const PATH_MAX: u64 = 4096;

/// Parses and validates `bytes` as a Linux x86-64 executable (static, or
/// naming its program interpreter). Pure, and never panics (I1).
pub fn plan(bytes: &[u8]) -> Result<LoadPlan, LoadError> {
    let header = check_identity(bytes)?;
    let phdrs = read_program_headers(bytes, &header)?;
    let interp = read_interp(bytes, &phdrs)?;
    if interp.is_none() {
        check_no_needed(bytes, &phdrs)?;
    }

    let mut segments = Vec::new();
    // Index in the program header table of each entry of `segments`, for
    // messages.
    let mut indices = Vec::new();
    let mut pt_phdr = None;
    let mut stack_exec = false;
    let mut build_id = None;
    let mut align = PAGE_SIZE;
    let mut notes_left = MAX_NOTE_SEGMENTS;
    for (index, ph) in phdrs.iter().enumerate() {
        match ph.p_type {
            PT_LOAD => {
                segments.push(check_load(bytes, index, ph)?);
                indices.push(index);
                if ph.p_align.is_power_of_two() {
                    align = align.max(ph.p_align);
                }
            }
            PT_PHDR => {
                pt_phdr.get_or_insert(ph.p_vaddr);
            }
            PT_GNU_STACK => stack_exec = ph.p_flags & PF_X != 0,
            PT_NOTE if build_id.is_none() && notes_left > 0 => {
                notes_left -= 1;
                build_id = find_build_id(bytes, ph);
            }
            _ => {}
        }
    }

    let kind = if header.e_type == ET_EXEC {
        ElfKind::Exec
    } else {
        ElfKind::Pie
    };
    let span = check_layout(kind, &segments, &indices)?;
    check_entry(header.e_entry, &segments)?;
    let phdr_vaddr = pt_phdr
        .or_else(|| phdr_from_loads(header.e_phoff, &segments))
        .unwrap_or(0);

    Ok(LoadPlan {
        kind,
        entry: header.e_entry,
        segments,
        phoff: header.e_phoff,
        phentsize: header.e_phentsize,
        phnum: header.e_phnum,
        phdr_vaddr,
        stack_exec,
        span,
        align,
        build_id,
        interp,
    })
}

/// Magic, class, data encoding, machine and type; returns the parsed header.
fn check_identity(bytes: &[u8]) -> Result<Header, LoadError> {
    if bytes.is_empty() {
        return Err(LoadError::Empty);
    }
    if let Some(line) = bytes.strip_prefix(b"#!") {
        // The kernel's binfmt_script would run the interpreter named here.
        let line = line.split(|&b| b == b'\n').next().unwrap_or_default();
        let line = &line[..line.len().min(128)];
        return Err(LoadError::Script(
            String::from_utf8_lossy(line).trim().to_string(),
        ));
    }
    let n = bytes.len().min(SELFMAG);
    if bytes[..n] != ELFMAG[..n] {
        return Err(LoadError::BadMagic);
    }
    if bytes.len() < SIZEOF_EHDR {
        return Err(LoadError::TruncatedHeader { len: bytes.len() });
    }
    match bytes[EI_CLASS] {
        ELFCLASS64 => {}
        ELFCLASS32 => return Err(LoadError::Elf32),
        class => return Err(LoadError::BadClass(class)),
    }
    match bytes[EI_DATA] {
        ELFDATA2LSB => {}
        ELFDATA2MSB => return Err(LoadError::BigEndian),
        data => return Err(LoadError::BadDataEncoding(data)),
    }
    // Cannot fail: the header is complete and little-endian (checked above).
    let header =
        Header::parse(bytes).map_err(|_| LoadError::TruncatedHeader { len: bytes.len() })?;
    if header.e_machine != EM_X86_64 {
        return Err(LoadError::WrongMachine {
            machine: header.e_machine,
        });
    }
    if header.e_type != ET_EXEC && header.e_type != ET_DYN {
        return Err(LoadError::WrongType {
            e_type: header.e_type,
        });
    }
    Ok(header)
}

/// Bounds-checks the program header table, then lets goblin read it (I2).
fn read_program_headers(bytes: &[u8], header: &Header) -> Result<Vec<ProgramHeader>, LoadError> {
    if usize::from(header.e_phentsize) != SIZEOF_PHDR {
        return Err(LoadError::BadPhentsize(header.e_phentsize));
    }
    if header.e_phnum == 0 {
        return Err(LoadError::NoLoadSegments);
    }
    let count = usize::from(header.e_phnum);
    let table_len = count * SIZEOF_PHDR; // at most 65535 * 56: no overflow
    if table_len > MAX_PHDR_TABLE {
        return Err(LoadError::TooManyProgramHeaders(header.e_phnum));
    }
    let out_of_bounds = || LoadError::ProgramHeadersOutOfBounds {
        phoff: header.e_phoff,
        phnum: header.e_phnum,
    };
    let table = usize::try_from(header.e_phoff)
        .ok()
        .and_then(|start| bytes.get(start..start.checked_add(table_len)?))
        .ok_or_else(out_of_bounds)?;
    ProgramHeader::parse(table, 0, count, Endian::Little).map_err(|_| out_of_bounds())
}

/// The path in the first `PT_INTERP`, read as the kernel reads it: the
/// segment must lie in the file, be 2 to `PATH_MAX` bytes long and end with
/// a NUL; the path is what comes before the first NUL.
fn read_interp(bytes: &[u8], phdrs: &[ProgramHeader]) -> Result<Option<Vec<u8>>, LoadError> {
    let Some(ph) = phdrs.iter().find(|ph| ph.p_type == PT_INTERP) else {
        return Ok(None);
    };
    let bad = || LoadError::BadInterpPath {
        offset: ph.p_offset,
        filesz: ph.p_filesz,
    };
    if !(2..=PATH_MAX).contains(&ph.p_filesz) {
        return Err(bad());
    }
    let raw = file_range(bytes, ph.p_offset, ph.p_filesz).ok_or_else(bad)?;
    let Some((&0, path)) = raw.split_last() else {
        return Err(bad());
    };
    let path = path.split(|&b| b == 0).next().unwrap_or_default();
    if path.is_empty() {
        return Err(bad());
    }
    Ok(Some(path.to_vec()))
}

/// Without a `PT_INTERP`, a first `PT_DYNAMIC` (the one ld.so would use)
/// that names a shared library (`DT_NEEDED`) is refused: nothing would load
/// the library. A static PIE has a `PT_DYNAMIC` too, but only for its own
/// relocations, and so has ld.so itself.
fn check_no_needed(bytes: &[u8], phdrs: &[ProgramHeader]) -> Result<(), LoadError> {
    if let Some(ph) = phdrs.iter().find(|ph| ph.p_type == PT_DYNAMIC) {
        let entries = file_range(bytes, ph.p_offset, ph.p_filesz).unwrap_or(&[]);
        let entries = &entries[..entries.len().min(MAX_SCANNED)];
        for entry in entries.chunks_exact(16) {
            let tag = read_u64(entry, 0).unwrap_or(DT_NULL);
            if tag == DT_NULL {
                break;
            }
            if tag == DT_NEEDED {
                return Err(LoadError::NeededWithoutInterp);
            }
        }
    }
    Ok(())
}

/// Checks one `PT_LOAD` on its own.
fn check_load(bytes: &[u8], index: usize, ph: &ProgramHeader) -> Result<Segment, LoadError> {
    if ph.p_filesz > ph.p_memsz {
        return Err(LoadError::FileszExceedsMemsz {
            index,
            filesz: ph.p_filesz,
            memsz: ph.p_memsz,
        });
    }
    // A segment with nothing in the file may have any offset: nothing is read.
    if ph.p_filesz > 0 && file_range(bytes, ph.p_offset, ph.p_filesz).is_none() {
        return Err(LoadError::SegmentBeyondFile {
            index,
            offset: ph.p_offset,
            filesz: ph.p_filesz,
            len: bytes.len(),
        });
    }
    if ph.p_align > 1 && ph.p_vaddr % ph.p_align != ph.p_offset % ph.p_align {
        return Err(LoadError::Misaligned {
            index,
            vaddr: ph.p_vaddr,
            offset: ph.p_offset,
            align: ph.p_align,
        });
    }
    // The end of the segment, rounded up to a page, must be representable.
    if ph
        .p_vaddr
        .checked_add(ph.p_memsz)
        .and_then(page_up)
        .is_none()
    {
        return Err(LoadError::AddressOverflow {
            index,
            vaddr: ph.p_vaddr,
            memsz: ph.p_memsz,
        });
    }
    Ok(Segment {
        vaddr: ph.p_vaddr,
        memsz: ph.p_memsz,
        filesz: ph.p_filesz,
        offset: ph.p_offset,
        prot: Prot::from_flags(ph.p_flags),
    })
}

/// Whole-image checks on the non-empty segments: no byte-wise overlap,
/// ascending order, address range. Returns the page-aligned span.
fn check_layout(
    kind: ElfKind,
    segments: &[Segment],
    indices: &[usize],
) -> Result<(u64, u64), LoadError> {
    // (vaddr, end, phdr index) of each non-empty segment, in file order. The
    // ends cannot overflow (checked by `check_load`).
    let live: Vec<(u64, u64, usize)> = segments
        .iter()
        .zip(indices)
        .filter(|(s, _)| s.memsz > 0)
        .map(|(s, &i)| (s.vaddr, s.vaddr + s.memsz, i))
        .collect();
    if live.is_empty() {
        return Err(LoadError::NoLoadSegments);
    }

    // Overlap first (the more specific complaint), then order.
    let mut sorted = live.clone();
    sorted.sort_unstable();
    for pair in sorted.windows(2) {
        let ((_, a_end, a), (b_start, _, b)) = (pair[0], pair[1]);
        if a_end > b_start {
            return Err(LoadError::OverlappingSegments {
                first: a.min(b),
                second: a.max(b),
            });
        }
    }
    for pair in live.windows(2) {
        if pair[1].0 < pair[0].0 {
            return Err(LoadError::SegmentsOutOfOrder { index: pair[1].2 });
        }
    }

    // Neither rounding can overflow (checked by `check_load`).
    let lo = page_down(live[0].0);
    let hi = page_up(live[live.len() - 1].1).unwrap_or(u64::MAX);
    match kind {
        ElfKind::Exec => {
            for &(start, end, index) in &live {
                let (lo, hi) = (page_down(start), page_up(end).unwrap_or(u64::MAX));
                if lo < MMAP_MIN_ADDR || hi > TASK_SIZE {
                    return Err(LoadError::SegmentOutOfRange { index, lo, hi });
                }
            }
        }
        ElfKind::Pie => {
            if hi - lo > TASK_SIZE - MMAP_MIN_ADDR {
                return Err(LoadError::SpanTooLarge { size: hi - lo });
            }
        }
    }
    Ok((lo, hi))
}

/// The entry point must lie inside the memory image of an executable segment.
fn check_entry(entry: u64, segments: &[Segment]) -> Result<(), LoadError> {
    let inside = |s: &Segment| s.prot.x && entry >= s.vaddr && entry - s.vaddr < s.memsz;
    if segments.iter().any(inside) {
        Ok(())
    } else {
        Err(LoadError::EntryNotExecutable { entry })
    }
}

/// Where the program headers are in memory when there is no `PT_PHDR`: inside
/// the `PT_LOAD` whose file contents cover `e_phoff` (the kernel's rule since
/// Linux 5.18).
fn phdr_from_loads(phoff: u64, segments: &[Segment]) -> Option<u64> {
    segments
        .iter()
        .find(|s| s.offset <= phoff && phoff - s.offset < s.filesz)
        .map(|s| s.vaddr.wrapping_add(phoff - s.offset))
}

/// The descriptor of the first `NT_GNU_BUILD_ID` note named "GNU" in a
/// `PT_NOTE`. A note segment outside the file, or a truncated note, ends the
/// search (the kernel ignores notes as well).
fn find_build_id(bytes: &[u8], ph: &ProgramHeader) -> Option<Vec<u8>> {
    let data = file_range(bytes, ph.p_offset, ph.p_filesz)?;
    notes_build_id(data, ph.p_align)
}

/// The descriptor of the first `NT_GNU_BUILD_ID` note named "GNU" in the
/// contents of a `PT_NOTE` whose `p_align` is `p_align` (at most
/// [`MAX_SCANNED`] bytes are looked at). Never panics.
pub(crate) fn notes_build_id(data: &[u8], p_align: u64) -> Option<Vec<u8>> {
    let data = &data[..data.len().min(MAX_SCANNED)];
    // Notes are 4-byte aligned, except in 8-aligned note segments (gABI).
    let align = if p_align == 8 { 8 } else { 4 };
    let mut pos = 0usize;
    while data.len().saturating_sub(pos) >= 12 {
        let namesz = read_u32(data, pos)?;
        let descsz = read_u32(data, pos + 4)?;
        let n_type = read_u32(data, pos + 8)?;
        let name_start = pos + 12;
        let name_end = name_start.checked_add(usize::try_from(namesz).ok()?)?;
        let desc_start = align_up(name_end, align)?;
        let desc_end = desc_start.checked_add(usize::try_from(descsz).ok()?)?;
        let name = data.get(name_start..name_end)?;
        let desc = data.get(desc_start..desc_end)?;
        if n_type == NT_GNU_BUILD_ID && name == b"GNU\0" {
            return Some(desc.to_vec());
        }
        pos = align_up(desc_end, align)?;
    }
    None
}

/// The page-aligned regions the non-empty segments occupy, ascending and
/// disjoint, with their protections (unrelocated). A page shared by segments
/// gets the union of their protections (I5); adjacent regions with equal
/// protections are merged. Needs a plan that satisfies I4.
pub(crate) fn page_regions(plan: &LoadPlan) -> Vec<(u64, u64, Prot)> {
    let mut regions: Vec<(u64, u64, Prot)> = Vec::new();
    for s in plan.segments.iter().filter(|s| s.memsz > 0) {
        let mut lo = page_down(s.vaddr);
        let hi = page_up(s.vaddr + s.memsz).unwrap_or(u64::MAX);
        if let Some(last) = regions.last_mut() {
            // Segments are ascending and byte-disjoint, so they can only share
            // the last page of the previous region.
            if last.1 > lo {
                if last.1 - last.0 > PAGE_SIZE {
                    let shared = (last.1 - PAGE_SIZE, last.1, last.2.union(s.prot));
                    last.1 -= PAGE_SIZE;
                    regions.push(shared);
                } else {
                    last.2 = last.2.union(s.prot);
                }
                lo += PAGE_SIZE;
            }
        }
        if lo < hi {
            regions.push((lo, hi, s.prot));
        }
    }
    regions.dedup_by(|next, prev| {
        let merge = prev.1 == next.0 && prev.2 == next.2;
        if merge {
            prev.1 = next.1;
        }
        merge
    });
    regions
}

/// `bytes[offset..offset + len]`, if it lies inside the file.
fn file_range(bytes: &[u8], offset: u64, len: u64) -> Option<&[u8]> {
    let start = usize::try_from(offset).ok()?;
    let end = start.checked_add(usize::try_from(len).ok()?)?;
    bytes.get(start..end)
}

fn read_u32(data: &[u8], at: usize) -> Option<u32> {
    let b = data.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes(b.try_into().ok()?))
}

fn read_u64(data: &[u8], at: usize) -> Option<u64> {
    let b = data.get(at..at.checked_add(8)?)?;
    Some(u64::from_le_bytes(b.try_into().ok()?))
}

fn align_up(x: usize, align: usize) -> Option<usize> {
    Some(x.checked_add(align - 1)? & !(align - 1))
}
