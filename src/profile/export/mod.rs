//! Exports of a profile in formats existing tools read (docs/EXPORTS.md):
//! drcov (coverage viewers), callgrind (KCachegrind, `callgrind_annotate`),
//! folded stacks and flame graph SVGs, `perf` maps, and exact line
//! coverage (lcov, Cobertura) of one profile or a process tree's.
//!
//! I1: exporters read only the profile (a [`Profile`]: read back, or the
//!     run's own at its end) and the files of its modules (`images.rs`);
//!     they never run the program.
//! I2: a format that needs a section the profile lacks (`call_tree` for
//!     folded/svg, `translations` for perfmap) is an `ExportError::Missing`,
//!     never an empty file; so is coverage without a source line to show
//!     (`NoLines`, `NoSources`).
//!
//! Usage: `export(&doc, Format::Drcov, &mut out)?`.

pub mod callgrind;
pub mod coverage;
pub mod decl;
pub mod drcov;
pub mod images;
pub mod lines;
pub mod perfmap;
pub mod stacks;

use std::io::Write;

use thiserror::Error;

use crate::profile::Profile;
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
    /// lcov tracefile: exact hits per source line and function (genhtml)
    Lcov,
    /// Cobertura XML: the same line coverage for CI servers
    Cobertura,
}

impl Format {
    /// Does the format take several profiles (a process tree's) at once?
    pub fn merges(self) -> bool {
        matches!(self, Format::Lcov | Format::Cobertura)
    }
}

#[derive(Debug, Error)]
pub enum ExportError {
    #[error("the profile has no {0} section (written by an older hotlift?)")]
    Missing(&'static str),
    #[error("cannot write: {0}")]
    Io(#[from] std::io::Error),
    #[error("cannot draw the flame graph: {0}")]
    Svg(String),
    #[error(
        "this format exports one profile at a time, not {0} (lcov and cobertura merge several)"
    )]
    OneProfile(usize),
    #[error("no source lines: the profiled modules have no DWARF line tables (build with -g, or install their debug files)")]
    NoLines,
    #[error("no source file left to cover: {0} named by the line tables cannot be read here, and those under /usr/ are left out without --system-sources")]
    NoSources(usize),
}

/// How to export, beyond the format.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Coverage: keep source files under `/usr/` (coverage.rs I4).
    pub system_sources: bool,
}

/// Write `docs` as `format` to `out` (I1, I2): one profile, or for the
/// formats that merge ([`Format::merges`]) any number. Returns warnings to
/// show the user (e.g. drcov blocks that do not fit the format).
pub fn export(
    docs: &[Profile],
    format: Format,
    opts: Options,
    out: &mut dyn Write,
) -> Result<Vec<String>, ExportError> {
    if format.merges() {
        return export_coverage(docs, format, opts, out);
    }
    let [doc] = docs else {
        return Err(ExportError::OneProfile(docs.len()));
    };
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
        Format::Lcov | Format::Cobertura => unreachable!("merged above"),
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

/// Line coverage of one or more profiles (coverage.rs).
fn export_coverage(
    docs: &[Profile],
    format: Format,
    opts: Options,
    out: &mut dyn Write,
) -> Result<Vec<String>, ExportError> {
    let mut cov = coverage::Coverage::default();
    for doc in docs {
        cov.add(doc, &Images::open(doc));
    }
    if cov.files.is_empty() {
        return Err(ExportError::NoLines);
    }
    let mut warnings = Vec::new();
    let gone = cov.keep_readable(opts.system_sources);
    if cov.files.is_empty() {
        return Err(ExportError::NoSources(gone.count()));
    }
    if !gone.program.is_empty() {
        let mut shown = gone.program[..gone.program.len().min(3)].join(", ");
        if gone.program.len() > 3 {
            shown.push_str(", …");
        }
        warnings.push(format!(
            "{} of the program cannot be read here ({shown}); their lines were left out",
            source_files(gone.program.len())
        ));
    }
    if !gone.modules.is_empty() {
        let count: usize = gone.modules.values().sum();
        let modules: Vec<&str> = gone.modules.keys().map(String::as_str).collect();
        warnings.push(format!(
            "{} of other modules ({}) cannot be read here; their lines were left out",
            source_files(count),
            modules.join(", ")
        ));
    }
    match format {
        Format::Lcov => cov.write_lcov(out)?,
        _ => cov.write_cobertura(out)?,
    }
    Ok(warnings)
}

/// "1 source file", "2 source files".
fn source_files(n: usize) -> String {
    format!("{n} source file{}", if n == 1 { "" } else { "s" })
}
