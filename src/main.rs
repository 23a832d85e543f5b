fn main() {
    std::process::exit(hotlift::cli::main());
}
