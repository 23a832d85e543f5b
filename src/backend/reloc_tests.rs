//! reloc.rs I1 on real code: every block of a system library's text,
//! emitted in one placement and relocated to another, has the bytes
//! emitting it there gives. A field the emitter writes without recording
//! it shows up here as a byte that differs.

use super::reloc::{relocate, Placement};
use super::{emit_block, EmitEnv, Prologue};
use crate::contract::ExitStubs;
use crate::frontend::lift_block;
use crate::types::GuestAddr;

const STUBS: ExitStubs = ExitStubs {
    site: 0x0fff_0000,
    miss: 0x0fff_0014,
    miss_rip: 0x0fff_0038,
};

/// The executable section `.text` of the ELF file at `path`.
fn text_of(path: &str) -> Option<Vec<u8>> {
    let bytes = std::fs::read(path).ok()?;
    let elf = goblin::elf::Elf::parse(&bytes).ok()?;
    let sh = elf
        .section_headers
        .iter()
        .find(|s| elf.shdr_strtab.get_at(s.sh_name) == Some(".text"))?;
    Some(bytes.get(sh.file_range()?)?.to_vec())
}

fn env(p: &Placement, ring: bool) -> EmitEnv {
    let d = p.stubs.wrapping_sub(STUBS.site);
    EmitEnv {
        host_base: p.host,
        first_site: p.first_site,
        prologue: if ring {
            Prologue::Ring { id: p.block }
        } else {
            Prologue::None
        },
        stubs: ExitStubs {
            site: p.stubs,
            miss: STUBS.miss.wrapping_add(d),
            miss_rip: STUBS.miss_rip.wrapping_add(d),
        },
    }
}

/// Emit the block at `off` of `text` in placement `p` (its guest code at
/// `p.guest + off`); None where the bytes do not lift.
fn emit_at(text: &[u8], off: usize, p: &Placement, ring: bool) -> Option<(u64, super::Emitted)> {
    let end = text.len().min(off + 64 * 15 + 15);
    let b = lift_block(&text[off..end], GuestAddr(p.guest + off as u64), 64).ok()?;
    let len = b.end.0 - b.start.0;
    let em = emit_block(&b, &env(p, ring)).expect("emits");
    Some((len, em))
}

/// Every block of `text`, one after another, checked from `a` to each of
/// `to`; how many were checked.
fn check_text(text: &[u8], a: &Placement, to: &[Placement], ring: bool) -> usize {
    let (mut off, mut checked) = (0usize, 0usize);
    while off < text.len() {
        let Some((len, ea)) = emit_at(text, off, a, ring) else {
            off += 1;
            continue;
        };
        assert!(ea.relocatable, "block at text+{off:#x} is not relocatable");
        for b in to {
            let (_, eb) = emit_at(text, off, b, ring).expect("lifts at any address");
            let mut moved = ea.code.clone();
            assert!(
                relocate(&mut moved, &ea.relocs, a, b),
                "block at text+{off:#x}: a field out of range from {a:?} to {b:?}"
            );
            if moved != eb.code {
                let at = moved.iter().zip(&eb.code).position(|(x, y)| x != y);
                panic!(
                    "block at text+{off:#x} from {a:?} to {b:?}: {} vs {} bytes, first \
                     difference at {at:?}; relocs {:?}",
                    moved.len(),
                    eb.code.len(),
                    ea.relocs
                );
            }
            let dg = b.guest.wrapping_sub(a.guest);
            let targets = |e: &super::Emitted, d: u64| -> Vec<u64> {
                e.sites.iter().map(|s| s.target.0.wrapping_add(d)).collect()
            };
            assert_eq!(
                targets(&ea, dg),
                targets(&eb, 0),
                "site targets move with the guest"
            );
            let fields = |e: &super::Emitted| -> Vec<String> {
                e.sites.iter().map(|s| format!("{:?}", s.kind)).collect()
            };
            assert_eq!(fields(&ea), fields(&eb));
            let pcs = |e: &super::Emitted, d: u64| -> Vec<(u32, u64)> {
                e.pc_map
                    .iter()
                    .map(|&(h, g)| (h, g.0.wrapping_add(d)))
                    .collect()
            };
            assert_eq!(pcs(&ea, dg), pcs(&eb, 0));
            assert_eq!(ea.rep_ring, eb.rep_ring);
        }
        checked += 1;
        off += len.max(1) as usize;
    }
    checked
}

fn libc_text() -> Vec<u8> {
    [
        "/lib/x86_64-linux-gnu/libc.so.6",
        "/usr/lib/x86_64-linux-gnu/libc.so.6",
    ]
    .iter()
    .find_map(|p| text_of(p))
    .expect("the system's libc.so.6 has a .text")
}

#[test]
fn relocated_blocks_are_the_blocks_emitted_there() {
    let text = libc_text();
    // Near: guest code within rel32 reach of the code cache (a program
    // below 2 GiB), RIP-relative operands kept, return addresses pushed
    // as imm32. Each of host, guest, ids moved alone, then all at once.
    let near = Placement {
        host: 0x1000_0000,
        guest: 0x40_0000,
        block: 7,
        first_site: 100,
        stubs: STUBS.site,
    };
    let near_to = [
        Placement {
            host: 0x1001_2340,
            ..near
        },
        Placement {
            guest: 0x42_1000,
            ..near
        },
        Placement {
            block: 9000,
            ..near
        },
        Placement {
            first_site: 5,
            ..near
        },
        Placement {
            stubs: STUBS.site + 0x20_0000,
            ..near
        },
        Placement {
            host: 0x0ff0_0000,
            guest: 0x50_3000,
            block: 3,
            first_site: 77_777,
            stubs: STUBS.site - 0x1000,
        },
    ];
    // Far: a library at 0x7f..., every operand through an absolute
    // address, return addresses from the block's constants.
    let far = Placement {
        guest: 0x7f12_3450_0000,
        ..near
    };
    let far_to = [Placement {
        host: 0x1100_0000,
        guest: 0x7fa0_0001_0000,
        block: 123_456,
        first_site: 9,
        stubs: STUBS.site + 0x4000,
    }];
    let mut n = 0;
    for ring in [true, false] {
        n += check_text(&text, &near, &near_to, ring);
        n += check_text(&text, &far, &far_to, ring);
    }
    assert!(n > 10_000, "only {n} blocks checked");
}

#[test]
fn a_field_out_of_range_is_refused() {
    // `push imm32` of a return address: valid only below 2 GiB.
    let text = [0xe8, 0, 0, 0, 0, 0xc3];
    let a = Placement {
        host: 0x1000_0000,
        guest: 0x40_0000,
        block: 1,
        first_site: 0,
        stubs: STUBS.site,
    };
    let (_, em) = emit_at(&text, 0, &a, true).unwrap();
    let mut code = em.code.clone();
    let far = Placement {
        guest: 0x7f00_0000_0000,
        ..a
    };
    assert!(!relocate(&mut code, &em.relocs, &a, &far));
}
