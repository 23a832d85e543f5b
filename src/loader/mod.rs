//! The ELF loader: turns a Linux x86-64 executable (static, or dynamically
//! linked with a program interpreter) into guest memory and an initial
//! process stack, the way the kernel's `load_elf_binary` does.
//!
//! Three steps, in the order data flows:
//! 1. [`plan()`] (`plan.rs`, pure) parses and validates the file into a
//!    [`LoadPlan`]. Nothing is mapped; every problem is a [`LoadError`].
//!    A dynamically linked program names its interpreter (`plan.interp`,
//!    normally ld.so); the caller reads that file and plans it too.
//! 2. [`load`] (`map.rs`) maps every `PT_LOAD` into this process and returns
//!    the [`LoadedImage`]: final addresses, regions and protections. Its
//!    [`Role`] decides where a position-independent image goes (`map.rs`
//!    I6): the program, or its interpreter.
//! 3. [`build_stack`] (`map.rs`, layout in `stack.rs`) maps a guest stack and
//!    writes argc, argv, envp and the auxiliary vector, as `create_elf_tables`
//!    does, and returns the [`InitialStack`]. The auxv describes the program
//!    (`AT_PHDR`, `AT_ENTRY`); `AT_BASE` is the interpreter's load address.
//!
//! The guest then starts at the interpreter's entry if there is one, else at
//! `image.entry`, with `rsp = stack.sp` and every other general register
//! zero (`rdx = 0`: no `rtld_fini` for `atexit`; ld.so passes its own to the
//! program).
//!
//! Invariants:
//! - I1: [`plan()`] never panics and allocates at most a small multiple of the
//!   input, whatever the bytes (it is fuzzed: `fuzz/fuzz_targets/elf_plan.rs`).
//! - I2: a [`LoadPlan`] from [`plan()`] is self-consistent: the non-empty
//!   segments are in ascending address order and do not overlap byte-wise,
//!   each file range lies inside the file, no address sum in it overflows
//!   (page rounding included), the entry lies in an executable segment, and
//!   for [`ElfKind::Exec`] every page lies in `[4096, 0x7fff_ffff_f000)`.
//!   [`load`] re-derives the plan from the bytes and panics if the one it is
//!   given differs (in anything but `stack_exec`, `build_id` and `interp`,
//!   which it does not use), so the mapping code can rely on I2.
//! - I3: addresses in a [`LoadPlan`] are unrelocated (link-time); addresses in
//!   a [`LoadedImage`] and an [`InitialStack`] are final (bias applied).
//! - I4: only `map.rs` talks to the OS; it is the only file of the loader that
//!   may use `unsafe` (tests reach it through `map::test_support`).
//! - I5: the [`LoadError`] variant says which problem it is; the message is one
//!   line without the file name (the CLI prefixes it), and
//!   [`LoadError::exit_code`] is 126 for "not a runnable x86-64 ELF", 127
//!   for a missing interpreter and 125 for resource or OS failures.
//!
//! Usage:
//! ```ignore
//! let plan = loader::plan(&bytes)?;
//! let image = loader::load(&bytes, &plan, Role::Program { brk_room, mmap_room })?;
//! // With plan.interp: read and plan that file, load it with Role::Interpreter.
//! let req = StackRequest { argv: &argv, envp: &envp, execfn: path,
//!                          stack_size: 8 << 20, stack_room: 256 << 20,
//!                          interp_base: 0 };
//! let stack = loader::build_stack(&image, &plan, &req)?;
//! ```

mod error;
mod layout;
mod map;
mod plan;
pub mod script;
mod stack;

#[cfg(test)]
mod map_tests;
#[cfg(test)]
mod plan_tests;
#[cfg(test)]
mod testelf;

use std::fmt;

use crate::types::GuestAddr;

pub use error::LoadError;
pub use layout::{mapped_layout, MappedLayout};
pub use map::{build_stack, load, load_file, read_interp, stack_growth_floor};
pub use plan::plan;

/// The size of a guest page. The loader only supports 4 KiB pages, as does
/// the kernel for x86-64 (`ELF_EXEC_PAGESIZE`).
pub const PAGE_SIZE: u64 = 4096;

/// The lowest address an `ET_EXEC` segment may occupy (`vm.mmap_min_addr`).
pub const MMAP_MIN_ADDR: u64 = 4096;

/// The end of the user address space with 4-level paging (`TASK_SIZE`).
pub const TASK_SIZE: u64 = 0x7fff_ffff_f000;

/// What kind of executable the file is, from `e_type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElfKind {
    /// `ET_EXEC`: mapped at its link addresses.
    Exec,
    /// `ET_DYN`: mapped at a base the loader chooses. Without `PT_INTERP`
    /// (a static PIE, or ld.so itself) the program relocates itself
    /// (glibc's `_dl_relocate_static_pie`, `_dl_start`); with one, the
    /// interpreter relocates it.
    Pie,
}

/// Memory protections of a segment or region.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Prot {
    pub r: bool,
    pub w: bool,
    pub x: bool,
}

/// W^X for guest memory: the `PROT_*` bits the kernel gets for guest
/// pages the guest asked `bits` for. Never executable (translated code
/// runs from the code cache; no guest page is ever run in place), and
/// readable where the guest asked for execute (on x86 an executable page
/// can be read; hotlift reads it to translate).
pub fn host_prot(bits: i32) -> i32 {
    let exec = bits & libc::PROT_EXEC != 0;
    (bits & !libc::PROT_EXEC) | if exec { libc::PROT_READ } else { 0 }
}

impl Prot {
    /// The `PROT_*` bits the kernel gets for guest memory with these
    /// protections ([`host_prot`]).
    pub fn host_bits(self) -> i32 {
        host_prot(
            (if self.r { libc::PROT_READ } else { 0 })
                | (if self.w { libc::PROT_WRITE } else { 0 })
                | (if self.x { libc::PROT_EXEC } else { 0 }),
        )
    }

    /// Protections from ELF `p_flags` (`PF_R`, `PF_W`, `PF_X`).
    pub fn from_flags(p_flags: u32) -> Prot {
        use goblin::elf::program_header::{PF_R, PF_W, PF_X};
        Prot {
            r: p_flags & PF_R != 0,
            w: p_flags & PF_W != 0,
            x: p_flags & PF_X != 0,
        }
    }

    /// The union of two protections (a page shared by two segments).
    pub fn union(self, other: Prot) -> Prot {
        Prot {
            r: self.r || other.r,
            w: self.w || other.w,
            x: self.x || other.x,
        }
    }
}

/// `r-x` style, as in `/proc/self/maps`.
impl fmt::Display for Prot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = |on: bool, ch: char| if on { ch } else { '-' };
        write!(f, "{}{}{}", c(self.r, 'r'), c(self.w, 'w'), c(self.x, 'x'))
    }
}

/// One `PT_LOAD`, with unrelocated addresses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    pub vaddr: u64,
    pub memsz: u64,
    pub filesz: u64,
    pub offset: u64,
    pub prot: Prot,
}

/// Everything [`load`] and [`build_stack`] need, read from the ELF headers.
/// See I2 and I3.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadPlan {
    pub kind: ElfKind,
    /// Unrelocated `e_entry`.
    pub entry: u64,
    /// The `PT_LOAD`s in file order (empty ones included; they map nothing).
    pub segments: Vec<Segment>,
    pub phoff: u64,
    pub phentsize: u16,
    pub phnum: u16,
    /// Unrelocated address of the program headers in memory: `PT_PHDR`'s
    /// `p_vaddr`, else computed from the `PT_LOAD` whose file range covers
    /// `e_phoff` (as the kernel does), else 0 (the kernel then passes the
    /// load bias as `AT_PHDR`, and so does [`build_stack`]).
    pub phdr_vaddr: u64,
    /// `PT_GNU_STACK` has `PF_X` (the last `PT_GNU_STACK` wins, as in the
    /// kernel; absent means false on x86-64).
    pub stack_exec: bool,
    /// Page-aligned `[lo, hi)` of all non-empty `PT_LOAD`s, unrelocated.
    pub span: (u64, u64),
    /// The alignment of the load base for [`ElfKind::Pie`]: the largest
    /// power-of-two `p_align` of the `PT_LOAD`s, at least [`PAGE_SIZE`]
    /// (the kernel's `maximum_alignment`). Not used for [`ElfKind::Exec`].
    pub align: u64,
    /// The descriptor of the first `NT_GNU_BUILD_ID` note, if any.
    pub build_id: Option<Vec<u8>>,
    /// The program interpreter's path from the first `PT_INTERP` (without
    /// its NUL), if the program is dynamically linked.
    pub interp: Option<Vec<u8>>,
}

/// A program interpreter, read and planned by [`read_interp`].
#[derive(Debug)]
pub struct Interp {
    /// The path as `PT_INTERP` names it.
    pub path: std::path::PathBuf,
    pub bytes: script::FileBytes,
    pub plan: LoadPlan,
}

/// What an image is to the process: it decides where [`load`] maps a
/// position-independent one (`map.rs` I6). `ET_EXEC` images always go to
/// their link addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The program. A dynamically linked PIE is mapped with `brk_room`
    /// bytes free after its image, where its brk starts, and `mmap_room`
    /// free above that, for the code cache and what the guest maps (its
    /// libraries), which so lie above the program, as natively.
    Program { brk_room: u64, mmap_room: u64 },
    /// The program interpreter (`PT_INTERP`, normally ld.so).
    Interpreter,
}

/// A page-aligned range of guest memory and its protections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    pub start: GuestAddr,
    pub end: GuestAddr,
    pub prot: Prot,
}

/// The program as mapped by [`load`]. All addresses are final (I3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadedImage {
    /// 0 for [`ElfKind::Exec`]; for [`ElfKind::Pie`] the load base
    /// minus `plan.span.0` (wrapping), i.e. what to add to an unrelocated
    /// address.
    pub bias: u64,
    pub entry: GuestAddr,
    pub phdr: GuestAddr,
    pub phent: u64,
    pub phnum: u64,
    /// Page-aligned span `[lo, hi)` of the image (`plan.span` plus bias).
    pub lo: GuestAddr,
    pub hi: GuestAddr,
    /// Page-aligned end of the highest segment's memory image: where the
    /// program break starts.
    pub brk_start: GuestAddr,
    /// Exactly what is mapped, ascending, with final protections. A page
    /// shared by two segments has the union of their protections; gaps
    /// between segments are not mapped.
    pub regions: Vec<Region>,
}

/// What [`build_stack`] writes on the guest stack.
#[derive(Clone, Copy, Debug)]
pub struct StackRequest<'a> {
    /// Argument strings, without terminating NULs (none may contain a NUL).
    pub argv: &'a [Vec<u8>],
    /// `NAME=value` strings, without terminating NULs.
    pub envp: &'a [Vec<u8>],
    /// The path the program was started as (`AT_EXECFN`).
    pub execfn: &'a [u8],
    /// Size of the guest stack in bytes (rounded up to a page); callers
    /// normally pass 8 MiB, Linux's default `RLIMIT_STACK`.
    pub stack_size: u64,
    /// Address space below the stack's top it may grow into later (a
    /// `RLIMIT_STACK` the program raises): at least `stack_size`.
    pub stack_room: u64,
    /// `AT_BASE`: the interpreter's load address (its load bias), 0 for a
    /// program without one.
    pub interp_base: u64,
}

/// The guest stack built by [`build_stack`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InitialStack {
    /// Where `rsp` starts: points at argc; 16-byte aligned.
    pub sp: GuestAddr,
    /// The usable stack, mapped `MAP_GROWSDOWN`.
    pub region: Region,
    /// The `PROT_NONE` reservation just below `region.start` (a guard page
    /// at least, up to the request's `stack_room`): the caller's
    /// placeholders, which the stack grows into (dispatch/growsdown.rs).
    pub room: (u64, u64),
    /// The auxiliary vector as written, `(AT_NULL, 0)` terminator included
    /// (what `/proc/self/auxv` would show).
    pub auxv: Vec<(u64, u64)>,
}

/// Rounds `x` down to a page boundary.
pub(crate) fn page_down(x: u64) -> u64 {
    x & !(PAGE_SIZE - 1)
}

/// Rounds `x` up to a page boundary; `None` on overflow.
pub(crate) fn page_up(x: u64) -> Option<u64> {
    Some(x.checked_add(PAGE_SIZE - 1)? & !(PAGE_SIZE - 1))
}
