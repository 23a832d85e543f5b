//! The result of a comparison and its three renderings: a readable text
//! report, a JSON document (`--json`) and JUnit XML (`--junit`, one test
//! case per check, the format CI systems display).
//!
//! I1: the three renderings carry the same checks in the same order
//!     (compare I2), each with the same outcome and one-line summary.
//! I2: differences are shown as unified diffs (the `similar` crate) with
//!     `context` lines around each change, cut after `MAX_DIFF_LINES`
//!     lines with a note saying how many were left out.

use std::time::Duration;

use quick_junit::{NonSuccessKind, TestCase, TestCaseStatus, TestSuite};
use serde::Serialize;

use super::spawn::RunResult;
use super::CompareOptions;

/// Most lines of one diff shown (I2).
pub const MAX_DIFF_LINES: usize = 200;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Pass,
    Fail,
    Skip,
}

/// One compared property (compare I2).
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub name: &'static str,
    pub outcome: Outcome,
    /// One line.
    pub summary: String,
    /// A diff or nothing.
    pub detail: String,
}

impl Check {
    pub fn pass(name: &'static str, summary: String) -> Check {
        Check {
            name,
            outcome: Outcome::Pass,
            summary,
            detail: String::new(),
        }
    }
    pub fn fail(name: &'static str, summary: String, detail: String) -> Check {
        Check {
            name,
            outcome: Outcome::Fail,
            summary,
            detail,
        }
    }
    pub fn skip(name: &'static str, summary: String) -> Check {
        Check {
            name,
            outcome: Outcome::Skip,
            summary,
            detail: String::new(),
        }
    }
}

/// Facts about the runs.
#[derive(Debug)]
pub struct Runs {
    pub native: RunResult,
    pub hotlift: RunResult,
    pub native_syscalls: Option<usize>,
    pub hotlift_syscalls: Option<usize>,
    pub native_instructions: Option<u64>,
    pub hotlift_instructions: Option<u64>,
    /// How the native count was made: "single-step" or "hardware counter".
    pub count_method: Option<&'static str>,
    pub wall_ratio: f64,
    pub cpu_ratio: f64,
}

/// A finished comparison.
#[derive(Debug)]
pub struct Report {
    pub command: Vec<String>,
    pub checks: Vec<Check>,
    pub runs: Runs,
}

/// A unified diff of two line lists (I2).
pub fn unified(a: &[String], b: &[String], context: usize) -> String {
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let b: Vec<&str> = b.iter().map(String::as_str).collect();
    let diff = similar::TextDiff::from_slices(&a, &b);
    let text = diff
        .unified_diff()
        .context_radius(context)
        .header("native", "hotlift")
        .to_string();
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= MAX_DIFF_LINES {
        return text;
    }
    let mut s = lines[..MAX_DIFF_LINES].join("\n");
    s.push_str(&format!(
        "\n... {} more diff lines left out\n",
        lines.len() - MAX_DIFF_LINES
    ));
    s
}

#[derive(Serialize)]
struct RunJson<'a> {
    status: &'a super::spawn::Status,
    stdout_bytes: usize,
    stderr_bytes: usize,
    wall_seconds: f64,
    cpu_seconds: f64,
    syscalls: Option<usize>,
    instructions: Option<u64>,
}

impl Report {
    pub fn new(opts: &CompareOptions, checks: Vec<Check>, runs: Runs) -> Report {
        Report {
            command: opts
                .program
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect(),
            checks,
            runs,
        }
    }

    /// No check failed (compare I3).
    pub fn equivalent(&self) -> bool {
        self.checks.iter().all(|c| c.outcome != Outcome::Fail)
    }

    /// The readable report.
    pub fn text(&self) -> String {
        let mut s = format!("hotlift compare: {}\n", self.command.join(" "));
        for c in &self.checks {
            let tag = match c.outcome {
                Outcome::Pass => "PASS",
                Outcome::Fail => "FAIL",
                Outcome::Skip => "SKIP",
            };
            s.push_str(&format!("  {tag}  {:<13} {}\n", c.name, c.summary));
            for l in c.detail.lines() {
                s.push_str(&format!("        {l}\n"));
            }
        }
        let failed: Vec<&str> = self
            .checks
            .iter()
            .filter(|c| c.outcome == Outcome::Fail)
            .map(|c| c.name)
            .collect();
        if failed.is_empty() {
            s.push_str("result: equivalent\n");
        } else {
            s.push_str(&format!("result: MISMATCH ({})\n", failed.join(", ")));
        }
        s
    }

    /// The JSON document (docs/COMPARE.md).
    pub fn json(&self) -> serde_json::Value {
        let run = |r: &RunResult, sys: Option<usize>, ins: Option<u64>| {
            serde_json::to_value(RunJson {
                status: &r.status,
                stdout_bytes: r.stdout.len(),
                stderr_bytes: r.stderr.len(),
                wall_seconds: r.wall_seconds,
                cpu_seconds: r.cpu_seconds,
                syscalls: sys,
                instructions: ins,
            })
            .unwrap_or_default()
        };
        let finite = |x: f64| if x.is_finite() { Some(x) } else { None };
        serde_json::json!({
            "tool": format!("hotlift {}", env!("CARGO_PKG_VERSION")),
            "command": self.command,
            "equivalent": self.equivalent(),
            "checks": self.checks,
            "native": run(&self.runs.native, self.runs.native_syscalls, self.runs.native_instructions),
            "hotlift": run(&self.runs.hotlift, self.runs.hotlift_syscalls, self.runs.hotlift_instructions),
            "count_method": self.runs.count_method,
            "wall_ratio": finite(self.runs.wall_ratio),
            "cpu_ratio": finite(self.runs.cpu_ratio),
        })
    }

    /// JUnit XML: one test suite, one test case per check.
    pub fn junit(&self) -> String {
        let prog = self
            .command
            .first()
            .map(|p| p.rsplit('/').next().unwrap_or(p).to_string())
            .unwrap_or_default();
        let mut suite = TestSuite::new(format!("hotlift compare {}", self.command.join(" ")));
        for c in &self.checks {
            let status = match c.outcome {
                Outcome::Pass => TestCaseStatus::success(),
                Outcome::Skip => {
                    let mut s = TestCaseStatus::skipped();
                    s.set_message(c.summary.as_str());
                    s
                }
                Outcome::Fail => {
                    let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                    s.set_message(c.summary.as_str());
                    s.set_type("mismatch");
                    if !c.detail.is_empty() {
                        s.set_description(c.detail.as_str());
                    }
                    s
                }
            };
            let mut tc = TestCase::new(c.name, status);
            tc.set_classname(format!("hotlift.compare.{prog}"));
            if c.outcome == Outcome::Pass {
                tc.set_system_out(c.summary.as_str());
            }
            suite.add_test_case(tc);
        }
        suite.set_time(Duration::from_secs_f64(
            self.runs.native.wall_seconds + self.runs.hotlift.wall_seconds,
        ));
        let mut report = quick_junit::Report::new("hotlift compare");
        report.add_test_suite(suite);
        report
            .to_string()
            .unwrap_or_else(|e| format!("<!-- cannot render JUnit XML: {e} -->\n"))
    }
}
