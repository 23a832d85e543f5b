//! hotlift: a dynamic binary translator for Linux x86-64 user-mode programs.
//!
//! The pipeline is visible in the module order: `loader` maps the guest ELF,
//! `frontend` decodes and lifts a guest block into an `ir` block, `backend`
//! emits host code into the `cache`, and `dispatch` runs it. `images` keeps
//! the record of every image the guest mapped (modules). `syscall` and
//! `signal` handle the guest's view of the kernel; `runtime` is the boundary
//! between Rust and translated code; `store` shares superblocks across runs
//! (the profile store); `cli` is the command line. The modules form layers
//! that only point down (docs/ARCHITECTURE.md, *Layers*; `tests/layers.rs`
//! fails on a cycle).
#![deny(unsafe_code)]
#![warn(missing_debug_implementations)]

pub mod anon;
pub mod arena;
pub mod backend;
pub mod cache;
pub mod cli;
pub mod clock;
pub mod compare;
pub mod contract;
pub mod dispatch;
pub mod frontend;
pub mod guest_mem;
pub mod host;
pub mod images;
pub mod ir;
pub mod limits;
pub mod loader;
pub mod monitor;
pub mod options;
pub mod own_thread;
pub mod paths;
pub mod persist;
pub mod profile;
pub mod runtime;
pub mod signal;
pub mod status;
pub mod store;
pub mod strace;
pub mod superblock;
pub mod syscall;
#[cfg(test)]
mod test_rng;
pub mod timetree;
pub mod types;
