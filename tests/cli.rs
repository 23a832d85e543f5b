//! The option table of docs/USAGE.md is generated from `src/options.rs`; this test
//! keeps them equal. `HOTLIFT_BLESS=1 cargo test --test cli` rewrites it.

const BEGIN: &str = "<!-- options:begin (generated; HOTLIFT_BLESS=1 cargo test --test cli) -->\n";
const END: &str = "<!-- options:end -->";

#[test]
fn usage_option_table_matches_help() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/USAGE.md");
    let readme = std::fs::read_to_string(path).expect("docs/USAGE.md");
    let table = hotlift::cli::run_options_markdown();
    let (Some(b), Some(e)) = (readme.find(BEGIN), readme.find(END)) else {
        panic!("docs/USAGE.md lacks the options markers");
    };
    let current = &readme[b + BEGIN.len()..e];
    if current != table {
        if std::env::var_os("HOTLIFT_BLESS").is_some() {
            let new = format!("{}{}{}{}", &readme[..b], BEGIN, table, &readme[e..]);
            std::fs::write(path, new).expect("write docs/USAGE.md");
            return;
        }
        panic!("docs/USAGE.md option table is stale; run HOTLIFT_BLESS=1 cargo test --test cli\n--- docs/USAGE.md\n{current}\n--- --help\n{table}");
    }
}

#[test]
fn help_lists_every_option() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hotlift"))
        .args(["run", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for line in hotlift::cli::run_options_markdown().lines().skip(2) {
        let long = line.split('`').nth(1).unwrap();
        let long = if long.starts_with("--") {
            long
        } else {
            line.split('`').nth(3).unwrap()
        };
        let long = long.split(' ').next().unwrap();
        assert!(help.contains(long), "{long} missing from --help");
    }
}

/// `run -h` shows the options users reach for; the tuning ones (under the
/// `Tuning` heading of `run --help`) only `--help` shows (issue 20).
#[test]
fn short_help_leaves_the_tuning_options_out() {
    let help = |flag: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_hotlift"))
            .args(["run", flag])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let (short, long) = (help("-h"), help("--help"));
    let at = long
        .find("\nTuning")
        .expect("a Tuning heading in run --help");
    let tuning: Vec<&str> = long[at..]
        .lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with('-'))
        .filter_map(|l| l.split([' ', ',']).find(|w| w.starts_with("--")))
        .collect();
    assert!(tuning.len() >= 10, "tuning options: {tuning:?}");
    for opt in &tuning {
        assert!(!short.contains(opt), "run -h shows the tuning option {opt}");
    }
    for opt in ["--profile", "--no-monitor", "--perf-map", "--strace"] {
        assert!(short.contains(opt), "run -h leaves out {opt}");
    }
    assert!(short.lines().count() < long.lines().count() / 2);
}

#[test]
fn bad_input_exit_codes() {
    let bin = env!("CARGO_BIN_EXE_hotlift");
    let run = |args: &[&str]| std::process::Command::new(bin).args(args).output().unwrap();
    let missing = run(&["run", "--", "/nonexistent/prog"]);
    assert_eq!(missing.status.code(), Some(127));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent/prog"));
    let not_elf = run(&[
        "run",
        "--",
        concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"),
    ]);
    assert_eq!(
        not_elf.status.code(),
        Some(126),
        "{}",
        String::from_utf8_lossy(&not_elf.stderr)
    );
    let bad_opt = run(&["run", "--max-block-insns", "0", "--", "/bin/true"]);
    assert_eq!(bad_opt.status.code(), Some(125));
    // clap's suggestions are kept, on the one line, and an unknown
    // subcommand points to the top-level help.
    let typo = run(&["run", "--no-chian", "--", "/bin/true"]);
    let err = String::from_utf8_lossy(&typo.stderr);
    assert_eq!(typo.status.code(), Some(125));
    assert!(
        err.contains("'--no-chain'") && err.lines().count() == 1,
        "{err}"
    );
    // One transposition, which clap's similarity does not find.
    let typo = run(&["rnu", "--", "/bin/true"]);
    let err = String::from_utf8_lossy(&typo.stderr);
    assert!(
        err.contains("a similar subcommand exists: 'run'") && err.lines().count() == 1,
        "{err}"
    );
    let typo = run(&["sumary", "p.json"]);
    let err = String::from_utf8_lossy(&typo.stderr);
    assert!(
        err.contains("'summary'") && err.contains("(see hotlift --help)"),
        "{err}"
    );
    // Bare `hotlift`: the help, not the one-line description.
    let bare = run(&[]);
    let err = String::from_utf8_lossy(&bare.stderr);
    assert_eq!(bare.status.code(), Some(125));
    assert!(
        err.contains("Usage: hotlift") && err.contains("profile") && err.contains("export"),
        "{err}"
    );
    // A profile needs the monitor: refused before the program runs (it
    // once ran to the end and wrote nothing, with status 0).
    let no_profile = run(&[
        "run",
        "--no-monitor",
        "--profile",
        "/tmp/x.json",
        "--",
        "/bin/true",
    ]);
    assert_eq!(no_profile.status.code(), Some(125));
    assert!(String::from_utf8_lossy(&no_profile.stderr).contains("--no-monitor"));
    // A profile that cannot be written: refused before the program runs
    // (the program would have made `ran`).
    let dir = std::env::temp_dir().join(format!("hotlift-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let ran = dir.join("ran");
    for bad in ["/nonexistent/dir/p.json", dir.to_str().unwrap()] {
        let o = run(&[
            "run",
            "--profile",
            bad,
            "--",
            "/bin/touch",
            ran.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(125), "{bad}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("cannot write the profile"),
            "{bad}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(!ran.exists(), "{bad}: the program ran");
    }
    std::fs::remove_dir_all(&dir).unwrap();
    // A profile to a device is written to it, never renamed over it (as
    // root, /dev/full became a regular file): /dev/full refuses the
    // write, which is said, and the run exits 125 (it was 0).
    let full = run(&["run", "--profile", "/dev/full", "--", "/bin/true"]);
    assert_eq!(full.status.code(), Some(125), "{full:?}");
    assert!(
        String::from_utf8_lossy(&full.stderr).contains("cannot write the profile to /dev/full"),
        "{}",
        String::from_utf8_lossy(&full.stderr)
    );
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata("/dev/full")
        .unwrap()
        .file_type()
        .is_char_device());
    let dynamic = run(&["run", "--", "/bin/true"]);
    assert_eq!(dynamic.status.code(), Some(0), "{dynamic:?}");
    // /bin/true with its PT_INTERP pointing elsewhere: a missing
    // interpreter (127, as a shell reports it), one that is not an ELF
    // program (126; relative, so opened from the working directory).
    let bytes = std::fs::read("/bin/true").unwrap();
    let ld = b"/lib64/ld-linux-x86-64.so.2\0";
    let at = bytes.windows(ld.len()).position(|w| w == ld).unwrap();
    let dir = std::env::temp_dir().join(format!("hotlift-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let with_interp = |name: &str, interp: &[u8]| {
        let mut b = bytes.clone();
        b[at..at + interp.len()].copy_from_slice(interp);
        b[at + interp.len()] = 0;
        let path = dir.join(name);
        std::fs::write(&path, b).unwrap();
        // Executable, as `execve` (and so `run`) wants.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path.to_str().unwrap().to_string()
    };
    let no_ld = with_interp("no-ld", b"/nonexistent/interpreter.so");
    let no_ld = run(&["run", "--", &no_ld]);
    assert_eq!(no_ld.status.code(), Some(127), "{no_ld:?}");
    let err = String::from_utf8_lossy(&no_ld.stderr);
    assert!(
        err.contains("interpreter /nonexistent/interpreter.so"),
        "{err}"
    );
    let text_ld = with_interp("text-ld", b"README.md");
    let text_ld = std::process::Command::new(bin)
        .args(["run", "--", &text_ld])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert_eq!(text_ld.status.code(), Some(126), "{text_ld:?}");
    let err = String::from_utf8_lossy(&text_ld.stderr);
    assert!(
        err.contains("interpreter README.md: not an ELF file"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
    for out in [missing, not_elf, no_ld, text_ld] {
        assert_eq!(
            String::from_utf8_lossy(&out.stderr).lines().count(),
            1,
            "one-line error: {:?}",
            out
        );
    }
}

/// Build a tiny static assembly program into a temp dir.
fn build_asm(name: &str, body: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("hotlift-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join(format!("{name}.S"));
    let exe = dir.join(name);
    std::fs::write(
        &src,
        format!(".intel_syntax noprefix\n.globl _start\n_start:\n{body}\n"),
    )
    .unwrap();
    let st = std::process::Command::new("gcc")
        .args(["-nostdlib", "-static", "-o"])
        .arg(&exe)
        .arg(&src)
        .status();
    assert!(
        st.map(|s| s.success()).unwrap_or(false),
        "gcc failed for {name}"
    );
    exe
}

#[test]
fn perf_map_is_written_without_the_monitor() {
    // A function called in a loop, and exit(0).
    let exe = build_asm(
        "perfmap",
        "    mov ecx, 100\n2:  call spin\n    dec ecx\n    jnz 2b\n\
         \x20   mov eax, 60\n    xor edi, edi\n    syscall\n\
         .type spin, @function\nspin:\n    add rax, 1\n    ret\n.size spin, .-spin",
    );
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_hotlift"))
        .args(["run", "--perf-map", "--no-monitor", "--"])
        .arg(&exe)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let map = std::path::PathBuf::from(format!("/tmp/perf-{}.map", child.id()));
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let text = std::fs::read_to_string(&map).unwrap_or_else(|e| panic!("{map:?}: {e}; {err}"));
    let _ = std::fs::remove_file(&map);
    // `START SIZE NAME`, in hex; the function by its symbol.
    for line in text.lines() {
        let f: Vec<&str> = line.splitn(3, ' ').collect();
        assert!(
            f.len() == 3
                && u64::from_str_radix(f[0], 16).is_ok()
                && u64::from_str_radix(f[1], 16).is_ok_and(|n| n > 0)
                && f[2].starts_with("hotlift:"),
            "{line}"
        );
    }
    assert!(text.contains("hotlift:spin [0x"), "{text}");
}

#[test]
fn verbose_names_the_guest_address_of_traps_and_faults() {
    use std::os::unix::process::ExitStatusExt;
    let cases = [
        (
            "int3",
            "nop\nint3\n",
            libc::SIGTRAP,
            "SIGTRAP at guest 0x401001",
        ),
        (
            "ud2",
            "nop\nud2\n",
            libc::SIGILL,
            "SIGILL at guest 0x401001",
        ),
        (
            "null",
            "xor eax, eax\nmov [rax], eax\n",
            libc::SIGSEGV,
            "SIGSEGV at guest 0x401002 (data address 0x0)",
        ),
        (
            "jmpnull",
            "xor eax, eax\njmp rax\n",
            libc::SIGSEGV,
            "SIGSEGV at guest 0x0",
        ),
    ];
    for (name, body, sig, want) in cases {
        let exe = build_asm(name, body);
        let native = std::process::Command::new(&exe).output().unwrap();
        assert_eq!(native.status.signal(), Some(sig), "{name} natively");
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_hotlift"))
            .args(["run", "-v", "--"])
            .arg(&exe)
            .output()
            .unwrap();
        assert_eq!(
            out.status.signal(),
            Some(sig),
            "{name} under hotlift: {out:?}"
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{name}: stderr {err:?} lacks {want:?}");
    }
}

#[test]
fn unsupported_instruction_stops_with_its_address() {
    let exe = build_asm("int80", "mov eax, 1\nint 0x80\n");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hotlift"))
        .args(["run", "--"])
        .arg(&exe)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(125));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("0x401005") && err.contains("int 0x80"),
        "{err}"
    );
}

#[test]
fn unsupported_syscalls_are_named_once_or_each_time_with_verbose() {
    // kcmp (312) twice, then exit with its result's low byte: -ENOSYS.
    let body = "mov r12d, 2\n\
        1: mov eax, 312\nxor edi, edi\nxor esi, esi\nxor edx, edx\nsyscall\n\
        dec r12d\njnz 1b\n\
        mov edi, eax\nneg edi\nmov eax, 60\nsyscall\n";
    let exe = build_asm("kcmp", body);
    for (verbose, lines) in [(false, 1), (true, 2)] {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_hotlift"));
        cmd.arg("run");
        if verbose {
            cmd.arg("-v");
        }
        let out = cmd.arg("--").arg(&exe).output().unwrap();
        assert_eq!(out.status.code(), Some(libc::ENOSYS), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        let said: Vec<&str> = err.lines().filter(|l| l.contains("kcmp (312)")).collect();
        assert_eq!(said.len(), lines, "verbose {verbose}: {err}");
        assert!(
            said[0].contains("at 0x401011") && said[0].contains("not supported"),
            "{err}"
        );
    }
}

/// `cmd`'s status and stderr (its stdout goes nowhere: a pipe nobody
/// drains could fill), within 20 s: a hang is the failure the callers
/// test for.
fn output_within(cmd: &mut std::process::Command) -> std::process::Output {
    let mut c = cmd
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    while c.try_wait().unwrap().is_none() {
        if t0.elapsed() > std::time::Duration::from_secs(20) {
            c.kill().unwrap();
            panic!("{cmd:?} still running after 20 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    c.wait_with_output().unwrap()
}

/// `run` refuses what `execve` refuses, with the shell's status 126 and
/// the kernel's reason: a device (`/dev/zero` was read forever, growing
/// past 3.8 GB), a fifo with execute bits (waited forever), a file without
/// them (ran), a directory. The profile readers refuse devices and
/// directories and read a fifo nobody writes to as empty, at once.
#[test]
fn non_programs_are_refused_as_execve_refuses_them() {
    use std::os::unix::fs::PermissionsExt;
    let bin = env!("CARGO_BIN_EXE_hotlift");
    let dir = std::env::temp_dir().join(format!("hotlift-nonprog-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let no_x = dir.join("true-without-x");
    std::fs::copy("/bin/true", &no_x).unwrap();
    std::fs::set_permissions(&no_x, std::fs::Permissions::from_mode(0o644)).unwrap();
    let within = |args: &[&std::ffi::OsStr]| {
        let o = output_within(std::process::Command::new(bin).args(args));
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let programs = [
        std::path::Path::new("/dev/zero"),
        fifo.as_path(),
        no_x.as_path(),
        dir.as_path(),
    ];
    for p in programs {
        let native = std::process::Command::new(p).status().unwrap_err();
        assert_eq!(native.raw_os_error(), Some(libc::EACCES), "{}", p.display());
        let (code, err) = within(&["run".as_ref(), "--".as_ref(), p.as_os_str()]);
        assert_eq!(code, Some(126), "{}: {err}", p.display());
        assert!(err.contains("Permission denied"), "{}: {err}", p.display());
    }
    for cmd in ["report", "dump"] {
        for p in ["/dev/zero", dir.to_str().unwrap()] {
            let (code, err) = within(&[cmd.as_ref(), p.as_ref()]);
            assert_eq!(code, Some(2), "{cmd} {p}: {err}");
            assert!(
                err.contains("not a regular file or a pipe"),
                "{cmd} {p}: {err}"
            );
        }
        let (code, err) = within(&[cmd.as_ref(), fifo.as_os_str()]);
        assert_eq!(code, Some(2), "{cmd} fifo: {err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A fifo as input with a writer that never ends (`cat /dev/zero >
/// fifo`) is refused at its first byte (the readers grew ~350 MB/s
/// before); a fifo as `--profile` that nobody reads is an error at the
/// end, status 125 (it blocked in `open` for ever, deaf to SIGTERM).
#[test]
fn fifos_that_would_never_end_are_errors() {
    let bin = env!("CARGO_BIN_EXE_hotlift");
    let dir = std::env::temp_dir().join(format!("hotlift-fifos-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    // Opened read-write: a fifo's writer end opens without a reader so.
    let end = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&fifo)
        .unwrap();
    let mut writer = std::process::Command::new("cat")
        .arg("/dev/zero")
        .stdout(end)
        .spawn()
        .unwrap();
    let o = output_within(std::process::Command::new(bin).arg("dump").arg(&fifo));
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("first byte (0x00)"),
        "{o:?}"
    );
    writer.kill().unwrap();
    writer.wait().unwrap();
    let _ = std::fs::remove_file(&fifo);
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    let mut run = std::process::Command::new(bin);
    run.args(["run", "--profile"])
        .arg(&fifo)
        .args(["--", "/bin/sh", "-c", ":"]);
    let o = output_within(&mut run);
    assert_eq!(o.status.code(), Some(125), "{o:?}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no reader"),
        "{o:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// hotlift's messages stay on the stderr it started with when the guest
/// closes fd 2 and opens a file there: before, the `--strace` lines after
/// the close went into the guest's own file (and with fd 2 closed, a
/// late "cannot write the profile" went nowhere).
#[test]
fn messages_keep_their_stderr_when_the_guest_closes_fd_2() {
    let bin = env!("CARGO_BIN_EXE_hotlift");
    let dir = std::env::temp_dir().join(format!("hotlift-stderr-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let o = output_within(
        std::process::Command::new(bin)
            .current_dir(&dir)
            .args(["run", "--strace", "--", "/bin/sh", "-c"])
            .arg("exec 2>&-; exec 2>guest.log; echo hi; echo to-guest-log >&2"),
    );
    assert!(o.status.success(), "{o:?}");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains(r#"write(1, "hi\n", 3) = 3"#), "{stderr}");
    let log = std::fs::read_to_string(dir.join("guest.log")).unwrap();
    assert_eq!(log, "to-guest-log\n", "hotlift wrote into the guest's fd 2");
    let _ = std::fs::remove_dir_all(&dir);
}
