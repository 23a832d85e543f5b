//! Syscalls whose pointers or ranges name hotlift's memory
//! (`tests/hostile/reach.c`): they fail as where nothing is mapped.

use super::*;

#[test]
fn syscalls_aimed_at_hotlift_memory_fail_as_on_unmapped_memory() {
    use std::io::Write;
    let dir = workdir("reach");
    let exe = build_named(&dir, "reach");
    let p = dir.join("p.json");
    let (mut child, mut out, maps) = spawn_ready(&exe, &p);
    // hotlift's own memory, as the kernel lists it from outside: the code
    // cache's writable alias, hotlift's heap and its program's data.
    let own = std::fs::canonicalize(env!("CARGO_BIN_EXE_hotlift")).unwrap();
    let pick = |want: &dyn Fn(&str) -> bool| -> String {
        let l = maps
            .lines()
            .find(|l| want(l))
            .unwrap_or_else(|| panic!("no such mapping in\n{maps}"));
        l.split('-').next().unwrap().to_string()
    };
    let targets = [
        pick(&|l| l.contains("/dev/zero (deleted)") && l.contains(" rw-s ")),
        pick(&|l| l.ends_with("[heap]")),
        pick(&|l| l.contains(" rw-p ") && l.ends_with(own.to_str().unwrap())),
    ];
    let mut stdin = child.stdin.take().unwrap();
    for t in &targets {
        writeln!(stdin, "{t}").unwrap();
    }
    drop(stdin);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    let st = child.wait().unwrap();
    let want = "read EFAULT write EFAULT readv EFAULT mem pread EIO mem readv EIO \
                process_vm_readv EFAULT \
                process_vm_writev EFAULT clock_gettime EFAULT pipe EFAULT \
                madvise ENOMEM mlock ENOMEM msync ENOMEM rt_sigaction EFAULT \
                rt_sigprocmask EFAULT sigaltstack EFAULT arch_prctl EFAULT \
                prctl_get_name EFAULT prctl_pdeathsig EFAULT futex_wake_op EFAULT";
    let expected: String = (1..=3)
        .map(|i| format!("target {i}: {want}\n"))
        .chain([
            "3 targets, process_vm_readv of its own memory: 8 copied, still running\n".to_string(),
        ])
        .collect();
    assert_eq!(rest, expected);
    assert_eq!(st.code(), Some(0));
    assert_eq!(read_profile(&p)["ending"]["code"], 0);
}
