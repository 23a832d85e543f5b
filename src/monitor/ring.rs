//! The per-thread ring that carries every block entry to the monitor.
//!
//! Memory layout: two segments of `seg_entries` 32-bit entries, each followed
//! by a `PROT_NONE` guard page: `[seg 0][guard][seg 1][guard]`. The producer
//! (emitted block prologues and the dispatcher) appends at
//! `ThreadCtx::ring_pos` with no bounds check; the store that runs into a
//! guard page faults, and the fault handler moves the producer to the other
//! segment once the monitor is done with it. So the prologue is a handful of
//! `mov`/`lea` and the check costs nothing until a segment fills.
//!
//! I1: no entry is ever dropped or overwritten unread: the producer enters a
//!     segment only after the consumer has moved past it (the consumer is in
//!     the segment the producer just filled), and waits (futex, counted and
//!     timed) otherwise.
//! I2: entries are published by the producer's store of `ring_pos` after the
//!     entry stores (x86 stores are not reordered with each other); the
//!     consumer reads `ring_pos` with acquire and only entries below it.
//! I3: a position equal to a segment's end belongs to that segment.
//! I4: each segment starts on a 2 MB boundary and is followed by a
//!     `PROT_NONE` gap of at least 2 MB (its guard page first), so that
//!     the kernel may back it with transparent huge pages, which it is
//!     asked to do past the first 2 MB of segment 0: a python start-up
//!     pushes 5 M words, and faulting in 4,096 small pages of ring cost
//!     its guest thread 4 to 6 ms (and the TLB a miss every 1,024 words,
//!     on both cores), while a process that pushes fewer than 512 K words
//!     (a forked child, `/bin/true`) touches small pages only.
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, Ordering};
use std::time::Instant;

use crossbeam_utils::CachePadded;

const PAGE: usize = 4096;
/// A transparent huge page (I4).
const HUGE: usize = 2 << 20;

/// State shared by the producer and the consumer of one ring.
#[derive(Debug)]
pub struct RingShared {
    /// Where the consumer reads next.
    pub consumer_pos: CachePadded<AtomicU64>,
    /// Bumped each time the consumer enters the other segment; the futex
    /// word producers wait on (I1).
    pub consumer_seq: CachePadded<AtomicU32>,
    /// Producer waits on a full ring, and their total time.
    pub waits: AtomicU64,
    pub wait_ns: AtomicU64,
    /// The monitor's doorbell (a futex word it naps on), rung by a producer
    /// that has to wait; null until the ring is registered.
    pub doorbell: AtomicPtr<AtomicU32>,
}

/// Ring a futex doorbell: bump it and wake one waiter. Async-signal-safe.
pub fn ring_doorbell(bell: &AtomicU32) {
    bell.fetch_add(1, Ordering::Release);
    // SAFETY: futex wake on a live atomic word.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            bell.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            1,
        )
    };
}

/// One ring's memory. Lives as long as the process (rings are not freed:
/// the monitor may read a ring until the end).
#[derive(Debug)]
pub struct Ring {
    base: u64,
    seg_bytes: u64,
    /// From one segment's start to the next's (I4).
    stride: u64,
    pub shared: RingShared,
}

// SAFETY: the ring is plain shared memory; the protocol in the module docs
// (I1, I2) decides who touches which entry.
unsafe impl Sync for Ring {}
// SAFETY: as above.
unsafe impl Send for Ring {}

/// Bytes per segment of a ring asked for with `entries` entries.
fn segment_bytes(entries: usize) -> usize {
    ((entries / 2).max(1024) * 4).next_multiple_of(PAGE)
}

/// Entries a ring asked for with `entries` entries really holds.
pub fn capacity_for(entries: usize) -> u64 {
    2 * segment_bytes(entries) as u64 / 4
}

impl Ring {
    /// Map a ring with `entries` entries in all (rounded to whole pages per
    /// segment).
    pub fn new(entries: usize) -> std::io::Result<Ring> {
        // anon.rs R1: its gaps and advice split the mapping into kernel
        // mappings the guest may have left none of.
        crate::anon::retry_enomem(|| Self::try_new(entries))
    }

    fn try_new(entries: usize) -> std::io::Result<Ring> {
        let seg_bytes = segment_bytes(entries);
        let stride = seg_bytes.next_multiple_of(HUGE) + HUGE;
        let total = 2 * stride;
        let p = crate::anon::map_unforked(total + HUGE, libc::MAP_NORESERVE)? as usize;
        let base = p.next_multiple_of(HUGE);
        // SAFETY: the slack before `base` and after `base + total` lies in
        // the mapping just made, which nothing else knows of; then the
        // gaps after the segments and the advice, inside what is left.
        unsafe {
            if base > p {
                libc::munmap(p as *mut libc::c_void, base - p);
            }
            if p + HUGE > base {
                libc::munmap((base + total) as *mut libc::c_void, p + HUGE - base);
            }
            for s in 0..2 {
                let gap = base + s * stride + seg_bytes;
                if libc::mprotect(
                    gap as *mut libc::c_void,
                    stride - seg_bytes,
                    libc::PROT_NONE,
                ) != 0
                {
                    let e = std::io::Error::last_os_error();
                    libc::munmap(base as *mut libc::c_void, total);
                    return Err(e);
                }
            }
            // I4; a kernel without transparent huge pages refuses, and
            // small pages come as before.
            for (from, to) in [
                (base + HUGE, base + seg_bytes),
                (base + stride, base + stride + seg_bytes),
            ] {
                if to > from {
                    libc::madvise(from as *mut libc::c_void, to - from, libc::MADV_HUGEPAGE);
                }
            }
        }
        let base = base as u64;
        Ok(Ring {
            base,
            seg_bytes: seg_bytes as u64,
            stride: stride as u64,
            shared: RingShared {
                consumer_pos: CachePadded::new(AtomicU64::new(base)),
                consumer_seq: CachePadded::new(AtomicU32::new(0)),
                waits: AtomicU64::new(0),
                wait_ns: AtomicU64::new(0),
                doorbell: AtomicPtr::new(std::ptr::null_mut()),
            },
        })
    }

    pub fn start(&self, seg: u64) -> u64 {
        self.base + seg * self.stride
    }

    pub fn end(&self, seg: u64) -> u64 {
        self.start(seg) + self.seg_bytes
    }

    /// The segment of a position (I3).
    pub fn seg_of(&self, pos: u64) -> u64 {
        if pos <= self.end(0) {
            0
        } else {
            1
        }
    }

    /// Entries published at `producer_pos` that the consumer has not read.
    pub fn lag(&self, producer_pos: u64) -> u64 {
        let c = self.shared.consumer_pos.load(Ordering::Relaxed);
        let (cs, ps) = (self.seg_of(c), self.seg_of(producer_pos));
        if cs == ps {
            producer_pos.saturating_sub(c) / 4
        } else {
            (self.end(cs) - c + producer_pos - self.start(ps)) / 4
        }
    }

    /// Entries per segment.
    pub fn seg_entries(&self) -> u64 {
        self.seg_bytes / 4
    }

    /// If `addr` is in the guard page after a segment, that segment.
    pub fn guard_segment(&self, addr: u64) -> Option<u64> {
        (0..2).find(|&s| addr >= self.end(s) && addr < self.end(s) + PAGE as u64)
    }

    /// The producer filled segment `seg`: wait until the consumer is in it
    /// (I1), then return the start of the other segment. Async-signal-safe
    /// (atomics, futex, clock_gettime).
    pub fn wrap(&self, seg: u64) -> u64 {
        let ready = |pos: u64| self.seg_of(pos) == seg;
        if !ready(self.shared.consumer_pos.load(Ordering::Acquire)) {
            let t0 = Instant::now();
            self.shared.waits.fetch_add(1, Ordering::Relaxed);
            let bell = self.shared.doorbell.load(Ordering::Acquire);
            if !bell.is_null() {
                // SAFETY: the doorbell lives in the monitor's shared state,
                // which outlives every registered ring.
                ring_doorbell(unsafe { &*bell });
            }
            loop {
                let seq = self.shared.consumer_seq.load(Ordering::Acquire);
                if ready(self.shared.consumer_pos.load(Ordering::Acquire)) {
                    break;
                }
                let timeout = libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 2_000_000,
                };
                // SAFETY: futex wait on a live atomic word; a timeout bounds a
                // missed wake-up.
                unsafe {
                    libc::syscall(
                        libc::SYS_futex,
                        self.shared.consumer_seq.as_ptr(),
                        libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
                        seq,
                        &timeout as *const libc::timespec,
                    )
                };
            }
            self.shared
                .wait_ns
                .fetch_add(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
        }
        self.start(1 - seg)
    }

    /// Consumer: the entries available from `producer_pos`, as a slice, and
    /// advance past them. Returns an empty slice when there are none.
    ///
    /// # Safety
    /// `producer_pos` must be a value the producer published (I2), and only
    /// one consumer may call this.
    pub unsafe fn take(&self, producer_pos: u64) -> &[u32] {
        let c = self.shared.consumer_pos.load(Ordering::Relaxed);
        let (cs, ps) = (self.seg_of(c), self.seg_of(producer_pos));
        let upto = if cs == ps && producer_pos >= c {
            producer_pos
        } else {
            self.end(cs)
        };
        if upto == c {
            if cs != ps && c == self.end(cs) {
                // Follow the producer into the other segment (I1) and wake it.
                self.shared
                    .consumer_pos
                    .store(self.start(ps), Ordering::Release);
                self.shared.consumer_seq.fetch_add(1, Ordering::Release);
                // SAFETY: futex wake on a live atomic word.
                unsafe {
                    libc::syscall(
                        libc::SYS_futex,
                        self.shared.consumer_seq.as_ptr(),
                        libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
                        1,
                    )
                };
            }
            return &[];
        }
        let n = ((upto - c) / 4) as usize;
        // SAFETY: [c, upto) was written by the producer and published (I2);
        // it is not overwritten before consumer_pos moves past it (I1).
        unsafe { std::slice::from_raw_parts(c as *const u32, n) }
    }

    /// Consumer: mark everything returned by the last `take` as read.
    pub fn release(&self, n: usize) {
        let c = self.shared.consumer_pos.load(Ordering::Relaxed);
        self.shared
            .consumer_pos
            .store(c + 4 * n as u64, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;
    use std::sync::Arc;

    /// A producer that writes with explicit wraps (as the dispatcher does)
    /// and a consumer thread: every value arrives, in order (I1, I2).
    #[test]
    fn every_entry_arrives_in_order_across_wraps() {
        let ring = Arc::new(Ring::new(2048).unwrap());
        let pos = Arc::new(AtomicU64::new(ring.start(0)));
        const N: u32 = 200_000;
        let (r2, p2) = (ring.clone(), pos.clone());
        let consumer = std::thread::spawn(move || {
            let mut next = 0u32;
            while next < N {
                // SAFETY: single consumer; pos is published by the producer.
                let got = unsafe { r2.take(p2.load(Ordering::Acquire)) };
                for &v in got {
                    assert_eq!(v, next, "entry lost or reordered");
                    next += 1;
                }
                let n = got.len();
                r2.release(n);
            }
        });
        let mut p = ring.start(0);
        for v in 0..N {
            if let Some(seg) = ring.guard_segment(p) {
                p = ring.wrap(seg);
            }
            // SAFETY: p is inside a segment the consumer has left (I1).
            unsafe { (p as *mut u32).write_volatile(v) };
            p += 4;
            pos.store(p, Ordering::Release);
        }
        consumer.join().unwrap();
        assert!(ring.shared.waits.load(Ordering::Relaxed) > 0 || N as u64 <= ring.seg_entries());
    }
}
