//! ALLOCATABLE dummy arguments that the procedure allocates: `real(8),
//! allocatable, intent(out) :: w(:)` followed by `allocate(w(n))` (the work
//! array allocated by a helper routine), or a dummy it DEALLOCATEs, passes
//! to MOVE_ALLOC, assigns an array constructor or an array-valued function
//! whole (`w = [w, x]`, `w = f(n)`), declares INTENT(OUT), or passes on
//! whole to such a dummy of a procedure it calls by name, through a
//! generic interface or through a dummy procedure; and every
//! deferred-length CHARACTER dummy (`character(len=:), allocatable :: s`,
//! reallocated by any assignment to it, see [`super::deferred_chars`]).
//!
//! Such a dummy is passed by descriptor
//! ([`adjit_ir::Storage::AllocatableParam`]): it *is* the caller's
//! ALLOCATABLE array, so ALLOCATE, DEALLOCATE, MOVE_ALLOC and the
//! reallocation of a whole-array assignment in the callee change the
//! caller's array, which the caller sees after the call. Inside, it behaves
//! as an ALLOCATABLE local (`allocated(w)`, bounds, reallocation) that is
//! not released at return; INTENT(OUT) releases it at entry. The actual
//! argument must be a whole ALLOCATABLE array of the dummy's type and rank
//! (a located error otherwise). Derivative code allocates the derivative
//! arrays with it (see [`crate::ad`]).
//!
//! Dummies whose allocation the procedure keeps are passed as arrays
//! ([`super::alloc_dummy`]), so that a host can call the procedure.

use super::super::ast::{ArgValue, Expr, ExprKind, Intent, Name, ProcKind, Stmt, StmtKind};
use super::lowerer::{for_each_body, Lowerer, Resolved, R};
use super::{Program, Unit};
use adjit_ir::{CallArg, Storage, Type, VarId};

/// Whether the ALLOCATABLE dummy `dummy` of `u` is passed by descriptor:
/// the storage of a component of an array of structures (see
/// [`super::ragged`]), declared INTENT(OUT), named by an ALLOCATE, DEALLOCATE or MOVE_ALLOC
/// of the procedure's body, assigned an array constructor whole, or passed
/// whole to such a dummy of a procedure it calls by name.
pub(crate) fn allocated_by_callee(prog: &Program, u: &Unit, dummy: &str) -> bool {
    match prog.units.iter().position(|x| std::ptr::eq(x, u)) {
        Some(at) => allocates(prog, at, dummy, &mut Vec::new()),
        None => false,
    }
}

/// [`allocated_by_callee`] for unit `at`; `seen` holds the (unit, dummy)
/// pairs being decided (a recursive call chain decides nothing more).
fn allocates(prog: &Program, at: usize, dummy: &str, seen: &mut Vec<(usize, String)>) -> bool {
    let u = &prog.units[at];
    let Some(decl) = u.scope.var(dummy) else {
        return false;
    };
    if decl.allocatable.is_none()
        || !super::hidden_param_owners(u)
            .iter()
            .any(|a| a.text == dummy)
    {
        return false;
    }
    // A deferred-length string is reallocated by every assignment to it.
    if super::ragged::is_storage(&u.scope, dummy) || is_deferred_string_decl(decl) {
        return true;
    }
    if seen.iter().any(|(v, d)| *v == at && d == dummy) {
        return false;
    }
    seen.push((at, dummy.to_string()));
    let array_fn = |e: &Expr| array_function_ref(prog, at, e);
    decl.intent == Some(Intent::Out)
        || structures_of(u, dummy)
            .any(|owner| names_allocation(&u.ast.body, owner, &array_fn, &mut |_, _, _, _| false))
        || names_allocation(
            &u.ast.body,
            dummy,
            &array_fn,
            &mut |call, k, keyword, part| {
                // The procedures of that name (the specifics of a generic
                // interface, the procedures that may be bound to a dummy
                // procedure), and their dummy at that place (its component
                // `part` for a structure passed whole).
                let mut callees: Vec<usize> = match dummy_procedure_of(prog, at, &call.text) {
                    Some(o) => prog
                        .allocs
                        .passed
                        .get(o)
                        .into_iter()
                        .flatten()
                        .copied()
                        .collect(),
                    None => prog.named_procs(at, &call.text),
                };
                callees.extend(
                    (0..prog.units.len()).filter(|&c| prog.units[c].ast.name.text == call.text),
                );
                callees.into_iter().any(|c| {
                    let callee = &prog.units[c].ast;
                    let formal = match keyword {
                        Some(kw) => Some(kw),
                        None => callee.args.get(k),
                    };
                    formal.is_some_and(|d| allocates(prog, c, &format!("{}{part}", d.text), seen))
                })
            },
        )
}

/// Whether `decl` declares a deferred-length CHARACTER variable
/// (`character(len=:)`, see [`super::deferred_chars`]).
pub(crate) fn is_deferred_string_decl(decl: &super::scope::VarDecl) -> bool {
    decl.ty
        .as_ref()
        .is_some_and(|t| t.char_len == super::scope::CharLenInfo::Deferred)
}

/// The ALLOCATABLE arrays of structures whose leaf the ALLOCATABLE
/// `dummy` is (`ps` for `ps%x`, `m%cells` for `m%cells%q`): ALLOCATE,
/// DEALLOCATE and the reallocating assignments of one allocate every leaf.
fn structures_of<'u>(u: &'u Unit, dummy: &'u str) -> impl Iterator<Item = &'u str> {
    dummy.match_indices('%').filter_map(move |(at, _)| {
        let owner = &dummy[..at];
        let st = u.scope.struct_decl(owner)?;
        let first = u.scope.var(st.leaves.first()?)?;
        (st.dims.is_some() && first.allocatable.is_some()).then_some(owner)
    })
}

/// The unit (`at` or a host) whose own dummy procedure `name` is, seen
/// from `at`.
fn dummy_procedure_of(prog: &Program, at: usize, name: &str) -> Option<usize> {
    let mut u = Some(at);
    while let Some(o) = u {
        let unit = &prog.units[o];
        if unit.dummy_procs[..unit.own_dummies]
            .iter()
            .any(|d| d.text == name)
        {
            return Some(o);
        }
        u = unit.host;
    }
    None
}

/// Whether `e`, in unit `at`, references a function of the program whose
/// result is an array (directly or as a specific of a generic interface):
/// assigned whole to an ALLOCATABLE array, it reallocates it to the
/// result's shape.
fn array_function_ref(prog: &Program, at: usize, e: &Expr) -> bool {
    let ExprKind::Apply { name, .. } = &e.kind else {
        return false;
    };
    if prog.units[at].scope.var(&name.text).is_some() {
        return false;
    }
    prog.named_procs(at, &name.text).into_iter().any(|c| {
        let unit = &prog.units[c];
        match &unit.ast.kind {
            ProcKind::Function { result, .. } => {
                let r = result.as_ref().unwrap_or(&unit.ast.name);
                unit.scope.var(&r.text).is_some_and(|d| d.dims.is_some())
            }
            _ => false,
        }
    })
}

/// Whether a procedure allocates what a call passes it: the callee's
/// name, the argument's position, its keyword and the component part
/// passed (`""`, or `"%u"` for a structure passed whole).
type PassedOn<'a> = dyn FnMut(&Name, usize, Option<&Name>, &str) -> bool + 'a;

/// Whether a statement of `body` (at any depth) allocates, deallocates or
/// moves the allocation of `name`, or passes it whole as argument `k`
/// (keyword `kw`) of a CALL of `p` for which `passed(p, k, kw, "")` holds;
/// for a component `g%u` of a structure passed whole, for which
/// `passed(p, k, kw, "%u")` holds.
fn names_allocation(
    body: &[Stmt],
    name: &str,
    array_fn: &dyn Fn(&Expr) -> bool,
    passed: &mut PassedOn<'_>,
) -> bool {
    body.iter().any(|s| {
        let here = match &s.kind {
            StmtKind::Allocate { objects, .. } | StmtKind::Deallocate { objects, .. } => {
                objects.iter().any(|o| match &o.kind {
                    // An element's component `b(k)%u` of an array of
                    // structures allocates its storage `b%u.data`.
                    ExprKind::Name(n) | ExprKind::Apply { name: n, .. } => {
                        n.text == name || super::scope::data_name(&n.text) == name
                    }
                    _ => false,
                })
            }
            // `w = [w, x]`, `w = f(n)`: reallocated to the constructor's
            // or the array-valued function's size.
            StmtKind::Assign { target, value } => {
                matches!(&target.kind, ExprKind::Name(n) if n.text == name)
                    && (matches!(value.kind, ExprKind::ArrayConstructor(_)) || array_fn(value))
            }
            StmtKind::Call { name: call, args } => args.iter().enumerate().any(|(k, a)| {
                let ArgValue::Expr(e) = &a.value else {
                    return false;
                };
                let ExprKind::Name(n) = &e.kind else {
                    return false;
                };
                // The part of `name` below the structure passed (`%u`).
                let Some(part) = name
                    .strip_prefix(n.text.as_str())
                    .filter(|p| p.is_empty() || p.starts_with('%'))
                else {
                    return false;
                };
                (part.is_empty() && call.text == "move_alloc")
                    || passed(call, k, a.keyword.as_ref(), part)
            }),
            _ => false,
        };
        let mut nested = false;
        for_each_body(s, &mut |b| {
            nested = nested || names_allocation(b, name, array_fn, passed)
        });
        here || nested
    })
}

impl Lowerer<'_, '_> {
    /// Gives the parameter `v`, an ALLOCATABLE dummy passed by descriptor,
    /// its storage (at parameter position `pos`) and rank.
    pub(super) fn descriptor_dummy(&mut self, v: VarId, pos: u32, rank: usize) {
        let unallocated = adjit_ir::Dim {
            lower: adjit_ir::Bound::Const(1),
            upper: Some(adjit_ir::Bound::Const(0)),
        };
        let var = &mut self.proc.vars[v.index()];
        var.storage = Storage::AllocatableParam(pos);
        var.dims = vec![unallocated; rank];
    }

    /// At entry: releases every INTENT(OUT) ALLOCATABLE dummy passed by
    /// descriptor that the caller gave allocated.
    pub(super) fn release_intent_out(&mut self) {
        let u = self.u();
        let out: Vec<VarId> = self
            .proc
            .params
            .iter()
            .copied()
            .filter(|&p| {
                let var = self.proc.var(p);
                matches!(var.storage, Storage::AllocatableParam(_))
                    && u.scope.var(&var.name).and_then(|d| d.intent) == Some(Intent::Out)
            })
            .collect();
        for v in out {
            self.release_if_allocated(v);
        }
    }

    /// The argument for the ALLOCATABLE dummy `dummy` of `callee` passed by
    /// descriptor (element type `ty`, rank `rank`): the actual `e` must be
    /// a whole ALLOCATABLE array of that type and rank.
    pub(super) fn descriptor_actual(
        &mut self,
        e: &super::super::ast::Expr,
        dummy: &str,
        (ty, rank): (Type, usize),
        callee: &super::super::ast::Name,
    ) -> R<CallArg> {
        let var = match &e.kind {
            ExprKind::Name(n) => match self.resolve(n)? {
                Resolved::Var(v) => Some(v),
                _ => None,
            },
            _ => None,
        };
        if let Some(v) = var.filter(|&v| self.is_allocatable_dummy(v)) {
            return Err(self.err(
                e.span,
                format!(
                    "unsupported Fortran: the ALLOCATABLE dummy argument `{}` passed on to `{dummy}` of `{}`, which allocates it (allocate or deallocate `{}` in this procedure too)",
                    self.proc.var(v).name,
                    callee.text,
                    self.proc.var(v).name
                ),
            ));
        }
        match var {
            Some(v)
                if self.proc.var(v).storage.is_allocatable()
                    && self.proc.var(v).ty == ty
                    && self.proc.var(v).dims.len() == rank =>
            {
                Ok(CallArg::Var(v))
            }
            // (The one ALLOCATABLE CHARACTER array is a string's buffer.)
            _ if ty == Type::Char && rank == 1 => Err(self.err(
                e.span,
                format!(
                    "{} passed to `{}` is not a deferred-length CHARACTER variable, as its dummy `{dummy}` (`character(len=:), allocatable`) requires",
                    match &e.kind {
                        ExprKind::Name(n) => format!("the actual argument `{}`", n.text),
                        _ => "an expression".to_string(),
                    },
                    callee.text
                ),
            )),
            _ => Err(self.err(
                e.span,
                format!(
                    "argument `{dummy}` of `{}` is an ALLOCATABLE {} array of rank {rank} that `{}` allocates: pass a whole ALLOCATABLE array of that type and rank",
                    callee.text,
                    ty.name(),
                    callee.text
                ),
            )),
        }
    }
}
