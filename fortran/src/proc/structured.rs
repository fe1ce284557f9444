//! Writes the structured tree of a procedure ([`crate::structure`]) as
//! Fortran constructs: IF / ELSE IF / ELSE, SELECT CASE, DO, DO WHILE,
//! named BLOCK constructs left by EXIT, and EXIT / CYCLE.

use super::Printer;
use crate::counted::Control;
use crate::expr::{self, Expr};
use crate::structure::{ConstructId, Node};
use crate::EmitError;
use adjit_ir::{BlockId, Const, Span, Terminator};
use std::collections::{HashMap, HashSet};

/// What the writer knows while it walks the tree.
#[derive(Default)]
struct State {
    /// `do` constructs jumped to from inside a nested `do` (they get names).
    named_loops: HashSet<ConstructId>,
    /// The name of each construct written so far (`None`: an unnamed `do`).
    names: HashMap<ConstructId, Option<String>>,
    /// The open `do` constructs, innermost last.
    loops: Vec<ConstructId>,
    /// The condition or selector of the block whose code was just written.
    cond: Option<Expr>,
}

/// Collects the `do` constructs that a jump from inside a nested `do`
/// leaves or repeats.
fn named_loops(seq: &[Node], open: &mut Vec<ConstructId>, named: &mut HashSet<ConstructId>) {
    for node in seq {
        match node {
            Node::Exit(id) | Node::Cycle(id) => {
                if open.contains(id) && open.last() != Some(id) {
                    named.insert(*id);
                }
            }
            Node::Loop { id, body } => {
                open.push(*id);
                named_loops(body, open, named);
                open.pop();
            }
            n => {
                for s in n.nested() {
                    named_loops(s, open, named);
                }
            }
        }
    }
}

/// `.not. c`, without doubling a negation.
fn negated(c: &Expr) -> Expr {
    match c.text.strip_prefix(".not. ") {
        Some(rest) if c.prec == expr::NOT => Expr {
            text: rest.to_string(),
            prec: expr::NOT + 1,
        },
        _ => Expr {
            text: format!(".not. {}", c.at_least(expr::NOT + 1)),
            prec: expr::NOT,
        },
    }
}

/// The arms of an IF with a non-empty THEN part where possible.
fn arms<'n>(negate: bool, then_: &'n [Node], else_: &'n [Node]) -> (bool, &'n [Node], &'n [Node]) {
    if then_.is_empty() {
        (!negate, else_, then_)
    } else {
        (negate, then_, else_)
    }
}

impl Printer<'_, '_> {
    /// Writes the body from its structured tree.
    pub(super) fn structured(&mut self, tree: &[Node]) -> Result<(), EmitError> {
        let mut st = State::default();
        named_loops(tree, &mut Vec::new(), &mut st.named_loops);
        self.seq(tree, &mut st)
    }

    /// Writes block `b`'s statements; returns its terminator's operand.
    fn code(&mut self, b: BlockId) -> Result<Option<Expr>, EmitError> {
        let exprs = self.block_code(b)?;
        Ok(self
            .proc
            .block(b)
            .term
            .operand()
            .and_then(|o| exprs.get(&o).cloned()))
    }

    /// The condition written by the preceding [`Node::Code`].
    fn take_cond(&self, st: &mut State, b: BlockId) -> Result<Expr, EmitError> {
        st.cond.take().ok_or_else(|| {
            self.err(
                format!("the branch of block {} without its condition", b.index()),
                Span::default(),
            )
        })
    }

    /// The line(s) since `mark` are only comments.
    fn only_comments_since(&self, mark: usize) -> bool {
        self.lines[mark..]
            .iter()
            .all(|l| l.trim_start().starts_with('!'))
    }

    fn nested(&mut self, seq: &[Node], st: &mut State) -> Result<(), EmitError> {
        self.indent += 1;
        let r = self.seq(seq, st);
        self.indent -= 1;
        r
    }

    fn seq(&mut self, seq: &[Node], st: &mut State) -> Result<(), EmitError> {
        for node in seq {
            match node {
                Node::Code(b) => st.cond = self.code(*b)?,
                Node::If {
                    block,
                    negate,
                    then_,
                    else_,
                } => {
                    let c = self.take_cond(st, *block)?;
                    self.write_if(c, *negate, then_, else_, st)?;
                }
                Node::Select {
                    block,
                    arms,
                    default,
                } => {
                    let sel = self.take_cond(st, *block)?;
                    self.emit_line(format!("select case ({})", sel.text));
                    for (keys, arm) in arms {
                        let keys: Vec<String> = keys.iter().map(|k| k.to_string()).collect();
                        self.emit_line(format!("case ({})", keys.join(", ")));
                        self.nested(arm, st)?;
                    }
                    if !default.is_empty() {
                        self.emit_line("case default".into());
                        self.nested(default, st)?;
                    }
                    self.emit_line("end select".into());
                }
                Node::Loop { id, body } => self.write_loop(*id, body, st)?,
                Node::Block { id, body } => {
                    let name = self.fresh("blk");
                    st.names.insert(*id, Some(name.clone()));
                    self.emit_line(format!("{name}: block"));
                    self.nested(body, st)?;
                    self.emit_line(format!("end block {name}"));
                }
                Node::Exit(id) => {
                    let line = self.jump("exit", *id, st);
                    self.emit_line(line);
                }
                Node::Cycle(id) => {
                    let line = self.jump("cycle", *id, st);
                    self.emit_line(line);
                }
                Node::Return => self.emit_line("return".into()),
                Node::Fail(b) => {
                    let block = self.proc.block(*b);
                    let term: &Terminator = &block.term;
                    self.terminator(term, &HashMap::new(), None, false, block.term_span)?;
                }
            }
        }
        Ok(())
    }

    /// `exit` / `cycle` of construct `id`, named unless it is the
    /// innermost `do`.
    fn jump(&self, word: &str, id: ConstructId, st: &State) -> String {
        match st.names.get(&id) {
            Some(Some(name)) if st.loops.last() != Some(&id) => format!("{word} {name}"),
            _ => word.to_string(),
        }
    }

    /// A one-line IF for a lone jump.
    fn simple_jump(&self, seq: &[Node], st: &State) -> Option<String> {
        match seq {
            [Node::Exit(id)] => Some(self.jump("exit", *id, st)),
            [Node::Cycle(id)] => Some(self.jump("cycle", *id, st)),
            [Node::Return] => Some("return".into()),
            _ => None,
        }
    }

    fn write_if(
        &mut self,
        c: Expr,
        negate: bool,
        then_: &[Node],
        else_: &[Node],
        st: &mut State,
    ) -> Result<(), EmitError> {
        let (negate, then_, else_) = arms(negate, then_, else_);
        if then_.is_empty() {
            return Ok(());
        }
        let c = if negate { negated(&c) } else { c };
        if else_.is_empty() {
            if let Some(j) = self.simple_jump(then_, st) {
                self.emit_line(format!("if ({}) {j}", c.text));
                return Ok(());
            }
        }
        self.emit_line(format!("if ({}) then", c.text));
        self.nested(then_, st)?;
        let mut rest = else_;
        while !rest.is_empty() {
            if let [Node::Code(b), Node::If {
                block,
                negate,
                then_,
                else_,
            }] = rest
            {
                let (negate, then2, else2) = arms(*negate, then_, else_);
                if block == b && !then2.is_empty() {
                    // ELSE IF when the block computes its condition without
                    // statements.
                    let mark = self.lines.len();
                    self.indent += 1;
                    let c2 = self.code(*b)?;
                    self.indent -= 1;
                    let Some(c2) = c2 else {
                        return Err(self.err("a branch without its condition", Span::default()));
                    };
                    if self.only_comments_since(mark) {
                        let comments = self.lines.split_off(mark);
                        let c2 = if negate { negated(&c2) } else { c2 };
                        self.emit_line(format!("else if ({}) then", c2.text));
                        self.lines.extend(comments);
                        self.nested(then2, st)?;
                        rest = else2;
                        continue;
                    }
                    let line = format!("{}else", "  ".repeat(self.indent));
                    self.lines.insert(mark, line);
                    st.cond = Some(c2);
                    self.nested(&rest[1..], st)?;
                    break;
                }
            }
            self.emit_line("else".into());
            self.nested(rest, st)?;
            break;
        }
        self.emit_line("end if".into());
        Ok(())
    }

    fn write_loop(
        &mut self,
        id: ConstructId,
        body: &[Node],
        st: &mut State,
    ) -> Result<(), EmitError> {
        let name = st.named_loops.contains(&id).then(|| self.fresh("loop"));
        st.names.insert(id, name.clone());
        let label = name.as_ref().map(|n| format!("{n}: ")).unwrap_or_default();
        let end = match &name {
            Some(n) => format!("end do {n}"),
            None => "end do".to_string(),
        };
        st.loops.push(id);
        // DO WHILE: the header only computes the condition of leaving.
        if let [Node::Code(h), Node::If {
            block,
            negate,
            then_,
            else_,
        }, rest @ ..] = body
        {
            let exit = [Node::Exit(id)];
            let leaves_when = if then_.as_slice() == exit && else_.is_empty() {
                Some(true)
            } else if else_.as_slice() == exit && then_.is_empty() {
                Some(false)
            } else {
                None
            };
            if let (true, Some(leaves_when)) = (block == h, leaves_when) {
                let mark = self.lines.len();
                self.indent += 1;
                let c = self.code(*h)?;
                self.indent -= 1;
                let Some(c) = c else {
                    return Err(self.err("a branch without its condition", Span::default()));
                };
                if self.only_comments_since(mark) {
                    let comments: Vec<String> = self
                        .lines
                        .split_off(mark)
                        .into_iter()
                        .map(|l| l.replacen("  ", "", 1))
                        .collect();
                    self.lines.extend(comments);
                    // Stay while the leaving condition is false.
                    let stay = if leaves_when != *negate {
                        negated(&c)
                    } else {
                        c
                    };
                    let head = match self.counted_do(*h, leaves_when != *negate) {
                        Some(control) => format!("{label}do {control}"),
                        None => format!("{label}do while ({})", stay.text),
                    };
                    self.emit_line(head);
                    self.nested(rest, st)?;
                } else {
                    let line = format!("{}{label}do", "  ".repeat(self.indent));
                    self.lines.insert(mark, line);
                    st.cond = Some(c);
                    self.nested(&body[1..], st)?;
                }
                st.loops.pop();
                self.emit_line(end);
                return Ok(());
            }
        }
        if let Some(Node::Code(h)) = body.first() {
            self.counted_failed |= self.counted.loops.contains_key(h);
        }
        self.emit_line(format!("{label}do"));
        self.nested(body, st)?;
        st.loops.pop();
        self.emit_line(end);
        Ok(())
    }

    /// The loop control `i = start, end[, step]` of the counted loop
    /// headed by `h` (`None`: not one). `negated_stay`: the loop stays
    /// while its header's condition is false, which a counted loop never
    /// does.
    fn counted_do(&mut self, h: BlockId, negated_stay: bool) -> Option<String> {
        let l = self.counted.loops.get(&h)?;
        if negated_stay {
            self.counted_failed = true;
            return None;
        }
        let var = &self.names[l.var.index()];
        let ty = self.proc.var(l.var).ty;
        match l.control {
            Control::Forward { step, .. } => {
                let Some((start, end)) = self.bounds.get(&h) else {
                    self.counted_failed = true;
                    return None;
                };
                let mut control = format!("{var} = {}, {}", start.text, end.text);
                if step != 1 {
                    control.push_str(&format!(", {}", expr::literal(Const::Int(step), ty).text));
                }
                Some(control)
            }
            Control::Reverse { trips, step } => {
                let trips = &self.names[trips.index()];
                let step = &self.names[step.index()];
                let kind = expr::kind(ty).unwrap_or(4);
                Some(format!(
                    "{var} = {var} - {step}, int({var} - {trips} * {step}, {kind}), -{step}"
                ))
            }
        }
    }
}
