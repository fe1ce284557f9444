//! Structured control flow from a procedure's control-flow graph.
//!
//! The code lists the transforms produce are graphs of blocks; Fortran
//! wants IF, DO and SELECT CASE. For a reducible graph (all structured
//! input, and the reverse sweeps made from it) this module builds a tree of
//! constructs with the algorithm of N. Ramsey, "Beyond Relooper: recursive
//! translation of unstructured control flow to structured control flow"
//! (ICFP 2022), adapted to Fortran 2008:
//!
//! * a loop header becomes a `do` construct; a back edge to it is a
//!   `cycle`; blocks dominated by the header but outside its loop are
//!   placed after the `do`, so that leaving the loop is an `exit`;
//! * a block with several forward predecessors (a merge point) is placed
//!   after a named `block` construct, and a jump to it is an `exit` of that
//!   construct; a block with one predecessor is written in place;
//! * a two-way branch is an IF, a multi-way one a SELECT CASE.
//!
//! [`simplify`] then removes jumps that only say what falling through
//! does, the `block` constructs nobody exits any more, and turns
//! `if (c) then ... exit; else ...` into a guard followed by the rest.
//! An irreducible graph yields `None`: the printer falls back to labelled
//! blocks and `go to`.

use adjit_ir::{BlockId, Proc, Terminator};
use std::collections::HashSet;

/// Identifies a `do` or `block` construct of the tree.
pub type ConstructId = usize;

/// One construct of the structured tree.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    /// The straight-line statements of a block (its terminator is the
    /// construct that follows it).
    Code(BlockId),
    /// A choice on the condition of `block`'s two-way branch (the
    /// [`Node::Code`] of that block comes right before it); `negate`
    /// inverts the condition.
    If {
        /// The block whose branch condition is tested.
        block: BlockId,
        /// Test `.not.` the condition.
        negate: bool,
        /// Taken when the (possibly negated) condition holds.
        then_: Vec<Node>,
        /// Taken otherwise.
        else_: Vec<Node>,
    },
    /// A SELECT CASE on the selector of `block`'s multi-way branch.
    Select {
        /// The block whose selector is tested.
        block: BlockId,
        /// The keys of each arm and its code.
        arms: Vec<(Vec<i64>, Vec<Node>)>,
        /// `case default`.
        default: Vec<Node>,
    },
    /// `do ... end do`: falling off the end repeats the body.
    Loop {
        /// The construct.
        id: ConstructId,
        /// The body.
        body: Vec<Node>,
    },
    /// `block ... end block`: an `exit` of it continues after it.
    Block {
        /// The construct.
        id: ConstructId,
        /// The body.
        body: Vec<Node>,
    },
    /// Leave construct `id` (a `do` or a `block`).
    Exit(ConstructId),
    /// Start the next iteration of `do` construct `id`.
    Cycle(ConstructId),
    /// Return to the caller.
    Return,
    /// The failing terminator of a block (STOP, ERROR STOP).
    Fail(BlockId),
}

impl Node {
    /// The sequences nested directly in this node.
    pub fn nested(&self) -> Vec<&[Node]> {
        match self {
            Node::Block { body, .. } | Node::Loop { body, .. } => vec![body],
            Node::If { then_, else_, .. } => vec![then_, else_],
            Node::Select { arms, default, .. } => {
                let mut v: Vec<&[Node]> = arms.iter().map(|(_, a)| a.as_slice()).collect();
                v.push(default);
                v
            }
            _ => Vec::new(),
        }
    }

    /// True for an unconditional transfer of control.
    fn is_jump(&self) -> bool {
        matches!(
            self,
            Node::Exit(_) | Node::Cycle(_) | Node::Return | Node::Fail(_)
        )
    }
}

/// True when control never falls off the end of `seq`.
fn ends_in_jump(seq: &[Node]) -> bool {
    match seq.last() {
        Some(n) if n.is_jump() => true,
        Some(Node::If { then_, else_, .. }) => ends_in_jump(then_) && ends_in_jump(else_),
        _ => false,
    }
}

/// The number of nodes in `seq`, nested ones included.
fn size(seq: &[Node]) -> usize {
    seq.iter()
        .map(|n| 1 + n.nested().into_iter().map(size).sum::<usize>())
        .sum()
}

/// The analysed graph: reachable blocks, depth-first order, dominators and
/// natural loops.
struct Cfg {
    /// Reverse-postorder number of each block (`usize::MAX`: unreachable).
    num: Vec<usize>,
    /// Loop body of each loop header (`None`: not a header).
    loop_body: Vec<Option<Vec<bool>>>,
    /// Blocks written after a construct and reached by `exit`.
    follows: Vec<bool>,
    /// Tree children of each block, by increasing reverse-postorder number.
    children: Vec<Vec<usize>>,
}

impl Cfg {
    /// Analyses `proc`; `None` when its graph is irreducible.
    fn new(proc: &Proc) -> Option<Cfg> {
        let n = proc.blocks.len();
        let succ: Vec<Vec<usize>> = (0..n)
            .map(|b| {
                let mut s: Vec<usize> = Vec::new();
                for t in proc.block(BlockId(b as u32)).term.successors() {
                    if !s.contains(&t.index()) {
                        s.push(t.index());
                    }
                }
                s
            })
            .collect();
        // Reverse postorder by an iterative depth-first search.
        let mut post = Vec::with_capacity(n);
        let mut seen = vec![false; n];
        let mut stack: Vec<(usize, usize)> = vec![(0, 0)];
        seen[0] = true;
        while let Some(&mut (b, ref mut k)) = stack.last_mut() {
            if let Some(&s) = succ[b].get(*k) {
                *k += 1;
                if !seen[s] {
                    seen[s] = true;
                    stack.push((s, 0));
                }
            } else {
                post.push(b);
                stack.pop();
            }
        }
        let rpo: Vec<usize> = post.into_iter().rev().collect();
        let mut num = vec![usize::MAX; n];
        for (i, &b) in rpo.iter().enumerate() {
            num[b] = i;
        }
        let mut preds: Vec<Vec<usize>> = vec![Vec::new(); n];
        for &b in &rpo {
            for &s in &succ[b] {
                preds[s].push(b);
            }
        }
        // Dominators (Cooper, Harvey and Kennedy).
        let mut idom = vec![usize::MAX; n];
        idom[0] = 0;
        let mut changed = true;
        while changed {
            changed = false;
            for &b in rpo.iter().skip(1) {
                let mut new = usize::MAX;
                for &p in &preds[b] {
                    if idom[p] == usize::MAX {
                        continue;
                    }
                    new = if new == usize::MAX {
                        p
                    } else {
                        let (mut x, mut y) = (p, new);
                        while x != y {
                            while num[x] > num[y] {
                                x = idom[x];
                            }
                            while num[y] > num[x] {
                                y = idom[y];
                            }
                        }
                        x
                    };
                }
                if idom[b] != new {
                    idom[b] = new;
                    changed = true;
                }
            }
        }
        let dominates = |a: usize, mut b: usize| loop {
            if a == b {
                return true;
            }
            if b == 0 {
                return false;
            }
            b = idom[b];
        };
        // Back edges must go to a dominator; their natural loops.
        let mut forward_in = vec![0; n];
        let mut loop_body: Vec<Option<Vec<bool>>> = vec![None; n];
        for &u in &rpo {
            for &v in &succ[u] {
                if num[v] > num[u] {
                    forward_in[v] += 1;
                    continue;
                }
                if !dominates(v, u) {
                    return None;
                }
                let body = loop_body[v].get_or_insert_with(|| {
                    let mut b = vec![false; n];
                    b[v] = true;
                    b
                });
                let mut work = vec![u];
                while let Some(x) = work.pop() {
                    if !body[x] {
                        body[x] = true;
                        work.extend(preds[x].iter().copied());
                    }
                }
            }
        }
        // Placement: a block dominated from inside a loop but outside it
        // goes after the outermost such loop (its header is the parent).
        let mut parent = vec![usize::MAX; n];
        let mut follows = vec![false; n];
        for &y in rpo.iter().skip(1) {
            let x = idom[y];
            let mut p = x;
            let mut leaves_loop = false;
            for &h in &rpo {
                if num[h] > num[x] {
                    break;
                }
                if let Some(body) = &loop_body[h] {
                    if body[x] && !body[y] {
                        p = h;
                        leaves_loop = true;
                        break;
                    }
                }
            }
            parent[y] = p;
            follows[y] = forward_in[y] >= 2 || leaves_loop;
        }
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        for &y in rpo.iter().skip(1) {
            children[parent[y]].push(y);
        }
        Some(Cfg {
            num,
            loop_body,
            follows,
            children,
        })
    }
}

/// What an enclosing construct offers to jumps from inside it.
enum Frame {
    /// `do` construct `id` repeats from `header`.
    Loop { header: usize, id: ConstructId },
    /// `block` construct `id` is followed by block `next`.
    Follow { next: usize, id: ConstructId },
}

struct Builder<'a> {
    proc: &'a Proc,
    cfg: Cfg,
    frames: Vec<Frame>,
    constructs: usize,
}

/// The structured tree of `proc`'s body, or `None` when its graph is
/// irreducible (or a jump finds no construct to use, which a reducible
/// graph never causes).
pub fn structure(proc: &Proc) -> Option<Vec<Node>> {
    let cfg = Cfg::new(proc)?;
    let mut b = Builder {
        proc,
        cfg,
        frames: Vec::new(),
        constructs: 0,
    };
    let mut tree = b.tree(0)?;
    simplify(&mut tree);
    Some(tree)
}

impl Builder<'_> {
    fn fresh(&mut self) -> ConstructId {
        self.constructs += 1;
        self.constructs
    }

    /// The code of block `x` and of the blocks placed under it.
    fn tree(&mut self, x: usize) -> Option<Vec<Node>> {
        let follow: Vec<usize> = self.cfg.children[x]
            .iter()
            .copied()
            .filter(|&y| self.cfg.follows[y])
            .collect();
        match self.cfg.loop_body[x].clone() {
            Some(body) => {
                let (inside, outside): (Vec<usize>, Vec<usize>) =
                    follow.into_iter().partition(|&y| body[y]);
                self.wrap(&outside, &mut |b: &mut Self| {
                    let id = b.fresh();
                    b.frames.push(Frame::Loop { header: x, id });
                    let inner = b.wrap(&inside, &mut |b: &mut Self| b.within(x));
                    b.frames.pop();
                    Some(vec![Node::Loop { id, body: inner? }])
                })
            }
            None => self.wrap(&follow, &mut |b: &mut Self| b.within(x)),
        }
    }

    /// `inner` inside one `block` construct per follower (the last, with
    /// the highest number, outermost), each followed by its code.
    fn wrap(
        &mut self,
        follow: &[usize],
        inner: &mut dyn FnMut(&mut Self) -> Option<Vec<Node>>,
    ) -> Option<Vec<Node>> {
        let Some((&y, rest)) = follow.split_last() else {
            return inner(self);
        };
        let id = self.fresh();
        self.frames.push(Frame::Follow { next: y, id });
        let body = self.wrap(rest, inner);
        self.frames.pop();
        let mut out = vec![Node::Block { id, body: body? }];
        out.extend(self.tree(y)?);
        Some(out)
    }

    /// Block `x`'s statements and its terminator as constructs.
    fn within(&mut self, x: usize) -> Option<Vec<Node>> {
        let block = self.proc.block(BlockId(x as u32));
        let mut out = vec![Node::Code(BlockId(x as u32))];
        match &block.term {
            Terminator::Jump(t) => out.extend(self.branch(x, t.index())?),
            Terminator::Branch {
                then_dest,
                else_dest,
                ..
            } => {
                if then_dest == else_dest {
                    out.extend(self.branch(x, then_dest.index())?);
                } else {
                    out.push(Node::If {
                        block: BlockId(x as u32),
                        negate: false,
                        then_: self.branch(x, then_dest.index())?,
                        else_: self.branch(x, else_dest.index())?,
                    });
                }
            }
            Terminator::Switch { cases, default, .. } => {
                // The first case of a key wins; keys going where the
                // default goes need no arm.
                let mut keys_seen = HashSet::new();
                let mut dests: Vec<(BlockId, Vec<i64>)> = Vec::new();
                for (key, dest) in cases {
                    if !keys_seen.insert(*key) || dest == default {
                        continue;
                    }
                    match dests.iter_mut().find(|(d, _)| d == dest) {
                        Some((_, keys)) => keys.push(*key),
                        None => dests.push((*dest, vec![*key])),
                    }
                }
                let default_code = self.branch(x, default.index())?;
                if dests.is_empty() {
                    out.extend(default_code);
                } else {
                    let mut arms = Vec::new();
                    for (dest, keys) in dests {
                        arms.push((keys, self.branch(x, dest.index())?));
                    }
                    out.push(Node::Select {
                        block: BlockId(x as u32),
                        arms,
                        default: default_code,
                    });
                }
            }
            Terminator::Return => out.push(Node::Return),
            Terminator::Fail(_) => out.push(Node::Fail(BlockId(x as u32))),
        }
        Some(out)
    }

    /// The jump from block `from` to block `to`.
    fn branch(&mut self, from: usize, to: usize) -> Option<Vec<Node>> {
        if self.cfg.num[to] <= self.cfg.num[from] {
            return self.frames.iter().rev().find_map(|f| match f {
                Frame::Loop { header, id } if *header == to => Some(vec![Node::Cycle(*id)]),
                _ => None,
            });
        }
        if self.cfg.follows[to] {
            return self.frames.iter().rev().find_map(|f| match f {
                Frame::Follow { next, id } if *next == to => Some(vec![Node::Exit(*id)]),
                _ => None,
            });
        }
        self.tree(to)
    }
}

/// Tidies a tree: drops jumps that do what falling through does, turns an
/// IF whose THEN part ends in a jump into a guard followed by its ELSE
/// part, and removes `block` constructs nobody exits.
pub fn simplify(tree: &mut Vec<Node>) {
    for _ in 0..4 {
        let before = tree.clone();
        tidy(tree, &[Node::Return]);
        let mut used = HashSet::new();
        targets(tree, &mut used);
        splice(tree, &used);
        if *tree == before {
            break;
        }
    }
}

/// `tail`: the jumps equivalent to falling off the end of `seq`.
fn tidy(seq: &mut Vec<Node>, tail: &[Node]) {
    // Guards: `if (c) then A; jump; else B; end if` is `if (c) then A;
    // jump; end if; B`.
    let mut i = 0;
    while i < seq.len() {
        if let Node::If {
            negate,
            then_,
            else_,
            ..
        } = &mut seq[i]
        {
            // The shorter arm that ends in a jump becomes the guard.
            if ends_in_jump(else_) && (!ends_in_jump(then_) || size(else_) < size(then_)) {
                std::mem::swap(then_, else_);
                *negate = !*negate;
            }
            if ends_in_jump(then_) && !else_.is_empty() {
                let rest = std::mem::take(else_);
                seq.splice(i + 1..i + 1, rest);
            }
        }
        i += 1;
    }
    while seq.last().is_some_and(|n| tail.contains(n)) {
        seq.pop();
    }
    let n = seq.len();
    for (i, node) in seq.iter_mut().enumerate() {
        let outer: &[Node] = if i + 1 == n { tail } else { &[] };
        match node {
            Node::Block { id, body } => {
                let mut t = outer.to_vec();
                t.push(Node::Exit(*id));
                tidy(body, &t);
            }
            Node::Loop { id, body } => {
                // Leaving the loop is leaving the constructs it ends.
                let ends: Vec<ConstructId> = outer
                    .iter()
                    .filter_map(|t| match t {
                        Node::Exit(b) => Some(*b),
                        _ => None,
                    })
                    .collect();
                retarget(body, &ends, *id);
                tidy(body, &[Node::Cycle(*id)]);
            }
            Node::If { then_, else_, .. } => {
                tidy(then_, outer);
                tidy(else_, outer);
            }
            Node::Select { arms, default, .. } => {
                for (_, arm) in arms {
                    tidy(arm, outer);
                }
                tidy(default, outer);
            }
            _ => {}
        }
    }
}

/// Calls `f` on every sequence nested in `seq`'s nodes.
fn each_nested(seq: &mut [Node], f: &mut dyn FnMut(&mut Vec<Node>)) {
    for node in seq {
        match node {
            Node::Block { body, .. } | Node::Loop { body, .. } => f(body),
            Node::If { then_, else_, .. } => {
                f(then_);
                f(else_);
            }
            Node::Select { arms, default, .. } => {
                for (_, arm) in arms {
                    f(arm);
                }
                f(default);
            }
            _ => {}
        }
    }
}

/// Rewrites `exit` of any of `from` into `exit to`.
fn retarget(seq: &mut [Node], from: &[ConstructId], to: ConstructId) {
    for node in seq.iter_mut() {
        if let Node::Exit(b) = node {
            if from.contains(b) {
                *b = to;
            }
        }
    }
    each_nested(seq, &mut |s| retarget(s, from, to));
}

/// Collects the constructs some `exit` leaves.
fn targets(seq: &mut [Node], used: &mut HashSet<ConstructId>) {
    for node in seq.iter() {
        if let Node::Exit(b) = node {
            used.insert(*b);
        }
    }
    each_nested(seq, &mut |s| targets(s, used));
}

/// Replaces each `block` construct not in `used` by its body.
fn splice(seq: &mut Vec<Node>, used: &HashSet<ConstructId>) {
    let mut out = Vec::with_capacity(seq.len());
    for node in seq.drain(..) {
        match node {
            Node::Block { id, body } if !used.contains(&id) => out.extend(body),
            n => out.push(n),
        }
    }
    *seq = out;
    each_nested(seq, &mut |s| splice(s, used));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ends_in_jump_looks_through_ifs() {
        let b = BlockId(0);
        assert!(ends_in_jump(&[Node::Return]));
        assert!(!ends_in_jump(&[Node::Code(b)]));
        let both = Node::If {
            block: b,
            negate: false,
            then_: vec![Node::Exit(1)],
            else_: vec![Node::Cycle(2)],
        };
        assert!(ends_in_jump(&[both]));
        let one = Node::If {
            block: b,
            negate: false,
            then_: vec![Node::Exit(1)],
            else_: vec![],
        };
        assert!(!ends_in_jump(&[one]));
    }
}
