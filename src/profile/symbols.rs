//! Symbol names for guest addresses, from the ELF symbol tables.

use goblin::elf::Elf;

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
                if s.is_function() && s.st_value != 0 {
                    if let Some(name) = strs.get_at(s.st_name) {
                        funcs.push((base + s.st_value, s.st_size, name.to_string()));
                    }
                }
            }
        }
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
