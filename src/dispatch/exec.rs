//! Guest `execve` and `execveat`: by default the new program runs under
//! hotlift too, with the same options (hotlift executes itself with the
//! program and an exec state); with `--no-follow` it runs natively.
//!
//! E1: everything the kernel checks before the point of no return is
//!     checked first (the file, its permission, `#!` interpreters, the ELF
//!     and its interpreter), and a failure is the guest's `-errno` with
//!     nothing changed; only then is the image's profile written and the
//!     real `execve` made. A real `execve` that still fails ends the
//!     process with a message (status 125): the guest cannot go on
//!     without its monitor.
//! E2: the new image starts as natively: signals the guest ignores stay
//!     ignored, every other signal is default, the signal mask is the
//!     guest's, and hotlift's own descriptors are close-on-exec. Its
//!     `argv[0]`, environment and working directory are the guest's;
//!     `PROGRAM` is the path the guest gave, never searched in `PATH`.
//! E3: a program hotlift cannot translate but the kernel can run (a
//!     32-bit ELF) runs natively, without a profile, and hotlift says so.
//! E4: a program named by a descriptor (`execveat` with `AT_EMPTY_PATH`,
//!     `fexecve`'s `/proc/self/fd/N`) is read through a copy of the
//!     descriptor that the `execve` keeps open and the next hotlift closes
//!     once the program is loaded: the guest's may be close-on-exec, and
//!     the file may have no name to open again (a memfd, an unlinked
//!     file). A script run so gets `/dev/fd/N` (the guest's descriptor)
//!     as its argument, as from the kernel, which refuses (ENOENT) when
//!     that descriptor is close-on-exec.
#![allow(unsafe_code)]

use std::ffi::CString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::OnceLock;

use super::{Vm, VmError};
use crate::guest_mem::read_cstr;
use crate::host::syscall6;
use crate::loader::{self, script, LoadError};
use crate::options::RunOptions;
use crate::profile::{Ending, ProcessInfo};

/// The hidden `hotlift run` option that carries an [`ExecState`] (JSON).
pub const EXEC_STATE_ARG: &str = "--exec-state";

/// What an image hands the hotlift that runs its `execve`'s program.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct ExecState {
    pub opts: RunOptions,
    /// The guest's `argv[0]` (None: it passed an empty `argv`).
    pub argv0: Option<Vec<u8>>,
    /// The path the guest named (`AT_EXECFN`), where PROGRAM is another
    /// name of the same file (`/proc/self/exe`, a descriptor's path).
    pub execfn: Vec<u8>,
    /// Signals the guest ignores (bit `sig - 1`): E2, and what the host
    /// C library's start-up hides (SIGPIPE).
    pub ignored: u64,
    /// The new image's identity (profile/process.rs).
    pub process: ProcessInfo,
    /// Print the profile summary when the new image ends (`hotlift
    /// profile`'s own process).
    pub print_summary: bool,
    /// The resource limits hotlift keeps for the guest (limits.rs): an
    /// `execve` keeps them, as natively.
    #[serde(default)]
    pub limits: Option<crate::limits::GuestLimits>,
    /// The thread asked for `PR_TSC_SIGSEGV` (syscall/control.rs C3),
    /// which an `execve` keeps.
    #[serde(default)]
    pub tsc_traps: bool,
    /// `--no-demangle`: the new image's summary names functions raw too.
    #[serde(default)]
    pub raw_names: bool,
    /// The guest may hold a `/proc/PID/mem` file (syscall/memfile.rs M2):
    /// descriptors outlive an `execve`.
    #[serde(default)]
    pub mem_files: bool,
    /// A descriptor of the program kept open across the `execve` for the
    /// next hotlift to read it by (E4), closed once it has loaded it, and
    /// the guest's descriptor it copies.
    #[serde(default)]
    pub held_fd: Option<(i32, i32)>,
    /// The guest's `RLIMIT_STACK` where it was too small for hotlift's
    /// own stack: the next hotlift starts with it raised and gives it
    /// back (cli/run.rs `main_exec`).
    #[serde(default)]
    pub stack: Option<crate::limits::Limit>,
}

/// The stack the next hotlift's main thread may need: a guest's
/// `RLIMIT_STACK` below it is raised for hotlift's own `execve` (16 KiB
/// overflowed hotlift's stack: "stack overflow, aborting").
pub const OWN_STACK: u64 = 8 << 20;

static OWN_EXE: OnceLock<PathBuf> = OnceLock::new();

/// Remember hotlift's own executable (call first thing in `main`, before
/// anything could replace `/proc/self/exe`'s answer).
pub fn remember_own_exe() {
    if let Ok(p) = std::env::current_exe() {
        let _ = OWN_EXE.set(p);
    }
}

/// The largest `argv` or `envp` the kernel takes, in pointers.
const MAX_ARG_POINTERS: usize = 0x7fff_ffff / 8;
/// `MAX_ARG_STRLEN`: one argument or environment string.
const MAX_ARG_STRLEN: usize = 32 * 4096;

fn neg(errno: i32) -> i64 {
    -(errno as i64)
}

/// The guest strings a NULL-terminated pointer array at `at` names
/// (0: none), or the errno the kernel would give; `owned` says whether a
/// range is guest memory (an array or a string elsewhere, in hotlift's
/// memory, is `EFAULT` as where nothing is mapped: syscall/reach.rs R1).
/// As fs/exec.c copies them: a string without its NUL within
/// `MAX_ARG_STRLEN` bytes is `E2BIG` (was `EFAULT`), and an array with
/// more pointers than fit in the largest argument area (`max_ptrs`) is
/// `E2BIG` once its end is found, without reading its strings.
fn guest_strings(
    at: u64,
    max_ptrs: usize,
    owned: &dyn Fn(u64, u64) -> bool,
) -> Result<Vec<Vec<u8>>, i32> {
    if at == 0 {
        return Ok(Vec::new());
    }
    let ptrs = pointers(at, max_ptrs)?;
    if !owned(at, at + 8 * (ptrs.len() as u64 + 1)) {
        return Err(libc::EFAULT);
    }
    ptrs.into_iter()
        .map(|p| {
            let s = match read_cstr(p, MAX_ARG_STRLEN - 1) {
                Some(s) => s,
                // Readable for MAX_ARG_STRLEN bytes without a NUL:
                // strnlen_user's answer is too long.
                None if crate::guest_mem::read_bytes(p, MAX_ARG_STRLEN).is_some() => {
                    return Err(libc::E2BIG)
                }
                None => return Err(libc::EFAULT),
            };
            owned(p, p + s.len() as u64 + 1)
                .then_some(s)
                .ok_or(libc::EFAULT)
        })
        .collect()
}

/// The pointers of the NULL-terminated array at `at`, at most `keep` of
/// them: the kernel counts the whole array first (`EFAULT` where it
/// cannot be read, `E2BIG` past `MAX_ARG_STRINGS`), and more than `keep`
/// cannot fit (`E2BIG`); nothing past `keep` is kept in memory.
fn pointers(at: u64, keep: usize) -> Result<Vec<u64>, i32> {
    let mut out = Vec::new();
    let mut count = 0usize;
    let mut page = at;
    loop {
        let chunk = (4096 - (page % 4096)) as usize;
        let bytes = crate::guest_mem::read_bytes(page, chunk.max(8)).ok_or(libc::EFAULT)?;
        for w in bytes.chunks_exact(8) {
            let v = u64::from_le_bytes(w.try_into().expect("8 bytes"));
            if v == 0 {
                return if count > keep {
                    Err(libc::E2BIG)
                } else {
                    Ok(out)
                };
            }
            count += 1;
            if count > MAX_ARG_POINTERS {
                return Err(libc::E2BIG);
            }
            if count <= keep {
                out.push(v);
            }
        }
        page += bytes.len() as u64 - (bytes.len() % 8) as u64;
    }
}

/// The kernel's room for an `execve`'s strings and pointers, in bytes:
/// a quarter of the stack limit, at most 6 MiB, at least 128 KiB (as
/// fs/exec.c `bprm_stack_limits` counts).
fn arg_room() -> u64 {
    const STK_LIM: u64 = 8 << 20;
    const ARG_MAX: u64 = 32 * 4096;
    let mut rl = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit fills the struct (RLIMIT_STACK is the guest's:
    // limits.rs passes it through).
    let stack = if unsafe { libc::getrlimit(libc::RLIMIT_STACK, &mut rl) } == 0 {
        rl.rlim_cur
    } else {
        u64::MAX
    };
    (STK_LIM / 4 * 3).min(stack / 4).max(ARG_MAX)
}

/// Would the kernel refuse `execve` of `name` with `args` and `env` for
/// their size (E2BIG)? Checked before the point of no return: the call
/// that fails returns to the guest, as natively, instead of ending the
/// run after its profile was written. As fs/exec.c counts: the strings
/// with their NULs and the pointers, against [`arg_room`]; one string
/// longer than `MAX_ARG_STRLEN` too.
fn too_big<S: AsRef<[u8]>>(name: &[u8], args: &[S], env: &[S]) -> bool {
    let pointers = 8 * (args.len().max(1) + env.len()) as u64;
    let long = args
        .iter()
        .chain(env)
        .any(|s| s.as_ref().len() >= MAX_ARG_STRLEN);
    let strings: u64 = args
        .iter()
        .chain(env)
        .map(|s| s.as_ref().len() as u64 + 1)
        .sum();
    long || pointers + strings + name.len() as u64 + 1 > arg_room()
}

/// How the checked program will run.
enum Runs {
    Translated,
    /// E3, with the reason.
    Natively(String),
}

/// E1 for the ELF file at the end of the `#!` chain: the errno a native
/// `execve` would fail with, or how it runs.
fn check_elf(bytes: &[u8]) -> Result<Runs, i32> {
    match loader::plan(bytes) {
        Ok(plan) => match plan.interp.as_deref().map(loader::read_interp) {
            Some(Err(LoadError::Interp { error, .. })) => Err(match *error {
                LoadError::Unreadable(e) => e.raw_os_error().unwrap_or(libc::ENOENT),
                LoadError::Elf32 => return Ok(Runs::Natively("its interpreter is 32-bit".into())),
                _ => libc::ELIBBAD,
            }),
            Some(Err(_)) => Err(libc::ELIBBAD),
            _ => Ok(Runs::Translated),
        },
        Err(LoadError::Elf32) => Ok(Runs::Natively("a 32-bit program".into())),
        Err(_) => Err(libc::ENOEXEC),
    }
}

fn cstrings(v: impl IntoIterator<Item = Vec<u8>>) -> Vec<CString> {
    v.into_iter()
        .map(|mut s| {
            // Guest strings end at their first NUL already.
            s.retain(|&b| b != 0);
            CString::new(s).unwrap_or_default()
        })
        .collect()
}

impl Vm {
    /// `execveat(dirfd, path, argv, envp, flags)` (`execve` is
    /// `execveat(AT_FDCWD, …, 0)`): returns only with the guest's error.
    pub(crate) fn execve(&mut self, a: [u64; 5], nr: u64) -> Result<i64, VmError> {
        // What hotlift opens and reads for the call (the program, a
        // script's interpreter, the next hotlift) is its own: the guest's
        // limits must not fail it where the kernel needs no descriptor
        // (limits.rs I1; `RLIMIT_NOFILE` 0 made every execve EMFILE). The
        // next hotlift starts with them lifted and applies them to its
        // guest; a program run natively gets them back first.
        let limits = self.proc.guest_limits();
        crate::limits::lift();
        let r = self.execve_lifted(a, nr);
        limits.restore();
        r
    }

    fn execve_lifted(&mut self, a: [u64; 5], nr: u64) -> Result<i64, VmError> {
        let (dirfd, path, argv, envp, flags) = (a[0] as i32, a[1], a[2], a[3], a[4]);
        let Some(name) = read_cstr(path, libc::PATH_MAX as usize) else {
            return Ok(neg(libc::EFAULT));
        };
        let proc = self.proc.clone();
        let owned = |a: u64, b: u64| proc.lock().mem.owns_all(a, b);
        let max_ptrs = (arg_room() / 8) as usize;
        let strings = |at| guest_strings(at, max_ptrs, &owned);
        let (args, env) = match (strings(argv), strings(envp)) {
            (Ok(a), Ok(e)) => (a, e),
            (Err(e), _) | (_, Err(e)) => return Ok(neg(e)),
        };
        if flags & !(libc::AT_EMPTY_PATH | libc::AT_SYMLINK_NOFOLLOW) as u64 != 0 {
            return Ok(neg(libc::EINVAL));
        }
        if too_big(&name, &args, &env) {
            return Ok(neg(libc::E2BIG));
        }
        let (file, held) = match self.exec_file(dirfd, &name, flags) {
            Ok(f) => f,
            Err(e) => return Ok(neg(e)),
        };
        // E1: the kernel's checks, scripts followed.
        let launch = match script::follow(file.clone(), args.clone(), &script::check_executable) {
            Ok(l) => l,
            Err(e) => return Ok(neg(e.errno())),
        };
        if let Some((_, fd)) = held.as_ref().filter(|_| launch.path != file) {
            // E4: a script by descriptor reaches its interpreter as
            // `/dev/fd/N` (the next hotlift names it so), which a
            // close-on-exec descriptor cannot give (the kernel refuses,
            // ENOENT).
            // SAFETY: reads the flags of a descriptor.
            if unsafe { libc::fcntl(*fd, libc::F_GETFD) } & libc::FD_CLOEXEC != 0 {
                return Ok(neg(libc::ENOENT));
            }
        }
        let runs = match check_elf(&launch.bytes) {
            Ok(r) => r,
            Err(e) => return Ok(neg(e)),
        };
        let native = match runs {
            _ if self.opts().no_follow => true,
            Runs::Translated => false,
            Runs::Natively(why) => {
                crate::host::say!(
                    "hotlift: {}: {why}, which hotlift cannot translate: it runs natively, without a profile",
                    launch.path.display()
                );
                true
            }
        };
        let successor = self
            .proc
            .prof
            .process
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .exec_successor();
        let ignored = self.ignored_signals();
        let limits = self.proc.guest_limits();
        let print_summary = self.proc.prof.print_summary.load(Ordering::Acquire);
        let stack = crate::limits::kernel_get(libc::RLIMIT_STACK)
            .filter(|l| !native && l.cur < OWN_STACK && l.max > l.cur);
        let (program, argv) = if native {
            (file.clone(), args)
        } else {
            let state = ExecState {
                opts: self.opts().clone(),
                argv0: args.first().cloned(),
                execfn: name.clone(),
                ignored,
                process: successor,
                print_summary,
                limits: Some(limits.clone()),
                tsc_traps: self.tsc_traps,
                raw_names: crate::profile::names::raw(),
                mem_files: crate::guest_mem::mem_files(),
                held_fd: held
                    .as_ref()
                    .map(|(h, fd)| (std::os::fd::AsRawFd::as_raw_fd(h), *fd)),
                stack,
            };
            let own = OWN_EXE
                .get()
                .cloned()
                .unwrap_or_else(|| "/proc/self/exe".into());
            let mut v = vec![
                own.as_os_str().as_bytes().to_vec(),
                b"run".to_vec(),
                EXEC_STATE_ARG.as_bytes().to_vec(),
                serde_json::to_vec(&state).unwrap_or_default(),
                b"--".to_vec(),
                file.as_os_str().as_bytes().to_vec(),
            ];
            v.extend(args.into_iter().skip(1));
            (own, v)
        };
        if too_big(program.as_os_str().as_bytes(), &argv, &env) {
            // The guest's arguments fit (checked above), hotlift's own
            // with them (about 2 KB more) do not: stop before the point
            // of no return, the profile whole, rather than fail after it.
            return Err(VmError::UnsupportedSyscall {
                name: "execve whose arguments fit the kernel's limit only without hotlift's own",
                nr,
                at: crate::types::GuestAddr(self.ctx.rip() - 2),
            });
        }
        // The point of no return.
        self.proc.prof.print_summary.store(false, Ordering::Release);
        if let Some(l) = stack {
            crate::limits::set_stack(crate::limits::Limit {
                cur: OWN_STACK.min(l.max),
                max: l.max,
            });
        }
        if self.opts().strace {
            crate::strace::log(" = ? (the new program runs)\n");
        }
        self.record_syscall(nr, 0, 0);
        self.finish(Ending::Exec);
        if native {
            // The program is the guest's alone: the kernel gets its limits
            // as it set them (limits.rs I1, I2), and its time stamp
            // counter mode.
            limits.apply_all();
            if let Some((h, _)) = &held {
                // E4: the kernel opens the program before it closes it.
                // SAFETY: sets a flag of our own descriptor.
                unsafe {
                    libc::fcntl(
                        std::os::fd::AsRawFd::as_raw_fd(h),
                        libc::F_SETFD,
                        libc::FD_CLOEXEC,
                    )
                };
            }
            if self.tsc_traps {
                // SAFETY: no hotlift code runs after a successful execve.
                unsafe { libc::prctl(libc::PR_SET_TSC, libc::PR_TSC_SIGSEGV, 0, 0, 0) };
            }
        }
        self.signals_for_exec(ignored);
        // The new program inherits the guest's CPU mask, not the one core
        // this thread was pinned to (`sh -c nproc` printed 1 of 2).
        self.proc
            .affinity
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .apply_to_current();
        let prog = CString::new(program.as_os_str().as_bytes()).unwrap_or_default();
        let argv = cstrings(argv);
        let envp = cstrings(env);
        let mut argp: Vec<*const libc::c_char> = argv.iter().map(|s| s.as_ptr()).collect();
        argp.push(std::ptr::null());
        let mut envpp: Vec<*const libc::c_char> = envp.iter().map(|s| s.as_ptr()).collect();
        envpp.push(std::ptr::null());
        // SAFETY: NUL-terminated strings and NULL-terminated arrays that
        // live across the call.
        unsafe { libc::execve(prog.as_ptr(), argp.as_ptr(), envpp.as_ptr()) };
        crate::host::say!(
            "hotlift: execve of {} failed after the guest's profile was written: {}",
            program.display(),
            std::io::Error::last_os_error()
        );
        // SAFETY: _exit has no preconditions.
        unsafe { libc::_exit(crate::status::EXIT_HOTLIFT_FAILED) }
    }

    /// The file `execveat(dirfd, name, …, flags)` names, as a path a new
    /// process can open, or the errno. A program named by a descriptor
    /// (`AT_EMPTY_PATH`, `fexecve`'s `/proc/self/fd/N`, `/dev/fd/N`) is
    /// named by a copy of it that the `execve` keeps open (E4): the
    /// descriptor may be close-on-exec, and the file may have no name to
    /// open (a memfd, a file unlinked since).
    fn exec_file(
        &self,
        dirfd: i32,
        name: &[u8],
        flags: u64,
    ) -> Result<(PathBuf, Option<(std::os::fd::OwnedFd, i32)>), i32> {
        let fd_path = |fd: i32| -> Result<PathBuf, i32> {
            std::fs::read_link(format!("/proc/self/fd/{fd}")).map_err(|_| libc::EBADF)
        };
        let by_fd = if name.is_empty() && flags & libc::AT_EMPTY_PATH as u64 != 0 {
            Some(dirfd)
        } else {
            names_descriptor(name)
        };
        if let Some(fd) = by_fd {
            // SAFETY: a plain dup of the guest's descriptor (no
            // close-on-exec), owned here until the execve.
            let held = unsafe { libc::fcntl(fd, libc::F_DUPFD, 3) };
            if held < 0 {
                return Err(libc::EBADF);
            }
            // SAFETY: the descriptor just made is ours alone.
            let held =
                unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(held) };
            let path = PathBuf::from(format!(
                "/proc/self/fd/{}",
                std::os::fd::AsRawFd::as_raw_fd(&held)
            ));
            return Ok((path, Some((held, fd))));
        }
        if super::os::os().is_ok_and(|os| (os.names_self_exe)(name)) {
            // The guest's own program, not hotlift (selfview).
            return Ok((
                PathBuf::from(std::ffi::OsStr::from_bytes(self.proc.exe_path.as_bytes())),
                None,
            ));
        }
        let path = if name.is_empty() {
            if flags & libc::AT_EMPTY_PATH as u64 == 0 {
                return Err(libc::ENOENT);
            }
            fd_path(dirfd)?
        } else if name[0] == b'/' || dirfd == libc::AT_FDCWD {
            PathBuf::from(std::ffi::OsString::from_vec(name.to_vec()))
        } else {
            fd_path(dirfd)?.join(std::ffi::OsStr::from_bytes(name))
        };
        if flags & libc::AT_SYMLINK_NOFOLLOW as u64 != 0
            && std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink())
        {
            return Err(libc::ELOOP);
        }
        Ok((path, None))
    }

    /// Signals the guest ignores (bit `sig - 1`).
    fn ignored_signals(&self) -> u64 {
        (1..=64usize)
            .filter(|&s| self.proc.sig.handler(s) == libc::SIG_IGN as u64)
            .fold(0, |m, s| m | 1 << (s - 1))
    }

    /// E2: the kernel's dispositions and mask as the guest's would be
    /// after `execve` (handlers reset to default, ignored stays ignored).
    fn signals_for_exec(&mut self, ignored: u64) {
        let mask = self.guest_mask();
        for sig in 1..=64i32 {
            if sig == libc::SIGKILL || sig == libc::SIGSTOP {
                continue;
            }
            let handler = if ignored & 1 << (sig - 1) != 0 {
                libc::SIG_IGN
            } else {
                libc::SIG_DFL
            };
            let act = [handler as u64, 0u64, 0, 0];
            // SAFETY: installs SIG_DFL/SIG_IGN (no handler code) with the
            // kernel's struct layout (handler, flags, restorer, mask).
            unsafe {
                syscall6(
                    libc::SYS_rt_sigaction as u64,
                    [sig as u64, act.as_ptr() as u64, 0, 8, 0, 0],
                )
            };
        }
        // SAFETY: sets this thread's mask from a local.
        unsafe {
            syscall6(
                libc::SYS_rt_sigprocmask as u64,
                [
                    libc::SIG_SETMASK as u64,
                    &mask as *const u64 as u64,
                    0,
                    8,
                    0,
                    0,
                ],
            )
        };
    }
}

/// E4: the descriptor a path names: `/proc/self/fd/N`, `/proc/PID/fd/N`
/// with this process's id, `/dev/fd/N`.
fn names_descriptor(name: &[u8]) -> Option<i32> {
    let name = std::str::from_utf8(name).ok()?;
    let own = format!("/proc/{}/fd/", crate::guest_mem::own_pid());
    let rest = [
        "/proc/self/fd/",
        "/proc/thread-self/fd/",
        "/dev/fd/",
        own.as_str(),
    ]
    .iter()
    .find_map(|p| name.strip_prefix(p))?;
    (!rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()))
        .then(|| rest.parse().ok())
        .flatten()
}
