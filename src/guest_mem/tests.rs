//! Tests of guest_mem: regions, placeholders, views.
use super::*;

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

#[test]
fn insert_remove_split() {
    let mut m = GuestMem::new();
    m.insert(0x1000, 0x5000, RW);
    m.remove(0x2000, 0x3000);
    assert!(m.owns_all(0x1000, 0x2000));
    assert!(!m.owns_all(0x1000, 0x3000));
    assert!(m.owns_all(0x3000, 0x5000));
    assert_eq!(m.find(0x2800), None);
    assert_eq!(m.regions().count(), 2);
}

#[test]
fn protect_and_exec_end() {
    let mut m = GuestMem::new();
    m.insert(0x400000, 0x402000, RX);
    m.insert(0x402000, 0x404000, RX);
    m.insert(0x404000, 0x405000, RW);
    assert_eq!(m.exec_end(0x400010), Some(0x404000));
    m.protect(0x401000, 0x402000, RW);
    assert_eq!(m.exec_end(0x400010), Some(0x401000));
    assert_eq!(m.exec_end(0x401010), None);
    assert_eq!(m.exec_end(0x300000), None);
}

#[test]
fn highest_held_gap_takes_the_top_of_the_highest_run_that_fits() {
    let mut m = GuestMem::new();
    // Two adjacent placeholders (one run of 3 pages) under a guest
    // page, a lone one below, a big one above the ceiling.
    m.hold(0x10000, 0x11000);
    m.hold(0x20000, 0x22000);
    m.hold(0x22000, 0x23000);
    m.insert(0x23000, 0x24000, RW);
    m.hold(0x24000, 0x40000);
    assert_eq!(m.highest_held_gap(0x24000, 0x3000), Some(0x20000));
    assert_eq!(m.highest_held_gap(0x24000, 0x1000), Some(0x22000));
    // The ceiling cuts a run.
    assert_eq!(m.highest_held_gap(0x30000, 0x4000), Some(0x2c000));
    assert_eq!(m.highest_held_gap(0x26000, 0x3000), Some(0x20000));
    // A guest page splits a run: nothing of 4 pages below it.
    assert_eq!(m.highest_held_gap(0x24000, 0x4000), None);
    m.insert(0x21000, 0x22000, RW);
    assert_eq!(m.highest_held_gap(0x24000, 0x2000), None);
    assert_eq!(m.highest_held_gap(0x24000, 0x1000), Some(0x22000));
}

#[test]
fn placeholders_and_guest_pages_never_overlap() {
    let mut m = GuestMem::new();
    m.hold(0x10000, 0x20000);
    m.insert(0x14000, 0x16000, RW);
    assert!(m.held_all(0x10000, 0x14000) && m.held_all(0x16000, 0x20000));
    assert!(!m.held_all(0x10000, 0x20000));
    assert_eq!(
        m.held(0x12000, 0x18000).collect::<Vec<_>>(),
        [(0x12000, 0x14000), (0x16000, 0x18000)]
    );
    assert!(m.claimable(0x10000, 0x20000));
    assert!(!m.claimable(0x10000, 0x21000));
    assert!(m.owns_any(0x13000, 0x15000) && !m.owns_any(0x16000, 0x20000));
    assert_eq!(
        m.owned(0, u64::MAX).collect::<Vec<_>>(),
        [(0x14000, 0x16000)]
    );
    // Given back: a placeholder again, not guest memory.
    m.hold(0x15000, 0x16000);
    assert!(!m.owns_all(0x15000, 0x16000) && m.held_all(0x15000, 0x20000));
    m.release(0x18000, 0x19000);
    assert!(!m.claimable(0x10000, 0x20000) && m.claimable(0x19000, 0x20000));
}

/// G1, G2: both readers give the bytes at any alignment and length, and
/// the comparison finds any byte that differs;
/// the page-wise reader keeps the readable prefix before an
/// unreadable page.
#[test]
#[allow(unsafe_code)]
fn readers_copy_exactly_what_is_there() {
    let data: Vec<u8> = (0..300u32).map(|i| (i * 7 + 3) as u8).collect();
    let base = data.as_ptr() as u64;
    for start in [0usize, 1, 7, 8, 13] {
        for len in [0usize, 1, 5, 8, 9, 64, 200] {
            let want = &data[start..start + len];
            assert_eq!(copy_mapped(base + start as u64, len), want, "{start}+{len}");
            assert_eq!(read_prefix(0, base + start as u64, len), want);
            assert!(mapped_equals(base + start as u64, want));
            for k in [0, len / 2, len.saturating_sub(1)]
                .into_iter()
                .filter(|&k| k < len)
            {
                let mut other = want.to_vec();
                other[k] ^= 1;
                assert!(
                    !mapped_equals(base + start as u64, &other),
                    "{start}+{len}: {k}"
                );
            }
        }
    }
    // Two pages, the second unreadable: the prefix is the first's.
    // SAFETY: a fresh private mapping of two pages, unmapped below.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            2 * PAGE as usize,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    assert_ne!(p, libc::MAP_FAILED);
    // SAFETY: the second page of the mapping above.
    unsafe {
        std::ptr::write_bytes(p as *mut u8, 0xab, PAGE as usize);
        libc::mprotect(p.add(PAGE as usize), PAGE as usize, libc::PROT_NONE);
    }
    let at = p as u64 + PAGE - 10;
    assert_eq!(read_prefix(0, at, 100), vec![0xab; 10]);
    assert!(read_prefix(0, at + 10, 100).is_empty());
    assert_eq!(read_bytes(at, 100), None);
    // Nothing at all, in the unreadable page: nothing is read.
    assert!(copy_mapped(at + 13, 0).is_empty() && mapped_equals(at + 13, &[]));
    // SAFETY: unmaps the mapping made above.
    unsafe { libc::munmap(p, 2 * PAGE as usize) };
}

#[test]
fn twins_are_the_same_file_pages_in_other_views() {
    let mut m = GuestMem::new();
    assert!(m.twins(0x10000, 0x11000).is_empty());
    // A writable view of file (1, 7) from offset 0x1000, an executable
    // one from offset 0, another file's view, and a private mapping.
    m.insert(0x10000, 0x14000, RW);
    m.add_view(0x10000, 0x14000, 1, 7, 0x1000);
    m.insert(0x40000, 0x44000, RX);
    m.add_view(0x40000, 0x44000, 1, 7, 0);
    m.insert(0x50000, 0x54000, RX);
    m.add_view(0x50000, 0x54000, 1, 8, 0);
    m.insert(0x60000, 0x64000, RX);
    assert!(m.has_views());
    // File page 0x2000: 0x11000 in the first, 0x42000 in the second.
    assert_eq!(m.twins(0x11000, 0x12000), vec![(0x42000, 0x43000)]);
    assert_eq!(m.twins(0x42000, 0x43000), vec![(0x11000, 0x12000)]);
    // File page 0: only the executable view has it.
    assert!(m.twins(0x40000, 0x41000).is_empty());
    // A range: clipped to what the other view maps.
    assert_eq!(m.twins(0x40000, 0x44000), vec![(0x10000, 0x13000)]);
    assert!(m.twins(0x50000, 0x51000).is_empty());
    assert!(m.twins(0x60000, 0x61000).is_empty());
    assert_eq!(
        m.views_of(1, 7),
        vec![(0x10000, 0x14000), (0x40000, 0x44000)]
    );
    // A protection change keeps the view; an unmapped piece is no view.
    m.protect(0x11000, 0x12000, RX);
    assert_eq!(m.twins(0x42000, 0x43000), vec![(0x11000, 0x12000)]);
    m.remove(0x11000, 0x12000);
    assert!(m.twins(0x42000, 0x43000).is_empty());
    assert_eq!(m.twins(0x43000, 0x44000), vec![(0x12000, 0x13000)]);
    // A mapping over a view ends it.
    m.insert(0x40000, 0x44000, RX);
    assert!(m.twins(0x12000, 0x13000).is_empty());
}
