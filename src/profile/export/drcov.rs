//! drcov coverage files (DynamoRIO's drcov, "DRCOV VERSION: 3", module table
//! version 5), the format Lighthouse, the Ghidra/IDA coverage plugins and
//! `drcov2lcov` load.
//!
//! ```text
//! DRCOV VERSION: 3
//! DRCOV FLAVOR: drcov-64
//! Module Table: version 5, count 2
//! Columns: id, containing_id, start, end, entry, offset, preferred_base, path
//!   0,   0, 0x0000000000400000, 0x00000000004c6000, 0x0000000000401650, 0x0000000000000000, 0x0000000000400000, /path/prog
//! BB Table: 1234 bbs
//! <1234 × { u32 start (offset from the module's start), u16 size, u16 module id }, little-endian>
//! ```
//!
//! I1: every block with a non-zero count is in the BB table exactly once,
//!     with its module's id and its offset from that module's `start`
//!     (images.rs I3), which is stable across ASLR.
//! I2: a block whose offset does not fit in 32 bits or whose size does not
//!     fit in 16 is left out and counted in `Drcov::skipped` (drcov's entry
//!     has no room for it); `export` says so on stderr.
//!
//! `parse` reads the format back (tests and `hotlift export` self-checks).

use std::io::Write;

use super::images::Images;
use super::ExportError;
use crate::profile::Profile;

/// One BB-table entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct BbEntry {
    pub start: u32,
    pub size: u16,
    pub module: u16,
}

/// A module-table row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModuleRow {
    pub id: u16,
    pub start: u64,
    pub end: u64,
    pub entry: u64,
    pub path: String,
}

/// A drcov file's content.
#[derive(Debug, Clone, Default)]
pub struct Drcov {
    pub modules: Vec<ModuleRow>,
    pub blocks: Vec<BbEntry>,
    /// Executed blocks that drcov's entry cannot hold (I2).
    pub skipped: usize,
}

/// Build the coverage of `doc` (I1, I2).
pub fn build(doc: &Profile, images: &Images) -> Drcov {
    let mut d = Drcov::default();
    for (id, img) in images.images.iter().enumerate() {
        d.modules.push(ModuleRow {
            id: id as u16,
            start: img.start,
            end: img.end,
            entry: img.entry,
            path: if img.path.is_empty() {
                img.name.clone()
            } else {
                img.path.clone()
            },
        });
    }
    for b in doc.blocks.iter().filter(|b| b.count > 0) {
        let Some(id) = images.images.iter().position(|i| *i.name == *b.module) else {
            d.skipped += 1;
            continue;
        };
        let off = b.addr.wrapping_sub(images.images[id].start);
        match (u32::try_from(off), u16::try_from(b.size)) {
            (Ok(start), Ok(size)) => d.blocks.push(BbEntry {
                start,
                size,
                module: id as u16,
            }),
            _ => d.skipped += 1,
        }
    }
    d
}

/// Write `d` in the drcov format.
pub fn write(d: &Drcov, out: &mut dyn Write) -> Result<(), ExportError> {
    let mut text = String::new();
    text.push_str("DRCOV VERSION: 3\nDRCOV FLAVOR: drcov-64\n");
    text.push_str(&format!(
        "Module Table: version 5, count {}\n",
        d.modules.len()
    ));
    text.push_str("Columns: id, containing_id, start, end, entry, offset, preferred_base, path\n");
    for m in &d.modules {
        text.push_str(&format!(
            "{:3}, {:3}, {:#018x}, {:#018x}, {:#018x}, {:#018x}, {:#018x}, {}\n",
            m.id, m.id, m.start, m.end, m.entry, 0, m.start, m.path
        ));
    }
    text.push_str(&format!("BB Table: {} bbs\n", d.blocks.len()));
    out.write_all(text.as_bytes())?;
    let mut bin = Vec::with_capacity(d.blocks.len() * 8);
    for b in &d.blocks {
        bin.extend_from_slice(&b.start.to_le_bytes());
        bin.extend_from_slice(&b.size.to_le_bytes());
        bin.extend_from_slice(&b.module.to_le_bytes());
    }
    out.write_all(&bin)?;
    Ok(())
}

/// Why a drcov file could not be parsed.
#[derive(Debug, thiserror::Error)]
#[error("not a drcov file: {0}")]
pub struct ParseError(String);

/// Parse a drcov file with a version 2–5 module table and a binary BB table.
pub fn parse(bytes: &[u8]) -> Result<Drcov, ParseError> {
    let err = |s: &str| ParseError(s.to_string());
    let mut pos = 0;
    let mut line = || -> Result<String, ParseError> {
        let rest = bytes.get(pos..).ok_or_else(|| err("truncated"))?;
        let n = rest
            .iter()
            .position(|&b| b == b'\n')
            .ok_or_else(|| err("truncated header"))?;
        pos += n + 1;
        String::from_utf8(rest[..n].to_vec()).map_err(|_| err("header is not text"))
    };
    let version = line()?;
    if !matches!(version.as_str(), "DRCOV VERSION: 2" | "DRCOV VERSION: 3") {
        return Err(err(&format!("unknown version line {version:?}")));
    }
    let _flavor = line()?;
    let mt = line()?;
    let count: usize = mt
        .rsplit("count ")
        .next()
        .and_then(|c| c.trim().parse().ok())
        .ok_or_else(|| err("bad module table line"))?;
    let columns = line()?;
    let cols: Vec<&str> = columns
        .strip_prefix("Columns: ")
        .ok_or_else(|| err("no Columns line"))?
        .split(", ")
        .collect();
    let col = |name: &str| cols.iter().position(|c| *c == name);
    let (id_c, path_c) = (
        col("id").ok_or_else(|| err("no id column"))?,
        cols.len() - 1,
    );
    let start_c = col("start")
        .or_else(|| col("base"))
        .ok_or_else(|| err("no start column"))?;
    let end_c = col("end").ok_or_else(|| err("no end column"))?;
    let entry_c = col("entry").ok_or_else(|| err("no entry column"))?;
    let mut d = Drcov::default();
    for _ in 0..count {
        let l = line()?;
        let f: Vec<&str> = l.splitn(cols.len(), ',').map(str::trim).collect();
        if f.len() != cols.len() {
            return Err(err("short module row"));
        }
        let hexnum = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).ok();
        d.modules.push(ModuleRow {
            id: f[id_c].parse().map_err(|_| err("bad module id"))?,
            start: hexnum(f[start_c]).ok_or_else(|| err("bad start"))?,
            end: hexnum(f[end_c]).ok_or_else(|| err("bad end"))?,
            entry: hexnum(f[entry_c]).ok_or_else(|| err("bad entry"))?,
            path: f[path_c].to_string(),
        });
    }
    let bb = line()?;
    let n: usize = bb
        .strip_prefix("BB Table: ")
        .and_then(|s| s.strip_suffix(" bbs"))
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| err("bad BB Table line"))?;
    let table = bytes.get(pos..).unwrap_or_default();
    if table.len() != n.saturating_mul(8) {
        return Err(err(&format!(
            "BB table holds {} bytes, {n} entries need {}",
            table.len(),
            n.saturating_mul(8)
        )));
    }
    for e in table.chunks_exact(8) {
        d.blocks.push(BbEntry {
            start: u32::from_le_bytes(e[0..4].try_into().unwrap()),
            size: u16::from_le_bytes(e[4..6].try_into().unwrap()),
            module: u16::from_le_bytes(e[6..8].try_into().unwrap()),
        });
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let d = Drcov {
            modules: vec![ModuleRow {
                id: 0,
                start: 0x400000,
                end: 0x4c6000,
                entry: 0x401650,
                path: "/bin/with, comma".into(),
            }],
            blocks: vec![
                BbEntry {
                    start: 0x1650,
                    size: 12,
                    module: 0,
                },
                BbEntry {
                    start: 0x10,
                    size: 3,
                    module: 0,
                },
            ],
            skipped: 0,
        };
        let mut out = Vec::new();
        write(&d, &mut out).unwrap();
        let back = parse(&out).unwrap();
        assert_eq!(back.modules, d.modules);
        assert_eq!(back.blocks, d.blocks);
        assert!(parse(&out[..out.len() - 3]).is_err());
        assert!(parse(b"DRCOV VERSION: 9\n").is_err());
    }
}
