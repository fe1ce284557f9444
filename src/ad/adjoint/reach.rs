//! Control-flow facts the adjoint transform needs: which blocks run at all,
//! and the incoming edges of each block (the predecessor ids recorded at
//! joins, seed 000's general control-flow reversal).

use adjit_ir::{BlockId, Proc, Terminator};

/// Blocks reachable from the entry block.
pub(crate) fn reachable_blocks(proc: &Proc) -> Vec<bool> {
    let mut seen = vec![false; proc.blocks.len()];
    let mut work = vec![Proc::ENTRY];
    while let Some(b) = work.pop() {
        if b.index() >= seen.len() || seen[b.index()] {
            continue;
        }
        seen[b.index()] = true;
        work.extend(proc.successors(b));
    }
    seen
}

/// Where control came from when it entered a block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pred {
    /// The procedure was entered (only for the entry block).
    Entry,
    /// An edge from this block.
    Block(BlockId),
}

/// Incoming edges of every reachable block, in a fixed order (the position
/// of an edge in its target's list is the id pushed on the Control stack
/// when the target has several). Parallel edges appear once per edge.
pub(crate) fn incoming_edges(proc: &Proc, reachable: &[bool]) -> Vec<Vec<Pred>> {
    let mut edges = vec![Vec::new(); proc.blocks.len()];
    edges[Proc::ENTRY.index()].push(Pred::Entry);
    for (b, &live) in reachable.iter().enumerate() {
        if live {
            for s in proc.successors(BlockId(b as u32)) {
                edges[s.index()].push(Pred::Block(BlockId(b as u32)));
            }
        }
    }
    edges
}

/// Reachable blocks that return normally.
pub(crate) fn return_blocks(proc: &Proc, reachable: &[bool]) -> Vec<BlockId> {
    (0..proc.blocks.len())
        .filter(|&b| reachable[b] && matches!(proc.blocks[b].term, Terminator::Return))
        .map(|b| BlockId(b as u32))
        .collect()
}

/// Predecessor blocks of every block (with repetition for parallel edges).
pub(crate) fn predecessors(proc: &Proc) -> Vec<Vec<BlockId>> {
    let mut preds = vec![Vec::new(); proc.blocks.len()];
    for b in 0..proc.blocks.len() {
        for s in proc.successors(BlockId(b as u32)) {
            preds[s.index()].push(BlockId(b as u32));
        }
    }
    preds
}
