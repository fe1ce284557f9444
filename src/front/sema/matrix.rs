//! MATMUL and TRANSPOSE as the right-hand side of an array assignment
//! (`c = matmul(a, b)`, `y = matmul(a, x)`, `y = matmul(x, a)`,
//! `b = transpose(a)`, to whole arrays or sections), lowered to loop nests
//! of ordinary IR: one loop per element of the target, with an inner
//! accumulation loop for MATMUL. The operands are whole arrays, none of
//! them the target.

use super::super::ast::{Arg, ArgValue, Expr, ExprKind, Name};
use super::array::ArrayRef;
use super::consts::promote;
use super::lowerer::{Lowerer, Resolved, R};
use adjit_ir::{BinaryOp, Const, Inst, Type, Value, VarId};

impl Lowerer<'_, '_> {
    /// True when `value` is a MATMUL or TRANSPOSE reference handled here.
    pub(super) fn is_matrix_intrinsic(&self, value: &Expr) -> bool {
        matches!(&value.kind, ExprKind::Apply { name, .. }
            if matches!(name.text.as_str(), "matmul" | "transpose")
                && self.is_intrinsic_name(&name.text)
                && !self.is_array_name(&name.text)
                && self.prog.find_proc(self.unit, &name.text).is_none())
    }

    /// An operand of MATMUL / TRANSPOSE: a whole array of rank 1 or 2.
    fn matrix_operand(&mut self, x: &Expr, target: &Name, what: &str) -> R<(VarId, usize)> {
        let ExprKind::Name(n) = &x.kind else {
            return Err(self.err(
                x.span,
                format!("unsupported Fortran: an argument of `{what}` that is not a whole array"),
            ));
        };
        let v = match self.resolve(n)? {
            Resolved::Var(v) if self.proc.var(v).is_array() => v,
            _ => return Err(self.err(n.span, format!("`{}` is not an array", n.text))),
        };
        if n.text == target.text {
            return Err(self.err(
                n.span,
                format!(
                    "unsupported Fortran: `{what}` of `{}` assigned to `{}` itself",
                    n.text, target.text
                ),
            ));
        }
        let rank = self.proc.var(v).dims.len();
        if rank > 2 || self.proc.var(v).ty == Type::Char || self.proc.var(v).ty == Type::Bool {
            return Err(self.err(
                n.span,
                format!("`{what}` takes numeric arrays of rank 1 or 2"),
            ));
        }
        Ok((v, rank))
    }

    /// `target = matmul(...)` or `target = transpose(...)`.
    pub(super) fn matrix_assign(
        &mut self,
        v: VarId,
        name: &Name,
        args: Option<&[Arg]>,
        value: &Expr,
    ) -> R<()> {
        let ExprKind::Apply {
            name: f,
            args: fargs,
        } = &value.kind
        else {
            unreachable!("checked by is_matrix_intrinsic")
        };
        let what = f.text.as_str();
        let mut ops = Vec::new();
        for a in fargs {
            match &a.value {
                ArgValue::Expr(x) => ops.push(self.matrix_operand(x, name, what)?),
                ArgValue::Range { .. } => {
                    return Err(self.err(f.span, format!("a range is not an argument of `{what}`")))
                }
            }
        }
        let want = if what == "matmul" { 2 } else { 1 };
        if ops.len() != want {
            return Err(self.err(f.span, format!("`{what}` takes {want} argument(s)")));
        }
        let result_rank = match (what, ops.as_slice()) {
            ("transpose", [(_, 2)]) => 2,
            ("matmul", [(_, 2), (_, 2)]) => 2,
            ("matmul", [(_, 2), (_, 1)] | [(_, 1), (_, 2)]) => 1,
            _ => {
                return Err(self.err(
                    f.span,
                    format!("the ranks of the arguments of `{what}` do not fit"),
                ))
            }
        };
        let extents = self.extents(&ArrayRef { name, args })?;
        if extents.len() != result_rank {
            return Err(self.err(
                value.span,
                format!(
                    "`{what}` of rank {result_rank} assigned to `{}` of rank {}",
                    name.text,
                    extents.len()
                ),
            ));
        }
        let ty = self.proc.var(v).ty;
        let i64t = Type::I64;
        // The length of the summed dimension (MATMUL).
        let inner = (what == "matmul").then(|| {
            let (a, ra) = ops[0];
            let d = if ra == 2 { 1 } else { 0 };
            let n = self.val(Inst::DimExtent(a, d), i64t);
            let t = self.temp("nk", i64t);
            self.emit(Inst::Store(t, n), None);
            t
        });
        let ops2 = ops.clone();
        self.for_positions(&extents, &mut |this, pos| {
            // Positions kept in temporaries: the inner loop has blocks.
            let kept: Vec<VarId> = pos
                .iter()
                .map(|&p| {
                    let t = this.temp("p", i64t);
                    this.emit(Inst::Store(t, p), None);
                    t
                })
                .collect();
            let x = match inner {
                None => {
                    let (a, _) = ops2[0];
                    let at = [pos[1], pos[0]];
                    let x = this.element_at(a, &at);
                    let at_ty = this.proc.var(a).ty;
                    this.convert(x, at_ty, ty)
                }
                Some(nk) => {
                    let acc_ty = promote(this.proc.var(ops2[0].0).ty, this.proc.var(ops2[1].0).ty);
                    let acc = this.temp("mm", acc_ty);
                    let zero = if acc_ty.is_float() {
                        Const::Float(0.0)
                    } else {
                        Const::Int(0)
                    };
                    let z = this.konst(zero, acc_ty);
                    this.emit(Inst::Store(acc, z), None);
                    this.for_positions(&[nk], &mut |this, k| {
                        let p: Vec<Value> = kept
                            .iter()
                            .map(|&t| this.val(Inst::Load(t), i64t))
                            .collect();
                        let ((a, ra), (b, rb)) = (ops2[0], ops2[1]);
                        let a_at: Vec<Value> = if ra == 2 {
                            vec![p[0], k[0]]
                        } else {
                            vec![k[0]]
                        };
                        let b_at: Vec<Value> = match (ra, rb) {
                            (2, 2) => vec![k[0], p[1]],
                            (2, 1) => vec![k[0]],
                            _ => vec![k[0], p[0]],
                        };
                        let x = this.element_at(a, &a_at);
                        let x = this.convert(x, this.proc.var(a).ty, acc_ty);
                        let y = this.element_at(b, &b_at);
                        let y = this.convert(y, this.proc.var(b).ty, acc_ty);
                        let xy = this.val(Inst::Binary(BinaryOp::Mul, x, y), acc_ty);
                        let s = this.val(Inst::Load(acc), acc_ty);
                        let s = this.val(Inst::Binary(BinaryOp::Add, s, xy), acc_ty);
                        this.emit(Inst::Store(acc, s), None);
                        Ok(())
                    })?;
                    let s = this.val(Inst::Load(acc), acc_ty);
                    this.convert(s, acc_ty, ty)
                }
            };
            let pos: Vec<Value> = kept
                .iter()
                .map(|&t| this.val(Inst::Load(t), i64t))
                .collect();
            let idx = match args {
                None => this.whole_array_index(v, &pos, name.span)?,
                Some(a) => this.section_index(v, a, &pos, name)?,
            };
            this.emit(Inst::StoreElem(v, idx, x), None);
            Ok(())
        })
    }

    /// The element of a whole array at 0-based positions.
    fn element_at(&mut self, a: VarId, pos: &[Value]) -> Value {
        let ty = self.proc.var(a).ty;
        let idx: Vec<Value> = pos
            .iter()
            .enumerate()
            .map(|(d, &p)| {
                let lo = self.val(Inst::DimLower(a, d as u32), Type::I64);
                self.val(Inst::Binary(BinaryOp::Add, lo, p), Type::I64)
            })
            .collect();
        self.val(Inst::LoadElem(a, idx), ty)
    }
}
