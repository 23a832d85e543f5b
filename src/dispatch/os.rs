//! What the engine needs of the OS layer above it (`signal/`, `syscall/`),
//! installed once by the command line before the first guest thread
//! starts, so that the layers point down (issue 21): the OS layer takes
//! `&mut Vm`, and the engine calls it only through these.

use std::sync::OnceLock;

use super::{Vm, VmError};
use crate::guest_mem::GuestMem;

/// What the dispatcher does after a syscall.
#[derive(Debug, PartialEq, Eq)]
pub enum Flow {
    Continue,
    /// The guest thread exited (`exit`) and others live on.
    ThreadExit,
}

/// Installs hotlift's signal handlers: verbosity, the code cache's
/// execute range, and which signals the guest starts ignoring.
pub type InstallSignals = fn(bool, (u64, u64), &dyn Fn(i32) -> bool) -> Result<(), String>;

/// The OS layer's entry points the engine calls.
#[derive(Debug, Clone, Copy)]
pub struct Os {
    /// Handle the syscall the guest stopped at (`ctx.rip()` is the next
    /// instruction).
    pub syscall: fn(&mut Vm) -> Result<Flow, VmError>,
    /// Install hotlift's signal handlers ([`InstallSignals`]).
    pub install_signals: InstallSignals,
    /// Give the calling thread its own alternate signal stack.
    pub install_thread: fn() -> Result<(), String>,
    /// Make the guest's `/proc/self` view from its initial stack pointer
    /// (cmdline, environ and auxv become the guest's).
    pub adopt_guest_view: fn(u64) -> Result<(), String>,
    /// Does a path name the process's own executable (`/proc/self/exe`)?
    pub names_self_exe: fn(&[u8]) -> bool,
    /// Set the top of the guest's own mmap area from its stack's lowest
    /// page and the lowest address it may use, and hold the area below
    /// it (guest_mem I3, I4).
    pub hold_guest_area: fn(&mut GuestMem, u64, u64),
}

static OS: OnceLock<Os> = OnceLock::new();

/// Install the OS layer (the first call counts).
pub fn set_os(os: Os) {
    let _ = OS.set(os);
}

/// The OS layer, once installed.
pub(super) fn os() -> Result<&'static Os, VmError> {
    OS.get()
        .ok_or_else(|| VmError::Host("the OS layer is not installed (dispatch::set_os)".into()))
}
