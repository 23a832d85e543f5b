//! Translations kept across runs (issue 18, design S5 carried from
//! superblocks to all blocks): each module file's blocks, as emitted, with
//! their relocations (backend/reloc.rs), in the cache directory
//! (persist.rs), keyed by the file's identity and everything that changes
//! the code emitted. A later run of any program that maps the file places
//! a kept block where the dispatcher would have translated it, relocated
//! to where the module and the code cache are now, instead of lifting and
//! emitting it again.
//!
//! K1: a kept block is used only if the guest bytes it was made from are
//!     the bytes in memory now (all of them, compared), inside executable
//!     memory, the key matched (the file's path, device, inode, size,
//!     modification and change times, build id; hotlift's own build, by
//!     persist.rs; the CPU's features, which decide what lifts; the block
//!     size limit; whether blocks push exit words), and every field
//!     relocates in range (reloc.rs I1). Anything else translates it as
//!     if nothing were kept: a kept block is the block the translator
//!     would make (reloc.rs I1 plus the same inputs).
//! K2: only plain blocks are kept: counted, reusable, no inline counter,
//!     no trap exit, not under `hotlift paths`, not once the guest made
//!     `rdtsc` trap (frontend I3), in a file-backed image (not the vDSO,
//!     not anonymous memory).
//! K3: the process a run started with writes what it translated that was
//!     not kept, with what was, at its end (one write per module, whole,
//!     persist.rs P2), when that is a module's first entry and an earlier
//!     cold run left its mark (a program run once, or a CI job starting
//!     from an empty cache each time, pays for no write), or when it adds
//!     at least 64 blocks and a sixteenth of it (a program whose path varies a
//!     little from run to run does not write ten megabytes each time); a
//!     forked child places kept blocks (its parent's entries, mapped
//!     before the fork) but records and writes nothing: fifty children
//!     rewriting libc's entry would cost more than they save. A damaged or foreign entry is a cold
//!     start for that module (persist.rs).
//! K4: reading an entry opens files: in a process with more than one
//!     guest thread that is done on a thread of hotlift's with a
//!     descriptor table of its own (host.rs), so that no other guest
//!     thread's `open` gets another number than natively.
//!
//! Format of an entry's payload: records one after another, each `u32`
//! length then the fields [`Recipe`] reads, little-endian.

use std::collections::HashMap;

use super::process::Locked;
use super::{BlockFacts, Vm, VmError};
use crate::backend::reloc::{relocate, Placement, Reloc, RelocKind};
use crate::backend::{EmitEnv, Emitted, EmittedSite, EmittedSiteKind, Prologue};
use crate::images::{ImageKind, ImageLog};
use crate::ir::{ExitClass, IrBlock};
use crate::monitor::{BlockMeta, ExitKind};
use crate::types::{BlockId, GuestAddr};

/// `persist` kind of the entries.
const KIND: &str = "translations";
/// `persist` kind of the marks a module's first cold run leaves (K3).
const SEEN: &str = "translations-seen";

/// An entry to write ([`Kept::write`]).
#[derive(Debug)]
pub struct Entry {
    key: Vec<u8>,
    payload: Vec<u8>,
    /// A module's first cold run's mark (K3: its blocks are recorded and
    /// written by the next cold run, not this one: a program run once, or
    /// a CI job that starts from an empty cache every time, pays for no
    /// recording and no write).
    mark: bool,
}

/// The translator's inputs beside the guest bytes (K1), the same for
/// every module of a process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inputs {
    pub max_block_insns: u32,
    /// Blocks push exit words (the monitor is on).
    pub ring: bool,
}

/// One module's kept and new blocks.
#[derive(Debug)]
struct Module {
    /// The image's base this run (relocations' guest base).
    base: u64,
    /// Its code range, `[lo, hi)`.
    lo: u64,
    hi: u64,
    key: Vec<u8>,
    /// The entry read (K1; None: there is none), and where each block's
    /// record starts in it; None before it is looked for.
    loaded: Option<(Option<crate::persist::Mapped>, HashMap<u32, u32>)>,
    /// Where the record after the last one found starts: a run places
    /// blocks mostly in the order the run that kept them translated them,
    /// so the next is most often there (no hashing, and the next record's
    /// memory is the next the prefetcher brings).
    cursor: usize,
    /// No entry, but an earlier cold run's mark (K3): this run records.
    marked: bool,
    /// Records of blocks translated this run.
    new: Vec<u8>,
    fresh: u32,
}

/// Every module's kept blocks (K1-K3).
#[derive(Debug, Default)]
pub struct Kept {
    /// Whether the process's options were looked at ([`Vm::kept_on`]).
    decided: bool,
    inputs: Option<Inputs>,
    /// The image log's `changes` when `modules` was made.
    seen: Option<u64>,
    modules: Vec<Module>,
    /// The module [`Kept::module_of`] found last.
    last: usize,
    /// A forked child's: nothing is recorded or written (K3).
    read_only: bool,
    /// Blocks placed from kept translations.
    pub placed: u64,
}

/// A kept block, decoded (K1).
#[derive(Debug)]
pub struct Recipe {
    /// Its module's base now (the placement's guest base).
    pub base: u64,
    pub start: u64,
    pub meta: BlockMeta,
    pub ring: bool,
    pub from: Placement,
    pub code: Vec<u8>,
    pub guest: Vec<u8>,
    pub relocs: Vec<Reloc>,
    pub sites: Vec<EmittedSite>,
    pub pc_map: Vec<(u32, GuestAddr)>,
    pub rep_ring: Vec<u32>,
}

/// The CPU's identity and features (K1): what decides whether an
/// instruction lifts or traps as unsupported.
fn cpu_signature() -> Vec<u8> {
    use std::arch::x86_64::{__cpuid, __cpuid_count};
    let mut v = Vec::with_capacity(64);
    // cpuid exists on every x86-64 CPU; leaves beyond the highest return
    // what the CPU gives for them (zeros or the highest's), the same on
    // every run on that CPU.
    let leaves = {
        [
            __cpuid(0),
            __cpuid(1),
            __cpuid_count(7, 0),
            __cpuid_count(7, 1),
            __cpuid_count(0xd, 1),
            __cpuid(0x8000_0001),
        ]
    };
    for (i, r) in leaves.iter().enumerate() {
        // Leaf 1's EBX holds the APIC id of the CPU it ran on.
        let ebx = if i == 1 { r.ebx & 0xffff } else { r.ebx };
        for x in [r.eax, ebx, r.ecx, r.edx] {
            v.extend_from_slice(&x.to_le_bytes());
        }
    }
    v
}

/// The key of image `r`'s entry (K1), if it is a file that can have one.
fn key_of(r: &crate::images::ImageRecord, inputs: &Inputs) -> Option<Vec<u8>> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::MetadataExt;
    if r.kind == ImageKind::Vdso {
        return None;
    }
    let m = std::fs::metadata(&r.path).ok()?;
    // The program and its interpreter, mapped by hotlift, have no file
    // identity recorded; the guest's own mappings have, and a file that
    // is not the one mapped any more has no entry (K1 compares the bytes
    // too).
    if r.file.is_some_and(|f| f != (m.dev(), m.ino())) {
        return None;
    }
    let mut k = Vec::with_capacity(256);
    crate::persist::file_identity(&m, &mut k);
    for v in [u64::from(inputs.max_block_insns), u64::from(inputs.ring)] {
        k.extend_from_slice(&v.to_le_bytes());
    }
    k.extend_from_slice(&cpu_signature());
    let id = r.build_id.as_deref().unwrap_or_default();
    k.extend_from_slice(&(id.len() as u32).to_le_bytes());
    k.extend_from_slice(id);
    k.extend_from_slice(r.path.as_os_str().as_bytes());
    Some(k)
}

/// Little-endian reads over a record, `None` past its end.
struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (a, b) = (self.0.get(..n)?, self.0.get(n..)?);
        self.0 = b;
        Some(a)
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    /// A count of items of at least `size` bytes each that fit.
    fn count(&mut self, size: usize) -> Option<usize> {
        let n = self.u32()? as usize;
        (n.checked_mul(size)? <= self.0.len()).then_some(n)
    }
}

fn exit_kind(v: u8) -> Option<ExitKind> {
    Some(match v {
        0 => ExitKind::Jump,
        1 => ExitKind::Branch,
        2 => ExitKind::Call,
        3 => ExitKind::IndirectJump,
        4 => ExitKind::IndirectCall,
        5 => ExitKind::Return,
        6 => ExitKind::Syscall,
        8 => ExitKind::Fallthrough,
        _ => return None,
    })
}

fn reloc_kind(v: u8) -> Option<RelocKind> {
    Some(match v {
        0 => RelocKind::HostRel,
        1 => RelocKind::GuestRel,
        2 => RelocKind::GuestAbs64,
        3 => RelocKind::GuestAbs32,
        4 => RelocKind::BlockWord,
        5 => RelocKind::SiteId,
        _ => return None,
    })
}

fn reloc_code(k: RelocKind) -> u8 {
    match k {
        RelocKind::HostRel => 0,
        RelocKind::GuestRel => 1,
        RelocKind::GuestAbs64 => 2,
        RelocKind::GuestAbs32 => 3,
        RelocKind::BlockWord => 4,
        RelocKind::SiteId => 5,
    }
}

/// What [`Kept::record`] keeps of a block just emitted (`at.guest` is
/// filled in with its module's base).
#[derive(Debug, Clone, Copy)]
pub struct Made<'a> {
    pub meta: BlockMeta,
    pub ring: bool,
    pub at: Placement,
    pub em: &'a crate::backend::Emitted,
    pub guest: &'a [u8],
}

/// Append `m`'s record (module docs) to `out`; false (nothing appended)
/// for a block K2 leaves out.
fn encode(out: &mut Vec<u8>, base: u64, m: &Made<'_>) -> bool {
    let em = m.em;
    if m.meta.exit == ExitKind::Trap || !em.relocatable || m.meta.guest < base {
        return false;
    }
    let Ok(offset) = u32::try_from(m.meta.guest - base) else {
        return false;
    };
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    let u32s = |out: &mut Vec<u8>, v: &[u32]| {
        for x in v {
            out.extend_from_slice(&x.to_le_bytes());
        }
    };
    u32s(out, &[offset, m.meta.guest_len, m.meta.insns]);
    out.extend_from_slice(&[m.meta.exit as u8, u8::from(m.ring)]);
    for v in [
        m.meta.target,
        m.meta.next,
        m.at.host,
        m.at.guest,
        m.at.stubs,
    ] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    u32s(out, &[m.at.block, m.at.first_site, em.code.len() as u32]);
    out.extend_from_slice(&em.code);
    out.extend_from_slice(m.guest);
    u32s(out, &[em.relocs.len() as u32]);
    for r in &em.relocs {
        u32s(out, &[r.at]);
        out.push(reloc_code(r.kind));
    }
    u32s(out, &[em.sites.len() as u32]);
    for s in &em.sites {
        let (kind, field) = match s.kind {
            EmittedSiteKind::Direct { field } => (0u8, field as u32),
            EmittedSiteKind::Syscall => (1, 0),
            EmittedSiteKind::Trap(_) => {
                out.truncate(at);
                return false;
            }
        };
        out.push(kind);
        u32s(out, &[field]);
        out.extend_from_slice(&s.target.0.to_le_bytes());
    }
    u32s(out, &[em.pc_map.len() as u32]);
    for &(h, g) in &em.pc_map {
        u32s(out, &[h, g.0.wrapping_sub(m.meta.guest) as u32]);
    }
    u32s(out, &[em.rep_ring.len() as u32]);
    u32s(out, &em.rep_ring);
    let len = (out.len() - at - 4) as u32;
    out[at..at + 4].copy_from_slice(&len.to_le_bytes());
    true
}

/// Decode the record `rec` (its length taken off) of a module based at
/// `base` now; None if it does not hold together.
fn decode(rec: &[u8], base: u64) -> Option<Recipe> {
    let mut c = Cursor(rec);
    let offset = c.u32()?;
    let (guest_len, insns) = (c.u32()?, c.u32()?);
    let exit = exit_kind(c.u8()?)?;
    let ring = c.u8()? != 0;
    let (target, next) = (c.u64()?, c.u64()?);
    let (host, guest_base, stubs) = (c.u64()?, c.u64()?, c.u64()?);
    let (block, first_site) = (c.u32()?, c.u32()?);
    let code_len = c.u32()? as usize;
    let code = c.take(code_len)?.to_vec();
    let guest = c.take(guest_len as usize)?.to_vec();
    let dg = base.wrapping_sub(guest_base);
    let moved = |v: u64| if v == 0 { 0 } else { v.wrapping_add(dg) };
    let start = base + u64::from(offset);
    let mut relocs = Vec::with_capacity(c.count(5)?);
    for _ in 0..relocs.capacity() {
        let at = c.u32()?;
        relocs.push(Reloc {
            at,
            kind: reloc_kind(c.u8()?)?,
        });
    }
    let n = c.count(13)?;
    let mut sites = Vec::with_capacity(n);
    for _ in 0..n {
        let kind = match (c.u8()?, c.u32()?) {
            (0, field) => EmittedSiteKind::Direct {
                field: field as usize,
            },
            (1, _) => EmittedSiteKind::Syscall,
            _ => return None,
        };
        sites.push(EmittedSite {
            kind,
            target: GuestAddr(moved(c.u64()?)),
        });
    }
    let n = c.count(8)?;
    let mut pc_map = Vec::with_capacity(n);
    for _ in 0..n {
        let (h, g) = (c.u32()?, c.u32()?);
        pc_map.push((h, GuestAddr(start + u64::from(g))));
    }
    let n = c.count(4)?;
    let mut rep_ring = Vec::with_capacity(n);
    for _ in 0..n {
        rep_ring.push(c.u32()?);
    }
    if !c.0.is_empty() {
        return None;
    }
    Some(Recipe {
        base,
        start,
        meta: BlockMeta {
            guest: start,
            target: moved(target),
            next: moved(next),
            guest_len,
            insns,
            exit,
        },
        ring,
        from: Placement {
            host,
            guest: guest_base,
            block,
            first_site,
            stubs,
        },
        code,
        guest,
        relocs,
        sites,
        pc_map,
        rep_ring,
    })
}

/// Where each record of `payload` starts, by block offset; None if the
/// records do not hold together.
fn index(payload: &[u8]) -> Option<HashMap<u32, u32>> {
    let mut at = 0usize;
    let mut ix = HashMap::new();
    while at < payload.len() {
        let len = u32::from_le_bytes(payload.get(at..at + 4)?.try_into().ok()?) as usize;
        let offset = u32::from_le_bytes(payload.get(at + 4..at + 8)?.try_into().ok()?);
        payload.get(at + 4..at + 4 + len)?;
        ix.insert(offset, at as u32);
        at += 4 + len;
    }
    Some(ix)
}

/// The record starting at `at` of `payload` (its length taken off).
fn record_at(payload: &[u8], at: usize) -> Option<&[u8]> {
    let len = u32::from_le_bytes(payload.get(at..at + 4)?.try_into().ok()?) as usize;
    payload.get(at + 4..at + 4 + len)
}

/// Entry `key` mapped and indexed, if the cache holds a whole one, and
/// whether a first cold run left the module's mark (K3: without an entry,
/// blocks are recorded only then).
#[allow(clippy::type_complexity)]
fn load(key: &[u8]) -> (Option<(crate::persist::Mapped, HashMap<u32, u32>)>, bool) {
    let found = crate::persist::map(KIND, key).and_then(|e| index(e.payload()).map(|ix| (e, ix)));
    let marked = found.is_none() && crate::persist::get(SEEN, key).is_some();
    (found, marked)
}

impl Kept {
    /// Kept translations on (K2: the caller checks the process's side).
    pub fn enable(&mut self, inputs: Inputs) {
        self.inputs = Some(inputs);
    }

    /// In a forked child (K3): it places what its parent's entries hold
    /// (mapped before the fork, so shared), and keeps nothing.
    pub fn forked(&mut self) {
        self.read_only = true;
        for m in &mut self.modules {
            m.new = Vec::new();
            m.fresh = 0;
        }
    }

    pub fn enabled(&self) -> bool {
        self.inputs.is_some()
    }

    /// The module holding guest address `addr` (its index). Modules are
    /// made as image records appear (records are never removed or
    /// reordered, images.rs I1: one module a record, its key read once)
    /// and stop holding code when their record ends.
    fn module_of(&mut self, images: &ImageLog, addr: u64) -> Option<usize> {
        let changes = images.changes.load(std::sync::atomic::Ordering::Acquire);
        if self.seen != Some(changes) {
            let inputs = self.inputs.clone()?;
            for (i, r) in images.records.iter().enumerate() {
                if i == self.modules.len() {
                    let key = key_of(r, &inputs);
                    self.modules.push(Module {
                        base: r.base,
                        lo: r.code.0,
                        hi: if key.is_some() { r.code.1 } else { r.code.0 },
                        key: key.unwrap_or_default(),
                        loaded: None,
                        cursor: 0,
                        marked: false,
                        new: Vec::new(),
                        fresh: 0,
                    });
                }
                let m = &mut self.modules[i];
                if r.end_block.is_some() {
                    m.hi = m.lo;
                } else if !m.key.is_empty() {
                    // A second executable mapping widens the code range
                    // (images.rs I4).
                    (m.lo, m.hi) = r.code;
                }
            }
            self.seen = Some(changes);
        }
        if let Some(m) = self.modules.get(self.last) {
            if (m.lo..m.hi).contains(&addr) {
                return Some(self.last);
            }
        }
        let i = self
            .modules
            .iter()
            .position(|m| (m.lo..m.hi).contains(&addr))?;
        self.last = i;
        Some(i)
    }

    /// The kept block at `addr`, if its module has one (K1: the caller
    /// checks the guest bytes and relocates).
    /// `alone`: the process has one guest thread (K4).
    pub fn find(&mut self, images: &ImageLog, addr: u64, alone: bool) -> Option<Recipe> {
        self.inputs.as_ref()?;
        let i = self.module_of(images, addr)?;
        let m = &mut self.modules[i];
        if m.loaded.is_none() {
            let key = m.key.clone();
            let (found, marked) = if alone {
                load(&key)
            } else {
                // K4: opened where no guest thread can see a descriptor.
                crate::own_thread::spawn_blocked("hotlift-kept", move || {
                    crate::host::private_fd_table();
                    load(&key)
                })
                .ok()
                .and_then(|t| t.join().ok())
                .unwrap_or((None, false))
            };
            m.marked = marked;
            m.loaded = Some(match found {
                Some((e, ix)) => (Some(e), ix),
                None => (None, HashMap::new()),
            });
        }
        let (entry, ix) = m.loaded.as_ref()?;
        let offset = u32::try_from(addr.checked_sub(m.base)?).ok()?;
        let payload = entry.as_ref()?.payload();
        let next = payload
            .get(m.cursor + 4..m.cursor + 8)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")));
        let at = match next {
            Some(o) if o == offset => m.cursor,
            _ => *ix.get(&offset)? as usize,
        };
        let rec = record_at(payload, at)?;
        m.cursor = at + 4 + rec.len();
        decode(rec, m.base)
    }

    /// Keep block `made` (K2) for the end's write (K3).
    pub fn record(&mut self, images: &ImageLog, made: &Made<'_>) {
        if self.inputs.is_none() || self.read_only {
            return;
        }
        let Some(i) = self.module_of(images, made.meta.guest) else {
            return;
        };
        let m = &mut self.modules[i];
        // K3: a module's first cold run only marks it.
        match &m.loaded {
            Some((Some(_), _)) => {}
            Some((None, _)) if m.marked => {}
            _ => return,
        }
        let made = Made {
            at: Placement {
                guest: m.base,
                ..made.at
            },
            ..*made
        };
        if encode(&mut m.new, m.base, &made) {
            m.fresh += 1;
        }
    }

    /// The entries to write (K3): each module with blocks made this run,
    /// its kept records merged with the new (a new record replaces a kept
    /// one of the same block).
    pub fn take_entries(&mut self) -> Vec<Entry> {
        if self.read_only {
            return Vec::new();
        }
        // One entry a file, though it was mapped more than once (a
        // library unloaded and loaded again): their records together.
        type Loaded = Option<(Option<crate::persist::Mapped>, HashMap<u32, u32>)>;
        let mut by_key: Vec<(Vec<u8>, Vec<u8>, Loaded)> = Vec::new();
        let mut marks = Vec::new();
        for m in std::mem::take(&mut self.modules) {
            // K3: a few new blocks beside many kept (a program whose path
            // varies a little from run to run) are not worth writing the
            // whole entry again for.
            if matches!(m.loaded, Some((None, _))) && !m.marked {
                // K3: the first cold run of a module leaves its mark.
                marks.push(m.key);
                continue;
            }
            let kept = m.loaded.as_ref().map_or(0, |(_, ix)| ix.len());
            if m.fresh == 0 || (m.fresh as usize) < (kept / 16).max(64) && kept > 0 {
                continue;
            }
            match by_key.iter_mut().find(|e| e.0 == m.key) {
                Some(e) => {
                    e.1.extend_from_slice(&m.new);
                    if e.2.is_none() {
                        e.2 = m.loaded;
                    }
                }
                None => by_key.push((m.key, m.new, m.loaded)),
            }
        }
        let mut out: Vec<Entry> = marks
            .into_iter()
            .map(|key| Entry {
                key,
                payload: Vec::new(),
                mark: true,
            })
            .collect();
        for (key, mut payload, loaded) in by_key {
            if let Some((Some(old), ix)) = loaded {
                let made = index(&payload).unwrap_or_default();
                for (offset, &at) in &ix {
                    if made.contains_key(offset) {
                        continue;
                    }
                    if let Some(rec) = record_at(old.payload(), at as usize) {
                        payload.extend_from_slice(&(rec.len() as u32).to_le_bytes());
                        payload.extend_from_slice(rec);
                    }
                }
            }
            out.push(Entry {
                key,
                payload,
                mark: false,
            });
        }
        self.seen = None;
        out
    }

    /// Write `entries` (K3).
    pub fn write(entries: Vec<Entry>) {
        for e in entries {
            let kind = if e.mark { SEEN } else { KIND };
            crate::persist::put(kind, &e.key, &e.payload);
        }
    }
}

/// The class of a block that exits as `e` (`Terminator::class`).
fn class_of(e: ExitKind) -> ExitClass {
    match e {
        ExitKind::Jump | ExitKind::Branch | ExitKind::Call | ExitKind::Fallthrough => {
            ExitClass::Direct
        }
        ExitKind::IndirectJump | ExitKind::IndirectCall | ExitKind::Return => ExitClass::Indirect,
        ExitKind::Syscall => ExitClass::Syscall,
        ExitKind::Trap => ExitClass::Trap,
    }
}

impl Vm {
    /// Are translations kept and placed now (K2)? Decided at the first
    /// translation from the process's options.
    pub(super) fn kept_on(&self, l: &mut Locked) -> bool {
        if !l.kept.decided {
            l.kept.decided = true;
            if crate::persist::active()
                && self.proc.paths.is_none()
                && !(self.proc.opts.count_inline || self.proc.opts.count_check)
            {
                l.kept.enable(Inputs {
                    max_block_insns: self.proc.opts.max_block_insns,
                    ring: self.prof.ring.is_some(),
                });
            }
        }
        l.kept.enabled() && !crate::frontend::tsc_traps()
    }

    /// Place the kept block for `addr`, if there is one that K1 allows,
    /// as `translate_with` would commit its translation (translation
    /// began at `began`); None to translate it.
    pub(super) fn place_kept(
        &mut self,
        l: &mut Locked,
        addr: GuestAddr,
        began: u64,
    ) -> Result<Option<BlockId>, VmError> {
        let found = {
            let alone = self.proc.threads.count() <= 1;
            let images = self.proc.prof.images();
            l.kept.find(&images, addr.0, alone)
        };
        let Some(r) = found else {
            return Ok(None);
        };
        let end = addr.0 + r.guest.len() as u64;
        if r.ring != self.prof.ring.is_some() || l.mem.exec_end(addr.0).is_none_or(|e| e < end) {
            return Ok(None);
        }
        // SAFETY: [addr, end) lies in executable guest memory, which on
        // x86-64 is readable.
        let live = unsafe { std::slice::from_raw_parts(addr.0 as *const u8, r.guest.len()) };
        if live != r.guest.as_slice() {
            return Ok(None);
        }
        // Before anything is committed: it may flush (smc.rs).
        self.protect_code(l, addr.0, end.max(addr.0 + 1));
        if r.code.len() + 64 > l.cache.mem.remaining() {
            // The translator makes room.
            return Ok(None);
        }
        let first_site = l.cache.sites.len();
        let to = Placement {
            host: l.cache.mem.next_block().0,
            guest: r.base,
            block: self.proc.view.index.len() as u32,
            first_site: first_site as u32,
            stubs: l.cache.view.shared.stubs.site,
        };
        let mut code = r.code;
        if !relocate(&mut code, &r.relocs, &r.from, &to) {
            return Ok(None);
        }
        let prologue = self.publish_meta(r.meta, true)?;
        assert!(
            matches!(
                (prologue, r.ring),
                (Prologue::Ring { id }, true) if id == to.block
            ) || matches!((prologue, r.ring), (Prologue::None, false)),
            "a kept block's prologue is the one its translation would have"
        );
        let em = Emitted {
            code,
            pc_map: r.pc_map,
            sites: r.sites,
            rep_ring: r.rep_ring,
            relocs: Vec::new(),
            relocatable: false,
        };
        let facts = BlockFacts {
            start: addr,
            end: GuestAddr(end),
            insns: r.meta.insns,
            class: class_of(r.meta.exit),
        };
        let (id, host) = self.commit_facts(l, &facts, em, true, true)?;
        self.prelink(l, first_site)?;
        l.translate_ticks += crate::clock::ticks().saturating_sub(began);
        l.kept.placed += 1;
        // Block table I3 (no path profiling: K2).
        self.proc
            .prof
            .blocks
            .set_host(id.0, host.0, l.cache.flushes);
        Ok(Some(id))
    }

    /// Keep block `b`, emitted as `em` with `env`, for the end (K3).
    pub(super) fn keep(&self, l: &mut Locked, b: &IrBlock, env: &EmitEnv, em: &Emitted) {
        let (Some(id), ring) = (
            match env.prologue {
                Prologue::Ring { id } => Some(id),
                Prologue::None => Some(self.proc.view.index.len() as u32),
                _ => None,
            },
            env.prologue.ring_id().is_some(),
        ) else {
            return;
        };
        let len = (b.end.0 - b.start.0) as usize;
        // SAFETY: the block was just lifted from these bytes of
        // executable guest memory (translate_with).
        let guest = unsafe { std::slice::from_raw_parts(b.start.0 as *const u8, len) };
        let made = Made {
            meta: super::profiling::block_meta(b),
            ring,
            at: Placement {
                host: env.host_base,
                guest: 0,
                block: id,
                first_site: env.first_site,
                stubs: env.stubs.site,
            },
            em,
            guest,
        };
        let images = self.proc.prof.images();
        l.kept.record(&images, &made);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn made_block() -> (crate::backend::Emitted, BlockMeta, Placement) {
        // mov rax, [rip+0x10]; call +0x100
        let bytes = [0x48, 0x8b, 0x05, 0x10, 0, 0, 0, 0xe8, 0, 1, 0, 0];
        let at = Placement {
            host: 0x1000_0000,
            guest: 0x40_0000,
            block: 3,
            first_site: 9,
            stubs: 0x0fff_0000,
        };
        let b = crate::frontend::lift_block(&bytes, GuestAddr(0x40_1000), 64).unwrap();
        let env = crate::backend::EmitEnv {
            host_base: at.host,
            first_site: at.first_site,
            prologue: crate::backend::Prologue::Ring { id: at.block },
            stubs: crate::contract::ExitStubs {
                site: at.stubs,
                miss: at.stubs + 0x14,
                miss_rip: at.stubs + 0x38,
            },
        };
        let em = crate::backend::emit_block(&b, &env).unwrap();
        (em, super::super::profiling::block_meta(&b), at)
    }

    #[test]
    fn a_record_decodes_to_the_block_moved_with_its_module() {
        let (em, meta, at) = made_block();
        let guest = [0x48, 0x8b, 0x05, 0x10, 0, 0, 0, 0xe8, 0, 1, 0, 0];
        let mut out = Vec::new();
        let m = Made {
            meta,
            ring: true,
            at,
            em: &em,
            guest: &guest,
        };
        assert!(encode(&mut out, 0x40_0000, &m));
        let ix = index(&out).unwrap();
        let rec = record_at(&out, ix[&0x1000] as usize).unwrap();
        // The module is at 0x50_0000 now.
        let r = decode(rec, 0x50_0000).unwrap();
        assert_eq!(r.start, 0x50_1000);
        assert_eq!(r.meta.target, meta.target + 0x10_0000);
        assert_eq!(r.meta.next, meta.next + 0x10_0000);
        assert_eq!(r.code, em.code);
        assert_eq!(r.guest, guest);
        assert_eq!(r.relocs, em.relocs);
        assert_eq!(r.from, at);
        assert_eq!(r.sites.len(), em.sites.len());
        assert_eq!(r.sites[0].target.0, em.sites[0].target.0 + 0x10_0000);
        assert_eq!(r.pc_map[0].1 .0, 0x50_1000);
        // Every shorter piece of the record is refused, not misread.
        for n in 0..rec.len() {
            assert!(decode(&rec[..n], 0x50_0000).is_none(), "cut at {n}");
        }
        assert!(index(&out[..out.len() - 1]).is_none());
    }
}
