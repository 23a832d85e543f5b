//! What the engine asks of path profiling (src/paths/engine), the one
//! feature that changes how the dispatcher translates and links: a
//! `hotlift paths` run hands [`Vm::start`] an implementation, and the
//! engine calls it only through this trait (issue 21: features behind
//! small hooks, layers that point down). Without one, every hook is
//! skipped and nothing of path profiling runs.

use crate::cache::{BlockMeta, ExitSite};
use crate::contract::ThreadCtx;
use crate::images::ImageLog;
use crate::monitor::{Snapshot, StreamHook};
use crate::types::{GuestAddr, HostAddr};

use super::process::Locked;
use super::{Vm, VmError};

/// Path profiling of one function, as the dispatcher sees it.
pub trait PathProfiler: Send + Sync + std::fmt::Debug {
    /// Look for the function in the images not looked at yet (the
    /// program and ld.so at start, each library as it is mapped).
    fn resolve(&self, images: &ImageLog);
    /// Give a new guest thread what the instrumented code needs.
    fn init_thread(&self, ctx: &ThreadCtx) -> std::io::Result<()>;
    /// A new monitor's collector of the records and the block stream.
    fn collector(&self) -> Box<dyn StreamHook>;
    /// `translate_with`'s instruction limit for `addr`.
    fn max_insns(&self, addr: GuestAddr, max: usize) -> usize;
    /// May the superblock builder see the block at `addr`?
    fn allow_superblocks(&self, addr: GuestAddr) -> bool;
    /// Before the dispatcher looks up `addr` (the translation lock held).
    fn prepare(&self, vm: &mut Vm, l: &mut Locked, addr: GuestAddr) -> Result<(), VmError>;
    /// The host code a direct exit `site` goes to instead of the ordinary
    /// translation of its target, if any.
    fn redirect(
        &self,
        vm: &mut Vm,
        l: &mut Locked,
        site: &ExitSite,
    ) -> Result<Option<HostAddr>, VmError>;
    /// Instrumented code exited with `PATH_MISS` at `ctx.rip()` (the
    /// dispatcher then goes on there).
    fn miss(&self, vm: &mut Vm);
    /// After the thread's lookup table was brought up to date (`flushed`:
    /// emptied by a flush).
    fn sync(&self, vm: &mut Vm, flushed: bool);
    /// The end of the run (the monitor finished): report. True when the
    /// run should end with hotlift's failure status (the function was
    /// never found).
    fn report(
        &self,
        snapshot: &Snapshot,
        blocks: &[BlockMeta],
        modules: &crate::profile::Modules,
    ) -> bool;
}
