//! Forged signal frames (`tests/hostile/sigframe.c`): what `rt_sigreturn`
//! takes from a frame the guest changed is checked as the kernel checks
//! it, and hotlift's memory is never read into the guest's state.

use super::*;
use std::io::Write;

/// A frame whose FPU state pointer names hotlift's own memory (the code
/// cache's read-execute view, found from outside as the kernel lists
/// it): natively nothing is mapped there and the guest dies of SIGSEGV,
/// as it does natively with an unmapped address; hotlift read its own
/// code into the guest's vector registers and the guest went on.
#[test]
fn a_frames_fpu_state_in_hotlifts_memory_is_a_sigsegv() {
    let dir = workdir("sigframe-fp");
    let exe = build_named(&dir, "sigframe");
    let p = dir.join("p.json");
    let (mut child, mut out, maps) = spawn_ready(&exe, &p);
    let code = maps
        .lines()
        .find(|l| l.contains("/dev/zero (deleted)") && l.contains(" r-xs "))
        .unwrap_or_else(|| panic!("no code cache in\n{maps}"));
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{}", code.split('-').next().unwrap()).unwrap();
    drop(stdin);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    let st = child.wait().unwrap();
    assert_eq!(st.signal(), Some(libc::SIGSEGV), "{st:?}: {rest}");
    assert_eq!(rest, "");
    assert_eq!(read_profile(&p)["ending"]["signal"], libc::SIGSEGV);
    // Natively, with an address nothing is mapped at.
    let mut n = Command::new(&exe)
        .arg("fp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    writeln!(n.stdin.take().unwrap(), "10000").unwrap();
    let n = n.wait_with_output().unwrap();
    assert_eq!(n.status.signal(), Some(libc::SIGSEGV));
}

/// A frame returning to 32-bit code (CS 0x23) stops the run with a
/// message (hotlift runs 64-bit code only), its profile written; one
/// returning to no user code segment dies of SIGSEGV, as natively.
#[test]
fn a_frames_code_segment_is_checked() {
    let dir = workdir("sigframe-cs");
    let exe = build_named(&dir, "sigframe");
    let p = dir.join("p32.json");
    let h = run(&exe, "cs32", Some(&p), None);
    assert_eq!(h.status.code(), Some(125), "{h:?}");
    let stderr = String::from_utf8_lossy(&h.stderr);
    assert!(
        stderr.contains("rt_sigreturn at guest") && stderr.contains("CS 0x23"),
        "{stderr}"
    );
    assert!(read_profile(&p)["ending"].is_object());
    let p = dir.join("pbad.json");
    let h = run(&exe, "csbad", Some(&p), None);
    let n = run(&exe, "csbad", None, None);
    assert_eq!(n.status.signal(), Some(libc::SIGSEGV), "{n:?}");
    assert_eq!(h.status.signal(), Some(libc::SIGSEGV), "{h:?}");
    assert_eq!(read_profile(&p)["ending"]["signal"], libc::SIGSEGV);
}
