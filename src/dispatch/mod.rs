//! The dispatcher: each guest thread's loop that finds or translates the
//! block for the guest's next address, runs translated code, and handles
//! what comes back (links, indirect misses, syscalls, traps).
//!
//! I1: a thread runs its dispatcher with hotlift's FS base, outside
//!     translated code; it changes the code cache only under the
//!     translation lock (process.rs I1), and may flush only with every
//!     other thread stopped (process.rs I2).
//! I2: a direct exit is linked only when chaining is on and the site still
//!     exists after translating its target (a translation may flush).
//!     A direct exit whose target is translated already when its block is
//!     is linked then ([`Vm::prelink`]), not at its first run.
//! I3: before entering translated code a thread has emptied its own lookup
//!     table of everything a flush dropped (cache I4).
//!
//! Usage: `Vm::start(opts, image bytes, plan, interpreter, argv, envp,
//! execfn, exe, ignored signals, path profiler)?.run()`; path profiling
//! reaches the engine only through [`PathProfiler`] (hooks.rs).
#![allow(unsafe_code)]

mod epoch;
pub mod exec;
mod flags;
mod fork;
mod forkpath;
mod growsdown;
mod guest_access;
mod hooks;
mod icebp;
pub mod kept;
mod mailbox;
mod module_files;
mod os;
mod own_signals;
pub mod process;
mod profiling;
pub mod protected;
mod sigstate;
mod smc;
mod start;
mod threads;
mod traps;
mod vsyscall;

use std::sync::Arc;

pub use hooks::PathProfiler;
pub use process::Process;
pub use profiling::{block_meta, Profiling, ThreadProfiling};

use thiserror::Error;

use crate::backend::{emit_block, EmitEnv, EmitError, Emitted, EmittedSiteKind};
use crate::cache::{BlockCode, CacheError, ExitSite, IblTable, SiteKind};
use crate::contract::{exit_reason, Reg};
use crate::frontend::{lift_guest, Unsupported};
use crate::ir::TrapKind;
use crate::loader::{LoadError, Prot};
use crate::profile::Ending;
use crate::runtime::{self, CtxBox};
use crate::types::{BlockId, GuestAddr, HostAddr};

pub use guest_access::Reach;
pub use mailbox::Mailbox;
pub use os::{set_os, Flow, Os};
pub use own_signals::{hotlift_owns, FAULT_SIGNALS, OWN_MASK};
use process::{DispatchCounts, Locked, ThreadEntry};
pub use sigstate::{SigInfo, SignalState, ThreadSignals};
pub use threads::ThreadEnd;

/// Why the dispatcher cannot go on; each names the guest address involved.
#[derive(Debug, Error)]
pub enum VmError {
    #[error("{0}")]
    Load(#[from] LoadError),
    #[error("{0}")]
    Cache(#[from] CacheError),
    #[error("{0}")]
    Unsupported(#[from] Unsupported),
    #[error("{0}")]
    Emit(#[from] EmitError),
    #[error("translated block at {0} does not fit in an empty code cache")]
    BlockTooLarge(GuestAddr),
    #[error("guest syscall {name} ({nr}) at {at} is not supported yet")]
    UnsupportedSyscall {
        name: &'static str,
        nr: u64,
        at: GuestAddr,
    },
    #[error("{0}")]
    Host(String),
}

/// One guest thread under translation (its process is `proc`).
#[derive(Debug)]
pub struct Vm {
    pub proc: Arc<Process>,
    pub ctx: CtxBox,
    /// This thread's indirect-branch lookup table (runtime I4).
    pub ibl: IblTable,
    /// The code generation `ibl` is good for (I3).
    pub ibl_gen: u64,
    pub prof: ThreadProfiling,
    pub entry: Arc<ThreadEntry>,
    /// What the signal handler writes: unretired instructions, the block
    /// left, faults, queued signals (mailbox.rs).
    pub mail: Box<Mailbox>,
    /// `set_tid_address`/`CLONE_CHILD_CLEARTID`: cleared and woken when the
    /// thread ends.
    pub clear_tid: u64,
    /// The guest's `sigaltstack` (ss_sp, ss_flags, ss_size).
    pub altstack: [u64; 3],
    /// The signal mask a new thread takes once it can handle signals
    /// (threads.rs I4).
    pub start_mask: Option<libc::sigset_t>,
    /// The path-profiling stub epoch this thread's lookup table matches
    /// (paths/engine/mod.rs).
    pub paths_epoch: u64,
    /// The thread asked for `PR_TSC_SIGSEGV` (syscall/control.rs C3).
    pub tsc_traps: bool,
    /// The guest's RFLAGS.TF (flags.rs I1).
    pub guest_tf: bool,
}

impl Vm {
    pub fn opts(&self) -> &crate::options::RunOptions {
        &self.proc.opts
    }

    /// Translate up to `max` instructions at `addr` (translation lock held
    /// as `l`). A block that is not `reusable` is run once (smc.rs I2): it
    /// is neither the block for `addr` nor protects its pages; it is
    /// `counted` (flags.rs I2) or not (smc.rs I2).
    fn translate_with(
        &mut self,
        l: &mut Locked,
        addr: GuestAddr,
        max: usize,
        reusable: bool,
        counted: bool,
    ) -> Result<BlockId, VmError> {
        // paths I3: a plain translation inside a path-profiled function
        // covers exactly its node.
        let max = if reusable {
            self.proc
                .paths
                .as_ref()
                .map_or(max, |p| p.max_insns(addr, max))
        } else {
            max
        };
        let began = crate::clock::ticks();
        let keep = reusable && self.kept_on(l);
        if keep {
            if let Some(id) = self.place_kept(l, addr, began)? {
                return Ok(id);
            }
        }
        let end = l.mem.exec_end(addr.0).unwrap_or(addr.0);
        let len = (end - addr.0).min(max as u64 * 15 + 15) as usize;
        // [addr, addr+len) lies in executable guest memory, which on
        // x86-64 is readable (guest_mem G2).
        let block = lift_guest(addr, len, max)?;
        let prologue = self.publish_block(&block, counted)?;
        // A fetch from memory that is not executable translates no byte
        // of it: nothing to guard (its page may hold the guest's stack,
        // where the signal frame for the fault goes).
        let no_code = block.body.is_empty()
            && matches!(
                block.term,
                crate::ir::Terminator::Trap {
                    kind: TrapKind::FetchFault
                }
            );
        // A fetch fault in memory the guest mapped executable is a page
        // past the end of its file (guest_mem G2): the file may grow, so
        // the trap runs once, kept neither as the page's translation nor
        // for later runs.
        let past_eof = no_code
            && l.mem.exec_end(addr.0).is_some()
            && !crate::guest_mem::probe::readable(addr.0);
        let (reusable, keep) = (reusable && !past_eof, keep && !past_eof);
        for attempt in 0..2 {
            if reusable && !no_code {
                // Before the code is committed, in each attempt: it may
                // flush (smc.rs), and the cache-full flush below gives
                // every page its protection back (smc.rs I1), this
                // block's too; committed on an unprotected page, the code
                // would miss the stores into it.
                self.protect_code(l, block.start.0, block.end.0.max(block.start.0 + 1));
            }
            let env = EmitEnv {
                host_base: l.cache.mem.next_block().0,
                first_site: l.cache.sites.len() as u32,
                prologue,
                stubs: l.cache.view.shared.stubs,
            };
            let mut em = emit_block(&block, &env)?;
            if em.code.len() + 64 > l.cache.mem.remaining() {
                if attempt == 1 {
                    return Err(VmError::BlockTooLarge(addr));
                }
                self.flush(l, process::FlushCause::CacheFull);
                continue;
            }
            let first_site = env.first_site as usize;
            if keep {
                self.keep(l, &block, &env, &em);
            }
            let (id, host) = self.commit_block(l, &mut em, reusable, counted)?;
            if reusable {
                self.prelink(l, first_site)?;
            }
            l.translate_ticks += crate::clock::ticks().saturating_sub(began);
            // Block table I4 (cache/blocks.rs): the monitor may link
            // superblocks to it now (not inside a path-profiled function,
            // paths/engine/mod.rs I2).
            if reusable
                && self
                    .proc
                    .paths
                    .as_ref()
                    .is_none_or(|p| p.allow_superblocks(addr))
            {
                self.proc
                    .prof
                    .blocks
                    .set_host(id.0, host.0, l.cache.flushes);
            }
            return Ok(id);
        }
        unreachable!("translate loop returns within two attempts")
    }

    /// I2: the direct exits of the block just committed, whose sites
    /// begin at `first_site`, that go to a block translated already jump
    /// straight to it: the link their first run would make through the
    /// dispatcher (`handle_site`), made now. Not with `--no-chain`, nor
    /// while a function is path-profiled (its entry is reached through
    /// `paths_redirect`), nor while a flush for a store into code is
    /// pending (smc.rs I3: a target found now may be code the guest has
    /// changed, which an exit through the dispatcher would flush first).
    fn prelink(&mut self, l: &mut Locked, first_site: usize) -> Result<(), VmError> {
        self.prelink_to(l, first_site, None)
    }

    /// [`Vm::prelink`], of the exits that go to `only` when given (and are
    /// not linked yet: fork.rs F9 links older code to new blocks).
    fn prelink_to(
        &mut self,
        l: &mut Locked,
        first_site: usize,
        only: Option<&std::collections::HashSet<u64>>,
    ) -> Result<(), VmError> {
        if self.proc.opts.no_chain
            || self.proc.paths.is_some()
            || self
                .proc
                .smc_flush_pending
                .load(std::sync::atomic::Ordering::Acquire)
        {
            return Ok(());
        }
        for k in first_site..l.cache.sites.len() {
            let site = l.cache.sites[k];
            let SiteKind::Direct { field } = site.kind else {
                continue;
            };
            if only.is_some_and(|o| !o.contains(&site.target.0)) {
                continue;
            }
            if let Some(to) = l.cache.lookup(site.target) {
                if only.is_some() && l.cache.mem.rel32_target(field) == l.cache.block(to).host {
                    continue;
                }
                l.cache.link(field, to)?;
                DispatchCounts::add(&self.proc.dispatch.prelinks);
            }
        }
        Ok(())
    }

    /// Commit `em`, the code of the block whose id was reserved last
    /// (block table I1), to the code cache, its exit sites and the block
    /// table: `listed`, the block for its guest address (else found only
    /// by host address); `counted`, its executions are counted.
    pub(crate) fn commit_block(
        &mut self,
        l: &mut Locked,
        em: &mut Emitted,
        listed: bool,
        counted: bool,
    ) -> Result<(BlockId, HostAddr), CacheError> {
        assert!(
            em.code.len() + crate::contract::BLOCK_PREFIX <= l.cache.mem.remaining(),
            "{} bytes of code past the room checked for",
            em.code.len()
        );
        let host = l
            .cache
            .mem
            .commit_block(&crate::backend::BLOCK_PREFIX_BYTES, &em.code)?;
        let id = BlockId(self.proc.view.blocks.coded());
        let meta = self.proc.view.blocks.published()[id.0 as usize];
        for s in &em.sites {
            let kind = match s.kind {
                EmittedSiteKind::Direct { field } => SiteKind::Direct {
                    field: HostAddr(host.0 + field as u64),
                },
                EmittedSiteKind::Syscall => SiteKind::Syscall,
                EmittedSiteKind::Trap(k) => SiteKind::Trap(k),
            };
            l.cache.sites.push(ExitSite {
                kind,
                target: s.target,
                from: GuestAddr(meta.guest),
                from_exit: meta.exit,
            });
        }
        let code = BlockCode {
            host,
            host_len: em.code.len() as u32,
            // Taken, not copied: the block keeps them (a kept block's
            // recipe makes its pc map again for the next).
            pc_map: std::mem::take(&mut em.pc_map).into_boxed_slice(),
            counted,
            rep_ring: std::mem::take(&mut em.rep_ring).into_boxed_slice(),
        };
        let got = if listed {
            l.cache.insert(code)
        } else {
            l.cache.insert_unlisted(code)
        };
        assert_eq!(got, id, "the block table's code records in id order");
        Ok((id, host))
    }

    /// The host code for guest `addr` (translated if need be), made
    /// reachable by this thread's indirect lookups.
    fn host_for(&mut self, addr: GuestAddr) -> Result<HostAddr, VmError> {
        // The thread's own lookup table first: what emitted code's
        // indirect jumps trust (I3), without the translation lock and the
        // cache's hash (after every syscall: 11 % of a getppid/write
        // loop's time, Intel Xeon model 207). Path profiling prepares
        // entries on the way (paths/engine): the locked path then.
        if self.proc.paths.is_none() {
            self.sync_ibl();
            if let Some(host) = self.ibl.get(addr) {
                return Ok(host);
            }
        }
        self.id_epoch_if_due();
        let proc = self.proc.clone();
        let mut l = proc.lock();
        self.host_for_locked(&mut l, addr)
    }

    fn host_for_locked(&mut self, l: &mut Locked, addr: GuestAddr) -> Result<HostAddr, VmError> {
        // A path-profiled function's entry is its entry stub (paths/engine).
        if let Some(p) = self.proc.paths.clone() {
            p.prepare(self, l, addr)?;
        }
        let (id, listed) = match l.cache.lookup(addr) {
            Some(id) => (id, true),
            None => {
                let max = self.proc.opts.max_block_insns as usize;
                let id = self.translate_with(l, addr, max, true, true)?;
                // Not listed: a block run once (a fetch past the end of a
                // file), which no lookup may find.
                let listed = l.cache.lookup(addr) == Some(id);
                if listed {
                    // forkpath.rs FP1: a forked child's, for its parent.
                    l.fork_paths.report(addr.0);
                }
                (id, listed)
            }
        };
        let host = l.cache.block(id).host;
        self.sync_ibl();
        if !self.proc.opts.no_chain && listed {
            self.ibl.insert(addr, host);
        }
        Ok(host)
    }

    /// I3: after a flush, this thread's lookup table starts empty.
    fn sync_ibl(&mut self) {
        let gen = self.proc.view.gen();
        let flushed = gen != self.ibl_gen;
        if flushed {
            self.ibl.clear();
            self.ibl_gen = gen;
        }
        if let Some(p) = self.proc.paths.clone() {
            p.sync(self, flushed);
        }
    }

    /// Run the guest's first thread until the process ends; never
    /// returns.
    pub fn run(mut self) -> ! {
        match self.run_loop() {
            Ok(ThreadEnd::Exited) => {
                // Other guest threads live on: end only this host thread
                // (returning from main would end the process), with the
                // raw `exit` syscall: `pthread_exit`'s forced unwinding
                // cannot cross Rust frames and aborted the process (a
                // guest's main calling `pthread_exit`, its profile lost).
                // Its Vm is left as it is: its context stays (runtime I6).
                std::mem::forget(self);
                // SAFETY: ends the calling thread only; nothing on its
                // stack is used by the others.
                unsafe { libc::syscall(libc::SYS_exit, 0) };
                unreachable!("exit returned")
            }
            Err(e) => {
                crate::host::say!("hotlift: {e}");
                self.finish(Ending::Exit {
                    code: crate::status::EXIT_HOTLIFT_FAILED,
                });
                // SAFETY: _exit has no preconditions.
                unsafe { libc::_exit(crate::status::EXIT_HOTLIFT_FAILED) }
            }
        }
    }

    fn run_loop(&mut self) -> Result<ThreadEnd, VmError> {
        self.publish();
        self.proc.prof.entering_guest();
        if let Some(mask) = self.start_mask.take() {
            // threads.rs I4: signals may come now that the handler finds
            // this Vm.
            // SAFETY: sets this thread's mask from a local.
            unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &mask, std::ptr::null_mut()) };
        }
        let mut next = self.host_for(GuestAddr(self.ctx.rip()))?;
        loop {
            if let Some(sig) = crate::runtime::pending_fatal() {
                // signal I4: a signal that ends the guest arrived while
                // hotlift was running (or the guest was in a syscall).
                self.finish(Ending::Signal { signal: sig });
                crate::status::die_with(sig)
            }
            if self
                .ctx
                .sig_queued()
                .load(std::sync::atomic::Ordering::Acquire)
                != 0
            {
                // Signals for the guest's handlers (signal/deliver.rs).
                if self.mail.entering_single() {
                    self.mail.set_entering_single(false);
                    // The store into code did not run (smc.rs): it runs
                    // again, counted, after the handler.
                    self.record_unretired(1);
                }
                self.deliver_queued()?;
                next = self.host_for(GuestAddr(self.ctx.rip()))?;
            }
            // flags.rs I2: the guest's trap flag: its next instruction
            // alone, with no lookup that could run on past it.
            let step = if self.guest_tf {
                let (host, step) = self.step_block(self.mail.entering_single())?;
                if let Some(host) = host {
                    next = host;
                }
                Some(step)
            } else {
                None
            };
            // I3 and process.rs I2: enter only code of the generation the
            // lookup table and `next` belong to.
            let gen = self.proc.view.gen();
            self.entry
                .gen
                .store(gen, std::sync::atomic::Ordering::SeqCst);
            if !self.proc.threads.enter(&self.entry) || gen != self.ibl_gen {
                self.proc.threads.leave(&self.entry);
                next = self.host_for(GuestAddr(self.ctx.rip()))?;
                continue;
            }
            if self.proc.view.gen() != gen {
                self.proc.threads.leave(&self.entry);
                next = self.host_for(GuestAddr(self.ctx.rip()))?;
                continue;
            }
            self.ctx.set_enter_target(next.0);
            // signal/deliver.rs D2: a signal queued from here on finds
            // `enter_target` set and points it at the kick stub.
            std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::SeqCst);
            if !self.mail.entering_single()
                && self
                    .ctx
                    .sig_queued()
                    .load(std::sync::atomic::Ordering::Acquire)
                    != 0
            {
                self.proc.threads.leave(&self.entry);
                continue;
            }
            // SAFETY: the context is this thread's GS base (start) and
            // `next` is the entry of a block in the cache.
            unsafe { runtime::enter(&self.ctx) };
            DispatchCounts::add(&self.proc.dispatch.entries);
            if self.ctx.exit_reason.get() != exit_reason::FATAL_SIGNAL {
                // The thread left a superblock pass or a block before its
                // end: close it before anything else reaches the ring
                // (superblock/mod.rs, contract I3; a fault's record_fault
                // does it in its own order).
                let partial = self.ctx.take_sb_partial();
                self.close_left(partial);
            }
            let unretired = self.mail.take_unretired();
            self.record_unretired(unretired);
            // Out only now: a thread stopped for the end of the process has
            // told the monitor what its last block did not run.
            self.proc.threads.leave(&self.entry);
            self.mail
                .set_entering_single(self.ctx.exit_reason.get() == exit_reason::CODE_WRITE);
            // flags.rs I2-I3: the stepped instruction retired and raised
            // no signal of its own (a trap site runs its own; a syscall
            // returns as `sysret` does, the trap after the next one).
            let trace = step.filter(|s| match self.ctx.exit_reason.get() {
                exit_reason::SITE => matches!(
                    self.proc.lock().cache.site(gen, self.ctx.exit_arg()).kind,
                    SiteKind::Direct { .. }
                ),
                exit_reason::INDIRECT_MISS | exit_reason::KICKED => self.ctx.rip() != s.at,
                _ => false,
            });
            next = match self.ctx.exit_reason.get() {
                exit_reason::SITE => match self.handle_site(gen)? {
                    Some(host) => host,
                    None => return Ok(ThreadEnd::Exited),
                },
                exit_reason::INDIRECT_MISS => {
                    DispatchCounts::add(&self.proc.dispatch.indirect_misses);
                    self.exit_flush_pending();
                    self.host_for(GuestAddr(self.ctx.rip()))?
                }
                exit_reason::CODE_WRITE => self.code_written()?,
                exit_reason::PATH_MISS => {
                    if let Some(p) = self.proc.paths.clone() {
                        p.miss(self);
                    }
                    self.host_for(GuestAddr(self.ctx.rip()))?
                }
                // Stopped for another thread (process.rs I3), or by a
                // signal: the state is exact at ctx.rip().
                exit_reason::KICKED => self.host_for(GuestAddr(self.ctx.rip()))?,
                exit_reason::FATAL_SIGNAL => {
                    let sig = self.ctx.exit_arg() as i32;
                    if let Some(loc) = self.record_fault() {
                        if let Some(host) = self.fault_to_handler(sig, loc)? {
                            next = host;
                            continue;
                        }
                    }
                    self.finish(Ending::Signal { signal: sig });
                    crate::status::die_with(sig)
                }
                r => panic!("translated code exited with unknown reason {r}"),
            };
            if let Some(step) = trace {
                self.trace_trap(step, self.ctx.rip())?;
                next = self.host_for(GuestAddr(self.ctx.rip()))?;
            }
        }
    }

    /// Continue after exit site `ctx.exit_arg()` of code of generation
    /// `gen` (a flush since then keeps the site readable, cache I6, and it
    /// is not linked); None when the thread exited.
    fn handle_site(&mut self, gen: u64) -> Result<Option<HostAddr>, VmError> {
        let proc = self.proc.clone();
        let site = proc.lock().cache.site(gen, self.ctx.exit_arg());
        self.exit_flush_pending();
        self.ctx.set_rip(site.target.0);
        match site.kind {
            SiteKind::Direct { field } => {
                DispatchCounts::add(&proc.dispatch.direct_exits);
                self.id_epoch_if_due();
                let mut l = proc.lock();
                let redirect = match self.proc.paths.clone() {
                    Some(p) => p.redirect(self, &mut l, &site)?,
                    None => None,
                };
                let host = match redirect {
                    Some(host) => host,
                    None => self.host_for_locked(&mut l, site.target)?,
                };
                // I2: a flush during translation removed the site.
                if !proc.opts.no_chain && l.cache.flushes == gen {
                    match l.cache.lookup(site.target) {
                        Some(to) if l.cache.block(to).host == host => {
                            // Code shared with a forked process is linked
                            // once the exit proves hot (cache I8).
                            if !l.cache.link_due(field) {
                                return Ok(Some(host));
                            }
                            l.cache.link(field, to)?
                        }
                        // A path-profiled function's entry (paths/engine).
                        _ if redirect.is_some() => l.cache.mem.patch_rel32(field, host)?,
                        // A block run once (a fetch past the end of a
                        // file): not linked.
                        _ => return Ok(Some(host)),
                    }
                    DispatchCounts::add(&proc.dispatch.links);
                }
                Ok(Some(host))
            }
            SiteKind::Syscall => {
                DispatchCounts::add(&proc.dispatch.syscalls);
                if let Flow::ThreadExit = (os::os()?.syscall)(self)? {
                    return Ok(None);
                }
                self.host_for(GuestAddr(self.ctx.rip())).map(Some)
            }
            SiteKind::Trap(kind) => self.trap(kind, site.target).map(Some),
        }
    }

    /// A fault in translated code at guest instruction `at`: to the
    /// guest's handler if it has one (signal/deliver.rs D5), then the host
    /// address to go on at; None for the default action.
    fn fault_to_handler(
        &mut self,
        sig: i32,
        loc: crate::cache::PcLocation,
    ) -> Result<Option<HostAddr>, VmError> {
        let at = loc.guest;
        let mut info = self.mail.sig.info(sig as usize);
        let addr = u64::from_le_bytes(info[16..24].try_into().expect("8 bytes"));
        // growsdown.rs G1: a guest mapping that grows down to the fault
        // runs the instruction again, as natively.
        let grew = sig == libc::SIGSEGV && self.grow_down(addr);
        if !grew && self.proc.sig.handler(sig as usize) <= 1 {
            return Ok(None);
        }
        if !loc.exact {
            // backend/recreate.rs: undo what hotlift's glue did before the
            // fault.
            let fix = (loc.start_exact && self.mail.fault_pc() > loc.host_start)
                .then(|| {
                    let len = (self.mail.fault_pc() - loc.host_start) as usize + 15;
                    // SAFETY: translated code stays mapped and readable
                    // (cache I6); the walk stops at the fault.
                    let code =
                        unsafe { std::slice::from_raw_parts(loc.host_start as *const u8, len) };
                    crate::backend::recreate::walk(code, loc.host_start, self.mail.fault_pc())
                })
                .flatten();
            let Some(fix) = fix else {
                crate::host::say!(
                    "hotlift: SIG{} at guest {at} faulted inside hotlift's code for that instruction where the guest's registers cannot be recreated; the guest dies of it instead of running its handler (README, known limits)",
                    crate::strace::sig_name(sig)
                );
                return Ok(None);
            };
            for (r, slot) in fix.from_slot.iter().enumerate() {
                if let Some(s) = *slot {
                    self.ctx.gpr[r].set(self.ctx.scratch[s].get());
                }
            }
            self.ctx.set_reg(
                Reg::Rsp,
                self.ctx.reg(Reg::Rsp).wrapping_sub(fix.rsp_moved as u64),
            );
        }
        self.ctx.set_rip(at.0);
        if grew {
            return self.host_for(at).map(Some);
        }
        let mut regs = self.mail.fault_regs();
        if matches!(sig, libc::SIGILL | libc::SIGFPE) {
            // The kernel's si_addr is the faulting instruction's: the
            // code cache's, never the guest's to see. The page-fault
            // address the frame keeps is the last one of the thread,
            // hotlift's as likely as not.
            info[16..24].copy_from_slice(&at.0.to_le_bytes());
            regs[2] = 0;
        }
        // The address lies in none of the guest's mappings but in one of
        // hotlift's placeholders (its PROT_NONE reservations, guest_mem
        // I4): natively nothing is mapped there, SEGV_MAPERR, the page
        // fault's error code without its "present" bit.
        let code = i32::from_le_bytes(info[8..12].try_into().expect("4 bytes"));
        if sig == libc::SIGSEGV
            && code == 2 // SEGV_ACCERR
            && !self.proc.lock().mem.owns_all(addr, addr.saturating_add(1))
        {
            info[8..12].copy_from_slice(&1i32.to_le_bytes()); // SEGV_MAPERR
            regs[0] &= !1;
        }
        if !self.deliver_sync(sig, &info, regs)? {
            return Ok(None);
        }
        self.host_for(GuestAddr(self.ctx.rip())).map(Some)
    }

    /// Guest memory [start, end) changed under translated code: drop it
    /// (translation lock held as `l`).
    pub fn code_changed(&mut self, l: &mut Locked, start: u64, end: u64) {
        if l.cache.has_code_in(start, end) {
            self.flush(l, process::FlushCause::CodeChanged);
        }
    }

    /// Drop every translation (for stores into code, those on the pages
    /// written, and on `pages` for a syscall about to write there: smc.rs
    /// I4, I6), and the write protection that guarded them (I1: the other
    /// threads are stopped for it), for `cause`. A flush that cannot stop
    /// the other threads ends the process with hotlift's failure status
    /// and its profile (process.rs I4).
    pub fn flush_pages(&mut self, l: &mut Locked, cause: process::FlushCause, pages: &[u64]) {
        use process::FlushCause::{CodeWritten, SyscallIntoCode};
        let proc = self.proc.clone();
        proc.flush_causes[cause as usize].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let done = match cause {
            CodeWritten | SyscallIntoCode if proc.paths.is_none() => {
                proc.flush_written(l, &self.entry, pages)
            }
            _ => proc.flush(l, &self.entry),
        };
        if let Err(e) = done {
            crate::host::say!("hotlift: {e}: cannot drop the code cache ({cause:?})");
            let code = crate::status::EXIT_HOTLIFT_FAILED;
            self.finish(Ending::Exit { code });
            // SAFETY: _exit has no preconditions.
            unsafe { libc::_exit(code) }
        }
        self.sync_ibl();
    }

    /// [`Vm::flush_pages`] of no pages named.
    pub fn flush(&mut self, l: &mut Locked, cause: process::FlushCause) {
        self.flush_pages(l, cause, &[]);
    }
}

/// A protection from mmap/mprotect bits.
pub fn prot_from(bits: u64) -> Prot {
    Prot {
        r: bits & libc::PROT_READ as u64 != 0,
        w: bits & libc::PROT_WRITE as u64 != 0,
        x: bits & libc::PROT_EXEC as u64 != 0,
    }
}

pub const GUEST_PAGE: u64 = crate::guest_mem::PAGE;
