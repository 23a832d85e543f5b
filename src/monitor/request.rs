//! What the profile consumer asks of the second tier (src/superblock):
//! a superblock headed at a block, and why. The tables make requests
//! (counts past a threshold, `Tables::requests`); the second tier takes
//! them, and makes its own (mined patterns, stored traces).

/// How a superblock was asked for.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Trigger {
    /// The head's execution count reached `threshold`, entered by a direct
    /// transfer.
    Block { count: u64, threshold: u64 },
    /// The indirect edge `from` → head was taken `threshold` times.
    IndirectEdge {
        from: u64,
        count: u64,
        threshold: u64,
    },
    /// A pattern mined from the block streams (`--selector pisat`, design
    /// S2): `length` blocks, held by `sequences` of the `database`
    /// sequences mined then, repeated `repeats` times (distinct starts) in
    /// one of them (superblock/pisat/mod.rs).
    Mined {
        length: u32,
        sequences: u32,
        repeats: u32,
        database: u32,
    },
    /// A trace from the profile store (src/store), pre-built as soon as
    /// its blocks existed: the store's `version` for the program when
    /// read, and `count`, the runs that had built it.
    Stored { version: u64, count: u64 },
}

/// A superblock request from the monitor's tables, or from another
/// selector that already knows the path it wants.
#[derive(Debug, Clone)]
pub struct Request {
    pub head: u32,
    pub trigger: Trigger,
    /// The members to lay out, head first (a mined pattern, a stored
    /// trace): checked by `superblock::select::check_path` instead of
    /// following the hottest successors. `None`: `superblock::select`
    /// chooses.
    pub path: Option<std::sync::Arc<[u32]>>,
}

impl Request {
    /// A request that lets `superblock::select` follow the hottest successors.
    pub fn counted(head: u32, trigger: Trigger) -> Request {
        Request {
            head,
            trigger,
            path: None,
        }
    }
}
