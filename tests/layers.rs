//! The library's top-level modules form layers that only point down: no
//! dependency cycle between them (issue 21, goal 1). docs/ARCHITECTURE.md
//! ("Layers") gives the order.
//!
//! A top-level module is one `mod` line of `src/lib.rs`: `src/<name>.rs`, or
//! `src/<name>/` with everything in that folder. Module `a` depends on `b`
//! when a file of `a` names a path that starts at the crate root and goes
//! into `b`: `crate::b…`, an element of `crate::{b…, …}`, or a `super::`
//! chain that climbs out of `a` to the root (`super::super::b` in
//! `src/a/x.rs`). Code in `#[cfg(test)]` modules counts (it is compiled into
//! the same crate), and so do paths inside macros (`sym crate::b::f` in
//! `global_asm!`); so does a `crate::b…` path in a doc comment (`///`,
//! `//!`): rustdoc resolves an intra-doc link, and a reader follows it, so
//! documentation that points up a layer is as much a dependency as code
//! (a reviewer's check counted them, and found a cycle this one did not).
//! Other comments and string literals do not count. Only names of
//! top-level modules count in doc comments (`crate::Vm` names an item the
//! root re-exports). `src/main.rs` and `src/bin/` are not scanned: they
//! are other crates, above the library, and reach it as `hotlift::`.
//!
//! Invariants the test keeps:
//! - I1. Every edge inside a cycle (a strongly connected component of the
//!   module graph) is listed in [`ALLOWED`], with the reason it is still
//!   there. A new edge that closes a cycle fails, printed as the cycle with
//!   the file:line of every reference along it.
//! - I2. Every edge in [`ALLOWED`] exists and is inside a cycle, so the list
//!   only shrinks: breaking an edge fails until its line is removed.
//!
//! Run it alone with `cargo test --release --test layers`; `-- --nocapture`
//! prints the layer order it found.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

/// Edges allowed inside a cycle, as (from, to, why): none. The last
/// cycle, the engine and the OS layer ({dispatch, signal, syscall}), went
/// when the engine began calling the OS layer only through the hook the
/// CLI installs (dispatch/os.rs) and the state both use moved down into
/// the engine (the guest's signal state, its memory checks and writes)
/// and below it (`host`'s raw syscall and affinity mask, `status`'s
/// death by a signal, `strace`'s signal names).
const ALLOWED: &[(&str, &str, &str)] = &[];

/// A reference from one top-level module to another.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Site {
    file: String,
    line: usize,
}

/// The module graph: (from, to) → every place `from` names `to`.
type Graph = BTreeMap<(String, String), Vec<Site>>;

#[test]
fn top_level_modules_form_no_cycle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let graph = scan_crate(root);
    let failures = check(&graph, ALLOWED);
    if failures.is_empty() {
        println!("{}", layer_order(&graph));
        return;
    }
    panic!(
        "module layering broken ({} problem(s)):\n\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Issue 21 goal 1: the backend emits from the IR and the contract alone
/// (its tests also lift real code with the frontend); any other module it
/// names fails here, with where.
#[test]
fn the_backend_depends_only_on_the_ir_the_contract_and_types() {
    let graph = scan_crate(Path::new(env!("CARGO_MANIFEST_DIR")));
    let test_file = |f: &str| f.ends_with("tests.rs") || f.contains("/tests/");
    let mut wrong = Vec::new();
    for ((from, to), sites) in &graph {
        if from != "backend" {
            continue;
        }
        let fine = match to.as_str() {
            "ir" | "contract" | "types" => true,
            "frontend" => sites.iter().all(|s| test_file(&s.file)),
            _ => false,
        };
        if !fine {
            wrong.extend(
                sites
                    .iter()
                    .map(|s| format!("{}:{} names {to}", s.file, s.line)),
            );
        }
    }
    assert!(wrong.is_empty(), "the backend names:\n{}", wrong.join("\n"));
}

/// Issue 21 goal 5: path profiling lives whole in `src/paths`, and the
/// layers below reach it only through their hooks (the backend's block
/// emitter, `monitor::StreamHook`, `dispatch::PathProfiler`): only the
/// command line, which starts a `hotlift paths` run, names it.
#[test]
fn path_profiling_is_reached_only_through_hooks() {
    let graph = scan_crate(Path::new(env!("CARGO_MANIFEST_DIR")));
    let wrong: Vec<String> = graph
        .iter()
        .filter(|((from, to), _)| to == "paths" && from != "cli")
        .flat_map(|((_, _), sites)| {
            sites
                .iter()
                .map(|s| format!("{}:{} names paths", s.file, s.line))
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "path profiling named below the command line:\n{}",
        wrong.join("\n")
    );
}

/// The top-level modules `src/lib.rs` declares, in its order.
fn top_modules(root: &Path) -> Vec<String> {
    let lib = std::fs::read_to_string(root.join("src/lib.rs")).expect("src/lib.rs");
    let lib = strip(&lib);
    lib.lines()
        .filter_map(|l| {
            let l = l.trim();
            let l = l.strip_prefix("pub ").unwrap_or(l);
            let l = l.strip_prefix("pub(crate) ").unwrap_or(l);
            let name = l.strip_prefix("mod ")?.strip_suffix(';')?.trim();
            Some(name.to_string())
        })
        .collect()
}

/// Reads every file of every top-level module and builds the graph.
fn scan_crate(root: &Path) -> Graph {
    let tops = top_modules(root);
    assert!(tops.len() > 5, "found only {tops:?} in src/lib.rs");
    let known: BTreeSet<&str> = tops.iter().map(String::as_str).collect();
    let mut graph = Graph::new();
    for top in &tops {
        let src = root.join("src");
        let mut files = Vec::new();
        let single = src.join(format!("{top}.rs"));
        if single.exists() {
            files.push(single);
        }
        let dir = src.join(top);
        if dir.is_dir() {
            collect_rs(&dir, &mut files);
        }
        assert!(!files.is_empty(), "no file for module {top}");
        // Module depths of files included with `#[path]`, which sit where
        // their name does not say how deep they are.
        let mut path_depth: BTreeMap<PathBuf, usize> = BTreeMap::new();
        for f in &files {
            let text = std::fs::read_to_string(f).unwrap();
            for l in text.lines() {
                if let Some(rest) = l.trim().strip_prefix("#[path = \"") {
                    let name = rest.split('"').next().unwrap();
                    let target = f.parent().unwrap().join(name);
                    path_depth.insert(target, module_depth(&src, f) + 1);
                }
            }
        }
        for f in &files {
            let depth = path_depth
                .get(f)
                .copied()
                .unwrap_or_else(|| module_depth(&src, f));
            let text = std::fs::read_to_string(f).unwrap();
            let rel = f.strip_prefix(root).unwrap().display().to_string();
            let docs = doc_link_refs(&text)
                .into_iter()
                .filter(|(n, _)| known.contains(n.as_str()));
            for (name, line) in crate_root_refs(&text, depth).into_iter().chain(docs) {
                if name == *top || name == "self" {
                    continue;
                }
                assert!(
                    known.contains(name.as_str()),
                    "{rel}:{line}: `{name}` at the crate root is not a module of src/lib.rs \
                     (a parser gap in tests/layers.rs?)"
                );
                graph.entry((top.clone(), name)).or_default().push(Site {
                    file: rel.clone(),
                    line,
                });
            }
        }
    }
    graph
}

fn collect_rs(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect_rs(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// How many modules deep a file's own module is: `src/a.rs` and
/// `src/a/mod.rs` are 1, `src/a/b.rs` is 2.
fn module_depth(src: &Path, file: &Path) -> usize {
    let rel = file.strip_prefix(src).unwrap();
    let n = rel.components().count();
    if rel.file_name().unwrap() == "mod.rs" {
        n - 1
    } else {
        n
    }
}

/// `text` with comments and the insides of string and character literals
/// blanked to spaces, newlines kept, so byte offsets and lines still match.
fn strip(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            let end = b[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |p| i + p);
            blank(&mut out, i, end);
            i = end;
        } else if b[i..].starts_with(b"/*") {
            let (mut depth, mut j) = (1, i + 2);
            while j < b.len() && depth > 0 {
                if b[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if (b[i] == b'r' || b[i..].starts_with(b"br"))
            && (i == 0 || !ident(b[i - 1]))
            && raw_string_start(&b[i..]).is_some()
        {
            let (open, hashes) = raw_string_start(&b[i..]).unwrap();
            let mut close = vec![b'"'];
            close.extend(std::iter::repeat_n(b'#', hashes));
            let body = i + open;
            let end = b[body..]
                .windows(close.len())
                .position(|w| w == close.as_slice())
                .map_or(b.len(), |p| body + p + close.len());
            blank(&mut out, body, end - close.len().min(end - body));
            i = end;
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            blank(&mut out, i + 1, j.min(b.len()));
            i = j + 1;
        } else if b[i] == b'\'' {
            // A character literal ('x', '\n', '\u{..}', '"') or a lifetime ('a).
            if let Some(len) = char_literal_len(&b[i..]) {
                blank(&mut out, i + 1, i + len - 1);
                i += len;
            } else {
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    // Only ASCII bytes were written over whole characters' bytes, so the
    // result is still UTF-8.
    String::from_utf8(out).expect("blanking keeps UTF-8")
}

/// `r"`, `r#"`, `br##"` …: the length of the opening and its `#` count.
fn raw_string_start(b: &[u8]) -> Option<(usize, usize)> {
    let mut i = if b.starts_with(b"br") { 2 } else { 1 };
    let hashes = b[i..].iter().take_while(|&&c| c == b'#').count();
    i += hashes;
    (b.get(i) == Some(&b'"')).then_some((i + 1, hashes))
}

fn char_literal_len(b: &[u8]) -> Option<usize> {
    if b.get(1) == Some(&b'\\') {
        let end = b.iter().skip(2).position(|&c| c == b'\'')? + 2;
        return (end <= 12).then_some(end + 1);
    }
    // One character of up to 4 UTF-8 bytes, then the closing quote.
    let s = std::str::from_utf8(&b[1..b.len().min(6)])
        .ok()
        .or_else(|| {
            (2..6)
                .rev()
                .find_map(|n| std::str::from_utf8(&b[1..b.len().min(n)]).ok())
        })?;
    let c = s.chars().next()?;
    let n = c.len_utf8();
    (b.get(1 + n) == Some(&b'\'')).then_some(n + 2)
}

#[derive(Debug, PartialEq)]
enum Tok<'a> {
    Ident(&'a str),
    Punct(u8),
}

fn tokens(s: &str) -> Vec<(Tok<'_>, usize)> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'\n' {
            line += 1;
            i += 1;
        } else if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] >= 0x80) {
                i += 1;
            }
            let word = &s[start..i];
            let word = word.strip_prefix("r#").unwrap_or(word);
            out.push((Tok::Ident(word), line));
        } else {
            out.push((Tok::Punct(c), line));
            i += 1;
        }
    }
    out
}

/// Every crate-root name a file's paths start with, and its line: `b` for
/// `crate::b::…`, each first element of `crate::{b, c::d}`, and for a
/// `super::` chain that climbs exactly out of the file's module (its
/// `depth`, plus any inline `mod x { … }` around the chain) the name after
/// it. Names in the file's own top-level module come back too.
fn crate_root_refs(text: &str, depth: usize) -> Vec<(String, usize)> {
    let stripped = strip(text);
    let toks = tokens(&stripped);
    let mut out = Vec::new();
    let mut brace = 0usize;
    // Brace depths at which inline modules opened.
    let mut inline: Vec<usize> = Vec::new();
    let is = |i: usize, t: &Tok| toks.get(i).map(|x| &x.0) == Some(t);
    let colons = |i: usize| is(i, &Tok::Punct(b':')) && is(i + 1, &Tok::Punct(b':'));
    let mut i = 0;
    while i < toks.len() {
        let (tok, line) = (&toks[i].0, toks[i].1);
        // A path starts here unless `::`, `$` or `.` comes right before.
        let at_start = i == 0
            || !(matches!(toks[i - 1].0, Tok::Punct(b'$') | Tok::Punct(b'.'))
                || (i >= 2
                    && matches!(toks[i - 1].0, Tok::Punct(b':'))
                    && matches!(toks[i - 2].0, Tok::Punct(b':'))));
        match tok {
            Tok::Punct(b'{') => brace += 1,
            Tok::Punct(b'}') => {
                brace = brace.saturating_sub(1);
                if inline.last() == Some(&brace) {
                    inline.pop();
                }
            }
            Tok::Ident("mod")
                if matches!(toks.get(i + 1), Some((Tok::Ident(_), _)))
                    && is(i + 2, &Tok::Punct(b'{')) =>
            {
                inline.push(brace);
                brace += 1;
                i += 3;
                continue;
            }
            Tok::Ident("crate") if at_start && colons(i + 1) => {
                let (names, next) = names_at(&toks, i + 3);
                out.extend(names.into_iter().map(|n| (n, line)));
                i = next;
                continue;
            }
            Tok::Ident("super") if at_start && colons(i + 1) => {
                let mut n = 0;
                let mut j = i;
                while is(j, &Tok::Ident("super")) && colons(j + 1) {
                    n += 1;
                    j += 3;
                }
                let here = depth + inline.len();
                assert!(
                    n <= here,
                    "line {line}: {n} `super`s climb above the crate root"
                );
                if n == here {
                    let (names, next) = names_at(&toks, j);
                    out.extend(names.into_iter().map(|n| (n, line)));
                    i = next;
                } else {
                    i = j;
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The crate-root names of the `crate::b…` paths in `text`'s doc comments
/// (lines that start with `///` or `//!`), with their lines.
fn doc_link_refs(text: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for (i, l) in text.lines().enumerate() {
        let l = l.trim_start();
        let Some(doc) = l.strip_prefix("///").or_else(|| l.strip_prefix("//!")) else {
            continue;
        };
        for (at, _) in doc.match_indices("crate::") {
            // Not the end of a longer name (`$crate::`, `my_crate::`).
            let before = doc[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
                continue;
            }
            let name: String = doc[at + 7..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.push((name, i + 1));
            }
        }
    }
    out
}

/// The names a path continues with at token `i`: one identifier, or the
/// first identifier of each element of a `{…}` group. Returns the names and
/// the token after what was read.
fn names_at(toks: &[(Tok<'_>, usize)], i: usize) -> (Vec<String>, usize) {
    match toks.get(i).map(|t| &t.0) {
        Some(Tok::Ident(name)) => (vec![name.to_string()], i + 1),
        Some(Tok::Punct(b'{')) => {
            let mut names = Vec::new();
            let mut depth = 0;
            let mut expect = true;
            let mut j = i + 1;
            while let Some((t, _)) = toks.get(j) {
                match t {
                    Tok::Punct(b'{') => depth += 1,
                    Tok::Punct(b'}') if depth == 0 => break,
                    Tok::Punct(b'}') => depth -= 1,
                    Tok::Punct(b',') if depth == 0 => expect = true,
                    Tok::Ident(name) if expect => {
                        names.push(name.to_string());
                        expect = false;
                    }
                    _ => {}
                }
                j += 1;
            }
            (names, j + 1)
        }
        _ => (Vec::new(), i),
    }
}

/// Strongly connected components (Tarjan), each sorted, in reverse
/// topological order.
/// Each module's component (its index in `comps`).
fn component_of(comps: &[Vec<String>]) -> BTreeMap<&str, usize> {
    comps
        .iter()
        .enumerate()
        .flat_map(|(i, c)| c.iter().map(move |m| (m.as_str(), i)))
        .collect()
}

fn components(graph: &Graph) -> Vec<Vec<String>> {
    let mut nodes: BTreeSet<&str> = BTreeSet::new();
    let mut succ: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in graph.keys() {
        nodes.insert(a);
        nodes.insert(b);
        succ.entry(a).or_default().push(b);
    }
    struct T<'a> {
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(v: &'a str, succ: &BTreeMap<&'a str, Vec<&'a str>>, t: &mut T<'a>) {
        let n = t.index.len();
        t.index.insert(v, n);
        t.low.insert(v, n);
        t.stack.push(v);
        t.on.insert(v);
        for &w in succ.get(v).map(Vec::as_slice).unwrap_or(&[]) {
            if !t.index.contains_key(w) {
                visit(w, succ, t);
                let lw = t.low[w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if t.on.contains(w) {
                let iw = t.index[w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = Vec::new();
            loop {
                let w = t.stack.pop().unwrap();
                t.on.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            comp.sort();
            t.out.push(comp);
        }
    }
    let mut t = T {
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in nodes {
        if !t.index.contains_key(v) {
            visit(v, &succ, &mut t);
        }
    }
    t.out
}

/// The problems with `graph` under `allowed` (I1, I2), each as text.
fn check(graph: &Graph, allowed: &[(&str, &str, &str)]) -> Vec<String> {
    let comps = components(graph);
    let comp_of = component_of(&comps);
    let in_cycle = |a: &str, b: &str| comp_of.get(a).is_some_and(|c| comp_of.get(b) == Some(c));
    let listed: BTreeSet<(&str, &str)> = allowed.iter().map(|&(a, b, _)| (a, b)).collect();
    let mut failures = Vec::new();
    for (a, b) in graph.keys() {
        if in_cycle(a, b) && !listed.contains(&(a.as_str(), b.as_str())) {
            failures.push(describe_cycle(graph, a, b, &comps[comp_of[a.as_str()]]));
        }
    }
    for &(a, b, _) in allowed {
        if !graph.contains_key(&(a.to_string(), b.to_string())) {
            failures.push(format!(
                "ALLOWED lists {a} -> {b}, which no longer exists: remove its line\n"
            ));
        } else if !in_cycle(a, b) {
            failures.push(format!(
                "ALLOWED lists {a} -> {b}, which is no longer in a cycle: remove its line\n"
            ));
        }
    }
    failures
}

/// A cycle through `a -> b`: the edge, then the shortest way back from `b`
/// to `a` inside their component, with where each edge is made.
fn describe_cycle(graph: &Graph, a: &str, b: &str, comp: &[String]) -> String {
    let inside: BTreeSet<&str> = comp.iter().map(String::as_str).collect();
    let mut prev: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = VecDeque::from([b]);
    let mut seen = BTreeSet::from([b]);
    while let Some(v) = queue.pop_front() {
        if v == a {
            break;
        }
        for (x, y) in graph.keys() {
            if x == v && inside.contains(y.as_str()) && seen.insert(y) {
                prev.insert(y, x);
                queue.push_back(y);
            }
        }
    }
    let mut path = vec![a];
    let mut v = a;
    while v != b {
        v = prev[v];
        path.push(v);
    }
    path.push(a);
    path.reverse();
    path.dedup();
    // path is a, b, …, a.
    let mut out = format!(
        "edge {a} -> {b} closes a cycle (not in ALLOWED): {}\n  component: {}\n",
        path.join(" -> "),
        comp.join(", ")
    );
    for w in path.windows(2) {
        let sites = &graph[&(w[0].to_string(), w[1].to_string())];
        out += &format!("  {} -> {}:\n", w[0], w[1]);
        for s in sites {
            out += &format!("    {}:{}\n", s.file, s.line);
        }
    }
    out
}

/// The modules from the bottom layer up (a module's layer is one above the
/// highest it uses; a cycle shares one layer).
fn layer_order(graph: &Graph) -> String {
    let comps = components(graph);
    let comp_of = component_of(&comps);
    // Tarjan's order is reverse topological: dependencies come first.
    let mut level = vec![0usize; comps.len()];
    for (i, c) in comps.iter().enumerate() {
        for ((x, y), _) in graph.iter() {
            if c.contains(x) && comp_of[y.as_str()] != i {
                level[i] = level[i].max(level[comp_of[y.as_str()]] + 1);
            }
        }
    }
    let mut by_level: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for (i, c) in comps.iter().enumerate() {
        let name = if c.len() > 1 {
            format!("{{{}}}", c.join(" "))
        } else {
            c[0].clone()
        };
        by_level.entry(level[i]).or_default().push(name);
    }
    by_level
        .iter()
        .map(|(l, ms)| format!("layer {l}: {}", ms.join(" ")))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn parser_finds_crate_and_super_paths() {
    let text = r#"
//! [`crate::doc`] is a comment.
use crate::a::X;
use crate::{b::Y, c, d::{e, f}};
fn g() { let s = "crate::string"; let c = '"'; crate::h::call(); x::crate_y(); }
pub(crate) fn k() { $crate::m::n(); }
mod tests {
    use super::*;
    use super::super::i;
}
use super::j;
"#;
    let names: Vec<(String, usize)> = crate_root_refs(text, 1);
    let got: Vec<(&str, usize)> = names.iter().map(|(n, l)| (n.as_str(), *l)).collect();
    assert_eq!(
        got,
        [
            ("a", 3),
            ("b", 4),
            ("c", 4),
            ("d", 4),
            ("h", 5),
            ("i", 9),
            ("j", 11)
        ]
    );
    // Doc comments: links and paths in them, not other comments.
    let docs = "//! See [`crate::doc`].\n/// [Vm](crate::dispatch::Vm), $crate::no, my_crate::no\n// crate::plain\nfn f() {} // crate::trailing\n";
    assert_eq!(
        doc_link_refs(docs),
        [("doc".to_string(), 1), ("dispatch".to_string(), 2)]
    );
    // From src/x/y.rs (depth 2) one `super` stays inside x.
    assert!(crate_root_refs("use super::z;", 2).is_empty());
    assert_eq!(crate_root_refs("use super::super::z;", 2)[0].0, "z");
}

#[test]
fn check_reports_new_cycles_and_stale_allowances() {
    let site = |f: &str| Site {
        file: f.into(),
        line: 1,
    };
    let mut g = Graph::new();
    g.insert(("low".into(), "leaf".into()), vec![site("src/low.rs")]);
    g.insert(("high".into(), "low".into()), vec![site("src/high.rs")]);
    assert!(check(&g, &[]).is_empty());
    // An upward edge closes a cycle; the message names both edges.
    g.insert(("leaf".into(), "high".into()), vec![site("src/leaf/x.rs")]);
    let f = check(&g, &[]);
    assert_eq!(f.len(), 3, "{f:?}");
    assert!(f
        .iter()
        .any(|m| m.contains("leaf -> high") && m.contains("src/leaf/x.rs:1")));
    // Allowed, it passes; once gone, the allowance fails (I2).
    let allowed = [
        ("leaf", "high", "test"),
        ("high", "low", "test"),
        ("low", "leaf", "test"),
    ];
    assert!(check(&g, &allowed).is_empty());
    g.remove(&("leaf".into(), "high".into()));
    let f = check(&g, &allowed);
    assert_eq!(f.len(), 3, "{f:?}");
    assert!(f[0].contains("leaf -> high, which no longer exists"));
    assert!(f[1].contains("no longer in a cycle"));
}

/// One module-file convention (issue 21, goal 6): a module with modules of
/// its own is a folder with `mod.rs` (a binary's, `main.rs`), never a file
/// beside a folder of the same name, and no module is found by a
/// `#[path]` attribute.
#[test]
fn modules_are_files_or_folders_with_mod_rs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    collect_rs(&root.join("src"), &mut files);
    let mut bad = Vec::new();
    for f in &files {
        if f.with_extension("").is_dir() {
            bad.push(format!("{}: beside a folder of its name", f.display()));
        }
        let text = std::fs::read_to_string(f).unwrap();
        if strip(&text).contains("#[path") {
            bad.push(format!("{}: a #[path] attribute", f.display()));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Issue 21, goal 6: no source file over 800 lines, the library's and
/// the tests' (a file that grows past it is split by what it holds).
#[test]
fn no_source_file_is_over_800_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in ["src", "tests"] {
        collect_rs(&root.join(dir), &mut files);
    }
    assert!(files.len() > 100, "{} files found", files.len());
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let n = std::fs::read_to_string(f).unwrap().lines().count();
            (n > 800).then(|| format!("{}: {n} lines", f.display()))
        })
        .collect();
    assert!(long.is_empty(), "{}", long.join("\n"));
}
