//! ALLOCATABLE scalars: components (`real(8), allocatable :: s`,
//! `type(opts), allocatable :: o`) and local variables (`real(8),
//! allocatable :: t`).
//!
//! Such an object is stored as the scalar itself (a variable, or the leaf
//! variables of a structure) beside an integer status `x.alloc` (0 or 1,
//! 0 at entry; declared by `scope::components`). An ALLOCATABLE scalar
//! dummy argument takes its status as a parameter of its own, passed by
//! reference with the value (`Dummy::status`), so the callee allocates,
//! deallocates and asks ALLOCATED of the caller's object; INTENT(OUT)
//! clears it on entry. Here:
//!
//! - `allocate(x)` fails at run time when `x` is allocated (as gfortran
//!   does; with `stat=` / `errmsg=` it sets them as for arrays instead),
//!   else sets the status; a structure's components take their default
//!   initialization, and `source=` / `mold=` give the value;
//! - `deallocate(x)` fails when `x` is not allocated (or sets `stat=`),
//!   else clears the status; a structure's ALLOCATABLE components are
//!   released too;
//! - `allocated(x)` reads the status;
//! - the intrinsic assignment `x = value` allocates `x` (Fortran 2003),
//!   a structure taking the source's status when the source is an
//!   ALLOCATABLE structure too (an unallocated source leaves `x`
//!   unallocated).
//!
//! An ALLOCATE or DEALLOCATE naming several objects with STAT=, or both
//! arrays and ALLOCATABLE scalars, is lowered one object at a time in
//! source order ([`split_allocation`]); with STAT= each later object is
//! reached only while the status is 0, so the first failure sets STAT= /
//! ERRMSG= and leaves the objects after it as they were (as gfortran does).
//!
//! Whole-structure assignment and passing the containing structure copy
//! the status leaf with the others; derivatives are those of the scalar.
//! ALLOCATE, DEALLOCATE and ALLOCATED of ALLOCATABLE arrays of structures
//! go through here too (`sema::alloc_structs`).

use super::super::ast::{Arg, ArgValue, BinOp, Expr, ExprKind, Name, Stmt, StmtKind};
use super::alloc::Status;
use super::lowerer::{Lowerer, Operand, Resolved, R};
use super::scope::{status_name, Component, StructDecl};
use adjit_ir::{BlockId, CmpOp, Inst, RuntimeErrorKind, Span, Terminator, Type, Value};

/// An expression node.
fn node(kind: ExprKind, span: Span) -> Expr {
    Expr { kind, span }
}

/// An integer literal.
fn int(value: i64, span: Span) -> Expr {
    node(ExprKind::Int { value, kind: None }, span)
}

/// The name and subscripts of an object `x` or `b%s(k)`.
fn object_parts(e: &Expr) -> Option<(&Name, &[Arg])> {
    match &e.kind {
        ExprKind::Name(n) => Some((n, &[])),
        ExprKind::Apply { name, args } => Some((name, args)),
        _ => None,
    }
}

/// The expression `text` with the subscripts `args` (none: a name).
fn named(text: String, args: &[Arg], span: Span) -> Expr {
    let name = Name { text, span };
    if args.is_empty() {
        node(ExprKind::Name(name), span)
    } else {
        let args = args.to_vec();
        node(ExprKind::Apply { name, args }, span)
    }
}

/// The single-object statements an ALLOCATE or DEALLOCATE of the objects
/// `objects` runs as, in order (see the module documentation): `one(o)`
/// is the statement of the object `o` alone; with STAT= (`stat`) the
/// statements of the objects after the first sit in `if (stat == 0)`.
fn split_allocation(
    objects: &[Expr],
    stat: Option<&Expr>,
    one: &dyn Fn(&Expr) -> StmtKind,
) -> Vec<Stmt> {
    let Some((first, rest)) = objects.split_first() else {
        return Vec::new();
    };
    let span = first.span;
    let mut out = vec![Stmt {
        label: None,
        kind: one(first),
        span,
    }];
    match stat {
        None => out.extend(split_allocation(rest, None, one)),
        Some(_) if rest.is_empty() => {}
        Some(stat) => {
            let ok = Expr {
                kind: ExprKind::Binary(BinOp::Eq, Box::new(stat.clone()), Box::new(int(0, span))),
                span,
            };
            out.push(Stmt {
                label: None,
                kind: StmtKind::If {
                    name: None,
                    arms: vec![(ok, split_allocation(rest, Some(stat), one))],
                    else_body: None,
                },
                span,
            });
        }
    }
    out
}

impl Lowerer<'_, '_> {
    /// The status of the object `e` when it is an ALLOCATABLE scalar
    /// (`x.alloc`, with the subscripts of an element of an array of
    /// structures; the component of a whole array of structures, `b%s`,
    /// a leaf its ALLOCATE and DEALLOCATE allocate and release, is none).
    pub(super) fn scalar_status(&self, e: &Expr) -> Option<Expr> {
        let (name, args) = object_parts(e)?;
        let status = status_name(&name.text);
        let (_, decl) = self.visible_decl(&status)?;
        if args.is_empty() && decl.dims.is_some() {
            return None;
        }
        if args
            .iter()
            .any(|a| a.keyword.is_some() || !matches!(a.value, ArgValue::Expr(_)))
        {
            return None;
        }
        Some(named(status, args, e.span))
    }

    /// `allocated(x)` of an ALLOCATABLE scalar: its status; `None` for
    /// another argument.
    pub(super) fn scalar_allocated(&mut self, arg: &Expr) -> R<Option<Operand>> {
        if let Some(is) = self.structures_allocated(arg) {
            return Ok(Some(Operand::Num(is, Type::Bool)));
        }
        let Some(status) = self.scalar_status(arg) else {
            return Ok(None);
        };
        let is = self.status_is(&status, CmpOp::Ne)?;
        Ok(Some(Operand::Num(is, Type::Bool)))
    }

    /// The comparison `status op 0` (a Bool value): `Ne` when allocated.
    fn status_is(&mut self, status: &Expr, op: CmpOp) -> R<Value> {
        let s = self.num_as(status, Type::I32)?;
        let zero = self.int(0, Type::I32);
        Ok(self.val(Inst::Cmp(op, s, zero), Type::Bool))
    }

    /// The single-object statements of an ALLOCATE or DEALLOCATE naming
    /// several objects with STAT=, or arrays and ALLOCATABLE scalars
    /// together ([`split_allocation`]); `None` for any other statement.
    fn split_allocation_stmt(&self, s: &Stmt) -> Option<Vec<Stmt>> {
        let (objects, stat) = match &s.kind {
            StmtKind::Allocate { objects, stat, .. }
            | StmtKind::Deallocate { objects, stat, .. } => (objects, stat.as_ref()),
            _ => return None,
        };
        let scalars = objects
            .iter()
            .filter(|o| self.scalar_status(o).is_some())
            .count();
        let mixed = scalars > 0 && scalars < objects.len();
        if objects.len() < 2 || (stat.is_none() && !mixed) {
            return None;
        }
        let one = |o: &Expr| match &s.kind {
            StmtKind::Allocate {
                stat,
                errmsg,
                source,
                mold,
                char_len,
                ..
            } => StmtKind::Allocate {
                objects: vec![o.clone()],
                stat: stat.clone(),
                errmsg: errmsg.clone(),
                source: source.clone(),
                mold: mold.clone(),
                char_len: char_len.clone(),
            },
            StmtKind::Deallocate { stat, errmsg, .. } => StmtKind::Deallocate {
                objects: vec![o.clone()],
                stat: stat.clone(),
                errmsg: errmsg.clone(),
            },
            other => other.clone(),
        };
        let mut split = split_allocation(objects, stat, &one);
        split[0].label = s.label;
        Some(split)
    }

    /// The ALLOCATABLE scalars among the objects of an ALLOCATE or
    /// DEALLOCATE (all of them: [`Self::split_allocation_stmt`] gives each
    /// kind its own statement); `None` when there are none.
    fn scalar_objects<'e>(&self, objects: &'e [Expr]) -> Option<Vec<&'e Expr>> {
        let mine: Vec<&Expr> = objects
            .iter()
            .filter(|o| self.scalar_status(o).is_some())
            .collect();
        (!mine.is_empty()).then_some(mine)
    }

    /// Lowers the statement when it allocates, deallocates or assigns an
    /// ALLOCATABLE scalar (see the module documentation); false, emitting
    /// nothing, for any other statement.
    pub(super) fn alloc_scalar_stmt(&mut self, s: &Stmt) -> R<bool> {
        if let Some(split) = self.split_allocation_stmt(s) {
            split.into_iter().try_for_each(|x| self.stmt_rewritten(x))?;
            return Ok(true);
        }
        if let Some(leaves) = self.structures_allocation(s) {
            self.stmt_rewritten(leaves)?;
            self.structures_default_init(s)?;
            return Ok(true);
        }
        match &s.kind {
            StmtKind::Allocate {
                objects,
                stat,
                errmsg,
                source,
                mold: _,
                char_len: _,
            } => {
                let Some(mine) = self.scalar_objects(objects) else {
                    return Ok(false);
                };
                let status = Status::new(stat.as_ref(), errmsg.as_ref());
                self.check_errmsg(status)?;
                for o in mine {
                    self.scalar_allocate(o, source.as_ref(), status)?;
                }
                Ok(true)
            }
            StmtKind::Deallocate {
                objects,
                stat,
                errmsg,
            } => {
                let Some(mine) = self.scalar_objects(objects) else {
                    return Ok(false);
                };
                let status = Status::new(stat.as_ref(), errmsg.as_ref());
                self.check_errmsg(status)?;
                for o in mine {
                    self.scalar_deallocate(o, status)?;
                }
                Ok(true)
            }
            StmtKind::Assign { target, value } => {
                let Some(status) = self.scalar_status(target) else {
                    return Ok(false);
                };
                // An ALLOCATABLE structure assigned from another keeps
                // the source's status; anything else allocates.
                let now = match self.scalar_status(value) {
                    Some(src) if self.is_struct(target) => src,
                    _ => int(1, target.span),
                };
                let keep = self.named_temp_of(&now)?;
                self.hoist(target)?;
                self.hoist(value)?;
                self.assign(target, value)?;
                self.assign(&status, &keep)?;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// For the component `c` of a structure constructor assigned to
    /// `target` (an element when `target_args` are given): when `c` is an
    /// ALLOCATABLE scalar, its status and the status the constructor gives
    /// it (allocated when `given` a value).
    pub(super) fn constructor_status(
        &self,
        target: &Name,
        target_args: Option<&Vec<Arg>>,
        c: &Component,
        given: bool,
    ) -> Option<(Expr, Expr)> {
        if !c.is_allocatable_scalar() {
            return None;
        }
        let status = status_name(&format!("{}%{}", target.text, c.name));
        let args = target_args.map_or(&[][..], Vec::as_slice);
        let span = target.span;
        Some((named(status, args, span), int(i64::from(given), span)))
    }

    /// The value of the integer expression `e` kept in a temporary (read
    /// before the statement changes it).
    fn named_temp_of(&mut self, e: &Expr) -> R<Expr> {
        let v = self.num_as(e, Type::I32)?;
        Ok(self.named_temp(v, Type::I32, e))
    }

    /// True when `e` names a structure.
    fn is_struct(&mut self, e: &Expr) -> bool {
        object_parts(e).is_some_and(|(n, _)| matches!(self.resolve(n), Ok(Resolved::Struct(_))))
    }

    /// The structure `o` names, when it is one (a scalar one: an element
    /// of an array of structures is refused).
    fn scalar_struct(&mut self, o: &Expr, what: &str) -> R<Option<StructDecl>> {
        let Some((name, args)) = object_parts(o) else {
            return Ok(None);
        };
        match self.resolve(name) {
            Ok(Resolved::Struct(st)) if args.is_empty() => Ok(Some(st)),
            Ok(Resolved::Struct(_)) => Err(self.err(
                o.span,
                format!(
                    "unsupported Fortran: {what} of the ALLOCATABLE component `{}` of an element of an array of structures",
                    name.text
                ),
            )),
            _ => Ok(None),
        }
    }

    /// Guards ALLOCATE (`allocating`) or DEALLOCATE of the ALLOCATABLE
    /// scalar `o` (status variable `status`): fails, located at `o` and
    /// naming it, when `o` is allocated (resp. not allocated); with
    /// `stat=` (`guard`) sets it instead and skips the statement's work
    /// for `o`. Returns the block ending that work ([`Self::stat_done`]).
    fn scalar_guard(
        &mut self,
        o: &Expr,
        status: &Expr,
        guard: Status,
        allocating: bool,
    ) -> R<Option<BlockId>> {
        let is = self.status_is(status, CmpOp::Ne)?;
        if let Some(end) = self.stat_guard_on(is, guard, allocating)? {
            return Ok(Some(end));
        }
        let name = object_parts(o).map_or_else(String::new, |(n, _)| n.text.clone());
        let (fails, kind) = if allocating {
            (is, RuntimeErrorKind::ScalarAlreadyAllocated(name))
        } else {
            let not = self.status_is(status, CmpOp::Eq)?;
            (not, RuntimeErrorKind::ScalarNotAllocated(name))
        };
        self.fail_when(fails, kind, o.span);
        Ok(None)
    }

    /// `allocate(x)` of an ALLOCATABLE scalar (with `source=` when given).
    fn scalar_allocate(&mut self, o: &Expr, source: Option<&Expr>, guard: Status) -> R<()> {
        let status = self.scalar_status(o).expect("an ALLOCATABLE scalar");
        let st = self.scalar_struct(o, "ALLOCATE")?;
        if let Some(src) = source {
            self.hoist(src)?;
        }
        let end = self.scalar_guard(o, &status, guard, true)?;
        self.assign(&status, &int(1, o.span))?;
        if let Some(st) = &st {
            // Default initialization of the new structure's components.
            for leaf in &st.leaves {
                let init = self
                    .visible_decl(leaf)
                    .and_then(|(_, d)| d.default_init.clone());
                if let Some(init) = init {
                    self.assign(&named(leaf.clone(), &[], o.span), &init)?;
                }
            }
        }
        if let Some(src) = source {
            self.assign(o, src)?;
        }
        self.stat_done(end, guard)
    }

    /// `deallocate(x)` of an ALLOCATABLE scalar.
    fn scalar_deallocate(&mut self, o: &Expr, guard: Status) -> R<()> {
        let status = self.scalar_status(o).expect("an ALLOCATABLE scalar");
        let st = self.scalar_struct(o, "DEALLOCATE")?;
        let end = self.scalar_guard(o, &status, guard, false)?;
        self.assign(&status, &int(0, o.span))?;
        if let Some(st) = &st {
            // The structure's own ALLOCATABLE components go with it.
            for leaf in &st.leaves {
                let name = Name {
                    text: leaf.clone(),
                    span: o.span,
                };
                if leaf.ends_with(".alloc") {
                    self.assign(&named(leaf.clone(), &[], o.span), &int(0, o.span))?;
                } else if let Ok(Resolved::Var(v)) = self.resolve(&name) {
                    if self.proc.var(v).storage.is_allocatable() {
                        self.release_if_allocated(v);
                    }
                }
            }
        }
        self.stat_done(end, guard)
    }

    /// Ends the program with the runtime error `kind` (located at `at`)
    /// when `cond` holds.
    pub(super) fn fail_when(&mut self, cond: Value, kind: RuntimeErrorKind, at: Span) {
        let (bad, ok) = (self.block(), self.block());
        self.terminate(Terminator::Branch {
            cond,
            then_dest: bad,
            else_dest: ok,
        });
        self.switch_to(bad);
        self.span = at;
        self.terminate(Terminator::Fail(kind));
        self.switch_to(ok);
    }
}
