//! [`LoadError`]: every way loading a guest program can fail.
//!
//! I1: one variant per problem; the message is one line and never names the
//! file (the CLI prefixes it).
//! I2: [`LoadError::exit_code`] is 126 for every "this is not a runnable
//! x86-64 ELF" problem (what a shell reports for a file it cannot
//! execute), 127 for a missing interpreter (what a shell reports when
//! execve fails with ENOENT) and 125 for resource and OS failures. Adding a
//! variant means placing it in exactly one arm. A problem with the
//! interpreter is [`LoadError::Interp`] around the problem, with that
//! problem's status.

use goblin::elf::header::{machine_to_str, ET_CORE, ET_NONE, ET_REL};
use nix::errno::Errno;

/// Why a guest program cannot be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    // ---- not a runnable x86-64 ELF (126) ----
    #[error("empty file")]
    Empty,
    #[error("not an ELF file (bad magic)")]
    BadMagic,
    #[error("a script for {0:?}, not an ELF program: run its interpreter under hotlift (hotlift run -- INTERPRETER SCRIPT)")]
    Script(String),
    #[error("file too short for an ELF header ({len} bytes, need 64)")]
    TruncatedHeader { len: usize },
    #[error("32-bit ELF programs are not supported (x86-64 only)")]
    Elf32,
    #[error("invalid ELF class {0}")]
    BadClass(u8),
    #[error("big-endian ELF programs are not supported (x86-64 is little-endian)")]
    BigEndian,
    #[error("invalid ELF data encoding {0}")]
    BadDataEncoding(u8),
    #[error("not an x86-64 program (e_machine {machine}: {})", machine_to_str(*.machine))]
    WrongMachine { machine: u16 },
    #[error("not an executable (e_type {e_type}: {})", type_name(*.e_type))]
    WrongType { e_type: u16 },
    #[error("invalid PT_INTERP (offset {offset:#x}, {filesz} bytes): not a NUL-terminated path inside the file")]
    BadInterpPath { offset: u64, filesz: u64 },
    #[error(
        "names shared libraries (DT_NEEDED) but no program interpreter (PT_INTERP) to load them"
    )]
    NeededWithoutInterp,
    #[error(
        "names an interpreter itself (PT_INTERP {0:?}); an interpreter must be self-contained"
    )]
    InterpHasInterp(String),
    #[error("interpreter {path}: {error}")]
    Interp { path: String, error: Box<LoadError> },
    #[error("cannot read: {0}")]
    Unreadable(std::io::Error),
    #[error("invalid program header entry size {0} (expected 56)")]
    BadPhentsize(u16),
    #[error("too many program headers ({0}; at most 1170)")]
    TooManyProgramHeaders(u16),
    #[error("program headers (offset {phoff:#x}, {phnum} entries) lie outside the file")]
    ProgramHeadersOutOfBounds { phoff: u64, phnum: u16 },
    #[error("segment {index}: file size {filesz:#x} exceeds memory size {memsz:#x}")]
    FileszExceedsMemsz {
        index: usize,
        filesz: u64,
        memsz: u64,
    },
    #[error("segment {index}: file range {offset:#x}+{filesz:#x} lies outside the file ({len:#x} bytes)")]
    SegmentBeyondFile {
        index: usize,
        offset: u64,
        filesz: u64,
        len: usize,
    },
    #[error("segment {index}: address {vaddr:#x} and file offset {offset:#x} disagree modulo alignment {align:#x}")]
    Misaligned {
        index: usize,
        vaddr: u64,
        offset: u64,
        align: u64,
    },
    #[error("segment {index}: address {vaddr:#x} + size {memsz:#x} overflows")]
    AddressOverflow {
        index: usize,
        vaddr: u64,
        memsz: u64,
    },
    #[error("segments {first} and {second} overlap")]
    OverlappingSegments { first: usize, second: usize },
    #[error("segment {index} is not in ascending address order")]
    SegmentsOutOfOrder { index: usize },
    #[error("no loadable segments")]
    NoLoadSegments,
    #[error("entry point {entry:#x} is not inside an executable segment")]
    EntryNotExecutable { entry: u64 },
    #[error(
        "segment {index}: pages {lo:#x}..{hi:#x} lie outside the user address range {:#x}..{:#x}",
        super::MMAP_MIN_ADDR,
        super::TASK_SIZE
    )]
    SegmentOutOfRange { index: usize, lo: u64, hi: u64 },
    #[error("segments span {size:#x} bytes, more than the user address space")]
    SpanTooLarge { size: u64 },

    // ---- resource and OS failures (125) ----
    #[error("segment pages {lo:#x}..{hi:#x} overlap hotlift's own memory")]
    OverlapsHost { lo: u64, hi: u64 },
    #[error("cannot map {len:#x} bytes of guest memory: {errno}")]
    MapFailed { len: u64, errno: Errno },
    #[error("cannot set protections {prot} on {len:#x} bytes of guest memory: {errno}")]
    ProtectFailed {
        prot: super::Prot,
        len: u64,
        errno: Errno,
    },
    #[error("cannot read random bytes for AT_RANDOM: {0}")]
    RandomFailed(Errno),
    #[error("invalid guest stack size {0:#x}")]
    BadStackSize(u64),
    #[error("arguments and environment need {needed} bytes, more than a quarter of the {stack_size}-byte stack")]
    ArgsTooLarge { needed: u64, stack_size: u64 },
    #[error("an argument or environment string contains a NUL byte")]
    NulInString,
}

impl LoadError {
    /// The process exit status hotlift reports for this error (I2).
    pub fn exit_code(&self) -> i32 {
        use LoadError::*;
        match self {
            Empty
            | BadMagic
            | Script(_)
            | TruncatedHeader { .. }
            | Elf32
            | BadClass(_)
            | BigEndian
            | BadDataEncoding(_)
            | WrongMachine { .. }
            | WrongType { .. }
            | BadInterpPath { .. }
            | NeededWithoutInterp
            | InterpHasInterp(_)
            | BadPhentsize(_)
            | TooManyProgramHeaders(_)
            | ProgramHeadersOutOfBounds { .. }
            | FileszExceedsMemsz { .. }
            | SegmentBeyondFile { .. }
            | Misaligned { .. }
            | AddressOverflow { .. }
            | OverlappingSegments { .. }
            | SegmentsOutOfOrder { .. }
            | NoLoadSegments
            | EntryNotExecutable { .. }
            | SegmentOutOfRange { .. }
            | SpanTooLarge { .. } => 126,
            Unreadable(e) if e.kind() == std::io::ErrorKind::NotFound => 127,
            Unreadable(_) => 126,
            Interp { error, .. } => error.exit_code(),
            OverlapsHost { .. }
            | MapFailed { .. }
            | ProtectFailed { .. }
            | RandomFailed(_)
            | BadStackSize(_)
            | ArgsTooLarge { .. }
            | NulInString => 125,
        }
    }
}

/// A readable name for an `e_type` that is not `ET_EXEC` or `ET_DYN`.
fn type_name(e_type: u16) -> &'static str {
    match e_type {
        ET_NONE => "no file type",
        ET_REL => "relocatable object",
        ET_CORE => "core file",
        _ => "unknown type",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_one_line() {
        let errors = [
            LoadError::WrongMachine { machine: 183 },
            LoadError::WrongType { e_type: 1 },
            LoadError::SegmentOutOfRange {
                index: 1,
                lo: 0,
                hi: 0x1000,
            },
            LoadError::MapFailed {
                len: 0x1000,
                errno: Errno::ENOMEM,
            },
            LoadError::ProtectFailed {
                prot: super::super::Prot::default(),
                len: 1,
                errno: Errno::EACCES,
            },
        ];
        for e in errors {
            let msg = e.to_string();
            assert!(!msg.contains('\n'), "{msg:?}");
            assert!(!msg.is_empty());
        }
        assert_eq!(
            LoadError::WrongMachine { machine: 183 }.to_string(),
            "not an x86-64 program (e_machine 183: AARCH64)"
        );
        assert_eq!(
            LoadError::WrongType { e_type: 1 }.to_string(),
            "not an executable (e_type 1: relocatable object)"
        );
    }

    #[test]
    fn exit_codes() {
        assert_eq!(LoadError::NeededWithoutInterp.exit_code(), 126);
        let missing = LoadError::Interp {
            path: "/lib/ld.so".into(),
            error: Box::new(LoadError::Unreadable(std::io::ErrorKind::NotFound.into())),
        };
        assert_eq!(missing.exit_code(), 127);
        assert_eq!(
            missing.to_string(),
            "interpreter /lib/ld.so: cannot read: entity not found"
        );
        assert_eq!(
            LoadError::OverlappingSegments {
                first: 1,
                second: 2
            }
            .exit_code(),
            126
        );
        assert_eq!(LoadError::OverlapsHost { lo: 0, hi: 1 }.exit_code(), 125);
        assert_eq!(
            LoadError::MapFailed {
                len: 1,
                errno: Errno::ENOMEM
            }
            .exit_code(),
            125
        );
    }
}
