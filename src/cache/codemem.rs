//! Code memory: one shared anonymous object, a read-execute view near the
//! guest and a read-write view for hotlift (module I1, I2).
//!
//! Shared anonymous memory (`MAP_SHARED | MAP_ANONYMOUS`), its second view
//! made by `mremap` with an old size of 0 (a new mapping of the same
//! pages), rather than a memfd: the kernel names it `/dev/zero (deleted)`,
//! which `perf` takes for anonymous memory and so symbolizes from
//! `/tmp/perf-PID.map` (`--perf-map`); a memfd's `/memfd:…` it took for a
//! file and showed as `[unknown]`. After a fork, parent and child copy a
//! chunk of it when they first write there (sharing.rs, cache I8).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use thiserror::Error;

use super::sharing::{Sharing, CHUNK};
use crate::contract::BLOCK_PREFIX;
use crate::types::HostAddr;

#[derive(Debug, Error)]
pub enum CacheError {
    #[error("cannot create code memory: {0}")]
    Create(std::io::Error),
    #[error(
        "no room for {size} bytes of code memory within ±2 GiB of the guest image {lo:#x}..{hi:#x}"
    )]
    NoRoomNearGuest { size: usize, lo: u64, hi: u64 },
    #[error("cannot copy code memory shared with a forked process: {0}")]
    Copy(std::io::Error),
}

/// Executable memory for translated code.
#[derive(Debug)]
pub struct CodeMem {
    rx: u64,
    rw: *mut u8,
    size: usize,
    /// Both views' whole length: `size` plus a split-off arena.
    mapped: usize,
    used: usize,
    /// Code below this offset (shared stubs) survives [`CodeMem::reset`].
    floor: usize,
    /// Both views are populated below this offset (module I7).
    populated: usize,
    /// What a forked process still shares (I8).
    sharing: Arc<Sharing>,
}

// SAFETY: the RW view pointer is owned by this value; code memory is only
// written by its owner (the holder of the translation lock) or through
// cache/shared.rs's protocol, each after `Sharing::writable` (I8).
unsafe impl Send for CodeMem {}

const TWO_GIB: u64 = 1 << 31;
/// Bytes of both views populated together ahead of the cursor (module I7).
const POPULATE: usize = 256 << 10;
const MARGIN: u64 = 16 << 20;

fn reaches(lo: u64, hi: u64, rx: u64, size: u64) -> bool {
    let far = (rx + size).max(hi) - rx.min(lo);
    far < TWO_GIB - MARGIN
}

impl CodeMem {
    /// Map `size` bytes of code memory whose execute view lies within reach
    /// of guest addresses [lo, hi), preferring addresses at or above
    /// `prefer_above` (kept free for the guest's brk), and ending at or
    /// below `ceiling` (where hotlift's own stack may grow).
    pub fn new_near(
        lo: u64,
        hi: u64,
        prefer_above: u64,
        ceiling: u64,
        size: usize,
    ) -> Result<CodeMem, CacheError> {
        let size = size.next_multiple_of(4096);
        let step: u64 = 64 << 20;
        let above = prefer_above.max(hi).next_multiple_of(2 << 20);
        let below = lo.saturating_sub(size as u64) & !((2 << 20) - 1);
        let candidates = (0..24)
            .map(|k| above + k * step)
            .chain((1..24).filter_map(|k| below.checked_sub(k * step)))
            .filter(|&c| c >= 1 << 20 && c + size as u64 <= ceiling)
            .filter(|&c| reaches(lo, hi, c, size as u64));
        let mut rx = None;
        for hint in candidates {
            // SAFETY: MAP_FIXED_NOREPLACE never replaces an existing mapping.
            let p = unsafe {
                libc::mmap(
                    hint as *mut libc::c_void,
                    size,
                    libc::PROT_READ | libc::PROT_EXEC,
                    libc::MAP_SHARED | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE,
                    -1,
                    0,
                )
            };
            if p != libc::MAP_FAILED && p as u64 == hint {
                rx = Some(hint);
                break;
            }
            if p != libc::MAP_FAILED {
                // An old kernel that took the flag for a hint.
                // SAFETY: the mapping just made, elsewhere.
                unsafe { libc::munmap(p, size) };
            }
        }
        let Some(rx) = rx else {
            return Err(CacheError::NoRoomNearGuest { size, lo, hi });
        };
        let rw = match second_view(rx as *mut libc::c_void, size) {
            Ok(rw) => rw,
            Err(e) => {
                // SAFETY: the view made above, unused.
                unsafe { libc::munmap(rx as *mut libc::c_void, size) };
                return Err(CacheError::Create(e));
            }
        };
        Ok(CodeMem {
            rx,
            rw,
            size,
            mapped: size,
            used: 0,
            floor: 0,
            populated: 0,
            sharing: Arc::new(Sharing::new(rx, rw, size)),
        })
    }

    /// What the superblock arena's writers check before they write
    /// (cache/shared.rs).
    pub fn sharing(&self) -> Arc<Sharing> {
        self.sharing.clone()
    }

    /// Where a fork's sharing ends (sharing.rs S1): the chunks with
    /// committed code, or for a child that flushes every translation
    /// (`keep` false) those with the shared stubs.
    fn shared_end(&self, keep: bool) -> usize {
        let end = if keep { self.used } else { self.floor };
        end.next_multiple_of(CHUNK).min(self.mapped)
    }

    /// The split-off arena's first `arena_used` bytes, as offsets (empty
    /// unless `keep`: cache/shared.rs I4).
    fn arena_kept(&self, keep: bool, arena_used: usize) -> std::ops::Range<usize> {
        let start = self.size;
        let end = if keep {
            (start + arena_used).min(self.mapped)
        } else {
            start
        };
        start..end
    }

    /// Just before a fork, every writer excluded (dispatch/fork.rs F1):
    /// the code both processes keep becomes shared (sharing.rs S1), with
    /// the superblock arena's first `arena_used` bytes when `keep`.
    pub fn before_fork(&self, keep: bool, arena_used: usize) {
        self.sharing.share_below(self.shared_end(keep));
        let a = self.arena_kept(keep, arena_used);
        self.sharing.share_range(a.start, a.end);
    }

    /// In the new child, its only thread, before anything writes code:
    /// memory of its own above what it shares with its parent (sharing.rs
    /// S1); with `keep` false, the child flushes every translation next.
    /// The child's code starts in its own memory, past the rest of the
    /// last shared chunk: its first block does not copy that chunk (at
    /// most 64 KB of code memory left unused, once a process).
    pub fn after_fork_child(&mut self, keep: bool, arena_used: usize) -> std::io::Result<()> {
        let end = self.shared_end(keep);
        self.sharing.fresh(end, self.arena_kept(keep, arena_used))?;
        // The new memory is not populated (I7).
        self.populated = self.populated.min(end);
        if keep {
            self.used = self.used.max(end.min(self.size));
        }
        Ok(())
    }

    pub fn cursor(&self) -> HostAddr {
        HostAddr(self.rx + self.used as u64)
    }

    pub fn remaining(&self) -> usize {
        self.size - self.used
    }

    /// The execute range of this code memory (without a split-off arena).
    pub fn range(&self) -> (u64, u64) {
        (self.rx, self.rx + self.size as u64)
    }

    /// Copy `bytes` to the cursor (which they were encoded for) and advance
    /// it to the next 16-byte boundary, padding with `int3`.
    pub fn commit(&mut self, bytes: &[u8]) -> Result<HostAddr, CacheError> {
        self.commit_parts(&[bytes])
    }

    /// Where the next [`CodeMem::commit_block`] puts a block's entry: its
    /// code is encoded for this address.
    pub fn next_block(&self) -> HostAddr {
        HostAddr(self.cursor().0 + BLOCK_PREFIX as u64)
    }

    /// Commit a block reachable by indirect lookups: `prefix` (its indirect
    /// entry, contract I4), then `code`, encoded for [`CodeMem::next_block`],
    /// which this returns.
    pub fn commit_block(
        &mut self,
        prefix: &[u8; BLOCK_PREFIX],
        code: &[u8],
    ) -> Result<HostAddr, CacheError> {
        let at = self.commit_parts(&[prefix, code])?;
        Ok(HostAddr(at.0 + BLOCK_PREFIX as u64))
    }

    fn commit_parts(&mut self, parts: &[&[u8]]) -> Result<HostAddr, CacheError> {
        let at = self.cursor();
        let len: usize = parts.iter().map(|p| p.len()).sum();
        let padded = len.next_multiple_of(16);
        assert!(
            padded <= self.remaining(),
            "commit of {len} bytes past the end of code memory"
        );
        self.sharing
            .writable(at.0, padded)
            .map_err(CacheError::Copy)?;
        if self.used + padded > self.populated {
            self.populate(self.used + padded);
        }
        // SAFETY: [used, used+padded) lies inside the RW view.
        unsafe {
            let mut dst = self.rw.add(self.used);
            for p in parts {
                std::ptr::copy_nonoverlapping(p.as_ptr(), dst, p.len());
                dst = dst.add(p.len());
            }
            std::ptr::write_bytes(dst, 0xcc, padded - len);
        }
        self.used += padded;
        Ok(at)
    }

    /// Populate both views from the cursor's page to past `end` (module
    /// I7), [`POPULATE`] bytes at a time.
    #[cold]
    fn populate(&mut self, end: usize) {
        let from = (self.used & !4095).max(self.populated);
        let to = end.next_multiple_of(POPULATE).min(self.size);
        if to <= from {
            return;
        }
        let len = to - from;
        // SAFETY: [from, to) lies inside both views; populating changes no
        // contents. A kernel without MADV_POPULATE_* (before 5.14) refuses
        // and the pages fault in on first touch as before.
        unsafe {
            crate::anon::populate_write(self.rw.add(from), len);
            libc::madvise(
                (self.rx + from as u64) as *mut libc::c_void,
                len,
                libc::MADV_POPULATE_READ,
            );
        }
        self.populated = to;
    }

    /// Is the code memory at `at` still shared with a forked process
    /// (sharing.rs S1)?
    pub fn shares(&self, at: HostAddr) -> bool {
        self.sharing.shared(at.0)
    }

    /// Point the rel32 field at `field` to `target` (I2).
    pub fn patch_rel32(&self, field: HostAddr, target: HostAddr) -> Result<(), CacheError> {
        assert!(field.0.is_multiple_of(4), "unaligned patch site {field:?}");
        assert!(
            field.0 >= self.rx && field.0 + 4 <= self.rx + self.used as u64,
            "patch site {field:?} outside code"
        );
        let rel = target.0.wrapping_sub(field.0 + 4) as i64;
        assert!(
            i32::try_from(rel).is_ok(),
            "patch from {field:?} to {target:?} out of rel32 range"
        );
        self.sharing
            .writable(field.0, 4)
            .map_err(CacheError::Copy)?;
        let off = (field.0 - self.rx) as usize;
        // SAFETY: aligned, inside the RW view; an atomic store is one write.
        let slot = unsafe { &*(self.rw.add(off) as *const AtomicU32) };
        slot.store(rel as i32 as u32, Ordering::Release);
        Ok(())
    }

    /// Where the rel32 field at `field` jumps now.
    pub fn rel32_target(&self, field: HostAddr) -> HostAddr {
        assert!(
            field.0.is_multiple_of(4)
                && field.0 >= self.rx
                && field.0 + 4 <= self.rx + self.used as u64,
            "rel32 {field:?} outside code"
        );
        let off = (field.0 - self.rx) as usize;
        // SAFETY: aligned, inside the RW view (checked above).
        let rel = unsafe { &*(self.rw.add(off) as *const AtomicU32) }.load(Ordering::Acquire);
        HostAddr((field.0 + 4).wrapping_add(rel as i32 as i64 as u64))
    }

    /// Give the last `bytes` (rounded to pages) to the superblock arena
    /// (cache/shared.rs I2); this code memory ends before them.
    pub fn split_tail(&mut self, bytes: usize) -> super::shared::Arena {
        let bytes = bytes.next_multiple_of(4096).min(self.size - self.used);
        self.size -= bytes;
        super::shared::Arena {
            rx: self.rx + self.size as u64,
            // SAFETY: size <= the RW view's length.
            rw: unsafe { self.rw.add(self.size) },
            size: bytes,
            rw_delta: self.rx as i64 - self.rw as i64,
        }
    }

    /// First address above the shared stubs.
    pub fn floor_addr(&self) -> u64 {
        self.rx + self.floor as u64
    }

    /// Keep everything committed so far across resets (shared stubs).
    pub fn set_floor(&mut self) {
        self.floor = self.used;
    }

    /// Forget every block above the floor; stale bytes become `int3`.
    /// Only while no thread runs translated code (a flush). Chunks still
    /// shared with a forked process (I8) are not copied but replaced by
    /// new memory, all but the floor's; when that fails they stay as they
    /// are: no thread reaches them (cache/shared.rs I1), and the next
    /// commit there reports the error.
    pub fn reset(&mut self) {
        let above = self.floor.next_multiple_of(CHUNK).min(self.used);
        let ours = self
            .sharing
            .writable(self.floor_addr(), above - self.floor)
            .and_then(|()| self.sharing.fresh_range(above, self.used));
        if ours.is_ok() {
            // SAFETY: [floor, used) is inside the RW view.
            unsafe { std::ptr::write_bytes(self.rw.add(self.floor), 0xcc, self.used - self.floor) };
        }
        self.used = self.floor;
        // New memory above `above` is not populated (I7).
        self.populated = self.populated.min(above);
    }
}

/// A second mapping of the shared pages at `view` (`len` bytes), read and
/// write, anywhere: the pointer.
fn second_view(view: *mut libc::c_void, len: usize) -> std::io::Result<*mut u8> {
    // SAFETY: an old size of 0 on a shared mapping makes a new mapping of
    // the same pages and leaves `view` as it is.
    let p = unsafe {
        libc::mremap(
            view,
            0,
            len,
            libc::MREMAP_MAYMOVE,
            std::ptr::null_mut::<libc::c_void>(),
        )
    };
    if p == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the mapping just made: readable and writable, not executable.
    if unsafe { libc::mprotect(p, len, libc::PROT_READ | libc::PROT_WRITE) } != 0 {
        let e = std::io::Error::last_os_error();
        // SAFETY: the mapping just made.
        unsafe { libc::munmap(p, len) };
        return Err(e);
    }
    Ok(p as *mut u8)
}
