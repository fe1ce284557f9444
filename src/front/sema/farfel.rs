//! Lowering of FARFEL's ADF blocks (the parser has already outlined each
//! block's statements into an internal subroutine `_adfN`): the seeds are
//! evaluated into tangent temporaries, the subroutine is called, and the
//! results are assigned from tangent temporaries. The call is recorded as an
//! [`AdfCall`] so that the engine can replace it by a call to the
//! subroutine's tangent (sema knows nothing of derivatives).

use super::super::ast::{AdfBlock, Expr, ExprKind, Name};
use super::lowerer::{Lowerer, Resolved, R};
use adjit_ir::{Const, Inst, ProcId, Var, VarId};

/// One lowered ADF block: a call of `callee` in procedure `host` to be
/// replaced by a call of the callee's tangent.
#[derive(Clone, Debug, PartialEq)]
pub struct AdfCall {
    /// The IR name of the procedure holding the call.
    pub host: String,
    /// The outlined subroutine (called exactly once, from `host`).
    pub callee: ProcId,
    /// Tangent variables of `host`, by parameter index of `callee`, for
    /// every real scalar parameter: each holds the tangent seed (or zero)
    /// before the call and receives the tangent after it.
    pub tangents: Vec<(usize, VarId)>,
    /// Parameter indices of `callee` seeded (the independents).
    pub independents: Vec<usize>,
    /// Parameter indices of `callee` whose tangents are read (the
    /// dependents).
    pub dependents: Vec<usize>,
    /// Where the block is.
    pub span: adjit_ir::Span,
}

impl Lowerer<'_, '_> {
    /// Lowers an outlined ADF block.
    pub(super) fn adf_stmt(&mut self, b: &AdfBlock) -> R<()> {
        let span = self.span;
        let Some(name) = &b.outlined else {
            return Err(self.err(span, "ADF block not outlined"));
        };
        let Some(unit) = self.prog.find_proc(self.unit, &name.text) else {
            return Err(self.err(span, "ADF block not outlined"));
        };
        let params = self.prog.units[unit].host_vars.clone();
        let mut tangents: Vec<(usize, VarId)> = Vec::new();
        let mut independents = Vec::new();
        let mut dependents = Vec::new();
        // One tangent temporary per parameter mentioned.
        let mut tangent_of = |this: &mut Self, n: &Name| -> R<Option<VarId>> {
            let Some(i) = params.iter().position(|p| *p == n.text) else {
                return Ok(None);
            };
            if let Some(&(_, t)) = tangents.iter().find(|(j, _)| *j == i) {
                return Ok(Some(t));
            }
            let v = match this.resolve(n)? {
                Resolved::Var(v) => v,
                Resolved::Unknown => this.implicit_var(n)?,
                _ => return Err(this.err(n.span, format!("`{}` is not a variable", n.text))),
            };
            let var = this.proc.var(v).clone();
            if var.is_array() || !var.ty.is_float() {
                return Err(this.err(
                    n.span,
                    format!(
                        "ADF: `{}` must be a real scalar (array and complex seeds are not supported)",
                        n.text
                    ),
                ));
            }
            let t = this.proc.add_var(Var::scalar(format!("_adft_{}", n.text), var.ty));
            let zero = this.konst(Const::Float(0.0), var.ty);
            this.emit(Inst::Store(t, zero), None);
            tangents.push((i, t));
            Ok(Some(t))
        };
        for (_, n) in &b.results {
            if tangent_of(self, n)?.is_some() {
                let i = params.iter().position(|p| *p == n.text).expect("a parameter");
                dependents.push(i);
            }
        }
        for (n, seed) in &b.seeds {
            let Some(t) = tangent_of(self, n)? else {
                // Not used by the block: its tangent cannot matter.
                if let Some(e) = seed {
                    self.hoist(e)?;
                }
                continue;
            };
            let i = params.iter().position(|p| *p == n.text).expect("a parameter");
            independents.push(i);
            let ty = self.proc.var(t).ty;
            let x = match seed {
                Some(e) => {
                    self.hoist(e)?;
                    self.num_as(e, ty)?
                }
                None => self.konst(Const::Float(1.0), ty),
            };
            self.emit(Inst::Store(t, x), None);
        }
        // Zero tangents for every other real scalar the block uses (the
        // engine passes those of the active ones).
        for (i, p) in params.iter().enumerate() {
            if tangents.iter().any(|(j, _)| *j == i) {
                continue;
            }
            let n = Name {
                text: p.clone(),
                span,
            };
            if let Ok(Resolved::Var(v)) = self.resolve(&n) {
                let var = self.proc.var(v).clone();
                if !var.is_array() && var.ty.is_float() {
                    let t = self.proc.add_var(Var::scalar(format!("_adft_{p}"), var.ty));
                    let zero = self.konst(Const::Float(0.0), var.ty);
                    self.emit(Inst::Store(t, zero), None);
                    tangents.push((i, t));
                }
            }
        }
        let (args, callee) = self.call_args(unit, name, &[])?;
        let Some(callee) = callee else {
            return Ok(());
        };
        self.emit(Inst::Call(callee, args), None);
        self.out.adf.push(AdfCall {
            host: self.proc.name.clone(),
            callee,
            tangents: tangents.clone(),
            independents,
            dependents,
            span,
        });
        for (dest, n) in &b.results {
            let value = match params.iter().position(|p| *p == n.text) {
                Some(i) => {
                    let t = tangents.iter().find(|(j, _)| *j == i).expect("made").1;
                    let tname = self.proc.var(t).name.clone();
                    self.vars.insert(tname.clone(), t);
                    Expr {
                        kind: ExprKind::Name(Name {
                            text: tname,
                            span: n.span,
                        }),
                        span: n.span,
                    }
                }
                None => Expr {
                    kind: ExprKind::Real {
                        text: "0.0".to_string(),
                        double: true,
                        kind: None,
                    },
                    span: n.span,
                },
            };
            self.hoist(dest)?;
            self.assign(dest, &value)?;
        }
        Ok(())
    }
}
