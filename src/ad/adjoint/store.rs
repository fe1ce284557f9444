//! The store-versus-recompute rule for intermediate values of the reverse
//! sweep: cheap arithmetic is recomputed from the restored state, results of
//! library calls (`exp`, `log`, `sin`, `cos`, ...) are stored.
//!
//! The reverse sweep of an active assignment recomputes the part of the
//! statement's code list its local partials need ([`recomputed`]). A library
//! call there costs a call in the reverse sweep besides the one in the
//! forward sweep, and every value live across a call is spilled. Instead,
//! the forward sweep pushes the call's result on the Value stack right after
//! computing it, and the reverse sweep pops it (in reverse order, after the
//! statement's recorded old value and subscripts) in place of recomputing it.
//! The popped value is the one the forward sweep computed, so results are
//! the same bit for bit.

use adjit_ir::{Inst, UnaryOp, Value};

use super::normalize::Statement;
use super::record::{is_active_statement, recomputed, PlanContext};

/// True for instructions compiled to a library call (costly to recompute).
fn is_library_call(inst: &Inst) -> bool {
    use UnaryOp::*;
    matches!(
        inst,
        Inst::Unary(
            Exp | Log
                | Log10
                | Sin
                | Cos
                | Tan
                | Asin
                | Acos
                | Atan
                | Sinh
                | Cosh
                | Tanh
                | Special(_),
            _
        )
    )
}

/// The float library-call results of `stmt` its reverse sweep needs, in
/// execution order: the forward sweep pushes each right after computing it,
/// the reverse sweep pops them instead of recomputing. Empty unless `stmt` is
/// an active assignment (only those are reversed with a recomputation).
pub(crate) fn stored_results(ctx: &PlanContext<'_>, stmt: &Statement) -> Vec<Value> {
    let proc = &ctx.norm.proc;
    if !matches!(
        proc.inst(stmt.effect).kind,
        Inst::Store(..) | Inst::StoreElem(..)
    ) || !ctx.store_library_results
        || !is_active_statement(ctx, stmt)
    {
        return Vec::new();
    }
    recomputed(ctx, stmt)
        .into_iter()
        .filter(|&v| {
            let data = proc.inst(v);
            data.ty.is_some_and(|t| t.is_float()) && is_library_call(&data.kind)
        })
        .collect()
}
