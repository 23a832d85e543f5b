//! The files behind a run's images, as its profile describes them: each
//! file's size, the program's SHA-256 and the symbols, read once per
//! process tree where they can be (profiling.rs writes the profile; a
//! fork primes them first, fork.rs F6).

use std::sync::Mutex;

use crate::images::{ImageKind, ImageLog};
use crate::profile::{Binary, Module, Modules, Symbols};

/// What [`module_table`] read from one file: its size, its SHA-256 (only
/// for a program) and its symbols.
type FileFacts = (u64, Option<String>, std::sync::Arc<Symbols>);

/// [`module_table`]'s reads, by file, bias, build id and the file's
/// identity (device, inode, size, modification time): a forked child
/// finds what its parent read (the parent reads before its first fork,
/// [`prime_module_cache`]) instead of reading and hashing python's 6.8 MB
/// again for each child's profile.
static MODULE_FILES: Mutex<Option<std::collections::HashMap<FileKey, FileFacts>>> =
    Mutex::new(None);

type FileKey = (std::path::PathBuf, u64, Option<Vec<u8>>, bool, [i64; 5]);

/// Read (or find already read) file `r`'s facts; the program's SHA-256
/// only when `program`.
fn file_facts(r: &crate::images::ImageRecord, program: bool) -> FileFacts {
    let key = file_key(r, program);
    if let Some(f) = key.as_ref().and_then(cached_facts) {
        return f;
    }
    // Only what symbols need (a tenth of a library), and the program
    // hashed as it streams by.
    let bytes = crate::profile::read_for_symbols(&r.path).unwrap_or_default();
    let facts = (
        bytes.len() as u64,
        program.then(|| crate::profile::file_sha256(&r.path).unwrap_or_default()),
        std::sync::Arc::new(Symbols::from_file(&bytes, r.bias, r.build_id.as_deref())),
    );
    if let Some(k) = key {
        MODULE_FILES
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert_with(Default::default)
            .insert(k, facts.clone());
    }
    facts
}

/// The key of file `r` in [`MODULE_FILES`] as the file is now (None: it
/// cannot be looked at).
fn file_key(r: &crate::images::ImageRecord, program: bool) -> Option<FileKey> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(&r.path).ok()?;
    let id = [
        m.dev() as i64,
        m.ino() as i64,
        m.size() as i64,
        m.mtime(),
        m.mtime_nsec(),
    ];
    Some((r.path.clone(), r.bias, r.build_id.clone(), program, id))
}

fn cached_facts(k: &FileKey) -> Option<FileFacts> {
    let cache = MODULE_FILES.lock().unwrap_or_else(|e| e.into_inner());
    cache.as_ref()?.get(k).cloned()
}

/// The records of `records` whose files' facts are not read yet (a
/// forked child finds its parent's read: no thread to start for them).
pub(super) fn unread(records: &[crate::images::ImageRecord]) -> Vec<crate::images::ImageRecord> {
    records
        .iter()
        .filter(|r| r.kind != ImageKind::Vdso)
        .filter(|r| {
            let k = file_key(r, r.kind == ImageKind::Program);
            k.as_ref().and_then(cached_facts).is_none()
        })
        .cloned()
        .collect()
}

/// Read the facts of the files of `records` into [`MODULE_FILES`]: before
/// a fork whose child will write a profile (once, so that children find
/// them), and while the monitor drains at the end.
pub fn prime_module_cache(records: &[crate::images::ImageRecord]) {
    for r in records.iter().filter(|r| r.kind != ImageKind::Vdso) {
        file_facts(r, r.kind == ImageKind::Program);
    }
}

/// The profile's `binary` (the program's file) and module table, from the
/// run's image log: symbols and build ids read from each file (the
/// vDSO's from memory), or found read already ([`MODULE_FILES`]). A file
/// that changed since it was mapped (another build id) gives no symbols.
pub(super) fn module_table(images: &ImageLog) -> (Binary, Modules) {
    let mut binary = Binary {
        path: String::new(),
        sha256: String::new(),
        build_id: None,
        size: 0,
    };
    let mut list = Vec::with_capacity(images.records.len());
    for r in &images.records {
        let build_id = r.build_id.as_deref().map(hex::encode);
        let symbols = if r.kind == ImageKind::Vdso {
            // SAFETY: the vDSO is mapped readable for the process's life.
            let image = unsafe {
                std::slice::from_raw_parts(r.base as *const u8, (r.end - r.base) as usize)
            };
            std::sync::Arc::new(Symbols::from_elf(image, r.bias))
        } else {
            let program = r.kind == ImageKind::Program;
            let (size, sha256, symbols) = file_facts(r, program);
            if program {
                binary = Binary {
                    path: r.path.display().to_string(),
                    sha256: sha256.unwrap_or_default(),
                    build_id: build_id.clone(),
                    size,
                };
            }
            symbols
        };
        list.push(Module {
            name: r.file_name(),
            path: r.path.display().to_string(),
            kind: serde_json::to_value(r.kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            base: r.base,
            end: r.end,
            build_id,
            unmapped: r.end_block.is_some(),
            symbols,
            first_block: r.first_block,
            end_block: r.end_block,
        });
    }
    (binary, Modules::new(list))
}
