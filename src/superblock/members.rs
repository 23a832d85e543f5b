//! The builder's helpers over a trace's members: reading their guest
//! bytes in few system calls, and cutting a path where a `rep` string
//! instruction follows a call or return.

use hashbrown::{HashMap, HashSet};

use super::Member;
use crate::cache::BlockMeta;
use crate::ir::Terminator;

/// The guest bytes of blocks `ids` (each once), read in as few system
/// calls as the kernel takes (`IOV_MAX` pieces each); a block no longer
/// readable is None (read alone when its batch fails).
pub(super) fn read_blocks(
    metas: &[BlockMeta],
    ids: impl Iterator<Item = u32>,
) -> HashMap<u32, Option<Vec<u8>>> {
    let mut distinct: Vec<u32> = Vec::new();
    let mut seen = HashSet::new();
    for id in ids {
        if seen.insert(id) {
            distinct.push(id);
        }
    }
    let mut out = HashMap::with_capacity(distinct.len());
    for batch in distinct.chunks(1024) {
        let mut bufs: Vec<Vec<u8>> = batch
            .iter()
            .map(|&id| vec![0u8; metas[id as usize].guest_len as usize])
            .collect();
        let pieces: Vec<(u64, *mut u8, usize)> = batch
            .iter()
            .zip(bufs.iter_mut())
            .map(|(&id, b)| (metas[id as usize].guest, b.as_mut_ptr(), b.len()))
            .collect();
        let all = crate::guest_mem::copy_pieces(&pieces, false);
        for (&id, b) in batch.iter().zip(bufs) {
            let m = &metas[id as usize];
            let got = if all {
                Some(b)
            } else {
                crate::guest_mem::read_bytes(m.guest, m.guest_len as usize)
            };
            out.insert(id, got);
        }
    }
    out
}

/// monitor/tables/units.rs I1: no `rep` string instruction after a call or return
/// between members (its iterations come to the ring before the pass's
/// unit, and would be charged to the context the pass started in): the
/// members end before the first one, in layout order, after the first
/// such transfer that has one (a path's members come in layout order, so
/// no path keeps one after a transfer); branches and indirect transfers
/// that went on in members cut off leave there instead.
pub(super) fn no_rep_after_ops(members: &mut Vec<Member>) {
    let transfers = |m: &Member| {
        (m.next == super::Next::Member || m.cold.is_some())
            && matches!(
                m.ir.term,
                Terminator::Call { .. }
                    | Terminator::IndirectCall { .. }
                    | Terminator::Return { .. }
            )
    };
    let Some(first_op) = members.iter().position(transfers) else {
        return;
    };
    let has_rep = |m: &Member| m.ir.body.iter().any(|i| i.op == crate::ir::IrOp::RepString);
    if let Some(j) = members[first_op + 1..].iter().position(has_rep) {
        let len = first_op + 1 + j;
        members.truncate(len);
        if let Some(last) = members.last_mut() {
            if last.next == super::Next::Member {
                last.next = super::Next::Leave;
                last.cold = None;
            }
        }
        for m in members.iter_mut() {
            m.cold = m.cold.filter(|&c| (c as usize) < len);
            m.alt = m.alt.filter(|&c| (c as usize) < len);
        }
    }
}
