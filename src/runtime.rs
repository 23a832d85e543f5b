//! The boundary between Rust and translated code: the per-thread context and
//! the entry/exit stubs in `runtime/entry.S`.
//!
//! I1: the context's layout and accessors are the contract's
//!     (contract/ctx.rs C1, C2): the stubs use its `offset_of!`s.
//! I2: while translated code runs, the GS base is the thread's `ThreadCtx`
//!     and the FS base is the guest's; Rust code runs only with hotlift's FS
//!     base installed (the stubs and the signal entry switch it).
//! I3: guest vector state lives in the XSAVE area between runs; the host
//!     runs with a fresh x87 state and hotlift's MXCSR.
//! I4: a context lives in a mapping of its own, followed at `off::IBL` by
//!     its thread's indirect-branch lookup table, so emitted lookups reach
//!     the table as `gs:[index*8 + off::IBL]`: each thread has its own
//!     table and no other thread writes it. Contexts are never freed (the
//!     monitor reads `ring_pos` until the end).
//! I5: a table is fresh zero memory on small pages, empty as it is
//!     (cache/ibl.rs I1): a thread touches the pages its inserts reach.
//!     (The first thread's table had a huge page of its own, from when
//!     the table was written empty entry by entry; with zero memory that
//!     gained nothing measurable, `/bin/true` 1.00 and python's loop
//!     0.97-1.01 in paired runs, and the 2 MB the kernel zeroed at the
//!     first insert took 3-15 ms in some runs on a VM whose freed memory
//!     goes back to its host: Intel Xeon model 207, `perf record`.)
//!
//! Usage: `ThreadCtx::alloc()`, `install_gs(&ctx)`, then repeatedly
//! `set_enter_target` and call [`enter`]; read `exit_reason`/`exit_arg()`
//! after.
#![allow(unsafe_code)]

use std::alloc::{alloc_zeroed, Layout};
use std::arch::global_asm;
use std::cell::Cell;
use std::mem::offset_of;
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, Ordering};

use crate::contract::{Reg, ThreadCtx, CTX_BYTES, LOOP_LIMIT};

/// The Rust half of host signal handling (src/signal), called by
/// `hotlift_signal_entry` with the kernel's arguments once hotlift's FS
/// base is installed (I2). The signal layer passes it to every
/// [`signal_entry_addr`] it installs, so it is set before the stub can
/// run; the runtime does not depend on the layer above it.
pub type HostSignalHandler =
    unsafe extern "C" fn(sig: i32, info: *mut libc::siginfo_t, uctx: *mut libc::c_void);

/// The [`HostSignalHandler`] `hotlift_signal_entry` calls (entry.S reads
/// it as a code pointer).
static HOST_SIGNAL_HANDLER: AtomicPtr<()> = AtomicPtr::new(std::ptr::null_mut());

/// A signal that ends the guest arrived and the profile is still to be
/// written (signal I4); 0 when none. Set by the signal handler, read by
/// `runtime/entry.S` before a guest syscall.
pub static PENDING_FATAL: AtomicU32 = AtomicU32::new(0);

/// The signal recorded in [`PENDING_FATAL`], if one arrived; the
/// dispatcher then writes the profile and dies of it.
pub fn pending_fatal() -> Option<i32> {
    match PENDING_FATAL.load(std::sync::atomic::Ordering::Acquire) {
        0 => None,
        s => Some(s as i32),
    }
}

global_asm!(
    include_str!("../runtime/entry.S"),
    GPR = const offset_of!(ThreadCtx, gpr),
    RFLAGS = const offset_of!(ThreadCtx, rflags),
    FS_BASE = const offset_of!(ThreadCtx, fs_base),
    HOST_RSP = const offset_of!(ThreadCtx, host_rsp),
    HOST_FS = const offset_of!(ThreadCtx, host_fs),
    ENTER_TARGET = const offset_of!(ThreadCtx, enter_target),
    XSAVE_PTR = const offset_of!(ThreadCtx, xsave_ptr),
    XSAVE_MASK = const offset_of!(ThreadCtx, xsave_mask),
    HOST_MXCSR = const offset_of!(ThreadCtx, host_mxcsr),
    XSAVE_FAST = const offset_of!(ThreadCtx, xsave_fast),
    RUST_HANDLER = sym HOST_SIGNAL_HANDLER,
    PENDING = sym PENDING_FATAL,
    SIG_QUEUED = const offset_of!(ThreadCtx, sig_queued),
    SYS_RESTART = const offset_of!(ThreadCtx, sys_restart),
    EINTR = const libc::EINTR,
);

extern "C" {
    fn hotlift_restore_rt();
}

extern "C" {
    fn hotlift_enter(ctx: *mut ThreadCtx);
    fn hotlift_enter_end();
    fn hotlift_exit();
    fn hotlift_signal_entry(signo: i32, info: *mut libc::siginfo_t, uctx: *mut libc::c_void);
    fn hotlift_guest_syscall(nr: u64, args: *const [u64; 6]) -> i64;
    fn hotlift_guest_syscall_check();
    fn hotlift_guest_syscall_insn();
    fn hotlift_guest_syscall_done();
}

/// Where an interrupted thread is, as far as signal handling cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StubPlace {
    /// In `hotlift_enter`, before it jumps to `enter_target`.
    Entering,
    /// In a guest syscall, before the kernel ran it (or rewound to run it
    /// again): it can still be made to return -EINTR at `done`.
    BeforeSyscall {
        done: u64,
        /// At the syscall instruction itself (not yet run, or rewound by
        /// the kernel to run again: RCX tells, entry.S).
        at_insn: bool,
    },
    Elsewhere,
}

/// Classify the interrupted program counter `pc`.
pub fn stub_place(pc: u64) -> StubPlace {
    let a = |f: unsafe extern "C" fn()| f as *const () as u64;
    if (hotlift_enter as *const () as u64..a(hotlift_enter_end)).contains(&pc) {
        return StubPlace::Entering;
    }
    if (a(hotlift_guest_syscall_check)..=a(hotlift_guest_syscall_insn)).contains(&pc) {
        return StubPlace::BeforeSyscall {
            done: a(hotlift_guest_syscall_done),
            at_insn: pc == a(hotlift_guest_syscall_insn),
        };
    }
    StubPlace::Elsewhere
}

/// Pass guest syscall `nr` to the kernel, interruptibly (entry.S): returns
/// the raw result, or -EINTR when a signal that ends the guest arrived
/// before the kernel ran it.
///
/// # Safety
/// As for `host::syscall6`: the caller's allowlist decides that
/// the call cannot disturb hotlift's own state.
pub unsafe fn guest_syscall(nr: u64, args: [u64; 6]) -> i64 {
    // SAFETY: upheld by the caller; the stub follows the C ABI.
    unsafe { hotlift_guest_syscall(nr, &args) }
}

/// Address of the `rt_sigreturn` restorer for handlers installed with the
/// raw syscall (entry.S).
pub fn restore_rt_addr() -> u64 {
    hotlift_restore_rt as *const () as u64
}

/// Address of the signal entry stub, for `sigaction`; the stub calls
/// `handler` (the one handler: every call passes the same).
pub fn signal_entry_addr(handler: HostSignalHandler) -> usize {
    HOST_SIGNAL_HANDLER.store(handler as *mut (), Ordering::Release);
    hotlift_signal_entry as *const () as usize
}

/// Bytes of the guest's XSAVE state (standard format, every feature
/// hotlift saves), as the kernel sizes a signal frame's.
pub fn xsave_size() -> usize {
    xsave_geometry().1
}

/// Put the XSAVE area at `area` in the initial state a signal handler
/// starts with: x87 control word 0x37f, MXCSR 0x1f80, every component at
/// its init value (XSTATE_BV = 0).
pub fn xsave_init(area: u64) {
    // SAFETY: every thread's area is at least 576 bytes (ThreadCtx::alloc)
    // and only this thread touches it.
    unsafe {
        let p = area as *mut u8;
        std::ptr::write_bytes(p, 0, 576);
        (p as *mut u16).write(0x37f);
        (p.add(24) as *mut u32).write(0x1f80);
    }
}

/// Give the components of the standard-format XSAVE image `x` that are in
/// their initial state (XSTATE_BV bit clear) their initial values, as a
/// plain XSAVE writes them: `entry.S` saves with XSAVEOPT, which leaves
/// such components' bytes as they were, and a signal frame's (what the
/// guest's handler reads) must hold what the kernel's would.
pub fn xsave_sanitize(x: &mut [u8]) {
    let Some(bv) = x
        .get(512..520)
        .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
    else {
        return;
    };
    let (mask, _) = xsave_geometry();
    if mask & 1 != 0 && bv & 1 == 0 {
        // FCW 0x37f; FSW, FTW, FOP, FIP, FDP and the eight registers zero.
        x[0..24].fill(0);
        x[0..2].copy_from_slice(&0x37fu16.to_le_bytes());
        x[32..160].fill(0);
    }
    if mask & 2 != 0 && bv & 2 == 0 {
        x[160..416].fill(0);
    }
    for (i, &(off, size)) in xsave_components().iter().enumerate() {
        if mask >> i & 1 != 0 && bv >> i & 1 == 0 && size != 0 {
            if let Some(c) = x.get_mut(off..off + size) {
                c.fill(0);
            }
        }
    }
}

/// Where each extended component (2 and up) lies in the standard XSAVE
/// format: (offset, size), from CPUID leaf 0xD; (0, 0) below 2 and for
/// components not enabled.
fn xsave_components() -> &'static [(usize, usize); 64] {
    static COMPONENTS: std::sync::OnceLock<[(usize, usize); 64]> = std::sync::OnceLock::new();
    COMPONENTS.get_or_init(|| {
        let (mask, _) = xsave_geometry();
        let mut c = [(0, 0); 64];
        for (i, slot) in c.iter_mut().enumerate().skip(2) {
            if mask >> i & 1 != 0 {
                let leaf = std::arch::x86_64::__cpuid_count(0xd, i as u32);
                *slot = (leaf.ebx as usize, leaf.eax as usize);
            }
        }
        c
    })
}

/// XSAVE features saved for the guest: everything enabled in XCR0 except
/// AMX tile state (bits 17, 18), which needs a per-process permission the
/// guest has to ask for (see README, known limits). Read once: `cpuid`
/// traps to the hypervisor in a VM, and every signal delivery and
/// `rt_sigreturn` asks (c-paths, which takes a signal per call of one of
/// its shapes, spent 12 % of its time translated in `cpuid`; Intel Xeon
/// model 207).
fn xsave_geometry() -> (u64, usize) {
    static GEOMETRY: std::sync::OnceLock<(u64, usize)> = std::sync::OnceLock::new();
    *GEOMETRY.get_or_init(|| {
        // SAFETY: xgetbv(0) is valid whenever OSXSAVE is set, which
        // check_cpu verified before any ThreadCtx is built.
        let xcr0 = unsafe { std::arch::x86_64::_xgetbv(0) };
        let mask = xcr0 & !((1 << 17) | (1 << 18));
        // SAFETY: cpuid leaf 0xD is present on every CPU with XSAVE.
        let leaf = std::arch::x86_64::__cpuid_count(0xd, 0);
        (mask, leaf.ebx as usize)
    })
}

/// Whether `runtime/entry.S` may save and load the guest's vector state
/// by hand in XSAVE's standard format, where the x87 state is initial:
/// only where the state XSAVE covers is x87, SSE, AVX and PKRU (no
/// AVX-512, whose 32 registers and masks the hand path does not hold).
/// 0: never; 1: yes, no PKRU; else PKRU's offset in the image. Read once
/// (cpuid traps in a VM).
pub fn xsave_fast() -> u32 {
    static FAST: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *FAST.get_or_init(|| {
        if std::env::var_os("HOTLIFT_XSAVE_ALWAYS").is_some() {
            return 0;
        }
        let (mask, _) = xsave_geometry();
        let (avx, pkru) = (1 << 2, 1 << 9);
        if mask & !(0b111 | pkru) != 0 || mask & avx == 0 {
            return 0;
        }
        // The standard format puts AVX's upper halves at 576.
        let c = xsave_components();
        if c[2] != (576, 256) {
            return 0;
        }
        if mask & pkru == 0 {
            return 1;
        }
        // RDPKRU needs CR4.PKE (CPUID.7.0:ECX.OSPKE, bit 4).
        let ospke = std::arch::x86_64::__cpuid_count(7, 0).ecx & (1 << 4) != 0;
        let (off, size) = c[9];
        if !ospke || size < 4 || off < 576 {
            return 0;
        }
        off as u32
    })
}

/// What the translator needs from the CPU; a clear error otherwise.
pub fn check_cpu() -> Result<(), String> {
    let has_fsgsbase = (unsafe_getauxval(libc::AT_HWCAP2) & 2) != 0;
    if !has_fsgsbase {
        return Err("the kernel does not enable FSGSBASE for user mode (AT_HWCAP2 bit 1); hotlift needs rdfsbase/wrfsbase".into());
    }
    if !std::arch::is_x86_feature_detected!("xsave") {
        return Err("the CPU or kernel lacks XSAVE".into());
    }
    // Every CPU with BMI2 (below) has it; entry.S saves the guest's
    // vector state with it.
    if !std::arch::is_x86_feature_detected!("xsaveopt") {
        return Err("the CPU lacks XSAVEOPT".into());
    }
    if !std::arch::is_x86_feature_detected!("bmi2") {
        return Err("the CPU lacks BMI2 (rorx is used by indirect-branch lookup)".into());
    }
    Ok(())
}

fn current_fs_base() -> u64 {
    let fs: u64;
    // SAFETY: FSGSBASE was checked by check_cpu.
    unsafe { std::arch::asm!("rdfsbase {}", out(reg) fs, options(nostack, preserves_flags)) };
    fs
}

fn unsafe_getauxval(t: libc::c_ulong) -> u64 {
    // SAFETY: getauxval has no preconditions.
    unsafe { libc::getauxval(t) }
}

impl ThreadCtx {
    /// A context for a guest thread that starts at `rip` with stack `rsp`:
    /// all other registers zero, as the kernel starts a process. It lives
    /// in a mapping of its own with its lookup table after it (I4), made
    /// at once when `populate` (a process's first thread: the table's
    /// entries are read before they are written, so a page of it faulted
    /// in twice, the zero page then its copy; `/bin/true` 0.969, python
    /// `-c pass` 0.959, paired medians of 30 on the AMD EPYC VM. Not for
    /// later threads: a short-lived thread would pay for the whole
    /// megabyte).
    pub fn alloc(rip: u64, rsp: u64, populate: bool) -> CtxBox {
        let (mask, size) = xsave_geometry();
        let layout = Layout::from_size_align(size.max(576), 64).expect("xsave layout");
        // SAFETY: layout has non-zero size.
        let area = unsafe { alloc_zeroed(layout) };
        assert!(
            !area.is_null(),
            "out of memory allocating {size} bytes of XSAVE area"
        );
        // Legacy area: FCW at 0 (0x37f), MXCSR at 24 (0x1f80). XSTATE_BV = 0
        // loads the init state for everything else.
        xsave_init(area as u64);
        let gpr: [Cell<u64>; 16] = std::array::from_fn(|_| Cell::new(0));
        gpr[Reg::Rsp as usize].set(rsp);
        // I5.
        let bytes = CTX_BYTES + crate::cache::IBL_ENTRIES * 16;
        let m = crate::anon::map(bytes, libc::MAP_NORESERVE)
            .unwrap_or_else(|e| panic!("cannot map a thread context ({bytes} bytes): {e}"));
        if populate {
            // SAFETY: the mapping just made.
            unsafe { crate::anon::populate_write(m, bytes) };
        }
        let p = m as *mut ThreadCtx;
        let ctx = ThreadCtx {
            gpr,
            rflags: Cell::new(0x202),
            rip: AtomicU64::new(rip),
            fs_base: Cell::new(0),
            guest_gs: Cell::new(0),
            host_rsp: Cell::new(0),
            // A signal before the first entry must find hotlift's FS base.
            host_fs: Cell::new(current_fs_base()),
            exit_reason: Cell::new(0),
            exit_arg: AtomicU32::new(0),
            exit_fn: Cell::new(hotlift_exit as *const () as u64),
            enter_target: AtomicU64::new(0),
            xsave_ptr: Cell::new(area as u64),
            xsave_mask: Cell::new(mask),
            host_mxcsr: Cell::new(0x1f80),
            xsave_fast: Cell::new(xsave_fast()),
            scratch: std::array::from_fn(|_| Cell::new(0)),
            ring_pos: Cell::new(0),
            inline_counts: Cell::new(0),
            sb_partial: AtomicU32::new(0),
            stepping: AtomicU32::new(0),
            mail: AtomicU64::new(0),
            sig_queued: AtomicU64::new(0),
            sys_restart: AtomicU32::new(0),
            _pad2: 0,
            path_seg: Cell::new(0),
            path_tot: Cell::new(0),
            path_serial: Cell::new(0),
            path_next: Cell::new(0),
            path_sp: Cell::new(0),
            path_left: Cell::new(0),
            path_scratch: std::array::from_fn(|_| Cell::new(0)),
            loop_left: std::array::from_fn(|_| Cell::new(LOOP_LIMIT)),
            loop_limit: Cell::new(LOOP_LIMIT),
            sb_loop: [AtomicU32::new(0), AtomicU32::new(0)],
        };
        // SAFETY: a fresh mapping, page-aligned, larger than ThreadCtx.
        unsafe { p.write(ctx) };
        CtxBox { ptr: p }
    }

    /// Take `other`'s guest state: registers, flags, RIP, FS/GS bases and
    /// vector state (a new thread starts as the one that cloned it).
    pub fn copy_guest_state(&self, other: &ThreadCtx) {
        for (to, from) in self.gpr.iter().zip(&other.gpr) {
            to.set(from.get());
        }
        self.rflags.set(other.rflags.get());
        self.set_rip(other.rip());
        self.fs_base.set(other.fs_base.get());
        self.guest_gs.set(other.guest_gs.get());
        let (_, size) = xsave_geometry();
        // SAFETY: both areas are at least `size` bytes (ThreadCtx::alloc)
        // and distinct.
        unsafe {
            std::ptr::copy_nonoverlapping(
                other.xsave_ptr.get() as *const u8,
                self.xsave_ptr.get() as *mut u8,
                size.max(576),
            )
        };
    }

    /// Make this context the GS base of the calling thread (I2). The context
    /// must outlive every later [`enter`] on this thread.
    pub fn install_gs(&self) {
        let p = self as *const ThreadCtx as u64;
        // SAFETY: FSGSBASE was checked by check_cpu; nothing in hotlift or
        // glibc on x86-64 uses GS.
        unsafe { std::arch::asm!("wrgsbase {}", in(reg) p, options(nostack, preserves_flags)) };
    }
}

/// Owner of a [`ThreadCtx`] in its own mapping (I4); never unmapped. It gives
/// only `&ThreadCtx` (contract/ctx.rs C2).
#[derive(Debug)]
pub struct CtxBox {
    ptr: *mut ThreadCtx,
}

// SAFETY: the context is plain memory owned by one guest thread; the
// monitor only reads `ring_pos` atomically.
unsafe impl Send for CtxBox {}

impl CtxBox {
    /// The thread's lookup table entries (I4).
    pub fn ibl_entries(&self) -> *mut [u64; 2] {
        // SAFETY: the table follows the context in its mapping (I4), which
        // `ptr` (the mapping's start) covers.
        unsafe { (self.ptr as *mut u8).add(CTX_BYTES) as *mut [u64; 2] }
    }
}

impl std::ops::Deref for CtxBox {
    type Target = ThreadCtx;
    fn deref(&self) -> &ThreadCtx {
        // SAFETY: ptr points at the context written by ThreadCtx::new.
        unsafe { &*self.ptr }
    }
}

/// Run translated code at `ctx.enter_target` until it exits to the
/// dispatcher.
///
/// # Safety
/// `ctx` must be the installed GS base of this thread and `enter_target`
/// must be the entry of a translated block in the code cache.
pub unsafe fn enter(ctx: &ThreadCtx) {
    // SAFETY: upheld by the caller; the stub preserves callee-saved state.
    // Every field it and translated code write is interior-mutable (contract/ctx.rs C2).
    unsafe { hotlift_enter(ctx as *const ThreadCtx as *mut ThreadCtx) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A component XSAVEOPT left alone (its XSTATE_BV bit clear) reads as
    /// its initial value in a signal frame; one in use keeps its bytes, and
    /// so do MXCSR and the header.
    #[test]
    fn components_in_their_initial_state_read_as_initial_values() {
        let size = xsave_size().max(576);
        let (mask, _) = xsave_geometry();
        let mut x = vec![0x55u8; size];
        x[512..520].copy_from_slice(&0u64.to_le_bytes());
        xsave_sanitize(&mut x);
        assert_eq!(&x[0..2], &0x37fu16.to_le_bytes());
        assert!(x[2..24].iter().all(|&b| b == 0));
        assert_eq!(
            &x[24..32],
            &[0x55; 8],
            "MXCSR and its mask are always saved"
        );
        assert!(x[32..416].iter().all(|&b| b == 0));
        assert!(
            x[416..512].iter().all(|&b| b == 0x55),
            "reserved bytes untouched"
        );
        if mask & 4 != 0 {
            let (off, len) = xsave_components()[2];
            assert!(len > 0 && x[off..off + len].iter().all(|&b| b == 0));
        }
        // In use: nothing changes.
        let mut y = vec![0x55u8; size];
        y[512..520].copy_from_slice(&mask.to_le_bytes());
        let before = y.clone();
        xsave_sanitize(&mut y);
        assert_eq!(y, before);
    }
}
