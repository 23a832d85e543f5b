//! The thread context: per-guest-thread state that emitted code reaches
//! as `gs:[offset]`, the entry stubs (`runtime/entry.S`) save to and load
//! from, the signal handler writes to and the monitor reads a field of.
//! The runtime allocates and enters it (runtime.rs); this is its layout
//! and its accessors, below every layer that touches it.
//!
//! C1: every offset the assembly or emitted code uses is an `offset_of!` on
//!     [`ThreadCtx`], passed to `global_asm!` as a `const` operand or read
//!     through [`off`]; the layout is `#[repr(C)]`.
//! C2: Rust reaches a context only as `&ThreadCtx` (`runtime::CtxBox`
//!     gives no `&mut`), and every field can change behind it: the fields
//!     the thread's signal handler writes (`rip`, `exit_arg`,
//!     `enter_target`, `stepping`, `sb_partial`, `sb_loop`, `sig_queued`,
//!     `sys_restart`) are atomics, read and written through `&self`
//!     methods (the handler interrupts the thread anywhere, also in the
//!     dispatcher: dispatch/mailbox.rs M1); the others are `Cell`s, which
//!     the thread's own code (Rust, the stubs, emitted code) changes. So
//!     no reference Rust holds across a signal or a run of translated code
//!     claims the context unchanged. Emitted code and the stubs use every
//!     field as plain memory.

use std::cell::Cell;
use std::mem::offset_of;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicU32, AtomicU64};

use super::LOOP_COUNTERS;

/// Why translated code came back to the dispatcher.
pub mod exit_reason {
    /// An exit site (`ThreadCtx::exit_arg` = site id): direct miss, syscall, trap.
    pub const SITE: u32 = 1;
    /// Indirect lookup missed; `ThreadCtx::rip` holds the target.
    pub const INDIRECT_MISS: u32 = 2;
    /// The guest wrote to write-protected code (`ThreadCtx::rip` = the
    /// writing instruction, not yet executed).
    pub const CODE_WRITE: u32 = 3;
    /// The guest faulted fatally (`ThreadCtx::exit_arg` = the signal,
    /// `ThreadCtx::rip` = the faulting guest instruction): write the profile,
    /// then die of that signal.
    pub const FATAL_SIGNAL: u32 = 4;
    /// The thread was stopped at an instruction boundary (a kick,
    /// dispatch/process.rs I3); `ThreadCtx::rip` is the guest instruction
    /// to run next and every register is the guest's.
    pub const KICKED: u32 = 5;
    /// An instrumented indirect jump of a path-profiled function went to
    /// a target its graph does not know (`ThreadCtx::rip` = the target,
    /// `ThreadCtx::exit_arg` = version and node, src/paths).
    pub const PATH_MISS: u32 = 6;
}

/// A guest general-purpose register: its index in [`ThreadCtx::gpr`]
/// (iced/hardware order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Reg {
    Rax,
    Rcx,
    Rdx,
    Rbx,
    Rsp,
    Rbp,
    Rsi,
    Rdi,
    R8,
    R9,
    R10,
    R11,
    R12,
    R13,
    R14,
    R15,
}

/// Number of spill slots emitted code may use.
pub const SCRATCH_SLOTS: usize = 8;

/// Per-guest-thread state, reached from emitted code as `gs:[offset]`.
#[repr(C, align(64))]
#[derive(Debug)]
pub struct ThreadCtx {
    /// Guest GPRs in iced/hardware order: rax rcx rdx rbx rsp rbp rsi rdi r8..r15.
    pub gpr: [Cell<u64>; 16],
    pub rflags: Cell<u64>,
    pub rip: AtomicU64,
    pub fs_base: Cell<u64>,
    /// The guest's GS base (emulated; the real GS base is this context).
    pub guest_gs: Cell<u64>,
    pub host_rsp: Cell<u64>,
    pub host_fs: Cell<u64>,
    pub exit_reason: Cell<u32>,
    pub exit_arg: AtomicU32,
    /// Address of `hotlift_exit`; emitted code leaves with `jmp gs:[exit_fn]`.
    pub exit_fn: Cell<u64>,
    pub enter_target: AtomicU64,
    pub xsave_ptr: Cell<u64>,
    pub xsave_mask: Cell<u64>,
    pub host_mxcsr: Cell<u32>,
    /// How `runtime/entry.S` may save and load the guest's vector state
    /// without XSAVE (`runtime::xsave_fast`): 0 never, 1 without PKRU,
    /// else PKRU's offset in the XSAVE image.
    pub xsave_fast: Cell<u32>,
    /// Spill slots for emitted code (C1: offsets from [`off::scratch`]).
    pub scratch: [Cell<u64>; SCRATCH_SLOTS],
    /// Next free slot of this thread's ring (monitor/ring.rs); block
    /// prologues append here. Read atomically by the monitor.
    pub ring_pos: Cell<u64>,
    /// Base of the per-block counter array for `--count-inline`.
    pub inline_counts: Cell<u64>,
    /// The partial unit the dispatcher must push (0: none): the thread
    /// left a superblock pass abnormally (set by the signal handler).
    pub sb_partial: AtomicU32,
    /// Non-zero while the thread single-steps (TF) through glue to an
    /// instruction boundary, with the exit reason it will leave with.
    pub stepping: AtomicU32,
    /// The thread's `dispatch::Mailbox` (set when it starts running guest
    /// code): all the signal handler reaches of the thread (mailbox.rs M1).
    pub mail: AtomicU64,
    /// Signals queued for delivery to guest handlers (bit `sig - 1`), set
    /// by the signal handler on this thread, cleared by the dispatcher as
    /// it delivers them (signal/deliver.rs). Read by the guest-syscall stub.
    pub sig_queued: AtomicU64,
    /// Set by the guest-syscall stub when it skipped the syscall because a
    /// signal was queued, and by the handler when the kernel rewound an
    /// interrupted syscall to restart it: the syscall instruction runs
    /// again after the guest's handler (signal/deliver.rs D3).
    pub sys_restart: AtomicU32,
    pub _pad2: u32,
    /// Path profiling (src/paths, paths/emit/mod.rs): the running id of the
    /// thread's current instrumented activation (`seg`, `tot`), its serial
    /// number, the last serial handed out, the next free frame of the
    /// thread's activation stack and how many frames are still free.
    pub path_seg: Cell<u64>,
    pub path_tot: Cell<u64>,
    pub path_serial: Cell<u64>,
    pub path_next: Cell<u64>,
    pub path_sp: Cell<u64>,
    pub path_left: Cell<u64>,
    /// Spill slots of path-profiling probes.
    pub path_scratch: [Cell<u64>; PATH_SCRATCH],
    /// Counted loops (contract I2): passes each loop exit of the
    /// superblock running may still end before its record is pushed;
    /// `loop_limit` outside a counted loop.
    pub loop_left: [Cell<u32>; LOOP_COUNTERS],
    pub loop_limit: Cell<u32>,
    /// The `TAG_LOOP` header and first unit of the superblock the thread
    /// left abnormally with its loops counted (set with `sb_partial`;
    /// zero: none): the dispatcher pushes the counters before the partial
    /// unit.
    pub sb_loop: [AtomicU32; 2],
}

/// Spill slots path-profiling probes use (paths/emit/mod.rs).
pub const PATH_SCRATCH: usize = 8;

/// Bytes the context takes at the start of its mapping; the thread's
/// indirect-branch lookup table follows (runtime I4).
pub const CTX_BYTES: usize = 4096;
/// Offsets into [`ThreadCtx`] for emitted code (C1).
pub mod off {
    use super::ThreadCtx;
    use std::mem::offset_of;
    /// The thread's lookup table, from the GS base (runtime I4).
    pub const IBL: usize = super::CTX_BYTES;
    pub const RIP: usize = offset_of!(ThreadCtx, rip);
    pub const GUEST_GS: usize = offset_of!(ThreadCtx, guest_gs);
    pub const RING_POS: usize = offset_of!(ThreadCtx, ring_pos);
    pub const INLINE_COUNTS: usize = offset_of!(ThreadCtx, inline_counts);
    pub const EXIT_REASON: usize = offset_of!(ThreadCtx, exit_reason);
    pub const EXIT_ARG: usize = offset_of!(ThreadCtx, exit_arg);
    pub const EXIT_FN: usize = offset_of!(ThreadCtx, exit_fn);
    pub const fn scratch(i: usize) -> usize {
        assert!(i < super::SCRATCH_SLOTS);
        offset_of!(ThreadCtx, scratch) + 8 * i
    }
    pub const PATH_SEG: usize = offset_of!(ThreadCtx, path_seg);
    pub const PATH_TOT: usize = offset_of!(ThreadCtx, path_tot);
    pub const PATH_SERIAL: usize = offset_of!(ThreadCtx, path_serial);
    pub const PATH_NEXT: usize = offset_of!(ThreadCtx, path_next);
    pub const PATH_SP: usize = offset_of!(ThreadCtx, path_sp);
    pub const PATH_LEFT: usize = offset_of!(ThreadCtx, path_left);
    pub const fn path_scratch(i: usize) -> usize {
        assert!(i < super::PATH_SCRATCH);
        offset_of!(ThreadCtx, path_scratch) + 8 * i
    }
    /// Loop counter `l` (contract I2).
    pub const fn loop_left(l: usize) -> usize {
        assert!(l < super::super::LOOP_COUNTERS);
        offset_of!(ThreadCtx, loop_left) + 4 * l
    }
}

// C1 checked at compile time: the assembly uses 32-bit displacements and the
// XSAVE mask is read as two dwords.
const _: () = assert!(std::mem::size_of::<ThreadCtx>() <= CTX_BYTES);
const _: () = assert!(offset_of!(ThreadCtx, xsave_mask) % 8 == 0);
const _: () = assert!(offset_of!(ThreadCtx, ring_pos) % 8 == 0);
const _: () = assert!(offset_of!(ThreadCtx, sig_queued) % 8 == 0);
const _: () = assert!(offset_of!(ThreadCtx, path_seg) % 8 == 0);

impl ThreadCtx {
    /// Guest register `r`.
    pub fn reg(&self, r: Reg) -> u64 {
        self.gpr[r as usize].get()
    }

    pub fn set_reg(&self, r: Reg, v: u64) {
        self.gpr[r as usize].set(v)
    }

    /// The queued-signal bits, shared with this thread's signal handler.
    pub fn sig_queued(&self) -> &AtomicU64 {
        &self.sig_queued
    }

    // The fields the signal handler writes are atomics (C2); the thread
    // reads and writes them through these. Relaxed: the handler runs on
    // the thread itself, between two of its instructions.

    /// The guest's RIP while hotlift runs (translated code keeps it in
    /// the real register).
    pub fn rip(&self) -> u64 {
        self.rip.load(Relaxed)
    }

    pub fn set_rip(&self, v: u64) {
        self.rip.store(v, Relaxed)
    }

    pub fn exit_arg(&self) -> u32 {
        self.exit_arg.load(Relaxed)
    }

    pub fn set_exit_arg(&self, v: u32) {
        self.exit_arg.store(v, Relaxed)
    }

    pub fn set_enter_target(&self, v: u64) {
        self.enter_target.store(v, Relaxed)
    }

    pub fn stepping(&self) -> u32 {
        self.stepping.load(Relaxed)
    }

    pub fn set_stepping(&self, v: u32) {
        self.stepping.store(v, Relaxed)
    }

    /// The partial unit to push, taken (0: none).
    pub fn take_sb_partial(&self) -> u32 {
        take32(&self.sb_partial, 0)
    }

    /// A superblock pass left abnormally: its partial unit and loop
    /// record words (superblock/mod.rs).
    pub fn set_sb_partial(&self, unit: u32, sb_loop: [u32; 2]) {
        self.sb_loop[0].store(sb_loop[0], Relaxed);
        self.sb_loop[1].store(sb_loop[1], Relaxed);
        self.sb_partial.store(unit, Relaxed)
    }

    /// The loop record words, taken.
    pub fn take_sb_loop(&self) -> [u32; 2] {
        [take32(&self.sb_loop[0], 0), take32(&self.sb_loop[1], 0)]
    }

    /// Whether the syscall runs again (signal/deliver.rs D3), taken.
    pub fn take_sys_restart(&self) -> bool {
        take32(&self.sys_restart, 0) != 0
    }

    pub fn set_sys_restart(&self) {
        self.sys_restart.store(1, Relaxed)
    }

    /// Counted loops start from `limit` (contract I2; before the thread
    /// runs translated code).
    pub fn set_loop_limit(&self, limit: u32) {
        self.loop_limit.set(limit);
        for c in &self.loop_left {
            c.set(limit);
        }
    }

    /// The producer position as the monitor reads it.
    pub fn ring_pos_atomic(&self) -> *const std::sync::atomic::AtomicU64 {
        self.ring_pos.as_ptr() as *const std::sync::atomic::AtomicU64
    }
}

/// Take the value of `slot`, leaving `empty`: a load, and a store only when
/// there is something (no locked instruction on the dispatcher's path).
/// The handler writes these only while the thread runs translated code,
/// never between this load and store (dispatch/mailbox.rs M1).
pub fn take32(slot: &AtomicU32, empty: u32) -> u32 {
    let v = slot.load(Relaxed);
    if v != empty {
        slot.store(empty, Relaxed);
    }
    v
}
