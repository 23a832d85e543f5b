//! The records of an entry of kept translations (kept/mod.rs, module docs):
//! one block each, little-endian, after its `u32` length.

use hashbrown::HashMap;

use crate::backend::reloc::{Placement, Reloc, RelocKind};
use crate::backend::{Emitted, EmittedSite, EmittedSiteKind};
use crate::cache::BlockMeta;
use crate::monitor::ExitKind;
use crate::types::GuestAddr;

/// A kept block, decoded (K1). Made once and decoded into again for every
/// block placed (`decode_into`): its vectors keep their room, so placing
/// allocates nothing for them but the pc map, which the placed block
/// takes.
#[derive(Debug, Default)]
pub struct Recipe {
    /// Its module's base now (the placement's guest base).
    pub base: u64,
    pub start: u64,
    pub meta: BlockMeta,
    pub ring: bool,
    pub from: Placement,
    /// Its code as emitted, with its relocations, sites, pc map and `rep`
    /// ring words (`relocatable` unset: placed once relocated, not kept
    /// again).
    pub em: Emitted,
    pub guest: Vec<u8>,
}

/// Little-endian reads over a record, `None` past its end.
struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (a, b) = (self.0.get(..n)?, self.0.get(n..)?);
        self.0 = b;
        Some(a)
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    /// A count of items of at least `size` bytes each that fit.
    fn count(&mut self, size: usize) -> Option<usize> {
        let n = self.u32()? as usize;
        (n.checked_mul(size)? <= self.0.len()).then_some(n)
    }
}

/// K2: no trap block is kept.
fn exit_kind(v: u8) -> Option<ExitKind> {
    ExitKind::from_repr(v).filter(|&k| k != ExitKind::Trap)
}

fn reloc_kind(v: u8) -> Option<RelocKind> {
    Some(match v {
        0 => RelocKind::HostRel,
        1 => RelocKind::GuestRel,
        2 => RelocKind::GuestAbs64,
        3 => RelocKind::GuestAbs32,
        4 => RelocKind::BlockWord,
        5 => RelocKind::SiteId,
        _ => return None,
    })
}

fn reloc_code(k: RelocKind) -> u8 {
    match k {
        RelocKind::HostRel => 0,
        RelocKind::GuestRel => 1,
        RelocKind::GuestAbs64 => 2,
        RelocKind::GuestAbs32 => 3,
        RelocKind::BlockWord => 4,
        RelocKind::SiteId => 5,
    }
}

/// What [`Kept::record`] keeps of a block just emitted (`at.guest` is
/// filled in with its module's base).
#[derive(Debug, Clone, Copy)]
pub struct Made<'a> {
    pub meta: BlockMeta,
    pub ring: bool,
    pub at: Placement,
    pub em: &'a crate::backend::Emitted,
    pub guest: &'a [u8],
}

/// Append `m`'s record (module docs) to `out`; false (nothing appended)
/// for a block K2 leaves out.
pub(super) fn encode(out: &mut Vec<u8>, base: u64, m: &Made<'_>) -> bool {
    let em = m.em;
    // A direct exit below the module (AMD's 16-bit jumps go to an address
    // cut to 16 bits, frontend I5) is not relative to it: placed again
    // elsewhere, it would move with the module.
    let outside = em.sites.iter().any(|s| s.target.0 < base);
    if m.meta.exit == ExitKind::Trap || !em.relocatable || m.meta.guest < base || outside {
        return false;
    }
    let Ok(offset) = u32::try_from(m.meta.guest - base) else {
        return false;
    };
    let at = out.len();
    out.extend_from_slice(&[0; 4]);
    let u32s = |out: &mut Vec<u8>, v: &[u32]| {
        for x in v {
            out.extend_from_slice(&x.to_le_bytes());
        }
    };
    u32s(out, &[offset, m.meta.guest_len, m.meta.insns]);
    out.extend_from_slice(&[m.meta.exit as u8, u8::from(m.ring)]);
    for v in [
        m.meta.target,
        m.meta.next,
        m.at.host,
        m.at.guest,
        m.at.stubs,
    ] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    u32s(out, &[m.at.block, m.at.first_site, em.code.len() as u32]);
    out.extend_from_slice(&em.code);
    out.extend_from_slice(m.guest);
    u32s(out, &[em.relocs.len() as u32]);
    for r in &em.relocs {
        u32s(out, &[r.at]);
        out.push(reloc_code(r.kind));
    }
    u32s(out, &[em.sites.len() as u32]);
    for s in &em.sites {
        let (kind, field) = match s.kind {
            EmittedSiteKind::Direct { field } => (0u8, field as u32),
            EmittedSiteKind::Syscall => (1, 0),
            EmittedSiteKind::Trap(_) => {
                out.truncate(at);
                return false;
            }
        };
        out.push(kind);
        u32s(out, &[field]);
        out.extend_from_slice(&s.target.0.to_le_bytes());
    }
    u32s(out, &[em.pc_map.len() as u32]);
    for &(h, g) in &em.pc_map {
        u32s(out, &[h, g.0.wrapping_sub(m.meta.guest) as u32]);
    }
    u32s(out, &[em.rep_ring.len() as u32]);
    u32s(out, &em.rep_ring);
    let len = (out.len() - at - 4) as u32;
    out[at..at + 4].copy_from_slice(&len.to_le_bytes());
    true
}

/// Decode the record `rec` (its length taken off) of a module based at
/// `base` now into `r`; false if it does not hold together.
pub(super) fn decode_into(rec: &[u8], base: u64, r: &mut Recipe) -> bool {
    decode_fields(rec, base, r).is_some()
}

fn decode_fields(rec: &[u8], base: u64, r: &mut Recipe) -> Option<()> {
    let mut c = Cursor(rec);
    let offset = c.u32()?;
    let (guest_len, insns) = (c.u32()?, c.u32()?);
    let exit = exit_kind(c.u8()?)?;
    r.ring = c.u8()? != 0;
    let (target, next) = (c.u64()?, c.u64()?);
    let (host, guest_base, stubs) = (c.u64()?, c.u64()?, c.u64()?);
    let (block, first_site) = (c.u32()?, c.u32()?);
    let code_len = c.u32()? as usize;
    let em = &mut r.em;
    em.relocatable = false;
    em.code.clear();
    em.code.extend_from_slice(c.take(code_len)?);
    r.guest.clear();
    r.guest.extend_from_slice(c.take(guest_len as usize)?);
    let dg = base.wrapping_sub(guest_base);
    let moved = |v: u64| if v == 0 { 0 } else { v.wrapping_add(dg) };
    let start = base + u64::from(offset);
    em.relocs.clear();
    for _ in 0..c.count(5)? {
        let at = c.u32()?;
        em.relocs.push(Reloc {
            at,
            kind: reloc_kind(c.u8()?)?,
        });
    }
    em.sites.clear();
    for _ in 0..c.count(13)? {
        let kind = match (c.u8()?, c.u32()?) {
            (0, field) => EmittedSiteKind::Direct {
                field: field as usize,
            },
            (1, _) => EmittedSiteKind::Syscall,
            _ => return None,
        };
        em.sites.push(EmittedSite {
            kind,
            target: GuestAddr(moved(c.u64()?)),
        });
    }
    em.pc_map.clear();
    for _ in 0..c.count(8)? {
        let (h, g) = (c.u32()?, c.u32()?);
        em.pc_map.push((h, GuestAddr(start + u64::from(g))));
    }
    em.rep_ring.clear();
    for _ in 0..c.count(4)? {
        em.rep_ring.push(c.u32()?);
    }
    if !c.0.is_empty() {
        return None;
    }
    r.base = base;
    r.start = start;
    r.meta = BlockMeta {
        guest: start,
        target: moved(target),
        next: moved(next),
        guest_len,
        insns,
        exit,
    };
    r.from = Placement {
        host,
        guest: guest_base,
        block,
        first_site,
        stubs,
    };
    Some(())
}

/// Where each record of `payload` starts, by block offset; None if the
/// records do not hold together.
pub(super) fn index(payload: &[u8]) -> Option<HashMap<u32, u32>> {
    let mut at = 0usize;
    // Records are 300 bytes or so (a python entry: 10 MB for 33,000):
    // sized once, not grown (and rehashed) from empty.
    let mut ix = HashMap::with_capacity(payload.len() / 256);
    while at < payload.len() {
        let len = u32::from_le_bytes(payload.get(at..at + 4)?.try_into().ok()?) as usize;
        let offset = u32::from_le_bytes(payload.get(at + 4..at + 8)?.try_into().ok()?);
        payload.get(at + 4..at + 4 + len)?;
        ix.insert(offset, at as u32);
        at += 4 + len;
    }
    Some(ix)
}

/// An entry's table of where each record starts, by block offset, written
/// after its records when the entry is ([`seal`]) and read where it lies:
/// `(offset, start)` pairs of `u32`s sorted by offset, then their number.
/// Walking the records to index them at load took 3.5 ms of a python
/// start-up (33,000 records over 10 MB, a cache miss each); the table is
/// 8 bytes a record, read in order. About one block in forty that a run
/// places is not where the last one ended (the run before translated them
/// in another order): those are found by binary search.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Index {
    /// Bytes of records before the table.
    records: usize,
    n: usize,
}

impl Index {
    /// The table of a sealed payload; None if it does not hold together
    /// (its offsets not increasing, a start past the records).
    pub fn of(payload: &[u8]) -> Option<Index> {
        let body = payload.len().checked_sub(4)?;
        let n = u32::from_le_bytes(payload[body..].try_into().ok()?) as usize;
        let records = body.checked_sub(n.checked_mul(8)?)?;
        let ix = Index { records, n };
        let mut last = None;
        for k in 0..n {
            let (offset, at) = ix.pair(payload, k);
            if last.is_some_and(|l| l >= offset) || at as usize >= records {
                return None;
            }
            last = Some(offset);
        }
        Some(ix)
    }

    /// Records in the entry.
    pub fn len(&self) -> usize {
        self.n
    }

    /// The records of `payload` (the entry this indexes), without the
    /// table.
    pub fn records<'a>(&self, payload: &'a [u8]) -> &'a [u8] {
        &payload[..self.records]
    }

    fn pair(&self, payload: &[u8], k: usize) -> (u32, u32) {
        let at = self.records + 8 * k;
        let word = |i: usize| u32::from_le_bytes(payload[i..i + 4].try_into().expect("4 bytes"));
        (word(at), word(at + 4))
    }

    /// Where the record of the block at `offset` starts in the records.
    pub fn get(&self, payload: &[u8], offset: u32) -> Option<usize> {
        let (mut lo, mut hi) = (0, self.n);
        while lo < hi {
            let mid = (lo + hi) / 2;
            match self.pair(payload, mid) {
                (o, at) if o == offset => return Some(at as usize),
                (o, _) if o < offset => lo = mid + 1,
                _ => hi = mid,
            }
        }
        None
    }
}

/// Append the [`Index`] of the records in `payload` (None, and nothing
/// appended, if they do not hold together).
pub(super) fn seal(payload: &mut Vec<u8>) -> Option<()> {
    let mut pairs: Vec<(u32, u32)> = index(payload)?.into_iter().collect();
    pairs.sort_unstable();
    for (offset, at) in &pairs {
        payload.extend_from_slice(&offset.to_le_bytes());
        payload.extend_from_slice(&at.to_le_bytes());
    }
    payload.extend_from_slice(&(pairs.len() as u32).to_le_bytes());
    Some(())
}

/// The record starting at `at` of `payload` (its length taken off).
pub(super) fn record_at(payload: &[u8], at: usize) -> Option<&[u8]> {
    let len = u32::from_le_bytes(payload.get(at..at + 4)?.try_into().ok()?) as usize;
    payload.get(at + 4..at + 4 + len)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// mov rax, [rip+0x10]; call +0x100
    const GUEST: [u8; 12] = [0x48, 0x8b, 0x05, 0x10, 0, 0, 0, 0xe8, 0, 1, 0, 0];

    /// Append the record of `em`, made from [`GUEST`] at `meta.guest` in
    /// a module based at 0x40_0000, to `out`.
    fn encode_made(out: &mut Vec<u8>, em: &Emitted, meta: BlockMeta, at: Placement) {
        let m = Made {
            meta,
            ring: true,
            at,
            em,
            guest: &GUEST,
        };
        assert!(encode(out, 0x40_0000, &m));
    }

    fn made_block() -> (crate::backend::Emitted, BlockMeta, Placement) {
        let at = Placement {
            host: 0x1000_0000,
            guest: 0x40_0000,
            block: 3,
            first_site: 9,
            stubs: 0x0fff_0000,
        };
        let b = crate::frontend::lift_block(&GUEST, GuestAddr(0x40_1000), 64).unwrap();
        let env = crate::backend::EmitEnv {
            host_base: at.host,
            first_site: at.first_site,
            prologue: crate::backend::Prologue::Ring { id: at.block },
            stubs: crate::contract::ExitStubs {
                site: at.stubs,
                miss: at.stubs + 0x14,
                miss_rip: at.stubs + 0x38,
            },
        };
        let em = crate::backend::emit_block(&b, &env).unwrap();
        (em, crate::dispatch::profiling::block_meta(&b), at)
    }

    #[test]
    fn a_record_decodes_to_the_block_moved_with_its_module() {
        let (em, meta, at) = made_block();
        let mut out = Vec::new();
        encode_made(&mut out, &em, meta, at);
        let ix = index(&out).unwrap();
        let rec = record_at(&out, ix[&0x1000] as usize).unwrap();
        // The module is at 0x50_0000 now. One recipe decoded into again
        // and again, as placing does: every shorter piece of the record is
        // refused, not misread, and leaves nothing behind in it.
        let mut r = Recipe::default();
        for n in (0..rec.len()).rev() {
            assert!(!decode_into(&rec[..n], 0x50_0000, &mut r), "cut at {n}");
        }
        assert!(decode_into(rec, 0x50_0000, &mut r));
        assert_eq!(r.start, 0x50_1000);
        assert_eq!(r.meta.target, meta.target + 0x10_0000);
        assert_eq!(r.meta.next, meta.next + 0x10_0000);
        assert_eq!(r.em.code, em.code);
        assert_eq!(r.guest, GUEST);
        assert_eq!(r.em.relocs, em.relocs);
        assert_eq!(r.from, at);
        assert_eq!(r.em.sites.len(), em.sites.len());
        assert_eq!(r.em.sites[0].target.0, em.sites[0].target.0 + 0x10_0000);
        assert_eq!(
            (r.em.pc_map.len(), r.em.pc_map[0].1),
            (em.pc_map.len(), GuestAddr(0x50_1000))
        );
        assert_eq!(r.em.rep_ring, em.rep_ring);
        assert!(index(&out[..out.len() - 1]).is_none());
    }

    /// A sealed entry's table finds every record by its block's offset,
    /// none for a block it does not hold, and a table that does not hold
    /// together is refused whole.
    #[test]
    fn a_sealed_entry_finds_its_records_by_offset() {
        let (em, meta, at) = made_block();
        let mut out = Vec::new();
        // Recorded out of order, as a run translates them.
        for off in [0x3000u64, 0x1000, 0x2000] {
            let meta = BlockMeta {
                guest: 0x40_0000 + off,
                ..meta
            };
            encode_made(&mut out, &em, meta, at);
        }
        let records = out.len();
        seal(&mut out).unwrap();
        let ix = Index::of(&out).unwrap();
        assert_eq!((ix.len(), ix.records(&out).len()), (3, records));
        for off in [0x1000u32, 0x2000, 0x3000] {
            let rec = record_at(ix.records(&out), ix.get(&out, off).unwrap()).unwrap();
            assert_eq!(rec[..4], off.to_le_bytes());
        }
        assert_eq!(ix.get(&out, 0x1800), None);
        // Cut, a count past the payload, offsets out of order.
        assert!(Index::of(&out[..out.len() - 1]).is_none());
        let mut big = out.clone();
        let n = big.len() - 4;
        big[n..].copy_from_slice(&1000u32.to_le_bytes());
        assert!(Index::of(&big).is_none());
        let mut swapped = out.clone();
        let t = records;
        let (a, b) = (swapped[t..t + 8].to_vec(), swapped[t + 8..t + 16].to_vec());
        swapped[t..t + 8].copy_from_slice(&b);
        swapped[t + 8..t + 16].copy_from_slice(&a);
        assert!(Index::of(&swapped).is_none());
        // An empty entry (a second one emptied) seals to a count of 0.
        let mut empty = Vec::new();
        seal(&mut empty).unwrap();
        assert_eq!(Index::of(&empty).unwrap().len(), 0);
    }
}
