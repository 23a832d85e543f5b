//! The paths-of-interest file: one path per line, the addresses of its
//! blocks in order, hexadecimal (`0x401136`), or as offsets from the
//! function's start (`+0x1a`, or `NAME+0x1a` with the function's own
//! name, `NAME` for its start), separated by spaces, commas or `->`.
//! `#` starts a comment; blank lines are skipped. This is the form
//! `hotlift paths` prints blocks in, so a path can be copied from its
//! output.

use thiserror::Error;

/// A block address as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddrSpec {
    Abs(u64),
    /// Offset from the function's start.
    Rel(u64),
}

/// One path of interest and the line it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InterestPath {
    pub line: usize,
    pub blocks: Vec<AddrSpec>,
}

#[derive(Debug, Error, PartialEq, Eq)]
#[error("{file}:{line}: {msg}")]
pub struct InterestError {
    pub file: String,
    pub line: usize,
    pub msg: String,
}

fn hex(s: &str) -> Option<u64> {
    let h = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X"))?;
    u64::from_str_radix(h, 16).ok()
}

/// Parse the file's text; `func` is the function's name as given (for
/// `NAME+0x..`), if it was given by name.
pub fn parse(
    file: &str,
    text: &str,
    func: Option<&str>,
) -> Result<Vec<InterestPath>, InterestError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let err = |msg: String| InterestError {
            file: file.to_string(),
            line,
            msg,
        };
        let body = raw.split('#').next().unwrap_or("");
        let body = body.replace("->", " ").replace(['→', ','], " ");
        let mut blocks = Vec::new();
        for tok in body.split_whitespace() {
            let spec = if let Some(a) = hex(tok) {
                AddrSpec::Abs(a)
            } else if let Some(off) = tok.strip_prefix('+') {
                AddrSpec::Rel(hex(off).ok_or_else(|| err(format!("bad offset `{tok}`")))?)
            } else {
                let (name, off) = match tok.split_once('+') {
                    Some((n, o)) => (
                        n,
                        hex(o).ok_or_else(|| err(format!("bad offset in `{tok}`")))?,
                    ),
                    None => (tok, 0),
                };
                if Some(name) != func {
                    return Err(err(format!(
                        "`{tok}` is neither a hexadecimal address (0x...) nor an offset in the profiled function{}",
                        func.map(|f| format!(" ({f}+0x...)")).unwrap_or_default()
                    )));
                }
                AddrSpec::Rel(off)
            };
            blocks.push(spec);
        }
        if !blocks.is_empty() {
            out.push(InterestPath { line, blocks });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_addresses_offsets_and_comments() {
        let text = "# paths\n0x401000 0x401010 -> 0x401020\n\nf f+0x10, +0x20  # end\n";
        let p = parse("i.txt", text, Some("f")).unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].line, 2);
        assert_eq!(
            p[0].blocks,
            vec![
                AddrSpec::Abs(0x401000),
                AddrSpec::Abs(0x401010),
                AddrSpec::Abs(0x401020)
            ]
        );
        assert_eq!(
            p[1].blocks,
            vec![AddrSpec::Rel(0), AddrSpec::Rel(0x10), AddrSpec::Rel(0x20)]
        );
    }

    #[test]
    fn names_the_line_of_a_bad_token() {
        let e = parse("i.txt", "0x1 0x2\nmain+0x4\n", Some("f")).unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.to_string().starts_with("i.txt:2: `main+0x4`"), "{e}");
        assert!(parse("i.txt", "+0xzz", None).is_err());
    }
}
