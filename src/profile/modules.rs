//! Modules: the mapped images guest code comes from (the program, its
//! interpreter, the vDSO, the libraries it mapped), so profiles name every
//! address as module + offset and symbol. Built at profile time from the
//! run's image log (`src/images.rs`), in load order.
//!
//! I1: a module is live from its `first_block` to its `end_block` (block
//!     ids, images.rs I2); modules live at the same time do not overlap.
//!     [`Modules::find`] with a block id returns the one image that block
//!     was translated from; without one (a call-tree function, a superblock
//!     head) the latest-loaded module containing the address. Code outside
//!     every module (run-time generated code) belongs to the pseudo-module
//!     [`ANON`], whose base is 0 (its offsets are addresses).
//! I2: an offset is relative to the module's `base`, its lowest mapped
//!     address, so it is the same in every run whatever the load address.
//! I3: names are unique: the file name, with `#2`, `#3`… appended for a
//!     later image of the same name (a library loaded, unloaded and loaded
//!     again), so a block's `module` names one entry of `modules[]`.

use serde::{Deserialize, Serialize};

use super::Symbols;

/// Name of the pseudo-module for code outside every mapped image.
pub const ANON: &str = "[anon]";

/// One mapped image. Read back (profile/schema.rs I2), it may lack what
/// the exports do without (`path`, `kind`, `build_id`, `unmapped`), and
/// what the profile does not store is empty (its symbols) or unknown
/// (its block ids: all).
#[derive(Debug, Serialize, Deserialize)]
pub struct Module {
    pub name: String,
    #[serde(default)]
    pub path: String,
    /// `program`, `interpreter`, `vdso`, `mapped` (a file the guest mapped
    /// executable: a library), or `anon`.
    #[serde(default)]
    pub kind: String,
    pub base: u64,
    pub end: u64,
    #[serde(default)]
    pub build_id: Option<String>,
    /// Unmapped before the guest ended (its code ran before that).
    #[serde(default)]
    pub unmapped: bool,
    #[serde(skip)]
    pub symbols: std::sync::Arc<Symbols>,
    /// Block sequence numbers (images.rs I2) translated while it was
    /// mapped: `[first_block, end_block)`.
    #[serde(skip)]
    pub first_block: u64,
    #[serde(skip)]
    pub end_block: Option<u64>,
}

impl Module {
    fn holds(&self, addr: u64, block: Option<u64>) -> bool {
        (self.base..self.end).contains(&addr)
            && block
                .is_none_or(|b| b >= self.first_block && self.end_block.is_none_or(|end| b < end))
    }
}

/// The modules of one process, in load order (I1).
#[derive(Debug, Default)]
pub struct Modules {
    list: Vec<Module>,
    anon: Option<Module>,
}

impl Modules {
    /// The modules in load order; renames repeated names (I3).
    pub fn new(mut list: Vec<Module>) -> Modules {
        let mut seen: std::collections::HashMap<String, u32> = Default::default();
        for m in &mut list {
            let n = seen.entry(m.name.clone()).or_insert(0);
            *n += 1;
            if *n > 1 {
                m.name = format!("{}#{n}", m.name);
            }
        }
        Modules { list, anon: None }
    }

    /// The module block `block` at `addr` was translated from, or with no
    /// block id the latest-loaded module containing `addr` (I1).
    pub fn find(&self, addr: u64, block: Option<u64>) -> Option<&Module> {
        self.list.iter().rev().find(|m| m.holds(addr, block))
    }

    /// The index (in [`Modules::all`]) of the module of `addr` (see
    /// [`Modules::find`]); code outside every module goes to [`ANON`],
    /// which is then listed too.
    pub fn index(&mut self, addr: u64, block: Option<u64>) -> usize {
        if let Some(i) = self.list.iter().rposition(|m| m.holds(addr, block)) {
            return i;
        }
        self.anon.get_or_insert_with(|| Module {
            name: ANON.into(),
            path: String::new(),
            kind: "anon".into(),
            base: 0,
            end: u64::MAX,
            build_id: None,
            unmapped: false,
            symbols: Default::default(),
            first_block: 0,
            end_block: None,
        });
        self.list.len()
    }

    /// [`Modules::index`] of `addr` in the image record at `image` (one
    /// module per record), when that module holds it.
    pub fn index_of_image(&mut self, image: usize, addr: u64) -> usize {
        match self.list.get(image) {
            Some(m) if (m.base..m.end).contains(&addr) => image,
            _ => self.index(addr, None),
        }
    }

    /// (module name, offset, symbol) of `addr` in the module at `index`.
    pub fn describe(&self, index: usize, addr: u64) -> (String, u64, Option<String>) {
        let (offset, symbol) = self.place(index, addr);
        (self.name(index).to_string(), offset, symbol)
    }

    /// The name of the module at `index`.
    pub fn name(&self, index: usize) -> &str {
        self.list
            .get(index)
            .or(self.anon.as_ref())
            .map_or(ANON, |m| &m.name)
    }

    /// (offset, symbol) of `addr` in the module at `index`: [`Modules::describe`]
    /// without the name.
    pub fn place(&self, index: usize, addr: u64) -> (u64, Option<String>) {
        match self.list.get(index).or(self.anon.as_ref()) {
            Some(m) => (addr - m.base, m.symbols.name(addr)),
            None => (addr, None),
        }
    }

    /// (module name, offset, symbol) of `addr` (see [`Modules::find`]).
    pub fn locate(&mut self, addr: u64, block: Option<u64>) -> (String, u64, Option<String>) {
        let i = self.index(addr, block);
        self.describe(i, addr)
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

/// The SHA-256 of file `path` in hex, read in pieces (None if it cannot
/// be read): the profile's `binary.sha256`, the store's identities.
pub fn file_sha256(path: &std::path::Path) -> Option<String> {
    use sha2::Digest;
    use std::io::Read;
    let mut f = std::fs::File::open(path).ok()?;
    let mut h = sha2::Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => h.update(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    Some(hex::encode(h.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(name: &str, base: u64, end: u64, blocks: (u64, Option<u64>)) -> Module {
        Module {
            name: name.into(),
            path: String::new(),
            kind: "mapped".into(),
            base,
            end,
            build_id: None,
            unmapped: blocks.1.is_some(),
            symbols: Default::default(),
            first_block: blocks.0,
            end_block: blocks.1,
        }
    }

    #[test]
    fn addresses_map_to_their_module_or_anon() {
        let mut ms = Modules::new(vec![
            m("prog", 0x1000, 0x3000, (0, None)),
            m("vdso", 0x7000, 0x9000, (0, None)),
        ]);
        assert_eq!(ms.locate(0x1010, Some(0)).0, "prog");
        assert_eq!(ms.locate(0x1010, None).1, 0x10);
        assert_eq!(ms.locate(0x8fff, Some(3)).1, 0x1fff);
        assert_eq!(ms.all().count(), 2);
        assert_eq!(ms.locate(0x3000, None), (ANON.into(), 0x3000, None));
        assert_eq!(ms.all().last().unwrap().name, ANON);
    }

    #[test]
    fn a_place_reused_is_told_apart_by_block_ids() {
        let mut ms = Modules::new(vec![
            m("libp.so", 0x5000, 0x6000, (10, Some(20))),
            m("libq.so", 0x5000, 0x6000, (25, None)),
            m("libp.so", 0x8000, 0x9000, (30, None)),
        ]);
        assert_eq!(ms.locate(0x5100, Some(12)).0, "libp.so");
        assert_eq!(ms.locate(0x5100, Some(27)).0, "libq.so");
        assert_eq!(ms.locate(0x5100, Some(22)).0, ANON);
        assert_eq!(ms.locate(0x5100, None).0, "libq.so");
        assert_eq!(ms.locate(0x8100, Some(31)).0, "libp.so#2");
    }
}
