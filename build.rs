//! Link the `hotlift` binary with packed relative relocations (DT_RELR)
//! where the toolchain can: hotlift is a position-independent executable
//! with about 29,000 relative relocations, 700 KB of RELA the dynamic
//! loader walked at every start, writing into (and so copying) the pages
//! they patch. Every process of a guest's tree starts hotlift again (an
//! `execve` under translation is one), so that was paid per process:
//! `hotlift --version` 2.1 -> 1.7 ms; `hotlift run -- /bin/true` 0.99 and
//! a shell running `/bin/true` 20 times 0.98 of the time (paired medians
//! of 40, docs/PERFORMANCE.md, 2026-12-02). The linker (binutils 2.38,
//! with glibc 2.36 or later) is probed first: where it cannot, the
//! binary links as before.

use std::io::Write;
use std::process::{Command, Stdio};

const FLAG: &str = "-Wl,-z,pack-relative-relocs";

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let target = std::env::var("TARGET").unwrap_or_default();
    if !target.contains("linux-gnu") {
        return;
    }
    if links_with_relr() {
        println!("cargo:rustc-link-arg-bins={FLAG}");
    }
}

/// Whether the C compiler rustc links through accepts the flag and makes a
/// program that carries DT_RELR (an old binutils rejects the flag; one
/// whose glibc lacks DT_RELR support ignores it).
fn links_with_relr() -> bool {
    let out =
        std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default()).join("relr-probe");
    let child = Command::new("cc")
        .args(["-x", "c", "-", "-pie", "-fPIE", "-o"])
        .arg(&out)
        .arg(FLAG)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
        return false;
    };
    if let Some(mut stdin) = child.stdin.take() {
        let src = "static int x; int *p = &x; int main(void) { return *p; }\n";
        if stdin.write_all(src.as_bytes()).is_err() {
            return false;
        }
    }
    if !child.wait().is_ok_and(|s| s.success()) {
        return false;
    }
    has_relr(&out)
}

/// The program at `path` has a DT_RELR entry (binutils' `readelf`, which
/// came with the linker).
fn has_relr(path: &std::path::Path) -> bool {
    Command::new("readelf")
        .arg("-d")
        .arg(path)
        .stderr(Stdio::null())
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("(RELR)"))
}
