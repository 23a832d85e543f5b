//! The monitor's hook for a consumer of the block stream beside its own
//! tables: path profiling's collector (src/paths/collect.rs) is one. The
//! monitor knows nothing of what it does with what it is told.
//!
//! I1: with a hook installed the monitor takes its general path for every
//!     word (no batch fast path), so the hook sees each block entry in
//!     order, as the thread ran it.

/// What the monitor tells a stream hook, batch by batch (I1).
pub trait StreamHook: Send + std::fmt::Debug {
    /// The batch that follows is guest thread `t`'s.
    fn set_thread(&mut self, t: usize);
    /// Block `id` at `guest` was entered (a plain block, not a
    /// superblock's unit).
    fn block(&mut self, guest: u64, id: u32);
    /// A superblock's unit ran (code the hook's blocks are not in).
    fn other(&mut self);
    /// Control flow was interrupted: a signal frame, a sigreturn, a block
    /// that stopped early.
    fn marker(&mut self);
    /// A `TAG_PATH` record (`rec[0]` is the tag).
    fn record(&mut self, rec: &[u32]);
    /// An id epoch ends (monitor/tables/epoch.rs): `metas` are its blocks,
    /// by id; every id told so far names one of them, every id told from
    /// now on a block of the next epoch.
    fn epoch(&mut self, metas: &[crate::cache::BlockMeta]);
    /// The hook as what it is, for its owner at the end (from the
    /// snapshot).
    fn as_any(&self) -> &dyn std::any::Any;
}
