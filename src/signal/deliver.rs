//! Guest signal handlers: a signal the guest catches is queued by the host
//! handler on the thread it arrived on, and delivered by the dispatcher at
//! the next instruction boundary with the frame the kernel would have
//! built; `rt_sigreturn` takes the frame back.
//!
//! D1: queuing is async-signal-safe ([`queue`]): the siginfo goes into the
//!     thread's slot for the signal, the signal's bit into
//!     `ThreadCtx::sig_queued`, and — for a signal hotlift does not keep
//!     for itself — into the kernel mask the handler returns with
//!     (`uc_sigmask`), so that further instances stay pending in the kernel
//!     until the guest's handler has run (one slot per signal is enough).
//!     Those kernel-mask bits are `ThreadSignals::held`: the guest's own
//!     mask is the kernel's without them, plus `blocked_own`.
//! D2: the thread then leaves for the dispatcher at the next boundary: in
//!     translated code like a kick (process.rs I3), in the guest-syscall
//!     stub through -EINTR, and anywhere else in hotlift through
//!     `enter_target`, which the dispatcher sets before its last look at
//!     `sig_queued` and the handler points at the kick stub after it. The
//!     dispatcher keeps `ctx.rip()` at the guest address of the block it
//!     enters, so that a kick at entry is exact.
//! D3: a guest syscall interrupted before it ran, or one the kernel rewound
//!     to restart with the guest's `SA_RESTART`, is rewound to its
//!     `syscall` instruction (which did not retire) and runs again after
//!     the handler; otherwise the kernel's -EINTR stands. hotlift's host
//!     handlers always have `SA_RESTART`, so its own syscalls are never
//!     interrupted; the guest's flag is applied here. (The kernel restarts
//!     a few syscalls whatever the flag says, ERESTARTNOINTR: without
//!     `SA_RESTART` the guest gets -EINTR from those.)
//! D4: the frame is the kernel's x86-64 `rt_sigframe`: the restorer's
//!     address, `ucontext` (flags, link, the alternate stack, `sigcontext`,
//!     the mask), `siginfo`, and below it the XSAVE state in the kernel's
//!     user format (software-reserved bytes with FP_XSTATE_MAGIC1, MAGIC2
//!     after the area), sized from CPUID; the handler starts with the FPU
//!     in its initial state, DF/TF/RF clear, as from the kernel.
//! D5: synchronous signals ([`Vm::deliver_sync`]): a fault in translated
//!     code is delivered with the guest's registers exactly — at the first
//!     host instruction of a guest instruction as they are — and a trap instruction (ud2, int3, hlt, a fetch from non-executable
//!     memory) from the dispatcher, which is always exact. A fault inside
//!     the expansion of a guest instruction is delivered when backend/recreate.rs
//!     can undo the glue before it, else the guest dies of it with a
//!     message naming the instruction (never a wrong frame).
#![allow(unsafe_code)]

use std::sync::atomic::Ordering;

use crate::contract::{exit_reason, Reg, ThreadCtx};
use crate::contract::{TAG_SIGNAL, TAG_SIGRETURN};
use crate::dispatch::{Mailbox, Vm, VmError};
use crate::host::syscall6;
use crate::runtime::{stub_place, StubPlace};
use crate::strace::SA_RESTORER;

const SA_RESTART: u64 = 0x1000_0000;
const SA_ONSTACK: u64 = 0x0800_0000;
const SA_NODEFER: u64 = 0x4000_0000;
const SA_RESETHAND: u64 = 0x8000_0000;
const SS_DISABLE: u64 = 2;
const SS_AUTODISARM: u64 = 1 << 31;
const UC_FP_XSTATE: u64 = 1;
const UC_SIGCONTEXT_SS: u64 = 2;
const UC_STRICT_RESTORE_SS: u64 = 4;
const FP_XSTATE_MAGIC1: u32 = 0x4650_5853;
const FP_XSTATE_MAGIC2: u32 = 0x4650_5845;
/// Bytes of `struct rt_sigframe`: restorer (8), `ucontext` (304),
/// `siginfo` (128).
const FRAME_BYTES: u64 = 440;

/// The guest memory `rt_sigreturn` reads: its ucontext and, where the
/// frame is laid out as `push_frame` lays it (the XSAVE area just above
/// it), the area too, read in one system call; anything outside the
/// bytes read (a frame the guest built or moved, or a window that ran
/// into unmapped memory) is read piece by piece.
struct FrameBytes {
    start: u64,
    bytes: Vec<u8>,
}

impl FrameBytes {
    fn read(uc: u64) -> FrameBytes {
        // push_frame: the area is at most FRAME_BYTES and alignment above
        // the ucontext, and xsave_size + 4 bytes long.
        let len = (FRAME_BYTES + 64) as usize + crate::runtime::xsave_size() + 4;
        FrameBytes {
            start: uc,
            bytes: crate::guest_mem::read_bytes(uc, len).unwrap_or_default(),
        }
    }

    /// `len` guest bytes at `addr`, if readable: borrowed from the bytes
    /// read when they hold them.
    fn get(&self, addr: u64, len: usize) -> Option<std::borrow::Cow<'_, [u8]>> {
        let from = addr.checked_sub(self.start).map(|d| d as usize);
        match from {
            Some(i) if i.checked_add(len).is_some_and(|e| e <= self.bytes.len()) => {
                Some(std::borrow::Cow::Borrowed(&self.bytes[i..i + len]))
            }
            _ => crate::guest_mem::read_bytes(addr, len).map(std::borrow::Cow::Owned),
        }
    }
}
const UC_AT: u64 = 8;
const INFO_AT: u64 = 312;
/// Offsets in `ucontext`.
const UC_STACK: usize = 16;
const UC_MCONTEXT: usize = 40;
const UC_SIGMASK: usize = 296;
/// `sigcontext` slots (u64 index from UC_MCONTEXT): r8..r15, rdi, rsi, rbp,
/// rbx, rdx, rax, rcx, rsp, rip, eflags, segments, err, trapno, oldmask,
/// cr2, fpstate.
const SC_RIP: usize = 16;
const SC_EFLAGS: usize = 17;
const SC_SEGS: usize = 18;
const SC_OLDMASK: usize = 21;
const SC_FPSTATE: usize = 23;
/// The register in each sigcontext slot 0..16.
const SC_GPR: [Reg; 16] = {
    use Reg::*;
    [
        R8, R9, R10, R11, R12, R13, R14, R15, Rdi, Rsi, Rbp, Rbx, Rdx, Rax, Rcx, Rsp,
    ]
};
/// RFLAGS bits `rt_sigreturn` takes from the frame (the kernel's
/// FIX_EFLAGS): AC OF DF TF SF ZF AF PF CF RF.
const FIX_EFLAGS: u64 =
    0x4_0000 | 0x800 | 0x400 | 0x100 | 0x80 | 0x40 | 0x10 | 0x4 | 0x1 | 0x1_0000;
const TF: u64 = 0x100;

fn bit(sig: usize) -> u64 {
    1 << (sig - 1)
}

/// D1 and D2, in the host handler: queue `sig` for this thread's guest
/// handler and get the thread to the dispatcher. `in_code`: `pc` is in the
/// code cache; `floor`: where translated blocks start (stubs below).
///
/// # Safety
/// Called by the signal handler with the kernel's `info` and `uc`.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn queue(
    mail: &Mailbox,
    ctx: &ThreadCtx,
    sig: i32,
    info: *const libc::siginfo_t,
    uc: &mut libc::ucontext_t,
    pc: u64,
    in_code: bool,
) {
    let s = sig as usize;
    // SAFETY: the kernel's siginfo is 128 bytes.
    unsafe { mail.sig.set_info(s, info as *const u8) };
    if !crate::dispatch::hotlift_owns(sig) {
        // SAFETY: a valid sigset in the kernel's ucontext.
        unsafe { libc::sigaddset(&mut uc.uc_sigmask, sig) };
        mail.sig.held.fetch_or(bit(s), Ordering::AcqRel);
    }
    ctx.sig_queued().fetch_or(bit(s), Ordering::AcqRel);
    let view = &mail.proc.view;
    let kick = view.kick_stub.0;
    if in_code {
        if pc >= view.floor {
            let here = super::Here { mail, ctx };
            super::leave_at_boundary(here, uc, pc, exit_reason::KICKED);
        } else {
            // In a shared stub (lookup, exit): step to the next block or
            // out to the dispatcher (the stubs never touch TF).
            ctx.set_stepping(exit_reason::KICKED);
            uc.uc_mcontext.gregs[libc::REG_EFL as usize] |= TF as i64;
        }
        return;
    }
    match stub_place(pc) {
        StubPlace::BeforeSyscall { done, at_insn } => {
            let g = &mut uc.uc_mcontext.gregs;
            // RCX = 0 before the syscall ran (entry.S); the kernel rewound
            // it otherwise (D3).
            let rewound = at_insn && g[libc::REG_RCX as usize] != 0;
            let restart_flag = mail.proc.sig.action(s)[1] & SA_RESTART != 0;
            if !rewound || restart_flag {
                ctx.set_sys_restart();
            }
            g[libc::REG_RIP as usize] = done as i64;
            g[libc::REG_RAX as usize] = -(libc::EINTR as i64);
        }
        StubPlace::Entering | StubPlace::Elsewhere => {
            if !mail.entering_single() {
                // The interrupted dispatcher reads it only after this
                // handler returns (D2).
                ctx.set_enter_target(kick);
            }
        }
    }
}

/// Stop holding `sig` blocked in the kernel for the guest (D1).
fn release_held(vm: &Vm, sig: usize) {
    if vm.mail.sig.held.fetch_and(!bit(sig), Ordering::AcqRel) & bit(sig) != 0 {
        let set = bit(sig);
        // SAFETY: unblocks one signal for this thread.
        unsafe {
            syscall6(
                libc::SYS_rt_sigprocmask as u64,
                [
                    libc::SIG_UNBLOCK as u64,
                    &set as *const u64 as u64,
                    0,
                    8,
                    0,
                    0,
                ],
            )
        };
    }
}

impl Vm {
    /// Deliver the signals queued for this thread (D1): each to the
    /// guest's handler, or its current action if that changed since.
    pub(crate) fn deliver_queued(&mut self) -> Result<(), VmError> {
        loop {
            let q = self.ctx.sig_queued().load(Ordering::Acquire);
            if q == 0 {
                return Ok(());
            }
            let sig = q.trailing_zeros() as usize + 1;
            self.ctx.sig_queued().fetch_and(!bit(sig), Ordering::AcqRel);
            let info = self.mail.sig.info(sig);
            let act = self.proc.sig.action(sig);
            let mask = self.guest_mask();
            if mask & bit(sig) != 0 {
                // Blocked by a handler delivered just before: back to the
                // kernel's pending set (or hotlift's, for its own signals).
                self.requeue(sig, &info);
                continue;
            }
            match act[0] {
                0 => {
                    release_held(self, sig);
                    if super::default_fatal(sig as i32) {
                        self.finish(crate::profile::Ending::Signal { signal: sig as i32 });
                        crate::status::die_with(sig as i32);
                    }
                }
                1 => release_held(self, sig),
                _ => self.push_frame(sig, act, &info, [0; 3], mask)?,
            }
        }
    }

    /// A queued signal the guest now blocks goes back to pending.
    fn requeue(&mut self, sig: usize, info: &[u8; 128]) {
        if crate::dispatch::hotlift_owns(sig as i32) {
            self.mail
                .sig
                .pending_own
                .fetch_or(bit(sig), Ordering::AcqRel);
            return;
        }
        // SAFETY: queues the same siginfo to this thread, where the signal
        // is blocked (held) until the guest unblocks it; it was queued
        // once, so the guest's RLIMIT_SIGPENDING must not refuse it now
        // (limits.rs I5).
        crate::limits::queue_own(|| unsafe {
            libc::syscall(
                libc::SYS_rt_tgsigqueueinfo,
                crate::guest_mem::own_pid(),
                libc::gettid(),
                sig as i32,
                info.as_ptr(),
            )
        });
        self.mail.sig.held.fetch_and(!bit(sig), Ordering::AcqRel);
    }

    /// D5: a synchronous signal of the guest's own making — a fault at a
    /// guest instruction boundary (the registers are exactly the guest's
    /// there) or a trap instruction — goes to the guest's handler, with
    /// `fault` = the error code, trap number and fault address of its
    /// frame. False when the default action must go on: no handler, or
    /// the signal ignored or blocked (the kernel then kills, as here).
    pub(crate) fn deliver_sync(
        &mut self,
        sig: i32,
        info: &[u8; 128],
        fault: [u64; 3],
    ) -> Result<bool, VmError> {
        let s = sig as usize;
        let act = self.proc.sig.action(s);
        if act[0] <= 1 || self.mail.sig.blocked_own.load(Ordering::Acquire) & bit(s) != 0 {
            return Ok(false);
        }
        let mask = self.guest_mask();
        self.push_frame(s, act, info, fault, mask)?;
        Ok(true)
    }

    /// D4: build the frame for `sig` and point the guest at its handler;
    /// `fault` as for [`Vm::deliver_sync`], `old_mask` the guest's mask
    /// (the caller's query: one system call a delivery, not two).
    fn push_frame(
        &mut self,
        sig: usize,
        act: [u64; 4],
        info: &[u8; 128],
        fault: [u64; 3],
        old_mask: u64,
    ) -> Result<(), VmError> {
        let [handler, flags, restorer, sa_mask] = act;
        let at = crate::types::GuestAddr(self.ctx.rip());
        if flags & SA_RESTORER == 0 {
            // The x86-64 kernel cannot build a frame without it either.
            crate::host::say!(
                "hotlift: guest handler for signal {sig} has no SA_RESTORER; the kernel would kill it with SIGSEGV (at {at})"
            );
            self.finish(crate::profile::Ending::Signal {
                signal: libc::SIGSEGV,
            });
            crate::status::die_with(libc::SIGSEGV);
        }
        let xsize = crate::runtime::xsave_size() as u64;
        let rsp = self.ctx.reg(Reg::Rsp);
        let [ss_sp, ss_flags, ss_size] = self.altstack;
        let alt_on = ss_flags & SS_DISABLE == 0 && ss_size != 0;
        let on_alt = alt_on && rsp > ss_sp && rsp - ss_sp <= ss_size;
        let mut sp = if flags & SA_ONSTACK != 0 && alt_on && !on_alt {
            ss_sp + ss_size
        } else {
            rsp - 128
        };
        sp = (sp - (xsize + 4)) & !63;
        let fp = sp;
        let frame = ((sp - FRAME_BYTES) & !15) - 8;

        let mut f = vec![0u8; FRAME_BYTES as usize];
        let put =
            |f: &mut Vec<u8>, at: usize, v: u64| f[at..at + 8].copy_from_slice(&v.to_le_bytes());
        put(&mut f, 0, restorer);
        let uc = UC_AT as usize;
        put(
            &mut f,
            uc,
            UC_FP_XSTATE | UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS,
        );
        put(&mut f, uc + UC_STACK, ss_sp);
        put(&mut f, uc + UC_STACK + 8, ss_flags & 0xffff_ffff);
        put(&mut f, uc + UC_STACK + 16, ss_size);
        let sc = uc + UC_MCONTEXT;
        for (slot, &g) in SC_GPR.iter().enumerate() {
            put(&mut f, sc + 8 * slot, self.ctx.reg(g));
        }
        put(&mut f, sc + 8 * SC_RIP, self.ctx.rip());
        // dispatch/flags.rs I3: TF saved, the handler runs without it.
        put(&mut f, sc + 8 * SC_EFLAGS, self.guest_rflags());
        self.guest_tf = false;
        // cs, gs, fs, ss.
        put(&mut f, sc + 8 * SC_SEGS, 0x33 | 0x2b << 48);
        put(&mut f, sc + 8 * (SC_SEGS + 1), fault[0]);
        put(&mut f, sc + 8 * (SC_SEGS + 2), fault[1]);
        put(&mut f, sc + 8 * SC_OLDMASK, old_mask);
        put(&mut f, sc + 8 * (SC_OLDMASK + 1), fault[2]);
        put(&mut f, sc + 8 * SC_FPSTATE, fp);
        put(&mut f, uc + UC_SIGMASK, old_mask);
        f[INFO_AT as usize..].copy_from_slice(info);

        let mut x = vec![0u8; xsize as usize + 4];
        // SAFETY: the thread's XSAVE area holds at least `xsize` bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(
                self.ctx.xsave_ptr.get() as *const u8,
                x.as_mut_ptr(),
                xsize as usize,
            )
        };
        crate::runtime::xsave_sanitize(&mut x[..xsize as usize]);
        // As the kernel's frame: x87 and SSE always marked in use (their
        // bytes hold their state, initial values included), so that a
        // handler's edit of them (the x87 control word) is restored by
        // rt_sigreturn; it was dropped where the x87 had been unused.
        let bv = u64::from_le_bytes(x[512..520].try_into().expect("8 bytes")) | 3;
        x[512..520].copy_from_slice(&bv.to_le_bytes());
        x[464..468].copy_from_slice(&FP_XSTATE_MAGIC1.to_le_bytes());
        x[468..472].copy_from_slice(&((xsize + 4) as u32).to_le_bytes());
        x[472..480].copy_from_slice(&self.ctx.xsave_mask.get().to_le_bytes());
        x[480..484].copy_from_slice(&(xsize as u32).to_le_bytes());
        x[xsize as usize..].copy_from_slice(&FP_XSTATE_MAGIC2.to_le_bytes());

        // One system call for both (a guest taking many signals spent a
        // quarter of its time in process_vm_readv/writev).
        if !self.write_guest_pieces(&[(fp, &x), (frame, &f)]) {
            // The kernel forces SIGSEGV when the frame cannot be written.
            crate::host::say!(
                "hotlift: cannot write the frame for signal {sig} at {frame:#x} (guest stack at {rsp:#x}, at {at}): the kernel would kill it with SIGSEGV"
            );
            self.finish(crate::profile::Ending::Signal {
                signal: libc::SIGSEGV,
            });
            crate::status::die_with(libc::SIGSEGV);
        }

        self.ctx.set_reg(Reg::Rdi, sig as u64);
        self.ctx.set_reg(Reg::Rsi, frame + INFO_AT);
        self.ctx.set_reg(Reg::Rdx, frame + UC_AT);
        self.ctx.set_reg(Reg::Rax, 0);
        self.ctx.set_reg(Reg::Rsp, frame);
        self.ctx.set_rip(handler);
        self.ctx
            .rflags
            .set(self.ctx.rflags.get() & !(0x400 | 0x1_0000 | TF));
        crate::runtime::xsave_init(self.ctx.xsave_ptr.get());

        let mut mask = old_mask | sa_mask;
        if flags & SA_NODEFER == 0 {
            mask |= bit(sig);
        }
        self.mail.sig.held.fetch_and(!bit(sig), Ordering::AcqRel);
        self.set_guest_mask(mask);
        if flags & SA_RESETHAND != 0 {
            self.proc.sig.set_action(sig, [0, 0, 0, 0]);
            super::reset_host_action(sig as i32);
        }
        if flags & SA_ONSTACK != 0 && ss_flags & SS_AUTODISARM != 0 {
            self.altstack = [0, SS_DISABLE, 0];
        }
        self.push_words(&[
            TAG_SIGNAL | sig as u32,
            restorer as u32,
            (restorer >> 32) as u32,
            handler as u32,
            (handler >> 32) as u32,
        ]);
        Ok(())
    }

    /// `rt_sigreturn`: the frame's `ucontext` is at the guest's RSP (the
    /// handler's `ret` popped the restorer). False when it cannot be read
    /// (the kernel then kills with SIGSEGV).
    pub(crate) fn sigreturn(&mut self) -> Result<(), VmError> {
        let uc = self.ctx.reg(Reg::Rsp);
        let at = crate::types::GuestAddr(self.ctx.rip() - 2);
        let frame = FrameBytes::read(uc);
        let Some(u) = frame.get(uc, 304).filter(|_| self.guests(uc, 304)) else {
            return self.die_of_bad_frame(uc, at);
        };
        let word = |i: usize| u64::from_le_bytes(u[i..i + 8].try_into().expect("8 bytes"));
        let sc = UC_MCONTEXT;
        let eflags = word(sc + 8 * SC_EFLAGS);
        let fp = word(sc + 8 * SC_FPSTATE);
        // The code segment the frame returns to: 64-bit user code, or
        // 32-bit (which hotlift does not run: it stops and says so);
        // anything else faults natively as the kernel returns to it, the
        // frame restored: a general protection fault at the frame's
        // registers (below).
        let cs = (word(sc + 8 * SC_SEGS) & 0xffff) | 3;
        match cs {
            0x33 => {}
            0x23 => {
                return Err(VmError::Host(format!(
                    "rt_sigreturn at guest {at} returns to 32-bit code (CS 0x23), which hotlift does not run"
                )))
            }
            _ => {}
        }
        if fp != 0 && !self.restore_xstate(&frame, fp) {
            return self.die_of_bad_frame(uc, at);
        }
        if fp == 0 {
            crate::runtime::xsave_init(self.ctx.xsave_ptr.get());
        }
        for (slot, &g) in SC_GPR.iter().enumerate() {
            self.ctx.set_reg(g, word(sc + 8 * slot));
        }
        self.ctx.set_rip(word(sc + 8 * SC_RIP));
        // dispatch/flags.rs I3: TF from the frame is the guest's again.
        self.guest_tf = eflags & TF != 0;
        self.ctx
            .rflags
            .set((self.ctx.rflags.get() & !FIX_EFLAGS) | (eflags & FIX_EFLAGS & !TF) | 2);
        // The alternate stack as saved, unless the thread is on the
        // current one (the kernel's restore_altstack).
        let [ss_sp, ss_flags, ss_size] = self.altstack;
        let on_alt = ss_flags & SS_DISABLE == 0 && uc > ss_sp && uc - ss_sp <= ss_size;
        if !on_alt {
            let flags = word(UC_STACK + 8) & 0xffff_ffff;
            self.altstack = if flags & SS_DISABLE != 0 {
                [0, SS_DISABLE, 0]
            } else {
                [word(UC_STACK), flags, word(UC_STACK + 16)]
            };
        }
        self.set_guest_mask(word(UC_SIGMASK));
        super::release_own_pending(self);
        self.push_words(&[TAG_SIGRETURN]);
        if cs != 0x33 {
            return self.bad_return_segment(cs, at);
        }
        Ok(())
    }

    /// The frame just restored returns to code segment `cs`, neither
    /// 64-bit nor 32-bit user code: the kernel's return to user mode
    /// faults, and the thread takes SIGSEGV (SI_KERNEL, a general
    /// protection fault naming the selector) at the restored registers —
    /// to its handler, or its end where it has none or blocks it.
    fn bad_return_segment(&mut self, cs: u64, at: crate::types::GuestAddr) -> Result<(), VmError> {
        let sig = libc::SIGSEGV;
        let mut info = [0u8; 128];
        info[0..4].copy_from_slice(&sig.to_le_bytes());
        info[8..12].copy_from_slice(&0x80i32.to_le_bytes());
        if self.deliver_sync(sig, &info, [cs & 0xfffc, 13, 0])? {
            return Ok(());
        }
        if self.opts().verbose {
            crate::host::say!(
                "hotlift: rt_sigreturn at {at} returns to code segment {cs:#x}: SIGSEGV"
            );
        }
        self.finish(crate::profile::Ending::Signal { signal: sig });
        crate::status::die_with(sig)
    }

    /// Are the `len` bytes at `addr` the guest's memory? A frame (or its
    /// FPU state) elsewhere is unmapped as far as the guest is concerned:
    /// hotlift's memory is never read into the guest's state.
    fn guests(&self, addr: u64, len: u64) -> bool {
        let reach = crate::dispatch::Reach::Bytes { addr, len };
        addr != 0 && self.check_reaches(|out| out(reach)).is_none()
    }

    fn die_of_bad_frame(&mut self, uc: u64, at: crate::types::GuestAddr) -> Result<(), VmError> {
        if self.opts().verbose {
            crate::host::say!(
                "hotlift: rt_sigreturn at {at} with an unreadable frame at {uc:#x}: SIGSEGV"
            );
        }
        self.finish(crate::profile::Ending::Signal {
            signal: libc::SIGSEGV,
        });
        crate::status::die_with(libc::SIGSEGV)
    }

    /// Take the frame's XSAVE state at `fp` into the thread's area, made
    /// safe for XRSTOR (no feature hotlift does not save, standard format,
    /// MXCSR within the CPU's mask). False when it cannot be read.
    fn restore_xstate(&mut self, frame: &FrameBytes, fp: u64) -> bool {
        let xsize = crate::runtime::xsave_size();
        let Some(legacy) = frame.get(fp, 512).filter(|_| self.guests(fp, 512)) else {
            return false;
        };
        let u32_at =
            |b: &[u8], i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        let ext_size = u32_at(&legacy, 480) as usize;
        let extended = u32_at(&legacy, 464) == FP_XSTATE_MAGIC1
            && (576..=xsize).contains(&ext_size)
            && frame
                .get(fp + ext_size as u64, 4)
                .is_some_and(|m| u32_at(&m, 0) == FP_XSTATE_MAGIC2)
            && self.guests(fp, ext_size as u64 + 4);
        let from = if extended {
            match frame.get(fp, ext_size) {
                Some(a) => a,
                None => return false,
            }
        } else {
            legacy
        };
        let xfeatures = if extended {
            u64::from_le_bytes(from[472..480].try_into().expect("8 bytes"))
        } else {
            3
        };
        let own = self.ctx.xsave_mask.get();
        // SAFETY: the thread's XSAVE area holds at least `xsize` (and 576)
        // bytes and is the thread's own: nothing else refers to it while
        // the dispatcher runs.
        let area = unsafe {
            std::slice::from_raw_parts_mut(self.ctx.xsave_ptr.get() as *mut u8, xsize.max(576))
        };
        let mxcsr_mask = match u32_at(area, 28) {
            0 => 0xffbf,
            m => m,
        };
        // The frame's image over the thread's area (and zeros past it),
        // then made safe in place.
        area[..from.len()].copy_from_slice(&from);
        area[from.len()..].fill(0);
        let mxcsr = u32_at(area, 24) & mxcsr_mask;
        area[24..28].copy_from_slice(&mxcsr.to_le_bytes());
        let bv = if extended {
            u64::from_le_bytes(area[512..520].try_into().expect("8 bytes")) & xfeatures & own
        } else {
            3 & own
        };
        area[512..520].copy_from_slice(&bv.to_le_bytes());
        area[520..576].fill(0);
        true
    }
}
