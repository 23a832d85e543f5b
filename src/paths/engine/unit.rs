//! Committing a version's unit (module docs of paths/engine): its
//! pieces in order (instrumented copies, plain copies, stubs), their jumps
//! to each other patched once all are committed, the older stubs of the
//! same code generation forwarded to the new ones.

use std::collections::BTreeSet;

use hashbrown::HashMap;

use super::{Inner, PathsState, Unit, MAX_VERSIONS};
use crate::backend::{emit_block, EmitEnv};
use crate::dispatch::block_meta;
use crate::dispatch::process::Locked;
use crate::dispatch::{Vm, VmError};
use crate::ir::probe::{Check, ExitStep, Step};
use crate::ir::IrBlock;
use crate::paths::cfg::NodeKind;
use crate::paths::emit::{
    emit_entry_stub, emit_node, emit_resume_stub, EdgeSpec, EntrySpec, Link, NodeSpec, Piece,
    ResumeSpec, REC_LOST, REC_TERM,
};
use crate::paths::Method;
use crate::types::HostAddr;

/// A piece of a unit (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum PieceKind {
    Node(u32),
    Plain(u32),
    EntryStub,
    ResumeStub(u32),
}

/// Emit and commit the unit of the newest version (module docs).
pub(super) fn emit(
    vm: &mut Vm,
    l: &mut Locked,
    p: &PathsState,
    inner: &mut Inner,
) -> Result<(), VmError> {
    let vi = inner.versions.len() - 1;
    let ver = &inner.versions[vi];
    let (cfg, plan) = (&ver.cfg, &ver.plan);
    let n = cfg.nodes.len() as u32;
    let mut kinds: Vec<PieceKind> = (0..n)
        .filter(|&i| plan.instrumented(i))
        .map(PieceKind::Node)
        .collect();
    let mut resumes: BTreeSet<u32> = BTreeSet::new();
    for &k in &kinds {
        let PieceKind::Node(u) = k else { continue };
        if let NodeKind::Call { resume: Some(r) } | NodeKind::Syscall { resume: Some(r) } =
            cfg.nodes[u as usize].kind
        {
            if plan.step(u, r) != Step::Terminate {
                resumes.insert(r);
            }
        }
    }
    kinds.push(PieceKind::Plain(0));
    kinds.extend(
        resumes
            .iter()
            .filter(|&&r| r != 0)
            .map(|&r| PieceKind::Plain(r)),
    );
    kinds.push(PieceKind::EntryStub);
    kinds.extend(resumes.iter().map(|&r| PieceKind::ResumeStub(r)));
    let at: HashMap<PieceKind, usize> = kinds.iter().enumerate().map(|(i, &k)| (k, i)).collect();
    let index = |k: PieceKind| *at.get(&k).expect("a piece of the unit");
    let plain = |v: u32| -> Link {
        if v == 0 || resumes.contains(&v) {
            Link::Piece(index(PieceKind::Plain(v)))
        } else {
            Link::Guest(cfg.addr(v))
        }
    };
    // Room for the whole unit, or a flush first: a bound on its size,
    // per node its body, the frame push and indirect-jump glue, and
    // every out-edge's probe with its checks.
    let check_len = |c: &Check| match c {
        Check::None => 0,
        Check::Pairs(v) => 48 * v.len(),
        Check::Segment(v) => 40 * v.len(),
    };
    let edge_len = |u: u32, v: u32| {
        300 + match plan.step(u, v) {
            Step::Go { check, .. } => check_len(&check),
            Step::Fold { check, after, .. } => check_len(&check) + check_len(&after),
            Step::Terminate => 0,
        }
    };
    let estimate: usize = kinds
        .iter()
        .map(|k| match *k {
            PieceKind::Node(u) => {
                let x = &cfg.nodes[u as usize];
                let exit = match plan.exit_step(u) {
                    ExitStep::End { check, .. } => 300 + check_len(&check),
                    ExitStep::Terminate => 100,
                };
                let edges: usize = cfg.graph.succs[u as usize]
                    .iter()
                    .map(|&v| edge_len(u, v))
                    .sum();
                2 * (512 + 64 * x.ir.guest_insns() as usize + exit + edges)
            }
            PieceKind::Plain(u) => 512 + 128 * cfg.nodes[u as usize].ir.guest_insns() as usize,
            _ => 1024,
        })
        .sum();
    if estimate + 4096 > l.cache.mem.remaining() {
        vm.flush(l, crate::dispatch::process::FlushCause::CacheFull);
        inner.stubs.clear();
        if estimate + 4096 > l.cache.mem.remaining() {
            return Err(VmError::Host(format!(
                "paths: the instrumented function needs about {estimate} bytes of code cache; give more with --cache-mib"
            )));
        }
    }
    let ver = &inner.versions[vi];
    let (cfg, plan) = (&ver.cfg, &ver.plan);
    let before = l.cache.flushes;
    // It may flush (smc.rs).
    vm.protect_code(
        l,
        cfg.lo,
        cfg.nodes.iter().map(|x| x.end().0).max().unwrap_or(cfg.lo),
    );
    let gen = l.cache.flushes;
    if gen != before {
        inner.stubs.clear();
    }
    let version = vi as u8;
    let mut hosts = vec![0u64; kinds.len()];
    let mut ids = vec![0u32; kinds.len()];
    let mut links: Vec<(usize, usize, usize)> = Vec::new();
    let mut fields: Vec<(usize, u64)> = Vec::new();
    for (k, kind) in kinds.iter().enumerate() {
        let cursor = l.cache.mem.next_block().0;
        let first_site = l.cache.sites.len() as u32;
        let stubs = l.cache.view.shared.stubs;
        let env_at = |prologue| EmitEnv {
            host_base: cursor,
            first_site,
            prologue,
            stubs,
        };
        let (mut piece, listed, counted) = match *kind {
            PieceKind::Node(u) => {
                let x = &cfg.nodes[u as usize];
                let edges = cfg.graph.succs[u as usize]
                    .iter()
                    .map(|&v| {
                        let mut step = plan.step(u, v);
                        if !plan.instrumented(v) {
                            step = Step::Terminate;
                        }
                        let go = if plan.instrumented(v) {
                            Link::Piece(index(PieceKind::Node(v)))
                        } else {
                            plain(v)
                        };
                        EdgeSpec {
                            target: cfg.addr(v),
                            step,
                            live: cfg.nodes[v as usize].live_in != 0,
                            go,
                            plain: plain(v),
                        }
                    })
                    .collect();
                let spec = NodeSpec {
                    ir: &x.ir,
                    version,
                    node: u,
                    edges,
                    exit: cfg.graph.exits[u as usize].then(|| plan.exit_step(u)),
                    extent: (cfg.lo, cfg.hi),
                    learn: inner.versions.len() < MAX_VERSIONS,
                    miss: if p.config.method == Method::None {
                        REC_LOST
                    } else {
                        REC_TERM
                    },
                    radix: plan.dag.radix(),
                };
                let prologue = vm.publish_block(&x.ir, true)?;
                let env = env_at(prologue);
                (emit_node(&spec, &env)?, false, true)
            }
            PieceKind::Plain(u) => {
                let x = &cfg.nodes[u as usize];
                let prologue = vm.publish_block(&x.ir, true)?;
                let env = env_at(prologue);
                let em = emit_block(&x.ir, &env)?;
                (
                    Piece {
                        em,
                        links: Vec::new(),
                    },
                    false,
                    true,
                )
            }
            PieceKind::EntryStub => {
                let x = &cfg.nodes[0];
                publish_stub(vm, &x.ir);
                let spec = EntrySpec {
                    live: x.live_in != 0,
                    start: plan.start(),
                    go: Link::Piece(index(PieceKind::Node(0))),
                };
                let (piece, field) = emit_entry_stub(&spec, cursor)?;
                fields.push((k, field as u64));
                (piece, true, false)
            }
            PieceKind::ResumeStub(r) => {
                let x = &cfg.nodes[r as usize];
                publish_stub(vm, &x.ir);
                let spec = ResumeSpec {
                    at: x.start,
                    live: x.live_in != 0,
                    plain: Link::Piece(index(PieceKind::Plain(r))),
                };
                let (piece, field) = emit_resume_stub(&spec, cursor)?;
                fields.push((k, field as u64));
                (piece, true, false)
            }
        };
        links.extend(piece.links.iter().map(|&(f, to)| (k, f, to)));
        let (id, host) = vm.commit_block(l, &mut piece.em, listed, counted)?;
        hosts[k] = host.0;
        ids[k] = id.0;
    }
    for (k, f, to) in links {
        l.cache
            .mem
            .patch_rel32(HostAddr(hosts[k] + f as u64), HostAddr(hosts[to]))?;
    }
    let blocks = &vm.proc.prof.blocks;
    for (k, field) in fields {
        let guest = match kinds[k] {
            PieceKind::EntryStub => cfg.entry.0,
            PieceKind::ResumeStub(r) => cfg.addr(r).0,
            _ => unreachable!("only stubs have forwarding fields"),
        };
        let entry = inner.stubs.entry(guest).or_default();
        for &old in &entry.0 {
            l.cache.mem.patch_rel32(HostAddr(old), HostAddr(hosts[k]))?;
        }
        entry.0.push(hosts[k] + field);
        entry.1 = hosts[k];
        // I2: superblocks exit into the stubs.
        blocks.set_host(ids[k], hosts[k], gen);
    }
    p.shared
        .entry_ids
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(ids[index(PieceKind::Node(0))]);
    // Every page of the function holds translated code now.
    for page in (cfg.lo >> 12)..=(cfg.nodes.iter().map(|x| x.end().0).max().unwrap_or(cfg.lo) >> 12)
    {
        l.cache.code_pages.insert(page, ());
    }
    inner.unit = Some(Unit {
        gen,
        plain_entry: hosts[index(PieceKind::Plain(0))],
    });
    Ok(())
}

/// Publish a stub's block (never counted: it pushes nothing).
fn publish_stub(vm: &mut Vm, ir: &IrBlock) {
    vm.proc
        .view
        .blocks
        .reserve(block_meta(ir))
        .expect("room in the block table for a stub");
}
