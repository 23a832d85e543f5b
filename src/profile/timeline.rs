//! `hotlift report --timeline FILE.svg`: the run's phases as a picture.
//! The window is cut into equal time slices; each slice is one query of
//! the time tree (src/timetree) and one column, split into colored bands
//! by the share of its samples each function had as the innermost frame.
//! The functions with the most samples over the window get their own
//! colors (a legend names them, with their share); the rest is one gray
//! band and unattributed samples (below the tree's coverage cut) a darker
//! one. Under it a strip shows the samples per slice (where the guest ran
//! little, columns rest on few samples). Every band has a tooltip.
//!
//! I1: the SVG is well-formed XML: every name is escaped.
//! I2: slices are disjoint and cover the window: slice i is
//!     `[edge(i), edge(i+1) - 1]`, so every sample is in exactly one
//!     column and Σ columns = the window's samples.

use std::collections::HashMap;
use std::fmt::Write as _;

use super::sampling::TimeTreeSection;
use crate::timetree::Cost;

/// Colors of the top functions, in legend order (Tableau 10 and more).
const PALETTE: [&str; 12] = [
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#17becf", "#bcbd22", "#1f3a93",
];
const OTHER: &str = "#c8c8c8";
const UNATTRIBUTED: &str = "#7f7f7f";

/// What to draw.
#[derive(Debug, Clone)]
pub struct TimelineSpec {
    /// The window (ns, inclusive); clamped to the run's samples.
    pub from: u64,
    pub to: u64,
    pub slices: usize,
    /// Functions with their own color (at most the palette's size).
    pub top: usize,
    pub title: String,
}

/// What drawing cost and found.
#[derive(Debug, Clone, Default)]
pub struct TimelineStats {
    pub slices: usize,
    pub samples: u64,
    pub functions: Vec<String>,
    pub cost: Cost,
}

fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            c if (c as u32) < 0x20 && c != '\t' => o.push('?'),
            c => o.push(c),
        }
    }
    o
}

/// A "nice" tick step (1, 2 or 5 × 10^k) for about `n` ticks over `span`.
fn tick_step(span: f64, n: f64) -> f64 {
    let raw = (span / n).max(1e-9);
    let p = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * p)
        .find(|&s| s >= raw)
        .unwrap_or(10.0 * p)
}

/// The SVG for `spec`, or None when the window holds no samples.
pub fn svg(sec: &TimeTreeSection, spec: &TimelineSpec) -> Option<(String, TimelineStats)> {
    let (first, last) = sec.tree.span()?;
    let (a, b) = (spec.from.max(first), spec.to.min(last));
    if a > b {
        return None;
    }
    let k = spec.slices.max(1);
    let edge = |i: usize| a + ((u128::from(b - a) + 1) * i as u128 / k as u128) as u64;
    // The innermost function of each stack type, by name.
    let mut names: Vec<String> = Vec::new();
    let mut name_ix: HashMap<&str, usize> = HashMap::new();
    let inner: Vec<usize> = sec
        .stack_types
        .iter()
        .map(|st| {
            let f = st
                .frames
                .last()
                .map_or("[root]", |&f| sec.functions[f as usize].as_str());
            *name_ix.entry(f).or_insert_with(|| {
                names.push(f.to_string());
                names.len() - 1
            })
        })
        .collect();
    let mut stats = TimelineStats {
        slices: k,
        ..TimelineStats::default()
    };
    // Per slice: samples, unattributed, and counts per function (I2).
    let mut cols: Vec<(u64, u64, HashMap<usize, u64>)> = Vec::with_capacity(k);
    let mut totals = vec![0u64; names.len()];
    for i in 0..k {
        let (lo, hi) = (edge(i), edge(i + 1));
        let mut by_fn = HashMap::new();
        if hi == lo {
            cols.push((0, 0, by_fn));
            continue;
        }
        let w = sec.tree.window(lo, hi - 1);
        stats.cost += w.cost;
        for (&s, &c) in &w.counts {
            *by_fn.entry(inner[s as usize]).or_insert(0) += c;
            totals[inner[s as usize]] += c;
        }
        stats.samples += w.total;
        cols.push((w.total, w.unattributed, by_fn));
    }
    let mut order: Vec<usize> = (0..names.len()).filter(|&f| totals[f] > 0).collect();
    order.sort_by(|&x, &y| {
        totals[y]
            .cmp(&totals[x])
            .then_with(|| names[x].cmp(&names[y]))
    });
    order.truncate(spec.top.min(PALETTE.len()));
    stats.functions = order.iter().map(|&f| names[f].clone()).collect();
    let color: HashMap<usize, &str> = order
        .iter()
        .enumerate()
        .map(|(i, &f)| (f, PALETTE[i]))
        .collect();

    // Layout.
    let (left, right, top) = (70.0, 20.0, 56.0);
    let (width, plot_h, strip_h) = (1200.0, 360.0, 50.0);
    let plot_w = width - left - right;
    let strip_y = top + plot_h + 34.0;
    let legend_y = strip_y + strip_h + 64.0;
    let legend_cols = 3usize;
    let legend_rows = (order.len() + 2).div_ceil(legend_cols);
    let height = legend_y + legend_rows as f64 * 20.0 + 16.0;
    let col_w = plot_w / k as f64;
    let span_s = (b - a) as f64 * 1e-9;
    let x_of = |ns: u64| left + plot_w * ((ns - a) as f64 * 1e-9) / span_s.max(1e-12);

    let mut s = String::new();
    let _ = writeln!(
        s,
        r##"<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">
<rect width="100%" height="100%" fill="white"/>
<text x="{left}" y="22" font-size="16" font-weight="bold">{}</text>
<text x="{left}" y="40" fill="#444">{} samples in {} slices of {:.3} ms; bands: share of each slice's samples by innermost function</text>"##,
        esc(&spec.title),
        stats.samples,
        k,
        span_s * 1e3 / k as f64
    );
    // Columns (bands bottom-up in legend order, then other, unattributed).
    let max_samples = cols.iter().map(|c| c.0).max().unwrap_or(0).max(1);
    for (i, (total, unattributed, by_fn)) in cols.iter().enumerate() {
        if *total == 0 {
            continue;
        }
        let x = left + i as f64 * col_w;
        let (t0, t1) = (edge(i) as f64 * 1e-9, edge(i + 1) as f64 * 1e-9);
        let mut y = top + plot_h;
        let mut band = |s: &mut String, n: u64, fill: &str, what: &str| {
            if n == 0 {
                return;
            }
            let h = plot_h * n as f64 / *total as f64;
            y -= h;
            let _ = writeln!(
                s,
                r#"<rect x="{x:.2}" y="{y:.2}" width="{:.2}" height="{h:.2}" fill="{fill}"><title>{} s .. {} s: {}: {n} of {total} samples ({:.1}%)</title></rect>"#,
                col_w + 0.3,
                format_args!("{t0:.4}"),
                format_args!("{t1:.4}"),
                esc(what),
                100.0 * n as f64 / *total as f64
            );
        };
        let mut other = 0;
        for (&f, &n) in by_fn {
            if !color.contains_key(&f) {
                other += n;
            }
        }
        for &f in &order {
            band(
                &mut s,
                by_fn.get(&f).copied().unwrap_or(0),
                color[&f],
                &names[f],
            );
        }
        band(&mut s, other, OTHER, "other functions");
        band(&mut s, *unattributed, UNATTRIBUTED, "unattributed");
        // The samples-per-slice strip.
        let h = strip_h * *total as f64 / max_samples as f64;
        let _ = writeln!(
            s,
            r##"<rect x="{x:.2}" y="{:.2}" width="{:.2}" height="{h:.2}" fill="#607d8b"><title>{t0:.4} s .. {t1:.4} s: {total} samples</title></rect>"##,
            strip_y + strip_h - h,
            col_w + 0.3
        );
    }
    // Axes: y as shares, x in seconds, shared by the plot and the strip.
    let _ = writeln!(
        s,
        r##"<g stroke="#333" fill="none"><rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}"/><rect x="{left}" y="{strip_y}" width="{plot_w}" height="{strip_h}"/></g>"##
    );
    for (frac, label) in [(0.0, "0%"), (0.5, "50%"), (1.0, "100%")] {
        let y = top + plot_h * (1.0 - frac);
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{label}</text>"#,
            left - 6.0,
            y + 4.0
        );
    }
    let _ = writeln!(
        s,
        r#"<text transform="translate(16 {:.1}) rotate(-90)" text-anchor="middle">share of samples</text>
<text x="{:.1}" y="{:.1}" text-anchor="end">samples</text>
<text x="{:.1}" y="{:.1}" text-anchor="end">per slice</text>"#,
        top + plot_h / 2.0,
        left - 6.0,
        strip_y + 20.0,
        left - 6.0,
        strip_y + 34.0
    );
    let step = tick_step(span_s, 10.0);
    let decimals = (-(step.log10().floor())).max(0.0) as usize;
    let (a_s, b_s) = (a as f64 * 1e-9, b as f64 * 1e-9);
    let mut t = (a_s / step).ceil() * step;
    while t <= b_s + 1e-12 {
        let x = x_of((t * 1e9).round().max(a as f64) as u64);
        let _ = writeln!(
            s,
            r##"<line x1="{x:.2}" y1="{:.1}" x2="{x:.2}" y2="{:.1}" stroke="#333"/><text x="{x:.2}" y="{:.1}" text-anchor="middle">{t:.decimals$}</text>"##,
            strip_y + strip_h,
            strip_y + strip_h + 5.0,
            strip_y + strip_h + 18.0
        );
        t += step;
    }
    let _ = writeln!(
        s,
        r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">time (s of the monitor's clock since hotlift started)</text>"#,
        left + plot_w / 2.0,
        strip_y + strip_h + 34.0
    );
    // Legend: the top functions with their share of the window.
    let all = stats.samples.max(1) as f64;
    let other_total: u64 = cols
        .iter()
        .flat_map(|c| c.2.iter())
        .filter(|(f, _)| !color.contains_key(f))
        .map(|(_, &n)| n)
        .sum();
    let unattributed_total: u64 = cols.iter().map(|c| c.1).sum();
    let mut items: Vec<(&str, String, u64)> = order
        .iter()
        .map(|&f| (color[&f], names[f].clone(), totals[f]))
        .collect();
    items.push((OTHER, "other functions".into(), other_total));
    items.push((UNATTRIBUTED, "unattributed".into(), unattributed_total));
    let item_w = plot_w / legend_cols as f64;
    for (i, (fill, name, n)) in items.iter().enumerate() {
        let x = left + (i % legend_cols) as f64 * item_w;
        let y = legend_y + (i / legend_cols) as f64 * 20.0;
        let mut label = name.clone();
        if label.chars().count() > 48 {
            label = label.chars().take(47).collect::<String>() + "…";
        }
        let _ = writeln!(
            s,
            r#"<rect x="{x:.1}" y="{:.1}" width="12" height="12" fill="{fill}"/><text x="{:.1}" y="{y:.1}">{} ({:.1}%)</text>"#,
            y - 10.0,
            x + 18.0,
            esc(&label),
            100.0 * *n as f64 / all
        );
    }
    s.push_str("</svg>\n");
    Some((s, stats))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_escaped_and_ticks_are_round() {
        assert_eq!(esc("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
        for (span, want) in [(1.0, 0.1), (3.7, 0.5), (0.02, 0.002), (140.0, 20.0)] {
            let got = tick_step(span, 10.0);
            assert!((got - want).abs() < 1e-9 * want, "{span}: {got}");
        }
    }
}
