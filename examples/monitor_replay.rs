//! Replay a monitor record (src/monitor/trace.rs) into fresh tables:
//!
//!     HOTLIFT_MONITOR_TRACE=/tmp/rec hotlift run -- PROGRAM ...
//!     cargo run --release --example monitor_replay -- /tmp/rec.PID [REPS]
//!
//! Prints each repetition's time per ring word and checks the replay's
//! totals against the monitor's (trace.rs I1). Under
//! `valgrind --tool=cachegrind` (REPS 1) the instruction and miss counts
//! do not vary between runs, unlike this VM's timings.

use std::time::Instant;

use hotlift::monitor::trace::{self, Event};
use hotlift::monitor::{BlockTable, SbConfig, Tables};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: monitor_replay RECORD [REPS]");
        std::process::exit(2);
    };
    let reps: usize = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(5);
    let events = match trace::read(std::path::Path::new(path)) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("monitor_replay: {path}: {e}");
            std::process::exit(1);
        }
    };
    let mut cfg = SbConfig::default();
    let (mut metas, mut want, mut words) = (Vec::new(), None, 0u64);
    for e in &events {
        match e {
            Event::Config(c) => {
                cfg.enabled = c.enabled;
                cfg.block_threshold = c.block_threshold;
                cfg.edge_threshold = c.edge_threshold;
            }
            Event::Metas(m) => metas = m.clone(),
            Event::Totals(t) => want = Some(*t),
            Event::Batch(_, w) => words += w.len() as u64,
            Event::Superblock(..) => {}
        }
    }
    let Some(want) = want else {
        eprintln!("monitor_replay: {path}: the record has no end (the monitor did not finish)");
        std::process::exit(1);
    };
    let blocks = BlockTable::new(metas.len().max(1) as u32 + 1).expect("block table");
    for m in &metas {
        blocks.push(*m);
    }
    let mut times = Vec::new();
    for rep in 0..reps {
        let mut t = Tables::new(cfg);
        let t0 = Instant::now();
        for e in &events {
            match e {
                Event::Batch(th, w) => {
                    t.process(*th as usize, w, &blocks);
                    // The builder takes them each round.
                    t.requests.clear();
                }
                Event::Superblock(id, acc) => t.add_superblock(*id, acc.clone(), &metas),
                _ => {}
            }
        }
        t.finish();
        let s = t0.elapsed().as_secs_f64();
        let got = t.totals();
        if got != want {
            eprintln!("monitor_replay: rep {rep}: totals {got:?}, the monitor had {want:?}");
            std::process::exit(1);
        }
        println!(
            "rep {rep}: {:.3} s, {:.2} ns a word ({words} words)",
            s,
            s * 1e9 / words as f64
        );
        times.push(s);
    }
    if times.is_empty() {
        return;
    }
    times.sort_by(f64::total_cmp);
    println!(
        "min {:.2} ns a word, median {:.2}",
        times[0] * 1e9 / words as f64,
        times[times.len() / 2] * 1e9 / words as f64
    );
}
