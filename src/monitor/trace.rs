//! A record of everything the monitor's tables were given, for measuring
//! the per-entry loop without a guest: with `HOTLIFT_MONITOR_TRACE=FILE`
//! in hotlift's environment, each process's monitor writes `FILE.PID`:
//! its superblock configuration, every batch of ring words in the order
//! `Tables::process` took them, every superblock added between them, and
//! the block table at the end. `examples/monitor_replay.rs` gives them to
//! fresh tables again on one core, as often as asked: a change to the
//! tables is measured without the guest's core, the ring or the builder,
//! and under cachegrind as instruction and cache-miss counts that do not
//! vary from run to run (this VM's timings vary by ±25 %).
//!
//! I1: the tables replayed from a record end as the monitor's did (same
//!     batches, same superblocks between the same batches); the replay
//!     checks the totals it can (ring words, guest instructions and
//!     blocks, returns).
//! I2: what the record does not hold is not replayed: a forked child's
//!     superblocks inherited from its parent, `--selector pisat`'s mining.
//!     Such a record fails the check of I1 rather than replay wrongly.
//! I3: an id epoch's end (tables/epoch.rs) is a record of its own, with
//!     the ending epoch's blocks and their images: the replay folds there
//!     as the monitor did, and replays each epoch's words against its own
//!     blocks (ids name other blocks in each epoch).
//!
//! Format: "HLMT1\n", then records, each a tag byte and a u64 length
//! (little-endian) before its payload: `C` the configuration (JSON), `B` a
//! batch (thread u32, then the words), `S` a superblock (id u32, then its
//! `SbAccount` as JSON), `E` an id epoch's end (its `EpochEnd` as JSON),
//! `M` the block metas (JSON), `T` the totals at the end (JSON).

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::tables::{SbAccount, SbConfig};
use super::Tables;
use crate::cache::{BlockMeta, BlockTable};

const MAGIC: &[u8] = b"HLMT1\n";
/// The environment variable that asks for a record.
pub const ENV: &str = "HOTLIFT_MONITOR_TRACE";

static ON: AtomicBool = AtomicBool::new(false);
static OUT: Mutex<Option<BufWriter<File>>> = Mutex::new(None);

/// The configuration a record replays with.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Config {
    pub enabled: bool,
    pub block_threshold: u32,
    pub edge_threshold: u32,
}

/// What the monitor's tables held at the end (I1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Totals {
    pub entries: u64,
    pub returns: u64,
    pub insns: u64,
    pub blocks: u64,
}

/// One record.
#[derive(Debug)]
pub enum Event {
    Config(Config),
    Batch(u32, Vec<u32>),
    Superblock(u32, SbAccount),
    Epoch(super::tables::EpochEnd),
    Metas(Vec<BlockMeta>),
    Totals(Totals),
}

/// Start a record if the environment asks for one (a monitor's start).
pub fn start(sb: &SbConfig) {
    let Some(path) = std::env::var_os(ENV) else {
        return;
    };
    let mut path = std::path::PathBuf::from(path).into_os_string();
    path.push(format!(".{}", std::process::id()));
    let Ok(f) = File::create(&path) else {
        crate::host::say!(
            "hotlift: cannot write the monitor record {}",
            path.to_string_lossy()
        );
        return;
    };
    let mut w = BufWriter::with_capacity(1 << 20, f);
    let _ = w.write_all(MAGIC);
    *OUT.lock().expect("monitor record") = Some(w);
    ON.store(true, Ordering::Relaxed);
    let c = Config {
        enabled: sb.enabled && sb.windows.is_none(),
        block_threshold: sb.block_threshold,
        edge_threshold: sb.edge_threshold,
    };
    json(b'C', &[], &c);
}

fn record(tag: u8, head: &[u8], body: &[u8]) {
    let mut g = OUT.lock().expect("monitor record");
    let Some(w) = g.as_mut() else {
        return;
    };
    let len = (head.len() + body.len()) as u64;
    let ok = w.write_all(&[tag]).is_ok()
        && w.write_all(&len.to_le_bytes()).is_ok()
        && w.write_all(head).is_ok()
        && w.write_all(body).is_ok();
    if !ok {
        *g = None;
        ON.store(false, Ordering::Relaxed);
    }
}

fn json<T: Serialize>(tag: u8, head: &[u8], v: &T) {
    if let Ok(body) = serde_json::to_vec(v) {
        record(tag, head, &body);
    }
}

/// A batch thread `t`'s ring handed to the tables.
#[inline]
pub fn batch(t: usize, words: &[u32]) {
    if ON.load(Ordering::Relaxed) {
        let body: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        record(b'B', &(t as u32).to_le_bytes(), &body);
    }
}

/// Superblock `id` added to the tables.
pub fn superblock(id: u32, acc: &SbAccount) {
    if ON.load(Ordering::Relaxed) {
        json(b'S', &id.to_le_bytes(), acc);
    }
}

/// An id epoch ended (I3).
pub fn epoch(end: &super::tables::EpochEnd) {
    if ON.load(Ordering::Relaxed) {
        json(b'E', &[], end);
    }
}

/// The end: the block table and the totals; the record is complete.
pub fn end(metas: &[BlockMeta], totals: Totals) {
    if ON.load(Ordering::Relaxed) {
        json(b'M', &[], &metas);
        json(b'T', &[], &totals);
        ON.store(false, Ordering::Relaxed);
        if let Some(mut w) = OUT.lock().expect("monitor record").take() {
            let _ = w.flush();
        }
    }
}

fn de<T: serde::de::DeserializeOwned>(b: &[u8]) -> std::io::Result<T> {
    serde_json::from_slice(b)
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()))
}

/// Read a record (`FILE.PID`) back.
pub fn read(path: &std::path::Path) -> std::io::Result<Vec<Event>> {
    let bad = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string());
    let mut data = Vec::new();
    File::open(path)?.read_to_end(&mut data)?;
    let rest = data
        .strip_prefix(MAGIC)
        .ok_or_else(|| bad("not a monitor record"))?;
    let mut events = Vec::new();
    let mut at = 0;
    while at < rest.len() {
        let tag = rest[at];
        let len = rest
            .get(at + 1..at + 9)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")) as usize)
            .ok_or_else(|| bad("truncated record"))?;
        let p = rest
            .get(at + 9..at + 9 + len)
            .ok_or_else(|| bad("truncated record"))?;
        at += 9 + len;
        let u32_at = |k: usize| u32::from_le_bytes(p[k..k + 4].try_into().expect("4 bytes"));
        events.push(match tag {
            b'C' => Event::Config(de(p)?),
            b'B' if len >= 4 && len % 4 == 0 => {
                Event::Batch(u32_at(0), (1..len / 4).map(|k| u32_at(4 * k)).collect())
            }
            b'S' if len >= 4 => Event::Superblock(u32_at(0), de(&p[4..])?),
            b'E' => Event::Epoch(de(p)?),
            b'M' => Event::Metas(de(p)?),
            b'T' => Event::Totals(de(p)?),
            _ => return Err(bad("unknown record")),
        });
    }
    Ok(events)
}

/// A record replayed into fresh tables ([`replay`]), and what they hold.
#[derive(Debug)]
pub struct Replayed {
    pub snapshot: super::Snapshot,
    /// How long the batches and superblocks took, the end included.
    pub seconds: f64,
    /// Ring words replayed.
    pub words: u64,
}

/// Replay a record's batches and superblocks into fresh tables, in order,
/// and check its totals (I1); an error says what differs.
pub fn replay(events: &[Event]) -> Result<Replayed, String> {
    let mut cfg = SbConfig::default();
    // Each epoch's blocks (I3): the ended ones', then the last one's.
    let mut epochs: Vec<&[BlockMeta]> = Vec::new();
    let (mut last, mut want, mut words): (&[BlockMeta], _, u64) = (&[], None, 0);
    for e in events {
        match e {
            Event::Config(c) => {
                cfg.enabled = c.enabled;
                cfg.block_threshold = c.block_threshold;
                cfg.edge_threshold = c.edge_threshold;
            }
            Event::Epoch(end) => epochs.push(&end.metas),
            Event::Metas(m) => last = m,
            Event::Totals(t) => want = Some(*t),
            Event::Batch(_, w) => words += w.len() as u64,
            Event::Superblock(..) => {}
        }
    }
    let want = want.ok_or("the record has no end (its monitor did not finish)")?;
    epochs.push(last);
    let table = |metas: &[BlockMeta]| -> Result<BlockTable, String> {
        let cap = u32::try_from(metas.len() + 1).map_err(|_| "too many blocks")?;
        let blocks = BlockTable::new(cap).map_err(|e| format!("block table: {e}"))?;
        for m in metas {
            blocks.push_meta(*m);
        }
        Ok(blocks)
    };
    let mut epoch = 0;
    let mut blocks = table(epochs[0])?;
    let mut tables = Tables::new(cfg);
    let t0 = std::time::Instant::now();
    for e in events {
        match e {
            Event::Batch(t, w) => {
                tables.process(*t as usize, w, &blocks);
                // The builder takes them each round.
                tables.requests.clear();
            }
            Event::Superblock(id, acc) => {
                tables.add_superblock(*id, acc.clone(), epochs[epoch]);
            }
            Event::Epoch(end) => {
                tables.end_epoch(end);
                epoch += 1;
                blocks = table(epochs[epoch])?;
            }
            _ => {}
        }
    }
    tables.finish();
    let seconds = t0.elapsed().as_secs_f64();
    let got = tables.totals();
    if got != want {
        return Err(format!("replayed totals {got:?}, the monitor's {want:?}"));
    }
    Ok(Replayed {
        snapshot: tables.snapshot(),
        seconds,
        words,
    })
}
