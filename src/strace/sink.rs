//! Where the trace goes: `log` collects each thread's text and writes
//! it out a whole line at a time, to the `--strace-file` log or stderr,
//! marked with the process or thread it came from.
//!
//! I1: `log` writes whole lines only, where `--strace-file` pointed
//!     (`set_log_file`, opened for appending), else to stderr, each batch
//!     in one `write`: the processes of a tree share the log, and a line
//!     is never split by another process's.
//! I2: a process of a tree other than its first marks its lines with
//!     `[pid N] ` (`set_process_prefix`), and a guest thread other than
//!     its process's first with `[pid TID] ` (`set_thread_prefix`), as
//!     `strace -f` marks the tasks it follows; `hotlift compare` keeps the
//!     unmarked lines only (the first process's initial thread), as its
//!     native trace follows only that thread.

/// Send the log to `file` instead of stderr (I1); only the first call
/// counts. The file is moved to the highest free descriptor below the
/// `RLIMIT_NOFILE` soft limit, so the guest's own `open`s get the numbers
/// they get natively, and is hotlift's own (host.rs H1: the guest's
/// `close_range` passes over it).
pub fn set_log_file(file: std::fs::File) {
    use crate::host::OwnFd;
    use std::os::fd::{AsRawFd, IntoRawFd};
    let fd = match crate::host::dup_high(file.as_raw_fd()) {
        // The old File is dropped (closed).
        Some(fd) => fd,
        None => file.into_raw_fd(),
    };
    if !crate::host::set_own_fd(OwnFd::Log, fd) {
        crate::host::close_fd(fd);
    }
}

/// Write `text` to the log (I1).
pub fn log(text: &str) {
    PENDING.with(|p| {
        let mut p = p.borrow_mut();
        p.push_str(text);
        if let Some(end) = p.rfind('\n') {
            let lines: String = p.drain(..=end).collect();
            write_lines(&lines);
        }
    });
}

thread_local! {
    /// This thread's unfinished line (I1). Only dispatcher code logs, with
    /// hotlift's FS base in place.
    static PENDING: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// `[pid N] ` for a process of a tree other than its first (I2).
static PREFIX: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());

/// The prefix's lock, held by a thread that forks (dispatch/fork.rs F1):
/// the child sets its own prefix, and must not find the lock held by a
/// thread it does not have.
pub fn hold_prefix() -> std::sync::MutexGuard<'static, String> {
    PREFIX.lock().unwrap_or_else(|e| e.into_inner())
}

/// I2: this process's lines carry `[pid N] ` (`pid` Some), as `strace -f`
/// marks the processes it follows, or none (the tree's first process).
pub fn set_process_prefix(pid: Option<u32>) {
    // A forked child runs on the thread that forked: its first thread.
    THREAD_PREFIX.with(|p| *p.borrow_mut() = None);
    *PREFIX.lock().unwrap_or_else(|e| e.into_inner()) =
        pid.map_or_else(String::new, |p| format!("[pid {p}] "));
}

thread_local! {
    /// `[pid TID] ` on a guest thread other than its process's first (I2).
    static THREAD_PREFIX: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// I2: the calling host thread runs guest thread `tid`, not its process's
/// first: its lines carry `[pid TID] `, as `strace -f` marks threads.
pub fn set_thread_prefix(tid: u32) {
    THREAD_PREFIX.with(|p| *p.borrow_mut() = Some(format!("[pid {tid}] ")));
}

/// Whole lines, prefixed (I2), in one write (I1).
fn write_lines(lines: &str) {
    let prefix = THREAD_PREFIX
        .with(|p| p.borrow().clone())
        .unwrap_or_else(|| PREFIX.lock().unwrap_or_else(|e| e.into_inner()).clone());
    let text = if prefix.is_empty() {
        lines.to_string()
    } else {
        lines
            .split_inclusive('\n')
            .map(|l| format!("{prefix}{l}"))
            .collect()
    };
    match crate::host::own_fd(crate::host::OwnFd::Log) {
        fd if fd >= 0 => crate::host::write_fd(fd, text.as_bytes()),
        _ => crate::host::write_stderr(text.as_bytes()),
    }
}
