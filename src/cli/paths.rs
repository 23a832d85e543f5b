//! `hotlift paths`: profile the paths of one guest function (src/paths).

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;

use super::EXIT_HOTLIFT_FAILED;
use crate::options::RunOptions;
use crate::paths::collect::Shared;
use crate::paths::engine::PathsState;
use crate::paths::{interest, Format, FunctionSpec, Method, PathsConfig};

#[derive(clap::Args, Debug)]
pub struct PathsArgs {
    /// The function whose paths are profiled: a symbol of the program or of a library it loads, or its address (0x...)
    #[arg(long, value_name = "FUNCTION")]
    pub function: String,
    /// FUNCTION may be in a library the program loads itself (dlopen): look for it while the program runs rather than stop before it when neither the program nor a library it links has it
    #[arg(long)]
    pub dlopened: bool,
    /// Paths of interest, one per line: the addresses of its blocks in order (0x..., or FUNCTION+0x...)
    #[arg(long, value_name = "FILE")]
    pub interest: Option<PathBuf>,
    /// How paths not of interest stop costing (none: every path is numbered; psp0: T1, psp1: T2, psp2: T3, psp3: T2 and T3)
    #[arg(long, value_enum, default_value = "none", value_name = "METHOD")]
    pub method: Method,
    /// Also compute the paths from the full block stream (a brute-force reference, independent of the probes) and compare
    #[arg(long)]
    pub reference: bool,
    /// Report format
    #[arg(long, value_enum, default_value = "text", value_name = "FORMAT")]
    pub format: Format,
    /// Write the report to FILE (default: standard error)
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    #[command(flatten)]
    pub opts: RunOptions,
    /// The program and its arguments (after `--`)
    #[arg(required = true, num_args = 1.., trailing_var_arg = true, value_name = "PROGRAM [ARGS...]")]
    pub program: Vec<OsString>,
}

pub fn main(args: PathsArgs) -> i32 {
    match config(&args) {
        Ok(c) => {
            let shared = Arc::new(Shared {
                reference: c.reference,
                ..Default::default()
            });
            let paths = Arc::new(PathsState::new(Arc::new(c), shared));
            super::run::main_with(args.opts, args.program, false, Some(paths))
        }
        Err(e) => {
            crate::host::say!("hotlift paths: {e:#}");
            EXIT_HOTLIFT_FAILED
        }
    }
}

fn config(args: &PathsArgs) -> anyhow::Result<PathsConfig> {
    if !args.opts.monitor() {
        anyhow::bail!("path profiling needs the monitor (drop --no-monitor and --count-inline)");
    }
    if let Some(out) = &args.output {
        super::run::profile_writable(out).map_err(|why| {
            anyhow::anyhow!("cannot write the report to {}: {why}", out.display())
        })?;
    }
    let function = FunctionSpec::parse(&args.function);
    if let FunctionSpec::Name(name) = &function {
        look_for(&super::run::resolve(&args.program[0]), name, args.dlopened)?;
    }
    let interest = match &args.interest {
        Some(path) => {
            let text = crate::profile::read::read_input(path)
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
            let text = String::from_utf8(text)
                .map_err(|_| anyhow::anyhow!("{}: not UTF-8 text", path.display()))?;
            let name = match &function {
                FunctionSpec::Name(n) => Some(n.as_str()),
                FunctionSpec::Addr(_) => None,
            };
            let paths = interest::parse(&path.display().to_string(), &text, name)?;
            if paths.is_empty() {
                anyhow::bail!("{}: no path of interest in it", path.display());
            }
            paths
        }
        None => Vec::new(),
    };
    if args.method != Method::None && interest.is_empty() {
        anyhow::bail!(
            "--method {} needs paths of interest (--interest FILE)",
            args.method.name()
        );
    }
    Ok(PathsConfig {
        function,
        interest,
        method: args.method,
        reference: args.reference,
        format: args.format,
        // Anchored now: the guest may change its directory (run.rs).
        output: args.output.as_deref().map(super::run::anchored),
    })
}

/// Before anything runs: is function `name` (or one clone of it,
/// `name.constprop.0` and the like) in `program` or a library it links
/// (`DT_NEEDED`, found in its run paths, `LD_LIBRARY_PATH` and the system
/// folders)? If not, an error naming close matches, unless the user said
/// a library the program loads itself may have it (`dlopened`): then the
/// run looks in every library it maps.
fn look_for(program: &std::path::Path, name: &str, dlopened: bool) -> anyhow::Result<()> {
    use crate::paths::resolve;
    let Ok(bytes) = std::fs::read(program) else {
        // The run says what is wrong with the program.
        return Ok(());
    };
    let Ok(elf) = goblin::elf::Elf::parse(&bytes) else {
        return Ok(());
    };
    let dynamic = elf.interpreter.is_some();
    let mut names: Vec<String> = Vec::new();
    let mut files = vec![program.to_path_buf()];
    let mut i = 0;
    while i < files.len() && i < 256 {
        let Ok(b) = std::fs::read(&files[i]) else {
            i += 1;
            continue;
        };
        let funcs = resolve::image_functions(&b, 0, None);
        if resolve::by_name_in(&funcs, name).is_some() {
            return Ok(());
        }
        names.extend(funcs.into_iter().map(|f| f.2));
        if let Ok(e) = goblin::elf::Elf::parse(&b) {
            for lib in needed_files(&files[i], &e) {
                if !files.contains(&lib) {
                    files.push(lib);
                }
            }
        }
        i += 1;
    }
    let hint = resolve::close_matches(name, &mut names);
    let searched = format!(
        "{} or the {} libraries it links",
        program.display(),
        files.len() - 1
    );
    if !dynamic {
        anyhow::bail!("no function `{name}` in {}{hint}", program.display());
    }
    if !dlopened {
        anyhow::bail!(
            "no function `{name}` in {searched}{hint}; if a library the program loads with dlopen has it, add --dlopened"
        );
    }
    Ok(())
}

/// The files of the libraries `elf` (the file at `path`) names in
/// `DT_NEEDED`, where the dynamic linker would find them first.
fn needed_files(path: &std::path::Path, elf: &goblin::elf::Elf) -> Vec<PathBuf> {
    let origin = path
        .parent()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut dirs: Vec<PathBuf> = Vec::new();
    for list in elf.runpaths.iter().chain(&elf.rpaths) {
        for d in list.split(':') {
            dirs.push(PathBuf::from(
                d.replace("$ORIGIN", &origin).replace("${ORIGIN}", &origin),
            ));
        }
    }
    if let Some(ld) = std::env::var_os("LD_LIBRARY_PATH") {
        dirs.extend(std::env::split_paths(&ld));
    }
    for d in [
        "/lib/x86_64-linux-gnu",
        "/usr/lib/x86_64-linux-gnu",
        "/lib64",
        "/usr/lib64",
        "/lib",
        "/usr/lib",
        "/usr/local/lib",
    ] {
        dirs.push(PathBuf::from(d));
    }
    elf.libraries
        .iter()
        .filter_map(|lib| {
            if lib.contains('/') {
                return Some(PathBuf::from(lib));
            }
            dirs.iter().map(|d| d.join(lib)).find(|p| p.is_file())
        })
        .collect()
}
