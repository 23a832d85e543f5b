//! [`mapped_layout`]: which ELF image a file mapping the guest made belongs
//! to, and where that image lies, from the file's headers. ld.so maps each
//! library itself with `mmap`; hotlift sees one executable mapping of the
//! file and needs the whole image (its lowest and highest address, its load
//! bias for symbols, its build id) to name the library in profiles.
//!
//! Invariants:
//! - I1: pure and total: the file is read only through the `read` closure,
//!   every value from it is checked before use (checked arithmetic), at
//!   most the ELF header, the program header table (at most 64 KiB) and
//!   the first note segments are read, and malformed input gives `None`,
//!   never a panic.
//! - I2: the layout is the one ld.so (`_dl_map_segments`) gives the file:
//!   each `PT_LOAD` is mapped from its page-aligned file offset at its
//!   page-aligned address plus one load bias, so the mapping at `addr` of
//!   file offset `offset` fixes the bias, and the image spans its
//!   `PT_LOAD`s' pages.

use goblin::container::Endian;
use goblin::elf::header::{EI_CLASS, EI_DATA, ELFCLASS64, ELFDATA2LSB, ELFMAG, EM_X86_64, SELFMAG};
use goblin::elf::program_header::{PT_LOAD, PT_NOTE};
use goblin::elf64::header::{Header, SIZEOF_EHDR};
use goblin::elf64::program_header::{ProgramHeader, SIZEOF_PHDR};

use super::plan::notes_build_id;
use super::{page_down, page_up};

/// The biggest program header table read (the kernel's limit too).
const MAX_PHDR_TABLE: usize = 65536;

/// How many bytes of a note segment are read for the build id.
const MAX_NOTES: u64 = 65536;

/// Where an ELF image mapped by the guest lies (I2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MappedLayout {
    /// What to add to the file's addresses (symbol values).
    pub bias: u64,
    /// Page-aligned `[lo, hi)` of the image's `PT_LOAD`s, with the bias.
    pub lo: u64,
    pub hi: u64,
    pub build_id: Option<Vec<u8>>,
}

/// The layout of the image whose file offset `offset` is mapped at `addr`,
/// if the file is an x86-64 ELF file with a `PT_LOAD` there. `read(at, len)`
/// returns exactly `len` bytes of the file at `at`, or `None` (I1).
pub fn mapped_layout(
    read: &dyn Fn(u64, usize) -> Option<Vec<u8>>,
    offset: u64,
    addr: u64,
) -> Option<MappedLayout> {
    let ident = read(0, SIZEOF_EHDR)?;
    if ident.get(..SELFMAG)? != ELFMAG
        || ident[EI_CLASS] != ELFCLASS64
        || ident[EI_DATA] != ELFDATA2LSB
    {
        return None;
    }
    let header = Header::parse(&ident).ok()?;
    if header.e_machine != EM_X86_64 || usize::from(header.e_phentsize) != SIZEOF_PHDR {
        return None;
    }
    let count = usize::from(header.e_phnum);
    let table_len = count * SIZEOF_PHDR;
    if count == 0 || table_len > MAX_PHDR_TABLE {
        return None;
    }
    let table = read(header.e_phoff, table_len)?;
    let phdrs = ProgramHeader::parse(&table, 0, count, Endian::Little).ok()?;
    let loads: Vec<&ProgramHeader> = phdrs
        .iter()
        .filter(|ph| ph.p_type == PT_LOAD && ph.p_memsz > 0)
        .collect();
    // The segment mapped at `addr`: the one whose page-aligned file range
    // starts at or before `offset` and holds it.
    let seg = loads.iter().find(|ph| {
        let start = page_down(ph.p_offset);
        let end = ph.p_offset.checked_add(ph.p_filesz.max(1));
        start <= offset && end.is_some_and(|end| offset < end)
    })?;
    let vaddr = page_down(seg.p_vaddr).checked_add(offset - page_down(seg.p_offset))?;
    let bias = addr.wrapping_sub(vaddr);
    let lo = loads.iter().map(|ph| page_down(ph.p_vaddr)).min()?;
    let hi = loads
        .iter()
        .map(|ph| ph.p_vaddr.checked_add(ph.p_memsz).and_then(page_up))
        .collect::<Option<Vec<u64>>>()?
        .into_iter()
        .max()?;
    let build_id = phdrs
        .iter()
        .filter(|ph| ph.p_type == PT_NOTE)
        .take(4)
        .find_map(|ph| {
            let len = usize::try_from(ph.p_filesz.min(MAX_NOTES)).ok()?;
            notes_build_id(&read(ph.p_offset, len)?, ph.p_align)
        });
    Some(MappedLayout {
        bias,
        lo: lo.wrapping_add(bias),
        hi: hi.wrapping_add(bias),
        build_id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loader::testelf::small_elf;

    fn reader(bytes: Vec<u8>) -> impl Fn(u64, usize) -> Option<Vec<u8>> {
        move |at, len| {
            let start = usize::try_from(at).ok()?;
            bytes
                .get(start..start.checked_add(len)?)
                .map(<[u8]>::to_vec)
        }
    }

    #[test]
    fn text_mapping_gives_the_whole_image() {
        // small_elf(PIE): text at file 0 / vaddr 0, data at file 0x1000 /
        // vaddr 0x2000, bss to 0x5000.
        let read = reader(small_elf(false, 0));
        let l = mapped_layout(&read, 0, 0x7f00_0000_0000).unwrap();
        assert_eq!(l.bias, 0x7f00_0000_0000);
        assert_eq!((l.lo, l.hi), (0x7f00_0000_0000, 0x7f00_0000_5000));
        assert!(l.build_id.is_some());
        // The data segment's mapping names the same image.
        let d = mapped_layout(&read, 0x1000, 0x7f00_0000_2000).unwrap();
        assert_eq!(d, l);
    }

    #[test]
    fn not_elf_or_not_mapped_gives_none() {
        let read = reader(b"#!/bin/sh\necho hi\n".repeat(10));
        assert_eq!(mapped_layout(&read, 0, 0x1000), None);
        let read = reader(small_elf(false, 0));
        assert_eq!(mapped_layout(&read, 0x9000, 0x1000), None);
        let read = reader(small_elf(false, 0)[..100].to_vec());
        assert_eq!(mapped_layout(&read, 0, 0x1000), None);
    }

    #[test]
    fn any_truncation_is_safe() {
        let full = small_elf(true, 0x40_0000);
        for cut in 0..full.len().min(0x400) {
            let read = reader(full[..cut].to_vec());
            let _ = mapped_layout(&read, 0, 0x40_0000);
        }
    }
}
