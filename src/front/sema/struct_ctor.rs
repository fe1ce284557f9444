//! Array-valued expressions of structures other than arrays, sections and
//! ELEMENTAL references, assigned to an array of structures: array
//! constructors (`cells = [c1, cell(s, t), d(2:3), (cell(i, s), i = 1, n)]`)
//! and PACK (`live(1:m) = pack(cells, cells%u > 0)`).
//!
//! The target (a whole rank-1 array of structures or a rank-1 section of
//! one; a whole ALLOCATABLE one is first given the constructor's size,
//! reallocated when its size differs, when SIZE counts the items) is filled in array element order through a position counter `k`:
//! `k = 0`, then for every value `k = k + 1` and the structure assignment
//! `target(k-th position) = value`. A scalar item of a constructor is one
//! value, an array of structures or a section of one gives its elements in
//! array element order (loops over its positions), an implied DO becomes a
//! DO loop around its items. PACK loops over the positions of its array,
//! the mask taken at the same position (its arrays in elemental position,
//! as for ELEMENTAL references), and assigns the element when the mask
//! holds.
//!
//! Every value is assigned as soon as it is made, so a value reading the
//! target's array is a located error (`cells = [c, cells(1:3)]` would read
//! elements already assigned). PACK with VECTOR= and the other intrinsics
//! of arrays of structures are lowered leaf by leaf (`super::struct_intrinsic`).

use super::super::ast::{Arg, ArgValue, BinOp, Expr, ExprKind, Name, Stmt, StmtKind, UnOp};
use super::lowerer::{Lowerer, Resolved, R};
use super::struct_elemental::{base, binary, int_expr, name_expr, reads, substitute, Operand};
use adjit_ir::Span;

/// The statement `kind` at `span`, unlabelled.
fn stmt(kind: StmtKind, span: Span) -> Stmt {
    Stmt {
        label: None,
        kind,
        span,
    }
}

/// `target = value`.
pub(super) fn assign(target: Expr, value: Expr, span: Span) -> Stmt {
    stmt(StmtKind::Assign { target, value }, span)
}

/// What fills the target: its position counter and the target itself.
struct Fill<'t> {
    /// The counter of positions assigned so far.
    k: String,
    /// The target.
    target: &'t Operand,
    /// Where the statement is.
    span: Span,
}

impl Fill<'_> {
    /// `k = k + 1; target(k) = value`.
    fn put(&self, value: Expr) -> [Stmt; 2] {
        let span = self.span;
        let k = name_expr(&self.k, span);
        [
            assign(
                k.clone(),
                binary(BinOp::Add, k, int_expr(1, span), span),
                span,
            ),
            assign(
                self.target.element(std::slice::from_ref(&self.k), span),
                value,
                span,
            ),
        ]
    }
}

/// True when SIZE counts the items of an array constructor without
/// running it: no implied DO loops, no sections or array expressions.
fn counted(items: &[Expr]) -> bool {
    items.iter().all(|i| match &i.without_parens().kind {
        ExprKind::ArrayConstructor(inner) => counted(inner),
        ExprKind::ImpliedDo { .. } => false,
        ExprKind::Apply { args, .. } => !args
            .iter()
            .any(|a| matches!(a.value, ArgValue::Range { .. })),
        _ => true,
    })
}

/// The statements giving the ALLOCATABLE array of structures `target` the
/// size of the array constructor `value` before it is filled (Fortran 2003
/// reallocation on assignment): released when allocated with another
/// size, then allocated when not allocated.
fn reallocation(target: &Name, value: &Expr, span: Span) -> [Stmt; 2] {
    let whole = || Expr {
        kind: ExprKind::Name(target.clone()),
        span,
    };
    let size = |x: Expr| Expr::apply_positional("size", vec![x], span);
    let allocated = Expr::apply_positional("allocated", vec![whole()], span);
    let unallocated = Expr {
        kind: ExprKind::Unary(UnOp::Not, Box::new(allocated.clone())),
        span,
    };
    let other_size = binary(BinOp::Ne, size(whole()), size(value.clone()), span);
    let release = stmt(
        StmtKind::Deallocate {
            objects: vec![whole()],
            stat: None,
            errmsg: None,
        },
        span,
    );
    let object = Expr::apply_positional(&target.text, vec![size(value.clone())], span);
    let allocate = stmt(StmtKind::allocate(vec![object]), span);
    [
        stmt(
            StmtKind::If {
                name: None,
                arms: vec![(
                    allocated,
                    vec![stmt(
                        StmtKind::LogicalIf {
                            cond: other_size,
                            stmt: Box::new(release),
                        },
                        span,
                    )],
                )],
                else_body: None,
            },
            span,
        ),
        stmt(
            StmtKind::LogicalIf {
                cond: unallocated,
                stmt: Box::new(allocate),
            },
            span,
        ),
    ]
}

/// `body` inside DO loops over the positions `counters` of `array`, the
/// first dimension innermost.
pub(super) fn loops_over(
    array: &Operand,
    counters: &[String],
    mut body: Vec<Stmt>,
    span: Span,
) -> Stmt {
    for (d, k) in counters.iter().enumerate() {
        body = vec![stmt(
            StmtKind::Do {
                name: None,
                var: Name {
                    text: k.clone(),
                    span,
                },
                start: int_expr(1, span),
                end: array.extent(d, span),
                step: None,
                body,
            },
            span,
        )];
    }
    body.pop().expect("one loop per dimension of an array")
}

impl Lowerer<'_, '_> {
    /// The statements filling an array of structures from an array
    /// constructor or a PACK of structures (see the module documentation);
    /// `None` for any other statement.
    pub(super) fn struct_array_value(&mut self, s: &Stmt) -> R<Option<Vec<Stmt>>> {
        let StmtKind::Assign { target, value } = &s.kind else {
            return Ok(None);
        };
        let inner = value.without_parens();
        let pack_args = match &inner.kind {
            ExprKind::ArrayConstructor(_) => None,
            ExprKind::Apply { name, args } if self.names_intrinsic(name) && name.text == "pack" => {
                Some((name, args))
            }
            _ => return Ok(None),
        };
        if !self.is_struct_array(target)? {
            return Ok(None);
        }
        let what = if pack_args.is_some() {
            "PACK of structures"
        } else {
            "array constructor of structures"
        };
        let t = Operand::of(target).expect("an array of structures or a section");
        if self.operand_rank(&t)? != Some(1) {
            return Err(self.err(
                target.span,
                format!("unsupported Fortran: an {what} assigned to an array of rank other than 1"),
            ));
        }
        if let Some(at) = reads(inner, base(&t.name.text), &[]) {
            return Err(self.err(
                at,
                format!(
                    "unsupported Fortran: an {what} reading its target `{}` (assign the value to a temporary first)",
                    base(&t.name.text)
                ),
            ));
        }
        let span = s.span;
        let fill = Fill {
            k: self.position_counter(),
            target: &t,
            span,
        };
        let mut out = vec![Stmt {
            label: s.label,
            ..assign(name_expr(&fill.k, span), int_expr(0, span), span)
        }];
        if let (ExprKind::ArrayConstructor(items), ExprKind::Name(n)) = (&inner.kind, &target.kind)
        {
            if self.allocatable_structures(n).is_some() && counted(items) {
                out.extend(reallocation(n, inner, span));
            }
        }
        match (&inner.kind, pack_args) {
            (_, Some((name, args))) => out.push(self.struct_pack(name, args, &fill)?),
            (ExprKind::ArrayConstructor(items), None) => {
                for item in items {
                    out.extend(self.struct_item(item, &fill)?);
                }
            }
            _ => {}
        }
        Ok(Some(out))
    }

    /// True when `e` is a whole array of structures or a section of one.
    pub(super) fn is_struct_array(&mut self, e: &Expr) -> R<bool> {
        let (ExprKind::Name(n) | ExprKind::Apply { name: n, .. }) = &e.kind else {
            return Ok(false);
        };
        if let ExprKind::Apply { args, .. } = &e.kind {
            if args.iter().any(|a| a.marked_part().is_some())
                || !args
                    .iter()
                    .any(|a| matches!(a.value, ArgValue::Range { .. }))
            {
                return Ok(false);
            }
        }
        Ok(matches!(self.resolve(n)?, Resolved::Struct(st) if st.dims.is_some()))
    }

    /// The statements assigning one item of an array constructor of
    /// structures.
    fn struct_item(&mut self, item: &Expr, fill: &Fill) -> R<Vec<Stmt>> {
        let span = fill.span;
        if let ExprKind::ImpliedDo {
            items,
            var,
            start,
            end,
            step,
        } = &item.kind
        {
            let mut body = Vec::new();
            for x in items {
                body.extend(self.struct_item(x, fill)?);
            }
            return Ok(vec![stmt(
                StmtKind::Do {
                    name: None,
                    var: var.clone(),
                    start: (**start).clone(),
                    end: (**end).clone(),
                    step: step.as_deref().cloned(),
                    body,
                },
                span,
            )]);
        }
        if self.is_struct_array(item)? {
            let array = Operand::of(item).expect("an array of structures or a section");
            let rank = self.operand_rank(&array)?.unwrap_or(0);
            let counters: Vec<String> = (0..rank).map(|_| self.position_counter()).collect();
            let body = fill.put(array.element(&counters, span)).to_vec();
            return Ok(vec![loops_over(&array, &counters, body, span)]);
        }
        Ok(fill.put(item.clone()).to_vec())
    }

    /// The loops of `pack(array, mask)` (`args`) filling the target.
    fn struct_pack(&mut self, name: &Name, args: &[Arg], fill: &Fill) -> R<Stmt> {
        let span = fill.span;
        let mut array = None;
        let mut mask = None;
        for (i, a) in args.iter().enumerate() {
            let slot = match (a.keyword.as_ref().map(|k| k.text.as_str()), i) {
                (Some("array"), _) | (None, 0) => &mut array,
                (Some("mask"), _) | (None, 1) => &mut mask,
                _ => {
                    return Err(self.err(
                        a.keyword.as_ref().map_or(name.span, |k| k.span),
                        "unsupported Fortran: the VECTOR argument of a PACK of structures",
                    ))
                }
            };
            let ArgValue::Expr(e) = &a.value else {
                return Err(self.err(name.span, "PACK takes expressions"));
            };
            *slot = Some(e);
        }
        let (Some(array), Some(mask)) = (array, mask) else {
            return Err(self.err(name.span, "PACK takes the arguments ARRAY and MASK"));
        };
        if !self.is_struct_array(array)? {
            return Err(self.err(
                array.span,
                "the ARRAY of a PACK of structures must be an array of structures or a section of one",
            ));
        }
        let array = Operand::of(array).expect("an array of structures or a section");
        let rank = self.operand_rank(&array)?.unwrap_or(0);
        let mut operands = Vec::new();
        self.elemental_operands(mask, false, &mut operands)?;
        for op in &operands {
            let r = self.operand_rank(op)?.unwrap_or(0);
            if r != rank {
                return Err(self.err(
                    op.span,
                    format!(
                        "`{}` (of rank {r}) does not conform with the ARRAY `{}` of PACK (of rank {rank})",
                        op.name.text, array.name.text
                    ),
                ));
            }
        }
        let counters: Vec<String> = (0..rank).map(|_| self.position_counter()).collect();
        let mut cond = mask.clone();
        substitute(&mut cond, &operands, &counters, span);
        let body = vec![stmt(
            StmtKind::If {
                name: None,
                arms: vec![(cond, fill.put(array.element(&counters, span)).to_vec())],
                else_body: None,
            },
            span,
        )];
        Ok(loops_over(&array, &counters, body, span))
    }
}
