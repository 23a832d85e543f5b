//! Id epochs (epoch.rs I3): random walks over a random program, by two
//! threads, cut at random points where every translation is dropped:
//! taken once with fresh ids after each cut (a full flush, the block
//! table growing) and once with each cut ending an id epoch (folded, the
//! blocks given ids again, permuted); the profile by guest address, the
//! calling-context tree and the totals must agree.

use super::*;
use crate::contract::TAG_SYSCALL;
use crate::monitor::tables::epoch::{is_retired, EpochEnd, RETIRED_REF};
use crate::monitor::Snapshot;

/// Blocks of the random program: `n` of them, 64 bytes apart; the first
/// eight are function entries.
fn program(rng: &mut TestRng, n: u64) -> Vec<BlockMeta> {
    let at = |i: u64| 0x1000 + 64 * i;
    (0..n)
        .map(|i| {
            let kind = match rng.below(10) {
                0..=2 => ExitKind::Branch,
                3 => ExitKind::Jump,
                4 => ExitKind::Call,
                5 => ExitKind::IndirectCall,
                6 => ExitKind::Return,
                7 => ExitKind::IndirectJump,
                8 => ExitKind::Syscall,
                _ => ExitKind::Return,
            };
            // Calls return to blocks from 14 on; indirect jumps go to 8-13:
            // never into a call's return address, whose landing watch
            // (landing.rs) follows the edge cache's evictions, which an
            // epoch's fresh cache does not repeat.
            let site = |rng: &mut TestRng| at(14 + rng.below(n - 14));
            let (target, next) = match kind {
                ExitKind::Call => (at(rng.below(8)), site(rng)),
                ExitKind::IndirectCall => (0, site(rng)),
                ExitKind::Return | ExitKind::IndirectJump => (0, 0),
                _ => (at(rng.below(n)), at(rng.below(n))),
            };
            meta(at(i), 2 + rng.below(6) as u32, kind, target, next)
        })
        .collect()
}

/// One thread's walk: events of ring words by block index (`Word` marks a
/// block word, the rest are record words as they are), each an event the
/// ring gets whole.
#[derive(Clone, Copy, Debug)]
enum W {
    Block(u32, u32),
    Raw(u32),
}

fn walk(rng: &mut TestRng, metas: &[BlockMeta], steps: usize) -> Vec<Vec<W>> {
    let index = |g: u64| ((g - 0x1000) / 64) as u32;
    let n = metas.len() as u64;
    let mut at = rng.below(n) as u32;
    let mut stack: Vec<u32> = Vec::new();
    let mut events = Vec::new();
    for _ in 0..steps {
        let m = metas[at as usize];
        if rng.below(40) == 0 {
            // Stopped inside (a signal): the rest did not retire; then on
            // somewhere else. A thread may stop between the word and the
            // record (a separate event).
            events.push(vec![W::Block(at, PARTIAL)]);
            events.push(vec![W::Raw(TAG_UNRETIRED), W::Raw(1 + rng.below(2) as u32)]);
            at = rng.below(n) as u32;
            continue;
        }
        let mut ev = Vec::new();
        if rng.below(30) == 0 {
            // A `rep` string instruction in the block, its word next.
            let before = 10 + rng.below(100) as u32;
            ev.extend([
                W::Raw(TAG_REP | 1),
                W::Block(at, EXIT_FALL),
                W::Raw(before),
                W::Raw(before - rng.below(10) as u32),
            ]);
        }
        let (k, to) = match m.exit {
            ExitKind::Branch if rng.below(2) == 0 => (EXIT_TAKEN, index(m.target)),
            ExitKind::Branch => (EXIT_FALL, index(m.next)),
            ExitKind::Jump | ExitKind::Syscall => (EXIT_FALL, index(m.target)),
            ExitKind::Call => {
                stack.push(index(m.next));
                (EXIT_FALL, index(m.target))
            }
            ExitKind::IndirectCall => {
                stack.push(index(m.next));
                (EXIT_FALL, rng.below(8) as u32)
            }
            ExitKind::Return => {
                let to = if rng.below(20) == 0 {
                    rng.below(n) as u32
                } else {
                    stack.pop().unwrap_or_else(|| rng.below(n) as u32)
                };
                (EXIT_FALL, to)
            }
            _ => (EXIT_FALL, rng.below(n.min(6)) as u32 + 8),
        };
        ev.push(W::Block(at, k));
        events.push(ev);
        if m.exit == ExitKind::Syscall {
            // The syscall's record comes after the thread was out of
            // translated code: an epoch may end in between.
            events.push(vec![
                W::Raw(TAG_SYSCALL | 39),
                W::Raw(rng.below(2) as u32),
                W::Raw(0),
                W::Raw(100),
            ]);
        }
        at = to;
    }
    events
}

/// The ring words of `ev` with block `b` given id `ids[b]`.
fn words(ev: &[W], ids: &[u32]) -> Vec<u32> {
    ev.iter()
        .map(|w| match *w {
            W::Block(b, k) => block_word(ids[b as usize], k),
            W::Raw(x) => x,
        })
        .collect()
}

/// A block table of `metas` with block `b` at id `ids[b]`.
fn table_of(metas: &[BlockMeta], ids: &[u32]) -> BlockTable {
    let t = BlockTable::new(metas.len() as u32 + 1).unwrap();
    let mut by_id = vec![0usize; metas.len()];
    for (b, &id) in ids.iter().enumerate() {
        by_id[id as usize] = b;
    }
    for b in by_id {
        t.push_meta(metas[b]);
    }
    t
}

/// What the profile aggregates by guest address (profile I1), from a
/// snapshot whose live blocks are `metas` by id.
#[derive(Debug, PartialEq, Eq)]
struct ByAddress {
    counts: BTreeMap<u64, u64>,
    edges: BTreeMap<(u64, u64), u64>,
    rep: BTreeMap<(u64, u32), u64>,
    unretired: BTreeMap<(u64, u32, u32), u64>,
}

/// Each thread's context and shadow depth, and the calling-context tree
/// (parent, function, calls, instructions).
type State = (Vec<(u32, usize)>, Vec<(u32, u64, u64, u64)>);

fn by_address(s: &Snapshot, metas: &[BlockMeta]) -> ByAddress {
    let r = &s.retired;
    let meta = |k: u32| -> BlockMeta {
        if is_retired(k) {
            r.metas[(k & !RETIRED_REF) as usize]
        } else {
            metas[k as usize]
        }
    };
    let mut out = ByAddress {
        counts: BTreeMap::new(),
        edges: BTreeMap::new(),
        rep: BTreeMap::new(),
        unretired: BTreeMap::new(),
    };
    for (id, m) in metas.iter().enumerate() {
        *out.counts.entry(m.guest).or_default() += s.count(id);
    }
    for (e, m) in r.metas.iter().enumerate() {
        *out.counts.entry(m.guest).or_default() += r.counts[e];
    }
    let retired = |e: u32| RETIRED_REF | e;
    let edges = s.edges.iter().map(|(&k, &c)| (k, c));
    let old_edges = r.edges.iter().map(|(&(e, to), &c)| ((retired(e), to), c));
    for ((b, to), c) in edges.chain(old_edges) {
        *out.edges.entry((meta(b).guest, to)).or_default() += c;
    }
    let reps = s
        .rep_sites
        .iter()
        .chain(&s.rep_unretired)
        .map(|(&k, &c)| (k, c));
    let old_reps = r.rep_sites.iter().chain(&r.rep_unretired);
    let old_reps = old_reps.map(|(&(e, off), &c)| ((retired(e), off), c));
    for ((b, off), c) in reps.chain(old_reps) {
        *out.rep.entry((meta(b).guest, off)).or_default() += c;
    }
    let un = s.unretired_at.iter().map(|(&k, &c)| (k, c));
    let old_un = r
        .unretired_at
        .iter()
        .map(|(&(e, n), &c)| ((retired(e), n), c));
    for ((b, n), c) in un.chain(old_un) {
        let m = meta(b);
        *out.unretired.entry((m.guest, m.insns, n)).or_default() += c;
    }
    out.counts.retain(|_, c| *c > 0);
    out
}

#[test]
fn id_epochs_keep_the_profile_by_guest_address() {
    let mut rng = TestRng::new(0xe60c);
    for case in 0..60 {
        let n = 24 + rng.below(40);
        let metas = program(&mut rng, n);
        let threads: Vec<Vec<Vec<W>>> = (0..2).map(|_| walk(&mut rng, &metas, 3000)).collect();
        // The order the two rings hand out their events, in pieces.
        let mut order = Vec::new();
        let mut next = [0usize; 2];
        while next[0] < threads[0].len() || next[1] < threads[1].len() {
            let t = rng.index(2);
            let k = (1 + rng.index(60)).min(threads[t].len() - next[t]);
            if k > 0 {
                order.push((t, next[t]..next[t] + k));
                next[t] += k;
            }
        }
        // Where epochs end: before these pieces.
        let cuts: Vec<bool> = order.iter().map(|_| rng.below(12) == 0).collect();
        // A: each epoch's end a full flush without the fold: the blocks
        // translated again get new ids (the table grows), as before id
        // epochs; what the monitor knew of each word starts afresh in
        // both (its landing watch, its ways).
        let copies = 1 + cuts.iter().filter(|&&c| c).count();
        let grown: Vec<BlockMeta> = (0..copies).flat_map(|_| metas.iter().copied()).collect();
        let all = table_of(&grown, &(0..grown.len() as u32).collect::<Vec<_>>());
        let mut a = Tables::new(SbConfig::default());
        let mut copy = 0u32;
        // B: the same, each epoch folded and the blocks given other ids;
        // in step with A, which it must match after every piece.
        let mut b = Tables::new(SbConfig::default());
        let mut ids: Vec<u32> = (0..n as u32).collect();
        let mut table = table_of(&metas, &ids);
        let mut epochs = 0;
        let state = |t: &Tables| -> State {
            let th = t
                .threads
                .iter()
                .map(|st| (st.node, st.shadow.len()))
                .collect();
            let tree = t
                .tree
                .nodes
                .iter()
                .map(|x| (x.parent, x.func, x.calls, x.self_insns));
            (th, tree.collect())
        };
        for (k, ((t, events), &cut)) in order.iter().zip(&cuts).enumerate() {
            copy += u32::from(cut);
            let a_ids: Vec<u32> = (0..n as u32).map(|b| copy * n as u32 + b).collect();
            if cut {
                let end = EpochEnd {
                    metas: table.published().to_vec(),
                    images: vec![u32::MAX; n as usize],
                };
                b.end_epoch(&end);
                epochs += 1;
                for i in (1..ids.len()).rev() {
                    ids.swap(i, rng.index(i + 1));
                }
                table = table_of(&metas, &ids);
            }
            let piece = &threads[*t][events.clone()];
            let w: Vec<u32> = piece.iter().flat_map(|e| words(e, &a_ids)).collect();
            a.process(*t, &w, &all);
            let w: Vec<u32> = piece.iter().flat_map(|e| words(e, &ids)).collect();
            b.process(*t, &w, &table);
            let (sb, sa) = (state(&b), state(&a));
            let d = sa.1.iter().zip(&sb.1).position(|(x, y)| x != y);
            assert!(
                sb.0 == sa.0 && d.is_none() && sa.1.len() == sb.1.len(),
                "case {case}, piece {k} (thread {t}, epoch before it: {cut}, {piece:?}): \
                 threads {:?} against {:?}, first context that differs {d:?}: {:?} against {:?}",
                sb.0,
                sa.0,
                d.map(|i| sb.1[i]),
                d.map(|i| sa.1[i]),
            );
        }
        a.finish();
        let a_tree = a
            .tree
            .nodes
            .iter()
            .map(|x| (x.parent, x.func, x.calls, x.self_insns));
        let a_tree: Vec<_> = a_tree.collect();
        let a_threads = a.per_thread();
        let a_stats = (a.returns, a.unmatched_returns, a.unresolved_exits);
        let a_snap = a.snapshot();
        let want = by_address(&a_snap, &grown);
        assert!(epochs > 0, "case {case}: no epoch");
        b.finish();
        let b_tree: Vec<_> = b
            .tree
            .nodes
            .iter()
            .map(|x| (x.parent, x.func, x.calls, x.self_insns))
            .collect();
        let first = a_tree.iter().zip(&b_tree).position(|(x, y)| x != y);
        assert!(
            first.is_none() && a_tree.len() == b_tree.len(),
            "case {case}: calling contexts differ from node {first:?}: {:?} against {:?}",
            first.map(|i| &b_tree[i..(i + 4).min(b_tree.len())]),
            first.map(|i| &a_tree[i..(i + 4).min(a_tree.len())]),
        );
        assert_eq!(b.per_thread(), a_threads, "case {case}: threads' totals");
        assert_eq!(
            (b.returns, b.unmatched_returns, b.unresolved_exits),
            a_stats,
            "case {case}"
        );
        let live: Vec<BlockMeta> = table.published().to_vec();
        let got = by_address(&b.snapshot(), &live);
        assert_eq!(got.counts, want.counts, "case {case}: counts");
        assert_eq!(got.edges, want.edges, "case {case}: edges");
        assert_eq!(got.rep, want.rep, "case {case}: rep iterations");
        assert_eq!(got.unretired, want.unretired, "case {case}: unretired");
    }
}
