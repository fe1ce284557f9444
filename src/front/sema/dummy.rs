//! Dummy procedures by specialization: which dummy arguments of a unit are
//! procedures (`external fcn`, or called with CALL), and the instances a
//! program is lowered to, one IR procedure per unit and binding of its
//! dummy procedures.
//!
//! A unit without dummy procedures has one instance under its own name. A
//! unit with dummy procedures (a template) has one instance per list of
//! procedures passed for them, found while calls are lowered: `call
//! hybrd(fcn, ...)` in a unit bound to `fcn = myfcn` calls the instance
//! `hybrd[fcn=myfcn]`, whose own `call fcn(...)` calls `myfcn` directly.
//! Dummy procedures are not IR parameters, so primal, tangent and adjoint
//! code see ordinary calls. The bindings of an entry come from outside
//! ([`super::compile_with`]); such a root instance keeps the unit's name.
//! A procedure interface (`procedure(iface) :: f`) is another way to
//! declare a dummy procedure and fits the same scheme.
//!
//! It decides what is bound to what; the lowering of calls is in
//! [`super::expr`] and [`super::stmt`].

use super::super::ast::{ArgValue, Expr, ExprKind, Name, Procedure, Stmt, StmtKind};
use super::super::diag::Diagnostic;
use super::consts::type_name;
use super::lowerer::{for_each_body, Out};
use super::scope::{Interface, Scope, Sym};
use super::{Program, Target};
use adjit_ir::{Inst, Proc, ProcId, Type};

/// One IR procedure to produce: a unit and its dummy procedures' targets.
#[derive(Clone, Debug)]
pub(crate) struct Instance {
    /// The unit lowered.
    pub unit: usize,
    /// One target per dummy procedure of the unit, in argument order.
    pub binding: Vec<Target>,
    /// The IR name: the unit's, or `unit[dummy=target,...]`.
    pub name: String,
}

/// The names referenced as functions (`f(...)` with no substring range)
/// in an expression, at any depth.
fn function_refs(e: &Expr, out: &mut Vec<Name>) {
    if let ExprKind::Apply { name, args } = &e.kind {
        if args.iter().all(|a| matches!(a.value, ArgValue::Expr(_))) {
            out.push(name.clone());
        }
    }
    e.kind
        .children()
        .into_iter()
        .for_each(|x| function_refs(x, out));
}

/// The dummy procedures of a unit: dummy arguments declared EXTERNAL,
/// dummy arguments used as the subroutine of a CALL, and scalar dummy
/// arguments referenced as functions (`y = f(x)`: Fortran 77's implicit
/// dummy function, which gfortran accepts); the last two are made
/// EXTERNAL in `scope`, a function keeping its declared type.
pub(crate) fn dummy_procedures(p: &Procedure, scope: &mut Scope) -> Vec<Name> {
    fn called(body: &[Stmt], out: &mut Vec<Name>) {
        for s in body {
            match &s.kind {
                StmtKind::Call { name, .. } => out.push(name.clone()),
                // The target itself is a variable (or a statement function).
                StmtKind::Assign { target, value } => {
                    target
                        .kind
                        .children()
                        .into_iter()
                        .for_each(|x| function_refs(x, out));
                    function_refs(value, out);
                }
                k => k
                    .own_exprs()
                    .into_iter()
                    .for_each(|x| function_refs(x, out)),
            }
            for_each_body(s, &mut |b| called(b, out));
        }
    }
    let mut calls = Vec::new();
    called(&p.body, &mut calls);
    let mut out = Vec::new();
    for a in &p.args {
        let external = matches!(scope.syms.get(&a.text), Some(Sym::External(_)));
        let call = calls.iter().find(|c| c.text == a.text);
        // An array, or an array of structures (`allocate(ps(n))` is no
        // function reference).
        let is_var_array = scope.var(&a.text).is_some_and(|v| v.dims.is_some())
            || scope.struct_decl(&a.text).is_some_and(|s| s.dims.is_some());
        if external || (call.is_some() && !is_var_array) {
            if !external {
                if let Some(ty) = scope.var(&a.text).and_then(|v| v.ty.clone()) {
                    scope.proc_types.insert(a.text.clone(), ty);
                }
                scope.syms.insert(
                    a.text.clone(),
                    Sym::External(call.map_or(a.span, |c| c.span)),
                );
            }
            out.push(a.clone());
        }
    }
    out
}

/// Dummy arguments passed on, by a unit or its nested subprograms, as
/// actual arguments for dummy procedures of the procedures they call
/// (`call deriv2(f, x, y, yprime)` in `root(f, x0, n)`) are dummy
/// procedures too, without EXTERNAL (what FARFEL's Listing 1 relies on).
pub(crate) fn infer_passed_procedures(prog: &mut Program) {
    let sites: Vec<_> = prog
        .units
        .iter()
        .map(|u| super::lowerer::call_sites(u.ast))
        .collect();
    let mut changed = true;
    while changed {
        changed = false;
        for (u, unit_sites) in sites.iter().enumerate() {
            for (callee, args) in unit_sites {
                let Some(c) = prog.find_proc(u, callee) else {
                    continue;
                };
                for (pos, a) in args.iter().enumerate() {
                    let Some(a) = a else { continue };
                    let formal = prog.units[c].ast.args.get(pos);
                    let is_proc = formal.is_some_and(|f| {
                        prog.units[c].dummy_procs[..prog.units[c].own_dummies]
                            .iter()
                            .any(|d| d.text == f.text)
                    });
                    if !is_proc {
                        continue;
                    }
                    // The unit whose dummy argument `a` is, seen from `u`.
                    let mut at = Some(u);
                    while let Some(o) = at {
                        let unit = &prog.units[o];
                        if unit.ast.args.iter().any(|x| &x.text == a) {
                            break;
                        }
                        if unit.scope.var(a).is_some() {
                            at = None;
                            break;
                        }
                        at = unit.host;
                    }
                    let Some(o) = at else { continue };
                    let unit = &mut prog.units[o];
                    if unit.dummy_procs.iter().any(|d| &d.text == a)
                        || unit.scope.var(a).is_some_and(|v| v.dims.is_some())
                    {
                        continue;
                    }
                    let Some(name) = unit.ast.args.iter().find(|x| &x.text == a).cloned() else {
                        continue;
                    };
                    unit.scope
                        .syms
                        .insert(name.text.clone(), Sym::External(name.span));
                    unit.dummy_procs.push(name);
                    unit.own_dummies += 1;
                    let order = |d: &Name| unit.ast.args.iter().position(|x| x.text == d.text);
                    unit.dummy_procs.sort_by_key(order);
                    changed = true;
                }
            }
        }
    }
}

impl Program<'_> {
    /// The instance of `unit` with `binding`, added when new (named `name`
    /// when given, else after the unit and its binding).
    pub fn instance(&self, unit: usize, binding: Vec<Target>, name: Option<String>) -> usize {
        let mut list = self.instances.borrow_mut();
        if let Some(i) = list
            .iter()
            .position(|x| x.unit == unit && x.binding == binding)
        {
            return i;
        }
        let base = &self.units[unit].ir_name;
        let name = name.unwrap_or_else(|| {
            if binding.is_empty() {
                return base.clone();
            }
            self.bound_name(&list, base, &self.units[unit].dummy_procs, &binding)
        });
        list.push(Instance {
            unit,
            binding,
            name,
        });
        list.len() - 1
    }

    /// What a name passed for a dummy procedure denotes in unit `from`
    /// (whose own dummy procedures are bound by `own`): a procedure of the
    /// program without dummy procedures of its own, or an intrinsic
    /// declared INTRINSIC (any supported intrinsic when `any_intrinsic`).
    pub fn procedure_target(
        &self,
        from: usize,
        name: &str,
        any_intrinsic: bool,
    ) -> Result<Target, String> {
        let scope = &self.units[from].scope;
        let declared_intrinsic = matches!(scope.syms.get(name), Some(Sym::Intrinsic));
        let is_var = scope.var(name).is_some();
        if !declared_intrinsic && !is_var {
            if let Some(p) = self.find_proc(from, name) {
                if !self.units[p].dummy_procs.is_empty() {
                    // Bound at each call made through the dummy; a nested
                    // subprogram that calls dummy procedures of its hosts
                    // is named inside them, where the lowerer binds those
                    // (`Lowerer::nested_target`).
                    return Ok(Target::Template(p, Vec::new()));
                }
                return Ok(Target::Proc(self.instance(p, Vec::new(), None)));
            }
        }
        if (declared_intrinsic || any_intrinsic) && super::intrinsics::is_intrinsic(name) {
            return Ok(Target::Intrinsic(name.to_string()));
        }
        Err(if declared_intrinsic {
            format!("intrinsic `{name}` cannot be passed as a procedure (not supported)")
        } else if any_intrinsic {
            format!("`{name}` is neither a procedure of the program nor a supported intrinsic")
        } else {
            format!(
                "`{name}` is not a procedure of the program (an intrinsic passed as an argument must be declared INTRINSIC)"
            )
        })
    }
}

impl Program<'_> {
    /// `base[dummy=target,...]`: the name of what binds `targets` to
    /// `dummies` (an instance, or a template with the dummy procedures of
    /// its hosts it captured), `list` naming the instances.
    fn bound_name(
        &self,
        list: &[Instance],
        base: &str,
        dummies: &[Name],
        targets: &[Target],
    ) -> String {
        let pairs: Vec<String> = dummies
            .iter()
            .zip(targets)
            .map(|(d, t)| format!("{}={}", d.text, self.target_name(list, t, "?")))
            .collect();
        format!("{base}[{}]", pairs.join(","))
    }

    /// The name of what `t` denotes (`unbound` for [`Target::Unbound`]),
    /// `list` naming the instances.
    fn target_name(&self, list: &[Instance], t: &Target, unbound: &str) -> String {
        match t {
            Target::Proc(i) => list[*i].name.clone(),
            Target::Template(u, captured) if captured.is_empty() => self.units[*u].ir_name.clone(),
            Target::Template(u, captured) => {
                let unit = &self.units[*u];
                let dummies = &unit.dummy_procs[unit.own_dummies..];
                self.bound_name(list, &unit.ir_name, dummies, captured)
            }
            Target::Intrinsic(n) => n.clone(),
            Target::Unbound => unbound.into(),
            Target::Absent => "absent".into(),
        }
    }

    /// Why `target` does not fit the abstract interface `iface` (function
    /// or subroutine, result type, number of arguments, each argument's
    /// type and rank or derived type), if it does not.
    pub fn interface_mismatch(&self, iface: &Interface, target: &Target) -> Option<String> {
        let (unit, what) = match target {
            Target::Proc(i) => {
                let inst = &self.instances.borrow()[*i];
                (inst.unit, inst.name.clone())
            }
            Target::Template(u, _) => (*u, self.units[*u].ir_name.clone()),
            Target::Intrinsic(n) => {
                return (iface.result.is_none() || iface.args.len() != 1).then(|| {
                    format!(
                        "the intrinsic {} does not have the interface `{}`",
                        n.to_uppercase(),
                        iface.name
                    )
                })
            }
            Target::Unbound | Target::Absent => return None,
        };
        let sig = &self.sigs[unit];
        let kind = |r: Option<Type>| match r {
            Some(t) => format!("a function returning {}", type_name(t)),
            None => "a subroutine".to_string(),
        };
        if sig.result != iface.result {
            return Some(format!(
                "`{what}` is {} but the interface `{}` is {}",
                kind(sig.result),
                iface.name,
                kind(iface.result)
            ));
        }
        if sig.dummies.len() != iface.args.len() {
            return Some(format!(
                "`{what}` takes {} argument(s) but the interface `{}` takes {}",
                sig.dummies.len(),
                iface.name,
                iface.args.len()
            ));
        }
        for (k, (d, a)) in sig.dummies.iter().zip(&iface.args).enumerate() {
            let describe = |ty: Option<Type>, rank: usize, tn: &Option<String>| match (tn, ty) {
                (Some(t), _) => format!("type({t})"),
                (None, Some(t)) if rank > 0 => format!("{} array of rank {rank}", type_name(t)),
                (None, Some(t)) => type_name(t).to_string(),
                (None, None) => "a procedure".to_string(),
            };
            let (ty, rank) = match d.params.first() {
                Some(&p) if d.type_name.is_none() => (Some(sig.params[p].0), sig.params[p].1),
                _ => (None, 0),
            };
            let same = match (&d.type_name, &a.type_name) {
                (Some(x), Some(y)) => x == y,
                (None, None) => ty == a.ty && rank == a.rank,
                _ => false,
            };
            if !same {
                return Some(format!(
                    "argument {} of `{what}` (`{}`) is {} but argument `{}` of the interface `{}` is {}",
                    k + 1,
                    d.name,
                    describe(ty, rank, &d.type_name),
                    a.name,
                    iface.name,
                    describe(a.ty, a.rank, &a.type_name)
                ));
            }
        }
        None
    }
}

/// A procedure to pass for a dummy procedure of an entry (from outside
/// the program: the command line's `--set fcn=myfcn`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcedureArg {
    /// The entry (a procedure taking dummy procedures), lower case.
    pub entry: String,
    /// Its dummy procedure, lower case.
    pub dummy: String,
    /// The procedure (or intrinsic) to pass, lower case.
    pub procedure: String,
}

/// A procedure passed for a dummy procedure of an entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoundProcedure {
    /// Position of the dummy among the entry's dummy arguments (0-based).
    pub position: usize,
    /// The dummy's name.
    pub dummy: String,
    /// The procedure passed (lower case).
    pub procedure: String,
    /// True when it is an intrinsic function.
    pub intrinsic: bool,
}

/// The first instances: every unit without dummy procedures, and every
/// top-level unit whose dummy procedures are all given procedures in
/// `procedure_args` (under its own name). Returns the units left unbound,
/// and what each bound entry was given.
pub(crate) fn root_instances(
    prog: &Program,
    procedure_args: &[ProcedureArg],
    out: &mut Out,
) -> (Vec<usize>, Vec<(String, Vec<BoundProcedure>)>) {
    let mut unbound = Vec::new();
    let mut bound = Vec::new();
    for (u, unit) in prog.units.iter().enumerate() {
        if unit.dummy_procs.is_empty() {
            prog.instance(u, Vec::new(), None);
            continue;
        }
        let targets: Vec<Option<&String>> = unit
            .dummy_procs
            .iter()
            .map(|d| {
                procedure_args
                    .iter()
                    .find(|a| {
                        a.entry.eq_ignore_ascii_case(&unit.ir_name)
                            && a.dummy.eq_ignore_ascii_case(&d.text)
                    })
                    .map(|a| &a.procedure)
            })
            .collect();
        let optional = |d: &Name| unit.scope.optional_procs.contains(&d.text);
        let missing =
            (unit.dummy_procs.iter().zip(&targets)).any(|(d, t)| t.is_none() && !optional(d));
        if unit.host.is_some() || missing {
            unbound.push(u);
            continue;
        }
        let mut binding = Vec::new();
        for (d, t) in unit.dummy_procs.iter().zip(targets) {
            // An OPTIONAL dummy procedure not given is absent.
            let Some(t) = t else {
                binding.push(Target::Absent);
                continue;
            };
            match prog.procedure_target(u, &t.trim().to_ascii_lowercase(), true) {
                Ok(t) => binding.push(t),
                Err(m) => out.diags.push(Diagnostic::error(
                    d.span,
                    format!(
                        "cannot bind dummy procedure `{}` of `{}` to `{t}`: {m}",
                        d.text, unit.ir_name
                    ),
                )),
            }
        }
        if binding.len() == unit.dummy_procs.len() {
            let given = unit
                .dummy_procs
                .iter()
                .zip(&binding)
                .filter(|(_, t)| **t != Target::Absent)
                .map(|(d, t)| BoundProcedure {
                    position: unit
                        .ast
                        .args
                        .iter()
                        .position(|a| a.text == d.text)
                        .unwrap_or(0),
                    dummy: d.text.clone(),
                    procedure: match t {
                        Target::Absent => String::new(),
                        t => prog.target_name(&prog.instances.borrow(), t, ""),
                    },
                    intrinsic: matches!(t, Target::Intrinsic(_)),
                })
                .collect();
            bound.push((unit.ir_name.clone(), given));
            prog.instance(u, binding, Some(unit.ir_name.clone()));
        }
    }
    (unbound, bound)
}

/// Puts the lowered instances in module order (each unit's instances where
/// the unit is, so main programs and BLOCK DATA stay last) and renumbers
/// the calls. Returns the instance indices in their new order.
pub(crate) fn module_order(instances: &[Instance], lowered: &mut Vec<Proc>) -> Vec<usize> {
    // Instances added while a template nobody binds was lowered for its
    // diagnostics only (the last ones) have no procedure and no place.
    let mut order: Vec<usize> = (0..instances.len().min(lowered.len())).collect();
    order.sort_by_key(|&i| (instances[i].unit, i));
    let mut position = vec![0u32; instances.len()];
    for (k, &i) in order.iter().enumerate() {
        position[i] = k as u32;
    }
    let mut taken: Vec<Option<Proc>> = lowered.drain(..).map(Some).collect();
    for &i in &order {
        let Some(mut proc) = taken.get_mut(i).and_then(Option::take) else {
            continue;
        };
        for inst in &mut proc.insts {
            if let Inst::Call(id, _) = &mut inst.kind {
                *id = ProcId(position[id.index()]);
            }
        }
        lowered.push(proc);
    }
    order
}
