//! Where each function is declared (`DW_AT_decl_file`, `DW_AT_decl_line`
//! of its `DW_TAG_subprogram`), by its entry's link-time address: the line
//! an lcov `FN:` record and a Cobertura method give, as gcov's do. The
//! line table's row at a function's entry is often its first statement
//! instead (an optimised leaf has no prologue to carry the opening line).
//!
//! I1: a function defined by reference (`DW_AT_specification` of a C++
//!     member, `DW_AT_abstract_origin` of an out-of-line copy of an inline
//!     function) has the first line and the first file found along them
//!     (a member defined out of its class: its own line, its
//!     declaration's file); references are followed
//!     within a unit, across units, and into a dwz supplementary file
//!     (`DW_FORM_GNU_ref_alt`), at most [`HOPS`] of them.
//! I2: nothing here fails: sections that cannot be read (compressed ones
//!     included) give no lines, and callers keep the line table's.

use std::collections::HashMap;
use std::path::Path;

use gimli::{AttributeValue, DebuggingInformationEntry, EndianSlice, LittleEndian, Unit};
use goblin::elf::section_header::{SHF_COMPRESSED, SHT_NOBITS};
use goblin::elf::Elf;

type R<'a> = EndianSlice<'a, LittleEndian>;

/// References followed from a function to its declaration (I1).
const HOPS: usize = 4;

/// A function's declaration: its file as the unit's line program names it
/// (often without directories), and line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decl {
    pub file: String,
    pub line: u32,
}

/// The declarations of the functions of the ELF file `path` (its own
/// DWARF or a debug file's), with `sup` its dwz supplementary file, by
/// entry address (I2: empty when they cannot be read).
pub fn decl_lines(path: &Path, sup: Option<&Path>) -> HashMap<u64, Decl> {
    let Ok(bytes) = std::fs::read(path) else {
        return HashMap::new();
    };
    let sup_bytes = sup.and_then(|p| std::fs::read(p).ok());
    read(&bytes, sup_bytes.as_deref()).unwrap_or_default()
}

/// The section `id` of an ELF file: empty if absent, `None` if it cannot
/// be used (compressed; I2).
fn section<'a>(elf: &Elf, bytes: &'a [u8], name: &str) -> Option<&'a [u8]> {
    let Some(sh) = elf
        .section_headers
        .iter()
        .find(|s| elf.shdr_strtab.get_at(s.sh_name) == Some(name))
    else {
        return Some(&[]);
    };
    if sh.sh_flags & u64::from(SHF_COMPRESSED) != 0 {
        return None;
    }
    if sh.sh_type == SHT_NOBITS {
        return Some(&[]);
    }
    bytes.get(sh.file_range()?)
}

fn dwarf_of(bytes: &[u8]) -> Option<gimli::Dwarf<R<'_>>> {
    let elf = Elf::parse(bytes).ok()?;
    if !elf.little_endian {
        return None;
    }
    gimli::Dwarf::load(|id| -> Result<R<'_>, ()> {
        let data = section(&elf, bytes, id.name()).ok_or(())?;
        Ok(EndianSlice::new(data, LittleEndian))
    })
    .ok()
}

/// The units of a file, by where they start in `.debug_info`.
struct Units<'a> {
    dwarf: gimli::Dwarf<R<'a>>,
    units: Vec<(usize, Unit<R<'a>>)>,
}

impl<'a> Units<'a> {
    fn new(dwarf: gimli::Dwarf<R<'a>>) -> Units<'a> {
        let mut units = Vec::new();
        let mut it = dwarf.units();
        while let Ok(Some(h)) = it.next() {
            // `units()` walks `.debug_info`: offsets into it.
            let at = h.offset().0;
            if let Ok(u) = dwarf.unit(h) {
                units.push((at, u));
            }
        }
        Units { dwarf, units }
    }

    /// The unit holding `.debug_info` offset `off`.
    fn holding(&self, off: usize) -> Option<&Unit<R<'a>>> {
        let i = self
            .units
            .partition_point(|(at, _)| *at <= off)
            .checked_sub(1)?;
        Some(&self.units[i].1)
    }
}

fn read(bytes: &[u8], sup: Option<&[u8]>) -> Option<HashMap<u64, Decl>> {
    let main = Units::new(dwarf_of(bytes)?);
    let sup = sup.and_then(dwarf_of).map(Units::new);
    let mut out = HashMap::new();
    for (_, unit) in &main.units {
        let mut entries = unit.entries();
        while let Ok(Some(e)) = entries.next_dfs() {
            if e.tag() != gimli::DW_TAG_subprogram {
                continue;
            }
            let entry = match e.attr_value(gimli::DW_AT_low_pc) {
                Some(AttributeValue::Addr(a)) => a,
                Some(AttributeValue::DebugAddrIndex(i)) => match main.dwarf.address(unit, i) {
                    Ok(a) => a,
                    Err(_) => continue,
                },
                _ => continue,
            };
            if let Some(d) = declaration(&main, sup.as_ref(), unit, e.clone()) {
                out.entry(entry).or_insert(d);
            }
        }
    }
    Some(out)
}

/// The declaration of function entry `e` of `unit` in `file` (I1).
fn declaration<'a>(
    file: &Units<'a>,
    sup: Option<&Units<'a>>,
    unit: &Unit<R<'a>>,
    e: DebuggingInformationEntry<R<'a>>,
) -> Option<Decl> {
    let (mut file, mut unit, mut e) = (file, unit, e);
    // The first of each along the references: a definition out of its
    // class gives its own line and its declaration's file.
    let (mut line, mut name) = (None, None);
    for _ in 0..=HOPS {
        if line.is_none() {
            line = e
                .attr_value(gimli::DW_AT_decl_line)
                .and_then(|v| v.udata_value());
        }
        if name.is_none() {
            if let Some(AttributeValue::FileIndex(i)) = e.attr_value(gimli::DW_AT_decl_file) {
                name = file_name(&file.dwarf, unit, i);
            }
        }
        if let (Some(line), Some(name)) = (line, &name) {
            let line = u32::try_from(line).ok()?;
            return Some(Decl {
                file: name.clone(),
                line,
            });
        }
        let to = e
            .attr_value(gimli::DW_AT_specification)
            .or_else(|| e.attr_value(gimli::DW_AT_abstract_origin))?;
        let (f, off) = match to {
            AttributeValue::UnitRef(o) => {
                e = unit.entry(o).ok()?;
                continue;
            }
            AttributeValue::DebugInfoRef(o) => (file, o),
            AttributeValue::DebugInfoRefSup(o) => (sup?, o),
            _ => return None,
        };
        let u = f.holding(off.0)?;
        let o = off.to_unit_offset(&u.header)?;
        e = u.entry(o).ok()?;
        (file, unit) = (f, u);
    }
    None
}

/// The name of file `index` of the unit's line program.
fn file_name(dwarf: &gimli::Dwarf<R<'_>>, unit: &Unit<R<'_>>, index: u64) -> Option<String> {
    let header = unit.line_program.as_ref()?.header();
    let f = header.file(index)?;
    let name = dwarf.attr_string(unit, f.path_name()).ok()?;
    Some(String::from_utf8_lossy(name.slice()).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_not_dwarf_gives_nothing() {
        assert!(read(b"not an ELF file", None).is_none());
        let me = std::env::current_exe().unwrap();
        assert!(decl_lines(&me.with_extension("nonexistent"), None).is_empty());
    }
}
