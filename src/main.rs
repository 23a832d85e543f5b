/// The system allocator, given address space from hotlift's reserve when
/// the guest took the rest (anon.rs R1).
#[global_allocator]
static ALLOCATOR: hotlift::anon::Allocator = hotlift::anon::Allocator;

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
    hotlift::anon::tune_malloc();
    hotlift::anon::reserve_address_space();
    std::process::exit(hotlift::cli::main());
}
