//! What the dispatcher (guest thread) and the monitor share of the code
//! cache: the flush generation, the lock that orders superblock
//! publication against flushes, the superblock arena, and the registry of
//! superblock code that signal handlers search.
//!
//! I1: `gen` counts flushes. Superblock code of an older generation is
//!     unreachable, and so are the blocks a flush dropped: the dispatcher
//!     bumps `gen` (holding `publish`) when it drops translations, every
//!     one ([`CacheShared::bump_gen`]: the blocks of generations from
//!     [`CacheShared::full_gen`] on may live) or those on pages a store
//!     changed ([`CacheShared::bump_gen_dropping`]: their blocks marked
//!     dead in the monitor's block table first, every superblock head put
//!     back); the monitor patches code (a head's entry jump, an exit's
//!     rel32) only while holding `publish` and only after checking that
//!     the generation is still the one it found everything it links live
//!     in.
//! I2: the arena is the tail of code memory; only the monitor writes it,
//!     through the read-write view; the dispatcher never allocates there.
//! I3: registry entries are appended in (generation, host address) order
//!     and never change once `len` covers them, so a signal handler can
//!     binary-search them without a lock.
//! I4: `arena_used` is how much of the arena the monitor has written in
//!     this generation (its builder's cursor, set after each build). A
//!     fork shares that much of the arena with the child like committed
//!     code (cache/sharing.rs S1), so a forked child keeps its parent's
//!     superblocks, heads patched, registered (I3: the registry is the
//!     child's copy), and its monitor takes them over
//!     (superblock/build.rs I3) and builds above them.
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::sharing::Sharing;
use crate::contract::{ExitStubs, SbPc};

/// Who a superblock is, for the dispatcher's records of a pass it left
/// abnormally.
#[derive(Debug, Clone, Copy, Default)]
pub struct SbIds {
    pub id: u32,
    /// Its first unit.
    pub unit_base: u32,
    /// The partial unit of member 0 (member m's is this + m).
    pub partial_unit: u32,
    /// `TAG_LOOP | n` when its loops are counted (contract I2), else 0.
    pub loop_hdr: u32,
}

/// One superblock's code, as the registry holds it (I3).
#[derive(Debug, Clone, Copy)]
pub struct SbCode {
    pub gen: u64,
    pub host: u64,
    pub len: u32,
    pub ids: SbIds,
    map: *const SbPc,
    map_len: usize,
}

/// What a signal handler learns about a host pc inside a superblock.
#[derive(Debug, Clone, Copy)]
pub struct SbWhere {
    pub ids: SbIds,
    pub pc: SbPc,
    /// Where the map entry holding the address starts, and whether the
    /// guest's state is exact there.
    pub start: u64,
    pub start_exact: bool,
}

/// Superblock code of every generation (I3).
#[derive(Debug)]
pub struct SbRegistry {
    base: *mut SbCode,
    cap: usize,
    len: AtomicUsize,
}

/// Most superblocks one run registers (building stops beyond).
pub const REGISTRY_CAP: usize = 1 << 18;

impl SbRegistry {
    fn new() -> std::io::Result<SbRegistry> {
        let bytes = REGISTRY_CAP * std::mem::size_of::<SbCode>();
        let p = crate::anon::map(bytes, libc::MAP_NORESERVE)?;
        Ok(SbRegistry {
            base: p as *mut SbCode,
            cap: REGISTRY_CAP,
            len: AtomicUsize::new(0),
        })
    }

    fn entries(&self) -> &[SbCode] {
        let n = self.len.load(Ordering::Acquire);
        // SAFETY: entries below len are initialised and immutable (I3).
        unsafe { std::slice::from_raw_parts(self.base, n) }
    }

    /// Register code (before it can run). Only the monitor calls this.
    /// `map` is leaked: handlers may read it for the rest of the run.
    /// False when the registry is full.
    pub fn push(&self, gen: u64, host: u64, len: u32, ids: SbIds, map: Vec<SbPc>) -> bool {
        let n = self.len.load(Ordering::Relaxed);
        if n >= self.cap {
            return false;
        }
        if let Some(last) = self.entries().last() {
            assert!(
                (last.gen, last.host) < (gen, host),
                "registry out of order (I3)"
            );
        }
        let map: &'static [SbPc] = Box::leak(map.into_boxed_slice());
        let e = SbCode {
            gen,
            host,
            len,
            ids,
            map: map.as_ptr(),
            map_len: map.len(),
        };
        // SAFETY: n < cap, not yet published.
        unsafe { self.base.add(n).write(e) };
        self.len.store(n + 1, Ordering::Release);
        true
    }

    /// The superblock of generation `gen` whose code holds `pc`, and where.
    /// Async-signal-safe (reads only).
    pub fn find(&self, gen: u64, pc: u64) -> Option<SbWhere> {
        let es = self.entries();
        let i = es.partition_point(|e| (e.gen, e.host) <= (gen, pc));
        let e = es.get(i.checked_sub(1)?)?;
        if e.gen != gen || pc >= e.host + e.len as u64 {
            return None;
        }
        // SAFETY: map points at a leaked slice of map_len entries.
        let map = unsafe { std::slice::from_raw_parts(e.map, e.map_len) };
        let off = (pc - e.host) as u32;
        let j = map.partition_point(|m| m.off <= off);
        let m = *map.get(j.checked_sub(1)?)?;
        let pc = if m.off == off {
            m
        } else {
            SbPc { exact: false, ..m }
        };
        Some(SbWhere {
            ids: e.ids,
            pc,
            start: e.host + m.off as u64,
            start_exact: m.exact,
        })
    }
}

/// The arena superblocks are emitted into (I2).
#[derive(Debug, Clone, Copy)]
pub struct Arena {
    pub rx: u64,
    pub rw: *mut u8,
    pub size: usize,
    /// Offset of execute view minus read-write view, for any address of
    /// code memory (the main region too).
    pub rw_delta: i64,
}

/// State shared by the dispatcher and the monitor (module docs).
#[derive(Debug)]
pub struct CacheShared {
    /// I4.
    arena_used: AtomicUsize,
    pub gen: AtomicU64,
    /// The generation of the last full flush (I1).
    full_gen: AtomicU64,
    /// Held to publish or take back a superblock, and to flush (I1): the
    /// host addresses of the heads patched in this generation.
    pub publish: Mutex<Vec<u64>>,
    pub arena: Arena,
    pub registry: SbRegistry,
    /// Checked before every write (cache I8).
    sharing: Arc<Sharing>,
    /// The shared exit stubs every block and superblock leaves through
    /// (contract I5).
    pub stubs: ExitStubs,
}

// SAFETY: the raw pointers are into mappings that live for the whole
// process; who writes what through them is I1–I3.
unsafe impl Send for CacheShared {}
// SAFETY: as above.
unsafe impl Sync for CacheShared {}

impl CacheShared {
    pub fn new(
        arena: Arena,
        sharing: Arc<Sharing>,
        stubs: ExitStubs,
    ) -> std::io::Result<CacheShared> {
        Ok(CacheShared {
            arena_used: AtomicUsize::new(0),
            gen: AtomicU64::new(0),
            full_gen: AtomicU64::new(0),
            publish: Mutex::new(Vec::new()),
            arena,
            registry: SbRegistry::new()?,
            sharing,
            stubs,
        })
    }

    pub fn gen(&self) -> u64 {
        self.gen.load(Ordering::Acquire)
    }

    /// Bytes of the arena written in this generation (I4).
    pub fn arena_used(&self) -> usize {
        self.arena_used.load(Ordering::Acquire)
    }

    /// The monitor's builder wrote the arena up to `bytes` (I4).
    pub fn set_arena_used(&self, bytes: usize) {
        self.arena_used.store(bytes, Ordering::Release);
    }

    /// The generation of the last full flush: blocks made since may be
    /// live (I1).
    pub fn full_gen(&self) -> u64 {
        self.full_gen.load(Ordering::Acquire)
    }

    /// The dispatcher dropped every translation (I1).
    pub fn bump_gen(&self) {
        let mut heads = self.publish.lock().unwrap_or_else(|e| e.into_inner());
        heads.clear();
        let gen = self.gen.fetch_add(1, Ordering::AcqRel) + 1;
        self.full_gen.store(gen, Ordering::Release);
    }

    /// The dispatcher dropped some blocks (I1): `mark_dead` marks them in
    /// the monitor's block table, under `publish`, before the generation
    /// moves on; then every head patched in this generation gets back its
    /// first 8 bytes `nop` (the superblocks go with the generation, and
    /// the builder starts its arena again). Only while no thread runs
    /// translated code (a stop). False when a head could not be written
    /// (shared with a forked process, cache I8): the caller then drops
    /// everything, which leaves no block to jump from.
    #[must_use]
    pub fn bump_gen_dropping(&self, nop: [u8; 8], mark_dead: impl FnOnce()) -> bool {
        let mut heads = self.publish.lock().unwrap_or_else(|e| e.into_inner());
        mark_dead();
        self.gen.fetch_add(1, Ordering::AcqRel);
        let mut all = true;
        for &h in heads.iter() {
            // SAFETY: a head patched in this generation (its block was
            // live then; dead blocks' code stays where it is), read through
            // the RW view; no thread runs translated code now.
            unsafe {
                let now =
                    std::slice::from_raw_parts((h as i64 - self.arena.rw_delta) as *const u8, 8);
                // A head taken back holds its `nop` again already.
                if now != nop && self.patch8(h, nop).is_err() {
                    all = false;
                }
            }
        }
        heads.clear();
        all
    }

    /// Write `bytes` at execute-view address `at` through the read-write
    /// view; an error when that memory, shared with a forked process,
    /// could not be made this one's own (cache I8): nothing written.
    ///
    /// # Safety
    /// `at..at+len` must be code memory that no thread executes, or a
    /// patch the caller made safe (I1: under `publish`).
    pub unsafe fn write_code(&self, at: u64, bytes: &[u8]) -> std::io::Result<()> {
        self.sharing.writable(at, bytes.len())?;
        let dst = (at as i64 - self.arena.rw_delta) as *mut u8;
        // SAFETY: upheld by the caller; the RW view maps the same object.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst, bytes.len()) };
        Ok(())
    }

    /// Store 8 bytes at `at` (8-aligned) in one atomic write.
    ///
    /// # Safety
    /// As for [`CacheShared::write_code`]; the 8 bytes must be replaceable
    /// under a running thread (they start an instruction no thread is
    /// inside of).
    pub unsafe fn patch8(&self, at: u64, bytes: [u8; 8]) -> std::io::Result<()> {
        assert!(at.is_multiple_of(8), "unaligned 8-byte patch at {at:#x}");
        self.sharing.writable(at, 8)?;
        let dst = (at as i64 - self.arena.rw_delta) as *const std::sync::atomic::AtomicU64;
        // SAFETY: upheld by the caller; aligned and inside the RW view.
        unsafe { (*dst).store(u64::from_le_bytes(bytes), Ordering::Release) };
        Ok(())
    }

    /// Point the aligned rel32 field at `field` to `target`.
    ///
    /// # Safety
    /// As for [`CacheShared::patch8`].
    pub unsafe fn patch_rel32(&self, field: u64, target: u64) -> std::io::Result<()> {
        assert!(field.is_multiple_of(4), "unaligned rel32 at {field:#x}");
        let rel = i32::try_from(target.wrapping_sub(field + 4) as i64).expect("rel32 in range");
        self.sharing.writable(field, 4)?;
        let dst = (field as i64 - self.arena.rw_delta) as *const std::sync::atomic::AtomicU32;
        // SAFETY: upheld by the caller.
        unsafe { (*dst).store(rel as u32, Ordering::Release) };
        Ok(())
    }
}
