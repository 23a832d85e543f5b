//! The guest's images (modules): the program, its interpreter, the vDSO,
//! and every file the guest maps executable (the libraries ld.so loads at
//! start-up or for `dlopen`), recorded in the order they appear, so a
//! profile written at the end names every guest address as image + offset
//! and symbol, also in images that were unmapped by then.
//!
//! Invariants:
//! - I1: records are never removed or reordered: a record's index is its
//!   load order. Unmapping an image's code ends its record (`end_block`).
//! - I2: a record's lifetime is counted in block sequence numbers (blocks
//!   translated so far, across id epochs: cache/blocks.rs I6): the blocks
//!   translated while it was live have numbers in `[first_block,
//!   end_block)`. At any one time the live records' ranges do not overlap
//!   (the kernel cannot map two things at one place), so a block's number
//!   and its guest address name at most one record, even when a library is
//!   unmapped and another mapped at the same place later.
//! - I3: `base` is the image's lowest mapped address (its first `PT_LOAD`,
//!   page-aligned, plus its load bias) and `end` the end of its highest;
//!   a file mapped executable that is not an ELF image is its mapping.
//! - I4: only an `mmap` with `PROT_EXEC` of a file makes a record (an
//!   anonymous mapping is JIT code: `[anon]` in profiles); a second
//!   executable mapping of the same file inside a live record's range only
//!   widens that record's code range.
//! - I5: a record ends when its code range (what was mapped executable) is
//!   unmapped, replaced (`MAP_FIXED`) or moved (`mremap`), in part or whole;
//!   changes to its other pages (ld.so maps data over the first mapping)
//!   do not end it.
//!
//! Usage: the dispatcher starts the log with [`ImageLog::at_start`];
//! `syscall/mem/mod.rs` calls [`ImageLog::mapped_file`] after each executable
//! file mapping and [`ImageLog::unmapped`] before memory goes away;
//! `dispatch/profiling/end.rs` turns the log into the profile's module table.

use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::PathBuf;

use crate::loader::{Interp, LoadPlan, LoadedImage};

/// What an image is to the process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ImageKind {
    /// The program hotlift was asked to run (`binary` in the profile).
    Program,
    /// Its `PT_INTERP` (ld.so), mapped by hotlift's loader.
    Interpreter,
    /// The kernel's vDSO.
    Vdso,
    /// A file the guest mapped executable itself (libraries).
    Mapped,
}

/// One image (I3).
#[derive(Clone, Debug)]
pub struct ImageRecord {
    pub kind: ImageKind,
    /// The file (canonical where known); `[vdso]` for the vDSO.
    pub path: PathBuf,
    pub base: u64,
    pub end: u64,
    /// Added to the file's addresses (symbol values).
    pub bias: u64,
    pub build_id: Option<Vec<u8>>,
    /// (st_dev, st_ino) of the file, to recognise its other mappings.
    pub file: Option<(u64, u64)>,
    /// What was mapped executable, `[lo, hi)` (I5).
    pub code: (u64, u64),
    /// Blocks published when it appeared and, once unmapped, when it went
    /// away (I2).
    pub first_block: u64,
    pub end_block: Option<u64>,
}

impl ImageRecord {
    /// Is it the image of `addr` for a block with id `block` (I2)?
    pub fn holds(&self, addr: u64, block: u64) -> bool {
        (self.base..self.end).contains(&addr)
            && block >= self.first_block
            && self.end_block.is_none_or(|end| block < end)
    }

    /// The file name ("libc.so.6"), or the whole path if it has none.
    pub fn file_name(&self) -> String {
        self.path
            .file_name()
            .unwrap_or(self.path.as_os_str())
            .to_string_lossy()
            .into_owned()
    }
}

/// Every image the guest had, in load order (I1).
#[derive(Debug, Default)]
pub struct ImageLog {
    pub records: Vec<ImageRecord>,
    /// Bumped (under the log's lock) after every change to `records`, so
    /// a reader on another thread can tell, without the lock, that its
    /// copy is old (store/feed.rs).
    pub changes: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl ImageLog {
    /// The images the guest starts with: the program (`exe`, the path as
    /// given), its interpreter (canonical path, as libraries get theirs) and
    /// the vDSO, all live from the first block.
    pub fn at_start(
        exe: PathBuf,
        program: (&LoadPlan, &LoadedImage),
        interp: Option<(&Interp, &LoadedImage)>,
        vdso: Option<(u64, u64)>,
    ) -> ImageLog {
        let loaded = |kind, path: PathBuf, plan: &LoadPlan, i: &LoadedImage| {
            let file = std::fs::metadata(&path).ok().map(|m| (m.dev(), m.ino()));
            let x = i.regions.iter().filter(|r| r.prot.x);
            let lo = x.clone().map(|r| r.start.0).min().unwrap_or(i.lo.0);
            let hi = x.map(|r| r.end.0).max().unwrap_or(i.hi.0);
            ImageRecord {
                kind,
                path,
                base: i.lo.0,
                end: i.hi.0,
                bias: i.bias,
                build_id: plan.build_id.clone(),
                file,
                code: (lo, hi),
                first_block: 0,
                end_block: None,
            }
        };
        let mut log = ImageLog::default();
        log.add(loaded(ImageKind::Program, exe, program.0, program.1));
        if let Some((interp, image)) = interp {
            let path = std::fs::canonicalize(&interp.path).unwrap_or(interp.path.clone());
            log.add(loaded(ImageKind::Interpreter, path, &interp.plan, image));
        }
        if let Some((lo, hi)) = vdso {
            log.add(ImageRecord {
                kind: ImageKind::Vdso,
                path: "[vdso]".into(),
                base: lo,
                end: hi,
                bias: lo,
                build_id: None,
                file: None,
                code: (lo, hi),
                first_block: 0,
                end_block: None,
            });
        }
        log
    }

    /// Records an image hotlift mapped or found (program, interpreter,
    /// vDSO), live from block `first_block`.
    pub fn add(&mut self, record: ImageRecord) {
        self.records.push(record);
        self.changed();
    }

    fn changed(&self) {
        self.changes
            .fetch_add(1, std::sync::atomic::Ordering::Release);
    }

    /// The guest mapped `len` bytes of file descriptor `fd` at file offset
    /// `offset` executable at `addr`; `blocks` have been published so far
    /// (I4).
    pub fn mapped_file(&mut self, fd: i32, offset: u64, addr: u64, len: u64, blocks: u64) {
        let link = PathBuf::from(format!("/proc/self/fd/{fd}"));
        let Ok(file) = std::fs::File::open(&link) else {
            return;
        };
        let path = std::fs::read_link(&link).unwrap_or(link);
        let id = file.metadata().ok().map(|m| (m.dev(), m.ino()));
        let code = (addr, addr.saturating_add(len));
        if let Some(r) = self.records.iter_mut().find(|r| {
            r.end_block.is_none() && id.is_some() && r.file == id && r.base <= addr && addr < r.end
        }) {
            r.code = (r.code.0.min(code.0), r.code.1.max(code.1));
            self.changed();
            return;
        }
        let read = |at: u64, n: usize| {
            let mut buf = vec![0u8; n];
            file.read_exact_at(&mut buf, at).ok().map(|()| buf)
        };
        let layout = crate::loader::mapped_layout(&read, offset, addr);
        let (base, end, bias, build_id) = match layout {
            // The image must hold its own mapping, else the headers lie.
            Some(l) if l.lo <= addr && code.1 <= l.hi => (l.lo, l.hi, l.bias, l.build_id),
            _ => (code.0, code.1, code.0.wrapping_sub(offset), None),
        };
        self.records.push(ImageRecord {
            kind: ImageKind::Mapped,
            path,
            base,
            end,
            bias,
            build_id,
            file: id,
            code,
            first_block: blocks,
            end_block: None,
        });
        self.changed();
    }

    /// `[start, end)` is about to be unmapped, replaced or moved; `blocks`
    /// have been published so far (I5).
    pub fn unmapped(&mut self, start: u64, end: u64, blocks: u64) {
        let mut ended = false;
        for r in &mut self.records {
            if r.end_block.is_none() && r.code.0 < end && start < r.code.1 {
                r.end_block = Some(blocks);
                ended = true;
            }
        }
        if ended {
            self.changed();
        }
    }

    /// The program's record (the first one).
    pub fn program(&self) -> Option<&ImageRecord> {
        self.records.iter().find(|r| r.kind == ImageKind::Program)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(base: u64, end: u64, first: u64) -> ImageRecord {
        ImageRecord {
            kind: ImageKind::Mapped,
            path: PathBuf::from("/lib/libx.so"),
            base,
            end,
            bias: base,
            build_id: None,
            file: Some((1, 2)),
            code: (base + 0x1000, end - 0x1000),
            first_block: first,
            end_block: None,
        }
    }

    #[test]
    fn a_place_reused_names_each_block_by_its_time() {
        let mut log = ImageLog::default();
        log.add(rec(0x10000, 0x20000, 5));
        // Data pages change: the record lives on.
        log.unmapped(0x1f000, 0x20000, 7);
        assert_eq!(log.records[0].end_block, None);
        // The code goes: the record ends at block 9.
        log.unmapped(0x10000, 0x20000, 9);
        log.add(rec(0x10000, 0x20000, 12));
        let who = |addr, block| {
            log.records
                .iter()
                .position(|r| r.holds(addr, block))
                .map(|i| i as i32)
                .unwrap_or(-1)
        };
        assert_eq!(who(0x11000, 4), -1);
        assert_eq!(who(0x11000, 5), 0);
        assert_eq!(who(0x11000, 8), 0);
        assert_eq!(who(0x11000, 9), -1);
        assert_eq!(who(0x11000, 12), 1);
        assert_eq!(who(0x20000, 12), -1);
    }

    #[test]
    fn mapping_a_file_reads_its_layout() {
        let exe = std::env::current_exe().unwrap();
        let f = std::fs::File::open(&exe).unwrap();
        use std::os::fd::AsRawFd;
        let mut log = ImageLog::default();
        log.mapped_file(f.as_raw_fd(), 0, 0x7000_0000_0000, 0x1000, 3);
        let r = &log.records[0];
        assert_eq!(r.path, std::fs::canonicalize(&exe).unwrap());
        assert_eq!(r.base, 0x7000_0000_0000);
        assert!(r.end > r.base + 0x1000);
        assert_eq!(r.first_block, 3);
        // Another executable mapping of the same file inside it.
        log.mapped_file(f.as_raw_fd(), 0x1000, 0x7000_0000_1000, 0x1000, 4);
        assert_eq!(log.records.len(), 1);
        assert_eq!(log.records[0].code, (0x7000_0000_0000, 0x7000_0000_2000));
    }
}
