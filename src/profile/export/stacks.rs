//! Folded call stacks (`main;parse;read_line 1234`, the input of flame
//! graph tools) from the profile's calling-context tree, and a flame graph
//! SVG drawn from them with the `inferno` crate.
//!
//! I1: one line per context with a non-zero self cost; the stack is the
//!     names of the functions entered from the root down to the context,
//!     the value its `self_instructions`. Σ values =
//!     `totals.guest_instructions` (call_tree's own invariant).
//! I2: the root context (function 0: code run before any call, from the
//!     entry point) is named after the function containing the entry
//!     point, or `[root]`.
//! I3: stacks are at most `MAX_FRAMES` deep: a context deeper than that
//!     (deep recursion reaches 100,000) is charged to its ancestor at depth
//!     `MAX_FRAMES - 1` under a last frame `[deeper]`, so the output stays
//!     proportional to the number of contexts.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;

use super::images::Images;
use super::ExportError;
use crate::profile::Profile;

/// Deepest stack written (I3).
pub const MAX_FRAMES: usize = 512;

/// The folded lines of `doc`, sorted (I1, I2).
pub fn folded(doc: &Profile, images: &Images) -> Result<Vec<String>, ExportError> {
    if doc.call_tree.is_empty() {
        return Err(ExportError::Missing("call_tree"));
    }
    let index: HashMap<u32, usize> = doc
        .call_tree
        .iter()
        .enumerate()
        .map(|(i, n)| (n.id, i))
        .collect();
    let root_name = images
        .images
        .first()
        .filter(|i| i.entry != 0)
        .and_then(|i| i.function(i.entry))
        .map(|(_, n)| crate::profile::names::display(n).into_owned())
        .unwrap_or_else(|| "[root]".to_string());
    let name = |i: usize| -> String {
        let n = &doc.call_tree[i];
        if n.parent.is_none() || n.function == 0 {
            return n
                .symbol
                .as_deref()
                .map(|s| crate::profile::names::display(s).into_owned())
                .unwrap_or_else(|| root_name.clone());
        }
        let sym = n
            .symbol
            .as_deref()
            .map(|s| s.split('+').next().unwrap_or(s));
        // Semicolons separate frames and spaces the count: keep names clean.
        images
            .context_name(n.function, sym)
            .1
            .replace([';', ' '], "_")
    };
    // Parents before children (a parent's id is smaller, docs/PROFILE.md).
    let mut order: Vec<usize> = (0..doc.call_tree.len()).collect();
    order.sort_by_key(|&i| doc.call_tree[i].id);
    let parent = |i: usize| {
        doc.call_tree[i]
            .parent
            .and_then(|p| index.get(&p).copied())
            .filter(|&p| doc.call_tree[p].id < doc.call_tree[i].id)
    };
    // depth, and for contexts past MAX_FRAMES their anchor (I3).
    let mut depth = vec![0usize; doc.call_tree.len()];
    let mut anchor: Vec<Option<usize>> = vec![None; doc.call_tree.len()];
    let mut deeper: HashMap<usize, u64> = HashMap::new();
    for &i in &order {
        if let Some(p) = parent(i) {
            depth[i] = depth[p] + 1;
            if depth[i] >= MAX_FRAMES {
                anchor[i] = Some(anchor[p].unwrap_or(p));
            }
        }
    }
    let stack = |i: usize| {
        let mut frames = vec![name(i)];
        let mut at = i;
        while let Some(p) = parent(at) {
            frames.push(name(p));
            at = p;
        }
        frames.reverse();
        frames.join(";")
    };
    let mut lines: BTreeMap<String, u64> = BTreeMap::new();
    for (i, n) in doc.call_tree.iter().enumerate() {
        if n.self_instructions == 0 {
            continue;
        }
        match anchor[i] {
            Some(a) => *deeper.entry(a).or_insert(0) += n.self_instructions,
            None => *lines.entry(stack(i)).or_insert(0) += n.self_instructions,
        }
    }
    for (a, v) in deeper {
        *lines.entry(stack(a) + ";[deeper]").or_insert(0) += v;
    }
    Ok(lines.into_iter().map(|(k, v)| format!("{k} {v}")).collect())
}

/// Write the folded stacks.
pub fn write_folded(
    doc: &Profile,
    images: &Images,
    out: &mut dyn Write,
) -> Result<(), ExportError> {
    for l in folded(doc, images)? {
        writeln!(out, "{l}")?;
    }
    Ok(())
}

/// Write a flame graph SVG of the folded stacks.
pub fn write_svg(doc: &Profile, images: &Images, out: &mut dyn Write) -> Result<(), ExportError> {
    let lines = folded(doc, images)?;
    let mut opts = inferno::flamegraph::Options::default();
    let prog = doc
        .command_line
        .first()
        .map(|p| p.rsplit('/').next().unwrap_or(p).to_string())
        .unwrap_or_default();
    opts.title = format!("hotlift: {prog}");
    opts.count_name = "instructions".to_string();
    inferno::flamegraph::from_lines(&mut opts, lines.iter().map(String::as_str), out)
        .map_err(|e| ExportError::Svg(e.to_string()))
}
