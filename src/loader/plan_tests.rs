//! Tests of [`plan()`]: one per malformed case (each a single mutation of the
//! hand-built [`small_elf`]), real gcc-built programs, page-region merging,
//! and a randomized mutation loop that checks `plan` never panics.
//!
//! Invariants:
//! - I1: every `LoadError` variant `plan` can return has a test here that
//!   provokes exactly it.
//! - I2: every panic the mutation loop ever found has a regression test here
//!   (section "Regressions").
//! - I3: the mutation loop is deterministic (src/test_rng.rs, seeded): a failure
//!   prints the seed and iteration that reproduce it.

use super::plan::page_regions;
use super::testelf::*;
use super::{plan, ElfKind, LoadError, LoadPlan, Prot, Segment};

const BASE: u64 = 0x40_0000;

fn exec() -> Vec<u8> {
    small_elf(true, BASE)
}

fn pie() -> Vec<u8> {
    small_elf(false, 0)
}

/// `plan` must reject `bytes`; returns the error.
fn reject(bytes: &[u8]) -> LoadError {
    let e = plan(bytes).expect_err("plan accepted a malformed file");
    assert_eq!(e.exit_code(), 126, "{e}");
    assert!(!e.to_string().contains('\n'));
    e
}

const RW: Prot = Prot {
    r: true,
    w: true,
    x: false,
};
const RX: Prot = Prot {
    r: true,
    w: false,
    x: true,
};
const RWX: Prot = Prot {
    r: true,
    w: true,
    x: true,
};

// ---- valid files ----

#[test]
fn accepts_small_exec() {
    let p = plan(&exec()).unwrap();
    assert_eq!(
        p,
        LoadPlan {
            kind: ElfKind::Exec,
            entry: BASE + ENTRY_OFF,
            segments: vec![
                Segment {
                    vaddr: BASE,
                    memsz: 0x1000,
                    filesz: 0x1000,
                    offset: 0,
                    prot: RX
                },
                Segment {
                    vaddr: BASE + DATA_VOFF,
                    memsz: DATA_MEMSZ,
                    filesz: DATA_LEN,
                    offset: DATA_FOFF,
                    prot: RW,
                },
            ],
            phoff: PHOFF,
            phentsize: 56,
            phnum: PHNUM,
            phdr_vaddr: BASE + PHOFF,
            stack_exec: false,
            span: (BASE, BASE + 0x5000),
            align: 0x1000,
            build_id: Some(BUILD_ID.to_vec()),
            interp: None,
        }
    );
}

#[test]
fn accepts_small_static_pie() {
    let p = plan(&pie()).unwrap();
    assert_eq!(p.kind, ElfKind::Pie);
    assert_eq!(p.entry, ENTRY_OFF);
    assert_eq!(p.span, (0, 0x5000));
    assert_eq!(p.phdr_vaddr, PHOFF);
}

#[test]
fn phdr_vaddr_from_covering_load_without_pt_phdr() {
    let mut f = exec();
    put32(&mut f, phdr(PH_PHDR, ph::TYPE), PT_NULL);
    assert_eq!(plan(&f).unwrap().phdr_vaddr, BASE + PHOFF);
}

#[test]
fn phdr_vaddr_zero_when_headers_not_loaded() {
    // A copy of the table at the end of the file, outside every PT_LOAD.
    let mut f = exec();
    put32(&mut f, phdr(PH_PHDR, ph::TYPE), PT_NULL);
    let table = f[PHOFF as usize..PHOFF as usize + 56 * PHNUM as usize].to_vec();
    let at = f.len() as u64;
    f.extend(table);
    put64(&mut f, eh::PHOFF, at);
    assert_eq!(plan(&f).unwrap().phdr_vaddr, 0);
}

#[test]
fn stack_exec_from_gnu_stack() {
    let mut f = exec();
    put32(&mut f, phdr(PH_STACK, ph::FLAGS), 7);
    assert!(plan(&f).unwrap().stack_exec);
    put32(&mut f, phdr(PH_STACK, ph::TYPE), PT_NULL);
    assert!(
        !plan(&f).unwrap().stack_exec,
        "absent PT_GNU_STACK means no exec stack on x86-64"
    );
}

#[test]
fn build_id_absent_or_truncated() {
    let mut f = exec();
    put32(&mut f, 0x168, 1); // NT_GNU_ABI_TAG instead
    assert_eq!(plan(&f).unwrap().build_id, None);
    let mut f = exec();
    put32(&mut f, 0x164, 0xffff_ffff); // descsz past the segment
    assert_eq!(plan(&f).unwrap().build_id, None);
    let mut f = exec();
    put64(&mut f, phdr(PH_NOTE, ph::OFFSET), u64::MAX); // note outside the file
    assert_eq!(plan(&f).unwrap().build_id, None);
}

#[test]
fn empty_bss_only_segment_may_point_past_the_file() {
    let mut f = exec();
    put64(&mut f, phdr(PH_DATA, ph::FILESZ), 0);
    put64(&mut f, phdr(PH_DATA, ph::OFFSET), 0x10_0010);
    assert_eq!(plan(&f).unwrap().segments[1].filesz, 0);
}

#[test]
fn static_pie_with_dynamic_but_no_needed_is_static() {
    let mut f = pie();
    put32(&mut f, phdr(PH_NOTE, ph::TYPE), 2); // PT_DYNAMIC at 0x300
    put64(&mut f, phdr(PH_NOTE, ph::OFFSET), 0x300);
    put64(&mut f, phdr(PH_NOTE, ph::FILESZ), 32);
    put64(&mut f, 0x300, 0x6fff_fffb); // DT_FLAGS_1, then DT_NULL
    assert_eq!(plan(&f).unwrap().kind, ElfKind::Pie);
}

#[test]
fn segments_may_share_a_page() {
    // Text ends at BASE+0x1010 and data starts there: they share one page,
    // which gets both protections.
    let mut f = exec();
    put64(&mut f, phdr(PH_TEXT, ph::MEMSZ), 0x1010);
    put64(&mut f, phdr(PH_DATA, ph::VADDR), BASE + 0x1010);
    let p = plan(&f).unwrap();
    assert_eq!(
        page_regions(&p),
        vec![
            (BASE, BASE + 0x1000, RX),
            (BASE + 0x1000, BASE + 0x2000, RWX),
            (BASE + 0x2000, BASE + 0x4000, RW),
        ]
    );
}

#[test]
fn page_regions_merge_and_skip_gaps() {
    let p = plan(&exec()).unwrap();
    assert_eq!(
        page_regions(&p),
        vec![
            (BASE, BASE + 0x1000, RX),
            (BASE + 0x2000, BASE + 0x5000, RW)
        ]
    );
    // Same protections on both sides of a shared page: one region.
    let mut f = exec();
    put64(&mut f, phdr(PH_TEXT, ph::MEMSZ), 0x1010);
    put64(&mut f, phdr(PH_DATA, ph::VADDR), BASE + 0x1010);
    put32(&mut f, phdr(PH_DATA, ph::FLAGS), 5);
    assert_eq!(
        page_regions(&plan(&f).unwrap()),
        vec![(BASE, BASE + 0x4000, RX)]
    );
    // A tiny segment inside the previous segment's last page.
    let mut f = exec();
    put64(&mut f, phdr(PH_TEXT, ph::MEMSZ), 0x1010);
    put64(&mut f, phdr(PH_DATA, ph::VADDR), BASE + 0x1010);
    put64(&mut f, phdr(PH_DATA, ph::MEMSZ), 0x20);
    put32(&mut f, phdr(PH_DATA, ph::FLAGS), 4);
    assert_eq!(
        page_regions(&plan(&f).unwrap()),
        vec![(BASE, BASE + 0x2000, RX)]
    );
    put32(&mut f, phdr(PH_DATA, ph::FLAGS), 6);
    assert_eq!(
        page_regions(&plan(&f).unwrap()),
        vec![
            (BASE, BASE + 0x1000, RX),
            (BASE + 0x1000, BASE + 0x2000, RWX)
        ]
    );
}

// ---- identity ----

#[test]
fn rejects_empty_file() {
    assert!(matches!(reject(&[]), LoadError::Empty));
}

#[test]
fn rejects_short_file() {
    let f = exec();
    assert!(matches!(
        reject(&f[..3]),
        LoadError::TruncatedHeader { len: 3 }
    ));
    assert!(matches!(
        reject(&f[..63]),
        LoadError::TruncatedHeader { len: 63 }
    ));
}

#[test]
fn rejects_bad_magic() {
    let mut f = exec();
    f[..2].copy_from_slice(b"MZ");
    assert!(matches!(reject(&f), LoadError::BadMagic));
    assert!(matches!(reject(b"#/bin/sh\n"), LoadError::BadMagic));
}

#[test]
fn rejects_elfclass32() {
    let mut f = exec();
    f[eh::CLASS] = 1;
    assert!(matches!(reject(&f), LoadError::Elf32));
}

#[test]
fn rejects_invalid_class() {
    let mut f = exec();
    f[eh::CLASS] = 0;
    assert!(matches!(reject(&f), LoadError::BadClass(0)));
}

#[test]
fn rejects_big_endian() {
    let mut f = exec();
    f[eh::DATA] = 2;
    assert!(matches!(reject(&f), LoadError::BigEndian));
}

#[test]
fn rejects_invalid_data_encoding() {
    let mut f = exec();
    f[eh::DATA] = 3;
    assert!(matches!(reject(&f), LoadError::BadDataEncoding(3)));
}

#[test]
fn rejects_wrong_machine() {
    let mut f = exec();
    put16(&mut f, eh::MACHINE, 183); // EM_AARCH64
    assert!(matches!(
        reject(&f),
        LoadError::WrongMachine { machine: 183 }
    ));
    put16(&mut f, eh::MACHINE, 3); // EM_386
    assert!(matches!(reject(&f), LoadError::WrongMachine { machine: 3 }));
}

#[test]
fn rejects_scripts_naming_their_interpreter() {
    let e = reject(b"#!/bin/sh -e\nexec gzip -d \"$@\"\n");
    assert!(
        matches!(&e, LoadError::Script(i) if i == "/bin/sh -e"),
        "{e}"
    );
    assert!(e.to_string().contains("hotlift run -- INTERPRETER SCRIPT"));
    assert!(matches!(reject(b"#!"), LoadError::Script(i) if i.is_empty()));
}

#[test]
fn rejects_wrong_type() {
    for t in [0u16, 1, 4, 0xfe00] {
        let mut f = exec();
        put16(&mut f, eh::TYPE, t);
        assert!(matches!(reject(&f), LoadError::WrongType { e_type } if e_type == t));
    }
}

/// Points the NOTE program header at `path` (a PT_INTERP at file 0x300).
fn with_interp(mut f: Vec<u8>, path: &[u8]) -> Vec<u8> {
    put32(&mut f, phdr(PH_NOTE, ph::TYPE), PT_INTERP);
    put64(&mut f, phdr(PH_NOTE, ph::OFFSET), 0x300);
    put64(&mut f, phdr(PH_NOTE, ph::FILESZ), path.len() as u64);
    f[0x300..0x300 + path.len()].copy_from_slice(path);
    f
}

#[test]
fn reads_pt_interp() {
    for f in [exec(), pie()] {
        let p = plan(&with_interp(f, b"/lib64/ld-linux-x86-64.so.2\0")).unwrap();
        assert_eq!(
            p.interp.as_deref(),
            Some(&b"/lib64/ld-linux-x86-64.so.2"[..])
        );
        assert_eq!(p.build_id, None, "the NOTE header became PT_INTERP");
    }
    // The path ends at the first NUL, as the kernel's open_exec reads it.
    let p = plan(&with_interp(exec(), b"/a\0junk\0")).unwrap();
    assert_eq!(p.interp.as_deref(), Some(&b"/a"[..]));
    assert_eq!(plan(&exec()).unwrap().interp, None);
}

#[test]
fn rejects_bad_pt_interp() {
    for path in [&b"/lib/ld.so"[..], b"\0", b"x", b"\0\0"] {
        let e = reject(&with_interp(exec(), path));
        assert!(
            matches!(e, LoadError::BadInterpPath { .. }),
            "{path:?}: {e}"
        );
    }
    let mut f = with_interp(exec(), b"/a\0");
    put64(&mut f, phdr(PH_NOTE, ph::OFFSET), 0x10_0000);
    assert!(matches!(reject(&f), LoadError::BadInterpPath { .. }));
    put64(&mut f, phdr(PH_NOTE, ph::FILESZ), 4097);
    assert!(matches!(reject(&f), LoadError::BadInterpPath { .. }));
}

#[test]
fn rejects_bad_pt_interp_even_if_otherwise_malformed() {
    let mut f = with_interp(exec(), b"/a");
    put64(&mut f, phdr(PH_TEXT, ph::FILESZ), 0x10_0000);
    assert!(matches!(reject(&f), LoadError::BadInterpPath { .. }));
}

#[test]
fn rejects_dt_needed_without_interp() {
    let mut f = pie();
    put32(&mut f, phdr(PH_NOTE, ph::TYPE), 2); // PT_DYNAMIC at 0x300
    put64(&mut f, phdr(PH_NOTE, ph::OFFSET), 0x300);
    put64(&mut f, phdr(PH_NOTE, ph::FILESZ), 32);
    put64(&mut f, 0x300, 1); // DT_NEEDED
    assert!(matches!(reject(&f), LoadError::NeededWithoutInterp));
}

// ---- program header table ----

#[test]
fn rejects_wrong_phentsize() {
    let mut f = exec();
    put16(&mut f, eh::PHENTSIZE, 32);
    assert!(matches!(reject(&f), LoadError::BadPhentsize(32)));
}

#[test]
fn rejects_no_program_headers() {
    let mut f = exec();
    put16(&mut f, eh::PHNUM, 0);
    assert!(matches!(reject(&f), LoadError::NoLoadSegments));
}

#[test]
fn rejects_too_many_program_headers() {
    let mut f = exec();
    put16(&mut f, eh::PHNUM, 1171);
    assert!(matches!(reject(&f), LoadError::TooManyProgramHeaders(1171)));
    put16(&mut f, eh::PHNUM, 0xffff); // PN_XNUM
    assert!(matches!(
        reject(&f),
        LoadError::TooManyProgramHeaders(0xffff)
    ));
}

#[test]
fn rejects_program_headers_outside_file() {
    for phoff in [0x1030, 0x1000, u64::MAX - 10, u64::MAX] {
        let mut f = exec();
        put64(&mut f, eh::PHOFF, phoff);
        assert!(
            matches!(reject(&f), LoadError::ProgramHeadersOutOfBounds { phoff: p, phnum: 5 } if p == phoff),
            "phoff {phoff:#x}"
        );
    }
}

// ---- single segments ----

#[test]
fn rejects_filesz_greater_than_memsz() {
    let mut f = exec();
    put64(&mut f, phdr(PH_DATA, ph::MEMSZ), DATA_LEN - 1);
    assert!(matches!(
        reject(&f),
        LoadError::FileszExceedsMemsz { index: PH_DATA, .. }
    ));
}

#[test]
fn rejects_segment_beyond_file() {
    let mut f = exec();
    put64(&mut f, phdr(PH_DATA, ph::FILESZ), DATA_LEN + 1);
    assert!(matches!(
        reject(&f),
        LoadError::SegmentBeyondFile { index: PH_DATA, .. }
    ));
    // offset + filesz overflows
    let mut f = exec();
    put64(&mut f, phdr(PH_DATA, ph::OFFSET), u64::MAX - 0xfef);
    put64(&mut f, phdr(PH_DATA, ph::ALIGN), 0);
    assert!(matches!(
        reject(&f),
        LoadError::SegmentBeyondFile { index: PH_DATA, .. }
    ));
}

#[test]
fn rejects_misaligned_segment() {
    let mut f = exec();
    put64(&mut f, phdr(PH_DATA, ph::VADDR), BASE + DATA_VOFF + 8);
    assert!(matches!(
        reject(&f),
        LoadError::Misaligned {
            index: PH_DATA,
            align: 0x1000,
            ..
        }
    ));
    // align 0 and 1 mean no constraint
    put64(&mut f, phdr(PH_DATA, ph::ALIGN), 1);
    assert!(plan(&f).is_ok());
}

#[test]
fn rejects_address_overflow() {
    let mut f = pie();
    put64(&mut f, phdr(PH_DATA, ph::VADDR), 0xffff_ffff_ffff_f010);
    assert!(matches!(
        reject(&f),
        LoadError::AddressOverflow { index: PH_DATA, .. }
    ));
    // The sum fits but rounding it up to a page does not.
    put64(&mut f, phdr(PH_DATA, ph::MEMSZ), 0xfe0);
    assert!(matches!(
        reject(&f),
        LoadError::AddressOverflow { index: PH_DATA, .. }
    ));
}

// ---- whole image ----

#[test]
fn rejects_overlapping_segments() {
    let mut f = exec();
    put64(&mut f, phdr(PH_DATA, ph::VADDR), BASE + 0x0010);
    assert!(matches!(
        reject(&f),
        LoadError::OverlappingSegments {
            first: 1,
            second: 2
        }
    ));
}

#[test]
fn rejects_segments_out_of_order() {
    let mut f = exec();
    let (a, b) = (phdr(PH_TEXT, 0), phdr(PH_DATA, 0));
    let text = f[a..a + 56].to_vec();
    f.copy_within(b..b + 56, a);
    f[b..b + 56].copy_from_slice(&text);
    assert!(matches!(
        reject(&f),
        LoadError::SegmentsOutOfOrder { index: 2 }
    ));
}

#[test]
fn rejects_no_load_segments() {
    let mut f = exec();
    put32(&mut f, phdr(PH_TEXT, ph::TYPE), PT_NULL);
    put32(&mut f, phdr(PH_DATA, ph::TYPE), PT_NULL);
    assert!(matches!(reject(&f), LoadError::NoLoadSegments));
    // Only empty PT_LOADs.
    let mut f = exec();
    for i in [PH_TEXT, PH_DATA] {
        put64(&mut f, phdr(i, ph::FILESZ), 0);
        put64(&mut f, phdr(i, ph::MEMSZ), 0);
    }
    assert!(matches!(reject(&f), LoadError::NoLoadSegments));
}

#[test]
fn rejects_entry_outside_executable_segment() {
    for entry in [BASE + DATA_VOFF, 0, BASE + 0x1000, u64::MAX] {
        let mut f = exec();
        put64(&mut f, eh::ENTRY, entry);
        assert!(
            matches!(reject(&f), LoadError::EntryNotExecutable { entry: e } if e == entry),
            "entry {entry:#x}"
        );
    }
    let mut f = exec();
    put32(&mut f, phdr(PH_TEXT, ph::FLAGS), 4); // text r-- only
    assert!(matches!(reject(&f), LoadError::EntryNotExecutable { .. }));
}

#[test]
fn rejects_exec_below_mmap_min_addr() {
    let f = small_elf(true, 0);
    assert!(matches!(
        reject(&f),
        LoadError::SegmentOutOfRange {
            index: PH_TEXT,
            lo: 0,
            hi: 0x1000
        }
    ));
}

#[test]
fn rejects_exec_above_task_size() {
    let f = small_elf(true, 0x7fff_ffff_c000);
    assert!(matches!(
        reject(&f),
        LoadError::SegmentOutOfRange { index: PH_DATA, .. }
    ));
    let f = small_elf(true, 0xffff_ffff_0000_0000);
    assert!(matches!(
        reject(&f),
        LoadError::SegmentOutOfRange { index: PH_TEXT, .. }
    ));
}

#[test]
fn rejects_static_pie_spanning_the_address_space() {
    let mut f = pie();
    put64(&mut f, phdr(PH_DATA, ph::VADDR), 0x7fff_ffff_f010);
    assert!(matches!(reject(&f), LoadError::SpanTooLarge { .. }));
}

// ---- real programs ----

const HELLO: &str = "#include <stdio.h>\nint main(void) { puts(\"hi\"); return 0; }\n";

#[test]
fn accepts_gcc_static_binary() {
    let Some(f) = gcc("plan-static", HELLO, &["-static"]) else {
        return;
    };
    let p = plan(&f).unwrap();
    assert_eq!(p.kind, ElfKind::Exec);
    assert_eq!(p.phentsize, 56);
    assert!(p.segments.iter().any(|s| s.prot.x));
    assert!(p.span.0 >= 0x40_0000 && p.span.1 > p.span.0);
    assert_ne!(p.phdr_vaddr, 0);
    assert!(!p.stack_exec);
    assert!(
        p.build_id.as_ref().is_some_and(|id| !id.is_empty()),
        "{:?}",
        p.build_id
    );
}

#[test]
fn accepts_gcc_static_pie_binary() {
    let Some(f) = gcc("plan-static-pie", HELLO, &["-static-pie"]) else {
        return;
    };
    let p = plan(&f).unwrap();
    assert_eq!(p.kind, ElfKind::Pie);
    assert_eq!(p.span.0, 0);
}

#[test]
fn accepts_gcc_dynamic_binary() {
    let Some(f) = gcc("plan-dynamic", HELLO, &[]) else {
        return;
    };
    let p = plan(&f).unwrap();
    assert_eq!(p.kind, ElfKind::Pie);
    assert_eq!(
        p.interp.as_deref(),
        Some(&b"/lib64/ld-linux-x86-64.so.2"[..])
    );
}

// ---- regressions (I2) ----

// None found so far: 5.5M iterations of `mutation_loop` (seeded runs on a
// gcc -static binary and on `small_elf`) and a 4-minute libFuzzer run of
// `fuzz/fuzz_targets/elf_plan.rs` (6.4M inputs) found no panic. Each panic
// found later gets a test here. The edge cases below are the ones the
// parser's arithmetic was written for.

#[test]
fn hostile_notes_do_not_panic() {
    let cases: [(u32, u32, u64); 5] = [
        (u32::MAX, 0, 36),   // name runs past the segment
        (4, u32::MAX, 36),   // descriptor runs past the segment
        (0, 21, 36),         // next note would start past the end
        (4, 20, 35),         // segment one byte short of the note
        (5, 3, 36 + 4 + 11), // padding runs past the end
    ];
    for (namesz, descsz, filesz) in cases {
        let mut f = exec();
        put32(&mut f, 0x160, namesz);
        put32(&mut f, 0x164, descsz);
        put64(&mut f, phdr(PH_NOTE, ph::FILESZ), filesz);
        assert_eq!(
            plan(&f).unwrap().build_id,
            None,
            "namesz {namesz} descsz {descsz}"
        );
    }
    let mut f = exec();
    put64(&mut f, phdr(PH_NOTE, ph::ALIGN), 8); // 8-aligned notes: id at 0x170 still
    assert!(plan(&f).is_ok());
}

#[test]
fn hostile_dynamic_sections_do_not_panic() {
    for (offset, filesz) in [(0x300, 7), (0x300, 23), (u64::MAX, 16), (0x1020, 0x100)] {
        let mut f = pie();
        put32(&mut f, phdr(PH_NOTE, ph::TYPE), 2); // PT_DYNAMIC
        put64(&mut f, phdr(PH_NOTE, ph::OFFSET), offset);
        put64(&mut f, phdr(PH_NOTE, ph::FILESZ), filesz);
        put64(&mut f, 0x300, 1); // a DT_NEEDED tag, cut short by filesz 7
        let r = plan(&f);
        assert!(
            r.is_ok() || matches!(r, Err(LoadError::NeededWithoutInterp)),
            "{offset:#x}+{filesz}"
        );
    }
}

// ---- randomized mutations (I3) ----

/// A deterministic generator (its seed fixes the mutations).
type Rng = crate::test_rng::Seeded;

/// Applies 1–4 random mutations to `f` in place, biased towards the ELF and
/// program headers, recording the original bytes in `undo`; returns the
/// length to present to `plan` (truncation).
fn mutate(rng: &mut Rng, f: &mut [u8], undo: &mut Vec<(usize, u8)>) -> usize {
    let hot = f.len().min(64 + 56 * 16);
    let interesting = |rng: &mut Rng, len: usize| -> u64 {
        let pick = [
            0,
            1,
            0xfff,
            0x1000,
            0x1010,
            0xffff,
            len as u64,
            len as u64 - 1,
            len as u64 + 1,
            u32::MAX as u64,
            0x7fff_ffff_f000,
            u64::MAX,
            u64::MAX - 0xfff,
            1 << 63,
            0x40_0000,
            2,
            3,
            0x6474_e551,
        ];
        pick[rng.index(pick.len())]
    };
    fn set(f: &mut [u8], at: usize, v: u8, undo: &mut Vec<(usize, u8)>) {
        if at < f.len() {
            undo.push((at, f[at]));
            f[at] = v;
        }
    }
    for _ in 0..1 + rng.index(4) {
        let at = if rng.index(10) < 8 {
            rng.index(hot)
        } else {
            rng.index(f.len())
        };
        match rng.index(4) {
            0 => {
                let v = f[at] ^ (1 << rng.index(8));
                set(f, at, v, undo);
            }
            1 => {
                let v = rng.next() as u8;
                set(f, at, v, undo);
            }
            _ => {
                let at = at & !7;
                let width = [2, 4, 8][rng.index(3)];
                let v = interesting(rng, f.len()).to_le_bytes();
                for (i, &b) in v.iter().take(width).enumerate() {
                    set(f, at + i, b, undo);
                }
            }
        }
    }
    if rng.index(20) == 0 {
        rng.index(f.len() + 1)
    } else {
        f.len()
    }
}

/// Runs `iters` mutations of `original` through `plan`; returns how many
/// were accepted. A panic names the seed and iteration.
pub(crate) fn mutation_loop(original: &[u8], iters: usize, seed: u64) -> usize {
    let mut f = original.to_vec();
    let mut rng = Rng::new(seed);
    let mut undo = Vec::new();
    let mut accepted = 0;
    for i in 0..iters {
        let len = mutate(&mut rng, &mut f, &mut undo);
        let result = std::panic::catch_unwind(|| plan(&f[..len]).is_ok());
        match result {
            Ok(ok) => accepted += usize::from(ok),
            Err(_) => panic!("plan panicked: seed {seed:#x}, iteration {i}"),
        }
        for (at, b) in undo.drain(..).rev() {
            f[at] = b;
        }
    }
    accepted
}

#[test]
fn plan_survives_mutations_of_small_elf() {
    for (seed, f) in [(0x1234, exec()), (0x5678, pie())] {
        let accepted = mutation_loop(&f, 20_000, seed);
        assert!(accepted > 0 && accepted < 20_000, "accepted {accepted}");
    }
}

/// The long run against a real static binary (200k mutations by default;
/// `HOTLIFT_FUZZ_ITERS` changes it): `cargo test -- --ignored mutations_of_gcc`.
#[test]
#[ignore]
fn plan_survives_mutations_of_gcc_static_binary() {
    let Some(f) = gcc("plan-fuzz", HELLO, &["-static"]) else {
        return;
    };
    let iters = std::env::var("HOTLIFT_FUZZ_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200_000);
    let seed = std::env::var("HOTLIFT_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x9e37_79b9_7f4a_7c15);
    let accepted = mutation_loop(&f, iters, seed);
    eprintln!("{iters} mutations, {accepted} accepted");
}
