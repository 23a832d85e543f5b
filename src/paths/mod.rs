//! Path profiling of one guest function (design S3): Ball–Larus ids for
//! its loop-free paths, PAP's fold at loop back edges so that whole paths
//! through loops are counted exactly, paths of interest and the four
//! early-termination methods PSP0–PSP3.
//!
//! The pieces, in the order data flows: `cfg` discovers the function's
//! control-flow graph from guest memory when it is first entered; `dag`
//! numbers it (Ball–Larus on the graph with its back edges cut); `plan`
//! decides what the probe on each edge does for the chosen method (with
//! `espp` for ESPP weights and probe pushing); the backend emits an
//! instrumented translation of the function (backend/paths.rs) that the
//! dispatcher enters at the function's entry (dispatch/paths.rs); the
//! probes push records to the thread's ring, which the monitor collects
//! together with an independent reference computed from the block stream
//! (monitor/paths.rs); `report` decodes, compares and prints.

pub mod dag;
pub mod espp;
pub mod plan;

pub use plan::{Method, Plan};
