//! Straight-line block merging: a block that ends with a jump to a block
//! with no other predecessor absorbs it.
//!
//! Code lists and the transforms built on them end up with chains of small
//! blocks (a DO loop's increment, an adjoint's trip-count decrement and the
//! statements of one reverse iteration are three blocks joined by jumps).
//! Value numbering, the address cache of code generation and the cached
//! registers of the runtime stacks all work block by block, so a chain cut
//! into pieces recomputes and reloads at every cut. Merging changes no
//! result: the absorbed block ran exactly when its only predecessor's jump
//! did, and values stay local to the (merged) block that defines them.

use crate::ir::{BlockId, Proc, Terminator};

/// Merges jump chains in `proc` and drops the absorbed blocks, renumbering
/// the rest in order. The entry block (block 0) is never absorbed. Returns,
/// for each block of the result, the old block whose terminator it ends
/// with (the last block of its chain).
pub fn merge_blocks(proc: &mut Proc) -> Vec<BlockId> {
    let n = proc.blocks.len();
    let mut preds = vec![0usize; n];
    for block in &proc.blocks {
        for s in block.term.successors() {
            if let Some(p) = preds.get_mut(s.index()) {
                *p += 1;
            }
        }
    }
    let mut absorbed = vec![false; n];
    let mut carried: Vec<BlockId> = (0..n as u32).map(BlockId).collect();
    for a in 0..n {
        if absorbed[a] {
            continue;
        }
        while let Terminator::Jump(b) = proc.blocks[a].term {
            let b = b.index();
            if b == a || b == 0 || b >= n || preds[b] != 1 || absorbed[b] {
                break;
            }
            absorbed[b] = true;
            let moved = std::mem::take(&mut proc.blocks[b].insts);
            let (term, span) = (proc.blocks[b].term.clone(), proc.blocks[b].term_span);
            let into = &mut proc.blocks[a];
            into.insts.extend(moved);
            into.term = term;
            into.term_span = span;
            carried[a] = carried[b];
        }
    }
    if !absorbed.contains(&true) {
        return carried;
    }
    let mut new_id = vec![0u32; n];
    let mut next = 0u32;
    for (old, id) in new_id.iter_mut().enumerate() {
        *id = next;
        if !absorbed[old] {
            next += 1;
        }
    }
    let blocks = std::mem::take(&mut proc.blocks);
    proc.blocks = blocks
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !absorbed[*i])
        .map(|(_, mut block)| {
            block.term.retarget(|b| BlockId(new_id[b.index()]));
            block
        })
        .collect();
    (0..n)
        .filter(|&i| !absorbed[i])
        .map(|i| carried[i])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::builder::ProcBuilder;
    use crate::ir::interp::Interpreter;
    use crate::ir::{BinaryOp, Buffer, CmpOp, Module, Type};

    /// `s = sum(a(1:n))` with the body, the increment and the exit each
    /// split over two blocks joined by a jump.
    fn split_sum() -> Module {
        let mut proc = Proc::new("sum");
        let mut b = ProcBuilder::new(&mut proc);
        let n = b.param("n", Type::I64, vec![]);
        let a = b.param("a", Type::F64, vec![ProcBuilder::var_dim(n)]);
        let s = b.param("s", Type::F64, vec![]);
        let i = b.local("i", Type::I64);
        let one = b.iconst(Type::I64, 1);
        b.store(i, one);
        let zero = b.fconst(Type::F64, 0.0);
        b.store(s, zero);
        let [header, body, inc, exit, fin] = [(); 5].map(|_| b.create_block());
        b.jump(header);
        b.switch_to_block(header);
        let (iv, nv) = (b.load(i), b.load(n));
        let go = b.cmp(CmpOp::Le, iv, nv);
        b.terminate(Terminator::Branch {
            cond: go,
            then_dest: body,
            else_dest: exit,
        });
        b.switch_to_block(body);
        let iv = b.load(i);
        let x = b.load_elem(a, vec![iv]);
        let sv = b.load(s);
        let sum = b.binary(BinaryOp::Add, sv, x);
        b.store(s, sum);
        b.jump(inc);
        b.switch_to_block(inc);
        let iv = b.load(i);
        let one = b.iconst(Type::I64, 1);
        let next = b.binary(BinaryOp::Add, iv, one);
        b.store(i, next);
        b.jump(header);
        b.switch_to_block(exit);
        b.jump(fin);
        b.switch_to_block(fin);
        b.ret();
        let mut m = Module::default();
        m.add_proc(proc);
        m
    }

    fn run(m: &Module, n: i64) -> Result<Vec<Buffer>, crate::ir::RuntimeError> {
        let mut args = vec![
            Buffer::I64(vec![n]),
            Buffer::F64((1..=3).map(|k| k as f64 * 0.25).collect()),
            Buffer::F64(vec![0.0]),
        ];
        Interpreter::new(m)
            .call(crate::ir::ProcId(0), &mut args)
            .map(|()| args)
    }

    #[test]
    fn jump_chains_merge_and_evaluate_identically() {
        let before = split_sum();
        let mut after = before.clone();
        merge_blocks(&mut after.procs[0]);
        crate::ir::verify::verify_module(&after).expect("merged code verifies");
        // entry, header, body + increment, exit + return.
        assert_eq!(before.procs[0].blocks.len(), 6);
        assert_eq!(after.procs[0].blocks.len(), 4);
        assert!(matches!(
            after.procs[0].blocks[2].term,
            Terminator::Jump(BlockId(1))
        ));
        for n in [0, 1, 3, 4] {
            let (b, a) = (run(&before, n), run(&after, n));
            assert_eq!(b.is_ok(), a.is_ok(), "n = {n}");
            match (b, a) {
                (Ok(b), Ok(a)) => assert_eq!(b, a),
                (Err(b), Err(a)) => assert_eq!(b.to_string(), a.to_string()),
                _ => unreachable!(),
            }
        }
    }

    #[test]
    fn the_entry_and_blocks_with_several_predecessors_stay() {
        let mut m = split_sum();
        // The header has two predecessors (entry and the increment).
        merge_blocks(&mut m.procs[0]);
        let once = m.clone();
        merge_blocks(&mut m.procs[0]);
        let print = |m: &Module| crate::ir::print::print_proc(m, crate::ir::ProcId(0));
        assert_eq!(print(&m), print(&once), "merging is idempotent");
        assert!(matches!(
            m.procs[0].blocks[0].term,
            Terminator::Jump(BlockId(1))
        ));
    }
}
