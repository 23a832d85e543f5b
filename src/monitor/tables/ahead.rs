//! Published blocks readied and made ahead of their words.
//!
//! A1: a process's own monitor readies the word-table entries of every
//!     block published so far, in id order, before it makes one (words.rs
//!     I4): a run that places a module's plan (dispatch/kept/ K6)
//!     publishes thousands of blocks at once and runs them out of id
//!     order, and the monitor of a warm python took 5,700 page faults on
//!     them, most a zero page, a write fault and a TLB shoot-down of the
//!     guest's CPU (monitor CPU 100 -> 78 ms).
//! A2: a round that found no word makes up to [`AHEAD`] published blocks
//!     not made yet that were placed with a plan ([`Tables::make_ahead`],
//!     `BlockTable::planned`: plain kept blocks, counted, dispatch/kept/
//!     K2): what such a block's words are comes from the block table
//!     alone, so a block made before its first word is the block made at
//!     it, and the monitor, idle while the guest places a plan, does then
//!     what its first words would otherwise wait for. (Blocks that push no
//!     word, such as the one-instruction restart after a store into code,
//!     are never made: making them would take their address from the
//!     blocks that count there.) Not in a forked child's monitor (words.rs I4:
//!     its blocks are met far apart). Not between an id epoch's fold and
//!     the block table's next epoch (epoch.rs): the ending epoch's
//!     blocks, still published then, made in the fresh tables would be
//!     taken for the next epoch's blocks of the same ids (the cursors
//!     start again when the table's epoch base moves).
//! A3: at the end, every block with a count is marked as run in the
//!     block table (`BlockTable::set_ran`), what the next plan keeps.

use super::Tables;
use crate::cache::BlockTable;
use crate::contract::block_word;

/// Blocks made ahead in one idle round (A2).
const AHEAD: usize = 4096;

#[derive(Debug, Default)]
pub(super) struct Ahead {
    /// Published blocks whose entries were readied (A1).
    readied: usize,
    /// Published blocks looked at by [`Tables::make_ahead`] (A2).
    made: usize,
    /// The block table's epoch base the cursors are for, and whether
    /// the tables folded its epoch (A2).
    base: u64,
    fenced: bool,
}

impl Ahead {
    /// The tables folded the epoch (A2).
    pub(super) fn fence(&mut self) {
        self.fenced = true;
    }
}

impl Tables {
    /// A1: the entries of the first `n` published blocks readied.
    pub(super) fn ready_published(&mut self, n: usize) {
        if n > self.ahead.readied {
            self.ahead.readied = n;
            self.words.ready_through(block_word(n as u32 - 1, 3));
            self.ways.ready_through(block_word(n as u32 - 1, 3));
        }
    }

    /// A2: up to [`AHEAD`] published blocks made before their words come.
    pub fn make_ahead(&mut self, blocks: &BlockTable) {
        if self.words.sparse() {
            return;
        }
        // The base before the blocks (block table I7).
        let base = blocks.epoch_base();
        if base != self.ahead.base {
            self.ahead = Ahead {
                base,
                ..Ahead::default()
            };
        } else if self.ahead.fenced {
            return;
        }
        let table = blocks.published();
        let end = table.len().min(self.ahead.made + AHEAD);
        for id in self.ahead.made..end {
            if blocks.planned(id as u32) {
                self.make_block(id as u32, table);
            }
        }
        self.ahead.made = end;
    }

    /// A3: the blocks that ran, marked in `blocks`, once the tables are
    /// finished (their counts hold superblocks' member runs).
    pub fn mark_ran(&self, blocks: &BlockTable) {
        for id in 0..self.block_hw {
            if self.count(id) > 0 {
                blocks.set_ran(id as u32);
            }
        }
    }
}
