//! Where the profile's instructions beyond its blocks' counts are: the
//! iterations of each `rep` string instruction, and the instructions that
//! did not retire (monitor tables: `rep_sites`, `rep_unretired`,
//! `unretired_at`, and those of ended id epochs: ids.rs), by guest
//! address.

use serde::{Deserialize, Serialize};

/// The iterations of one `rep` string instruction beyond its first, and
/// of all its iterations those that did not retire (a fault inside).
#[derive(Debug, Serialize, Deserialize)]
pub struct RepIterations {
    pub addr: u64,
    pub extra: u64,
    /// Written only when not 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unretired: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Per instruction address (every translation of it merged), in address
/// order.
pub(super) fn rep_list(ids: &super::ids::Ids<'_>) -> Vec<RepIterations> {
    let t = ids.snapshot();
    let at = |b: usize, off: u32| Some(ids.metas.get(b)?.guest + u64::from(off));
    let mut v: Vec<(u64, u64, u64)> = ids
        .keyed(&t.rep_sites, &t.retired.rep_sites)
        .filter_map(|((b, off), n)| Some((at(b, off)?, n, 0)))
        .chain(
            ids.keyed(&t.rep_unretired, &t.retired.rep_unretired)
                .filter_map(|((b, off), n)| Some((at(b, off)?, 0, n))),
        )
        .collect();
    v.sort_unstable();
    let mut out: Vec<RepIterations> = Vec::with_capacity(v.len());
    for (addr, extra, unretired) in v {
        match out.last_mut() {
            Some(r) if r.addr == addr => {
                r.extra += extra;
                r.unretired += unretired;
            }
            _ => out.push(RepIterations {
                addr,
                extra,
                unretired,
            }),
        }
    }
    out
}

/// Instructions that did not retire, by where: the last `instructions` of
/// a translation of the block at `block` that holds `block_instructions`,
/// `times` times (a block's translations may differ in length: after a
/// store into code, the store runs again alone).
#[derive(Debug, Serialize, Deserialize)]
pub struct Unretired {
    pub block: u64,
    pub block_instructions: u32,
    pub instructions: u32,
    pub times: u64,
}

/// By block address and lengths (the same translations merged).
pub(super) fn unretired_list(ids: &super::ids::Ids<'_>) -> Vec<Unretired> {
    let t = ids.snapshot();
    let mut v: Vec<(u64, u32, u32, u64)> = ids
        .keyed(&t.unretired_at, &t.retired.unretired_at)
        .filter_map(|((b, n), times)| {
            let m = ids.metas.get(b)?;
            Some((m.guest, m.insns, n, times))
        })
        .collect();
    v.sort_unstable();
    let mut out: Vec<Unretired> = Vec::with_capacity(v.len());
    for (block, block_instructions, instructions, times) in v {
        match out.last_mut() {
            Some(u)
                if (u.block, u.block_instructions, u.instructions)
                    == (block, block_instructions, instructions) =>
            {
                u.times += times
            }
            _ => out.push(Unretired {
                block,
                block_instructions,
                instructions,
                times,
            }),
        }
    }
    out
}
