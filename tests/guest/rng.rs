//! The tests' one pseudo-random generator, src/test_rng.rs itself
//! (included: the library's test code is not this crate's).

include!(concat!(env!("CARGO_MANIFEST_DIR"), "/src/test_rng.rs"));
