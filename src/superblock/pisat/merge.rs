//! Deduplicating and merging mined patterns before they become superblock
//! requests (design S2): a pattern containing an existing one absorbs it;
//! one contained in an existing one is absorbed; two with the same block
//! set that are rotations of one loop (B,C,E and C,E,B) become one; a
//! pattern sharing its start and another block with an existing one is
//! merged with it.
//!
//! How hotlift reads the rules (a superblock is one path with side exits):
//! - "contains" is subsequence containment, as patterns are subsequences;
//!   a loop (a pattern whose last block was seen going to its first,
//!   `Pattern::closes`, or one a rotation was merged into) contains what
//!   any of its rotations contains (C,E is in B,C,E; E,B in the loop
//!   B,C,E);
//! - a loop is not absorbed by a straight path that contains it (the loop
//!   B,C and the path B,C,X leaving it): the path is dropped instead, as a
//!   superblock closed at its head runs iteration after iteration and one
//!   that leaves the loop would leave after the first;
//! - of two rotations the one kept starts at the lower block id: block ids
//!   are handed out in translation order, so the lowest is the block of
//!   the loop that ran first, its entry;
//! - two patterns with one start can only become one path: the merged
//!   pattern is the stronger of the two (more repeats in one sequence,
//!   then more sequences, then longer; the existing one on a tie), and
//!   the other's continuation leaves through the superblock's side exit.
//!
//! I1: no two patterns of a [`Store`] are in conflict ([`conflict`]): one
//!     does not contain the other, they are not rotations of each other,
//!     and they do not share a start.
//! I2: the store holds at most its capacity; the oldest pattern already
//!     asked for goes first.
//!
//! Usage: `store.insert(pattern)` for each pattern mined, then
//! `store.take_new()` for those to ask superblocks for.

/// A mined pattern: block ids in order, and its support when found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    pub path: Vec<u32>,
    /// Sequences of the database holding it (support1's figure).
    pub sequences: u32,
    /// Most timestamps of one sequence (support2's figure).
    pub repeats: u32,
    /// Sequences in the database when it was found.
    pub database: u32,
    /// Its last block was seen going to its first: a loop.
    pub closes: bool,
}

/// Which of two conflicting patterns stays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    Old,
    New,
}

/// Why two patterns cannot both stay (I1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    Contained,
    Contains,
    Rotation,
    SameStart,
}

/// Is `small` a subsequence of `big`?
pub fn contains(big: &[u32], small: &[u32]) -> bool {
    let mut it = big.iter();
    small.iter().all(|x| it.any(|y| y == x))
}

/// Is `small` a subsequence of some rotation of the loop `big`?
pub fn contains_cyclic(big: &[u32], small: &[u32]) -> bool {
    (0..big.len()).any(|k| {
        let mut it = big[k..].iter().chain(&big[..k]);
        small.iter().all(|x| it.any(|y| y == x))
    })
}

/// Is `b` a rotation of `a` (same length, same blocks in cyclic order)?
pub fn is_rotation(a: &[u32], b: &[u32]) -> bool {
    a.len() == b.len()
        && !a.is_empty()
        && (0..a.len()).any(|k| a[k..].iter().chain(&a[..k]).eq(b.iter()))
}

/// Same first block and at least one more block in common.
pub fn shares_start(a: &[u32], b: &[u32]) -> bool {
    !a.is_empty() && a.first() == b.first() && a[1..].iter().any(|x| b[1..].contains(x))
}

fn strength(p: &Pattern) -> (u32, u32, usize) {
    (p.repeats, p.sequences, p.path.len())
}

/// Do existing `old` (a known loop when `cycle`) and new `new` conflict
/// (I1), and which stays?
pub fn conflict(old: &Pattern, cycle: bool, new: &Pattern) -> Option<(Rule, Keep)> {
    let (a, b) = (&old.path, &new.path);
    let (old_loop, new_loop) = (cycle || old.closes, new.closes);
    if is_rotation(a, b) && a != b {
        let keep = if b[0] < a[0] { Keep::New } else { Keep::Old };
        return Some((Rule::Rotation, keep));
    }
    if contains(a, b) || (old_loop && contains_cyclic(a, b)) {
        return Some((Rule::Contained, Keep::Old));
    }
    if contains(b, a) || (new_loop && contains_cyclic(b, a)) {
        let keep = if old_loop && !new_loop {
            Keep::Old
        } else {
            Keep::New
        };
        return Some((Rule::Contains, keep));
    }
    if shares_start(a, b) {
        let keep = if strength(new) > strength(old) {
            Keep::New
        } else {
            Keep::Old
        };
        return Some((Rule::SameStart, keep));
    }
    None
}

/// One stored pattern.
#[derive(Debug, Clone)]
pub struct Entry {
    pub pattern: Pattern,
    /// A superblock was asked for it.
    pub requested: bool,
    /// A rotation of it was merged in: it is a loop.
    pub cycle: bool,
}

/// What inserting a pattern did, by rule (for the profile's statistics).
#[derive(Debug, Default, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct MergeStats {
    pub inserted: u64,
    /// New patterns contained in a stored one.
    pub absorbed: u64,
    /// Stored patterns contained in a new one.
    pub absorbing: u64,
    pub rotations: u64,
    pub same_start: u64,
    /// Stored patterns dropped for room (I2).
    pub evicted: u64,
}

/// The merged patterns (I1, I2).
#[derive(Debug, Clone)]
pub struct Store {
    pub entries: Vec<Entry>,
    pub capacity: usize,
    pub stats: MergeStats,
}

impl Store {
    pub fn new(capacity: usize) -> Store {
        Store {
            entries: Vec::new(),
            capacity: capacity.max(1),
            stats: MergeStats::default(),
        }
    }

    /// Merge `p` in; true when it was kept.
    pub fn insert(&mut self, p: Pattern) -> bool {
        self.stats.inserted += 1;
        let mut i = 0;
        let mut cycle = p.closes;
        while i < self.entries.len() {
            let old = &self.entries[i];
            let Some((rule, keep)) = conflict(&old.pattern, old.cycle, &p) else {
                i += 1;
                continue;
            };
            match rule {
                Rule::Contained => self.stats.absorbed += 1,
                Rule::Contains => self.stats.absorbing += 1,
                Rule::Rotation => {
                    self.stats.rotations += 1;
                    self.entries[i].cycle = true;
                    cycle = true;
                }
                Rule::SameStart => self.stats.same_start += 1,
            }
            match keep {
                Keep::Old => {
                    if rule == Rule::Rotation {
                        self.absorb_into_loop(i);
                    }
                    return false;
                }
                // The loser goes; the winner is checked against the rest.
                Keep::New => {
                    self.entries.remove(i);
                }
            }
        }
        if self.entries.len() >= self.capacity {
            let victim = self.entries.iter().position(|e| e.requested).unwrap_or(0);
            self.entries.remove(victim);
            self.stats.evicted += 1;
        }
        self.entries.push(Entry {
            pattern: p,
            requested: false,
            cycle,
        });
        if cycle {
            self.entries.last_mut().expect("just pushed").cycle = true;
            self.absorb_into_loop(self.entries.len() - 1);
        }
        true
    }

    /// Entry `i` is now known as a loop: what it contains read as a cycle
    /// goes (I1).
    fn absorb_into_loop(&mut self, i: usize) {
        let lp = self.entries[i].pattern.path.clone();
        let mut j = 0;
        self.entries.retain(|e| {
            j += 1;
            let gone = j - 1 != i && contains_cyclic(&lp, &e.pattern.path);
            if gone {
                self.stats.absorbed += 1;
            }
            !gone
        });
    }

    /// Patterns not asked for yet, marked as asked for now.
    pub fn take_new(&mut self) -> Vec<Pattern> {
        self.entries
            .iter_mut()
            .filter(|e| !e.requested)
            .map(|e| {
                e.requested = true;
                e.pattern.clone()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const A: u32 = 0;
    const B: u32 = 1;
    const C: u32 = 2;
    const D: u32 = 3;
    const E: u32 = 4;

    fn p(path: &[u32], repeats: u32, sequences: u32) -> Pattern {
        Pattern {
            path: path.to_vec(),
            sequences,
            repeats,
            database: 3,
            closes: false,
        }
    }

    fn paths(s: &Store) -> Vec<Vec<u32>> {
        s.entries.iter().map(|e| e.pattern.path.clone()).collect()
    }

    /// The patterns of the three-sequence example (tree/tests.rs):
    /// B,C,E (repeated in one sequence) and C,E,B (in all three) are one
    /// loop; the shorter patterns they contain go.
    #[test]
    fn rotations_of_one_loop_become_one() {
        let mut s = Store::new(64);
        assert!(s.insert(p(&[C, E], 2, 3)));
        assert!(s.insert(p(&[C, E, B], 1, 3)), "absorbs C,E");
        assert_eq!(paths(&s), vec![vec![C, E, B]]);
        assert!(s.insert(p(&[B, C, E], 2, 1)), "B is the lower id");
        assert_eq!(paths(&s), vec![vec![B, C, E]]);
        assert!(!s.insert(p(&[E, B, C], 1, 3)), "E is higher than B");
        assert!(!s.insert(p(&[B, E], 2, 1)), "contained in B,C,E");
        assert!(!s.insert(p(&[E, B], 3, 3)), "contained in the loop");
        assert_eq!(paths(&s), vec![vec![B, C, E]]);
        assert!(s.entries[0].cycle);
        assert_eq!(s.stats.rotations, 2);
        assert_eq!(s.stats.absorbing, 1);
        assert_eq!(s.stats.absorbed, 2);
        // Not known as a loop: E,B stays beside B,C,E.
        let mut s = Store::new(64);
        s.insert(p(&[B, C, E], 2, 1));
        assert!(s.insert(p(&[E, B], 3, 3)));
    }

    /// The loop C8,B0 (B0 goes back to C8) and the path B0,C8,DA that
    /// leaves it through the loop's cold side: both stay, and a path
    /// containing the loop does not absorb it.
    #[test]
    fn a_loop_is_not_absorbed_by_a_path_leaving_it() {
        const C8: u32 = 10;
        const B0: u32 = 11;
        const DA: u32 = 12;
        let lp = |path: &[u32], r| Pattern {
            closes: true,
            ..p(path, r, 1)
        };
        let mut s = Store::new(64);
        assert!(s.insert(lp(&[C8, B0], 60)));
        assert!(!s.insert(lp(&[B0, C8], 60)), "its rotation");
        assert!(
            s.insert(p(&[B0, C8, DA], 27, 1)),
            "not contained in the loop"
        );
        assert!(
            !s.insert(p(&[DA, C8, B0], 15, 1)),
            "contains the loop: dropped"
        );
        assert!(!s.insert(p(&[C8, DA], 20, 1)), "contained in B0,C8,DA");
        assert_eq!(paths(&s), vec![vec![C8, B0], vec![B0, C8, DA]]);
        // A longer loop absorbs a shorter one it contains.
        let mut s = Store::new(64);
        s.insert(lp(&[C8, B0], 60));
        assert!(s.insert(lp(&[C8, B0, DA], 5)));
        assert_eq!(paths(&s), vec![vec![C8, B0, DA]]);
    }

    #[test]
    fn containment_both_ways() {
        let mut s = Store::new(64);
        s.insert(p(&[A, C], 5, 1));
        s.insert(p(&[B, D], 5, 1));
        // A,B,C,D contains both (as subsequences, gaps allowed).
        assert!(s.insert(p(&[A, B, C, D], 2, 1)));
        assert_eq!(paths(&s), vec![vec![A, B, C, D]]);
        assert!(!s.insert(p(&[B, C], 9, 3)));
        assert!(!s.insert(p(&[A, B, C, D], 9, 3)), "a duplicate");
        assert_eq!(paths(&s), vec![vec![A, B, C, D]]);
    }

    #[test]
    fn same_start_keeps_the_stronger_path() {
        let mut s = Store::new(64);
        s.insert(p(&[A, B, C], 4, 1));
        // Shares A and B: the weaker new one goes, the stronger replaces.
        assert!(!s.insert(p(&[A, B, D], 3, 1)));
        assert!(s.insert(p(&[A, B, E], 6, 1)));
        assert_eq!(paths(&s), vec![vec![A, B, E]]);
        // Same start only, nothing else shared: both stay.
        assert!(s.insert(p(&[A, C, D], 1, 1)));
        // A different start: stays.
        assert!(s.insert(p(&[D, E], 1, 1)));
        assert_eq!(s.entries.len(), 3);
        assert_eq!(s.stats.same_start, 2);
    }

    #[test]
    fn new_patterns_are_asked_for_once_and_the_store_is_bounded() {
        let mut s = Store::new(2);
        s.insert(p(&[A, B], 1, 1));
        assert_eq!(s.take_new().len(), 1);
        assert!(s.take_new().is_empty());
        s.insert(p(&[C, D], 1, 1));
        s.insert(p(&[E, D], 1, 1));
        assert_eq!(s.entries.len(), 2, "I2");
        assert_eq!(paths(&s), vec![vec![C, D], vec![E, D]], "A,B was asked for");
        assert_eq!(s.stats.evicted, 1);
    }

    fn any_pattern() -> impl Strategy<Value = Pattern> {
        (
            prop::sample::subsequence((0u32..8).collect::<Vec<_>>(), 1..6).prop_shuffle(),
            0u32..5,
            0u32..5,
        )
            .prop_map(|(path, repeats, sequences)| Pattern {
                path,
                repeats,
                sequences,
                database: 4,
                closes: repeats % 2 == 1,
            })
    }

    proptest! {
        #[test]
        fn the_store_never_holds_a_conflict(ps in prop::collection::vec(any_pattern(), 0..40)) {
            let mut s = Store::new(1000);
            for q in &ps {
                let kept = s.insert(q.clone());
                // I1 between every pair.
                for (i, a) in s.entries.iter().enumerate() {
                    for b in &s.entries[i + 1..] {
                        prop_assert!(conflict(&a.pattern, a.cycle, &b.pattern).is_none()
                            && conflict(&b.pattern, b.cycle, &a.pattern).is_none(),
                            "{:?} and {:?}", a.pattern.path, b.pattern.path);
                    }
                }
                // The new pattern is stored, or a stored one beat it.
                if kept {
                    prop_assert!(s.entries.iter().any(|e| e.pattern == *q));
                } else {
                    prop_assert!(s.entries.iter().any(|e| {
                        conflict(&e.pattern, e.cycle, q).is_some_and(|(_, k)| k == Keep::Old)
                    }), "{:?} lost", q.path);
                }
            }
        }
    }
}
