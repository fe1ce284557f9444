//! Control-flow recording plan: which joins record the incoming edge's id
//! and which loops record an iteration count instead.
//!
//! The general scheme (seed 000) pushes, on every edge into a block with
//! several incoming edges, the edge's position; it is correct for any CFG.
//! For a *natural loop* whose header has exactly two incoming edges (one
//! from outside, one back edge from a block the header dominates: DO, DO
//! WHILE, GO TO loops that are reducible), the forward sweep instead counts
//! the iterations in a counter variable (set to 0 on entry, incremented on
//! the back edge) and pushes the count once on every edge leaving the loop
//! (EXIT, GO TO out, RETURN inside); the reverse sweep pops it when it
//! re-enters the loop from that exit and, at the header, goes back around
//! while the count is positive, decrementing it (seed 001's iteration
//! counters, seed 003 fig. 1). One push per loop execution instead of one
//! per iteration. Irreducible loops keep the general scheme.

use rustc_hash::FxHashMap as HashMap;

use adjit_ir::{BlockId, Proc, Type, Var, VarId};

use super::reach::Pred;

/// A loop whose iterations are counted.
#[derive(Clone, Debug)]
pub(crate) struct CountedLoop {
    /// Position of the entry edge in the header's incoming edges.
    pub entry_edge: usize,
    /// Position of the back edge.
    pub back_edge: usize,
    /// The iteration counter (an I64 local of the generated procedures).
    pub counter: VarId,
    /// Blocks of the loop (indexed by block).
    pub body: Vec<bool>,
}

/// The control-flow recording plan of one procedure.
#[derive(Clone, Debug, Default)]
pub(crate) struct ControlPlan {
    /// Counted loops by header.
    pub loops: HashMap<BlockId, CountedLoop>,
}

impl ControlPlan {
    /// Finds the counted loops of `proc` (`edges` from
    /// [`super::reach::incoming_edges`]) and adds their counters to `vars`.
    pub fn new(proc: &Proc, reachable: &[bool], edges: &[Vec<Pred>], vars: &mut Vec<Var>) -> Self {
        let dom = dominators(proc, reachable, edges);
        let mut loops = HashMap::default();
        for (h, incoming) in edges.iter().enumerate() {
            if !reachable[h] || incoming.len() != 2 {
                continue;
            }
            let inside = |p: &Pred| matches!(p, Pred::Block(b) if dom[b.index()][h]);
            let back: Vec<usize> = (0..2).filter(|&k| inside(&incoming[k])).collect();
            let [back_edge] = back[..] else { continue };
            let Pred::Block(latch) = incoming[back_edge] else {
                continue;
            };
            let body = natural_loop(edges, BlockId(h as u32), latch);
            vars.push(Var::scalar(format!("_ad_trips{h}"), Type::I64));
            loops.insert(
                BlockId(h as u32),
                CountedLoop {
                    entry_edge: 1 - back_edge,
                    back_edge,
                    counter: VarId(vars.len() as u32 - 1),
                    body,
                },
            );
        }
        ControlPlan { loops }
    }

    /// The counters pushed on an edge leaving `from` for `to` (`None`: the
    /// procedure's return): those of the loops containing `from` but not
    /// `to`, in a fixed order (the reverse sweep pops them in the opposite
    /// order).
    pub fn exit_counters(&self, from: BlockId, to: Option<BlockId>) -> Vec<VarId> {
        let mut out: Vec<(BlockId, VarId)> = self
            .loops
            .iter()
            .filter(|(_, l)| l.body[from.index()] && !to.is_some_and(|t| l.body[t.index()]))
            .map(|(&h, l)| (h, l.counter))
            .collect();
        out.sort();
        out.into_iter().map(|(_, c)| c).collect()
    }
}

/// `dom[b][d]`: block `d` dominates block `b` (reachable blocks only).
fn dominators(proc: &Proc, reachable: &[bool], edges: &[Vec<Pred>]) -> Vec<Vec<bool>> {
    let n = proc.blocks.len();
    let mut dom: Vec<Vec<bool>> = (0..n).map(|_| reachable.to_vec()).collect();
    let mut changed = true;
    while changed {
        changed = false;
        for b in (0..n).filter(|&b| reachable[b]) {
            let mut new: Vec<bool> = vec![true; n];
            for pred in &edges[b] {
                match pred {
                    Pred::Entry => new.iter_mut().for_each(|x| *x = false),
                    Pred::Block(p) if reachable[p.index()] => {
                        for (x, &y) in new.iter_mut().zip(&dom[p.index()]) {
                            *x &= y;
                        }
                    }
                    Pred::Block(_) => {}
                }
            }
            new[b] = true;
            if new != dom[b] {
                dom[b] = new;
                changed = true;
            }
        }
    }
    dom
}

/// The blocks of the natural loop of the back edge `latch -> header`.
fn natural_loop(edges: &[Vec<Pred>], header: BlockId, latch: BlockId) -> Vec<bool> {
    let mut body = vec![false; edges.len()];
    body[header.index()] = true;
    let mut work = vec![latch];
    while let Some(b) = work.pop() {
        if body[b.index()] {
            continue;
        }
        body[b.index()] = true;
        for pred in &edges[b.index()] {
            if let Pred::Block(p) = pred {
                work.push(*p);
            }
        }
    }
    body
}
