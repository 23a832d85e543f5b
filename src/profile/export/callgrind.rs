//! The callgrind profile format (version 1), which KCachegrind and
//! `callgrind_annotate` read: event `Ir` (instructions executed), positions
//! `instr` (guest addresses), self costs per instruction, call edges
//! (`calls=`) and jump edges (`jump=`, `jcnd=`).
//!
//! I1: Σ self costs = `totals.guest_instructions`. Each instruction of a
//!     block costs the block's count; the iterations of `rep` string
//!     instructions beyond the first (the profile does not say which block
//!     ran them) are one cost line of the pseudo-function
//!     `[rep string iterations]`. What the blocks' costs hold beyond the
//!     total (instructions that did not retire: `unretired_instructions`)
//!     comes off the last instructions of the block the guest ended in (a
//!     fatal fault or trap), then off the pseudo-function; if the costs
//!     still differ from the total, a comment in the file says so.
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
//! Functions are named from the ELF symbol tables (images.rs); code no
//! symbol covers is a function per block named by its address.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;

use iced_x86::{Decoder, DecoderOptions, FlowControl};

use super::images::Images;
use super::ExportError;
use crate::profile::read::{Block, ProfileDoc};

/// One decoded block: instruction addresses and the direct target of its
/// last instruction.
struct Shape {
    ips: Vec<u64>,
    target: Option<u64>,
}

/// Decode block `b` from its module's file (I2).
fn shape(images: &Images, b: &Block) -> Option<Shape> {
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
fn final_block(doc: &ProfileDoc) -> Option<&Block> {
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

/// A function's lines: self cost per address, jumps and calls from it.
#[derive(Default)]
struct Func {
    object: String,
    costs: BTreeMap<u64, u64>,
    /// (source, target, taken, executions or None for an unconditional jump)
    jumps: Vec<(u64, u64, u64, Option<u64>)>,
    /// (source, callee, calls, inclusive cost)
    calls: Vec<(u64, u64, u64, u64)>,
}

/// Inclusive costs of calls from the call tree (I3): by (caller function
/// name, callee entry) and by callee entry alone.
type Inclusive = (HashMap<(String, u64), (u64, u64)>, HashMap<u64, (u64, u64)>);

fn inclusive_costs(doc: &ProfileDoc, images: &Images) -> Option<Inclusive> {
    if doc.call_tree.is_empty() {
        return None;
    }
    let index: HashMap<u64, usize> = doc
        .call_tree
        .iter()
        .enumerate()
        .map(|(i, n)| (n.id, i))
        .collect();
    // Subtree sums, children before parents: by decreasing id (a parent's
    // id is smaller than its children's, docs/PROFILE.md). A malformed tree
    // gets incomplete sums, never a loop.
    let mut order: Vec<usize> = (0..doc.call_tree.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(doc.call_tree[i].id));
    let mut incl: Vec<u64> = doc.call_tree.iter().map(|n| n.self_instructions).collect();
    for &i in &order {
        if let Some(&p) = doc.call_tree[i].parent.and_then(|p| index.get(&p)) {
            if doc.call_tree[p].id < doc.call_tree[i].id {
                incl[p] = incl[p].saturating_add(incl[i]);
            }
        }
    }
    let mut by_pair: HashMap<(String, u64), (u64, u64)> = HashMap::new();
    let mut by_callee: HashMap<u64, (u64, u64)> = HashMap::new();
    for (i, n) in doc.call_tree.iter().enumerate() {
        let Some(&p) = n.parent.and_then(|p| index.get(&p)) else {
            continue;
        };
        let caller = &doc.call_tree[p];
        let caller_name = images
            .function_name(caller.function, caller.symbol.as_deref())
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

/// Write `doc` in the callgrind format (I1–I3).
pub fn write(doc: &ProfileDoc, images: &Images, out: &mut dyn Write) -> Result<(), ExportError> {
    let mut funcs: BTreeMap<String, Func> = BTreeMap::new();
    let mut shapes: HashMap<u64, Shape> = HashMap::new();
    let fn_of = |addr: u64, sym: Option<&str>| images.function_name(addr, sym).1;
    for b in doc.blocks.iter().filter(|b| b.count > 0) {
        let name = fn_of(b.addr, b.symbol.as_deref());
        let object = images
            .by_name(&b.module)
            .map(|i| i.path.clone())
            .unwrap_or_else(|| b.module.clone());
        let f = funcs.entry(name).or_default();
        f.object = object;
        let sh = shape(images, b);
        match &sh {
            Some(s) => {
                for &ip in &s.ips {
                    *f.costs.entry(ip).or_insert(0) += b.count;
                }
            }
            None => *f.costs.entry(b.addr).or_insert(0) += b.count * b.instructions as u64,
        }
        if let Some(s) = sh {
            shapes.insert(b.addr, s);
        }
    }
    // I1: what the costs hold beyond the total (unretired instructions)
    // comes off the block the guest ended in (a fatal fault or trap), last
    // instructions first, then off the rep pseudo-function; a remainder
    // either way is noted in the file.
    let blocks_sum: u64 = funcs.values().flat_map(|f| f.costs.values()).sum();
    let total = doc.totals.guest_instructions;
    let mut excess = (blocks_sum + doc.totals.rep_extra_iterations).saturating_sub(total);
    if let Some(b) = final_block(doc).filter(|_| excess > 0) {
        let ips: Vec<u64> = shapes
            .get(&b.addr)
            .map_or_else(|| vec![b.addr], |s| s.ips.clone());
        let per_ip = shapes.contains_key(&b.addr);
        if let Some(f) = funcs.get_mut(&fn_of(b.addr, b.symbol.as_deref())) {
            for ip in ips.iter().rev() {
                let Some(c) = f.costs.get_mut(ip) else {
                    continue;
                };
                let take = if per_ip { excess.min(1) } else { excess }.min(*c);
                *c -= take;
                excess -= take;
                if excess == 0 {
                    break;
                }
            }
        }
    }
    let rep = doc.totals.rep_extra_iterations.saturating_sub(excess);
    let placed: u64 = funcs.values().flat_map(|f| f.costs.values()).sum::<u64>() + rep;
    let unplaced = (placed != total).then_some(placed);

    // Jumps (conditional, direct, fall-through into a block, indirect):
    // from the profile's edges when it has them, else from the decoded
    // targets and branch counts.
    if !doc.edges.is_empty() {
        for e in &doc.edges {
            let Some(b) = doc.block_at(e.from) else {
                continue;
            };
            let next = b.addr + b.size as u64;
            let jump = match b.exit.as_str() {
                "branch" if e.to != next => (e.to, e.count, Some(b.count)),
                "branch" | "jump" | "fallthrough" | "indirect_jump" => (e.to, e.count, None),
                _ => continue,
            };
            let src = shapes
                .get(&b.addr)
                .and_then(|s| s.ips.last().copied())
                .unwrap_or(b.addr);
            if let Some(f) = funcs.get_mut(&fn_of(b.addr, b.symbol.as_deref())) {
                f.jumps.push((src, jump.0, jump.1, jump.2));
            }
        }
    }
    for b in doc
        .blocks
        .iter()
        .filter(|b| b.count > 0 && doc.edges.is_empty())
    {
        let sh = shapes.get(&b.addr);
        let src = sh.and_then(|s| s.ips.last().copied()).unwrap_or(b.addr);
        let target = sh.and_then(|s| s.target);
        let mut jumps = Vec::new();
        match b.exit.as_str() {
            "branch" => {
                if let Some(t) = target {
                    jumps.push((src, t, b.taken.unwrap_or(0), Some(b.count)));
                }
                let ft = b.fallthrough.unwrap_or(0);
                if ft > 0 {
                    jumps.push((src, b.addr + b.size as u64, ft, None));
                }
            }
            "jump" => {
                if let Some(t) = target {
                    jumps.push((src, t, b.count, None));
                }
            }
            "fallthrough" => jumps.push((src, b.addr + b.size as u64, b.count, None)),
            _ => {}
        }
        let name = fn_of(b.addr, b.symbol.as_deref());
        if let Some(f) = funcs.get_mut(&name) {
            f.jumps.extend(jumps);
        }
    }
    for e in doc.indirect_edges.iter().filter(|_| doc.edges.is_empty()) {
        let Some(b) = doc.block_at(e.from) else {
            continue;
        };
        if b.exit != "indirect_jump" {
            continue;
        }
        let src = shapes
            .get(&b.addr)
            .and_then(|s| s.ips.last().copied())
            .unwrap_or(b.addr);
        let name = fn_of(b.addr, b.symbol.as_deref());
        if let Some(f) = funcs.get_mut(&name) {
            f.jumps.push((src, e.to, e.count, None));
        }
    }
    // Calls (I3).
    let incl = inclusive_costs(doc, images);
    let mut site_calls: HashMap<(String, u64), u64> = HashMap::new();
    for e in &doc.call_edges {
        let caller = doc
            .block_at(e.from)
            .map(|b| fn_of(b.addr, b.symbol.as_deref()))
            .unwrap_or_else(|| fn_of(e.from, None));
        *site_calls.entry((caller, e.to)).or_insert(0) += e.count;
    }
    for e in &doc.call_edges {
        let b = doc.block_at(e.from);
        let caller = b
            .map(|b| fn_of(b.addr, b.symbol.as_deref()))
            .unwrap_or_else(|| fn_of(e.from, None));
        let src = b
            .and_then(|b| shapes.get(&b.addr))
            .and_then(|s| s.ips.last().copied())
            .unwrap_or(e.from);
        let inclusive = match &incl {
            None => 0,
            Some((by_pair, by_callee)) => {
                let all = site_calls[&(caller.clone(), e.to)].max(1);
                match by_pair.get(&(caller.clone(), e.to)) {
                    Some(&(_, cost)) => (cost as u128 * e.count as u128 / all as u128) as u64,
                    None => by_callee.get(&e.to).map_or(0, |&(calls, cost)| {
                        (cost as u128 * e.count as u128 / calls.max(1) as u128) as u64
                    }),
                }
            }
        };
        if let Some(f) = funcs.get_mut(&caller) {
            f.calls.push((src, e.to, e.count, inclusive));
        }
    }

    let mut s = String::new();
    s.push_str("# callgrind format\nversion: 1\n");
    s.push_str(&format!("creator: hotlift {}\n", env!("CARGO_PKG_VERSION")));
    if let Some(pid) = doc.pid {
        s.push_str(&format!("pid: {pid}\n"));
    }
    s.push_str(&format!("cmd: {}\n", doc.command_line.join(" ")));
    s.push_str("positions: instr\nevents: Ir\n");
    s.push_str(&format!("summary: {}\n\n", doc.totals.guest_instructions));
    if incl.is_none() {
        s.push_str("# the profile has no call_tree: calls carry no inclusive cost\n");
    }
    let (mut fns, mut obs) = (Names::default(), Names::default());
    let fl = "fl=(1) ???\n";
    for (name, f) in &funcs {
        s.push_str(&format!(
            "ob={}\n{fl}fn={}\n",
            obs.get(&f.object),
            fns.get(name)
        ));
        for (addr, cost) in &f.costs {
            s.push_str(&format!("{addr:#x} {cost}\n"));
        }
        for &(src, to, n, exe) in &f.jumps {
            let target_fn = fn_of(to, doc.block_at(to).and_then(|b| b.symbol.as_deref()));
            if &target_fn != name {
                s.push_str(&format!("jfn={}\n", fns.get(&target_fn)));
            }
            match exe {
                Some(exe) => s.push_str(&format!("jcnd={n}/{exe} {to:#x}\n{src:#x}\n")),
                None => s.push_str(&format!("jump={n} {to:#x}\n{src:#x}\n")),
            }
        }
        for &(src, to, n, inclusive) in &f.calls {
            let callee = fn_of(to, doc.block_at(to).and_then(|b| b.symbol.as_deref()));
            let cob = images
                .containing(to)
                .map(|i| i.path.clone())
                .unwrap_or_else(|| f.object.clone());
            if cob != f.object {
                s.push_str(&format!("cob={}\n", obs.get(&cob)));
            }
            s.push_str(&format!(
                "cfn={}\ncalls={n} {to:#x}\n{src:#x} {inclusive}\n",
                fns.get(&callee)
            ));
        }
        s.push('\n');
    }
    if let Some(placed) = unplaced {
        s.push_str(&format!(
            "# the costs add up to {placed}, the profile's total is {total}: unretired instructions it does not place\n"
        ));
    }
    if rep > 0 {
        let ob = obs.get(&doc.binary.path);
        s.push_str(&format!(
            "ob={ob}\n{fl}fn={}\n0x0 {rep}\n",
            fns.get("[rep string iterations]")
        ));
    }
    out.write_all(s.as_bytes())?;
    Ok(())
}
