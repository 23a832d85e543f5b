//! The option tables of docs/USAGE.md for `compare`, `diff`, `export`, `report`,
//! `paths` and the `store` subcommands are generated from their clap
//! declarations (src/cli/); this test keeps them equal. `HOTLIFT_BLESS=1
//! cargo test --test readme_tools` rewrites them.

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
