//! Name tables for the syscall tracer, and the renderers that turn a number
//! into the text strace prints for it: x86-64 syscall numbers with an
//! argument signature, errno names and texts, signal names, and the flag /
//! enum tables that `strace/mod.rs` renders arguments with (this file is its
//! child, `strace::names`).
//!
//! Invariants:
//! - I1: `LOW[n]` describes syscall `n` for `n <= 336` and `HIGH[n - 424]`
//!   describes syscall `n` for `424 <= n <= 469` (the array lengths are part of
//!   the types, so a missing row is a compile error). Numbers 337..=423 are
//!   unassigned on x86-64 and the x32-only numbers (512..) are not x86-64
//!   syscalls at all. Rows follow `arch/x86/entry/syscalls/syscall_64.tbl`.
//! - I2: a signature has one letter per argument the kernel takes (`_` for
//!   one that is passed but not shown); the letters are documented in
//!   `strace/mod.rs`. The argument counts of 0..=450 agree with strace 6.1.
//! - I3: `ERRNO[e]` is errno `e` (1..=133, `EPERM`..`EHWPOISON`); the text is
//!   glibc's `strerror` text, so no call into libc (which is neither
//!   thread-safe nor async-signal-safe there) is needed.
//! - I4: flag tables list multi-bit names before the single bits they
//!   contain (`O_SYNC` before `O_DSYNC`), because rendering is greedy.
//!
//! Usage: `syscall_name(257) == Some("openat")`,
//! `errno_info(2) == Some(("ENOENT", "No such file or directory"))`,
//! `mmap_flags(0x22) == "MAP_PRIVATE|MAP_ANONYMOUS"`.

/// One row of the syscall table: the name and the argument signature (I2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyscallInfo {
    pub name: &'static str,
    pub args: &'static str,
}

const fn s(name: &'static str, args: &'static str) -> SyscallInfo {
    SyscallInfo { name, args }
}

/// Syscalls 0..=336 (I1).
#[rustfmt::skip]
const LOW: [SyscallInfo; 337] = [
    /*   0 */ s("read", "fru"), s("write", "fbu"), s("open", "sOo"), s("close", "f"),
    /*   4 */ s("stat", "sp"), s("fstat", "fp"), s("lstat", "sp"), s("poll", "pui"),
    /*   8 */ s("lseek", "fdW"), s("mmap", "puPMfx"), s("mprotect", "puP"), s("munmap", "pu"),
    /*  12 */ s("brk", "p"), s("rt_sigaction", "ghpu"), s("rt_sigprocmask", "Hqpu"),
    /*  15 */ s("rt_sigreturn", ""), s("ioctl", "fIx"), s("pread64", "frud"), s("pwrite64", "fbud"),
    /*  19 */ s("readv", "fvu"), s("writev", "fpu"), s("access", "sK"), s("pipe", "p"),
    /*  23 */ s("select", "ipppp"), s("sched_yield", ""), s("mremap", "puuYn"), s("msync", "pux"),
    /*  27 */ s("mincore", "pup"), s("madvise", "puZ"), s("shmget", "xux"), s("shmat", "ipx"),
    /*  31 */ s("shmctl", "iip"), s("dup", "f"), s("dup2", "ff"), s("pause", ""),
    /*  35 */ s("nanosleep", "tp"), s("getitimer", "ip"), s("alarm", "u"), s("setitimer", "ipp"),
    /*  39 */ s("getpid", ""), s("sendfile", "ffpu"), s("socket", "ixi"), s("connect", "fpu"),
    /*  43 */ s("accept", "fpp"), s("sendto", "fbuxpu"), s("recvfrom", "fruxpp"),
    /*  46 */ s("sendmsg", "fpx"), s("recvmsg", "fpx"), s("shutdown", "fi"), s("bind", "fpu"),
    /*  50 */ s("listen", "fi"), s("getsockname", "fpp"), s("getpeername", "fpp"),
    /*  53 */ s("socketpair", "ixip"), s("setsockopt", "fiipu"), s("getsockopt", "fiipp"),
    /*  56 */ s("clone", "lpppx"), s("fork", ""), s("vfork", ""), s("execve", "sVe"),
    /*  60 */ s("exit", "i"), s("wait4", "ipwp"), s("kill", "ig"), s("uname", "p"),
    /*  64 */ s("semget", "xix"), s("semop", "ipu"), s("semctl", "iiix"), s("shmdt", "p"),
    /*  68 */ s("msgget", "xx"), s("msgsnd", "ipux"), s("msgrcv", "ipudx"), s("msgctl", "iip"),
    /*  72 */ s("fcntl", "fcx"), s("flock", "fx"), s("fsync", "f"), s("fdatasync", "f"),
    /*  76 */ s("truncate", "sd"), s("ftruncate", "fd"), s("getdents", "fpu"), s("getcwd", "ru"),
    /*  80 */ s("chdir", "s"), s("fchdir", "f"), s("rename", "ss"), s("mkdir", "so"),
    /*  84 */ s("rmdir", "s"), s("creat", "so"), s("link", "ss"), s("unlink", "s"),
    /*  88 */ s("symlink", "ss"), s("readlink", "sru"), s("chmod", "so"), s("fchmod", "fo"),
    /*  92 */ s("chown", "sii"), s("fchown", "fii"), s("lchown", "sii"), s("umask", "o"),
    /*  96 */ s("gettimeofday", "pp"), s("getrlimit", "Lp"), s("getrusage", "ip"),
    /*  99 */ s("sysinfo", "p"), s("times", "p"), s("ptrace", "xipp"), s("getuid", ""),
    /* 103 */ s("syslog", "ipi"), s("getgid", ""), s("setuid", "i"), s("setgid", "i"),
    /* 107 */ s("geteuid", ""), s("getegid", ""), s("setpgid", "ii"), s("getppid", ""),
    /* 111 */ s("getpgrp", ""), s("setsid", ""), s("setreuid", "ii"), s("setregid", "ii"),
    /* 115 */ s("getgroups", "ip"), s("setgroups", "ip"), s("setresuid", "iii"),
    /* 118 */ s("getresuid", "ppp"), s("setresgid", "iii"), s("getresgid", "ppp"),
    /* 121 */ s("getpgid", "i"), s("setfsuid", "i"), s("setfsgid", "i"), s("getsid", "i"),
    /* 125 */ s("capget", "pp"), s("capset", "pp"), s("rt_sigpending", "pu"),
    /* 128 */ s("rt_sigtimedwait", "qppu"), s("rt_sigqueueinfo", "igp"), s("rt_sigsuspend", "qu"),
    /* 131 */ s("sigaltstack", "pp"), s("utime", "sp"), s("mknod", "sox"), s("uselib", "s"),
    /* 135 */ s("personality", "x"), s("ustat", "xp"), s("statfs", "sp"), s("fstatfs", "fp"),
    /* 139 */ s("sysfs", "ixx"), s("getpriority", "ii"), s("setpriority", "iii"),
    /* 142 */ s("sched_setparam", "ip"), s("sched_getparam", "ip"), s("sched_setscheduler", "iip"),
    /* 145 */ s("sched_getscheduler", "i"), s("sched_get_priority_max", "i"),
    /* 147 */ s("sched_get_priority_min", "i"), s("sched_rr_get_interval", "ip"), s("mlock", "pu"),
    /* 150 */ s("munlock", "pu"), s("mlockall", "x"), s("munlockall", ""), s("vhangup", ""),
    /* 154 */ s("modify_ldt", "ipu"), s("pivot_root", "ss"), s("_sysctl", "p"), s("prctl", "ixxxx"),
    /* 158 */ s("arch_prctl", "Qp"), s("adjtimex", "p"), s("setrlimit", "Lp"), s("chroot", "s"),
    /* 162 */ s("sync", ""), s("acct", "s"), s("settimeofday", "pp"), s("mount", "sssxp"),
    /* 166 */ s("umount2", "sx"), s("swapon", "sx"), s("swapoff", "s"), s("reboot", "xxxp"),
    /* 170 */ s("sethostname", "bu"), s("setdomainname", "bu"), s("iopl", "u"), s("ioperm", "uui"),
    /* 174 */ s("create_module", "su"), s("init_module", "pus"), s("delete_module", "sx"),
    /* 177 */ s("get_kernel_syms", "p"), s("query_module", "sxpup"), s("quotactl", "xsip"),
    /* 180 */ s("nfsservctl", "xpp"), s("getpmsg", "xxxxx"), s("putpmsg", "xxxxx"),
    /* 183 */ s("afs_syscall", "xxxxx"), s("tuxcall", "xxx"), s("security", "xxx"), s("gettid", ""),
    /* 187 */ s("readahead", "fdu"), s("setxattr", "ssbux"), s("lsetxattr", "ssbux"),
    /* 190 */ s("fsetxattr", "fsbux"), s("getxattr", "ssru"), s("lgetxattr", "ssru"),
    /* 193 */ s("fgetxattr", "fsru"), s("listxattr", "spu"), s("llistxattr", "spu"),
    /* 196 */ s("flistxattr", "fpu"), s("removexattr", "ss"), s("lremovexattr", "ss"),
    /* 199 */ s("fremovexattr", "fs"), s("tkill", "ig"), s("time", "p"), s("futex", "pXipix"),
    /* 203 */ s("sched_setaffinity", "iup"), s("sched_getaffinity", "iup"),
    /* 205 */ s("set_thread_area", "p"), s("io_setup", "up"), s("io_destroy", "x"),
    /* 208 */ s("io_getevents", "xddpp"), s("io_submit", "xdp"), s("io_cancel", "xpp"),
    /* 211 */ s("get_thread_area", "p"), s("lookup_dcookie", "xpu"), s("epoll_create", "i"),
    /* 214 */ s("epoll_ctl_old", "xxxx"), s("epoll_wait_old", "xxxx"),
    /* 216 */ s("remap_file_pages", "puxux"), s("getdents64", "fpu"), s("set_tid_address", "p"),
    /* 219 */ s("restart_syscall", ""), s("semtimedop", "ipup"), s("fadvise64", "fdui"),
    /* 222 */ s("timer_create", "Cpp"), s("timer_settime", "ixpp"), s("timer_gettime", "ip"),
    /* 225 */ s("timer_getoverrun", "i"), s("timer_delete", "i"), s("clock_settime", "Cp"),
    /* 228 */ s("clock_gettime", "Cp"), s("clock_getres", "Cp"), s("clock_nanosleep", "CTtp"),
    /* 231 */ s("exit_group", "i"), s("epoll_wait", "fpii"), s("epoll_ctl", "fifp"),
    /* 234 */ s("tgkill", "iig"), s("utimes", "sp"), s("vserver", "xxxxx"), s("mbind", "puxpux"),
    /* 238 */ s("set_mempolicy", "ipu"), s("get_mempolicy", "ppupx"), s("mq_open", "sxop"),
    /* 241 */ s("mq_unlink", "s"), s("mq_timedsend", "fbuup"), s("mq_timedreceive", "frupp"),
    /* 244 */ s("mq_notify", "fp"), s("mq_getsetattr", "fpp"), s("kexec_load", "uupx"),
    /* 247 */ s("waitid", "iipwp"), s("add_key", "ssbui"), s("request_key", "sssi"),
    /* 250 */ s("keyctl", "ixxxx"), s("ioprio_set", "iii"), s("ioprio_get", "ii"),
    /* 253 */ s("inotify_init", ""), s("inotify_add_watch", "fsx"), s("inotify_rm_watch", "fi"),
    /* 256 */ s("migrate_pages", "iupp"), s("openat", "asOo"), s("mkdirat", "aso"),
    /* 259 */ s("mknodat", "asox"), s("fchownat", "asiiA"), s("futimesat", "asp"),
    /* 262 */ s("newfstatat", "aspA"), s("unlinkat", "asD"), s("renameat", "asas"),
    /* 265 */ s("linkat", "asasA"), s("symlinkat", "sas"), s("readlinkat", "asru"),
    /* 268 */ s("fchmodat", "aso"), s("faccessat", "asK"), s("pselect6", "ippppp"),
    /* 271 */ s("ppoll", "puppu"), s("unshare", "l"), s("set_robust_list", "pu"),
    /* 274 */ s("get_robust_list", "ipp"), s("splice", "fpfpux"), s("tee", "ffux"),
    /* 277 */ s("sync_file_range", "fddx"), s("vmsplice", "fpux"), s("move_pages", "iupppx"),
    /* 280 */ s("utimensat", "aspA"), s("epoll_pwait", "fpiiqu"), s("signalfd", "fqu"),
    /* 283 */ s("timerfd_create", "Cx"), s("eventfd", "u"), s("fallocate", "fxdd"),
    /* 286 */ s("timerfd_settime", "fxpp"), s("timerfd_gettime", "fp"), s("accept4", "fppx"),
    /* 289 */ s("signalfd4", "fqux"), s("eventfd2", "ux"), s("epoll_create1", "x"),
    /* 292 */ s("dup3", "ffF"), s("pipe2", "pF"), s("inotify_init1", "x"), s("preadv", "fvud"),
    /* 296 */ s("pwritev", "fpud"), s("rt_tgsigqueueinfo", "iigp"), s("perf_event_open", "piiix"),
    /* 299 */ s("recvmmsg", "fpuxp"), s("fanotify_init", "xx"), s("fanotify_mark", "fxxas"),
    /* 302 */ s("prlimit64", "iLpp"), s("name_to_handle_at", "asppA"),
    /* 304 */ s("open_by_handle_at", "fpO"), s("clock_adjtime", "Cp"), s("syncfs", "f"),
    /* 307 */ s("sendmmsg", "fpux"), s("setns", "fl"), s("getcpu", "ppp"),
    /* 310 */ s("process_vm_readv", "ipupux"), s("process_vm_writev", "ipupux"), s("kcmp", "iiiuu"),
    /* 313 */ s("finit_module", "fsx"), s("sched_setattr", "ipx"), s("sched_getattr", "ipux"),
    /* 316 */ s("renameat2", "asasx"), s("seccomp", "xxp"), s("getrandom", "ruR"),
    /* 319 */ s("memfd_create", "sx"), s("kexec_file_load", "ffupx"), s("bpf", "ipu"),
    /* 322 */ s("execveat", "asVeA"), s("userfaultfd", "x"), s("membarrier", "ixi"),
    /* 325 */ s("mlock2", "pux"), s("copy_file_range", "fpfpux"), s("preadv2", "fvud_x"),
    /* 328 */ s("pwritev2", "fpud_x"), s("pkey_mprotect", "puPi"), s("pkey_alloc", "xx"),
    /* 331 */ s("pkey_free", "i"), s("statx", "asSmp"), s("io_pgetevents", "xddppp"),
    /* 334 */ s("rseq", "pxxx"), s("uretprobe", ""), s("uprobe", ""),
];

/// Syscalls 424..=469 (I1).
#[rustfmt::skip]
const HIGH: [SyscallInfo; 46] = [
    /* 424 */ s("pidfd_send_signal", "fgpx"), s("io_uring_setup", "up"),
    /* 426 */ s("io_uring_enter", "fuuxpu"), s("io_uring_register", "fupu"), s("open_tree", "asx"),
    /* 429 */ s("move_mount", "asasx"), s("fsopen", "sx"), s("fsconfig", "fispi"),
    /* 432 */ s("fsmount", "fxx"), s("fspick", "asx"), s("pidfd_open", "ix"), s("clone3", "pu"),
    /* 436 */ s("close_range", "uux"), s("openat2", "aspu"), s("pidfd_getfd", "fix"),
    /* 439 */ s("faccessat2", "asKE"), s("process_madvise", "fpuZx"), s("epoll_pwait2", "fpipqu"),
    /* 442 */ s("mount_setattr", "asxpu"), s("quotactl_fd", "fxip"),
    /* 444 */ s("landlock_create_ruleset", "pux"), s("landlock_add_rule", "fipx"),
    /* 446 */ s("landlock_restrict_self", "fx"), s("memfd_secret", "x"),
    /* 448 */ s("process_mrelease", "fx"), s("futex_waitv", "puxpC"),
    /* 450 */ s("set_mempolicy_home_node", "puux"), s("cachestat", "fppx"), s("fchmodat2", "asoA"),
    /* 453 */ s("map_shadow_stack", "pux"), s("futex_wake", "pxix"), s("futex_wait", "pxxxpC"),
    /* 456 */ s("futex_requeue", "pxii"), s("statmount", "ppux"), s("listmount", "ppux"),
    /* 459 */ s("lsm_get_self_attr", "ippx"), s("lsm_set_self_attr", "ipux"),
    /* 461 */ s("lsm_list_modules", "ppx"), s("mseal", "pux"), s("setxattrat", "asAspu"),
    /* 464 */ s("getxattrat", "asAspu"), s("listxattrat", "asApu"), s("removexattrat", "asAs"),
    /* 467 */ s("open_tree_attr", "asxpu"), s("file_getattr", "aspuA"), s("file_setattr", "aspuA"),
];

const HIGH_BASE: u64 = 424;

/// Name and argument signature of x86-64 syscall `nr` (I1).
pub fn syscall_info(nr: u64) -> Option<&'static SyscallInfo> {
    if nr < LOW.len() as u64 {
        return Some(&LOW[nr as usize]);
    }
    let i = nr.checked_sub(HIGH_BASE)?;
    HIGH.get(usize::try_from(i).ok()?)
}

/// Name of x86-64 Linux syscall `nr`, or `None` if the number is unassigned.
pub fn syscall_name(nr: u64) -> Option<&'static str> {
    syscall_info(nr).map(|i| i.name)
}

/// Errno names and `strerror` texts, indexed by errno (I3), rows starting at
/// the commented number; `("", "")` marks 0 and the two numbers Linux never
/// assigned (41 and 58).
#[rustfmt::skip]
const ERRNO: [(&str, &str); 134] = [
    /*   0 */ ("", ""), ("EPERM", "Operation not permitted"),
    /*   2 */ ("ENOENT", "No such file or directory"), ("ESRCH", "No such process"),
    /*   4 */ ("EINTR", "Interrupted system call"), ("EIO", "Input/output error"),
    /*   6 */ ("ENXIO", "No such device or address"), ("E2BIG", "Argument list too long"),
    /*   8 */ ("ENOEXEC", "Exec format error"), ("EBADF", "Bad file descriptor"),
    /*  10 */ ("ECHILD", "No child processes"), ("EAGAIN", "Resource temporarily unavailable"),
    /*  12 */ ("ENOMEM", "Cannot allocate memory"), ("EACCES", "Permission denied"),
    /*  14 */ ("EFAULT", "Bad address"), ("ENOTBLK", "Block device required"),
    /*  16 */ ("EBUSY", "Device or resource busy"), ("EEXIST", "File exists"),
    /*  18 */ ("EXDEV", "Invalid cross-device link"), ("ENODEV", "No such device"),
    /*  20 */ ("ENOTDIR", "Not a directory"), ("EISDIR", "Is a directory"),
    /*  22 */ ("EINVAL", "Invalid argument"), ("ENFILE", "Too many open files in system"),
    /*  24 */ ("EMFILE", "Too many open files"), ("ENOTTY", "Inappropriate ioctl for device"),
    /*  26 */ ("ETXTBSY", "Text file busy"), ("EFBIG", "File too large"),
    /*  28 */ ("ENOSPC", "No space left on device"), ("ESPIPE", "Illegal seek"),
    /*  30 */ ("EROFS", "Read-only file system"), ("EMLINK", "Too many links"),
    /*  32 */ ("EPIPE", "Broken pipe"), ("EDOM", "Numerical argument out of domain"),
    /*  34 */ ("ERANGE", "Numerical result out of range"), ("EDEADLK", "Resource deadlock avoided"),
    /*  36 */ ("ENAMETOOLONG", "File name too long"), ("ENOLCK", "No locks available"),
    /*  38 */ ("ENOSYS", "Function not implemented"), ("ENOTEMPTY", "Directory not empty"),
    /*  40 */ ("ELOOP", "Too many levels of symbolic links"), ("", ""),
    /*  42 */ ("ENOMSG", "No message of desired type"), ("EIDRM", "Identifier removed"),
    /*  44 */ ("ECHRNG", "Channel number out of range"), ("EL2NSYNC", "Level 2 not synchronized"),
    /*  46 */ ("EL3HLT", "Level 3 halted"), ("EL3RST", "Level 3 reset"),
    /*  48 */ ("ELNRNG", "Link number out of range"), ("EUNATCH", "Protocol driver not attached"),
    /*  50 */ ("ENOCSI", "No CSI structure available"), ("EL2HLT", "Level 2 halted"),
    /*  52 */ ("EBADE", "Invalid exchange"), ("EBADR", "Invalid request descriptor"),
    /*  54 */ ("EXFULL", "Exchange full"), ("ENOANO", "No anode"),
    /*  56 */ ("EBADRQC", "Invalid request code"), ("EBADSLT", "Invalid slot"), ("", ""),
    /*  59 */ ("EBFONT", "Bad font file format"), ("ENOSTR", "Device not a stream"),
    /*  61 */ ("ENODATA", "No data available"), ("ETIME", "Timer expired"),
    /*  63 */ ("ENOSR", "Out of streams resources"), ("ENONET", "Machine is not on the network"),
    /*  65 */ ("ENOPKG", "Package not installed"), ("EREMOTE", "Object is remote"),
    /*  67 */ ("ENOLINK", "Link has been severed"), ("EADV", "Advertise error"),
    /*  69 */ ("ESRMNT", "Srmount error"), ("ECOMM", "Communication error on send"),
    /*  71 */ ("EPROTO", "Protocol error"), ("EMULTIHOP", "Multihop attempted"),
    /*  73 */ ("EDOTDOT", "RFS specific error"), ("EBADMSG", "Bad message"),
    /*  75 */ ("EOVERFLOW", "Value too large for defined data type"),
    /*  76 */ ("ENOTUNIQ", "Name not unique on network"),
    /*  77 */ ("EBADFD", "File descriptor in bad state"), ("EREMCHG", "Remote address changed"),
    /*  79 */ ("ELIBACC", "Can not access a needed shared library"),
    /*  80 */ ("ELIBBAD", "Accessing a corrupted shared library"),
    /*  81 */ ("ELIBSCN", ".lib section in a.out corrupted"),
    /*  82 */ ("ELIBMAX", "Attempting to link in too many shared libraries"),
    /*  83 */ ("ELIBEXEC", "Cannot exec a shared library directly"),
    /*  84 */ ("EILSEQ", "Invalid or incomplete multibyte or wide character"),
    /*  85 */ ("ERESTART", "Interrupted system call should be restarted"),
    /*  86 */ ("ESTRPIPE", "Streams pipe error"), ("EUSERS", "Too many users"),
    /*  88 */ ("ENOTSOCK", "Socket operation on non-socket"),
    /*  89 */ ("EDESTADDRREQ", "Destination address required"), ("EMSGSIZE", "Message too long"),
    /*  91 */ ("EPROTOTYPE", "Protocol wrong type for socket"),
    /*  92 */ ("ENOPROTOOPT", "Protocol not available"),
    /*  93 */ ("EPROTONOSUPPORT", "Protocol not supported"),
    /*  94 */ ("ESOCKTNOSUPPORT", "Socket type not supported"),
    /*  95 */ ("EOPNOTSUPP", "Operation not supported"),
    /*  96 */ ("EPFNOSUPPORT", "Protocol family not supported"),
    /*  97 */ ("EAFNOSUPPORT", "Address family not supported by protocol"),
    /*  98 */ ("EADDRINUSE", "Address already in use"),
    /*  99 */ ("EADDRNOTAVAIL", "Cannot assign requested address"), ("ENETDOWN", "Network is down"),
    /* 101 */ ("ENETUNREACH", "Network is unreachable"),
    /* 102 */ ("ENETRESET", "Network dropped connection on reset"),
    /* 103 */ ("ECONNABORTED", "Software caused connection abort"),
    /* 104 */ ("ECONNRESET", "Connection reset by peer"), ("ENOBUFS", "No buffer space available"),
    /* 106 */ ("EISCONN", "Transport endpoint is already connected"),
    /* 107 */ ("ENOTCONN", "Transport endpoint is not connected"),
    /* 108 */ ("ESHUTDOWN", "Cannot send after transport endpoint shutdown"),
    /* 109 */ ("ETOOMANYREFS", "Too many references: cannot splice"),
    /* 110 */ ("ETIMEDOUT", "Connection timed out"), ("ECONNREFUSED", "Connection refused"),
    /* 112 */ ("EHOSTDOWN", "Host is down"), ("EHOSTUNREACH", "No route to host"),
    /* 114 */ ("EALREADY", "Operation already in progress"),
    /* 115 */ ("EINPROGRESS", "Operation now in progress"), ("ESTALE", "Stale file handle"),
    /* 117 */ ("EUCLEAN", "Structure needs cleaning"), ("ENOTNAM", "Not a XENIX named type file"),
    /* 119 */ ("ENAVAIL", "No XENIX semaphores available"), ("EISNAM", "Is a named type file"),
    /* 121 */ ("EREMOTEIO", "Remote I/O error"), ("EDQUOT", "Disk quota exceeded"),
    /* 123 */ ("ENOMEDIUM", "No medium found"), ("EMEDIUMTYPE", "Wrong medium type"),
    /* 125 */ ("ECANCELED", "Operation canceled"), ("ENOKEY", "Required key not available"),
    /* 127 */ ("EKEYEXPIRED", "Key has expired"), ("EKEYREVOKED", "Key has been revoked"),
    /* 129 */ ("EKEYREJECTED", "Key was rejected by service"), ("EOWNERDEAD", "Owner died"),
    /* 131 */ ("ENOTRECOVERABLE", "State not recoverable"),
    /* 132 */ ("ERFKILL", "Operation not possible due to RF-kill"),
    /* 133 */ ("EHWPOISON", "Memory page has hardware error"),
];

/// Kernel-internal restart codes that a tracer can see (strace's texts).
const ERRNO_KERNEL: [(&str, &str); 5] = [
    ("ERESTARTSYS", "To be restarted if SA_RESTART is set"),
    ("ERESTARTNOINTR", "To be restarted"),
    ("ERESTARTNOHAND", "To be restarted if no handler"),
    ("ENOIOCTLCMD", "Inappropriate ioctl for device"),
    ("ERESTART_RESTARTBLOCK", "Interrupted by signal"),
];

/// Name and text of errno `e` (a positive number), if Linux defines it.
pub fn errno_info(e: u64) -> Option<(&'static str, &'static str)> {
    let row = match e {
        1..=133 => ERRNO[e as usize],
        512..=516 => ERRNO_KERNEL[(e - 512) as usize],
        _ => return None,
    };
    (!row.0.is_empty()).then_some(row)
}

/// Signal names without the `SIG` prefix, indexed by number (1..=31).
#[rustfmt::skip]
pub const SIGNALS: [&str; 32] = [
    "0", "HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE", "KILL", "USR1", "SEGV",
    "USR2", "PIPE", "ALRM", "TERM", "STKFLT", "CHLD", "CONT", "STOP", "TSTP", "TTIN", "TTOU",
    "URG", "XCPU", "XFSZ", "VTALRM", "PROF", "WINCH", "IO", "PWR", "SYS",
];

/// "SEGV" for SIGSEGV (no allocation: the signal handler names signals).
pub fn sig_name(sig: i32) -> &'static str {
    SIGNALS.get(sig as usize).copied().unwrap_or("?")
}

/// A table of `(value or bits, name)` rows, for enums and flag sets (I4).
pub type Names = [(u64, &'static str)];

// ---------------------------------------------------------------------------
// Renderers: numbers to the text strace prints for them

/// A pointer: `NULL` or `0x...`.
pub fn ptr(v: u64) -> String {
    if v == 0 {
        "NULL".into()
    } else {
        hex(v)
    }
}

/// A hex value, `0` for zero as strace prints it.
pub fn hex(v: u64) -> String {
    if v == 0 {
        "0".into()
    } else {
        format!("{v:#x}")
    }
}

pub fn lookup(v: u64, table: &Names) -> Option<&'static str> {
    table.iter().find(|&&(k, _)| k == v).map(|&(_, name)| name)
}

/// An enum value: its name, or hex if the table does not know it.
pub fn enum_name(v: u64, table: &Names) -> String {
    lookup(v, table).map_or_else(|| format!("{v:#x}"), str::to_string)
}

/// Names for the bits of `v` (greedy, I4), then any leftover bits as hex.
pub fn flag_names(mut v: u64, table: &Names) -> Vec<String> {
    let mut names = Vec::new();
    for &(bits, name) in table {
        if bits != 0 && v & bits == bits {
            names.push(name.to_string());
            v &= !bits;
        }
    }
    if v != 0 {
        names.push(format!("{v:#x}"));
    }
    names
}

/// `A|B|0x40`, or `zero` when there is nothing to join.
pub fn join_or(names: Vec<String>, zero: &str) -> String {
    if names.is_empty() {
        zero.into()
    } else {
        names.join("|")
    }
}

/// A flag set: `flag_names` joined with `|`, or `zero` for no bits.
pub fn flags(v: u64, table: &Names, zero: &str) -> String {
    join_or(flag_names(v, table), zero)
}

/// `open` flags: the access mode always, then the other bits.
pub fn open_flags(v: u64) -> String {
    let access = ["O_RDONLY", "O_WRONLY", "O_RDWR", "O_ACCMODE"][(v & 3) as usize];
    let mut names = vec![access.to_string()];
    names.extend(flag_names(v & !3, OPEN_FLAGS));
    names.join("|")
}

/// Whether `open` flags make the kernel read the mode argument.
pub fn open_needs_mode(flags: u64) -> bool {
    const O_CREAT: u64 = 0o100;
    const O_TMPFILE: u64 = 0o20200000;
    flags & O_CREAT != 0 || flags & O_TMPFILE == O_TMPFILE
}

/// A file mode like strace's `%#03o`: `0644`, `000`.
pub fn mode(v: u64) -> String {
    let s = if v == 0 {
        "0".into()
    } else {
        format!("0{v:o}")
    };
    format!("{s:0>3}")
}

/// `mmap` flags as strace prints them: the sharing type (`MAP_FILE` for 0),
/// the flag bits, then any huge page size as `21<<MAP_HUGE_SHIFT`.
pub fn mmap_flags(v: u64) -> String {
    const HUGE_SHIFT: u64 = 26;
    let kind = match v & 0xf {
        0 => "MAP_FILE".to_string(),
        kind => enum_name(kind, MAP_TYPE),
    };
    let mut names = vec![kind];
    names.extend(flag_names(v & !0xf & !(0x3f << HUGE_SHIFT), MAP_FLAGS));
    let huge = (v >> HUGE_SHIFT) & 0x3f;
    if huge != 0 {
        names.push(format!("{huge}<<MAP_HUGE_SHIFT"));
    }
    names.join("|")
}

/// `statx` flags, naming the default sync type as strace does.
pub fn statx_flags(v: u64) -> String {
    let sync = (v & 0x6000 == 0).then(|| "AT_STATX_SYNC_AS_STAT".to_string());
    let names: Vec<String> = sync.into_iter().chain(flag_names(v, AT_STATX)).collect();
    names.join("|")
}

/// Clone flags (without an exit-signal byte; see `CLONE_FLAGS`).
pub fn clone_flags(v: u64) -> String {
    flags(v, CLONE_FLAGS, "0")
}

/// Short signal name as strace prints it inside sets: `INT`, `RTMIN`, `RT_1`.
pub fn sig_short(n: u64) -> String {
    match n {
        1..=31 => SIGNALS[n as usize].to_string(),
        32 => "RTMIN".to_string(),
        33..=64 => format!("RT_{}", n - 32),
        _ => n.to_string(),
    }
}

/// A signal number argument: `SIGINT`, `SIGRT_2`, or decimal (`0`).
pub fn signal(v: u64) -> String {
    match v as i32 {
        n @ 1..=64 => format!("SIG{}", sig_short(n as u64)),
        n => n.to_string(),
    }
}

/// A 64-signal mask: `[INT TERM]`, or `~[...]` listing the cleared bits
/// when most are set, as strace does.
pub fn sigset_bits(mask: u64) -> String {
    let (prefix, bits) = if mask.count_ones() > 32 {
        ("~", !mask)
    } else {
        ("", mask)
    };
    let names: Vec<String> = (0..64)
        .filter(|b| bits >> b & 1 != 0)
        .map(|b| sig_short(b + 1))
        .collect();
    format!("{prefix}[{}]", names.join(" "))
}

/// A futex op: `FUTEX_WAIT_BITSET_PRIVATE|FUTEX_CLOCK_REALTIME`.
pub fn futex_op(op: u64) -> String {
    const PRIVATE: u64 = 128;
    const CLOCK_REALTIME: u64 = 256;
    let Some(name) = lookup(op & !(PRIVATE | CLOCK_REALTIME), FUTEX_CMDS) else {
        return format!("{op:#x}");
    };
    let private = if op & PRIVATE != 0 { "_PRIVATE" } else { "" };
    let clock = if op & CLOCK_REALTIME != 0 {
        "|FUTEX_CLOCK_REALTIME"
    } else {
        ""
    };
    format!("{name}{private}{clock}")
}

/// `[{WIFEXITED(s) && WEXITSTATUS(s) == 0}]`, as strace prints wait status.
pub fn wait_status(s: u32) -> String {
    let (low, high) = (u64::from(s & 0x7f), u64::from((s >> 8) & 0xff));
    let inner = if low == 0 {
        format!("WIFEXITED(s) && WEXITSTATUS(s) == {high}")
    } else if low == 0x7f {
        format!("WIFSTOPPED(s) && WSTOPSIG(s) == {}", signal(high))
    } else {
        let core = if s & 0x80 != 0 {
            " && WCOREDUMP(s)"
        } else {
            ""
        };
        format!("WIFSIGNALED(s) && WTERMSIG(s) == {}{core}", signal(low))
    };
    format!("[{{{inner}}}]")
}

// ---------------------------------------------------------------------------
// Tables (I4)

/// `open` flags other than the access mode (`O_ACCMODE`), in strace's order.
#[rustfmt::skip]
pub const OPEN_FLAGS: &Names = &[
    (0o100, "O_CREAT"), (0o200, "O_EXCL"), (0o400, "O_NOCTTY"), (0o1000, "O_TRUNC"),
    (0o2000, "O_APPEND"), (0o4000, "O_NONBLOCK"), (0o4010000, "O_SYNC"), (0o10000, "O_DSYNC"),
    (0o20000, "O_ASYNC"), (0o40000, "O_DIRECT"), (0o100000, "O_LARGEFILE"),
    (0o400000, "O_NOFOLLOW"), (0o1000000, "O_NOATIME"), (0o2000000, "O_CLOEXEC"),
    (0o10000000, "O_PATH"), (0o20200000, "O_TMPFILE"), (0o200000, "O_DIRECTORY"),
];

#[rustfmt::skip]
pub const PROT: &Names = &[
    (0x1, "PROT_READ"), (0x2, "PROT_WRITE"), (0x4, "PROT_EXEC"), (0x8, "PROT_SEM"),
    (0x0100_0000, "PROT_GROWSDOWN"), (0x0200_0000, "PROT_GROWSUP"),
];

/// `mmap` sharing types (the low nibble of the flags).
pub const MAP_TYPE: &Names = &[
    (1, "MAP_SHARED"),
    (2, "MAP_PRIVATE"),
    (3, "MAP_SHARED_VALIDATE"),
];

/// `mmap` flag bits; bits 26..31 are the huge page size, see `mmap_flags`.
#[rustfmt::skip]
pub const MAP_FLAGS: &Names = &[
    (0x10, "MAP_FIXED"), (0x20, "MAP_ANONYMOUS"), (0x40, "MAP_32BIT"), (0x100, "MAP_GROWSDOWN"),
    (0x800, "MAP_DENYWRITE"), (0x1000, "MAP_EXECUTABLE"), (0x2000, "MAP_LOCKED"),
    (0x4000, "MAP_NORESERVE"), (0x8000, "MAP_POPULATE"), (0x10000, "MAP_NONBLOCK"),
    (0x20000, "MAP_STACK"), (0x40000, "MAP_HUGETLB"), (0x80000, "MAP_SYNC"),
    (0x100000, "MAP_FIXED_NOREPLACE"),
];

pub const MREMAP: &Names = &[
    (1, "MREMAP_MAYMOVE"),
    (2, "MREMAP_FIXED"),
    (4, "MREMAP_DONTUNMAP"),
];

#[rustfmt::skip]
pub const MADV: &Names = &[
    (0, "MADV_NORMAL"), (1, "MADV_RANDOM"), (2, "MADV_SEQUENTIAL"), (3, "MADV_WILLNEED"),
    (4, "MADV_DONTNEED"), (8, "MADV_FREE"), (9, "MADV_REMOVE"), (10, "MADV_DONTFORK"),
    (11, "MADV_DOFORK"), (12, "MADV_MERGEABLE"), (13, "MADV_UNMERGEABLE"), (14, "MADV_HUGEPAGE"),
    (15, "MADV_NOHUGEPAGE"), (16, "MADV_DONTDUMP"), (17, "MADV_DODUMP"), (18, "MADV_WIPEONFORK"),
    (19, "MADV_KEEPONFORK"), (20, "MADV_COLD"), (21, "MADV_PAGEOUT"), (22, "MADV_POPULATE_READ"),
    (23, "MADV_POPULATE_WRITE"), (24, "MADV_DONTNEED_LOCKED"), (25, "MADV_COLLAPSE"),
    (100, "MADV_HWPOISON"), (101, "MADV_SOFT_OFFLINE"), (102, "MADV_GUARD_INSTALL"),
    (103, "MADV_GUARD_REMOVE"),
];

/// `AT_*` flags accepted by the stat/chown/link family.
#[rustfmt::skip]
pub const AT_FLAGS: &Names = &[
    (0x100, "AT_SYMLINK_NOFOLLOW"), (0x400, "AT_SYMLINK_FOLLOW"), (0x800, "AT_NO_AUTOMOUNT"),
    (0x1000, "AT_EMPTY_PATH"), (0x8000, "AT_RECURSIVE"),
];

pub const AT_UNLINK: &Names = &[(0x200, "AT_REMOVEDIR")];

#[rustfmt::skip]
pub const AT_ACCESS: &Names = &[
    (0x100, "AT_SYMLINK_NOFOLLOW"), (0x200, "AT_EACCESS"), (0x1000, "AT_EMPTY_PATH"),
];

/// `statx` flags; a zero sync type (bits 0x6000) is named by `statx_flags`.
#[rustfmt::skip]
pub const AT_STATX: &Names = &[
    (0x100, "AT_SYMLINK_NOFOLLOW"), (0x800, "AT_NO_AUTOMOUNT"), (0x1000, "AT_EMPTY_PATH"),
    (0x2000, "AT_STATX_FORCE_SYNC"), (0x4000, "AT_STATX_DONT_SYNC"),
];

#[rustfmt::skip]
pub const STATX_MASK: &Names = &[
    (0x7ff, "STATX_BASIC_STATS"), (0x1, "STATX_TYPE"), (0x2, "STATX_MODE"), (0x4, "STATX_NLINK"),
    (0x8, "STATX_UID"), (0x10, "STATX_GID"), (0x20, "STATX_ATIME"), (0x40, "STATX_MTIME"),
    (0x80, "STATX_CTIME"), (0x100, "STATX_INO"), (0x200, "STATX_SIZE"), (0x400, "STATX_BLOCKS"),
    (0x800, "STATX_BTIME"), (0x1000, "STATX_MNT_ID"), (0x2000, "STATX_DIOALIGN"),
    (0x4000, "STATX_MNT_ID_UNIQUE"), (0x8000, "STATX_SUBVOL"), (0x10000, "STATX_WRITE_ATOMIC"),
    (0x20000, "STATX_DIO_READ_ALIGN"),
];

pub const ACCESS_MODE: &Names = &[(4, "R_OK"), (2, "W_OK"), (1, "X_OK")];

#[rustfmt::skip]
pub const WHENCE: &Names = &[
    (0, "SEEK_SET"), (1, "SEEK_CUR"), (2, "SEEK_END"), (3, "SEEK_DATA"), (4, "SEEK_HOLE"),
];

#[rustfmt::skip]
pub const CLOCKS: &Names = &[
    (0, "CLOCK_REALTIME"), (1, "CLOCK_MONOTONIC"), (2, "CLOCK_PROCESS_CPUTIME_ID"),
    (3, "CLOCK_THREAD_CPUTIME_ID"), (4, "CLOCK_MONOTONIC_RAW"), (5, "CLOCK_REALTIME_COARSE"),
    (6, "CLOCK_MONOTONIC_COARSE"), (7, "CLOCK_BOOTTIME"), (8, "CLOCK_REALTIME_ALARM"),
    (9, "CLOCK_BOOTTIME_ALARM"), (11, "CLOCK_TAI"),
];

pub const TIMER_FLAGS: &Names = &[(1, "TIMER_ABSTIME")];

pub const SIGPROCMASK_HOW: &Names = &[(0, "SIG_BLOCK"), (1, "SIG_UNBLOCK"), (2, "SIG_SETMASK")];

#[rustfmt::skip]
pub const SA_FLAGS: &Names = &[
    (0x1, "SA_NOCLDSTOP"), (0x2, "SA_NOCLDWAIT"), (0x4, "SA_SIGINFO"), (0x400, "SA_UNSUPPORTED"),
    (0x800, "SA_EXPOSE_TAGBITS"), (0x0400_0000, "SA_RESTORER"), (0x0800_0000, "SA_ONSTACK"),
    (0x1000_0000, "SA_RESTART"), (0x4000_0000, "SA_NODEFER"), (0x8000_0000, "SA_RESETHAND"),
];

#[rustfmt::skip]
pub const FCNTL_CMDS: &Names = &[
    (0, "F_DUPFD"), (1, "F_GETFD"), (2, "F_SETFD"), (3, "F_GETFL"), (4, "F_SETFL"),
    (5, "F_GETLK"), (6, "F_SETLK"), (7, "F_SETLKW"), (8, "F_SETOWN"), (9, "F_GETOWN"),
    (10, "F_SETSIG"), (11, "F_GETSIG"), (15, "F_SETOWN_EX"), (16, "F_GETOWN_EX"),
    (17, "F_GETOWNER_UIDS"), (36, "F_OFD_GETLK"), (37, "F_OFD_SETLK"), (38, "F_OFD_SETLKW"),
    (1024, "F_SETLEASE"), (1025, "F_GETLEASE"), (1026, "F_NOTIFY"), (1027, "F_DUPFD_QUERY"),
    (1028, "F_CREATED_QUERY"), (1029, "F_CANCELLK"), (1030, "F_DUPFD_CLOEXEC"),
    (1031, "F_SETPIPE_SZ"), (1032, "F_GETPIPE_SZ"), (1033, "F_ADD_SEALS"), (1034, "F_GET_SEALS"),
    (1035, "F_GET_RW_HINT"), (1036, "F_SET_RW_HINT"), (1037, "F_GET_FILE_RW_HINT"),
    (1038, "F_SET_FILE_RW_HINT"),
];

pub const FD_FLAGS: &Names = &[(1, "FD_CLOEXEC")];

#[rustfmt::skip]
pub const SEALS: &Names = &[
    (1, "F_SEAL_SEAL"), (2, "F_SEAL_SHRINK"), (4, "F_SEAL_GROW"), (8, "F_SEAL_WRITE"),
    (0x10, "F_SEAL_FUTURE_WRITE"), (0x20, "F_SEAL_EXEC"),
];

#[rustfmt::skip]
pub const IOCTLS: &Names = &[
    (0x5401, "TCGETS"), (0x5402, "TCSETS"), (0x5403, "TCSETSW"), (0x5404, "TCSETSF"),
    (0x540b, "TCFLSH"), (0x540e, "TIOCSCTTY"), (0x540f, "TIOCGPGRP"), (0x5410, "TIOCSPGRP"),
    (0x5413, "TIOCGWINSZ"), (0x5414, "TIOCSWINSZ"), (0x541b, "FIONREAD"), (0x5421, "FIONBIO"),
    (0x5422, "TIOCNOTTY"), (0x5450, "FIONCLEX"), (0x5451, "FIOCLEX"), (0x5452, "FIOASYNC"),
    (0x802c542a, "TCGETS2"), (0x402c542b, "TCSETS2"), (0x80045430, "TIOCGPTN"),
    (0x40045431, "TIOCSPTLCK"),
];

pub const GRND: &Names = &[
    (1, "GRND_NONBLOCK"),
    (2, "GRND_RANDOM"),
    (4, "GRND_INSECURE"),
];

#[rustfmt::skip]
pub const ARCH_PRCTL: &Names = &[
    (0x1001, "ARCH_SET_GS"), (0x1002, "ARCH_SET_FS"), (0x1003, "ARCH_GET_FS"),
    (0x1004, "ARCH_GET_GS"), (0x1011, "ARCH_GET_CPUID"), (0x1012, "ARCH_SET_CPUID"),
    (0x1021, "ARCH_GET_XCOMP_SUPP"), (0x1022, "ARCH_GET_XCOMP_PERM"),
    (0x1023, "ARCH_REQ_XCOMP_PERM"), (0x1024, "ARCH_GET_XCOMP_GUEST_PERM"),
    (0x1025, "ARCH_REQ_XCOMP_GUEST_PERM"), (0x2001, "ARCH_MAP_VDSO_X32"),
    (0x2002, "ARCH_MAP_VDSO_32"), (0x2003, "ARCH_MAP_VDSO_64"), (0x4001, "ARCH_GET_UNTAG_MASK"),
    (0x4002, "ARCH_ENABLE_TAGGED_ADDR"), (0x4003, "ARCH_GET_MAX_TAG_BITS"),
    (0x4004, "ARCH_FORCE_TAGGED_SVA"), (0x5001, "ARCH_SHSTK_ENABLE"),
    (0x5002, "ARCH_SHSTK_DISABLE"), (0x5003, "ARCH_SHSTK_LOCK"), (0x5004, "ARCH_SHSTK_UNLOCK"),
    (0x5005, "ARCH_SHSTK_STATUS"),
];

#[rustfmt::skip]
pub const RLIMITS: &Names = &[
    (0, "RLIMIT_CPU"), (1, "RLIMIT_FSIZE"), (2, "RLIMIT_DATA"), (3, "RLIMIT_STACK"),
    (4, "RLIMIT_CORE"), (5, "RLIMIT_RSS"), (6, "RLIMIT_NPROC"), (7, "RLIMIT_NOFILE"),
    (8, "RLIMIT_MEMLOCK"), (9, "RLIMIT_AS"), (10, "RLIMIT_LOCKS"), (11, "RLIMIT_SIGPENDING"),
    (12, "RLIMIT_MSGQUEUE"), (13, "RLIMIT_NICE"), (14, "RLIMIT_RTPRIO"), (15, "RLIMIT_RTTIME"),
];

/// `futex` commands (the op without the PRIVATE and CLOCK_REALTIME bits).
#[rustfmt::skip]
pub const FUTEX_CMDS: &Names = &[
    (0, "FUTEX_WAIT"), (1, "FUTEX_WAKE"), (2, "FUTEX_FD"), (3, "FUTEX_REQUEUE"),
    (4, "FUTEX_CMP_REQUEUE"), (5, "FUTEX_WAKE_OP"), (6, "FUTEX_LOCK_PI"), (7, "FUTEX_UNLOCK_PI"),
    (8, "FUTEX_TRYLOCK_PI"), (9, "FUTEX_WAIT_BITSET"), (10, "FUTEX_WAKE_BITSET"),
    (11, "FUTEX_WAIT_REQUEUE_PI"), (12, "FUTEX_CMP_REQUEUE_PI"), (13, "FUTEX_LOCK_PI2"),
];

/// `clone` flags. `clone` masks off its exit-signal byte before using this
/// table; `CLONE_NEWTIME` (0x80) only means that in unshare/setns/clone3.
#[rustfmt::skip]
pub const CLONE_FLAGS: &Names = &[
    (0x100, "CLONE_VM"), (0x200, "CLONE_FS"), (0x400, "CLONE_FILES"), (0x800, "CLONE_SIGHAND"),
    (0x1000, "CLONE_PIDFD"), (0x2000, "CLONE_PTRACE"), (0x4000, "CLONE_VFORK"),
    (0x8000, "CLONE_PARENT"), (0x10000, "CLONE_THREAD"), (0x20000, "CLONE_NEWNS"),
    (0x40000, "CLONE_SYSVSEM"), (0x80000, "CLONE_SETTLS"), (0x100000, "CLONE_PARENT_SETTID"),
    (0x200000, "CLONE_CHILD_CLEARTID"), (0x400000, "CLONE_DETACHED"),
    (0x800000, "CLONE_UNTRACED"), (0x1000000, "CLONE_CHILD_SETTID"),
    (0x2000000, "CLONE_NEWCGROUP"), (0x4000000, "CLONE_NEWUTS"), (0x8000000, "CLONE_NEWIPC"),
    (0x10000000, "CLONE_NEWUSER"), (0x20000000, "CLONE_NEWPID"), (0x40000000, "CLONE_NEWNET"),
    (0x80000000, "CLONE_IO"), (0x100000000, "CLONE_CLEAR_SIGHAND"),
    (0x200000000, "CLONE_INTO_CGROUP"), (0x80, "CLONE_NEWTIME"),
];

#[rustfmt::skip]
pub const WAIT_OPTIONS: &Names = &[
    (0x1, "WNOHANG"), (0x2, "WUNTRACED"), (0x4, "WEXITED"), (0x8, "WCONTINUED"),
    (0x0100_0000, "WNOWAIT"), (0x2000_0000, "__WNOTHREAD"), (0x4000_0000, "__WALL"),
    (0x8000_0000, "__WCLONE"),
];

#[cfg(test)]
mod tests;
