//! Lowering of FARFEL's ADF and ADR blocks (the parser has already
//! outlined each block's statements into an internal subroutine `_adfN`).
//!
//! ADF: the tangent seeds are evaluated into derivative temporaries, the
//! subroutine is called, the results are assigned from the temporaries.
//! ADR: the subroutine is called (the forward phase), the cotangent seeds
//! are evaluated into derivative temporaries (they may read the forward
//! results), the scalars the block uses are saved, the subroutine is called
//! again (the reverse phase), the scalars are restored and the results are
//! assigned from the temporaries. Each block is recorded as an [`AdfCall`]
//! so that the engine can make the calls into calls of the tangent, or of
//! the adjoint's forward and reverse sweeps (sema knows nothing of
//! derivatives).

use super::super::ast::{AdfBlock, Expr, ExprKind, Name};
use super::lowerer::{AdfCall, Lowerer, Resolved, R};
use adjit_ir::{CallArg, Const, Inst, Type, Var, VarId};

impl Lowerer<'_, '_> {
    /// Lowers an outlined ADF / ADR block.
    pub(super) fn adf_stmt(&mut self, b: &AdfBlock) -> R<()> {
        let span = self.span;
        let block = if b.reverse { "ADR" } else { "ADF" };
        let Some(name) = &b.outlined else {
            return Err(self.err(span, format!("{block} block not outlined")));
        };
        let Some(unit) = self.prog.find_proc(self.unit, &name.text) else {
            return Err(self.err(span, format!("{block} block not outlined")));
        };
        let params = self.prog.units[unit].host_vars.clone();
        let index = |n: &Name| params.iter().position(|p| *p == n.text);
        // The seeded and the read variables must be real scalars.
        for (n, _) in &b.seeds {
            self.derivative_var(n, block, true)?;
        }
        for (_, n) in &b.results {
            self.derivative_var(n, block, true)?;
        }
        let (args, callee) = self.call_args(unit, name, &[])?;
        // A zero derivative for every real scalar the block uses (its host
        // variables, then the environments of the procedures it calls
        // through dummy procedures).
        let mut derivatives = Vec::new();
        let mut saved = Vec::new();
        for (i, a) in args.iter().enumerate() {
            let v = match (params.get(i), a) {
                (Some(p), _) => {
                    let n = Name {
                        text: p.clone(),
                        span,
                    };
                    match self.derivative_var(&n, block, false)? {
                        Some((v, _)) => v,
                        None => continue,
                    }
                }
                (None, CallArg::Var(v)) if !self.proc.var(*v).is_array() => *v,
                _ => continue,
            };
            let is_real = self.proc.var(v).ty.is_float();
            let p = self.proc.var(v).name.clone();
            let ty = self.proc.var(v).ty;
            if is_real {
                let t = self.proc.add_var(Var::scalar(format!("_adfd_{p}"), ty));
                let zero = self.konst(Const::Float(0.0), ty);
                self.emit(Inst::Store(t, zero), None);
                derivatives.push((i, t));
            }
            if ty != Type::Char {
                saved.push((v, self.proc.add_var(Var::scalar(format!("_adfs_{p}"), ty))));
            }
        }
        let derivative = |i: usize| derivatives.iter().find(|(j, _)| *j == i).map(|d| d.1);
        let seeds: Vec<usize> = b.seeds.iter().filter_map(|(n, _)| index(n)).collect();
        let reads: Vec<usize> = b.results.iter().filter_map(|(_, n)| index(n)).collect();
        let Some(callee) = callee else {
            return Ok(());
        };
        if b.reverse {
            self.emit(Inst::Call(callee, args.clone()), None);
        }
        for (n, seed) in &b.seeds {
            if let Some(e) = seed {
                self.hoist(e)?;
            }
            // A variable the block does not use: its seed cannot matter.
            let Some(t) = index(n).and_then(derivative) else {
                continue;
            };
            let ty = self.proc.var(t).ty;
            let x = match seed {
                Some(e) => self.num_as(e, ty)?,
                None => self.konst(Const::Float(1.0), ty),
            };
            self.emit(Inst::Store(t, x), None);
        }
        if b.reverse {
            for &(v, s) in &saved {
                let x = self.val(Inst::Load(v), self.proc.var(v).ty);
                self.emit(Inst::Store(s, x), None);
            }
        }
        self.emit(Inst::Call(callee, args), None);
        if b.reverse {
            for &(v, s) in &saved {
                let x = self.val(Inst::Load(s), self.proc.var(v).ty);
                self.emit(Inst::Store(v, x), None);
            }
        }
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
            independents,
            dependents,
            span,
        });
        for (dest, n) in &b.results {
            let kind = match index(n).and_then(derivative) {
                Some(t) => {
                    let tname = self.proc.var(t).name.clone();
                    self.vars.insert(tname.clone(), t);
                    ExprKind::Name(Name {
                        text: tname,
                        span: n.span,
                    })
                }
                // Not used by the block: a zero derivative.
                None => ExprKind::Real {
                    text: "0.0".to_string(),
                    double: true,
                    kind: None,
                },
            };
            self.hoist(dest)?;
            self.assign(dest, &Expr { kind, span: n.span })?;
        }
        Ok(())
    }

    /// The scalar variable `n` of the host and whether it is real. With
    /// `required`, an error unless it is a real scalar; else `None` for
    /// arrays and what is not a variable.
    fn derivative_var(
        &mut self,
        n: &Name,
        block: &str,
        required: bool,
    ) -> R<Option<(VarId, bool)>> {
        let v = match self.resolve(n) {
            Ok(Resolved::Var(v)) => v,
            Ok(Resolved::Unknown) if required => self.implicit_var(n)?,
            _ if required => {
                return Err(self.err(n.span, format!("`{}` is not a variable", n.text)))
            }
            _ => return Ok(None),
        };
        let var = self.proc.var(v);
        let is_real = var.ty.is_float();
        if var.is_array() || (required && !is_real) {
            if required {
                return Err(self.err(
                    n.span,
                    format!(
                        "{block}: `{}` must be a real scalar (array and complex seeds are not supported)",
                        n.text
                    ),
                ));
            }
            return Ok(None);
        }
        Ok(Some((v, is_real)))
    }
}
