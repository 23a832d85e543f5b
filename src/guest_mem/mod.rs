//! The guest's share of the address space: which pages the guest owns, with
//! what protection, and the emulated program break; and the one way hotlift
//! reads guest memory (G1, G2).
//!
//! The guest runs in hotlift's own address space. hotlift tracks every
//! mapping the guest made (through the loader or its own syscalls) so it can
//! (a) bound decoding to executable guest memory and (b) refuse requests that
//! would touch hotlift's own mappings.
//!
//! I1: regions are page aligned, sorted and never overlap.
//! I2: a page hotlift reports as guest-owned was mapped by the loader or by a
//!     guest syscall that the kernel completed.
//! I3: `mmap_ceiling` is the top of the guest's own top-down mmap area: the
//!     guest's mappings without a usable address hint go into the highest
//!     free gap below it (syscall/mem/mod.rs), as the kernel's go below its
//!     `mmap_base`, so they come in the kernel's order whatever hotlift
//!     itself maps meanwhile.
//! I4: placeholders are hotlift's own `PROT_NONE` mappings that hold
//!     address space for the guest: the guest's top-down mmap area below
//!     the ceiling (reserved at start), and every range the guest unmapped
//!     or moved away from. hotlift's later mappings (the monitor's heap, a
//!     new thread's ring) cannot land there, so the guest finds its address
//!     space as it left it, as in a process of its own. A page is never
//!     both guest memory and a placeholder; the guest may map over a
//!     placeholder (it replaces it), never over any other page of hotlift's.
//! I5: [`shrinks`] changes before any page stops being the guest's (one
//!     counter for the process: hotlift runs one guest process).
//! I6: the guest's shared mappings of files and memfds are known as
//!     views of the file ([`GuestMem::add_view`]), so that the pages of
//!     two mappings of the same file at the same offset are known to be
//!     the same memory ([`GuestMem::twins`]): a double-mapped JIT writes
//!     code through one view and runs it from the other (dispatch/smc.rs
//!     I7). A view ends with its mapping (`remove`, `insert`, `hold`);
//!     one `mremap` moved is not a view any more.
//!
//! Reading guest memory, for every layer (the translator, the monitor
//! lifting superblock members again, kept translations, path profiling,
//! the store hashing code, the syscall, signal and strace layers):
//! G1: memory that may be unmapped or unreadable (a syscall's pointer
//!     argument, a signal frame) is read with `process_vm_readv` on this
//!     process ([`read_bytes`], [`read_prefix`], [`copy`]): a bad address
//!     is an error, never a fault.
//! G2: memory known to be mapped readable (executable guest code, bounded
//!     by [`GuestMem::exec_end`]) is copied with [`copy_mapped`], never
//!     borrowed as a slice: another guest thread may be writing it, so it
//!     is read with relaxed atomic loads (a race gives some mix of old and
//!     new bytes, which the copy then holds still for decoding and
//!     comparing; a Rust slice over it would be a data race). Mapped is
//!     not always readable: a file mapping's pages past the file's end
//!     raise SIGBUS, and another thread may unmap the range meanwhile; the
//!     loads are the fault-catching ones of probe.rs, and a copy stops at
//!     the first page that faults (the translator then fetches nothing
//!     there: the guest gets the signal the fetch gets natively).

use std::collections::BTreeMap;

use crate::loader::Prot;

pub mod probe;

pub const PAGE: u64 = 4096;

/// This process's id, for `process_vm_readv`/`writev` on itself: 0 until
/// first asked. glibc does not cache `getpid`, and a signal delivered to
/// the guest copied its frame out and back with one `getpid` each.
static OWN_PID: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// This process's id (cached: [`forked`] forgets it in a new process).
#[allow(unsafe_code)]
pub fn own_pid() -> libc::pid_t {
    use std::sync::atomic::Ordering;
    match OWN_PID.load(Ordering::Relaxed) {
        0 => {
            // SAFETY: getpid has no preconditions.
            let pid = unsafe { libc::getpid() };
            OWN_PID.store(pid, Ordering::Relaxed);
            pid
        }
        pid => pid,
    }
}

/// The guest's `mlockall(MCL_FUTURE)` (syscall/mem/lock.rs L1): bit 0
/// set, bit 1 for `MCL_ONFAULT`; 0 without.
static LOCK_FUTURE: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// The guest's `MCL_FUTURE` state (syscall/mem/lock.rs L1).
pub fn lock_future() -> u8 {
    LOCK_FUTURE.load(std::sync::atomic::Ordering::Relaxed)
}

/// Set the guest's `MCL_FUTURE` state (syscall/mem/lock.rs L1, L2).
pub fn set_lock_future(v: u8) {
    LOCK_FUTURE.store(v, std::sync::atomic::Ordering::Relaxed);
}

/// Called first in the child of every `fork` hotlift makes that goes on
/// to run hotlift code: the cached id is the parent's; memory locks are
/// not passed on (syscall/mem/lock.rs L2).
pub fn forked() {
    OWN_PID.store(0, std::sync::atomic::Ordering::Relaxed);
    LOCK_FUTURE.store(0, std::sync::atomic::Ordering::Relaxed);
}

/// Copy `len` bytes between hotlift's `local` and guest `addr` with
/// process_vm_readv/writev on ourselves: a bad guest address fails with
/// EFAULT instead of faulting. True when all bytes were copied.
#[allow(unsafe_code)]
pub(crate) fn copy(addr: u64, local: *mut u8, len: usize, to_guest: bool) -> bool {
    let l = libc::iovec {
        iov_base: local as *mut libc::c_void,
        iov_len: len,
    };
    let r = libc::iovec {
        iov_base: addr as *mut libc::c_void,
        iov_len: len,
    };
    let pid = own_pid();
    // SAFETY: `local` is valid for `len` bytes (callers pass their own
    // buffers); the kernel checks the guest side.
    let n = unsafe {
        if to_guest {
            libc::process_vm_writev(pid, &l, 1, &r, 1, 0)
        } else {
            libc::process_vm_readv(pid, &l, 1, &r, 1, 0)
        }
    };
    n == len as isize
}

/// [`copy`] for several pieces in one system call: (guest address, local
/// buffer, length) each. True when all bytes of all pieces were copied
/// (the kernel stops at the first that fails).
#[allow(unsafe_code)]
pub(crate) fn copy_pieces(pieces: &[(u64, *mut u8, usize)], to_guest: bool) -> bool {
    let iovec = |at: *mut u8, len: usize| libc::iovec {
        iov_base: at as *mut libc::c_void,
        iov_len: len,
    };
    let (local, remote): (Vec<libc::iovec>, Vec<libc::iovec>) = pieces
        .iter()
        .map(|&(a, l, len)| (iovec(l, len), iovec(a as *mut u8, len)))
        .unzip();
    let total: usize = pieces.iter().map(|p| p.2).sum();
    let pid = own_pid();
    let n = local.len() as libc::c_ulong;
    // SAFETY: each local buffer is valid for its length (callers pass
    // their own buffers); the kernel checks the guest side.
    let done = unsafe {
        if to_guest {
            libc::process_vm_writev(pid, local.as_ptr(), n, remote.as_ptr(), n, 0)
        } else {
            libc::process_vm_readv(pid, local.as_ptr(), n, remote.as_ptr(), n, 0)
        }
    };
    done == total as isize
}

/// Copy `len` bytes at `addr`, which the caller knows are mapped
/// executable (G2): by loads of the aligned words that hold them, which
/// lie in the same pages. The readable prefix where a page faults
/// (probe.rs P1: a file mapping's page past the file's end, a range
/// another thread unmapped).
pub fn copy_mapped(addr: u64, len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len);
    mapped_pieces(addr, len, |p| {
        out.extend_from_slice(p);
        true
    });
    out
}

/// Are the bytes at `addr`, which the caller knows are mapped executable
/// (G2), `bytes`? [`copy_mapped`] compared, without the copy; false where
/// a page faults.
pub fn mapped_equals(addr: u64, bytes: &[u8]) -> bool {
    let mut rest = bytes;
    mapped_pieces(addr, bytes.len(), |p| {
        let (here, after) = rest.split_at(p.len());
        rest = after;
        here == p
    })
}

/// Call `f` with the bytes of [addr, addr+len) in order, a piece of an
/// aligned word at a time, each read by one 8-byte load (G2: other
/// threads may store there; probe.rs P2); stop at the first piece `f`
/// refuses or whose load faults (false).
fn mapped_pieces(addr: u64, len: usize, mut f: impl FnMut(&[u8]) -> bool) -> bool {
    if len == 0 {
        // Nothing is promised mapped: no word is read.
        return true;
    }
    let end = addr + len as u64;
    let mut word = addr & !7;
    let mut buf = [0u64; 64];
    while word < end {
        let want = (end - word).div_ceil(8).min(buf.len() as u64) as usize;
        let got = probe::load_words(word, &mut buf[..want]);
        for v in &buf[..got] {
            let v = v.to_le_bytes();
            let from = addr.saturating_sub(word) as usize;
            let to = (end - word).min(8) as usize;
            if !f(&v[from..to]) {
                return false;
            }
            word += 8;
        }
        if got < want {
            return false;
        }
    }
    true
}

/// Up to `len` bytes of process `pid`'s memory at `addr` (0: this
/// process's, the guest's), the readable prefix: empty when `addr` itself
/// is unreadable (G1). Read page by page, so that a range running into an
/// unmapped page keeps what came before it.
#[allow(unsafe_code)]
pub fn read_prefix(pid: libc::pid_t, addr: u64, len: usize) -> Vec<u8> {
    let Some(end) = addr.checked_add(len as u64) else {
        return Vec::new();
    };
    // process_vm_readv transfers whole remote iovecs only: one per page.
    let mut remote = Vec::new();
    let mut at = addr;
    while at < end {
        let next = (at | (PAGE - 1)).saturating_add(1).min(end);
        remote.push(libc::iovec {
            iov_base: at as *mut libc::c_void,
            iov_len: (next - at) as usize,
        });
        at = next;
    }
    let mut buf = vec![0u8; len];
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr() as *mut libc::c_void,
        iov_len: len,
    };
    let pid = if pid == 0 { own_pid() } else { pid };
    // The kernel takes at most IOV_MAX (1024) remote pieces a call.
    let mut done = 0usize;
    for chunk in remote.chunks(1024) {
        let want: usize = chunk.iter().map(|r| r.iov_len).sum();
        let piece = libc::iovec {
            // SAFETY: `done` is at most `len`, inside `buf`.
            iov_base: unsafe { (local.iov_base as *mut u8).add(done) } as *mut libc::c_void,
            iov_len: want,
        };
        // SAFETY: `piece` lies in `buf`; the kernel checks the remote side.
        let n =
            unsafe { libc::process_vm_readv(pid, &piece, 1, chunk.as_ptr(), chunk.len() as _, 0) };
        if n <= 0 {
            break;
        }
        done += n as usize;
        if (n as usize) < want {
            break;
        }
    }
    buf.truncate(done);
    buf
}

/// Read `len` bytes of guest memory at `addr`, if all readable (through
/// [`copy`]: an unmapped or unreadable address is `None`, never a fault).
pub fn read_bytes(addr: u64, len: usize) -> Option<Vec<u8>> {
    let mut v = vec![0u8; len];
    copy(addr, v.as_mut_ptr(), len, false).then_some(v)
}

/// The guest C string at `addr` (at most `max` bytes before its NUL), if
/// readable.
pub fn read_cstr(addr: u64, max: usize) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let mut at = addr;
    while out.len() < max {
        let chunk = (4096 - (at % 4096)) as usize;
        let bytes = read_bytes(at, chunk)?;
        if let Some(n) = bytes.iter().position(|&b| b == 0) {
            out.extend_from_slice(&bytes[..n]);
            return (out.len() <= max).then_some(out);
        }
        out.extend_from_slice(&bytes);
        at += chunk as u64;
    }
    None
}

/// I6: has the guest had an executable shared mapping of a file, or
/// code mapped from a file it may write (syscall/mem/cut.rs C2)? Until
/// then a write into a file cannot change code (syscall/mod.rs looks at
/// nothing).
static EXEC_VIEWS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// I6: writes into files are looked at from now on (syscall/mem/cut.rs
/// C2: code mapped privately from a file the guest can write).
pub fn watch_file_writes() {
    EXEC_VIEWS.store(true, std::sync::atomic::Ordering::Release);
}

/// I6: see [`EXEC_VIEWS`].
pub fn exec_views() -> bool {
    EXEC_VIEWS.load(std::sync::atomic::Ordering::Acquire)
}

/// I5: bumped before guest memory shrinks (a region removed or made a
/// placeholder): while it is unchanged, a range seen owned by the guest
/// still is, without the translation lock (syscall/reach.rs).
static SHRUNK: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The kernel's mappings the guest shares with hotlift (the vDSO and its
/// data pages), set once at start.
static SHARED_WITH_HOST: std::sync::OnceLock<Vec<(u64, u64)>> = std::sync::OnceLock::new();

/// Record the vDSO's and its data's ranges (the first call counts).
pub fn set_shared_with_host(ranges: Vec<(u64, u64)>) {
    let _ = SHARED_WITH_HOST.set(ranges);
}

/// Does [start, end) touch a mapping the guest shares with hotlift?
pub fn shared_with_host(start: u64, end: u64) -> bool {
    SHARED_WITH_HOST
        .get()
        .is_some_and(|v| v.iter().any(|&(s, e)| s < end && start < e))
}

/// [start, end) cut where mappings the guest shares with hotlift begin
/// and end, in order: (start, end, shared).
pub fn split_shared(start: u64, end: u64) -> Vec<(u64, u64, bool)> {
    let mut cuts: Vec<u64> = SHARED_WITH_HOST
        .get()
        .into_iter()
        .flatten()
        .flat_map(|&(s, e)| [s, e])
        .filter(|&c| c > start && c < end)
        .collect();
    cuts.push(end);
    cuts.sort_unstable();
    cuts.dedup();
    let mut at = start;
    cuts.into_iter()
        .map(|c| {
            let piece = (at, c, shared_with_host(at, c));
            at = c;
            piece
        })
        .collect()
}

/// syscall/memfile.rs M2: the guest may hold a `/proc/PID/mem` file.
static MEM_FILES: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// May the guest hold a `/proc/PID/mem` file (syscall/memfile.rs M2)?
pub fn mem_files() -> bool {
    MEM_FILES.load(std::sync::atomic::Ordering::Relaxed)
}

/// From now on the guest may hold a `/proc/PID/mem` file.
pub fn watch_mem_files() {
    MEM_FILES.store(true, std::sync::atomic::Ordering::Relaxed)
}

/// The mapping the guest shares with hotlift that holds `addr`, as
/// [start, end).
pub fn shared_range(addr: u64) -> Option<(u64, u64)> {
    SHARED_WITH_HOST
        .get()?
        .iter()
        .copied()
        .find(|&(s, e)| s <= addr && addr < e)
}

/// I5: the count of shrinks of guest memory so far.
pub fn shrinks() -> u64 {
    SHRUNK.load(std::sync::atomic::Ordering::Acquire)
}

pub fn page_down(a: u64) -> u64 {
    a & !(PAGE - 1)
}
pub fn page_up(a: u64) -> u64 {
    a.saturating_add(PAGE - 1) & !(PAGE - 1)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    pub end: u64,
    pub prot: Prot,
}

/// Page-aligned, sorted, non-overlapping ranges with a value each (I1).
#[derive(Debug, Default, Clone)]
struct Spans<V: Copy> {
    /// start → (end, value)
    map: BTreeMap<u64, (u64, V)>,
}

impl<V: Copy> Spans<V> {
    fn find(&self, addr: u64) -> Option<(u64, u64, V)> {
        let (&s, &(e, v)) = self.map.range(..=addr).next_back()?;
        (addr < e).then_some((s, e, v))
    }

    /// Forget [start, end), splitting spans that straddle its edges.
    fn remove(&mut self, start: u64, end: u64) {
        if end <= start {
            return;
        }
        for edge in [start, end] {
            if let Some((s, e, v)) = self.find(edge) {
                if s < edge {
                    self.map.insert(s, (edge, v));
                    self.map.insert(edge, (e, v));
                }
            }
        }
        let keys: Vec<u64> = self.map.range(start..end).map(|(&k, _)| k).collect();
        for k in keys {
            self.map.remove(&k);
        }
    }

    fn insert(&mut self, start: u64, end: u64, v: V) {
        let (start, end) = (page_down(start), page_up(end));
        self.remove(start, end);
        if end > start {
            self.map.insert(start, (end, v));
        }
    }

    /// The parts of [start, end) the spans cover, in order.
    fn pieces(&self, start: u64, end: u64) -> impl Iterator<Item = (u64, u64, V)> + '_ {
        let first = self.find(start).map_or(start, |(s, _, _)| s);
        self.map
            .range(first..end)
            .map(move |(&s, &(e, v))| (s.max(start), e.min(end), v))
            .filter(|&(s, e, _)| s < e)
    }

    /// Is every page of [start, end) covered?
    fn covers(&self, start: u64, end: u64) -> bool {
        let (mut at, end) = (page_down(start), page_up(end));
        while at < end {
            match self.find(at) {
                Some((_, e, _)) => at = e,
                None => return false,
            }
        }
        true
    }
}

/// I6: a shared mapping of a file (or memfd): its identity, and `delta`,
/// the file offset of an address in it minus the address (wrapping), the
/// same for every piece a split leaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct View {
    pub dev: u64,
    pub ino: u64,
    pub delta: u64,
}

#[derive(Debug, Default)]
pub struct GuestMem {
    regions: Spans<Prot>,
    /// I6: the guest's shared mappings of files, for the pages that are
    /// the same memory as another's (a double-mapped JIT's views).
    views: Spans<View>,
    /// I4: hotlift's `PROT_NONE` placeholders for address space the guest
    /// may take (its own top-down area, and whatever it gave back).
    placeholders: Spans<()>,
    /// I3; `None`: guest mmaps go where the kernel puts them.
    pub mmap_ceiling: Option<u64>,
    /// I4: what the guest unmaps becomes a placeholder (off when address
    /// space is limited: `RLIMIT_AS` counts placeholders too).
    pub keep_released: bool,
    /// The initial stack's region (start, top) and the size the kernel
    /// gives that stack's mapping at `execve` (its arguments and
    /// environment plus 128 KiB): hotlift maps the whole `RLIMIT_STACK`
    /// at once where the kernel grows the mapping on demand.
    pub stack: Option<(u64, u64, u64)>,
}

impl GuestMem {
    pub fn new() -> GuestMem {
        GuestMem::default()
    }

    /// The guest's address space as the kernel counts it for
    /// `RLIMIT_AS`, `rsp` its stack pointer now: every region, the initial
    /// stack only as far as the kernel would have grown it (its size at
    /// `execve`, or down to `rsp`), and of them the writable bytes.
    pub fn footprint(&self, rsp: u64) -> (u64, u64) {
        let (mut total, mut writable) = (0u64, 0u64);
        for (start, r) in self.regions() {
            let mut len = r.end - start;
            if let Some((s, top, initial)) = self.stack {
                if start >= s && r.end <= top {
                    // The part of this region below the kernel's mapping.
                    let low = top.saturating_sub(initial.max(top.saturating_sub(page_down(rsp))));
                    len = r.end.saturating_sub(start.max(low));
                }
            }
            total += len;
            if r.prot.w {
                writable += len;
            }
        }
        (total, writable)
    }

    /// The region containing `addr`, as (start, region).
    pub fn find(&self, addr: u64) -> Option<(u64, Region)> {
        let (s, end, prot) = self.regions.find(addr)?;
        Some((s, Region { end, prot }))
    }

    /// Forget [start, end) as guest memory (I1: splits regions that
    /// straddle the edges).
    pub fn remove(&mut self, start: u64, end: u64) {
        SHRUNK.fetch_add(1, std::sync::atomic::Ordering::Release);
        self.regions.remove(start, end);
        self.views.remove(page_down(start), page_up(end));
    }

    /// Record [start, end) as guest memory with `prot` (no longer a
    /// placeholder, I4; no longer any view it was, I6).
    pub fn insert(&mut self, start: u64, end: u64, prot: Prot) {
        self.regions.insert(start, end, prot);
        self.placeholders.remove(page_down(start), page_up(end));
        self.views.remove(page_down(start), page_up(end));
    }

    /// I6: [start, end) is a shared mapping of the file `dev`/`ino` from
    /// file offset `offset` (after [`GuestMem::insert`]).
    pub fn add_view(&mut self, start: u64, end: u64, dev: u64, ino: u64, offset: u64) {
        let delta = offset.wrapping_sub(start);
        self.views.insert(start, end, View { dev, ino, delta });
        self.note_exec(start, end);
    }

    /// I6: [start, end) may be executable now: if a view is, writes into
    /// files are looked at from now on ([`exec_views`]).
    pub fn note_exec(&self, start: u64, end: u64) {
        let exec = self.regions.pieces(start, end).any(|(_, _, p)| p.x);
        if exec && self.views.pieces(start, end).next().is_some() {
            EXEC_VIEWS.store(true, std::sync::atomic::Ordering::Release);
        }
    }

    /// I6: the file of the view holding `addr`.
    pub fn view_at(&self, addr: u64) -> Option<View> {
        self.views.find(addr).map(|(_, _, v)| v)
    }

    /// The guest's regions and hotlift's placeholders: about as many
    /// kernel mappings (anon.rs R1 compares them with
    /// `vm.max_map_count`).
    pub fn spans(&self) -> usize {
        self.regions.map.len() + self.placeholders.map.len()
    }

    /// I6: does the guest have a shared mapping of any file?
    pub fn has_views(&self) -> bool {
        !self.views.map.is_empty()
    }

    /// I6: the shared mappings of the file `dev`/`ino`, as (start, end).
    pub fn views_of(&self, dev: u64, ino: u64) -> Vec<(u64, u64)> {
        self.views
            .map
            .iter()
            .filter(|(_, (_, v))| v.dev == dev && v.ino == ino)
            .map(|(&s, &(e, _))| (s, e))
            .collect()
    }

    /// I6: the parts of other mappings that are the same memory as
    /// [start, end) (the same file's pages at the same offsets), as
    /// (start, end); nothing without shared file mappings.
    pub fn twins(&self, start: u64, end: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        if self.views.map.is_empty() {
            return out;
        }
        for (s, e, v) in self.views.pieces(page_down(start), page_up(end)) {
            for (&ws, &(we, w)) in &self.views.map {
                if (w.dev, w.ino) != (v.dev, v.ino) || w.delta == v.delta {
                    continue;
                }
                // [s, e) at the file offsets it has, in the other mapping.
                let shift = v.delta.wrapping_sub(w.delta);
                let (ts, te) = (s.wrapping_add(shift), e.wrapping_add(shift));
                if ts >= te {
                    continue; // wrapped around the address space
                }
                let (ts, te) = (ts.max(ws), te.min(we));
                if ts < te {
                    out.push((ts, te));
                }
            }
        }
        out
    }

    /// Change the protection of the guest-owned parts of [start, end).
    pub fn protect(&mut self, start: u64, end: u64, prot: Prot) {
        let (start, end) = (page_down(start), page_up(end));
        let owned: Vec<(u64, u64)> = self
            .regions
            .pieces(start, end)
            .map(|(s, e, _)| (s, e))
            .collect();
        for (s, e) in owned {
            self.regions.insert(s, e, prot);
        }
    }

    /// Is every page of [start, end) guest memory?
    pub fn owns_all(&self, start: u64, end: u64) -> bool {
        self.regions.covers(start, end)
    }

    /// Is any page of [start, end) guest memory?
    pub fn owns_any(&self, start: u64, end: u64) -> bool {
        self.regions.pieces(start, end).next().is_some()
    }

    /// The guest-owned parts of [start, end), in order.
    pub fn owned(&self, start: u64, end: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.regions.pieces(start, end).map(|(s, e, _)| (s, e))
    }

    /// Record [start, end) as placeholders (I4): not guest memory any more.
    pub fn hold(&mut self, start: u64, end: u64) {
        SHRUNK.fetch_add(1, std::sync::atomic::Ordering::Release);
        self.regions.remove(page_down(start), page_up(end));
        self.views.remove(page_down(start), page_up(end));
        self.placeholders.insert(start, end, ());
    }

    /// Forget the placeholders in [start, end) (hotlift unmapped them).
    pub fn release(&mut self, start: u64, end: u64) {
        self.placeholders.remove(page_down(start), page_up(end));
    }

    /// Is every page of [start, end) a placeholder?
    pub fn held_all(&self, start: u64, end: u64) -> bool {
        self.placeholders.covers(start, end)
    }

    /// The placeholders within [start, end), in order.
    pub fn held(&self, start: u64, end: u64) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.placeholders.pieces(start, end).map(|(s, e, _)| (s, e))
    }

    /// I3's search among the placeholders alone (I4): the start of a
    /// `len`-byte range at the top of the highest run of adjacent
    /// placeholders below `ceiling` long enough to hold it. While the
    /// guest's area is held (`keep_released`), every free page below the
    /// ceiling is a placeholder, and this is the highest gap that
    /// `/proc/self/maps` would show, without reading it.
    pub fn highest_held_gap(&self, ceiling: u64, len: u64) -> Option<u64> {
        let (mut lo, mut hi) = (0u64, 0u64);
        for (&s, &(e, ())) in self.placeholders.map.range(..ceiling).rev() {
            let e = e.min(ceiling);
            if hi == 0 || e != lo {
                hi = e;
            }
            lo = s;
            if hi - lo >= len {
                return Some(hi - len);
            }
        }
        None
    }

    /// May the guest take every page of [start, end): each one its own or
    /// a placeholder (I4)?
    pub fn claimable(&self, start: u64, end: u64) -> bool {
        let (mut at, end) = (page_down(start), page_up(end));
        while at < end {
            match (self.regions.find(at), self.placeholders.find(at)) {
                (Some((_, e, _)), _) | (None, Some((_, e, _))) => at = e,
                (None, None) => return false,
            }
        }
        true
    }

    /// End of the executable guest memory that continues from `addr`, if
    /// `addr` is executable guest memory.
    pub fn exec_end(&self, addr: u64) -> Option<u64> {
        let (_, mut r) = self.find(addr)?;
        if !r.prot.x {
            return None;
        }
        while let Some((_, next)) = self.find(r.end) {
            if !next.prot.x {
                break;
            }
            r = next;
        }
        Some(r.end)
    }

    pub fn regions(&self) -> impl Iterator<Item = (u64, Region)> + '_ {
        self.regions
            .map
            .iter()
            .map(|(&s, &(end, prot))| (s, Region { end, prot }))
    }
}

/// The emulated program break: a reservation the guest's `brk` grows into.
#[derive(Debug)]
pub struct Brk {
    pub start: u64,
    pub cur: u64,
    /// Mapped (read-write) up to here.
    pub mapped: u64,
    pub limit: u64,
}

#[cfg(test)]
mod tests;
