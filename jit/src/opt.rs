//! The IR optimisations run before lowering: inlining of small
//! non-recursive callees ([`inline`], optional), jump-chain merging
//! ([`merge`]), then block-local value numbering (this module); for the
//! JIT also the narrowing of entry zero fills to what a loop does not
//! increment ([`first_touch`]), loop versioning ([`licm`]), the skipping of counted-loop
//! trips that repeat earlier ones ([`fixpoint`]) and, on request, one test
//! for a stretch of strong-zero guards ([`speculate`]), and last the
//! rotation of loops whose back edge jumps to a header that only tests
//! ([`rotate`]) and the sinking of loads below the math library calls
//! that do not need them ([`sink`]). On request too,
//! code generation fuses products into the sums that use them ([`fma`],
//! which only chooses them).
//!
//! It rewrites the IR it is given for code generation only, without knowing
//! where that IR came from.
//!
//! Code lists are built statement by statement, so a block often computes
//! the same value several times: Bratu's loop evaluates
//! `exp(x(i)/(1.0+prm(2)*x(i)))` in three consecutive statements, and
//! adjoint sweeps recompute the operands of every partial. Cranelift merges
//! pure arithmetic itself, but neither loads across stores nor math library
//! calls. This pass walks each block once and
//!
//! * replaces an instruction equal to an earlier one of the same block
//!   (same operation, same type, same operands after replacement) by the
//!   earlier value: constants, arithmetic, intrinsics, comparisons,
//!   conversions, selects, bounds, and loads whose variable was not written
//!   in between;
//! * forwards a stored value to a later load of the same scalar or element;
//! * folds constants and the strong-zero guards they decide ([`fold`]).
//!
//! Memory is tracked per variable under Fortran's rule that distinct dummy
//! arguments and variables do not alias: a store to a variable forgets the
//! loads of that variable and of every variable viewing the same global; a
//! call or a character assignment forgets every load. Replacing an
//! instruction by an equal earlier one never changes a result or an error:
//! the earlier instruction produced the same value or already failed.

use crate::ir::{
    BinaryOp, CmpOp, Const, Inst, Module, Proc, Rounding, Storage, Type, UnaryOp, Value, VarId,
};
use rustc_hash::FxHashMap;

pub mod first_touch;
pub mod fixpoint;
pub mod fma;
pub mod fold;
pub mod inline;
pub mod licm;
pub mod merge;
pub mod rotate;
pub mod sink;
pub mod speculate;
mod widen;

/// What identifies a replaceable computation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Key {
    /// A constant of a type (floats by bit pattern).
    Const(Option<Type>, u64, u8),
    /// A load of a scalar.
    Load(VarId),
    /// A load of an element.
    LoadElem(VarId, Vec<Value>),
    /// A pure operation: its (operand-renamed) instruction and result type.
    Pure(Pure, Option<Type>),
}

/// The pure instructions value numbering merges, with their operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Pure {
    Unary(UnaryOp, Value),
    Binary(BinaryOp, Value, Value),
    Cmp(CmpOp, Value, Value),
    Convert(Value, Rounding),
    Select(Value, Value, Value),
    DimLower(VarId, u32),
    DimExtent(VarId, u32),
    Allocated(VarId),
}

/// Returns a copy of `module` with jump chains merged
/// ([`merge::merge_blocks`]) and block-local value numbering applied to
/// every procedure. Instruction handles (and so spans) are unchanged; blocks
/// are renumbered, block instruction lists shrink and operands are renamed.
pub fn optimize(module: &Module) -> Module {
    optimize_with(module, false).0
}

/// Like [`optimize`], first inlining small non-recursive callees when
/// `inline` is set ([`inline::inline_module`]). Returns the optimized
/// module and where its inlined code came from (the procedure a runtime
/// error in it must name), with blocks numbered as in the result.
pub fn optimize_with(module: &Module, inline: bool) -> (Module, inline::Origins) {
    optimize_procs(module, inline, None)
}

/// [`optimize_with`] for the procedures marked in `wanted` (by procedure
/// index; all when `None`): the others are copied unchanged. The callees of
/// a wanted procedure must be wanted too (the closure
/// [`crate::codegen::CompiledModule::compile_reachable`] compiles), since
/// a caller is inlined with its callees' optimized code.
fn optimize_procs(
    module: &Module,
    inline: bool,
    wanted: Option<&[bool]>,
) -> (Module, inline::Origins) {
    let mut out = module.clone();
    let mut origins = if inline {
        inline::inline_module_procs(&mut out, wanted)
    } else {
        inline::Origins::default()
    };
    for (i, proc) in out.procs.iter_mut().enumerate() {
        if !is_wanted(wanted, i) {
            continue;
        }
        let carried = merge::merge_blocks(proc);
        origins.renumber_blocks(crate::ir::ProcId(i as u32), &carried);
        number_values(proc);
    }
    (out, origins)
}

/// Whether procedure `index` is among `wanted` (every procedure when
/// `None`).
pub(crate) fn is_wanted(wanted: Option<&[bool]>, index: usize) -> bool {
    wanted.is_none_or(|w| w.get(index).copied().unwrap_or(false))
}

/// The result of [`optimize_for_jit`].
pub struct Optimized {
    /// The optimized module.
    pub module: Module,
    /// Where inlined (and copied) code came from.
    pub origins: inline::Origins,
    /// The loops versioned with hoisted checks ([`licm`]).
    pub versions: licm::Versions,
    /// How many loops of each procedure skip their repeated trips
    /// ([`fixpoint`]), by procedure index (empty when the pass is off).
    pub fixed_point_exits: Vec<usize>,
}

/// [`optimize_with`], then, when `version_loops` is set, loop versioning
/// with hoisted bounds checks and invariant loads ([`licm`]), then the
/// skipping of loop trips that repeat earlier ones ([`fixpoint`]), then
/// loop rotation ([`rotate`]).
pub fn optimize_for_jit(module: &Module, inline: bool, version_loops: bool) -> Optimized {
    optimize_for_jit_with(module, inline, version_loops, true)
}

/// [`optimize_for_jit`], with the skipping of repeated trips
/// ([`fixpoint`]) only when `fixed_point_exits` is set.
pub fn optimize_for_jit_with(
    module: &Module,
    inline: bool,
    version_loops: bool,
    fixed_point_exits: bool,
) -> Optimized {
    optimize_procs_for_jit(module, inline, version_loops, fixed_point_exits, None)
}

/// [`optimize_for_jit_with`] for the procedures marked in `wanted` (by
/// procedure index; all when `None`), which must include the callees of
/// every wanted procedure: the others are copied unchanged, with no
/// versioned loops and no skipped trips. Code generation compiles only
/// the wanted procedures, and optimizing the others would be wasted work.
pub fn optimize_procs_for_jit(
    module: &Module,
    inline: bool,
    version_loops: bool,
    fixed_point_exits: bool,
    wanted: Option<&[bool]>,
) -> Optimized {
    let (mut module, mut origins) = optimize_procs(module, inline, wanted);
    // Before versioning, which then copies the narrowed loops.
    for (i, proc) in module.procs.iter_mut().enumerate() {
        if is_wanted(wanted, i) {
            first_touch::narrow_zero_fills(proc);
        }
    }
    let mut versions = licm::Versions::default();
    if version_loops {
        for (i, proc) in module.procs.iter_mut().enumerate() {
            let pid = crate::ir::ProcId(i as u32);
            versions.procs.push(if is_wanted(wanted, i) {
                licm::version_loops(proc, pid, &mut origins)
            } else {
                licm::ProcVersions::default()
            });
        }
    }
    let fixed_point_exits = if fixed_point_exits {
        module
            .procs
            .iter_mut()
            .enumerate()
            .map(|(i, proc)| {
                if is_wanted(wanted, i) {
                    fixpoint::skip_repeated_trips(proc)
                } else {
                    0
                }
            })
            .collect()
    } else {
        Vec::new()
    };
    // Last: the passes above recognise loops by the jump back to their
    // header, which rotation replaces.
    for (i, proc) in module.procs.iter_mut().enumerate() {
        if is_wanted(wanted, i) {
            let guards = versions.procs.get(i).map(|p| &p.guards);
            let keep = |v| guards.is_some_and(|g| g.contains_key(&v));
            rotate::rotate_loops(proc, crate::ir::ProcId(i as u32), &mut origins, keep);
            let none = rustc_hash::FxHashSet::default();
            let unchecked = versions.procs.get(i).map_or(&none, |p| &p.unchecked);
            sink::sink_loads_below_calls(proc, unchecked);
        }
    }
    Optimized {
        module,
        origins,
        versions,
        fixed_point_exits,
    }
}

/// The variables a store to `var` may also change: itself and every
/// variable viewing the same global.
fn aliases(proc: &Proc, var: VarId) -> Vec<VarId> {
    match proc.var(var).storage {
        Storage::Global(g, _) => (0..proc.vars.len() as u32)
            .map(VarId)
            .filter(|&v| matches!(proc.var(v).storage, Storage::Global(h, _) if h == g))
            .collect(),
        _ => vec![var],
    }
}

fn number_values(proc: &mut Proc) {
    // Both maps are local to one block; their storage is reused by the next.
    let mut known: FxHashMap<Key, Value> = FxHashMap::default();
    let mut rename: FxHashMap<Value, Value> = FxHashMap::default();
    for b in 0..proc.blocks.len() {
        known.clear();
        rename.clear();
        let insts = std::mem::take(&mut proc.blocks[b].insts);
        let mut kept = Vec::with_capacity(insts.len());
        for v in insts {
            let data = &mut proc.insts[v.index()];
            rename_operands(&mut data.kind, &rename);
            match fold::simplify(proc, v) {
                Some(fold::Fold::Value(w)) => {
                    rename.insert(v, w);
                    continue;
                }
                Some(fold::Fold::Const(c)) => proc.insts[v.index()].kind = Inst::Const(c),
                None => {}
            }
            let data = &mut proc.insts[v.index()];
            let ty = data.ty;
            let key = match &data.kind {
                Inst::Const(c) => Some(match *c {
                    Const::Float(x) => Key::Const(ty, x.to_bits(), 0),
                    Const::Int(i) => Key::Const(ty, i as u64, 1),
                    Const::Bool(x) => Key::Const(ty, x as u64, 2),
                    Const::Char(x) => Key::Const(ty, x as u64, 3),
                }),
                Inst::Load(var) => Some(Key::Load(*var)),
                Inst::LoadElem(var, idx) => Some(Key::LoadElem(*var, idx.clone())),
                Inst::Unary(op, a) => Some(Key::Pure(Pure::Unary(*op, *a), ty)),
                Inst::Binary(op, a, b) => Some(Key::Pure(Pure::Binary(*op, *a, *b), ty)),
                Inst::Cmp(op, a, b) => Some(Key::Pure(Pure::Cmp(*op, *a, *b), ty)),
                Inst::Convert(a, r) => Some(Key::Pure(Pure::Convert(*a, *r), ty)),
                Inst::Select(c, a, b) => Some(Key::Pure(Pure::Select(*c, *a, *b), ty)),
                Inst::DimLower(v, d) => Some(Key::Pure(Pure::DimLower(*v, *d), ty)),
                Inst::DimExtent(v, d) => Some(Key::Pure(Pure::DimExtent(*v, *d), ty)),
                Inst::Allocated(v) => Some(Key::Pure(Pure::Allocated(*v), ty)),
                // New storage and bounds: nothing read before still holds.
                Inst::Allocate(..) | Inst::Deallocate(..) => {
                    known.clear();
                    None
                }
                Inst::Store(var, value) => {
                    let (var, value) = (*var, *value);
                    forget(proc, &mut known, var);
                    known.insert(Key::Load(var), value);
                    None
                }
                Inst::StoreElem(var, idx, value) => {
                    let (var, idx, value) = (*var, idx.clone(), *value);
                    forget(proc, &mut known, var);
                    known.insert(Key::LoadElem(var, idx), value);
                    None
                }
                Inst::Call(..) | Inst::CharAssign(..) => {
                    // A callee may also allocate an ALLOCATABLE array
                    // passed by descriptor: its bounds and status change.
                    known.retain(|k, _| match k {
                        Key::Load(_) | Key::LoadElem(..) => false,
                        Key::Pure(
                            Pure::DimLower(v, _) | Pure::DimExtent(v, _) | Pure::Allocated(v),
                            _,
                        ) => !proc.var(*v).storage.is_allocatable(),
                        _ => true,
                    });
                    None
                }
                Inst::CharCompare(..)
                | Inst::CharLen(..)
                | Inst::CharIndex(..)
                | Inst::CharSearch(..)
                | Inst::Push(..)
                | Inst::Pop(..) => None,
                // Input stores into character data: like an assignment.
                Inst::Io(_) => {
                    known.retain(|k, _| !matches!(k, Key::Load(_) | Key::LoadElem(..)));
                    None
                }
            };
            if let Some(key) = key {
                if let Some(&earlier) = known.get(&key) {
                    rename.insert(v, earlier);
                    continue;
                }
                known.insert(key, v);
            }
            kept.push(v);
        }
        proc.blocks[b].insts = kept;
        if let Some(op) = proc.blocks[b].term.operand() {
            if let Some(&r) = rename.get(&op) {
                rename_terminator(&mut proc.blocks[b].term, r);
            }
        }
    }
}

/// Forgets the loads of `var` and of the variables aliasing it.
fn forget(proc: &Proc, known: &mut FxHashMap<Key, Value>, var: VarId) {
    let vars = aliases(proc, var);
    known.retain(|k, _| match k {
        Key::Load(v) | Key::LoadElem(v, _) => !vars.contains(v),
        _ => true,
    });
}

fn rename_operands(inst: &mut Inst, rename: &FxHashMap<Value, Value>) {
    if rename.is_empty() {
        return;
    }
    let r = |v: &mut Value| {
        if let Some(&n) = rename.get(v) {
            *v = n;
        }
    };
    let r_char = |c: &mut crate::ir::CharRef| {
        if let crate::ir::CharBase::Var { index, .. } = &mut c.base {
            index.iter_mut().for_each(r);
        }
        c.start.iter_mut().chain(c.end.iter_mut()).for_each(r);
    };
    match inst {
        Inst::Const(_)
        | Inst::Load(_)
        | Inst::DimLower(..)
        | Inst::DimExtent(..)
        | Inst::Deallocate(_)
        | Inst::Allocated(_)
        | Inst::Pop(_) => {}
        Inst::Allocate(..) => inst.for_each_operand_mut(r),
        Inst::Store(_, v) | Inst::Unary(_, v) | Inst::Convert(v, _) | Inst::Push(_, v) => r(v),
        Inst::LoadElem(_, idx) => idx.iter_mut().for_each(r),
        Inst::StoreElem(_, idx, v) => {
            idx.iter_mut().for_each(r);
            r(v);
        }
        Inst::Binary(_, a, b) | Inst::Cmp(_, a, b) => {
            r(a);
            r(b);
        }
        Inst::Select(c, a, b) => {
            r(c);
            r(a);
            r(b);
        }
        Inst::Call(_, args) => {
            for a in args {
                match a {
                    crate::ir::CallArg::Var(_) => {}
                    crate::ir::CallArg::Elem(_, idx) => idx.iter_mut().for_each(r),
                    crate::ir::CallArg::Slice(_, idx, n) => {
                        idx.iter_mut().for_each(r);
                        r(n)
                    }
                    crate::ir::CallArg::Value(v) => r(v),
                }
            }
        }
        Inst::CharAssign(a, b) | Inst::CharCompare(_, a, b) => {
            r_char(a);
            r_char(b);
        }
        Inst::CharLen(..) | Inst::CharIndex(..) | Inst::CharSearch(..) | Inst::Io(..) => {
            inst.for_each_operand_mut(r)
        }
    }
}

fn rename_terminator(term: &mut crate::ir::Terminator, to: Value) {
    match term {
        crate::ir::Terminator::Branch { cond, .. } => *cond = to,
        crate::ir::Terminator::Switch { value, .. } => *value = to,
        _ => {}
    }
}
