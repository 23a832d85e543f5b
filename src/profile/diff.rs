//! Differences between two profiles of the same binary, for regression
//! checks (`hotlift diff A.json B.json --threshold PCT`).
//!
//! I1: two profiles are comparable only if their binaries have the same
//!     SHA-256 (`DiffError::DifferentBinary` otherwise).
//! I2: code is matched by (module, offset), never by address, so ASLR and
//!     static-PIE bases do not matter; edges likewise by the (module,
//!     offset) of both ends (block-to-block `edges`, `call_edges`,
//!     `indirect_edges`; a profile without `edges` contributes its branch
//!     and fall-through counts). An address in no module keeps its address.
//! I3: functions, and the blocks in them, are named as the exports name
//!     them (export/images.rs: the ELF symbol tables or debug files, else
//!     the run's call targets); an unnamed function is `module+0xOFFSET`
//!     of its entry.
//! I4: `exceeds(pct)` is true when the change in total instructions, or in
//!     any one function's instructions, or in the total number of
//!     syscalls, is more than `pct` percent of A's total for that measure.
//!
//! Usage: `let d = ProfileDiff::new(&a, &b)?; print!("{}", d.report(10));`

use std::collections::{BTreeMap, BTreeSet};

use thiserror::Error;

use super::export::images::Images;
use super::Profile;

#[derive(Debug, Error)]
pub enum DiffError {
    #[error(
        "the profiles are of different binaries: {a} (sha256 {sa:.12}…) and {b} (sha256 {sb:.12}…)"
    )]
    DifferentBinary {
        a: String,
        sa: String,
        b: String,
        sb: String,
    },
}

/// A location independent of the load address (I2).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Loc {
    pub module: String,
    pub offset: u64,
}

impl std::fmt::Display for Loc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}+{:#x}", self.module, self.offset)
    }
}

/// One measure in A and in B.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change<K> {
    pub key: K,
    pub a: u64,
    pub b: u64,
}

impl<K> Change<K> {
    pub fn delta(&self) -> i128 {
        self.b as i128 - self.a as i128
    }
}

/// Everything that differs between two profiles.
#[derive(Debug)]
pub struct ProfileDiff {
    pub binary: String,
    pub total: Change<&'static str>,
    pub functions: Vec<Change<String>>,
    pub blocks: Vec<Change<(Loc, Option<String>)>>,
    pub edges: Vec<Change<(String, Loc, Loc)>>,
    pub syscalls: Vec<Change<String>>,
    pub syscall_total: Change<&'static str>,
}

fn loc(doc: &Profile, addr: u64) -> Loc {
    match doc
        .modules
        .iter()
        .find(|m| addr >= m.base && addr < m.end.max(m.base + 1))
    {
        Some(m) => Loc {
            module: m.name.clone(),
            offset: addr - m.base,
        },
        None => Loc {
            module: "?".into(),
            offset: addr,
        },
    }
}

/// Pair up two maps into changes, keeping only keys whose values differ.
fn changes<K: Ord + Clone>(a: &BTreeMap<K, u64>, b: &BTreeMap<K, u64>) -> Vec<Change<K>> {
    let keys: BTreeSet<&K> = a.keys().chain(b.keys()).collect();
    let mut v: Vec<Change<K>> = keys
        .into_iter()
        .map(|k| Change {
            key: k.clone(),
            a: a.get(k).copied().unwrap_or(0),
            b: b.get(k).copied().unwrap_or(0),
        })
        .filter(|c| c.a != c.b)
        .collect();
    v.sort_by_key(|c| std::cmp::Reverse(c.delta().unsigned_abs()));
    v
}

fn functions(doc: &Profile, images: &Images) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for b in &doc.blocks {
        let (entry, name) = images.function_name(b.addr, b.symbol.as_deref());
        // I3: unnamed code is keyed by where its function starts.
        let name = if name.starts_with("0x") {
            loc(doc, entry).to_string()
        } else {
            name
        };
        *m.entry(name).or_insert(0) += b.count * b.instructions as u64;
    }
    m
}

fn blocks(doc: &Profile) -> BTreeMap<(Loc, Option<String>), u64> {
    doc.blocks
        .iter()
        .map(|b| {
            let l = Loc {
                module: b.module.to_string(),
                offset: b.offset,
            };
            ((l, b.symbol.clone()), b.count)
        })
        .collect()
}

/// The changed blocks (matched by place and the profile's symbol) with
/// the names every output gives them (export/images.rs `code_name`: the
/// function's name, demangled, and the offset into it), from the profile
/// that has the block; None for code outside every module.
fn named_blocks(
    changed: Vec<Change<(Loc, Option<String>)>>,
    docs: [(&Profile, &Images); 2],
) -> Vec<Change<(Loc, Option<String>)>> {
    let index: Vec<std::collections::HashMap<(&str, u64), u64>> = docs
        .iter()
        .map(|(d, _)| {
            d.blocks
                .iter()
                .map(|b| ((&*b.module, b.offset), b.addr))
                .collect()
        })
        .collect();
    changed
        .into_iter()
        .map(|c| {
            let ((l, sym), a, b) = (c.key, c.a, c.b);
            let name = docs.iter().zip(&index).find_map(|((_, images), index)| {
                let addr = index.get(&(l.module.as_str(), l.offset))?;
                Some(images.code_name(*addr, sym.as_deref()))
            });
            let name = name.or(sym).filter(|n| !n.starts_with("0x"));
            Change {
                key: (l, name),
                a,
                b,
            }
        })
        .collect()
}

fn edges(doc: &Profile) -> BTreeMap<(String, Loc, Loc), u64> {
    let mut m = BTreeMap::new();
    let mut add = |kind: &str, from: u64, to: u64, n: u64| {
        *m.entry((kind.to_string(), loc(doc, from), loc(doc, to)))
            .or_insert(0) += n;
    };
    for e in &doc.edges {
        add("edge", e.from, e.to, e.count);
    }
    for b in doc.blocks.iter().filter(|_| doc.edges.is_empty()) {
        if let Some(t) = b.taken {
            // The taken target is not in the profile: the edge is named by
            // its source and kind.
            add("taken", b.addr, b.addr, t);
        }
        if let Some(f) = b.fallthrough {
            add("fallthrough", b.addr, b.addr + b.size as u64, f);
        }
    }
    for e in &doc.call_edges {
        add("call", e.from, e.to, e.count);
    }
    for e in &doc.indirect_edges {
        add("indirect", e.from, e.to, e.count);
    }
    m
}

fn syscalls(doc: &Profile) -> BTreeMap<String, u64> {
    doc.syscalls
        .iter()
        .map(|s| (s.name.clone(), s.count))
        .collect()
}

fn pct(delta: i128, base: u64) -> String {
    if base == 0 {
        return if delta == 0 {
            "0%".into()
        } else {
            "new".into()
        };
    }
    format!("{:+.2}%", delta as f64 * 100.0 / base as f64)
}

impl ProfileDiff {
    /// Compare profile `a` (the baseline) with `b` (I1, I2).
    pub fn new(a: &Profile, b: &Profile) -> Result<ProfileDiff, DiffError> {
        if a.binary.sha256 != b.binary.sha256 {
            return Err(DiffError::DifferentBinary {
                a: a.binary.path.clone(),
                sa: a.binary.sha256.clone(),
                b: b.binary.path.clone(),
                sb: b.binary.sha256.clone(),
            });
        }
        let syscall_total = |d: &Profile| d.syscalls.iter().map(|s| s.count).sum::<u64>();
        let images = (Images::open(a), Images::open(b));
        Ok(ProfileDiff {
            binary: a.binary.path.clone(),
            total: Change {
                key: "guest instructions",
                a: a.totals.guest_instructions,
                b: b.totals.guest_instructions,
            },
            functions: changes(&functions(a, &images.0), &functions(b, &images.1)),
            blocks: named_blocks(
                changes(&blocks(a), &blocks(b)),
                [(a, &images.0), (b, &images.1)],
            ),
            edges: changes(&edges(a), &edges(b)),
            syscalls: changes(&syscalls(a), &syscalls(b)),
            syscall_total: Change {
                key: "syscalls",
                a: syscall_total(a),
                b: syscall_total(b),
            },
        })
    }

    /// Nothing differs at all.
    pub fn is_empty(&self) -> bool {
        self.total.a == self.total.b
            && self.functions.is_empty()
            && self.blocks.is_empty()
            && self.edges.is_empty()
            && self.syscalls.is_empty()
    }

    /// I4.
    pub fn exceeds(&self, threshold_pct: f64) -> bool {
        let past = |delta: i128, base: u64| {
            let base = base.max(1) as f64;
            delta.unsigned_abs() as f64 * 100.0 / base > threshold_pct
        };
        past(self.total.delta(), self.total.a)
            || self.functions.iter().any(|f| past(f.delta(), self.total.a))
            || past(self.syscall_total.delta(), self.syscall_total.a)
            || self
                .syscalls
                .iter()
                .any(|s| past(s.delta(), self.syscall_total.a))
    }

    /// A readable report with the `top` largest changes of each kind.
    pub fn report(&self, top: usize) -> String {
        let mut s = String::new();
        let t = &self.total;
        s.push_str(&format!(
            "hotlift diff: {}\n  guest instructions {} -> {} ({:+}, {})\n  syscalls {} -> {} ({:+})\n",
            self.binary,
            t.a,
            t.b,
            t.delta(),
            pct(t.delta(), t.a),
            self.syscall_total.a,
            self.syscall_total.b,
            self.syscall_total.delta()
        ));
        if self.is_empty() {
            s.push_str("  no differences\n");
            return s;
        }
        fn section<K>(
            s: &mut String,
            title: &str,
            v: &[Change<K>],
            top: usize,
            base: u64,
            show: impl Fn(&K) -> String,
        ) {
            if v.is_empty() {
                return;
            }
            s.push_str(&format!("{title} ({} changed, largest first):\n", v.len()));
            for c in v.iter().take(top) {
                s.push_str(&format!(
                    "  {:>14} -> {:<14} {:>+14} {:>9}  {}\n",
                    c.a,
                    c.b,
                    c.delta(),
                    pct(c.delta(), base.max(c.a)),
                    show(&c.key)
                ));
            }
        }
        section(
            &mut s,
            "functions (instructions)",
            &self.functions,
            top,
            0,
            |k| k.clone(),
        );
        section(
            &mut s,
            "blocks (executions)",
            &self.blocks,
            top,
            0,
            |(l, sym)| match sym {
                Some(name) => format!("{l} {name}"),
                None => l.to_string(),
            },
        );
        section(&mut s, "edges (count)", &self.edges, top, 0, |(k, f, t)| {
            if k == "taken" {
                format!("branch taken at {f}")
            } else {
                format!("{k} {f} -> {t}")
            }
        });
        section(&mut s, "syscalls (count)", &self.syscalls, top, 0, |k| {
            k.clone()
        });
        s
    }
}
