//! Superblock selection: from the head, follow the hottest successor by
//! the monitor's edge counts (next-executing-tail style) until a limit, a
//! syscall or trap, the head again (a loop: jump back to the start), or
//! the head of another superblock (leave, and link to it).
//!
//! I1: every member but the last continues into the next one along an
//!     edge the monitor saw; an indirect edge is followed only when it
//!     carries at least half of its block's executions (one guard is then
//!     likely to hold).
//! I2: a counted superblock is built only where its passes are expected
//!     to cover `min_yield` ([`PAYS_OFF`] by default) blocks per ring word
//!     they cost, by the edge
//!     counts at the time (a trace through a branch taken half the time
//!     leaves after its first block half the time).

use super::Next;
use crate::monitor::{BlockMeta, ExitKind};

/// Size limits of one superblock.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_blocks: usize,
    pub max_insns: u32,
    /// Most copies of a loop closed at the head (1: no unrolling).
    pub unroll: usize,
    /// I2: blocks a pass should cover per ring word it costs
    /// (`--sb-min-yield`, default [`PAYS_OFF`]; 0: no bar).
    pub min_yield: f64,
}

/// What selection needs to know about blocks.
pub trait Graph {
    fn meta(&self, id: u32) -> Option<BlockMeta>;
    /// The hottest successor of `id` seen so far and how often, with the
    /// block's own execution count.
    fn hottest(&self, id: u32) -> Option<(u32, u64, u64)>;
    /// Can `id` be linked to (live in the current generation)?
    fn live(&self, id: u32) -> bool;
    /// Is `id` the head of a published superblock?
    fn is_head(&self, id: u32) -> bool;
}

/// The members (block ids, and how each continues) of a superblock headed
/// by `head`, or None when there is nothing worth building there.
pub fn select(head: u32, g: &impl Graph, lim: Limits) -> Option<Vec<(u32, Next)>> {
    let ends = |m: &BlockMeta| matches!(m.exit, ExitKind::Syscall | ExitKind::Trap);
    let hm = g.meta(head)?;
    if ends(&hm) || !g.live(head) {
        return None;
    }
    let mut members = vec![(head, Next::Leave)];
    let mut insns = hm.insns;
    loop {
        let (cur, _) = *members.last().expect("the head is a member");
        let m = g.meta(cur)?;
        let Some((succ, n, total)) = g.hottest(cur) else {
            break;
        };
        let indirect = matches!(
            m.exit,
            ExitKind::IndirectJump | ExitKind::IndirectCall | ExitKind::Return
        );
        if indirect && 2 * n < total {
            break;
        }
        if succ == head {
            members.last_mut().expect("nonempty").1 = Next::Head;
            break;
        }
        let Some(sm) = g.meta(succ) else { break };
        if ends(&sm)
            || !g.live(succ)
            || g.is_head(succ)
            || members.iter().any(|&(b, _)| b == succ)
            || members.len() >= lim.max_blocks
            || insns + sm.insns > lim.max_insns
        {
            break;
        }
        members.last_mut().expect("nonempty").1 = Next::Member;
        members.push((succ, Next::Leave));
        insns += sm.insns;
    }
    let members = unroll(members, insns, lim);
    if expected_blocks(&members, g) < lim.min_yield * ring_words(&members, g) {
        // Not worth a superblock (I2): the head alone, which the builder
        // leaves as it is.
        return Some(vec![(head, Next::Leave)]);
    }
    Some(members)
}

/// I2: a superblock must save the monitor work: its pass should cover at
/// least this many blocks per ring word it costs. A word of a superblock
/// record costs the monitor up to about 1.6 times a plain block entry
/// (measured: 450–530 million plain entries a second against 330–430
/// million words where superblock records dominate, c-nest 4 1 and
/// c-sort), and a superblock saves the guest work too. Measured over 12
/// workloads (tools/bench programs, paired runs): thresholds of 2 (and
/// 1.75 to take back, review.rs) were best or within 3 % of the
/// best everywhere; 1.5/1.25 and 1.2/1.0 build more superblocks and lose
/// up to 4 % and 26 % (c-sort).
pub const PAYS_OFF: f64 = 2.0;

/// How many of `members` a pass runs, on average: member i+1 runs when
/// member i went on to it, with the probability the edge counts give.
fn expected_blocks(members: &[(u32, Next)], g: &impl Graph) -> f64 {
    let mut reach = 1.0;
    let mut total = 0.0;
    for &(b, next) in members {
        total += reach;
        if next == Next::Leave {
            break;
        }
        reach *= go_on(b, g);
    }
    total
}

/// The probability that block `b` continues into its hottest successor.
fn go_on(b: u32, g: &impl Graph) -> f64 {
    match g.hottest(b) {
        Some((_, n, total)) if total > 0 => (n as f64 / total as f64).min(1.0),
        _ => 1.0,
    }
}

/// Ring words a pass costs: its entry record, and an exit record unless
/// it runs through to a loop back to the start (whose record is the next
/// pass's entry).
fn ring_words(members: &[(u32, Next)], g: &impl Graph) -> f64 {
    let Some(&(_, Next::Head)) = members.last() else {
        return 2.0;
    };
    let all: f64 = members.iter().map(|&(b, _)| go_on(b, g)).product();
    2.0 - all
}

/// Can control go from block `from` straight into block `to`? Direct
/// exits only to their own targets; an indirect exit anywhere (the
/// superblock guards the target); syscalls and traps never.
pub fn follows(from: &BlockMeta, to: &BlockMeta) -> bool {
    match from.exit {
        ExitKind::Jump | ExitKind::Call | ExitKind::Fallthrough => from.target == to.guest,
        ExitKind::Branch => from.target == to.guest || from.next == to.guest,
        ExitKind::IndirectJump | ExitKind::IndirectCall | ExitKind::Return => true,
        ExitKind::Syscall | ExitKind::Trap => false,
    }
}

/// The members of a superblock along an explicit `path` (head first: a
/// mined pattern or a stored trace), or None when not even its head can
/// be built. The path is cut before the first block that cannot follow
/// the one before it (`follows`), is not live, heads another superblock,
/// ends in a syscall or trap, repeats a member, or would pass the limits;
/// when the last member's direct exit can go back to the head, the loop
/// closes there (and is unrolled like a counted one) — also for a path of
/// the head alone (a one-block loop), but not for a longer path cut down
/// to its head.
pub fn check_path(path: &[u32], g: &impl Graph, lim: Limits) -> Option<Vec<(u32, Next)>> {
    let ends = |m: &BlockMeta| matches!(m.exit, ExitKind::Syscall | ExitKind::Trap);
    let &head = path.first()?;
    let hm = g.meta(head)?;
    if ends(&hm) || !g.live(head) {
        return None;
    }
    let mut members = vec![(head, Next::Leave)];
    let mut insns = hm.insns;
    let mut last = hm;
    for &b in &path[1..] {
        let Some(m) = g.meta(b) else { break };
        if !follows(&last, &m)
            || ends(&m)
            || !g.live(b)
            || g.is_head(b)
            || members.iter().any(|&(x, _)| x == b)
            || members.len() >= lim.max_blocks
            || insns + m.insns > lim.max_insns
        {
            break;
        }
        members.last_mut().expect("nonempty").1 = Next::Member;
        members.push((b, Next::Leave));
        insns += m.insns;
        last = m;
    }
    let direct = !matches!(
        last.exit,
        ExitKind::IndirectJump | ExitKind::IndirectCall | ExitKind::Return
    );
    if (members.len() > 1 || path.len() == 1) && direct && follows(&last, &hm) {
        members.last_mut().expect("nonempty").1 = Next::Head;
    }
    Some(unroll(members, insns, lim))
}

/// A loop closed at the head is laid out up to `lim.unroll` times in a
/// row, within the size limits: one entry record then covers that many
/// iterations, and a short loop body pays for its record less often.
fn unroll(members: Vec<(u32, Next)>, insns: u32, lim: Limits) -> Vec<(u32, Next)> {
    if members.last().map(|m| m.1) != Some(Next::Head) {
        return members;
    }
    let copies = lim
        .unroll
        .min((lim.max_insns / insns.max(1)) as usize)
        .min(lim.max_blocks / members.len())
        .max(1);
    let mut out = Vec::with_capacity(members.len() * copies);
    for c in 0..copies {
        for &(b, next) in &members {
            let next = if next == Next::Head && c + 1 < copies {
                Next::Member
            } else {
                next
            };
            out.push((b, next));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    struct G {
        metas: Vec<BlockMeta>,
        succ: HashMap<u32, (u32, u64, u64)>,
        heads: Vec<u32>,
    }

    impl Graph for G {
        fn meta(&self, id: u32) -> Option<BlockMeta> {
            self.metas.get(id as usize).copied()
        }
        fn hottest(&self, id: u32) -> Option<(u32, u64, u64)> {
            self.succ.get(&id).copied()
        }
        fn live(&self, _: u32) -> bool {
            true
        }
        fn is_head(&self, id: u32) -> bool {
            self.heads.contains(&id)
        }
    }

    fn m(exit: ExitKind) -> BlockMeta {
        BlockMeta {
            insns: 4,
            exit,
            ..BlockMeta::default()
        }
    }

    const LIM: Limits = Limits {
        max_blocks: 8,
        max_insns: 64,
        unroll: 1,
        min_yield: PAYS_OFF,
    };

    #[test]
    fn a_loop_closes_at_the_head() {
        let g = G {
            metas: vec![m(ExitKind::Jump), m(ExitKind::Branch), m(ExitKind::Jump)],
            succ: HashMap::from([(0, (1, 10, 10)), (1, (2, 9, 10)), (2, (0, 9, 9))]),
            heads: vec![],
        };
        assert_eq!(
            select(0, &g, LIM).unwrap(),
            vec![(0, Next::Member), (1, Next::Member), (2, Next::Head)]
        );
    }

    #[test]
    fn short_loops_are_unrolled_within_the_limits() {
        let g = G {
            metas: vec![m(ExitKind::Jump), m(ExitKind::Branch)],
            succ: HashMap::from([(0, (1, 10, 10)), (1, (0, 9, 10))]),
            heads: vec![],
        };
        let lim = Limits { unroll: 4, ..LIM };
        let want: Vec<(u32, Next)> = (0..3)
            .flat_map(|_| [(0, Next::Member), (1, Next::Member)])
            .chain([(0, Next::Member), (1, Next::Head)])
            .collect();
        assert_eq!(select(0, &g, lim).unwrap(), want, "four copies");
        let tight = Limits {
            max_insns: 20,
            ..lim
        };
        assert_eq!(select(0, &g, tight).unwrap().len(), 4, "two copies fit");
    }

    fn at(guest: u64, exit: ExitKind, target: u64, next: u64) -> BlockMeta {
        BlockMeta {
            guest,
            target,
            next,
            insns: 4,
            exit,
            ..BlockMeta::default()
        }
    }

    #[test]
    fn explicit_paths_keep_what_can_run_in_a_row() {
        // 0 branches to 1 or 2; 1 jumps to 3; 2 returns; 3 jumps back to 0.
        let g = G {
            metas: vec![
                at(0x10, ExitKind::Branch, 0x20, 0x30),
                at(0x20, ExitKind::Jump, 0x40, 0),
                at(0x30, ExitKind::Return, 0, 0),
                at(0x40, ExitKind::Jump, 0x10, 0),
                at(0x50, ExitKind::Syscall, 0, 0x58),
            ],
            succ: HashMap::new(),
            heads: vec![],
        };
        assert_eq!(
            check_path(&[0, 1, 3], &g, LIM).unwrap(),
            vec![(0, Next::Member), (1, Next::Member), (3, Next::Head)],
            "a loop closes at the head"
        );
        assert_eq!(
            check_path(&[0, 3, 1], &g, LIM).unwrap(),
            vec![(0, Next::Leave)],
            "0 cannot go to 3 directly: cut there"
        );
        assert_eq!(
            check_path(&[0, 2, 4], &g, LIM).unwrap(),
            vec![(0, Next::Member), (2, Next::Leave)],
            "a return may go anywhere, but never into a syscall block"
        );
        assert_eq!(check_path(&[4, 0], &g, LIM), None, "no syscall head");
        let self_loop = G {
            metas: vec![at(0x10, ExitKind::Branch, 0x10, 0x18)],
            succ: HashMap::new(),
            heads: vec![],
        };
        assert_eq!(
            check_path(&[0], &self_loop, LIM).unwrap(),
            vec![(0, Next::Head)],
            "a one-block loop closes on itself"
        );
        let mut g = g;
        g.heads.push(1);
        assert_eq!(
            check_path(&[0, 1, 3], &g, LIM).unwrap(),
            vec![(0, Next::Leave)],
            "another superblock's head is linked to, not copied"
        );
    }

    #[test]
    fn stops_at_syscalls_other_heads_limits_and_cold_indirect_edges() {
        // 0 -> 4 -> 5 -> 6 -> 1 (a return) -> 2 (a syscall) or 3.
        let mut g = G {
            metas: vec![
                m(ExitKind::Jump),
                m(ExitKind::Return),
                m(ExitKind::Syscall),
                m(ExitKind::Jump),
                m(ExitKind::Jump),
                m(ExitKind::Jump),
                m(ExitKind::Jump),
            ],
            succ: HashMap::from([
                (0, (4, 10, 10)),
                (4, (5, 10, 10)),
                (5, (6, 10, 10)),
                (6, (1, 10, 10)),
                (1, (2, 6, 10)),
            ]),
            heads: vec![],
        };
        // A syscall block is never a member: the superblock leaves to it.
        let chain = vec![
            (0, Next::Member),
            (4, Next::Member),
            (5, Next::Member),
            (6, Next::Member),
            (1, Next::Leave),
        ];
        assert_eq!(select(0, &g, LIM).unwrap(), chain);
        assert_eq!(
            select(2, &g, LIM),
            None,
            "no superblock headed by a syscall"
        );
        g.succ.insert(1, (3, 4, 10));
        assert_eq!(select(0, &g, LIM).unwrap(), chain, "a cold return edge");
        g.heads.push(1);
        assert_eq!(
            select(0, &g, LIM).unwrap(),
            vec![
                (0, Next::Member),
                (4, Next::Member),
                (5, Next::Member),
                (6, Next::Leave)
            ]
        );
        g.heads.clear();
        let small = Limits {
            max_blocks: 8,
            max_insns: 7,
            unroll: 1,
            min_yield: PAYS_OFF,
        };
        assert_eq!(select(0, &g, small).unwrap(), vec![(0, Next::Leave)]);
    }

    #[test]
    fn a_superblock_must_save_ring_words() {
        // 0 -> 1 -> 2 -> 3, direct jumps: an entry and an exit record
        // cover four blocks.
        let jumps = |p: [(u32, (u32, u64, u64)); 3]| G {
            metas: vec![m(ExitKind::Branch); 4],
            succ: HashMap::from(p),
            heads: vec![],
        };
        let g = jumps([(0, (1, 10, 10)), (1, (2, 10, 10)), (2, (3, 10, 10))]);
        assert_eq!(select(0, &g, LIM).unwrap().len(), 4);
        // Each branch goes on only half the time: 1 + 1/2 + 1/4 + 1/8
        // blocks a pass, under two per word.
        let g = jumps([(0, (1, 5, 10)), (1, (2, 5, 10)), (2, (3, 5, 10))]);
        assert_eq!(select(0, &g, LIM).unwrap(), vec![(0, Next::Leave)]);
        // Two blocks ending in an indirect jump: two words for two blocks.
        let g = G {
            metas: vec![m(ExitKind::Jump), m(ExitKind::IndirectJump)],
            succ: HashMap::from([(0, (1, 10, 10))]),
            heads: vec![],
        };
        assert_eq!(select(0, &g, LIM).unwrap(), vec![(0, Next::Leave)]);
    }
}
