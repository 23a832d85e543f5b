//! The files behind a profile's modules, opened again at export time: their
//! symbol tables (or those of their separate debug files), where they were
//! mapped, and the bytes of their code (to decode blocks instruction by
//! instruction).
//!
//! I1: nothing here fails: a missing, changed or unparseable file leaves the
//!     module without symbols or bytes, and callers fall back on the names
//!     and sizes the profile itself records.
//! I2: a file is used only if it is the one profiled: its build id (or, for
//!     the main program without one, its SHA-256) must match the profile's.
//!     A debug file is used only if its build id matches the module's.
//! I3: runtime address = `bias` + link-time address; `start` (= bias + the
//!     lowest `PT_LOAD` address, page aligned) is where the module begins in
//!     memory, the base coverage tools expect offsets from.
//!
//! I4: in code no symbol covers (a stripped file without a debug file), a
//!     function starts at every address the run called and at the entry
//!     point, and extends to the next such address: a tail call or code only
//!     jumped to joins the function before it.
//! I5: code in a PLT section (`.plt`, `.iplt`: a static program's ifunc
//!     stubs) is not the function whose symbol precedes it (`_init` has
//!     size 0): each stub is a function of its own, named after the
//!     function it jumps to (`qsort@plt`) or by its place
//!     (`prog+0x1038@plt`), never by an address ASLR moves.
//! I6: a calling context entered through a PLT stub (a call to
//!     `memcmp@plt`) is named after the one function outside the PLT the
//!     stub jumped to in the run (`__memcmp_avx2_movbe`), as perf and
//!     callgrind's own call graphs name it: all the context ran but the
//!     stub's jump is that function's code, and its callees are called
//!     from there. A stub that went to several functions, or to none the
//!     profile saw, keeps its own name (I5). A stub that only ever went
//!     into the lazy binder (a function called once, bound lazily) is
//!     named after the function its relocation names, where a module
//!     defines one: the definition the dynamic linker bound it to (the
//!     first module in load order, the program first).
//!
//! Debug files are looked for as GDB does: `/usr/lib/debug/.build-id/xx/
//! yyyy.debug` from the build id, then the `.gnu_debuglink` name next to the
//! file, in its `.debug/` folder and under `/usr/lib/debug/` + its folder.
//! `HOTLIFT_DEBUG_DIR` replaces `/usr/lib/debug` (for tests).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use goblin::elf::{program_header::PT_LOAD, Elf};

use super::lines::{DebugFacts, Lines};
use crate::profile::{Module, Profile, Symbols};

/// One module's file, as far as it could be opened.
#[derive(Debug)]
pub struct Image {
    pub name: String,
    pub path: String,
    /// Runtime address − link-time address (I3).
    pub bias: u64,
    /// Where the module's first mapped page is (I3).
    pub start: u64,
    pub end: u64,
    pub entry: u64,
    pub symbols: Symbols,
    /// Runtime ranges of the PLT sections (`.plt`, `.iplt`, `.plt.sec`,
    /// `.plt.got`): their stubs have no symbols of their own (I5).
    pub plt: Vec<(u64, u64)>,
    /// Where the symbols came from: the file itself, a debug file, or none.
    pub symbols_from: Option<PathBuf>,
    /// The file's bytes and its loadable segments, when the file is the
    /// one profiled (I2).
    bytes: Option<(Vec<u8>, Vec<Segment>)>,
    /// Where its debug information may be (lines.rs), and its line
    /// tables, read on first use.
    debug: Option<DebugFacts>,
    lines: std::cell::OnceCell<Option<Lines>>,
}

/// A `PT_LOAD` segment: (vaddr, file offset, file size).
type Segment = (u64, u64, u64);

pub(super) fn build_id_of(elf: &Elf, bytes: &[u8]) -> Option<String> {
    let notes = elf.iter_note_headers(bytes)?;
    for note in notes.flatten() {
        if note.n_type == goblin::elf::note::NT_GNU_BUILD_ID && note.name == "GNU" {
            return Some(hex::encode(note.desc));
        }
    }
    None
}

fn debug_root() -> PathBuf {
    std::env::var_os("HOTLIFT_DEBUG_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/lib/debug"))
}

/// The debug file of build id `id` (hex, more than two digits).
pub(super) fn build_id_path(id: &str) -> PathBuf {
    debug_root()
        .join(".build-id")
        .join(&id[..2])
        .join(format!("{}.debug", &id[2..]))
}

/// Candidate debug files for `file` (see the module doc).
fn debug_candidates(file: &Path, build_id: Option<&str>, link: Option<&str>) -> Vec<PathBuf> {
    let root = debug_root();
    let mut v = Vec::new();
    if let Some(id) = build_id.filter(|id| id.len() > 2) {
        v.push(build_id_path(id));
    }
    if let (Some(link), Some(dir)) = (link, file.parent()) {
        v.push(dir.join(link));
        v.push(dir.join(".debug").join(link));
        let rel = dir.strip_prefix("/").unwrap_or(dir);
        v.push(root.join(rel).join(link));
    }
    v
}

impl Image {
    fn empty(m: &Module) -> Image {
        Image {
            name: m.name.clone(),
            path: m.path.clone(),
            bias: m.base,
            start: m.base,
            end: m.end,
            entry: 0,
            symbols: Symbols::default(),
            plt: Vec::new(),
            symbols_from: None,
            bytes: None,
            debug: None,
            lines: std::cell::OnceCell::new(),
        }
    }

    /// Open module `m` of `doc` (I1, I2).
    pub fn open(doc: &Profile, m: &Module) -> Image {
        let mut img = Image::empty(m);
        let Ok(bytes) = std::fs::read(&m.path) else {
            return img;
        };
        let Ok(elf) = Elf::parse(&bytes) else {
            return img;
        };
        let id = build_id_of(&elf, &bytes);
        let main = m.path == doc.binary.path;
        let same = match (&id, &m.build_id) {
            (Some(a), Some(b)) => a == b,
            _ if main => sha256_hex(&bytes) == doc.binary.sha256,
            _ => false,
        };
        if !same {
            return img;
        }
        // I3: an ET_EXEC runs at its link addresses whatever base the
        // profile records for it.
        let bias = if elf.header.e_type == goblin::elf::header::ET_EXEC {
            0
        } else {
            m.base
        };
        let loads: Vec<Segment> = elf
            .program_headers
            .iter()
            .filter(|p| p.p_type == PT_LOAD)
            .map(|p| (p.p_vaddr, p.p_offset, p.p_filesz))
            .collect();
        let lo = loads.iter().map(|l| l.0).min().unwrap_or(0) & !0xfff;
        let hi = elf
            .program_headers
            .iter()
            .filter(|p| p.p_type == PT_LOAD)
            .map(|p| p.p_vaddr.saturating_add(p.p_memsz))
            .max()
            .unwrap_or(0);
        img.bias = bias;
        img.start = bias.wrapping_add(lo);
        img.end = img.end.max(bias.wrapping_add(hi));
        img.entry = bias.wrapping_add(elf.header.e_entry);
        img.symbols = Symbols::from_elf(&bytes, bias);
        let debug = DebugFacts::of(&elf, &bytes, id.as_deref());
        img.plt = elf
            .section_headers
            .iter()
            .filter(|sh| {
                matches!(
                    elf.shdr_strtab.get_at(sh.sh_name),
                    Some(".plt" | ".iplt" | ".plt.sec" | ".plt.got")
                )
            })
            .map(|sh| (bias + sh.sh_addr, bias + sh.sh_addr + sh.sh_size))
            .collect();
        if img.symbols.is_empty() {
            let link = debug.link.as_ref().map(|l| l.0.as_str());
            for cand in debug_candidates(Path::new(&m.path), id.as_deref(), link) {
                let Ok(dbytes) = std::fs::read(&cand) else {
                    continue;
                };
                let Ok(delf) = Elf::parse(&dbytes) else {
                    continue;
                };
                if id.is_some() && build_id_of(&delf, &dbytes) != id {
                    continue;
                }
                // The file's PLT stubs' names with the debug file's
                // functions.
                let syms = Symbols::from_elfs(&[&bytes, &dbytes], bias);
                if !syms.is_empty() {
                    img.symbols = syms;
                    img.symbols_from = Some(cand);
                    break;
                }
            }
        } else {
            img.symbols_from = Some(PathBuf::from(&m.path));
        }
        img.debug = Some(debug);
        img.bytes = Some((bytes, loads));
        img
    }

    /// The source file and line of the code at runtime address `addr`,
    /// from the module's DWARF line tables (lines.rs).
    pub fn line(&self, addr: u64) -> Option<(String, u32)> {
        self.lines()?.at(addr.wrapping_sub(self.bias), false)
    }

    /// The source line shown for runtime address `addr`: of the code there
    /// (the summary's top blocks, `dump`'s members), or with `function`
    /// of the function holding it, not of what was inlined at it
    /// (`report`'s functions, at their entries). From the module's line
    /// tables; none without them or for line 0 (code no source line made).
    /// Without `function`, where the code there was inlined comes too,
    /// innermost first ([`SourceLine::inlined`]).
    pub fn source_line(&self, addr: u64, function: bool) -> Option<SourceLine> {
        let lines = self.lines()?;
        let vaddr = addr.wrapping_sub(self.bias);
        let (file, line) = lines.at(vaddr, function)?;
        if line == 0 {
            return None;
        }
        let mut inlined = Vec::new();
        if !function {
            let frames = lines.frames(vaddr);
            for pair in frames.windows(2) {
                let (inner, outer) = (&pair[0], &pair[1]);
                let name = |f: &super::lines::Frame| {
                    f.function.as_deref().map_or_else(
                        || "??".to_string(),
                        |n| crate::profile::names::display(n).into_owned(),
                    )
                };
                inlined.push(InlineSite {
                    callee: name(inner),
                    caller: name(outer),
                    file: outer.file.clone().unwrap_or_else(|| "??".to_string()),
                    line: outer.line,
                });
            }
        }
        Some(SourceLine {
            file,
            line,
            inlined,
        })
    }

    /// The line function entry `addr` (runtime) is declared at
    /// (decl.rs), when its declaration is in `file` (a path as the line
    /// tables give it; the declaration's name may lack its directories).
    pub fn decl_line(&self, addr: u64, file: &str) -> Option<u32> {
        let d = self.lines()?.decl(addr.wrapping_sub(self.bias))?;
        (d.line > 0 && Path::new(file).ends_with(&d.file)).then_some(d.line)
    }

    /// The module's line tables, read on first use.
    fn lines(&self) -> Option<&Lines> {
        self.lines
            .get_or_init(|| {
                let facts = self.debug.as_ref()?;
                let link = facts.link.as_ref().map(|l| l.0.as_str());
                let path = Path::new(&self.path);
                let cands = debug_candidates(path, facts.build_id.as_deref(), link);
                Lines::find(path, facts, &cands)
            })
            .as_ref()
    }

    /// Every row of the module's line tables (lines.rs), in runtime
    /// addresses; empty without line tables.
    pub fn line_rows(&self) -> super::lines::Rows {
        let Some(lines) = self.lines() else {
            return Default::default();
        };
        let (lo, hi) = (
            self.start.wrapping_sub(self.bias),
            self.end.wrapping_sub(self.bias),
        );
        let mut rows = lines.rows(lo, hi);
        for r in &mut rows.rows {
            r.addr = r.addr.wrapping_add(self.bias);
        }
        rows
    }

    /// The bytes at runtime address `addr`, `len` of them, if the file
    /// holds them.
    pub fn code(&self, addr: u64, len: usize) -> Option<&[u8]> {
        let (bytes, loads) = self.bytes.as_ref()?;
        let vaddr = addr.wrapping_sub(self.bias);
        let &(v, off, size) = loads
            .iter()
            .find(|&&(v, _, size)| vaddr >= v && vaddr - v < size)?;
        let at = off.checked_add(vaddr - v)?;
        let end = at.checked_add(len as u64)?;
        if end > off + size {
            return None;
        }
        bytes.get(at as usize..end as usize)
    }

    /// The function containing `addr`: (entry address, name). A PLT stub
    /// is `None` (I5).
    pub fn function(&self, addr: u64) -> Option<(u64, &str)> {
        if self.in_plt(addr) {
            return None;
        }
        self.symbols.function(addr)
    }

    /// Is `addr` in a PLT section?
    pub fn in_plt(&self, addr: u64) -> bool {
        self.plt.iter().any(|&(lo, hi)| addr >= lo && addr < hi)
    }
}

/// A source position ([`Image::source_line`]): the file as the line tables
/// name it; shown as `name.c:LINE`, the file's last component.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SourceLine {
    pub file: String,
    pub line: u32,
    /// Where the code's function was inlined, innermost first (as
    /// `addr2line -i`): the function inlined, the one it was inlined into
    /// and the line of that one it was inlined at. Empty where the code is
    /// its function's own.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub inlined: Vec<InlineSite>,
}

/// `callee` was inlined into `caller` at `file:line`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct InlineSite {
    pub callee: String,
    pub caller: String,
    pub file: String,
    pub line: u32,
}

fn short(file: &str) -> &str {
    file.rsplit('/').next().unwrap_or(file)
}

/// `file:line`, the file by its last component (as gdb's backtraces);
/// code inlined shows the chain: `f.h:3 in f, inlined into main at m.c:9`.
impl std::fmt::Display for SourceLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", short(&self.file), self.line)?;
        if let Some(first) = self.inlined.first() {
            write!(f, " in {}", first.callee)?;
        }
        for s in &self.inlined {
            write!(
                f,
                ", inlined into {} at {}:{}",
                s.caller,
                short(&s.file),
                s.line
            )?;
        }
        Ok(())
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}

/// Every module of `doc`, opened.
#[derive(Debug)]
pub struct Images {
    pub images: Vec<Image>,
    /// Function entries known from the run itself (call targets and the
    /// program entry), sorted: code no symbol covers belongs to the nearest
    /// entry before it in the same module (I4).
    entries: Vec<u64>,
    /// PLT stubs that jumped to one function (I6): where, and the
    /// profile's symbol for it.
    through: HashMap<u64, (u64, Option<String>)>,
}

impl Images {
    pub fn open(doc: &Profile) -> Images {
        let images: Vec<Image> = doc.modules.iter().map(|m| Image::open(doc, m)).collect();
        let mut entries: Vec<u64> = doc.call_edges.iter().map(|e| e.to).collect();
        entries.extend(doc.call_tree.iter().map(|n| n.function).filter(|&f| f != 0));
        entries.extend(images.iter().map(|i| i.entry).filter(|&e| e != 0));
        entries.sort_unstable();
        entries.dedup();
        let mut images = Images {
            images,
            entries,
            through: HashMap::new(),
        };
        images.through = images.stub_targets(doc);
        images
    }

    /// The PLT stubs of `doc` whose indirect jump went to exactly one
    /// address outside every PLT section (I6; a lazily bound stub's first
    /// jump to its own next instruction does not count).
    fn stub_targets(&self, doc: &Profile) -> HashMap<u64, (u64, Option<String>)> {
        let in_plt = |a: u64| self.containing(a).is_some_and(|i| i.in_plt(a));
        let mut to: HashMap<u64, Option<u64>> = HashMap::new();
        for e in doc.indirect_edges.iter().filter(|e| in_plt(e.from)) {
            if in_plt(e.to) {
                continue;
            }
            to.entry(e.from)
                .and_modify(|t| {
                    if *t != Some(e.to) {
                        *t = None;
                    }
                })
                .or_insert(Some(e.to));
        }
        let mut through: HashMap<u64, (u64, Option<String>)> = to
            .into_iter()
            .filter_map(|(stub, t)| {
                let t = t?;
                let sym = doc.block_at(t).and_then(|b| b.symbol.clone());
                Some((stub, (t, sym)))
            })
            .collect();
        // Stubs called only through the lazy binder: by their names, each
        // looked up once (a stub may head many thousands of contexts).
        let lazy: std::collections::HashSet<u64> = doc
            .call_tree
            .iter()
            .map(|n| n.function)
            .filter(|f| !through.contains_key(f) && in_plt(*f))
            .collect();
        for f in lazy {
            let Some(name) = self
                .containing(f)
                .and_then(|i| i.symbols.function(f))
                .and_then(|(_, s)| s.strip_suffix("@plt"))
            else {
                continue;
            };
            let defined = self.images.iter().find_map(|img| {
                img.symbols
                    .address_of(name)
                    .filter(|&a| !img.in_plt(a) && a != 0)
            });
            if let Some(t) = defined {
                through.insert(f, (t, None));
            }
        }
        through
    }

    /// Where a call to `addr` went on to: the function its PLT stub
    /// jumped to (I6), or `addr` itself.
    pub fn past_stub(&self, addr: u64) -> u64 {
        self.through.get(&addr).map_or(addr, |t| t.0)
    }

    /// The function a calling context entered at `func` is named after:
    /// [`Images::function_name`] of its entry, or of the function its PLT
    /// stub jumped to (I6).
    pub fn context_name(&self, func: u64, fallback: Option<&str>) -> (u64, String) {
        match self.through.get(&func) {
            Some((to, sym)) => self.function_name(*to, sym.as_deref()),
            None => self.function_name(func, fallback),
        }
    }

    /// The image of the module named `name`.
    pub fn by_name(&self, name: &str) -> Option<&Image> {
        self.images.iter().find(|i| i.name == name)
    }

    /// The image whose mapping contains `addr`.
    pub fn containing(&self, addr: u64) -> Option<&Image> {
        self.images
            .iter()
            .find(|i| addr >= i.start && addr < i.end.max(i.start + 1))
    }

    /// `module+0xoffset` for `addr`: the same in every run whatever ASLR
    /// does (an absolute address only outside every module: JIT code).
    pub fn place(&self, addr: u64) -> String {
        match self.containing(addr) {
            Some(img) => format!("{}+{:#x}", img.name, addr - img.start),
            None => format!("{addr:#x}"),
        }
    }

    /// The code at `addr` as every output names it: the name of the
    /// function holding it ([`Images::function_name`]), with `+0xOFFSET`
    /// past the function's entry (`msort_with_tmp.part.0+0x22c`,
    /// `prog+0x1189+0x10` in an unnamed one).
    pub fn code_name(&self, addr: u64, fallback: Option<&str>) -> String {
        let (entry, f) = self.function_name(addr, fallback);
        if entry >= addr {
            f
        } else {
            format!("{f}+{:#x}", addr - entry)
        }
    }

    /// The function containing `addr`: its entry and a display name
    /// (`name`, or `module+0x1000` when no symbol covers it: [`Images::place`]
    /// of its entry; `fallback` is the profile's own symbol for the address,
    /// used when the file is gone).
    pub fn function_name(&self, addr: u64, fallback: Option<&str>) -> (u64, String) {
        let image = self.containing(addr);
        if let Some((entry, name)) = image.and_then(|i| i.function(addr)) {
            return (entry, crate::profile::names::display(name).into_owned());
        }
        if let Some(img) = image.filter(|i| i.in_plt(addr)) {
            // I5: every stub its own function, named after the function it
            // jumps to where the symbol reader knows it (`qsort@plt`), else
            // by where it is in its module.
            if let Some((entry, name)) = img
                .symbols
                .function(addr)
                .filter(|(_, n)| n.len() > "@plt".len() && n.ends_with("@plt"))
            {
                return (entry, crate::profile::names::display(name).into_owned());
            }
            return (addr, format!("{}+{:#x}@plt", img.name, addr - img.start));
        }
        match fallback {
            Some(s) => {
                let (name, off) = match s.split_once("+0x") {
                    Some((n, o)) => (n, u64::from_str_radix(o, 16).unwrap_or(0)),
                    None => (s, 0),
                };
                (
                    addr.wrapping_sub(off),
                    crate::profile::names::display(name).into_owned(),
                )
            }
            None => {
                // I4: the nearest entry before addr in the same module.
                let i = self.entries.partition_point(|&e| e <= addr);
                let same = |e: u64| match self.containing(addr) {
                    Some(img) => e >= img.start,
                    None => addr - e < 1 << 20,
                };
                let entry = i
                    .checked_sub(1)
                    .map(|i| self.entries[i])
                    .filter(|&e| same(e))
                    .unwrap_or(addr);
                (entry, self.place(entry))
            }
        }
    }
}
