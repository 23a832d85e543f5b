//! The tables of `strace::names` against the kernel's numbers and the
//! installed headers, and the text its renderers give.

use super::*;

#[test]
fn syscall_numbers() {
    #[rustfmt::skip]
    let cases: &[(u64, Option<&str>)] = &[
        (0, Some("read")), (1, Some("write")), (60, Some("exit")), (231, Some("exit_group")),
        (257, Some("openat")), (334, Some("rseq")), (435, Some("clone3")),
        (39, Some("getpid")), (158, Some("arch_prctl")), (202, Some("futex")),
        (262, Some("newfstatat")), (302, Some("prlimit64")), (318, Some("getrandom")),
        (332, Some("statx")), (336, Some("uprobe")), (424, Some("pidfd_send_signal")),
        (462, Some("mseal")), (469, Some("file_setattr")),
        (337, None), (423, None), (470, None), (512, None), (u64::MAX, None),
    ];
    for &(nr, want) in cases {
        assert_eq!(syscall_name(nr), want, "syscall {nr}");
    }
}

#[test]
fn signatures_use_known_kinds() {
    const KINDS: &str = "fadiuxpsbrvogOFPMADESmWKCTtHqhcIRQLZYnwVelXB_";
    for info in LOW.iter().chain(&HIGH) {
        let unknown = info.args.chars().find(|&c| !KINDS.contains(c));
        assert!(info.args.len() <= 6 && unknown.is_none(), "{info:?}");
    }
}

#[test]
fn renderers() {
    #[rustfmt::skip]
    let cases: &[(String, &str)] = &[
        (mmap_flags(0x22), "MAP_PRIVATE|MAP_ANONYMOUS"),
        (mmap_flags(0x812), "MAP_PRIVATE|MAP_FIXED|MAP_DENYWRITE"),
        (mmap_flags(0x120022), "MAP_PRIVATE|MAP_ANONYMOUS|MAP_STACK|MAP_FIXED_NOREPLACE"),
        (mmap_flags(0x40001 | 21 << 26), "MAP_SHARED|MAP_HUGETLB|21<<MAP_HUGE_SHIFT"),
        (mmap_flags(0x8000_0000), "MAP_FILE|32<<MAP_HUGE_SHIFT"),
        (mmap_flags(0x203), "MAP_SHARED_VALIDATE|0x200"),
        (flags(0, PROT, "PROT_NONE"), "PROT_NONE"),
        (flags(7, PROT, "PROT_NONE"), "PROT_READ|PROT_WRITE|PROT_EXEC"),
        (flags(0x11, PROT, "PROT_NONE"), "PROT_READ|0x10"),
        (open_flags(0o2000000), "O_RDONLY|O_CLOEXEC"),
        (open_flags(0o4010001), "O_WRONLY|O_SYNC"),
        (open_flags(0o10002), "O_RDWR|O_DSYNC"),
        (open_flags(0o20200002), "O_RDWR|O_TMPFILE"),
        (open_flags(0o200003), "O_ACCMODE|O_DIRECTORY"),
        (mode(0), "000"), (mode(7), "007"), (mode(0o644), "0644"), (mode(0o4755), "04755"),
        (statx_flags(0), "AT_STATX_SYNC_AS_STAT"),
        (statx_flags(0x2100), "AT_SYMLINK_NOFOLLOW|AT_STATX_FORCE_SYNC"),
        (clone_flags(0x20080), "CLONE_NEWNS|CLONE_NEWTIME"),
        (clone_flags(0x3_0000_0000), "CLONE_CLEAR_SIGHAND|CLONE_INTO_CGROUP"),
        (signal(0), "0"), (signal(9), "SIGKILL"), (signal(31), "SIGSYS"),
        (signal(32), "SIGRTMIN"), (signal(34), "SIGRT_2"), (signal(65), "65"),
        (sigset_bits(0), "[]"), (sigset_bits(1 << 16 | 1 << 1), "[INT CHLD]"),
        (sigset_bits(1 << 31 | 1 << 32), "[RTMIN RT_1]"),
        (sigset_bits(!0), "~[]"), (sigset_bits(!(1 << 8)), "~[KILL]"),
        (futex_op(1), "FUTEX_WAKE"), (futex_op(128), "FUTEX_WAIT_PRIVATE"),
        (futex_op(393), "FUTEX_WAIT_BITSET_PRIVATE|FUTEX_CLOCK_REALTIME"),
        (futex_op(0x7f), "0x7f"),
        (wait_status(0x300), "[{WIFEXITED(s) && WEXITSTATUS(s) == 3}]"),
        (wait_status(9), "[{WIFSIGNALED(s) && WTERMSIG(s) == SIGKILL}]"),
        (wait_status(0x8b), "[{WIFSIGNALED(s) && WTERMSIG(s) == SIGSEGV && WCOREDUMP(s)}]"),
        (wait_status(0x137f), "[{WIFSTOPPED(s) && WSTOPSIG(s) == SIGSTOP}]"),
        (enum_name(9, WHENCE), "0x9"), (enum_name(1, WHENCE), "SEEK_CUR"),
        (hex(0), "0"), (hex(16), "0x10"), (ptr(0), "NULL"), (ptr(16), "0x10"),
    ];
    for (have, want) in cases {
        assert_eq!(have, want);
    }
}

#[test]
fn errnos() {
    #[rustfmt::skip]
    let cases: &[(u64, Option<(&str, &str)>)] = &[
        (1, Some(("EPERM", "Operation not permitted"))),
        (2, Some(("ENOENT", "No such file or directory"))),
        (11, Some(("EAGAIN", "Resource temporarily unavailable"))),
        (38, Some(("ENOSYS", "Function not implemented"))),
        (95, Some(("EOPNOTSUPP", "Operation not supported"))),
        (110, Some(("ETIMEDOUT", "Connection timed out"))),
        (133, Some(("EHWPOISON", "Memory page has hardware error"))),
        (512, Some(("ERESTARTSYS", "To be restarted if SA_RESTART is set"))),
        (0, None), (41, None), (58, None), (134, None), (4095, None),
    ];
    for &(e, want) in cases {
        assert_eq!(errno_info(e), want, "errno {e}");
    }
}

/// `#define NAME NUMBER` lines of an installed kernel header (none if
/// the header is not installed, so these cross-checks are best-effort).
fn header_defines(path: &str) -> Vec<(String, u64)> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut defines = Vec::new();
    for line in text.lines() {
        if let ["#define", name, nr, ..] = line.split_whitespace().collect::<Vec<_>>()[..] {
            defines.extend(nr.parse().ok().map(|nr| (name.to_string(), nr)));
        }
    }
    defines
}

#[test]
fn matches_installed_headers() {
    for (name, nr) in header_defines("/usr/include/x86_64-linux-gnu/asm/unistd_64.h") {
        assert_eq!(syscall_name(nr), name.strip_prefix("__NR_"), "syscall {nr}");
    }
    let errno_headers =
        ["errno-base.h", "errno.h"].map(|h| format!("/usr/include/asm-generic/{h}"));
    // Aliases (EWOULDBLOCK, EDEADLOCK) are defined as names, not numbers.
    for (name, nr) in errno_headers.iter().flat_map(|h| header_defines(h)) {
        let have = errno_info(nr).map(|(name, _)| name);
        assert_eq!(have, Some(name.as_str()), "errno {nr}");
    }
}
