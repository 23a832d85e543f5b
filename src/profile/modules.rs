//! Modules: the mapped images guest code comes from (the program, the
//! vDSO), so profiles name every address as module + offset and symbol.
//!
//! I1: modules do not overlap; `find` returns the one containing an
//!     address. Code outside every module (run-time generated code) belongs
//!     to the pseudo-module [`ANON`], whose base is 0 (its offsets are
//!     addresses).
//! I2: an offset is relative to the module's `base`, its lowest mapped
//!     address, so it is the same in every run whatever the load address.

use serde::Serialize;

use super::Symbols;

/// Name of the pseudo-module for code outside every mapped image.
pub const ANON: &str = "[anon]";

/// One mapped image.
#[derive(Debug, Serialize)]
pub struct Module {
    pub name: String,
    pub path: String,
    pub base: u64,
    pub end: u64,
    pub build_id: Option<String>,
    #[serde(skip)]
    pub symbols: Symbols,
}

/// The modules of one process, ascending by base (I1).
#[derive(Debug, Default)]
pub struct Modules {
    list: Vec<Module>,
    anon: Option<Module>,
}

impl Modules {
    pub fn new(mut list: Vec<Module>) -> Modules {
        list.sort_by_key(|m| m.base);
        Modules { list, anon: None }
    }

    /// The module containing `addr` (I1).
    pub fn find(&self, addr: u64) -> Option<&Module> {
        let i = self
            .list
            .partition_point(|m| m.base <= addr)
            .checked_sub(1)?;
        let m = &self.list[i];
        (addr < m.end).then_some(m)
    }

    /// (module name, offset, symbol) of `addr`; code outside every module
    /// goes to [`ANON`], which is then listed too.
    pub fn locate(&mut self, addr: u64) -> (String, u64, Option<String>) {
        if let Some(m) = self.find(addr) {
            return (m.name.clone(), addr - m.base, m.symbols.name(addr));
        }
        self.anon.get_or_insert_with(|| Module {
            name: ANON.into(),
            path: String::new(),
            base: 0,
            end: u64::MAX,
            build_id: None,
            symbols: Symbols::default(),
        });
        (ANON.into(), addr, None)
    }

    /// The modules as a list, the pseudo-module last when code ran outside
    /// them.
    pub fn into_list(self) -> Vec<Module> {
        let mut v = self.list;
        v.extend(self.anon);
        v
    }

    /// Every module, the pseudo-module last when code ran outside them.
    pub fn all(&self) -> impl Iterator<Item = &Module> {
        self.list.iter().chain(self.anon.iter())
    }
}

/// Hex digits of a build id.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(name: &str, base: u64, end: u64) -> Module {
        Module {
            name: name.into(),
            path: String::new(),
            base,
            end,
            build_id: None,
            symbols: Symbols::default(),
        }
    }

    #[test]
    fn addresses_map_to_their_module_or_anon() {
        let mut ms = Modules::new(vec![m("vdso", 0x7000, 0x9000), m("prog", 0x1000, 0x3000)]);
        assert_eq!(ms.locate(0x1010).0, "prog");
        assert_eq!(ms.locate(0x1010).1, 0x10);
        assert_eq!(ms.locate(0x8fff).1, 0x1fff);
        assert_eq!(ms.all().count(), 2);
        assert_eq!(ms.locate(0x3000), (ANON.into(), 0x3000, None));
        assert_eq!(ms.all().last().unwrap().name, ANON);
    }
}
