//! Guest processes: `fork`, `vfork` and `clone` without `CLONE_THREAD`.
//! The child keeps running under hotlift, in a real child process of its
//! own (a host `fork`), with its own monitor and its own profile.
//!
//! A host `fork` copies hotlift as it stands: translated code, the guest's
//! memory, every table; but only the forking thread, and the memory that
//! is `MAP_SHARED` stays shared with the parent. So:
//!
//! F1: nothing another host thread holds can be locked in the child: one
//!     fork at a time (`Proc::forking`: two threads forking at once
//!     could each wait for the other, one for the monitor's pause with
//!     the monitor handle locked, one for that handle with the pause
//!     held); the monitor thread is paused between rounds first (monitor
//!     I4: no lock held, no lazy initialisation under way — a child once
//!     hung on a formatter table the parent's monitor was building at the
//!     fork), then the forking thread holds the translation lock, the
//!     superblock publish lock, the image log, the monitor handle and the
//!     thread registry across the fork (in that order, the order every
//!     other path takes them in), and last the leaf locks, which no
//!     thread holds while it takes another: the guest's limits, its CPU
//!     mask, the strace prefix, stderr (a child hung on the CPU mask a
//!     thread being created held at the fork, 1 run in ~30 of four
//!     threads forking) and the gate of the protected code pages, which a
//!     signal handler on another thread takes to give a page back (a
//!     child hung at its first flush, 1 run in ~8 of three threads
//!     storing into code while the main one forked). glibc's `fork`
//!     makes its own allocator safe.
//! F2: the child keeps every block translation: blocks push the same exit
//!     words in any process, and the child's monitor makes a block's
//!     entries when it first sees one (tables words.rs I2). The code
//!     memory holding them is shared with the parent, each copying a chunk
//!     when it first writes there (cache I8): the parent marks the chunks
//!     before the fork, while nothing can write code, and the child maps
//!     memory of its own above them before anything writes code (the
//!     parent copied all its code to a new object at every fork before:
//!     3.4 ms of a python fork's 10). The superblocks stay too, heads
//!     patched and code shared the same way (cache/shared.rs I4): the
//!     child's monitor takes over those the parent's had published
//!     (superblock/build.rs I3) and makes their units when they first run
//!     (tables/units.rs I4). (Putting every head back instead wrote into
//!     20 chunks of a python child's code, 2.6 ms of copies a fork.) A
//!     child of a run with path profiling (path-profiled code reports to
//!     the parent's path tables) flushes every translation instead,
//!     sharing only the shared stubs.
//! F3: the child's profile starts empty at the fork (a new monitor, idle
//!     until its ring fills, 10 ms pass or the child ends: monitor I5; a
//!     new ring for its one thread; the parent's monitor state is
//!     abandoned, never joined) and is written to its own file
//!     (profile/process.rs).
//! F4: `vfork` (and `clone` with `CLONE_VM | CLONE_VFORK`, glibc's
//!     `posix_spawn`) runs as a fork whose parent waits until the child
//!     has called `execve` or ended, as the kernel suspends a vfork
//!     parent: the child holds the write end of a close-on-exec pipe the
//!     parent reads. The child runs on its own copy of memory, so a
//!     vfork child's stores are not seen by its parent (what `posix_spawn`
//!     writes back on a failed `execve` is lost: the parent sees the
//!     child exit with status 127 instead of an error).
//! F6: a child whose profile will be written finds its parent's modules'
//!     symbols and the program's SHA-256 already read: the parent reads
//!     them before the fork, once (module_files.rs `MODULE_FILES`, a lock
//!     only this thread can hold then), and reads them from there again at
//!     its own end. Each forked python child read and hashed 9 MB of
//!     files for its profile, 60 % of its time.
//! F7: the files are read ahead, on a thread of their own while the guest
//!     runs (module_files.rs A1-A3); the fork waits until that thread has
//!     stopped, so the child inherits no lock it held and no file half
//!     read.
//! F8: a vfork parent's monitor stays paused (F1) until the child has
//!     called `execve` or ended, for at most `VFORK_HOLD_MS`: until then
//!     every page of the parent is shared copy-on-write with the child,
//!     and each the monitor wrote first was copied, its TLB flush an
//!     interrupt to the core of any other thread of the parent (python's
//!     50 spawns: ~80 a spawn). Once the child's memory is gone, a write
//!     only makes the page writable again.
//! F9: before each fork the parent makes the blocks its earlier children
//!     made (their path after the fork, which it never ran itself), so
//!     that the child inherits them (forkpath.rs): a python child made
//!     ~90 blocks again in every fork.
#![allow(unsafe_code)]

use std::sync::atomic::Ordering;

use super::{Vm, VmError};
use crate::contract::Reg;
use crate::types::GuestAddr;

/// `clone` flags a new process may carry (with `CLONE_VM` only together
/// with `CLONE_VFORK`, F4), beyond the exit signal in the low byte.
/// `CLONE_UNTRACED` only keeps a tracer from attaching to the child
/// through the parent's fork events, and `CLONE_PTRACE` traces the child
/// only if the caller is traced; the guest has no tracer (`ptrace` is not
/// emulated), so hotlift's fork (glibc's) goes without either.
const PROCESS_OK: u64 = (libc::CLONE_VM
    | libc::CLONE_UNTRACED
    | libc::CLONE_PTRACE
    | libc::CLONE_VFORK
    | libc::CLONE_SETTLS
    | libc::CLONE_PARENT_SETTID
    | libc::CLONE_CHILD_SETTID
    | libc::CLONE_CHILD_CLEARTID) as u64;

impl Vm {
    /// `fork` (`[SIGCHLD, 0, …]`), `vfork` (`[CLONE_VM | CLONE_VFORK |
    /// SIGCHLD, 0, …]`) or `clone(flags, stack, parent_tid, child_tid,
    /// tls)` making a process: the child's pid in the parent, 0 in the
    /// child, or the kernel's error.
    pub(crate) fn fork_process(&mut self, a: [u64; 6], nr: u64) -> Result<i64, VmError> {
        // The child's own code memory, the vfork pipe and the child's
        // monitor are hotlift's: the guest's limits must not starve them
        // (limits.rs I1); both sides go on with the guest's (which never
        // reach the chunks copied later, cache I8: `RLIMIT_AS` stays out
        // of the kernel, limits.rs I2, and the copies are no files).
        let limits = self.proc.guest_limits();
        crate::limits::lift();
        let r = self.fork_with_room(a, nr);
        limits.restore();
        r
    }

    fn fork_with_room(&mut self, a: [u64; 6], nr: u64) -> Result<i64, VmError> {
        let (flags, stack, ptid, ctid, tls) = (a[0], a[1], a[2], a[3], a[4]);
        let at = GuestAddr(self.ctx.rip() - 2);
        let unsupported = |why: &'static str| VmError::UnsupportedSyscall { name: why, nr, at };
        let vm_shared = flags & libc::CLONE_VM as u64 != 0;
        let vfork = flags & libc::CLONE_VFORK as u64 != 0;
        if vm_shared && !vfork {
            return Err(unsupported(
                "clone with CLONE_VM but without CLONE_THREAD or CLONE_VFORK",
            ));
        }
        if flags & !(PROCESS_OK | 0xff) != 0 {
            return Err(unsupported("clone of a process with unsupported flags"));
        }
        if flags & 0xff != libc::SIGCHLD as u64 {
            return Err(unsupported(
                "clone of a process with an exit signal other than SIGCHLD",
            ));
        }
        // F4: the parent waits for EOF on `wait_fd`.
        let mut fds = [-1i32; 2];
        // SAFETY: pipe2 writes two descriptors into our array.
        if vfork && unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Ok(-(std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EAGAIN) as i64));
        }
        if vfork {
            hold_vfork_pipe(&mut fds);
        }
        let proc = self.proc.clone();
        let parent_profile = proc.prof.profile_path().map(|p| p.display().to_string());
        // F1: one fork at a time, the monitor thread still (monitor I4),
        // then the locks in the documented order.
        let one = proc.forking.lock().unwrap_or_else(|e| e.into_inner());
        // F9: what earlier children made, made here for the next.
        self.prepare_fork_paths();
        // Read once here, not by every child (anon.rs R1).
        crate::anon::max_map_count();
        let paused = proc
            .prof
            .monitor
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map(|m| m.pause());
        let mut locked = proc.lock();
        let publish = proc
            .view
            .shared
            .publish
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let images = proc.prof.images();
        // F7: no thread reading files, whose locks the child would find
        // held.
        super::module_files::settle();
        if parent_profile.is_some() {
            // The child's profile finds the files read (F6).
            super::module_files::prime_module_cache(&images.records);
        }
        let mut monitor = proc.prof.monitor.lock().unwrap_or_else(|e| e.into_inner());
        let (mut threads, stop) = proc.threads.for_fork();
        // F2: the code both keep is shared from here on, marked while
        // nothing can write code; path-profiled code is the parent's.
        // (A vfork child keeps it too, though it runs only a little code
        // before its `execve`: starting empty cost python's spawn helper
        // more than a copy of all the code, 8 ms against 3, as the flush
        // and every first write to the child's copy-on-write tables fault.)
        let keep = proc.paths.is_none();
        // Held still by the paused monitor (cache/shared.rs I4).
        let arena_used = proc.view.shared.arena_used();
        locked.cache.mem.before_fork(keep, arena_used);
        // F1: the leaf locks, last.
        let leaves = (
            proc.limits.lock().unwrap_or_else(|e| e.into_inner()),
            proc.affinity.lock().unwrap_or_else(|e| e.into_inner()),
            crate::strace::hold_prefix(),
            std::io::stderr().lock(),
            proc.protected.hold_gate(),
        );
        // SAFETY: glibc's fork; the child is this thread alone, with every
        // lock it could need held by itself (F1).
        let pid = unsafe { libc::fork() };
        drop(leaves);
        if pid < 0 {
            let e = std::io::Error::last_os_error();
            drop(paused);
            for fd in fds.into_iter().filter(|&fd| fd >= 0) {
                // SAFETY: our own fresh descriptors.
                unsafe { libc::close(fd) };
            }
            return Ok(-(e.raw_os_error().unwrap_or(libc::EAGAIN) as i64));
        }
        if pid == 0 {
            // Before anything is mapped (arena.rs A2).
            crate::arena::forked();
            crate::anon::forked();
            crate::guest_mem::forked();
            crate::own_thread::forked();
            // The parent's monitor did not come along: nothing to resume.
            std::mem::forget(paused);
            super::process::Threads::keep_only(&mut threads, &self.entry, stop);
            drop(threads);
            // Its monitor thread is about to start (anon.rs R1), and the
            // copied descriptor table holds only the open numbers: grown
            // again while this thread is alone (host.rs H2).
            crate::anon::room_for_thread(locked.mem.spans());
            crate::host::grow_fd_table();
            // F2. A child that cannot have code memory of its own ends
            // here, before any of its code ran: its monitor is still the
            // parent's, which a failure's usual path would wait for.
            if let Err(e) = locked.cache.mem.after_fork_child(keep, arena_used) {
                crate::host::say!("hotlift: forked child: cannot copy the code cache: {e}");
                // SAFETY: _exit has no preconditions.
                unsafe { libc::_exit(crate::status::EXIT_HOTLIFT_FAILED) }
            }
            // kept/mod.rs K3: a forked child keeps nothing.
            locked.kept.forked();
            // F9: it reports the blocks it makes to this parent.
            locked.fork_paths.forked();
            locked.cache.forked();
            // F3. This thread runs where the process could before the
            // parent's monitor pinned it; a forked child's monitor does
            // not pin (monitor::PIN).
            proc.affinity
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .apply_to_current();
            proc.prof.restart_after_fork(
                &mut monitor,
                &proc.opts,
                &proc.view.shared,
                parent_profile,
            );
            drop(monitor);
            drop(images);
            drop(publish);
            // Flushes from here on are the child's own (the parent's are
            // in its profile), as are translation time and dispatcher
            // counts below.
            for n in &proc.flush_causes {
                n.store(0, Ordering::Relaxed);
            }
            if !keep {
                self.flush(&mut locked, super::process::FlushCause::Fork);
            }
            // Translation time and dispatcher counts from here on are the
            // child's own.
            locked.translate_ticks = 0;
            locked.kept.placed = 0;
            self.proc.dispatch.reset();
            drop(locked);
            drop(one);
            self.after_fork_child(flags, stack, ctid, tls, fds)?;
            return Ok(0);
        }
        drop(threads);
        drop(monitor);
        drop(images);
        drop(publish);
        drop(locked);
        drop(one);
        // F8: a vfork parent gives the monitor back after the wait.
        let held = if vfork {
            paused
        } else {
            drop(paused);
            None
        };
        if flags & libc::CLONE_PARENT_SETTID as u64 != 0 {
            self.write_guest(ptid, &(pid as u32).to_le_bytes());
        }
        if vfork {
            // F8: the monitor stays paused while the child shares pages.
            let gone = wait_for_exec(fds, VFORK_HOLD_MS);
            drop(held);
            if !gone {
                wait_for_exec([fds[0], -1], -1);
                // Monitor I6: this thread's copy-on-write faults begin now.
                if let Some(m) = proc
                    .prof
                    .monitor
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .as_ref()
                {
                    m.keep_still();
                }
            }
        }
        Ok(pid as i64)
    }

    /// F9: the blocks the children forked so far made that this process
    /// has not, made now, as its dispatcher would (forkpath.rs FP2):
    /// where its memory is executable and it has no block; then linked
    /// from the direct exits that go to them, and in this thread's lookup
    /// table (the child's thread is this one's copy): a child whose code
    /// is still its parent's links no exit (cache I8), and went through
    /// the dispatcher ~90 times. Not under path profiling, whose children
    /// start from empty code (F2).
    fn prepare_fork_paths(&mut self) {
        if self.proc.paths.is_some() {
            return;
        }
        let proc = self.proc.clone();
        let mut l = proc.lock();
        let max = proc.opts.max_block_insns as usize;
        let mut made = std::collections::HashSet::new();
        for addr in l.fork_paths.take_new() {
            let at = GuestAddr(addr);
            if l.cache.lookup(at).is_some() || l.mem.exec_end(addr).is_none() {
                continue;
            }
            // FP4: one that cannot be made is the child's to make.
            match self.translate_with(&mut l, at, max, true, true) {
                Ok(id) if l.cache.lookup(at) == Some(id) => {
                    l.fork_paths.prepared += 1;
                    made.insert(addr);
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
        if made.is_empty() || proc.opts.no_chain || self.prelink_to(&mut l, 0, Some(&made)).is_err()
        {
            return;
        }
        self.sync_ibl();
        for &addr in &made {
            if let Some(id) = l.cache.lookup(GuestAddr(addr)) {
                let host = l.cache.block(id).host;
                self.ibl.insert(GuestAddr(addr), host);
            }
        }
    }

    /// The child's side once its process is its own (F2, F3): its thread's
    /// identity, profiling and registers as a forked child starts.
    fn after_fork_child(
        &mut self,
        flags: u64,
        stack: u64,
        ctid: u64,
        tls: u64,
        fds: [i32; 2],
    ) -> Result<(), VmError> {
        // SAFETY: gettid has no preconditions.
        let tid = unsafe { libc::gettid() };
        self.entry.tid.store(tid, Ordering::SeqCst);
        crate::strace::set_process_prefix(Some(std::process::id()));
        // A vfork pipe this process inherited from its own vfork parent
        // is not its child's to hold (F4); this one's write end is.
        let inherited = self.proc.vfork_fd.swap(fds[1], Ordering::AcqRel);
        // The parent's vfork pipes (this fork's read end, or another
        // thread's vfork waiting meanwhile) are not this process's to
        // hold: a write end kept here would hold that wait until this
        // process's own exec. This fork's write end is.
        use crate::host::{set_own_fd, take_own_fd, OwnFd};
        let others = [take_own_fd(OwnFd::VforkWait), take_own_fd(OwnFd::VforkExec)];
        if fds[1] >= 0 {
            set_own_fd(OwnFd::VforkExec, fds[1]);
        }
        let others = others
            .into_iter()
            .filter(|&fd| fd != fds[0] && fd != fds[1] && fd != inherited);
        for fd in [inherited, fds[0]]
            .into_iter()
            .chain(others)
            .filter(|&fd| fd >= 0)
        {
            // SAFETY: descriptors hotlift opened and the guest never saw.
            unsafe { libc::close(fd) };
        }
        let prof =
            self.proc.prof.thread(&self.ctx, tid).map_err(|e| {
                VmError::Host(format!("forked child: cannot set up profiling: {e}"))
            })?;
        // The handler's ring first, then the parent's goes (mailbox.rs M4).
        self.mail.set_ring(prof.ring.as_ref());
        self.prof = prof;
        // A child starts with no pending signals: what hotlift queued for
        // the parent's handlers stays the parent's.
        let mask = self.guest_mask();
        self.ctx.sig_queued().store(0, Ordering::Release);
        self.mail.sig.held.store(0, Ordering::Release);
        self.mail.sig.pending_own.store(0, Ordering::Release);
        self.set_guest_mask(mask);
        if stack != 0 {
            self.ctx.set_reg(Reg::Rsp, stack);
        }
        if flags & libc::CLONE_SETTLS as u64 != 0 {
            self.ctx.fs_base.set(tls);
        }
        if flags & libc::CLONE_CHILD_SETTID as u64 != 0 {
            self.write_guest(ctid, &(tid as u32).to_le_bytes());
        }
        if flags & libc::CLONE_CHILD_CLEARTID as u64 != 0 {
            self.clear_tid = ctid;
        }
        Ok(())
    }
}

/// F8: how long a vfork parent keeps its monitor paused waiting for the
/// child's `execve` or end (its other threads' rings may fill meanwhile).
const VFORK_HOLD_MS: i32 = 50;

/// How often a vfork parent's wait looks for a signal that ends the guest
/// (the host handlers restart the poll: signal D3).
const FATAL_LOOK_MS: i32 = 20;

/// F4: wait until the child closes the pipe's write end (by `execve` or
/// by ending), closing this side's copy of it first (`fds[1]`, unless
/// -1); at most `ms` milliseconds (F8), or for ever when negative, but
/// never past a signal that ends the guest. True when the child did, and
/// then the read end is closed too.
fn wait_for_exec(fds: [i32; 2], ms: i32) -> bool {
    use crate::host::{release_own_fd, OwnFd};
    let [r, w] = fds;
    let deadline = crate::clock::monotonic_ns().saturating_add(ms.max(0) as u64 * 1_000_000);
    // SAFETY: our own descriptors; poll on a local struct.
    unsafe {
        if w >= 0 {
            release_own_fd(OwnFd::VforkExec, w);
            libc::close(w);
        }
        let mut p = libc::pollfd {
            fd: r,
            events: libc::POLLIN,
            revents: 0,
        };
        loop {
            let left = if ms < 0 {
                FATAL_LOOK_MS
            } else {
                let left = deadline.saturating_sub(crate::clock::monotonic_ns()) / 1_000_000;
                (left as i32).min(FATAL_LOOK_MS)
            };
            let n = libc::poll(&mut p, 1, left);
            if n > 0 {
                release_own_fd(OwnFd::VforkWait, r);
                libc::close(r);
                return true;
            }
            // A signal that ends the guest (signal I4) ends the wait: a
            // vfork parent dies of it at once natively, however long its
            // child runs (its handlers, though, wait for the child).
            if crate::runtime::pending_fatal().is_some() {
                return false;
            }
            let timed_out = ms >= 0 && crate::clock::monotonic_ns() >= deadline;
            if n < 0 && *libc::__errno_location() != libc::EINTR || timed_out {
                return false;
            }
        }
    }
}

/// F4: the vfork pipe's ends move to high descriptors and are hotlift's
/// own (host.rs H1): the guest's threads see no number taken (a vfork
/// child's second `open` got 5, not 4), and a child replacing or closing
/// its descriptors cannot end its parent's wait before its `execve`.
/// Where no high number is free the ends stay where they are; a slot
/// taken already (another thread's vfork waiting, or this process a vfork
/// child still holding its own parent's pipe) leaves that end unlisted.
fn hold_vfork_pipe(fds: &mut [i32; 2]) {
    use crate::host::{close_fd, dup_high, set_own_fd, OwnFd};
    for (fd, slot) in fds.iter_mut().zip([OwnFd::VforkWait, OwnFd::VforkExec]) {
        if let Some(high) = dup_high(*fd) {
            close_fd(*fd);
            *fd = high;
        }
        set_own_fd(slot, *fd);
    }
}
