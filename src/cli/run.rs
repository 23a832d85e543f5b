//! `hotlift run`: load the program and run it under translation; also the
//! program of a guest's `execve` (dispatch/exec.rs), handed over with an
//! exec state.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;
use std::sync::Arc;

use super::{EXIT_HOTLIFT_FAILED, EXIT_NOT_FOUND, EXIT_NOT_RUNNABLE};
use crate::dispatch::exec::ExecState;
use crate::dispatch::{PathProfiler, Vm};
use crate::loader::{self, script};
use crate::options::RunOptions;

/// Find PROGRAM as execvp would: a name without '/' is searched in PATH.
pub(super) fn resolve(program: &OsString) -> PathBuf {
    if program.as_bytes().contains(&b'/') {
        return PathBuf::from(program);
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    for dir in std::env::split_paths(&path) {
        let cand = dir.join(program);
        if cand.is_file() {
            return cand;
        }
    }
    PathBuf::from(program)
}

/// Can a profile (and a process tree's profiles beside it) be written at
/// `p`: its directory exists and is writable, and `p` is not a directory
/// or a file hotlift may not write?
pub(super) fn profile_writable(p: &std::path::Path) -> Result<(), String> {
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    if !dir.is_dir() {
        return Err(format!("{} is not a directory", dir.display()));
    }
    if p.is_dir() {
        return Err("it is a directory".into());
    }
    if !writable(dir) || (p.exists() && !writable(p)) {
        return Err(eacces());
    }
    Ok(())
}

/// May hotlift write into `q` (a file, or a directory it can enter)?
fn writable(q: &std::path::Path) -> bool {
    use nix::unistd::AccessFlags;
    let flags = if q.is_dir() {
        AccessFlags::W_OK | AccessFlags::X_OK
    } else {
        AccessFlags::W_OK
    };
    nix::unistd::access(q, flags).is_ok()
}

fn eacces() -> String {
    std::io::Error::from_raw_os_error(libc::EACCES).to_string()
}

/// `--dump-superblocks DIR`: made if missing, and writable, before the
/// program runs (a directory that could not be made was found out never:
/// the dumps were dropped one by one, status 0).
pub(super) fn dump_dir_writable(d: &std::path::Path) -> Result<(), String> {
    std::fs::create_dir_all(d).map_err(|e| e.to_string())?;
    if !writable(d) {
        return Err(eacces());
    }
    Ok(())
}

/// `p` as an absolute path, taken from hotlift's directory now: the files
/// hotlift writes after the guest ran (profile, strace log, superblock
/// dumps, path report) go where the command line said, not under whatever
/// directory the guest moved to (`chdir("/")` wrote `p.json` as
/// `/p.json`; a shell's `cd` moved its children's profiles). An
/// execve's next image gets them anchored already.
pub(super) fn anchored(p: &std::path::Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// Run the program; `summary` prints the profile summary at the end.
pub fn main(opts: RunOptions, program: Vec<OsString>, summary: bool) -> i32 {
    main_with(opts, program, summary, None)
}

/// [`main`], path-profiling one function with `paths` (cli/paths.rs).
pub fn main_with(
    opts: RunOptions,
    program: Vec<OsString>,
    summary: bool,
    paths: Option<Arc<dyn PathProfiler>>,
) -> i32 {
    let path = resolve(&program[0]);
    let argv: Vec<Vec<u8>> = program.iter().map(|a| a.as_bytes().to_vec()).collect();
    launch(opts, path, argv, summary, None, false, paths)
}

/// Run the program a guest image's `execve` named, as that image's
/// successor (`--exec-state`): its options, `argv[0]`, ignored signals and
/// process identity come from the state; PROGRAM is not searched in PATH.
pub fn main_exec(state: &str, program: Vec<OsString>) -> i32 {
    let state: ExecState = match serde_json::from_str(state) {
        Ok(s) => s,
        Err(e) => {
            crate::host::say!("hotlift: bad --exec-state: {e}");
            return EXIT_HOTLIFT_FAILED;
        }
    };
    if let Some(l) = state.stack {
        // The guest's own RLIMIT_STACK, raised for this hotlift's start
        // (dispatch/exec.rs OWN_STACK): back to it once this thread's stack
        // has grown to what hotlift may need (the kernel checks the limit
        // at each growth).
        let raised = crate::limits::kernel_get(libc::RLIMIT_STACK).map_or(0, |k| k.cur);
        grow_own_stack((4 << 20).min(raised.saturating_sub(512 << 10)) / (64 << 10));
        crate::limits::set_stack(l);
    }
    let path = PathBuf::from(&program[0]);
    let argv: Vec<Vec<u8>> = state
        .argv0
        .iter()
        .cloned()
        .chain(program[1..].iter().map(|a| a.as_bytes().to_vec()))
        .collect();
    let summary = state.print_summary;
    crate::profile::names::keep_raw(crate::profile::names::raw() || state.raw_names);
    crate::monitor::do_not_pin();
    launch(
        state.opts.clone(),
        path,
        argv,
        summary,
        Some(state),
        true,
        None,
    )
}

/// Touch `chunks` × 64 KiB of this thread's stack (up to 4 MiB, within
/// the raised limit), so that the kernel grows its mapping now, while the
/// limit allows it.
#[inline(never)]
fn grow_own_stack(chunks: u64) {
    let mut room = [0u8; 64 << 10];
    std::hint::black_box(&mut room);
    if chunks > 1 {
        grow_own_stack(chunks - 1);
    }
    // Used after the call: the frame is not reused for it.
    std::hint::black_box(&mut room);
}

fn launch(
    mut opts: RunOptions,
    path: PathBuf,
    argv: Vec<Vec<u8>>,
    summary: bool,
    state: Option<ExecState>,
    append_log: bool,
    paths: Option<Arc<dyn PathProfiler>>,
) -> i32 {
    if let Some(log) = &opts.strace_file {
        // The processes of a tree append to one log (strace/sink.rs I1); the
        // tree's first image starts it empty.
        let fresh = if append_log {
            Ok(())
        } else {
            std::fs::File::create(log).map(drop)
        };
        let file = fresh.and_then(|()| {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(log)
        });
        match file {
            Ok(f) => crate::strace::set_log_file(f),
            Err(e) => {
                crate::host::say!(
                    "hotlift: cannot create the strace log {}: {e}",
                    log.display()
                );
                return EXIT_HOTLIFT_FAILED;
            }
        }
        opts.strace = true;
    }
    // Outputs are checked before the program runs, not after (a profile
    // that cannot be written was found out only at the end, status 0).
    type Check = fn(&std::path::Path) -> Result<(), String>;
    let perf_map = opts
        .perf_map
        .then(|| PathBuf::from(format!("/tmp/perf-{}.map", std::process::id())));
    let outputs: [(Option<&std::path::Path>, Check, &str); 3] = [
        (
            opts.profile.as_deref(),
            profile_writable,
            "write the profile to",
        ),
        (
            opts.dump_superblocks.as_deref(),
            dump_dir_writable,
            "write superblock dumps into",
        ),
        (perf_map.as_deref(), profile_writable, "write the perf map"),
    ];
    for (path, check, what) in outputs {
        if let Some(p) = path.filter(|_| !append_log) {
            if let Err(why) = check(p) {
                crate::host::say!("hotlift: cannot {what} {}: {why}", p.display());
                return EXIT_HOTLIFT_FAILED;
            }
        }
    }
    if !append_log {
        for p in [
            &mut opts.profile,
            &mut opts.strace_file,
            &mut opts.dump_superblocks,
            &mut opts.cache_dir,
        ]
        .into_iter()
        .flatten()
        {
            *p = anchored(p);
        }
    }
    let (cache, named) = opts.cache();
    crate::persist::configure(cache, named, opts.cache_max_mib << 20);
    let shown = path.display().to_string();
    // A `#!` script runs its interpreter, as the kernel would run it; what
    // the kernel would refuse to execute (no execute permission, not a
    // regular file) is refused, with the shell's status 126.
    let program = path.clone();
    let mut launch = match script::follow(path, argv, &script::check_executable) {
        Ok(mut l) => {
            if let Some(s) = state.as_ref().filter(|s| !s.execfn.is_empty()) {
                l.execfn = s.execfn.clone();
            }
            if let Some((_, fd)) = state
                .as_ref()
                .and_then(|s| s.held_fd)
                .filter(|_| l.path != program)
            {
                // dispatch/exec.rs E4: a script by descriptor reaches its
                // interpreter as the kernel names it, `/dev/fd/N`.
                let held = program.as_os_str().as_encoded_bytes();
                for a in l.argv.iter_mut().filter(|a| a.as_slice() == held) {
                    *a = format!("/dev/fd/{fd}").into_bytes();
                }
            }
            l
        }
        Err(e) => {
            crate::host::say!("hotlift: {e}");
            return match e {
                script::ScriptError::Io(_, io) if io.kind() == std::io::ErrorKind::NotFound => {
                    EXIT_NOT_FOUND
                }
                _ => EXIT_NOT_RUNNABLE,
            };
        }
    };
    let shown = if launch.path.as_os_str().as_bytes() == launch.execfn.as_slice() {
        shown
    } else {
        format!("{} (interpreter of {shown})", launch.path.display())
    };
    let plan = match loader::plan(&launch.bytes) {
        Ok(p) => p,
        Err(e) => {
            crate::host::say!("hotlift: {shown}: {e}");
            return e.exit_code();
        }
    };
    // A dynamically linked program: its interpreter (ld.so) is loaded too.
    let interp = match plan.interp.as_deref().map(loader::read_interp).transpose() {
        Ok(i) => i,
        Err(e) => {
            crate::host::say!("hotlift: {shown}: {e}");
            return e.exit_code();
        }
    };
    let envp: Vec<Vec<u8>> = std::env::vars_os()
        .map(|(k, v)| {
            let mut kv = k.into_vec();
            kv.push(b'=');
            kv.extend_from_slice(v.as_bytes());
            kv
        })
        .collect();
    let ignored = state.as_ref().map_or(0, |s| s.ignored);
    crate::dispatch::set_os(crate::syscall::os());
    match Vm::start(
        opts,
        &launch.bytes,
        &plan,
        interp.as_ref(),
        &launch.argv,
        &envp,
        &launch.execfn,
        launch.path.clone(),
        ignored,
        paths,
    ) {
        Ok(mut vm) => {
            // The files are loaded: their descriptors would count against
            // the guest's RLIMIT_NOFILE (limits.rs I1).
            drop(interp);
            launch.bytes = loader::script::FileBytes::Empty;
            if let Some(s) = state {
                if let Some((fd, _)) = s.held_fd {
                    // dispatch/exec.rs E4: the program is loaded.
                    crate::host::close_fd(fd);
                }
                if let Some(l) = s.limits {
                    // The image before lifted the soft limits for its own
                    // profile (limits.rs I1).
                    l.restore();
                    if let Some(max) = l.address_space() {
                        let rsp = vm.ctx.reg(crate::contract::Reg::Rsp);
                        let (space, _) = vm.proc.lock().mem.footprint(rsp);
                        if space > max {
                            // The kernel fails to map the program past
                            // execve's point of no return: SIGSEGV.
                            if vm.opts().verbose {
                                crate::host::say!("hotlift: {shown}: its image ({space} bytes) is larger than RLIMIT_AS ({max}): killed by SIGSEGV as the kernel's execve kills it");
                            }
                            vm.finish(crate::profile::Ending::Signal {
                                signal: libc::SIGSEGV,
                            });
                            crate::status::die_with(libc::SIGSEGV);
                        }
                    }
                    *vm.proc.limits.lock().unwrap_or_else(|e| e.into_inner()) = l;
                }
                if s.mem_files {
                    crate::guest_mem::watch_mem_files();
                }
                vm.tsc_traps = s.tsc_traps;
                if s.tsc_traps {
                    crate::frontend::set_tsc_traps();
                }
                if s.process.descendant() {
                    crate::strace::set_process_prefix(Some(s.process.pid));
                }
                *vm.proc
                    .prof
                    .process
                    .lock()
                    .unwrap_or_else(|e| e.into_inner()) = s.process;
            }
            vm.proc
                .prof
                .print_summary
                .store(summary, std::sync::atomic::Ordering::Release);
            // Descriptors 0-2 the program was started without: closed
            // again (the standard library put /dev/null there).
            crate::host::close_std_fds_for_guest();
            vm.proc.read_files_ahead();
            vm.run()
        }
        Err(e) => {
            crate::host::say!("hotlift: {shown}: {e}");
            match e {
                crate::dispatch::VmError::Load(l) => l.exit_code(),
                _ => EXIT_HOTLIFT_FAILED,
            }
        }
    }
}
