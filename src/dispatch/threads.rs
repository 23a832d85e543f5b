//! Guest threads: `clone` with `CLONE_VM | CLONE_THREAD` starts a host
//! thread of its own for the new guest thread (its own context, lookup
//! table, ring and dispatcher loop); translated code is shared. A thread's
//! `exit` ends its host thread; the last one's ends the process.
//!
//! I1: the child runs no guest code before the tid stores the kernel would
//!     have made (`CLONE_PARENT_SETTID`, `CLONE_CHILD_SETTID`) are done, and
//!     `clone` returns to the parent only after that.
//! I2: `CLONE_CHILD_CLEARTID` (and `set_tid_address`) is emulated: the
//!     kernel's clear-on-exit word of a host thread belongs to hotlift's C
//!     library, so hotlift writes 0 there and wakes one futex waiter when
//!     the guest thread exits, as the kernel would.
//! I3: the decision "last thread" is made under the registry's lock
//!     ([`super::process::Threads::remove_is_last`]), so of two threads
//!     exiting at once exactly one ends the process.
//! I4: a new host thread starts with every signal blocked and takes the
//!     guest's mask (inherited from the parent, as clone does) only once
//!     its Vm is published, so the signal handler always finds it.
#![allow(unsafe_code)]

use std::sync::atomic::Ordering;
use std::sync::mpsc;

use super::{Vm, VmError};
use crate::contract::{Reg, ThreadCtx};
use crate::profile::Ending;
use crate::types::GuestAddr;

/// Flags `clone` may carry for a new thread, beyond the ones it needs.
const THREAD_NEEDS: u64 = (libc::CLONE_VM | libc::CLONE_THREAD | libc::CLONE_SIGHAND) as u64;
const THREAD_OK: u64 = THREAD_NEEDS
    | (libc::CLONE_FS
        | libc::CLONE_FILES
        | libc::CLONE_SYSVSEM
        | libc::CLONE_SETTLS
        | libc::CLONE_PARENT_SETTID
        | libc::CLONE_CHILD_SETTID
        | libc::CLONE_CHILD_CLEARTID
        | libc::CLONE_DETACHED) as u64;

/// How a guest thread's dispatcher loop ended without ending the process.
#[derive(Debug)]
pub enum ThreadEnd {
    /// It called `exit` and other threads live on.
    Exited,
}

impl Vm {
    /// `clone(flags, stack, parent_tid, child_tid, tls)` making a thread;
    /// the child's tid, or the kernel's error.
    pub(crate) fn clone_thread(&mut self, a: [u64; 6]) -> Result<i64, VmError> {
        let (flags, stack, ptid, ctid, tls) = (a[0], a[1], a[2], a[3], a[4]);
        let at = GuestAddr(self.ctx.rip() - 2);
        let unsupported = |why: &'static str| VmError::UnsupportedSyscall {
            name: why,
            nr: libc::SYS_clone as u64,
            at,
        };
        if flags & libc::CLONE_VM as u64 == 0 {
            return Err(unsupported("clone without CLONE_VM (fork)"));
        }
        if flags & THREAD_NEEDS != THREAD_NEEDS {
            return Err(unsupported(
                "clone with CLONE_VM but without CLONE_THREAD|CLONE_SIGHAND",
            ));
        }
        if flags & !(THREAD_OK | 0xff) != 0 {
            return Err(unsupported("clone of a thread with unsupported flags"));
        }
        // The child starts where the parent returns, with RAX = 0 and the
        // syscall's RCX/R11, on its own stack and TLS.
        let child = ThreadCtx::alloc(self.ctx.rip(), self.ctx.reg(Reg::Rsp), false);
        child.copy_guest_state(&self.ctx);
        child.set_reg(Reg::Rax, 0);
        child.set_reg(Reg::Rcx, self.ctx.rip());
        child.set_reg(Reg::R11, self.ctx.rflags.get());
        if stack != 0 {
            child.set_reg(Reg::Rsp, stack);
        }
        if flags & libc::CLONE_SETTLS as u64 != 0 {
            child.fs_base.set(tls);
        }
        let proc = self.proc.clone();
        // The child inherits the signal mask: the kernel's part comes with
        // the host thread, the recorded part (hotlift's own signals) here.
        let blocked_own = self.mail.sig.blocked_own.load(Ordering::Relaxed);
        let (tx, rx) = mpsc::channel::<i64>();
        // I4.
        // SAFETY: sigset operations on locals; the calling thread's mask
        // is put back below.
        let mut parent_mask: libc::sigset_t = unsafe { std::mem::zeroed() };
        unsafe {
            let mut all: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut all);
            libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut parent_mask);
        }
        let mut start_mask = parent_mask;
        let tsc_traps = self.tsc_traps;
        let held = self.mail.sig.held.load(Ordering::Acquire);
        for sig in (1..=64).filter(|s| held & (1u64 << (s - 1)) != 0) {
            // Held for this thread's own queue (signal/deliver.rs D1).
            // SAFETY: a valid sigset and signal number.
            unsafe { libc::sigdelset(&mut start_mask, sig) };
        }
        crate::anon::room_for_thread(self.proc.lock().mem.spans());
        // No name of hotlift's: the thread keeps the name of the thread
        // that made it, as a new thread does natively (it was
        // `hotlift-guest` in the guest's /proc/self/task/*/comm).
        let spawned = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(move || {
                // SAFETY: gettid has no preconditions.
                let tid = unsafe { libc::gettid() };
                crate::strace::set_thread_prefix(tid as u32);
                let mut vm = match Vm::new_thread(proc, child) {
                    Ok(vm) => vm,
                    Err(e) => {
                        crate::host::say!("hotlift: cannot start a guest thread: {e}");
                        let _ = tx.send(-(libc::EAGAIN as i64));
                        return;
                    }
                };
                vm.mail
                    .sig
                    .blocked_own
                    .store(blocked_own, Ordering::Relaxed);
                vm.tsc_traps = tsc_traps;
                // Where the guest's threads may run, not the one core its
                // first thread is pinned to (the monitor has the other):
                // two busy threads shared that core (2.05x native, now
                // 1.24x, Intel Xeon model 207).
                vm.proc
                    .affinity
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .apply_to_current();
                // I1.
                let put = |addr: u64| {
                    vm.write_guest(addr, &(tid as u32).to_le_bytes());
                };
                if flags & libc::CLONE_PARENT_SETTID as u64 != 0 {
                    put(ptid);
                }
                if flags & libc::CLONE_CHILD_SETTID as u64 != 0 {
                    put(ctid);
                }
                if flags & libc::CLONE_CHILD_CLEARTID as u64 != 0 {
                    vm.clear_tid = ctid;
                }
                let _ = tx.send(tid as i64);
                vm.start_mask = Some(start_mask);
                vm.run_thread();
            });
        // SAFETY: restores the mask saved above.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &parent_mask, std::ptr::null_mut()) };
        if spawned.is_err() {
            return Ok(-(libc::EAGAIN as i64));
        }
        Ok(rx.recv().unwrap_or(-(libc::EAGAIN as i64)))
    }

    /// The guest thread calls `exit(code)`: the last thread ends the
    /// process (I3); any other ends its host thread after I2.
    pub(crate) fn exit_thread(&mut self, code: u64) -> ThreadEnd {
        if self.proc.threads.remove_is_last(&self.entry) {
            self.finish(Ending::Exit {
                code: (code & 0xff) as i32,
            });
            // SAFETY: no guest thread is left; the profile is written.
            unsafe { libc::syscall(libc::SYS_exit_group, code as i32) };
            unreachable!("exit_group returned");
        }
        if self.clear_tid != 0 {
            // I2.
            self.write_guest(self.clear_tid, &0u32.to_le_bytes());
            // SAFETY: a futex wake on a guest address wakes guest waiters
            // only (a bad address gives EFAULT).
            unsafe {
                libc::syscall(
                    libc::SYS_futex,
                    self.clear_tid,
                    libc::FUTEX_WAKE,
                    1,
                    0,
                    0,
                    0,
                )
            };
        }
        ThreadEnd::Exited
    }

    /// Run a thread made by `clone` until it exits (its host thread then
    /// ends), or until the process ends.
    pub fn run_thread(mut self) {
        match self.run_loop() {
            Ok(ThreadEnd::Exited) => {}
            Err(e) => {
                crate::host::say!("hotlift: {e}");
                self.finish(Ending::Exit {
                    code: crate::status::EXIT_HOTLIFT_FAILED,
                });
                // SAFETY: _exit has no preconditions.
                unsafe { libc::_exit(crate::status::EXIT_HOTLIFT_FAILED) }
            }
        }
    }
}
