//! ALLOCATABLE module variables and SAVE allocatable locals: arrays whose
//! allocation outlives one activation of the procedures that use them.
//!
//! Such an array is not a [`adjit_ir::Global`] (globals have constant
//! bounds): it is an ALLOCATABLE array owned by the outermost procedures
//! that use it, and passed by descriptor
//! ([`adjit_ir::Storage::AllocatableParam`]) to every procedure that uses it
//! directly or through the procedures it calls. So ALLOCATE, DEALLOCATE,
//! MOVE_ALLOC and reallocation on assignment in one procedure are seen by
//! every other, the derivative code allocates the derivative array with
//! the primal one, and the adjoint's reverse sweep sees the storage the
//! forward sweep had (as for any ALLOCATABLE array passed by descriptor,
//! see [`super::alloc_param`]).
//!
//! * The *owner* of an array is a procedure that uses it (directly or
//!   through calls) and that no procedure of the program names: the main
//!   PROGRAM, or a procedure called from outside only. The array is an
//!   ALLOCATABLE local of the owner ([`adjit_ir::Storage::Allocatable`]).
//!   A main program runs once: the array starts unallocated and is
//!   released when it ends, Fortran's lifetime. A procedure called from
//!   outside (through the API) keeps the array between its calls, as a
//!   Fortran program does: before every return it writes the array's
//!   *kept record* (whether it is allocated, its bounds, its values:
//!   [`adjit_ir::IoOp::BeginKeep`]), and at entry it gives its local the
//!   allocation the record holds ([`adjit_ir::IoOp::BeginRestore`]; never
//!   kept: unallocated). The records live with the program's global state
//!   (`adjit_ir::io::Kept`), so ALLOCATE in one call, reads in the next and
//!   DEALLOCATE in a third behave as in Fortran (the characters of a
//!   deferred-length string are kept as their codes). The values read back are
//!   constants of the call: derivative code starts them with zero
//!   derivatives, and the derivatives of what a call keeps are not kept.
//!   A recursive procedure (one naming itself) is never an owner: its
//!   inner activations take the outer one's arrays, so it is called from
//!   Fortran only.
//! * Every other procedure that uses it takes it as a hidden parameter,
//!   after its host variables and before the function result; callers
//!   pass their own. A procedure called through a dummy procedure cannot
//!   be given it (a located error).
//!
//! The procedures a procedure calls are found by name (CALL statements and
//! function references), as for host association.

use super::super::ast::{Name, ProcKind};
use super::lowerer::{referenced_names, Lowerer};
use super::scope::{Scope, Sym, TypeInfo, VarDecl};
use super::Program;
use adjit_ir::{
    BinaryOp, CharBase, CharRef, Inst, IoOp, Span, Storage, Terminator, Type, Value, VarId,
};
use std::collections::BTreeSet;

/// One ALLOCATABLE array whose allocation persists: a module variable or a
/// SAVE allocatable local.
#[derive(Clone, Debug)]
pub(crate) struct Persistent {
    /// `module::var` or `proc::var`: the key callers and callees share.
    pub name: String,
    /// The declaration (its span identifies the array in every scope that
    /// sees it, under any local name).
    pub decl: VarDecl,
    /// Its type.
    pub ty: Option<TypeInfo>,
}

/// The persistent ALLOCATABLE arrays of a program and who uses them.
#[derive(Clone, Debug, Default)]
pub(crate) struct PersistentAllocs {
    /// Every array, in declaration order (modules, then procedures).
    pub list: Vec<Persistent>,
    /// By unit: the arrays (indices in `list`) it uses directly or through
    /// the procedures it calls, in increasing order.
    pub needs: Vec<Vec<usize>>,
    /// By unit: whether it owns its arrays (nothing in the program names
    /// it) rather than taking them as parameters.
    pub owner: Vec<bool>,
    /// By unit: the procedures that may be bound to its dummy procedures
    /// (see [`passed_procedures`]).
    pub passed: Vec<BTreeSet<usize>>,
}

/// Whether the declaration `d` of a procedure's scope is a SAVE
/// allocatable local (explicit SAVE, or a SAVE statement without a list).
fn saved_allocatable(scope: &Scope, d: &VarDecl) -> bool {
    d.allocatable.is_some() && d.arg.is_none() && d.global.is_none() && (d.save || scope.save_all)
}

/// Whether the name `name` that procedure `proc` references is its own
/// name used as a call: always in a subroutine, in a function only when
/// the function names a RESULT variable (else the name is the result).
fn calls_itself(proc: &super::super::ast::Procedure, name: &str) -> bool {
    proc.name.text == name
        && match &proc.kind {
            ProcKind::Subroutine => true,
            ProcKind::Function { result, .. } => result.is_some(),
            _ => false,
        }
}

impl PersistentAllocs {
    /// The index of the persistent array declared at `span` under a name
    /// whose component path is that of `name` (the leaves of an
    /// ALLOCATABLE array of structures share their declaration's span:
    /// `history%x` and `history%m` are two arrays).
    fn by_decl(&self, span: Span, name: &str) -> Option<usize> {
        self.list.iter().position(|p| same_array(p, span, name))
    }
}

/// The component path of a leaf name (`x` for `history%x`, `m%q` for
/// `mesh%m%q`), empty for a variable that is no component.
fn component_path(name: &str) -> &str {
    name.split_once('%').map_or("", |(_, c)| c)
}

/// Whether the persistent array `p` is the one declared at `span` and
/// seen under the name `name` (any local name of the same variable or
/// leaf).
fn same_array(p: &Persistent, span: Span, name: &str) -> bool {
    let own = p.name.rsplit_once("::").map_or(p.name.as_str(), |(_, n)| n);
    p.decl.span == span && component_path(own) == component_path(name)
}

impl Program<'_> {
    /// The scopes a name of unit `u` is looked up in, innermost first: its
    /// own, its hosts', its module's.
    fn scope_chain(&self, u: usize) -> Vec<&Scope> {
        let mut scopes: Vec<&Scope> = Vec::new();
        let mut at = Some(u);
        while let Some(x) = at {
            scopes.push(&self.units[x].scope);
            at = self.units[x].host;
        }
        if let Some(m) = self.units[u].module {
            scopes.push(&self.modules[m].1);
        }
        scopes
    }

    /// The persistent ALLOCATABLE array the name `name` denotes in unit `u`.
    pub(crate) fn persistent_alloc(&self, u: usize, name: &str) -> Option<usize> {
        match self.scope_chain(u).iter().find_map(|s| s.syms.get(name)) {
            Some(Sym::Var(d)) if d.allocatable.is_some() => self.allocs.by_decl(d.span, name),
            _ => None,
        }
    }

    /// The persistent ALLOCATABLE arrays the name `name` denotes in unit
    /// `u`: the array it names, or every leaf of the ALLOCATABLE array of
    /// structures it names (`allocate(history(n))` names no leaf).
    fn persistent_allocs(&self, u: usize, name: &str) -> Vec<usize> {
        match self.scope_chain(u).iter().find_map(|s| s.syms.get(name)) {
            Some(Sym::Struct(st)) => st
                .leaves
                .iter()
                .filter_map(|l| self.persistent_alloc(u, l))
                .collect(),
            _ => self.persistent_alloc(u, name).into_iter().collect(),
        }
    }

    /// The procedures the name `name` may call from unit `u`: the
    /// procedure of that name, or the specifics of a generic interface or
    /// the procedure a renaming USE stands for.
    pub(crate) fn named_procs(&self, u: usize, name: &str) -> Vec<usize> {
        if let Some(c) = self.find_proc(u, name) {
            return vec![c];
        }
        let targets: Vec<String> = match self.scope_chain(u).iter().find_map(|s| s.syms.get(name)) {
            Some(Sym::Generic(specifics)) => specifics.clone(),
            Some(Sym::ProcAlias(r)) => vec![r.clone()],
            _ => Vec::new(),
        };
        targets
            .iter()
            .filter_map(|t| self.by_name.get(t).copied())
            .collect()
    }
}

/// Finds the persistent ALLOCATABLE arrays of the program, the units that
/// use each (directly or through calls) and the units that own them.
pub(crate) fn analyse(prog: &mut Program) {
    let mut list = Vec::new();
    for (module, scope) in &prog.modules {
        let mut names: Vec<(&String, &VarDecl)> = scope
            .syms
            .iter()
            .filter_map(|(n, s)| match s {
                Sym::Var(d) if d.allocatable.is_some() && d.global.is_none() => Some((n, d)),
                _ => None,
            })
            .collect();
        // By declaration, then name: the leaves of an array of structures
        // share their declaration's span.
        names.sort_by_key(|&(n, d)| (d.span.line, d.span.col, n));
        for (n, d) in names {
            if list.iter().any(|p: &Persistent| same_array(p, d.span, n)) {
                continue; // used from another module
            }
            list.push(Persistent {
                name: format!("{module}::{n}"),
                decl: d.clone(),
                ty: d.ty.clone().or_else(|| scope.implicit_type(n)),
            });
        }
    }
    for u in &prog.units {
        let mut names: Vec<(&String, &VarDecl)> = u
            .scope
            .syms
            .iter()
            .filter_map(|(n, s)| match s {
                Sym::Var(d) if saved_allocatable(&u.scope, d) => Some((n, d)),
                _ => None,
            })
            .filter(|(n, d)| !list.iter().any(|p: &Persistent| same_array(p, d.span, n)))
            .collect();
        // By declaration, then name: the leaves of an array of structures
        // share their declaration's span.
        names.sort_by_key(|&(n, d)| (d.span.line, d.span.col, n));
        for (n, d) in names {
            list.push(Persistent {
                name: format!("{}::{n}", u.save_name),
                decl: d.clone(),
                ty: d.ty.clone().or_else(|| u.scope.implicit_type(n)),
            });
        }
    }
    prog.allocs.list = list;
    let n = prog.units.len();
    let mut needs: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n];
    let mut calls: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n];
    let mut named = vec![false; n];
    for u in 0..n {
        for name in referenced_names(prog.units[u].ast) {
            let arrays = prog.persistent_allocs(u, &name);
            if !arrays.is_empty() {
                needs[u].extend(arrays);
            } else {
                for c in prog.named_procs(u, &name) {
                    if c != u {
                        calls[u].insert(c);
                        named[c] = true;
                    } else if calls_itself(prog.units[u].ast, &name) {
                        // A recursive procedure is no owner: its inner
                        // activations must see the outer one's arrays.
                        named[u] = true;
                    }
                }
            }
        }
    }
    // The specifics of every generic interface (operators too, which no
    // name reaches) are called from somewhere: never owners.
    let scopes = prog.modules.iter().map(|m| &m.1);
    for scope in scopes.chain(prog.units.iter().map(|u| &u.scope)) {
        for sym in scope.syms.values() {
            let targets: &[String] = match sym {
                Sym::Generic(specifics) => specifics,
                Sym::ProcAlias(r) => std::slice::from_ref(r),
                _ => &[],
            };
            for t in targets {
                if let Some(&c) = prog.by_name.get(t) {
                    named[c] = true;
                }
            }
        }
    }
    // A procedure that sees an operator or assignment interface may call
    // its specifics (`a + b`, no name to find).
    for (u, c) in calls.iter_mut().enumerate() {
        for scope in prog.scope_chain(u) {
            for (name, sym) in &scope.syms {
                let Sym::Generic(specifics) = sym else {
                    continue;
                };
                if !(name.starts_with("operator(") || name == "assignment(=)") {
                    continue;
                }
                let targets = specifics.iter().filter_map(|t| prog.by_name.get(t));
                c.extend(targets.copied().filter(|&t| t != u));
            }
        }
    }
    // A procedure calling a dummy procedure (its own or a host's) may call
    // every procedure passed for one.
    let passed = passed_procedures(prog);
    for (u, c) in calls.iter_mut().enumerate() {
        let mut at = Some(u);
        while let Some(o) = at {
            c.extend(passed[o].iter().copied().filter(|&p| p != u));
            at = prog.units[o].host;
        }
    }
    let mut changed = true;
    while changed {
        changed = false;
        for u in 0..n {
            let more: Vec<usize> = calls[u]
                .iter()
                .flat_map(|&c| needs[c].iter().copied())
                .filter(|k| !needs[u].contains(k))
                .collect();
            if !more.is_empty() {
                needs[u].extend(more);
                changed = true;
            }
        }
    }
    prog.allocs.needs = needs.into_iter().map(|s| s.into_iter().collect()).collect();
    let owner: Vec<bool> = named.into_iter().map(|x| !x).collect();
    prog.allocs.owner = owner;
    prog.allocs.passed = passed;
}

/// By unit: the procedures that may be bound to its dummy procedures,
/// found by name at every call site: a procedure named as a bare actual
/// argument (which binds only to a dummy procedure), and what may be bound
/// to a caller's (or its host's) dummy procedure passed on.
fn passed_procedures(prog: &Program) -> Vec<BTreeSet<usize>> {
    let n = prog.units.len();
    let sites: Vec<_> = prog
        .units
        .iter()
        .map(|u| super::lowerer::call_sites(u.ast))
        .collect();
    let mut passed: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n];
    let mut changed = true;
    while changed {
        changed = false;
        for (u, unit_sites) in sites.iter().enumerate() {
            // A dummy procedure of this unit or a host: what may be bound
            // to it.
            let dummy_of = |a: &str| {
                let mut at = Some(u);
                while let Some(o) = at {
                    let unit = &prog.units[o];
                    if unit.dummy_procs[..unit.own_dummies]
                        .iter()
                        .any(|d| d.text == a)
                    {
                        return Some(o);
                    }
                    at = unit.host;
                }
                None
            };
            for (callee, args) in unit_sites {
                let callees: Vec<usize> = match dummy_of(callee) {
                    Some(o) => passed[o].iter().copied().collect(),
                    None => prog.named_procs(u, callee),
                };
                if callees.is_empty() {
                    continue;
                }
                let mut bound = BTreeSet::new();
                for a in args.iter().flatten() {
                    if prog.scope_chain(u).iter().any(|s| s.var(a).is_some()) {
                        continue;
                    }
                    match dummy_of(a) {
                        Some(o) => bound.extend(passed[o].iter().copied()),
                        None => bound.extend(prog.named_procs(u, a)),
                    }
                }
                for c in callees {
                    let before = passed[c].len();
                    passed[c].extend(bound.iter().copied());
                    changed |= passed[c].len() != before;
                }
            }
        }
    }
    passed
}

impl Lowerer<'_, '_> {
    /// Declares the persistent ALLOCATABLE arrays this procedure uses: its
    /// own locals when it owns them, else parameters passed by descriptor
    /// (after the host variables, before the function result). Each is
    /// known by its key (`module::var`) and by the names this procedure
    /// sees it under.
    pub(super) fn declare_persistent_allocs(&mut self) {
        let prog = self.prog;
        let Some(needs) = prog.allocs.needs.get(self.unit) else {
            return;
        };
        if needs.is_empty() {
            return;
        }
        let owner = prog.allocs.owner[self.unit];
        let trailing = self.trailing_params();
        let mut at = self.proc.params.len().saturating_sub(trailing);
        for &k in needs {
            let p = &prog.allocs.list[k];
            let names = self.local_names(k);
            let local = names
                .first()
                .cloned()
                .unwrap_or_else(|| format!("_{}", p.name.replace("::", "_")));
            let Some(ti) = p.ty.clone() else {
                self.err(
                    p.decl.span,
                    format!(
                        "variable `{}` has no type (IMPLICIT NONE is in effect)",
                        p.name
                    ),
                );
                continue;
            };
            let Some(span) = p.decl.allocatable else {
                continue;
            };
            let name = Name {
                text: local,
                span: p.decl.span,
            };
            let Ok(v) = self.create_allocatable(&name, span, &ti, &p.decl) else {
                continue;
            };
            if !owner {
                self.proc.vars[v.index()].storage = Storage::AllocatableParam(at as u32);
                self.proc.params.insert(at, v);
                self.proc.hidden_params = true;
                at += 1;
            }
            for n in names {
                self.vars.insert(n, v);
            }
            self.vars.insert(p.name.clone(), v);
        }
        for (pos, &v) in self.proc.params.clone().iter().enumerate() {
            let var = &mut self.proc.vars[v.index()];
            var.storage = var.storage.as_param(pos as u32);
        }
    }

    /// The persistent arrays this procedure owns and keeps between calls
    /// made from outside (it is no main PROGRAM), with their keys: none
    /// for any other procedure.
    fn kept_arrays(&self) -> Vec<(String, VarId)> {
        let prog = self.prog;
        if !prog.allocs.owner.get(self.unit).copied().unwrap_or(false)
            || prog.units[self.unit].ast.kind == ProcKind::Program
        {
            return Vec::new();
        }
        let Some(needs) = prog.allocs.needs.get(self.unit) else {
            return Vec::new();
        };
        needs
            .iter()
            .filter_map(|&k| {
                let key = &prog.allocs.list[k].name;
                self.vars.get(key).map(|&v| (key.clone(), v))
            })
            .collect()
    }

    /// At the entry of a procedure that owns persistent arrays and is
    /// called from outside: gives each array the allocation, bounds and
    /// values its kept record holds (what the previous call left, see
    /// [`Lowerer::keep_persistent_allocs`]), or leaves it unallocated when
    /// the previous call left it so (or there was none). The values read
    /// are constants of the call (they have no derivative).
    pub(super) fn restore_persistent_allocs(&mut self) {
        for (key, v) in self.kept_arrays() {
            let rank = self.proc.vars[v.index()].dims.len();
            let ty = self.proc.vars[v.index()].ty;
            self.emit(Inst::Io(IoOp::BeginRestore(key.into_bytes())), None);
            let flag = self.temp("kept", Type::Bool);
            let got = self.emit(Inst::Io(IoOp::Get), Some(Type::Bool));
            self.emit(Inst::Store(flag, got), None);
            let allocated = self.val(Inst::Load(flag), Type::Bool);
            let (fill, done) = (self.block(), self.block());
            self.terminate(Terminator::Branch {
                cond: allocated,
                then_dest: fill,
                else_dest: done,
            });
            self.switch_to(fill);
            let mut bounds = Vec::with_capacity(rank);
            for _ in 0..rank {
                let pair: Vec<Value> = (0..2)
                    .map(|_| {
                        let t = self.temp("kept", Type::I64);
                        let got = self.emit(Inst::Io(IoOp::Get), Some(Type::I64));
                        self.emit(Inst::Store(t, got), None);
                        self.val(Inst::Load(t), Type::I64)
                    })
                    .collect();
                bounds.push((pair[0], pair[1]));
            }
            self.emit(Inst::Allocate(v, bounds), None);
            let _ = self.for_elements(v, &mut |this, idx| {
                if ty == Type::Char {
                    // A character (of a deferred-length string) is kept
                    // as its code.
                    let code = this.emit(Inst::Io(IoOp::Get), Some(Type::I64));
                    let c = this.char_with_code(code);
                    let to = CharRef {
                        base: CharBase::Var { var: v, index: idx },
                        start: None,
                        end: None,
                    };
                    this.emit(Inst::CharAssign(to, c), None);
                    return Ok(());
                }
                let x = this.emit(Inst::Io(IoOp::Get), Some(ty));
                this.emit(Inst::StoreElem(v, idx, x), None);
                Ok(())
            });
            self.jump(done);
            self.switch_to(done);
            self.emit(Inst::Io(IoOp::EndRead), None);
        }
    }

    /// Before a return of a procedure that owns persistent arrays and is
    /// called from outside: writes each array's kept record (whether it is
    /// allocated, its bounds and its values), which the next call starts
    /// from ([`Lowerer::restore_persistent_allocs`]), as a Fortran program
    /// keeps module and SAVE arrays between calls. The procedure's own
    /// copy is released when it returns, as every ALLOCATABLE local.
    pub(super) fn keep_persistent_allocs(&mut self) {
        for (key, v) in self.kept_arrays() {
            let rank = self.proc.vars[v.index()].dims.len();
            let ty = self.proc.vars[v.index()].ty;
            self.emit(Inst::Io(IoOp::BeginKeep(key.into_bytes())), None);
            let allocated = self.val(Inst::Allocated(v), Type::Bool);
            self.emit(Inst::Io(IoOp::Put(allocated)), None);
            let (write, done) = (self.block(), self.block());
            self.terminate(Terminator::Branch {
                cond: allocated,
                then_dest: write,
                else_dest: done,
            });
            self.switch_to(write);
            for d in 0..rank as u32 {
                let lower = self.val(Inst::DimLower(v, d), Type::I64);
                let extent = self.val(Inst::DimExtent(v, d), Type::I64);
                let one = self.int(1, Type::I64);
                let last = self.val(Inst::Binary(BinaryOp::Sub, extent, one), Type::I64);
                let upper = self.val(Inst::Binary(BinaryOp::Add, lower, last), Type::I64);
                self.emit(Inst::Io(IoOp::Put(lower)), None);
                self.emit(Inst::Io(IoOp::Put(upper)), None);
            }
            let _ = self.for_elements(v, &mut |this, idx| {
                let x = if ty == Type::Char {
                    let c = CharRef {
                        base: CharBase::Var { var: v, index: idx },
                        start: None,
                        end: None,
                    };
                    this.code_of(&c)
                } else {
                    this.val(Inst::LoadElem(v, idx), ty)
                };
                this.emit(Inst::Io(IoOp::Put(x)), None);
                Ok(())
            });
            self.jump(done);
            self.switch_to(done);
            self.emit(Inst::Io(IoOp::EndWrite), None);
        }
    }

    /// Runs `body` for the subscripts of every element of the allocated
    /// array `v`, in column-major order.
    fn for_elements(
        &mut self,
        v: VarId,
        body: &mut dyn FnMut(&mut Self, Vec<Value>) -> super::lowerer::R<()>,
    ) -> super::lowerer::R<()> {
        let rank = self.proc.vars[v.index()].dims.len() as u32;
        let extents: Vec<VarId> = (0..rank)
            .map(|d| {
                let t = self.temp("n", Type::I64);
                let e = self.val(Inst::DimExtent(v, d), Type::I64);
                self.emit(Inst::Store(t, e), None);
                t
            })
            .collect();
        self.for_positions(&extents, &mut |this, pos| {
            let idx = pos
                .iter()
                .enumerate()
                .map(|(d, &p)| {
                    let lower = this.val(Inst::DimLower(v, d as u32), Type::I64);
                    this.val(Inst::Binary(BinaryOp::Add, lower, p), Type::I64)
                })
                .collect();
            body(this, idx)
        })
    }

    /// The names under which this procedure sees the persistent array `k`
    /// (its own scope, its hosts', its module's), sorted.
    fn local_names(&self, k: usize) -> Vec<String> {
        let prog = self.prog;
        let mut out: Vec<String> = prog
            .scope_chain(self.unit)
            .iter()
            .flat_map(|s| s.syms.keys())
            .filter(|name| prog.persistent_alloc(self.unit, name) == Some(k))
            .cloned()
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// The parameters after the ones this procedure declares for its
    /// persistent arrays: the function result, or a structure result's
    /// components.
    fn trailing_params(&self) -> usize {
        let u = self.u();
        match &u.ast.kind {
            super::super::ast::ProcKind::Function { result, .. } => {
                let rn = result.as_ref().unwrap_or(&u.ast.name);
                match u.scope.struct_decl(&rn.text) {
                    Some(st) => st.leaves.len(),
                    None => 1,
                }
            }
            _ => 0,
        }
    }

    /// The arguments a call passes for the persistent arrays of the callee
    /// `unit` (none for an owner): this procedure's own, by key. A located
    /// error when this procedure does not have one (a call through a dummy
    /// procedure).
    pub(super) fn persistent_alloc_args(
        &mut self,
        unit: usize,
        at: Span,
    ) -> super::lowerer::R<Vec<VarId>> {
        let prog = self.prog;
        if prog.allocs.owner.get(unit).copied().unwrap_or(true) {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        for &k in &prog.allocs.needs[unit] {
            let key = &prog.allocs.list[k].name;
            match self.vars.get(key) {
                Some(&v) => out.push(v),
                None => {
                    return Err(self.err(
                        at,
                        format!(
                            "unsupported Fortran: `{}` uses the module or SAVE ALLOCATABLE `{key}`, which this call cannot pass (through a dummy procedure or an operator)",
                            prog.units[unit].ast.name.text
                        ),
                    ))
                }
            }
        }
        Ok(out)
    }
}
