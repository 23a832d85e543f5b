//! Normalising syscall lines so that values which legitimately differ
//! between a native run and a hotlift run, or between any two runs, do not
//! count as differences. Each rule is named (N1 …), documented in
//! docs/COMPARE.md and tested below.
//!
//! - N1 Addresses: hex numbers of five or more digits become `0x…`
//!   (pointer arguments, `mmap`/`brk`/`mremap` results, `arch_prctl`
//!   bases): ASLR moves them natively, and hotlift places the guest's
//!   memory itself.
//! - N2 Process ids: the pid of either run, as a whole decimal token,
//!   becomes `PID` (`getpid`/`gettid` results, `kill`/`tgkill`
//!   arguments), in both traces alike: a number that happens to equal one
//!   run's pid (`mprotect(…, 16384, …)` in a run whose pid was 16384) is
//!   then masked on both sides, not only on that run's.
//! - N3 `rseq`: its result becomes `= ?`. hotlift makes `rseq` fail with
//!   ENOSYS by design (the kernel would check code-cache addresses against
//!   the guest's critical sections); glibc then runs without it, which the
//!   program cannot observe.
//! - N4 Random and time data: the bytes `getrandom` returned, the
//!   timespecs `clock_gettime`/`clock_getres` wrote and the results of
//!   `time`/`gettimeofday` become `…`.
//!   So do the bytes `read` from a descriptor the trace opened on
//!   `/dev/urandom` or `/dev/random` (until it is closed).
//! - N5 The fatal syscall: when a run dies of a signal, the result of its
//!   last syscall is dropped. A signal the program sends itself (`abort`'s
//!   `tgkill`) is delivered natively on the way back from the syscall, so
//!   the native trace shows its result; hotlift writes the profile and
//!   lets the kernel kill it inside the syscall, so its trace shows none.
//!
//! - N6 Child processes: the pids `clone`, `clone3`, `fork` and `vfork`
//!   returned become `CHILD1`, `CHILD2` … in the order the trace made
//!   them, wherever they appear later (`wait4`, `kill`). Like N2, the
//!   k-th child of either run is masked in both traces alike: a number
//!   that happens to equal one run's child pid (`mprotect(…, 16384, …)`
//!   beside a thread whose tid was 16384) is then masked on both sides.
//! - N7 Restarts: a syscall the kernel interrupted and runs again (a
//!   native `= -1 ERESTART…` line, seen only under ptrace, and hotlift's
//!   `= ? (restarted after a signal handler)`) is dropped: the program
//!   sees one call. A native `ERESTART…` call that is not run again (the
//!   same call is neither the next line nor the line after the signal
//!   handler's `rt_sigreturn`) returned `EINTR` to the program (a handler
//!   without `SA_RESTART`, `sigsuspend`, `pause`), and reads so.
//!
//! - N8 `rt_sigreturn`: its result becomes `?`: it returns no value of
//!   its own (the tracer shows the restored RAX, hotlift none).
//! - N9 Threads: once the trace has started a thread (`clone`/`clone3`
//!   with `CLONE_THREAD`), its `futex` and `sched_yield` calls are
//!   dropped: whether a `pthread_join` or a contended lock waits in the
//!   kernel, and how often a spin loop yields, depend on how far the
//!   other threads got, which differs between any two runs.
//!
//! I1: normalising is a pure function of the line and the run's pid; the
//!     native and hotlift lines go through the same rules.

use std::sync::OnceLock;

use regex::Regex;

fn address() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| Regex::new(r"0x[0-9a-f]{5,}").expect("N1 regex"))
}

fn timespec() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| Regex::new(r"tp=\{[^}]*\}").expect("N4 regex"))
}

/// Split `name(args) = result` after the call's closing parenthesis,
/// skipping parentheses inside quoted strings (which strace quoting
/// escapes with backslashes).
fn split(l: &str) -> (&str, &str) {
    let (mut depth, mut quoted, mut escaped) = (0usize, false, false);
    for (i, c) in l.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            '(' if !quoted => depth += 1,
            ')' if !quoted => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    let rest = &l[i + 1..];
                    return match rest.strip_prefix(" = ") {
                        Some(r) => (&l[..i + 1], r),
                        None => (l, ""),
                    };
                }
            }
            _ => {}
        }
    }
    (l, "")
}

/// Apply N1–N4 to one line of a syscall trace (I1); `pids` are both
/// runs' (N2).
pub fn line(l: &str, pids: &[u32]) -> String {
    let name = l.split('(').next().unwrap_or("");
    // N3 and N4 look at the result alone.
    let (call, result) = split(l);
    let result = match name {
        // N3; N8.
        "rseq" | "rt_sigreturn" => "?".to_string(),
        "getrandom" => result.split(' ').next().unwrap_or("").to_string() + " buf=…",
        "time" | "gettimeofday" if !result.starts_with('-') => "…".to_string(),
        "clock_gettime" | "clock_getres" => timespec().replace_all(result, "tp=…").into_owned(),
        _ => result.to_string(),
    };
    let mut s = if split(l).1.is_empty() {
        call.to_string()
    } else {
        format!("{call} = {result}")
    };
    // N1.
    s = address().replace_all(&s, "0x…").into_owned();
    // N2: whole decimal tokens equal to either run's pid.
    for pid in pids {
        s = replace_token(&s, &pid.to_string(), "PID");
    }
    s
}

/// `s` with every whole token `token` (not part of a longer name or
/// number) replaced by `by`.
fn replace_token(s: &str, token: &str, by: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find(token) {
        // The character before the match may be the end of the text
        // already taken (`88` holds the token `8` twice).
        let before = rest[..i].chars().last().or_else(|| out.chars().last());
        let after = rest[i + token.len()..].chars().next();
        let part = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        out.push_str(&rest[..i]);
        if part(before) || part(after) {
            out.push_str(token);
        } else {
            out.push_str(by);
        }
        rest = &rest[i + token.len()..];
    }
    out.push_str(rest);
    out
}

/// N7: the kernel runs line `i`'s call again (dropped), or it returned
/// `EINTR` to the program (its line rewritten), or neither (None).
fn restart(lines: &[String], i: usize) -> Option<Option<String>> {
    let (call, result) = split(&lines[i]);
    if result.starts_with("? (restarted") || result.starts_with("-1 ERESTARTNOINTR") {
        return Some(None);
    }
    if !result.starts_with("-1 ERESTART") {
        return None;
    }
    let again = |j: usize| lines.get(j).is_some_and(|l| split(l).0 == call);
    let after_handler = lines[i + 1..]
        .iter()
        .position(|l| l.starts_with("rt_sigreturn("))
        .map(|k| i + 1 + k + 1);
    if again(i + 1) || after_handler.is_some_and(again) {
        return Some(None);
    }
    Some(Some(format!("{call} = -1 EINTR (Interrupted system call)")))
}

/// N6: the child pids a trace's `clone`, `clone3`, `fork` and `vfork`
/// calls returned, in order, each once.
pub fn children(lines: &[String]) -> Vec<String> {
    let mut children: Vec<String> = Vec::new();
    for l in lines {
        let name = l.split('(').next().unwrap_or("");
        if matches!(name, "clone" | "clone3" | "fork" | "vfork") {
            let r = split(l).1.split(' ').next().unwrap_or("");
            if r.parse::<u32>().is_ok_and(|p| p > 0) && !children.iter().any(|c| c == r) {
                children.push(r.to_string());
            }
        }
    }
    children
}

/// Normalise a whole trace: N1–N4 and N7–N9 on every line, N6 with the
/// child pids of both runs (`children` of each, so that a number equal to
/// one run's child pid is masked on both sides alike), N5 on the last
/// when the run died of a signal.
pub fn trace(
    lines: &[String],
    pids: &[u32],
    children: &[Vec<String>],
    killed: bool,
) -> Vec<String> {
    let mut v: Vec<String> = (0..lines.len())
        .filter_map(|i| match restart(lines, i) {
            None => Some(line(&lines[i], pids)),
            Some(None) => None,
            Some(Some(eintr)) => Some(line(&eintr, pids)),
        })
        .collect();
    // N9.
    if let Some(first) = v.iter().position(|l| {
        (l.starts_with("clone(") || l.starts_with("clone3(")) && l.contains("CLONE_THREAD")
    }) {
        let mut i = 0;
        v.retain(|l| {
            i += 1;
            i <= first || !(l.starts_with("futex(") || l.starts_with("sched_yield("))
        });
    }
    // N4 for random devices: the data read from their descriptors.
    let mut random_fds: Vec<String> = Vec::new();
    for l in v.iter_mut() {
        let name = l.split('(').next().unwrap_or("");
        let (call, result) = split(l);
        let fd = call
            .trim_start_matches(name)
            .trim_start_matches('(')
            .split([',', ')'])
            .next()
            .unwrap_or("")
            .to_string();
        match name {
            "open" | "openat"
                if call.contains("\"/dev/urandom\"") || call.contains("\"/dev/random\"") =>
            {
                let r = result.split(' ').next().unwrap_or("");
                if r.parse::<u32>().is_ok() {
                    random_fds.push(r.to_string());
                }
            }
            "close" => random_fds.retain(|f| *f != fd),
            "read" if random_fds.contains(&fd) => {
                if let Some(i) = l.find(" buf=") {
                    l.truncate(i);
                    l.push_str(" buf=…");
                }
            }
            _ => {}
        }
    }
    // N6: child k of either run becomes CHILDk in both traces alike.
    let most = children.iter().map(|c| c.len()).max().unwrap_or(0);
    for k in 0..most {
        let name = format!("CHILD{}", k + 1);
        for child in children.iter().filter_map(|c| c.get(k)) {
            for l in v.iter_mut() {
                *l = replace_token(l, child, &name);
            }
        }
    }
    if killed {
        if let Some(last) = v.last_mut() {
            let call = split(last).0.to_string();
            *last = call;
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::{children, line, trace};

    #[test]
    fn n5_fatal_syscall() {
        let native = vec![
            "getpid() = 5".to_string(),
            "tgkill(5, 5, SIGABRT) = 0".to_string(),
        ];
        let hotlift = vec![
            "getpid() = 6".to_string(),
            "tgkill(6, 6, SIGABRT)".to_string(),
        ];
        assert_eq!(
            trace(&native, &[5], &[], true),
            trace(&hotlift, &[6], &[], true)
        );
        assert_ne!(
            trace(&native, &[5], &[], false),
            trace(&hotlift, &[6], &[], false)
        );
    }

    #[test]
    fn n9_futex_calls_once_there_are_threads() {
        let lines = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let wait = "futex(0x7f0000001000, FUTEX_WAIT_PRIVATE, 2, NULL) = 0";
        let before = lines(&[wait, "getpid() = 7"]);
        assert_eq!(
            trace(&before, &[7], &[], false).len(),
            2,
            "no thread yet: kept"
        );
        let clone = "clone3({flags=CLONE_VM|CLONE_THREAD|CLONE_SETTLS}, 88) = 8";
        let a = lines(&[
            wait,
            clone,
            wait,
            "sched_yield() = 0",
            "write(1, \"x\", 1) = 1",
            wait,
        ]);
        let b = lines(&[wait, clone, "write(1, \"x\", 1) = 1"]);
        assert_eq!(trace(&a, &[7], &[], false), trace(&b, &[7], &[], false));
        assert_eq!(trace(&a, &[7], &[], false).len(), 3);
    }

    #[test]
    fn n7_a_call_not_run_again_returned_eintr() {
        // sigsuspend: the handler runs, the call is not run again.
        let native: Vec<String> = [
            "kill(9, SIGUSR1) = 0",
            "rt_sigsuspend([], 8) = -1 ERESTARTNOHAND (To be restarted if no handler)",
            "write(1, \"h\", 1) = 1",
            "rt_sigreturn({mask=[USR1]}) = -1 EINTR (Interrupted system call)",
            "write(1, \"after\", 5) = 5",
            // A read restarted after its handler (SA_RESTART) ...
            "read(3, 0x7ffe0000, 4) = -1 ERESTARTSYS (To be restarted if SA_RESTART is set)",
            "rt_sigreturn({mask=[]}) = 0",
            "read(3, 0x7ffe0000, 4) = 4",
            // ... and one restarted without a handler.
            "read(3, 0x7ffe0000, 4) = -1 ERESTARTSYS (To be restarted if SA_RESTART is set)",
            "read(3, 0x7ffe0000, 4) = 4",
        ]
        .map(String::from)
        .to_vec();
        let hotlift: Vec<String> = [
            "kill(9, SIGUSR1) = 0",
            "rt_sigsuspend([], 8) = -1 EINTR (Interrupted system call)",
            "write(1, \"h\", 1) = 1",
            "rt_sigreturn({mask=[USR1]}) = ?",
            "write(1, \"after\", 5) = 5",
            "read(3, 0x7ffe0000, 4) = ? (restarted after a signal handler)",
            "rt_sigreturn({mask=[]}) = ?",
            "read(3, 0x7ffe0000, 4) = 4",
            "read(3, 0x7ffe0000, 4) = 4",
        ]
        .map(String::from)
        .to_vec();
        let n = trace(&native, &[9], &[], false);
        assert_eq!(n, trace(&hotlift, &[9], &[], false));
        assert_eq!(
            n[1],
            "rt_sigsuspend([], 8) = -1 EINTR (Interrupted system call)"
        );
        assert_eq!(n.len(), 8);
    }

    #[test]
    fn n6_children_and_n7_restarts() {
        let native: Vec<String> = [
            "clone(child_stack=NULL, flags=SIGCHLD) = 501",
            "vfork() = 502",
            "wait4(502, 0x7ffe0000, 0, NULL) = -1 ERESTARTSYS (To be restarted if SA_RESTART is set)",
            "wait4(502, 0x7ffe0000, 0, NULL) = 502",
            "kill(501, SIGKILL) = 0",
            "write(1, \"5011\", 4) = 4",
        ]
        .map(String::from)
        .to_vec();
        let hotlift: Vec<String> = [
            "clone(child_stack=NULL, flags=SIGCHLD) = 7001",
            "vfork() = 7002",
            "wait4(7002, 0x7ffe0000, 0, NULL) = ? (restarted after a signal handler)",
            "wait4(7002, 0x7ffe0000, 0, NULL) = 7002",
            "kill(7001, SIGKILL) = 0",
            "write(1, \"5011\", 4) = 4",
        ]
        .map(String::from)
        .to_vec();
        let kids = [children(&native), children(&hotlift)];
        assert_eq!(kids[0], ["501", "502"]);
        let n = trace(&native, &[4242], &kids, false);
        assert_eq!(n, trace(&hotlift, &[4343], &kids, false));
        assert_eq!(n.len(), 5, "the restart is dropped");
        assert_eq!(n[2], "wait4(CHILD2, 0x…, 0, NULL) = CHILD2");
        assert_eq!(n[4], "write(1, \"5011\", 4) = 4", "only whole tokens");
    }

    #[test]
    fn n6_a_number_equal_to_one_runs_child_is_masked_in_both() {
        // CI saw this: the native run's thread got tid 16384, the size of
        // an mprotect both runs made.
        let run = |tid: &str| {
            vec![
                "mprotect(0x7f0000001000, 16384, PROT_READ) = 0".to_string(),
                format!("clone3({{flags=CLONE_VM|CLONE_THREAD}}, 88) = {tid}"),
            ]
        };
        let (native, hotlift) = (run("16384"), run("16390"));
        let kids = [children(&native), children(&hotlift)];
        let n = trace(&native, &[7], &kids, false);
        assert_eq!(n, trace(&hotlift, &[8], &kids, false));
        assert_eq!(n[0], "mprotect(0x…, CHILD1, PROT_READ) = 0");
    }

    #[test]
    fn n4_random_devices() {
        let run = |bytes: &str| {
            trace(
                &[
                    "openat(AT_FDCWD, \"/dev/urandom\", O_RDONLY|O_CLOEXEC) = 3".to_string(),
                    format!("read(3, 0x7ffe0000, 4) = 4 buf=\"{bytes}\""),
                    "close(3) = 0".to_string(),
                    "openat(AT_FDCWD, \"data\", O_RDONLY) = 3".to_string(),
                    format!("read(3, 0x7ffe0000, 4) = 4 buf=\"{bytes}\""),
                ],
                &[1],
                &[],
                false,
            )
        };
        let (a, b) = (run("abcd"), run("wxyz"));
        assert_eq!(a[1], b[1], "random bytes are masked");
        assert_ne!(
            a[4], b[4],
            "a file's bytes are not, once the device is closed"
        );
    }

    #[test]
    fn n1_addresses() {
        assert_eq!(line("brk(NULL) = 0x4c8000", &[7]), "brk(NULL) = 0x…");
        assert_eq!(
            line("mmap(NULL, 8192, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f12345000", &[7]),
            "mmap(NULL, 8192, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x…"
        );
        assert_eq!(
            line(
                "fcntl(1, F_GETFL) = 0x8001 (flags O_WRONLY|O_LARGEFILE)",
                &[7]
            ),
            "fcntl(1, F_GETFL) = 0x8001 (flags O_WRONLY|O_LARGEFILE)"
        );
    }

    #[test]
    fn n2_pids() {
        assert_eq!(line("getpid() = 4242", &[4242]), "getpid() = PID");
        // A size equal to one run's pid (the hotlift run's was 16384) is
        // masked in both traces alike.
        let pids = [4242, 16384];
        let size = "mprotect(0x7f0000001000, 16384, PROT_READ) = 0";
        assert_eq!(line(size, &pids), "mprotect(0x…, PID, PROT_READ) = 0");
        assert_eq!(
            line("tgkill(4242, 4242, SIGABRT) = 0", &[4242]),
            "tgkill(PID, PID, SIGABRT) = 0"
        );
        assert_eq!(
            line("write(1, \"42421\", 5) = 5", &[4242]),
            "write(1, \"42421\", 5) = 5"
        );
        assert_eq!(line("clone3({}, 88) = 8", &[8]), "clone3({}, 88) = PID");
    }

    #[test]
    fn n3_rseq_and_n4_data() {
        let native = line("rseq(0x7ffd12345678, 32, 0, 0x53053053) = 0", &[1]);
        let hotlift = line(
            "rseq(0x7ffd1234a678, 32, 0, 0x53053053) = -1 ENOSYS (Function not implemented)",
            &[1],
        );
        assert_eq!(native, hotlift);
        assert_eq!(
            line(
                "getrandom(0x4c6b70, 8, GRND_NONBLOCK) = 8 buf=\"\\x01\\x02\"",
                &[1]
            ),
            "getrandom(0x…, 8, GRND_NONBLOCK) = 8 buf=…"
        );
        assert_eq!(
            line(
                "clock_gettime(CLOCK_REALTIME, 0x7ffe1000) = 0 tp={tv_sec=1, tv_nsec=2}",
                &[1]
            ),
            "clock_gettime(CLOCK_REALTIME, 0x…) = 0 tp=…"
        );
        assert_eq!(line("exit_group(0) = ?", &[1]), "exit_group(0) = ?");
        assert_eq!(
            line("rseq(\"x) = 1\", 5) = 0", &[1]),
            line(
                "rseq(\"x) = 1\", 5) = -1 ENOSYS (Function not implemented)",
                &[1]
            )
        );
    }
}
