//! Host signals: faults raised by translated code, and how hotlift dies of
//! the guest's signal the way the kernel would have killed the program.
//!
//! I1: the handler runs behind `hotlift_signal_entry` (runtime/entry.S),
//!     which has already switched to hotlift's FS base.
//! I2: the handler is async-signal-safe: no allocation, no locks, no std
//!     I/O; messages are formatted into a stack buffer and written with
//!     `write(2)`.
//! I3: a fault in translated code is the guest's: the handler sends the
//!     thread to the dispatcher, which writes the profile and dies of the
//!     same signal as natively. A fault anywhere else is hotlift's own bug
//!     and is reported as such.
//! I4: a signal sent to the process whose action for the guest is to end
//!     it (SIGINT, SIGTERM, SIGHUP, SIGALRM, …; see [`ends_guest`]) never
//!     kills hotlift directly: the handler records it in `runtime::PENDING_FATAL`
//!     and gets the thread to the dispatcher — out of translated code at
//!     the next instruction boundary as a kick does, out of a guest syscall through -EINTR
//!     (runtime::guest_syscall) — which writes the profile and then dies of
//!     that signal. Signals the guest ignores are ignored by the kernel.
//! I5: the handler never forms a reference to the thread's `Vm`, which
//!     the interrupted dispatcher may hold mutably: it reaches the thread
//!     through its context's `mail` (dispatch/mailbox.rs), writing only
//!     atomics there and in the context (contract/ctx.rs C2), and the process's
//!     shared state.
#![allow(unsafe_code)]

pub mod deliver;

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::contract::ThreadCtx;
use crate::dispatch::process::KICK;
use crate::dispatch::{hotlift_owns, FAULT_SIGNALS};
use crate::dispatch::{Mailbox, Vm};
use crate::runtime::PENDING_FATAL;

static VERBOSE: AtomicBool = AtomicBool::new(false);
static CODE_LO: AtomicU64 = AtomicU64::new(0);
static CODE_HI: AtomicU64 = AtomicU64::new(0);

/// Signals whose default action ends the process and that hotlift catches
/// to write the profile first (I4): all but SIGKILL/SIGSTOP, hotlift's own
/// fault signals, those whose default is to ignore or stop, and 32/33,
/// which the host C library keeps for itself.
pub fn ends_guest(sig: i32) -> bool {
    (1..=64).contains(&sig)
        && !hotlift_owns(sig)
        && !matches!(
            sig,
            libc::SIGKILL
                | libc::SIGSTOP
                | libc::SIGCHLD
                | libc::SIGCONT
                | libc::SIGURG
                | libc::SIGWINCH
                | libc::SIGTSTP
                | libc::SIGTTIN
                | libc::SIGTTOU
                | 32
                | 33
        )
}

/// Signals whose default action ends the process.
pub fn default_fatal(sig: i32) -> bool {
    !matches!(
        sig,
        libc::SIGCHLD
            | libc::SIGCONT
            | libc::SIGURG
            | libc::SIGWINCH
            | libc::SIGSTOP
            | libc::SIGTSTP
            | libc::SIGTTIN
            | libc::SIGTTOU
    ) && (1..=64).contains(&sig)
}

/// The guest installs a handler for `sig`: the kernel gives it to
/// hotlift's handler, which queues it for the guest's (deliver.rs).
/// Signals of [`ends_guest`] and hotlift's own are caught already.
pub fn catch_for_guest(sig: i32) -> Result<(), String> {
    if hotlift_owns(sig) {
        return Ok(());
    }
    set_host_action(sig, false)
}

/// The guest's action for `sig` went back to default (SA_RESETHAND): the
/// kernel's goes with it, except where hotlift catches the signal anyway.
/// Async-signal-safe.
pub fn reset_host_action(sig: i32) {
    if !ends_guest(sig) && !hotlift_owns(sig) {
        crate::status::set_default(sig);
    }
}

/// Give the kernel hotlift's action for a signal of [`ends_guest`]: ignored
/// when the guest ignores it, else caught (I4).
pub fn set_host_action(sig: i32, guest_ignores: bool) -> Result<(), String> {
    if sig == 32 || sig == 33 {
        // The host C library refuses these (its own thread signals, unused
        // by hotlift): the raw syscall, with hotlift's restorer.
        let k: [u64; 4] = if guest_ignores {
            [libc::SIG_IGN as u64, 0, 0, 0]
        } else {
            [
                entry_addr() as u64,
                (libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_RESTART | 0x0400_0000) as u64,
                crate::runtime::restore_rt_addr(),
                u64::MAX,
            ]
        };
        // SAFETY: a valid kernel_sigaction for a signal hotlift never uses.
        let r = unsafe {
            crate::host::syscall6(
                libc::SYS_rt_sigaction as u64,
                [sig as u64, k.as_ptr() as u64, 0, 8, 0, 0],
            )
        };
        return if r == 0 {
            Ok(())
        } else {
            Err(format!("rt_sigaction({sig}): error {}", -r))
        };
    }
    // SAFETY: a valid sigaction for a signal hotlift does not otherwise
    // use; the handler is the async-signal-safe entry stub.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        if guest_ignores {
            sa.sa_sigaction = libc::SIG_IGN;
        } else {
            sa.sa_sigaction = entry_addr();
            // SA_RESTART: hotlift's own syscalls go on; a guest syscall is
            // rewound to its `syscall` instruction, where I4 finds it.
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_RESTART;
            libc::sigfillset(&mut sa.sa_mask);
        }
        if libc::sigaction(sig, &sa, std::ptr::null_mut()) != 0 {
            return Err(format!(
                "sigaction({sig}): {}",
                std::io::Error::last_os_error()
            ));
        }
    }
    Ok(())
}

const ALT_STACK: usize = 256 * 1024;
/// si_code of a SIGSEGV for a present page without the needed permission.
const SEGV_ACCERR: i32 = 2;

/// A fixed buffer for messages inside the handler (I2).
struct StackBuf {
    buf: [u8; 256],
    len: usize,
}

impl StackBuf {
    fn emit(&self) {
        let fd = crate::host::stderr_fd();
        // SAFETY: write(2) is async-signal-safe; the buffer is valid.
        unsafe { libc::write(fd, self.buf.as_ptr() as *const libc::c_void, self.len) };
    }
}

impl std::fmt::Write for StackBuf {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let n = s.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&s.as_bytes()[..n]);
        self.len += n;
        Ok(())
    }
}

/// Install the fault handlers on an alternate stack, and catch the signals
/// of [`ends_guest`] that the guest does not ignore (`ignored(sig)`). `code`
/// is the code cache's execute range.
pub fn install(
    verbose: bool,
    code: (u64, u64),
    ignored: &dyn Fn(i32) -> bool,
) -> Result<(), String> {
    VERBOSE.store(verbose, Ordering::Relaxed);
    CODE_LO.store(code.0, Ordering::Relaxed);
    CODE_HI.store(code.1, Ordering::Relaxed);
    // SAFETY: installs hotlift's handlers (async-signal-safe entry stub).
    unsafe {
        for sig in FAULT_SIGNALS.iter().copied().chain([KICK]) {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = entry_addr();
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            if sig == KICK {
                // A kick must not make hotlift's own syscalls fail.
                sa.sa_flags |= libc::SA_RESTART;
            }
            libc::sigfillset(&mut sa.sa_mask);
            if libc::sigaction(sig, &sa, std::ptr::null_mut()) != 0 {
                return Err(format!(
                    "sigaction({sig}): {}",
                    std::io::Error::last_os_error()
                ));
            }
        }
    }
    for sig in (1..=64).filter(|&s| ends_guest(s)) {
        // Rust's runtime ignores SIGPIPE; the guest starts with it at
        // default, as after execve (`ignored` says so too).
        set_host_action(sig, ignored(sig))?;
    }
    Ok(())
}

/// Give the calling thread an alternate stack for hotlift's handlers
/// (each thread needs its own).
pub fn install_thread() -> Result<(), String> {
    // SAFETY: a fresh anonymous mapping used only as this thread's
    // alternate signal stack, never freed.
    unsafe {
        let stack = libc::mmap(
            std::ptr::null_mut(),
            ALT_STACK,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if stack == libc::MAP_FAILED {
            return Err(format!(
                "cannot map the signal stack: {}",
                std::io::Error::last_os_error()
            ));
        }
        let ss = libc::stack_t {
            ss_sp: stack,
            ss_flags: 0,
            ss_size: ALT_STACK,
        };
        if libc::sigaltstack(&ss, std::ptr::null_mut()) != 0 {
            return Err(format!("sigaltstack: {}", std::io::Error::last_os_error()));
        }
    }
    Ok(())
}

/// What the handler reaches of the thread it runs on (I5): its mailbox
/// and its context, whose fields the handler writes are atomics (runtime
/// I6). Never the thread's `Vm`.
#[derive(Clone, Copy)]
struct Here<'a> {
    mail: &'a Mailbox,
    ctx: &'a ThreadCtx,
}

/// The calling thread's mailbox and context, found through its context
/// (the GS base); None on a thread that runs no guest code, or before its
/// mailbox is published (mailbox.rs M2).
fn here<'a>() -> Option<Here<'a>> {
    let gs: u64;
    // SAFETY: FSGSBASE is enabled (runtime::check_cpu).
    unsafe { std::arch::asm!("rdgsbase {}", out(reg) gs, options(nostack, preserves_flags)) };
    if gs == 0 {
        return None;
    }
    // SAFETY: a non-zero GS base is this thread's ThreadCtx (runtime I2),
    // which lives as long as the thread; only atomics of it are written
    // through this reference (contract/ctx.rs C2).
    let ctx = unsafe { &*(gs as *const ThreadCtx) };
    let mail = ctx.mail.load(Ordering::Acquire) as *const Mailbox;
    // SAFETY: the thread's boxed mailbox, published before the thread can
    // take signals and alive for its life (mailbox.rs M2).
    unsafe { mail.as_ref() }.map(|mail| Here { mail, ctx })
}

/// si_code of a single-step trap.
const TRAP_TRACE: i32 = 2;
/// RFLAGS trap flag.
const TF: i64 = 1 << 8;

/// Where the guest is when a kick or a signal for it arrives in
/// translated code: at an instruction boundary (then it leaves for the
/// dispatcher with `reason`), or in glue (then it single-steps, with TF,
/// to the next boundary). True when it left.
fn leave_at_boundary(h: Here, uc: &mut libc::ucontext_t, pc: u64, reason: u32) -> bool {
    let view = &h.mail.proc.view;
    match view.locate(pc) {
        Some(loc) if loc.exact => {
            h.mail.note_leave(h.ctx, pc);
            // The instruction here and the rest of its block did not run.
            h.mail
                .add_unretired(if loc.counted { loc.after + 1 } else { 0 });
            h.ctx.set_rip(loc.guest.0);
            h.ctx.set_stepping(0);
            let stub = match reason {
                crate::contract::exit_reason::KICKED => view.kick_stub,
                _ => view.kick_stub,
            };
            uc.uc_mcontext.gregs[libc::REG_RIP as usize] = stub.0 as i64;
            uc.uc_mcontext.gregs[libc::REG_EFL as usize] &= !TF;
            true
        }
        _ => {
            h.ctx.set_stepping(reason);
            uc.uc_mcontext.gregs[libc::REG_EFL as usize] |= TF;
            false
        }
    }
}

/// The signal entry stub, calling [`handle_host_signal`] (I1).
fn entry_addr() -> usize {
    crate::runtime::signal_entry_addr(handle_host_signal)
}

/// Called by `hotlift_signal_entry` (I1).
///
/// # Safety
/// Only the kernel calls this (through the entry stub), with valid
/// `info` and `uctx`.
pub unsafe extern "C" fn handle_host_signal(
    sig: i32,
    info: *mut libc::siginfo_t,
    uctx: *mut libc::c_void,
) {
    // SAFETY: the kernel passes valid siginfo and ucontext pointers.
    let (uc, code, fault_addr) = unsafe {
        (
            &mut *(uctx as *mut libc::ucontext_t),
            (*info).si_code,
            (*info).si_addr() as u64,
        )
    };
    let pc = uc.uc_mcontext.gregs[libc::REG_RIP as usize] as u64;
    if code > 0 && (sig == libc::SIGSEGV || sig == libc::SIGBUS) {
        // A read of guest code that faulted (guest_mem/probe.rs P1): the
        // copy stops there, in any thread.
        if let Some(resume) = crate::guest_mem::probe::fixup(pc) {
            uc.uc_mcontext.gregs[libc::REG_RIP as usize] = resume as i64;
            return;
        }
    }
    let in_code = pc >= CODE_LO.load(Ordering::Relaxed) && pc < CODE_HI.load(Ordering::Relaxed);
    let h = here();
    let floor = h.map_or(0, |h| h.mail.proc.view.floor);
    let stepping = h.is_some_and(|h| h.ctx.stepping() != 0);
    let ignored_by_guest =
        h.is_some_and(|h| h.mail.proc.sig.handler(sig as usize) == libc::SIG_IGN as u64);
    let blocked_by_guest =
        h.is_some_and(|h| h.mail.sig.blocked_own.load(Ordering::Acquire) & (1 << (sig - 1)) != 0);
    // hotlift's kicks are its own tgkills; signal 64 from another process
    // is the guest's (its handler, or its default action: the end).
    // SAFETY: the kernel's siginfo.
    let kick = sig == KICK
        && code == libc::SI_TKILL
        && unsafe { (*info).si_pid() } == crate::guest_mem::own_pid();
    if kick || (sig == libc::SIGTRAP && code == TRAP_TRACE && stepping) {
        // process.rs I3: leave translated code at the next boundary.
        if let Some(h) = h {
            if in_code && pc >= floor {
                let reason = crate::contract::exit_reason::KICKED;
                leave_at_boundary(h, uc, pc, reason);
            } else {
                // Out of translated code already (on its way to the
                // dispatcher, which looks before it enters again).
                h.ctx.set_stepping(0);
                uc.uc_mcontext.gregs[libc::REG_EFL as usize] &= !TF;
            }
        }
        return;
    }
    let guest_handler = h.map_or(0, |h| h.mail.proc.sig.handler(sig as usize));
    let real_fault = code > 0 && FAULT_SIGNALS.contains(&sig);
    if guest_handler > 1 && !real_fault {
        match h {
            Some(h) if blocked_by_guest => {
                // One of hotlift's own signals, blocked by the guest: pending
                // until it unblocks it (syscall/signals.rs I1).
                // SAFETY: the kernel's 128-byte siginfo.
                unsafe { h.mail.sig.set_info(sig as usize, info as *const u8) };
                h.mail
                    .sig
                    .pending_own
                    .fetch_or(1 << (sig - 1), Ordering::AcqRel);
            }
            // SAFETY: the kernel's info; uc is this handler's.
            Some(h) => unsafe { deliver::queue(h.mail, h.ctx, sig, info, uc, pc, in_code) },
            None => {
                // Guest threads block every signal until their mailbox is
                // published (threads.rs), so this cannot happen.
                let mut msg = StackBuf {
                    buf: [0; 256],
                    len: 0,
                };
                let _ = writeln!(
                    msg,
                    "hotlift: internal error: signal {sig} for a guest handler on a thread without guest state; dropped"
                );
                msg.emit();
            }
        }
        return;
    }
    if ends_guest(sig) {
        end_guest(sig, uc, pc, in_code, h);
        return;
    }
    // A fault signal sent with kill/tgkill (si_code <= 0), not a fault: it
    // is the guest's (hotlift never sends these to itself except to die).
    // Ignored if the guest ignores it, else its default action.
    if code <= 0 {
        let (ignored, blocked) = (ignored_by_guest, blocked_by_guest);
        if let Some(h) = h.filter(|_| blocked && !ignored) {
            // The guest blocked it (hotlift keeps it unblocked): pending
            // until the guest unblocks it (syscall/signals.rs I1).
            h.mail
                .sig
                .pending_own
                .fetch_or(1 << (sig - 1), Ordering::AcqRel);
            return;
        }
        if !ignored {
            end_guest(sig, uc, pc, in_code, h);
        }
        return;
    }
    // A fault in a shared stub (e.g. the guest broke GS) cannot go through
    // the stubs again: die at once.
    let in_stubs = in_code && h.is_some() && pc < floor;
    let in_code = in_code && !in_stubs;
    let in_guest_code = h.filter(|_| in_code);
    if let Some(h) = in_guest_code {
        if sig == libc::SIGSEGV {
            // A block prologue ran into the ring's guard page: the segment
            // is full (monitor/ring.rs). The prologue's store goes through
            // RAX: point it at the next segment and retry.
            if let Some(tr) = h.mail.ring() {
                if let Some(seg) = tr.ring.guard_segment(fault_addr) {
                    uc.uc_mcontext.gregs[libc::REG_RAX as usize] = tr.ring.wrap(seg) as i64;
                    return;
                }
            }
        }
        if sig == libc::SIGSEGV && code == SEGV_ACCERR {
            if let Some(resume) = h.mail.on_write_fault(h.ctx, fault_addr, pc) {
                uc.uc_mcontext.gregs[libc::REG_RIP as usize] = resume as i64;
                return;
            }
        }
        // A fault the guest handles is not its end: the dispatcher runs
        // its handler (or says why it cannot).
        let handled = code > 0 && sig != libc::SIGTRAP && h.mail.proc.sig.handler(sig as usize) > 1;
        if VERBOSE.load(Ordering::Relaxed) && !handled {
            let mut msg = StackBuf {
                buf: [0; 256],
                len: 0,
            };
            let name = crate::strace::sig_name(sig);
            let _ = match h.mail.proc.view.guest_at(pc) {
                Some(g) if sig == libc::SIGSEGV || sig == libc::SIGBUS => {
                    writeln!(msg, "hotlift: guest killed by SIG{name} at guest {g} (data address {fault_addr:#x})")
                }
                Some(g) => writeln!(msg, "hotlift: guest killed by SIG{name} at guest {g}"),
                None => writeln!(
                    msg,
                    "hotlift: guest killed by SIG{name} in translated code at host {pc:#x}"
                ),
            };
            msg.emit();
        }
    } else if !in_code {
        let mut msg = StackBuf {
            buf: [0; 256],
            len: 0,
        };
        let _ = writeln!(
            msg,
            "hotlift: internal error: signal {sig} at host pc {pc:#x} (address {fault_addr:#x})"
        );
        msg.emit();
    }
    // A fault in translated code: leave through the dispatcher, which writes
    // the profile and then dies of the same signal (I3). Sent signals are
    // delivered as before.
    if let Some(h) = in_guest_code {
        if code > 0 && sig != libc::SIGTRAP {
            h.mail.note_leave(h.ctx, pc);
            h.ctx.set_exit_arg(sig as u32);
            // For a guest handler (deliver.rs D5).
            // SAFETY: the kernel's 128-byte siginfo.
            unsafe { h.mail.sig.set_info(sig as usize, info as *const u8) };
            let g = &uc.uc_mcontext.gregs;
            let regs = [
                g[libc::REG_ERR as usize] as u64,
                g[libc::REG_TRAPNO as usize] as u64,
                g[libc::REG_CR2 as usize] as u64,
            ];
            let view = &h.mail.proc.view;
            let located = view.locate(pc);
            if let Some(loc) = located {
                h.ctx.set_rip(loc.guest.0);
            }
            // For the count: the dispatcher leaves out what never ran.
            let rcx = located.map(|_| g[libc::REG_RCX as usize] as u64);
            h.mail.set_fault(pc, regs, rcx);
            uc.uc_mcontext.gregs[libc::REG_RIP as usize] = view.fatal_stub.0 as i64;
            return;
        }
    }
    crate::status::set_default(sig);
    // I3: a fault re-executes and faults again; a sent signal or a trap
    // (RIP already past the instruction) must be raised again.
    if code <= 0 || sig == libc::SIGTRAP || !in_code {
        // SAFETY: tgkill to our own thread; the signal is blocked until the
        // handler returns and then kills the process.
        unsafe { libc::syscall(libc::SYS_tgkill, libc::getpid(), libc::gettid(), sig) };
    }
}

/// I4: record `sig` and get the thread to the dispatcher, which writes the
/// profile and dies of it.
fn end_guest(sig: i32, uc: &mut libc::ucontext_t, pc: u64, in_code: bool, h: Option<Here>) {
    // The first such signal is the one the guest dies of.
    let _ = PENDING_FATAL.compare_exchange(0, sig as u32, Ordering::AcqRel, Ordering::Acquire);
    let Some(h) = h else {
        return;
    };
    let sig = PENDING_FATAL.load(Ordering::Acquire);
    let view = &h.mail.proc.view;
    if in_code && pc >= view.floor {
        // Translated code may run on for ever without an exit: leave at
        // the next instruction boundary as a kick does (at once, or
        // single-stepping out of glue), so that the last block is counted
        // exactly; the dispatcher then finds PENDING_FATAL before it
        // enters guest code again.
        leave_at_boundary(h, uc, pc, crate::contract::exit_reason::KICKED);
        return;
    }
    match crate::runtime::stub_place(pc) {
        crate::runtime::StubPlace::Entering => {
            h.ctx.set_exit_arg(sig);
            h.ctx.set_enter_target(view.fatal_stub.0);
        }
        crate::runtime::StubPlace::BeforeSyscall { done, .. } => {
            uc.uc_mcontext.gregs[libc::REG_RIP as usize] = done as i64;
            uc.uc_mcontext.gregs[libc::REG_RAX as usize] = -(libc::EINTR as i64);
        }
        // The dispatcher (or a shared stub on its way there) checks
        // PENDING_FATAL before it runs guest code again.
        crate::runtime::StubPlace::Elsewhere => {}
    }
}

/// Deliver what the guest just unblocked of hotlift's own signals (kept
/// pending by the handler, mod.rs): to its handler, or the default action.
pub fn release_own_pending(vm: &mut Vm) {
    use std::sync::atomic::Ordering;
    let pending = vm.mail.sig.pending_own.load(Ordering::Acquire)
        & !vm.mail.sig.blocked_own.load(Ordering::Acquire);
    if pending == 0 {
        return;
    }
    vm.mail
        .sig
        .pending_own
        .fetch_and(!pending, Ordering::AcqRel);
    for sig in (1..=64).filter(|s| pending & (1 << (s - 1)) != 0) {
        match vm.proc.sig.handler(sig as usize) {
            0 => {
                vm.finish(crate::profile::Ending::Signal { signal: sig });
                crate::status::die_with(sig);
            }
            1 => {}
            _ => {
                // Its siginfo is in the slot (queued by the handler).
                vm.ctx
                    .sig_queued()
                    .fetch_or(1 << (sig - 1), Ordering::AcqRel);
            }
        }
    }
}
