//! `#!` scripts, run as the kernel's `binfmt_script` runs them: the
//! interpreter named on the first line runs with `[INTERPRETER, ARG?,
//! SCRIPT, ARGS…]`, where SCRIPT is the path the script was started by
//! and `ARG` is the rest of the line (one argument, spaces and all).
//!
//! I1: the first line is read from the first 256 bytes (the kernel's
//!     buffer): leading blanks skipped, the interpreter ends at a blank or
//!     the line's end; a line that does not end within the buffer is
//!     accepted only if the interpreter's name ends inside it.
//! I2: at most [`MAX_DEPTH`] interpreters in a row (a script whose
//!     interpreter is a script …), as the kernel's `ELOOP` limit.
//! I3: `execfn` (`AT_EXECFN`) stays the path the program was started by,
//!     whatever the interpreter; the profile's program is the ELF file.

use std::path::PathBuf;

/// The kernel's `BINPRM_BUF_SIZE`.
const BUF: usize = 256;
/// Interpreters in a row (I2; the kernel allows 4 rewrites).
pub const MAX_DEPTH: usize = 4;

/// A script's interpreter line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shebang {
    pub interp: Vec<u8>,
    pub arg: Option<Vec<u8>>,
}

fn blank(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// The interpreter line of `head` (the file's first bytes): `None` when it
/// is not a script, `Some(None)` when it is one the kernel refuses (no
/// interpreter named, ENOEXEC).
pub fn parse(head: &[u8]) -> Option<Option<Shebang>> {
    if !head.starts_with(b"#!") {
        return None;
    }
    let buf = &head[..head.len().min(BUF)];
    let line_end = buf.iter().position(|&b| b == b'\n');
    let line = &buf[2..line_end.unwrap_or(buf.len()).max(2)];
    let start = line.iter().position(|&b| !blank(b));
    let Some(start) = start else {
        return Some(None);
    };
    let line = &line[start..];
    let name_end = line.iter().position(|&b| blank(b) || b == 0);
    if line_end.is_none() && name_end.is_none() && head.len() >= BUF {
        // I1: the name may go on past the buffer.
        return Some(None);
    }
    let name_end = name_end.unwrap_or(line.len());
    let interp = line[..name_end].to_vec();
    let arg = &line[name_end..];
    let arg = arg.split(|&b| b == 0).next().unwrap_or_default();
    let a = arg.iter().position(|&b| !blank(b));
    let z = arg.iter().rposition(|&b| !blank(b));
    let arg = match (a, z) {
        (Some(a), Some(z)) => Some(arg[a..=z].to_vec()),
        _ => None,
    };
    Some(Some(Shebang { interp, arg }))
}

/// What to load and how to start it, scripts followed (I2, I3).
#[derive(Debug)]
pub struct Launch {
    /// The ELF file to load, and its bytes.
    pub path: PathBuf,
    pub bytes: FileBytes,
    pub argv: Vec<Vec<u8>>,
    pub execfn: Vec<u8>,
}

#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    #[error("{0}: {1}")]
    Io(String, std::io::Error),
    #[error("{0}: a #! line that names no interpreter")]
    NoInterpreter(String),
    #[error("{0}: more than {MAX_DEPTH} interpreters in a row (#! lines)")]
    TooDeep(String),
}

impl ScriptError {
    /// The errno `execve` fails with for this.
    pub fn errno(&self) -> i32 {
        match self {
            ScriptError::Io(_, e) => e.raw_os_error().unwrap_or(libc::EACCES),
            ScriptError::NoInterpreter(_) => libc::ENOEXEC,
            ScriptError::TooDeep(_) => libc::ELOOP,
        }
    }
}

/// What the kernel checks of each file it would execute: a regular file
/// this process may execute (else `EACCES`, as `execve` gives).
pub fn check_executable(p: &std::path::Path) -> Result<(), std::io::Error> {
    let meta = std::fs::metadata(p)?;
    if !meta.is_file() {
        return Err(std::io::Error::from_raw_os_error(libc::EACCES));
    }
    nix::unistd::access(p, nix::unistd::AccessFlags::X_OK).map_err(std::io::Error::from)
}

/// A program's or interpreter's bytes: the file mapped read-only
/// (`MAP_PRIVATE`), so that only the pages the loader reads come in, from
/// the page cache; an empty file as no bytes. Reading a 33 MB `cc1` into
/// memory (and faulting that memory in) was a quarter of `gcc -c`'s time
/// under hotlift. The loader maps the whole pages of its segments from the
/// file and copies the rest (map.rs I4); a file truncated by someone else
/// meanwhile would fault, as a natively running program's text does.
#[derive(Debug)]
pub enum FileBytes {
    /// The file and its read-only mapping.
    Mapped(memmap2::Mmap, std::fs::File),
    Empty,
}

impl FileBytes {
    /// The open file the bytes are, if any (map.rs maps whole pages of
    /// segments from it).
    pub fn file(&self) -> Option<&std::fs::File> {
        match self {
            FileBytes::Mapped(_, f) => Some(f),
            FileBytes::Empty => None,
        }
    }
}

impl std::ops::Deref for FileBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            FileBytes::Mapped(m, _) => m,
            FileBytes::Empty => &[],
        }
    }
}

/// The bytes of the regular file `path` that is to be loaded, mapped
/// (FileBytes); anything else gets `refused()` and is never read, as in
/// [`read_untrusted`] without pipes.
pub fn map_program(
    path: &std::path::Path,
    refused: impl FnOnce() -> std::io::Error,
) -> std::io::Result<FileBytes> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let meta = f.metadata()?;
    if !meta.file_type().is_file() {
        return Err(refused());
    }
    if meta.len() == 0 {
        return Ok(FileBytes::Empty);
    }
    // SAFETY: a private read-only mapping of a regular file; the bytes are
    // only read, and another process changing the file meanwhile is the
    // case the type's docs describe.
    #[allow(unsafe_code)]
    let m = unsafe { memmap2::MmapOptions::new().map(&f)? };
    Ok(FileBytes::Mapped(m, f))
}

/// The bytes of untrusted input `path` (a program, a script, a profile),
/// opened without waiting (a fifo put there since a check would block the
/// open) and checked on the open file: a regular file is read; a pipe or
/// fifo is read to its end when `pipes` (a fifo nobody writes to reads as
/// empty rather than waiting for a writer); anything else (a device such
/// as `/dev/zero`, which reads forever, a socket, a directory) gets
/// `refused()` and is never read. A pipe's first byte that is not white
/// space must pass `starts` (what the input must begin with): a writer
/// that never ends (`cat /dev/zero > fifo`) is refused at once, not read
/// until memory runs out.
pub fn read_untrusted(
    path: &std::path::Path,
    pipes: bool,
    refused: impl FnOnce() -> std::io::Error,
    starts: impl Fn(u8) -> bool,
) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let meta = f.metadata()?;
    let kind = meta.file_type();
    if pipes && kind.is_fifo() {
        // Opened without waiting for a writer; read waiting for data.
        nix::fcntl::fcntl(
            &f,
            nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::empty()),
        )?;
    } else if !kind.is_file() {
        return Err(refused());
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    if kind.is_file() {
        f.read_to_end(&mut bytes)?;
        return Ok(bytes);
    }
    let mut chunk = vec![0u8; 1 << 16];
    let mut checked = false;
    loop {
        let n = match f.read(&mut chunk) {
            Ok(0) => return Ok(bytes),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        bytes.extend_from_slice(&chunk[..n]);
        if !checked {
            if let Some(&b) = bytes.iter().find(|b| !b.is_ascii_whitespace()) {
                if !starts(b) {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!("a pipe whose first byte ({b:#04x}) cannot start it"),
                    ));
                }
                checked = true;
            }
        }
    }
}

/// Read `path`; while it is a script, go on with its interpreter, with
/// the kernel's argument rewriting. `check` sees every file before it is
/// read (an `execve` checks its permission there).
pub fn follow(
    path: PathBuf,
    mut argv: Vec<Vec<u8>>,
    check: &dyn Fn(&std::path::Path) -> Result<(), std::io::Error>,
) -> Result<Launch, ScriptError> {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let execfn = path.as_os_str().as_bytes().to_vec();
    let mut path = path;
    for _ in 0..=MAX_DEPTH {
        let shown = path.display().to_string();
        check(&path).map_err(|e| ScriptError::Io(shown.clone(), e))?;
        // What execve refuses to execute: EACCES.
        let refused = || std::io::Error::from_raw_os_error(libc::EACCES);
        let bytes = map_program(&path, refused).map_err(|e| ScriptError::Io(shown.clone(), e))?;
        let Some(line) = parse(&bytes) else {
            return Ok(Launch {
                path,
                bytes,
                argv,
                execfn,
            });
        };
        let Some(sh) = line else {
            return Err(ScriptError::NoInterpreter(shown));
        };
        let mut next = vec![sh.interp.clone()];
        next.extend(sh.arg);
        next.push(path.as_os_str().as_bytes().to_vec());
        next.extend(argv.into_iter().skip(1));
        argv = next;
        path = PathBuf::from(std::ffi::OsString::from_vec(sh.interp));
    }
    Err(ScriptError::TooDeep(
        String::from_utf8_lossy(&execfn).into_owned(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(interp: &str, arg: Option<&str>) -> Option<Option<Shebang>> {
        Some(Some(Shebang {
            interp: interp.into(),
            arg: arg.map(Into::into),
        }))
    }

    #[test]
    fn interpreter_lines_as_the_kernel_reads_them() {
        assert_eq!(parse(b"\x7fELF"), None);
        assert_eq!(parse(b"#!/bin/sh\necho"), sh("/bin/sh", None));
        assert_eq!(parse(b"#! /bin/sh -e \n"), sh("/bin/sh", Some("-e")));
        assert_eq!(
            parse(b"#!/usr/bin/env  python3 -u\t\n"),
            sh("/usr/bin/env", Some("python3 -u")),
            "the rest of the line is one argument"
        );
        assert_eq!(parse(b"#!/bin/sh"), sh("/bin/sh", None), "no newline");
        assert_eq!(parse(b"#!   \n"), Some(None));
        assert_eq!(parse(b"#!"), Some(None));
        let long = [b"#!/x".as_slice(), &[b'y'; 300]].concat();
        assert_eq!(parse(&long), Some(None), "a name past the buffer");
        let mut cut = b"#!/bin/sh ".to_vec();
        cut.extend([b'a'; 300]);
        assert_eq!(parse(&cut).unwrap().unwrap().interp, b"/bin/sh".to_vec());
    }

    #[test]
    fn scripts_are_followed_to_their_interpreter() {
        let dir = std::env::temp_dir().join(format!("hotlift-script-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let inner = dir.join("inner");
        let outer = dir.join("outer");
        std::fs::write(&inner, format!("#!{} -x\n", "/bin/true")).unwrap();
        std::fs::write(&outer, format!("#!{} a b\n", inner.display())).unwrap();
        let ok = |_: &std::path::Path| Ok(());
        let l = follow(outer.clone(), vec![b"o".to_vec(), b"1".to_vec()], &ok).unwrap();
        assert_eq!(l.path, PathBuf::from("/bin/true"));
        let s = |p: &PathBuf| p.display().to_string().into_bytes();
        assert_eq!(
            l.argv,
            vec![
                b"/bin/true".to_vec(),
                b"-x".to_vec(),
                s(&inner),
                b"a b".to_vec(),
                s(&outer),
                b"1".to_vec()
            ]
        );
        assert_eq!(l.execfn, s(&outer));
        let me = dir.join("loop");
        std::fs::write(&me, format!("#!{}\n", me.display())).unwrap();
        assert!(matches!(
            follow(me, vec![], &ok),
            Err(ScriptError::TooDeep(_))
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
