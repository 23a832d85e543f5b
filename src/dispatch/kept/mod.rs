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
//!     persist.rs P2; one record a block, however often the run
//!     translated it again after a flush), when that is a module's first
//!     entry and an earlier cold run left its mark (a program run once, or
//!     a CI job starting from an empty cache each time, pays for no
//!     write), or when it adds at least 64 blocks and a sixteenth of it (a
//!     program whose path varies a little from run to run does not write
//!     ten megabytes each time); fewer
//!     go to the module's second, small entry (`translations-more`, K5); a
//!     forked child places kept blocks (its parent's entries, mapped
//!     before the fork) and writes only second entries, with the blocks
//!     it made, of modules its parent has a first entry of: fifty
//!     children rewriting libc's entry would cost more than they save,
//!     but each python fork child lifted the same 62 blocks of its
//!     after-fork path in every run. A damaged or foreign entry is a cold
//!     start for that module (persist.rs).
//! K5: a module's second entry holds the blocks made since its first
//!     was written, rewritten whole by each run that adds to it, until
//!     they reach K3's threshold together: then the first is written again
//!     with them and the second emptied. A run places from the first, else
//!     the second. The second is read again when it is written: the
//!     children a process forked may have written it since it was read. (A warm `/bin/true` lifted the same two blocks of
//!     ld.so's `strcmp` every run, never enough to write libc's and
//!     ld.so's entries again, and built the decoder's tables for them:
//!     0.3 ms of every process.)
//! K4: reading an entry opens files: in a process with more than one
//!     guest thread that is done on a thread of hotlift's with a
//!     descriptor table of its own (host.rs), so that no other guest
//!     thread's `open` gets another number than natively.
//! K6: a program's plan (plan.rs): the process a run started with writes
//!     which kept blocks it placed or made, module by module in that
//!     order, keyed by the program's own entry key (so by its file,
//!     hotlift's build and the inputs, as K1), at its end: when there was
//!     none, or when its monitor took in every block that ran (a profile
//!     written: the block table's `ran` bits complete) and what it used
//!     differs from the plan by at least 64 blocks and a sixteenth (the
//!     plan's blocks it never ran left out: an interpreter's plan follows
//!     its latest use, not the union of every script). A later
//!     run places a module's planned blocks together when it first needs
//!     a block there (each checked as K1: a planned block that does not
//!     check is left to be translated as needed), links the exits between
//!     them and goes on; a warm `python3 -c pass` went through the
//!     dispatcher 40,500 times, mostly to link an exit taken the first
//!     time, 11,800 with its plan. Planned blocks that do not run here
//!     are not in the profile's blocks (profile I1): they count in
//!     `translated_blocks` and `planned_blocks` only. A batch stops at the
//!     ids the id epoch allows. Forked children read no plan.
//!
//! Format of an entry's payload: records one after another, each `u32`
//! length then the fields [`Recipe`] reads, little-endian; then the
//! table of where each starts (record.rs `Index`).

mod place;
mod plan;
mod record;

use crate::backend::reloc::Placement;
use crate::images::{ImageKind, ImageLog};

use record::{decode_into, encode, index, record_at, seal, Index};
pub use record::{Made, Recipe};

/// `persist` kind of the entries.
const KIND: &str = "translations";
/// `persist` kind of the marks a module's first cold run leaves (K3).
const SEEN: &str = "translations-seen";
/// `persist` kind of the blocks made since a module's entry (K5).
const MORE: &str = "translations-more";

/// An entry mapped, and where each block's record starts in it.
type Indexed = (crate::persist::Mapped, Index);

/// An entry to write ([`Kept::write`]).
#[derive(Debug)]
pub struct Entry {
    key: Vec<u8>,
    payload: Vec<u8>,
    /// [`KIND`]; [`SEEN`], a module's first cold run's mark (K3: its
    /// blocks are recorded and written by the next cold run, not this one:
    /// a program run once, or a CI job that starts from an empty cache
    /// every time, pays for no recording and no write); or [`MORE`] (K5).
    kind: &'static str,
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
    loaded: Option<(Option<crate::persist::Mapped>, Index)>,
    /// The module's second entry (K5), read with the first.
    more: Option<Indexed>,
    /// Where the record after the last one found starts: a run places
    /// blocks mostly in the order the run that kept them translated them,
    /// so the next is most often there (no hashing, and the next record's
    /// memory is the next the prefetcher brings).
    cursor: usize,
    /// No entry, but an earlier cold run's mark (K3): this run records.
    marked: bool,
    /// Records of blocks translated this run, one a block (a block
    /// translated again after a flush is not recorded again), and the
    /// offsets they have.
    new: Vec<u8>,
    recorded: hashbrown::HashSet<u32>,
    fresh: u32,
    kind: ImageKind,
    /// Offsets of the blocks placed or recorded this run, in that order
    /// (K6; a block placed again after a flush is listed again).
    order: Vec<u32>,
    /// The program's plan for it (K6), read with its entry.
    plan: Vec<u32>,
    /// Its plan was placed (or there was none to place).
    batched: bool,
    /// Blocks placed with the plan: (offset, sequence number).
    batch: Vec<(u32, u64)>,
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
    /// A forked child's: it writes second entries only (K3, K5).
    forked: bool,
    /// Blocks placed from kept translations.
    pub placed: u64,
    /// Of those, placed with their module's plan (K6).
    pub batched: u64,
    /// The recipe placing decodes into, taken and given back
    /// (kept/place.rs).
    pub spare: Recipe,
    /// The program's plan (K6), read with the first entry; its modules'
    /// lists are handed to them as they are loaded.
    plan: Option<plan::Plan>,
    /// Whether the plan was looked for, and whether it was found.
    plan_read: bool,
    plan_found: bool,
    /// Taken with the entries, written with the profile (K6).
    ending: Option<plan::Ending>,
}

/// The CPU's identity and features (K1): what decides whether an
/// instruction lifts or traps as unsupported. Read once: `cpuid` traps to
/// the hypervisor in a VM (7 µs each on a 2-vCPU Intel Xeon model 167),
/// and these are six a module.
fn cpu_signature() -> &'static [u8] {
    static SIGNATURE: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    SIGNATURE.get_or_init(|| {
        use std::arch::x86_64::{__cpuid, __cpuid_count};
        let mut v = Vec::with_capacity(96);
        // cpuid exists on every x86-64 CPU; leaves beyond the highest
        // return what the CPU gives for them (zeros or the highest's), the
        // same on every run on that CPU.
        let leaves = [
            __cpuid(0),
            __cpuid(1),
            __cpuid_count(7, 0),
            __cpuid_count(7, 1),
            __cpuid_count(0xd, 1),
            __cpuid(0x8000_0001),
        ];
        for (i, r) in leaves.iter().enumerate() {
            // Leaf 1's EBX holds the APIC id of the CPU it ran on.
            let ebx = if i == 1 { r.ebx & 0xffff } else { r.ebx };
            for x in [r.eax, ebx, r.ecx, r.edx] {
                v.extend_from_slice(&x.to_le_bytes());
            }
        }
        v
    })
}

/// The key of image `r`'s entry (K1), if it is a file that can have one.
fn key_of(r: &crate::images::ImageRecord, inputs: &Inputs) -> Option<Vec<u8>> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::MetadataExt;
    if r.kind == ImageKind::Vdso {
        return None;
    }
    let m = std::fs::metadata(&r.path).ok()?;
    // A file that is not the one mapped any more has no entry (K1
    // compares the bytes too).
    if r.file.is_some_and(|f| f != (m.dev(), m.ino())) {
        return None;
    }
    let mut k = Vec::with_capacity(256);
    crate::persist::file_identity(&m, &mut k);
    for v in [u64::from(inputs.max_block_insns), u64::from(inputs.ring)] {
        k.extend_from_slice(&v.to_le_bytes());
    }
    k.extend_from_slice(cpu_signature());
    let id = r.build_id.as_deref().unwrap_or_default();
    k.extend_from_slice(&(id.len() as u32).to_le_bytes());
    k.extend_from_slice(id);
    k.extend_from_slice(r.path.as_os_str().as_bytes());
    Some(k)
}

/// Append to `out` each record of payload `from` (in its order) whose
/// block `made` does not hold yet, and add its block.
fn append_missing(out: &mut Vec<u8>, made: &mut hashbrown::HashSet<u32>, from: &[u8]) {
    let mut at = 0;
    while let Some(rec) = record_at(from, at) {
        at += 4 + rec.len();
        let Some(offset) = rec.get(..4) else { break };
        if made.insert(u32::from_le_bytes(offset.try_into().expect("4 bytes"))) {
            out.extend_from_slice(&(rec.len() as u32).to_le_bytes());
            out.extend_from_slice(rec);
        }
    }
}

/// The entry of `kind` for `key` mapped, with its table, if the cache
/// holds a whole one.
fn indexed(kind: &str, key: &[u8]) -> Option<Indexed> {
    crate::persist::map(kind, key).and_then(|e| Index::of(e.payload()).map(|ix| (e, ix)))
}

/// Entry `key` mapped and indexed, if the cache holds a whole one, and
/// whether a first cold run left the module's mark (K3: without an entry,
/// blocks are recorded only then).
fn load(key: &[u8]) -> (Option<Indexed>, Option<Indexed>, bool) {
    let found = indexed(KIND, key);
    let more = found.as_ref().and_then(|_| indexed(MORE, key));
    let marked = found.is_none() && crate::persist::get(SEEN, key).is_some();
    (found, more, marked)
}

impl Kept {
    /// Kept translations on (K2: the caller checks the process's side).
    pub fn enable(&mut self, inputs: Inputs) {
        self.inputs = Some(inputs);
    }

    /// In a forked child (K3): it places what its parent's entries hold
    /// (mapped before the fork, so shared), and keeps only what it makes
    /// itself, in second entries (K5).
    pub fn forked(&mut self) {
        self.forked = true;
        for m in &mut self.modules {
            // Dropped, not emptied: emptying a table writes every one of
            // its control bytes, pages the child shares copy-on-write with
            // its parent (a cold parent records every block). Dropping
            // frees nothing here (anon.rs R2: malloc's headers were 18 of
            // a python fork child's 217 page faults).
            m.new = Vec::new();
            m.recorded = Default::default();
            m.fresh = 0;
            // K6: a forked child writes no plan.
            m.order = Vec::new();
            m.batch = Vec::new();
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
                        more: None,
                        cursor: 0,
                        marked: false,
                        new: Vec::new(),
                        recorded: Default::default(),
                        fresh: 0,
                        kind: r.kind,
                        order: Vec::new(),
                        plan: Vec::new(),
                        batched: false,
                        batch: Vec::new(),
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

    /// Decode the kept block at `addr` into `into`, if its module has one
    /// (K1: the caller checks the guest bytes and relocates); false if not.
    /// `alone`: whether the process has one guest thread (K4), asked only
    /// when an entry is read.
    pub fn find(
        &mut self,
        images: &ImageLog,
        addr: u64,
        alone: impl FnOnce() -> bool,
        into: &mut Recipe,
    ) -> bool {
        self.record_of(images, addr, alone)
            .is_some_and(|(rec, base)| decode_into(rec, base, into))
    }

    /// The record of the kept block at `addr` and its module's base now.
    fn record_of(
        &mut self,
        images: &ImageLog,
        addr: u64,
        alone: impl FnOnce() -> bool,
    ) -> Option<(&[u8], u64)> {
        self.inputs.as_ref()?;
        let i = self.module_of(images, addr)?;
        if self.modules[i].loaded.is_none() {
            let key = self.modules[i].key.clone();
            // K6: the plan with the first entry read.
            let program = (!self.plan_read && !self.forked)
                .then(|| self.program_key())
                .flatten();
            self.plan_read = true;
            let read = move || {
                let plan = program.and_then(|k| crate::persist::get(plan::KIND, &k));
                (load(&key), plan.and_then(|p| plan::decode(&p)))
            };
            let ((found, more, marked), plan) = if alone() {
                read()
            } else {
                // K4: opened where no guest thread can see a descriptor.
                crate::own_thread::spawn_blocked("hotlift-kept", move || {
                    crate::host::private_fd_table();
                    read()
                })
                .ok()
                .and_then(|t| t.join().ok())
                .unwrap_or(((None, None, false), None))
            };
            if let Some(p) = plan {
                self.plan_found = true;
                self.plan = Some(p);
            }
            let m = &mut self.modules[i];
            if let Some(p) = self.plan.as_mut() {
                if let Some(k) = p.iter().position(|(key, _)| *key == m.key) {
                    m.plan = p.swap_remove(k).1;
                }
            }
            m.batched = m.plan.is_empty() || found.is_none();
            m.marked = marked;
            m.more = more;
            m.loaded = Some(match found {
                Some((e, ix)) => (Some(e), ix),
                None => (None, Index::default()),
            });
        }
        let m = &mut self.modules[i];
        let (entry, ix) = m.loaded.as_ref()?;
        let offset = u32::try_from(addr.checked_sub(m.base)?).ok()?;
        let payload = entry.as_ref()?.payload();
        let records = ix.records(payload);
        let next = records
            .get(m.cursor + 4..m.cursor + 8)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")));
        let at = match next {
            Some(o) if o == offset => Some(m.cursor),
            _ => ix.get(payload, offset),
        };
        let Some(at) = at else {
            // K5.
            let (more, ix) = m.more.as_ref()?;
            let at = ix.get(more.payload(), offset)?;
            let rec = record_at(ix.records(more.payload()), at)?;
            return (rec.get(..4)? == offset.to_le_bytes()).then_some((rec, m.base));
        };
        let rec = record_at(records, at)?;
        m.cursor = at + 4 + rec.len();
        (rec.get(..4)? == offset.to_le_bytes()).then_some((rec, m.base))
    }

    /// Keep block `made` (K2) for the end's write (K3).
    pub fn record(&mut self, images: &ImageLog, made: &Made<'_>) {
        if self.inputs.is_none() {
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
        // Translated again (after a flush, or its code's permission
        // changed): it has its record.
        let Some(offset) = made.meta.guest.checked_sub(m.base) else {
            return;
        };
        if u32::try_from(offset).is_ok_and(|o| m.recorded.contains(&o)) {
            return;
        }
        let made = Made {
            at: Placement {
                guest: m.base,
                ..made.at
            },
            ..*made
        };
        if encode(&mut m.new, m.base, &made) {
            m.recorded.insert(offset as u32);
            m.order.push(offset as u32);
            m.fresh += 1;
        }
    }

    /// The module holding `addr` and the offset of `addr` in it.
    fn at(&mut self, images: &ImageLog, addr: u64) -> Option<(&mut Module, u32)> {
        let i = self.module_of(images, addr)?;
        let m = &mut self.modules[i];
        let o = u32::try_from(addr.checked_sub(m.base)?).ok()?;
        Some((m, o))
    }

    /// The block at `addr` was placed (K6's order).
    pub fn placed_at(&mut self, images: &ImageLog, addr: u64) {
        if let Some((m, o)) = self.at(images, addr) {
            m.order.push(o);
        }
    }

    /// Block `addr` was placed with its module's plan as sequence number
    /// `seq` (K6).
    pub fn batch_placed(&mut self, images: &ImageLog, addr: u64, seq: u64) {
        if let Some((m, o)) = self.at(images, addr) {
            m.batch.push((o, seq));
        }
    }

    /// The planned blocks (K6) of the module holding `addr`, as guest
    /// addresses, if its entry was read and they were not placed yet;
    /// once.
    pub fn take_batch(&mut self, images: &ImageLog, addr: u64) -> Option<Vec<u64>> {
        let i = self.module_of(images, addr)?;
        let m = &mut self.modules[i];
        if m.batched || m.loaded.is_none() {
            return None;
        }
        m.batched = true;
        let base = m.base;
        Some(m.plan.iter().map(|&o| base + u64::from(o)).collect())
    }

    /// The entries to write (K3, K5): each module with blocks made this
    /// run, its kept records merged with the new (a new record replaces a
    /// kept one of the same block).
    pub fn take_entries(&mut self) -> Vec<Entry> {
        // One entry a file, though it was mapped more than once (a
        // library unloaded and loaded again): their records together.
        type Loaded = Option<(Option<crate::persist::Mapped>, Index)>;
        /// A module file's key, records made this run, first and second
        /// entries (K5).
        type ByKey = (Vec<u8>, Vec<u8>, Loaded, Option<Indexed>);
        let mut by_key: Vec<ByKey> = Vec::new();
        let mut out = Vec::new();
        self.ending = self.plan_ending();
        for m in std::mem::take(&mut self.modules) {
            if matches!(m.loaded, Some((None, _))) && !m.marked {
                // K3: the first cold run of a module leaves its mark
                // (its forked children leave that to it).
                if self.forked {
                    continue;
                }
                out.push(Entry {
                    key: m.key,
                    payload: Vec::new(),
                    kind: SEEN,
                });
                continue;
            }
            if m.fresh == 0 {
                continue;
            }
            match by_key.iter_mut().find(|e| e.0 == m.key) {
                Some(e) => {
                    // The same file mapped twice: its blocks once.
                    let mut made = index(&e.1).unwrap_or_default().into_keys().collect();
                    append_missing(&mut e.1, &mut made, &m.new);
                    if e.2.is_none() {
                        e.2 = m.loaded;
                    }
                    if e.3.is_none() {
                        e.3 = m.more;
                    }
                }
                None => by_key.push((m.key, m.new, m.loaded, m.more)),
            }
        }
        for (key, mut payload, loaded, more) in by_key {
            let mut made: hashbrown::HashSet<u32> =
                index(&payload).unwrap_or_default().into_keys().collect();
            let fresh = made.len();
            // K5: the second entry as it is now (this run's forked
            // children may have written it since it was read), else as
            // it was read.
            let now = indexed(MORE, &key);
            if let Some((e, ix)) = now.as_ref().or(more.as_ref()) {
                append_missing(&mut payload, &mut made, ix.records(e.payload()));
            }
            let kept = loaded.as_ref().map_or(0, |(_, ix)| ix.len());
            if self.forked {
                // K3: a forked child writes second entries only, of
                // modules whose first its parent wrote.
                if kept > 0 {
                    out.push(Entry {
                        key,
                        payload,
                        kind: MORE,
                    });
                }
                continue;
            }
            // K3: a few new blocks beside many kept (a program whose path
            // varies a little from run to run) are not worth writing the
            // whole entry again for: they go to the second (K5).
            if kept > 0 && made.len() < (kept / 16).max(64) {
                out.push(Entry {
                    key,
                    payload,
                    kind: MORE,
                });
                continue;
            }
            if let Some((Some(old), ix)) = &loaded {
                append_missing(&mut payload, &mut made, ix.records(old.payload()));
            }
            debug_assert!(fresh > 0);
            let emptied = more.is_some() || now.is_some();
            out.push(Entry {
                key: key.clone(),
                payload,
                kind: KIND,
            });
            // Written after the first: a run that ends between the two
            // leaves records twice, never none.
            if emptied {
                out.push(Entry {
                    key,
                    payload: Vec::new(),
                    kind: MORE,
                });
            }
        }
        self.seen = None;
        out
    }

    /// The program's own entry key (K6's plan's), if it has one.
    fn program_key(&self) -> Option<Vec<u8>> {
        let m = self.modules.iter().find(|m| m.kind == ImageKind::Program)?;
        (!m.key.is_empty()).then(|| m.key.clone())
    }

    /// What the plan is written from at the end (K6), taken before the
    /// modules go to their entries.
    fn plan_ending(&mut self) -> Option<plan::Ending> {
        if self.forked {
            return None;
        }
        let program = self.program_key()?;
        Some(plan::Ending {
            program,
            found: self.plan_found,
            modules: self
                .modules
                .iter_mut()
                .map(|m| plan::Used {
                    key: m.key.clone(),
                    plan: std::mem::take(&mut m.plan),
                    order: std::mem::take(&mut m.order),
                    batch: std::mem::take(&mut m.batch),
                })
                .collect(),
            rest: self.plan.take().unwrap_or_default(),
        })
    }

    /// The program's plan to write (K6), once the monitor is done with
    /// the run (`blocks`: what ran), if it should be written.
    pub fn take_plan(&mut self, blocks: &crate::cache::BlockTable) -> Option<Entry> {
        let e = self.ending.take()?;
        let key = e.program.clone();
        plan::next(e, blocks).map(|payload| Entry {
            key,
            payload,
            kind: plan::KIND,
        })
    }

    /// Write `entries` (K3).
    pub fn write(entries: Vec<Entry>) {
        for mut e in entries {
            if (e.kind == KIND || e.kind == MORE) && seal(&mut e.payload).is_none() {
                continue;
            }
            crate::persist::put(e.kind, &e.key, &e.payload);
        }
    }
}
