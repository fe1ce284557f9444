//! Irreducible control flow made reducible by node splitting.
//!
//! The reverse sweep of a loop left at several points (EXIT, RETURN, a
//! jump out of nested loops) enters the reversed loop at each of those
//! points: a loop with several entries, which no Fortran DO construct
//! expresses. Splitting copies the blocks of such a loop that are not its
//! chosen header (the one reached first), and sends every other entry into
//! the copy; the copy runs the partial trip and then joins the loop at the
//! header. Repeated on the regions that remain irreducible, this yields a
//! reducible graph whose paths are those of the original, so
//! [`crate::structure`] can write it with DO, IF and EXIT (the price is
//! the copied code, bounded by [`reducible`]).

use crate::structure;
use adjit_ir::{BlockId, Proc, Terminator, Value};
use std::collections::HashMap;

/// A copy of `proc` whose graph is reducible, or `None` when splitting
/// would copy more than a few times the procedure's blocks.
pub fn reducible(proc: &Proc) -> Option<Proc> {
    let mut p = proc.clone();
    let limit = 4 * proc.blocks.len() + 32;
    for _ in 0..64 {
        if structure::structure(&p).is_some() {
            return Some(p);
        }
        if !split_once(&mut p) || p.blocks.len() > limit {
            return None;
        }
    }
    None
}

/// The reachable blocks' successors, predecessors and depth-first
/// preorder numbers.
struct Graph {
    succ: Vec<Vec<usize>>,
    preds: Vec<Vec<usize>>,
    order: Vec<usize>,
}

impl Graph {
    fn new(p: &Proc) -> Graph {
        let n = p.blocks.len();
        let succ: Vec<Vec<usize>> = (0..n)
            .map(|b| {
                p.block(BlockId(b as u32))
                    .term
                    .successors()
                    .iter()
                    .map(|s| s.index())
                    .collect()
            })
            .collect();
        let mut order = vec![usize::MAX; n];
        let mut next = 0;
        let mut work = vec![0];
        while let Some(b) = work.pop() {
            if order[b] != usize::MAX {
                continue;
            }
            order[b] = next;
            next += 1;
            for &s in succ[b].iter().rev() {
                if order[s] == usize::MAX {
                    work.push(s);
                }
            }
        }
        let mut preds = vec![Vec::new(); n];
        for b in 0..n {
            if order[b] == usize::MAX {
                continue;
            }
            for &s in &succ[b] {
                if !preds[s].contains(&b) {
                    preds[s].push(b);
                }
            }
        }
        Graph { succ, preds, order }
    }

    /// The strongly connected components of the subgraph of `nodes` that
    /// contain a cycle (Tarjan's algorithm, iterative).
    fn cycles(&self, nodes: &[bool]) -> Vec<Vec<usize>> {
        let n = nodes.len();
        let mut index = vec![usize::MAX; n];
        let mut low = vec![0; n];
        let mut on = vec![false; n];
        let mut stack = Vec::new();
        let mut out = Vec::new();
        let mut counter = 0;
        for root in 0..n {
            if !nodes[root] || index[root] != usize::MAX {
                continue;
            }
            let mut call: Vec<(usize, usize)> = vec![(root, 0)];
            index[root] = counter;
            low[root] = counter;
            counter += 1;
            stack.push(root);
            on[root] = true;
            while let Some(&mut (v, ref mut k)) = call.last_mut() {
                if let Some(&w) = self.succ[v].get(*k) {
                    *k += 1;
                    if !nodes[w] {
                        continue;
                    }
                    if index[w] == usize::MAX {
                        index[w] = counter;
                        low[w] = counter;
                        counter += 1;
                        stack.push(w);
                        on[w] = true;
                        call.push((w, 0));
                    } else if on[w] {
                        low[v] = low[v].min(index[w]);
                    }
                } else {
                    call.pop();
                    if let Some(&(u, _)) = call.last() {
                        low[u] = low[u].min(low[v]);
                    }
                    if low[v] == index[v] {
                        let mut comp = Vec::new();
                        while let Some(w) = stack.pop() {
                            on[w] = false;
                            comp.push(w);
                            if w == v {
                                break;
                            }
                        }
                        let cyclic = comp.len() > 1 || self.succ[v].contains(&v);
                        if cyclic {
                            out.push(comp);
                        }
                    }
                }
            }
        }
        out
    }
}

/// Splits one region with several entries; false when there is none.
fn split_once(p: &mut Proc) -> bool {
    let g = Graph::new(p);
    let n = p.blocks.len();
    let mut regions: Vec<Vec<bool>> = vec![g.order.iter().map(|&o| o != usize::MAX).collect()];
    while let Some(region) = regions.pop() {
        for comp in g.cycles(&region) {
            let mut inside = vec![false; n];
            for &b in &comp {
                inside[b] = true;
            }
            let mut entries: Vec<usize> = comp
                .iter()
                .copied()
                .filter(|&b| g.preds[b].iter().any(|&q| !inside[q]))
                .collect();
            entries.sort_by_key(|&b| g.order[b]);
            match entries.as_slice() {
                [] => {}
                [h] => {
                    // One entry: look for irreducible loops inside it.
                    inside[*h] = false;
                    regions.push(inside);
                }
                [h, others @ ..] => {
                    copy_region(p, &g, &comp, *h, others, &inside);
                    return true;
                }
            }
        }
    }
    false
}

/// Copies the blocks of `comp` but `h`, and sends the edges from outside
/// `comp` into `others` to their copies.
fn copy_region(
    p: &mut Proc,
    g: &Graph,
    comp: &[usize],
    h: usize,
    others: &[usize],
    inside: &[bool],
) {
    let copied: Vec<usize> = comp.iter().copied().filter(|&b| b != h).collect();
    let mut map: HashMap<usize, usize> = HashMap::new();
    for (k, &b) in copied.iter().enumerate() {
        map.insert(b, p.blocks.len() + k);
    }
    for &b in &copied {
        let block = p.block(BlockId(b as u32)).clone();
        let mut values: HashMap<Value, Value> = HashMap::new();
        let mut insts = Vec::with_capacity(block.insts.len());
        for &v in &block.insts {
            let mut data = p.inst(v).clone();
            data.kind
                .for_each_operand_mut(|o| *o = values.get(o).copied().unwrap_or(*o));
            let new = Value(p.insts.len() as u32);
            p.insts.push(data);
            values.insert(v, new);
            insts.push(new);
        }
        let mut term = block.term.clone();
        term.retarget(|s| BlockId(map.get(&s.index()).copied().unwrap_or(s.index()) as u32));
        match &mut term {
            Terminator::Branch { cond: o, .. } | Terminator::Switch { value: o, .. } => {
                *o = values.get(o).copied().unwrap_or(*o);
            }
            _ => {}
        }
        p.blocks.push(adjit_ir::Block {
            insts,
            term,
            term_span: block.term_span,
        });
    }
    for &e in others {
        for &q in &g.preds[e] {
            if inside[q] {
                continue;
            }
            let to = map[&e];
            p.blocks[q].term.retarget(|s| {
                if s.index() == e {
                    BlockId(to as u32)
                } else {
                    s
                }
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use adjit_ir::builder::ProcBuilder;
    use adjit_ir::{CmpOp, Type};

    /// `entry -> a | b; a -> b; b -> a | exit`: a loop entered at `a`
    /// and at `b`.
    fn two_entry_loop() -> Proc {
        let mut p = Proc::new("two_entries");
        let mut b = ProcBuilder::new(&mut p);
        let x = b.local("x", Type::I32);
        let (la, lb, exit) = (b.create_block(), b.create_block(), b.create_block());
        let v = b.load(x);
        let zero = b.iconst(Type::I32, 0);
        let c = b.cmp(CmpOp::Gt, v, zero);
        b.terminate(Terminator::Branch {
            cond: c,
            then_dest: la,
            else_dest: lb,
        });
        b.switch_to_block(la);
        let v = b.load(x);
        let one = b.iconst(Type::I32, 1);
        let w = b.binary(adjit_ir::BinaryOp::Sub, v, one);
        b.store(x, w);
        b.jump(lb);
        b.switch_to_block(lb);
        let v = b.load(x);
        let zero = b.iconst(Type::I32, 0);
        let c = b.cmp(CmpOp::Gt, v, zero);
        b.terminate(Terminator::Branch {
            cond: c,
            then_dest: la,
            else_dest: exit,
        });
        b.switch_to_block(exit);
        b.terminate(Terminator::Return);
        p
    }

    #[test]
    fn a_loop_entered_twice_is_split_into_a_reducible_graph() {
        let p = two_entry_loop();
        assert!(
            structure::structure(&p).is_none(),
            "the input is irreducible"
        );
        let q = reducible(&p).expect("split");
        assert!(structure::structure(&q).is_some());
        assert!(q.blocks.len() > p.blocks.len());
        // Copies define fresh values: no value is in two blocks.
        let mut seen = std::collections::HashSet::new();
        for block in &q.blocks {
            for v in &block.insts {
                assert!(seen.insert(*v), "value {v:?} in two blocks");
            }
        }
        // The original blocks keep their instructions.
        for (b, block) in p.blocks.iter().enumerate() {
            assert_eq!(q.blocks[b].insts, block.insts);
        }
    }
}
