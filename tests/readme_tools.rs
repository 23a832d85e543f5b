//! The option tables of docs/USAGE.md for `compare`, `diff`, `export`, `report`,
//! `paths` and the `store` subcommands are generated from their clap
//! declarations (src/cli/); this test keeps them equal. `HOTLIFT_BLESS=1
//! cargo test --test readme_tools` rewrites them. docs/PROFILE.md's field
//! table and a profile hotlift writes name the same fields. Every file a
//! doc or a comment names exists.

use std::collections::BTreeSet;
use std::path::Path;

fn check(sub: &str) {
    check_table(sub, hotlift::cli::options_markdown(sub));
}

fn check_table(sub: &str, table: String) {
    let begin = format!("<!-- {sub}-options:begin (generated; HOTLIFT_BLESS=1 cargo test --test readme_tools) -->\n");
    let end = format!("<!-- {sub}-options:end -->");
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/USAGE.md");
    let readme = std::fs::read_to_string(path).expect("docs/USAGE.md");
    let (Some(b), Some(e)) = (readme.find(&begin), readme.find(&end)) else {
        panic!("docs/USAGE.md lacks the {sub} options markers");
    };
    let current = &readme[b + begin.len()..e];
    if current != table {
        if std::env::var_os("HOTLIFT_BLESS").is_some() {
            let new = format!("{}{}{}{}", &readme[..b], begin, table, &readme[e..]);
            std::fs::write(path, new).expect("write docs/USAGE.md");
            return;
        }
        panic!("docs/USAGE.md {sub} option table is stale; run HOTLIFT_BLESS=1 cargo test --test readme_tools\n--- docs/USAGE.md\n{current}\n--- --help\n{table}");
    }
}

/// One test, so blessing never races with itself.
#[test]
fn usage_tool_option_tables_match_help() {
    for sub in [
        "compare",
        "diff",
        "export",
        "report",
        "store show",
        "store prune",
        "store export",
    ] {
        check(sub);
    }
    check_table("paths", hotlift::cli::paths_options_markdown());
}

/// docs/PROFILE.md's field table, as (names in its first column, the
/// whole row).
fn profile_rows() -> Vec<(Vec<String>, String)> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/PROFILE.md");
    let doc = std::fs::read_to_string(path).expect("docs/PROFILE.md");
    doc.lines()
        .filter(|l| l.starts_with("| `"))
        .map(|l| {
            let first = l.split('|').nth(1).unwrap_or("");
            let names = first
                .split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_string)
                .collect();
            (names, l.to_string())
        })
        .collect()
}

/// The profile's documentation and the profile agree (issue 21, goal 2):
/// every field of a profile, and every field of each of its sections, is
/// in docs/PROFILE.md's table; every field the table names is in the
/// profile, or its row says when it is absent.
#[test]
fn profile_md_documents_every_field_of_a_profile() {
    let dir = std::env::temp_dir().join(format!("hotlift-profile-md-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("p.json");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_hotlift"))
        .args(["run", "--no-cache", "--profile"])
        .arg(&out)
        .args(["--", "/bin/true"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    let p: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let rows = profile_rows();
    let head = |n: &str| n.split(['.', '[']).next().unwrap_or("").to_string();
    let rows_of = |k: &str| -> Vec<&String> {
        rows.iter()
            .filter(|(names, _)| names.iter().any(|n| head(n) == k))
            .map(|(_, r)| r)
            .collect()
    };
    // `options`: the `run` options, "the same names as the CLI, with _".
    let help = std::process::Command::new(env!("CARGO_BIN_EXE_hotlift"))
        .args(["run", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout).into_owned();
    let mut missing = Vec::new();
    for (k, v) in p.as_object().unwrap() {
        let rs = rows_of(k);
        if rs.is_empty() {
            missing.push(k.clone());
            continue;
        }
        let Some(section) = v.as_object() else {
            continue;
        };
        for j in section.keys() {
            let dotted = format!("{k}.{j}");
            let named = rows
                .iter()
                .any(|(names, _)| names.iter().any(|n| n.trim_end_matches("[]") == dotted));
            let in_row = rs
                .iter()
                .any(|r| r.contains(&format!("`{j}`")) || r.contains(&format!("\"{j}\"")));
            let flag = format!("--{}", j.replace('_', "-"));
            let option = k == "options"
                && help
                    .lines()
                    .any(|l| l.split([' ', ',', '=']).any(|w| w == flag));
            if !named && !in_row && !option {
                missing.push(dotted);
            }
        }
    }
    assert!(missing.is_empty(), "not in docs/PROFILE.md: {missing:?}");
    for (names, row) in &rows {
        let k = head(&names[0]);
        let optional = ["only", "absent", "Absent"].iter().any(|w| row.contains(w));
        assert!(
            p.get(&k).is_some() || optional,
            "docs/PROFILE.md names `{}`, which a profile does not have",
            names[0]
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Files comments and docs name that the repository does not hold: the
/// shared design documents beside it, the kernel's sources, and examples
/// of a user's own files. (A name whose stem is in capitals, `NAME.c`, is
/// a placeholder.)
const NAMED_ELSEWHERE: &[&str] = &[
    "SEEDS.md",
    "STYLE.md",
    "shared/FACTS.md",
    "fs/exec.c",
    "fs/binfmt_elf.c",
    "hotlift/Cargo.toml",
    "demo.c",
    "main.c",
    "loop.c",
    "name.c",
    "m.c",
    "coverage.py",
];

/// Every file a doc (`*.md`) or a comment in `src/` or `tests/` names
/// exists: as a path from the repository's root or `src/`, from the
/// naming file's folder or one above it, or as the end of a path in the
/// repository (`tables/units.rs` for `src/monitor/tables/units.rs`). A
/// file moved or split (`backend/paths.rs`, now a folder) leaves no
/// reference behind (issue 21, goal 8).
#[test]
fn every_file_a_doc_or_a_comment_names_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut all = Vec::new();
    walk(root, root, &mut all);
    let known: BTreeSet<String> = all
        .iter()
        .flat_map(|p| {
            let mut v = vec![p.clone()];
            let mut d = Path::new(p).parent();
            while let Some(x) = d.filter(|x| !x.as_os_str().is_empty()) {
                v.push(x.to_string_lossy().into_owned());
                d = x.parent();
            }
            v
        })
        .collect();
    let exists = |name: &str, from: &str| -> bool {
        let name = name.trim_end_matches('/');
        if known.contains(name) || known.contains(&format!("src/{name}")) {
            return true;
        }
        let mut dir = Path::new(from).parent();
        while let Some(d) = dir {
            let p = normalize(&d.join(name));
            if known.contains(&p) {
                return true;
            }
            dir = d.parent();
        }
        let tail = format!("/{name}");
        known.iter().any(|k| k.ends_with(&tail))
    };
    let mut stale = Vec::new();
    for f in &all {
        let (md, rs) = (f.ends_with(".md"), f.ends_with(".rs"));
        let ours = f.starts_with("src/") || f.starts_with("tests/");
        // This file and layers.rs hold made-up names in their own tests.
        if !(md || rs && ours) || matches!(f.as_str(), "tests/readme_tools.rs" | "tests/layers.rs")
        {
            continue;
        }
        let text = std::fs::read_to_string(root.join(f)).unwrap_or_default();
        for (i, line) in text.lines().enumerate() {
            let part = if md {
                line
            } else {
                match line.find("//") {
                    Some(k) => &line[k..],
                    None => continue,
                }
            };
            for name in file_names(part) {
                if !NAMED_ELSEWHERE.contains(&name) && !exists(name, f) {
                    stale.push(format!("{f}:{}: {name}", i + 1));
                }
            }
        }
    }
    assert!(
        stale.is_empty(),
        "files named that do not exist:\n{}",
        stale.join("\n")
    );
}

/// Every path in the repository (`target/` and `.git/` aside), from the
/// root.
fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        if name == "target" || name == ".git" || name == "node_modules" {
            continue;
        }
        let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
        if p.is_dir() {
            out.push(rel);
            walk(root, &p, out);
        } else {
            out.push(rel);
        }
    }
}

/// `a/b/../c` as `a/c`.
fn normalize(p: &Path) -> String {
    let mut parts: Vec<String> = Vec::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                parts.pop();
            }
            std::path::Component::CurDir => {}
            c => parts.push(c.as_os_str().to_string_lossy().into_owned()),
        }
    }
    parts.join("/")
}

/// The file names in `text`: words of path characters ending in an
/// extension of the repository's sources and docs, not a URL, not outside
/// the repository (`../`), not a placeholder (`NAME.c`).
fn file_names(text: &str) -> Vec<&str> {
    const EXT: &[&str] = &[".rs", ".md", ".S", ".c", ".py", ".sh", ".toml", ".list"];
    let path_char = |c: char| c.is_ascii_alphanumeric() || "_./-".contains(c);
    text.split(|c: char| !path_char(c))
        .map(|w| w.trim_end_matches('.'))
        .filter(|w| EXT.iter().any(|e| w.ends_with(e) && w.len() > e.len()))
        .filter(|w| !w.starts_with('.') && !w.starts_with('/') && !w.contains("//"))
        .filter(|w| {
            let file = w.rsplit('/').next().unwrap_or(w);
            let stem = file.split('.').next().unwrap_or(file);
            !stem.chars().all(|c| c.is_ascii_uppercase() || c == '_')
        })
        .collect()
}

#[test]
fn file_names_are_found_in_prose() {
    assert_eq!(
        file_names("see backend/paths.rs I3, (tables.rs) and `src/a.rs`."),
        ["backend/paths.rs", "tables.rs", "src/a.rs"]
    );
    assert!(file_names("https://x.org/a.rs ../shared/SEEDS.md c/NAME.c 1.5 e.g.").is_empty());
}
