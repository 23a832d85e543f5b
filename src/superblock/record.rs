//! What the profile keeps of a built superblock: its members with their
//! guest bytes, its exits, its host code and its IR listing.
//!
//! The builder keeps these raw (bytes, the plan itself) and they become
//! text only when a profile or a dump is written: formatting the IR and
//! hex-encoding the code was about half of the builder's time, a tenth of
//! the monitor's CPU in `python3 -c pass`, and a run without `--profile`
//! writes none of it.
//!
//! I1: a superblock built again (after a flush, an id epoch's end, a
//!     review that took it back) has one record: the latest build's, with
//!     the ids of the earlier ones, whose counts the profile sums. So a
//!     guest whose code is dropped and translated again for ever (a JIT)
//!     keeps one record per distinct superblock, not one per build (the
//!     builder keeps them by head: build.rs). Builds for different kinds
//!     of reason (counting, mining, the store) keep apart.

use std::fmt;
use std::sync::Arc;

use super::{Exit, Plan, Trigger};

/// Bytes as a hex string, a table lookup a byte (hex's own serializer
/// collects them char by char: a fifth of writing cc1's superblocks).
fn hex_text<S: serde::Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
    let mut text = vec![0u8; 2 * bytes.len()];
    hex::encode_to_slice(bytes, &mut text).map_err(serde::ser::Error::custom)?;
    s.serialize_str(std::str::from_utf8(&text).map_err(serde::ser::Error::custom)?)
}

/// A built superblock, for the profile and `hotlift dump`.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct SbRecord {
    pub id: u32,
    pub generation: u64,
    pub head: u64,
    pub trigger: Trigger,
    pub built_at_seconds: f64,
    pub built_after_entries: u64,
    pub members: Vec<MemberRecord>,
    /// Each member's parent (the member it follows; `u16::MAX` for the
    /// head). Empty in profiles older than superblock trees: each member
    /// follows the one before.
    #[serde(default)]
    pub parents: Vec<u16>,
    /// Members on the first path (the trace a tree grew from); absent in
    /// older profiles: all.
    #[serde(default)]
    pub spine: Option<u32>,
    pub exits: Vec<Exit>,
    /// Where its code is: 0 where a hand-made profile leaves it out, as
    /// the profile reader has always allowed (the perf map then leaves
    /// the superblock out).
    #[serde(default)]
    pub host: u64,
    #[serde(default)]
    pub host_size: u32,
    /// The host code (hex in the profile).
    #[serde(
        serialize_with = "hex_text",
        deserialize_with = "hex::serde::deserialize"
    )]
    pub host_code: Vec<u8>,
    pub ir: IrText,
    pub guest_instructions: u32,
    /// Ring entries the monitor had seen when the superblock was taken
    /// back (review.rs), if it was.
    #[serde(default)]
    pub retired_after_entries: Option<u64>,
    /// How many times this superblock was built (I1): the record is its
    /// latest build's; 1 in profiles older than the field.
    #[serde(default = "one")]
    pub builds: u32,
    /// The ids of its earlier builds (I1), whose counts the profile adds
    /// to the latest's.
    #[serde(skip)]
    pub earlier_ids: Vec<u32>,
}

fn one() -> u32 {
    1
}

/// The builder's records, one per distinct superblock (I1).
#[derive(Debug, Default)]
pub struct Records {
    list: Vec<SbRecord>,
    /// Head guest address → indices into `list`.
    at: hashbrown::HashMap<u64, Vec<u32>>,
}

impl Records {
    /// Keep a new build's record.
    pub fn keep(&mut self, rec: SbRecord) {
        let at = self.at.entry(rec.head).or_default();
        let list = &mut self.list;
        match at.iter().find(|&&i| list[i as usize].same_superblock(&rec)) {
            Some(&i) => {
                let old = std::mem::replace(&mut list[i as usize], rec);
                list[i as usize].replaces(old);
            }
            None => {
                at.push(list.len() as u32);
                list.push(rec);
            }
        }
    }

    /// The record of the superblock whose build `id` was.
    pub fn of_build(&mut self, id: u32) -> Option<&mut SbRecord> {
        self.list.iter_mut().find(|r| r.ids().any(|i| i == id))
    }

    /// Every record, in the order their superblocks were first built.
    pub fn take(&mut self) -> Vec<SbRecord> {
        self.at.clear();
        std::mem::take(&mut self.list)
    }
}

impl SbRecord {
    /// The ids of every build (I1).
    pub fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.earlier_ids.iter().copied().chain([self.id])
    }

    /// I1: the same superblock (members at the same addresses with the
    /// same guest bytes, the same shape and exits), built again for the
    /// same kind of reason (so that what the store built stays apart).
    pub fn same_superblock(&self, o: &SbRecord) -> bool {
        self.head == o.head
            && std::mem::discriminant(&self.trigger) == std::mem::discriminant(&o.trigger)
            && self.parents == o.parents
            && self.spine == o.spine
            && self.exits == o.exits
            && self.members.len() == o.members.len()
            && self
                .members
                .iter()
                .zip(&o.members)
                .all(|(a, b)| (a.addr, a.size, &a.code) == (b.addr, b.size, &b.code))
    }

    /// I1: `self`, built again, takes the place of `old`.
    pub fn replaces(&mut self, old: SbRecord) {
        let SbRecord {
            id,
            builds,
            earlier_ids,
            ..
        } = old;
        self.earlier_ids = earlier_ids;
        self.earlier_ids.push(id);
        self.builds = builds + 1;
    }

    /// The parent of member `i` (> 0).
    pub fn parent(&self, i: usize) -> usize {
        match self.parents.get(i) {
            Some(&p) if p != u16::MAX => p as usize,
            _ => i - 1,
        }
    }
}

/// One member, with its guest bytes (for disassembly in dumps).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct MemberRecord {
    pub block: u32,
    pub addr: u64,
    pub size: u32,
    pub instructions: u32,
    /// The guest code as it was when the superblock was built (hex in the
    /// profile; empty when it could not be read).
    #[serde(
        serialize_with = "hex_text",
        deserialize_with = "hex::serde::deserialize"
    )]
    pub code: Vec<u8>,
}

/// A superblock's IR listing: the plan it was emitted from (a run's own
/// superblocks, formatted when written) or the text a profile holds.
#[derive(Debug, Clone)]
pub enum IrText {
    Plan(Arc<Plan>),
    Text(String),
}

impl fmt::Display for IrText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IrText::Plan(p) => p.fmt(f),
            IrText::Text(t) => f.write_str(t),
        }
    }
}

impl serde::Serialize for IrText {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for IrText {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(IrText::Text)
    }
}
