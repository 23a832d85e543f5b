//! The short human summary `hotlift profile` prints on stderr: totals,
//! the top blocks by instructions executed (with their code), exit
//! classes, the syscall table and the ring statistics.

use std::fmt::Write as _;

use iced_x86::{Decoder, DecoderOptions, Formatter, IntelFormatter};

use super::{BlockRecord, Profile};

/// Top blocks shown, and instructions shown of each.
const TOP: usize = 10;
const LISTED: usize = 6;

impl Profile {
    /// The summary; `code(addr, len)` reads guest code bytes for the
    /// disassembly (None when they are gone).
    pub fn summary(&self, code: &dyn Fn(u64, usize) -> Option<Vec<u8>>) -> String {
        let mut s = String::new();
        let tot = &self.totals;
        let _ = writeln!(
            s,
            "hotlift profile: {} guest instructions in {} block executions ({} blocks translated)",
            tot.guest_instructions, tot.block_executions, tot.translated_blocks
        );
        s.push_str("exits:");
        for (k, v) in &tot.exits {
            let _ = write!(s, " {k}={v}");
        }
        s.push('\n');
        let mut top: Vec<&BlockRecord> = self.blocks.iter().filter(|b| b.count > 0).collect();
        top.sort_by_key(|b| std::cmp::Reverse(b.count * b.instructions as u64));
        s.push_str("top blocks by instructions executed:\n");
        for b in top.iter().take(TOP) {
            let sym = super::names::display(b.symbol.as_deref().unwrap_or("?"));
            let share = if tot.guest_instructions > 0 {
                100.0 * (b.count * b.instructions as u64) as f64 / tot.guest_instructions as f64
            } else {
                0.0
            };
            let _ = writeln!(
                s,
                "  {:#x} {}+{:#x} {sym}: {} insns ({share:.1}%), {} runs",
                b.addr,
                b.module,
                b.offset,
                b.count * b.instructions as u64,
                b.count
            );
            if let Some(bytes) = code(b.addr, b.size as usize) {
                disassemble(&mut s, &bytes, b.addr, b.instructions as usize);
            }
        }
        if !self.syscalls.is_empty() {
            s.push_str("syscalls:\n");
            for c in &self.syscalls {
                let _ = writeln!(
                    s,
                    "  {:<18} {:>8} calls {:>6} errors {:>10.6} s",
                    c.name, c.count, c.errors, c.seconds
                );
            }
        }
        let t = &self.times;
        let blocks = self.totals.translated_blocks;
        let _ = writeln!(
            s,
            "start-up and translation: {:.1} ms of hotlift set-up before the first guest \
             instruction, {} blocks translated in {:.1} ms ({:.2} us a block), {:.1} ms wall in all",
            t.setup_seconds * 1e3,
            blocks,
            t.translation_seconds * 1e3,
            t.translation_seconds * 1e6 / blocks.max(1) as f64,
            t.wall_seconds * 1e3,
        );
        let _ = writeln!(
            s,
            "end: {:.1} ms waiting for the monitor to take in the rings, {:.1} ms reading \
             symbols and building the profile",
            t.drain_seconds * 1e3,
            t.profile_seconds * 1e3,
        );
        if let Some(r) = &self.ring {
            let _ = writeln!(
                s,
                "monitor: {} ring words ({:.3} per block run), {:.3} s CPU ({}), {:.2} ns per word; \
                 guest waited {} times ({:.6} s), peak lag {} words",
                r.entries,
                r.words_per_block,
                self.times.monitor_cpu_seconds,
                if self.monitor.pinned { "pinned" } else { "unpinned" },
                r.monitor_ns_per_word,
                r.waits,
                r.wait_seconds,
                r.peak_lag_entries,
            );
        }
        s
    }
}

/// Up to `LISTED` of the block's `n` instructions, Intel syntax, indented.
fn disassemble(s: &mut String, bytes: &[u8], addr: u64, n: usize) {
    let mut d = Decoder::with_ip(64, bytes, addr, DecoderOptions::NONE);
    let mut f = IntelFormatter::new();
    f.options_mut().set_branch_leading_zeros(false);
    f.options_mut().set_show_branch_size(false);
    f.options_mut().set_hex_prefix("0x");
    f.options_mut().set_hex_suffix("");
    let mut text = String::new();
    for (i, insn) in d.iter().take(n.min(LISTED)).enumerate() {
        text.clear();
        f.format(&insn, &mut text);
        let _ = writeln!(s, "      {:#x}  {text}", insn.ip());
        if i + 1 == LISTED && n > LISTED {
            let _ = writeln!(s, "      … {} more", n - LISTED);
        }
    }
}
