//! Arrays of a BLOCK sized by a local variable of the procedure
//! (`m = n - 2` then `block; real(8) :: w(m)`): Fortran sizes them when the
//! BLOCK is entered. The scope makes them ALLOCATABLE
//! ([`Scope::block_sized`](super::scope::Scope)); entering the BLOCK
//! releases the previous allocation (a BLOCK left by EXIT, CYCLE or GO TO
//! keeps it until then) and allocates with the declared bounds evaluated
//! there, and returning releases it as any ALLOCATABLE local. Being
//! ALLOCATABLE arrays, the derivative transforms treat them as such (the
//! reverse sweep sees the storage of each entry).

use crate::front::ast::{Arg, ArgValue, DimSpec, Expr, ExprKind, Name, Stmt, StmtKind};
use adjit_ir::Span;

use super::lowerer::{Lowerer, R};

impl Lowerer<'_, '_> {
    /// Allocates the arrays of the BLOCK at `block` sized on entry to it.
    pub(super) fn size_block_arrays(&mut self, block: Span) -> R<()> {
        let arrays: Vec<(Name, Vec<DimSpec>)> = self
            .u()
            .scope
            .block_sized
            .iter()
            .filter(|(at, _, _)| *at == block)
            .map(|(_, n, d)| (n.clone(), d.clone()))
            .collect();
        for (name, dims) in arrays {
            // Bounds may read the associate names of enclosing ASSOCIATE
            // constructs (`associate (m => n - 1); block; real :: w(m)`).
            let dims: Vec<DimSpec> = dims
                .into_iter()
                .map(|d| match d {
                    DimSpec::Explicit { lower, upper } => DimSpec::Explicit {
                        lower: lower.map(|e| self.with_associate_names(&e)),
                        upper: self.with_associate_names(&upper),
                    },
                    other => other,
                })
                .collect();
            let span = name.span;
            let expr = |kind| Expr { kind, span };
            let stmt = |kind| Stmt {
                label: None,
                kind,
                span,
            };
            let whole = expr(ExprKind::Name(name.clone()));
            let allocated = expr(ExprKind::Apply {
                name: Name {
                    text: "allocated".to_string(),
                    span,
                },
                args: vec![Arg::positional(whole.clone())],
            });
            self.stmt_rewritten(stmt(StmtKind::LogicalIf {
                cond: allocated,
                stmt: Box::new(stmt(StmtKind::Deallocate {
                    objects: vec![whole],
                    stat: None,
                    errmsg: None,
                })),
            }))?;
            let bounds = dims
                .into_iter()
                .filter_map(|d| match d {
                    DimSpec::Explicit { lower: None, upper } => Some(ArgValue::Expr(upper)),
                    DimSpec::Explicit {
                        lower: Some(lo),
                        upper,
                    } => Some(ArgValue::Range {
                        lo: Some(lo),
                        hi: Some(upper),
                        stride: None,
                    }),
                    _ => None,
                })
                .map(|value| Arg {
                    keyword: None,
                    value,
                })
                .collect();
            self.stmt_rewritten(stmt(StmtKind::allocate(vec![expr(ExprKind::Apply {
                name: name.clone(),
                args: bounds,
            })])))?;
        }
        Ok(())
    }
}
