//! What a guest thread's signal handler tells the thread's dispatcher.
//!
//! The handler runs on the thread itself, between any two of its
//! instructions: in translated code, in a stub, or in the dispatcher while
//! it holds `&mut Vm`. So it never forms a reference to the `Vm` (the
//! compiler may keep the Vm's fields in registers across the call into
//! translated code, which it sees take only the context): it reaches the
//! thread's mailbox, the context's handler fields (contract/ctx.rs C2) and the
//! process's shared state, and nothing else.
//!
//! M1: every field here is an atomic or never changes after the mailbox
//!     is made; the dispatcher takes what the handler left (`contract::take32`)
//!     after translated code returned, when no handler writes it.
//! M2: the mailbox is boxed and owned by its `Vm`; the context's `mail`
//!     points at it from `Vm::publish`, before the thread can take a
//!     signal for its guest (threads.rs I4), until the Vm goes: its drop
//!     takes the pointer back, so a signal on the host thread after that
//!     finds no mailbox.
//! M3: a fault's location is not sent: the dispatcher finds it again from
//!     the host pc (the code there cannot change before the dispatcher
//!     runs: the thread has not left translated code for other threads'
//!     flushes, process.rs I3).
//! M4: `ring` is the ring of the Vm's profiling, which holds it: set again
//!     when a forked child's profiling replaces the parent's
//!     ([`Mailbox::set_ring`]), before the old one is dropped, so a
//!     handler never sees a ring that is gone (it runs on the thread, so
//!     it sees the pointer before or after the store, never the drop).

use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64};
use std::sync::Arc;

use super::{Process, ThreadSignals};
use crate::cache::PcLocation;
use crate::contract::{take32, ThreadCtx};
use crate::monitor::ThreadRing;

/// No block (`partial`).
const NONE: u32 = u32::MAX;

#[derive(Debug)]
pub struct Mailbox {
    pub proc: Arc<Process>,
    /// The thread's ring (M4): the handler moves a prologue that reached
    /// its guard page to the other segment (monitor/ring.rs).
    ring: AtomicPtr<ThreadRing>,
    pub sig: ThreadSignals,
    /// Counted instructions of the block the thread left that did not
    /// retire (a kick at a boundary, a store into code), for the monitor.
    unretired: AtomicU32,
    /// The block the thread left before its end: its `PARTIAL` word goes
    /// to the ring before the `TAG_UNRETIRED` record (contract I3).
    partial: AtomicU32,
    /// The host pc of the last fault in translated code, and its error
    /// code, trap number and address (signal/deliver.rs D5).
    fault_pc: AtomicU64,
    fault_regs: [AtomicU64; 3],
    /// A fatal fault at a known guest instruction is to be recorded
    /// (M3), with the guest's RCX then.
    fault_open: AtomicBool,
    fault_rcx: AtomicU64,
    /// The last write fault retried as one on a page another thread gave
    /// back meanwhile (smc.rs I5): host pc, page, pages given back then.
    stale_write: [AtomicU64; 3],
    /// The dispatcher is about to enter a one-instruction block that is
    /// not the block for its address (a store into code, smc.rs): a signal
    /// must not turn the entry into a kick (signal/deliver.rs D2).
    entering_single: AtomicBool,
}

impl Mailbox {
    pub fn new(proc: Arc<Process>, ring: Option<&Arc<ThreadRing>>) -> Mailbox {
        let m = Mailbox {
            proc,
            ring: AtomicPtr::new(std::ptr::null_mut()),
            sig: ThreadSignals::default(),
            unretired: AtomicU32::new(0),
            partial: AtomicU32::new(NONE),
            fault_pc: AtomicU64::new(0),
            fault_regs: Default::default(),
            fault_open: AtomicBool::new(false),
            fault_rcx: AtomicU64::new(0),
            stale_write: Default::default(),
            entering_single: AtomicBool::new(false),
        };
        m.set_ring(ring);
        m
    }

    /// The thread's ring from now on (M4).
    pub fn set_ring(&self, ring: Option<&Arc<ThreadRing>>) {
        let p = ring.map_or(std::ptr::null_mut(), |r| Arc::as_ptr(r) as *mut ThreadRing);
        self.ring.store(p, Relaxed);
    }

    /// The thread's ring, if it has one (M4).
    #[allow(unsafe_code)]
    pub fn ring(&self) -> Option<&ThreadRing> {
        // SAFETY: the Vm's profiling holds the ring while it is set (M4).
        unsafe { self.ring.load(Relaxed).as_ref() }
    }

    /// `n` more counted instructions did not retire.
    pub fn add_unretired(&self, n: u32) {
        self.unretired.fetch_add(n, Relaxed);
    }

    pub fn set_unretired(&self, n: u32) {
        self.unretired.store(n, Relaxed);
    }

    pub fn take_unretired(&self) -> u32 {
        take32(&self.unretired, 0)
    }

    pub fn set_partial(&self, block: u32) {
        self.partial.store(block, Relaxed);
    }

    pub fn take_partial(&self) -> Option<u32> {
        Some(take32(&self.partial, NONE)).filter(|&b| b != NONE)
    }

    /// A fault at host `pc` with `regs` (error code, trap number,
    /// address); `rcx` when it is at a guest instruction (M3).
    pub fn set_fault(&self, pc: u64, regs: [u64; 3], rcx: Option<u64>) {
        self.fault_pc.store(pc, Relaxed);
        for (slot, v) in self.fault_regs.iter().zip(regs) {
            slot.store(v, Relaxed);
        }
        self.fault_rcx.store(rcx.unwrap_or(0), Relaxed);
        self.fault_open.store(rcx.is_some(), Relaxed);
    }

    pub fn fault_pc(&self) -> u64 {
        self.fault_pc.load(Relaxed)
    }

    pub fn fault_regs(&self) -> [u64; 3] {
        std::array::from_fn(|i| self.fault_regs[i].load(Relaxed))
    }

    /// The open fatal fault, taken: where it was (found again, M3) and the
    /// guest's RCX.
    pub fn take_fault(&self) -> Option<(PcLocation, u64)> {
        if !self.fault_open.load(Relaxed) {
            return None;
        }
        self.fault_open.store(false, Relaxed);
        let loc = self.proc.view.locate(self.fault_pc())?;
        Some((loc, self.fault_rcx.load(Relaxed)))
    }

    pub fn stale_write(&self) -> [u64; 3] {
        std::array::from_fn(|i| self.stale_write[i].load(Relaxed))
    }

    pub fn set_stale_write(&self, seen: [u64; 3]) {
        for (slot, v) in self.stale_write.iter().zip(seen) {
            slot.store(v, Relaxed);
        }
    }

    /// The thread leaves translated code abnormally at host `pc` (a fault,
    /// a store into code, a signal): the block it leaves, or the partial
    /// record of the superblock pass open there, for the dispatcher to
    /// push. Async-signal-safe.
    pub fn note_leave(&self, ctx: &ThreadCtx, pc: u64) {
        let view = &self.proc.view;
        if pc < view.shared.arena.rx {
            if let Some(loc) = view.blocks.locate(pc) {
                if loc.counted {
                    self.set_partial(loc.block.map_or(NONE, |b| b.0));
                }
            }
            return;
        }
        if let Some(w) = view.shared.registry.find(view.gen(), pc) {
            if w.pc.member != u16::MAX {
                // The partial unit of that member (monitor/tables/units.rs),
                // after the loops counted so far (contract I2).
                ctx.set_sb_partial(
                    w.ids.partial_unit + w.pc.member as u32,
                    [w.ids.loop_hdr, w.ids.unit_base],
                );
            }
        }
    }

    pub fn entering_single(&self) -> bool {
        self.entering_single.load(Relaxed)
    }

    pub fn set_entering_single(&self, on: bool) {
        self.entering_single.store(on, Relaxed);
    }
}

impl Drop for super::Vm {
    /// M2: the context no longer names the mailbox about to go (unless it
    /// names a newer Vm's already).
    fn drop(&mut self) {
        let mine: &Mailbox = &self.mail;
        let _ = self.ctx.mail.compare_exchange(
            mine as *const Mailbox as u64,
            0,
            std::sync::atomic::Ordering::AcqRel,
            std::sync::atomic::Ordering::Acquire,
        );
    }
}
