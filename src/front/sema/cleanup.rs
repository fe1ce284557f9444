//! Final tidying of a lowered procedure: drops blocks no path reaches
//! (code after GO TO / RETURN, scratch blocks) and the instructions they
//! held, and unused side-effect-free instructions (constants folded into
//! others, loads nobody reads), renumbering blocks and values densely.
//!
//! It works on the IR alone, with no knowledge of the Fortran it came from.

use adjit_ir::{
    BinaryOp, Block, BlockId, CallArg, CharBase, CharRef, Inst, InstData, Proc, Terminator, Value,
};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// True for instructions that neither have an effect nor can fail.
fn is_pure(d: &InstData) -> bool {
    match &d.kind {
        Inst::Const(_)
        | Inst::Load(_)
        | Inst::Unary(..)
        | Inst::Cmp(..)
        | Inst::Convert(..)
        | Inst::Select(..)
        | Inst::DimLower(..)
        | Inst::DimExtent(..) => true,
        Inst::Binary(op, ..) => {
            let int = d.ty.is_some_and(|t| t.is_int());
            !(int
                && matches!(
                    op,
                    BinaryOp::Div | BinaryOp::Mod | BinaryOp::Modulo | BinaryOp::Pow
                ))
        }
        _ => false,
    }
}

/// The instructions of a block that are needed: effects, possible
/// failures, and whatever they (or the terminator) read.
fn live_insts(insts: &[InstData], block: &Block) -> HashSet<Value> {
    let mut live = HashSet::default();
    if let Some(v) = block.term.operand() {
        live.insert(v);
    }
    for &v in block.insts.iter().rev() {
        let d = &insts[v.index()];
        if live.contains(&v) || !is_pure(d) {
            live.insert(v);
            d.kind.for_each_operand(|o| {
                live.insert(o);
            });
        }
    }
    live
}

/// Removes unreachable blocks and unused instruction slots.
pub(crate) fn compact(mut p: Proc) -> Proc {
    let n = p.blocks.len();
    let mut reach = vec![false; n];
    let mut stack = vec![Proc::ENTRY];
    while let Some(b) = stack.pop() {
        if std::mem::replace(&mut reach[b.index()], true) {
            continue;
        }
        for s in p.successors(b).into_iter().rev() {
            stack.push(s);
        }
    }
    // Keep the original relative order of reachable blocks (entry first).
    let kept: Vec<BlockId> = (0..n as u32)
        .map(BlockId)
        .filter(|b| reach[b.index()])
        .collect();
    let block_map: HashMap<BlockId, BlockId> = kept
        .iter()
        .enumerate()
        .map(|(i, &b)| (b, BlockId(i as u32)))
        .collect();
    let old_insts = std::mem::take(&mut p.insts);
    let old_blocks = std::mem::take(&mut p.blocks);
    let mut value_map: HashMap<Value, Value> = HashMap::default();
    for b in kept {
        let mut block = old_blocks[b.index()].clone();
        let live = live_insts(&old_insts, &block);
        let mut insts = Vec::new();
        for &v in block.insts.iter().filter(|v| live.contains(v)) {
            let InstData { kind, ty, span } = old_insts[v.index()].clone();
            let kind = remap_inst(kind, &value_map);
            p.insts.push(InstData { kind, ty, span });
            let nv = Value(p.insts.len() as u32 - 1);
            value_map.insert(v, nv);
            insts.push(nv);
        }
        block.insts = insts;
        let m = |v: Value| *value_map.get(&v).unwrap_or(&v);
        let bm = |x: BlockId| block_map[&x];
        block.term = match block.term {
            Terminator::Jump(t) => Terminator::Jump(bm(t)),
            Terminator::Branch {
                cond,
                then_dest,
                else_dest,
            } => Terminator::Branch {
                cond: m(cond),
                then_dest: bm(then_dest),
                else_dest: bm(else_dest),
            },
            Terminator::Switch {
                value,
                cases,
                default,
            } => Terminator::Switch {
                value: m(value),
                cases: cases.into_iter().map(|(k, t)| (k, bm(t))).collect(),
                default: bm(default),
            },
            other => other,
        };
        p.blocks.push(block);
    }
    // A checkpointed loop keeps its mark only when all its blocks remain.
    p.checkpoints = std::mem::take(&mut p.checkpoints)
        .into_iter()
        .filter_map(|mut c| {
            let map = |b: BlockId| block_map.get(&b).copied();
            c.header = map(c.header)?;
            c.body = map(c.body)?;
            c.latch = map(c.latch)?;
            c.exit = map(c.exit)?;
            Some(c)
        })
        .collect();
    p
}

fn remap_inst(inst: Inst, map: &HashMap<Value, Value>) -> Inst {
    let m = |v: Value| *map.get(&v).unwrap_or(&v);
    let ms = |vs: Vec<Value>| vs.into_iter().map(m).collect::<Vec<_>>();
    let cr = |r: CharRef| CharRef {
        base: match r.base {
            CharBase::Var { var, index } => CharBase::Var {
                var,
                index: ms(index),
            },
            lit => lit,
        },
        start: r.start.map(m),
        end: r.end.map(m),
    };
    match inst {
        Inst::Store(x, v) => Inst::Store(x, m(v)),
        Inst::LoadElem(x, idx) => Inst::LoadElem(x, ms(idx)),
        Inst::StoreElem(x, idx, v) => Inst::StoreElem(x, ms(idx), m(v)),
        Inst::Unary(op, v) => Inst::Unary(op, m(v)),
        Inst::Binary(op, a, b) => Inst::Binary(op, m(a), m(b)),
        Inst::Cmp(op, a, b) => Inst::Cmp(op, m(a), m(b)),
        Inst::Convert(v, r) => Inst::Convert(m(v), r),
        Inst::Select(c, a, b) => Inst::Select(m(c), m(a), m(b)),
        Inst::Call(p, args) => Inst::Call(
            p,
            args.into_iter()
                .map(|a| match a {
                    CallArg::Elem(x, idx) => CallArg::Elem(x, ms(idx)),
                    CallArg::Slice(x, idx, n) => CallArg::Slice(x, ms(idx), m(n)),
                    CallArg::Value(v) => CallArg::Value(m(v)),
                    other => other,
                })
                .collect(),
        ),
        Inst::CharAssign(a, b) => Inst::CharAssign(cr(a), cr(b)),
        Inst::CharCompare(op, a, b) => Inst::CharCompare(op, cr(a), cr(b)),
        Inst::Push(k, v) => Inst::Push(k, m(v)),
        other => other.map_operands(m),
    }
}
