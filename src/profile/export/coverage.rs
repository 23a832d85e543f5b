//! Exact line coverage of any binary built with `-g`, no rebuild: lcov
//! tracefiles (`genhtml`, editors' coverage gutters) and Cobertura XML (CI
//! servers), from the profile's block counts and the modules' DWARF line
//! tables (lines.rs).
//!
//! I1: an instruction ran as often as the executed blocks holding it
//!     (blocks overlap where code was entered at a label inside another
//!     block), so every count is exact. A line's hits in one process are
//!     the most any of its instructions in one function ran: a loop
//!     body's line counts its iterations, a `for` line the iterations and
//!     one more, as gcov's do (a function's `.cold` part is the
//!     function); the copies of one line in several functions (an inline
//!     function inlined into two callers, a line in two modules) add up,
//!     as gcov adds up a header line's. A process tree's
//!     profiles (one per process) add up.
//! I2: a line is found where the line tables give it code, in the whole
//!     module: lines whose code never ran are there with 0 hits. Line 0
//!     (code the compiler made without a source line) is no line.
//! I3: a function is a symbol whose entry has a line; its count is the
//!     executions of its entry instruction (calls and tail calls alike).
//!     Its line is where DWARF declares it (decl.rs), as gcov's; the
//!     line-table row at its entry where the declaration is not known
//!     or in another file.
//! I5: branches are the conditional jumps the module's code holds (each
//!     line-table row decoded from the file), so one that never ran is
//!     found too (lcov's `-`, Cobertura's uncovered condition). Each has
//!     two: taken (0) and not taken (1), with the exact counts of the
//!     blocks ending in it. A line's jumps are numbered in address order
//!     within the process (lcov's block number), and add up by number
//!     across a process tree.
//! I4: source files this machine cannot read are left out (`genhtml`
//!     stops at a missing one), with a warning naming the program's and
//!     one counting each other module's (libc's line tables, from
//!     libc6-dbg, name glibc's build tree); so are
//!     files under `/usr/` (system headers, Debian's library sources)
//!     unless asked for (`--system-sources`), as `lcov --remove` users do.
//!
//! A block a fatal fault stopped inside counts as run to its end (the
//! profile does not say where it stopped).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write;

use iced_x86::{Decoder, DecoderOptions, FlowControl};
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, Event};

use super::images::{Image, Images};
use super::ExportError;
use crate::profile::names::display;
use crate::profile::Profile;

/// Line and function counts per source file.
#[derive(Debug, Default)]
pub struct Coverage {
    pub files: BTreeMap<String, FileCoverage>,
    /// The first profile's program, for the tracefile's test name.
    program: String,
    /// The source files the profiles' programs' own line tables name
    /// (I4: what a warning names when they cannot be read).
    program_files: BTreeSet<String>,
    /// For every other file, the first module whose line tables name it.
    module_of: BTreeMap<String, String>,
}

/// The source files [`Coverage::keep_readable`] left out because this
/// machine cannot read them (I4): those of the profiled programs, and how
/// many of each other module (libc's line tables name glibc's build
/// tree).
#[derive(Debug, Default)]
pub struct Unreadable {
    pub program: Vec<String>,
    pub modules: BTreeMap<String, usize>,
}

impl Unreadable {
    /// How many files, in all.
    pub fn count(&self) -> usize {
        self.program.len() + self.modules.values().sum::<usize>()
    }
}

#[derive(Debug, Default, Clone)]
pub struct FileCoverage {
    /// Line → hits (I1).
    pub lines: BTreeMap<u32, u64>,
    /// Function name → (line of its entry, entries) (I3).
    pub functions: BTreeMap<String, (u32, u64)>,
    /// (line, jump of the line, 0 taken / 1 not) → times, None for a
    /// jump that never ran (I5).
    pub branches: BTreeMap<(u32, u32, u8), Option<u64>>,
}

impl FileCoverage {
    /// Branches found, and those taken at least once.
    fn branch_totals(&self) -> (usize, usize) {
        let hit = self.branches.values().filter(|n| n.is_some_and(|n| n > 0));
        (self.branches.len(), hit.count())
    }
}

/// (taken, not taken) of the conditional jumps that ended executed
/// blocks, by the address after the jump (I5).
fn jump_counts(doc: &Profile, img: &Image) -> HashMap<u64, (u64, u64)> {
    let mut m: HashMap<u64, (u64, u64)> = HashMap::new();
    for b in doc.blocks.iter().filter(|b| *b.module == *img.name) {
        if let (Some(t), Some(f)) = (b.taken, b.fallthrough) {
            let e = m
                .entry(b.addr.saturating_add(u64::from(b.size)))
                .or_default();
            e.0 += t;
            e.1 += f;
        }
    }
    m
}

/// The conditional jumps in `addr..addr + len` of `img`'s code: the
/// address after each (I5).
fn jumps_in(img: &Image, addr: u64, len: u64) -> Vec<u64> {
    let Some(code) = usize::try_from(len).ok().and_then(|l| img.code(addr, l)) else {
        return Vec::new();
    };
    let mut dec = Decoder::with_ip(64, code, addr, DecoderOptions::NONE);
    let mut v = Vec::new();
    while dec.can_decode() {
        let i = dec.decode();
        if i.is_invalid() {
            break;
        }
        if i.flow_control() == FlowControl::ConditionalBranch {
            v.push(i.next_ip());
        }
    }
    v
}

/// How often each instruction of one module ran: a step function over
/// addresses, from the executed blocks' ranges (I1).
struct Runs {
    /// (address, executions from it to the next step's address).
    steps: Vec<(u64, u64)>,
}

impl Runs {
    fn of(doc: &Profile, img: &Image) -> Runs {
        let mut ev: Vec<(u64, i128)> = Vec::new();
        for b in doc
            .blocks
            .iter()
            .filter(|b| b.count > 0 && *b.module == *img.name)
        {
            ev.push((b.addr, i128::from(b.count)));
            ev.push((
                b.addr.saturating_add(u64::from(b.size)),
                -i128::from(b.count),
            ));
        }
        ev.sort_unstable_by_key(|e| e.0);
        let mut steps: Vec<(u64, u64)> = Vec::with_capacity(ev.len());
        let mut level = 0i128;
        for (addr, d) in ev {
            level += d;
            let v = u64::try_from(level).unwrap_or(0);
            match steps.last_mut() {
                Some(s) if s.0 == addr => s.1 = v,
                _ => steps.push((addr, v)),
            }
        }
        Runs { steps }
    }

    /// Executions of the instruction at `addr`.
    fn at(&self, addr: u64) -> u64 {
        let i = self.steps.partition_point(|s| s.0 <= addr);
        i.checked_sub(1).map_or(0, |i| self.steps[i].1)
    }

    /// The most any instruction in `lo..hi` ran. Steps fall on
    /// instruction boundaries (block starts and ends), so each piece of
    /// the range holds an instruction.
    fn most(&self, lo: u64, hi: u64) -> u64 {
        let from = self.steps.partition_point(|s| s.0 <= lo);
        let inside = self.steps[from..]
            .iter()
            .take_while(|s| s.0 < hi)
            .map(|s| s.1);
        inside.fold(self.at(lo), u64::max)
    }
}

impl Coverage {
    /// Add the counts of one process's profile (I1, I2, I3).
    pub fn add(&mut self, doc: &Profile, images: &Images) {
        if self.program.is_empty() {
            self.program = doc.binary.path.clone();
        }
        // This process's lines: in each function holding code of the
        // line, its most-run instruction (I1).
        let mut lines: HashMap<(&str, u32, usize, &str), u64> = HashMap::new();
        let mut funcs: HashMap<(String, String), (u32, u64)> = HashMap::new();
        // (file, line) → each jump's (taken, not taken) or None (I5).
        type Jumps = Vec<Option<(u64, u64)>>;
        let mut branches: HashMap<(&str, u32), Jumps> = HashMap::new();
        let all_rows: Vec<_> = images.images.iter().map(|i| i.line_rows()).collect();
        for (m, (img, rows)) in images.images.iter().zip(&all_rows).enumerate() {
            if rows.rows.is_empty() {
                continue;
            }
            if img.path == doc.binary.path {
                self.program_files.extend(rows.files.iter().cloned());
            } else {
                for f in &rows.files {
                    if !self.module_of.contains_key(f) {
                        self.module_of.insert(f.clone(), img.name.clone());
                    }
                }
            }
            let runs = Runs::of(doc, img);
            let counts = jump_counts(doc, img);
            for r in &rows.rows {
                let n = runs.most(r.addr, r.addr.saturating_add(r.len.max(1)));
                let key = (rows.files[r.file as usize].as_str(), r.line);
                // A function's cold part (`main.cold`) is the function.
                let holder = img
                    .symbols
                    .function(r.addr)
                    .map_or("", |(_, name)| name.split(".cold").next().unwrap_or(name));
                let hits = lines.entry((key.0, key.1, m, holder)).or_insert(0);
                *hits = (*hits).max(n);
                for after in jumps_in(img, r.addr, r.len) {
                    let c = counts.get(&after).copied();
                    branches.entry(key).or_default().push(c);
                }
            }
            for (start, _, name) in img.symbols.functions() {
                if start < img.start || start >= img.end || img.in_plt(start) {
                    continue;
                }
                let Some(r) = rows.at(start) else { continue };
                let file = &rows.files[r.file as usize];
                let line = img.decl_line(start, file).unwrap_or(r.line);
                let key = (file.clone(), display(name).into_owned());
                let f = funcs.entry(key).or_insert((line, 0));
                f.1 = f.1.max(runs.at(start));
            }
        }
        for ((file, line, ..), n) in lines {
            let f = self.files.entry(file.to_string()).or_default();
            *f.lines.entry(line).or_insert(0) += n;
        }
        for ((file, name), (line, n)) in funcs {
            let f = self.files.entry(file).or_default();
            f.functions.entry(name).or_insert((line, 0)).1 += n;
        }
        for ((file, line), jumps) in branches {
            let f = self.files.entry(file.to_string()).or_default();
            for (j, c) in jumps.into_iter().enumerate() {
                for (k, n) in [(0u8, c.map(|c| c.0)), (1, c.map(|c| c.1))] {
                    let e = f.branches.entry((line, j as u32, k)).or_insert(None);
                    if let Some(n) = n {
                        *e = Some(e.unwrap_or(0) + n);
                    }
                }
            }
        }
    }

    /// Leave out the files under `/usr/` unless `system`, and those this
    /// machine cannot read (I4): which of the latter, by module.
    pub fn keep_readable(&mut self, system: bool) -> Unreadable {
        if !system {
            self.files.retain(|f, _| !f.starts_with("/usr/"));
        }
        let readable =
            |f: &str| std::fs::File::open(f).is_ok_and(|h| h.metadata().is_ok_and(|m| m.is_file()));
        let mut gone = Unreadable::default();
        self.files.retain(|f, _| {
            if readable(f) {
                return true;
            }
            if self.program_files.contains(f) {
                gone.program.push(f.clone());
            } else {
                let module = self.module_of.get(f).cloned().unwrap_or_default();
                *gone.modules.entry(module).or_insert(0) += 1;
            }
            false
        });
        gone
    }

    /// Lines found and lines hit over every file.
    pub fn totals(&self) -> (usize, usize) {
        self.files.values().fold((0, 0), |(found, hit), f| {
            let h = f.lines.values().filter(|&&n| n > 0).count();
            (found + f.lines.len(), hit + h)
        })
    }

    /// Branches found and branches taken over every file.
    fn branch_totals(&self) -> (usize, usize) {
        self.files.values().fold((0, 0), |(a, b), f| {
            let (found, hit) = f.branch_totals();
            (a + found, b + hit)
        })
    }

    /// An lcov test name: letters, digits and `_` only.
    fn test_name(&self) -> String {
        let base = self.program.rsplit('/').next().unwrap_or("");
        base.chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect()
    }

    /// The lcov tracefile (geninfo's format, which genhtml reads).
    pub fn write_lcov(&self, out: &mut dyn Write) -> Result<(), ExportError> {
        writeln!(out, "TN:{}", self.test_name())?;
        for (file, f) in &self.files {
            writeln!(out, "SF:{file}")?;
            let mut by_line: Vec<(&String, &(u32, u64))> = f.functions.iter().collect();
            by_line.sort_by_key(|(name, (line, _))| (*line, *name));
            for (name, (line, _)) in &by_line {
                writeln!(out, "FN:{line},{name}")?;
            }
            for (name, (_, n)) in &by_line {
                writeln!(out, "FNDA:{n},{name}")?;
            }
            let hit = by_line.iter().filter(|(_, (_, n))| *n > 0).count();
            writeln!(out, "FNF:{}\nFNH:{hit}", by_line.len())?;
            for (&(line, jump, k), n) in &f.branches {
                match n {
                    Some(n) => writeln!(out, "BRDA:{line},{jump},{k},{n}")?,
                    None => writeln!(out, "BRDA:{line},{jump},{k},-")?,
                }
            }
            let (found, taken) = f.branch_totals();
            writeln!(out, "BRF:{found}\nBRH:{taken}")?;
            for (line, n) in &f.lines {
                writeln!(out, "DA:{line},{n}")?;
            }
            let lh = f.lines.values().filter(|&&n| n > 0).count();
            writeln!(out, "LF:{}\nLH:{lh}\nend_of_record", f.lines.len())?;
        }
        Ok(())
    }

    /// Cobertura XML (version 4's DTD, as gcovr and coverage.py write it):
    /// one package per folder, one class per source file, with its
    /// methods, lines and their conditions (I5).
    pub fn write_cobertura(&self, out: &mut dyn Write) -> Result<(), ExportError> {
        let root = common_folder(self.files.keys().map(String::as_str));
        let mut packages: BTreeMap<String, Vec<(&str, &FileCoverage)>> = BTreeMap::new();
        for (file, f) in &self.files {
            let rel = file
                .strip_prefix(&root)
                .unwrap_or(file)
                .trim_start_matches('/');
            let dir = rel.rsplit_once('/').map_or("", |(d, _)| d);
            packages
                .entry(dir.replace('/', "."))
                .or_default()
                .push((rel, f));
        }
        let (found, hit) = self.totals();
        let (bfound, bhit) = self.branch_totals();
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let mut w = quick_xml::Writer::new_with_indent(out, b' ', 2);
        let io = |e: std::io::Error| ExportError::Io(e);
        w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))
            .map_err(io)?;
        w.write_event(Event::DocType(quick_xml::events::BytesText::from_escaped(
            "coverage SYSTEM \"http://cobertura.sourceforge.net/xml/coverage-04.dtd\"",
        )))
        .map_err(io)?;
        let cov = BytesStart::new("coverage").with_attributes([
            ("line-rate", rate(hit, found).as_str()),
            ("branch-rate", rate(bhit, bfound).as_str()),
            ("lines-covered", hit.to_string().as_str()),
            ("lines-valid", found.to_string().as_str()),
            ("branches-covered", bhit.to_string().as_str()),
            ("branches-valid", bfound.to_string().as_str()),
            ("complexity", "0"),
            ("version", concat!("hotlift ", env!("CARGO_PKG_VERSION"))),
            ("timestamp", stamp.to_string().as_str()),
        ]);
        w.write_event(Event::Start(cov.borrow())).map_err(io)?;
        open(&mut w, "sources")?;
        w.create_element("source")
            .write_text_content(quick_xml::events::BytesText::new(&root))
            .map_err(io)?;
        close(&mut w, "sources")?;
        open(&mut w, "packages")?;
        for (name, files) in &packages {
            let (pf, ph) = files.iter().fold((0, 0), |(a, b), (_, f)| {
                (
                    a + f.lines.len(),
                    b + f.lines.values().filter(|&&n| n > 0).count(),
                )
            });
            let (bf, bh) = files.iter().fold((0, 0), |(a, b), (_, f)| {
                let (found, hit) = f.branch_totals();
                (a + found, b + hit)
            });
            let pkg = BytesStart::new("package").with_attributes([
                ("name", name.as_str()),
                ("line-rate", rate(ph, pf).as_str()),
                ("branch-rate", rate(bh, bf).as_str()),
                ("complexity", "0"),
            ]);
            w.write_event(Event::Start(pkg)).map_err(io)?;
            open(&mut w, "classes")?;
            for (rel, f) in files {
                write_class(&mut w, rel, f)?;
            }
            close(&mut w, "classes")?;
            close(&mut w, "package")?;
        }
        close(&mut w, "packages")?;
        close(&mut w, "coverage")?;
        writeln!(w.get_mut())?;
        Ok(())
    }
}

type XmlWriter<'a> = quick_xml::Writer<&'a mut dyn Write>;

fn open(w: &mut XmlWriter, tag: &str) -> Result<(), ExportError> {
    w.write_event(Event::Start(BytesStart::new(tag)))
        .map_err(ExportError::Io)
}

fn close(w: &mut XmlWriter, tag: &str) -> Result<(), ExportError> {
    w.write_event(Event::End(BytesEnd::new(tag)))
        .map_err(ExportError::Io)
}

/// `hit / found` as Cobertura writes rates (1 for nothing found).
fn rate(hit: usize, found: usize) -> String {
    if found == 0 {
        return "1".into();
    }
    format!("{:.4}", hit as f64 / found as f64)
}

/// A `<line>` element; with `branches` (found, taken) a line of
/// conditions.
fn write_line(
    w: &mut XmlWriter,
    line: u32,
    hits: u64,
    branches: Option<(usize, usize)>,
) -> Result<(), ExportError> {
    let e = BytesStart::new("line").with_attributes([
        ("number", line.to_string().as_str()),
        ("hits", hits.to_string().as_str()),
    ]);
    let Some((found, taken)) = branches else {
        let e = e.with_attributes([("branch", "false")]);
        return w.write_event(Event::Empty(e)).map_err(ExportError::Io);
    };
    let pct = format!("{}%", taken * 100 / found.max(1));
    let cc = format!("{pct} ({taken}/{found})");
    let e = e.with_attributes([("branch", "true"), ("condition-coverage", cc.as_str())]);
    w.write_event(Event::Start(e)).map_err(ExportError::Io)?;
    open(w, "conditions")?;
    let c = BytesStart::new("condition").with_attributes([
        ("number", "0"),
        ("type", "jump"),
        ("coverage", pct.as_str()),
    ]);
    w.write_event(Event::Empty(c)).map_err(ExportError::Io)?;
    close(w, "conditions")?;
    close(w, "line")
}

/// One source file as a `<class>`: its methods (each with its entry
/// line) and its lines.
fn write_class(w: &mut XmlWriter, rel: &str, f: &FileCoverage) -> Result<(), ExportError> {
    let found = f.lines.len();
    let hit = f.lines.values().filter(|&&n| n > 0).count();
    let (bfound, bhit) = f.branch_totals();
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let class = BytesStart::new("class").with_attributes([
        ("name", name),
        ("filename", rel),
        ("line-rate", rate(hit, found).as_str()),
        ("branch-rate", rate(bhit, bfound).as_str()),
        ("complexity", "0"),
    ]);
    w.write_event(Event::Start(class))
        .map_err(ExportError::Io)?;
    open(w, "methods")?;
    let mut methods: Vec<(&String, &(u32, u64))> = f.functions.iter().collect();
    methods.sort_by_key(|(name, (line, _))| (*line, *name));
    for (name, &(line, n)) in methods {
        let m = BytesStart::new("method").with_attributes([
            ("name", name.as_str()),
            ("signature", ""),
            ("line-rate", if n > 0 { "1" } else { "0" }),
            ("branch-rate", "0"),
            ("complexity", "0"),
        ]);
        w.write_event(Event::Start(m)).map_err(ExportError::Io)?;
        open(w, "lines")?;
        write_line(w, line, n, None)?;
        close(w, "lines")?;
        close(w, "method")?;
    }
    close(w, "methods")?;
    open(w, "lines")?;
    // Branches per line: (found, taken).
    let mut per_line: BTreeMap<u32, (usize, usize)> = BTreeMap::new();
    for (&(line, _, _), n) in &f.branches {
        let e = per_line.entry(line).or_default();
        e.0 += 1;
        e.1 += usize::from(n.is_some_and(|n| n > 0));
    }
    for (&line, &n) in &f.lines {
        write_line(w, line, n, per_line.get(&line).copied())?;
    }
    close(w, "lines")?;
    close(w, "class")
}

/// The deepest folder holding every file (`/` when they share none).
fn common_folder<'a>(mut files: impl Iterator<Item = &'a str>) -> String {
    let Some(first) = files.next() else {
        return "/".into();
    };
    let mut root: Vec<&str> = first.split('/').collect();
    root.pop();
    for f in files {
        let dir: Vec<&str> = f.split('/').collect();
        let same = root
            .iter()
            .zip(&dir[..dir.len() - 1])
            .take_while(|(a, b)| a == b)
            .count();
        root.truncate(same);
    }
    let s = root.join("/");
    if s.is_empty() {
        "/".into()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_take_the_most_run_instruction_of_a_range() {
        // Blocks 0x10..0x20 (5 runs) and 0x18..0x20 (entered at a label
        // inside it, 7 runs): 0x18.. ran 12 times.
        let runs = Runs {
            steps: vec![(0x10, 5), (0x18, 12), (0x20, 0)],
        };
        assert_eq!(runs.at(0x0f), 0);
        assert_eq!(runs.at(0x10), 5);
        assert_eq!(runs.most(0x10, 0x18), 5);
        assert_eq!(runs.most(0x10, 0x19), 12);
        assert_eq!(runs.most(0x1c, 0x24), 12);
        assert_eq!(runs.most(0x20, 0x30), 0);
    }

    #[test]
    fn common_folder_of_sources() {
        let f = |v: &[&str]| common_folder(v.iter().copied());
        assert_eq!(f(&["/a/b/x.c", "/a/b/c/y.h"]), "/a/b");
        assert_eq!(f(&["/a/x.c", "/usr/include/y.h"]), "/");
        assert_eq!(f(&["/a/b/x.c"]), "/a/b");
        assert_eq!(f(&[]), "/");
    }
}
