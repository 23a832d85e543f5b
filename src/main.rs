/// The system allocator, given address space from hotlift's reserve when
/// the guest took the rest (anon.rs R1).
#[global_allocator]
static ALLOCATOR: hotlift::anon::Allocator = hotlift::anon::Allocator;

/// Run before the standard library's start-up (the executable's
/// `.init_array`): a SIGSEGV and SIGBUS handler that is not the default
/// keeps the standard library from installing its stack-overflow
/// reporter, and with it from mapping an alternate signal stack and its
/// guard page for every thread it starts. hotlift's threads have their
/// own (signal/mod.rs); the standard library's were two more kernel
/// mappings a guest thread, and a thread whose guard page could not be
/// mapped (a guest with 5,000 threads near `vm.max_map_count`) panicked.
/// Until hotlift installs its handlers, a fault resets the default and
/// happens again, as without a handler.
#[used]
#[link_section = ".init_array"]
static BEFORE_STD: extern "C" fn() = before_std;

extern "C" fn before_std() {
    // Before the standard library opens /dev/null on closed ones.
    hotlift::host::note_closed_std_fds();
    extern "C" fn again(_: libc::c_int) {}
    // SAFETY: installs a handler for two signals, before any thread runs.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = again as *const () as usize;
        sa.sa_flags = libc::SA_RESETHAND | libc::SA_NODEFER;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGSEGV, &sa, std::ptr::null_mut());
        libc::sigaction(libc::SIGBUS, &sa, std::ptr::null_mut());
    }
}

fn main() {
    // A panic on any thread ends hotlift at once, with its message and
    // SIGABRT, as `panic = "abort"` did: nothing unwinds through the
    // dispatcher, the signal handler or the monitor. The release profile
    // itself unwinds so that `cargo test --release` (whose harness needs
    // unwinding) shares the dependencies `cargo build --release` built.
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        report(info);
        std::process::abort();
    }));
    // Before any thread exists (host.rs H2).
    hotlift::host::grow_fd_table();
    hotlift::anon::tune_malloc();
    hotlift::anon::reserve_address_space();
    hotlift::arena::reserve_zone();
    hotlift::profile::remember_umask();
    std::process::exit(hotlift::cli::main());
}
