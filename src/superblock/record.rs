//! What the profile keeps of a built superblock: its members with their
//! guest bytes, its exits, its host code and its IR listing.
//!
//! The builder keeps these raw (bytes, the plan itself) and they become
//! text only when a profile or a dump is written: formatting the IR and
//! hex-encoding the code was about half of the builder's time, a tenth of
//! the monitor's CPU in `python3 -c pass`, and a run without `--profile`
//! writes none of it.

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
}

impl SbRecord {
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
