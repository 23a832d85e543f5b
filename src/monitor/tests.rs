//! The monitor's pause, idle and quiet protocols (I4-I6).

use super::*;

fn state(m: &Monitor) -> u32 {
    m.shared.pause.load(Ordering::Acquire)
}

fn wait_for(m: &Monitor, want: u32) {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while state(m) != want {
        assert!(std::time::Instant::now() < until, "state {}", state(m));
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// I4 and I5: a pause takes a sleeping monitor as it is, idle or
/// between rounds, and gives it back to its nap; pauses come one at a
/// time; an idle monitor stays idle across them, and the end still
/// finds it.
#[test]
fn a_pause_takes_a_sleeping_monitor_without_waking_it() {
    let blocks = Arc::new(BlockTable::new(64).unwrap());
    let idle = Some(std::time::Duration::from_secs(600));
    let mut m = Monitor::start(blocks, SbConfig::default(), None, None, None, idle);
    wait_for(&m, NAPPING);
    let p = m.pause();
    assert_eq!(state(&m), CLAIMED);
    // A second pause waits for the first to be given back.
    let second = std::thread::scope(|s| {
        let h = s.spawn(|| {
            let q = m.pause();
            let got = state(&m);
            drop(q);
            got
        });
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(state(&m), CLAIMED, "the second pause is waiting");
        drop(p);
        h.join().unwrap()
    });
    assert_eq!(second, CLAIMED);
    // Given back, it naps on (idle: no doorbell rang).
    wait_for(&m, NAPPING);
    let snap = m.finish();
    assert_eq!(snap.entries, 0);
}

fn shared() -> Shared {
    Shared {
        rings: Mutex::new(Vec::new()),
        blocks: Arc::new(BlockTable::new(4).unwrap()),
        stop: AtomicBool::new(false),
        doorbell: AtomicU32::new(0),
        pause: AtomicU32::new(RUNNING),
        quiet_until: AtomicU64::new(0),
        quiet_bell: AtomicU32::new(0),
        epoch: Mutex::new(None),
        epochs_asked: AtomicU32::new(0),
        epochs_ended: AtomicU32::new(0),
    }
}

/// I6: after a fork the monitor naps until the quiet time is over; a
/// doorbell rung since the fork began, or the time past, ends it.
#[test]
fn a_monitor_keeps_still_after_a_fork_until_rung() {
    let s = shared();
    assert!(!keep_still(&s), "no fork: no quiet");
    s.quiet_until
        .store(crate::clock::monotonic_ns() + 2_000_000, Ordering::Release);
    let t0 = std::time::Instant::now();
    while keep_still(&s) {}
    assert!(t0.elapsed() >= std::time::Duration::from_millis(2));
    assert_eq!(s.quiet_until.load(Ordering::Acquire), 0, "over");
    assert_eq!(s.pause.load(Ordering::Acquire), RUNNING);
    s.quiet_until.store(
        crate::clock::monotonic_ns() + 60_000_000_000,
        Ordering::Release,
    );
    ring::ring_doorbell(&s.doorbell);
    assert!(!keep_still(&s), "a ring since the fork: at once");
    assert_eq!(s.quiet_until.load(Ordering::Acquire), 0);
}

/// I5: an idle monitor's thread is born on its starter's core: the
/// starter pins itself where it is and gets its mask back.
#[test]
fn staying_here_pins_to_this_core_and_gives_the_mask_back() {
    let cores = || -> u32 {
        let m = crate::host::Affinity::current();
        m.mask.iter().map(|b| b.count_ones()).sum()
    };
    std::thread::spawn(move || {
        let n = cores();
        match stay_here() {
            None => assert!(n < 2, "{n} cores but not pinned"),
            Some(old) => {
                assert_eq!(cores(), 1);
                old.apply_to_current();
                assert_eq!(cores(), n);
            }
        }
    })
    .join()
    .unwrap();
}

/// I4: a running monitor is asked, stops at the top of its loop, and
/// runs on once given back.
#[test]
fn a_pause_asked_of_a_running_monitor_waits_for_its_loop_top() {
    let blocks = Arc::new(BlockTable::new(64).unwrap());
    let mut m = Monitor::start(blocks, SbConfig::default(), None, None, None, None);
    // Not napping: it cannot be claimed.
    let p = loop {
        wait_for(&m, RUNNING);
        if m.shared
            .pause
            .compare_exchange(RUNNING, PAUSE_ASKED, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            ring::ring_doorbell(&m.shared.doorbell);
            wait_for(&m, PAUSED);
            break Paused {
                shared: m.shared.clone(),
                back: RUNNING,
            };
        }
    };
    assert_eq!(state(&m), PAUSED);
    drop(p);
    assert_ne!(state(&m), PAUSED);
    let _ = m.finish();
}

#[test]
fn a_trickling_ring_makes_the_monitor_nap_longer_up_to_a_bound() {
    let b = BACKOFF_NS;
    // A batch's worth at the last nap's rate: as long as that takes.
    assert_eq!(trickle_nap(b, BATCH / 2, b), 2 * b);
    assert_eq!(trickle_nap(b, BATCH / 4, b), 4 * b);
    // Never shorter than the backoff, never past the bound.
    assert_eq!(trickle_nap(b, 2 * BATCH, b), b);
    assert_eq!(trickle_nap(b, 1, b), TRICKLE_NAP_NS);
    assert_eq!(trickle_nap(TRICKLE_NAP_NS, 1, b), TRICKLE_NAP_NS);
    // One core shared with the guest keeps its longer backoff.
    let shared = SHARED_CORE_BACKOFF_NS;
    assert_eq!(trickle_nap(shared, 1, shared), shared);
    assert_eq!(trickle_nap(shared, BATCH, shared), shared);
}
