//! Guest memory as hotlift reaches it for the guest: a piece a syscall or
//! an emulation names (a buffer, an address range) must lie in the
//! guest's own memory (syscall/reach.rs R1 says which pieces each syscall
//! names); writes hotlift makes for the guest (a thread id at `clone`,
//! signal frames, old actions) go only there, through
//! `process_vm_writev` on hotlift's own process, so a bad pointer fails
//! as unmapped memory would instead of faulting or reaching hotlift's.

use super::Vm;

const EFAULT: i64 = -(libc::EFAULT as i64);
const ENOMEM: i64 = -(libc::ENOMEM as i64);

/// One piece of memory a call names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// `len` bytes at `addr` (EFAULT when outside).
    Bytes { addr: u64, len: u64 },
    /// An address range the call acts on (ENOMEM when outside).
    Range { addr: u64, len: u64 },
}

thread_local! {
    /// Ranges this thread saw owned by the guest, and the count of
    /// shrinks (guest_mem I5) they were seen at: a syscall in a loop
    /// reuses its buffers, and then needs no translation lock.
    static SEEN: std::cell::Cell<(u64, [(u64, u64); 4])> =
        const { std::cell::Cell::new((u64::MAX, [(0, 0); 4])) };
}

impl Vm {
    /// The error for the first piece `named` gives its callback that is
    /// not all guest memory (-EFAULT for bytes, -ENOMEM for a range); a
    /// null address or a zero length reaches nothing (reach.rs R3).
    pub fn check_reaches(&self, named: impl FnOnce(&mut dyn FnMut(Reach))) -> Option<i64> {
        let shrinks = crate::guest_mem::shrinks();
        let (at, mut seen) = SEEN.get();
        if at != shrinks {
            seen = [(0, 0); 4];
        }
        let mut lock = None;
        let mut err = None;
        named(&mut |r| {
            let (addr, len, fail) = match r {
                Reach::Bytes { addr: 0, .. } | Reach::Bytes { len: 0, .. } => return,
                Reach::Range { len: 0, .. } => return,
                Reach::Bytes { addr, len } => (addr, len, EFAULT),
                Reach::Range { addr, len } => (addr, len, ENOMEM),
            };
            if err.is_some() {
                return;
            }
            let Some(end) = addr.checked_add(len) else {
                err = Some(fail);
                return;
            };
            if seen.iter().any(|&(s, e)| s <= addr && end <= e) {
                return;
            }
            let l = lock.get_or_insert_with(|| self.proc.lock());
            // growsdown.rs G2: a buffer below a growing mapping grows it.
            let owned = l.mem.owns_all(addr, end)
                || fail == EFAULT
                    && super::growsdown::grow_locked(l, addr)
                    && l.mem.owns_all(addr, end);
            if !owned {
                err = Some(fail);
                return;
            }
            // The whole region it lies in, for the next calls.
            if let Some((s, region)) = l.mem.find(addr) {
                seen.rotate_right(1);
                seen[0] = (s, region.end.max(end));
            }
        });
        SEEN.set((shrinks, seen));
        err
    }

    /// Copy `bytes` into guest memory at `addr`; false if any of it is not
    /// writable guest memory (hotlift's is not; the caller does not hold
    /// the translation lock).
    pub fn write_guest(&self, addr: u64, bytes: &[u8]) -> bool {
        let len = bytes.len() as u64;
        self.check_reaches(|out| out(Reach::Bytes { addr, len }))
            .is_none()
            && crate::guest_mem::copy(addr, bytes.as_ptr() as *mut u8, bytes.len(), true)
    }

    /// [`Vm::write_guest`] for several (address, bytes) pieces, written
    /// in one system call once all are seen to be guest memory.
    pub fn write_guest_pieces(&self, pieces: &[(u64, &[u8])]) -> bool {
        let owned = |&(addr, b): &(u64, &[u8])| {
            let len = b.len() as u64;
            self.check_reaches(|out| out(Reach::Bytes { addr, len }))
                .is_none()
        };
        pieces.iter().all(owned)
            && crate::guest_mem::copy_pieces(
                &pieces
                    .iter()
                    .map(|&(addr, b)| (addr, b.as_ptr() as *mut u8, b.len()))
                    .collect::<Vec<_>>(),
                true,
            )
    }
}
