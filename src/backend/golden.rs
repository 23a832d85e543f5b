//! What the golden listings of emitted code share (the backend's and path
//! profiling's, src/paths/emit/tests.rs): the exit stubs they emit
//! against, a listing's format, and the check against (or, with
//! `HOTLIFT_BLESS=1`, the rewrite of) its file under tests/golden.

use iced_x86::{Decoder, DecoderOptions, Formatter, IntelFormatter};

use crate::contract::ExitStubs;

/// Shared exit stubs below the code the tests emit (contract I5), as
/// `emit_shared_stubs` places them (the listing checks).
pub const STUBS: ExitStubs = ExitStubs {
    site: 0x0fff_0000,
    miss: 0x0fff_0014,
    miss_rip: 0x0fff_0038,
};

/// Append `code` (emitted at `base`) to `out` under `== name`, one
/// instruction a line at its offset.
pub fn list(out: &mut String, name: &str, code: &[u8], base: u64) {
    let mut f = IntelFormatter::new();
    out.push_str(&format!("== {name}\n"));
    for insn in Decoder::with_ip(64, code, base, DecoderOptions::NONE) {
        let mut s = String::new();
        f.format(&insn, &mut s);
        out.push_str(&format!("    {:x}  {s}\n", insn.ip() - base));
    }
}

/// `got` against the golden file `path` (its name under tests/golden),
/// or written there with `HOTLIFT_BLESS=1`.
pub fn check_golden(path: &str, got: &str) {
    if std::env::var_os("HOTLIFT_BLESS").is_some() {
        std::fs::write(path, got).expect("write golden");
        return;
    }
    let want = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        got == want,
        "the listing differs from {path}; review it and rerun with HOTLIFT_BLESS=1\n{got}"
    );
}
