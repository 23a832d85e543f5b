//! The signals hotlift keeps for itself — its fault signals (write
//! protection, fault reports, single-stepping) and [`KICK`] — and the
//! guest's signal mask around them. The guest's actions and mask bits for
//! these are recorded, never given to the kernel (signal/ and
//! syscall/signals.rs keep the guest's view; the engine reads and sets it
//! across fork, exec and thread start).
#![allow(unsafe_code)]

use std::sync::atomic::Ordering;

use super::process::KICK;
use super::{Mailbox, Vm};
use crate::host::syscall6;

/// hotlift's fault signals.
pub const FAULT_SIGNALS: [i32; 5] = [
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGFPE,
    libc::SIGILL,
    libc::SIGTRAP,
];

/// Does hotlift keep `sig` for itself?
pub fn hotlift_owns(sig: i32) -> bool {
    FAULT_SIGNALS.contains(&sig) || sig == KICK
}

/// The mask bits of [`hotlift_owns`].
pub const OWN_MASK: u64 = {
    let mut m = 1u64 << (KICK - 1);
    let mut i = 0;
    while i < FAULT_SIGNALS.len() {
        m |= 1 << (FAULT_SIGNALS[i] - 1);
        i += 1;
    }
    m
};

impl Vm {
    /// The guest's signal mask (signal/deliver.rs D1): the kernel's, less
    /// the bits hotlift holds and its own signals, with the guest's
    /// recorded bits for those.
    pub fn guest_mask(&self) -> u64 {
        let mut kernel: u64 = 0;
        // SAFETY: reads this thread's mask into a local.
        unsafe {
            syscall6(
                libc::SYS_rt_sigprocmask as u64,
                [
                    libc::SIG_BLOCK as u64,
                    0,
                    &mut kernel as *mut u64 as u64,
                    8,
                    0,
                    0,
                ],
            )
        };
        (kernel & !self.mail.sig.held.load(Ordering::Acquire) & !OWN_MASK)
            | self.mail.sig.blocked_own.load(Ordering::Acquire)
    }

    /// Make `mask` the guest's signal mask (D1); hotlift's own signals are
    /// recorded, the rest goes to the kernel with the held bits.
    pub fn set_guest_mask(&self, mask: u64) {
        let kernel = (mask & !OWN_MASK) | self.mail.sig.held.load(Ordering::Acquire);
        // SAFETY: sets this thread's mask from a local.
        unsafe {
            syscall6(
                libc::SYS_rt_sigprocmask as u64,
                [
                    libc::SIG_SETMASK as u64,
                    &kernel as *const u64 as u64,
                    0,
                    8,
                    0,
                    0,
                ],
            )
        };
        self.mail
            .sig
            .blocked_own
            .store(mask & OWN_MASK, Ordering::Release);
    }

    /// Let the signal handler find this thread's mailbox (mailbox.rs M2).
    pub fn publish(&mut self) {
        let mail: &Mailbox = &self.mail;
        self.ctx.mail.store(
            mail as *const Mailbox as u64,
            std::sync::atomic::Ordering::Release,
        );
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_own_mask_has_the_fault_signals_and_the_kick() {
        let bits: Vec<i32> = (1..=64)
            .filter(|s| super::OWN_MASK & 1 << (s - 1) != 0)
            .collect();
        assert_eq!(bits, [4, 5, 7, 8, 11, super::KICK]);
        assert!((1..=64).all(|s| super::hotlift_owns(s) == bits.contains(&s)));
    }
}
