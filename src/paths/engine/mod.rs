//! Path profiling inside the engine, through the dispatcher's hook
//! (dispatch/hooks.rs `PathProfiler`, which [`PathsState`] implements):
//! finding the function, building its graph and plan when it is first
//! entered, and
//! committing the instrumented translation (paths/emit/mod.rs) as one unit
//! of pieces: the instrumented copy of every node the plan instruments,
//! plain copies of the entry and of the resume nodes (where a terminated
//! activation or an uninstrumented return goes), the entry stub at the
//! function's address and a resume stub at every resume address.
//!
//! I1: the stubs are the blocks the code cache lists for the entry and the
//!     resume addresses; the copies are unlisted and never chained to
//!     from outside the unit, so only the entry stub starts an activation
//!     and only a resume stub (checking the activation stack) continues
//!     one after a call.
//! I2: no block inside the function's extent takes part in superblocks:
//!     the builder sees a block only once its host address is published
//!     (cache/blocks.rs I4), and that is done only for stubs (so
//!     superblocks exit into them) and for blocks outside the extent.
//! I3: plain translations at node starts cover exactly their node
//!     (paths/cfg.rs I2), so the reference can map every executed block
//!     onto graph nodes; a translation inside the extent that starts at no
//!     node start makes that address a leader of the next version.
//! I4: a plain jump from inside the function to its entry (a loop back to
//!     the entry of an activation that runs plain) goes to the plain copy
//!     of the entry, not to the entry stub: it starts no activation.
//! I5: versions only grow the graph (learned indirect targets, leaders);
//!     code of older versions stays valid until a flush, and their stubs
//!     are forwarded to the newest (paths/emit/mod.rs I3). A flush drops
//!     every thread's activation frames (their host addresses die with
//!     the code) before the thread runs translated code again.
#![allow(unsafe_code)]

mod unit;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use hashbrown::HashMap;

use crate::cache::BlockMeta;
use crate::cache::ExitSite;
use crate::contract::ThreadCtx;
use crate::contract::PATH_FRAMES;
use crate::dispatch::process::Locked;
use crate::dispatch::{PathProfiler, Vm, VmError};
use crate::images::{ImageKind, ImageLog};
use crate::ir::Terminator;
use crate::monitor::{ExitKind, Snapshot, StreamHook};
use crate::paths::cfg::{FuncCfg, NodeKind, Seeds};
use crate::paths::collect::{PathsTables, Shared};
use crate::paths::emit::FRAME;
use crate::paths::{resolve, AddrSpec, FunctionSpec, PathsConfig, Plan};
use crate::types::{GuestAddr, HostAddr};

/// Most versions of the function's graph (the version is 8 bits of a
/// record's tag).
pub const MAX_VERSIONS: usize = 255;

/// The profiled function, once found.
#[derive(Clone, Debug)]
pub struct Func {
    pub name: String,
    pub entry: u64,
    pub lo: u64,
    pub hi: u64,
}

/// One version of the function's graph and its plan.
#[derive(Clone, Debug)]
pub struct Version {
    pub cfg: FuncCfg,
    pub plan: Plan,
}

/// The unit of the current code generation.
#[derive(Debug)]
struct Unit {
    gen: u64,
    plain_entry: u64,
}

#[derive(Debug, Default)]
pub(crate) struct Inner {
    pub func: Option<Func>,
    scanned: usize,
    seeds: Seeds,
    /// Paths of interest: (line, absolute block addresses).
    pub interest: Vec<(usize, Vec<u64>)>,
    pub versions: Vec<Version>,
    unit: Option<Unit>,
    /// Forwarding fields of this generation's stubs, by guest address,
    /// and the newest stub's host address (I5).
    stubs: HashMap<u64, (Vec<u64>, u64)>,
    rebuild: bool,
    /// A problem found while running (a bad path of interest).
    pub error: Option<String>,
}

/// Path profiling state of the process.
#[derive(Debug)]
pub struct PathsState {
    pub config: Arc<PathsConfig>,
    pub shared: Arc<Shared>,
    inner: Mutex<Inner>,
    /// Bumped whenever stubs change; threads bring their lookup tables up
    /// to date when they see a new value.
    epoch: AtomicU64,
    /// `Inner::rebuild`, readable without the lock: the next dispatcher
    /// lookup builds the new version (calls chained to the entry stub
    /// never come back to the dispatcher to ask).
    rebuild: AtomicBool,
    /// The newest stubs, (guest, host), for threads' lookup tables, and
    /// the code generation they belong to (lock order: `inner`, then
    /// this).
    listed: Mutex<(u64, Vec<(u64, u64)>)>,
}

impl PathsState {
    pub fn new(config: Arc<PathsConfig>, shared: Arc<Shared>) -> PathsState {
        PathsState {
            config,
            shared,
            inner: Mutex::new(Inner::default()),
            epoch: AtomicU64::new(0),
            rebuild: AtomicBool::new(false),
            listed: Mutex::new((u64::MAX, Vec::new())),
        }
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// For the report at the end: the state, unless a stopped thread holds
    /// it.
    pub(crate) fn try_lock(&self) -> Option<MutexGuard<'_, Inner>> {
        match self.inner.try_lock() {
            Ok(g) => Some(g),
            Err(std::sync::TryLockError::Poisoned(e)) => Some(e.into_inner()),
            Err(_) => None,
        }
    }

    /// Is `a` inside the function's extent (false until it is found)?
    pub fn in_extent(&self, a: u64) -> bool {
        let lo = self.shared.lo.load(Ordering::Relaxed);
        lo != 0 && (lo..self.shared.hi.load(Ordering::Relaxed)).contains(&a)
    }

    /// Look for the function in the images not looked at yet (the
    /// program and ld.so at start, each library as it is mapped).
    pub fn resolve(&self, images: &ImageLog) {
        let mut inner = self.lock();
        if inner.func.is_some() {
            return;
        }
        for r in images.records.iter().skip(inner.scanned) {
            if r.kind == ImageKind::Vdso {
                continue;
            }
            let found = match &self.config.function {
                FunctionSpec::Name(n) => std::fs::read(&r.path).ok().and_then(|b| {
                    let funcs = resolve::image_functions(&b, r.bias, r.build_id.as_deref());
                    resolve::by_name_in(&funcs, n)
                }),
                FunctionSpec::Addr(a) if (r.base..r.end).contains(a) => Some(
                    std::fs::read(&r.path)
                        .ok()
                        .and_then(|b| resolve::by_addr(&b, r.bias, *a))
                        .unwrap_or(resolve::Found {
                            name: format!("{a:#x}"),
                            start: *a,
                            end: r.end,
                        }),
                ),
                FunctionSpec::Addr(_) => None,
            };
            if let Some(f) = found {
                let func = Func {
                    name: f.name,
                    entry: f.start,
                    lo: f.start,
                    hi: f.end.max(f.start + 1),
                };
                inner.interest = self
                    .config
                    .interest
                    .iter()
                    .map(|p| {
                        let addrs = p
                            .blocks
                            .iter()
                            .map(|b| match *b {
                                AddrSpec::Abs(a) => a,
                                AddrSpec::Rel(o) => func.entry.wrapping_add(o),
                            })
                            .collect();
                        (p.line, addrs)
                    })
                    .collect();
                let leaders: Vec<u64> = inner.interest.iter().flat_map(|p| p.1.clone()).collect();
                inner.seeds.leaders.extend(leaders);
                self.shared.hi.store(func.hi, Ordering::Relaxed);
                self.shared.entry.store(func.entry, Ordering::Relaxed);
                self.shared.lo.store(func.lo, Ordering::Release);
                inner.func = Some(func);
                break;
            }
        }
        inner.scanned = images.records.len();
    }

    /// Drop a thread's activation frames (I5).
    pub fn reset_thread(ctx: &ThreadCtx) {
        let used = PATH_FRAMES.saturating_sub(ctx.path_left.get());
        ctx.path_sp.set(ctx.path_sp.get() - used * FRAME as u64);
        ctx.path_left.set(PATH_FRAMES);
    }

    /// The stubs' (guest, host) of this generation, and the epoch.
    /// Not through `inner`: a thread that flushes while it builds a unit
    /// (holding `inner`) comes here too.
    /// The stubs are those of generation `gen` only: a flush since then
    /// leaves none.
    fn listed(&self, gen: u64) -> (u64, Vec<(u64, u64)>) {
        let listed = self.listed.lock().unwrap_or_else(|e| e.into_inner());
        let list = if listed.0 == gen {
            listed.1.clone()
        } else {
            Vec::new()
        };
        (self.epoch.load(Ordering::Acquire), list)
    }

    /// Instructions of the node starting at `a` (I3); a translation at
    /// another address inside the extent makes it a leader.
    fn node_insns(&self, a: u64) -> Option<usize> {
        let mut inner = self.lock();
        let v = inner.versions.last()?;
        match v.cfg.node_at(a) {
            Some(i) => {
                let ir = &v.cfg.nodes[i as usize].ir;
                (!matches!(ir.term, Terminator::Trap { .. })).then(|| ir.guest_insns() as usize)
            }
            None => {
                if inner.versions.len() < MAX_VERSIONS && inner.seeds.leaders.insert(a) {
                    inner.rebuild = true;
                    self.rebuild.store(true, Ordering::Release);
                }
                None
            }
        }
    }
}

impl PathProfiler for PathsState {
    fn resolve(&self, images: &ImageLog) {
        PathsState::resolve(self, images)
    }

    /// Give a new thread its activation stack.
    fn init_thread(&self, ctx: &ThreadCtx) -> std::io::Result<()> {
        let base = crate::anon::map(PATH_FRAMES as usize * FRAME as usize, libc::MAP_NORESERVE)?;
        ctx.path_sp.set(base as u64);
        ctx.path_left.set(PATH_FRAMES);
        Ok(())
    }

    fn collector(&self) -> Box<dyn StreamHook> {
        Box::new(PathsTables::new(self.shared.clone()))
    }

    /// I3.
    fn max_insns(&self, addr: GuestAddr, max: usize) -> usize {
        if self.in_extent(addr.0) {
            self.node_insns(addr.0).unwrap_or(max)
        } else {
            max
        }
    }

    /// I2.
    fn allow_superblocks(&self, addr: GuestAddr) -> bool {
        !self.in_extent(addr.0)
    }

    /// At the function's entry, make sure the unit of the current
    /// generation and version exists.
    fn prepare(&self, vm: &mut Vm, l: &mut Locked, addr: GuestAddr) -> Result<(), VmError> {
        let entry = self.shared.entry.load(Ordering::Relaxed);
        if entry == 0 || (addr.0 != entry && !self.rebuild.load(Ordering::Acquire)) {
            return Ok(());
        }
        let mut inner = self.lock();
        if inner.versions.is_empty() && addr.0 != entry {
            return Ok(());
        }
        let stale = inner.unit.as_ref().is_none_or(|u| u.gen != l.cache.flushes);
        if (stale && addr.0 == entry) || inner.rebuild {
            self.build(vm, l, &mut inner)?;
        }
        Ok(())
    }

    /// I4.
    fn redirect(
        &self,
        vm: &mut Vm,
        l: &mut Locked,
        site: &ExitSite,
    ) -> Result<Option<HostAddr>, VmError> {
        if site.target.0 != self.shared.entry.load(Ordering::Relaxed) {
            return Ok(None);
        }
        if !self.in_extent(site.from.0)
            || matches!(site.from_exit, ExitKind::Call | ExitKind::IndirectCall)
        {
            return Ok(None);
        }
        self.prepare(vm, l, site.target)?;
        let inner = self.lock();
        Ok(inner.unit.as_ref().map(|u| HostAddr(u.plain_entry)))
    }

    /// An instrumented indirect jump went to `ctx.rip()`, unknown to its
    /// version's graph: learn the edge for the next version (the
    /// activation was recorded as lost or terminated; it goes on plain).
    fn miss(&self, vm: &mut Vm) {
        let target = vm.ctx.rip();
        let (version, node) = (
            (vm.ctx.exit_arg() >> 16) as usize,
            vm.ctx.exit_arg() & 0xffff,
        );
        let mut inner = self.lock();
        let jump = inner
            .versions
            .get(version)
            .and_then(|v| v.cfg.nodes.get(node as usize))
            .map(|n| n.ir.term_addr.0);
        if let Some(jump) = jump {
            if inner.versions.len() < MAX_VERSIONS && inner.seeds.indirect.insert((jump, target)) {
                inner.rebuild = true;
                self.rebuild.store(true, Ordering::Release);
            }
        }
    }

    /// After a flush or a new unit: this thread's frames and lookup table.
    fn sync(&self, vm: &mut Vm, flushed: bool) {
        if flushed {
            PathsState::reset_thread(&vm.ctx);
        }
        let (epoch, list) = self.listed(vm.proc.view.gen());
        if epoch != vm.paths_epoch {
            vm.paths_epoch = epoch;
            if !vm.proc.opts.no_chain {
                for (g, h) in list {
                    vm.ibl.insert(GuestAddr(g), HostAddr(h));
                }
            }
        }
    }

    fn report(
        &self,
        snapshot: &Snapshot,
        blocks: &[BlockMeta],
        modules: &crate::profile::Modules,
    ) -> bool {
        PathsState::report(self, snapshot, blocks, modules)
    }
}

impl PathsState {
    /// A new version if the graph grew, then the unit (module docs).
    fn build(&self, vm: &mut Vm, l: &mut Locked, inner: &mut Inner) -> Result<(), VmError> {
        let p = self;
        if inner.versions.is_empty() || inner.rebuild {
            inner.rebuild = false;
            p.rebuild.store(false, Ordering::Release);
            let v = self.version(vm, l, inner)?;
            inner.versions.push(v);
        }
        if inner
            .unit
            .as_ref()
            .is_some_and(|u| u.gen != l.cache.flushes)
        {
            inner.stubs.clear();
        }
        unit::emit(vm, l, p, inner)?;
        // This thread's lookup table now; the others' when they see the
        // new epoch (paths_sync).
        *p.listed.lock().unwrap_or_else(|e| e.into_inner()) = (
            l.cache.flushes,
            inner.stubs.iter().map(|(&g, &(_, h))| (g, h)).collect(),
        );
        vm.paths_epoch = p.epoch.fetch_add(1, Ordering::AcqRel) + 1;
        if !vm.proc.opts.no_chain {
            for (&g, &(_, h)) in &inner.stubs {
                vm.ibl.insert(GuestAddr(g), HostAddr(h));
            }
        }
        Ok(())
    }

    /// Discover the graph with what is known now and plan it.
    fn version(&self, vm: &mut Vm, l: &mut Locked, inner: &mut Inner) -> Result<Version, VmError> {
        let p = self;
        let func = inner
            .func
            .clone()
            .expect("the entry is known only once the function is");
        let max = vm.proc.opts.max_block_insns as usize;
        let mem = &l.mem;
        let read = |a: u64| -> Option<Vec<u8>> {
            let end = mem.exec_end(a)?;
            let len = (end.saturating_sub(a)).min(max as u64 * 15 + 15) as usize;
            // [a, a+len) lies in executable guest memory, which is
            // readable (guest_mem G2).
            (len > 0).then(|| crate::guest_mem::copy_mapped(a, len))
        };
        let bad = |e: String| VmError::Host(format!("paths: {}: {e}", func.name));
        let discover = |seeds: &Seeds| {
            FuncCfg::discover(GuestAddr(func.entry), func.lo, func.hi, max, seeds, &read)
                .map_err(|e| bad(e.to_string()))
        };
        let mut cfg = discover(&inner.seeds)?;
        // Edges of interest out of indirect jumps are learned edges.
        let mut more = false;
        for (_, addrs) in &inner.interest {
            for w in addrs.windows(2) {
                let (Some(u), Some(v)) = (cfg.node_at(w[0]), cfg.node_at(w[1])) else {
                    continue;
                };
                let n = &cfg.nodes[u as usize];
                if n.kind == NodeKind::IndirectJump && !cfg.graph.has_edge(u, v) {
                    more |= inner.seeds.indirect.insert((n.ir.term_addr.0, w[1]));
                }
            }
        }
        if more {
            cfg = discover(&inner.seeds)?;
        }
        let mut interest = Vec::new();
        for (line, addrs) in &inner.interest {
            interest.push(check_interest(&cfg, &func, *line, addrs).map_err(|e| {
                inner.error = Some(e.clone());
                VmError::Host(e)
            })?);
        }
        let plan = Plan::new(p.config.method, &cfg.graph, &interest);
        Ok(Version { cfg, plan })
    }
}

/// The node path of a path of interest, or why it is not one.
fn check_interest(
    cfg: &FuncCfg,
    func: &Func,
    line: usize,
    addrs: &[u64],
) -> Result<Vec<u32>, String> {
    let at = |a: u64| format!("{a:#x} ({}+{:#x})", func.name, a.wrapping_sub(func.entry));
    let bad = |msg: String| format!("paths: interest path on line {line}: {msg}");
    let Some(&first) = addrs.first() else {
        return Err(bad("no blocks".into()));
    };
    if first != func.entry {
        return Err(bad(format!(
            "starts at {}, not at the function's entry {}",
            at(first),
            at(func.entry)
        )));
    }
    let mut nodes = Vec::with_capacity(addrs.len());
    for &a in addrs {
        match cfg.node_at(a) {
            Some(i) => nodes.push(i),
            None => {
                return Err(bad(format!(
                    "{} is not the start of a block of {}",
                    at(a),
                    func.name
                )))
            }
        }
    }
    for w in nodes.windows(2) {
        if !cfg.graph.has_edge(w[0], w[1]) {
            return Err(bad(format!(
                "{} cannot be followed by {} (no edge of the function's graph)",
                at(cfg.addr(w[0]).0),
                at(cfg.addr(w[1]).0)
            )));
        }
    }
    let last = *nodes.last().expect("nonempty");
    if !cfg.graph.exits[last as usize] {
        return Err(bad(format!(
            "ends at {}, which does not return or leave the function",
            at(cfg.addr(last).0)
        )));
    }
    Ok(nodes)
}

impl PathsState {
    /// Decode, compare with the reference, and write the report (the end
    /// of the run; the monitor has finished). A function never found in
    /// any module the program loaded is also a one-line error on stderr,
    /// naming close matches among their functions; true then (the run's
    /// status is then 125: profiling/end.rs).
    pub fn report(
        &self,
        snapshot: &crate::monitor::Snapshot,
        blocks: &[BlockMeta],
        modules: &crate::profile::Modules,
    ) -> bool {
        use crate::paths::{report, Format};
        let Some(inner) = self.try_lock() else {
            crate::host::say!("hotlift paths: no report: a stopped thread holds the path state");
            return false;
        };
        if inner.versions.is_empty() && inner.error.is_some() {
            // The run stopped on that error, already reported.
            return false;
        }
        let missing = inner.func.is_none().then(|| {
            let hint = match &self.config.function {
                FunctionSpec::Name(n) => {
                    let mut names: Vec<String> = modules
                        .all()
                        .flat_map(|m| m.symbols.functions().map(|f| f.2.to_string()))
                        .collect();
                    resolve::close_matches(n, &mut names)
                }
                FunctionSpec::Addr(_) => String::new(),
            };
            format!(
                "no function `{}` in any module the program loaded{hint}",
                self.config.function
            )
        });
        let pt = snapshot.paths.as_deref().and_then(|h| {
            h.as_any()
                .downcast_ref::<crate::paths::collect::PathsTables>()
        });
        let reference = match (self.config.reference, inner.versions.last(), pt) {
            (true, Some(v), Some(t)) => {
                let meta = |w| t.meta(w, blocks);
                Some(crate::paths::reference::compute(t.traces(), meta, &v.cfg))
            }
            _ => None,
        };
        let input = report::Input {
            name: inner.func.as_ref().map(|f| f.name.as_str()),
            method: self.config.method,
            versions: inner.versions.iter().map(|v| (&v.cfg, &v.plan)).collect(),
            interest: inner.interest.iter().map(|p| p.1.clone()).collect(),
            tables: pt,
            reference: reference.as_ref(),
            modules,
            error: inner.error.clone().or_else(|| missing.clone()),
        };
        let r = report::build(&input);
        let out = match self.config.format {
            Format::Text => report::text(&r),
            Format::Json => serde_json::to_string_pretty(&r).unwrap_or_default() + "\n",
        };
        let text_on_stderr = self.config.output.is_none() && self.config.format == Format::Text;
        match &self.config.output {
            Some(path) => {
                if let Err(e) = std::fs::write(path, out) {
                    crate::host::say!("hotlift paths: cannot write {}: {e}", path.display());
                }
            }
            None => crate::host::write_stderr(out.as_bytes()),
        }
        match missing {
            // The text report was that line.
            Some(_) if text_on_stderr => true,
            Some(m) => {
                crate::host::say!("hotlift paths: {m}");
                true
            }
            None => false,
        }
    }
}
