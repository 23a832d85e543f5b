//! The README's option table is generated from `src/options.rs`; this test
//! keeps them equal. `HOTLIFT_BLESS=1 cargo test --test readme` rewrites it.

const BEGIN: &str =
    "<!-- options:begin (generated; HOTLIFT_BLESS=1 cargo test --test readme) -->\n";
const END: &str = "<!-- options:end -->";

#[test]
fn readme_option_table_matches_help() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/README.md");
    let readme = std::fs::read_to_string(path).expect("README.md");
    let table = hotlift::cli::run_options_markdown();
    let (Some(b), Some(e)) = (readme.find(BEGIN), readme.find(END)) else {
        panic!("README.md lacks the options markers");
    };
    let current = &readme[b + BEGIN.len()..e];
    if current != table {
        if std::env::var_os("HOTLIFT_BLESS").is_some() {
            let new = format!("{}{}{}{}", &readme[..b], BEGIN, table, &readme[e..]);
            std::fs::write(path, new).expect("write README.md");
            return;
        }
        panic!("README option table is stale; run HOTLIFT_BLESS=1 cargo test --test readme\n--- README\n{current}\n--- --help\n{table}");
    }
}

#[test]
fn help_lists_every_option() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hotlift"))
        .args(["run", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for line in hotlift::cli::run_options_markdown().lines().skip(2) {
        let long = line.split('`').nth(1).unwrap();
        let long = if long.starts_with("--") {
            long
        } else {
            line.split('`').nth(3).unwrap()
        };
        let long = long.split(' ').next().unwrap();
        assert!(help.contains(long), "{long} missing from --help");
    }
}

#[test]
fn bad_input_exit_codes() {
    let bin = env!("CARGO_BIN_EXE_hotlift");
    let run = |args: &[&str]| std::process::Command::new(bin).args(args).output().unwrap();
    let missing = run(&["run", "--", "/nonexistent/prog"]);
    assert_eq!(missing.status.code(), Some(127));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent/prog"));
    let not_elf = run(&[
        "run",
        "--",
        concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"),
    ]);
    assert_eq!(
        not_elf.status.code(),
        Some(126),
        "{}",
        String::from_utf8_lossy(&not_elf.stderr)
    );
    let bad_opt = run(&["run", "--max-block-insns", "0", "--", "/bin/true"]);
    assert_eq!(bad_opt.status.code(), Some(125));
    let dynamic = run(&["run", "--", "/bin/true"]);
    assert_eq!(
        dynamic.status.code(),
        Some(126),
        "{}",
        String::from_utf8_lossy(&dynamic.stderr)
    );
    assert!(String::from_utf8_lossy(&dynamic.stderr).contains("dynamic"));
    for out in [missing, not_elf, dynamic] {
        assert_eq!(
            String::from_utf8_lossy(&out.stderr).lines().count(),
            1,
            "one-line error: {:?}",
            out
        );
    }
}
