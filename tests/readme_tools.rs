//! The option tables of docs/USAGE.md for `compare`, `diff`, `export`, `report`,
//! `paths` and the `store` subcommands are generated from their clap
//! declarations (src/cli/); this test keeps them equal. `HOTLIFT_BLESS=1
//! cargo test --test readme_tools` rewrites them. docs/PROFILE.md's field
//! table and a profile hotlift writes name the same fields.

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
