//! FARFEL's ADF and ADR blocks, last step: sema lowered each block to calls
//! of an outlined subroutine with derivative variables beside them
//! ([`AdfCall`]); here an ADF block's call becomes a call of the
//! subroutine's tangent ([`crate::ad::tangent`]), and an ADR block's two
//! calls become calls of its adjoint's forward and reverse sweeps
//! ([`crate::ad::adjoint`]), all generated into the module. Blocks are
//! expanded innermost first, so that an outer block differentiates the
//! inner block's derivative code (tangent over tangent, tangent over
//! adjoint) with the inner and outer perturbations in distinct variables.

use super::{Error, ErrorKind};
use crate::ad::adjoint::{adjoint, AdjointOptions};
use crate::ad::rules::StrongZero;
use crate::ad::tangent::{active_params, tangent, TangentOptions};
use crate::front::diag::Diagnostic;
use crate::front::diag::SourceMap;
use crate::front::sema::AdfCall;
use adjit_ir::{CallArg, Inst, Module, ProcId, VarId};

/// Replaces every ADF / ADR block's calls by calls of derivative code.
pub(super) fn expand(
    mut module: Module,
    calls: &[AdfCall],
    map: &SourceMap,
) -> Result<Module, Error> {
    let mut pending: Vec<&AdfCall> = calls.iter().collect();
    while !pending.is_empty() {
        // A block whose subroutine reaches no unexpanded block (through
        // the calls it makes, at any depth: nested AD across procedures).
        let next = pending
            .iter()
            .position(|c| {
                let reached = reachable(&module, c.callee);
                !pending.iter().any(|o| {
                    module
                        .find_proc(&o.host)
                        .is_some_and(|h| reached.contains(&h))
                })
            })
            .ok_or_else(|| Error::new(ErrorKind::Compile, "ADF / ADR blocks nest in a cycle"))?;
        let call = pending.remove(next);
        module = expand_one(module, call, map)?;
    }
    Ok(module)
}

/// The procedures `from` calls, directly or not, and `from` itself.
fn reachable(module: &Module, from: ProcId) -> Vec<ProcId> {
    let mut seen = vec![from];
    let mut next = 0;
    while next < seen.len() {
        for d in &module.proc(seen[next]).insts {
            if let Inst::Call(p, _) = &d.kind {
                if !seen.contains(p) {
                    seen.push(*p);
                }
            }
        }
        next += 1;
    }
    seen
}

/// Expands one block.
fn expand_one(module: Module, c: &AdfCall, map: &SourceMap) -> Result<Module, Error> {
    let block = if c.reverse { "ADR" } else { "ADF" };
    let located = |message: String| {
        super::compile_error(
            map,
            &[Diagnostic::error(c.span, format!("{block}: {message}"))],
        )
    };
    // The host may have been dropped (a main program with errors).
    let Some(host) = module.find_proc(&c.host) else {
        return Ok(module);
    };
    let callee = module.proc(c.callee);
    let param = |i: &usize| callee.params[*i];
    let independents: Vec<_> = c.independents.iter().map(param).collect();
    let dependents: Vec<_> = c.dependents.iter().map(param).collect();
    let (out, targets, active) = if c.reverse {
        if let Some(p) = written_array_param(&module, c.callee, &c.saved) {
            return Err(located(format!(
                "the block writes the assumed-size array `{}` (not supported in ADR blocks)",
                callee.var(p).name
            )));
        }
        let (out, procs) = adjoint(
            &module,
            c.callee,
            &independents,
            &dependents,
            &AdjointOptions {
                strong_zero: StrongZero::Differentiable,
                // The block's sweeps are differentiated again by an outer
                // derivative, which cannot differentiate stack operations.
                store_library_results: false,
                ..AdjointOptions::default()
            },
        )
        .map_err(|e| located(e.to_string()))?;
        let active: Vec<VarId> = callee
            .params
            .iter()
            .zip(&procs.active_params)
            .filter(|(_, a)| **a)
            .map(|(p, _)| *p)
            .collect();
        (out, vec![procs.forward, procs.reverse], active)
    } else {
        let active = active_params(&module, c.callee, &independents, &dependents);
        let (out, root) = tangent(
            &module,
            c.callee,
            &independents,
            &dependents,
            &TangentOptions {
                strong_zero: StrongZero::Differentiable,
                ..TangentOptions::default()
            },
        )
        .map_err(|e| located(e.to_string()))?;
        (out, vec![root], active)
    };
    let mut derivative_args = Vec::new();
    for (i, &p) in callee.params.iter().enumerate() {
        if !active.contains(&p) {
            derivative_args.push(None);
            continue;
        }
        match c.derivatives.iter().find(|(j, _)| *j == i) {
            Some(&(_, t)) => derivative_args.push(Some(t)),
            None => {
                return Err(located(format!(
                    "`{}` carries a derivative but is not a real variable with known bounds (assumed-size arrays are not supported)",
                    callee.var(p).name
                )))
            }
        }
    }
    let mut out = out;
    let host = &mut out.procs[host.index()];
    let mut sites = host
        .insts
        .iter_mut()
        .filter(|d| matches!(&d.kind, Inst::Call(p, _) if *p == c.callee));
    for target in targets {
        let site = sites
            .next()
            .ok_or_else(|| located("the block's call was not found".to_string()))?;
        let Inst::Call(_, args) = &site.kind else {
            unreachable!("matched a call")
        };
        let mut new_args = Vec::new();
        for (a, t) in args.iter().zip(&derivative_args) {
            new_args.push(a.clone());
            if let Some(t) = t {
                new_args.push(CallArg::Var(*t));
            }
        }
        site.kind = Inst::Call(target, new_args);
    }
    Ok(out)
}

/// An array parameter of `proc` not among the parameter indices `saved`
/// that it may write (stores an element or passes it to a call): the
/// reverse sweep of an ADR block may restore such an array, and only the
/// `saved` variables are restored after it.
fn written_array_param(module: &Module, proc: ProcId, saved: &[usize]) -> Option<VarId> {
    let p = module.proc(proc);
    let is_array_param = |v: VarId| {
        p.params
            .iter()
            .position(|q| *q == v)
            .is_some_and(|i| !saved.contains(&i))
            && p.var(v).is_array()
    };
    p.insts.iter().find_map(|d| match &d.kind {
        Inst::StoreElem(v, _, _) if is_array_param(*v) => Some(*v),
        Inst::Call(_, args) => args.iter().find_map(|a| match a {
            CallArg::Var(v) | CallArg::Elem(v, _) | CallArg::Slice(v, _, _)
                if is_array_param(*v) =>
            {
                Some(*v)
            }
            _ => None,
        }),
        _ => None,
    })
}
