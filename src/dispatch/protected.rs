//! Writable guest pages that hold translated code, write-protected so
//! that a store into code faults (smc.rs I1), in a table the signal
//! handler reads and changes without a lock.
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use crate::guest_mem::PAGE;
use crate::loader::Prot;

/// Writable guest pages that hold translated code and are write-protected
/// (smc.rs), in a table the signal handler can search and change without
/// a lock: open addressing over atomic words `page | prot | USED`.
#[derive(Debug)]
pub struct ProtectedPages {
    slots: crate::anon::Zeroed<AtomicU64>,
    count: AtomicU64,
    /// The slots made non-empty since the last `restore_all`, in the
    /// first `touched_n` (changed, as every slot, only under `gate`).
    touched: crate::anon::Zeroed<AtomicU32>,
    touched_n: AtomicUsize,
    /// Slots holding `TOMB`: a lookup of an absent page probes past them,
    /// and only [`ProtectedPages::restore_all`] empties them.
    tombs: AtomicUsize,
    /// Held while a page's protection and its entry change together
    /// (smc.rs I5); never by a thread in translated code.
    gate: AtomicBool,
    /// Pages given their protection back so far (smc.rs I5).
    opened: AtomicU64,
    /// The pages given back one by one since the last look
    /// ([`ProtectedPages::take_given_back`]): the first [`GIVEN_MAX`] of
    /// `given_n`.
    given: [AtomicU64; GIVEN_MAX],
    given_n: AtomicUsize,
}

const USED: u64 = 0x800;
/// Pages given back one by one that [`ProtectedPages`] names; past that,
/// a flush drops everything.
const GIVEN_MAX: usize = 16;
const TOMB: u64 = 1;
const PROT_MASK: u64 = 0x7;

/// The gate held ([`ProtectedPages::hold_gate`]); given back on drop.
#[derive(Debug)]
pub struct GateHeld<'a>(&'a ProtectedPages);

impl Drop for GateHeld<'_> {
    fn drop(&mut self) {
        self.0.gate.store(false, Ordering::Release);
    }
}

impl ProtectedPages {
    pub fn new(cap: usize) -> ProtectedPages {
        ProtectedPages {
            // SAFETY: an all-zero AtomicU64 is a valid zero (an empty slot).
            slots: unsafe { crate::anon::zeroed_slice(cap.next_power_of_two()) },
            count: AtomicU64::new(0),
            // SAFETY: as above.
            touched: unsafe { crate::anon::zeroed_slice(cap.next_power_of_two()) },
            touched_n: AtomicUsize::new(0),
            tombs: AtomicUsize::new(0),
            gate: AtomicBool::new(false),
            opened: AtomicU64::new(0),
            given: std::array::from_fn(|_| AtomicU64::new(0)),
            given_n: AtomicUsize::new(0),
        }
    }

    fn home(&self, page: u64) -> usize {
        ((page >> 12).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 20) as usize & (self.slots.len() - 1)
    }

    pub fn is_empty(&self) -> bool {
        self.count.load(Ordering::Acquire) == 0
    }

    pub fn len(&self) -> usize {
        self.count.load(Ordering::Acquire) as usize
    }

    /// Record `page`, not yet recorded, with the guest's protection
    /// (translation lock held). False when the table is three quarters
    /// full.
    fn insert(&self, page: u64, prot: Prot) -> bool {
        if self.len() * 4 >= self.slots.len() * 3 {
            return false;
        }
        let word = page | USED | prot_word(prot);
        let mask = self.slots.len() - 1;
        let mut i = self.home(page);
        loop {
            let cur = self.slots[i].load(Ordering::Acquire);
            if cur == 0 || cur == TOMB {
                if self.slots[i]
                    .compare_exchange(cur, word, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
                {
                    self.count.fetch_add(1, Ordering::AcqRel);
                    if cur == TOMB {
                        self.tombs.fetch_sub(1, Ordering::AcqRel);
                    }
                    if cur == 0 {
                        // At most once per slot between two restore_all.
                        let n = self.touched_n.fetch_add(1, Ordering::AcqRel);
                        self.touched[n].store(i as u32, Ordering::Release);
                    }
                    return true;
                }
                continue;
            }
            i = (i + 1) & mask;
        }
    }

    pub fn contains(&self, page: u64) -> bool {
        self.find(page).is_some()
    }

    fn find(&self, page: u64) -> Option<usize> {
        let mask = self.slots.len() - 1;
        let mut i = self.home(page);
        for _ in 0..self.slots.len() {
            let cur = self.slots[i].load(Ordering::Acquire);
            if cur == 0 {
                return None;
            }
            if cur != TOMB && cur & !0xfff == page {
                return Some(i);
            }
            i = (i + 1) & mask;
        }
        None
    }

    /// Forget `page`; the guest's protection of it. Async-signal-safe.
    fn remove(&self, page: u64) -> Option<Prot> {
        let i = self.find(page)?;
        let cur = self.slots[i].load(Ordering::Acquire);
        if cur & !0xfff != page {
            return None;
        }
        self.slots[i]
            .compare_exchange(cur, TOMB, Ordering::AcqRel, Ordering::Acquire)
            .ok()?;
        self.count.fetch_sub(1, Ordering::AcqRel);
        self.tombs.fetch_add(1, Ordering::AcqRel);
        Some(word_prot(cur))
    }

    /// Hold the gate for `f` (I5). Async-signal-safe; the holder never
    /// runs translated code, so a handler waiting here waits for another
    /// thread.
    fn gated<R>(&self, f: impl FnOnce() -> R) -> R {
        let _held = self.hold_gate();
        f()
    }

    /// The gate, held until the guard goes (dispatch/fork.rs F1: across a
    /// `fork`, so that no child starts with it held by a thread it does not
    /// have, a handler giving a page back on another thread; the child
    /// hung at its first flush). The translation lock is held: no other
    /// thread holds the gate but such a handler, for a moment.
    /// Async-signal-safe.
    pub fn hold_gate(&self) -> GateHeld<'_> {
        while self
            .gate
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            // SAFETY: sched_yield is async-signal-safe.
            unsafe { libc::sched_yield() };
        }
        GateHeld(self)
    }

    /// Take write permission away from guest page `page`, recording the
    /// guest's protection `prot` (smc.rs I1; translation lock held). False
    /// when the table is full.
    pub fn protect(&self, page: u64, prot: Prot) -> bool {
        self.gated(|| {
            if self.contains(page) {
                return true;
            }
            if !self.insert(page, prot) {
                return false;
            }
            let ro = Prot { w: false, ..prot };
            // SAFETY: the caller's page is guest memory. Splitting its
            // mapping may need one more kernel mapping than the guest
            // left (anon.rs R1).
            let done = crate::anon::retry_enomem(|| match unsafe { mprotect_page(page, ro) } {
                0 => Ok(()),
                _ => Err(std::io::Error::last_os_error()),
            });
            if done.is_err() {
                self.remove(page);
            }
            true
        })
    }

    /// Give `page` the guest's own protection back if hotlift took its
    /// write permission away (smc.rs I5). Async-signal-safe.
    pub fn restore(&self, page: u64) -> Option<Prot> {
        self.gated(|| {
            let prot = self.remove(page)?;
            // SAFETY: gives a guest page its own protection back.
            unsafe { mprotect_page(page, prot) };
            let n = self.given_n.fetch_add(1, Ordering::AcqRel);
            if n < GIVEN_MAX {
                self.given[n].store(page, Ordering::Release);
            }
            self.opened.fetch_add(1, Ordering::AcqRel);
            Some(prot)
        })
    }

    /// Give every page its protection back and forget them all
    /// (translation lock held; smc.rs I1, I5). Only the slots used since
    /// the last time are read: an atomic swap of each of the 64 K slots
    /// took 0.46 ms at every store into code (a JIT rewriting a function,
    /// Intel Xeon model 207), a plain scan of them 0.1 ms.
    pub fn restore_all(&self) {
        self.gated(|| {
            let n = self.touched_n.swap(0, Ordering::AcqRel);
            for t in &self.touched[..n] {
                let s = &self.slots[t.load(Ordering::Acquire) as usize];
                let cur = s.swap(0, Ordering::AcqRel);
                if cur != 0 && cur != TOMB {
                    self.count.fetch_sub(1, Ordering::AcqRel);
                    // SAFETY: gives a guest page its own protection back.
                    unsafe { mprotect_page(cur & !0xfff, word_prot(cur)) };
                }
            }
            self.given_n.store(0, Ordering::Release);
            self.tombs.store(0, Ordering::Release);
            self.opened.fetch_add(1, Ordering::AcqRel);
        })
    }

    /// The pages given back one by one (a store into code) since the last
    /// call or [`ProtectedPages::restore_all`], forgotten now; None when
    /// there were more than this table names, or when tombstones fill a
    /// quarter of the table (only giving every page back empties them;
    /// translation lock held).
    pub fn take_given_back(&self) -> Option<Vec<u64>> {
        self.gated(|| {
            let n = self.given_n.swap(0, Ordering::AcqRel);
            let tombs = self.tombs.load(Ordering::Acquire);
            (n <= GIVEN_MAX && tombs * 4 < self.slots.len()).then(|| {
                self.given[..n]
                    .iter()
                    .map(|p| p.load(Ordering::Acquire))
                    .collect()
            })
        })
    }

    /// How many times pages were given their protection back (smc.rs I5).
    /// Async-signal-safe.
    pub fn restored(&self) -> u64 {
        self.opened.load(Ordering::Acquire)
    }

    /// The protected pages in `[start, end)` (a syscall's buffer), at
    /// most `max` of them.
    pub fn pages_in(&self, start: u64, end: u64, max: usize) -> Vec<u64> {
        let mut v = Vec::new();
        if end <= start || self.is_empty() {
            return v;
        }
        let first = start & !(PAGE - 1);
        if (end - first) / PAGE > self.slots.len() as u64 {
            for s in self.slots.iter() {
                let cur = s.load(Ordering::Acquire);
                if cur != 0
                    && cur != TOMB
                    && (first..end).contains(&(cur & !0xfff))
                    && v.len() < max
                {
                    v.push(cur & !0xfff);
                }
            }
            return v;
        }
        let mut p = Some(first);
        while let Some(at) = p.filter(|&at| at < end && v.len() < max) {
            if self.contains(at) {
                v.push(at);
            }
            p = at.checked_add(PAGE);
        }
        v
    }
}

/// Set guest page `page`'s protection as the kernel should see `prot`;
/// mprotect's result.
///
/// # Safety
/// `page` must be a page of guest memory.
unsafe fn mprotect_page(page: u64, prot: Prot) -> i32 {
    // SAFETY: upheld by the caller.
    unsafe {
        libc::mprotect(
            page as *mut libc::c_void,
            PAGE as usize,
            super::smc::prot_bits(prot),
        )
    }
}

fn prot_word(p: Prot) -> u64 {
    u64::from(p.r) | u64::from(p.w) << 1 | u64::from(p.x) << 2
}

fn word_prot(w: u64) -> Prot {
    let b = w & PROT_MASK;
    Prot {
        r: b & 1 != 0,
        w: b & 2 != 0,
        x: b & 4 != 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protected_pages_insert_find_remove_restore() {
        // Real pages: restoring calls mprotect on them.
        const N: usize = 64;
        // SAFETY: a fresh private anonymous mapping, unmapped below.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                N * PAGE as usize,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        } as u64;
        assert_ne!(base as *mut libc::c_void, libc::MAP_FAILED);
        let page = |k: u64| base + k * PAGE;
        let t = ProtectedPages::new(64);
        let rwx = Prot {
            r: true,
            w: true,
            x: true,
        };
        let rw = Prot { x: false, ..rwx };
        assert!(t.protect(page(0), rwx));
        assert!(t.protect(page(1), rw));
        assert!(t.protect(page(0), rwx), "twice is fine");
        assert_eq!(t.len(), 2);
        assert_eq!(
            t.pages_in(page(0) + 0x800, page(0) + 0x900, 4),
            vec![page(0)]
        );
        assert_eq!(t.pages_in(page(0), page(9), 4), vec![page(0), page(1)]);
        assert_eq!(
            t.pages_in(page(0), page(9), 1),
            vec![page(0)],
            "at most max"
        );
        assert!(t.pages_in(page(2), page(9), 4).is_empty());
        assert!(
            t.pages_in(u64::MAX - 100, u64::MAX, 4).is_empty(),
            "no wrap at the top"
        );
        assert_eq!(t.restored(), 0);
        assert_eq!(t.restore(page(1)), Some(rw));
        assert_eq!(t.restore(page(1)), None);
        assert_eq!(t.restored(), 1, "one page given back");
        assert!(t.contains(page(0)), "found past a tombstone");
        let mut i = 2;
        while t.protect(page(i), rwx) {
            i += 1;
        }
        assert_eq!(t.len(), 48, "three quarters of 64 slots");
        // SAFETY: a page of the mapping, protected just above.
        assert_eq!(unsafe { *(page(5) as *const u8) }, 0, "still readable");
        t.restore_all();
        // SAFETY: as above, writable again.
        unsafe { *(page(5) as *mut u8) = 7 };
        assert!(t.is_empty());
        assert_eq!(t.restored(), 2);
        let all_empty = |t: &ProtectedPages| t.slots.iter().all(|s| s.load(Ordering::Relaxed) == 0);
        assert!(
            all_empty(&t),
            "every slot read: used ones and the tombstone"
        );
        // Tombstones alone (every page given back one by one) are
        // cleared too, and a tombstone reused by an insert is not one.
        assert!(t.protect(page(3), rw) && t.protect(page(4), rw));
        assert_eq!(t.restore(page(3)), Some(rw));
        assert!(t.protect(page(6), rw));
        assert_eq!(t.restore(page(4)), Some(rw));
        assert_eq!(t.restore(page(6)), Some(rw));
        assert!(t.is_empty() && !all_empty(&t));
        assert_eq!(t.take_given_back().map(|v| v.len()), Some(3));
        assert_eq!(t.take_given_back(), Some(vec![]), "taken");
        t.restore_all();
        assert!(all_empty(&t));
        // Tombstones are counted; past a quarter of the table every page
        // must go back.
        assert!(t.protect(page(7), rw));
        assert_eq!(t.restore(page(7)), Some(rw));
        assert_eq!(t.tombs.load(Ordering::Relaxed), 1, "one slot, given back");
        assert!(t.protect(page(7), rw), "its tombstone reused");
        assert_eq!(t.tombs.load(Ordering::Relaxed), 0);
        t.tombs.store(t.slots.len() / 4, Ordering::Relaxed);
        assert_eq!(t.take_given_back(), None, "16 tombstones in 64 slots");
        t.restore_all();
        assert_eq!(t.take_given_back(), Some(vec![]));
        // SAFETY: the mapping made above.
        unsafe { libc::munmap(base as *mut libc::c_void, N * PAGE as usize) };
    }
}
