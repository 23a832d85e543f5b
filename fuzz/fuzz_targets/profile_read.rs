//! Fuzz target: `hotlift::profile::read::read_bytes` must never panic,
//! whatever the bytes (profile::read I1); every failure is a `ReadError`
//! with a one-line message. A crash found here becomes a regression test in
//! `src/profile/read.rs`.
//!
//! Run from the repository root: `cargo +nightly fuzz run profile_read`.
//! Seed the corpus with real profiles, e.g. `mkdir -p
//! fuzz/corpus/profile_read && target/release/hotlift profile -o
//! fuzz/corpus/profile_read/true.json -- /bin/busybox true` (the corpus is
//! not committed).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = hotlift::profile::read::read_bytes(data, "fuzz.json") {
        assert_eq!(e.to_string().lines().count(), 1, "{e}");
    }
});
