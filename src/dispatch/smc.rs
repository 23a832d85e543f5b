//! Code that changes: stores into translated guest code.
//!
//! Translated code is only valid while the guest bytes it came from stay the
//! same. Syscalls that change memory (`mmap`, `munmap`, `mprotect`,
//! `mremap`) flush through [`Vm::code_changed`]. Plain stores are caught by
//! write-protecting every writable guest page that holds translated code:
//!
//! I1: a writable guest page with translated code is mapped without write
//!     permission (the guest's own view of its protection is unchanged) and
//!     is in `Vm::protected`; a flush gives every such page back its
//!     protection.
//! I2: on a store to a protected page, the signal handler restores the page
//!     and, when the faulting host instruction is the first of a guest
//!     instruction (the machine state is exactly the guest's), sends the
//!     thread to the `CODE_WRITE` stub with `ctx.rip()` = that instruction.
//!     The dispatcher flushes and runs that one instruction from an
//!     unprotected, unlisted translation, so the store completes before any
//!     code after it is translated again — also when it rewrites its own
//!     block.
//! I3: a store from inside emitted glue (e.g. a GS-rewrite) cannot be
//!     restarted exactly: the page is restored, the store completes, and the
//!     dispatcher flushes at the next exit (`smc_flush_pending`); code
//!     already chained may run stale until then (README, known limits).
//! I4: before a syscall that may write into a protected page (an argument
//!     points into one, or a read-like call's buffer covers one), the
//!     dispatcher gives those pages their protection back and drops their
//!     translations (I6), before the kernel can see hotlift's write
//!     protection. Code whose bytes change through another mapping of the
//!     same memory: I7; /proc/self/mem does not open for writing
//!     (syscall/memfile.rs M1).
//! I5: a store that faulted on hotlift's protection may find, by the time
//!     its handler looks, the page already given back by another thread's
//!     handler or a flush (a JIT's threads writing one page of code and
//!     data at once). A page's entry and its protection change together
//!     under a gate (protected.rs `ProtectedPages`) that a handler waits
//!     for, and a fault whose page has no entry is retried once for each
//!     time pages were given back since its last retry: a genuine fault
//!     (the same store faulting again with nothing given back meanwhile)
//!     still reaches the guest. The gate also keeps a handler's giving
//!     back from landing after a translator's new protection of the page.
//! I6: the flush after a store into code (or before a syscall's, I4)
//!     drops only the translations on the pages given back since the last
//!     flush (the protected-page table names up to 16 of them;
//!     cache/drop.rs): code elsewhere stays translated and linked, and
//!     every link into a dropped block is undone. With more pages, with
//!     path profiling, or when code memory shared with a forked process
//!     cannot be written, everything goes, as for the other causes.
//! I7: memory mapped twice (two shared mappings of one file or memfd at
//!     the same offsets, guest_mem I6: a double-mapped JIT writes code
//!     through a writable view and runs it from an executable one): the
//!     writable view's page of a page holding translated code is
//!     protected too (I1), a store there drops the translations on its
//!     twin (I6 drops the twins of the pages given back), and a new view
//!     or a view made writable drops those of its twins
//!     (syscall/mem `twins_changed`); `write` and `pwrite` into such a
//!     file drop those of its mappings (syscall/mod.rs), as they do those
//!     of a file with code mapped privately (syscall/mem/cut.rs C2). Not
//!     seen: a change another process makes, and views moved by
//!     `mremap`.
#![allow(unsafe_code)]

use super::process::Locked;
use super::{Vm, VmError};
use crate::guest_mem::PAGE;
use crate::loader::Prot;
use crate::types::{GuestAddr, HostAddr};

/// The kernel's protection of a guest page with protections `p` (never
/// executable: loader::host_prot).
pub(crate) fn prot_bits(p: Prot) -> i32 {
    p.host_bits()
}

impl Vm {
    /// I1 and I7 for one page holding translated code: it, and every page
    /// that is the same memory in another mapping (I7), lose their write
    /// permission where they have it. False when the table is full.
    fn protect_page(&self, l: &Locked, page: u64) -> bool {
        let one = |p: u64| match l.mem.find(p) {
            Some((_, r)) if r.prot.w => self.proc.protected.protect(p, r.prot),
            _ => true,
        };
        if !one(page) {
            return false;
        }
        if l.mem.has_views() {
            for (s, e) in l.mem.twins(page, page + PAGE) {
                if !(s..e).step_by(PAGE as usize).all(one) {
                    return false;
                }
            }
        }
        true
    }

    /// I1 for the pages of guest range [start, end) (translation lock held
    /// as `l`). When the table of protected pages is full, everything is
    /// flushed (which empties it) and protection starts over.
    pub fn protect_code(&mut self, l: &mut Locked, start: u64, end: u64) {
        let mut page = start & !(PAGE - 1);
        while page < end {
            if !self.protect_page(l, page) {
                // Full: the flush gives every page its protection
                // back; this block's own translation survives it
                // only as unlinked code, so it is dropped too.
                self.flush(l, super::process::FlushCause::ProtectionTableFull);
                continue;
            }
            page += PAGE;
        }
    }

    /// smc.rs I3: a store into code the handler could not restart exactly
    /// asked for a flush at the next exit.
    pub(super) fn exit_flush_pending(&mut self) {
        if self
            .proc
            .smc_flush_pending
            .load(std::sync::atomic::Ordering::Acquire)
        {
            let proc = self.proc.clone();
            let mut l = proc.lock();
            if proc
                .smc_flush_pending
                .load(std::sync::atomic::Ordering::Acquire)
            {
                self.flush(&mut l, super::process::FlushCause::CodeWritten);
            }
        }
    }

    /// The guest is about to store into translated code at `ctx.rip()` (I2).
    pub(super) fn code_written(&mut self) -> Result<HostAddr, VmError> {
        super::process::DispatchCounts::add(&self.proc.dispatch.code_writes);
        let proc = self.proc.clone();
        let mut l = proc.lock();
        self.flush(&mut l, super::process::FlushCause::CodeWritten);
        let id = self.translate_with(&mut l, GuestAddr(self.ctx.rip()), 1, false, false)?;
        Ok(l.cache.block(id).host)
    }
}

impl super::Mailbox {
    /// Called from the signal handler for a write fault at `addr` by host
    /// code at `pc` in the code cache, on the thread of context `ctx`.
    /// Returns the host address to resume at, or None when the fault is
    /// not a store into protected code.
    ///
    /// Async-signal-safe: the protected-page table and the code view are
    /// lock-free (process.rs); no allocation.
    pub(crate) fn on_write_fault(
        &self,
        ctx: &crate::contract::ThreadCtx,
        addr: u64,
        pc: u64,
    ) -> Option<u64> {
        let page = addr & !(PAGE - 1);
        let Some(_) = self.proc.protected.restore(page) else {
            // I5: retried once for each time pages were given back since.
            let seen = [pc, page, self.proc.protected.restored()];
            if seen[2] != 0 && self.stale_write() != seen {
                self.set_stale_write(seen);
                return Some(pc);
            }
            return None;
        };
        let view = self.proc.view.clone();
        match view.locate(pc).filter(|l| l.exact) {
            Some(loc) => {
                ctx.set_rip(loc.guest.0);
                // The store re-runs alone, uncounted (its block counted
                // it); the rest of its block did not run.
                self.set_unretired(view.counted_after(loc));
                self.note_leave(ctx, pc);
                Some(view.code_write_stub.0)
            }
            None => {
                self.proc
                    .smc_flush_pending
                    .store(true, std::sync::atomic::Ordering::Release);
                Some(pc)
            }
        }
    }
}
