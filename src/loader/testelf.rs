//! Test fixtures: a small valid x86-64 ELF built byte by byte, helpers to
//! mutate its fields, and a way to build real programs with gcc.
//!
//! Invariants:
//! - I1: [`small_elf`] is accepted by `plan` unchanged; each malformed-case
//!   test changes one thing in it, so the error it sees is caused by that one
//!   change.
//! - I2: no binary is stored in the repository: real programs are compiled
//!   by [`gcc`] into a fresh temporary directory at test time, and a test
//!   without gcc prints a note and passes, except in CI (`CI` set, as
//!   `.ci/run` does), where it fails.
//!
//! Layout of [`small_elf`] (`base` is the link address, 0 for a PIE):
//! ```text
//! file    memory          what
//! 0x000   base+0x000      ELF header
//! 0x040   base+0x040      5 program headers (PHDR, LOAD r-x, LOAD rw-, NOTE, GNU_STACK)
//! 0x160   base+0x160      NT_GNU_BUILD_ID note, id = BUILD_ID
//! 0x200   base+0x200      code (entry): mov eax, 60; xor edi, edi; syscall
//! 0x1000  base+0x2000     start of the data segment's first page (lead bytes)
//! 0x1010  base+0x2010     data: DATA_LEN bytes of DATA_BYTE, then bss to base+0x5000
//! ```

use std::path::PathBuf;
use std::process::Command;

pub(crate) const EM_X86_64: u16 = 62;
pub(crate) const PT_LOAD: u32 = 1;
pub(crate) const PT_INTERP: u32 = 3;
pub(crate) const PT_NOTE: u32 = 4;
pub(crate) const PT_PHDR: u32 = 6;
pub(crate) const PT_GNU_STACK: u32 = 0x6474_e551;
pub(crate) const PT_NULL: u32 = 0;

/// ELF header field offsets.
pub(crate) mod eh {
    pub const CLASS: usize = 4;
    pub const DATA: usize = 5;
    pub const TYPE: usize = 16;
    pub const MACHINE: usize = 18;
    pub const ENTRY: usize = 24;
    pub const PHOFF: usize = 32;
    pub const PHENTSIZE: usize = 54;
    pub const PHNUM: usize = 56;
}

/// Program header field offsets, relative to the entry.
pub(crate) mod ph {
    pub const TYPE: usize = 0;
    pub const FLAGS: usize = 4;
    pub const OFFSET: usize = 8;
    pub const VADDR: usize = 16;
    pub const FILESZ: usize = 32;
    pub const MEMSZ: usize = 40;
    pub const ALIGN: usize = 48;
}

/// Program header indices in [`small_elf`].
pub(crate) const PH_PHDR: usize = 0;
pub(crate) const PH_TEXT: usize = 1;
pub(crate) const PH_DATA: usize = 2;
pub(crate) const PH_NOTE: usize = 3;
pub(crate) const PH_STACK: usize = 4;

pub(crate) const PHOFF: u64 = 0x40;
pub(crate) const PHNUM: u16 = 5;
pub(crate) const ENTRY_OFF: u64 = 0x200;
pub(crate) const DATA_VOFF: u64 = 0x2010;
pub(crate) const DATA_FOFF: u64 = 0x1010;
pub(crate) const DATA_LEN: u64 = 0x20;
pub(crate) const DATA_MEMSZ: u64 = 0x3000 - 0x10;
pub(crate) const DATA_BYTE: u8 = 0xd7;
/// Bytes at file 0x1000..0x1010, before the data segment in its first page.
pub(crate) const LEAD_BYTE: u8 = 0x1e;
pub(crate) const BUILD_ID: [u8; 20] = *b"hotlift-test-build-i";

/// A valid static x86-64 ELF: `ET_EXEC` linked at `base`, or `ET_DYN` at 0.
pub(crate) fn small_elf(exec: bool, base: u64) -> Vec<u8> {
    let base = if exec { base } else { 0 };
    let mut f = vec![0u8; (DATA_FOFF + DATA_LEN) as usize];
    f[..4].copy_from_slice(b"\x7fELF");
    f[eh::CLASS] = 2; // ELFCLASS64
    f[eh::DATA] = 1; // ELFDATA2LSB
    f[6] = 1; // EI_VERSION
    put16(&mut f, eh::TYPE, if exec { 2 } else { 3 });
    put16(&mut f, eh::MACHINE, EM_X86_64);
    put32(&mut f, 20, 1); // e_version
    put64(&mut f, eh::ENTRY, base + ENTRY_OFF);
    put64(&mut f, eh::PHOFF, PHOFF);
    put16(&mut f, 52, 64); // e_ehsize
    put16(&mut f, eh::PHENTSIZE, 56);
    put16(&mut f, eh::PHNUM, PHNUM);

    let r = 4;
    let w = 2;
    let x = 1;
    let phdrs: [(u32, u32, u64, u64, u64, u64, u64); 5] = [
        // type, flags, offset, vaddr, filesz, memsz, align
        (PT_PHDR, r, PHOFF, base + PHOFF, 56 * 5, 56 * 5, 8),
        (PT_LOAD, r | x, 0, base, 0x1000, 0x1000, 0x1000),
        (
            PT_LOAD,
            r | w,
            DATA_FOFF,
            base + DATA_VOFF,
            DATA_LEN,
            DATA_MEMSZ,
            0x1000,
        ),
        (PT_NOTE, r, 0x160, base + 0x160, 36, 36, 4),
        (PT_GNU_STACK, r | w, 0, 0, 0, 0, 16),
    ];
    for (i, &(t, fl, off, va, fsz, msz, al)) in phdrs.iter().enumerate() {
        put32(&mut f, phdr(i, ph::TYPE), t);
        put32(&mut f, phdr(i, ph::FLAGS), fl);
        put64(&mut f, phdr(i, ph::OFFSET), off);
        put64(&mut f, phdr(i, ph::VADDR), va);
        put64(&mut f, phdr(i, 24), va); // p_paddr
        put64(&mut f, phdr(i, ph::FILESZ), fsz);
        put64(&mut f, phdr(i, ph::MEMSZ), msz);
        put64(&mut f, phdr(i, ph::ALIGN), al);
    }

    put32(&mut f, 0x160, 4); // namesz
    put32(&mut f, 0x164, 20); // descsz
    put32(&mut f, 0x168, 3); // NT_GNU_BUILD_ID
    f[0x16c..0x170].copy_from_slice(b"GNU\0");
    f[0x170..0x184].copy_from_slice(&BUILD_ID);

    let code = [0xb8, 60, 0, 0, 0, 0x31, 0xff, 0x0f, 0x05]; // exit(0)
    f[ENTRY_OFF as usize..ENTRY_OFF as usize + code.len()].copy_from_slice(&code);
    f[0x1000..DATA_FOFF as usize].fill(LEAD_BYTE);
    f[DATA_FOFF as usize..].fill(DATA_BYTE);
    f
}

/// File offset of field `field` of program header `i` in [`small_elf`].
pub(crate) fn phdr(i: usize, field: usize) -> usize {
    PHOFF as usize + 56 * i + field
}

pub(crate) fn put16(f: &mut [u8], at: usize, v: u16) {
    f[at..at + 2].copy_from_slice(&v.to_le_bytes());
}

pub(crate) fn put32(f: &mut [u8], at: usize, v: u32) {
    f[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

pub(crate) fn put64(f: &mut [u8], at: usize, v: u64) {
    f[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// Compiles C source `src` with `gcc <flags>` into a temporary directory and
/// returns the program's bytes; `None` (after printing a note) if gcc is
/// missing or cannot build it, e.g. without static libc; a panic then in CI
/// (I2).
pub(crate) fn gcc(name: &str, src: &str, flags: &[&str]) -> Option<Vec<u8>> {
    let dir: PathBuf =
        std::env::temp_dir().join(format!("hotlift-loader-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).ok()?;
    let c = dir.join("prog.c");
    let exe = dir.join("prog");
    std::fs::write(&c, src).ok()?;
    let result = Command::new("gcc")
        .args(flags)
        .arg("-O1")
        .arg("-o")
        .arg(&exe)
        .arg(&c)
        .output();
    let why = match result {
        Ok(out) if out.status.success() => None,
        Ok(out) => Some(format!(
            "`gcc {}` failed: {}",
            flags.join(" "),
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .next()
                .unwrap_or("")
        )),
        Err(e) => Some(format!("gcc is not available: {e}")),
    };
    let bytes = match why {
        None => std::fs::read(&exe).ok(),
        Some(why) => {
            // CI installs gcc and the static libc (.ci/run sets CI): there
            // a skip would hide a broken set-up.
            assert!(std::env::var_os("CI").is_none(), "{why} (CI is set)");
            eprintln!("note: skipping, {why}");
            None
        }
    };
    let _ = std::fs::remove_dir_all(&dir);
    bytes
}
