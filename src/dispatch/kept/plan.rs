//! A program's placement plan (kept/mod.rs K6): the kept blocks a run of
//! the program used, module file by module file, in the order that run
//! first needed them. A later run of the same program places a module's
//! planned blocks together when it first needs one of them, and links
//! their direct exits to each other then, instead of a dispatcher round
//! trip for each block and another for each exit it later takes (a warm
//! `python3 -c pass` made 40,000 of them to place 38,000 blocks).
//!
//! Format of the payload: for each module, `u32` key length, the key (the
//! module's entry key, kept/mod.rs K1), `u32` count, then that many `u32`
//! offsets from the module's base, all little-endian.

/// `persist` kind of the plans, keyed by the program's own entry key.
pub(super) const KIND: &str = "placements";

/// Each module's offsets, by the module's entry key.
pub(super) type Plan = Vec<(Vec<u8>, Vec<u32>)>;

/// The plan in `payload`; None if it does not hold together (the entry
/// checked, persist.rs P3, so only a hotlift writing another format).
pub(super) fn decode(payload: &[u8]) -> Option<Plan> {
    let mut plan = Vec::new();
    let mut rest = payload;
    let u32_of = |rest: &mut &[u8]| -> Option<u32> {
        let (a, b) = (rest.get(..4)?, rest.get(4..)?);
        *rest = b;
        Some(u32::from_le_bytes(a.try_into().ok()?))
    };
    while !rest.is_empty() {
        let n = u32_of(&mut rest)? as usize;
        let key = rest.get(..n)?.to_vec();
        rest = rest.get(n..)?;
        let count = u32_of(&mut rest)? as usize;
        if count.checked_mul(4)? > rest.len() {
            return None;
        }
        let offsets = (0..count)
            .map(|_| u32_of(&mut rest))
            .collect::<Option<Vec<_>>>()?;
        plan.push((key, offsets));
    }
    Some(plan)
}

/// The payload of `plan`.
pub(super) fn encode(plan: &[(Vec<u8>, Vec<u32>)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (key, offsets) in plan {
        out.extend_from_slice(&(key.len() as u32).to_le_bytes());
        out.extend_from_slice(key);
        out.extend_from_slice(&(offsets.len() as u32).to_le_bytes());
        for o in offsets {
            out.extend_from_slice(&o.to_le_bytes());
        }
    }
    out
}

/// `old` with the offsets of `used` it does not hold appended (in their
/// order), and how many were appended.
pub(super) fn merged(old: &[u32], used: &[u32]) -> (Vec<u32>, usize) {
    let mut seen: hashbrown::HashSet<u32> = old.iter().copied().collect();
    let mut out = old.to_vec();
    for &o in used {
        if seen.insert(o) {
            out.push(o);
        }
    }
    let added = out.len() - old.len();
    (out, added)
}

/// Is a plan of `planned` offsets that changed by `changed` (added or
/// left out) worth writing again (K6: as K3's threshold for entries)?
pub(super) fn worth_writing(planned: usize, changed: usize) -> bool {
    if planned == 0 {
        return changed > 0;
    }
    changed >= (planned / 16).max(64)
}

/// One module's part of a run, for the program's next plan.
#[derive(Debug)]
pub(super) struct Used {
    pub key: Vec<u8>,
    /// Its plan as read.
    pub plan: Vec<u32>,
    /// Offsets of the blocks placed or recorded, in order (kept/mod.rs).
    pub order: Vec<u32>,
    /// Of those, placed with the plan: (offset, block sequence number).
    pub batch: Vec<(u32, u64)>,
}

/// What a run's end writes the plan from (K6).
#[derive(Debug)]
pub(super) struct Ending {
    /// The program's entry key.
    pub program: Vec<u8>,
    /// A plan was read.
    pub found: bool,
    pub modules: Vec<Used>,
    /// The plan's modules this run never loaded.
    pub rest: Plan,
}

/// The program's next plan from `e` (its payload), if it should be
/// written: a first plan, what the run used, in order; else, where the
/// monitor took in every block that ran (`blocks.ran_complete()`), the
/// blocks this run used (the plan's that it never ran left out, so a plan
/// follows the program's latest use instead of growing with every
/// script an interpreter ran), when that changed it past K3's threshold.
/// A run whose use is not known (no profile drained the monitor, or no
/// monitor) leaves a plan as it is.
pub(super) fn next(e: Ending, blocks: &crate::cache::BlockTable) -> Option<Vec<u8>> {
    let usage = blocks.ran_complete();
    let base = blocks.epoch_base();
    let mut all: Plan = Vec::new();
    let (mut old, mut changed) = (0usize, 0usize);
    for u in e.modules.into_iter().filter(|u| !u.key.is_empty()) {
        let unused: hashbrown::HashSet<u32> = if usage {
            u.batch
                .iter()
                .filter(|&&(_, seq)| {
                    // Of an ended id epoch: not known, kept.
                    seq >= base && u32::try_from(seq - base).is_ok_and(|id| !blocks.ran(id))
                })
                .map(|&(o, _)| o)
                .collect()
        } else {
            Default::default()
        };
        let used: Vec<u32> = u
            .order
            .iter()
            .copied()
            .filter(|o| !unused.contains(o))
            .collect();
        let (list, _) = merged(&[], &used);
        let before: hashbrown::HashSet<u32> = u.plan.iter().copied().collect();
        let now: hashbrown::HashSet<u32> = list.iter().copied().collect();
        old += u.plan.len();
        changed += before.symmetric_difference(&now).count();
        match all.iter_mut().find(|(k, _)| *k == u.key) {
            // The same file mapped twice: its blocks once.
            Some((_, o)) => *o = merged(o, &list).0,
            None if !list.is_empty() => all.push((u.key, list)),
            None => {}
        }
    }
    for (k, o) in e.rest {
        if !all.iter().any(|(key, _)| *key == k) {
            old += o.len();
            all.push((k, o));
        }
    }
    let write = if e.found {
        usage && worth_writing(old, changed)
    } else {
        all.iter().any(|(_, o)| !o.is_empty())
    };
    write.then(|| encode(&all))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_reads_back_as_written() {
        let plan = vec![
            (b"libc".to_vec(), vec![0x10, 0x2000, 7]),
            (Vec::new(), vec![]),
            (b"python".to_vec(), vec![u32::MAX]),
        ];
        assert_eq!(decode(&encode(&plan)), Some(plan));
        assert_eq!(decode(&[]), Some(Vec::new()));
    }

    #[test]
    fn a_cut_or_overlong_plan_is_refused() {
        let bytes = encode(&[(b"libc".to_vec(), vec![1, 2, 3])]);
        for n in 1..bytes.len() {
            assert_eq!(decode(&bytes[..n]), None, "cut at {n}");
        }
        let mut long = bytes.clone();
        long[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(decode(&long), None);
    }

    #[test]
    fn merging_keeps_the_old_order_and_appends_what_is_new() {
        assert_eq!(
            merged(&[5, 1, 9], &[1, 2, 5, 3, 2]),
            (vec![5, 1, 9, 2, 3], 2)
        );
        assert_eq!(merged(&[], &[4, 4, 1]), (vec![4, 1], 2));
        assert!(worth_writing(0, 1));
        assert!(!worth_writing(0, 0));
        assert!(!worth_writing(1600, 99));
        assert!(worth_writing(1600, 100));
        assert!(!worth_writing(100, 63));
    }
}
