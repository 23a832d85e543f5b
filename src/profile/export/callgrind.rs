//! The callgrind profile format (version 1), which KCachegrind and
//! `callgrind_annotate` read: event `Ir` (instructions executed), positions
//! `instr` (guest addresses), self costs per instruction, call edges
//! (`calls=`) and jump edges (`jump=`, `jcnd=`).
//!
//! I1: Σ self costs = `totals.guest_instructions`. Each instruction of a
//!     block costs the block's count, and a `rep` string instruction its
//!     iterations beyond the first too (`rep_iterations`), as callgrind
//!     counts each iteration at the instruction; iterations a profile does
//!     not place (one written before 2026-12-01) are one cost line of the
//!     pseudo-function `[rep string iterations]`. What the blocks' costs
//!     hold beyond the total (instructions that did not retire:
//!     `unretired_instructions`)
//!     comes off where the profile's `unretired` and
//!     `rep_iterations[].unretired` say they were (a block's last
//!     instructions, a `rep` instruction's iterations); in a profile
//!     written before 2026-12-01, off the last instructions of the block
//!     the guest ended in (a fatal fault or trap), then off the
//!     pseudo-function. What a profile's `unretired` names in a block
//!     whose translations differ in length (a store into code: the store
//!     runs again alone, and the profile lists one block at the address)
//!     comes off the final block too, then off the `rep` iterations at
//!     their instructions (approximate there). If the costs still differ
//!     from the total, a comment in the file says so.
//! I2: a block is costed per instruction when the module's file holds its
//!     bytes and decoding them gives exactly the profile's size and
//!     instruction count; otherwise its whole cost sits at its first
//!     address (per block).
//! I4: jumps come from the profile's `edges` (every transition out of a
//!     block ending in a branch, jump, fall-through or indirect jump; a
//!     branch's edge to anywhere but the next block is its taken `jcnd`).
//!     An older profile without `edges` gets them from the decoded branch
//!     targets, the branch counts and `indirect_edges`.
//! I3: a call's inclusive cost comes from the calling-context tree
//!     (`call_tree`): the subtree cost of every context entered from the
//!     caller's function into the callee, shared among the call sites by
//!     their call counts. Without a call tree, calls carry no inclusive
//!     cost (a comment in the file says so). A recursive function's
//!     inclusive cost counts nested contexts again, as callgrind's does
//!     without `--separate-recs`.
//!
//! I5: positions are `instr line`: every address carries its source line
//!     from the module's DWARF line tables (lines.rs; 0 without them), a
//!     function's `fl=` is the file of its first address, and cost, jump
//!     and call lines from another file (inlined code) are preceded by
//!     `fi=` (`fe=` back to the function's own), so `callgrind_annotate`
//!     annotates source with the exact counts.
//!
//! Functions are named from the ELF symbol tables (images.rs); code no
//! symbol covers is a function named after its module and offset.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;

use iced_x86::{Decoder, DecoderOptions, FlowControl};

use super::images::Images;
use super::ExportError;
use crate::profile::{BlockRecord, Profile};

/// One decoded block: instruction addresses and the direct target of its
/// last instruction.
struct Shape {
    ips: Vec<u64>,
    target: Option<u64>,
}

/// Decode block `b` from its module's file (I2).
fn shape(images: &Images, b: &BlockRecord) -> Option<Shape> {
    let code = images.by_name(&b.module)?.code(b.addr, b.size as usize)?;
    let mut dec = Decoder::with_ip(64, code, b.addr, DecoderOptions::NONE);
    let mut ips = Vec::new();
    let mut last = None;
    while dec.can_decode() {
        let i = dec.decode();
        if i.is_invalid() {
            return None;
        }
        ips.push(i.ip());
        last = Some(i);
    }
    if ips.len() != b.instructions as usize {
        return None;
    }
    let last = last?;
    let target = match last.flow_control() {
        FlowControl::UnconditionalBranch | FlowControl::ConditionalBranch | FlowControl::Call => {
            Some(last.near_branch_target()).filter(|&t| t != 0)
        }
        _ => None,
    };
    Some(Shape { ips, target })
}

/// The block the guest ended in: the one whose outgoing edges add up to
/// less than its count (docs/PROFILE.md, `edges[]`).
fn final_block(doc: &Profile) -> Option<&BlockRecord> {
    if doc.edges.is_empty() {
        return None;
    }
    let mut out: HashMap<u64, u64> = HashMap::new();
    for e in &doc.edges {
        *out.entry(e.from).or_insert(0) += e.count;
    }
    doc.blocks
        .iter()
        .find(|b| b.count > out.get(&b.addr).copied().unwrap_or(0))
}

/// Name compression (`(id) name` on first use, `(id)` after).
#[derive(Default)]
struct Names(HashMap<String, usize>);

impl Names {
    fn get(&mut self, name: &str) -> String {
        if let Some(id) = self.0.get(name) {
            return format!("({id})");
        }
        let id = self.0.len() + 1;
        self.0.insert(name.to_string(), id);
        format!("({id}) {name}")
    }
}

/// A jump: (source, target, times taken, executions of a conditional
/// jump or `None` for an unconditional one).
type Jump = (u64, u64, u64, Option<u64>);

/// A function's lines: self cost per address, jumps and calls from it.
#[derive(Default)]
struct Func {
    object: String,
    costs: BTreeMap<u64, u64>,
    jumps: Vec<Jump>,
    /// (source, callee, calls, inclusive cost)
    calls: Vec<(u64, u64, u64, u64)>,
}

/// Inclusive costs of calls from the call tree (I3): by (caller function
/// name, callee entry) and by callee entry alone.
type Inclusive = (HashMap<(String, u64), (u64, u64)>, HashMap<u64, (u64, u64)>);

fn inclusive_costs(doc: &Profile, images: &Images) -> Option<Inclusive> {
    if doc.call_tree.is_empty() {
        return None;
    }
    let (parent, incl) = doc.call_tree_sums();
    let mut by_pair: HashMap<(String, u64), (u64, u64)> = HashMap::new();
    let mut by_callee: HashMap<u64, (u64, u64)> = HashMap::new();
    for (i, n) in doc.call_tree.iter().enumerate() {
        let Some(p) = parent[i] else {
            continue;
        };
        let caller = &doc.call_tree[p];
        let caller_name = images
            .context_name(caller.function, caller.symbol.as_deref())
            .1;
        let e = by_pair.entry((caller_name, n.function)).or_default();
        e.0 += n.calls;
        e.1 += incl[i];
        let e = by_callee.entry(n.function).or_default();
        e.0 += n.calls;
        e.1 += incl[i];
    }
    Some((by_pair, by_callee))
}

/// The file being built: functions with their lines, and the decoded
/// shape of every block that could be decoded.
struct Build<'a> {
    doc: &'a Profile,
    images: &'a Images,
    funcs: BTreeMap<String, Func>,
    shapes: HashMap<u64, Shape>,
    /// `rep` iterations placed at their instructions (I1).
    rep_placed: u64,
}

impl Build<'_> {
    fn fn_of(&self, addr: u64, sym: Option<&str>) -> String {
        self.images.function_name(addr, sym).1
    }

    /// The function of the code at `addr` (a block start, or any address).
    fn fn_at(&self, addr: u64) -> String {
        let sym = self.doc.block_at(addr).and_then(|b| b.symbol.as_deref());
        self.fn_of(addr, sym)
    }

    /// Where a block's exit is: its last instruction, or its start (I2).
    fn exit_ip(&self, b: &BlockRecord) -> u64 {
        self.shapes
            .get(&b.addr)
            .and_then(|s| s.ips.last().copied())
            .unwrap_or(b.addr)
    }

    /// Self costs of every executed block (I1, I2).
    fn add_costs(&mut self) {
        for b in self.doc.blocks.iter().filter(|b| b.count > 0) {
            let name = self.fn_of(b.addr, b.symbol.as_deref());
            let object = self
                .images
                .by_name(&b.module)
                .map(|i| i.path.clone())
                .unwrap_or_else(|| b.module.to_string());
            let sh = shape(self.images, b);
            let f = self.funcs.entry(name).or_default();
            f.object = object;
            match &sh {
                Some(s) => {
                    for &ip in &s.ips {
                        *f.costs.entry(ip).or_insert(0) += b.count;
                    }
                }
                None => *f.costs.entry(b.addr).or_insert(0) += b.count * b.instructions as u64,
            }
            if let Some(s) = sh {
                self.shapes.insert(b.addr, s);
            }
        }
    }

    /// I1: each `rep` string instruction's iterations beyond its first at
    /// the instruction, in its block's function (the profile's
    /// `rep_iterations`; an older profile has only their total).
    fn add_reps(&mut self) {
        let doc = self.doc;
        for r in doc.rep_iterations.iter().filter(|r| r.extra > 0) {
            let Some(b) = doc.block_holding(r.addr) else {
                continue;
            };
            let name = self.fn_of(b.addr, b.symbol.as_deref());
            *self
                .funcs
                .entry(name)
                .or_default()
                .costs
                .entry(r.addr)
                .or_insert(0) += r.extra;
            self.rep_placed += r.extra;
        }
    }

    /// Take `n` off the cost at `ip` in the function of block `b`.
    fn take_off(&mut self, b: &BlockRecord, ip: u64, n: u64) {
        let name = self.fn_of(b.addr, b.symbol.as_deref());
        if let Some(c) = self.funcs.get_mut(&name).and_then(|f| f.costs.get_mut(&ip)) {
            *c = c.saturating_sub(n);
        }
    }

    /// I1: instructions that did not retire come off where the profile
    /// says they were (`unretired`: a block's last instructions;
    /// `rep_iterations[].unretired`: a `rep` instruction's iterations).
    fn take_unretired(&mut self) {
        let doc = self.doc;
        for u in &doc.unretired {
            // Only where the profile's block is that translation (the
            // rest goes as in an older profile, settle).
            let Some(b) = doc
                .block_at(u.block)
                .filter(|b| b.instructions == u.block_instructions)
            else {
                continue;
            };
            match self.shapes.get(&b.addr).map(|s| s.ips.clone()) {
                Some(ips) => {
                    let from = ips.len().saturating_sub(u.instructions as usize);
                    for &ip in &ips[from..] {
                        self.take_off(b, ip, u.times);
                    }
                }
                None => self.take_off(b, b.addr, u64::from(u.instructions) * u.times),
            }
        }
        for r in doc.rep_iterations.iter().filter(|r| r.unretired > 0) {
            if let Some(b) = doc.block_holding(r.addr) {
                self.take_off(b, r.addr, r.unretired);
            }
        }
    }

    /// I1: what the costs still hold beyond the total (unretired
    /// instructions a profile written before 2026-12-01 does not place)
    /// comes off the block the guest ended in (a fatal fault or trap), last
    /// instructions first, then off the rep pseudo-function. Returns the
    /// pseudo-function's cost and, if the costs still miss the total, what
    /// they add up to.
    fn settle(&mut self) -> (u64, Option<u64>) {
        self.take_unretired();
        let doc = self.doc;
        let sum = |funcs: &BTreeMap<String, Func>| -> u64 {
            funcs.values().flat_map(|f| f.costs.values()).sum()
        };
        let total = doc.totals.guest_instructions;
        let rep_extra = doc
            .totals
            .rep_extra_iterations
            .saturating_sub(self.rep_placed);
        let mut excess = (sum(&self.funcs) + rep_extra).saturating_sub(total);
        if let Some(b) = final_block(doc).filter(|_| excess > 0) {
            let per_ip = self.shapes.get(&b.addr).map(|s| s.ips.clone());
            let ips = per_ip.clone().unwrap_or_else(|| vec![b.addr]);
            let name = self.fn_of(b.addr, b.symbol.as_deref());
            if let Some(f) = self.funcs.get_mut(&name) {
                for ip in ips.iter().rev() {
                    let Some(c) = f.costs.get_mut(ip) else {
                        continue;
                    };
                    let take = if per_ip.is_some() {
                        excess.min(1)
                    } else {
                        excess
                    }
                    .min(*c);
                    *c -= take;
                    excess -= take;
                    if excess == 0 {
                        break;
                    }
                }
            }
        }
        let rep = rep_extra.saturating_sub(excess);
        excess -= rep_extra - rep;
        // Last, off the `rep` iterations placed at their instructions:
        // what a store into code leaves (the rest of a block that stopped
        // at the store, in a translation longer than the one the profile
        // lists at that address).
        for r in &doc.rep_iterations {
            if excess == 0 {
                break;
            }
            if let Some(b) = doc.block_holding(r.addr) {
                let take = excess.min(r.extra);
                self.take_off(b, r.addr, take);
                excess -= take;
            }
        }
        let placed = sum(&self.funcs) + rep;
        (rep, (placed != total).then_some(placed))
    }

    /// Jumps (I4): from the profile's edges when it has them, else from
    /// the decoded targets, branch counts and indirect edges.
    fn add_jumps(&mut self) {
        let doc = self.doc;
        let mut jumps: Vec<(String, Jump)> = Vec::new();
        if !doc.edges.is_empty() {
            for e in &doc.edges {
                let Some(b) = doc.block_at(e.from) else {
                    continue;
                };
                let next = b.addr + b.size as u64;
                let (n, exe) = match &*b.exit {
                    "branch" if e.to != next => (e.count, Some(b.count)),
                    "branch" | "jump" | "fallthrough" | "indirect_jump" => (e.count, None),
                    _ => continue,
                };
                let f = self.fn_of(b.addr, b.symbol.as_deref());
                jumps.push((f, (self.exit_ip(b), e.to, n, exe)));
            }
        } else {
            for b in doc.blocks.iter().filter(|b| b.count > 0) {
                let (src, next) = (self.exit_ip(b), b.addr + b.size as u64);
                let target = self.shapes.get(&b.addr).and_then(|s| s.target);
                let f = self.fn_of(b.addr, b.symbol.as_deref());
                match &*b.exit {
                    "branch" => {
                        if let Some(t) = target {
                            jumps.push((f.clone(), (src, t, b.taken.unwrap_or(0), Some(b.count))));
                        }
                        let ft = b.fallthrough.unwrap_or(0);
                        if ft > 0 {
                            jumps.push((f, (src, next, ft, None)));
                        }
                    }
                    "jump" => {
                        if let Some(t) = target {
                            jumps.push((f, (src, t, b.count, None)));
                        }
                    }
                    "fallthrough" => jumps.push((f, (src, next, b.count, None))),
                    _ => {}
                }
            }
            for e in &doc.indirect_edges {
                let Some(b) = doc.block_at(e.from).filter(|b| b.exit == "indirect_jump") else {
                    continue;
                };
                let f = self.fn_of(b.addr, b.symbol.as_deref());
                jumps.push((f, (self.exit_ip(b), e.to, e.count, None)));
            }
        }
        for (f, j) in jumps {
            if let Some(f) = self.funcs.get_mut(&f) {
                f.jumps.push(j);
            }
        }
    }

    /// Calls with their inclusive costs (I3).
    fn add_calls(&mut self, incl: Option<&Inclusive>) {
        let doc = self.doc;
        let caller_of = |e: &crate::profile::Edge| match doc.block_at(e.from) {
            Some(b) => self.fn_of(b.addr, b.symbol.as_deref()),
            None => self.fn_of(e.from, None),
        };
        let mut site_calls: HashMap<(String, u64), u64> = HashMap::new();
        for e in &doc.call_edges {
            *site_calls.entry((caller_of(e), e.to)).or_insert(0) += e.count;
        }
        let mut calls = Vec::new();
        for e in &doc.call_edges {
            let caller = caller_of(e);
            let src = doc.block_at(e.from).map_or(e.from, |b| self.exit_ip(b));
            let share =
                |cost: u64, of: u64| (cost as u128 * e.count as u128 / of.max(1) as u128) as u64;
            let inclusive = match incl {
                None => 0,
                Some((by_pair, by_callee)) => match by_pair.get(&(caller.clone(), e.to)) {
                    Some(&(_, cost)) => share(cost, site_calls[&(caller.clone(), e.to)]),
                    None => by_callee.get(&e.to).map_or(0, |&(n, cost)| share(cost, n)),
                },
            };
            // A call through a PLT stub is a call of the function the
            // stub went to, as callgrind's own `--skip-plt` (its default)
            // counts it and every context-named output names it
            // (images.rs I6); the stub's jump stays its own code.
            let to = self.images.past_stub(e.to);
            calls.push((caller, (src, to, e.count, inclusive)));
        }
        for (f, c) in calls {
            if let Some(f) = self.funcs.get_mut(&f) {
                f.calls.push(c);
            }
        }
    }

    /// The source position of `addr` (I5), looked up once.
    fn pos(&self, memo: &mut HashMap<u64, (String, u32)>, addr: u64) -> (String, u32) {
        memo.entry(addr)
            .or_insert_with(|| {
                self.images
                    .containing(addr)
                    .and_then(|i| i.line(addr))
                    .unwrap_or_else(|| ("???".to_string(), 0))
            })
            .clone()
    }

    /// The file's text.
    fn render(&self, rep: u64, unplaced: Option<u64>, has_tree: bool) -> String {
        let doc = self.doc;
        let mut s = String::new();
        s.push_str("# callgrind format\nversion: 1\n");
        s.push_str(&format!("creator: hotlift {}\n", env!("CARGO_PKG_VERSION")));
        // 0: a profile that does not say.
        if doc.pid != 0 {
            s.push_str(&format!("pid: {}\n", doc.pid));
        }
        s.push_str(&format!("cmd: {}\n", doc.command_line.join(" ")));
        s.push_str("positions: instr line\nevents: Ir\n");
        s.push_str(&format!("summary: {}\n\n", doc.totals.guest_instructions));
        if !has_tree {
            s.push_str("# the profile has no call_tree: calls carry no inclusive cost\n");
        }
        let (mut fns, mut obs, mut files) = (Names::default(), Names::default(), Names::default());
        let mut memo = HashMap::new();
        for (name, f) in &self.funcs {
            // I5: the function's file is its first address's; lines from
            // other files (inlined code) switch with fi=, back with fe=.
            let home = match f.costs.keys().next() {
                Some(&a) => self.pos(&mut memo, a).0,
                None => "???".to_string(),
            };
            s.push_str(&format!(
                "ob={}\nfl={}\nfn={}\n",
                obs.get(&f.object),
                files.get(&home),
                fns.get(name)
            ));
            let mut cur = home.clone();
            let mut switch = |s: &mut String, files: &mut Names, file: String| {
                if file != cur {
                    let key = if file == home { "fe" } else { "fi" };
                    s.push_str(&format!("{key}={}\n", files.get(&file)));
                    cur = file;
                }
            };
            for (&addr, cost) in &f.costs {
                let (file, line) = self.pos(&mut memo, addr);
                switch(&mut s, &mut files, file);
                s.push_str(&format!("{addr:#x} {line} {cost}\n"));
            }
            for &(src, to, n, exe) in &f.jumps {
                let (file, line) = self.pos(&mut memo, src);
                let to_line = self.pos(&mut memo, to).1;
                switch(&mut s, &mut files, file);
                let target_fn = self.fn_at(to);
                if &target_fn != name {
                    s.push_str(&format!("jfn={}\n", fns.get(&target_fn)));
                }
                match exe {
                    Some(exe) => s.push_str(&format!("jcnd={n}/{exe} {to:#x} {to_line}\n")),
                    None => s.push_str(&format!("jump={n} {to:#x} {to_line}\n")),
                }
                s.push_str(&format!("{src:#x} {line}\n"));
            }
            for &(src, to, n, inclusive) in &f.calls {
                let (file, line) = self.pos(&mut memo, src);
                let (to_file, to_line) = self.pos(&mut memo, to);
                switch(&mut s, &mut files, file);
                let cob = self
                    .images
                    .containing(to)
                    .map(|i| i.path.clone())
                    .unwrap_or_else(|| f.object.clone());
                if cob != f.object {
                    s.push_str(&format!("cob={}\n", obs.get(&cob)));
                }
                s.push_str(&format!(
                    "cfi={}\ncfn={}\ncalls={n} {to:#x} {to_line}\n{src:#x} {line} {inclusive}\n",
                    files.get(&to_file),
                    fns.get(&self.fn_at(to))
                ));
            }
            s.push('\n');
        }
        if let Some(placed) = unplaced {
            s.push_str(&format!(
                "# the costs add up to {placed}, the profile's total is {}: unretired instructions it does not place\n",
                doc.totals.guest_instructions
            ));
        }
        if rep > 0 {
            let ob = obs.get(&doc.binary.path);
            s.push_str(&format!(
                "ob={ob}\nfl={}\nfn={}\n0x0 0 {rep}\n",
                files.get("???"),
                fns.get("[rep string iterations]")
            ));
        }
        s
    }
}

/// Write `doc` in the callgrind format (I1–I4).
pub fn write(doc: &Profile, images: &Images, out: &mut dyn Write) -> Result<(), ExportError> {
    let mut b = Build {
        doc,
        images,
        funcs: BTreeMap::new(),
        shapes: HashMap::new(),
        rep_placed: 0,
    };
    b.add_costs();
    b.add_reps();
    let (rep, unplaced) = b.settle();
    b.add_jumps();
    let incl = inclusive_costs(doc, images);
    b.add_calls(incl.as_ref());
    out.write_all(b.render(rep, unplaced, incl.is_some()).as_bytes())?;
    Ok(())
}
