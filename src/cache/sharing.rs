//! Code memory a forked child shares with its parent, copied a chunk at a
//! time by whichever of them first writes into it (cache I8).
//!
//! Code memory is one `MAP_SHARED` object mapped twice (cache I1), so a
//! host `fork` leaves parent and child writing into the same pages: each
//! would run the links and code the other writes. Until this, the parent
//! copied all its code into a new object at every fork (3.3 MB for a
//! python start-up, 3.4 ms of the parent's time a fork, most of a python
//! fork loop). Now nothing is copied at the fork:
//!
//! S1: at a fork, the chunks ([`CHUNK`] bytes, aligned) holding committed
//!     code are marked shared in the parent (under every lock a writer of
//!     code memory holds, dispatch/fork.rs F1), so the child inherits the
//!     marks too; everything above them the child replaces with new, empty
//!     memory ([`Sharing::fresh`]), so the parent may go on writing there
//!     (new code, superblocks) as if it had never forked.
//! S2: no process writes a chunk marked shared: a writer first calls
//!     [`Sharing::writable`], which gives the process a copy of each
//!     shared chunk in the range (a new object, mapped over both views at
//!     the same addresses) and clears its mark. The shared object's pages
//!     so stay as they were at the fork for every process that still maps
//!     them, however many forks share them. The part of the superblock
//!     arena written so far is shared the same way (cache/shared.rs I4).
//! S3: a copy replaces the execute view in one `mremap` (the kernel holds
//!     the address space's lock across it, so a thread running that code
//!     faults at most and then runs the same bytes from the copy), then the
//!     write view. Two writers of one chunk (the dispatcher under the
//!     translation lock, the monitor under the publish lock) are ordered by
//!     `lock`; a mark is only ever set again at the next fork.
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// Bytes copied together (S1): small enough that a process writing a few
/// links after a fork copies little, large enough that a whole cache of
/// code is a few thousand mappings at most.
pub const CHUNK: usize = 64 << 10;

/// Which chunks of code memory this process still shares with a process
/// forked from or with it (module docs).
#[derive(Debug)]
pub struct Sharing {
    rx: u64,
    rw: *mut u8,
    len: usize,
    lock: Mutex<()>,
    marks: Box<[AtomicU64]>,
    /// Some chunk was marked at the last fork (a write's fast path).
    any: AtomicBool,
}

// SAFETY: `rw` points into a mapping that lives for the whole process;
// writes through it follow S2 and S3.
unsafe impl Send for Sharing {}
// SAFETY: as above.
unsafe impl Sync for Sharing {}

impl Sharing {
    /// The sharing state of code memory mapped at `rx` (execute view) and
    /// `rw` (write view), `len` bytes each: nothing shared.
    pub fn new(rx: u64, rw: *mut u8, len: usize) -> Sharing {
        let chunks = len.div_ceil(CHUNK);
        Sharing {
            rx,
            rw,
            len,
            lock: Mutex::new(()),
            marks: (0..chunks.div_ceil(64))
                .map(|_| AtomicU64::new(0))
                .collect(),
            any: AtomicBool::new(false),
        }
    }

    /// Before a fork (S1): mark every chunk below `end` (a multiple of
    /// [`CHUNK`]) shared. The caller excludes every writer.
    pub fn share_below(&self, end: usize) {
        for c in 0..end.div_ceil(CHUNK) {
            self.marks[c / 64].fetch_or(1 << (c % 64), Ordering::Relaxed);
        }
        if end > 0 {
            // Never cleared: chunks of an earlier fork may still be marked.
            self.any.store(true, Ordering::Release);
        }
    }

    /// Before a fork (S1): also mark the chunks holding [`from`, `to`)
    /// shared (the superblock arena's written part, cache/shared.rs I4).
    pub fn share_range(&self, from: usize, to: usize) {
        if to <= from {
            return;
        }
        self.mark(
            from / CHUNK..to.div_ceil(CHUNK).min(self.len.div_ceil(CHUNK)),
            true,
        );
        self.any.store(true, Ordering::Release);
    }

    /// In a new child (S1): replace [`from`, end) (`from` a multiple of
    /// [`CHUNK`]) with new, zeroed memory in both views, but for the
    /// chunks holding `keep` (a range [`Sharing::share_range`] marked).
    /// Only the calling thread may exist.
    pub fn fresh(&self, from: usize, keep: std::ops::Range<usize>) -> std::io::Result<()> {
        let (k0, k1) = if keep.is_empty() {
            (self.len, self.len)
        } else {
            (
                keep.start / CHUNK * CHUNK,
                keep.end.next_multiple_of(CHUNK).min(self.len),
            )
        };
        for (a, b) in [(from, k0.max(from)), (k1.max(from), self.len)] {
            if a < b {
                // SAFETY: the calling thread is the only one and runs no
                // code in [a, b) (S1).
                unsafe { self.replace(a, b)? };
            }
        }
        Ok(())
    }

    /// For a flush: the chunks from `from` (a multiple of [`CHUNK`]) to
    /// past `to` that are still shared become new, zeroed memory, not
    /// copies (their code is being dropped). No thread may run code there
    /// or write it meanwhile.
    pub fn fresh_range(&self, from: usize, to: usize) -> std::io::Result<()> {
        if !self.any.load(Ordering::Acquire) || to <= from {
            return Ok(());
        }
        let _g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        let end = to.div_ceil(CHUNK);
        let mut c = from / CHUNK;
        while c < end {
            if !self.marked(c) {
                c += 1;
                continue;
            }
            let run = (c..end).take_while(|&k| self.marked(k)).count();
            // SAFETY: as the caller promises.
            unsafe { self.replace(c * CHUNK, ((c + run) * CHUNK).min(self.len))? };
            c += run;
        }
        Ok(())
    }

    /// Replace [from, to) (`from` a multiple of [`CHUNK`]) with new zeroed
    /// memory in both views and clear its marks.
    ///
    /// # Safety
    /// No thread may run code in the range or write it meanwhile.
    unsafe fn replace(&self, from: usize, to: usize) -> std::io::Result<()> {
        let len = to - from;
        // SAFETY: a new shared mapping placed over both views of the
        // range, as the caller allows.
        // anon.rs R1: the mappings it takes may be the last ones.
        crate::anon::retry_enomem(|| unsafe {
            let p = crate::anon::map_shared(len)?;
            place(p, len, self.rx + from as u64, self.rw.add(from))
        })?;
        self.mark(from / CHUNK..to.div_ceil(CHUNK), false);
        Ok(())
    }

    /// Make the code memory at execute-view address `at` (`len` bytes)
    /// this process's own before it writes there (S2).
    pub fn writable(&self, at: u64, len: usize) -> std::io::Result<()> {
        if !self.any.load(Ordering::Acquire) || len == 0 {
            return Ok(());
        }
        let off = (at - self.rx) as usize;
        for c in off / CHUNK..=(off + len - 1) / CHUNK {
            if self.marked(c) {
                self.copy(c)?;
            }
        }
        Ok(())
    }

    /// Is the chunk holding execute-view address `at` still shared (S1)?
    /// False outside code memory.
    pub fn shared(&self, at: u64) -> bool {
        self.any.load(Ordering::Acquire)
            && at >= self.rx
            && at - self.rx < self.len as u64
            && self.marked(((at - self.rx) as usize) / CHUNK)
    }

    /// Set or clear the marks of chunks `cs`, a word of them at a time: a
    /// forked child clears the 4,096 of the code memory it replaces, which
    /// one by one (an atomic operation each) took 26 µs of every python
    /// fork.
    fn mark(&self, cs: std::ops::Range<usize>, set: bool) {
        let mut c = cs.start;
        while c < cs.end {
            let (word, bit) = (c / 64, c % 64);
            let n = (64 - bit).min(cs.end - c);
            let bits = if n == 64 {
                u64::MAX
            } else {
                ((1 << n) - 1) << bit
            };
            if set {
                self.marks[word].fetch_or(bits, Ordering::Release);
            } else {
                self.marks[word].fetch_and(!bits, Ordering::Release);
            }
            c += n;
        }
    }

    fn marked(&self, c: usize) -> bool {
        self.marks[c / 64].load(Ordering::Acquire) & (1 << (c % 64)) != 0
    }

    /// Give this process its own copy of chunk `c` (S2, S3).
    #[cold]
    fn copy(&self, c: usize) -> std::io::Result<()> {
        let _g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        if !self.marked(c) {
            return Ok(());
        }
        let off = c * CHUNK;
        let len = CHUNK.min(self.len - off);
        // SAFETY: a new mapping of `len` bytes, filled from the write view
        // of the chunk (inside code memory), which nothing writes while it
        // is marked (S2); then put in place of both views of the chunk.
        // anon.rs R1: the mappings it takes may be the last ones.
        crate::anon::retry_enomem(|| unsafe {
            let p = crate::anon::map_shared(len)?;
            crate::anon::populate_write(p, len);
            std::ptr::copy_nonoverlapping(self.rw.add(off), p, len);
            place(p, len, self.rx + off as u64, self.rw.add(off))
        })?;
        self.marks[c / 64].fetch_and(!(1 << (c % 64)), Ordering::Release);
        Ok(())
    }
}

/// Put the object mapped at `p` (`len` bytes) in place of the execute
/// view at `rx` and the write view at `rw` (S3): a second mapping of it
/// made read-execute first, so the execute view is never writable nor
/// ever without execute permission, then `p` itself moved onto `rw`.
///
/// # Safety
/// `rx` and `rw` must be the two views of `len` bytes of code memory, and
/// no thread may write `rw` meanwhile.
unsafe fn place(p: *mut u8, len: usize, rx: u64, rw: *mut u8) -> std::io::Result<()> {
    let fail = |p: *mut u8| {
        let e = std::io::Error::last_os_error();
        // SAFETY: the object's own mapping, not yet placed.
        unsafe { libc::munmap(p as *mut libc::c_void, len) };
        Err(e)
    };
    let v = p as *mut libc::c_void;
    // SAFETY: protections of the new mapping, which nothing runs yet.
    if unsafe { libc::mprotect(v, len, libc::PROT_READ | libc::PROT_EXEC) } != 0 {
        return fail(p);
    }
    // SAFETY: an old size of 0 on a shared mapping maps the same pages
    // again, with its protections, in place of the execute view.
    let x = unsafe {
        libc::mremap(
            v,
            0,
            len,
            libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED,
            rx as *mut libc::c_void,
        )
    };
    if x == libc::MAP_FAILED {
        return fail(p);
    }
    // SAFETY: back to read-write for the write view (the execute view is
    // a mapping of its own now).
    if unsafe { libc::mprotect(v, len, libc::PROT_READ | libc::PROT_WRITE) } != 0 {
        return fail(p);
    }
    // SAFETY: moves the object's mapping onto the write view it replaces.
    let w = unsafe {
        libc::mremap(
            v,
            len,
            len,
            libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED,
            rw as *mut libc::c_void,
        )
    };
    if w == libc::MAP_FAILED {
        return fail(p);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{Sharing, CHUNK};

    /// `shared` answers by chunk, only inside code memory, and only once
    /// a fork marked something (cache I8's lazy links read it).
    #[test]
    fn shared_reads_the_marks_by_chunk() {
        let rx = 0x4000_0000u64;
        // The views are never touched: only the marks are read.
        let s = Sharing::new(rx, std::ptr::null_mut(), 4 * CHUNK);
        assert!(!s.shared(rx), "nothing is shared before a fork");
        s.share_below(2 * CHUNK);
        assert!(s.shared(rx) && s.shared(rx + 2 * CHUNK as u64 - 1));
        assert!(
            !s.shared(rx + 2 * CHUNK as u64),
            "the chunk above the fork's end"
        );
        assert!(
            !s.shared(rx - 1) && !s.shared(rx + 4 * CHUNK as u64),
            "outside code memory"
        );
        s.share_range(3 * CHUNK + 10, 3 * CHUNK + 20);
        assert!(s.shared(rx + 3 * CHUNK as u64) && !s.shared(rx + 2 * CHUNK as u64));
    }

    /// `mark` sets and clears exactly the chunks of a range, a word at a
    /// time, wherever the range starts and ends (checked against one bit
    /// at a time on ranges across and inside words).
    #[test]
    fn marks_change_by_range_exactly() {
        let chunks = 300;
        let s = Sharing::new(0x4000_0000, std::ptr::null_mut(), chunks * CHUNK);
        let mut want = vec![false; chunks];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for step in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let a = (x % chunks as u64) as usize;
            let b = a + ((x >> 20) % (chunks - a + 1) as u64) as usize;
            let set = step % 3 != 0;
            s.mark(a..b, set);
            want[a..b].iter_mut().for_each(|w| *w = set);
            let got: Vec<bool> = (0..chunks).map(|c| s.marked(c)).collect();
            assert_eq!(got, want, "after {step} steps, {a}..{b} set {set}");
        }
    }
}
