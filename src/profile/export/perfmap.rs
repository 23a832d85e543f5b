//! `perf` map files: one line per piece of translated host code, in the
//! format `perf report` reads from `/tmp/perf-PID.map` for JIT code:
//! `START SIZE NAME`, START and SIZE in hex without `0x`.
//!
//! I1: one line per `translations[]` entry and per `superblocks[]` entry
//!     with a non-zero size; a block is named `hotlift:SYMBOL [GUEST]` (or
//!     `hotlift:[GUEST]` without a symbol), a superblock after its head,
//!     `hotlift:SYMBOL [HEAD] superblock ID`.
//!
//! The host addresses are hotlift's own: the map only means something to
//! `perf` for the process (`pid`) that wrote the profile, e.g. with
//! `hotlift export P.json --format perfmap -o /tmp/perf-$(jq .pid P.json).map`
//! after `perf record -- hotlift run --profile P.json ...`, or written by
//! the run itself (`hotlift run --perf-map`). perf applies it to code in
//! anonymous memory, which code memory is (cache/codemem.rs). After a
//! flush the same host range is reused and the map has an entry for each
//! translation that was there: perf shows one of them.

use std::io::Write;

use super::images::Images;
use super::ExportError;
use crate::profile::Profile;

/// Write the perf map of `doc` (I1).
pub fn write(doc: &Profile, images: &Images, out: &mut dyn Write) -> Result<(), ExportError> {
    if doc.translations.is_empty() {
        return Err(ExportError::Missing("translations"));
    }
    let named = |g: u64| {
        let sym = doc.block_at(g).and_then(|b| b.symbol.as_deref());
        let name = images.code_name(g, sym);
        if name.starts_with("0x") {
            format!("hotlift:[{g:#x}]")
        } else {
            format!("hotlift:{name} [{g:#x}]")
        }
    };
    let mut s = String::new();
    for t in doc.translations.iter().filter(|t| t.host_size > 0) {
        // Guest 0: none given (a hand-made profile's superblock or code).
        let name = match (t.guest, &t.superblock) {
            (0, Some(sb)) => format!("hotlift:superblock {sb}"),
            (0, None) => "hotlift:code".to_string(),
            (g, _) => named(g),
        };
        s.push_str(&format!("{:x} {:x} {name}\n", t.host, t.host_size));
    }
    for sb in doc.superblocks.iter().map(|sb| &sb.record) {
        if sb.host_size > 0 {
            let name = format!("{} superblock {}", named(sb.head), sb.id);
            s.push_str(&format!("{:x} {:x} {name}\n", sb.host, sb.host_size));
        }
    }
    out.write_all(s.as_bytes())?;
    Ok(())
}
