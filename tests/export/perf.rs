//! `hotlift run --perf-map` (issue 20 goal 4) with the real perf (Debian's
//! linux-perf; `-e cpu-clock` needs no hardware counter): `perf record --
//! hotlift run --perf-map -- PROG; perf report` names the guest's functions
//! in translated code.

use super::*;

/// A program that spends its time in `spin` (a loop well past the
/// superblock threshold) and a little in `main`.
const SPIN_C: &str = "#include <stdio.h>\n\
__attribute__((noinline)) static unsigned long spin(unsigned long n) {\n\
\x20   unsigned long x = 1;\n\
\x20   for (unsigned long i = 0; i < n; i++)\n\
\x20       x = x * 6364136223846793005UL + i;\n\
\x20   return x;\n\
}\n\
int main(void) {\n\
\x20   printf(\"%lu\\n\", spin(400000000UL));\n\
\x20   return 0;\n\
}\n";

#[test]
fn perf_report_names_guest_functions_of_translated_code() {
    let dir = workdir("perf");
    std::fs::write(dir.join("spin.c"), SPIN_C).unwrap();
    let exe = dir.join("spin");
    let o = Command::new("gcc")
        .args(["-O1", "-o"])
        .arg(&exe)
        .arg(dir.join("spin.c"))
        .output()
        .expect("gcc");
    assert!(o.status.success(), "gcc: {}", show(&o));
    let data = dir.join("perf.data");
    let o = Command::new("perf")
        .args(["record", "-q", "-e", "cpu-clock", "-o"])
        .arg(&data)
        .args(["--", HOTLIFT, "run", "--perf-map", "--"])
        .arg(&exe)
        .output()
        .expect("perf (install linux-perf: .ci/run does)");
    assert!(o.status.success(), "perf record: {}", show(&o));
    // The map the run wrote, by the pid perf recorded.
    let o = Command::new("perf")
        .args(["report", "--stdio", "--comm", "spin", "--sort", "sym", "-i"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(o.status.success(), "perf report: {}", show(&o));
    let report = String::from_utf8_lossy(&o.stdout);
    let top: Vec<(f64, &str)> = report
        .lines()
        .filter(|l| !l.starts_with('#') && l.contains('%'))
        .filter_map(|l| {
            let (pct, rest) = l.trim().split_once('%')?;
            Some((pct.parse().ok()?, rest.trim()))
        })
        .collect();
    let spin: f64 = top
        .iter()
        .filter(|(_, s)| s.contains("hotlift:spin"))
        .map(|(p, _)| p)
        .sum();
    assert!(
        spin > 50.0,
        "most of the guest thread's samples in translated code named after spin:\n{report}"
    );
    let unknown: f64 = top
        .iter()
        .filter(|(_, s)| s.contains("[unknown]") || s.contains("] 0x0000"))
        .map(|(p, _)| p)
        .sum();
    assert!(unknown < 10.0, "unnamed code:\n{report}");
    for f in std::fs::read_dir("/tmp").unwrap().flatten() {
        let name = f.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("perf-") && name.ends_with(".map") {
            let text = std::fs::read_to_string(f.path()).unwrap_or_default();
            if text.contains("hotlift:spin") {
                let _ = std::fs::remove_file(f.path());
            }
        }
    }
}
