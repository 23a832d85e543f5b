//! Guest syscalls: pass through what is safe, emulate what must be
//! emulated, and refuse the rest with exactly `-ENOSYS`.
//!
//! This file holds the handling of one syscall ([`handle`]) and the small
//! emulations (`arch_prctl`, `clone3` as `clone`, the exits); which
//! number is passed, emulated or refused is plan.rs, and the signal
//! syscalls are signals.rs.
//!
//! I1: a syscall reaches the kernel unchanged only if it is on the
//!     pass-through list (plan.rs): it cannot change hotlift's FS/GS bases, signal
//!     handlers or threads, and the memory its arguments name is the
//!     guest's (reach.rs R1).
//! I2: after a syscall the guest sees the kernel's convention: RAX = result,
//!     RCX = address of the next instruction, R11 = RFLAGS.
//! I3: an unknown syscall returns exactly -ENOSYS (glibc falls back from
//!     clone3 only on that value) and is reported on stderr, naming it and
//!     the guest address: the first time each number is seen (as Valgrind
//!     does), every time with `--verbose`. A number that is no syscall at
//!     all fails natively the same way and is reported only with
//!     `--verbose`.
#![allow(unsafe_code)]

mod affinity;
mod control;
mod guest_io;
mod hidden;
mod mem;
mod memfile;
mod plan;
mod reach;
pub mod selfview;
mod signals;

use crate::contract::Reg;
use crate::dispatch::{Flow, Vm, VmError};
use crate::strace;
use crate::types::GuestAddr;

pub use crate::dispatch::{SignalState, ThreadSignals};
pub use crate::host::syscall6;
pub use mem::hold_guest_area;

pub(crate) use guest_io::guest_write_bytes;
use guest_io::{guest_read, guest_write};
use plan::{plan, Plan};
use signals::{fatal_self_signal, rt_sigaction, rt_sigpending, rt_sigprocmask, sigaltstack};

const ENOSYS: i64 = -(libc::ENOSYS as i64);
const EINVAL: i64 = -(libc::EINVAL as i64);
pub(crate) const EFAULT: i64 = -(libc::EFAULT as i64);

/// I3: is this the first unsupported call of number `nr` in this process?
fn first_unhandled(nr: u64) -> bool {
    use std::sync::atomic::{AtomicU64, Ordering};
    static SEEN: [AtomicU64; 8] = [const { AtomicU64::new(0) }; 8];
    let Some(word) = SEEN.get((nr / 64) as usize) else {
        // Beyond 511: rare enough to say every time.
        return true;
    };
    let bit = 1u64 << (nr % 64);
    word.fetch_or(bit, Ordering::Relaxed) & bit == 0
}

/// A syscall the kernel makes as it is (I1: a pass-through one, or one an
/// emulation leaves to it), unless it reaches beyond guest memory.
fn pass(vm: &Vm, nr: u64, a: [u64; 6]) -> i64 {
    match reach::check(vm, nr, &a) {
        Some(err) => err,
        // SAFETY: I1, and it names only guest memory (reach.rs R1); a
        // signal that ends the guest interrupts it (signal I4).
        None => unsafe { crate::runtime::guest_syscall(nr, a) },
    }
}

/// `process_vm_readv`/`process_vm_writev`: on the guest's own process
/// (its pid or a thread's), both iovec lists name memory of this process
/// and must be the guest's (reach.rs R1). Another process under hotlift
/// has hotlift's memory too, which no check here can see: refused with
/// EPERM, as a restrictive ptrace policy refuses it (README, threat model).
fn process_vm(vm: &Vm, nr: u64, a: [u64; 6]) -> i64 {
    // SAFETY: signal 0 to a thread of our own process only checks it is one.
    let own = unsafe {
        libc::syscall(
            libc::SYS_tgkill,
            crate::guest_mem::own_pid(),
            a[0] as i32,
            0,
        )
    } == 0;
    if !own {
        return -(libc::EPERM as i64);
    }
    pass(vm, nr, a)
}

fn exit_now(vm: &mut Vm, status: u64) -> ! {
    vm.finish(crate::profile::Ending::Exit {
        code: (status & 0xff) as i32,
    });
    // SAFETY: exit_group ends every thread; the profile is written.
    unsafe { libc::syscall(libc::SYS_exit_group, status as i32) };
    unreachable!("exit_group returned")
}

fn arch_prctl(vm: &mut Vm, code: u64, addr: u64) -> i64 {
    const SET_GS: u64 = 0x1001;
    const SET_FS: u64 = 0x1002;
    const GET_FS: u64 = 0x1003;
    const GET_GS: u64 = 0x1004;
    // The kernel refuses bases at or above TASK_SIZE_MAX (4-level paging).
    const TASK_SIZE_MAX: u64 = (1 << 47) - 4096;
    match code {
        SET_FS | SET_GS if addr >= TASK_SIZE_MAX => -(libc::EPERM as i64),
        SET_FS => {
            vm.ctx.fs_base.set(addr);
            0
        }
        SET_GS => {
            vm.ctx.guest_gs.set(addr);
            0
        }
        // CET shadow-stack controls would act on hotlift's own thread.
        0x5001..=0x5005 => -(libc::EINVAL as i64),
        GET_FS => {
            if guest_write(vm, addr, &vm.ctx.fs_base.get()) {
                0
            } else {
                EFAULT
            }
        }
        GET_GS => {
            if guest_write(vm, addr, &vm.ctx.guest_gs.get()) {
                0
            } else {
                EFAULT
            }
        }
        // CPUID faulting, CET, AMX permission: process-wide, harmless
        // (none touches FS/GS); the queries' results go to guest memory
        // only (reach.rs).
        _ => pass(vm, libc::SYS_arch_prctl as u64, [code, addr, 0, 0, 0, 0]),
    }
}

/// The write-protected pages (dispatch/smc.rs I4) a syscall may write:
/// its buffer, the buffers of its iovecs, the pages its arguments point
/// into; at most 17 (more than a partial flush takes, smc.rs I6).
fn protected_written(vm: &Vm, nr: u64, a: &[u64; 6]) -> Vec<u64> {
    const MAX: usize = 17;
    let mut out: Vec<u64> = Vec::new();
    let mut hit = |start: u64, len: u64| {
        let first = start & !(crate::guest_mem::PAGE - 1);
        let end = start.saturating_add(len.max(1));
        for p in vm.proc.protected.pages_in(first, end, MAX) {
            if out.len() < MAX && !out.contains(&p) {
                out.push(p);
            }
        }
    };
    let buffer = match nr as i64 {
        libc::SYS_read
        | libc::SYS_pread64
        | libc::SYS_recvfrom
        | libc::SYS_getrandom
        | libc::SYS_readlink => Some((a[1], a[2])),
        libc::SYS_readlinkat => Some((a[2], a[3])),
        libc::SYS_getdents64 | libc::SYS_getdents => Some((a[1], a[2])),
        _ => None,
    };
    if let Some((s, l)) = buffer {
        hit(s, l.min(1 << 30));
    }
    // The iovecs written: `readv`'s, `process_vm_readv`'s local ones, and
    // `process_vm_writev`'s remote ones when the process is this one.
    let iovecs = match nr as i64 {
        libc::SYS_readv | libc::SYS_preadv | libc::SYS_preadv2 | libc::SYS_process_vm_readv => {
            Some((a[1], a[2]))
        }
        libc::SYS_process_vm_writev if a[0] as i32 == crate::guest_mem::own_pid() => {
            Some((a[3], a[4]))
        }
        _ => None,
    };
    if let Some((at, n)) = iovecs {
        for i in 0..n.min(1024) {
            if let Some([base, len]) = guest_read::<[u64; 2]>(at + 16 * i) {
                hit(base, len.min(1 << 30));
            }
        }
    }
    for &x in a {
        hit(x, 1);
    }
    out
}

/// `clone3(args, size)` as the arguments of the `clone` it amounts to
/// (`flags | exit_signal, stack top, parent_tid, child_tid, tls`), or the
/// result to give the guest: `-ENOSYS` for what only clone3 can ask for
/// (a pidfd, chosen tids, a cgroup), so glibc falls back to `clone` (I3).
fn clone3_as_clone(args: u64, size: u64) -> Result<[u64; 6], i64> {
    const VER0: u64 = 64;
    if !(VER0..=4096).contains(&size) {
        return Err(EINVAL);
    }
    let bytes = crate::guest_mem::read_bytes(args, size as usize).ok_or(EFAULT)?;
    let word = |i: usize| u64::from_le_bytes(bytes[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
    let flags = word(0);
    let (child_tid, parent_tid, exit_signal) = (word(2), word(3), word(4));
    let (stack, stack_size, tls) = (word(5), word(6), word(7));
    if bytes[VER0 as usize..].iter().any(|&b| b != 0)
        || flags & (libc::CLONE_PIDFD as u64 | 0x2_0000_0000/* CLONE_INTO_CGROUP */) != 0
    {
        return Err(ENOSYS);
    }
    // The kernel's clone3_args_valid: a sibling or a thread has no exit
    // signal of its own.
    let sibling_or_thread = flags & (libc::CLONE_PARENT | libc::CLONE_THREAD) as u64 != 0;
    if exit_signal > 0xff
        || flags & 0xff != 0
        || (stack == 0) != (stack_size == 0)
        || (sibling_or_thread && exit_signal != 0)
    {
        return Err(EINVAL);
    }
    let top = if stack == 0 { 0 } else { stack + stack_size };
    Ok([flags | exit_signal, top, parent_tid, child_tid, tls, 0])
}

/// `openat2`'s open flags: the first field of its `struct open_how` (0
/// where the guest's pointer reads nothing: the kernel fails the call).
pub(super) fn open_how_flags(how: u64) -> u64 {
    guest_read::<u64>(how).unwrap_or(0)
}

/// Does the syscall close or replace fd 2 (hotlift's messages then keep
/// their own copy of it: host::keep_stderr)?
fn replaces_stderr(nr: u64, a: &[u64; 6]) -> bool {
    match nr as i64 {
        libc::SYS_close => a[0] == 2,
        libc::SYS_dup2 | libc::SYS_dup3 => a[1] == 2,
        libc::SYS_close_range => {
            a[0] <= 2 && 2 <= a[1] && a[2] & libc::CLOSE_RANGE_CLOEXEC as u64 == 0
        }
        _ => false,
    }
}

/// The OS layer's entry points for the engine (dispatch/os.rs): the
/// syscall layer's and the signal layer's.
pub fn os() -> crate::dispatch::Os {
    crate::dispatch::Os {
        syscall: handle,
        install_signals: crate::signal::install,
        install_thread: crate::signal::install_thread,
        adopt_guest_view: selfview::adopt_guest_view,
        names_self_exe: selfview::names_self_exe,
        hold_guest_area,
    }
}

/// Handle the syscall the guest stopped at (`ctx.rip()` is the next
/// instruction).
pub fn handle(vm: &mut Vm) -> Result<Flow, VmError> {
    let g = |r| vm.ctx.reg(r);
    // The kernel reads the number from EAX only (do_syscall_64 takes an int).
    let nr = g(Reg::Rax) as u32 as u64;
    let a = [Reg::Rdi, Reg::Rsi, Reg::Rdx, Reg::R10, Reg::R8, Reg::R9].map(g);
    if vm.opts().strace {
        strace::log(&strace::format_call(nr, &a));
    }
    let at = GuestAddr(vm.ctx.rip() - 2);
    if nr == libc::SYS_mremap as u64
        && crate::guest_mem::shared_with_host(a[0], a[0].saturating_add(a[1].max(1)))
    {
        // mem/mod.rs I8: the vDSO cannot move from under hotlift, which
        // calls it too.
        return Err(VmError::UnsupportedSyscall {
            name: "mremap of the vDSO or its data pages",
            nr,
            at,
        });
    }
    if replaces_stderr(nr, &a) {
        crate::host::keep_stderr();
    }
    // hidden.rs N1, N2: hotlift's own descriptors and threads.
    let hidden = hidden::check(vm, nr, &a);
    let queued = match hidden {
        Some(_) => None,
        None => signals::queue_owned_to_self(vm, nr, &a).transpose()?,
    };
    // memfile.rs M2: a read or write on a `mem` file, decided now and
    // made in the usual place below.
    let mem_file = match nr as i64 {
        libc::SYS_read
        | libc::SYS_pread64
        | libc::SYS_readv
        | libc::SYS_preadv
        | libc::SYS_preadv2
        | libc::SYS_write
        | libc::SYS_pwrite64
        | libc::SYS_writev
        | libc::SYS_pwritev
        | libc::SYS_pwritev2
            if memfile::watching() =>
        {
            memfile::access(vm, nr, &a)
        }
        _ => None,
    };
    let written = if vm.proc.protected.is_empty() {
        Vec::new()
    } else {
        protected_written(vm, nr, &a)
    };
    if !written.is_empty() {
        // dispatch/smc.rs I4: the kernel (or an emulation below: readlink
        // of /proc/self/exe wrote nothing into code's page, EFAULT) would
        // hit a page hotlift write-protected; give the pages back first,
        // and drop their translations.
        let proc = vm.proc.clone();
        let mut l = proc.lock();
        vm.flush_pages(
            &mut l,
            crate::dispatch::process::FlushCause::SyscallIntoCode,
            &written,
        );
    }
    if crate::guest_mem::exec_views() {
        if let libc::SYS_write
        | libc::SYS_pwrite64
        | libc::SYS_writev
        | libc::SYS_pwritev
        | libc::SYS_pwritev2 = nr as i64
        {
            // dispatch/smc.rs I7: new bytes for code mapped from the file.
            mem::file_written(vm, a[0] as i32);
        }
    }
    // A result hotlift gives instead of the kernel's.
    let own = match nr as i64 {
        _ if hidden.is_some() => hidden,
        _ if queued.is_some() => queued,
        libc::SYS_getdents64 | libc::SYS_getdents => hidden::listing(vm, nr, &a),
        libc::SYS_readlink => selfview::readlink(vm, None, a[0], a[1], a[2]),
        libc::SYS_readlinkat => selfview::readlink(vm, Some(a[0]), a[1], a[2], a[3]),
        libc::SYS_open => selfview::open(vm, nr, a, 0, a[1]),
        libc::SYS_openat => selfview::open(vm, nr, a, 1, a[2]),
        libc::SYS_openat2 => selfview::open(vm, nr, a, 1, open_how_flags(a[2])),
        _ => None,
    };
    if let Some(sig) = fatal_self_signal(vm, nr, &a) {
        // The kernel is about to kill us: the profile goes first.
        vm.record_syscall(nr, 0, 0);
        vm.finish(crate::profile::Ending::Signal { signal: sig });
        // One hotlift handles itself (a fault signal, signal 64 of its
        // kicks) would reach its handler, not end the process. (Any other
        // reaches the handler that ends the guest, after this call's
        // return is logged.)
        if crate::dispatch::hotlift_owns(sig) {
            crate::status::set_default(sig);
        }
    }
    // The duration goes to the monitor only: no clock reads without one.
    let t0 = vm.prof.ring.is_some().then(std::time::Instant::now);
    let ret = match plan(nr as i64) {
        _ if own.is_some() => own.unwrap_or_default(),
        _ if mem_file.is_some() => mem_file.as_ref().map_or(0, |m| m.call(nr)),
        Plan::Pass => pass(vm, nr, a),
        Plan::NoSys => {
            // A number the kernel has no syscall for fails with ENOSYS
            // natively too: said only with --verbose.
            let known = strace::syscall_name(nr).is_some();
            if (known && first_unhandled(nr)) || vm.opts().verbose {
                let name = strace::syscall_name(nr).unwrap_or("unknown");
                crate::host::say!(
                    "hotlift: guest syscall {name} ({nr}) at {at} is not supported: it returns -ENOSYS{}",
                    if vm.opts().verbose { "" } else { " (said once; --verbose says it each time)" }
                );
            }
            ENOSYS
        }
        Plan::Emulate => match nr as i64 {
            libc::SYS_brk => mem::brk(vm, a[0]),
            libc::SYS_mmap => mem::mmap(vm, a),
            libc::SYS_munmap => mem::munmap(vm, a),
            libc::SYS_mprotect => mem::mprotect(vm, a),
            libc::SYS_mremap => mem::mremap(vm, a),
            libc::SYS_arch_prctl => arch_prctl(vm, a[0], a[1]),
            libc::SYS_rt_sigaction => rt_sigaction(vm, a),
            libc::SYS_sigaltstack => sigaltstack(vm, a[0], a[1]),
            libc::SYS_rt_sigprocmask => rt_sigprocmask(vm, a),
            libc::SYS_rt_sigpending => rt_sigpending(vm, a),
            libc::SYS_sched_getaffinity => affinity::get(vm, a),
            libc::SYS_sched_setaffinity => affinity::set(vm, a),
            libc::SYS_rseq => ENOSYS,
            libc::SYS_process_vm_readv | libc::SYS_process_vm_writev => process_vm(vm, nr, a),
            libc::SYS_mlockall => mem::lock::mlockall(vm, a[0]),
            libc::SYS_munlockall => mem::lock::munlockall(vm),
            libc::SYS_prctl
            | libc::SYS_getrlimit
            | libc::SYS_setrlimit
            | libc::SYS_prlimit64
            | libc::SYS_seccomp
            | libc::SYS_personality => control::handle(vm, nr, a),
            libc::SYS_exit | libc::SYS_exit_group => {
                vm.record_syscall(nr, 0, 0);
                if vm.opts().strace {
                    strace::log(" = ?\n");
                }
                if nr as i64 == libc::SYS_exit {
                    // Ends the process only as its last thread.
                    let crate::dispatch::ThreadEnd::Exited = vm.exit_thread(a[0]);
                    return Ok(Flow::ThreadExit);
                }
                exit_now(vm, a[0])
            }
            libc::SYS_clone if a[0] & libc::CLONE_THREAD as u64 != 0 => vm.clone_thread(a)?,
            libc::SYS_clone => vm.fork_process(a, nr)?,
            libc::SYS_clone3 => match clone3_as_clone(a[0], a[1]) {
                Ok(c) if c[0] & libc::CLONE_THREAD as u64 != 0 => vm.clone_thread(c)?,
                Ok(c) => vm.fork_process(c, nr)?,
                Err(e) => e,
            },
            libc::SYS_execve => vm.execve([libc::AT_FDCWD as u64, a[0], a[1], a[2], 0], nr)?,
            libc::SYS_execveat => vm.execve([a[0], a[1], a[2], a[3], a[4]], nr)?,
            libc::SYS_fork => vm.fork_process([libc::SIGCHLD as u64, 0, 0, 0, 0, 0], nr)?,
            libc::SYS_vfork => vm.fork_process(
                [
                    (libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD) as u64,
                    0,
                    0,
                    0,
                    0,
                    0,
                ],
                nr,
            )?,
            libc::SYS_rt_sigreturn => {
                // The frame replaces the whole context: no result.
                vm.record_syscall(nr, 0, 0);
                if vm.opts().strace {
                    strace::log(" = ?\n");
                }
                vm.sigreturn()?;
                return Ok(Flow::Continue);
            }
            libc::SYS_set_tid_address => {
                // threads.rs I2: the kernel's word is hotlift's C library's.
                vm.clear_tid = a[0];
                // SAFETY: gettid has no preconditions.
                unsafe { libc::gettid() as i64 }
            }
            _ => unreachable!("syscall {nr} planned as emulated without an emulation"),
        },
    };
    // The descriptors a call gave the guest (selfview.rs I7, memfile.rs
    // M1, M2).
    let ret = match nr as i64 {
        libc::SYS_open => selfview::opened(vm, ret, a[1]),
        libc::SYS_openat => selfview::opened(vm, ret, a[2]),
        libc::SYS_openat2 => selfview::opened(vm, ret, open_how_flags(a[2])),
        libc::SYS_recvmsg | libc::SYS_recvmmsg => {
            memfile::received(nr, &a, ret);
            ret
        }
        _ => ret,
    };
    // mem/cut.rs C1: a file cut under code mapped from it.
    if let libc::SYS_ftruncate
    | libc::SYS_truncate
    | libc::SYS_fallocate
    | libc::SYS_creat
    | libc::SYS_open
    | libc::SYS_openat
    | libc::SYS_openat2 = nr as i64
    {
        mem::cut::after(vm, nr, &a, ret);
    }
    if vm.ctx.take_sys_restart() {
        // signal/deliver.rs D3: the syscall instruction runs again after
        // the guest's handler; it did not retire now.
        if vm.opts().strace {
            strace::log(" = ? (restarted after a signal handler)\n");
        }
        vm.ctx.set_reg(Reg::Rcx, vm.ctx.rip());
        vm.ctx.set_reg(Reg::R11, vm.ctx.rflags.get());
        vm.ctx.set_rip(vm.ctx.rip() - 2);
        vm.record_unretired(1);
        return Ok(Flow::Continue);
    }
    vm.record_syscall(nr, ret, t0.map_or(0, |t| t.elapsed().as_nanos() as u64));
    if vm.opts().strace {
        strace::log(&format!("{}\n", strace::format_return(nr, &a, ret)));
    }
    // I2.
    vm.ctx.set_reg(Reg::Rax, ret as u64);
    vm.ctx.set_reg(Reg::Rcx, vm.ctx.rip());
    vm.ctx.set_reg(Reg::R11, vm.ctx.rflags.get());
    Ok(Flow::Continue)
}
