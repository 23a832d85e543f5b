//! Source lines of a module's code: the DWARF line tables of its file or
//! of its separate debug file, read with `addr2line`.
//!
//! I1: debug information is used only if it describes the file profiled:
//!     the file's own sections; a debug file found by build id whose build
//!     id matches; a `.gnu_debuglink` file whose CRC-32 matches the link's
//!     (and whose build id matches, when the module has one), or whose
//!     build id matches though its CRC-32 does not (a debug file processed
//!     after the link was made), with a warning. A dwz
//!     supplementary file (`.gnu_debugaltlink`, Debian's `-dbgsym`
//!     packages) is found by its path or its build id.
//! I2: addresses are link-time (file) addresses: runtime address − bias
//!     (images.rs I3).
//! I3: nothing here fails: without usable debug information a module has
//!     no lines, and callers show what they showed before (`???`, line 0).

use std::path::{Path, PathBuf};

use goblin::elf::section_header::SHT_NOBITS;
use goblin::elf::Elf;

/// One module's line tables.
pub struct Lines {
    loader: addr2line::Loader,
    /// The file they came from (the module's own, or a debug file).
    pub from: PathBuf,
    /// Its dwz supplementary file, if any.
    sup: Option<PathBuf>,
    /// Functions' declarations by entry, read on first use (decl.rs).
    decls: std::sync::OnceLock<std::collections::HashMap<u64, super::decl::Decl>>,
}

impl std::fmt::Debug for Lines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lines").field("from", &self.from).finish()
    }
}

/// What [`Lines::find`] needs to know of a module's file, taken while it
/// is parsed anyway (images.rs).
#[derive(Debug, Clone, Default)]
pub struct DebugFacts {
    /// The file holds a non-empty `.debug_line` of its own.
    pub own: bool,
    pub build_id: Option<String>,
    /// `.gnu_debuglink`: the debug file's name and CRC-32.
    pub link: Option<(String, u32)>,
}

/// The contents of section `name` of `elf` (none for `SHT_NOBITS`).
fn section<'a>(elf: &Elf, bytes: &'a [u8], name: &str) -> Option<&'a [u8]> {
    let sh = elf
        .section_headers
        .iter()
        .find(|s| elf.shdr_strtab.get_at(s.sh_name) == Some(name))?;
    if sh.sh_type == SHT_NOBITS {
        return None;
    }
    bytes.get(sh.file_range()?)
}

impl DebugFacts {
    pub fn of(elf: &Elf, bytes: &[u8], build_id: Option<&str>) -> DebugFacts {
        let own = section(elf, bytes, ".debug_line").is_some_and(|d| !d.is_empty());
        let link = section(elf, bytes, ".gnu_debuglink").and_then(|d| {
            let end = d.iter().position(|&b| b == 0)?;
            let name = std::str::from_utf8(&d[..end]).ok()?.to_string();
            let at = (end + 1).next_multiple_of(4);
            let crc = u32::from_le_bytes(d.get(at..at + 4)?.try_into().ok()?);
            Some((name, crc))
        });
        DebugFacts {
            own,
            build_id: build_id.map(str::to_string),
            link,
        }
    }
}

fn crc32_of(path: &Path) -> Option<u32> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).ok()?;
    let mut h = crc32fast::Hasher::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f.read(&mut buf).ok()?;
        if n == 0 {
            return Some(h.finalize());
        }
        h.update(&buf[..n]);
    }
}

/// The dwz supplementary file a debug file names (I1): its
/// `.gnu_debugaltlink` path (absolute, or from the debug file's folder),
/// else by the build id the section carries.
fn supplementary(debug: &Path, elf: &Elf, bytes: &[u8]) -> Option<PathBuf> {
    let d = section(elf, bytes, ".gnu_debugaltlink")?;
    let end = d.iter().position(|&b| b == 0)?;
    let name = Path::new(std::str::from_utf8(&d[..end]).ok()?);
    let by_path = match debug.parent() {
        Some(dir) if name.is_relative() => dir.join(name),
        _ => name.to_path_buf(),
    };
    if by_path.is_file() {
        return Some(by_path);
    }
    let id = hex::encode(d.get(end + 1..)?);
    (id.len() > 2)
        .then(|| super::images::build_id_path(&id))
        .filter(|p| p.is_file())
}

impl Lines {
    /// The line tables for the module whose file is `path` (I1, I3):
    /// `candidates` are its separate debug files in the order GDB looks.
    pub fn find(path: &Path, facts: &DebugFacts, candidates: &[PathBuf]) -> Option<Lines> {
        if facts.own {
            return Lines::load(path, None);
        }
        for cand in candidates {
            let Ok(bytes) = std::fs::read(cand) else {
                continue;
            };
            let Ok(elf) = Elf::parse(&bytes) else {
                continue;
            };
            let id = super::images::build_id_of(&elf, &bytes);
            if facts.build_id.is_some() && id != facts.build_id {
                continue;
            }
            let by_link = facts
                .link
                .as_ref()
                .is_some_and(|(name, _)| cand.file_name() == Some(std::ffi::OsStr::new(name)));
            if by_link && crc32_of(cand) != facts.link.as_ref().map(|l| l.1) {
                if facts.build_id.is_none() {
                    continue;
                }
                // Its build id is the module's: the same build, processed
                // after the link was made (dwz, a second strip). Used, and
                // said.
                crate::host::say!(
                    "hotlift: warning: {} does not have the CRC-32 {}'s .gnu_debuglink names; its lines are used because its build id matches",
                    cand.display(),
                    path.display()
                );
            }
            if section(&elf, &bytes, ".debug_line").is_none_or(|d| d.is_empty()) {
                continue;
            }
            let sup = supplementary(cand, &elf, &bytes);
            if let Some(lines) = Lines::load(cand, sup.as_deref()) {
                return Some(lines);
            }
        }
        None
    }

    fn load(path: &Path, sup: Option<&Path>) -> Option<Lines> {
        let loader = match sup {
            Some(sup) => addr2line::Loader::new_with_sup(path, Some(sup)),
            None => addr2line::Loader::new(path),
        }
        .ok()?;
        Some(Lines {
            loader,
            from: path.to_path_buf(),
            sup: sup.map(Path::to_path_buf),
            decls: Default::default(),
        })
    }

    /// Where the function entered at link-time address `vaddr` (I2) is
    /// declared (decl.rs), if its DWARF says.
    pub fn decl(&self, vaddr: u64) -> Option<&super::decl::Decl> {
        self.decls
            .get_or_init(|| super::decl::decl_lines(&self.from, self.sup.as_deref()))
            .get(&vaddr)
    }

    /// The source file and line of link-time address `vaddr` (I2): the
    /// line of the code there, in the innermost function inlined at it;
    /// with `outer`, the line in the function that holds the code (where
    /// it calls what was inlined at `vaddr`).
    pub fn at(&self, vaddr: u64, outer: bool) -> Option<(String, u32)> {
        let mut outermost = None;
        if outer {
            if let Ok(mut frames) = self.loader.find_frames(vaddr) {
                while let Ok(Some(f)) = frames.next() {
                    outermost = f.location.or(outermost);
                }
            }
        }
        let loc = match outermost {
            Some(l) => l,
            None => self.loader.find_location(vaddr).ok()??,
        };
        Some((loc.file?.to_string(), loc.line.unwrap_or(0)))
    }

    /// The inline chain at link-time address `vaddr` (I2), innermost
    /// first: each frame's function (raw name) and its line there; the
    /// first frame's line is the code's, each other frame's the line where
    /// the frame before it was inlined. Empty without debug information
    /// for the address; one frame where nothing is inlined.
    pub fn frames(&self, vaddr: u64) -> Vec<Frame> {
        let mut out = Vec::new();
        if let Ok(mut frames) = self.loader.find_frames(vaddr) {
            while let Ok(Some(f)) = frames.next() {
                let function = f
                    .function
                    .as_ref()
                    .and_then(|n| n.raw_name().ok())
                    .map(|n| n.into_owned());
                let (file, line) = match &f.location {
                    Some(l) => (l.file.map(str::to_string), l.line.unwrap_or(0)),
                    None => (None, 0),
                };
                out.push(Frame {
                    function,
                    file,
                    line,
                });
            }
        }
        out
    }

    /// Every row of the line tables in link-time addresses `lo..hi`
    /// (I2), by address: line 0 (code no source line made) left out.
    pub fn rows(&self, lo: u64, hi: u64) -> Rows {
        let mut rows = Rows::default();
        let Ok(iter) = self.loader.find_location_range(lo, hi) else {
            return rows;
        };
        let mut index: std::collections::HashMap<&str, u32> = Default::default();
        for (addr, len, loc) in iter {
            let (Some(file), Some(line)) = (loc.file, loc.line.filter(|&l| l > 0)) else {
                continue;
            };
            let f = *index.entry(file).or_insert_with(|| {
                rows.files.push(file.to_string());
                rows.files.len() as u32 - 1
            });
            rows.rows.push(Row {
                addr,
                len,
                file: f,
                line,
            });
        }
        rows.rows.sort_unstable_by_key(|r| r.addr);
        rows
    }
}

/// One frame of an inline chain ([`Lines::frames`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The function's raw (mangled) name, if the DWARF names it.
    pub function: Option<String>,
    pub file: Option<String>,
    /// 0 where no line is known.
    pub line: u32,
}

/// Line-table rows ([`Lines::rows`]): the files, and the rows naming them
/// by index.
#[derive(Debug, Default)]
pub struct Rows {
    pub files: Vec<String>,
    pub rows: Vec<Row>,
}

/// Code at `addr..addr + len` is line `line` of `files[file]`.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    pub addr: u64,
    pub len: u64,
    pub file: u32,
    pub line: u32,
}

impl Rows {
    /// The row holding address `addr`.
    pub fn at(&self, addr: u64) -> Option<&Row> {
        let i = self
            .rows
            .partition_point(|r| r.addr <= addr)
            .checked_sub(1)?;
        let r = &self.rows[i];
        (addr - r.addr < r.len.max(1)).then_some(r)
    }
}
