//! The store in one `hotlift run --store URL`: read at start on a thread
//! of its own (feed.rs pre-builds what it finds), merge at exit.
//!
//! Invariants:
//! - I1: the guest never waits for the store: the reader thread does the
//!   connecting, the hashing of a program without a build id and the
//!   reading, and the merge runs after the guest has ended and after the
//!   profile is written (dispatch/profiling/end.rs), so a store failure can
//!   neither delay the guest nor lose the profile (store I3).
//! - I2: "what the run has" is version 0 (a run starts with nothing
//!   built), so it reads the traces of any program the store knows
//!   (version ≥ 1); `--store-min-runs` leaves out traces fewer runs built.
//! - I3: a run merges the superblocks it built by counting, and those it
//!   pre-built from the store only when they were hot in this run too (the
//!   head ran inside the superblock at least `--sb-threshold` times), so a
//!   trace no run needs any more stops gaining counts.
//! - I4: the reader thread blocks every signal, as the monitor does:
//!   signals sent to the process reach the guest's threads; and it opens
//!   the store in a descriptor table of its own (`host::private_fd_table`),
//!   so the guest's descriptor numbers are what they are natively.
//! - I6: after a guest `fork` the child keeps using the store (its own
//!   merge at exit, pre-building from what the parent's reader had read),
//!   unless the reader thread was still at work when the process forked:
//!   it did not come along, and locks it held inside the database client
//!   would never be released in the child, so that child leaves the store
//!   alone.
//! - I5: the reader never writes: it opens an SQLite store read-only and
//!   makes nothing that is missing (the merge at exit does). hotlift's
//!   descriptors live in the guest's descriptor table, so a guest that
//!   closes descriptors it did not open while the store is being read can
//!   make the read fail; it can never make the reader write into a file
//!   of the guest's.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::feed::{Feed, LoadResult, Prebuild};
use super::{
    code_hash, module_identity, program_key, redact, ModuleRef, Open, PathMember, ProgramKey,
    Store, StoreError, TracePath,
};
use crate::cache::BlockTable;
use crate::images::{ImageKind, ImageLog, ImageRecord};
use crate::monitor::Snapshot;
use crate::options::RunOptions;
use crate::profile::Symbols;
use crate::profile::{StoreMode, StoreReport};
use crate::superblock::record::SbRecord;
use crate::superblock::Trigger;

/// The program's key, computed once (by the reader thread, or at exit).
type KeyCell = OnceLock<Result<ProgramKey, String>>;

/// One run's use of the store.
#[derive(Debug)]
pub struct RunStore {
    url: String,
    mode: StoreMode,
    exe: PathBuf,
    build_id: Option<Vec<u8>>,
    key: Arc<KeyCell>,
    /// Present when the run reads the store.
    feed: Option<Arc<Feed>>,
    verbose: bool,
    /// The reader thread is at work (I6).
    reading: Arc<AtomicBool>,
    /// A forked child that must leave the store alone (I6).
    disabled: AtomicBool,
}

fn key_of(
    cell: &KeyCell,
    exe: &std::path::Path,
    build_id: Option<&[u8]>,
) -> Result<ProgramKey, String> {
    cell.get_or_init(|| program_key(exe, build_id).map_err(|e| e.to_string()))
        .clone()
}

impl RunStore {
    /// Start using the store `opts.store` names, if any: the reader thread
    /// when the run reads it and builds superblocks.
    pub fn start(opts: &RunOptions, images: &Arc<Mutex<ImageLog>>) -> Option<RunStore> {
        let url = opts.store.clone()?;
        let (exe, build_id) = {
            let log = images.lock().unwrap_or_else(|e| e.into_inner());
            let p = log.program()?;
            // Absolute: the guest may change directory before the exit.
            let path = std::fs::canonicalize(&p.path).unwrap_or_else(|_| p.path.clone());
            (path, p.build_id.clone())
        };
        let mut rs = RunStore {
            url,
            mode: opts.store_mode,
            exe,
            build_id,
            key: Arc::new(OnceLock::new()),
            feed: None,
            verbose: opts.verbose,
            reading: Arc::new(AtomicBool::new(false)),
            disabled: AtomicBool::new(false),
        };
        if rs.mode.reads() && opts.superblocks() {
            let feed = Arc::new(Feed::new(images.clone()));
            rs.feed = Some(feed.clone());
            rs.spawn_reader(feed, opts.store_min_runs as u64);
        }
        Some(rs)
    }

    fn spawn_reader(&self, feed: Arc<Feed>, min_runs: u64) {
        let (url, key, exe, build_id) = (
            self.url.clone(),
            self.key.clone(),
            self.exe.clone(),
            self.build_id.clone(),
        );
        let verbose = self.verbose;
        let reading = self.reading.clone();
        reading.store(true, Ordering::SeqCst);
        let read = move || {
            let key = key_of(&key, &exe, build_id.as_deref())?;
            // Read-only (I5); a store no run has written yet has nothing.
            let mut store = match Store::open(&url, Open::ReadOnly) {
                Ok(s) => s,
                Err(StoreError::Missing(_) | StoreError::Empty(_)) => return Ok(None),
                Err(e) => return Err(e.to_string()),
            };
            let loaded = store
                .load(&key.identity, 0, min_runs)
                .map_err(|e| e.to_string())?;
            Ok::<_, String>(loaded)
        };
        let started = std::time::Instant::now();
        let body = move || {
            // The store's file or socket (and `hotlift-pg`'s, a thread
            // this one starts) takes no descriptor number from the
            // guest's next `open` (I4).
            let _ = crate::host::private_fd_table();
            let t0 = std::time::Instant::now();
            let res = match read() {
                Ok(Some(l)) => LoadResult::Loaded(l),
                Ok(None) => LoadResult::Nothing,
                Err(e) => {
                    crate::host::say!("hotlift: store: cannot read: {e}");
                    LoadResult::Failed(e)
                }
            };
            if verbose {
                if let LoadResult::Loaded(l) = &res {
                    crate::host::say!(
                        "hotlift: store: version {}, {} traces read in {:.1} ms ({:.1} ms after start)",
                        l.version,
                        l.traces.len(),
                        t0.elapsed().as_secs_f64() * 1e3,
                        started.elapsed().as_secs_f64() * 1e3
                    );
                }
            }
            let _ = feed.loaded.set(res);
            reading.store(false, Ordering::SeqCst);
        };
        // I4: born with every signal blocked.
        if let Err(e) = crate::own_thread::spawn_blocked("hotlift-store", body) {
            self.reading.store(false, Ordering::SeqCst);
            crate::host::say!("hotlift: store: cannot start the reader thread: {e}");
        }
    }

    /// The monitor's pre-building, when the run reads the store.
    pub fn prebuild(&self, blocks: Arc<BlockTable>) -> Option<Prebuild> {
        if self.disabled.load(Ordering::SeqCst) {
            return None;
        }
        self.feed.as_ref().map(|f| Prebuild::new(f.clone(), blocks))
    }

    /// In the child of a guest `fork` (I6).
    pub fn forked(&self) {
        if self.reading.load(Ordering::SeqCst) {
            self.disabled.store(true, Ordering::SeqCst);
            if self.verbose {
                crate::host::say!(
                    "hotlift: store: not used by this process (forked while reading it)"
                );
            }
        }
    }

    /// The profile's `store` section.
    pub fn report(&self, superblocks: &[SbRecord]) -> StoreReport {
        let mut r = StoreReport {
            url: redact(&self.url),
            mode: self.mode,
            identity: self
                .key
                .get()
                .and_then(|k| k.as_ref().ok())
                .map(|k| k.identity.clone()),
            read: "off".into(),
            read_error: None,
            version: 0,
            traces_read: 0,
            traces_unreadable: 0,
            traces_resolved: 0,
            traces_stale: 0,
            requests: 0,
            superblocks_built: superblocks
                .iter()
                .filter(|s| matches!(s.trigger, Trigger::Stored { .. }))
                .map(|s| u64::from(s.builds))
                .sum(),
        };
        let Some(feed) = &self.feed else {
            return r;
        };
        let read = match feed.loaded.get() {
            None => "pending",
            Some(LoadResult::Nothing) => "nothing",
            Some(LoadResult::Failed(e)) => {
                r.read_error = Some(e.clone());
                "failed"
            }
            Some(LoadResult::Loaded(l)) => {
                r.version = l.version;
                r.traces_read = l.traces.len() as u64;
                r.traces_unreadable = l.unreadable;
                "loaded"
            }
        };
        r.read = read.into();
        r.traces_resolved = feed.stats.resolved.load(Ordering::Relaxed);
        r.traces_stale = feed.stats.stale.load(Ordering::Relaxed);
        r.requests = feed.stats.requests.load(Ordering::Relaxed);
        r
    }

    /// Merge this run's superblocks into the store (store I1), after the
    /// guest ended (I1); a failure is a warning.
    pub fn merge_at_exit(&self, snapshot: &Snapshot, superblocks: &[SbRecord], images: &ImageLog) {
        if !self.mode.writes() || self.disabled.load(Ordering::SeqCst) {
            return;
        }
        let traces = traces_of_run(snapshot, superblocks, images);
        if traces.is_empty() {
            return;
        }
        let merged = key_of(&self.key, &self.exe, self.build_id.as_deref()).and_then(|key| {
            let mut store = Store::open(&self.url, Open::Create).map_err(|e| e.to_string())?;
            store.merge(&key, &traces).map_err(|e| e.to_string())
        });
        match merged {
            Ok(out) if self.verbose => crate::host::say!(
                "hotlift: store: merged {} traces ({} new) into version {}",
                out.new_traces + out.known_traces,
                out.new_traces,
                out.version
            ),
            Ok(_) => {}
            Err(e) => crate::host::say!("hotlift: store: cannot merge: {e}"),
        }
    }
}

/// What a run contributes (I3): the path of every superblock it built by
/// counting, or pre-built and used (`superblocks`, the second tier's
/// records), as module-relative members.
pub fn traces_of_run(
    snapshot: &Snapshot,
    superblocks: &[SbRecord],
    images: &ImageLog,
) -> Vec<TracePath> {
    let threshold = u64::from(snapshot.block_threshold);
    let mut modules = ModuleCache::default();
    let mut out = Vec::new();
    for r in superblocks {
        if matches!(r.trigger, Trigger::Stored { .. }) {
            let runs = snapshot
                .sb_summary_of(r.ids())
                .map(|s| s.member_runs)
                .unwrap_or_default();
            let head_runs: u64 = r
                .members
                .iter()
                .zip(runs)
                .filter(|(m, _)| m.addr == r.head)
                .map(|(_, n)| n)
                .sum();
            if head_runs < threshold {
                continue;
            }
        }
        if let Some(p) = path_of(r, images, &mut modules) {
            out.push(p);
        }
    }
    out
}

/// Identities and symbols of the images paths run through, each read once.
#[derive(Default)]
struct ModuleCache {
    by_record: HashMap<usize, Option<(String, Symbols)>>,
}

impl ModuleCache {
    fn get(&mut self, i: usize, r: &ImageRecord) -> Option<&(String, Symbols)> {
        self.by_record
            .entry(i)
            .or_insert_with(|| {
                let identity = module_identity(r)?;
                let symbols = if r.kind == ImageKind::Vdso {
                    crate::guest_mem::read_bytes(r.base, (r.end - r.base) as usize)
                        .map(|b| Symbols::from_elf(&b, r.bias))
                        .unwrap_or_default()
                } else {
                    let bytes = std::fs::read(&r.path).unwrap_or_default();
                    Symbols::from_file(&bytes, r.bias, r.build_id.as_deref())
                };
                Some((identity, symbols))
            })
            .as_ref()
    }
}

/// A superblock's path: its members up to the first repeated one (the
/// unrolled copies of a loop), each in its image; None when a member is
/// outside every image or its image has no identity (JIT code).
fn path_of(r: &SbRecord, images: &ImageLog, cache: &mut ModuleCache) -> Option<TracePath> {
    let mut path = TracePath {
        modules: Vec::new(),
        members: Vec::new(),
    };
    let mut seen = std::collections::HashSet::new();
    let spine = r.spine.map_or(r.members.len(), |n| n as usize);
    for m in &r.members[..spine.min(r.members.len())] {
        if !seen.insert(m.addr) {
            break;
        }
        let (i, rec) = images
            .records
            .iter()
            .enumerate()
            .rev()
            .find(|(_, x)| x.holds(m.addr, u64::from(m.block)))?;
        let (identity, symbols) = cache.get(i, rec)?;
        let module = match path.modules.iter().position(|x| &x.identity == identity) {
            Some(k) => k,
            None => {
                path.modules.push(ModuleRef {
                    identity: identity.clone(),
                    name: rec.file_name(),
                });
                path.modules.len() - 1
            }
        };
        path.members.push(PathMember {
            module: module as u16,
            offset: m.addr - rec.base,
            size: m.size,
            insns: m.instructions,
            code: code_hash((!m.code.is_empty()).then_some(&m.code[..])?),
            symbol: symbols.name(m.addr),
        });
    }
    (!path.members.is_empty()).then_some(path)
}
