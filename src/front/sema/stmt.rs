//! Lowering of executable statements: assignment, IF, DO (Fortran trip
//! count semantics), DO WHILE, EXIT / CYCLE, GO TO, computed GO TO,
//! SELECT CASE, CALL, RETURN, STOP.
//!
//! Expressions are lowered by [`super::expr`] and [`super::array`].

use super::super::ast::{
    Arg, ArgValue, CaseItem, CaseSelector, Expr, ExprKind, Intent, Name, Stmt, StmtKind,
};
use super::alloc::Status;
use super::char_runtime::CharVal;
use super::consts::{type_name, ConstVal};
use super::lowerer::{LoopFrame, Lowerer, Operand, Reported, Resolved, R};
use super::scope::{StructDecl, Sym};
use super::Target;
use adjit_ir::{
    BinaryOp, CallArg, CharBase, CharRef, CmpOp, Const, Inst, Rounding, RuntimeErrorKind, Span,
    Terminator, Type, Value, VarId,
};

impl Lowerer<'_, '_> {
    /// Lowers a statement list.
    pub fn stmts(&mut self, body: &[Stmt]) {
        for s in body {
            self.span = s.span;
            self.start_statement();
            if let Some(l) = s.label {
                if let Some(&b) = self.labels.get(&l) {
                    self.jump(b);
                    self.switch_to(b);
                }
            }
            self.check_here();
            let _ = self.stmt(s);
        }
    }

    /// Lowers a statement that a front-end rewrite produced in place of the
    /// one being lowered, keeping it alive for as long as the lowering borrows it.
    pub(super) fn stmt_rewritten(&mut self, rewritten: Stmt) -> R<()> {
        let rewritten = std::rc::Rc::new(rewritten);
        self.lifted.push(rewritten.clone());
        self.stmt(&rewritten)
    }

    /// Lowers a statement; what it remembered of its expressions by
    /// address is forgotten after it (see [`super::expr_table`]).
    pub(super) fn stmt(&mut self, s: &Stmt) -> R<()> {
        let marks = (self.hoisted.mark(), self.mapped.mark());
        let temps: Vec<VarId> = self.arg_temps.iter().map(|t| t.temp).collect();
        let r = self.stmt_body(s);
        self.hoisted.release(marks.0);
        self.mapped.release(marks.1);
        // Argument temporaries are matched by address too.
        self.arg_temps.retain(|t| temps.contains(&t.temp));
        r
    }

    /// [`Self::stmt`] without the release.
    fn stmt_body(&mut self, s: &Stmt) -> R<()> {
        self.span = s.span;
        if let Some(completed) = self.complete_parts(s)? {
            return self.stmt_rewritten(completed);
        }
        if let Some(rewritten) = self.struct_shapes(s)? {
            return self.stmt_rewritten(rewritten);
        }
        if let Some(rewritten) = self.ragged_stmt(s)? {
            return self.stmt_rewritten(rewritten);
        }
        if let Some(rewritten) = self.defined_operators(s)? {
            return self.stmt_rewritten(rewritten);
        }
        if let Some(rewritten) = self.elemental_struct_assign(s)? {
            return self.stmt_rewritten(rewritten);
        }
        if let Some(rewritten) = self.struct_intrinsic_assign(s)? {
            return rewritten
                .into_iter()
                .try_for_each(|r| self.stmt_rewritten(r));
        }
        if let Some(rewritten) = self.struct_array_value(s)? {
            return rewritten
                .into_iter()
                .try_for_each(|r| self.stmt_rewritten(r));
        }
        if self.dispatch_dim(s)? {
            return Ok(());
        }
        if let Some((lifted, temps)) = self.lift_array_functions(s)? {
            let lifted = std::rc::Rc::new(lifted);
            self.lifted.push(lifted.clone());
            let r = self.stmt(&lifted);
            self.release_lifted(temps);
            return r;
        }
        if self.alloc_scalar_stmt(s)? {
            return Ok(());
        }
        match &s.kind {
            StmtKind::Assign { target, value } => {
                self.hoist(target)?;
                self.hoist(value)?;
                self.assign(target, value)
            }
            StmtKind::If {
                name: _,
                arms,
                else_body,
            } => {
                let end = self.block();
                for (cond, body) in arms {
                    self.span = cond.span;
                    let (then_b, next) = (self.block(), self.block());
                    self.branch_on(cond, then_b, next)?;
                    self.switch_to(then_b);
                    self.stmts(body);
                    self.jump(end);
                    self.switch_to(next);
                }
                if let Some(body) = else_body {
                    self.stmts(body);
                }
                self.jump(end);
                self.switch_to(end);
                Ok(())
            }
            StmtKind::LogicalIf { cond, stmt } => {
                let (then_b, end) = (self.block(), self.block());
                self.branch_on(cond, then_b, end)?;
                self.switch_to(then_b);
                self.stmts(std::slice::from_ref(stmt));
                self.jump(end);
                self.switch_to(end);
                Ok(())
            }
            StmtKind::Do {
                name,
                var,
                start,
                end,
                step,
                body,
            } => {
                self.pending_checkpoint = self.checkpoint_directive(s.span);
                self.do_loop(name.as_ref(), var, start, end, step.as_ref(), &mut |l| {
                    l.stmts(body)
                })
            }
            StmtKind::DoWhile { name, cond, body } => {
                let (header, inner, exit) = (self.block(), self.block(), self.block());
                self.jump(header);
                self.switch_to(header);
                self.span = s.span;
                if let Err(Reported) = self.branch_on(cond, inner, exit) {
                    self.jump(exit);
                }
                self.loop_body(name.as_ref(), header, exit, inner, &mut |l| l.stmts(body));
                Ok(())
            }
            StmtKind::DoForever { name, body } => {
                let (header, exit) = (self.block(), self.block());
                self.jump(header);
                self.switch_to(header);
                self.loop_body(name.as_ref(), header, exit, header, &mut |l| l.stmts(body));
                Ok(())
            }
            StmtKind::Exit(name) | StmtKind::Cycle(name) => {
                let frame = match name {
                    None => self.loops.iter().rev().find(|f| f.is_do),
                    Some(n) => self
                        .loops
                        .iter()
                        .rev()
                        .find(|f| f.name.as_deref() == Some(n.text.as_str())),
                };
                if let (Some(f), Some(n), StmtKind::Cycle(_)) = (frame, name, &s.kind) {
                    if !f.is_do {
                        return Err(self.err(
                            n.span,
                            format!("CYCLE names `{}`, a BLOCK construct, not a DO construct", n.text),
                        ));
                    }
                }
                let Some(frame) = frame else {
                    let what = if matches!(s.kind, StmtKind::Exit(_)) {
                        "EXIT"
                    } else {
                        "CYCLE"
                    };
                    return Err(match name {
                        Some(n) => self.err(
                            n.span,
                            format!("{what}: no enclosing DO construct named `{}`", n.text),
                        ),
                        None => self.err(s.span, format!("{what} outside a DO loop")),
                    });
                };
                let to = if matches!(s.kind, StmtKind::Exit(_)) {
                    frame.exit
                } else {
                    frame.cycle
                };
                self.jump(to);
                Ok(())
            }
            StmtKind::Goto(l) => {
                let b = self.label_block(*l, s)?;
                self.jump(b);
                Ok(())
            }
            StmtKind::ComputedGoto { labels, index } => {
                self.hoist(index)?;
                let (v, _) = self.integer(index)?;
                let mut cases = Vec::new();
                for (i, l) in labels.iter().enumerate() {
                    cases.push((i as i64 + 1, self.label_block(*l, s)?));
                }
                let next = self.block();
                self.terminate(Terminator::Switch {
                    value: v,
                    cases,
                    default: next,
                });
                self.switch_to(next);
                Ok(())
            }
            StmtKind::ArithmeticIf { value, labels } => {
                self.hoist(value)?;
                let (v, t) = self.num(value)?;
                if !(t.is_int() || t.is_float()) {
                    return Err(self.err(
                        value.span,
                        format!(
                            "arithmetic IF needs an integer or real value, not {}",
                            type_name(t)
                        ),
                    ));
                }
                let zero_of = |l: &mut Self| match t {
                    Type::F32 | Type::F64 => l.konst(Const::Float(0.0), t),
                    _ => l.konst(Const::Int(0), t),
                };
                let [negative, equal, positive] =
                    [labels[0], labels[1], labels[2]].map(|l| self.label_block(l, s));
                let (negative, equal, positive) = (negative?, equal?, positive?);
                // Values live in one block: the second test reloads it.
                let held = self.temp("aif", t);
                self.emit(Inst::Store(held, v), None);
                let zero = zero_of(self);
                let below = self.val(Inst::Cmp(CmpOp::Lt, v, zero), Type::Bool);
                let not_below = self.block();
                self.terminate(Terminator::Branch {
                    cond: below,
                    then_dest: negative,
                    else_dest: not_below,
                });
                self.switch_to(not_below);
                let v = self.val(Inst::Load(held), t);
                let zero = zero_of(self);
                let is_zero = self.val(Inst::Cmp(CmpOp::Eq, v, zero), Type::Bool);
                self.terminate(Terminator::Branch {
                    cond: is_zero,
                    then_dest: equal,
                    else_dest: positive,
                });
                Ok(())
            }
            StmtKind::Continue => Ok(()),
            StmtKind::Write {
                format,
                items,
                control,
            } => self.write_stmt(format, items, control, s.span),
            StmtKind::Read {
                format,
                items,
                control,
            } => self.read_stmt(format, items, control, s.span),
            StmtKind::Associate { pairs, body, .. } => self.associate(pairs, body),
            StmtKind::Block { body, name } => {
                self.size_block_arrays(s.span)?;
                let Some(name) = name else {
                    self.stmts(body);
                    return Ok(());
                };
                // A named BLOCK: `exit name` inside jumps past its end.
                let exit = self.block();
                self.loops.push(LoopFrame {
                    name: Some(name.text.clone()),
                    cycle: exit,
                    exit,
                    is_do: false,
                });
                self.stmts(body);
                self.loops.pop();
                self.jump(exit);
                self.switch_to(exit);
                Ok(())
            }
            StmtKind::Return => {
                self.keep_persistent_allocs();
                self.terminate(Terminator::Return);
                Ok(())
            }
            StmtKind::Stop(code) => {
                let msg = match code {
                    None => None,
                    Some(e) => match self.fold(e)? {
                        ConstVal::Str(s) => Some(s),
                        ConstVal::Int(i, _) => Some(i.to_string()),
                        _ => {
                            return Err(self.err(e.span, "STOP code must be an integer or a string"))
                        }
                    },
                };
                self.terminate(Terminator::Fail(RuntimeErrorKind::Stop(msg)));
                Ok(())
            }
            StmtKind::Call { name, args } => {
                if self.directive_line(s.span).is_some_and(|(_, _, text)| {
                    text.split_whitespace().next() == Some("nocheckpoint")
                }) {
                    self.proc.split_calls.push(s.span);
                }
                self.call_stmt(name, args)
            }
            StmtKind::Adf(b) => self.adf_stmt(b),
            StmtKind::SelectCase {
                name: _,
                selector,
                cases,
            } => self.select_case(selector, cases),
            StmtKind::Where { .. } => self.where_construct(s),
            StmtKind::Forall {
                name,
                concurrent,
                indices,
                mask,
                body,
            } => self.forall(name.as_ref(), *concurrent, indices, mask.as_ref(), body),
            StmtKind::Allocate {
                objects,
                stat,
                errmsg,
                source,
                mold,
                char_len,
            } => {
                let objects = self.deferred_string_objects(objects, char_len.as_ref())?;
                self.allocate_stmt(
                    &objects,
                    Status::new(stat.as_ref(), errmsg.as_ref()),
                    source.as_ref(),
                    mold.as_ref(),
                )
            }
            StmtKind::Deallocate {
                objects,
                stat,
                errmsg,
            } => self.deallocate_stmt(objects, Status::new(stat.as_ref(), errmsg.as_ref())),
            StmtKind::Unsupported(what) => {
                Err(self.err(s.span, format!("unsupported Fortran: {what}")))
            }
            // Entries at the top level of a body were split off by the
            // parser; one inside a construct is not Fortran.
            StmtKind::Entry { name, .. } => Err(self.err(
                s.span,
                format!(
                    "ENTRY `{}` inside a construct (ENTRY must be a statement of the procedure's body itself)",
                    name.text
                ),
            )),
        }
    }

    fn label_block(&mut self, l: u32, s: &Stmt) -> R<adjit_ir::BlockId> {
        match self.labels.get(&l) {
            Some(&b) => Ok(b),
            None => {
                let span = self.label_span(l, s.span);
                Err(self.err(span, format!("GO TO an undefined label {l}")))
            }
        }
    }

    /// Where a label is written in a GO TO statement (the statement's
    /// position when the text cannot be searched).
    fn label_span(&self, l: u32, stmt: adjit_ir::Span) -> adjit_ir::Span {
        let Some(line) = self.prog.map.line(stmt.file, stmt.line) else {
            return stmt;
        };
        let digits = l.to_string();
        let from = (stmt.col.max(1) - 1) as usize;
        let bytes = line.as_bytes();
        let mut i = from.min(bytes.len());
        while let Some(k) = line.get(i..).and_then(|rest| rest.find(&digits)) {
            let at = i + k;
            let before = at.checked_sub(1).map(|b| bytes[b]);
            let after = bytes.get(at + digits.len()).copied();
            let word = |c: Option<u8>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_');
            if !word(before) && !word(after) {
                return adjit_ir::Span {
                    col: at as u32 + 1,
                    ..stmt
                };
            }
            i = at + digits.len();
        }
        stmt
    }

    fn loop_body(
        &mut self,
        name: Option<&Name>,
        cycle: adjit_ir::BlockId,
        exit: adjit_ir::BlockId,
        inner: adjit_ir::BlockId,
        body: &mut dyn FnMut(&mut Self),
    ) {
        self.switch_to(inner);
        self.loops.push(LoopFrame {
            name: name.map(|n| n.text.clone()),
            cycle,
            exit,
            is_do: true,
        });
        body(self);
        self.loops.pop();
        self.jump(cycle);
        self.switch_to(exit);
    }

    /// A counted DO loop with Fortran semantics: bounds evaluated once, trip
    /// count `max((end - start + step) / step, 0)` fixed at entry, the DO
    /// variable incremented after every trip.
    ///
    /// An integer loop never computes that count, which overflows its kind
    /// (`do i = -huge(i), huge(i)` has 2 * huge(i) + 1 trips, and 2**64 trips
    /// are possible for INTEGER(8)); it keeps instead, as gfortran does, the
    /// distance still to go as an unsigned 64-bit number (`|end - start|`
    /// in wrapping arithmetic, biased by 2**63 so that a signed comparison
    /// orders it as unsigned) and takes another trip while that distance is
    /// at least `|step|`. A float loop computes its trip count in the
    /// variable's type and truncates it to 64 bits. `body` lowers the body
    /// (statements, or the items of an implied DO).
    pub(super) fn do_loop(
        &mut self,
        name: Option<&Name>,
        var: &Name,
        start: &Expr,
        end: &Expr,
        step: Option<&Expr>,
        body: &mut dyn FnMut(&mut Self),
    ) -> R<()> {
        let directive = self.pending_checkpoint.take();
        for e in [Some(start), Some(end), step].into_iter().flatten() {
            self.hoist(e)?;
        }
        let v = self.var_of(var)?;
        let t = self.proc.var(v).ty;
        if self.proc.var(v).is_array() || !(t.is_int() || t.is_float()) {
            return Err(self.err(
                var.span,
                format!("DO variable `{}` must be a numeric scalar", var.text),
            ));
        }
        self.check_writable(v, var)?;
        let s = self.num_as(start, t);
        let e = self.num_as(end, t);
        let st = match step {
            Some(x) => self.num_as(x, t),
            None => Ok(self.int_or_float(1, t)),
        };
        let (s, e, st) = (s?, e?, st?);
        let step_const = self.const_of(st);
        let zero_step = step_const.is_some_and(|c| {
            matches!(c, Const::Int(0)) || matches!(c, Const::Float(f) if f == 0.0)
        });
        if zero_step {
            // A constant zero step: the loop fails when reached.
            self.terminate(Terminator::Fail(RuntimeErrorKind::DivideByZero));
            return Ok(());
        }
        let mark = match directive {
            Some(d) => Some(self.checkpoint_counts(d, (s, e, st), t, var)?),
            None => None,
        };
        self.emit(Inst::Store(v, s), None);
        let step_var = self.temp("step", t);
        self.emit(Inst::Store(step_var, st), None);
        let go = if t.is_int() {
            self.int_loop_entry(s, e, st, t, step_const)
        } else {
            self.float_loop_entry(s, e, st, t)
        };
        let (header, inner, latch, exit) = (self.block(), self.block(), self.block(), self.block());
        self.jump(header);
        self.switch_to(header);
        let more = go.test(self);
        self.terminate(Terminator::Branch {
            cond: more,
            then_dest: inner,
            else_dest: exit,
        });
        if let Some((trips, snapshots, span)) = mark {
            self.proc.checkpoints.push(adjit_ir::CheckpointLoop {
                header,
                body: inner,
                latch,
                exit,
                trips,
                snapshots,
                span,
            });
        }
        self.loop_body(name, latch, exit, inner, body);
        // The latch: increment the DO variable, count the trip.
        let after = self.cur;
        self.switch_to(latch);
        self.span = var.span;
        let x = self.val(Inst::Load(v), t);
        let d = self.val(Inst::Load(step_var), t);
        let x1 = self.val(Inst::Binary(BinaryOp::Add, x, d), t);
        self.emit(Inst::Store(v, x1), None);
        go.advance(self);
        self.jump(header);
        self.switch_to(after);
        Ok(())
    }

    /// The entry of an integer DO loop (see [`Self::do_loop`]): computes,
    /// in 64-bit wrapping arithmetic, whether a first trip is taken, the
    /// distance `|end - start|` (exact as an unsigned number whenever a
    /// trip is taken) and `|step|` (2**63 for a step of -2**63).
    fn int_loop_entry(
        &mut self,
        s: Value,
        e: Value,
        st: Value,
        t: Type,
        step_const: Option<Const>,
    ) -> LoopCounter {
        let w = Type::I64;
        let (s, e, st) = (
            self.convert(s, t, w),
            self.convert(e, t, w),
            self.convert(st, t, w),
        );
        let le = self.val(Inst::Cmp(CmpOp::Le, s, e), Type::Bool);
        let ge = self.val(Inst::Cmp(CmpOp::Ge, s, e), Type::Bool);
        let up_dist = self.val(Inst::Binary(BinaryOp::Sub, e, s), w);
        let down_dist = self.val(Inst::Binary(BinaryOp::Sub, s, e), w);
        let zero = self.int(0, w);
        let neg_step = self.val(Inst::Binary(BinaryOp::Sub, zero, st), w);
        let (first, dist, mag) = match step_const {
            Some(Const::Int(k)) if k > 0 => (le, up_dist, st),
            Some(_) => (ge, down_dist, neg_step),
            _ => {
                // A step known only at run time: its sign picks the rest.
                let up = self.val(Inst::Cmp(CmpOp::Gt, st, zero), Type::Bool);
                (
                    self.val(Inst::Select(up, le, ge), Type::Bool),
                    self.val(Inst::Select(up, up_dist, down_dist), w),
                    self.val(Inst::Select(up, st, neg_step), w),
                )
            }
        };
        let bias = self.int(i64::MIN, w);
        let dist = self.val(Inst::Binary(BinaryOp::Add, dist, bias), w);
        let go = self.temp("go", Type::Bool);
        let rest = self.temp("rest", w);
        let stride = self.temp("stride", w);
        self.emit(Inst::Store(go, first), None);
        self.emit(Inst::Store(rest, dist), None);
        self.emit(Inst::Store(stride, mag), None);
        if step_const.is_none() {
            // A zero step fails (as an integer division by it would).
            let is_zero = self.val(Inst::Cmp(CmpOp::Eq, st, zero), Type::Bool);
            let (fail, cont) = (self.block(), self.block());
            self.terminate(Terminator::Branch {
                cond: is_zero,
                then_dest: fail,
                else_dest: cont,
            });
            self.switch_to(fail);
            self.terminate(Terminator::Fail(RuntimeErrorKind::DivideByZero));
            self.switch_to(cont);
        }
        LoopCounter::Distance { go, rest, stride }
    }

    /// The entry of a float DO loop: the trip count, computed in the
    /// variable's type and truncated to 64 bits.
    fn float_loop_entry(&mut self, s: Value, e: Value, st: Value, t: Type) -> LoopCounter {
        let trip_t = Type::I64;
        let diff = self.val(Inst::Binary(BinaryOp::Sub, e, s), t);
        let num = self.val(Inst::Binary(BinaryOp::Add, diff, st), t);
        let q = self.val(Inst::Binary(BinaryOp::Div, num, st), t);
        let q = self.val(Inst::Convert(q, Rounding::Trunc), trip_t);
        let zero = self.int(0, trip_t);
        let trip = self.val(Inst::Binary(BinaryOp::Max, q, zero), trip_t);
        let trip_var = self.temp("trip", trip_t);
        self.emit(Inst::Store(trip_var, trip), None);
        LoopCounter::Trips(trip_var)
    }

    /// The `!$AD BINOMIAL-CKP` directive written on the line before the
    /// statement at `span` (blank lines between are allowed), if any:
    /// its arguments, each an expression written without blanks, and its
    /// position. Other `!$AD` directives are left to their own statements.
    pub(super) fn checkpoint_directive(&mut self, span: Span) -> Option<(Vec<Expr>, Span)> {
        let (line, start, lower) = self.directive_line(span)?;
        let words: Vec<&str> = lower.split_whitespace().collect();
        if words.first() != Some(&"binomial-ckp") {
            return None;
        }
        let at = |offset: usize| Span {
            file: span.file,
            line,
            col: (start + offset) as u32 + 1,
        };
        let directive_span = at(0);
        let mut args = Vec::new();
        let mut search = lower.find("binomial-ckp").unwrap_or(0) + "binomial-ckp".len();
        for word in &words[1..] {
            let offset = lower[search..].find(word).map_or(search, |o| search + o);
            search = offset + word.len();
            match crate::front::parser::parse_expression(word, at(offset + "!$ad".len())) {
                Ok(e) => args.push(e),
                Err(d) => {
                    self.out.diags.push(d);
                    return None;
                }
            }
        }
        if args.len() > 3 {
            self.err(
                args[3].span,
                "BINOMIAL-CKP takes at most three arguments (nsteps nsnapshots first)",
            );
            return None;
        }
        Some((args, directive_span))
    }

    /// The `!$AD` directive on the line before the statement at `span`
    /// (blank lines between are allowed): its line, the column offset of
    /// its `!`, and its lower-cased text after `!$ad`.
    fn directive_line(&self, span: Span) -> Option<(u32, usize, String)> {
        let map = self.prog.map;
        let mut line = span.line;
        let text = loop {
            line = line.checked_sub(1).filter(|&l| l > 0)?;
            let text = map.line(span.file, line)?;
            if !text.trim().is_empty() {
                break text;
            }
        };
        let start = text.len() - text.trim_start().len();
        let lower = text.trim_start().to_ascii_lowercase();
        let after = lower.strip_prefix("!$ad")?;
        Some((line, start, after.to_string()))
    }

    /// For a DO loop under `!$AD BINOMIAL-CKP`: stores its trip count and
    /// the directive's snapshot count in I64 temporaries (evaluating every
    /// argument, so that a bad one is reported).
    fn checkpoint_counts(
        &mut self,
        (args, span): (Vec<Expr>, Span),
        (s, e, st): (Value, Value, Value),
        t: Type,
        var: &Name,
    ) -> R<(VarId, Option<VarId>, Span)> {
        if !t.is_int() {
            return Err(self.err(
                var.span,
                format!(
                    "BINOMIAL-CKP needs an integer DO variable; `{}` is not one",
                    var.text
                ),
            ));
        }
        let w = Type::I64;
        let (s, e, st) = (
            self.convert(s, t, w),
            self.convert(e, t, w),
            self.convert(st, t, w),
        );
        let n = self.exact_trip_count(s, e, st);
        let trips = self.temp("ckp_trips", w);
        self.emit(Inst::Store(trips, n), None);
        let mut snapshots = None;
        for (i, arg) in args.iter().enumerate() {
            self.hoist(arg)?;
            let value = self.num_as(arg, w)?;
            if i == 1 {
                let var = self.temp("ckp_snapshots", w);
                self.emit(Inst::Store(var, value), None);
                snapshots = Some(var);
            }
        }
        Ok((trips, snapshots, span))
    }

    /// The trip count of an integer DO loop from I64 `start`, `end` and
    /// `step`, exact in unsigned arithmetic (as the loop itself counts:
    /// `|end - start| / |step| + 1` when a first trip is taken), saturated
    /// at `i64::MAX`.
    fn exact_trip_count(&mut self, s: Value, e: Value, st: Value) -> Value {
        let w = Type::I64;
        let b = Type::Bool;
        let bin = |this: &mut Self, op, x, y| this.val(Inst::Binary(op, x, y), w);
        let zero = self.int(0, w);
        let one = self.int(1, w);
        let min = self.int(i64::MIN, w);
        let max = self.int(i64::MAX, w);
        let up = self.val(Inst::Cmp(CmpOp::Gt, st, zero), b);
        let le = self.val(Inst::Cmp(CmpOp::Le, s, e), b);
        let ge = self.val(Inst::Cmp(CmpOp::Ge, s, e), b);
        let go = self.val(Inst::Select(up, le, ge), b);
        let up_dist = bin(self, BinaryOp::Sub, e, s);
        let down_dist = bin(self, BinaryOp::Sub, s, e);
        // |end - start| and |step| as unsigned numbers in I64 bits.
        let dist = self.val(Inst::Select(up, up_dist, down_dist), w);
        let neg = bin(self, BinaryOp::Sub, zero, st);
        let mag = self.val(Inst::Select(up, st, neg), w);
        // dist < 2**63: a signed division (a magnitude of 2**63 gives 0).
        let small = bin(self, BinaryOp::Div, dist, mag);
        // dist = 2**63 + r: 2**63 = a·mag + b1 with a = MAX / mag and
        // b1 = MAX - a·mag + 1 ≤ mag, so dist / mag = a + r / mag, plus 1
        // when r mod mag + b1 ≥ mag.
        let r = bin(self, BinaryOp::Add, dist, min);
        let a = bin(self, BinaryOp::Div, max, mag);
        let am = bin(self, BinaryOp::Mul, a, mag);
        let b0 = bin(self, BinaryOp::Sub, max, am);
        let b1 = bin(self, BinaryOp::Add, b0, one);
        let rq = bin(self, BinaryOp::Div, r, mag);
        let rm = bin(self, BinaryOp::Mod, r, mag);
        let room = bin(self, BinaryOp::Sub, mag, b1);
        let carry = self.val(Inst::Cmp(CmpOp::Ge, rm, room), b);
        let carry = self.val(Inst::Select(carry, one, zero), w);
        let large = bin(self, BinaryOp::Add, a, rq);
        let large = bin(self, BinaryOp::Add, large, carry);
        // A magnitude of 2**63 (a step of -2**63): one more trip.
        let huge_step = self.val(Inst::Cmp(CmpOp::Eq, mag, min), b);
        let large = self.val(Inst::Select(huge_step, one, large), w);
        let fits = self.val(Inst::Cmp(CmpOp::Ge, dist, zero), b);
        let q = self.val(Inst::Select(fits, small, large), w);
        let n = bin(self, BinaryOp::Add, q, one);
        let wrapped = self.val(Inst::Cmp(CmpOp::Lt, n, zero), b);
        let n = self.val(Inst::Select(wrapped, max, n), w);
        self.val(Inst::Select(go, n, zero), w)
    }

    fn int_or_float(&mut self, v: i64, t: Type) -> Value {
        if t.is_float() {
            self.konst(Const::Float(v as f64), t)
        } else {
            self.int(v, t)
        }
    }

    /// Refuses writes to INTENT(IN) dummies and array PARAMETERs.
    pub(super) fn check_writable(&mut self, v: VarId, name: &Name) -> R<()> {
        if let adjit_ir::Storage::Global(g, _) = self.proc.var(v).storage {
            if self.out.constants.contains(&g) {
                return Err(self.err_declared(
                    name.span,
                    format!("`{}` is a PARAMETER and cannot be assigned", name.text),
                    &name.text,
                ));
            }
        }
        let decl_intent = self.u().scope.var(&name.text).and_then(|d| d.intent);
        if decl_intent == Some(Intent::In)
            && matches!(self.proc.var(v).storage, adjit_ir::Storage::Param(_))
        {
            return Err(self.err_declared(
                name.span,
                format!("`{}` is INTENT(IN) and cannot be assigned", name.text),
                &name.text,
            ));
        }
        Ok(())
    }

    /// `target = value`.
    pub fn assign(&mut self, target: &Expr, value: &Expr) -> R<()> {
        if self.deferred_string_assign(target, value)? || self.string_array_assign(target, value)? {
            return Ok(());
        }
        match &target.kind {
            ExprKind::Name(n) => {
                let v = match self.resolve(n)? {
                    Resolved::Struct(st) => return self.struct_assign(target, &st, value),
                    Resolved::Var(v) => v,
                    Resolved::Unknown | Resolved::Proc(_) => self.implicit_var(n)?,
                    _ => return Err(self.err(n.span, format!("`{}` cannot be assigned", n.text))),
                };
                self.check_writable(v, n)?;
                let var = self.proc.var(v).clone();
                if var.is_array() {
                    return self.array_assign(n, None, value);
                }
                if var.ty == Type::Char {
                    let to = CharRef {
                        base: CharBase::Var {
                            var: v,
                            index: Vec::new(),
                        },
                        start: None,
                        end: None,
                    };
                    return self.char_assign(to, value);
                }
                let x = self.num_as(value, var.ty)?;
                self.emit(Inst::Store(v, x), None);
                Ok(())
            }
            ExprKind::Apply { name, args } => {
                if let Some((st, _)) = self.struct_ref(target, false)? {
                    return self.struct_assign(target, &st, value);
                }
                let is_array = self.is_array_name(&name.text);
                let v = match self.resolve(name)? {
                    Resolved::Var(v) => v,
                    Resolved::StmtFunc(_) => {
                        return Err(self.err(
                            name.span,
                            format!(
                                "statement function `{}` defined after executable statements",
                                name.text
                            ),
                        ))
                    }
                    _ => {
                        return Err(self.err(name.span, format!("`{}` is not an array", name.text)))
                    }
                };
                self.check_writable(v, name)?;
                let ty = self.proc.var(v).ty;
                if is_array {
                    if args.iter().any(|a| self.is_section_subscript(a)) {
                        return self.array_assign(name, Some(args), value);
                    }
                    let idx = self.subscripts(v, args, name);
                    if ty == Type::Char {
                        let to = CharRef {
                            base: CharBase::Var {
                                var: v,
                                index: idx?,
                            },
                            start: None,
                            end: None,
                        };
                        return self.char_assign(to, value);
                    }
                    let x = self.num_as(value, ty);
                    let (idx, x) = (idx?, x?);
                    self.emit(Inst::StoreElem(v, idx, x), None);
                    return Ok(());
                }
                if ty == Type::Char {
                    let Operand::Char(to) = self.expr(target)? else {
                        unreachable!("character")
                    };
                    return self.char_assign(to, value);
                }
                Err(self.err(name.span, format!("`{}` is not an array", name.text)))
            }
            ExprKind::Substring { .. } => match self.expr(target)? {
                Operand::Char(to) => self.char_assign(to, value),
                Operand::Num(..) => {
                    Err(self.err(target.span, "substring of a non-character value"))
                }
            },
            _ => Err(self.err(target.span, "invalid assignment target")),
        }
    }

    pub(super) fn char_assign(&mut self, to: CharRef, value: &Expr) -> R<()> {
        if self.assign_char_pieces(&to, value)? {
            return Ok(());
        }
        match self.char_unpadded(value)? {
            Operand::Char(from) => {
                self.emit(Inst::CharAssign(to, from), None);
                Ok(())
            }
            Operand::Num(_, t) => Err(self.err(
                value.span,
                format!("cannot assign {} to a character variable", type_name(t)),
            )),
        }
    }

    /// `c = a // b // ...`: copies `froms` one after the other into `to`
    /// (parts past its end are dropped, the rest of it blank-padded). With
    /// constant lengths the positions are constants; otherwise (a
    /// `CHARACTER*(*)` dummy, a substring with variable bounds) they are
    /// computed at run time from the lengths.
    pub(super) fn assign_parts(&mut self, to: CharRef, froms: Vec<CharRef>) {
        let blank = CharRef {
            base: CharBase::Literal(Vec::new()),
            start: None,
            end: None,
        };
        let lengths: Option<Vec<i64>> = froms.iter().map(|f| self.char_len_of(f)).collect();
        if let (Some(target_len), Some(lengths)) = (self.char_len_of(&to), lengths) {
            let mut pos = 1;
            for (from, len) in froms.into_iter().zip(lengths) {
                if pos <= target_len && len > 0 {
                    let end = (pos + len - 1).min(target_len);
                    let dest = self.sub_ref(&to, pos, end);
                    self.emit(Inst::CharAssign(dest, from), None);
                }
                pos += len;
            }
            if pos <= target_len {
                let dest = self.sub_ref(&to, pos, target_len);
                self.emit(Inst::CharAssign(dest, blank), None);
            }
            return;
        }
        let i64t = Type::I64;
        let target_len = self.char_len_value(&to);
        let one = self.int(1, i64t);
        let mut pos = one;
        for from in froms {
            let len = self.char_len_value(&from);
            let last = self.val(Inst::Binary(BinaryOp::Add, pos, len), i64t);
            let last = self.val(Inst::Binary(BinaryOp::Sub, last, one), i64t);
            let end = self.val(Inst::Binary(BinaryOp::Min, last, target_len), i64t);
            let dest = self.shifted_ref(&to, pos, end);
            self.emit(Inst::CharAssign(dest, from), None);
            pos = self.val(Inst::Binary(BinaryOp::Add, pos, len), i64t);
        }
        // The rest (empty when the parts filled the target) is blank.
        let dest = self.shifted_ref(&to, pos, target_len);
        self.emit(Inst::CharAssign(dest, blank), None);
    }

    /// The length of character data as an I64 value (a constant when
    /// known).
    pub(super) fn char_len_value(&mut self, r: &CharRef) -> Value {
        match self.char_len_of(r) {
            Some(n) => self.int(n, Type::I64),
            None => self.val(Inst::CharLen(r.clone()), Type::I64),
        }
    }

    /// `r(start:end)` relative to the start of `r`, for I64 positions
    /// computed at run time.
    pub(super) fn shifted_ref(&mut self, r: &CharRef, start: Value, end: Value) -> CharRef {
        let i64t = Type::I64;
        let (start, end) = match r.start {
            None => (start, end),
            Some(s) => {
                let s = if self.proc.value_type(s) == Some(i64t) {
                    s
                } else {
                    self.val(Inst::Convert(s, Rounding::Trunc), i64t)
                };
                let one = self.int(1, i64t);
                let off = self.val(Inst::Binary(BinaryOp::Sub, s, one), i64t);
                (
                    self.val(Inst::Binary(BinaryOp::Add, start, off), i64t),
                    self.val(Inst::Binary(BinaryOp::Add, end, off), i64t),
                )
            }
        };
        CharRef {
            base: r.base.clone(),
            start: Some(start),
            end: Some(end),
        }
    }

    /// The constant length of character data, when known.
    pub(super) fn char_len_of(&self, r: &CharRef) -> Option<i64> {
        let int = |v: Option<Value>| -> Option<Option<i64>> {
            match v {
                None => Some(None),
                Some(v) => match self.const_of(v) {
                    Some(Const::Int(i)) => Some(Some(i)),
                    _ => None,
                },
            }
        };
        let full = match &r.base {
            CharBase::Literal(t) => t.len() as i64,
            CharBase::Var { var, .. } => self.proc.var(*var).char_len.as_ref()?.as_const()?,
        };
        let (start, end) = (int(r.start)?, int(r.end)?);
        Some((end.unwrap_or(full) - start.unwrap_or(1) + 1).max(0))
    }

    /// `r(start:end)` relative to the start of `r` (constant positions).
    pub(super) fn sub_ref(&mut self, r: &CharRef, start: i64, end: i64) -> CharRef {
        let offset = match r.start.and_then(|v| self.const_of(v)) {
            Some(Const::Int(s)) => s - 1,
            _ => 0,
        };
        let s = self.int(start + offset, Type::I32);
        let e = self.int(end + offset, Type::I32);
        CharRef {
            base: r.base.clone(),
            start: Some(s),
            end: Some(e),
        }
    }

    fn call_stmt(&mut self, name: &Name, args: &[Arg]) -> R<()> {
        for a in args {
            if let ArgValue::Expr(x) = &a.value {
                self.hoist(x)?;
            }
        }
        let dummy = self.dummy_target(&name.text);
        if name.text == "move_alloc"
            && dummy.is_none()
            && self.proc_sym(&name.text).is_none()
            && !self.prog.by_name.contains_key(&name.text)
        {
            return self.move_alloc(name, args);
        }
        let local_var =
            self.vars.contains_key(&name.text) || self.u().scope.var(&name.text).is_some();
        let aliased = match self.proc_sym(&name.text) {
            _ if dummy.is_some() => None,
            Some(Sym::Generic(specifics)) => Some(self.specific(name, specifics, args)?),
            Some(Sym::ProcAlias(r)) => self.prog.by_name.get(r).copied(),
            _ => None,
        };
        if let Some(p) = aliased {
            return self.call_subroutine(p, name, args);
        }
        let p = match dummy {
            Some(Target::Proc(i)) => {
                self.via_slot = self
                    .u()
                    .dummy_procs
                    .iter()
                    .position(|d| d.text == name.text);
                self.prog.instances.borrow()[i].unit
            }
            // Called like the procedure itself: the call binds its dummies
            // (and passes a nested subprogram's environment on).
            Some(Target::Template(u, _)) => {
                self.via_slot = self
                    .u()
                    .dummy_procs
                    .iter()
                    .position(|d| d.text == name.text);
                u
            }
            Some(Target::Intrinsic(n)) => {
                return Err(self.err(
                    name.span,
                    format!(
                        "`{}` is the intrinsic function {}, which cannot be CALLed",
                        name.text,
                        n.to_uppercase()
                    ),
                ))
            }
            // A template lowered for its diagnostics: no call to make.
            Some(Target::Unbound) => return Ok(()),
            Some(Target::Absent) => {
                self.absent_procedure(name);
                return Ok(());
            }
            None => match self.prog.find_proc(self.unit, &name.text) {
                Some(p) if !local_var || self.declared_external(&name.text) => {
                    self.check_visible(p, name)?;
                    p
                }
                _ if super::intrinsics::is_unsupported_intrinsic(&name.text) => {
                    return Err(self.err(
                        name.span,
                        format!(
                            "unsupported Fortran: intrinsic {}",
                            name.text.to_uppercase()
                        ),
                    ))
                }
                _ if self.host_dummy_procedure(&name.text) => {
                    return Err(self.host_dummy_error(name))
                }
                _ => return Err(self.err(name.span, format!("unknown subroutine `{}`", name.text))),
            },
        };
        let called = self.call_subroutine(p, name, args);
        self.via_slot = None;
        called
    }

    /// Calls a subroutine (unit `p`).
    fn call_subroutine(&mut self, p: usize, name: &Name, args: &[Arg]) -> R<()> {
        let sig = &self.prog.sigs[p];
        if sig.result.is_some() || sig.struct_result.is_some() || sig.array_result.is_some() {
            return Err(self.err(
                name.span,
                format!("function `{}` called as a subroutine", name.text),
            ));
        }
        if self.elemental_call(p, name, args)? {
            return Ok(());
        }
        self.prepare_actuals(args)?;
        let (call_args, callee, copies) = self.call_args_copied(p, name, args)?;
        if let Some(callee) = callee {
            self.emit(Inst::Call(callee, call_args), None);
        }
        self.copy_back_after(copies)
    }

    /// The structure an expression denotes, with one expression per leaf
    /// component: a structure variable (`p`; a whole array of structures
    /// too, whose leaves are whole arrays), or an element of an array of
    /// structures (`a(i)`, whose leaves are the elements `a%x(i)` and, for
    /// array components, the sections `a%v(:, i)`, or with `first` their
    /// first elements `a%v(1, i)`, which start the same contiguous storage
    /// for an actual argument). `None` for anything else.
    pub fn struct_ref(&mut self, e: &Expr, first: bool) -> R<Option<(StructDecl, Vec<Expr>)>> {
        let inner = e.without_parens();
        let (name, args) = match &inner.kind {
            ExprKind::Name(n) => (n, None),
            ExprKind::Apply { name, args } => (name, Some(args)),
            _ => return Ok(None),
        };
        if args.is_some() && self.find_type(&name.text).is_some() {
            return Ok(None); // a structure constructor
        }
        if let Some(args) = args {
            if let Some(merged) = self.struct_merge(name, args)? {
                return Ok(Some(merged));
            }
        }
        let st = match (self.resolve(name)?, args) {
            (Resolved::Struct(st), _) => st,
            (Resolved::Proc(_) | Resolved::Unknown | Resolved::Generic(_), Some(args)) => {
                return self.struct_function(name, args)
            }
            _ => return Ok(None),
        };
        let Some(args) = args else {
            let leaves = st
                .leaves
                .iter()
                .map(|l| name_expr(l.clone(), name.span))
                .collect();
            return Ok(Some((st, leaves)));
        };
        if st.dims.is_none() {
            return Err(self.err(
                name.span,
                format!("`{}` is a structure, not an array of structures", name.text),
            ));
        }
        let mut leaves = Vec::new();
        for l in &st.leaves {
            let leaf = Name {
                text: l.clone(),
                span: name.span,
            };
            let dims = match self.resolve(&leaf)? {
                Resolved::Var(v) => self.proc.var(v).dims.clone(),
                _ => Vec::new(),
            };
            let own = dims.len().saturating_sub(args.len());
            let mut sub: Vec<Arg> = dims[..own]
                .iter()
                .map(|d| Arg {
                    keyword: None,
                    value: match &d.lower {
                        adjit_ir::Bound::Const(lo) if first => ArgValue::Expr(Expr {
                            kind: ExprKind::Int {
                                value: *lo,
                                kind: None,
                            },
                            span: e.span,
                        }),
                        _ => ArgValue::Range {
                            lo: None,
                            hi: None,
                            stride: None,
                        },
                    },
                })
                .collect();
            sub.extend(args.iter().cloned());
            leaves.push(Expr {
                kind: ExprKind::Apply {
                    name: leaf,
                    args: sub,
                },
                span: e.span,
            });
        }
        Ok(Some((st, leaves)))
    }

    /// A reference `f(args)` to a function returning a structure: a call
    /// giving the components of a temporary structure, which is the value.
    /// `None` when `f` is not such a function.
    fn struct_function(&mut self, name: &Name, args: &[Arg]) -> R<Option<(StructDecl, Vec<Expr>)>> {
        // A generic (an operator interface) by its specific, which may be
        // PRIVATE in its module.
        let (p, generic) = match self.proc_sym(&name.text) {
            Some(Sym::Generic(specifics)) => (self.specific(name, specifics, args)?, true),
            _ => match self.prog.find_proc(self.unit, &name.text) {
                Some(p) => (p, false),
                None => return Ok(None),
            },
        };
        let Some((type_name, _)) = self.prog.sigs[p].struct_result.clone() else {
            return Ok(None);
        };
        let prog = self.prog;
        let def = prog.units[p]
            .scope
            .types
            .get(&type_name)
            .cloned()
            .or_else(|| {
                prog.units[p]
                    .module
                    .and_then(|m| prog.modules[m].1.types.get(&type_name).cloned())
            })
            .or_else(|| self.find_type(&type_name).cloned());
        let Some(def) = def else {
            return Err(self.err(
                name.span,
                format!(
                    "the type `{type_name}` of the result of `{}` is not known here",
                    name.text
                ),
            ));
        };
        if !generic {
            self.check_visible(p, name)?;
        }
        let (_, st) = self.temp_struct(&def)?;
        let (mut call_args, callee) = self.call_args(p, name, args)?;
        let mut leaves = Vec::new();
        for leaf in &st.leaves {
            let n = Name {
                text: leaf.clone(),
                span: name.span,
            };
            call_args.push(CallArg::Var(self.var_of(&n)?));
            leaves.push(name_expr(leaf.clone(), name.span));
        }
        if let Some(callee) = callee {
            self.emit(Inst::Call(callee, call_args), None);
        }
        Ok(Some((st, leaves)))
    }

    /// Whole-structure assignment `p = q` or `p = t(a, b, ...)` (also to
    /// and from elements of arrays of structures, and between whole arrays
    /// of structures): one assignment per component.
    pub fn struct_assign(&mut self, target: &Expr, st: &StructDecl, value: &Expr) -> R<()> {
        let inner = value.without_parens();
        let (target_name, target_args) = match &target.kind {
            ExprKind::Name(n) => (n, None),
            ExprKind::Apply { name, args } => (name, Some(args)),
            _ => return Err(self.err(target.span, "not a structure")),
        };
        if let ExprKind::Apply { name: tn, args } = &inner.kind {
            if let Some(def) = self.find_type(&tn.text).filter(|d| d.name == st.type_name) {
                return self.struct_constructor_assign(target_name, target_args, def, tn, args);
            }
        }
        let src = match self.struct_ref(inner, false)? {
            Some((src, leaves)) if src.type_name == st.type_name => leaves,
            Some(_) => {
                return Err(self.err(
                    value.span,
                    format!(
                        "type mismatch in the assignment to `{}` (type `{}`)",
                        target_name.text, st.type_name
                    ),
                ))
            }
            None => {
                return Err(self.err(
                    value.span,
                    format!(
                        "unsupported Fortran: a value of type `{}` other than a variable or a structure constructor",
                        st.type_name
                    ),
                ))
            }
        };
        let Some((_, to)) = self.struct_ref(target, false)? else {
            return Err(self.err(target.span, "not a structure"));
        };
        if to.len() != src.len() {
            return self.mixed_struct_assign(&to, &src, target.span);
        }
        let mut failed = false;
        for (t, f) in to.iter().zip(&src) {
            failed |= self.leaf_assign(t, f).is_err();
        }
        if failed {
            return Err(Reported);
        }
        Ok(())
    }

    /// `target = t(a, b, ...)`: each component from its value (or its
    /// default); scalar values are computed into temporaries before any
    /// component is stored (`q = point(q%y, q%x)`). `target_args` are the
    /// subscripts of an element of an array of structures.
    fn struct_constructor_assign(
        &mut self,
        target: &Name,
        target_args: Option<&Vec<Arg>>,
        def: &super::scope::DerivedType,
        tn: &Name,
        args: &[Arg],
    ) -> R<()> {
        let mut values: Vec<Option<&Expr>> = vec![None; def.comps.len()];
        for (i, a) in args.iter().enumerate() {
            let j = match &a.keyword {
                None => i,
                Some(k) => match def.comps.iter().position(|c| c.name == k.text) {
                    Some(j) => j,
                    None if def.parent.as_ref().is_some_and(|(p, _)| *p == k.text) => {
                        return Err(self.err(
                            k.span,
                            format!(
                                "unsupported Fortran: the parent component `{}` as a keyword of a \
                                 constructor of type `{}` (give the inherited components)",
                                k.text, def.name
                            ),
                        ))
                    }
                    None => {
                        return Err(self.err(
                            k.span,
                            format!("type `{}` has no component `{}`", def.name, k.text),
                        ))
                    }
                },
            };
            let ArgValue::Expr(x) = &a.value else {
                return Err(self.err(tn.span, "a range in a structure constructor"));
            };
            if j >= values.len() || values[j].is_some() {
                return Err(self.err(
                    x.span,
                    format!("too many or repeated values for type `{}`", def.name),
                ));
            }
            values[j] = Some(x);
        }
        let mut failed = false;
        let mut pending = Vec::new();
        let mut statuses = Vec::new();
        for (c, v) in def.comps.iter().zip(values) {
            if let Some(status) = self.constructor_status(target, target_args, c, v.is_some()) {
                statuses.push(status);
            }
            let Some(v) = v.or(c.init.as_ref()) else {
                let string = matches!(&c.ty, super::scope::CompType::Plain(ti) if ti.char_len == super::scope::CharLenInfo::Deferred);
                if let (true, true, None) = (c.allocatable, string, target_args) {
                    // A string (or an array of them) left unallocated.
                    let leaf = Name {
                        text: format!("{}%{}", target.text, c.name),
                        span: target.span,
                    };
                    if let Resolved::Var(leaf) = self.resolve(&leaf)? {
                        self.release_if_allocated(leaf);
                    }
                    continue;
                }
                if c.allocatable && c.dims.is_none() {
                    continue; // left unallocated
                }
                failed = true;
                self.err(
                    tn.span,
                    format!("no value for component `{}` of type `{}`", c.name, def.name),
                );
                continue;
            };
            let text = format!("{}%{}", target.text, c.name);
            let t = match target_args {
                None => name_expr(text, target.span),
                Some(args) => {
                    let whole = Arg {
                        keyword: None,
                        value: ArgValue::Range {
                            lo: None,
                            hi: None,
                            stride: None,
                        },
                    };
                    let rank = match (&c.ty, &c.dims) {
                        (super::scope::CompType::Plain(_), Some(d)) => d.len(),
                        _ => 0,
                    };
                    let mut sub = vec![whole; rank];
                    sub.extend(args.iter().cloned());
                    Expr {
                        kind: ExprKind::Apply {
                            name: Name {
                                text,
                                span: target.span,
                            },
                            args: sub,
                        },
                        span: target.span,
                    }
                }
            };
            let scalar = match (&c.ty, &c.dims) {
                (super::scope::CompType::Plain(ti), None) if ti.ty != Type::Char => Some(ti.ty),
                _ => None,
            };
            match scalar {
                Some(ty) => match self.num_as(v, ty) {
                    Ok(x) => {
                        let tmp = self.named_temp(x, ty, v);
                        pending.push((t, tmp));
                    }
                    Err(Reported) => failed = true,
                },
                None => failed |= self.assign(&t, v).is_err(),
            }
        }
        for (t, tmp) in pending.into_iter().chain(statuses) {
            failed |= self.assign(&t, &tmp).is_err();
        }
        if failed {
            return Err(Reported);
        }
        Ok(())
    }

    /// SELECT CASE: every case test is evaluated in one block, combined
    /// into a case number, and dispatched with a Switch.
    fn select_case(&mut self, selector: &Expr, cases: &[(CaseSelector, Vec<Stmt>)]) -> R<()> {
        self.hoist(selector)?;
        if self.is_built_char(selector) {
            let sel = self.compared_value(selector)?;
            if let CharVal::Buf { buf, .. } = sel {
                return self.buffer_select_case(&sel, buf, cases);
            }
        }
        let sel = self.char_unpadded(selector)?;
        if let Operand::Num(_, t) = &sel {
            if t.is_float() {
                return Err(self.err(selector.span, format!("SELECT CASE on {}", type_name(*t))));
            }
        }
        let mut tests: Vec<(usize, Value)> = Vec::new();
        let mut default = None;
        for (i, (cs, _)) in cases.iter().enumerate() {
            let CaseSelector::Items(items) = cs else {
                default = Some(i);
                continue;
            };
            let item_tests = items
                .iter()
                .map(|it| self.case_test(&sel, it, selector))
                .collect::<R<Vec<_>>>()?;
            if let Some(a) = self.any_of(item_tests) {
                tests.push((i, a));
            }
        }
        self.dispatch_cases(tests, default, cases)
    }

    /// SELECT CASE on a selector in a buffer: every case test (a loop
    /// each) keeps its outcome in a variable; the buffer is released
    /// before the dispatch.
    fn buffer_select_case(
        &mut self,
        sel: &CharVal,
        buf: VarId,
        cases: &[(CaseSelector, Vec<Stmt>)],
    ) -> R<()> {
        let mut kept: Vec<(usize, Vec<VarId>)> = Vec::new();
        let mut default = None;
        for (i, (cs, _)) in cases.iter().enumerate() {
            let CaseSelector::Items(items) = cs else {
                default = Some(i);
                continue;
            };
            let mut vars = Vec::new();
            for it in items {
                vars.push(self.buffer_case_test(sel, it)?);
            }
            kept.push((i, vars));
        }
        self.emit(Inst::Deallocate(buf), None);
        let mut tests = Vec::new();
        for (i, vars) in kept {
            let item_tests: Vec<Value> = vars
                .into_iter()
                .map(|v| self.val(Inst::Load(v), Type::Bool))
                .collect();
            if let Some(a) = self.any_of(item_tests) {
                tests.push((i, a));
            }
        }
        self.dispatch_cases(tests, default, cases)
    }

    /// The disjunction of a case's item tests (`None` for no items).
    fn any_of(&mut self, tests: Vec<Value>) -> Option<Value> {
        tests
            .into_iter()
            .reduce(|a, t| self.val(Inst::Binary(BinaryOp::Or, a, t), Type::Bool))
    }

    /// The case number chosen by the tests (the first that holds, else
    /// the default) and a Switch to the case bodies.
    fn dispatch_cases(
        &mut self,
        tests: Vec<(usize, Value)>,
        default: Option<usize>,
        cases: &[(CaseSelector, Vec<Stmt>)],
    ) -> R<()> {
        let none = self.int(-1, Type::I32);
        let mut idx = match default {
            Some(d) => self.int(d as i64, Type::I32),
            None => none,
        };
        for &(i, t) in tests.iter().rev() {
            let k = self.int(i as i64, Type::I32);
            idx = self.val(Inst::Select(t, k, idx), Type::I32);
        }
        let end = self.block();
        let blocks: Vec<_> = cases.iter().map(|_| self.block()).collect();
        let table = blocks
            .iter()
            .enumerate()
            .map(|(i, &b)| (i as i64, b))
            .collect();
        self.terminate(Terminator::Switch {
            value: idx,
            cases: table,
            default: end,
        });
        for ((_, body), b) in cases.iter().zip(blocks) {
            self.switch_to(b);
            self.stmts(body);
            self.jump(end);
        }
        self.switch_to(end);
        Ok(())
    }

    fn case_test(&mut self, sel: &Operand, item: &CaseItem, selector: &Expr) -> R<Value> {
        let cmp = |this: &mut Self, op: CmpOp, e: &Expr| -> R<Value> {
            match (sel, this.expr(e)?) {
                (Operand::Num(s, st), Operand::Num(v, vt)) => {
                    if *st == Type::Bool || vt == Type::Bool {
                        if *st != vt {
                            return Err(this.err(e.span, "CASE value of the wrong type"));
                        }
                        let b = if op == CmpOp::Eq {
                            BinaryOp::Eqv
                        } else {
                            return Err(this.err(e.span, "logical CASE ranges are not allowed"));
                        };
                        return Ok(this.val(Inst::Binary(b, *s, v), Type::Bool));
                    }
                    let t = super::consts::promote(*st, vt);
                    let (a, b) = (this.convert(*s, *st, t), this.convert(v, vt, t));
                    Ok(this.val(Inst::Cmp(op, a, b), Type::Bool))
                }
                (Operand::Char(s), Operand::Char(v)) => {
                    Ok(this.val(Inst::CharCompare(op, s.clone(), v), Type::Bool))
                }
                _ => Err(this.err(
                    e.span,
                    format!(
                        "CASE value does not match the type of the selector at line {}",
                        selector.span.line
                    ),
                )),
            }
        };
        match item {
            CaseItem::Value(e) => cmp(self, CmpOp::Eq, e),
            CaseItem::Range(lo, hi) => {
                let lo = lo.as_ref().map(|e| cmp(self, CmpOp::Ge, e)).transpose()?;
                let hi = hi.as_ref().map(|e| cmp(self, CmpOp::Le, e)).transpose()?;
                Ok(match (lo, hi) {
                    (Some(a), Some(b)) => self.val(Inst::Binary(BinaryOp::And, a, b), Type::Bool),
                    (Some(a), None) | (None, Some(a)) => a,
                    (None, None) => self.konst(Const::Bool(true), Type::Bool),
                })
            }
        }
    }
}

/// How a counted DO loop decides whether to take another trip.
#[derive(Clone, Copy)]
enum LoopCounter {
    /// Integer loops: `go` says whether the next trip is taken; `rest`
    /// holds the distance still to go plus 2**63 (wrapping), `stride` the
    /// magnitude of the step (both as unsigned 64-bit numbers).
    Distance {
        go: VarId,
        rest: VarId,
        stride: VarId,
    },
    /// Float loops: the trips still to take.
    Trips(VarId),
}

impl LoopCounter {
    /// The header's test: is the next trip taken?
    fn test(self, l: &mut Lowerer) -> Value {
        match self {
            LoopCounter::Distance { go, .. } => l.val(Inst::Load(go), Type::Bool),
            LoopCounter::Trips(n) => {
                let n = l.val(Inst::Load(n), Type::I64);
                let zero = l.int(0, Type::I64);
                l.val(Inst::Cmp(CmpOp::Gt, n, zero), Type::Bool)
            }
        }
    }

    /// The latch's update after a trip.
    fn advance(self, l: &mut Lowerer) {
        let w = Type::I64;
        match self {
            LoopCounter::Distance { go, rest, stride } => {
                // Another trip while rest >= stride as unsigned numbers:
                // with both biased by 2**63 that is a signed comparison.
                let r = l.val(Inst::Load(rest), w);
                let k = l.val(Inst::Load(stride), w);
                let bias = l.int(i64::MIN, w);
                let kb = l.val(Inst::Binary(BinaryOp::Add, k, bias), w);
                let more = l.val(Inst::Cmp(CmpOp::Ge, r, kb), Type::Bool);
                l.emit(Inst::Store(go, more), None);
                let r1 = l.val(Inst::Binary(BinaryOp::Sub, r, k), w);
                l.emit(Inst::Store(rest, r1), None);
            }
            LoopCounter::Trips(n) => {
                let v = l.val(Inst::Load(n), w);
                let one = l.int(1, w);
                let v1 = l.val(Inst::Binary(BinaryOp::Sub, v, one), w);
                l.emit(Inst::Store(n, v1), None);
            }
        }
    }
}

/// A name as an expression.
fn name_expr(text: String, span: adjit_ir::Span) -> Expr {
    Expr {
        kind: ExprKind::Name(Name { text, span }),
        span,
    }
}
