//! `hotlift report PROFILE [--from T] [--to T] [--top N] [--format
//! text|json|folded] [--verbose] [--timeline FILE.svg]`: what ran in a time
//! window of a profiled run, from the profile's time tree
//! (src/timetree, profile/window.rs, profile/timeline.rs). Exit 0, or
//! 2 with a one-line error.

use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::{Args, ValueEnum};

use super::{EXIT_OK, EXIT_TOOL_ERROR};
use crate::profile::timeline::{self, TimelineSpec};
use crate::profile::{read, window};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// the window, top functions (self and inclusive) and top stacks
    Text,
    /// the same as one JSON object
    Json,
    /// every stack of the window as folded stacks with sample counts
    Folded,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The JSON profile
    #[arg(value_name = "PROFILE")]
    pub profile: PathBuf,
    /// Start of the window: seconds since hotlift started (monitor clock), e.g. 1.5, 1.5s, 250ms, 300us, 1000ns (default: the first sample)
    #[arg(long, value_name = "T", value_parser = parse_time)]
    pub from: Option<u64>,
    /// End of the window, inclusive (default: the last sample)
    #[arg(long, value_name = "T", value_parser = parse_time)]
    pub to: Option<u64>,
    /// How many functions and stacks to show (and to color in the timeline)
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,
    /// Output format
    #[arg(long, value_enum, default_value = "text")]
    pub format: ReportFormat,
    /// Also show what the query visited: tree nodes, raw samples, stored counts, time
    #[arg(long, short = 'v')]
    pub verbose: bool,
    /// Also draw the window as a timeline of the top functions per time slice into FILE (SVG)
    #[arg(long, value_name = "FILE")]
    pub timeline: Option<PathBuf>,
    /// Time slices of the timeline
    #[arg(long, value_name = "N", default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub slices: u32,
}

/// A time as nanoseconds: a number of seconds, or a number with the unit
/// `s`, `ms`, `us` or `ns`.
pub fn parse_time(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, scale) = [
        ("ns", 1),
        ("us", 1_000),
        ("µs", 1_000),
        ("ms", 1_000_000),
        ("s", 1_000_000_000),
    ]
    .iter()
    .find_map(|&(u, k)| t.strip_suffix(u).map(|n| (n.trim(), k)))
    .unwrap_or((t, 1_000_000_000u64));
    let exact = num.parse::<u64>().ok().and_then(|x| x.checked_mul(scale));
    let float = || match num.parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 && x * (scale as f64) < u64::MAX as f64 => {
            Some((x * scale as f64).round() as u64)
        }
        _ => None,
    };
    exact
        .or_else(float)
        .ok_or_else(|| format!("{s:?} is not a time (seconds, or a number with s, ms, us or ns)"))
}

pub fn main(args: ReportArgs) -> i32 {
    match run(&args) {
        Ok(()) => EXIT_OK,
        Err(e) => {
            crate::host::say!("hotlift report: {e:#}");
            EXIT_TOOL_ERROR
        }
    }
}

fn run(args: &ReportArgs) -> anyhow::Result<()> {
    let (from, to) = (args.from.unwrap_or(0), args.to.unwrap_or(u64::MAX));
    if from > to {
        bail!(
            "--from {} s is after --to {} s",
            window::seconds(from),
            window::seconds(to)
        );
    }
    let mut doc = read::read_file(&args.profile)?;
    let images = crate::profile::export::images::Images::open(&doc);
    let Some(sec) = doc.time_tree.as_mut() else {
        bail!(
            "{}: the profile has no time_tree (it was taken with --no-sampling or --count-inline, or by an older hotlift)",
            args.profile.display()
        );
    };
    // Frames named as every other output names functions.
    sec.functions = window::frame_names(sec, &doc.call_tree, &images);
    let sec = &*sec;
    let mut rep = window::report(sec, from, to);
    if args.format != ReportFormat::Folded {
        rep.locate(sec, &doc.call_tree, &images, args.top);
    }
    let out = match args.format {
        ReportFormat::Text => rep.text(sec, args.top, args.verbose),
        ReportFormat::Json => {
            let mut v = rep.json(args.top);
            if !args.verbose {
                if let Some(o) = v.as_object_mut() {
                    o.remove("query_seconds");
                }
            }
            format!("{}\n", serde_json::to_string_pretty(&v)?)
        }
        ReportFormat::Folded => rep.folded(),
    };
    if let Some(path) = &args.timeline {
        let prog = doc
            .command_line
            .first()
            .map(|p| p.rsplit('/').next().unwrap_or(p).to_string())
            .unwrap_or_default();
        let spec = TimelineSpec {
            from,
            to,
            slices: args.slices as usize,
            top: args.top,
            title: format!("hotlift timeline: {prog}"),
        };
        let Some((svg, stats)) = timeline::svg(sec, &spec) else {
            bail!("no samples in the window: nothing to draw");
        };
        std::fs::write(path, svg).with_context(|| format!("cannot write {}", path.display()))?;
        if args.verbose {
            crate::host::say!(
                "hotlift report: timeline {}: {} slices, {} samples; the {} queries visited {} nodes, {} raw samples, {} stored counts",
                path.display(),
                stats.slices,
                stats.samples,
                stats.slices,
                stats.cost.nodes,
                stats.cost.samples,
                stats.cost.counts
            );
        }
    }
    super::write_stdout(&out)
}

#[cfg(test)]
mod tests {
    use super::parse_time;

    #[test]
    fn times_parse_with_units() {
        let ok = [
            ("1.5", 1_500_000_000),
            ("2s", 2_000_000_000),
            ("250ms", 250_000_000),
            ("0.5 ms", 500_000),
            ("300us", 300_000),
            ("7µs", 7_000),
            ("18446744073709551615ns", u64::MAX),
            ("0", 0),
        ];
        for (s, ns) in ok {
            assert_eq!(parse_time(s), Ok(ns), "{s}");
        }
        for bad in ["", "-1", "1h", "nan", "1e30", "s"] {
            assert!(parse_time(bad).is_err(), "{bad}");
        }
    }
}
