//! `hotlift dump PROFILE [--superblock ID | --top N] [--format
//! text|dot|json]`: show the superblocks a run built (profile/dump.rs
//! renders them); dot draws one, or all (the hottest N) a cluster each.

use std::collections::HashMap;
use std::path::Path;

use anyhow::{bail, Context, Result};

use crate::profile::dump::{render_dot, render_dot_all, render_text};
use crate::profile::SuperblockEntry;

/// Output formats of `dump`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DumpFormat {
    Text,
    Dot,
    Json,
}

/// Read the superblocks of a profile, with names for guest addresses.
pub fn read_superblocks(path: &Path) -> Result<Vec<SuperblockEntry>> {
    let text = crate::profile::read::read_input(path)
        .with_context(|| format!("cannot read the profile {}", path.display()))?;
    let v: serde_json::Value = serde_json::from_slice(&text)
        .with_context(|| format!("{} is not a JSON profile", path.display()))?;
    let version = v["schema_version"].as_u64();
    let readable = crate::profile::OLDEST_READABLE as u64..=crate::profile::SCHEMA_VERSION as u64;
    if !version.is_some_and(|x| readable.contains(&x)) {
        bail!(
            "{}: profile schema version {} is not a supported one ({} to {})",
            path.display(),
            version.map_or("missing".into(), |x| x.to_string()),
            readable.start(),
            readable.end()
        );
    }
    // Each block's name as every output gives it (Images::code_name: its
    // function's name and the offset into it; the profile's symbol when
    // the modules cannot be opened) and its module+offset (it survives
    // ASLR, an address does not), one of them where they are the same
    // (unnamed code), and its source line where its module has line
    // tables.
    let images = crate::profile::read::read_bytes(&text, &path.display().to_string())
        .ok()
        .map(|doc| crate::profile::export::images::Images::open(&doc));
    let line = |module: Option<&str>, a: u64| -> Option<String> {
        let at = images.as_ref()?.by_name(module?)?.source_line(a, false)?;
        Some(format!(" at {at}"))
    };
    let mut names = HashMap::new();
    for b in v["blocks"].as_array().into_iter().flatten() {
        let Some(a) = b["addr"].as_u64() else {
            continue;
        };
        let place = match (b["module"].as_str(), b["offset"].as_u64()) {
            (Some(m), Some(o)) => Some(format!("{m}+{o:#x}")),
            _ => None,
        };
        let stored = b["symbol"].as_str();
        let symbol = match &images {
            Some(images) => Some(images.code_name(a, stored)),
            None => stored.map(|s| crate::profile::names::display(s).into_owned()),
        };
        let symbol = symbol.filter(|s| place.as_ref() != Some(s) && !s.starts_with("0x"));
        let at = line(b["module"].as_str(), a).unwrap_or_default();
        let name = match (symbol, place) {
            (Some(s), Some(p)) => format!("{s}, {p}{at}"),
            (Some(s), None) => format!("{s}{at}"),
            (None, Some(p)) => format!("{p}{at}"),
            (None, None) => continue,
        };
        names.insert(a, name);
    }
    let names = std::sync::Arc::new(names);
    let Some(sbs) = v.get("superblocks") else {
        bail!("{}: the profile has no superblocks section", path.display());
    };
    let mut list: Vec<SuperblockEntry> = serde_json::from_value(sbs.clone())
        .with_context(|| format!("{}: malformed superblocks section", path.display()))?;
    for e in &mut list {
        e.names = std::sync::Arc::clone(&names);
    }
    Ok(list)
}

pub fn main(profile: &Path, id: Option<u32>, top: Option<usize>, format: DumpFormat) -> Result<()> {
    let all = read_superblocks(profile)?;
    let mut chosen: Vec<&SuperblockEntry> = match id {
        Some(id) => {
            let Some(e) = all.iter().find(|e| e.record.id == id) else {
                bail!(
                    "{}: no superblock {id} (it has {})",
                    profile.display(),
                    all.len()
                );
            };
            vec![e]
        }
        None => all.iter().collect(),
    };
    if let Some(n) = top {
        // The hottest: most passes (entries and loops back).
        chosen.sort_by_key(|e| (std::cmp::Reverse(e.entries + e.loops), e.record.id));
        chosen.truncate(n);
        chosen.sort_by_key(|e| e.record.id);
    }
    let mut out = String::new();
    match format {
        DumpFormat::Text => {
            if chosen.is_empty() {
                out.push_str("no superblocks were built\n");
            }
            for e in chosen {
                out.push_str(&render_text(e));
                out.push('\n');
            }
        }
        DumpFormat::Dot => match chosen.as_slice() {
            [] => bail!("no superblocks to draw: the run built none"),
            [one] if id.is_some() => out.push_str(&render_dot(one)),
            list => out.push_str(&render_dot_all(list)),
        },
        DumpFormat::Json => {
            out = serde_json::to_string_pretty(&chosen)?;
            out.push('\n');
        }
    }
    super::write_stdout(&out)
}
