//! The cache directory: what one run keeps for the next (a warm start).
//! Each entry is one file, `DIR/KIND/NAME`, found by the exact key it was
//! written with: `facts` (a module file's symbols, size and SHA-256,
//! dispatch/module_files.rs) and `translations` (a module file's blocks as
//! emitted, with their relocations, and the marks of first cold runs,
//! dispatch/kept/). A directory, not the profile store: every process of
//! a `make -j` reads and writes it at once, without a database to open at
//! each start or a lock to take, an entry is read whole with one `read`
//! (or mapped, [`map`]), and a stale one is replaced by renaming a file.
//!
//! P1: an entry is found only under the key it was written with, by the
//!     same hotlift (its own build id, [`identity`]): anything else is a
//!     miss — a cold start — never another entry.
//! P2: an entry is written whole to a temporary file of its own and
//!     renamed into place: a reader sees a whole old entry, a whole new
//!     one, or none.
//! P3: an entry that does not check (magic, key, lengths, CRC-32) is a
//!     miss with a one-line warning, and the run that found it writes it
//!     again.
//! P4: a directory that is not the user's own, or that others may write
//!     to, is not used (a one-line warning): its entries would be whatever
//!     its other writers chose.
//! P5: no cache error fails a run: it is a miss or an entry not written.
//! P6: the directory holds at most its limit (`run --cache-max-mib`) once
//!     a run has written an entry: past it, that run removes the entries
//!     used least recently (an entry's modification time is when it was
//!     last written or found, to the hour: [`touch`]) until it holds 7/8
//!     of the limit, and leftover temporary files older than a day. A run
//!     that has an entry mapped keeps it (the file is unlinked, not its
//!     pages).
//! P7: the directory's size is kept in its ledger (`DIR/usage`, read and
//!     written under an advisory lock): each entry written adds what it
//!     grew the directory by, and only a ledger past the limit, missing
//!     or unreadable has the writer count the directory, prune it (P6) and
//!     write the exact total back, all under the lock. (Every write used
//!     to count the whole directory: 8,300 `statx` calls, 27 ms of each
//!     `python3 -c pass` that wrote two entries, with a cache near its
//!     limit.) A process that dies between its rename and the ledger, or
//!     waits more than 100 ms for the lock (another writer stopped while
//!     holding it), leaves it short by one entry until the next count.
//!
//! A leaf: it uses nothing of the crate.
#![allow(unsafe_code)]

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const MAGIC: &[u8; 8] = b"HLCACHE1";

/// The cache directory of this process (None: no cache) and whether the
/// user named it, set once by [`configure`] before the first entry is
/// looked for.
static DIR: OnceLock<Option<(PathBuf, bool)>> = OnceLock::new();
/// Whether [`DIR`] passed P4 (checked at the first use).
static USABLE: OnceLock<bool> = OnceLock::new();
/// The most bytes the directory holds (P6).
static LIMIT: OnceLock<u64> = OnceLock::new();

/// Where the cache is when no directory is given: `$XDG_CACHE_HOME/hotlift`,
/// else `$HOME/.cache/hotlift` (None: neither is set).
pub fn default_dir() -> Option<PathBuf> {
    let env = |k| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    env("XDG_CACHE_HOME")
        .filter(|p| p.is_absolute())
        .or_else(|| env("HOME").map(|h| h.join(".cache")))
        .map(|d| d.join("hotlift"))
}

/// Use `dir` (None: no cache) for this process, holding at most `limit`
/// bytes (P6); `named`, the user named it (a default directory that cannot
/// be used is left silently). Later calls change nothing.
pub fn configure(dir: Option<PathBuf>, named: bool, limit: u64) {
    let _ = DIR.set(dir.map(|d| (d, named)));
    let _ = LIMIT.set(limit);
}

/// The directory entries go to, if the cache is on and usable (P4).
/// Is there a cache directory to use (configured, and usable: P4)?
pub fn active() -> bool {
    dir().is_some()
}

fn dir() -> Option<&'static Path> {
    let (dir, named) = DIR.get()?.as_ref()?;
    USABLE
        .get_or_init(|| match check_dir(dir) {
            Ok(()) => true,
            Err(why) => {
                if *named {
                    crate::host::say!(
                        "hotlift: cache {}: {why}; running without it",
                        dir.display()
                    );
                }
                false
            }
        })
        .then_some(dir.as_path())
}

/// P4: `dir` (made if missing, mode 0700) is the user's and only theirs
/// to write.
fn check_dir(dir: &Path) -> Result<(), String> {
    if !dir.exists() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| format!("cannot create it: {e}"))?;
    }
    let m = std::fs::metadata(dir).map_err(|e| e.to_string())?;
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    if !m.is_dir() {
        return Err("not a directory".into());
    }
    if m.uid() != uid {
        return Err(format!("owned by uid {}, not this user ({uid})", m.uid()));
    }
    if m.mode() & 0o022 != 0 {
        return Err(format!(
            "others may write to it (mode {:o})",
            m.mode() & 0o777
        ));
    }
    Ok(())
}

/// hotlift's own identity (P1): the build id of its executable, read from
/// its program headers in memory; without one, its version and the
/// executable's size and time.
pub fn identity() -> &'static [u8] {
    static ID: OnceLock<Vec<u8>> = OnceLock::new();
    ID.get_or_init(|| {
        own_build_id().unwrap_or_else(|| {
            let mut v = env!("CARGO_PKG_VERSION").as_bytes().to_vec();
            if let Ok(m) = std::env::current_exe().and_then(std::fs::metadata) {
                v.extend_from_slice(&m.size().to_le_bytes());
                v.extend_from_slice(&m.mtime().to_le_bytes());
                v.extend_from_slice(&m.mtime_nsec().to_le_bytes());
            }
            v
        })
    })
}

/// The `NT_GNU_BUILD_ID` note of hotlift's executable, from the program
/// headers the kernel mapped (`AT_PHDR`).
fn own_build_id() -> Option<Vec<u8>> {
    // SAFETY: getauxval has no preconditions.
    let (phdr, phnum) = unsafe {
        (
            libc::getauxval(libc::AT_PHDR) as usize,
            libc::getauxval(libc::AT_PHNUM) as usize,
        )
    };
    if phdr == 0 || phnum == 0 {
        return None;
    }
    // SAFETY: AT_PHDR points at the executable's `phnum` program headers,
    // mapped for the process's life.
    let phdrs = unsafe { std::slice::from_raw_parts(phdr as *const libc::Elf64_Phdr, phnum) };
    let bias = phdrs
        .iter()
        .find(|p| p.p_type == libc::PT_PHDR)
        .map(|p| phdr.wrapping_sub(p.p_vaddr as usize))?;
    for p in phdrs.iter().filter(|p| p.p_type == libc::PT_NOTE) {
        // SAFETY: a PT_NOTE segment lies inside a loaded segment of the
        // executable, mapped readable.
        let notes = unsafe {
            std::slice::from_raw_parts(
                bias.wrapping_add(p.p_vaddr as usize) as *const u8,
                p.p_memsz as usize,
            )
        };
        if let Some(id) = build_id_note(notes) {
            return Some(id.to_vec());
        }
    }
    None
}

/// The descriptor of the `GNU` note of type 3 in `notes`.
fn build_id_note(mut notes: &[u8]) -> Option<&[u8]> {
    let word = |b: &[u8], at: usize| -> Option<usize> {
        Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?) as usize)
    };
    let up4 = |n: usize| (n + 3) & !3;
    while notes.len() >= 12 {
        let (namesz, descsz, kind) = (word(notes, 0)?, word(notes, 4)?, word(notes, 8)?);
        let desc_at = 12 + up4(namesz);
        let end = desc_at.checked_add(up4(descsz))?;
        let name = notes.get(12..12 + namesz)?;
        if kind == 3 && name == b"GNU\0" {
            return notes.get(desc_at..desc_at + descsz);
        }
        notes = notes.get(end..)?;
    }
    None
}

/// The file of entry `key` of `kind` under `dir`: named by a hash of the
/// key and hotlift's identity.
fn entry_path(dir: &Path, kind: &str, key: &[u8]) -> PathBuf {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    h.update(identity());
    h.update(kind.as_bytes());
    h.update([0]);
    h.update(key);
    dir.join(kind).join(hex::encode(&h.finalize()[..16]))
}

/// The entry's file: magic, identity, key, payload (each after its
/// length), then the CRC-32 of all of it.
fn encode(key: &[u8], payload: &[u8]) -> Vec<u8> {
    let id = identity();
    let mut b = Vec::with_capacity(32 + id.len() + key.len() + payload.len());
    b.extend_from_slice(MAGIC);
    for part in [id, key, payload] {
        b.extend_from_slice(&(part.len() as u64).to_le_bytes());
        b.extend_from_slice(part);
    }
    let crc = crc32fast::hash(&b);
    b.extend_from_slice(&crc.to_le_bytes());
    b
}

/// What a file read as an entry holds.
#[derive(Debug, PartialEq)]
enum Decoded<'a> {
    /// Its payload, for this key.
    Payload(&'a [u8]),
    /// A whole entry of another key or hotlift (a name's hash collision,
    /// or hotlift's fallback identity): a plain miss.
    Other,
    /// Not a whole entry (P3).
    Corrupt,
}

fn decode<'a>(file: &'a [u8], key: &[u8]) -> Decoded<'a> {
    let Some(body_len) = file.len().checked_sub(4) else {
        return Decoded::Corrupt;
    };
    let (body, crc) = file.split_at(body_len);
    if !body.starts_with(MAGIC) || crc32fast::hash(body).to_le_bytes() != crc {
        return Decoded::Corrupt;
    }
    let mut rest = &body[MAGIC.len()..];
    let mut part = || -> Option<&'a [u8]> {
        let n = u64::from_le_bytes(rest.get(..8)?.try_into().ok()?);
        let n = usize::try_from(n).ok()?;
        let p = rest.get(8..8usize.checked_add(n)?)?;
        rest = &rest[8 + n..];
        Some(p)
    };
    let (Some(id), Some(k), Some(payload)) = (part(), part(), part()) else {
        return Decoded::Corrupt;
    };
    if !rest.is_empty() {
        return Decoded::Corrupt;
    }
    if id != identity() || k != key {
        return Decoded::Other;
    }
    Decoded::Payload(payload)
}

/// A file's identity as entries' keys name it: device, inode, size,
/// modification and change times (a file replaced or rewritten has
/// another), appended to `key`.
pub fn file_identity(m: &std::fs::Metadata, key: &mut Vec<u8>) {
    for v in [
        m.dev(),
        m.ino(),
        m.size(),
        m.mtime() as u64,
        m.mtime_nsec() as u64,
        m.ctime() as u64,
        m.ctime_nsec() as u64,
    ] {
        key.extend_from_slice(&v.to_le_bytes());
    }
}

/// The payload of `file`, entry `key` read from `path`, if it is one (P1,
/// P3: a damaged one is said).
fn payload_of<'a>(file: &'a [u8], key: &[u8], path: &Path) -> Option<&'a [u8]> {
    match decode(file, key) {
        Decoded::Payload(p) => Some(p),
        Decoded::Other => None,
        Decoded::Corrupt => {
            crate::host::say!(
                "hotlift: cache: {} is damaged; it is written again",
                path.display()
            );
            None
        }
    }
}

/// The payload of entry `key` of `kind`, if the cache holds it (P1, P3).
pub fn get(kind: &str, key: &[u8]) -> Option<Vec<u8>> {
    use std::io::Read;
    let path = entry_path(dir()?, kind, key);
    let mut f = std::fs::File::open(&path).ok()?;
    let mut file = Vec::new();
    f.read_to_end(&mut file).ok()?;
    let payload = payload_of(&file, key, &path)?;
    touch(&f);
    Some(payload.to_vec())
}

/// P6: an entry just found was used now, to the hour (one metadata call,
/// and a write only when its time is older).
fn touch(f: &std::fs::File) {
    let now = std::time::SystemTime::now();
    let old = f
        .metadata()
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| now.duration_since(t).ok())
        .is_some_and(|d| d.as_secs() >= 3600);
    if old {
        let _ = f.set_modified(now);
    }
}

/// An entry mapped rather than read ([`map`]): its file's pages, shared
/// with the page cache, not copied.
#[derive(Debug)]
pub struct Mapped {
    base: *const u8,
    len: usize,
    payload: (usize, usize),
}

// SAFETY: a read-only mapping owned by this value: any thread may read it.
unsafe impl Send for Mapped {}
// SAFETY: as above; nothing writes through it.
unsafe impl Sync for Mapped {}

impl Mapped {
    pub fn payload(&self) -> &[u8] {
        // SAFETY: [base, base+len) stays mapped while self lives, and the
        // payload range lies inside it (checked by `decode`).
        let all = unsafe { std::slice::from_raw_parts(self.base, self.len) };
        &all[self.payload.0..self.payload.0 + self.payload.1]
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `map`, no longer referenced.
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) };
    }
}

/// Entry `key` of `kind` mapped, if the cache holds it (P1, P3), for an
/// entry of many megabytes of which a run reads most (kept
/// translations): a read would copy it into fresh memory twice. P2 keeps
/// the mapping whole: entries are replaced by renaming, never written in
/// place (a file someone truncates by hand under a running hotlift
/// would end it with SIGBUS).
pub fn map(kind: &str, key: &[u8]) -> Option<Mapped> {
    use std::os::fd::AsRawFd;
    let path = entry_path(dir()?, kind, key);
    let file = std::fs::File::open(&path).ok()?;
    let len = usize::try_from(file.metadata().ok()?.len()).ok()?;
    if len == 0 {
        return None;
    }
    // SAFETY: a private read-only mapping of a file we opened; checked
    // for failure below.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_PRIVATE,
            file.as_raw_fd(),
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return None;
    }
    let mut m = Mapped {
        base: p as *const u8,
        len,
        payload: (0, 0),
    };
    // SAFETY: as in `Mapped::payload`.
    let all = unsafe { std::slice::from_raw_parts(m.base, len) };
    let pl = payload_of(all, key, &path)?;
    m.payload = (pl.as_ptr() as usize - m.base as usize, pl.len());
    touch(&file);
    Some(m)
}

/// Keep `payload` as entry `key` of `kind` (P2); any error leaves the
/// entry unwritten (P5).
pub fn put(kind: &str, key: &[u8], payload: &[u8]) {
    let Some(dir) = dir() else {
        return;
    };
    let path = entry_path(dir, kind, key);
    let Some(parent) = path.parent() else {
        return;
    };
    let _ = std::fs::DirBuilder::new().mode(0o700).create(parent);
    // Unique to this thread of this process: a concurrent writer of the
    // same entry has its own.
    // SAFETY: gettid has no preconditions.
    let tid = unsafe { libc::gettid() };
    let tmp = parent.join(format!(".tmp.{}.{tid}", std::process::id()));
    let bytes = encode(key, payload);
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)
        .and_then(|mut f| f.write_all(&bytes));
    // An entry written again replaces the old one (P7: the difference).
    let old = std::fs::metadata(&path).map_or(0, |m| m.len());
    if written.and_then(|()| std::fs::rename(&tmp, &path)).is_err() {
        let _ = std::fs::remove_file(&tmp);
        return;
    }
    if let Some(&limit) = LIMIT.get() {
        note_written(dir, bytes.len() as i64 - old as i64, limit);
    }
}

/// The ledger (P7) under `dir`.
const LEDGER: &str = "usage";

/// P7: the directory grew by `grew` bytes (an entry written): into the
/// ledger, and the directory counted and pruned if that takes it past
/// `limit` (or the ledger is missing or unreadable).
fn note_written(dir: &Path, grew: i64, limit: u64) {
    let ledger = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(dir.join(LEDGER));
    let Ok(mut ledger) = ledger else {
        let _ = prune(dir, limit);
        return;
    };
    use std::io::{Read, Seek};
    use std::os::fd::AsRawFd;
    // A writer stopped while it holds the lock (^Z, a debugger) must not
    // hold every other run's end: after 100 ms its entry goes uncounted.
    let locked = (0..100).any(|_| {
        // SAFETY: flock on a descriptor this function owns; the lock goes
        // with the descriptor when `ledger` is dropped.
        let got = unsafe { libc::flock(ledger.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
        if !got {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        got
    });
    if !locked {
        return;
    }
    let mut text = String::new();
    let known = ledger
        .read_to_string(&mut text)
        .ok()
        .and_then(|_| text.trim().parse::<u64>().ok())
        .map(|total| total.saturating_add_signed(grew))
        .filter(|&total| total <= limit);
    let total = match known {
        Some(total) => Some(total),
        None => prune_counting(dir, limit).ok().map(|(_, total)| total),
    };
    let text = total.map_or(String::new(), |t| format!("{t}\n"));
    let _ = ledger
        .set_len(0)
        .and_then(|()| ledger.rewind())
        .and_then(|()| ledger.write_all(text.as_bytes()));
}

/// P6: remove the entries used least recently until `dir` holds 7/8 of
/// `limit` bytes, if it holds more; and temporary files a writer left
/// more than a day ago. Returns the entries removed. Entries other
/// processes remove at the same moment are skipped.
pub fn prune(dir: &Path, limit: u64) -> std::io::Result<u64> {
    prune_counting(dir, limit).map(|(removed, _)| removed)
}

/// [`prune`], and the bytes its entries hold after it (P7).
fn prune_counting(dir: &Path, limit: u64) -> std::io::Result<(u64, u64)> {
    let now = std::time::SystemTime::now();
    let mut files = Vec::new();
    let mut total = 0u64;
    for k in std::fs::read_dir(dir)? {
        let k = k?;
        if !k.file_type()?.is_dir() {
            continue;
        }
        for e in std::fs::read_dir(k.path())? {
            let Ok(e) = e else { continue };
            let Ok(m) = e.metadata() else { continue };
            if !m.is_file() {
                continue;
            }
            let when = m.modified().unwrap_or(now);
            let age = now.duration_since(when).map_or(0, |d| d.as_secs());
            if e.file_name().to_string_lossy().starts_with(".tmp.") {
                if age > 86_400 {
                    let _ = std::fs::remove_file(e.path());
                }
                continue;
            }
            total += m.len();
            files.push((when, m.len(), e.path()));
        }
    }
    if total <= limit {
        return Ok((0, total));
    }
    files.sort();
    let mut removed = 0;
    for (_, len, path) in files {
        if total <= limit / 8 * 7 {
            break;
        }
        if std::fs::remove_file(&path).is_ok() {
            removed += 1;
        }
        total = total.saturating_sub(len);
    }
    Ok((removed, total))
}

/// Entries and bytes under `dir`, by kind (`hotlift cache show`).
pub fn usage(dir: &Path) -> std::io::Result<Vec<(String, u64, u64)>> {
    let mut kinds = Vec::new();
    for k in std::fs::read_dir(dir)? {
        let k = k?;
        if !k.file_type()?.is_dir() {
            continue;
        }
        let (mut n, mut bytes) = (0, 0);
        for e in std::fs::read_dir(k.path())? {
            let m = e?.metadata()?;
            if m.is_file() {
                n += 1;
                bytes += m.len();
            }
        }
        kinds.push((k.file_name().to_string_lossy().into_owned(), n, bytes));
    }
    kinds.sort();
    Ok(kinds)
}

/// Remove every entry under `dir` (`hotlift cache clear`): the files of
/// its kinds' directories, then those directories. Returns the files
/// removed.
pub fn clear(dir: &Path) -> std::io::Result<u64> {
    let mut n = 0;
    for k in std::fs::read_dir(dir)? {
        let k = k?;
        if !k.file_type()?.is_dir() {
            continue;
        }
        for e in std::fs::read_dir(k.path())? {
            let e = e?;
            if e.file_type()?.is_file() {
                std::fs::remove_file(e.path())?;
                n += 1;
            }
        }
        std::fs::remove_dir(k.path())?;
    }
    // P7: nothing left to count.
    match std::fs::remove_file(dir.join(LEDGER)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_reads_back_only_under_its_key_and_whole() {
        let file = encode(b"key", b"payload");
        assert_eq!(decode(&file, b"key"), Decoded::Payload(b"payload"));
        assert_eq!(decode(&file, b"kez"), Decoded::Other);
        // Truncated anywhere, or any byte changed: corrupt.
        for n in 0..file.len() {
            assert_eq!(decode(&file[..n], b"key"), Decoded::Corrupt, "cut at {n}");
        }
        for i in 0..file.len() {
            let mut bad = file.clone();
            bad[i] ^= 0x40;
            assert_eq!(decode(&bad, b"key"), Decoded::Corrupt, "byte {i}");
        }
    }

    #[test]
    fn another_hotlifts_entry_is_a_plain_miss() {
        let mut b = MAGIC.to_vec();
        for part in [&b"another hotlift"[..], b"key", b"payload"] {
            b.extend_from_slice(&(part.len() as u64).to_le_bytes());
            b.extend_from_slice(part);
        }
        let crc = crc32fast::hash(&b);
        b.extend_from_slice(&crc.to_le_bytes());
        assert_eq!(decode(&b, b"key"), Decoded::Other);
    }

    #[test]
    fn pruning_removes_the_entries_used_least_recently() {
        let dir = std::env::temp_dir().join(format!("hotlift-prune-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let kinds = [dir.join("facts"), dir.join("translations")];
        for k in &kinds {
            std::fs::create_dir_all(k).unwrap();
        }
        let now = std::time::SystemTime::now();
        let hours = |h: u64| now - std::time::Duration::from_secs(h * 3600);
        // Ten entries of 1000 bytes, entry i last used i hours ago, and a
        // writer's leftover from two days ago.
        for i in 0..10u64 {
            let p = kinds[(i % 2) as usize].join(format!("e{i}"));
            std::fs::write(&p, vec![0u8; 1000]).unwrap();
            std::fs::File::options()
                .write(true)
                .open(&p)
                .unwrap()
                .set_modified(hours(i))
                .unwrap();
        }
        let tmp = kinds[1].join(".tmp.1.1");
        std::fs::write(&tmp, b"half").unwrap();
        let f = std::fs::File::options().write(true).open(&tmp).unwrap();
        f.set_modified(hours(48)).unwrap();
        assert_eq!(prune(&dir, 20_000).unwrap(), 0, "under the limit");
        assert!(!tmp.exists(), "the leftover is gone");
        // 10,000 bytes against 8,000: down to 7,000, the oldest first.
        assert_eq!(prune(&dir, 8_000).unwrap(), 3);
        for i in 0..10u64 {
            let p = kinds[(i % 2) as usize].join(format!("e{i}"));
            assert_eq!(p.exists(), i < 7, "entry {i}");
        }
        // Found again, an entry's time moves to now; within the hour, not.
        let p = kinds[0].join("e6");
        touch(&std::fs::File::open(&p).unwrap());
        let m = std::fs::metadata(&p).unwrap().modified().unwrap();
        assert!(now.duration_since(m).map_or(true, |d| d.as_secs() < 60));
        let q = kinds[0].join("e0");
        let before = std::fs::metadata(&q).unwrap().modified().unwrap();
        touch(&std::fs::File::open(&q).unwrap());
        assert_eq!(std::fs::metadata(&q).unwrap().modified().unwrap(), before);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_ledger_counts_the_directory_only_past_the_limit() {
        let dir = std::env::temp_dir().join(format!("hotlift-ledger-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let kind = dir.join("facts");
        std::fs::create_dir_all(&kind).unwrap();
        let ledger = || std::fs::read_to_string(dir.join(LEDGER)).unwrap();
        // Entry `name` of `n` bytes, last used `h` hours ago.
        let entry = |name: &str, n: usize, h: u64| {
            let p = kind.join(name);
            std::fs::write(&p, vec![0u8; n]).unwrap();
            let when = std::time::SystemTime::now() - std::time::Duration::from_secs(h * 3600);
            let f = std::fs::File::options().write(true).open(&p).unwrap();
            f.set_modified(when).unwrap();
        };
        entry("a", 1000, 2);
        // No ledger yet: the writer counts.
        note_written(&dir, 1000, 10_000);
        assert_eq!(ledger(), "1000\n");
        // Under the limit: added, not counted (the file written behind the
        // ledger's back stays out of it).
        entry("b", 2000, 1);
        entry("c", 500, 0);
        note_written(&dir, 2000, 10_000);
        assert_eq!(ledger(), "3000\n");
        // An entry written again over a larger one shrinks the directory.
        note_written(&dir, -200, 10_000);
        assert_eq!(ledger(), "2800\n");
        // Past the limit: counted (3,500 bytes) and pruned to 7/8 of the
        // limit, the oldest first.
        note_written(&dir, 1000, 3_000);
        assert!(!kind.join("a").exists() && kind.join("c").exists());
        assert_eq!(ledger(), "2500\n");
        // An unreadable ledger is counted again.
        std::fs::write(dir.join(LEDGER), "garbage").unwrap();
        note_written(&dir, 0, 10_000);
        assert_eq!(ledger(), "2500\n");
        // A writer that holds the lock for good (stopped) costs the others
        // 100 ms and their entry's count, not their end.
        {
            use std::os::fd::AsRawFd;
            let holder = std::fs::File::open(dir.join(LEDGER)).unwrap();
            // SAFETY: flock on a descriptor this test owns.
            assert_eq!(unsafe { libc::flock(holder.as_raw_fd(), libc::LOCK_EX) }, 0);
            let t = std::time::Instant::now();
            note_written(&dir, 100, 10_000);
            assert!(t.elapsed() < std::time::Duration::from_secs(5));
            assert_eq!(ledger(), "2500\n");
        }
        note_written(&dir, 100, 10_000);
        assert_eq!(ledger(), "2600\n");
        // Cleared, the ledger goes too.
        assert_eq!(clear(&dir).unwrap(), 2);
        assert!(!dir.join(LEDGER).exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn hotlift_knows_its_own_build_id() {
        // Cargo links with the toolchain's default --build-id: the test
        // binary has one, and it is the identity.
        let id = own_build_id().expect("the test binary's build id");
        assert!(id.len() >= 16, "{id:02x?}");
        assert_eq!(identity(), &id[..]);
    }

    #[test]
    fn a_note_list_is_walked_to_the_gnu_build_id() {
        let mut notes = Vec::new();
        // An unrelated note first (name padded to 4), then the build id.
        for (name, kind, desc) in [
            (&b"Go\0"[..], 4u32, &[1u8, 2, 3][..]),
            (&b"GNU\0"[..], 3, &[0xab; 20][..]),
        ] {
            notes.extend_from_slice(&(name.len() as u32).to_le_bytes());
            notes.extend_from_slice(&(desc.len() as u32).to_le_bytes());
            notes.extend_from_slice(&kind.to_le_bytes());
            notes.extend_from_slice(name);
            notes.resize((notes.len() + 3) & !3, 0);
            notes.extend_from_slice(desc);
            notes.resize((notes.len() + 3) & !3, 0);
        }
        assert_eq!(build_id_note(&notes), Some(&[0xab; 20][..]));
        assert_eq!(build_id_note(&notes[..30]), None);
    }
}
