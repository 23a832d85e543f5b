//! The files behind a run's images, as its profile describes them: each
//! file's size, the program's SHA-256 and the symbols, read once per
//! process tree where they can be (profiling/end.rs writes the profile; a
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

/// Read (or find already read, or kept in the cache directory) file
/// `r`'s facts; the program's SHA-256 only when `program`.
fn file_facts(r: &crate::images::ImageRecord, program: bool) -> FileFacts {
    let meta = std::fs::metadata(&r.path).ok();
    let key = meta.as_ref().map(|m| file_key(r, program, m));
    if let Some(f) = key.as_ref().and_then(cached_facts) {
        return f;
    }
    let kept = meta.as_ref().map(|m| kept_key(r, m));
    let facts = kept
        .as_deref()
        .and_then(|k| kept_facts(k, r.bias, program))
        .unwrap_or_else(|| {
            // Only what symbols need (a tenth of a library), and the
            // program hashed as it streams by.
            let bytes = crate::profile::read_for_symbols(&r.path).unwrap_or_default();
            let facts = (
                bytes.len() as u64,
                program.then(|| crate::profile::file_sha256(&r.path).unwrap_or_default()),
                std::sync::Arc::new(Symbols::from_file(&bytes, r.bias, r.build_id.as_deref())),
            );
            if let Some(k) = &kept {
                keep_facts(k, &facts);
            }
            facts
        });
    if let Some(k) = key {
        MODULE_FILES
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert_with(Default::default)
            .insert(k, facts.clone());
    }
    facts
}

/// The key of file `r` (whose metadata is `m`) in [`MODULE_FILES`].
fn file_key(r: &crate::images::ImageRecord, program: bool, m: &std::fs::Metadata) -> FileKey {
    use std::os::unix::fs::MetadataExt;
    let id = [
        m.dev() as i64,
        m.ino() as i64,
        m.size() as i64,
        m.mtime(),
        m.mtime_nsec(),
    ];
    (r.path.clone(), r.bias, r.build_id.clone(), program, id)
}

/// The key of file `r`'s facts in the cache directory (persist.rs): its
/// path and identity (the change time too, which no one sets), the build
/// id it was mapped with, and the identity of the debug file its symbols
/// come from as well, or its absence (installing `libc6-dbg` changes
/// libc's names). Not its load address: the symbols are kept less it.
fn kept_key(r: &crate::images::ImageRecord, m: &std::fs::Metadata) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    let mut k = Vec::with_capacity(256);
    let mut file = |m: Option<&std::fs::Metadata>| {
        let Some(m) = m else {
            k.push(0);
            return;
        };
        k.push(1);
        crate::persist::file_identity(m, &mut k);
    };
    file(Some(m));
    let debug = r.build_id.as_deref().and_then(Symbols::debug_file);
    file(debug.and_then(|d| std::fs::metadata(d).ok()).as_ref());
    let build_id = r.build_id.as_deref().unwrap_or_default();
    k.extend_from_slice(&(build_id.len() as u32).to_le_bytes());
    k.extend_from_slice(build_id);
    k.extend_from_slice(r.path.as_os_str().as_bytes());
    k
}

/// Facts the cache directory keeps under `key`, relocated by `bias` (a
/// program's only with its SHA-256).
fn kept_facts(key: &[u8], bias: u64, program: bool) -> Option<FileFacts> {
    let b = crate::persist::get("facts", key)?;
    let size = u64::from_le_bytes(b.get(..8)?.try_into().ok()?);
    let sha_len = *b.get(8)? as usize;
    let sha = std::str::from_utf8(b.get(9..9 + sha_len)?)
        .ok()?
        .to_string();
    if program && sha.is_empty() {
        return None;
    }
    let symbols = Symbols::from_bytes(&b[9 + sha_len..], bias)?;
    Some((size, program.then_some(sha), std::sync::Arc::new(symbols)))
}

/// Keep `facts` in the cache directory under `key`.
fn keep_facts(key: &[u8], facts: &FileFacts) {
    let sha = facts.1.as_deref().unwrap_or_default();
    let mut b = Vec::new();
    b.extend_from_slice(&facts.0.to_le_bytes());
    b.push(sha.len().min(255) as u8);
    b.extend_from_slice(&sha.as_bytes()[..sha.len().min(255)]);
    b.extend_from_slice(&facts.2.to_bytes());
    crate::persist::put("facts", key, &b);
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
            let m = std::fs::metadata(&r.path).ok();
            let k = m.map(|m| file_key(r, r.kind == ImageKind::Program, &m));
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
            // The guest may have changed the vDSO's protection: read as
            // any guest memory (guest_mem G1); unreadable, no symbols.
            let image = crate::guest_mem::read_bytes(r.base, (r.end - r.base) as usize);
            std::sync::Arc::new(
                image.map_or_else(Symbols::default, |i| Symbols::from_elf(&i, r.bias)),
            )
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

/// Reading ahead (fork.rs F7): the files' facts are read on a thread of
/// their own as the guest maps them, on the monitor's core, instead of at
/// the end while the guest's core waits (`/bin/true --profile`: 4 ms of
/// its 13, libc's symbols).
///
/// A1: at most one reading thread per process; it ends when its queue is
///     empty, and the next image queued starts another.
/// A2: [`settle`] returns once no thread of this process reads, and the
///     last one has ended (joined): before a fork (the child must find no
///     lock held and every file read, F6) and before the profile's module
///     table is built. A thread that is done reading still holds locks of
///     the C library and of Rust's runtime while it exits (its stack, its
///     thread information): a child forked then found them held, and its
///     monitor thread never started (a forked child of `tests/hostile.rs`
///     hung, once in a full run).
/// A3: a forked child has no reading thread (threads do not survive a
///     fork): the state it inherits names another process and is reset on
///     first use, keeping how many records its parent had queued (all
///     read: A2).
/// A4: the reading thread opens files in a descriptor table of its own
///     (`host::private_fd_table`): a file it holds open never takes the
///     number the guest's next `open` gets (with one table, sqlite3's
///     `openat` of libm returned 4 where natively 3, a `compare` syscall
///     mismatch, now and then). A thread that cannot have its own table
///     reads nothing: the queue is left to the end.
struct Ahead {
    /// The process this state belongs to (A3).
    pid: u32,
    /// Records queued so far (the log only grows).
    seen: usize,
    queue: Vec<crate::images::ImageRecord>,
    /// A thread of `pid` is reading (A1).
    reading: bool,
    /// The last reading thread started, until it is joined (A2).
    thread: Option<std::thread::JoinHandle<()>>,
}

static AHEAD: Mutex<Ahead> = Mutex::new(Ahead {
    pid: 0,
    seen: 0,
    queue: Vec::new(),
    reading: false,
    thread: None,
});
static AHEAD_DONE: std::sync::Condvar = std::sync::Condvar::new();

fn ahead() -> std::sync::MutexGuard<'static, Ahead> {
    let mut a = AHEAD.lock().unwrap_or_else(|e| e.into_inner());
    let pid = std::process::id();
    if a.pid != pid {
        // A3.
        a.pid = pid;
        a.queue.clear();
        a.reading = false;
        // The parent's thread: not this process's to join or detach.
        if let Some(t) = a.thread.take() {
            std::mem::forget(t);
        }
    }
    a
}

/// Queue the records of `records` not queued before, and start a thread
/// to read them if none is reading (A1), pinned to `core` when given (the
/// monitor's: the guest's core is busy). A thread that cannot start (a
/// guest that lowered `RLIMIT_NPROC`) leaves them to the end.
pub fn read_ahead(records: &[crate::images::ImageRecord], core: Option<usize>) {
    let mut a = ahead();
    if a.seen >= records.len() {
        return;
    }
    let new = records[a.seen..]
        .iter()
        .filter(|r| r.kind != ImageKind::Vdso)
        .cloned();
    a.queue.extend(new);
    a.seen = records.len();
    if a.reading || a.queue.is_empty() {
        return;
    }
    a.reading = true;
    let body = move || {
        if let Some(id) = core {
            core_affinity::set_for_current(core_affinity::CoreId { id });
        }
        if !crate::host::private_fd_table() {
            // A4: left to the end.
            let mut a = ahead();
            a.reading = false;
            AHEAD_DONE.notify_all();
            return;
        }
        loop {
            let next = {
                let mut a = ahead();
                let next = a.queue.pop();
                if next.is_none() {
                    a.reading = false;
                    AHEAD_DONE.notify_all();
                }
                next
            };
            match next {
                Some(r) => drop(file_facts(&r, r.kind == ImageKind::Program)),
                None => return,
            }
        }
    };
    match crate::own_thread::spawn_blocked("hotlift-files", body) {
        Ok(t) => {
            // The one before is done reading (A1): at most its exit to
            // wait for.
            if let Some(old) = a.thread.replace(t) {
                let _ = old.join();
            }
        }
        Err(_) => {
            a.reading = false;
            a.queue.clear();
        }
    }
}

/// Wait until no thread of this process reads files (A2); what was
/// queued and not read is left to [`prime_module_cache`].
pub fn settle() {
    let mut a = ahead();
    while a.reading {
        a = AHEAD_DONE.wait(a).unwrap_or_else(|e| e.into_inner());
    }
    let thread = a.thread.take();
    drop(a);
    if let Some(t) = thread {
        let _ = t.join();
    }
}

/// A thread of this process is reading files now.
pub(super) fn reading_ahead() -> bool {
    ahead().reading
}
