//! The legacy vsyscall page (old static binaries call into it): emulated
//! as the kernel emulates it where it keeps one.
//!
//! V1: the page is the guest's only where hotlift's own process has it
//!     executable (`vsyscall=xonly`, the kernel's default, or `emulate`);
//!     elsewhere a call there is the fetch fault it is natively.
//! V2: a call to one of its three entries (`gettimeofday` at offset 0,
//!     `time` at 0x400, `getcpu` at 0x800) runs that system call with the
//!     guest's RDI, RSI and RDX, puts its result in RAX and returns as
//!     `ret` would; anywhere else in the page, a return address that
//!     cannot be read or a result that cannot be written gives SIGSEGV
//!     (SI_KERNEL, RIP still in the page), as the kernel does. The call
//!     is not a syscall of the profile (natively no `syscall` ran), and no
//!     guest instruction retires in the page.

use super::{Vm, VmError};
use crate::contract::Reg;
use crate::profile::Ending;
use crate::types::{GuestAddr, HostAddr};

/// Where the x86-64 ABI puts the page.
pub(super) const PAGE: u64 = 0xffff_ffff_ff60_0000;

/// V1: does the kernel keep the page for hotlift's process?
fn host_has_page() -> bool {
    static HAS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *HAS.get_or_init(|| {
        std::fs::read_to_string("/proc/self/maps").is_ok_and(|maps| {
            maps.lines().any(|l| {
                l.starts_with("ffffffffff600000-")
                    && l.split_whitespace().nth(1).is_some_and(|p| p.contains('x'))
            })
        })
    })
}

/// Is a fetch fault at `at` a call into the page (V1)?
pub(super) fn is_call(at: GuestAddr) -> bool {
    at.0 & !0xfff == PAGE && host_has_page()
}

impl Vm {
    /// V2: the guest's fetch at `at`, in the page.
    pub(super) fn vsyscall(&mut self, at: GuestAddr) -> Result<HostAddr, VmError> {
        match self.vsyscall_call(at) {
            Some(()) => self.host_for(GuestAddr(self.ctx.rip())),
            None => self.vsyscall_fault(at),
        }
    }

    /// The call at entry `at`, its result written and its `ret` done; None
    /// for a SIGSEGV (V2).
    #[allow(unsafe_code)]
    fn vsyscall_call(&mut self, at: GuestAddr) -> Option<()> {
        let (nr, sizes) = match at.0 - PAGE {
            0 => (libc::SYS_gettimeofday, [16usize, 8]),
            0x400 => (libc::SYS_time, [8, 0]),
            0x800 => (libc::SYS_getcpu, [4, 4]),
            _ => return None,
        };
        let rsp = self.ctx.reg(Reg::Rsp);
        let caller = self.read_stack(rsp, 8)?;
        let args = [self.ctx.reg(Reg::Rdi), self.ctx.reg(Reg::Rsi)];
        // The call writes into hotlift's buffers, copied out after.
        let mut out = [[0u8; 16]; 2];
        let ptr = |k: usize, out: &mut [[u8; 16]; 2]| {
            if args[k] == 0 || sizes[k] == 0 {
                0
            } else {
                out[k].as_mut_ptr() as u64
            }
        };
        let (a0, a1) = (ptr(0, &mut out), ptr(1, &mut out));
        // SAFETY: the three calls write at most 16 and 8 bytes into the
        // buffers passed (or nothing for a null pointer); getcpu's third
        // argument is unused since Linux 2.6.24.
        let ret = unsafe {
            match nr {
                libc::SYS_time => libc::syscall(nr, a0),
                libc::SYS_getcpu => libc::syscall(nr, a0, a1, 0),
                _ => libc::syscall(nr, a0, a1),
            }
        };
        let ret = if ret < 0 {
            -i64::from(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
        } else {
            ret
        };
        for k in 0..2 {
            if args[k] != 0 && sizes[k] != 0 && !self.vsyscall_write(args[k], &out[k][..sizes[k]]) {
                return None;
            }
        }
        self.ctx.set_reg(Reg::Rax, ret as u64);
        self.ctx.set_reg(Reg::Rsp, rsp.wrapping_add(8));
        self.ctx.set_rip(caller);
        Some(())
    }

    /// Write `bytes` to guest `addr`, if it is the guest's writable memory.
    fn vsyscall_write(&self, addr: u64, bytes: &[u8]) -> bool {
        let len = bytes.len() as u64;
        let reach = super::Reach::Bytes { addr, len };
        self.check_reaches(|out| out(reach)).is_none()
            && crate::guest_mem::copy(addr, bytes.as_ptr() as *mut u8, bytes.len(), true)
    }

    /// V2: SIGSEGV (SI_KERNEL) at `at`, to the guest's handler or its end.
    fn vsyscall_fault(&mut self, at: GuestAddr) -> Result<HostAddr, VmError> {
        let sig = libc::SIGSEGV;
        let mut info = [0u8; 128];
        info[0..4].copy_from_slice(&sig.to_le_bytes());
        info[8..12].copy_from_slice(&0x80i32.to_le_bytes());
        self.ctx.set_rip(at.0);
        // A user-mode instruction fetch's page fault.
        if self.deliver_sync(sig, &info, [0x14, 14, at.0])? {
            return self.host_for(GuestAddr(self.ctx.rip()));
        }
        if self.proc.opts.verbose {
            crate::host::say!("hotlift: guest killed by SIGSEGV at guest {at}: a bad vsyscall");
        }
        self.finish(Ending::Signal { signal: sig });
        crate::status::die_with(sig)
    }
}
