//! Symbol names for guest addresses, from the ELF symbol tables: `.symtab`
//! and `.dynsym` of the image's file, plus the `.symtab` of its separate
//! debug file (`/usr/lib/debug/.build-id/xx/yyyy.debug`) when one is
//! installed (Debian's `-dbg`/`-dbgsym` packages), which names the local
//! functions a stripped library leaves out. PLT entries are named after
//! the function they jump to (`printf@plt`), as objdump names them.

use goblin::elf::sym::STT_GNU_IFUNC;
use goblin::elf::Elf;

/// Where separate debug files are found by build id.
const DEBUG_DIR: &str = "/usr/lib/debug/.build-id";

/// Function symbols of the guest image, sorted by address.
#[derive(Debug, Default)]
pub struct Symbols {
    /// Load bias of the module (0 for non-PIE).
    pub base: u64,
    funcs: Vec<(u64, u64, String)>,
}

impl Symbols {
    /// Read `.symtab` (or `.dynsym`) of `bytes`, relocated by `base`.
    /// Unparseable input gives an empty table, never an error.
    pub fn from_elf(bytes: &[u8], base: u64) -> Symbols {
        let Ok(elf) = Elf::parse(bytes) else {
            return Symbols {
                base,
                funcs: Vec::new(),
            };
        };
        let mut funcs = Vec::new();
        for (syms, strs) in [(&elf.syms, &elf.strtab), (&elf.dynsyms, &elf.dynstrtab)] {
            for s in syms.iter() {
                let func = s.is_function() || s.st_type() == STT_GNU_IFUNC;
                if func && s.st_value != 0 {
                    if let Some(name) = strs.get_at(s.st_name) {
                        funcs.push((base.wrapping_add(s.st_value), s.st_size, name.to_string()));
                    }
                }
            }
        }
        funcs.extend(plt_entries(&elf, base));
        funcs.sort();
        funcs.dedup_by_key(|f| f.0);
        Symbols { base, funcs }
    }

    /// No function symbol at all (a stripped file).
    pub fn is_empty(&self) -> bool {
        self.funcs.is_empty()
    }

    /// The function containing `addr`: its start address and name.
    pub fn function(&self, addr: u64) -> Option<(u64, &str)> {
        let i = self.funcs.partition_point(|f| f.0 <= addr).checked_sub(1)?;
        let (start, size, name) = &self.funcs[i];
        (*size == 0 || addr - start < *size).then_some((*start, name.as_str()))
    }

    /// The symbols of an image file's `bytes` relocated by `base`, with its
    /// debug file's when one is installed. `build_id` is the image's as it
    /// was mapped: a file whose build id differs (replaced since) gives no
    /// symbols.
    pub fn from_file(bytes: &[u8], base: u64, build_id: Option<&[u8]>) -> Symbols {
        let mut syms = Symbols::from_elf(bytes, base);
        let Some(id) = build_id.filter(|id| id.len() >= 2) else {
            return syms;
        };
        if file_build_id(bytes).is_some_and(|f| f != id) {
            return Symbols {
                base,
                funcs: Vec::new(),
            };
        }
        let hex = super::hex(id);
        let debug = format!("{DEBUG_DIR}/{}/{}.debug", &hex[..2], &hex[2..]);
        if let Ok(dbg) = std::fs::read(debug) {
            syms.funcs.extend(Symbols::from_elf(&dbg, base).funcs);
            syms.funcs.sort();
            syms.funcs.dedup_by_key(|f| f.0);
        }
        syms
    }

    /// "name" or "name+0x12" for the function containing `addr`.
    pub fn name(&self, addr: u64) -> Option<String> {
        let i = self.funcs.partition_point(|f| f.0 <= addr).checked_sub(1)?;
        let (start, size, name) = &self.funcs[i];
        let off = addr - start;
        if *size != 0 && off >= *size {
            return None;
        }
        Some(if off == 0 {
            name.clone()
        } else {
            format!("{name}+{off:#x}")
        })
    }
}

/// The build id of an ELF file (any type: shared libraries have no entry
/// point, which `loader::plan` wants), from its `PT_NOTE`s.
fn file_build_id(bytes: &[u8]) -> Option<Vec<u8>> {
    let read = |at: u64, n: usize| {
        let start = usize::try_from(at).ok()?;
        bytes.get(start..start.checked_add(n)?).map(<[u8]>::to_vec)
    };
    // The layout of the file as if its first page were mapped at 0.
    crate::loader::mapped_layout(&read, 0, 0)?.build_id
}

/// `name@plt` for each PLT entry, in the linkers' layout: with `.plt.sec`
/// (IBT) its i-th 16-byte entry belongs to the i-th `.rela.plt` relocation;
/// without, the `.plt` entry after the 16-byte header does.
fn plt_entries(elf: &Elf, base: u64) -> Vec<(u64, u64, String)> {
    let section = |name: &str| {
        elf.section_headers
            .iter()
            .find(|sh| elf.shdr_strtab.get_at(sh.sh_name) == Some(name))
    };
    let (start, end) = match (section(".plt.sec"), section(".plt")) {
        (Some(sec), _) => (sec.sh_addr, sec.sh_addr.saturating_add(sec.sh_size)),
        (None, Some(plt)) => (
            plt.sh_addr.saturating_add(16),
            plt.sh_addr.saturating_add(plt.sh_size),
        ),
        _ => return Vec::new(),
    };
    elf.pltrelocs
        .iter()
        .enumerate()
        .filter_map(|(i, rel)| {
            let at = start.checked_add(16 * i as u64).filter(|&a| a < end)?;
            let sym = elf.dynsyms.get(rel.r_sym)?;
            let name = elf.dynstrtab.get_at(sym.st_name)?;
            Some((base.wrapping_add(at), 16, format!("{name}@plt")))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This test program's own PLT: every entry is named after a function.
    #[test]
    fn names_plt_entries() {
        let exe = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let syms = Symbols::from_elf(&exe, 0);
        let plt: Vec<&(u64, u64, String)> = syms
            .funcs
            .iter()
            .filter(|f| f.2.ends_with("@plt"))
            .collect();
        assert!(!plt.is_empty(), "no PLT entries found");
        let (at, _, name) = plt[0];
        assert_eq!(syms.name(*at).as_deref(), Some(name.as_str()));
        assert_eq!(syms.name(at + 4), Some(format!("{name}+0x4")));
    }
}
