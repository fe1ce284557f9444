//! Closure conversion of nested subprograms (FARFEL, seed 002, section 3)
//! passed as actual arguments.
//!
//! A nested subprogram reads and writes variables of its hosts by
//! reference (its host variables, extra parameters after its own). When
//! one is passed for a dummy procedure, the instance of the callee it is
//! bound to ([`super::dummy`]) also takes the nested subprogram's
//! environment ([`super::Program::environment`]): the variables themselves,
//! by reference, as extra parameters after the host variables, one group
//! per dummy procedure. A call through the dummy procedure passes the
//! group on, and so does passing the dummy procedure on to another
//! procedure. Dummy procedures of a host used by a nested subprogram are
//! bound in the subprogram's instance from where it is named. Arrays travel
//! as assumed-size parameters and character variables with an assumed
//! length (the procedures passing an environment on never index it; the
//! nested subprogram declares the variables as its host does).

use super::super::ast::{Arg, ArgValue, ExprKind, Name};
use super::lowerer::{Lowerer, R};
use super::scope::Scope;
use super::Target;
use adjit_ir::{CallArg, Var};

impl<'p> Lowerer<'p, '_> {
    /// Declares the environment parameters of the instance being lowered:
    /// after the host variables, before the function result, one group per
    /// procedure bound to a dummy procedure.
    pub(super) fn declare_environment(&mut self) {
        let Some(i) = self.inst else {
            return;
        };
        let prog = self.prog;
        let binding = prog.instances.borrow()[i].binding.clone();
        let sig = &prog.sigs[self.unit];
        let trailing = usize::from(self.proc.result.is_some())
            + sig
                .struct_result
                .as_ref()
                .map_or(0, |(_, leaves)| leaves.len());
        let mut at = self.proc.params.len() - trailing;
        let mut env = Vec::new();
        for (k, t) in binding.iter().enumerate() {
            let mut group = Vec::new();
            for (name, unit) in prog.environment(t) {
                let scope = &prog.units[unit].scope;
                let decl = scope.var(&name);
                let ti = decl
                    .and_then(|d| d.ty.clone())
                    .or_else(|| scope.implicit_type(&name));
                let span = self.proc.span;
                let Some(ti) = ti else {
                    self.err(
                        span,
                        format!("`{name}` has no type (IMPLICIT NONE is in effect)"),
                    );
                    continue;
                };
                let is_array = decl.is_some_and(|d| d.dims.is_some());
                if is_array && ti.ty == adjit_ir::Type::Char {
                    let dummy = self.u().dummy_procs[k].text.clone();
                    self.err(
                        span,
                        format!(
                            "unsupported Fortran: the procedure passed for `{dummy}` uses the character array `{name}` of its host"
                        ),
                    );
                    continue;
                }
                // Passed through only (the nested subprogram declares it
                // with its host's bounds): an array is assumed-size, a
                // character variable has an assumed length.
                let mut var = Var::scalar(format!("_env{k}_{name}"), ti.ty);
                if is_array {
                    var.dims.push(adjit_ir::Dim {
                        lower: adjit_ir::Bound::Const(1),
                        upper: None,
                    });
                }
                let v = self.proc.add_var(var);
                self.proc.params.insert(at, v);
                at += 1;
                group.push(v);
            }
            env.push(group);
        }
        for (p, &v) in self.proc.params.clone().iter().enumerate() {
            let var = &mut self.proc.vars[v.index()];
            var.storage = var.storage.as_param(p as u32);
        }
        self.env = env;
    }

    /// The environment to pass with the procedure `t` named `name` here: a
    /// dummy procedure passes on the environment it came with, a nested
    /// subprogram its host variables (as seen here) and the environments
    /// of the procedures bound to its dummy procedures.
    pub(super) fn env_args(&mut self, name: &str, t: &Target) -> R<Vec<CallArg>> {
        if let Some(k) = self.u().dummy_procs.iter().position(|d| d.text == name) {
            let group = self.env.get(k).cloned().unwrap_or_default();
            return Ok(group.into_iter().map(CallArg::Var).collect());
        }
        // The unit, and its dummy procedures with what is bound to them.
        let (u, dummies, binding) = match t {
            Target::Proc(i) => {
                let inst = self.prog.instances.borrow()[*i].clone();
                let dummies = &self.prog.units[inst.unit].dummy_procs[..];
                (inst.unit, dummies, inst.binding)
            }
            // A nested subprogram with dummy procedures: its host
            // variables, and the environments of its hosts' dummy
            // procedures it calls (its own are bound at each call).
            Target::Template(u, captured) => {
                let unit = &self.prog.units[*u];
                (*u, &unit.dummy_procs[unit.own_dummies..], captured.clone())
            }
            _ => return Ok(Vec::new()),
        };
        let unit = &self.prog.units[u];
        let mut out = Vec::new();
        if unit.host.is_some() {
            for hv in &unit.host_vars {
                let n = Name {
                    text: hv.clone(),
                    span: self.span,
                };
                out.push(CallArg::Var(self.var_of(&n)?));
            }
        }
        for (d, b) in dummies.iter().zip(&binding) {
            out.extend(self.env_args(&d.text, b)?);
        }
        Ok(out)
    }

    /// The scope declaring the dummy procedure `name`: this unit's, or for
    /// one captured from a host, that host's.
    pub(super) fn dummy_scope(&self, name: &str) -> &'p Scope {
        let prog = self.prog;
        let mut at = Some(self.unit);
        while let Some(u) = at {
            let unit = &prog.units[u];
            if unit.dummy_procs[..unit.own_dummies]
                .iter()
                .any(|d| d.text == name)
            {
                return &unit.scope;
            }
            at = unit.host;
        }
        &prog.units[self.unit].scope
    }

    /// The targets of the dummy procedures of its hosts that the nested
    /// subprogram `unit` uses, bound as seen here.
    pub(super) fn captured_binding(&self, unit: usize) -> Vec<Target> {
        let u = &self.prog.units[unit];
        u.dummy_procs[u.own_dummies..]
            .iter()
            .map(|d| self.dummy_target(&d.text).unwrap_or(Target::Unbound))
            .collect()
    }

    /// A nested subprogram named `name` here, passed as an actual argument,
    /// that calls dummy procedures of its hosts: its instance with them
    /// bound, or when it takes dummy procedures of its own, the template
    /// carrying them (`None` when `name` is not such a subprogram).
    pub(super) fn nested_target(&mut self, name: &Name) -> Option<Target> {
        if self.dummy_target(&name.text).is_some() || self.u().scope.var(&name.text).is_some() {
            return None;
        }
        let p = self.prog.find_proc(self.unit, &name.text)?;
        let unit = &self.prog.units[p];
        if unit.host.is_none() || unit.dummy_procs.len() == unit.own_dummies {
            return None;
        }
        let binding = self.captured_binding(p);
        Some(if unit.own_dummies > 0 {
            Target::Template(p, binding)
        } else {
            Target::Proc(self.prog.instance(p, binding, None))
        })
    }
}

/// The name an actual argument is, if it is a bare name.
pub(super) fn arg_name(a: &Arg) -> Option<&Name> {
    match &a.value {
        ArgValue::Expr(x) => match &x.kind {
            ExprKind::Name(n) => Some(n),
            _ => None,
        },
        _ => None,
    }
}
