//! Fuzz target: `hotlift::loader::plan` must never panic, whatever the bytes
//! (loader I1). A crash found here becomes a regression test in
//! `src/loader/plan_tests.rs`.
//!
//! Run from the repository root: `cargo +nightly fuzz run elf_plan`. Seed the
//! corpus with real programs, e.g. `mkdir -p fuzz/corpus/elf_plan &&
//! cp /bin/busybox fuzz/corpus/elf_plan/` (the corpus is not committed).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = hotlift::loader::plan(data);
});
