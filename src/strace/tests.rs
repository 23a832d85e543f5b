//! Tests of the strace rendering: calls and results as strace prints
//! them, from guest memory set up here.

use super::*;

const AT: u64 = AT_FDCWD as u64;
const NEG1: u64 = u64::MAX;

fn nr(name: &str) -> u64 {
    (0..512)
        .find(|&n| syscall_name(n) == Some(name))
        .expect(name)
}

fn a6(xs: &[u64]) -> [u64; 6] {
    let mut a = [0; 6];
    a[..xs.len()].copy_from_slice(xs);
    a
}

fn at<T: ?Sized>(x: &T) -> u64 {
    x as *const T as *const u8 as u64
}

fn check_calls<S: AsRef<str>>(cases: &[(&str, &[u64], S)]) {
    for (name, args, want) in cases {
        assert_eq!(
            format_call(nr(name), &a6(args)),
            want.as_ref(),
            "{name}{args:x?}"
        );
    }
}

fn check_returns(cases: &[(&str, &[u64], i64, &str)]) {
    for &(name, args, ret, want) in cases {
        let have = format_return(nr(name), &a6(args), ret);
        assert_eq!(have, want, "{name}{args:x?} -> {ret}");
    }
}

#[test]
#[rustfmt::skip]
fn files() {
    let passwd = at(c"/etc/passwd");
    let empty = at(c"");
    let long = at(c"/a/very/long/path/that/goes/past/thirty-two/bytes");
    let exact = at(c"0123456789abcdef0123456789abcdef");
    check_calls(&[
        ("openat", &[AT, passwd, 0o2000000], r#"openat(AT_FDCWD, "/etc/passwd", O_RDONLY|O_CLOEXEC)"#),
        ("openat", &[3, passwd, 0o1101, 0o644], r#"openat(3, "/etc/passwd", O_WRONLY|O_CREAT|O_TRUNC, 0644)"#),
        ("openat", &[AT, passwd, 0o20200002, 0], r#"openat(AT_FDCWD, "/etc/passwd", O_RDWR|O_TMPFILE, 000)"#),
        ("open", &[passwd, 0o2204000], r#"open("/etc/passwd", O_RDONLY|O_NONBLOCK|O_CLOEXEC|O_DIRECTORY)"#),
        ("open", &[0x10, 0], "open(0x10, O_RDONLY)"),
        ("open", &[0, 0], "open(NULL, O_RDONLY)"),
        ("open", &[long, 0], r#"open("/a/very/long/path/that/goes/past"..., O_RDONLY)"#),
        ("open", &[exact, 0], r#"open("0123456789abcdef0123456789abcdef", O_RDONLY)"#),
        ("close", &[3], "close(3)"),
        ("fstat", &[3, 0x7000], "fstat(3, 0x7000)"),
        ("newfstatat", &[AT, empty, 0x7000, 0x1000], r#"newfstatat(AT_FDCWD, "", 0x7000, AT_EMPTY_PATH)"#),
        ("newfstatat", &[AT, passwd, 0x7000, 0], r#"newfstatat(AT_FDCWD, "/etc/passwd", 0x7000, 0)"#),
        ("statx", &[AT, passwd, 0, 0xfff, 0x7000], r#"statx(AT_FDCWD, "/etc/passwd", AT_STATX_SYNC_AS_STAT, STATX_BASIC_STATS|STATX_BTIME, 0x7000)"#),
        ("lseek", &[3, NEG1, 2], "lseek(3, -1, SEEK_END)"),
        ("read", &[3, 0x1000, 832], "read(3, 0x1000, 832)"),
        ("pread64", &[3, 0x1000, 64, 128], "pread64(3, 0x1000, 64, 128)"),
        ("readv", &[3, 0x7000, 2], "readv(3, 0x7000, 2)"),
        ("writev", &[1, 0x7000, 3], "writev(1, 0x7000, 3)"),
        ("access", &[passwd, 4], r#"access("/etc/passwd", R_OK)"#),
        ("access", &[passwd, 0], r#"access("/etc/passwd", F_OK)"#),
        ("faccessat", &[AT, passwd, 6], r#"faccessat(AT_FDCWD, "/etc/passwd", R_OK|W_OK)"#),
        ("faccessat2", &[AT, passwd, 1, 0x200], r#"faccessat2(AT_FDCWD, "/etc/passwd", X_OK, AT_EACCESS)"#),
        ("pipe", &[0x7000], "pipe(0x7000)"),
        ("pipe2", &[0x7000, 0o2004000], "pipe2(0x7000, O_NONBLOCK|O_CLOEXEC)"),
        ("pipe2", &[0x7000, 0], "pipe2(0x7000, 0)"),
        ("dup", &[3], "dup(3)"),
        ("dup2", &[3, 1], "dup2(3, 1)"),
        ("dup3", &[3, 1, 0o2000000], "dup3(3, 1, O_CLOEXEC)"),
        ("fcntl", &[3, 3], "fcntl(3, F_GETFL)"),
        ("fcntl", &[3, 2, 1], "fcntl(3, F_SETFD, FD_CLOEXEC)"),
        ("fcntl", &[3, 4, 0o4002], "fcntl(3, F_SETFL, O_RDWR|O_NONBLOCK)"),
        ("fcntl", &[3, 1030, 10], "fcntl(3, F_DUPFD_CLOEXEC, 10)"),
        ("fcntl", &[3, 6, 0x7000], "fcntl(3, F_SETLK, 0x7000)"),
        ("fcntl", &[3, 999, 5], "fcntl(3, 0x3e7, 0x5)"),
        ("ioctl", &[1, 0x5401, 0x7000], "ioctl(1, TCGETS, 0x7000)"),
        ("ioctl", &[1, 0x5413, 0x7000], "ioctl(1, TIOCGWINSZ, 0x7000)"),
        ("ioctl", &[1, 0x1234, 0], "ioctl(1, 0x1234, 0)"),
        ("getcwd", &[0x1000, 4096], "getcwd(0x1000, 4096)"),
        ("chdir", &[passwd], r#"chdir("/etc/passwd")"#),
        ("mkdir", &[passwd, 0o755], r#"mkdir("/etc/passwd", 0755)"#),
        ("unlink", &[passwd], r#"unlink("/etc/passwd")"#),
        ("unlinkat", &[AT, passwd, 0x200], r#"unlinkat(AT_FDCWD, "/etc/passwd", AT_REMOVEDIR)"#),
        ("rename", &[passwd, empty], r#"rename("/etc/passwd", "")"#),
        ("readlink", &[passwd, 0x1000, 4096], r#"readlink("/etc/passwd", 0x1000, 4096)"#),
        ("readlinkat", &[3, passwd, 0x1000, 64], r#"readlinkat(3, "/etc/passwd", 0x1000, 64)"#),
        ("getdents64", &[3, 0x1000, 32768], "getdents64(3, 0x1000, 32768)"),
        ("ftruncate", &[3, 100], "ftruncate(3, 100)"),
    ]);
}

#[test]
#[rustfmt::skip]
fn buffers_and_escapes() {
    let esc = b"a\"b\\c\n\t\r\x0b\x0c\x00\x017\xff";
    let long = [b'x'; 40];
    check_calls(&[
        ("write", &[1, at(b"hello\n"), 6], r#"write(1, "hello\n", 6)"#),
        ("write", &[2, at(esc), esc.len() as u64], r#"write(2, "a\"b\\c\n\t\r\v\f\0\0017\377", 14)"#),
        ("write", &[1, at(b"\x7fELF\x02"), 5], r#"write(1, "\177ELF\2", 5)"#),
        ("write", &[1, at(&long), 40], r#"write(1, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"..., 40)"#),
        ("write", &[1, 0x10, 5], "write(1, 0x10, 5)"),
        ("write", &[1, 0, 0], "write(1, NULL, 0)"),
        ("pwrite64", &[3, at(b"abc"), 3, 512], r#"pwrite64(3, "abc", 3, 512)"#),
        ("sendto", &[3, at(b"ping"), 4, 0, 0, 0], r#"sendto(3, "ping", 4, 0, NULL, 0)"#),
    ]);
}

#[test]
#[rustfmt::skip]
fn memory() {
    check_calls(&[
        ("mmap", &[0, 8192, 3, 0x22, NEG1, 0], "mmap(NULL, 8192, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0)"),
        ("mmap", &[0x7f0000000000, 4096, 5, 0x812, 3, 0x2000], "mmap(0x7f0000000000, 4096, PROT_READ|PROT_EXEC, MAP_PRIVATE|MAP_FIXED|MAP_DENYWRITE, 3, 0x2000)"),
        ("mmap", &[0, 1 << 21, 0, 0x40001 | (21 << 26), NEG1, 0], "mmap(NULL, 2097152, PROT_NONE, MAP_SHARED|MAP_HUGETLB|21<<MAP_HUGE_SHIFT, -1, 0)"),
        ("mprotect", &[0x1000, 4096, 0], "mprotect(0x1000, 4096, PROT_NONE)"),
        ("munmap", &[0x1000, 4096], "munmap(0x1000, 4096)"),
        ("brk", &[0], "brk(NULL)"),
        ("brk", &[0x555555559000], "brk(0x555555559000)"),
        ("madvise", &[0x1000, 4096, 4], "madvise(0x1000, 4096, MADV_DONTNEED)"),
        ("mremap", &[0x1000, 4096, 8192, 1, 0], "mremap(0x1000, 4096, 8192, MREMAP_MAYMOVE)"),
        ("mremap", &[0x1000, 4096, 8192, 3, 0x9000], "mremap(0x1000, 4096, 8192, MREMAP_MAYMOVE|MREMAP_FIXED, 0x9000)"),
    ]);
}

#[test]
#[rustfmt::skip]
fn signals_and_processes() {
    let act: [u64; 4] = [0x401000, 0x1400_0000, 0x402000, 1 << 14];
    let ign: [u64; 4] = [1, 0, 0, 0];
    let (chld, no_kill): (u64, u64) = (1 << 16, !(1 << 8));
    let ts: [u64; 2] = [1, 500_000_000];
    check_calls(&[
        ("rt_sigaction", &[2, at(&act), 0, 8], "rt_sigaction(SIGINT, {sa_handler=0x401000, sa_mask=[TERM], sa_flags=SA_RESTORER|SA_RESTART, sa_restorer=0x402000}, NULL, 8)"),
        ("rt_sigaction", &[13, at(&ign), 0x7000, 8], "rt_sigaction(SIGPIPE, {sa_handler=SIG_IGN, sa_mask=[], sa_flags=0}, 0x7000, 8)"),
        ("rt_sigaction", &[11, 0x10, 0, 8], "rt_sigaction(SIGSEGV, 0x10, NULL, 8)"),
        ("rt_sigprocmask", &[0, at(&chld), 0, 8], "rt_sigprocmask(SIG_BLOCK, [CHLD], NULL, 8)"),
        ("rt_sigprocmask", &[2, at(&no_kill), 0x7000, 8], "rt_sigprocmask(SIG_SETMASK, ~[KILL], 0x7000, 8)"),
        ("kill", &[1234, 15], "kill(1234, SIGTERM)"),
        ("kill", &[1, 0], "kill(1, 0)"),
        ("tgkill", &[1, 2, 34], "tgkill(1, 2, SIGRT_2)"),
        ("getpid", &[], "getpid()"),
        ("getuid", &[], "getuid()"),
        ("geteuid", &[], "geteuid()"),
        ("getgid", &[], "getgid()"),
        ("getegid", &[], "getegid()"),
        ("exit", &[0], "exit(0)"),
        ("exit_group", &[1], "exit_group(1)"),
        ("wait4", &[NEG1, 0x7000, 1, 0], "wait4(-1, 0x7000, WNOHANG, NULL)"),
        ("uname", &[0x7000], "uname(0x7000)"),
        ("sysinfo", &[0x7000], "sysinfo(0x7000)"),
        ("sched_getaffinity", &[0, 128, 0x7000], "sched_getaffinity(0, 128, 0x7000)"),
        ("nanosleep", &[at(&ts), 0], "nanosleep({tv_sec=1, tv_nsec=500000000}, NULL)"),
        ("clock_nanosleep", &[0, 1, at(&ts), 0], "clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, {tv_sec=1, tv_nsec=500000000}, NULL)"),
        ("clock_gettime", &[1, 0x7000], "clock_gettime(CLOCK_MONOTONIC, 0x7000)"),
        ("clock_gettime", &[(-6i64) as u64, 0x7000], "clock_gettime(0xfffffffa, 0x7000)"),
        ("gettimeofday", &[0x7000, 0], "gettimeofday(0x7000, NULL)"),
        ("getrandom", &[0x1000, 16, 1], "getrandom(0x1000, 16, GRND_NONBLOCK)"),
        ("arch_prctl", &[0x1002, 0x7f00], "arch_prctl(ARCH_SET_FS, 0x7f00)"),
        ("arch_prctl", &[0x3001, 0], "arch_prctl(0x3001, NULL)"),
        ("set_tid_address", &[0x7000], "set_tid_address(0x7000)"),
        ("set_robust_list", &[0x7000, 24], "set_robust_list(0x7000, 24)"),
        ("rseq", &[0x7000, 32, 0, 0x53053053], "rseq(0x7000, 0x20, 0, 0x53053053)"),
        ("prlimit64", &[0, 3, 0, 0x7000], "prlimit64(0, RLIMIT_STACK, NULL, 0x7000)"),
    ]);
}

#[test]
#[rustfmt::skip]
fn threads() {
    let vfork: [u64; 11] = [0x4100, 0, 0, 0, 17, 0x8000, 0x2000, 0, 0, 0, 0];
    let thread: [u64; 11] = [0x3d0f00, 0, 0x9000, 0x9100, 0, 0x8000, 0x2000, 0xa000, 0, 0, 0];
    check_calls(&[
        ("futex", &[0x7000, 128, 2, 0], "futex(0x7000, FUTEX_WAIT_PRIVATE, 2, NULL)"),
        ("futex", &[0x7000, 129, 1], "futex(0x7000, FUTEX_WAKE_PRIVATE, 1)"),
        ("futex", &[0x7000, 393, 0, 0, 0, 0xffff_ffff], "futex(0x7000, FUTEX_WAIT_BITSET_PRIVATE|FUTEX_CLOCK_REALTIME, 0, NULL, FUTEX_BITSET_MATCH_ANY)"),
        ("futex", &[0x7000, 4, 1, 5, 0x7100, 0], "futex(0x7000, FUTEX_CMP_REQUEUE, 1, 5, 0x7100, 0)"),
        ("futex", &[0x7000, 0x7f, 1, 2, 3, 4], "futex(0x7000, 0x7f, 1, 0x2, 0x3, 0x4)"),
        ("clone", &[0x0120_0011, 0, 0, 0x7000, 0], "clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7000)"),
        ("clone", &[0x3d0f00, 0x8000, 0x9000, 0x9000, 0xa000], "clone(child_stack=0x8000, flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM|CLONE_SETTLS|CLONE_PARENT_SETTID|CLONE_CHILD_CLEARTID, parent_tid=0x9000, child_tidptr=0x9000, tls=0xa000)"),
        ("clone3", &[at(&vfork), 88], "clone3({flags=CLONE_VM|CLONE_VFORK, exit_signal=SIGCHLD, stack=0x8000, stack_size=0x2000}, 88)"),
        ("clone3", &[at(&thread), 88], "clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM|CLONE_SETTLS|CLONE_PARENT_SETTID|CLONE_CHILD_CLEARTID, child_tid=0x9000, parent_tid=0x9100, exit_signal=0, stack=0x8000, stack_size=0x2000, tls=0xa000}, 88)"),
        ("clone3", &[0x10, 88], "clone3(0x10, 88)"),
        ("unshare", &[0x20000], "unshare(CLONE_NEWNS)"),
    ]);
}

#[test]
#[rustfmt::skip]
fn execve_and_unknown() {
    // The environment array must outlive the calls that read it.
    let env = [at(c"A=1"), at(c"B=2"), 0];
    let (path, e) = (at(c"/bin/ls"), at(&env));
    let mut many = vec![at(c"x"); 12];
    many.push(0);
    let eight = [r#""x""#; 8].join(", ");
    check_calls(&[
        ("execve", &[path, at(&[at(c"ls"), at(c"-l"), 0]), e], format!(r#"execve("/bin/ls", ["ls", "-l"], {e:#x} /* 2 vars */)"#)),
        ("execve", &[path, at(&[at(c"ok"), 0x10, 0]), 0], r#"execve("/bin/ls", ["ok", 0x10], NULL)"#.to_string()),
        ("execve", &[path, 0x10, 0x10], r#"execve("/bin/ls", 0x10, 0x10)"#.to_string()),
        ("execve", &[path, at(&many[..]), 0], format!(r#"execve("/bin/ls", [{eight}, ...], NULL)"#)),
    ]);
    assert_eq!(format_call(400, &[1, 2, 3, 0, 0, 0]), "syscall_400(0x1, 0x2, 0x3, 0x0, 0x0, 0x0)");
    assert_eq!(format_call(u64::MAX, &[0; 6]), format!("syscall_{}(0x0, 0x0, 0x0, 0x0, 0x0, 0x0)", u64::MAX));
}

#[test]
#[rustfmt::skip]
fn returns() {
    let hello = *b"hello\n";
    let cwd = *b"/tmp\0";
    let fds: [i32; 2] = [3, 4];
    let (one, two) = (*b"hel", *b"lo wo");
    let iov: [u64; 4] = [at(&one), 3, at(&two), 5];
    let ts: [u64; 2] = [5, 7];
    let statuses: [u32; 2] = [0, 0x8b];
    check_returns(&[
        ("openat", &[AT, 0], 3, " = 3"),
        ("openat", &[AT, 0], -2, " = -1 ENOENT (No such file or directory)"),
        ("read", &[0, 0], -11, " = -1 EAGAIN (Resource temporarily unavailable)"),
        ("ioctl", &[1, 0x5401], -25, " = -1 ENOTTY (Inappropriate ioctl for device)"),
        ("mmap", &[], -12, " = -1 ENOMEM (Cannot allocate memory)"),
        ("close", &[3], -133, " = -1 EHWPOISON (Memory page has hardware error)"),
        ("close", &[3], -512, " = -1 ERESTARTSYS (To be restarted if SA_RESTART is set)"),
        ("close", &[3], -4095, " = -1 ERRNO_4095 (Unknown error 4095)"),
        ("close", &[3], -41, " = -1 ERRNO_41 (Unknown error 41)"),
        ("lseek", &[3], -4096, " = -4096"),
        ("mmap", &[], 0x7f12_3456_0000, " = 0x7f1234560000"),
        ("brk", &[0], 0x5555_5555_9000, " = 0x555555559000"),
        ("mremap", &[], 0x7f00_0000_0000, " = 0x7f0000000000"),
        ("exit_group", &[0], 0, " = ?"),
        ("read", &[0, at(&hello), 100], 6, r#" = 6 buf="hello\n""#),
        ("read", &[0, at(&hello), 100], 0, r#" = 0 buf="""#),
        ("read", &[0, 0x10, 100], 5, " = 5 buf=0x10"),
        ("pread64", &[0, at(&hello), 3, 0], 3, r#" = 3 buf="hel""#),
        ("getrandom", &[at(&hello), 2, 0], 2, r#" = 2 buf="he""#),
        ("readv", &[0, at(&iov), 2], 6, r#" = 6 iov=[{iov_base="hel", iov_len=3}, {iov_base="lo ", iov_len=5}]"#),
        ("getcwd", &[at(&cwd), 4096], 5, r#" = 5 buf="/tmp""#),
        ("readlink", &[0, at(&cwd), 64], 4, r#" = 4 buf="/tmp""#),
        ("pipe2", &[at(&fds), 0], 0, " = 0 fds=[3, 4]"),
        ("pipe", &[0x10], 0, " = 0"),
        ("wait4", &[NEG1, at(&statuses[0])], 77, " = 77 status=[{WIFEXITED(s) && WEXITSTATUS(s) == 0}]"),
        ("wait4", &[NEG1, at(&statuses[1])], 77, " = 77 status=[{WIFSIGNALED(s) && WTERMSIG(s) == SIGSEGV && WCOREDUMP(s)}]"),
        ("wait4", &[NEG1, 0], 77, " = 77"),
        ("wait4", &[NEG1, at(&statuses[0]), 1], 0, " = 0"),
        ("fcntl", &[3, 3], 0x8002, " = 0x8002 (flags O_RDWR|O_LARGEFILE)"),
        ("fcntl", &[3, 1], 1, " = 0x1 (flags FD_CLOEXEC)"),
        ("fcntl", &[3, 1], 0, " = 0"),
        ("clock_gettime", &[1, at(&ts)], 0, " = 0 tp={tv_sec=5, tv_nsec=7}"),
        ("write", &[1, at(&hello), 6], 6, " = 6"),
        ("getpid", &[], 1234, " = 1234"),
    ]);
    assert_eq!(format_return(400, &[0; 6], -2), " = -1 ENOENT (No such file or directory)");
    assert_eq!(format_return(400, &[0; 6], 7), " = 7");
}

/// A string or buffer that runs into an unmapped page prints as its
/// address; one that ends before it prints normally (memory.rs I1).
#[test]
#[allow(unsafe_code)]
#[rustfmt::skip]
fn reads_stop_at_unmapped_pages() {
    use libc::{MAP_ANONYMOUS, MAP_FAILED, MAP_PRIVATE, PROT_NONE, PROT_READ, PROT_WRITE};
    // SAFETY: a fresh private anonymous mapping that nothing else uses.
    let base = unsafe { libc::mmap(std::ptr::null_mut(), 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) };
    assert_ne!(base, MAP_FAILED);
    // SAFETY: the second page of the mapping above, which we own.
    assert_eq!(unsafe { libc::mprotect(base.cast::<u8>().add(4096).cast(), 4096, PROT_NONE) }, 0);
    // SAFETY: the first page is mapped read-write and only used here.
    let first = unsafe { std::slice::from_raw_parts_mut(base.cast::<u8>(), 4096) };
    first[4088..4091].copy_from_slice(b"ok\0");
    first[4092..].copy_from_slice(b"abcd");
    let end = base as u64 + 4096;
    let (ok, abcd) = (end - 8, end - 4);
    check_calls(&[
        ("open", &[ok, 0], r#"open("ok", O_RDONLY)"#.to_string()),
        ("open", &[abcd, 0], format!("open({abcd:#x}, O_RDONLY)")),
        ("open", &[end, 0], format!("open({end:#x}, O_RDONLY)")),
        ("write", &[1, abcd, 4], r#"write(1, "abcd", 4)"#.to_string()),
        ("write", &[1, abcd, 5], format!("write(1, {abcd:#x}, 5)")),
    ]);
    assert_eq!(format_return(0, &a6(&[0, abcd, 8]), 4), r#" = 4 buf="abcd""#);
    assert_eq!(format_return(0, &a6(&[0, abcd, 8]), 5), format!(" = 5 buf={abcd:#x}"));
    // SAFETY: unmaps only the mapping created above; `first` is not used again.
    assert_eq!(unsafe { libc::munmap(base, 8192) }, 0);
}
