//! Temporary strace rendering (replaced by the full decoder).
pub fn syscall_name(_nr: u64) -> Option<&'static str> {
    None
}
pub fn format_call(nr: u64, args: &[u64; 6]) -> String {
    format!(
        "syscall_{nr}({:#x}, {:#x}, {:#x}, {:#x}, {:#x}, {:#x})",
        args[0], args[1], args[2], args[3], args[4], args[5]
    )
}
pub fn format_return(_nr: u64, _args: &[u64; 6], ret: i64) -> String {
    format!(" = {ret}")
}
