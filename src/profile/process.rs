//! Which process, and which image of it, a profile is of: a process tree
//! (`fork`, `execve`) writes one profile per image, each naming the one it
//! came from.
//!
//! I1: every image's profile path derives from the tree's first image's
//!     (`tree_base`, the `--profile` / `-o` file): the first image writes
//!     `BASE`, a forked child's first image `BASE.PID`, the image an
//!     `execve` made the N-th of its process `BASE.PID.N`. Paths are
//!     unique while pids are (a pid reused within one tree overwrites).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The profile's `process` section.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ProcessInfo {
    pub pid: u32,
    pub parent_pid: u32,
    /// The pid of the tree's first process.
    #[serde(default)]
    pub root_pid: u32,
    /// How this image began: `program` (hotlift was asked to run it),
    /// `fork` (a forked child of a profiled process), `exec` (a profiled
    /// process's `execve`).
    pub began: String,
    /// Images of this process before this one (0: its first).
    pub image: u32,
    /// The profile of the image this one was forked from or replaced.
    #[serde(default)]
    pub parent_profile: Option<String>,
    /// The tree's first profile (I1); None: no profiles are written.
    #[serde(default)]
    pub tree_base: Option<String>,
}

fn ids() -> (u32, u32) {
    // SAFETY: getppid has no preconditions.
    #[allow(unsafe_code)]
    let ppid = unsafe { libc::getppid() } as u32;
    (std::process::id(), ppid)
}

impl ProcessInfo {
    /// The image hotlift was asked to run, writing its profile to `base`.
    pub fn program(base: Option<PathBuf>) -> ProcessInfo {
        let (pid, parent_pid) = ids();
        ProcessInfo {
            pid,
            parent_pid,
            root_pid: pid,
            began: "program".into(),
            image: 0,
            parent_profile: None,
            tree_base: base.map(|p| p.display().to_string()),
        }
    }

    /// Now the first image of a forked child of `parent_profile`'s image.
    pub fn forked(&mut self, parent_profile: Option<String>) {
        let (pid, parent_pid) = ids();
        *self = ProcessInfo {
            pid,
            parent_pid,
            root_pid: self.root_pid,
            began: "fork".into(),
            image: 0,
            parent_profile,
            tree_base: self.tree_base.take(),
        };
    }

    /// The image an `execve` of this one makes.
    pub fn exec_successor(&self) -> ProcessInfo {
        ProcessInfo {
            began: "exec".into(),
            image: self.image + 1,
            parent_profile: self.profile_path().map(|p| p.display().to_string()),
            ..self.clone()
        }
    }

    /// Is this process not the tree's first (its strace lines are marked)?
    pub fn descendant(&self) -> bool {
        self.pid != self.root_pid
    }

    /// Where this image's profile goes (I1).
    pub fn profile_path(&self) -> Option<PathBuf> {
        let base = self.tree_base.as_ref()?;
        Some(PathBuf::from(match (self.began.as_str(), self.image) {
            ("program", 0) => base.clone(),
            (_, 0) => format!("{base}.{}", self.pid),
            (_, n) => format!("{base}.{}.{n}", self.pid),
        }))
    }

    /// The profiles the tree's other images have written so far (I1):
    /// `BASE` and the `BASE.PID`, `BASE.PID.N` files beside it, this
    /// image's own left out. Which of them this tree wrote (a file of an
    /// earlier run may share the base) the reader tells by their
    /// `process` sections ([`ProcessInfo::same_tree`]).
    pub fn tree_paths(&self) -> Vec<PathBuf> {
        let (Some(base), Some(own)) = (self.tree_base.as_ref(), self.profile_path()) else {
            return Vec::new();
        };
        let base = PathBuf::from(base);
        let Some(name) = base.file_name().and_then(|n| n.to_str()) else {
            return Vec::new();
        };
        let dir = match base.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return Vec::new();
        };
        let mut out: Vec<PathBuf> = entries
            .filter_map(|e| e.ok())
            .filter(|e| {
                e.file_name().to_str().is_some_and(|n| {
                    n == name
                        || n.strip_prefix(name)
                            .and_then(|rest| rest.strip_prefix('.'))
                            .is_some_and(image_suffix)
                })
            })
            .map(|e| dir.join(e.file_name()))
            .filter(|p| *p != own)
            .collect();
        out.sort();
        out
    }

    /// Is `other` an image of the same process tree (the same first
    /// process and profile base)?
    pub fn same_tree(&self, other: &ProcessInfo) -> bool {
        self.root_pid == other.root_pid && self.tree_base == other.tree_base
    }
}

/// `PID` or `PID.N` (I1).
fn image_suffix(s: &str) -> bool {
    let mut parts = s.split('.');
    let digits = |p: &str| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit());
    match (parts.next(), parts.next(), parts.next()) {
        (Some(pid), None, None) => digits(pid),
        (Some(pid), Some(n), None) => digits(pid) && digits(n),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first image of a tree, pid 10, writing to `base`.
    fn root(base: &str) -> ProcessInfo {
        ProcessInfo {
            pid: 10,
            parent_pid: 1,
            root_pid: 10,
            began: "program".into(),
            image: 0,
            parent_profile: None,
            tree_base: Some(base.into()),
        }
    }

    #[test]
    fn paths_follow_the_tree() {
        let root = root("p.json");
        assert_eq!(root.profile_path(), Some("p.json".into()));
        let exec = root.exec_successor();
        assert_eq!(exec.profile_path(), Some("p.json.10.1".into()));
        assert_eq!(exec.parent_profile.as_deref(), Some("p.json"));
        let again = exec.exec_successor();
        assert_eq!(again.profile_path(), Some("p.json.10.2".into()));
        let mut child = exec.clone();
        child.forked(exec.profile_path().map(|p| p.display().to_string()));
        child.pid = 11;
        assert_eq!(child.profile_path(), Some("p.json.11".into()));
        assert_eq!(child.parent_profile.as_deref(), Some("p.json.10.1"));
        let nothing = ProcessInfo::program(None);
        assert_eq!(nothing.exec_successor().profile_path(), None);
    }

    #[test]
    fn a_tree_finds_its_images_beside_its_base() {
        let dir = std::env::temp_dir().join(format!("hotlift-tree-paths-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for f in [
            "p.json",
            "p.json.11",
            "p.json.10.1",
            "p.json.12.tmp-hotlift",
            "p.json.x",
            "p.jsonl",
            "q.json.11",
        ] {
            std::fs::write(dir.join(f), "").unwrap();
        }
        let root = root(&dir.join("p.json").display().to_string());
        let exec = root.exec_successor();
        assert_eq!(
            exec.tree_paths(),
            vec![dir.join("p.json"), dir.join("p.json.11")]
        );
        assert_eq!(
            root.tree_paths(),
            vec![dir.join("p.json.10.1"), dir.join("p.json.11")]
        );
        assert!(root.same_tree(&exec));
        let other = ProcessInfo {
            root_pid: 99,
            ..root.clone()
        };
        assert!(!root.same_tree(&other));
        assert!(ProcessInfo::program(None).tree_paths().is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
