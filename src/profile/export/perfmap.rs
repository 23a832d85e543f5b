//! `perf` map files: one line per piece of translated host code, in the
//! format `perf report` reads from `/tmp/perf-PID.map` for JIT code:
//! `START SIZE NAME`, START and SIZE in hex without `0x`.
//!
//! I1: one line per `translations[]` entry with a non-zero size; a block is
//!     named `hotlift:SYMBOL [GUEST]` (or `hotlift:[GUEST]` without a
//!     symbol), a superblock `hotlift:superblock SUPERBLOCK`.
//!
//! The host addresses are hotlift's own: the map only means something to
//! `perf` for the process (`pid`) that wrote the profile, e.g. with
//! `hotlift export P.json --format perfmap -o /tmp/perf-$(jq .pid P.json).map`
//! after `perf record -- hotlift run --profile P.json ...`.

use std::io::Write;

use super::images::Images;
use super::ExportError;
use crate::profile::read::ProfileDoc;

/// Write the perf map of `doc` (I1).
pub fn write(doc: &ProfileDoc, images: &Images, out: &mut dyn Write) -> Result<(), ExportError> {
    if doc.translations.is_empty() {
        return Err(ExportError::Missing("translations"));
    }
    let mut s = String::new();
    for t in doc.translations.iter().filter(|t| t.host_size > 0) {
        let name = match (t.guest, &t.superblock) {
            (Some(g), _) => {
                let sym = doc.block_at(g).and_then(|b| b.symbol.as_deref());
                let (entry, f) = images.function_name(g, sym);
                if f.starts_with("0x") {
                    format!("hotlift:[{g:#x}]")
                } else if entry == g {
                    format!("hotlift:{f} [{g:#x}]")
                } else {
                    format!("hotlift:{f}+{:#x} [{g:#x}]", g - entry)
                }
            }
            (None, Some(sb)) => format!("hotlift:superblock {sb}"),
            (None, None) => "hotlift:code".to_string(),
        };
        s.push_str(&format!("{:x} {:x} {name}\n", t.host, t.host_size));
    }
    out.write_all(s.as_bytes())?;
    Ok(())
}
