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
//!     not made yet ([`Tables::make_ahead`]): what a block's words are
//!     comes from the block table alone, so a block made before its first
//!     word is the block made at it, and the monitor, idle while the
//!     guest places a plan, does then what its first words would
//!     otherwise wait for. Not in a forked child's monitor (words.rs I4:
//!     its blocks are met far apart).
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
        let table = blocks.published();
        // An id epoch began again from 0 (epoch.rs).
        self.ahead.made = self.ahead.made.min(table.len());
        let end = table.len().min(self.ahead.made + AHEAD);
        for id in self.ahead.made..end {
            self.make_block(id as u32, table);
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
