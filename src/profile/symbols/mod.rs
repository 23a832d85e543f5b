//! Symbol names for guest addresses, from the ELF symbol tables: `.symtab`
//! and `.dynsym` of the image's file, plus the `.symtab` of its separate
//! debug file (`/usr/lib/debug/.build-id/xx/yyyy.debug`) when one is
//! installed (Debian's `-dbg`/`-dbgsym` packages), which names the local
//! functions a stripped library leaves out. PLT entries are named after
//! the function they jump to (`printf@plt`), as objdump names them, by the
//! GOT slot each stub's jump reads ([`plt_names`]); an `IRELATIVE` slot's
//! stub after the ifunc whose resolver it calls (`strlen@plt`), also in a
//! static program, whose `.plt` holds only such stubs and which has no
//! `.dynsym` (objdump leaves those stubs unnamed). The section reader and
//! goblin's whole parse name the slots with one helper
//! ([`slot_names`]).

use goblin::elf::reloc::{R_X86_64_GLOB_DAT, R_X86_64_IRELATIVE};
use goblin::elf::sym::{STT_FUNC, STT_GNU_IFUNC};
use goblin::elf::Elf;
use hashbrown::HashMap;

/// Where separate debug files are found by build id.
const DEBUG_DIR: &str = "/usr/lib/debug/.build-id";

/// Function symbols of the guest image, sorted by address.
#[derive(Debug, Default)]
pub struct Symbols {
    /// Load bias of the module (0 for non-PIE).
    pub base: u64,
    funcs: Vec<Func>,
    /// Every name, one after another (`Func::name`): libc and its debug
    /// file have 13,000 function symbols, and a `String` each was most of
    /// the time every process's profile spent on them.
    names: String,
    /// The other names of a start (`malloc` beside `__libc_malloc`), for
    /// [`Symbols::address_of`] only.
    aliases: Vec<Func>,
}

/// A function symbol: start, size and its name's range in `names`.
#[derive(Debug, Clone, Copy)]
struct Func {
    start: u64,
    size: u64,
    name: (u32, u32),
}

/// Symbols as they are read: names appended to one arena.
#[derive(Default)]
struct Reader {
    funcs: Vec<Func>,
    names: String,
}

impl Reader {
    /// Add the function symbols of ELF file `bytes` relocated by `base`
    /// (from the section headers; goblin's whole parse for a file they do
    /// not describe).
    fn read_elf(&mut self, bytes: &[u8], base: u64) {
        let before = (self.funcs.len(), self.names.len());
        if section_functions(self, bytes, base).is_none() {
            self.funcs.truncate(before.0);
            self.names.truncate(before.1);
            for (start, size, name) in goblin_functions(bytes, base) {
                self.push(start, size, &name);
            }
        }
    }

    fn push(&mut self, start: u64, size: u64, name: &str) {
        let at = self.names.len() as u32;
        self.names.push_str(name);
        self.funcs.push(Func {
            start,
            size,
            name: (at, name.len() as u32),
        });
    }

    /// Sorted by start, one symbol per start: the least by (size, name).
    fn finish(mut self, base: u64) -> Symbols {
        let names = &self.names;
        let name = |f: &Func| &names[f.name.0 as usize..(f.name.0 + f.name.1) as usize];
        // By a plain integer key (names compared only between symbols of
        // one start, below): a comparison closure over names was half of
        // the time every profile spent on symbols.
        self.funcs
            .sort_unstable_by_key(|f| u128::from(f.start) << 64 | u128::from(f.size));
        let mut kept = 0;
        let mut aliases = Vec::new();
        for i in 0..self.funcs.len() {
            let f = self.funcs[i];
            if kept > 0 && self.funcs[kept - 1].start == f.start {
                let k = &mut self.funcs[kept - 1];
                if (f.size, name(&f)) < (k.size, name(k)) {
                    aliases.push(*k);
                    *k = f;
                } else {
                    aliases.push(f);
                }
                continue;
            }
            self.funcs[kept] = f;
            kept += 1;
        }
        self.funcs.truncate(kept);
        Symbols {
            base,
            funcs: self.funcs,
            names: self.names,
            aliases,
        }
    }
}

impl Symbols {
    /// Read `.symtab` and `.dynsym` of `bytes`, relocated by `base`.
    /// Unparseable input gives an empty table, never an error. Read from
    /// the section headers directly ([`section_functions`]): goblin's
    /// whole-file parse and string-table lookups took 2 ms of libc's
    /// debug file, every process's profile paying them.
    pub fn from_elf(bytes: &[u8], base: u64) -> Symbols {
        Symbols::from_elfs(&[bytes], base)
    }

    /// The symbols of ELF files `files`, all relocated by `base`, as one
    /// table: a stripped file (its PLT stubs' names) and its separate
    /// debug file (its functions; the debug file's PLT holds no bytes).
    pub fn from_elfs(files: &[&[u8]], base: u64) -> Symbols {
        let mut r = Reader::default();
        for bytes in files {
            r.read_elf(bytes, base);
        }
        r.finish(base)
    }

    fn name_of(&self, f: &Func) -> &str {
        &self.names[f.name.0 as usize..(f.name.0 + f.name.1) as usize]
    }

    /// Every function symbol: (start, size, name), by start.
    pub fn functions(&self) -> impl Iterator<Item = (u64, u64, &str)> {
        self.funcs
            .iter()
            .map(|f| (f.start, f.size, self.name_of(f)))
    }

    /// Every symbol: (start, size, name), by start.
    #[cfg(test)]
    fn entries(&self) -> Vec<(u64, u64, String)> {
        let named = |(start, size, name): (u64, u64, &str)| (start, size, name.to_string());
        self.functions().map(named).collect()
    }

    /// No function symbol of the file's own: a stripped file, named at
    /// most its PLT stubs (`qsort@plt`, from its relocations).
    pub fn is_empty(&self) -> bool {
        self.funcs.iter().all(|f| self.name_of(f).ends_with("@plt"))
    }

    /// Where the function named `name` starts (under any of the names of
    /// its start), if this file defines one.
    pub fn address_of(&self, name: &str) -> Option<u64> {
        self.funcs
            .iter()
            .chain(&self.aliases)
            .find(|f| self.name_of(f) == name)
            .map(|f| f.start)
    }

    /// The function containing `addr`: its start address and name.
    pub fn function(&self, addr: u64) -> Option<(u64, &str)> {
        let i = self
            .funcs
            .partition_point(|f| f.start <= addr)
            .checked_sub(1)?;
        let f = &self.funcs[i];
        (f.size == 0 || addr - f.start < f.size).then_some((f.start, self.name_of(f)))
    }

    /// The symbols of an image file's `bytes` relocated by `base`, with its
    /// debug file's when one is installed. `build_id` is the image's as it
    /// was mapped: a file whose build id differs (replaced since) gives no
    /// symbols.
    pub fn from_file(bytes: &[u8], base: u64, build_id: Option<&[u8]>) -> Symbols {
        let mut r = Reader::default();
        r.read_elf(bytes, base);
        let Some(id) = build_id.filter(|id| id.len() >= 2) else {
            return r.finish(base);
        };
        if file_build_id(bytes).is_some_and(|f| f != id) {
            return Symbols {
                base,
                ..Symbols::default()
            };
        }
        let debug = Symbols::debug_file(id).expect("a build id of two bytes or more");
        if let Ok(dbg) = read_for_symbols(&debug) {
            r.read_elf(&dbg, base);
        }
        r.finish(base)
    }

    /// The build-id debug file [`Symbols::from_file`] reads beside an
    /// image of build id `id`.
    pub fn debug_file(id: &[u8]) -> Option<std::path::PathBuf> {
        (id.len() >= 2).then(|| {
            let hex = hex::encode(id);
            format!("{DEBUG_DIR}/{}/{}.debug", &hex[..2], &hex[2..]).into()
        })
    }

    /// The table as bytes, its addresses less its base, for the cache
    /// directory ([`Symbols::from_bytes`] reads it back at any base).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(
            12 + 24 * (self.funcs.len() + self.aliases.len()) + self.names.len(),
        );
        for n in [self.funcs.len(), self.aliases.len(), self.names.len()] {
            b.extend_from_slice(&(n as u32).to_le_bytes());
        }
        for f in self.funcs.iter().chain(&self.aliases) {
            b.extend_from_slice(&f.start.wrapping_sub(self.base).to_le_bytes());
            b.extend_from_slice(&f.size.to_le_bytes());
            b.extend_from_slice(&f.name.0.to_le_bytes());
            b.extend_from_slice(&f.name.1.to_le_bytes());
        }
        b.extend_from_slice(self.names.as_bytes());
        b
    }

    /// A table [`Symbols::to_bytes`] wrote, relocated by `base`; None for
    /// bytes it could not have written (names out of range or not UTF-8,
    /// functions out of order).
    pub fn from_bytes(b: &[u8], base: u64) -> Option<Symbols> {
        let word = |at: usize| -> Option<u32> {
            Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
        };
        let (nf, na, nn) = (word(0)? as usize, word(4)? as usize, word(8)? as usize);
        let table = 12 + 24 * (nf.checked_add(na)?);
        if b.len() != table.checked_add(nn)? {
            return None;
        }
        let names = std::str::from_utf8(&b[table..]).ok()?.to_string();
        let func = |i: usize| -> Option<Func> {
            let at = 12 + 24 * i;
            let q =
                |o: usize| u64::from_le_bytes(b[at + o..at + o + 8].try_into().expect("8 bytes"));
            let name = (word(at + 16)?, word(at + 20)?);
            let end = name.0 as usize + name.1 as usize;
            names.get(name.0 as usize..end)?;
            Some(Func {
                start: q(0).wrapping_add(base),
                size: q(8),
                name,
            })
        };
        let funcs: Vec<Func> = (0..nf).map(func).collect::<Option<_>>()?;
        let aliases = (nf..nf + na).map(func).collect::<Option<_>>()?;
        if !funcs.windows(2).all(|w| w[0].start < w[1].start) {
            return None;
        }
        Some(Symbols {
            base,
            funcs,
            names,
            aliases,
        })
    }

    /// "name" or "name+0x12" for the function containing `addr`, written
    /// into a string made to size: through `format!`, a third of listing
    /// python's 38,000 blocks for its profile (4.5 ms against 2.0).
    pub fn name(&self, addr: u64) -> Option<String> {
        use std::fmt::Write;
        let (start, name) = self.function(addr)?;
        let off = addr - start;
        let mut s = String::with_capacity(name.len() + 19);
        s.push_str(name);
        if off != 0 {
            let _ = write!(s, "+{off:#x}");
        }
        Some(s)
    }
}

/// The parts of ELF file `path` that [`Symbols::from_file`] reads, in a
/// buffer of the file's size whose other bytes are zero: the headers,
/// the program and section header tables, every section but code and data
/// (`SHT_PROGBITS`, `SHT_NOBITS`: `.text`, `.rodata`, `.eh_frame`, debug
/// info), and the `PT_NOTE`, `PT_DYNAMIC` and `PT_INTERP` segments. A
/// profile of a run that only touched libc read all 2 MB of it, and of
/// python 9 MB of files: a tenth of each is symbols. A file without
/// section headers is read whole. The zero-filled buffer's untouched pages
/// are never faulted in.
pub fn read_for_symbols(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    use goblin::elf::program_header::{ProgramHeader, PT_DYNAMIC, PT_INTERP, PT_NOTE};
    use goblin::elf::section_header::{SectionHeader, SHT_NOBITS, SHT_PROGBITS};
    use std::os::unix::fs::FileExt;
    let f = std::fs::File::open(path)?;
    let size = usize::try_from(f.metadata()?.len()).unwrap_or(usize::MAX);
    let mut buf = vec![0u8; size];
    let read = |buf: &mut [u8], at: u64, len: u64| -> std::io::Result<()> {
        let start = usize::try_from(at).unwrap_or(usize::MAX).min(buf.len());
        let end = start
            .saturating_add(usize::try_from(len).unwrap_or(usize::MAX))
            .min(buf.len());
        f.read_exact_at(&mut buf[start..end], start as u64)
    };
    // The 64-bit ELF header.
    read(&mut buf, 0, 64)?;
    let Ok(h) = Elf::parse_header(&buf) else {
        return Ok(buf);
    };
    if h.e_shnum == 0 || h.e_shoff == 0 {
        read(&mut buf, 0, size as u64)?;
        return Ok(buf);
    }
    let ctx = goblin::container::Ctx::new(
        goblin::container::Container::Big,
        goblin::container::Endian::Little,
    );
    read(
        &mut buf,
        h.e_phoff,
        u64::from(h.e_phnum) * u64::from(h.e_phentsize),
    )?;
    read(
        &mut buf,
        h.e_shoff,
        u64::from(h.e_shnum) * u64::from(h.e_shentsize),
    )?;
    let phdrs =
        ProgramHeader::parse(&buf, h.e_phoff as usize, h.e_phnum as usize, ctx).unwrap_or_default();
    let shdrs =
        SectionHeader::parse(&buf, h.e_shoff as usize, h.e_shnum as usize, ctx).unwrap_or_default();
    for p in phdrs
        .iter()
        .filter(|p| matches!(p.p_type, PT_NOTE | PT_DYNAMIC | PT_INTERP))
    {
        read(&mut buf, p.p_offset, p.p_filesz)?;
    }
    for s in shdrs
        .iter()
        .filter(|s| s.sh_type != SHT_PROGBITS && s.sh_type != SHT_NOBITS)
    {
        read(&mut buf, s.sh_offset, s.sh_size)?;
    }
    // The PLT stubs, whose jumps name their GOT slots (plt_names).
    let shstrs = shdrs.get(usize::from(h.e_shstrndx)).and_then(|sh| {
        let start = usize::try_from(sh.sh_offset).ok()?;
        buf.get(start..start.checked_add(usize::try_from(sh.sh_size).ok()?)?)
    });
    let plts: Vec<(u64, u64)> = shdrs
        .iter()
        .filter(|sh| sh.sh_type == SHT_PROGBITS)
        .filter(|sh| {
            shstrs
                .and_then(|t| name_at(t, sh.sh_name))
                .is_some_and(|n| matches!(n, ".plt" | ".plt.sec" | ".plt.got"))
        })
        .map(|sh| (sh.sh_offset, sh.sh_size))
        .collect();
    for (at, len) in plts {
        read(&mut buf, at, len)?;
    }
    Ok(buf)
}

/// A function symbol: a function or an IFUNC, at a non-zero address.
fn is_function(s: &goblin::elf::Sym) -> bool {
    (s.is_function() || s.st_type() == STT_GNU_IFUNC) && s.st_value != 0
}

/// The NUL-terminated UTF-8 name at `at` in string table `tab`.
fn name_at(tab: &[u8], at: usize) -> Option<&str> {
    // CStr's search for the NUL goes a word at a time.
    std::ffi::CStr::from_bytes_until_nul(tab.get(at..)?)
        .ok()?
        .to_str()
        .ok()
}

/// The function symbols of a 64-bit little-endian ELF file with section
/// headers: every `SHT_SYMTAB` and `SHT_DYNSYM` section, names from the
/// string table each links, and `name@plt` for the PLT entries
/// ([`plt_names`]). None for any other file (goblin's whole parse then
/// reads it, [`goblin_functions`]).
fn section_functions(r: &mut Reader, bytes: &[u8], base: u64) -> Option<()> {
    use goblin::container::{Container, Ctx, Endian};
    use goblin::elf::section_header::{
        SectionHeader, SHT_DYNSYM, SHT_PROGBITS, SHT_RELA, SHT_SYMTAB,
    };
    use goblin::elf::sym::Symtab;
    let h = Elf::parse_header(bytes).ok()?;
    let ctx = Ctx::new(Container::Big, Endian::Little);
    if h.e_ident[goblin::elf::header::EI_CLASS] != goblin::elf::header::ELFCLASS64
        || h.e_ident[goblin::elf::header::EI_DATA] != goblin::elf::header::ELFDATA2LSB
        || h.e_shnum == 0
        || usize::from(h.e_shentsize) != goblin::elf::section_header::section_header64::SIZEOF_SHDR
    {
        return None;
    }
    let shdrs = SectionHeader::parse(bytes, h.e_shoff as usize, h.e_shnum as usize, ctx).ok()?;
    let section = |sh: &SectionHeader| {
        let start = usize::try_from(sh.sh_offset).ok()?;
        bytes.get(start..start.checked_add(usize::try_from(sh.sh_size).ok()?)?)
    };
    let symtab = |sh: &SectionHeader| -> Option<(Symtab<'_>, &[u8])> {
        let strs = section(shdrs.get(sh.sh_link as usize)?)?;
        let n = section(sh)?.len() / goblin::elf::sym::sym64::SIZEOF_SYM;
        Some((
            Symtab::parse(bytes, sh.sh_offset as usize, n, ctx).ok()?,
            strs,
        ))
    };
    let mut dynamic = None;
    // IRELATIVE targets: an ifunc's value is its resolver, what the
    // relocation's addend names.
    let mut ifuncs: HashMap<u64, (u8, &str)> = HashMap::new();
    for sh in &shdrs {
        if sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM {
            continue;
        }
        let Some((syms, strs)) = symtab(sh) else {
            continue;
        };
        // The 24-byte Elf64_Sym records read in place (scroll's parse of
        // each was most of a debug file's 10,000 symbols); the same test
        // as is_function's.
        let records = section(sh)?;
        for s in records.chunks_exact(goblin::elf::sym::sym64::SIZEOF_SYM) {
            let word = |at: usize| u64::from_le_bytes(s[at..at + 8].try_into().expect("8 bytes"));
            let (info, value, size) = (s[4], word(8), word(16));
            let kind = info & 0xf;
            if (kind != STT_FUNC && kind != STT_GNU_IFUNC) || value == 0 {
                continue;
            }
            let at = u32::from_le_bytes(s[..4].try_into().expect("4 bytes"));
            if let Some(name) = name_at(strs, at as usize) {
                r.push(base.wrapping_add(value), size, name);
                if kind == STT_GNU_IFUNC {
                    keep_ifunc(&mut ifuncs, value, info >> 4, name);
                }
            }
        }
        if sh.sh_type == SHT_DYNSYM {
            dynamic = Some((syms, strs));
        }
    }
    // PLT stubs, also in a static program (no `.dynsym`: its `.plt` holds
    // the stubs of its IRELATIVE slots).
    let shstrs = shdrs.get(usize::from(h.e_shstrndx)).and_then(section);
    let named = |name: &str, kind: u32| {
        shdrs.iter().find(|sh| {
            sh.sh_type == kind && shstrs.and_then(|t| name_at(t, sh.sh_name)) == Some(name)
        })
    };
    let relocs = |name: &str| {
        named(name, SHT_RELA).and_then(|sh| {
            goblin::elf::RelocSection::parse(
                bytes,
                sh.sh_offset as usize,
                sh.sh_size as usize,
                true,
                ctx,
            )
            .ok()
        })
    };
    let (plt, dyn_) = (relocs(".rela.plt"), relocs(".rela.dyn"));
    let symbol = |i: usize| {
        let (syms, strs) = dynamic.as_ref()?;
        name_at(strs, syms.get(i)?.st_name)
    };
    let stubs = [".plt.sec", ".plt", ".plt.got"]
        .map(|n| named(n, SHT_PROGBITS).map(|sh| (sh, section(sh))));
    let slots = slot_names(
        plt.iter().flat_map(|p| p.iter()),
        dyn_.iter().flat_map(|d| d.iter()),
        &ifuncs,
        symbol,
    );
    for (at, size, name) in plt_names(stubs, &slots, base) {
        r.push(at, size, &name);
    }
    Some(())
}

/// Function symbols and PLT entries as goblin's whole parse of `bytes`
/// finds them (files [`section_functions`] does not read).
fn goblin_functions(bytes: &[u8], base: u64) -> Vec<(u64, u64, String)> {
    let Ok(elf) = Elf::parse(bytes) else {
        return Vec::new();
    };
    let mut funcs = Vec::new();
    for (syms, strs) in [(&elf.syms, &elf.strtab), (&elf.dynsyms, &elf.dynstrtab)] {
        for s in syms.iter().filter(is_function) {
            if let Some(name) = strs.get_at(s.st_name) {
                funcs.push((base.wrapping_add(s.st_value), s.st_size, name.to_string()));
            }
        }
    }
    let section = |name: &str| {
        elf.section_headers.iter().find(|sh| {
            sh.sh_type == goblin::elf::section_header::SHT_PROGBITS
                && elf.shdr_strtab.get_at(sh.sh_name) == Some(name)
        })
    };
    let mut ifuncs: HashMap<u64, (u8, &str)> = HashMap::new();
    for (syms, strs) in [(&elf.syms, &elf.strtab), (&elf.dynsyms, &elf.dynstrtab)] {
        for s in syms.iter().filter(|s| s.st_type() == STT_GNU_IFUNC) {
            if let Some(name) = strs.get_at(s.st_name) {
                keep_ifunc(&mut ifuncs, s.st_value, s.st_bind(), name);
            }
        }
    }
    // The dynamic section's relocations; a static program has none, and
    // its `.rela.plt` section holds the IRELATIVE slots of its stubs.
    let rela_plt = elf
        .shdr_relocs
        .iter()
        .filter(|_| elf.dynamic.is_none())
        .find(|(i, _)| {
            let sh = elf.section_headers.get(*i);
            sh.and_then(|sh| elf.shdr_strtab.get_at(sh.sh_name)) == Some(".rela.plt")
        })
        .map(|(_, r)| r);
    let slots = slot_names(
        elf.pltrelocs.iter().chain(rela_plt.into_iter().flatten()),
        elf.dynrelas.iter(),
        &ifuncs,
        |i| {
            elf.dynsyms
                .get(i)
                .and_then(|sym| elf.dynstrtab.get_at(sym.st_name))
        },
    );
    let contents = |sh: &goblin::elf::SectionHeader| {
        let start = usize::try_from(sh.sh_offset).ok()?;
        bytes.get(start..start.checked_add(usize::try_from(sh.sh_size).ok()?)?)
    };
    let stubs = [section(".plt.sec"), section(".plt"), section(".plt.got")]
        .map(|sh| sh.map(|sh| (sh, contents(sh))));
    funcs.extend(plt_names(stubs, &slots, base));
    funcs
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

/// Of the ifuncs at one resolver address (aliases: `strrchr` and
/// `rindex`), the one an `IRELATIVE` stub is named after, whatever order
/// the symbol tables list them in: a global symbol before a weak one, then
/// the shorter name, then the first in byte order.
fn keep_ifunc<'a>(ifuncs: &mut HashMap<u64, (u8, &'a str)>, value: u64, bind: u8, name: &'a str) {
    use goblin::elf::sym::STB_GLOBAL;
    let rank = |b: u8, n: &'a str| (b != STB_GLOBAL, n.len(), n);
    match ifuncs.get(&value) {
        Some(&(b, n)) if rank(b, n) <= rank(bind, name) => {}
        _ => {
            ifuncs.insert(value, (bind, name));
        }
    }
}

/// A PLT section's header and its bytes (None when the file's are not
/// there).
type Stubs<'b> = (&'b goblin::elf::SectionHeader, Option<&'b [u8]>);

/// The function each GOT slot a PLT stub may jump through is for, as
/// both readers find it: the relocations of `.rela.plt` (`JUMP_SLOT`s;
/// `IRELATIVE`s, a static program's only ones) and the `GLOB_DAT`s of
/// `.rela.dyn` (`.plt.got`'s slots). A `JUMP_SLOT`'s or `GLOB_DAT`'s
/// function is its symbol in the dynamic symbol table (`symbol`, by
/// index), an `IRELATIVE`'s the ifunc whose value is the resolver its
/// addend names (`ifuncs`, [`keep_ifunc`]: `strchrnul`). Unnamed slots
/// are left out.
fn slot_names<'a>(
    plt: impl Iterator<Item = goblin::elf::Reloc>,
    dynamic: impl Iterator<Item = goblin::elf::Reloc>,
    ifuncs: &HashMap<u64, (u8, &'a str)>,
    symbol: impl Fn(usize) -> Option<&'a str>,
) -> HashMap<u64, &'a str> {
    let got = dynamic.filter(|r| r.r_type == R_X86_64_GLOB_DAT);
    plt.chain(got)
        .filter_map(|r| {
            let name = if r.r_type == R_X86_64_IRELATIVE {
                r.r_addend
                    .and_then(|a| ifuncs.get(&(a as u64)))
                    .map(|i| i.1)
            } else {
                symbol(r.r_sym)
            };
            Some((r.r_offset, name.filter(|n| !n.is_empty())?))
        })
        .collect()
}

/// `name@plt` for each PLT stub: the stub's `jmp *slot(%rip)` names the
/// GOT slot it jumps through, and `by_slot` ([`slot_names`]) the function
/// that slot is for. `stubs` are `.plt.sec` (IBT: a 16-byte stub per
/// entry), `.plt` (16-byte stubs, after a header in a dynamically linked
/// file, whose jump reads a slot no relocation names; 8-byte `jmp; xchg`
/// stubs in a static program, whose `.plt` gives no entry size; counted
/// only without a `.plt.sec`) and `.plt.got` (stubs of its entry size),
/// each with its bytes. The order of the relocations is not the stubs'
/// (libc lists its `IRELATIVE`s last; its stubs are in GOT order).
fn plt_names(
    stubs: [Option<Stubs<'_>>; 3],
    by_slot: &HashMap<u64, &str>,
    base: u64,
) -> Vec<(u64, u64, String)> {
    const JMP_RIP: [u8; 2] = [0xff, 0x25];
    let [sec, plt, got] = stubs;
    let mut out = Vec::new();
    for (sh, code) in [sec.or(plt), got].into_iter().flatten() {
        let Some(code) = code else { continue };
        let stride = usize::try_from(sh.sh_entsize)
            .ok()
            .filter(|n| (8..=16).contains(n))
            .unwrap_or_else(|| {
                // No entry size: a static program's `jmp *slot(%rip);
                // xchg %ax,%ax` stubs, one every 8 bytes.
                let eight = code.get(..2) == Some(&JMP_RIP) && code.get(8..10) == Some(&JMP_RIP);
                if eight {
                    8
                } else {
                    16
                }
            });
        for off in (0..code.len()).step_by(stride) {
            let Some(stub) = code.get(off..(off + stride).min(code.len())) else {
                continue;
            };
            // `jmp *disp32(%rip)` (ff 25), after an endbr64 and a bnd
            // prefix in .plt.sec.
            let Some(at) = stub.windows(2).position(|w| w == JMP_RIP) else {
                continue;
            };
            let Some(disp) = stub.get(at + 2..at + 6) else {
                continue;
            };
            let disp = i32::from_le_bytes(disp.try_into().expect("4 bytes"));
            let addr = sh.sh_addr.wrapping_add(off as u64);
            let slot = addr
                .wrapping_add(at as u64 + 6)
                .wrapping_add(i64::from(disp) as u64);
            if let Some(name) = by_slot.get(&slot) {
                out.push((
                    base.wrapping_add(addr),
                    stride as u64,
                    format!("{name}@plt"),
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
