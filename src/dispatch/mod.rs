//! The dispatcher: finds or translates the block for the guest's next
//! address, runs translated code, and handles what comes back (links,
//! indirect misses, syscalls, traps).
//!
//! I1: the dispatcher runs only on the guest thread, with hotlift's FS base,
//!     while no translated code of that thread runs; so it may patch links,
//!     fill the lookup table and flush the cache.
//! I2: a direct exit is linked only when chaining is on and the site still
//!     exists after translating its target (a translation may flush).
//!
//! Usage: `Vm::start(opts, image bytes, plan, interpreter, argv, envp,
//! execfn, exe)?.run()`.
#![allow(unsafe_code)]

mod profiling;
mod smc;

pub use profiling::Profiling;

use thiserror::Error;

use crate::backend::{
    emit_block, emit_empty_ibl_stub, emit_exit_stub, EmitEnv, EmitError, EmittedSiteKind,
};
use crate::cache::{
    BlockInfo, CacheError, CacheShared, CodeCache, CodeMem, ExitSite, IblTable, SiteKind,
};
use crate::frontend::{lift_block, Unsupported};
use crate::guest_mem::{Brk, GuestMem, PAGE};
use crate::images::ImageLog;
use crate::ir::TrapKind;
use crate::loader::{self, LoadError, LoadPlan, Prot, Role, StackRequest};
use crate::options::RunOptions;
use crate::profile::Ending;
use crate::runtime::{self, exit_reason, ThreadCtx};
use crate::signal;
use crate::syscall;
use crate::types::{BlockId, GuestAddr, HostAddr};

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

/// Counters of dispatcher events (one per exit reason).
#[derive(Debug, Default, Clone)]
pub struct Stats {
    pub translations: u64,
    pub direct_exits: u64,
    pub links: u64,
    pub indirect_misses: u64,
    pub syscalls: u64,
    /// Stores into translated code (smc.rs).
    pub code_writes: u64,
}

/// One guest process under translation.
#[derive(Debug)]
pub struct Vm {
    pub opts: RunOptions,
    pub mem: GuestMem,
    pub brk: Brk,
    pub cache: CodeCache,
    pub ctx: Box<ThreadCtx>,
    pub stats: Stats,
    /// Recorded guest signal state (handlers are not run yet: README).
    pub sig: syscall::SignalState,
    /// Writable guest pages holding translated code, write-protected so a
    /// store to them is seen (smc.rs).
    pub protected: hashbrown::HashSet<u64>,
    /// The guest program's canonical path, NUL-terminated (its
    /// `/proc/self/exe`).
    pub exe_path: std::ffi::CString,
    /// A store to protected code happened where the guest state could not be
    /// recovered exactly; flush at the next exit (smc.rs I3).
    pub smc_flush_pending: bool,
    /// Counted instructions of the block that just left for a store into
    /// code that did not retire (smc.rs); set by the signal handler,
    /// reported to the monitor by the dispatcher.
    pub unretired_pending: u32,
    /// Where translated code faulted fatally, and the guest's RCX then;
    /// set by the signal handler, reported by [`Vm::record_fault`].
    pub fault: Option<(crate::cache::PcLocation, u64)>,
    /// Ring, monitor and profile writing.
    pub prof: Profiling,
    /// The CPU affinity the guest sees (syscall/affinity.rs).
    pub affinity: syscall::Affinity,
}

const BRK_RESERVE: u64 = 1 << 30;

/// Room above a dynamically linked program's brk for the code cache and
/// the guest's own mmap area (its libraries): loader map.rs I6.
const GUEST_MMAP_ROOM: u64 = 2 << 30;

fn reserve(hint: u64, len: u64, fixed: bool) -> Option<u64> {
    let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE;
    let flags = if fixed {
        flags | libc::MAP_FIXED_NOREPLACE
    } else {
        flags
    };
    // SAFETY: a new PROT_NONE mapping; FIXED_NOREPLACE never replaces.
    let p = unsafe {
        libc::mmap(
            hint as *mut libc::c_void,
            len as usize,
            libc::PROT_NONE,
            flags,
            -1,
            0,
        )
    };
    (p != libc::MAP_FAILED && (!fixed || p as u64 == hint)).then_some(p as u64)
}

fn stack_size() -> u64 {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: r is a valid out pointer.
    let cur = if unsafe { libc::getrlimit(libc::RLIMIT_STACK, &mut r) } == 0 {
        r.rlim_cur
    } else {
        8 << 20
    };
    cur.clamp(1 << 20, 1 << 30)
}

impl Vm {
    /// Map the guest (and its interpreter, if it names one), build its
    /// stack and the code cache, and get ready to run at its entry point
    /// (the interpreter's, if any).
    #[allow(clippy::too_many_arguments)]
    pub fn start(
        opts: RunOptions,
        bytes: &[u8],
        plan: &LoadPlan,
        interp: Option<&loader::Interp>,
        argv: &[Vec<u8>],
        envp: &[Vec<u8>],
        execfn: &[u8],
        exe: std::path::PathBuf,
    ) -> Result<Vm, VmError> {
        runtime::check_cpu().map_err(VmError::Host)?;
        let role = Role::Program {
            brk_room: BRK_RESERVE,
            mmap_room: GUEST_MMAP_ROOM,
        };
        let image = loader::load(bytes, plan, role)?;
        let interp_image = interp
            .map(|i| loader::load(&i.bytes, &i.plan, Role::Interpreter))
            .transpose()?;
        let mut mem = GuestMem::new();
        for r in image
            .regions
            .iter()
            .chain(interp_image.iter().flat_map(|i| &i.regions))
        {
            mem.insert(r.start.0, r.end.0, r.prot);
        }
        // The vDSO (and its data pages) are the guest's too: it runs its
        // vDSO functions translated, as it would natively (no syscalls).
        let special = kernel_special_mappings();
        for &(s, e, prot, _) in &special {
            mem.insert(s, e, prot);
        }
        let vdso = special.iter().find(|m| m.3).map(|&(s, e, _, _)| (s, e));
        // The kernel starts the brk right after an ET_EXEC image or a
        // dynamically linked PIE (without randomisation; the loader left
        // room there) but moves a static PIE's away from it (to
        // ELF_ET_DYN_BASE, where hotlift itself lives): anywhere will do.
        let brk_start = image.brk_start.0;
        let after_image = match plan.kind {
            loader::ElfKind::Pie if plan.interp.is_none() => None,
            _ => reserve(brk_start, BRK_RESERVE, true),
        };
        let base = after_image
            .or_else(|| reserve(0, BRK_RESERVE, false))
            .ok_or_else(|| {
                VmError::Host("cannot reserve address space for the guest's brk".into())
            })?;
        let brk = Brk {
            start: base,
            cur: base,
            mapped: base,
            limit: base + BRK_RESERVE,
        };
        let req = StackRequest {
            argv,
            envp,
            execfn,
            stack_size: stack_size(),
            interp_base: interp_image.as_ref().map_or(0, |i| i.bias),
        };
        let stack = loader::build_stack(&image, plan, &req)?;
        mem.insert(stack.region.start.0, stack.region.end.0, stack.region.prot);

        let mut code = CodeMem::new_near(
            image.lo.0,
            image.hi.0,
            brk.limit,
            loader::stack_growth_floor().unwrap_or(loader::TASK_SIZE),
            (opts.cache_mib as usize) << 20,
        )?;
        let code_range = code.range();
        // A quarter of code memory holds superblocks (cache/shared.rs).
        let arena = code.split_tail((opts.cache_mib as usize) << 18);
        let shared = std::sync::Arc::new(
            CacheShared::new(arena)
                .map_err(|e| VmError::Host(format!("cannot map the superblock registry: {e}")))?,
        );
        let ibl = IblTable::new()
            .map_err(|e| VmError::Host(format!("cannot map the lookup table: {e}")))?;
        let mut cache = CodeCache::new(code, ibl, shared);
        let stub = emit_empty_ibl_stub(cache.mem.cursor().0)?;
        let stub_at = cache.mem.commit(&stub);
        cache.ibl.set_empty_stub(stub_at);
        let stub = emit_exit_stub(cache.mem.cursor().0, exit_reason::CODE_WRITE)?;
        cache.code_write_stub = cache.mem.commit(&stub);
        let stub = emit_exit_stub(cache.mem.cursor().0, exit_reason::FATAL_SIGNAL)?;
        cache.fatal_stub = cache.mem.commit(&stub);
        cache.mem.set_floor();

        let sig = syscall::SignalState::inherited();
        let affinity = syscall::Affinity::current();
        let entry = interp_image.as_ref().map_or(image.entry, |i| i.entry);
        let mut ctx = ThreadCtx::new(entry.0, stack.sp.0);
        let command_line = argv
            .iter()
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        let images =
            ImageLog::at_start(exe, (plan, &image), interp.zip(interp_image.as_ref()), vdso);
        let prof = Profiling::new(&opts, &mut ctx, images, command_line, &cache)
            .map_err(|e| VmError::Host(format!("cannot set up profiling: {e}")))?;
        ctx.install_gs();
        signal::install(opts.verbose, code_range, |s| {
            sig.actions[s as usize][0] == libc::SIG_IGN as u64
        })
        .map_err(VmError::Host)?;
        // The guest's own mmap area: below everything mapped so far near
        // its stack, above a dynamically linked program, its brk and the
        // code cache (guest_mem I3, loader map.rs I6).
        let above = match plan.interp {
            Some(_) if plan.kind == loader::ElfKind::Pie => brk.limit.max(code_range.1),
            _ => 0,
        };
        mem.mmap_ceiling = syscall::mmap_ceiling(stack.region.start.0 - PAGE, above);
        Ok(Vm {
            opts,
            mem,
            brk,
            cache,
            ctx,
            stats: Stats::default(),
            sig,
            protected: hashbrown::HashSet::new(),
            exe_path: own_identity(execfn),
            smc_flush_pending: false,
            unretired_pending: 0,
            fault: None,
            prof,
            affinity,
        })
    }

    /// Translate the block at `addr` into the cache and make it the block
    /// for `addr`.
    fn translate(&mut self, addr: GuestAddr) -> Result<BlockId, VmError> {
        self.translate_with(addr, self.opts.max_block_insns as usize, true)
    }

    /// Translate up to `max` instructions at `addr`. A block that is not
    /// `reusable` is run once (smc.rs I2): it is neither the block for
    /// `addr` nor protects its pages.
    fn translate_with(
        &mut self,
        addr: GuestAddr,
        max: usize,
        reusable: bool,
    ) -> Result<BlockId, VmError> {
        let end = self.mem.exec_end(addr.0).unwrap_or(addr.0);
        let len = (end - addr.0).min(max as u64 * 15 + 15) as usize;
        // SAFETY: [addr, addr+len) lies in executable guest memory, which
        // on x86-64 is readable; an empty slice needs no memory.
        let bytes: &[u8] = if len == 0 {
            &[]
        } else {
            unsafe { std::slice::from_raw_parts(addr.0 as *const u8, len) }
        };
        let block = lift_block(bytes, addr, max)?;
        let prologue = self.publish_block(&block, reusable)?;
        for attempt in 0..2 {
            let env = EmitEnv {
                host_base: self.cache.mem.cursor().0,
                first_site: self.cache.sites.len() as u32,
                ibl_base: self.cache.ibl.base(),
                prologue,
            };
            let em = emit_block(&block, &env)?;
            if em.code.len() + 16 > self.cache.mem.remaining() {
                if attempt == 1 {
                    return Err(VmError::BlockTooLarge(addr));
                }
                self.flush();
                continue;
            }
            let host = self.cache.mem.commit(&em.code);
            let id = BlockId(self.cache.blocks.len() as u32);
            // Block table I3: the monitor may link superblocks to it now.
            self.prof.blocks.set_host(id.0, host.0, self.cache.flushes);
            self.prof
                .translations
                .push((host.0, em.code.len() as u32, addr.0));
            for s in &em.sites {
                let kind = match s.kind {
                    EmittedSiteKind::Direct { field } => SiteKind::Direct {
                        field: HostAddr(host.0 + field as u64),
                    },
                    EmittedSiteKind::Syscall => SiteKind::Syscall,
                    EmittedSiteKind::Trap(k) => SiteKind::Trap(k),
                };
                self.cache.sites.push(ExitSite {
                    kind,
                    target: s.target,
                    from: id,
                });
            }
            let info = BlockInfo {
                guest: addr,
                guest_len: (block.end.0 - block.start.0) as u32,
                insns: block.guest_insns(),
                host,
                host_len: em.code.len() as u32,
                class: block.term.class(),
                pc_map: em.pc_map.into_boxed_slice(),
                counted: reusable,
                rep_ring: em.rep_ring.into_boxed_slice(),
            };
            self.stats.translations += 1;
            if !reusable {
                return Ok(self.cache.insert_unlisted(info));
            }
            self.protect_code(block.start.0, block.end.0.max(block.start.0 + 1));
            return Ok(self.cache.insert(info, !self.opts.no_chain));
        }
        unreachable!("translate loop returns within two attempts")
    }

    fn host_for(&mut self, addr: GuestAddr) -> Result<HostAddr, VmError> {
        let id = match self.cache.lookup(addr) {
            Some(id) => id,
            None => self.translate(addr)?,
        };
        Ok(self.cache.block(id).host)
    }

    /// Run the guest until it exits; never returns.
    pub fn run(mut self) -> ! {
        match self.run_loop() {
            Ok(never) => match never {},
            Err(e) => {
                eprintln!("hotlift: {e}");
                self.finish(Ending::Exit {
                    code: crate::cli::EXIT_HOTLIFT_FAILED,
                });
                // SAFETY: _exit has no preconditions.
                unsafe { libc::_exit(crate::cli::EXIT_HOTLIFT_FAILED) }
            }
        }
    }

    fn run_loop(&mut self) -> Result<std::convert::Infallible, VmError> {
        signal::publish_vm(self);
        let mut next = self.host_for(GuestAddr(self.ctx.rip))?;
        loop {
            if let Some(sig) = signal::pending_fatal() {
                // signal I4: a signal that ends the guest arrived while
                // hotlift was running (or the guest was in a syscall).
                self.finish(Ending::Signal { signal: sig });
                signal::die_with(sig)
            }
            self.ctx.enter_target = next.0;
            // SAFETY: the context is this thread's GS base (start) and
            // `next` is the entry of a block in the cache.
            unsafe { runtime::enter(&mut self.ctx) };
            if self.ctx.sb_partial != 0 && self.ctx.exit_reason != exit_reason::FATAL_SIGNAL {
                // The thread left a superblock pass abnormally: close it
                // before anything else reaches the ring (superblock/mod.rs;
                // a fault's record_fault does it in its own order).
                let w = std::mem::take(&mut self.ctx.sb_partial);
                self.push_words(&[w]);
            }
            // The exit site must be read before a pending flush drops it.
            let site = (self.ctx.exit_reason == exit_reason::SITE)
                .then(|| self.cache.sites[self.ctx.exit_arg as usize]);
            let flushes = self.cache.flushes;
            if self.smc_flush_pending {
                self.flush();
            }
            let unretired = std::mem::take(&mut self.unretired_pending);
            self.record_unretired(unretired);
            next = match self.ctx.exit_reason {
                exit_reason::SITE => {
                    let site = site.expect("site read above");
                    self.handle_site(site, self.cache.flushes == flushes)?
                }
                exit_reason::INDIRECT_MISS => {
                    self.stats.indirect_misses += 1;
                    self.host_for(GuestAddr(self.ctx.rip))?
                }
                exit_reason::CODE_WRITE => self.code_written()?,
                exit_reason::FATAL_SIGNAL => {
                    self.record_fault();
                    let sig = self.ctx.exit_arg as i32;
                    self.finish(Ending::Signal { signal: sig });
                    signal::die_with(sig)
                }
                r => panic!("translated code exited with unknown reason {r}"),
            };
        }
    }

    /// Continue after exit `site`; `linkable` is false when the code
    /// holding the site was flushed since it ran.
    fn handle_site(&mut self, site: ExitSite, linkable: bool) -> Result<HostAddr, VmError> {
        self.ctx.rip = site.target.0;
        match site.kind {
            SiteKind::Direct { field } => {
                self.stats.direct_exits += 1;
                let flushes = self.cache.flushes;
                let host = self.host_for(site.target)?;
                // I2: a flush during translation removed the site.
                if linkable && !self.opts.no_chain && self.cache.flushes == flushes {
                    self.cache.mem.patch_rel32(field, host);
                    self.stats.links += 1;
                }
                Ok(host)
            }
            SiteKind::Syscall => {
                self.stats.syscalls += 1;
                syscall::handle(self)?;
                self.host_for(GuestAddr(self.ctx.rip))
            }
            SiteKind::Trap(kind) => self.die_of_trap(kind, site.target),
        }
    }

    fn die_of_trap(&mut self, kind: TrapKind, at: GuestAddr) -> ! {
        // The trap instruction is the last one its block counted; only
        // `int3`/`int1` retire (the signal's rip is past them).
        if kind.counted() && kind != TrapKind::Breakpoint {
            self.record_unretired(1);
        }
        if self.opts.verbose {
            let what = match kind {
                TrapKind::Breakpoint => "breakpoint trap",
                TrapKind::InvalidOpcode => "invalid opcode",
                TrapKind::GeneralProtection => "privileged or faulting instruction",
                TrapKind::FetchFault => "instruction fetch from non-executable memory",
            };
            eprintln!(
                "hotlift: guest killed by SIG{} at guest {at}: {what}",
                signal::sig_name(kind.signal())
            );
        }
        self.finish(Ending::Signal {
            signal: kind.signal(),
        });
        signal::die_with(kind.signal())
    }

    /// The thread leaves translated code abnormally at host `pc` (a fault,
    /// a store into code, a signal): if a superblock pass is open there,
    /// the dispatcher pushes its partial record. Async-signal-safe.
    pub(crate) fn note_leave(&mut self, pc: u64) {
        if pc < self.cache.shared.arena.rx {
            return;
        }
        if let Some(w) = self.cache.shared.registry.find(self.cache.flushes, pc) {
            if w.pc.member != u16::MAX {
                self.ctx.sb_partial = crate::monitor::TAG_SB_PARTIAL | w.pc.member as u32;
            }
        }
    }

    /// Guest memory [start, end) changed under translated code: drop it.
    pub fn code_changed(&mut self, start: u64, end: u64) {
        if self.cache.has_code_in(start, end) {
            self.flush();
        }
    }

    /// Drop every translation, and the write protection that guarded them.
    pub fn flush(&mut self) {
        self.cache.flush();
        self.unprotect_all();
        self.smc_flush_pending = false;
    }
}

/// The guest's canonical path for `/proc/self/exe`, and the kernel's `comm`
/// (first 15 bytes of the executed file's base name), as after execve.
fn own_identity(execfn: &[u8]) -> std::ffi::CString {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let path = std::path::Path::new(std::ffi::OsStr::from_bytes(execfn));
    let base = execfn.rsplit(|&b| b == b'/').next().unwrap_or(execfn);
    let comm: Vec<u8> = base.iter().copied().filter(|&b| b != 0).take(15).collect();
    if let Ok(comm) = std::ffi::CString::new(comm) {
        // SAFETY: PR_SET_NAME reads a NUL-terminated string of ours.
        unsafe { libc::prctl(libc::PR_SET_NAME, comm.as_ptr()) };
    }
    let canon = std::fs::canonicalize(path)
        .map(|p| p.into_os_string().into_vec())
        .unwrap_or(execfn.to_vec());
    std::ffi::CString::new(canon).unwrap_or_default()
}

/// `[vdso]` and `[vvar*]` mappings of this process, from /proc/self/maps
/// (the last field: is it the vDSO).
fn kernel_special_mappings() -> Vec<(u64, u64, Prot, bool)> {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
    maps.lines()
        .filter(|l| l.ends_with("[vdso]") || l.contains("[vvar"))
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (range, perms) = (f.next()?, f.next()?.as_bytes());
            let (a, b) = range.split_once('-')?;
            let prot = Prot {
                r: perms[0] == b'r',
                w: perms[1] == b'w',
                x: perms[2] == b'x',
            };
            Some((
                u64::from_str_radix(a, 16).ok()?,
                u64::from_str_radix(b, 16).ok()?,
                prot,
                l.ends_with("[vdso]"),
            ))
        })
        .collect()
}

/// A protection from mmap/mprotect bits.
pub fn prot_from(bits: u64) -> Prot {
    Prot {
        r: bits & libc::PROT_READ as u64 != 0,
        w: bits & libc::PROT_WRITE as u64 != 0,
        x: bits & libc::PROT_EXEC as u64 != 0,
    }
}

pub const GUEST_PAGE: u64 = PAGE;
