//! Tests of [`load`] and [`build_stack`] against real memory: contents and
//! protections of the mapped image, the initial stack walked word by word,
//! and real gcc-built programs run natively (in a forked child) on the image
//! and stack the loader built.
//!
//! Invariants:
//! - I1: no `unsafe` here: memory is read through `/proc/self/mem`, and the
//!   few things that need `unsafe` (unmapping, running the guest) go through
//!   `map::test_support`.
//! - I2: every test that maps memory holds [`LAYOUT`] while it does, so the
//!   checks of what is (not) mapped see no other loader test's mappings.
//!   `ET_EXEC` tests use link addresses no other test uses.

use std::os::unix::fs::FileExt;
use std::sync::{Mutex, MutexGuard};

use super::map::test_support::{block_page, run_natively, unmap_for_test};
use super::map::unused_parts;
use super::testelf::*;
use super::{
    build_stack, load, plan, InitialStack, LoadError, LoadedImage, Prot, Region, Role,
    StackRequest, PAGE_SIZE,
};
use crate::types::GuestAddr;

static LAYOUT: Mutex<()> = Mutex::new(());

/// How the tests load their images: as the program, room for a 1 MiB brk.
const PROGRAM: Role = Role::Program {
    brk_room: 1 << 20,
    mmap_room: 1 << 20,
};

fn layout_lock() -> MutexGuard<'static, ()> {
    LAYOUT.lock().unwrap_or_else(|e| e.into_inner())
}

/// The bytes at `addr` in this process.
fn peek(addr: u64, len: u64) -> Vec<u8> {
    let mem = std::fs::File::open("/proc/self/mem").unwrap();
    let mut buf = vec![0; len as usize];
    mem.read_exact_at(&mut buf, addr)
        .unwrap_or_else(|e| panic!("reading {addr:#x}: {e}"));
    buf
}

fn peek_u64(addr: u64) -> u64 {
    u64::from_le_bytes(peek(addr, 8).try_into().unwrap())
}

fn peek_cstr(addr: u64) -> Vec<u8> {
    let mut s = Vec::new();
    loop {
        match peek(addr + s.len() as u64, 1)[0] {
            0 => return s,
            b => s.push(b),
        }
    }
}

/// `(start, end, perms)` of each line of /proc/self/maps.
fn maps() -> Vec<(u64, u64, String)> {
    std::fs::read_to_string("/proc/self/maps")
        .unwrap()
        .lines()
        .map(|l| {
            let mut f = l.split_whitespace();
            let (a, b) = f.next().unwrap().split_once('-').unwrap();
            let perms = f.next().unwrap().to_string();
            (
                u64::from_str_radix(a, 16).unwrap(),
                u64::from_str_radix(b, 16).unwrap(),
                perms,
            )
        })
        .collect()
}

/// Asserts `[start, end)` is mapped with `prot` (private).
fn assert_mapped(start: u64, end: u64, prot: Prot) {
    let want = format!("{prot}p");
    let m = maps();
    let ok = m
        .iter()
        .any(|(a, b, p)| *a <= start && end <= *b && *p == want);
    assert!(ok, "{start:#x}..{end:#x} not mapped {want}");
}

/// No `PROT_NONE` leftover of the reservation is left in the image's gap
/// `[gap_lo, gap_hi)` or just below the image at `lo` (where alignment slack
/// would be). Just above the image there is often another thread's stack
/// guard page (mappings are placed top-down), so slack above is checked only
/// through `unused_parts`.
fn assert_no_reservation_left(lo: u64, gap_lo: u64, gap_hi: u64) {
    for (a, b, p) in maps() {
        let leftover = p == "---p" && (b == lo || (a < gap_hi && gap_lo < b));
        assert!(!leftover, "reservation left at {a:#x}..{b:#x}");
    }
}

fn unmap_image(image: &LoadedImage) {
    for r in &image.regions {
        unmap_for_test(r.start.0, r.end.0 - r.start.0);
    }
}

fn unmap_stack(stack: &InitialStack) {
    // The guard page below the region is part of the stack mapping.
    let start = stack.region.start.0 - PAGE_SIZE;
    unmap_for_test(start, stack.region.end.0 - start);
}

fn check_small_image(f: &[u8], image: &LoadedImage, b: u64) {
    let rx = Prot {
        r: true,
        w: false,
        x: true,
    };
    let rw = Prot {
        r: true,
        w: true,
        x: false,
    };
    let region = |s: u64, e: u64, prot| Region {
        start: GuestAddr(s),
        end: GuestAddr(e),
        prot,
    };
    assert_eq!(
        image.regions,
        vec![
            region(b, b + 0x1000, rx),
            region(b + 0x2000, b + 0x5000, rw)
        ]
    );
    assert_eq!(image.entry, GuestAddr(b + ENTRY_OFF));
    assert_eq!(image.phdr, GuestAddr(b + PHOFF));
    assert_eq!((image.phent, image.phnum), (56, u64::from(PHNUM)));
    assert_eq!((image.lo, image.hi), (GuestAddr(b), GuestAddr(b + 0x5000)));
    assert_eq!(image.brk_start, GuestAddr(b + 0x5000));
    assert_mapped(b, b + 0x1000, rx);
    assert_mapped(b + 0x2000, b + 0x5000, rw);
    assert_no_reservation_left(b, b + 0x1000, b + 0x2000);
    // Contents: text as in the file, the data page's lead bytes, the data,
    // then zeros (tail of the last file page and bss).
    assert_eq!(peek(b, 0x1000), &f[..0x1000]);
    assert_eq!(peek(b + 0x2000, 0x10), [LEAD_BYTE; 0x10]);
    assert_eq!(
        peek(b + DATA_VOFF, DATA_LEN),
        vec![DATA_BYTE; DATA_LEN as usize]
    );
    let bss = b + DATA_VOFF + DATA_LEN;
    assert!(peek(bss, b + 0x5000 - bss).iter().all(|&x| x == 0));
}

#[test]
fn loads_static_pie() {
    let _layout = layout_lock();
    let f = small_elf(false, 0);
    let p = plan(&f).unwrap();
    let image = load(&f, &p, PROGRAM).unwrap();
    assert_eq!(image.bias % p.align, 0);
    assert_ne!(image.bias, 0);
    check_small_image(&f, &image, image.bias);
    unmap_image(&image);
}

/// map.rs I6: the image lies above the vDSO (and hotlift's libraries), as
/// the kernel's does, and below the stack's growth floor.
#[test]
fn static_pie_lies_above_the_vdso() {
    let _layout = layout_lock();
    let text = std::fs::read_to_string("/proc/self/maps").unwrap();
    let Some(vdso_end) = text
        .lines()
        .find(|l| l.ends_with("[vdso]"))
        .and_then(|l| u64::from_str_radix(l.split(['-', ' ']).nth(1)?, 16).ok())
    else {
        return; // no vDSO in this process: nothing to order against
    };
    let f = small_elf(false, 0);
    let p = plan(&f).unwrap();
    let image = load(&f, &p, PROGRAM).unwrap();
    let floor = super::stack_growth_floor().expect("a [stack] and a finite RLIMIT_STACK");
    assert!(
        image.lo.0 >= vdso_end && image.hi.0 <= floor,
        "image {:#x}..{:#x}, vDSO ends at {vdso_end:#x}, stack floor {floor:#x}",
        image.lo.0,
        image.hi.0
    );
    unmap_image(&image);
}

/// map.rs I6: an interpreter lies above the vDSO too; a dynamically linked
/// PIE program lies below it (top-down, where its libraries will follow)
/// with its brk room free after it.
#[test]
fn interpreter_above_and_dynamic_program_below_the_vdso() {
    let _layout = layout_lock();
    let text = std::fs::read_to_string("/proc/self/maps").unwrap();
    let Some(vdso) = text
        .lines()
        .find(|l| l.ends_with("[vdso]"))
        .and_then(|l| u64::from_str_radix(l.split('-').next()?, 16).ok())
    else {
        return;
    };
    let f = small_elf(false, 0);
    let interp = load(&f, &plan(&f).unwrap(), Role::Interpreter).unwrap();
    assert!(interp.lo.0 > vdso, "interpreter at {:#x}", interp.lo.0);
    let mut p = plan(&f).unwrap();
    p.interp = Some(b"/lib64/ld-linux-x86-64.so.2".to_vec());
    let room = 64 << 20;
    let role = Role::Program {
        brk_room: room,
        mmap_room: room,
    };
    let image = load(&f, &p, role).unwrap();
    assert!(image.hi.0 < vdso, "program at {:#x}", image.lo.0);
    check_small_image(&f, &image, image.bias);
    // The brk starts right after the image (the room is given back then;
    // other test threads may map into it, so it is not checked here).
    assert_eq!(image.brk_start, image.hi);
    unmap_image(&image);
    unmap_image(&interp);
}

#[test]
fn highest_mapping_end_below_a_limit() {
    let maps = "00400000-00401000 r-xp 00000000 00:00 0 /x\n\
                7f0000000000-7f0000002000 r--p 00000000 00:00 0 [vdso]\n\
                7f0000100000-7f0000300000 rw-p 00000000 00:00 0\n\
                7ffffffde000-7ffffffff000 rw-p 00000000 00:00 0 [stack]\n";
    let highest = super::map::highest_end_below;
    assert_eq!(highest(maps, 0x7fff_0000_0000), Some(0x7f00_0030_0000));
    assert_eq!(highest(maps, 0x7f00_0020_0000), Some(0x7f00_0000_2000));
    assert_eq!(highest(maps, 0x1000), None);
}

#[test]
fn loads_static_pie_at_its_alignment() {
    let _layout = layout_lock();
    let mut f = small_elf(false, 0);
    put64(&mut f, phdr(PH_TEXT, ph::ALIGN), 0x20_0000);
    let p = plan(&f).unwrap();
    assert_eq!(p.align, 0x20_0000);
    let image = load(&f, &p, PROGRAM).unwrap();
    assert_eq!(image.bias % 0x20_0000, 0);
    check_small_image(&f, &image, image.bias);
    unmap_image(&image);
}

#[test]
fn unused_parts_of_a_reservation() {
    let region = |s: u64, e: u64| Region {
        start: GuestAddr(s),
        end: GuestAddr(e),
        prot: Prot::default(),
    };
    let regions = [
        region(0x2000, 0x3000),
        region(0x3000, 0x4000),
        region(0x6000, 0x8000),
    ];
    assert_eq!(
        unused_parts((0x1000, 0x9000), &regions),
        [(0x1000, 0x2000), (0x4000, 0x6000), (0x8000, 0xa000)]
    );
    assert_eq!(unused_parts((0x2000, 0x6000), &regions), [(0x4000, 0x6000)]);
    assert_eq!(unused_parts((0x2000, 0x2000), &regions[..2]), []);
}

#[test]
fn loads_exec_at_link_address_and_refuses_to_overlap() {
    let _layout = layout_lock();
    const B: u64 = 0x10_0000_0000;
    let f = small_elf(true, B);
    let p = plan(&f).unwrap();
    let image = load(&f, &p, PROGRAM).unwrap();
    assert_eq!(image.bias, 0);
    check_small_image(&f, &image, B);
    let e = load(&f, &p, PROGRAM).unwrap_err();
    assert!(
        matches!(e, LoadError::OverlapsHost { lo: B, hi } if hi == B + 0x1000),
        "{e}"
    );
    assert_eq!(e.exit_code(), 125);
    check_small_image(&f, &image, B); // untouched
    unmap_image(&image);
}

#[test]
fn failed_exec_load_unmaps_what_it_mapped() {
    let _layout = layout_lock();
    const B: u64 = 0x10_4000_0000;
    let f = small_elf(true, B);
    let p = plan(&f).unwrap();
    // Something already sits where the data segment goes.
    let blocker = block_page(B + 0x3000).unwrap();
    let e = load(&f, &p, PROGRAM).unwrap_err();
    assert!(
        matches!(e, LoadError::OverlapsHost { lo, .. } if lo == B + 0x2000),
        "{e}"
    );
    // The text region mapped before the failure is gone again (I1).
    drop(block_page(B).unwrap());
    drop(blocker);
    let image = load(&f, &p, PROGRAM).unwrap();
    unmap_image(&image);
}

#[test]
#[should_panic(expected = "the plan does not describe these bytes")]
fn load_refuses_a_foreign_plan() {
    let p = plan(&small_elf(false, 0)).unwrap();
    let _ = load(&small_elf(true, 0x10_8000_0000), &p, PROGRAM);
}

#[test]
fn load_accepts_a_plan_with_fields_it_does_not_use_changed() {
    let _layout = layout_lock();
    let f = small_elf(false, 0);
    let mut p = plan(&f).unwrap();
    p.stack_exec = true;
    p.build_id = None;
    let image = load(&f, &p, PROGRAM).unwrap();
    unmap_image(&image);
}

fn strings(v: &[&str]) -> Vec<Vec<u8>> {
    v.iter().map(|s| s.as_bytes().to_vec()).collect()
}

#[test]
fn builds_the_initial_stack() {
    let _layout = layout_lock();
    let f = small_elf(false, 0);
    let p = plan(&f).unwrap();
    let image = load(&f, &p, PROGRAM).unwrap();
    let argv = strings(&["prog", "a b", ""]);
    let envp = strings(&["A=1", "HOME=/x"]);
    let execfn = b"/bin/prog";
    let req = StackRequest {
        argv: &argv,
        envp: &envp,
        execfn,
        stack_size: 8 << 20,
        stack_room: 0,
        interp_base: 0,
    };
    let stack = build_stack(&image, &p, &req).unwrap();
    let (lo, top) = (stack.region.start.0, stack.region.end.0);
    assert_eq!(top - lo, 8 << 20);
    assert_mapped(
        lo,
        top,
        Prot {
            r: true,
            w: true,
            x: false,
        },
    );
    assert_mapped(lo - PAGE_SIZE, lo, Prot::default());
    assert_eq!(
        stack.room,
        (lo - PAGE_SIZE, lo),
        "a guard page, no room asked"
    );
    // Room asked for: held below the stack, which grows down into it.
    let roomy = build_stack(
        &image,
        &p,
        &StackRequest {
            stack_room: 64 << 20,
            ..req
        },
    )
    .unwrap();
    let (rlo, rtop) = (roomy.region.start.0, roomy.region.end.0);
    assert_eq!((roomy.room.1, rtop - rlo), (rlo, 8 << 20));
    assert_eq!(rtop - roomy.room.0, (64 << 20) + PAGE_SIZE);
    assert_mapped(roomy.room.0, rlo, Prot::default());
    let gd = std::fs::read_to_string("/proc/self/smaps").unwrap();
    let at = gd
        .find(&format!("{rlo:x}-{rtop:x} "))
        .expect("the stack's own mapping");
    let flags = gd[at..]
        .lines()
        .find(|l| l.starts_with("VmFlags:"))
        .unwrap();
    assert!(flags.split_whitespace().any(|f| f == "gd"), "{flags}");

    let sp = stack.sp.0;
    assert_eq!(sp % 16, 0);
    assert!(lo <= sp && sp < top);
    assert_eq!(peek_u64(sp), 3);
    let mut at = sp + 8;
    let mut words = || {
        let w = peek_u64(at);
        at += 8;
        w
    };
    let argv_ptrs: Vec<u64> = (0..3).map(|_| words()).collect();
    assert_eq!(words(), 0);
    let envp_ptrs: Vec<u64> = (0..2).map(|_| words()).collect();
    assert_eq!(words(), 0);
    let mut auxv = Vec::new();
    loop {
        let (k, v) = (words(), words());
        auxv.push((k, v));
        if k == libc::AT_NULL {
            break;
        }
    }
    for (ptr, s) in argv_ptrs
        .iter()
        .zip(&argv)
        .chain(envp_ptrs.iter().zip(&envp))
    {
        assert_eq!(peek_cstr(*ptr), *s);
    }
    assert_eq!(auxv, stack.auxv);
    // The kernel's keys in the kernel's order: those it gave this process
    // (`/proc/self/auxv`), which the guest's auxv must copy exactly.
    let keys: Vec<u64> = auxv.iter().map(|&(k, _)| k).collect();
    let saved = std::fs::read("/proc/self/auxv").unwrap();
    let kernel_keys: Vec<u64> = super::stack::parse_auxv(&saved)
        .iter()
        .map(|&(k, _)| k)
        .chain([libc::AT_NULL])
        .collect();
    assert_eq!(keys, kernel_keys);
    use libc::*;
    let aux = |key| auxv.iter().find(|&&(k, _)| k == key).unwrap().1;
    assert_eq!(aux(AT_PAGESZ), 4096);
    assert_eq!(aux(AT_PHDR), image.phdr.0);
    assert_eq!(aux(AT_PHENT), 56);
    assert_eq!(aux(AT_PHNUM), u64::from(PHNUM));
    assert_eq!(aux(AT_ENTRY), image.entry.0);
    assert_eq!((aux(AT_BASE), aux(AT_FLAGS)), (0, 0));
    // The host-describing entries are hotlift's own.
    let host: Vec<u64> = std::fs::read("/proc/self/auxv")
        .unwrap()
        .chunks_exact(8)
        .map(|w| u64::from_le_bytes(w.try_into().unwrap()))
        .collect();
    let host_aux = |key| {
        host.chunks_exact(2)
            .find(|kv| kv[0] == key)
            .map_or(0, |kv| kv[1])
    };
    for key in [AT_HWCAP, AT_HWCAP2, AT_CLKTCK, AT_MINSIGSTKSZ, AT_SECURE] {
        assert_eq!(aux(key), host_aux(key), "auxv key {key}");
    }
    let random = aux(AT_RANDOM);
    assert!(at <= random && random + 16 <= top);
    assert_ne!(peek(random, 16), [0u8; 16]);
    assert_eq!(peek_cstr(aux(AT_PLATFORM)), b"x86_64");
    assert_eq!(aux(AT_PLATFORM), random + 16);

    // The string area, exactly as the kernel packs it.
    let execfn_at = aux(AT_EXECFN);
    assert_eq!(peek_cstr(execfn_at), execfn);
    assert_eq!(execfn_at, top - 8 - execfn.len() as u64 - 1);
    assert_eq!(peek_u64(top - 8), 0);
    assert_eq!(envp_ptrs[1] + 8, execfn_at);
    assert_eq!(envp_ptrs[0] + 4, envp_ptrs[1]);
    assert_eq!(argv_ptrs[2] + 1, envp_ptrs[0]);
    assert_eq!(argv_ptrs[0] + 5, argv_ptrs[1]);
    assert_eq!(aux(AT_PLATFORM) + 7, argv_ptrs[0] & !15);

    unmap_stack(&stack);
    unmap_image(&image);
}

#[test]
fn stack_is_executable_when_the_program_asks() {
    let _layout = layout_lock();
    let mut f = small_elf(false, 0);
    put32(&mut f, phdr(PH_STACK, ph::FLAGS), 7);
    let p = plan(&f).unwrap();
    let image = load(&f, &p, PROGRAM).unwrap();
    let req = StackRequest {
        argv: &[],
        envp: &[],
        execfn: b"x",
        stack_size: 64 << 10,
        stack_room: 0,
        interp_base: 0,
    };
    let stack = build_stack(&image, &p, &req).unwrap();
    assert_eq!(
        stack.region.prot,
        Prot {
            r: true,
            w: true,
            x: true
        }
    );
    assert_mapped(stack.region.start.0, stack.region.end.0, stack.region.prot);
    assert_eq!(peek_u64(stack.sp.0), 0); // argc
    unmap_stack(&stack);
    unmap_image(&image);
}

#[test]
fn stack_request_errors() {
    let _layout = layout_lock();
    let f = small_elf(false, 0);
    let p = plan(&f).unwrap();
    let image = load(&f, &p, PROGRAM).unwrap();
    let argv = strings(&["a\0b"]);
    let req = StackRequest {
        argv: &argv,
        envp: &[],
        execfn: b"x",
        stack_size: 8 << 20,
        stack_room: 0,
        interp_base: 0,
    };
    assert!(matches!(
        build_stack(&image, &p, &req),
        Err(LoadError::NulInString)
    ));
    let envp = vec![vec![b'x'; 1 << 20]; 2];
    let req = StackRequest {
        argv: &[],
        envp: &envp,
        execfn: b"x",
        stack_size: 8 << 20,
        stack_room: 0,
        interp_base: 0,
    };
    let e = build_stack(&image, &p, &req).unwrap_err();
    assert!(matches!(e, LoadError::ArgsTooLarge { .. }), "{e}");
    assert_eq!(e.exit_code(), 125);
    for size in [0, u64::MAX] {
        let req = StackRequest {
            argv: &[],
            envp: &[],
            execfn: b"x",
            stack_size: size,
            stack_room: 0,
            interp_base: 0,
        };
        assert!(
            matches!(build_stack(&image, &p, &req), Err(LoadError::BadStackSize(s)) if s == size)
        );
    }
    unmap_image(&image);
}

const PROBE: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
static __thread int tls = 7;
int main(int argc, char **argv) {
printf("argc=%d\n", argc);
for (int i = 0; i < argc; i++) printf("argv[%d]=%s\n", i, argv[i]);
printf("env=%s\n", getenv("HOTLIFT_TEST"));
printf("execfn=%s\n", (char *)getauxval(AT_EXECFN));
printf("platform=%s\n", (char *)getauxval(AT_PLATFORM));
printf("pagesz=%lu\n", getauxval(AT_PAGESZ));
char *p = malloc(1 << 20);
memset(p, 1, 1 << 20);
printf("tls=%d\n", tls);
return 42;
}
"#;

/// Loads `f`, builds its stack for `argv` and runs it natively in a forked
/// child (the real CPU and the guest's own libc check our work); returns the
/// exit status and standard output.
fn load_and_run(f: &[u8], argv: &[&str]) -> (i32, String) {
    let _layout = layout_lock();
    let p = plan(f).unwrap();
    let image = load(f, &p, PROGRAM).unwrap();
    let argv = strings(argv);
    let envp = strings(&["HOTLIFT_TEST=yes", "PATH=/bin"]);
    let req = StackRequest {
        argv: &argv,
        envp: &envp,
        execfn: b"/tmp/probe",
        stack_size: 8 << 20,
        stack_room: 0,
        interp_base: 0,
    };
    let stack = build_stack(&image, &p, &req).unwrap();
    let (status, out) = run_natively(stack.sp.0, image.entry.0);
    unmap_stack(&stack);
    unmap_image(&image);
    match status {
        nix::sys::wait::WaitStatus::Exited(_, code) => (code, out),
        other => panic!("guest did not exit normally: {other:?}, output {out:?}"),
    }
}

const PROBE_ARGV: &[&str] = &["probe", "one", "two words"];
const PROBE_OUTPUT: &str = "argc=3\nargv[0]=probe\nargv[1]=one\nargv[2]=two words\n\
    env=yes\nexecfn=/tmp/probe\nplatform=x86_64\npagesz=4096\ntls=7\n";

#[test]
fn gcc_static_binary_runs_natively() {
    let Some(f) = gcc("run-static", PROBE, &["-static"]) else {
        return;
    };
    assert_eq!(load_and_run(&f, PROBE_ARGV), (42, PROBE_OUTPUT.to_string()));
}

#[test]
fn gcc_static_pie_binary_runs_natively() {
    let Some(f) = gcc("run-static-pie", PROBE, &["-static-pie"]) else {
        return;
    };
    assert_eq!(load_and_run(&f, PROBE_ARGV), (42, PROBE_OUTPUT.to_string()));
}

/// A real-world static program, if the machine has one (Debian's
/// busybox-static).
#[test]
fn busybox_runs_natively() {
    let Ok(f) = std::fs::read("/bin/busybox") else {
        assert!(
            std::env::var_os("CI").is_none(),
            "/bin/busybox is missing but CI is set: install busybox-static"
        );
        eprintln!("note: skipping, /bin/busybox is not installed");
        return;
    };
    // Debian's busybox-static is a static program: a loader that rejects
    // it is what this test is for, never a reason to skip.
    if let Err(e) = plan(&f) {
        panic!("the loader rejects /bin/busybox: {e}");
    }
    let out = load_and_run(
        &f,
        &[
            "busybox",
            "sh",
            "-c",
            "echo $HOTLIFT_TEST $0 $#; exit 3",
            "a",
            "b",
        ],
    );
    assert_eq!(out, (3, "yes a 1\n".to_string()));
}

/// I4: an image loaded from its file (whole pages mapped from it) holds
/// the same bytes, page for page, as the same image copied from its
/// bytes; and the mapped pages are the file's (real programs: ld.so and
/// `/bin/true`, position-independent; python, at its link address).
#[test]
fn mapped_from_the_file_as_copied() {
    let _layout = layout_lock();
    let files = [
        "/lib64/ld-linux-x86-64.so.2",
        "/bin/true",
        "/usr/bin/python3.11",
    ];
    let mut checked = 0;
    for path in files.iter().filter(|p| std::path::Path::new(p).exists()) {
        let mapped = super::script::map_program(std::path::Path::new(path), || {
            std::io::Error::from_raw_os_error(libc::EACCES)
        })
        .unwrap();
        let p = plan(&mapped).unwrap();
        let role = if p.interp.is_some() {
            PROGRAM
        } else {
            Role::Interpreter
        };
        let snapshot = |image: &LoadedImage| -> Vec<(u64, Vec<u8>)> {
            image
                .regions
                .iter()
                .map(|r| {
                    let off = r.start.0 - image.bias;
                    (off, peek(r.start.0, r.end.0 - r.start.0))
                })
                .collect()
        };
        let copied = load(&mapped, &p, role).unwrap();
        let want = snapshot(&copied);
        unmap_image(&copied);
        let image = super::load_file(&mapped, &p, role).unwrap();
        let got = snapshot(&image);
        // Lines of the kernel's maps inside the image that name the file.
        let real = std::fs::canonicalize(path).unwrap();
        let real = real.to_str().unwrap();
        let from_file = std::fs::read_to_string("/proc/self/maps")
            .unwrap()
            .lines()
            .filter(|l| {
                let start = l
                    .split('-')
                    .next()
                    .and_then(|a| u64::from_str_radix(a, 16).ok())
                    .unwrap_or(0);
                start >= image.lo.0 && start < image.hi.0 && l.ends_with(real)
            })
            .count();
        unmap_image(&image);
        assert_eq!(want.len(), got.len(), "{path}: regions");
        for ((o, a), (_, b)) in want.iter().zip(&got) {
            assert!(a == b, "{path}: region at offset {o:#x} differs");
        }
        assert!(
            from_file > 0,
            "{path}: no page of the image is mapped from the file"
        );
        checked += 1;
    }
    assert!(checked >= 2, "ld.so and /bin/true exist on every Debian");
}
