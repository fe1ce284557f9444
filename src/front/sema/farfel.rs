//! Lowering of FARFEL's ADF and ADR blocks (the parser has already
//! outlined each block's statements into an internal subroutine `_adfN`).
//!
//! Every real variable the block uses (scalar or array) gets a derivative
//! variable beside it, zeroed when the block starts: a scalar, or an array
//! of the same type and bounds (allocated for the block when the variable
//! is allocatable). The seeds and results are
//! assignments to and from these: `TANGENT(X(I)) = V(I)` assigns the
//! element `I` of `X`'s tangent, an implied DO list becomes a DO loop, a
//! whole array seeds or reads every element. The derivative variables are
//! reachable by name while the seeds and results are lowered under keys
//! that no Fortran name can spell (`tangent(x)`, `cotangent(x)`).
//!
//! ADF: the tangent seeds are assigned, the subroutine is called, the
//! results are assigned from the derivatives.
//! ADR: the subroutine is called (the forward phase), the cotangent seeds
//! are assigned (they may read the forward results), the variables the
//! block uses (scalars and arrays) are saved, the subroutine is called
//! again (the reverse phase, which restores what the forward phase
//! overwrote), the variables are restored to their values after the
//! forward phase and the results are assigned from the derivatives. Each
//! block is recorded as an [`AdfCall`] so that the engine can make the
//! calls into calls of the tangent, or of the adjoint's forward and
//! reverse sweeps (sema knows nothing of derivatives).

use super::super::ast::{AdfBlock, AdfEntry, Expr, ExprKind, Name, Stmt, StmtKind};
use super::lowerer::{AdfCall, Lowerer, Resolved, R};
use adjit_ir::{BinaryOp, CallArg, Const, Inst, Storage, Type, Var, VarId};

/// Where a block's shadow variables live while its seeds and results are
/// lowered: the key each is reachable under and the variable.
struct Shadows {
    keys: Vec<(String, VarId)>,
    /// The allocated arrays (released at the end of the block).
    arrays: Vec<VarId>,
    /// The keys of the local derivative arrays to zero.
    zero: Vec<String>,
}

impl Lowerer<'_, '_> {
    /// Lowers an outlined ADF / ADR block.
    pub(super) fn adf_stmt(&mut self, b: &AdfBlock) -> R<()> {
        let span = self.span;
        let (block, marker) = if b.reverse {
            ("ADR", "cotangent")
        } else {
            ("ADF", "tangent")
        };
        let Some(name) = &b.outlined else {
            return Err(self.err(span, format!("{block} block not outlined")));
        };
        let Some(unit) = self.prog.find_proc(self.unit, &name.text) else {
            return Err(self.err(span, format!("{block} block not outlined")));
        };
        let params = self.prog.units[unit].host_vars.clone();
        let index = |n: &str| params.iter().position(|p| p == n);
        // The marked variables must be real variables (elements of arrays).
        let mut seed_names = Vec::new();
        let mut result_names = Vec::new();
        self.check_targets(&b.seeds, block, &mut seed_names)?;
        self.check_targets(&b.results, block, &mut result_names)?;
        let (args, callee) = self.call_args(unit, name, &[])?;
        // A zero derivative for every real variable the block uses (its
        // host variables, then the environments of the procedures it calls
        // through dummy procedures), and for ADR a copy of each.
        let mut shadows = Shadows {
            keys: Vec::new(),
            arrays: Vec::new(),
            zero: Vec::new(),
        };
        let mut derivatives = Vec::new();
        let mut saved = Vec::new();
        let mut saved_params = Vec::new();
        for (i, a) in args.iter().enumerate() {
            let v = match (params.get(i), a) {
                (Some(_), CallArg::Var(v)) => *v,
                (None, CallArg::Var(v)) if !self.proc.var(*v).is_array() => *v,
                _ => continue,
            };
            let var = self.proc.var(v).clone();
            // Assumed-size arrays have no bounds to copy.
            if var.dims.iter().any(|d| d.upper.is_none()) {
                continue;
            }
            let p = params.get(i).cloned().unwrap_or_else(|| var.name.clone());
            if var.ty.is_float() {
                let t = self.shadow(v, &format!("_adfd_{p}"), &mut shadows);
                shadows.keys.push((format!("{marker}({p})"), t));
                if var.is_array() && !shadows.arrays.contains(&t) {
                    shadows.zero.push(format!("{marker}({p})"));
                }
                derivatives.push((i, t));
            }
            let constant =
                matches!(var.storage, Storage::Global(g, _) if self.out.constants.contains(&g));
            if b.reverse && var.ty != Type::Char && !constant {
                let s = self.shadow(v, &format!("_adfs_{p}"), &mut shadows);
                if var.is_array() {
                    shadows.keys.push((format!("saved({p})"), s));
                    shadows.keys.push((format!("primal({p})"), v));
                }
                saved.push((p, v, s));
                saved_params.push(i);
            }
        }
        let Some(callee) = callee else {
            return Ok(());
        };
        for (k, v) in &shadows.keys {
            self.vars.insert(k.clone(), *v);
        }
        for k in &shadows.zero {
            let target = Expr {
                kind: ExprKind::Name(Name {
                    text: k.clone(),
                    span,
                }),
                span,
            };
            self.assign(&target, &real(0.0, span))?;
        }
        let used = |n: &String| index(n).is_some_and(|i| derivatives.iter().any(|d| d.0 == i));
        if b.reverse {
            self.emit(Inst::Call(callee, args.clone()), None);
        }
        self.lower_all(&entry_stmts(&b.seeds, marker, true, &used))?;
        if b.reverse {
            self.copy_saved(&saved, true)?;
        }
        self.emit(Inst::Call(callee, args), None);
        if b.reverse {
            self.copy_saved(&saved, false)?;
        }
        let indices = |names: &[String]| {
            let mut out: Vec<usize> = names.iter().filter_map(|n| index(n)).collect();
            out.sort_unstable();
            out.dedup();
            out
        };
        let (seeds, reads) = (indices(&seed_names), indices(&result_names));
        let (independents, dependents) = if b.reverse {
            (reads, seeds)
        } else {
            (seeds, reads)
        };
        self.out.adf.push(AdfCall {
            reverse: b.reverse,
            host: self.proc.name.clone(),
            callee,
            derivatives: derivatives.clone(),
            saved: saved_params,
            independents,
            dependents,
            span,
        });
        self.lower_all(&entry_stmts(&b.results, marker, false, &used))?;
        for &a in &shadows.arrays {
            self.emit(Inst::Deallocate(a), None);
        }
        for (k, _) in &shadows.keys {
            self.vars.remove(k);
        }
        Ok(())
    }

    /// A new variable like `v` named `name`: a zero scalar, or an array of
    /// `v`'s type and bounds: a local array with `v`'s declared bounds
    /// (zeroed by the block when in `shadows.zero`), or for an allocatable
    /// `v` one allocated here with its current bounds (zero-filled).
    fn shadow(&mut self, v: VarId, name: &str, shadows: &mut Shadows) -> VarId {
        let var = self.proc.var(v).clone();
        if !var.is_array() {
            let t = self.proc.add_var(Var::scalar(name, var.ty));
            let zero = match var.ty {
                Type::Bool => self.konst(Const::Bool(false), var.ty),
                ty if ty.is_float() => self.konst(Const::Float(0.0), ty),
                ty => self.konst(Const::Int(0), ty),
            };
            self.emit(Inst::Store(t, zero), None);
            return t;
        }
        if !var.storage.is_allocatable() {
            return self.proc.add_var(Var {
                name: name.to_string(),
                storage: Storage::Local,
                ..var
            });
        }
        let t = self.proc.add_var(Var {
            name: name.to_string(),
            storage: Storage::Allocatable,
            ..var.clone()
        });
        let one = self.konst(Const::Int(1), Type::I64);
        let bounds = (0..var.dims.len() as u32)
            .map(|d| {
                let lo = self.val(Inst::DimLower(v, d), Type::I64);
                let n = self.val(Inst::DimExtent(v, d), Type::I64);
                let last = self.val(Inst::Binary(BinaryOp::Add, lo, n), Type::I64);
                let hi = self.val(Inst::Binary(BinaryOp::Sub, last, one), Type::I64);
                (lo, hi)
            })
            .collect();
        self.emit(Inst::Allocate(t, bounds), None);
        shadows.arrays.push(t);
        t
    }

    /// Copies the variables an ADR block uses into their copies (`save`)
    /// or back.
    fn copy_saved(&mut self, saved: &[(String, VarId, VarId)], save: bool) -> R<()> {
        let span = self.span;
        for (p, v, s) in saved {
            let (from, to) = if save { (*v, *s) } else { (*s, *v) };
            if self.proc.var(*v).is_array() {
                let key = |k: &str| Expr {
                    kind: ExprKind::Name(Name {
                        text: format!("{k}({p})"),
                        span,
                    }),
                    span,
                };
                let (primal, copy) = (key("primal"), key("saved"));
                let (target, value) = if save { (copy, primal) } else { (primal, copy) };
                self.assign(&target, &value)?;
            } else {
                let ty = self.proc.var(*v).ty;
                let x = self.val(Inst::Load(from), ty);
                self.emit(Inst::Store(to, x), None);
            }
        }
        Ok(())
    }

    /// Checks that every variable marked in `entries` is a real variable
    /// (an array when subscripted) and collects the names.
    fn check_targets(
        &mut self,
        entries: &[AdfEntry],
        block: &str,
        names: &mut Vec<String>,
    ) -> R<()> {
        for e in entries {
            match e {
                AdfEntry::One { target, .. } => {
                    let (n, element) = self.marked_name(target, block)?;
                    self.derivative_var(&n, block, element)?;
                    names.push(n.text);
                }
                AdfEntry::Loop { items, .. } => self.check_targets(items, block, names)?,
            }
        }
        Ok(())
    }

    /// Lowers generated statements, stopping at the first error.
    fn lower_all(&mut self, stmts: &[Stmt]) -> R<()> {
        for s in stmts {
            self.stmt(s)?;
        }
        Ok(())
    }

    /// The variable a marked target names and whether it is subscripted.
    fn marked_name(&mut self, target: &Expr, block: &str) -> R<(Name, bool)> {
        match (target_name(target), &target.kind) {
            (Some(n), ExprKind::Name(_)) => Ok((n.clone(), false)),
            (Some(n), _) => Ok((n.clone(), true)),
            _ => Err(self.err(
                target.span,
                format!("{block}: expected a variable or an array element"),
            )),
        }
    }

    /// The variable `n` of the host and whether it is real. With
    /// `element`, an error unless it is an array. An error unless it is a
    /// real variable.
    fn derivative_var(&mut self, n: &Name, block: &str, element: bool) -> R<(VarId, bool)> {
        let v = match self.resolve(n) {
            Ok(Resolved::Var(v)) => v,
            Ok(Resolved::Unknown) if !element => self.implicit_var(n)?,
            _ => return Err(self.err(n.span, format!("`{}` is not a variable", n.text))),
        };
        let var = self.proc.var(v);
        if !var.ty.is_float() {
            return Err(self.err(
                n.span,
                format!(
                    "{block}: `{}` must be a real variable or array element (complex and other types are not supported)",
                    n.text
                ),
            ));
        }
        if element && !var.is_array() {
            return Err(self.err(n.span, format!("{block}: `{}` is not an array", n.text)));
        }
        Ok((v, var.is_array()))
    }
}

/// The statements of seeds (`seeds`: `derivative(target) = seed`) or
/// results (`destination = derivative(target)`), an implied DO list as a DO
/// loop. `used` tells whether the block uses a variable: a seed of one it
/// does not use cannot matter, its result is zero.
fn entry_stmts(
    entries: &[AdfEntry],
    marker: &str,
    seeds: bool,
    used: &dyn Fn(&String) -> bool,
) -> Vec<Stmt> {
    let mut out = Vec::new();
    for e in entries {
        let (kind, span) = match e {
            AdfEntry::One { target, other } => {
                let span = target.span;
                let derivative = target_name(target)
                    .filter(|n| used(&n.text))
                    .map(|_| rename(target, marker));
                let kind = match (seeds, derivative, other) {
                    (true, Some(derivative), value) => StmtKind::Assign {
                        target: derivative,
                        value: value.clone().unwrap_or_else(|| real(1.0, span)),
                    },
                    (false, derivative, Some(dest)) => StmtKind::Assign {
                        target: dest.clone(),
                        value: derivative.unwrap_or_else(|| real(0.0, span)),
                    },
                    _ => continue,
                };
                (kind, span)
            }
            AdfEntry::Loop {
                items,
                var,
                start,
                end,
                step,
            } => (
                StmtKind::Do {
                    name: None,
                    var: var.clone(),
                    start: start.clone(),
                    end: end.clone(),
                    step: step.clone(),
                    body: entry_stmts(items, marker, seeds, used),
                },
                var.span,
            ),
        };
        out.push(Stmt {
            label: None,
            kind,
            span,
        });
    }
    out
}

/// The variable a marked target names.
fn target_name(target: &Expr) -> Option<&Name> {
    match &target.kind {
        ExprKind::Name(n) | ExprKind::Apply { name: n, .. } => Some(n),
        _ => None,
    }
}

/// `target` with its variable replaced by the key of its derivative.
fn rename(target: &Expr, marker: &str) -> Expr {
    let key = |n: &Name| Name {
        text: format!("{marker}({})", n.text),
        span: n.span,
    };
    let kind = match &target.kind {
        ExprKind::Name(n) => ExprKind::Name(key(n)),
        ExprKind::Apply { name, args } => ExprKind::Apply {
            name: key(name),
            args: args.clone(),
        },
        other => other.clone(),
    };
    Expr {
        kind,
        span: target.span,
    }
}

/// A double precision literal.
fn real(x: f64, span: adjit_ir::Span) -> Expr {
    Expr {
        kind: ExprKind::Real {
            text: format!("{x:?}"),
            double: true,
            kind: None,
        },
        span,
    }
}
