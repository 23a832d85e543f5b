//! hotlift's own exit statuses (README "Exit status"), a leaf any layer
//! may name: the dispatcher ends a process that cannot go on with
//! [`EXIT_HOTLIFT_FAILED`] without reaching up into the command line
//! (issue 21: dispatch imported them from `cli`), and the command line
//! maps everything else to them.

/// hotlift itself failed (the guest's own status is never 125).
pub const EXIT_HOTLIFT_FAILED: i32 = 125;
/// The program exists but cannot be run (as the shell's 126).
pub const EXIT_NOT_RUNNABLE: i32 = 126;
/// The program was not found (as the shell's 127).
pub const EXIT_NOT_FOUND: i32 = 127;
/// `compare`, `diff`, `export`: equivalent, a mismatch, could not run.
pub const EXIT_OK: i32 = 0;
pub const EXIT_MISMATCH: i32 = 1;
pub const EXIT_TOOL_ERROR: i32 = 2;
