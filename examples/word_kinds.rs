//! What a monitor record's ring words are (src/monitor/trace.rs):
//!
//!     HOTLIFT_MONITOR_TRACE=/tmp/rec hotlift run --profile p.json -- PROGRAM ...
//!     cargo run --release --example word_kinds -- /tmp/rec.PID
//!
//! Each exit word is classed as a plain block's (by how the block exits)
//! or a superblock unit's, by the calls and returns its path replays
//! (tables/memo.rs: none, balanced, rotating back to the same return
//! address, rotating to another one, a return before a balanced piece, or
//! other), how its last member exits and whether it loops back to the
//! head; then the busiest units with their paths' calls and returns. The
//! kinds that cost the monitor most are the ones it replays op by op.

use std::collections::HashMap;

use hotlift::cache::BlockMeta;
use hotlift::contract::{
    record_words, LOOP_PASSES_MASK, LOOP_PASSES_N, TAG, TAG_LOOP_PASSES, UNIT_BASE,
};
use hotlift::ir::ExitKind;
use hotlift::monitor::tables::SbAccount;
use hotlift::monitor::trace::{self, Event};

/// A call (`Some(return address)`) or a return, and where it goes.
type Op = (Option<u64>, u64);

/// Does every return on `ops` go back to a call made earlier on it, with
/// none left open?
fn balanced(ops: &[Op]) -> bool {
    let mut open = Vec::new();
    for &(call, to) in ops {
        match call {
            Some(ret) => open.push(ret),
            None if open.last() == Some(&to) => {
                open.pop();
            }
            None => return false,
        }
    }
    open.is_empty()
}

/// The calls and returns a pass ending at member `m` replays.
fn ops(a: &SbAccount, m: usize) -> Vec<Op> {
    a.path_ops(m)
        .into_iter()
        .map(|(_, op)| (op.call, op.to))
        .collect()
}

fn class(ops: &[Op], loops: bool, last: &BlockMeta) -> &'static str {
    if ops.is_empty() {
        "no calls or returns"
    } else if balanced(ops) {
        "balanced"
    } else if ops[0].0.is_none() && balanced(&ops[1..]) {
        match (loops && last.exit == ExitKind::Call, last.next == ops[0].1) {
            (true, true) => "rotating, same return address",
            (true, false) => "rotating, another return address",
            (false, _) => "a return, then balanced",
        }
    } else {
        "other"
    }
}

fn main() {
    let Some(file) = std::env::args().nth(1) else {
        eprintln!("usage: word_kinds RECORD");
        std::process::exit(2);
    };
    let events = trace::read(std::path::Path::new(&file)).unwrap_or_else(|e| {
        eprintln!("word_kinds: {file}: {e}");
        std::process::exit(1);
    });
    let Some(metas) = events.iter().find_map(|e| match e {
        Event::Metas(m) => Some(m),
        _ => None,
    }) else {
        eprintln!("word_kinds: {file}: the record has no end (run with a profile)");
        std::process::exit(1);
    };
    let mut sbs: Vec<&SbAccount> = Vec::new();
    let mut kinds: HashMap<String, u64> = HashMap::new();
    let mut units: HashMap<(usize, usize), u64> = HashMap::new();
    let (mut total, mut loop_passes) = (0u64, 0u64);
    for e in &events {
        let words = match e {
            Event::Superblock(_, a) => {
                sbs.push(a);
                continue;
            }
            Event::Batch(_, words) => words,
            _ => continue,
        };
        let mut i = 0;
        while i < words.len() {
            let w = words[i];
            i += 1;
            if w & TAG != 0 {
                if w & LOOP_PASSES_MASK == TAG_LOOP_PASSES {
                    loop_passes += u64::from(w & LOOP_PASSES_N);
                } else {
                    i += record_words(w);
                }
                continue;
            }
            total += 1;
            let kind = if w < UNIT_BASE {
                let m = &metas[(w >> 2) as usize];
                format!("block, {:?} exit {}", m.exit, w & 3)
            } else {
                let Some(s) = sbs.iter().rposition(|a| a.unit_base <= w) else {
                    continue;
                };
                let a = sbs[s];
                let k = (w - a.unit_base) as usize;
                match a.exits.get(k) {
                    None => "unit, a pass stopped inside".to_string(),
                    Some(ex) => {
                        *units.entry((s, k)).or_default() += 1;
                        let m = ex.member as usize;
                        let last = &metas[a.members[m] as usize];
                        let c = class(&ops(a, m), ex.to_head, last);
                        let lp = if ex.to_head { ", loops" } else { "" };
                        let counted = if a.loops_counted { ", counted" } else { "" };
                        format!("unit, {c}, ends {:?}{lp}{counted}", last.exit)
                    }
                }
            };
            *kinds.entry(kind).or_default() += 1;
        }
    }
    println!("{total} exit words, {loop_passes} passes of counted loops");
    let mut kinds: Vec<_> = kinds.into_iter().collect();
    kinds.sort_by_key(|k| std::cmp::Reverse(k.1));
    for (k, n) in kinds.iter().take(25) {
        let share = 100.0 * *n as f64 / total.max(1) as f64;
        println!("{share:6.2}% {n:>11}  {k}");
    }
    println!("busiest units:");
    let mut units: Vec<_> = units.into_iter().collect();
    units.sort_by_key(|u| std::cmp::Reverse(u.1));
    for ((s, k), n) in units.into_iter().take(8) {
        let a = sbs[s];
        let ex = a.exits[k];
        let p = a.path(ex.member as usize);
        let last = &metas[a.members[ex.member as usize] as usize];
        let ops: Vec<String> = ops(a, ex.member as usize)
            .iter()
            .map(|&(call, to)| match call {
                Some(r) => format!("call {to:#x} (returns to {r:#x})"),
                None => format!("return to {to:#x}"),
            })
            .collect();
        println!(
            "{n:>11}  unit {} (superblock {s} exit {k}): {} members, ends {:?} at {:#x}{}: {}",
            a.unit_base as usize + k,
            p.len(),
            last.exit,
            last.guest,
            if ex.to_head { ", loops" } else { "" },
            ops.join(", ")
        );
    }
}
