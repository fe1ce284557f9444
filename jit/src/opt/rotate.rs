//! Loop rotation: the test of a loop header copied to the end of the
//! blocks that jump to it, so that a loop's back edge is one conditional
//! branch.
//!
//! A counted DO loop of the front end is a header that only loads its
//! bookkeeping and branches (`br go, body, exit`, or the adjoint's
//! `br trips > 0, body, exit`), and a latch that steps the bookkeeping and
//! jumps back to the header. Lowered as written, every trip takes two
//! branches (the latch's jump, the header's test) and the comparison the
//! latch computes is materialised as a truth value in a register, stored
//! to the header's variable and tested again there. This pass gives each
//! block ending in `jump header` (other than the loop's entry) its own copy
//! of the header's instructions and the header's branch: the latch then
//! ends with `br cond, body, exit`, where `cond` reads the value the latch
//! has just stored, so that code generation's SSA construction sees the
//! comparison itself and Cranelift fuses it into the branch.
//!
//! No result and no error changes: the copied instructions are those the
//! header would have run next, on the same state, and only instructions
//! that cannot fail are copied (constants, scalar loads, comparisons and
//! wrapping integer or logical arithmetic). The header keeps at least one
//! predecessor that still jumps to it (the loop's entry), so it stays
//! reachable and runs the first test as before. Every cycle still has an
//! edge to a block at or before its source (what the time checks of code
//! generation count on). The pass runs last among the IR passes: loop
//! versioning ([`super::licm`]) and the skipping of repeated trips
//! ([`super::fixpoint`]) recognise loops by the header their latch jumps
//! to.

use super::inline::Origins;
use super::licm::predecessors;
use crate::ir::{BinaryOp, BlockId, Inst, Proc, ProcId, Terminator, Type, UnaryOp, Value};

/// The most instructions a header may have to be copied into its
/// predecessors (a loop test is one to three).
const MAX_TEST_INSTS: usize = 8;

/// Rotates the loops of `proc`: every block ending in a jump to a header
/// that only tests (see the module documentation) ends with a copy of that
/// test instead. Values for which `keep` is true (the placeholders of
/// versioned loops' preheader tests) are never copied. Records copied
/// instructions' origins; returns how many jumps were replaced.
pub fn rotate_loops(
    proc: &mut Proc,
    pid: ProcId,
    origins: &mut Origins,
    keep: impl Fn(Value) -> bool,
) -> usize {
    let preds = predecessors(proc);
    let mut rotated = 0;
    for latch in 0..proc.blocks.len() {
        let Terminator::Jump(header) = proc.blocks[latch].term else {
            continue;
        };
        let h = header.index();
        // The header's entries from blocks before it (a loop's preheader)
        // keep jumping to it.
        let entered_earlier = preds[h].iter().any(|&p| p < h);
        if h <= latch && entered_earlier && is_test(proc, h, &keep) {
            copy_test(proc, pid, origins, h, latch);
            rotated += 1;
        }
    }
    rotated
}

/// Whether block `h` only computes a condition and branches on it: at most
/// [`MAX_TEST_INSTS`] instructions, none failing, none kept, and a branch
/// on one of them.
fn is_test(proc: &Proc, h: usize, keep: &impl Fn(Value) -> bool) -> bool {
    let block = &proc.blocks[h];
    let Terminator::Branch { cond, .. } = block.term else {
        return false;
    };
    block.insts.len() <= MAX_TEST_INSTS
        && block.insts.contains(&cond)
        && block
            .insts
            .iter()
            .all(|&v| !keep(v) && cannot_fail(proc, v))
}

/// True for the instructions a copied test may hold: constants, scalar
/// loads, comparisons, logical negation and the wrapping integer and
/// logical operations. None of them fails or has an effect.
fn cannot_fail(proc: &Proc, v: Value) -> bool {
    match proc.inst(v).kind {
        Inst::Const(_) | Inst::Cmp(..) | Inst::Unary(UnaryOp::Not, _) => true,
        Inst::Load(var) => {
            let var = proc.var(var);
            !var.is_array() && var.ty != Type::Char
        }
        Inst::Binary(op, ..) => matches!(
            op,
            BinaryOp::Add
                | BinaryOp::Sub
                | BinaryOp::Mul
                | BinaryOp::And
                | BinaryOp::Or
                | BinaryOp::Eqv
                | BinaryOp::Neqv
        ),
        _ => false,
    }
}

/// Appends to block `latch` a copy of the instructions of block `h` and
/// replaces its jump to `h` by `h`'s branch on the copied condition.
fn copy_test(proc: &mut Proc, pid: ProcId, origins: &mut Origins, h: usize, latch: usize) {
    let header = proc.blocks[h].clone();
    let mut copies: Vec<(Value, Value)> = Vec::with_capacity(header.insts.len());
    let renamed = |copies: &[(Value, Value)], x: Value| {
        copies
            .iter()
            .find(|(from, _)| *from == x)
            .map_or(x, |&(_, to)| to)
    };
    for &v in &header.insts {
        let data = proc.inst(v).clone();
        let kind = data.kind.map_operands(|x| renamed(&copies, x));
        let c = proc.push_inst(BlockId(latch as u32), kind, data.ty, data.span);
        origins.copy_inst(pid, v.0, c.0);
        copies.push((v, c));
    }
    let mut term = header.term;
    if let Terminator::Branch { cond, .. } = &mut term {
        *cond = renamed(&copies, *cond);
    }
    proc.blocks[latch].term = term;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{CmpOp, Const, Module, Span};
    use crate::opt::widen::tests::{product, run};

    fn rotate(m: &mut Module, keep: impl Fn(Value) -> bool) -> usize {
        rotate_loops(&mut m.procs[0], ProcId(0), &mut Origins::default(), keep)
    }

    /// Makes the header of [`product`]'s loop also divide 1 by `n` (an
    /// integer division that fails when `n` is 0) before branching.
    fn divide_in_test(m: &mut Module) {
        let proc = &mut m.procs[0];
        let (header, at) = (BlockId(1), Span::default());
        let n = proc.find_var("n").unwrap();
        let Terminator::Branch { cond: go, .. } = proc.blocks[1].term else {
            panic!("the header branches");
        };
        let nv = proc.push_inst(header, Inst::Load(n), Some(Type::I32), at);
        let one = proc.push_inst(header, Inst::Const(Const::Int(1)), Some(Type::I32), at);
        let q = proc.push_inst(
            header,
            Inst::Binary(BinaryOp::Div, one, nv),
            Some(Type::I32),
            at,
        );
        let pos = proc.push_inst(header, Inst::Cmp(CmpOp::Ge, q, q), Some(Type::Bool), at);
        let both = proc.push_inst(
            header,
            Inst::Binary(BinaryOp::And, go, pos),
            Some(Type::Bool),
            at,
        );
        if let Terminator::Branch { cond, .. } = &mut proc.blocks[1].term {
            *cond = both;
        }
    }

    #[test]
    fn the_latch_branches_on_the_test_it_computed() {
        let before = product();
        let mut after = before.clone();
        assert_eq!(rotate(&mut after, |_| false), 1);
        crate::ir::verify::verify_module(&after).expect("rotated code verifies");
        let proc = &after.procs[0];
        // The latch (the body) ends with the header's branch, on a copy of
        // the header's load of `go`; the entry still jumps to the header.
        let Terminator::Branch {
            cond,
            then_dest,
            else_dest,
        } = proc.blocks[2].term
        else {
            panic!("the latch still jumps: {:?}", proc.blocks[2].term);
        };
        assert_eq!((then_dest, else_dest), (BlockId(2), BlockId(3)));
        assert_eq!(proc.blocks[2].insts.last(), Some(&cond));
        assert_eq!(
            proc.inst(cond).kind,
            Inst::Load(proc.find_var("go").unwrap())
        );
        assert_eq!(proc.blocks[0].term, Terminator::Jump(BlockId(1)));
        for n in [0, 1, 2, 5, 6] {
            assert_eq!(run(&before, n), run(&after, n), "n = {n}");
        }
        // A rotated loop has no jump to a test left to rotate.
        assert_eq!(rotate(&mut after, |_| false), 0);
    }

    #[test]
    fn a_test_that_may_fail_or_is_kept_stays_in_the_header() {
        let mut m = product();
        divide_in_test(&mut m);
        crate::ir::verify::verify_module(&m).expect("the test verifies");
        assert_eq!(rotate(&mut m, |_| false), 0, "an integer division may fail");
        assert_eq!(m.procs[0].blocks[2].term, Terminator::Jump(BlockId(1)));
        // The error is still raised where it was.
        let err = run(&m, 0).unwrap_err();
        assert!(err.contains("division by zero"), "{err}");
        let mut m = product();
        let go_load = m.procs[0].blocks[1].insts[0];
        assert_eq!(rotate(&mut m, |v| v == go_load), 0);
    }

    #[test]
    fn a_header_entered_only_from_later_blocks_is_left_alone() {
        // The entry jumps straight into the body: the header's only
        // predecessor is the latch, after it; rotating would leave it
        // unreachable.
        let mut m = product();
        m.procs[0].blocks[0].term = Terminator::Jump(BlockId(2));
        assert_eq!(rotate(&mut m, |_| false), 0);
    }
}
