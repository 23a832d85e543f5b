//! Golden listing of path-profiling probes: a branch node whose edges add
//! to the segment or fold it, a return node recording its path.
//! `HOTLIFT_BLESS=1 cargo test --lib paths::emit` regenerates
//! `tests/golden/probes.txt` (the backend's listings: src/backend/tests.rs).

use super::{emit_node, EdgeSpec, Link, NodeSpec, REC_LOST};
use crate::backend::golden::{check_golden, list, STUBS};
use crate::backend::{EmitEnv, Prologue};
use crate::frontend::lift_block;
use crate::ir::probe::{Check, ExitStep, Step};
use crate::types::GuestAddr;

#[test]
fn path_probes_match_golden() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/probes.txt");
    let mut out = String::new();
    let env = EmitEnv {
        host_base: 0x1000_0000,
        first_site: 0,
        prologue: Prologue::Ring { id: 0x1234 },
        stubs: STUBS,
    };
    // test eax, eax; jne +0x10: taken adds 1, the fall-through folds.
    let branch = lift_block(&[0x85, 0xc0, 0x75, 0x10], GuestAddr(0x40_2000), 64).expect("lift");
    let edges = vec![
        EdgeSpec {
            target: GuestAddr(0x40_2014),
            step: Step::Go {
                add: 1,
                check: Check::None,
            },
            live: false,
            go: Link::Piece(1),
            plain: Link::Guest(GuestAddr(0x40_2014)),
        },
        EdgeSpec {
            target: GuestAddr(0x40_2004),
            step: Step::Fold {
                add: 2,
                reset: 0,
                check: Check::None,
                after: Check::None,
            },
            live: true,
            go: Link::Piece(2),
            plain: Link::Guest(GuestAddr(0x40_2004)),
        },
    ];
    let node = |ir, edges, exit| NodeSpec {
        ir,
        version: 1,
        node: 0,
        edges,
        exit,
        extent: (0x40_2000, 0x40_2100),
        learn: true,
        miss: REC_LOST,
        radix: 4,
    };
    let p = emit_node(&node(&branch, edges, None), &env).expect("emit a node");
    list(
        &mut out,
        "a branch node: an edge that adds, one that folds",
        &p.em.code,
        env.host_base,
    );
    // ret, recording (tot, seg + 3) if it is one of two pairs.
    let ret = lift_block(&[0xc3], GuestAddr(0x40_2014), 64).expect("lift");
    let exit = ExitStep::End {
        add: 3,
        check: Check::Pairs(vec![(0, 3), (1, 4)]),
    };
    let p = emit_node(&node(&ret, vec![], Some(exit)), &env).expect("emit a node");
    list(
        &mut out,
        "a return node recording its path",
        &p.em.code,
        env.host_base,
    );
    check_golden(path, &out);
}
