//! Replay a monitor record (src/monitor/trace.rs) into fresh tables:
//!
//!     HOTLIFT_MONITOR_TRACE=/tmp/rec hotlift profile -- PROGRAM ...
//!     cargo run --release --example monitor_replay -- /tmp/rec.PID [REPS]
//!
//! (`profile`, or `run --profile`: a run without a profile does not wait
//! for its monitor to finish, and the record has no end.) Prints each
//! repetition's time per ring word; every repetition checks its totals
//! against the monitor's (trace.rs I1). Under
//! `valgrind --tool=cachegrind`, the instructions of 2 repetitions less
//! those of 1 are one replay's, the same from run to run.

use hotlift::monitor::trace;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: monitor_replay RECORD [REPS]");
        std::process::exit(2);
    };
    let reps: usize = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(5);
    let events = trace::read(std::path::Path::new(path)).unwrap_or_else(|e| {
        eprintln!("monitor_replay: {path}: {e}");
        std::process::exit(1);
    });
    let mut ns = Vec::new();
    for rep in 0..reps {
        let r = trace::replay(&events).unwrap_or_else(|e| {
            eprintln!("monitor_replay: {path}: {e}");
            std::process::exit(1);
        });
        let per = r.seconds * 1e9 / r.words.max(1) as f64;
        println!(
            "rep {rep}: {:.3} s, {per:.2} ns a word ({} words)",
            r.seconds, r.words
        );
        ns.push(per);
    }
    ns.sort_by(f64::total_cmp);
    if let (Some(min), Some(median)) = (ns.first(), ns.get(ns.len() / 2)) {
        println!("min {min:.2} ns a word, median {median:.2}");
    }
}
