//! hotlift's own reach into the kernel, below every layer that makes
//! system calls: the raw `syscall` instruction (guest syscalls passed
//! through with their exact result, no libc errno translation), a
//! thread's CPU affinity mask, a thread's own descriptor table, and
//! reading a `/proc` file whole, and where hotlift says things (its own
//! stderr, kept when the guest closes fd 2: [`keep_stderr`], `say!`),
//! and which descriptors are hotlift's own (H1), placed in a table grown
//! at start (H2).
//! A leaf.
#![allow(unsafe_code)]

/// Issue syscall `nr` with six arguments; returns the kernel's raw result
/// (`-errno` on failure).
///
/// # Safety
/// The arguments are passed to the kernel unchanged: pointers in them must
/// be what the guest would pass, and the call must not disturb hotlift's
/// own state (the caller's allowlist decides that).
pub unsafe fn syscall6(nr: u64, a: [u64; 6]) -> i64 {
    let ret: i64;
    // SAFETY: upheld by the caller; rcx and r11 are clobbered by `syscall`.
    unsafe {
        std::arch::asm!(
            "syscall",
            inlateout("rax") nr as i64 => ret,
            in("rdi") a[0], in("rsi") a[1], in("rdx") a[2],
            in("r10") a[3], in("r8") a[4], in("r9") a[5],
            lateout("rcx") _, lateout("r11") _,
            options(nostack),
        );
    }
    ret
}

/// The whole text of a file the kernel makes as it is read (`/proc/self/
/// maps`): its size says 0, so `read_to_string` began with a 32-byte read
/// and doubled, ten `read`s for hotlift's own maps, each making the text
/// again from where the last stopped; with room for 64 KiB the reads are
/// of 8 KiB and up, two or three. hotlift reads its maps five times while
/// starting a process.
pub fn read_proc(path: &str) -> std::io::Result<String> {
    use std::io::Read;
    let mut f = std::fs::File::open(path)?;
    let mut buf = Vec::with_capacity(64 << 10);
    f.read_to_end(&mut buf)?;
    String::from_utf8(buf).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// `(start, end)` of a `/proc/PID/maps` line (None: not a mapping's line,
/// as smaps' detail lines are not).
pub fn maps_range(line: &str) -> Option<(u64, u64)> {
    let (a, b) = line.split_whitespace().next()?.split_once('-')?;
    Some((
        u64::from_str_radix(a, 16).ok()?,
        u64::from_str_radix(b, 16).ok()?,
    ))
}

/// Give the calling thread a descriptor table of its own
/// (`unshare(CLONE_FILES)`), holding only hotlift's stderr: the files it
/// opens then take no descriptor number the guest's next `open` would
/// have got (a helper thread reading module files while the guest runs).
/// The copies of the other descriptors are closed at once, so the thread
/// holds no guest file open (a pipe's end, which would keep its reader
/// from seeing end of file): fd 2 stays only while it is still the file
/// hotlift started with ([`note_closed_std_fds`]), and hotlift's own copy
/// of it ([`keep_stderr`]) stays, for hotlift's one-line warnings. (A
/// forked child's monitor copies its table once awake, monitor I5: by
/// then the guest may have put a pipe's write end at fd 2, or hotlift its
/// vfork pipe's where the guest had closed fd 2, which the monitor then
/// held open for ever — a shell waited on it.) False when the kernel
/// refuses (the table is shared then). Threads a thread with its own
/// table starts share that table. Used by every thread of hotlift's that
/// opens files while the guest runs: the file reader
/// (dispatch/module_files.rs A4), the monitor and the store's reader.
pub fn private_fd_table() -> bool {
    // SAFETY: unshare(CLONE_FILES) copies the calling thread's table and
    // touches no memory; the close_range calls act on that copy only.
    unsafe {
        if libc::unshare(libc::CLONE_FILES) != 0 {
            return false;
        }
    }
    // A kernel without close_range (before 5.9) leaves the copies open:
    // descriptor numbers are still the thread's own.
    let close_range = |from: u32, to: u32| {
        if from <= to {
            // SAFETY: closes descriptors of this thread's own copy.
            unsafe { libc::syscall(libc::SYS_close_range, from, to, 0u32) };
        }
    };
    close_range(0, 1);
    if !is_starting_stderr(2) {
        close_fd(2);
    }
    match u32::try_from(own_fd(OwnFd::Stderr)) {
        Ok(s) if s >= 3 => {
            close_range(3, s - 1);
            close_range(s + 1, u32::MAX);
        }
        _ => close_range(3, u32::MAX),
    }
    true
}

/// The identity (device, inode) of the stderr hotlift started with, none
/// if fd 2 was closed ([`note_closed_std_fds`]).
static STDERR_ID: std::sync::Mutex<Option<(u64, u64)>> = std::sync::Mutex::new(None);

/// The identity (device, inode) of the file at `fd`, if open.
fn file_id(fd: i32) -> Option<(u64, u64)> {
    // SAFETY: fstat writes one `stat` into the struct it is given.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    (unsafe { libc::fstat(fd, &mut st) } == 0).then_some((st.st_dev, st.st_ino))
}

/// Is `fd` the stderr hotlift started with (the same file)?
fn is_starting_stderr(fd: i32) -> bool {
    let start = *STDERR_ID.lock().unwrap_or_else(|e| e.into_inner());
    start.is_some() && file_id(fd) == start
}

/// The affinity mask as the kernel reports it: its byte length is the
/// kernel's return value.
#[derive(Debug, Clone, Default)]
pub struct Affinity {
    pub mask: Vec<u8>,
}

impl Affinity {
    /// Read the calling thread's mask (call before pinning it).
    pub fn current() -> Affinity {
        let mut buf = vec![0u8; 1024];
        // SAFETY: the kernel writes at most buf.len() bytes into our buffer.
        let r = unsafe {
            syscall6(
                libc::SYS_sched_getaffinity as u64,
                [0, buf.len() as u64, buf.as_mut_ptr() as u64, 0, 0, 0],
            )
        };
        buf.truncate(r.max(0) as usize);
        Affinity { mask: buf }
    }

    /// Let the calling thread run where this mask allows (nothing when
    /// it is empty): a forked child's thread before its monitor pins it
    /// anew, and a thread about to `execve`, whose new program inherits
    /// the mask (not the one core hotlift pinned the thread to).
    pub fn apply_to_current(&self) {
        if self.mask.is_empty() {
            return;
        }
        // SAFETY: the kernel reads `mask.len()` bytes of our own buffer.
        unsafe {
            syscall6(
                libc::SYS_sched_setaffinity as u64,
                [
                    0,
                    self.mask.len() as u64,
                    self.mask.as_ptr() as u64,
                    0,
                    0,
                    0,
                ],
            )
        };
    }
}

/// hotlift's own descriptors in the process's table, one slot each
/// (H1): -1 when it has none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OwnFd {
    /// hotlift's messages once the guest is about to close or replace
    /// its stderr ([`keep_stderr`]); fd 2 itself before.
    Stderr = 0,
    /// `--strace-file`'s log (strace/sink.rs).
    Log = 1,
    /// A profile opened before the guest ran (dispatch/profiling).
    Profile = 2,
    /// A vfork parent's end of its wait pipe (dispatch/fork.rs F4).
    VforkWait = 3,
    /// The write end of the vfork pipe a child holds until its `execve`
    /// or end (and its parent until the wait begins).
    VforkExec = 4,
}

/// H1: the guest's syscalls do not see hotlift's own descriptors
/// (syscall/hidden.rs: EBADF, as for a closed one; `close_range` passes
/// over them; a `dup2` onto one moves it away first: [`move_own_fd`]).
/// Each lives in its slot, read at each use, so that a move is seen.
static OWN_FDS: [std::sync::atomic::AtomicI32; 5] =
    [const { std::sync::atomic::AtomicI32::new(-1) }; 5];

/// The descriptor of `slot`, -1 if none (H1).
pub fn own_fd(slot: OwnFd) -> i32 {
    OWN_FDS[slot as usize].load(std::sync::atomic::Ordering::Acquire)
}

/// Put `fd` (hotlift's alone) in `slot`, if it is empty; false if not.
pub fn set_own_fd(slot: OwnFd, fd: i32) -> bool {
    use std::sync::atomic::Ordering;
    OWN_FDS[slot as usize]
        .compare_exchange(-1, fd, Ordering::AcqRel, Ordering::Acquire)
        .is_ok()
}

/// Empty `slot`, giving its descriptor (-1 if none) to the caller.
pub fn take_own_fd(slot: OwnFd) -> i32 {
    OWN_FDS[slot as usize].swap(-1, std::sync::atomic::Ordering::AcqRel)
}

/// Empty `slot` if it holds `fd` (another thread's may be there now).
pub fn release_own_fd(slot: OwnFd, fd: i32) {
    use std::sync::atomic::Ordering;
    let _ = OWN_FDS[slot as usize].compare_exchange(fd, -1, Ordering::AcqRel, Ordering::Acquire);
}

/// Is `fd` one of hotlift's own (H1)?
pub fn is_own_fd(fd: i32) -> bool {
    fd >= 0
        && OWN_FDS
            .iter()
            .any(|s| s.load(std::sync::atomic::Ordering::Acquire) == fd)
}

/// Has hotlift any descriptor of its own in the table (H1)?
pub fn any_own_fd() -> bool {
    OWN_FDS
        .iter()
        .any(|s| s.load(std::sync::atomic::Ordering::Acquire) >= 0)
}

/// The guest is about to put a descriptor at number `fd`, one of
/// hotlift's own (H1): it moves to another free number first (and
/// stays at `fd`, to be replaced, if the guest filled every other one
/// below its soft limit). A message written meanwhile by
/// another thread may go to the old number.
pub fn move_own_fd(fd: i32) {
    use std::sync::atomic::Ordering;
    for s in &OWN_FDS {
        if s.load(Ordering::Acquire) != fd {
            continue;
        }
        let Some(new) = dup_high(fd) else {
            return;
        };
        if s.compare_exchange(fd, new, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            close_fd(fd);
        } else {
            close_fd(new);
        }
    }
}

/// Which of descriptors 0-2 were closed when hotlift started (bit `fd`),
/// before the standard library's start-up opened `/dev/null` on them.
static STD_CLOSED: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Note which of descriptors 0-2 are closed: called first of all
/// (main.rs, `.init_array`), before the standard library opens
/// `/dev/null` on the closed ones.
pub fn note_closed_std_fds() {
    let mut closed = 0u8;
    for fd in 0..3 {
        // SAFETY: F_GETFD only reads the descriptor's flags.
        if unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0 {
            closed |= 1 << fd;
        }
    }
    STD_CLOSED.store(closed, std::sync::atomic::Ordering::Relaxed);
    if closed & 4 == 0 {
        *STDERR_ID.lock().unwrap_or_else(|e| e.into_inner()) = file_id(2);
    }
}

/// Close again, for the guest about to start, the descriptors 0-2 that
/// were closed when hotlift started ([`note_closed_std_fds`]): a program
/// started with one closed finds it closed, as natively (the standard
/// library's `/dev/null` was there).
pub fn close_std_fds_for_guest() {
    let closed = STD_CLOSED.load(std::sync::atomic::Ordering::Relaxed);
    for fd in (0..3).filter(|fd| closed & (1 << fd) != 0) {
        close_fd(fd);
    }
}

/// Most descriptor numbers hotlift's own descriptors are placed below
/// (H2): a soft limit of a million (containers) would otherwise put one
/// at the top of a table of eight megabytes, which every `fork` copies.
const OWN_FD_CEILING: u64 = 4096;

/// The number [`dup_high`] tries first, plus one: the `RLIMIT_NOFILE`
/// soft limit, at most [`OWN_FD_CEILING`].
fn own_fd_limit() -> i32 {
    let mut lim = libc::rlimit {
        rlim_cur: 1024,
        rlim_max: 1024,
    };
    // SAFETY: getrlimit writes the struct it is given.
    unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
    lim.rlim_cur.clamp(4, OWN_FD_CEILING) as i32
}

/// H2: the process's descriptor table is grown at start, while hotlift
/// has one thread, to hold the numbers [`dup_high`] gives. The kernel
/// grows a table that other threads share only after an RCU grace
/// period: 11-17 ms measured (6.18, 2 vCPUs) for each growth once the
/// monitor runs — a profile held open, a guest replacing fd 2, a guest's
/// own 65th descriptor — against 8 µs here.
pub fn grow_fd_table() {
    let top = own_fd_limit() - 1;
    // SAFETY: F_GETFD only reads the descriptor's flags.
    if unsafe { libc::fcntl(top, libc::F_GETFD) } >= 0 {
        // Open already (a forked child's copy of an own descriptor): the
        // table holds it; a copy of it would grow the table past it.
        return;
    }
    for fd in 0..3 {
        // SAFETY: F_DUPFD_CLOEXEC makes a new descriptor (>= top) that
        // nothing else owns; it is closed at once.
        let new = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, top) };
        if new >= 0 {
            close_fd(new);
            return;
        }
    }
}

/// `fd` moved (`F_DUPFD_CLOEXEC`) to the highest free descriptor in the
/// top half below the `RLIMIT_NOFILE` soft limit (at most 4096, H2), so
/// that the guest's own `open`s get the numbers they get natively (if
/// the top 64 are all taken, one found going down in doubling steps: the
/// guest filled its top numbers); None if none is free.
pub fn dup_high(fd: i32) -> Option<i32> {
    let limit = own_fd_limit();
    let below = (7..32).map(|k| limit.saturating_sub(1 << k).max(3));
    let below = below.take_while(|&h| h > 3).chain(std::iter::once(3));
    (limit / 2..limit)
        .rev()
        .take(64)
        .chain(below.filter(|&h| h < limit - 64))
        .find_map(|high| {
            // SAFETY: F_DUPFD_CLOEXEC makes a new descriptor (>= high)
            // that nothing else owns; the caller owns it.
            let new = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, high) };
            (new >= 0).then_some(new)
        })
}

/// Close descriptor `fd`, which the caller owns (one handed over by
/// number: dispatch/exec.rs E4).
pub fn close_fd(fd: i32) {
    // SAFETY: closes a descriptor the caller says is its own.
    unsafe { libc::close(fd) };
}

/// The guest is about to close or replace fd 2: hotlift's messages keep
/// the stderr it had (once; an `execve`'d process starts again from its
/// fd 2, as the descriptor is close-on-exec).
pub fn keep_stderr() {
    if own_fd(OwnFd::Stderr) >= 0 {
        return;
    }
    if let Some(fd) = dup_high(2) {
        if !set_own_fd(OwnFd::Stderr, fd) {
            close_fd(fd);
        }
    }
}

/// Where hotlift's messages go: fd 2, or its own copy of the stderr it
/// started with once the guest closed or replaced fd 2 ([`keep_stderr`]).
/// Async-signal-safe.
pub fn stderr_fd() -> i32 {
    match own_fd(OwnFd::Stderr) {
        fd if fd >= 0 => fd,
        _ => 2,
    }
}

/// Write `text` whole to hotlift's stderr ([`stderr_fd`]), in as few
/// writes as the kernel takes; errors are dropped (there is nowhere left
/// to say them).
pub fn write_stderr(text: &[u8]) {
    write_fd(stderr_fd(), text);
}

/// Write `text` whole to descriptor `fd`, in as few writes as the kernel
/// takes; errors are dropped.
pub fn write_fd(fd: i32, text: &[u8]) {
    let mut rest = text;
    while !rest.is_empty() {
        // SAFETY: writes from a live buffer.
        let n = unsafe { libc::write(fd, rest.as_ptr() as *const libc::c_void, rest.len()) };
        if n <= 0 {
            if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        rest = &rest[n as usize..];
    }
}

/// `eprintln!` to hotlift's stderr ([`stderr_fd`]): one write a message.
macro_rules! say {
    ($($arg:tt)*) => {{
        let mut text = format!($($arg)*);
        text.push('\n');
        $crate::host::write_stderr(text.as_bytes());
    }};
}
pub(crate) use say;

#[cfg(test)]
mod tests {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::MetadataExt;

    /// H2: growing the table leaves no descriptor behind, and hotlift's
    /// own go below the ceiling however high the soft limit.
    #[test]
    fn the_grown_table_holds_nothing_and_own_descriptors_stay_low() {
        super::grow_fd_table();
        let top = super::own_fd_limit() - 1;
        assert!(top < super::OWN_FD_CEILING as i32);
        // SAFETY: F_GETFD only reads the descriptor's flags.
        assert!(
            unsafe { libc::fcntl(top, libc::F_GETFD) } < 0,
            "fd {top} left open"
        );
        let fd = super::dup_high(2).unwrap();
        assert!(fd <= top && fd > top - 64, "dup_high gave {fd}, top {top}");
        super::close_fd(fd);
    }

    /// A file a thread with its own table opens is not in the process's
    /// table under its number (the guest's next `open` could take it).
    #[test]
    fn a_private_table_takes_no_number_from_the_process() {
        let path = std::env::temp_dir().join(format!("hotlift-fdtable-{}", std::process::id()));
        std::fs::write(&path, b"x").unwrap();
        let ino = std::fs::metadata(&path).unwrap().ino();
        let (tx, rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let p = path.clone();
        let t = std::thread::spawn(move || {
            assert!(super::private_fd_table());
            let f = std::fs::File::open(&p).unwrap();
            tx.send(f.as_raw_fd()).unwrap();
            // Held open until the main thread has looked.
            done_rx.recv().unwrap();
            drop(f);
        });
        let fd = rx.recv().unwrap();
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: fstat writes one `stat` into `st`.
        let r = unsafe { libc::fstat(fd, &mut st) };
        assert!(
            r != 0 || st.st_ino != ino,
            "descriptor {fd} of the helper's private table is the process's too"
        );
        done_tx.send(()).unwrap();
        t.join().unwrap();
        let _ = std::fs::remove_file(&path);
    }
}
