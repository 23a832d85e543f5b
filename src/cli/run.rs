//! `hotlift run`: load the program and run it under translation.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;

use super::{EXIT_HOTLIFT_FAILED, EXIT_NOT_FOUND, EXIT_NOT_RUNNABLE};
use crate::dispatch::Vm;
use crate::loader;
use crate::options::RunOptions;

/// Find PROGRAM as execvp would: a name without '/' is searched in PATH.
fn resolve(program: &OsString) -> PathBuf {
    if program.as_bytes().contains(&b'/') {
        return PathBuf::from(program);
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    for dir in std::env::split_paths(&path) {
        let cand = dir.join(program);
        if cand.is_file() {
            return cand;
        }
    }
    PathBuf::from(program)
}

/// Run the program; `summary` prints the profile summary at the end.
pub fn main(mut opts: RunOptions, program: Vec<OsString>, summary: bool) -> i32 {
    if let Some(log) = &opts.strace_file {
        match std::fs::File::create(log) {
            Ok(f) => crate::syscall::strace::set_log_file(f),
            Err(e) => {
                eprintln!(
                    "hotlift: cannot create the strace log {}: {e}",
                    log.display()
                );
                return EXIT_HOTLIFT_FAILED;
            }
        }
        opts.strace = true;
    }
    let path = resolve(&program[0]);
    let shown = path.display();
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("hotlift: {shown}: {e}");
            return if e.kind() == std::io::ErrorKind::NotFound {
                EXIT_NOT_FOUND
            } else {
                EXIT_NOT_RUNNABLE
            };
        }
    };
    let plan = match loader::plan(&bytes) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("hotlift: {shown}: {e}");
            return e.exit_code();
        }
    };
    // A dynamically linked program: its interpreter (ld.so) is loaded too.
    let interp = match plan.interp.as_deref().map(loader::read_interp).transpose() {
        Ok(i) => i,
        Err(e) => {
            eprintln!("hotlift: {shown}: {e}");
            return e.exit_code();
        }
    };
    let argv: Vec<Vec<u8>> = program.iter().map(|a| a.as_bytes().to_vec()).collect();
    let envp: Vec<Vec<u8>> = std::env::vars_os()
        .map(|(k, v)| {
            let mut kv = k.into_vec();
            kv.push(b'=');
            kv.extend_from_slice(v.as_bytes());
            kv
        })
        .collect();
    let execfn = path.as_os_str().as_bytes().to_vec();
    match Vm::start(
        opts,
        &bytes,
        &plan,
        interp.as_ref(),
        &argv,
        &envp,
        &execfn,
        path.clone(),
    ) {
        Ok(vm) => {
            drop(bytes);
            drop(interp);
            vm.proc
                .prof
                .print_summary
                .store(summary, std::sync::atomic::Ordering::Release);
            vm.run()
        }
        Err(e) => {
            eprintln!("hotlift: {shown}: {e}");
            match e {
                crate::dispatch::VmError::Load(l) => l.exit_code(),
                _ => EXIT_HOTLIFT_FAILED,
            }
        }
    }
}
