//! Starting a guest process: map the program, build its stack, set up the
//! code cache, profiling and signal handlers, and make its first thread.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use super::process::{Locked, Process, Threads};
use super::profiling::{self, Profiling};
use super::protected::ProtectedPages;
use super::{Vm, VmError};
use crate::backend::{emit_empty_ibl_stub, emit_exit_stub, emit_shared_stubs};
use crate::cache::{BlockTable, CacheShared, CodeCache, CodeMem, CodeView, IblTable};
use crate::contract::{exit_reason, ThreadCtx};
use crate::guest_mem::{Brk, GuestMem, PAGE};
use crate::images::ImageLog;
use crate::loader::{self, LoadPlan, Prot, Role, StackRequest};
use crate::options::RunOptions;
use crate::runtime;

const BRK_RESERVE: u64 = 1 << 30;

/// Room above a dynamically linked program's brk for the code cache and
/// the guest's own mmap area (its libraries): loader map.rs I6.
const GUEST_MMAP_ROOM: u64 = 3 << 29;

/// Pages written-protected for stores into translated code, at most
/// (three quarters of the table; smc.rs flushes when it is full).
const PROTECTED_SLOTS: usize = 1 << 16;

fn reserve(hint: u64, len: u64, fixed: bool) -> Option<u64> {
    let flags = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE;
    let flags = if fixed {
        flags | libc::MAP_FIXED_NOREPLACE
    } else {
        flags
    };
    #[allow(unsafe_code)]
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

/// The guest's initial stack: its size (the soft `RLIMIT_STACK`), and the
/// room below its top it may grow into if the program raises the limit
/// (growsdown.rs G3): up to the hard limit, at most 256 MiB (a room of
/// 1 GiB left a static-PIE program's code memory no room within 2 GiB of
/// its image, which the kernel maps just above the stack), and none when
/// `RLIMIT_AS` is finite (the placeholders would count against it).
fn stack_size() -> (u64, u64) {
    let get = |res| {
        let mut r = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        #[allow(unsafe_code)]
        // SAFETY: r is a valid out pointer.
        let ok = unsafe { libc::getrlimit(res, &mut r) } == 0;
        ok.then_some(r)
    };
    let stack = get(libc::RLIMIT_STACK);
    let size = stack
        .map_or(8 << 20, |r| r.rlim_cur)
        .clamp(1 << 20, 1 << 30);
    let unlimited = get(libc::RLIMIT_AS).is_some_and(|r| r.rlim_cur == libc::RLIM_INFINITY);
    let room = match stack {
        Some(r) if unlimited => r.rlim_max.clamp(size, (256 << 20).max(size)),
        _ => size,
    };
    (size, room)
}

impl Vm {
    /// Map the guest (and its interpreter, if it names one), build its
    /// stack and the code cache, and get ready to run its first thread at
    /// its entry point (the interpreter's, if any).
    #[allow(clippy::too_many_arguments)]
    pub fn start(
        opts: RunOptions,
        bytes: &loader::script::FileBytes,
        plan: &LoadPlan,
        interp: Option<&loader::Interp>,
        argv: &[Vec<u8>],
        envp: &[Vec<u8>],
        execfn: &[u8],
        exe: std::path::PathBuf,
        ignored: u64,
        paths: Option<Arc<dyn super::PathProfiler>>,
    ) -> Result<Vm, VmError> {
        runtime::check_cpu().map_err(VmError::Host)?;
        let role = Role::Program {
            brk_room: BRK_RESERVE,
            mmap_room: GUEST_MMAP_ROOM,
        };
        let image = loader::load_file(bytes, plan, role)?;
        let interp_image = interp
            .map(|i| loader::load_file(&i.bytes, &i.plan, Role::Interpreter))
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
        crate::guest_mem::set_shared_with_host(special.iter().map(|m| (m.0, m.1)).collect());
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
        let (stack_size, stack_room) = stack_size();
        let req = StackRequest {
            argv,
            envp,
            execfn,
            stack_size,
            stack_room,
            interp_base: interp_image.as_ref().map_or(0, |i| i.bias),
        };
        let stack = loader::build_stack(&image, plan, &req)?;
        mem.insert(stack.region.start.0, stack.region.end.0, stack.region.prot);
        mem.hold(stack.room.0, stack.room.1);
        // The kernel's stack mapping at execve: what fs/exec.c's
        // setup_arg_pages leaves (arguments, environment, 128 KiB).
        let top = stack.region.end.0;
        mem.stack = Some((stack.region.start.0, top, top - stack.sp.0 + (128 << 10)));
        // W^X (syscall/mem/mod.rs I8): the loader maps as the kernel would;
        // guest code runs from the code cache only.
        for (s, r) in mem
            .regions()
            .filter(|(s, r)| r.prot.x && !crate::guest_mem::shared_with_host(*s, r.end))
        {
            // SAFETY: a guest region the loader just mapped.
            unsafe {
                libc::mprotect(
                    s as *mut libc::c_void,
                    (r.end - s) as usize,
                    r.prot.host_bits(),
                )
            };
        }
        // selfview I3: hotlift has one thread until the monitor starts.
        if let Err(e) = (super::os::os()?.adopt_guest_view)(stack.sp.0) {
            if opts.verbose {
                crate::host::say!(
                    "hotlift: /proc/self/cmdline, environ and auxv stay hotlift's: {e}"
                );
            }
        }

        crate::clock::phase(crate::clock::Phase::Loaded);
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
        let (stubs, at) = emit_shared_stubs(code.cursor().0)?;
        let stubs_at = code.commit(&stubs)?;
        debug_assert_eq!(stubs_at.0, at.site, "the stubs where they were emitted for");
        let shared = Arc::new(
            CacheShared::new(arena, code.sharing(), at)
                .map_err(|e| VmError::Host(format!("cannot map the superblock registry: {e}")))?,
        );
        let stub = emit_empty_ibl_stub(code.cursor().0)?;
        let empty_ibl_stub = code.commit(&stub)?;
        let stub = emit_exit_stub(code.cursor().0, exit_reason::CODE_WRITE)?;
        let code_write_stub = code.commit(&stub)?;
        let stub = emit_exit_stub(code.cursor().0, exit_reason::FATAL_SIGNAL)?;
        let fatal_stub = code.commit(&stub)?;
        let stub = emit_exit_stub(code.cursor().0, exit_reason::KICKED)?;
        let kick_stub = code.commit(&stub)?;
        code.set_floor();
        let blocks = BlockTable::new(profiling::BLOCK_CAPACITY)
            .map_err(|e| VmError::Host(format!("cannot map the block table: {e}")))?;
        let view = Arc::new(CodeView {
            blocks: Arc::new(blocks),
            shared: shared.clone(),
            range: code_range,
            floor: code.floor_addr(),
            code_write_stub,
            fatal_stub,
            empty_ibl_stub,
            kick_stub,
        });
        let cache = CodeCache::new(code, view.clone());
        crate::clock::phase(crate::clock::Phase::CodeCache);

        let sig = super::SignalState::inherited(ignored);
        // Before the monitor pins this thread: the guest sees what it
        // inherited (syscall/affinity.rs).
        let affinity = crate::host::Affinity::current();
        let command_line = argv
            .iter()
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        let exe_file = exe.clone();
        let images =
            ImageLog::at_start(exe, (plan, &image), interp.zip(interp_image.as_ref()), vdso);
        let prof = Profiling::new(
            &opts,
            images,
            command_line,
            &shared,
            &view.blocks,
            paths.clone(),
        )
        .map_err(|e| VmError::Host(format!("cannot set up profiling: {e}")))?;
        crate::clock::phase(crate::clock::Phase::Monitor);
        if let Some(p) = &paths {
            p.resolve(&prof.images());
        }
        (super::os::os()?.install_signals)(opts.verbose, code_range, &|s| {
            sig.handler(s as usize) == libc::SIG_IGN as u64
        })
        .map_err(VmError::Host)?;
        // The guest's own mmap area: below everything mapped so far near
        // its stack, above a dynamically linked program, its brk and the
        // code cache (guest_mem I3, loader map.rs I6).
        let above = match plan.interp {
            Some(_) if plan.kind == loader::ElfKind::Pie => brk.limit.max(code_range.1),
            _ => 0,
        };
        (super::os::os()?.hold_guest_area)(&mut mem, stack.region.start.0 - PAGE, above);
        let epoch_next = super::epoch::first_check(&opts);
        let proc = Arc::new(Process {
            exe_path: own_identity(execfn, &exe_file),
            locked: Mutex::new(Locked {
                mem,
                brk,
                cache,
                translate_ticks: 0,
                kept: Default::default(),
                fork_paths: Default::default(),
            }),
            view,
            protected: ProtectedPages::new(PROTECTED_SLOTS),
            smc_flush_pending: AtomicBool::new(false),
            flush_causes: Default::default(),
            dispatch: Default::default(),
            sig,
            affinity: Mutex::new(affinity),
            prof,
            threads: Threads::default(),
            vfork_fd: std::sync::atomic::AtomicI32::new(-1),
            paths,
            limits: Mutex::new(crate::limits::GuestLimits::from_kernel()),
            forking: Mutex::new(()),
            epoch_next: std::sync::atomic::AtomicU32::new(epoch_next),
            opts,
        });
        let entry = interp_image.as_ref().map_or(image.entry, |i| i.entry);
        let ctx = ThreadCtx::alloc(entry.0, stack.sp.0, true);
        let vm = Vm::new_thread(proc, ctx)?;
        crate::clock::phase(crate::clock::Phase::FirstThread);
        // The mask this process inherited is the guest's (an `execve`
        // keeps it), but hotlift's own signals must stay deliverable: the
        // guest's bits for them are recorded (signal/deliver.rs D1).
        let mask = vm.guest_mask();
        vm.set_guest_mask(mask);
        Ok(vm)
    }

    /// A guest thread of `proc` with context `ctx`, on the calling host
    /// thread (its GS base from now on).
    pub(super) fn new_thread(proc: Arc<Process>, ctx: runtime::CtxBox) -> Result<Vm, VmError> {
        // SAFETY: gettid has no preconditions.
        #[allow(unsafe_code)]
        let tid = unsafe { libc::gettid() };
        let prof = proc
            .prof
            .thread(&ctx, tid)
            .map_err(|e| VmError::Host(format!("cannot set up profiling: {e}")))?;
        if let Some(p) = &proc.paths {
            p.init_thread(&ctx)
                .map_err(|e| VmError::Host(format!("cannot set up path profiling: {e}")))?;
        }
        let mut ibl = IblTable::at(ctx.ibl_entries());
        ibl.set_empty_stub(proc.view.empty_ibl_stub);
        ctx.install_gs();
        (super::os::os()?.install_thread)().map_err(VmError::Host)?;
        let entry = proc.threads.add(tid);
        let mail = Box::new(super::Mailbox::new(proc.clone(), prof.ring.as_ref()));
        Ok(Vm {
            ibl_gen: proc.view.gen(),
            proc,
            ctx,
            ibl,
            prof,
            entry,
            mail,
            clear_tid: 0,
            altstack: [0, libc::SS_DISABLE as u64, 0],
            start_mask: None,
            paths_epoch: 0,
            tsc_traps: false,
            guest_tf: false,
        })
    }
}

/// The guest's canonical path for `/proc/self/exe` (the ELF file `exe`
/// loaded: a script's interpreter), and the kernel's `comm` (first 15
/// bytes of the base name of the path it was started by), as after
/// execve.
fn own_identity(execfn: &[u8], exe: &std::path::Path) -> std::ffi::CString {
    use std::os::unix::ffi::OsStringExt;
    let path = exe;
    let base = execfn.rsplit(|&b| b == b'/').next().unwrap_or(execfn);
    let comm: Vec<u8> = base.iter().copied().filter(|&b| b != 0).take(15).collect();
    if let Ok(comm) = std::ffi::CString::new(comm) {
        #[allow(unsafe_code)]
        // SAFETY: PR_SET_NAME reads a NUL-terminated string of ours.
        unsafe {
            libc::prctl(libc::PR_SET_NAME, comm.as_ptr())
        };
    }
    let canon = std::fs::canonicalize(path)
        .map(|p| p.into_os_string().into_vec())
        .unwrap_or_else(|_| path.as_os_str().as_encoded_bytes().to_vec());
    std::ffi::CString::new(canon).unwrap_or_default()
}

/// `[vdso]` and `[vvar*]` mappings of this process, from /proc/self/maps
/// (the last field: is it the vDSO).
fn kernel_special_mappings() -> Vec<(u64, u64, Prot, bool)> {
    let maps = crate::host::read_proc("/proc/self/maps").unwrap_or_default();
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
