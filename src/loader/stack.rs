//! The initial process stack, byte for byte as Linux's `create_elf_tables`
//! (fs/binfmt_elf.c) and `copy_strings` (fs/exec.c) lay it out.
//!
//! From the top of the stack down:
//! ```text
//! top - 8    8 zero bytes (exec reserves a NULL word at the top)
//!            execfn string, envp strings (last highest), argv strings
//!            (argv[0] lowest), all NUL-terminated
//!            padding to 16 bytes (arch_align_stack, without randomisation)
//!            "x86_64\0" (AT_PLATFORM), then 16 random bytes (AT_RANDOM)
//!            padding so that sp is 16-byte aligned
//!            auxv pairs, AT_NULL pair
//!            NULL, envp pointers, NULL, argv pointers
//! sp ->      argc
//! ```
//!
//! Invariants:
//! - I1: pure: [`layout_stack`] computes the image for a given top address in
//!   a `Vec`; `map.rs` maps the stack and copies the image in.
//! - I2: the image is exactly the bytes `[sp, top)`; padding is zero.
//! - I3: `sp % 16 == 0`, and the auxv has the kernel's entries in the
//!   kernel's order ([`auxv`]): `AT_SYSINFO_EHDR` included (the guest's vDSO
//!   is hotlift's, translated like any guest code), and the rseq entries
//!   (`AT_RSEQ_FEATURE_SIZE`, `AT_RSEQ_ALIGN`) exactly when the kernel gave
//!   them to hotlift, with its values, although the guest's `rseq` fails
//!   with `ENOSYS`: a missing pair moves the whole stack 32 bytes and
//!   shortens glibc's auxv loop, so the guest would not run the instructions
//!   it runs natively.
//! - I4: the strings plus the pointer arrays may use at most a quarter of the
//!   stack, the kernel's `E2BIG` limit; strings cannot contain NUL.

use libc::{
    AT_BASE, AT_CLKTCK, AT_EGID, AT_ENTRY, AT_EUID, AT_EXECFN, AT_FLAGS, AT_GID, AT_HWCAP,
    AT_HWCAP2, AT_MINSIGSTKSZ, AT_NULL, AT_PAGESZ, AT_PHDR, AT_PHENT, AT_PHNUM, AT_PLATFORM,
    AT_RANDOM, AT_SECURE, AT_UID,
};

use super::{LoadError, LoadedImage, StackRequest, PAGE_SIZE};

/// `AT_PLATFORM` on x86-64 (`ELF_PLATFORM`).
pub(crate) const PLATFORM: &[u8] = b"x86_64\0";

/// The values of the auxv entries that describe the host rather than the
/// program: hotlift passes its own.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct HostAux {
    /// The vDSO hotlift's process has (0: none); given to the guest.
    pub sysinfo_ehdr: u64,
    pub minsigstksz: u64,
    pub hwcap: u64,
    pub hwcap2: u64,
    pub clktck: u64,
    pub secure: u64,
    /// `AT_RSEQ_FEATURE_SIZE` and `AT_RSEQ_ALIGN`, if the kernel passed them.
    pub rseq: Option<(u64, u64)>,
    pub uid: u64,
    pub euid: u64,
    pub gid: u64,
    pub egid: u64,
}

/// The stack contents for `[sp, top)` (I2).
#[derive(Debug)]
pub(crate) struct StackImage {
    pub sp: u64,
    pub bytes: Vec<u8>,
    pub auxv: Vec<(u64, u64)>,
}

/// An upper bound on the image size for `req`, checked against the quarter
/// of the stack (I4). Call before mapping anything.
pub(crate) fn check_request(req: &StackRequest, stack_size: u64) -> Result<u64, LoadError> {
    let all = || {
        req.argv
            .iter()
            .chain(req.envp)
            .map(Vec::as_slice)
            .chain([req.execfn])
    };
    if all().any(|s| s.contains(&0)) {
        return Err(LoadError::NulInString);
    }
    let strings: u64 = all().map(|s| s.len() as u64 + 1).sum();
    let pointers = (req.argv.len() as u64 + req.envp.len() as u64 + 3) * 8;
    let fixed = 8 + 15 + PLATFORM.len() as u64 + 16 + AUXV_MAX_LEN as u64 * 16 + 15;
    let needed = strings.saturating_add(pointers).saturating_add(fixed);
    if needed > stack_size / 4 {
        return Err(LoadError::ArgsTooLarge { needed, stack_size });
    }
    Ok(needed)
}

/// The most auxv pairs written, `AT_NULL` included.
const AUXV_MAX_LEN: usize = 23;

/// `AT_RSEQ_FEATURE_SIZE` and `AT_RSEQ_ALIGN` (Linux 6.3, `uapi/linux/auxvec.h`).
pub(crate) const AT_RSEQ_FEATURE_SIZE: u64 = 27;
pub(crate) const AT_RSEQ_ALIGN: u64 = 28;

/// Lays out the initial stack below `top` (16-byte aligned). `req` must have
/// passed [`check_request`] for a stack of at least that size below `top`.
pub(crate) fn layout_stack(
    top: u64,
    image: &LoadedImage,
    req: &StackRequest,
    host: &HostAux,
    random: [u8; 16],
) -> StackImage {
    // Strings, from the top down, as `copy_strings` does: `p` is the lowest
    // byte placed so far. The NUL terminators are the image's zero fill.
    let mut strings: Vec<(u64, &[u8])> = Vec::new();
    let mut p = top - 8;
    let mut place = |s: &[u8]| -> u64 {
        p -= s.len() as u64 + 1;
        p
    };
    let execfn = place(req.execfn);
    let mut envp: Vec<u64> = req.envp.iter().rev().map(|s| place(s)).collect();
    envp.reverse();
    let mut argv: Vec<u64> = req.argv.iter().rev().map(|s| place(s)).collect();
    argv.reverse();
    strings.push((execfn, req.execfn));
    strings.extend(envp.iter().copied().zip(req.envp.iter().map(Vec::as_slice)));
    strings.extend(argv.iter().copied().zip(req.argv.iter().map(Vec::as_slice)));

    // create_elf_tables: platform string and random bytes below the
    // 16-aligned string area, then the tables rounded down to 16.
    let platform = (p & !15) - PLATFORM.len() as u64;
    let random_at = platform - 16;
    let auxv = auxv(image, req.interp_base, host, random_at, execfn, platform);
    let items = (argv.len() + 1 + envp.len() + 1 + 1) as u64;
    let sp = (random_at - auxv.len() as u64 * 16 - items * 8) & !15;

    let mut bytes = vec![0u8; (top - sp) as usize];
    let mut put = |at: u64, data: &[u8]| {
        let off = (at - sp) as usize;
        bytes[off..off + data.len()].copy_from_slice(data);
    };
    for (at, s) in strings {
        put(at, s);
    }
    put(platform, PLATFORM);
    put(random_at, &random);
    let mut words = vec![argv.len() as u64];
    words.extend(&argv);
    words.push(0);
    words.extend(&envp);
    words.push(0);
    words.extend(auxv.iter().flat_map(|&(k, v)| [k, v]));
    for (i, w) in words.iter().enumerate() {
        put(sp + 8 * i as u64, &w.to_le_bytes());
    }
    StackImage { sp, bytes, auxv }
}

/// The `(key, value)` pairs of a saved auxiliary vector (the format of
/// `/proc/self/auxv`), up to and without `AT_NULL`.
pub(crate) fn parse_auxv(bytes: &[u8]) -> Vec<(u64, u64)> {
    let word = |w: &[u8]| u64::from_le_bytes(w.try_into().unwrap_or([0; 8]));
    bytes
        .chunks_exact(16)
        .map(|kv| (word(&kv[..8]), word(&kv[8..])))
        .take_while(|&(k, _)| k != AT_NULL)
        .collect()
}

/// The auxiliary vector in the kernel's order (I3).
fn auxv(
    image: &LoadedImage,
    interp_base: u64,
    host: &HostAux,
    random: u64,
    execfn: u64,
    platform: u64,
) -> Vec<(u64, u64)> {
    // create_elf_tables: ARCH_DLINFO first, the rseq pair last.
    let vdso = (host.sysinfo_ehdr != 0).then_some((libc::AT_SYSINFO_EHDR, host.sysinfo_ehdr));
    let rseq = host
        .rseq
        .into_iter()
        .flat_map(|(size, align)| [(AT_RSEQ_FEATURE_SIZE, size), (AT_RSEQ_ALIGN, align)]);
    vdso.into_iter()
        .chain([
            (AT_MINSIGSTKSZ, host.minsigstksz),
            (AT_HWCAP, host.hwcap),
            (AT_PAGESZ, PAGE_SIZE),
            (AT_CLKTCK, host.clktck),
            (AT_PHDR, image.phdr.0),
            (AT_PHENT, image.phent),
            (AT_PHNUM, image.phnum),
            (AT_BASE, interp_base),
            (AT_FLAGS, 0),
            (AT_ENTRY, image.entry.0),
            (AT_UID, host.uid),
            (AT_EUID, host.euid),
            (AT_GID, host.gid),
            (AT_EGID, host.egid),
            (AT_SECURE, host.secure),
            (AT_RANDOM, random),
            (AT_HWCAP2, host.hwcap2),
            (AT_EXECFN, execfn),
            (AT_PLATFORM, platform),
        ])
        .chain(rseq)
        .chain([(AT_NULL, 0)])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::GuestAddr;

    fn image() -> LoadedImage {
        LoadedImage {
            bias: 0,
            entry: GuestAddr(0x401000),
            phdr: GuestAddr(0x400040),
            phent: 56,
            phnum: 9,
            lo: GuestAddr(0x400000),
            hi: GuestAddr(0x500000),
            brk_start: GuestAddr(0x500000),
            regions: Vec::new(),
        }
    }

    /// A host that passes every optional entry.
    fn full_host() -> HostAux {
        HostAux {
            sysinfo_ehdr: 0x7fff_f7fc_1000,
            rseq: Some((28, 32)),
            ..HostAux::default()
        }
    }

    /// The keys in the order Linux 6.x's `create_elf_tables` writes them on
    /// x86-64 (what `LD_SHOW_AUXV=1 /bin/true` shows, `AT_BASE` included).
    #[test]
    fn auxv_keys_come_in_the_kernels_order() {
        let req = StackRequest {
            argv: &[b"prog".to_vec()],
            envp: &[],
            execfn: b"/prog",
            stack_size: 1 << 20,
            stack_room: 0,
            interp_base: 0x7fff_f7fc_3000,
        };
        let keys = |host: &HostAux| -> Vec<u64> {
            let img = layout_stack(0x7fff_0000_0000, &image(), &req, host, [0; 16]);
            img.auxv.iter().map(|&(k, _)| k).collect()
        };
        assert_eq!(
            keys(&full_host()),
            [33, 51, 16, 6, 17, 3, 4, 5, 7, 8, 9, 11, 12, 13, 14, 23, 25, 26, 31, 15, 27, 28, 0]
        );
        let bare = HostAux::default();
        assert_eq!(
            keys(&bare),
            [51, 16, 6, 17, 3, 4, 5, 7, 8, 9, 11, 12, 13, 14, 23, 25, 26, 31, 15, 0]
        );
        let rseq = layout_stack(0x7fff_0000_0000, &image(), &req, &full_host(), [0; 16]).auxv;
        assert_eq!(
            rseq[20..22],
            [(AT_RSEQ_FEATURE_SIZE, 28), (AT_RSEQ_ALIGN, 32)]
        );
        assert_eq!(rseq[8], (AT_BASE, 0x7fff_f7fc_3000));
    }

    #[test]
    fn parses_saved_auxv() {
        let words: [u64; 7] = [AT_PAGESZ, 4096, AT_HWCAP, 0x178b_fbff, AT_NULL, 0, 99];
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        assert_eq!(
            parse_auxv(&bytes),
            [(AT_PAGESZ, 4096), (AT_HWCAP, 0x178b_fbff)]
        );
        assert_eq!(parse_auxv(&bytes[..20]), [(AT_PAGESZ, 4096)]);
    }

    /// For many string-length mixes: sp is 16-aligned, the image fits the
    /// bound `check_request` reserved, and the tables end below AT_RANDOM.
    #[test]
    fn alignment_and_size_bound_hold_for_any_string_lengths() {
        let top = 0x7fff_0000_0000;
        for argc in 0..4usize {
            for envc in 0..3usize {
                for len in 0..20usize {
                    let argv: Vec<Vec<u8>> = (0..argc).map(|i| vec![b'a'; len + i]).collect();
                    let envp: Vec<Vec<u8>> = (0..envc).map(|i| vec![b'e'; len * i]).collect();
                    let execfn = vec![b'/'; len % 7 + 1];
                    let req = StackRequest {
                        argv: &argv,
                        envp: &envp,
                        execfn: &execfn,
                        stack_size: 1 << 20,
                        stack_room: 0,
                        interp_base: 0,
                    };
                    let bound = check_request(&req, 1 << 20).unwrap();
                    let img = layout_stack(top, &image(), &req, &full_host(), [0xaa; 16]);
                    assert_eq!(img.sp % 16, 0);
                    assert_eq!(img.sp + img.bytes.len() as u64, top);
                    assert!(
                        img.bytes.len() as u64 <= bound,
                        "{} > {bound}",
                        img.bytes.len()
                    );
                    assert_eq!(img.auxv.len(), AUXV_MAX_LEN);
                    let random = img.auxv.iter().find(|a| a.0 == AT_RANDOM).unwrap().1;
                    let tables_end = img.sp + 8 * (argc + envc + 3 + 2 * AUXV_MAX_LEN) as u64;
                    assert!(tables_end <= random && random - tables_end < 16);
                    let off = (random - img.sp) as usize;
                    assert_eq!(img.bytes[off..off + 16], [0xaa; 16]);
                }
            }
        }
    }
}
