//! Exports of a profile in formats existing tools read (docs/EXPORTS.md):
//! drcov (coverage viewers), callgrind (KCachegrind, `callgrind_annotate`),
//! folded stacks and flame graph SVGs, and `perf` maps.
//!
//! I1: exporters read only the profile (`read::ProfileDoc`) and the files
//!     of its modules (`images.rs`); they never run the program.
//! I2: a format that needs a section the profile lacks (`call_tree` for
//!     folded/svg, `translations` for perfmap) is an `ExportError::Missing`,
//!     never an empty file.
//!
//! Usage: `export(&doc, Format::Drcov, &mut out)?`.

pub mod callgrind;
pub mod drcov;
pub mod images;
pub mod lines;
pub mod perfmap;
pub mod stacks;

use std::io::Write;

use thiserror::Error;

use crate::profile::read::ProfileDoc;
use images::Images;

/// The export formats (`hotlift export --format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// drcov version 3: module table + basic-block table (Lighthouse, drcov2lcov)
    Drcov,
    /// callgrind profile: per-instruction costs, calls and jumps (KCachegrind)
    Callgrind,
    /// folded call stacks from the calling-context tree (flame graph input)
    Folded,
    /// flame graph SVG of the folded stacks
    Svg,
    /// /tmp/perf-PID.map lines naming hotlift's translated code for perf
    Perfmap,
}

#[derive(Debug, Error)]
pub enum ExportError {
    #[error("the profile has no {0} section (written by an older hotlift?)")]
    Missing(&'static str),
    #[error("cannot write: {0}")]
    Io(#[from] std::io::Error),
    #[error("cannot draw the flame graph: {0}")]
    Svg(String),
}

/// Write `doc` as `format` to `out` (I1, I2). Returns warnings to show the
/// user (e.g. drcov blocks that do not fit the format).
pub fn export(
    doc: &ProfileDoc,
    format: Format,
    out: &mut dyn Write,
) -> Result<Vec<String>, ExportError> {
    let images = Images::open(doc);
    let mut warnings = Vec::new();
    match format {
        Format::Drcov => {
            let d = drcov::build(doc, &images);
            if d.skipped > 0 {
                warnings.push(format!(
                    "{} executed blocks do not fit drcov's 32-bit offset/16-bit size and were left out",
                    d.skipped
                ));
            }
            drcov::write(&d, out)?;
        }
        Format::Callgrind => callgrind::write(doc, &images, out)?,
        Format::Folded => stacks::write_folded(doc, &images, out)?,
        Format::Svg => stacks::write_svg(doc, &images, out)?,
        Format::Perfmap => perfmap::write(doc, &images, out)?,
    }
    if images.images.first().is_some_and(|i| i.symbols.is_empty())
        && matches!(format, Format::Callgrind | Format::Folded | Format::Svg)
    {
        warnings.push(format!(
            "{}: no symbols (stripped, and no debug file found): functions are named by address",
            doc.binary.path
        ));
    }
    Ok(warnings)
}
